/* The emitter's internal interface: what its files share (emit.c, the
 * kernels' .cu and the Op machinery; emit_host.c, the host C; the
 * skeletons' renderers in skel/).  Not installed, and not for the rest of
 * the generator, which calls emit.h. */
#ifndef DLC_EMIT_INT_H
#define DLC_EMIT_INT_H

#include "emit.h"
#include "strbuf.h"
#include "workspace.h"

#ifndef DLC_VERSION
#define DLC_VERSION "0.1.0"
#endif

/* The values a chain keeps between its kernels (workspace.h): of the
 * first instance, each with its interval of kernels. */
typedef ws_value chain_val;

/* What the renderers rendered: one mark a statement rendered, in the order
 * they were rendered (emit_op_cu's log, which emit_verify_cu checks).  The
 * sm90a Ops render their roles' loops as functions of their own (produce,
 * consume, store_tile) that the kernel function calls: a mark names the
 * function it was rendered in, and a call mark (st -1) where the kernel's
 * code calls one, so that the statements' order is the order the kernel
 * runs them in. */
typedef enum {
  RENDER_FN_KERNEL,     /* the kernel function (or the reduce's) */
  RENDER_FN_PRODUCE,    /* Op::produce: the producer role's loop */
  RENDER_FN_CONSUME,    /* Op::consume: the consumers' loop */
  RENDER_FN_STORE_TILE, /* Op::store_tile: the consumers' epilogue */
  RENDER_FN__COUNT
} render_fn;

typedef struct render_mark {
  const gpu_kernel *k;
  int st;               /* the statement, or -1: a call of `call` */
  render_fn fn, call;
} render_mark;

/* An Op struct rendered for kernel k (its text, from `struct <name> {`
 * to its closing brace). */
typedef struct render_op {
  const gpu_kernel *k;
  const char *name, *text;
} render_op;

typedef struct render_log {
  arena *A;
  int n, cap;
  render_mark *m;
  render_fn fn;         /* the function being rendered */
  int nops, cap_ops;
  render_op *ops;
  /* the epilogue of the most operand paths rendered (epi_paths_note) */
  double epi_paths;
  const char *epi_region, *epi_split;
} render_log;

/* Marks statement st of k rendered (in the function being rendered). */
void render_mark_stmt(render_log *log, const gpu_kernel *k, const gpu_stmt *st);
/* Marks a call of fn by k's code where it is rendered. */
void render_mark_call(render_log *log, const gpu_kernel *k, render_fn fn);
/* The function whose statements are rendered next. */
void render_in_fn(render_log *log, render_fn fn);
/* Records the Op `text` rendered for k, as `name`. */
void render_log_op(render_log *log, const gpu_kernel *k, const char *name, const char *text);

typedef struct opgen {
  arena *A;
  const gpu_view *v;    /* the region and its groups */
  const region *r;
  strbuf *s;
  dtype T;              /* the instance's operand dtype: spelled `T` (the Op is a template over it) */
  bool ieee;            /* the kernel's math_ieee: exp2/log2/recip/sqrt/div as IEEE, not .approx.ftz */
  render_log *log;      /* where the statements rendered are marked */
  /* the Op split into the shared template and the plan's struct (op_split):
   * the full-width epilogue's arrays then take its width as a number, and
   * its EPI_VEC is the plan's */
  bool split;
} opgen;

/* An epilogue Read that is loaded once and then indexed: in the bounds-checked
 * epilogue, the unit-stride ones (4 values at once); in the full-width one,
 * every Read, as its kind says. */
typedef struct vread {
  const rexpr *rd;
  int id;
  epi_read_kind kind;
} vread;

typedef struct epigen {
  opgen *g;
  vread v[16];
  int nv;
  bool full;         /* the full-width epilogue: reads spelled by kind */
  const char *acc;   /* how the accumulator let is spelled */
  int nsub;          /* lets spelled by a given expression instead */
  int sub_let[4];
  const char *sub_expr[4];
  bool exp2_nonpos;  /* every exp2 here takes an argument <= 0 (the softmax's
                        x - running max): dlc::ex2, one ex2.approx.ftz, even
                        in IEEE math, since what it flushes is below 2^-126
                        of the row's largest term 1 */
  int nlane;         /* guards spelled by a lane mask's test instead (score_lane) */
  const ib_guard *lane_gd[GPUIR_MAX_MASKS];
  const char *lane_test[GPUIR_MAX_MASKS];
  struct lowering *lw; /* the post-reduce lets' lowering (approx math), or NULL */
  struct rows_pass *rp; /* the row skeleton's open pass: its Reads are spelled from its loads */
} epigen;

