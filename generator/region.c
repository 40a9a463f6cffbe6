/* Region Buffer SSA: formation from Poly-View blocks, SRNF normalization,
 * verification and dump (spec §6, §10 step 5). */
#include "region.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct builder {
  arena *A;
  region_set *rs;
  const poly_view *pv;
  const indexbook *ib;
  diag_list *dl;
  int *region_of_block;
  int *let_of_entry;   /* entry -> let in the current region, or -1 */
  bool *side;          /* entry -> a side statement, inlined where it is read */
} builder;

static rexpr *rx_new(arena *A, rx_kind k) {
  rexpr *e = ARENA_NEW(A, rexpr);
  e->k = k;
  e->input = e->let = -1;
  return e;
}

static int axis_index(const region *r, const char *name) {
  for (int i = 0; i < r->niters + r->nred; i++)
    if (strcmp(r->it[i].name, name) == 0) return i;
  return -1;
}

/* ---- region axes --------------------------------------------------------------- */

static void add_axis(builder *b, region *r, const char *name, const sx *size, bool reduce, int *cap) {
  if (axis_index(r, name) >= 0) return;
  region_axis ax = {name, size};
  int n = r->niters + r->nred;
  ARENA_PUSH(b->A, r->it, n, *cap, ax);
  if (reduce) r->nred++;
  else {
    /* iters stay before reduce axes */
    for (int i = n - 1; i > r->niters; i--) {
      region_axis t = r->it[i];
      r->it[i] = r->it[i - 1];
      r->it[i - 1] = t;
    }
    r->niters++;
  }
}

/* Entry axis name (i0.., r0..) -> region axis name (the statement's dims). */
typedef struct rn_ctx {
  const ib_entry *e;
  const char *const *dims;
  arena *A;
} rn_ctx;

static const sx *rn_fn(void *ctx, sx_atom_kind kind, const char *name) {
  rn_ctx *c = ctx;
  if (kind != SXA_VAR) return NULL;
  for (int i = 0; i < c->e->rank + c->e->nred; i++) {
    const ib_axis *ax = i < c->e->rank ? &c->e->axes[i] : &c->e->red[i - c->e->rank];
    if (strcmp(ax->name, name) == 0) return sx_var(c->A, c->dims[i]);
  }
  return NULL;
}

static const sx *rename_sx(builder *b, const pv_stmt *st, const sx *x) {
  rn_ctx c = {&b->ib->e[st->entry], st->dims, b->A};
  return sx_subst(b->A, x, rn_fn, &c);
}

typedef struct subst_t {
  int n;
  const char **from;
  const sx *const *to;
} subst_t;

static const sx *subst_f(void *ctx, sx_atom_kind kind, const char *name) {
  subst_t *s = ctx;
  if (kind != SXA_VAR) return NULL;
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->from[i], name) == 0) return s->to[i];
  return NULL;
}

/* Region axes an sx mentions, in order of first appearance. */
static void axes_of_sx(const region *r, const sx *x, int *ax, int *n) {
  for (int t = 0; t < x->nterms; t++) {
    const sx_atom *a = x->terms[t].atom;
    if (a->kind == SXA_VAR) {
      int i = axis_index(r, a->name);
      bool dup = false;
      for (int j = 0; j < *n; j++) dup |= ax[j] == i;
      if (i >= 0 && !dup) ax[(*n)++] = i;
    } else if (a->kind == SXA_FLOOR) {
      axes_of_sx(r, a->a, ax, n);
    } else if (a->kind == SXA_PROD) {
      for (int f = 0; f < a->nf; f++) {
        if (a->f[f]->kind != SXA_VAR) continue;
        int i = axis_index(r, a->f[f]->name);
        bool dup = false;
        for (int j = 0; j < *n; j++) dup |= ax[j] == i;
        if (i >= 0 && !dup) ax[(*n)++] = i;
      }
    }
  }
}

/* ---- expressions ------------------------------------------------------------------ */

static int memref_of(builder *b, region *r, int entry, int *cap) {
  for (int i = 0; i < r->nin; i++)
    if (r->in[i].entry == entry) return i;
  const ib_entry *e = &b->ib->e[entry];
  region_memref m = {0};
  m.entry = entry;
  m.rank = e->rank;
  m.shape = ARENA_ARRAY(b->A, const sx *, e->rank + 1);
  for (int i = 0; i < e->rank; i++) m.shape[i] = e->axes[i].size;
  m.alignment = 16;
  m.noalias = true;
  m.layout = "row_major";
  const tiny_uop *u = e->uop >= 0 ? &b->ib->dag->u[e->uop] : NULL;
  m.dt = u ? u->dt : DT_FP32;
  m.signature = u && u->op == TINY_BUFFER;
  m.name = m.signature ? u->tensor : e->value;
  ARENA_PUSH(b->A, r->in, r->nin, *cap, m);
  return r->nin - 1;
}

/* A read of `in` by statement `st`: Read, under Select when guarded. */
static rexpr *read_expr(builder *b, region *r, const pv_stmt *st, const ib_input *in, int *incap) {
  arena *A = b->A;
  rexpr *rd = rx_new(A, RX_READ);
  rd->input = memref_of(b, r, in->entry, incap);
  rd->dt = r->in[rd->input].dt;
  rd->nmap = in->n;
  rd->map = ARENA_ARRAY(A, const sx *, in->n + 1);
  int ax[32], n = 0;
  for (int i = 0; i < in->n; i++) {
    rd->map[i] = st ? rename_sx(b, st, in->map[i]) : in->map[i];
    if (n < 24) axes_of_sx(r, rd->map[i], ax, &n);
  }
  rd->nax = n;
  rd->ax = ARENA_ARRAY(A, int, n + 1);
  memcpy(rd->ax, ax, sizeof(int) * (size_t)n);
  if (!in->nguards) return rd;
  rexpr *s = rx_new(A, RX_SELECT);
  s->dt = rd->dt;
  s->ng = in->nguards;
  s->guards = ARENA_ARRAY(A, ib_guard, in->nguards);
  for (int g = 0; g < in->nguards; g++) {
    s->guards[g].e = st ? rename_sx(b, st, in->guards[g].e) : in->guards[g].e;
    s->guards[g].lo = in->guards[g].lo;
    s->guards[g].hi = in->guards[g].hi;
    if (n < 24) axes_of_sx(r, s->guards[g].e, ax, &n);
  }
  s->b = rd;
  s->c = rx_new(A, RX_CONST);
  s->c->dt = rd->dt;
  s->c->cval = in->pad_value;
  s->nax = n;
  s->ax = ARENA_ARRAY(A, int, n + 1);
  memcpy(s->ax, ax, sizeof(int) * (size_t)n);
  return s;
}

