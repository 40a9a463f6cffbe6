/* The arch table (arch.def) and its lookups. */
#include "arch.h"

#include <string.h>

static const struct {
  const char *name, *alias;
  int cc;
  const char *bit;
} ARCH_ROWS[] = {
#define X(e, name, alias, cc, bit) {name, alias, cc, bit},
#include "arch.def"
#undef X
};

bool arch_parse(const char *name, dlc_arch *out) {
  if (!name) return false;
  for (int i = 0; i < ARCH__COUNT; i++)
    if (strcmp(ARCH_ROWS[i].name, name) == 0 || (ARCH_ROWS[i].alias && strcmp(ARCH_ROWS[i].alias, name) == 0)) {
      *out = (dlc_arch)i;
      return true;
    }
  return false;
}

const char *arch_name(dlc_arch a) { return ARCH_ROWS[a].name; }
int arch_cc(dlc_arch a) { return ARCH_ROWS[a].cc; }
const char *arch_dispatch_bit(dlc_arch a) { return ARCH_ROWS[a].bit; }

const char *arch_use_hint(void) {
  static char buf[160];
  if (!buf[0]) {
    strcpy(buf, "Use ");
    for (int i = 0; i < ARCH__COUNT; i++) {
      if (i) strcat(buf, i == ARCH__COUNT - 1 ? " or " : ", ");
      strcat(buf, ARCH_ROWS[i].name);
    }
    strcat(buf, ".");
  }
  return buf;
}
