/* Element types shared by every stage (table in dtype.def). */
#ifndef DLC_DTYPE_H
#define DLC_DTYPE_H

#include <stdbool.h>

typedef enum {
#define X(e, name, bytes) e,
#include "dtype.def"
#undef X
  DT__COUNT
} dtype;

const char *dtype_name(dtype t);
int dtype_bytes(dtype t);
/* Parses "fp16", "bf16", "fp32", ...; returns false for an unknown name. */
bool dtype_parse(const char *s, dtype *out);
bool dtype_is_float(dtype t);
/* The type both operands of a binary op are computed in (wider float wins;
 * fp16 with bf16 gives fp32). */
dtype dtype_promote(dtype a, dtype b);
/* Round a double to the nearest value representable in t (ties to even). */
double dtype_round(dtype t, double v);

#endif
