/* The row-skeleton ops of tests/kernels/extra/ (not in the default
 * manifest), built by the same dlcgen and templates, run in the PTX emulator
 * against FP64 references (tolerance: kt.h; fp32 outputs against the
 * reference rounded to fp32, with the same 1e-3 scaled bound):
 *   bias_gelu       Y = gelu_tanh(X + bias[N]) * scale[M,1] (scale fp32)
 *   row_sum/max/mean Y[B,M] (fp32) = sum / max / mean of X[B,M,N] over N
 *   softmax_rows    softmax with N compiled in (100, 512): a warp a row,
 *                   4 rows a CTA, each warp's row in its own row cache
 *   pad_rows        Y = pad(X, 1 before and 2 after N, value -1) + bias[N+3]
 *                   and S[M] (fp32) = sum of pad(X) over its row: X loaded one
 *                   element at a time inside the pad's guards (memcheck
 *                   catches a load outside X)
 * in fp16 and bf16 (row_max in fp32 too), on rows with tails and padded or
 * odd leading dims. */
#include "kt.h"

#define CANARY 0x7E5Bu

static double gelu(double x) { return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x))); }

static int check16(const char *what, dlc_dtype dt, int64_t M, int64_t N, const kt_buf *Y, int64_t ldy, const double *ref) {
  double R = 0;
  for (int64_t i = 0; i < M * N; i++) R = fmax(R, fabs(ref[i]));
  int bad = 0;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < ldy; n++) {
      uint16_t y = Y->host[m * ldy + n];
      if (n >= N) {
        if (y != CANARY && bad++ < 5) fprintf(stderr, "%s: Y[%lld][%lld] in the padding was written\n", what, (long long)m, (long long)n);
        continue;
      }
      double r = ref[m * N + n], rr = kt_round(dt, r), v = kt_to_f32(dt, y);
      double err = fabs(v - rr), tol = fmax(kt_ulp(dt, rr), 1e-3 * (fabs(r) + R));
      if (!(err <= tol) && bad++ < 5)
        fprintf(stderr, "%s M=%lld N=%lld: Y[%lld][%lld] = %g, expected %g\n", what, (long long)M, (long long)N,
                (long long)m, (long long)n, v, rr);
    }
  printf("%s %s M=%lld N=%lld ldy=%lld%s\n", what, dt == DLC_F16 ? "fp16" : "bf16", (long long)M, (long long)N,
         (long long)ldy, bad ? " FAILED" : "");
  return bad != 0;
}

static int bias_gelu(dlc_dtype dt, int64_t M, int64_t N, int pad, uint64_t seed) {
  int64_t ldx = N + pad, ldy = N + pad, ldscale = 1 + pad;
  kt_buf X = {0}, bias = {0}, Y = {0};
  dlcemu_deviceptr S = 0;
  float *sh = calloc((size_t)(M * ldscale) + 1, sizeof(float));
  kt_alloc(&X, (size_t)(M * ldx), 0), kt_alloc(&bias, (size_t)N, 0), kt_alloc(&Y, (size_t)(M * ldy), 0);
  dlcemu_mem_alloc(&S, sizeof(float) * (size_t)(M * ldscale));
  uint64_t s = seed;
  for (size_t i = 0; i < X.n; i++) X.host[i] = kt_from_f32(dt, (float)(2 * kt_uniform(&s)));
  for (size_t i = 0; i < bias.n; i++) bias.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (int64_t i = 0; i < M * ldscale; i++) sh[i] = (float)(1 + kt_uniform(&s));
  for (size_t i = 0; i < Y.n; i++) Y.host[i] = CANARY;
  kt_upload(&X), kt_upload(&bias), kt_upload(&Y);
  dlcemu_memcpy_htod(S, sh, sizeof(float) * (size_t)(M * ldscale));
  dlc_status st = dlc_bias_gelu(dt, M, N, kt_ptr(X.dev), ldx, kt_ptr(bias.dev), kt_ptr(S), ldscale, kt_ptr(Y.dev), ldy, NULL);
  int fail = 0;
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "bias_gelu: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  } else {
    kt_download(&Y);
    double *ref = malloc(sizeof(double) * (size_t)(M * N + 1));
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++)
        ref[m * N + n] = gelu((double)kt_to_f32(dt, X.host[m * ldx + n]) + kt_to_f32(dt, bias.host[n])) * sh[m * ldscale];
    fail = check16("bias_gelu", dt, M, N, &Y, ldy, ref);
    free(ref);
  }
  kt_free(&X), kt_free(&bias), kt_free(&Y);
  dlcemu_mem_free(S);
  free(sh);
  return fail;
}

