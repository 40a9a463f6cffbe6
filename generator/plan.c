/* Schedule Plan (spec §8, §11; seed 001 §5): the tile, warp and pipeline
 * choices that parameterize the sm80 contraction skeleton
 * (templates/sm80_contraction.cuh) for one region on one arch.
 *
 * A plan is BM x BN x BK (the CTA tile), STAGES (the cp.async ring),
 * WARPS_M x WARPS_N warps (each a warp tile of m16n8k16 MMAs) and VEC (the
 * width of one global->shared copy).  Everything else in the §8.1 object
 * (bind, cache, barrier model, ...) is fixed by the skeleton or read off the
 * region and its Poly Core analysis, and is reported so that a reader sees
 * what the kernel does.
 *
 * A pinned plan (manifest "plans": [{...}]) is read by plan_from_json(),
 * checked by plan_validate() and used as given.  Otherwise plan_choose()
 * walks a fixed space of 20 candidates from small to large, drops those that
 * hit a STOP rule of §11 (shared memory over 80% of the per-block limit,
 * registers that leave one CTA per SM, a vector width below the widest the
 * operands allow) and keeps the one whose estimated time, by the §11 model
 * (plan_time_us), has the smallest mean over the representative shapes (the
 * time to run each of them once).  docs/plan.md documents the model and its constants. */
#include "plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "arch.h"
#include "jsonutil.h"

/* ---- arch table --------------------------------------------------------------------- */

/* One row per arch the manifest accepts.  Peaks are dense (no structured
 * sparsity) fp16/bf16 tensor math with fp32 accumulation, and DRAM bandwidth,
 * of the reference part; limits are the compute capability's, from the CUDA
 * C++ Programming Guide ("Technical Specifications per Compute Capability").
 * Every limit row keeps 1 KB of shared memory per resident block for the
 * system (per-SM capacity minus per-block maximum).  tc_flop_per_clk_sm is
 * the dense tensor rate per SM and clock (peak / (SMs x boost clock)). */
static const arch_info ARCHS[] = {
    /* A100 SXM4 80GB.  NVIDIA A100 Tensor Core GPU datasheet: FP16 Tensor
     * Core 312 TFLOPS (624 with sparsity), 2,039 GB/s HBM2e.  NVIDIA A100
     * Tensor Core GPU Architecture whitepaper: 108 SMs, 1024 dense FP16 FMA
     * per clock per SM.  Compute capability 8.0: 164 KB shared memory per SM,
     * 163 KB per block, 64K registers, 2048 threads and 32 blocks per SM. */
    {"sm80", 80, "A100 SXM4 80GB", 108, 312.0, 2039.0, 166912, 167936, 65536, 2048, 32, 1024, 2048, 128},
    /* GeForce RTX 3090.  NVIDIA Ampere GA102 GPU Architecture whitepaper:
     * 82 SMs, peak FP16 Tensor TFLOPS with FP32 accumulate 71 (142 with
     * sparsity), 936 GB/s GDDR6X, 1695 MHz boost.  Compute capability 8.6:
     * 100 KB per SM, 99 KB per block, 1536 threads and 16 blocks per SM. */
    {"sm86", 86, "GeForce RTX 3090", 82, 71.0, 936.0, 101376, 102400, 65536, 1536, 16, 1024, 512, 128},
    /* GeForce RTX 4090.  NVIDIA Ada GPU Architecture whitepaper: 128 SMs,
     * peak FP16 Tensor TFLOPS with FP32 accumulate 165.2 (330.4 with
     * sparsity), 1008 GB/s GDDR6X, 2520 MHz boost.  Compute capability 8.9:
     * 100 KB per SM, 99 KB per block, 1536 threads and 24 blocks per SM. */
    {"sm89", 89, "GeForce RTX 4090", 128, 165.2, 1008.0, 101376, 102400, 65536, 1536, 24, 1024, 512, 128},
    /* H100 SXM5.  NVIDIA H100 Tensor Core GPU datasheet: FP16 Tensor Core
     * 1,979 TFLOPS with sparsity (989 dense), 3.35 TB/s HBM3.  NVIDIA H100
     * Tensor Core GPU Architecture whitepaper: 132 SMs on SXM5, twice the
     * A100 SM's dense MMA rate per clock.  Compute capability 9.0: 228 KB
     * per SM, 227 KB per block, 2048 threads and 32 blocks per SM. */
    {"sm90a", 90, "H100 SXM5", 132, 989.0, 3350.0, 232448, 233472, 65536, 2048, 32, 1024, 4096, 128},
    /* B200.  NVIDIA HGX B200 datasheet: FP16/BF16 Tensor Core 4.5 PFLOPS
     * per GPU with sparsity (2.25 dense), 8 TB/s HBM3e per GPU; 148 SMs as
     * the CUDA runtime reports them (multiProcessorCount).  Compute
     * capability 10.0: 228 KB per SM, 227 KB per block, 2048 threads and 32
     * blocks per SM.  NVIDIA publishes no per-clock rate for sm_100:
     * 8192 FLOP/clk/SM is the dense peak over 148 SMs at about 1.86 GHz. */
    {"sm100", 100, "B200", 148, 2250.0, 8000.0, 232448, 233472, 65536, 2048, 32, 1024, 8192, 128},
    /* GeForce RTX 5090.  NVIDIA RTX Blackwell GPU Architecture whitepaper:
     * 170 SMs, peak FP16 Tensor TFLOPS with FP32 accumulate 209.5 (419 with
     * sparsity), 1792 GB/s GDDR7, 2407 MHz boost.  Compute capability 12.0:
     * 100 KB per SM, 99 KB per block, 1536 threads and 32 blocks per SM. */
    {"sm120", 120, "GeForce RTX 5090", 170, 209.5, 1792.0, 101376, 102400, 65536, 1536, 32, 1024, 512, 128},
};

_Static_assert(sizeof ARCHS / sizeof *ARCHS == ARCH__COUNT, "one limits row per arch.def entry");

const arch_info *plan_arch(const char *name) {
  dlc_arch a;
  if (!arch_parse(name, &a)) return NULL;
  return &ARCHS[a];
}

const arch_info *plan_arch_of(dlc_arch a) { return a >= 0 && a < ARCH__COUNT ? &ARCHS[a] : NULL; }

dlc_arch plan_arch_id(const arch_info *ai) { return (dlc_arch)(ai - ARCHS); }

/* ---- resources: shared memory, registers, CTAs per SM -------------------------------- */

/* Registers per thread beyond the accumulators and one k-step's fragments:
 * addresses, loop state, predicates.  Calibrated on the hand-instantiated
 * 128x128x32, 3-stage, 2x2-warp fp16 kernel: 128 + 16 + 16 + 56 = 216, what
 * ptxas reports (nvcc 13, sm_80, 0 spills). */
#define REG_OVERHEAD 56
/* The same for the streaming_softmax skeleton (softmax state, mask and key
 * tail arithmetic, the K/V ring's addresses).  Calibrated on the default
 * manifest's attention kernels (nvcc 13; D = 64 with 128 keys per step and
 * D = 128 with 32): the most registers any of sm_80/sm_90a/sm_100/sm_120
 * used beyond the counted fragments, when allowed 255, was 103. */
#define ATT_REG_OVERHEAD 104
/* The same for a 16-key step: one n16 pair of S, one P fragment and one V
 * k-step a tile, where ptxas keeps far less in flight.  Calibrated on
 * D = 256 (nvcc 13, sm_80): 226 registers, 62 beyond the counted fragments,
 * 0 spills (32 keys a step spilled there). */
#define ATT_REG_OVERHEAD_K16 64

typedef struct plan_res {
  int smem, regs, warps, threads;
  int ctas_smem, ctas_regs, ctas_threads, ctas;
} plan_res;

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

static int smem_bytes(const sched_plan *p, int elem) {
  int ring = p->stages * (p->tile[0] + p->tile[1]) * p->tile[2] * elem;
  int stage = p->tile[0] * (p->tile[1] + 8) * 4; /* the epilogue's fp32 staging tile */
  return ring > stage ? ring : stage;
}

/* acc[MT][NTL][4] floats, af[MT][4] and bfr[NTL][2] fragments, overhead
 * (plus the region's extra index arithmetic); rounded to the allocation
 * unit of 8 per thread. */
static int regs_estimate(int wm_elems, int wn_elems, int addr_regs) {
  int mt = ceil_div(wm_elems, 16), ntl = ceil_div(wn_elems, 8);
  int r = mt * ntl * 4 + 4 * mt + 2 * ntl + REG_OVERHEAD + addr_regs;
  return ceil_div(r, 8) * 8;
}

static bool shape_ok(const sched_plan *p) {
  return p->tile[0] > 0 && p->tile[1] > 0 && p->tile[2] > 0 && p->warps_m > 0 && p->warps_n > 0 &&
         p->tile[0] <= 4096 && p->tile[1] <= 4096 && p->tile[2] <= 4096 && p->warps_m <= 64 && p->warps_n <= 64 &&
         p->stages > 0 && p->stages <= 64;
}

/* fp32 operands (tf32 mma m16n8k8) keep more than the fragments counted
 * above: the hoisted fragment addresses (8 per M/N-contiguous operand, one
 * per k8 step for a K-contiguous one) and the values between their
 * ld.shared and cvt.rna.  Calibrated with nvcc 13.0: the fp32 GEMMs'
 * 128x128 tiles with 64x64 warp tiles (estimated 216 without it) take
 * 230-242 registers on sm_80 and spill 4 to 72 bytes at 255 on sm_120
 * (v1, v2), so they must not pass the register STOP rule; the 32x64 warp
 * tiles take 142-182 (0 spills). */
#define TF32_REG_EXTRA 40

static plan_res resources(const sched_plan *p, int elem, const arch_info *ai) {
  plan_res r = {0};
  if (!shape_ok(p)) return r;
  r.smem = smem_bytes(p, elem);
  r.warps = p->warps_m * p->warps_n;
  r.threads = 32 * r.warps;
  r.regs = regs_estimate(ceil_div(p->tile[0], p->warps_m), ceil_div(p->tile[1], p->warps_n),
                         p->addr_regs + (elem == 4 ? TF32_REG_EXTRA : 0));
  r.ctas_smem = ai->smem_per_sm / (r.smem + ai->smem_reserved_per_block);
  int warps_by_regs = ai->regs_per_sm / (r.regs * 32);
  r.ctas_regs = r.regs > PLAN_MAX_REGS ? 0 : warps_by_regs / r.warps;
  r.ctas_threads = ai->max_threads_per_sm / r.threads;
  r.ctas = ai->max_ctas_per_sm;
  if (r.ctas_smem < r.ctas) r.ctas = r.ctas_smem;
  if (r.ctas_regs < r.ctas) r.ctas = r.ctas_regs;
  if (r.ctas_threads < r.ctas) r.ctas = r.ctas_threads;
  if (r.smem > ai->smem_per_block) r.ctas = 0;
  return r;
}

/* ---- the cost model (spec §11) -------------------------------------------------------- */

/* Overlap of loads with MMAs by ring depth: the wait before each k-tile is
 * exposed less the more tiles are in flight. */
static double stage_eff(int stages) {
  static const double eff[] = {0, 0.5, 0.80, 0.90, 0.95};
  if (stages < 1) return 0.5;
  return stages < 5 ? eff[stages] : 0.95;
}

/* The tensor rate of an operand type as a share of the fp16 one in the
 * table: fp32 operands run in TF32, at half the dense fp16 rate on every
 * listed arch (A100 datasheet: TF32 156 TFLOPS against FP16 312; H100 SXM
 * datasheet: 494.7 against 989.4, dense; HGX B200: 1.1 PFLOPS against 2.25,
 * dense; the GeForce RTX 3090, 4090 and 5090 whitepapers: TF32 at half the
 * FP16-with-FP32-accumulate rate). */
static double tc_share(int elem) { return elem == 4 ? 0.5 : 1.0; }

/* Fragment loads: per 16-deep k-step a warp reads (WM + WN) x 16 elements with
 * ldmatrix and the CTA writes (BM + BN) x 16 with cp.async; the MMAs of that
 * step take 2 BM BN 16 / tc_flop_per_clk_sm clocks.  Small warp tiles read
 * more per MMA, and shared memory becomes the limit.  Clocks of one k-step of
 * one CTA with the SM to itself: */
static double kstep_clocks(const sched_plan *p, const arch_info *ai, int elem, double *t_mma) {
  double BM = p->tile[0], BN = p->tile[1];
  double WM = BM / p->warps_m, WN = BN / p->warps_n;
  double mma = 2.0 * BM * BN * 16 / (ai->tc_flop_per_clk_sm * tc_share(elem));
  double smem = (p->warps_m * p->warps_n * (WM + WN) + BM + BN) * 16 * elem / ai->smem_bytes_per_clk_sm;
  if (t_mma) *t_mma = mma;
  return mma > smem ? mma : smem;
}

static double frag_eff(const sched_plan *p, const arch_info *ai, int elem) {
  double mma, t = kstep_clocks(p, ai, elem, &mma);
  return mma / t;
}

/* Each k-iteration (BK / 16 k-steps) of a CTA ends in a wait on the ring and a
 * barrier, then ldmatrix latency before the first MMA: about SYNC_CLOCKS in
 * which that CTA issues nothing.  A second resident CTA fills the gap; one CTA
 * alone keeps the SM busy t_k / (t_k + SYNC_CLOCKS) of the time. */
#define SYNC_CLOCKS 128.0

