/*
 * t_library.c: real library code in the emulator (kernels/library.cu):
 * CUB BlockReduce, BlockScan and BlockRadixSort against the host, half2
 * atomics, a run-time index into a by-value struct parameter.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_test.h"

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int test_cub_block_reduce_scan_and_radix_sort(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "library"), "cub_kernels");
  REQUIRE(f, "no kernel");
  int in[128], out[1024];
  for (int i = 0; i < 128; i++) in[i] = (i * 37) % 101 - 20;
  float fv[128];
  for (int i = 0; i < 128; i++) fv[i] = (float)i * 0.5f;
  uint16_t zero[8] = {0};
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, sizeof out, NULL), df = t_alloc(t, sizeof fv, fv),
                   dh = t_alloc(t, sizeof zero, zero);
  void *params[] = {&din, &dout, &df, &dh};
  OK(t_launch(t, f, 1, 128, 0, params));
  t_download(t, out, dout, sizeof out);
  int sum = 0;
  for (int i = 0; i < 128; i++) sum += in[i];
  CHECK(out[0] == sum, "BlockReduce sum %d, want %d", out[0], sum);
  int excl = 0;
  for (int i = 0; i < 128; i++) {
    CHECK(out[1 + i] == excl, "BlockScan thread %d: %d, want %d", i, out[1 + i], excl);
    excl += in[i];
  }
  int keys[512];
  for (int th = 0; th < 128; th++)
    for (int i = 0; i < 4; i++) keys[th * 4 + i] = in[(th * 4 + i) % 128] * 7 % 1000;
  qsort(keys, 512, sizeof(int), cmp_int);
  for (int i = 0; i < 512; i++) CHECK(out[200 + i] == keys[i], "BlockRadixSort key %d: %d, want %d", i, out[200 + i], keys[i]);
  uint16_t h[8];
  t_download(t, h, dh, sizeof h);
  for (int i = 0; i < 4; i++) CHECK(h[2 * i] == 0x5000 && h[2 * i + 1] == 0x5400, "half2 atomicAdd %d: %04x %04x", i, h[2 * i], h[2 * i + 1]);
  t_download(t, fv, df, sizeof fv);
  for (int i = 0; i < 128; i++) CHECK(fv[i] == (float)i, "__hmul %d: %g", i, fv[i]);
  return 0;
}

struct S {
  int arr[8];
  float f;
};

int test_struct_parameter_indexed_at_run_time(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "library"), "param_index");
  REQUIRE(f, "no kernel");
  struct S s;
  for (int i = 0; i < 8; i++) s.arr[i] = i * i - 3;
  s.f = 10.5f;
  dlcemu_deviceptr dout = t_alloc(t, 64 * 4, NULL);
  void *params[] = {&s, &dout};
  OK(t_launch(t, f, 1, 64, 0, params));
  int out[64];
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < 64; i++) CHECK(out[i] == s.arr[i % 8] + 10, "thread %d: %d", i, out[i]);
  return 0;
}

struct P16 {
  int a[16];
  float s;
};

int test_grid_constant_parameter_by_generic_address(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "library"), "grid_constant_param");
  REQUIRE(f, "no kernel");
  struct P16 p;
  for (int i = 0; i < 16; i++) p.a[i] = 100 * i + 1;
  p.s = 4.0f;
  dlcemu_deviceptr dout = t_alloc(t, 32 * 4, NULL);
  void *params[] = {&p, &dout};
  OK(t_launch(t, f, 1, 32, 0, params));
  int out[32];
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < 32; i++) CHECK(out[i] == p.a[i & 15] + 4, "thread %d: %d", i, out[i]);
  return 0;
}

int test_softmax_rows_bf16_within_tolerance(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "library"), "softmax_rows");
  REQUIRE(f, "no kernel");
  enum { rows = 10 };
  static float in[rows * 256];
  uint32_t s = 17;
  for (int i = 0; i < rows * 256; i++) in[i] = (float)((int)(t_rand(&s) % 2001) - 1000) / 100.0f;
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, rows * 256 * 2, NULL);
  int n = rows;
  void *params[] = {&din, &dout, &n};
  OK(t_launch(t, f, 3, 128, 0, params)); /* 12 warps, the last 2 exit at once */
  uint16_t out[rows * 256];
  t_download(t, out, dout, sizeof out);
  for (int r = 0; r < rows; r++) {
    double m = -1e300, sum = 0;
    for (int i = 0; i < 256; i++) m = in[r * 256 + i] > m ? in[r * 256 + i] : m;
    for (int i = 0; i < 256; i++) sum += exp(in[r * 256 + i] - m);
    for (int i = 0; i < 256; i++) {
      double want = exp(in[r * 256 + i] - m) / sum, got = t_bf2f(out[r * 256 + i]);
      CHECK(fabs(got - want) <= 1e-3 + 8e-3 * want, "row %d col %d: %g, want %g", r, i, got, want);
    }
  }
  return 0;
}
