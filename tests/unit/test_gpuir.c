/* GPU IR's shared-layout verifier (gpuir_verify_smem): the 16-byte chunks
 * of a swizzled shared row stay in their row and never share a place, the
 * tiles stay apart and inside the block's shared memory, and
 * gpuir_swizzle_width picks a width that passes for every row length a
 * plan can ask for; gpuir_swizzle_xor spreads the accesses of the tf32
 * fragment loads over the 32 banks.  The sm90a row's ring discipline
 * (gpuir_verify on a hand-built statement list): a gathering producer's
 * arrival on a full barrier must follow the landing of its copies and then
 * fence.proxy.async, every copy must wait for its empty slot, and a copy
 * must be its producer's kind (cp.async for the gathering one, TMA else).
 * The sm90a attention row's (gpuir_verify on its statements): every S wgmma
 * in its warpgroup's ping-pong turn, every box read after the consumers'
 * wait on its full barrier, a stage released only after the wait for the
 * P V group that reads it, and every K/V box after its empty slot's wait. */
#include <stdlib.h>

#include "check.h"
#include "gpuir.h"

static gpu_kernel one_tile(int rows, int row_elems, int swz) {
  gpu_kernel k;
  memset(&k, 0, sizeof k);
  k.nvec = 1, k.vecs[0] = 8;
  k.tiles[0] = (gpu_smem_tile){"smK", 0, 2, rows, row_elems, 2, swz};
  k.ntiles = 1;
  k.smem = 2 * rows * row_elems * 2;
  return k;
}

static bool verifies(const gpu_kernel *k, const char *why) {
  diag_list dl;
  diag_init(&dl);
  bool ok = gpuir_verify_smem(k, &dl);
  CHECK(ok == !diag_has_errors(&dl));
  if (!ok && why) {
    bool found = false;
    for (int i = 0; i < dl.n; i++) found |= dl.items[i].why && strstr(dl.items[i].why, why) != NULL;
    CHECK(found);
  }
  diag_free(&dl);
  return ok;
}

/* The sm90a row's statements, as gpuir_build_sm90a_gather lays them out
 * (tiles left out: gpuir_verify_smem is tested above). */
static const gpu_stmt GATHER[] = {
    {GS_TILE_COORD, "(m.o, n.o) <- blockIdx.x", NULL, 0, {NULL}, NULL},
    {GS_MBAR_INIT, "full[s]", NULL, 0, {NULL}, NULL},
    {GS_MBAR_INIT, "empty[s]", NULL, 0, {NULL}, "tFree[kt]"},
    {GS_BARRIER, "bar.sync", NULL, 0, {NULL}, NULL},
    {GS_ROLE, "producer", NULL, 0, {NULL}, NULL},
    {GS_SETMAXNREG, "setmaxnreg.dec", NULL, 0, {NULL}, NULL},
    {GS_LOOP, "kt", NULL, 0, {NULL}, NULL},
    {GS_MBAR_WAIT, "empty[kt % S]", NULL, 1, {"tFree[kt]"}, NULL},
    {GS_CP_ASYNC, "smA[kt%5] <- X", NULL, 0, {NULL}, "tA[kt]"},
    {GS_CP_ASYNC, "smB[kt%5] <- Wt", NULL, 0, {NULL}, "tB[kt]"},
    {GS_COMMIT, "cp.async.commit_group", NULL, 2, {"tA[kt]", "tB[kt]"}, NULL},
    {GS_WAIT, "cp.async.wait_group", "3", 2, {"tA[kt-3]", "tB[kt-3]"}, NULL},
    {GS_PROXY_FENCE, "fence.proxy.async.shared::cta", NULL, 0, {NULL}, NULL},
    {GS_MBAR_ARRIVE, "full[(kt - 3) % S]", NULL, 0, {NULL}, NULL},
    {GS_END_LOOP, "kt", NULL, 0, {NULL}, NULL},
    {GS_ROLE, "consumers", NULL, 0, {NULL}, NULL},
    {GS_SETMAXNREG, "setmaxnreg.inc", NULL, 0, {NULL}, NULL},
    {GS_LOOP, "kt", NULL, 0, {NULL}, NULL},
    {GS_MBAR_WAIT, "full[kt % S]", NULL, 2, {"tA[kt]", "tB[kt]"}, NULL},
    {GS_WGMMA, "wgmma.mma_async.m64n128k16.f32.fp16.fp16 x 4", NULL, 2, {"tA[kt]", "tB[kt]"}, "tMMA"},
    {GS_END_LOOP, "kt", NULL, 0, {NULL}, NULL},
    {GS_ST_GLOBAL, "st.global.v2.b32 (4 x fp16) -> Y", NULL, 1, {"tMMA"}, NULL},
};
enum { NGATHER = sizeof GATHER / sizeof GATHER[0], CP_A = 8, WAIT = 11, FENCE = 12 };