/* Make `e` vary over exactly `ax` (in that order): Transpose when the order
 * differs, BroadcastInDim when axes are missing (spec §6.4). */
static rexpr *conform(builder *b, rexpr *e, int nax, const int *ax) {
  arena *A = b->A;
  if (e->k == RX_CONST) return e;
  bool same = e->nax == nax;
  for (int i = 0; same && i < nax; i++) same = e->ax[i] == ax[i];
  if (same) return e;
  /* order e's axes as they appear in `ax` */
  int ord[32], no = 0;
  for (int i = 0; i < nax; i++)
    for (int j = 0; j < e->nax; j++)
      if (e->ax[j] == ax[i]) ord[no++] = j;
  bool inorder = true;
  for (int i = 0; i < no; i++) inorder &= ord[i] == i;
  if (!inorder && no == e->nax) {
    rexpr *t = rx_new(A, RX_TRANSPOSE);
    t->dt = e->dt;
    t->a = e;
    t->nax = e->nax;
    t->ax = ARENA_ARRAY(A, int, e->nax);
    t->perm = ARENA_ARRAY(A, int, e->nax);
    for (int i = 0; i < e->nax; i++) {
      t->perm[i] = ord[i];
      t->ax[i] = e->ax[ord[i]];
    }
    e = t;
  }
  if (e->nax == nax) return e;
  rexpr *bc = rx_new(A, RX_BCAST);
  bc->dt = e->dt;
  bc->a = e;
  bc->nax = nax;
  bc->ax = ARENA_ARRAY(A, int, nax);
  memcpy(bc->ax, ax, sizeof(int) * (size_t)nax);
  bc->bdims = ARENA_ARRAY(A, int, e->nax + 1);
  for (int j = 0; j < e->nax; j++)
    for (int i = 0; i < nax; i++)
      if (ax[i] == e->ax[j]) bc->bdims[j] = i;
  return bc;
}

static rexpr *let_ref(builder *b, region *r, int let) {
  rexpr *e = rx_new(b->A, RX_LET);
  e->let = let;
  e->dt = r->lets[let].e->dt;
  e->nax = r->lets[let].e->nax;
  e->ax = r->lets[let].e->ax;
  return e;
}

/* A side statement: pointwise work on region inputs only (e.g. a cast of the
 * bias), independent of everything else in the region.  It is inlined at
 * its reads, so that its axes are the reader's. */
static bool is_side(const builder *b, const region *r, int entry, const int *sts, int nsts) {
  const indexbook *ib = b->ib;
  const ib_entry *e = &ib->e[entry];
  if (e->kind != IBK_ALU) return false;
  for (int k = 0; k < e->nin; k++) {
    if (e->in[k].is_const) continue;
    int src = e->in[k].entry;
    bool in_region = false;
    for (int j = 0; j < nsts; j++) in_region |= b->pv->st[sts[j]].entry == src;
    if (in_region && !is_side(b, r, src, sts, nsts)) return false;
  }
  return true;
}

static rexpr *operand(builder *b, region *r, const pv_stmt *st, const ib_input *in, int *incap);

typedef struct sx_pair {
  const sx *a, *b;
} sx_pair;

/* Both operands of `e` are RANGE values: their indices, as region sx. */
static bool index_operands(builder *b, const ib_entry *e, const subst_t *sub, sx_pair *out) {
  const sx *v[2];
  for (int k = 0; k < 2; k++) {
    const ib_input *in = &e->in[k];
    if (in->is_const || in->nguards) return false;
    const ib_entry *src = &b->ib->e[in->entry];
    if (src->uop < 0 || b->ib->dag->u[src->uop].op != TINY_RANGE) return false;
    v[k] = sx_subst(b->A, in->map[b->ib->dag->u[src->uop].axis], subst_f, (void *)sub);
  }
  out->a = v[0];
  out->b = v[1];
  return true;
}

/* An index comparison (the causal mask) as a guard predicate:
 * a < b holds iff 0 <= b - a - 1. */
static rexpr *index_guard(builder *b, region *r, const sx_pair *cmp) {
  arena *A = b->A;
  rexpr *x = rx_new(A, RX_SELECT);
  x->ng = 1;
  x->guards = ARENA_NEW(A, ib_guard);
  x->guards->e = sx_add_int(A, sx_sub(A, cmp->b, cmp->a), -1);
  x->guards->lo = sx_int(A, 0);
  x->guards->hi = NULL; /* unbounded */
  x->b = rx_new(A, RX_CONST);
  x->b->dt = DT_BOOL;
  x->b->cval = 1;
  x->c = rx_new(A, RX_CONST);
  x->c->dt = DT_BOOL;
  x->dt = DT_BOOL;
  int gax[32], ng = 0;
  axes_of_sx(r, x->guards->e, gax, &ng);
  x->nax = ng;
  x->ax = ARENA_ARRAY(A, int, ng + 1);
  memcpy(x->ax, gax, sizeof(int) * (size_t)ng);
  return x;
}

/* The side statement `se` evaluated at the index `idx` (its axes -> region
 * expressions), as an expression tree. */