/* Fraction of the SM's throughput that `ctas` resident CTAs use. */
static double sm_busy(const sched_plan *p, const arch_info *ai, int elem, int64_t ctas) {
  double t_k = kstep_clocks(p, ai, elem, NULL) * p->tile[2] / 16;
  double b = (double)ctas * t_k / (t_k + SYNC_CLOCKS);
  return b < 1 ? b : 1;
}

/* L2-to-SM bandwidth as a multiple of DRAM bandwidth, for the traffic every
 * tile loads (A100: 5120 B/clk of L2 read bandwidth at 1.41 GHz is 7.2 TB/s,
 * 3.5x its 2.04 TB/s of DRAM).  Applied to every arch. */
#define L2_BW_FACTOR 3.5

/* An SM alone draws more than its 1/SMs share of the bandwidth (its
 * outstanding cp.async requests, not the memory system, bound it): up to
 * SM_BW_FACTOR shares.  So a grid that keeps a quarter of the SMs busy can
 * reach full bandwidth. */
#define SM_BW_FACTOR 4.0

/* Little's law on one SM: the DRAM bandwidth it draws is at most the bytes
 * its resident CTAs keep in flight (each the stages - 1 k-tiles its ring
 * prefetches) over the loaded DRAM latency.  A model constant, not a
 * measurement here: GPU microbenchmark studies put A100/H100 global-memory
 * latency at roughly 500-700 ns under load. */
#define DRAM_LATENCY_NS 600.0

static double pipeline_eff(const sched_plan *p, const arch_info *ai, int elem) {
  return stage_eff(p->stages) * frag_eff(p, ai, elem);
}

typedef struct shape_est {
  double us, occ, dram_bytes, l2_bytes;
  bool memory_bound;
} shape_est;

static int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The tile at position t of the CTA order within one batch slice of tm x tn
 * tiles: groups of G M tiles, M fastest within a group, so that consecutive
 * CTAs share B column panels and a wave touches few A row panels.  G = 1 is
 * plain row order (N fastest).  The kernel (templates/sm80_contraction.cuh)
 * decodes blockIdx.x the same way. */
static void raster_tile(int64_t t, int64_t tm, int64_t tn, int64_t G, int64_t *mt, int64_t *nt) {
  int64_t per = G * tn, g = t / per, first = g * G, gm = tm - first < G ? tm - first : G, r = t - g * per;
  *mt = first + r % gm, *nt = r / gm;
}

/* Above this many tiles operand_bytes() stops walking them and takes the
 * cache-less tile-reuse bound. */
#define RASTER_WALK_TILES ((int64_t)1 << 24)

/* DRAM bytes of the operands: tiles are issued in the plan's raster order
 * (raster_tile, then batch), a wave of `slots` concurrent tiles sweeps k in
 * rough lockstep, so each A row-panel and B column-panel that the wave
 * touches is read from DRAM once per wave and shared by its tiles through
 * L2.  This lies between the ideal (each operand once) and the cache-less
 * tile-reuse bound elem (M K ceil(N/BN) + K N ceil(M/BM)). */
static double operand_bytes(int64_t M, int64_t N, int64_t K, int64_t batch, int BM, int BN, int G, int64_t slots,
                            int elem) {
  int64_t tm = ceil_div64(M, BM), tn = ceil_div64(N, BN), per_b = tm * tn, T = per_b * batch;
  int64_t *seen = T <= RASTER_WALK_TILES ? calloc((size_t)(tm + tn), sizeof *seen) : NULL;
  if (!seen) return (double)elem * (double)K * ((double)M * (double)tn + (double)N * (double)tm) * (double)batch;
  double elems = 0;
  int64_t stamp = 0, last_b = -1;
  for (int64_t s = 0; s < T; s++) {
    int64_t b = s / per_b, mt, nt;
    if (s % slots == 0 || b != last_b) stamp++, last_b = b; /* a new wave or batch slice: new panels */
    raster_tile(s - b * per_b, tm, tn, G < 1 ? 1 : G, &mt, &nt);
    if (seen[mt] != stamp) seen[mt] = stamp, elems += (double)K * (double)min64(BM, M - mt * BM);
    if (seen[tm + nt] != stamp) seen[tm + nt] = stamp, elems += (double)K * (double)min64(BN, N - nt * BN);
  }
  free(seen);
  return elems * elem;
}

/* time = max(FLOPs / (peak occ eff), Bytes / (bw occ_bw)).  occ follows the
 * waves: a full wave runs `ctas` tiles per SM; the last, partial one spreads
 * its tiles over the SMs first.  Each SM's tensor throughput is shared by its
 * resident tiles, who keep it sm_busy() busy.  So occ counts tile padding
 * (M, N and K rounded up to the tile), wave quantization and the barriers
 * one CTA cannot hide; occ_bw is the time-weighted mean over the SMs of
 * the bandwidth each draws (SM_BW_FACTOR shares when busy, less when its
 * CTAs keep too few bytes in flight), at most 1.
 * Bytes are checked at two levels: DRAM (operand_bytes, shared per wave) and
 * L2 (the tile-reuse bytes elem (M K ceil(N/BN) + K N ceil(M/BM)), which every
 * tile loads through L2, at L2_BW_FACTOR times the DRAM bandwidth). */
/* The gap a split plan's second kernel adds: its launch behind the first
 * on the stream.  A model constant, not a measurement here (back-to-back
 * launches on one stream are commonly quoted at 1-3 us apart). */
#define SPLIT_LAUNCH_US 1.5

int64_t plan_split_slices(const sched_plan *p, int64_t kx, int64_t *ktp) {
  int64_t S = p->split_k > 1 ? p->split_k : 1, kt = kx > 0 ? ceil_div64(kx, p->tile[2]) : 0;
  int64_t per = kt > 0 ? ceil_div64(kt, S) : 1;
  if (ktp) *ktp = per;
  return kt > 0 ? ceil_div64(kt, per) : 1;
}

static shape_est model(const sched_plan *p, const arch_info *ai, int64_t M, int64_t N, int64_t K, int64_t batch,
                       int elem, int out_elem) {
  shape_est e = {0, 0, 0, 0, false};
  if (M <= 0 || N <= 0 || K <= 0 || batch <= 0) return e;
  if (p->split_k > 1) {
    /* split-K: the slices are the batch of a GEMM over one slice's k-tiles
     * that stores fp32 tiles (the partials, whole tiles); then the second
     * kernel reads them all and writes the output once */
    sched_plan q = *p;
    q.split_k = 1;
    int64_t ktp, sn = plan_split_slices(p, K, &ktp);
    int64_t Mp = ceil_div64(M, p->tile[0]) * p->tile[0], Np = ceil_div64(N, p->tile[1]) * p->tile[1];
    shape_est a = model(&q, ai, M, N, ktp * p->tile[2], batch * sn, elem, 4);
    double ws = (double)Mp * (double)Np * (double)batch * (double)sn * 4;
    a.dram_bytes += ws - (double)M * (double)N * (double)batch * (double)sn * 4; /* whole tiles */
    double red = ws + (double)M * (double)N * (double)batch * out_elem;
    e.us = a.us + red / (ai->peak_gbs * 1e9) * 1e6 + SPLIT_LAUNCH_US;
    e.dram_bytes = a.dram_bytes + red;
    e.l2_bytes = a.l2_bytes + red;
    e.occ = 2.0 * (double)M * (double)N * (double)K * (double)batch / (ai->peak_tflops * 1e12 * e.us * 1e-6);
    e.memory_bound = a.memory_bound;
    return e;
  }
  plan_res r = resources(p, elem, ai);
  if (r.ctas < 1) {
    e.us = INFINITY;
    return e;
  }
  int BM = p->tile[0], BN = p->tile[1], BK = p->tile[2];
  int64_t T = ceil_div64(M, BM) * ceil_div64(N, BN) * batch;
  int64_t sms = ai->sm_count, slots = sms * r.ctas;
  double peak = ai->peak_tflops * 1e12 * tc_share(elem), p_sm = peak / (double)sms;
  double tile_flops = 2.0 * BM * BN * (double)(ceil_div64(K, BK) * BK);
  int64_t nfull = T / slots, rem = T % slots;
  /* the share of the DRAM bandwidth an SM with c resident CTAs draws, in
   * units of its 1/SMs share: SM_BW_FACTOR, or less by Little's law */
  double inflight = (double)(p->stages - 1) * (BM + BN) * BK * elem;
  double share_Bps = ai->peak_gbs * 1e9 / (double)sms;
#define BW_UNITS(c) fmin(SM_BW_FACTOR, (double)(c) * inflight / (DRAM_LATENCY_NS * 1e-9) / share_Bps)
  double t_full = tile_flops * r.ctas / (p_sm * sm_busy(p, ai, elem, r.ctas));
  double t = (double)nfull * t_full, busy_bw = (double)nfull * t_full * (double)sms * BW_UNITS(r.ctas);
  if (rem) {
    int64_t c = ceil_div64(rem, sms);
    double t_rem = tile_flops * (double)c / (p_sm * sm_busy(p, ai, elem, c));
    t += t_rem;
    busy_bw += t_rem * (double)min64(rem, sms) * BW_UNITS(c);
  }
#undef BW_UNITS
  double flops = 2.0 * (double)M * (double)N * (double)K * (double)batch;
  e.occ = flops / (peak * t);
  double occ_bw = busy_bw / ((double)sms * t);
  if (occ_bw > 1) occ_bw = 1;
  double compute_s = flops / (peak * e.occ * pipeline_eff(p, ai, elem));
  double out_bytes = (double)M * (double)N * (double)batch * out_elem;
  e.dram_bytes = operand_bytes(M, N, K, batch, BM, BN, p->raster_group, slots, elem) + out_bytes;
  e.l2_bytes = (double)elem * (double)K * ((double)M * (double)ceil_div64(N, BN) + (double)N * (double)ceil_div64(M, BM)) *
                   (double)batch +
               out_bytes;
  double bw = ai->peak_gbs * 1e9 * occ_bw;
  double memory_s = fmax(e.dram_bytes / bw, e.l2_bytes / (L2_BW_FACTOR * bw));
  e.memory_bound = memory_s > compute_s;
  e.us = (e.memory_bound ? memory_s : compute_s) * 1e6;
  return e;
}

double plan_time_us(const sched_plan *p, const arch_info *ai, int64_t M, int64_t N, int64_t K, int elem_bytes) {
  return model(p, ai, M, N, K, 1, elem_bytes, elem_bytes).us;
}

plan_shape_estimate plan_estimate(const sched_plan *p, const arch_info *ai, int64_t M, int64_t N, int64_t K,
                                  int64_t batch, int elem_bytes, int out_bytes) {
  shape_est e = model(p, ai, M, N, K, batch, elem_bytes, out_bytes);
  plan_res r = resources(p, elem_bytes, ai);
  plan_shape_estimate o = {e.us, e.occ, e.dram_bytes, 2.0 * (double)M * (double)N * (double)K * (double)batch,
                           r.ctas, e.memory_bound};
  return o;
}

/* ---- the region's side of the plan ----------------------------------------------------- */

static const rexpr *operand_read(const rexpr *e) {
  if (e && e->k == RX_SELECT && !e->a) e = e->b;
  if (e && e->k == RX_UNARY && e->op == TINY_CAST) e = e->a;
  return e && e->k == RX_READ ? e : NULL;
}

/* "conv" when an operand is read through affine offsets (2*h+kh-1),
 * "attention" when more reductions (the softmax) follow the contraction in
 * the region, else "matmul". */
static algo_pattern pattern_of(const region *r, const pc_contraction *c) {
  int nred = 0;
  for (int l = 0; l < r->nlets; l++) nred += r->lets[l].e->k == RX_REDUCE;
  if (nred > 1) return PATTERN_ATTENTION;
  const rexpr *rd[2] = {operand_read(c->lhs_read), operand_read(c->rhs_read)};
  for (int s = 0; s < 2; s++)
    for (int d = 0; rd[s] && d < rd[s]->nmap; d++)
      if (!sx_as_var(rd[s]->map[d])) return PATTERN_CONV;
  return PATTERN_MATMUL;
}

static int operand_elem(const region *r, const pc_contraction *c) {
  return c->present && c->lhs >= 0 ? dtype_bytes(r->in[c->lhs].dt) : 2;
}

static int out_elem(const region *r) { return r->nyields ? dtype_bytes(r->yields[0].cast) : 2; }

/* The widest copy an operand allows: 16 bytes along its contiguous axis, one
 * element when no single axis is contiguous (a gather). */
static int vec_legal(const region *r, const pc_contraction *c) {
  int elem = operand_elem(r, c), v = 16 / elem;
  if (v > 8) v = 8;
  if (c->lhs_contig < 0 || c->rhs_contig < 0) v = 1;
  return v;
}

/* The tile extent each operand's copies run along (gpuir keeps K-major tiles
 * for operands with no contiguous axis). */
static void contig_extents(const sched_plan *p, const pc_contraction *c, int *ea, int *eb) {
  *ea = (c->lhs_k_contig || c->lhs_contig < 0) ? p->tile[2] : p->tile[0];
  *eb = (c->rhs_k_contig || c->rhs_contig < 0) ? p->tile[2] : p->tile[1];
}

/* The widest of {8,4,2,1} within `legal` that divides both extents. */
static int vec_for_tile(const sched_plan *p, const pc_contraction *c, int legal) {
  int ea, eb;
  contig_extents(p, c, &ea, &eb);
  for (int v = legal; v > 1; v /= 2)
    if (ea % v == 0 && eb % v == 0) return v;
  return 1;
}

