/* Frontend IR (spec §2): a graph with its signature, as read from the graph
 * JSON format (shared graphs/README.md, docs/graph-format.md).
 *
 * fe_read() parses and validates a graph and instantiates it: the dtype
 * parameter T becomes a concrete dtype, runtime attrs (signature.attrs) take
 * the values of one manifest variant, and compile-time dims (e.g. D) become
 * integers.  Shapes are sx expressions over the signature dims.  Nodes are
 * topologically sorted; fe_verify() checks the §2.3 invariants. */
#ifndef DLC_FRONTEND_H
#define DLC_FRONTEND_H

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "dtype.h"
#include "sx.h"

#define FE_MAX_RANK 8

typedef enum {
#define X(e, name, mn, mx, attrs, infer) e,
#include "frontend.def"
#undef X
  FE__COUNT
} fe_op;

typedef enum {
#define X(e, name, arity, decomp) e,
#include "ewise.def"
#undef X
  EW__COUNT
} ewise_fn;

typedef enum { RED_SUM, RED_MAX, RED_MIN } reduce_op;

const char *fe_op_name(fe_op op);
const char *ewise_name(ewise_fn fn);
int ewise_arity(ewise_fn fn);
const char *ewise_decomposition(ewise_fn fn);
const char *reduce_op_name(reduce_op op);

typedef struct fe_tensor {
  const char *name;
  dtype dt;              /* after instantiation: never DT_T for declared tensors */
  int rank;
  const sx **shape;      /* declared shape; NULL for undeclared intermediates */
  const char *layout;    /* "NHWC", "KRSC", ... or NULL */
  bool declared;         /* listed in `tensors` */
  int producer;          /* node index, or -1 */
  int sig_input;         /* index in signature.inputs, or -1 */
  int sig_output;        /* index in signature.outputs, or -1 */
  const char *role, *mutability, *storage;
  const char *at;        /* JSON path of the declaration (or first use) */
  /* seed 004 metadata (docs/graph-format.md, layout.h); all optional */
  int nlayout_perm;      /* 0, or rank */
  int *layout_perm;      /* memory order, outermost axis first */
  const char *layout_tag;
  bool has_transform_meta;
  bool delta_layout;     /* transform_meta.delta_layout */
  const char *tm_kind;   /* transform_meta.kind: "S", "Q" or "K" */
  const char *conversion_of; /* transform_meta.conversion_of: a layout conversion of that tensor */
  int ncoaccess;         /* transform_meta.coaccess: [[i, j, w], ...] */
  int *co_i, *co_j;
  double *co_w;
  int coaccess_block;    /* 0 when not given */
} fe_tensor;

typedef struct fe_attrs {
  bool has_acc;
  dtype acc_dtype;
  int64_t stride[2], pad[2], dilation[2];
  bool causal;
  bool has_scale;
  double scale;          /* when scale_rsqrt is NULL */
  const char *scale_rsqrt; /* "rsqrt(D)": the dim symbol D */
  reduce_op rop;
  bool mean;                 /* Reduce "mean": the sum divided by the reduced extent */
  int naxes;
  int64_t axes[FE_MAX_RANK]; /* Reduce, Flip (normalized to >= 0) */
  int64_t axis;              /* Softmax; Gather's dim */
  int nperm;
  int64_t perm[FE_MAX_RANK];
  int nshape;
  const sx **shape;          /* Reshape, Expand */
  bool has_to;
  dtype to;                  /* Cast, Elementwise cast */
  bool has_scalar;
  double scalar;
  int npads;
  const sx **pad_lo, **pad_hi; /* Pad */
  double pad_value;
  int nslice;
  const sx **starts, **ends;   /* Slice */
  int64_t *steps;
  int nrep;
  int64_t repeats[FE_MAX_RANK]; /* Tile: one per result axis, >= 1 */
} fe_attrs;

typedef struct fe_node {
  fe_op op;
  const char *name;
  ewise_fn fn;           /* Elementwise */
  int nin, nout;
  int *in, *out;         /* tensor indices */
  fe_attrs attrs;
  const char *at;        /* "graph[2] (bias_add)" */
  int src;               /* index in the graph's node list as read (before sorting) */
  /* the result as the op's shape rule gives it (a declared output keeps its
   * own dtype and shape; align_params and the final cast reconcile them) */
  dtype rdt;
  int rrank;
  const sx **rshape;
} fe_node;

typedef struct fe_graph {
  arena *A;
  const char *name;
  dtype T;               /* the instantiated dtype parameter */
  int ndims;
  const char **dims;     /* signature.dims */
  int nsig_attrs;
  const char **sig_attrs;
  int *sig_attr_least;   /* the least value each runtime attr takes: 0 (pad), 1 (stride, dilation) */
  int nin, nout;
  int *inputs, *outputs; /* tensor indices, in signature order */
  int ntensors, cap_tensors;
  fe_tensor *tensors;
  int nnodes;
  fe_node *nodes;
  int nbound;            /* compile-time dims bound to integers (e.g. D=64) */
  const char **bound_name;
  int64_t *bound_value;
  const char *const *params; /* NULL-terminated dims, for sx_parse */
} fe_graph;

/* One instantiation of a graph: the dtype for T, values for runtime attrs
 * (a JSON object such as {"stride":[2,2],"pad":[1,1]}) and compile-time dims
 * (a JSON object such as {"D":64}).  Either object may be NULL. */
typedef struct fe_instance {
  dtype T;
  const cJSON *attr_values;
  const cJSON *dim_values;
} fe_instance;

/* Reads a graph from JSON text or an already parsed object.  `where` names
 * the source in diagnostics ("graphs/gemm.json", "manifest.ops[0].graph").
 * Returns NULL (with diagnostics) on any error. */
fe_graph *fe_read_json(arena *A, const cJSON *root, const char *where, const fe_instance *inst,
                       diag_list *dl);
fe_graph *fe_read_text(arena *A, const char *text, const char *where, const fe_instance *inst,
                       diag_list *dl);
/* The §2.3 invariants; returns false with diagnostics. */
bool fe_verify(const fe_graph *g, diag_list *dl);
/* {"signature":...,"tensors":...,"graph":[...]} */
cJSON *fe_dump(const fe_graph *g);
int fe_find_tensor(const fe_graph *g, const char *name);
/* Whether t is a param a plan's ConstPool holds: role param, storage const_pool. */
bool fe_pooled_param(const fe_tensor *t);
/* A tensor as its consumers see it: the producer's inferred result, or the
 * declaration for signature inputs. */
void fe_tensor_value(const fe_graph *g, int t, dtype *dt, int *rank, const sx *const **shape);
bool fe_is_dim(const fe_graph *g, const char *sym);

#endif
