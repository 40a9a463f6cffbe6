/*
 * t_hopper.c: mbarrier and TMA (kernels/hopper.cu, sm_90a), and
 * dlcemu_tensor_map_encode_tiled.  The expected phase behaviour is the PTX
 * ISA's ("mbarrier": phases, pending arrival counts, tx-count); the expected
 * shared-memory image of a TMA box is written out below from the ISA's
 * tensor-copy rules (box traversal with element strides, zero fill out of
 * bounds, 16-byte chunks swizzled by shared address bits [4,7) ^ [7,10))
 * and from the cuTensorMapEncodeTiled documentation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_test.h"

static int has(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

static uint16_t f16_of_int_h(int v) { /* small integers are exact in f16 */
  if (v == 0) return 0;
  uint16_t s = v < 0 ? 0x8000 : 0;
  int a = abs(v), e = 0;
  while ((a >> e) > 1) e++;
  return (uint16_t)(s | (uint16_t)((e + 15) << 10) | (uint16_t)(((a << 10) >> e) & 0x3FF));
}
static uint16_t bf16_of_int_h(int v) { return (uint16_t)(t_u32((float)v) >> 16); }

int test_mbarrier_phases_follow_the_isa(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "hopper"), "mbar_phases");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr d = t_alloc(t, 32 * sizeof(int), NULL);
  void *params[] = {&d};
  OK(t_launch(t, f, 1, 1, 0, params)); /* one thread walks the barrier */
  int out[32];
  t_download(t, out, d, sizeof out);
  /* see the comments of mbar_phases: what test_wait reports after each step */
  static const int want[] = {0, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, -1};
  for (int i = 0; i < (int)(sizeof want / sizeof want[0]); i++)
    CHECK(out[i] == want[i], "step %d: test_wait gave %d, the ISA says %d", i, out[i], want[i]);
  dlcemu_launch_stats st;
  OK(dlcemu_last_launch_stats(&st));
  CHECK(st.mbarrier_phases == 3, "phases completed: %llu, want 3", st.mbarrier_phases);
  CHECK(has(dlcemu_last_launch_stats_json(), "\"mbarrier\": {\"ops\": "), "json: %s", dlcemu_last_launch_stats_json());
  return 0;
}

int test_mbarrier_ring_orders_producer_and_consumer(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "hopper"), "mbar_ring");
  REQUIRE(f, "no kernel");
  int rounds = 9;
  dlcemu_deviceptr d = t_alloc(t, (size_t)rounds * 32 * sizeof(int), NULL);
  void *params[] = {&d, &rounds};
  OK(t_launch(t, f, 1, 64, 0, params)); /* the race detector is on: the mbarriers must order the ring */
  int out[9 * 32];
  t_download(t, out, d, sizeof out);
  for (int r = 0; r < rounds; r++)
    for (int l = 0; l < 32; l++) CHECK(out[r * 32 + l] == r * 100 + l, "round %d lane %d: %d", r, l, out[r * 32 + l]);
  dlcemu_launch_stats st;
  OK(dlcemu_last_launch_stats(&st));
  /* each round completes one full and one empty phase; the last empty phase too */
  CHECK(st.mbarrier_phases == (unsigned long long)(2 * rounds), "phases: %llu", st.mbarrier_phases);
  return 0;
}

int test_mbarrier_try_wait_sleeps_per_lane(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "hopper"), "mbar_lanes");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr d = t_alloc(t, 32 * sizeof(int), NULL);
  int n = 3000; /* more instructions than a quantum: warp 1 runs while lanes 1..31 of warp 0 loop */
  void *params[] = {&d, &n};
  dlcemu_set_limit(DLCEMU_LIMIT_WARP_INSTRUCTIONS, 1000000); /* a lane resumed in the wrong place loops: fail fast */
  int rc = t_launch(t, f, 1, 64, 0, params);
  dlcemu_set_limit(DLCEMU_LIMIT_WARP_INSTRUCTIONS, 20000000000ull);
  REQUIRE(rc == 0, "%s: %s", dlcemu_error_string(rc), dlcemu_last_error_detail());
  int out[32];
  t_download(t, out, d, sizeof out);
  for (int l = 0; l < 32; l++) {
    uint32_t v = (uint32_t)l;
    for (int i = 0; i < n; i++) v = v * 3u + (uint32_t)i;
    CHECK(out[l] == (int)v, "lane %d: %d, want %d", l, out[l], (int)v);
  }
  return 0;
}

static int expect_mbar_error(tctx *t, int which, unsigned block, int status, const char *const *want) {
  dlcemu_function f = t_func(t, t_load(t, "hopper"), "mbar_errors");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr d = t_alloc(t, 16, NULL);
  void *params[] = {&which, &d};
  int rc = t_launch(t, f, 1, block, 0, params);
  char msg[4096];
  snprintf(msg, sizeof msg, "%s", dlcemu_last_error_detail());
  CHECK(rc == status, "case %d: %s (%s), want %s", which, dlcemu_error_string(rc), msg, dlcemu_error_string(status));
  for (int i = 0; want[i]; i++) CHECK(has(msg, want[i]), "case %d: '%s' missing from: %s", which, want[i], msg);
  return 0;
}

