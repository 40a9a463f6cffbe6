/* Schedule Plan (spec §8, §11): the tile, warp and pipeline choices for a
 * contraction region on one arch.
 *
 * A plan pinned in the manifest is validated, then used as given.
 * Otherwise plan_search() enumerates 10-20 candidates (tile x stages x warp
 * tile x vector width), drops those that hit a STOP rule (shared memory over
 * 80% of the arch limit, register pressure down to one CTA per SM, vector
 * width shrinking below the widest legal one), and keeps the one the cost
 * model (time_est = max(FLOPs / (peak * occ * pipeline_eff), Bytes /
 * (peak_bw * occ))) ranks fastest on the op's representative shapes. */
#ifndef DLC_PLAN_H
#define DLC_PLAN_H

#include <cJSON.h>

#include "algo.h"
#include "arch.h"
#include "polycore.h"

/* Per-arch limits and peaks (dense fp16/bf16 tensor-core math with fp32
 * accumulation, DRAM bandwidth), from the vendors' published datasheets. */
typedef struct arch_info {
  const char *name;        /* "sm80", "sm90a", "sm100", "sm120" */
  int cc;                  /* 80, 90, 100, 120 */
  const char *part;        /* the reference part of the peaks */
  int sm_count;
  double peak_tflops;      /* fp16 in, fp32 accumulate, dense */
  double peak_gbs;         /* DRAM */
  int smem_per_block;      /* max dynamic shared memory per block, bytes */
  int smem_per_sm;
  int regs_per_sm;
  int max_threads_per_sm;
  int max_ctas_per_sm;
  int smem_reserved_per_block; /* shared memory the system keeps per resident block */
  int tc_flop_per_clk_sm;  /* dense fp16 tensor FLOP per clock per SM (fp32 acc) */
  int smem_bytes_per_clk_sm; /* shared-memory bandwidth per SM */
} arch_info;

/* The table row of an arch ("sm80", "sm86", "sm89", "sm90a" (or "sm90"),
 * "sm100", "sm120"), or NULL. */
const arch_info *plan_arch(const char *name);
/* The row of arch `a`, and the arch of a row plan_arch returned. */
const arch_info *plan_arch_of(dlc_arch a);
dlc_arch plan_arch_id(const arch_info *ai);

/* A value handed from one let to another (spec §8.1 local_edges). */
typedef struct plan_edge {
  const char *from, *to;
  dlc_buffer buffer;       /* BUF_REG or BUF_SMEM_RING */
  int depth;               /* smem_ring depth; 0 for reg */
} plan_edge;

typedef struct sched_plan {
  dlc_arch arch;           /* the arch it was chosen for (ARCH_NONE: a pinned plan that names none) */
  int tile[3];             /* BM, BN, BK */
  int stages;
  int warps_m, warps_n;    /* warp grid; warp_tile = BM/warps_m x BN/warps_n */
  int vec;                 /* vectorize.width in elements (the widest kernel) */
  const char *vec_axis;
  algo_pattern pattern;    /* the region's pattern: algo_choice's key (pattern.def), e.g. matmul */
  dlc_algo algo;           /* its skeleton (algo.def), e.g. ALGO_IMPLICIT_GEMM */
  bool a_swizzle, b_swizzle;
  dlc_cstride c_stride;    /* layout_hints.C_stride (CSTRIDE_NONE: a name not in kinds.def) */
  int npred;
  const char **predicate_tail;
  int nepi;
  const char **epilogue;   /* let names applied to the accumulator */
  bool async_enable;
  int prefetch_depth;
  bool epilogue_overlap;
  dlc_barrier barrier_model; /* kinds.def: cp_async_group (sm80), mbarrier (sm90a), none (rows) */
  int raster_group;        /* CTA order: the grid is one row of tiles on blockIdx.x, taken in groups of
                            * this many M tiles, M fastest within a group (1: N fastest, row by row) */
  int split_k;             /* split-K (docs/plan.md#split-k): the K range in this many slices, each
                            * CTA's fp32 partial tile written to the caller's workspace, then a
                            * second kernel sums the slices in a fixed order and applies the
                            * epilogue once; 0 or 1: none.  Only a shape bucket's search tries it */
  bool streaming;          /* plan_attention's: one kernel for both attention
                            * regions on the streaming_softmax skeleton */
  bool a_frag_regs;        /* streaming: Q's A fragments stay in registers
                            * across key tiles (else re-read from shared memory) */
  bool pinned;
  /* plan_rows's: warps on one row (1: a warp a row; warps_m: a CTA a row) */
  int row_warps;
  /* fixed by the skeleton, kept for the dump */
  const char *cache_tensor[2]; /* the operands staged in shared memory (A, B) */
  bool batched;            /* the region has batch axes (bound to block.z) */
  int nedges;
  plan_edge *edges;        /* local_edges */
  /* estimates */
  int elem_bytes;          /* operand element size the estimates assume */
  int addr_regs;           /* registers for index arithmetic beyond a plain GEMM's */
  int smem_bytes, regs_per_thread, threads, ctas_per_sm;
  bool regs_every_arch;    /* regs_per_thread was measured to hold on every arch (plan_rows'
                            * ROW_REGS): __launch_bounds__ may ask for ctas_per_sm; else it
                            * is sm80's estimate, and the emitter leaves ptxas 255 registers */
  double occ;              /* resident warps / max warps per SM */
  double pipeline_eff;     /* stage overlap x fragment-load efficiency */
  double time_us;          /* mean over the representative shapes */
  double calib;            /* the calibration factor applied to the times (1: none) */
  int nshapes;
  double *shape_us, *shape_occ; /* per representative shape (plan_result.shapes) */
  const char **shape_bound;     /* "compute" or "memory" */
} sched_plan;

