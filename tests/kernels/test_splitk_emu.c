/* Split-K in the default library (docs/plan.md#split-k): a skinny GEMM
 * (M, N <= 512, K >= 4096) whose shape bucket's plan splits K, run through
 * dlc_gemm_bias_relu_ws and dlc_gemm_bias_relu_nt_ws in the PTX emulator
 * with the workspace dlc_<op>_workspace_size() reports:
 *   - against an FP64 reference (tolerance: kt.h) on shapes with M, N and K
 *     tails and padded leading dims, fp16 and bf16;
 *   - twice, with the output's bits compared (the slices' partials are
 *     summed in one fixed order: the same inputs give the same bits);
 *   - two launches: the split rows (split > 0), then the second kernel;
 *   - a workspace one byte short, and no workspace (dlc_<op>()): the plan
 *     that needs none runs, with the right numbers;
 *   - hostile workspaces (NULL with bytes, misaligned, wrapping the address
 *     space): refused, nothing launched, the output untouched;
 *   - dlc_<op>_workspace_size() is 0 where no split plan serves the shape. */
#include <stdbool.h>

#include "dlc_internal.h"
#include "kt.h"

#define CANARY 0x7E5Bu

typedef dlc_status (*ws_fn)(dlc_dtype, int64_t, int64_t, int64_t, const void *, int64_t, const void *, int64_t,
                            const void *, void *, int64_t, void *, size_t, struct CUstream_st *);

static dlc_status call(bool nt, dlc_dtype dt, int64_t M, int64_t N, int64_t K, const kt_buf *A, int64_t lda,
                       const kt_buf *B, int64_t ldb, const kt_buf *bias, kt_buf *C, int64_t ldc, void *ws, size_t bytes) {
  ws_fn f = nt ? dlc_gemm_bias_relu_nt_ws : dlc_gemm_bias_relu_ws;
  return f(dt, M, N, K, kt_ptr(A->dev), lda, kt_ptr(B->dev), ldb, kt_ptr(bias->dev), kt_ptr(C->dev), ldc, ws, bytes,
           NULL);
}

static size_t ws_size(bool nt, dlc_dtype dt, int64_t M, int64_t N, int64_t K) {
  return nt ? dlc_gemm_bias_relu_nt_workspace_size(dt, M, N, K) : dlc_gemm_bias_relu_workspace_size(dt, M, N, K);
}

/* The number of mismatches of C against relu(A B + bias) in FP64, and the
 * padding of C left untouched. */
static int check(bool nt, dlc_dtype dt, int64_t M, int64_t N, int64_t K, const kt_buf *A, int64_t lda, const kt_buf *B,
                 int64_t ldb, const kt_buf *bias, const kt_buf *C, int64_t ldc, const char *what) {
  double *ref = malloc(sizeof(double) * (size_t)(M * N));
  double R = 0;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double acc = nt ? kt_dot(dt, A->host + m * lda, 1, B->host + n * ldb, 1, K)
                      : kt_dot(dt, A->host + m * lda, 1, B->host + n, ldb, K);
      acc += kt_to_f32(dt, bias->host[n]);
      ref[m * N + n] = acc > 0 ? acc : 0;
      R = fmax(R, fabs(acc));
    }
  int bad = 0;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < ldc; n++) {
      uint16_t v16 = C->host[m * ldc + n];
      if (n >= N) {
        if (v16 != CANARY && bad++ < 5) fprintf(stderr, "%s: C[%lld][%lld] in the padding was written\n", what, (long long)m, (long long)n);
        continue;
      }
      double r = ref[m * N + n], rr = kt_round(dt, r), v = kt_to_f32(dt, v16);
      double tol = fmax(kt_ulp(dt, rr), 1e-3 * (fabs(r) + R));
      if (!(fabs(v - rr) <= tol) && bad++ < 5)
        fprintf(stderr, "%s: C[%lld][%lld] = %g, expected %g (tol %g)\n", what, (long long)m, (long long)n, v, rr, tol);
    }
  free(ref);
  return bad;
}

