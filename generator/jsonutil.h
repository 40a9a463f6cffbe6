/* Strict JSON reading helpers on top of cJSON, shared by the manifest and
 * the graph readers: typed getters that report a diagnostic (with the JSON
 * path) instead of failing silently, and an unknown-key check that suggests
 * the nearest allowed key. */
#ifndef DLC_JSONUTIL_H
#define DLC_JSONUTIL_H

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"

/* Largest integer accepted in a shape or attribute. */
#define JU_INT_MAX ((int64_t)1 << 40)

typedef struct ju_ctx {
  arena *A;
  diag_list *dl;
  diag_id schema;      /* code for type errors (D_GRAPH_SCHEMA or D_MANIFEST_SCHEMA) */
  diag_id unknown_key; /* code for unknown keys */
  const char *file;    /* for messages */
} ju_ctx;

/* Reads a whole file (NUL-terminated).  NULL with a diagnostic on failure. */
char *ju_read_file(const char *path, diag_list *dl, const char *at);
/* Parses text; reports D_JSON_SYNTAX with line and column on error. */
cJSON *ju_parse(const char *text, diag_list *dl, const char *what);

/* Levenshtein distance, for "did you mean" suggestions (99 past 64 characters). */
int ju_edit_distance(const char *a, const char *b);
/* Reports every key of `obj` not in the NULL-terminated `allowed` list. */
void ju_check_keys(ju_ctx *c, const cJSON *obj, const char *path, const char *const *allowed);
/* Typed access.  `required` reports a missing key.  Return false when the
 * key is missing or has the wrong type (a diagnostic is then recorded,
 * unless it is simply absent and optional). */
bool ju_string(ju_ctx *c, const cJSON *obj, const char *key, const char *path, bool required,
               const char **out);
bool ju_bool(ju_ctx *c, const cJSON *obj, const char *key, const char *path, bool required, bool *out);
bool ju_int_item(ju_ctx *c, const cJSON *item, const char *path, int64_t lo, int64_t hi, int64_t *out);
bool ju_number_item(ju_ctx *c, const cJSON *item, const char *path, double *out);
const cJSON *ju_array(ju_ctx *c, const cJSON *obj, const char *key, const char *path, bool required);
const cJSON *ju_object(ju_ctx *c, const cJSON *obj, const char *key, const char *path, bool required);
/* "path.key" / "path[i]" in the arena. */
const char *ju_path_key(ju_ctx *c, const char *path, const char *key);
const char *ju_path_idx(ju_ctx *c, const char *path, int i);
const char *ju_type_name(const cJSON *item);

#endif
