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

/* The statements, from gpuir.def. */
typedef enum {
#define S(e, name, in_min, in_max, out, doc) e,
#include "gpuir.def"
#undef S
  GS__COUNT
} gpu_stmt_kind;

/* Whether a statement produces a token (gpuir.def's out column). */
typedef enum { GTOK_NONE, GTOK_ONE, GTOK_MAY } gpu_tok_out;

/* An async token: what one statement produces and later ones consume
 * (a stage's copies, an MMA's accumulators, an epilogue step's values).
 * Statements name tokens by their index in gpu_kernel.tok; index 0 is no
 * token.  A token of a family is one of its instances: tA0 (the prologue's
 * first copy of A), tA[kt+S-1] (the steady loop's refill), tA[kt] (the
 * tile a loop iteration reads).  A loop-carried token (tA[kt]: indexed by
 * the loop's variable) is produced by any instance of its family before
 * it: the prologue's copies or the previous iterations' refills. */
typedef struct gpu_token {
  const char *name;      /* as the dump and the comments print it */
  int family;            /* the token (an index) that names its family: itself for a plain one */
  bool carried;          /* indexed by a loop variable (name: family[at]) */
} gpu_token;


/* The operand a statement of the sm80 contraction moves. */
typedef enum {
  GSIDE_NONE,
  GSIDE_A,       /* the lhs (M side) */
  GSIDE_B,       /* the rhs (N side) */
  GSIDE_KWALK,   /* the walking operands' one K counter (gpu_operand.walk) */
  GSIDE_V,       /* attention's V (A is Q, B is K) */
  GSIDE__COUNT
} gpu_side;

/* How a CpAsync copies its tile, and when an Advance steps. */
typedef enum {
  GCOPY_NONE,
  GCOPY_STREAM,  /* a full tile from the operand's hoisted state, no predicate; the Advance after it
                    steps that state one tile on */
  GCOPY_TILE,    /* tile t if t < KT: streamed when full (t < KTF) and the kernel's width streams,
                    else through the chunk function with bounds; an Advance steps only after a
                    streamed (full) tile */
  GCOPY_BOUNDED, /* tile t if t < KT, through the chunk function with bounds */
  GCOPY__COUNT
} gpu_copy;

/* The k-tile loops of the sm80 contraction. */
typedef enum {
  GLOOP_NONE,
  GLOOP_STEADY,  /* kt + S - 1 < KTF: every tile it prefetches is full (the widths >= min_vec) */
  GLOOP_DRAIN,   /* kt < KT: the tiles left, the remainder's copy bounded */
  GLOOP_COLUMNS, /* split-K's second kernel: a thread's 4-float columns of the tile, grid-stride */
  GLOOP_KEYS,    /* sm80 attention: one pass's key tiles (lo: the pass, 0 full, 1 masked, 2 the key tail) */
  GLOOP_ROW,     /* the row skeleton: one pass over the row's elements (gpu_stmt.pass) */
  GLOOP_LAP,     /* the sm90a contraction consumers': laps of S k-tiles, unrolled on fixed slots */
  GLOOP_REST,    /* the sm90a contraction consumers': the last (KT - 1) % S k-tiles after the laps */
  GLOOP__COUNT
} gpu_loop;

/* The steps of sm80 attention's Epilogue statements, between its MMAs. */
typedef enum {
  GSTEP_NONE,
  GSTEP_SCORE_FULL, /* the score lets on a tile no mask touches */
  GSTEP_SCORE,      /* the score lets with each element's mask tests */
  GSTEP_LANE_MASK,  /* the lane's mask values at its first element (or rows) */
  GSTEP_SCORE_LANE, /* the score lets, masks from the lane's values */
  GSTEP_ROW_MAX,    /* the running row max over the quad */
  GSTEP_RESCALE,    /* the old max against the new: the rescale factor, the row max */
  GSTEP_PROBS,      /* exp2(s - max), the row sum, O rescaled */
  GSTEP_P_FRAGS,    /* P as A fragments in registers (a k16 step of P V) */
  GSTEP_FINISH,     /* O / row sum */
} gpu_step;

/* Which barrier a Barrier statement is: the CTA's, or one of the sm90a
 * attention consumers' named barriers (the ping-pong scheduler's 2 + wg,
 * the consumers' 1). */
