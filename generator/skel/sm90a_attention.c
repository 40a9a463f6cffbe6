/* The sm90a attention skeleton (algo_choice wgmma_softmax,
 * templates/sm90a_attention.cuh), for sm90a alone: a TMA producer
 * warpgroup fills Q and a ring of K/V tiles, two consumer warpgroups run
 * QK^T as SS wgmma and P V as RS wgmma with P in registers (FA3 style).
 * Here are whether the regions fit (gpuir_sm90a_attention_fits), the GPU
 * IR builder (from the sm80 attention's kernel), its checks
 * (verify_sm90a_attention, verify_sm90a_att_consumers) and its producer
 * and consumer renderers (att_produce_fn, att_consume_fn), which
 * attention_op calls for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "emit_int.h"
#include "gpuir_int.h"
#include "skel.h"
#include "strbuf.h"

/* Whether Read rd of region r is what one tensor map describes (gpu_tmap):
 * a plain Read of a signature tensor of rank 2 to 5 whose last index is
 * the head-dim axis `col`, one index the row axis `row`, and every other an
 * axis of the batch group or a constant.  Fills *tm (rows left 0). */
static bool att_tmap_of(const region *r, const rexpr *rd, int row, int col, const int *b_axes, int nb, gpu_tmap *tm) {
  if (!rd || rd->k != RX_READ || rd->ldvar) return false;
  const region_memref *m = &r->in[rd->input];
  if (!m->signature || m->rank < 2 || m->rank > GPUIR_TMAP_RANK || rd->nmap != m->rank) return false;
  const char *last = sx_as_var(rd->map[m->rank - 1]);
  if (!last || strcmp(last, r->it[col].name) != 0) return false;
  int row_dim = -1;
  for (int d = 0; d + 1 < m->rank; d++) {
    int64_t cst;
    const char *x = sx_as_var(rd->map[d]);
    if (!x) {
      if (!sx_is_int(rd->map[d], &cst) || cst < 0) return false;
      continue;
    }
    if (strcmp(x, r->it[row].name) == 0) {
      if (row_dim >= 0) return false;
      row_dim = d;
      continue;
    }
    bool batch = false;
    for (int i = 0; i < nb; i++) batch |= strcmp(x, r->it[b_axes[i]].name) == 0;
    if (!batch) return false;
  }
  if (row_dim < 0) return false;
  *tm = (gpu_tmap){r->in[rd->input].name, r, m, rd->map, m->rank, row_dim, 0, row, col};
  return true;
}

bool gpuir_sm90a_attention_fits(const region_set *rs, const pc_report *pc, const char **why) {
  *why = NULL;
  int64_t d = 0, dv = 0;
  if (rs->n != 2 || !pc->a[0].con.present || !pc->a[1].con.present || pc->a[0].con.nk != 1 || pc->a[1].con.nn != 1) {
    *why = "not two contraction regions with one head-dim axis each";
    return false;
  }
  const region *r1 = &rs->r[0], *r2 = &rs->r[1];
  const pc_contraction *c1 = &pc->a[0].con, *c2 = &pc->a[1].con;
  gpu_tmap tm;
  if (!sx_is_int(r1->it[c1->k_axes[0]].size, &d) || !sx_is_int(r2->it[c2->n_axes[0]].size, &dv))
    *why = "the head dims are not compile-time constants";
  else if ((d != 64 && d != 128) || (dv != 64 && dv != 128))
    *why = "the head dims are not 64 or 128 (whole 128-byte swizzle rows; wgmma N for P V)";
  else if (r1->in[c1->lhs].dt != r1->in[c1->rhs].dt || r1->in[c1->lhs].dt != r2->in[c2->rhs].dt ||
           (r1->in[c1->lhs].dt != DT_FP16 && r1->in[c1->lhs].dt != DT_BF16))
    *why = "Q, K and V are not all fp16 or all bf16";
  else if (c1->nm != 1 || c1->nn != 1 || c2->nk != 1)
    *why = "the queries or the keys are not one axis (a tensor map's box takes one row dim)";
  else if (!att_tmap_of(r1, c1->lhs_read, c1->m_axes[0], c1->k_axes[0], c1->b_axes, c1->nb, &tm))
    *why = "Q is not read as a signature tensor Q[batch..., query, head dim] (rank 2 to 5) that a tensor map describes";
  else if (!att_tmap_of(r1, c1->rhs_read, c1->n_axes[0], c1->k_axes[0], c1->b_axes, c1->nb, &tm))
    *why = "K is not read as a signature tensor K[batch..., key, head dim] (rank 2 to 5) that a tensor map describes";
  else if (!att_tmap_of(r2, c2->rhs_read, c2->k_axes[0], c2->n_axes[0], c2->b_axes, c2->nb, &tm))
    *why = "V is not read as a signature tensor V[batch..., key, head dim] (rank 2 to 5) that a tensor map describes";
  return *why == NULL;
}

/* The sm90a attention's statements, in groups: the setup (tile, shared
 * tiles, barriers), the producer (Q once, then K and V of each live key
 * tile through the ring), and the consumers' statements before their key
 * tiles and at each of them (pass 0 the full tiles, 1 the other live
 * ones): the ping-pong turn, S = Q K^T, the score lets and the online
 * softmax, O += P V, the slot's release. */
static void att90_setup(gpu_kernel *k, arena *A, const sched_plan *p, const char *batch) {
  int BM = p->tile[0], BN = p->tile[1], S = p->stages, D = k->D, DV = k->DV, eb = dtype_bytes(k->T);
  const char *T = dtype_name(k->T);
  gpuir_push(k, A, GS_TILE_COORD, "(m.o, batch) <- (blockIdx.x, blockIdx.y)",
             arena_printf(A,
                          "%d query rows of batch %s; key tiles up to the last one the mask leaves anything of "
                          "(Op::tile_live)",
                          BM, batch),
             0, 0, 0, 0);
  gpuir_push(
      k, A, GS_ALLOC_SHARED, "smQ",
      arena_printf(
          A, "%s [%d][%d][64] (%d column blocks of %d query rows x 128 bytes), %d TMA boxes {64, %d}, 128B swizzle", T,
          D / 64, BM, D / 64, BM, D / 64, BM),
      0, 0, 0, 0)
      ->side = GSIDE_A;
  gpuir_push(
      k, A, GS_ALLOC_SHARED, "smK,smV",
      arena_printf(A,
                   "%s [%d][%d][%d][64] and [%d][%d][%d][64] ring (keys x 128-byte blocks of D and DV), TMA boxes "
                   "{64, %d}, 128B swizzle",
                   T, S, D / 64, BN, S, DV / 64, BN, BN),
      0, 0, 0, 0)
      ->side = GSIDE_B;
  mbar_init(k, A, GMBAR_Q, "qfull", 1, arena_printf(A, "1 arrival + the Q tile's %d bytes", BM * D * eb), 0);
  mbar_init(k, A, GMBAR_FULL, "full[s]", 1,
            arena_printf(A, "%d slots, 1 arrival + the stage's %d bytes", S, BN * (D + DV) * eb), 0);
  mbar_init(
      k, A, GMBAR_EMPTY, "empty[s]", 256,
      arena_printf(A, "%d slots, 256 arrivals (every consumer thread); a fresh slot is free (parity 1 completes)", S),
      gpuir_tok_at(k, A, "tFree", "i"));
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "the barriers are initialized", 0, 0, 0, 0);
}

