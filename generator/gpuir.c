/* GPU IR (spec §9): what the skeletons of skel/ build on.  The statements
 * (gpuir_push) and shared tiles, the operands' views and the common parts of
 * their walks, the epilogue's widths and row steps, the sm90a skeletons'
 * barriers, setmaxnreg and the setup and producer checks they share, the
 * checks every kernel passes (gpuir_verify, then the skeleton's own through
 * skel_of), and the dump.  Each skeleton's builder, checks and renderer are
 * its file of skel/. */
#include "gpuir.h"
#include "gpuir_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "skel/skel.h"
#include "strbuf.h"

/* Appends a statement; the pointer it returns is good until the next one
 * (for the fields the renderer reads). */
gpu_stmt *gpuir_push(gpu_kernel *k, arena *A, gpu_stmt_kind kind, const char *what, const char *detail, int out,
                     int nin, int in0, int in1) {
  gpu_stmt s = {
      .k = kind, .what = what, .detail = detail, .nin = nin, .in = {in0, in1, 0, 0}, .out = out, .lo = -1, .hi = -1};
  ARENA_PUSH(A, k->st, k->nst, k->cap_st, s);
  return &k->st[k->nst - 1];
}

/* The kernel's token of that name, or a new one (its family: `family`,
 * or itself when -1). */
static int tok_intern(gpu_kernel *k, arena *A, const char *name, int family, bool carried) {
  if (k->ntok == 0) {
    gpu_token none = {"-", 0, false};
    ARENA_PUSH(A, k->tok, k->ntok, k->cap_tok, none);
  }
  for (int i = 1; i < k->ntok; i++)
    if (strcmp(k->tok[i].name, name) == 0) return i;
  gpu_token t = {name, family < 0 ? k->ntok : family, carried};
  ARENA_PUSH(A, k->tok, k->ntok, k->cap_tok, t);
  return k->ntok - 1;
}

int gpuir_tok(gpu_kernel *k, arena *A, const char *name) { return tok_intern(k, A, name, -1, false); }

int gpuir_tok_at(gpu_kernel *k, arena *A, const char *family, const char *at) {
  int f = gpuir_tok(k, A, family);
  return tok_intern(k, A, arena_printf(A, "%s[%s]", family, at), f, true);
}

int gpuir_tok_n(gpu_kernel *k, arena *A, const char *family, int n) {
  int f = gpuir_tok(k, A, family);
  return tok_intern(k, A, arena_printf(A, "%s%d", family, n), f, false);
}

const char *gpuir_tok_name(const gpu_kernel *k, int tok) { return tok > 0 && tok < k->ntok ? k->tok[tok].name : "-"; }

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

int gpuir_width_sides(const gpu_kernel *k) { return skel_shape_of(k) == SKEL_ATTENTION ? 3 : 2; }

const region_memref *gpuir_width_operand(const gpu_kernel *k, int side, const gpu_operand **o, const gpu_view **gv) {
  *o = side == 2 ? &k->V : side ? &k->B : &k->A;
  *gv = side == 2 ? &k->v2 : &k->v;
  return &(*gv)->r->in[(*o)->input];
}

/* x is a multiple of w for every value of its atoms */
static bool sx_multiple_of(const sx *x, int64_t w) {
  if (x->c0 % w) return false;
  for (int i = 0; i < x->nterms; i++)
    if (x->terms[i].coef % w) return false;
  return true;
}

