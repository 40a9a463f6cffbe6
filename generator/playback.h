/* CPU playback of Tiny IR (spec §6.11): the numbers a DAG computes.
 *
 * Playback is the semantic oracle of the pipeline.  It evaluates a tiny_dag
 * on dense tensors of doubles, one UOp at a time, exactly as tiny.h and
 * tiny.def define each op: movement ops gather from their source (RESHAPE
 * row-major, PERMUTE, EXPAND, PAD with its value, SHRINK [lo,hi) by step,
 * FLIP, VIEW through its index map, GATHER through its index tensor, 0 for an
 * index out of range), ALU ops apply the table's C expression
 * (tiny_op_eval) with rank-0 operands broadcast, REDUCE and CONTRACT sum in
 * double and round once.  Every node's result is rounded to the node's
 * dtype (dtype_round), so a fp16 chain behaves like fp16 arithmetic.
 * Symbolic sizes become integers through a binding (M=7, ...).
 *
 * pb_eval_view() evaluates a movement value a second way, through its
 * IndexBook entry (spec §4): guards, composed AxisMap into the root value,
 * pad value elsewhere; for a gather, the index is read through its own map
 * first and stands for the entry's load_var.  Tests compare the two, and compare pb_eval_tiny()
 * with a plain FP64 reference of the Frontend graph (tests/playback/).
 *
 * pb_eval_regions() evaluates Region SSA (spec §6): each let is a dense
 * tensor over its axes, computed point by point with the region's axis names
 * bound to the point's coordinates.  Reads go through their maps, Selects
 * test their guards (or bool predicate) before touching a branch, a Reduce
 * loops over its reduce axes (which may be iters: softmax's n) summing in
 * double and rounding once, BroadcastInDim and Transpose evaluate their
 * operand at the coordinates of its own axes, and every node rounds to its
 * dtype as Tiny playback does.  Yields cast into the region's outputs;
 * values materialized for later regions ("deferred" or "gmem") feed them.
 * Tests compare it with pb_eval_tiny() on the same inputs.
 *
 * Nothing here aborts on bad input: shape mismatches, unbound symbols and
 * oversized tensors return a pb_status with a readable reason. */
#ifndef DLC_PLAYBACK_H
#define DLC_PLAYBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "indexbook.h"
#include "region.h"
#include "tiny.h"

/* Largest tensor playback allocates, in elements (2 GiB of doubles). */
#define PB_MAX_ELEMS ((int64_t)1 << 28)
#define PB_MAX_BIND 32

typedef enum {
  PB_OK,
  PB_ERR_SHAPE,     /* operand shapes disagree with the op or the node */
  PB_ERR_UNBOUND,   /* a size or index needs a symbol the binding lacks */
  PB_ERR_TOO_LARGE, /* more than PB_MAX_ELEMS elements, or malloc failed */
  PB_ERR_INPUT,     /* wrong number or shape of inputs */
  PB_ERR_OOB,       /* an index map reads outside its source (unguarded) */
  PB_ERR_UNSUPPORTED, /* an op or IndexBook entry playback cannot run */
} pb_status;

const char *pb_status_name(pb_status s);

/* A dense row-major tensor of doubles; rank 0 is a scalar (n = 1). */
typedef struct pb_tensor {
  int rank;
  int64_t shape[TINY_MAX_RANK];
  int64_t n;
  double *data; /* malloc'd; owned by the tensor */
} pb_tensor;

/* Allocates a zeroed tensor.  PB_ERR_TOO_LARGE past PB_MAX_ELEMS. */
pb_status pb_tensor_alloc(pb_tensor *t, int rank, const int64_t *shape);
void pb_tensor_free(pb_tensor *t);

/* Dim symbols bound to integers.  Names are borrowed, not copied. */
typedef struct pb_binding {
  int n;
  const char *name[PB_MAX_BIND];
  int64_t value[PB_MAX_BIND];
} pb_binding;

/* Sets (or replaces) name = v; false when the binding is full. */
bool pb_bind(pb_binding *b, const char *name, int64_t v);
bool pb_lookup(const pb_binding *b, const char *name, int64_t *v);
/* Concrete shape of a symbolic one; sizes must come out >= 0. */
pb_status pb_shape_eval(const pb_binding *b, int rank, const sx *const *shape, int64_t *out, char *why,
                        size_t nwhy);

typedef struct pb_result {
  int nout;
  const char **out_name; /* STORE tensor names, in node order */
  pb_tensor *out;
  int nvals;             /* d->n when values were kept, else 0 */
  pb_tensor *vals;       /* every node's value, by node index */
  int failed_node;       /* node that failed, or -1 */
  char why[256];         /* reason of a failure */
} pb_result;

/* Number of BUFFER nodes, and the tensor name of the k-th one (inputs are
 * given in BUFFER node order, which tiny_lower makes signature order). */
int pb_num_inputs(const tiny_dag *d);
const char *pb_input_name(const tiny_dag *d, int k);

/* Evaluates the DAG.  `inputs[k]` feeds the k-th BUFFER and must have its
 * concrete shape; values are rounded to the BUFFER's dtype.  With
 * `keep_values`, res->vals holds every node's value.  Release the result
 * with pb_result_free() whatever the status. */
pb_status pb_eval_tiny(const tiny_dag *d, const pb_binding *b, int nin, const pb_tensor *inputs, bool keep_values,
                       pb_result *res);
void pb_result_free(pb_result *res);

/* Evaluates IndexBook entry `entry` (a VIEW or STORE entry: one input with
 * map and guards) through the book: out[i] = root[map(i)] where every guard
 * holds, else the pad value, rounded to the value's dtype.  `vals` are the
 * Tiny node values of pb_eval_tiny(keep_values); a non_scop view that is
 * itself a root is evaluated recursively. */
pb_status pb_eval_view(const indexbook *ib, int entry, const pb_binding *b, const pb_tensor *vals, pb_tensor *out,
                       char *why, size_t nwhy);

/* Evaluates every region of `rs` in order.  Signature inputs are given by
 * tensor name (`in_names[k]` is `inputs[k]`, with its concrete shape; extra
 * names are ignored).  res->out holds every yield into a signature output,
 * cast to its dtype, named by tensor; res->vals stays empty.  On failure
 * res->failed_node is the region's index and res->why names the region and
 * let.  Release the result with pb_result_free() whatever the status. */
pb_status pb_eval_regions(const region_set *rs, const pb_binding *b, int nin, const char *const *in_names,
                          const pb_tensor *inputs, pb_result *res);

#endif