enum { SUM, MAX, MEAN };

static int row_reduce(int op, dlc_dtype dt, int64_t B, int64_t M, int64_t N, int pad, uint64_t seed) {
  static const char *const names[] = {"row_sum", "row_max", "row_mean"};
  int64_t ldy = M + pad;
  kt_buf X = {0};
  kt_alloc(&X, (size_t)(B * M * N), 0);
  size_t ny = (size_t)(B * ldy);
  float *yh = malloc(sizeof(float) * ny + 4);
  dlcemu_deviceptr Y = 0;
  dlcemu_mem_alloc(&Y, sizeof(float) * ny);
  uint64_t s = seed;
  for (size_t i = 0; i < X.n; i++) X.host[i] = kt_from_f32(dt, (float)(1 + 2 * kt_uniform(&s)));
  for (size_t i = 0; i < ny; i++) yh[i] = -12345.0f;
  kt_upload(&X);
  dlcemu_memcpy_htod(Y, yh, sizeof(float) * ny);
  dlc_status st = op == SUM   ? dlc_row_sum(dt, B, M, N, kt_ptr(X.dev), kt_ptr(Y), ldy, NULL)
                  : op == MAX ? dlc_row_max(dt, B, M, N, kt_ptr(X.dev), kt_ptr(Y), ldy, NULL)
                              : dlc_row_mean(dt, B, M, N, kt_ptr(X.dev), kt_ptr(Y), ldy, NULL);
  int bad = 0;
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "%s: %s: %s\n", names[op], dlc_status_string(st), dlc_last_error_detail());
    bad = 1;
  } else {
    dlcemu_memcpy_dtoh(yh, Y, sizeof(float) * ny);
    for (int64_t b = 0; b < B; b++)
      for (int64_t m = 0; m < ldy; m++) {
        float v = yh[b * ldy + m];
        if (m >= M) {
          if (v != -12345.0f && bad++ < 5) fprintf(stderr, "%s: Y[%lld][%lld] in the padding was written\n", names[op], (long long)b, (long long)m);
          continue;
        }
        double r = op == MAX ? -INFINITY : 0, mag = 0;
        for (int64_t n = 0; n < N; n++) {
          double x = kt_to_f32(dt, X.host[(b * M + m) * N + n]);
          r = op == MAX ? fmax(r, x) : r + x;
          mag += fabs(x);
        }
        if (op == MEAN) r /= (double)N, mag /= (double)N;
        if (op == MAX) mag = fabs(r);
        /* fp32 sums of N terms: 1e-3 of the sum of magnitudes bounds their rounding */
        double tol = 1e-3 * (mag + 1e-30) + fabs(r) * 1.2e-7;
        if (!(fabs(v - r) <= tol) && bad++ < 5)
          fprintf(stderr, "%s B=%lld M=%lld N=%lld: Y[%lld][%lld] = %.9g, expected %.9g\n", names[op], (long long)B,
                  (long long)M, (long long)N, (long long)b, (long long)m, v, r);
      }
  }
  printf("%s %s B=%lld M=%lld N=%lld ldy=%lld%s\n", names[op], dt == DLC_F16 ? "fp16" : "bf16", (long long)B, (long long)M,
         (long long)N, (long long)ldy, bad ? " FAILED" : "");
  kt_free(&X);
  dlcemu_mem_free(Y);
  free(yh);
  return bad != 0;
}