void static_widths(gpu_kernel *k, arena *A) {
  int w = k->vecs[0];
  if (k->nvec < 2) return;
  for (int side = 0; side < gpuir_width_sides(k); side++) {
    const gpu_operand *o;
    const gpu_view *gv;
    const region_memref *m = gpuir_width_operand(k, side, &o, &gv);
    if (m->signature || o->contig_axis < 0) return;
    /* its row strides (the chain passes a value's row length as its ld) */
    const sx *st = m->shape[m->rank - 1];
    for (int d = m->rank - 2; d >= 0; d--) {
      if (!sx_multiple_of(st, w)) return;
      st = sx_mul(A, st, m->shape[d]);
    }
    int ng = o->k_contig ? gv->nk : (side == 0 ? gv->nm : gv->nn);
    if (ng > 1 && !sx_multiple_of(gv->r->it[o->contig_axis].size, w)) return;
  }
  k->nvec = 1;
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
  gpu_stmt *st = gpuir_push(
      k, A, GS_MMA,
      k->mma_k == 8 ? "mma.sync.m16n8k8.row.col.f32.tf32.tf32.f32"
                    : arena_printf(A, "mma.sync.m16n8k16.row.col.f32.%s", dtype_name(k->T)),
      arena_printf(A, "warp tile %dx%d, %s%s", k->plan.tile[0] / k->plan.warps_m, k->plan.tile[1] / k->plan.warps_n,
                   k_steps(A, k, lo, hi), ahead ? ", fragments loaded a tile ahead" : ""),
      gpuir_tok(k, A, "tMMA"), 0, 0, 0);
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
void mbar_init(gpu_kernel *k, arena *A, gpu_mbar which, const char *what, int arrivals, const char *detail, int out) {
  gpu_stmt *s = gpuir_push(k, A, GS_MBAR_INIT, what, detail, out, 0, 0, 0);
  s->mbar = which, s->lo = arrivals;
}

/* A role's SetMaxNReg: the consumers' budget up, or the producer's down. */
void setmaxnreg(gpu_kernel *k, arena *A, bool consumers) {
  int regs = consumers ? k->consumer_regs : k->producer_regs;
  gpu_stmt *s = gpuir_push(k, A, GS_SETMAXNREG, consumers ? "setmaxnreg.inc" : "setmaxnreg.dec",
                           arena_printf(A, "%d", regs), 0, 0, 0, 0);
  s->lo = regs, s->role = consumers ? GROLE_CONSUMERS : GROLE_PRODUCER;
}

/* Both producers: TMA boxes (tma_wgmma) or gathered cp.async chunks
 * (cp_async_wgmma); the consumers and the epilogue are the same. */

/* ---- attention ------------------------------------------------------------------- */

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

/* Whether the element offsets of a BM x BN tile keep mask mk's lane value
 * exact: |cm| BM + |cn| BN inside GPUIR_LANE_MASK_SPAN (cm out of it when
 * the lane holds a value per row). */
bool lane_span_ok(const gpu_mask *mk, bool rows, int BM, int BN) {
  int64_t cm = rows ? 0 : mk->cm, cn = mk->cn;
  return cm <= GPUIR_LANE_MASK_SPAN && cm >= -GPUIR_LANE_MASK_SPAN && cn <= GPUIR_LANE_MASK_SPAN &&
         cn >= -GPUIR_LANE_MASK_SPAN && (cm < 0 ? -cm : cm) * BM + (cn < 0 ? -cn : cn) * BN < GPUIR_LANE_MASK_SPAN;
}

/* ---- sm90a attention (wgmma_softmax) -------------------------------------------------- */

/* The sm80 row's view, operands, softmax and epilogue (gpuir_build_attention),
 * then this row's launch, shared layout and statements. */

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


/* The consumers' role (-1: none) and where their k-loop's statements
 * begin, after the setup's (k->nst when there is no role). */
static int sm90a_consumers_role(const gpu_kernel *k) {
  for (int i = 0; i < k->nst; i++)
    if (k->st[i].k == GS_ROLE && k->st[i].role == GROLE_CONSUMERS) return i;
  return -1;
}
int sm90a_consumers_from(const gpu_kernel *k, const sm90a_lists *l) {
  int role = sm90a_consumers_role(k);
  int n = l->nconsumers;
  return role < 0 || role + n > k->nst ? k->nst : role + n;
}

/* The statements st[i..] against want[0..nwant): kinds, operands,
 * barriers, roles, budgets and arrival counts. */
static bool setup_matches(const gpu_kernel *k, const sm90a_lists *l, int i, const setup_step *want, int nwant,
                          diag_list *dl) {
  for (int j = 0; j < nwant; j++, i++) {
    const setup_step *w = &want[j];
    const gpu_stmt *s = i < k->nst ? &k->st[i] : NULL;
    /* a full barrier completes on the TMA's one arrival (with its bytes)
     * or on each gathering producer thread's; the consumers release an
     * empty one each (256); Q's is the TMA's */
    int arrivals = w->mbar == GMBAR_EMPTY ? 256 : w->mbar == GMBAR_FULL ? l->full_arrivals : 1;
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
                  l->setup_name, i, w->what, gpuir_stmt_name(w->k), more);
      return false;
    }
  }
  return true;
}