/* gpuir_verify on the sm90a kernel with statements st[0..n); when it fails,
 * one diagnostic's reason holds `why` */
static bool sm90a_verifies(const gpu_stmt *st, int n, bool gather, const char *why) {
  gpu_kernel k;
  memset(&k, 0, sizeof k);
  k.T = DT_FP16;
  k.plan.tile[0] = 128, k.plan.tile[1] = 128, k.plan.tile[2] = 64, k.plan.stages = 5;
  k.threads = 384;
  k.tma = true, k.gather = gather, k.gather_lag = gather ? 3 : 0;
  k.producer_regs = 40, k.consumer_regs = 232;
  k.nvec = 1, k.vecs[0] = 8;
  k.st = (gpu_stmt *)st, k.nst = k.cap_st = n;
  diag_list dl;
  diag_init(&dl);
  bool ok = gpuir_verify(&k, &dl);
  CHECK(ok == !diag_has_errors(&dl));
  if (!ok && why) {
    bool found = false;
    for (int i = 0; i < dl.n; i++) found |= dl.items[i].why && strstr(dl.items[i].why, why) != NULL;
    CHECK(found);
  }
  diag_free(&dl);
  return ok;
}

static void sm90a_ring_discipline(void) {
  gpu_stmt st[NGATHER];
  CHECK(sm90a_verifies(GATHER, NGATHER, true, NULL));
  /* no fence.proxy.async before the arrival */
  int n = 0;
  for (int i = 0; i < NGATHER; i++)
    if (i != FENCE) st[n++] = GATHER[i];
  CHECK(!sm90a_verifies(st, n, true, "is not after its copies landed (cp.async.wait_group) and fence.proxy.async"));
  /* the fence before the landing */
  memcpy(st, GATHER, sizeof GATHER);
  st[WAIT] = GATHER[FENCE], st[FENCE] = GATHER[WAIT];
  CHECK(!sm90a_verifies(st, NGATHER, true, "is not after its copies landed"));
  /* a copy before the wait on its empty slot */
  memcpy(st, GATHER, sizeof GATHER);
  st[CP_A - 1] = GATHER[CP_A], st[CP_A] = GATHER[CP_A - 1];
  CHECK(!sm90a_verifies(st, NGATHER, true, "does not wait for its slot's empty barrier"));
  /* cp.async in the TMA producer's kernel */
  CHECK(!sm90a_verifies(GATHER, NGATHER, false, "is not the TMA producer's"));
}

/* The sm90a attention row's statements, one pass of key tiles, as
 * gpuir_build_sm90a_attention lays them out (the softmax steps left out). */
