/* The entry table: dlcgen's description of a library's entry points and
 * kernels as data (src/dlc_entries.c, written by emit_entries_c beside the
 * dispatch), for the tests that run every kernel of any manifest
 * (tests/kernels/test_every_kernel.c, docs/testing.md).  It is not part of
 * the library: a test compiles it with the library's generated headers.
 *
 * For every op: the entry point's arguments in order, each with its role
 * (a signature dim, one element of a runtime attr, a tensor, a leading
 * dimension), a thunk that calls dlc_<op> with an array of argument values
 * (and thunks for dlc_<op>_ws, dlc_<op>_workspace_size and dlc_<op>_query),
 * the instances (dtype x variant, and the shape buckets with their bounds)
 * with the arguments each one fixes and the manifest instance it compiles,
 * and the kernels of the dispatch table dlc__k_<op>, in its order, each with
 * its instance, chain step and chunk width and the tensors whose alignment
 * selects that width.  Tensor shapes are the graph's (the test reads them, and the
 * reference, from the generator's own stages). */
#ifndef DLC_ENTRIES_H
#define DLC_ENTRIES_H

#include <stddef.h>
#include <stdint.h>

#include "dlc/dlc.h"

typedef enum dlc__arg_role {
  DLC__ARG_DIM,    /* a signature dim (`what`: its symbol, "M") */
  DLC__ARG_ATTR,   /* element `elem` of a runtime attr pair (`what`: "stride") */
  DLC__ARG_INPUT,  /* the pointer of an input tensor (`what`: the tensor, "A") */
  DLC__ARG_OUTPUT, /* the pointer of an output tensor */
  DLC__ARG_LD,     /* the leading dimension of a rank-2 tensor (`what`: the tensor) */
} dlc__arg_role;

typedef struct dlc__entry_arg {
  const char *name; /* the C parameter of dlc_<op> */
  dlc__arg_role role;
  const char *what;
  int elem;
} dlc__entry_arg;

/* One argument value: `i` for dims, attrs and leading dims, `p` for tensors. */
typedef union dlc__arg_value {
  int64_t i;
  void *p;
} dlc__arg_value;

/* An argument an instance fixes: a runtime attr element or a compile-time dim. */
typedef struct dlc__entry_fixed {
  int arg; /* index into the op's args */
  int64_t value;
} dlc__entry_fixed;

/* A shape bucket's bound on a dim argument, or on a product of dims (a
 * GEMM group's extent, conv's N P Q): the instance is selected when the
 * argument, or the product, lies in [lo, hi] (and the earlier instances are
 * not). */
typedef struct dlc__entry_bound {
  int arg; /* index into the op's args; -1 for a product */
  int64_t lo, hi;
  /* a product's value at the call's arguments (by index; the dims and attrs
   * are read), INT64_MAX on overflow; NULL for a dim argument */
  int64_t (*product)(const int64_t *args);
} dlc__entry_bound;

typedef struct dlc__entry_instance {
  const char *tag; /* the manifest instance, "fp16.stride2x2.pad1x1"; a shape
                    * bucket's adds ".b<i>" ("fp16.b0") */
  dlc_dtype dtype;
  int nfixed;
  const dlc__entry_fixed *fixed;
  /* per argument, a test size for a dim (0: none): a dim that alone sizes
   * the M or N group of one of the instance's kernels gets its plan's tile
   * + 8, the K group two tiles + 8 (the largest over a chain's kernels), so
   * that a test of that size runs full tiles, more than one CTA or k-step,
   * and a tail (a bucket's plan gives its own; the bounds below still
   * apply) */
  const int64_t *extent;
  /* the manifest instance it compiles (mf_instances' index: its graph and
   * reference); the shape buckets of one manifest instance share it */
  int source;
  /* a shape bucket's bounds (0, NULL for an instance that serves every shape) */
  int nbounds;
  const dlc__entry_bound *bounds;
  /* 1: its calls need a workspace: a chain op's, or a split-K plan's (which
   * dispatch selects only through dlc_<op>_ws with at least
   * dlc_<op>_workspace_size() bytes; without, the next row that matches) */
  int workspace;
} dlc__entry_instance;

