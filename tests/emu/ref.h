/*
 * ref.h: host reference semantics for the instruction tables in kernels/ops_*.def,
 * written from the PTX ISA pseudocode as plainly as possible (bit loops,
 * the host's own rounding modes, searches over all 16-bit values) so that
 * they share no code and no cleverness with the emulator.
 */
#ifndef DLC_EMU_REF_H
#define DLC_EMU_REF_H

#include <fenv.h>
#include <math.h>
#include <stdint.h>

#include "emu_test.h"

enum { RN, RZ, RM, RP };
enum { R_FTZ = 1, R_RELU = 2, R_SAT = 4 };
#define ANY_NAN32 0xDEADBEEFu /* expected value: any NaN pattern */

static inline uint32_t r_sat32(int64_t x) { return (uint32_t)(x > INT32_MAX ? INT32_MAX : x < INT32_MIN ? INT32_MIN : x); }
static inline int64_t r_sx(uint64_t x, int bits) {
  uint64_t m = (1ull << bits) - 1, s = 1ull << (bits - 1);
  x &= m;
  return (x & s) ? (int64_t)(x | ~m) : (int64_t)x;
}
static inline uint32_t r_abs64(int64_t x) { return (uint32_t)(x < 0 ? -x : x); }
static inline int64_t r_clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }
static inline uint32_t r_div_s32(uint32_t a, uint32_t b) {
  if ((int32_t)b == -1) return 0u - a;
  return (uint32_t)((int32_t)a / (int32_t)b);
}
static inline uint32_t r_rem_s32(uint32_t a, uint32_t b) {
  if ((int32_t)b == -1) return 0;
  return (uint32_t)((int32_t)a % (int32_t)b);
}
static inline uint64_t r_div_s64(uint64_t a, uint64_t b) {
  if ((int64_t)b == -1) return 0 - a;
  return (uint64_t)((int64_t)a / (int64_t)b);
}
static inline uint64_t r_rem_s64(uint64_t a, uint64_t b) {
  if ((int64_t)b == -1) return 0;
  return (uint64_t)((int64_t)a % (int64_t)b);
}
static inline int32_t r_div_s16(uint16_t a, uint16_t b) { return (int16_t)a / (int16_t)b; }
static inline uint32_t r_relu32(uint32_t x) { return (int32_t)x < 0 ? 0 : x; }

static inline uint32_t r_popc64(uint64_t a) {
  uint32_t n = 0;
  for (int i = 0; i < 64; i++) n += (a >> i) & 1;
  return n;
}
static inline uint32_t r_popc(uint32_t a) { return r_popc64(a); }
static inline uint32_t r_clz64(uint64_t a) {
  uint32_t n = 0;
  for (int i = 63; i >= 0 && !((a >> i) & 1); i--) n++;
  return n;
}
static inline uint32_t r_clz32(uint32_t a) { return r_clz64(a) - 32; }
static inline uint64_t r_brev64(uint64_t a) {
  uint64_t r = 0;
  for (int i = 0; i < 64; i++) r |= ((a >> i) & 1) << (63 - i);
  return r;
}
static inline uint32_t r_brev32(uint32_t a) { return (uint32_t)(r_brev64(a) >> 32); }

/* bfind: the position of the most significant bit that differs from the sign (signed) or is set */
static inline uint32_t r_bfind32(uint32_t a, int sg, int shiftamt) {
  uint32_t d = 0xFFFFFFFFu;
  for (int i = 31; i >= 0; i--) {
    uint32_t bit = (a >> i) & 1, sign = sg ? a >> 31 : 0;
    if (bit != sign) {
      d = (uint32_t)i;
      break;
    }
  }
  if (shiftamt && d != 0xFFFFFFFFu) d = 31 - d;
  return d;
}
static inline uint32_t r_bfind64(uint64_t a, int sg) {
  for (int i = 63; i >= 0; i--) {
    uint64_t bit = (a >> i) & 1, sign = sg ? a >> 63 : 0;
    if (bit != sign) return (uint32_t)i;
  }
  return 0xFFFFFFFFu;
}

