/* Tiny IR: builders, Frontend lowering (spec §10.1), the CONTRACT folding
 * rewrite, verification and dump (spec §3). */
#include "tiny.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  int arity;
  tiny_kind kind;
  tiny_dtype_rule dr;
  const char *cuda;
} tiny_table[] = {
#define X(e, name, arity, kind, dr, cuda, cexpr) {name, arity, kind, dr, cuda},
#include "tiny.def"
#undef X
};

const char *tiny_op_name(tiny_op op) { return tiny_table[op].name; }
int tiny_op_arity(tiny_op op) { return tiny_table[op].arity; }
tiny_kind tiny_op_kind(tiny_op op) { return tiny_table[op].kind; }
const char *tiny_op_cuda(tiny_op op) { return tiny_table[op].cuda; }

double tiny_op_eval(tiny_op op, double a, double b, double c) {
  (void)a, (void)b, (void)c;
  switch (op) {
#define X(e, name, arity, kind, dr, cuda, cexpr) \
  case e:                                        \
    return (double)(cexpr);
#include "tiny.def"
#undef X
  default:
    return 0;
  }
}

bool tiny_op_parse(const char *name, tiny_op *out) {
  for (int i = 0; i < TINY__COUNT; i++)
    if (strcmp(tiny_table[i].name, name) == 0) {
      *out = (tiny_op)i;
      return true;
    }
  return false;
}

/* ---- builders ----------------------------------------------------------------- */

tiny_dag *tiny_new(arena *A, const fe_graph *fe) {
  tiny_dag *d = ARENA_NEW(A, tiny_dag);
  d->A = A;
  d->fe = fe;
  return d;
}

int tiny_find(const tiny_dag *d, const char *name) {
  for (int i = 0; i < d->n; i++)
    if (strcmp(d->u[i].out, name) == 0) return i;
  return -1;
}

static const char *fresh_name(tiny_dag *d, const char *base) {
  if (tiny_find(d, base) < 0) return arena_strdup(d->A, base);
  for (int k = 1;; k++) {
    const char *s = arena_printf(d->A, "%s.%d", base, k);
    if (tiny_find(d, s) < 0) return s;
  }
}

static int push(tiny_dag *d, tiny_uop u, const char *base) {
  if (!u.out) {
    char low[32];
    const char *nm = tiny_table[u.op].name;
    size_t i = 0;
    for (; nm[i] && i < sizeof low - 1; i++) low[i] = (char)tolower((unsigned char)nm[i]);
    low[i] = 0;
    u.out = fresh_name(d, base ? arena_printf(d->A, "%s.%s", base, low) : low);
  }
  ARENA_PUSH(d->A, d->u, d->n, d->cap, u);
  return d->n - 1;
}

/* Generated names are "<root>.<op>": the value's name up to its first dot. */
static const char *base_of(tiny_dag *d, int x) {
  if (x < 0) return NULL;
  const char *n = d->u[x].out, *dot = strchr(n, '.');
  return dot ? arena_strndup(d->A, n, (size_t)(dot - n)) : n;
}

static const sx **copy_shape(arena *A, int rank, const sx *const *s) {
  const sx **r = ARENA_ARRAY(A, const sx *, rank > 0 ? rank : 1);
  for (int i = 0; i < rank; i++) r[i] = s[i];
  return r;
}

int tiny_buffer(tiny_dag *d, const char *tensor, dtype dt, int rank, const sx *const *shape) {
  tiny_uop u = {.op = TINY_BUFFER, .dt = dt, .rank = rank, .shape = copy_shape(d->A, rank, shape)};
  u.tensor = arena_strdup(d->A, tensor);
  u.out = fresh_name(d, tensor);
  return push(d, u, NULL);
}

int tiny_const(tiny_dag *d, double v, dtype dt) {
  tiny_uop u = {.op = TINY_CONST, .dt = dt, .cval = v};
  return push(d, u, NULL);
}

int tiny_range(tiny_dag *d, int rank, const sx *const *shape, int axis) {
  tiny_uop u = {.op = TINY_RANGE, .dt = DT_INT32, .rank = rank, .shape = copy_shape(d->A, rank, shape)};
  u.axis = axis;
  return push(d, u, NULL);
}

static tiny_uop unary_like(tiny_dag *d, tiny_op op, int x) {
  tiny_uop u = {.op = op, .nsrc = 1, .src = {x}, .dt = d->u[x].dt};
  u.origin = d->u[x].origin;
  return u;
}

static const sx *product(arena *A, int n, const sx *const *s) {
  const sx *p = sx_int(A, 1);
  for (int i = 0; i < n; i++) p = sx_mul(A, p, s[i]);
  return p;
}

int tiny_reshape(tiny_dag *d, int x, int rank, const sx *const *shape, diag_list *dl, const char *origin) {
  tiny_uop *s = &d->u[x];
  if (!sx_equal(product(d->A, s->rank, s->shape), product(d->A, rank, shape))) {
    diag_report(dl, D_RESHAPE_MISMATCH, origin, NULL, "RESHAPE of %s to %s changes the number of elements",
                sx_shape_str(d->A, s->rank, s->shape), sx_shape_str(d->A, rank, shape));
    return -1;
  }
  if (rank > TINY_MAX_RANK) {
    diag_report(dl, D_BAD_MOVEMENT, origin, NULL, "rank %d exceeds %d", rank, TINY_MAX_RANK);
    return -1;
  }
  tiny_uop u = unary_like(d, TINY_RESHAPE, x);
  u.origin = origin;
  u.rank = rank;
  u.shape = copy_shape(d->A, rank, shape);
  return push(d, u, base_of(d, x));
}

int tiny_permute(tiny_dag *d, int x, const int *perm, diag_list *dl, const char *origin) {
  tiny_uop *s = &d->u[x];
  bool seen[TINY_MAX_RANK] = {0};
  for (int i = 0; i < s->rank; i++) {
    if (perm[i] < 0 || perm[i] >= s->rank || seen[perm[i]]) {
      diag_report(dl, D_BAD_MOVEMENT, origin, NULL, "PERMUTE argument is not a permutation of %d axes", s->rank);
      return -1;
    }
    seen[perm[i]] = true;
  }
  tiny_uop u = unary_like(d, TINY_PERMUTE, x);
  u.origin = origin;
  u.rank = s->rank;
  u.shape = ARENA_ARRAY(d->A, const sx *, s->rank > 0 ? s->rank : 1);
  u.perm = ARENA_ARRAY(d->A, int, s->rank > 0 ? s->rank : 1);
  if (s->labels) u.labels = ARENA_ARRAY(d->A, const char *, s->rank);
  for (int i = 0; i < s->rank; i++) {
    u.shape[i] = s->shape[perm[i]];
    u.perm[i] = perm[i];
    if (s->labels) u.labels[i] = s->labels[perm[i]];
  }
  return push(d, u, base_of(d, x));
}

int tiny_expand(tiny_dag *d, int x, int rank, const sx *const *shape, diag_list *dl, const char *origin) {
  tiny_uop *s = &d->u[x];
  if (rank != s->rank) {
    diag_report(dl, D_BAD_MOVEMENT, origin, NULL, "EXPAND keeps the rank (%d), got %d", s->rank, rank);
    return -1;
  }
  for (int i = 0; i < rank; i++)
    if (!sx_is_one(s->shape[i]) && !sx_equal(s->shape[i], shape[i])) {
      diag_report(dl, D_BROADCAST_MISMATCH, origin, NULL, "EXPAND of axis %d from %s to %s: only size-1 axes expand",
                  i, sx_str(d->A, s->shape[i]), sx_str(d->A, shape[i]));
      return -1;
    }
  tiny_uop u = unary_like(d, TINY_EXPAND, x);
  u.origin = origin;
  u.rank = rank;
  u.shape = copy_shape(d->A, rank, shape);
  return push(d, u, base_of(d, x));
}