static const char *vec_axis(arena *A, const pc_contraction *c) {
  const char *a = c->lhs_contig < 0 ? NULL : c->lhs_k_contig ? "k.i.i" : "m.i.i";
  const char *b = c->rhs_contig < 0 ? NULL : c->rhs_k_contig ? "k.i.i" : "n.i.i";
  if (!a && !b) return "none";
  if (!a || !b || strcmp(a, b) == 0) return a ? a : b;
  return arena_printf(A, "%s,%s", a, b);
}

static int64_t group_const_extent(const region *r, const int *ax, int n) {
  int64_t e = 1;
  for (int i = 0; i < n; i++) {
    int64_t v;
    if (!sx_is_int(r->it[ax[i]].size, &v)) return -1;
    e *= v;
  }
  return e;
}

static bool in_group(const int *ax, int n, int i) {
  for (int j = 0; j < n; j++)
    if (ax[j] == i) return true;
  return false;
}

/* predicate_tail: the tiled groups (m, n, k) that hold one of Poly Core's
 * tail axes, unless the group's extent is a constant multiple of the tile. */
static void fill_tails(arena *A, const region *r, const pc_analysis *a, sched_plan *p) {
  const pc_contraction *c = &a->con;
  const int *ax[3] = {c->m_axes, c->n_axes, c->k_axes};
  int nax[3] = {c->nm, c->nn, c->nk};
  static const char *const names[3] = {"m.i.i", "n.i.i", "k.i.i"};
  p->predicate_tail = ARENA_ARRAY(A, const char *, 3);
  p->npred = 0;
  for (int g = 0; g < 3; g++) {
    bool tail = false;
    for (int t = 0; t < a->ntail && !tail; t++)
      for (int i = 0; i < r->niters + r->nred; i++)
        if (strcmp(r->it[i].name, a->tail_axes[t]) == 0 && in_group(ax[g], nax[g], i)) tail = true;
    int64_t ext = group_const_extent(r, ax[g], nax[g]);
    if (tail && ext > 0 && ext % p->tile[g] == 0) tail = false;
    if (tail) p->predicate_tail[p->npred++] = names[g];
  }
}

static void fill_async(sched_plan *p) {
  p->async_enable = p->stages > 2;
  p->prefetch_depth = p->stages - 1;
  p->epilogue_overlap = false;
}

/* Index arithmetic beyond a GEMM's: each extra axis of a flattened M, N, K
 * or batch group is a division and a remainder (once per CTA where an
 * operand walks its K axes, but the walk's counter, its per-chunk rests
 * and guard rests stay live), and a guarded (padded) operand adds its
 * predicate.  Calibrated on the conv 3x3 kernels (nvcc 13, 0 spills on
 * every arch): with 64x64 warp tiles the v8 kernels take 239-244 registers
 * on sm_80, sm_90a, sm_100 and sm_120 (the estimate: 160 counted + 56 +
 * 32 = 248); 64x128 tiles with 32x64 warp tiles took 174-176 on sm_80
 * (estimated 176). */
static int addr_regs(const pc_contraction *c) {
  int axes = c->nm + c->nn + c->nk + c->nb;
  int extra = axes > 3 ? 6 * (axes - 3) : 0;
  if (c->lhs_read && c->lhs_read->k == RX_SELECT) extra += 8;
  if (c->rhs_read && c->rhs_read->k == RX_SELECT) extra += 8;
  return extra;
}

/* Everything but the tile, stages, warps and vec: from the skeleton, the
 * region and the analysis. */
static void fill_defaults(arena *A, const region *r, const pc_analysis *a, sched_plan *p) {
  const pc_contraction *c = &a->con;
  memset(p, 0, sizeof *p);
  p->arch = ARCH_NONE;
  p->tile[0] = 128, p->tile[1] = 128, p->tile[2] = 32;
  p->stages = 3;
  p->warps_m = p->warps_n = 2;
  p->elem_bytes = operand_elem(r, c);
  p->addr_regs = addr_regs(c);
  p->vec_axis = vec_axis(A, c);
  p->pattern = pattern_of(r, c);
  p->algo = pattern_algo(p->pattern);
  p->a_swizzle = p->b_swizzle = true;
  p->c_stride = CSTRIDE_ROW;
  p->barrier_model = BARRIER_CP_ASYNC_GROUP;
  p->raster_group = PLAN_RASTER_DEFAULT;
  p->split_k = 1;
  p->cache_tensor[0] = c->lhs >= 0 ? r->in[c->lhs].name : "A";
  p->cache_tensor[1] = c->rhs >= 0 ? r->in[c->rhs].name : "B";
  p->batched = c->nb > 0;
  p->epilogue = ARENA_ARRAY(A, const char *, r->nlets + 1);
  int last = -1;
  for (int l = 0; l < r->nlets; l++)
    if (r->lets[l].post_reduce) p->epilogue[p->nepi++] = r->lets[l].name, last = l;
  p->edges = ARENA_ARRAY(A, plan_edge, 1);
  if (r->acc_let >= 0 && last >= 0)
    p->edges[p->nedges++] = (plan_edge){r->lets[r->acc_let].name, r->lets[last].name, BUF_REG, 0};
  fill_async(p);
}

/* ---- validation -------------------------------------------------------------------------- */

static const char *key_at(arena *A, const char *at, const char *key) {
  return at && *at ? arena_printf(A, "%s.%s", at, key) : key;
}

bool plan_validate(const sched_plan *p, const region *r, const pc_analysis *a, const arch_info *ai, diag_list *dl,
                   const char *at) {
  arena A;
  arena_init(&A);
  int n0 = dl->nerrors;
  const pc_contraction *c = &a->con;
  if (!c->present) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "region %s has no contraction for the skeleton to tile", r->name);
    arena_free(&A);
    return false;
  }
  int elem = operand_elem(r, c);
  int BM = p->tile[0], BN = p->tile[1], BK = p->tile[2];
  bool dims_ok = true;
  if (BM < 16 || BN < 16 || BK < 16 || BM > 1024 || BN > 1024 || BK > 1024) {
    diag_report(dl, D_PLAN_SCHEMA, key_at(&A, at, "tile"), "Use tile sizes between 16 and 1024.",
                "tile [%d, %d, %d] is out of range", BM, BN, BK);
    dims_ok = false;
  }
  if (p->raster_group < 1 || p->raster_group > PLAN_RASTER_MAX)
    diag_report(dl, D_PLAN_SCHEMA, key_at(&A, at, "raster.group_m"), "Use a raster group of 1 to 64 M tiles.",
                "raster.group_m = %d is out of range", p->raster_group);
  if (p->split_k > PLAN_SPLIT_MAX || (p->split_k > 1 && !plan_split_legal(r, a)))
    diag_report(dl, D_PLAN_UNSUPPORTED, key_at(&A, at, "split_k"), NULL,
                "split_k = %d: the skeleton splits one K axis in at most %d slices (the region has %d K axes)",
                p->split_k, PLAN_SPLIT_MAX, c->nk);
  if (p->stages < 2 || p->stages > 4)
    diag_report(dl, D_PLAN_SCHEMA, key_at(&A, at, "stages"), "Use 2, 3 or 4 stages.",
                "stages = %d; the cp.async ring of the sm80 skeleton takes 2 to 4", p->stages);
  if (p->warps_m < 1 || p->warps_m > 8 || p->warps_n < 1 || p->warps_n > 8) {
    diag_report(dl, D_PLAN_SCHEMA, key_at(&A, at, "warp_tile"), "Use 1 to 8 warps along each of M and N.",
                "the warp grid is %d x %d", p->warps_m, p->warps_n);
    dims_ok = false;
  } else if (32 * p->warps_m * p->warps_n > 1024) {
    diag_report(dl, D_PLAN_SCHEMA, key_at(&A, at, "warp_tile"), "Use at most 32 warps (1024 threads) per CTA.",
                "%d x %d warps are %d threads", p->warps_m, p->warps_n, 32 * p->warps_m * p->warps_n);
    dims_ok = false;
  }
  if (dims_ok) {
    if (BM % p->warps_m || BN % p->warps_n) {
      diag_report(dl, D_PLAN_MMA, key_at(&A, at, "warp_tile"), NULL,
                  "%d x %d warps do not divide the %d x %d tile evenly", p->warps_m, p->warps_n, BM, BN);
      dims_ok = false;
    } else {
      int WM = BM / p->warps_m, WN = BN / p->warps_n;
      if (WM % 16 || WN % 16 || BK % 16) {
        diag_report(dl, D_PLAN_MMA, key_at(&A, at, WM % 16 || WN % 16 ? "warp_tile" : "tile"), NULL,
                    "warp tile %dx%d with BK = %d: the skeleton needs M and N multiples of 16 (m16 tiles, B "
                    "fragments loaded in pairs of n8) and BK a multiple of 16 (k16)",
                    WM, WN, BK);
        dims_ok = false;
      }
    }
  }
  /* vector width */
  int legal = vec_legal(r, c);
  if (p->vec != 1 && p->vec != 2 && p->vec != 4 && p->vec != 8) {
    diag_report(dl, D_PLAN_VEC, key_at(&A, at, "vectorize.width"), NULL, "width %d is not 1, 2, 4 or 8 elements",
                p->vec);
  } else if (p->vec * elem > 16) {
    diag_report(dl, D_PLAN_VEC, key_at(&A, at, "vectorize.width"), NULL,
                "width %d of %d-byte elements is %d bytes; one cp.async copies at most 16", p->vec, elem,
                p->vec * elem);
  } else if (p->vec > legal) {
    diag_report(dl, D_PLAN_VEC, key_at(&A, at, "vectorize.width"), "Use vectorize.width 1 for this region.",
                "width %d, but operand %s has no contiguous axis among its indices: its elements are gathered one "
                "at a time",
                p->vec, c->lhs_contig < 0 ? p->cache_tensor[0] : p->cache_tensor[1]);
  } else if (BM > 0 && BN > 0 && BK > 0) {
    int ea, eb;
    contig_extents(p, c, &ea, &eb);
    if (ea % p->vec || eb % p->vec)
      diag_report(dl, D_PLAN_VEC, key_at(&A, at, "vectorize.width"), NULL,
                  "width %d does not divide the contiguous tile extents (%d along %s's contiguous axis, %d along "
                  "%s's)",
                  p->vec, ea, p->cache_tensor[0], eb, p->cache_tensor[1]);
  }
  /* resources */
  if (dims_ok && p->stages >= 1) {
    plan_res res = resources(p, elem, ai);
    int limit = (int)(PLAN_SMEM_FRACTION * ai->smem_per_block);
    if (res.smem > limit)
      diag_report(dl, D_PLAN_SMEM, key_at(&A, at, "tile"), NULL,
                  "the plan needs %d bytes of shared memory (max of %d stages x (%d + %d) x %d x %d bytes and the "
                  "%d x %d fp32 staging tile); %s allows %d per block, 80%% of which is %d",
                  res.smem, p->stages, BM, BN, BK, elem, BM, BN + 8, ai->name, ai->smem_per_block, limit);
    if (res.regs > PLAN_MAX_REGS)
      diag_report(dl, D_PLAN_REGS, key_at(&A, at, "warp_tile"), NULL,
                  "warp tile %dx%d needs about %d registers per thread (%d accumulators, fragments and addresses); "
                  "the limit is %d",
                  BM / p->warps_m, BN / p->warps_n, res.regs, ceil_div(BM / p->warps_m, 16) * (BN / p->warps_n / 8) * 4,
                  PLAN_MAX_REGS);
  }
  /* what the sm80 skeleton realizes */
  if (p->prefetch_depth != p->stages - 1)
    diag_report(dl, D_PLAN_UNSUPPORTED, key_at(&A, at, "async.prefetch_depth"),
                "Set prefetch_depth to stages - 1 or leave it out.",
                "prefetch_depth %d with %d stages; the sm80 skeleton's ring prefetches stages - 1 = %d k-tiles",
                p->prefetch_depth, p->stages, p->stages - 1);
  if (p->epilogue_overlap)
    diag_report(dl, D_PLAN_UNSUPPORTED, key_at(&A, at, "async.epilogue_overlap"),
                "Set epilogue_overlap to false; overlap arrives with the sm90 skeleton.",
                "the sm80 skeleton drains the ring before the epilogue and reuses it as the staging tile");
  if (p->barrier_model != BARRIER_CP_ASYNC_GROUP)
    diag_report(dl, D_PLAN_UNSUPPORTED, key_at(&A, at, "barrier_model"), "Use \"cp_async_group\".",
                "barrier_model '%s': the sm80 skeleton synchronizes with cp.async groups", barrier_name(p->barrier_model));
  if (!p->a_swizzle || !p->b_swizzle || p->c_stride != CSTRIDE_ROW)
    diag_report(dl, D_PLAN_UNSUPPORTED, key_at(&A, at, "layout_hints"),
                "Use {\"A_swizzle\": true, \"B_swizzle\": true, \"C_stride\": \"row\"}.",
                "the skeleton always swizzles its shared tiles and stores C by rows");
  /* a pinned plan is the sm80 row's its region pattern names
   * (docs/manifest.md): the other rows' plans (tma_wgmma and
   * cp_async_wgmma on sm90a, the split-K reduction) are the plan stage's
   * own */
  dlc_algo own = pattern_algo(p->pattern);
  if (p->algo != own)
    diag_report(dl, D_PLAN_UNSUPPORTED, key_at(&A, at, "algo_choice"),
                arena_printf(&A,
                             "Use \"%s\", or write \"plans\": \"auto\" (on sm90a the plan stage then picks the "
                             "sm90a kernel itself).",
                             algo_name(own)),
                "algo_choice '%s' cannot be pinned: a pinned plan is the %s skeleton's, and '%s' is planned by "
                "the plan stage alone",
                algo_name(p->algo), algo_name(own), algo_name(p->algo));
  arena_free(&A);
  return dl->nerrors == n0;
}

