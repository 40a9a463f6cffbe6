/* GEMM + bias + ReLU (or GELU) from libdlckernels-emu, run in the PTX
 * emulator on the PTX nvcc emits, against an FP64 reference (tolerance:
 * kt.h).
 *
 *   test_gemm_emu <nn|nt|gelu> <fp16|bf16>
 *
 * nn: dlc_gemm_bias_relu with B stored [K,N]; nt: dlc_gemm_bias_relu_nt with
 * B stored [N,K]; gelu: dlc_gemm_bias_gelu, B stored [K,N], whose epilogue
 * is GELU's tanh form (cuBLASLt's GELU_BIAS), here 0.5 x (1 + tanh(sqrt(2 /
 * pi) (x + 0.044715 x^3))) in FP64.  Shapes: every pair of M, N in {1, 7, 64, 129, 255, 1000}
 * with K cycling through the same values (each value in every role), and
 * leading dimensions packed, padded by 8 and padded by an odd amount (which
 * makes dispatch pick a narrower chunk width); 1157 x 300 x 40, whose M
 * tiles end in a partial group of the CTA raster order; and shapes with
 * tails inside each shape bucket (M <= 16, 17..128, N <= 64); and k-tile counts around the sm90a
 * rings' stage counts (S - 1, S, S + 1, many).  Every launch must pass the
 * emulator's memcheck; the padding of C must keep its canary.
 *
 * With DLC_EMU_ARCH=sm90a a call whose operands the tensor maps describe
 * (rows a multiple of 16 bytes apart) must run its instance's sm90a kernel
 * (read from the last launch): the n1_64 bucket's (M > 128, N <= 64:
 * 128x64 tiles) or the default instance's; a call in an M bucket (M <= 128,
 * whose instances have none) or with unaligned rows an sm80 row's. */
#include <stdbool.h>

#include "kt.h"
#include "dlc_internal.h" /* dlc__last_launch */

static const int64_t vals[] = {1, 7, 64, 129, 255, 1000};
#define CANARY 0x7E5Bu /* a NaN payload no kernel writes */

static bool ends_with(const char *s, const char *t) {
  size_t n = strlen(s), m = strlen(t);
  return n >= m && strcmp(s + n - m, t) == 0;
}

/* the row the call must have run (docs/plan.md, Shape buckets; K < 4096
 * here, so never the skinny buckets): 2 the n1_64 bucket's sm90a kernel,
 * 1 the default instance's, 0 an sm80 row */
static int want_row(int64_t M, int64_t N, int64_t lda, int64_t ldb) {
  const char *arch = getenv("DLC_EMU_ARCH");
  if (!arch || strcmp(arch, "sm90a") != 0 || lda % 8 || ldb % 8 || M <= 128) return 0;
  return N <= 64 ? 2 : 1;
}
static int bucket90_runs; /* calls that ran the n1_64 bucket's sm90a kernel */

