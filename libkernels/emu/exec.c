/*
 * exec.c: the SIMT interpreter.
 *
 * A warp executes one instruction for all its active lanes at once: the
 * operands are register-file slots, so each case is a loop over the lanes of
 * the execution mask on uint64_t reg[slot][32] arrays.  Divergence uses
 * per-lane PCs and one deterministic rule: each step runs the runnable lanes
 * whose PC is the smallest; nvcc's structured code reconverges at join points
 * and loops run to completion before the lanes that left them go on.  While
 * all runnable lanes share one PC the warp is "converged" and only w->upc
 * moves.  Warp collectives (shfl, vote, match, redux, mma, ldmatrix,
 * stmatrix, bar.warp.sync) gather: lanes that arrive early wait until every
 * live lane of the member mask is at the same instruction.
 *
 * Arithmetic follows the PTX ISA: integer results are kept zero-extended to
 * their type width; f32 results with NaN are the canonical 0x7FFFFFFF;
 * f16/bf16 go through double and fp.c's exact rounding; .approx functions use
 * the host libm (see docs/emulator.md).  Memory accesses go through
 * resolve(), which does memcheck, and feed the statistics.
 */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "fp.h"
#include "mbar.h"
#include "race.h"
#include "sync.h"
#include "wgmma.h"

#define FULL 0xFFFFFFFFu

/* body runs with `l` bound to each lane of mask, in increasing order */
#define LANES(mask, ...)                                                                           \
  do {                                                                                             \
    uint32_t m_ = (mask);                                                                          \
    if (m_ == FULL) {                                                                              \
      for (int l = 0; l < 32; l++) {                                                               \
        __VA_ARGS__;                                                                               \
      }                                                                                            \
    } else {                                                                                       \
      while (m_) {                                                                                 \
        int l = __builtin_ctz(m_);                                                                 \
        m_ &= m_ - 1;                                                                              \
        __VA_ARGS__;                                                                               \
      }                                                                                            \
    }                                                                                              \
  } while (0)

static const uint8_t tsize[T_COUNT] = {
  [T_B8] = 1, [T_B16] = 2, [T_B32] = 4, [T_B64] = 8, [T_B128] = 16,
  [T_U8] = 1, [T_U16] = 2, [T_U32] = 4, [T_U64] = 8,
  [T_S8] = 1, [T_S16] = 2, [T_S32] = 4, [T_S64] = 8,
  [T_F16] = 2, [T_F16X2] = 4, [T_BF16] = 2, [T_BF16X2] = 4, [T_TF32] = 4, [T_F32] = 4, [T_F64] = 8,
};
static const uint8_t tsigned[T_COUNT] = {[T_S8] = 1, [T_S16] = 1, [T_S32] = 1, [T_S64] = 1};

static inline uint64_t bmask(unsigned bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }
static inline int64_t sext(uint64_t v, unsigned bits) {
  if (bits >= 64) return (int64_t)v;
  unsigned s = 64 - bits;
  return (int64_t)(v << s) >> s;
}
static inline float F32(uint64_t v) { return fp_f32((uint32_t)v); }
static inline double F64(uint64_t v) { return fp_f64(v); }
static inline uint64_t canon32(float r) { return r != r ? F32_CANON_NAN : fp_u32(r); }
static inline uint64_t canon64(double r) { return r != r ? F64_CANON_NAN : fp_u64(r); }
static inline uint64_t ld_le(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  memcpy(&v, p, n);
  return v;
}
static inline void st_le(uint8_t *p, uint64_t v, unsigned n) { memcpy(p, &v, n); }

/* ------------------------------------------------------- integer semantics */
static uint64_t int_sat32(int64_t x) {
  if (x > 2147483647ll) x = 2147483647ll;
  if (x < -2147483648ll) x = -2147483648ll;
  return (uint64_t)x & 0xFFFFFFFFu;
}

static uint64_t mul_part(const emu_insn *in, unsigned n, int sg, uint64_t a, uint64_t b) {
  if (in->flags & IF_WIDE) {
    if (sg) return (uint64_t)(sext(a, n) * sext(b, n)) & bmask(2 * n);
    return ((a & bmask(n)) * (b & bmask(n))) & bmask(2 * n);
  }
  if (in->flags & IF_HI) {
    if (n == 64) {
      if (sg) return (uint64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64);
      return (uint64_t)(((unsigned __int128)a * (unsigned __int128)b) >> 64);
    }
    if (sg) return (uint64_t)((sext(a, n) * sext(b, n)) >> n) & bmask(n);
    return (((a & bmask(n)) * (b & bmask(n))) >> n) & bmask(n);
  }
  return (a * b) & bmask(n);
}

static uint64_t bit_reverse(uint64_t x, unsigned n) {
  uint64_t r = 0;
  for (unsigned i = 0; i < n; i++) r |= ((x >> i) & 1) << (n - 1 - i);
  return r;
}

static uint32_t prmt(int mode, uint32_t a, uint32_t b, uint32_t c) {
  uint64_t x = ((uint64_t)b << 32) | a;
  uint32_t r = 0;
#define BYTE(i) ((uint32_t)(x >> (8 * ((i) & 7))) & 0xFFu)
  unsigned sel = c & 3;
  switch (mode) {
  case 1: /* f4e */
    for (unsigned i = 0; i < 4; i++) r |= BYTE(sel + i) << (8 * i);
    break;
  case 2: /* b4e */
    for (unsigned i = 0; i < 4; i++) r |= BYTE(sel + 8 - i) << (8 * i);
    break;
  case 3: /* rc8 */
    for (unsigned i = 0; i < 4; i++) r |= BYTE(sel) << (8 * i);
    break;
  case 4: /* ecl */
    for (unsigned i = 0; i < 4; i++) r |= BYTE(i > sel ? i : sel) << (8 * i);
    break;
  case 5: /* ecr */
    for (unsigned i = 0; i < 4; i++) r |= BYTE(i < sel ? i : sel) << (8 * i);
    break;
  case 6: /* rc16 */
    for (unsigned i = 0; i < 4; i++) r |= BYTE((sel & 1) * 2 + (i & 1)) << (8 * i);
    break;
  default:
    for (unsigned i = 0; i < 4; i++) {
      unsigned s = (c >> (4 * i)) & 0xF;
      uint32_t byte = BYTE(s);
      if (s & 8) byte = (byte & 0x80) ? 0xFF : 0;
      r |= byte << (8 * i);
    }
    break;
  }
#undef BYTE
  return r;
}

/* one lane of an integer add, subtract, multiply (24-bit too), sad, divide, remainder, abs, negate, min or max; carry is the lane's .cc flag */
static uint64_t int_arith_op(const emu_insn *in, uint64_t a, uint64_t b, uint64_t c, uint64_t d4, uint64_t *carry) {
  int t = in->t;
  unsigned n = tsize[t] * 8;
  int sg = tsigned[t];
  uint64_t M = bmask(n);
  uint64_t ua = a & M, ub = b & M;
  switch (in->op) {
  case OP_ADD:
  case OP_ADDC: {
    uint64_t cin = in->op == OP_ADDC ? (*carry & 1) : 0;
    uint64_t r = (ua + ub + cin) & M;
    if (in->flags & IF_CC) *carry = n == 64 ? (r < ua || (cin && r == ua)) : ((ua + ub + cin) >> n) & 1;
    if ((in->flags & IF_SAT) && sg && n == 32) return int_sat32(sext(a, 32) + sext(b, 32));
    return r;
  }
  case OP_SUB:
  case OP_SUBC: {
    uint64_t bin = in->op == OP_SUBC ? (*carry & 1) : 0;
    uint64_t r = (ua - ub - bin) & M;
    if (in->flags & IF_CC) *carry = (ua < ub || (bin && ua == ub)) ? 1 : 0;
    if ((in->flags & IF_SAT) && sg && n == 32) return int_sat32(sext(a, 32) - sext(b, 32));
    return r;
  }
  case OP_MUL: return mul_part(in, n, sg, a, b);
  case OP_MAD:
  case OP_MADC: {
    uint64_t p = mul_part(in, n, sg, a, b);
    unsigned rn = (in->flags & IF_WIDE) ? 2 * n : n;
    uint64_t RM = bmask(rn);
    uint64_t cin = in->op == OP_MADC ? (*carry & 1) : 0;
    uint64_t uc = c & RM;
    uint64_t r = (p + uc + cin) & RM;
    if (in->flags & IF_CC) *carry = rn == 64 ? (r < p || (cin && r == p)) : ((p + uc + cin) >> rn) & 1;
    if ((in->flags & IF_SAT) && sg && n == 32) return int_sat32(sext(p, 32) + sext(c, 32));
    return r;
  }
  case OP_MUL24:
  case OP_MAD24: {
    int64_t x = sg ? sext(a, 24) : (int64_t)(a & 0xFFFFFF);
    int64_t y = sg ? sext(b, 24) : (int64_t)(b & 0xFFFFFF);
    int64_t prod = x * y;
    uint64_t r = (in->flags & IF_HI) ? ((uint64_t)prod >> 16) & 0xFFFFFFFFu : (uint64_t)prod & 0xFFFFFFFFu;
    if (in->op == OP_MAD24) {
      if ((in->flags & IF_SAT) && sg) return int_sat32(sext(r, 32) + sext(c, 32));
      r = (r + c) & 0xFFFFFFFFu;
    }
    return r;
  }
  case OP_SAD: {
    uint64_t diff;
    if (sg) {
      int64_t x = sext(a, n), y = sext(b, n);
      diff = (uint64_t)(x > y ? x - y : y - x);
    } else {
      diff = ua > ub ? ua - ub : ub - ua;
    }
    return (diff + c) & M;
  }
  case OP_DIV:
    if (ub == 0) return M; /* machine-specific in PTX: all ones here */
    if (sg) {
      int64_t x = sext(a, n), y = sext(b, n);
      if (y == -1) return (uint64_t)(-(uint64_t)x) & M;
      return (uint64_t)(x / y) & M;
    }
    return ua / ub;
  case OP_REM:
    if (ub == 0) return ua;
    if (sg) {
      int64_t x = sext(a, n), y = sext(b, n);
      if (y == -1) return 0;
      return (uint64_t)(x % y) & M;
    }
    return ua % ub;
  case OP_ABS: {
    int64_t x = sext(a, n);
    return (x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x) & M;
  }
  case OP_NEG: return ((uint64_t)0 - ua) & M;
  case OP_MIN:
  case OP_MAX: {
    int less = sg ? sext(a, n) < sext(b, n) : ua < ub;
    uint64_t r = (in->op == OP_MIN) == less ? ua : ub;
    if ((in->flags & IF_RELU) && sg && sext(r, n) < 0) r = 0;
    return r;
  }
  default: return 0;
  }
}

/* one lane of an integer bit, shift, logic or dot-product operation */
static uint64_t int_bit_op(const emu_insn *in, uint64_t a, uint64_t b, uint64_t c, uint64_t d4, uint64_t *carry) {
  int t = in->t;
  unsigned n = tsize[t] * 8;
  int sg = tsigned[t];
  uint64_t M = bmask(n);
  uint64_t ua = a & M, ub = b & M;
  switch (in->op) {
  case OP_POPC: return (uint64_t)__builtin_popcountll(ua);
  case OP_CLZ: return ua ? (uint64_t)(__builtin_clzll(ua) - (64 - (int)n)) : n;
  case OP_BFIND: {
    uint64_t x = ua;
    if (sg && sext(a, n) < 0) x = ~x & M;
    if (!x) return 0xFFFFFFFFu;
    unsigned pos = 63u - (unsigned)__builtin_clzll(x);
    return (in->flags & IF_HI) ? (n - 1 - pos) : pos;
  }
  case OP_BREV: return bit_reverse(ua, n);
  case OP_BFE: {
    unsigned pos = (unsigned)(b & 0xFF), len = (unsigned)(c & 0xFF), msb = n - 1;
    uint64_t sbit = 0;
    if (sg && len) {
      unsigned top = pos + len - 1 < msb ? pos + len - 1 : msb;
      sbit = (a >> top) & 1;
    }
    if (len == 0) return 0;
    if (pos > msb) return sbit ? M : 0;
    unsigned avail = len < n - pos ? len : n - pos;
    uint64_t field = (ua >> pos) & bmask(avail);
    if (sbit) field |= M & ~bmask(avail);
    return field;
  }
  case OP_BFI: {
    unsigned pos = (unsigned)(c & 0xFF), len = (unsigned)(d4 & 0xFF);
    if (len == 0 || pos > n - 1) return ub;
    unsigned avail = len < n - pos ? len : n - pos;
    uint64_t m = bmask(avail) << pos;
    return ((ub & ~m) | ((ua << pos) & m)) & M;
  }
  case OP_PRMT: return prmt(in->sub, (uint32_t)a, (uint32_t)b, (uint32_t)c);
  case OP_BMSK: {
    uint32_t pos = (uint32_t)a, w = (uint32_t)b, a1 = pos & 31, b1 = w & 31, sum = a1 + b1;
    uint32_t mask0 = 0xFFFFFFFFu << a1, mask1 = sum < 32 ? 0xFFFFFFFFu << sum : 0;
    int overflow = sum >= 32;
    if (!(in->flags & IF_WRAP)) {
      if (pos >= 32) {
        overflow = 1;
        mask0 = 0;
      }
      if (w >= 32) overflow = 1;
    }
    if (overflow) mask1 = 0;
    else if (b1 == 0) mask1 = 0xFFFFFFFFu;
    return mask0 & ~mask1;
  }
  case OP_FNS: {
    uint32_t mask = (uint32_t)a, base = (uint32_t)b & 31;
    int32_t off = (int32_t)c;
    if (off == 0) return (mask >> base & 1) ? base : 0xFFFFFFFFu;
    int pos = (int)base, inc = off > 0 ? 1 : -1;
    int64_t count = (off > 0 ? (int64_t)off : -(int64_t)off) - 1;
    for (; pos >= 0 && pos < 32; pos += inc)
      if (mask >> pos & 1) {
        if (count == 0) return (uint32_t)pos;
        count--;
      }
    return 0xFFFFFFFFu;
  }
  case OP_SHF: {
    uint32_t sh = (uint32_t)c;
    unsigned k = (in->flags & IF_WRAP) ? (sh & 31) : (sh > 32 ? 32 : sh);
    uint64_t x = ((b & 0xFFFFFFFFu) << 32) | (a & 0xFFFFFFFFu);
    if (in->flags & IF_LEFT) return (uint32_t)((x << k) >> 32);
    return (uint32_t)(x >> k);
  }
  case OP_SHL: {
    uint64_t k = b & 0xFFFFFFFFu;
    return k >= n ? 0 : (ua << k) & M;
  }
  case OP_SHR: {
    uint64_t k = b & 0xFFFFFFFFu;
    if (sg) {
      int64_t x = sext(a, n);
      if (k >= n) return x < 0 ? M : 0;
      return (uint64_t)(x >> k) & M;
    }
    return k >= n ? 0 : ua >> k;
  }
  case OP_AND: return ua & ub;
  case OP_OR: return ua | ub;
  case OP_XOR: return ua ^ ub;
  case OP_NOT: return ~ua & M;
  case OP_CNOT: return ua == 0;
  case OP_LOP3: {
    unsigned lut = (unsigned)in->imm;
    uint64_t r = 0, uc = c & M;
    for (unsigned i = 0; i < 8; i++)
      if (lut & (1u << i))
        r |= ((i & 4) ? ua : ~ua) & ((i & 2) ? ub : ~ub) & ((i & 1) ? uc : ~uc);
    return r & M;
  }
  case OP_DP4A: {
    int as = tsigned[in->t], bs = tsigned[in->t2];
    uint32_t acc = (uint32_t)c;
    for (int i = 0; i < 4; i++) {
      uint64_t ab = (a >> (8 * i)) & 0xFF, bb = (b >> (8 * i)) & 0xFF;
      int64_t x = as ? sext(ab, 8) : (int64_t)ab, y = bs ? sext(bb, 8) : (int64_t)bb;
      acc += (uint32_t)(x * y);
    }
    return acc;
  }
  case OP_DP2A: {
    int as = tsigned[in->t], bs = tsigned[in->t2];
    uint32_t acc = (uint32_t)c;
    int off = (in->flags & IF_HI) ? 2 : 0;
    for (int i = 0; i < 2; i++) {
      uint64_t ah = (a >> (16 * i)) & 0xFFFF, bb = (b >> (8 * (i + off))) & 0xFF;
      int64_t x = as ? sext(ah, 16) : (int64_t)ah, y = bs ? sext(bb, 8) : (int64_t)bb;
      acc += (uint32_t)(x * y);
    }
    return acc;
  }
  default: return 0;
  }
}

