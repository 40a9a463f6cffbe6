/* Region Buffer SSA: formation from Poly-View blocks, SRNF normalization,
 * verification and dump (spec §6, §10 step 5).
 *
 * Formation.  A region is one contraction block (or one fused or boundary
 * block) plus the fused blocks that join it.  Every Poly-View statement
 * names its own dims (IndexBook labels such as m, n, k when they are unique,
 * else entry-local names i0, r0), so dims are first unified into region
 * axes: a statement that reads a value computed in the region with a plain
 * variable at position i iterates that dim together with the value's dim i
 * (union-find; only when the sizes agree and no statement would get two of
 * its dims in one axis).  An axis is an iter when some statement computes
 * over it, else a reduce axis; so a reduction may run over an iter (the n
 * of a row softmax).  Statements then become lets over their axes:
 *   - side statements (pointwise work on region inputs only) are inlined
 *     where they are read;
 *   - the reduction of a contraction block reads its operands directly
 *     (C-CON1) and is the region's accumulator (acc_let);
 *   - operands are made to vary over the statement's axes with Transpose and
 *     BroadcastInDim (spec §6.4); pads become Select with the pad value;
 *   - stores, and values that later regions read, become yields.
 * A value of the region read at other indices than its own axes (a shift,
 * or a reversed transpose of a square value) cannot be a let reference: it
 * is reported, and region_build() returns NULL. */
#include "region.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

#define RG_MAXAX 32 /* axes one expression can vary over */

typedef struct builder {
  arena *A;
  region_set *rs;
  const poly_view *pv;
  const indexbook *ib;
  diag_list *dl;
  int *region_of_block;
  int *let_of_entry;   /* entry -> let in the current region, or -1 */
  int *entry_of_let;   /* let -> entry, in the current region */
  int let_cap;
  bool *side;          /* entry -> a side statement, inlined where it is read */
  bool *read_outside;  /* entry -> read by a statement of another region */
  const char ***rdim;  /* statement -> region axis name of each of its dims */
  bool failed;         /* an error was reported */
} builder;

rexpr *region_expr_new(arena *A, rx_kind k) {
  rexpr *e = ARENA_NEW(A, rexpr);
  e->k = k;
  e->input = e->let = -1;
  return e;
}

static rexpr *rx_new(arena *A, rx_kind k) { return region_expr_new(A, k); }

static int axis_index(const region *r, const char *name) {
  for (int i = 0; i < r->niters + r->nred; i++)
    if (strcmp(r->it[i].name, name) == 0) return i;
  return -1;
}

/* ---- region axes --------------------------------------------------------------- */

static int add_axis(builder *b, region *r, const char *name, const sx *size, bool reduce, int *cap) {
  int have = axis_index(r, name);
  if (have >= 0) return have;
  region_axis ax = {name, size};
  int n = r->niters + r->nred;
  ARENA_PUSH(b->A, r->it, n, *cap, ax); /* n is now the new count */
  if (reduce) {
    r->nred++;
    return n - 1;
  }
  /* iters stay before reduce axes */
  for (int i = n - 1; i > r->niters; i--) {
    region_axis t = r->it[i];
    r->it[i] = r->it[i - 1];
    r->it[i - 1] = t;
  }
  return r->niters++;
}

/* A region axis name not taken yet: the dim's own name, else name_1, ... */
static const char *fresh_axis_name(arena *A, const region *r, const char *name) {
  if (axis_index(r, name) < 0) return name;
  for (int k = 1;; k++) {
    const char *s = arena_printf(A, "%s_%d", name, k);
    if (axis_index(r, s) < 0) return s;
  }
}

/* Entry axis name (i0.., r0..) -> region axis name of the statement's dim. */
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

static const char *const *stmt_dims(const builder *b, const pv_stmt *st) {
  const char **d = b->rdim ? b->rdim[st - b->pv->st] : NULL;
  return d ? d : st->dims;
}

