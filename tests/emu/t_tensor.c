/*
 * t_tensor.c: mma.sync, ldmatrix, stmatrix and cp.async (kernels/tensor.cu),
 * and the full GEMM pipeline of bench/emu_gemm.cu.  The fragment tables
 * below are written from the PTX ISA ("Matrix Fragments for mma.m16n8k16 /
 * mma.m16n8k8", "ldmatrix", "stmatrix"); every element of every lane is
 * checked against them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu_test.h"

/* accumulator C/D of m16n8k*: ci, i = 0..3 */
static int grp(int lane) { return lane >> 2; }
static int tig(int lane) { return lane % 4; }
static int d_row(int lane, int i) { return i < 2 ? grp(lane) : grp(lane) + 8; }
static int d_col(int lane, int i) { return tig(lane) * 2 + (i & 0x1); }

static uint16_t f16_of_int(int v) { /* small integers are exact in f16 */
  if (v == 0) return 0;
  uint16_t s = v < 0 ? 0x8000 : 0;
  int a = abs(v), e = 0;
  while ((a >> e) > 1) e++;
  return (uint16_t)(s | (uint16_t)((e + 15) << 10) | (uint16_t)(((a << 10) >> e) & 0x3FF));
}
static uint16_t bf16_of_int(int v) { return (uint16_t)(t_u32((float)v) >> 16); }

/* run an mma kernel on random small integers and check D[lane][i] = (C + A*B)[row][col] */
static int check_mma(tctx *t, const char *kernel, int K, int bf16, int f16acc, int tf32) {
  dlcemu_function f = t_func(t, t_load(t, "tensor"), kernel);
  REQUIRE(f, "no kernel %s", kernel);
  int A[16 * 16], B[16 * 8], C[16 * 8];
  uint32_t s = (uint32_t)(K * 131 + bf16 * 7 + f16acc * 3 + tf32 + 1);
  for (int i = 0; i < 16 * K; i++) A[i] = (int)(t_rand(&s) % 9) - 4;
  for (int i = 0; i < K * 8; i++) B[i] = (int)(t_rand(&s) % 9) - 4;
  for (int i = 0; i < 128; i++) C[i] = (int)(t_rand(&s) % 101) - 50;
  uint16_t a16[256], b16[128], c16[128];
  float af[256], bfl[128], cf[128];
  for (int i = 0; i < 16 * K; i++) {
    a16[i] = bf16 ? bf16_of_int(A[i]) : f16_of_int(A[i]);
    af[i] = (float)A[i];
  }
  for (int i = 0; i < K * 8; i++) {
    b16[i] = bf16 ? bf16_of_int(B[i]) : f16_of_int(B[i]);
    bfl[i] = (float)B[i];
  }
  for (int i = 0; i < 128; i++) {
    c16[i] = f16_of_int(C[i]);
    cf[i] = (float)C[i];
  }
  dlcemu_deviceptr dA = tf32 ? t_alloc(t, sizeof af, af) : t_alloc(t, sizeof a16, a16);
  dlcemu_deviceptr dB = tf32 ? t_alloc(t, sizeof bfl, bfl) : t_alloc(t, sizeof b16, b16);
  dlcemu_deviceptr dC = f16acc ? t_alloc(t, sizeof c16, c16) : t_alloc(t, sizeof cf, cf);
  dlcemu_deviceptr dD = t_alloc(t, 32 * 4 * 4, NULL);
  void *params5[] = {&dA, &dB, &dC, &dD, &bf16};
  OK(t_launch(t, f, 1, 32, 0, params5));
  float d[128];
  uint32_t dh[64];
  if (f16acc) t_download(t, dh, dD, sizeof dh);
  else t_download(t, d, dD, sizeof d);
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < 4; i++) {
      int r = d_row(lane, i), c = d_col(lane, i), want = C[r * 8 + c];
      for (int k = 0; k < K; k++) want += A[r * K + k] * B[k * 8 + c];
      float got = f16acc ? t_h2f((uint16_t)(dh[lane * 2 + i / 2] >> (16 * (i & 1)))) : d[lane * 4 + i];
      CHECK(got == (float)want, "%s lane %d d%d (row %d col %d) = %g, want %d", kernel, lane, i, r, c, got, want);
    }
  return 0;
}

