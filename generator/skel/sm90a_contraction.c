/* The sm90a contraction skeletons (templates/sm90a_contraction.cuh and
 * sm90a_gather_contraction.cuh), for sm90a alone: a producer warpgroup fills
 * a ring of shared stages behind mbarriers, TMA boxes (algo_choice
 * tma_wgmma) or gathered cp.async chunks (cp_async_wgmma, an operand no
 * tensor map describes, as an implicit GEMM's im2col), and two consumer
 * warpgroups run wgmma on it.  Here are whether a region fits
 * (gpuir_sm90a_fits, gpuir_sm90a_gather_fits), the GPU IR builder (from the
 * sm80 contraction's kernel: gpuir_build), its checks (verify_sm90a) and its
 * renderer (sm90a_op: the producer, the consumers and the tile's store). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "emit_int.h"
#include "gpuir_int.h"
#include "skel.h"
#include "strbuf.h"

/* Whether the kernel's producer gathers (cp_async_wgmma), else it copies
 * TMA boxes (tma_wgmma): the file's two skeletons */
static bool gathers(const gpu_kernel *k) { return k->algo == ALGO_CPASYNC_WGMMA; }

/* Whether operand read `rd` of region r is a plain Read of a rank-2
 * signature tensor at [outer axis, inner axis]: one 2-D tensor map (inner
 * dim contiguous, the leading dimension as the outer stride) covers it. */
static bool tma_read(const region *r, const rexpr *rd, int outer, int inner) {
  if (!rd || rd->k != RX_READ || rd->nmap != 2) return false;
  const region_memref *m = &r->in[rd->input];
  const char *o = sx_as_var(rd->map[0]), *i = sx_as_var(rd->map[1]);
  return m->signature && m->rank == 2 && o && i && strcmp(o, r->it[outer].name) == 0 &&
         strcmp(i, r->it[inner].name) == 0;
}

bool gpuir_sm90a_fits(const region *r, const pc_analysis *a, const char **why) {
  const pc_contraction *c = &a->con;
  *why = NULL;
  if (!c->present || c->nm != 1 || c->nn != 1 || c->nk != 1 || c->nb != 0)
    *why = "the contraction is not one M, N and K axis without batch";
  else if (r->in[c->lhs].dt != r->in[c->rhs].dt || (r->in[c->lhs].dt != DT_FP16 && r->in[c->lhs].dt != DT_BF16))
    *why = "the operands are not both fp16 or both bf16";
  else if (!tma_read(r, c->lhs_read, c->m_axes[0], c->k_axes[0]))
    *why = "A is not read as a rank-2 signature tensor A[m, k]";
  else if (!tma_read(r, c->rhs_read, c->k_axes[0], c->n_axes[0]) && !tma_read(r, c->rhs_read, c->n_axes[0], c->k_axes[0]))
    *why = "B is not read as a rank-2 signature tensor B[k, n] or B[n, k]";
  else if (r->nyields != 1)
    *why = "the region does not store exactly one output";
  return *why == NULL;
}

/* The gathering producer: a contraction without batch, fp16/bf16 operands
 * that tensor maps do not describe, both contiguous along the innermost K
 * axis (16-byte chunks of K land in the K-major 128-byte swizzle rows). */
bool gpuir_sm90a_gather_fits(const region *r, const pc_analysis *a, const char **why) {
  const pc_contraction *c = &a->con;
  const char *tw;
  *why = NULL;
  if (!c->present || c->nm < 1 || c->nn < 1 || c->nk < 1 || c->nb != 0)
    *why = "the contraction has a batch or an empty M, N or K group";
  else if (gpuir_sm90a_fits(r, a, &tw))
    *why = "tensor maps describe its operands (the tma_wgmma row takes it)";
  else if (r->in[c->lhs].dt != r->in[c->rhs].dt || (r->in[c->lhs].dt != DT_FP16 && r->in[c->lhs].dt != DT_BF16))
    *why = "the operands are not both fp16 or both bf16";
  else if (!c->lhs_k_contig || c->lhs_contig != c->k_axes[c->nk - 1])
    *why = "A is not contiguous along its innermost K axis";
  else if (!c->rhs_k_contig || c->rhs_contig != c->k_axes[c->nk - 1])
    *why = "B is not contiguous along its innermost K axis";
  else if (r->nyields != 1)
    *why = "the region does not store exactly one output";
  return *why == NULL;
}

/* One step of the sm90a consumers' unrolled k-loop, on ring slot `slot`
 * (compile time): the wait on its full barrier at the lap's phase ^ flip,
 * the k-tile's wgmma from the slot's descriptors, commit and wait_group 1,
 * then (release >= 0) the previous k-tile's slot back to the producer. */
static void consumer_step(gpu_kernel *k, arena *A, bool gather, int slot, int flip, int release, const char *kt) {
  int BN = k->plan.tile[1], BK = k->plan.tile[2], BM = k->plan.tile[0], eb = dtype_bytes(k->T);
  int so = slot * (BM + BN) * BK * eb / 16, db_step = k->B.k_contig ? 2 : 128;
  gpuir_push(k, A, GS_MBAR_WAIT, arena_printf(A, "full[%d]", slot),
             arena_printf(A, "%s: parity %s; %s", kt,
                          release < 0 ? "0"
                          : flip      ? "ph ^ 1"
                                      : "ph",
                          gather ? "every producer thread's chunks landed and fenced" : "both boxes landed"),
             0, 2, gpuir_tok_at(k, A, "tA", "kt"), gpuir_tok_at(k, A, "tB", "kt"))
      ->mbar = GMBAR_FULL;
  k->st[k->nst - 1].fixed_slot = true, k->st[k->nst - 1].slot = slot, k->st[k->nst - 1].flip = flip;
  gpuir_push(
      k, A, GS_WGMMA,
      arena_printf(A, "wgmma.mma_async.m64n%dk16.f32.%s.%s x %d", BN, dtype_name(k->T), dtype_name(k->T), BK / 16),
      arena_printf(A,
                   "SS: A K-major, B %s (imm-trans-b %d); descriptors 128B swizzle, SBO 1024, slot %d: start + %d, "
                   "k16 step + 2 (A) / + %d (B) (16-byte units)",
                   k->B.k_contig ? "K-major" : "MN-major", k->B.k_contig ? 0 : 1, slot, so, db_step),
      gpuir_tok(k, A, "tMMA"), 2, gpuir_tok_at(k, A, "tA", "kt"), gpuir_tok_at(k, A, "tB", "kt"));
  k->st[k->nst - 1].fixed_slot = true, k->st[k->nst - 1].slot = slot;
  gpuir_push(k, A, GS_WGMMA_WAIT, "wgmma.commit_group; wgmma.wait_group 1",
             "this k-tile's group stays in flight; the previous one's reads are done", 0, 1, gpuir_tok(k, A, "tMMA"), 0)
      ->lo = 1;
  if (release < 0) return;
  gpuir_push(k, A, GS_MBAR_ARRIVE, arena_printf(A, "empty[%d]", release),
             "release the previous k-tile's slot to the producer", gpuir_tok_at(k, A, "tFree", "kt+S-1"), 0, 0, 0)
      ->mbar = GMBAR_EMPTY;
  k->st[k->nst - 1].fixed_slot = true, k->st[k->nst - 1].slot = release;
}

/* Both sm90a contraction producers open alike: their Role (`who`: which
 * threads copy), the register budget down, the k-tile loop and the wait
 * for the slot's empty barrier. */