/* A row of the dispatch table dlc__k_<op>, by index.  A chain op's instance
 * has a row per kernel of the chain and chunk width, kernel 0's first; a
 * split-K instance a row per chunk width of its first kernel, then its
 * second kernel (step 1, no width tensors). */
typedef struct dlc__entry_kernel {
  const char *name; /* the kernel, as dlc__kernel.name */
  int inst;         /* index into the op's instances */
  int vec;          /* chunk width, elements */
  int step;         /* its kernel in the instance's chain (0: the first or only) */
  /* the signature tensors whose pointer alignment (and strides) pick this
   * kernel's chunk width: width w needs each aligned to w elements (a
   * chain's values in the workspace are always aligned and not listed) */
  int nvec_tensors;
  const char *const *vec_tensors;
  /* a kernel that multiplies fp32 operands in TF32 (mma m16n8k8, each
   * fragment rounded by cvt.rna.tf32.f32): its lhs and rhs (a signature
   * tensor's name, or a chain value's); {NULL, NULL} for the others */
  const char *tf32[2];
  /* the archs it is built for (DLC__ARCH_* bits: every manifest arch, or
   * DLC__ARCH_SM90A alone for an sm90a-row kernel), and the row an sm90a
   * device runs instead for the calls that select this one (the instance's
   * sm90a kernel takes every call whose tensor maps encode, which the
   * widest width's alignment implies; -1: none) */
  unsigned archs;
  int sm90a_first;
} dlc__entry_kernel;

typedef struct dlc__entry {
  const char *op; /* dlc_<op> */
  int index;      /* manifest ops[index], the dispatch table's dlc__kernel.op */
  int nargs;
  const dlc__entry_arg *args;
  /* dlc_<op>(dtype, args[0], ..., args[nargs-1], NULL) */
  dlc_status (*call)(dlc_dtype dtype, const dlc__arg_value *args);
  int ninst;
  const dlc__entry_instance *inst;
  int nkernels;
  const dlc__entry_kernel *kernels;
  /* dlc_<op>_ws(dtype, args..., workspace, workspace_bytes, stream) and
   * dlc_<op>_workspace_size(dtype, the args before the first tensor), which
   * every op has (0 bytes for one whose plans use none) */
  dlc_status (*call_ws)(dlc_dtype dtype, const dlc__arg_value *args, void *workspace, size_t workspace_bytes,
                        struct CUstream_st *stream);
  size_t (*workspace_size)(dlc_dtype dtype, const dlc__arg_value *args);
  /* dlc_<op>_query(dtype, args..., workspace, workspace_bytes, info) */
  dlc_status (*query)(dlc_dtype dtype, const dlc__arg_value *args, void *workspace, size_t workspace_bytes,
                      dlc_launch_info *info);
  /* the plan API (docs/runtime.md), each taking from `args` the arguments
   * of its own: dlc_<op>_plan_create(&plan, dtype, ..., stream) (*plan
   * written on success only), dlc_<op>_plan_run(plan, ..., workspace,
   * workspace_bytes, stream), dlc_<op>_plan_workspace_size(plan, ...) and
   * dlc_<op>_plan_destroy(plan); plan_args[i] is 1 for an argument
   * plan_create takes (a param the ConstPool holds, its ld, a dim of its
   * shape), 0 for one plan_run takes; npool: the params the pool holds;
   * plan_made: bit s set for chain step s, a param's layout conversion that
   * plan_create runs once into the pool and plan_run skips */
  dlc_status (*plan_create)(void **plan, dlc_dtype dtype, const dlc__arg_value *args, struct CUstream_st *stream);
  dlc_status (*plan_run)(void *plan, const dlc__arg_value *args, void *workspace, size_t workspace_bytes,
                         struct CUstream_st *stream);
  size_t (*plan_workspace_size)(const void *plan, const dlc__arg_value *args);
  void (*plan_destroy)(void *plan);
  const signed char *plan_args;
  int npool;
  unsigned plan_made;
} dlc__entry;

/* The manifest the table was generated from (its file name), and the ops. */
extern const char dlc__entries_manifest[];
extern const int dlc__nentries;
extern const dlc__entry dlc__entries[];

#endif