static void att90_producer(gpu_kernel *k, arena *A, const sched_plan *p, const char *batch) {
  int BM = p->tile[0], BN = p->tile[1], S = p->stages, D = k->D, DV = k->DV, eb = dtype_bytes(k->T);
  /* the producer: Q once, then K and V of every live key tile, in the
   * consumers' order, through the ring (i counts the tiles of both passes) */
  gpuir_push(k, A, GS_ROLE, "producer", "warpgroup 0; one elected lane of warp 0 issues the copies", 0, 0, 0, 0)->role =
      GROLE_PRODUCER;
  setmaxnreg(k, A, false);
  gpuir_push(k, A, GS_MBAR_ARRIVE, "qfull",
             arena_printf(A, "arrive.expect_tx: the Q tile's %d bytes, which its boxes complete", BM * D * eb), 0, 0, 0,
             0)
      ->mbar = GMBAR_Q;
  gpuir_push(
      k, A, GS_TMA_LOAD, arena_printf(A, "smQ <- %s", k->A.tensor),
      arena_printf(A, "%d boxes {64, %d} of a rank-%d map at (64 j, m.o * %d, batch %s); past the queries: zero fill",
                   D / 64, BM, k->tmq.rank, BM, batch),
      gpuir_tok(k, A, "tQ"), 0, 0, 0)
      ->side = GSIDE_A;
  /* pass 0 (lo): the full key tiles, pass 1 the other live ones */
  for (int pass = 0; pass < 2; pass++) {
    int tk = gpuir_tok_at(k, A, pass ? "tKm" : "tKf", "t"), tv = gpuir_tok_at(k, A, pass ? "tVm" : "tVf", "t");
    gpuir_push(k, A, GS_LOOP, "t",
               pass ? "the other live key tiles (Op::tile_live: the mask predicate's affine bound)"
                    : "full key tiles first (Op::tile_full: no mask removes anything; inside the keys)",
               0, 0, 0, 0)
        ->lo = pass;
    gpuir_push(k, A, GS_MBAR_WAIT, "empty[i % S]", "parity ((i / S) & 1) ^ 1: the consumers released the slot", 0, 1,
               gpuir_tok_at(k, A, "tFree", "i"), 0)
        ->mbar = GMBAR_EMPTY;
    gpuir_push(
        k, A, GS_MBAR_ARRIVE, "full[i % S]",
        arena_printf(A, "arrive.expect_tx: the stage's %d bytes, which the K and V boxes complete", BN * (D + DV) * eb),
        0, 0, 0, 0)
        ->mbar = GMBAR_FULL;
    gpuir_push(k, A, GS_TMA_LOAD, arena_printf(A, "smK[i%%%d] <- %s", S, k->B.tensor),
               arena_printf(A, "%d boxes {64, %d} of a rank-%d map at (64 j, t * %d, batch %s)%s", D / 64, BN,
                            k->tmk.rank, BN, batch, pass ? "; past the keys: zero fill" : ""),
               tk, 0, 0, 0)
        ->side = GSIDE_B;
    gpuir_push(k, A, GS_TMA_LOAD, arena_printf(A, "smV[i%%%d] <- %s", S, k->V.tensor),
               arena_printf(A, "%d boxes {64, %d} of a rank-%d map at (64 j, t * %d, batch %s)%s", DV / 64, BN,
                            k->tmv.rank, BN, batch, pass ? "; past the keys: zero fill" : ""),
               tv, 0, 0, 0)
        ->side = GSIDE_V;
    gpuir_push(k, A, GS_END_LOOP, "t", NULL, 0, 0, 0, 0);
  }
}

static void att90_consumers_head(gpu_kernel *k, arena *A, const sched_plan *p) {
  const region *r1 = k->r;
  int BM = p->tile[0], BN = p->tile[1], D = k->D;
  /* the consumers */
  gpuir_push(
      k, A, GS_ROLE, "consumers",
      arena_printf(A,
                   "warpgroups 1 and 2 (wg 0 and 1 of the consumers): rows 64 wg .. 64 wg + 63 of the %d-row tile, 16 "
                   "a warp",
                   BM),
      0, 0, 0, 0)
      ->role = GROLE_CONSUMERS;
  setmaxnreg(k, A, true);
  gpuir_push(
      k, A, GS_FRAG_SETUP, "wgmma descriptors of smQ, smK and smV",
      arena_printf(A,
                   "Q's at each of its %d k16 steps, at the warpgroup's 64 rows (+ 64 wg x 128 bytes); K's and V's "
                   "low words at slot 0 (K-major, and V MN-major with LBO %d); SBO 1024, 128B swizzle",
                   D / 16, BN * 128),
      0, 0, 0, 0);
  gpuir_push(k, A, GS_ACC_ZERO, "O",
             arena_printf(A, "O <- 0; each lane's rows: %s <- its init, %s <- 0", r1->lets[k->sm.max].name,
                          r1->lets[k->sm.sum].name),
             0, 0, 0, 0);
  gpuir_push(k, A, GS_MBAR_WAIT, "qfull", "parity 0: the Q boxes landed", 0, 1, gpuir_tok(k, A, "tQ"), 0)->mbar =
      GMBAR_Q;
  gpuir_push(k, A, GS_BARRIER, "bar.arrive 2, 256", "wg 1 only: wg 0 takes the tensor cores first", 0, 0, 0, 0)->bar =
      GBAR_FIRST_TURN;
}

