/* Ops that are not in the default manifest (tests/kernels/extra/), built by
 * the same dlcgen and templates with no change to either, run in the PTX
 * emulator against an FP64 reference (tolerance: kt.h):
 *   gemm_gelu_residual  Y = sigmoid(gelu_tanh(A B + bias) / 2 + R) - R
 *   gemm_at_silu        Y = silu(At^T B), the lhs stored transposed [K,M]
 *   conv_nchw           Y = conv3x3(X, Wt), NCHW / KCRS: the layout pass converts X
 *                       to NHWC and Wt to KRSC in the caller's workspace
 *                       (dlc_conv_nchw_ws), then the conv loads 16-byte chunks;
 *                       without the workspace, the conv as given in one kernel;
 *                       through a plan, Wt converted once into its ConstPool
 *   gemm_ewise_fns      the elementwise functions of issue 11 on C = A B + bias
 * with tails in every dimension and padded leading dimensions. */
#include "kt.h"

static double gelu(double x) { return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x))); }
static double sigm(double x) { return 1 / (1 + exp(-x)); }

static int check(const char *what, dlc_dtype dt, int64_t M, int64_t N, const kt_buf *Y, int64_t ldy, const double *ref) {
  double R = 0, worst = 0;
  for (int64_t i = 0; i < M * N; i++) R = fmax(R, fabs(ref[i]));
  int bad = 0;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double r = ref[m * N + n], rr = kt_round(dt, r), v = kt_to_f32(dt, Y->host[m * ldy + n]);
      double err = fabs(v - rr), tol = fmax(kt_ulp(dt, rr), 1e-3 * (fabs(r) + R));
      if (!(err <= tol) && bad++ < 5)
        fprintf(stderr, "%s M=%lld N=%lld: Y[%lld][%lld] = %g, expected %g\n", what, (long long)M, (long long)N,
                (long long)m, (long long)n, v, rr);
      if (err / tol > worst) worst = err / tol;
    }
  printf("%s %s M=%lld N=%lld: worst %.3f of the tolerance%s\n", what, dt == DLC_F16 ? "fp16" : "bf16", (long long)M,
         (long long)N, worst, bad ? " FAILED" : "");
  return bad != 0;
}

static int gelu_residual(dlc_dtype dt, int64_t M, int64_t N, int64_t K, uint64_t seed) {
  int64_t lda = K + 8, ldb = N + 2, ldr = N + 5, ldy = N;
  kt_buf A = {0}, B = {0}, bias = {0}, Rb = {0}, Y = {0};
  kt_alloc(&A, (size_t)(M * lda), 0), kt_alloc(&B, (size_t)(K * ldb), 0), kt_alloc(&bias, (size_t)N, 0);
  kt_alloc(&Rb, (size_t)(M * ldr), 0), kt_alloc(&Y, (size_t)(M * ldy), 0);
  uint64_t s = seed;
  for (size_t i = 0; i < A.n; i++) A.host[i] = kt_from_f32(dt, (float)(0.25 * kt_uniform(&s)));
  for (size_t i = 0; i < B.n; i++) B.host[i] = kt_from_f32(dt, (float)(0.25 * kt_uniform(&s)));
  for (size_t i = 0; i < bias.n; i++) bias.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < Rb.n; i++) Rb.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  kt_upload(&A), kt_upload(&B), kt_upload(&bias), kt_upload(&Rb), kt_upload(&Y);
  dlc_status st = dlc_gemm_gelu_residual(dt, M, N, K, kt_ptr(A.dev), lda, kt_ptr(B.dev), ldb, kt_ptr(bias.dev),
                                         kt_ptr(Rb.dev), ldr, kt_ptr(Y.dev), ldy, NULL);
  int fail = 0;
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "gemm_gelu_residual: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  } else {
    kt_download(&Y);
    double *ref = malloc(sizeof(double) * (size_t)(M * N));
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double acc = kt_dot(dt, A.host + m * lda, 1, B.host + n, ldb, K);
        double r = kt_to_f32(dt, Rb.host[m * ldr + n]);
        ref[m * N + n] = sigm(gelu(acc + kt_to_f32(dt, bias.host[n])) * 0.5 + r) - r;
      }
    fail = check("gemm_gelu_residual", dt, M, N, &Y, ldy, ref);
    free(ref);
  }
  kt_free(&A), kt_free(&B), kt_free(&bias), kt_free(&Rb), kt_free(&Y);
  return fail;
}