static rexpr *inline_side(builder *b, region *r, int se, const sx *const *idx, int *incap) {
  arena *A = b->A;
  const ib_entry *e = &b->ib->e[se];
  const tiny_uop *u = &b->ib->dag->u[e->uop];
  subst_t sub = {e->rank, ARENA_ARRAY(A, const char *, e->rank + 1), idx};
  for (int i = 0; i < e->rank; i++) sub.from[i] = e->axes[i].name;
  sx_pair cmp;
  if (u->op == TINY_CMPLT && index_operands(b, e, &sub, &cmp)) return index_guard(b, r, &cmp);
  rexpr *ops[3] = {0};
  int ax[32], nax = 0;
  for (int k = 0; k < e->nin; k++) {
    const ib_input *in = &e->in[k];
    if (in->is_const) {
      ops[k] = operand(b, r, NULL, in, incap);
      continue;
    }
    const sx **m = ARENA_ARRAY(A, const sx *, in->n + 1);
    for (int i = 0; i < in->n; i++) m[i] = sx_subst(A, in->map[i], subst_f, &sub);
    if (b->side[in->entry]) {
      ops[k] = inline_side(b, r, in->entry, m, incap);
    } else {
      ib_input x = *in;
      x.map = m;
      x.nguards = 0; /* guards of side reads: substituted below */
      if (in->nguards) {
        x.guards = ARENA_ARRAY(A, ib_guard, in->nguards);
        for (int g = 0; g < in->nguards; g++) {
          x.guards[g] = in->guards[g];
          x.guards[g].e = sx_subst(A, in->guards[g].e, subst_f, &sub);
        }
        x.nguards = in->nguards;
      }
      ops[k] = read_expr(b, r, NULL, &x, incap);
    }
    for (int i = 0; i < ops[k]->nax && nax < 24; i++) {
      bool dup = false;
      for (int j = 0; j < nax; j++) dup |= ax[j] == ops[k]->ax[i];
      if (!dup) ax[nax++] = ops[k]->ax[i];
    }
  }
  rexpr *x;
  if (0) {
  } else if (u->op == TINY_WHERE) {
    x = rx_new(A, RX_SELECT);
    x->a = ops[0], x->b = ops[1], x->c = ops[2];
  } else {
    x = rx_new(A, tiny_op_arity(u->op) == 1 ? RX_UNARY : RX_BINARY);
    x->op = u->op;
    x->a = ops[0], x->b = ops[1];
  }
  x->dt = u->dt;
  x->nax = nax;
  x->ax = ARENA_ARRAY(A, int, nax + 1);
  memcpy(x->ax, ax, sizeof(int) * (size_t)nax);
  for (int k = 0; k < 3; k++)
    if (x->k != RX_SELECT && ops[k] && ops[k]->k != RX_CONST) {
      if (k == 0) x->a = conform(b, x->a, nax, ax);
      if (k == 1) x->b = conform(b, x->b, nax, ax);
    }
  return x;
}

/* An operand of statement st: a let of this region, a constant, an inlined
 * side statement, or a read. */
static rexpr *operand(builder *b, region *r, const pv_stmt *st, const ib_input *in, int *incap) {
  if (in->is_const) {
    const tiny_uop *u = &b->ib->dag->u[b->ib->e[in->entry].uop];
    rexpr *c = rx_new(b->A, RX_CONST);
    c->dt = u->dt;
    c->cval = u->cval;
    c->crsqrt = u->crsqrt;
    return c;
  }
  if (b->side && b->side[in->entry] && st) {
    const sx **m = ARENA_ARRAY(b->A, const sx *, in->n + 1);
    for (int i = 0; i < in->n; i++) m[i] = rename_sx(b, st, in->map[i]);
    return inline_side(b, r, in->entry, m, incap);
  }
  int l = b->let_of_entry[in->entry];
  if (l >= 0 && !in->nguards) {
    /* a value of this region read at this statement's point, possibly through
     * a broadcasting view: each index must be the let's own axis */
    const rexpr *le = r->lets[l].e;
    bool ok = in->n == le->nax;
    for (int i = 0; ok && i < in->n; i++) {
      const sx *m = st ? rename_sx(b, st, in->map[i]) : in->map[i];
      const char *v = sx_as_var(m);
      ok = v && axis_index(r, v) == le->ax[i];
    }
    if (ok) return let_ref(b, r, l);
    diag_report(b->dl, D_GRAPH_SCHEMA, arena_printf(b->A, "Region[%s]", r->name),
                "This is a compiler bug; please report it.", "'%s' is read at shifted indices inside its region",
                r->lets[l].name);
  }
  return read_expr(b, r, st, in, incap);
}

static void stmt_axes(const region *r, const pv_stmt *st, const ib_entry *e, int *ax, int *n) {
  *n = 0;
  for (int i = 0; i < e->rank; i++) ax[(*n)++] = axis_index(r, st->dims[i]);
}

static int add_let(builder *b, region *r, const char *name, rexpr *e, int *cap) {
  region_let l = {name, e, false};
  ARENA_PUSH(b->A, r->lets, r->nlets, *cap, l);
  return r->nlets - 1;
}

/* ---- formation ---------------------------------------------------------------------- */

static bool block_joins(const builder *b, int bi, int *producer) {
  const poly_view *pv = b->pv;
  if (pv->blk[bi].kind != PVB_FUSED) return false;
  int prod = -1, n = 0;
  for (int e = 0; e < pv->nedge; e++)
    if (pv->edge[e].to == bi && pv->edge[e].from != prod) prod = pv->edge[e].from, n++;
  if (n != 1) return false;
  *producer = prod;
  return true;
}

static void mark_lets(const rexpr *e, bool *live) {
  if (!e) return;
  if (e->k == RX_LET) live[e->let] = true;
  mark_lets(e->a, live);
  mark_lets(e->b, live);
  mark_lets(e->c, live);
}

static void renumber_lets(rexpr *e, const int *map) {
  if (!e) return;
  if (e->k == RX_LET) e->let = map[e->let];
  renumber_lets(e->a, map);
  renumber_lets(e->b, map);
  renumber_lets(e->c, map);
}

static void mark_inputs(const rexpr *e, bool *used) {
  if (!e) return;
  if (e->k == RX_READ) used[e->input] = true;
  mark_inputs(e->a, used);
  mark_inputs(e->b, used);
  mark_inputs(e->c, used);
}

static void renumber_inputs(rexpr *e, const int *map) {
  if (!e) return;
  if (e->k == RX_READ) e->input = map[e->input];
  renumber_inputs(e->a, map);
  renumber_inputs(e->b, map);
  renumber_inputs(e->c, map);
}

/* Drop lets that no yield needs (e.g. a CAST the yield carries), and the
 * inputs only they read. */
