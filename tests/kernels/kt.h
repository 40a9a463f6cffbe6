/* Helpers for the kernel tests: fp16/bf16 bit conversions, a fixed-seed
 * generator, emulator buffers, and the tolerance rule.
 *
 * Tolerance (docs/testing.md): an output element y passes against the FP64
 * reference r when
 *     |y - round_T(r)| <= max(ulp_T(round_T(r)), 1e-3 * (|r| + R))
 * with R = max |r| over the output: rtol = atol = 1e-3 scaled to the
 * output's magnitude, after rounding to the output dtype T (whose own last
 * place may flip when the kernel's fp32 sum and the FP64 sum straddle a
 * rounding boundary). */
#ifndef DLC_TEST_KT_H
#define DLC_TEST_KT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlc/dlc.h"
#include "dlc/dlcemu.h"

static inline float kt_f16_to_f32(uint16_t h) {
  uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, bits;
  if (e == 0) {
    if (m == 0) bits = s;
    else {
      float f = ldexpf((float)m, -24);
      return s ? -f : f;
    }
  } else if (e == 31) {
    bits = s | 0x7F800000u | (m << 13);
  } else {
    bits = s | ((e + 112) << 23) | (m << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* round to nearest even */
static inline uint16_t kt_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t s = (x >> 16) & 0x8000, e = (x >> 23) & 255, m = x & 0x7FFFFF;
  if (e == 255) return (uint16_t)(s | 0x7C00 | (m ? 0x200 : 0));
  int ee = (int)e - 127 + 15;
  if (ee >= 31) return (uint16_t)(s | 0x7C00);
  if (ee <= 0) {
    if (ee < -10) return (uint16_t)s;
    m |= 0x800000;
    int shift = 14 - ee;
    uint32_t hm = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (hm & 1))) hm++;
    return (uint16_t)(s | hm);
  }
  uint32_t hm = m >> 13, rem = m & 0x1FFF;
  uint32_t h = s | ((uint32_t)ee << 10) | hm;
  if (rem > 0x1000 || (rem == 0x1000 && (hm & 1))) h++;
  return (uint16_t)h;
}

static inline float kt_bf16_to_f32(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static inline uint16_t kt_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7F800000) == 0x7F800000 && (x & 0x7FFFFF)) return (uint16_t)((x >> 16) | 0x40);
  uint32_t r = x + 0x7FFF + ((x >> 16) & 1);
  return (uint16_t)(r >> 16);
}

static inline float kt_to_f32(dlc_dtype t, uint16_t h) { return t == DLC_F16 ? kt_f16_to_f32(h) : kt_bf16_to_f32(h); }
/* The FP64 dot product of K elements a[k*sa] and b[k*sb] (a GEMM reference's
 * inner loop). */
static inline double kt_dot(dlc_dtype t, const uint16_t *a, int64_t sa, const uint16_t *b, int64_t sb, int64_t K) {
  double acc = 0;
  for (int64_t k = 0; k < K; k++) acc += (double)kt_to_f32(t, a[k * sa]) * kt_to_f32(t, b[k * sb]);
  return acc;
}
static inline uint16_t kt_from_f32(dlc_dtype t, float f) { return t == DLC_F16 ? kt_f32_to_f16(f) : kt_f32_to_bf16(f); }
/* round_T: fp16 and bf16 through their bits, fp32 as a float */
static inline double kt_round(dlc_dtype t, double v) {
  return t == DLC_F32 ? (double)(float)v : kt_to_f32(t, kt_from_f32(t, (float)v));
}

/* v (an fp32 value) rounded to tf32 as cvt.rna.tf32.f32 rounds it: to the
 * nearest value with 10 mantissa bits, ties away from zero (add half of the
 * dropped 13 bits' weight to the magnitude, then clear them); NaN and
 * infinity pass unchanged.  A kernel that multiplies fp32 operands on the
 * tensor cores in TF32 computes exact products of such values, summed in
 * fp32: the FP64 reference rounds its inputs the same way, so that the
 * tolerance above stays the fp32 output's. */
static inline double kt_tf32(double v) {
  float f = (float)v;
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7F800000u) != 0x7F800000u) x = (x + 0x1000u) & 0xFFFFE000u;
  memcpy(&f, &x, 4);
  return f;
}

/* The spacing of T at |v| (its unit in the last place). */
static inline double kt_ulp(dlc_dtype t, double v) {
  int mant = t == DLC_F16 ? 10 : t == DLC_BF16 ? 7 : 23, emin = t == DLC_F16 ? -14 : -126;
  int e;
  frexp(fabs(v), &e);
  e -= 1;
  if (e < emin || v == 0) e = emin;
  return ldexp(1.0, e - mant);
}

/* xorshift64*: fixed seeds, the same numbers on every machine */
static inline uint64_t kt_next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}
static inline double kt_uniform(uint64_t *s) { return (double)(kt_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0; }

/* An emulator buffer of `n` 16-bit elements and its host copy. */
typedef struct kt_buf {
  dlcemu_deviceptr dev;
  uint16_t *host;
  size_t n;
} kt_buf;

static inline int kt_alloc(kt_buf *b, size_t n, size_t extra_bytes) {
  b->n = n;
  b->host = calloc(n ? n : 1, 2);
  if (!b->host) return -1;
  return dlcemu_mem_alloc(&b->dev, n * 2 + extra_bytes + 2);
}
static inline int kt_upload(kt_buf *b) { return dlcemu_memcpy_htod(b->dev, b->host, b->n * 2); }
static inline int kt_download(kt_buf *b) { return dlcemu_memcpy_dtoh(b->host, b->dev, b->n * 2); }
static inline void kt_free(kt_buf *b) {
  if (b->dev) dlcemu_mem_free(b->dev);
  free(b->host);
  memset(b, 0, sizeof *b);
}
static inline void *kt_ptr(dlcemu_deviceptr p) { return (void *)(uintptr_t)p; }

#endif
