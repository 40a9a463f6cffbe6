/* IndexBook: construction by the §4.4 update rules, align_params,
 * verification (§4.3) and dump (§4.5). */
#include "indexbook.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A value seen as a view of its root: the index into the root per root axis,
 * over the viewing value's axis names, and the in-bounds guards. */
typedef struct view {
  int root;              /* entry index */
  const char *via;       /* the view value, or NULL for the root itself */
  int n;
  const sx **map;
  int ng;
  ib_guard *g;
  double pad;
} view;

static const char *axname(arena *A, int i) { return arena_printf(A, "i%d", i); }
static const char *redname(arena *A, int i) { return arena_printf(A, "r%d", i); }

static ib_entry *add_entry(indexbook *b, const char *value, int uop, ib_kind kind) {
  ib_entry e = {0};
  e.value = value;
  e.uop = uop;
  e.kind = kind;
  ARENA_PUSH(b->A, b->e, b->n, b->cap, e);
  return &b->e[b->n - 1];
}

static ib_axis *new_axes(indexbook *b, int rank, const sx *const *shape, const char *const *labels) {
  ib_axis *ax = ARENA_ARRAY(b->A, ib_axis, rank > 0 ? rank : 1);
  for (int i = 0; i < rank; i++) {
    ax[i].id = b->next_axis_id++;
    ax[i].name = axname(b->A, i);
    ax[i].label = labels ? labels[i] : NULL;
    ax[i].size = shape[i];
    ax[i].kind = AX_ITER;
  }
  return ax;
}

int ib_find(const indexbook *b, const char *value) {
  for (int i = 0; i < b->n; i++)
    if (strcmp(b->e[i].value, value) == 0) return i;
  return -1;
}

const ib_axis *ib_axis_by_name(const ib_entry *e, const char *name) {
  for (int i = 0; i < e->rank; i++)
    if (strcmp(e->axes[i].name, name) == 0) return &e->axes[i];
  for (int i = 0; i < e->nred; i++)
    if (strcmp(e->red[i].name, name) == 0) return &e->red[i];
  return NULL;
}

/* ---- substitution helpers --------------------------------------------------- */

typedef struct subst {
  int n;
  const char **from;
  const sx **to;
} subst;

static const sx *subst_fn(void *ctx, sx_atom_kind kind, const char *name) {
  subst *s = ctx;
  if (kind != SXA_VAR) return NULL;
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->from[i], name) == 0) return s->to[i];
  return NULL;
}

/* Ranges of an entry's axes, for simplification: [0, size-1] when the size
 * is a known integer. */
typedef struct rng_ctx {
  const ib_axis *axes;
  int n;
  const ib_axis *red;
  int nred;
} rng_ctx;

static bool range_fn(void *ctx, sx_atom_kind kind, const char *name, int64_t *lo, int64_t *hi) {
  rng_ctx *r = ctx;
  if (kind != SXA_VAR) return false;
  for (int pass = 0; pass < 2; pass++) {
    const ib_axis *ax = pass ? r->red : r->axes;
    int n = pass ? r->nred : r->n;
    for (int i = 0; i < n; i++)
      if (strcmp(ax[i].name, name) == 0) {
        int64_t s;
        if (!sx_is_int(ax[i].size, &s) || s < 1) return false;
        *lo = 0;
        *hi = s - 1;
        return true;
      }
  }
  return false;
}

static const sx *simp(indexbook *b, const ib_entry *e, const sx *x) {
  rng_ctx r = {e->axes, e->rank, e->red, e->nred};
  return sx_simplify(b->A, x, range_fn, &r);
}

/* Guard that is always true over the entry's axis ranges. */
static bool guard_trivial(const ib_entry *e, const ib_guard *g) {
  rng_ctx r = {e->axes, e->rank, e->red, e->nred};
  int64_t lo, hi, glo, ghi;
  if (!sx_bounds(g->e, range_fn, &r, &lo, &hi)) return false;
  if (!sx_is_int(g->lo, &glo) || !sx_is_int(g->hi, &ghi)) return false;
  return lo >= glo && hi < ghi;
}

/* The view through which `entry` is read.  A non_scop view ends the
 * composition: it is read as a root of its own. */
static view view_of(indexbook *b, int entry) {
  ib_entry *e = &b->e[entry];
  view v = {0};
  if (e->kind == IBK_VIEW && !e->non_scop) {
    ib_input *in = &e->in[0];
    v.root = in->entry;
    v.via = e->value;
    v.n = in->n;
    v.map = in->map;
    v.ng = in->nguards;
    v.g = in->guards;
    v.pad = in->pad_value;
    return v;
  }
  v.root = entry;
  v.n = e->rank;
  v.map = ARENA_ARRAY(b->A, const sx *, e->rank > 0 ? e->rank : 1);
  for (int i = 0; i < e->rank; i++) v.map[i] = sx_var(b->A, e->axes[i].name);
  return v;
}

/* Compose: `src_idx[k]` gives source axis k in terms of the new entry's
 * axes; the result is v with every source axis variable substituted. */
static view compose(indexbook *b, const ib_entry *src, view v, const sx *const *src_idx, const ib_entry *dst) {
  subst s = {src->rank, ARENA_ARRAY(b->A, const char *, src->rank + 1),
             ARENA_ARRAY(b->A, const sx *, src->rank + 1)};
  for (int k = 0; k < src->rank; k++) {
    s.from[k] = src->axes[k].name;
    s.to[k] = src_idx[k];
  }
  view r = v;
  r.map = ARENA_ARRAY(b->A, const sx *, v.n > 0 ? v.n : 1);
  for (int i = 0; i < v.n; i++) r.map[i] = simp(b, dst, sx_subst(b->A, v.map[i], subst_fn, &s));
  r.g = ARENA_ARRAY(b->A, ib_guard, v.ng > 0 ? v.ng : 1);
  r.ng = 0;
  for (int i = 0; i < v.ng; i++) {
    ib_guard g = {simp(b, dst, sx_subst(b->A, v.g[i].e, subst_fn, &s)), v.g[i].lo, v.g[i].hi};
    if (!guard_trivial(dst, &g)) r.g[r.ng++] = g;
  }
  return r;
}

