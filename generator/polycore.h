/* Poly Core (spec §7): the polyhedral analysis service, on isl.
 *
 * For every region it reports the dependences (flow, anti, output), the
 * parallel, reduce and tail axes, whether the region stays affine, the halo
 * of each read (per axis and in bytes), the minimum buffer of each value
 * (reg, smem_ring with its depth, gmem), barrier hints per arch, swizzle and
 * bank hints for shared-memory operands, and compute-at legality.  It also
 * classifies a contraction region's axes into the M, N, batch and K groups
 * and its operands' contiguous indices, which the plan and the GPU IR use. */
#ifndef DLC_POLYCORE_H
#define DLC_POLYCORE_H

#include <cJSON.h>

#include "region.h"

/* The contraction of a region, in GEMM terms (filled by pc_classify). */
typedef struct pc_contraction {
  bool present;          /* the region has a contraction (acc_let >= 0) */
  int lhs, rhs;          /* region inputs of the operands: lhs carries M */
  const rexpr *lhs_read, *rhs_read;    /* their Read (or guarded Select) in the body */
  int nm, nn, nb, nk;
  int *m_axes, *n_axes, *b_axes, *k_axes; /* region axis indices, outer to inner */
  /* the index (region axis) each operand varies fastest along, i.e. the axis
   * of its tensor's last (contiguous) dimension; -1 if that index is not a
   * single axis */
  int lhs_contig, rhs_contig;
  bool lhs_k_contig, rhs_k_contig;     /* contiguous along K (else along M / N) */
} pc_contraction;

/* The MMA granule (mma.m16n8k16) of the M, N and K axis groups: an axis
 * whose extent is symbolic or not a multiple of its group's granule is a
 * tail axis.  Batch axes and regions without a contraction have granule 1. */
#define PC_MMA_M 16
#define PC_MMA_N 8
#define PC_MMA_K 16

typedef enum { PC_FLOW, PC_ANTI, PC_OUTPUT } pc_dep_kind;

typedef struct pc_dep {
  pc_dep_kind kind;
  const char *relation;  /* isl map between two statements, simplified */
  const char *from, *to; /* statement names: a let's name, or "yield.<output>" */
} pc_dep;

typedef struct pc_halo {
  const char *tensor;    /* region input */
  int tensor_axis;
  const char *iter;      /* the output axis that strides along it, or NULL */
  int64_t stride;        /* coefficient of that axis */
  int64_t lo, hi;        /* extra elements read below / above the strided core */
} pc_halo;

typedef struct pc_buffer {
  const char *value;     /* input, let or output */
  const char *role;      /* "input", "let" or "output" */
  dlc_buffer buffer;     /* BUF_REG, BUF_SMEM_RING or BUF_GMEM (kinds.def) */
  int depth;             /* ring depth for smem_ring, else 1 */
  const char *why;
} pc_buffer;

typedef struct pc_bank {
  const char *tensor;    /* a shared-memory operand */
  bool k_contig;         /* stored with K contiguous */
  const char *ldmatrix;  /* "ldmatrix.x4" (K contiguous), "ldmatrix.x4.trans" (M or
                          * N contiguous), or "none" (no operand index is contiguous) */
  const char *swizzle;   /* "xor16B" */
  const char *why;
} pc_bank;

typedef struct pc_analysis {
  int region;
  pc_contraction con;
  int ndeps;
  pc_dep *deps;
  int npar, nred, ntail;
  const char **parallel_axes, **reduce_axes, **tail_axes;
  bool affine;           /* every access stays (piecewise) affine */
  int nhalo;
  pc_halo *halo;
  int64_t halo_bytes;    /* per output point (see docs/analysis.md) */
  int64_t *halo_axis;    /* per region axis (iters, then reduce axes): lo + hi summed
                          * over the read dims it strides */
  int nbuf;
  pc_buffer *buf;
  dlc_buffer min_buffer;   /* of the accumulator */
  int min_depth;
  int nbarrier80, nbarrier90;
  const char **barrier_sm80, **barrier_sm90;
  int nbank;
  pc_bank *bank;
  bool compute_at_ok;
  const char *compute_at_why;
  /* a value the previous region yielded deferred: whether it fuses into
   * this region (pc_fusion); fuse_in < 0 when the region reads none */
  int fuse_in;           /* the region input, or -1 */
  int fuse_from;         /* the producing region */
  int fuse_out;          /* its output */
  bool fuse_ok;
  const char *fuse_why;
} pc_analysis;

typedef struct pc_report {
  arena *A;
  const region_set *rs;
  int n;
  pc_analysis *a;        /* one per region */
} pc_report;

/* The verdict on fusing the value region ci reads from the previous region
 * (yielded "deferred") into region ci, filled into a's fuse_* fields: legal
 * when region ci has no contraction (a row region) and the producer's value
 * is pointwise (no contraction, no Reduce under the yielded let), so that the
 * reader's thread computes it, in registers, at every point it reads, from
 * the producer's inputs.  A value behind a reduction needs the producer's
 * whole row, which the reader's CTA does not own: the regions stay a chain.
 * Needs no isl. */
void pc_fusion(arena *A, const region_set *rs, int ci, pc_analysis *a);
/* Fills a->con for region r (no isl needed). */
void pc_classify(arena *A, const region *r, pc_contraction *con);
/* Analyzes every region with isl (one isl_ctx for the call).  isl failures
 * are internal errors: a diagnostic saying "This is a compiler bug", and
 * NULL. */
pc_report *pc_analyze(arena *A, const region_set *rs, diag_list *dl);
/* The report's invariants: one analysis per region, in order; a contraction
 * exactly where the region has an accumulator, its M, N, batch and K
 * groups disjoint sets of region axes; tail and
 * buffer entries naming what exists.  Violations are internal errors. */
bool pc_verify(const pc_report *p, diag_list *dl);
/* {"analysis":[{...}, ...]}, one object per region in the shape of spec §7. */
cJSON *pc_dump(const pc_report *p);

#endif