int test_mma_m16n8k16_f16_f32_fragment_layout(tctx *t) { return check_mma(t, "mma_k16_f32", 16, 0, 0, 0); }
int test_mma_m16n8k16_bf16_f32_fragment_layout(tctx *t) { return check_mma(t, "mma_k16_f32", 16, 1, 0, 0); }
int test_mma_m16n8k16_f16_f16_fragment_layout(tctx *t) { return check_mma(t, "mma_k16_f16", 16, 0, 1, 0); }
int test_mma_m16n8k8_f16_and_bf16_fragment_layout(tctx *t) {
  int rc = check_mma(t, "mma_k8_f32", 8, 0, 0, 0);
  return rc ? rc : check_mma(t, "mma_k8_f32", 8, 1, 0, 0);
}
int test_mma_m16n8k8_tf32_fragment_layout(tctx *t) { return check_mma(t, "mma_k8_tf32", 8, 0, 0, 1); }

/* The documented accumulation: exact products summed with C in double, one rounding to f32. */
int test_mma_accumulates_with_one_rounding(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "tensor"), "mma_k16_f32");
  REQUIRE(f, "no kernel");
  uint16_t a[256], b[128];
  float c[128];
  for (int i = 0; i < 256; i++) a[i] = 0x3C00;       /* 1.0 */
  for (int i = 0; i < 128; i++) b[i] = 0x3C00;
  for (int i = 0; i < 128; i++) c[i] = 16777216.0f; /* 2^24: adding 1.0 sixteen times one by one would be lost */
  b[0] = b[8] = 0;                                   /* B[0][0] = B[1][0] = 0: column 0 adds 14 */
  int zero = 0;
  dlcemu_deviceptr dA = t_alloc(t, sizeof a, a), dB = t_alloc(t, sizeof b, b), dC = t_alloc(t, sizeof c, c),
                   dD = t_alloc(t, 512, NULL);
  void *params[] = {&dA, &dB, &dC, &dD, &zero};
  OK(t_launch(t, f, 1, 32, 0, params));
  float d[128];
  t_download(t, d, dD, sizeof d);
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < 4; i++) {
      float want = d_col(lane, i) == 0 ? 16777230.0f : 16777232.0f; /* not 2^24, as fp32 adds one by one would give */
      CHECK(d[lane * 4 + i] == want, "lane %d d%d = %.1f, want %.1f", lane, i, d[lane * 4 + i], want);
    }
  return 0;
}

static int srow(int m, int r) { return 8 * m + (r * 5) % 8; }
static uint32_t mat(int m, int r, int c) { return (uint32_t)(srow(m, r) * 8 + c); } /* the value ldmatrix reads */

int test_ldmatrix_x1_x2_x4_trans_layout(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "tensor"), "ldmatrix_all");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr dout = t_alloc(t, 32 * 14 * 4, NULL);
  void *params[] = {&dout};
  OK(t_launch(t, f, 1, 32, 0, params));
  uint32_t out[32 * 14];
  t_download(t, out, dout, sizeof out);
  /* ldmatrix: register m of lane l holds row (l >> 2), columns 2*(l % 4) and +1 of matrix m;
   * with .trans, column (l >> 2), rows 2*(l % 4) and +1 */
  static const int slot[2][4] = {{3, 4, 5, 6}, {10, 11, 12, 13}};
  for (int l = 0; l < 32; l++) {
    int g = grp(l), tq = tig(l);
    for (int tr = 0; tr < 2; tr++) {
      for (int m = 0; m < 4; m++) {
        uint32_t want = tr ? mat(m, 2 * tq, g) | mat(m, 2 * tq + 1, g) << 16 : mat(m, g, 2 * tq) | mat(m, g, 2 * tq + 1) << 16;
        const uint32_t *o = out + l * 14;
        CHECK(o[slot[tr][m]] == want, "x4%s lane %d matrix %d: 0x%08x, want 0x%08x", tr ? ".trans" : "", l, m,
              o[slot[tr][m]], want);
        if (m == 0) CHECK(o[tr ? 7 : 0] == want, "x1%s lane %d", tr ? ".trans" : "", l);
        if (m < 2) CHECK(o[(tr ? 8 : 1) + m] == want, "x2%s lane %d matrix %d", tr ? ".trans" : "", l, m);
      }
    }
  }
  dlcemu_launch_stats st;
  OK(dlcemu_last_launch_stats(&st));
  CHECK(st.ldmatrix.requests == 6 && st.ldmatrix.bytes == (1 + 2 + 4) * 2 * 128, "ldmatrix traffic %llu %llu",
        st.ldmatrix.requests, st.ldmatrix.bytes);
  CHECK(st.ldmatrix.wavefronts == st.ldmatrix.ideal_wavefronts, "16-byte rows are conflict-free");
  return 0;
}

