/* GPU IR (spec §9): a contraction region and its plan, laid onto the fixed
 * per-arch skeleton, with async tokens.
 *
 * For sm80 the skeleton is cp.async ring -> commit/wait -> ldmatrix from a
 * swizzled shared layout -> mma.sync m16n8k16 -> epilogue on the fp32
 * accumulator -> vectorized st.global.  gpuir_build() decides everything the
 * emitter needs: the operand tiles (which index is contiguous, hence which
 * ldmatrix form), the flattened M/N/K groups and the batch, the tail
 * predicates (from Poly Core's tail axes), the epilogue lets, the stored
 * output, and the vector widths to instantiate.  Its statement list carries
 * TokLoad / TokCompute / TokEpilogue tokens, checked by gpuir_verify(). */
#ifndef DLC_GPUIR_H
#define DLC_GPUIR_H

#include <cJSON.h>

#include "plan.h"

typedef enum {
  GS_ALLOC_SHARED, /* a shared tile */
  GS_CP_ASYNC,     /* global -> shared copy of one operand tile: produces TokLoad */
  GS_COMMIT,       /* cp.async.commit_group of the tokens of one stage */
  GS_WAIT,         /* cp.async.wait_group: consumes TokLoads */
  GS_BARRIER,      /* bar.sync */
  GS_LOOP,         /* begin of the k-tile loop */
  GS_END_LOOP,
  GS_LDMATRIX,     /* shared -> fragments (needs its tile's TokLoad consumed) */
  GS_MMA,          /* produces TokCompute */
  GS_STAGE_ACC,    /* accumulators -> shared staging tile */
  GS_EPILOGUE,     /* the region's post-reduce lets: consumes TokCompute, produces TokEpilogue */
  GS_ST_GLOBAL,    /* vectorized store: consumes TokEpilogue */
  GS_ADDR_SETUP,   /* per-CTA: an operand's chunk pointers and tail byte counts at k-tile 0 */
  GS_ADVANCE,      /* an operand's chunk pointers move by its k-step (elements per k-tile) */
  GS_TILE_COORD,   /* per-CTA: the tile's coordinates from the block index (the plan's raster order) */
} gpu_stmt_kind;

typedef struct gpu_stmt {
  gpu_stmt_kind k;
  const char *what;      /* tile, tensor or instruction form */
  const char *detail;    /* index expression, shape, predicate ... */
  int nin;
  const char *in[4];     /* tokens consumed */
  const char *out;       /* token produced, or NULL */
} gpu_stmt;

/* One operand of the contraction as the skeleton loads it. */
typedef struct gpu_operand {
  const char *tensor;
  int input;             /* region input */
  const rexpr *read;     /* its Read, or Select(guards, Read, pad) */
  bool k_contig;         /* stored along K in shared memory (else along M / N) */
  int contig_axis;       /* region axis along which chunks run */
  int vec_max;           /* widest chunk the layout allows (1 when not contiguous) */
  const sx *kstep;       /* elements its address moves per unit of the K group, when that is
                            the same at every (m|n, k, batch) and no pad guard reads k; else NULL */
  const char *kstep_str; /* kstep as the dump prints it */
  /* walk: no k-step, but the chunks run along the innermost K axis and the
   * offset and every pad guard split into a part over the K axes and a part
   * over the rest.  A thread then keeps, per chunk, the rest's parts (fixed
   * over the k-tiles) and, for its one K column, a counter over the K axes
   * that adds BK with carries each tile. */
  /* attention's K and V: elements between consecutive keys (the operand's
   * row axis), when fixed (offset(n+1) - offset(n) holds no index); NULL
   * otherwise.  Full key tiles then stream from one pointer per operand. */
  const sx *rstep;
  const char *rstep_str;
  bool walk;
  const sx *moff, *koff;  /* walk: the offset's parts (the constant in moff) */
  const sx **kcoef;       /* walk: koff's coefficient of each K axis (koff is affine in them) */
  int ng;
  const sx **gm, **gk;    /* walk: each guard expression's parts (the constant in gm) */
  const ib_guard *guards; /* walk: the guards (bounds lo <= e < hi) */
} gpu_operand;

/* A contraction region seen as GEMM groups (from Poly Core), with the
 * axes it predicates and the output the kernel stores from it. */
typedef struct gpu_view {
  const region *r;
  const pc_analysis *a;
  int nm, nn, nb, nk;    /* axis groups (region axis indices, outer to inner) */
  const int *m_axes, *n_axes, *b_axes, *k_axes;
  int ntail;
  const char **tail;     /* predicated axes (Poly Core's tail axes) */
  int out, out_let;      /* the region output stored, and the let yielded to it; -1 if none */
  dtype out_dt;
} gpu_view;

/* The pieces of the streaming softmax, as lets of the first region: the
 * score lets end in `x`; max = Reduce(max){x}; e = exp2(x - max) (the `sub`
 * and `exp` lets); sum = Reduce(sum){e}; div = e / sum; p = cast(div). */
