/* Playback: a dense interpreter of Tiny IR and of IndexBook views (spec
 * §6.11; see playback.h).  Each UOp becomes a gather loop over its output
 * index; sizes and index maps are sx expressions evaluated under the
 * binding.  Correctness beats speed: tensors are small test tensors. */
#include "playback.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pb_status_name(pb_status s) {
  switch (s) {
  case PB_OK: return "ok";
  case PB_ERR_SHAPE: return "shape mismatch";
  case PB_ERR_UNBOUND: return "unbound symbol";
  case PB_ERR_TOO_LARGE: return "tensor too large";
  case PB_ERR_INPUT: return "bad input";
  case PB_ERR_OOB: return "out-of-bounds read";
  case PB_ERR_UNSUPPORTED: return "unsupported";
  }
  return "?";
}

static pb_status fail(char *why, size_t nwhy, pb_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static pb_status fail(char *why, size_t nwhy, pb_status st, const char *fmt, ...) {
  if (why && nwhy) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, nwhy, fmt, ap);
    va_end(ap);
  }
  return st;
}

/* ---- tensors and bindings ------------------------------------------------------- */

pb_status pb_tensor_alloc(pb_tensor *t, int rank, const int64_t *shape) {
  memset(t, 0, sizeof *t);
  if (rank < 0 || rank > TINY_MAX_RANK) return PB_ERR_SHAPE;
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0) return PB_ERR_SHAPE;
    if (shape[i] > 0 && n > PB_MAX_ELEMS / shape[i]) return PB_ERR_TOO_LARGE;
    n *= shape[i];
  }
  if (n > PB_MAX_ELEMS) return PB_ERR_TOO_LARGE;
  t->rank = rank;
  for (int i = 0; i < rank; i++) t->shape[i] = shape[i];
  t->n = n;
  t->data = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
  if (!t->data) return PB_ERR_TOO_LARGE;
  return PB_OK;
}

void pb_tensor_free(pb_tensor *t) {
  if (!t) return;
  free(t->data);
  t->data = NULL;
  t->n = 0;
}

bool pb_bind(pb_binding *b, const char *name, int64_t v) {
  for (int i = 0; i < b->n; i++)
    if (strcmp(b->name[i], name) == 0) {
      b->value[i] = v;
      return true;
    }
  if (b->n >= PB_MAX_BIND) return false;
  b->name[b->n] = name;
  b->value[b->n++] = v;
  return true;
}

bool pb_lookup(const pb_binding *b, const char *name, int64_t *v) {
  for (int i = 0; b && i < b->n; i++)
    if (strcmp(b->name[i], name) == 0) {
      *v = b->value[i];
      return true;
    }
  return false;
}

/* What lookup_fn found for a name, by the name's address: a Region SSA
 * playback asks for the same few axis and dim names at every element of
 * every let, and a name's answer does not change while its region plays
 * back (the binding and the axis names stay where they are).  A hit is
 * checked against the binding and the axis slot it was found at, so a name
 * list that differs there (a gather's, with its index variable after the
 * axes) is looked up again. */
#define PB_MEMO 512
typedef struct lookup_memo {
  const char *name[PB_MEMO];
  sx_atom_kind kind[PB_MEMO];
  const pb_binding *b[PB_MEMO]; /* SXA_PARAM: the binding its value came from */
  int64_t value[PB_MEMO];       /* SXA_PARAM: the value */
  int slot[PB_MEMO];            /* SXA_VAR: the index of the name list it was found at */
  const char *at[PB_MEMO];      /* SXA_VAR: the name list's entry there */
} lookup_memo;

/* sx_eval context: dim symbols from the binding, index variables from an
 * index vector (either "<prefix><k>" names or an explicit name list). */
typedef struct lookup_ctx {
  const pb_binding *b;
  char prefix;             /* 'v' for VIEW maps, 0 when `names` is used */
  const char *const *names; /* IndexBook axis names */
  int nidx;
  const int64_t *idx;
  const char *missing;     /* the first name that failed */
  lookup_memo *memo;       /* or NULL */
} lookup_ctx;

static unsigned memo_hash(const char *name) {
  uintptr_t p = (uintptr_t)name;
  return (unsigned)((p >> 3) ^ (p >> 11)) % PB_MEMO;
}

static bool lookup_fn(void *vctx, sx_atom_kind kind, const char *name, int64_t *v) {
  lookup_ctx *c = vctx;
  lookup_memo *m = c->memo;
  unsigned h = m ? memo_hash(name) : 0;
  if (m && m->name[h] == name && m->kind[h] == kind) {
    if (kind == SXA_PARAM && m->b[h] == c->b) {
      *v = m->value[h];
      return true;
    }
    if (kind != SXA_PARAM && c->names && m->slot[h] < c->nidx && c->names[m->slot[h]] == m->at[h]) {
      *v = c->idx[m->slot[h]];
      return true;
    }
  }
  if (kind == SXA_PARAM) {
    if (pb_lookup(c->b, name, v)) {
      if (m) m->name[h] = name, m->kind[h] = kind, m->b[h] = c->b, m->value[h] = *v;
      return true;
    }
  } else if (c->names) {
    for (int i = 0; i < c->nidx; i++)
      if (strcmp(c->names[i], name) == 0) {
        *v = c->idx[i];
        if (m) m->name[h] = name, m->kind[h] = kind, m->slot[h] = i, m->at[h] = c->names[i];
        return true;
      }
  } else if (c->prefix && name[0] == c->prefix && name[1]) {
    char *end;
    long k = strtol(name + 1, &end, 10);
    if (!*end && k >= 0 && k < c->nidx) {
      *v = c->idx[k];
      return true;
    }
  }
  if (!c->missing) c->missing = name;
  return false;
}

/* Evaluates x; PB_ERR_UNBOUND names the missing symbol. */
static pb_status eval_sx(const sx *x, lookup_ctx *c, int64_t *out, char *why, size_t nwhy) {
  c->missing = NULL;
  if (sx_eval(x, lookup_fn, c, out)) return PB_OK;
  arena A;
  arena_init(&A);
  const char *s = sx_str(&A, x);
  pb_status st = c->missing ? fail(why, nwhy, PB_ERR_UNBOUND, "'%s' is unbound in %s", c->missing, s)
                            : fail(why, nwhy, PB_ERR_SHAPE, "cannot evaluate %s (overflow or division by 0)", s);
  arena_free(&A);
  return st;
}

pb_status pb_shape_eval(const pb_binding *b, int rank, const sx *const *shape, int64_t *out, char *why,
                        size_t nwhy) {
  lookup_ctx c = {.b = b};
  for (int i = 0; i < rank; i++) {
    pb_status st = eval_sx(shape[i], &c, &out[i], why, nwhy);
    if (st != PB_OK) return st;
    if (out[i] < 0) return fail(why, nwhy, PB_ERR_SHAPE, "size %d evaluates to %lld", i, (long long)out[i]);
  }
  return PB_OK;
}

/* ---- index helpers ---------------------------------------------------------------- */

static void strides_of(int rank, const int64_t *shape, int64_t *st) {
  int64_t s = 1;
  for (int k = rank - 1; k >= 0; k--) {
    st[k] = s;
    s *= shape[k];
  }
}