int test_stmatrix_x1_x4_trans_layout(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "tensor"), "stmatrix_all");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr dout = t_alloc(t, 512 * 2, NULL);
  void *params[] = {&dout};
  OK(t_launch(t, f, 1, 32, 0, params));
  uint16_t out[512];
  t_download(t, out, dout, sizeof out);
  /* lane l's register m holds tags (m, l, 0) and (m, l, 1) = m*256 + 2l (+1): stored non-transposed,
   * row r column c of matrix m comes from lane 4r + c/2; transposed, from lane 4c + r/2 */
  for (int m = 0; m < 4; m++)
    for (int r = 0; r < 8; r++)
      for (int c = 0; c < 8; c++) {
        int mm = m == 0 ? 3 : m; /* the final .x1 store rewrote matrix 0 with register 3 */
        uint16_t want = (uint16_t)(mm * 256 + (4 * r + c / 2) * 2 + (c & 1));
        uint16_t want_t = (uint16_t)(m * 256 + (4 * c + r / 2) * 2 + (r & 1));
        CHECK(out[srow(m, r) * 8 + c] == want, "matrix %d (%d,%d) = %d, want %d", m, r, c, out[srow(m, r) * 8 + c], want);
        CHECK(out[(32 + srow(m, r)) * 8 + c] == want_t, "trans matrix %d (%d,%d)", m, r, c);
      }
  return 0;
}

int test_cp_async_sizes_zero_fill_and_ignore_src(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "tensor"), "cp_async_sizes");
  REQUIRE(f, "no kernel");
  uint8_t src[4096], out[4096];
  uint32_t s = 3;
  for (int i = 0; i < 4096; i++) src[i] = (uint8_t)(t_rand(&s) | 1);
  dlcemu_deviceptr dsrc = t_alloc(t, sizeof src, src), dout = t_alloc(t, sizeof out, NULL);
  int srcsize = 5;
  void *params[] = {&dsrc, &dout, &srcsize};
  OK(t_launch(t, f, 1, 64, 0, params));
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < 1024; i++) CHECK(out[i] == src[i], "16-byte copy byte %d", i);
  for (int i = 1024; i < 1792; i++) CHECK(out[i] == src[i], "8- and 4-byte copies byte %d", i);
  for (int i = 1792; i < 2048; i++) CHECK(out[i] == 0xEE, "untouched byte %d", i);
  for (int i = 2048; i < 3072; i++) {
    int k = (i - 2048) % 16;
    CHECK(out[i] == (k < 5 ? src[i] : 0), "src-size 5: byte %d = %d", i, out[i]);
  }
  for (int i = 3072; i < 4096; i++) {
    int thread = (i - 3072) / 16;
    CHECK(out[i] == ((thread & 1) ? 0 : src[i]), "ignore-src: byte %d", i);
  }
  dlcemu_launch_stats st;
  OK(dlcemu_last_launch_stats(&st));
  CHECK(st.cp_async_copies == 5 * 64 && st.cp_async_bytes == 64 * (16 + 8 + 4 + 16 + 16), "cp.async counts %llu %llu",
        st.cp_async_copies, st.cp_async_bytes);
  return 0;
}