static void remove_dead_lets(builder *b, region *r) {
  bool *live = calloc((size_t)r->nlets + 1, sizeof(bool));
  int *map = calloc((size_t)r->nlets + 1, sizeof(int));
  if (!live || !map) dlc_die_oom();
  for (int y = 0; y < r->nyields; y++) live[r->yields[y].let] = true;
  for (int l = r->nlets - 1; l >= 0; l--)
    if (live[l]) mark_lets(r->lets[l].e, live);
  int n = 0;
  for (int l = 0; l < r->nlets; l++) {
    map[l] = live[l] ? n : -1;
    if (live[l]) r->lets[n++] = r->lets[l];
  }
  for (int l = 0; l < n; l++) renumber_lets(r->lets[l].e, map);
  /* inputs no remaining let reads */
  bool *used = calloc((size_t)r->nin + 1, sizeof(bool));
  int *imap = calloc((size_t)r->nin + 1, sizeof(int));
  if (!used || !imap) dlc_die_oom();
  for (int l = 0; l < n; l++) mark_inputs(r->lets[l].e, used);
  int ni = 0;
  for (int i = 0; i < r->nin; i++) {
    imap[i] = used[i] ? ni : -1;
    if (used[i]) r->in[ni++] = r->in[i];
  }
  r->nin = ni;
  for (int l = 0; l < n; l++) renumber_inputs(r->lets[l].e, imap);
  free(used);
  free(imap);
  for (int y = 0; y < r->nyields; y++) r->yields[y].let = map[r->yields[y].let];
  if (r->acc_let >= 0) r->acc_let = map[r->acc_let];
  for (int e = 0; e < b->ib->n; e++)
    if (b->let_of_entry[e] >= 0 && b->let_of_entry[e] < r->nlets + 0) {
      /* only lets of this region are renumbered: they were created last */
    }
  r->nlets = n;
  free(live);
  free(map);
}

static bool epilogue_deps(const region *r, const rexpr *e) {
  if (!e) return true;
  if (e->k == RX_LET && e->let != r->acc_let && !r->lets[e->let].post_reduce) return false;
  return epilogue_deps(r, e->a) && epilogue_deps(r, e->b) && epilogue_deps(r, e->c);
}