static int at_silu(int64_t M, int64_t N, int64_t K, uint64_t seed) {
  dlc_dtype dt = DLC_F16;
  int64_t ldat = M + 8, ldb = N + 8, ldy = N + 3;
  kt_buf At = {0}, B = {0}, Y = {0};
  kt_alloc(&At, (size_t)(K * ldat), 0), kt_alloc(&B, (size_t)(K * ldb), 0), kt_alloc(&Y, (size_t)(M * ldy), 0);
  uint64_t s = seed;
  for (size_t i = 0; i < At.n; i++) At.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < B.n; i++) B.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  kt_upload(&At), kt_upload(&B), kt_upload(&Y);
  dlc_status st = dlc_gemm_at_silu(dt, M, N, K, kt_ptr(At.dev), ldat, kt_ptr(B.dev), ldb, kt_ptr(Y.dev), ldy, NULL);
  int fail = 0;
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "gemm_at_silu: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  } else {
    kt_download(&Y);
    double *ref = malloc(sizeof(double) * (size_t)(M * N));
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double acc = kt_dot(dt, At.host + m, ldat, B.host + n, ldb, K);
        ref[m * N + n] = acc * sigm(acc);
      }
    fail = check("gemm_at_silu", dt, M, N, &Y, ldy, ref);
    free(ref);
  }
  kt_free(&At), kt_free(&B), kt_free(&Y);
  return fail;
}

/* conv_nchw through a plan (issue 37 item 2; docs/runtime.md): Wt is a
 * param, and the layout pass converts it, so plan_create runs that
 * conversion once into the ConstPool.  The filters are then the pool's:
 * overwriting the caller's Wt after plan_create changes nothing.  Each run
 * needs only X's conversion in the workspace (the call's minus Wt's),
 * refuses fewer bytes (the graph as given would read the pool's KRSC
 * filters as KCRS) and leaves Y as it was, and gives the call's output bit
 * for bit (the call's is in Y on entry, checked against the reference). */
static int conv_nchw_plan(int64_t N, int64_t H, int64_t W, int64_t C, int64_t K, kt_buf *X, kt_buf *Wt, kt_buf *Y,
                          dlcemu_deviceptr wsp, size_t call_ws, const double *ref) {
  const dlc_dtype dt = DLC_F16;
  int fail = 0;
  uint16_t *call_y = malloc(Y->n * sizeof *call_y), *keep_w = malloc(Wt->n * sizeof *keep_w);
  memcpy(call_y, Y->host, Y->n * sizeof *call_y);
  memcpy(keep_w, Wt->host, Wt->n * sizeof *keep_w);
  dlc_conv_nchw_plan *plan = NULL;
  dlc_status st = dlc_conv_nchw_plan_create(&plan, dt, C, K, kt_ptr(Wt->dev), NULL);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "conv_nchw plan_create: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    free(call_y), free(keep_w);
    return 1;
  }
  for (size_t i = 0; i < Wt->n; i++) Wt->host[i] = 0x7e00; /* NaN: read after plan_create, it would show */
  kt_upload(Wt);
  const size_t ws = dlc_conv_nchw_plan_workspace_size(plan, N, H, W);
  const size_t want = ((size_t)(N * H * W * C) * 2 + 255) / 256 * 256;
  if (ws != want || ws > call_ws) {
    fprintf(stderr, "conv_nchw plan_workspace_size %zu, expected %zu (the call's: %zu)\n", ws, want, call_ws);
    fail = 1;
  }
  for (int run = 0; run < 3; run++) {
    for (size_t i = 0; i < Y->n; i++) Y->host[i] = 0x5555;
    kt_upload(Y);
    /* run 0 with one byte too few: refused, Y untouched */
    size_t bytes = run == 0 ? (ws ? ws - 1 : 0) : ws;
    st = dlc_conv_nchw_plan_run(plan, N, H, W, kt_ptr(X->dev), kt_ptr(Y->dev), ws ? kt_ptr(wsp) : NULL, bytes, NULL);
    kt_download(Y);
    if (run == 0) {
      int kept = 1;
      for (size_t i = 0; i < Y->n; i++) kept &= Y->host[i] == 0x5555;
      if (ws && (st != DLC_ERROR_INVALID_VALUE || !kept)) {
        fprintf(stderr, "conv_nchw plan_run with %zu of %zu workspace bytes: %s, Y %s\n", bytes, ws, dlc_status_string(st),
                kept ? "kept" : "written");
        fail = 1;
      }
      continue;
    }
    if (st != DLC_SUCCESS) {
      fprintf(stderr, "conv_nchw plan_run %d: %s: %s\n", run, dlc_status_string(st), dlc_last_error_detail());
      fail = 1;
      continue;
    }
    if (memcmp(Y->host, call_y, Y->n * sizeof *call_y) != 0) {
      fprintf(stderr, "conv_nchw plan_run %d: Y is not bit for bit the call's\n", run);
      fail = 1;
    }
    fail |= check("conv_nchw (plan)", dt, N * K * H, W, Y, W, ref);
  }
  dlc_conv_nchw_plan_destroy(plan);
  memcpy(Wt->host, keep_w, Wt->n * sizeof *keep_w);
  kt_upload(Wt);
  free(call_y), free(keep_w);
  return fail;
}

