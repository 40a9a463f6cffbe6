/* GPU IR's shared-layout verifier (gpuir_verify_smem): the 16-byte chunks
 * of a swizzled shared row stay in their row and never share a place, the
 * tiles stay apart and inside the block's shared memory, and
 * gpuir_swizzle_width picks a width that passes for every row length a
 * plan can ask for; gpuir_swizzle_xor spreads the accesses of the tf32
 * fragment loads over the 32 banks.  The sm90a row's ring discipline
 * (gpuir_verify on a hand-built statement list): a gathering producer's
 * arrival on a full barrier must follow the landing of its copies and then
 * fence.proxy.async, every copy must wait for its empty slot, and a copy
 * must be its producer's kind (cp.async for the gathering one, TMA else);
 * the consumers' k-loop, unrolled a lap of the ring's stages, must step
 * through the slots once a lap, flip the parity on the step that wraps to
 * slot 0 alone, run each wgmma from its wait's slot and release the
 * previous k-tile's slot after wait_group 1.
 * The sm90a attention row's (gpuir_verify on its statements): every S wgmma
 * in its warpgroup's ping-pong turn, every box read after the consumers'
 * wait on its full barrier, a stage released only after the wait for the
 * P V group that reads it, and every K/V box after its empty slot's wait.
 * The sm80 ring's stage reuse (gpuir_verify on the statements gpuir_build
 * lays out for a real GEMM, then reordered): a refill copy of a stage must
 * not be issued while a warp may still load fragments from it, i.e. a
 * bar.sync lies between every fragment load of a stage and the next copy
 * into it, in one iteration or through the loop's back edge. */
#include <stdlib.h>

#include "emit_int.h"
#include "gpuir.h"
#include "pipe.h"
#include "plan.h"
#include "polycore.h"
#include "region.h"
#include "skel/skel.h"

static gpu_kernel one_tile(int rows, int row_elems, int swz) {
  gpu_kernel k;
  memset(&k, 0, sizeof k);
  k.nvec = 1, k.vecs[0] = 8;
  k.tiles[0] = (gpu_smem_tile){"smK", 0, 2, rows, row_elems, 2, swz};
  k.ntiles = 1;
  k.smem = 2 * rows * row_elems * 2;
  return k;
}

/* Whether k passes gpuir_verify_smem (full = false) or gpuir_verify; when it
 * does not and why is given, one diagnostic's reason must contain why. */
static bool verifies_with(const gpu_kernel *k, bool full, const char *why) {
  diag_list dl;
  diag_init(&dl);
  bool ok = full ? gpuir_verify(k, &dl) : gpuir_verify_smem(k, &dl);
  CHECK(ok == !diag_has_errors(&dl));
  if (!ok && why) {
    bool found = false;
    for (int i = 0; i < dl.n; i++) found |= dl.items[i].why && strstr(dl.items[i].why, why) != NULL;
    CHECK(found);
    if (!found) fprintf(stderr, "expected \"%s\" among:\n", why), diag_print_text(&dl, "got");
  }
  diag_free(&dl);
  return ok;
}

static bool verifies(const gpu_kernel *k, const char *why) { return verifies_with(k, false, why); }
static bool verifies_full(const gpu_kernel *k, const char *why) { return verifies_with(k, true, why); }

/* The sm90a row's producer statements, as gpuir_build_sm90a_gather lays
 * them out (tiles left out: gpuir_verify_smem is tested above); the
 * consumers' follow (consumers()). */
#define ST(kind, w, n, in0, in1, o) \
  { .k = kind, .what = w, .nin = n, .in = {in0, in1, 0, 0}, .out = o }
#define ST_SIDE(kind, w, o, sd) {.k = kind, .what = w, .out = o, .side = sd}
#define ST_LO(kind, w, n, in0, in1, l) \
  { .k = kind, .what = w, .nin = n, .in = {in0, in1, 0, 0}, .lo = l }
#define ST_MBAR(w, m, n, o) {.k = GS_MBAR_INIT, .what = w, .out = o, .mbar = m, .lo = n}
/* a Role or SetMaxNReg (lo: its registers) of role r */
#define ST_ROLE(kind, w, r, l) {.k = kind, .what = w, .role = r, .lo = l}
/* an MbarWait or MbarArrive on a barrier of ring m (lo: a gathering arrival's lag) */
#define ST_MB(kind, w, m, n, in0, in1, o, l) \
  { .k = kind, .what = w, .mbar = m, .nin = n, .in = {in0, in1, 0, 0}, .out = o, .lo = l }
/* a WgmmaWait leaving l groups in flight */
#define ST_WW(w, in0, l) \
  { .k = GS_WGMMA_WAIT, .what = w, .nin = 1, .in = {in0, 0, 0, 0}, .lo = l }
/* a Loop or EndLoop of the consumers' laps or rest */
#define ST_LOOP(kind, w, lp) {.k = kind, .what = w, .loop = lp}
/* The tokens the hand-laid statements name (gpu_kernel.tok): the ring's
 * families and their loop-carried instances, and the plain ones. */
enum {
  TK_NONE,
  TK_tA,
  TK_tA_kt_3,
  TK_tA_kt,
  TK_tB,
  TK_tB_kt_3,
  TK_tB_kt,
  TK_tFree,
  TK_tFree_i_S,
  TK_tFree_i,
  TK_tFree_kt_S1,
  TK_tFree_kt,
  TK_tKf,
  TK_tKf_t,
  TK_tKm,
  TK_tKm_t,
  TK_tVf,
  TK_tVf_t,
  TK_tVm,
  TK_tVm_t,
  TK_tE,
  TK_tFin,
  TK_tL,
  TK_tMMA,
  TK_tMax,
  TK_tO,
  TK_tP,
  TK_tPf,
  TK_tQ,
  TK_tRescale,
  TK_tS,
  TK_tScore,
  TK_tStage,
  NTOK
};
static gpu_token TOKENS[NTOK] = {
    [TK_NONE] = {"-", 0, false},
    [TK_tA] = {"tA", TK_tA, false},
    [TK_tA_kt_3] = {"tA[kt-3]", TK_tA, true},
    [TK_tA_kt] = {"tA[kt]", TK_tA, true},
    [TK_tB] = {"tB", TK_tB, false},
    [TK_tB_kt_3] = {"tB[kt-3]", TK_tB, true},
    [TK_tB_kt] = {"tB[kt]", TK_tB, true},
    [TK_tFree] = {"tFree", TK_tFree, false},
    [TK_tFree_i_S] = {"tFree[i+S]", TK_tFree, true},
    [TK_tFree_i] = {"tFree[i]", TK_tFree, true},
    [TK_tFree_kt_S1] = {"tFree[kt+S-1]", TK_tFree, true},
    [TK_tFree_kt] = {"tFree[kt]", TK_tFree, true},
    [TK_tKf] = {"tKf", TK_tKf, false},
    [TK_tKf_t] = {"tKf[t]", TK_tKf, true},
    [TK_tKm] = {"tKm", TK_tKm, false},
    [TK_tKm_t] = {"tKm[t]", TK_tKm, true},
    [TK_tVf] = {"tVf", TK_tVf, false},
    [TK_tVf_t] = {"tVf[t]", TK_tVf, true},
    [TK_tVm] = {"tVm", TK_tVm, false},
    [TK_tVm_t] = {"tVm[t]", TK_tVm, true},
    [TK_tE] = {"tE", TK_tE, false},
    [TK_tFin] = {"tFin", TK_tFin, false},
    [TK_tL] = {"tL", TK_tL, false},
    [TK_tMMA] = {"tMMA", TK_tMMA, false},
    [TK_tMax] = {"tMax", TK_tMax, false},
    [TK_tO] = {"tO", TK_tO, false},
    [TK_tP] = {"tP", TK_tP, false},
    [TK_tPf] = {"tPf", TK_tPf, false},
    [TK_tQ] = {"tQ", TK_tQ, false},
    [TK_tRescale] = {"tRescale", TK_tRescale, false},
    [TK_tS] = {"tS", TK_tS, false},
    [TK_tScore] = {"tScore", TK_tScore, false},
    [TK_tStage] = {"tStage", TK_tStage, false},
};
static void with_tokens(gpu_kernel *k) { k->tok = TOKENS, k->ntok = k->cap_tok = NTOK; }

static const gpu_stmt GATHER[] = {
    ST(GS_TILE_COORD, "(m.o, n.o) <- blockIdx.x", 0, 0, 0, 0),
    ST_SIDE(GS_ALLOC_SHARED, "smA", 0, GSIDE_A),
    ST_SIDE(GS_ALLOC_SHARED, "smB", 0, GSIDE_B),
    ST_MBAR("full[s]", GMBAR_FULL, 128, 0),
    ST_MBAR("empty[s]", GMBAR_EMPTY, 256, TK_tFree_kt),
    ST(GS_BARRIER, "bar.sync", 0, 0, 0, 0),
    ST_ROLE(GS_ROLE, "producer", GROLE_PRODUCER, 0),
    ST_ROLE(GS_SETMAXNREG, "setmaxnreg.dec", GROLE_PRODUCER, 40),
    ST(GS_LOOP, "kt", 0, 0, 0, 0),
    ST_MB(GS_MBAR_WAIT, "empty[kt % S]", GMBAR_EMPTY, 1, TK_tFree_kt, 0, 0, 0),
    ST_SIDE(GS_CP_ASYNC, "smA[kt%5] <- X", TK_tA_kt, GSIDE_A),
    ST_SIDE(GS_CP_ASYNC, "smB[kt%5] <- Wt", TK_tB_kt, GSIDE_B),
    ST(GS_COMMIT, "cp.async.commit_group", 2, TK_tA_kt, TK_tB_kt, 0),
    ST_LO(GS_WAIT, "cp.async.wait_group", 2, TK_tA_kt_3, TK_tB_kt_3, 3),
    ST(GS_PROXY_FENCE, "fence.proxy.async.shared::cta", 0, 0, 0, 0),
    ST_MB(GS_MBAR_ARRIVE, "full[(kt - 3) % S]", GMBAR_FULL, 0, 0, 0, 0, 3),
    ST(GS_END_LOOP, "kt", 0, 0, 0, 0),
    ST_LO(GS_WAIT, "cp.async.wait_group", 2, TK_tA_kt, TK_tB_kt, 0),
    ST(GS_PROXY_FENCE, "fence.proxy.async.shared::cta", 0, 0, 0, 0),
    ST_MB(GS_MBAR_ARRIVE, "full[kt % S]", GMBAR_FULL, 0, 0, 0, 0, 3),
    ST_ROLE(GS_ROLE, "consumers", GROLE_CONSUMERS, 0),
    ST_ROLE(GS_SETMAXNREG, "setmaxnreg.inc", GROLE_CONSUMERS, 232),
    ST(GS_ACC_ZERO, "acc <- 0", 0, 0, 0, 0),
    ST_SIDE(GS_FRAG_SETUP, "wgmma descriptor of smA", 0, GSIDE_A),
    ST_SIDE(GS_FRAG_SETUP, "wgmma descriptor of smB", 0, GSIDE_B),
};
enum {
  NGATHER = sizeof GATHER / sizeof GATHER[0],
  FULL_INIT = 3,
  PRODUCER = 6,
  CP_A = 10,
  WAIT = 13,
  FENCE = 14,
  CONSUMERS = 20,
  S5 = 5
};
#define MAXST (NGATHER + 8 * S5 + 12)

static int push(gpu_stmt *st, int n, gpu_stmt s) {
  st[n] = s;
  return n + 1;
}