static void producer_open(gpu_kernel *k, arena *A, const char *who, int BK, const char *pk) {
  gpuir_push(k, A, GS_ROLE, "producer", who, 0, 0, 0, 0)->role = GROLE_PRODUCER;
  setmaxnreg(k, A, false);
  gpuir_push(k, A, GS_LOOP, "kt", arena_printf(A, "0 <= kt < ceil(K%s / %d)", pk, BK), 0, 0, 0, 0);
  gpuir_push(k, A, GS_MBAR_WAIT, "empty[kt % S]", "parity ((kt / S) & 1) ^ 1: the consumers released the slot", 0, 1,
             gpuir_tok_at(k, A, "tFree", "kt"), 0)
      ->mbar = GMBAR_EMPTY;
}

/* The sm90a contraction's statements, in groups: the gathering producer
 * (cp.async chunks, an arrival a thread on the stage it lands), the TMA
 * producer (one elected lane's boxes, the stage's bytes armed on its full
 * barrier), and the consumers (the unrolled k-loop on fixed slots, then
 * the staging tile and the epilogue).  pm, pn, pk: the M, N and K axes as
 * the prose names them. */
static void sm90a_gather_producer(gpu_kernel *k, arena *A, const region *r, const sched_plan *p, const char *pm,
                                  const char *pn, const char *pk) {
  int BM = p->tile[0], BN = p->tile[1], BK = p->tile[2], S = p->stages;
  int L = k->gather_lag;
  producer_open(k, A, "warpgroup 0: 128 threads, thread t copies chunks t, t + 128, ... of each stage", BK, pk);
  for (int side = 0; side < 2; side++) {
    const gpu_operand *o = side ? &k->B : &k->A;
    gpu_stmt *cp = gpuir_push(
        k, A, GS_CP_ASYNC, arena_printf(A, "sm%c[kt%%%d] <- %s", side ? 'B' : 'A', S, o->tensor),
        arena_printf(
            A,
            "cp.async 16 bytes: %d rows (%s.o * %d + r) x %d chunks of 8 along %s (k.o * %d + 8 c), "
            "through %s_chunk; %s%s: zero fill",
            side ? BN : BM, side ? "n" : "m", side ? BN : BM, BK / 8, r->it[o->contig_axis].name, BK, side ? "b" : "a",
            o->walk ? "pad guards, " : "",
            side ? arena_printf(A, "out of N%s or K%s", pn, pk) : arena_printf(A, "out of M%s or K%s", pm, pk)),
        gpuir_tok_at(k, A, side ? "tB" : "tA", "kt"), 0, 0, 0);
    cp->side = side ? GSIDE_B : GSIDE_A;
  }
  /* stage kt - L lands from kt = L on: the wait leaves L groups in flight,
   * and the arrival names that stage (lo: the lag) */
  gpuir_push(k, A, GS_COMMIT, "cp.async.commit_group", NULL, 0, 2, gpuir_tok_at(k, A, "tA", "kt"),
             gpuir_tok_at(k, A, "tB", "kt"));
  gpuir_push(k, A, GS_WAIT, "cp.async.wait_group", arena_printf(A, "%d: from kt = %d, stage kt - %d landed", L, L, L),
             0, 2, gpuir_tok_at(k, A, "tA", arena_printf(A, "kt-%d", L)),
             gpuir_tok_at(k, A, "tB", arena_printf(A, "kt-%d", L)))
      ->lo = L;
  gpuir_push(k, A, GS_PROXY_FENCE, "fence.proxy.async.shared::cta", "the landed chunks, visible to wgmma (async proxy)",
             0, 0, 0, 0);
  gpuir_push(k, A, GS_MBAR_ARRIVE, arena_printf(A, "full[(kt - %d) %% S]", L),
             arena_printf(A, "from kt = %d: this thread's copies of stage kt - %d", L, L), 0, 0, 0, 0)
      ->lo = L;
  k->st[k->nst - 1].mbar = GMBAR_FULL;
  gpuir_push(k, A, GS_END_LOOP, "kt", NULL, 0, 0, 0, 0);
  gpuir_push(k, A, GS_WAIT, "cp.async.wait_group", "0: the last stages landed", 0, 2, gpuir_tok_at(k, A, "tA", "kt"),
             gpuir_tok_at(k, A, "tB", "kt"))
      ->lo = 0;
  gpuir_push(k, A, GS_PROXY_FENCE, "fence.proxy.async.shared::cta", "the landed chunks, visible to wgmma (async proxy)",
             0, 0, 0, 0);
  gpuir_push(k, A, GS_MBAR_ARRIVE, "full[kt % S]", arena_printf(A, "the last %d stages (or fewer)", L), 0, 0, 0, 0)
      ->lo = L;
  k->st[k->nst - 1].mbar = GMBAR_FULL;
}

static void sm90a_tma_producer(gpu_kernel *k, arena *A, const sched_plan *p, const char *pm, const char *pn,
                               const char *pk) {
  int BM = p->tile[0], BN = p->tile[1], BK = p->tile[2], S = p->stages, eb = dtype_bytes(k->T);
  producer_open(k, A, "warpgroup 0; one elected lane of warp 0 issues the copies", BK, pk);
  gpuir_push(
      k, A, GS_MBAR_ARRIVE, "full[kt % S]",
      arena_printf(A, "arrive.expect_tx: the stage's %d bytes, which the two copies complete", (BM + BN) * BK * eb), 0,
      0, 0, 0)
      ->mbar = GMBAR_FULL;
  gpuir_push(
      k, A, GS_TMA_LOAD, arena_printf(A, "smA[kt%%%d] <- %s", S, k->A.tensor),
      arena_printf(A, "box {%d, %d} at (k.o * %d, m.o * %d); out of M%s or K%s: zero fill", BK, BM, BK, BM, pm, pk),
      gpuir_tok_at(k, A, "tA", "kt"), 0, 0, 0)
      ->side = GSIDE_A;
  gpuir_push(k, A, GS_TMA_LOAD, arena_printf(A, "smB[kt%%%d] <- %s", S, k->B.tensor),
             k->B.k_contig
                 ? arena_printf(A, "box {%d, %d} at (k.o * %d, n.o * %d); out of N%s or K%s: zero fill", BK, BN, BK, BN,
                                pn, pk)
                 : arena_printf(A, "%d boxes {64, %d} at (n.o * %d + 64 j, k.o * %d); out of N%s or K%s: zero fill",
                                BN / 64, BK, BN, BK, pn, pk),
             gpuir_tok_at(k, A, "tB", "kt"), 0, 0, 0)
      ->side = GSIDE_B;
  gpuir_push(k, A, GS_END_LOOP, "kt", NULL, 0, 0, 0, 0);
}