/* Advances a row-major multi-index; false after the last one. */
static bool next_index(int rank, const int64_t *shape, int64_t *idx) {
  for (int k = rank - 1; k >= 0; k--) {
    if (++idx[k] < shape[k]) return true;
    idx[k] = 0;
  }
  return false;
}

static const char *shape_text(char *buf, size_t n, int rank, const int64_t *shape) {
  size_t p = 0;
  p += (size_t)snprintf(buf + p, n - p, "[");
  for (int i = 0; i < rank && p < n; i++) p += (size_t)snprintf(buf + p, n - p, "%s%lld", i ? "," : "", (long long)shape[i]);
  if (p < n) snprintf(buf + p, n - p, "]");
  return buf;
}

static bool same_shape(int ra, const int64_t *a, int rb, const int64_t *b) {
  if (ra != rb) return false;
  for (int i = 0; i < ra; i++)
    if (a[i] != b[i]) return false;
  return true;
}

/* ---- per-op evaluation -------------------------------------------------------------- */

typedef struct ev {
  const tiny_dag *d;
  const pb_binding *b;
  pb_tensor *v; /* one per node */
  char *why;
  size_t nwhy;
} ev;

/* The source index of a movement op for output index `o`; false when the
 * output element is padding.  Checks bounds for VIEW maps. */
typedef struct mv {
  const tiny_uop *u;
  const pb_tensor *src;
  int64_t lo[TINY_MAX_RANK], hi[TINY_MAX_RANK];
  lookup_ctx lc;
} mv;

/* GATHER: out[p] = x[p with axis = index[p]], 0 where the index is outside
 * [0, size of axis) (tiny.def). */
static pb_status eval_gather(ev *E, int i, const int64_t *osh) {
  const tiny_uop *u = &E->d->u[i];
  const pb_tensor *s = &E->v[u->src[0]], *ix = &E->v[u->src[1]];
  pb_tensor *o = &E->v[i];
  char b1[96], b2[96];
  bool ok = s->rank == u->rank && ix->rank == u->rank && u->axis >= 0 && u->axis < u->rank;
  for (int k = 0; ok && k < u->rank; k++) ok = ix->shape[k] == osh[k] && (k == u->axis || s->shape[k] == osh[k]);
  if (!ok)
    return fail(E->why, E->nwhy, PB_ERR_SHAPE, "GATHER of %s along axis %d by an index %s", shape_text(b1, sizeof b1, s->rank, s->shape),
                u->axis, shape_text(b2, sizeof b2, ix->rank, ix->shape));
  pb_status st = pb_tensor_alloc(o, u->rank, osh);
  if (st != PB_OK) return fail(E->why, E->nwhy, st, "cannot allocate GATHER");
  int64_t idx[TINY_MAX_RANK] = {0}, sst[TINY_MAX_RANK];
  strides_of(s->rank, s->shape, sst);
  for (int64_t f = 0; f < o->n; f++, next_index(u->rank, osh, idx)) {
    double j = ix->data[f];
    if (!(j >= 0 && j < (double)s->shape[u->axis])) continue; /* out of range (or NaN): 0 */
    int64_t off = 0;
    for (int k = 0; k < u->rank; k++) off += (k == u->axis ? (int64_t)j : idx[k]) * sst[k];
    o->data[f] = s->data[off];
  }
  return PB_OK;
}

static pb_status eval_movement(ev *E, int i, const int64_t *osh) {
  const tiny_uop *u = &E->d->u[i];
  const pb_tensor *s = &E->v[u->src[0]];
  pb_tensor *o = &E->v[i];
  char b1[96], b2[96];
  int64_t lo[TINY_MAX_RANK] = {0}, hi[TINY_MAX_RANK] = {0};
  lookup_ctx lc = {.b = E->b};
  pb_status st;
  /* shape rule per op, checked against the node's own shape */
  int64_t want[TINY_MAX_RANK];
  int wrank = u->rank;
  switch (u->op) {
  case TINY_RESHAPE: {
    int64_t n = 1;
    for (int k = 0; k < u->rank; k++) n *= osh[k];
    if (n != s->n)
      return fail(E->why, E->nwhy, PB_ERR_SHAPE, "RESHAPE of %s (%lld elements) to %s", shape_text(b1, sizeof b1, s->rank, s->shape),
                  (long long)s->n, shape_text(b2, sizeof b2, u->rank, osh));
    memcpy(want, osh, sizeof(int64_t) * (size_t)u->rank);
    break;
  }
  case TINY_PERMUTE:
    if (u->rank != s->rank) return fail(E->why, E->nwhy, PB_ERR_SHAPE, "PERMUTE changes the rank");
    for (int k = 0; k < u->rank; k++) {
      if (u->perm[k] < 0 || u->perm[k] >= s->rank) return fail(E->why, E->nwhy, PB_ERR_SHAPE, "bad PERMUTE");
      want[k] = s->shape[u->perm[k]];
    }
    break;
  case TINY_EXPAND:
    if (u->rank != s->rank) return fail(E->why, E->nwhy, PB_ERR_SHAPE, "EXPAND changes the rank");
    for (int k = 0; k < u->rank; k++) {
      if (s->shape[k] != 1 && s->shape[k] != osh[k])
        return fail(E->why, E->nwhy, PB_ERR_SHAPE, "EXPAND of %s to %s", shape_text(b1, sizeof b1, s->rank, s->shape),
                    shape_text(b2, sizeof b2, u->rank, osh));
      want[k] = osh[k];
    }
    break;
  case TINY_PAD:
  case TINY_SHRINK:
    if (u->rank != s->rank) return fail(E->why, E->nwhy, PB_ERR_SHAPE, "%s changes the rank", tiny_op_name(u->op));
    for (int k = 0; k < u->rank; k++) {
      if ((st = eval_sx(u->lo[k], &lc, &lo[k], E->why, E->nwhy)) != PB_OK ||
          (st = eval_sx(u->hi[k], &lc, &hi[k], E->why, E->nwhy)) != PB_OK)
        return st;
      if (u->op == TINY_PAD) {
        if (lo[k] < 0 || hi[k] < 0) return fail(E->why, E->nwhy, PB_ERR_SHAPE, "PAD axis %d by %lld, %lld", k, (long long)lo[k], (long long)hi[k]);
        want[k] = s->shape[k] + lo[k] + hi[k];
      } else {
        int64_t step = u->step ? u->step[k] : 1;
        if (step < 1 || lo[k] < 0 || hi[k] > s->shape[k] || lo[k] >= hi[k])
          return fail(E->why, E->nwhy, PB_ERR_SHAPE, "SHRINK axis %d: [%lld, %lld) step %lld is not inside [0, %lld)", k,
                      (long long)lo[k], (long long)hi[k], (long long)step, (long long)s->shape[k]);
        want[k] = (hi[k] - lo[k] + step - 1) / step;
      }
    }
    break;
  case TINY_FLIP:
    if (u->rank != s->rank) return fail(E->why, E->nwhy, PB_ERR_SHAPE, "FLIP changes the rank");
    memcpy(want, s->shape, sizeof(int64_t) * (size_t)s->rank);
    break;
  case TINY_VIEW:
    memcpy(want, osh, sizeof(int64_t) * (size_t)u->rank);
    break;
  default:
    return fail(E->why, E->nwhy, PB_ERR_UNSUPPORTED, "%s is not a movement op", tiny_op_name(u->op));
  }
  if (!same_shape(wrank, want, u->rank, osh))
    return fail(E->why, E->nwhy, PB_ERR_SHAPE, "%s gives %s but the node's shape is %s", tiny_op_name(u->op),
                shape_text(b1, sizeof b1, wrank, want), shape_text(b2, sizeof b2, u->rank, osh));
  if ((st = pb_tensor_alloc(o, u->rank, osh)) != PB_OK)
    return fail(E->why, E->nwhy, st, "cannot allocate %s", shape_text(b1, sizeof b1, u->rank, osh));
  if (u->op == TINY_RESHAPE) {
    memcpy(o->data, s->data, sizeof(double) * (size_t)s->n);
    return PB_OK;
  }
  int64_t sst[TINY_MAX_RANK], idx[TINY_MAX_RANK] = {0};
  strides_of(s->rank, s->shape, sst);
  lc.prefix = 'v';
  lc.nidx = u->rank;
  lc.idx = idx;
  for (int64_t f = 0; f < o->n; f++, next_index(u->rank, osh, idx)) {
    int64_t off = 0;
    bool pad = false;
    for (int k = 0; k < s->rank; k++) {
      int64_t j = 0;
      switch (u->op) {
      case TINY_PERMUTE: j = idx[k]; break; /* handled below */
      case TINY_EXPAND: j = s->shape[k] == 1 ? 0 : idx[k]; break;
      case TINY_PAD:
        j = idx[k] - lo[k];
        if (j < 0 || j >= s->shape[k]) pad = true;
        break;
      case TINY_SHRINK: j = lo[k] + idx[k] * (u->step ? u->step[k] : 1); break;
      case TINY_FLIP: j = u->flip[k] ? s->shape[k] - 1 - idx[k] : idx[k]; break;
      case TINY_VIEW:
        if ((st = eval_sx(u->vmap[k], &lc, &j, E->why, E->nwhy)) != PB_OK) return st;
        if (j < 0 || j >= s->shape[k])
          return fail(E->why, E->nwhy, PB_ERR_OOB, "VIEW reads index %lld of axis %d (size %lld)", (long long)j, k,
                      (long long)s->shape[k]);
        break;
      default: break;
      }
      if (u->op == TINY_PERMUTE) off += idx[k] * sst[u->perm[k]];
      else off += j * sst[k];
    }
    o->data[f] = pad ? u->cval : s->data[off];
  }
  return PB_OK;
}

