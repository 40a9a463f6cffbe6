/* Helpers shared by the stage unit tests: read a graph (inline JSON text or
 * a file of manifests/graphs), run the front half up to a stage, and look
 * up nodes, entries and diagnostics by name. */
#ifndef DLC_TEST_PIPE_H
#define DLC_TEST_PIPE_H

#include <stdlib.h>

#include "check.h"
#include "frontend.h"
#include "indexbook.h"
#include "jsonutil.h"
#include "polyview.h"
#include "tiny.h"

/* JSON written with single quotes, for readable inline graphs: J("{'a':1}")
 * returns the text with every ' replaced by ". */
static inline const char *J(const char *text) {
  static char *bufs[64];
  static int next;
  free(bufs[next]);
  char *s = bufs[next] = malloc(strlen(text) + 1);
  next = (next + 1) % 64;
  for (size_t i = 0;; i++) {
    s[i] = text[i] == '\'' ? '"' : text[i];
    if (!text[i]) break;
  }
  return s;
}

/* Everything one test case builds, freed at once by pipe_free(). */
typedef struct front {
  arena A;
  diag_list dl;
  fe_graph *fe;
  tiny_dag *tiny;
  indexbook *ib;
  poly_view *pv;
} front;

typedef enum { TO_FRONTEND, TO_TINY, TO_INDEXBOOK, TO_POLY_VIEW } pipe_stage;

static inline void pipe_init(front *p) {
  memset(p, 0, sizeof *p);
  arena_init(&p->A);
  diag_init(&p->dl);
}

static inline void pipe_free(front *p) {
  diag_free(&p->dl);
  arena_free(&p->A);
}

/* Runs graph text through the stages up to `last`; returns false as soon as
 * a stage fails (the diagnostics are in p->dl). */
static inline bool pipe_run_inst(front *p, const char *text, const fe_instance *inst, pipe_stage last) {
  p->fe = fe_read_text(&p->A, text, "test", inst, &p->dl);
  if (!p->fe) return false;
  if (last == TO_FRONTEND) return true;
  p->tiny = tiny_lower(&p->A, p->fe, &p->dl);
  if (!p->tiny) return false;
  if (last == TO_TINY) return true;
  p->ib = ib_build(&p->A, p->tiny, &p->dl);
  if (!p->ib) return false;
  if (last == TO_INDEXBOOK) return true;
  p->pv = pv_build(&p->A, p->ib, &p->dl);
  return p->pv != NULL;
}

static inline bool pipe_run(front *p, const char *text, pipe_stage last) {
  fe_instance inst = {DT_FP16, NULL, NULL};
  return pipe_run_inst(p, text, &inst, last);
}

/* The text of manifests/graphs/<name> (malloc'ed). */
static inline char *shared_graph(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", DLC_SHARED_GRAPHS, name);
  diag_list dl;
  diag_init(&dl);
  char *t = ju_read_file(path, &dl, path);
  if (!t) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  diag_free(&dl);
  return t;
}

static inline bool pipe_run_file(front *p, const char *name, dtype T, pipe_stage last) {
  char *t = shared_graph(name);
  fe_instance inst = {T, NULL, NULL};
  bool ok = pipe_run_inst(p, t, &inst, last);
  free(t);
  return ok;
}

/* Number of recorded diagnostics with this code ("E1001"). */
static inline int diag_count(const diag_list *dl, const char *code) {
  int n = 0;
  for (int i = 0; i < dl->n; i++) n += strcmp(diag_code(dl->items[i].id), code) == 0;
  return n;
}

static inline const diag *diag_find(const diag_list *dl, const char *code) {
  for (int i = 0; i < dl->n; i++)
    if (strcmp(diag_code(dl->items[i].id), code) == 0) return &dl->items[i];
  return NULL;
}

/* Prints the diagnostics of a run that was expected to pass. */
static inline void pipe_show(const front *p) {
  if (p->dl.n) diag_print_text(&p->dl, "unexpected");
}

static inline const tiny_uop *tiny_node(const tiny_dag *d, const char *out) {
  int i = tiny_find(d, out);
  return i < 0 ? NULL : &d->u[i];
}

static inline int tiny_count(const tiny_dag *d, tiny_op op) {
  int n = 0;
  for (int i = 0; i < d->n; i++) n += d->u[i].op == op;
  return n;
}

static inline const ib_entry *ib_entry_of(const indexbook *b, const char *value) {
  int i = ib_find(b, value);
  return i < 0 ? NULL : &b->e[i];
}

static inline const char *sxs(arena *A, const sx *x) { return x ? sx_str(A, x) : "(null)"; }

/* "a,b,c" from a list of strings, for compact comparisons. */
static inline const char *join(arena *A, int n, const char *const *s) {
  size_t len = 1;
  for (int i = 0; i < n; i++) len += strlen(s[i]) + 1;
  char *r = arena_alloc(A, len), *q = r;
  for (int i = 0; i < n; i++) q += sprintf(q, "%s%s", i ? "," : "", s[i]);
  *q = 0;
  return r;
}

/* A shape as "[M,N]". */
static inline const char *shape_s(arena *A, int rank, const sx *const *shape) {
  const char **parts = ARENA_ARRAY(A, const char *, rank + 1);
  for (int i = 0; i < rank; i++) parts[i] = sx_str(A, shape[i]);
  return arena_printf(A, "[%s]", join(A, rank, parts));
}

#endif