static int run_case(bool nt, dlc_dtype dt, int64_t M, int64_t N, int64_t K, int pad, uint64_t seed) {
  const char *op = nt ? "gemm_bias_relu_nt" : "gemm_bias_relu";
  int64_t lda = K + pad, ldb = (nt ? K : N) + pad, ldc = N + pad;
  kt_buf A = {0}, B = {0}, bias = {0}, C = {0};
  kt_alloc(&A, (size_t)(M * lda), 0), kt_alloc(&B, (size_t)((nt ? N : K) * ldb), 0), kt_alloc(&bias, (size_t)N, 0);
  kt_alloc(&C, (size_t)(M * ldc), 0);
  uint64_t s = seed;
  for (size_t i = 0; i < A.n; i++) A.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < B.n; i++) B.host[i] = kt_from_f32(dt, (float)(0.25 * kt_uniform(&s)));
  for (size_t i = 0; i < bias.n; i++) bias.host[i] = kt_from_f32(dt, (float)(0.5 * kt_uniform(&s)));
  for (size_t i = 0; i < C.n; i++) C.host[i] = CANARY;
  kt_upload(&A), kt_upload(&B), kt_upload(&bias), kt_upload(&C);
  int fail = 0;
  char what[160];
  snprintf(what, sizeof what, "%s %s M=%lld N=%lld K=%lld pad=%d", op, dt == DLC_F16 ? "fp16" : "bf16", (long long)M,
           (long long)N, (long long)K, pad);
  size_t ws = ws_size(nt, dt, M, N, K);
  if (ws == 0 || ws % 256) {
    fprintf(stderr, "%s: workspace_size %zu: expected a split plan's (a positive multiple of 256)\n", what, ws);
    fail = 1;
    ws = 256;
  }
  dlcemu_deviceptr W = 0;
  dlcemu_mem_alloc(&W, ws + 512);
  void *wp = kt_ptr(W); /* dlcemu allocations are 256-byte aligned */
  /* hostile workspaces: refused before anything runs */
  long n0 = dlc__last_launch()->count;
  dlc_status st = call(nt, dt, M, N, K, &A, lda, &B, ldb, &bias, &C, ldc, NULL, ws);
  if (st != DLC_ERROR_INVALID_VALUE || !strstr(dlc_last_error_detail(), "NULL")) {
    fprintf(stderr, "%s: NULL workspace with %zu bytes: %s (%s)\n", what, ws, dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  }
  st = call(nt, dt, M, N, K, &A, lda, &B, ldb, &bias, &C, ldc, (char *)wp + 16, ws);
  if (st != DLC_ERROR_MISALIGNED) {
    fprintf(stderr, "%s: a workspace 16 bytes off: %s (%s)\n", what, dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  }
  st = call(nt, dt, M, N, K, &A, lda, &B, ldb, &bias, &C, ldc, (void *)(uintptr_t)(UINTPTR_MAX - 255), 512);
  if (st != DLC_ERROR_INVALID_VALUE || !strstr(dlc_last_error_detail(), "wraps")) {
    fprintf(stderr, "%s: a workspace wrapping the address space: %s (%s)\n", what, dlc_status_string(st),
            dlc_last_error_detail());
    fail = 1;
  }
  if (dlc__last_launch()->count != n0) {
    fprintf(stderr, "%s: a refused call launched a kernel\n", what);
    fail = 1;
  }
  kt_download(&C);
  for (size_t i = 0; i < C.n; i++)
    if (C.host[i] != CANARY) {
      fprintf(stderr, "%s: a refused call wrote C\n", what);
      fail = 1;
      break;
    }
  /* with the workspace: two launches, the split rows then the second kernel; twice, the same bits */
  uint16_t *first = malloc(2 * C.n);
  for (int rep = 0; rep < 2; rep++) {
    n0 = dlc__last_launch()->count;
    st = call(nt, dt, M, N, K, &A, lda, &B, ldb, &bias, &C, ldc, wp, ws);
    const dlc__launch_rec *l = dlc__last_launch();
    if (st != DLC_SUCCESS) {
      fprintf(stderr, "%s: %s: %s\n", what, dlc_status_string(st), dlc_last_error_detail());
      fail = 1;
      break;
    }
    if (l->count != n0 + 2 || !l->kernel->split_reduce || l->kernel->split < 2) {
      fprintf(stderr, "%s: expected the split plan's two launches, got %ld ending in %s\n", what, l->count - n0,
              l->kernel->name);
      fail = 1;
    }
    kt_download(&C);
    if (rep == 0) {
      memcpy(first, C.host, 2 * C.n);
      fail |= check(nt, dt, M, N, K, &A, lda, &B, ldb, &bias, &C, ldc, what) != 0;
    } else if (memcmp(first, C.host, 2 * C.n) != 0) {
      fprintf(stderr, "%s: a second run gave other bits\n", what);
      fail = 1;
    }
  }
  free(first);
  /* one byte short, and none: the plan without split, one launch */
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; i < C.n; i++) C.host[i] = CANARY;
    kt_upload(&C);
    n0 = dlc__last_launch()->count;
    st = k ? call(nt, dt, M, N, K, &A, lda, &B, ldb, &bias, &C, ldc, NULL, 0)
           : call(nt, dt, M, N, K, &A, lda, &B, ldb, &bias, &C, ldc, wp, ws - 1);
    const dlc__launch_rec *l = dlc__last_launch();
    if (st != DLC_SUCCESS || l->count != n0 + 1 || l->kernel->split != 0) {
      fprintf(stderr, "%s, %s: %s (%s), %ld launches ending in %s\n", what, k ? "no workspace" : "a workspace one byte short",
              dlc_status_string(st), dlc_last_error_detail(), l->count - n0, l->kernel ? l->kernel->name : "-");
      fail = 1;
      continue;
    }
    kt_download(&C);
    fail |= check(nt, dt, M, N, K, &A, lda, &B, ldb, &bias, &C, ldc, k ? "no workspace" : "one byte short") != 0;
  }
  printf("%s: workspace %zu bytes%s\n", what, ws, fail ? " FAILED" : "");
  dlcemu_mem_free(W);
  kt_free(&A), kt_free(&B), kt_free(&bias), kt_free(&C);
  return fail;
}

int main(void) {
  int fails = 0;
  /* outside the skinny bucket (K below its bound, M above): no split plan */
  static const int64_t none[][3] = {{128, 128, 1024}, {1024, 128, 8192}, {0, 128, 8192}};
  for (size_t i = 0; i < sizeof none / sizeof *none; i++)
    for (int nt = 0; nt < 2; nt++)
      if (ws_size(nt, DLC_F16, none[i][0], none[i][1], none[i][2]) != 0) {
        fprintf(stderr, "%lldx%lldx%lld: a workspace for a shape no split plan serves\n", (long long)none[i][0],
                (long long)none[i][1], (long long)none[i][2]);
        fails++;
      }
  for (int d = 0; d < 2; d++) {
    dlc_dtype dt = d ? DLC_BF16 : DLC_F16;
    fails += run_case(false, dt, 77, 70, 4096 + 40, 8, 11 + (uint64_t)d); /* M, N, K tails; padded lds */
    fails += run_case(true, dt, 9, 135, 4099, 3, 21 + (uint64_t)d);       /* odd K and lds: narrow chunks */
  }
  printf("%d failed\n", fails);
  return fails ? 1 : 0;
}
