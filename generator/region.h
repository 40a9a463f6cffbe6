/* Region Buffer SSA (spec §6): one region is one kernel.
 *
 * Regions are formed from Poly-View blocks: a contraction block with its
 * epilogue starts a region, and a fused block joins the region of its
 * producer when it reads the producer's values at the same points (compute-at
 * with no halo), as attention's row softmax joins QK^T.  Inside a region
 * values are SSA lets over the region's axes, which unify the statements'
 * dims by data flow (region.c); only outputs are memrefs (yield, with the
 * cast), "gmem" or "deferred" when only the next region reads them.  A
 * region that would read one of its own values at other indices (a shift)
 * is reported, and region_build() returns NULL.  The vocabulary is Read / Unary / Binary /
 * Select / Reduce / BroadcastInDim / Transpose (plus constants and let
 * references).  Normal forms (C-CON1, SRNF R0-R4, epilogue after the reduce)
 * are established by region_normalize() and checked by region_verify(). */
#ifndef DLC_REGION_H
#define DLC_REGION_H

#include <cJSON.h>

#include "kinds.h"
#include "polyview.h"

typedef enum {
  RX_READ,      /* Read(tensor, map), or Read(tensor, map) through a loaded index (ldvar) */
  RX_CONST,     /* a scalar */
  RX_LET,       /* reference to an earlier let */
  RX_UNARY,     /* op in tiny.def (NEG, RECIP, EXP2, CAST, ...) */
  RX_BINARY,    /* ADD, SUB, MUL, FDIV, MAX, CMPLT, CMPNE */
  RX_SELECT,    /* Select(pred, then, else): pred is guards (pads/tails) or a bool value */
  RX_REDUCE,    /* Reduce(op, axes, init, dtype, body) */
  RX_BCAST,     /* BroadcastInDim(operand, result axes, broadcast_dimensions) */
  RX_TRANSPOSE, /* Transpose(operand, permutation) */
} rx_kind;

typedef struct rexpr rexpr;
struct rexpr {
  rx_kind k;
  tiny_op op;            /* UNARY/BINARY */
  dtype dt;              /* result dtype (REDUCE: accumulate dtype) */
  rexpr *a, *b, *c;      /* operands; SELECT: a = value pred (or NULL), b = then, c = else */
  /* axes this value varies over: indices into the region's iters (reduce
   * axes are numbered after the iters; a Reduce may also reduce an iter) */
  int nax;
  int *ax;
  /* READ */
  int input;             /* region input */
  int nmap;
  const sx **map;        /* index per tensor axis, over iter and reduce names */
  /* READ through a loaded index (a Gather, seed 003's LoadIndex): `a` is the
   * index (an int32 Read, under a pad Select when the index is a padded
   * view), `ldvar` the variable that stands for its value in `map` and in
   * the guards; the read is in bounds iff all `guards` hold (0 <= ldvar <
   * size, and the pads of the source's view), else it gives `cval`.  NULL
   * ldvar: a plain read (`a`, guards and cval unused). */
  const char *ldvar;
  /* CONST */
  double cval;
  const char *crsqrt;    /* times rsqrt(dim) */
  const char *crecip;    /* times 1/dim */
  /* LET */
  int let;
  /* SELECT with guards: lo <= e < hi for all (hi NULL: unbounded above) */
  int ng;
  ib_guard *guards;
  bool pad;              /* the guards and else come from a pad: else is data,
                          * not a neutral (see region_verify, E1602) */
  /* REDUCE */
  reduce_op rop;
  int nred;
  int *red;              /* reduce axes (indices >= niters) */
  double init;
  /* BCAST: a's axes placed at `bdims` of this expression's axes */
  int *bdims;
  /* TRANSPOSE: this expression's axis i is a's axis perm[i] */
  int *perm;
};

typedef struct region_axis {
  const char *name;      /* m, n, k, h, kh, ... */
  const sx *size;
} region_axis;