static void add_guard(indexbook *b, view *v, const ib_entry *dst, const sx *e, const sx *lo, const sx *hi) {
  ib_guard g = {e, lo, hi};
  if (guard_trivial(dst, &g)) return;
  for (int i = 0; i < v->ng; i++)
    if (sx_equal(v->g[i].e, e) && sx_equal(v->g[i].lo, lo) && sx_equal(v->g[i].hi, hi)) return;
  ib_guard *ng = ARENA_ARRAY(b->A, ib_guard, v->ng + 1);
  if (v->ng) memcpy(ng, v->g, sizeof(ib_guard) * (size_t)v->ng);
  ng[v->ng++] = g;
  v->g = ng;
}

static bool map_affine(const view *v, const char **why, arena *A) {
  for (int i = 0; i < v->n; i++)
    if (!sx_is_affine(v->map[i])) {
      *why = arena_printf(A, "index %s is not quasi-affine", sx_str(A, v->map[i]));
      return false;
    }
  for (int i = 0; i < v->ng; i++)
    if (!sx_is_affine(v->g[i].e) || !sx_is_affine(v->g[i].lo) || !sx_is_affine(v->g[i].hi)) {
      *why = arena_printf(A, "guard on %s is not quasi-affine", sx_str(A, v->g[i].e));
      return false;
    }
  return true;
}

static ib_input input_from_view(indexbook *b, const view *v) {
  ib_input in = {0};
  const char *why = NULL;
  in.map_kind = map_affine(v, &why, b->A) ? IBM_LINEAR : IBM_INDEX_EXPR;
  in.entry = v->root;
  in.value = b->e[v->root].value;
  in.via = v->via;
  in.n = v->n;
  in.map = v->map;
  in.nguards = v->ng;
  in.guards = v->g;
  in.pad_value = v->pad;
  return in;
}

/* ---- reshape: linearize and re-decompose, group by group ------------------------ */

/* Source axis indices of a RESHAPE in terms of the new axes.  Axes are
 * matched in groups whose element counts agree; within a group the new
 * index is linearized (L = sum o_j * stride'_j) and decomposed
 * (s_i = floor(L / stride_i) mod size_i, with mod as L - q*floor(L/q)). */
static void reshape_index(indexbook *b, const ib_entry *src, ib_entry *dst, const sx **out) {
  arena *A = b->A;
  int i = 0, j = 0, ns = src->rank, nd = dst->rank;
  while (i < ns || j < nd) {
    /* size-1 axes on either side map to/from 0 */
    if (i < ns && sx_is_one(src->axes[i].size)) {
      out[i++] = sx_int(A, 0);
      continue;
    }
    if (j < nd && sx_is_one(dst->axes[j].size)) {
      j++;
      continue;
    }
    if (i >= ns || j >= nd) break;
    int i0 = i, j0 = j;
    const sx *ps = src->axes[i++].size, *pd = dst->axes[j++].size;
    int guard = 0;
    while (!sx_equal(ps, pd) && guard++ < 64) {
      /* extend the side whose product is "smaller": integers compare, and a
       * symbolic product that is a factor of the other's grows that side */
      int64_t a, c;
      bool grow_src;
      if (sx_is_int(ps, &a) && sx_is_int(pd, &c)) grow_src = a < c;
      else grow_src = j >= nd || (i < ns && ps->nterms <= pd->nterms);
      if (grow_src && i < ns) ps = sx_mul(A, ps, src->axes[i++].size);
      else if (j < nd) pd = sx_mul(A, pd, dst->axes[j++].size);
      else if (i < ns) ps = sx_mul(A, ps, src->axes[i++].size);
      else break;
    }
    /* linear index of the group from the new axes */
    const sx *L = sx_int(A, 0), *stride = sx_int(A, 1);
    for (int k = j - 1; k >= j0; k--) {
      if (!sx_is_one(dst->axes[k].size))
        L = sx_add(A, L, sx_mul(A, sx_var(A, dst->axes[k].name), stride));
      stride = sx_mul(A, stride, dst->axes[k].size);
    }
    stride = sx_int(A, 1);
    for (int k = i - 1; k >= i0; k--) {
      const sx *q = sx_floordiv(A, L, stride);
      out[k] = k == i0 ? q : sx_mod(A, q, src->axes[k].size);
      out[k] = simp(b, dst, out[k]);
      stride = sx_mul(A, stride, src->axes[k].size);
    }
  }
  while (i < ns) out[i++] = sx_int(A, 0);
}

/* Floor atoms of the decomposition, recorded as the entry's div guards. */
static void collect_floors(indexbook *b, ib_entry *e, const sx *x) {
  for (int t = 0; t < x->nterms; t++) {
    const sx_atom *a = x->terms[t].atom;
    if (a->kind != SXA_FLOOR) continue;
    sx *one = ARENA_NEW(b->A, sx);
    sx_term *term = ARENA_NEW(b->A, sx_term);
    term->coef = 1;
    term->atom = a;
    one->nterms = 1;
    one->terms = term;
    bool dup = false;
    for (int i = 0; i < e->ndiv_guards; i++) dup |= sx_equal(e->div_guards[i], one);
    if (!dup) {
      const sx **ng = ARENA_ARRAY(b->A, const sx *, e->ndiv_guards + 1);
      if (e->ndiv_guards) memcpy(ng, e->div_guards, sizeof(*ng) * (size_t)e->ndiv_guards);
      ng[e->ndiv_guards++] = one;
      e->div_guards = ng;
    }
    collect_floors(b, e, a->a);
  }
}