static int conv_nchw(int64_t N, int64_t H, int64_t W, int64_t C, int64_t K, uint64_t seed) {
  dlc_dtype dt = DLC_F16;
  kt_buf X = {0}, Wt = {0}, Y = {0};
  kt_alloc(&X, (size_t)(N * C * H * W), 0), kt_alloc(&Wt, (size_t)(K * C * 9), 0), kt_alloc(&Y, (size_t)(N * K * H * W), 0);
  uint64_t s = seed;
  for (size_t i = 0; i < X.n; i++) X.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < Wt.n; i++) Wt.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  kt_upload(&X), kt_upload(&Wt), kt_upload(&Y);
  int fail = 0;
  /* the converted X and Wt: each 256-byte aligned */
  size_t ws = dlc_conv_nchw_workspace_size(dt, N, H, W, C, K);
  size_t want = ((size_t)(N * H * W * C) * 2 + 255) / 256 * 256 + ((size_t)(K * 9 * C) * 2 + 255) / 256 * 256;
  if (ws != want) {
    fprintf(stderr, "conv_nchw: workspace_size %zu, expected %zu\n", ws, want);
    fail = 1;
  }
  double *ref = malloc(sizeof(double) * (size_t)(N * K * H * W));
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t p = 0; p < H; p++)
        for (int64_t q = 0; q < W; q++) {
          double acc = 0;
          for (int64_t c = 0; c < C; c++)
            for (int64_t r = 0; r < 3; r++)
              for (int64_t t = 0; t < 3; t++) {
                int64_t h = p + r - 1, w = q + t - 1;
                if (h >= 0 && h < H && w >= 0 && w < W)
                  acc += (double)kt_to_f32(dt, X.host[((n * C + c) * H + h) * W + w]) *
                         kt_to_f32(dt, Wt.host[((k * C + c) * 3 + r) * 3 + t]);
              }
          ref[((n * K + k) * H + p) * W + q] = acc;
        }
  dlcemu_deviceptr wsp = 0;
  dlcemu_mem_alloc(&wsp, ws); /* dlcemu allocations are 256-byte aligned */
  /* three calls (issue 38 item 2: dlc_conv_nchw needs no workspace): without
   * one, the graph as given in one kernel; with one byte too few, the same;
   * with the size, the two conversion kernels and the conv on their output.
   * Each is queried first, and its output checked against the reference. */
  static const char *const how[3] = {"no workspace", "a workspace one byte short", "the workspace"};
  for (int call = 0; call < 3; call++) {
    void *w = call ? kt_ptr(wsp) : NULL;
    size_t bytes = call == 0 ? 0 : call == 1 ? ws - 1 : ws;
    dlc_launch_info qi;
    dlc_status st = dlc_conv_nchw_query(dt, N, H, W, C, K, kt_ptr(X.dev), kt_ptr(Wt.dev), kt_ptr(Y.dev), w, bytes, &qi);
    int want_k = call == 2 ? 3 : 1;
    if (st != DLC_SUCCESS || qi.kernels != want_k || (size_t)qi.workspace_bytes != (call == 2 ? ws : 0) ||
        (call < 2) != (strstr(qi.kernel, "_given_") != NULL)) {
      fprintf(stderr, "conv_nchw with %s: the query says %s, %d kernels from %s, %zu workspace bytes\n", how[call],
              dlc_status_string(st), qi.kernels, qi.kernel, (size_t)qi.workspace_bytes);
      fail = 1;
    }
    memset(Y.host, 0, Y.n * sizeof *Y.host);
    kt_upload(&Y);
    st = call == 0 ? dlc_conv_nchw(dt, N, H, W, C, K, kt_ptr(X.dev), kt_ptr(Wt.dev), kt_ptr(Y.dev), NULL)
                   : dlc_conv_nchw_ws(dt, N, H, W, C, K, kt_ptr(X.dev), kt_ptr(Wt.dev), kt_ptr(Y.dev), w, bytes, NULL);
    if (st != DLC_SUCCESS) {
      fprintf(stderr, "conv_nchw with %s: %s: %s\n", how[call], dlc_status_string(st), dlc_last_error_detail());
      fail = 1;
      continue;
    }
    kt_download(&Y);
    char what[64];
    snprintf(what, sizeof what, "conv_nchw (%s)", how[call]);
    fail |= check(what, dt, N * K * H, W, &Y, W, ref);
  }
  fail |= conv_nchw_plan(N, H, W, C, K, &X, &Wt, &Y, wsp, ws, ref);
  free(ref);
  dlcemu_mem_free(wsp);
  kt_free(&X), kt_free(&Wt), kt_free(&Y);
  return fail;
}