typedef struct plan_candidate {
  sched_plan p;
  bool kept;
  dlc_stop stop;           /* the STOP rule that dropped it (kinds.def), or STOP__NONE */
  const char *why;         /* the numbers behind the STOP rule */
  double score;            /* ranking key of a kept candidate: mean over the
                            * archs of its time / the arch's best (1 = best) */
} plan_candidate;

typedef struct plan_result {
  int region;
  sched_plan chosen;
  int ncand;
  plan_candidate *cand;
  int nshapes;
  int64_t (*shapes)[3];    /* representative M, N, K used for ranking */
} plan_result;

/* Checks a plan against the arch and the region: shared memory at most 80%
 * of the arch limit (E1702), the register estimate (E1703), MMA shape
 * divisibility (E1704), vector width against alignment (E1705), ranges
 * (E1701) and what the sm80 skeleton can realize (E1706).  Reports
 * diagnostics at `at`; does not look at p->arch (a kernel's plan is checked
 * against every arch it is compiled for). */
bool plan_validate(const sched_plan *p, const region *r, const pc_analysis *a, const arch_info *ai, diag_list *dl,
                   const char *at);
/* Reads a pinned plan object (spec §8.1 keys): every key is optional and
 * takes the skeleton's default, or the region's (epilogue, predicate_tail,
 * algo_choice); warps_m/n come from tile / warp_tile.  Type errors are E1701
 * at the key's JSON path.  Does not validate (plan_validate does). */
bool plan_from_json(arena *A, const cJSON *j, const region *r, const pc_analysis *a, sched_plan *out, diag_list *dl,
                    const char *at);
/* Searches, or takes the pinned plan when `pinned` is not NULL.  `shapes`
 * (nshapes x {M,N,K}) are the representative shapes; NULL uses defaults.
 * NULL with diagnostics when the pinned plan is invalid, when no candidate
 * survives the STOP rules, or when the region has no contraction (E1706). */
plan_result *plan_choose(arena *A, const region *r, const pc_analysis *a, const arch_info *ai, const cJSON *pinned,
                         int nshapes, const int64_t (*shapes)[3], diag_list *dl, const char *at);
/* One plan for a kernel compiled for several archs: the STOP rules and
 * validation apply on every arch, and candidates rank by the mean over the
 * archs of (time / that arch's best time).  Estimates in the result are for
 * archs[0].  plan_choose is this with one arch. */
plan_result *plan_choose_multi(arena *A, const region *r, const pc_analysis *a, const arch_info *const *archs,
                               int narchs, const cJSON *pinned, int nshapes, const int64_t (*shapes)[3],
                               diag_list *dl, const char *at);
/* The streaming-softmax skeleton's plan for attention (region 1 is QK^T
 * with the softmax): the key tile, by the STOP rules on every arch, or the
 * pinned plan's ("tile": [64, BN, D]), checked by the same rules (E1701,
 * E1702, E1703, each suggesting the key tile that fits). */
plan_result *plan_attention(arena *A, const region *r1, const pc_analysis *a1, int D, int DV,
                            const arch_info *const *archs, int narchs, const cJSON *pinned, diag_list *dl,
                            const char *at);