/* one lane of an integer operation; carry is the lane's .cc flag */
static uint64_t int_op(const emu_insn *in, uint64_t a, uint64_t b, uint64_t c, uint64_t d4, uint64_t *carry) {
  switch (in->op) {
  case OP_POPC: case OP_CLZ: case OP_BFIND: case OP_BREV: case OP_BFE: case OP_BFI: case OP_PRMT: case OP_BMSK:
  case OP_FNS: case OP_SHF: case OP_SHL: case OP_SHR: case OP_AND: case OP_OR: case OP_XOR: case OP_NOT:
  case OP_CNOT: case OP_LOP3: case OP_DP4A: case OP_DP2A:
    return int_bit_op(in, a, b, c, d4, carry);
  default: return int_arith_op(in, a, b, c, d4, carry);
  }
}

/* ------------------------------------------------------ float semantics */
static float sat01f(float r) { return r != r || r <= 0 ? 0.0f : r > 1 ? 1.0f : r; }

static float round_f32(double x, int rnd) { return fp_f32((uint32_t)dlcemu_fp_from_double(FMT_F32, x, rnd, 0)); }

static int is_directed(int rnd) { return rnd == RND_RZ || rnd == RND_RM || rnd == RND_RP; }

/* min/max with PTX's rules: -0 < +0, one NaN gives the other operand */
static double fminmax(int is_max, int nan_prop, double a, double b, int *is_nan) {
  *is_nan = 0;
  int an = a != a, bn = b != b;
  if (an || bn) {
    if (nan_prop || (an && bn)) {
      *is_nan = 1;
      return 0;
    }
    return an ? b : a;
  }
  if (a == b) {
    int sa = signbit(a) != 0;
    if (is_max) return sa ? b : a;
    return sa ? a : b;
  }
  return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

static uint32_t f32_op(const emu_insn *in, uint32_t ua, uint32_t ub, uint32_t uc) {
  float a = fp_f32(ua), b = fp_f32(ub), c = fp_f32(uc);
  int ftz = (in->flags & IF_FTZ) != 0;
  if (ftz) {
    a = fp_ftz32(a);
    b = fp_ftz32(b);
    c = fp_ftz32(c);
  }
  int rnd = in->rnd;
  int dir = is_directed(rnd);
  float r;
  switch (in->op) {
  case OP_ADD: r = dir ? round_f32(dlcemu_fp_rto_add(a, b), rnd) : a + b; break;
  case OP_SUB: r = dir ? round_f32(dlcemu_fp_rto_add(a, -(double)b), rnd) : a - b; break;
  case OP_MUL: r = dir ? round_f32((double)a * b, rnd) : a * b; break;
  case OP_MAD:
  case OP_FMA: r = dir ? round_f32(dlcemu_fp_rto_fma(a, b, c), rnd) : fmaf(a, b, c); break;
  case OP_DIV:
    if (dir) r = round_f32(dlcemu_fp_rto_div(a, b), rnd);
    else r = a / b; /* .rn exact; .full/.approx use the exact quotient too */
    break;
  case OP_RCP:
    if (dir) r = round_f32(dlcemu_fp_rto_div(1.0, a), rnd);
    else r = 1.0f / a;
    break;
  case OP_SQRT:
    if (dir) r = round_f32(dlcemu_fp_rto_sqrt(a), rnd);
    else r = sqrtf(a);
    break;
  case OP_RSQRT: r = 1.0f / sqrtf(a); break;
  case OP_SIN: r = sinf(a); break;
  case OP_COS: r = cosf(a); break;
  case OP_LG2: r = log2f(a); break;
  case OP_EX2: r = exp2f(a); break;
  case OP_TANH: r = tanhf(a); break;
  case OP_ABS: return fp_u32(a) & 0x7FFFFFFFu;
  case OP_NEG: return fp_u32(a) ^ 0x80000000u;
  case OP_COPYSIGN: return (fp_u32(b) & 0x7FFFFFFFu) | (fp_u32(a) & 0x80000000u);
  case OP_MIN:
  case OP_MAX: {
    int nan;
    if (in->sub == 1) { /* .xorsign.abs */
      uint32_t s = (fp_u32(a) ^ fp_u32(b)) & 0x80000000u;
      double m = fminmax(in->op == OP_MAX, (in->flags & IF_NAN) != 0, fabsf(a), fabsf(b), &nan);
      if (nan) return F32_CANON_NAN;
      return fp_u32((float)m) | s;
    }
    double m = fminmax(in->op == OP_MAX, (in->flags & IF_NAN) != 0, a, b, &nan);
    if (nan) return F32_CANON_NAN;
    r = (float)m;
    if ((in->flags & IF_RELU) && r < 0) r = 0;
    break;
  }
  default: r = 0; break;
  }
  if (dir && r == 0 && (in->op == OP_ADD || in->op == OP_SUB || in->op == OP_FMA || in->op == OP_MAD)) {
    /* IEEE: an exact zero sum has the addends' sign when they agree, else -0
     * only when rounding down (a nonzero sum that underflows keeps its sign) */
    double p = in->op == OP_ADD || in->op == OP_SUB ? (double)a : (double)a * b;
    double q = in->op == OP_ADD ? (double)b : in->op == OP_SUB ? -(double)b : (double)c;
    if (p + q == 0) {
      if (p == 0 && q == 0 && signbit(p) == signbit(q)) r = (float)p;
      else r = rnd == RND_RM ? -0.0f : 0.0f;
    }
  }
  if (in->flags & IF_SAT) r = sat01f(r);
  if (r != r) return F32_CANON_NAN;
  if (ftz) r = fp_ftz32(r);
  return fp_u32(r);
}

static uint64_t f64_op(const emu_insn *in, uint64_t ua, uint64_t ub, uint64_t uc) {
  double a = F64(ua), b = F64(ub), c = F64(uc);
  int rnd = in->rnd;
  int dir = is_directed(rnd);
  double r;
  switch (in->op) {
  case OP_ADD: r = dir ? dlcemu_fp_f64_op(FP64_ADD, a, b, 0, rnd) : a + b; break;
  case OP_SUB: r = dir ? dlcemu_fp_f64_op(FP64_ADD, a, -b, 0, rnd) : a - b; break;
  case OP_MUL: r = dir ? dlcemu_fp_f64_op(FP64_MUL, a, b, 0, rnd) : a * b; break;
  case OP_MAD:
  case OP_FMA: r = dir ? dlcemu_fp_f64_op(FP64_FMA, a, b, c, rnd) : fma(a, b, c); break;
  case OP_DIV: r = dir ? dlcemu_fp_f64_op(FP64_DIV, a, b, 0, rnd) : a / b; break;
  case OP_RCP: r = dir ? dlcemu_fp_f64_op(FP64_RCP, a, 0, 0, rnd) : 1.0 / a; break;
  case OP_SQRT: r = dir ? dlcemu_fp_f64_op(FP64_SQRT, a, 0, 0, rnd) : sqrt(a); break;
  case OP_RSQRT: r = 1.0 / sqrt(a); break;
  case OP_SIN: r = sin(a); break;
  case OP_COS: r = cos(a); break;
  case OP_LG2: r = log2(a); break;
  case OP_EX2: r = exp2(a); break;
  case OP_TANH: r = tanh(a); break;
  case OP_ABS: return ua & 0x7FFFFFFFFFFFFFFFull;
  case OP_NEG: return ua ^ 0x8000000000000000ull;
  case OP_COPYSIGN: return (ub & 0x7FFFFFFFFFFFFFFFull) | (ua & 0x8000000000000000ull);
  case OP_MIN:
  case OP_MAX: {
    int nan;
    r = fminmax(in->op == OP_MAX, (in->flags & IF_NAN) != 0, a, b, &nan);
    if (nan) return F64_CANON_NAN;
    break;
  }
  default: r = 0; break;
  }
  if (in->flags & IF_SAT) r = r != r || r <= 0 ? 0.0 : r > 1 ? 1.0 : r;
  return canon64(r);
}

/* one f16/bf16 element of an arithmetic operation */
static uint16_t half_op(const emu_insn *in, int fmt, uint16_t ua, uint16_t ub, uint16_t uc) {
  int ftz = (in->flags & IF_FTZ) && fmt == FMT_F16;
  if (ftz) {
    ua = fp_ftz16(ua);
    ub = fp_ftz16(ub);
    uc = fp_ftz16(uc);
  }
  uint16_t signbit16 = 0x8000u;
  switch (in->op) {
  case OP_ABS: return ua & (uint16_t)~signbit16;
  case OP_NEG: return ua ^ signbit16;
  default: break;
  }
  double a = dlcemu_fp_to_double(fmt, ua), b = dlcemu_fp_to_double(fmt, ub), c = dlcemu_fp_to_double(fmt, uc);
  int opts = (ftz ? FPO_FTZ : 0) | ((in->flags & IF_SAT) ? FPO_SAT01 : 0) | ((in->flags & IF_RELU) ? FPO_RELU : 0) |
             ((in->flags & IF_SATFINITE) ? FPO_SATFINITE : 0);
  int rnd = in->rnd ? in->rnd : RND_RN;
  double r;
  switch (in->op) {
  case OP_ADD: r = dlcemu_fp_rto_add(a, b); break;
  case OP_SUB: r = dlcemu_fp_rto_add(a, -b); break;
  case OP_MUL: r = a * b; break;
  case OP_FMA:
  case OP_MAD: r = dlcemu_fp_rto_fma(a, b, c); break;
  case OP_EX2: r = exp2((double)(float)a); rnd = RND_RN; break;
  case OP_TANH: r = tanh((double)(float)a); rnd = RND_RN; break;
  case OP_MIN:
  case OP_MAX: {
    int nan;
    r = fminmax(in->op == OP_MAX, (in->flags & IF_NAN) != 0, a, b, &nan);
    if (nan) return fmt == FMT_F16 ? F16_CANON_NAN : BF16_CANON_NAN;
    if (in->sub == 1) { /* .xorsign.abs */
      int n2;
      r = fminmax(in->op == OP_MAX, (in->flags & IF_NAN) != 0, fabs(a), fabs(b), &n2);
      uint16_t s = (ua ^ ub) & signbit16;
      return (uint16_t)(dlcemu_fp_from_double(fmt, r, RND_RN, 0) | s);
    }
    if ((in->flags & IF_RELU) && r < 0) r = 0;
    return (uint16_t)dlcemu_fp_from_double(fmt, r, RND_RN, 0);
  }
  default: r = 0; break;
  }
  return (uint16_t)dlcemu_fp_from_double(fmt, r, rnd, opts);
}

static int fcmp(int cmp, double a, double b) {
  int u = a != a || b != b;
  switch (cmp) {
  case CMP_EQ: return !u && a == b;
  case CMP_NE: return !u && a != b;
  case CMP_LT: return !u && a < b;
  case CMP_LE: return !u && a <= b;
  case CMP_GT: return !u && a > b;
  case CMP_GE: return !u && a >= b;
  case CMP_EQU: return u || a == b;
  case CMP_NEU: return u || a != b;
  case CMP_LTU: return u || a < b;
  case CMP_LEU: return u || a <= b;
  case CMP_GTU: return u || a > b;
  case CMP_GEU: return u || a >= b;
  case CMP_NUM: return !u;
  case CMP_NAN: return u;
  default: return 0;
  }
}

static int icmp(int cmp, int sg, unsigned n, uint64_t a, uint64_t b) {
  uint64_t M = bmask(n);
  uint64_t ua = a & M, ub = b & M;
  int64_t sa = sext(a, n), sb = sext(b, n);
  switch (cmp) {
  case CMP_EQ: return ua == ub;
  case CMP_NE: return ua != ub;
  case CMP_LT: return sg ? sa < sb : ua < ub;
  case CMP_LE: return sg ? sa <= sb : ua <= ub;
  case CMP_GT: return sg ? sa > sb : ua > ub;
  case CMP_GE: return sg ? sa >= sb : ua >= ub;
  case CMP_LO: return ua < ub;
  case CMP_LS: return ua <= ub;
  case CMP_HI: return ua > ub;
  case CMP_HS: return ua >= ub;
  default: return 0;
  }
}

/* compare of one lane; for packed types `hi` selects the upper half */
static int cmp_lane(const emu_insn *in, int t, uint64_t a, uint64_t b, int hi) {
  switch (t) {
  case T_F32: {
    float x = F32(a), y = F32(b);
    if (in->flags & IF_FTZ) {
      x = fp_ftz32(x);
      y = fp_ftz32(y);
    }
    return fcmp(in->sub, x, y);
  }
  case T_F64: return fcmp(in->sub, F64(a), F64(b));
  case T_F16:
  case T_F16X2: {
    uint16_t x = (uint16_t)(a >> (hi ? 16 : 0)), y = (uint16_t)(b >> (hi ? 16 : 0));
    if (in->flags & IF_FTZ) {
      x = fp_ftz16(x);
      y = fp_ftz16(y);
    }
    return fcmp(in->sub, fp_f16_to_f32(x), fp_f16_to_f32(y));
  }
  case T_BF16:
  case T_BF16X2:
    return fcmp(in->sub, fp_bf16_to_f32((uint16_t)(a >> (hi ? 16 : 0))), fp_bf16_to_f32((uint16_t)(b >> (hi ? 16 : 0))));
  default: return icmp(in->sub, tsigned[t], tsize[t] * 8u, a, b);
  }
}

static int combine(int op, int r, int c) {
  switch (op) {
  case BOOL_AND: return r && c;
  case BOOL_OR: return r || c;
  case BOOL_XOR: return r != c;
  default: return r;
  }
}

/* ------------------------------------------------------------- conversions */
static int fmt_of(int t) {
  switch (t) {
  case T_F16: return FMT_F16;
  case T_BF16: return FMT_BF16;
  case T_TF32: return FMT_TF32;
  case T_F32: return FMT_F32;
  default: return FMT_F64;
  }
}

static uint64_t float_to_int(double x, int rnd, int dt) {
  if (x != x) return 0;
  switch (rnd) {
  case RND_RNI: x = nearbyint(x); break; /* host mode is round-to-nearest-even */
  case RND_RMI: x = floor(x); break;
  case RND_RPI: x = ceil(x); break;
  default: x = trunc(x); break;
  }
  unsigned n = tsize[dt] * 8u;
  if (tsigned[dt]) {
    double lo = -ldexp(1.0, (int)n - 1), hi = ldexp(1.0, (int)n - 1);
    if (x <= lo) return (uint64_t)(int64_t)lo & bmask(n);
    if (x >= hi) return bmask(n - 1);
    return (uint64_t)(int64_t)x & bmask(n);
  }
  if (x <= 0) return 0;
  if (x >= ldexp(1.0, (int)n)) return bmask(n);
  return (uint64_t)x & bmask(n);
}

static uint64_t cvt_lane(const emu_insn *in, uint64_t v) {
  int dt = in->t, st = in->t2;
  int dfl = dlcemu_type_is_float(dt), sfl = dlcemu_type_is_float(st);
  unsigned dn = tsize[dt] * 8u, sn = tsize[st] * 8u;
  int opts = ((in->flags & IF_FTZ) ? FPO_FTZ : 0) | ((in->flags & IF_SATFINITE) ? FPO_SATFINITE : 0) |
             ((in->flags & IF_RELU) ? FPO_RELU : 0) | ((in->flags & IF_SAT) ? FPO_SAT01 : 0);
  if (!dfl && !sfl) { /* integer -> integer */
    uint64_t x = v & bmask(sn);
    if (in->flags & IF_SAT) {
      if (tsigned[st]) {
        int64_t s = sext(x, sn);
        if (tsigned[dt]) {
          int64_t lo = -(int64_t)(bmask(dn - 1)) - 1, hi = (int64_t)bmask(dn - 1);
          if (s < lo) s = lo;
          if (s > hi) s = hi;
        } else {
          if (s < 0) s = 0;
          if (dn < 64 && (uint64_t)s > bmask(dn)) s = (int64_t)bmask(dn);
        }
        return (uint64_t)s & bmask(dn);
      }
      uint64_t lim = tsigned[dt] ? bmask(dn - 1) : bmask(dn);
      return x > lim ? lim : x;
    }
    if (tsigned[st]) return (uint64_t)sext(x, sn) & bmask(dn);
    return x & bmask(dn);
  }
  if (!sfl) { /* integer -> float */
    uint64_t x = v & bmask(sn);
    int neg = 0;
    uint64_t mag = x;
    if (tsigned[st]) {
      int64_t s = sext(x, sn);
      neg = s < 0;
      mag = neg ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
    }
    int rnd = in->rnd ? in->rnd : RND_RN;
    if (!mag) return 0;
    uint64_t r = dlcemu_fp_round(fmt_of(dt), neg, mag, 0, 0, rnd, opts & ~FPO_SAT01);
    if (in->flags & IF_SAT) r = dlcemu_fp_from_double(fmt_of(dt), dlcemu_fp_to_double(fmt_of(dt), r), RND_RN, FPO_SAT01);
    return r;
  }
  /* float source */
  double x;
  if (st == T_F32) {
    float f = F32(v);
    if (in->flags & IF_FTZ) f = fp_ftz32(f);
    x = f;
  } else if (st == T_F16) {
    uint16_t h = (uint16_t)v;
    if (in->flags & IF_FTZ) h = fp_ftz16(h);
    x = fp_f16_to_f32(h);
  } else {
    x = dlcemu_fp_to_double(fmt_of(st), v);
  }
  if (!dfl) return float_to_int(x, in->rnd, dt);
  int rnd = in->rnd;
  if (rnd >= RND_RNI) { /* round to an integral value in the destination format */
    double y = x;
    if (x == x && !isinf(x)) {
      switch (rnd) {
      case RND_RNI: y = nearbyint(x); break;
      case RND_RMI: y = floor(x); break;
      case RND_RPI: y = ceil(x); break;
      default: y = trunc(x); break;
      }
    }
    return dlcemu_fp_from_double(fmt_of(dt), y, RND_RN, opts);
  }
  if (dt == T_F64 && (opts & ~FPO_FTZ) == 0) return x != x ? F64_CANON_NAN : fp_u64(x);
  return dlcemu_fp_from_double(fmt_of(dt), x, rnd ? rnd : RND_RN, opts);
}

/* ---------------------------------------------------------------- memory */
/* a 32-bit address register makes 32-bit address arithmetic: nvcc relies on
 * the wrap-around (e.g. [%r1+256] with %r1 = base - 256) */
static uint64_t lane_addr(const emu_warp *w, uint32_t slot, int lane, int64_t off, int addr32) {
  uint64_t b = slot == SLOT_NONE ? 0 : w->r[slot][lane];
  uint64_t a = b + (uint64_t)off;
  return addr32 ? a & 0xFFFFFFFFu : a;
}

static const char *space_name(int sp) {
  switch (sp) {
  case SP_GLOBAL: return "global";
  case SP_SHARED: return "shared";
  case SP_LOCAL: return "local";
  case SP_CONST: return "const";
  case SP_KPARAM: return "kernel param";
  case SP_TPARAM: return "param";
  default: return "generic";
  }
}

/* translate lane `lane`'s address to a host pointer with memcheck; NULL after
 * reporting.  *sp receives the concrete space and *a the address in it. */
static uint8_t *resolve(emu_run *R, emu_warp *w, const emu_insn *in, int lane, int *sp, uint64_t *a,
                        unsigned size, int write) {
  int space = *sp;
  uint64_t x = *a;
  if (space == SP_GENERIC) {
    switch (WIN_TAG(x)) {
    case 1: space = SP_SHARED; x -= WIN_SHARED; break;
    case 2: space = SP_LOCAL; x -= WIN_LOCAL; break;
    case 3: space = SP_KPARAM; x -= WIN_PARAM; break;
    default: space = SP_GLOBAL; break;
    }
  }
  *sp = space;
  *a = x;
  const char *rw = write ? "write" : "read";
  if (x & (size - 1)) {
    dlcemu_report(R, DLCEMU_ERROR_MISALIGNED, w, lane, in, "misaligned %s %s of %u bytes at %s address 0x%llx",
               space_name(space), rw, size, space_name(space), (unsigned long long)x);
    return NULL;
  }
  switch (space) {
  case SP_SHARED:
    if (x >= R->shared_size || x + size > R->shared_size) {
      dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, lane, in,
                 "out-of-bounds shared %s of %u bytes at offset 0x%llx (the block has %llu bytes of shared memory: "
                 "%llu static + %u dynamic)",
                 rw, size, (unsigned long long)x, (unsigned long long)R->shared_size,
                 (unsigned long long)R->k->static_shared, R->dyn_shared);
      return NULL;
    }
    return R->smem + x;
  case SP_LOCAL:
    if (x >= R->k->local_bytes || x + size > R->k->local_bytes) {
      dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, lane, in,
                 "out-of-bounds local %s of %u bytes at offset 0x%llx (the thread has %llu bytes of local memory)",
                 rw, size, (unsigned long long)x, (unsigned long long)R->k->local_bytes);
      return NULL;
    }
    return w->local + (size_t)lane * R->k->local_bytes + x;
  case SP_KPARAM:
    if (write) {
      dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in, "write to kernel parameter space");
      return NULL;
    }
    if (x >= R->param_bytes || x + size > R->param_bytes) {
      dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, lane, in,
                 "out-of-bounds kernel parameter read of %u bytes at offset 0x%llx (%llu bytes of parameters)", size,
                 (unsigned long long)x, (unsigned long long)R->param_bytes);
      return NULL;
    }
    return R->params + x;
  case SP_TPARAM:
    if (x >= R->k->tparam_bytes || x + size > R->k->tparam_bytes) {
      dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, lane, in, "out-of-bounds .param %s at offset 0x%llx", rw,
                 (unsigned long long)x);
      return NULL;
    }
    return w->tparam + (size_t)lane * R->k->tparam_bytes + x;
  default: {
    const emu_range *g = dlcemu_find_range(R, x);
    if (!g || x + size > g->end) {
      if (!g) g = dlcemu_near_range(R, x);
      if (g)
        dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, lane, in,
                   "out-of-bounds %s %s of %u bytes at 0x%llx: %llu bytes past the end of the %llu-byte allocation "
                   "at 0x%llx",
                   space_name(space), rw, size, (unsigned long long)x, (unsigned long long)(x + size - g->end),
                   (unsigned long long)(g->end - g->base), (unsigned long long)g->base);
      else
        dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, lane, in,
                   "out-of-bounds %s %s of %u bytes at 0x%llx: not inside any allocation", space_name(space), rw,
                   size, (unsigned long long)x);
      return NULL;
    }
    if (space == SP_CONST && !g->readonly) {
      dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, lane, in, "const %s at 0x%llx outside constant memory", rw,
                 (unsigned long long)x);
      return NULL;
    }
    if (write && g->readonly) {
      dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in, "write to constant memory at 0x%llx", (unsigned long long)x);
      return NULL;
    }
    return (uint8_t *)(uintptr_t)x;
  }
  }
}