static pb_status eval_alu(ev *E, int i, const int64_t *osh) {
  const tiny_uop *u = &E->d->u[i];
  pb_tensor *o = &E->v[i];
  char b1[96], b2[96];
  const pb_tensor *s[3] = {0};
  for (int k = 0; k < u->nsrc; k++) {
    s[k] = &E->v[u->src[k]];
    if (s[k]->rank != 0 && !same_shape(s[k]->rank, s[k]->shape, u->rank, osh))
      return fail(E->why, E->nwhy, PB_ERR_SHAPE, "%s operand %d has shape %s, not %s", tiny_op_name(u->op), k,
                  shape_text(b1, sizeof b1, s[k]->rank, s[k]->shape), shape_text(b2, sizeof b2, u->rank, osh));
  }
  pb_status st = pb_tensor_alloc(o, u->rank, osh);
  if (st != PB_OK) return fail(E->why, E->nwhy, st, "cannot allocate %s", shape_text(b1, sizeof b1, u->rank, osh));
  for (int64_t f = 0; f < o->n; f++) {
    double a[3] = {0, 0, 0};
    for (int k = 0; k < u->nsrc; k++) a[k] = s[k]->data[s[k]->rank ? f : 0];
    o->data[f] = tiny_op_eval(u->op, a[0], a[1], a[2]);
  }
  return PB_OK;
}

static pb_status eval_reduce(ev *E, int i, const int64_t *osh) {
  const tiny_uop *u = &E->d->u[i];
  const pb_tensor *s = &E->v[u->src[0]];
  pb_tensor *o = &E->v[i];
  char b1[96], b2[96];
  bool red[TINY_MAX_RANK] = {0};
  for (int k = 0; k < u->naxes; k++) {
    if (u->axes[k] < 0 || u->axes[k] >= s->rank || red[u->axes[k]])
      return fail(E->why, E->nwhy, PB_ERR_SHAPE, "REDUCE axis %d of rank %d", u->axes[k], s->rank);
    red[u->axes[k]] = true;
  }
  int64_t want[TINY_MAX_RANK];
  int wr = 0;
  for (int k = 0; k < s->rank; k++)
    if (!red[k]) want[wr++] = s->shape[k];
  if (!same_shape(wr, want, u->rank, osh))
    return fail(E->why, E->nwhy, PB_ERR_SHAPE, "REDUCE gives %s but the node's shape is %s", shape_text(b1, sizeof b1, wr, want),
                shape_text(b2, sizeof b2, u->rank, osh));
  pb_status st = pb_tensor_alloc(o, u->rank, osh);
  if (st != PB_OK) return fail(E->why, E->nwhy, st, "cannot allocate %s", shape_text(b1, sizeof b1, u->rank, osh));
  double neutral = u->rop == RED_SUM ? 0.0 : u->rop == RED_MAX ? -INFINITY : INFINITY;
  for (int64_t f = 0; f < o->n; f++) o->data[f] = neutral;
  int64_t ost[TINY_MAX_RANK], idx[TINY_MAX_RANK] = {0};
  strides_of(u->rank, osh, ost);
  for (int64_t f = 0; f < s->n; f++, next_index(s->rank, s->shape, idx)) {
    int64_t off = 0;
    for (int k = 0, j = 0; k < s->rank; k++)
      if (!red[k]) off += idx[k] * ost[j++];
    double x = s->data[f], *acc = &o->data[off];
    if (u->rop == RED_SUM) *acc += x;
    else if (u->rop == RED_MAX) *acc = x > *acc || isnan(x) ? x : *acc;
    else *acc = x < *acc || isnan(x) ? x : *acc;
  }
  return PB_OK;
}

static int label_pos(const char *const *l, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (strcmp(l[i], s) == 0) return i;
  return -1;
}