/* The row skeleton's plan (algo_choice "row_reduce") for a region without
 * contraction whose rows have `row_extent` elements and load `vec` elements
 * a thread: a warp a row (4 rows a CTA) when the extent is a constant of at
 * most PLAN_ROW_WARP_MAX vectors a lane, else a CTA of 8 warps a row. */
plan_result *plan_rows(arena *A, const region *r, const sx *row_extent, int vec, const arch_info *const *archs,
                       int narchs, diag_list *dl, const char *at);
#define PLAN_ROW_WARP_MAX 8
/* A shape bucket as an arch row's plan function sees it (docs/plan.md,
 * Shape buckets): the largest GEMM M and N of its calls (INT64_MAX where
 * the bucket leaves that group unbounded, or bounds it as a product) and
 * the representative shapes its plan was searched on. */
typedef struct plan_bucket {
  const char *name;
  int64_t m_max, n_max;
  int nshapes;
  const int64_t (*shapes)[3];
} plan_bucket;
/* The sm90a contraction skeleton's plan (algo_choice "tma_wgmma",
 * templates/sm90a_contraction.cuh) on arch `ai`: a 128-row tile of two
 * consumer warpgroups, BK one 128-byte swizzle row, the N tile and the ring
 * depth searched under the shared-memory and register STOP rules
 * (docs/plan.md).  NULL with E1703 when no candidate fits.  For a shape
 * bucket `b` (NULL: the instance's default) two more STOP rules apply,
 * `padding` and `grid`; when they leave no candidate the result is NULL
 * with no diagnostic (the bucket keeps its sm80 kernel on sm90a), and
 * `*why_none` (when not NULL) says why. */
plan_result *plan_sm90a(arena *A, const region *r, const pc_analysis *a, const arch_info *ai, const plan_bucket *b,
                        const char **why_none, diag_list *dl, const char *at);
/* The same plan for the skeleton's gathering producer (algo_choice
 * "cp_async_wgmma", templates/sm90a_gather_contraction.cuh): the same
 * candidates and STOP rules; only the algo_choice differs. */
plan_result *plan_sm90a_gather(arena *A, const region *r, const pc_analysis *a, const arch_info *ai,
                               const plan_bucket *b, const char **why_none, diag_list *dl, const char *at);
/* The sm90a attention skeleton's plan (algo_choice "wgmma_softmax",
 * templates/sm90a_attention.cuh) on arch `ai`: 64 query rows (one
 * warpgroup), the key tile by the shared-memory and register STOP rules
 * (docs/plan.md).  Head dims must be 64 or 128 (p_fp32: P stays fp32, fed
 * as hi + lo halves).  NULL with E1703 when no candidate fits. */
plan_result *plan_sm90a_attention(arena *A, const region *r1, const pc_analysis *a1, int D, int DV, bool p_fp32,
                                  const arch_info *ai, diag_list *dl, const char *at);
/* registers a thread of the sm90a attention skeleton needs beyond its
 * accumulators and P's fragments (row state, addresses, epilogue) */
#define PLAN_SM90A_ATT_BASE 72
/* the sm90a attention row's setmaxnreg budgets: the producer warpgroup's,
 * and a consumer thread's ((65536 - 128 x 40) / 256 rounded down to
 * setmaxnreg's granule of 8, as the contraction row's; with 384 threads
 * ptxas gives a thread at most 168 at launch, so .inc only adds) */
#define PLAN_SM90A_ATT_PRODUCER_REGS 40
#define PLAN_SM90A_ATT_CONSUMER_REGS 232
/* the K/V ring's stages */
#define PLAN_SM90A_ATT_STAGES 2
/* setmaxnreg's budgets: the producer warpgroup's registers and a consumer
 * thread's ((65536 - 128 x 40) / 256 rounded down to setmaxnreg's granule
 * of 8), and the registers a consumer thread needs beyond its accumulators
 * (descriptors, ring state, epilogue; the estimate) */
#define PLAN_SM90A_PRODUCER_REGS 40
#define PLAN_SM90A_CONSUMER_REGS 232
#define PLAN_SM90A_CONSUMER_BASE 104
/* Measured times that re-rank plans (dlcgen --calibrate FILE.csv,
 * docs/plan.md#calibration): per arch and plan, the geometric mean of
 * actual_us / estimate_us over the rows of a dlc-bench CSV that have both.
 * The search multiplies a candidate's estimates on an arch by its plan's
 * factor there (1 for a plan with no rows).  A plan is its tile, stages
 * and warps: rows of any raster group pool into one factor. */