/* shared memory shadow checks: a read needs valid bytes, a write must not
 * race a pending cp.async */
static int shared_check(emu_run *R, emu_warp *w, const emu_insn *in, int lane, uint64_t off, unsigned size,
                        int write) {
  if (!R->shadow_active) return 0;
  const uint8_t *sh = R->shadow + off;
  for (unsigned i = 0; i < size; i++) {
    if (sh[i] == SH_VALID) continue;
    if (write && sh[i] == SH_UNINIT) continue;
    if (!write && sh[i] == SH_READING) continue; /* a TMA store's source: readable */
    dlcemu_poison_report(R, w, lane, in, off, size, write);
    return -1;
  }
  if (write && R->check_uninit) memset(R->shadow + off, SH_VALID, size);
  return 0;
}

/* ---------------------------------------------------------------- statistics */
static void sort_u64(uint64_t *v, int n) {
  for (int i = 1; i < n; i++) {
    uint64_t x = v[i];
    int j = i - 1;
    while (j >= 0 && v[j] > x) {
      v[j + 1] = v[j];
      j--;
    }
    v[j + 1] = x;
  }
}

static void stat_global(dlcemu_global_stats *g, const uint64_t *addr, uint32_t mask, unsigned size) {
  if (!mask) return;
  uint64_t sec[64];
  int n = 0;
  g->requests++;
  g->bytes += (unsigned long long)__builtin_popcount(mask) * size;
  while (mask) {
    int l = __builtin_ctz(mask);
    mask &= mask - 1;
    uint64_t first = addr[l] >> 5, last = (addr[l] + size - 1) >> 5;
    for (uint64_t s = first; s <= last && n < 64; s++) sec[n++] = s;
  }
  sort_u64(sec, n);
  unsigned long long distinct = 0;
  for (int i = 0; i < n; i++) distinct += i == 0 || sec[i] != sec[i - 1];
  g->sectors += distinct;
}