/* ---- pinned plans -------------------------------------------------------------------------- */

static const char *const PLAN_KEYS[] = {"tile", "stages", "bind", "raster", "warp_tile", "cache", "vectorize",
                                        "predicate_tail", "epilogue", "arch", "layout_hints", "algo_choice",
                                        "local_edges", "async", "barrier_model", NULL};

/* bind of the sm80 skeleton: the only one it realizes.  The M and N tiles
 * share blockIdx.x (up to 2^31 - 1 of them), in the plan's raster order. */
static const char *const BIND[][2] = {
    {"m.o", "block.x"}, {"n.o", "block.x"}, {"b", "block.z"}, {"m.i.o", "warp.y"}, {"n.i.o", "warp.x"}};
/* streaming_softmax: query tiles on x, the batch on y, key tiles streamed
 * by each block, its 4 warps over the query rows */
static const char *const ATT_BIND[][2] = {{"m.o", "block.x"}, {"n.o", "loop"}, {"b", "block.y"}, {"m.i.o", "warp.y"}};

static bool int_item(ju_ctx *c, const cJSON *it, const char *path, int *out) {
  if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble != floor(it->valuedouble) ||
      fabs(it->valuedouble) > 1e6) {
    diag_report(c->dl, D_PLAN_SCHEMA, path, NULL, "expected an integer, found %s",
                cJSON_IsNumber(it) ? "a non-integer number" : ju_type_name(it));
    return false;
  }
  *out = (int)it->valuedouble;
  return true;
}

static bool int_key(ju_ctx *c, const cJSON *obj, const char *key, const char *path, int *out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  return it ? int_item(c, it, ju_path_key(c, path, key), out) : false;
}

static bool string_list(ju_ctx *c, const cJSON *obj, const char *key, const char *path, int *n,
                        const char ***out) {
  const cJSON *arr = ju_array(c, obj, key, path, false);
  if (!arr) return false;
  const char *ap = ju_path_key(c, path, key);
  int cnt = cJSON_GetArraySize(arr), i = 0;
  const char **v = ARENA_ARRAY(c->A, const char *, cnt + 1);
  bool ok = true;
  for (const cJSON *it = arr->child; it; it = it->next, i++) {
    if (!cJSON_IsString(it)) {
      diag_report(c->dl, D_PLAN_SCHEMA, ju_path_idx(c, ap, i), NULL, "expected a string, found %s",
                  ju_type_name(it));
      ok = false;
      continue;
    }
    v[i] = arena_strdup(c->A, it->valuestring);
  }
  if (ok) *n = cnt, *out = v;
  return ok;
}

/* "64x32" */
static bool parse_wxh(const char *s, int *a, int *b) {
  char tail;
  return sscanf(s, "%d x %d%c", a, b, &tail) == 2 || sscanf(s, "%dx%d%c", a, b, &tail) == 2;
}

static void read_bind(ju_ctx *c, const cJSON *b, const char *path) {
  for (const cJSON *it = b->child; it; it = it->next) {
    const char *kp = ju_path_key(c, path, it->string);
    int k = -1;
    for (int i = 0; i < 5; i++)
      if (strcmp(BIND[i][0], it->string) == 0) k = i;
    if (k < 0) {
      diag_report(c->dl, D_PLAN_SCHEMA, kp, "Bind m.o, n.o, b (batch), m.i.o and n.i.o.", "unknown loop '%s' in bind",
                  it->string);
    } else if (!cJSON_IsString(it)) {
      diag_report(c->dl, D_PLAN_SCHEMA, kp, NULL, "a bind target is a string, not %s", ju_type_name(it));
    } else if (strcmp(it->valuestring, BIND[k][1]) != 0) {
      diag_report(c->dl, D_PLAN_UNSUPPORTED, kp, arena_printf(c->A, "Bind %s to %s.", BIND[k][0], BIND[k][1]),
                  "the sm80 skeleton binds %s to %s, not %s", BIND[k][0], BIND[k][1], it->valuestring);
    }
  }
}

static void read_cache(ju_ctx *c, const cJSON *arr, const char *path, const sched_plan *p) {
  static const char *const keys[] = {"tensor", "where", "at", "pingpong", NULL};
  int i = 0;
  for (const cJSON *it = arr->child; it; it = it->next, i++) {
    const char *ip = ju_path_idx(c, path, i);
    if (!cJSON_IsObject(it)) {
      diag_report(c->dl, D_PLAN_SCHEMA, ip, NULL, "a cache entry is an object, not %s", ju_type_name(it));
      continue;
    }
    ju_check_keys(c, it, ip, keys);
    const char *tensor = NULL, *ws = NULL, *as = NULL;
    dlc_cache_where where = CACHE_SMEM;
    dlc_cache_at atk = CACHE_AT_KI;
    bool pp = true;
    ju_string(c, it, "tensor", ip, true, &tensor);
    if (ju_string(c, it, "where", ip, false, &ws)) cache_where_parse(ws, &where);
    if (ju_string(c, it, "at", ip, false, &as)) cache_at_parse(as, &atk);
    ju_bool(c, it, "pingpong", ip, false, &pp);
    if (tensor && strcmp(tensor, p->cache_tensor[0]) != 0 && strcmp(tensor, p->cache_tensor[1]) != 0)
      diag_report(c->dl, D_PLAN_SCHEMA, ju_path_key(c, ip, "tensor"),
                  arena_printf(c->A, "Name an operand of the contraction: %s or %s.", p->cache_tensor[0],
                               p->cache_tensor[1]),
                  "'%s' is not an operand of the contraction", tensor);
    if (where != CACHE_SMEM || atk != CACHE_AT_KI || !pp)
      diag_report(c->dl, D_PLAN_UNSUPPORTED, ip, "Use {\"where\": \"smem\", \"at\": \"k.i\", \"pingpong\": true}.",
                  "the sm80 skeleton stages both operands in a shared-memory ring at k.i");
  }
}

static void read_edges(ju_ctx *c, const cJSON *arr, const char *path, sched_plan *p) {
  static const char *const keys[] = {"from", "to", "buffer", "depth", NULL};
  int n = cJSON_GetArraySize(arr), i = 0;
  plan_edge *e = ARENA_ARRAY(c->A, plan_edge, n + 1);
  int ne = 0;
  for (const cJSON *it = arr->child; it; it = it->next, i++) {
    const char *ip = ju_path_idx(c, path, i);
    if (!cJSON_IsObject(it)) {
      diag_report(c->dl, D_PLAN_SCHEMA, ip, NULL, "a local edge is an object, not %s", ju_type_name(it));
      continue;
    }
    ju_check_keys(c, it, ip, keys);
    plan_edge x = {NULL, NULL, BUF_NONE, 0};
    const char *buf = NULL;
    /* each key is checked, so that every bad one is reported */
    bool ok = ju_string(c, it, "from", ip, true, &x.from);
    ok &= ju_string(c, it, "to", ip, true, &x.to);
    ok &= ju_string(c, it, "buffer", ip, true, &buf);
    if (cJSON_GetObjectItemCaseSensitive(it, "depth")) ok &= int_key(c, it, "depth", ip, &x.depth);
    if (buf && (!buffer_parse(buf, &x.buffer) || x.buffer == BUF_GMEM)) {
      diag_report(c->dl, D_PLAN_SCHEMA, ju_path_key(c, ip, "buffer"), "Use \"reg\" or \"smem_ring\".",
                  "unknown buffer '%s'", buf);
      ok = false;
    }
    if (ok) e[ne++] = x;
  }
  p->edges = e, p->nedges = ne;
}

bool plan_from_json(arena *A, const cJSON *j, const region *r, const pc_analysis *a, sched_plan *out, diag_list *dl,
                    const char *at) {
  ju_ctx cx = {A, dl, D_PLAN_SCHEMA, D_PLAN_SCHEMA, NULL}, *c = &cx;
  int n0 = dl->nerrors;
  const char *path = at ? at : "plan";
  sched_plan p;
  fill_defaults(A, r, a, &p);
  if (!cJSON_IsObject(j)) {
    diag_report(dl, D_PLAN_SCHEMA, path, NULL, "a plan is an object, not %s", ju_type_name(j));
    return false;
  }
  ju_check_keys(c, j, path, PLAN_KEYS);
  const cJSON *t = ju_array(c, j, "tile", path, false);
  if (t) {
    if (cJSON_GetArraySize(t) != 3)
      diag_report(dl, D_PLAN_SCHEMA, ju_path_key(c, path, "tile"), "Write tile as [BM, BN, BK].",
                  "tile has %d entries, not 3", cJSON_GetArraySize(t));
    else
      for (int i = 0; i < 3; i++)
        int_item(c, cJSON_GetArrayItem(t, i), ju_path_idx(c, ju_path_key(c, path, "tile"), i), &p.tile[i]);
  }
  bool have_stages = int_key(c, j, "stages", path, &p.stages);
  (void)have_stages;
  const cJSON *b = ju_object(c, j, "bind", path, false);
  if (b) read_bind(c, b, ju_path_key(c, path, "bind"));
  const cJSON *ras = ju_object(c, j, "raster", path, false);
  if (ras) {
    static const char *const keys[] = {"group_m", NULL};
    const char *rp = ju_path_key(c, path, "raster");
    ju_check_keys(c, ras, rp, keys);
    int_key(c, ras, "group_m", rp, &p.raster_group);
  }
  const char *wt = NULL;
  if (ju_string(c, j, "warp_tile", path, false, &wt)) {
    int wm, wn;
    const char *wp = ju_path_key(c, path, "warp_tile");
    if (!parse_wxh(wt, &wm, &wn) || wm <= 0 || wn <= 0)
      diag_report(dl, D_PLAN_SCHEMA, wp, "Write the warp tile as \"<M>x<N>\", e.g. \"64x64\".",
                  "cannot read warp_tile '%s'", wt);
    else if (p.tile[0] % wm || p.tile[1] % wn)
      diag_report(dl, D_PLAN_MMA, wp, NULL, "warp tile %dx%d does not divide the %dx%d CTA tile", wm, wn, p.tile[0],
                  p.tile[1]);
    else
      p.warps_m = p.tile[0] / wm, p.warps_n = p.tile[1] / wn;
  } else if (!cJSON_GetObjectItemCaseSensitive(j, "warp_tile")) {
    p.warps_m = p.tile[0] >= 32 ? 2 : 1, p.warps_n = p.tile[1] >= 32 ? 2 : 1;
  }
  const cJSON *cache = ju_array(c, j, "cache", path, false);
  if (cache) read_cache(c, cache, ju_path_key(c, path, "cache"), &p);
  const cJSON *v = ju_object(c, j, "vectorize", path, false);
  bool have_vec = false;
  if (v) {
    static const char *const keys[] = {"axis", "width", NULL};
    const char *vp = ju_path_key(c, path, "vectorize");
    ju_check_keys(c, v, vp, keys);
    ju_string(c, v, "axis", vp, false, &p.vec_axis);
    have_vec = int_key(c, v, "width", vp, &p.vec);
  }
  if (!have_vec) p.vec = vec_for_tile(&p, &a->con, vec_legal(r, &a->con));
  bool have_tail = string_list(c, j, "predicate_tail", path, &p.npred, &p.predicate_tail);
  if (!have_tail && !cJSON_GetObjectItemCaseSensitive(j, "predicate_tail")) fill_tails(A, r, a, &p);
  string_list(c, j, "epilogue", path, &p.nepi, &p.epilogue);
  const char *arch = NULL;
  if (ju_string(c, j, "arch", path, false, &arch)) {
    if (!plan_arch(arch))
      diag_report(dl, D_PLAN_SCHEMA, ju_path_key(c, path, "arch"), arch_use_hint(),
                  "unknown arch '%s'", arch);
    else
      p.arch = plan_arch_id(plan_arch(arch));
  }
  const cJSON *lh = ju_object(c, j, "layout_hints", path, false);
  if (lh) {
    static const char *const keys[] = {"A_swizzle", "B_swizzle", "C_stride", NULL};
    const char *lp = ju_path_key(c, path, "layout_hints");
    ju_check_keys(c, lh, lp, keys);
    ju_bool(c, lh, "A_swizzle", lp, false, &p.a_swizzle);
    ju_bool(c, lh, "B_swizzle", lp, false, &p.b_swizzle);
    const char *cs = NULL;
    if (ju_string(c, lh, "C_stride", lp, false, &cs)) cstride_parse(cs, &p.c_stride);
  }
  const cJSON *al = ju_object(c, j, "algo_choice", path, false);
  if (al) {
    const char *ap = ju_path_key(c, path, "algo_choice");
    if (cJSON_GetArraySize(al) != 1)
      diag_report(dl, D_PLAN_SCHEMA, ap, "Give one entry, e.g. {\"matmul\": \"implicit_gemm\"}.",
                  "algo_choice has %d entries, not 1", cJSON_GetArraySize(al));
    else {
      static const char *const keys[] = {"matmul", "conv", "attention", NULL};
      ju_check_keys(c, al, ap, keys);
      const char *val = NULL;
      if (ju_string(c, al, al->child->string, ap, true, &val)) {
        const char *key = pattern_key(p.pattern);
        if (strcmp(al->child->string, key) != 0)
          diag_report(dl, D_PLAN_SCHEMA, ju_path_key(c, ap, al->child->string),
                      arena_printf(A, "This region is a %s: write {\"%s\": ...}.", key, key),
                      "algo_choice is for a %s, but the region's contraction is a %s", al->child->string, key);
        if (!algo_parse(val, &p.algo))
          diag_report(dl, D_PLAN_UNSUPPORTED, ju_path_key(c, ap, al->child->string),
                      arena_printf(A, "Use \"%s\".", algo_name(pattern_algo(p.pattern))),
                      "algo_choice '%s' has no skeleton", val);
      }
    }
  }
  const cJSON *le = ju_array(c, j, "local_edges", path, false);
  if (le) read_edges(c, le, ju_path_key(c, path, "local_edges"), &p);
  /* async defaults follow the (pinned) stages */
  fill_async(&p);
  const cJSON *as = ju_object(c, j, "async", path, false);
  if (as) {
    static const char *const keys[] = {"enable", "prefetch_depth", "epilogue_overlap", NULL};
    const char *ap = ju_path_key(c, path, "async");
    ju_check_keys(c, as, ap, keys);
    ju_bool(c, as, "enable", ap, false, &p.async_enable);
    int_key(c, as, "prefetch_depth", ap, &p.prefetch_depth);
    ju_bool(c, as, "epilogue_overlap", ap, false, &p.epilogue_overlap);
  }
  const char *bm = NULL;
  if (ju_string(c, j, "barrier_model", path, false, &bm)) {
    dlc_barrier bmk = BARRIER_UNSET;
    if (!barrier_parse(bm, &bmk) || bmk == BARRIER_NONE)
      diag_report(dl, D_PLAN_SCHEMA, ju_path_key(c, path, "barrier_model"), "Use \"cp_async_group\" or \"mbarrier\".",
                  "unknown barrier_model '%s'", bm);
    else
      p.barrier_model = bmk;
  }
  p.pinned = true;
  *out = p;
  return dl->nerrors == n0;
}