static void sm90a_consumers(gpu_kernel *k, arena *A, const region *r, const sched_plan *p, bool gather,
                            const char *pk) {
  int BM = p->tile[0], BN = p->tile[1], BK = p->tile[2], S = p->stages, eb = dtype_bytes(k->T);
  /* the consumers */
  gpuir_push(k, A, GS_ROLE, "consumers",
             arena_printf(A, "warpgroups 1 and 2: rows 64 wg .. 64 wg + 63 of the %d-row tile", BM), 0, 0, 0, 0)
      ->role = GROLE_CONSUMERS;
  setmaxnreg(k, A, true);
  /* the warpgroup's accumulators, and its descriptors' low words at slot
   * 0 (sm90a_wgmma_slot adds a step's slot and k16 offsets to them) */
  gpuir_push(k, A, GS_ACC_ZERO, "acc <- 0", arena_printf(A, "a warpgroup's 64 x %d fp32 accumulators", BN), 0, 0, 0, 0);
  gpuir_push(k, A, GS_FRAG_SETUP, "wgmma descriptor of smA",
             "slot 0 at the warpgroup's 64 rows (+ 64 wg x 128 bytes): K-major, LBO 16, SBO 1024, 128B swizzle", 0, 0,
             0, 0)
      ->side = GSIDE_A;
  gpuir_push(k, A, GS_FRAG_SETUP, "wgmma descriptor of smB",
             k->B.k_contig
                 ? "slot 0: K-major, LBO 16, SBO 1024, 128B swizzle"
                 : arena_printf(A, "slot 0: MN-major, LBO %d (a 64-column box), SBO 1024, 128B swizzle", 64 * BK * eb),
             0, 0, 0, 0)
      ->side = GSIDE_B;
  /* the k-loop: k-tile 0 peeled (no slot to release before it), then laps
   * of S k-tiles unrolled, k-tile 1 + S l + j on slot (1 + j) % S: every
   * step's slot, barriers and descriptor offsets compile-time, the parity
   * the lap's phase ph = l & 1 (flipped on the step that wraps to slot 0),
   * and each step releases the slot before its own without a predicate;
   * then the last (KT - 1) % S k-tiles on slots 1, 2, ... with parity ph */
  k->consumer_unroll = S;
  consumer_step(k, A, gather, 0, 0, -1, "k-tile 0 (peeled)");
  gpuir_push(
      k, A, GS_LOOP, "lap",
      arena_printf(A, "0 <= l < (ceil(K%s / %d) - 1) / %d: k-tiles 1 + %d l + j, j = 0 .. %d unrolled; ph = l & 1", pk,
                   BK, S, S, S - 1),
      0, 0, 0, 0)
      ->loop = GLOOP_LAP;
  for (int j = 0; j < S; j++)
    consumer_step(k, A, gather, (1 + j) % S, (1 + j) / S, j, arena_printf(A, "k-tile 1 + %d l + %d", S, j));
  gpuir_push(k, A, GS_END_LOOP, "lap", "ph ^= 1", 0, 0, 0, 0)->loop = GLOOP_LAP;
  gpuir_push(
      k, A, GS_LOOP, "rest",
      arena_printf(A, "the last (ceil(K%s / %d) - 1) %% %d k-tiles: step j when j < that; ph = laps & 1", pk, BK, S), 0,
      0, 0, 0)
      ->loop = GLOOP_REST;
  for (int j = 0; j + 1 < S; j++)
    consumer_step(k, A, gather, 1 + j, 0, j, arena_printf(A, "k-tile 1 + %d laps + %d", S, j));
  gpuir_push(k, A, GS_END_LOOP, "rest", NULL, 0, 0, 0, 0)->loop = GLOOP_REST;
  gpuir_push(k, A, GS_WGMMA_WAIT, "wgmma.wait_group 0", "the last k-tile's group", 0, 1, gpuir_tok(k, A, "tMMA"), 0)
      ->lo = 0;
  gpuir_push(k, A, GS_BARRIER, "bar.sync 1, 256",
             "the consumers are past their last wgmma: the ring is free for the staging tile", 0, 0, 0, 0)
      ->bar = GBAR_CONSUMERS;
  gpuir_push(k, A, GS_STAGE_ACC, "st.shared.v2.f32", arena_printf(A, "acc -> stage[%d][%d+8] fp32", BM, BN),
             gpuir_tok(k, A, "tStage"), 1, gpuir_tok(k, A, "tMMA"), 0);
  gpuir_push(k, A, GS_BARRIER, "bar.sync 1, 256", "staging tile complete", 0, 0, 0, 0)->bar = GBAR_CONSUMERS;
  const char *lets = "";
  for (int l = 0; l < r->nlets; l++)
    if (r->lets[l].post_reduce) lets = arena_printf(A, "%s%s%s", lets, *lets ? ", " : "", r->lets[l].name);
  emit_epilogue(k, A, r, lets,
                k->epi_vec ? arena_printf(A,
                                          "tile inside N, tensors %d-element aligned, rows up to M: lets: %s; 256 "
                                          "consumer threads; %s",
                                          k->epi_vec, *lets ? lets : "(none)", epi_row_steps(A, &k->v))
                           : NULL);
}

static gpu_kernel *build_sm90a(arena *A, const region *r, const pc_analysis *a, const sched_plan *p, const char *name,
                               bool gather, diag_list *dl) {
  const char *at = arena_printf(A, "GPU IR[%s]", r->name), *why;
  if (!(gather ? gpuir_sm90a_gather_fits(r, a, &why) : gpuir_sm90a_fits(r, a, &why))) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "region %s does not fit the sm90a contraction skeleton (%s): %s",
                r->name, algo_name(gather ? ALGO_CPASYNC_WGMMA : ALGO_TMA_WGMMA), why);
    return NULL;
  }
  /* the view, operands and epilogue lets as the contraction skeletons see
   * them (gpuir_build, with the consumers' 256 threads for the epilogue);
   * then this row's own launch, shared layout and statements */
  gpu_kernel *k = gpuir_build(A, r, a, p, name, dl);
  if (!k) return NULL;
  int BM = p->tile[0], BN = p->tile[1], BK = p->tile[2], S = p->stages, eb = dtype_bytes(k->T);
  dlc_algo al = gather ? ALGO_CPASYNC_WGMMA : ALGO_TMA_WGMMA;
  k->algo = al;
  /* its producer keeps no walk state (32-bit guards and masks are the sm80 walk's) */
  k->A.g32 = k->B.g32 = false;
  k->A.gmask = k->B.gmask = 0;
  k->A.kpart32 = k->B.kpart32 = false;
  k->kpart32_fallback = 0;
  k->gather_lag = gather ? S - 2 : 0; /* the copies of S - 2 stages ahead in flight, one slot's arrival behind */
  k->threads = p->threads;
  k->producer_regs = PLAN_SM90A_PRODUCER_REGS, k->consumer_regs = PLAN_SM90A_CONSUMER_REGS;
  k->smem = p->smem_bytes;
  k->nvec = 1, k->vecs[0] = 16 / eb; /* 16-byte rows (tensor maps) or chunks (cp.async): one kernel */
  k->steady_min_vec = 0;
  k->nst = 0, k->ntiles = 0;
  /* the ring (1 KB for its 1024-byte alignment first): A as BM rows of BK
   * (K-major), B as BN rows of BK (K-major) or BN/64 boxes of BK rows of 64
   * (MN-major); 128-byte swizzle rows, 8 chunks XORed */
  int end = add_tile(k, "smA", 1024, S, BM, BK, eb);
  add_tile(k, "smB", end, S, k->B.k_contig ? BN : BK * (BN / 64), k->B.k_contig ? BK : 64, eb);
  const char *pm = gpuir_axes(A, r, k->v.m_axes, k->v.nm), *pn = gpuir_axes(A, r, k->v.n_axes, k->v.nn),
             *pk = gpuir_axes(A, r, k->v.k_axes, k->v.nk);
  const sx *tiles_m = k->grid_tiles[0], *tiles_n = k->grid_tiles[1];
  gpuir_push(k, A, GS_TILE_COORD, "(m.o, n.o) <- blockIdx.x",
             arena_printf(A, "%s x %s tiles in groups of %d M tiles, M fastest within a group", sx_str(A, tiles_m),
                          sx_str(A, tiles_n), p->raster_group),
             0, 0, 0, 0);
  if (gather) {
    gpuir_push(
        k, A, GS_ALLOC_SHARED, "smA",
        arena_printf(A, "%s [%d][%d][%d] (M x K, K-major), 16-byte chunk c of row r at c ^ (r %% 8): 128B swizzle",
                     dtype_name(k->T), S, BM, BK),
        0, 0, 0, 0)
        ->side = GSIDE_A;
    gpuir_push(
        k, A, GS_ALLOC_SHARED, "smB",
        arena_printf(A, "%s [%d][%d][%d] (N x K, K-major), 16-byte chunk c of row r at c ^ (r %% 8): 128B swizzle",
                     dtype_name(k->T), S, BN, BK),
        0, 0, 0, 0)
        ->side = GSIDE_B;
    mbar_init(k, A, GMBAR_FULL, "full[s]", 128,
              arena_printf(A, "%d slots, 128 arrivals (every producer thread's landed copies)", S), 0);
  } else {
    gpuir_push(k, A, GS_ALLOC_SHARED, "smA",
               arena_printf(A, "%s [%d][%d][%d] (M x K, K-major), TMA box {%d, %d}, 128B swizzle", dtype_name(k->T), S,
                            BM, BK, BK, BM),
               0, 0, 0, 0)
        ->side = GSIDE_A;
    gpuir_push(k, A, GS_ALLOC_SHARED, "smB",
               k->B.k_contig
                   ? arena_printf(A, "%s [%d][%d][%d] (N x K, K-major), TMA box {%d, %d}, 128B swizzle",
                                  dtype_name(k->T), S, BN, BK, BK, BN)
                   : arena_printf(A, "%s [%d][%d][%d][64] (K x N, MN-major), %d TMA boxes {64, %d}, 128B swizzle",
                                  dtype_name(k->T), S, BN / 64, BK, BN / 64, BK),
               0, 0, 0, 0)
        ->side = GSIDE_B;
    mbar_init(k, A, GMBAR_FULL, "full[s]", 1,
              arena_printf(A, "%d slots, 1 arrival + the stage's %d bytes", S, (BM + BN) * BK * eb), 0);
  }
  mbar_init(
      k, A, GMBAR_EMPTY, "empty[s]", 256,
      arena_printf(A, "%d slots, 256 arrivals (every consumer thread); a fresh slot is free (parity 1 completes)", S),
      gpuir_tok_at(k, A, "tFree", "kt"));
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "the barriers are initialized", 0, 0, 0, 0);
  /* the producer, then the consumers */
  if (gather) sm90a_gather_producer(k, A, r, p, pm, pn, pk);
  else sm90a_tma_producer(k, A, p, pm, pn, pk);
  sm90a_consumers(k, A, r, p, gather, pk);
  return k; /* the pipeline verifies it */
}

