/*
 * t_stats.c: launch statistics on kernels whose costs are known
 * (kernels/stats.cu): bank-conflict wavefronts, global sectors, and the
 * special registers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_test.h"

static int run1(tctx *t, const char *kernel, void **params, dlcemu_launch_stats *st) {
  dlcemu_function f = t_func(t, t_load(t, "stats"), kernel);
  REQUIRE(f, "no kernel %s", kernel);
  OK(t_launch(t, f, 1, 32, 0, params));
  OK(dlcemu_last_launch_stats(st));
  return 0;
}

int test_column_read_32x32_costs_32_wavefronts_padded_1(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 32 * 4, NULL);
  int c = 5;
  void *params[] = {&dout, &c};
  dlcemu_launch_stats st;
  if (run1(t, "column_read", params, &st)) return 1;
  CHECK(st.shared_load.requests == 1 && st.shared_load.wavefronts == 32 && st.shared_load.ideal_wavefronts == 1,
        "column read: %llu requests, %llu wavefronts, ideal %llu", st.shared_load.requests, st.shared_load.wavefronts,
        st.shared_load.ideal_wavefronts);
  CHECK(st.shared_store.requests == 32 && st.shared_store.wavefronts == 32 && st.shared_store.ideal_wavefronts == 32,
        "row writes: %llu requests, %llu wavefronts", st.shared_store.requests, st.shared_store.wavefronts);
  float out[32];
  t_download(t, out, dout, sizeof out);
  for (int l = 0; l < 32; l++) CHECK(out[l] == (float)(l * 32 + c), "lane %d", l);
  if (run1(t, "column_read_padded", params, &st)) return 1;
  CHECK(st.shared_load.requests == 1 && st.shared_load.wavefronts == 1 && st.shared_load.ideal_wavefronts == 1,
        "padded column read: %llu wavefronts", st.shared_load.wavefronts);
  CHECK(st.shared_store.wavefronts == 32, "padded row writes: %llu wavefronts", st.shared_store.wavefronts);
  t_download(t, out, dout, sizeof out);
  for (int l = 0; l < 32; l++) CHECK(out[l] == (float)(l * 32 + c), "padded lane %d", l);
  const char *json = dlcemu_last_launch_stats_json();
  CHECK(strstr(json, "\"ld\": {\"requests\": 1, \"bytes\": 128, \"wavefronts\": 1, \"ideal_wavefronts\": 1}") != NULL,
        "json: %s", json);
  return 0;
}

int test_wide_and_broadcast_shared_access_phases(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 32 * 8, NULL);
  int stride = 2;
  void *params[] = {&dout, &stride};
  dlcemu_launch_stats st;
  if (run1(t, "wide_accesses", params, &st)) return 1;
  /* loads: f64 at a 16-byte stride (2 half-warp phases, each bank twice) 4 vs 2; broadcast 1 vs 1;
   * f32 at a 16-byte stride (banks reused 4 times) 4 vs 1 */
  CHECK(st.shared_load.requests == 3 && st.shared_load.wavefronts == 9 && st.shared_load.ideal_wavefronts == 4,
        "loads: %llu requests, %llu wavefronts, ideal %llu", st.shared_load.requests, st.shared_load.wavefronts,
        st.shared_load.ideal_wavefronts);
  /* stores: contiguous f64 2 vs 2, float4 4 vs 4, one lane 1 vs 1 */
  CHECK(st.shared_store.requests == 3 && st.shared_store.wavefronts == 7 && st.shared_store.ideal_wavefronts == 7,
        "stores: %llu requests, %llu wavefronts, ideal %llu", st.shared_store.requests, st.shared_store.wavefronts,
        st.shared_store.ideal_wavefronts);
  return 0;
}

int test_global_sectors_per_request(tctx *t) {
  float in[32 * 32 + 1];
  for (int i = 0; i < 32 * 32 + 1; i++) in[i] = (float)i;
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, 32 * 4, NULL);
  int offset = 1, stride = 32;
  void *params[] = {&din, &dout, &offset, &stride};
  dlcemu_launch_stats st;
  if (run1(t, "global_patterns", params, &st)) return 1;
  CHECK(st.global_load.requests == 3 && st.global_load.bytes == 384 && st.global_load.sectors == 4 + 5 + 32,
        "loads: %llu requests, %llu bytes, %llu sectors", st.global_load.requests, st.global_load.bytes,
        st.global_load.sectors);
  CHECK(st.global_store.requests == 1 && st.global_store.bytes == 128 && st.global_store.sectors == 4,
        "stores: %llu sectors", st.global_store.sectors);
  return 0;
}

/* Two launches of different kernels: dlcemu_thread_stats holds each field's
 * sum (checked field by field through the struct's unsigned long long
 * words, so a field the sums missed would show) and the count 2. */