static void build_region(builder *b, region *r) {
  arena *A = b->A;
  const poly_view *pv = b->pv;
  const indexbook *ib = b->ib;
  int axcap = 0, incap = 0, outcap = 0, letcap = 0, ycap = 0;
  r->acc_let = -1;
  /* statements of the region in program order */
  int *sts = ARENA_ARRAY(A, int, pv->nst + 1), nsts = 0;
  for (int si = 0; si < pv->nst; si++)
    for (int k = 0; k < r->nblocks; k++)
      if (pv->block_of_stmt[si] == r->blocks[k]) sts[nsts++] = si;
  /* axes: the main statement's output and reduce dims, then the dims of the
   * other statements (side statements are inlined where they are read) */
  const pv_block *first = &pv->blk[r->blocks[0]];
  int main_st = first->kind == PVB_CONTRACTION ? first->reduce_stmt : first->st[0];
  const ib_entry *me = &ib->e[pv->st[main_st].entry];
  for (int i = 0; i < me->rank; i++) add_axis(b, r, pv->st[main_st].dims[i], me->axes[i].size, false, &axcap);
  for (int i = 0; i < me->nred; i++) add_axis(b, r, pv->st[main_st].dims[me->rank + i], me->red[i].size, true, &axcap);
  bool *side = ARENA_ARRAY(A, bool, ib->n + 1);
  for (int k = 0; k < nsts; k++) {
    const pv_stmt *st = &pv->st[sts[k]];
    const ib_entry *e = &ib->e[st->entry];
    side[st->entry] = is_side(b, r, st->entry, sts, nsts);
    if (e->kind == IBK_PRODUCT || side[st->entry]) continue;
    for (int i = 0; i < e->rank; i++) add_axis(b, r, st->dims[i], e->axes[i].size, false, &axcap);
    for (int i = 0; i < e->nred; i++) add_axis(b, r, st->dims[e->rank + i], e->red[i].size, true, &axcap);
  }
  b->side = side;
  for (int k = 0; k < nsts; k++) {
    const pv_stmt *st = &pv->st[sts[k]];
    const ib_entry *e = &ib->e[st->entry];
    int ax[32], nax;
    stmt_axes(r, st, e, ax, &nax);
    rexpr *x = NULL;
    if (e->kind == IBK_PRODUCT || side[st->entry]) continue; /* C-CON1 / inlined at the read */
    if (e->kind == IBK_ALU && pv->block_of_stmt[sts[k]] >= 0 &&
        pv->blk[pv->block_of_stmt[sts[k]]].kind == PVB_CONTRACTION &&
        pv->blk[pv->block_of_stmt[sts[k]]].product_stmt == sts[k])
      continue; /* an unfolded mul feeding the contraction */
    if (e->kind == IBK_REDUCE) {
      const tiny_uop *u = &ib->dag->u[e->uop];
      x = rx_new(A, RX_REDUCE);
      x->rop = u->op == TINY_CONTRACT ? RED_SUM : u->rop;
      x->dt = u->dt;
      x->init = x->rop == RED_SUM ? 0.0 : x->rop == RED_MAX ? -INFINITY : INFINITY;
      x->nred = e->nred;
      x->red = ARENA_ARRAY(A, int, e->nred + 1);
      for (int i = 0; i < e->nred; i++) x->red[i] = axis_index(r, st->dims[e->rank + i]);
      const ib_entry *src = &ib->e[e->in[0].entry];
      int bax[32], nb = 0;
      for (int i = 0; i < nax; i++) bax[nb++] = ax[i];
      for (int i = 0; i < e->nred; i++) bax[nb++] = x->red[i];
      if (src->kind == IBK_PRODUCT || (src->kind == IBK_ALU && ib->dag->u[src->uop].op == TINY_MUL &&
                                       pv->stmt_of_entry[e->in[0].entry] >= 0 &&
                                       b->let_of_entry[e->in[0].entry] < 0)) {
        /* C-CON1: mul(Read, Read) directly in the body */
        const pv_stmt *ps = &pv->st[pv->stmt_of_entry[e->in[0].entry]];
        rexpr *mul = rx_new(A, RX_BINARY);
        mul->op = TINY_MUL;
        mul->a = read_expr(b, r, ps, &src->in[0], &incap);
        mul->b = read_expr(b, r, ps, &src->in[1], &incap);
        mul->dt = mul->a->dt; /* C-CON1: reads at the needed indices, no broadcast */
        mul->nax = nb;
        mul->ax = ARENA_ARRAY(A, int, nb);
        memcpy(mul->ax, bax, sizeof(int) * (size_t)nb);
        x->a = mul;
        r->acc_let = r->nlets; /* set below */
      } else {
        x->a = conform(b, operand(b, r, st, &e->in[0], &incap), nb, bax);
      }
      x->nax = nax;
      x->ax = ARENA_ARRAY(A, int, nax + 1);
      memcpy(x->ax, ax, sizeof(int) * (size_t)nax);
    } else if (e->kind == IBK_ALU) {
      const tiny_uop *u = &ib->dag->u[e->uop];
      rexpr *ops[3] = {0};
      for (int i = 0; i < e->nin; i++) ops[i] = conform(b, operand(b, r, st, &e->in[i], &incap), nax, ax);
      int ar = tiny_op_arity(u->op);
      if (u->op == TINY_WHERE) {
        x = rx_new(A, RX_SELECT);
        x->a = ops[0], x->b = ops[1], x->c = ops[2];
      } else {
        x = rx_new(A, ar == 1 ? RX_UNARY : RX_BINARY);
        x->op = u->op;
        x->a = ops[0], x->b = ops[1];
      }
      x->dt = u->dt;
      x->nax = nax;
      x->ax = ARENA_ARRAY(A, int, nax + 1);
      memcpy(x->ax, ax, sizeof(int) * (size_t)nax);
    } else if (e->kind == IBK_VIEW) {
      /* a non_scop view: this region only materializes it */
      x = conform(b, read_expr(b, r, st, &e->in[0], &incap), nax, ax);
    } else if (e->kind == IBK_STORE) {
      const tiny_uop *u = &ib->dag->u[e->uop];
      int l = b->let_of_entry[e->in[0].entry];
      if (l < 0) {
        x = conform(b, operand(b, r, st, &e->in[0], &incap), nax, ax);
        l = add_let(b, r, e->value, x, &letcap);
      }
      region_memref m = {0};
      const ib_entry *src = &ib->e[e->in[0].entry];
      m.name = u->tensor;
      m.entry = st->entry;
      m.dt = u->dt;
      m.rank = e->rank;
      m.shape = ARENA_ARRAY(A, const sx *, e->rank + 1);
      for (int i = 0; i < e->rank; i++) m.shape[i] = e->axes[i].size;
      m.alignment = 16;
      m.noalias = true;
      m.layout = "row_major";
      m.materialize = "gmem";
      m.signature = true;
      ARENA_PUSH(A, r->out, r->nout, outcap, m);
      /* the yield carries the cast: yield the CAST's operand when it is a let */
      region_yield y = {l, r->nout - 1, u->dt};
      rexpr *le = r->lets[l].e;
      if (le->k == RX_UNARY && le->op == TINY_CAST && le->a->k == RX_LET) y.let = le->a->let;
      (void)src;
      ARENA_PUSH(A, r->yields, r->nyields, ycap, y);
      continue;
    } else {
      continue;
    }
    int li = add_let(b, r, e->value, x, &letcap);
    if (r->acc_let == li || (r->acc_let < 0 && false)) r->acc_let = li;
    b->let_of_entry[st->entry] = li;
  }
  /* values read by other regions: outputs */
  for (int l = 0; l < r->nlets; l++) {
    int entry = -1;
    for (int e = 0; e < ib->n; e++)
      if (b->let_of_entry[e] == l) entry = e;
    if (entry < 0) continue;
    bool outside = false, only_next = true;
    int my = b->region_of_block[r->blocks[0]];
    for (int si = 0; si < pv->nst; si++) {
      int rb = b->region_of_block[pv->block_of_stmt[si]];
      if (rb == my) continue;
      const ib_entry *e = &ib->e[pv->st[si].entry];
      for (int k = 0; k < e->nin; k++)
        if (!e->in[k].is_const && e->in[k].entry == entry) {
          outside = true;
          if (rb != my + 1) only_next = false;
        }
    }
    if (!outside) continue;
    region_memref m = {0};
    m.name = r->lets[l].name;
    m.entry = entry;
    m.dt = r->lets[l].e->dt;
    m.rank = ib->e[entry].rank;
    m.shape = ARENA_ARRAY(A, const sx *, m.rank + 1);
    for (int i = 0; i < m.rank; i++) m.shape[i] = ib->e[entry].axes[i].size;
    m.alignment = 16;
    m.noalias = true;
    m.layout = "row_major";
    m.materialize = only_next ? "deferred" : "gmem";
    ARENA_PUSH(A, r->out, r->nout, outcap, m);
    region_yield y = {l, r->nout - 1, m.dt};
    ARENA_PUSH(A, r->yields, r->nyields, ycap, y);
  }
  remove_dead_lets(b, r);
  /* the epilogue (R3): pointwise lets after the accumulator that read only
   * the accumulator, other epilogue lets and inputs */
  if (r->acc_let >= 0)
    for (int l = r->acc_let + 1; l < r->nlets; l++) {
      bool red = false;
      for (int i = 0; i < r->lets[l].e->nax; i++) red |= r->lets[l].e->ax[i] >= r->niters;
      r->lets[l].post_reduce = !red && r->lets[l].e->k != RX_REDUCE && epilogue_deps(r, r->lets[l].e);
    }
}

region_set *region_build(arena *A, const poly_view *pv, diag_list *dl) {
  region_set *rs = ARENA_NEW(A, region_set);
  rs->A = A;
  rs->pv = pv;
  builder b = {A, rs, pv, pv->ib, dl, ARENA_ARRAY(A, int, pv->nblk + 1), ARENA_ARRAY(A, int, pv->ib->n + 1), NULL};
  for (int i = 0; i < pv->ib->n; i++) b.let_of_entry[i] = -1;
  rs->r = ARENA_ARRAY(A, region, pv->nblk + 1);
  for (int bi = 0; bi < pv->nblk; bi++) {
    int prod;
    if (block_joins(&b, bi, &prod) && b.region_of_block[prod] == rs->n - 1) {
      region *r = &rs->r[rs->n - 1];
      int *nb = ARENA_ARRAY(A, int, r->nblocks + 1);
      memcpy(nb, r->blocks, sizeof(int) * (size_t)r->nblocks);
      nb[r->nblocks++] = bi;
      r->blocks = nb;
      b.region_of_block[bi] = rs->n - 1;
      continue;
    }
    region *r = &rs->r[rs->n++];
    r->name = pv->blk[bi].name;
    if (pv->ib->dag->fe) r->name = arena_printf(A, "%s.%s", pv->ib->dag->fe->name, pv->blk[bi].name);
    r->blocks = ARENA_ARRAY(A, int, 1);
    r->blocks[0] = bi;
    r->nblocks = 1;
    b.region_of_block[bi] = rs->n - 1;
  }
  for (int i = 0; i < rs->n; i++) {
    build_region(&b, &rs->r[i]);
    region_normalize(rs, &rs->r[i], dl);
  }
  if (!region_verify(rs, dl)) return NULL;
  return rs;
}