int test_mbarrier_misuse_is_reported(tctx *t) {
  static const char *const too_many[] = {"more threads arrive than the barrier was initialized for", "thread (1,0,0)",
                                         "PTX line", "hopper.cu:", NULL};
  static const char *const plain_load[] = {"holds the mbarrier initialized at PTX line", "ld.", NULL};
  static const char *const never[] = {"mbarrier phase can never complete", "waits at PTX line",
                                      "phase 0 of the mbarrier", "0 of 1 arrivals pending", NULL};
  static const char *const uninit[] = {"holds no initialized mbarrier", NULL};
  static const char *const race[] = {"data race on shared memory", "thread (32,0,0)", NULL};
  expect_mbar_error(t, 0, 32, DLCEMU_ERROR_ILLEGAL, too_many);
  expect_mbar_error(t, 1, 32, DLCEMU_ERROR_ILLEGAL, plain_load);
  /* one waiting warp and no arrival: 0 of 1 pending would complete; the count is 1 and nobody arrives */
  static const char *const never1[] = {"mbarrier phase can never complete", "phase 0 of the mbarrier", NULL};
  expect_mbar_error(t, 2, 32, DLCEMU_ERROR_DEADLOCK, never1);
  (void)never;
  expect_mbar_error(t, 3, 32, DLCEMU_ERROR_ILLEGAL, uninit);
  expect_mbar_error(t, 4, 64, DLCEMU_ERROR_RACE, race);
  return 0;
}

/* ------------------------------------------------------------------ TMA */
typedef struct tma_case {
  const char *name;
  int dtype, es, rank, swizzle;
  uint64_t dim[5];
  uint64_t pad0;      /* bytes of padding after each row of dimension 0 */
  uint32_t box[5], estride[5];
  int coord[5];
} tma_case;

static const tma_case cases[] = {
  {"1d f32 tail", DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, 1, 0, {100}, 0, {32}, {1}, {80}},
  {"2d bf16 swizzle 128B, negative and past the end", DLCEMU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 2, 3, {70, 50}, 20,
   {64, 16}, {1, 1}, {-8, 40}},
  {"2d f16 swizzle 64B", DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, 2, 2, {100, 30}, 0, {32, 8}, {1, 1}, {50, 3}},
  {"2d u8 swizzle 32B", DLCEMU_TENSOR_MAP_DATA_TYPE_UINT8, 1, 2, 1, {48, 16}, 0, {32, 4}, {1, 1}, {0, 0}},
  {"2d u8 swizzle 128B, 64-byte rows", DLCEMU_TENSOR_MAP_DATA_TYPE_UINT8, 1, 2, 3, {80, 20}, 0, {64, 16}, {1, 1},
   {5, 6}},
  {"3d f32 element strides", DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, 3, 0, {20, 6, 5}, 16, {8, 4, 3}, {1, 2, 1},
   {16, 1, 3}},
  {"4d u16", DLCEMU_TENSOR_MAP_DATA_TYPE_UINT16, 2, 4, 0, {16, 3, 4, 5}, 0, {8, 2, 2, 2}, {1, 1, 1, 1}, {4, 2, 3, 4}},
  {"5d f64 negative", DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT64, 8, 5, 0, {4, 3, 3, 3, 3}, 0, {2, 2, 2, 2, 2},
   {1, 1, 1, 1, 1}, {-1, 1, 2, -1, 2}},
};

static uint8_t pattern(uint64_t i) { return (uint8_t)(1 + ((i * 2654435761u) >> 13) % 255); } /* never 0 */

/* encode the case's map over a fresh buffer; returns the box bytes */
static uint32_t tma_setup(tctx *t, const tma_case *c, void *map, uint64_t strides[4], dlcemu_deviceptr *gbuf,
                          uint8_t **host) {
  uint64_t total = c->dim[0] * (uint64_t)c->es + c->pad0;
  for (int i = 0; i + 1 < c->rank; i++) {
    strides[i] = i == 0 ? (c->dim[0] * (uint64_t)c->es + c->pad0 + 15) / 16 * 16 : strides[i - 1] * c->dim[i];
    total = strides[i] * c->dim[i + 1];
  }
  uint8_t *h = malloc(total);
  for (uint64_t i = 0; i < total; i++) h[i] = pattern(i);
  *gbuf = t_alloc(t, total, h);
  *host = h;
  uint64_t bytes = (uint64_t)c->es * c->box[0];
  for (int i = 1; i < c->rank; i++) bytes *= (c->box[i] + c->estride[i] - 1) / c->estride[i];
  int rc = dlcemu_tensor_map_encode_tiled(map, c->dtype, (uint32_t)c->rank, *gbuf, c->dim, strides, c->box, c->estride,
                                          DLCEMU_TENSOR_MAP_INTERLEAVE_NONE, c->swizzle,
                                          DLCEMU_TENSOR_MAP_L2_PROMOTION_L2_128B, DLCEMU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc) t_fail(t, __FILE__, __LINE__, "%s: encode: %s", c->name, dlcemu_last_error_detail());
  return rc ? 0 : (uint32_t)bytes;
}

/* the box as the ISA says it lands at shared address dst */
static void tma_expect(const tma_case *c, const uint64_t strides[4], const uint8_t *h, uint32_t dst, uint32_t bytes,
                       uint8_t *want) {
  uint8_t *dense = calloc(bytes, 1);
  uint32_t n[5] = {1, 1, 1, 1, 1};
  for (int i = 0; i < c->rank; i++) n[i] = i == 0 ? c->box[0] : (c->box[i] + c->estride[i] - 1) / c->estride[i];
  uint32_t k = 0;
  for (uint32_t j4 = 0; j4 < n[4]; j4++)
    for (uint32_t j3 = 0; j3 < n[3]; j3++)
      for (uint32_t j2 = 0; j2 < n[2]; j2++)
        for (uint32_t j1 = 0; j1 < n[1]; j1++)
          for (uint32_t j0 = 0; j0 < n[0]; j0++, k++) {
            uint32_t j[5] = {j0, j1, j2, j3, j4};
            int64_t off = 0;
            int inb = 1;
            for (int i = 0; i < c->rank; i++) {
              int64_t x = (int64_t)c->coord[i] + (int64_t)j[i] * (i ? c->estride[i] : 1);
              if (x < 0 || x >= (int64_t)c->dim[i]) inb = 0;
              off += x * (int64_t)(i ? strides[i - 1] : (uint64_t)c->es);
            }
            if (inb) memcpy(dense + (uint64_t)k * c->es, h + off, (size_t)c->es);
          }
  unsigned mask = c->swizzle == 1 ? 1 : c->swizzle == 2 ? 3 : 7;
  for (uint32_t o = 0; o < bytes; o += 16) {
    uint32_t a = dst + o;
    uint32_t to = c->swizzle ? a ^ (((a >> 7) & mask) << 4) : a;
    memcpy(want + (to - dst), dense + o, 16);
  }
  free(dense);
}