/* The row skeleton's open pass (rows_kernel): the load statements of the
 * GPU IR that its lets' Reads are spelled from (rd<i>, the i-th load of
 * the pass), and the pad Selects around the expression being spelled (a
 * Read under one is loaded only where its guards hold). */
typedef struct rows_pass {
  const gpu_kernel *k;
  int nld;
  const gpu_stmt *ld[GPUIR_ROW_PASS_LOADS];
  int ngs;
  const rexpr *gs[GPUIR_ROW_GUARD_DEPTH];
} rows_pass;

/* The Op's kernel<VEC>(p): the GPU IR's statements in order, each one line
 * (a call of its primitive in templates/sm80_contraction.cuh's Sm80Cta, on
 * the CTA's state `c`) with the statement's kind and `what` as its comment.
 * Loops and k-step groups open and close braces; a statement the kernels of
 * some widths skip (min_vec) is under `if constexpr (VEC >= min_vec)`.  The
 * renderer reads only the statements' structured fields (side, copy, tile,
 * stage, lo..hi, loop, full); gpuir_verify checks that they render. */
typedef struct sm80_render {
  arena *A;
  strbuf *s;
  const gpu_kernel *k;
  int S;
  const char *ind;   /* indentation of the next line */
  gpu_loop loop;     /* the open loop, GLOOP_NONE outside */
  int loop_vec;      /* its min_vec */
  int group;         /* the open k-step group: 0 none, 1 after A's fragments, 2 after B's */
  bool full_open;    /* the full-width epilogue's branch is open */
  bool reduce;       /* split-K's second kernel (Sm80SplitReduce) */
  int pass;          /* attention: the open loop's pass (its key tiles' mode) */
  bool ahead_open;   /* the prologue of the fragments a tile ahead is open */
  render_log *log;   /* where each statement rendered is marked */
} sm80_render;

typedef void (*sm80_render_fn)(sm80_render *r, const gpu_stmt *st);

/* What an sm90a skeleton's kernel function is laid on (sm90a_kernel_fn):
 * its template and CTA state, its parameter block (the tensor maps' TParams
 * with the op's parameters in it, else the op's Params) and its producer
 * role's call of Op::produce. */
typedef struct sm90a_cta {
  const char *header, *cta;
  bool tmaps;
  const char *produce;
} sm90a_cta;

/* ---- emit.c: names, comments and C spellings; the Op struct, its chunk
 * functions and epilogue; the statement renderers the skeletons share;
 * what an op's kernels are and their names */
const char *lc(arena *A, const char *s);
const char *cmt(arena *A, const char *s);
const char *dlc_dtype_enum(dtype t);
char *sxc(arena *A, const sx *x, bool host);
/* sxc's host C with each param its lower-case name alone (a function's own argument). */
char *sxc_args(arena *A, const sx *x);
/* An entry point's arguments after dtype (emit_host.c): what each is, for
 * the entry table (libkernels/dlc_entries.h) and the catalogue. */
typedef enum { ARG_DIM, ARG_ATTR, ARG_INPUT, ARG_OUTPUT, ARG_LD } arg_role;
typedef struct arg {
  const char *name;   /* C identifier */
  const char *type;   /* "int64_t", "const void *", "void *" */
  const char *doc;
  arg_role role;
  const char *what;   /* the dim symbol, attr or tensor the argument carries */
  int elem;           /* ARG_ATTR: the element of the pair */
} arg;
/* dlc_<op>'s arguments in order; returns their number. */
int host_entry_args(emit_ctx *c, const emit_op *eo, arg **out);
/* dlc_<op>'s prototype, without the `;`. */
void host_prototype(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n);
/* A doc comment of `text` wrapped at 110 columns. */
void host_doc_comment(strbuf *s, const char *text);
/* The plan API (emit_host_plan.c): its typedef and prototypes in dlc_ops.h,
 * its functions in dlc_dispatch.c (opi: the op's index in dlc_ops.def), its
 * thunks in dlc_entries.c, and the number of params its ConstPool holds. */
void plan_prototypes_h(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n);
void plan_functions_c(emit_ctx *c, strbuf *s, const emit_op *eo, int opi, const arg *a, int n);
void plan_entry_thunks(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n);
int plan_npool(emit_ctx *c, const emit_op *eo, const arg *a, int n);
/* The layout conversions of params that op eo's plan makes once, at
 * plan_create (at most WS_MAX_VALUES, in out): the chain's entry then takes
 * them made (dlc__ws_<op>'s dlc_pre) and skips their kernels. */
int plan_param_convs(emit_ctx *c, const emit_op *eo, const arg *a, int n, ws_param_conv *out);
/* A tensor's shape as its graph writes it ("[N,P,Q,K] (P, Q derived)"). */
const char *host_written_shape(arena *A, const emit_op *eo, const fe_tensor *t);
/* What kernel k puts on grid dimension d ("M tiles x N tiles"; "" none). */
const char *host_grid_what(const gpu_kernel *k, int d);