gpu_kernel *gpuir_build_sm90a(arena *A, const region *r, const pc_analysis *a, const sched_plan *p, const char *name,
                              diag_list *dl) {
  return build_sm90a(A, r, a, p, name, false, dl);
}

gpu_kernel *gpuir_build_sm90a_gather(arena *A, const region *r, const pc_analysis *a, const sched_plan *p,
                                     const char *name, diag_list *dl) {
  return build_sm90a(A, r, a, p, name, true, dl);
}

/* ---- the checks ---------------------------------------------------------------------- */

/* What verify_sm90a_setup and verify_sm90a_producer compare the kernels
 * with: the setup and the consumers' state before their k-loop, as
 * sm90a_kernel_fn writes them, and each producer's statements, as
 * produce_fn writes them (kind, operand, lo: -2 any, else the statement's
 * lo, -3 the gathering producer's lag). */
static const setup_step CONTRACTION_SETUP[] = {SM90A_SETUP_HEAD("B's ring"), SM90A_SETUP_TAIL};

static const setup_step CONTRACTION_CONSUMERS[] = {
    {GS_ROLE, GSIDE_NONE, GMBAR_NONE, GROLE_CONSUMERS, "the consumers' role"},
    {GS_SETMAXNREG, GSIDE_NONE, GMBAR_NONE, GROLE_CONSUMERS, "the consumers' setmaxnreg.inc"},
    {GS_ACC_ZERO, GSIDE_NONE, GMBAR_NONE, GROLE_NONE, "the accumulators' zero"},
    {GS_FRAG_SETUP, GSIDE_A, GMBAR_NONE, GROLE_NONE, "A's descriptor"},
    {GS_FRAG_SETUP, GSIDE_B, GMBAR_NONE, GROLE_NONE, "B's descriptor"},
};

static const producer_step TMA_PRODUCER[] = {
    {GS_LOOP, GSIDE_NONE, -2, "the k-tile loop"},
    {GS_MBAR_WAIT, GSIDE_NONE, -2, "the wait on the slot's empty barrier"},
    {GS_MBAR_ARRIVE, GSIDE_NONE, -1, "the arrival on the slot's full barrier with the stage's bytes"},
    {GS_TMA_LOAD, GSIDE_A, -2, "A's box"},
    {GS_TMA_LOAD, GSIDE_B, -2, "B's boxes"},
    {GS_END_LOOP, GSIDE_NONE, -2, "the loop's end"},
};

static const producer_step GATHER_PRODUCER[] = {
    {GS_LOOP, GSIDE_NONE, -2, "the k-tile loop"},
    {GS_MBAR_WAIT, GSIDE_NONE, -2, "the wait on the slot's empty barrier"},
    {GS_CP_ASYNC, GSIDE_A, -2, "A's chunks"},
    {GS_CP_ASYNC, GSIDE_B, -2, "B's chunks"},
    {GS_COMMIT, GSIDE_NONE, -2, "the commit"},
    {GS_WAIT, GSIDE_NONE, -3, "the wait for stage kt - lag"},
    {GS_PROXY_FENCE, GSIDE_NONE, -2, "the proxy fence"},
    {GS_MBAR_ARRIVE, GSIDE_NONE, -3, "the arrival on stage kt - lag's full barrier"},
    {GS_END_LOOP, GSIDE_NONE, -2, "the loop's end"},
    {GS_WAIT, GSIDE_NONE, 0, "the wait for every group"},
    {GS_PROXY_FENCE, GSIDE_NONE, -2, "the proxy fence"},
    {GS_MBAR_ARRIVE, GSIDE_NONE, -3, "the arrivals of the last lag stages"},
};

static const sm90a_lists TMA_LISTS = {"contraction",          CONTRACTION_SETUP, SM90A_N(CONTRACTION_SETUP),
                                      CONTRACTION_CONSUMERS,  SM90A_N(CONTRACTION_CONSUMERS),
                                      "TMA",                  TMA_PRODUCER,      SM90A_N(TMA_PRODUCER),
                                      1};
static const sm90a_lists GATHER_LISTS = {"contraction",         CONTRACTION_SETUP, SM90A_N(CONTRACTION_SETUP),
                                         CONTRACTION_CONSUMERS, SM90A_N(CONTRACTION_CONSUMERS),
                                         "gathering",           GATHER_PRODUCER,   SM90A_N(GATHER_PRODUCER),
                                         128};

/* The sm90a consumers' k-loop (consumer_step): k-tile 0 peeled on slot 0
 * at parity 0, releasing nothing; a lap of S = consumer_unroll = stages
 * steps, step j on slot (1 + j) % S (each slot once), its parity the lap's
 * phase flipped on the step that wraps to slot 0 alone (so that a lap
 * flips the phase once, as the ring does), releasing slot j (the previous
 * k-tile's); the rest's S - 1 steps on slots 1 .. S - 1 at the phase,
 * releasing slot j.  A step waits on its slot's full barrier, runs its
 * wgmma from the same slot, commits and waits for the previous group
 * (wait_group 1) before its release.  Then the epilogue as Op::store_tile
 * renders it (below, store_tile_fn): the wait for the last group
 * (wait_group 0), the consumers' barrier, the staging, the barrier, the
 * output's pairs. */