/* out[out_idx] = sum over reduce_idx of lhs[lhs_idx] * rhs[rhs_idx]. */
static pb_status eval_contract(ev *E, int i, const int64_t *osh) {
  const tiny_uop *u = &E->d->u[i];
  const tiny_contract *c = u->con;
  const pb_tensor *op[2] = {&E->v[u->src[0]], &E->v[u->src[1]]};
  pb_tensor *o = &E->v[i];
  char b1[96];
  if (!c || c->nl != op[0]->rank || c->nr != op[1]->rank || c->no != u->rank)
    return fail(E->why, E->nwhy, PB_ERR_SHAPE, "CONTRACT index lists do not match the operand ranks");
  /* every operand label is an output or a reduce label, with one size */
  int nall = c->no + c->nk;
  if (nall > 2 * TINY_MAX_RANK) return fail(E->why, E->nwhy, PB_ERR_UNSUPPORTED, "too many CONTRACT labels");
  const char *all[2 * TINY_MAX_RANK];
  int64_t size[2 * TINY_MAX_RANK];
  for (int k = 0; k < nall; k++) {
    all[k] = k < c->no ? c->out_idx[k] : c->reduce_idx[k - c->no];
    size[k] = -1;
  }
  int pos[2][TINY_MAX_RANK];
  for (int side = 0; side < 2; side++) {
    const char *const *lab = side ? c->rhs_idx : c->lhs_idx;
    for (int k = 0; k < op[side]->rank; k++) {
      int p = label_pos(all, nall, lab[k]);
      if (p < 0)
        return fail(E->why, E->nwhy, PB_ERR_UNSUPPORTED, "CONTRACT label '%s' is neither kept nor reduced", lab[k]);
      if (size[p] >= 0 && size[p] != op[side]->shape[k])
        return fail(E->why, E->nwhy, PB_ERR_SHAPE, "CONTRACT label '%s' has sizes %lld and %lld", lab[k],
                    (long long)size[p], (long long)op[side]->shape[k]);
      size[p] = op[side]->shape[k];
      pos[side][k] = p;
    }
  }
  for (int k = 0; k < nall; k++) {
    if (size[k] < 0) return fail(E->why, E->nwhy, PB_ERR_SHAPE, "CONTRACT label '%s' is in no operand", all[k]);
    if (k < c->no && size[k] != osh[k])
      return fail(E->why, E->nwhy, PB_ERR_SHAPE, "CONTRACT output '%s' has size %lld but the node says %lld", all[k],
                  (long long)size[k], (long long)osh[k]);
  }
  pb_status st = pb_tensor_alloc(o, u->rank, osh);
  if (st != PB_OK) return fail(E->why, E->nwhy, st, "cannot allocate %s", shape_text(b1, sizeof b1, u->rank, osh));
  /* stride of each label in each operand */
  int64_t lst[2][2 * TINY_MAX_RANK] = {{0}}, st0[TINY_MAX_RANK];
  for (int side = 0; side < 2; side++) {
    strides_of(op[side]->rank, op[side]->shape, st0);
    for (int k = 0; k < op[side]->rank; k++) lst[side][pos[side][k]] += st0[k];
  }
  int64_t oi[TINY_MAX_RANK] = {0}, ri[TINY_MAX_RANK] = {0};
  int64_t nred = 1;
  for (int k = 0; k < c->nk; k++) nred *= size[c->no + k];
  for (int64_t f = 0; f < o->n; f++, next_index(c->no, osh, oi)) {
    int64_t base[2] = {0, 0};
    for (int k = 0; k < c->no; k++) base[0] += oi[k] * lst[0][k], base[1] += oi[k] * lst[1][k];
    double acc = 0;
    memset(ri, 0, sizeof ri);
    for (int64_t r = 0; r < nred; r++, next_index(c->nk, size + c->no, ri)) {
      int64_t a = base[0], bb = base[1];
      for (int k = 0; k < c->nk; k++) a += ri[k] * lst[0][c->no + k], bb += ri[k] * lst[1][c->no + k];
      acc += op[0]->data[a] * op[1]->data[bb];
    }
    o->data[f] = acc;
  }
  return PB_OK;
}

static pb_status eval_node(ev *E, int i, int nin, const pb_tensor *inputs, int *next_input) {
  const tiny_uop *u = &E->d->u[i];
  pb_tensor *o = &E->v[i];
  char b1[96], b2[96];
  int64_t osh[TINY_MAX_RANK];
  if (u->rank < 0 || u->rank > TINY_MAX_RANK) return fail(E->why, E->nwhy, PB_ERR_UNSUPPORTED, "rank %d", u->rank);
  for (int k = 0; k < u->nsrc; k++)
    if (u->src[k] < 0 || u->src[k] >= i) return fail(E->why, E->nwhy, PB_ERR_UNSUPPORTED, "source %d is not an earlier node", k);
  pb_status st = pb_shape_eval(E->b, u->rank, u->shape, osh, E->why, E->nwhy);
  if (st != PB_OK) return st;
  switch (tiny_op_kind(u->op)) {
  case TK_LEAF:
    if (u->op == TINY_BUFFER) {
      int k = (*next_input)++;
      if (k >= nin) return fail(E->why, E->nwhy, PB_ERR_INPUT, "no input given for BUFFER '%s'", u->tensor);
      if (!same_shape(inputs[k].rank, inputs[k].shape, u->rank, osh))
        return fail(E->why, E->nwhy, PB_ERR_INPUT, "input '%s' has shape %s, the BUFFER needs %s", u->tensor,
                    shape_text(b1, sizeof b1, inputs[k].rank, inputs[k].shape), shape_text(b2, sizeof b2, u->rank, osh));
      if ((st = pb_tensor_alloc(o, u->rank, osh)) != PB_OK) return fail(E->why, E->nwhy, st, "cannot allocate input");
      memcpy(o->data, inputs[k].data, sizeof(double) * (size_t)o->n);
    } else if (u->op == TINY_CONST) {
      if ((st = pb_tensor_alloc(o, u->rank, osh)) != PB_OK) return fail(E->why, E->nwhy, st, "cannot allocate");
      double v = u->cval;
      if (u->crsqrt) {
        int64_t dv;
        if (!pb_lookup(E->b, u->crsqrt, &dv))
          return fail(E->why, E->nwhy, PB_ERR_UNBOUND, "'%s' is unbound (CONST times rsqrt(%s))", u->crsqrt, u->crsqrt);
        if (dv <= 0) return fail(E->why, E->nwhy, PB_ERR_SHAPE, "rsqrt(%s) of %lld", u->crsqrt, (long long)dv);
        v *= 1.0 / sqrt((double)dv);
      }
      if (u->crecip) {
        int64_t dv;
        if (!pb_lookup(E->b, u->crecip, &dv))
          return fail(E->why, E->nwhy, PB_ERR_UNBOUND, "'%s' is unbound (CONST over %s)", u->crecip, u->crecip);
        if (dv <= 0) return fail(E->why, E->nwhy, PB_ERR_SHAPE, "1/%s of %lld", u->crecip, (long long)dv);
        v /= (double)dv;
      }
      for (int64_t f = 0; f < o->n; f++) o->data[f] = v;
    } else { /* RANGE: the index along `axis` */
      if (u->axis < 0 || u->axis >= u->rank) return fail(E->why, E->nwhy, PB_ERR_SHAPE, "RANGE axis %d of rank %d", u->axis, u->rank);
      if ((st = pb_tensor_alloc(o, u->rank, osh)) != PB_OK) return fail(E->why, E->nwhy, st, "cannot allocate RANGE");
      int64_t idx[TINY_MAX_RANK] = {0};
      for (int64_t f = 0; f < o->n; f++, next_index(u->rank, osh, idx)) o->data[f] = (double)idx[u->axis];
    }
    break;
  case TK_MOVE: st = u->op == TINY_GATHER ? eval_gather(E, i, osh) : eval_movement(E, i, osh); break;
  case TK_ALU: st = eval_alu(E, i, osh); break;
  case TK_REDUCE: st = eval_reduce(E, i, osh); break;
  case TK_CONTRACT: st = eval_contract(E, i, osh); break;
  case TK_STORE: {
    const pb_tensor *s = &E->v[u->src[0]];
    if (!same_shape(s->rank, s->shape, u->rank, osh))
      return fail(E->why, E->nwhy, PB_ERR_SHAPE, "STORE of %s into %s", shape_text(b1, sizeof b1, s->rank, s->shape),
                  shape_text(b2, sizeof b2, u->rank, osh));
    if ((st = pb_tensor_alloc(o, u->rank, osh)) != PB_OK) return fail(E->why, E->nwhy, st, "cannot allocate");
    memcpy(o->data, s->data, sizeof(double) * (size_t)o->n);
    break;
  }
  }
  if (st != PB_OK) return st;
  /* every node rounds to its dtype; REDUCE and CONTRACT summed in double */
  for (int64_t f = 0; f < o->n; f++) o->data[f] = dtype_round(u->dt, o->data[f]);
  return PB_OK;
}

