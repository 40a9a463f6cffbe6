/* The 32-bit K part of the convolution's walking input (gpu_operand.kpart32,
 * docs/codegen.md "Walking operands"), through the real entry point on the
 * null backend (every check and the table lookup; a launch that only
 * records), with tensors that are never allocated:
 *
 *   - the steady-loop kernels (widths 8 and 4) keep X's K part,
 *     ci + C*kw + C*W*kh, as a 32-bit offset; the dispatcher checks its span,
 *     (C-1) + 2*C + 2*C*W elements, times the element size against INT32_MAX
 *     bytes.  A call one W under the bound takes the width-8 (width-4)
 *     kernel; one W past it the width-2 kernel, which forms its addresses in
 *     64 bits from the chunk functions.  Both dtypes, both strides, the
 *     default instance and the n1_64 bucket (K <= 64);
 *   - a shape whose span passes 2^31 elements (C = 256, W = 2^22) takes the
 *     width-2 kernel too;
 *   - on an sm90a device the instance's sm90a kernel, which keeps no K part,
 *     still takes the width-8 calls past the bound. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dlc/dlc.h"
#include "dlc_internal.h"

static int fails;
#define CHECK(c)                                                                \
  do {                                                                          \
    if (!(c)) fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c), fails++; \
  } while (0)

/* tensors 2^44 bytes apart: never allocated, never overlapping */
static void *fake(int i) { return (void *)((uintptr_t)(i + 1) << 44); }

static bool ends_with(const char *s, const char *t) {
  size_t n = strlen(s), m = strlen(t);
  return n >= m && strcmp(s + n - m, t) == 0;
}

/* The kernel the entry point launches for N = H = 1 (M = W), or NULL. */
static const char *pick(dlc_dtype dt, int64_t w, int64_t c, int64_t k, int stride) {
  dlc_status st = dlc_conv2d_bias_silu(dt, 1, 1, w, c, k, stride, stride, 1, 1, fake(0), fake(1), fake(2), fake(3), NULL);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "conv W=%lld C=%lld K=%lld: %s: %s\n", (long long)w, (long long)c, (long long)k,
            dlc_status_string(st), dlc_last_error_detail());
    return NULL;
  }
  return dlc__last_launch()->kernel->name;
}

/* The largest W whose span (3*C + 2*C*W - 1 elements of 2 bytes) fits
 * INT32_MAX bytes. */
static int64_t w_max(int64_t c) { return ((INT32_MAX / 2) - 3 * c + 1) / (2 * c); }

int main(void) {
  static const struct {
    int64_t c;
    const char *steady; /* the width the alignment selects */
  } widths[] = {{8, "_v8"}, {4, "_v4"}};
  static const int64_t Ks[] = {128, 64}; /* the default instance, the n1_64 bucket */
  for (int d = 0; d < 2; d++)
    for (int stride = 1; stride <= 2; stride++)
      for (int wi = 0; wi < 2; wi++)
        for (int ki = 0; ki < 2; ki++) {
          dlc_dtype dt = d ? DLC_BF16 : DLC_F16;
          int64_t c = widths[wi].c, k = Ks[ki], w = w_max(c);
          CHECK(2 * (3 * c + 2 * c * w - 1) <= INT32_MAX && 2 * (3 * c + 2 * c * (w + 1) - 1) > INT32_MAX);
          const char *under = pick(dt, w, c, k, stride), *past = pick(dt, w + 1, c, k, stride);
          bool bucket = k <= 64;
          bool ok = under && past && ends_with(under, widths[wi].steady) && ends_with(past, "_v2") &&
                    (strstr(under, "_b1_") != NULL) == bucket && (strstr(past, "_b1_") != NULL) == bucket;
          CHECK(ok);
          if (!ok || (d == 0 && stride == 1 && ki == 0))
            printf("conv W=%lld / %lld C=%lld K=%lld s%d: %s / %s\n", (long long)w, (long long)(w + 1), (long long)c,
                   (long long)k, stride, under ? under : "(none)", past ? past : "(none)");
        }
  /* a span past 2^31 elements */
  for (int d = 0; d < 2; d++) {
    const char *name = pick(d ? DLC_BF16 : DLC_F16, (int64_t)1 << 22, 256, 128, 1);
    CHECK(name && ends_with(name, "_v2"));
    if (d == 0) printf("conv W=2^22 C=256 K=128: %s\n", name ? name : "(none)");
  }
  /* sm90a: the sm90a kernel keeps no K part and takes the call */
  dlc__null_arch = DLC__ARCH_SM90A;
  for (int d = 0; d < 2; d++) {
    const char *name = pick(d ? DLC_BF16 : DLC_F16, w_max(8) + 1, 8, 128, 1);
    CHECK(name && ends_with(name, "_sm90a"));
    if (d == 0) printf("sm90a conv W=%lld C=8 K=128: %s\n", (long long)(w_max(8) + 1), name ? name : "(none)");
  }
  dlc__null_arch = DLC__ARCH_SM80;
  return fails ? 1 : 0;
}
