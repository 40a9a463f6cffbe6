/* Strict JSON helpers (see jsonutil.h). */
#include "jsonutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ju_read_file(const char *path, diag_list *dl, const char *at) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    diag_report(dl, D_FILE_IO, at, NULL, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  if (!buf) dlc_die_oom();
  for (;;) {
    if (n + 1 >= cap) {
      if (cap > ((size_t)1 << 30)) {
        diag_report(dl, D_FILE_IO, at, NULL, "'%s' is larger than 1 GiB", path);
        free(buf);
        fclose(f);
        return NULL;
      }
      cap *= 2;
      char *nb = realloc(buf, cap);
      if (!nb) dlc_die_oom();
      buf = nb;
    }
    size_t k = fread(buf + n, 1, cap - n - 1, f);
    n += k;
    if (k == 0) break;
  }
  if (ferror(f)) {
    diag_report(dl, D_FILE_IO, at, NULL, "cannot read '%s': %s", path, strerror(errno));
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  buf[n] = 0;
  if (strlen(buf) != n) {
    diag_report(dl, D_JSON_SYNTAX, at, NULL, "'%s' contains a NUL byte", path);
    free(buf);
    return NULL;
  }
  return buf;
}

cJSON *ju_parse(const char *text, diag_list *dl, const char *what) {
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithOpts(text, &end, 1);
  if (!j) {
    const char *e = cJSON_GetErrorPtr();
    if (!e) e = end ? end : text;
    int line = 1, col = 1;
    for (const char *p = text; *p && p < e; p++) {
      if (*p == '\n') line++, col = 1;
      else col++;
    }
    char near[24];
    size_t k = 0;
    for (const char *p = e; *p && k < sizeof near - 1 && *p != '\n'; p++) near[k++] = *p;
    near[k] = 0;
    diag_report(dl, D_JSON_SYNTAX, what, NULL, "invalid JSON at line %d, column %d%s%s%s", line, col,
                *near ? " near '" : " (unexpected end of input)", near, *near ? "'" : "");
  }
  return j;
}

const char *ju_type_name(const cJSON *item) {
  if (!item) return "nothing";
  if (cJSON_IsString(item)) return "a string";
  if (cJSON_IsNumber(item)) return "a number";
  if (cJSON_IsBool(item)) return "a boolean";
  if (cJSON_IsNull(item)) return "null";
  if (cJSON_IsArray(item)) return "an array";
  if (cJSON_IsObject(item)) return "an object";
  return "an invalid value";
}

const char *ju_path_key(ju_ctx *c, const char *path, const char *key) {
  return *path ? arena_printf(c->A, "%s.%s", path, key) : arena_strdup(c->A, key);
}

const char *ju_path_idx(ju_ctx *c, const char *path, int i) { return arena_printf(c->A, "%s[%d]", path, i); }

int ju_edit_distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 64 || m > 64) return 99;
  int d[65][65];
  for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      int s = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      int x = d[i - 1][j] + 1, y = d[i][j - 1] + 1;
      d[i][j] = s < x ? (s < y ? s : y) : (x < y ? x : y);
    }
  return d[n][m];
}

void ju_check_keys(ju_ctx *c, const cJSON *obj, const char *path, const char *const *allowed) {
  for (const cJSON *it = obj ? obj->child : NULL; it; it = it->next) {
    bool ok = false;
    const char *best = NULL;
    int bestd = 3;
    for (const char *const *k = allowed; *k; k++) {
      if (strcmp(it->string, *k) == 0) ok = true;
      int d = ju_edit_distance(it->string, *k);
      if (d < bestd) bestd = d, best = *k;
    }
    if (ok) continue;
    /* list the allowed keys in the suggestion */
    size_t len = 64;
    for (const char *const *k = allowed; *k; k++) len += strlen(*k) + 2;
    char *sugg = arena_alloc(c->A, len);
    char *p = sugg;
    if (best) p += sprintf(p, "Did you mean '%s'? ", best);
    p += sprintf(p, "Allowed keys: ");
    for (const char *const *k = allowed; *k; k++) p += sprintf(p, "%s%s", k == allowed ? "" : ", ", *k);
    diag_report(c->dl, c->unknown_key, ju_path_key(c, path, it->string), sugg, "unknown key '%s'%s%s",
                it->string, c->file ? " in " : "", c->file ? c->file : "");
  }
  /* cJSON keeps duplicate keys: report them too */
  for (const cJSON *it = obj ? obj->child : NULL; it; it = it->next)
    for (const cJSON *jt = it->next; jt; jt = jt->next)
      if (it->string && jt->string && strcmp(it->string, jt->string) == 0)
        diag_report(c->dl, c->schema, ju_path_key(c, path, it->string), "Give each key once.",
                    "key '%s' appears more than once", it->string);
}