/* ---- building -------------------------------------------------------------------- */

static void finish_view(indexbook *b, ib_entry *e, view v) {
  const char *why = NULL;
  ib_input in = input_from_view(b, &v);
  e->nin = 1;
  e->in = ARENA_NEW(b->A, ib_input);
  e->in[0] = in;
  e->map_kind = in.map_kind;
  if (in.map_kind == IBM_INDEX_EXPR) {
    map_affine(&v, &why, b->A);
    e->non_scop = true;
    e->non_scop_why = why;
  }
  for (int i = 0; i < v.n; i++) collect_floors(b, e, v.map[i]);
}

static void build_movement(indexbook *b, int ui, ib_entry *e, diag_list *dl) {
  const tiny_dag *d = b->dag;
  const tiny_uop *u = &d->u[ui];
  arena *A = b->A;
  int se = b->of_uop[u->src[0]];
  const ib_entry *src = &b->e[se];
  view v = view_of(b, se);
  const char *const *slab = NULL;
  if (src->rank) {
    const char **l = ARENA_ARRAY(A, const char *, src->rank);
    bool any = false;
    for (int i = 0; i < src->rank; i++) any |= (l[i] = src->axes[i].label) != NULL;
    if (any) slab = l;
  }
  const char **lab = NULL;
  if (u->labels) lab = (const char **)u->labels;
  else if (slab && (u->op == TINY_PAD || u->op == TINY_SHRINK || u->op == TINY_FLIP || u->op == TINY_EXPAND)) {
    lab = (const char **)slab;
  } else if (slab && u->op == TINY_PERMUTE) {
    lab = ARENA_ARRAY(A, const char *, u->rank);
    for (int i = 0; i < u->rank; i++) lab[i] = slab[u->perm[i]];
  }
  e->rank = u->rank;
  e->axes = new_axes(b, u->rank, u->shape, lab);
  const sx **idx = ARENA_ARRAY(A, const sx *, src->rank + 1);
  const sx *o[TINY_MAX_RANK];
  for (int i = 0; i < u->rank; i++) o[i] = sx_var(A, e->axes[i].name);
  switch (u->op) {
  case TINY_PERMUTE:
    for (int i = 0; i < u->rank; i++) idx[u->perm[i]] = o[i];
    break;
  case TINY_EXPAND:
    for (int i = 0; i < u->rank; i++) {
      bool bc = sx_is_one(src->axes[i].size) && !sx_is_one(u->shape[i]);
      idx[i] = bc ? sx_int(A, 0) : o[i];
      if (bc) e->axes[i].kind = AX_BROADCAST;
    }
    break;
  case TINY_PAD:
    for (int i = 0; i < u->rank; i++) idx[i] = sx_sub(A, o[i], u->lo[i]);
    break;
  case TINY_SHRINK:
    for (int i = 0; i < u->rank; i++) idx[i] = sx_add(A, u->lo[i], sx_scale(A, o[i], u->step[i]));
    break;
  case TINY_FLIP:
    for (int i = 0; i < u->rank; i++) idx[i] = u->flip[i] ? sx_sub(A, sx_add_int(A, src->axes[i].size, -1), o[i]) : o[i];
    break;
  case TINY_VIEW: {
    subst s = {u->rank, ARENA_ARRAY(A, const char *, u->rank), ARENA_ARRAY(A, const sx *, u->rank)};
    for (int i = 0; i < u->rank; i++) {
      s.from[i] = arena_printf(A, "v%d", i);
      s.to[i] = o[i];
    }
    for (int k = 0; k < src->rank; k++) idx[k] = sx_subst(A, u->vmap[k], subst_fn, &s);
    break;
  }
  case TINY_RESHAPE:
    reshape_index(b, src, e, idx);
    break;
  default:
    DLC_ASSERT(0);
  }
  if (u->op == TINY_PAD && v.ng > 0 && v.pad != u->cval) {
    /* two pads with different values cannot share one pad piece: read the
     * inner padded view as a value of its own, so that its pad piece keeps
     * its value (composing would give it the outer pad's value) */
    e->non_scop = true;
    e->non_scop_why = "nested pads with different values";
    view id = {.root = se, .n = src->rank, .map = ARENA_ARRAY(A, const sx *, src->rank > 0 ? src->rank : 1)};
    for (int i = 0; i < src->rank; i++) id.map[i] = sx_var(A, src->axes[i].name);
    v = id;
  }
  view r = compose(b, src, v, idx, e);
  if (u->op == TINY_PAD) {
    r.pad = u->cval;
    for (int i = 0; i < u->rank; i++) {
      int64_t l, h;
      if (sx_is_int(u->lo[i], &l) && sx_is_int(u->hi[i], &h) && l == 0 && h == 0) continue;
      add_guard(b, &r, e, simp(b, e, idx[i]), sx_int(A, 0), src->axes[i].size);
      /* compose may have folded: re-express the guard through the source view */
    }
    /* guards added above are on the source value's index; express them over
     * the source's own view is not needed: idx[i] is already over new axes */
  }
  bool was_non_scop = e->non_scop;
  const char *why0 = e->non_scop_why;
  finish_view(b, e, r);
  if (was_non_scop) e->non_scop = true, e->non_scop_why = why0;
  if (u->materialize && !e->non_scop) {
    /* the layout pass's conversion: materialized in its own order, which is
     * what the pass inserted it for (no W2103: it is affine) */
    e->non_scop = true;
    e->non_scop_why = arena_printf(A, "a layout conversion of %s, materialized", u->materialize);
    return;
  }
  if (e->non_scop)
    diag_report(dl, D_NON_SCOP, arena_printf(A, "IndexBook[%s]", e->value), NULL,
                "%s %s: %s; it becomes a region boundary", tiny_op_name(u->op), e->value, e->non_scop_why);
}