/* one step of the consumers' k-loop (gpuir.c's consumer_step) */
static int step(gpu_stmt *st, int n, int slot, int flip, int release) {
  static const char *full[] = {"full[0]", "full[1]", "full[2]", "full[3]", "full[4]"},
                    *empty[] = {"empty[0]", "empty[1]", "empty[2]", "empty[3]", "empty[4]"};
  gpu_stmt w = ST_MB(GS_MBAR_WAIT, full[slot], GMBAR_FULL, 2, TK_tA_kt, TK_tB_kt, 0, 0);
  w.fixed_slot = true, w.slot = slot, w.flip = flip;
  gpu_stmt m = ST(GS_WGMMA, "wgmma.mma_async.m64n128k16.f32.fp16.fp16 x 4", 2, TK_tA_kt, TK_tB_kt, TK_tMMA);
  m.fixed_slot = true, m.slot = slot;
  n = push(st, n, w), n = push(st, n, m);
  n = push(st, n, (gpu_stmt)ST_WW("wgmma.commit_group; wgmma.wait_group 1", TK_tMMA, 1));
  if (release >= 0) {
    gpu_stmt r = ST_MB(GS_MBAR_ARRIVE, empty[release], GMBAR_EMPTY, 0, 0, 0, TK_tFree_kt_S1, 0);
    r.fixed_slot = true, r.slot = release;
    n = push(st, n, r);
  }
  return n;
}

/* the producer, then the consumers as gpuir_build_sm90a lays them out for
 * a ring of 5: k-tile 0 peeled, a lap of 5 steps on slots 1 2 3 4 0 (the
 * parity flipped on the last), the rest's 4 on slots 1 2 3 4; then their
 * epilogue (the last wait, the barrier, the staging, the barrier, the
 * bounds-checked output: NTAIL statements) */
static int consumers(gpu_stmt *st) {
  int n = 0;
  for (int i = 0; i < NGATHER; i++) n = push(st, n, GATHER[i]);
  n = step(st, n, 0, 0, -1);
  n = push(st, n, (gpu_stmt)ST_LOOP(GS_LOOP, "lap", GLOOP_LAP));
  for (int j = 0; j < S5; j++) n = step(st, n, (1 + j) % S5, (1 + j) / S5, j);
  n = push(st, n, (gpu_stmt)ST_LOOP(GS_END_LOOP, "lap", GLOOP_LAP));
  n = push(st, n, (gpu_stmt)ST_LOOP(GS_LOOP, "rest", GLOOP_REST));
  for (int j = 0; j + 1 < S5; j++) n = step(st, n, 1 + j, 0, j);
  n = push(st, n, (gpu_stmt)ST_LOOP(GS_END_LOOP, "rest", GLOOP_REST));
  n = push(st, n, (gpu_stmt)ST_WW("wgmma.wait_group 0", TK_tMMA, 0));
  gpu_stmt bar = ST(GS_BARRIER, "bar.sync 1, 256", 0, 0, 0, 0);
  bar.bar = GBAR_CONSUMERS;
  n = push(st, n, bar);
  n = push(st, n, (gpu_stmt)ST(GS_STAGE_ACC, "st.shared.v2.f32", 1, TK_tMMA, 0, TK_tStage));
  n = push(st, n, bar);
  n = push(st, n, (gpu_stmt)ST(GS_EPILOGUE, "Y0", 1, TK_tStage, 0, TK_tE));
  n = push(st, n, (gpu_stmt)ST(GS_ST_GLOBAL, "st.global.v2.b32 (4 x fp16) -> Y", 1, TK_tE, 0, 0));
  return n;
}
enum { NTAIL = 6 };
/* the statement index of the lap's step j (after the producer, the peel's
 * 3 statements and the lap's Loop) */
#define LAP_STEP(j) (NGATHER + 3 + 1 + 4 * (j))

/* gpuir_verify on the sm90a kernel with statements st[0..n), its
 * consumers' k-loop unrolled `unroll` k-tiles a lap; when it fails, one
 * diagnostic's reason holds `why` */
static bool sm90a_verifies_u(const gpu_stmt *st, int n, bool gather, int unroll, const char *why) {
  gpu_kernel k;
  memset(&k, 0, sizeof k);
  k.T = DT_FP16;
  k.plan.tile[0] = 128, k.plan.tile[1] = 128, k.plan.tile[2] = 64, k.plan.stages = S5;
  k.threads = 384;
  k.algo = gather ? ALGO_CPASYNC_WGMMA : ALGO_TMA_WGMMA; /* its skeleton: its checks */
  k.gather_lag = gather ? 3 : 0;
  k.producer_regs = 40, k.consumer_regs = 232;
  k.consumer_unroll = unroll;
  k.nvec = 1, k.vecs[0] = 8;
  k.st = (gpu_stmt *)st, k.nst = k.cap_st = n;
  with_tokens(&k);
  return verifies_full(&k, why);
}

static bool sm90a_verifies(const gpu_stmt *st, int n, bool gather, const char *why) {
  return sm90a_verifies_u(st, n, gather, S5, why);
}

static void sm90a_ring_discipline(void) {
  gpu_stmt all[MAXST], st[MAXST];
  int nall = consumers(all);
  CHECK(sm90a_verifies(all, nall, true, NULL));
  /* no fence.proxy.async before the arrival */
  int n = 0;
  for (int i = 0; i < nall; i++)
    if (i != FENCE) st[n++] = all[i];
  CHECK(!sm90a_verifies(st, n, true, "is not after its copies landed (cp.async.wait_group) and fence.proxy.async"));
  /* the fence before the landing */
  memcpy(st, all, sizeof all);
  st[WAIT] = all[FENCE], st[FENCE] = all[WAIT];
  CHECK(!sm90a_verifies(st, nall, true, "is not after its copies landed"));
  /* a copy before the wait on its empty slot */
  memcpy(st, all, sizeof all);
  st[CP_A - 1] = all[CP_A], st[CP_A] = all[CP_A - 1];
  CHECK(!sm90a_verifies(st, nall, true, "does not wait for its slot's empty barrier"));
  /* cp.async in the TMA producer's kernel */
  CHECK(!sm90a_verifies(all, nall, false, "is not the TMA producer's"));
}

/* The statements' tokens: each statement consumes and produces what
 * gpuir.def says; a token is produced before it is consumed, a
 * loop-carried one by an instance of its own family; every token is one
 * of the kernel's. */
static void tokens_typed(void) {
  gpu_stmt all[MAXST], st[MAXST];
  int nall = consumers(all);
  CHECK(sm90a_verifies(all, nall, true, NULL));
  /* a commit of no tokens, a copy that produces none */
  memcpy(st, all, sizeof all);
  st[CP_A + 2].nin = 0;
  CHECK(!sm90a_verifies(st, nall, true, "consumes 0 tokens and does not produce one; gpuir.def says 1..2 and none"));
  memcpy(st, all, sizeof all);
  st[CP_A].out = 0;
  CHECK(!sm90a_verifies(st, nall, true, "consumes 0 tokens and does not produce one; gpuir.def says 0..0 and one"));
  /* the landing's wait on tA[kt-3]: carried, produced by tA[kt] (its
   * family); on tKf[t], whose family no statement produces, it fails */
  memcpy(st, all, sizeof all);
  CHECK(st[WAIT].in[0] == TK_tA_kt_3 && TOKENS[TK_tA_kt_3].carried);
  st[WAIT].in[0] = TK_tKf_t;
  CHECK(!sm90a_verifies(st, nall, true, "uses token tKf[t] before it is produced"));
  /* a plain token of the family is not the carried one: tA (the family's
   * name) is produced by no statement */
  st[WAIT].in[0] = TK_tA;
  CHECK(!sm90a_verifies(st, nall, true, "uses token tA before it is produced"));
  /* a token the kernel does not have */
  st[WAIT].in[0] = NTOK + 3;
  char why[64];
  snprintf(why, sizeof why, "names token %d, not one of the kernel's", NTOK + 3);
  CHECK(!sm90a_verifies(st, nall, true, why));
  memcpy(st, all, sizeof all);
  st[CP_A].out = -2;
  CHECK(!sm90a_verifies(st, nall, true, "produces token -2, not one of the kernel's"));
}

/* The producers' statements: exactly the lists emit.c's produce_fn
 * renders, for the gathering producer and the TMA one. */
static void sm90a_producer_render(void) {
  gpu_stmt all[MAXST], st[MAXST];
  int nall = consumers(all), n;
  /* A's and B's chunks swapped */
  memcpy(st, all, sizeof all);
  st[CP_A] = all[CP_A + 1], st[CP_A + 1] = all[CP_A];
  CHECK(!sm90a_verifies(st, nall, true, "the gathering producer's statement 2 is not A's chunks"));
  /* the landing's wait leaves 2 groups in flight, not the lag's 3 */
  memcpy(st, all, sizeof all);
  st[WAIT].lo = 2;
  CHECK(!sm90a_verifies(st, nall, true, "statement 5 is not the wait for stage kt - lag"));
  /* the arrivals of the last stages after the loop left out */
  n = 0;
  for (int i = 0; i < nall; i++)
    if (i != CP_A + 9) st[n++] = all[i];
  CHECK(!sm90a_verifies(st, n, true, "statement 11 is not the arrivals of the last lag stages"));
  /* one statement more than the renderer writes */
  n = 0;
  for (int i = 0; i < nall; i++) {
    st[n++] = all[i];
    if (i == CP_A + 9) st[n++] = all[i];
  }
  CHECK(!sm90a_verifies(st, n, true, "the gathering producer holds more than the statements its renderer writes"));
  /* the TMA producer: wait, the arrival with the stage's bytes, A's box, B's boxes */
  n = 0;
  for (int i = 0; i < CP_A; i++) st[n++] = all[i];
  st[n++] = (gpu_stmt)ST_MB(GS_MBAR_ARRIVE, "full[kt % S]", GMBAR_FULL, 0, 0, 0, 0, -1);
  st[n++] = (gpu_stmt)ST_SIDE(GS_TMA_LOAD, "smA[kt%5] <- A", TK_tA_kt, GSIDE_A);
  st[n++] = (gpu_stmt)ST_SIDE(GS_TMA_LOAD, "smB[kt%5] <- B", TK_tB_kt, GSIDE_B);
  int tma = n - 3;
  st[FULL_INIT].lo = 1; /* the TMA's one arrival (with the stage's bytes) */
  for (int i = CP_A + 6; i < nall; i++)
    if (i < CP_A + 7 || i > CP_A + 9) st[n++] = all[i];
  CHECK(sm90a_verifies(st, n, false, NULL));
  /* without the arrival that arms the full barrier */
  gpu_stmt st2[MAXST];
  int n2 = 0;
  for (int i = 0; i < n; i++)
    if (i != tma) st2[n2++] = st[i];
  CHECK(!sm90a_verifies(st2, n2, false,
                        "the TMA producer's statement 2 is not the arrival on the slot's full barrier with the stage's "
                        "bytes"));
  /* B's boxes before A's */
  memcpy(st2, st, sizeof st);
  st2[tma + 1] = st[tma + 2], st2[tma + 2] = st[tma + 1];
  CHECK(!sm90a_verifies(st2, n, false, "the TMA producer's statement 3 is not A's box"));
}

/* The CTA's setup and roles: exactly the lists emit.c's sm90a_kernel_fn
 * renders, the barriers' arrival counts and the setmaxnreg budgets the
 * kernel's. */