const cJSON *plan_pinned_for(cJSON *const *plans, int n, const char *arch) {
  const arch_info *want = plan_arch(arch);
  const cJSON *any = NULL;
  for (int i = 0; i < n; i++) {
    const cJSON *a = cJSON_IsObject(plans[i]) ? cJSON_GetObjectItemCaseSensitive(plans[i], "arch") : NULL;
    if (!a) {
      if (!any) any = plans[i];
    } else if (cJSON_IsString(a) && want && plan_arch(a->valuestring) == want) {
      return plans[i];
    }
  }
  return any;
}

/* ---- estimates and search ------------------------------------------------------------------ */

static const int64_t DEFAULT_SHAPES[][3] = {{4096, 4096, 4096}, {1024, 1024, 1024}, {128, 4096, 4096}};

int plan_default_shapes(const int64_t (**out)[3]) {
  *out = DEFAULT_SHAPES;
  return (int)(sizeof DEFAULT_SHAPES / sizeof *DEFAULT_SHAPES);
}

/* The calibration run of plan_choose_calibrated (NULL: none); set for the
 * span of one search. */
static const plan_calibration *calib_now;

static double calib_factor(const sched_plan *p, const arch_info *ai) {
  for (int i = 0; calib_now && i < calib_now->n; i++) {
    const plan_calib_entry *e = &calib_now->e[i];
    if (e->arch == plan_arch_id(ai) && e->tile[0] == p->tile[0] && e->tile[1] == p->tile[1] &&
        e->tile[2] == p->tile[2] && e->stages == p->stages && e->warps_m == p->warps_m && e->warps_n == p->warps_n)
      return e->factor; /* any raster group: the order is not what a factor measures */
  }
  return 1.0;
}

/* Fills the resource and time estimates of p over the shapes. */
static void estimate(arena *A, sched_plan *p, const region *r, const arch_info *ai, int nshapes,
                     int64_t (*shapes)[3]) {
  plan_res res = resources(p, p->elem_bytes, ai);
  p->smem_bytes = res.smem;
  p->regs_per_thread = res.regs;
  p->threads = res.threads;
  p->ctas_per_sm = res.ctas;
  p->occ = (double)(res.ctas * res.warps) / (ai->max_threads_per_sm / 32);
  p->pipeline_eff = pipeline_eff(p, ai, p->elem_bytes);
  p->nshapes = nshapes;
  p->shape_us = ARENA_ARRAY(A, double, nshapes + 1);
  p->shape_occ = ARENA_ARRAY(A, double, nshapes + 1);
  p->shape_bound = ARENA_ARRAY(A, const char *, nshapes + 1);
  double sum = 0;
  p->calib = calib_factor(p, ai);
  for (int s = 0; s < nshapes; s++) {
    shape_est e = model(p, ai, shapes[s][0], shapes[s][1], shapes[s][2], 1, p->elem_bytes, out_elem(r));
    e.us *= p->calib;
    p->shape_us[s] = e.us;
    p->shape_occ[s] = e.occ;
    p->shape_bound[s] = e.memory_bound ? "memory" : "compute";
    sum += e.us;
  }
  p->time_us = nshapes ? sum / nshapes : 0;
}

/* The search space, small to large: six small-M tiles (BM 16 or 32, for
 * skinny shapes), then CTA tiles {64,128} x {64,128}; for each, BK 32 with
 * 2, 3 and 4 stages and BK 64 with 3, 2x2 warps; the 128-wide tiles also
 * with 8 warps (2x4 or 4x2, 3 stages); then one wide 128x256 tile.  27
 * points. */
typedef struct cand_spec {
  int bm, bn, bk, stages, wm, wn;
} cand_spec;

static const cand_spec SPACE[] = {
    /* small M (decode-like shapes): one or two m16 rows of warps */
    {16, 16, 64, 4, 1, 1},    {16, 32, 64, 4, 1, 2},    {16, 64, 64, 4, 1, 2},    {16, 128, 32, 3, 1, 4},
    {32, 64, 32, 3, 2, 2},    {32, 128, 32, 3, 2, 2},
    {64, 64, 32, 2, 2, 2},    {64, 64, 32, 3, 2, 2},    {64, 64, 32, 4, 2, 2},    {64, 64, 64, 3, 2, 2},
    {64, 128, 32, 2, 2, 2},   {64, 128, 32, 3, 2, 2},   {64, 128, 32, 3, 2, 4},   {64, 128, 32, 4, 2, 2},
    {64, 128, 64, 3, 2, 2},   {128, 64, 32, 2, 2, 2},   {128, 64, 32, 3, 2, 2},   {128, 64, 32, 3, 4, 2},
    {128, 64, 32, 4, 2, 2},   {128, 64, 64, 3, 2, 2},   {128, 128, 32, 2, 2, 2},  {128, 128, 32, 3, 2, 2},
    {128, 128, 32, 3, 2, 4},  {128, 128, 32, 3, 4, 2},  {128, 128, 32, 4, 2, 2},  {128, 128, 64, 3, 2, 2},
    /* wide: 8 warps of 64x64 (only where shared memory allows its staging tile) */
    {128, 256, 32, 3, 2, 4},
};
#define NSPACE ((int)(sizeof SPACE / sizeof *SPACE))

/* The slice counts a bucket's search tries beside 1 (no split). */
static const int SPLITS[] = {1, 2, 4, 8, PLAN_SPLIT_MAX};
#define NSPLITS ((int)(sizeof SPLITS / sizeof *SPLITS))

bool plan_split_legal(const region *r, const pc_analysis *a) {
  (void)r;
  return a->con.present && a->con.nk == 1;
}

/* Whether the search of plan_choose_bucket tries split plans (set for the
 * span of one search, as calib_now). */
static bool split_now;

/* The STOP rule a candidate hits on one arch, or STOP__NONE. */
static dlc_stop stop_rule(arena *A, const sched_plan *p, const arch_info *ai, int legal, const char **why) {
  plan_res pr = resources(p, p->elem_bytes, ai);
  int smem_limit = (int)(PLAN_SMEM_FRACTION * ai->smem_per_block);
  if (pr.smem > smem_limit) {
    *why = arena_printf(A, "%s: %d B > 80%% of %d B", ai->name, pr.smem, ai->smem_per_block);
    return STOP_SMEM_OVER_80PCT;
  }
  if (pr.ctas_regs <= 1) {
    *why = arena_printf(A, "%s: %d regs x %d threads leave %d CTA per SM", ai->name, pr.regs, pr.threads,
                        pr.ctas_regs);
    return STOP_REGS_ONE_CTA_PER_SM;
  }
  if (p->vec < legal) {
    *why = arena_printf(A, "width %d < %d the operands allow", p->vec, legal);
    return STOP_VEC_NARROWED;
  }
  return STOP__NONE;
}

/* The raster group of a candidate: of RASTER_GROUPS, the one with the
 * smallest sum over the archs of the mean estimated time (the first on
 * ties, so PLAN_RASTER_DEFAULT unless the order changes the DRAM bytes of a
 * memory-bound shape). */
static const int RASTER_GROUPS[] = {PLAN_RASTER_DEFAULT, 1, 4, 16};

static int raster_choose(arena *A, const sched_plan *p, const region *r, const arch_info *const *archs, int narchs,
                         int nshapes, int64_t (*shapes)[3]) {
  int best = PLAN_RASTER_DEFAULT;
  double best_t = INFINITY;
  for (size_t g = 0; g < sizeof RASTER_GROUPS / sizeof *RASTER_GROUPS; g++) {
    sched_plan q = *p;
    q.raster_group = RASTER_GROUPS[g];
    double t = 0;
    for (int k = 0; k < narchs; k++) {
      estimate(A, &q, r, archs[k], nshapes, shapes);
      t += q.time_us;
    }
    if (t < best_t * (1 - 1e-9)) best_t = t, best = q.raster_group;
  }
  return best;
}

plan_result *plan_choose_multi(arena *A, const region *r, const pc_analysis *a, const arch_info *const *archs,
                               int narchs, const cJSON *pinned, int nshapes, const int64_t (*shapes)[3],
                               diag_list *dl, const char *at) {
  DLC_ASSERT(narchs >= 1);
  if (!a->con.present) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "region %s has no contraction: there is no plan to choose",
                r->name);
    return NULL;
  }
  const arch_info *ai = archs[0];
  plan_result *res = ARENA_NEW(A, plan_result);
  res->region = a->region;
  if (!shapes || nshapes <= 0) shapes = DEFAULT_SHAPES, nshapes = 3;
  res->nshapes = nshapes;
  res->shapes = (int64_t(*)[3])arena_alloc(A, sizeof(int64_t[3]) * (size_t)nshapes);
  memcpy(res->shapes, shapes, sizeof(int64_t[3]) * (size_t)nshapes);

  if (pinned) {
    sched_plan p;
    if (!plan_from_json(A, pinned, r, a, &p, dl, at)) return NULL;
    if (p.arch == ARCH_NONE) p.arch = plan_arch_id(ai);
    bool ok = true;
    for (int k = 0; k < narchs; k++)
      ok &= plan_validate(&p, r, a, archs[k], dl, narchs > 1 ? arena_printf(A, "%s (arch %s)", at, archs[k]->name) : at);
    if (!ok) return NULL;
    estimate(A, &p, r, ai, nshapes, res->shapes);
    res->chosen = p;
    return res;
  }

  int legal = vec_legal(r, &a->con);
  /* the space, then (a bucket's search) each point split in 2, 4, 8, 16 */
  int nsplit = split_now && plan_split_legal(r, a) ? NSPLITS : 1, ncap = NSPACE * nsplit;
  res->cand = ARENA_ARRAY(A, plan_candidate, ncap);
  double *t = ARENA_ARRAY(A, double, (size_t)ncap * (size_t)narchs); /* mean time per candidate and arch */
  for (int i = 0; i < ncap; i++) {
    const cand_spec *s = &SPACE[i % NSPACE];
    plan_candidate *c = &res->cand[res->ncand++];
    fill_defaults(A, r, a, &c->p);
    c->p.arch = plan_arch_id(ai);
    c->p.split_k = SPLITS[i / NSPACE];
    c->p.tile[0] = s->bm, c->p.tile[1] = s->bn, c->p.tile[2] = s->bk;
    c->p.stages = s->stages;
    c->p.warps_m = s->wm, c->p.warps_n = s->wn;
    c->p.vec = vec_for_tile(&c->p, &a->con, legal);
    fill_async(&c->p);
    fill_tails(A, r, a, &c->p);
    plan_res pr = resources(&c->p, c->p.elem_bytes, ai);
    c->p.smem_bytes = pr.smem, c->p.regs_per_thread = pr.regs, c->p.threads = pr.threads;
    c->p.ctas_per_sm = pr.ctas;
    /* STOP rules (spec §11), on every arch the kernel is built for */
    for (int k = 0; k < narchs && !c->stop; k++) c->stop = stop_rule(A, &c->p, archs[k], legal, &c->why);
    if (c->stop) continue;
    c->p.raster_group = raster_choose(A, &c->p, r, archs, narchs, nshapes, res->shapes);
    for (int k = 0; k < narchs; k++) {
      diag_list scratch;
      diag_init(&scratch);
      bool ok = plan_validate(&c->p, r, a, archs[k], &scratch, at);
      diag_free(&scratch);
      DLC_ASSERT(ok); /* the space only holds plans the skeleton realizes */
      sched_plan q = c->p;
      estimate(A, &q, r, archs[k], nshapes, res->shapes);
      t[i * narchs + k] = q.time_us;
      if (k == 0) c->p = q;
    }
    c->kept = true;
  }
  /* score: the mean over archs of the time relative to that arch's best */
  int best = -1;
  for (int i = 0; i < ncap; i++) {
    plan_candidate *c = &res->cand[i];
    if (!c->kept) continue;
    double sc = 0;
    for (int k = 0; k < narchs; k++) {
      double bk = INFINITY;
      for (int j = 0; j < ncap; j++)
        if (res->cand[j].kept && t[j * narchs + k] < bk) bk = t[j * narchs + k];
      sc += t[i * narchs + k] / bk;
    }
    c->score = sc / narchs;
    if (best < 0 || c->score < res->cand[best].score) best = i;
  }
  if (best < 0) {
    diag_report(dl, D_PLAN_SMEM, at, NULL, "no candidate plan fits %s: every one hit a STOP rule",
                narchs > 1 ? "every arch" : ai->name);
    return NULL;
  }
  res->chosen = res->cand[best].p;
  return res;
}