typedef enum {
  GBAR_CTA,        /* bar.sync 0: every thread of the CTA */
  GBAR_FIRST_TURN, /* bar.arrive 2 by warpgroup 1 only: warpgroup 0 takes the tensor cores first */
  GBAR_TURN,       /* bar.sync 2 + wg: this warpgroup's turn (the other issued its S) */
  GBAR_HAND_OFF,   /* bar.arrive 2 + (wg ^ 1): the other warpgroup's turn */
  GBAR_LAST_TURN,  /* bar.sync 2 by warpgroup 0 only: the other's last arrival */
  GBAR_CONSUMERS,  /* bar.sync 1: the 256 consumer threads */
  GBAR__COUNT
} gpu_bar;

/* Which barriers an MbarInit initializes: a ring's full or empty
 * barriers (one a stage), or the sm90a attention's Q barrier. */
typedef enum {
  GMBAR_NONE,
  GMBAR_FULL,   /* full[s]: a stage's copies landed */
  GMBAR_EMPTY,  /* empty[s]: the consumers released a stage */
  GMBAR_Q,      /* qfull: the attention's Q tile landed */
  GMBAR__COUNT
} gpu_mbar;

/* Whose statements a Role begins (and whose budget a SetMaxNReg sets) in
 * the sm90a skeletons' warp specialization. */
typedef enum {
  GROLE_NONE,
  GROLE_PRODUCER,  /* warpgroup 0: the copies into the ring (setmaxnreg.dec) */
  GROLE_CONSUMERS, /* warpgroups 1 and 2: the wgmma and the epilogue (setmaxnreg.inc) */
  GROLE__COUNT
} gpu_role;

/* How the row skeleton loads a Read (LdGlobal, LdShared, LdGather). */
typedef enum {
  GLOAD_NONE,
  GLOAD_VEC,     /* VEC elements at once along the row (ld.global.v4 when whole and aligned, else
                    one at a time), or the thread's own elements from the row cache (LdShared) */
  GLOAD_ELEM,    /* one element at a time, each at its element of the row */
  GLOAD_ROW,     /* one value a row (the Read has no row axis) */
  GLOAD_INDEX,   /* a gather's int32 index, one element at a time, widened to int64 */
  GLOAD__COUNT
} gpu_load;

/* At most this many Reads a pass of the row skeleton loads, and the most
 * pad Selects one of them sits under. */
#define GPUIR_ROW_PASS_LOADS 32
#define GPUIR_ROW_GUARD_DEPTH 16