static void sm90a_setup_render(void) {
  gpu_stmt all[MAXST], st[MAXST];
  int nall = consumers(all), n;
  /* the gathering producer's full barriers completing on one arrival (its
   * 128 threads each arrive) */
  memcpy(st, all, sizeof all);
  st[FULL_INIT].lo = 1;
  CHECK(!sm90a_verifies(st, nall, true,
                        "the sm90a contraction setup's statement 3 is not the full barriers' init (MbarInit, 128 "
                        "arrivals)"));
  /* the full and empty barriers' init swapped */
  memcpy(st, all, sizeof all);
  st[FULL_INIT] = all[FULL_INIT + 1], st[FULL_INIT + 1] = all[FULL_INIT];
  CHECK(!sm90a_verifies(st, nall, true, "statement 3 is not the full barriers' init"));
  /* no shared tile for B */
  n = 0;
  for (int i = 0; i < nall; i++)
    if (i != 2) st[n++] = all[i];
  CHECK(!sm90a_verifies(st, n, true, "statement 2 is not B's ring (AllocShared)"));
  /* the consumers' named barrier where the whole CTA must wait for the init */
  memcpy(st, all, sizeof all);
  st[FULL_INIT + 2].bar = GBAR_CONSUMERS;
  CHECK(!sm90a_verifies(st, nall, true, "statement 5 is not the CTA's barrier after the init"));
  /* a producer budget other than the kernel's */
  memcpy(st, all, sizeof all);
  st[PRODUCER + 1].lo = 48;
  CHECK(!sm90a_verifies(st, nall, true, "statement 7 is not the producer's setmaxnreg.dec (SetMaxNReg, 40 registers)"));
  /* the consumers' role taking registers down */
  memcpy(st, all, sizeof all);
  st[CONSUMERS + 1].what = "setmaxnreg.dec", st[CONSUMERS + 1].role = GROLE_PRODUCER;
  CHECK(!sm90a_verifies(st, nall, true, "is not the consumers' setmaxnreg.inc (SetMaxNReg, 232 registers)"));
  /* no accumulators' zero */
  n = 0;
  for (int i = 0; i < nall; i++)
    if (i != CONSUMERS + 2) st[n++] = all[i];
  CHECK(!sm90a_verifies(st, n, true, "statement 22 is not the accumulators' zero (AccZero)"));
  /* B's descriptor before A's */
  memcpy(st, all, sizeof all);
  st[CONSUMERS + 3] = all[CONSUMERS + 4], st[CONSUMERS + 4] = all[CONSUMERS + 3];
  CHECK(!sm90a_verifies(st, nall, true, "statement 23 is not A's descriptor (FragSetup)"));
}

/* The consumers' unrolled k-loop: its slots, phases and releases. */
static void sm90a_consumer_loop(void) {
  gpu_stmt all[MAXST], st[MAXST];
  int nall = consumers(all), n;
  /* a lap of 4 k-tiles on a ring of 5: its slots would move each lap */
  CHECK(!sm90a_verifies_u(all, nall, true, 4, "unrolls 4 k-tiles a lap, not the ring's 5 stages"));
  /* the parity flipped on a step that does not wrap to slot 0 */
  memcpy(st, all, sizeof all);
  st[LAP_STEP(1)].flip = 1;
  CHECK(!sm90a_verifies(st, nall, true, "the consumers' lap, step 1: not a wait on full[2] at parity ph,"));
  /* ... or not on the one that does (the phase would never flip) */
  memcpy(st, all, sizeof all);
  st[LAP_STEP(S5 - 1)].flip = 0;
  CHECK(!sm90a_verifies(st, nall, true, "the consumers' lap, step 4: not a wait on full[0] at parity ph ^ 1"));
  /* a step on the wrong slot: its wait and its wgmma on slot 3 twice */
  memcpy(st, all, sizeof all);
  st[LAP_STEP(3)].slot = 3, st[LAP_STEP(3) + 1].slot = 3;
  CHECK(!sm90a_verifies(st, nall, true, "the consumers' lap, step 3: not a wait on full[4]"));
  /* a wgmma from another slot than its wait's */
  memcpy(st, all, sizeof all);
  st[LAP_STEP(2) + 1].slot = 4;
  CHECK(!sm90a_verifies(st, nall, true, "its wgmma from slot 3"));
  /* a release of the step's own slot (still being read), not the previous one */
  memcpy(st, all, sizeof all);
  st[LAP_STEP(2) + 3].slot = 3;
  CHECK(!sm90a_verifies(st, nall, true, "then the release of empty[2] (the previous k-tile's)"));
  /* the release before wait_group 1 (the previous group may still read the slot) */
  memcpy(st, all, sizeof all);
  st[LAP_STEP(0) + 2] = all[LAP_STEP(0) + 3], st[LAP_STEP(0) + 3] = all[LAP_STEP(0) + 2];
  CHECK(!sm90a_verifies(st, nall, true, "the consumers' lap, step 0"));
  /* a step's wait on the slot's empty barrier instead of its full one */
  memcpy(st, all, sizeof all);
  st[LAP_STEP(1)].mbar = GMBAR_EMPTY;
  CHECK(!sm90a_verifies(st, nall, true, "the consumers' lap, step 1: not a wait on full[2]"));
  /* wait_group 0 in a step: its group would not overlap the next k-tile's copies */
  memcpy(st, all, sizeof all);
  st[LAP_STEP(2) + 2].lo = 0;
  CHECK(!sm90a_verifies(st, nall, true, "the consumers' lap, step 2"));
  /* the release on a full barrier */
  memcpy(st, all, sizeof all);
  st[LAP_STEP(3) + 3].mbar = GMBAR_FULL;
  CHECK(!sm90a_verifies(st, nall, true, "the consumers' lap, step 3"));
  /* the rest's loop taken for a second lap, at its Loop or at its EndLoop */
  memcpy(st, all, sizeof all);
  st[LAP_STEP(S5) + 1].loop = GLOOP_LAP;
  CHECK(!sm90a_verifies(st, nall, true, "the consumers' rest loop is missing"));
  memcpy(st, all, sizeof all);
  st[LAP_STEP(S5) + 2 + 4 * (S5 - 1)].loop = GLOOP_LAP;
  CHECK(!sm90a_verifies(st, nall, true, "the consumers' rest loop holds more than its 4 steps"));
  /* the consumers' epilogue after wait_group 1 (the last group still in flight) */
  memcpy(st, all, sizeof all);
  st[nall - NTAIL].lo = 1;
  CHECK(!sm90a_verifies(st, nall, true, "the consumers' epilogue does not begin with wait_group 0"));
  /* a lap of one step too few */
  n = 0;
  for (int i = 0; i < nall; i++)
    if (i < LAP_STEP(S5 - 1) || i >= LAP_STEP(S5)) st[n++] = all[i];
  CHECK(!sm90a_verifies(st, n, true, "the consumers' lap, step 4"));
  /* the peeled k-tile releasing a slot (before any k-tile read it) */
  n = 0;
  for (int i = 0; i < nall; i++) {
    st[n++] = all[i];
    if (i == NGATHER + 2) st[n++] = all[LAP_STEP(0) + 3];
  }
  CHECK(!sm90a_verifies(st, n, true, "the consumers' lap loop is missing"));
  /* the epilogue as Op::store_tile renders it (emit.c, store_tile_fn): the
   * staging with no barrier after it (the stores would read rows other
   * warps have not staged yet) */
  n = 0;
  for (int i = 0; i < nall; i++)
    if (i != nall - NTAIL + 3) st[n++] = all[i];
  CHECK(!sm90a_verifies(st, n, true, "the consumers' epilogue does not begin with wait_group 0"));
  /* no bounds-checked output */
  CHECK(!sm90a_verifies(all, nall - 1, true, "the consumers' bounds-checked epilogue and store are missing"));
}

/* The sm90a attention row's statements as gpuir_build_sm90a_attention
 * lays them out: the producer's two passes (the full key tiles, then the
 * other live ones), and the consumers' as their renderer writes them
 * (emit.c, att_consume_fn): the same two passes, then the row sums, O / l,
 * its staging and the bounds-checked output. */
#define ST_BAR(w, b) {.k = GS_BARRIER, .what = w, .bar = b}
#define ST_STEP(w, n, in0, in1, o, s) \
  { .k = GS_EPILOGUE, .what = w, .nin = n, .in = {in0, in1, 0, 0}, .out = o, .step = s }
#define ST_WG(w, in0, in1, o, sd) \
  { .k = GS_WGMMA, .what = w, .nin = 2, .in = {in0, in1, 0, 0}, .out = o, .side = sd }
#define ATT_KEY_TILE(pass, tk, tv, score)                                                                         \
  ST_LO(GS_LOOP, "t", 0, 0, 0, pass), ST_MB(GS_MBAR_WAIT, "full[i % S]", GMBAR_FULL, 2, tk, tv, 0, 0),            \
      ST_BAR("bar.sync 2 + wg, 256", GBAR_TURN),                                                                  \
      ST_WG("wgmma.mma_async.m64n128k16.f32.fp16.fp16 x 4: S = Q K^T (S)", TK_tQ, tk, TK_tS, GSIDE_B),            \
      ST_BAR("bar.arrive 2 + (wg ^ 1), 256", GBAR_HAND_OFF),                                                      \
      ST_WW("wgmma.commit_group; wgmma.wait_group 0", TK_tS, 0), ST_STEP("score", 1, TK_tS, 0, TK_tScore, score), \
      ST_STEP("row_max", 1, TK_tScore, 0, TK_tMax, GSTEP_ROW_MAX),                                                \
      ST_STEP("rescale", 1, TK_tMax, 0, TK_tRescale, GSTEP_RESCALE),                                              \
      ST_STEP("probabilities", 1, TK_tRescale, 0, TK_tP, GSTEP_PROBS),                                            \
      ST_STEP("P fragments", 1, TK_tP, 0, TK_tPf, GSTEP_P_FRAGS),                                                 \
      ST_WG("wgmma.mma_async.m64n64k16.f32.fp16.fp16 x 8: O += P V (O)", TK_tPf, tv, TK_tO, GSIDE_V),             \
      ST_WW("wgmma.commit_group; wgmma.wait_group 0", TK_tO, 0),                                                  \
      ST_MB(GS_MBAR_ARRIVE, "empty[i % S]", GMBAR_EMPTY, 0, 0, 0, TK_tFree_i_S, 0), ST(GS_END_LOOP, "t", 0, 0, 0, 0)