static const sx *rename_sx(builder *b, const pv_stmt *st, const sx *x) {
  rn_ctx c = {&b->ib->e[st->entry], stmt_dims(b, st), b->A};
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

static void add_ax(int *ax, int *n, int i) {
  if (i < 0 || *n >= RG_MAXAX) return;
  for (int j = 0; j < *n; j++)
    if (ax[j] == i) return;
  ax[(*n)++] = i;
}

static void axes_of_sx(const region *r, const sx *x, int *ax, int *n);

static void axes_of_atom(const region *r, const sx_atom *a, int *ax, int *n) {
  switch (a->kind) {
  case SXA_VAR: add_ax(ax, n, axis_index(r, a->name)); break;
  case SXA_FLOOR: axes_of_sx(r, a->a, ax, n); break;
  case SXA_FDIVSYM:
  case SXA_MODSYM:
    axes_of_sx(r, a->a, ax, n);
    axes_of_sx(r, a->b, ax, n);
    break;
  case SXA_PROD:
    for (int f = 0; f < a->nf; f++) axes_of_atom(r, a->f[f], ax, n);
    break;
  default: break;
  }
}

/* Region axes an sx mentions, in order of first appearance. */
static void axes_of_sx(const region *r, const sx *x, int *ax, int *n) {
  for (int t = 0; t < x->nterms; t++) axes_of_atom(r, x->terms[t].atom, ax, n);
}

static void set_axes(arena *A, rexpr *e, int n, const int *ax) {
  e->nax = n;
  e->ax = ARENA_ARRAY(A, int, n + 1);
  memcpy(e->ax, ax, sizeof(int) * (size_t)n);
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

/* `x` under the guards of a padded read: Select(guards, x, pad value). */
static rexpr *pad_select(builder *b, region *r, const pv_stmt *st, const ib_input *in, rexpr *x) {
  arena *A = b->A;
  int ax[RG_MAXAX], n = 0;
  for (int i = 0; i < x->nax; i++) add_ax(ax, &n, x->ax[i]);
  rexpr *s = rx_new(A, RX_SELECT);
  s->dt = x->dt;
  s->pad = true;
  s->ng = in->nguards;
  s->guards = ARENA_ARRAY(A, ib_guard, in->nguards);
  for (int g = 0; g < in->nguards; g++) {
    s->guards[g].e = st ? rename_sx(b, st, in->guards[g].e) : in->guards[g].e;
    s->guards[g].lo = in->guards[g].lo;
    s->guards[g].hi = in->guards[g].hi;
    axes_of_sx(r, s->guards[g].e, ax, &n);
  }
  s->b = x;
  s->c = rx_new(A, RX_CONST);
  s->c->dt = x->dt;
  s->c->cval = in->pad_value;
  set_axes(A, s, n, ax);
  return s;
}

/* A read of `in` by statement `st`: Read, under Select when guarded. */
static rexpr *read_expr(builder *b, region *r, const pv_stmt *st, const ib_input *in, int *incap) {
  arena *A = b->A;
  rexpr *rd = rx_new(A, RX_READ);
  rd->input = memref_of(b, r, in->entry, incap);
  rd->dt = r->in[rd->input].dt;
  rd->nmap = in->n;
  rd->map = ARENA_ARRAY(A, const sx *, in->n + 1);
  int ax[RG_MAXAX], n = 0;
  for (int i = 0; i < in->n; i++) {
    rd->map[i] = st ? rename_sx(b, st, in->map[i]) : in->map[i];
    axes_of_sx(r, rd->map[i], ax, &n);
  }
  set_axes(A, rd, n, ax);
  return in->nguards ? pad_select(b, r, st, in, rd) : rd;
}

/* A gather's read (IndexBook entry e with a load_var): Read(source, map)
 * through the index in[1] loaded at the same point, bound to ldvar; in
 * bounds iff the guards of in[0] hold (0 <= ld < size, and the pads of the
 * source's view), else in[0]'s pad value, 0. */
static rexpr *gather_expr(builder *b, region *r, const pv_stmt *st, const ib_entry *e, int *incap) {
  arena *A = b->A;
  const ib_input *in = &e->in[0];
  rexpr *rd = rx_new(A, RX_READ);
  rd->input = memref_of(b, r, in->entry, incap);
  rd->dt = r->in[rd->input].dt;
  rd->ldvar = e->load_var;
  rd->a = read_expr(b, r, st, &e->in[1], incap);
  rd->nmap = in->n;
  rd->map = ARENA_ARRAY(A, const sx *, in->n + 1);
  int ax[RG_MAXAX], n = 0;
  for (int i = 0; i < rd->a->nax; i++) add_ax(ax, &n, rd->a->ax[i]);
  for (int i = 0; i < in->n; i++) {
    rd->map[i] = rename_sx(b, st, in->map[i]);
    axes_of_sx(r, rd->map[i], ax, &n);
  }
  rd->ng = in->nguards;
  rd->guards = ARENA_ARRAY(A, ib_guard, in->nguards + 1);
  for (int g = 0; g < in->nguards; g++) {
    rd->guards[g].e = rename_sx(b, st, in->guards[g].e);
    rd->guards[g].lo = in->guards[g].lo;
    rd->guards[g].hi = in->guards[g].hi;
    axes_of_sx(r, rd->guards[g].e, ax, &n);
  }
  rd->cval = in->pad_value;
  set_axes(A, rd, n, ax);
  return rd;
}

/* Make `e` vary over exactly `ax` (in that order): Transpose when the order
 * differs, BroadcastInDim when axes are missing (spec §6.4). */
static rexpr *conform(arena *A, rexpr *e, int nax, const int *ax) {
  if (e->k == RX_CONST) return e;
  bool same = e->nax == nax;
  for (int i = 0; same && i < nax; i++) same = e->ax[i] == ax[i];
  if (same) return e;
  /* order e's axes as they appear in `ax` */
  int ord[RG_MAXAX], no = 0;
  for (int i = 0; i < nax; i++)
    for (int j = 0; j < e->nax; j++)
      if (e->ax[j] == ax[i] && no < RG_MAXAX) ord[no++] = j;
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
  set_axes(A, bc, nax, ax);
  bc->bdims = ARENA_ARRAY(A, int, e->nax + 1);
  for (int j = 0; j < e->nax; j++)
    for (int i = 0; i < nax; i++)
      if (ax[i] == e->ax[j]) bc->bdims[j] = i;
  return bc;
}

static rexpr *let_ref(arena *A, region *r, int let) {
  rexpr *e = rx_new(A, RX_LET);
  e->let = let;
  e->dt = r->lets[let].e->dt;
  e->nax = r->lets[let].e->nax;
  e->ax = r->lets[let].e->ax;
  return e;
}

/* A side statement: pointwise work on values from outside the region only
 * (e.g. a cast of the bias), independent of everything else in the region.
 * It is inlined at its reads, so that its axes are the reader's.  A value
 * that another region reads is a let, never a side statement. */
static bool is_side(const builder *b, int entry, const int *sts, int nsts) {
  const indexbook *ib = b->ib;
  const ib_entry *e = &ib->e[entry];
  if (e->kind != IBK_ALU || b->read_outside[entry]) return false;
  for (int k = 0; k < e->nin; k++) {
    if (e->in[k].is_const) continue;
    int src = e->in[k].entry;
    bool in_region = false;
    for (int j = 0; j < nsts; j++) in_region |= b->pv->st[sts[j]].entry == src;
    if (in_region && !is_side(b, src, sts, nsts)) return false;
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
  int gax[RG_MAXAX], ng = 0;
  axes_of_sx(r, x->guards->e, gax, &ng);
  set_axes(A, x, ng, gax);
  return x;
}

/* The side statement `se` evaluated at the index `idx` (its axes -> region
 * expressions), as an expression tree. */
/* guards g[0..ng) and then h[0..nh), one array */
static ib_guard *cat_guards(arena *A, const ib_guard *g, int ng, const ib_guard *h, int nh) {
  ib_guard *c = ARENA_ARRAY(A, ib_guard, ng + nh + 1);
  for (int i = 0; i < ng; i++) c[i] = g[i];
  for (int i = 0; i < nh; i++) c[ng + i] = h[i];
  return c;
}

/* Side statement se inlined at indices idx, under the guards og[0..nog)
 * of the padded reads it is inlined through (in the reader's indices):
 * its reads load only where those hold (the caller selects the pad value
 * where they do not). */
static rexpr *inline_side(builder *b, region *r, int se, const sx *const *idx, const ib_guard *og, int nog,
                          int *incap) {
  arena *A = b->A;
  const ib_entry *e = &b->ib->e[se];
  const tiny_uop *u = &b->ib->dag->u[e->uop];
  subst_t sub = {e->rank, ARENA_ARRAY(A, const char *, e->rank + 1), idx};
  for (int i = 0; i < e->rank; i++) sub.from[i] = e->axes[i].name;
  sx_pair cmp;
  if (u->op == TINY_CMPLT && index_operands(b, e, &sub, &cmp)) return index_guard(b, r, &cmp);
  rexpr *ops[3] = {0};
  int ax[RG_MAXAX], nax = 0;
  for (int k = 0; k < e->nin; k++) {
    const ib_input *in = &e->in[k];
    if (in->is_const) {
      ops[k] = operand(b, r, NULL, in, incap);
      continue;
    }
    const sx **m = ARENA_ARRAY(A, const sx *, in->n + 1);
    for (int i = 0; i < in->n; i++) m[i] = sx_subst(A, in->map[i], subst_f, &sub);
    ib_input x = *in;
    x.map = m;
    if (in->nguards) {
      x.guards = ARENA_ARRAY(A, ib_guard, in->nguards);
      for (int g = 0; g < in->nguards; g++) {
        x.guards[g] = in->guards[g];
        x.guards[g].e = sx_subst(A, in->guards[g].e, subst_f, &sub);
      }
    }
    if (b->side[in->entry]) {
      /* a padded read of another side statement: its value where its own
       * guards hold, the pad value elsewhere; its reads under both */
      ops[k] = inline_side(b, r, in->entry, m, cat_guards(A, x.guards, x.nguards, og, nog), x.nguards + nog, incap);
      if (x.nguards) ops[k] = pad_select(b, r, NULL, &x, ops[k]);
    } else {
      /* the read loads only where its own guards and og hold */
      x.guards = cat_guards(A, x.guards, x.nguards, og, nog);
      x.nguards += nog;
      ops[k] = read_expr(b, r, NULL, &x, incap);
    }
    for (int i = 0; i < ops[k]->nax; i++) add_ax(ax, &nax, ops[k]->ax[i]);
  }
  rexpr *x;
  if (u->op == TINY_WHERE) {
    x = rx_new(A, RX_SELECT);
    x->a = ops[0], x->b = ops[1], x->c = ops[2];
  } else {
    x = rx_new(A, tiny_op_arity(u->op) == 1 ? RX_UNARY : RX_BINARY);
    x->op = u->op;
    x->a = ops[0], x->b = ops[1];
  }
  x->dt = u->dt;
  set_axes(A, x, nax, ax);
  if (x->k != RX_SELECT) {
    if (x->a) x->a = conform(A, x->a, nax, ax);
    if (x->b) x->b = conform(A, x->b, nax, ax);
  }
  return x;
}

/* Whether statement st iterates region axis ax. */
static bool reader_has_axis(const builder *b, const region *r, const pv_stmt *st, int ax) {
  const ib_entry *e = &b->ib->e[st->entry];
  const char *const *d = stmt_dims(b, st);
  for (int i = 0; i < e->rank + e->nred; i++)
    if (axis_index(r, d[i]) == ax) return true;
  return false;
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
    c->crecip = u->crecip;
    return c;
  }
  if (b->side && b->side[in->entry] && st) {
    const sx **m = ARENA_ARRAY(b->A, const sx *, in->n + 1);
    for (int i = 0; i < in->n; i++) m[i] = rename_sx(b, st, in->map[i]);
    /* a padded read of it (a Pad of Slice(x) * 2): the pad value where
     * the guards fail, and its reads only where they hold */
    ib_input x = *in;
    x.guards = ARENA_ARRAY(b->A, ib_guard, in->nguards + 1);
    for (int g = 0; g < in->nguards; g++) x.guards[g] = in->guards[g], x.guards[g].e = rename_sx(b, st, in->guards[g].e);
    rexpr *v = inline_side(b, r, in->entry, m, x.guards, x.nguards, incap);
    return x.nguards ? pad_select(b, r, NULL, &x, v) : v;
  }
  int l = b->let_of_entry[in->entry];
  if (l < 0) return read_expr(b, r, st, in, incap);
  /* a value of this region, read at this statement's point through a view
   * that may broadcast it or permute its axes: each index must be the let's
   * own axis (axis unification made it so when the view allows) */
  const rexpr *le = r->lets[l].e;
  bool ok = in->n == le->nax;
  const char **idx = ARENA_ARRAY(b->A, const char *, in->n + 1);
  bool *squeeze = ARENA_ARRAY(b->A, bool, in->n + 1);
  int nsq = 0;
  for (int i = 0; i < in->n; i++) {
    const sx *m = st ? rename_sx(b, st, in->map[i]) : in->map[i];
    idx[i] = sx_str(b->A, m);
    const char *v = sx_as_var(m);
    int64_t c, one;
    /* index 0 on an axis of extent 1 is that axis's one point (a
     * reshape's 1).  A reader that iterates the axis too reads it there;
     * one that does not (x - mu over [M, N], mu over [M, 1]) reads the
     * value squeezed of it, then broadcast along the reader's own axes */
    bool unit = i < le->nax && sx_is_int(m, &c) && c == 0 && sx_is_int(r->it[le->ax[i]].size, &one) && one == 1;
    if (unit && !(st && reader_has_axis(b, r, st, le->ax[i]))) squeeze[i] = true, nsq++;
    ok &= i < le->nax && ((v && axis_index(r, v) == le->ax[i]) || unit);
  }
  if (!ok) {
    const char **own = ARENA_ARRAY(b->A, const char *, le->nax + 1);
    for (int i = 0; i < le->nax; i++) own[i] = r->it[le->ax[i]].name;
    char *want = arena_strdup(b->A, ""), *got = arena_strdup(b->A, "");
    for (int i = 0; i < le->nax; i++) want = arena_printf(b->A, "%s%s%s", want, i ? "," : "", own[i]);
    for (int i = 0; i < in->n; i++) got = arena_printf(b->A, "%s%s%s", got, i ? "," : "", idx[i]);
    diag_report(b->dl, D_PLAN_UNSUPPORTED, arena_printf(b->A, "Region[%s]", r->name),
                "Region formation keeps a fused value in registers at its own point; a read at other indices "
                "needs the value materialized between two kernels, which this release does not do.",
                "'%s' (over %s) is read at [%s] inside its region", r->lets[l].name, want, got);
    b->failed = true;
  }
  rexpr *x = let_ref(b->A, r, l);
  if (ok && nsq) {
    int *ax = ARENA_ARRAY(b->A, int, le->nax);
    x->nax = 0;
    for (int i = 0; i < le->nax; i++)
      if (!squeeze[i]) ax[x->nax++] = le->ax[i];
    x->ax = ax;
  }
  return in->nguards ? pad_select(b, r, st, in, x) : x;
}

static void stmt_axes(const builder *b, const region *r, const pv_stmt *st, const ib_entry *e, int *ax, int *n) {
  const char *const *d = stmt_dims(b, st);
  *n = 0;
  for (int i = 0; i < e->rank && i < RG_MAXAX; i++) ax[(*n)++] = axis_index(r, d[i]);
}

static int add_let(builder *b, region *r, const char *name, rexpr *e, int entry, int *cap) {
  region_let l = {name, e, false};
  ARENA_PUSH(b->A, r->lets, r->nlets, *cap, l);
  if (r->nlets > b->let_cap) {
    int ncap = r->nlets * 2;
    b->entry_of_let = arena_grow(b->A, b->entry_of_let, (size_t)b->let_cap, (size_t)ncap, sizeof(int));
    b->let_cap = ncap;
  }
  b->entry_of_let[r->nlets - 1] = entry;
  if (entry >= 0) b->let_of_entry[entry] = r->nlets - 1;
  return r->nlets - 1;
}

/* ---- formation ---------------------------------------------------------------------- */

/* The region that block bi belongs to holds a contraction block (of the
 * blocks before block upto, the ones placed so far). */
static bool region_has_contraction(const builder *b, int bi, int upto) {
  int rg = b->region_of_block[bi];
  for (int i = 0; i < upto; i++)
    if (b->region_of_block[i] == rg && b->pv->blk[i].kind == PVB_CONTRACTION) return true;
  return false;
}

static bool block_joins(const builder *b, int bi, int *producer) {
  const poly_view *pv = b->pv;
  if (pv->blk[bi].kind != PVB_FUSED) return false;
  int prod = -1, n = 0;
  for (int e = 0; e < pv->nedge; e++)
    if (pv->edge[e].to == bi && pv->edge[e].from != prod) prod = pv->edge[e].from, n++;
  if (n != 1) return false;
  /* it reads the producer's values at its own points: every index a plain
   * axis (a read at other indices, such as a flip or a shift of a value
   * that ends at a boundary, needs the value stored: a region of its own) */
  const indexbook *ib = b->ib;
  for (int k = 0; k < pv->blk[bi].nst; k++) {
    const ib_entry *e = &ib->e[pv->st[pv->blk[bi].st[k]].entry];
    for (int i = 0; i < e->nin; i++) {
      if (e->in[i].is_const) continue;
      int sj = pv->stmt_of_entry[e->in[i].entry];
      if (sj < 0 || pv->block_of_stmt[sj] != prod) continue;
      for (int m = 0; m < e->in[i].n; m++)
        if (!sx_as_var(e->in[i].map[m])) return false;
    }
  }
  /* a block that reduces (a norm or a softmax of a GEMM's rows) stays out
   * of a contraction's region, whose epilogue is pointwise: a region of its
   * own, the next kernel of the chain.  A softmax whose values a
   * contraction reads (P V) joins, for attention's streaming skeleton. */
  bool reduces = false, max = false;
  for (int k = 0; k < pv->blk[bi].nst; k++) {
    const ib_entry *e = &ib->e[pv->st[pv->blk[bi].st[k]].entry];
    if (e->kind != IBK_REDUCE) continue;
    reduces = true;
    max |= ib->dag->u[e->uop].rop == RED_MAX;
  }
  bool to_contraction = false;
  for (int e = 0; e < pv->nedge; e++)
    to_contraction |= pv->edge[e].from == bi && pv->blk[pv->edge[e].to].kind == PVB_CONTRACTION;
  max &= to_contraction;
  if (reduces && !max && region_has_contraction(b, prod, bi)) return false;
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

static void mark_inputs(const rexpr *e, bool *used) {
  if (!e) return;
  if (e->k == RX_READ) used[e->input] = true;
  mark_inputs(e->a, used);
  mark_inputs(e->b, used);
  mark_inputs(e->c, used);
}

/* Every distinct LET or READ node of the expression, once even when a
 * subtree is shared, so that renumbering touches each node once. */
typedef struct node_set {
  int n, cap;
  rexpr **v;
} node_set;

static void collect_refs(arena *A, rexpr *e, node_set *s) {
  if (!e) return;
  if (e->k == RX_LET || e->k == RX_READ) {
    for (int i = 0; i < s->n; i++)
      if (s->v[i] == e) return;
    ARENA_PUSH(A, s->v, s->n, s->cap, e);
  }
  collect_refs(A, e->a, s);
  collect_refs(A, e->b, s);
  collect_refs(A, e->c, s);
}

/* Drop lets that no yield needs (e.g. a CAST the yield carries, or a
 * reduction R0 merged into another), and the inputs only they read. */
static void remove_dead_lets(arena *A, region *r) {
  bool *live = calloc((size_t)r->nlets + 1, sizeof(bool));
  int *map = calloc((size_t)r->nlets + 1, sizeof(int));
  if (!live || !map) dlc_die_oom();
  for (int y = 0; y < r->nyields; y++)
    if (r->yields[y].let >= 0 && r->yields[y].let < r->nlets) live[r->yields[y].let] = true;
  for (int l = r->nlets - 1; l >= 0; l--)
    if (live[l]) mark_lets(r->lets[l].e, live);
  int n = 0;
  for (int l = 0; l < r->nlets; l++) {
    map[l] = live[l] ? n : -1;
    if (live[l]) r->lets[n++] = r->lets[l];
  }
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
  node_set refs = {0};
  for (int l = 0; l < n; l++) collect_refs(A, r->lets[l].e, &refs);
  for (int i = 0; i < refs.n; i++) {
    if (refs.v[i]->k == RX_LET) refs.v[i]->let = map[refs.v[i]->let];
    else refs.v[i]->input = imap[refs.v[i]->input];
  }
  free(used);
  free(imap);
  for (int y = 0; y < r->nyields; y++)
    if (r->yields[y].let >= 0 && r->yields[y].let < r->nlets) r->yields[y].let = map[r->yields[y].let];
  if (r->acc_let >= 0) r->acc_let = r->acc_let < r->nlets ? map[r->acc_let] : -1;
  r->nlets = n;
  free(live);
  free(map);
}

static bool epilogue_deps(const region *r, const rexpr *e) {
  if (!e) return true;
  if (e->k == RX_LET && e->let != r->acc_let && !r->lets[e->let].post_reduce) return false;
  return epilogue_deps(r, e->a) && epilogue_deps(r, e->b) && epilogue_deps(r, e->c);
}

/* The epilogue (R3): pointwise lets after the accumulator that read only the
 * accumulator, other epilogue lets and inputs. */
static void mark_epilogue(region *r) {
  for (int l = 0; l < r->nlets; l++) r->lets[l].post_reduce = false;
  if (r->acc_let < 0) return;
  for (int l = r->acc_let + 1; l < r->nlets; l++) {
    bool red = false;
    for (int i = 0; i < r->lets[l].e->nax; i++) red |= r->lets[l].e->ax[i] >= r->niters;
    r->lets[l].post_reduce = !red && r->lets[l].e->k != RX_REDUCE && epilogue_deps(r, r->lets[l].e);
  }
}

/* ---- axis unification ----------------------------------------------------------------- */

typedef struct axes_uf {
  int n;          /* elements: one per (statement, dim) */
  int *par;
  int *owner;     /* element -> statement position in the region */
  const sx **size;
} axes_uf;

static int uf_find(int *p, int x) {
  while (p[x] != x) x = p[x] = p[p[x]];
  return x;
}

/* Joins two dims into one region axis, unless their sizes differ or some
 * statement would iterate one axis twice (a diagonal read). */
static void uf_join(axes_uf *u, int a, int b) {
  int ra = uf_find(u->par, a), rb = uf_find(u->par, b);
  if (ra == rb || !sx_equal(u->size[a], u->size[b])) return;
  for (int x = 0; x < u->n; x++) {
    if (uf_find(u->par, x) != ra) continue;
    for (int y = 0; y < u->n; y++)
      if (u->owner[y] == u->owner[x] && uf_find(u->par, y) == rb) return;
  }
  u->par[ra] = rb;
}

static const sx *dim_size(const ib_entry *e, int j) { return j < e->rank ? e->axes[j].size : e->red[j - e->rank].size; }

static int dim_of_var(const ib_entry *e, const char *v) {
  for (int j = 0; j < e->rank + e->nred; j++)
    if (strcmp(j < e->rank ? e->axes[j].name : e->red[j - e->rank].name, v) == 0) return j;
  return -1;
}

typedef enum { ROLE_LET, ROLE_SIDE, ROLE_PRODUCT } stmt_role;

/* Region axes from the dims of the region's statements; fills b->rdim. */
static void unify_axes(builder *b, region *r, const int *sts, int nsts, const stmt_role *role, int con, int *axcap) {
  arena *A = b->A;
  const poly_view *pv = b->pv;
  const indexbook *ib = b->ib;
  int *pos = ARENA_ARRAY(A, int, pv->nst + 1), *off = ARENA_ARRAY(A, int, nsts + 1);
  for (int i = 0; i < pv->nst; i++) pos[i] = -1;
  axes_uf u = {0};
  for (int k = 0; k < nsts; k++) {
    pos[sts[k]] = k;
    off[k] = u.n;
    const ib_entry *e = &ib->e[pv->st[sts[k]].entry];
    u.n += e->rank + e->nred;
  }
  u.par = ARENA_ARRAY(A, int, u.n + 1);
  u.owner = ARENA_ARRAY(A, int, u.n + 1);
  u.size = ARENA_ARRAY(A, const sx *, u.n + 1);
  for (int k = 0; k < nsts; k++) {
    const ib_entry *e = &ib->e[pv->st[sts[k]].entry];
    for (int j = 0; j < e->rank + e->nred; j++) {
      u.par[off[k] + j] = off[k] + j;
      u.owner[off[k] + j] = k;
      u.size[off[k] + j] = dim_size(e, j);
    }
  }
  /* a plain variable at position i of a read of a region value: that dim
   * and the value's dim i are one axis */
  for (int k = 0; k < nsts; k++) {
    const ib_entry *e = &ib->e[pv->st[sts[k]].entry];
    for (int q = 0; q < e->nin; q++) {
      const ib_input *in = &e->in[q];
      if (in->is_const) continue;
      int ss = pv->stmt_of_entry[in->entry];
      int ks = ss >= 0 ? pos[ss] : -1;
      if (ks < 0 || ks == k) continue;
      int srank = ib->e[in->entry].rank;
      for (int i = 0; i < in->n && i < srank; i++) {
        const char *v = sx_as_var(in->map[i]);
        int j = v ? dim_of_var(e, v) : -1;
        if (j >= 0) uf_join(&u, off[k] + j, off[ks] + i);
      }
    }
  }
  /* two statements that read one value from outside the region (an
   * input) with a plain variable at position i: their dims are one axis
   * (a GEMM's output C0 read by both passes of a softmax or a norm) */
  for (int k = 0; k < nsts; k++) {
    const ib_entry *e = &ib->e[pv->st[sts[k]].entry];
    for (int q = 0; q < e->nin; q++) {
      const ib_input *in = &e->in[q];
      int ss = in->is_const ? -1 : pv->stmt_of_entry[in->entry];
      if (in->is_const || (ss >= 0 && pos[ss] >= 0)) continue;
      for (int k2 = k + 1; k2 < nsts; k2++) {
        const ib_entry *e2 = &ib->e[pv->st[sts[k2]].entry];
        for (int q2 = 0; q2 < e2->nin; q2++) {
          const ib_input *in2 = &e2->in[q2];
          if (in2->is_const || in2->entry != in->entry || in2->n != in->n) continue;
          for (int i = 0; i < in->n; i++) {
            const char *v = sx_as_var(in->map[i]), *v2 = sx_as_var(in2->map[i]);
            int j = v ? dim_of_var(e, v) : -1, j2 = v2 ? dim_of_var(e2, v2) : -1;
            if (j >= 0 && j2 >= 0) uf_join(&u, off[k] + j, off[k2] + j2);
          }
        }
      }
    }
  }
  /* one region axis per class that holds a dim of a let statement: iters
   * first (a class with an output dim), named in the order contraction,
   * stores, other statements; then the reduce axes */
  int *order = ARENA_ARRAY(A, int, nsts + 1), no = 0;
  if (con >= 0) order[no++] = con;
  for (int k = 0; k < nsts; k++)
    if (k != con && role[k] == ROLE_LET && ib->e[pv->st[sts[k]].entry].kind == IBK_STORE) order[no++] = k;
  for (int k = 0; k < nsts; k++)
    if (k != con && role[k] == ROLE_LET && ib->e[pv->st[sts[k]].entry].kind != IBK_STORE) order[no++] = k;
  int *axis_of = ARENA_ARRAY(A, int, u.n + 1);
  for (int i = 0; i < u.n; i++) axis_of[i] = -1;
  for (int pass = 0; pass < 2; pass++)
    for (int q = 0; q < no; q++) {
      int k = order[q];
      const pv_stmt *st = &pv->st[sts[k]];
      const ib_entry *e = &ib->e[st->entry];
      for (int j = 0; j < e->rank + e->nred; j++) {
        if ((j < e->rank) != (pass == 0)) continue;
        int root = uf_find(u.par, off[k] + j);
        if (axis_of[root] >= 0) continue;
        axis_of[root] = add_axis(b, r, fresh_axis_name(A, r, st->dims[j]), dim_size(e, j), pass == 1, axcap);
      }
    }
  for (int k = 0; k < nsts; k++) {
    const pv_stmt *st = &pv->st[sts[k]];
    const ib_entry *e = &ib->e[st->entry];
    const char **d = ARENA_ARRAY(A, const char *, e->rank + e->nred + 1);
    for (int j = 0; j < e->rank + e->nred; j++) {
      int ax = axis_of[uf_find(u.par, off[k] + j)];
      d[j] = ax >= 0 ? r->it[ax].name : st->dims[j];
    }
    b->rdim[sts[k]] = d;
  }
}

/* The reduction of a contraction block in this region: C-CON1, the body is
 * mul(Read, Read) of the product's operands at the needed indices. */
static rexpr *contraction_body(builder *b, region *r, const pv_block *blk, int nb, const int *bax, int *incap) {
  const pv_stmt *ps = &b->pv->st[blk->product_stmt];
  const ib_entry *pe = &b->ib->e[ps->entry];
  const tiny_uop *pu = pe->uop >= 0 ? &b->ib->dag->u[pe->uop] : NULL;
  rexpr *mul = rx_new(b->A, RX_BINARY);
  mul->op = TINY_MUL;
  mul->a = read_expr(b, r, ps, &pe->in[0], incap);
  mul->b = read_expr(b, r, ps, &pe->in[1], incap);
  /* reads at the needed indices, no broadcast.  A CONTRACT's products are
   * exact (as mma's are): fp64 holds the product of two fp16, bf16 or fp32
   * values without rounding, and only the sum rounds, once, to the
   * accumulator dtype.  A
   * MUL that Poly-View folded into the pattern rounds to its own dtype. */
  mul->dt = pu && pu->op == TINY_MUL ? pu->dt : DT_FP64;
  set_axes(b->A, mul, nb, bax);
  return mul;
}

/* The Reduce of statement st (entry e) over its axes ax: its body, the
 * contraction's product when it is the region's contraction (is_con), a
 * product Poly-View did not take as one, or its operand. */
static rexpr *reduce_expr(builder *b, region *r, const pv_stmt *st, const ib_entry *e, const int *ax, int nax,
                          bool is_con, int *incap) {
  arena *A = b->A;
  const poly_view *pv = b->pv;
  const indexbook *ib = b->ib;
  rexpr *x;
  const tiny_uop *u = &ib->dag->u[e->uop];
  const char *const *d = stmt_dims(b, st);
  x = rx_new(A, RX_REDUCE);
  x->rop = u->op == TINY_CONTRACT ? RED_SUM : u->rop;
  x->dt = u->dt;
  x->init = x->rop == RED_SUM ? 0.0 : x->rop == RED_MAX ? -INFINITY : INFINITY;
  x->nred = e->nred;
  x->red = ARENA_ARRAY(A, int, e->nred + 1);
  for (int i = 0; i < e->nred; i++) x->red[i] = axis_index(r, d[e->rank + i]);
  int bax[RG_MAXAX], nb = 0;
  for (int i = 0; i < nax; i++) bax[nb++] = ax[i];
  for (int i = 0; i < e->nred && nb < RG_MAXAX; i++) bax[nb++] = x->red[i];
  if (is_con) {
    x->a = contraction_body(b, r, &pv->blk[pv->block_of_stmt[st - pv->st]], nb, bax, incap);
  } else if (!e->in[0].is_const && ib->e[e->in[0].entry].kind == IBK_PRODUCT &&
             pv->stmt_of_entry[e->in[0].entry] >= 0) {
    /* a product Poly-View did not take as a contraction (no free axis,
     * e.g. sum(x * x)): the body multiplies its two operands in place */
    const pv_stmt *ps = &pv->st[pv->stmt_of_entry[e->in[0].entry]];
    const ib_entry *pe = &ib->e[ps->entry];
    rexpr *mul = rx_new(A, RX_BINARY);
    mul->op = TINY_MUL;
    mul->a = conform(A, operand(b, r, ps, &pe->in[0], incap), nb, bax);
    mul->b = conform(A, operand(b, r, ps, &pe->in[1], incap), nb, bax);
    mul->dt = x->dt;
    set_axes(A, mul, nb, bax);
    x->a = mul;
  } else {
    x->a = conform(A, operand(b, r, st, &e->in[0], incap), nb, bax);
  }
  set_axes(A, x, nax, ax);
  return x;
}

/* Store statement st (entry e): the stored value as a let over the
 * store's axes ax, the signature output it writes and its yield (with the
 * cast). */
static void store_output(builder *b, region *r, const pv_stmt *st, const ib_entry *e, const int *ax, int nax,
                         int *incap, int *letcap, int *outcap, int *ycap) {
  arena *A = b->A;
  const indexbook *ib = b->ib;
  rexpr *x;
  const tiny_uop *u = &ib->dag->u[e->uop];
  /* the stored value over the store's axes: a let, or a new let that
   * transposes, broadcasts or pads it */
  x = conform(A, operand(b, r, st, &e->in[0], incap), nax, ax);
  int l = x->k == RX_LET ? x->let : add_let(b, r, e->value, x, -1, letcap);
  region_memref m = {0};
  m.name = u->tensor;
  m.entry = st->entry;
  m.dt = u->dt;
  m.rank = e->rank;
  m.shape = ARENA_ARRAY(A, const sx *, e->rank + 1);
  for (int i = 0; i < e->rank; i++) m.shape[i] = e->axes[i].size;
  m.alignment = 16;
  m.noalias = true;
  m.layout = "row_major";
  m.materialize = MAT_GMEM;
  m.signature = true;
  ARENA_PUSH(A, r->out, r->nout, *outcap, m);
  /* the yield carries the cast: yield the CAST's operand when it is a let
   * over the same axes */
  region_yield y = {l, r->nout - 1, u->dt};
  const rexpr *le = r->lets[l].e;
  if (le->k == RX_UNARY && le->op == TINY_CAST && le->a->k == RX_LET) y.let = le->a->let;
  ARENA_PUSH(A, r->yields, r->nyields, *ycap, y);
}

/* The region's lets that other regions read become its outputs. */
static void outputs_read_elsewhere(builder *b, region *r, int my, int *outcap, int *ycap) {
  arena *A = b->A;
  const poly_view *pv = b->pv;
  const indexbook *ib = b->ib;
  /* values read by other regions: outputs, "deferred" when only the next
   * region reads them (spec §6.7 step 8) */
  for (int l = 0; l < r->nlets; l++) {
    int entry = b->entry_of_let[l];
    if (entry < 0 || !b->read_outside[entry]) continue;
    bool only_next = true;
    for (int si = 0; si < pv->nst; si++) {
      int bl = pv->block_of_stmt[si];
      int rb = bl >= 0 ? b->region_of_block[bl] : -1;
      if (rb == my) continue;
      const ib_entry *e = &ib->e[pv->st[si].entry];
      for (int k = 0; k < e->nin; k++)
        if (!e->in[k].is_const && e->in[k].entry == entry && rb != my + 1) only_next = false;
    }
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
    m.materialize = only_next ? MAT_DEFERRED : MAT_GMEM;
    ARENA_PUSH(A, r->out, r->nout, *outcap, m);
    region_yield y = {l, r->nout - 1, m.dt};
    ARENA_PUSH(A, r->yields, r->nyields, *ycap, y);
  }
}

static void build_region(builder *b, region *r, int my) {
  arena *A = b->A;
  const poly_view *pv = b->pv;
  const indexbook *ib = b->ib;
  int axcap = 0, incap = 0, outcap = 0, letcap = 0, ycap = 0;
  r->acc_let = -1;
  for (int i = 0; i < ib->n; i++) b->let_of_entry[i] = -1;
  /* statements of the region in program order */
  int *sts = ARENA_ARRAY(A, int, pv->nst + 1), nsts = 0;
  for (int si = 0; si < pv->nst; si++)
    for (int k = 0; k < r->nblocks; k++)
      if (pv->block_of_stmt[si] == r->blocks[k]) sts[nsts++] = si;
  bool *side = ARENA_ARRAY(A, bool, ib->n + 1);
  b->side = side;
  stmt_role *role = ARENA_ARRAY(A, stmt_role, nsts + 1);
  int con = -1;
  for (int k = 0; k < nsts; k++) {
    const pv_stmt *st = &pv->st[sts[k]];
    const pv_block *blk = &pv->blk[pv->block_of_stmt[sts[k]]];
    side[st->entry] = is_side(b, st->entry, sts, nsts);
    role[k] = side[st->entry] ? ROLE_SIDE : ROLE_LET;
    if (ib->e[st->entry].kind == IBK_PRODUCT || (blk->kind == PVB_CONTRACTION && blk->product_stmt == sts[k])) {
      role[k] = ROLE_PRODUCT; /* C-CON1: read directly in the body */
      side[st->entry] = false;
    }
    if (blk->kind == PVB_CONTRACTION && blk->reduce_stmt == sts[k] && con < 0) con = k;
  }
  unify_axes(b, r, sts, nsts, role, con, &axcap);
  for (int k = 0; k < nsts; k++) {
    if (role[k] != ROLE_LET) continue;
    const pv_stmt *st = &pv->st[sts[k]];
    const ib_entry *e = &ib->e[st->entry];
    int ax[RG_MAXAX], nax;
    stmt_axes(b, r, st, e, ax, &nax);
    rexpr *x = NULL;
    if (e->kind == IBK_REDUCE) {
      x = reduce_expr(b, r, st, e, ax, nax, k == con, &incap);
      int li = add_let(b, r, e->value, x, st->entry, &letcap);
      if (k == con) r->acc_let = li;
      continue;
    }
    if (e->kind == IBK_ALU) {
      const tiny_uop *u = &ib->dag->u[e->uop];
      rexpr *ops[3] = {0};
      for (int i = 0; i < e->nin && i < 3; i++) ops[i] = conform(A, operand(b, r, st, &e->in[i], &incap), nax, ax);
      if (u->op == TINY_WHERE) {
        x = rx_new(A, RX_SELECT);
        x->a = ops[0], x->b = ops[1], x->c = ops[2];
      } else {
        x = rx_new(A, tiny_op_arity(u->op) == 1 ? RX_UNARY : RX_BINARY);
        x->op = u->op;
        x->a = ops[0], x->b = ops[1];
      }
      x->dt = u->dt;
      set_axes(A, x, nax, ax);
    } else if (e->kind == IBK_VIEW && e->load_var) {
      /* a gather: the source read through the index loaded at this point */
      x = conform(A, gather_expr(b, r, st, e, &incap), nax, ax);
    } else if (e->kind == IBK_VIEW) {
      /* a non_scop view: this region only materializes it */
      x = conform(A, read_expr(b, r, st, &e->in[0], &incap), nax, ax);
    } else if (e->kind == IBK_STORE) {
      store_output(b, r, st, e, ax, nax, &incap, &letcap, &outcap, &ycap);
      continue;
    } else {
      continue;
    }
    add_let(b, r, e->value, x, st->entry, &letcap);
  }
  outputs_read_elsewhere(b, r, my, &outcap, &ycap);
  remove_dead_lets(b->A, r);
  mark_epilogue(r);
}

/* ---- fusing a deferred value into its reader ------------------------------------- */

typedef struct fuse_ctx {
  arena *A;
  const region *p, *c;
  int in;              /* cons's input that prod's value arrives through */
  int yl;              /* prod's yielded let */
  dtype cast;          /* the yield's cast */
  const int *cmap;     /* cons input -> fused input (-1: the fused value) */
  const int *pmap;     /* prod input -> fused input */
  /* at one Read: prod's axis i -> the Read's index along it, and the Read's axes */
  const sx **at;
  int nax;
  int *ax;
} fuse_ctx;

static const sx *fuse_axis(void *ctx, sx_atom_kind kind, const char *name) {
  const fuse_ctx *x = ctx;
  if (kind != SXA_VAR) return NULL;
  for (int i = 0; i < x->p->niters + x->p->nred; i++)
    if (x->at[i] && strcmp(x->p->it[i].name, name) == 0) return x->at[i];
  return NULL;
}

static rexpr *fuse_node(const fuse_ctx *x, const rexpr *e) {
  rexpr *n = ARENA_NEW(x->A, rexpr);
  *n = *e;
  n->nax = x->nax;
  n->ax = x->ax;
  return n;
}

/* prod's expression e at the current Read's point: lets inlined, broadcasts
 * and transposes dropped (every node varies over the Read's axes; the maps
 * carry the indices), reads and guards re-indexed. */
static rexpr *fuse_inline(const fuse_ctx *x, const rexpr *e) {
  if (!e) return NULL;
  arena *A = x->A;
  switch (e->k) {
  case RX_LET: return fuse_inline(x, x->p->lets[e->let].e);
  case RX_BCAST:
  case RX_TRANSPOSE: return fuse_inline(x, e->a);
  case RX_READ: {
    rexpr *n = fuse_node(x, e);
    n->input = x->pmap[e->input];
    const sx **m = ARENA_ARRAY(A, const sx *, e->nmap + 1);
    for (int d = 0; d < e->nmap; d++) m[d] = sx_subst(A, e->map[d], fuse_axis, (void *)x);
    n->map = m;
    return n;
  }
  default: {
    rexpr *n = fuse_node(x, e);
    n->a = fuse_inline(x, e->a);
    n->b = fuse_inline(x, e->b);
    n->c = fuse_inline(x, e->c);
    if (e->ng) {
      ib_guard *g = ARENA_ARRAY(A, ib_guard, e->ng + 1);
      for (int k = 0; k < e->ng; k++) {
        g[k].e = sx_subst(A, e->guards[k].e, fuse_axis, (void *)x);
        g[k].lo = e->guards[k].lo ? sx_subst(A, e->guards[k].lo, fuse_axis, (void *)x) : NULL;
        g[k].hi = e->guards[k].hi ? sx_subst(A, e->guards[k].hi, fuse_axis, (void *)x) : NULL;
      }
      n->guards = g;
    }
    return n;
  }
  }
}

/* A copy of cons's expression e, its Reads of the fused value replaced. */
static rexpr *fuse_copy(fuse_ctx *x, const rexpr *e) {
  if (!e) return NULL;
  arena *A = x->A;
  if (e->k == RX_READ && e->input == x->in) {
    const rexpr *ye = x->p->lets[x->yl].e;
    fuse_ctx at = *x;
    at.at = ARENA_ARRAY(A, const sx *, x->p->niters + x->p->nred + 1);
    for (int d = 0; d < e->nmap && d < ye->nax; d++) at.at[ye->ax[d]] = e->map[d];
    at.nax = e->nax;
    at.ax = e->ax;
    rexpr *v = fuse_inline(&at, ye);
    /* the value the store would have rounded to the output's dtype */
    if (!(v->k == RX_UNARY && v->op == TINY_CAST && v->dt == x->cast) &&
        (v->dt != x->cast || dtype_bytes(x->cast) < 4)) {
      rexpr *c = region_expr_new(A, RX_UNARY);
      c->op = TINY_CAST;
      c->dt = x->cast;
      c->a = v;
      c->nax = e->nax;
      c->ax = e->ax;
      v = c;
    }
    return v;
  }
  rexpr *n = ARENA_NEW(A, rexpr);
  *n = *e;
  if (e->k == RX_READ) n->input = x->cmap[e->input];
  n->a = fuse_copy(x, e->a);
  n->b = fuse_copy(x, e->b);
  n->c = fuse_copy(x, e->c);
  return n;
}

/* A copy of e with nothing replaced (lets and inputs keep their indices). */
static rexpr *copy_expr(arena *A, const rexpr *e) {
  if (!e) return NULL;
  rexpr *n = ARENA_NEW(A, rexpr);
  *n = *e;
  n->a = copy_expr(A, e->a);
  n->b = copy_expr(A, e->b);
  n->c = copy_expr(A, e->c);
  return n;
}

region *region_fuse_deferred(arena *A, const region *prod, int out, const region *cons, int in, region **left) {
  int y = -1;
  for (int k = 0; k < prod->nyields; k++)
    if (prod->yields[k].output == out) y = k;
  if (y < 0) return NULL;
  region *f = ARENA_NEW(A, region);
  *f = *cons;
  /* the inputs: cons's but the fused value, then prod's it lacks */
  f->in = ARENA_ARRAY(A, region_memref, cons->nin + prod->nin + 1);
  f->nin = 0;
  int *cmap = ARENA_ARRAY(A, int, cons->nin + 1), *pmap = ARENA_ARRAY(A, int, prod->nin + 1);
  for (int i = 0; i < cons->nin; i++) {
    cmap[i] = i == in ? -1 : f->nin;
    if (i != in) f->in[f->nin++] = cons->in[i];
  }
  for (int i = 0; i < prod->nin; i++) {
    pmap[i] = -1;
    for (int j = 0; j < f->nin && pmap[i] < 0; j++)
      if (strcmp(f->in[j].name, prod->in[i].name) == 0) pmap[i] = j;
    if (pmap[i] < 0) pmap[i] = f->nin, f->in[f->nin++] = prod->in[i];
  }
  fuse_ctx x = {A, prod, cons, in, prod->yields[y].let, prod->yields[y].cast, cmap, pmap, NULL, 0, NULL};
  f->lets = ARENA_ARRAY(A, region_let, cons->nlets + 1);
  for (int l = 0; l < cons->nlets; l++) {
    f->lets[l] = cons->lets[l];
    f->lets[l].e = fuse_copy(&x, cons->lets[l].e);
  }
  /* prod without the output: its other outputs, and the lets they need */
  *left = NULL;
  if (prod->nout > 1) {
    region *q = ARENA_NEW(A, region);
    *q = *prod;
    q->lets = ARENA_ARRAY(A, region_let, prod->nlets + 1);
    for (int l = 0; l < prod->nlets; l++) q->lets[l] = prod->lets[l], q->lets[l].e = copy_expr(A, prod->lets[l].e);
    q->in = ARENA_ARRAY(A, region_memref, prod->nin + 1);
    memcpy(q->in, prod->in, sizeof(region_memref) * (size_t)prod->nin);
    q->out = ARENA_ARRAY(A, region_memref, prod->nout + 1);
    q->yields = ARENA_ARRAY(A, region_yield, prod->nyields + 1);
    q->nout = q->nyields = 0;
    for (int o = 0; o < prod->nout; o++)
      if (o != out) q->out[q->nout++] = prod->out[o];
    for (int k = 0; k < prod->nyields; k++)
      if (k != y) {
        region_yield yy = prod->yields[k];
        yy.output -= yy.output > out;
        q->yields[q->nyields++] = yy;
      }
    remove_dead_lets(A, q);
    *left = q;
  }
  return f;
}

/* Whether region a reads a value region b writes. */
static bool region_reads_of(const region *a, const region *b) {
  for (int j = 0; j < a->nin; j++)
    for (int o = 0; o < b->nout && !a->in[j].signature; o++)
      if (a->in[j].entry == b->out[o].entry) return true;
  return false;
}

/* The regions in data-flow order, each after the regions whose values it
 * reads, independent ones in Poly-View's block order: a block that joins
 * its producer's region can read a value of a region formed after it
 * (SwiGLU's silu(x W1) * (x W3) joins x W1's region and reads x W3's).
 * A cycle keeps the order (the pipeline's chain check rejects it). */
static void order_regions(region_set *rs) {
  region *sorted = ARENA_ARRAY(rs->A, region, rs->n + 1);
  bool *placed = ARENA_ARRAY(rs->A, bool, rs->n + 1);
  for (int n = 0; n < rs->n; n++) {
    int pick = -1;
    for (int i = 0; i < rs->n && pick < 0; i++) {
      bool ready = !placed[i];
      for (int j = 0; j < rs->n && ready; j++) ready = j == i || placed[j] || !region_reads_of(&rs->r[i], &rs->r[j]);
      if (ready) pick = i;
    }
    if (pick < 0) return;
    placed[pick] = true, sorted[n] = rs->r[pick];
  }
  memcpy(rs->r, sorted, sizeof(region) * (size_t)rs->n);
}

region_set *region_build(arena *A, const poly_view *pv, diag_list *dl) {
  int nerr0 = dl->nerrors;
  region_set *rs = ARENA_NEW(A, region_set);
  rs->A = A;
  rs->pv = pv;
  const indexbook *ib = pv->ib;
  builder b = {A, rs, pv, ib, dl, ARENA_ARRAY(A, int, pv->nblk + 1), ARENA_ARRAY(A, int, ib->n + 1),
               NULL, 0, NULL, ARENA_ARRAY(A, bool, ib->n + 1), ARENA_ARRAY(A, const char **, pv->nst + 1), false};
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
    if (ib->dag->fe) r->name = arena_printf(A, "%s.%s", ib->dag->fe->name, pv->blk[bi].name);
    r->blocks = ARENA_ARRAY(A, int, 1);
    r->blocks[0] = bi;
    r->nblocks = 1;
    b.region_of_block[bi] = rs->n - 1;
  }
  /* values that a statement of another region reads */
  for (int si = 0; si < pv->nst; si++) {
    int bl = pv->block_of_stmt[si];
    if (bl < 0) continue;
    const ib_entry *e = &ib->e[pv->st[si].entry];
    for (int k = 0; k < e->nin; k++) {
      if (e->in[k].is_const) continue;
      int sj = pv->stmt_of_entry[e->in[k].entry];
      int bj = sj >= 0 ? pv->block_of_stmt[sj] : -1;
      if (bj >= 0 && b.region_of_block[bj] != b.region_of_block[bl]) b.read_outside[e->in[k].entry] = true;
    }
  }
  for (int i = 0; i < rs->n; i++) {
    for (int s = 0; s < pv->nst; s++) b.rdim[s] = NULL;
    build_region(&b, &rs->r[i], i);
    region_normalize(rs, &rs->r[i], dl);
  }
  /* a region that yields nothing (its values died, e.g. a mul that Tiny
   * recomputed in the accumulator type) is no kernel */
  int n = 0;
  for (int i = 0; i < rs->n; i++)
    if (rs->r[i].nyields > 0) rs->r[n++] = rs->r[i];
  rs->n = n;
  order_regions(rs);
  bool ok = region_verify(rs, dl);
  return ok && !b.failed && dl->nerrors == nerr0 ? rs : NULL;
}

/* ---- SRNF ------------------------------------------------------------------------------ */

static bool uses_axes(const rexpr *e, const int *axes, int n) {
  for (int i = 0; i < e->nax; i++)
    for (int j = 0; j < n; j++)
      if (e->ax[i] == axes[j]) return true;
  return false;
}

/* Depends(e, K) (spec §6.7 step 4): whether e's value changes along an axis
 * of K.  A BroadcastInDim or Transpose changes as its operand does. */
static bool depends(const rexpr *e, const int *axes, int n) {
  while (e->k == RX_BCAST || e->k == RX_TRANSPOSE) e = e->a;
  return uses_axes(e, axes, n);
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

/* R1: sum_K(g * E) with g independent of K is g * sum_K(E).  C-CON1 keeps
 * operand reads inside the body, so only computed factors move out. */
static rexpr *hoist(region_set *rs, rexpr *red) {
  rexpr *body = red->a;
  if (red->rop != RED_SUM || body->k != RX_BINARY || body->op != TINY_MUL) return red;
  rexpr *g = NULL, *rest = NULL;
  bool da = depends(body->a, red->red, red->nred), db = depends(body->b, red->red, red->nred);
  if (!da && db) g = body->a, rest = body->b;
  else if (!db && da) g = body->b, rest = body->a;
  if (!g) return red;
  rexpr *g0 = g;
  while (g0->k == RX_BCAST || g0->k == RX_TRANSPOSE) g0 = g0->a;
  if (g0->k == RX_READ || g0->k == RX_SELECT) return red;
  rexpr *inner = rx_new(rs->A, RX_REDUCE);
  *inner = *red;
  inner->a = rest;
  rexpr *mul = rx_new(rs->A, RX_BINARY);
  *mul = *body;
  mul->dt = red->dt;
  mul->a = conform(rs->A, g0, red->nax, red->ax);
  mul->b = inner;
  mul->nax = red->nax;
  mul->ax = red->ax;
  return mul;
}

static int count_let_refs(const rexpr *e, int l) {
  if (!e) return 0;
  return (e->k == RX_LET && e->let == l) + count_let_refs(e->a, l) + count_let_refs(e->b, l) + count_let_refs(e->c, l);
}

/* References to let l from other lets and from yields. */
static int let_uses(const region *r, int l) {
  int n = 0;
  for (int k = 0; k < r->nlets; k++) n += count_let_refs(r->lets[k].e, l);
  for (int y = 0; y < r->nyields; y++) n += r->yields[y].let == l;
  return n;
}

void region_normalize(region_set *rs, region *r, diag_list *dl) {
  bool merged = false;
  for (int l = 0; l < r->nlets; l++) {
    rexpr *e = r->lets[l].e;
    if (e->k != RX_REDUCE) continue;
    /* R0 through a let: Reduce(op){ x } where x = Reduce(op){..} is read only
     * here (a Transpose of x only reorders the body's axes) */
    const rexpr *ref = e->a->k == RX_TRANSPOSE ? e->a->a : e->a;
    if (ref->k == RX_LET) {
      int x = ref->let;
      const rexpr *xe = r->lets[x].e;
      if (xe->k == RX_REDUCE && xe->rop == e->rop && let_uses(r, x) == 1 && !r->lets[x].post_reduce) {
        rexpr *outer = rx_new(rs->A, RX_REDUCE);
        *outer = *e;
        outer->a = (rexpr *)xe;
        e = region_merge_reduce(rs, outer, dl);
        if (x == r->acc_let) r->acc_let = l; /* the contraction now sums over both */
        merged = true;
      }
    } else if (e->a->k == RX_REDUCE && e->a->rop == e->rop) {
      e = region_merge_reduce(rs, e, dl); /* R0 */
    }
    r->lets[l].e = hoist(rs, e); /* R1 */
  }
  if (merged) {
    remove_dead_lets(rs->A, r);
    mark_epilogue(r);
  }
}

/* ---- verification ---------------------------------------------------------------------- */

static bool same_axes(const rexpr *a, const rexpr *b) {
  if (a->nax != b->nax) return false;
  for (int i = 0; i < a->nax; i++)
    if (a->ax[i] != b->ax[i]) return false;
  return true;
}

/* A read of an operand, possibly under a pad Select, a cast or a
 * Broadcast/Transpose: what C-CON1 allows as a factor of the body. */
static bool is_operand_read(const rexpr *e) {
  if (e && (e->k == RX_BCAST || e->k == RX_TRANSPOSE)) e = e->a;
  if (e && e->k == RX_TRANSPOSE) e = e->a;
  if (e && e->k == RX_SELECT && !e->a) e = e->b;
  if (e && e->k == RX_UNARY && e->op == TINY_CAST) e = e->a;
  return e && e->k == RX_READ;
}

static double neutral_of(reduce_op op) { return op == RED_SUM ? 0.0 : op == RED_MAX ? -INFINITY : INFINITY; }

/* E1602 NeutralInvalid.  A guard Select that is not a pad (a tail or bounds
 * predicate: "this iteration does not exist") must give the reduction's
 * neutral where it reaches the accumulator: as the body, under a cast or a
 * Broadcast/Transpose, in the then-branch of such a Select, or (for sum) as a
 * factor of a product, where 0 annihilates.  A pad Select's else value is
 * data (a pad of -1 really adds -1), and a value predicate (WHERE) is data
 * too, so neither is checked.  Bool Selects are predicates, not values. */
static bool check_neutral(const region_set *rs, const region *r, const rexpr *e, reduce_op op, diag_list *dl,
                          const char *at) {
  bool ok = true;
  switch (e->k) {
  case RX_SELECT:
    if (!e->a && !e->pad && e->dt != DT_BOOL && e->c) {
      double nv = neutral_of(op);
      bool neutral = e->c->k == RX_CONST && !e->c->crsqrt && !e->c->crecip && e->c->cval == nv;
      if (!neutral) {
        diag_report(dl, D_NEUTRAL_INVALID, at, NULL,
                    "a tail/bounds Select inside a %s reduction gives %s where its guards fail; the reduction's "
                    "neutral is %s",
                    reduce_op_name(op), region_expr_str(rs->A, r, e->c),
                    op == RED_SUM ? "0" : op == RED_MAX ? "-inf" : "+inf");
        ok = false;
      }
    }
    if (!e->a && e->b) ok &= check_neutral(rs, r, e->b, op, dl, at);
    break;
  case RX_UNARY:
    if (e->op == TINY_CAST && e->a) ok &= check_neutral(rs, r, e->a, op, dl, at);
    break;
  case RX_BCAST:
  case RX_TRANSPOSE:
    if (e->a) ok &= check_neutral(rs, r, e->a, op, dl, at);
    break;
  case RX_BINARY:
    if (op == RED_SUM && e->op == TINY_MUL && e->a && e->b) {
      /* both sides, so that each reports its own diagnostic */
      ok &= check_neutral(rs, r, e->a, op, dl, at);
      ok &= check_neutral(rs, r, e->b, op, dl, at);
    }
    break;
  default: break;
  }
  return ok;
}

static bool axis_ok(const region *r, int a) { return a >= 0 && a < r->niters + r->nred; }

static bool verify_expr(const region_set *rs, const region *r, int let, const rexpr *e, int depth, diag_list *dl,
                        const char *at, bool ccon1) {
  bool ok = true;
  if (!e) {
    diag_report(dl, D_INTERNAL, at, NULL, "missing operand");
    return false;
  }
  if (depth > 200) return false;
#define FAIL(...)                                       \
  do {                                                  \
    diag_report(dl, D_INTERNAL, at, NULL, __VA_ARGS__); \
    ok = false;                                         \
  } while (0)
  for (int i = 0; i < e->nax; i++)
    if (!axis_ok(r, e->ax[i])) {
      FAIL("an expression varies over axis %d, which the region does not have", e->ax[i]);
      return false;
    }
  switch (e->k) {
  case RX_UNARY:
    if (!e->a) FAIL("Unary %s without an operand", tiny_op_name(e->op));
    else if (e->a->k != RX_CONST && !same_axes(e, e->a))
      FAIL("Unary %s varies over other axes than its operand", tiny_op_name(e->op));
    break;
  case RX_BINARY:
    if (!e->a || !e->b) FAIL("Binary %s without two operands", tiny_op_name(e->op));
    else if (!ccon1 && e->a->k != RX_CONST && e->b->k != RX_CONST && !same_axes(e->a, e->b))
      FAIL("Binary %s operands vary over different axes (BroadcastInDim missing)", tiny_op_name(e->op));
    break;
  case RX_SELECT:
    if (!e->b || !e->c) FAIL("Select without then and else");
    if (e->a && e->a->dt != DT_BOOL) FAIL("Select predicate is not bool");
    if (!e->a && e->ng < 1) FAIL("Select without a predicate or guards (UnguardedAccess)");
    for (int g = 0; g < e->ng; g++)
      if (!e->guards[g].e || !e->guards[g].lo) FAIL("Select guard %d is incomplete", g);
    break;
  case RX_REDUCE:
    if (e->nred < 1) FAIL("Reduce without axes");
    if (!e->a) {
      FAIL("Reduce without a body");
      break;
    }
    for (int i = 0; i < e->nred; i++) {
      if (!axis_ok(r, e->red[i])) {
        FAIL("Reduce axis %d unknown", e->red[i]);
        continue;
      }
      for (int j = 0; j < e->nax; j++)
        if (e->ax[j] == e->red[i]) FAIL("Reduce keeps its reduced axis %s", r->it[e->red[i]].name);
    }
    for (int i = 0; i < e->a->nax; i++) {
      bool known = false;
      for (int j = 0; j < e->nax; j++) known |= e->a->ax[i] == e->ax[j];
      for (int j = 0; j < e->nred; j++) known |= e->a->ax[i] == e->red[j];
      if (!known && axis_ok(r, e->a->ax[i]))
        FAIL("Reduce body varies over %s, which the reduction neither keeps nor reduces", r->it[e->a->ax[i]].name);
    }
    if (!check_neutral(rs, r, e->a, e->rop, dl, at)) ok = false;
    break;
  case RX_LET:
    if (e->let < 0 || e->let >= r->nlets) FAIL("let reference out of range");
    else if (let >= 0 && e->let >= let) FAIL("let %s refers to %s, which is not an earlier let (SSA)", r->lets[let].name, r->lets[e->let].name);
    break;
  case RX_READ:
    if (e->input < 0 || e->input >= r->nin) FAIL("read of an unknown input");
    else if (e->nmap != r->in[e->input].rank) FAIL("read map of %d entries for rank %d", e->nmap, r->in[e->input].rank);
    if (!e->ldvar && e->a) FAIL("a plain Read with an operand");
    if (e->ldvar) {
      /* a read through a loaded index: the index is an int32 value of the
       * region's axes, and the read is guarded on it */
      if (!e->a || e->a->dt != DT_INT32) FAIL("a Read through %s without an int32 index", e->ldvar);
      bool guarded = false;
      for (int g = 0; g < e->ng; g++) {
        if (!e->guards[g].e || !e->guards[g].lo || !e->guards[g].hi) FAIL("guard %d of a Read through %s is incomplete", g, e->ldvar);
        else guarded |= sx_as_var(e->guards[g].e) && strcmp(sx_as_var(e->guards[g].e), e->ldvar) == 0;
      }
      if (!guarded) FAIL("a Read through %s without the guard on %s (UnguardedAccess)", e->ldvar, e->ldvar);
      if (e->a && e->a->nax > e->nax) FAIL("the index of a Read through %s varies over axes the Read does not", e->ldvar);
    }
    break;
  case RX_BCAST:
    if (!e->a || !e->bdims || e->a->nax > e->nax) {
      FAIL("BroadcastInDim with a missing operand or more operand axes than result axes");
      break;
    }
    for (int j = 0; j < e->a->nax; j++)
      if (e->bdims[j] < 0 || e->bdims[j] >= e->nax || e->ax[e->bdims[j]] != e->a->ax[j])
        FAIL("BroadcastInDim puts operand axis %d at result dimension %d, which is another axis", j, e->bdims[j]);
    break;
  case RX_TRANSPOSE: {
    if (!e->a || !e->perm || e->a->nax != e->nax) {
      FAIL("Transpose with a missing operand or another rank than its operand");
      break;
    }
    unsigned seen = 0;
    for (int i = 0; i < e->nax; i++) {
      if (e->perm[i] < 0 || e->perm[i] >= e->nax || e->perm[i] >= 32 || (seen >> e->perm[i] & 1u)) {
        FAIL("Transpose permutation is not a permutation");
        break;
      }
      seen |= 1u << e->perm[i];
      if (e->ax[i] != e->a->ax[e->perm[i]]) FAIL("Transpose result axis %d is not operand axis %d", i, e->perm[i]);
    }
    break;
  }
  case RX_CONST: break;
  }
#undef FAIL
  if (!ok) return false;
  bool body = e->k == RX_REDUCE && e->a->k == RX_BINARY && e->a->op == TINY_MUL && e->a->a && e->a->b &&
              is_operand_read(e->a->a) && is_operand_read(e->a->b);
  if (e->a && !verify_expr(rs, r, let, e->a, depth + 1, dl, at, body)) ok = false;
  if (e->b && !verify_expr(rs, r, let, e->b, depth + 1, dl, at, false)) ok = false;
  if (e->c && !verify_expr(rs, r, let, e->c, depth + 1, dl, at, false)) ok = false;
  return ok;
}

bool region_streams_to(const region *a, const region *b) {
  if (a->nyields != 1 || a->acc_let < 0 || b->acc_let < 0 || a->out[a->yields[0].output].materialize != MAT_DEFERRED)
    return false;
  for (int l = a->acc_let + 1; l < a->nlets; l++)
    if (a->lets[l].e->k == RX_REDUCE && a->lets[l].e->rop == RED_MAX) return true;
  return false;
}

bool region_verify(const region_set *rs, diag_list *dl) {
  bool ok = true;
  arena *A = rs->A;
  for (int ri = 0; ri < rs->n; ri++) {
    const region *r = &rs->r[ri];
    const char *at = arena_printf(A, "Region[%s]", r->name);
#define BUG(...)                                        \
  do {                                                  \
    diag_report(dl, D_INTERNAL, at, NULL, __VA_ARGS__); \
    ok = false;                                         \
  } while (0)
    if (r->acc_let >= r->nlets) BUG("the accumulator let %d is out of range", r->acc_let);
    for (int l = 0; l < r->nlets; l++) {
      const rexpr *e = r->lets[l].e;
      if (!e) {
        BUG("let %s has no expression", r->lets[l].name);
        continue;
      }
      if (!verify_expr(rs, r, l, e, 0, dl, arena_printf(A, "Region[%s].%s", r->name, r->lets[l].name), false))
        ok = false;
      if (e->k == RX_REDUCE && (dtype_bytes(e->dt) < 4) && e->rop == RED_SUM) {
        diag_report(dl, D_ACC_DTYPE_MISSING, at, NULL, "let %s sums in %s", r->lets[l].name, dtype_name(e->dt));
        ok = false;
      }
      if (l == r->acc_let) {
        /* C-CON1: the contraction is a sum whose body reads its operands directly */
        const rexpr *body = e->k == RX_REDUCE ? e->a : NULL;
        if (e->k != RX_REDUCE || e->rop != RED_SUM || !body)
          BUG("the accumulator %s is not a Reduce(sum)", r->lets[l].name);
        else if (!(body->k == RX_BINARY && body->op == TINY_MUL && is_operand_read(body->a) && is_operand_read(body->b)))
          BUG("the contraction %s does not read its operands directly (C-CON1)", r->lets[l].name);
      }
      if (r->lets[l].post_reduce && l <= r->acc_let) BUG("epilogue let %s precedes the reduction (R3)", r->lets[l].name);
      if (r->lets[l].post_reduce && r->acc_let < 0) BUG("epilogue let %s in a region without a contraction", r->lets[l].name);
    }
    bool *yielded = calloc((size_t)r->nout + 1, sizeof(bool));
    if (!yielded) dlc_die_oom();
    for (int y = 0; y < r->nyields; y++) {
      const region_yield *yi = &r->yields[y];
      if (yi->let < 0 || yi->let >= r->nlets || yi->output < 0 || yi->output >= r->nout) {
        BUG("yield %d is out of range", y);
        continue;
      }
      if (yielded[yi->output]) BUG("output %s is yielded twice", r->out[yi->output].name);
      yielded[yi->output] = true;
      const rexpr *le = r->lets[yi->let].e;
      if (le->nax != r->out[yi->output].rank)
        BUG("yield of %s (%d axes) into %s of rank %d", r->lets[yi->let].name, le->nax, r->out[yi->output].name,
            r->out[yi->output].rank);
      for (int i = 0; i < le->nax; i++)
        if (le->ax[i] >= r->niters) BUG("yield of %s, which varies over the reduce axis %s", r->lets[yi->let].name,
                                        axis_ok(r, le->ax[i]) ? r->it[le->ax[i]].name : "?");
    }
    for (int o = 0; o < r->nout; o++)
      if (!yielded[o]) BUG("output %s is never yielded", r->out[o].name);
    free(yielded);
#undef BUG
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
    if (e->crsqrt || e->crecip) {
      o = cJSON_CreateObject();
      cJSON_AddItemToObject(o, "const", num_json(e->cval));
      if (e->crsqrt) cJSON_AddStringToObject(o, "times_rsqrt", e->crsqrt);
      if (e->crecip) cJSON_AddStringToObject(o, "over", e->crecip);
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
    if (e->ldvar) {
      cJSON *li = cJSON_AddObjectToObject(rd, "load_index");
      cJSON_AddStringToObject(li, "var", e->ldvar);
      cJSON_AddItemToObject(li, "index", expr_json(A, r, e->a));
      cJSON *g = cJSON_AddArrayToObject(rd, "guards");
      for (int i = 0; i < e->ng; i++)
        cJSON_AddItemToArray(g, cJSON_CreateString(arena_printf(A, "%s <= %s < %s", sx_str(A, e->guards[i].lo),
                                                                  sx_str(A, e->guards[i].e), sx_str(A, e->guards[i].hi))));
      cJSON_AddItemToObject(rd, "else", num_json(e->cval));
    }
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

/* ---- compact text ---------------------------------------------------------- */

/* binding strength of the infix forms: comparisons < + - < * / < prefix < atoms */
enum { PR_CMP = 1, PR_ADD, PR_MUL, PR_PREFIX, PR_ATOM };

static void text_expr(strbuf *s, arena *A, const region *r, const rexpr *e, int min_prec);

/* the shortest %g text that reads back as v */
static void text_num(strbuf *s, double v) {
  if (isinf(v)) {
    sb_puts(s, v < 0 ? "-inf" : "inf");
    return;
  }
  char b[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(b, sizeof b, "%.*g", prec, v);
    if (strtod(b, NULL) == v) break;
  }
  sb_puts(s, b);
}

/* a broadcast or a cast to fp32: left out of the text */
static bool text_hidden(const rexpr *e) {
  return e->k == RX_BCAST || (e->k == RX_UNARY && e->op == TINY_CAST && e->dt == DT_FP32);
}

static int text_prec(const rexpr *e) {
  if (text_hidden(e)) return text_prec(e->a);
  switch (e->k) {
  case RX_CONST: return e->crsqrt || e->crecip ? PR_MUL : (e->cval < 0 ? PR_PREFIX : PR_ATOM);
  case RX_UNARY: return e->op == TINY_NEG ? PR_PREFIX : e->op == TINY_RECIP ? PR_MUL : PR_ATOM;
  case RX_BINARY:
    switch (e->op) {
    case TINY_ADD:
    case TINY_SUB: return PR_ADD;
    case TINY_MUL:
    case TINY_FDIV: return PR_MUL;
    case TINY_CMPLT:
    case TINY_CMPNE: return PR_CMP;
    default: return PR_ATOM;
    }
  default: return PR_ATOM;
  }
}

static void text_guards(strbuf *s, arena *A, const rexpr *e) {
  for (int g = 0; g < e->ng; g++) {
    const ib_guard *gd = &e->guards[g];
    const char *x = sx_str(A, gd->e);
    if (g) sb_puts(s, " && ");
    if (gd->hi) sb_printf(s, "%s <= %s < %s", sx_str(A, gd->lo), x, sx_str(A, gd->hi));
    else sb_printf(s, "%s >= %s", x, sx_str(A, gd->lo));
  }
}

static bool is_const(const rexpr *e, double v) { return e->k == RX_CONST && !e->crsqrt && !e->crecip && e->cval == v; }

static void text_body(strbuf *s, arena *A, const region *r, const rexpr *e) {
  switch (e->k) {
  case RX_CONST:
    text_num(s, e->cval);
    if (e->crsqrt) sb_printf(s, " * rsqrt(%s)", e->crsqrt);
    if (e->crecip) sb_printf(s, " / %s", e->crecip);
    return;
  case RX_LET: sb_puts(s, r->lets[e->let].name); return;
  case RX_READ:
    /* a read through a loaded index: gather(X[i0, ld]; ld = I[i0, i1]; 0 <= ld < N; else 0) */
    if (e->ldvar) sb_puts(s, "gather(");
    sb_printf(s, "%s[", r->in[e->input].name);
    for (int i = 0; i < e->nmap; i++) sb_printf(s, "%s%s", i ? ", " : "", sx_str(A, e->map[i]));
    sb_puts(s, "]");
    if (e->ldvar) {
      sb_printf(s, "; %s = ", e->ldvar);
      text_expr(s, A, r, e->a, 0);
      for (int i = 0; i < e->ng; i++)
        sb_printf(s, "; %s <= %s < %s", sx_str(A, e->guards[i].lo), sx_str(A, e->guards[i].e), sx_str(A, e->guards[i].hi));
      sb_puts(s, "; else ");
      text_num(s, e->cval);
      sb_puts(s, ")");
    }
    return;
  case RX_UNARY:
    if (e->op == TINY_CAST) {
      sb_printf(s, "%s(", dtype_name(e->dt)), text_expr(s, A, r, e->a, 0), sb_puts(s, ")");
    } else if (e->op == TINY_NEG) {
      sb_puts(s, "-");
      text_expr(s, A, r, e->a, PR_PREFIX);
    } else if (e->op == TINY_RECIP) {
      sb_puts(s, "1 / ");
      text_expr(s, A, r, e->a, PR_PREFIX);
    } else {
      sb_printf(s, "%s(", lower(A, tiny_op_name(e->op)));
      text_expr(s, A, r, e->a, 0);
      sb_puts(s, ")");
    }
    return;
  case RX_BINARY: {
    const char *inf = NULL;
    switch (e->op) {
    case TINY_ADD: inf = " + "; break;
    case TINY_SUB: inf = " - "; break;
    case TINY_MUL: inf = " * "; break;
    case TINY_FDIV: inf = " / "; break;
    case TINY_CMPLT: inf = " < "; break;
    case TINY_CMPNE: inf = " != "; break;
    default: break;
    }
    if (!inf) {
      sb_printf(s, "%s(", lower(A, tiny_op_name(e->op)));
      text_expr(s, A, r, e->a, 0);
      sb_puts(s, ", ");
      text_expr(s, A, r, e->b, 0);
      sb_puts(s, ")");
      return;
    }
    int p = text_prec(e);
    /* left-associative: the right operand of - and / (and of a comparison) binds tighter */
    text_expr(s, A, r, e->a, p == PR_CMP ? p + 1 : p);
    sb_puts(s, inf);
    text_expr(s, A, r, e->b, p + 1);
    return;
  }
  case RX_SELECT:
    /* a guard as a 0/1 value: just the guard */
    if (!e->a && is_const(e->b, 1) && is_const(e->c, 0)) {
      text_guards(s, A, e);
      return;
    }
    sb_puts(s, "select(");
    if (e->a) text_expr(s, A, r, e->a, 0);
    else text_guards(s, A, e);
    sb_puts(s, ", ");
    text_expr(s, A, r, e->b, 0);
    sb_puts(s, ", ");
    text_expr(s, A, r, e->c, 0);
    sb_puts(s, ")");
    return;
  case RX_REDUCE:
    sb_printf(s, "%s[", reduce_op_name(e->rop));
    for (int i = 0; i < e->nred; i++) sb_printf(s, "%s%s", i ? ", " : "", r->it[e->red[i]].name);
    sb_puts(s, "](");
    text_expr(s, A, r, e->a, 0);
    bool identity = (e->rop == RED_SUM && e->init == 0) || (e->rop == RED_MAX && isinf(e->init) && e->init < 0) ||
                    (e->rop == RED_MIN && isinf(e->init) && e->init > 0);
    if (!identity) sb_puts(s, "; init "), text_num(s, e->init);
    sb_puts(s, ")");
    return;
  case RX_BCAST: text_expr(s, A, r, e->a, 0); return;
  case RX_TRANSPOSE:
    sb_puts(s, "transpose(");
    text_expr(s, A, r, e->a, 0);
    sb_puts(s, ", [");
    for (int i = 0; i < e->nax; i++) sb_printf(s, "%s%d", i ? ", " : "", e->perm[i]);
    sb_puts(s, "])");
    return;
  }
}

/* e, in parentheses when it binds less tightly than min_prec */
static void text_expr(strbuf *s, arena *A, const region *r, const rexpr *e, int min_prec) {
  if (text_hidden(e)) {
    text_expr(s, A, r, e->a, min_prec);
    return;
  }
  bool paren = text_prec(e) < min_prec;
  /* a bare guard ("0 <= x < H && ...") is bracketed inside any operator */
  if (e->k == RX_SELECT && !e->a && is_const(e->b, 1) && is_const(e->c, 0)) paren = min_prec > 0;
  if (paren) sb_puts(s, "(");
  text_body(s, A, r, e);
  if (paren) sb_puts(s, ")");
}

char *region_expr_text(arena *A, const region *r, const rexpr *e) {
  strbuf s = {0};
  text_expr(&s, A, r, e, 0);
  return sb_take_arena(&s, A);
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
  if (out) cJSON_AddStringToObject(o, "materialize", materialize_name(m->materialize));
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