static void att90_key_tiles(gpu_kernel *k, arena *A, const sched_plan *p, const region *r2, int pass, const char *score) {
  const region *r1 = k->r;
  int BN = p->tile[1], D = k->D, DV = k->DV;
  const char *T = dtype_name(k->T);
  int tk = gpuir_tok_at(k, A, pass ? "tKm" : "tKf", "t"), tv = gpuir_tok_at(k, A, pass ? "tVm" : "tVf", "t");
  gpuir_push(k, A, GS_LOOP, "t",
             pass ? "the other live key tiles, as the producer" : "full key tiles first, as the producer", 0, 0, 0, 0)
      ->lo = pass;
  gpuir_push(k, A, GS_MBAR_WAIT, "full[i % S]", "parity (i / S) & 1: the K and V boxes landed", 0, 2, tk, tv)->mbar =
      GMBAR_FULL;
  gpuir_push(k, A, GS_BARRIER, "bar.sync 2 + wg, 256", "ping-pong: this warpgroup's turn (the other issued its S)", 0,
             0, 0, 0)
      ->bar = GBAR_TURN;
  gpuir_push(k, A, GS_WGMMA,
             arena_printf(A, "wgmma.mma_async.m64n%dk16.f32.%s.%s x %d: S = Q K^T (%s)", BN, T, T, D / 16,
                          r1->lets[r1->acc_let].name),
             "SS: Q and K K-major; descriptors 128B swizzle, SBO 1024, k16 step 32 bytes (a column block every 4)",
             gpuir_tok(k, A, "tS"), 2, gpuir_tok(k, A, "tQ"), tk)
      ->side = GSIDE_B;
  gpuir_push(k, A, GS_BARRIER, "bar.arrive 2 + (wg ^ 1), 256",
             "ping-pong: the other warpgroup's turn, while this one waits for S and runs the softmax", 0, 0, 0, 0)
      ->bar = GBAR_HAND_OFF;
  gpuir_push(k, A, GS_WGMMA_WAIT, "wgmma.commit_group; wgmma.wait_group 0", "S is complete in the accumulators", 0, 1,
             gpuir_tok(k, A, "tS"), 0)
      ->lo = 0;
  gpuir_push(
      k, A, GS_EPILOGUE, pass ? "score" : "score_full",
      pass ? arena_printf(A, "lets: %s; key tails -> %s's neutral", *score ? score : "(none)", r1->lets[k->sm.max].name)
           : arena_printf(A, "lets: %s, each mask its kept branch; no per-element test", *score ? score : "(none)"),
      gpuir_tok(k, A, "tScore"), 1, gpuir_tok(k, A, "tS"), 0)
      ->step = pass ? GSTEP_SCORE : GSTEP_SCORE_FULL;
  emit_online_softmax(k, A, r1);
  gpuir_push(
      k, A, GS_EPILOGUE, "P fragments",
      k->sm.pt == DT_FP32
          ? arena_printf(A, "%s: fp32 P as hi + lo %s wgmma A fragments in registers (deferred; two wgmma a step)",
                         r1->lets[k->sm.p].name, T)
          : arena_printf(A, "%s: cvt to %s wgmma A fragments in registers (deferred)", r1->lets[k->sm.p].name,
                         dtype_name(k->sm.pt)),
      gpuir_tok(k, A, "tPf"), 1, gpuir_tok(k, A, "tP"), 0)
      ->step = GSTEP_P_FRAGS;
  gpuir_push(k, A, GS_WGMMA,
             arena_printf(A, "wgmma.mma_async.m64n%dk16.f32.%s.%s x %d%s: O += P V (%s)", DV, T, T, BN / 16,
                          k->sm.pt == DT_FP32 ? " x 2" : "", r2->lets[r2->acc_let].name),
             "RS: P from registers; V MN-major (imm-trans-b 1), 128B swizzle, SBO 1024, LBO one column block, k16 step "
             "2048 bytes",
             gpuir_tok(k, A, "tO"), 2, gpuir_tok(k, A, "tPf"), tv)
      ->side = GSIDE_V;
  gpuir_push(k, A, GS_WGMMA_WAIT, "wgmma.commit_group; wgmma.wait_group 0",
             "O and P's registers are free; tile t is read", 0, 1, gpuir_tok(k, A, "tO"), 0)
      ->lo = 0;
  gpuir_push(k, A, GS_MBAR_ARRIVE, "empty[i % S]", "release the slot to the producer",
             gpuir_tok_at(k, A, "tFree", "i+S"), 0, 0, 0)
      ->mbar = GMBAR_EMPTY;
  gpuir_push(k, A, GS_END_LOOP, "t", NULL, 0, 0, 0, 0);
}

gpu_kernel *gpuir_build_sm90a_attention(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                                        const char *name, diag_list *dl) {
  const char *at = arena_printf(A, "GPU IR[%s]", rs->n ? rs->r[0].name : "?"), *why;
  if (!gpuir_sm90a_attention_fits(rs, pc, &why)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "the regions do not fit the sm90a attention skeleton (%s): %s",
                algo_name(ALGO_WGMMA_SOFTMAX), why);
    return NULL;
  }
  gpu_kernel *k = gpuir_build_attention(A, rs, pc, p, name, dl);
  if (!k) return NULL;
  const region *r1 = &rs->r[0], *r2 = &rs->r[1];
  int BM = p->tile[0], BN = p->tile[1], D = k->D, DV = k->DV, eb = dtype_bytes(k->T);
  k->algo = ALGO_WGMMA_SOFTMAX;
  k->threads = p->threads;
  k->smem = p->smem_bytes;
  k->producer_regs = PLAN_SM90A_ATT_PRODUCER_REGS, k->consumer_regs = PLAN_SM90A_ATT_CONSUMER_REGS;
  k->nvec = 1, k->vecs[0] = 16 / eb; /* 128-byte swizzle rows of TMA boxes: one kernel */
  /* the tensor maps (gpuir_sm90a_attention_fits checked that they exist) */
  const pc_contraction *c1 = &pc->a[0].con, *c2 = &pc->a[1].con;
  att_tmap_of(r1, c1->lhs_read, c1->m_axes[0], c1->k_axes[0], c1->b_axes, c1->nb, &k->tmq);
  att_tmap_of(r1, c1->rhs_read, c1->n_axes[0], c1->k_axes[0], c1->b_axes, c1->nb, &k->tmk);
  att_tmap_of(r2, c2->rhs_read, c2->k_axes[0], c2->n_axes[0], c2->b_axes, c2->nb, &k->tmv);
  k->tmq.rows = BM, k->tmk.rows = BN, k->tmv.rows = BN;
  int S = p->stages;
  /* Q, then the ring of S K and V stages, from byte 1024 (the kernel aligns
   * the block's shared memory to the swizzle's 1024-byte period): each tile
   * is column blocks of 64 elements (one 128-byte swizzle row a tile row),
   * one TMA box each */
  k->ntiles = 0;
  int end = add_tile(k, "smQ", 1024, 1, BM * (D / 64), 64, eb);
  end = add_tile(k, "smK", end, S, BN * (D / 64), 64, eb);
  add_tile(k, "smV", end, S, BN * (DV / 64), 64, eb);
  /* the sm80 row's closing statements: the row sums' Reduce, then finish,
   * staging, epilogue and stores */
  int fin = -1, sum = -1;
  for (int i = 0; i < k->nst && fin < 0; i++) {
    if (k->st[i].k == GS_REDUCE) sum = i;
    if (k->st[i].k == GS_EPILOGUE && k->st[i].step == GSTEP_FINISH) fin = i;
  }
  if (fin < 0 || sum < 0) {
    diag_report(dl, D_INTERNAL, at, NULL, "the attention statements have no row sums' reduction or finish step");
    return NULL;
  }
  const gpu_stmt row_sums = k->st[sum];
  /* (not the sm80 row's bar.sync after staging: the consumers' named
   * barrier there is this row's) */
  int ntail = 0;
  gpu_stmt *tail = ARENA_ARRAY(A, gpu_stmt, k->nst - fin);
  for (int i = fin; i < k->nst; i++)
    if (k->st[i].k != GS_BARRIER) tail[ntail++] = k->st[i];
  k->nst = 0;
  const char *batch = gpuir_axes(A, r1, k->v.b_axes, k->v.nb); /* the batch axes, as the prose names them */
  att90_setup(k, A, p, batch);
  att90_producer(k, A, p, batch);
  att90_consumers_head(k, A, p);
  const char *score = "";
  for (int l = 0; l <= k->sm.x; l++)
    if (l != r1->acc_let) score = arena_printf(A, "%s%s%s", score, *score ? ", " : "", r1->lets[l].name);
  for (int pass = 0; pass < 2; pass++) att90_key_tiles(k, A, p, r2, pass, score);
  gpuir_push(k, A, GS_BARRIER, "bar.sync 2, 256", "wg 0 only: wg 1's last arrival (one more than wg 0's turns)", 0, 0,
             0, 0)
      ->bar = GBAR_LAST_TURN;
  ARENA_PUSH(A, k->st, k->nst, k->cap_st, row_sums);
  gpuir_push(k, A, GS_BARRIER, "bar.sync 1, 256",
             "the consumers are past their last wgmma: Q and the ring are free for the staging tile", 0, 0, 0, 0)
      ->bar = GBAR_CONSUMERS;
  for (int i = 0; i < ntail; i++) {
    ARENA_PUSH(A, k->st, k->nst, k->cap_st, tail[i]);
    if (tail[i].k == GS_STAGE_ACC)
      gpuir_push(k, A, GS_BARRIER, "bar.sync 1, 256", "staging tile complete", 0, 0, 0, 0)->bar = GBAR_CONSUMERS;
  }
  return k; /* the pipeline verifies it */
}

