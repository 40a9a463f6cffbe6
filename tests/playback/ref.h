/* A plain FP64 reference of Frontend graphs (spec §6.11), written from the
 * op definitions in shared graphs/README.md, independently of Tiny IR and of
 * playback: nested loops over concrete shapes, libm for the elementwise
 * functions.  Each op computes in FP64 from its inputs; its result is then
 * stored in the op's result dtype (fp16/bf16/fp32, as the graph's shape and
 * dtype rules give it), and signature outputs in their declared dtype. */
#ifndef DLC_TEST_REF_H
#define DLC_TEST_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frontend.h"

#define REF_MAX_RANK 8

typedef struct ref_tensor {
  int rank;
  int64_t shape[REF_MAX_RANK];
  int64_t n;
  double *d;
} ref_tensor;

/* Dim symbols and their values. */
typedef struct ref_dims {
  int n;
  const char *name[32];
  int64_t val[32];
} ref_dims;

bool ref_tensor_new(ref_tensor *t, int rank, const int64_t *shape);
void ref_tensor_free(ref_tensor *t);
/* The concrete shape of symbolic sizes. */
bool ref_shape(const ref_dims *dims, int rank, const sx *const *shape, int64_t *out);

/* Evaluates the graph.  `in[i]` is signature input i; `out[i]` receives
 * signature output i (caller frees).  False with a reason in `why`. */
bool ref_eval_graph(const fe_graph *g, const ref_dims *dims, const ref_tensor *in, ref_tensor *out, char *why,
                    size_t nwhy);

/* The libm definition of an elementwise function (a, b, c are its inputs). */
double ref_ewise(ewise_fn fn, double a, double b, double c);

#endif