/* GATHER (seed 003's LoadIndex): out[i] = x[i with axis = index[i]], 0 where
 * the index is out of range.  in[0] reads x through x's own view with
 * `load_var` on the gathered axis, in[1] reads the index through its view. */
static void build_gather(indexbook *b, int ui, ib_entry *e) {
  const tiny_uop *u = &b->dag->u[ui];
  arena *A = b->A;
  int se = b->of_uop[u->src[0]], ie = b->of_uop[u->src[1]];
  const ib_entry *src = &b->e[se], *isrc = &b->e[ie];
  e->rank = u->rank;
  e->axes = new_axes(b, u->rank, u->shape, NULL);
  e->load_var = "ld";
  const sx **idx = ARENA_ARRAY(A, const sx *, u->rank + 1);
  for (int i = 0; i < u->rank; i++) idx[i] = i == u->axis ? sx_var(A, e->load_var) : sx_var(A, e->axes[i].name);
  view v = view_of(b, se);
  if (v.ng > 0 && v.pad != 0.0) {
    /* a padded source keeps its pad value: read it as a value of its own
     * (the out-of-range piece below is 0) */
    view id = {.root = se, .n = src->rank, .map = ARENA_ARRAY(A, const sx *, src->rank > 0 ? src->rank : 1)};
    for (int i = 0; i < src->rank; i++) id.map[i] = sx_var(A, src->axes[i].name);
    double pad = v.pad;
    v = id;
    /* ... and so materialized: a region boundary, like an IndexExpr view */
    ib_entry *se_e = &b->e[se];
    if (se_e->kind == IBK_VIEW && !se_e->non_scop) {
      se_e->non_scop = true;
      se_e->non_scop_why = arena_printf(A, "a padded view read by a gather, with a pad value (%g) other than the gather's 0",
                                        pad);
    }
  }
  view r = compose(b, src, v, idx, e);
  add_guard(b, &r, e, sx_var(A, e->load_var), sx_int(A, 0), src->axes[u->axis].size);
  r.pad = 0.0;
  const sx **iidx = ARENA_ARRAY(A, const sx *, u->rank + 1);
  for (int i = 0; i < u->rank; i++) iidx[i] = sx_var(A, e->axes[i].name);
  view ri = compose(b, isrc, view_of(b, ie), iidx, e);
  e->nin = 2;
  e->in = ARENA_ARRAY(A, ib_input, 2);
  e->in[0] = input_from_view(b, &r);
  e->in[1] = input_from_view(b, &ri);
  e->in[0].map_kind = e->map_kind = IBM_INDEX_EXPR;
  e->non_scop = true;
  e->non_scop_why = arena_printf(A, "a gather: axis %d of %s is indexed by the values of %s", u->axis,
                                 b->e[r.root].value, b->e[ri.root].value);
}

static const char **labels_from_entry(arena *A, const ib_entry *e) {
  if (!e->rank) return NULL;
  const char **l = ARENA_ARRAY(A, const char *, e->rank);
  bool any = false;
  for (int i = 0; i < e->rank; i++) any |= (l[i] = e->axes[i].label) != NULL;
  return any ? l : NULL;
}

static void build_alu(indexbook *b, int ui, ib_entry *e) {
  const tiny_uop *u = &b->dag->u[ui];
  arena *A = b->A;
  const char **lab = (const char **)u->labels;
  for (int k = 0; k < u->nsrc && !lab; k++) {
    const ib_entry *s = &b->e[b->of_uop[u->src[k]]];
    if (s->rank == u->rank) lab = labels_from_entry(A, s);
  }
  e->rank = u->rank;
  /* unary ops inherit their operand's axes (spec §4.4) */
  const ib_entry *s0 = &b->e[b->of_uop[u->src[0]]];
  if (u->nsrc == 1 && s0->rank == u->rank) {
    e->axes = ARENA_ARRAY(A, ib_axis, u->rank > 0 ? u->rank : 1);
    memcpy(e->axes, s0->axes, sizeof(ib_axis) * (size_t)u->rank);
  } else {
    e->axes = new_axes(b, u->rank, u->shape, lab);
  }
  e->nin = u->nsrc;
  e->in = ARENA_ARRAY(A, ib_input, u->nsrc);
  for (int k = 0; k < u->nsrc; k++) {
    const tiny_uop *s = &b->dag->u[u->src[k]];
    if (s->op == TINY_CONST) {
      e->in[k].is_const = true;
      e->in[k].value = s->out;
      e->in[k].entry = b->of_uop[u->src[k]];
      continue;
    }
    view v = view_of(b, b->of_uop[u->src[k]]);
    e->in[k] = input_from_view(b, &v);
  }
}

