/* The GPU IR builders' internal interface: what gpuir.c (the statements,
 * the shared checks and the dump) gives the skeletons of skel/, each of
 * which builds, checks and renders its kernels.  Not for the rest of the
 * generator, which calls gpuir.h. */
#ifndef DLC_GPUIR_INT_H
#define DLC_GPUIR_INT_H

#include "gpuir.h"

/* Substitution of a group's axes by constants: axis `one` by 1, the others
 * by 0 (one = -1: all by 0). */
typedef struct group_pick {
  const region *r;
  const int *ax;
  int n, one;
  const sx *zero, *ones;
} group_pick;

/* The sm90a skeletons' CTA setup and roles as their renderer writes
 * Op::kernel (emit.c, sm90a_kernel_fn), one call on the CTA's state a
 * statement: from the kernel's first statement, the tile's coordinates,
 * the shared tiles, the barriers' init (each with its arrival count), the
 * CTA's barrier, the producer's role and its setmaxnreg.dec (its loop
 * follows: verify_sm90a_producer); at the consumers' role, its
 * setmaxnreg.inc, then the contraction's accumulators' zero and its two
 * descriptors, or the attention consumers' state (their descriptors), before
 * the statements of their k-loop (verify_sm90a_consumers,
 * verify_sm90a_att_consumers). */
typedef struct setup_step {
  gpu_stmt_kind k;
  gpu_side side;  /* AllocShared, FragSetup: the operand */
  gpu_mbar mbar;  /* MbarInit: which barriers */
  gpu_role role;  /* Role, SetMaxNReg: whose */
  const char *what;
} setup_step;

/* The statements of the sm90a contraction's producer role as the renderer
 * writes them (skel/sm90a_contraction.c, produce_fn), in order: kind, operand, lo (-2: any;
 * else the statement's lo, L standing for -3: the gathering producer's
 * lag), and what the statement is. */
typedef struct producer_step {
  gpu_stmt_kind k;
  gpu_side side;
  int lo;
  const char *what;
} producer_step;

/* The setup every sm90a skeleton's list begins with (SM90A_SETUP_HEAD, B's
 * ring or K's and V's) and ends with (SM90A_SETUP_TAIL, the barriers and the
 * producer's role) */
#define SM90A_SETUP_HEAD(alloc_b)                                                           \
  {GS_TILE_COORD, GSIDE_NONE, GMBAR_NONE, GROLE_NONE, "the tile's coordinates"},               \
      {GS_ALLOC_SHARED, GSIDE_A, GMBAR_NONE, GROLE_NONE, "the first operand's shared tile"},  \
      {GS_ALLOC_SHARED, GSIDE_B, GMBAR_NONE, 0, alloc_b}
#define SM90A_SETUP_TAIL                                                                            \
  {GS_MBAR_INIT, GSIDE_NONE, GMBAR_FULL, GROLE_NONE, "the full barriers' init"},                       \
      {GS_MBAR_INIT, GSIDE_NONE, GMBAR_EMPTY, GROLE_NONE, "the empty barriers' init"},                 \
      {GS_BARRIER, GSIDE_NONE, GMBAR_NONE, GROLE_NONE, "the CTA's barrier after the init"},            \
      {GS_ROLE, GSIDE_NONE, GMBAR_NONE, GROLE_PRODUCER, "the producer's role"},                            \
      {GS_SETMAXNREG, GSIDE_NONE, GMBAR_NONE, GROLE_PRODUCER, "the producer's setmaxnreg.dec"}

/* What the sm90a skeletons' shared checks (verify_sm90a_setup,
 * verify_sm90a_producer) compare a kernel's statements with: its
 * skeleton's lists, in its file of skel/. */
typedef struct sm90a_lists {
  const char *setup_name;       /* "contraction", "attention": the setup's, in diagnostics */
  const setup_step *setup;      /* from the kernel's first statement to the producer's setmaxnreg */
  int nsetup;
  const setup_step *consumers;  /* from the consumers' role, before their k-loop */
  int nconsumers;
  const char *producer_name;    /* "TMA", "gathering", "attention" */
  const producer_step *producer;
  int nproducer;
  int full_arrivals;            /* a full barrier's: 1 (the TMA's, with its bytes) or 128 (each gathering producer thread's) */
} sm90a_lists;

#define SM90A_N(a) ((int)(sizeof(a) / sizeof *(a)))

/* ---- gpuir.c: statements, tiles, operands and views, the epilogue's
 * widths, the sm90a skeletons' barriers and shared checks */