/* What verify_sm90a_setup and verify_sm90a_producer compare the kernel
 * with: its setup (Q's barrier too), its consumers' state, and its
 * producer's statements as att_produce_fn writes them. */
static const setup_step ATT_SETUP[] = {
    SM90A_SETUP_HEAD("K's and V's ring"), {GS_MBAR_INIT, GSIDE_NONE, GMBAR_Q, 0, "Q's barrier's init"}, SM90A_SETUP_TAIL};

static const setup_step ATT_CONSUMERS[] = {
    {GS_ROLE, GSIDE_NONE, GMBAR_NONE, GROLE_CONSUMERS, "the consumers' role"},
    {GS_SETMAXNREG, GSIDE_NONE, GMBAR_NONE, GROLE_CONSUMERS, "the consumers' setmaxnreg.inc"},
    {GS_FRAG_SETUP, GSIDE_NONE, GMBAR_NONE, GROLE_NONE, "the consumers' descriptors"},
};

/* the attention's: Q's arrival and boxes, then a pass over the full key
 * tiles and one over the other live ones (the Loop's lo), K's and V's
 * boxes of each after the wait on its slot and the arrival that arms it */
static const producer_step ATT_PRODUCER[] = {
    {GS_MBAR_ARRIVE, GSIDE_NONE, -1, "the arrival on qfull with the Q tile's bytes"},
    {GS_TMA_LOAD, GSIDE_A, -2, "Q's boxes"},
    {GS_LOOP, GSIDE_NONE, 0, "the loop over the full key tiles"},
    {GS_MBAR_WAIT, GSIDE_NONE, -2, "the wait on the slot's empty barrier"},
    {GS_MBAR_ARRIVE, GSIDE_NONE, -1, "the arrival on the slot's full barrier with the stage's bytes"},
    {GS_TMA_LOAD, GSIDE_B, -2, "K's boxes"},
    {GS_TMA_LOAD, GSIDE_V, -2, "V's boxes"},
    {GS_END_LOOP, GSIDE_NONE, -2, "the loop's end"},
    {GS_LOOP, GSIDE_NONE, 1, "the loop over the other live key tiles"},
    {GS_MBAR_WAIT, GSIDE_NONE, -2, "the wait on the slot's empty barrier"},
    {GS_MBAR_ARRIVE, GSIDE_NONE, -1, "the arrival on the slot's full barrier with the stage's bytes"},
    {GS_TMA_LOAD, GSIDE_B, -2, "K's boxes"},
    {GS_TMA_LOAD, GSIDE_V, -2, "V's boxes"},
    {GS_END_LOOP, GSIDE_NONE, -2, "the loop's end"},
};

static const sm90a_lists ATT_LISTS = {"attention",   ATT_SETUP,    SM90A_N(ATT_SETUP),
                                      ATT_CONSUMERS, SM90A_N(ATT_CONSUMERS),
                                      "attention",   ATT_PRODUCER, SM90A_N(ATT_PRODUCER),
                                      1};

/* The sm90a attention skeleton's invariants: a producer warpgroup and two
 * consumer warpgroups of 64 query rows, key tiles and head dims that are
 * wgmma N and whole 128-byte swizzle rows, a ring of at least 2 stages,
 * tiles on 1024-byte boundaries (the TMA boxes' and the descriptors'
 * swizzle period), setmaxnreg budgets in range within the register file;
 * tensor maps of rank 2 to 5 whose boxes fill the tiles; every copy a TMA
 * box issued by the producer, a ring slot's after the wait on its empty
 * barrier; every wgmma that reads a box after a consumer's wait on the full
 * barrier that covers it; every S = Q K^T wgmma issued in its warpgroup's
 * ping-pong turn; every read of a wgmma's result after the
 * wgmma.wait_group that covers it; and a stage released on its empty
 * barrier only after the wait for the last wgmma that reads it, before the
 * key tile ends. */