int test_cp_async_wait_group_lands_oldest_groups(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "tensor"), "cp_async_groups");
  REQUIRE(f, "no kernel");
  int src[3 * 64 * 4], out[3 * 64 * 4];
  for (int i = 0; i < 3 * 64 * 4; i++) src[i] = i * 11 + 1;
  dlcemu_deviceptr dsrc = t_alloc(t, sizeof src, src), dout = t_alloc(t, sizeof out, NULL);
  void *params[] = {&dsrc, &dout};
  OK(t_launch(t, f, 1, 64, 0, params));
  t_download(t, out, dout, sizeof out);
  for (int g = 0; g < 3; g++)
    for (int th = 0; th < 64; th++)
      for (int k = 0; k < 4; k++)
        CHECK(out[(g * 64 + th) * 4 + k] == src[(g * 64 + (th + g + 1) % 64) * 4 + k], "group %d thread %d", g, th);
  dlcemu_launch_stats st;
  OK(dlcemu_last_launch_stats(&st));
  CHECK(st.cp_async_groups == 3 * 2 && st.cp_async_waits == 3 * 2, "groups %llu waits %llu (warp instructions)",
        st.cp_async_groups, st.cp_async_waits);
  return 0;
}

/* the benchmark kernel end to end: cp.async pipeline, ldmatrix(.trans), mma */
static int run_gemm(tctx *t, int M, int N, int K) {
  dlcemu_function f = t_func(t, t_load(t, "emu_gemm"), "gemm_f16_f32");
  REQUIRE(f, "no kernel");
  uint16_t *a = malloc(sizeof(uint16_t) * (size_t)M * K), *b = malloc(sizeof(uint16_t) * (size_t)K * N);
  float *c = malloc(sizeof(float) * (size_t)M * N);
  int *ai = malloc(sizeof(int) * (size_t)M * K), *bi = malloc(sizeof(int) * (size_t)K * N);
  uint32_t s = (uint32_t)(M * 7 + N * 3 + K);
  for (int i = 0; i < M * K; i++) a[i] = f16_of_int(ai[i] = (int)(t_rand(&s) % 7) - 3);
  for (int i = 0; i < K * N; i++) b[i] = f16_of_int(bi[i] = (int)(t_rand(&s) % 7) - 3);
  dlcemu_deviceptr dA = t_alloc(t, sizeof(uint16_t) * (size_t)M * K, a), dB = t_alloc(t, sizeof(uint16_t) * (size_t)K * N, b);
  dlcemu_deviceptr dC = t_alloc(t, sizeof(float) * (size_t)M * N, NULL);
  void *params[] = {&dA, &dB, &dC, &M, &N, &K};
  int rc = dlcemu_launch_kernel(f, (unsigned)N / 64, (unsigned)M / 64, 1, 128, 1, 1, 0, params);
  CHECK(rc == 0, "launch: %s", dlcemu_last_error_detail());
  if (!rc) {
    t_download(t, c, dC, sizeof(float) * (size_t)M * N);
    int bad = 0;
    for (int i = 0; i < M && bad < 5; i++)
      for (int j = 0; j < N && bad < 5; j++) {
        int want = 0;
        for (int k = 0; k < K; k++) want += ai[i * K + k] * bi[k * N + j];
        if (c[(size_t)i * N + j] != (float)want) bad++;
        CHECK(c[(size_t)i * N + j] == (float)want, "C[%d][%d] = %g, want %d", i, j, c[(size_t)i * N + j], want);
      }
    dlcemu_launch_stats st;
    dlcemu_last_launch_stats(&st);
    CHECK(st.ldmatrix.wavefronts == st.ldmatrix.ideal_wavefronts, "padded tiles: ldmatrix without bank conflicts");
    CHECK(st.class_count[DLCEMU_CLASS_TENSOR] > 0 && st.barriers == (unsigned long long)(M / 64) * (N / 64) * (K / 32),
          "barriers %llu", st.barriers);
    /* one m16n8k16 (4096 FLOPs) per 16x8x16 block of the product, no padding at these shapes */
    unsigned long long flops = 2ull * (unsigned long long)M * (unsigned long long)N * (unsigned long long)K;
    CHECK(st.mma_ops == flops / 4096 && st.tensor_flops == flops && st.wgmma_ops == 0,
          "mma.sync %llu, tensor FLOPs %llu, want %llu and %llu", st.mma_ops, st.tensor_flops, flops / 4096, flops);
  }
  free(a);
  free(b);
  free(c);
  free(ai);
  free(bi);
  return 0;
}

int test_gemm_cp_async_ldmatrix_mma_pipeline(tctx *t) {
  int rc = run_gemm(t, 128, 128, 128);
  return rc ? rc : run_gemm(t, 64, 192, 96);
}