/* wavefronts of a warp-wide shared access: 32 banks of 4 bytes; one phase
 * for <= 4-byte accesses, half-warp phases for 8 bytes, quarter-warp phases
 * for 16 bytes; each phase needs as many wavefronts as the most distinct
 * words any single bank must deliver. */
static void stat_shared(dlcemu_shared_stats *s, const uint64_t *addr, uint32_t mask, unsigned size) {
  if (!mask) return;
  s->requests++;
  unsigned long long bytes = (unsigned long long)__builtin_popcount(mask) * size;
  s->bytes += bytes;
  unsigned long long ideal = (bytes + 127) / 128;
  s->ideal_wavefronts += ideal ? ideal : 1;
  int lanes_per_phase = size <= 4 ? 32 : size == 8 ? 16 : 8;
  for (int p0 = 0; p0 < 32; p0 += lanes_per_phase) {
    uint64_t words[32];
    int n = 0;
    for (int l = p0; l < p0 + lanes_per_phase; l++) {
      if (!(mask >> l & 1)) continue;
      uint64_t first = addr[l] >> 2, last = (addr[l] + size - 1) >> 2;
      for (uint64_t wd = first; wd <= last && n < 32; wd++) words[n++] = wd;
    }
    if (!n) continue;
    uint64_t lo = words[0], hi = words[0];
    for (int i = 1; i < n; i++) {
      if (words[i] < lo) lo = words[i];
      if (words[i] > hi) hi = words[i];
    }
    if (hi - lo < 32) { /* distinct words of a 32-word window sit in distinct banks */
      s->wavefronts += 1;
      continue;
    }
    sort_u64(words, n);
    unsigned per_bank[32] = {0};
    unsigned worst = 0;
    for (int i = 0; i < n; i++) {
      if (i && words[i] == words[i - 1]) continue; /* same word: broadcast */
      unsigned b = (unsigned)(words[i] & 31);
      if (++per_bank[b] > worst) worst = per_bank[b];
    }
    s->wavefronts += worst;
  }
}

/* ------------------------------------------------------------- collectives */
/* Lanes that reach a collective wait until every lane of `need` is there;
 * returns 1 with *exec = the lanes to run now, 0 if they wait. */
static int gather(emu_warp *w, uint32_t pc, uint32_t active, uint32_t *exec, uint32_t need) {
  uint32_t waiting = 0;
  if (w->coll_wait) {
    uint32_t m = w->coll_wait;
    while (m) {
      int l = __builtin_ctz(m);
      m &= m - 1;
      if (w->pc[l] == pc) waiting |= 1u << l;
    }
  }
  uint32_t arrived = *exec | waiting;
  if (need & ~arrived) {
    emu_materialize(w);
    w->coll_wait |= *exec;
    uint32_t m = active;
    while (m) {
      int l = __builtin_ctz(m);
      m &= m - 1;
      w->pc[l] = (*exec >> l & 1) ? pc : pc + 1;
    }
    return 0;
  }
  if (waiting) {
    emu_materialize(w);
    w->coll_wait &= ~waiting;
    uint32_t m = waiting;
    while (m) {
      int l = __builtin_ctz(m);
      m &= m - 1;
      w->pc[l] = pc + 1;
    }
  }
  *exec = arrived;
  return 1;
}

/* the member mask of a .sync collective (taken from its lowest lane) */
static uint32_t member_mask(const emu_warp *w, uint32_t slot, uint32_t exec) {
  if (!exec) return 0;
  return (uint32_t)w->r[slot][__builtin_ctz(exec)];
}

/* ------------------------------------------------------------- tensor ops */
/* f16 -> float for every bit pattern, filled once */
static float f16_table[65536];
static pthread_once_t f16_once = PTHREAD_ONCE_INIT;
static void f16_table_init(void) {
  for (uint32_t h = 0; h < 65536; h++) f16_table[h] = fp_f16_to_f32((uint16_t)h);
}

/* d[i][j] += sum over k < K of a[i][k] * b[k][j], in k order for every
 * element; four rows at a time keep eight independent accumulator chains.
 * The AVX2 clone does the same operations four lanes wide (same results). */
typedef double v4d __attribute__((vector_size(32)));
__attribute__((target_clones("default", "avx2"))) static void mma_compute(double (*a)[16],
                                                                          double (*b)[8], double (*d)[8],
                                                                          int K) {
  for (int i0 = 0; i0 < 16; i0 += 4) {
    v4d acc[4][2];
    memcpy(acc, d[i0], sizeof acc);
    for (int kk = 0; kk < K; kk++) {
      v4d b0, b1;
      memcpy(&b0, &b[kk][0], sizeof b0);
      memcpy(&b1, &b[kk][4], sizeof b1);
      for (int r = 0; r < 4; r++) {
        double x = a[i0 + r][kk];
        v4d xv = {x, x, x, x};
        acc[r][0] += xv * b0;
        acc[r][1] += xv * b1;
      }
    }
    memcpy(d[i0], acc, sizeof acc);
  }
}

static void exec_mma(emu_run *R, emu_warp *w, const emu_insn *in) {
  const uint32_t *vp = R->k->vpool;
  const uint32_t *D = &vp[in->a[0] + 1], *A = &vp[in->a[1] + 1], *B = &vp[in->a[2] + 1], *C = &vp[in->a[3] + 1];
  int K = in->sub == MMA_M16N8K16 ? 16 : 8;
  int at = in->t2;
  R->st.mma_ops++;
  R->st.tensor_flops += 2ull * 16 * 8 * (unsigned long long)K;
  double a[16][16] __attribute__((aligned(32))), b[16][8] __attribute__((aligned(32))), c[16][8];
  uint64_t(*r)[32] = w->r;
  pthread_once(&f16_once, f16_table_init);
  for (int l = 0; l < 32; l++) {
    int g = l >> 2, t = l & 3;
    if (at == T_TF32) {
      for (int i = 0; i < 4; i++)
        a[g + 8 * (i & 1)][t + 4 * (i >> 1)] = fp_f32((uint32_t)r[A[i]][l] & 0xFFFFE000u);
      for (int i = 0; i < 2; i++) b[t + 4 * i][g] = fp_f32((uint32_t)r[B[i]][l] & 0xFFFFE000u);
    } else {
      int bf = at == T_BF16;
      int na = K == 16 ? 8 : 4, nb = K == 16 ? 4 : 2;
      for (int i = 0; i < na; i++) {
        uint16_t h = (uint16_t)(r[A[i >> 1]][l] >> (16 * (i & 1)));
        int row = g + 8 * ((i >> 1) & 1), col = t * 2 + (i & 1) + 8 * (i >> 2);
        a[row][col] = bf ? fp_bf16_to_f32(h) : f16_table[h];
      }
      for (int i = 0; i < nb; i++) {
        uint16_t h = (uint16_t)(r[B[i >> 1]][l] >> (16 * (i & 1)));
        int krow = t * 2 + (i & 1) + 8 * (i >> 1);
        b[krow][g] = bf ? fp_bf16_to_f32(h) : f16_table[h];
      }
    }
    for (int i = 0; i < 4; i++) {
      int row = g + 8 * (i >> 1), col = t * 2 + (i & 1);
      if (in->sub2 == T_F32) c[row][col] = F32(r[C[i]][l]);
      else c[row][col] = f16_table[(uint16_t)(r[C[i >> 1]][l] >> (16 * (i & 1)))];
    }
  }
  /* D = C + sum_k A[i][k] * B[k][j]: every product is exact in double (at
   * most 22 significant bits); C and the products are summed in double in k
   * order and the sum is rounded once to the accumulator type (see
   * docs/emulator.md) */
  double d[16][8] __attribute__((aligned(32)));
  memcpy(d, c, sizeof d);
  mma_compute(a, b, d, K);
  for (int l = 0; l < 32; l++) {
    int g = l >> 2, t = l & 3;
    if (in->t == T_F32) {
      for (int i = 0; i < 4; i++) r[D[i]][l] = canon32((float)d[g + 8 * (i >> 1)][t * 2 + (i & 1)]);
    } else {
      for (int i = 0; i < 2; i++) {
        uint64_t lo = dlcemu_fp_from_double(FMT_F16, d[g + 8 * i][t * 2], RND_RN, 0);
        uint64_t hi = dlcemu_fp_from_double(FMT_F16, d[g + 8 * i][t * 2 + 1], RND_RN, 0);
        r[D[i]][l] = lo | hi << 16;
      }
    }
  }
}

/* ldmatrix / stmatrix: lanes 8m..8m+7 address the rows of matrix m */
static void exec_matrix(emu_run *R, emu_warp *w, const emu_insn *in) {
  int num = in->vec, store = in->op == OP_STMATRIX;
  int trans = (in->flags & IF_TRANS) != 0;
  const uint32_t *regs = &R->k->vpool[in->a[store ? 1 : 0] + 1];
  uint32_t base = in->a[store ? 0 : 1];
  uint16_t rows[4][8][8];
  uint8_t *ptr[32];
  uint64_t off[32];
  uint32_t amask = num == 4 ? FULL : (1u << (8 * num)) - 1;
  for (int l = 0; l < 8 * num; l++) {
    int sp = in->space;
    uint64_t a = lane_addr(w, base, l, in->imm, (in->flags & IF_ADDR32) != 0);
    ptr[l] = resolve(R, w, in, l, &sp, &a, 16, store);
    if (!ptr[l]) return;
    if (sp != SP_SHARED) {
      dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, l, in, "%s address is not in shared memory", store ? "stmatrix" : "ldmatrix");
      return;
    }
    off[l] = a;
    if (shared_check(R, w, in, l, a, 16, store)) return;
    if (!store && R->check_races && dlcemu_race_read(R, w, l, in, (uint32_t)(in - R->k->code), a, 16)) return;
    if (!store) memcpy(rows[l >> 3][l & 7], ptr[l], 16);
  }
  for (int l = 0; l < 32; l++) {
    int g = l >> 2, t = l & 3;
    for (int m = 0; m < num; m++) {
      uint16_t *lo = trans ? &rows[m][2 * t][g] : &rows[m][g][2 * t];
      uint16_t *hi = trans ? &rows[m][2 * t + 1][g] : &rows[m][g][2 * t + 1];
      if (store) {
        uint64_t v = w->r[regs[m]][l];
        *lo = (uint16_t)v;
        *hi = (uint16_t)(v >> 16);
      } else {
        w->r[regs[m]][l] = (uint64_t)*lo | (uint64_t)*hi << 16;
      }
    }
  }
  if (store)
    for (int l = 0; l < 8 * num; l++) {
      if (R->check_races &&
          dlcemu_race_write(R, w, l, in, (uint32_t)(in - R->k->code), off[l], 16, (const uint8_t *)rows[l >> 3][l & 7]))
        return;
      memcpy(ptr[l], rows[l >> 3][l & 7], 16);
      if (R->proxy_mark) dlcemu_proxy_write(R, w, l, (uint32_t)(in - R->k->code), off[l], 16);
    }
  stat_shared(store ? &R->st.stmatrix : &R->st.ldmatrix, off, amask, 16);
}

/* ------------------------------------------------------------- memory ops */
static void exec_ldst(emu_run *R, emu_warp *w, const emu_insn *in, uint32_t exec) {
  int store = in->op == OP_ST;
  unsigned es = tsize[in->t], n = in->vec, size = es * n;
  uint32_t base = in->a[store ? 0 : 1];
  uint32_t vslot = in->a[store ? 1 : 0];
  const uint32_t *vl = n > 1 ? &R->k->vpool[vslot + 1] : &vslot;
  int addr32 = (in->flags & IF_ADDR32) != 0;
  int sg = tsigned[in->t];
  unsigned dw = in->sub2 ? in->sub2 * 8u : 64;
  uint64_t addrs[32];
  uint32_t mg = 0, ms = 0, ml = 0;
  uint32_t m = exec;
  while (m) {
    int l = __builtin_ctz(m);
    m &= m - 1;
    int sp = in->space;
    uint64_t a = lane_addr(w, base, l, in->imm, addr32);
    uint8_t *p = resolve(R, w, in, l, &sp, &a, size, store);
    if (!p) return;
    addrs[l] = a;
    if (sp == SP_SHARED) {
      ms |= 1u << l;
      if (shared_check(R, w, in, l, a, size, store)) return;
      if (R->check_races && !(in->flags & IF_STRONG)) {
        uint32_t pc = (uint32_t)(in - R->k->code);
        if (store) {
          uint8_t bytes[64];
          for (unsigned i = 0; i < n; i++) st_le(bytes + i * es, w->r[vl[i]][l], es);
          if (dlcemu_race_write(R, w, l, in, pc, a, size, bytes)) return;
        } else if (dlcemu_race_read(R, w, l, in, pc, a, size)) {
          return;
        }
      }
      if (store && R->proxy_mark) dlcemu_proxy_write(R, w, l, (uint32_t)(in - R->k->code), a, size);
    } else if (sp == SP_GLOBAL) {
      mg |= 1u << l;
    } else if (sp == SP_LOCAL) {
      ml |= 1u << l;
    }
    if (store) {
      for (unsigned i = 0; i < n; i++) st_le(p + i * es, w->r[vl[i]][l], es);
    } else {
      for (unsigned i = 0; i < n; i++) {
        uint64_t v = ld_le(p + i * es, es);
        if (sg && es * 8 < dw) v = (uint64_t)sext(v, es * 8) & bmask(dw);
        w->r[vl[i]][l] = v;
      }
    }
  }
  stat_global(store ? &R->st.global_store : &R->st.global_load, addrs, mg, size);
  stat_shared(store ? &R->st.shared_store : &R->st.shared_load, addrs, ms, size);
  if (ml) {
    R->st.local_requests++;
    R->st.local_bytes += (unsigned long long)__builtin_popcount(ml) * size;
  }
}