static bool verify_sm90a_attention(const gpu_kernel *k, diag_list *dl) {
  bool ok = true;
  const sched_plan *p = &k->plan;
  int S = p->stages, BM = p->tile[0], BN = p->tile[1];
  if (k->threads != 384 || BM != 128 || (BN != 64 && BN != 128) || S < 2 || (k->D != 64 && k->D != 128) ||
      (k->DV != 64 && k->DV != 128) || k->nvec != 1 || k->vecs[0] * dtype_bytes(k->T) != 16) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                "the sm90a attention skeleton runs 128 producer + 256 consumer threads on 128 query rows, key tiles of "
                "64 or 128 in a ring of >= 2 stages, head dims of 64 or 128 and 16-byte rows, not %d threads, %dx%d, "
                "%d stages, %d / %d",
                k->threads, BM, BN, S, k->D, k->DV);
    ok = false;
  }
  ok &= verify_setmaxnreg(k, 256, dl);
  for (int i = 0; i < k->ntiles; i++) {
    const gpu_smem_tile *t = &k->tiles[i];
    int slot = t->rows * t->row_elems * t->elem_bytes;
    if (t->offset % 1024 || slot % 1024 || t->row_elems * t->elem_bytes != 128 || t->swz != 8 ||
        t->copies != (i == 0 ? 1 : S)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                  "tile %s: %d slots of %d bytes from byte %d are not on 1024-byte boundaries in 128-byte swizzle rows",
                  t->name, t->copies, slot, t->offset);
      ok = false;
    }
  }
  const gpu_tmap *tms[3] = {&k->tmq, &k->tmk, &k->tmv};
  for (int i = 0; i < 3; i++) {
    const gpu_tmap *tm = tms[i];
    if (tm->rank < 2 || tm->rank > GPUIR_TMAP_RANK || tm->row_dim < 0 || tm->row_dim >= tm->rank - 1 ||
        tm->rows != (i ? BN : BM)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "tensor map of %s: rank %d, row dim %d, boxes of %d rows do not fill its tile",
                  tm->tensor ? tm->tensor : "?", tm->rank, tm->row_dim, tm->rows);
      ok = false;
    }
  }
  gpu_role role = GROLE_NONE;
  bool freed = false;
  int last_wg = -1, last_wgwait = -1, last_release = -1, role_at = 0, loop_at = 0, last_turn = -1;
  /* the token of Q's boxes (the producer's first copy: A is Q) */
  int tq = 0;
  for (int i = 0; i < k->nst && !tq; i++)
    if (k->st[i].k == GS_TMA_LOAD && k->st[i].side == GSIDE_A) tq = k->st[i].out;
  for (int i = 0; i < k->nst; i++) {
    const gpu_stmt *s = &k->st[i];
    if (s->k == GS_ROLE) {
      role = s->role;
      role_at = i;
    }
    if (s->k == GS_ROLE || s->k == GS_LOOP) freed = false;
    if (s->k == GS_MBAR_WAIT && s->nin == 1 && s->mbar == GMBAR_EMPTY) freed = true;
    if (s->k == GS_CP_ASYNC || (s->k == GS_TMA_LOAD && role != GROLE_PRODUCER)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "copy %s is not a TMA box of the producer", s->what);
      ok = false;
    }
    if (s->k == GS_TMA_LOAD && s->side != GSIDE_A && !freed) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "copy %s does not wait for its slot's empty barrier", s->what);
      ok = false;
    }
    if ((s->k == GS_WGMMA || s->k == GS_STAGE_ACC || s->k == GS_EPILOGUE) && role != GROLE_CONSUMERS) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "%s runs outside the consumers", s->what);
      ok = false;
    }
    if (s->k == GS_LOOP) loop_at = i;
    if (s->k == GS_BARRIER && s->bar == GBAR_TURN) last_turn = i;
    if (s->k == GS_WGMMA && s->nin && tq && s->in[0] == tq) {
      /* ping-pong: S = Q K^T is issued in the warpgroup's turn (its
       * scheduler barrier, in this key tile), and the other warpgroup's
       * turn begins (bar.arrive) before this one waits for S */
      bool handed = false;
      for (int j = i + 1; j < k->nst && k->st[j].k != GS_WGMMA_WAIT; j++)
        handed |= k->st[j].k == GS_BARRIER && k->st[j].bar == GBAR_HAND_OFF;
      if (last_turn < loop_at || !handed) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                    "%s is not issued in its warpgroup's ping-pong turn (bar.sync on its scheduler barrier before, "
                    "bar.arrive on the other's before the wait)",
                    s->what);
        ok = false;
      }
    }
    if (s->k == GS_WGMMA) {
      last_wg = i;
      /* the boxes it reads: waited for on a full barrier by the consumers */
      for (int t = 0; t < s->nin; t++) {
        bool box = false, waited = false;
        for (int j = 0; j < k->nst; j++) box |= k->st[j].k == GS_TMA_LOAD && k->st[j].out == s->in[t];
        for (int j = role_at; j < i; j++)
          if (k->st[j].k == GS_MBAR_WAIT)
            for (int u = 0; u < k->st[j].nin; u++) waited |= k->st[j].in[u] == s->in[t];
        if (box && !waited) {
          diag_report(dl, D_INTERNAL, "GPU IR", NULL, "%s reads box %s before the consumers wait on its full barrier",
                      s->what, gpuir_tok_name(k, s->in[t]));
          ok = false;
        }
      }
    }
    if (s->k == GS_WGMMA_WAIT) last_wgwait = i;
    if (s->k == GS_MBAR_ARRIVE && role == GROLE_CONSUMERS) {
      if (!(last_wg >= 0 && last_wgwait > last_wg)) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL, "%s releases a stage a wgmma in flight may read", s->what);
        ok = false;
      }
      last_release = i;
    }
    /* a wgmma's result is read only after the wait that covers it */
    for (int t = 0; t < s->nin && s->k != GS_WGMMA_WAIT; t++)
      for (int j = i - 1; j >= 0; j--) {
        const gpu_stmt *w = &k->st[j];
        if (w->k == GS_WGMMA_WAIT && w->nin && w->in[0] == s->in[t]) break;
        if (w->k == GS_WGMMA && w->out && w->out == s->in[t]) {
          diag_report(dl, D_INTERNAL, "GPU IR", NULL, "%s reads %s before a wgmma.wait_group covers it", s->what,
                      gpuir_tok_name(k, s->in[t]));
          ok = false;
          break;
        }
      }
    if (s->k == GS_END_LOOP && role == GROLE_CONSUMERS && !(last_wgwait > last_wg && last_release > last_wgwait)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "a key tile ends before its wgmma is waited for and its stage released");
      ok = false;
    }
  }
  return ok;
}

/* The sm90a attention consumers' statements as their renderer writes them
 * (below, att_consume_fn): the accumulators' zero, the wait for Q, the
 * first turn, then per pass (the Loop's lo) a key tile's wait, turn, S,
 * hand-off, wait for S, score (score_full on the full tiles), row max,
 * rescale, probabilities, P's fragments, P V, its wait and the release;
 * after both, the last turn, the row sums, the consumers' barrier, O / l,
 * its staging and the barrier after it.  The output's epilogue pairs
 * follow (verify_sm90a_att_consumers). */
