/* The GPU IR builders' internal interface: what gpuir.c (the statements,
 * the shared checks and the dump) gives the skeletons of skel/, each of
 * which builds, checks and renders its kernels.  Not for the rest of the
 * generator, which calls gpuir.h. */
#ifndef DLC_GPUIR_INT_H
#define DLC_GPUIR_INT_H

#include "gpuir.h"

gpu_stmt *gpuir_push(gpu_kernel *k, arena *A, gpu_stmt_kind kind, const char *what, const char *detail,
                     const char *out, int nin, const char *in0, const char *in1);
const char *gpuir_axes(arena *A, const region *r, const int *ax, int n);
const sx *gpuir_extent(arena *A, const region *r, const int *ax, int n);
bool verify_rows(const gpu_kernel *k, diag_list *dl);
const sx *gpuir_read_step(arena *A, const region *r, const rexpr *rd, const char *x);

#endif