typedef struct gpu_softmax {
  int x, max, sub, exp, sum, div, p;
  int key_axis;          /* the axis the row reductions run over */
  double max_init;
  dtype pt;              /* P's dtype: the A operand of P V */
} gpu_softmax;

/* How the full-tile epilogue reads an input of the post-reduce lets
 * (gpuir_epi_read):
 *   COL    unit stride along the single N axis, no M axis: one vector load a
 *          thread, before its rows (a bias);
 *   VEC    unit stride along the N axis, with M axes: one vector load a row;
 *   ROW    no N axis: one scalar a row, the same for the row's outputs;
 *   OTHER  anything else (strided along N, or under a pad guard): the
 *          kernel has no full-tile epilogue. */
typedef enum { EPI_RD_COL, EPI_RD_VEC, EPI_RD_ROW, EPI_RD_OTHER } epi_read_kind;

/* The most chunks of one operand a thread streams through hoisted state
 * (registers: a pointer each for M/N-contiguous chunks with rows along M/N;
 * one pointer and a 64-bit distance each for K-contiguous chunks; one
 * pointer for chunks k rows apart).  8 lets the v4 kernels stream. */
#define GPUIR_STREAM_CHUNKS 8
/* The most K axes a walking operand's counter carries through. */
#define GPUIR_WALK_AXES 8

typedef struct gpu_kernel {
  const char *name;      /* entry point name without the vector suffix */
  const char *skeleton;  /* "sm80_contraction" or "sm80_attention" */
  const char *algo;
  const region *r;       /* the (first) region */
  const pc_analysis *a;
  sched_plan plan;
  dtype T;               /* operand element type */
  gpu_operand A, B;      /* lhs (M side), rhs (N side) of the first region */
  gpu_view v;            /* the first region's groups */
  /* attention: the P V region, its rhs, and the softmax between */
  bool attention;
  gpu_view v2;
  gpu_operand V;
  gpu_softmax sm;
  int D, DV;             /* head dims: QK^T contraction, PV output */
  /* launch */
  int threads, smem;
  const sx *grid[3];     /* blocks in x, y, z, over signature dims */
  const sx *tiles[2];    /* contraction: M tiles and N tiles, whose product is grid[0] (the
                            dispatch multiplies them, checked, rather than expand the product) */
  int nvec;
  int vecs[4];           /* instantiated chunk widths, widest first */
  int steady_min_vec;    /* contraction: the chunk widths >= this run the steady loop (both
                            operands advance, at most GPUIR_STREAM_CHUNKS chunks a thread); 0: none */
  int epi_vec;           /* contraction: outputs one thread stores with one 16-byte st.global in
                            the full-tile epilogue (tile inside M and N, tensors aligned); 0: the
                            kernel has only the bounds-checked epilogue */
  int nst, cap_st;
  gpu_stmt *st;
} gpu_kernel;

/* NULL with E1706 when the region is not a single contraction with a
 * pointwise epilogue (what the sm80 contraction skeleton compiles).  The
 * caller verifies the result (gpuir_verify; run_stages does). */
gpu_kernel *gpuir_build(arena *A, const region *r, const pc_analysis *a, const sched_plan *p, const char *name,
                        diag_list *dl);
/* Attention (algo_choice "streaming_softmax"): region 1 is QK^T with its
 * score lets and the row softmax yielding P deferred, region 2 is P V.
 * NULL with E1706 when the regions do not have that shape. */
gpu_kernel *gpuir_build_attention(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                                  const char *name, diag_list *dl);
bool gpuir_verify(const gpu_kernel *k, diag_list *dl);
/* Element offset of `map` in a region memref: the leading dimension
 * (param ld<name>) strides dim 0 of a rank-2 signature tensor, other tensors
 * are packed row-major. */
const sx *gpuir_offset(arena *A, const region_memref *m, const sx *const *map);
const sx *gpuir_stride(arena *A, const region_memref *m, int d);
/* The leading-dimension parameter of a rank-2 signature tensor: "ld" and its
 * name as a lower-case C identifier (the entry point's argument too). */
const char *gpuir_ld_param(arena *A, const char *tensor);
/* Offset `off` with the axes of a group (outer to inner) replaced by their
 * flattened index, a variable named `flat`, when they enter it as
 * stride * flat (a packed run of dims, as NHWC's n, h, w): off0 + stride *
 * flat.  NULL when they do not, or an axis is named `flat`. */
const sx *gpuir_flatten(arena *A, const region *r, const int *ax, int n, const sx *off, const char *flat);
/* The index map of the view's output: the yielded let's axes, in the
 * tensor's order. */
const sx **gpuir_out_map(arena *A, const gpu_view *v);
/* The kind of an epilogue Read (a RX_READ of a post-reduce let) of view v. */
epi_read_kind gpuir_epi_read(arena *A, const gpu_view *v, const rexpr *rd);
cJSON *gpuir_dump(const gpu_kernel *k);

#endif