static uint64_t atom_apply(const emu_insn *in, uint64_t old, uint64_t b, uint64_t c) {
  int t = in->t;
  unsigned n = tsize[t] * 8u;
  uint64_t M = bmask(n);
  int sg = tsigned[t];
  switch (t) {
  case T_F32: {
    float o = F32(old), x = F32(b);
    switch (in->sub) {
    case AOP_ADD: return fp_u32(fp_ftz32(fp_ftz32(o) + fp_ftz32(x))); /* atom.add.f32 flushes subnormals */
    case AOP_EXCH: return b & M;
    case AOP_MIN:
    case AOP_MAX: {
      int nan;
      double r = fminmax(in->sub == AOP_MAX, 0, o, x, &nan);
      return nan ? F32_CANON_NAN : fp_u32((float)r);
    }
    default: return old;
    }
  }
  case T_F64:
    if (in->sub == AOP_ADD) return fp_u64(F64(old) + F64(b));
    if (in->sub == AOP_EXCH) return b;
    {
      int nan;
      double r = fminmax(in->sub == AOP_MAX, 0, F64(old), F64(b), &nan);
      return nan ? F64_CANON_NAN : fp_u64(r);
    }
  case T_F16:
  case T_BF16:
  case T_F16X2:
  case T_BF16X2: {
    int fmt = (t == T_F16 || t == T_F16X2) ? FMT_F16 : FMT_BF16;
    int halves = (t == T_F16X2 || t == T_BF16X2) ? 2 : 1;
    emu_insn tmp = *in;
    tmp.op = in->sub == AOP_ADD ? OP_ADD : in->sub == AOP_MIN ? OP_MIN : OP_MAX;
    tmp.rnd = RND_RN;
    tmp.flags = 0;
    tmp.sub = 0;
    uint64_t r = 0;
    for (int h = 0; h < halves; h++)
      r |= (uint64_t)half_op(&tmp, fmt, (uint16_t)(old >> (16 * h)), (uint16_t)(b >> (16 * h)), 0) << (16 * h);
    return r;
  }
  default: break;
  }
  uint64_t uo = old & M, ub = b & M;
  switch (in->sub) {
  case AOP_ADD: return (uo + ub) & M;
  case AOP_MIN: return (sg ? sext(uo, n) < sext(ub, n) : uo < ub) ? uo : ub;
  case AOP_MAX: return (sg ? sext(uo, n) > sext(ub, n) : uo > ub) ? uo : ub;
  case AOP_INC: return uo >= ub ? 0 : uo + 1;
  case AOP_DEC: return (uo == 0 || uo > ub) ? ub : uo - 1;
  case AOP_AND: return uo & ub;
  case AOP_OR: return uo | ub;
  case AOP_XOR: return uo ^ ub;
  case AOP_EXCH: return ub;
  case AOP_CAS: return uo == ub ? (c & M) : uo;
  default: return uo;
  }
}

static void exec_atom(emu_run *R, emu_warp *w, const emu_insn *in, uint32_t exec) {
  unsigned es = tsize[in->t];
  uint64_t addrs[32];
  uint32_t mg = 0, ms = 0;
  uint32_t m = exec;
  while (m) {
    int l = __builtin_ctz(m);
    m &= m - 1;
    int sp = in->space;
    uint64_t a = lane_addr(w, in->a[1], l, in->imm, (in->flags & IF_ADDR32) != 0);
    uint8_t *p = resolve(R, w, in, l, &sp, &a, es, 1);
    if (!p) return;
    if (sp != SP_GLOBAL && sp != SP_SHARED) {
      dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, l, in, "atomic on %s memory", space_name(sp));
      return;
    }
    addrs[l] = a;
    if (sp == SP_SHARED) {
      ms |= 1u << l;
      if (shared_check(R, w, in, l, a, es, 0)) return;
      if (R->proxy_mark) dlcemu_proxy_write(R, w, l, (uint32_t)(in - R->k->code), a, es);
    } else {
      mg |= 1u << l;
    }
    uint64_t old = ld_le(p, es);
    uint64_t b = w->r[in->a[2]][l];
    uint64_t c = in->a[3] != SLOT_NONE ? w->r[in->a[3]][l] : 0;
    st_le(p, atom_apply(in, old, b, c), es);
    w->r[in->a[0]][l] = old;
  }
  stat_global(&R->st.global_atomic, addrs, mg, es);
  stat_shared(&R->st.shared_atomic, addrs, ms, es);
}

static void exec_cp_async(emu_run *R, emu_warp *w, const emu_insn *in, uint32_t exec, uint32_t pc) {
  unsigned size = in->vec;
  uint64_t dsts[32], srcs[32];
  uint32_t mg = 0;
  uint32_t m = exec;
  while (m) {
    int l = __builtin_ctz(m);
    m &= m - 1;
    int dsp = SP_SHARED, ssp = SP_GLOBAL;
    uint64_t d = lane_addr(w, in->a[0], l, in->imm, (in->flags & IF_ADDR32) != 0);
    uint64_t s = lane_addr(w, in->a[1], l, in->imm2, (in->flags & IF_ADDR32B) != 0);
    unsigned n = size;
    if (in->a[2] != SLOT_NONE) {
      uint64_t ss = w->r[in->a[2]][l] & 0xFFFFFFFFu;
      if (ss > size) {
        dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, l, in, "cp.async src-size %llu is larger than the copy size %u",
                   (unsigned long long)ss, size);
        return;
      }
      n = (unsigned)ss;
    }
    if (in->a[3] != SLOT_NONE) {
      int ign = (w->p[in->a[3]] >> l) & 1;
      if (in->flags & IF_NEGA) ign = !ign;
      if (ign) n = 0;
    }
    uint8_t *dp = resolve(R, w, in, l, &dsp, &d, size, 1);
    if (!dp) return;
    emu_cp e;
    memset(&e, 0, sizeof e);
    (void)ssp;
    if (n) {
      /* the source must be aligned to the copy size and the bytes read in bounds */
      if (s & (size - 1)) {
        dlcemu_report(R, DLCEMU_ERROR_MISALIGNED, w, l, in, "misaligned cp.async source 0x%llx for a %u-byte copy",
                   (unsigned long long)s, size);
        return;
      }
      const emu_range *g = dlcemu_find_range(R, s);
      if (WIN_TAG(s) != 0 || !g || s + n > g->end) {
        if (!g) g = dlcemu_near_range(R, s);
        if (g)
          dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, l, in,
                     "out-of-bounds cp.async read of %u bytes at 0x%llx: %llu bytes past the end of the %llu-byte "
                     "allocation at 0x%llx",
                     n, (unsigned long long)s, (unsigned long long)(s + n - g->end),
                     (unsigned long long)(g->end - g->base), (unsigned long long)g->base);
        else
          dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, l, in,
                     "out-of-bounds cp.async read of %u bytes at 0x%llx: not inside any allocation", n,
                     (unsigned long long)s);
        return;
      }
      memcpy(e.data, (const void *)(uintptr_t)s, n);
      mg |= 1u << l;
    }
    srcs[l] = s;
    dsts[l] = d;
    if (R->shadow_active) {
      for (unsigned i = 0; i < size; i++)
        if (R->shadow[d + i] == SH_PENDING || R->shadow[d + i] == SH_READING) {
          dlcemu_poison_report(R, w, l, in, d, size, 1);
          return;
        }
    }
    if (R->check_races && dlcemu_race_write(R, w, l, in, pc, d, size, NULL)) return;
    e.dst = (uint32_t)d;
    e.size = (uint8_t)size;
    e.pc = pc;
    emu_cpq *q = &w->cp[l];
    e.group = q->committed;
    if (dlcemu_grow(&q->e, &q->cap, q->n + 1, sizeof(emu_cp))) {
      dlcemu_report(R, DLCEMU_ERROR_OUT_OF_MEMORY, w, l, in, "out of memory for the cp.async queue");
      return;
    }
    q->e[q->n++] = e;
    memset(R->shadow + d, SH_PENDING, size);
    memset(dp, 0xFF, size); /* the poison pattern until the copy lands */
    R->pending_bytes += size;
    R->shadow_active = 1;
    R->st.cp_async_copies++;
    R->st.cp_async_bytes += size;
  }
  stat_shared(&R->st.cp_async, dsts, exec, size);
  stat_global(&R->st.global_load, srcs, mg, size);
}

/* ------------------------------------------------------------- mbarrier, TMA */
/* the shared offset of an mbarrier operand (shared or generic address) */
static int mbar_offset(emu_run *R, emu_warp *w, const emu_insn *in, int lane, uint64_t a, uint32_t *off) {
  int sp = in->space;
  uint8_t *p = resolve(R, w, in, lane, &sp, &a, 8, 1);
  if (!p) return -1;
  if (sp != SP_SHARED) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in, "the mbarrier address is not in shared memory");
    return -1;
  }
  *off = (uint32_t)a;
  return 0;
}

/* mbarrier instructions, lane by lane in lane order.  Returns the lanes that
 * went to sleep in try_wait (they stay at this instruction), or ~0u after an
 * error. */
static uint32_t exec_mbar(emu_run *R, emu_warp *w, const emu_insn *in, uint32_t exec) {
  uint32_t slept = 0, notdone = 0;
  R->st.mbarrier_ops++;
  uint32_t m = exec;
  while (m) {
    int l = __builtin_ctz(m);
    m &= m - 1;
    uint32_t off;
    if (mbar_offset(R, w, in, l, lane_addr(w, in->a[1], l, in->imm, (in->flags & IF_ADDR32) != 0), &off)) return ~0u;
    int rc = 0;
    switch (in->op) {
    case OP_MBAR_INIT: rc = dlcemu_mbar_init(R, w, l, in, off, w->r[in->a[3]][l] & 0xFFFFFFFFu); break;
    case OP_MBAR_INVAL: rc = dlcemu_mbar_inval(R, w, l, in, off); break;
    case OP_MBAR_ARRIVE: {
      uint64_t count = in->a[3] != SLOT_NONE ? w->r[in->a[3]][l] & 0xFFFFFFFFu : 1;
      uint64_t tx = in->a[2] != SLOT_NONE ? w->r[in->a[2]][l] & 0xFFFFFFFFu : 0;
      uint64_t state = 0;
      rc = dlcemu_mbar_arrive(R, w, l, in, off, count, tx, &state);
      w->r[in->a[0]][l] = state;
      break;
    }
    case OP_MBAR_EXPECT_TX:
    case OP_MBAR_COMPLETE_TX: {
      int64_t n = (int64_t)(w->r[in->a[2]][l] & 0xFFFFFFFFu);
      rc = dlcemu_mbar_tx(R, w, l, in, off, in->op == OP_MBAR_EXPECT_TX ? n : -n);
      break;
    }
    default: { /* test_wait / try_wait */
      int done = 0, sleep = in->op == OP_MBAR_TRY_WAIT;
      rc = dlcemu_mbar_wait(R, w, l, in, off, in->sub, w->r[in->a[2]][l], sleep, &done);
      if (!rc && !done) {
        if (sleep) slept |= 1u << l;
        else notdone |= 1u << l;
      }
      if (!rc && !sleep) w->p[in->a[0]] = (w->p[in->a[0]] & ~(1u << l)) | (uint32_t)done << l;
      if (!rc && sleep && done) w->p[in->a[0]] |= 1u << l;
      break;
    }
    }
    if (rc) return ~0u;
  }
  if (notdone) R->yield = 1; /* a test_wait spin: let the other warps run */
  return slept;
}

/* cp.async.bulk.tensor loads and stores: per executing lane (usually one elected thread) */
static void exec_bulk_tensor(emu_run *R, emu_warp *w, const emu_insn *in, uint32_t exec) {
  const uint32_t *cs = &R->k->vpool[in->a[2] + 1];
  uint32_t m = exec;
  while (m) {
    int l = __builtin_ctz(m);
    m &= m - 1;
    int sp = SP_SHARED;
    uint64_t d = lane_addr(w, in->a[0], l, in->imm, (in->flags & IF_ADDR32) != 0);
    if (!resolve(R, w, in, l, &sp, &d, 16, in->sub == 0)) return;
    /* the tensor map: 128 bytes, 64-byte aligned, in param, const or global memory */
    uint64_t ta = lane_addr(w, in->a[1], l, in->imm2, (in->flags & IF_ADDR32B) != 0), tb = ta + 64;
    int tsp = SP_GENERIC, tsp2 = SP_GENERIC;
    const uint8_t *t0 = resolve(R, w, in, l, &tsp, &ta, 64, 0), *t1 = t0 ? resolve(R, w, in, l, &tsp2, &tb, 64, 0) : NULL;
    if (!t0 || !t1) return;
    if (tsp == SP_SHARED || tsp == SP_LOCAL) {
      dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, l, in, "the tensor map must be in param, const or global memory, not %s",
                    space_name(tsp));
      return;
    }
    emu_tmap t;
    memcpy(&t, t0, 64);
    memcpy((uint8_t *)&t + 64, t1, 64);
    int32_t coords[5];
    for (int i = 0; i < in->vec; i++) coords[i] = (int32_t)w->r[cs[i]][l];
    if (in->sub) { /* a store: shared -> global */
      if (dlcemu_bulk_tensor_store(R, w, l, in, (uint32_t)d, &t, coords)) return;
      continue;
    }
    uint64_t mb = (in->a[3] != SLOT_NONE ? w->r[in->a[3]][l] : 0) + w->r[in->a[4]][l];
    if (in->flags & IF_ADDR32C) mb &= 0xFFFFFFFFu;
    int msp = SP_SHARED;
    if (!resolve(R, w, in, l, &msp, &mb, 8, 1)) return;
    if (dlcemu_bulk_tensor_load(R, w, l, in, (uint32_t)d, &t, coords, (uint32_t)mb)) return;
  }
}