static bool verify_sm90a_consumers(const gpu_kernel *k, const sm90a_lists *l, diag_list *dl) {
  int S = k->plan.stages, i = 0, n = k->nst;
  if (k->consumer_unroll != S) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                "the consumers' k-loop unrolls %d k-tiles a lap, not the ring's %d stages (its slots would not be "
                "compile-time)",
                k->consumer_unroll, S);
    return false;
  }
  i = sm90a_consumers_from(k, l);
  /* seg 0: the peel (1 step), 1: a lap (S steps), 2: the rest (S - 1 steps) */
  static const char *segs[] = {"k-tile 0", "lap", "rest"};
  static const gpu_loop seg_loop[] = {GLOOP_NONE, GLOOP_LAP, GLOOP_REST};
  for (int seg = 0; seg < 3; seg++) {
    if (seg > 0) {
      if (i >= n || k->st[i].k != GS_LOOP || k->st[i].loop != seg_loop[seg]) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the consumers' %s loop is missing", segs[seg]);
        return false;
      }
      i++;
    }
    int steps = seg == 0 ? 1 : seg == 1 ? S : S - 1;
    for (int j = 0; j < steps; j++) {
      int slot = seg == 0 ? 0 : seg == 1 ? (1 + j) % S : 1 + j, flip = seg == 1 && j == S - 1;
      const gpu_stmt *w = i < n ? &k->st[i] : NULL, *m = i + 1 < n ? &k->st[i + 1] : NULL,
                     *c = i + 2 < n ? &k->st[i + 2] : NULL, *r = seg && i + 3 < n ? &k->st[i + 3] : NULL;
      bool good = w && m && c && (!seg || r) && w->k == GS_MBAR_WAIT && w->fixed_slot && w->slot == slot &&
                  w->flip == flip && w->mbar == GMBAR_FULL && m->k == GS_WGMMA && m->fixed_slot &&
                  m->slot == slot && c->k == GS_WGMMA_WAIT && c->lo == 1 &&
                  (!seg || (r->k == GS_MBAR_ARRIVE && r->fixed_slot && r->slot == j && r->mbar == GMBAR_EMPTY));
      if (!good) {
        char rel[64];
        if (seg) snprintf(rel, sizeof rel, "the release of empty[%d] (the previous k-tile's)", j);
        else snprintf(rel, sizeof rel, "no release");
        diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                    "the consumers' %s, step %d: not a wait on full[%d] at parity %s, its wgmma from slot %d, "
                    "wait_group 1, then %s",
                    segs[seg], j, slot, seg == 0 ? "0" : flip ? "ph ^ 1" : "ph", slot, rel);
        return false;
      }
      i += seg ? 4 : 3;
    }
    if (seg > 0) {
      if (i >= n || k->st[i].k != GS_END_LOOP || k->st[i].loop != seg_loop[seg]) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the consumers' %s loop holds more than its %d steps", segs[seg],
                    steps);
        return false;
      }
      i++;
    }
  }
  const gpu_stmt *w = i < n ? &k->st[i] : NULL, *b0 = i + 1 < n ? &k->st[i + 1] : NULL,
                 *sa = i + 2 < n ? &k->st[i + 2] : NULL, *b1 = i + 3 < n ? &k->st[i + 3] : NULL;
  if (!w || !b0 || !sa || !b1 || w->k != GS_WGMMA_WAIT || w->lo != 0 || b0->k != GS_BARRIER ||
      b0->bar != GBAR_CONSUMERS || sa->k != GS_STAGE_ACC || b1->k != GS_BARRIER || b1->bar != GBAR_CONSUMERS) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                "the consumers' epilogue does not begin with wait_group 0, the consumers' barrier, the staging and "
                "the barrier");
    return false;
  }
  return verify_sm90a_outputs(k, i + 4, "consumers'", dl);
}

/* The sm90a skeleton's own invariants: a ring of at least 4 stages whose
 * slots start on 1024-byte boundaries (the 128-byte swizzle's period, which
 * the TMA and the wgmma descriptors both assume) in 128-byte rows; the
 * setmaxnreg budgets in setmaxnreg's range and granule, within the register
 * file for the 384 threads; each TMA copy after a wait on its slot's empty
 * barrier (its role's ring discipline); the consumers' tile of two
 * warpgroups of 64 rows. */
static bool verify_sm90a(const gpu_kernel *k, const sm90a_lists *l, diag_list *dl) {
  bool ok = true;
  const sched_plan *p = &k->plan;
  int S = p->stages, eb = dtype_bytes(k->T);
  if (S < 4 || p->tile[0] != 128 || p->tile[1] % 64 || p->tile[1] > 128 || p->tile[2] * eb != 128 ||
      k->threads != 384) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                "the sm90a skeleton runs 384 threads on a ring of >= 4 stages of 128 x (64 | 128) x 128-byte tiles, "
                "not %d threads, %d stages, %dx%dx%d",
                k->threads, S, p->tile[0], p->tile[1], p->tile[2]);
    ok = false;
  }
  for (int i = 0; i < k->ntiles; i++) {
    const gpu_smem_tile *t = &k->tiles[i];
    int slot = t->rows * t->row_elems * t->elem_bytes;
    if (t->offset % 1024 || slot % 1024 || t->row_elems * t->elem_bytes != 128 || t->copies != S) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                  "ring tile %s: slots of %d bytes from byte %d are not on 1024-byte boundaries in 128-byte rows",
                  t->name, slot, t->offset);
      ok = false;
    }
  }
  ok &= verify_setmaxnreg(k, 256, dl);
  if (gathers(k) && (k->gather_lag < 1 || k->gather_lag >= S)) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the gathering producer lands its copies %d stages behind, not 1 to %d",
                k->gather_lag, S - 1);
    ok = false;
  }
  if (!verify_sm90a_setup(k, l, dl)) ok = false;
  if (!verify_sm90a_consumers(k, l, dl)) ok = false;
  if (!verify_sm90a_producer(k, l, dl)) ok = false;
  /* every copy into the ring after the wait on its slot's empty barrier
   * (TMA boxes, or a gathering producer's cp.async chunks); a gathering
   * producer's arrival on a full barrier after its copies landed
   * (cp.async.wait_group) and then fence.proxy.async (wgmma reads through
   * the async proxy) */
  bool freed = false;
  int last_cp = -1, last_wait = -1, last_fence = -1;
  for (int i = 0; i < k->nst; i++) {
    const gpu_stmt *s = &k->st[i];
    if (s->k == GS_ROLE || s->k == GS_LOOP) freed = false;
    if (s->k == GS_MBAR_WAIT && s->nin == 1 && s->mbar == GMBAR_EMPTY) freed = true;
    bool copy = s->k == GS_TMA_LOAD || s->k == GS_CP_ASYNC;
    if (copy && (s->k == GS_CP_ASYNC) != gathers(k)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "copy %s is not the %s producer's", s->what,
                  gathers(k) ? "gathering (cp.async)" : "TMA");
      ok = false;
    }
    if (copy && !freed) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "copy %s does not wait for its slot's empty barrier", s->what);
      ok = false;
    }
    if (s->k == GS_CP_ASYNC) last_cp = i;
    if (s->k == GS_WAIT) last_wait = i;
    if (s->k == GS_PROXY_FENCE) last_fence = i;
    if (gathers(k) && s->k == GS_MBAR_ARRIVE && s->mbar == GMBAR_FULL &&
        !(last_cp >= 0 && last_wait > last_cp && last_fence > last_wait)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                  "arrival %s is not after its copies landed (cp.async.wait_group) and fence.proxy.async", s->what);
      ok = false;
    }
  }
  return ok;
}