int tiny_pad(tiny_dag *d, int x, const sx *const *lo, const sx *const *hi, diag_list *dl, const char *origin) {
  tiny_uop *s = &d->u[x];
  tiny_uop u = unary_like(d, TINY_PAD, x);
  u.origin = origin;
  u.rank = s->rank;
  u.shape = ARENA_ARRAY(d->A, const sx *, s->rank > 0 ? s->rank : 1);
  u.lo = copy_shape(d->A, s->rank, lo);
  u.hi = copy_shape(d->A, s->rank, hi);
  for (int i = 0; i < s->rank; i++) {
    int64_t v;
    if ((sx_is_int(lo[i], &v) && v < 0) || (sx_is_int(hi[i], &v) && v < 0)) {
      diag_report(dl, D_BAD_MOVEMENT, origin, NULL, "PAD amounts must be >= 0");
      return -1;
    }
    u.shape[i] = sx_add(d->A, s->shape[i], sx_add(d->A, lo[i], hi[i]));
  }
  return push(d, u, base_of(d, x));
}

int tiny_shrink(tiny_dag *d, int x, const sx *const *lo, const sx *const *hi, const int64_t *step,
                diag_list *dl, const char *origin) {
  tiny_uop *s = &d->u[x];
  tiny_uop u = unary_like(d, TINY_SHRINK, x);
  u.origin = origin;
  u.rank = s->rank;
  u.shape = ARENA_ARRAY(d->A, const sx *, s->rank > 0 ? s->rank : 1);
  u.lo = copy_shape(d->A, s->rank, lo);
  u.hi = copy_shape(d->A, s->rank, hi);
  u.step = ARENA_ARRAY(d->A, int64_t, s->rank > 0 ? s->rank : 1);
  for (int i = 0; i < s->rank; i++) {
    u.step[i] = step ? step[i] : 1;
    const sx *len = sx_sub(d->A, hi[i], lo[i]);
    int64_t l, lv, sz;
    if (u.step[i] < 1 || (sx_is_int(len, &l) && l <= 0) || (sx_is_int(lo[i], &lv) && lv < 0) ||
        (sx_is_int(hi[i], &l) && sx_is_int(s->shape[i], &sz) && l > sz)) {
      diag_report(dl, D_BAD_MOVEMENT, origin, NULL, "SHRINK axis %d: [%s, %s) step %lld is not inside [0, %s)", i,
                  sx_str(d->A, lo[i]), sx_str(d->A, hi[i]), (long long)u.step[i], sx_str(d->A, s->shape[i]));
      return -1;
    }
    u.shape[i] = sx_ceildiv_int(d->A, len, u.step[i]);
  }
  return push(d, u, base_of(d, x));
}

int tiny_flip(tiny_dag *d, int x, const bool *flip, diag_list *dl, const char *origin) {
  (void)dl;
  tiny_uop *s = &d->u[x];
  tiny_uop u = unary_like(d, TINY_FLIP, x);
  u.origin = origin;
  u.rank = s->rank;
  u.shape = copy_shape(d->A, s->rank, s->shape);
  u.labels = s->labels;
  u.flip = ARENA_ARRAY(d->A, bool, s->rank > 0 ? s->rank : 1);
  for (int i = 0; i < s->rank; i++) u.flip[i] = flip[i];
  return push(d, u, base_of(d, x));
}

int tiny_view(tiny_dag *d, int x, int rank, const sx *const *shape, const sx *const *vmap) {
  tiny_uop u = unary_like(d, TINY_VIEW, x);
  u.rank = rank;
  u.shape = copy_shape(d->A, rank, shape);
  u.vmap = copy_shape(d->A, d->u[x].rank, vmap);
  return push(d, u, base_of(d, x));
}

int tiny_gather(tiny_dag *d, int x, int index, int axis, diag_list *dl, const char *origin) {
  const tiny_uop *s = &d->u[x], *ix = &d->u[index];
  bool ok = ix->dt == DT_INT32 && ix->rank == s->rank && axis >= 0 && axis < s->rank;
  for (int i = 0; ok && i < s->rank; i++) ok = i == axis || sx_equal(s->shape[i], ix->shape[i]);
  if (!ok) {
    diag_report(dl, D_BAD_MOVEMENT, origin, NULL, "GATHER of %s along axis %d by an index %s %s", sx_shape_str(d->A, s->rank, s->shape),
                axis, dtype_name(ix->dt), sx_shape_str(d->A, ix->rank, ix->shape));
    return -1;
  }
  tiny_uop u = unary_like(d, TINY_GATHER, x);
  u.nsrc = 2;
  u.src[1] = index;
  u.origin = origin;
  u.axis = axis;
  u.rank = ix->rank;
  u.shape = copy_shape(d->A, ix->rank, ix->shape);
  return push(d, u, base_of(d, x));
}

int tiny_cast(tiny_dag *d, int x, dtype to) {
  if (d->u[x].dt == to) return x;
  if (d->u[x].op == TINY_CONST) {
    int c = tiny_const(d, d->u[x].cval, to);
    d->u[c].crsqrt = d->u[x].crsqrt;
    d->u[c].crecip = d->u[x].crecip;
    return c;
  }
  tiny_uop u = unary_like(d, TINY_CAST, x);
  u.dt = to;
  u.rank = d->u[x].rank;
  u.shape = d->u[x].shape;
  u.labels = d->u[x].labels;
  return push(d, u, base_of(d, x));
}

/* Broadcast x (rank r) to `shape` (rank n >= r): RESHAPE to prepend size-1
 * axes, then EXPAND.  Scalars (rank 0) broadcast implicitly. */
static int broadcast_to(tiny_dag *d, int x, int n, const sx *const *shape, diag_list *dl, const char *origin) {
  tiny_uop *s = &d->u[x];
  if (s->rank == 0) return x;
  bool same = s->rank == n;
  for (int i = 0; same && i < n; i++) same = sx_equal(s->shape[i], shape[i]);
  if (same) return x;
  if (s->rank < n) {
    const sx **rs = ARENA_ARRAY(d->A, const sx *, n);
    for (int i = 0; i < n; i++) rs[i] = i < n - s->rank ? sx_int(d->A, 1) : s->shape[i - (n - s->rank)];
    x = tiny_reshape(d, x, n, rs, dl, origin);
    if (x < 0) return -1;
  }
  return tiny_expand(d, x, n, shape, dl, origin);
}

int tiny_alu(tiny_dag *d, tiny_op op, int a, int b, int c, diag_list *dl, const char *origin) {
  int src[3] = {a, b, c};
  int ar = tiny_table[op].arity;
  DLC_ASSERT(tiny_table[op].kind == TK_ALU && op != TINY_CAST);
  /* result shape: right-aligned broadcast of all operands */
  int n = 0;
  const sx **shape = NULL;
  for (int i = 0; i < ar; i++) {
    tiny_uop *s = &d->u[src[i]];
    if (s->rank == 0) continue;
    if (!shape) {
      n = s->rank;
      shape = copy_shape(d->A, n, s->shape);
      continue;
    }
    int m = n > s->rank ? n : s->rank;
    const sx **o = ARENA_ARRAY(d->A, const sx *, m);
    for (int k = 0; k < m; k++) {
      int ia = k - (m - n), ib = k - (m - s->rank);
      const sx *x = ia >= 0 ? shape[ia] : NULL, *y = ib >= 0 ? s->shape[ib] : NULL;
      if (!x) o[k] = y;
      else if (!y) o[k] = x;
      else if (sx_equal(x, y) || sx_is_one(y)) o[k] = x;
      else if (sx_is_one(x)) o[k] = y;
      else {
        diag_report(dl, D_BROADCAST_MISMATCH, origin, NULL,
                    "%s: right-aligned broadcast of %s and %s: axis %d has sizes %s and %s, neither 1",
                    tiny_table[op].name, sx_shape_str(d->A, n, shape), sx_shape_str(d->A, s->rank, s->shape), k,
                    sx_str(d->A, x), sx_str(d->A, y));
        return -1;
      }
    }
    n = m;
    shape = o;
  }
  /* dtype: promote the non-constant value operands; constants follow */
  int first = op == TINY_WHERE ? 1 : 0;
  bool have = false;
  dtype dt = DT_FP32;
  for (int i = first; i < ar; i++)
    if (d->u[src[i]].op != TINY_CONST) {
      dt = have ? dtype_promote(dt, d->u[src[i]].dt) : d->u[src[i]].dt;
      have = true;
    }
  if (!have) dt = d->u[src[first]].dt;
  if (op == TINY_WHERE && d->u[a].dt != DT_BOOL) {
    int z = tiny_const(d, 0, d->u[a].dt);
    src[0] = tiny_alu(d, TINY_CMPNE, a, z, -1, dl, origin);
    if (src[0] < 0) return -1;
  }
  for (int i = first; i < ar; i++) src[i] = tiny_cast(d, src[i], dt);
  for (int i = 0; i < ar; i++) {
    src[i] = broadcast_to(d, src[i], n, shape, dl, origin);
    if (src[i] < 0) return -1;
  }
  tiny_uop u = {.op = op, .nsrc = ar, .rank = n, .shape = shape ? shape : copy_shape(d->A, 0, NULL)};
  for (int i = 0; i < ar; i++) u.src[i] = src[i];
  u.dt = tiny_table[op].dr == DR_BOOL ? DT_BOOL : dt;
  u.origin = origin;
  /* axis labels (m, n, k, ...) carry through pointwise ops, so that a later
   * REDUCE names the axes it removes (spec §3.5.3: REDUCE over "n") */
  for (int i = 0; i < ar && !u.labels; i++)
    if (d->u[src[i]].labels && d->u[src[i]].rank == n) u.labels = d->u[src[i]].labels;
  /* name after the first non-constant operand */
  const char *base = NULL;
  for (int i = 0; i < ar && !base; i++)
    if (d->u[src[i]].op != TINY_CONST) base = base_of(d, src[i]);
  return push(d, u, base);
}