static void build_reduce(indexbook *b, int ui, ib_entry *e) {
  const tiny_uop *u = &b->dag->u[ui];
  arena *A = b->A;
  int se = b->of_uop[u->src[0]];
  const ib_entry *src = &b->e[se];
  view v = view_of(b, se);
  bool red[TINY_MAX_RANK] = {0};
  for (int k = 0; k < u->naxes; k++) red[u->axes[k]] = true;
  e->rank = u->rank;
  e->axes = ARENA_ARRAY(A, ib_axis, u->rank > 0 ? u->rank : 1);
  e->nred = u->naxes;
  e->red = ARENA_ARRAY(A, ib_axis, u->naxes > 0 ? u->naxes : 1);
  e->reduce_axes = ARENA_ARRAY(A, int, u->naxes > 0 ? u->naxes : 1);
  const sx **idx = ARENA_ARRAY(A, const sx *, src->rank + 1);
  int nk = 0, nr = 0;
  for (int i = 0; i < src->rank; i++) {
    if (red[i]) {
      ib_axis ax = src->axes[i];
      ax.name = redname(A, nr);
      ax.kind = AX_REDUCE;
      e->reduce_axes[nr] = ax.id;
      e->red[nr] = ax;
      idx[i] = sx_var(A, ax.name);
      nr++;
    } else {
      ib_axis ax = src->axes[i]; /* the id is kept; the name is reassigned */
      ax.name = axname(A, nk);
      ax.kind = AX_ITER;
      e->axes[nk] = ax;
      idx[i] = sx_var(A, ax.name);
      nk++;
    }
  }
  view r = compose(b, src, v, idx, e);
  e->nin = 1;
  e->in = ARENA_NEW(A, ib_input);
  e->in[0] = input_from_view(b, &r);
}

static int label_pos(const char *const *l, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (strcmp(l[i], s) == 0) return i;
  return -1;
}

/* A CONTRACT: the product entry over out + reduce axes, then the reduction. */
static void build_contract(indexbook *b, int ui) {
  const tiny_uop *u = &b->dag->u[ui];
  const tiny_contract *c = u->con;
  arena *A = b->A;
  ib_entry *p = add_entry(b, arena_printf(A, "%s.prod", u->out), -1, IBK_PRODUCT);
  int np = c->no + c->nk;
  const sx **ps = ARENA_ARRAY(A, const sx *, np);
  const char **pl = ARENA_ARRAY(A, const char *, np);
  const tiny_uop *L = &b->dag->u[u->src[0]], *R = &b->dag->u[u->src[1]];
  for (int i = 0; i < np; i++) {
    pl[i] = i < c->no ? c->out_idx[i] : c->reduce_idx[i - c->no];
    int j = label_pos(c->lhs_idx, c->nl, pl[i]);
    ps[i] = j >= 0 ? L->shape[j] : R->shape[label_pos(c->rhs_idx, c->nr, pl[i])];
  }
  p->rank = np;
  p->axes = new_axes(b, np, ps, pl);
  p->nin = 2;
  p->in = ARENA_ARRAY(A, ib_input, 2);
  for (int side = 0; side < 2; side++) {
    int se = b->of_uop[u->src[side]];
    const ib_entry *src = &b->e[se];
    const char *const *idxl = side ? c->rhs_idx : c->lhs_idx;
    const sx **idx = ARENA_ARRAY(A, const sx *, src->rank + 1);
    for (int k = 0; k < src->rank; k++) idx[k] = sx_var(A, p->axes[label_pos(pl, np, idxl[k])].name);
    view v = compose(b, src, view_of(b, se), idx, p);
    p->in[side] = input_from_view(b, &v);
  }
  int pidx = b->n - 1;
  ib_entry *e = add_entry(b, u->out, ui, IBK_REDUCE);
  b->of_uop[ui] = b->n - 1;
  p = &b->e[pidx];
  e->rank = c->no;
  e->axes = ARENA_ARRAY(A, ib_axis, c->no > 0 ? c->no : 1);
  e->nred = c->nk;
  e->red = ARENA_ARRAY(A, ib_axis, c->nk);
  e->reduce_axes = ARENA_ARRAY(A, int, c->nk);
  e->nin = 1;
  e->in = ARENA_NEW(A, ib_input);
  e->in[0].entry = pidx;
  e->in[0].value = p->value;
  e->in[0].n = np;
  e->in[0].map = ARENA_ARRAY(A, const sx *, np);
  for (int i = 0; i < np; i++) {
    ib_axis ax = p->axes[i];
    if (i < c->no) {
      ax.name = axname(A, i);
      e->axes[i] = ax;
    } else {
      ax.name = redname(A, i - c->no);
      ax.kind = AX_REDUCE;
      e->red[i - c->no] = ax;
      e->reduce_axes[i - c->no] = ax.id;
    }
    e->in[0].map[i] = sx_var(A, ax.name);
  }
}

indexbook *ib_build(arena *A, const tiny_dag *d, diag_list *dl) {
  indexbook *b = ARENA_NEW(A, indexbook);
  b->A = A;
  b->dag = d;
  b->of_uop = ARENA_ARRAY(A, int, d->n > 0 ? d->n : 1);
  for (int ui = 0; ui < d->n; ui++) {
    const tiny_uop *u = &d->u[ui];
    ib_kind kind;
    switch (tiny_op_kind(u->op)) {
    case TK_LEAF: kind = IBK_LEAF; break;
    case TK_MOVE: kind = IBK_VIEW; break;
    case TK_ALU: kind = IBK_ALU; break;
    case TK_REDUCE: kind = IBK_REDUCE; break;
    case TK_CONTRACT: kind = IBK_REDUCE; break;
    default: kind = IBK_STORE; break;
    }
    if (u->op == TINY_CONTRACT) {
      build_contract(b, ui);
      continue;
    }
    ib_entry *e = add_entry(b, u->out, ui, kind);
    b->of_uop[ui] = b->n - 1;
    switch (kind) {
    case IBK_LEAF:
      e->rank = u->rank;
      e->axes = new_axes(b, u->rank, u->shape, u->labels);
      break;
    case IBK_VIEW:
      if (u->op == TINY_GATHER) build_gather(b, ui, e);
      else build_movement(b, ui, e, dl);
      break;
    case IBK_ALU: build_alu(b, ui, e); break;
    case IBK_REDUCE: build_reduce(b, ui, e); break;
    case IBK_STORE: {
      int se = b->of_uop[u->src[0]];
      e->rank = u->rank;
      e->axes = new_axes(b, u->rank, u->shape, labels_from_entry(A, &b->e[se]));
      view v = view_of(b, se);
      const sx **idx = ARENA_ARRAY(A, const sx *, u->rank + 1);
      for (int i = 0; i < u->rank; i++) idx[i] = sx_var(A, e->axes[i].name);
      view r = compose(b, &b->e[se], v, idx, e);
      e->nin = 1;
      e->in = ARENA_NEW(A, ib_input);
      e->in[0] = input_from_view(b, &r);
      break;
    }
    default: break;
    }
  }
  if (!ib_align_params(b, dl)) return NULL;
  if (!indexbook_verify(b, dl)) return NULL;
  return b;
}