/* The sm90a producer's k-loop, Op::produce, rendered from the GPU IR's
 * producer role (verify_sm90a_producer admits only the lists written
 * here): the Loop over the k-tiles on ring slot s (its lap's phase ph),
 * the MbarWait on the slot's empty barrier, then the TMA producer's
 * arrival with the stage's bytes and its boxes of A and B, or the
 * gathering producer's chunks of A and B, commit, and the landing of stage
 * kt - lag (Wait, ProxyFence, MbarArrive on full[done]) from kt = lag on;
 * after the loop, its last stages' landing.  The TMA producer is one
 * elected lane; every thread t of the gathering one copies its chunks. */
static void produce_fn(render_log *log, strbuf *s, const gpu_kernel *k, const char *sname) {
  if (gathers(k))
    sb_puts(s, "  // the gathering producer's k-loop (GPU IR): thread t of the warpgroup copies its chunks of each\n"
               "  // stage, then lands the stage `lag` k-tiles behind on its full barrier\n"
               "  static __device__ __forceinline__ void produce(const Params *p, unsigned char *ring, uint64_t *full,\n"
               "                                                 uint64_t *empty, uint32_t mt, uint32_t nt, int64_t b,\n"
               "                                                 int KT, int t) {\n"
               "    const int64_t m0 = (int64_t)mt * BM, n0 = (int64_t)nt * BN;\n"
               "    int done = 0;  // the next stage to land\n");
  else
    sb_puts(s, "  // the TMA producer's k-loop (GPU IR), issued by one elected lane\n"
               "  static __device__ __forceinline__ void produce(const TParams *tp, unsigned char *ring, uint64_t *full,\n"
               "                                                 uint64_t *empty, uint32_t mt, uint32_t nt, int KT) {\n"
               "    const int m0 = (int)mt * BM, n0 = (int)nt * BN;\n");
  sb_puts(s, "    constexpr int A_BYTES = BM * BK * (int)sizeof(T), STAGE_BYTES = A_BYTES + BN * BK * (int)sizeof(T);\n"
             "    int s = 0;\n"
             "    uint32_t ph = 0;  // the phase of the ring's current lap\n");
  int i = 0;
  while (i < k->nst && !(k->st[i].k == GS_ROLE && k->st[i].role == GROLE_PRODUCER)) i++;
  bool in_loop = false;
  const char *ind = "    ";
  for (i += 2; i < k->nst && k->st[i].k != GS_ROLE; i++) {
    const gpu_stmt *t = &k->st[i];
    switch (t->k) {
    case GS_LOOP:
      sb_printf(s,
                "%s"
                "    for (int kt = 0; kt < KT; ++kt) {  // Loop kt: %s\n"
                "      unsigned char *dst = ring + s * STAGE_BYTES;\n",
                gathers(k) ? "#pragma unroll 1\n" : "", t->detail);
      in_loop = true, ind = "      ";
      break;
    case GS_MBAR_WAIT:
      sb_printf(s, "%sdlc::mbar_wait(&empty[s], ph ^ 1);  // MbarWait %s: a fresh slot is free\n", ind, t->what);
      break;
    case GS_MBAR_ARRIVE:
      if (!gathers(k)) {
        sb_printf(s, "%sdlc::mbar_arrive_expect_tx(&full[s], STAGE_BYTES);  // MbarArrive %s\n", ind, t->what);
      } else if (in_loop) {
        sb_printf(s, "%sdlc::mbar_arrive(&full[done]);  // MbarArrive %s\n%sif (++done == STAGES) done = 0;\n", ind,
                  t->what, ind);
        ind = "      ";
        sb_printf(s, "%s}\n", ind);
      } else {
        sb_printf(s,
                  "    for (int kt = KT > %d ? KT - %d : 0; kt < KT; ++kt) {  // MbarArrive %s: %s\n"
                  "      dlc::mbar_arrive(&full[done]);\n"
                  "      if (++done == STAGES) done = 0;\n"
                  "    }\n",
                  t->lo, t->lo, t->what, t->detail);
      }
      break;
    case GS_TMA_LOAD:
      if (t->side == GSIDE_A)
        sb_printf(s, "%sdlc::tma_load_2d(dst, &tp->tmap_a, kt * BK, m0, &full[s]);  // TmaLoad %s\n", ind, t->what);
      else if (k->B.k_contig)
        sb_printf(s, "%sdlc::tma_load_2d(dst + A_BYTES, &tp->tmap_b, kt * BK, n0, &full[s]);  // TmaLoad %s\n", ind,
                  t->what);
      else
        sb_printf(s,
                  "#pragma unroll\n"
                  "%sfor (int j = 0; j < BN / 64; ++j)  // TmaLoad %s: BK rows x 64 columns a box\n"
                  "%s  dlc::tma_load_2d(dst + A_BYTES + j * 64 * BK * (int)sizeof(T), &tp->tmap_b, n0 + 64 * j, kt * BK,\n"
                  "%s                   &full[s]);\n",
                  ind, t->what, ind, ind);
      break;
    case GS_CP_ASYNC:
      sb_printf(s, "%sdlc::sm90a_gather_stage<%s, %s, %s>(p, dst%s, %s, (int64_t)kt * BK, b, t);  // CpAsync %s\n",
                ind, sname, t->side == GSIDE_A ? "BM" : "BN", t->side == GSIDE_A ? "false" : "true",
                t->side == GSIDE_A ? "" : " + A_BYTES", t->side == GSIDE_A ? "m0" : "n0", t->what);
      break;
    case GS_COMMIT: sb_printf(s, "%sdlc::cp_async_commit();\n", ind); break;
    case GS_WAIT:
      if (in_loop) {
        sb_printf(s, "%sif (kt >= %d) {  // stage kt - %d\n", ind, t->lo, t->lo);
        ind = "        ";
      }
      sb_printf(s, "%sdlc::cp_async_wait<%d>();  // Wait: %s\n", ind, t->lo, t->detail);
      break;
    case GS_PROXY_FENCE: sb_printf(s, "%sdlc::fence_proxy_async();  // ProxyFence: %s\n", ind, t->detail); break;
    case GS_END_LOOP:
      sb_puts(s, "      if (++s == STAGES) s = 0, ph ^= 1;\n    }\n");
      in_loop = false, ind = "    ";
      break;
    default: continue; /* verify_sm90a_producer admits none other (and emit_verify_cu finds it unrendered) */
    }
    render_mark_stmt(log, k, t);
  }
  sb_puts(s, "  }\n");
}

/* The sm90a consumers' k-loop, Op::consume, rendered from the GPU IR's
 * consumer role: its peeled step, its lap (a loop over the laps, each
 * step's statements on their compile-time slots, the phase flipped after
 * it) and its rest (each step under `rest > j`).  A step's MbarWait waits on
 * its slot's full barrier at ph (^ 1), its Wgmma runs sm90a_wgmma_slot on
 * the slot, its WgmmaWait commits and waits for the previous group, its
 * MbarArrive releases its slot's empty barrier. */
