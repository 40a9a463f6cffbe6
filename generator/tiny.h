/* Tiny IR (spec §3): a DAG of tinygrad-style UOps, each with a derived
 * dtype and shape.
 *
 * tiny_lower() turns a Frontend graph into UOps: movement ops (views),
 * ALU ops, REDUCE (keepdim=false) and CONTRACT (mul->reduce(sum) as one
 * UOp).  Broadcasting is right-aligned and explicit: tiny_lower inserts
 * RESHAPE/EXPAND before every ALU op whose operands differ in shape.
 * Each signature output ends in a STORE (with a CAST when the computed dtype
 * differs from the declared one).  Nodes are in topological order; `src`
 * refers to earlier nodes by index. */
#ifndef DLC_TINY_H
#define DLC_TINY_H

#include <cJSON.h>
#include <stdbool.h>

#include "frontend.h"

typedef enum { TK_LEAF, TK_MOVE, TK_ALU, TK_REDUCE, TK_CONTRACT, TK_STORE } tiny_kind;
typedef enum { DR_SRC0, DR_SRC1, DR_BOOL, DR_ARG } tiny_dtype_rule;

typedef enum {
#define X(e, name, arity, kind, dr, cuda, cexpr) e,
#include "tiny.def"
#undef X
  TINY__COUNT
} tiny_op;

const char *tiny_op_name(tiny_op op);
int tiny_op_arity(tiny_op op);
tiny_kind tiny_op_kind(tiny_op op);
const char *tiny_op_cuda(tiny_op op);
/* Scalar playback of an ALU op. */
double tiny_op_eval(tiny_op op, double a, double b, double c);
bool tiny_op_parse(const char *name, tiny_op *out);

#define TINY_MAX_RANK 12

typedef struct tiny_contract {
  const char *pattern;   /* "matmul" or "conv2d" (from the frontend op) */
  int nl, nr, no, nk;
  const char **lhs_idx, **rhs_idx, **out_idx, **reduce_idx; /* axis labels */
  int64_t strides[2];    /* conv2d */
} tiny_contract;

typedef struct tiny_uop {
  tiny_op op;
  int nsrc;
  int src[3];
  dtype dt;
  int rank;
  const sx **shape;
  const char *out;       /* value name, unique */
  const char *origin;    /* frontend node name (for diagnostics and dumps) */
  const char **labels;   /* optional semantic axis labels (m, n, k, h, kh, ...) */
  /* op arguments */
  const char *tensor;    /* BUFFER, STORE: signature tensor */
  double cval;           /* CONST value (times rsqrt(crsqrt) if set) */
  const char *crsqrt;    /* CONST: dim symbol */
  const char *crecip;    /* CONST: times 1/dim (a mean's divisor), dim symbol */
  int axis;              /* RANGE: the axis whose index is the value;
                            GATHER: the axis the index selects */
  int *perm;             /* PERMUTE */
  const sx **lo, **hi;   /* PAD: amounts before/after; SHRINK: [lo, hi) */
  int64_t *step;         /* SHRINK: step per axis */
  bool *flip;            /* FLIP */
  const sx **vmap;       /* VIEW: index into the source per source axis, over
                            variables "v0".."v<rank-1>" (this node's axes) */
  reduce_op rop;         /* REDUCE */
  int naxes;
  int *axes;             /* REDUCE: source axes removed */
  tiny_contract *con;    /* CONTRACT */
  const char *materialize; /* a layout conversion of this tensor (the layout
                            * pass, docs/layout.md): a region boundary */
} tiny_uop;

typedef struct tiny_dag {
  arena *A;
  const fe_graph *fe;
  tiny_uop *u;
  int n, cap;
} tiny_dag;

/* Lowers a verified frontend graph.  NULL with diagnostics on error. */
tiny_dag *tiny_lower(arena *A, const fe_graph *g, diag_list *dl);

/* Builders (also used by tests to construct DAGs directly).  They check the
 * op's shape rule and report diagnostics at `origin`; they return the new
 * node's index or -1. */
tiny_dag *tiny_new(arena *A, const fe_graph *fe);
int tiny_buffer(tiny_dag *d, const char *tensor, dtype dt, int rank, const sx *const *shape);
int tiny_const(tiny_dag *d, double v, dtype dt);
int tiny_range(tiny_dag *d, int rank, const sx *const *shape, int axis);
int tiny_reshape(tiny_dag *d, int x, int rank, const sx *const *shape, diag_list *dl, const char *origin);
int tiny_permute(tiny_dag *d, int x, const int *perm, diag_list *dl, const char *origin);
int tiny_expand(tiny_dag *d, int x, int rank, const sx *const *shape, diag_list *dl, const char *origin);
int tiny_pad(tiny_dag *d, int x, const sx *const *lo, const sx *const *hi, diag_list *dl, const char *origin);
int tiny_shrink(tiny_dag *d, int x, const sx *const *lo, const sx *const *hi, const int64_t *step,
                diag_list *dl, const char *origin);
int tiny_flip(tiny_dag *d, int x, const bool *flip, diag_list *dl, const char *origin);
int tiny_view(tiny_dag *d, int x, int rank, const sx *const *shape, const sx *const *vmap);
/* GATHER: x read at index (int32, x's rank, x's sizes but on `axis`). */
int tiny_gather(tiny_dag *d, int x, int index, int axis, diag_list *dl, const char *origin);
/* ALU with right-aligned broadcast (EXPAND inserted as needed) and dtype
 * promotion (CAST inserted on the narrower operand). */
int tiny_alu(tiny_dag *d, tiny_op op, int a, int b, int c, diag_list *dl, const char *origin);
int tiny_cast(tiny_dag *d, int x, dtype to);
int tiny_reduce(tiny_dag *d, int x, reduce_op op, int naxes, const int *axes, dtype acc, diag_list *dl,
                const char *origin);
int tiny_contract_op(tiny_dag *d, int lhs, int rhs, tiny_contract *c, dtype acc, diag_list *dl,
                     const char *origin);
int tiny_store(tiny_dag *d, int x, const char *tensor);

/* Named rewrite: MUL of movement chains followed by REDUCE(SUM) becomes
 * CONTRACT (tinygrad's naive `(A.reshape(M,K,1)*B.reshape(1,K,N)).sum(1)`).
 * Returns the number of contractions formed; the DAG is compacted. */
int tiny_fold_contractions(tiny_dag *d);

/* Checks dtypes, shapes and arities of every node against the op table. */
bool tiny_verify(const tiny_dag *d, diag_list *dl);
/* {"uops":[...]} */
cJSON *tiny_dump(const tiny_dag *d);
/* Node index of the value named `name`, or -1. */
int tiny_find(const tiny_dag *d, const char *name);

#endif