int tiny_reduce(tiny_dag *d, int x, reduce_op op, int naxes, const int *axes, dtype acc, diag_list *dl,
                const char *origin) {
  tiny_uop *s = &d->u[x];
  bool drop[TINY_MAX_RANK] = {0};
  for (int i = 0; i < naxes; i++) {
    if (axes[i] < 0 || axes[i] >= s->rank || drop[axes[i]]) {
      diag_report(dl, D_BAD_ATTR, origin, NULL, "REDUCE axis %d is invalid for rank %d", axes[i], s->rank);
      return -1;
    }
    drop[axes[i]] = true;
  }
  if (op == RED_SUM) x = tiny_cast(d, x, acc);
  s = &d->u[x];
  tiny_uop u = {.op = TINY_REDUCE, .nsrc = 1, .src = {x}, .dt = s->dt, .rop = op, .origin = origin};
  u.naxes = naxes;
  u.axes = ARENA_ARRAY(d->A, int, naxes > 0 ? naxes : 1);
  u.shape = ARENA_ARRAY(d->A, const sx *, s->rank > 0 ? s->rank : 1);
  for (int i = 0; i < naxes; i++) u.axes[i] = axes[i];
  /* axes ascending, for a canonical dump */
  for (int i = 1; i < naxes; i++)
    for (int j = i; j > 0 && u.axes[j - 1] > u.axes[j]; j--) {
      int t = u.axes[j];
      u.axes[j] = u.axes[j - 1];
      u.axes[j - 1] = t;
    }
  if (s->labels) u.labels = ARENA_ARRAY(d->A, const char *, s->rank);
  for (int i = 0; i < s->rank; i++)
    if (!drop[i]) {
      if (s->labels) u.labels[u.rank] = s->labels[i];
      u.shape[u.rank++] = s->shape[i];
    }
  return push(d, u, base_of(d, x));
}

static int label_index(const char **labels, int n, const char *l) {
  for (int i = 0; i < n; i++)
    if (strcmp(labels[i], l) == 0) return i;
  return -1;
}

int tiny_contract_op(tiny_dag *d, int lhs, int rhs, tiny_contract *c, dtype acc, diag_list *dl,
                     const char *origin) {
  tiny_uop *L = &d->u[lhs], *R = &d->u[rhs];
  if (c->nl != L->rank || c->nr != R->rank) {
    diag_report(dl, D_CONTRACT_MISMATCH, origin, NULL, "CONTRACT index lists do not match the operand ranks");
    return -1;
  }
  tiny_uop u = {.op = TINY_CONTRACT, .nsrc = 2, .src = {lhs, rhs}, .dt = acc, .con = c, .origin = origin};
  u.rank = c->no;
  u.shape = ARENA_ARRAY(d->A, const sx *, c->no > 0 ? c->no : 1);
  u.labels = c->out_idx;
  /* every label has one size; out and reduce labels come from an operand */
  for (int i = 0; i < c->nl; i++) {
    int j = label_index(c->rhs_idx, c->nr, c->lhs_idx[i]);
    if (j >= 0 && !sx_equal(L->shape[i], R->shape[j])) {
      diag_report(dl, D_CONTRACT_MISMATCH, origin, NULL, "index '%s' has size %s in the lhs and %s in the rhs",
                  c->lhs_idx[i], sx_str(d->A, L->shape[i]), sx_str(d->A, R->shape[j]));
      return -1;
    }
  }
  for (int i = 0; i < c->no; i++) {
    int j = label_index(c->lhs_idx, c->nl, c->out_idx[i]);
    if (j >= 0) u.shape[i] = L->shape[j];
    else if ((j = label_index(c->rhs_idx, c->nr, c->out_idx[i])) >= 0) u.shape[i] = R->shape[j];
    else {
      diag_report(dl, D_CONTRACT_MISMATCH, origin, NULL, "output index '%s' is in neither operand", c->out_idx[i]);
      return -1;
    }
    if (label_index(c->reduce_idx, c->nk, c->out_idx[i]) >= 0) {
      diag_report(dl, D_CONTRACT_MISMATCH, origin, NULL, "index '%s' is both kept and reduced", c->out_idx[i]);
      return -1;
    }
  }
  for (int i = 0; i < c->nk; i++)
    if (label_index(c->lhs_idx, c->nl, c->reduce_idx[i]) < 0 || label_index(c->rhs_idx, c->nr, c->reduce_idx[i]) < 0) {
      diag_report(dl, D_CONTRACT_MISMATCH, origin, NULL, "reduced index '%s' is missing from an operand",
                  c->reduce_idx[i]);
      return -1;
    }
  return push(d, u, NULL);
}

int tiny_store(tiny_dag *d, int x, const char *tensor) {
  tiny_uop u = unary_like(d, TINY_STORE, x);
  u.tensor = arena_strdup(d->A, tensor);
  u.rank = d->u[x].rank;
  u.shape = d->u[x].shape;
  u.out = fresh_name(d, arena_printf(d->A, "store.%s", tensor));
  return push(d, u, NULL);
}

/* ---- lowering ------------------------------------------------------------------- */

typedef struct lowerer {
  tiny_dag *d;
  const fe_graph *g;
  diag_list *dl;
  int *val; /* tensor index -> uop */
} lowerer;

static const char **labels_n(arena *A, int n) { return ARENA_ARRAY(A, const char *, n > 0 ? n : 1); }

static const char *batch_label(arena *A, int i, int nb) {
  static const char *const two[] = {"b", "h"};
  if (nb <= 2) return two[i];
  return arena_printf(A, "b%d", i);
}

/* Broadcast batch axes of a GEMM/attention operand: RESHAPE/EXPAND x so that
 * its leading axes equal `batch`. */
static int fit_batch(lowerer *L, int x, int nb, const sx *const *batch, int keep, const char *origin) {
  tiny_uop *s = &L->d->u[x];
  int n = nb + keep;
  const sx **shape = ARENA_ARRAY(L->d->A, const sx *, n);
  for (int i = 0; i < nb; i++) shape[i] = batch[i];
  for (int i = 0; i < keep; i++) shape[nb + i] = s->shape[s->rank - keep + i];
  return broadcast_to(L->d, x, n, shape, L->dl, origin);
}

static int lower_gemm(lowerer *L, const fe_node *nd) {
  tiny_dag *d = L->d;
  arena *A = d->A;
  int a = L->val[nd->in[0]], b = L->val[nd->in[1]];
  int nb = nd->rrank - 2;
  a = fit_batch(L, a, nb, nd->rshape, 2, nd->name);
  if (a < 0) return -1;
  b = fit_batch(L, b, nb, nd->rshape, 2, nd->name);
  if (b < 0) return -1;
  tiny_contract *c = ARENA_NEW(A, tiny_contract);
  c->pattern = "matmul";
  c->nl = c->nr = c->no = nb + 2;
  c->nk = 1;
  c->lhs_idx = labels_n(A, c->nl);
  c->rhs_idx = labels_n(A, c->nr);
  c->out_idx = labels_n(A, c->no);
  c->reduce_idx = labels_n(A, 1);
  for (int i = 0; i < nb; i++) c->lhs_idx[i] = c->rhs_idx[i] = c->out_idx[i] = batch_label(A, i, nb);
  c->lhs_idx[nb] = "m", c->lhs_idx[nb + 1] = "k";
  c->rhs_idx[nb] = "k", c->rhs_idx[nb + 1] = "n";
  c->out_idx[nb] = "m", c->out_idx[nb + 1] = "n";
  c->reduce_idx[0] = "k";
  dtype acc = nd->attrs.has_acc ? nd->attrs.acc_dtype : d->u[a].dt;
  return tiny_contract_op(d, a, b, c, acc, L->dl, nd->name);
}