int pb_num_inputs(const tiny_dag *d) {
  int n = 0;
  for (int i = 0; i < d->n; i++) n += d->u[i].op == TINY_BUFFER;
  return n;
}

const char *pb_input_name(const tiny_dag *d, int k) {
  for (int i = 0; i < d->n; i++)
    if (d->u[i].op == TINY_BUFFER && k-- == 0) return d->u[i].tensor;
  return NULL;
}

pb_status pb_eval_tiny(const tiny_dag *d, const pb_binding *b, int nin, const pb_tensor *inputs, bool keep_values,
                       pb_result *res) {
  memset(res, 0, sizeof *res);
  res->failed_node = -1;
  int nbuf = pb_num_inputs(d);
  if (nin != nbuf) return fail(res->why, sizeof res->why, PB_ERR_INPUT, "%d inputs given for %d BUFFERs", nin, nbuf);
  ev E = {d, b, calloc((size_t)d->n + 1, sizeof(pb_tensor)), res->why, sizeof res->why};
  if (!E.v) return fail(res->why, sizeof res->why, PB_ERR_TOO_LARGE, "out of memory");
  pb_status st = PB_OK;
  int next_input = 0, nstore = 0;
  for (int i = 0; i < d->n && st == PB_OK; i++) {
    st = eval_node(&E, i, nin, inputs, &next_input);
    if (st != PB_OK) {
      res->failed_node = i;
      size_t n = strlen(res->why);
      snprintf(res->why + n, sizeof res->why - n, " (at tiny[%d] %s)", i, d->u[i].out);
    }
    nstore += d->u[i].op == TINY_STORE;
  }
  if (st == PB_OK) {
    res->out = calloc((size_t)nstore + 1, sizeof(pb_tensor));
    res->out_name = calloc((size_t)nstore + 1, sizeof(const char *));
    if (!res->out || !res->out_name) st = fail(res->why, sizeof res->why, PB_ERR_TOO_LARGE, "out of memory");
  }
  for (int i = 0; i < d->n && st == PB_OK; i++) {
    if (d->u[i].op != TINY_STORE) continue;
    /* the STORE's value moves to the result; a kept copy stays in vals */
    pb_tensor *t = &res->out[res->nout];
    if (keep_values) {
      if ((st = pb_tensor_alloc(t, E.v[i].rank, E.v[i].shape)) != PB_OK) break;
      memcpy(t->data, E.v[i].data, sizeof(double) * (size_t)t->n);
    } else {
      *t = E.v[i];
      memset(&E.v[i], 0, sizeof E.v[i]);
    }
    res->out_name[res->nout++] = d->u[i].tensor;
  }
  if (keep_values && st == PB_OK) {
    res->vals = E.v;
    res->nvals = d->n;
  } else {
    for (int i = 0; i < d->n; i++) pb_tensor_free(&E.v[i]);
    free(E.v);
  }
  return st;
}

void pb_result_free(pb_result *res) {
  for (int i = 0; i < res->nout; i++) pb_tensor_free(&res->out[i]);
  for (int i = 0; i < res->nvals; i++) pb_tensor_free(&res->vals[i]);
  free(res->out);
  free(res->out_name);
  free(res->vals);
  res->out = NULL;
  res->out_name = NULL;
  res->vals = NULL;
  res->nout = res->nvals = 0;
}

/* ---- IndexBook views ------------------------------------------------------------------ */

/* The tensor an IndexBook input reads: a Tiny value, or a non_scop view
 * evaluated through the book (into *own, which the caller frees). */
static pb_status view_root(const indexbook *ib, int entry, const ib_input *in, const pb_binding *b, const pb_tensor *vals,
                           pb_tensor *own, const pb_tensor **root, char *why, size_t nwhy) {
  const ib_entry *e = &ib->e[entry];
  if (in->entry < 0 || in->entry >= ib->n) return fail(why, nwhy, PB_ERR_UNSUPPORTED, "bad root of %s", e->value);
  const ib_entry *re = &ib->e[in->entry];
  pb_status st;
  if (re->kind == IBK_VIEW && in->entry != entry) {
    if ((st = pb_eval_view(ib, in->entry, b, vals, own, why, nwhy)) != PB_OK) return st;
    *root = own;
  } else if (re->uop >= 0) {
    *root = &vals[re->uop];
  } else {
    return fail(why, nwhy, PB_ERR_UNSUPPORTED, "root %s of %s is not a Tiny value", re->value, e->value);
  }
  if (in->n != (*root)->rank)
    return fail(why, nwhy, PB_ERR_SHAPE, "map of %s has %d entries for the root's rank %d", e->value, in->n,
                (*root)->rank);
  return PB_OK;
}

/* One element of an input at the point in `lc`: its guards, then its map
 * (an unguarded index out of bounds is PB_ERR_OOB). */
static pb_status read_at(const indexbook *ib, const ib_entry *e, const ib_input *in, const pb_tensor *root,
                         const int64_t *rst, lookup_ctx *lc, double *v, char *why, size_t nwhy) {
  pb_status st;
  for (int g = 0; g < in->nguards; g++) {
    int64_t x, lo, hi;
    if ((st = eval_sx(in->guards[g].e, lc, &x, why, nwhy)) != PB_OK ||
        (st = eval_sx(in->guards[g].lo, lc, &lo, why, nwhy)) != PB_OK ||
        (st = eval_sx(in->guards[g].hi, lc, &hi, why, nwhy)) != PB_OK)
      return st;
    if (!(lo <= x && x < hi)) {
      *v = in->pad_value;
      return PB_OK;
    }
  }
  int64_t off = 0;
  for (int k = 0; k < in->n; k++) {
    int64_t j;
    if ((st = eval_sx(in->map[k], lc, &j, why, nwhy)) != PB_OK) return st;
    if (j < 0 || j >= root->shape[k]) {
      arena A;
      arena_init(&A);
      st = fail(why, nwhy, PB_ERR_OOB, "%s reads %s axis %d at %lld (size %lld) by map %s: unguarded access", e->value,
                ib->e[in->entry].value, k, (long long)j, (long long)root->shape[k], sx_str(&A, in->map[k]));
      arena_free(&A);
      return st;
    }
    off += j * rst[k];
  }
  *v = root->data[off];
  return PB_OK;
}