/* softmax with the row length a variant: the warp-a-row kernels */
static int softmax_rows(dlc_dtype dt, int64_t M, int64_t N, int pad, uint64_t seed) {
  int64_t ld = N + pad;
  kt_buf X = {0}, Y = {0};
  kt_alloc(&X, (size_t)(M * ld), 0), kt_alloc(&Y, (size_t)(M * ld), 0);
  uint64_t s = seed;
  for (size_t i = 0; i < X.n; i++) X.host[i] = kt_from_f32(dt, (float)(4 * kt_uniform(&s)));
  for (size_t i = 0; i < Y.n; i++) Y.host[i] = CANARY;
  kt_upload(&X), kt_upload(&Y);
  dlc_status st = dlc_softmax_rows(dt, M, N, kt_ptr(X.dev), ld, kt_ptr(Y.dev), ld, NULL);
  int fail = 0;
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "softmax_rows: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  } else {
    kt_download(&Y);
    double *ref = malloc(sizeof(double) * (size_t)(M * N));
    for (int64_t m = 0; m < M; m++) {
      double mx = -INFINITY, sum = 0;
      for (int64_t n = 0; n < N; n++) mx = fmax(mx, kt_to_f32(dt, X.host[m * ld + n]));
      for (int64_t n = 0; n < N; n++) sum += exp(kt_to_f32(dt, X.host[m * ld + n]) - mx);
      for (int64_t n = 0; n < N; n++) ref[m * N + n] = exp(kt_to_f32(dt, X.host[m * ld + n]) - mx) / sum;
    }
    fail = check16("softmax_rows", dt, M, N, &Y, ld, ref);
    free(ref);
  }
  kt_free(&X), kt_free(&Y);
  return fail;
}

/* a padded view: the pad's elements are -1 and never loaded */
static int pad_rows(dlc_dtype dt, int64_t M, int64_t N, int pad, uint64_t seed) {
  int64_t ldx = N + pad, N3 = N + 3, ldy = N3 + pad;
  kt_buf X = {0}, bias = {0}, Y = {0};
  float *sh = malloc(sizeof(float) * (size_t)M + 4);
  dlcemu_deviceptr S = 0;
  kt_alloc(&X, (size_t)(M * ldx), 0), kt_alloc(&bias, (size_t)N3, 0), kt_alloc(&Y, (size_t)(M * ldy), 0);
  dlcemu_mem_alloc(&S, sizeof(float) * (size_t)M);
  uint64_t s = seed;
  for (size_t i = 0; i < X.n; i++) X.host[i] = kt_from_f32(dt, (float)(1 + 2 * kt_uniform(&s)));
  for (size_t i = 0; i < bias.n; i++) bias.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < Y.n; i++) Y.host[i] = CANARY;
  for (int64_t i = 0; i < M; i++) sh[i] = -12345.0f;
  kt_upload(&X), kt_upload(&bias), kt_upload(&Y);
  dlcemu_memcpy_htod(S, sh, sizeof(float) * (size_t)M);
  dlc_status st = dlc_pad_rows(dt, M, N, kt_ptr(X.dev), ldx, kt_ptr(bias.dev), kt_ptr(Y.dev), ldy, kt_ptr(S), NULL);
  int fail = 0;
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "pad_rows: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  } else {
    kt_download(&Y);
    dlcemu_memcpy_dtoh(sh, S, sizeof(float) * (size_t)M);
    double *ref = malloc(sizeof(double) * (size_t)(M * N3));
    for (int64_t m = 0; m < M; m++) {
      double sum = 0, mag = 0;
      for (int64_t n = 0; n < N3; n++) {
        double x = n >= 1 && n <= N ? kt_to_f32(dt, X.host[m * ldx + n - 1]) : -1.0;
        ref[m * N3 + n] = x + kt_to_f32(dt, bias.host[n]);
        sum += x, mag += fabs(x);
      }
      /* an fp32 sum of N + 3 terms: 1e-3 of the sum of magnitudes bounds its rounding */
      if (!(fabs(sh[m] - sum) <= 1e-3 * mag + 1e-30) && fail++ < 5)
        fprintf(stderr, "pad_rows M=%lld N=%lld: S[%lld] = %.9g, expected %.9g\n", (long long)M, (long long)N, (long long)m,
                sh[m], sum);
    }
    printf("pad_rows S %s M=%lld N=%lld%s\n", dt == DLC_F16 ? "fp16" : "bf16", (long long)M, (long long)N,
           fail ? " FAILED" : "");
    fail |= check16("pad_rows", dt, M, N3, &Y, ldy, ref);
    free(ref);
  }
  kt_free(&X), kt_free(&bias), kt_free(&Y);
  dlcemu_mem_free(S);
  free(sh);
  return fail != 0;
}