static int lower_conv(lowerer *L, const fe_node *nd) {
  tiny_dag *d = L->d;
  arena *A = d->A;
  const fe_attrs *at = &nd->attrs;
  const fe_tensor *xt = &L->g->tensors[nd->in[0]], *wt = &L->g->tensors[nd->in[1]];
  int x = L->val[nd->in[0]], w = L->val[nd->in[1]];
  bool nchw = xt->layout && strcmp(xt->layout, "NCHW") == 0;
  bool kcrs = wt->layout && strcmp(wt->layout, "KCRS") == 0;
  int ih = nchw ? 2 : 1, iw = nchw ? 3 : 2;
  int wr = kcrs ? 2 : 1, ws = kcrs ? 3 : 2, wc = kcrs ? 1 : 3;
  /* PAD the spatial axes */
  const sx *lo[4], *hi[4];
  for (int i = 0; i < 4; i++) lo[i] = hi[i] = sx_int(A, 0);
  lo[ih] = hi[ih] = sx_int(A, at->pad[0]);
  lo[iw] = hi[iw] = sx_int(A, at->pad[1]);
  int xp = tiny_pad(d, x, lo, hi, L->dl, nd->name);
  if (xp < 0) return -1;
  d->u[xp].out = fresh_name(d, arena_printf(A, "%sp", d->u[x].out));
  /* the affine (im2col) view: X's axes with H->h and W->w, then kh, kw */
  const sx *P = nd->rshape[nchw ? 2 : 1], *Q = nd->rshape[nchw ? 3 : 2];
  const sx *vshape[6];
  const char **vlab = labels_n(A, 6);
  static const char *const xl_nhwc[] = {"n", "h", "w", "ci"}, *const xl_nchw[] = {"n", "ci", "h", "w"};
  const sx *const *xs = d->u[x].shape;
  for (int i = 0; i < 4; i++) {
    vshape[i] = i == ih ? P : i == iw ? Q : xs[i];
    vlab[i] = (nchw ? xl_nchw : xl_nhwc)[i];
  }
  vshape[4] = d->u[w].shape[wr];
  vshape[5] = d->u[w].shape[ws];
  vlab[4] = "kh";
  vlab[5] = "kw";
  const sx *vmap[4];
  for (int i = 0; i < 4; i++) vmap[i] = sx_var(A, arena_printf(A, "v%d", i));
  vmap[ih] = sx_add(A, sx_scale(A, sx_var(A, arena_printf(A, "v%d", ih)), at->stride[0]),
                    sx_scale(A, sx_var(A, "v4"), at->dilation[0]));
  vmap[iw] = sx_add(A, sx_scale(A, sx_var(A, arena_printf(A, "v%d", iw)), at->stride[1]),
                    sx_scale(A, sx_var(A, "v5"), at->dilation[1]));
  int xv = tiny_view(d, xp, 6, vshape, vmap);
  d->u[xv].origin = nd->name;
  d->u[xv].labels = vlab;
  d->u[xv].out = fresh_name(d, arena_printf(A, "%sv", d->u[x].out));
  tiny_contract *c = ARENA_NEW(A, tiny_contract);
  c->pattern = "conv2d";
  c->strides[0] = at->stride[0];
  c->strides[1] = at->stride[1];
  c->nl = 6, c->nr = 4, c->no = 4, c->nk = 3;
  c->lhs_idx = vlab;
  c->rhs_idx = labels_n(A, 4);
  c->rhs_idx[0] = "co", c->rhs_idx[wr] = "kh", c->rhs_idx[ws] = "kw", c->rhs_idx[wc] = "ci";
  c->out_idx = labels_n(A, 4);
  if (nchw) c->out_idx[0] = "n", c->out_idx[1] = "co", c->out_idx[2] = "h", c->out_idx[3] = "w";
  else c->out_idx[0] = "n", c->out_idx[1] = "h", c->out_idx[2] = "w", c->out_idx[3] = "co";
  c->reduce_idx = labels_n(A, 3);
  c->reduce_idx[0] = "kh", c->reduce_idx[1] = "kw", c->reduce_idx[2] = "ci";
  dtype acc = at->has_acc ? at->acc_dtype : d->u[x].dt;
  return tiny_contract_op(d, xv, w, c, acc, L->dl, nd->name);
}

static const sx **shape_with_one(arena *A, const tiny_uop *u, int axis) {
  /* u's shape with a size-1 axis inserted at `axis` */
  const sx **s = ARENA_ARRAY(A, const sx *, u->rank + 1);
  for (int i = 0, k = 0; i <= u->rank; i++) s[i] = i == axis ? sx_int(A, 1) : u->shape[k++];
  return s;
}

#define LOG2E 1.4426950408889634

/* The row softmax of spec §3.5.3 over `axis` of x (fp32): REDUCE MAX, SUB,
 * EXP2 (log2(e) folded into `prescale` by the caller), REDUCE SUM, FDIV. */
static int lower_softmax_core(lowerer *L, int x, int axis, const char *origin) {
  tiny_dag *d = L->d;
  int ax[1] = {axis};
  int mx = tiny_reduce(d, x, RED_MAX, 1, ax, d->u[x].dt, L->dl, origin);
  if (mx < 0) return -1;
  int mx1 = tiny_reshape(d, mx, d->u[x].rank, shape_with_one(d->A, &d->u[mx], axis), L->dl, origin);
  if (mx1 < 0) return -1;
  int sub = tiny_alu(d, TINY_SUB, x, mx1, -1, L->dl, origin);
  if (sub < 0) return -1;
  int e = tiny_alu(d, TINY_EXP2, sub, -1, -1, L->dl, origin);
  if (e < 0) return -1;
  int z = tiny_reduce(d, e, RED_SUM, 1, ax, d->u[e].dt, L->dl, origin);
  if (z < 0) return -1;
  int z1 = tiny_reshape(d, z, d->u[e].rank, shape_with_one(d->A, &d->u[z], axis), L->dl, origin);
  if (z1 < 0) return -1;
  return tiny_alu(d, TINY_FDIV, e, z1, -1, L->dl, origin);
}

