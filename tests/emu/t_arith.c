/*
 * t_arith.c: every instruction of the tables kernels/ops_*.def against its
 * host reference (ref.h), on edge values and random inputs.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu_test.h"
#include "ref.h"

#define N 512

static const uint32_t edge32[] = {0, 1, 2, 3, 7, 31, 32, 33, 0x7FFFFFFF, 0x80000000u, 0xFFFFFFFFu, 0xFFFFFFFEu,
                                  0x12345678, 0x80000001u, 0xFF, 0x100, 0xFFFF, 0x10000, 0xDEADBEEFu, 100,
                                  (uint32_t)-100, 0x00FF00FF, 0x8000, 0xFFFF8000u};
#define NEDGE ((int)(sizeof edge32 / sizeof edge32[0]))

/* run table kernel `name` over (a, b, c) and download count results per thread */
static int run(tctx *t, const char *name, size_t es, int count, const void *a, const void *b, const void *c, void *out) {
  dlcemu_module m = t_load(t, "arith");
  dlcemu_function f = t_func(t, m, name);
  REQUIRE(f, "no kernel %s", name);
  dlcemu_deviceptr da = t_alloc(t, es * N, a), db = t_alloc(t, es * N, b), dc = t_alloc(t, es * N, c);
  dlcemu_deviceptr dout = t_alloc(t, es * N * (size_t)count, NULL);
  int n = N;
  void *params[] = {&da, &db, &dc, &dout, &n, &count};
  OK(t_launch(t, f, N / 128, 128, 0, params));
  t_download(t, out, dout, es * N * (size_t)count);
  return 0;
}