/* GELU, tanh form; 0.7978845608028654 = sqrt(2 / pi) */
static double gelu_tanh(double x) { return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

static int run_case(int nt, int gelu, dlc_dtype dt, int64_t M, int64_t N, int64_t K, int pad, uint64_t seed,
                    double *worst) {
  int64_t lda = K + pad, ldb = (nt ? K : N) + pad, ldc = N + pad;
  int64_t brows = nt ? N : K;
  kt_buf A = {0}, B = {0}, bias = {0}, C = {0};
  int fail = 0;
  if (kt_alloc(&A, (size_t)(M * lda), 0) || kt_alloc(&B, (size_t)(brows * ldb), 0) || kt_alloc(&bias, (size_t)N, 0) ||
      kt_alloc(&C, (size_t)(M * ldc), 0)) {
    fprintf(stderr, "allocation failed\n");
    return 1;
  }
  uint64_t s = seed;
  for (size_t i = 0; i < A.n; i++) A.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < B.n; i++) B.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < bias.n; i++) bias.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < C.n; i++) C.host[i] = CANARY;
  kt_upload(&A), kt_upload(&B), kt_upload(&bias), kt_upload(&C);
  dlc_status st = gelu ? dlc_gemm_bias_gelu(dt, M, N, K, kt_ptr(A.dev), lda, kt_ptr(B.dev), ldb, kt_ptr(bias.dev),
                                            kt_ptr(C.dev), ldc, NULL)
                  : nt ? dlc_gemm_bias_relu_nt(dt, M, N, K, kt_ptr(A.dev), lda, kt_ptr(B.dev), ldb, kt_ptr(bias.dev),
                                             kt_ptr(C.dev), ldc, NULL)
                     : dlc_gemm_bias_relu(dt, M, N, K, kt_ptr(A.dev), lda, kt_ptr(B.dev), ldb, kt_ptr(bias.dev),
                                          kt_ptr(C.dev), ldc, NULL);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "M=%lld N=%lld K=%lld pad=%d: %s: %s\n", (long long)M, (long long)N, (long long)K, pad,
            dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
    goto out;
  }
  const char *ran = dlc__last_launch()->kernel->name;
  int want = want_row(M, N, lda, ldb),
      got = ends_with(ran, "16_sm90a") ? 1 : ends_with(ran, "_sm90a") && strstr(ran, "16_b") ? 2 : 0;
  if (got != want) {
    static const char *const what[] = {"an sm80 row", "the default instance's sm90a kernel",
                                       "the n1_64 bucket's sm90a kernel"};
    fprintf(stderr, "M=%lld N=%lld K=%lld pad=%d: ran %s, not %s\n", (long long)M, (long long)N, (long long)K, pad, ran,
            what[want]);
    fail = 1;
  }
  bucket90_runs += got == 2;
  kt_download(&C);
  double *ref = malloc(sizeof(double) * (size_t)(M * N));
  double R = 0;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++)
        acc += (double)kt_to_f32(dt, A.host[m * lda + k]) *
               (double)kt_to_f32(dt, nt ? B.host[n * ldb + k] : B.host[k * ldb + n]);
      acc += kt_to_f32(dt, bias.host[n]);
      ref[m * N + n] = gelu ? gelu_tanh(acc) : acc > 0 ? acc : 0;
      if (fabs(ref[m * N + n]) > R) R = fabs(ref[m * N + n]);
    }
  int bad = 0;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < ldc; n++) {
      uint16_t y = C.host[m * ldc + n];
      if (n >= N) {
        if (y != CANARY && bad++ < 5)
          fprintf(stderr, "M=%lld N=%lld K=%lld: C[%lld][%lld] in the padding was written\n", (long long)M, (long long)N,
                  (long long)K, (long long)m, (long long)n);
        continue;
      }
      double r = ref[m * N + n], rr = kt_round(dt, r), v = kt_to_f32(dt, y);
      double err = fabs(v - rr), tol = fmax(kt_ulp(dt, rr), 1e-3 * (fabs(r) + R));
      if (!(err <= tol)) {
        if (bad++ < 5)
          fprintf(stderr, "M=%lld N=%lld K=%lld pad=%d: C[%lld][%lld] = %g, expected %g (tol %g)\n", (long long)M,
                  (long long)N, (long long)K, pad, (long long)m, (long long)n, v, rr, tol);
      } else if (err / tol > *worst) {
        *worst = err / tol;
      }
    }
  free(ref);
  fail |= bad != 0;
