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
#include "frontend.h"
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

/* A layout conversion that a plan makes once, at creation (issue 37 item
 * 2): value `v` of the chain is the layout pass's conversion of param
 * `param` (transform_meta.conversion_of; role param, storage const_pool),
 * its writer kernel reads that param alone, over no dim but the param's
 * (its grid, its axes, v's shape), and no other kernel reads the param, so
 * a plan's ConstPool can hold v in place of the param and its runs skip
 * the writer. */
typedef struct ws_param_conv {
  int value;                  /* index in ws_values' order */
  const char *param;          /* the signature input it converts */
  const region_memref *m;     /* the value */
  const gpu_kernel *k;        /* its writer */
} ws_param_conv;

/* The chain's param conversions (graph g: the chain's, after the layout
 * pass), at most `cap`; returns how many there are. */
int ws_param_convs(const fe_graph *g, const gpu_kernel *first, ws_param_conv *out, int cap);

/* --dump=constpool: the ConstPool a plan of this graph lays out
 * (libkernels/plan.c; docs/runtime.md, The ConstPool).  {"align": 256,
 * "bytes": the pool's, "params": [{name, dtype, shape, offset, align,
 * row_pitch (a matrix's: its rows' distance in bytes, a multiple of 16;
 * null for a packed param), bytes, fold}]}, each an expression of the
 * dims, in signature order: the params of role param and storage
 * const_pool whose shapes read signature dims alone.  fold is "none", or
 * {"kind": "layout", "value", "shape", "layout", "kernel", "at":
 * "plan_create"} for a ws_param_convs conversion (the pool then holds the
 * value, packed, in the param's place).  `first`: the chain's first kernel,
 * or NULL when the graph compiles to one kernel. */
cJSON *ws_constpool_dump(const fe_graph *g, const gpu_kernel *first);

#endif /* DLC_WORKSPACE_H */