/* -------------------------------------------------------------- calls */
static void copy_frames(emu_run *R, emu_warp *w, int lane, const uint32_t *triples, uint32_t n) {
  uint8_t *tp = w->tparam + (size_t)lane * R->k->tparam_bytes;
  for (uint32_t i = 0; i < n; i++) memmove(tp + triples[3 * i + 1], tp + triples[3 * i], triples[3 * i + 2]);
}

static void read_cstring(emu_run *R, uint64_t a, char *out, size_t cap) {
  out[0] = 0;
  const emu_range *g = dlcemu_find_range(R, a);
  if (!g) return;
  size_t i = 0;
  for (; i + 1 < cap && a + i < g->end; i++) {
    char c = ((const char *)(uintptr_t)a)[i];
    if (!c) break;
    out[i] = c;
  }
  out[i] = 0;
}

static void exec_call_extern(emu_run *R, emu_warp *w, const emu_insn *in, uint32_t exec) {
  const uint32_t *ci = R->k->call_info + in->imm;
  uint32_t na = ci[0], nr = ci[1];
  if (in->sub2 == EXT_ASSERT) {
    int l = __builtin_ctz(exec);
    uint8_t *tp = w->tparam + (size_t)l * R->k->tparam_bytes;
    uint64_t msg = 0, file = 0, line = 0;
    if (na > 0) memcpy(&msg, tp + ci[2], 8);
    if (na > 1) memcpy(&file, tp + ci[5], 8);
    if (na > 2) memcpy(&line, tp + ci[8], 4);
    char m[256], f[256];
    read_cstring(R, msg, m, sizeof m);
    read_cstring(R, file, f, sizeof f);
    dlcemu_report(R, DLCEMU_ERROR_TRAP, w, l, in, "device-side assertion failed: %s (%s:%u)", m, f, (unsigned)line);
    return;
  }
  /* vprintf: prints nothing and returns 0 */
  LANES(exec, {
    uint8_t *tp = w->tparam + (size_t)l * R->k->tparam_bytes;
    for (uint32_t i = 0; i < nr; i++) memset(tp + ci[2 + 3 * (na + i) + 1], 0, ci[2 + 3 * (na + i) + 2]);
  });
}

/* fma.rn.f32 over a lane mask; on CPUs with FMA the clone uses the instruction
 * instead of a libm call per lane (same results: fmaf is exact either way) */
__attribute__((target_clones("default", "fma"))) static void fma_lanes_f32(uint64_t *d, const uint64_t *a,
                                                                          const uint64_t *b, const uint64_t *c,
                                                                          uint32_t exec) {
  LANES(exec, d[l] = canon32(fmaf(F32(a[l]), F32(b[l]), F32(c[l]))));
}

/* compare results of a scalar 32-bit integer or f32 setp, switch outside the lane loop */
static int cmp_fast(const emu_insn *in, const uint64_t *x, const uint64_t *y, uint32_t exec, uint32_t *res) {
  uint32_t r = 0;
  int t = in->t2;
#define CMPLOOP(expr) LANES(exec, if (expr) r |= 1u << l)
  if (t == T_S32 || t == T_U32 || t == T_B32) {
    int sg = t == T_S32;
    switch (in->sub) {
    case CMP_EQ: CMPLOOP((uint32_t)x[l] == (uint32_t)y[l]); break;
    case CMP_NE: CMPLOOP((uint32_t)x[l] != (uint32_t)y[l]); break;
    case CMP_LT: if (sg) CMPLOOP((int32_t)x[l] < (int32_t)y[l]); else CMPLOOP((uint32_t)x[l] < (uint32_t)y[l]); break;
    case CMP_LE: if (sg) CMPLOOP((int32_t)x[l] <= (int32_t)y[l]); else CMPLOOP((uint32_t)x[l] <= (uint32_t)y[l]); break;
    case CMP_GT: if (sg) CMPLOOP((int32_t)x[l] > (int32_t)y[l]); else CMPLOOP((uint32_t)x[l] > (uint32_t)y[l]); break;
    case CMP_GE: if (sg) CMPLOOP((int32_t)x[l] >= (int32_t)y[l]); else CMPLOOP((uint32_t)x[l] >= (uint32_t)y[l]); break;
    case CMP_LO: CMPLOOP((uint32_t)x[l] < (uint32_t)y[l]); break;
    case CMP_LS: CMPLOOP((uint32_t)x[l] <= (uint32_t)y[l]); break;
    case CMP_HI: CMPLOOP((uint32_t)x[l] > (uint32_t)y[l]); break;
    case CMP_HS: CMPLOOP((uint32_t)x[l] >= (uint32_t)y[l]); break;
    default: return 0;
    }
  } else if (t == T_F32 && !(in->flags & IF_FTZ)) {
    switch (in->sub) { /* ordered compares are false on NaN, as C's are */
    case CMP_EQ: CMPLOOP(F32(x[l]) == F32(y[l])); break;
    case CMP_LT: CMPLOOP(F32(x[l]) < F32(y[l])); break;
    case CMP_LE: CMPLOOP(F32(x[l]) <= F32(y[l])); break;
    case CMP_GT: CMPLOOP(F32(x[l]) > F32(y[l])); break;
    case CMP_GE: CMPLOOP(F32(x[l]) >= F32(y[l])); break;
    case CMP_NEU: CMPLOOP(!(F32(x[l]) == F32(y[l]))); break;
    case CMP_GEU: CMPLOOP(!(F32(x[l]) < F32(y[l]))); break;
    case CMP_LTU: CMPLOOP(!(F32(x[l]) >= F32(y[l]))); break;
    default: return 0;
    }
  } else {
    return 0;
  }
#undef CMPLOOP
  *res = r;
  return 1;
}

/* ------------------------------------------------------------ the loop */
static void set_pcs(emu_warp *w, uint32_t lanes, uint32_t pc) {
  while (lanes) {
    int l = __builtin_ctz(lanes);
    lanes &= lanes - 1;
    w->pc[l] = pc;
  }
}

static inline void pwrite(uint32_t *p, uint32_t slot, uint32_t exec, uint32_t val) {
  p[slot] = (p[slot] & ~exec) | (val & exec);
}

/* ------------------------------------------------------------ the executors
 * One function an instruction family (ops.def's executor column), called by
 * dlcemu_exec_warp with the warp's state at the instruction; it tells the
 * loop what comes next. */
typedef enum {
  EX_NEXT,   /* the executing lanes go on at ex->next (pc + 1, or a branch's target) */
  EX_STAY,   /* the executor has set the lanes' pcs itself (divergence, a wait): no advance */
  EX_RETURN, /* the warp stops here (an error, a restart, a barrier it waits at) */
} exec_next;

typedef struct exec_ctx {
  emu_run *R;
  emu_warp *w;
  const emu_insn *in;
  uint32_t pc;
  uint32_t active;           /* the lanes at pc */
  uint32_t exec;             /* those of them whose guard holds */
  uint32_t next;             /* where the lanes go on (EX_NEXT) */
  uint64_t *d;               /* the register operands (emu_insn.rmask), or NULL */
  const uint64_t *a, *b, *c;
  bool yield;                /* end the warp's time slice after this instruction */
} exec_ctx;

static exec_next ex_integer(exec_ctx *ex);

/* add, sub, mul, mad, fma, min, max, abs, neg, div, rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh, copysign */
static exec_next ex_arith(exec_ctx *ex) {
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint64_t *d = ex->d;
  const uint64_t *a = ex->a;
  const uint64_t *b = ex->b;
  const uint64_t *c = ex->c;
  int t = ex->in->t;
  if (t == T_F32) {
    if (in->rnd <= RND_RN && !(in->flags & (IF_FTZ | IF_SAT))) {
      /* the common cases, vectorizable */
      switch (in->op) {
      case OP_ADD: LANES(exec, d[l] = canon32(F32(a[l]) + F32(b[l]))); return EX_NEXT;
      case OP_SUB: LANES(exec, d[l] = canon32(F32(a[l]) - F32(b[l]))); return EX_NEXT;
      case OP_MUL: LANES(exec, d[l] = canon32(F32(a[l]) * F32(b[l]))); return EX_NEXT;
      case OP_FMA:
      case OP_MAD: fma_lanes_f32(d, a, b, c, exec); return EX_NEXT;
      default: break;
      }
    }
    LANES(exec, d[l] = f32_op(in, (uint32_t)a[l], b ? (uint32_t)b[l] : 0, c ? (uint32_t)c[l] : 0));
  } else if (t == T_F64) {
    if (in->rnd <= RND_RN && in->op == OP_FMA)
      LANES(exec, d[l] = canon64(fma(F64(a[l]), F64(b[l]), F64(c[l]))));
    else
      LANES(exec, d[l] = f64_op(in, a[l], b ? b[l] : 0, c ? c[l] : 0));
  } else if (t == T_F16 || t == T_BF16) {
    int fmt = t == T_F16 ? FMT_F16 : FMT_BF16;
    LANES(exec, d[l] = half_op(in, fmt, (uint16_t)a[l], b ? (uint16_t)b[l] : 0, c ? (uint16_t)c[l] : 0));
  } else if (t == T_F16X2 || t == T_BF16X2) {
    int fmt = t == T_F16X2 ? FMT_F16 : FMT_BF16;
    LANES(exec, {
      uint64_t lo = half_op(in, fmt, (uint16_t)a[l], b ? (uint16_t)b[l] : 0, c ? (uint16_t)c[l] : 0);
      uint64_t hi = half_op(in, fmt, (uint16_t)(a[l] >> 16), b ? (uint16_t)(b[l] >> 16) : 0,
                            c ? (uint16_t)(c[l] >> 16) : 0);
      d[l] = lo | hi << 16;
    });
  } else {
    return ex_integer(ex);
  }
  return EX_NEXT;
}

/* and, or, xor, shl, shr, mul24, mad24, sad, rem, popc, clz, fns, bmsk, bfind, brev, bfe, bfi, prmt, shf, not, cnot, lop3, dp4a, dp2a, addc, subc, madc */
static exec_next ex_integer(exec_ctx *ex) {
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint64_t *d = ex->d;
  const uint64_t *a = ex->a;
  const uint64_t *b = ex->b;
  const uint64_t *c = ex->c;
  int t = ex->in->t;
  uint64_t(*r)[32] = ex->w->r;
  unsigned n = tsize[t] * 8u;
  if (!(in->flags & (IF_CC | IF_SAT | IF_HI | IF_WIDE | IF_RELU)) && (n == 32 || n == 64)) {
    uint64_t M = bmask(n);
    switch (in->op) {
    case OP_ADD: LANES(exec, d[l] = (a[l] + b[l]) & M); return EX_NEXT;
    case OP_SUB: LANES(exec, d[l] = (a[l] - b[l]) & M); return EX_NEXT;
    case OP_MUL: LANES(exec, d[l] = (a[l] * b[l]) & M); return EX_NEXT;
    case OP_MAD: LANES(exec, d[l] = (a[l] * b[l] + c[l]) & M); return EX_NEXT;
    case OP_AND: LANES(exec, d[l] = a[l] & b[l] & M); return EX_NEXT;
    case OP_OR: LANES(exec, d[l] = (a[l] | b[l]) & M); return EX_NEXT;
    case OP_XOR: LANES(exec, d[l] = (a[l] ^ b[l]) & M); return EX_NEXT;
    case OP_SHL: LANES(exec, {
        uint64_t sh = b[l] & 0xFFFFFFFFu;
        d[l] = sh >= n ? 0 : (a[l] << sh) & M;
      });
      return EX_NEXT;
    case OP_SHR:
      if (tsigned[t]) LANES(exec, {
          uint64_t sh = b[l] & 0xFFFFFFFFu;
          int64_t x = sext(a[l], n);
          d[l] = (uint64_t)(x >> (sh >= n ? n - 1 : sh)) & M;
        });
      else LANES(exec, {
          uint64_t sh = b[l] & 0xFFFFFFFFu;
          d[l] = sh >= n ? 0 : (a[l] & M) >> sh;
        });
      return EX_NEXT;
    default: break;
    }
  } else if ((in->op == OP_MUL || in->op == OP_MAD) && (in->flags & (IF_WIDE | IF_CC | IF_SAT)) == IF_WIDE &&
             n == 32) {
    /* mul.wide / mad.wide of 32-bit operands: address arithmetic */
    if (tsigned[t]) {
      if (in->op == OP_MUL) LANES(exec, d[l] = (uint64_t)((int64_t)(int32_t)a[l] * (int32_t)b[l]));
      else LANES(exec, d[l] = (uint64_t)((int64_t)(int32_t)a[l] * (int32_t)b[l]) + c[l]);
    } else {
      if (in->op == OP_MUL) LANES(exec, d[l] = (a[l] & 0xFFFFFFFFu) * (b[l] & 0xFFFFFFFFu));
      else LANES(exec, d[l] = (a[l] & 0xFFFFFFFFu) * (b[l] & 0xFFFFFFFFu) + c[l]);
    }
    return EX_NEXT;
  }
  uint64_t *carry = r[SR_CARRY];
  const uint64_t *e4 = in->a[4] != SLOT_NONE ? r[in->a[4]] : NULL;
  LANES(exec, d[l] = int_op(in, a[l], b ? b[l] : 0, c ? c[l] : 0, e4 ? e4[l] : 0, &carry[l]));
  return EX_NEXT;
}