static const gpu_stmt ATT[] = {
    {GS_MBAR_INIT, "qfull", NULL, 0, {NULL}, NULL},
    {GS_MBAR_INIT, "full[s]", NULL, 0, {NULL}, NULL},
    {GS_MBAR_INIT, "empty[s]", NULL, 0, {NULL}, "tFree[i]"},
    {GS_BARRIER, "bar.sync", NULL, 0, {NULL}, NULL},
    {GS_ROLE, "producer", NULL, 0, {NULL}, NULL},
    {GS_SETMAXNREG, "setmaxnreg.dec", NULL, 0, {NULL}, NULL},
    {GS_TMA_LOAD, "smQ <- Q", NULL, 0, {NULL}, "tQ"},
    {GS_LOOP, "t", NULL, 0, {NULL}, NULL},
    {GS_MBAR_WAIT, "empty[i % S]", NULL, 1, {"tFree[i]"}, NULL},
    {GS_TMA_LOAD, "smK[i%2] <- K", NULL, 0, {NULL}, "tKf[t]"},
    {GS_TMA_LOAD, "smV[i%2] <- V", NULL, 0, {NULL}, "tVf[t]"},
    {GS_END_LOOP, "t", NULL, 0, {NULL}, NULL},
    {GS_ROLE, "consumers", NULL, 0, {NULL}, NULL},
    {GS_SETMAXNREG, "setmaxnreg.inc", NULL, 0, {NULL}, NULL},
    {GS_MBAR_WAIT, "qfull", NULL, 1, {"tQ"}, NULL},
    {GS_BARRIER, "bar.arrive 2, 256", NULL, 0, {NULL}, NULL},
    {GS_LOOP, "t", NULL, 0, {NULL}, NULL},
    {GS_MBAR_WAIT, "full[i % S]", NULL, 2, {"tKf[t]", "tVf[t]"}, NULL},
    {GS_BARRIER, "bar.sync 2 + wg, 256", NULL, 0, {NULL}, NULL},
    {GS_WGMMA, "wgmma.mma_async.m64n128k16.f32.fp16.fp16 x 4: S = Q K^T (S)", NULL, 2, {"tQ", "tKf[t]"}, "tS"},
    {GS_BARRIER, "bar.arrive 2 + (wg ^ 1), 256", NULL, 0, {NULL}, NULL},
    {GS_WGMMA_WAIT, "wgmma.commit_group; wgmma.wait_group 0", NULL, 1, {"tS"}, NULL},
    {GS_EPILOGUE, "score_full", NULL, 1, {"tS"}, "tP"},
    {GS_EPILOGUE, "P fragments", NULL, 1, {"tP"}, "tPf"},
    {GS_WGMMA, "wgmma.mma_async.m64n64k16.f32.fp16.fp16 x 8: O += P V (O)", NULL, 2, {"tPf", "tVf[t]"}, "tO"},
    {GS_WGMMA_WAIT, "wgmma.commit_group; wgmma.wait_group 0", NULL, 1, {"tO"}, NULL},
    {GS_MBAR_ARRIVE, "empty[i % S]", NULL, 0, {NULL}, "tFree[i+S]"},
    {GS_END_LOOP, "t", NULL, 0, {NULL}, NULL},
    {GS_BARRIER, "bar.sync 1, 256", NULL, 0, {NULL}, NULL},
    {GS_EPILOGUE, "finish", NULL, 1, {"tO"}, "tFin"},
    {GS_STAGE_ACC, "st.shared.v2.f32", NULL, 1, {"tFin"}, "tStage"},
    {GS_BARRIER, "bar.sync 1, 256", NULL, 0, {NULL}, NULL},
    {GS_EPILOGUE, "O", NULL, 1, {"tStage"}, "tE"},
    {GS_ST_GLOBAL, "st.global.v2.b32 (4 x fp16) -> O", NULL, 1, {"tE"}, NULL},
};
enum { NATT = sizeof ATT / sizeof ATT[0], ATT_EMPTY = 8, ATT_FULL = 17, ATT_TURN = 18, ATT_PV_WAIT = 25 };

/* gpuir_verify on the sm90a attention kernel with statements st[0..n)
 * (D = DV = 64, 128 x 128 tiles, a 2-stage ring, rank-4 tensor maps) */
static bool att_verifies(const gpu_stmt *st, int n, const char *why) {
  static const sx *map[4];
  gpu_kernel k;
  memset(&k, 0, sizeof k);
  k.T = DT_FP16;
  k.attention = k.att_wgmma = true;
  k.plan.tile[0] = 128, k.plan.tile[1] = 128, k.plan.tile[2] = 64, k.plan.stages = 2;
  k.D = k.DV = 64;
  k.threads = 384;
  k.producer_regs = 40, k.consumer_regs = 232;
  k.nvec = 1, k.vecs[0] = 8;
  k.tmq = (gpu_tmap){"Q", NULL, NULL, map, 4, 2, 128, 0, 0};
  k.tmk = (gpu_tmap){"K", NULL, NULL, map, 4, 2, 128, 0, 0};
  k.tmv = (gpu_tmap){"V", NULL, NULL, map, 4, 2, 128, 0, 0};
  k.st = (gpu_stmt *)st, k.nst = k.cap_st = n;
  diag_list dl;
  diag_init(&dl);
  bool ok = gpuir_verify(&k, &dl);
  CHECK(ok == !diag_has_errors(&dl));
  if (!ok && why) {
    bool found = false;
    for (int i = 0; i < dl.n; i++) found |= dl.items[i].why && strstr(dl.items[i].why, why) != NULL;
    CHECK(found);
  }
  diag_free(&dl);
  return ok;
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
  st[ATT_EMPTY] = ATT[ATT_EMPTY + 1], st[ATT_EMPTY + 1] = ATT[ATT_EMPTY];
  CHECK(!att_verifies(st, NATT, "does not wait for its slot's empty barrier"));
}

int main(void) {
  sm90a_ring_discipline();
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
