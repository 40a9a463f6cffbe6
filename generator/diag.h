/* Diagnostics (spec §6.10, §14).
 *
 * Every diagnostic carries a code, a kind, a location (`at`), a `why` and a
 * `suggestion`.  Stages report into a diag_list; the driver prints the list
 * as text on stderr or as JSON (--diag=json).  The codes live in diag.def. */
#ifndef DLC_DIAG_H
#define DLC_DIAG_H

#include <stdbool.h>

typedef enum { DIAG_ERROR, DIAG_WARNING } diag_severity;

typedef enum {
#define X(e, code, kind, sev, sugg) e,
#include "diag.def"
#undef X
  D__COUNT
} diag_id;

typedef struct diag {
  diag_id id;
  char *at;         /* where: "graph.nodes[2] (bias_add)", "IndexBook.align_params", ... */
  char *why;        /* what is wrong, with the values involved */
  char *suggestion; /* how to fix it */
} diag;

typedef struct diag_list {
  diag *items;
  int n, cap;
  int nerrors;
  int limit; /* stop recording after this many (0 = 100) */
} diag_list;

void diag_init(diag_list *dl);
void diag_free(diag_list *dl);
/* Record a diagnostic.  `suggestion` may be NULL for the table's default. */
void diag_report(diag_list *dl, diag_id id, const char *at, const char *suggestion,
                 const char *why_fmt, ...) __attribute__((format(printf, 5, 6)));
bool diag_has_errors(const diag_list *dl);
const char *diag_code(diag_id id);
const char *diag_kind(diag_id id);
diag_severity diag_sev(diag_id id);
const char *diag_default_suggestion(diag_id id);
/* Print all diagnostics: text ("file: error E1001 BroadcastMismatch at ...: why\n  suggestion: ...")
 * or one JSON document {"diagnostics":[...]}. */
void diag_print_text(const diag_list *dl, const char *prefix);
void diag_print_json(const diag_list *dl);
/* Move all diagnostics of `src` to the end of `dst`. */
void diag_append(diag_list *dst, diag_list *src);

#endif