/* testp */
static exec_next ex_testp(exec_ctx *ex) {
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  const uint64_t *a = ex->a;
  int t = ex->in->t;
  uint32_t *p = ex->w->p;
  uint32_t v = 0;
  LANES(exec, {
    double x = t == T_F32 ? (double)F32(a[l]) : F64(a[l]);
    int res;
    switch (in->sub) {
    case TESTP_FINITE: res = isfinite(x); break;
    case TESTP_INFINITE: res = isinf(x); break;
    case TESTP_NUMBER: res = !isnan(x); break;
    case TESTP_NAN: res = isnan(x); break;
    case TESTP_NORMAL:
      res = t == T_F32 ? isnormal((float)x) : isnormal(x);
      break;
    default:
      res = t == T_F32 ? (fpclassify((float)x) == FP_SUBNORMAL) : (fpclassify(x) == FP_SUBNORMAL);
      break;
    }
    if (res) v |= 1u << l;
  });
  pwrite(p, in->a[0], exec, v);
  return EX_NEXT;
}

/* setp, set */
static exec_next ex_compare(exec_ctx *ex) {
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint64_t *d = ex->d;
  int t = ex->in->t;
  uint64_t(*r)[32] = ex->w->r;
  uint32_t *p = ex->w->p;
  uint32_t res = 0, res_hi = 0;
  int packed = t == T_F16X2 || t == T_BF16X2;
  uint32_t cm = p[in->a[4]];
  if (in->flags & IF_NEGB) cm = ~cm;
  const uint64_t *x = r[in->a[2]], *y = r[in->a[3]];
  if (packed || !cmp_fast(in, x, y, exec, &res))
    LANES(exec, {
      if (cmp_lane(in, in->t2, x[l], y[l], 0)) res |= 1u << l;
      if (packed && cmp_lane(in, in->t2, x[l], y[l], 1)) res_hi |= 1u << l;
    });
  if (in->op == OP_SETP) {
    /* p = r op c, q = !r op c (the upper half's compare for packed types), as masks */
    uint32_t rq = packed ? res_hi : ~res, pv, qv;
    switch (in->sub2) {
    case BOOL_AND: pv = res & cm; qv = rq & cm; break;
    case BOOL_OR: pv = res | cm; qv = rq | cm; break;
    case BOOL_XOR: pv = res ^ cm; qv = rq ^ cm; break;
    default: pv = res; qv = rq; break;
    }
    pwrite(p, in->a[0], exec, pv);
    if (in->a[1] != PSLOT_SINK) pwrite(p, in->a[1], exec, qv);
  } else {
    int dt = in->t;
    LANES(exec, {
      int cc = cm >> l & 1;
      if (packed) {
        uint64_t lo = combine(in->sub2, res >> l & 1, cc) ? (dt == T_F16X2 ? 0x3C00u : 0xFFFFu) : 0;
        uint64_t hi = combine(in->sub2, res_hi >> l & 1, cc) ? (dt == T_F16X2 ? 0x3C00u : 0xFFFFu) : 0;
        d[l] = lo | hi << 16;
      } else {
        int v = combine(in->sub2, res >> l & 1, cc);
        if (dt == T_F32) d[l] = v ? 0x3F800000u : 0;
        else d[l] = v ? bmask(tsize[dt] * 8u) : 0;
      }
    });
  }
  return EX_NEXT;
}

/* selp */
static exec_next ex_selp(exec_ctx *ex) {
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint64_t *d = ex->d;
  const uint64_t *a = ex->a;
  const uint64_t *b = ex->b;
  int t = ex->in->t;
  uint32_t *p = ex->w->p;
  uint32_t pm = p[in->a[3]];
  if (in->flags & IF_NEGB) pm = ~pm;
  uint64_t M = bmask(tsize[t] * 8u);
  LANES(exec, d[l] = ((pm >> l & 1) ? a[l] : b[l]) & M);
  return EX_NEXT;
}

/* slct */
static exec_next ex_slct(exec_ctx *ex) {
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint64_t *d = ex->d;
  const uint64_t *a = ex->a;
  const uint64_t *b = ex->b;
  const uint64_t *c = ex->c;
  int t = ex->in->t;
  uint64_t M = bmask(tsize[t] * 8u);
  LANES(exec, {
    int ge;
    if (in->t2 == T_F32) {
      float f = F32(c[l]);
      if (in->flags & IF_FTZ) f = fp_ftz32(f);
      ge = f >= 0.0f;
    } else {
      ge = sext(c[l], 32) >= 0;
    }
    d[l] = (ge ? a[l] : b[l]) & M;
  });
  return EX_NEXT;
}

/* mov */
static exec_next ex_mov(exec_ctx *ex) {
  uint32_t exec = ex->exec;
  uint64_t *d = ex->d;
  const uint64_t *a = ex->a;
  int t = ex->in->t;
  uint64_t M = bmask(tsize[t] * 8u);
  LANES(exec, d[l] = a[l] & M);
  return EX_NEXT;
}

/* mov_pack */
static exec_next ex_mov_pack(exec_ctx *ex) {
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint64_t *d = ex->d;
  int t = ex->in->t;
  uint64_t(*r)[32] = ex->w->r;
  emu_kernel *k = ex->R->k;
  const uint32_t *el = &k->vpool[in->a[1] + 1];
  unsigned n = in->vec, bits = tsize[t] * 8u / n;
  uint64_t M = bmask(bits);
  LANES(exec, {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (r[el[i]][l] & M) << (bits * i);
    d[l] = v;
  });
  return EX_NEXT;
}

/* mov_unpack */
static exec_next ex_mov_unpack(exec_ctx *ex) {
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  const uint64_t *a = ex->a;
  int t = ex->in->t;
  uint64_t(*r)[32] = ex->w->r;
  emu_kernel *k = ex->R->k;
  const uint32_t *el = &k->vpool[in->a[0] + 1];
  unsigned n = in->vec, bits = tsize[t] * 8u / n;
  uint64_t M = bmask(bits);
  LANES(exec, {
    uint64_t v = a[l];
    for (unsigned i = 0; i < n; i++) r[el[i]][l] = (v >> (bits * i)) & M;
  });
  return EX_NEXT;
}

/* mov_clock */
static exec_next ex_mov_clock(exec_ctx *ex) {
  emu_run *R = ex->R;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint64_t *d = ex->d;
  uint64_t clk = R->clock;
  uint64_t v;
  switch (in->sub) {
  case SR_CLOCK: v = clk & 0xFFFFFFFFu; break;
  case SR_CLOCK_HI: v = clk >> 32; break;
  case SR_GLOBALTIMER_LO: v = clk & 0xFFFFFFFFu; break;
  case SR_GLOBALTIMER_HI: v = clk >> 32; break;
  default: v = clk; break;
  }
  LANES(exec, d[l] = v);
  return EX_NEXT;
}

/* pred_logic */
static exec_next ex_pred_logic(exec_ctx *ex) {
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint32_t *p = ex->w->p;
  uint32_t x = p[in->a[1]];
  if (in->flags & IF_NEGA) x = ~x;
  uint32_t y = 0;
  if (in->a[2] != SLOT_NONE) {
    y = p[in->a[2]];
    if (in->flags & IF_NEGB) y = ~y;
  }
  uint32_t v;
  switch (in->sub) {
  case PRED_AND: v = x & y; break;
  case PRED_OR: v = x | y; break;
  case PRED_XOR: v = x ^ y; break;
  case PRED_NOT: v = ~x; break;
  default: v = x; break;
  }
  pwrite(p, in->a[0], exec, v);
  return EX_NEXT;
}

/* cvt */
static exec_next ex_cvt(exec_ctx *ex) {
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint64_t *d = ex->d;
  const uint64_t *a = ex->a;
  const uint64_t *b = ex->b;
  if (in->t == T_F16X2 || in->t == T_BF16X2) {
    int fmt = in->t == T_F16X2 ? FMT_F16 : FMT_BF16;
    int opts = ((in->flags & IF_RELU) ? FPO_RELU : 0) | ((in->flags & IF_SATFINITE) ? FPO_SATFINITE : 0);
    int rnd = in->rnd ? in->rnd : RND_RN;
    LANES(exec, d[l] = dlcemu_fp_from_double(fmt, F32(a[l]), rnd, opts) << 16 | dlcemu_fp_from_double(fmt, F32(b[l]), rnd, opts));
  } else if ((in->t == T_S64 || in->t == T_U64) && (in->t2 == T_S32 || in->t2 == T_U32) && !in->flags) {
    if (in->t2 == T_S32) LANES(exec, d[l] = (uint64_t)(int64_t)(int32_t)a[l]);
    else LANES(exec, d[l] = a[l] & 0xFFFFFFFFu);
  } else if ((in->t == T_S32 || in->t == T_U32) && (in->t2 == T_S64 || in->t2 == T_U64) && !in->flags) {
    LANES(exec, d[l] = a[l] & 0xFFFFFFFFu);
  } else {
    LANES(exec, d[l] = cvt_lane(in, a[l]));
  }
  return EX_NEXT;
}

/* cvta */
static exec_next ex_cvta(exec_ctx *ex) {
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint64_t *d = ex->d;
  const uint64_t *a = ex->a;
  int t = ex->in->t;
  uint64_t win = in->space == SP_SHARED ? WIN_SHARED
                 : in->space == SP_LOCAL ? WIN_LOCAL
                 : in->space == SP_KPARAM ? WIN_PARAM
                                          : 0;
  uint64_t M = t == T_U32 ? 0xFFFFFFFFu : ~0ull;
  if (in->flags & IF_TO) LANES(exec, d[l] = (a[l] - win) & M);
  else LANES(exec, d[l] = (win + (t == T_U32 ? (a[l] & 0xFFFFFFFFu) : a[l])) & M);
  return EX_NEXT;
}

/* isspacep */
static exec_next ex_isspacep(exec_ctx *ex) {
  emu_run *R = ex->R;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  const uint64_t *a = ex->a;
  uint32_t *p = ex->w->p;
  uint32_t v = 0;
  LANES(exec, {
    uint64_t x = a[l];
    int yes;
    switch (in->space) {
    case SP_SHARED: yes = WIN_TAG(x) == 1; break;
    case SP_LOCAL: yes = WIN_TAG(x) == 2; break;
    case SP_KPARAM: yes = WIN_TAG(x) == 3; break;
    case SP_CONST: {
      const emu_range *g = dlcemu_find_range(R, x);
      yes = g && g->readonly;
      break;
    }
    default: yes = WIN_TAG(x) == 0; break;
    }
    if (yes) v |= 1u << l;
  });
  pwrite(p, in->a[0], exec, v);
  return EX_NEXT;
}

/* The executors that hand the executing lanes to one function of this file
 * (loads and stores, atomics, calls of body-less functions, TMA copies);
 * the warp stops when it reports an error. */
#define EX_LANES_TO(name, fn)                                     \
  static exec_next name(exec_ctx *ex) {                           \
    if (ex->exec) fn(ex->R, ex->w, ex->in, ex->exec);             \
    return ex->R->status ? EX_RETURN : EX_NEXT;                   \
  }
EX_LANES_TO(ex_ldst, exec_ldst)
EX_LANES_TO(ex_atom, exec_atom)
EX_LANES_TO(ex_call_extern, exec_call_extern)
EX_LANES_TO(ex_bulk_tensor, exec_bulk_tensor)
#undef EX_LANES_TO

/* The executing lanes jump to target: all of the lanes at pc go there
 * (EX_NEXT), or the warp diverges, the others going on to pc + 1. */
static exec_next jump_lanes(exec_ctx *ex, uint32_t target) {
  if (ex->exec == ex->active) {
    ex->next = target;
    return EX_NEXT;
  }
  emu_materialize(ex->w);
  set_pcs(ex->w, ex->exec, target);
  set_pcs(ex->w, ex->active & ~ex->exec, ex->pc + 1);
  return EX_STAY;
}

/* bra */
static exec_next ex_bra(exec_ctx *ex) {
  return ex->exec ? jump_lanes(ex, (uint32_t)ex->in->imm) : EX_NEXT;
}

/* call */
static exec_next ex_call(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint32_t pc = ex->pc;
  emu_kernel *k = ex->R->k;
  if (!exec) return EX_NEXT;
  const uint32_t *ci = k->call_info + in->imm;
  uint32_t maxd = k->max_call_depth;
  LANES(exec, {
    if (w->depth[l] >= maxd) {
      dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, l, in, "call stack overflow");
      return EX_RETURN;
    }
    copy_frames(R, w, l, ci + 2, ci[0]);
    w->cstack[(size_t)l * maxd + w->depth[l]++] = pc;
  });
  return jump_lanes(ex, in->a[0]);
}

/* ret, exit */
static exec_next ex_ret(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint32_t active = ex->active;
  uint32_t pc = ex->pc;
  emu_kernel *k = ex->R->k;
  const emu_insn *code = ex->R->k->code;
  uint32_t leaving = 0, returning = 0;
  if (in->op == OP_EXIT) {
    leaving = exec;
  } else {
    LANES(exec, {
      if (w->depth[l]) returning |= 1u << l;
      else leaving |= 1u << l;
    });
  }
  uint32_t ret_pc = UINT32_MAX;
  int same = 1;
  uint32_t maxd = k->max_call_depth;
  LANES(returning, {
    uint32_t cp = w->cstack[(size_t)l * maxd + --w->depth[l]];
    const uint32_t *ci = k->call_info + code[cp].imm;
    copy_frames(R, w, l, ci + 2 + 3 * ci[0], ci[1]);
    if (ret_pc == UINT32_MAX) ret_pc = cp + 1;
    else if (ret_pc != cp + 1) same = 0;
    w->pc[l] = cp + 1;
  });
  if (!leaving && same && returning == active) {
    ex->next = ret_pc;
    return EX_NEXT;
  }
  emu_materialize(w);
  if (returning) {
    /* restore the per-lane return pcs (materialize may have overwritten them) */
    LANES(returning, {
      uint32_t cp = w->cstack[(size_t)l * maxd + w->depth[l]];
      w->pc[l] = cp + 1;
    });
  }
  set_pcs(w, active & ~exec, pc + 1);
  if (leaving && R->nbstores) LANES(leaving, dlcemu_bulk_wait(R, w, l, 0, 1)); /* an exiting thread's TMA stores complete */
  if (leaving) dlcemu_lanes_exit(R, w, leaving);
  if (R->status || R->restart) return EX_RETURN;
  return EX_STAY;
}