static int run_tma(tctx *t, const tma_case *c, uint32_t extra, int early, int *rc_out) {
  char kname[32];
  snprintf(kname, sizeof kname, "tma_load_%dd", c->rank);
  dlcemu_function f = t_func(t, t_load(t, "hopper"), kname);
  REQUIRE(f, "no kernel %s", kname);
  _Alignas(64) uint8_t map[128];
  uint64_t strides[4] = {0};
  dlcemu_deviceptr g;
  uint8_t *h;
  uint32_t bytes = tma_setup(t, c, map, strides, &g, &h);
  if (!bytes) {
    free(h);
    return 1;
  }
  dlcemu_deviceptr dc = t_alloc(t, sizeof c->coord, c->coord);
  dlcemu_deviceptr dout = t_alloc(t, bytes, NULL), dinfo = t_alloc(t, 16, NULL);
  void *params[] = {map, &dc, &bytes, &extra, &early, &dout, &dinfo};
  int rc = t_launch(t, f, 1, 128, bytes, params);
  *rc_out = rc;
  if (!rc) {
    uint8_t *got = malloc(bytes), *want = malloc(bytes);
    uint32_t info[4];
    t_download(t, got, dout, bytes);
    t_download(t, info, dinfo, sizeof info);
    tma_expect(c, strides, h, info[0], bytes, want);
    int bad = 0;
    for (uint32_t i = 0; i < bytes; i++)
      if (got[i] != want[i] && bad++ < 4) t_fail(t, __FILE__, __LINE__, "%s: byte %u of the box: 0x%02x, want 0x%02x",
                                                 c->name, i, got[i], want[i]);
    t->checks++;
    dlcemu_launch_stats st;
    dlcemu_last_launch_stats(&st);
    CHECK(st.tma_copies == 1 && st.tma_bytes == bytes && st.mbarrier_phases == 1,
          "%s: stats: %llu copies, %llu bytes, %llu phases", c->name, st.tma_copies, st.tma_bytes, st.mbarrier_phases);
    free(got);
    free(want);
  }
  free(h);
  return 0;
}

int test_tma_load_ranks_swizzles_and_oob_fill(tctx *t) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = 0;
    if (run_tma(t, &cases[i], 0, 0, &rc)) return 1;
    CHECK(rc == 0, "%s: %s: %s", cases[i].name, dlcemu_error_string(rc), dlcemu_last_error_detail());
  }
  return 0;
}

int test_tma_complete_tx_counts_the_whole_box(tctx *t) {
  /* expecting 16 bytes more than the box never completes the phase */
  int rc = 0;
  if (run_tma(t, &cases[1], 16, 0, &rc)) return 1;
  const char *msg = dlcemu_last_error_detail();
  CHECK(rc == DLCEMU_ERROR_DEADLOCK && has(msg, "mbarrier phase can never complete") && has(msg, "tx-count 16"),
        "%s: %s", dlcemu_error_string(rc), msg);
  return 0;
}

int test_tma_destination_poisoned_until_observed(tctx *t) {
  int rc = 0;
  if (run_tma(t, &cases[2], 0, 1, &rc)) return 1;
  const char *msg = dlcemu_last_error_detail();
  CHECK(rc == DLCEMU_ERROR_POISON, "%s: %s", dlcemu_error_string(rc), msg);
  static const char *const want[] = {"kernel 'tma_load_2d'", "block (0,0,0) thread (0,0,0)", "PTX line", "hopper.cu:",
                                     "ld.shared", "cp.async.bulk.tensor to it has not landed", "phase 0 of the mbarrier",
                                     NULL};
  for (int i = 0; want[i]; i++) CHECK(has(msg, want[i]), "'%s' missing from: %s", want[i], msg);
  return 0;
}

