/* Conv2D 3x3 + bias + SiLU (NHWC activations, KRSC filters, implicit GEMM)
 * from libdlckernels-emu in the PTX emulator against an FP64 reference
 * (tolerance: kt.h).
 *
 *   test_conv_emu <fp16|bf16> <stride>      (pad 1)
 *
 * Shapes: every combination of H, W in {1, 7, 14, 33} and C, K in
 * {8, 24, 64, 136} (256 cases), with N alternating between 1 and 3; and 8
 * cases with C = 12, whose 4-channel chunks take the v4 kernels, and 4 with
 * C = 36, whose 10 full k-tiles run the v4 kernels' steady loop.  N P Q <=
 * 2048 with K <= 512 (most of these) takes the small-output shape bucket's
 * kernels (64x64 tiles, docs/plan.md), other K <= 64 the n1_64 bucket's
 * (128x64), the rest the default ones; 6 cases more leave the small bucket,
 * by K past 512 or by N P Q past 2048, for both the default and n1_64; and
 * 8 more past it whose k-tile counts surround the sm90a rings' stages.
 *
 * With DLC_EMU_ARCH=sm90a every case whose channels come in 16-byte chunks
 * (C a multiple of 8) must run an sm90a row's kernel (a name ending in
 * _sm90a, read from the last launch) unless it is in the small bucket, which
 * has none: K <= 64 the n1_64 bucket's own (`_b1_sm90a`, 128x64 tiles),
 * larger K the default instance's (128x128); the others run sm80 rows. */
#include "kt.h"

#include "dlc_internal.h" /* dlc__last_launch */

/* whether the last launch ran an sm90a-row kernel */
static int ran_sm90a(void) {
  const dlc__launch_rec *l = dlc__last_launch();
  size_t n = l->kernel ? strlen(l->kernel->name) : 0;
  return n > 6 && strcmp(l->kernel->name + n - 6, "_sm90a") == 0;
}

static double silu(double x) { return x / (1 + exp(-x)); }