bool verify_sm90a_setup(const gpu_kernel *k, const sm90a_lists *l, diag_list *dl) {
  if (!setup_matches(k, l, 0, l->setup, l->nsetup, dl)) return false;
  int role = sm90a_consumers_role(k);
  if (role < 0) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the sm90a consumers' role is missing");
    return false;
  }
  return setup_matches(k, l, role, l->consumers, l->nconsumers, dl);
}


/* The producer role's statements: exactly the list its renderer writes
 * (the skeleton's l->producer), from the role's setmaxnreg to the
 * consumers' role. */
bool verify_sm90a_producer(const gpu_kernel *k, const sm90a_lists *l, diag_list *dl) {
  const producer_step *want = l->producer;
  int nwant = l->nproducer;
  const char *who = l->producer_name;
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


/* The k-tile of ring statement s (gpu_stmt.ring) relative to its loop's
 * variable, in [0, S); -1 outside that range (no stage of the ring). */
static int ring_tile(const gpu_stmt *s, int S) { return s->tile >= 0 && s->tile < S ? s->tile : -1; }

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
 * iteration.  A copy of tile d (gpu_stmt.tile: kt+d) writes stage
 * (kt+d) % S; a load of tile e made `back` iterations earlier read stage
 * (kt-back+e) % S.  The walk goes back at most S iterations (the ring's
 * period).  Rings are told apart by gpu_stmt.ring, which the skeletons set
 * where they make the statements: A's and B's rings, each attention pass's
 * ring of K and V tiles; the prologue's copies (before the loops) and
 * attention's Q (no ring) are not checked here.
 * A pass's first copy (ring_first, outside the loops) lands in the stage
 * the loops before it leave current, which turns with the tiles they ran,
 * a count no statement fixes: every path back from it to a fragment load
 * of any ring must cross a bar.sync.  The staging tile's write (StageAcc)
 * overlays the ring, and attention's Q tile: every path back from it to
 * any fragment load must cross a bar.sync too. */
bool verify_stage_reuse(const gpu_kernel *k, diag_list *dl) {
  int S = k->plan.stages, n = k->nst;
  if (S < 1 || n == 0) return true;
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
    /* the staging tile's write (StageAcc) overlays every tile fragments
     * are loaded from: any earlier fragment load conflicts with it */
    bool staging = k->st[c].k == GS_STAGE_ACC;
    bool copy = k->st[c].k == GS_CP_ASYNC && k->st[c].ring > 0;
    bool first = copy && up[c] < 0 && k->st[c].ring_first;
    int d = copy && up[c] >= 0 ? ring_tile(&k->st[c], S) : -1;
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
                    k->st[c].what, c, s->what, i, gpuir_tok_name(k, s->nin ? s->in[0] : 0),
                    back == 0   ? ""
                    : back == 1 ? ", the iteration before"
                                : ", an earlier iteration");
        ok = false;
        continue;
      }
      int e = frag && !staging && s->ring > 0 && up[i] >= 0 ? ring_tile(s, S) : -1;
      if (first && e >= 0) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                    "copy %s (statement %d, %s), a pass's first tile, lands in a ring stage that %s (statement %d, "
                    "%s) may read fragments from (the loops before it ran a tile count no statement fixes), with no "
                    "bar.sync between them",
                    k->st[c].what, c, gpuir_tok_name(k, k->st[c].out), s->what, i, gpuir_tok_name(k, s->in[0]));
        ok = false;
      } else if (e >= 0 && s->ring == k->st[c].ring && ((e - back - d) % S + S) % S == 0) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                    "copy %s (statement %d, %s) refills the ring stage that %s (statement %d, %s%s) reads fragments "
                    "from, with no bar.sync between them",
                    k->st[c].what, c, gpuir_tok_name(k, k->st[c].out), s->what, i, gpuir_tok_name(k, s->in[0]),
                    back == 0   ? ""
                    : back == 1 ? ", the iteration before"
                                : ", an earlier iteration");
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

