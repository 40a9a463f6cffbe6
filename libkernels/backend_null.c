/* Null backend of libdlckernels-null.a (tests and bench/ only, never
 * installed): the generated entry points with every check and the kernel
 * selection, but a launch that only records what it would launch
 * (dlc__last_launch).  It measures the host cost of the call path without a
 * device, and lets a test read the kernel row and grid that dispatch chose
 * for shapes far too large to run in the emulator. */
#include <stdlib.h>

#include "dlc_internal.h"

dlc_status dlc__launch(const dlc__kernel *k, const void *params, size_t size, unsigned gx, unsigned gy, unsigned gz,
                       struct CUstream_st *stream) {
  (void)params, (void)size, (void)stream;
  if (dlc__query_launch(k, gx, gy, gz)) return DLC_SUCCESS; /* dlc_<op>_query() */
  dlc__record_launch(k, gx, gy, gz);
  return DLC_SUCCESS;
}

/* The null backend plays an sm80 device unless a test or bench sets
 * dlc__null_arch: then, on DLC__ARCH_SM90A, the entry points take their
 * sm90a paths (the encode below succeeds). */
unsigned dlc__null_arch = DLC__ARCH_SM80;

const char dlc__backend_name[] = "null";
const int dlc__cuda_runtime_version = 0;
const char dlc__sass_archs[] = "[]";

unsigned dlc__device_arch(void) { return dlc__null_arch; }

/* nothing to poison: no kernel runs */
void dlc__arena_release(void *p, int64_t bytes) { (void)p, (void)bytes; }

dlc_status dlc__tmap_encode_2d(void *map, dlc_dtype dtype, const void *base, int64_t inner, int64_t outer, int64_t ld,
                               int box_inner, int box_outer) {
  (void)map, (void)dtype, (void)base, (void)inner, (void)outer, (void)ld, (void)box_inner, (void)box_outer;
  return DLC_SUCCESS;
}

dlc_status dlc__tmap_encode_nd(void *map, dlc_dtype dtype, const void *base, int rank, const int64_t *dims,
                               const int64_t *strides, const int *box) {
  int elem;
  (void)map;
  return dlc__tmap_check_nd(dtype, base, rank, dims, strides, box, &elem);
}

/* Plans: the ConstPool in aligned host memory, which no kernel reads (the
 * params are not copied: the null backend's tensors need not be memory).
 * A plan's call: plan_direct.c. */
dlc_status dlc__dev_alloc(void **p, size_t bytes, struct CUstream_st *stream) {
  (void)stream;
  const size_t n = bytes / DLC__POOL_ALIGN + 1;
  *p = n <= SIZE_MAX / DLC__POOL_ALIGN ? aligned_alloc(DLC__POOL_ALIGN, n * DLC__POOL_ALIGN) : NULL;
  if (!*p) return dlc__fail(DLC_ERROR_OUT_OF_MEMORY, "the ConstPool: %zu bytes of host memory", bytes);
  return DLC_SUCCESS;
}

void dlc__dev_free(void *p) { free(p); }

dlc_status dlc__dev_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t rows,
                            struct CUstream_st *stream) {
  (void)dst, (void)dpitch, (void)src, (void)spitch, (void)width, (void)rows, (void)stream;
  return DLC_SUCCESS;
}