typedef struct gpu_stmt {
  gpu_stmt_kind k;
  /* The statement's annotation, which the dump and the generated comments
   * print: its tile, tensor or instruction form (what), and an index
   * expression, shape or predicate (detail).  No check and no renderer
   * decides on them (test_gpuir, annotations_decide_nothing): what a
   * statement does is its kind, its tokens and the typed fields below. */
  const char *what;
  const char *detail;
  int nin;
  int in[4];             /* tokens consumed (gpu_kernel.tok) */
  int out;               /* token produced, or 0 */
  /* the sm90a consumers' unrolled k-loop: the statement names ring slot
   * `slot`, fixed at compile time; an MbarWait's parity is the lap's phase
   * XOR `flip` (1 on the lap's step that wraps to slot 0) */
  bool fixed_slot;
  int slot, flip;
  /* What the sm80 contraction's renderer reads (skel/sm80_contraction.c), beside the prose
   * above, which only the dump prints: */
  gpu_side side;         /* the operand a copy, advance, setup or fragment load moves */
  gpu_copy copy;         /* CpAsync: how it copies; Advance: after which copies it steps */
  int tile;              /* CpAsync, Advance, LdMatrix: the k-tile, kt + tile inside a Loop,
                            the slice's first + tile before one */
  int ring;              /* CpAsync, LdMatrix: the shared-memory ring of stages it copies into or
                            loads from, 1 + an index its skeleton picks (0: none, as attention's
                            Q); inside a Loop, stage (the loop's variable + tile) % stages */
  bool ring_first;       /* CpAsync before the loops: a pass's first tile, into the stage the
                            loops before it leave current (a count no statement fixes) */
  int stage;             /* CpAsync before a Loop: its ring stage (inside: (kt + tile) % S) */
  int lo, hi;            /* LdMatrix, Mma: k steps lo..hi (k16, or k8 in TF32); Wait, WgmmaWait:
                            groups left in flight (lo); the gathering producer's MbarArrive on a
                            full barrier: the stage it completes lags kt by lo */
  int min_vec;           /* only the kernels of chunk width >= min_vec run it (0: every width) */
  int below_vec;         /* Loop (steady): and only those of width < below_vec (0: no bound) */
  bool ahead;            /* LdMatrix, Mma: the fragment set loaded a tile ahead (k step 0 of tile
                            kt + tile); Wait, Barrier and LdMatrix before the steady loop: its
                            prologue (the first tile's, run when the loop runs) */
  gpu_loop loop;         /* Loop: which loop */
  bool full;             /* Epilogue, StGlobalVec: the full-width pair (else the bounds-checked one) */
  gpu_step step;         /* attention's Epilogue: which step */
  gpu_bar bar;           /* Barrier: which one */
  gpu_mbar mbar;         /* MbarInit: which barriers (lo: their arrival count); MbarWait,
                            MbarArrive: the barrier of which ring (or Q's) */
  gpu_role role;         /* Role: whose statements follow; SetMaxNReg: whose budget (lo: its
                            registers) */
  /* What the row skeleton's renderer reads (skel/rows.c, rows_kernel): */
  int pass;              /* Loop, loads, RowLets, Reduce, RowScalar: the pass (reduction `pass`, or
                            gpu_rows.nred: the element outputs'); StGlobalVec: the yield it stores */
  const rexpr *rd;       /* LdGlobal, LdShared, LdGather: the Read */
  gpu_load load;         /* how it is loaded */
  int nguard;            /* the pad Selects (guards, no condition) the Read sits under, outermost
                            first (at most GPUIR_ROW_GUARD_DEPTH): it is loaded only where all
                            their guards hold, else 0 */
  const rexpr *const *guard;
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
  /* walk: the guards test in 32 bits.  Every guard's K part gk lies in
   * [INT32_MIN, INT32_MAX - 1] over the K axes' values (a constant extent
   * bounds its axis; any other axis is below the flattened K, which the
   * dispatcher keeps under 2^31).  A chunk then keeps, per guard, its bounds
   * on the K part, lo - gm and hi - gm, clamped into int32 once per CTA, and
   * a tile tests lo' <= gk < hi' in 32 bits: exact, since a bound clamped to
   * INT32_MIN (INT32_MAX) compares as the unclamped one for such a gk. */
  bool g32;
  /* walk: the guards as a bit mask.  When every guard's K part gk_g takes
   * its values in a constant range [gkmin[g], gkmin[g] + gkrange[g]) and the
   * ranges' product is at most 32, a chunk keeps one 32-bit mask, computed
   * once per CTA: bit sum_g (gk_g - gkmin[g]) * gkstride[g] is set when every
   * guard passes at those K parts.  A tile forms its bit once, from the K
   * counter, and tests each chunk with one AND.  gmask: the mask's bits (0:
   * no mask; the guards then test as g32 says). */
  int gmask;
  /* walk: the K part's span, sum_j |kcoef_j| * (extent_j - 1) elements: the
   * most |koff| over the K axes' values (NULL when a coefficient's sign is
   * not fixed).  kpart32: the steady loop's kernels keep the K part (and its
   * carry steps) as a 32-bit offset, added to a chunk's pointer with one
   * IMAD.WIDE.  The dispatcher checks kspan * element size <= INT32_MAX
   * per call and sends a call past it to gpu_kernel.kpart32_fallback, the
   * widest kernel off the steady loop, whose chunk functions form 64-bit
   * addresses. */
  const sx *kspan;
  bool kpart32;
  const int64_t *gkmin;
  const int *gkrange, *gkstride;
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

/* A region without contraction seen as rows (gpuir_build_rows): every let
 * varies over the row axes and, for an element let, the row axis; each
 * Reduce reduces the row axis and makes a row-scalar value.  One pass over
 * the row per Reduce (SRNF R4 keeps them apart), then one pass for the
 * element outputs. */
#define GPUIR_ROW_LETS 64
#define GPUIR_ROW_CACHE 4
/* shared memory the row cache may take, bytes (of the 48 KB static limit) */
#define GPUIR_ROW_CACHE_BYTES 32768
typedef struct gpu_rows {
  int row_axis;          /* region axis (iter or reduce) a row runs along */
  int red_axis;          /* the axis the Reduces reduce: row_axis, or a reduce axis of the same
                            extent when the element lets run along an iter (sum(x * x) next to x) */
  int nrows;
  const int *row_axes;   /* the iters that number the rows, outer to inner */
  int nred;
  int red_let[8];        /* the Reduce lets, in order: one pass each */
  bool scalar[GPUIR_ROW_LETS]; /* per let: row-scalar (no row axis) */
  int row_warps;         /* warps on one row: 1 (a warp a row) or the CTA's warps */
  int warps;             /* warps a CTA */
  int vec;               /* elements a thread loads at once (16 bytes of T) */
  const char *hint;      /* gpuir_rows_view's suggestion when it refuses, or NULL */
  /* the row cache: the vector Reads that more than one pass loads are kept
   * in shared memory by the first pass (each thread its own elements, so
   * no barrier), for rows of at most cache_cap elements */
  int ncache;
  const rexpr *cache_rd[GPUIR_ROW_CACHE];
  int cache_first[GPUIR_ROW_CACHE]; /* the pass that loads it from global memory */
  int cache_cap;
} gpu_rows;

/* How the full-width epilogue reads an input of the post-reduce lets
 * (gpuir_epi_read):
 *   COL    unit stride along the single N axis, no M axis: one vector load a
 *          thread, before its rows (a bias);
 *   VEC    unit stride along the N axis, with M axes: one vector load a row;
 *   ROW    no N axis: one scalar a row, the same for the row's outputs;
 *   OTHER  anything else (strided along N, or under a pad guard): the
 *          kernel has no full-width epilogue. */
typedef enum { EPI_RD_COL, EPI_RD_VEC, EPI_RD_ROW, EPI_RD_OTHER } epi_read_kind;

/* The most chunks of one operand a thread streams through hoisted state
 * (registers: a pointer each for M/N-contiguous chunks with rows along M/N;
 * one pointer and a 64-bit distance each for K-contiguous chunks; one
 * pointer for chunks k rows apart).  8 lets the v4 kernels stream. */
#define GPUIR_STREAM_CHUNKS 8
/* A warp's MMAs a k step at which the steady loop loads k step 0's
 * fragments a tile ahead (gpu_kernel.ahead_vec): the 64x64 warp tile's. */
#define GPUIR_AHEAD_MMAS 32
/* The most 64-bit words of hoisted state a walking operand keeps a thread:
 * per chunk, its pointer and the rest of each pad guard (1 + ng words).
 * Calibrated with nvcc 13 on the 3x3 convolution (two guards) with
 * 128x128x32 tiles and 64x64 warp tiles: the v8 kernels keep 12 words and
 * take 239-244 registers on sm_80, sm_90a, sm_100 and sm_120 with no spill;
 * the v4 kernels would keep 24 and, streamed, took 254-255 registers and
 * 12 to 25 spill instructions on sm_90a. */
#define GPUIR_WALK_WORDS 12
/* The most 32-bit registers of hoisted state a walking operand keeps a
 * thread (GPUIR_WALK_WORDS words): per chunk its pointer (2) and its guard
 * state (2 a guard, or 1 for a guard mask). */
#define GPUIR_WALK_REGS (2 * GPUIR_WALK_WORDS)
/* The most K axes a walking operand's counter carries through. */
#define GPUIR_WALK_AXES 8

#define GPUIR_MAX_FUSED 8
/* A shared tile as the skeleton lays it out: `copies` (ring stages) of `rows`
 * rows of `row_elems` elements, from byte `offset` of the block's dynamic
 * shared memory.  A row is a run of 16-byte chunks; chunk c of row r sits at
 * chunk c ^ gpuir_swizzle_xor(t, r) of the same row, so that the 8 rows one
 * ldmatrix reads hit distinct bank groups.  swz (the chunks XORed) is a power
 * of two that divides the row's chunks (gpuir_swizzle_width), else a chunk
 * would leave its row or land on another; gpuir_verify_smem checks it. */
typedef struct gpu_smem_tile {
  const char *name;
  int offset, copies, rows, row_elems, elem_bytes, swz;
} gpu_smem_tile;
#define GPUIR_MAX_TILES 4
#define GPUIR_MAX_ROW_CHUNKS 512

/* A mask among attention's score lets: a Select whose predicate is one
 * affine guard (lo <= g < hi) over the innermost query axis and the key
 * axis (and params), one of whose branches is the row max's neutral. */
#define GPUIR_MAX_MASKS 4
/* the largest |cm| * BM + |cn| * BN a lane mask takes: element offsets stay
 * far inside the clamped 32-bit range [-2^30, 2^30] of the lane's value */
#define GPUIR_LANE_MASK_SPAN (1 << 29)
typedef struct gpu_mask {
  int let;
  int kind;              /* 1: the guard holding removes the element; 2: the guard failing does */
  const ib_guard *guard;
  int64_t cm, cn;        /* g's coefficients of the query axis and the key axis */
} gpu_mask;

/* The sm90a attention row's tensor map of Q, K or V: the signature tensor
 * as stored (rank 2 to 5, row-major: gpuir_stride), its last dim the head
 * dim; one dim indexed by the operand's row axis (queries or keys), each
 * other by an axis of the batch group (the block's flattened batch index)
 * or by a constant.  A box is 64 elements of the head dim (one 128-byte
 * swizzle row) by `rows` rows, 1 along every other dim; the host encodes
 * the map per call (dlc__tmap_encode_nd), innermost dim first. */
#define GPUIR_TMAP_RANK 5
typedef struct gpu_tmap {
  const char *tensor;
  const region *r;           /* the region that reads it */
  const region_memref *m;
  const sx *const *map;      /* the Read's index per tensor dim, outer first */
  int rank, row_dim, rows;
  int row_axis, col_axis;    /* region axes of the rows and the head dim */
} gpu_tmap;

typedef struct gpu_kernel {
  const char *name;      /* entry point name without the vector suffix */
  dlc_algo algo;         /* its skeleton (algo.def): templates/<algo_template(algo)>.cuh */
  const region *r;       /* the (first) region */
  const pc_analysis *a;
  sched_plan plan;
  dtype T;               /* operand element type */
  gpu_operand A, B;      /* lhs (M side), rhs (N side) of the first region */
  gpu_view v;            /* the first region's groups */
  /* attention: the P V region, its rhs, and the softmax between */
  gpu_view v2;
  gpu_operand V;
  gpu_softmax sm;
  int D, DV;             /* head dims: QK^T contraction, PV output */
  /* attention: the score lets' masks (gpuir_mask_kind), and whether the
   * tiles they touch test them per lane (lane_mask): each mask's guard
   * minus its bounds once at the lane's first element (m, n), clamped to
   * 32 bits, then per element that value plus the compile-time
   * cm * dm + cn * dn of the element's offset (dm, dn) in the lane's
   * fragments: one compare, no index arithmetic */
  int nmasks;
  gpu_mask masks[GPUIR_MAX_MASKS];
  bool lane_mask;
  bool lane_rows;        /* lane masks on rows that flatten several query axes (grouped-query
                            attention: 8 rows down need not be 8 down the axis a mask reads):
                            each mask's value at each of the lane's rows, then + cn * dn */
  /* rows: a region without contraction on the row skeleton */
  gpu_rows rw;
  /* launch */
  int threads, smem;
  const sx *grid[3];     /* blocks in x, y, z, over signature dims */
  const sx *grid_tiles[2]; /* contraction: M tiles and N tiles, whose product is grid[0] (the
                            dispatch multiplies them, checked, rather than expand the product) */
  int nvec;
  int vecs[4];           /* instantiated chunk widths, widest first */
  int steady_min_vec;    /* contraction: the chunk widths >= this run the steady loop (both
                            operands advance, at most GPUIR_STREAM_CHUNKS chunks a thread); 0: none */
  int ahead_vec;         /* contraction: the chunk widths >= this (>= steady_min_vec) run the steady
                            loop with k step 0's fragments loaded a tile ahead, across the back
                            edge, after the next tile's wait and barrier; 0: none */
  int kpart32_fallback;  /* contraction with a kpart32 operand: the widest instantiated width below
                            steady_min_vec, which the dispatcher picks for a call whose K-part span
                            does not fit int32 bytes (gpu_operand.kpart32) */
  int mma_k;            /* contraction: the MMA's k, 16 (m16n8k16, fp16/bf16 operands) or 8 (tf32
                            m16n8k8 on fp32 operands, each fragment rounded by cvt.rna.tf32.f32) */
  int epi_vec;           /* contraction: outputs one thread stores with one 16-byte st.global in
                            the full-width epilogue (tile inside N, tensors aligned; rows past M
                            skipped); 0: the kernel has only the bounds-checked epilogue */
  bool math_ieee;        /* exp2, log2, recip, sqrt and division round as IEEE;
                            else the PTX .approx.ftz forms (the op's "math") */
  int ntiles;
  gpu_smem_tile tiles[GPUIR_MAX_TILES];  /* the shared tiles (the staging tile of the epilogue reuses them) */
  int nst, cap_st;
  gpu_stmt *st;
  int ntok, cap_tok;     /* the statements' tokens (gpu_token; entry 0: none) */
  gpu_token *tok;
  /* the sm90a contraction skeleton: B's tensor-map box and descriptor
   * major (b_kmajor), and setmaxnreg's budgets */
  int producer_regs, consumer_regs;
  /* the consumers' k-loop: k-tile 0 peeled, then laps of consumer_unroll
   * (= the ring's stages) k-tiles, unrolled on compile-time slots, then the
   * last (KT - 1) % consumer_unroll k-tiles */
  int consumer_unroll;
  /* the sm90a row's gathering producer (algo_choice "cp_async_wgmma"):
   * cp.async chunks through the operands' chunk functions instead of TMA
   * boxes; a producer thread lands stage kt - gather_lag after issuing kt */
  int gather_lag;
  /* the sm90a attention skeleton (algo_choice "wgmma_softmax"): QK^T as SS
   * wgmma, P V as RS wgmma; its shared tiles are 64-element column blocks
   * of 128-byte swizzle rows, and its tensor maps (Q, K, V: the TMA
   * producer's boxes) */
  gpu_tmap tmq, tmk, tmv;
  /* the same instance's kernel on the sm90a row (NULL: none), which the
   * entry point runs on an sm90a device when its tensor maps encode */
  struct gpu_kernel *sm90a;
  /* split-K (plan.split_k > 1): the first kernel stores each slice's fp32
   * partial tile in the caller's workspace; `reduce` is the second, which
   * sums them in a fixed order and applies the epilogue (algo
   * "splitk_reduce").  The second kernel runs split_parts CTAs a
   * tile on blockIdx.y, each thread summing one 4-float column of the
   * partials, so the loads of every slice are in flight at once */
  struct gpu_kernel *reduce;
  int split_parts;
  /* a chain (several regions, one kernel each, launched in order by one
   * entry point): the next region's kernel, and this kernel's place */
  struct gpu_kernel *next;
  int chain_index;
  /* values of earlier regions fused into this kernel (gpuir_add_fused):
   * computed in registers where the region reads them, never stored */
  int nfused;
  const char *fused[GPUIR_MAX_FUSED];
  const struct plan_result *chain_plan; /* this kernel's plan (the first's is the run's) */
} gpu_kernel;

/* Records that row kernel k computes `value` (yielded deferred by region
 * `from`) in registers where its region reads it: a Fused statement after
 * RowBegin, whose detail says why that is legal.  gpuir_verify checks that
 * nothing loads or stores the value.  False when k is not a row kernel or
 * holds GPUIR_MAX_FUSED already. */
bool gpuir_add_fused(gpu_kernel *k, arena *A, const char *value, const char *from, const char *why);

/* NULL with E1706 when the region is not a single contraction with a
 * pointwise epilogue (what the sm80 contraction skeleton compiles).  The
 * caller verifies the result (gpuir_verify; run_stages does). */
/* The operands whose alignment picks the chunk width: A and B of the first
 * region, and attention's V.  Returns how many; side < that gives each one. */
int gpuir_width_sides(const gpu_kernel *k);
const region_memref *gpuir_width_operand(const gpu_kernel *k, int side, const gpu_operand **o, const gpu_view **gv);

gpu_kernel *gpuir_build(arena *A, const region *r, const pc_analysis *a, const sched_plan *p, const char *name,
                        diag_list *dl);
/* The second kernel of a split-K contraction kernel `part` (algo_choice
 * "splitk_reduce", docs/codegen.md#split-k): per output tile, the slices'
 * partials summed in slice order, then the region's epilogue lets and the
 * store.  Same region, plan, threads and tile grid as `part`, no shared
 * memory.  NULL with E1706 when `part` is not split. */
gpu_kernel *gpuir_build_splitk_reduce(arena *A, const gpu_kernel *part, const char *name, diag_list *dl);
/* 1 or 2 (gpu_mask.kind) when e is a mask of attention kernel k's score
 * lets, its guard in *gd; else 0. */
int gpuir_mask_kind(const gpu_kernel *k, const region *r, const rexpr *e, const ib_guard **gd);
/* Attention (algo_choice "streaming_softmax"): region 1 is QK^T with its
 * score lets and the row softmax yielding P deferred, region 2 is P V.
 * NULL with E1706 when the regions do not have that shape. */
gpu_kernel *gpuir_build_attention(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                                  const char *name, diag_list *dl);
/* The sm90a contraction skeleton (algo_choice "tma_wgmma"): a plain GEMM
 * region (one M, N and K axis each, no batch) whose operands are rank-2
 * signature tensors read as A[m, k] and B[k, n] or B[n, k], unit stride on
 * their last axis: what one 2-D tensor map per operand describes.  NULL with
 * E1706 (and `why`) for any other region; gpuir_sm90a_fits says whether it
 * fits without reporting. */
gpu_kernel *gpuir_build_sm90a(arena *A, const region *r, const pc_analysis *a, const sched_plan *p, const char *name,
                              diag_list *dl);
bool gpuir_sm90a_fits(const region *r, const pc_analysis *a, const char **why);
/* The same skeleton with a gathering producer (algo_choice
 * "cp_async_wgmma"): a contraction without batch whose fp16/bf16 operands
 * no 2-D tensor map describes (gpuir_sm90a_fits says no) but which are both
 * contiguous along their innermost K axis, such as an implicit GEMM's
 * walking im2col operand.  The producer warpgroup copies 16-byte chunks of
 * both operands with cp.async (the chunk functions of the sm80 row: pads and
 * tails zero-fill), lands them, fences the async proxy and arrives on the
 * stage's full barrier.  NULL with E1706 for any other region. */
gpu_kernel *gpuir_build_sm90a_gather(arena *A, const region *r, const pc_analysis *a, const sched_plan *p,
                                     const char *name, diag_list *dl);
bool gpuir_sm90a_gather_fits(const region *r, const pc_analysis *a, const char **why);
/* The sm90a attention skeleton (algo_choice "wgmma_softmax"): what
 * gpuir_build_attention takes, with head dims of 64 or 128 (whole 128-byte
 * swizzle rows, and wgmma N for P V), fp16 or bf16 Q, K, V, one query axis,
 * and Q, K, V read as plain signature tensors that tensor maps describe
 * (gpu_tmap).  A producer warp issues TMA boxes of Q (once) and of K and V
 * into a ring of mbarrier stages (zero fill past the query and key tails);
 * two consumer warpgroups of 64 query rows (a 128-row tile) wait on each
 * stage's full barrier and, each in its ping-pong turn (named barriers),
 * run S = Q K^T as SS wgmma, then the softmax lets on the accumulators
 * while the other's S runs, P converted in registers to A fragments,
 * O += P V as RS wgmma (V MN-major through imm-trans-b), and release the
 * stage on its empty barrier; setmaxnreg moves registers from the
 * producer warpgroup to the consumers.  NULL with E1706 for any other region pair;
 * gpuir_sm90a_attention_fits says whether it fits without reporting. */
gpu_kernel *gpuir_build_sm90a_attention(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                                        const char *name, diag_list *dl);
bool gpuir_sm90a_attention_fits(const region_set *rs, const pc_report *pc, const char **why);
/* The row skeleton (algo_choice "row_reduce"): one region without
 * contraction whose Reduces all reduce one axis.  NULL with E1706 when the
 * region has another shape (gpuir_rows_view says which). */
gpu_kernel *gpuir_build_rows(arena *A, const region *r, const pc_analysis *a, const sched_plan *p, const char *name,
                             diag_list *dl);
/* Fills `rw` for region r (row axis, row axes, Reduce passes, row-scalar
 * lets); false with the reason in *why when the row skeleton cannot run it. */
bool gpuir_rows_view(arena *A, const region *r, gpu_rows *rw, const char **why);
/* Marks in `need` the element lets (not row-scalar) that e reads, transitively. */
void gpuir_rows_need(const region *r, const gpu_rows *rw, const rexpr *e, bool *need);
/* Marks in `need` the element lets pass `pass` computes: those reduction
 * `pass`'s body reads, or (pass == rw->nred) the element outputs and what
 * they read. */
void gpuir_rows_pass_lets(const region *r, const gpu_rows *rw, int pass, bool *need);
/* Whether Reads a and b load the same elements of a row (by tensor and
 * index map, the row and reduction axes as one; a gather only as itself). */
bool gpuir_rows_same_read(const region *r, const gpu_rows *rw, const rexpr *a, const rexpr *b);
/* Whether rd is one of the row cache's Reads (by tensor and index map, the
 * row and reduction axes as one); its slot, or -1. */
int gpuir_rows_cache_slot(const region *r, const gpu_rows *rw, const rexpr *rd);
/* offset(x + 1) - offset(x) for a Read along axis x, when it holds no index
 * (NULL otherwise). */
const sx *gpuir_read_step(arena *A, const region *r, const rexpr *rd, const char *x);
bool gpuir_verify(const gpu_kernel *k, diag_list *dl);
/* gpuir_verify's token check on the statements taken in `order` (a
 * permutation of their indices; NULL: their own), its diagnostics' `where`:
 * every token consumed after it is produced, every tile read (ldmatrix,
 * wgmma) after the wait that covers its copy.  The cu stage's verifier
 * takes them in the order they were rendered. */
bool gpuir_verify_token_order(const gpu_kernel *k, const int *order, const char *where, diag_list *dl);
/* The chunks XORed in a shared row of `row_bytes` bytes: the largest power of
 * two, at most 8, that divides its 16-byte chunks (0 when the row is not whole
 * chunks). */
int gpuir_swizzle_width(int row_bytes);
/* The chunk XOR of row r of tile t: (r / (8 / swz)) % swz; for a tile of
 * 4-byte elements 8 chunks wide, the same 8 values in the order
 * ((r & 3) << 1) | ((r >> 2) & 1), so that the ld.shared.b32 of an
 * M/N-contiguous tf32 fragment (4 consecutive rows, 2 adjacent chunks) hits
 * 32 distinct banks.  The skeletons' swz_xor is the same function. */
int gpuir_swizzle_xor(const gpu_smem_tile *t, int r);
/* The shared tiles' layouts: every chunk of every row stays in its row, no
 * two chunks of a tile (and no two tiles) share bytes, the tiles fit the
 * kernel's shared memory, the swizzle's phase repeats every 8 rows (the
 * skeletons' hoisted ldmatrix offsets rely on it), and every instantiated
 * chunk width divides the rows.  Part of gpuir_verify. */
bool gpuir_verify_smem(const gpu_kernel *k, diag_list *dl);
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
/* The full-width epilogue's row step of tensor m at index map `map` (the
 * output, or a VEC or ROW read): offset(mflat + 1) - offset(mflat) over
 * view v's flattened M index, when the M group enters the offset packed
 * (gpuir_flatten) and the difference is free of every index; else NULL. */
const sx *gpuir_epi_row_step(arena *A, const gpu_view *v, const region_memref *m, const sx *const *map);
/* The kind of an epilogue Read (a RX_READ of a post-reduce let) of view v. */
epi_read_kind gpuir_epi_read(arena *A, const gpu_view *v, const rexpr *rd);
cJSON *gpuir_dump(const gpu_kernel *k);
/* A statement kind's name in the dump ("CpAsync"). */
const char *gpuir_stmt_name(gpu_stmt_kind kind);
/* A token's name ("tA[kt]"); "-" for none. */
const char *gpuir_tok_name(const gpu_kernel *k, int tok);
/* The kernel's token `name` (found, or appended): a plain token, its own
 * family. */
int gpuir_tok(gpu_kernel *k, arena *A, const char *name);
/* Token family[at], carried: an instance of `family` indexed by a loop
 * variable ("tA", "kt+S-1"). */
int gpuir_tok_at(gpu_kernel *k, arena *A, const char *family, const char *at);
/* Token family<n> ("tA", 0: tA0): the n-th plain instance of `family`. */
int gpuir_tok_n(gpu_kernel *k, arena *A, const char *family, int n);

#endif