static double ewise_fns(double c) {
  double sp = log1p(exp(c)), sg = c > 0 ? 1 : c < 0 ? -1 : 0;
  double y = 0.5 * c * (1 + erf(c / sqrt(2.0))) + pow(sp, 1.5) + c * tanh(sp) * sg + erf(c) +
             c * fmin(fmax(c + 3, 0), 6) / 6 + (c > 0 ? c : 0.1 * c);
  return fmin(y, 2.5);
}

static int gemm_ewise(dlc_dtype dt, int64_t M, int64_t N, int64_t K, uint64_t seed) {
  int64_t lda = K + 8, ldb = N + 2, ldy = N + 1;
  kt_buf A = {0}, B = {0}, bias = {0}, Y = {0};
  kt_alloc(&A, (size_t)(M * lda), 0), kt_alloc(&B, (size_t)(K * ldb), 0), kt_alloc(&bias, (size_t)N, 0);
  kt_alloc(&Y, (size_t)(M * ldy), 0);
  uint64_t s = seed;
  for (size_t i = 0; i < A.n; i++) A.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < B.n; i++) B.host[i] = kt_from_f32(dt, (float)(0.5 * kt_uniform(&s)));
  for (size_t i = 0; i < bias.n; i++) bias.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  kt_upload(&A), kt_upload(&B), kt_upload(&bias), kt_upload(&Y);
  dlc_status st = dlc_gemm_ewise_fns(dt, M, N, K, kt_ptr(A.dev), lda, kt_ptr(B.dev), ldb, kt_ptr(bias.dev),
                                     kt_ptr(Y.dev), ldy, NULL);
  int fail = 0;
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "gemm_ewise_fns: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  } else {
    kt_download(&Y);
    double *ref = malloc(sizeof(double) * (size_t)(M * N));
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double acc = kt_dot(dt, A.host + m * lda, 1, B.host + n, ldb, K);
        ref[m * N + n] = ewise_fns(acc + kt_to_f32(dt, bias.host[n]));
      }
    fail = check("gemm_ewise_fns", dt, M, N, &Y, ldy, ref);
    free(ref);
  }
  kt_free(&A), kt_free(&B), kt_free(&bias), kt_free(&Y);
  return fail;
}

int main(void) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {7, 9, 13}, {64, 64, 64}, {129, 70, 255}, {200, 257, 100}};
  int fails = 0;
  for (int i = 0; i < 5; i++) {
    fails += gelu_residual(DLC_F16, shapes[i][0], shapes[i][1], shapes[i][2], 11 + (uint64_t)i);
    fails += gelu_residual(DLC_BF16, shapes[i][1], shapes[i][0], shapes[i][2], 21 + (uint64_t)i);
    fails += at_silu(shapes[i][0], shapes[i][1], shapes[i][2], 31 + (uint64_t)i);
  }
  fails += gemm_ewise(DLC_F16, 70, 45, 33, 51);
  fails += gemm_ewise(DLC_BF16, 129, 18, 40, 52);
  fails += conv_nchw(1, 5, 6, 3, 4, 41);
  fails += conv_nchw(2, 9, 7, 8, 24, 42);
  fails += conv_nchw(1, 14, 14, 17, 5, 43);
  return fails ? 1 : 0;
}