out:
  kt_free(&A), kt_free(&B), kt_free(&bias), kt_free(&C);
  return fail;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "nn") && strcmp(argv[1], "nt") && strcmp(argv[1], "gelu")) ||
      (strcmp(argv[2], "fp16") && strcmp(argv[2], "bf16"))) {
    fprintf(stderr, "usage: test_gemm_emu <nn|nt|gelu> <fp16|bf16>\n");
    return 2;
  }
  int nt = strcmp(argv[1], "nt") == 0, gelu = strcmp(argv[1], "gelu") == 0;
  dlc_dtype dt = strcmp(argv[2], "fp16") == 0 ? DLC_F16 : DLC_BF16;
  int fails = 0, cases = 0;
  double worst = 0;
  /* pad 4 leaves the leading dims 4- but not 8-aligned for even K and N:
   * the v4 kernels, which stream their full k-tiles too */
  static const int pads[] = {0, 8, 3, 4};
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) {
      int64_t M = vals[i], N = vals[j], K = vals[(i + 2 * j) % 6];
      int pad = pads[(i + j) % 4];
      fails += run_case(nt, gelu, dt, M, N, K, pad, 0x9E3779B97F4A7C15ull ^ (uint64_t)(i * 6 + j + 1), &worst);
      cases++;
    }
  /* the CTA raster (tile_coord): 10 M tiles of 128 (or 19 of 64) leave a
   * partial last group for every raster group the search tries (1, 4, 8,
   * 16), over several N tiles */
  fails += run_case(nt, gelu, dt, 1157, 300, 40, 0, 0x5851F42D4C957F2Dull, &worst);
  cases++;
  /* each shape bucket of the default manifest (docs/plan.md: M 1-16 on
   * 16x16 tiles, 17-128 on 64x64, then N 1-64 on 128x64) on its own
   * shapes, with M, N and K tails */
  static const int64_t bucket_shapes[][3] = {{13, 50, 70},  {16, 33, 200}, {17, 129, 40},
                                             {100, 77, 130}, {128, 300, 33}, {300, 61, 75}};
  for (int i = 0; i < 6; i++) {
    fails += run_case(nt, gelu, dt, bucket_shapes[i][0], bucket_shapes[i][1], bucket_shapes[i][2], pads[i % 4],
                      0x2545F4914F6CDD1Dull ^ (uint64_t)i, &worst);
    cases++;
  }
  /* n1_64 with rows the tensor maps describe (packed, or padded by 8):
   * on sm90a the bucket's own kernel (128x64x64 tiles), with M, N and K
   * tails, K under one k-tile, N = 8 */
  static const int64_t n64_shapes[][4] = {{300, 40, 72, 0}, {129, 64, 200, 8}, {1000, 8, 136, 0}, {257, 24, 40, 0}};
  for (int i = 0; i < 4; i++) {
    fails += run_case(nt, gelu, dt, n64_shapes[i][0], n64_shapes[i][1], n64_shapes[i][2], (int)n64_shapes[i][3],
                      0x9FB21C651E98DF25ull ^ (uint64_t)i, &worst);
    cases++;
  }
  /* the sm90a consumers' k-loop (k-tile 0 peeled, laps of S k-tiles
   * unrolled on compile-time slots, the last (KT - 1) % S guarded): k-tile
   * counts of S - 1, S and S + 1 and a large one (several laps and a rest)
   * for the default instance's ring (128x128x64, S = 5: KT 4, 5, 6, 24) and
   * the n1_64 bucket's (128x64x64, S = 6: KT 5, 6, 7, 16), with K tails;
   * 1 and 2 k-tiles are among the shapes above (K = 40, 72) */
  static const int64_t ring_shapes[][4] = {{300, 100, 256, 0}, {200, 130, 300, 0}, {129, 192, 384, 8},
                                           {256, 136, 1500, 0}, {300, 40, 320, 0},  {257, 64, 384, 8},
                                           {129, 24, 420, 0},   {200, 64, 1000, 0}};
  for (int i = 0; i < 8; i++) {
    fails += run_case(nt, gelu, dt, ring_shapes[i][0], ring_shapes[i][1], ring_shapes[i][2], (int)ring_shapes[i][3],
                      0xD1B54A32D192ED03ull ^ (uint64_t)i, &worst);
    cases++;
  }
  printf("%s %s: %d cases, %d failed, %d on the n1_64 bucket's sm90a kernel; worst error %.3f of the tolerance\n",
         argv[1], argv[2], cases, fails, bucket90_runs, worst);
  return fails ? 1 : 0;
}
