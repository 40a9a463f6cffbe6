/* GPU IR: regions and plans laid onto the fixed per-arch skeletons, with
 * async tokens and tail predication (spec §9).
 *   sm80_contraction: one contraction region with a pointwise epilogue
 *     (GEMM, implicit-GEMM convolution);
 *   sm80_attention: QK^T + score lets + row softmax (region 1, P deferred)
 *     and P V (region 2), streamed FlashAttention-2 style. */
#include "gpuir.h"
#include "gpuir_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "strbuf.h"

/* Appends a statement; the pointer it returns is good until the next one
 * (for the fields the renderer reads). */
gpu_stmt *gpuir_push(gpu_kernel *k, arena *A, gpu_stmt_kind kind, const char *what, const char *detail,
                     const char *out, int nin, const char *in0, const char *in1) {
  gpu_stmt s = {.k = kind, .what = what, .detail = detail, .nin = nin, .in = {in0, in1, NULL, NULL}, .out = out,
                .lo = -1, .hi = -1};
  ARENA_PUSH(A, k->st, k->nst, k->cap_st, s);
  return &k->st[k->nst - 1];
}

int gpuir_swizzle_width(int row_bytes) {
  if (row_bytes <= 0 || row_bytes % 16) return 0;
  int nch = row_bytes / 16, w = nch & -nch;
  return w < 8 ? w : 8;
}

int gpuir_swizzle_xor(const gpu_smem_tile *t, int r) {
  if (t->elem_bytes == 4 && t->swz == 8) return ((r & 3) << 1) | ((r >> 2) & 1);
  return (r / (8 / t->swz)) % t->swz;
}

/* Appends a shared tile laid out with gpuir_swizzle_width; returns the byte
 * after it. */
int add_tile(gpu_kernel *k, const char *name, int offset, int copies, int rows, int row_elems, int elem_bytes) {
  gpu_smem_tile t = {name, offset, copies, rows, row_elems, elem_bytes, gpuir_swizzle_width(row_elems * elem_bytes)};
  if (k->ntiles < GPUIR_MAX_TILES) k->tiles[k->ntiles++] = t;
  return offset + copies * rows * row_elems * elem_bytes;
}

const char *gpuir_axes(arena *A, const region *r, const int *ax, int n) {
  const char *s = "";
  for (int i = 0; i < n; i++) s = arena_printf(A, "%s%s%s", s, i ? "," : "", r->it[ax[i]].name);
  return arena_printf(A, "(%s)", s);
}

const sx *gpuir_extent(arena *A, const region *r, const int *ax, int n) {
  const sx *e = sx_int(A, 1);
  for (int i = 0; i < n; i++) e = sx_mul(A, e, r->it[ax[i]].size);
  return e;
}

void view_of(arena *A, gpu_view *v, const region *r, const pc_analysis *a) {
  const pc_contraction *c = &a->con;
  v->r = r;
  v->a = a;
  v->nm = c->nm, v->nn = c->nn, v->nb = c->nb, v->nk = c->nk;
  v->m_axes = c->m_axes, v->n_axes = c->n_axes, v->b_axes = c->b_axes, v->k_axes = c->k_axes;
  v->tail = ARENA_ARRAY(A, const char *, a->ntail + 1);
  for (int i = 0; i < a->ntail; i++) v->tail[v->ntail++] = a->tail_axes[i];
  v->out = v->out_let = -1;
}

/* The operand chunks of one side of a contraction. */
void operand_of(arena *A, diag_list *dl, const char *at, const region *r, const pc_contraction *c, bool rhs,
                gpu_operand *o) {
  o->input = rhs ? c->rhs : c->lhs;
  o->tensor = r->in[o->input].name;
  o->read = rhs ? c->rhs_read : c->lhs_read;
  o->k_contig = rhs ? c->rhs_k_contig : c->lhs_k_contig;
  o->contig_axis = rhs ? c->rhs_contig : c->lhs_contig;
  o->vec_max = o->contig_axis >= 0 ? 16 / dtype_bytes(r->in[o->input].dt) : 1;
  if (o->contig_axis >= 0) return;
  o->k_contig = true; /* scalar chunks: any layout; keep K-major tiles */
  const rexpr *rd = o->read;
  if (rd->k == RX_SELECT && !rd->a) rd = rd->b;
  if (rd->k == RX_UNARY) rd = rd->a;
  diag_report(dl, D_LAYOUT_COST, at, NULL,
              "operand %s is contiguous along %s, which is not a single M, N or K index: it is loaded one "
              "element per copy instead of %d-element 16-byte cp.async chunks, about %dx the copy instructions "
              "and smaller memory transactions",
              o->tensor, rd->k == RX_READ && rd->nmap ? sx_str(A, rd->map[rd->nmap - 1]) : "?",
              16 / dtype_bytes(r->in[o->input].dt), 16 / dtype_bytes(r->in[o->input].dt));
}

const char *gpuir_ld_param(arena *A, const char *tensor) {
  return arena_printf(A, "ld%s", arena_lower_ident(A, tensor));
}

const sx *gpuir_stride(arena *A, const region_memref *m, int d) {
  if (m->rank == 2 && d == 0) return sx_param(A, gpuir_ld_param(A, m->name));
  const sx *s = sx_int(A, 1);
  for (int e = d + 1; e < m->rank; e++) s = sx_mul(A, s, m->shape[e]);
  return s;
}

const sx *gpuir_offset(arena *A, const region_memref *m, const sx *const *map) {
  const sx *o = sx_int(A, 0);
  for (int d = 0; d < m->rank; d++) o = sx_add(A, o, sx_mul(A, map[d], gpuir_stride(A, m, d)));
  return o;
}

typedef struct kshift {
  arena *A;
  const char *k;
} kshift;

static const sx *shift_k(void *ctx, sx_atom_kind kind, const char *name) {
  kshift *ks = ctx;
  if (kind == SXA_VAR && strcmp(name, ks->k) == 0) return sx_add_int(ks->A, sx_var(ks->A, name), 1);
  return NULL;
}

/* The operand's offset, when its read is a plain (possibly cast) read and no
 * pad guard of it reads one of the axes ax[0..n). */
const sx *operand_offset_free_of(arena *A, const region *r, const gpu_operand *o, const int *ax, int n) {
  const rexpr *sel = o->read, *rd = o->read;
  if (rd->k == RX_SELECT && !rd->a) rd = rd->b;
  if (rd->k == RX_UNARY && rd->op == TINY_CAST) rd = rd->a;
  if (rd->k != RX_READ) return NULL;
  if (sel->k == RX_SELECT && !sel->a)
    for (int g = 0; g < sel->ng; g++)
      for (int i = 0; i < n; i++)
        if (sx_mentions(sel->guards[g].e, SXA_VAR, r->it[ax[i]].name)) return NULL;
  const sx *off = gpuir_offset(A, &r->in[o->input], rd->map);
  return sx_has_overflow(off) ? NULL : off;
}

/* off(x + 1) - off(x), when that is free of every index (a floor, a modulo
 * or a product of x with another index leaves one in the difference). */
const sx *axis_step(arena *A, const sx *off, const char *x) {
  kshift ks = {A, x};
  const sx *d = sx_sub(A, sx_subst(A, off, shift_k, &ks), off);
  return sx_has_vars(d) ? NULL : d;
}

/* offset(x + 1) - offset(x) along axis x of the operand's read, when that is
 * free of every index and no pad guard of the operand reads x. */
const sx *operand_axis_step(arena *A, const region *r, const gpu_operand *o, int x) {
  const sx *off = operand_offset_free_of(A, r, o, &x, 1);
  return off ? axis_step(A, off, r->it[x].name) : NULL;
}

void vec_variants(gpu_kernel *k, int vmax) {
  if (k->plan.vec < vmax) vmax = k->plan.vec;
  if (vmax < 1) vmax = 1;
  for (int v = vmax; v >= 1; v /= 2) k->vecs[k->nvec++] = v;
}

/* The output store's predicate: each tail axis of the M, N and batch groups
 * against its extent ("m < M && n < N"). */
const char *tail_pred(arena *A, const gpu_view *v) {
  const char *pred = "";
  const int *groups[3] = {v->m_axes, v->n_axes, v->b_axes};
  const int ng[3] = {v->nm, v->nn, v->nb};
  for (int i = 0; i < v->ntail; i++)
    for (int g = 0; g < 3; g++)
      for (int j = 0; j < ng[g]; j++) {
        const region_axis *ax = &v->r->it[groups[g][j]];
        if (strcmp(ax->name, v->tail[i]) == 0)
          pred = arena_printf(A, "%s%s%s < %s", pred, *pred ? " && " : "", ax->name, sx_str(A, ax->size));
      }
  return *pred ? pred : "none";
}

const sx *subst_pick(void *ctx, sx_atom_kind kind, const char *name) {
  group_pick *gp = ctx;
  if (kind != SXA_VAR) return NULL;
  for (int i = 0; i < gp->n; i++)
    if (strcmp(gp->r->it[gp->ax[i]].name, name) == 0) return gp->one == i ? gp->ones : gp->zero;
  return NULL;
}

const sx *gpuir_flatten(arena *A, const region *r, const int *ax, int n, const sx *off, const char *flat) {
  if (n == 0) return off;
  for (int i = 0; i < r->niters; i++)
    if (strcmp(r->it[i].name, flat) == 0) return NULL;
  group_pick gp = {r, ax, n, -1, sx_int(A, 0), sx_int(A, 1)};
  const sx *off0 = sx_subst(A, off, subst_pick, &gp);
  const sx *rebuilt = off0, *s = NULL, *prod = sx_int(A, 1);
  for (int i = n - 1; i >= 0; i--) {
    gp.one = i;
    const sx *coef = sx_sub(A, sx_subst(A, off, subst_pick, &gp), off0);
    if (sx_has_vars(coef)) return NULL;
    if (!s) s = coef;
    if (!sx_equal(coef, sx_mul(A, s, prod))) return NULL;
    rebuilt = sx_add(A, rebuilt, sx_mul(A, coef, sx_var(A, r->it[ax[i]].name)));
    prod = sx_mul(A, prod, r->it[ax[i]].size);
  }
  if (!sx_equal(rebuilt, off) || sx_has_overflow(off)) return NULL;
  return sx_add(A, off0, sx_mul(A, s, sx_var(A, flat)));
}

/* x = rest + kpart, rest = x with the K axes at 0, kpart = x with every other
 * axis at 0, less x's constant; false when x is not that sum (a floor or
 * product that mixes the two). */
bool split_k(arena *A, const gpu_view *v, const sx *x, const sx **rest, const sx **kpart) {
  const region *r = v->r;
  int *others = ARENA_ARRAY(A, int, r->niters + r->nred + 1), no = 0;
  for (int i = 0; i < r->niters + r->nred; i++) {
    bool in_k = false;
    for (int j = 0; j < v->nk; j++) in_k |= v->k_axes[j] == i;
    if (!in_k) others[no++] = i;
  }
  group_pick gk = {r, v->k_axes, v->nk, -1, sx_int(A, 0), sx_int(A, 1)};
  group_pick go = {r, others, no, -1, sx_int(A, 0), sx_int(A, 1)};
  const sx *xr = sx_subst(A, x, subst_pick, &gk);
  const sx *xk = sx_subst(A, x, subst_pick, &go);
  const sx *x0 = sx_subst(A, xr, subst_pick, &go);
  xk = sx_sub(A, xk, x0);
  if (sx_has_overflow(x) || !sx_equal(x, sx_add(A, xr, xk))) return false;
  *rest = xr, *kpart = xk;
  return true;
}

/* The range of a K axis's value at a walking operand's counter: below its
 * extent, which is a constant or at most the flattened K (< 2^31 by the
 * dispatcher's check); nothing else (a dim that scales a K axis) is bounded. */
bool k_axis_range(void *ctx, sx_atom_kind kind, const char *name, int64_t *lo, int64_t *hi) {
  const gpu_view *v = ctx;
  if (kind != SXA_VAR) return false;
  for (int j = 0; j < v->nk; j++) {
    const region_axis *it = &v->r->it[v->k_axes[j]];
    if (strcmp(it->name, name)) continue;
    int64_t e;
    *lo = 0, *hi = sx_is_int(it->size, &e) ? e - 1 : INT32_MAX - 1;
    return *hi >= 0;
  }
  return false;
}

/* Whether every pad guard's K part of walking operand o fits the 32-bit test
 * (gpu_operand.g32). */
bool walk_guards_32(const gpu_view *v, const gpu_operand *o) {
  if (!o->walk || o->ng == 0) return false;
  for (int g = 0; g < o->ng; g++) {
    int64_t lo, hi;
    if (!sx_bounds(o->gk[g], k_axis_range, (void *)v, &lo, &hi) || lo < INT32_MIN || hi > INT32_MAX - 1) return false;
  }
  return true;
}

/* The width that takes the calls whose K-part span does not fit int32 bytes
 * (gpu_kernel.kpart32_fallback): the widest instantiated one below
 * steady_min_vec; 0 when there is none (the K parts then stay 64-bit). */
int kpart32_fallback(const gpu_kernel *k) {
  if (!k->steady_min_vec) return 0;
  for (int i = 0; i < k->nvec; i++)
    if (k->vecs[i] < k->steady_min_vec) return k->vecs[i];
  return 0;
}

const sx **gpuir_out_map(arena *A, const gpu_view *v) {
  const region *r = v->r;
  const region_memref *om = &r->out[v->out];
  const rexpr *ol = r->lets[v->out_let].e;
  const sx **omap = ARENA_ARRAY(A, const sx *, om->rank + 1);
  for (int d = 0; d < om->rank; d++) omap[d] = sx_var(A, r->it[ol->ax[d]].name);
  return omap;
}

static bool mentions_group(const region *r, const rexpr *rd, const int *ax, int n) {
  for (int d = 0; d < rd->nmap; d++)
    for (int i = 0; i < n; i++)
      if (sx_mentions(rd->map[d], SXA_VAR, r->it[ax[i]].name)) return true;
  return false;
}

/* Whether `map` indexes tensor m's unit-stride last dim with the single N
 * axis, and no other dim with it. */
static bool unit_along_n(arena *A, const gpu_view *v, const region_memref *m, const sx *const *map, int nmap) {
  if (v->nn != 1 || nmap == 0 || nmap != m->rank) return false;
  const char *nm = v->r->it[v->n_axes[0]].name;
  for (int d = 0; d < nmap - 1; d++)
    if (sx_mentions(map[d], SXA_VAR, nm)) return false;
  const char *last = sx_as_var(map[nmap - 1]);
  return last && strcmp(last, nm) == 0 && sx_equal(gpuir_stride(A, m, nmap - 1), sx_int(A, 1));
}

epi_read_kind gpuir_epi_read(arena *A, const gpu_view *v, const rexpr *rd) {
  const region *r = v->r;
  if (!mentions_group(r, rd, v->n_axes, v->nn)) return EPI_RD_ROW;
  if (!unit_along_n(A, v, &r->in[rd->input], rd->map, rd->nmap)) return EPI_RD_OTHER;
  return mentions_group(r, rd, v->m_axes, v->nm) ? EPI_RD_VEC : EPI_RD_COL;
}

/* Whether every Read of the post-reduce expression e has a full-width kind;
 * a Read under a pad guard has none (the guard may be what keeps it in
 * bounds). */
static bool epi_reads_ok(arena *A, const gpu_view *v, const rexpr *e, bool guarded) {
  if (!e) return true;
  if (e->k == RX_READ) return !guarded && gpuir_epi_read(A, v, e) != EPI_RD_OTHER;
  guarded |= e->k == RX_SELECT && !e->a;
  return epi_reads_ok(A, v, e->a, guarded) && epi_reads_ok(A, v, e->b, guarded) && epi_reads_ok(A, v, e->c, guarded);
}

/* The full-width epilogue's outputs a thread (0: none): one 16-byte store of
 * a row's consecutive N outputs, when the output runs with unit stride along
 * the single N axis, every epilogue Read has a full-width kind, and the
 * threads cover the staging tile in whole rows. */
int epi_vec(arena *A, const gpu_view *v, int BM, int BN, int threads) {
  const region *r = v->r;
  const region_memref *om = &r->out[v->out];
  if (v->out_dt != DT_FP16 && v->out_dt != DT_BF16 && v->out_dt != DT_FP32) return 0;
  if (!unit_along_n(A, v, om, gpuir_out_map(A, v), om->rank)) return 0;
  for (int l = 0; l < r->nlets; l++)
    if (r->lets[l].post_reduce && !epi_reads_ok(A, v, r->lets[l].e, false)) return 0;
  int ev = 16 / dtype_bytes(v->out_dt);
  if (BN % ev) return 0;
  int tpr = BN / ev;
  if (threads % tpr || BM % (threads / tpr)) return 0;
  return ev;
}

const sx *gpuir_epi_row_step(arena *A, const gpu_view *v, const region_memref *m, const sx *const *map) {
  const sx *off = gpuir_offset(A, m, map);
  if (sx_has_overflow(off)) return NULL;
  const sx *f = gpuir_flatten(A, v->r, v->m_axes, v->nm, off, "mflat");
  return f ? axis_step(A, f, "mflat") : NULL;
}

/* The row steps of the full-width epilogue's row reads under e (each VEC
 * or ROW read, once) appended to *txt as ", T +step"; false when one has
 * none. */
static bool epi_read_steps(arena *A, const gpu_view *v, const rexpr *e, const rexpr **seen, int *nseen,
                           const char **txt) {
  if (!e) return true;
  if (e->k == RX_READ) {
    epi_read_kind kind = gpuir_epi_read(A, v, e);
    if (kind != EPI_RD_VEC && kind != EPI_RD_ROW) return true;
    for (int i = 0; i < *nseen; i++) {
      bool same = seen[i]->input == e->input && seen[i]->nmap == e->nmap;
      for (int d = 0; same && d < e->nmap; d++) same = sx_equal(seen[i]->map[d], e->map[d]);
      if (same) return true;
    }
    seen[(*nseen)++] = e;
    const region_memref *m = &v->r->in[e->input];
    const sx *st = gpuir_epi_row_step(A, v, m, e->map);
    if (!st) return false;
    *txt = arena_printf(A, "%s, %s +%s", *txt, m->name, sx_str(A, st));
    return true;
  }
  return epi_read_steps(A, v, e->a, seen, nseen, txt) && epi_read_steps(A, v, e->b, seen, nseen, txt) &&
         epi_read_steps(A, v, e->c, seen, nseen, txt);
}

static int count_reads(const rexpr *e) {
  return e ? (e->k == RX_READ) + count_reads(e->a) + count_reads(e->b) + count_reads(e->c) : 0;
}