plan_result *plan_choose_calibrated(arena *A, const region *r, const pc_analysis *a, const arch_info *const *archs,
                                    int narchs, const cJSON *pinned, int nshapes, const int64_t (*shapes)[3],
                                    const plan_calibration *cal, diag_list *dl, const char *at) {
  calib_now = cal;
  plan_result *res = plan_choose_multi(A, r, a, archs, narchs, pinned, nshapes, shapes, dl, at);
  calib_now = NULL;
  return res;
}

plan_result *plan_choose_bucket(arena *A, const region *r, const pc_analysis *a, const arch_info *const *archs,
                                int narchs, int nshapes, const int64_t (*shapes)[3], const plan_calibration *cal,
                                bool split, diag_list *dl, const char *at) {
  split_now = split;
  plan_result *res = plan_choose_calibrated(A, r, a, archs, narchs, NULL, nshapes, shapes, cal, dl, at);
  split_now = false;
  return res;
}

/* "128x128x32 s4 w2x2 r8", dlc-bench's plan column */
static bool parse_plan_text(const char *t, plan_calib_entry *e) {
  char tail;
  return sscanf(t, "%dx%dx%d s%d w%dx%d r%d%c", &e->tile[0], &e->tile[1], &e->tile[2], &e->stages, &e->warps_m,
                &e->warps_n, &e->raster_group, &tail) == 7;
}

bool plan_calibration_read(arena *A, const char *path, plan_calibration *out, diag_list *dl) {
  static const char header[] = "op,shape,dtype,arch,plan,ctas,flops,bytes,occupancy,estimate_us,actual_us";
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "r");
  if (!f) {
    diag_report(dl, D_FILE_IO, path, NULL, "cannot read the calibration file '%s'", path);
    return false;
  }
  char line[1024];
  int ln = 0, cap = 0;
  double *logsum = NULL;
  bool ok = true;
  while (ok && fgets(line, sizeof line, f)) {
    ln++;
    line[strcspn(line, "\r\n")] = 0;
    if (ln == 1) {
      if (strcmp(line, header) != 0) {
        diag_report(dl, D_CALIB_FORMAT, arena_printf(A, "%s:1", path), NULL,
                    "the first line is not dlc-bench's CSV header (%s)", header);
        ok = false;
      }
      continue;
    }
    if (!*line) continue;
    const char *col[11];
    int nc = 0;
    char *q = line;
    col[nc++] = q;
    for (; *q && nc <= 11; q++)
      if (*q == ',') *q = 0, col[nc < 11 ? nc : 10] = q + 1, nc++;
    if (nc != 11) {
      diag_report(dl, D_CALIB_FORMAT, arena_printf(A, "%s:%d", path, ln), NULL, "%d fields, not 11", nc);
      ok = false;
      continue;
    }
    plan_calib_entry e;
    memset(&e, 0, sizeof e);
    const arch_info *ai = plan_arch(col[3]);
    char *end1, *end2;
    double est = strtod(col[9], &end1), act = strtod(col[10], &end2);
    if (!ai || !*col[9] || !*col[10] || !parse_plan_text(col[4], &e)) continue; /* not a calibration row */
    if (*end1 || *end2 || !(est > 0) || !(act > 0) || !isfinite(est) || !isfinite(act)) {
      diag_report(dl, D_CALIB_FORMAT, arena_printf(A, "%s:%d", path, ln), NULL,
                  "estimate_us '%s' and actual_us '%s' must be positive numbers", col[9], col[10]);
      ok = false;
      continue;
    }
    e.arch = plan_arch_id(ai);
    int k = 0;
    for (; k < out->n; k++) {
      plan_calib_entry *x = &out->e[k];
      if (x->arch == e.arch && !memcmp(x->tile, e.tile, sizeof e.tile) && x->stages == e.stages &&
          x->warps_m == e.warps_m && x->warps_n == e.warps_n)
        break;
    }
    if (k == out->n) {
      if (out->n == cap) {
        cap = cap ? 2 * cap : 16;
        plan_calib_entry *ne = arena_alloc(A, sizeof *ne * (size_t)cap);
        double *nl = arena_alloc(A, sizeof *nl * (size_t)cap);
        if (out->n) memcpy(ne, out->e, sizeof *ne * (size_t)out->n), memcpy(nl, logsum, sizeof *nl * (size_t)out->n);
        out->e = ne, logsum = nl;
      }
      out->e[out->n] = e;
      logsum[out->n++] = 0;
    }
    out->e[k].rows++;
    logsum[k] += log(act / est);
  }
  if (ok && ln == 0) {
    diag_report(dl, D_CALIB_FORMAT, arena_printf(A, "%s:1", path), NULL, "the file is empty");
    ok = false;
  }
  fclose(f);
  for (int k = 0; k < out->n; k++) out->e[k].factor = exp(logsum[k] / out->e[k].rows);
  return ok;
}

plan_result *plan_choose(arena *A, const region *r, const pc_analysis *a, const arch_info *ai, const cJSON *pinned,
                         int nshapes, const int64_t (*shapes)[3], diag_list *dl, const char *at) {
  const arch_info *one[1] = {ai};
  return plan_choose_multi(A, r, a, one, 1, pinned, nshapes, shapes, dl, at);
}

/* ---- attention ------------------------------------------------------------------------------- */

/* The streaming-softmax skeleton (templates/sm80_attention.cuh) runs 4
 * warps of 16 query rows (BM = 64) and a 2-stage K/V ring; its choice is
 * the key tile BN.  Larger key tiles halve the loop's barriers and rescales;
 * the STOP rules drop those whose Q tile plus ring exceeds 80% of an arch's
 * shared memory or whose registers (Q fragments, S and O accumulators) leave
 * one CTA per SM.  The largest surviving BN is kept.  A pinned plan names
 * the key tile itself ("tile": [64, BN, D]) and meets the same rules as
 * errors. */
static const int ATT_BNS[] = {128, 64, 32, 16};
#define ATT_NBN ((int)(sizeof ATT_BNS / sizeof ATT_BNS[0]))

static void att_candidate(arena *A, const region *r1, const pc_analysis *a1, int D, int DV, int BN,
                          const arch_info *const *archs, int narchs, plan_candidate *c) {
  fill_defaults(A, r1, a1, &c->p);
  sched_plan *p = &c->p;
  p->arch = plan_arch_id(archs[0]);
  p->tile[0] = 64, p->tile[1] = BN, p->tile[2] = D;
  p->stages = 2;
  p->warps_m = 4, p->warps_n = 1;
  p->vec = 16 / p->elem_bytes;
  p->pattern = PATTERN_ATTENTION;
  p->algo = ALGO_STREAMING_SOFTMAX;
  p->streaming = true;
  p->async_enable = true;
  p->prefetch_depth = 1;
  p->epilogue_overlap = false;
  fill_tails(A, r1, a1, p);
  int ring = (64 * D + 2 * BN * (D + DV)) * p->elem_bytes, stage = 64 * (DV + 8) * 4;
  p->smem_bytes = ring > stage ? ring : stage;
  p->threads = 128;
  /* Q's fragments stay in registers while they are small; larger head dims
   * re-read them from shared memory on each key tile (one ldmatrix.x4 per
   * k-step).  At D = 128 this measured 207 -> 167 registers on sm_80 and
   * removed the spills ptxas made for sm_100 and sm_120. */
  p->a_frag_regs = D / 16 * 4 <= PLAN_ATT_Q_REGS;
  /* Q fragments, S and O accumulators, P (hi + lo) and K/V fragments, row
   * state, overhead */
  int frags = (p->a_frag_regs ? D / 16 * 4 : 4) + BN / 8 * 4 + DV / 8 * 4 + 8 + 8 + 8;
  p->regs_per_thread = ceil_div(frags + (BN == 16 ? ATT_REG_OVERHEAD_K16 : ATT_REG_OVERHEAD), 8) * 8;
  for (int k = 0; k < narchs && !c->stop; k++) {
    const arch_info *ai = archs[k];
    if (p->smem_bytes > (int)(PLAN_SMEM_FRACTION * ai->smem_per_block)) {
      c->stop = STOP_SMEM_OVER_80PCT;
      c->why = arena_printf(A, "%s: %d B > 80%% of %d B", ai->name, p->smem_bytes, ai->smem_per_block);
    } else if (p->regs_per_thread > PLAN_MAX_REGS || ai->regs_per_sm / (p->regs_per_thread * p->threads) <= 1) {
      c->stop = STOP_REGS_ONE_CTA_PER_SM;
      c->why = arena_printf(A, "%s: %d regs x %d threads", ai->name, p->regs_per_thread, p->threads);
    }
  }
  if (c->stop) return;
  int ctas = archs[0]->regs_per_sm / (p->regs_per_thread * p->threads);
  int by_smem = archs[0]->smem_per_sm / p->smem_bytes;
  p->ctas_per_sm = ctas < by_smem ? ctas : by_smem;
  c->kept = true;
}

/* The largest key tile that passes the STOP rules, or 0. */
static int att_best_bn(arena *A, const region *r1, const pc_analysis *a1, int D, int DV, const arch_info *const *archs,
                       int narchs) {
  for (int i = 0; i < ATT_NBN; i++) {
    plan_candidate c = {0};
    att_candidate(A, r1, a1, D, DV, ATT_BNS[i], archs, narchs, &c);
    if (c.kept) return ATT_BNS[i];
  }
  return 0;
}

static plan_result *att_pinned(arena *A, plan_result *res, const region *r1, const pc_analysis *a1, int D, int DV,
                               const arch_info *const *archs, int narchs, const cJSON *pinned, diag_list *dl,
                               const char *at) {
  sched_plan pp;
  if (!plan_from_json(A, pinned, r1, a1, &pp, dl, at)) return NULL;
  const cJSON *jt = cJSON_GetObjectItemCaseSensitive(pinned, "tile");
  const cJSON *js = cJSON_GetObjectItemCaseSensitive(pinned, "stages");
  const cJSON *jw = cJSON_GetObjectItemCaseSensitive(pinned, "warp_tile");
  int best = att_best_bn(A, r1, a1, D, DV, archs, narchs);
  const char *fix = best ? arena_printf(A, "Pin {\"tile\": [64, %d, %d]}: 64 query rows (4 warps of 16), %d keys a step, the head dim.",
                                        best, D, best)
                         : "Use a smaller head dim.";
  int BN = pp.tile[1];
  if (!jt || pp.tile[0] != 64 || pp.tile[2] != D || BN < 16 || BN > 256 || BN % 16) {
    diag_report(dl, D_PLAN_SCHEMA, key_at(A, at, "tile"), fix,
                "the streaming_softmax skeleton's tile is [64 query rows, BN keys (a multiple of 16 up to 256), the head "
                "dim %d]; the plan pins [%d, %d, %d]",
                D, pp.tile[0], pp.tile[1], pp.tile[2]);
    return NULL;
  }
  if (js && pp.stages != 2) {
    diag_report(dl, D_PLAN_SCHEMA, key_at(A, at, "stages"), "Remove \"stages\" or set it to 2.",
                "the streaming_softmax skeleton's K/V ring has 2 stages, not %d", pp.stages);
    return NULL;
  }
  /* the warp tile plan_from_json read: 16 query rows by the BN keys (4 x 1 warps) */
  if (jw && (!cJSON_IsString(jw) || pp.warps_m != pp.tile[0] / 16 || pp.warps_n != 1)) {
    diag_report(dl, D_PLAN_SCHEMA, key_at(A, at, "warp_tile"), arena_printf(A, "Remove \"warp_tile\" or set it to \"16x%d\".", BN),
                "each of the streaming_softmax skeleton's 4 warps takes 16 query rows and the whole key tile");
    return NULL;
  }
  plan_candidate c = {0};
  att_candidate(A, r1, a1, D, DV, BN, archs, narchs, &c);
  if (!c.kept) {
    bool smem = c.stop == STOP_SMEM_OVER_80PCT;
    diag_report(dl, smem ? D_PLAN_SMEM : D_PLAN_REGS, key_at(A, at, "tile"), fix,
                smem ? "the Q tile and the 2-stage K/V ring of %d keys take %s"
                     : "%d keys a step need more registers than an SM holds for two CTAs, or than 255 a thread (%s)",
                BN, c.why);
    return NULL;
  }
  c.p.pinned = true;
  res->cand = ARENA_ARRAY(A, plan_candidate, 1);
  res->cand[0] = c;
  res->ncand = 1;
  res->chosen = c.p;
  return res;
}