/* ------------------------------------------------------- tensor map encode */
int test_tensor_map_encode_validates_like_cuda(tctx *t) {
  _Alignas(64) uint8_t buf[256];
  uint64_t dim[5] = {64, 32, 4, 4, 4}, str[4] = {128, 4096, 16384, 65536};
  uint32_t box[5] = {64, 8, 1, 1, 1}, es[5] = {1, 1, 1, 1, 1};
  dlcemu_deviceptr g = 0x10000; /* the address is not dereferenced when encoding */
  enum { F16 = DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT16, NONE = 0 };
#define ENC(map, type, rank, addr, d, s, b, e, il, sw, l2, oob)                                                       \
  dlcemu_tensor_map_encode_tiled(map, type, rank, addr, d, s, b, e, il, sw, l2, oob)
  OK(ENC(buf, F16, 2, g, dim, str, box, es, NONE, 3, 2, 0));
  struct {
    const char *what;
    int rc;
  } r[32];
  int n = 0;
#define BADCASE(what_, call_) (r[n].what = what_, r[n].rc = (call_), n++)
  uint64_t d0[5] = {0, 32}, dbig[5] = {(1ull << 32) + 1, 32}, s15[4] = {120}, sbig[4] = {1ull << 40};
  uint32_t b0[5] = {0, 8}, b257[5] = {64, 257}, b7[5] = {7, 8}, e9[5] = {1, 9}, e0[5] = {1, 0}, b128[5] = {128, 8};
  BADCASE("map not 64-byte aligned", ENC(buf + 16, F16, 2, g, dim, str, box, es, NONE, 0, 0, 0));
  BADCASE("data type 16", ENC(buf, 16, 2, g, dim, str, box, es, NONE, 0, 0, 0));
  BADCASE("rank 0", ENC(buf, F16, 0, g, dim, str, box, es, NONE, 0, 0, 0));
  BADCASE("rank 6", ENC(buf, F16, 6, g, dim, str, box, es, NONE, 0, 0, 0));
  BADCASE("interleave with rank 2", ENC(buf, F16, 2, g, dim, str, box, es, 1, 0, 0, 0));
  BADCASE("address not 16-byte aligned", ENC(buf, F16, 2, g + 8, dim, str, box, es, NONE, 0, 0, 0));
  BADCASE("interleave 32B, address not 32-byte aligned", ENC(buf, F16, 3, g + 16, dim, str, box, es, 2, 1, 0, 0));
  BADCASE("globalDim 0", ENC(buf, F16, 2, g, d0, str, box, es, NONE, 0, 0, 0));
  BADCASE("globalDim 2^32 + 1", ENC(buf, F16, 2, g, dbig, str, box, es, NONE, 0, 0, 0));
  BADCASE("stride not a multiple of 16", ENC(buf, F16, 2, g, dim, s15, box, es, NONE, 0, 0, 0));
  BADCASE("stride 2^40", ENC(buf, F16, 2, g, dim, sbig, box, es, NONE, 0, 0, 0));
  BADCASE("boxDim 0", ENC(buf, F16, 2, g, dim, str, b0, es, NONE, 0, 0, 0));
  BADCASE("boxDim 257", ENC(buf, F16, 2, g, dim, str, b257, es, NONE, 0, 0, 0));
  BADCASE("inner box 14 bytes", ENC(buf, F16, 2, g, dim, str, b7, es, NONE, 0, 0, 0));
  BADCASE("elementStrides 9", ENC(buf, F16, 2, g, dim, str, box, e9, NONE, 0, 0, 0));
  BADCASE("elementStrides 0", ENC(buf, F16, 2, g, dim, str, box, e0, NONE, 0, 0, 0));
  BADCASE("inner box 256 bytes with swizzle 128B", ENC(buf, F16, 2, g, dim, str, b128, es, NONE, 3, 0, 0));
  BADCASE("inner box 128 bytes with swizzle 64B", ENC(buf, F16, 2, g, dim, str, box, es, NONE, 2, 0, 0));
  BADCASE("inner box 128 bytes with swizzle 32B", ENC(buf, F16, 2, g, dim, str, box, es, NONE, 1, 0, 0));
  BADCASE("interleave 32B without swizzle 32B", ENC(buf, F16, 3, g, dim, str, box, es, 2, 0, 0, 0));
  BADCASE("swizzle 7", ENC(buf, F16, 2, g, dim, str, box, es, NONE, 7, 0, 0));
  BADCASE("l2 promotion 4", ENC(buf, F16, 2, g, dim, str, box, es, NONE, 0, 4, 0));
  BADCASE("oob fill 2", ENC(buf, F16, 2, g, dim, str, box, es, NONE, 0, 0, 2));
  BADCASE("NaN fill of integers", ENC(buf, DLCEMU_TENSOR_MAP_DATA_TYPE_INT32, 2, g, dim, str, box, es, NONE, 0, 0, 1));
  BADCASE("NULL map", ENC(NULL, F16, 2, g, dim, str, box, es, NONE, 0, 0, 0));
  for (int i = 0; i < n; i++)
    CHECK(r[i].rc == DLCEMU_ERROR_INVALID_VALUE, "%s: %s, want DLCEMU_ERROR_INVALID_VALUE", r[i].what,
          dlcemu_error_string(r[i].rc));
  /* the message names the rule */
  ENC(buf, F16, 2, g, dim, s15, box, es, NONE, 0, 0, 0);
  CHECK(has(dlcemu_last_error_detail(), "globalStrides[0] = 120 must be a multiple of 16"), "%s",
        dlcemu_last_error_detail());
  /* valid for CUDA, not implemented by the emulator's TMA */
  CHECK(ENC(buf, F16, 3, g, dim, str, box, es, 1, 0, 0, 0) == DLCEMU_ERROR_UNSUPPORTED, "interleave 16B");
  CHECK(ENC(buf, F16, 2, g, dim, str, box, es, NONE, 4, 0, 0) == DLCEMU_ERROR_UNSUPPORTED, "128B_ATOM_32B");
  /* the valid maps of every swizzle, rank 1..5, and the NaN fill of floats */
  for (int sw = 0; sw <= 3; sw++) {
    uint32_t bx[5] = {sw == 1 ? 16u : sw == 2 ? 32u : 64u, 8, 1, 1, 1};
    for (uint32_t rank = 1; rank <= 5; rank++) OK(ENC(buf, F16, rank, g, dim, str, bx, es, NONE, sw, 0, 1));
  }
  return 0;
}


/* ------------------------------------------------------------------ wgmma */
/* The canonical shared-memory layouts of the ISA's matrix descriptors, in
 * bytes: an element (x = row of A or column of B, k) of a 16-bit matrix.
 * swz: 0 none, 1 128B, 2 64B, 3 32B (the descriptor's encoding). */