static int run_case(dlc_dtype dt, int64_t N, int64_t H, int64_t W, int64_t C, int64_t K, int64_t s, uint64_t seed,
                    double *worst) {
  const int64_t pad = 1, P = (H + 2 * pad - 3) / s + 1, Q = (W + 2 * pad - 3) / s + 1;
  kt_buf X = {0}, Wt = {0}, bias = {0}, Y = {0};
  kt_alloc(&X, (size_t)(N * H * W * C), 0), kt_alloc(&Wt, (size_t)(K * 9 * C), 0), kt_alloc(&bias, (size_t)K, 0);
  kt_alloc(&Y, (size_t)(N * P * Q * K), 0);
  uint64_t st = seed;
  for (size_t i = 0; i < X.n; i++) X.host[i] = kt_from_f32(dt, (float)kt_uniform(&st));
  for (size_t i = 0; i < Wt.n; i++) Wt.host[i] = kt_from_f32(dt, (float)(0.5 * kt_uniform(&st)));
  for (size_t i = 0; i < bias.n; i++) bias.host[i] = kt_from_f32(dt, (float)kt_uniform(&st));
  for (size_t i = 0; i < Y.n; i++) Y.host[i] = 0x7E5B;
  kt_upload(&X), kt_upload(&Wt), kt_upload(&bias), kt_upload(&Y);
  dlc_status r = dlc_conv2d_bias_silu(dt, N, H, W, C, K, s, s, pad, pad, kt_ptr(X.dev), kt_ptr(Wt.dev),
                                      kt_ptr(bias.dev), kt_ptr(Y.dev), NULL);
  int bad = 0;
  const char *arch = getenv("DLC_EMU_ARCH");
  /* the buckets: small (N P Q <= 2048, K <= 512: no sm90a kernel, its plan
   * stops on the grid rule), then n1_64 (K <= 64, b1, 128x64 tiles) */
  int small = N * P * Q <= 2048 && K <= 512;
  int want90 = arch && strcmp(arch, "sm90a") == 0 && C % 8 == 0 && !small;
  const dlc__kernel *ran = r == DLC_SUCCESS ? dlc__last_launch()->kernel : NULL;
  int bucket_ok = !want90 || !ran || ((strstr(ran->name, "_b1_sm90a") != NULL) == (K <= 64) && ran->bn == (K <= 64 ? 64 : 128));
  if (r == DLC_SUCCESS && (ran_sm90a() != want90 || !bucket_ok)) {
    fprintf(stderr, "N=%lld H=%lld W=%lld C=%lld K=%lld s=%lld: ran %s (%dx%d tiles), not %s\n", (long long)N,
            (long long)H, (long long)W, (long long)C, (long long)K, (long long)s, ran->name, ran->bm, ran->bn,
            !want90 ? "an sm80 row's kernel" : K <= 64 ? "the n1_64 bucket's sm90a kernel" : "the default sm90a kernel");
    bad = 1;
  }
  if (r != DLC_SUCCESS) {
    fprintf(stderr, "N=%lld H=%lld W=%lld C=%lld K=%lld s=%lld: %s: %s\n", (long long)N, (long long)H, (long long)W,
            (long long)C, (long long)K, (long long)s, dlc_status_string(r), dlc_last_error_detail());
    bad = 1;
  } else {
    kt_download(&Y);
    size_t ny = Y.n;
    double *ref = malloc(sizeof(double) * ny), R = 0;
    /* the operands' values once, not at every product (exact: the same
     * products in the same order) */
    double *xv = malloc(sizeof(double) * X.n), *wv = malloc(sizeof(double) * Wt.n);
    if (!ref || !xv || !wv) {
      fprintf(stderr, "out of memory\n");
      exit(1);
    }
    for (size_t i = 0; i < X.n; i++) xv[i] = kt_to_f32(dt, X.host[i]);
    for (size_t i = 0; i < Wt.n; i++) wv[i] = kt_to_f32(dt, Wt.host[i]);
    for (int64_t n = 0; n < N; n++)
      for (int64_t p = 0; p < P; p++)
        for (int64_t q = 0; q < Q; q++)
          for (int64_t k = 0; k < K; k++) {
            double acc = kt_to_f32(dt, bias.host[k]);
            for (int64_t kh = 0; kh < 3; kh++)
              for (int64_t kw = 0; kw < 3; kw++) {
                int64_t h = s * p + kh - pad, w = s * q + kw - pad;
                if (h < 0 || h >= H || w < 0 || w >= W) continue;
                const double *x = &xv[((n * H + h) * W + w) * C], *wt = &wv[((k * 3 + kh) * 3 + kw) * C];
                for (int64_t c = 0; c < C; c++) acc += x[c] * wt[c];
              }
            ref[((n * P + p) * Q + q) * K + k] = silu(acc);
          }
    for (size_t i = 0; i < ny; i++) R = fmax(R, fabs(ref[i]));
    for (size_t i = 0; i < ny; i++) {
      double rr = kt_round(dt, ref[i]), v = kt_to_f32(dt, Y.host[i]);
      double err = fabs(v - rr), tol = fmax(kt_ulp(dt, rr), 1e-3 * (fabs(ref[i]) + R));
      if (!(err <= tol)) {
        if (bad++ < 3)
          fprintf(stderr, "N=%lld H=%lld W=%lld C=%lld K=%lld s=%lld: Y[%zu] = %g, expected %g\n", (long long)N,
                  (long long)H, (long long)W, (long long)C, (long long)K, (long long)s, i, v, rr);
      } else if (err / tol > *worst) {
        *worst = err / tol;
      }
    }
    free(ref);
    free(xv);
    free(wv);
  }
  kt_free(&X), kt_free(&Wt), kt_free(&bias), kt_free(&Y);
  return bad != 0;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "fp16") && strcmp(argv[1], "bf16")) || (atoi(argv[2]) != 1 && atoi(argv[2]) != 2)) {
    fprintf(stderr, "usage: test_conv_emu <fp16|bf16> <1|2>\n");
    return 2;
  }
  dlc_dtype dt = strcmp(argv[1], "fp16") == 0 ? DLC_F16 : DLC_BF16;
  int64_t s = atoi(argv[2]);
  static const int64_t ns[] = {1, 3}, hw[] = {1, 7, 14, 33}, ck[] = {8, 24, 64, 136};
  int fails = 0, cases = 0;
  double worst = 0;
  for (int i = 0; i < 256; i++) {
    int64_t H = hw[i / 64], W = hw[(i / 16) % 4], C = ck[(i / 4) % 4], K = ck[i % 4], N = ns[(i + i / 4 + i / 16) % 2];
    fails += run_case(dt, N, H, W, C, K, s, 1000 + (uint64_t)i, &worst);
    cases++;
  }
  /* C = 12: chunks of 4 channels (the v4 kernels, whose operands walk too) */
  for (int i = 0; i < 8; i++) {
    const int64_t H = hw[1 + i % 3], W = hw[1 + (i / 2) % 3], K = ck[i % 4], N = ns[i % 2];
    fails += run_case(dt, N, H, W, 12, K, s, 2000 + (uint64_t)i, &worst);
    cases++;
  }
  /* past the small bucket: K > 512, or N P Q > 2048 (N = 0 here: 2 at
   * stride 1, 2178 = 2 x 33 x 33; 8 at stride 2, 2312 = 8 x 17 x 17) */
  static const int64_t past[][5] = {{1, 7, 9, 8, 520}, {1, 5, 14, 24, 600}, {0, 33, 33, 8, 72},
                                    {0, 33, 33, 16, 40}, {1, 3, 5, 8, 1000}, {1, 7, 7, 12, 520}};
  for (int i = 0; i < 6; i++) {
    int64_t N = past[i][0] ? past[i][0] : s == 1 ? 2 : 8;
    fails += run_case(dt, N, past[i][1], past[i][2], past[i][3], past[i][4], s, 3000 + (uint64_t)i, &worst);
    cases++;
  }
  /* C = 36: the v4 kernels on their steady loop (9*36 = 324: 10 full k-tiles
   * of 32, then a remainder), in all three instances: the small bucket
   * (K = 24 and 136 on small outputs), then past it (N P Q 2178 or 2312)
   * n1_64 (K = 24) and the default (K = 136) */
  for (int i = 0; i < 4; i++) {
    const int64_t H = i < 2 ? hw[1 + i % 2] : 33, W = i < 2 ? hw[2 - i % 2] : 33, K = i % 2 ? 136 : 24,
                  N = i < 2 ? ns[i % 2] : s == 1 ? 2 : 8;
    fails += run_case(dt, N, H, W, 36, K, s, 4000 + (uint64_t)i, &worst);
    cases++;
  }
  /* the sm90a consumers' k-loop (k-tile 0 peeled, laps of S k-tiles
   * unrolled, the last (KT - 1) % S guarded) over 9 C / 64 k-tiles: the
   * default instance (K > 512 here: 128x128x64, S = 5) at KT 5, 6 and 20,
   * the n1_64 bucket (K <= 64, N P Q past 2048: 128x64x64, S = 6) at KT 2,
   * 5, 6, 7 and 20 (KT 2, 3 and 4 of the default are above: C = 8, 16, 24) */
  static const int64_t ring[][5] = {{1, 7, 9, 32, 520},   {1, 5, 6, 40, 600},   {1, 3, 5, 136, 520},
                                    {0, 33, 33, 8, 64},   {0, 33, 33, 32, 24},  {0, 33, 33, 40, 40},
                                    {0, 33, 33, 48, 16},  {0, 33, 33, 136, 8}};
  for (int i = 0; i < 8; i++) {
    int64_t N = ring[i][0] ? ring[i][0] : s == 1 ? 2 : 8;
    fails += run_case(dt, N, ring[i][1], ring[i][2], ring[i][3], ring[i][4], s, 5000 + (uint64_t)i, &worst);
    cases++;
  }
  printf("conv %s stride %lld: %d cases, %d failed; worst error %.3f of the tolerance\n", argv[1], (long long)s, cases,
         fails, worst);
  return fails ? 1 : 0;
}