/* bfe / bfi: the PTX ISA pseudocode, bit by bit */
static inline uint64_t r_bfe(uint64_t a, uint32_t pos, uint32_t len, int sg, int msb) {
  uint64_t sbit = 0;
  if (sg && len) {
    uint32_t top = pos + len - 1 < (uint32_t)msb ? pos + len - 1 : (uint32_t)msb;
    sbit = (a >> top) & 1;
  }
  uint64_t d = 0;
  for (int i = 0; i <= msb; i++) {
    uint64_t bit = ((uint32_t)i < len && pos + (uint32_t)i <= (uint32_t)msb) ? (a >> (pos + (uint32_t)i)) & 1 : sbit;
    d |= bit << i;
  }
  return d;
}
static inline uint32_t r_bfe32(uint32_t a, uint32_t pos, uint32_t len, int sg) { return (uint32_t)r_bfe(a, pos, len, sg, 31); }
static inline uint64_t r_bfe64(uint64_t a, uint32_t pos, uint32_t len, int sg) { return r_bfe(a, pos, len, sg, 63); }
static inline uint32_t r_bfi32(uint32_t a, uint32_t b, uint32_t pos, uint32_t len) {
  uint32_t f = b;
  for (uint32_t i = 0; i < len && pos + i <= 31; i++) f = (f & ~(1u << (pos + i))) | (((a >> i) & 1) << (pos + i));
  return f;
}

/* prmt: byte i of the result picks byte sel_i of the 8-byte value {b, a} */
static inline uint32_t r_prmt(uint32_t a, uint32_t b, uint32_t c, int mode) {
  uint8_t src[8];
  for (int i = 0; i < 4; i++) {
    src[i] = (uint8_t)(a >> (8 * i));
    src[i + 4] = (uint8_t)(b >> (8 * i));
  }
  static const uint8_t tab[7][4][4] = {
    {{0}},
    /* f4e */ {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},
    /* b4e */ {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},
    /* rc8 */ {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},
    /* ecl */ {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},
    /* ecr */ {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},
    /* rc16 */ {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},
  };
  uint32_t d = 0;
  for (int i = 0; i < 4; i++) {
    uint8_t byte;
    if (mode == 0) {
      uint32_t sel = (c >> (4 * i)) & 0xF;
      byte = src[sel & 7];
      if (sel & 8) byte = (byte & 0x80) ? 0xFF : 0x00;
    } else {
      byte = src[tab[mode][c & 3][i]];
    }
    d |= (uint32_t)byte << (8 * i);
  }
  return d;
}

/* bmsk: the PTX ISA pseudocode */
static inline uint32_t r_bmsk(uint32_t a, uint32_t b, int clamp) {
  uint32_t a1 = a & 0x1f, b1 = b & 0x1f, sum = a1 + b1;
  uint64_t mask0 = (0xFFFFFFFFull << a1) & 0xFFFFFFFFu, mask1 = (0xFFFFFFFFull << sum) & 0xFFFFFFFFu;
  int over = sum >= 32;
  if (clamp) {
    if (a >= 32) {
      over = 1;
      mask0 = 0;
    }
    if (b >= 32) over = 1;
  }
  if (over) mask1 = 0;
  else if (b1 == 0) mask1 = 0xFFFFFFFFu;
  return (uint32_t)(mask0 & ~mask1);
}
/* fns: the n-th set bit from base, searching up (offset > 0) or down */
static inline uint32_t r_fns(uint32_t mask, uint32_t base, int32_t offset) {
  if (offset == 0) return ((mask >> base) & 1) ? base : 0xFFFFFFFFu;
  int count = 0, want = offset > 0 ? offset : -offset;
  for (int pos = (int)base; pos >= 0 && pos < 32; pos += offset > 0 ? 1 : -1)
    if ((mask >> pos) & 1 && ++count == want) return (uint32_t)pos;
  return 0xFFFFFFFFu;
}

/* shf: funnel shift of the 64-bit value {b, a} */
static inline uint32_t r_shf(uint32_t a, uint32_t b, uint32_t c, int left, int wrap) {
  uint32_t n = wrap ? (c & 31) : (c > 32 ? 32 : c);
  uint64_t v = ((uint64_t)b << 32) | a;
  if (left) return (uint32_t)((v << n) >> 32);
  return (uint32_t)(v >> n);
}
static inline uint32_t r_lop3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut) {
  uint32_t d = 0;
  for (int i = 0; i < 32; i++) {
    uint32_t idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
    d |= ((lut >> idx) & 1) << i;
  }
  return d;
}
static inline uint32_t r_dp4a(uint32_t a, uint32_t b, uint32_t c, int as, int bs) {
  int64_t s = (int32_t)c;
  for (int i = 0; i < 4; i++) {
    int64_t x = as ? (int8_t)(a >> (8 * i)) : (uint8_t)(a >> (8 * i));
    int64_t y = bs ? (int8_t)(b >> (8 * i)) : (uint8_t)(b >> (8 * i));
    s += x * y;
  }
  return (uint32_t)s;
}
static inline uint32_t r_dp2a(uint32_t a, uint32_t b, uint32_t c, int as, int bs, int hi) {
  int64_t s = (int32_t)c;
  for (int i = 0; i < 2; i++) {
    int64_t x = as ? (int16_t)(a >> (16 * i)) : (uint16_t)(a >> (16 * i));
    int64_t y = bs ? (int8_t)(b >> (8 * (i + 2 * hi))) : (uint8_t)(b >> (8 * (i + 2 * hi)));
    s += x * y;
  }
  return (uint32_t)s;
}

