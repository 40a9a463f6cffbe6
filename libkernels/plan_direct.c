/* The plan hooks of the backends that run a plan's launches directly
 * (libdlckernels-emu, libdlckernels-null): every copy and launch has run to
 * its end (emulator) or does nothing (null), and a plan's call is its
 * launches, as the per-call entry makes them; no graphs to free.  The CUDA
 * backend has its own (backend_cuda.c: CUDA graphs). */
#include "dlc_internal.h"

dlc_status dlc__dev_sync(struct CUstream_st *stream) {
  (void)stream;
  return DLC_SUCCESS;
}

dlc_status dlc__plan_exec(dlc__plan *p, const void *args, size_t args_bytes, size_t shape_bytes, dlc__plan_body body,
                          struct CUstream_st *stream) {
  (void)p, (void)args_bytes, (void)shape_bytes;
  return body(args, stream);
}

void dlc__plan_cache_free(dlc__plan *p) { (void)p; }