/* The op's formula as the manifest (else its graph) describes it, or NULL;
 * and its graph's compile-time constants in one line ("eps (add scalar)
 * 1e-05"; "" none), for dlc_ops.h (emit_catalog.c). */
const char *catalog_description(emit_ctx *c, const emit_op *eo);
const char *catalog_constants(emit_ctx *c, const emit_op *eo);

bool is_chain(const emit_op *eo);
bool has_split(const emit_op *eo);
const char *reduce_name(arena *A, const emit_op *eo, const emit_instance *in);
const char *kernel_name_k(arena *A, const emit_op *eo, const emit_instance *in, const gpu_kernel *k, int vec);
bool tmaps90(const gpu_kernel *k);
const char *kernel_name_90(arena *A, const emit_op *eo, const emit_instance *in);
/* A given instance's kernel (emit_op.given): dlc_<op>_<tag>_v<vec>, the tag ending in "given". */
const char *kernel_name_given(arena *A, const emit_op *eo, const emit_instance *in, int vec);
int chain_vals(const emit_op *eo, const emit_instance *in, chain_val *out, int cap);
const char *cid(arena *A, const char *s);
void cmt_let(arena *A, strbuf *s, const char *lead, const region *r, int l);
const char *flit(arena *A, double v, dtype t);
const char *tname(const opgen *g, dtype t);
const sx *group_extent(opgen *g, const int *ax, int n);
void decompose(opgen *g, const char *idx, const int *ax, int n, const char *indent);
void eguards_c(epigen *eg, strbuf *s, const ib_guard *gd, int ng);
void gather_c(epigen *eg, strbuf *s, const rexpr *e);
void expr_c(epigen *eg, strbuf *s, const rexpr *e);
void group_comment(opgen *g, const char *name, const int *ax, int n);
void cmt_wrap(strbuf *s, const char *lead, const char *text);
const char *ctype(dtype t);
void chunk_fn(opgen *g, const gpu_operand *o, const char *fname, const int *rax, int nr, const int *kax, int nk,
              const char *role);
void epilogue_fn(opgen *g, const char *rows_note);
void epilogue_full_fn(opgen *g, int ev, const char *tile_n);
void group_extents(opgen *g, const gpu_kernel *k, bool batch);
const char *r_side(const gpu_stmt *st);
const char *r_text(sm80_render *r, const char *t);
void r_line(sm80_render *r, const gpu_stmt *st, const char *code);
void r_indent(sm80_render *r, int d);
void r_tile_coord(sm80_render *r, const gpu_stmt *st);
void r_alloc_shared(sm80_render *r, const gpu_stmt *st);
void r_acc_zero(sm80_render *r, const gpu_stmt *st);
void r_barrier(sm80_render *r, const gpu_stmt *st);
void r_commit(sm80_render *r, const gpu_stmt *st);
void r_wait(sm80_render *r, const gpu_stmt *st);
void r_epilogue_pair(sm80_render *r, const gpu_stmt *st, const char *n0);
void r_st_global(sm80_render *r, const gpu_stmt *st);
void render_stmts(arena *A, render_log *log, strbuf *s, const gpu_kernel *k, int from, bool reduce, const sm80_render_fn *table);
void render_kernel(arena *A, render_log *log, strbuf *s, const gpu_kernel *k, const char *sname, const char *header,
                   const char *cta, const sm80_render_fn *table);
void h_barrier(sm80_render *r, const gpu_stmt *st);
void sm90a_kernel_fn(arena *A, render_log *log, strbuf *s, const gpu_kernel *k, const char *sname, const sm90a_cta *cta);

/* ---- skel/sm80_contraction.c: its statement table, which the split-K
 * reduce renders through too */
extern const sm80_render_fn SM80_RENDER[GS__COUNT];

/* ---- skel/splitk_reduce.c */
void splitk_reduce_fn(opgen *g, const gpu_kernel *reduce, const char *sname);

/* ---- skel/sm80_attention.c */
void a_epilogue(sm80_render *r, const gpu_stmt *st);
void a_reduce(sm80_render *r, const gpu_stmt *st);
void a_stage_acc(sm80_render *r, const gpu_stmt *st);
void attention_op(emit_ctx *c, strbuf *s, const emit_op *eo, const emit_instance *in, const char *sname);

/* ---- skel/sm90a_attention.c */
void tmap_box_fn(opgen *g, const gpu_tmap *tm, const char *fname, const char *rk, const char *role);
void att90_kernel_fns(arena *A, render_log *log, strbuf *s, const gpu_kernel *k, const char *sname);

#endif
