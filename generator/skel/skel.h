/* The skeletons: each file of skel/ holds one skeleton's GPU IR builder, its
 * checks, its dump and its renderer, and defines its table of operations
 * below.  algo.def's skel column names each algo's table, and skel_of is
 * the one lookup: a kernel's algo is its skeleton; gpuir_verify runs its
 * checks, gpuir_dump its dump and the emitter its renderer through the
 * table, and the pipeline tries the skeletons in algo.def order, each
 * through its table (which regions it takes, its plan check, its builder;
 * pipeline.c's PLAN says how each one's plan is found). */
#ifndef DLC_SKEL_H
#define DLC_SKEL_H

#include "emit.h"
#include "strbuf.h"

/* What a skeleton's kernel computes, for the code around it (the host's
 * launch and width checks, the comments): one contraction region with a
 * pointwise epilogue, attention's two regions (QK^T and the softmax, then
 * P V), or a region's rows. */
typedef enum { SKEL_CONTRACTION, SKEL_ATTENTION, SKEL_ROWS } skel_shape;

/* An Op rendered in two parts (docs/codegen.md, "Worked example"): the
 * shared template `shared_name` over the operand dtype and a plan,
 *   template <class T_, template <class> class P_> struct <shared_name> : P_<T_>,
 * which holds what depends on the region and the dtype alone (the chunk
 * functions, the extents, the epilogues), and the plan's struct
 * `plan_name` over the dtype, which holds what depends on the plan (its
 * tile, stages and warps, the constants the GPU IR chose for it, and the
 * functions rendered from its statements), then `name`, the Op the
 * entries and templates use: an alias of the shared template over the
 * plan.  The instances of an op whose shared text is the same share one
 * template (emit_op_cu). */
typedef struct op_split {
  strbuf *shared, *plan;
  const char *name, *shared_name, *plan_name;
  /* the full-width epilogue's width the shared template holds for a
   * kernel that has none (a split-K plan's: its second kernel stores), when
   * the op's other plans agree on one; 0: none */
  int epi_vec;
} op_split;

/* A split Op's pieces the skeletons write alike (emit.c): the shared
 * template's head, its comment `doc`, the template over T_ and the plan, the
 * plan's names it uses itself (`plan_names`: lines of using-declarations)
 * and its types (out_t: OutT; op: the op, whose Params it takes); the Op's
 * type as the plan's functions name it (their Self); and the end of the
 * plan's struct with the Op's alias. */
void split_shared_open(const op_split *sp, const char *doc, const char *plan_names, const char *out_t, const char *op);
const char *split_self(arena *A, const op_split *sp);
void split_plan_close(arena *A, const op_split *sp);

typedef struct skel_ops {
  dlc_algo algo;
  skel_shape shape;
  /* the pipeline's (pipeline.c): the oldest arch its kernels need (they run
   * on every later one; only: on that arch alone, beside the skeleton that
   * takes the run), whether a run's regions fit it, its plan's check on the
   * archs it is built for, and its GPU IR builder (a split-K plan's kernel
   * with its reduce).  NULL fits: it takes no run of its own (split-K's
   * reduce, which its contraction's builder makes). */
  dlc_arch arch;
  bool only;
  bool (*fits)(const region_set *rs, const pc_report *pc);
  bool (*verify_plan)(const region_set *rs, const pc_report *pc, const sched_plan *p, const arch_info *const *archs,
                      int na, const char *at, diag_list *dl);
  gpu_kernel *(*build)(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p, const char *name,
                       diag_list *dl);
  /* the skeleton's own GPU IR checks, after gpuir_verify's shared ones;
   * each reports what it finds */
  bool (*verify)(const gpu_kernel *k, diag_list *dl);
  /* the Op of an instance's kernel (in->k) as CUDA, one struct: render; or
   * split (render_split): a template of what an op's plans on the skeleton
   * share, and the plan's own struct, which the shared template derives from
   * (op_split).  Both NULL where the kernel is rendered with another's Op
   * (split-K's reduce, with its first kernel's). */
  void (*render)(emit_ctx *c, strbuf *s, const emit_op *eo, const emit_instance *in, const char *sname);
  void (*render_split)(emit_ctx *c, const op_split *sp, const emit_op *eo, const emit_instance *in);
  /* the GPU dump's skeleton part (--dump=gpu), after its name, arch and
   * algo: its launch, tile or rows, operands and statements */
  void (*dump)(cJSON *g, const gpu_kernel *k);
} skel_ops;

#define X(e, name, tpl, entry, params, blocks, guard, skel) extern const skel_ops skel;
#include "algo.def"
#undef X

/* The table of the skeleton algo_choice `a` names (NULL: none). */
const skel_ops *skel_of(dlc_algo a);
/* What kernel k computes: its skeleton's shape. */
skel_shape skel_shape_of(const gpu_kernel *k);

/* The first Reduce let after region r's contraction (a softmax or a row
 * sum on its output), or -1: the contraction skeletons' epilogue is
 * pointwise (skel/sm80_contraction.c). */
int skel_reduce_after_contraction(const region *r);

/* The checks every skeleton but the rows' ends with (gpuir.c): the split-K
 * partials and the final store (reduce: of split-K's reduce, which sums the
 * partials and stores in its loop over the columns). */
bool gpuir_verify_stores(const gpu_kernel *k, bool reduce, diag_list *dl);

#endif