/* ---- align_params ------------------------------------------------------------------ */

bool ib_align_params(indexbook *b, diag_list *dl) {
  const tiny_dag *d = b->dag;
  const fe_graph *g = d->fe;
  arena *A = b->A;
  bool ok = true;
  if (!g) return true;
  for (int i = 0; i < b->n; i++) {
    const ib_entry *e = &b->e[i];
    if (e->kind != IBK_STORE && e->kind != IBK_LEAF) continue;
    if (e->uop < 0) continue;
    const tiny_uop *u = &d->u[e->uop];
    if (!u->tensor) continue;
    int t = fe_find_tensor(g, u->tensor);
    if (t < 0) continue;
    const fe_tensor *ft = &g->tensors[t];
    if (ft->rank != e->rank) {
      diag_report(dl, D_AXIS_ALIGN, "IndexBook.align_params", NULL,
                  "'%s' is declared with rank %d but the graph computes rank %d", ft->name, ft->rank, e->rank);
      ok = false;
      continue;
    }
    for (int k = 0; k < e->rank; k++) {
      const sx *decl = ft->shape[k], *have = e->axes[k].size;
      /* bind a derived symbol (not in signature.dims) on first sight */
      if (decl->nterms == 1 && decl->c0 == 0 && decl->terms[0].coef == 1 &&
          decl->terms[0].atom->kind == SXA_PARAM && !fe_is_dim(g, decl->terms[0].atom->name)) {
        const char *sym = decl->terms[0].atom->name;
        int found = -1;
        for (int j = 0; j < b->nderived; j++)
          if (strcmp(b->dname[j], sym) == 0) found = j;
        if (found < 0) {
          const char **nn = ARENA_ARRAY(A, const char *, b->nderived + 1);
          const sx **nv = ARENA_ARRAY(A, const sx *, b->nderived + 1);
          if (b->nderived) {
            memcpy(nn, b->dname, sizeof(*nn) * (size_t)b->nderived);
            memcpy(nv, b->dval, sizeof(*nv) * (size_t)b->nderived);
          }
          nn[b->nderived] = sym;
          nv[b->nderived] = have;
          b->dname = nn;
          b->dval = nv;
          b->nderived++;
          continue;
        }
        decl = b->dval[found];
      }
      if (!sx_equal(decl, have)) {
        diag_report(dl, D_AXIS_ALIGN, "IndexBook.align_params", NULL,
                    "axis %s of '%s' has size %s by the op's shape rule, but the signature declares %s",
                    e->axes[k].name, ft->name, sx_str(A, have), sx_str(A, ft->shape[k]));
        ok = false;
      }
    }
  }
  /* every size is over signature dims */
  for (int i = 0; i < b->n && ok; i++) {
    const ib_entry *e = &b->e[i];
    for (int k = 0; k < e->rank; k++)
      for (int t = 0; t < e->axes[k].size->nterms; t++) {
        const sx_atom *at = e->axes[k].size->terms[t].atom;
        if (at->kind == SXA_PARAM && !fe_is_dim(g, at->name)) {
          diag_report(dl, D_AXIS_ALIGN, "IndexBook.align_params", NULL,
                      "axis %s of '%s' has size %s, with a symbol that is not in signature.dims",
                      e->axes[k].name, e->value, sx_str(A, e->axes[k].size));
          ok = false;
        }
      }
  }
  return ok;
}

/* ---- verification ------------------------------------------------------------------- */

static bool div_ok(const sx *x) {
  for (int t = 0; t < x->nterms; t++) {
    const sx_atom *a = x->terms[t].atom;
    if (a->kind == SXA_FLOOR && (a->den <= 0 || !div_ok(a->a))) return false;
  }
  return true;
}

