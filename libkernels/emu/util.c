/*
 * util.c: the bottom layer of the emulator: the calling thread's error
 * detail and settings, growable arrays, the opcode names (ops.def) and the
 * PTX type table.  Every other file may call these; they call nothing of
 * the emulator.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"
#include "util.h"

static _Thread_local char detail[8192];
static _Thread_local unsigned long long limit_instructions = 20000000000ull;
static _Thread_local int uninit_check;
static _Thread_local int race_check = 1;

int dlcemu_fail(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return status;
}

void dlcemu_clear_error(void) { detail[0] = 0; }

int dlcemu_grow(void *pp, int *cap, int n, size_t es) {
  if (n <= *cap) return 0;
  int nc = *cap ? *cap * 2 : 16;
  while (nc < n) nc *= 2;
  void **p = pp;
  void *q = realloc(*p, (size_t)nc * es);
  if (!q) return -1;
  *p = q;
  *cap = nc;
  return 0;
}

unsigned long long dlcemu_limit_instructions(void) { return limit_instructions; }
int dlcemu_check_uninit_shared(void) { return uninit_check; }
int dlcemu_check_races(void) { return race_check; }

int dlcemu_set_limit(dlcemu_limit which, unsigned long long value) {
  switch (which) {
  case DLCEMU_LIMIT_WARP_INSTRUCTIONS: limit_instructions = value; return 0;
  case DLCEMU_LIMIT_CHECK_UNINIT_SHARED: uninit_check = value != 0; return 0;
  case DLCEMU_LIMIT_CHECK_SHARED_RACES: race_check = value != 0; return 0;
  default: return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_set_limit: unknown setting %d", (int)which);
  }
}

const char *dlcemu_error_string(int status) {
  switch (status) {
  case DLCEMU_SUCCESS: return "DLCEMU_SUCCESS";
  case DLCEMU_ERROR_INVALID_VALUE: return "DLCEMU_ERROR_INVALID_VALUE";
  case DLCEMU_ERROR_OUT_OF_MEMORY: return "DLCEMU_ERROR_OUT_OF_MEMORY";
  case DLCEMU_ERROR_PARSE: return "DLCEMU_ERROR_PARSE";
  case DLCEMU_ERROR_UNSUPPORTED: return "DLCEMU_ERROR_UNSUPPORTED";
  case DLCEMU_ERROR_NOT_FOUND: return "DLCEMU_ERROR_NOT_FOUND";
  case DLCEMU_ERROR_INVALID_POINTER: return "DLCEMU_ERROR_INVALID_POINTER";
  case DLCEMU_ERROR_LAUNCH_CONFIG: return "DLCEMU_ERROR_LAUNCH_CONFIG";
  case DLCEMU_ERROR_OUT_OF_BOUNDS: return "DLCEMU_ERROR_OUT_OF_BOUNDS";
  case DLCEMU_ERROR_MISALIGNED: return "DLCEMU_ERROR_MISALIGNED";
  case DLCEMU_ERROR_POISON: return "DLCEMU_ERROR_POISON";
  case DLCEMU_ERROR_DEADLOCK: return "DLCEMU_ERROR_DEADLOCK";
  case DLCEMU_ERROR_TRAP: return "DLCEMU_ERROR_TRAP";
  case DLCEMU_ERROR_ILLEGAL: return "DLCEMU_ERROR_ILLEGAL";
  case DLCEMU_ERROR_LIMIT: return "DLCEMU_ERROR_LIMIT";
  case DLCEMU_ERROR_RACE: return "DLCEMU_ERROR_RACE";
  default: return "DLCEMU_ERROR_UNKNOWN";
  }
}

const char *dlcemu_last_error_detail(void) { return detail; }

const char *const dlcemu_op_names[OP_COUNT] = {
#define OP(e, name, cls, executor) name,
#include "ops.def"
#undef OP
};

/* ------------------------------------------------------------------ types */
static const struct {
  const char *name;
  unsigned size;
  int sign;
  int fl;
} type_info[T_COUNT] = {
  [T_NONE] = {"", 0, 0, 0},
  [T_B8] = {"b8", 1, 0, 0}, [T_B16] = {"b16", 2, 0, 0}, [T_B32] = {"b32", 4, 0, 0},
  [T_B64] = {"b64", 8, 0, 0}, [T_B128] = {"b128", 16, 0, 0},
  [T_U8] = {"u8", 1, 0, 0}, [T_U16] = {"u16", 2, 0, 0}, [T_U32] = {"u32", 4, 0, 0},
  [T_U64] = {"u64", 8, 0, 0},
  [T_S8] = {"s8", 1, 1, 0}, [T_S16] = {"s16", 2, 1, 0}, [T_S32] = {"s32", 4, 1, 0},
  [T_S64] = {"s64", 8, 1, 0},
  [T_F16] = {"f16", 2, 1, 1}, [T_F16X2] = {"f16x2", 4, 1, 1}, [T_BF16] = {"bf16", 2, 1, 1},
  [T_BF16X2] = {"bf16x2", 4, 1, 1}, [T_TF32] = {"tf32", 4, 1, 1}, [T_F32] = {"f32", 4, 1, 1},
  [T_F64] = {"f64", 8, 1, 1},
  [T_PRED] = {"pred", 0, 0, 0},
};

unsigned dlcemu_type_size(int t) { return t > 0 && t < T_COUNT ? type_info[t].size : 0; }
int dlcemu_type_is_signed(int t) { return t > 0 && t < T_COUNT && type_info[t].sign && !type_info[t].fl; }
int dlcemu_type_is_float(int t) { return t > 0 && t < T_COUNT && type_info[t].fl; }
const char *dlcemu_type_name(int t) { return t >= 0 && t < T_COUNT ? type_info[t].name : "?"; }

int dlcemu_type_from_name(const char *s) {
  for (int t = 1; t < T_COUNT; t++)
    if (!strcmp(type_info[t].name, s)) return t;
  return T_NONE;
}

