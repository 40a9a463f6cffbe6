/* Null backend of libdlckernels-null.a (tests and bench/dispatch_cost only,
 * never installed): the generated entry points with every check and the
 * kernel selection, but a launch that only records what it would launch.
 * It measures the host cost of the call path without a device, and lets a
 * test read the kernel row and grid that dispatch chose for shapes far too
 * large to run in the emulator. */
#include "dlc_null.h"

static _Thread_local dlc__null_launch last;

dlc_status dlc__launch(const dlc__kernel *k, const void *params, size_t size, unsigned gx, unsigned gy, unsigned gz,
                       struct CUstream_st *stream) {
  (void)params, (void)size, (void)stream;
  last.kernel = k;
  last.grid[0] = gx, last.grid[1] = gy, last.grid[2] = gz;
  last.count++;
  return DLC_SUCCESS;
}

const dlc__null_launch *dlc__null_last(void) { return &last; }