static const gpu_stmt ATT[] = {
    ST(GS_TILE_COORD, "(m.o, batch) <- (blockIdx.x, blockIdx.y)", 0, 0, 0, 0),
    ST_SIDE(GS_ALLOC_SHARED, "smQ", 0, GSIDE_A),
    ST_SIDE(GS_ALLOC_SHARED, "smK,smV", 0, GSIDE_B),
    ST_MBAR("qfull", GMBAR_Q, 1, 0),
    ST_MBAR("full[s]", GMBAR_FULL, 1, 0),
    ST_MBAR("empty[s]", GMBAR_EMPTY, 256, TK_tFree_i),
    ST(GS_BARRIER, "bar.sync", 0, 0, 0, 0),
    ST_ROLE(GS_ROLE, "producer", GROLE_PRODUCER, 0),
    ST_ROLE(GS_SETMAXNREG, "setmaxnreg.dec", GROLE_PRODUCER, 40),
    ST_MB(GS_MBAR_ARRIVE, "qfull", GMBAR_Q, 0, 0, 0, 0, -1),
    ST_SIDE(GS_TMA_LOAD, "smQ <- Q", TK_tQ, GSIDE_A),
    ST_LO(GS_LOOP, "t", 0, 0, 0, 0),
    ST_MB(GS_MBAR_WAIT, "empty[i % S]", GMBAR_EMPTY, 1, TK_tFree_i, 0, 0, 0),
    ST_MB(GS_MBAR_ARRIVE, "full[i % S]", GMBAR_FULL, 0, 0, 0, 0, -1),
    ST_SIDE(GS_TMA_LOAD, "smK[i%2] <- K", TK_tKf_t, GSIDE_B),
    ST_SIDE(GS_TMA_LOAD, "smV[i%2] <- V", TK_tVf_t, GSIDE_V),
    ST(GS_END_LOOP, "t", 0, 0, 0, 0),
    ST_LO(GS_LOOP, "t", 0, 0, 0, 1),
    ST_MB(GS_MBAR_WAIT, "empty[i % S]", GMBAR_EMPTY, 1, TK_tFree_i, 0, 0, 0),
    ST_MB(GS_MBAR_ARRIVE, "full[i % S]", GMBAR_FULL, 0, 0, 0, 0, -1),
    ST_SIDE(GS_TMA_LOAD, "smK[i%2] <- K", TK_tKm_t, GSIDE_B),
    ST_SIDE(GS_TMA_LOAD, "smV[i%2] <- V", TK_tVm_t, GSIDE_V),
    ST(GS_END_LOOP, "t", 0, 0, 0, 0),
    ST_ROLE(GS_ROLE, "consumers", GROLE_CONSUMERS, 0),
    ST_ROLE(GS_SETMAXNREG, "setmaxnreg.inc", GROLE_CONSUMERS, 232),
    ST(GS_FRAG_SETUP, "wgmma descriptors of smQ, smK and smV", 0, 0, 0, 0),
    ST(GS_ACC_ZERO, "O", 0, 0, 0, 0),
    ST_MB(GS_MBAR_WAIT, "qfull", GMBAR_Q, 1, TK_tQ, 0, 0, 0),
    ST_BAR("bar.arrive 2, 256", GBAR_FIRST_TURN),
    ATT_KEY_TILE(0, TK_tKf_t, TK_tVf_t, GSTEP_SCORE_FULL),
    ATT_KEY_TILE(1, TK_tKm_t, TK_tVm_t, GSTEP_SCORE),
    ST_BAR("bar.sync 2, 256", GBAR_LAST_TURN),
    ST(GS_REDUCE, "sum l", 1, TK_tO, 0, TK_tL),
    ST_BAR("bar.sync 1, 256", GBAR_CONSUMERS),
    ST_STEP("finish", 2, TK_tO, TK_tL, TK_tFin, GSTEP_FINISH),
    ST(GS_STAGE_ACC, "st.shared.v2.f32", 1, TK_tFin, 0, TK_tStage),
    ST_BAR("bar.sync 1, 256", GBAR_CONSUMERS),
    ST(GS_EPILOGUE, "O", 1, TK_tStage, 0, TK_tE),
    ST(GS_ST_GLOBAL, "st.global.v2.b32 (4 x fp16) -> O", 1, TK_tE, 0, 0),
};
#undef ATT_KEY_TILE
/* statement indices: the producer's first wait on an empty slot; the
 * consumers' AccZero, their first pass's Loop (ATT_PASS0) and the second's
 * (ATT_PASS0 + ATT_TILE): within a pass, its full-barrier wait (+1), turn
 * (+2), S (+3), hand-off (+4), row max (+7), rescale (+8), P V's wait
 * (+12); the row sums' Reduce (ATT_SUMS) */
enum {
  NATT = sizeof ATT / sizeof ATT[0],
  ATT_EMPTY = 12,
  ATT_ZERO = 26,
  ATT_PASS0 = 29,
  ATT_TILE = 15,
  ATT_FULL = ATT_PASS0 + 1,
  ATT_TURN = ATT_PASS0 + 2,
  ATT_PV_WAIT = ATT_PASS0 + 12,
  ATT_SUMS = ATT_PASS0 + 2 * ATT_TILE + 1,
};

/* gpuir_verify on the sm90a attention kernel with statements st[0..n)
 * (D = DV = 64, 128 x 128 tiles, a 2-stage ring, rank-4 tensor maps) */
static bool att_verifies(const gpu_stmt *st, int n, const char *why) {
  static const sx *map[4];
  gpu_kernel k;
  memset(&k, 0, sizeof k);
  k.T = DT_FP16;
  k.algo = ALGO_WGMMA_SOFTMAX; /* its skeleton: its checks */
  k.plan.tile[0] = 128, k.plan.tile[1] = 128, k.plan.tile[2] = 64, k.plan.stages = 2;
  k.D = k.DV = 64;
  k.threads = 384;
  k.producer_regs = 40, k.consumer_regs = 232;
  k.nvec = 1, k.vecs[0] = 8;
  k.tmq = (gpu_tmap){"Q", NULL, NULL, map, 4, 2, 128, 0, 0};
  k.tmk = (gpu_tmap){"K", NULL, NULL, map, 4, 2, 128, 0, 0};
  k.tmv = (gpu_tmap){"V", NULL, NULL, map, 4, 2, 128, 0, 0};
  k.st = (gpu_stmt *)st, k.nst = k.cap_st = n;
  with_tokens(&k);
  return verifies_full(&k, why);
}

/* The sm90a attention row's ring and ping-pong discipline. */
static void sm90a_attention_discipline(void) {
  gpu_stmt st[NATT];
  CHECK(att_verifies(ATT, NATT, NULL));
  /* S issued outside the warpgroup's turn */
  int n = 0;
  for (int i = 0; i < NATT; i++)
    if (i != ATT_TURN) st[n++] = ATT[i];
  CHECK(!att_verifies(st, n, "ping-pong turn"));
  /* a box read before the consumers wait on its full barrier */
  n = 0;
  for (int i = 0; i < NATT; i++)
    if (i != ATT_FULL) st[n++] = ATT[i];
  CHECK(!att_verifies(st, n, "before the consumers wait on its full barrier"));
  /* the stage released before the P V group's wait */
  memcpy(st, ATT, sizeof ATT);
  st[ATT_PV_WAIT] = ATT[ATT_PV_WAIT + 1], st[ATT_PV_WAIT + 1] = ATT[ATT_PV_WAIT];
  CHECK(!att_verifies(st, NATT, "releases a stage a wgmma in flight may read"));
  /* a K box before the wait on its empty slot */
  memcpy(st, ATT, sizeof ATT);
  st[ATT_EMPTY] = ATT[ATT_EMPTY + 2], st[ATT_EMPTY + 2] = ATT[ATT_EMPTY];
  CHECK(!att_verifies(st, NATT, "does not wait for its slot's empty barrier"));
  /* the producer as its renderer writes it (emit.c, att_produce_fn): no
   * arrival arming qfull before Q's boxes */
  n = 0;
  for (int i = 0; i < NATT; i++)
    if (i != ATT_EMPTY - 3) st[n++] = ATT[i];
  CHECK(!att_verifies(st, n, "the attention producer's statement 0 is not the arrival on qfull with the Q tile's bytes"));
  /* two passes over the full key tiles */
  memcpy(st, ATT, sizeof ATT);
  st[ATT_EMPTY + 5].lo = 0;
  CHECK(!att_verifies(st, NATT, "statement 8 is not the loop over the other live key tiles"));
  /* V's boxes before K's */
  memcpy(st, ATT, sizeof ATT);
  st[ATT_EMPTY + 2] = ATT[ATT_EMPTY + 3], st[ATT_EMPTY + 3] = ATT[ATT_EMPTY + 2];
  CHECK(!att_verifies(st, NATT, "statement 5 is not K's boxes (TmaLoad of B)"));
  /* the consumers as their renderer writes them (emit.c, att_consume_fn):
   * the rescale before the row max it reads */
  memcpy(st, ATT, sizeof ATT);
  st[ATT_PASS0 + 7] = ATT[ATT_PASS0 + 8], st[ATT_PASS0 + 8] = ATT[ATT_PASS0 + 7];
  CHECK(!att_verifies(st, NATT, "the attention consumers' statement 10 is not the row max (Epilogue)"));
  /* no row sums over the quad before O / l */
  n = 0;
  for (int i = 0; i < NATT; i++)
    if (i != ATT_SUMS) st[n++] = ATT[i];
  CHECK(!att_verifies(st, n, "the attention consumers' statement 34 is not the row sums (Reduce)"));
  /* the second pass's score without the masks (score_full) */
  memcpy(st, ATT, sizeof ATT);
  st[ATT_PASS0 + ATT_TILE + 6].step = GSTEP_SCORE_FULL;
  CHECK(!att_verifies(st, NATT, "the attention consumers' statement 24 is not the score lets (Epilogue)"));
  /* the consumers' barrier (bar.sync 1) where the last turn belongs */
  memcpy(st, ATT, sizeof ATT);
  st[ATT_SUMS - 1].bar = GBAR_CONSUMERS;
  CHECK(!att_verifies(st, NATT, "the attention consumers' statement 33 is not warpgroup 0's last turn (Barrier)"));
  /* the accumulators never zeroed */
  n = 0;
  for (int i = 0; i < NATT; i++)
    if (i != ATT_ZERO) st[n++] = ATT[i];
  CHECK(!att_verifies(st, n, "the attention consumers' statement 0 is not the accumulators' zero (AccZero)"));
  /* no bounds-checked output after the staging */
  CHECK(!att_verifies(ATT, NATT - 1, "the attention consumers' bounds-checked epilogue and store are missing"));
  /* the setup as its renderer writes it (emit.c, sm90a_kernel_fn): no
   * init of Q's barrier */
  n = 0;
  for (int i = 0; i < NATT; i++)
    if (i != 3) st[n++] = ATT[i];
  CHECK(!att_verifies(st, n, "the sm90a attention setup's statement 3 is not Q's barrier's init (MbarInit, 1 arrival)"));
  /* no consumers' state (their descriptors) before their key tiles */
  n = 0;
  for (int i = 0; i < NATT; i++)
    if (i != ATT_ZERO - 1) st[n++] = ATT[i];
  CHECK(!att_verifies(st, n, "is not the consumers' descriptors (FragSetup)"));
}

/* A real kernel: manifests/graphs/gemm_bias_relu.json (B stored [K, N]) at
 * dtype T, through region, Poly Core and a plan pinned by `plan`, laid out
 * by gpuir_build for sm80.  The front's arena owns it. */
static gpu_kernel *real_gemm_plan(front *f, dtype T, const char *plan, plan_result **prp) {
  pipe_init(f);
  if (!pipe_run_file(f, "gemm_bias_relu.json", T, TO_POLY_VIEW)) {
    pipe_show(f);
    return NULL;
  }
  region_set *rs = region_build(&f->A, f->pv, &f->dl);
  pc_report *pc = rs ? pc_analyze(&f->A, rs, &f->dl) : NULL;
  cJSON *pin = cJSON_Parse(J(plan));
  plan_result *pr = pc ? plan_choose(&f->A, &rs->r[0], &pc->a[0], plan_arch("sm80"), pin, 0, NULL, &f->dl, "test") : NULL;
  cJSON_Delete(pin);
  gpu_kernel *k = pr ? gpuir_build(&f->A, &rs->r[0], &pc->a[0], &pr->chosen, "gemm", &f->dl) : NULL;
  if (!k) pipe_show(f);
  if (prp) *prp = pr;
  return k;
}

static gpu_kernel *real_gemm(front *f, dtype T, const char *plan) { return real_gemm_plan(f, T, plan, NULL); }

/* The index of the n-th statement of kind `kind` at or after `from` (-1: none). */
static int find_st(const gpu_kernel *k, int from, gpu_stmt_kind kind, int nth) {
  for (int i = from; i < k->nst; i++)
    if (k->st[i].k == kind && nth-- == 0) return i;
  return -1;
}