typedef struct att_consumer_step {
  gpu_stmt_kind k;
  gpu_side side; /* Wgmma: S (B, K's box) or P V (V) */
  int lo;        /* Loop: the pass (-2: any) */
  gpu_step step; /* Epilogue */
  gpu_bar bar;   /* Barrier */
  const char *what;
} att_consumer_step;

#define ATT_KEY_TILE(pass, score)                                                                   \
  {GS_LOOP, GSIDE_NONE, pass, GSTEP_NONE, GBAR_CTA, "the loop over the pass's key tiles"},           \
      {GS_MBAR_WAIT, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the wait on the stage's full barrier"},   \
      {GS_BARRIER, GSIDE_NONE, -2, GSTEP_NONE, GBAR_TURN, "the warpgroup's turn"},                    \
      {GS_WGMMA, GSIDE_B, -2, GSTEP_NONE, GBAR_CTA, "S = Q K^T"},                                     \
      {GS_BARRIER, GSIDE_NONE, -2, GSTEP_NONE, GBAR_HAND_OFF, "the other warpgroup's turn"},          \
      {GS_WGMMA_WAIT, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the wait for S"},                        \
      {GS_EPILOGUE, GSIDE_NONE, -2, score, GBAR_CTA, "the score lets"},                               \
      {GS_EPILOGUE, GSIDE_NONE, -2, GSTEP_ROW_MAX, GBAR_CTA, "the row max"},                          \
      {GS_EPILOGUE, GSIDE_NONE, -2, GSTEP_RESCALE, GBAR_CTA, "the rescale"},                          \
      {GS_EPILOGUE, GSIDE_NONE, -2, GSTEP_PROBS, GBAR_CTA, "the probabilities"},                      \
      {GS_EPILOGUE, GSIDE_NONE, -2, GSTEP_P_FRAGS, GBAR_CTA, "P's fragments"},                        \
      {GS_WGMMA, GSIDE_V, -2, GSTEP_NONE, GBAR_CTA, "O += P V"},                                      \
      {GS_WGMMA_WAIT, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the wait for P V"},                      \
      {GS_MBAR_ARRIVE, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the stage's release"},                  \
      {GS_END_LOOP, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the loop's end"}

static const att_consumer_step ATT_CONSUMER[] = {
    {GS_ACC_ZERO, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the accumulators' zero"},
    {GS_MBAR_WAIT, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the wait for Q"},
    {GS_BARRIER, GSIDE_NONE, -2, GSTEP_NONE, GBAR_FIRST_TURN, "warpgroup 1's first arrival"},
    ATT_KEY_TILE(0, GSTEP_SCORE_FULL),
    ATT_KEY_TILE(1, GSTEP_SCORE),
    {GS_BARRIER, GSIDE_NONE, -2, GSTEP_NONE, GBAR_LAST_TURN, "warpgroup 0's last turn"},
    {GS_REDUCE, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the row sums"},
    {GS_BARRIER, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CONSUMERS, "the consumers' barrier"},
    {GS_EPILOGUE, GSIDE_NONE, -2, GSTEP_FINISH, GBAR_CTA, "O / l"},
    {GS_STAGE_ACC, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "O's staging"},
    {GS_BARRIER, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CONSUMERS, "the consumers' barrier"},
};
#undef ATT_KEY_TILE

/* The attention consumers: ATT_CONSUMER from the role's setmaxnreg, then
 * the output's epilogue pairs to the end (the full-width Epilogue and its
 * store when the kernel has EPI_VEC, then the bounds-checked ones). */
static bool verify_sm90a_att_consumers(const gpu_kernel *k, diag_list *dl) {
  int i = sm90a_consumers_from(k, &ATT_LISTS), n = k->nst;
  int nwant = (int)(sizeof ATT_CONSUMER / sizeof *ATT_CONSUMER);
  for (int j = 0; j < nwant; j++, i++) {
    const att_consumer_step *w = &ATT_CONSUMER[j];
    const gpu_stmt *s = i < n ? &k->st[i] : NULL;
    if (!s || s->k != w->k || (w->k == GS_WGMMA && s->side != w->side) || (w->lo != -2 && s->lo != w->lo) ||
        (w->k == GS_EPILOGUE && s->step != w->step) || (w->k == GS_BARRIER && s->bar != w->bar)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the attention consumers' statement %d is not %s (%s)", j, w->what,
                  gpuir_stmt_name(w->k));
      return false;
    }
  }
  return verify_sm90a_outputs(k, i, "attention consumers'", dl);
}

/* The sm90a attention row's box coordinates of a tensor map (gpu_tmap),
 * innermost dim first: the head-dim column ki and the row ri (the box's
 * corner), and each other dim's index from the batch index bi. */
void tmap_box_fn(opgen *g, const gpu_tmap *tm, const char *fname, const char *rk, const char *role) {
  arena *A = g->A;
  strbuf *s = g->s;
  sb_printf(s, "  // %s = %s[", role, cmt(A, tm->tensor));
  for (int d = 0; d < tm->rank; d++) sb_printf(s, "%s%s", d ? ", " : "", sx_str(A, tm->map[d]));
  sb_printf(s, "]: a rank-%d tensor map, boxes of 64 x %d (GPU IR); the box at (ri, ki), innermost dim first\n",
            tm->rank, tm->rows);
  sb_printf(s, "  static constexpr int %s = %d;\n", rk, tm->rank);
  sb_printf(s,
            "  static __device__ __forceinline__ void %s([[maybe_unused]] const Params *p, int64_t ri, int64_t ki, "
            "int64_t bi, int32_t (&c)[%d]) {\n",
            fname, tm->rank);
  sb_printf(s, "    [[maybe_unused]] const int64_t i_%s = ri;\n", cid(A, tm->r->it[tm->row_axis].name));
  sb_printf(s, "    [[maybe_unused]] const int64_t i_%s = ki;\n", cid(A, tm->r->it[tm->col_axis].name));
  decompose(g, "bi", g->v->b_axes, g->v->nb, "    ");
  for (int d = tm->rank - 1; d >= 0; d--)
    sb_printf(s, "    c[%d] = (int32_t)(%s);\n", tm->rank - 1 - d, sxc(A, tm->map[d], false));
  sb_puts(s, "  }\n");
}

/* The sm90a attention's producer, Op::produce, rendered from the GPU IR's
 * producer role (verify_sm90a_producer admits only ATT_PRODUCER's list):
 * Q's arrival with its bytes and boxes, then each pass's Loop over its key
 * tiles (`next(t, full)` walks them in the consumers' order: the full
 * tiles, then the other live ones, up to nt), the MbarWait on the slot's
 * empty barrier, the arrival that arms its full barrier with the stage's
 * bytes, K's and V's boxes, the slot and phase stepped at the EndLoop. */
static void att_produce_fn(render_log *log, strbuf *s, const gpu_kernel *k) {
  sb_puts(s, "  // the producer (GPU IR), one elected lane: Q's boxes, then K's and V's of each key tile the\n"
             "  // consumers take, in their order (next(t, full): the full tiles, then the other live ones)\n"
             "  template <class Next>\n"
             "  static __device__ __forceinline__ void produce(const TParams *tp, T *smQ, T *smK, T *smV, uint64_t *qfull,\n"
             "                                                 uint64_t *full, uint64_t *empty, int64_t m0, int64_t b,\n"
             "                                                 int64_t nt, Next next) {\n"
             "    const Params *p = &tp->p;\n"
             "    constexpr uint32_t Q_BYTES = BM * D * (int)sizeof(T), KV_BYTES = BN * (D + DV) * (int)sizeof(T);\n"
             "    int s = 0;\n"
             "    uint32_t ph = 0;  // the phase of the ring's current lap\n");
  int i = 0;
  while (i < k->nst && !(k->st[i].k == GS_ROLE && k->st[i].role == GROLE_PRODUCER)) i++;
  const char *ind = "    ";
  for (i += 2; i < k->nst && k->st[i].k != GS_ROLE; i++) {
    const gpu_stmt *t = &k->st[i];
    switch (t->k) {
    case GS_LOOP:
      sb_printf(s, "    for (int64_t t = next(-1, %s); t < nt; t = next(t, %s)) {  // Loop t: %s\n",
                t->lo == 0 ? "true" : "false", t->lo == 0 ? "true" : "false",
                t->lo == 0 ? "the full key tiles" : "the other live key tiles");
      ind = "      ";
      break;
    case GS_MBAR_WAIT:
      sb_printf(s, "%sdlc::mbar_wait(&empty[s], ph ^ 1);  // MbarWait %s: a fresh slot is free\n", ind, t->what);
      break;
    case GS_MBAR_ARRIVE:
      if (t->mbar == GMBAR_Q)
        sb_printf(s, "%sdlc::mbar_arrive_expect_tx(qfull, Q_BYTES);  // MbarArrive %s\n", ind, t->what);
      else
        sb_printf(s, "%sdlc::mbar_arrive_expect_tx(&full[s], KV_BYTES);  // MbarArrive %s\n", ind, t->what);
      break;
    case GS_TMA_LOAD: {
      /* boxes of 64 head-dim columns and the tile's rows: Q's (BM rows)
       * into smQ on qfull, K's and V's (BN keys) into the slot */
      typedef struct {
        const char *dim, *rank, *box, *dst, *map, *bar;
      } att_box;
      static const att_box BOX[GSIDE__COUNT] = {
          [GSIDE_A] = {"D", "Q_RANK", "q_box(p, m0, 64 * j, b, c)", "smQ + j * BM * 64", "tmap_q", "qfull"},
          [GSIDE_B] = {"D", "K_RANK", "k_box(p, t * BN, 64 * j, b, c)", "smK + s * BN * D + j * BN * 64", "tmap_k",
                       "&full[s]"},
          [GSIDE_V] = {"DV", "V_RANK", "v_box(p, t * BN, 64 * j, b, c)", "smV + s * BN * DV + j * BN * 64", "tmap_v",
                       "&full[s]"},
      };
      const att_box *x = &BOX[t->side];
      sb_printf(s,
                "#pragma unroll\n"
                "%sfor (int j = 0; j < %s / 64; ++j) {  // TmaLoad %s: box j, 64 columns\n"
                "%s  int32_t c[%s];\n"
                "%s  %s;\n"
                "%s  dlc::tma_load(%s, &tp->%s, c, %s);\n"
                "%s}\n",
                ind, x->dim, t->what, ind, x->rank, ind, x->box, ind, x->dst, x->map, x->bar, ind);
      break;
    }
    case GS_END_LOOP:
      sb_puts(s, "      if (++s == STAGES) s = 0, ph ^= 1;\n    }\n");
      ind = "    ";
      break;
    default: continue; /* verify_sm90a_producer admits none other (and emit_verify_cu finds it unrendered) */
    }
    render_mark_stmt(log, k, t);
  }
  sb_puts(s, "  }\n");
}

/* Op::consume(p, c, qfull, next): the consumer role's statements after its
 * setmaxnreg, each one call on the consumers' state c (templates/
 * sm90a_attention.cuh, Sm90aAttConsumer), commented with its kind, as the
 * sm80 row's (ATT_RENDER, whose score, softmax, row-sum, staging and
 * output steps are the same calls).  A pass's Loop walks the key tiles
 * next(t, full) gives (the full ones, then the other live ones: the masks
 * and the key bound, the sm80 row's mode 2); the Barriers are the
 * ping-pong scheduler's and the consumers' named barriers. */
static void h_mbar_wait(sm80_render *r, const gpu_stmt *st) {
  r_line(r, st, r->loop ? "c.wait_full();" : "dlc::mbar_wait(qfull, 0);");
}

static void h_loop(sm80_render *r, const gpu_stmt *st) {
  const char *full = st->lo == 0 ? "true" : "false";
  sb_printf(r->s, "#pragma unroll 1\n%sfor (int64_t t = next(-1, %s); t < c.nt; t = next(t, %s)) {  // Loop %s: %s\n",
            r->ind, full, full, r_text(r, st->what), st->lo == 0 ? "the full key tiles" : "the other live key tiles");
  r_indent(r, 1);
  r->loop = GLOOP_KEYS, r->pass = st->lo == 0 ? 0 : 2;
}

static void h_end_loop(sm80_render *r, const gpu_stmt *st) {
  r_line(r, st, "c.next_stage();");
  r_indent(r, -1);
  sb_printf(r->s, "%s}\n", r->ind);
  r->loop = GLOOP_NONE;
}

static void h_wgmma(sm80_render *r, const gpu_stmt *st) {
  if (st->side == GSIDE_B) {
    sb_printf(r->s, "%stypename C::SAcc s;\n", r->ind);
    r_line(r, st, "c.qk(s);");
  } else {
    r_line(r, st, "c.pv(pf);");
  }
}

static void h_wgmma_wait(sm80_render *r, const gpu_stmt *st) { r_line(r, st, "c.wgmma_done();"); }

static void h_mbar_arrive(sm80_render *r, const gpu_stmt *st) { r_line(r, st, "c.release();"); }

static void h_epilogue(sm80_render *r, const gpu_stmt *st) {
  if (st->step != GSTEP_P_FRAGS) {
    a_epilogue(r, st);
    return;
  }
  sb_printf(r->s, "%stypename C::PFrags pf;\n", r->ind);
  r_line(r, st, "c.p_frags(s, pf);");
}

static const sm80_render_fn ATT90_RENDER[GS__COUNT] = {
    [GS_ACC_ZERO] = r_acc_zero,     [GS_MBAR_WAIT] = h_mbar_wait,   [GS_BARRIER] = h_barrier,
    [GS_LOOP] = h_loop,             [GS_END_LOOP] = h_end_loop,     [GS_WGMMA] = h_wgmma,
    [GS_WGMMA_WAIT] = h_wgmma_wait, [GS_EPILOGUE] = h_epilogue,     [GS_MBAR_ARRIVE] = h_mbar_arrive,
    [GS_REDUCE] = a_reduce,         [GS_STAGE_ACC] = a_stage_acc,   [GS_ST_GLOBAL] = r_st_global,
};

static void att_consume_fn(arena *A, render_log *log, strbuf *s, const gpu_kernel *k, const char *sname) {
  int i = 0;
  while (i < k->nst && !(k->st[i].k == GS_ROLE && k->st[i].role == GROLE_CONSUMERS)) i++;
  sb_printf(s, "  // the consumers (GPU IR): one line a statement, each a primitive of their state c\n"
               "  // (templates/sm90a_attention.cuh, Sm90aAttConsumer); the key tiles in the producer's order\n"
               "  template <class C, class Next>\n"
               "  static __device__ __forceinline__ void consume(const Params *p, C &c, uint64_t *qfull, Next next) {\n"
               "    using Self = %s;\n",
            sname);
  render_stmts(A, log, s, k, i + 3, false, ATT90_RENDER); /* after the Role, its SetMaxNReg and the state's FragSetup */
}

/* The Op's produce, consume and kernel (attention_op writes the rest) */
static const sm90a_cta ATT_CTA = {"sm90a_attention.cuh", "Sm90aAttCta", true,
                                  "if (c.elected()) produce(tp, c.smQ, c.smK, c.smV, c.qfull, c.full, c.empty, c.m0, "
                                  "c.b, c.nt, c.order);"};

void att90_kernel_fns(arena *A, render_log *log, strbuf *s, const gpu_kernel *k, const char *sname) {
  render_in_fn(log, RENDER_FN_PRODUCE);
  att_produce_fn(log, s, k);
  render_in_fn(log, RENDER_FN_CONSUME);
  att_consume_fn(A, log, s, k, sname);
  render_in_fn(log, RENDER_FN_KERNEL);
  sm90a_kernel_fn(A, log, s, k, sname, &ATT_CTA);
}

/* as sm80 attention's, with the register budgets and each tensor map,
 * innermost dim first: the index that selects a box (a region axis, or a
 * constant) and the box's extent along it */
static void att90_dump(cJSON *g, const gpu_kernel *k) {
  dump_tile_head(g, k);
  dump_attention_tile(g, k);
  dump_vecs(g, k);
  dump_math(g, k);
  dump_sm90a_regs(g, k);
  cJSON *tms = cJSON_AddArrayToObject(g, "tensor_maps");
  const gpu_tmap *all[3] = {&k->tmq, &k->tmk, &k->tmv};
  for (int i = 0; i < 3; i++) {
    const gpu_tmap *tm = all[i];
    arena A0 = {0};
    cJSON *o = cJSON_CreateObject(), *ix = cJSON_CreateArray(), *bx = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "tensor", tm->tensor);
    cJSON_AddNumberToObject(o, "rank", tm->rank);
    for (int d = tm->rank - 1; d >= 0; d--) {
      cJSON_AddItemToArray(ix, cJSON_CreateString(sx_str(&A0, tm->map[d])));
      cJSON_AddItemToArray(bx, cJSON_CreateNumber(d == tm->rank - 1 ? 64 : d == tm->row_dim ? tm->rows : 1));
    }
    cJSON_AddItemToObject(o, "index", ix);
    cJSON_AddItemToObject(o, "box", bx);
    cJSON_AddItemToArray(tms, o);
    arena_free(&A0);
  }
  dump_operands(g, k, 3, true);
  dump_stmts(g, k, false);
}

/* ---- the pipeline's part ----------------------------------------------------------------- */

/* the attention regions with head dims of 64 or 128 and fp16/bf16
 * operands (gpuir_sm90a_attention_fits); other head dims keep the sm80
 * attention on sm90a */
static bool att90_fits(const region_set *rs, const pc_report *pc) {
  const char *why;
  return skel_sm80_attention.fits(rs, pc) && gpuir_sm90a_attention_fits(rs, pc, &why);
}

static bool att90_verify_plan(const region_set *rs, const pc_report *pc, const sched_plan *p,
                              const arch_info *const *archs, int na, const char *at, diag_list *dl) {
  bool ok = p->algo == ALGO_WGMMA_SOFTMAX && na == 1;
  /* the two consumer warpgroups' 8 warps and the producer warpgroup */
  ok &= p->threads == 32 * p->warps_m * p->warps_n + 128 && p->warps_m * p->warps_n == 8;
  ok &= na == 1 && p->smem_bytes <= archs[0]->smem_per_block && p->regs_per_thread <= 255;
  if (!ok)
    diag_report(dl, D_INTERNAL, "plan", NULL,
                "the sm90a attention plan (%s, %d threads, %d x %d consumer warps, %d bytes of shared memory, %d "
                "registers) does not fit %s",
                algo_name(p->algo), p->threads, p->warps_m, p->warps_n, p->smem_bytes, p->regs_per_thread,
                na ? archs[0]->name : "(none)");
  return ok;
}

static gpu_kernel *att90_build(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                               const char *name, diag_list *dl) {
  return gpuir_build_sm90a_attention(A, rs, pc, p, name, dl);
}

/* ---- the skeleton's table ---------------------------------------------------------- */

static bool att90_verify(const gpu_kernel *k, diag_list *dl) {
  /* the epilogue's threads: the consumers' */
  bool ok = verify_epilogue_width(k, k->DV, k->v2.out_dt, k->threads - 128, dl);
  ok &= verify_lane_masks(k, dl);
  ok &= verify_sm90a_attention(k, dl);
  ok &= verify_sm90a_setup(k, &ATT_LISTS, dl);
  ok &= verify_sm90a_producer(k, &ATT_LISTS, dl);
  ok &= verify_sm90a_att_consumers(k, dl);
  ok &= gpuir_verify_stores(k, false, dl);
  return ok;
}

/* the Op is the sm80 attention's (attention_op), with this skeleton's
 * producer and consumers */
const skel_ops skel_sm90a_attention = {
    .algo = ALGO_WGMMA_SOFTMAX, .shape = SKEL_ATTENTION, .arch = ARCH_SM90A, .only = true,
    .fits = att90_fits,         .verify_plan = att90_verify_plan, .build = att90_build,
    .verify = att90_verify,     .render = attention_op,           .dump = att90_dump,
};