/* the full-width epilogue: 16-byte stores that cover the staging tile of
 * BM x BN outputs of type out in whole rows, every one of the nt threads
 * that store it the same number of rows */
bool verify_epilogue_width(const gpu_kernel *k, int BN, dtype out, int nt, diag_list *dl) {
  bool ok = true;
  if (k->epi_vec) {
    int BM = k->plan.tile[0], ev = k->epi_vec;
    int tpr = BN % ev == 0 ? BN / ev : 0;
    if (ev * dtype_bytes(out) != 16 || ev % 4 || !tpr || nt % tpr || BM % (nt / tpr)) {
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
bool verify_lane_masks(const gpu_kernel *k, diag_list *dl) {
  bool ok = true;
  if (k->lane_mask)
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
 * wgmma) after the wait that covers its copy, the statements taken in
 * `order` (NULL: their own). */
bool gpuir_verify_token_order(const gpu_kernel *k, const int *order, const char *where, diag_list *dl) {
  /* per token: produced so far, covered by a wait so far, made by an
   * epilogue step (a register token: P's fragments); per family: an
   * instance of it produced so far */
  size_t nt = (size_t)k->ntok + 1;
  unsigned char *flags = calloc(nt, 1);
  enum { PRODUCED = 1, WAITED = 2, REG = 4, FAMILY = 8 };
  if (!flags) {
    diag_report(dl, D_INTERNAL, where, NULL, "out of memory verifying the statements");
    return false;
  }
  bool ok = true;
  for (int o = 0; o < k->nst; o++) {
    int i = order ? order[o] : o;
    const gpu_stmt *s = &k->st[i];
    for (int t = 0; t < s->nin; t++) {
      int tok = s->in[t];
      if (tok <= 0 || tok >= k->ntok) {
        diag_report(dl, D_INTERNAL, where, NULL, "statement %d (%s) names token %d, not one of the kernel's %d", i,
                    s->what, tok, k->ntok > 0 ? k->ntok - 1 : 0);
        ok = false;
        continue;
      }
      /* a loop-carried token is produced by any instance of its family
       * before it: the prologue's (tA0) or a refill (tA[kt+S-1]) */
      bool have = (flags[tok] & PRODUCED) || (k->tok[tok].carried && (flags[k->tok[tok].family] & FAMILY));
      if (!have) {
        diag_report(dl, D_INTERNAL, where, NULL, "statement %d (%s) uses token %s before it is produced", i, s->what,
                    gpuir_tok_name(k, tok));
        ok = false;
      }
      if (s->k == GS_WAIT || s->k == GS_MBAR_WAIT) flags[tok] |= WAITED;
      /* a tile read (ldmatrix, wgmma) after the wait that covers its copy;
       * a register token needs none */
      if ((s->k == GS_LDMATRIX || s->k == GS_WGMMA) && !(flags[tok] & (REG | WAITED))) {
        diag_report(dl, D_INTERNAL, where, NULL, "%s reads tile %s before a wait covers it",
                    s->k == GS_WGMMA ? "wgmma" : "ldmatrix", gpuir_tok_name(k, tok));
        ok = false;
      }
    }
    if (s->out > 0 && s->out < k->ntok) {
      flags[s->out] |= PRODUCED | (s->k == GS_EPILOGUE ? REG : 0);
      flags[k->tok[s->out].family] |= FAMILY;
    } else if (s->out) {
      diag_report(dl, D_INTERNAL, where, NULL, "statement %d (%s) produces token %d, not one of the kernel's", i,
                  s->what, s->out);
      ok = false;
    }
  }
  free(flags);
  return ok;
}

/* Every statement consumes and produces as many tokens as gpuir.def says. */
static bool verify_arity(const gpu_kernel *k, diag_list *dl) {
  static const struct {
    int in_min, in_max;
    gpu_tok_out out;
  } ARITY[] = {
#define S(e, name, in_min, in_max, out, doc) {in_min, in_max, out},
#include "gpuir.def"
#undef S
  };
  bool ok = true;
  for (int i = 0; i < k->nst; i++) {
    const gpu_stmt *s = &k->st[i];
    if (s->k < 0 || s->k >= GS__COUNT) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "statement %d has no kind (%d)", i, (int)s->k);
      ok = false;
      continue;
    }
    bool in_ok = s->nin >= ARITY[s->k].in_min && s->nin <= ARITY[s->k].in_max;
    bool out_ok = ARITY[s->k].out == GTOK_MAY || (ARITY[s->k].out == GTOK_ONE) == (s->out != 0);
    if (!in_ok || !out_ok) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                  "statement %d (%s %s) consumes %d tokens and %s one; gpuir.def says %d..%d and %s", i,
                  gpuir_stmt_name(s->k), s->what ? s->what : "", s->nin, s->out ? "produces" : "does not produce",
                  ARITY[s->k].in_min, ARITY[s->k].in_max,
                  ARITY[s->k].out == GTOK_ONE    ? "one"
                  : ARITY[s->k].out == GTOK_NONE ? "none"
                                                 : "one or none");
      ok = false;
    }
  }
  return ok;
}