static const cJSON *get(const cJSON *obj, const char *key) {
  return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

bool ju_string(ju_ctx *c, const cJSON *obj, const char *key, const char *path, bool required,
               const char **out) {
  const cJSON *it = get(obj, key);
  if (!it) {
    if (required)
      diag_report(c->dl, c->schema, ju_path_key(c, path, key), NULL, "missing required key '%s'", key);
    return false;
  }
  if (!cJSON_IsString(it) || !it->valuestring) {
    diag_report(c->dl, c->schema, ju_path_key(c, path, key), NULL, "'%s' must be a string, not %s", key,
                ju_type_name(it));
    return false;
  }
  *out = arena_strdup(c->A, it->valuestring);
  return true;
}

bool ju_bool(ju_ctx *c, const cJSON *obj, const char *key, const char *path, bool required, bool *out) {
  const cJSON *it = get(obj, key);
  if (!it) {
    if (required)
      diag_report(c->dl, c->schema, ju_path_key(c, path, key), NULL, "missing required key '%s'", key);
    return false;
  }
  if (!cJSON_IsBool(it)) {
    diag_report(c->dl, c->schema, ju_path_key(c, path, key), NULL, "'%s' must be true or false, not %s",
                key, ju_type_name(it));
    return false;
  }
  *out = cJSON_IsTrue(it);
  return true;
}

bool ju_int_item(ju_ctx *c, const cJSON *item, const char *path, int64_t lo, int64_t hi, int64_t *out) {
  if (!cJSON_IsNumber(item)) {
    diag_report(c->dl, c->schema, path, NULL, "expected an integer, found %s", ju_type_name(item));
    return false;
  }
  double v = item->valuedouble;
  if (!isfinite(v) || v != floor(v) || v < (double)lo || v > (double)hi) {
    diag_report(c->dl, D_BAD_NUMBER, path, NULL, "%.17g is not an integer in [%lld, %lld]", v,
                (long long)lo, (long long)hi);
    return false;
  }
  *out = (int64_t)v;
  return true;
}

bool ju_number_item(ju_ctx *c, const cJSON *item, const char *path, double *out) {
  if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble)) {
    diag_report(c->dl, c->schema, path, NULL, "expected a finite number, found %s", ju_type_name(item));
    return false;
  }
  *out = item->valuedouble;
  return true;
}

const cJSON *ju_array(ju_ctx *c, const cJSON *obj, const char *key, const char *path, bool required) {
  const cJSON *it = get(obj, key);
  if (!it) {
    if (required)
      diag_report(c->dl, c->schema, ju_path_key(c, path, key), NULL, "missing required key '%s'", key);
    return NULL;
  }
  if (!cJSON_IsArray(it)) {
    diag_report(c->dl, c->schema, ju_path_key(c, path, key), NULL, "'%s' must be an array, not %s", key,
                ju_type_name(it));
    return NULL;
  }
  return it;
}

const cJSON *ju_object(ju_ctx *c, const cJSON *obj, const char *key, const char *path, bool required) {
  const cJSON *it = get(obj, key);
  if (!it) {
    if (required)
      diag_report(c->dl, c->schema, ju_path_key(c, path, key), NULL, "missing required key '%s'", key);
    return NULL;
  }
  if (!cJSON_IsObject(it)) {
    diag_report(c->dl, c->schema, ju_path_key(c, path, key), NULL, "'%s' must be an object, not %s", key,
                ju_type_name(it));
    return NULL;
  }
  return it;
}