static uint32_t canon_offset(int swz, int mn_major, uint32_t lbo, uint32_t sbo, uint32_t x, uint32_t k) {
  uint32_t row_units = swz == 1 ? 8 : swz == 2 ? 4 : swz == 3 ? 2 : 1; /* 16-byte units per swizzle row */
  uint32_t off;
  if (!mn_major) { /* K contiguous: 8 rows x 16 bytes core matrices */
    uint32_t kc = k / 8;
    off = swz ? (x % 8) * row_units * 16 + (x / 8) * sbo + (kc % row_units) * 16 + (kc / row_units) * lbo
              : (x % 8) * 16 + (x / 8) * sbo + kc * lbo;
    off += (k % 8) * 2;
  } else { /* M/N contiguous: 8 k-rows x 16 bytes core matrices */
    uint32_t xc = x / 8;
    off = swz ? (xc % row_units) * 16 + (xc / row_units) * lbo + (k % 8) * row_units * 16 + (k / 8) * sbo
              : xc * sbo + (k % 8) * 16 + (k / 8) * lbo;
    off += (x % 8) * 2;
  }
  if (swz) off ^= ((off >> 7) & (row_units - 1)) << 4; /* the image starts 1024-byte aligned */
  return off;
}

typedef struct wg_case {
  const char *kernel;
  int N, bf16, f16acc, rs, trans_a, trans_b, neg_a, neg_b;
  int swz_a, swz_b;
} wg_case;

static const wg_case wg_cases[] = {
  {"wg_ss_f16_f32_none_kk", 8, 0, 0, 0, 0, 0, 0, 0, 0, 0},
  {"wg_ss_bf16_f32_128_kmn", 16, 1, 0, 0, 0, 1, 1, 0, 1, 1},
  {"wg_ss_f16_f16_64_mnk", 32, 0, 1, 0, 1, 0, 0, 1, 2, 2},
  {"wg_rs_f16_f32_32_k", 8, 0, 0, 1, 0, 0, 0, 0, 0, 3},
  {"wg_ss_bf16_f32_n256", 256, 1, 0, 0, 0, 1, 0, 0, 1, 0},
  {"wg_ss_f16_f32_32_mnmn", 16, 0, 0, 0, 1, 1, 1, 1, 3, 3},
  {"wg_rs_f16_f16_64_mn", 24, 0, 1, 1, 0, 1, 0, 0, 0, 2},
};

static uint16_t h16(int v, int bf) { return bf ? bf16_of_int_h(v) : f16_of_int_h(v); }

/* lbo/sbo of the layouts the images use (see canon_offset) */
static void wg_strides(int swz, int mn_major, int extent, uint32_t *lbo, uint32_t *sbo) {
  uint32_t row_units = swz == 1 ? 8 : swz == 2 ? 4 : swz == 3 ? 2 : 1;
  if (!mn_major) {
    *lbo = swz ? 0 : 128;                      /* the next 8 k (no swizzle); unused with a swizzle */
    *sbo = swz ? 8 * row_units * 16 : 256;     /* the next 8 rows */
  } else {
    *lbo = swz ? 8 * row_units * 16 : (uint32_t)(extent / 8) * 128; /* the next swizzle atom along x / the next 8 k */
    uint32_t atoms = ((uint32_t)extent + 8 * row_units - 1) / (8 * row_units);
    *sbo = swz ? atoms * 8 * row_units * 16 : 128; /* the next 8 k / the next 8 x */
  }
}

static uint64_t desc(uint32_t start, uint32_t lbo, uint32_t sbo, int swz) {
  return (uint64_t)((start >> 4) & 0x3FFF) | (uint64_t)((lbo >> 4) & 0x3FFF) << 16 |
         (uint64_t)((sbo >> 4) & 0x3FFF) << 32 | (uint64_t)swz << 62;
}

