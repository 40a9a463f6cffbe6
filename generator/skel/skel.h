/* The skeletons: each file of skel/ holds one skeleton's GPU IR builder, its
 * checks and its renderer, and defines its table of operations below.
 * algo.def's skel column names each algo's table, and skel_of is the one
 * lookup: gpuir_verify runs a kernel's checks through it and the emitter
 * renders its Op through it.  The pipeline's skeleton table (pipeline.c)
 * says which regions each {arch, algo} takes and how it plans them. */
#ifndef DLC_SKEL_H
#define DLC_SKEL_H

#include "emit.h"
#include "strbuf.h"

typedef struct skel_ops {
  dlc_algo algo;
  /* the regions its kernel compiles: 1, or 2 (attention: QK^T and the
   * softmax, then P V) */
  int regions;
  /* the skeleton's own GPU IR checks, after gpuir_verify's shared ones;
   * each reports what it finds */
  bool (*verify)(const gpu_kernel *k, diag_list *dl);
  /* the Op of an instance's kernel (in->k) as CUDA; NULL where the kernel is
   * rendered with another's Op (split-K's reduce, with its first kernel's) */
  void (*render)(emit_ctx *c, strbuf *s, const emit_op *eo, const emit_instance *in, const char *sname);
} skel_ops;

#define X(e, name, tpl, entry, params, blocks, guard, skel) extern const skel_ops skel;
#include "algo.def"
#undef X

/* The table of the skeleton algo_choice `a` names. */
const skel_ops *skel_of(dlc_algo a);

/* The checks every skeleton but the rows' ends with (gpuir.c): the split-K
 * partials' workspace and the final store. */
bool gpuir_verify_stores(const gpu_kernel *k, diag_list *dl);

#endif