/* split-K: the epilogue runs once, in the second kernel (reduce), on the
 * sum of the partials it loads; the first kernel stores its staged partial */
static bool verify_split_k(const gpu_kernel *k, bool reduce, diag_list *dl) {
  bool ok = true;
  if (k->plan.split_k > 1) {
    int nepi = 0, nld = 0;
    for (int i = 0; i < k->nst; i++) {
      nepi += k->st[i].k == GS_EPILOGUE;
      nld += k->st[i].k == GS_LD_GLOBAL && nepi == 0;
    }
    int nt = 32 * k->plan.warps_m * k->plan.warps_n;
    bool parts_ok = !reduce || (k->split_parts >= 1 && (int64_t)k->split_parts * nt * 4 >=
                                                                    (int64_t)k->plan.tile[0] * k->plan.tile[1]);
    if (!parts_ok) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                  "split-K kernel %s: %d CTAs of %d threads a tile do not cover its %dx%d partials in float4 columns",
                  k->name, k->split_parts, nt, k->plan.tile[0], k->plan.tile[1]);
      ok = false;
    }
    if (reduce ? nepi != 1 || nld != 1 || k->smem != 0 || k->nvec != 1 : nepi != 0 || !k->reduce) {
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
static bool verify_ends_in_store(const gpu_kernel *k, bool reduce, diag_list *dl) {
  bool ok = true;
  int last = k->nst - 1 - (reduce && k->nst > 1 && k->st[k->nst - 1].k == GS_END_LOOP);
  if (k->nst == 0 || k->st[last].k != GS_ST_GLOBAL) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the skeleton does not end in a store");
    ok = false;
  }
  return ok;
}

bool gpuir_verify_stores(const gpu_kernel *k, bool reduce, diag_list *dl) {
  bool ok = verify_split_k(k, reduce, dl);
  ok &= verify_ends_in_store(k, reduce, dl);
  return ok;
}