static int lower_attention(lowerer *L, const fe_node *nd) {
  tiny_dag *d = L->d;
  arena *A = d->A;
  const fe_attrs *at = &nd->attrs;
  int q = L->val[nd->in[0]], k = L->val[nd->in[1]], v = L->val[nd->in[2]];
  int n = d->u[q].rank, nb = n - 2;
  dtype acc = at->has_acc ? at->acc_dtype : d->u[q].dt;
  /* S = Q K^T */
  tiny_contract *c1 = ARENA_NEW(A, tiny_contract);
  c1->pattern = "matmul";
  c1->nl = c1->nr = c1->no = n;
  c1->nk = 1;
  c1->lhs_idx = labels_n(A, n), c1->rhs_idx = labels_n(A, n), c1->out_idx = labels_n(A, n);
  c1->reduce_idx = labels_n(A, 1);
  for (int i = 0; i < nb; i++) c1->lhs_idx[i] = c1->rhs_idx[i] = c1->out_idx[i] = batch_label(A, i, nb);
  c1->lhs_idx[nb] = "m", c1->lhs_idx[nb + 1] = "d";
  c1->rhs_idx[nb] = "n", c1->rhs_idx[nb + 1] = "d";
  c1->out_idx[nb] = "m", c1->out_idx[nb + 1] = "n";
  c1->reduce_idx[0] = "d";
  int s = tiny_contract_op(d, q, k, c1, acc, L->dl, nd->name);
  if (s < 0) return -1;
  d->u[s].out = fresh_name(d, "S");
  /* scale with log2(e) folded in, so that the softmax uses EXP2 directly */
  int sc = tiny_const(d, LOG2E * (at->has_scale && !at->scale_rsqrt ? at->scale : 1.0), acc);
  if (at->scale_rsqrt) d->u[sc].crsqrt = at->scale_rsqrt;
  int s2 = tiny_alu(d, TINY_MUL, s, sc, -1, L->dl, nd->name);
  if (s2 < 0) return -1;
  if (at->causal) {
    /* masked where the key index n exceeds the query index m */
    const sx *qs[2] = {d->u[q].shape[nb], sx_int(A, 1)};
    const sx *ks[1] = {d->u[k].shape[nb]};
    int rm = tiny_range(d, 2, qs, 0), rn = tiny_range(d, 1, ks, 0);
    d->u[rm].out = fresh_name(d, "m_idx");
    d->u[rn].out = fresh_name(d, "n_idx");
    int mask = tiny_alu(d, TINY_CMPLT, rm, rn, -1, L->dl, nd->name);
    if (mask < 0) return -1;
    d->u[mask].out = fresh_name(d, "mask");
    int ninf = tiny_const(d, -INFINITY, acc);
    s2 = tiny_alu(d, TINY_WHERE, mask, ninf, s2, L->dl, nd->name);
    if (s2 < 0) return -1;
    d->u[s2].out = fresh_name(d, "S_masked");
  }
  int p = lower_softmax_core(L, s2, n - 1, nd->name);
  if (p < 0) return -1;
  d->u[p].out = fresh_name(d, "P_fp32");
  /* P feeds the second contraction in V's dtype when that keeps the
   * probabilities to 2^-12 (fp16); bf16's 8 mantissa bits would lose 2^-9 of
   * each, so with bf16 P stays in the accumulator type */
  int pc = tiny_cast(d, p, d->u[v].dt == DT_BF16 ? acc : d->u[v].dt);
  d->u[pc].out = fresh_name(d, "P");
  tiny_contract *c2 = ARENA_NEW(A, tiny_contract);
  c2->pattern = "matmul";
  c2->nl = c2->nr = c2->no = n;
  c2->nk = 1;
  c2->lhs_idx = labels_n(A, n), c2->rhs_idx = labels_n(A, n), c2->out_idx = labels_n(A, n);
  c2->reduce_idx = labels_n(A, 1);
  for (int i = 0; i < nb; i++) c2->lhs_idx[i] = c2->rhs_idx[i] = c2->out_idx[i] = batch_label(A, i, nb);
  c2->lhs_idx[nb] = "m", c2->lhs_idx[nb + 1] = "n";
  c2->rhs_idx[nb] = "n", c2->rhs_idx[nb + 1] = "d";
  c2->out_idx[nb] = "m", c2->out_idx[nb + 1] = "d";
  c2->reduce_idx[0] = "n";
  return tiny_contract_op(d, pc, v, c2, acc, L->dl, nd->name);
}

/* Decomposition strings of ewise.def: OP(args) | $i | number. */
typedef struct dparser {
  lowerer *L;
  const char *p;
  const int *args;
  dtype cdt;
  const char *origin;
  bool err;
} dparser;

static int dp_expr(dparser *dp) {
  const char *p = dp->p;
  if (*p == '$') {
    int i = p[1] - '0';
    dp->p += 2;
    return dp->args[i];
  }
  if (*p == '-' || isdigit((unsigned char)*p)) {
    char *end;
    double v = strtod(p, &end);
    dp->p = end;
    return tiny_const(dp->L->d, v, dp->cdt);
  }
  const char *b = p;
  while (isupper((unsigned char)*p) || isdigit((unsigned char)*p)) p++;
  char name[16];
  size_t n = (size_t)(p - b);
  if (n == 0 || n >= sizeof name || *p != '(') {
    dp->err = true;
    return -1;
  }
  memcpy(name, b, n);
  name[n] = 0;
  tiny_op op;
  if (!tiny_op_parse(name, &op) || tiny_table[op].kind != TK_ALU) {
    dp->err = true;
    return -1;
  }
  dp->p = p + 1;
  int a[3] = {-1, -1, -1};
  for (int i = 0; i < tiny_table[op].arity; i++) {
    if (i) {
      if (*dp->p != ',') {
        dp->err = true;
        return -1;
      }
      dp->p++;
    }
    a[i] = dp_expr(dp);
    if (a[i] < 0) return -1;
  }
  if (*dp->p != ')') {
    dp->err = true;
    return -1;
  }
  dp->p++;
  return tiny_alu(dp->L->d, op, a[0], a[1], a[2], dp->L->dl, dp->origin);
}

static int lower_elementwise(lowerer *L, const fe_node *nd) {
  tiny_dag *d = L->d;
  int args[3] = {-1, -1, -1};
  for (int i = 0; i < nd->nin; i++) args[i] = L->val[nd->in[i]];
  dtype cdt = d->u[args[nd->fn == EW_WHERE ? 1 : 0]].dt;
  for (int i = nd->fn == EW_WHERE ? 2 : 1; i < nd->nin; i++) cdt = dtype_promote(cdt, d->u[args[i]].dt);
  if (nd->attrs.has_scalar && nd->nin == 1) args[1] = tiny_const(d, nd->attrs.scalar, cdt);
  if (nd->fn == EW_CAST) return tiny_cast(d, args[0], nd->attrs.to);
  dparser dp = {L, ewise_decomposition(nd->fn), args, cdt, nd->name, false};
  int r = dp_expr(&dp);
  if (dp.err || *dp.p) dlc_internal_error(__FILE__, __LINE__, "bad decomposition for %s", ewise_name(nd->fn));
  return r;
}

/* Reduce(sum) with a wider accumulator over a single-use mul: compute the
 * product in the accumulator type (the exact product that CONTRACT uses). */
static int lower_reduce(lowerer *L, const fe_node *nd) {
  tiny_dag *d = L->d;
  const fe_attrs *at = &nd->attrs;
  int x = L->val[nd->in[0]];
  int axes[FE_MAX_RANK];
  for (int i = 0; i < at->naxes; i++) axes[i] = (int)at->axes[i];
  dtype acc = at->has_acc ? at->acc_dtype : d->u[x].dt;
  if (at->rop == RED_SUM && acc != d->u[x].dt && d->u[x].op == TINY_MUL) {
    int users = 0;
    for (int i = 0; i < L->g->nnodes; i++)
      for (int k = 0; k < L->g->nodes[i].nin; k++) users += L->g->nodes[i].in[k] == nd->in[0];
    const fe_tensor *t = &L->g->tensors[nd->in[0]];
    if (users == 1 && t->sig_output < 0) {
      tiny_uop *m = &d->u[x];
      int a = tiny_cast(d, m->src[0], acc), b = tiny_cast(d, m->src[1], acc);
      x = tiny_alu(d, TINY_MUL, a, b, -1, L->dl, nd->name);
      if (x < 0) return -1;
    }
  }
  int s = tiny_reduce(d, x, at->rop, at->naxes, axes, acc, L->dl, nd->name);
  if (s < 0 || !at->mean) return s;
  /* mean: the sum times 1/n for each reduced extent n, a number or a
   * product of a number and dims (E = H * HD): times 1/number, then 1/dim
   * for each dim */
  const tiny_uop *src = &d->u[x];
  for (int i = 0; i < at->naxes && s >= 0; i++) {
    const sx *n = src->shape[axes[i]];
    int64_t v;
    if (sx_is_int(n, &v) && v > 0) {
      s = tiny_alu(d, TINY_MUL, s, tiny_const(d, 1.0 / (double)v, d->u[s].dt), -1, L->dl, nd->name);
      continue;
    }
    const sx_atom *a = n->nterms == 1 ? n->terms[0].atom : NULL;
    bool dims = n->c0 == 0 && a && n->terms[0].coef > 0 && (a->kind == SXA_PARAM || a->kind == SXA_PROD);
    for (int f = 0; dims && a->kind == SXA_PROD && f < a->nf; f++) dims = a->f[f]->kind == SXA_PARAM;
    if (!dims) {
      diag_report(L->dl, D_BAD_ATTR, nd->name, "Reduce with \"op\": \"sum\" and scale by an Elementwise mul with a scalar.",
                  "mean over axis %d needs its extent as a number times dims, not %s", axes[i], sx_str(d->A, n));
      return -1;
    }
    if (n->terms[0].coef != 1)
      s = tiny_alu(d, TINY_MUL, s, tiny_const(d, 1.0 / (double)n->terms[0].coef, d->u[s].dt), -1, L->dl, nd->name);
    int nf = a->kind == SXA_PROD ? a->nf : 1;
    for (int f = 0; f < nf && s >= 0; f++) {
      int c = tiny_const(d, 1.0, d->u[s].dt);
      d->u[c].crecip = (a->kind == SXA_PROD ? a->f[f] : a)->name;
      s = tiny_alu(d, TINY_MUL, s, c, -1, L->dl, nd->name);
    }
  }
  return s;
}