/* ---- SRNF ------------------------------------------------------------------------------ */

static bool uses_axes(const rexpr *e, const int *axes, int n) {
  for (int i = 0; i < e->nax; i++)
    for (int j = 0; j < n; j++)
      if (e->ax[i] == axes[j]) return true;
  return false;
}

rexpr *region_merge_reduce(region_set *rs, rexpr *outer, diag_list *dl) {
  rexpr *inner = outer->a;
  if (!inner || inner->k != RX_REDUCE) return outer;
  if (inner->rop != outer->rop) {
    diag_report(dl, D_NON_ASSOC, "Region SSA", NULL,
                "a %s reduction over a %s reduction cannot be merged into one (SRNF R4)",
                reduce_op_name(outer->rop), reduce_op_name(inner->rop));
    return outer;
  }
  rexpr *m = rx_new(rs->A, RX_REDUCE);
  *m = *outer;
  m->nred = outer->nred + inner->nred;
  m->red = ARENA_ARRAY(rs->A, int, m->nred);
  memcpy(m->red, outer->red, sizeof(int) * (size_t)outer->nred);
  memcpy(m->red + outer->nred, inner->red, sizeof(int) * (size_t)inner->nred);
  m->a = inner->a;
  return m;
}

/* R1: sum_K(g * E) with g independent of K is g * sum_K(E). */
static rexpr *hoist(region_set *rs, rexpr *red) {
  rexpr *body = red->a;
  if (red->rop != RED_SUM || body->k != RX_BINARY || body->op != TINY_MUL) return red;
  rexpr *g = NULL, *rest = NULL;
  if (!uses_axes(body->a, red->red, red->nred) && uses_axes(body->b, red->red, red->nred)) g = body->a, rest = body->b;
  else if (!uses_axes(body->b, red->red, red->nred) && uses_axes(body->a, red->red, red->nred)) g = body->b, rest = body->a;
  if (!g || g->k == RX_READ || g->k == RX_SELECT) return red; /* C-CON1 keeps operand reads inside */
  rexpr *inner = rx_new(rs->A, RX_REDUCE);
  *inner = *red;
  inner->a = rest;
  rexpr *mul = rx_new(rs->A, RX_BINARY);
  *mul = *body;
  mul->a = g;
  mul->b = inner;
  mul->nax = red->nax;
  mul->ax = red->ax;
  return mul;
}

void region_normalize(region_set *rs, region *r, diag_list *dl) {
  for (int l = 0; l < r->nlets; l++) {
    rexpr *e = r->lets[l].e;
    if (e->k != RX_REDUCE) continue;
    /* R0 through a let: Reduce(op){ LET x } where x = Reduce(op){..} is read only here */
    if (e->a->k == RX_LET) {
      const rexpr *x = r->lets[e->a->let].e;
      int uses = 0;
      for (int k = 0; k < r->nlets; k++)
        if (r->lets[k].e->k == RX_REDUCE && r->lets[k].e->a->k == RX_LET && r->lets[k].e->a->let == e->a->let) uses++;
      if (x->k == RX_REDUCE && x->rop == e->rop && uses == 1 && !r->lets[e->a->let].post_reduce) {
        rexpr *outer = rx_new(rs->A, RX_REDUCE);
        *outer = *e;
        outer->a = (rexpr *)x;
        e = region_merge_reduce(rs, outer, dl);
      }
    } else if (e->a->k == RX_REDUCE) {
      e = region_merge_reduce(rs, e, dl); /* R0 */
    }
    r->lets[l].e = hoist(rs, e); /* R1 */
  }
}

/* ---- verification ---------------------------------------------------------------------- */

static bool same_axes(const rexpr *a, const rexpr *b) {
  if (a->nax != b->nax) return false;
  for (int i = 0; i < a->nax; i++)
    if (a->ax[i] != b->ax[i]) return false;
  return true;
}

static bool is_operand_read(const rexpr *e) {
  if (e->k == RX_BCAST || e->k == RX_TRANSPOSE) e = e->a;
  if (e->k == RX_TRANSPOSE) e = e->a;
  if (e->k == RX_SELECT && !e->a) e = e->b;
  if (e->k == RX_UNARY && e->op == TINY_CAST) e = e->a;
  return e->k == RX_READ;
}

static bool is_operand_read(const rexpr *e);
static bool verify_expr(const region_set *rs, const region *r, const rexpr *e, int depth, diag_list *dl,
                        const char *at, bool ccon1) {
  bool ok = true;
  if (depth > 200) return false;
#define FAIL(...)                                                                            \
  do {                                                                                       \
    diag_report(dl, D_GRAPH_SCHEMA, at, "This is a compiler bug; please report it.", __VA_ARGS__); \
    ok = false;                                                                              \
  } while (0)
  switch (e->k) {
  case RX_BINARY:
    if (!ccon1 && e->a->k != RX_CONST && e->b->k != RX_CONST && !same_axes(e->a, e->b))
      FAIL("Binary %s operands vary over different axes (BroadcastInDim missing)", tiny_op_name(e->op));
    break;
  case RX_SELECT:
    if (e->a && e->a->dt != DT_BOOL) FAIL("Select predicate is not bool");
    break;
  case RX_REDUCE:
    if (e->nred < 1) FAIL("Reduce without axes");
    for (int i = 0; i < e->nred; i++)
      if (e->red[i] < 0) FAIL("Reduce axis unknown");
    for (int i = 0; i < e->nax; i++)
      for (int j = 0; j < e->nred; j++)
        if (e->ax[i] == e->red[j]) FAIL("Reduce keeps its reduced axis %s", r->it[e->red[j]].name);
    break;
  case RX_LET:
    if (e->let < 0 || e->let >= r->nlets) FAIL("let reference out of range");
    break;
  case RX_READ:
    if (e->input < 0 || e->input >= r->nin) FAIL("read of an unknown input");
    else if (e->nmap != r->in[e->input].rank) FAIL("read map of %d entries for rank %d", e->nmap, r->in[e->input].rank);
    break;
  default:
    break;
  }
#undef FAIL
  bool body = e->k == RX_REDUCE && e->a->k == RX_BINARY && e->a->op == TINY_MUL && is_operand_read(e->a->a) &&
              is_operand_read(e->a->b);
  if (e->a && !verify_expr(rs, r, e->a, depth + 1, dl, at, body)) ok = false;
  if (e->b && !verify_expr(rs, r, e->b, depth + 1, dl, at, false)) ok = false;
  if (e->c && !verify_expr(rs, r, e->c, depth + 1, dl, at, false)) ok = false;
  return ok;
}

