/* The GPU archs dlcgen compiles for, from one table (arch.def). */
#ifndef DLC_ARCH_H
#define DLC_ARCH_H

#include <stdbool.h>

typedef enum {
  ARCH_NONE = -1, /* a plan that names no arch (yet) */
#define X(e, name, alias, cc, bit) e,
#include "arch.def"
#undef X
  ARCH__COUNT
} dlc_arch;

/* The arch named `name` ("sm90" is sm90a); false for any other name. */
bool arch_parse(const char *name, dlc_arch *out);
const char *arch_name(dlc_arch a);
int arch_cc(dlc_arch a);
/* The runtime's DLC__ARCH_* flag of rows compiled for `a`. */
const char *arch_dispatch_bit(dlc_arch a);
/* "Use sm80, sm86, ... or sm120.": a diagnostic's suggestion. */
const char *arch_use_hint(void);

#endif