int test_int32_instructions_match_host(tctx *t) {
  static const char *names[] = {
#define A(name, ...) #name,
#define O A
#define S A
#include "kernels/ops_i32.def"
#undef A
#undef O
#undef S
  };
  int count = (int)(sizeof names / sizeof names[0]);
  uint32_t va[N], vb[N], vc[N], s = 12345;
  for (int i = 0; i < N; i++) {
    va[i] = i < NEDGE * NEDGE ? edge32[i % NEDGE] : t_rand(&s);
    vb[i] = i < NEDGE * NEDGE ? edge32[(i / NEDGE) % NEDGE] : t_rand(&s) >> (i % 32);
    vc[i] = (i & 1) ? t_rand(&s) : edge32[(i * 7) % NEDGE];
    if (!vb[i]) vb[i] = 1;
  }
  uint32_t *out = malloc(sizeof(uint32_t) * N * (size_t)count);
  int rc = run(t, "ops_i32", 4, count, va, vb, vc, out);
  for (int i = 0; !rc && i < N; i++) {
    int k = 0;
    uint32_t A_ = va[i], B_ = vb[i], C_ = vc[i];
#define A(name, tpl, n, ...)                                                                                            \
  {                                                                                                                    \
    uint32_t a = A_, b = B_, c = C_;                                                                                   \
    (void)a, (void)b, (void)c;                                                                                         \
    uint32_t want = (uint32_t)(__VA_ARGS__), got = out[(size_t)i * count + k];                                         \
    CHECK(got == want, "%s(0x%08x, 0x%08x, 0x%08x) = 0x%08x, want 0x%08x", #name, a, b, c, got, want);                \
    k++;                                                                                                               \
  }
#define O A
#define S(name, tpl, fb, arch, n, ...) A(name, tpl, n, __VA_ARGS__)
#include "kernels/ops_i32.def"
#undef A
#undef O
#undef S
  }
  free(out);
  return rc;
}

int test_int64_instructions_match_host(tctx *t) {
  static const char *names[] = {
#define A(name, ...) #name,
#define O A
#include "kernels/ops_i64.def"
#undef A
#undef O
  };
  int count = (int)(sizeof names / sizeof names[0]);
  uint64_t va[N], vb[N], vc[N];
  uint32_t s = 777;
  static const uint64_t e[] = {0, 1, 63, 64, 65, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, ~0ull,
                               0x123456789ABCDEF0ull, 0xFFFFFFFFull, 0x100000000ull, (uint64_t)-5};
  int ne = (int)(sizeof e / sizeof e[0]);
  for (int i = 0; i < N; i++) {
    uint64_t r1 = (uint64_t)t_rand(&s) << 32 | t_rand(&s), r2 = (uint64_t)t_rand(&s) << 32 | t_rand(&s);
    va[i] = i < ne * ne ? e[i % ne] : r1;
    vb[i] = i < ne * ne ? e[(i / ne) % ne] : r2 >> (i % 64);
    vc[i] = (i & 1) ? (uint64_t)t_rand(&s) % 80 : e[(i * 5) % ne];
    if (!vb[i]) vb[i] = 3;
  }
  uint64_t *out = malloc(sizeof(uint64_t) * N * (size_t)count);
  int rc = run(t, "ops_i64", 8, count, va, vb, vc, out);
  for (int i = 0; !rc && i < N; i++) {
    int k = 0;
    uint64_t A_ = va[i], B_ = vb[i], C_ = vc[i];
#define A(name, tpl, n, ...)                                                                                            \
  {                                                                                                                    \
    uint64_t a = A_, b = B_, c = C_;                                                                                   \
    (void)a, (void)b, (void)c;                                                                                         \
    uint64_t want = (uint64_t)(__VA_ARGS__), got = out[(size_t)i * count + k];                                         \
    CHECK(got == want, "%s(0x%llx, 0x%llx, 0x%llx) = 0x%llx, want 0x%llx", #name, (unsigned long long)a,              \
          (unsigned long long)b, (unsigned long long)c, (unsigned long long)got, (unsigned long long)want);           \
    k++;                                                                                                               \
  }
#define O A
#include "kernels/ops_i64.def"
#undef A
#undef O
  }
  free(out);
  return rc;
}

int test_int16_instructions_match_host(tctx *t) {
  static const char *names[] = {
#define A(name, ...) #name,
#define O A
#include "kernels/ops_i16.def"
#undef A
#undef O
  };
  int count = (int)(sizeof names / sizeof names[0]);
  uint16_t va[N], vb[N], vc[N];
  uint32_t s = 99;
  static const uint16_t e[] = {0, 1, 15, 16, 17, 0x7FFF, 0x8000, 0xFFFF, 0x1234, 0xFF, 0x100, (uint16_t)-3};
  int ne = (int)(sizeof e / sizeof e[0]);
  for (int i = 0; i < N; i++) {
    va[i] = i < ne * ne ? e[i % ne] : (uint16_t)t_rand(&s);
    vb[i] = i < ne * ne ? e[(i / ne) % ne] : (uint16_t)(t_rand(&s) >> (i % 16));
    vc[i] = (uint16_t)t_rand(&s);
    if (!vb[i]) vb[i] = 7;
  }
  uint16_t *out = malloc(sizeof(uint16_t) * N * (size_t)count);
  int rc = run(t, "ops_i16", 2, count, va, vb, vc, out);
  for (int i = 0; !rc && i < N; i++) {
    int k = 0;
    uint16_t A_ = va[i], B_ = vb[i], C_ = vc[i];
#define A(name, tpl, n, ...)                                                                                            \
  {                                                                                                                    \
    uint16_t a = A_, b = B_, c = C_;                                                                                   \
    (void)a, (void)b, (void)c;                                                                                         \
    uint16_t want = (uint16_t)(__VA_ARGS__), got = out[(size_t)i * count + k];                                         \
    CHECK(got == want, "%s(0x%04x, 0x%04x, 0x%04x) = 0x%04x, want 0x%04x", #name, a, b, c, got, want);                \
    k++;                                                                                                               \
  }
#define O A
#include "kernels/ops_i16.def"
#undef A
#undef O
  }
  free(out);
  return rc;
}

/* f32 inputs: special values, then random values of moderate and any exponent */
static const float fedge[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1.5f, 2.5f, -2.5f, 3.0f, 1e-40f, -1e-40f, 1.17549435e-38f,
                              3.40282347e38f, -3.40282347e38f, INFINITY, -INFINITY, NAN, 0.333333343f, 1e10f, -7.25f,
                              16777217.0f, 0.1f, 1.0000001f, 65504.0f, 65520.0f, 6.1035156e-5f, 5.9604645e-8f};
#define NFEDGE ((int)(sizeof fedge / sizeof fedge[0]))

static float rand_float(uint32_t *s, int wide) {
  uint32_t r = t_rand(s);
  if (wide) return t_f32(r);
  uint32_t e = 127 - 20 + (t_rand(s) % 40);
  return t_f32((r & 0x807FFFFFu) | (e << 23));
}

static int same_f32(float got, float want, int canon) {
  if (isnan(want)) return canon ? t_u32(got) == 0x7FFFFFFFu : isnan(got);
  return t_u32(got) == t_u32(want);
}

int test_f32_instructions_match_host(tctx *t) {
  static const char *names[] = {
#define A(name, ...) #name,
#define O A
#define S A
#include "kernels/ops_f32.def"
#undef A
#undef O
#undef S
  };
  int count = (int)(sizeof names / sizeof names[0]);
  float va[N], vb[N], vc[N];
  uint32_t s = 4242;
  for (int i = 0; i < N; i++) {
    va[i] = i < NFEDGE * NFEDGE ? fedge[i % NFEDGE] : rand_float(&s, i % 5 == 0);
    vb[i] = i < NFEDGE * NFEDGE ? fedge[(i / NFEDGE) % NFEDGE] : rand_float(&s, i % 7 == 0);
    vc[i] = (i % 3) ? rand_float(&s, 0) : fedge[(i * 11) % NFEDGE];
  }
  float *out = malloc(sizeof(float) * N * (size_t)count);
  int rc = run(t, "ops_f32", 4, count, va, vb, vc, out);
  for (int i = 0; !rc && i < N; i++) {
    int k = 0;
    float A_ = va[i], B_ = vb[i], C_ = vc[i];
#define A(name, tpl, n, ...)                                                                                            \
  {                                                                                                                    \
    float fa = A_, fb = B_, fc = C_;                                                                                   \
    (void)fa, (void)fb, (void)fc;                                                                                      \
    float want = (float)(__VA_ARGS__), got = out[(size_t)i * count + k];                                               \
    int canon = !strncmp(#name, "add", 3) || !strncmp(#name, "mul", 3) || !strncmp(#name, "fma", 3) ||                 \
                !strncmp(#name, "div", 3) || !strncmp(#name, "sqrt", 4);                                               \
    CHECK(same_f32(got, want, canon), "%s(%a, %a, %a) = %a (0x%08x), want %a (0x%08x)", #name, fa, fb, fc, got,        \
          t_u32(got), want, t_u32(want));                                                                             \
    k++;                                                                                                               \
  }
#define O A
#define S(name, tpl, fb, arch, n, ...) A(name, tpl, n, __VA_ARGS__)
#include "kernels/ops_f32.def"
#undef A
#undef O
#undef S
  }
  free(out);
  return rc;
}

int test_f32_approx_instructions_within_tolerance(tctx *t) {
  static const char *names[] = {
#define O(name, ...) #name,
#include "kernels/ops_f32_approx.def"
#undef O
  };
  int count = (int)(sizeof names / sizeof names[0]);
  float va[N], vb[N], vc[N];
  uint32_t s = 31337;
  for (int i = 0; i < N; i++) {
    va[i] = i < NFEDGE ? fedge[i] : (float)((double)(int32_t)t_rand(&s) / 2147483648.0 * 20.0);
    vb[i] = i < NFEDGE ? fedge[(i * 3 + 1) % NFEDGE] : rand_float(&s, 0);
    vc[i] = 0;
  }
  float *out = malloc(sizeof(float) * N * (size_t)count);
  int rc = run(t, "ops_f32_approx", 4, count, va, vb, vc, out);
  for (int i = 0; !rc && i < N; i++) {
    int k = 0;
    float A_ = va[i], B_ = vb[i];
#define O(name, tpl, n, ref, tol)                                                                                       \
  {                                                                                                                    \
    float fa = A_, fb = B_;                                                                                            \
    (void)fa, (void)fb;                                                                                                \
    double want = (ref);                                                                                               \
    float got = out[(size_t)i * count + k];                                                                            \
    int ok;                                                                                                            \
    if (isnan(want)) ok = isnan(got);                                                                                  \
    else if (isinf(want) || fabs(want) > FLT_MAX) ok = isinf(got) && (got > 0) == (want > 0);                          \
    else ok = fabs(got - want) <= (tol) * (fabs(want) > 1 ? fabs(want) : 1) + FLT_MIN;                                 \
    CHECK(ok, "%s(%a, %a) = %a, want %a", #name, fa, fb, got, want);                                                   \
    k++;                                                                                                               \
  }
#include "kernels/ops_f32_approx.def"
#undef O
  }
  free(out);
  return rc;
}

int test_f64_instructions_match_host(tctx *t) {
  static const char *names[] = {
#define A(name, ...) #name,
#define O A
#include "kernels/ops_f64.def"
#undef A
#undef O
  };
  int count = (int)(sizeof names / sizeof names[0]);
  double va[N], vb[N], vc[N];
  uint32_t s = 2024;
  static const double e[] = {0.0, -0.0, 1.0, -1.0, 0.1, 2.5, -3.5, 1e-310, DBL_MAX, INFINITY, -INFINITY, NAN, 1.0 / 3};
  int ne = (int)(sizeof e / sizeof e[0]);
  for (int i = 0; i < N; i++) {
    double r1 = ldexp((double)t_rand(&s) / 4294967296.0 + 0.5, (int)(t_rand(&s) % 80) - 40);
    double r2 = ldexp((double)t_rand(&s) / 4294967296.0 + 0.5, (int)(t_rand(&s) % 80) - 40);
    va[i] = i < ne * ne ? e[i % ne] : (i & 1 ? -r1 : r1);
    vb[i] = i < ne * ne ? e[(i / ne) % ne] : r2;
    vc[i] = (i % 3) ? r1 * 3 : e[(i * 7) % ne];
  }
  double *out = malloc(sizeof(double) * N * (size_t)count);
  int rc = run(t, "ops_f64", 8, count, va, vb, vc, out);
  for (int i = 0; !rc && i < N; i++) {
    int k = 0;
    double A_ = va[i], B_ = vb[i], C_ = vc[i];
#define A(name, tpl, n, ...)                                                                                            \
  {                                                                                                                    \
    double da = A_, db = B_, dc = C_;                                                                                  \
    (void)da, (void)db, (void)dc;                                                                                      \
    double want = (double)(__VA_ARGS__), got = out[(size_t)i * count + k];                                             \
    int ok = isnan(want) ? isnan(got) : t_u64(got) == t_u64(want);                                                     \
    CHECK(ok, "%s(%a, %a, %a) = %a, want %a", #name, da, db, dc, got, want);                                           \
    k++;                                                                                                               \
  }
#define O A
#include "kernels/ops_f64.def"
#undef A
#undef O
  }
  free(out);
  return rc;
}

static uint16_t rand_half(uint32_t *s, int cls) {
  static const uint16_t e[] = {0x0000, 0x8000, 0x3C00, 0xBC00, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF,
                               0x7C00, 0xFC00, 0x7E00, 0x3555, 0x4248, 0x3800, 0x3C01, 0x5BF0, 0x3F80, 0x4049};
  if (cls == 0) return e[t_rand(s) % (sizeof e / sizeof e[0])];
  if (cls == 1) return (uint16_t)((t_rand(s) & 0x83FF) | ((12 + t_rand(s) % 8) << 10)); /* moderate f16 */
  return (uint16_t)t_rand(s);
}

int test_conversions_and_half_arithmetic_match_host(tctx *t) {
  static const char *names[] = {
#define A(name, ...) #name,
#include "kernels/ops_cvt.def"
#undef A
  };
  int count = (int)(sizeof names / sizeof names[0]);
  uint32_t va[N], vb[N], vc[N], s = 555;
  for (int i = 0; i < N; i++) {
    switch (i % 4) {
    case 0:
      va[i] = t_u32(fedge[i / 4 % NFEDGE]);
      vb[i] = t_u32(fedge[(i / 4 * 5 + 3) % NFEDGE]);
      break;
    case 1:
      va[i] = t_u32(rand_float(&s, 0));
      vb[i] = t_u32(rand_float(&s, 0));
      break;
    case 2:
      va[i] = rand_half(&s, (i / 4) % 3) | (uint32_t)rand_half(&s, (i / 8) % 3) << 16;
      vb[i] = rand_half(&s, (i / 4) % 2) | (uint32_t)rand_half(&s, (i / 8) % 2) << 16;
      break;
    default:
      va[i] = t_rand(&s);
      vb[i] = t_rand(&s);
      break;
    }
    vc[i] = rand_half(&s, i % 3) | (uint32_t)rand_half(&s, (i + 1) % 3) << 16;
  }
  uint32_t *out = malloc(sizeof(uint32_t) * N * (size_t)count);
  int rc = run(t, "ops_cvt", 4, count, va, vb, vc, out);
  for (int i = 0; !rc && i < N; i++) {
    int k = 0;
    uint32_t A_ = va[i], B_ = vb[i], C_ = vc[i];
#define A(name, tpl, n, ...)                                                                                            \
  {                                                                                                                    \
    uint32_t a = A_, b = B_, c = C_;                                                                                   \
    float fa = t_f32(a), fb = t_f32(b);                                                                                \
    uint16_t ha = (uint16_t)a, hb = (uint16_t)b, hc = (uint16_t)c;                                                     \
    uint16_t ha1 = (uint16_t)(a >> 16), hb1 = (uint16_t)(b >> 16), hc1 = (uint16_t)(c >> 16);                          \
    (void)a, (void)b, (void)c, (void)fa, (void)fb, (void)ha, (void)hb, (void)hc, (void)ha1, (void)hb1, (void)hc1;     \
    uint32_t want = (uint32_t)(__VA_ARGS__), got = out[(size_t)i * count + k];                                         \
    int ok = want == ANY_NAN32 ? isnan(t_f32(got)) : got == want;                                                      \
    CHECK(ok, "%s(0x%08x, 0x%08x, 0x%08x) = 0x%08x, want 0x%08x", #name, a, b, c, got, want);                          \
    k++;                                                                                                               \
  }
#include "kernels/ops_cvt.def"
#undef A
  }
  free(out);
  return rc;
}