/* trap, brkpt */
static exec_next ex_trap(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  if (exec) {
    dlcemu_report(R, DLCEMU_ERROR_TRAP, w, __builtin_ctz(exec), in, "%s executed",
               in->op == OP_TRAP ? "trap" : "brkpt");
    return EX_RETURN;
  }
  return EX_NEXT;
}

/* bar */
static exec_next ex_bar(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint32_t active = ex->active;
  uint32_t pc = ex->pc;
  dlcemu_bar_exec(R, w, in, pc, active, exec);
  if (R->status || R->restart) return EX_RETURN;
  return EX_STAY;
}

/* nanosleep */
static exec_next ex_nanosleep(exec_ctx *ex) {
  ex->yield = true; /* let the other warps run */
  return EX_NEXT;
}

/* membar, fence, nop */
static exec_next ex_nop(exec_ctx *ex) {
  return EX_NEXT;
}

/* activemask */
static exec_next ex_activemask(exec_ctx *ex) {
  uint32_t exec = ex->exec;
  uint64_t *d = ex->d;
  LANES(exec, d[l] = exec);
  return EX_NEXT;
}

/* bar_warp, shfl, vote, match, redux, elect */
static exec_next ex_collective(exec_ctx *ex) {
  emu_warp *w = ex->w;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint32_t active = ex->active;
  uint32_t pc = ex->pc;
  uint64_t *d = ex->d;
  int t = ex->in->t;
  uint64_t(*r)[32] = ex->w->r;
  uint32_t *p = ex->w->p;
  if (!exec) return EX_NEXT;
  uint32_t mslot = in->op == OP_BAR_WARP ? in->a[0]
                   : in->op == OP_SHFL   ? in->a[5]
                   : in->op == OP_MATCH  ? in->a[3]
                                         : in->a[2]; /* vote, redux, elect */
  uint32_t need = member_mask(w, mslot, exec) & w->live;
  if (!gather(w, pc, active, &exec, need)) return EX_STAY;
  if (in->op == OP_SHFL) {
    uint64_t src[32];
    const uint64_t *av = r[in->a[2]], *bv = r[in->a[3]], *cv = r[in->a[4]];
    for (int l = 0; l < 32; l++) src[l] = av[l];
    uint32_t pv = 0;
    LANES(exec, {
      int bval = (int)(bv[l] & 0x1F);
      uint32_t cfull = (uint32_t)cv[l];
      int cval = (int)(cfull & 0x1F), seg = (int)((cfull >> 8) & 0x1F);
      int maxl = (l & seg) | (cval & ~seg), minl = l & seg;
      int j, ok;
      switch (in->sub) {
      case SHFL_UP: j = l - bval; ok = j >= maxl; break;
      case SHFL_DOWN: j = l + bval; ok = j <= maxl; break;
      case SHFL_BFLY: j = l ^ bval; ok = j <= maxl; break;
      default: j = minl | (bval & ~seg); ok = j <= maxl; break;
      }
      if (!ok || j < 0 || j > 31) j = l;
      d[l] = src[j] & 0xFFFFFFFFu;
      if (ok) pv |= 1u << l;
    });
    pwrite(p, in->a[1], exec, pv);
  } else if (in->op == OP_VOTE) {
    uint32_t v = p[in->a[1]];
    if (in->flags & IF_NEGA) v = ~v;
    v &= exec;
    if (in->sub == VOTE_BALLOT) {
      LANES(exec, d[l] = v);
    } else {
      int res = in->sub == VOTE_ALL ? v == exec : in->sub == VOTE_ANY ? v != 0 : (v == 0 || v == exec);
      pwrite(p, in->a[0], exec, res ? FULL : 0);
    }
  } else if (in->op == OP_MATCH) {
    uint64_t M = bmask(tsize[t] * 8u);
    const uint64_t *x = r[in->a[2]];
    if (in->sub == 0) {
      LANES(exec, {
        uint32_t same = 0;
        uint32_t mm = exec;
        while (mm) {
          int j = __builtin_ctz(mm);
          mm &= mm - 1;
          if ((x[j] & M) == (x[l] & M)) same |= 1u << j;
        }
        d[l] = same;
      });
    } else {
      int all = 1;
      uint64_t first = x[__builtin_ctz(exec)] & M;
      LANES(exec, all &= (x[l] & M) == first);
      LANES(exec, d[l] = all ? exec : 0);
      pwrite(p, in->a[1], exec, all ? FULL : 0);
    }
  } else if (in->op == OP_ELECT) {
    /* the leader is the lowest executing lane of the member mask (lanes
     * outside the mask are undefined behaviour: they get the same answer) */
    uint32_t in_mask = exec & member_mask(w, mslot, exec);
    uint32_t leader = (uint32_t)__builtin_ctz(in_mask ? in_mask : exec);
    LANES(exec, d[l] = leader);
    pwrite(p, in->a[1], exec, 1u << leader);
  } else if (in->op == OP_REDUX) {
    const uint64_t *x = r[in->a[1]];
    int sg = tsigned[t];
    uint64_t acc = 0;
    int first = 1;
    LANES(exec, {
      uint64_t v = x[l] & 0xFFFFFFFFu;
      if (first) {
        acc = v;
        first = 0;
      } else {
        switch (in->sub) {
        case AOP_ADD: acc = (acc + v) & 0xFFFFFFFFu; break;
        case AOP_MIN: acc = (sg ? sext(v, 32) < sext(acc, 32) : v < acc) ? v : acc; break;
        case AOP_MAX: acc = (sg ? sext(v, 32) > sext(acc, 32) : v > acc) ? v : acc; break;
        case AOP_AND: acc &= v; break;
        case AOP_OR: acc |= v; break;
        default: acc ^= v; break;
        }
      }
    });
    LANES(exec, d[l] = acc);
  }
  if (exec != active) {
    /* lanes that had waited here rejoin */
    emu_materialize(w);
  }
  return EX_NEXT;
}

/* mma, ldmatrix, stmatrix */
static exec_next ex_matrix(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint32_t active = ex->active;
  uint32_t pc = ex->pc;
  if (w->live != FULL || exec != active) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, __builtin_ctz(active), in,
               "%s needs all 32 lanes of the warp (live lanes 0x%08x, executing 0x%08x)",
               dlcemu_op_names[in->op], w->live, exec);
    return EX_RETURN;
  }
  if (!gather(w, pc, active, &exec, FULL)) return EX_STAY;
  if (in->op == OP_MMA) exec_mma(R, w, in);
  else exec_matrix(R, w, in);
  if (R->status) return EX_RETURN;
  return EX_NEXT;
}

/* wgmma, wg_fence, wg_commit, wg_wait, setmaxnreg */
static exec_next ex_warpgroup(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint32_t active = ex->active;
  uint32_t pc = ex->pc;
  /* warpgroup collectives: the whole warp, then the 4 warps of the warpgroup */
  if (w->live != FULL || exec != active) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, __builtin_ctz(active), in,
                  "%s is a warpgroup collective: all 32 lanes of each warp must execute it (live lanes 0x%08x, "
                  "executing 0x%08x)",
                  dlcemu_op_names[in->op], w->live, exec);
    return EX_RETURN;
  }
  if (!gather(w, pc, active, &exec, FULL)) return EX_STAY;
  if (!dlcemu_wg_arrive(R, w, in, pc)) {
    if (R->status) return EX_RETURN;
    return EX_STAY; /* waits for the rest of its warpgroup */
  }
  /* the warpgroup is complete: the instruction runs once for it */
  if (in->op == OP_WGMMA && dlcemu_wgmma_issue(R, (uint32_t)w->id / 4, in, pc)) return EX_RETURN;
  if (in->op == OP_WG_COMMIT) dlcemu_wgmma_commit(R, (uint32_t)w->id / 4);
  if (in->op == OP_WG_WAIT) dlcemu_wgmma_wait(R, (uint32_t)w->id / 4, (uint32_t)in->imm);
  return EX_NEXT;
}

/* mbar_init, mbar_inval, mbar_arrive, mbar_expect_tx, mbar_complete_tx, mbar_test_wait, mbar_try_wait */
static exec_next ex_mbar(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint32_t active = ex->active;
  uint32_t pc = ex->pc;
  if (!exec) return EX_NEXT;
  uint32_t slept = exec_mbar(R, w, in, exec);
  if (R->status) return EX_RETURN;
  if (R->yield) {
    R->yield = 0;
    ex->yield = true;
  }
  if (slept) { /* the sleeping lanes stay here; an mbarrier phase completion moves them on */
    emu_materialize(w);
    set_pcs(w, active & ~slept, pc + 1);
    set_pcs(w, slept & w->mb_wait, pc);
    return EX_STAY;
  }
  return EX_NEXT;
}

/* bulk_commit */
static exec_next ex_bulk_commit(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  uint32_t exec = ex->exec;
  LANES(exec, dlcemu_bulk_commit(R, w, l));
  return EX_NEXT;
}

/* bulk_wait */
static exec_next ex_bulk_wait(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  LANES(exec, dlcemu_bulk_wait(R, w, l, (uint32_t)in->imm, 0));
  return EX_NEXT;
}

/* fence_proxy_async */
static exec_next ex_proxy_fence(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  uint32_t exec = ex->exec;
  if (exec) dlcemu_proxy_fence(R, w);
  return EX_NEXT;
}

/* cp_async */
static exec_next ex_cp_async(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  uint32_t pc = ex->pc;
  if (exec) exec_cp_async(R, w, in, exec, pc);
  if (R->status) return EX_RETURN;
  return EX_NEXT;
}

/* cp_commit */
static exec_next ex_cp_commit(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  uint32_t exec = ex->exec;
  LANES(exec, w->cp[l].committed++);
  R->st.cp_async_groups++;
  return EX_NEXT;
}

/* cp_wait, cp_wait_all */
static exec_next ex_cp_wait(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  const emu_insn *in = ex->in;
  uint32_t exec = ex->exec;
  LANES(exec, dlcemu_cp_land(R, w, l, in->op == OP_CP_WAIT_ALL, (uint32_t)in->imm));
  R->st.cp_async_waits++;
  return EX_NEXT;
}

/* an op with no executor */
static exec_next ex_unsupported(exec_ctx *ex) {
  emu_run *R = ex->R;
  emu_warp *w = ex->w;
  const emu_insn *in = ex->in;
  uint32_t active = ex->active;
  const char *name = (unsigned)in->op < OP_COUNT ? dlcemu_op_names[in->op] : NULL;
  dlcemu_report(R, DLCEMU_ERROR_UNSUPPORTED, w, __builtin_ctz(active), in, "internal: no implementation of %s",
                name ? name : "this op");
  return EX_RETURN;
}

void dlcemu_exec_warp(emu_run *R, emu_warp *w, int budget) {
  emu_kernel *k = R->k;
  const emu_insn *code = k->code;
  uint64_t(*r)[32] = w->r;
  uint32_t *p = w->p;
  dlcemu_launch_stats *st = &R->st;
  while (budget-- > 0) {
    uint32_t runnable = emu_runnable(w);
    if (!runnable) return;
    uint32_t pc, active;
    if (!w->diverged) {
      pc = w->upc;
      active = runnable;
    } else {
      pc = UINT32_MAX;
      uint32_t m = runnable;
      while (m) {
        int l = __builtin_ctz(m);
        m &= m - 1;
        if (w->pc[l] < pc) pc = w->pc[l];
      }
      active = 0;
      m = runnable;
      while (m) {
        int l = __builtin_ctz(m);
        m &= m - 1;
        if (w->pc[l] == pc) active |= 1u << l;
      }
      if (active == runnable) {
        w->diverged = 0;
        w->upc = pc;
      }
    }
    const emu_insn *in = &code[pc];
    uint32_t exec = active;
    if (in->guard != SLOT_NONE) {
      uint32_t pm = p[in->guard & ~GUARD_NEG];
      exec &= (in->guard & GUARD_NEG) ? ~pm : pm;
    }
    if (w->wg_maxtag && exec && emu_wg_inflight(R, w) && dlcemu_wgmma_hazard(R, w, in)) return;
    st->warp_instructions++;
    st->thread_instructions += exec == FULL ? 32u : (unsigned)__builtin_popcount(exec);
    st->class_count[in->cls]++;
    R->clock++;
    /* the operands that are register slots (emu_insn.rmask) */
    unsigned rm = in->rmask;
    uint64_t *d = (rm & 1) && in->a[0] != SLOT_NONE ? r[in->a[0]] : NULL;
    const uint64_t *a = (rm & 2) && in->a[1] != SLOT_NONE ? r[in->a[1]] : NULL;
    const uint64_t *b = (rm & 4) && in->a[2] != SLOT_NONE ? r[in->a[2]] : NULL;
    const uint64_t *c = (rm & 8) && in->a[3] != SLOT_NONE ? r[in->a[3]] : NULL;
    exec_ctx ex = {R, w, in, pc, active, exec, pc + 1, d, a, b, c, false};
    exec_next nx;
    switch (in->op) {
#define OP(e, name, cls, executor) \
  case OP_##e: nx = executor(&ex); break;
#include "ops.def"
#undef OP
    default: nx = ex_unsupported(&ex); break;
    }
    if (ex.yield) budget = 0;
    if (nx == EX_RETURN) return;
    if (nx == EX_STAY) continue;
    uint32_t next = ex.next;
    if (!w->diverged) {
      w->upc = next;
    } else {
      set_pcs(w, active, next);
    }
  }
}
