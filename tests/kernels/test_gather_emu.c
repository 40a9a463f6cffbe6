/* The Gather ops of tests/kernels/extra/ (torch.gather through an int32
 * index, compiled on the row skeleton: the index is loaded, guarded, and
 * selects the element), run in the PTX emulator (memcheck on) against FP64
 * references written here from torch.gather's definition (tolerance:
 * kt.h):
 *   gather_ew    Y[m,k] = silu(g) * 2 + bias[k], g = X[m, I[m,k]]
 *   gather_view  Z[k,c] = XS[J[k,c], c], XS = X flipped along N, padded by
 *                a row of zeros on top, sliced to columns 1..N-1:
 *                XS[j,c] = j >= 1 ? X[j-1, N-2-c] : 0
 * where an index outside [0, size) reads 0; the indices run over
 * [-3, size + 3), so that negative and past-the-end ones occur on every
 * row.  fp16 and bf16, on shapes with tails (rows shorter and longer than
 * a CTA's 256 x 8 elements), padded leading dims; the padding of the
 * output keeps its canary and the inputs are not written. */
#include "kt.h"

#define CANARY 0x7E5Bu

/* n int32 values in the emulator, and their host copy */
typedef struct idx_buf {
  dlcemu_deviceptr dev;
  int32_t *host;
  size_t n;
} idx_buf;

static void idx_fill(idx_buf *b, size_t n, int64_t size, uint64_t *s) {
  b->n = n;
  b->host = malloc(sizeof(int32_t) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) {
    /* uniform over [-3, size + 3) */
    int64_t v = -3 + (int64_t)((double)(size + 6) * (kt_uniform(s) + 1) / 2);
    b->host[i] = (int32_t)(v < size + 3 ? v : size + 2);
  }
  dlcemu_mem_alloc(&b->dev, sizeof(int32_t) * n + 4);
  dlcemu_memcpy_htod(b->dev, b->host, sizeof(int32_t) * n);
}

static int idx_unchanged(const idx_buf *b) {
  int32_t *back = malloc(sizeof(int32_t) * (b->n ? b->n : 1));
  dlcemu_memcpy_dtoh(back, b->dev, sizeof(int32_t) * b->n);
  int same = memcmp(back, b->host, sizeof(int32_t) * b->n) == 0;
  free(back);
  return same;
}

static void idx_free(idx_buf *b) {
  dlcemu_mem_free(b->dev);
  free(b->host);
}

/* Y[R, C] with leading dim ld against ref[R*C]: within kt.h's tolerance,
 * the padding untouched; counts the out-of-range indices seen */
static int check(const char *what, dlc_dtype dt, int64_t R, int64_t C, const kt_buf *Y, int64_t ld, const double *ref,
                 int64_t zeros) {
  double mag = 0;
  for (int64_t i = 0; i < R * C; i++) mag = fmax(mag, fabs(ref[i]));
  int bad = 0;
  for (int64_t r = 0; r < R; r++)
    for (int64_t c = 0; c < ld; c++) {
      uint16_t y = Y->host[r * ld + c];
      if (c >= C) {
        if (y != CANARY && bad++ < 5) fprintf(stderr, "%s: [%lld][%lld] in the padding was written\n", what, (long long)r, (long long)c);
        continue;
      }
      double x = ref[r * C + c], rr = kt_round(dt, x), v = kt_to_f32(dt, y);
      double err = fabs(v - rr), tol = fmax(kt_ulp(dt, rr), 1e-3 * (fabs(x) + mag));
      if (!(err <= tol) && bad++ < 5)
        fprintf(stderr, "%s R=%lld C=%lld: [%lld][%lld] = %g, expected %g\n", what, (long long)R, (long long)C,
                (long long)r, (long long)c, v, rr);
    }
  printf("%s %s %lldx%lld ld=%lld (%lld indices out of range)%s\n", what, dt == DLC_F16 ? "fp16" : "bf16", (long long)R,
         (long long)C, (long long)ld, (long long)zeros, bad ? " FAILED" : "");
  return bad != 0;
}