bool indexbook_verify(const indexbook *b, diag_list *dl) {
  bool ok = true;
  arena *A = b->A;
#define FAIL(...)                                                                               \
  do {                                                                                          \
    diag_report(dl, D_INTERNAL, arena_printf(A, "IndexBook[%s]", e->value), NULL, __VA_ARGS__); \
    ok = false;                                                                                 \
  } while (0)
  for (int i = 0; i < b->n; i++) {
    const ib_entry *e = &b->e[i];
    /* 2: output axes are i0, i1, ... in order */
    for (int k = 0; k < e->rank; k++)
      if (strcmp(e->axes[k].name, arena_printf(A, "i%d", k)) != 0) FAIL("axis %d is named %s", k, e->axes[k].name);
    for (int k = 0; k < e->nin; k++) {
      const ib_input *in = &e->in[k];
      if (in->is_const) continue;
      const ib_entry *src = &b->e[in->entry];
      if (in->n != src->rank) FAIL("input %s: map has %d entries for rank %d", in->value, in->n, src->rank);
      /* 7: movement chains are composed: inputs name roots (a non_scop view
       * may read the view it cannot compose with) */
      if (src->kind == IBK_VIEW && !src->non_scop && !e->non_scop) FAIL("input %s is an uncomposed view", in->value);
      for (int m = 0; m < in->n; m++) {
        /* 1 and 5: affine + floordiv unless non_scop; 6: positive denominators */
        if (!sx_is_affine(in->map[m]) && !e->non_scop) FAIL("map %s is not quasi-affine", sx_str(A, in->map[m]));
        if (!div_ok(in->map[m])) FAIL("floordiv with a non-positive denominator");
        /* variables are the entry's own axes */
        for (int t = 0; t < in->map[m]->nterms; t++) {
          const sx_atom *a = in->map[m]->terms[t].atom;
          if (a->kind == SXA_VAR && !ib_axis_by_name(e, a->name) && !(e->load_var && strcmp(a->name, e->load_var) == 0))
            FAIL("map uses unknown variable %s", a->name);
        }
      }
      /* 3: broadcast axes appear in no guard */
      for (int gi = 0; gi < in->nguards; gi++)
        for (int ax = 0; ax < e->rank; ax++)
          if (e->axes[ax].kind == AX_BROADCAST && sx_mentions(in->guards[gi].e, SXA_VAR, e->axes[ax].name))
            FAIL("broadcast axis %s is guarded", e->axes[ax].name);
    }
    /* 4: reduce removes its axes and records their ids */
    if (e->kind == IBK_REDUCE) {
      if (e->nin != 1) FAIL("a reduction has one input");
      else {
        const ib_entry *src = &b->e[e->in[0].entry];
        for (int r = 0; r < e->nred; r++) {
          bool found = false;
          for (int k = 0; k < src->rank; k++) found |= src->axes[k].id == e->reduce_axes[r];
          for (int k = 0; k < e->rank; k++)
            if (e->axes[k].id == e->reduce_axes[r]) FAIL("reduced axis %d is still an output axis", e->reduce_axes[r]);
          if (!found && e->in[0].via == NULL && src->kind != IBK_LEAF)
            FAIL("reduce_axes id %d is not an axis of %s", e->reduce_axes[r], src->value);
        }
      }
    }
  }
#undef FAIL
  return ok;
}

/* ---- dump -------------------------------------------------------------------------------- */

char *ib_str_labeled(const indexbook *b, const ib_entry *e, const sx *x) {
  arena *A = b->A;
  int n = e->rank + e->nred;
  subst s = {0, ARENA_ARRAY(A, const char *, n + 1), ARENA_ARRAY(A, const sx *, n + 1)};
  for (int i = 0; i < n; i++) {
    const ib_axis *ax = i < e->rank ? &e->axes[i] : &e->red[i - e->rank];
    if (!ax->label) return sx_str(A, x);
    for (int j = 0; j < s.n; j++)
      if (strcmp(sx_str(A, s.to[j]), ax->label) == 0) return sx_str(A, x); /* labels collide */
    s.from[s.n] = ax->name;
    s.to[s.n++] = sx_var(A, ax->label);
  }
  return sx_str(A, sx_subst(A, x, subst_fn, &s));
}

static cJSON *size_json(arena *A, const sx *s) {
  int64_t v;
  if (sx_is_int(s, &v)) return cJSON_CreateNumber((double)v);
  return cJSON_CreateString(sx_str(A, s));
}

static const char *kind_name(ib_kind k) {
  static const char *const n[] = {"leaf", "view", "alu", "reduce", "product", "store"};
  return n[k];
}

