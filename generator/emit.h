/* CUDA and C emission (spec §7 of 001, §12): GPU IR -> text.
 *
 * For a manifest dlcgen writes:
 *   kernels/<op>.cu           the op's kernels: for every instance (dtype x
 *                             variant) the generated `Op` that fills the
 *                             per-arch skeleton in templates/, and one entry
 *                             point per vector width;
 *   include/dlc/dlc_ops.h     the public entry points dlc_<op>(...);
 *   src/dlc_params.h          the parameter block of each op's kernels;
 *   src/dlc_dispatch.c        argument checks, kernel selection, launch;
 *   src/dlc_ops.def           the op list for the runtime backends;
 *   src/dlc_entries.c         the entry table: every entry point's arguments
 *                             and roles, instances and kernels, as data for
 *                             the tests that run every kernel
 *                             (libkernels/dlc_entries.h).
 * Every index, predicate and epilogue expression in the .cu comes from the
 * IR (AxisMaps, domains, the region's lets); templates/ holds only the
 * skeleton. */
#ifndef DLC_EMIT_H
#define DLC_EMIT_H

#include "gpuir.h"
#include "manifest.h"

/* One compiled instance of a manifest op. */
typedef struct emit_instance {
  const char *tag;             /* "fp16", "fp16.stride2x2.pad1x1" */
  dtype dt;
  const cJSON *attr_values;    /* runtime attr values of this instance, or NULL */
  const cJSON *dim_values;     /* compile-time dims bound, or NULL */
  const fe_graph *fe;
  const gpu_kernel *k;
  const plan_result *plan;
  /* a shape bucket's instance (its tag ends in ".b<i>"): dispatch takes it
   * when every bounded signature dim lies in [lo, hi]; NULL / 0 for the
   * instance's default kernel, which serves every shape */
  const char *bucket;
  int nbounds;
  const char *const *bdim;
  const int64_t *blo, *bhi;
  const sx *const *bext;       /* per bound: NULL (bdim is a signature dim), or
                                * the product of dims it bounds (bdim: its text) */
  int source;                  /* the manifest instance (mf_instances' index) it
                                * compiles: a bucket's is its default's */
} emit_instance;

typedef struct emit_op {
  const mf_op *op;
  int index;                   /* in the manifest */
  int ninst;
  emit_instance *inst;
  /* a chain op's plan without a workspace (pipeline.c given_run): per
   * manifest instance (emit_instance.source), the graph as given in one
   * kernel, which dlc_<op>_ws() runs when the workspace is smaller than the
   * chain's, and dlc_<op>() always; its kernels follow all the others in
   * the op's dispatch table.  0 and NULL: the op has none */
  int ngiven;
  emit_instance *given;
} emit_op;

struct render_log;

typedef struct emit_ctx {
  arena *A;
  const manifest *m;
  const char *manifest_path;   /* the manifest's file name, for comments; NULL
                                * for one graph (--graph ... --dump=cu) */
  int nops;
  emit_op *ops;
  diag_list *dl;
  struct render_log *log;      /* what emit_op_cu rendered (emit_verify_cu checks it) */
} emit_ctx;

/* The operand paths from an epilogue's output back to its inputs past
 * which nvcc's time stops growing linearly with the chain's length
 * (docs/codegen.md, "Compile time"): emit_op_cu warns (W1709) past it. */
#define EMIT_EPI_LINEAR_PATHS 65536.0

/* Each returns a malloc'ed text, or NULL with a diagnostic. */
char *emit_op_cu(emit_ctx *c, const emit_op *op);
/* The cu stage's verifier, after emit_op_cu(c, op): every statement of
 * every kernel of the op was rendered, every token of a kernel was
 * produced before it was consumed in the order the rendered code runs its
 * statements, and every Op defines what its template reads (op_reads.def). */
bool emit_verify_cu(const emit_ctx *c, const emit_op *op, diag_list *dl);
char *emit_ops_h(emit_ctx *c);
char *emit_params_h(emit_ctx *c);
char *emit_dispatch_c(emit_ctx *c);
char *emit_ops_def(emit_ctx *c);
char *emit_entries_c(emit_ctx *c);
/* The operator catalogue (emit_catalog.c): docs/ops.md and ops.json. */
char *emit_ops_md(emit_ctx *c);
char *emit_ops_json(emit_ctx *c);
/* sx as a C expression: PARAM X -> p.x, VAR a -> i_a. */
char *emit_sx_c(arena *A, const sx *x);

#endif
