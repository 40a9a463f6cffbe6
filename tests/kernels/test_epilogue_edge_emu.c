/* A tile on M's edge stores through the same 16-byte epilogue as a full
 * tile (store_full: rows past M are skipped, the columns still need the
 * tile inside N and aligned tensors).  Decode shapes (M <= 16) never fill
 * their 16-row tile, so before this they always took the bounds-checked
 * 4-output path.
 *
 * For GEMM + bias + ReLU in each M bucket (m1_16's 16x16 tiles, m17_128's
 * 64x64, n1_64's 128x64), fp16 and bf16, the same call is made twice in the
 * PTX emulator: with M a whole number of tiles and with the last tile cut
 * short (N, K and the leading dims the same, aligned).  Both calls must run
 * the same kernel, match the FP64 reference, keep C's padding canary, and
 * the cut call must execute no more thread instructions (the emulator's
 * sum of active lanes over issued instructions) than the whole one: it
 * does the same work on fewer rows.  With the bounds-checked path on the
 * edge the cut calls executed more: M = 5 / 16 67,060 / 62,724, M = 40 / 64
 * 111,809 / 83,201, M = 200 / 256 306,690 / 249,090 (fp16).  Warp
 * instructions do not order the same way: a warp issues its loop once
 * whether 10 or 32 of its lanes store.  The counts are printed. */
#include "kt.h"
#include "dlc_internal.h" /* dlc__last_launch */

#define CANARY 0x7E5Bu

typedef struct {
  unsigned long long warps, threads;
  const char *kernel;
} run_info;

static int run(dlc_dtype dt, int64_t M, int64_t N, int64_t K, run_info *ri) {
  int64_t lda = K, ldb = N + 8, ldc = N + 8;
  kt_buf A = {0}, B = {0}, bias = {0}, C = {0};
  if (kt_alloc(&A, (size_t)(M * lda), 0) || kt_alloc(&B, (size_t)(K * ldb), 0) || kt_alloc(&bias, (size_t)N, 0) ||
      kt_alloc(&C, (size_t)(M * ldc), 0)) {
    fprintf(stderr, "allocation failed\n");
    return 1;
  }
  uint64_t s = 0x5EEDull + (uint64_t)M;
  for (size_t i = 0; i < A.n; i++) A.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < B.n; i++) B.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < bias.n; i++) bias.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < C.n; i++) C.host[i] = CANARY;
  kt_upload(&A), kt_upload(&B), kt_upload(&bias), kt_upload(&C);
  int fail = 0;
  dlc_status st = dlc_gemm_bias_relu(dt, M, N, K, kt_ptr(A.dev), lda, kt_ptr(B.dev), ldb, kt_ptr(bias.dev),
                                     kt_ptr(C.dev), ldc, NULL);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "M=%lld: %s: %s\n", (long long)M, dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
    goto out;
  }
  dlcemu_launch_stats stats;
  dlcemu_last_launch_stats(&stats);
  ri->warps = stats.warp_instructions;
  ri->threads = stats.thread_instructions;
  ri->kernel = dlc__last_launch()->kernel->name;
  kt_download(&C);
  double R = 0, *ref = malloc(sizeof(double) * (size_t)(M * N));
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double acc = kt_dot(dt, &A.host[m * lda], 1, &B.host[n], ldb, K) + kt_to_f32(dt, bias.host[n]);
      ref[m * N + n] = acc > 0 ? acc : 0;
      R = fmax(R, fabs(ref[m * N + n]));
    }
  int bad = 0;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < ldc; n++) {
      uint16_t y = C.host[m * ldc + n];
      if (n >= N) {
        bad += y != CANARY;
        continue;
      }
      double r = ref[m * N + n], rr = kt_round(dt, r), err = fabs(kt_to_f32(dt, y) - rr);
      if (!(err <= fmax(kt_ulp(dt, rr), 1e-3 * (fabs(r) + R))) && bad++ < 5)
        fprintf(stderr, "M=%lld: C[%lld][%lld] = %g, expected %g\n", (long long)M, (long long)m, (long long)n,
                kt_to_f32(dt, y), rr);
    }
  free(ref);
  if (bad) fprintf(stderr, "M=%lld N=%lld K=%lld: %d wrong or overwritten elements\n", (long long)M, (long long)N, (long long)K, bad);
  fail |= bad != 0;
out:
  kt_free(&A), kt_free(&B), kt_free(&bias), kt_free(&C);
  return fail;
}

int main(void) {
  /* {whole M, cut M, N, K}: one M bucket each (docs/plan.md, Shape buckets) */
  static const int64_t cases[][4] = {{16, 5, 64, 64}, {64, 40, 64, 64}, {256, 200, 64, 64}};
  int fails = 0;
  for (int d = 0; d < 2; d++) {
    dlc_dtype dt = d ? DLC_BF16 : DLC_F16;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      run_info whole = {0, 0, ""}, cut = {0, 0, ""};
      int64_t N = cases[c][2], K = cases[c][3];
      int f = run(dt, cases[c][0], N, K, &whole) | run(dt, cases[c][1], N, K, &cut);
      printf("%s N=%lld K=%lld: M=%lld %llu thread / %llu warp instructions (%s); M=%lld %llu / %llu (%s)\n",
             d ? "bf16" : "fp16", (long long)N, (long long)K, (long long)cases[c][0], whole.threads, whole.warps,
             whole.kernel, (long long)cases[c][1], cut.threads, cut.warps, cut.kernel);
      if (!f && strcmp(whole.kernel, cut.kernel) != 0) {
        fprintf(stderr, "  the two calls ran different kernels: the comparison needs one\n");
        f = 1;
      }
      if (!f && cut.threads > whole.threads) {
        fprintf(stderr, "  the cut tile executed %llu more thread instructions than the whole one\n",
                cut.threads - whole.threads);
        f = 1;
      }
      fails += f;
    }
  }
  printf("%s\n", fails ? "FAIL" : "PASS");
  return fails != 0;
}