/* How the full-width epilogue moves from a thread's row to its next: its
 * row pointers step by fixed element counts (the flattened M index enters
 * every row tensor's offset affinely), or each row's addresses come from
 * its index. */
const char *epi_row_steps(arena *A, const gpu_view *v) {
  const region *r = v->r;
  const region_memref *om = &r->out[v->out];
  const sx *st = gpuir_epi_row_step(A, v, om, gpuir_out_map(A, v));
  const char *txt = st ? arena_printf(A, "row pointers step a row: %s +%s", om->name, sx_str(A, st)) : NULL;
  int n = 0, nseen = 0;
  for (int l = 0; l < r->nlets; l++)
    if (r->lets[l].post_reduce) n += count_reads(r->lets[l].e);
  const rexpr **seen = ARENA_ARRAY(A, const rexpr *, n + 1);
  for (int l = 0; txt && l < r->nlets; l++)
    if (r->lets[l].post_reduce && !epi_read_steps(A, v, r->lets[l].e, seen, &nseen, &txt)) txt = NULL;
  return txt ? txt : "each row's addresses from its index (a row tensor's offset is not affine in the flattened M index)";
}

/* Whether a thread can stream one operand's chunks at width `vec`: the tile
 * splits evenly over the threads, and into few enough chunks each (for a
 * walking operand, few enough words of per-chunk state). */
static bool operand_streams(const gpu_kernel *k, bool rhs, int vec) {
  int chunks = k->plan.tile[rhs ? 1 : 0] * k->plan.tile[2] / vec;
  /* a walking operand keeps one K column a thread */
  const gpu_operand *o = rhs ? &k->B : &k->A;
  if (o->walk && (vec < 2 || k->threads % (k->plan.tile[2] / vec))) return false;
  if (chunks % k->threads || chunks / k->threads > GPUIR_STREAM_CHUNKS) return false;
  return !o->walk || chunks / k->threads * (2 + (o->gmask ? 1 : 2 * o->ng)) <= GPUIR_WALK_REGS;
}

/* The narrowest instantiated width whose kernels run the steady loop, when
 * both operands advance by a fixed step; 0 when none does. */
int steady_min_vec(const gpu_kernel *k) {
  if (!(k->A.kstep || k->A.walk) || !(k->B.kstep || k->B.walk)) return 0;
  int min = 0;
  for (int i = 0; i < k->nvec; i++)
    if (operand_streams(k, false, k->vecs[i]) && operand_streams(k, true, k->vecs[i])) min = k->vecs[i];
    else break;
  return min;
}

const char *k_steps(arena *A, const gpu_kernel *k, int lo, int hi) {
  return lo == hi ? arena_printf(A, "%s step %d", k->mma_k == 8 ? "k8" : "k16", lo)
                  : arena_printf(A, "%s steps %d..%d", k->mma_k == 8 ? "k8" : "k16", lo, hi);
}

/* The warp tile's MMAs on the fragments of k steps lo..hi; `ahead`, on the
 * set loaded a tile ahead. */
void mmas(gpu_kernel *k, arena *A, int lo, int hi, bool ahead) {
  gpu_stmt *st = gpuir_push(k, A, GS_MMA,
                      k->mma_k == 8 ? "mma.sync.m16n8k8.row.col.f32.tf32.tf32.f32"
                                    : arena_printf(A, "mma.sync.m16n8k16.row.col.f32.%s", dtype_name(k->T)),
                      arena_printf(A, "warp tile %dx%d, %s%s", k->plan.tile[0] / k->plan.warps_m,
                                   k->plan.tile[1] / k->plan.warps_n, k_steps(A, k, lo, hi),
                                   ahead ? ", fragments loaded a tile ahead" : ""),
                      "tMMA", 0, NULL, NULL);
  st->lo = lo, st->hi = hi, st->ahead = ahead;
}

/* The widest width's kernels load step 0's fragments a tile ahead when
 * that width runs the steady loop in 16-byte chunks (the fewest chunk
 * pointers a thread), on fp16/bf16 operands, with two k steps a tile or
 * more, and at least GPUIR_AHEAD_MMAS MMAs a warp a k step (the 64x64 warp
 * tile).  The second fragment set costs 32 registers at that warp tile:
 * at the narrower widths (twice the chunk pointers) and in TF32
 * (fragments converted after the load) it spilled or lengthened the loop
 * when measured; the smaller warp tiles take fewer registers and run more
 * warps a scheduler to switch to across the barrier, and there the loop
 * grew by 0.1 to 0.6 instructions an MMA (docs/performance.md). */
int ahead_vec(const gpu_kernel *k) {
  int v = k->nvec ? k->vecs[0] : 0;
  int mmas = (k->plan.tile[0] / k->plan.warps_m / 16) * (k->plan.tile[1] / k->plan.warps_n / 8);
  /* steady_min_vec > 0: the widest width streams (steady_min_vec) */
  if (!k->steady_min_vec || v * dtype_bytes(k->T) != 16 || k->mma_k != 16 ||
      k->plan.tile[2] / k->mma_k < 2 || mmas < GPUIR_AHEAD_MMAS)
    return 0;
  return v;
}

/* CUDA's grid limits: 2^31 - 1 blocks on x, 65535 on y and z. */
static const int64_t GRID_LIMIT[3] = {2147483647, 65535, 65535};

/* A grid dimension that is a constant (every dim it reads bound at
 * generation time) over the device limit can never launch: E1708.  Symbolic
 * ones are checked by the entry point at run time. */
bool grid_fits(arena *A, const gpu_kernel *k, diag_list *dl, const char *at) {
  for (int d = 0; d < 3; d++) {
    int64_t v;
    if (sx_is_int(k->grid[d], &v) && v > GRID_LIMIT[d]) {
      diag_report(dl, D_GRID_LIMIT, at, NULL, "the launch grid needs %lld blocks on %c; CUDA allows %lld",
                  (long long)v, "xyz"[d], (long long)GRID_LIMIT[d]);
      return false;
    }
  }
  (void)A;
  return true;
}

/* ---- the sm90a contraction ---------------------------------------------------------- */

/* An sm90a skeleton's MbarInit: `which` barriers, each completing on
 * `arrivals` arrivals (and, for a full or Q barrier the TMA arms, its
 * bytes). */
void mbar_init(gpu_kernel *k, arena *A, gpu_mbar which, const char *what, int arrivals, const char *detail,
               const char *out) {
  gpu_stmt *s = gpuir_push(k, A, GS_MBAR_INIT, what, detail, out, 0, NULL, NULL);
  s->mbar = which, s->lo = arrivals;
}

/* A role's SetMaxNReg: the consumers' budget up, or the producer's down. */
void setmaxnreg(gpu_kernel *k, arena *A, bool consumers) {
  int regs = consumers ? k->consumer_regs : k->producer_regs;
  gpu_stmt *s = gpuir_push(k, A, GS_SETMAXNREG, consumers ? "setmaxnreg.inc" : "setmaxnreg.dec", arena_printf(A, "%d", regs),
                     NULL, 0, NULL, NULL);
  s->lo = regs, s->role = consumers ? GROLE_CONSUMERS : GROLE_PRODUCER;
}

/* Both producers: TMA boxes (tma_wgmma) or gathered cp.async chunks
 * (cp_async_wgmma); the consumers and the epilogue are the same. */

/* ---- attention ------------------------------------------------------------------- */

static bool let_is(const region *r, const rexpr *e, int *let) {
  while (e && (e->k == RX_BCAST || e->k == RX_TRANSPOSE)) e = e->a;
  if (!e || e->k != RX_LET) return false;
  *let = e->let;
  return true;
}

/* Finds the row softmax after the score lets in region 1 (see gpu_softmax). */
static bool find_softmax(const region *r, gpu_softmax *sm) {
  memset(sm, 0, sizeof *sm);
  sm->max = -1;
  for (int l = 0; l < r->nlets; l++) {
    const rexpr *e = r->lets[l].e;
    if (e->k == RX_REDUCE && e->rop == RED_MAX && e->nred == 1 && let_is(r, e->a, &sm->x)) {
      sm->max = l;
      sm->key_axis = e->red[0];
      sm->max_init = e->init;
      break;
    }
  }
  if (sm->max < 0) return false;
  /* sub = x - bcast(max); exp = exp2(sub); sum = Reduce(sum){exp}; div = exp / bcast(sum); p = cast(div) */
  int found = 0, a, b;
  for (int l = sm->max + 1; l < r->nlets; l++) {
    const rexpr *e = r->lets[l].e;
    if (found == 0 && e->k == RX_BINARY && e->op == TINY_SUB && let_is(r, e->a, &a) && a == sm->x &&
        let_is(r, e->b, &b) && b == sm->max)
      sm->sub = l, found++;
    else if (found == 1 && e->k == RX_UNARY && e->op == TINY_EXP2 && let_is(r, e->a, &a) && a == sm->sub)
      sm->exp = l, found++;
    else if (found == 2 && e->k == RX_REDUCE && e->rop == RED_SUM && e->nred == 1 && e->red[0] == sm->key_axis &&
             let_is(r, e->a, &a) && a == sm->exp)
      sm->sum = l, found++;
    else if (found == 3 && e->k == RX_BINARY && e->op == TINY_FDIV && let_is(r, e->a, &a) && a == sm->exp &&
             let_is(r, e->b, &b) && b == sm->sum)
      sm->div = l, found++;
    else if (found == 4 && e->k == RX_UNARY && e->op == TINY_CAST && let_is(r, e->a, &a) && a == sm->div)
      sm->p = l, sm->pt = e->dt, found++;
    else
      return false;
  }
  if (found == 4) sm->p = sm->div, sm->pt = r->lets[sm->div].e->dt, found++; /* P kept in fp32 */
  return found == 5;
}

/* A mask among the score lets: a Select whose predicate is one guard over
 * the innermost query axis and the key axis (affine, with params) and one of
 * whose branches is the row max's neutral, the element's removal.  1: `then`
 * removes (the guard removes), 2: `else` removes; 0: not such a mask. */
int gpuir_mask_kind(const gpu_kernel *k, const region *r, const rexpr *e, const ib_guard **gd) {
  int mq = k->v.m_axes[k->v.nm - 1], nk = k->v.n_axes[0];
  if (e->k != RX_SELECT || !e->a) return 0;
  const rexpr *pr = e->a;
  while (pr->k == RX_BCAST || pr->k == RX_TRANSPOSE) pr = pr->a;
  if (pr->k != RX_SELECT || pr->a || pr->ng != 1 || pr->b->k != RX_CONST || pr->c->k != RX_CONST) return 0;
  bool kill_then = e->b->k == RX_CONST && e->b->cval == k->sm.max_init && pr->b->cval != 0;
  bool kill_else = e->c->k == RX_CONST && e->c->cval == k->sm.max_init && pr->b->cval != 0;
  if (!kill_then && !kill_else) return 0;
  const sx *ge = pr->guards[0].e;
  if (!sx_is_affine(ge)) return 0;
  for (int t = 0; t < ge->nterms; t++) {
    const sx_atom *at = ge->terms[t].atom;
    if (at->kind == SXA_VAR && strcmp(at->name, r->it[mq].name) && strcmp(at->name, r->it[nk].name)) return 0;
    if (at->kind != SXA_VAR && at->kind != SXA_PARAM) return 0;
  }
  *gd = &pr->guards[0];
  return kill_then ? 1 : 2;
}

/* The online softmax of both attention rows, after the scores (tScore):
 * the running row max, the rescale of O and the row sum, and the
 * probabilities (tP). */
static void emit_online_softmax(gpu_kernel *k, arena *A, const region *r1) {
  gpuir_push(k, A, GS_EPILOGUE, "row_max", arena_printf(A, "%s: running max, quad shuffles", r1->lets[k->sm.max].name), "tMax", 1,
       "tScore", NULL)
      ->step = GSTEP_ROW_MAX;
  gpuir_push(k, A, GS_EPILOGUE, "rescale",
       arena_printf(A, "%s(%s) of the old and new max on O and the row sum", r1->lets[k->sm.exp].name,
                    r1->lets[k->sm.sub].name),
       "tRescale", 1, "tMax", NULL)
      ->step = GSTEP_RESCALE;
  gpuir_push(k, A, GS_EPILOGUE, "probabilities",
       arena_printf(A, "%s = %s(%s), an argument <= 0; %s += row sum", r1->lets[k->sm.exp].name, "ex2.approx.ftz",
                    r1->lets[k->sm.sub].name, r1->lets[k->sm.sum].name),
       "tP", 1, "tRescale", NULL)
      ->step = GSTEP_PROBS;
}

/* Whether the element offsets of a BM x BN tile keep mask mk's lane value
 * exact: |cm| BM + |cn| BN inside GPUIR_LANE_MASK_SPAN (cm out of it when
 * the lane holds a value per row). */
static bool lane_span_ok(const gpu_mask *mk, bool rows, int BM, int BN) {
  int64_t cm = rows ? 0 : mk->cm, cn = mk->cn;
  return cm <= GPUIR_LANE_MASK_SPAN && cm >= -GPUIR_LANE_MASK_SPAN && cn <= GPUIR_LANE_MASK_SPAN &&
         cn >= -GPUIR_LANE_MASK_SPAN && (cm < 0 ? -cm : cm) * BM + (cn < 0 ? -cn : cn) * BN < GPUIR_LANE_MASK_SPAN;
}

/* The masks of the score lets, and whether the tiles they touch test them
 * per lane (gpu_kernel.lane_mask): each guard affine in the innermost query
 * axis and the key axis, offsets within a tile inside GPUIR_LANE_MASK_SPAN.
 * When the rows flatten several query axes, 8 rows down is not 8 down the
 * axis the mask reads: the lane then evaluates each mask at each of its
 * rows (gpu_kernel.lane_rows), and only the key offset is added. */
static void attention_masks(gpu_kernel *k, const region *r) {
  int mq = k->v.m_axes[k->v.nm - 1], nk = k->v.n_axes[0];
  int BM = k->plan.tile[0], BN = k->plan.tile[1];
  k->nmasks = 0;
  k->lane_mask = true;
  k->lane_rows = k->v.nm > 1;
  for (int l = 0; l <= k->sm.x; l++) {
    const ib_guard *gd;
    int kind = l == r->acc_let ? 0 : gpuir_mask_kind(k, r, r->lets[l].e, &gd);
    if (!kind) continue;
    if (k->nmasks == GPUIR_MAX_MASKS) {
      k->lane_mask = false;
      continue;
    }
    gpu_mask *mk = &k->masks[k->nmasks++];
    mk->let = l, mk->kind = kind, mk->guard = gd, mk->cm = mk->cn = 0;
    for (int t = 0; t < gd->e->nterms; t++) {
      const sx_atom *at = gd->e->terms[t].atom;
      if (at->kind != SXA_VAR) continue;
      if (strcmp(at->name, r->it[mq].name) == 0) mk->cm += gd->e->terms[t].coef;
      else if (strcmp(at->name, r->it[nk].name) == 0) mk->cn += gd->e->terms[t].coef;
    }
    if (!lane_span_ok(mk, k->lane_rows, BM, BN)) k->lane_mask = false;
  }
  if (!k->nmasks) k->lane_rows = false;
  /* a lane's key offsets dn run along the one key axis */
  if (k->lane_rows && k->v.nn != 1) k->lane_mask = false;
}

/* sm80 attention: the two regions as the streaming skeleton takes them
 * (QK^T with the row softmax, then P V of its deferred P), into k: the
 * views, the softmax's lets, the head dims; false with a diagnostic when
 * they are not. */
static bool att_regions(gpu_kernel *k, arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                        const char *name, const char *at, diag_list *dl, int64_t *dp, int64_t *dvp) {
  if (rs->n != 2 || !pc->a[0].con.present || !pc->a[1].con.present) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL,
                "the attention skeleton takes two contraction regions (QK^T with the softmax, then P V)");
    return false;
  }
  const region *r1 = &rs->r[0], *r2 = &rs->r[1];
  k->attention = true;
  k->name = name;
  k->algo = ALGO_STREAMING_SOFTMAX;
  k->r = r1;
  k->a = &pc->a[0];
  k->plan = *p;
  view_of(A, &k->v, r1, &pc->a[0]);
  view_of(A, &k->v2, r2, &pc->a[1]);
  if (!find_softmax(r1, &k->sm)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL,
                "region %s does not end in the row softmax Reduce(max), exp2(x - max), Reduce(sum), division, cast "
                "that the streaming skeleton implements",
                r1->name);
    return false;
  }
  /* the score lets between QK^T and the softmax are pointwise */
  for (int l = 0; l <= k->sm.x; l++)
    if (l != r1->acc_let && !r1->lets[l].post_reduce) {
      diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "let %s before the softmax is not pointwise on QK^T", r1->lets[l].name);
      return false;
    }
  /* P V reads the deferred P at the same points; its epilogue is pointwise */
  const pc_contraction *c2 = &pc->a[1].con;
  if (r2->nyields != 1 || r2->out[r2->yields[0].output].materialize != MAT_GMEM || r1->nyields != 1 ||
      r1->out[r1->yields[0].output].materialize != MAT_DEFERRED ||
      r1->yields[0].let != k->sm.p || strcmp(r2->in[c2->lhs].name, r1->out[r1->yields[0].output].name) != 0) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "region %s must consume region %s's deferred P and store one output",
                r2->name, r1->name);
    return false;
  }
  for (int l = 0; l < r2->nlets; l++)
    if (l != r2->acc_let && !r2->lets[l].post_reduce) {
      diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "let %s after P V is not pointwise", r2->lets[l].name);
      return false;
    }
  k->v2.out = r2->yields[0].output;
  k->v2.out_let = r2->yields[0].let;
  k->v2.out_dt = r2->yields[0].cast;
  /* one query axis, one key axis, a K of region 1 that is the head dim */
  const gpu_view *v = &k->v;
  int64_t d, dv;
  /* the query group may hold several axes: grouped-query attention's query
   * heads that share a K/V head (K and V expanded over them) join the query
   * rows, and one block covers BM rows of the flattened group */
  if (v->nm < 1 || v->nn != 1 || v->nk != 1 || v->n_axes[0] != k->sm.key_axis || k->v2.nk != 1 || k->v2.nn != 1) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at,
                "Write K and V with one key axis and one head-dim axis (the last two), and Q with its query axis "
                "before the head dim; broadcast K and V over grouped query heads with Expand.",
                "the streaming skeleton needs one key axis and one head-dim axis; region %s has %d key and %d head-dim "
                "axes",
                r1->name, v->nn, v->nk);
    return false;
  }
  if (!sx_is_int(r1->it[v->k_axes[0]].size, &d) || !sx_is_int(r2->it[k->v2.n_axes[0]].size, &dv)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, "Bind the head dim with a manifest variant (e.g. \"D\": [64, 128]).",
                "the streaming skeleton needs head dims that are compile-time constants; here they are %s and %s",
                sx_str(A, r1->it[v->k_axes[0]].size), sx_str(A, r2->it[k->v2.n_axes[0]].size));
    return false;
  }
  if (d % 16 || dv % 16 || d < 16 || dv < 16 || d > 256 || dv > 256) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at,
                "Use head dims that are multiples of 16 from 16 to 256; for another head dim, zero-pad Q, K and V along "
                "it to the next multiple of 16 before the call (zero columns add nothing to QK^T), set attrs.scale to "
                "1/sqrt of the unpadded head dim, and drop O's padded columns.",
                "the streaming skeleton takes head dims that are multiples of 16 up to 256, not %lld / %lld", (long long)d,
                (long long)dv);
    return false;
  }
  *dp = d, *dvp = dv;
  return true;
}

