/*
 * fp.c: exact floating-point rounding for the emulator (see fp.h).
 *
 * The hardware rounds every conversion once; so does dlcemu_fp_round(): it takes the
 * exact value as sign, 64-bit significand, exponent and sticky bit and
 * produces the target's bits for RN (ties to even), RNA (ties away), RZ, RM
 * and RP, including subnormals and the overflow rule of each mode.  Directed
 * f32/f16 arithmetic uses round-to-odd in double (TwoSum / exact remainders),
 * then one dlcemu_fp_round(); f64 in a directed mode sets the host rounding mode
 * (this file is compiled with -frounding-math).
 */
#include "fp.h"

#include <fenv.h>
#include <float.h>
#include <math.h>

#include "emu.h"

#if FLT_EVAL_METHOD != 0
#error "the emulator needs float and double arithmetic evaluated in their own precision"
#endif

typedef struct fmt_info {
  int m;     /* stored significand bits */
  int e;     /* exponent bits */
  int bias;
} fmt_info;

static const fmt_info fmts[] = {
  [FMT_F16] = {10, 5, 15},
  [FMT_BF16] = {7, 8, 127},
  [FMT_TF32] = {10, 8, 127},
  [FMT_F32] = {23, 8, 127},
  [FMT_F64] = {52, 11, 1023},
};

static uint64_t canon_nan(int fmt) {
  switch (fmt) {
  case FMT_F16: return F16_CANON_NAN;
  case FMT_BF16: return BF16_CANON_NAN;
  case FMT_TF32:
  case FMT_F32: return F32_CANON_NAN;
  default: return F64_CANON_NAN;
  }
}

/* the format's bits in its container (tf32 lives in the top of an f32) */
static uint64_t container(int fmt, uint64_t bits) { return fmt == FMT_TF32 ? bits << 13 : bits; }

static uint64_t max_finite(const fmt_info *f) {
  return ((uint64_t)((1 << f->e) - 2) << f->m) | ((1ull << f->m) - 1);
}

uint64_t dlcemu_fp_round(int fmt, int sign, uint64_t mant, int exp, int sticky, int rnd, int opts) {
  const fmt_info *f = &fmts[fmt];
  uint64_t sbit = (uint64_t)(sign ? 1 : 0) << (f->m + f->e);
  if (mant == 0) {
    if (!sticky) return container(fmt, sbit);
    mant = 1; /* only a tail: far below any subnormal */
    exp = -4000;
  }
  int lz = __builtin_clzll(mant);
  mant <<= lz;
  exp -= lz;
  int E = exp + 63; /* exponent of the leading bit */
  int emin = 1 - f->bias;
  int shift = 63 - f->m;
  if (E < emin) shift += emin - E;
  uint64_t kept, guard, rest;
  if (shift >= 64) {
    kept = 0;
    if (shift == 64) {
      guard = mant >> 63;
      rest = (mant << 1) != 0;
    } else {
      guard = 0;
      rest = 1;
    }
  } else {
    kept = mant >> shift;
    guard = (mant >> (shift - 1)) & 1;
    rest = (mant & ((1ull << (shift - 1)) - 1)) != 0;
  }
  rest |= (uint64_t)(sticky != 0);
  int up = 0;
  switch (rnd) {
  case RND_RZ: up = 0; break;
  case RND_RM: up = sign && (guard || rest); break;
  case RND_RP: up = !sign && (guard || rest); break;
  case RND_RNA: up = guard != 0; break;
  default: up = guard && (rest || (kept & 1)); break;
  }
  kept += (uint64_t)up;
  uint64_t bits;
  if (E >= emin) {
    /* kept is in [2^m, 2^(m+1)]; the add carries a rounding overflow into the exponent */
    bits = ((uint64_t)(E + f->bias - 1) << f->m) + kept;
  } else {
    bits = kept; /* subnormal; 2^m encodes the smallest normal */
  }
  uint64_t maxf = max_finite(f);
  if (E > f->bias + 1 || bits > maxf) {
    int to_inf;
    switch (rnd) {
    case RND_RZ: to_inf = 0; break;
    case RND_RM: to_inf = sign; break;
    case RND_RP: to_inf = !sign; break;
    default: to_inf = 1; break;
    }
    bits = (to_inf && !(opts & FPO_SATFINITE)) ? (uint64_t)((1 << f->e) - 1) << f->m : maxf;
  }
  if ((opts & FPO_FTZ) && bits != 0 && bits < (1ull << f->m)) bits = 0;
  return container(fmt, sbit | bits);
}