static int run_wgmma(tctx *t, const wg_case *c, int mode, int scale_d, int *rc_out) {
  dlcemu_function f = t_func(t, t_load(t, "wgmma"), c->kernel);
  REQUIRE(f, "no kernel %s", c->kernel);
  int N = c->N, nr = c->f16acc ? N / 4 : N / 2;
  int A[64][16], B[16][256], C[64][256];
  uint32_t s = (uint32_t)(N * 7 + c->bf16 + 3 * c->swz_b + 1);
  for (int m = 0; m < 64; m++)
    for (int k = 0; k < 16; k++) A[m][k] = (int)(t_rand(&s) % 9) - 4;
  for (int k = 0; k < 16; k++)
    for (int n = 0; n < N; n++) B[k][n] = (int)(t_rand(&s) % 9) - 4;
  for (int m = 0; m < 64; m++)
    for (int n = 0; n < N; n++) C[m][n] = (int)(t_rand(&s) % 61) - 30;
  enum { BOFF = 8192, IMG = 16384 + 8192 };
  uint8_t *img = calloc(IMG, 1);
  uint32_t alb, asb, blb, bsb;
  wg_strides(c->swz_a, c->trans_a, 64, &alb, &asb);
  wg_strides(c->swz_b, c->trans_b, N, &blb, &bsb);
  for (int m = 0; m < 64 && !c->rs; m++)
    for (int k = 0; k < 16; k++) {
      uint16_t h = h16(A[m][k], c->bf16);
      memcpy(img + canon_offset(c->swz_a, c->trans_a, alb, asb, (uint32_t)m, (uint32_t)k), &h, 2);
    }
  for (int k = 0; k < 16; k++)
    for (int n = 0; n < N; n++) {
      uint16_t h = h16(B[k][n], c->bf16);
      memcpy(img + BOFF + canon_offset(c->swz_b, c->trans_b, blb, bsb, (uint32_t)n, (uint32_t)k), &h, 2);
    }
  /* the fragments: D (and C) and the RS A, from the ISA's wgmma register layouts */
  uint32_t *afrag = calloc(128 * 4, 4), *dinit = calloc((size_t)128 * nr, 4);
  for (int tid = 0; tid < 128; tid++) {
    int w = tid / 32, l = tid % 32, g = l / 4, q = l % 4;
    for (int i = 0; i < 8; i++) {
      int row = 16 * w + g + 8 * ((i >> 1) & 1), col = 2 * q + (i & 1) + 8 * (i >> 2);
      afrag[tid * 4 + i / 2] |= (uint32_t)h16(A[row][col], c->bf16) << (16 * (i & 1));
    }
    for (int i = 0; i < N / 2; i++) {
      int row = 16 * w + g + 8 * ((i >> 1) & 1), col = (i >> 2) * 8 + 2 * q + (i & 1);
      if (c->f16acc) dinit[tid * nr + i / 2] |= (uint32_t)f16_of_int_h(C[row][col]) << (16 * (i & 1));
      else dinit[tid * nr + i] = t_u32((float)C[row][col]);
    }
  }
  dlcemu_deviceptr dimg = t_alloc(t, IMG, img), da = t_alloc(t, 128 * 16, afrag),
                   dd = t_alloc(t, (size_t)128 * nr * 4, dinit), dout = t_alloc(t, (size_t)128 * nr * 4, NULL);
  uint32_t img_bytes = IMG;
  uint64_t ad = desc(0, alb, asb, c->swz_a), bd = desc(BOFF, blb, bsb, c->swz_b);
  void *params[] = {&dimg, &img_bytes, &ad, &bd, &da, &dd, &scale_d, &dout, &mode};
  int rc = t_launch(t, f, 1, 128, IMG, params);
  *rc_out = rc;
  if (!rc) {
    uint32_t *got = malloc((size_t)128 * nr * 4);
    t_download(t, got, dout, (size_t)128 * nr * 4);
    int bad = 0;
    for (int tid = 0; tid < 128; tid++) {
      int w = tid / 32, l = tid % 32, g = l / 4, q = l % 4;
      for (int i = 0; i < N / 2; i++) {
        int row = 16 * w + g + 8 * ((i >> 1) & 1), col = (i >> 2) * 8 + 2 * q + (i & 1);
        long want = scale_d ? C[row][col] : 0;
        for (int k = 0; k < 16; k++)
          want += (long)(c->neg_a ? -A[row][k] : A[row][k]) * (c->neg_b ? -B[k][col] : B[k][col]);
        float v = c->f16acc ? t_h2f((uint16_t)(got[tid * nr + i / 2] >> (16 * (i & 1)))) : t_f32(got[tid * nr + i]);
        if (v != (float)want && bad++ < 4)
          t_fail(t, __FILE__, __LINE__, "%s: thread %d d[%d] = D[%d][%d] = %g, want %ld", c->kernel, tid, i, row, col,
                 v, want);
      }
    }
    t->checks++;
    free(got);
  }
  free(img);
  free(afrag);
  free(dinit);
  return 0;
}

int test_wgmma_ss_rs_layouts_swizzles_and_scales(tctx *t) {
  for (size_t i = 0; i < sizeof wg_cases / sizeof wg_cases[0]; i++)
    for (int scale_d = 0; scale_d <= 1; scale_d++) {
      int rc = 0;
      if (run_wgmma(t, &wg_cases[i], 0, scale_d, &rc)) return 1;
      CHECK(rc == 0, "%s: %s: %s", wg_cases[i].kernel, dlcemu_error_string(rc), dlcemu_last_error_detail());
      if (rc) return 1;
    }
  dlcemu_launch_stats st;
  OK(dlcemu_last_launch_stats(&st));
  const wg_case *last = &wg_cases[sizeof wg_cases / sizeof wg_cases[0] - 1];
  CHECK(st.wgmma_ops == 1 && st.mma_ops == 0, "wgmma ops: %llu, mma.sync %llu", st.wgmma_ops, st.mma_ops);
  CHECK(st.tensor_flops == 2ull * 64 * (unsigned long long)last->N * 16, "tensor FLOPs %llu for m64n%dk16",
        st.tensor_flops, last->N);
  return 0;
}

int test_wgmma_hazards_are_reported(tctx *t) {
  int rc = 0;
  if (run_wgmma(t, &wg_cases[0], 1, 1, &rc)) return 1;
  const char *msg = dlcemu_last_error_detail();
  CHECK(rc == DLCEMU_ERROR_POISON && has(msg, "before a wgmma.wait_group covers that group") && has(msg, "wgmma.cu:"),
        "accumulator read early: %s: %s", dlcemu_error_string(rc), msg);
  if (run_wgmma(t, &wg_cases[1], 2, 1, &rc)) return 1;
  msg = dlcemu_last_error_detail();
  CHECK(rc == DLCEMU_ERROR_RACE && has(msg, "wrote through the generic proxy") && has(msg, "with no fence.proxy.async by that thread"),
        "no proxy fence: %s: %s", dlcemu_error_string(rc), msg);
  /* cp.async lands through the generic proxy too: a fence after the landing, or a report */
  if (run_wgmma(t, &wg_cases[0], 3, 1, &rc)) return 1;
  msg = dlcemu_last_error_detail();
  CHECK(rc == DLCEMU_ERROR_RACE && has(msg, "cp.async") && has(msg, "with no fence.proxy.async by that thread"),
        "cp.async, no proxy fence: %s: %s", dlcemu_error_string(rc), msg);
  if (run_wgmma(t, &wg_cases[0], 4, 1, &rc)) return 1;
  CHECK(rc == 0, "cp.async, then fence.proxy.async: %s: %s", dlcemu_error_string(rc), dlcemu_last_error_detail());
  return 0;
}

/* ------------------------------------------------ the pieces, end to end */
static uint16_t bf16_rn(float x) { /* round to nearest even (finite values) */
  uint32_t u = t_u32(x);
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
}