typedef struct region_memref {
  const char *name;      /* the value or signature tensor */
  int entry;             /* IndexBook entry of the root value */
  dtype dt;
  int rank;
  const sx **shape;
  int alignment;         /* bytes guaranteed (the runtime checks more) */
  bool noalias;
  const char *layout;    /* "row_major" (the last axis is contiguous) */
  dlc_materialize materialize; /* outputs: MAT_GMEM or MAT_DEFERRED (kinds.def) */
  bool signature;        /* a signature tensor (else a value between regions) */
} region_memref;

typedef struct region_let {
  const char *name;
  rexpr *e;
  bool post_reduce;      /* an epilogue let (R3): applied to the accumulator */
} region_let;

typedef struct region_yield {
  int let;
  int output;
  dtype cast;            /* the stored dtype */
} region_yield;

typedef struct region {
  const char *name;
  int niters, nred;
  region_axis *it;       /* iters, then reduce axes */
  int nin, nout, nlets, nyields;
  region_memref *in, *out;
  region_let *lets;
  region_yield *yields;
  int nblocks;
  int *blocks;           /* Poly-View blocks it was formed from */
  int acc_let;           /* the contraction's accumulator let, or -1 */
} region;

typedef struct region_set {
  arena *A;
  const poly_view *pv;
  int n;
  region *r;
} region_set;

/* Forms the regions, normalizes and verifies them; NULL when any error was
 * reported. */
region_set *region_build(arena *A, const poly_view *pv, diag_list *dl);
/* A zeroed expression of kind k (input and let -1), for builders and tests. */
rexpr *region_expr_new(arena *A, rx_kind k);
/* SRNF: R0 merge nested reductions of one op, R1 hoist reduce-invariant
 * factors, R3 move post-reduce pointwise work onto the accumulator; R4 keeps
 * reductions of different ops apart (merging them is E1601). */
void region_normalize(region_set *rs, region *r, diag_list *dl);
/* Applies R0 to `outer`, whose body is `inner`; reports E1601 when their ops
 * differ (R4). Exposed for tests. */
rexpr *region_merge_reduce(region_set *rs, rexpr *outer, diag_list *dl);
/* The invariants of spec §6: axes in range, SSA order, Binary operands over
 * the same axes outside C-CON1 bodies, consistent BroadcastInDim/Transpose,
 * accumulate dtype of sums (E1501), the accumulator is a C-CON1 Reduce(sum),
 * the epilogue after it (R3), tail Selects in reductions give the neutral
 * (E1602), every output yielded once over its rank. */
bool region_verify(const region_set *rs, diag_list *dl);
cJSON *region_dump(const region_set *rs);
/* Whether region `a` hands its one deferred yield to the contraction `b` as
 * attention's P: `a` is a contraction whose lets take a row max after the
 * accumulator (a streamed softmax).  The streaming skeleton keeps such a
 * value in registers; any other deferred value that a contraction reads is
 * stored by a chain's earlier kernel (and Poly Core says so). */
bool region_streams_to(const region *a, const region *b);
/* Fuses the value region `prod` yields to output `out` (deferred) into
 * region `cons`, which reads it as input `in`: each Read of it becomes the
 * yielded let's expression (its lets inlined, its reads of prod's inputs
 * re-indexed through the Read's map, the yield's cast applied), so that the
 * reader computes the value where it reads it.  Only for a pointwise value
 * (pc_fusion's verdict).  Returns the fused reader (cons's axes, outputs and
 * lets; prod's inputs added, `in` dropped) and sets *left to prod without
 * that output, or NULL when prod then stores nothing.  Copies; changes
 * neither region. */
region *region_fuse_deferred(arena *A, const region *prod, int out, const region *cons, int in, region **left);
/* An expression as one line of JSON, for comments and messages. */
char *region_expr_str(arena *A, const region *r, const rexpr *e);
/* The same as compact infix text for the generated code's comments:
 * "C0 + bias[n]", "select(C1.cmplt, C1, 0)", "sum[k](A[m, k] * B[k, n])".
 * Broadcasts and casts to fp32 are left out (the indices and the fp32
 * epilogue imply them); a guard Select(g, 1, 0) prints as its guard g;
 * guards read "0 <= 2*h+kh-1 < H" or "-m+n-1 >= 0". */
char *region_expr_text(arena *A, const region *r, const rexpr *e);

#endif