static void consume_fn(render_log *log, strbuf *s, const gpu_kernel *k, const char *sname) {
  sb_printf(s,
            "  // the consumers' k-loop (GPU IR): k-tile 0 peeled, then laps of %d k-tiles unrolled on\n"
            "  // compile-time ring slots (the phase ph flips once a lap), then the last (KT - 1) %% %d\n"
            "  template <int N>\n"
            "  static __device__ __forceinline__ void consume(float (&acc)[N], const dlc::Sm90aRing &r0, int KT) {\n"
            "    if (KT <= 0) return;\n"
            "    const int laps = (KT - 1) / %d, rest = (KT - 1) %% %d;\n"
            "    uint32_t ph = 0;\n"
            "    dlc::Sm90aRing r = r0;\n",
            k->consumer_unroll, k->consumer_unroll, k->consumer_unroll, k->consumer_unroll);
  int i = 0, seg = 0, step = 0;
  const char *ind = "    ";
  while (i < k->nst && !(k->st[i].k == GS_ROLE && k->st[i].role == GROLE_CONSUMERS)) i++;
  for (; i < k->nst; i++) {
    const gpu_stmt *t = &k->st[i];
    if (t->k == GS_LOOP && t->loop == GLOOP_LAP) {
      seg = 1;
      sb_printf(s,
                "#pragma unroll 1\n"
                "    for (int l = 0; l < laps; ++l) {  // Loop lap: %s\n"
                "      r = r0;\n"
                "      dlc::sm90a_opaque(r);\n",
                t->detail);
      ind = "      ";
    } else if (t->k == GS_LOOP && t->loop == GLOOP_REST) {
      seg = 2, step = 0;
      sb_printf(s, "    // Loop rest: %s\n    r = r0;\n", t->detail);
    } else if (t->k == GS_END_LOOP && seg == 1) {
      sb_puts(s, "      ph ^= 1;\n    }\n");
      ind = "    ";
    } else if (t->k == GS_END_LOOP && seg == 2) {
      if (step) sb_puts(s, "    }\n");
      render_mark_stmt(log, k, t);
      break;
    } else if (t->k == GS_MBAR_WAIT && t->fixed_slot) {
      if (seg == 2) {
        if (step) sb_puts(s, "    }\n");
        sb_printf(s, "    if (rest > %d) {\n", step++);
        ind = "      ";
      }
      sb_printf(s, "%sdlc::mbar_wait(r.full0 + %d, ph%s);  // MbarWait %s\n", ind, 8 * t->slot, t->flip ? " ^ 1" : "",
                t->what);
    } else if (t->k == GS_WGMMA && t->fixed_slot) {
      /* (the statement's instruction names the dtype: the Op is the dtypes' one template) */
      sb_printf(s, "%sdlc::sm90a_wgmma_slot<%s, %d>(acc, r);  // Wgmma x %d (BK / 16)\n", ind, sname, t->slot,
                k->plan.tile[2] / 16);
    } else if (t->k == GS_WGMMA_WAIT && t->lo == 1) {
      sb_printf(s, "%sdlc::wgmma_commit();\n%sdlc::wgmma_wait<1>();  // WgmmaWait\n", ind, ind);
    } else if (t->k == GS_MBAR_ARRIVE && t->fixed_slot) {
      sb_printf(s, "%sdlc::mbar_arrive(r.empty0 + %d);  // MbarArrive %s\n", ind, 8 * t->slot, t->what);
    } else {
      continue; /* the role's setup (sm90a_kernel_fn), or what emit_verify_cu finds unrendered */
    }
    render_mark_stmt(log, k, t);
  }
  sb_puts(s, "  }\n");
}

/* its epilogue (below, with the sm90a attention consumers' renderer, whose
 * barrier it shares) */
static void store_tile_fn(arena *A, render_log *log, strbuf *s, const gpu_kernel *k, const char *sname);

/* What the kernel function is laid on: the TMA producer's tensor maps, or
 * the gathering producer's parameters and threads */
static const sm90a_cta TMA_CTA = {"sm90a_contraction.cuh", "Sm90aCta", true,
                                  "if (c.elected()) produce(tp, c.ring, c.full, c.empty, c.mt, c.nt, c.KT);"};
static const sm90a_cta GATHER_CTA = {"sm90a_contraction.cuh", "Sm90aCta", false,
                                     "produce(p, c.ring, c.full, c.empty, c.mt, c.nt, c.b, c.KT, c.thread());"};

/* The Op of a kernel on the sm90a contraction skeleton (tma_wgmma and
 * cp_async_wgmma) in two parts (op_split; templates/sm90a_contraction.cuh
 * lists what it reads): the shared template, with B's major (the tensor
 * maps and descriptors follow it), the extents, the gathering producer's
 * chunk functions, the functions every plan renders alike from its GPU IR
 * (the kernel, the consumers' epilogue) and the same epilogue functions as
 * the sm80 Op; and the plan's struct, with its tile and ring, THREADS, the
 * raster, the lag, and the roles' loops it unrolls (produce, consume). */
static void sm90a_op(emit_ctx *c, const op_split *sp, const emit_op *eo, const gpu_kernel *k) {
  arena *A = c->A;
  strbuf *S = sp->shared, *P = sp->plan;
  opgen g = {A, &k->v, k->r, S, k->T, k->math_ieee, c->log, true};
  const sched_plan *p = &k->plan;
  /* the shared template: the region's and dtype's, and the functions whose
   * statements every plan renders alike (the kernel, the consumers' epilogue) */
  split_shared_open(
      sp,
      arena_printf(A,
                   "// The plan P_<T_> (a struct below) gives the tile (BM x BN x BK), the ring's STAGES, THREADS, the\n"
                   "// CTA order on blockIdx.x (RASTER_GROUP M tiles a group, M fastest within it; 1: N fastest), the\n"
                   "// full-width epilogue's outputs a 16-byte store (EPI_VEC; 0: none), %sand the roles'\n"
                   "// loops, unrolled on its ring (produce, consume)\n",
                   gathers(k) ? "the gathering producer's lag (a thread\n// lands stage kt - LAG after issuing stage kt), " : ""),
      arena_printf(A,
                   "  using Plan::BM, Plan::BN, Plan::BK, Plan::STAGES, Plan::THREADS, Plan::RASTER_GROUP,%s Plan::EPI_VEC;\n"
                   "  using Plan::produce, Plan::consume;\n",
                   gathers(k) ? " Plan::LAG," : ""),
      k->v.out_dt == k->T ? "T_" : ctype(k->v.out_dt), eo->op->name);
  if (!gathers(k)) sb_printf(S, "  using TParams = dlc__tp_%s;\n", eo->op->name);
  sb_printf(S, "  // B stored along %s: %s descriptors\n  static constexpr bool B_K_CONTIG = %s;\n",
            k->B.k_contig ? "K" : "N", k->B.k_contig ? "K-major" : "MN-major (imm-trans-b 1)",
            k->B.k_contig ? "true" : "false");
  group_extents(&g, k, false);
  if (gathers(k)) {
    chunk_fn(&g, &k->A, "a_chunk", k->v.m_axes, k->v.nm, k->v.k_axes, k->v.nk, "operand A");
    chunk_fn(&g, &k->B, "b_chunk", k->v.n_axes, k->v.nn, k->v.k_axes, k->v.nk, "operand B");
  }
  render_in_fn(c->log, RENDER_FN_STORE_TILE);
  store_tile_fn(c->A, c->log, S, k, sp->shared_name);
  render_in_fn(c->log, RENDER_FN_KERNEL);
  sm90a_kernel_fn(c->A, c->log, S, k, sp->shared_name, gathers(k) ? &GATHER_CTA : &TMA_CTA);
  epilogue_fn(&g, "");
  int ev = k->epi_vec ? k->epi_vec : sp->epi_vec;
  if (ev) epilogue_full_fn(&g, ev, "BN");
  sb_puts(S, "};\n\n");
  /* the plan's struct: its constants and the roles' loops, which it unrolls */
  const char *self = split_self(A, sp);
  sb_printf(P, "// plan (searched for sm90a): tile %dx%dx%d, %d stages, 2 consumer warpgroups + 1 producer, %s\n",
            p->tile[0], p->tile[1], p->tile[2], p->stages, algo_name(k->algo));
  sb_printf(P, "template <class T_>\nstruct %s {\n  using T = T_;\n  using Params = dlc__p_%s;\n", sp->plan_name,
            eo->op->name);
  if (!gathers(k)) sb_printf(P, "  using TParams = dlc__tp_%s;\n", eo->op->name);
  sb_printf(P, "  static constexpr int BM = %d, BN = %d, BK = %d, STAGES = %d, THREADS = %d;\n", p->tile[0], p->tile[1],
            p->tile[2], p->stages, k->threads);
  sb_printf(P, "  static constexpr int RASTER_GROUP = %d, EPI_VEC = %d;\n", p->raster_group, k->epi_vec);
  if (gathers(k)) sb_printf(P, "  static constexpr int LAG = %d;\n", k->gather_lag);
  render_in_fn(c->log, RENDER_FN_PRODUCE);
  produce_fn(c->log, P, k, self);
  render_in_fn(c->log, RENDER_FN_CONSUME);
  consume_fn(c->log, P, k, self);
  render_in_fn(c->log, RENDER_FN_KERNEL);
  split_plan_close(A, sp);
}