uint64_t dlcemu_fp_from_double(int fmt, double x, int rnd, int opts) {
  const fmt_info *f = &fmts[fmt];
  uint64_t u = fp_u64(x);
  int sign = (int)(u >> 63);
  int e = (int)((u >> 52) & 0x7FF);
  uint64_t frac = u & ((1ull << 52) - 1);
  if (opts & FPO_SAT01) { /* clamp to [+0, 1]; NaN becomes +0 */
    if (x != x || x <= 0) return 0;
    if (x >= 1.0) return container(fmt, (uint64_t)f->bias << f->m);
  }
  if (e == 0x7FF && frac) return canon_nan(fmt);
  if ((opts & FPO_RELU) && sign) return 0;
  uint64_t sbit = (uint64_t)sign << (f->m + f->e);
  if (e == 0x7FF) {
    if (opts & FPO_SATFINITE) return container(fmt, sbit | max_finite(f));
    return container(fmt, sbit | ((uint64_t)((1 << f->e) - 1) << f->m));
  }
  if (e == 0 && frac == 0) return container(fmt, sbit);
  if (fmt == FMT_F64) {
    if ((opts & FPO_FTZ) && e == 0) return sbit;
    return u;
  }
  uint64_t mant = e ? frac | (1ull << 52) : frac;
  int ex = e ? e - 1075 : -1074;
  return dlcemu_fp_round(fmt, sign, mant, ex, 0, rnd, opts);
}

uint64_t dlcemu_fp_from_int(int fmt, int neg, uint64_t mag, int rnd, int opts) {
  if (mag == 0) return 0;
  return dlcemu_fp_round(fmt, neg, mag, 0, 0, rnd, opts);
}

double dlcemu_fp_to_double(int fmt, uint64_t bits) {
  switch (fmt) {
  case FMT_F16: return fp_f16_to_f32((uint16_t)bits);
  case FMT_BF16: return fp_bf16_to_f32((uint16_t)bits);
  case FMT_TF32:
  case FMT_F32: return fp_f32((uint32_t)bits);
  default: return fp_f64(bits);
  }
}

/* move x one place toward the exact value x + err when x's last bit is even */
static double make_odd(double x, double err) {
  if (err == 0 || isinf(x) || isnan(x)) return x;
  uint64_t u = fp_u64(x);
  if (u & 1) return x;
  return nextafter(x, err > 0 ? INFINITY : -INFINITY);
}

double dlcemu_fp_rto_add(double a, double b) {
  double s = a + b;
  if (isinf(s) || isnan(s)) return s;
  double bb = s - a;
  double err = (a - (s - bb)) + (b - bb);
  return make_odd(s, err);
}

double dlcemu_fp_rto_fma(double a, double b, double c) { return dlcemu_fp_rto_add(a * b, c); }

double dlcemu_fp_rto_div(double a, double b) {
  double q = a / b;
  if (isinf(q) || isnan(q) || q == 0) return q;
  double r = fma(-q, b, a); /* exact remainder */
  if (r == 0) return q;
  /* the exact quotient is q + r/b */
  return make_odd(q, (r > 0) == (b > 0) ? 1.0 : -1.0);
}

double dlcemu_fp_rto_sqrt(double a) {
  double s = sqrt(a);
  if (isinf(s) || isnan(s) || s == 0) return s;
  double r = fma(-s, s, a);
  if (r == 0) return s;
  return make_odd(s, r);
}

double dlcemu_fp_f64_op(int op, double a, double b, double c, int rnd) {
  int mode = FE_TONEAREST;
  switch (rnd) {
  case RND_RZ: mode = FE_TOWARDZERO; break;
  case RND_RM: mode = FE_DOWNWARD; break;
  case RND_RP: mode = FE_UPWARD; break;
  default: break;
  }
  int old = fegetround();
  fesetround(mode);
  volatile double va = a, vb = b, vc = c;
  volatile double r;
  switch (op) {
  case FP64_ADD: r = va + vb; break;
  case FP64_MUL: r = va * vb; break;
  case FP64_FMA: r = fma(va, vb, vc); break;
  case FP64_DIV: r = va / vb; break;
  case FP64_SQRT: r = sqrt(va); break;
  default: r = 1.0 / va; break;
  }
  double out = r;
  fesetround(old);
  return out;
}
