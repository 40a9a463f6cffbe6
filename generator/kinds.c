/* The names of kinds.def's kinds, and their parsers. */
#include "kinds.h"

#include <string.h>

static const char *const BUFFER_NAMES[] = {
    "",
#define BUFFER(e, name) name,
#include "kinds.def"
};
static const char *const MATERIALIZE_NAMES[] = {
    "",
#define MATERIALIZE(e, name) name,
#include "kinds.def"
};
static const char *const BARRIER_NAMES[] = {
    "",
#define BARRIER(e, name) name,
#include "kinds.def"
};
static const char *const STOP_NAMES[] = {
    "",
#define STOP(e, name) name,
#include "kinds.def"
};
_Static_assert(sizeof BUFFER_NAMES / sizeof *BUFFER_NAMES == BUF__COUNT, "a name for every buffer");
_Static_assert(sizeof MATERIALIZE_NAMES / sizeof *MATERIALIZE_NAMES == MAT__COUNT, "a name for every materialize");
_Static_assert(sizeof BARRIER_NAMES / sizeof *BARRIER_NAMES == BARRIER__COUNT, "a name for every barrier model");
_Static_assert(sizeof STOP_NAMES / sizeof *STOP_NAMES == STOP__COUNT, "a name for every STOP rule");

/* index i >= 1 of names[0..n) equal to name, or 0 */
static int find(const char *const *names, int n, const char *name) {
  for (int i = 1; name && i < n; i++)
    if (strcmp(names[i], name) == 0) return i;
  return 0;
}

const char *buffer_name(dlc_buffer b) { return b > 0 && b < BUF__COUNT ? BUFFER_NAMES[b] : ""; }
bool buffer_parse(const char *name, dlc_buffer *out) {
  int i = find(BUFFER_NAMES, BUF__COUNT, name);
  if (i) *out = (dlc_buffer)i;
  return i != 0;
}
const char *materialize_name(dlc_materialize m) { return m > 0 && m < MAT__COUNT ? MATERIALIZE_NAMES[m] : ""; }
const char *barrier_name(dlc_barrier b) { return b > 0 && b < BARRIER__COUNT ? BARRIER_NAMES[b] : ""; }
bool barrier_parse(const char *name, dlc_barrier *out) {
  int i = find(BARRIER_NAMES, BARRIER__COUNT, name);
  if (i) *out = (dlc_barrier)i;
  return i != 0;
}
const char *stop_name(dlc_stop s) { return s > 0 && s < STOP__COUNT ? STOP_NAMES[s] : ""; }