/* The index of k's token `name` (0 when it has none). */
static int tok_named(const gpu_kernel *k, const char *name) {
  for (int t = 1; t < k->ntok; t++)
    if (strcmp(k->tok[t].name, name) == 0) return t;
  return 0;
}

/* k with its statements `st` (n of them) in place of its own. */
static bool order_verifies(const gpu_kernel *k, gpu_stmt *st, int n, const char *why) {
  gpu_kernel m = *k;
  m.st = st, m.nst = m.cap_st = n;
  return verifies_full(&m, why);
}

/* Moves statement `from` to just before statement `to` of st[0..n). */
static void move_st(gpu_stmt *st, int from, int to) {
  gpu_stmt s = st[from];
  if (from < to) {
    memmove(&st[from], &st[from + 1], (size_t)(to - 1 - from) * sizeof *st);
    st[to - 1] = s;
  } else {
    memmove(&st[to + 1], &st[to], (size_t)(from - to) * sizeof *st);
    st[to] = s;
  }
}

static const char REUSE[] = "reads fragments from, with no bar.sync between them";

/* k's statements copied into st (n of them), `change` made to the copy,
 * which must then fail gpuir_verify with a reason containing `why` */
#define MUTATE(change, why)                    \
  do {                                         \
    memcpy(st, k->st, (size_t)n * sizeof *st); \
    change;                                    \
    CHECK(!order_verifies(k, st, n, why));     \
  } while (0)

/* The steady loop of a real GEMM: wait, bar.sync, k step 0's fragments and
 * MMA, the refill copies, the other k steps.  Its order and the drain
 * loop's pass; each reordering below lets a refill overwrite a stage some
 * warp may still be loading fragments from, and fails. */
static void sm80_stage_reuse(void) {
  front f;
  /* a 32x64 warp tile: no fragments a tile ahead (sm80_ahead) */
  gpu_kernel *k = real_gemm(&f, DT_FP16, "{'tile':[64,128,32],'stages':4}");
  CHECK(k != NULL);
  if (!k) return pipe_free(&f);
  CHECK(k->plan.stages == 4 && k->mma_k == 16 && k->steady_min_vec > 0 && k->ahead_vec == 0);
  int lo = find_st(k, 0, GS_LOOP, 0), bar = find_st(k, lo, GS_BARRIER, 0), cp = find_st(k, lo, GS_CP_ASYNC, 0),
      commit = find_st(k, lo, GS_COMMIT, 0), hi = find_st(k, lo, GS_END_LOOP, 0), n = k->nst;
  /* the order this test is written against: wait, bar.sync, k step 0, the
   * copies, the other k steps */
  CHECK(lo > 0 && k->st[lo + 1].k == GS_WAIT && bar == lo + 2 && k->st[bar + 1].k == GS_LDMATRIX && cp > bar &&
        commit > cp && find_st(k, commit, GS_LDMATRIX, 0) < hi && find_st(k, hi, GS_LOOP, 0) > hi);
  CHECK(cp > 0 && k->st[cp].out && strcmp(gpuir_tok_name(k, k->st[cp].out), "tA[kt+S-1]") == 0);
  if (!(lo > 0 && bar > 0 && cp > bar && commit > cp && hi > commit)) return pipe_free(&f);
  CHECK(verifies_full(k, NULL));
  gpu_stmt *st = malloc((size_t)n * sizeof *st);
  CHECK(st != NULL);
  if (!st) return pipe_free(&f);
  int m;
  /* (a) the refill copy of A before the barrier, right after the wait: the
   * last iteration's k steps 1.. may still load the stage it overwrites */
  memcpy(st, k->st, (size_t)n * sizeof *st);
  move_st(st, cp, bar);
  CHECK(!order_verifies(k, st, n, REUSE));
  CHECK(!order_verifies(k, st, n, "the iteration before"));
  /* (a') a refill of the stage this iteration reads (tile kt, an
   * off-by-one in the ring's index), after k step 0 loads from it */
  memcpy(st, k->st, (size_t)n * sizeof *st);
  st[cp].tile = 0;
  char same[64]; /* k step 0's load of A, in the copy's own iteration */
  snprintf(same, sizeof same, "(statement %d, tA[kt]) reads fragments", bar + 1);
  CHECK(!order_verifies(k, st, n, REUSE));
  CHECK(!order_verifies(k, st, n, same));
  /* (b) the barrier removed */
  memcpy(st, k->st, (size_t)n * sizeof *st);
  memmove(&st[bar], &st[bar + 1], (size_t)(n - bar - 1) * sizeof *st);
  CHECK(!order_verifies(k, st, n - 1, REUSE));
  /* (c) through the back edge: the barrier moved after the copies, so k
   * steps 1.. late in iteration kt-1 load the stage the copies early in
   * iteration kt overwrite */
  memcpy(st, k->st, (size_t)n * sizeof *st);
  move_st(st, bar, commit + 1);
  CHECK(!order_verifies(k, st, n, "the iteration before"));
  /* the drain loop's barrier removed: its copies follow its own loads and
   * the steady loop's last ones */
  int dlo = find_st(k, hi, GS_LOOP, 0), dbar = find_st(k, dlo, GS_BARRIER, 0);
  CHECK(dlo > hi && dbar == dlo + 2);
  memcpy(st, k->st, (size_t)n * sizeof *st);
  memmove(&st[dbar], &st[dbar + 1], (size_t)(n - dbar - 1) * sizeof *st);
  CHECK(!order_verifies(k, st, n - 1, REUSE));
  /* the drain loop's barrier and fragment loads removed: its first
   * iteration's copies follow the steady loop's last iteration's loads */
  int dhi = find_st(k, dlo, GS_END_LOOP, 0);
  m = 0;
  for (int i = 0; i < n; i++)
    if (!(i > dlo && i < dhi && (k->st[i].k == GS_BARRIER || k->st[i].k == GS_LDMATRIX))) st[m++] = k->st[i];
  CHECK(m < n - 2);
  snprintf(same, sizeof same, "(statement %d, tA[kt], the iteration before)", hi - 3);
  CHECK(!order_verifies(k, st, m, same));
  /* the staging tile overlays the ring: the barrier before its write
   * removed, the drain loop's last fragment loads may still be reading */
  int stg = find_st(k, 0, GS_STAGE_ACC, 0);
  CHECK(stg > dhi && k->st[stg - 1].k == GS_BARRIER);
  if (stg > 0 && k->st[stg - 1].k == GS_BARRIER) {
    memcpy(st, k->st, (size_t)n * sizeof *st);
    memmove(&st[stg - 1], &st[stg], (size_t)(n - stg) * sizeof *st);
    CHECK(!order_verifies(k, st, n - 1, "the staging tile's write"));
  }
  free(st);
  pipe_free(&f);

  /* tf32 (fp32 operands): B, stored [K, N], leaves shared memory with
   * ld.shared.b32, not ldmatrix; its loads count as fragment loads */
  k = real_gemm(&f, DT_FP32, "{'tile':[64,64,32],'stages':3}");
  CHECK(k != NULL);
  if (!k) return pipe_free(&f);
  CHECK(k->mma_k == 8 && k->plan.stages == 3);
  CHECK(verifies_full(k, NULL));
  n = k->nst;
  st = malloc((size_t)n * sizeof *st);
  CHECK(st != NULL);
  if (!st) return pipe_free(&f);
  int ldb = 0;
  m = 0;
  /* the barriers and A's fragment loads removed: only B's ld.shared.b32
   * remain to conflict */
  for (int i = 0; i < n; i++) {
    bool a_frag =
        k->st[i].k == GS_LDMATRIX && k->st[i].nin == 1 && strcmp(gpuir_tok_name(k, k->st[i].in[0]), "tA[kt]") == 0;
    ldb += k->st[i].k == GS_LDMATRIX && strcmp(k->st[i].what, "ld.shared.b32") == 0;
    if (!a_frag && !(k->st[i].k == GS_BARRIER && i < find_st(k, 0, GS_STAGE_ACC, 0))) st[m++] = k->st[i];
  }
  CHECK(ldb > 0);
  CHECK(!order_verifies(k, st, m, "ld.shared.b32"));
  free(st);
  pipe_free(&f);
}

/* The steady loop with k step 0's fragments a tile ahead (ahead_vec: the
 * widest width at a 64x64 warp tile).  Before it, when it runs, the first
 * tile's wait, barrier and step-0 fragments; in it, step 0's MMAs on the
 * fragments loaded an iteration earlier, the refill, the middle steps, the
 * last step's fragments, the wait for tile kt+1 and the barrier, tile
 * kt+1's step-0 fragments, the last step's MMAs; then the plain steady
 * loop for the narrower widths that stream.  The order passes; each change
 * below fails, with the ring's reason or the renderer's. */
static void sm80_ahead(void) {
  front f;
  gpu_kernel *k = real_gemm(&f, DT_FP16, "{'tile':[128,128,32],'stages':4}");
  CHECK(k != NULL);
  if (!k) return pipe_free(&f);
  CHECK(k->ahead_vec == 8 && k->steady_min_vec == 4 && k->plan.tile[2] / k->mma_k == 2);
  CHECK(verifies_full(k, NULL));
  int n = k->nst, lo = find_st(k, 0, GS_LOOP, 0), hi = find_st(k, lo, GS_END_LOOP, 0), pw = lo - 4,
      wait = find_st(k, lo, GS_WAIT, 0), bar = find_st(k, lo, GS_BARRIER, 0), cp = find_st(k, lo, GS_CP_ASYNC, 0),
      lo2 = find_st(k, hi, GS_LOOP, 0);
  /* the order this test is written against */
  bool shape = lo > 4 && k->st[pw].k == GS_WAIT && k->st[pw].ahead && k->st[pw + 1].k == GS_BARRIER &&
               k->st[pw + 2].k == GS_LDMATRIX && k->st[pw + 2].ahead && k->st[pw + 3].ahead &&
               k->st[lo].min_vec == 8 && k->st[lo + 1].k == GS_MMA && k->st[lo + 1].ahead && cp == lo + 2 &&
               bar == wait + 1 && k->st[wait - 2].k == GS_LDMATRIX && !k->st[wait - 2].ahead &&
               k->st[wait - 2].lo == 1 && k->st[bar + 1].ahead && k->st[bar + 1].tile == 1 && k->st[bar + 2].ahead &&
               k->st[bar + 3].k == GS_MMA && !k->st[bar + 3].ahead && bar + 4 == hi && lo2 > hi &&
               k->st[lo2].loop == GLOOP_STEADY && k->st[lo2].min_vec == 4 && k->st[lo2].below_vec == 8;
  CHECK(shape);
  gpu_stmt *st = shape ? malloc((size_t)n * sizeof *st) : NULL;
  if (!st) return pipe_free(&f);
  /* the loop's barrier removed: iteration kt+1's refill of stage kt
   * follows the last step's loads of it in iteration kt */
  memcpy(st, k->st, (size_t)n * sizeof *st);
  memmove(&st[bar], &st[bar + 1], (size_t)(n - bar - 1) * sizeof *st);
  CHECK(!order_verifies(k, st, n - 1, "the iteration before"));
  /* the wait and barrier before the last step's fragments: those load
   * stage kt after the barrier, and the next refill overwrites it */
  MUTATE((move_st(st, wait - 2, bar + 1), move_st(st, wait - 2, bar + 1)), REUSE);
  /* tile kt+1's fragments loaded from stage kt */
  MUTATE((st[bar + 1].tile = 0, st[bar + 1].in[0] = tok_named(k, "tA[kt]")), REUSE);
  MUTATE(st[bar + 1].tile = 0, "tile kt+1's step-0 fragments");
  /* the loop's wait dropped: tile kt+1's fragments before a wait covers them */
  memcpy(st, k->st, (size_t)n * sizeof *st);
  memmove(&st[wait], &st[wait + 1], (size_t)(n - wait - 1) * sizeof *st);
  CHECK(!order_verifies(k, st, n - 1, "ldmatrix reads tile tA[kt+1] before a wait covers it"));
  /* the prologue dropped: the first iteration's MMAs on fragments never loaded */
  memcpy(st, k->st, (size_t)n * sizeof *st);
  memmove(&st[pw], &st[lo], (size_t)(n - lo) * sizeof *st);
  CHECK(!order_verifies(k, st, n - 4, "without its prologue"));
  /* the loop opening with an MMA on fragments of its own iteration */
  MUTATE(st[lo + 1].ahead = false, "does not open with step 0's MMAs");
  /* the loop for the narrower widths too: it is the plain loop's */
  MUTATE(st[lo].min_vec = 4, "a loop out of place");
  /* the plain loop for every width that streams, the v8 kernel's too */
  MUTATE(st[lo2].below_vec = 0, "a loop out of place");
  /* the statements without the kernel's ahead_vec: its prologue then runs
   * for widths no steady loop takes */
  gpu_kernel m = *k;
  m.ahead_vec = 0;
  CHECK(!verifies_full(&m, "statement 24 (Wait cp.async.wait_group): runs for widths other than a steady loop's"));
  CHECK(pw == 24);
  free(st);
  pipe_free(&f);
}