/* ------------------------------------------------------------ floats */
static inline int r_fe(int mode) {
  return mode == RZ ? FE_TOWARDZERO : mode == RM ? FE_DOWNWARD : mode == RP ? FE_UPWARD : FE_TONEAREST;
}
static inline float r_dir2(int mode, char op, float a, float b) {
  volatile float x = a, y = b, r;
  fesetround(r_fe(mode));
  switch (op) {
  case '+': r = x + y; break;
  case '-': r = x - y; break;
  case '*': r = x * y; break;
  default: r = x / y; break;
  }
  fesetround(FE_TONEAREST);
  return r;
}
static inline float r_dir3(int mode, float a, float b, float c) {
  volatile float x = a, y = b, z = c, r;
  fesetround(r_fe(mode));
  r = fmaf(x, y, z);
  fesetround(FE_TONEAREST);
  return r;
}
static inline float r_dirsqrt(int mode, float a) {
  volatile float x = a, r;
  fesetround(r_fe(mode));
  r = sqrtf(x);
  fesetround(FE_TONEAREST);
  return r;
}
static inline float r_d2f(int mode, double d) {
  volatile double x = d;
  volatile float r;
  fesetround(r_fe(mode));
  r = (float)x;
  fesetround(FE_TONEAREST);
  return r;
}
static inline double r_ddir(int mode, char op, double a, double b, double c) {
  volatile double x = a, y = b, z = c, r;
  fesetround(r_fe(mode));
  switch (op) {
  case '+': r = x + y; break;
  case '-': r = x - y; break;
  case '*': r = x * y; break;
  case '/': r = x / y; break;
  case 'f': r = fma(x, y, z); break;
  default: r = sqrt(x); break;
  }
  fesetround(FE_TONEAREST);
  return r;
}
static inline float r_i2f(int mode, int32_t v) {
  volatile int32_t x = v;
  volatile float r;
  fesetround(r_fe(mode));
  r = (float)x;
  fesetround(FE_TONEAREST);
  return r;
}
static inline float r_u2f(int mode, uint32_t v) {
  volatile int64_t x = v;
  volatile float r;
  fesetround(r_fe(mode));
  r = (float)x;
  fesetround(FE_TONEAREST);
  return r;
}
static inline float r_ul2f(int mode, uint64_t v) {
  (void)mode;
  volatile uint64_t x = v;
  return (float)x; /* round to nearest only */
}
static inline double r_l2d(int mode, int64_t v) {
  volatile int64_t x = v;
  volatile double r;
  fesetround(r_fe(mode));
  r = (double)x;
  fesetround(FE_TONEAREST);
  return r;
}
static inline float r_ftz(float x) { return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x; }
static inline float r_sat(float x) { return isnan(x) || x <= 0 ? 0.0f : x > 1 ? 1.0f : x; }
static inline float r_fminmax(float a, float b, int ismax, int nanprop) {
  if (isnan(a) || isnan(b)) {
    if (nanprop || (isnan(a) && isnan(b))) return NAN;
    return isnan(a) ? b : a;
  }
  if (a == b) return (signbit(a) != 0) == !ismax ? a : b;
  return ismax ? (a > b ? a : b) : (a < b ? a : b);
}
static inline float r_xorsign(float r, float a, float b) {
  int neg = (signbit(a) != 0) != (signbit(b) != 0);
  return neg ? -fabsf(r) : fabsf(r);
}
static inline double r_dminmax(double a, double b, int ismax) {
  if (isnan(a) || isnan(b)) return isnan(a) ? b : a;
  if (a == b) return (signbit(a) != 0) == !ismax ? a : b;
  return ismax ? (a > b ? a : b) : (a < b ? a : b);
}

