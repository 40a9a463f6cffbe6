/* Diagnostics: recording and printing (see diag.h, diag.def). */
#include "diag.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

static const struct {
  const char *code, *kind, *sugg;
  diag_severity sev;
} diag_table[] = {
#define X(e, code, kind, sev, sugg) {code, kind, sugg, sev},
#include "diag.def"
#undef X
};

const char *diag_code(diag_id id) { return diag_table[id].code; }
const char *diag_kind(diag_id id) { return diag_table[id].kind; }
diag_severity diag_sev(diag_id id) { return diag_table[id].sev; }
const char *diag_default_suggestion(diag_id id) { return diag_table[id].sugg; }

void diag_init(diag_list *dl) { memset(dl, 0, sizeof *dl); }

void diag_free(diag_list *dl) {
  for (int i = 0; i < dl->n; i++) {
    free(dl->items[i].at);
    free(dl->items[i].why);
    free(dl->items[i].suggestion);
  }
  free(dl->items);
  memset(dl, 0, sizeof *dl);
}

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (!p) dlc_die_oom();
  memcpy(p, s, n);
  return p;
}

void diag_report(diag_list *dl, diag_id id, const char *at, const char *suggestion,
                 const char *why_fmt, ...) {
  if (diag_table[id].sev == DIAG_ERROR) dl->nerrors++;
  int limit = dl->limit ? dl->limit : 100;
  if (dl->n >= limit) return;
  if (dl->n == dl->cap) {
    dl->cap = dl->cap ? dl->cap * 2 : 8;
    dl->items = realloc(dl->items, sizeof(diag) * (size_t)dl->cap);
    if (!dl->items) dlc_die_oom();
  }
  va_list ap;
  va_start(ap, why_fmt);
  int n = vsnprintf(NULL, 0, why_fmt, ap);
  va_end(ap);
  char *why = malloc((size_t)n + 1);
  if (!why) dlc_die_oom();
  va_start(ap, why_fmt);
  vsnprintf(why, (size_t)n + 1, why_fmt, ap);
  va_end(ap);
  diag *d = &dl->items[dl->n++];
  d->id = id;
  d->at = xstrdup(at ? at : "");
  d->why = why;
  d->suggestion = xstrdup(suggestion ? suggestion : diag_table[id].sugg);
}

bool diag_has_errors(const diag_list *dl) { return dl->nerrors > 0; }

void diag_append(diag_list *dst, diag_list *src) {
  for (int i = 0; i < src->n; i++) {
    diag *d = &src->items[i];
    diag_report(dst, d->id, d->at, d->suggestion, "%s", d->why);
  }
  diag_free(src);
}

void diag_print_text(const diag_list *dl, const char *prefix) {
  for (int i = 0; i < dl->n; i++) {
    const diag *d = &dl->items[i];
    fprintf(stderr, "%s%s%s %s %s at %s: %s\n  suggestion: %s\n", prefix ? prefix : "",
            prefix && *prefix ? ": " : "",
            diag_table[d->id].sev == DIAG_ERROR ? "error" : "warning", diag_table[d->id].code,
            diag_table[d->id].kind, d->at, d->why, d->suggestion);
  }
  int limit = dl->limit ? dl->limit : 100;
  if (dl->n >= limit) fprintf(stderr, "(further diagnostics suppressed)\n");
}

void diag_print_json(const diag_list *dl) {
  cJSON *root = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(root, "diagnostics");
  for (int i = 0; i < dl->n; i++) {
    const diag *d = &dl->items[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "code", diag_table[d->id].code);
    cJSON_AddStringToObject(o, "kind", diag_table[d->id].kind);
    cJSON_AddStringToObject(o, "severity", diag_table[d->id].sev == DIAG_ERROR ? "error" : "warning");
    cJSON_AddStringToObject(o, "at", d->at);
    cJSON_AddStringToObject(o, "why", d->why);
    cJSON_AddStringToObject(o, "suggestion", d->suggestion);
    cJSON_AddItemToArray(arr, o);
  }
  char *s = cJSON_Print(root);
  if (!s) dlc_die_oom();
  fprintf(stderr, "%s\n", s);
  free(s);
  cJSON_Delete(root);
}