plan_result *plan_attention(arena *A, const region *r1, const pc_analysis *a1, int D, int DV,
                            const arch_info *const *archs, int narchs, const cJSON *pinned, diag_list *dl,
                            const char *at) {
  plan_result *res = ARENA_NEW(A, plan_result);
  res->region = a1->region;
  if (pinned) return att_pinned(A, res, r1, a1, D, DV, archs, narchs, pinned, dl, at);
  res->cand = ARENA_ARRAY(A, plan_candidate, ATT_NBN);
  int best = -1;
  const char *whys = "";
  for (int i = 0; i < ATT_NBN; i++) {
    plan_candidate *c = &res->cand[res->ncand++];
    att_candidate(A, r1, a1, D, DV, ATT_BNS[i], archs, narchs, c);
    if (c->stop) whys = arena_printf(A, "%s%s%d keys: %s (%s)", whys, *whys ? "; " : "", ATT_BNS[i], stop_name(c->stop), c->why);
    if (c->kept && best < 0) best = i;
  }
  if (best < 0) {
    diag_report(dl, D_PLAN_REGS, at, "Use a smaller head dim, or compile for archs with more shared memory.",
                "no key tile fits head dims %d/%d on every arch: %s", D, DV, whys);
    return NULL;
  }
  res->chosen = res->cand[best].p;
  return res;
}

/* ---- sm90a contraction (tma_wgmma) ------------------------------------------------------- */

/* The candidates: the CTA tile is two consumer warpgroups of 64 rows by BN
 * (one wgmma m64nBNk16 a k16 step) by BK = 64 (one 128-byte swizzle row of
 * fp16/bf16), over a ring of `stages` TMA stages.  Registers: the producer
 * warpgroup keeps PLAN_SM90A_PRODUCER_REGS, each consumer thread needs its
 * BN / 2 accumulators plus PLAN_SM90A_CONSUMER_BASE for descriptors, loop
 * state and the epilogue, rounded up to a multiple of 8 (setmaxnreg's
 * granule).  STOP rules: shared memory over PLAN_SMEM_FRACTION of the arch's
 * per-block limit; the three warpgroups' registers over the SM's file.  The
 * kept candidate with the widest N tile, then the deepest ring, wins: on
 * one CTA per SM (the skeleton's __launch_bounds__(384, 1)) a wider tile
 * reads fewer operand bytes per FLOP and a deeper ring hides more latency.
 * A shape bucket's plan has two more STOP rules, first: `padding`, a tile
 * side at least twice the bucket's largest M or N (more than half of it
 * past the output on every call of the bucket: the wgmma rows of a decode
 * bucket, a 128-wide N tile for N <= 64), and `grid`, fewer CTAs than the
 * arch has SMs on every representative shape of the bucket (this skeleton
 * runs one CTA an SM; the bucket's sm80 kernel, several an SM, keeps the
 * call). */
static const int SM90A_BNS[] = {128, 64};
static const int SM90A_STAGES[] = {6, 5, 4};

plan_result *plan_sm90a(arena *A, const region *r, const pc_analysis *a, const arch_info *ai, const plan_bucket *b,
                        const char **why_none, diag_list *dl, const char *at) {
  plan_result *res = ARENA_NEW(A, plan_result);
  res->region = a->region;
  int nb = (int)(sizeof SM90A_BNS / sizeof *SM90A_BNS), ns = (int)(sizeof SM90A_STAGES / sizeof *SM90A_STAGES);
  res->cand = ARENA_ARRAY(A, plan_candidate, nb * ns);
  int best = -1;
  const char *whys = "";
  for (int i = 0; i < nb; i++)
    for (int j = 0; j < ns; j++) {
      plan_candidate *c = &res->cand[res->ncand++];
      sched_plan *p = &c->p;
      fill_defaults(A, r, a, p);
      p->arch = plan_arch_id(ai);
      p->algo = ALGO_TMA_WGMMA;
      p->barrier_model = BARRIER_MBARRIER;
      p->tile[0] = 128, p->tile[1] = SM90A_BNS[i], p->tile[2] = 128 / p->elem_bytes;
      p->stages = SM90A_STAGES[j];
      p->warps_m = 8, p->warps_n = 1; /* the consumers: 8 warps of 16 rows */
      p->threads = 384;               /* + the producer warpgroup */
      p->vec = 16 / p->elem_bytes;    /* TMA boxes: whole 16-byte rows */
      p->prefetch_depth = p->stages;
      p->async_enable = true;
      p->ctas_per_sm = 1;
      int ring = p->stages * (p->tile[0] + p->tile[1]) * p->tile[2] * p->elem_bytes,
          stage = p->tile[0] * (p->tile[1] + 8) * 4;
      p->smem_bytes = (ring > stage ? ring : stage) + 1024;
      p->regs_per_thread = (p->tile[1] / 2 + PLAN_SM90A_CONSUMER_BASE + 7) / 8 * 8;
      /* the warpgroups' setmaxnreg budgets must fit the register file */
      int regs = 128 * PLAN_SM90A_PRODUCER_REGS + 256 * PLAN_SM90A_CONSUMER_REGS;
      /* a bucket's: the most CTAs of its representative shapes */
      int64_t ctas = 0;
      for (int s = 0; b && s < b->nshapes; s++) {
        int64_t t = (b->shapes[s][0] + p->tile[0] - 1) / p->tile[0] * ((b->shapes[s][1] + p->tile[1] - 1) / p->tile[1]);
        if (t > ctas) ctas = t;
      }
      if (b && (b->m_max <= p->tile[0] / 2 || b->n_max <= p->tile[1] / 2)) {
        bool m = b->m_max <= p->tile[0] / 2;
        c->stop = STOP_PADDING;
        c->why = arena_printf(A, "bucket %s has %s <= %lld: over half of the %d-%s tile is past the output", b->name,
                              m ? "M" : "N", (long long)(m ? b->m_max : b->n_max), m ? p->tile[0] : p->tile[1],
                              m ? "row" : "column");
      } else if (b && ctas < ai->sm_count) {
        c->stop = STOP_GRID;
        c->why = arena_printf(A, "at most %lld CTAs on bucket %s's shapes, fewer than %s's %d SMs at one CTA an SM",
                              (long long)ctas, b->name, ai->name, ai->sm_count);
      } else if (p->smem_bytes > (int)(PLAN_SMEM_FRACTION * ai->smem_per_block)) {
        c->stop = STOP_SMEM;
        c->why = arena_printf(A, "%d bytes of shared memory, over %.0f%% of %s's %d", p->smem_bytes,
                              100 * PLAN_SMEM_FRACTION, ai->name, ai->smem_per_block);
      } else if (regs > ai->regs_per_sm || p->regs_per_thread > PLAN_SM90A_CONSUMER_REGS) {
        c->stop = STOP_REGISTERS;
        c->why = arena_printf(A, "a consumer thread needs %d registers of its %d (128 x %d + 256 x %d of %s's %d)",
                              p->regs_per_thread, PLAN_SM90A_CONSUMER_REGS, PLAN_SM90A_PRODUCER_REGS,
                              PLAN_SM90A_CONSUMER_REGS, ai->name, ai->regs_per_sm);
      } else {
        c->kept = true;
        if (best < 0) best = res->ncand - 1;
      }
      if (c->stop) whys = arena_printf(A, "%s%s%dx%dx%d, %d stages: %s (%s)", whys, *whys ? "; " : "", p->tile[0],
                                       p->tile[1], p->tile[2], p->stages, stop_name(c->stop), c->why);
    }
  if (best < 0) {
    if (why_none) *why_none = whys;
    if (b) return NULL; /* the bucket keeps its sm80 kernel */
    diag_report(dl, D_PLAN_REGS, at, "Leave sm90a out of the op's archs: its sm80 skeleton serves it.",
                "no tma_wgmma plan fits %s: %s", ai->name, whys);
    return NULL;
  }
  res->chosen = res->cand[best].p;
  return res;
}

plan_result *plan_sm90a_gather(arena *A, const region *r, const pc_analysis *a, const arch_info *ai,
                               const plan_bucket *b, const char **why_none, diag_list *dl, const char *at) {
  plan_result *res = plan_sm90a(A, r, a, ai, b, why_none, dl, at);
  if (!res) return NULL;
  for (int i = 0; i < res->ncand; i++) res->cand[i].p.algo = ALGO_CPASYNC_WGMMA;
  res->chosen.algo = ALGO_CPASYNC_WGMMA;
  return res;
}

/* ---- sm90a attention (wgmma_softmax) ------------------------------------------------------ */

/* A producer warpgroup (one elected thread issues the TMA boxes) and two
 * consumer warpgroups of 64 query rows each (BM = 128, 384 threads),
 * ping-ponging on the tensor cores, key tiles of BN over a ring of
 * PLAN_SM90A_ATT_STAGES K/V stages.  S = Q K^T is one wgmma m64nBNk16 a k16 step of
 * D, O += P V one m64nDVk16 (RS) a k16 step of the keys: BN and DV are
 * wgmma N (64 or 128), and D and DV whole 128-byte swizzle rows (multiples
 * of 64 elements).  Registers: the S and O accumulators (BN / 2 + DV / 2),
 * P's A fragments (BN / 4, twice for an fp32 P's hi + lo halves) and
 * PLAN_SM90A_ATT_BASE for row state, addresses and the epilogue.  STOP
 * rules: shared memory (Q, the ring and 1 KB of alignment, or the fp32
 * staging tile) over PLAN_SMEM_FRACTION of the arch's per-block limit; a
 * thread over PLAN_MAX_REGS.  The widest key tile kept wins. */
static const int SM90A_ATT_BNS[] = {128, 64};

plan_result *plan_sm90a_attention(arena *A, const region *r1, const pc_analysis *a1, int D, int DV, bool p_fp32,
                                  const arch_info *ai, diag_list *dl, const char *at) {
  plan_result *res = ARENA_NEW(A, plan_result);
  res->region = a1->region;
  int nb = (int)(sizeof SM90A_ATT_BNS / sizeof *SM90A_ATT_BNS), best = -1;
  res->cand = ARENA_ARRAY(A, plan_candidate, nb);
  const char *whys = "";
  for (int i = 0; i < nb; i++) {
    plan_candidate *c = &res->cand[res->ncand++];
    sched_plan *p = &c->p;
    int BN = SM90A_ATT_BNS[i];
    fill_defaults(A, r1, a1, p);
    p->arch = plan_arch_id(ai);
    p->tile[0] = 128, p->tile[1] = BN, p->tile[2] = D;
    p->stages = PLAN_SM90A_ATT_STAGES;
    p->warps_m = 8, p->warps_n = 1; /* the consumers: 8 warps of 16 rows */
    p->threads = 384;               /* + the producer warpgroup */
    p->vec = 16 / p->elem_bytes;
    p->pattern = PATTERN_ATTENTION;
    p->algo = ALGO_WGMMA_SOFTMAX;
    p->raster_group = 0; /* query tiles on x, batch x heads on y: no raster order */
    p->streaming = true;
    p->async_enable = true;
    p->prefetch_depth = 1;
    p->epilogue_overlap = false;
    p->ctas_per_sm = 1;
    fill_tails(A, r1, a1, p);
    int ring = (128 * D + PLAN_SM90A_ATT_STAGES * BN * (D + DV)) * p->elem_bytes, stage = 128 * (DV + 8) * 4;
    p->smem_bytes = (ring > stage ? ring : stage) + 1024;
    p->regs_per_thread = ceil_div(BN / 2 + DV / 2 + BN / 4 * (p_fp32 ? 2 : 1) + PLAN_SM90A_ATT_BASE, 8) * 8;
    if (D % 64 || DV % 64 || DV > 128) {
      c->stop = STOP_HEAD_DIM;
      c->why = arena_printf(A, "head dims %d / %d are not 64 or 128 (128-byte swizzle rows, wgmma N)", D, DV);
    } else if (p->smem_bytes > (int)(PLAN_SMEM_FRACTION * ai->smem_per_block)) {
      c->stop = STOP_SMEM_OVER_80PCT;
      c->why = arena_printf(A, "%s: %d B > 80%% of %d B", ai->name, p->smem_bytes, ai->smem_per_block);
    } else if (p->regs_per_thread > PLAN_SM90A_ATT_CONSUMER_REGS) {
      c->stop = STOP_REGISTERS;
      c->why = arena_printf(A, "%s: %d registers a consumer thread, over its setmaxnreg budget of %d", ai->name,
                            p->regs_per_thread, PLAN_SM90A_ATT_CONSUMER_REGS);
    } else {
      c->kept = true;
      if (best < 0) best = res->ncand - 1;
    }
    if (c->stop) whys = arena_printf(A, "%s%s%d keys: %s (%s)", whys, *whys ? "; " : "", BN, stop_name(c->stop), c->why);
  }
  if (best < 0) {
    diag_report(dl, D_PLAN_REGS, at, "Leave sm90a out of the op's archs: its sm80 skeleton serves it.",
                "no wgmma_softmax plan fits head dims %d / %d on %s: %s", D, DV, ai->name, whys);
    return NULL;
  }
  res->chosen = res->cand[best].p;
  return res;
}

/* ---- rows ------------------------------------------------------------------------------------ */

