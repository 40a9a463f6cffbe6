/*
 * util.h: layer 0 of the emulator (util.c): the calling thread's error
 * detail and settings, growable arrays, the opcode and type tables.
 */
#ifndef DLC_EMU_UTIL_H
#define DLC_EMU_UTIL_H

#include <stddef.h>

#include "emu.h"

/* errors: the thread-local detail message; returns status */
int dlcemu_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dlcemu_clear_error(void);

/* growable arrays: grows *p (element size es) to hold n elements */
int dlcemu_grow(void *pp, int *cap, int n, size_t es);

/* settings (per thread, dlcemu_set_limit) */
unsigned long long dlcemu_limit_instructions(void);
int dlcemu_check_uninit_shared(void);
int dlcemu_check_races(void);

/* the PTX names of the opcodes (ops.def; NULL for internal ones) */
extern const char *const dlcemu_op_names[OP_COUNT];

unsigned dlcemu_type_size(int t);           /* bytes; 0 for T_NONE / T_PRED */
int dlcemu_type_is_signed(int t);
int dlcemu_type_is_float(int t);            /* f16..f64 (packed included) */
int dlcemu_type_from_name(const char *s);   /* "u32" -> T_U32, else T_NONE */
const char *dlcemu_type_name(int t);

#endif /* DLC_EMU_UTIL_H */