typedef struct plan_calib_entry {
  dlc_arch arch;
  int tile[3], stages, warps_m, warps_n, raster_group; /* raster_group: of the first row (not a key) */
  double factor;
  int rows;
} plan_calib_entry;
typedef struct plan_calibration {
  int n;
  plan_calib_entry *e;
} plan_calibration;
/* Reads a dlc-bench CSV (spec §13 header).  E0001 when unreadable, E0105
 * for a missing header or a malformed row, at FILE:LINE.  Rows without
 * actual_us or estimate_us, or of an arch or plan text it does not know,
 * are skipped. */
bool plan_calibration_read(arena *A, const char *path, plan_calibration *out, diag_list *dl);
/* The split-K slice counts a bucket's search tries beside no split (docs/plan.md#split-k). */
#define PLAN_SPLIT_MAX 16
/* plan_choose_multi with calibration factors (NULL: none). */
plan_result *plan_choose_calibrated(arena *A, const region *r, const pc_analysis *a, const arch_info *const *archs,
                                    int narchs, const cJSON *pinned, int nshapes, const int64_t (*shapes)[3],
                                    const plan_calibration *cal, diag_list *dl, const char *at);
/* plan_choose_calibrated for a shape bucket: with `split`, the search also
 * tries each candidate with its K range split in 2, 4, 8 and 16 slices
 * (when plan_split_legal), since a bucket's call may pass a workspace. */
plan_result *plan_choose_bucket(arena *A, const region *r, const pc_analysis *a, const arch_info *const *archs,
                                int narchs, int nshapes, const int64_t (*shapes)[3], const plan_calibration *cal,
                                bool split, diag_list *dl, const char *at);
/* Whether a region's contraction can be split along K: one K axis (the
 * slices are ranges of whole k-tiles of it). */
bool plan_split_legal(const region *r, const pc_analysis *a);

/* What every plan must hold on every arch it is built for (a skeleton's
 * verify_plan): its skeleton's algo_choice, its warps as its threads, and
 * shared memory and registers within each arch's limits. */
bool plan_fits_archs(const sched_plan *p, dlc_algo algo, const arch_info *const *archs, int na, diag_list *dl);
/* The slices a split plan runs for a K of `kx` elements: the k-tiles
 * ceil(kx / BK) cut into runs of ceil(k-tiles / split_k), one slice each
 * (so no slice is empty; 1 when K is empty).  *ktp: k-tiles a slice. */
int64_t plan_split_slices(const sched_plan *p, int64_t kx, int64_t *ktp);
/* The representative {M, N, K} shapes the search ranks on when given none
 * (docs/plan.md); returns their count. */
int plan_default_shapes(const int64_t (**out)[3]);
/* Spec §11 estimate for one plan and shape (batch 1), in microseconds
 * (docs/plan.md). */
double plan_time_us(const sched_plan *p, const arch_info *ai, int64_t M, int64_t N, int64_t K, int elem_bytes);
/* The §11 model on one shape, with what the benchmark's CSV reports
 * (bench/dlc-bench --model). */
typedef struct plan_shape_estimate {
  double us;               /* estimated time */
  double occ;              /* FLOPs / (peak x time): padding, waves and unhidden barriers */
  double dram_bytes;       /* operands (per wave, the raster order) and output */
  double flops;            /* 2 M N K batch */
  int ctas_per_sm;
  bool memory_bound;
} plan_shape_estimate;
plan_shape_estimate plan_estimate(const sched_plan *p, const arch_info *ai, int64_t M, int64_t N, int64_t K,
                                  int64_t batch, int elem_bytes, int out_bytes);
/* The chosen plan in the shape of spec §8.1, plus "estimate" and
 * "candidates". */
cJSON *plan_dump(const plan_result *r);
/* The first of `n` pinned plan objects whose "arch" is `arch` (sm90 and
 * sm90a match), else the first without an "arch", else NULL. */
const cJSON *plan_pinned_for(cJSON *const *plans, int n, const char *arch);
/* The spec §11 constants, for docs and tests. */
#define PLAN_SMEM_FRACTION 0.8
#define PLAN_MAX_REGS 255
/* streaming_softmax keeps Q's fragments in registers up to this many per
 * thread (D <= 64) */
#define PLAN_ATT_Q_REGS 16
/* The raster groups the search tries, the first the default (docs/plan.md). */
#define PLAN_RASTER_DEFAULT 8
#define PLAN_RASTER_MAX 64

#endif