/* Tile (torch's Tensor.repeat) as views, as tinygrad writes repeat: each
 * repeated axis x gets a size-1 axis before it (RESHAPE), expanded to the
 * repeat count r (EXPAND), and the pair merged into r*x (RESHAPE), which
 * the IndexBook reads at i mod x: Linear for a number x, IndexExpr (a
 * region boundary, W2103) for a symbol. */
static int lower_tile(lowerer *L, const fe_node *nd) {
  tiny_dag *d = L->d;
  const fe_attrs *at = &nd->attrs;
  int x = L->val[nd->in[0]];
  int r = d->u[x].rank, n = at->nrep, m = n;
  for (int i = 0; i < n; i++) m += at->repeats[i] > 1;
  if (m > TINY_MAX_RANK) {
    diag_report(L->dl, D_BAD_MOVEMENT, nd->at, "Tile at most 4 axes of a rank-8 result at once: tile the others in a second Tile.",
                "Tile repeats %d of %d axes: its view needs %d axes, more than %d", m - n, n, m, TINY_MAX_RANK);
    return -1;
  }
  const sx *s1[TINY_MAX_RANK], *s2[TINY_MAX_RANK], *s3[FE_MAX_RANK];
  m = 0;
  for (int i = 0; i < n; i++) {
    int k = i - (n - r);
    const sx *xs = k >= 0 ? d->u[x].shape[k] : sx_int(d->A, 1);
    if (at->repeats[i] > 1) s1[m] = sx_int(d->A, 1), s2[m] = sx_int(d->A, at->repeats[i]), m++;
    s1[m] = s2[m] = xs, m++;
    s3[i] = sx_mul(d->A, xs, sx_int(d->A, at->repeats[i]));
  }
  int y = tiny_reshape(d, x, m, s1, L->dl, nd->name);
  if (y >= 0) y = tiny_expand(d, y, m, s2, L->dl, nd->name);
  if (y >= 0) y = tiny_reshape(d, y, n, s3, L->dl, nd->name);
  return y;
}

static int lower_node(lowerer *L, const fe_node *nd) {
  tiny_dag *d = L->d;
  arena *A = d->A;
  const fe_attrs *at = &nd->attrs;
  int x = L->val[nd->in[0]];
  switch (nd->op) {
  case FE_GEMM: return lower_gemm(L, nd);
  case FE_CONV2D: return lower_conv(L, nd);
  case FE_ATTENTION: return lower_attention(L, nd);
  case FE_ELEMENTWISE: return lower_elementwise(L, nd);
  case FE_REDUCE: return lower_reduce(L, nd);
  case FE_SOFTMAX: {
    dtype in = d->u[x].dt;
    int xf = tiny_cast(d, x, dtype_promote(in, DT_FP32));
    int sc = tiny_const(d, LOG2E, d->u[xf].dt);
    int xs = tiny_alu(d, TINY_MUL, xf, sc, -1, L->dl, nd->name);
    if (xs < 0) return -1;
    int p = lower_softmax_core(L, xs, (int)at->axis, nd->name);
    return p < 0 ? -1 : tiny_cast(d, p, in);
  }
  case FE_TRANSPOSE: {
    int perm[FE_MAX_RANK];
    for (int i = 0; i < at->nperm; i++) perm[i] = (int)at->perm[i];
    return tiny_permute(d, x, perm, L->dl, nd->name);
  }
  case FE_RESHAPE: return tiny_reshape(d, x, at->nshape, at->shape, L->dl, nd->name);
  case FE_CAST: return tiny_cast(d, x, at->to);
  case FE_PAD: {
    int r = tiny_pad(d, x, at->pad_lo, at->pad_hi, L->dl, nd->name);
    if (r >= 0) d->u[r].cval = at->pad_value;
    return r;
  }
  case FE_SLICE: return tiny_shrink(d, x, at->starts, at->ends, at->steps, L->dl, nd->name);
  case FE_FLIP: {
    bool f[FE_MAX_RANK] = {0};
    for (int i = 0; i < at->naxes; i++) f[at->axes[i]] = true;
    return tiny_flip(d, x, f, L->dl, nd->name);
  }
  case FE_EXPAND: return broadcast_to(d, x, at->nshape, at->shape, L->dl, nd->name);
  case FE_GATHER: return tiny_gather(d, x, L->val[nd->in[1]], (int)at->axis, L->dl, nd->name);
  case FE_TILE: return lower_tile(L, nd);
  case FE__COUNT: break;
  }
  (void)A;
  return -1;
}

tiny_dag *tiny_lower(arena *A, const fe_graph *g, diag_list *dl) {
  tiny_dag *d = tiny_new(A, g);
  lowerer L = {d, g, dl, ARENA_ARRAY(A, int, g->ntensors > 0 ? g->ntensors : 1)};
  for (int i = 0; i < g->ntensors; i++) L.val[i] = -1;
  for (int i = 0; i < g->nin; i++) {
    const fe_tensor *t = &g->tensors[g->inputs[i]];
    L.val[g->inputs[i]] = tiny_buffer(d, t->name, t->dt, t->rank, t->shape);
  }
  for (int i = 0; i < g->nnodes; i++) {
    const fe_node *nd = &g->nodes[i];
    int r = lower_node(&L, nd);
    if (r < 0) return NULL;
    /* the node's result carries the tensor's name unless it is an existing
     * named value (e.g. a cast to the same dtype) */
    const char *tn = g->tensors[nd->out[0]].name;
    bool named = false;
    for (int t = 0; t < g->ntensors; t++)
      if (L.val[t] == r) named = true;
    if (!named && tiny_find(d, tn) < 0) d->u[r].out = arena_strdup(A, tn);
    if (!d->u[r].origin) d->u[r].origin = nd->name;
    if (g->tensors[nd->out[0]].conversion_of && d->u[r].op == TINY_PERMUTE)
      d->u[r].materialize = g->tensors[nd->out[0]].conversion_of;
    L.val[nd->out[0]] = r;
  }
  for (int i = 0; i < g->nout; i++) {
    const fe_tensor *t = &g->tensors[g->outputs[i]];
    int x = tiny_cast(d, L.val[g->outputs[i]], t->dt);
    tiny_store(d, x, t->name);
  }
  tiny_fold_contractions(d);
  if (!tiny_verify(d, dl)) return NULL;
  return d;
}

/* ---- CONTRACT folding ---------------------------------------------------------------- */

/* Walk an operand chain of the product down to its base: optional CAST, then
 * EXPAND, then RESHAPE that only inserts size-1 axes.  Fills `pax[j]`, the
 * product axis of base axis j.  Returns the base node or -1. */
static int chain_base(const tiny_dag *d, int x, int rank, int *pax, int *base_rank, dtype *cast_from) {
  const tiny_uop *u = &d->u[x];
  *cast_from = DT__COUNT;
  if (u->op == TINY_CAST) {
    *cast_from = d->u[u->src[0]].dt;
    x = u->src[0];
    u = &d->u[x];
  }
  bool bcast[TINY_MAX_RANK] = {0};
  if (u->op == TINY_EXPAND) {
    const tiny_uop *s = &d->u[u->src[0]];
    for (int i = 0; i < rank; i++) bcast[i] = sx_is_one(s->shape[i]) && !sx_is_one(u->shape[i]);
    x = u->src[0];
    u = &d->u[x];
  }
  if (u->rank != rank) return -1;
  if (u->op == TINY_RESHAPE) {
    /* only size-1 insertions: the source axes are the non-1 axes in order */
    const tiny_uop *s = &d->u[u->src[0]];
    int k = 0;
    for (int i = 0; i < rank; i++) {
      if (k < s->rank && sx_equal(u->shape[i], s->shape[k]) && !(sx_is_one(u->shape[i]) && bcast[i])) {
        if (bcast[i]) return -1;
        pax[k++] = i;
      } else if (!sx_is_one(u->shape[i])) {
        return -1;
      }
    }
    if (k != s->rank) return -1;
    *base_rank = s->rank;
    return u->src[0];
  }
  int k = 0;
  for (int i = 0; i < rank; i++)
    if (!bcast[i]) pax[k++] = i;
  if (k != rank) return -1; /* broadcast axes without an insertion reshape */
  *base_rank = rank;
  return x;
}

