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

/* ---- gpuir.c: statements, tiles, operands and views, the epilogue's
 * widths, the sm90a skeletons' barriers and shared checks */
gpu_stmt *gpuir_push(gpu_kernel *k, arena *A, gpu_stmt_kind kind, const char *what, const char *detail,
                     const char *out, int nin, const char *in0, const char *in1);
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
               const char *out);
void setmaxnreg(gpu_kernel *k, arena *A, bool consumers);
bool verify_setmaxnreg(const gpu_kernel *k, int consumers, diag_list *dl);
bool verify_sm90a_outputs(const gpu_kernel *k, int i, const char *who, diag_list *dl);
int sm90a_consumers_from(const gpu_kernel *k);
bool verify_sm90a_setup(const gpu_kernel *k, diag_list *dl);
bool verify_sm90a_producer(const gpu_kernel *k, diag_list *dl);
bool lane_span_ok(const gpu_mask *mk, bool rows, int BM, int BN);

/* ---- skel/sm80_contraction.c */
void emit_epilogue(gpu_kernel *k, arena *A, const region *r, const char *lets, const char *full);

/* ---- skel/sm80_attention.c */
void emit_online_softmax(gpu_kernel *k, arena *A, const region *r1);

#endif