/* The sm80 contraction's renderer (emit.c, kernel_fn) reads the statements'
 * structured fields; gpuir_verify admits only lists it renders.  A real
 * GEMM's list passes; each change below would render a kernel that is not
 * the IR's (or none), and fails with its own reason. */
static void sm80_render_shape(void) {
  front f;
  gpu_kernel *k = real_gemm(&f, DT_FP16, "{'tile':[64,128,32],'stages':4}");
  CHECK(k != NULL);
  if (!k) return pipe_free(&f);
  CHECK(k->ahead_vec == 0);
  CHECK(verifies_full(k, NULL));
  int n = k->nst, lo = find_st(k, 0, GS_LOOP, 0), hi = find_st(k, lo, GS_END_LOOP, 0),
      dlo = find_st(k, hi, GS_LOOP, 0), la = find_st(k, lo, GS_LDMATRIX, 0), cp = find_st(k, lo, GS_CP_ASYNC, 0),
      wait = find_st(k, lo, GS_WAIT, 0), pro = find_st(k, 0, GS_CP_ASYNC, 0), adv = find_st(k, lo, GS_ADVANCE, 0);
  CHECK(lo > 0 && hi > lo && dlo > hi && la > lo && cp > la && wait > lo && pro > 0 && pro < lo && adv > cp);
  CHECK(k->st[lo].loop == GLOOP_STEADY && k->st[dlo].loop == GLOOP_DRAIN && k->st[cp].copy == GCOPY_STREAM &&
        k->st[pro].copy == GCOPY_TILE && k->st[pro].stage == 0 && k->st[cp].tile == 3 && k->st[wait].lo == 2);
  gpu_stmt *st = malloc((size_t)n * sizeof *st);
  CHECK(st != NULL);
  if (!st) return pipe_free(&f);
  /* A's and B's fragment loads swapped: B's no longer follow A's */
  MUTATE((st[la] = k->st[la + 1], st[la + 1] = k->st[la]), "fragments or MMAs outside a k-step group");
  /* B's fragments on other k steps than A's */
  MUTATE(st[la + 1].hi = 1, "a k-step group that is not");
  /* a steady copy with bounds, a drain copy streamed, a prologue copy at a tile the ring does not hold */
  MUTATE(st[cp].copy = GCOPY_BOUNDED, "of the wrong kind");
  MUTATE(st[find_st(k, dlo, GS_CP_ASYNC, 0)].copy = GCOPY_STREAM, "of the wrong kind");
  MUTATE(st[pro].tile = 3, "a tile the ring does not hold");
  MUTATE(st[pro].stage = 1, "a tile the ring does not hold");
  /* a wait that leaves 3 groups in flight in a 4-stage ring */
  MUTATE(st[wait].lo = 3, "groups in flight");
  /* an advance of a K counter no operand walks */
  MUTATE(st[adv].side = GSIDE_KWALK, "an advance of state no streamed operand keeps");
  /* the steady loop for other widths than the streams' */
  MUTATE(st[lo].min_vec = 8, "runs for widths other than a steady loop's");
  /* the drain before a steady loop: two steady loops */
  MUTATE(st[dlo].loop = GLOOP_STEADY, "a loop out of place");
  /* a statement the sm80 contraction does not render */
  MUTATE(st[cp].k = GS_REDUCE, "a kind the sm80 contraction does not render");
  /* the steady loop's EndLoop dropped: the drain nests in it */
  memcpy(st, k->st, (size_t)n * sizeof *st);
  memmove(&st[hi], &st[hi + 1], (size_t)(n - hi - 1) * sizeof *st);
  CHECK(!order_verifies(k, st, n - 1, "a loop out of place"));
  free(st);

  /* split-K: the first kernel stores its partial with no epilogue; the
   * second sums the slices in its loop over the columns */
  sched_plan q = k->plan;
  q.split_k = 8;
  gpu_kernel *k1 = gpuir_build(&f.A, k->r, k->a, &q, "gemm", &f.dl);
  gpu_kernel *red = k1 ? gpuir_build_splitk_reduce(&f.A, k1, "gemm_r", &f.dl) : NULL;
  CHECK(k1 != NULL && red != NULL);
  if (k1 && red) {
    k1->reduce = red;
    CHECK(verifies_full(k1, NULL));
    CHECK(verifies_full(red, NULL));
    int rl = find_st(red, 0, GS_LOOP, 0);
    CHECK(rl == 1 && red->st[rl].loop == GLOOP_COLUMNS && red->st[red->nst - 1].k == GS_END_LOOP);
    /* the loop over the columns dropped: the load and the store run once */
    gpu_stmt rst[8];
    int m = 0;
    for (int i = 0; i < red->nst && m < 8; i++)
      if (red->st[i].k != GS_LOOP && red->st[i].k != GS_END_LOOP) rst[m++] = red->st[i];
    gpu_kernel rk = *red;
    rk.st = rst, rk.nst = rk.cap_st = m;
    CHECK(!verifies_full(&rk, "a loop over the columns"));
  }
  pipe_free(&f);
}

/* A real sm80 attention kernel (manifests/graphs/attention_causal.json, fp16,
 * D bound to d), as the pipeline builds it. */
static gpu_kernel *real_attention(front *f, int d) {
  pipe_init(f);
  char *t = shared_graph("attention_causal.json");
  cJSON *dims = cJSON_CreateObject();
  cJSON_AddNumberToObject(dims, "D", d);
  fe_instance inst = {DT_FP16, NULL, dims};
  bool ok = pipe_run_inst(f, t, &inst, TO_POLY_VIEW);
  free(t);
  region_set *rs = ok ? region_build(&f->A, f->pv, &f->dl) : NULL;
  pc_report *pc = rs ? pc_analyze(&f->A, rs, &f->dl) : NULL;
  const arch_info *archs[1] = {plan_arch("sm80")};
  plan_result *pr = pc ? plan_attention(&f->A, &rs->r[0], &pc->a[0], d, d, archs, 1, NULL, &f->dl, "test") : NULL;
  gpu_kernel *k = pr ? gpuir_build_attention(&f->A, rs, pc, &pr->chosen, "attn", &f->dl) : NULL;
  cJSON_Delete(dims);
  if (!k) pipe_show(f);
  return k;
}

/* sm80 attention's renderer (emit.c, ATT_RENDER) reads the statements'
 * fields (the passes' modes, sides, steps); gpuir_verify admits only lists
 * it renders.  A real kernel passes at D = 64 (Q's fragments kept) and 128
 * (re-read); each change below fails with its own reason, the last one
 * (a pass's first copy after the pass before reads the ring, with no
 * bar.sync) with verify_stage_reuse's. */
static void sm80_att_render_shape(void) {
  front f;
  gpu_kernel *k = real_attention(&f, 64);
  CHECK(k != NULL);
  if (!k) return pipe_free(&f);
  CHECK(verifies_full(k, NULL));
  int n = k->nst, l0 = find_st(k, 0, GS_LOOP, 0), l1 = find_st(k, l0 + 1, GS_LOOP, 0),
      kf = find_st(k, l0, GS_LDMATRIX, 0), pf = -1, first1 = l1 - 2, next0 = l0 + 1;
  for (int i = l0; i < l1 && pf < 0; i++)
    if (k->st[i].k == GS_EPILOGUE && k->st[i].step == GSTEP_P_FRAGS) pf = i;
  CHECK(l0 > 0 && l1 > l0 && kf > l0 && pf > kf && k->st[first1].k == GS_CP_ASYNC && k->st[next0].k == GS_CP_ASYNC);
  gpu_stmt *st = malloc((size_t)n * sizeof *st);
  CHECK(st != NULL && pf > 0);
  if (!st || pf < 0) {
    free(st);
    return pipe_free(&f);
  }
  /* the passes out of order: the masked pass's loop says pass 2 */
  MUTATE(st[l1].lo = 2, "a key-tile loop out of place");
  /* the masked pass's first tile copied for another pass */
  MUTATE(st[first1].lo = 0, "of another pass than its loop's");
  /* the full pass's next tile copied with the masked pass's selection */
  MUTATE(st[next0].lo = 1, "of another pass than its loop's");
  /* K's fragments and the MMAs of S apart */
  MUTATE((st[kf + 1] = k->st[kf + 2], st[kf + 2] = k->st[kf + 1]), "S = Q K^T that is not");
  /* V's fragments before P's */
  MUTATE((st[pf] = k->st[pf + 1], st[pf + 1] = k->st[pf]), "fragments or MMAs outside");
  /* score_full outside the full pass */
  MUTATE(st[find_st(k, l1, GS_EPILOGUE, 1)].step = GSTEP_SCORE_FULL, "an epilogue step out of place");
  /* a wait inside a loop that leaves nothing in flight */
  MUTATE(st[find_st(k, l0, GS_WAIT, 0)].lo = 0, "groups in flight");
  /* a plan of three stages: the template's ring has two */
  gpu_kernel k3 = *k;
  k3.plan.stages = 3;
  CHECK(!verifies_full(&k3, "a ring of other than two stages"));
  /* the ring's stage reuse across passes: the full pass's loop without its
   * refill (copy, commit) and its closing bar.sync leaves the masked pass's
   * first copy behind the full pass's fragment loads with no barrier; the
   * stage it lands in turns with the tile count, so any of them conflicts */
  int e0 = find_st(k, l0, GS_END_LOOP, 0), m = 0;
  CHECK(e0 > l0 && k->st[e0 - 1].k == GS_BARRIER && k->st[next0 + 1].k == GS_COMMIT);
  for (int i = 0; i < n; i++)
    if (i != next0 && i != next0 + 1 && i != e0 - 1) st[m++] = k->st[i];
  CHECK(!order_verifies(k, st, m, "a pass's first tile, lands in a ring stage"));
  char which[48]; /* the masked pass's first copy, its index in st */
  snprintf(which, sizeof which, "(statement %d, %s)", first1 - 3, gpuir_tok_name(k, k->st[first1].out));
  CHECK(!order_verifies(k, st, m, which));
  free(st);
  pipe_free(&f);
  k = real_attention(&f, 128);
  CHECK(k != NULL && !k->plan.a_frag_regs);
  if (k) CHECK(verifies_full(k, NULL));
  pipe_free(&f);
}