static int count_users(const tiny_dag *d, int x) {
  int n = 0;
  for (int i = 0; i < d->n; i++)
    for (int k = 0; k < d->u[i].nsrc; k++) n += d->u[i].src[k] == x;
  return n;
}

static void compact(tiny_dag *d) {
  bool *live = calloc((size_t)d->n + 1, sizeof(bool));
  int *map = calloc((size_t)d->n + 1, sizeof(int));
  if (!live || !map) dlc_die_oom();
  for (int i = d->n - 1; i >= 0; i--) {
    if (d->u[i].op == TINY_STORE) live[i] = true;
    if (live[i])
      for (int k = 0; k < d->u[i].nsrc; k++) live[d->u[i].src[k]] = true;
  }
  /* signature inputs stay even when unused, so buffers keep their order */
  for (int i = 0; i < d->n; i++)
    if (d->u[i].op == TINY_BUFFER) live[i] = true;
  int m = 0;
  for (int i = 0; i < d->n; i++) {
    if (!live[i]) continue;
    map[i] = m;
    d->u[m] = d->u[i];
    for (int k = 0; k < d->u[m].nsrc; k++) d->u[m].src[k] = map[d->u[m].src[k]];
    m++;
  }
  d->n = m;
  free(live);
  free(map);
}

int tiny_fold_contractions(tiny_dag *d) {
  int formed = 0;
  arena *A = d->A;
  for (int r = 0; r < d->n; r++) {
    tiny_uop *red = &d->u[r];
    if (red->op != TINY_REDUCE || red->rop != RED_SUM) continue;
    const tiny_uop *mul = &d->u[red->src[0]];
    if (mul->op != TINY_MUL || count_users(d, red->src[0]) != 1) continue;
    int rank = mul->rank;
    int pa[TINY_MAX_RANK], pb[TINY_MAX_RANK], ra, rb;
    dtype ca, cb;
    int a = chain_base(d, mul->src[0], rank, pa, &ra, &ca);
    int b = chain_base(d, mul->src[1], rank, pb, &rb, &cb);
    if (a < 0 || b < 0) continue;
    if ((ca != DT__COUNT && ca != d->u[a].dt) || (cb != DT__COUNT && cb != d->u[b].dt)) continue;
    bool in_a[TINY_MAX_RANK] = {0}, in_b[TINY_MAX_RANK] = {0}, reduced[TINY_MAX_RANK] = {0};
    for (int j = 0; j < ra; j++) in_a[pa[j]] = true;
    for (int j = 0; j < rb; j++) in_b[pb[j]] = true;
    for (int j = 0; j < red->naxes; j++) reduced[red->axes[j]] = true;
    bool ok = true;
    for (int i = 0; i < rank; i++)
      if (!in_a[i] && !in_b[i]) ok = false;
      else if (reduced[i] && !(in_a[i] && in_b[i])) ok = false;
    if (!ok) continue;
    /* label the product axes: batch (both), m (lhs only), n (rhs only), k (reduced) */
    const char *lab[TINY_MAX_RANK];
    int nbat = 0, nm = 0, nn = 0, nk = 0;
    for (int i = 0; i < rank; i++) {
      if (reduced[i]) nk++;
      else if (in_a[i] && in_b[i]) nbat++;
      else if (in_a[i]) nm++;
      else nn++;
    }
    int ib = 0, im = 0, in_ = 0, ik = 0;
    for (int i = 0; i < rank; i++) {
      if (reduced[i]) lab[i] = nk == 1 ? "k" : arena_printf(A, "k%d", ik++);
      else if (in_a[i] && in_b[i]) lab[i] = batch_label(A, ib++, nbat);
      else if (in_a[i]) lab[i] = nm == 1 ? "m" : arena_printf(A, "m%d", im++);
      else lab[i] = nn == 1 ? "n" : arena_printf(A, "n%d", in_++);
    }
    tiny_contract *c = ARENA_NEW(A, tiny_contract);
    c->pattern = "matmul";
    c->nl = ra, c->nr = rb, c->no = red->rank, c->nk = nk;
    c->lhs_idx = labels_n(A, ra);
    c->rhs_idx = labels_n(A, rb);
    c->out_idx = labels_n(A, red->rank);
    c->reduce_idx = labels_n(A, nk);
    for (int j = 0; j < ra; j++) c->lhs_idx[j] = lab[pa[j]];
    for (int j = 0; j < rb; j++) c->rhs_idx[j] = lab[pb[j]];
    for (int i = 0, o = 0, k = 0; i < rank; i++) {
      if (reduced[i]) c->reduce_idx[k++] = lab[i];
      else c->out_idx[o++] = lab[i];
    }
    tiny_uop u = *red;
    u.op = TINY_CONTRACT;
    u.nsrc = 2;
    u.src[0] = a;
    u.src[1] = b;
    u.con = c;
    u.rop = RED_SUM;
    u.naxes = 0;
    u.axes = NULL;
    u.labels = c->out_idx;
    d->u[r] = u;
    formed++;
  }
  if (formed) compact(d);
  return formed;
}

/* ---- verification -------------------------------------------------------------------- */

bool tiny_verify(const tiny_dag *d, diag_list *dl) {
  bool ok = true;
#define FAIL(...)                                                               \
  do {                                                                          \
    diag_report(dl, D_INTERNAL, arena_printf(d->A, "tiny[%d] (%s)", i, u->out), \
                NULL, __VA_ARGS__);                                             \
    ok = false;                                                                 \
  } while (0)
  for (int i = 0; i < d->n; i++) {
    const tiny_uop *u = &d->u[i];
    if (u->nsrc != tiny_table[u->op].arity) FAIL("%s has %d sources, expected %d", tiny_table[u->op].name, u->nsrc,
                                                 tiny_table[u->op].arity);
    for (int k = 0; k < u->nsrc; k++)
      if (u->src[k] < 0 || u->src[k] >= i) FAIL("source %d is not an earlier node", k);
    if (!ok) continue;
    for (int j = 0; j < i; j++)
      if (strcmp(d->u[j].out, u->out) == 0) FAIL("name '%s' is not unique", u->out);
    const tiny_uop *s0 = u->nsrc ? &d->u[u->src[0]] : NULL;
    switch (tiny_table[u->op].kind) {
    case TK_ALU:
      for (int k = 0; k < u->nsrc; k++) {
        const tiny_uop *s = &d->u[u->src[k]];
        if (s->rank == 0) continue;
        bool same = s->rank == u->rank;
        for (int a = 0; same && a < u->rank; a++) same = sx_equal(s->shape[a], u->shape[a]);
        if (!same) FAIL("operand %d of %s has shape %s, not %s (missing EXPAND)", k, tiny_table[u->op].name,
                        sx_shape_str(d->A, s->rank, s->shape), sx_shape_str(d->A, u->rank, u->shape));
      }
      if (tiny_table[u->op].dr == DR_BOOL && u->dt != DT_BOOL) FAIL("comparison result is not bool");
      if (tiny_table[u->op].dr == DR_SRC0 && u->dt != s0->dt) FAIL("dtype differs from its operand");
      if (u->op == TINY_WHERE && (s0->dt != DT_BOOL || d->u[u->src[1]].dt != u->dt || d->u[u->src[2]].dt != u->dt))
        FAIL("WHERE operand dtypes");
      if (tiny_table[u->op].dr == DR_SRC0)
        for (int k = 1; k < u->nsrc; k++)
          if (d->u[u->src[k]].dt != u->dt) FAIL("operand %d dtype %s differs from %s", k,
                                                dtype_name(d->u[u->src[k]].dt), dtype_name(u->dt));
      break;
    case TK_MOVE:
      if (u->dt != s0->dt) FAIL("movement changes the dtype");
      if (u->op == TINY_PERMUTE || u->op == TINY_FLIP || u->op == TINY_EXPAND || u->op == TINY_PAD ||
          u->op == TINY_SHRINK)
        if (u->rank != s0->rank) FAIL("movement changes the rank");
      if (u->op == TINY_GATHER) {
        const tiny_uop *ix = &d->u[u->src[1]];
        bool same = ix->dt == DT_INT32 && ix->rank == u->rank && u->rank == s0->rank && u->axis >= 0 && u->axis < u->rank;
        for (int a = 0; same && a < u->rank; a++)
          same = sx_equal(ix->shape[a], u->shape[a]) && (a == u->axis || sx_equal(s0->shape[a], u->shape[a]));
        if (!same) FAIL("GATHER index is not int32 of the result's shape, or the source's sizes differ");
      }
      if (u->op == TINY_RESHAPE &&
          !sx_equal(product(d->A, u->rank, u->shape), product(d->A, s0->rank, s0->shape)))
        FAIL("RESHAPE changes the element count");
      break;
    case TK_REDUCE:
      if (u->rank != s0->rank - u->naxes) FAIL("REDUCE rank");
      break;
    case TK_CONTRACT:
      if (!u->con || u->con->nl != s0->rank || u->con->nr != d->u[u->src[1]].rank || u->con->no != u->rank)
        FAIL("CONTRACT index lists");
      break;
    case TK_STORE:
    case TK_LEAF:
      break;
    }
  }
#undef FAIL
  return ok;
}

