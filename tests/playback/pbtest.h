/* Shared harness of the playback tests: a fixed-seed generator, the
 * tolerance rule, and one "graph case" runner that takes a Frontend graph
 * through tiny_lower and pb_eval_tiny next to the FP64 reference (ref.h),
 * then checks every IndexBook view of the lowered DAG against playback.
 *
 * Tolerance (spec §6.11: rtol = atol = 1e-3 after fp16/bf16 rounding).
 * Both sides are rounded to the output dtype.  An element passes when
 *     |got - want| <= tol * (S + |want|),   S = max |want| over the output,
 * i.e. atol = tol scaled to the output's magnitude and rtol = tol, with
 * tol = 1e-3 for fp32 and fp16 graphs.  For bf16 graphs 1e-3 is below one
 * ulp (unit roundoff u = 2^-8 = 3.9e-3), and playback rounds after every
 * UOp (a bf16 silu is five bf16 operations) where the reference rounds once
 * per op, so tol = 4u = 1.56e-2 there. */
#ifndef DLC_TEST_PBTEST_H
#define DLC_TEST_PBTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dtype.h"

extern int pbt_failures;
#define PBT_CHECK(cond, ...)                                       \
  do {                                                             \
    if (!(cond)) {                                                 \
      pbt_failures++;                                              \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);         \
      fprintf(stderr, __VA_ARGS__);                                \
      fputc('\n', stderr);                                         \
    }                                                              \
  } while (0)

/* splitmix64 */
typedef struct pbt_rng {
  uint64_t s;
} pbt_rng;
uint64_t pbt_next(pbt_rng *r);
double pbt_uniform(pbt_rng *r, double lo, double hi);
int pbt_int(pbt_rng *r, int lo, int hi); /* inclusive */

double pbt_tol(dtype compute);

/* Worst agreement seen: max |got-want|, max |got-want| / (S + |want|) and
 * the largest ratio of error to allowance (<= 1 passes). */
typedef struct pbt_err {
  double max_abs, max_rel, worst_ratio;
  int64_t n, nbad;
} pbt_err;
void pbt_err_merge(pbt_err *into, const pbt_err *e);
bool pbt_close(const char *what, const double *got, const double *want, int64_t n, double tol, pbt_err *e);
/* Exact equality (NaN equals NaN); for two evaluations of one view. */
bool pbt_same(const char *what, const double *got, const double *want, int64_t n);

/* Input value domains. */
typedef enum {
  DOM_ANY,     /* uniform [-2, 2] */
  DOM_POS,     /* uniform [0.25, 4] (log, sqrt, rsqrt) */
  DOM_NONZERO, /* +-[0.5, 2] (denominators) */
  DOM_COND,    /* 0 or a nonzero value, half each (where) */
} pbt_domain;

typedef struct pbt_case {
  const char *name;
  const char *graph_path;  /* a JSON file, or NULL with graph_text */
  const char *graph_text;
  dtype T;
  const char *attrs_json;  /* runtime attr values (fe_instance), or NULL */
  const char *dims;        /* "M=7,N=5,K=9" */
  pbt_domain dom[4];       /* per signature input */
  uint64_t seed;
  double tol;              /* 0: pbt_tol(T) */
  bool want_contract;      /* lowered DAG must have a CONTRACT and no REDUCE */
} pbt_case;

/* Runs one case; prints a summary line.  Returns false (and counts
 * failures) when anything disagrees. */
bool pbt_run_graph(const pbt_case *c, pbt_err *err, int *views_checked);

/* How region playback must agree with Tiny playback. */
typedef enum {
  PBT_EXACT,     /* bit for bit: the regions compute the same operations in
                  * the same dtypes (a C-CON1 product is exact in the
                  * accumulator, as CONTRACT's), and every reduction sums in
                  * double and rounds once, as Tiny's REDUCE/CONTRACT */
  PBT_ROUNDING,  /* within pbt_close's tolerance: SRNF reassociated a
                  * reduction (R0 sums nested sums at once, R1 multiplies
                  * after summing), so roundings differ */
} pbt_agree;

/* Region playback against Tiny playback (spec §6.11): the case's graph goes
 * through the front half and region_build (which must succeed), then
 * pb_eval_regions() and pb_eval_tiny() run on the same random inputs and
 * every signature output is compared.  `nregions` (if not NULL) adds the
 * number of regions formed.  Prints a summary line; false on any
 * disagreement. */
bool pbt_run_regions(const pbt_case *c, pbt_agree agree, pbt_err *err, int *nregions);

#endif