static int gather_ew(dlc_dtype dt, int64_t M, int64_t N, int64_t K, int pad, uint64_t seed) {
  int64_t ldx = N + pad, ldi = K + pad, ldy = K + 2 * pad + 1;
  kt_buf X = {0}, bias = {0}, Y = {0};
  idx_buf I = {0};
  uint64_t s = seed;
  kt_alloc(&X, (size_t)(M * ldx), 0), kt_alloc(&bias, (size_t)K, 0), kt_alloc(&Y, (size_t)(M * ldy), 0);
  for (size_t i = 0; i < X.n; i++) X.host[i] = kt_from_f32(dt, (float)(3 * kt_uniform(&s)));
  for (size_t i = 0; i < bias.n; i++) bias.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < Y.n; i++) Y.host[i] = CANARY;
  idx_fill(&I, (size_t)(M * ldi), N, &s);
  kt_upload(&X), kt_upload(&bias), kt_upload(&Y);
  dlc_status st = dlc_gather_ew(dt, M, N, K, kt_ptr(X.dev), ldx, kt_ptr(I.dev), ldi, kt_ptr(bias.dev), kt_ptr(Y.dev),
                                ldy, NULL);
  int fail = 0;
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "gather_ew: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  } else {
    kt_download(&Y);
    double *ref = malloc(sizeof(double) * (size_t)(M * K + 1));
    int64_t zeros = 0;
    for (int64_t m = 0; m < M; m++)
      for (int64_t k = 0; k < K; k++) {
        int64_t j = I.host[m * ldi + k];
        double g = 0 <= j && j < N ? kt_to_f32(dt, X.host[m * ldx + j]) : 0;
        zeros += !(0 <= j && j < N);
        ref[m * K + k] = g / (1 + exp(-g)) * 2 + kt_to_f32(dt, bias.host[k]);
      }
    fail = check("gather_ew", dt, M, K, &Y, ldy, ref, zeros);
    free(ref);
    if (!idx_unchanged(&I)) fprintf(stderr, "gather_ew: the index was written\n"), fail = 1;
  }
  kt_free(&X), kt_free(&bias), kt_free(&Y), idx_free(&I);
  return fail;
}

static int gather_view(dlc_dtype dt, int64_t M, int64_t N, int64_t K, int pad, uint64_t seed) {
  int64_t C = N - 1, ldx = N + pad, ldj = C + pad, ldz = C + pad;
  kt_buf X = {0}, Z = {0};
  idx_buf J = {0};
  uint64_t s = seed;
  kt_alloc(&X, (size_t)(M * ldx), 0), kt_alloc(&Z, (size_t)(K * ldz), 0);
  for (size_t i = 0; i < X.n; i++) X.host[i] = kt_from_f32(dt, (float)(1 + kt_uniform(&s)));
  for (size_t i = 0; i < Z.n; i++) Z.host[i] = CANARY;
  idx_fill(&J, (size_t)(K * ldj), M + 1, &s);
  kt_upload(&X), kt_upload(&Z);
  dlc_status st = dlc_gather_view(dt, M, N, K, kt_ptr(X.dev), ldx, kt_ptr(J.dev), ldj, kt_ptr(Z.dev), ldz, NULL);
  int fail = 0;
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "gather_view: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  } else {
    kt_download(&Z);
    double *ref = malloc(sizeof(double) * (size_t)(K * C + 1));
    int64_t zeros = 0;
    for (int64_t k = 0; k < K; k++)
      for (int64_t c = 0; c < C; c++) {
        int64_t j = J.host[k * ldj + c];
        int in = 0 <= j && j < M + 1;
        zeros += !in;
        ref[k * C + c] = in && j >= 1 ? kt_to_f32(dt, X.host[(j - 1) * ldx + (N - 2 - c)]) : 0;
      }
    fail = check("gather_view", dt, K, C, &Z, ldz, ref, zeros);
    free(ref);
    if (!idx_unchanged(&J)) fprintf(stderr, "gather_view: the index was written\n"), fail = 1;
  }
  kt_free(&X), kt_free(&Z), idx_free(&J);
  return fail;
}

int main(void) {
  int fail = 0;
  static const dlc_dtype dts[] = {DLC_F16, DLC_BF16};
  for (int d = 0; d < 2; d++) {
    dlc_dtype dt = dts[d];
    fail |= gather_ew(dt, 1, 1, 1, 0, 1);
    fail |= gather_ew(dt, 3, 17, 33, 1, 2);
    fail |= gather_ew(dt, 5, 40, 7, 8, 3);
    fail |= gather_ew(dt, 2, 300, 2100, 3, 4); /* a row longer than a CTA's 2048 elements */
    fail |= gather_view(dt, 1, 2, 1, 0, 5);
    fail |= gather_view(dt, 9, 18, 5, 1, 6);
    fail |= gather_view(dt, 33, 100, 12, 8, 7);
  }
  return fail;
}
