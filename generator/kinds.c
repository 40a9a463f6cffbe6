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
static const char *const CSTRIDE_NAMES[] = {
    "",
#define CSTRIDE(e, name) name,
#include "kinds.def"
};
static const char *const CACHE_WHERE_NAMES[] = {
    "",
#define CACHE_WHERE(e, name) name,
#include "kinds.def"
};
static const char *const CACHE_AT_NAMES[] = {
    "",
#define CACHE_AT(e, name) name,
#include "kinds.def"
};
_Static_assert(sizeof CSTRIDE_NAMES / sizeof *CSTRIDE_NAMES == CSTRIDE__COUNT, "a name for every C stride");
_Static_assert(sizeof CACHE_WHERE_NAMES / sizeof *CACHE_WHERE_NAMES == CACHE_WHERE__COUNT, "a name for every cache place");
_Static_assert(sizeof CACHE_AT_NAMES / sizeof *CACHE_AT_NAMES == CACHE_AT__COUNT, "a name for every cache loop");
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
const char *cstride_name(dlc_cstride c) { return c > 0 && c < CSTRIDE__COUNT ? CSTRIDE_NAMES[c] : ""; }
bool cstride_parse(const char *name, dlc_cstride *out) {
  int i = find(CSTRIDE_NAMES, CSTRIDE__COUNT, name);
  *out = (dlc_cstride)i;
  return i != 0;
}
bool cache_where_parse(const char *name, dlc_cache_where *out) {
  int i = find(CACHE_WHERE_NAMES, CACHE_WHERE__COUNT, name);
  *out = (dlc_cache_where)i;
  return i != 0;
}
bool cache_at_parse(const char *name, dlc_cache_at *out) {
  int i = find(CACHE_AT_NAMES, CACHE_AT__COUNT, name);
  *out = (dlc_cache_at)i;
  return i != 0;
}