pb_status pb_eval_view(const indexbook *ib, int entry, const pb_binding *b, const pb_tensor *vals, pb_tensor *out,
                       char *why, size_t nwhy) {
  memset(out, 0, sizeof *out);
  if (entry < 0 || entry >= ib->n) return fail(why, nwhy, PB_ERR_INPUT, "no IndexBook entry %d", entry);
  const ib_entry *e = &ib->e[entry];
  /* a view or store reads one input; a gather two (its index second) */
  int nin = e->load_var ? 2 : 1;
  if ((e->kind != IBK_VIEW && e->kind != IBK_STORE) || e->nin != nin || e->in[0].is_const || e->uop < 0)
    return fail(why, nwhy, PB_ERR_UNSUPPORTED, "entry %s is not a view", e->value);
  if (e->rank + 1 > TINY_MAX_RANK) return fail(why, nwhy, PB_ERR_UNSUPPORTED, "rank %d", e->rank);
  pb_tensor own[2] = {{0}};
  const pb_tensor *root[2] = {NULL, NULL};
  int64_t rst[2][TINY_MAX_RANK];
  pb_status st = PB_OK;
  for (int k = 0; k < nin && st == PB_OK; k++) {
    st = view_root(ib, entry, &e->in[k], b, vals, &own[k], &root[k], why, nwhy);
    if (st == PB_OK) strides_of(root[k]->rank, root[k]->shape, rst[k]);
  }
  if (st != PB_OK) goto done;
  int64_t osh[TINY_MAX_RANK], idx[TINY_MAX_RANK + 1] = {0};
  const char *names[TINY_MAX_RANK + 1];
  lookup_ctx lc = {.b = b, .names = names, .nidx = e->rank + (nin == 2), .idx = idx};
  for (int k = 0; k < e->rank; k++) {
    names[k] = e->axes[k].name;
    if ((st = eval_sx(e->axes[k].size, &lc, &osh[k], why, nwhy)) != PB_OK) goto done;
  }
  if (nin == 2) names[e->rank] = e->load_var;
  if ((st = pb_tensor_alloc(out, e->rank, osh)) != PB_OK) {
    fail(why, nwhy, st, "cannot allocate view %s", e->value);
    goto done;
  }
  dtype dt = ib->dag->u[e->uop].dt;
  for (int64_t f = 0; f < out->n; f++, next_index(e->rank, osh, idx)) {
    double v;
    if (nin == 2) { /* the loaded index, then the gathered element */
      if ((st = read_at(ib, e, &e->in[1], root[1], rst[1], &lc, &v, why, nwhy)) != PB_OK) goto done;
      idx[e->rank] = v >= -1 && v <= (double)INT64_MAX / 2 ? (int64_t)floor(v) : -1;
    }
    if ((st = read_at(ib, e, &e->in[0], root[0], rst[0], &lc, &v, why, nwhy)) != PB_OK) goto done;
    out->data[f] = dtype_round(dt, v);
  }
  st = PB_OK;
done:
  pb_tensor_free(&own[0]);
  pb_tensor_free(&own[1]);
  if (st != PB_OK) pb_tensor_free(out);
  return st;
}

/* ---- Region SSA ------------------------------------------------------------------------- */

#define PB_RG_MAXAX 64

typedef struct rg_ev {
  const region *r;
  const pb_binding *b;
  int nax;                 /* iters + reduce axes */
  const char **names;      /* region axis names */
  int64_t *size;           /* concrete size of each axis */
  const pb_tensor **in;    /* per region input */
  pb_tensor *lets;         /* per let, dense over its axes */
  int cur;                 /* the let being evaluated */
  pb_status st;            /* first failure */
  char *why;
  size_t nwhy;
  lookup_memo memo;        /* the index and guard expressions' names (rg_index) */
} rg_ev;

static double rg_fail(rg_ev *E, pb_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static double rg_fail(rg_ev *E, pb_status st, const char *fmt, ...) {
  if (E->st == PB_OK) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(E->why, E->nwhy, fmt, ap);
    va_end(ap);
    E->st = st;
  }
  return NAN;
}

/* An index or guard expression at the point `env`. */
static bool rg_index(rg_ev *E, const sx *x, const int64_t *env, int64_t *v) {
  lookup_ctx lc = {.b = E->b, .names = E->names, .nidx = E->nax, .idx = env, .memo = &E->memo};
  pb_status st = eval_sx(x, &lc, v, E->why, E->nwhy);
  if (st == PB_OK) return true;
  if (E->st == PB_OK) E->st = st;
  return false;
}

static double rg_eval(rg_ev *E, const rexpr *e, int64_t *env, int depth);

/* The value of a let at the coordinates `env` gives its axes. */
static double rg_let(rg_ev *E, int l, const int64_t *env) {
  const region *r = E->r;
  if (l < 0 || l >= E->cur) return rg_fail(E, PB_ERR_UNSUPPORTED, "let %d is not an earlier let", l);
  const rexpr *le = r->lets[l].e;
  const pb_tensor *t = &E->lets[l];
  int64_t off = 0;
  for (int i = 0; i < le->nax; i++) {
    int64_t j = env[le->ax[i]];
    if (j < 0 || j >= t->shape[i]) return rg_fail(E, PB_ERR_OOB, "let %s read at %lld on axis %d (size %lld)", r->lets[l].name, (long long)j, i, (long long)t->shape[i]);
    off = off * t->shape[i] + j;
  }
  return t->data[off];
}

static double rg_read(rg_ev *E, const rexpr *e, const int64_t *env) {
  const region *r = E->r;
  const pb_tensor *t = E->in[e->input];
  if (e->nmap != t->rank) return rg_fail(E, PB_ERR_SHAPE, "read of %s with %d indices for rank %d", r->in[e->input].name, e->nmap, t->rank);
  int64_t off = 0;
  for (int i = 0; i < e->nmap; i++) {
    int64_t j;
    if (!rg_index(E, e->map[i], env, &j)) return NAN;
    if (j < 0 || j >= t->shape[i]) {
      arena A;
      arena_init(&A);
      rg_fail(E, PB_ERR_OOB, "read of %s axis %d at %lld (size %lld) by map %s: unguarded access", r->in[e->input].name, i,
              (long long)j, (long long)t->shape[i], sx_str(&A, e->map[i]));
      arena_free(&A);
      return NAN;
    }
    off = off * t->shape[i] + j;
  }
  return t->data[off];
}

static bool rg_guards(rg_ev *E, const rexpr *e, const int64_t *env, bool *holds) {
  *holds = true;
  for (int g = 0; g < e->ng && *holds; g++) {
    int64_t x, lo, hi = 0;
    if (!rg_index(E, e->guards[g].e, env, &x) || !rg_index(E, e->guards[g].lo, env, &lo)) return false;
    if (e->guards[g].hi && !rg_index(E, e->guards[g].hi, env, &hi)) return false;
    *holds = lo <= x && (!e->guards[g].hi || x < hi);
  }
  return true;
}

/* A read through a loaded index: the index at this point binds ldvar (one
 * more name after the region's axes) for the map and the guards; outside
 * the guards the read gives cval. */