static int gemm_case(tctx *t, int M, int N, int K) {
  dlcemu_function f = t_func(t, t_load(t, "hopper_gemm"), "gemm_tma_wgmma");
  REQUIRE(f, "no kernel");
  uint16_t *a = malloc((size_t)M * K * 2), *b = malloc((size_t)N * K * 2);
  uint32_t s = (uint32_t)(M * 31 + N * 7 + K);
  for (int i = 0; i < M * K; i++) a[i] = bf16_rn((float)((int)(t_rand(&s) % 2001) - 1000) / 1000.0f);
  for (int i = 0; i < N * K; i++) b[i] = bf16_rn((float)((int)(t_rand(&s) % 2001) - 1000) / 1000.0f);
  dlcemu_deviceptr da = t_alloc(t, (size_t)M * K * 2, a), db = t_alloc(t, (size_t)N * K * 2, b),
                   dc = t_alloc(t, (size_t)M * N * 4, NULL);
  _Alignas(64) uint8_t ta[128], tb[128];
  uint64_t adim[2] = {(uint64_t)K, (uint64_t)M}, bdim[2] = {(uint64_t)K, (uint64_t)N}, str[1] = {(uint64_t)K * 2};
  uint32_t box[2] = {64, 64}, es[2] = {1, 1};
  OK(dlcemu_tensor_map_encode_tiled(ta, DLCEMU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, da, adim, str, box, es, 0,
                                    DLCEMU_TENSOR_MAP_SWIZZLE_128B, 0, 0));
  OK(dlcemu_tensor_map_encode_tiled(tb, DLCEMU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, db, bdim, str, box, es, 0,
                                    DLCEMU_TENSOR_MAP_SWIZZLE_128B, 0, 0));
  void *params[] = {ta, tb, &dc, &M, &N, &K};
  OK(dlcemu_function_set_attribute(f, DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES, 4 * 2 * 64 * 64 * 2));
  OK(dlcemu_launch_kernel(f, (unsigned)(N + 63) / 64, (unsigned)(M + 63) / 64, 1, 160, 1, 1, 4 * 2 * 64 * 64 * 2,
                          params));
  dlcemu_launch_stats st;
  OK(dlcemu_last_launch_stats(&st));
  unsigned long long blocks = (unsigned long long)((N + 63) / 64) * ((M + 63) / 64), kt = (unsigned long long)(K + 63) / 64;
  CHECK(st.tma_copies == 2 * blocks * kt && st.wgmma_ops == 4 * blocks * kt,
        "%dx%dx%d: %llu TMA copies, %llu wgmma, want %llu and %llu", M, N, K, st.tma_copies, st.wgmma_ops,
        2 * blocks * kt, 4 * blocks * kt);
  float *c = malloc((size_t)M * N * 4);
  t_download(t, c, dc, (size_t)M * N * 4);
  int bad = 0;
  double maxerr = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double r = 0;
      for (int k = 0; k < K; k++) r += (double)t_bf2f(a[(size_t)i * K + k]) * t_bf2f(b[(size_t)j * K + k]);
      double e = fabs(c[(size_t)i * N + j] - r);
      if (e > maxerr) maxerr = e;
      if (e > 1e-4 * (1 + fabs(r)) && bad++ < 4)
        t_fail(t, __FILE__, __LINE__, "%dx%dx%d: C[%d][%d] = %.7g, fp64 %.7g", M, N, K, i, j, c[(size_t)i * N + j], r);
    }
  t->checks++;
  free(a);
  free(b);
  free(c);
  return 0;
}

int test_gemm_tma_mbarrier_wgmma_pipeline(tctx *t) {
  if (gemm_case(t, 128, 128, 512)) return 1; /* full tiles; 8 k-tiles: the 4-stage ring wraps */
  return gemm_case(t, 100, 72, 168);          /* tails in M, N and K: TMA zero fill, predicated stores */
}

/* ------------------------------------------------------- malformed forms */
/* a one-instruction sm_90a kernel: the instruction is on PTX line 9 */
static int load_error(tctx *t, const char *insn, int status, const char *want) {
  char text[2048];
  snprintf(text, sizeof text,
           ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .align 64 .b8 tm[128])\n{\n"
           "  .reg .b32 %%r<40>;\n  .reg .b64 %%rd<8>;\n  .reg .pred %%p<4>;\n%s\n  ret;\n}\n",
           insn);
  dlcemu_module m = NULL;
  int rc = dlcemu_module_load_data(&m, text);
  const char *d = dlcemu_last_error_detail();
  CHECK(rc == status, "`%s`: %s, want %s (%s)", insn, dlcemu_error_string(rc), dlcemu_error_string(status), d);
  CHECK(m == NULL, "`%s`: a module after a failed load", insn);
  CHECK(strstr(d, "PTX line 9") != NULL && strstr(d, want) != NULL, "`%s`: '%s' or the line missing from: %s", insn,
        want, d);
  if (m) dlcemu_module_unload(m);
  return 0;
}