/* sm80 attention's operands, dtype, launch and shared tiles; false with a
 * diagnostic when the operands are not the skeleton's. */
static bool att_setup(gpu_kernel *k, arena *A, const pc_report *pc, const sched_plan *p, const char *at, diag_list *dl) {
  const region *r1 = k->r, *r2 = k->v2.r;
  const pc_contraction *c2 = &pc->a[1].con;
  const gpu_view *v = &k->v;
  attention_masks(k, r1);
  operand_of(A, dl, at, r1, &pc->a[0].con, false, &k->A); /* Q */
  operand_of(A, dl, at, r1, &pc->a[0].con, true, &k->B);  /* K */
  operand_of(A, dl, at, r2, c2, true, &k->V);
  k->B.rstep = operand_axis_step(A, r1, &k->B, v->n_axes[0]);
  k->V.rstep = operand_axis_step(A, r2, &k->V, k->v2.k_axes[0]);
  if (k->B.rstep) k->B.rstep_str = sx_str(A, k->B.rstep);
  if (k->V.rstep) k->V.rstep_str = sx_str(A, k->V.rstep);
  k->T = r1->in[k->A.input].dt;
  if (k->T == DT_FP32) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at,
                "Compile the attention in fp16 or bf16: list \"fp16\" or \"bf16\" in the op's \"dtypes\" and convert Q, K "
                "and V before the call (the scores, the softmax and the PV sums stay fp32 in the kernel). fp32 "
                "operands compile for GEMM and convolution, on the tensor cores in TF32.",
                "the streaming skeleton has no fp32 (TF32) path: Q, K and V are fp32");
    return false;
  }
  if (!k->A.k_contig || !k->B.k_contig || k->V.k_contig || k->A.contig_axis < 0 || k->B.contig_axis < 0 ||
      k->V.contig_axis < 0 || k->T != r1->in[k->B.input].dt || k->T != r2->in[k->V.input].dt ||
      (k->T != DT_FP16 && k->T != DT_BF16) || (k->sm.pt != k->T && k->sm.pt != DT_FP32)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL,
                "the streaming skeleton takes fp16 or bf16 Q, K, V of one dtype, contiguous along the head dim, and "
                "P in that dtype or fp32");
    return false;
  }
  vec_variants(k, k->A.vec_max);
  k->threads = 128;
  int BM = p->tile[0], BN = p->tile[1];
  int ring = (BM * k->D + 2 * BN * (k->D + k->DV)) * dtype_bytes(k->T), stage = BM * (k->DV + 8) * 4;
  k->smem = ring > stage ? ring : stage;
  int eb = dtype_bytes(k->T);
  int end = add_tile(k, "smQ", 0, 1, BM, k->D, eb);
  end = add_tile(k, "smK", end, 2, BN, k->D, eb);
  add_tile(k, "smV", end, 2, BN, k->DV, eb);
  k->grid[0] = sx_ceildiv_int(A, gpuir_extent(A, r1, v->m_axes, v->nm), BM);
  k->grid[1] = gpuir_extent(A, r1, v->b_axes, v->nb);
  k->grid[2] = sx_int(A, 1);
  return grid_fits(A, k, dl, at);

}

/* sm80 attention's statements before the key tiles: the tile, Q's copy
 * and fragments, the lanes' hoisted offsets and pointers. */
static void att_prologue(gpu_kernel *k, arena *A, const sched_plan *p) {
  const region *r1 = k->r;
  int BM = p->tile[0], BN = p->tile[1];
  gpuir_push(k, A, GS_TILE_COORD, "m0 <- blockIdx.x x BM; batch <- blockIdx.y",
       arena_printf(A, "%d query rows; the key tiles up to the last one some row of the tile keeps (Op::tile_live)", BM),
       NULL, 0, NULL, NULL);
  gpuir_push(k, A, GS_ALLOC_SHARED, "smQ", arena_printf(A, "%s [%d][%d], 16B chunks xor %d", dtype_name(k->T), BM, k->D, k->tiles[0].swz),
       NULL, 0, NULL, NULL)
      ->side = GSIDE_A;
  gpuir_push(k, A, GS_ALLOC_SHARED, "smK,smV",
       arena_printf(A, "%s [2][%d][%d] and [2][%d][%d] ring, 16B chunks xor %d and %d", dtype_name(k->T), BN, k->D, BN,
                    k->DV, k->tiles[1].swz, k->tiles[2].swz),
       NULL, 0, NULL, NULL)
      ->side = GSIDE_B;
  gpuir_push(k, A, GS_ACC_ZERO, "O, row max, row sum",
       arena_printf(A, "fp32: a warp's 16 x %d of O, and each lane's two rows' max (%s's init) and sum", k->DV,
                    r1->lets[k->sm.max].name),
       NULL, 0, NULL, NULL);
  gpuir_push(k, A, GS_CP_ASYNC, arena_printf(A, "smQ <- %s", k->A.tensor), "query rows m0..m0+BM, pred tails", "tQ", 0, NULL, NULL)
      ->side = GSIDE_A;
  gpuir_push(k, A, GS_COMMIT, "cp.async.commit_group", NULL, NULL, 1, "tQ", NULL);
  gpuir_push(k, A, GS_WAIT, "cp.async.wait_group", "0", NULL, 1, "tQ", NULL)->lo = 0;
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "the Q tile landed", NULL, 0, NULL, NULL);
  if (p->a_frag_regs)
    gpuir_push(k, A, GS_LDMATRIX, "ldmatrix.x4", "smQ: Q fragments (once, kept in registers)", NULL, 1, "tQ", NULL)->side =
        GSIDE_A;
  gpuir_push(k, A, GS_FRAG_SETUP, "K fragment lane offsets", "the lane's ldmatrix offset of each k16 step of QK^T, hoisted",
       NULL, 0, NULL, NULL)
      ->side = GSIDE_B;
  gpuir_push(k, A, GS_FRAG_SETUP, "V fragment lane offsets", "the lane's ldmatrix.trans offset of each pair of O's n8 tiles, hoisted",
       NULL, 0, NULL, NULL)
      ->side = GSIDE_V;
  bool stream = k->B.rstep && k->V.rstep;
  if (k->lane_mask && k->lane_rows)
    gpuir_push(k, A, GS_ADDR_SETUP, "lane_rows",
         "per lane, once: each mask's guard - its bounds at each of its rows (m, m + 8; the rows flatten the query axes) "
         "and key 0, in 64 bits",
         "tRows", 0, NULL, NULL)
        ->side = GSIDE_A;
  if (stream)
    gpuir_push(k, A, GS_ADDR_SETUP, arena_printf(A, "%s, %s row pointers", k->B.tensor, k->V.tensor),
         arena_printf(A, "per thread, key 0 of its chunk rows; row steps %s, %s", k->B.rstep_str, k->V.rstep_str), NULL, 0,
         NULL, NULL)
        ->side = GSIDE_B;
}

/* The prose of sm80 attention's mask tests, for the dump. */
static const char *att_mask_prose(const gpu_kernel *k, arena *A) {
  const region *r1 = k->r;
  const char *masks = "";
  for (int i = 0; i < k->nmasks; i++) {
    const gpu_mask *mk = &k->masks[i];
    const char *off = "";
    const int64_t cf[2] = {k->lane_rows ? 0 : mk->cm, mk->cn};
    for (int a = 0; a < 2; a++)
      if (cf[a])
        off = arena_printf(A, "%s %c %s%s", off, cf[a] < 0 ? '-' : '+',
                           cf[a] == 1 || cf[a] == -1 ? "" : arena_printf(A, "%lld * ", (long long)(cf[a] < 0 ? -cf[a] : cf[a])),
                           a ? "dn" : "dm");
    masks = arena_printf(A, "%s%s%s removed where its guard %s at the lane's value%s", masks, i ? "; " : "",
                         r1->lets[mk->let].name, mk->kind == 1 ? "holds" : "fails", off);
  }
  return masks;
}

/* One of sm80 attention's three passes over the key tiles (0 the full
 * ones, 1 the masked ones inside the keys, 2 the key tail): its first
 * tile's copy, then the loop (copy ahead, QK^T, the score lets and the
 * online softmax, P V). */
static void att_key_pass(gpu_kernel *k, arena *A, const sched_plan *p, int pass, bool stream, const char *masks) {
  const region *r1 = k->r, *r2 = k->v2.r;
  const char *tok = pass == 0 ? "tKVf" : pass == 1 ? "tKVm" : "tKVt";
  const char *kv = arena_printf(A, "%s, %s", k->B.tensor, k->V.tensor);
  const char *how = !stream    ? "pred tails"
                    : pass < 2 ? "row pointers + tile * BN * row step, whole chunks"
                               : "row pointers + tile * BN * row step, rows past the keys zero-filled";
  /* the pass's first tile, into the stage the last pass left free */
  gpu_stmt *st = gpuir_push(k, A, GS_CP_ASYNC, arena_printf(A, "smK, smV[st] <- %s", kv),
                      arena_printf(A, "the pass's first key tile if any: %s", how), arena_printf(A, "%s[first]", tok), 0,
                      NULL, NULL);
  st->side = GSIDE_B, st->lo = pass;
  gpuir_push(k, A, GS_COMMIT, "cp.async.commit_group", NULL, NULL, 1, arena_printf(A, "%s[first]", tok), NULL);
  st = gpuir_push(k, A, GS_LOOP, "t",
            pass == 0 ? "full key tiles first (Op::tile_full: no mask removes anything; inside the keys)"
            : pass == 1 ? "masked key tiles inside the keys (Op::tile_live and not Op::tile_full: the mask predicate's "
                          "affine bound)"
                        : "the live key tile past the key length (the key tail)",
            NULL, 0, NULL, NULL);
  st->loop = GLOOP_KEYS, st->lo = pass;
  st = gpuir_push(k, A, GS_CP_ASYNC, arena_printf(A, "smK, smV[next%%2] <- %s", kv),
            arena_printf(A, "the pass's next key tile if any: %s", how), arena_printf(A, "%s[next]", tok), 0, NULL, NULL);
  st->side = GSIDE_B, st->lo = pass, st->tile = 1;
  gpuir_push(k, A, GS_COMMIT, "cp.async.commit_group", NULL, NULL, 1, arena_printf(A, "%s[next]", tok), NULL);
  gpuir_push(k, A, GS_WAIT, "cp.async.wait_group", "1", NULL, 1, arena_printf(A, "%s[t]", tok), NULL)->lo = 1;
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "tile t landed", NULL, 0, NULL, NULL);
  if (!p->a_frag_regs)
    gpuir_push(k, A, GS_LDMATRIX, "ldmatrix.x4", "smQ: Q fragments (each key tile)", NULL, 1, "tQ", NULL)->side = GSIDE_A;
  gpuir_push(k, A, GS_LDMATRIX, "ldmatrix.x4", "smK[t%2]: K^T fragments", NULL, 1, arena_printf(A, "%s[t]", tok), NULL)->side =
      GSIDE_B;
  gpuir_push(k, A, GS_MMA, arena_printf(A, "mma.sync.m16n8k16 S = Q K^T (%s)", r1->lets[r1->acc_let].name), "16 rows per warp",
       "tS", 0, NULL, NULL)
      ->side = GSIDE_B;
  const char *score = "";
  for (int l = 0; l <= k->sm.x; l++)
    if (l != r1->acc_let) score = arena_printf(A, "%s%s%s", score, *score ? ", " : "", r1->lets[l].name);
  const char *tail = pass == 2 ? arena_printf(A, "; key tails -> %s's neutral", r1->lets[k->sm.max].name) : "";
  if (pass == 0)
    gpuir_push(k, A, GS_EPILOGUE, "score_full",
         arena_printf(A, "lets: %s, each mask its kept branch; no per-element test", *score ? score : "(none)"), "tScore",
         1, "tS", NULL)
        ->step = GSTEP_SCORE_FULL;
  else if (!k->lane_mask)
    gpuir_push(k, A, GS_EPILOGUE, "score", arena_printf(A, "lets: %s, masks at each element's indices%s", *score ? score : "(none)", tail),
         "tScore", 1, "tS", NULL)
        ->step = GSTEP_SCORE;
  else {
    if (k->lane_rows)
      gpuir_push(k, A, GS_EPILOGUE, "lane_mask",
           arena_printf(A, "per lane at each of its rows and its first key n: lane_rows + key coefficient * n, "
                           "clamped to 32 bits%s",
                        pass == 2 ? "; keys left from n" : ""),
           arena_printf(A, "tLane%d", pass), 1, "tRows", NULL)
          ->step = GSTEP_LANE_MASK;
    else
      gpuir_push(k, A, GS_EPILOGUE, "lane_mask",
           arena_printf(A, "per lane at its first element (m, n): %s%s",
                        k->nmasks ? "each mask's guard - its bounds, clamped to 32 bits" : "no masks",
                        pass == 2 ? "; keys left from n" : ""),
           arena_printf(A, "tLane%d", pass), 0, NULL, NULL)
          ->step = GSTEP_LANE_MASK;
    gpuir_push(k, A, GS_EPILOGUE, "score_lane",
         arena_printf(A, "lets: %s; each element (dm, dn) of the lane's fragments: %s%s",
                      *score ? score : "(none)", *masks ? masks : "no masks", tail),
         "tScore", 2, "tS", arena_printf(A, "tLane%d", pass))
        ->step = GSTEP_SCORE_LANE;
  }
  emit_online_softmax(k, A, r1);
  gpuir_push(k, A, GS_EPILOGUE, "P fragments",
       k->sm.pt == DT_FP32
           ? arena_printf(A, "%s: fp32 P as hi + lo %s A fragments in registers (deferred; two mma per step)",
                          r1->lets[k->sm.p].name, dtype_name(k->T))
           : arena_printf(A, "%s: cvt to %s A fragments in registers (deferred)", r1->lets[k->sm.p].name,
                          dtype_name(k->sm.pt)),
       "tPf", 1, "tP", NULL)
      ->step = GSTEP_P_FRAGS;
  gpuir_push(k, A, GS_LDMATRIX, "ldmatrix.x4.trans", "smV[t%2]: V fragments", NULL, 1, arena_printf(A, "%s[t]", tok), NULL)
      ->side = GSIDE_V;
  gpuir_push(k, A, GS_MMA, arena_printf(A, "mma.sync.m16n8k16 O += P V (%s)", r2->lets[r2->acc_let].name), NULL, "tO", 1,
       "tPf", NULL)
      ->side = GSIDE_V;
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "stage t%2 free", NULL, 0, NULL, NULL);
  gpuir_push(k, A, GS_END_LOOP, "t", NULL, NULL, 0, NULL, NULL);
}

/* sm80 attention's statements after the key tiles: the row sums, O / l,
 * the staging tile and the two epilogue/store pairs. */
static void att_epilogue(gpu_kernel *k, arena *A, const sched_plan *p) {
  const region *r2 = k->v2.r, *r1 = k->r;
  int BM = p->tile[0];
  /* the staging tile reuses Q's tile and the ring: no copy left in flight,
   * and every warp past its last fragment load (a query tile no pass gives
   * a key tile has run no loop barrier since Q's) */
  gpuir_push(k, A, GS_WAIT, "cp.async.wait_group", "0", NULL, 0, NULL, NULL)->lo = 0;
  gpuir_push(k, A, GS_REDUCE, arena_printf(A, "sum %s", r1->lets[k->sm.sum].name),
       "each row's sum over the quad of lanes that share it: shfl.bfly 1, 2", "tL", 1, "tO", NULL);
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "Q's tile and the ring are free for the staging tile", NULL, 0, NULL, NULL);
  gpuir_push(k, A, GS_EPILOGUE, "finish", arena_printf(A, "%s: O / row sum", r1->lets[k->sm.div].name), "tFin", 2, "tO", "tL")
      ->step = GSTEP_FINISH;
  gpuir_push(k, A, GS_STAGE_ACC, "st.shared.v2.f32", arena_printf(A, "O -> stage[%d][%d+8] fp32", BM, k->DV), "tStage", 1, "tFin",
       NULL);
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "staging tile complete", NULL, 0, NULL, NULL);
  /* the full-width epilogue over the BM x DV staging tile of O, as for a contraction */
  k->epi_vec = epi_vec(A, &k->v2, BM, k->DV, k->threads);
  if (k->epi_vec) {
    gpuir_push(k, A, GS_EPILOGUE, r2->lets[r2->acc_let].name,
         arena_printf(A, "tensors %d-element aligned, rows up to the queries: the P V region's post-reduce lets; "
                         "%d outputs a thread at a fixed column; %s",
                      k->epi_vec, k->epi_vec, epi_row_steps(A, &k->v2)),
         "tEfull", 1, "tStage", NULL)
        ->full = true;
    gpuir_push(k, A, GS_ST_GLOBAL,
         arena_printf(A, "st.global.v4.b32 (%d x %s) -> %s", k->epi_vec, dtype_name(k->v2.out_dt), r2->out[k->v2.out].name),
         "no column predicate; rows past the queries skipped", NULL, 1, "tEfull", NULL)
        ->full = true;
  }
  gpuir_push(k, A, GS_EPILOGUE, r2->lets[r2->acc_let].name,
       k->epi_vec ? "other tiles: the P V region's post-reduce lets" : "the P V region's post-reduce lets", "tE", 1,
       "tStage", NULL);
  gpuir_push(k, A, GS_ST_GLOBAL,
       arena_printf(A, "st.global.v2.b32 (4 x %s) -> %s", dtype_name(k->v2.out_dt), r2->out[k->v2.out].name),
       arena_printf(A, "pred tails (%s)", tail_pred(A, &k->v2)), NULL, 1, "tE", NULL);
}

