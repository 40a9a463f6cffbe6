/* The emitter's internal interface: what its files (emit.c, the kernels'
 * .cu; emit_host.c, the host C) share.  Not installed, and not for the
 * rest of the generator, which calls emit.h. */
#ifndef DLC_EMIT_INT_H
#define DLC_EMIT_INT_H

#include "emit.h"

#ifndef DLC_VERSION
#define DLC_VERSION "0.1.0"
#endif

/* The values a chain keeps between its kernels: the outputs of its regions
 * that are not signature tensors, in order (of the first instance). */
typedef struct chain_val {
  const region_memref *m;
} chain_val;

/* names, comments and C spellings */
const char *lc(arena *A, const char *s);
const char *cmt(arena *A, const char *s);
const char *dlc_dtype_enum(dtype t);
char *sxc(arena *A, const sx *x, bool host);
/* what an op's kernels are, and their names */
bool is_chain(const emit_op *eo);
bool has_split(const emit_op *eo);
bool has_ws(const emit_op *eo);
const char *reduce_name(arena *A, const emit_op *eo, const emit_instance *in);
const char *kernel_name_k(arena *A, const emit_op *eo, const emit_instance *in, const gpu_kernel *k, int vec);
bool tmaps90(const gpu_kernel *k);
const char *kernel_name_90(arena *A, const emit_op *eo, const emit_instance *in);
int chain_vals(const emit_op *eo, const emit_instance *in, chain_val *out, int cap);

#endif
