/* The row-skeleton ops of the default manifest (softmax, layernorm, RMSNorm)
 * from libdlckernels-emu, run in the PTX emulator on the PTX nvcc emits,
 * against FP64 references computed from the same rounded inputs (tolerance:
 * kt.h).
 *
 *   test_rows_emu <softmax|layernorm|rmsnorm> <fp16|bf16>
 *
 * Rows of N in {1, 7, 8, 37, 64, 257, 1000, 2051, 8200}: shorter than a
 * vector, one vector, tails after whole vectors, rows longer than one pass
 * of the CTA (8 warps x 32 lanes x 8 elements = 2048), and one longer than
 * the row cache (8192 elements: X re-read from global memory by each pass).  Leading dimensions packed,
 * padded by 8 (16-byte aligned rows: the vector loads and stores) and by an
 * odd amount (misaligned rows: the scalar path).  Every launch must pass the
 * emulator's memcheck; the padding of Y keeps its canary. */
#include "kt.h"

#define CANARY 0x7E5Bu /* a NaN payload no kernel writes */

enum { SOFTMAX, LAYERNORM, RMSNORM };

/* The reference row from the rounded inputs, in FP64. */
static void ref_row(int op, int64_t N, const double *x, const double *gamma, const double *beta, double *y) {
  if (op == SOFTMAX) {
    double mx = -INFINITY, sum = 0;
    for (int64_t n = 0; n < N; n++) mx = fmax(mx, x[n]);
    for (int64_t n = 0; n < N; n++) sum += exp(x[n] - mx);
    for (int64_t n = 0; n < N; n++) y[n] = exp(x[n] - mx) / sum;
  } else if (op == LAYERNORM) {
    double mean = 0, var = 0;
    for (int64_t n = 0; n < N; n++) mean += x[n];
    mean /= (double)N;
    for (int64_t n = 0; n < N; n++) var += (x[n] - mean) * (x[n] - mean);
    var /= (double)N;
    for (int64_t n = 0; n < N; n++) y[n] = (x[n] - mean) / sqrt(var + 1e-5) * gamma[n] + beta[n];
  } else {
    double ms = 0;
    for (int64_t n = 0; n < N; n++) ms += x[n] * x[n];
    ms /= (double)N;
    for (int64_t n = 0; n < N; n++) y[n] = x[n] / sqrt(ms + 1e-6) * gamma[n];
  }
}