gpu_kernel *gpuir_build_attention(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                                  const char *name, diag_list *dl) {
  const char *at = arena_printf(A, "GPU IR[%s]", rs->n ? rs->r[0].name : "?");
  gpu_kernel *k = ARENA_NEW(A, gpu_kernel);
  int64_t d, dv;
  if (!att_regions(k, A, rs, pc, p, name, at, dl, &d, &dv)) return NULL;
  k->D = (int)d, k->DV = (int)dv;
  if (!att_setup(k, A, pc, p, at, dl)) return NULL;
  att_prologue(k, A, p);
  /* three passes over the key tiles: the full ones (tile_full, inside the
   * keys), the masked ones inside the keys (the diagonal), then the key
   * tail; each pays only for the tests it needs */
  const char *masks = att_mask_prose(k, A);
  bool stream = k->B.rstep && k->V.rstep;
  for (int pass = 0; pass < 3; pass++) att_key_pass(k, A, p, pass, stream, masks);
  att_epilogue(k, A, p);
  return k;  /* run_stages verifies it */
}

/* ---- sm90a attention (wgmma_softmax) -------------------------------------------------- */

/* Whether Read rd of region r is what one tensor map describes (gpu_tmap):
 * a plain Read of a signature tensor of rank 2 to 5 whose last index is
 * the head-dim axis `col`, one index the row axis `row`, and every other an
 * axis of the batch group or a constant.  Fills *tm (rows left 0). */
static bool att_tmap_of(const region *r, const rexpr *rd, int row, int col, const int *b_axes, int nb, gpu_tmap *tm) {
  if (!rd || rd->k != RX_READ || rd->ldvar) return false;
  const region_memref *m = &r->in[rd->input];
  if (!m->signature || m->rank < 2 || m->rank > GPUIR_TMAP_RANK || rd->nmap != m->rank) return false;
  const char *last = sx_as_var(rd->map[m->rank - 1]);
  if (!last || strcmp(last, r->it[col].name) != 0) return false;
  int row_dim = -1;
  for (int d = 0; d + 1 < m->rank; d++) {
    int64_t cst;
    const char *x = sx_as_var(rd->map[d]);
    if (!x) {
      if (!sx_is_int(rd->map[d], &cst) || cst < 0) return false;
      continue;
    }
    if (strcmp(x, r->it[row].name) == 0) {
      if (row_dim >= 0) return false;
      row_dim = d;
      continue;
    }
    bool batch = false;
    for (int i = 0; i < nb; i++) batch |= strcmp(x, r->it[b_axes[i]].name) == 0;
    if (!batch) return false;
  }
  if (row_dim < 0) return false;
  *tm = (gpu_tmap){r->in[rd->input].name, r, m, rd->map, m->rank, row_dim, 0, row, col};
  return true;
}

bool gpuir_sm90a_attention_fits(const region_set *rs, const pc_report *pc, const char **why) {
  *why = NULL;
  int64_t d = 0, dv = 0;
  if (rs->n != 2 || !pc->a[0].con.present || !pc->a[1].con.present || pc->a[0].con.nk != 1 || pc->a[1].con.nn != 1) {
    *why = "not two contraction regions with one head-dim axis each";
    return false;
  }
  const region *r1 = &rs->r[0], *r2 = &rs->r[1];
  const pc_contraction *c1 = &pc->a[0].con, *c2 = &pc->a[1].con;
  gpu_tmap tm;
  if (!sx_is_int(r1->it[c1->k_axes[0]].size, &d) || !sx_is_int(r2->it[c2->n_axes[0]].size, &dv))
    *why = "the head dims are not compile-time constants";
  else if ((d != 64 && d != 128) || (dv != 64 && dv != 128))
    *why = "the head dims are not 64 or 128 (whole 128-byte swizzle rows; wgmma N for P V)";
  else if (r1->in[c1->lhs].dt != r1->in[c1->rhs].dt || r1->in[c1->lhs].dt != r2->in[c2->rhs].dt ||
           (r1->in[c1->lhs].dt != DT_FP16 && r1->in[c1->lhs].dt != DT_BF16))
    *why = "Q, K and V are not all fp16 or all bf16";
  else if (c1->nm != 1 || c1->nn != 1 || c2->nk != 1)
    *why = "the queries or the keys are not one axis (a tensor map's box takes one row dim)";
  else if (!att_tmap_of(r1, c1->lhs_read, c1->m_axes[0], c1->k_axes[0], c1->b_axes, c1->nb, &tm))
    *why = "Q is not read as a signature tensor Q[batch..., query, head dim] (rank 2 to 5) that a tensor map describes";
  else if (!att_tmap_of(r1, c1->rhs_read, c1->n_axes[0], c1->k_axes[0], c1->b_axes, c1->nb, &tm))
    *why = "K is not read as a signature tensor K[batch..., key, head dim] (rank 2 to 5) that a tensor map describes";
  else if (!att_tmap_of(r2, c2->rhs_read, c2->k_axes[0], c2->n_axes[0], c2->b_axes, c2->nb, &tm))
    *why = "V is not read as a signature tensor V[batch..., key, head dim] (rank 2 to 5) that a tensor map describes";
  return *why == NULL;
}

/* The sm80 row's view, operands, softmax and epilogue (gpuir_build_attention),
 * then this row's launch, shared layout and statements. */
/* The sm90a attention's statements, in groups: the setup (tile, shared
 * tiles, barriers), the producer (Q once, then K and V of each live key
 * tile through the ring), and the consumers' statements before their key
 * tiles and at each of them (pass 0 the full tiles, 1 the other live
 * ones): the ping-pong turn, S = Q K^T, the score lets and the online
 * softmax, O += P V, the slot's release. */
static void att90_setup(gpu_kernel *k, arena *A, const sched_plan *p, const char *batch) {
  int BM = p->tile[0], BN = p->tile[1], S = p->stages, D = k->D, DV = k->DV, eb = dtype_bytes(k->T);
  const char *T = dtype_name(k->T);
  gpuir_push(k, A, GS_TILE_COORD, "(m.o, batch) <- (blockIdx.x, blockIdx.y)",
       arena_printf(A, "%d query rows of batch %s; key tiles up to the last one the mask leaves anything of "
                       "(Op::tile_live)",
                    BM, batch),
       NULL, 0, NULL, NULL);
  gpuir_push(k, A, GS_ALLOC_SHARED, "smQ",
       arena_printf(A, "%s [%d][%d][64] (%d column blocks of %d query rows x 128 bytes), %d TMA boxes {64, %d}, 128B swizzle",
                    T, D / 64, BM, D / 64, BM, D / 64, BM),
       NULL, 0, NULL, NULL)->side = GSIDE_A;
  gpuir_push(k, A, GS_ALLOC_SHARED, "smK,smV",
       arena_printf(A, "%s [%d][%d][%d][64] and [%d][%d][%d][64] ring (keys x 128-byte blocks of D and DV), TMA boxes "
                       "{64, %d}, 128B swizzle",
                    T, S, D / 64, BN, S, DV / 64, BN, BN),
       NULL, 0, NULL, NULL)->side = GSIDE_B;
  mbar_init(k, A, GMBAR_Q, "qfull", 1, arena_printf(A, "1 arrival + the Q tile's %d bytes", BM * D * eb), NULL);
  mbar_init(k, A, GMBAR_FULL, "full[s]", 1,
            arena_printf(A, "%d slots, 1 arrival + the stage's %d bytes", S, BN * (D + DV) * eb), NULL);
  mbar_init(k, A, GMBAR_EMPTY, "empty[s]", 256,
            arena_printf(A, "%d slots, 256 arrivals (every consumer thread); a fresh slot is free (parity 1 completes)", S),
            "tFree[i]");
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "the barriers are initialized", NULL, 0, NULL, NULL);
}

static void att90_producer(gpu_kernel *k, arena *A, const sched_plan *p, const char *batch) {
  int BM = p->tile[0], BN = p->tile[1], S = p->stages, D = k->D, DV = k->DV, eb = dtype_bytes(k->T);
  /* the producer: Q once, then K and V of every live key tile, in the
   * consumers' order, through the ring (i counts the tiles of both passes) */
  gpuir_push(k, A, GS_ROLE, "producer", "warpgroup 0; one elected lane of warp 0 issues the copies", NULL, 0, NULL, NULL)
      ->role = GROLE_PRODUCER;
  setmaxnreg(k, A, false);
  gpuir_push(k, A, GS_MBAR_ARRIVE, "qfull",
       arena_printf(A, "arrive.expect_tx: the Q tile's %d bytes, which its boxes complete", BM * D * eb), NULL, 0, NULL,
       NULL)
      ->mbar = GMBAR_Q;
  gpuir_push(k, A, GS_TMA_LOAD, arena_printf(A, "smQ <- %s", k->A.tensor),
       arena_printf(A, "%d boxes {64, %d} of a rank-%d map at (64 j, m.o * %d, batch %s); past the queries: zero fill",
                    D / 64, BM, k->tmq.rank, BM, batch),
       "tQ", 0, NULL, NULL)->side = GSIDE_A;
  /* pass 0 (lo): the full key tiles, pass 1 the other live ones */
  for (int pass = 0; pass < 2; pass++) {
    const char *tk = pass ? "tKm[t]" : "tKf[t]", *tv = pass ? "tVm[t]" : "tVf[t]";
    gpuir_push(k, A, GS_LOOP, "t",
         pass ? "the other live key tiles (Op::tile_live: the mask predicate's affine bound)"
              : "full key tiles first (Op::tile_full: no mask removes anything; inside the keys)",
         NULL, 0, NULL, NULL)->lo = pass;
    gpuir_push(k, A, GS_MBAR_WAIT, "empty[i % S]", "parity ((i / S) & 1) ^ 1: the consumers released the slot", NULL, 1,
         "tFree[i]", NULL)
        ->mbar = GMBAR_EMPTY;
    gpuir_push(k, A, GS_MBAR_ARRIVE, "full[i % S]",
         arena_printf(A, "arrive.expect_tx: the stage's %d bytes, which the K and V boxes complete", BN * (D + DV) * eb),
         NULL, 0, NULL, NULL)
        ->mbar = GMBAR_FULL;
    gpuir_push(k, A, GS_TMA_LOAD, arena_printf(A, "smK[i%%%d] <- %s", S, k->B.tensor),
         arena_printf(A, "%d boxes {64, %d} of a rank-%d map at (64 j, t * %d, batch %s)%s", D / 64, BN, k->tmk.rank, BN,
                      batch, pass ? "; past the keys: zero fill" : ""),
         tk, 0, NULL, NULL)->side = GSIDE_B;
    gpuir_push(k, A, GS_TMA_LOAD, arena_printf(A, "smV[i%%%d] <- %s", S, k->V.tensor),
         arena_printf(A, "%d boxes {64, %d} of a rank-%d map at (64 j, t * %d, batch %s)%s", DV / 64, BN, k->tmv.rank, BN,
                      batch, pass ? "; past the keys: zero fill" : ""),
         tv, 0, NULL, NULL)->side = GSIDE_V;
    gpuir_push(k, A, GS_END_LOOP, "t", NULL, NULL, 0, NULL, NULL);
  }
}

static void att90_consumers_head(gpu_kernel *k, arena *A, const sched_plan *p) {
  const region *r1 = k->r;
  int BM = p->tile[0], BN = p->tile[1], D = k->D;
  /* the consumers */
  gpuir_push(k, A, GS_ROLE, "consumers",
       arena_printf(A, "warpgroups 1 and 2 (wg 0 and 1 of the consumers): rows 64 wg .. 64 wg + 63 of the %d-row tile, 16 "
                       "a warp",
                    BM),
       NULL, 0, NULL, NULL)
      ->role = GROLE_CONSUMERS;
  setmaxnreg(k, A, true);
  gpuir_push(k, A, GS_FRAG_SETUP, "wgmma descriptors of smQ, smK and smV",
       arena_printf(A, "Q's at each of its %d k16 steps, at the warpgroup's 64 rows (+ 64 wg x 128 bytes); K's and V's "
                       "low words at slot 0 (K-major, and V MN-major with LBO %d); SBO 1024, 128B swizzle",
                    D / 16, BN * 128),
       NULL, 0, NULL, NULL);
  gpuir_push(k, A, GS_ACC_ZERO, "O", arena_printf(A, "O <- 0; each lane's rows: %s <- its init, %s <- 0", r1->lets[k->sm.max].name,
                                            r1->lets[k->sm.sum].name),
       NULL, 0, NULL, NULL);
  gpuir_push(k, A, GS_MBAR_WAIT, "qfull", "parity 0: the Q boxes landed", NULL, 1, "tQ", NULL)->mbar = GMBAR_Q;
  gpuir_push(k, A, GS_BARRIER, "bar.arrive 2, 256", "wg 1 only: wg 0 takes the tensor cores first", NULL, 0, NULL, NULL)->bar =
      GBAR_FIRST_TURN;
}

static void att90_key_tiles(gpu_kernel *k, arena *A, const sched_plan *p, const region *r2, int pass, const char *score) {
  const region *r1 = k->r;
  int BN = p->tile[1], D = k->D, DV = k->DV;
  const char *T = dtype_name(k->T);
  const char *tk = pass ? "tKm[t]" : "tKf[t]", *tv = pass ? "tVm[t]" : "tVf[t]";
  gpuir_push(k, A, GS_LOOP, "t", pass ? "the other live key tiles, as the producer" : "full key tiles first, as the producer",
       NULL, 0, NULL, NULL)->lo = pass;
  gpuir_push(k, A, GS_MBAR_WAIT, "full[i % S]", "parity (i / S) & 1: the K and V boxes landed", NULL, 2, tk, tv)->mbar =
      GMBAR_FULL;
  gpuir_push(k, A, GS_BARRIER, "bar.sync 2 + wg, 256", "ping-pong: this warpgroup's turn (the other issued its S)", NULL, 0,
       NULL, NULL)->bar = GBAR_TURN;
  gpuir_push(k, A, GS_WGMMA,
       arena_printf(A, "wgmma.mma_async.m64n%dk16.f32.%s.%s x %d: S = Q K^T (%s)", BN, T, T, D / 16,
                    r1->lets[r1->acc_let].name),
       "SS: Q and K K-major; descriptors 128B swizzle, SBO 1024, k16 step 32 bytes (a column block every 4)", "tS", 2,
       "tQ", tk)
      ->side = GSIDE_B;
  gpuir_push(k, A, GS_BARRIER, "bar.arrive 2 + (wg ^ 1), 256",
       "ping-pong: the other warpgroup's turn, while this one waits for S and runs the softmax", NULL, 0, NULL, NULL)
      ->bar = GBAR_HAND_OFF;
  gpuir_push(k, A, GS_WGMMA_WAIT, "wgmma.commit_group; wgmma.wait_group 0", "S is complete in the accumulators", NULL, 1, "tS",
       NULL)
      ->lo = 0;
  gpuir_push(k, A, GS_EPILOGUE, pass ? "score" : "score_full",
       pass ? arena_printf(A, "lets: %s; key tails -> %s's neutral", *score ? score : "(none)", r1->lets[k->sm.max].name)
            : arena_printf(A, "lets: %s, each mask its kept branch; no per-element test", *score ? score : "(none)"),
       "tScore", 1, "tS", NULL)
      ->step = pass ? GSTEP_SCORE : GSTEP_SCORE_FULL;
  emit_online_softmax(k, A, r1);
  gpuir_push(k, A, GS_EPILOGUE, "P fragments",
       k->sm.pt == DT_FP32
           ? arena_printf(A, "%s: fp32 P as hi + lo %s wgmma A fragments in registers (deferred; two wgmma a step)",
                          r1->lets[k->sm.p].name, T)
           : arena_printf(A, "%s: cvt to %s wgmma A fragments in registers (deferred)", r1->lets[k->sm.p].name,
                          dtype_name(k->sm.pt)),
       "tPf", 1, "tP", NULL)
      ->step = GSTEP_P_FRAGS;
  gpuir_push(k, A, GS_WGMMA,
       arena_printf(A, "wgmma.mma_async.m64n%dk16.f32.%s.%s x %d%s: O += P V (%s)", DV, T, T, BN / 16,
                    k->sm.pt == DT_FP32 ? " x 2" : "", r2->lets[r2->acc_let].name),
       "RS: P from registers; V MN-major (imm-trans-b 1), 128B swizzle, SBO 1024, LBO one column block, k16 step "
       "2048 bytes",
       "tO", 2, "tPf", tv)
      ->side = GSIDE_V;
  gpuir_push(k, A, GS_WGMMA_WAIT, "wgmma.commit_group; wgmma.wait_group 0", "O and P's registers are free; tile t is read",
       NULL, 1, "tO", NULL)
      ->lo = 0;
  gpuir_push(k, A, GS_MBAR_ARRIVE, "empty[i % S]", "release the slot to the producer", "tFree[i+S]", 0, NULL, NULL)->mbar =
      GMBAR_EMPTY;
  gpuir_push(k, A, GS_END_LOOP, "t", NULL, NULL, 0, NULL, NULL);
}