int test_hopper_instruction_forms_fail_at_load_with_the_line(tctx *t) {
  load_error(t, "  mbarrier.init.shared.b32 [%r1], 1;", DLCEMU_ERROR_PARSE, "need .b64");
  load_error(t, "  mbarrier.init.global.b64 [%rd1], 1;", DLCEMU_ERROR_PARSE, "live in shared memory");
  load_error(t, "  mbarrier.arrive.expect_tx.shared.b64 %rd1, [%r1], %r2, %r3;", DLCEMU_ERROR_PARSE, "expected 3");
  load_error(t, "  mbarrier.arrive.noComplete.shared.b64 %rd1, [%r1], %r2;", DLCEMU_ERROR_UNSUPPORTED, "noComplete");
  load_error(t, "  mbarrier.try_wait.parity.shared.b64 %p1, [%r1];", DLCEMU_ERROR_PARSE, "expected 3 or 4");
  load_error(t, "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r3];",
             DLCEMU_ERROR_PARSE, "2 coordinates");
  load_error(t, "  cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4], {%r5};",
             DLCEMU_ERROR_UNSUPPORTED, "im2col");
  load_error(t, "  cp.async.bulk.tensor.2d.shared::cluster.global.tile [%r1], [%rd1, {%r2, %r3}], [%r4];", DLCEMU_ERROR_PARSE,
             "mbarrier::complete_tx::bytes");
  load_error(t, "  ld.global.u32 %r1, [%rd1, {%r2}];", DLCEMU_ERROR_PARSE, "without a coordinate list");
  load_error(t, "  wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16 {%r1, %r2, %r3, %r4, %r5, %r6}, %rd1, %rd2, 1, 1, 1, 0, 0;",
             DLCEMU_ERROR_UNSUPPORTED, "m64nNk16");
  load_error(t, "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r1, %r2, %r3}, %rd1, %rd2, 1, 1, 1, 0, 0;",
             DLCEMU_ERROR_PARSE, "4 elements");
  load_error(t, "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r1, %r2, %r3, %r4}, %rd1, %rd2, 1, 2, 1, 0, 0;",
             DLCEMU_ERROR_PARSE, "imm-scale-a");
  load_error(t, "  wgmma.mma_async.sync.aligned.m64n8k16.f16.bf16.bf16 {%r1, %r2}, %rd1, %rd2, 1, 1, 1, 0, 0;",
             DLCEMU_ERROR_PARSE, "accumulator type");
  load_error(t, "  wgmma.mma_async.sync.aligned.m64n8k16.f32.tf32.tf32 {%r1, %r2, %r3, %r4}, %rd1, %rd2, 1, 1, 1, 0, 0;",
             DLCEMU_ERROR_UNSUPPORTED, "f16/bf16");
  load_error(t, "  fence.proxy.tensormap::generic.release.gpu;", DLCEMU_ERROR_UNSUPPORTED, "proxy fence");
  return 0;
}

/* ------------------------------------------------------------ TMA stores */
static int run_tma_store(tctx *t, int mode, int *rc_out) {
  dlcemu_function f = t_func(t, t_load(t, "hopper"), "tma_store_2d");
  REQUIRE(f, "no kernel");
  const tma_case *c = &cases[1]; /* 2d bf16, 128B swizzle, coordinates (-8, 40) of a 70 x 50 tensor */
  _Alignas(64) uint8_t map[128];
  uint64_t strides[4] = {0};
  dlcemu_deviceptr g;
  uint8_t *h;
  uint32_t bytes = tma_setup(t, c, map, strides, &g, &h); /* the global tensor holds pattern() */
  if (!bytes) {
    free(h);
    return 1;
  }
  /* the box's values, dense, then placed in shared memory as the 128B swizzle puts them */
  uint8_t *dense = malloc(bytes), *img = malloc(bytes);
  for (uint32_t i = 0; i < bytes; i++) dense[i] = (uint8_t)(0x80 | (i * 7 % 127));
  for (uint32_t o = 0; o < bytes; o += 16) memcpy(img + (o ^ (((o >> 7) & 7) << 4)), dense + o, 16);
  dlcemu_deviceptr dimg = t_alloc(t, bytes, img);
  int cx = c->coord[0], cy = c->coord[1];
  void *params[] = {map, &dimg, &bytes, &cx, &cy, &mode};
  int rc = t_launch(t, f, 1, 128, bytes, params);
  *rc_out = rc;
  if (!rc) {
    uint64_t total = strides[0] * c->dim[1];
    uint8_t *got = malloc(total);
    t_download(t, got, g, total);
    int bad = 0;
    for (uint64_t y = 0; y < c->dim[1]; y++)
      for (uint64_t x = 0; x < strides[0]; x++) {
        uint64_t i = y * strides[0] + x;
        int64_t bx = (int64_t)(x / 2) - cx, by = (int64_t)y - cy; /* the element's place in the box */
        int inbox = x < c->dim[0] * 2 && bx >= 0 && bx < c->box[0] && by >= 0 && by < c->box[1];
        uint8_t want = inbox ? dense[(by * c->box[0] + bx) * 2 + x % 2] : pattern(i);
        if (got[i] != want && bad++ < 4)
          t_fail(t, __FILE__, __LINE__, "global byte (%llu, %llu): 0x%02x, want 0x%02x (%s)", (unsigned long long)x,
                 (unsigned long long)y, got[i], want, inbox ? "stored" : "untouched");
      }
    t->checks++;
    free(got);
  }
  free(h);
  free(dense);
  free(img);
  return 0;
}

int test_tma_store_writes_the_box_in_bounds_only(tctx *t) {
  int rc = 0;
  if (run_tma_store(t, 0, &rc)) return 1;
  CHECK(rc == 0, "%s: %s", dlcemu_error_string(rc), dlcemu_last_error_detail());
  if (run_tma_store(t, 1, &rc)) return 1;
  const char *msg = dlcemu_last_error_detail();
  CHECK(rc == DLCEMU_ERROR_RACE && has(msg, "with no fence.proxy.async by that thread"), "no fence: %s: %s",
        dlcemu_error_string(rc), msg);
  if (run_tma_store(t, 2, &rc)) return 1;
  msg = dlcemu_last_error_detail();
  CHECK(rc == DLCEMU_ERROR_RACE && has(msg, "while a cp.async.bulk.tensor store still reads it"),
        "source overwritten: %s: %s", dlcemu_error_string(rc), msg);
  return 0;
}
