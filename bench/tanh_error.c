/* tanh_error: the error of the "approx" math's lowered GELU (tanh form) and
 * SiLU epilogues (docs/codegen.md, "Lowered lets") against FP64, with
 * tanh.approx.f32 modelled by the PTX ISA's bound: tanh(u) (1 + d),
 * |d| = 2^-10.987, on either side.  Beside it, the ex2/rcp chain the
 * emitter wrote before (exp2 and the reciprocal exact).  A benchmark: it
 * prints figures and judges nothing; the hardware's own error is not
 * modelled beyond the bound. */
#include <math.h>
#include <stdio.h>

static double gelu64(double x) { return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
static double silu64(double x) { return x / (1 + exp(-x)); }

/* one ulp of fp16 at |v| (subnormals: 2^-24) */
static double ulp16(double v) {
  v = fabs(v);
  if (v < 0x1p-14) return 0x1p-24;
  int e;
  frexp(v, &e);
  return ldexp(1, e - 11);
}

int main(void) {
  const double d = exp2(-10.987);
  for (int f = 0; f < 2; f++) {
    double wn = 0, wx = 0, wrel = 0, wulp = 0, wo = 0;
    for (double xd = -12; xd <= 12; xd += 1.0 / 4096) {
      const float x = (float)xd;
      const double ref = f ? silu64(x) : gelu64(x);
      /* the lowered form, as generated: h = x / 2, u over h, fma(h, t, h) */
      const float h = x * 0.5f, sq = h * h;
      const float u = f ? h : h * fmaf(sq, 0.285419265f, 1.59576912f);
      /* the chain before: x / (1 + exp2(z)) */
      const float z = f ? x * -1.44269504f : (x + 0.044715f * (x * (x * x))) * -2.3022082f;
      const float old = x * (1.0f / (1.0f + exp2f(z)));
      if (fabs(old - ref) > wo) wo = fabs(old - ref);
      for (int s = -1; s <= 1; s += 2) {
        const float t = (float)(tanhf(u) * (1 + s * d));
        const double e = fabs((double)fmaf(h, t, h) - ref);
        if (e > wn) wn = e, wx = x;
        if (e / fmax(fabs(x), 1) > wrel) wrel = e / fmax(fabs(x), 1);
        if (fabs(ref) >= 0.25 * fabs(x) && e / ulp16(ref) > wulp) wulp = e / ulp16(ref);
      }
    }
    printf("%-9s x in [-12, 12]: lowered max |err| %.3g (at x = %g), max |err| / max(|x|, 1) %.3g,"
           " max %.2f fp16 ulps where |f(x)| >= |x| / 4; ex2/rcp chain max |err| %.3g\n",
           f ? "silu" : "gelu_tanh", wn, wx, wrel, wulp, wo);
  }
  return 0;
}
