/* Layout re-optimization (seed 004): choosing the memory order of a graph's
 * stored tensors before the skeletons see them.  It runs on the Frontend
 * graph, right after the frontend stage, as seven small passes:
 *
 *   A0 attach     every tensor gets layout_perm (given, or its stored order,
 *                 or propagated from its producer through views),
 *                 layout_tag "icd/v1", transform_meta and coaccess_block;
 *                 a different tag already there is replaced (W2105)
 *   A1 co-access  per stored input, a weight matrix W over its axes plus one
 *                 "lane" node (the innermost, vectorized position), built
 *                 from how its consumers iterate each axis (the roles table in
 *                 layout.c), merged with a trace file; an empty W falls back
 *                 to the diagonal, the stored order (W2106)
 *   A2 cost       C(pi) = sum_{i<j} W_ij |pos(i) - pos(j)| and modularity Q
 *                 over consecutive blocks of coaccess_block positions
 *   T1 decide     Fiedler ordering (the Laplacian's second eigenvector, from
 *                 LAPACKE_dsyev), the lane moved last, then adjacent-swap and
 *                 2-opt refinement under a step budget (refine_steps), with
 *                 the wall-clock budget only as an upper cap
 *   T2 re-decide  for a tensor whose transform_meta.delta_layout is set: the
 *                 same on W' = W + transform_meta.coaccess, kept only when
 *                 C'(pi1) < C'(pi0) (1 - epsilon), else rolled back
 *   T3 legalize   when the decided order differs from the stored one and the
 *                 cost model says converting beats loading the stored layout,
 *                 an explicit layout-conversion Transpose (its own region) is
 *                 inserted, followed by the inverse view its consumers read;
 *                 with fuse_transpose, Transpose/Reshape chains are collapsed
 *   V1 verify     pi is a permutation, signature shapes and dtypes are
 *                 unchanged (the rewritten graph is read back), alignment
 *                 holds; metrics {Q0, Q1, C0, C1, pi_hash} and an event log
 *
 * A1..T3 run on roles that follow the stored orders; when the decided
 * layouts change a decided input's roles (a conv filter's streamed K index
 * follows its activation's innermost axis), they run a second time on the
 * roles of the first round's layouts, and that round's decisions count.
 * The pipeline compiles the rewrite: each conversion is a kernel of the
 * op's chain, writing the converted operand into the caller's workspace.
 *
 * Results are deterministic: the same graph, options and seed give the same
 * decisions and pi_hash (see docs/layout.md). */
#ifndef DLC_LAYOUT_H
#define DLC_LAYOUT_H

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "frontend.h"

#define LAYOUT_TAG "icd/v1"

/* Seed 004 §6 flags (manifest "layout", docs/manifest.md). */
typedef struct layout_opts {
  bool enabled;
  bool trace_only;        /* source "trace": W comes from the trace alone */
  const cJSON *trace;     /* {"tensors": {"X": [[i, j, w], ...]}}, or NULL */
  const char *trace_where;
  double time_budget_s;   /* wall-clock cap of T1/T2's refinement */
  int refine_steps;       /* deterministic budget: candidate moves evaluated */
  double epsilon;         /* T2's required relative improvement */
  int align;              /* bytes: 16, 32 or 64 */
  bool fuse_transpose;    /* T3 collapses Transpose/Reshape chains */
  bool strict;            /* a V1 failure is an error; else the pass is undone */
  uint64_t seed;          /* order of the 2-opt candidates */
} layout_opts;

void layout_opts_default(layout_opts *o);
/* Reads a manifest's "layout" object into `o` (from the defaults); the
 * trace path is relative to `base_dir`.  False with diagnostics. */
bool layout_opts_read(arena *A, const cJSON *obj, const char *at, const char *base_dir, layout_opts *o,
                      cJSON **trace_owned, diag_list *dl);
/* Reads a trace file for --layout-trace.  NULL with diagnostics. */
cJSON *layout_read_trace(const char *path, diag_list *dl);

/* One tensor after the pass. */
typedef struct lay_tensor {
  int rank;
  int *perm;              /* layout_perm after the pass: axes outer to inner */
  const char *tag;
  int block;              /* coaccess_block */
  bool decided;           /* a signature input of rank >= 2: A1..T3 ran on it */
  /* the rest holds for decided tensors: n = rank + 1 nodes, node rank = lane */
  int n;
  double *W, *W2;         /* n x n; W2 = W' of T2, or NULL */
  bool fallback;          /* A1 found no co-access: diagonal W, stored order */
  bool given;             /* layout_perm was given: T1 did not run */
  int *stored, *pi0, *pi1, *final; /* orders of the n nodes, lane last */
  double c_stored, q_stored, c0, q0, c1, q1; /* C, Q of stored / pi0 / final */
  bool redecided, rolled_back;
  double c2_pi0, c2_pi1;  /* T2: C'(pi0), C'(pi1) */
  bool slow_stored;       /* the stored innermost axis is not a single index */
  double load_slow, load_fast, convert_cost; /* T3's model, copies per element */
  bool convert;           /* T3 inserted a conversion */
  const char *conv_name;  /* the converted tensor */
  const char *reason;     /* T3's decision in words */
  int steps;              /* refinement moves evaluated */
} lay_tensor;

typedef struct lay_event {
  const char *stage;
  double elapsed_ms;  /* since the pass began: dlcgen --time-report prints it, the dump does not */
  bool improved;
  const char *reason;
} lay_event;

#define LAY_MAX_EVENTS 16

typedef struct layout_result {
  const fe_graph *g;
  layout_opts opt;
  lay_tensor *t;          /* by fe tensor index */
  double Q0, Q1, C0, C1;
  char pi_hash[17];
  int nev;
  lay_event ev[LAY_MAX_EVENTS];
  cJSON *rewrite;         /* the rewritten graph (owned), or NULL when unchanged */
  int nconvert, ncollapsed;
  bool undone;            /* V1 failed without strict: the rewrite was dropped */
} layout_result;

/* Runs A0..V1 on `g` (read from `graph`, instantiated by `inst`).  NULL
 * with diagnostics on error. */
layout_result *layout_run(arena *A, const fe_graph *g, const cJSON *graph, const fe_instance *inst,
                          const layout_opts *o, diag_list *dl);
bool layout_verify(const layout_result *r, diag_list *dl);
cJSON *layout_dump(const layout_result *r);
void layout_result_free(layout_result *r);

/* The ordering core (A2, T1), public for the tests.  Orders hold node
 * indices from position 0 (outermost) on; `lane` (or -1) is kept last. */
double lay_cost(const double *W, int n, const int *order);
double lay_modularity(const double *W, int n, const int *order, int block);
/* Fiedler order of W (LAPACKE_dsyev on its Laplacian), oriented so that the
 * lane is at the end, then the lane moved last.  False when the eigensolver
 * fails or W has no off-diagonal weight (order = identity). */
bool lay_fiedler(const double *W, int n, int lane, int *order);
/* Adjacent swaps, then 2-opt reversals, first improvement, lexicographic on
 * (C, inversions against `ref`), until no move improves or `steps` moves
 * were evaluated or `budget_s` seconds passed.  Returns the moves evaluated;
 * *capped says whether the wall clock stopped it. */
int lay_refine(const double *W, int n, int lane, const int *ref, int steps, double budget_s, uint64_t seed,
               int *order, bool *capped);

#endif