int test_thread_stats_sum_every_launch(tctx *t) {
  float in[32 * 32 + 1];
  for (int i = 0; i < 32 * 32 + 1; i++) in[i] = (float)i;
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, 32 * 8, NULL);
  int offset = 1, stride = 32;
  void *pg[] = {&din, &dout, &offset, &stride};
  int wstride = 2;
  void *pw[] = {&dout, &wstride};
  CHECK(dlcemu_thread_stats(NULL, NULL) == DLCEMU_ERROR_INVALID_VALUE, "NULL out accepted");
  dlcemu_thread_stats_reset();
  dlcemu_launch_stats a, b, sum;
  unsigned long long n = 99;
  OK(dlcemu_thread_stats(&sum, &n));
  CHECK(n == 0 && sum.warp_instructions == 0 && sum.global_load.sectors == 0, "after the reset: %llu launches", n);
  if (run1(t, "global_patterns", pg, &a)) return 1;
  if (run1(t, "wide_accesses", pw, &b)) return 1;
  OK(dlcemu_thread_stats(&sum, &n));
  CHECK(n == 2, "%llu launches summed, expected 2", n);
  enum { W = sizeof(dlcemu_launch_stats) / sizeof(unsigned long long) };
  unsigned long long wa[W], wb[W], ws[W];
  memcpy(wa, &a, sizeof wa), memcpy(wb, &b, sizeof wb), memcpy(ws, &sum, sizeof ws);
  for (int i = 0; i < W; i++) CHECK(ws[i] == wa[i] + wb[i], "word %d: %llu, expected %llu + %llu", i, ws[i], wa[i], wb[i]);
  CHECK(sum.global_load.sectors == 41 && sum.blocks == 2, "sectors %llu, blocks %llu", sum.global_load.sectors,
        sum.blocks);
  OK(dlcemu_thread_stats(&sum, NULL));
  dlcemu_thread_stats_reset();
  OK(dlcemu_thread_stats(&sum, &n));
  CHECK(n == 0 && sum.warp_instructions == 0, "after the second reset: %llu launches", n);
  return 0;
}

int test_ldmatrix_bank_conflicts(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 32 * 4, NULL);
  int row_bytes = 128;
  void *params[] = {&dout, &row_bytes};
  dlcemu_launch_stats st;
  if (run1(t, "ldmatrix_conflicts", params, &st)) return 1;
  CHECK(st.ldmatrix.requests == 1 && st.ldmatrix.wavefronts == 32 && st.ldmatrix.ideal_wavefronts == 4,
        "128-byte rows: %llu wavefronts, ideal %llu", st.ldmatrix.wavefronts, st.ldmatrix.ideal_wavefronts);
  row_bytes = 16;
  if (run1(t, "ldmatrix_conflicts", params, &st)) return 1;
  CHECK(st.ldmatrix.wavefronts == 4 && st.ldmatrix.ideal_wavefronts == 4, "16-byte rows: %llu wavefronts",
        st.ldmatrix.wavefronts);
  return 0;
}

int test_stats_json_schema_and_class_totals(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 32 * 4, NULL);
  int c = 1;
  void *params[] = {&dout, &c};
  dlcemu_launch_stats st;
  if (run1(t, "column_read", params, &st)) return 1;
  unsigned long long sum = 0;
  for (int i = 0; i < DLCEMU_CLASS_COUNT; i++) sum += st.class_count[i];
  CHECK(sum == st.warp_instructions && st.warp_instructions > 0, "classes sum to %llu of %llu", sum,
        st.warp_instructions);
  CHECK(st.thread_instructions <= 32 * st.warp_instructions && st.blocks == 1, "thread instructions");
  const char *json = dlcemu_last_launch_stats_json();
  static const char *const keys[] = {"\"kernel\": \"column_read\"", "\"grid\": [1, 1, 1]", "\"block\": [32, 1, 1]",
                                     "\"shared_bytes\": {\"static\": 4096, \"dynamic\": 0}", "\"warp_instructions\": ",
                                     "\"thread_instructions\": ", "\"instruction_classes\": {\"int\": ", "\"tensor\": ",
                                     "\"global\": {\"load\": {\"requests\": ", "\"sectors\": ",
                                     "\"shared\": {\"ld\": {", "\"ldmatrix\": {", "\"stmatrix\": {", "\"cp_async\": {",
                                     "\"total\": {", "\"local\": {", "\"barriers\": {\"completed\": ", "\"warpgroup_syncs\": 0}", NULL};
  for (int i = 0; keys[i]; i++) CHECK(strstr(json, keys[i]) != NULL, "json lacks %s: %s", keys[i], json);
  int depth = 0, ok = 1;
  for (const char *p = json; *p; p++) {
    depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
    ok &= depth >= 0;
  }
  CHECK(ok && depth == 0 && json[0] == '{', "balanced braces");
  return 0;
}

int test_special_registers_and_clocks(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "stats"), "special_registers");
  REQUIRE(f, "no kernel");
  enum { nb = 6, nt = 64 };
  dlcemu_deviceptr dout = t_alloc(t, nb * nt * 16 * 4, NULL);
  void *params[] = {&dout};
  OK(dlcemu_launch_kernel(f, 2, 3, 1, 8, 4, 2, 256, params));
  unsigned out[nb * nt * 16];
  t_download(t, out, dout, sizeof out);
  unsigned nsm = t_is_sm90(t) ? 132 : 108;
  for (unsigned b = 0; b < nb; b++)
    for (unsigned th = 0; th < nt; th++) {
      const unsigned *o = out + (b * nt + th) * 16;
      unsigned lane = th % 32, tx = th % 8, ty = (th / 8) % 4, tz = th / 32, by = b / 2;
      (void)tx;
      CHECK(o[0] == lane && o[1] == th / 32 && o[2] == 64, "laneid/warpid/nwarpid %u %u %u", o[0], o[1], o[2]);
      CHECK(o[3] == b % nsm && o[4] == nsm, "smid/nsmid %u %u", o[3], o[4]);
      CHECK(o[5] == 256 && o[6] == 256, "dynamic/total smem %u %u", o[5], o[6]);
      CHECK(o[7] == (1u << lane) - 1 && o[14] == ~((1u << lane) - 1), "lanemasks");
      CHECK(o[8] == (ty | tz << 8 | by << 16), "tid.y/z ctaid.y/z 0x%x", o[8]);
      CHECK(o[9] == (2 | 2u << 8 | 3u << 16), "ntid.z nctaid.x/y 0x%x", o[9]);
      CHECK(o[10] > 0 && o[11] == 1 && o[12] == 1, "clocks advance");
      CHECK(o[13] == (th + 1) % nt, "dynamic shared");
    }
  return 0;
}