/* float -> integer with rounding mode 0 rni, 1 rzi, 2 rmi, 3 rpi, saturating */
static inline uint32_t r_f2i(double x, int mode, int sg, int bits) {
  if (isnan(x)) return 0;
  double r = mode == 0 ? nearbyint(x) : mode == 1 ? trunc(x) : mode == 2 ? floor(x) : ceil(x);
  double lo = sg ? -ldexp(1, bits - 1) : 0, hi = sg ? ldexp(1, bits - 1) - 1 : ldexp(1, bits) - 1;
  if (r < lo) r = lo;
  if (r > hi) r = hi;
  uint64_t v = (uint64_t)(int64_t)r;
  return (uint32_t)(v & ((1ull << bits) - 1));
}
static inline int64_t r_f2i64(float x) {
  if (isnan(x)) return 0;
  double r = trunc(x);
  if (r <= -9223372036854775808.0) return INT64_MIN;
  if (r >= 9223372036854775808.0) return INT64_MAX;
  return (int64_t)r;
}

/* ------------------------------------------------------------ halves */
static inline uint16_t r_relu16(uint16_t h) {
  if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) return 0x7FFF;
  return (h & 0x8000) ? 0 : h;
}
static inline uint32_t r_tf32_rna(uint32_t a) {
  if ((a & 0x7F800000u) == 0x7F800000u) return (a & 0x7FFFFFu) ? ANY_NAN32 : a;
  return (a + 0x1000u) & 0xFFFFE000u;
}
static inline uint32_t r_canon_in(uint32_t u) { return isnan(t_f32(u)) ? ANY_NAN32 : u; }

static inline long double r_hval(uint16_t h, int bf, int ftz) {
  if (ftz && !bf && (h & 0x7C00) == 0) h &= 0x8000;
  return bf ? (long double)t_bf2f(h) : (long double)t_h2f(h);
}
/* round x (whose exact value differs from x by a quantity of sign `sticky`) */
uint16_t r_round16s(long double x, int sticky, int bf, int mode);
static inline uint16_t r_hfinish(long double x, int sticky, int bf, int flags) {
  if (isnan(x)) return (flags & R_SAT) ? 0 : 0x7FFF; /* .sat turns NaN into +0 */
  if ((flags & R_SAT)) {
    if (x <= 0 || (x == 0 && sticky <= 0)) return 0;
    if (x >= 1) return bf ? 0x3F80 : 0x3C00;
  }
  if ((flags & R_RELU) && (x < 0 || (x == 0 && signbit(x)))) return 0;
  uint16_t r = r_round16s(x, sticky, bf, RN);
  if ((flags & R_FTZ) && !bf && (r & 0x7C00) == 0) r &= 0x8000;
  return r;
}
static inline uint32_t r_h2(uint16_t a, uint16_t b, int bf, char op, int flags) {
  long double x = r_hval(a, bf, flags & R_FTZ), y = r_hval(b, bf, flags & R_FTZ);
  long double r = op == '+' ? x + y : op == '-' ? x - y : x * y; /* exact for f16 */
  return r_hfinish(r, 0, bf, flags);
}
/* fma: the product is exact; the sum's rounding error is kept as a sticky sign */
static inline uint32_t r_h3(uint16_t a, uint16_t b, uint16_t c, int bf, int flags) {
  long double x = r_hval(a, bf, 0), y = r_hval(b, bf, 0), z = r_hval(c, bf, 0);
  long double p = x * y;
  long double s = p + z;
  int sticky = 0;
  if (isfinite(s)) {
    long double bb = s - p;
    long double err = (p - (s - bb)) + (z - bb);
    sticky = err > 0 ? 1 : err < 0 ? -1 : 0;
  }
  return r_hfinish(s, sticky, bf, flags);
}
static inline uint32_t r_hminmax(uint16_t a, uint16_t b, int bf, int ismax, int nanprop) {
  float x = bf ? t_bf2f(a) : t_h2f(a), y = bf ? t_bf2f(b) : t_h2f(b);
  if (isnan(x) || isnan(y)) {
    if (nanprop || (isnan(x) && isnan(y))) return 0x7FFF;
    return isnan(x) ? b : a;
  }
  if (x == y) return ((a & 0x8000) != 0) == !ismax ? a : b;
  return (ismax ? x > y : x < y) ? a : b;
}

#endif
