/* Internal interface between the generated dispatch code (dlc_dispatch.c)
 * and the runtime: status details, index helpers, the kernel table row, and
 * the two backends (backend_cuda.c, backend_emu.c) that launch a row. */
#ifndef DLC_INTERNAL_H
#define DLC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dlc/dlc.h"

/* Archs a kernel row was compiled for. */
enum {
  DLC__ARCH_SM80 = 1 << 0,  /* runs on compute capability 8.x */
  DLC__ARCH_SM86 = 1 << 1,
  DLC__ARCH_SM89 = 1 << 2,
  DLC__ARCH_SM90A = 1 << 3,
  DLC__ARCH_SM100 = 1 << 4, /* 10.x */
  DLC__ARCH_SM120 = 1 << 5  /* 12.x */
};

/* One row of the dispatch table: a compiled kernel. */
typedef struct dlc__kernel {
  const char *name; /* entry point name in the SASS / PTX */
  int op;           /* index of its op (dlc_ops.def) */
  int index;        /* index in its op's kernel list */
  int threads;      /* block size */
  int smem;         /* dynamic shared memory, bytes */
  unsigned archs;   /* DLC__ARCH_* bits */
} dlc__kernel;

/* Sets the thread's detail string and returns `s`. */
dlc_status dlc__fail(dlc_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dlc__clear_detail(void);
const char *dlc__dtype_name(dlc_dtype t);

static inline int64_t dlc__floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t dlc__floormod(int64_t a, int64_t b) { return a - dlc__floordiv(a, b) * b; }
static inline int dlc__aligned(const void *p, int bytes) { return ((uintptr_t)p % (uintptr_t)bytes) == 0; }
static inline int dlc__mul_overflow(int64_t a, int64_t b, int64_t *out) { return __builtin_mul_overflow(a, b, out); }

/* The backend: launches row `k` with the parameter block `params` (one
 * by-value kernel argument of `size` bytes) on a gx x gy x gz grid. */
dlc_status dlc__launch(const dlc__kernel *k, const void *params, size_t size, unsigned gx, unsigned gy, unsigned gz,
                       struct CUstream_st *stream);

#endif