gpu_kernel *gpuir_build_sm90a_attention(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                                        const char *name, diag_list *dl) {
  const char *at = arena_printf(A, "GPU IR[%s]", rs->n ? rs->r[0].name : "?"), *why;
  if (!gpuir_sm90a_attention_fits(rs, pc, &why)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "the regions do not fit the sm90a attention skeleton (%s): %s",
                algo_name(ALGO_WGMMA_SOFTMAX), why);
    return NULL;
  }
  gpu_kernel *k = gpuir_build_attention(A, rs, pc, p, name, dl);
  if (!k) return NULL;
  const region *r1 = &rs->r[0], *r2 = &rs->r[1];
  int BM = p->tile[0], BN = p->tile[1], D = k->D, DV = k->DV, eb = dtype_bytes(k->T);
  k->algo = ALGO_WGMMA_SOFTMAX;
  k->att_wgmma = true;
  k->threads = p->threads;
  k->smem = p->smem_bytes;
  k->producer_regs = PLAN_SM90A_ATT_PRODUCER_REGS, k->consumer_regs = PLAN_SM90A_ATT_CONSUMER_REGS;
  k->nvec = 1, k->vecs[0] = 16 / eb; /* 128-byte swizzle rows of TMA boxes: one kernel */
  /* the tensor maps (gpuir_sm90a_attention_fits checked that they exist) */
  const pc_contraction *c1 = &pc->a[0].con, *c2 = &pc->a[1].con;
  att_tmap_of(r1, c1->lhs_read, c1->m_axes[0], c1->k_axes[0], c1->b_axes, c1->nb, &k->tmq);
  att_tmap_of(r1, c1->rhs_read, c1->n_axes[0], c1->k_axes[0], c1->b_axes, c1->nb, &k->tmk);
  att_tmap_of(r2, c2->rhs_read, c2->k_axes[0], c2->n_axes[0], c2->b_axes, c2->nb, &k->tmv);
  k->tmq.rows = BM, k->tmk.rows = BN, k->tmv.rows = BN;
  int S = p->stages;
  /* Q, then the ring of S K and V stages, from byte 1024 (the kernel aligns
   * the block's shared memory to the swizzle's 1024-byte period): each tile
   * is column blocks of 64 elements (one 128-byte swizzle row a tile row),
   * one TMA box each */
  k->ntiles = 0;
  int end = add_tile(k, "smQ", 1024, 1, BM * (D / 64), 64, eb);
  end = add_tile(k, "smK", end, S, BN * (D / 64), 64, eb);
  add_tile(k, "smV", end, S, BN * (DV / 64), 64, eb);
  /* the sm80 row's closing statements: the row sums' Reduce, then finish,
   * staging, epilogue and stores */
  int fin = -1, sum = -1;
  for (int i = 0; i < k->nst && fin < 0; i++) {
    if (k->st[i].k == GS_REDUCE) sum = i;
    if (k->st[i].k == GS_EPILOGUE && k->st[i].step == GSTEP_FINISH) fin = i;
  }
  if (fin < 0 || sum < 0) {
    diag_report(dl, D_INTERNAL, at, NULL, "the attention statements have no row sums' reduction or finish step");
    return NULL;
  }
  const gpu_stmt row_sums = k->st[sum];
  /* (not the sm80 row's bar.sync after staging: the consumers' named
   * barrier there is this row's) */
  int ntail = 0;
  gpu_stmt *tail = ARENA_ARRAY(A, gpu_stmt, k->nst - fin);
  for (int i = fin; i < k->nst; i++)
    if (k->st[i].k != GS_BARRIER) tail[ntail++] = k->st[i];
  k->nst = 0;
  const char *batch = gpuir_axes(A, r1, k->v.b_axes, k->v.nb); /* the batch axes, as the prose names them */
  att90_setup(k, A, p, batch);
  att90_producer(k, A, p, batch);
  att90_consumers_head(k, A, p);
  const char *score = "";
  for (int l = 0; l <= k->sm.x; l++)
    if (l != r1->acc_let) score = arena_printf(A, "%s%s%s", score, *score ? ", " : "", r1->lets[l].name);
  for (int pass = 0; pass < 2; pass++) att90_key_tiles(k, A, p, r2, pass, score);
  gpuir_push(k, A, GS_BARRIER, "bar.sync 2, 256", "wg 0 only: wg 1's last arrival (one more than wg 0's turns)", NULL, 0,
       NULL, NULL)
      ->bar = GBAR_LAST_TURN;
  ARENA_PUSH(A, k->st, k->nst, k->cap_st, row_sums);
  gpuir_push(k, A, GS_BARRIER, "bar.sync 1, 256",
       "the consumers are past their last wgmma: Q and the ring are free for the staging tile", NULL, 0, NULL, NULL)
      ->bar = GBAR_CONSUMERS;
  for (int i = 0; i < ntail; i++) {
    ARENA_PUSH(A, k->st, k->nst, k->cap_st, tail[i]);
    if (tail[i].k == GS_STAGE_ACC)
      gpuir_push(k, A, GS_BARRIER, "bar.sync 1, 256", "staging tile complete", NULL, 0, NULL, NULL)->bar = GBAR_CONSUMERS;
  }
  return k; /* the pipeline verifies it */
}

/* The setmaxnreg budgets of a producer warpgroup and `consumers` consumer
 * threads: multiples of 8 in [24, 256] (setmaxnreg's range and granule),
 * the producer's no larger, within the 65536 registers of an SM. */
bool verify_setmaxnreg(const gpu_kernel *k, int consumers, diag_list *dl) {
  int P = k->producer_regs, C = k->consumer_regs;
  if (P < 24 || C > 256 || P % 8 || C % 8 || P > C || 128 * P + consumers * C > 65536) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                "setmaxnreg budgets %d (producer) and %d (consumers) are not multiples of 8 in [24, 256] within 65536 "
                "registers for 128 + %d threads",
                P, C, consumers);
    return false;
  }
  return true;
}

/* The sm90a attention skeleton's invariants: a producer warpgroup and two
 * consumer warpgroups of 64 query rows, key tiles and head dims that are
 * wgmma N and whole 128-byte swizzle rows, a ring of at least 2 stages,
 * tiles on 1024-byte boundaries (the TMA boxes' and the descriptors'
 * swizzle period), setmaxnreg budgets in range within the register file;
 * tensor maps of rank 2 to 5 whose boxes fill the tiles; every copy a TMA
 * box issued by the producer, a ring slot's after the wait on its empty
 * barrier; every wgmma that reads a box after a consumer's wait on the full
 * barrier that covers it; every S = Q K^T wgmma issued in its warpgroup's
 * ping-pong turn; every read of a wgmma's result after the
 * wgmma.wait_group that covers it; and a stage released on its empty
 * barrier only after the wait for the last wgmma that reads it, before the
 * key tile ends. */
static bool verify_sm90a_attention(const gpu_kernel *k, diag_list *dl) {
  bool ok = true;
  const sched_plan *p = &k->plan;
  int S = p->stages, BM = p->tile[0], BN = p->tile[1];
  if (k->threads != 384 || BM != 128 || (BN != 64 && BN != 128) || S < 2 || (k->D != 64 && k->D != 128) ||
      (k->DV != 64 && k->DV != 128) || k->nvec != 1 || k->vecs[0] * dtype_bytes(k->T) != 16) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                "the sm90a attention skeleton runs 128 producer + 256 consumer threads on 128 query rows, key tiles of "
                "64 or 128 in a ring of >= 2 stages, head dims of 64 or 128 and 16-byte rows, not %d threads, %dx%d, "
                "%d stages, %d / %d",
                k->threads, BM, BN, S, k->D, k->DV);
    ok = false;
  }
  ok &= verify_setmaxnreg(k, 256, dl);
  for (int i = 0; i < k->ntiles; i++) {
    const gpu_smem_tile *t = &k->tiles[i];
    int slot = t->rows * t->row_elems * t->elem_bytes;
    if (t->offset % 1024 || slot % 1024 || t->row_elems * t->elem_bytes != 128 || t->swz != 8 ||
        t->copies != (i == 0 ? 1 : S)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                  "tile %s: %d slots of %d bytes from byte %d are not on 1024-byte boundaries in 128-byte swizzle rows",
                  t->name, t->copies, slot, t->offset);
      ok = false;
    }
  }
  const gpu_tmap *tms[3] = {&k->tmq, &k->tmk, &k->tmv};
  for (int i = 0; i < 3; i++) {
    const gpu_tmap *tm = tms[i];
    if (tm->rank < 2 || tm->rank > GPUIR_TMAP_RANK || tm->row_dim < 0 || tm->row_dim >= tm->rank - 1 ||
        tm->rows != (i ? BN : BM)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "tensor map of %s: rank %d, row dim %d, boxes of %d rows do not fill its tile",
                  tm->tensor ? tm->tensor : "?", tm->rank, tm->row_dim, tm->rows);
      ok = false;
    }
  }
  gpu_role role = GROLE_NONE;
  bool freed = false;
  int last_wg = -1, last_wgwait = -1, last_release = -1, role_at = 0, loop_at = 0, last_turn = -1;
  /* the token of Q's boxes (the producer's first copy: A is Q) */
  const char *tq = NULL;
  for (int i = 0; i < k->nst && !tq; i++)
    if (k->st[i].k == GS_TMA_LOAD && k->st[i].side == GSIDE_A) tq = k->st[i].out;
  for (int i = 0; i < k->nst; i++) {
    const gpu_stmt *s = &k->st[i];
    if (s->k == GS_ROLE) {
      role = s->role;
      role_at = i;
    }
    if (s->k == GS_ROLE || s->k == GS_LOOP) freed = false;
    if (s->k == GS_MBAR_WAIT && s->nin == 1 && s->mbar == GMBAR_EMPTY) freed = true;
    if (s->k == GS_CP_ASYNC || (s->k == GS_TMA_LOAD && role != GROLE_PRODUCER)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "copy %s is not a TMA box of the producer", s->what);
      ok = false;
    }
    if (s->k == GS_TMA_LOAD && s->side != GSIDE_A && !freed) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "copy %s does not wait for its slot's empty barrier", s->what);
      ok = false;
    }
    if ((s->k == GS_WGMMA || s->k == GS_STAGE_ACC || s->k == GS_EPILOGUE) && role != GROLE_CONSUMERS) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "%s runs outside the consumers", s->what);
      ok = false;
    }
    if (s->k == GS_LOOP) loop_at = i;
    if (s->k == GS_BARRIER && s->bar == GBAR_TURN) last_turn = i;
    if (s->k == GS_WGMMA && s->nin && tq && s->in[0] && strcmp(s->in[0], tq) == 0) {
      /* ping-pong: S = Q K^T is issued in the warpgroup's turn (its
       * scheduler barrier, in this key tile), and the other warpgroup's
       * turn begins (bar.arrive) before this one waits for S */
      bool handed = false;
      for (int j = i + 1; j < k->nst && k->st[j].k != GS_WGMMA_WAIT; j++)
        handed |= k->st[j].k == GS_BARRIER && k->st[j].bar == GBAR_HAND_OFF;
      if (last_turn < loop_at || !handed) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                    "%s is not issued in its warpgroup's ping-pong turn (bar.sync on its scheduler barrier before, "
                    "bar.arrive on the other's before the wait)",
                    s->what);
        ok = false;
      }
    }
    if (s->k == GS_WGMMA) {
      last_wg = i;
      /* the boxes it reads: waited for on a full barrier by the consumers */
      for (int t = 0; t < s->nin; t++) {
        bool box = false, waited = false;
        for (int j = 0; j < k->nst; j++) box |= k->st[j].k == GS_TMA_LOAD && strcmp(k->st[j].out, s->in[t]) == 0;
        for (int j = role_at; j < i; j++)
          if (k->st[j].k == GS_MBAR_WAIT)
            for (int u = 0; u < k->st[j].nin; u++) waited |= strcmp(k->st[j].in[u], s->in[t]) == 0;
        if (box && !waited) {
          diag_report(dl, D_INTERNAL, "GPU IR", NULL, "%s reads box %s before the consumers wait on its full barrier",
                      s->what, s->in[t]);
          ok = false;
        }
      }
    }
    if (s->k == GS_WGMMA_WAIT) last_wgwait = i;
    if (s->k == GS_MBAR_ARRIVE && role == GROLE_CONSUMERS) {
      if (!(last_wg >= 0 && last_wgwait > last_wg)) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL, "%s releases a stage a wgmma in flight may read", s->what);
        ok = false;
      }
      last_release = i;
    }
    /* a wgmma's result is read only after the wait that covers it */
    for (int t = 0; t < s->nin && s->k != GS_WGMMA_WAIT; t++)
      for (int j = i - 1; j >= 0; j--) {
        const gpu_stmt *w = &k->st[j];
        if (w->k == GS_WGMMA_WAIT && w->nin && strcmp(w->in[0], s->in[t]) == 0) break;
        if (w->k == GS_WGMMA && w->out && strcmp(w->out, s->in[t]) == 0) {
          diag_report(dl, D_INTERNAL, "GPU IR", NULL, "%s reads %s before a wgmma.wait_group covers it", s->what, s->in[t]);
          ok = false;
          break;
        }
      }
    if (s->k == GS_END_LOOP && role == GROLE_CONSUMERS && !(last_wgwait > last_wg && last_release > last_wgwait)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "a key tile ends before its wgmma is waited for and its stage released");
      ok = false;
    }
  }
  return ok;
}

/* Tokens: a TokLoad is consumed by the wait that covers it before any
 * ldmatrix reads its tile; mma produces TokCompute, which the epilogue
 * steps consume in order; the store consumes TokEpilogue; nothing is used
 * before it is produced.  Loop-carried tokens are written "tA[kt]": the
 * wait of iteration kt covers the load issued earlier (prologue or refill). */
bool gpuir_verify_smem(const gpu_kernel *k, diag_list *dl) {
  bool ok = true;
  for (int i = 0; i < k->ntiles && ok; i++) {
    const gpu_smem_tile *t = &k->tiles[i];
    int rb = t->row_elems * t->elem_bytes, nch = rb / 16, sh = t->swz > 0 ? 8 / t->swz : 0;
    if (t->rows <= 0 || t->copies <= 0 || rb <= 0 || rb % 16 || t->swz <= 0 || sh * t->swz != 8) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                  "shared tile %s: rows of %d bytes are not whole 16-byte chunks, or its swizzle (xor %d) does not "
                  "repeat every 8 rows",
                  t->name, rb, t->swz);
      ok = false;
      break;
    }
    /* every chunk of every row: its place, in the row, taken once */
    unsigned char seen[GPUIR_MAX_ROW_CHUNKS];
    if (nch > GPUIR_MAX_ROW_CHUNKS) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "shared tile %s: %d chunks a row (at most %d)", t->name, nch,
                  GPUIR_MAX_ROW_CHUNKS);
      ok = false;
      break;
    }
    for (int r = 0; r < t->rows && ok; r++) {
      memset(seen, 0, (size_t)nch);
      for (int c = 0; c < nch && ok; c++) {
        int at = c ^ gpuir_swizzle_xor(t, r);
        if (at >= nch) {
          diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                      "shared tile %s: chunk %d of row %d is stored at chunk %d, outside its row of %d chunks "
                      "(xor %d assumes rows of a multiple of %d chunks)",
                      t->name, c, r, at, nch, t->swz, t->swz);
          ok = false;
        } else if (seen[at]++) {
          diag_report(dl, D_INTERNAL, "GPU IR", NULL, "shared tile %s: two chunks of row %d share chunk %d", t->name, r,
                      at);
          ok = false;
        }
      }
    }
    for (int v = 0; v < k->nvec && ok; v++)
      if (t->row_elems % k->vecs[v] || 16 % (k->vecs[v] * t->elem_bytes)) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL, "shared tile %s: %d-element chunks do not divide its rows of %d",
                    t->name, k->vecs[v], t->row_elems);
        ok = false;
      }
    int end = t->offset + t->copies * t->rows * rb;
    if (t->offset < 0 || end > k->smem) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "shared tile %s: bytes [%d, %d) outside the block's %d", t->name,
                  t->offset, end, k->smem);
      ok = false;
    }
    for (int j = 0; j < i && ok; j++) {
      const gpu_smem_tile *u = &k->tiles[j];
      int uend = u->offset + u->copies * u->rows * u->row_elems * u->elem_bytes;
      if (t->offset < uend && u->offset < end) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL, "shared tiles %s and %s overlap", u->name, t->name);
        ok = false;
      }
    }
  }
  return ok;
}

/* The sm90a consumers' last statements from st[i] on, as their renderers
 * write them: the output's pairs (the full-width Epilogue and its store when
 * the kernel has EPI_VEC, then the bounds-checked ones), and nothing after. */
bool verify_sm90a_outputs(const gpu_kernel *k, int i, const char *who, diag_list *dl) {
  int n = k->nst;
  for (int full = k->epi_vec ? 1 : 0; full >= 0; full--, i += 2)
    if (i + 1 >= n || k->st[i].k != GS_EPILOGUE || k->st[i].step != GSTEP_NONE || k->st[i].full != full ||
        k->st[i + 1].k != GS_ST_GLOBAL || k->st[i + 1].full != full) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the %s %s epilogue and store are missing", who,
                  full ? "full-width" : "bounds-checked");
      return false;
    }
  if (i != n) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the %s statements hold more than their renderer writes", who);
    return false;
  }
  return true;
}

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

#define SETUP_HEAD(alloc_b)                                                           \
  {GS_TILE_COORD, GSIDE_NONE, GMBAR_NONE, GROLE_NONE, "the tile's coordinates"},               \
      {GS_ALLOC_SHARED, GSIDE_A, GMBAR_NONE, GROLE_NONE, "the first operand's shared tile"},  \
      {GS_ALLOC_SHARED, GSIDE_B, GMBAR_NONE, 0, alloc_b}
#define SETUP_TAIL                                                                            \
  {GS_MBAR_INIT, GSIDE_NONE, GMBAR_FULL, GROLE_NONE, "the full barriers' init"},                       \
      {GS_MBAR_INIT, GSIDE_NONE, GMBAR_EMPTY, GROLE_NONE, "the empty barriers' init"},                 \
      {GS_BARRIER, GSIDE_NONE, GMBAR_NONE, GROLE_NONE, "the CTA's barrier after the init"},            \
      {GS_ROLE, GSIDE_NONE, GMBAR_NONE, GROLE_PRODUCER, "the producer's role"},                            \
      {GS_SETMAXNREG, GSIDE_NONE, GMBAR_NONE, GROLE_PRODUCER, "the producer's setmaxnreg.dec"}

static const setup_step CONTRACTION_SETUP[] = {SETUP_HEAD("B's ring"), SETUP_TAIL};
static const setup_step ATT_SETUP[] = {
    SETUP_HEAD("K's and V's ring"), {GS_MBAR_INIT, GSIDE_NONE, GMBAR_Q, 0, "Q's barrier's init"}, SETUP_TAIL};
#undef SETUP_HEAD
#undef SETUP_TAIL

static const setup_step CONTRACTION_CONSUMERS[] = {
    {GS_ROLE, GSIDE_NONE, GMBAR_NONE, GROLE_CONSUMERS, "the consumers' role"},
    {GS_SETMAXNREG, GSIDE_NONE, GMBAR_NONE, GROLE_CONSUMERS, "the consumers' setmaxnreg.inc"},
    {GS_ACC_ZERO, GSIDE_NONE, GMBAR_NONE, GROLE_NONE, "the accumulators' zero"},
    {GS_FRAG_SETUP, GSIDE_A, GMBAR_NONE, GROLE_NONE, "A's descriptor"},
    {GS_FRAG_SETUP, GSIDE_B, GMBAR_NONE, GROLE_NONE, "B's descriptor"},
};
static const setup_step ATT_CONSUMERS[] = {
    {GS_ROLE, GSIDE_NONE, GMBAR_NONE, GROLE_CONSUMERS, "the consumers' role"},
    {GS_SETMAXNREG, GSIDE_NONE, GMBAR_NONE, GROLE_CONSUMERS, "the consumers' setmaxnreg.inc"},
    {GS_FRAG_SETUP, GSIDE_NONE, GMBAR_NONE, GROLE_NONE, "the consumers' descriptors"},
};