static int run_case(int op, dlc_dtype dt, int64_t M, int64_t N, int pad, uint64_t seed, double *worst) {
  int64_t ldx = N + pad, ldy = N + pad;
  kt_buf X = {0}, G = {0}, Bt = {0}, Y = {0};
  int fail = 0;
  if (kt_alloc(&X, (size_t)(M * ldx), 0) || kt_alloc(&G, (size_t)N, 0) || kt_alloc(&Bt, (size_t)N, 0) ||
      kt_alloc(&Y, (size_t)(M * ldy), 0)) {
    fprintf(stderr, "allocation failed\n");
    return 1;
  }
  uint64_t s = seed;
  /* a row offset per row, so that the max and the mean are not ~0 */
  for (int64_t m = 0; m < M; m++) {
    double off = 2 * kt_uniform(&s);
    for (int64_t n = 0; n < ldx; n++) X.host[m * ldx + n] = kt_from_f32(dt, (float)(off + 3 * kt_uniform(&s)));
  }
  for (size_t i = 0; i < G.n; i++) G.host[i] = kt_from_f32(dt, (float)(1 + 0.5 * kt_uniform(&s)));
  for (size_t i = 0; i < Bt.n; i++) Bt.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < Y.n; i++) Y.host[i] = CANARY;
  kt_upload(&X), kt_upload(&G), kt_upload(&Bt), kt_upload(&Y);
  dlc_status st = op == SOFTMAX ? dlc_softmax(dt, M, N, kt_ptr(X.dev), ldx, kt_ptr(Y.dev), ldy, NULL)
                  : op == LAYERNORM
                      ? dlc_layernorm(dt, M, N, kt_ptr(X.dev), ldx, kt_ptr(G.dev), kt_ptr(Bt.dev), kt_ptr(Y.dev), ldy, NULL)
                      : dlc_rmsnorm(dt, M, N, kt_ptr(X.dev), ldx, kt_ptr(G.dev), kt_ptr(Y.dev), ldy, NULL);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "M=%lld N=%lld pad=%d: %s: %s\n", (long long)M, (long long)N, pad, dlc_status_string(st),
            dlc_last_error_detail());
    fail = 1;
    goto out;
  }
  kt_download(&Y);
  double *x = malloc(sizeof(double) * (size_t)N * 4), *g = x + N, *b = g + N, *ref = malloc(sizeof(double) * (size_t)(M * N));
  for (int64_t n = 0; n < N; n++) g[n] = kt_to_f32(dt, G.host[n]), b[n] = kt_to_f32(dt, Bt.host[n]);
  double R = 0;
  for (int64_t m = 0; m < M; m++) {
    for (int64_t n = 0; n < N; n++) x[n] = kt_to_f32(dt, X.host[m * ldx + n]);
    ref_row(op, N, x, g, b, ref + m * N);
    for (int64_t n = 0; n < N; n++) R = fmax(R, fabs(ref[m * N + n]));
  }
  int bad = 0;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < ldy; n++) {
      uint16_t v16 = Y.host[m * ldy + n];
      if (n >= N) {
        if (v16 != CANARY && bad++ < 5)
          fprintf(stderr, "M=%lld N=%lld: Y[%lld][%lld] in the padding was written\n", (long long)M, (long long)N,
                  (long long)m, (long long)n);
        continue;
      }
      double r = ref[m * N + n], rr = kt_round(dt, r), v = kt_to_f32(dt, v16);
      double err = fabs(v - rr), tol = fmax(kt_ulp(dt, rr), 1e-3 * (fabs(r) + R));
      if (!(err <= tol)) {
        if (bad++ < 5)
          fprintf(stderr, "M=%lld N=%lld pad=%d: Y[%lld][%lld] = %g, expected %g (tol %g)\n", (long long)M, (long long)N,
                  pad, (long long)m, (long long)n, v, rr, tol);
      } else if (err / tol > *worst) {
        *worst = err / tol;
      }
    }
  free(x);
  free(ref);
  fail = bad != 0;
out:
  kt_free(&X), kt_free(&G), kt_free(&Bt), kt_free(&Y);
  return fail;
}

int main(int argc, char **argv) {
  static const char *const ops[] = {"softmax", "layernorm", "rmsnorm"};
  int op = -1;
  for (int i = 0; argc == 3 && i < 3; i++)
    if (strcmp(argv[1], ops[i]) == 0) op = i;
  if (op < 0 || (strcmp(argv[2], "fp16") && strcmp(argv[2], "bf16"))) {
    fprintf(stderr, "usage: test_rows_emu <softmax|layernorm|rmsnorm> <fp16|bf16>\n");
    return 2;
  }
  dlc_dtype dt = strcmp(argv[2], "fp16") == 0 ? DLC_F16 : DLC_BF16;
  static const int64_t ns[] = {1, 7, 8, 37, 64, 257, 1000, 2051, 8200};
  static const int64_t ms[] = {3, 5, 2, 4, 3, 2, 2, 2, 2};
  static const int pads[] = {0, 8, 3};
  int fails = 0, cases = 0;
  double worst = 0;
  for (int i = 0; i < 9; i++)
    for (int p = 0; p < 3; p++) {
      fails += run_case(op, dt, ms[i], ns[i], pads[p], 0x9E3779B97F4A7C15ull ^ (uint64_t)(i * 3 + p + 1), &worst);
      cases++;
    }
  printf("%s %s: %d cases, %d failed; worst error %.3f of the tolerance\n", argv[1], argv[2], cases, fails, worst);
  return fails ? 1 : 0;
}