gpu_stmt *gpuir_push(gpu_kernel *k, arena *A, gpu_stmt_kind kind, const char *what, const char *detail, int out,
                     int nin, int in0, int in1);
const char *gpuir_axes(arena *A, const region *r, const int *ax, int n);
const sx *gpuir_extent(arena *A, const region *r, const int *ax, int n);
int add_tile(gpu_kernel *k, const char *name, int offset, int copies, int rows, int row_elems, int elem_bytes);
void view_of(arena *A, gpu_view *v, const region *r, const pc_analysis *a);
void operand_of(arena *A, diag_list *dl, const char *at, const region *r, const pc_contraction *c, bool rhs,
                gpu_operand *o);
const sx *operand_offset_free_of(arena *A, const region *r, const gpu_operand *o, const int *ax, int n);
const sx *axis_step(arena *A, const sx *off, const char *x);
const sx *operand_axis_step(arena *A, const region *r, const gpu_operand *o, int x);
void vec_variants(gpu_kernel *k, int vmax);
/* Keeps only the widest chunk width when every width operand is a value
 * between a chain's kernels (in the workspace, 256-byte aligned) whose row
 * strides are multiples of it: the dispatch picks it on every call, so the
 * narrower kernels would be dead code. */
void static_widths(gpu_kernel *k, arena *A);
const char *tail_pred(arena *A, const gpu_view *v);
const sx *subst_pick(void *ctx, sx_atom_kind kind, const char *name);
bool split_k(arena *A, const gpu_view *v, const sx *x, const sx **rest, const sx **kpart);
bool k_axis_range(void *ctx, sx_atom_kind kind, const char *name, int64_t *lo, int64_t *hi);
bool walk_guards_32(const gpu_view *v, const gpu_operand *o);
int kpart32_fallback(const gpu_kernel *k);
int epi_vec(arena *A, const gpu_view *v, int BM, int BN, int threads);
const char *epi_row_steps(arena *A, const gpu_view *v);
int steady_min_vec(const gpu_kernel *k);
const char *k_steps(arena *A, const gpu_kernel *k, int lo, int hi);
void mmas(gpu_kernel *k, arena *A, int lo, int hi, bool ahead);
int ahead_vec(const gpu_kernel *k);
bool grid_fits(arena *A, const gpu_kernel *k, diag_list *dl, const char *at);
void mbar_init(gpu_kernel *k, arena *A, gpu_mbar which, const char *what, int arrivals, const char *detail,
               int out);
void setmaxnreg(gpu_kernel *k, arena *A, bool consumers);
bool verify_setmaxnreg(const gpu_kernel *k, int consumers, diag_list *dl);
bool verify_sm90a_outputs(const gpu_kernel *k, int i, const char *who, diag_list *dl);
int sm90a_consumers_from(const gpu_kernel *k, const sm90a_lists *l);
bool verify_sm90a_setup(const gpu_kernel *k, const sm90a_lists *l, diag_list *dl);
bool verify_sm90a_producer(const gpu_kernel *k, const sm90a_lists *l, diag_list *dl);
bool lane_span_ok(const gpu_mask *mk, bool rows, int BM, int BN);

/* ---- skel/sm80_contraction.c */
void emit_epilogue(gpu_kernel *k, arena *A, const region *r, const char *lets, const char *full);

/* ---- skel/sm80_attention.c */
void emit_online_softmax(gpu_kernel *k, arena *A, const region *r1);

/* the checks (gpuir.c) a skeleton's verify runs where they apply: a ring's
 * stage reuse (sm80), the full-width epilogue's widths (BN outputs of type
 * out a row, stored by nt threads), attention's lane masks */
bool verify_stage_reuse(const gpu_kernel *k, diag_list *dl);
bool verify_epilogue_width(const gpu_kernel *k, int BN, dtype out, int nt, diag_list *dl);
bool verify_lane_masks(const gpu_kernel *k, diag_list *dl);

/* the GPU dump's parts (gpuir.c), which the skeletons' dumps are made of */
void dump_tile_head(cJSON *g, const gpu_kernel *k);
void dump_attention_tile(cJSON *g, const gpu_kernel *k);
void dump_vecs(cJSON *g, const gpu_kernel *k);
void dump_math(cJSON *g, const gpu_kernel *k);
void dump_sm90a_regs(cJSON *g, const gpu_kernel *k);
void dump_operands(cJSON *g, const gpu_kernel *k, int sides, bool wgmma);
void dump_stmts(cJSON *g, const gpu_kernel *k, bool rows);
void dump_contraction(cJSON *g, const gpu_kernel *k, bool wgmma);

#endif