bool region_verify(const region_set *rs, diag_list *dl) {
  bool ok = true;
  arena *A = rs->A;
  for (int ri = 0; ri < rs->n; ri++) {
    const region *r = &rs->r[ri];
    const char *at = arena_printf(A, "Region[%s]", r->name);
    for (int l = 0; l < r->nlets; l++) {
      const rexpr *e = r->lets[l].e;
      ok &= verify_expr(rs, r, e, 0, dl, arena_printf(A, "Region[%s].%s", r->name, r->lets[l].name), false);
      /* lets refer only to earlier lets (SSA) */
      if (e->k == RX_REDUCE && (dtype_bytes(e->dt) < 4) && e->rop == RED_SUM) {
        diag_report(dl, D_ACC_DTYPE_MISSING, at, NULL, "let %s sums in %s", r->lets[l].name, dtype_name(e->dt));
        ok = false;
      }
      if (l == r->acc_let) {
        /* C-CON1: the contraction body reads its operands directly */
        const rexpr *body = e->a;
        if (!(body->k == RX_BINARY && body->op == TINY_MUL && is_operand_read(body->a) && is_operand_read(body->b))) {
          diag_report(dl, D_GRAPH_SCHEMA, at, "This is a compiler bug; please report it.",
                      "the contraction %s does not read its operands directly (C-CON1)", r->lets[l].name);
          ok = false;
        }
      }
      if (r->lets[l].post_reduce && l <= r->acc_let) {
        diag_report(dl, D_GRAPH_SCHEMA, at, "This is a compiler bug; please report it.",
                    "epilogue let %s precedes the reduction (R3)", r->lets[l].name);
        ok = false;
      }
    }
    bool *yielded = calloc((size_t)r->nout + 1, sizeof(bool));
    if (!yielded) dlc_die_oom();
    for (int y = 0; y < r->nyields; y++) {
      if (r->yields[y].let < 0 || r->yields[y].let >= r->nlets || r->yields[y].output < 0 || r->yields[y].output >= r->nout) {
        diag_report(dl, D_GRAPH_SCHEMA, at, "This is a compiler bug; please report it.", "yield %d is out of range", y);
        ok = false;
        continue;
      }
      if (yielded[r->yields[y].output]) {
        diag_report(dl, D_GRAPH_SCHEMA, at, "This is a compiler bug; please report it.", "output %s is yielded twice",
                    r->out[r->yields[y].output].name);
        ok = false;
      }
      yielded[r->yields[y].output] = true;
    }
    for (int o = 0; o < r->nout; o++)
      if (!yielded[o]) {
        diag_report(dl, D_GRAPH_SCHEMA, at, "This is a compiler bug; please report it.", "output %s is never yielded",
                    r->out[o].name);
        ok = false;
      }
    free(yielded);
  }
  return ok;
}

/* ---- dump -------------------------------------------------------------------------------- */

static cJSON *size_json(arena *A, const sx *s) {
  int64_t v;
  if (sx_is_int(s, &v)) return cJSON_CreateNumber((double)v);
  return cJSON_CreateString(sx_str(A, s));
}

static cJSON *num_json(double v) {
  if (isinf(v)) return cJSON_CreateString(v < 0 ? "-inf" : "inf");
  return cJSON_CreateNumber(v);
}