/* ---- dump ----------------------------------------------------------------------------- */

static cJSON *strs_json(int n, const char *const *s) {
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(arr, cJSON_CreateString(s[i]));
  return arr;
}

static cJSON *number_json(double v) {
  if (isinf(v)) return cJSON_CreateString(v < 0 ? "-inf" : "inf");
  if (isnan(v)) return cJSON_CreateString("nan");
  return cJSON_CreateNumber(v);
}

cJSON *tiny_dump(const tiny_dag *d) {
  arena *A = d->A;
  cJSON *root = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(root, "uops");
  for (int i = 0; i < d->n; i++) {
    const tiny_uop *u = &d->u[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", i);
    cJSON_AddStringToObject(o, "uop", tiny_table[u->op].name);
    if (u->nsrc) {
      cJSON *src = cJSON_AddArrayToObject(o, "src");
      for (int k = 0; k < u->nsrc; k++) cJSON_AddItemToArray(src, cJSON_CreateString(d->u[u->src[k]].out));
    }
    cJSON_AddStringToObject(o, "out", u->out);
    cJSON_AddStringToObject(o, "dtype", dtype_name(u->dt));
    cJSON_AddItemToObject(o, "shape", sx_shape_json(A, u->rank, u->shape));
    cJSON *arg = cJSON_CreateObject();
    switch (u->op) {
    case TINY_BUFFER:
    case TINY_STORE: cJSON_AddStringToObject(arg, "tensor", u->tensor); break;
    case TINY_CONST:
      cJSON_AddItemToObject(arg, "value", number_json(u->cval));
      if (u->crsqrt) cJSON_AddStringToObject(arg, "times_rsqrt", u->crsqrt);
      if (u->crecip) cJSON_AddStringToObject(arg, "over", u->crecip);
      break;
    case TINY_RANGE:
    case TINY_GATHER: cJSON_AddNumberToObject(arg, "axis", u->axis); break;
    case TINY_PERMUTE: {
      cJSON *p = cJSON_AddArrayToObject(arg, "perm");
      for (int k = 0; k < u->rank; k++) cJSON_AddItemToArray(p, cJSON_CreateNumber(u->perm[k]));
      break;
    }
    case TINY_PAD:
    case TINY_SHRINK: {
      cJSON *p = cJSON_AddArrayToObject(arg, u->op == TINY_PAD ? "pad" : "bounds");
      for (int k = 0; k < u->rank; k++) {
        const sx *pr[2] = {u->lo[k], u->hi[k]};
        cJSON_AddItemToArray(p, sx_shape_json(A, 2, pr));
      }
      if (u->op == TINY_SHRINK) {
        cJSON *st = cJSON_AddArrayToObject(arg, "step");
        for (int k = 0; k < u->rank; k++) cJSON_AddItemToArray(st, cJSON_CreateNumber((double)u->step[k]));
      } else {
        cJSON_AddItemToObject(arg, "value", number_json(u->cval));
      }
      break;
    }
    case TINY_FLIP: {
      cJSON *p = cJSON_AddArrayToObject(arg, "flip");
      for (int k = 0; k < u->rank; k++) cJSON_AddItemToArray(p, cJSON_CreateBool(u->flip[k]));
      break;
    }
    case TINY_VIEW: {
      cJSON *p = cJSON_AddArrayToObject(arg, "map");
      for (int k = 0; k < d->u[u->src[0]].rank; k++) cJSON_AddItemToArray(p, cJSON_CreateString(sx_str(A, u->vmap[k])));
      break;
    }
    case TINY_EXPAND:
    case TINY_RESHAPE:
      cJSON_AddItemToObject(arg, "result_shape", sx_shape_json(A, u->rank, u->shape));
      if (u->op == TINY_EXPAND) {
        /* the axes that keep their extent, as in BroadcastInDim */
        cJSON *bd = cJSON_AddArrayToObject(arg, "broadcast_dimensions");
        const tiny_uop *s = &d->u[u->src[0]];
        for (int k = 0; k < u->rank; k++)
          if (!(sx_is_one(s->shape[k]) && !sx_is_one(u->shape[k]))) cJSON_AddItemToArray(bd, cJSON_CreateNumber(k));
      }
      break;
    case TINY_CAST: cJSON_AddStringToObject(arg, "to", dtype_name(u->dt)); break;
    case TINY_REDUCE: {
      cJSON_AddStringToObject(arg, "op", u->rop == RED_SUM ? "SUM" : u->rop == RED_MAX ? "MAX" : "MIN");
      cJSON *ax = cJSON_AddArrayToObject(arg, "axes");
      for (int k = 0; k < u->naxes; k++) cJSON_AddItemToArray(ax, cJSON_CreateNumber(u->axes[k]));
      const tiny_uop *s = &d->u[u->src[0]];
      if (s->labels) {
        cJSON *al = cJSON_AddArrayToObject(arg, "axis_labels");
        for (int k = 0; k < u->naxes; k++) cJSON_AddItemToArray(al, cJSON_CreateString(s->labels[u->axes[k]]));
      }
      cJSON_AddStringToObject(arg, "acc_dtype", dtype_name(u->dt));
      break;
    }
    case TINY_CONTRACT: {
      const tiny_contract *c = u->con;
      cJSON_AddStringToObject(arg, "pattern", c->pattern);
      cJSON_AddItemToObject(arg, "lhs_idx", strs_json(c->nl, c->lhs_idx));
      cJSON_AddItemToObject(arg, "rhs_idx", strs_json(c->nr, c->rhs_idx));
      cJSON_AddItemToObject(arg, "out_idx", strs_json(c->no, c->out_idx));
      cJSON_AddItemToObject(arg, "reduce_idx", strs_json(c->nk, c->reduce_idx));
      if (strcmp(c->pattern, "conv2d") == 0) {
        cJSON *st = cJSON_AddArrayToObject(arg, "strides");
        cJSON_AddItemToArray(st, cJSON_CreateNumber((double)c->strides[0]));
        cJSON_AddItemToArray(st, cJSON_CreateNumber((double)c->strides[1]));
      }
      cJSON_AddStringToObject(arg, "acc_dtype", dtype_name(u->dt));
      break;
    }
    default: break;
    }
    if (arg->child) cJSON_AddItemToObject(o, "arg", arg);
    else cJSON_Delete(arg);
    if (u->labels && u->op != TINY_CONTRACT) cJSON_AddItemToObject(o, "labels", strs_json(u->rank, u->labels));
    if (u->origin) cJSON_AddStringToObject(o, "origin", u->origin);
    cJSON_AddItemToArray(arr, o);
  }
  return root;
}