/* The row skeleton's renderer (emit.c, rows_kernel) writes one kernel
 * from the statements' order and fields (passes, loads); gpuir_verify
 * admits only lists it renders.  A real softmax (manifests/graphs, fp16)
 * passes: its three passes (the row max, the row sum, the outputs) each
 * load X, the first from global memory, the later ones from the row cache.
 * Each change below fails with its own reason. */
/* The row skeleton's kernel of the shared graph softmax.json (fp16, sm80),
 * and its plan (*prp). */
static gpu_kernel *real_softmax(front *f, plan_result **prp) {
  pipe_init(f);
  bool ok = pipe_run_file(f, "softmax.json", DT_FP16, TO_POLY_VIEW);
  region_set *rs = ok ? region_build(&f->A, f->pv, &f->dl) : NULL;
  pc_report *pc = rs ? pc_analyze(&f->A, rs, &f->dl) : NULL;
  gpu_rows rw;
  const char *why = NULL;
  ok = pc && rs->n == 1 && gpuir_rows_view(&f->A, &rs->r[0], &rw, &why);
  const arch_info *archs[1] = {plan_arch("sm80")};
  plan_result *pr =
      ok ? plan_rows(&f->A, &rs->r[0], rs->r[0].it[rw.row_axis].size, rw.vec, archs, 1, &f->dl, "test") : NULL;
  gpu_kernel *k = pr ? gpuir_build_rows(&f->A, &rs->r[0], &pc->a[0], &pr->chosen, "softmax", &f->dl) : NULL;
  if (!k) pipe_show(f);
  if (prp) *prp = pr;
  return k;
}

static void sm80_rows_render_shape(void) {
  front f;
  gpu_kernel *k = real_softmax(&f, NULL);
  CHECK(k != NULL);
  if (!k) return pipe_free(&f);
  CHECK(verifies_full(k, NULL));
  int n = k->nst, l0 = find_st(k, 0, GS_LOOP, 0), l1 = find_st(k, 0, GS_LOOP, 1), l2 = find_st(k, 0, GS_LOOP, 2),
      red0 = find_st(k, 0, GS_REDUCE, 0);
  CHECK(k->rw.nred == 2 && l0 == 1 && k->st[l0 + 1].k == GS_LD_GLOBAL && k->st[l0 + 2].k == GS_ROW_LETS && l1 > red0 &&
        k->st[l1 + 1].k == GS_LD_SHARED && k->st[l1 + 2].k == GS_ROW_LETS && l2 > l1 && k->st[n - 2].k == GS_ST_GLOBAL);
  CHECK(k->st[l1 + 1].rd && k->st[l1 + 1].load == GLOAD_VEC && k->st[l1].loop == GLOOP_ROW && k->st[l2].pass == 2);
  if (!(l0 == 1 && l1 > red0 && red0 > 0 && l2 > l1 && k->st[l1 + 2].k == GS_ROW_LETS)) return pipe_free(&f);
  gpu_stmt *st = malloc((size_t)n * sizeof *st);
  CHECK(st != NULL);
  if (!st) return pipe_free(&f);
  /* the row sum's pass without its load of X: its lets read X unloaded */
  memcpy(st, k->st, (size_t)n * sizeof *st);
  move_st(st, l1 + 1, n);
  CHECK(!order_verifies(k, st, n - 1, "pass 1 of the row skeleton reads X without loading it"));
  /* a load of the row sum's pass marked as the row max's */
  MUTATE(st[l1 + 1].pass = 0, "a load of another pass");
  /* a load from the row cache that is not a vector's */
  MUTATE(st[l1 + 1].load = GLOAD_ELEM, "loaded as its kind cannot be");
  /* the passes out of order */
  MUTATE(st[l1].pass = 2, "a Loop out of pass order");
  /* a pass's lets before its loads: the lets read X unloaded */
  MUTATE((st[l1 + 1] = k->st[l1 + 2], st[l1 + 2] = k->st[l1 + 1]), "reads X without loading it");
  /* the row sum's loads followed by the lets of another pass */
  MUTATE(st[l1 + 2].pass = 0, "not followed by its RowLets");
  /* the row max's all-reduce said to be the row sum's */
  MUTATE(st[red0].pass = 1, "followed by its Reduce and RowScalar");
  /* the output's store after the output pass */
  MUTATE((st[n - 2] = k->st[n - 1], st[n - 1] = k->st[n - 2]), "not a row-scalar output's store");
  free(st);
  pipe_free(&f);
}

/* The skeleton table (skel/skel.h): a row for every algo of algo.def, under
 * its own key, with its pipeline operations, its checks, its dump and (but
 * for split-K's reduce, rendered with its first kernel's Op) its renderer;
 * a kernel whose algo no row has fails gpuir_verify instead of going
 * unchecked. */
static void skeleton_table(void) {
  for (int a = 0; a < ALGO__COUNT; a++) {
    const skel_ops *sk = skel_of((dlc_algo)a);
    CHECK(sk && sk->algo == (dlc_algo)a && sk->verify && sk->dump);
    /* one renderer (a whole Op, or split: a shared template and the plan's struct), none for the reduce */
    CHECK(sk && (sk->render != NULL || sk->render_split != NULL) == (a != ALGO_SPLITK_REDUCE));
    CHECK(sk && !(sk->render && sk->render_split));
    /* the pipeline's part: every skeleton but split-K's reduce takes runs
     * of its own, with its plan check and builder; the sm90a ones run on
     * sm90a alone */
    CHECK(sk && (sk->fits != NULL) == (a != ALGO_SPLITK_REDUCE) && (!sk->fits || (sk->verify_plan && sk->build)));
    CHECK(sk && sk->only == (sk->arch == ARCH_SM90A));
  }
  CHECK(skel_of(ALGO__COUNT) == NULL && skel_of((dlc_algo)-1) == NULL);
  /* the shapes the host code and the comments ask for */
  CHECK(skel_of(ALGO_STREAMING_SOFTMAX)->shape == SKEL_ATTENTION && skel_of(ALGO_WGMMA_SOFTMAX)->shape == SKEL_ATTENTION);
  CHECK(skel_of(ALGO_ROW_REDUCE)->shape == SKEL_ROWS);
  CHECK(skel_of(ALGO_IMPLICIT_GEMM)->shape == SKEL_CONTRACTION && skel_of(ALGO_SPLITK_REDUCE)->shape == SKEL_CONTRACTION &&
        skel_of(ALGO_TMA_WGMMA)->shape == SKEL_CONTRACTION && skel_of(ALGO_CPASYNC_WGMMA)->shape == SKEL_CONTRACTION);
  gpu_kernel k = one_tile(64, 64, 8);
  k.algo = ALGO__COUNT;
  CHECK(!verifies_full(&k, "has no skeleton"));
}

/* The CUDA emit_op_cu writes for kernel k (plan pr) on `arch`, with its
 * comments left out (// to the end of the line); NULL when it writes none. */
static char *op_code(front *f, const gpu_kernel *k, const plan_result *pr, const char *name, dtype T,
                     const char *arch) {
  mf_op op = {0};
  op.name = name;
  op.graph_where = "test";
  op.ndtypes = 1;
  op.dtypes = &T;
  emit_instance in = {dtype_name(T), T, NULL, NULL, f->fe, k, pr, NULL, 0, NULL, NULL, NULL, NULL, 0};
  emit_op eo = {&op, 0, 1, &in, 0, NULL};
  const char *archs[1] = {arch};
  manifest m = {0};
  m.narchs = 1;
  m.archs = archs;
  emit_ctx c = {&f->A, &m, NULL, 1, &eo, &f->dl, NULL};
  char *cu = emit_op_cu(&c, &eo);
  if (!cu) return NULL;
  char *w = cu;
  for (const char *r = cu; *r;) {
    if (r[0] == '/' && r[1] == '/') {
      while (*r && *r != '\n') r++;
      continue;
    }
    *w++ = *r++;
  }
  *w = 0;
  return cu;
}

/* The sm90a contraction skeleton's kernel of gemm_bias_relu.json (fp16),
 * and its plan. */
static gpu_kernel *real_gemm_sm90a(front *f, plan_result **prp) {
  pipe_init(f);
  bool ok = pipe_run_file(f, "gemm_bias_relu.json", DT_FP16, TO_POLY_VIEW);
  region_set *rs = ok ? region_build(&f->A, f->pv, &f->dl) : NULL;
  pc_report *pc = rs ? pc_analyze(&f->A, rs, &f->dl) : NULL;
  plan_result *pr = pc ? plan_sm90a(&f->A, &rs->r[0], &pc->a[0], plan_arch("sm90a"), NULL, NULL, &f->dl, "test") : NULL;
  gpu_kernel *k = pr ? gpuir_build_sm90a(&f->A, &rs->r[0], &pc->a[0], &pr->chosen, "gemm", &f->dl) : NULL;
  if (!k) pipe_show(f);
  *prp = pr;
  return k;
}

/* The sm90a attention skeleton's kernel of attention_causal.json (fp16,
 * D = 64), and its plan. */
static gpu_kernel *real_attention_sm90a(front *f, plan_result **prp) {
  pipe_init(f);
  char *t = shared_graph("attention_causal.json");
  cJSON *dims = cJSON_CreateObject();
  cJSON_AddNumberToObject(dims, "D", 64);
  fe_instance inst = {DT_FP16, NULL, dims};
  bool ok = pipe_run_inst(f, t, &inst, TO_POLY_VIEW);
  free(t);
  region_set *rs = ok ? region_build(&f->A, f->pv, &f->dl) : NULL;
  pc_report *pc = rs ? pc_analyze(&f->A, rs, &f->dl) : NULL;
  plan_result *pr =
      pc ? plan_sm90a_attention(&f->A, &rs->r[0], &pc->a[0], 64, 64, false, plan_arch("sm90a"), &f->dl, "test") : NULL;
  gpu_kernel *k = pr ? gpuir_build_sm90a_attention(&f->A, rs, pc, &pr->chosen, "attn", &f->dl) : NULL;
  cJSON_Delete(dims);
  if (!k) pipe_show(f);
  *prp = pr;
  return k;
}

/* A statement's what and detail are its annotation, for the dump and the
 * generated comments: no check and no renderer decides on them.  Each
 * statement's what and detail replaced by text of no meaning, a real
 * kernel of each sm80 skeleton still verifies, and its CUDA is the same
 * but for the comments. */
static void annotations_decide_nothing(void) {
  static const char *const plans[] = {"{'tile':[64,128,32],'stages':4}", "{'tile':[128,128,32],'stages':4}",
                                      "{'tile':[64,64,32],'stages':3}"};
  for (int which = 0; which < 8; which++) {
    front f;
    plan_result *pr = NULL;
    dtype T = which == 2 ? DT_FP32 : DT_FP16;
    const char *name = which < 3 || which == 6 ? "gemm" : which == 5 ? "softmax" : "attn";
    const char *arch = which < 6 ? "sm80" : "sm90a";
    gpu_kernel *k = which < 3    ? real_gemm_plan(&f, T, plans[which], &pr)
                    : which < 5  ? real_attention(&f, which == 3 ? 64 : 128)
                    : which == 5 ? real_softmax(&f, &pr)
                    : which == 6 ? real_gemm_sm90a(&f, &pr)
                                 : real_attention_sm90a(&f, &pr);
    CHECK(k != NULL);
    if (!k) {
      pipe_free(&f);
      continue;
    }
    char *before = op_code(&f, k, pr, name, T, arch);
    CHECK(before != NULL);
    for (int i = 0; i < k->nst; i++) {
      k->st[i].what = arena_printf(&f.A, "?%d", i);
      k->st[i].detail = k->st[i].detail ? "?" : NULL;
    }
    CHECK(verifies_full(k, NULL));
    char *after = before ? op_code(&f, k, pr, name, T, arch) : NULL;
    CHECK(after != NULL && strcmp(before, after) == 0);
    if (before && after && strcmp(before, after) != 0) {
      size_t d = 0;
      while (before[d] == after[d]) d++;
      fprintf(stderr, "kernel %d: the code differs at byte %zu: ...%.80s\n", which, d, before + (d > 40 ? d - 40 : 0));
    }
    free(before);
    free(after);
    pipe_free(&f);
  }
}

