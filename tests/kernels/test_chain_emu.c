/* A multi-region op (tests/kernels/extra/mlp.json): two contraction regions
 * compiled as two kernels that one entry point launches in order, the value
 * between them (the hidden layer H[M,N], stored as T) in the caller's
 * workspace, run in the PTX emulator against an FP64 reference that rounds
 * H to T as the graph does (tolerance: kt.h):
 *   Y = round_T(relu(A B + b1)) D
 * on shapes with tails and padded or odd leading dims, fp16 and bf16; and
 * the workspace convention: dlc_mlp_workspace_size() (256-byte aligned
 * pieces), dlc_mlp() without a workspace, too small or misaligned
 * workspaces (each refused before anything runs, the output untouched). */
#include "kt.h"

#define CANARY 0x7E5Bu

static int run_case(dlc_dtype dt, int64_t M, int64_t N, int64_t K, int64_t P, int pad, uint64_t seed) {
  int64_t lda = K + pad, ldb = N + pad, ldd = P + pad, ldy = P + pad;
  kt_buf A = {0}, B = {0}, b1 = {0}, D = {0}, Y = {0};
  kt_alloc(&A, (size_t)(M * lda), 0), kt_alloc(&B, (size_t)(K * ldb), 0), kt_alloc(&b1, (size_t)N, 0);
  kt_alloc(&D, (size_t)(N * ldd), 0), kt_alloc(&Y, (size_t)(M * ldy), 0);
  uint64_t s = seed;
  for (size_t i = 0; i < A.n; i++) A.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < B.n; i++) B.host[i] = kt_from_f32(dt, (float)(0.5 * kt_uniform(&s)));
  for (size_t i = 0; i < b1.n; i++) b1.host[i] = kt_from_f32(dt, (float)(0.5 * kt_uniform(&s)));
  for (size_t i = 0; i < D.n; i++) D.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < Y.n; i++) Y.host[i] = CANARY;
  kt_upload(&A), kt_upload(&B), kt_upload(&b1), kt_upload(&D), kt_upload(&Y);
  int fail = 0;
  size_t ws = dlc_mlp_workspace_size(dt, M, N, K, P);
  size_t want = ((size_t)(M * N) * 2 + 255) / 256 * 256;
  if (ws != want) {
    fprintf(stderr, "M=%lld N=%lld: workspace_size %zu, expected %zu\n", (long long)M, (long long)N, ws, want);
    fail = 1;
  }
  dlcemu_deviceptr W = 0;
  dlcemu_mem_alloc(&W, ws + 512);
  void *wp = kt_ptr(W); /* dlcemu allocations are 256-byte aligned */
  /* refused calls first: nothing may run */
  dlc_status st = dlc_mlp(dt, M, N, K, P, kt_ptr(A.dev), lda, kt_ptr(B.dev), ldb, kt_ptr(b1.dev), kt_ptr(D.dev), ldd,
                          kt_ptr(Y.dev), ldy, NULL);
  if (st != DLC_ERROR_INVALID_VALUE || !strstr(dlc_last_error_detail(), "dlc_mlp_workspace_size")) {
    fprintf(stderr, "dlc_mlp without a workspace: %s (%s)\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  }
  st = dlc_mlp_ws(dt, M, N, K, P, kt_ptr(A.dev), lda, kt_ptr(B.dev), ldb, kt_ptr(b1.dev), kt_ptr(D.dev), ldd,
                  kt_ptr(Y.dev), ldy, wp, ws - 1, NULL);
  if (st != DLC_ERROR_INVALID_VALUE || !strstr(dlc_last_error_detail(), "workspace_bytes")) {
    fprintf(stderr, "a workspace one byte short: %s (%s)\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  }
  st = dlc_mlp_ws(dt, M, N, K, P, kt_ptr(A.dev), lda, kt_ptr(B.dev), ldb, kt_ptr(b1.dev), kt_ptr(D.dev), ldd,
                  kt_ptr(Y.dev), ldy, (char *)wp + 16, ws, NULL);
  if (st != DLC_ERROR_MISALIGNED) {
    fprintf(stderr, "a workspace 16 bytes off: %s (%s)\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  }
  kt_download(&Y);
  for (size_t i = 0; i < Y.n; i++)
    if (Y.host[i] != CANARY) {
      fprintf(stderr, "a refused call wrote Y\n");
      fail = 1;
      break;
    }
  st = dlc_mlp_ws(dt, M, N, K, P, kt_ptr(A.dev), lda, kt_ptr(B.dev), ldb, kt_ptr(b1.dev), kt_ptr(D.dev), ldd,
                  kt_ptr(Y.dev), ldy, wp, ws, NULL);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "M=%lld N=%lld K=%lld P=%lld: %s: %s\n", (long long)M, (long long)N, (long long)K, (long long)P,
            dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  } else {
    kt_download(&Y);
    double *H = malloc(sizeof(double) * (size_t)(M * N + 1)), *ref = malloc(sizeof(double) * (size_t)(M * P + 1));
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double acc = kt_dot(dt, A.host + m * lda, 1, B.host + n, ldb, K);
        acc += kt_to_f32(dt, b1.host[n]);
        H[m * N + n] = kt_round(dt, acc > 0 ? acc : 0);
      }
    double R = 0;
    for (int64_t m = 0; m < M; m++)
      for (int64_t q = 0; q < P; q++) {
        double acc = 0;
        for (int64_t n = 0; n < N; n++) acc += H[m * N + n] * kt_to_f32(dt, D.host[n * ldd + q]);
        ref[m * P + q] = acc;
        R = fmax(R, fabs(acc));
      }
    int bad = 0;
    for (int64_t m = 0; m < M; m++)
      for (int64_t q = 0; q < ldy; q++) {
        uint16_t v16 = Y.host[m * ldy + q];
        if (q >= P) {
          if (v16 != CANARY && bad++ < 5) fprintf(stderr, "Y[%lld][%lld] in the padding was written\n", (long long)m, (long long)q);
          continue;
        }
        /* an element of H may round to the neighbouring T value from the
         * kernel's fp32 sum: the 1e-3 scaled bound covers it */
        double r = ref[m * P + q], rr = kt_round(dt, r), v = kt_to_f32(dt, v16);
        double err = fabs(v - rr), tol = fmax(kt_ulp(dt, rr), 1e-3 * (fabs(r) + R));
        if (!(err <= tol) && bad++ < 5)
          fprintf(stderr, "M=%lld N=%lld K=%lld P=%lld: Y[%lld][%lld] = %g, expected %g (tol %g)\n", (long long)M, (long long)N,
                  (long long)K, (long long)P, (long long)m, (long long)q, v, rr, tol);
      }
    fail |= bad != 0;
    free(H), free(ref);
  }
  printf("mlp %s M=%lld N=%lld K=%lld P=%lld pad=%d workspace %zu bytes%s\n", dt == DLC_F16 ? "fp16" : "bf16", (long long)M,
         (long long)N, (long long)K, (long long)P, pad, ws, fail ? " FAILED" : "");
  dlcemu_mem_free(W);
  kt_free(&A), kt_free(&B), kt_free(&b1), kt_free(&D), kt_free(&Y);
  return fail;
}

int main(void) {
  int fails = 0;
  for (int d = 0; d < 2; d++) {
    dlc_dtype dt = d ? DLC_BF16 : DLC_F16;
    fails += run_case(dt, 37, 24, 40, 19, 0, 1 + (uint64_t)d);
    fails += run_case(dt, 130, 72, 33, 136, 8, 3 + (uint64_t)d);
    fails += run_case(dt, 5, 9, 7, 3, 3, 5 + (uint64_t)d);
  }
  printf("%d failed\n", fails);
  return fails ? 1 : 0;
}
