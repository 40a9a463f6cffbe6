/* Element types (dtype.def): names, sizes, promotion and rounding. */
#include "dtype.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const struct {
  const char *name;
  int bytes;
} dt_table[] = {
#define X(e, name, bytes) {name, bytes},
#include "dtype.def"
#undef X
};

const char *dtype_name(dtype t) { return t < DT__COUNT ? dt_table[t].name : "?"; }
int dtype_bytes(dtype t) { return t < DT__COUNT ? dt_table[t].bytes : 0; }

bool dtype_parse(const char *s, dtype *out) {
  for (int i = 0; i < DT__COUNT; i++)
    if (strcmp(s, dt_table[i].name) == 0) {
      *out = (dtype)i;
      return true;
    }
  return false;
}

bool dtype_is_float(dtype t) { return t == DT_FP16 || t == DT_BF16 || t == DT_FP32 || t == DT_FP64; }

static int float_rank(dtype t) {
  switch (t) {
  case DT_BOOL: return 0;
  case DT_INT32: return 1;
  case DT_FP16:
  case DT_BF16: return 2;
  case DT_FP32: return 3;
  case DT_FP64: return 4;
  default: return 0;
  }
}

dtype dtype_promote(dtype a, dtype b) {
  if (a == b) return a;
  if ((a == DT_FP16 && b == DT_BF16) || (a == DT_BF16 && b == DT_FP16)) return DT_FP32;
  return float_rank(a) >= float_rank(b) ? a : b;
}

/* Round to a binary format with `mant` explicit mantissa bits and minimum
 * normal exponent `emin`, max finite `maxv`, ties to even. */
static double round_fmt(double v, int mant, int emin, double maxv) {
  if (isnan(v) || isinf(v) || v == 0) return v;
  double a = fabs(v);
  int e;
  frexp(a, &e); /* a = f * 2^e, f in [0.5,1) */
  e -= 1;       /* a = 1.x * 2^e */
  if (e < emin) e = emin; /* subnormal spacing */
  double q = ldexp(1.0, e - mant);
  double r = nearbyint(a / q) * q; /* default rounding mode: nearest-even */
  if (r > maxv) r = INFINITY;
  return v < 0 ? -r : r;
}

double dtype_round(dtype t, double v) {
  switch (t) {
  case DT_FP16: return round_fmt(v, 10, -14, 65504.0);
  case DT_BF16: return round_fmt(v, 7, -126, 3.3895313892515355e38);
  case DT_FP32: return (double)(float)v;
  case DT_BOOL: return v != 0;
  case DT_INT32: return trunc(v);
  default: return v;
  }
}