bool gpuir_verify(const gpu_kernel *k, diag_list *dl) {
  const skel_ops *sk = skel_of(k->algo);
  if (!sk) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the kernel's algo_choice %d has no skeleton", (int)k->algo);
    return false;
  }
  /* every verifier runs, so that each reports what it finds: the shared
   * ones, then the skeleton's own (skel/) */
  bool ok = gpuir_verify_smem(k, dl);
  ok &= verify_operand_guards(k, dl);
  ok &= verify_arity(k, dl);
  ok &= gpuir_verify_token_order(k, NULL, "GPU IR", dl);
  ok &= sk->verify(k, dl);
  return ok;
}

bool gpuir_add_fused(gpu_kernel *k, arena *A, const char *value, const char *from, const char *why) {
  if (k->algo != ALGO_ROW_REDUCE || k->nfused >= GPUIR_MAX_FUSED || k->nst < 1 || k->st[0].k != GS_ROW_BEGIN) return false;
  gpu_stmt s = {.k = GS_FUSED,
                .what = value,
                .detail = arena_printf(A, "registers (from region %s): %s", from, why),
                .nin = 1,
                .in = {gpuir_tok(k, A, "tRow")},
                .out = gpuir_tok(k, A, arena_printf(A, "tF.%s", value))};
  ARENA_PUSH(A, k->st, k->nst, k->cap_st, s);
  /* after RowBegin and the Fused statements before it */
  int at = 1 + k->nfused;
  memmove(&k->st[at + 1], &k->st[at], sizeof(gpu_stmt) * (size_t)(k->nst - 1 - at));
  k->st[at] = s;
  k->fused[k->nfused++] = value;
  return true;
}

static const char *const STMT_NAMES[] = {
#define S(e, name, in_min, in_max, out, doc) name,
#include "gpuir.def"
#undef S
};
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

/* The dump's parts, which the skeletons' dumps (skel_ops.dump) are made
 * of: a tile's launch, attention's head dims and masks, the chunk widths, a
 * contraction's mma and widths, the sm90a register budgets, the operands,
 * the statements. */
void dump_tile_head(cJSON *g, const gpu_kernel *k) {
  cJSON *t = cJSON_AddArrayToObject(g, "tile");
  for (int i = 0; i < 3; i++) cJSON_AddItemToArray(t, cJSON_CreateNumber(k->plan.tile[i]));
  cJSON_AddNumberToObject(g, "stages", k->plan.stages);
  char wt[32];
  snprintf(wt, sizeof wt, "%dx%d", k->plan.tile[0] / k->plan.warps_m, k->plan.tile[1] / k->plan.warps_n);
  cJSON_AddStringToObject(g, "warp_tile", wt);
  cJSON_AddNumberToObject(g, "threads", k->threads);
  cJSON_AddNumberToObject(g, "smem_bytes", k->smem);
}

