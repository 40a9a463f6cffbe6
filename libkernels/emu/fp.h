/*
 * fp.h: floating-point formats and exact rounding for the emulator.
 *
 * Every narrowing conversion (f64/f32 -> f32/f16/bf16/tf32, integer -> float)
 * goes through one routine, dlcemu_fp_round(), that rounds an exact value
 * (sign, 64-bit significand, binary exponent, sticky bit) to a target format
 * in any PTX rounding mode, with IEEE subnormals, overflow to Inf or to the
 * largest finite value (.satfinite / directed modes), and optional flush to
 * zero.  Arithmetic in a directed rounding mode is computed in double with
 * round-to-odd and then rounded once to the target, which is exact because
 * double carries more than p+2 bits for every target here.
 */
#ifndef DLC_EMU_FP_H
#define DLC_EMU_FP_H

#include <stdint.h>
#include <string.h>

enum { FMT_F16, FMT_BF16, FMT_TF32, FMT_F32, FMT_F64 };

/* options of dlcemu_fp_round / dlcemu_fp_from_double */
enum { FPO_SATFINITE = 1, FPO_FTZ = 2, FPO_RELU = 4, FPO_SAT01 = 8 };

/* canonical NaNs produced by the hardware */
#define F16_CANON_NAN 0x7FFFu
#define BF16_CANON_NAN 0x7FFFu
#define F32_CANON_NAN 0x7FFFFFFFu
#define F64_CANON_NAN 0x7FFFFFFFFFFFFFFFull

static inline float fp_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t fp_u32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline double fp_f64(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }
static inline uint64_t fp_u64(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }

/* exact widening conversions */
static inline float fp_f16_to_f32(uint16_t h) {
  uint32_t s = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0) {
    float v = (float)m * 0x1p-24f; /* exact: m < 2^10 */
    return s ? -v : v;
  }
  if (e == 31) return fp_f32(s | 0x7F800000u | (m << 13));
  return fp_f32(s | ((e + 112u) << 23) | (m << 13));
}
static inline float fp_bf16_to_f32(uint16_t h) { return fp_f32((uint32_t)h << 16); }

/* Round (-1)^sign * mant * 2^exp (+ a nonzero tail below mant when sticky) to
 * format fmt with rounding mode rnd (RND_RN, RND_RZ, RND_RM, RND_RP, RND_RNA)
 * and options FPO_*.  Returns the bit pattern. */
uint64_t dlcemu_fp_round(int fmt, int sign, uint64_t mant, int exp, int sticky, int rnd, int opts);

/* Round a double (NaN/Inf/zero handled) to fmt. */
uint64_t dlcemu_fp_from_double(int fmt, double x, int rnd, int opts);
/* Round an integer magnitude with sign to fmt. */
uint64_t dlcemu_fp_from_int(int fmt, int neg, uint64_t mag, int rnd, int opts);
/* Value of a format's bits as a double (exact). */
double dlcemu_fp_to_double(int fmt, uint64_t bits);

/* Round-to-odd double arithmetic: the result carries the sticky bit in its
 * last place, so one later rounding to a narrower format is exact. */
double dlcemu_fp_rto_add(double a, double b);
double dlcemu_fp_rto_fma(double a, double b, double c);   /* a*b must be exact in double */
double dlcemu_fp_rto_div(double a, double b);
double dlcemu_fp_rto_sqrt(double a);

/* f64 arithmetic in a directed mode (fesetround around the host op). */
double dlcemu_fp_f64_op(int op, double a, double b, double c, int rnd);
enum { FP64_ADD, FP64_MUL, FP64_FMA, FP64_DIV, FP64_SQRT, FP64_RCP };

/* flush a subnormal f32 / f16 to a sign-preserving zero */
static inline float fp_ftz32(float x) {
  uint32_t u = fp_u32(x);
  return (u & 0x7F800000u) == 0 ? fp_f32(u & 0x80000000u) : x;
}
static inline uint16_t fp_ftz16(uint16_t h) { return (h & 0x7C00u) == 0 ? (uint16_t)(h & 0x8000u) : h; }

#endif /* DLC_EMU_FP_H */