static const char *lower(arena *A, const char *s) {
  char *r = arena_strdup(A, s);
  for (char *p = r; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
  return r;
}

static cJSON *expr_json(arena *A, const region *r, const rexpr *e) {
  cJSON *o;
  switch (e->k) {
  case RX_CONST:
    if (e->crsqrt) {
      o = cJSON_CreateObject();
      cJSON_AddItemToObject(o, "const", num_json(e->cval));
      cJSON_AddStringToObject(o, "times_rsqrt", e->crsqrt);
      return o;
    }
    return num_json(e->cval);
  case RX_LET: return cJSON_CreateString(r->lets[e->let].name);
  case RX_READ: {
    o = cJSON_CreateObject();
    cJSON *rd = cJSON_AddObjectToObject(o, "read");
    cJSON_AddStringToObject(rd, "tensor", r->in[e->input].name);
    cJSON *m = cJSON_AddArrayToObject(rd, "map");
    for (int i = 0; i < e->nmap; i++) cJSON_AddItemToArray(m, cJSON_CreateString(sx_str(A, e->map[i])));
    return o;
  }
  case RX_UNARY:
  case RX_BINARY: {
    o = cJSON_CreateObject();
    if (e->op == TINY_CAST) {
      cJSON *c = cJSON_AddObjectToObject(o, "cast");
      cJSON_AddStringToObject(c, "to", dtype_name(e->dt));
      cJSON_AddItemToObject(c, "x", expr_json(A, r, e->a));
      return o;
    }
    cJSON *arr = cJSON_AddArrayToObject(o, lower(A, tiny_op_name(e->op)));
    cJSON_AddItemToArray(arr, expr_json(A, r, e->a));
    if (e->k == RX_BINARY) cJSON_AddItemToArray(arr, expr_json(A, r, e->b));
    return o;
  }
  case RX_SELECT: {
    o = cJSON_CreateObject();
    cJSON *s = cJSON_AddObjectToObject(o, "select");
    if (e->a) cJSON_AddItemToObject(s, "pred", expr_json(A, r, e->a));
    else {
      cJSON *p = cJSON_AddObjectToObject(s, "pred");
      cJSON *and = cJSON_AddArrayToObject(p, "and");
      for (int g = 0; g < e->ng; g++) {
        const char *ex = sx_str(A, e->guards[g].e);
        cJSON_AddItemToArray(and, cJSON_CreateString(arena_printf(A, "%s<=%s", sx_str(A, e->guards[g].lo), ex)));
        if (e->guards[g].hi)
          cJSON_AddItemToArray(and, cJSON_CreateString(arena_printf(A, "%s<%s", ex, sx_str(A, e->guards[g].hi))));
      }
    }
    cJSON_AddItemToObject(s, "then", expr_json(A, r, e->b));
    cJSON_AddItemToObject(s, "else", expr_json(A, r, e->c));
    return o;
  }
  case RX_REDUCE: {
    o = cJSON_CreateObject();
    cJSON *rd = cJSON_AddObjectToObject(o, "reduce");
    cJSON_AddStringToObject(rd, "op", reduce_op_name(e->rop));
    cJSON *ax = cJSON_AddArrayToObject(rd, "axes");
    for (int i = 0; i < e->nred; i++) cJSON_AddItemToArray(ax, cJSON_CreateString(r->it[e->red[i]].name));
    cJSON_AddItemToObject(rd, "init", num_json(e->init));
    cJSON_AddStringToObject(rd, "dtype", dtype_name(e->dt));
    cJSON_AddItemToObject(rd, "body", expr_json(A, r, e->a));
    return o;
  }
  case RX_BCAST: {
    o = cJSON_CreateObject();
    cJSON *bc = cJSON_AddObjectToObject(o, "BroadcastInDim");
    cJSON_AddItemToObject(bc, "operand", expr_json(A, r, e->a));
    cJSON *rsh = cJSON_AddArrayToObject(bc, "result_shape");
    for (int i = 0; i < e->nax; i++) cJSON_AddItemToArray(rsh, size_json(A, r->it[e->ax[i]].size));
    cJSON *bd = cJSON_AddArrayToObject(bc, "broadcast_dimensions");
    for (int i = 0; i < e->a->nax; i++) cJSON_AddItemToArray(bd, cJSON_CreateNumber(e->bdims[i]));
    return o;
  }
  case RX_TRANSPOSE: {
    o = cJSON_CreateObject();
    cJSON *t = cJSON_AddObjectToObject(o, "Transpose");
    cJSON_AddItemToObject(t, "operand", expr_json(A, r, e->a));
    cJSON *p = cJSON_AddArrayToObject(t, "permutation");
    for (int i = 0; i < e->nax; i++) cJSON_AddItemToArray(p, cJSON_CreateNumber(e->perm[i]));
    return o;
  }
  }
  return cJSON_CreateNull();
}

char *region_expr_str(arena *A, const region *r, const rexpr *e) {
  cJSON *j = expr_json(A, r, e);
  char *s = cJSON_PrintUnformatted(j);
  char *res = arena_strdup(A, s ? s : "");
  free(s);
  cJSON_Delete(j);
  return res;
}

static cJSON *memref_json(arena *A, const region_memref *m, bool out) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", m->name);
  cJSON *mr = cJSON_AddObjectToObject(o, "memref");
  cJSON *sh = cJSON_AddArrayToObject(mr, "shape");
  for (int i = 0; i < m->rank; i++) cJSON_AddItemToArray(sh, size_json(A, m->shape[i]));
  cJSON_AddStringToObject(mr, "dtype", dtype_name(m->dt));
  cJSON_AddNumberToObject(mr, "alignment", m->alignment);
  cJSON_AddBoolToObject(mr, "noalias", m->noalias);
  cJSON *lay = cJSON_AddObjectToObject(mr, "layout");
  cJSON_AddStringToObject(lay, "kind", m->layout);
  if (out) cJSON_AddStringToObject(o, "materialize", m->materialize);
  return o;
}

cJSON *region_dump(const region_set *rs) {
  arena *A = rs->A;
  cJSON *root = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(root, "regions");
  for (int ri = 0; ri < rs->n; ri++) {
    const region *r = &rs->r[ri];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON *it = cJSON_AddArrayToObject(o, "iters");
    for (int i = 0; i < r->niters; i++) {
      cJSON *a = cJSON_CreateObject();
      cJSON_AddStringToObject(a, "name", r->it[i].name);
      cJSON_AddItemToObject(a, "size", size_json(A, r->it[i].size));
      cJSON_AddItemToArray(it, a);
    }
    cJSON *rit = cJSON_AddArrayToObject(o, "reduce_iters");
    for (int i = r->niters; i < r->niters + r->nred; i++) {
      cJSON *a = cJSON_CreateObject();
      cJSON_AddStringToObject(a, "name", r->it[i].name);
      cJSON_AddItemToObject(a, "size", size_json(A, r->it[i].size));
      cJSON_AddItemToArray(rit, a);
    }
    cJSON *ins = cJSON_AddArrayToObject(o, "inputs");
    for (int i = 0; i < r->nin; i++) cJSON_AddItemToArray(ins, memref_json(A, &r->in[i], false));
    cJSON *outs = cJSON_AddArrayToObject(o, "outputs");
    for (int i = 0; i < r->nout; i++) cJSON_AddItemToArray(outs, memref_json(A, &r->out[i], true));
    cJSON *lets = cJSON_AddArrayToObject(o, "lets");
    for (int l = 0; l < r->nlets; l++) {
      cJSON *lo = cJSON_CreateObject();
      cJSON_AddStringToObject(lo, "let", r->lets[l].name);
      cJSON_AddItemToObject(lo, "expr", expr_json(rs->A, r, r->lets[l].e));
      cJSON *ax = cJSON_AddArrayToObject(lo, "axes");
      for (int i = 0; i < r->lets[l].e->nax; i++) cJSON_AddItemToArray(ax, cJSON_CreateString(r->it[r->lets[l].e->ax[i]].name));
      if (r->lets[l].post_reduce) cJSON_AddBoolToObject(lo, "epilogue", true);
      cJSON_AddItemToArray(lets, lo);
    }
    cJSON *ys = cJSON_AddArrayToObject(o, "yield");
    for (int y = 0; y < r->nyields; y++) {
      cJSON *yo = cJSON_CreateObject();
      cJSON_AddStringToObject(yo, "from", r->lets[r->yields[y].let].name);
      cJSON_AddStringToObject(yo, "to", r->out[r->yields[y].output].name);
      cJSON_AddStringToObject(yo, "cast", dtype_name(r->yields[y].cast));
      cJSON_AddItemToArray(ys, yo);
    }
    cJSON_AddItemToArray(arr, o);
  }
  return root;
}