static double rg_gather(rg_ev *E, const rexpr *e, int64_t *env, int depth) {
  if (!e->a || E->nax >= PB_RG_MAXAX) return rg_fail(E, PB_ERR_UNSUPPORTED, "read through %s without an index", e->ldvar);
  double iv = rg_eval(E, e->a, env, depth + 1);
  if (E->st != PB_OK) return NAN;
  if (!(fabs(iv) <= 2147483648.0) || iv != trunc(iv))
    return rg_fail(E, PB_ERR_UNSUPPORTED, "index %g of a read through %s is not an int32", iv, e->ldvar);
  const char *names[PB_RG_MAXAX + 1];
  int64_t at[PB_RG_MAXAX + 1];
  memcpy(names, E->names, sizeof(const char *) * (size_t)E->nax);
  memcpy(at, env, sizeof(int64_t) * (size_t)E->nax);
  names[E->nax] = e->ldvar;
  at[E->nax] = (int64_t)iv;
  const char **names0 = E->names;
  int nax0 = E->nax;
  E->names = names;
  E->nax = nax0 + 1;
  bool holds = false;
  double v = NAN;
  if (rg_guards(E, e, at, &holds)) v = holds ? rg_read(E, e, at) : e->cval;
  E->names = names0;
  E->nax = nax0;
  return dtype_round(e->dt, v);
}

/* Reduce: loop over the reduce axes with the point's other coordinates
 * fixed, accumulate in double (max/min propagate NaN as Tiny playback
 * does), round once to the accumulate dtype. */
static double rg_reduce(rg_ev *E, const rexpr *e, int64_t *env, int depth) {
  if (e->nred < 1 || e->nred > PB_RG_MAXAX) return rg_fail(E, PB_ERR_UNSUPPORTED, "Reduce over %d axes", e->nred);
  int64_t saved[PB_RG_MAXAX], n = 1;
  for (int i = 0; i < e->nred; i++) {
    if (e->red[i] < 0 || e->red[i] >= E->nax) return rg_fail(E, PB_ERR_UNSUPPORTED, "Reduce axis %d unknown", e->red[i]);
    saved[i] = env[e->red[i]];
    env[e->red[i]] = 0;
    n *= E->size[e->red[i]];
  }
  double acc = e->init;
  for (int64_t f = 0; f < n && E->st == PB_OK; f++) {
    double x = rg_eval(E, e->a, env, depth + 1);
    if (e->rop == RED_SUM) acc += x;
    else if (e->rop == RED_MAX) acc = x > acc || isnan(x) ? x : acc;
    else acc = x < acc || isnan(x) ? x : acc;
    for (int i = e->nred - 1; i >= 0; i--) { /* row-major over the reduce axes */
      if (++env[e->red[i]] < E->size[e->red[i]]) break;
      env[e->red[i]] = 0;
    }
  }
  for (int i = 0; i < e->nred; i++) env[e->red[i]] = saved[i];
  return dtype_round(e->dt, acc);
}

static double rg_eval(rg_ev *E, const rexpr *e, int64_t *env, int depth) {
  if (E->st != PB_OK) return NAN;
  if (!e) return rg_fail(E, PB_ERR_UNSUPPORTED, "missing operand");
  if (depth > 400) return rg_fail(E, PB_ERR_UNSUPPORTED, "expression nested too deeply");
  switch (e->k) {
  case RX_CONST: {
    double v = e->cval;
    if (e->crsqrt) {
      int64_t dv;
      if (!pb_lookup(E->b, e->crsqrt, &dv)) return rg_fail(E, PB_ERR_UNBOUND, "'%s' is unbound (const times rsqrt(%s))", e->crsqrt, e->crsqrt);
      if (dv <= 0) return rg_fail(E, PB_ERR_SHAPE, "rsqrt(%s) of %lld", e->crsqrt, (long long)dv);
      v *= 1.0 / sqrt((double)dv);
    }
    if (e->crecip) {
      int64_t dv;
      if (!pb_lookup(E->b, e->crecip, &dv)) return rg_fail(E, PB_ERR_UNBOUND, "'%s' is unbound (const over %s)", e->crecip, e->crecip);
      if (dv <= 0) return rg_fail(E, PB_ERR_SHAPE, "1/%s of %lld", e->crecip, (long long)dv);
      v /= (double)dv;
    }
    return dtype_round(e->dt, v);
  }
  case RX_LET: return rg_let(E, e->let, env);
  case RX_READ:
    if (e->input < 0 || e->input >= E->r->nin) return rg_fail(E, PB_ERR_UNSUPPORTED, "read of input %d", e->input);
    if (e->ldvar) return rg_gather(E, e, env, depth);
    return dtype_round(e->dt, rg_read(E, e, env));
  case RX_UNARY:
    return dtype_round(e->dt, tiny_op_eval(e->op, rg_eval(E, e->a, env, depth + 1), 0, 0));
  case RX_BINARY: {
    double a = rg_eval(E, e->a, env, depth + 1), b = rg_eval(E, e->b, env, depth + 1);
    return dtype_round(e->dt, tiny_op_eval(e->op, a, b, 0));
  }
  case RX_SELECT: {
    bool p;
    if (e->a) p = rg_eval(E, e->a, env, depth + 1) != 0;
    else if (!rg_guards(E, e, env, &p)) return NAN;
    /* only the chosen branch is evaluated: the other may read out of bounds */
    return dtype_round(e->dt, rg_eval(E, p ? e->b : e->c, env, depth + 1));
  }
  case RX_REDUCE: return rg_reduce(E, e, env, depth);
  case RX_BCAST:
  case RX_TRANSPOSE: {
    /* the operand at the coordinates of its own axes: operand axis j is
     * result dimension bdims[j] (BroadcastInDim); result dimension i is
     * operand axis perm[i] (Transpose) */
    if (!e->a || e->a->nax > PB_RG_MAXAX || E->nax > PB_RG_MAXAX) return rg_fail(E, PB_ERR_UNSUPPORTED, "bad %s", e->k == RX_BCAST ? "BroadcastInDim" : "Transpose");
    int64_t sub[PB_RG_MAXAX];
    memcpy(sub, env, sizeof(int64_t) * (size_t)E->nax);
    if (e->k == RX_BCAST) {
      for (int j = 0; j < e->a->nax; j++) {
        if (!e->bdims || e->bdims[j] < 0 || e->bdims[j] >= e->nax) return rg_fail(E, PB_ERR_SHAPE, "BroadcastInDim dimension out of range");
        sub[e->a->ax[j]] = env[e->ax[e->bdims[j]]];
      }
    } else {
      if (e->a->nax != e->nax || !e->perm) return rg_fail(E, PB_ERR_SHAPE, "Transpose changes the rank");
      for (int i = 0; i < e->nax; i++) {
        if (e->perm[i] < 0 || e->perm[i] >= e->nax) return rg_fail(E, PB_ERR_SHAPE, "Transpose permutation out of range");
        sub[e->a->ax[e->perm[i]]] = env[e->ax[i]];
      }
    }
    return rg_eval(E, e->a, sub, depth + 1);
  }
  }
  return rg_fail(E, PB_ERR_UNSUPPORTED, "expression kind %d", (int)e->k);
}

/* A value yielded by an earlier region for later ones. */
typedef struct rg_value {
  int entry;
  const char *name;
  pb_tensor t;
} rg_value;