/* fp32 X: row_max's fp32 instance (the row skeleton's 4-element vectors) */
static int row_max_fp32(int64_t B, int64_t M, int64_t N, int pad, uint64_t seed) {
  int64_t ldy = M + pad;
  size_t nx = (size_t)(B * M * N), ny = (size_t)(B * ldy);
  float *xh = malloc(sizeof(float) * nx + 4), *yh = malloc(sizeof(float) * ny + 4);
  dlcemu_deviceptr X = 0, Y = 0;
  dlcemu_mem_alloc(&X, sizeof(float) * nx), dlcemu_mem_alloc(&Y, sizeof(float) * ny);
  uint64_t s = seed;
  for (size_t i = 0; i < nx; i++) xh[i] = (float)(100 * kt_uniform(&s));
  for (size_t i = 0; i < ny; i++) yh[i] = -12345.0f;
  dlcemu_memcpy_htod(X, xh, sizeof(float) * nx), dlcemu_memcpy_htod(Y, yh, sizeof(float) * ny);
  dlc_status st = dlc_row_max(DLC_F32, B, M, N, kt_ptr(X), kt_ptr(Y), ldy, NULL);
  int bad = 0;
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "row_max fp32: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    bad = 1;
  } else {
    dlcemu_memcpy_dtoh(yh, Y, sizeof(float) * ny);
    for (int64_t b = 0; b < B; b++)
      for (int64_t m = 0; m < ldy; m++) {
        float r = -INFINITY;
        for (int64_t n = 0; m < M && n < N; n++) r = fmaxf(r, xh[(b * M + m) * N + n]);
        float want = m < M ? r : -12345.0f; /* the max is exact; the padding keeps its value */
        if (yh[b * ldy + m] != want && bad++ < 5)
          fprintf(stderr, "row_max fp32: Y[%lld][%lld] = %.9g, expected %.9g\n", (long long)b, (long long)m,
                  yh[b * ldy + m], want);
      }
  }
  printf("row_max fp32 B=%lld M=%lld N=%lld ldy=%lld%s\n", (long long)B, (long long)M, (long long)N, (long long)ldy,
         bad ? " FAILED" : "");
  dlcemu_mem_free(X), dlcemu_mem_free(Y);
  free(xh), free(yh);
  return bad != 0;
}

int main(void) {
  int fails = 0;
  for (int d = 0; d < 2; d++) {
    dlc_dtype dt = d ? DLC_BF16 : DLC_F16;
    fails += softmax_rows(dt, 5, 100, 0, 61 + (uint64_t)d);
    fails += softmax_rows(dt, 9, 512, 8, 63 + (uint64_t)d);
    fails += softmax_rows(dt, 3, 100, 3, 65 + (uint64_t)d);
    fails += bias_gelu(dt, 3, 77, 0, 11 + (uint64_t)d);
    fails += bias_gelu(dt, 2, 64, 8, 12 + (uint64_t)d);
    fails += bias_gelu(dt, 4, 131, 3, 13 + (uint64_t)d);
    fails += pad_rows(dt, 3, 77, 0, 15 + (uint64_t)d);
    fails += pad_rows(dt, 2, 5, 8, 16 + (uint64_t)d);
    fails += pad_rows(dt, 2, 2045, 3, 17 + (uint64_t)d);
    for (int op = 0; op < 3; op++) {
      fails += row_reduce(op, dt, 2, 3, 301, 1, 21 + (uint64_t)(op * 2 + d));
      fails += row_reduce(op, dt, 1, 5, 8, 0, 31 + (uint64_t)(op * 2 + d));
      fails += row_reduce(op, dt, 3, 1, 2050, 2, 41 + (uint64_t)(op * 2 + d));
    }
  }
  fails += row_max_fp32(2, 3, 301, 1, 51);
  fails += row_max_fp32(1, 2, 4, 0, 52);
  fails += row_max_fp32(3, 1, 1027, 2, 53);
  printf("%d failed\n", fails);
  return fails ? 1 : 0;
}