/* emit_verify_cu on the render log of a real GEMM's CUDA (emit_op_cu):
 * the log as rendered passes; a statement whose marks are dropped is one
 * the CUDA does not execute, a copy marked after the ldmatrix that reads
 * its tile runs the IR out of order, and statements marked in a function
 * the kernel never calls are not run; each fails with its reason. */
/* text with its first `from` replaced by `to` (text itself when absent). */
static const char *replaced(arena *A, const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  if (!at) return text;
  return arena_printf(A, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

/* Whether emit_verify_cu passes (why NULL), or fails with a reason
 * containing `why`. */
static bool cu_verify_as(const emit_ctx *c, const emit_op *eo, const char *why) {
  diag_list dl;
  diag_init(&dl);
  bool ok = emit_verify_cu(c, eo, &dl);
  bool found = false;
  for (int i = 0; i < dl.n && why; i++) found |= strstr(dl.items[i].why, why) != NULL;
  bool as = why ? !ok && found : ok && dl.n == 0;
  if (!as)
    for (int i = 0; i < dl.n; i++) fprintf(stderr, "  cu: %s\n", dl.items[i].why);
  diag_free(&dl);
  return as;
}

static void cu_verifier(void) {
  front f;
  plan_result *pr = NULL;
  gpu_kernel *k = real_gemm_plan(&f, DT_FP16, "{'tile':[64,128,32],'stages':4}", &pr);
  CHECK(k != NULL);
  if (!k) return pipe_free(&f);
  mf_op op = {0};
  op.name = "gemm";
  op.graph_where = "test";
  dtype T = DT_FP16;
  op.ndtypes = 1;
  op.dtypes = &T;
  emit_instance in = {"fp16", T, NULL, NULL, f.fe, k, pr, NULL, 0, NULL, NULL, NULL, NULL, 0};
  emit_op eo = {&op, 0, 1, &in, 0, NULL};
  const char *archs[1] = {"sm80"};
  manifest m = {0};
  m.narchs = 1;
  m.archs = archs;
  emit_ctx c = {&f.A, &m, NULL, 1, &eo, &f.dl, NULL};
  char *cu = emit_op_cu(&c, &eo);
  CHECK(cu != NULL && c.log != NULL);
  if (!cu || !c.log) return pipe_free(&f);
  free(cu);
  CHECK(cu_verify_as(&c, &eo, NULL));
  render_log *log = c.log;
  render_mark *saved = malloc(sizeof *saved * (size_t)log->n);
  CHECK(saved != NULL);
  if (!saved) return pipe_free(&f);
  memcpy(saved, log->m, sizeof *saved * (size_t)log->n);
  int n = log->n;
  int cp = find_st(k, 0, GS_CP_ASYNC, 0), ld = find_st(k, 0, GS_LDMATRIX, 0);
  CHECK(cp >= 0 && ld > cp && k->st[cp].out != 0);
  /* (a) the first copy's marks dropped: not rendered */
  log->n = 0;
  for (int i = 0; i < n; i++)
    if (saved[i].st != cp) log->m[log->n++] = saved[i];
  char why[96];
  snprintf(why, sizeof why, "statement %d (CpAsync", cp);
  CHECK(cu_verify_as(&c, &eo, why));
  CHECK(cu_verify_as(&c, &eo, "was not rendered"));
  /* (b) every copy and wait marked after the statements, as a kernel that
   * runs them last would: the first ldmatrix reads its tile first */
  log->n = 0;
  for (int i = 0; i < n; i++)
    if (k->st[saved[i].st].k != GS_CP_ASYNC && k->st[saved[i].st].k != GS_WAIT) log->m[log->n++] = saved[i];
  for (int i = 0; i < n; i++)
    if (k->st[saved[i].st].k == GS_CP_ASYNC || k->st[saved[i].st].k == GS_WAIT) log->m[log->n++] = saved[i];
  CHECK(cu_verify_as(&c, &eo, "before it is produced"));
  /* (c) the statements from the first ldmatrix on marked in Op::consume,
   * which the kernel does not call: not run; with the call where they
   * were, they run in order again */
  memcpy(log->m, saved, sizeof *saved * (size_t)n);
  log->n = n;
  int first = -1;
  for (int i = 0; i < n; i++)
    if (saved[i].st >= ld) log->m[i].fn = RENDER_FN_CONSUME, first = first < 0 ? i : first;
  CHECK(first > 0);
  CHECK(cu_verify_as(&c, &eo, "was not rendered"));
  render_mark *with = ARENA_ARRAY(&f.A, render_mark, n + 1);
  memcpy(with, log->m, sizeof *with * (size_t)first);
  with[first] = (render_mark){k, -1, RENDER_FN_KERNEL, RENDER_FN_CONSUME};
  memcpy(with + first + 1, log->m + first, sizeof *with * (size_t)(n - first));
  log->m = with, log->n = log->cap = n + 1;
  CHECK(cu_verify_as(&c, &eo, NULL));
  /* (d) the Op's text: a constant the template reads renamed, then a
   * condition turned on (A walks its K axes) without the functions the
   * template reads under it */
  CHECK(log->nops >= 1 && log->ops[0].k == k);
  if (log->nops >= 1) {
    const char *text = log->ops[0].text;
    CHECK(strstr(text, "BM = 64") != NULL && strstr(text, "A_WALK = false") != NULL);
    log->ops[0].text = replaced(&f.A, text, "BM = 64", "BMX = 64");
    CHECK(cu_verify_as(&c, &eo, "does not declare BM, which the template reads"));
    log->ops[0].text = replaced(&f.A, text, "A_WALK = false", "A_WALK = true");
    CHECK(cu_verify_as(&c, &eo, "does not declare a_gw, which the template reads when A_WALK holds"));
    log->ops[0].text = text;
    CHECK(cu_verify_as(&c, &eo, NULL));
  }
  free(saved);
  pipe_free(&f);
}

int main(void) {
  skeleton_table();
  cu_verifier();
  sm80_stage_reuse();
  sm80_ahead();
  sm80_att_render_shape();
  sm80_rows_render_shape();
  sm80_render_shape();
  sm90a_ring_discipline();
  tokens_typed();
  annotations_decide_nothing();
  sm90a_producer_render();
  sm90a_setup_render();
  sm90a_consumer_loop();
  sm90a_attention_discipline();
  /* the layout attention had at head dim 80 and 96 (xor 8 over rows of 10
   * and 12 chunks): chunk 8 of row 7 went to chunk 15 */
  gpu_kernel k = one_tile(64, 80, 8);
  CHECK(!verifies(&k, "outside its row"));
  k = one_tile(64, 96, 8);
  CHECK(!verifies(&k, "outside its row"));
  /* xor 6 over rows of 6 chunks (head dim 48) */
  k = one_tile(64, 48, 6);
  CHECK(!verifies(&k, "repeat every 8 rows"));
  /* the widths gpuir_swizzle_width picks pass, for every row of whole
   * 16-byte chunks up to 4096 two-byte elements */
  for (int l = 8; l <= 4096; l += 8) {
    int w = gpuir_swizzle_width(l * 2);
    CHECK(w >= 1 && w <= 8 && (l / 8) % w == 0);
    k = one_tile(16, l, w);
    CHECK(verifies(&k, NULL));
  }
  CHECK(gpuir_swizzle_width(160) == 2 && gpuir_swizzle_width(192) == 4 && gpuir_swizzle_width(256) == 8 &&
        gpuir_swizzle_width(512) == 8 && gpuir_swizzle_width(24) == 0);
  /* rows that are not whole chunks */
  k = one_tile(64, 36, 1);
  CHECK(!verifies(&k, "not whole 16-byte chunks"));
  /* chunks wider than the row divides */
  k = one_tile(64, 80, 2);
  k.vecs[0] = 16;
  CHECK(!verifies(&k, "do not divide"));
  /* two tiles that overlap, and a tile past the block's shared memory */
  k = one_tile(64, 64, 8);
  k.tiles[1] = (gpu_smem_tile){"smV", 64 * 64 * 2, 2, 64, 64, 2, 8};
  k.ntiles = 2;
  k.smem = 4 * 64 * 64 * 2;
  CHECK(!verifies(&k, "overlap"));
  k.tiles[1].offset = 2 * 64 * 64 * 2;
  CHECK(verifies(&k, NULL));
  k.smem -= 16;
  CHECK(!verifies(&k, "outside the block"));

  /* fp32 tiles (tf32 mma): a tile of 4-byte elements 8 chunks wide or more
   * (xor 8) verifies for every row length a plan can ask for; on it, the
   * 32 words an M/N-contiguous fragment load reads (k rows 4j..4j+3, the
   * 8 columns 8c..8c+7) fall in 32 distinct banks, and the 8 rows an
   * ldmatrix or a cp.async phase reads at one chunk in 8 distinct bank
   * quads.  The 16-bit XOR (row % 8) gives the fragment load 2-way
   * conflicts: rows 0 and 1 share chunks 0 and 1. */
  for (int l = 4; l <= 2048; l += 4) {
    k = one_tile(16, l, gpuir_swizzle_width(l * 4));
    k.tiles[0].elem_bytes = 4, k.vecs[0] = 4;
    k.smem = 2 * 16 * l * 4;
    CHECK(verifies(&k, NULL));
  }
  for (int l = 32; l <= 256; l += 32) {
    gpu_smem_tile t = {"smB", 0, 1, 32, l, 4, gpuir_swizzle_width(l * 4)};
    CHECK(t.swz == 8);
    for (int j = 0; j < 8; j++)
      for (int c = 0; c < l / 8; c++) {
        unsigned banks = 0;
        for (int r = 4 * j; r < 4 * j + 4; r++)
          for (int col = 8 * c; col < 8 * c + 8; col++) {
            int word = r * l + ((col / 4) ^ gpuir_swizzle_xor(&t, r)) * 4 + col % 4;
            banks |= 1u << (word % 32);
          }
        CHECK(banks == 0xFFFFFFFFu);
      }
    for (int r0 = 0; r0 < 32; r0 += 8)
      for (int ch = 0; ch < l / 4; ch++) {
        unsigned quads = 0;
        for (int r = r0; r < r0 + 8; r++) quads |= 1u << (((r * l) / 4 + (ch ^ gpuir_swizzle_xor(&t, r))) % 8);
        CHECK(quads == 0xFFu);
      }
    gpu_smem_tile h = t;
    h.elem_bytes = 2;  /* the 16-bit order on the same bytes */
    unsigned banks = 0;
    for (int r = 0; r < 4; r++)
      for (int col = 0; col < 8; col++) banks |= 1u << ((r * l + ((col / 4) ^ gpuir_swizzle_xor(&h, r)) * 4 + col % 4) % 32);
    CHECK(banks != 0xFFFFFFFFu);
  }
  return check_status("test_gpuir");
}
