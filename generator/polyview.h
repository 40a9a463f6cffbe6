/* Poly-View (spec §5): the analysis-only polyhedral view of the IndexBook,
 * built with isl.
 *
 * Every computing value becomes a statement with an isl domain (its axes,
 * plus reduce axes for a reduction) and isl access relations (one per read,
 * restricted to the read's in-bounds guards, and one write).  coalesce, gist
 * and remove_redundancies always run.  Statements are grouped into blocks:
 *   - contraction_pattern: Reduce(sum) directly over Binary(mul) of reads,
 *     with pattern "matmul" (every index a plain axis) or "conv" (affine
 *     offsets such as 2*h+kh-1), and its epilogue of pointwise ops;
 *   - fused blocks of the remaining statements (e.g. a row softmax);
 *   - boundary: a non_scop (non-affine) view, materialized between regions.
 * The results are kept as isl strings; later stages re-read them with isl. */
#ifndef DLC_POLYVIEW_H
#define DLC_POLYVIEW_H

#include <cJSON.h>

#include "indexbook.h"

typedef struct pv_access {
  const char *tensor;    /* root value (isl tuple name sanitized in `map`) */
  int entry;             /* IndexBook entry of the root */
  bool write;
  const char *map;       /* isl map, simplified */
  const char *pma;       /* the same as a pw_multi_aff, or NULL */
  int pad_pieces;        /* basic sets of the out-of-bounds (pad) part */
  const char *via;       /* view read through, or NULL */
} pv_access;

typedef struct pv_stmt {
  int entry;             /* IndexBook entry */
  const char *name;      /* isl statement name */
  const char *domain;    /* isl set over output (+ reduce) axes */
  const char *out_domain; /* a reduction's domain with the reduce axes projected out */
  const char **dims;     /* dimension names in `domain` */
  int ndims;
  int nacc, cap_acc;
  pv_access *acc;
} pv_stmt;

typedef struct pv_contraction {
  const char *pattern;   /* "matmul" or "conv" */
  int lhs, rhs;          /* accesses of the product statement */
  int nl, nr, no, nk;
  const char **lhs_idx, **rhs_idx, **out_idx, **reduce_idx;
  int noff;
  const char **off_key, **off_expr; /* affine offsets: "X[1]" -> "2*h+kh-1" */
} pv_contraction;

typedef enum { PVB_CONTRACTION, PVB_FUSED, PVB_BOUNDARY } pv_block_kind;

typedef struct pv_block {
  pv_block_kind kind;
  const char *name;
  int nst;
  int *st;               /* statements in topological order */
  int reduce_stmt;       /* CONTRACTION: the Reduce(sum) statement */
  int product_stmt;      /* CONTRACTION: the product (mul) statement */
  int nepi;
  int *epi;              /* CONTRACTION: epilogue statements (post-reduce pointwise) */
  pv_contraction con;
} pv_block;

typedef struct pv_edge {
  int from, to;          /* blocks */
  const char *value;
} pv_edge;

typedef struct poly_view {
  arena *A;
  const indexbook *ib;
  const char *context;   /* "[M, N, K] -> { : M >= 1 and ... }" */
  int nparams;
  const char **params;
  int nst, cap_st;
  pv_stmt *st;
  int *stmt_of_entry;    /* IndexBook entry -> statement or -1 */
  int nblk;
  pv_block *blk;
  int *block_of_stmt;
  int nedge;
  pv_edge *edge;
} poly_view;

/* Builds the view; reports E1401 UnguardedAccess, E1203 MissingDivGuard and
 * W2101 ExcessivePiecewise.  NULL on error. */
poly_view *pv_build(arena *A, const indexbook *ib, diag_list *dl);
/* Above this many pad pieces in one access, W2101 is reported. */
#define PV_MAX_PIECES 8
/* The view's invariants: every domain and access map is an isl object of the
 * dims it claims, every statement lies in exactly one block, a contraction
 * block holds its product and reduce statements, and edges join blocks.
 * Violations are internal errors. */
bool pv_verify(const poly_view *pv, diag_list *dl);
cJSON *pv_dump(const poly_view *pv);

#endif