static cJSON *axes_json(arena *A, const ib_axis *ax, int n) {
  static const char *const kinds[] = {"iter", "reduce", "broadcast"};
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; i < n; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", ax[i].id);
    cJSON_AddStringToObject(o, "name", ax[i].name);
    if (ax[i].label) cJSON_AddStringToObject(o, "label", ax[i].label);
    cJSON_AddItemToObject(o, "size", size_json(A, ax[i].size));
    cJSON_AddStringToObject(o, "kind", kinds[ax[i].kind]);
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

static cJSON *guard_json(const indexbook *b, const ib_entry *e, const ib_guard *g, bool labeled) {
  arena *A = b->A;
  cJSON *pair = cJSON_CreateArray();
  const char *ex = labeled ? ib_str_labeled(b, e, g->e) : sx_str(A, g->e);
  cJSON_AddItemToArray(pair, cJSON_CreateString(arena_printf(A, "%s<=%s", sx_str(A, g->lo), ex)));
  cJSON_AddItemToArray(pair, cJSON_CreateString(arena_printf(A, "%s<%s", ex, sx_str(A, g->hi))));
  return pair;
}

static cJSON *number_json(double v) {
  if (isinf(v)) return cJSON_CreateString(v < 0 ? "-inf" : "inf");
  return cJSON_CreateNumber(v);
}

const char *ib_map_kind_name(ib_map_kind k) { return k == IBM_LINEAR ? "linear" : "index_expr"; }

cJSON *ib_dump(const indexbook *b) {
  arena *A = b->A;
  cJSON *root = cJSON_CreateObject();
  cJSON *book = cJSON_AddObjectToObject(root, "index_book");
  for (int i = 0; i < b->n; i++) {
    const ib_entry *e = &b->e[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", kind_name(e->kind));
    if (e->uop >= 0) cJSON_AddStringToObject(o, "uop", tiny_op_name(b->dag->u[e->uop].op));
    cJSON_AddItemToObject(o, "axes", axes_json(A, e->axes, e->rank));
    cJSON *dom = cJSON_AddObjectToObject(o, "domain");
    cJSON *cons = cJSON_AddArrayToObject(dom, "constraints");
    for (int k = 0; k < e->rank; k++) {
      cJSON *pair = cJSON_CreateArray();
      cJSON_AddItemToArray(pair, cJSON_CreateString(arena_printf(A, "0<=%s", e->axes[k].name)));
      cJSON_AddItemToArray(pair, cJSON_CreateString(arena_printf(A, "%s<%s", e->axes[k].name, sx_str(A, e->axes[k].size))));
      cJSON_AddItemToArray(cons, pair);
    }
    if (e->kind == IBK_VIEW && e->in[0].nguards) {
      cJSON *pieces = cJSON_AddArrayToObject(dom, "pieces");
      cJSON *in = cJSON_CreateObject();
      cJSON_AddStringToObject(in, "kind", "in_bounds");
      cJSON *ic = cJSON_AddArrayToObject(in, "constraints");
      cJSON *icl = cJSON_AddArrayToObject(in, "constraints_by_label");
      for (int g = 0; g < e->in[0].nguards; g++) {
        cJSON_AddItemToArray(ic, guard_json(b, e, &e->in[0].guards[g], false));
        cJSON_AddItemToArray(icl, guard_json(b, e, &e->in[0].guards[g], true));
      }
      cJSON_AddItemToArray(pieces, in);
      cJSON *pad = cJSON_CreateObject();
      cJSON_AddStringToObject(pad, "kind", "pad");
      cJSON_AddItemToObject(pad, "value", number_json(e->in[0].pad_value));
      cJSON *pc = cJSON_AddArrayToObject(pad, "constraints");
      cJSON *el = cJSON_CreateArray();
      cJSON_AddItemToArray(el, cJSON_CreateString("else_pad_piece"));
      cJSON_AddItemToArray(pc, el);
      cJSON_AddItemToArray(pieces, pad);
    }
    if (e->ndiv_guards) {
      cJSON *dg = cJSON_AddArrayToObject(dom, "div_guards");
      for (int k = 0; k < e->ndiv_guards; k++) {
        const sx_atom *fl = e->div_guards[k]->terms[0].atom;
        const char *q = sx_str(A, e->div_guards[k]), *num = sx_str(A, fl->a);
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateString(arena_printf(A, "%lld*%s<=%s", (long long)fl->den, q, num)));
        cJSON_AddItemToArray(pair, cJSON_CreateString(arena_printf(A, "%s<%lld*%s+%lld", num, (long long)fl->den, q,
                                                                   (long long)fl->den)));
        cJSON_AddItemToArray(dg, pair);
      }
    }
    cJSON *ins = cJSON_AddArrayToObject(o, "inputs");
    for (int k = 0; k < e->nin; k++) {
      const ib_input *in = &e->in[k];
      cJSON *io = cJSON_CreateObject();
      cJSON_AddStringToObject(io, "value_id", in->value);
      if (in->is_const) {
        cJSON_AddStringToObject(io, "kind", "const");
        cJSON_AddItemToArray(ins, io);
        continue;
      }
      if (in->via) cJSON_AddStringToObject(io, "via", in->via);
      cJSON *m = cJSON_AddArrayToObject(io, "map");
      cJSON *ml = cJSON_AddArrayToObject(io, "map_by_label");
      for (int j = 0; j < in->n; j++) {
        cJSON_AddItemToArray(m, cJSON_CreateString(sx_str(A, in->map[j])));
        cJSON_AddItemToArray(ml, cJSON_CreateString(ib_str_labeled(b, e, in->map[j])));
      }
      if (in->map_kind != IBM_LINEAR) cJSON_AddStringToObject(io, "map_kind", ib_map_kind_name(in->map_kind));
      if (in->nguards && e->kind != IBK_VIEW) {
        cJSON *gs = cJSON_AddArrayToObject(io, "guards");
        for (int gi = 0; gi < in->nguards; gi++) cJSON_AddItemToArray(gs, guard_json(b, e, &in->guards[gi], false));
        cJSON_AddItemToObject(io, "else", number_json(in->pad_value));
      }
      cJSON_AddItemToArray(ins, io);
    }
    if (e->nred) {
      cJSON *ra = cJSON_AddArrayToObject(o, "reduce_axes");
      for (int k = 0; k < e->nred; k++) cJSON_AddItemToArray(ra, cJSON_CreateNumber(e->reduce_axes[k]));
      cJSON_AddItemToObject(o, "reduce_axis_info", axes_json(A, e->red, e->nred));
      if (e->uop >= 0) {
        const tiny_uop *u = &b->dag->u[e->uop];
        const char *op = u->op == TINY_CONTRACT || u->rop == RED_SUM ? "sum" : u->rop == RED_MAX ? "max" : "min";
        cJSON_AddStringToObject(o, "reduce_op", op);
        cJSON_AddStringToObject(o, "acc_dtype", dtype_name(u->dt));
      }
    }
    if (e->kind == IBK_VIEW) cJSON_AddStringToObject(o, "view_kind", ib_map_kind_name(e->map_kind));
    if (e->load_var) cJSON_AddStringToObject(o, "load_index", arena_printf(A, "%s = %s[...]", e->load_var, e->in[1].value));
    if (e->non_scop) {
      cJSON_AddBoolToObject(o, "non_scop", true);
      cJSON_AddStringToObject(o, "non_scop_why", e->non_scop_why);
    }
    cJSON_AddItemToObject(book, e->value, o);
  }
  if (b->nderived) {
    cJSON *dv = cJSON_AddObjectToObject(root, "derived_symbols");
    for (int i = 0; i < b->nderived; i++) cJSON_AddStringToObject(dv, b->dname[i], sx_str(A, b->dval[i]));
  }
  return root;
}