/* The consumers' role (-1: none) and where their k-loop's statements
 * begin, after the setup's (k->nst when there is no role). */
static int sm90a_consumers_role(const gpu_kernel *k) {
  for (int i = 0; i < k->nst; i++)
    if (k->st[i].k == GS_ROLE && k->st[i].role == GROLE_CONSUMERS) return i;
  return -1;
}
int sm90a_consumers_from(const gpu_kernel *k) {
  int role = sm90a_consumers_role(k);
  int n = k->att_wgmma ? (int)(sizeof ATT_CONSUMERS / sizeof *ATT_CONSUMERS)
                       : (int)(sizeof CONTRACTION_CONSUMERS / sizeof *CONTRACTION_CONSUMERS);
  return role < 0 || role + n > k->nst ? k->nst : role + n;
}

/* The statements st[i..] against want[0..nwant): kinds, operands,
 * barriers, roles, budgets and arrival counts. */
static bool setup_matches(const gpu_kernel *k, int i, const setup_step *want, int nwant, diag_list *dl) {
  for (int j = 0; j < nwant; j++, i++) {
    const setup_step *w = &want[j];
    const gpu_stmt *s = i < k->nst ? &k->st[i] : NULL;
    /* a full barrier completes on the TMA's one arrival (with its bytes)
     * or on each gathering producer thread's; the consumers release an
     * empty one each (256); Q's is the TMA's */
    int arrivals = w->mbar == GMBAR_EMPTY ? 256 : w->mbar == GMBAR_FULL && k->gather ? 128 : 1;
    int regs = w->role == GROLE_PRODUCER ? k->producer_regs : k->consumer_regs;
    bool good = s && s->k == w->k && s->side == w->side;
    if (good && w->k == GS_MBAR_INIT) good = s->mbar == w->mbar && s->lo == arrivals;
    if (good && w->k == GS_BARRIER) good = s->bar == GBAR_CTA;
    if (good && w->k == GS_ROLE) good = s->role == w->role;
    if (good && w->k == GS_SETMAXNREG) good = s->lo == regs && s->role == w->role;
    if (!good) {
      char more[32] = "";
      if (w->k == GS_MBAR_INIT) snprintf(more, sizeof more, ", %d arrival%s", arrivals, arrivals == 1 ? "" : "s");
      else if (w->k == GS_SETMAXNREG) snprintf(more, sizeof more, ", %d registers", regs);
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the sm90a %s setup's statement %d is not %s (%s%s)",
                  k->att_wgmma ? "attention" : "contraction", i, w->what, gpuir_stmt_name(w->k), more);
      return false;
    }
  }
  return true;
}

bool verify_sm90a_setup(const gpu_kernel *k, diag_list *dl) {
  const setup_step *head = k->att_wgmma ? ATT_SETUP : CONTRACTION_SETUP;
  const setup_step *cons = k->att_wgmma ? ATT_CONSUMERS : CONTRACTION_CONSUMERS;
  int nhead = k->att_wgmma ? (int)(sizeof ATT_SETUP / sizeof *ATT_SETUP)
                           : (int)(sizeof CONTRACTION_SETUP / sizeof *CONTRACTION_SETUP);
  int ncons = k->att_wgmma ? (int)(sizeof ATT_CONSUMERS / sizeof *ATT_CONSUMERS)
                           : (int)(sizeof CONTRACTION_CONSUMERS / sizeof *CONTRACTION_CONSUMERS);
  if (!setup_matches(k, 0, head, nhead, dl)) return false;
  int role = sm90a_consumers_role(k);
  if (role < 0) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the sm90a consumers' role is missing");
    return false;
  }
  return setup_matches(k, role, cons, ncons, dl);
}

/* The statements of the sm90a contraction's producer role as the renderer
 * writes them (emit.c, produce_fn), in order: kind, operand, lo (-2: any;
 * else the statement's lo, L standing for -3: the gathering producer's
 * lag), and what the statement is. */
typedef struct producer_step {
  gpu_stmt_kind k;
  gpu_side side;
  int lo;
  const char *what;
} producer_step;

static const producer_step TMA_PRODUCER[] = {
    {GS_LOOP, GSIDE_NONE, -2, "the k-tile loop"},
    {GS_MBAR_WAIT, GSIDE_NONE, -2, "the wait on the slot's empty barrier"},
    {GS_MBAR_ARRIVE, GSIDE_NONE, -1, "the arrival on the slot's full barrier with the stage's bytes"},
    {GS_TMA_LOAD, GSIDE_A, -2, "A's box"},
    {GS_TMA_LOAD, GSIDE_B, -2, "B's boxes"},
    {GS_END_LOOP, GSIDE_NONE, -2, "the loop's end"},
};

/* the attention's: Q's arrival and boxes, then a pass over the full key
 * tiles and one over the other live ones (the Loop's lo), K's and V's
 * boxes of each after the wait on its slot and the arrival that arms it */
static const producer_step ATT_PRODUCER[] = {
    {GS_MBAR_ARRIVE, GSIDE_NONE, -1, "the arrival on qfull with the Q tile's bytes"},
    {GS_TMA_LOAD, GSIDE_A, -2, "Q's boxes"},
    {GS_LOOP, GSIDE_NONE, 0, "the loop over the full key tiles"},
    {GS_MBAR_WAIT, GSIDE_NONE, -2, "the wait on the slot's empty barrier"},
    {GS_MBAR_ARRIVE, GSIDE_NONE, -1, "the arrival on the slot's full barrier with the stage's bytes"},
    {GS_TMA_LOAD, GSIDE_B, -2, "K's boxes"},
    {GS_TMA_LOAD, GSIDE_V, -2, "V's boxes"},
    {GS_END_LOOP, GSIDE_NONE, -2, "the loop's end"},
    {GS_LOOP, GSIDE_NONE, 1, "the loop over the other live key tiles"},
    {GS_MBAR_WAIT, GSIDE_NONE, -2, "the wait on the slot's empty barrier"},
    {GS_MBAR_ARRIVE, GSIDE_NONE, -1, "the arrival on the slot's full barrier with the stage's bytes"},
    {GS_TMA_LOAD, GSIDE_B, -2, "K's boxes"},
    {GS_TMA_LOAD, GSIDE_V, -2, "V's boxes"},
    {GS_END_LOOP, GSIDE_NONE, -2, "the loop's end"},
};

static const producer_step GATHER_PRODUCER[] = {
    {GS_LOOP, GSIDE_NONE, -2, "the k-tile loop"},
    {GS_MBAR_WAIT, GSIDE_NONE, -2, "the wait on the slot's empty barrier"},
    {GS_CP_ASYNC, GSIDE_A, -2, "A's chunks"},
    {GS_CP_ASYNC, GSIDE_B, -2, "B's chunks"},
    {GS_COMMIT, GSIDE_NONE, -2, "the commit"},
    {GS_WAIT, GSIDE_NONE, -3, "the wait for stage kt - lag"},
    {GS_PROXY_FENCE, GSIDE_NONE, -2, "the proxy fence"},
    {GS_MBAR_ARRIVE, GSIDE_NONE, -3, "the arrival on stage kt - lag's full barrier"},
    {GS_END_LOOP, GSIDE_NONE, -2, "the loop's end"},
    {GS_WAIT, GSIDE_NONE, 0, "the wait for every group"},
    {GS_PROXY_FENCE, GSIDE_NONE, -2, "the proxy fence"},
    {GS_MBAR_ARRIVE, GSIDE_NONE, -3, "the arrivals of the last lag stages"},
};

/* The producer role's statements: exactly the list its renderer writes
 * (TMA_PRODUCER, GATHER_PRODUCER or ATT_PRODUCER), from the role's
 * setmaxnreg to the consumers' role. */
bool verify_sm90a_producer(const gpu_kernel *k, diag_list *dl) {
  const producer_step *want = k->att_wgmma ? ATT_PRODUCER : k->gather ? GATHER_PRODUCER : TMA_PRODUCER;
  int nwant = k->att_wgmma ? (int)(sizeof ATT_PRODUCER / sizeof *ATT_PRODUCER)
              : k->gather  ? (int)(sizeof GATHER_PRODUCER / sizeof *GATHER_PRODUCER)
                           : (int)(sizeof TMA_PRODUCER / sizeof *TMA_PRODUCER);
  const char *who = k->att_wgmma ? "attention" : k->gather ? "gathering" : "TMA";
  int i = 0, n = k->nst;
  while (i < n && !(k->st[i].k == GS_ROLE && k->st[i].role == GROLE_PRODUCER)) i++;
  if (i + 1 >= n || k->st[i + 1].k != GS_SETMAXNREG) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the sm90a producer role (and its setmaxnreg) is missing");
    return false;
  }
  i += 2;
  for (int j = 0; j < nwant; j++, i++) {
    const gpu_stmt *s = i < n ? &k->st[i] : NULL;
    int lo = want[j].lo == -3 ? k->gather_lag : want[j].lo;
    if (!s || s->k != want[j].k || s->side != want[j].side || (want[j].lo != -2 && s->lo != lo)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the %s producer's statement %d is not %s (%s%s)", who, j,
                  want[j].what, gpuir_stmt_name(want[j].k),
                  want[j].side == GSIDE_A   ? " of A"
                  : want[j].side == GSIDE_B ? " of B"
                  : want[j].side == GSIDE_V ? " of V"
                                            : "");
      return false;
    }
  }
  if (i >= n || k->st[i].k != GS_ROLE || k->st[i].role != GROLE_CONSUMERS) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the %s producer holds more than the statements its renderer writes",
                who);
    return false;
  }
  return true;
}

/* The sm90a attention consumers' statements as their renderer writes them
 * (emit.c, att_consume_fn): the accumulators' zero, the wait for Q, the
 * first turn, then per pass (the Loop's lo) a key tile's wait, turn, S,
 * hand-off, wait for S, score (score_full on the full tiles), row max,
 * rescale, probabilities, P's fragments, P V, its wait and the release;
 * after both, the last turn, the row sums, the consumers' barrier, O / l,
 * its staging and the barrier after it.  The output's epilogue pairs
 * follow (verify_sm90a_att_consumers). */
typedef struct att_consumer_step {
  gpu_stmt_kind k;
  gpu_side side; /* Wgmma: S (B, K's box) or P V (V) */
  int lo;        /* Loop: the pass (-2: any) */
  gpu_step step; /* Epilogue */
  gpu_bar bar;   /* Barrier */
  const char *what;
} att_consumer_step;

#define ATT_KEY_TILE(pass, score)                                                                   \
  {GS_LOOP, GSIDE_NONE, pass, GSTEP_NONE, GBAR_CTA, "the loop over the pass's key tiles"},           \
      {GS_MBAR_WAIT, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the wait on the stage's full barrier"},   \
      {GS_BARRIER, GSIDE_NONE, -2, GSTEP_NONE, GBAR_TURN, "the warpgroup's turn"},                    \
      {GS_WGMMA, GSIDE_B, -2, GSTEP_NONE, GBAR_CTA, "S = Q K^T"},                                     \
      {GS_BARRIER, GSIDE_NONE, -2, GSTEP_NONE, GBAR_HAND_OFF, "the other warpgroup's turn"},          \
      {GS_WGMMA_WAIT, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the wait for S"},                        \
      {GS_EPILOGUE, GSIDE_NONE, -2, score, GBAR_CTA, "the score lets"},                               \
      {GS_EPILOGUE, GSIDE_NONE, -2, GSTEP_ROW_MAX, GBAR_CTA, "the row max"},                          \
      {GS_EPILOGUE, GSIDE_NONE, -2, GSTEP_RESCALE, GBAR_CTA, "the rescale"},                          \
      {GS_EPILOGUE, GSIDE_NONE, -2, GSTEP_PROBS, GBAR_CTA, "the probabilities"},                      \
      {GS_EPILOGUE, GSIDE_NONE, -2, GSTEP_P_FRAGS, GBAR_CTA, "P's fragments"},                        \
      {GS_WGMMA, GSIDE_V, -2, GSTEP_NONE, GBAR_CTA, "O += P V"},                                      \
      {GS_WGMMA_WAIT, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the wait for P V"},                      \
      {GS_MBAR_ARRIVE, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the stage's release"},                  \
      {GS_END_LOOP, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the loop's end"}

static const att_consumer_step ATT_CONSUMER[] = {
    {GS_ACC_ZERO, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the accumulators' zero"},
    {GS_MBAR_WAIT, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the wait for Q"},
    {GS_BARRIER, GSIDE_NONE, -2, GSTEP_NONE, GBAR_FIRST_TURN, "warpgroup 1's first arrival"},
    ATT_KEY_TILE(0, GSTEP_SCORE_FULL),
    ATT_KEY_TILE(1, GSTEP_SCORE),
    {GS_BARRIER, GSIDE_NONE, -2, GSTEP_NONE, GBAR_LAST_TURN, "warpgroup 0's last turn"},
    {GS_REDUCE, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "the row sums"},
    {GS_BARRIER, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CONSUMERS, "the consumers' barrier"},
    {GS_EPILOGUE, GSIDE_NONE, -2, GSTEP_FINISH, GBAR_CTA, "O / l"},
    {GS_STAGE_ACC, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CTA, "O's staging"},
    {GS_BARRIER, GSIDE_NONE, -2, GSTEP_NONE, GBAR_CONSUMERS, "the consumers' barrier"},
};
#undef ATT_KEY_TILE

/* The attention consumers: ATT_CONSUMER from the role's setmaxnreg, then
 * the output's epilogue pairs to the end (the full-width Epilogue and its
 * store when the kernel has EPI_VEC, then the bounds-checked ones). */
static bool verify_sm90a_att_consumers(const gpu_kernel *k, diag_list *dl) {
  int i = sm90a_consumers_from(k), n = k->nst;
  int nwant = (int)(sizeof ATT_CONSUMER / sizeof *ATT_CONSUMER);
  for (int j = 0; j < nwant; j++, i++) {
    const att_consumer_step *w = &ATT_CONSUMER[j];
    const gpu_stmt *s = i < n ? &k->st[i] : NULL;
    if (!s || s->k != w->k || (w->k == GS_WGMMA && s->side != w->side) || (w->lo != -2 && s->lo != w->lo) ||
        (w->k == GS_EPILOGUE && s->step != w->step) || (w->k == GS_BARRIER && s->bar != w->bar)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the attention consumers' statement %d is not %s (%s)", j, w->what,
                  gpuir_stmt_name(w->k));
      return false;
    }
  }
  return verify_sm90a_outputs(k, i, "attention consumers'", dl);
}

/* The k-tile a ring token names relative to its loop's variable `var`
 * ("kt", attention's "t"): "tA[kt]" is 0, "tA[kt+2]" 2, "tA[kt+S-1]" S - 1,
 * "tKVf[next]" 1; *name: the length of the ring's prefix ("tA").  -1 when the
 * token is not of that form (a prologue's tA0, attention's tQ). */
static int ring_offset(const char *tok, const char *var, int S, size_t *name) {
  const char *b = tok ? strchr(tok, '[') : NULL;
  if (!b || !var) return -1;
  *name = (size_t)(b - tok);
  b++;
  if (strcmp(b, "next]") == 0) return 1;
  size_t v = strlen(var);
  if (strncmp(b, var, v) != 0) return -1;
  b += v;
  if (strcmp(b, "]") == 0) return 0;
  if (strcmp(b, "+S-1]") == 0) return S - 1;
  if (*b != '+' || !isdigit((unsigned char)b[1])) return -1;
  char *end;
  long d = strtol(b + 1, &end, 10);
  return d < S && strcmp(end, "]") == 0 ? (int)d : -1;
}

/* The states of verify_stage_reuse's walk back from one copy: statement i,
 * run `back` iterations before the copy's; each pushed once. */
typedef struct reuse_walk {
  int S, top;
  bool *seen; /* nst x (S + 1) */
  int *stack; /* (i, back) pairs */
} reuse_walk;

static void reuse_push(reuse_walk *w, int i, int back) {
  if (i < 0 || back > w->S) return;
  size_t at = (size_t)i * (size_t)(w->S + 1) + (size_t)back;
  if (w->seen[at]) return;
  w->seen[at] = true;
  w->stack[w->top++] = i, w->stack[w->top++] = back;
}

/* The ring's write-after-read hazard (the bar.sync skeletons; the sm90a
 * rings hand their slots over through mbarriers and are checked by
 * verify_sm90a): a copy that refills a ring stage must not be issued while
 * a warp may still be reading fragments (ldmatrix, tf32's ld.shared) from
 * that stage.  Every path back from the copy to a fragment load of the
 * stage it writes must cross a bar.sync: in the copy's own iteration,
 * through the loop's back edge (the load in iteration kt-1), or into the
 * loop before it, whose last iteration's kt is this loop's first kt - 1
 * (the steady loop's into the drain's), or past that loop when it runs no
 * iteration.  A copy producing tX[kt+d] writes stage (kt+d) % S; a load of
 * tX[kt+e] made `back` iterations earlier read stage (kt-back+e) % S.  The
 * walk goes back at most S iterations (the ring's period).  Rings are told
 * apart by their tokens' names: the prologue's copies (tA0 ...) and
 * attention's Q (tQ) name no ring offset, and attention's passes, each with
 * its own tokens (tKVf, tKVm, tKVt), are checked each in its own loop.
 * A pass's first copy (tKVm[first], outside the loops) lands in the stage
 * the loops before it leave current, which turns with the tiles they ran,
 * a count no statement fixes: every path back from it to a fragment load
 * of any ring must cross a bar.sync.  The staging tile's write (StageAcc)
 * overlays the ring, and attention's Q tile: every path back from it to
 * any fragment load must cross a bar.sync too. */
static bool verify_stage_reuse(const gpu_kernel *k, diag_list *dl) {
  int S = k->plan.stages, n = k->nst;
  if (S < 1 || n == 0 || k->tma || k->att_wgmma || k->rows) return true;
  /* each statement's enclosing Loop, and each Loop's EndLoop and back */
  int *up = malloc(3 * (size_t)n * sizeof *up), *mate = up ? up + n : NULL, *open = up ? up + 2 * n : NULL, depth = 0;
  size_t states = (size_t)n * (size_t)(S + 1);
  reuse_walk w = {S, 0, malloc(states * sizeof *w.seen), malloc(2 * states * sizeof *w.stack)};
  bool ok = true;
  if (!up || !w.seen || !w.stack) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "out of memory checking the ring's stage reuse");
    ok = false;
    goto out;
  }
  for (int i = 0; i < n; i++) {
    mate[i] = -1;
    up[i] = depth ? open[depth - 1] : -1;
    if (k->st[i].k == GS_LOOP) open[depth++] = i;
    else if (k->st[i].k == GS_END_LOOP && depth) {
      mate[i] = open[--depth], mate[open[depth]] = i;
      up[i] = depth ? open[depth - 1] : -1;
    }
  }
  for (int c = 0; c < n && ok; c++) {
    size_t len = 0, lm;
    /* the staging tile's write (StageAcc) overlays every tile fragments
     * are loaded from: any earlier fragment load conflicts with it */
    bool staging = k->st[c].k == GS_STAGE_ACC;
    const char *ring = k->st[c].k == GS_CP_ASYNC && k->st[c].out ? strchr(k->st[c].out, '[') : NULL;
    bool first = up[c] < 0 && ring && strcmp(ring, "[first]") == 0;
    int d = k->st[c].k == GS_CP_ASYNC && up[c] >= 0 ? ring_offset(k->st[c].out, k->st[up[c]].what, S, &len) : -1;
    if (d < 0 && !staging && !first) continue;
    memset(w.seen, 0, states * sizeof *w.seen);
    w.top = 0;
    reuse_push(&w, c - 1, 0);
    while (w.top && ok) {
      int back = w.stack[--w.top], i = w.stack[--w.top];
      const gpu_stmt *s = &k->st[i];
      if (s->k == GS_BARRIER) continue; /* this path is synchronized */
      if (s->k == GS_LOOP) {
        /* reached from its body: the back edge (the body's end, one
         * iteration earlier) or the entry */
        if (mate[i] > i + 1) reuse_push(&w, mate[i] - 1, back + 1);
        reuse_push(&w, i - 1, back);
        continue;
      }
      if (s->k == GS_END_LOOP) {
        /* a loop before: its last iteration, or none */
        if (mate[i] >= 0 && mate[i] < i - 1) reuse_push(&w, i - 1, back + 1);
        reuse_push(&w, mate[i] >= 0 ? mate[i] - 1 : i - 1, back);
        continue;
      }
      bool frag = s->k == GS_LDMATRIX || s->k == GS_LD_SHARED;
      if (staging && frag) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                    "the staging tile's write %s (statement %d) overlays the tiles that %s (statement %d, %s%s) reads "
                    "fragments from, with no bar.sync between them",
                    k->st[c].what, c, s->what, i, s->nin ? s->in[0] : "-",
                    back == 0 ? "" : back == 1 ? ", the iteration before" : ", an earlier iteration");
        ok = false;
        continue;
      }
      int e = frag && !staging && s->nin == 1 && up[i] >= 0 ? ring_offset(s->in[0], k->st[up[i]].what, S, &lm) : -1;
      if (first && e >= 0) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                    "copy %s (statement %d, %s), a pass's first tile, lands in a ring stage that %s (statement %d, "
                    "%s) may read fragments from (the loops before it ran a tile count no statement fixes), with no "
                    "bar.sync between them",
                    k->st[c].what, c, k->st[c].out, s->what, i, s->in[0]);
        ok = false;
      } else if (e >= 0 && lm == len && strncmp(s->in[0], k->st[c].out, len) == 0 &&
                 ((e - back - d) % S + S) % S == 0) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                    "copy %s (statement %d, %s) refills the ring stage that %s (statement %d, %s%s) reads fragments "
                    "from, with no bar.sync between them",
                    k->st[c].what, c, k->st[c].out, s->what, i, s->in[0],
                    back == 0 ? "" : back == 1 ? ", the iteration before" : ", an earlier iteration");
        ok = false;
      } else
        reuse_push(&w, i - 1, back);
    }
  }