static pb_status rg_region(const region *r, const pb_binding *b, int nin, const char *const *in_names,
                           const pb_tensor *inputs, rg_value *vals, int *nvals, pb_result *res) {
  char *why = res->why;
  size_t nwhy = sizeof res->why;
  int nax = r->niters + r->nred;
  if (nax > PB_RG_MAXAX) return fail(why, nwhy, PB_ERR_UNSUPPORTED, "%d axes", nax);
  rg_ev E = {.r = r,
             .b = b,
             .nax = nax,
             .names = calloc((size_t)nax + 1, sizeof(char *)),
             .size = calloc((size_t)nax + 1, sizeof(int64_t)),
             .in = calloc((size_t)r->nin + 1, sizeof(pb_tensor *)),
             .lets = calloc((size_t)r->nlets + 1, sizeof(pb_tensor)),
             .st = PB_OK,
             .why = why,
             .nwhy = nwhy}; /* the memo starts empty */
  pb_status st = PB_OK;
  if (!E.names || !E.size || !E.in || !E.lets) {
    st = fail(why, nwhy, PB_ERR_TOO_LARGE, "out of memory");
    goto done;
  }
  for (int i = 0; i < nax && st == PB_OK; i++) {
    E.names[i] = r->it[i].name;
    st = pb_shape_eval(b, 1, &r->it[i].size, &E.size[i], why, nwhy);
  }
  /* inputs: signature tensors by name, or values of earlier regions */
  for (int i = 0; i < r->nin && st == PB_OK; i++) {
    const region_memref *m = &r->in[i];
    if (m->signature) {
      for (int k = 0; k < nin && !E.in[i]; k++)
        if (strcmp(in_names[k], m->name) == 0) E.in[i] = &inputs[k];
    } else {
      for (int k = 0; k < *nvals && !E.in[i]; k++)
        if (vals[k].entry == m->entry) E.in[i] = &vals[k].t;
    }
    if (!E.in[i]) {
      st = fail(why, nwhy, PB_ERR_INPUT, m->signature ? "no input tensor '%s' is given" : "no earlier region yields '%s'",
                m->name);
      break;
    }
    int64_t want[TINY_MAX_RANK];
    char b1[96], b2[96];
    if (m->rank > TINY_MAX_RANK) st = fail(why, nwhy, PB_ERR_UNSUPPORTED, "rank %d", m->rank);
    else if ((st = pb_shape_eval(b, m->rank, m->shape, want, why, nwhy)) != PB_OK) break;
    else if (!same_shape(E.in[i]->rank, E.in[i]->shape, m->rank, want))
      st = fail(why, nwhy, PB_ERR_INPUT, "input '%s' has shape %s, the region reads %s", m->name,
                shape_text(b1, sizeof b1, E.in[i]->rank, E.in[i]->shape), shape_text(b2, sizeof b2, m->rank, want));
  }
  /* lets in order, each dense over its axes */
  for (int l = 0; l < r->nlets && st == PB_OK; l++) {
    const rexpr *e = r->lets[l].e;
    int64_t sh[PB_RG_MAXAX];
    if (e->nax > TINY_MAX_RANK) {
      st = fail(why, nwhy, PB_ERR_UNSUPPORTED, "let %s over %d axes", r->lets[l].name, e->nax);
      break;
    }
    for (int i = 0; i < e->nax; i++) {
      if (e->ax[i] < 0 || e->ax[i] >= nax) {
        st = fail(why, nwhy, PB_ERR_UNSUPPORTED, "let %s varies over an unknown axis", r->lets[l].name);
        break;
      }
      sh[i] = E.size[e->ax[i]];
    }
    if (st != PB_OK) break;
    if ((st = pb_tensor_alloc(&E.lets[l], e->nax, sh)) != PB_OK) {
      fail(why, nwhy, st, "cannot allocate let %s", r->lets[l].name);
      break;
    }
    E.cur = l;
    int64_t env[PB_RG_MAXAX] = {0}, idx[TINY_MAX_RANK] = {0};
    pb_tensor *t = &E.lets[l];
    for (int64_t f = 0; f < t->n && E.st == PB_OK; f++, next_index(e->nax, sh, idx)) {
      for (int i = 0; i < e->nax; i++) env[e->ax[i]] = idx[i];
      t->data[f] = rg_eval(&E, e, env, 0);
    }
    if (E.st != PB_OK) {
      st = E.st;
      size_t n = strlen(why);
      snprintf(why + n, nwhy - n, " (in let %s)", r->lets[l].name);
    }
  }
  /* yields, with their cast */
  for (int y = 0; y < r->nyields && st == PB_OK; y++) {
    const region_yield *yi = &r->yields[y];
    if (yi->let < 0 || yi->let >= r->nlets || yi->output < 0 || yi->output >= r->nout) {
      st = fail(why, nwhy, PB_ERR_UNSUPPORTED, "yield %d out of range", y);
      break;
    }
    const region_memref *m = &r->out[yi->output];
    const pb_tensor *lt = &E.lets[yi->let];
    int64_t want[TINY_MAX_RANK];
    char b1[96], b2[96];
    if (m->rank > TINY_MAX_RANK) st = fail(why, nwhy, PB_ERR_UNSUPPORTED, "rank %d", m->rank);
    else if ((st = pb_shape_eval(b, m->rank, m->shape, want, why, nwhy)) != PB_OK) break;
    else if (!same_shape(lt->rank, lt->shape, m->rank, want))
      st = fail(why, nwhy, PB_ERR_SHAPE, "yield of %s %s into %s %s", r->lets[yi->let].name,
                shape_text(b1, sizeof b1, lt->rank, lt->shape), m->name, shape_text(b2, sizeof b2, m->rank, want));
    if (st != PB_OK) break;
    pb_tensor t;
    if ((st = pb_tensor_alloc(&t, m->rank, want)) != PB_OK) {
      fail(why, nwhy, st, "cannot allocate %s", m->name);
      break;
    }
    for (int64_t f = 0; f < t.n; f++) t.data[f] = dtype_round(yi->cast, lt->data[f]);
    if (m->signature) {
      res->out[res->nout] = t;
      res->out_name[res->nout++] = m->name;
    } else {
      vals[*nvals] = (rg_value){m->entry, m->name, t};
      (*nvals)++;
    }
  }
done:
  for (int l = 0; E.lets && l < r->nlets; l++) pb_tensor_free(&E.lets[l]);
  free(E.lets);
  free(E.in);
  free(E.size);
  free(E.names);
  return st;
}

pb_status pb_eval_regions(const region_set *rs, const pb_binding *b, int nin, const char *const *in_names,
                          const pb_tensor *inputs, pb_result *res) {
  memset(res, 0, sizeof *res);
  res->failed_node = -1;
  int nouts = 0;
  for (int i = 0; i < rs->n; i++) nouts += rs->r[i].nyields;
  res->out = calloc((size_t)nouts + 1, sizeof(pb_tensor));
  res->out_name = calloc((size_t)nouts + 1, sizeof(const char *));
  rg_value *vals = calloc((size_t)nouts + 1, sizeof(rg_value));
  if (!res->out || !res->out_name || !vals) {
    free(vals);
    return fail(res->why, sizeof res->why, PB_ERR_TOO_LARGE, "out of memory");
  }
  int nvals = 0;
  pb_status st = PB_OK;
  for (int i = 0; i < rs->n && st == PB_OK; i++) {
    st = rg_region(&rs->r[i], b, nin, in_names, inputs, vals, &nvals, res);
    if (st != PB_OK) {
      res->failed_node = i;
      size_t n = strlen(res->why);
      snprintf(res->why + n, sizeof res->why - n, " (region %s)", rs->r[i].name);
    }
  }
  for (int k = 0; k < nvals; k++) pb_tensor_free(&vals[k].t);
  free(vals);
  return st;
}
