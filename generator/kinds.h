/* The region, analysis and plan stages' kinds (kinds.def) as enums, each
 * with 0 for none, and their names. */
#ifndef DLC_KINDS_H
#define DLC_KINDS_H

#include <stdbool.h>

typedef enum {
  BUF_NONE,
#define BUFFER(e, name) e,
#include "kinds.def"
  BUF__COUNT
} dlc_buffer;

typedef enum {
  MAT_NONE,
#define MATERIALIZE(e, name) e,
#include "kinds.def"
  MAT__COUNT
} dlc_materialize;

typedef enum {
  BARRIER_UNSET,
#define BARRIER(e, name) e,
#include "kinds.def"
  BARRIER__COUNT
} dlc_barrier;

typedef enum {
  STOP__NONE,
#define STOP(e, name) e,
#include "kinds.def"
  STOP__COUNT
} dlc_stop;

typedef enum {
  CSTRIDE_NONE,
#define CSTRIDE(e, name) e,
#include "kinds.def"
  CSTRIDE__COUNT
} dlc_cstride;

typedef enum {
  CACHE_WHERE_NONE,
#define CACHE_WHERE(e, name) e,
#include "kinds.def"
  CACHE_WHERE__COUNT
} dlc_cache_where;

typedef enum {
  CACHE_AT_NONE,
#define CACHE_AT(e, name) e,
#include "kinds.def"
  CACHE_AT__COUNT
} dlc_cache_at;

/* A kind's name ("" for 0, none); a name's kind (false for any other name). */
const char *buffer_name(dlc_buffer b);
bool buffer_parse(const char *name, dlc_buffer *out);
const char *materialize_name(dlc_materialize m);
const char *barrier_name(dlc_barrier b);
bool barrier_parse(const char *name, dlc_barrier *out);
const char *stop_name(dlc_stop s);
const char *cstride_name(dlc_cstride c);
bool cstride_parse(const char *name, dlc_cstride *out);
bool cache_where_parse(const char *name, dlc_cache_where *out);
bool cache_at_parse(const char *name, dlc_cache_at *out);

#endif