out:
  free(up);
  free(w.seen);
  free(w.stack);
  return ok;
}

/* sm80 attention's statements as its renderer takes them (emit.c,
 * ATT_RENDER): the kinds it renders; three key-tile loops, passes 0, 1
 * and 2 in order, not nested, each after the copy of its first tile; in a
 * loop the copy of the next tile (of the loop's pass), S = Q K^T as Q's
 * fragments (when not kept), K's, then the MMAs, the score steps, the
 * online softmax, then P V as P's fragments, V's, then the MMAs; the
 * finish, staging and the output's pairs after the loops; a ring of two
 * stages. */
static bool verify_att_render(const gpu_kernel *k, diag_list *dl) {
  static const bool RENDERS[GS__COUNT] = {
      [GS_TILE_COORD] = true, [GS_ALLOC_SHARED] = true, [GS_ACC_ZERO] = true, [GS_CP_ASYNC] = true,
      [GS_COMMIT] = true,     [GS_WAIT] = true,         [GS_BARRIER] = true,  [GS_LDMATRIX] = true,
      [GS_FRAG_SETUP] = true, [GS_ADDR_SETUP] = true,   [GS_LOOP] = true,     [GS_END_LOOP] = true,
      [GS_MMA] = true,        [GS_EPILOGUE] = true,     [GS_REDUCE] = true,   [GS_STAGE_ACC] = true,
      [GS_ST_GLOBAL] = true,
  };
  const char *bad = NULL;
  int at = -1, pass = -1, first = -1;
  bool loop = false, full_seen = false;
  for (int i = 0; i < k->nst && !bad; i++) {
    const gpu_stmt *s = &k->st[i];
    at = i;
    if (s->k < 0 || s->k >= GS__COUNT || !RENDERS[s->k]) bad = "a kind sm80 attention does not render";
    else if (s->k == GS_LOOP) {
      if (loop || s->loop != GLOOP_KEYS || s->lo != pass + 1 || first != s->lo)
        bad = "a key-tile loop out of place (passes 0, 1, 2 in order, each after its first tile's copy)";
      loop = true, pass = s->lo;
    } else if (s->k == GS_END_LOOP) {
      if (!loop) bad = "an EndLoop outside a loop";
      loop = false;
    } else if (s->k == GS_CP_ASYNC && s->side == GSIDE_B) {
      if (loop ? s->lo != pass || s->tile != 1 : s->lo != pass + 1 || s->lo > 2)
        bad = "a key tile's copy of another pass than its loop's";
      if (!loop) first = s->lo;
    } else if (s->k == GS_CP_ASYNC && (s->side != GSIDE_A || loop)) {
      bad = "a copy of no operand, or Q's inside a loop";
    } else if (s->k == GS_LDMATRIX && (s->side == GSIDE_B || (s->side == GSIDE_A && loop))) {
      /* S = Q K^T: [Q's fragments,] K's, the MMAs */
      int j = i + (s->side == GSIDE_A);
      if (!loop || j + 1 >= k->nst || k->st[j].k != GS_LDMATRIX || k->st[j].side != GSIDE_B || k->st[j + 1].k != GS_MMA ||
          k->st[j + 1].side != GSIDE_B)
        bad = "S = Q K^T that is not Q's fragments (when not kept), K's, then the MMAs, in a loop";
      i = j + 1;
    } else if (s->k == GS_EPILOGUE && s->step == GSTEP_P_FRAGS) {
      if (!loop || i + 2 >= k->nst || k->st[i + 1].k != GS_LDMATRIX || k->st[i + 1].side != GSIDE_V ||
          k->st[i + 2].k != GS_MMA || k->st[i + 2].side != GSIDE_V)
        bad = "P V that is not P's fragments, V's, then the MMAs, in a loop";
      i += 2;
    } else if (s->k == GS_LDMATRIX || s->k == GS_MMA) {
      if (!(s->k == GS_LDMATRIX && s->side == GSIDE_A && !loop)) bad = "fragments or MMAs outside S = Q K^T and P V";
    } else if (s->k == GS_EPILOGUE) {
      bool in_loop = s->step != GSTEP_NONE && s->step != GSTEP_FINISH;
      if (in_loop != loop || (s->step == GSTEP_SCORE_FULL && pass != 0) ||
          ((s->step == GSTEP_SCORE || s->step == GSTEP_LANE_MASK || s->step == GSTEP_SCORE_LANE) && pass == 0))
        bad = "an epilogue step out of place";
      if (s->step == GSTEP_NONE && ((s->full && full_seen) || (!s->full && full_seen && k->st[i - 1].k != GS_ST_GLOBAL)))
        bad = "the output's epilogue pairs out of place";
      full_seen |= s->full;
    } else if (s->k == GS_ST_GLOBAL) {
      if (loop || i == 0 || k->st[i - 1].k != GS_EPILOGUE || k->st[i - 1].full != s->full)
        bad = "a store without its epilogue";
    } else if (s->k == GS_WAIT) {
      if (s->lo != (loop ? 1 : 0)) bad = "a wait that leaves the wrong number of groups in flight";
    } else if ((s->k == GS_FRAG_SETUP || s->k == GS_ADDR_SETUP || s->k == GS_ALLOC_SHARED || s->k == GS_TILE_COORD ||
                s->k == GS_ACC_ZERO || s->k == GS_REDUCE || s->k == GS_STAGE_ACC) &&
               loop) {
      bad = "a setup, reduction or staging inside a loop";
    }
  }
  if (!bad && (loop || pass != 2)) bad = "not the three passes over the key tiles";
  /* Sm80AttCta's ring is two stages (c.st ^ 1, smV[next%2]) */
  if (k->plan.stages != 2) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "plan of %d stages: a ring of other than two stages", k->plan.stages);
    return false;
  }
  if (bad) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "statement %d (%s %s): %s", at, at >= 0 ? gpuir_stmt_name(k->st[at].k) : "",
                at >= 0 && k->st[at].what ? k->st[at].what : "", bad);
    return false;
  }
  return true;
}

/* 32-bit pad guards only where every guard's K part fits them; 32-bit K
 * parts only with a 64-bit kernel for the calls past their span. */
static bool verify_operand_guards(const gpu_kernel *k, diag_list *dl) {
  bool ok = true;
  for (int side = 0; side < 2; side++) {
    const gpu_operand *o = side ? &k->B : &k->A;
    int64_t lo, hi, bits = 1;
    for (int g = 0; g < o->ng && o->gmask; g++) {
      bool in = sx_bounds(o->gk[g], k_axis_range, (void *)&k->v, &lo, &hi) && lo >= o->gkmin[g] &&
                hi < o->gkmin[g] + o->gkrange[g];
      if (!in) bits = 33;
      bits *= o->gkrange[g];
    }
    if (o->gmask && (bits != o->gmask || bits > 32)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "operand %s's guard mask has %d bits for K parts that take %lld tuples",
                  o->tensor, o->gmask, (long long)bits);
      ok = false;
    }
    if (o->kpart32 && (!o->walk || !k->steady_min_vec || k->kpart32_fallback <= 0 ||
                       k->kpart32_fallback >= k->steady_min_vec || !o->kspan)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                  "operand %s keeps its K part in 32 bits without a walk, a span or a width below the steady loop's (%d) "
                  "for the calls past it",
                  o->tensor, k->kpart32_fallback);
      ok = false;
    }
    if (o->g32 && !walk_guards_32(&k->v, o)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "operand %s tests its pad guards in 32 bits, but a guard's K part can leave int32",
                  o->tensor);
      ok = false;
    }
  }
  return ok;
}

/* the full-width epilogue: 16-byte stores that cover the staging tile in
 * whole rows, every thread the same number of rows */
static bool verify_epilogue_width(const gpu_kernel *k, diag_list *dl) {
  bool ok = true;
  if (k->epi_vec) {
    int BM = k->plan.tile[0], BN = k->attention ? k->DV : k->plan.tile[1], ev = k->epi_vec;
    int tpr = BN % ev == 0 ? BN / ev : 0, nt = k->tma || k->att_wgmma ? k->threads - 128 : k->threads; /* sm90a: the consumers */
    if (ev * dtype_bytes(k->attention ? k->v2.out_dt : k->v.out_dt) != 16 || ev % 4 || !tpr || nt % tpr || BM % (nt / tpr)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                  "the full-width epilogue's %d outputs a thread do not cover the %dx%d staging tile in 16-byte rows",
                  ev, BM, BN);
      ok = false;
    }
  }
  return ok;
}

/* attention's lane masks: a tile's element offsets stay inside the span
 * that keeps the clamped 32-bit lane value's compares exact */
static bool verify_lane_masks(const gpu_kernel *k, diag_list *dl) {
  bool ok = true;
  if (k->attention && k->lane_mask)
    for (int i = 0; i < k->nmasks; i++) {
      int64_t cm = k->masks[i].cm, cn = k->masks[i].cn;
      if (k->masks[i].kind < 1 || k->masks[i].kind > 2 ||
          !lane_span_ok(&k->masks[i], k->lane_rows, k->plan.tile[0], k->plan.tile[1])) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                    "lane mask %d: offsets %lld*dm + %lld*dn over a %dx%d tile leave the 32-bit lane value's exact range",
                    i, (long long)cm, (long long)cn, k->plan.tile[0], k->plan.tile[1]);
        ok = false;
      }
    }
  return ok;
}

/* Every token used after it is produced, and every tile read (ldmatrix,
 * wgmma) after the wait that covers its copy. */
static bool verify_tokens(const gpu_kernel *k, diag_list *dl) {
  /* every token produced (one a statement at most), and every token a wait
   * covers (four a statement at most), so far */
  const char **produced = malloc(5 * ((size_t)k->nst + 1) * sizeof *produced), **waited = produced + k->nst + 1;
  int np = 0, nw = 0;
  if (!produced) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "out of memory verifying the statements");
    return false;
  }
  bool ok = true;
  for (int i = 0; i < k->nst; i++) {
    const gpu_stmt *s = &k->st[i];
    for (int t = 0; t < s->nin; t++) {
      const char *tok = s->in[t];
      bool have = false;
      for (int j = 0; j < np; j++) have |= strcmp(produced[j], tok) == 0;
      /* a loop-carried token is produced by the prologue (tA0) or a refill (tA[kt+S-1]) */
      if (!have && strchr(tok, '[')) {
        size_t n = (size_t)(strchr(tok, '[') - tok);
        for (int j = 0; j < np; j++) have |= strncmp(produced[j], tok, n) == 0;
      }
      if (!have) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL, "statement %d (%s) uses token %s before it is produced", i, s->what, tok);
        ok = false;
      }
      if (s->k == GS_WAIT || s->k == GS_MBAR_WAIT) waited[nw++] = tok;
      /* a tile read (ldmatrix, wgmma) after the wait that covers its copy;
       * a register token (an epilogue step's: P's fragments) needs none */
      bool reg_tok = false;
      for (int j = 0; j < i; j++)
        reg_tok |= k->st[j].k == GS_EPILOGUE && k->st[j].out && strcmp(k->st[j].out, tok) == 0;
      if ((s->k == GS_LDMATRIX || s->k == GS_WGMMA) && !reg_tok) {
        bool w = false;
        for (int j = 0; j < nw; j++) w |= strcmp(waited[j], tok) == 0;
        if (!w) {
          diag_report(dl, D_INTERNAL, "GPU IR", NULL, "%s reads tile %s before a wait covers it",
                      s->k == GS_WGMMA ? "wgmma" : "ldmatrix", tok);
          ok = false;
        }
      }
    }
    if (s->out) produced[np++] = s->out;
  }
  free(produced);
  return ok;
}

/* split-K: the epilogue runs once, in the second kernel, on the sum of
 * the partials it loads; the first kernel stores its staged partial */
static bool verify_split_k(const gpu_kernel *k, diag_list *dl) {
  bool ok = true;
  if (k->plan.split_k > 1) {
    int nepi = 0, nld = 0;
    for (int i = 0; i < k->nst; i++) {
      nepi += k->st[i].k == GS_EPILOGUE;
      nld += k->st[i].k == GS_LD_GLOBAL && nepi == 0;
    }
    int nt = 32 * k->plan.warps_m * k->plan.warps_n;
    bool parts_ok = !k->split_reduce || (k->split_parts >= 1 && (int64_t)k->split_parts * nt * 4 >=
                                                                    (int64_t)k->plan.tile[0] * k->plan.tile[1]);
    if (!parts_ok) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                  "split-K kernel %s: %d CTAs of %d threads a tile do not cover its %dx%d partials in float4 columns",
                  k->name, k->split_parts, nt, k->plan.tile[0], k->plan.tile[1]);
      ok = false;
    }
    if (k->split_reduce ? nepi != 1 || nld != 1 || k->smem != 0 || k->nvec != 1 : nepi != 0 || !k->reduce) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                  "split-K kernel %s: the epilogue must run once, in the second kernel, after its loads of the "
                  "partials (%d epilogues, %d loads before them)",
                  k->name, nepi, nld);
      ok = false;
    }
  }
  return ok;
}

/* the last statement is the store, fed by the epilogue (the split-K
 * reduction's, in its loop over the columns) */
static bool verify_ends_in_store(const gpu_kernel *k, diag_list *dl) {
  bool ok = true;
  int last = k->nst - 1 - (k->split_reduce && k->nst > 1 && k->st[k->nst - 1].k == GS_END_LOOP);
  if (k->nst == 0 || k->st[last].k != GS_ST_GLOBAL) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the skeleton does not end in a store");
    ok = false;
  }
  return ok;
}

bool gpuir_verify(const gpu_kernel *k, diag_list *dl) {
  /* every verifier runs, so that each reports what it finds */
  bool ok = gpuir_verify_smem(k, dl);
  ok &= verify_stage_reuse(k, dl);
  ok &= verify_operand_guards(k, dl);
  ok &= verify_epilogue_width(k, dl);
  ok &= verify_lane_masks(k, dl);
  ok &= verify_tokens(k, dl);
  if (k->tma) ok &= verify_sm90a(k, dl);
  if (k->att_wgmma) {
    ok &= verify_sm90a_attention(k, dl);
    ok &= verify_sm90a_setup(k, dl);
    ok &= verify_sm90a_producer(k, dl);
    ok &= verify_sm90a_att_consumers(k, dl);
  }
  if (!k->tma && !k->att_wgmma && !k->attention && !k->rows && !k->split_reduce) ok &= verify_sm80_render(k, dl);
  if (k->split_reduce) ok &= verify_splitk_render(k, dl);
  if (k->attention && !k->att_wgmma) ok &= verify_att_render(k, dl);
  if (k->rows) return ok & verify_rows(k, dl);
  ok &= verify_split_k(k, dl);
  ok &= verify_ends_in_store(k, dl);
  return ok;
}