void dump_attention_tile(cJSON *g, const gpu_kernel *k) {
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

void dump_vecs(cJSON *g, const gpu_kernel *k) {
  cJSON *v = cJSON_AddArrayToObject(g, "vec_variants");
  for (int i = 0; i < k->nvec; i++) cJSON_AddItemToArray(v, cJSON_CreateNumber(k->vecs[i]));
}

void dump_math(cJSON *g, const gpu_kernel *k) { cJSON_AddStringToObject(g, "math", k->math_ieee ? "ieee" : "approx"); }

void dump_sm90a_regs(cJSON *g, const gpu_kernel *k) {
  cJSON *mr = cJSON_AddObjectToObject(g, "setmaxnreg");
  cJSON_AddNumberToObject(mr, "producer", k->producer_regs);
  cJSON_AddNumberToObject(mr, "consumers", k->consumer_regs);
  cJSON_AddNumberToObject(g, "consumer_unroll", k->consumer_unroll);
}

/* the operands A and B (sides 2), or Q, K and V (3: attention, K's and V's
 * row steps too); wgmma: their majors, else their ldmatrix */
void dump_operands(cJSON *g, const gpu_kernel *k, int sides, bool wgmma) {
  cJSON *ops = cJSON_AddArrayToObject(g, "operands");
  for (int side = 0; side < sides; side++) {
    const gpu_operand *o = side == 2 ? &k->V : side ? &k->B : &k->A;
    const region *r = side == 2 ? k->v2.r : k->r;
    cJSON *oo = cJSON_CreateObject();
    cJSON_AddStringToObject(oo, "role", side == 2 ? "V" : side ? "B" : "A");
    cJSON_AddStringToObject(oo, "tensor", o->tensor);
    cJSON_AddStringToObject(oo, "contiguous", o->contig_axis >= 0 ? r->it[o->contig_axis].name : "none");
    cJSON_AddBoolToObject(oo, "k_contiguous", o->k_contig);
    if (wgmma) cJSON_AddStringToObject(oo, "wgmma_major", o->k_contig ? "K" : "MN");
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
    if (sides == 3 && side > 0) {
      if (o->rstep) cJSON_AddStringToObject(oo, "row_step", o->rstep_str);
      else cJSON_AddNullToObject(oo, "row_step");
    }
    cJSON_AddItemToArray(ops, oo);
  }
  cJSON *tails = cJSON_AddArrayToObject(g, "tail_predicates");
  for (int i = 0; i < k->v.ntail; i++) cJSON_AddItemToArray(tails, cJSON_CreateString(k->v.tail[i]));
}

/* the statements; rows: with the row skeleton's fields (pass, load, guards) */
void dump_stmts(cJSON *g, const gpu_kernel *k, bool rows) {
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
      for (int j = 0; j < s->nin; j++) cJSON_AddItemToArray(in, cJSON_CreateString(gpuir_tok_name(k, s->in[j])));
    }
    if (s->out) cJSON_AddStringToObject(b, "out_token", gpuir_tok_name(k, s->out));
    if (s->fixed_slot) {
      cJSON_AddNumberToObject(b, "slot", s->slot);
      if (s->k == GS_MBAR_WAIT) cJSON_AddStringToObject(b, "parity", s->flip ? "ph ^ 1" : "ph");
    }
    dump_render_fields(b, s, depth, rows);
    depth += (s->k == GS_LOOP) - (s->k == GS_END_LOOP);
    cJSON_AddItemToArray(st, o);
  }
}

/* A contraction's dump (the sm80 and sm90a contractions', the split-K
 * reduce's): its tile, its mma (wgmma: with the register budgets) and
 * widths, its operands and statements. */
void dump_contraction(cJSON *g, const gpu_kernel *k, bool wgmma) {
  dump_tile_head(g, k);
  dump_vecs(g, k);
  if (wgmma) {
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
  dump_math(g, k);
  if (wgmma) dump_sm90a_regs(g, k);
  dump_operands(g, k, 2, wgmma);
  dump_stmts(g, k, false);
}

cJSON *gpuir_dump(const gpu_kernel *k) {
  cJSON *root = cJSON_CreateObject();
  cJSON *g = cJSON_AddObjectToObject(root, "gpu_ir");
  cJSON_AddStringToObject(g, "kernel", k->name);
  cJSON_AddStringToObject(g, "arch", arch_name(k->plan.arch));
  cJSON_AddStringToObject(g, "skeleton", algo_template(k->algo));
  cJSON_AddStringToObject(g, "algo_choice", algo_name(k->algo));
  if (k->plan.split_k > 1) cJSON_AddNumberToObject(g, "split_k", k->plan.split_k);
  /* the rest is the skeleton's: its launch, its tile or rows, operands and statements */
  const skel_ops *sk = skel_of(k->algo);
  if (sk) sk->dump(g, k);
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
