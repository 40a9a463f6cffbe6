/* A chain's workspace (issue 37 item 3): the values its kernels hand each
 * other, each with the interval of kernels over which it is live.  The
 * entry point places them in the caller's workspace as an arena
 * (dlc__arena_place, libkernels/runtime.c), where a value dead after
 * kernel t leaves its bytes to one born after t; the pipeline's arena
 * pass checks the intervals and dumps them (--dump=arena). */
#ifndef DLC_WORKSPACE_H
#define DLC_WORKSPACE_H

#include <cJSON.h>
#include <stdbool.h>

#include "diag.h"
#include "gpuir.h"

/* As libkernels/dlc_internal.h's DLC__ARENA_MAX: the values a chain may hold. */
enum { WS_MAX_VALUES = 16 };

/* A value between a chain's kernels: an output of a kernel's region that is
 * no signature tensor, with the chain_index of the kernel that writes it
 * (born) and of the last that reads it (dies: born when none does). */
typedef struct ws_value {
  const region_memref *m;
  int born, dies;
} ws_value;

/* The values of the chain that starts at `first`, in the kernels' order
 * (at most `cap`); returns how many there are, which may exceed cap. */
int ws_values(const gpu_kernel *first, ws_value *out, int cap);
/* Each value at most WS_MAX_VALUES, and each read by kernels inside its
 * interval alone, written before it (E0004 otherwise). */
bool ws_verify(const gpu_kernel *first, diag_list *dl);
/* {"kernels": n, "values": [{name, dtype, shape, bytes (the shape's
 * product times the dtype's size, before the 256-byte rounding), born,
 * dies}], "live": [the names live at each kernel]} */
cJSON *ws_dump(const gpu_kernel *first);

#endif /* DLC_WORKSPACE_H */