/* Registers a thread of the row skeleton is planned with: the row's index
 * state, a partial per reduction and a vector of each loaded tensor.  With
 * 64 (4 CTAs of 256 threads) ptxas spilled layernorm on sm_100 and sm_120;
 * 80 (3 CTAs, at most 85 registers) leaves 70-72 there and no spill
 * (kernels.ptxas_reports_zero_spills). */
#define ROW_REGS 80

plan_result *plan_rows(arena *A, const region *r, const sx *row_extent, int vec, const arch_info *const *archs,
                       int narchs, diag_list *dl, const char *at) {
  plan_result *res = ARENA_NEW(A, plan_result);
  res->region = 0;
  res->cand = ARENA_ARRAY(A, plan_candidate, 1);
  plan_candidate *c = &res->cand[res->ncand++];
  sched_plan *p = &c->p;
  memset(p, 0, sizeof *p);
  int64_t n = 0;
  bool warp = sx_is_int(row_extent, &n) && n <= 32 * vec * PLAN_ROW_WARP_MAX;
  p->arch = plan_arch_id(archs[0]);
  p->warps_m = warp ? 4 : 8;
  p->warps_n = 1;
  p->row_warps = warp ? 1 : p->warps_m;
  p->tile[0] = p->warps_m / p->row_warps; /* rows a CTA */
  p->tile[1] = 32 * p->row_warps * vec;   /* elements a CTA step covers along a row */
  p->tile[2] = 1;
  p->stages = 1;
  p->vec = vec;
  p->vec_axis = "row";
  p->pattern = PATTERN_ROW;
  p->algo = ALGO_ROW_REDUCE;
  p->c_stride = CSTRIDE_ROW;
  p->barrier_model = BARRIER_NONE;
  p->elem_bytes = 16 / vec;
  p->threads = 32 * p->warps_m;
  p->smem_bytes = p->row_warps > 1 ? 4 * p->row_warps : 0; /* the warps' partials */
  p->regs_per_thread = ROW_REGS;
  p->regs_every_arch = true;
  p->epilogue = ARENA_ARRAY(A, const char *, r->nlets + 1);
  for (int l = 0; l < r->nlets; l++) p->epilogue[p->nepi++] = r->lets[l].name;
  int ctas = archs[0]->regs_per_sm / (p->regs_per_thread * p->threads);
  int by_threads = archs[0]->max_threads_per_sm / p->threads;
  p->ctas_per_sm = ctas < by_threads ? ctas : by_threads;
  for (int k = 0; k < narchs; k++)
    if (p->threads > archs[k]->max_threads_per_sm) {
      diag_report(dl, D_INTERNAL, at, NULL, "%d threads a CTA do not fit %s", p->threads, archs[k]->name);
      return NULL;
    }
  c->kept = true;
  res->chosen = *p;
  return res;
}

static cJSON *str_array(int n, const char *const *s);

static cJSON *rows_plan_json(const plan_result *r) {
  const sched_plan *p = &r->chosen;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "arch", arch_name(p->arch));
  cJSON *ac = cJSON_AddObjectToObject(o, "algo_choice");
  cJSON_AddStringToObject(ac, pattern_key(p->pattern), algo_name(p->algo));
  cJSON *b = cJSON_AddObjectToObject(o, "bind");
  cJSON_AddStringToObject(b, "rows", p->row_warps == 1 ? "block.x * 4 + warp" : "block.x");
  cJSON_AddStringToObject(b, "row", p->row_warps == 1 ? "lane" : "thread");
  cJSON_AddNumberToObject(o, "warps", p->warps_m);
  cJSON_AddNumberToObject(o, "warps_per_row", p->row_warps);
  cJSON_AddNumberToObject(o, "rows_per_cta", p->tile[0]);
  cJSON *v = cJSON_AddObjectToObject(o, "vectorize");
  cJSON_AddStringToObject(v, "axis", "row");
  cJSON_AddNumberToObject(v, "width", p->vec);
  cJSON_AddItemToObject(o, "lets", str_array(p->nepi, p->epilogue));
  cJSON *e = cJSON_AddObjectToObject(o, "estimate");
  cJSON_AddStringToObject(e, "source", "rows");
  cJSON_AddNumberToObject(e, "smem_bytes", p->smem_bytes);
  cJSON_AddNumberToObject(e, "regs_per_thread", p->regs_per_thread);
  cJSON_AddNumberToObject(e, "threads", p->threads);
  cJSON_AddNumberToObject(e, "ctas_per_sm", p->ctas_per_sm);
  return o;
}

/* ---- dump ------------------------------------------------------------------------------------ */

static double round_to(double x, double unit) { return isfinite(x) ? round(x / unit) * unit : -1; }

static cJSON *str_array(int n, const char *const *s) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(s[i]));
  return a;
}

static cJSON *tile_json(const sched_plan *p) {
  cJSON *t = cJSON_CreateArray();
  for (int i = 0; i < 3; i++) cJSON_AddItemToArray(t, cJSON_CreateNumber(p->tile[i]));
  return t;
}

static const char *warp_tile_str(char *buf, size_t n, const sched_plan *p) {
  snprintf(buf, n, "%dx%d", p->warps_m ? p->tile[0] / p->warps_m : 0, p->warps_n ? p->tile[1] / p->warps_n : 0);
  return buf;
}

/* The §8.1 object. */
static cJSON *plan_json(const sched_plan *p) {
  char buf[32];
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToObject(o, "tile", tile_json(p));
  cJSON_AddNumberToObject(o, "stages", p->stages);
  cJSON *b = cJSON_AddObjectToObject(o, "bind");
  if (p->streaming)
    for (int i = 0; i < 4; i++) cJSON_AddStringToObject(b, ATT_BIND[i][0], ATT_BIND[i][1]);
  else
    for (int i = 0; i < 5; i++)
      if (i != 2 || p->batched) cJSON_AddStringToObject(b, BIND[i][0], BIND[i][1]);
  if (!p->streaming) cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "raster"), "group_m", p->raster_group);
  if (p->split_k > 1) cJSON_AddNumberToObject(o, "split_k", p->split_k);
  cJSON_AddStringToObject(o, "warp_tile", warp_tile_str(buf, sizeof buf, p));
  cJSON *cache = cJSON_AddArrayToObject(o, "cache");
  for (int i = 0; i < 2; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "tensor", p->cache_tensor[i] ? p->cache_tensor[i] : (i ? "B" : "A"));
    cJSON_AddStringToObject(e, "where", "smem");
    cJSON_AddStringToObject(e, "at", "k.i");
    cJSON_AddBoolToObject(e, "pingpong", true);
    cJSON_AddItemToArray(cache, e);
  }
  cJSON *v = cJSON_AddObjectToObject(o, "vectorize");
  cJSON_AddStringToObject(v, "axis", p->vec_axis ? p->vec_axis : "none");
  cJSON_AddNumberToObject(v, "width", p->vec);
  cJSON_AddItemToObject(o, "predicate_tail", str_array(p->npred, p->predicate_tail));
  cJSON_AddItemToObject(o, "epilogue", str_array(p->nepi, p->epilogue));
  cJSON_AddStringToObject(o, "arch", p->arch == ARCH_NONE ? "" : arch_name(p->arch));
  cJSON *lh = cJSON_AddObjectToObject(o, "layout_hints");
  cJSON_AddBoolToObject(lh, "A_swizzle", p->a_swizzle);
  cJSON_AddBoolToObject(lh, "B_swizzle", p->b_swizzle);
  cJSON_AddStringToObject(lh, "C_stride", p->c_stride ? cstride_name(p->c_stride) : "row");
  cJSON *al = cJSON_AddObjectToObject(o, "algo_choice");
  cJSON_AddStringToObject(al, pattern_key(p->pattern), algo_name(p->algo));
  if (p->streaming) cJSON_AddStringToObject(o, "q_fragments", p->a_frag_regs ? "registers" : "smem");
  cJSON *le = cJSON_AddArrayToObject(o, "local_edges");
  for (int i = 0; i < p->nedges; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "from", p->edges[i].from);
    cJSON_AddStringToObject(e, "to", p->edges[i].to);
    cJSON_AddStringToObject(e, "buffer", buffer_name(p->edges[i].buffer));
    if (p->edges[i].buffer == BUF_SMEM_RING) cJSON_AddNumberToObject(e, "depth", p->edges[i].depth);
    cJSON_AddItemToArray(le, e);
  }
  cJSON *as = cJSON_AddObjectToObject(o, "async");
  cJSON_AddBoolToObject(as, "enable", p->async_enable);
  cJSON_AddNumberToObject(as, "prefetch_depth", p->prefetch_depth);
  cJSON_AddBoolToObject(as, "epilogue_overlap", p->epilogue_overlap);
  cJSON_AddStringToObject(o, "barrier_model", barrier_name(p->barrier_model ? p->barrier_model : BARRIER_CP_ASYNC_GROUP));
  return o;
}

static cJSON *estimate_json(const sched_plan *p, const plan_result *r, bool full) {
  cJSON *e = cJSON_CreateObject();
  if (full) cJSON_AddStringToObject(e, "source", p->pinned ? "pinned" : "search");
  cJSON_AddNumberToObject(e, "smem_bytes", p->smem_bytes);
  cJSON_AddNumberToObject(e, "regs_per_thread", p->regs_per_thread);
  if (full) cJSON_AddNumberToObject(e, "threads", p->threads);
  cJSON_AddNumberToObject(e, "ctas_per_sm", p->ctas_per_sm);
  if (!p->shape_us) return e; /* dropped by a STOP rule: not timed */
  if (full) cJSON_AddNumberToObject(e, "warp_occupancy", round_to(p->occ, 0.001));
  if (full) cJSON_AddNumberToObject(e, "pipeline_eff", round_to(p->pipeline_eff, 0.001));
  if (p->calib != 1.0 && p->calib > 0) cJSON_AddNumberToObject(e, "calibration", round_to(p->calib, 0.001));
  cJSON_AddNumberToObject(e, "time_us", round_to(p->time_us, 0.01));
  if (!full) return e;
  cJSON *sh = cJSON_AddArrayToObject(e, "shapes");
  for (int s = 0; s < p->nshapes && s < r->nshapes; s++) {
    cJSON *x = cJSON_CreateObject();
    cJSON *mnk = cJSON_AddArrayToObject(x, "mnk");
    for (int d = 0; d < 3; d++) cJSON_AddItemToArray(mnk, cJSON_CreateNumber((double)r->shapes[s][d]));
    cJSON_AddNumberToObject(x, "time_us", round_to(p->shape_us[s], 0.01));
    cJSON_AddNumberToObject(x, "occ", round_to(p->shape_occ[s], 0.001));
    cJSON_AddStringToObject(x, "bound", p->shape_bound[s]);
    cJSON_AddItemToArray(sh, x);
  }
  return e;
}

cJSON *plan_dump(const plan_result *r) {
  if (r->chosen.row_warps) return rows_plan_json(r);
  cJSON *o = plan_json(&r->chosen);
  cJSON_AddItemToObject(o, "estimate", estimate_json(&r->chosen, r, true));
  cJSON *cs = cJSON_AddArrayToObject(o, "candidates");
  char buf[32];
  for (int i = 0; i < r->ncand; i++) {
    const plan_candidate *c = &r->cand[i];
    const sched_plan *p = &c->p;
    cJSON *x = cJSON_CreateObject();
    cJSON_AddItemToObject(x, "tile", tile_json(p));
    cJSON_AddNumberToObject(x, "stages", p->stages);
    cJSON_AddStringToObject(x, "warp_tile", warp_tile_str(buf, sizeof buf, p));
    cJSON_AddNumberToObject(x, "vec", p->vec);
    if (c->kept && !p->streaming) cJSON_AddNumberToObject(x, "raster_group_m", p->raster_group);
    if (p->split_k > 1) cJSON_AddNumberToObject(x, "split_k", p->split_k);
    cJSON_AddItemToObject(x, "estimate", estimate_json(p, r, false));
    /* attention's candidates are not timed: the largest key tile that fits wins */
    if (c->kept && p->shape_us) cJSON_AddNumberToObject(x, "score", round_to(c->score, 0.001));
    if (c->stop) {
      cJSON_AddStringToObject(x, "stop", stop_name(c->stop));
      cJSON_AddStringToObject(x, "why", c->why);
    } else {
      cJSON_AddNullToObject(x, "stop");
    }
    cJSON_AddItemToArray(cs, x);
  }
  return o;
}

/* What every plan must hold on every arch it is built for: its skeleton's
 * algo_choice, its warps as its threads, and shared memory and registers
 * within the arch's limits. */
bool plan_fits_archs(const sched_plan *p, dlc_algo algo, const arch_info *const *archs, int na, diag_list *dl) {
  bool ok = true;
  if (p->algo != algo) {
    diag_report(dl, D_INTERNAL, "plan", NULL, "the plan's algo_choice '%s' is not its skeleton's '%s'",
                algo_name(p->algo), algo_name(algo));
    ok = false;
  }
  if (p->threads != 32 * p->warps_m * p->warps_n || p->threads > 1024) {
    diag_report(dl, D_INTERNAL, "plan", NULL, "the plan's %d threads are not its %d x %d warps", p->threads, p->warps_m,
                p->warps_n);
    ok = false;
  }
  for (int i = 0; i < na; i++)
    if (p->smem_bytes > archs[i]->smem_per_block || p->regs_per_thread > 255) {
      diag_report(dl, D_INTERNAL, "plan", NULL, "the plan needs %d bytes of shared memory and %d registers, over %s's limits",
                  p->smem_bytes, p->regs_per_thread, archs[i]->name);
      ok = false;
    }
  return ok;
}
