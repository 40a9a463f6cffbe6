/* The fp32 GEMMs of tests/kernels/extra, which multiply on the tensor cores
 * in TF32 (mma m16n8k8, docs/manifest.md), against an FP64 reference
 * written here rather than the generator's playback, on shapes with tails
 * in every dimension and padded leading dimensions, in each shape bucket.
 *
 * The reference rounds each operand as cvt.rna.tf32.f32 does (kt_tf32).
 * Products of two tf32 values are exact in fp32 (11-bit significands), so
 * what separates the kernel from the reference is fp32's rounding of the
 * K products and the bias, summed in any order.  The tolerance is that
 * bound rather than kt.h's 1e-3:
 *     |y - r| <= gamma_(K+1) * (sum_k |a_k b_k| + |bias|),
 *     gamma_n = n u / (1 - n u),  u = 2^-23
 * (the classic bound of a floating-point sum of n+1 terms; u is fp32's
 * unit roundoff for truncation, which also covers round-to-nearest and a
 * tensor core that truncates its sums).  ReLU is 1-Lipschitz and adds
 * nothing.  Operands truncated instead of rounded, or not rounded at all,
 * would miss it: their error grows with 2^-11 per product. */
#include "kt.h"

#include "dlc/dlc_ops.h"

typedef struct fbuf {
  dlcemu_deviceptr dev;
  float *host;
  size_t n;
} fbuf;

static int falloc(fbuf *b, size_t n, uint64_t *s) {
  b->n = n;
  b->host = malloc((n ? n : 1) * sizeof(float));
  if (!b->host || dlcemu_mem_alloc(&b->dev, n * sizeof(float) + 16)) return -1;
  for (size_t i = 0; i < n; i++) b->host[i] = s ? (float)kt_uniform(s) : 0.f;
  return dlcemu_memcpy_htod(b->dev, b->host, n * sizeof(float));
}
static void ffree(fbuf *b) {
  if (b->dev) dlcemu_mem_free(b->dev);
  free(b->host);
}

/* nt = 0: C = relu(A B + bias), B [K,N]; nt = 1: B stored [N,K]. */
static int gemm(int nt, int64_t M, int64_t N, int64_t K, uint64_t seed) {
  int64_t lda = K + 3, ldb = nt ? K + 5 : N + 7, ldc = N + 1;
  uint64_t s = seed;
  fbuf A = {0}, B = {0}, bias = {0}, C = {0};
  if (falloc(&A, (size_t)(M * lda), &s) || falloc(&B, (size_t)((nt ? N : K) * ldb), &s) ||
      falloc(&bias, (size_t)N, &s) || falloc(&C, (size_t)(M * ldc), NULL)) {
    fprintf(stderr, "out of emulator memory\n");
    return 1;
  }
  void *a = kt_ptr(A.dev), *b = kt_ptr(B.dev), *bi = kt_ptr(bias.dev), *c = kt_ptr(C.dev);
  dlc_status st = nt ? dlc_gemm_bias_relu_nt_f32(DLC_F32, M, N, K, a, lda, b, ldb, bi, c, ldc, NULL)
                     : dlc_gemm_bias_relu_f32(DLC_F32, M, N, K, a, lda, b, ldb, bi, c, ldc, NULL);
  const char *what = nt ? "gemm_bias_relu_nt_f32" : "gemm_bias_relu_f32";
  int bad = 0;
  double worst = 0;
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "%s: %s: %s\n", what, dlc_status_string(st), dlc_last_error_detail());
    bad = 1;
  } else if (dlcemu_memcpy_dtoh(C.host, C.dev, C.n * sizeof(float))) {
    bad = 1;
  } else {
    const double u = ldexp(1.0, -23), gamma = (double)(K + 1) * u / (1 - (double)(K + 1) * u);
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double r = bias.host[n], mag = fabs(bias.host[n]);
        for (int64_t k = 0; k < K; k++) {
          double p = kt_tf32(A.host[m * lda + k]) * kt_tf32(nt ? B.host[n * ldb + k] : B.host[k * ldb + n]);
          r += p, mag += fabs(p);
        }
        r = r > 0 ? r : 0;
        double y = C.host[m * ldc + n], err = fabs(y - r), tol = gamma * mag;
        if (!(err <= tol) && bad++ < 5)
          fprintf(stderr, "%s M=%lld N=%lld K=%lld: C[%lld][%lld] = %.9g, expected %.9g (tolerance %.3g)\n", what,
                  (long long)M, (long long)N, (long long)K, (long long)m, (long long)n, y, r, tol);
        if (tol > 0 && err / tol > worst) worst = err / tol;
      }
    /* nothing written past a row's N columns (ldc pads one) */
    for (int64_t m = 0; m < M; m++)
      if (C.host[m * ldc + N] != 0.f && bad++ < 5) fprintf(stderr, "%s: C's padding written in row %lld\n", what, (long long)m);
  }
  printf("%s M=%lld N=%lld K=%lld: worst %.3f of the fp32 summation bound%s\n", what, (long long)M, (long long)N,
         (long long)K, worst, bad ? " FAILED" : "");
  ffree(&A), ffree(&B), ffree(&bias), ffree(&C);
  return bad != 0;
}

int main(void) {
  /* one shape per bucket of the plan (M up to 16, up to 128, above; N up
   * to 64 above M 128), tails in M, N and K (K odd: a partial 4-element
   * chunk) */
  static const int64_t shapes[][3] = {{9, 40, 37}, {67, 129, 83}, {133, 70, 45}, {1, 1, 1}, {200, 61, 45}};
  int fails = 0;
  for (int i = 0; i < 5; i++)
    for (int nt = 0; nt < 2; nt++) fails += gemm(nt, shapes[i][0], shapes[i][1], shapes[i][2], 61 + (uint64_t)(2 * i + nt));
  return fails ? 1 : 0;
}