bool gpuir_add_fused(gpu_kernel *k, arena *A, const char *value, const char *from, const char *why) {
  if (!k->rows || k->nfused >= GPUIR_MAX_FUSED || k->nst < 1 || k->st[0].k != GS_ROW_BEGIN) return false;
  gpu_stmt s = {.k = GS_FUSED, .what = value, .detail = arena_printf(A, "registers (from region %s): %s", from, why),
                .nin = 1, .in = {"tRow", NULL, NULL, NULL}, .out = arena_printf(A, "tF.%s", value)};
  ARENA_PUSH(A, k->st, k->nst, k->cap_st, s);
  /* after RowBegin and the Fused statements before it */
  int at = 1 + k->nfused;
  memmove(&k->st[at + 1], &k->st[at], sizeof(gpu_stmt) * (size_t)(k->nst - 1 - at));
  k->st[at] = s;
  k->fused[k->nfused++] = value;
  return true;
}

static const char *const STMT_NAMES[] = {"AllocShared", "CpAsync",    "CommitGroup", "Wait",     "Barrier",  "Loop",
                                    "EndLoop",     "LdMatrix",   "Mma",         "StageAcc", "Epilogue", "StGlobalVec",
                                    "AddrSetup",   "Advance",    "RowBegin",    "LdGlobal", "RowLets",  "Reduce",
                                    "RowScalar",   "LdShared",   "TileCoord",   "MbarInit",   "Role",
                                    "SetMaxNReg",  "MbarWait",   "TmaLoad",     "Wgmma",      "WgmmaWait",
                                    "MbarArrive",  "ProxyFence",  "Fused",  "LdGather",   "AccZero",
                                    "FragSetup"};
_Static_assert(sizeof STMT_NAMES / sizeof *STMT_NAMES == GS__COUNT, "a dump name for every statement kind");

/* The fields the renderers read, where a statement sets them: the
 * operand, how it copies, the k-tile (kt + t inside a loop, the slice's
 * first + t before one), the stage, the k steps, the groups a wait leaves
 * in flight, the widths that run it, the loop, the full-width pair, which
 * named barrier. */
static void dump_render_fields(cJSON *b, const gpu_stmt *s, int depth, bool rows) {
  static const char *const SIDE[] = {NULL, "A", "B", "K counter", "V"};
  static const char *const COPY[] = {NULL, "stream", "tile", "bounded"};
  static const char *const LOOP[] = {NULL, "steady", "drain", "columns", "keys", "row", "lap", "rest"};
  static const char *const ROLE[] = {NULL, "producer", "consumers"};
  static const char *const LOAD[] = {NULL, "vector", "element", "row", "index"};
  static const char *const BAR[] = {NULL, "first_turn", "turn", "hand_off", "last_turn", "consumers"};
  static const char *const MBAR[] = {NULL, "full", "empty", "q"};
  _Static_assert(sizeof BAR / sizeof *BAR == GBAR__COUNT, "a dump name for every barrier");
  _Static_assert(sizeof MBAR / sizeof *MBAR == GMBAR__COUNT, "a dump name for every barrier ring");
  _Static_assert(sizeof LOAD / sizeof *LOAD == GLOAD__COUNT, "a dump name for every load");
  _Static_assert(sizeof SIDE / sizeof *SIDE == GSIDE__COUNT, "a dump name for every operand");
  _Static_assert(sizeof COPY / sizeof *COPY == GCOPY__COUNT, "a dump name for every copy");
  _Static_assert(sizeof LOOP / sizeof *LOOP == GLOOP__COUNT, "a dump name for every loop");
  _Static_assert(sizeof ROLE / sizeof *ROLE == GROLE__COUNT, "a dump name for every role");
  char t[32];
  if (s->side) cJSON_AddStringToObject(b, "operand", SIDE[s->side]);
  if (s->copy) {
    cJSON_AddStringToObject(b, "copy", COPY[s->copy]);
    snprintf(t, sizeof t, "%s+%d", depth ? "kt" : "kt0", s->tile);
    cJSON_AddStringToObject(b, "tile", t);
    if (s->k == GS_CP_ASYNC && !depth) cJSON_AddNumberToObject(b, "stage", s->stage);
  }
  if ((s->k == GS_LDMATRIX || s->k == GS_MMA) && s->lo >= 0) {
    snprintf(t, sizeof t, "%d..%d", s->lo, s->hi);
    cJSON_AddStringToObject(b, "k_steps", t);
  }
  if (s->k == GS_LDMATRIX && s->tile) {
    snprintf(t, sizeof t, "kt+%d", s->tile);
    cJSON_AddStringToObject(b, "tile", t);
  }
  if (s->ahead) cJSON_AddTrueToObject(b, "ahead");
  if ((s->k == GS_WAIT || s->k == GS_WGMMA_WAIT) && s->lo >= 0) cJSON_AddNumberToObject(b, "in_flight", s->lo);
  if (s->k == GS_MBAR_ARRIVE && s->lo >= 0) cJSON_AddNumberToObject(b, "lag", s->lo);
  if (s->min_vec) cJSON_AddNumberToObject(b, "min_vec", s->min_vec);
  if (s->below_vec) cJSON_AddNumberToObject(b, "below_vec", s->below_vec);
  if (s->loop) cJSON_AddStringToObject(b, "loop", LOOP[s->loop]);
  if (s->full) cJSON_AddTrueToObject(b, "full_width");
  if (s->k == GS_BARRIER && s->bar) cJSON_AddStringToObject(b, "barrier", BAR[s->bar]);
  if (s->k == GS_MBAR_INIT && s->mbar) {
    cJSON_AddStringToObject(b, "barriers", MBAR[s->mbar]);
    cJSON_AddNumberToObject(b, "arrivals", s->lo);
  }
  if ((s->k == GS_MBAR_WAIT || s->k == GS_MBAR_ARRIVE) && s->mbar) cJSON_AddStringToObject(b, "barrier", MBAR[s->mbar]);
  if (s->role) cJSON_AddStringToObject(b, "role", ROLE[s->role]);
  if (s->k == GS_SETMAXNREG && s->lo >= 0) cJSON_AddNumberToObject(b, "registers", s->lo);
  if (!rows) return;
  if (s->k == GS_ST_GLOBAL) cJSON_AddNumberToObject(b, "yield", s->pass);
  else if (s->k == GS_LOOP || s->k == GS_ROW_LETS || s->k == GS_REDUCE || s->k == GS_ROW_SCALAR || s->rd)
    cJSON_AddNumberToObject(b, "pass", s->pass);
  if (s->load) cJSON_AddStringToObject(b, "load", LOAD[s->load]);
  if (s->nguard) cJSON_AddNumberToObject(b, "pad_guards", s->nguard);
}

const char *gpuir_stmt_name(gpu_stmt_kind kind) { return kind >= 0 && kind < GS__COUNT ? STMT_NAMES[kind] : "?"; }

/* The dump's parts: a row kernel's launch and rows; a contraction's or
 * attention's tile, widths, register budgets and tensor maps; their
 * operands; the statements. */
static void dump_rows(cJSON *g, const gpu_kernel *k) {
  const region *r = k->r;
  cJSON_AddNumberToObject(g, "threads", k->threads);
  cJSON_AddNumberToObject(g, "warps_per_row", k->rw.row_warps);
  cJSON_AddNumberToObject(g, "rows_per_cta", k->rw.warps / k->rw.row_warps);
  cJSON_AddNumberToObject(g, "vec", k->rw.vec);
  if (k->nfused) {
    cJSON *fa = cJSON_AddArrayToObject(g, "fused");
    for (int i = 0; i < k->nfused; i++) {
      cJSON *f = cJSON_CreateObject();
      cJSON_AddStringToObject(f, "value", k->fused[i]);
      cJSON_AddStringToObject(f, "buffer", buffer_name(BUF_REG));
      cJSON_AddItemToArray(fa, f);
    }
  }
  cJSON *ra = cJSON_AddArrayToObject(g, "row_axes");
  for (int i = 0; i < k->rw.nrows; i++) cJSON_AddItemToArray(ra, cJSON_CreateString(r->it[k->rw.row_axes[i]].name));
  cJSON_AddStringToObject(g, "row_axis", r->it[k->rw.row_axis].name);
  cJSON *rd = cJSON_AddArrayToObject(g, "reductions");
  for (int i = 0; i < k->rw.nred; i++) cJSON_AddItemToArray(rd, cJSON_CreateString(r->lets[k->rw.red_let[i]].name));
  arena T;
  arena_init(&T);
  cJSON *rc = cJSON_AddObjectToObject(g, "row_cache");
  cJSON *sl = cJSON_AddArrayToObject(rc, "slots");
  for (int i = 0; i < k->rw.ncache; i++) cJSON_AddItemToArray(sl, cJSON_CreateString(r->in[k->rw.cache_rd[i]->input].name));
  cJSON_AddNumberToObject(rc, "max_row", k->rw.cache_cap);
  cJSON *gr = cJSON_AddArrayToObject(g, "grid");
  for (int i = 0; i < 3; i++) cJSON_AddItemToArray(gr, cJSON_CreateString(sx_str(&T, k->grid[i])));
  arena_free(&T);
}

static void dump_tile(cJSON *g, const gpu_kernel *k) {
  cJSON *t = cJSON_AddArrayToObject(g, "tile");
  for (int i = 0; i < 3; i++) cJSON_AddItemToArray(t, cJSON_CreateNumber(k->plan.tile[i]));
  cJSON_AddNumberToObject(g, "stages", k->plan.stages);
  char wt[32];
  snprintf(wt, sizeof wt, "%dx%d", k->plan.tile[0] / k->plan.warps_m, k->plan.tile[1] / k->plan.warps_n);
  cJSON_AddStringToObject(g, "warp_tile", wt);
  cJSON_AddNumberToObject(g, "threads", k->threads);
  cJSON_AddNumberToObject(g, "smem_bytes", k->smem);
  if (k->attention) {
    cJSON_AddNumberToObject(g, "head_dim", k->D);
    cJSON_AddNumberToObject(g, "value_dim", k->DV);
    cJSON *ms = cJSON_AddArrayToObject(g, "masks");
    for (int i = 0; i < k->nmasks; i++) {
      cJSON *m = cJSON_CreateObject();
      cJSON_AddStringToObject(m, "let", k->r->lets[k->masks[i].let].name);
      cJSON_AddStringToObject(m, "removes", k->masks[i].kind == 1 ? "where the guard holds" : "where the guard fails");
      cJSON_AddNumberToObject(m, "query_coef", (double)k->masks[i].cm);
      cJSON_AddNumberToObject(m, "key_coef", (double)k->masks[i].cn);
      cJSON_AddItemToArray(ms, m);
    }
    cJSON_AddBoolToObject(g, "lane_mask", k->lane_mask);
    if (k->lane_mask && k->lane_rows) cJSON_AddBoolToObject(g, "lane_mask_per_row", true);
  }
  cJSON *v = cJSON_AddArrayToObject(g, "vec_variants");
  for (int i = 0; i < k->nvec; i++) cJSON_AddItemToArray(v, cJSON_CreateNumber(k->vecs[i]));
  if (!k->attention) {
    if (k->tma) {
      char mma[48];
      snprintf(mma, sizeof mma, "wgmma m64n%dk16", k->plan.tile[1]);
      cJSON_AddStringToObject(g, "mma", mma);
    } else {
      cJSON_AddStringToObject(g, "mma", k->mma_k == 8 ? "m16n8k8.tf32 (cvt.rna.tf32.f32 fragments)" : "m16n8k16");
    }
    cJSON_AddNumberToObject(g, "epilogue_vec", k->epi_vec);
    cJSON *sv = cJSON_AddArrayToObject(g, "steady_vecs");
    for (int i = 0; i < k->nvec; i++)
      if (k->steady_min_vec && k->vecs[i] >= k->steady_min_vec) cJSON_AddItemToArray(sv, cJSON_CreateNumber(k->vecs[i]));
    cJSON *av = cJSON_AddArrayToObject(g, "ahead_vecs");
    for (int i = 0; i < k->nvec; i++)
      if (k->ahead_vec && k->vecs[i] >= k->ahead_vec) cJSON_AddItemToArray(av, cJSON_CreateNumber(k->vecs[i]));
  }
  cJSON_AddStringToObject(g, "math", k->math_ieee ? "ieee" : "approx");
  if (k->tma || k->att_wgmma) {
    cJSON *mr = cJSON_AddObjectToObject(g, "setmaxnreg");
    cJSON_AddNumberToObject(mr, "producer", k->producer_regs);
    cJSON_AddNumberToObject(mr, "consumers", k->consumer_regs);
    cJSON_AddNumberToObject(g, "consumer_unroll", k->consumer_unroll);
  }
  if (k->att_wgmma) {
    /* each tensor map, innermost dim first: the index that selects a box
     * (a region axis, or a constant) and the box's extent along it */
    cJSON *tms = cJSON_AddArrayToObject(g, "tensor_maps");
    const gpu_tmap *all[3] = {&k->tmq, &k->tmk, &k->tmv};
    for (int i = 0; i < 3; i++) {
      const gpu_tmap *tm = all[i];
      arena A0 = {0};
      cJSON *o = cJSON_CreateObject(), *ix = cJSON_CreateArray(), *bx = cJSON_CreateArray();
      cJSON_AddStringToObject(o, "tensor", tm->tensor);
      cJSON_AddNumberToObject(o, "rank", tm->rank);
      for (int d = tm->rank - 1; d >= 0; d--) {
        cJSON_AddItemToArray(ix, cJSON_CreateString(sx_str(&A0, tm->map[d])));
        cJSON_AddItemToArray(bx, cJSON_CreateNumber(d == tm->rank - 1 ? 64 : d == tm->row_dim ? tm->rows : 1));
      }
      cJSON_AddItemToObject(o, "index", ix);
      cJSON_AddItemToObject(o, "box", bx);
      cJSON_AddItemToArray(tms, o);
      arena_free(&A0);
    }
  }
}

static void dump_operands(cJSON *g, const gpu_kernel *k) {
  cJSON *ops = cJSON_AddArrayToObject(g, "operands");
  for (int side = 0; side < (k->attention ? 3 : 2); side++) {
    const gpu_operand *o = side == 2 ? &k->V : side ? &k->B : &k->A;
    const region *r = side == 2 ? k->v2.r : k->r;
    cJSON *oo = cJSON_CreateObject();
    cJSON_AddStringToObject(oo, "role", side == 2 ? "V" : side ? "B" : "A");
    cJSON_AddStringToObject(oo, "tensor", o->tensor);
    cJSON_AddStringToObject(oo, "contiguous", o->contig_axis >= 0 ? r->it[o->contig_axis].name : "none");
    cJSON_AddBoolToObject(oo, "k_contiguous", o->k_contig);
    if (k->tma || k->att_wgmma) cJSON_AddStringToObject(oo, "wgmma_major", o->k_contig ? "K" : "MN");
    else cJSON_AddStringToObject(oo, "ldmatrix", o->k_contig ? "x4" : k->mma_k == 8 ? "none (ld.shared.b32)" : "x4.trans");
    if (o->kstep) cJSON_AddStringToObject(oo, "k_step", o->kstep_str);
    else cJSON_AddNullToObject(oo, "k_step");
    cJSON_AddBoolToObject(oo, "k_walk", o->walk);
    if (o->walk) cJSON_AddBoolToObject(oo, "guards_32", o->g32);
    if (o->walk) cJSON_AddNumberToObject(oo, "guard_mask_bits", o->gmask);
    if (o->walk) cJSON_AddBoolToObject(oo, "k_part_32", o->kpart32);
    if (o->kpart32) {
      arena T;
      arena_init(&T);
      cJSON_AddStringToObject(oo, "k_part_span", sx_str(&T, o->kspan));
      arena_free(&T);
    }
    if (k->attention && side > 0) {
      if (o->rstep) cJSON_AddStringToObject(oo, "row_step", o->rstep_str);
      else cJSON_AddNullToObject(oo, "row_step");
    }
    cJSON_AddItemToArray(ops, oo);
  }
  cJSON *tails = cJSON_AddArrayToObject(g, "tail_predicates");
  for (int i = 0; i < k->v.ntail; i++) cJSON_AddItemToArray(tails, cJSON_CreateString(k->v.tail[i]));
}

static void dump_stmts(cJSON *g, const gpu_kernel *k) {
  cJSON *st = cJSON_AddArrayToObject(g, "stmts");
  int depth = 0;
  for (int i = 0; i < k->nst; i++) {
    const gpu_stmt *s = &k->st[i];
    cJSON *o = cJSON_CreateObject();
    cJSON *b = cJSON_AddObjectToObject(o, STMT_NAMES[s->k]);
    cJSON_AddStringToObject(b, "what", s->what);
    if (s->detail) cJSON_AddStringToObject(b, "detail", s->detail);
    if (s->nin) {
      cJSON *in = cJSON_AddArrayToObject(b, "in_token");
      for (int j = 0; j < s->nin; j++) cJSON_AddItemToArray(in, cJSON_CreateString(s->in[j]));
    }
    if (s->out) cJSON_AddStringToObject(b, "out_token", s->out);
    if (s->fixed_slot) {
      cJSON_AddNumberToObject(b, "slot", s->slot);
      if (s->k == GS_MBAR_WAIT) cJSON_AddStringToObject(b, "parity", s->flip ? "ph ^ 1" : "ph");
    }
    dump_render_fields(b, s, depth, k->rows);
    depth += (s->k == GS_LOOP) - (s->k == GS_END_LOOP);
    cJSON_AddItemToArray(st, o);
  }
}

cJSON *gpuir_dump(const gpu_kernel *k) {
  cJSON *root = cJSON_CreateObject();
  cJSON *g = cJSON_AddObjectToObject(root, "gpu_ir");
  cJSON_AddStringToObject(g, "kernel", k->name);
  cJSON_AddStringToObject(g, "arch", k->plan.arch);
  cJSON_AddStringToObject(g, "skeleton", algo_template(k->algo));
  cJSON_AddStringToObject(g, "algo_choice", algo_name(k->algo));
  if (k->plan.split_k > 1) cJSON_AddNumberToObject(g, "split_k", k->plan.split_k);
  if (k->rows) {
    dump_rows(g, k);
  } else {
    dump_tile(g, k);
    dump_operands(g, k);
  }
  dump_stmts(g, k);
  return root;
}

/* ---- the row skeleton ------------------------------------------------------------ */

const sx *gpuir_read_step(arena *A, const region *r, const rexpr *rd, const char *x) {
  if (rd->k != RX_READ) return NULL;
  const sx *off = gpuir_offset(A, &r->in[rd->input], rd->map);
  if (sx_has_overflow(off)) return NULL;
  kshift ks = {A, x};
  const sx *d = sx_sub(A, sx_subst(A, off, shift_k, &ks), off);
  return sx_has_vars(d) ? NULL : d;
}