/* The sm90a contraction consumers' epilogue, Op::store_tile(p, acc, c):
 * the consumer role's statements after the k-loop's rest, one call each on
 * the tile's state c (templates/sm90a_contraction.cuh, Sm90aTile): the
 * wait for the last wgmma group, the consumers' barrier, the staging, the
 * barrier, and the output's pairs, the full-width one on column c.n0.
 * verify_sm90a_consumers admits only that list. */
static void t_wgmma_wait(sm80_render *r, const gpu_stmt *st) { r_line(r, st, "dlc::wgmma_wait<0>();"); }

static void t_stage_acc(sm80_render *r, const gpu_stmt *st) { r_line(r, st, "float *stage = c.stage_acc(acc);"); }

static void t_epilogue(sm80_render *r, const gpu_stmt *st) { r_epilogue_pair(r, st, "c.n0"); }

static const sm80_render_fn SM90A_TAIL_RENDER[GS__COUNT] = {
    [GS_WGMMA_WAIT] = t_wgmma_wait, [GS_BARRIER] = h_barrier,     [GS_STAGE_ACC] = t_stage_acc,
    [GS_EPILOGUE] = t_epilogue,     [GS_ST_GLOBAL] = r_st_global,
};

static void store_tile_fn(arena *A, render_log *log, strbuf *s, const gpu_kernel *k, const char *sname) {
  int i = 0;
  while (i < k->nst && !(k->st[i].k == GS_END_LOOP && k->st[i].loop == GLOOP_REST)) i++;
  sb_printf(s, "  // the consumers' epilogue (GPU IR): one line a statement, each a primitive of the tile's\n"
               "  // state c (templates/sm90a_contraction.cuh, Sm90aTile)\n"
               "  template <class C, int N>\n"
               "  static __device__ __forceinline__ void store_tile(const Params *p, const float (&acc)[N], const C &c) {\n"
               "    using Self = %s;\n",
            sname);
  render_stmts(A, log, s, k, i + 1, false, SM90A_TAIL_RENDER);
}

static void sm90a_dump(cJSON *g, const gpu_kernel *k) { dump_contraction(g, k, true); }

/* ---- the pipeline's part ----------------------------------------------------------------- */

/* a plain GEMM region whose operands TMA tensor maps describe
 * (gpuir_sm90a_fits) */
static bool tma_fits(const region_set *rs, const pc_report *pc) {
  const char *why;
  return rs->n == 1 && rs->r[0].acc_let >= 0 && gpuir_sm90a_fits(&rs->r[0], &pc->a[0], &why);
}

/* a contraction whose operands no tensor map describes but which run
 * along their innermost K axis (an implicit GEMM's im2col operand:
 * gpuir_sm90a_gather_fits) */
static bool gather_fits(const region_set *rs, const pc_report *pc) {
  const char *why;
  return rs->n == 1 && rs->r[0].acc_let >= 0 && gpuir_sm90a_gather_fits(&rs->r[0], &pc->a[0], &why);
}

static bool sm90a_verify_plan(const region_set *rs, const pc_report *pc, const sched_plan *p,
                              const arch_info *const *archs, int na, const char *at, diag_list *dl) {
  bool ok = (p->algo == ALGO_TMA_WGMMA || p->algo == ALGO_CPASYNC_WGMMA) && na == 1;
  /* the consumers' warps and the producer warpgroup */
  ok &= p->threads == 32 * p->warps_m * p->warps_n + 128 && p->warps_m * p->warps_n == 8;
  ok &= p->smem_bytes <= archs[0]->smem_per_block;
  if (!ok)
    diag_report(dl, D_INTERNAL, "plan", NULL,
                "the sm90a contraction plan (%s, %d threads, %d x %d consumer warps, %d bytes of shared memory) does not fit %s",
                algo_name(p->algo), p->threads, p->warps_m, p->warps_n, p->smem_bytes, archs[0]->name);
  return ok;
}

static gpu_kernel *tma_build(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p, const char *name,
                             diag_list *dl) {
  return gpuir_build_sm90a(A, &rs->r[0], &pc->a[0], p, name, dl);
}

static gpu_kernel *gather_build(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                                const char *name, diag_list *dl) {
  return gpuir_build_sm90a_gather(A, &rs->r[0], &pc->a[0], p, name, dl);
}

/* ---- the skeletons' table ---------------------------------------------------------- */

static bool tma_verify(const gpu_kernel *k, diag_list *dl) {
  /* the epilogue's threads: the consumers' */
  bool ok = verify_epilogue_width(k, k->plan.tile[1], k->v.out_dt, k->threads - 128, dl);
  ok &= verify_sm90a(k, &TMA_LISTS, dl);
  ok &= gpuir_verify_stores(k, false, dl);
  return ok;
}

static bool gather_verify(const gpu_kernel *k, diag_list *dl) {
  bool ok = verify_epilogue_width(k, k->plan.tile[1], k->v.out_dt, k->threads - 128, dl);
  ok &= verify_sm90a(k, &GATHER_LISTS, dl);
  ok &= gpuir_verify_stores(k, false, dl);
  return ok;
}

static void sm90a_render(emit_ctx *c, const op_split *sp, const emit_op *eo, const emit_instance *in) {
  sm90a_op(c, sp, eo, in->k);
}

const skel_ops skel_sm90a_contraction = {
    .algo = ALGO_TMA_WGMMA, .shape = SKEL_CONTRACTION, .arch = ARCH_SM90A, .only = true,
    .fits = tma_fits,       .verify_plan = sm90a_verify_plan, .build = tma_build,
    .verify = tma_verify,   .render_split = sm90a_render,           .dump = sm90a_dump,
};
const skel_ops skel_sm90a_gather_contraction = {
    .algo = ALGO_CPASYNC_WGMMA, .shape = SKEL_CONTRACTION, .arch = ARCH_SM90A, .only = true,
    .fits = gather_fits,        .verify_plan = sm90a_verify_plan, .build = gather_build,
    .verify = gather_verify,    .render_split = sm90a_render,           .dump = sm90a_dump,
};
