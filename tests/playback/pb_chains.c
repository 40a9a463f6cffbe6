/* Random chains of movement UOps (RESHAPE, PERMUTE, EXPAND, PAD, SHRINK
 * with steps, FLIP, and mixes), built with the tiny builders, each checked
 * three ways against a dense step-by-step reference written here:
 *   (a) pb_eval_tiny, node by node;
 *   (b) pb_eval_view through the IndexBook (ib_build on the DAG), whose
 *       composed AxisMaps, pad guards and reshape floordivs must reproduce
 *       every intermediate value exactly;
 *   (c) tiny_verify and ib_build accept the DAG.
 * Plus symbolic-shape chains (M, N) bound only at evaluation time.
 *
 *   pb_chains random [COUNT]    fixed-seed random chains (default 700)
 *   pb_chains symbolic          the symbolic chains under several bindings
 *   pb_chains dump FILE [COUNT] both, checked as above, and each chain written
 *                               to FILE as one JSON line for the tinygrad
 *                               oracle (tests/oracle): its ops with concrete
 *                               arguments, its input, playback's output, and
 *                               the movement UOps of its Tiny DAG */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "indexbook.h"
#include "pbtest.h"
#include "playback.h"
#include "tiny.h"

#define MAXR 8
#define MAX_OPS 8
#define MAX_ELEMS 4096

typedef enum { C_RESHAPE, C_PERMUTE, C_EXPAND, C_PAD, C_SHRINK, C_FLIP, C__N } ckind;
static const char *const kind_name[] = {"reshape", "permute", "expand", "pad", "shrink", "flip", "mixed"};

typedef struct cop {
  ckind k;
  int rank;              /* RESHAPE, EXPAND: the result rank */
  const sx *shape[MAXR]; /* RESHAPE, EXPAND */
  int perm[MAXR];
  const sx *lo[MAXR], *hi[MAXR]; /* PAD amounts, SHRINK bounds */
  int64_t step[MAXR];
  bool flip[MAXR];
  double val;            /* PAD value */
} cop;

/* ---- the dense reference ---------------------------------------------------------- */

typedef struct dense {
  int rank;
  int64_t shape[MAXR];
  int64_t n;
  double *d;
} dense;

typedef struct dims {
  int n;
  const char *name[4];
  int64_t val[4];
} dims;

static bool dims_fn(void *ctx, sx_atom_kind kind, const char *name, int64_t *v) {
  const dims *d = ctx;
  (void)kind;
  for (int i = 0; i < d->n; i++)
    if (strcmp(d->name[i], name) == 0) return *v = d->val[i], true;
  return false;
}

static int64_t ev(const sx *x, const dims *dm) {
  int64_t v = -1;
  if (!sx_eval(x, dims_fn, (void *)dm, &v)) {
    fprintf(stderr, "cannot evaluate a chain argument\n");
    exit(2);
  }
  return v;
}

static void d_alloc(dense *t, int rank, const int64_t *shape) {
  t->rank = rank;
  t->n = 1;
  for (int i = 0; i < rank; i++) t->shape[i] = shape[i], t->n *= shape[i];
  t->d = calloc((size_t)(t->n ? t->n : 1), sizeof(double));
  if (!t->d) exit(3);
}

static int64_t d_ravel(const dense *t, const int64_t *idx) {
  int64_t f = 0;
  for (int k = 0; k < t->rank; k++) f = f * t->shape[k] + idx[k];
  return f;
}

static void d_unravel(const dense *t, int64_t f, int64_t *idx) {
  for (int k = t->rank - 1; k >= 0; k--) {
    idx[k] = f % t->shape[k];
    f /= t->shape[k];
  }
}

/* out = op(x), by each op's definition */
static void d_apply(const dense *x, const cop *op, const dims *dm, dense *out) {
  int64_t shape[MAXR], lo[MAXR] = {0}, hi[MAXR] = {0}, oi[MAXR], xi[MAXR];
  int rank = x->rank;
  switch (op->k) {
  case C_RESHAPE:
  case C_EXPAND:
    rank = op->rank;
    for (int i = 0; i < rank; i++) shape[i] = ev(op->shape[i], dm);
    break;
  case C_PERMUTE:
    for (int i = 0; i < rank; i++) shape[i] = x->shape[op->perm[i]];
    break;
  case C_PAD:
    for (int i = 0; i < rank; i++) {
      lo[i] = ev(op->lo[i], dm), hi[i] = ev(op->hi[i], dm);
      shape[i] = x->shape[i] + lo[i] + hi[i];
    }
    break;
  case C_SHRINK:
    for (int i = 0; i < rank; i++) {
      lo[i] = ev(op->lo[i], dm), hi[i] = ev(op->hi[i], dm);
      shape[i] = (hi[i] - lo[i] + op->step[i] - 1) / op->step[i];
    }
    break;
  case C_FLIP:
  case C__N:
    for (int i = 0; i < rank; i++) shape[i] = x->shape[i];
    break;
  }
  d_alloc(out, rank, shape);
  for (int64_t f = 0; f < out->n; f++) {
    d_unravel(out, f, oi);
    bool pad = false;
    switch (op->k) {
    case C_RESHAPE: out->d[f] = x->d[f]; continue; /* row-major: same flat order */
    case C_EXPAND:
      for (int i = 0; i < rank; i++) xi[i] = x->shape[i] == 1 ? 0 : oi[i];
      break;
    case C_PERMUTE:
      for (int i = 0; i < rank; i++) xi[op->perm[i]] = oi[i];
      break;
    case C_PAD:
      for (int i = 0; i < rank; i++) {
        xi[i] = oi[i] - lo[i];
        if (xi[i] < 0 || xi[i] >= x->shape[i]) pad = true;
      }
      break;
    case C_SHRINK:
      for (int i = 0; i < rank; i++) xi[i] = lo[i] + oi[i] * op->step[i];
      break;
    case C_FLIP:
    case C__N:
      for (int i = 0; i < rank; i++) xi[i] = op->flip[i] ? x->shape[i] - 1 - oi[i] : oi[i];
      break;
    }
    out->d[f] = pad ? op->val : x->d[d_ravel(x, xi)];
  }
}

/* ---- building the DAG -------------------------------------------------------------- */

static int build(tiny_dag *d, int x, const cop *op, diag_list *dl) {
  switch (op->k) {
  case C_RESHAPE: return tiny_reshape(d, x, op->rank, op->shape, dl, "chain");
  case C_PERMUTE: return tiny_permute(d, x, op->perm, dl, "chain");
  case C_EXPAND: return tiny_expand(d, x, op->rank, op->shape, dl, "chain");
  case C_PAD: {
    int r = tiny_pad(d, x, op->lo, op->hi, dl, "chain");
    if (r >= 0) d->u[r].cval = op->val;
    return r;
  }
  case C_SHRINK: return tiny_shrink(d, x, op->lo, op->hi, op->step, dl, "chain");
  case C_FLIP: return tiny_flip(d, x, op->flip, dl, "chain");
  case C__N: break;
  }
  return -1;
}

/* pb_chains dump: where the chains go, else NULL */
static FILE *dump_file;

static cJSON *ints(int n, const int64_t *v) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
  return a;
}

/* One line: {"label", "shape", "ops": [{"op", ...}], "input", "output",
 * "output_shape", "tiny": [{"op", "shape", "arg"}]} with every size concrete;
 * "arg" is a PERMUTE's perm or a FLIP's flags. */
static void dump_chain(const char *label, const dense *ref, const cop *ops, int nops, const dims *dm,
                       const tiny_dag *d, const pb_result *res) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "label", label);
  cJSON_AddItemToObject(o, "shape", ints(ref[0].rank, ref[0].shape));
  cJSON *jops = cJSON_AddArrayToObject(o, "ops");
  for (int i = 0; i < nops; i++) {
    const cop *op = &ops[i];
    const dense *x = &ref[i];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "op", kind_name[op->k]);
    int64_t v[MAXR], w[MAXR];
    switch (op->k) {
    case C_RESHAPE:
    case C_EXPAND:
      for (int k = 0; k < op->rank; k++) v[k] = ev(op->shape[k], dm);
      cJSON_AddItemToObject(j, "shape", ints(op->rank, v));
      break;
    case C_PERMUTE:
      for (int k = 0; k < x->rank; k++) v[k] = op->perm[k];
      cJSON_AddItemToObject(j, "perm", ints(x->rank, v));
      break;
    case C_PAD:
    case C_SHRINK:
      for (int k = 0; k < x->rank; k++) v[k] = ev(op->lo[k], dm), w[k] = ev(op->hi[k], dm);
      cJSON_AddItemToObject(j, "lo", ints(x->rank, v));
      cJSON_AddItemToObject(j, "hi", ints(x->rank, w));
      if (op->k == C_PAD) cJSON_AddNumberToObject(j, "value", op->val);
      else cJSON_AddItemToObject(j, "step", ints(x->rank, op->step));
      break;
    case C_FLIP:
      for (int k = 0; k < x->rank; k++) v[k] = op->flip[k];
      cJSON_AddItemToObject(j, "flip", ints(x->rank, v));
      break;
    case C__N: break;
    }
    cJSON_AddItemToArray(jops, j);
  }
  cJSON_AddItemToObject(o, "input", cJSON_CreateDoubleArray(ref[0].d, (int)ref[0].n));
  cJSON_AddItemToObject(o, "output", cJSON_CreateDoubleArray(res->out[0].data, (int)res->out[0].n));
  cJSON_AddItemToObject(o, "output_shape", ints(res->out[0].rank, res->out[0].shape));
  cJSON *tiny = cJSON_AddArrayToObject(o, "tiny");
  for (int u = 0; u < d->n; u++) {
    if (tiny_op_kind(d->u[u].op) != TK_MOVE) continue;
    cJSON *j = cJSON_CreateObject();
    const tiny_uop *t = &d->u[u];
    cJSON_AddStringToObject(j, "op", tiny_op_name(t->op));
    cJSON_AddItemToObject(j, "shape", ints(res->vals[u].rank, res->vals[u].shape));
    int64_t a[TINY_MAX_RANK];
    if (t->op == TINY_PERMUTE || t->op == TINY_FLIP) {
      for (int k = 0; k < t->rank; k++) a[k] = t->op == TINY_PERMUTE ? t->perm[k] : t->flip[k];
      cJSON_AddItemToObject(j, "arg", ints(t->rank, a));
    }
    cJSON_AddItemToArray(tiny, j);
  }
  char *txt = cJSON_PrintUnformatted(o);
  if (txt) fprintf(dump_file, "%s\n", txt);
  free(txt);
  cJSON_Delete(o);
}

typedef struct stats {
  int chains, steps, views, non_scop, ops[C__N];
} stats;

/* Builds and checks one chain from input shape `shape0` (sx) under `dm`. */
static bool check_chain(const char *label, int rank0, const sx *const *shape0, const cop *ops, int nops,
                        const dims *dm, uint64_t seed, stats *S) {
  int fails0 = pbt_failures;
  arena A;
  arena_init(&A);
  diag_list dl;
  diag_init(&dl);
  tiny_dag *d = tiny_new(&A, NULL);
  int node[MAX_OPS + 1];
  dense ref[MAX_OPS + 1] = {0};
  pb_binding pb = {0};
  for (int i = 0; i < dm->n; i++) pb_bind(&pb, dm->name[i], dm->val[i]);
  node[0] = tiny_buffer(d, "X", DT_FP32, rank0, shape0);
  int64_t s0[MAXR];
  for (int i = 0; i < rank0; i++) s0[i] = ev(shape0[i], dm);
  d_alloc(&ref[0], rank0, s0);
  pbt_rng rng = {seed};
  for (int64_t f = 0; f < ref[0].n; f++) ref[0].d[f] = (double)(float)pbt_uniform(&rng, -4, 4);
  pb_result res = {0};
  bool built = true;
  for (int i = 0; i < nops && built; i++) {
    node[i + 1] = build(d, node[i], &ops[i], &dl);
    built = node[i + 1] >= 0;
    if (built) d_apply(&ref[i], &ops[i], dm, &ref[i + 1]);
  }
  if (!built) {
    diag_print_text(&dl, label);
    PBT_CHECK(0, "%s: a builder rejected the chain", label);
    goto out;
  }
  tiny_store(d, node[nops], "Y");
  PBT_CHECK(tiny_verify(d, &dl), "%s: tiny_verify rejects the chain", label);

  /* (a) playback, node by node */
  pb_tensor in;
  if (pb_tensor_alloc(&in, rank0, s0) != PB_OK) exit(3);
  memcpy(in.data, ref[0].d, sizeof(double) * (size_t)ref[0].n);
  pb_status st = pb_eval_tiny(d, &pb, 1, &in, true, &res);
  pb_tensor_free(&in);
  PBT_CHECK(st == PB_OK, "%s: playback: %s: %s", label, pb_status_name(st), res.why);
  if (st != PB_OK) goto out;
  for (int i = 0; i <= nops; i++) {
    const pb_tensor *v = &res.vals[node[i]];
    bool same = v->rank == ref[i].rank && v->n == ref[i].n;
    for (int k = 0; same && k < v->rank; k++) same = v->shape[k] == ref[i].shape[k];
    PBT_CHECK(same && pbt_same(d->u[node[i]].out, v->data, ref[i].d, v->n), "%s: step %d (%s) differs from the reference",
              label, i, tiny_op_name(d->u[node[i]].op));
  }
  PBT_CHECK(res.nout == 1 && res.out[0].n == ref[nops].n && pbt_same("Y", res.out[0].data, ref[nops].d, ref[nops].n),
            "%s: STORE output differs", label);
  if (dump_file && res.nout == 1) dump_chain(label, ref, ops, nops, dm, d, &res);

  /* (b) the same values through the IndexBook */
  indexbook *ib = ib_build(&A, d, &dl);
  if (!ib) {
    diag_print_text(&dl, label);
    PBT_CHECK(0, "%s: ib_build rejects the chain", label);
    goto out;
  }
  for (int i = 1; i <= nops + 1; i++) {
    int ui = i <= nops ? node[i] : d->n - 1; /* the last: the STORE */
    const dense *want = &ref[i <= nops ? i : nops];
    int e = ib->of_uop[ui];
    pb_tensor v;
    char why[256] = "";
    st = pb_eval_view(ib, e, &pb, res.vals, &v, why, sizeof why);
    PBT_CHECK(st == PB_OK, "%s: view of step %d: %s: %s", label, i, pb_status_name(st), why);
    if (st != PB_OK) continue;
    bool same = v.n == want->n && v.rank == want->rank;
    PBT_CHECK(same && pbt_same(ib->e[e].value, v.data, want->d, v.n),
              "%s: IndexBook view of step %d (%s%s) differs from the reference", label, i, tiny_op_name(d->u[ui].op),
              ib->e[e].non_scop ? ", non_scop" : "");
    S->views++;
    S->non_scop += ib->e[e].non_scop;
    pb_tensor_free(&v);
  }
out:
  if (pbt_failures != fails0) {
    fprintf(stderr, "  chain %s:", label);
    for (int i = 0; i < nops; i++) fprintf(stderr, " %s", kind_name[ops[i].k]);
    fprintf(stderr, "\n");
    cJSON *j = tiny_dump(d);
    char *txt = cJSON_PrintUnformatted(j);
    fprintf(stderr, "  %s\n", txt);
    free(txt);
    cJSON_Delete(j);
  }
  S->chains++;
  S->steps += nops;
  for (int i = 0; i < nops; i++) S->ops[ops[i].k]++;
  pb_result_free(&res);
  for (int i = 0; i <= nops; i++) free(ref[i].d);
  diag_free(&dl);
  arena_free(&A);
  return pbt_failures == fails0;
}

/* ---- random chains ------------------------------------------------------------------- */

static int64_t prod(int r, const int64_t *s) {
  int64_t n = 1;
  for (int i = 0; i < r; i++) n *= s[i];
  return n;
}

/* A random op of kind k on shape (r, s); false when it does not apply.  The
 * concrete result shape goes to (r2, s2). */
static bool random_op(arena *A, pbt_rng *g, ckind k, int r, const int64_t *s, cop *op, int *r2, int64_t *s2) {
  static const double pads[] = {0.0, 0.0, 1.0, -1.5, 2.25};
  memset(op, 0, sizeof *op);
  op->k = k;
  *r2 = r;
  memcpy(s2, s, sizeof(int64_t) * (size_t)r);
  switch (k) {
  case C_RESHAPE: {
    /* distribute the prime factors of n over 1..4 axes, plus size-1 axes */
    int64_t n = prod(r, s), f[64];
    int nf = 0;
    for (int64_t p = 2, m = n; m > 1;)
      if (m % p == 0) f[nf++] = p, m /= p;
      else p++;
    int nr = pbt_int(g, 1, 4);
    for (int i = 0; i < nr; i++) s2[i] = 1;
    for (int i = 0; i < nf; i++) s2[pbt_int(g, 0, nr - 1)] *= f[i];
    *r2 = nr;
    op->rank = nr;
    for (int i = 0; i < nr; i++) op->shape[i] = sx_int(A, s2[i]);
    return true;
  }
  case C_PERMUTE:
    for (int i = 0; i < r; i++) op->perm[i] = i;
    for (int i = r - 1; i > 0; i--) {
      int j = pbt_int(g, 0, i), t = op->perm[i];
      op->perm[i] = op->perm[j], op->perm[j] = t;
    }
    for (int i = 0; i < r; i++) s2[i] = s[op->perm[i]];
    return r > 1;
  case C_EXPAND: {
    bool any = false;
    for (int i = 0; i < r; i++)
      if (s[i] == 1 && (pbt_next(g) & 1)) s2[i] = pbt_int(g, 2, 4), any = true;
    op->rank = r;
    for (int i = 0; i < r; i++) op->shape[i] = sx_int(A, s2[i]);
    return any && prod(r, s2) <= MAX_ELEMS;
  }
  case C_PAD: {
    bool any = false;
    for (int i = 0; i < r; i++) {
      int64_t lo = pbt_int(g, 0, 2), hi = pbt_int(g, 0, 2);
      if (pbt_int(g, 0, 2) == 0) lo = hi = 0;
      op->lo[i] = sx_int(A, lo), op->hi[i] = sx_int(A, hi);
      s2[i] = s[i] + lo + hi;
      any |= lo || hi;
    }
    op->val = pads[pbt_int(g, 0, 4)];
    return any && prod(r, s2) <= MAX_ELEMS;
  }
  case C_SHRINK: {
    bool any = false;
    for (int i = 0; i < r; i++) {
      int64_t lo = pbt_int(g, 0, (int)s[i] - 1), hi = pbt_int(g, (int)lo + 1, (int)s[i]), st = pbt_int(g, 1, 3);
      if (pbt_int(g, 0, 3) == 0) lo = 0, hi = s[i], st = 1;
      op->lo[i] = sx_int(A, lo), op->hi[i] = sx_int(A, hi), op->step[i] = st;
      s2[i] = (hi - lo + st - 1) / st;
      any |= s2[i] != s[i] || st != 1 || lo != 0;
    }
    return any;
  }
  case C_FLIP: {
    bool any = false;
    for (int i = 0; i < r; i++) any |= op->flip[i] = pbt_next(g) & 1;
    return any;
  }
  case C__N: break;
  }
  return false;
}

/* A reshape that inserts a size-1 axis, so that EXPAND has one to widen. */
static void insert_one(arena *A, pbt_rng *g, int r, const int64_t *s, cop *op, int *r2, int64_t *s2) {
  memset(op, 0, sizeof *op);
  op->k = C_RESHAPE;
  int at = pbt_int(g, 0, r);
  for (int i = 0, j = 0; i <= r; i++) s2[i] = i == at ? 1 : s[j++];
  *r2 = r + 1;
  op->rank = r + 1;
  for (int i = 0; i <= r; i++) op->shape[i] = sx_int(A, s2[i]);
}

static int run_random(int count) {
  stats S = {0};
  dims none = {0};
  for (int c = 0; c < count; c++) {
    arena A;
    arena_init(&A);
    pbt_rng g = {0x5eed0000ull + (uint64_t)c};
    int cat = c % (C__N + 1); /* one kind repeated, or mixed */
    int r = pbt_int(&g, 1, 4);
    int64_t s[MAXR];
    for (int i = 0; i < r; i++) s[i] = pbt_int(&g, 1, 6);
    const sx *shape0[MAXR];
    for (int i = 0; i < r; i++) shape0[i] = sx_int(&A, s[i]);
    int r0 = r;
    cop ops[MAX_OPS];
    int nops = 0, want = pbt_int(&g, 1, cat == C__N ? 6 : 3);
    for (int tries = 0; nops < want && tries < 50; tries++) {
      ckind k = cat == C__N ? (ckind)pbt_int(&g, 0, C__N - 1) : (ckind)cat;
      int r2;
      int64_t s2[MAXR];
      if (k == C_EXPAND && nops + 1 < MAX_OPS && r < 5) {
        bool has1 = false;
        for (int i = 0; i < r; i++) has1 |= s[i] == 1;
        if (!has1) {
          insert_one(&A, &g, r, s, &ops[nops++], &r2, s2);
          r = r2;
          memcpy(s, s2, sizeof s2);
        }
      }
      if (!random_op(&A, &g, k, r, s, &ops[nops], &r2, s2)) continue;
      nops++;
      r = r2;
      memcpy(s, s2, sizeof s2);
    }
    if (nops == 0) { /* e.g. permute of rank 1: flip instead */
      int r2;
      int64_t s2[MAXR];
      while (!random_op(&A, &g, C_FLIP, r, s, &ops[0], &r2, s2)) {
      }
      nops = 1;
    }
    char label[64];
    snprintf(label, sizeof label, "random#%d(%s)", c, kind_name[cat]);
    check_chain(label, r0, shape0, ops, nops, &none, 0xda7a0000ull + (uint64_t)c, &S);
    arena_free(&A);
  }
  printf("%d random movement chains checked (%d ops: reshape %d, permute %d, expand %d, pad %d, shrink %d, flip %d); "
         "%d IndexBook views equal to the reference (%d of them non_scop); %s\n",
         S.chains, S.steps, S.ops[C_RESHAPE], S.ops[C_PERMUTE], S.ops[C_EXPAND], S.ops[C_PAD], S.ops[C_SHRINK],
         S.ops[C_FLIP], S.views, S.non_scop, pbt_failures ? "FAILED" : "ok");
  return pbt_failures ? 1 : 0;
}

/* ---- symbolic chains -------------------------------------------------------------------- */

/* "X[M,N] | permute 1,0 | pad 1:2,0:1 @0.5 | flip 1,0 | shrink 1:N+3:2,0:M+1:1
 *  | reshape M*N | expand M,N" */
static const char *const symbolic[] = {
    "X[M,N] | permute 1,0 | pad 1:2,0:1 @0.5 | flip 1,0 | shrink 1:N+3:2,0:M+1:1",
    "X[M,4] | reshape M,2,2 | permute 1,0,2 | reshape 2,2*M | flip 0,1 | shrink 0:2:1,1:2*M:3",
    "X[1,N] | expand M,N | pad 0:1,2:0 @-1 | shrink 0:M+1:2,1:N+2:1 | permute 1,0",
    "X[M,N] | reshape M*N | pad 2:1 @0 | shrink 1:M*N+3:3 | flip 1",
    "X[M,3] | pad 1:1,0:0 @2 | reshape 3*M+6 | shrink 3:3*M+6:1 | reshape M+1,3 | flip 1,0",
    "X[M,N,2] | permute 2,0,1 | reshape 2*M,N | pad 0:0,1:1 @1 | flip 1,1",
    "X[N] | reshape 1,N,1 | expand M,N,3 | shrink 0:M:1,0:N:2,1:3:1 | permute 2,0,1",
    "X[M,N] | pad 0:0,1:0 @0.25 | reshape M*N+M | reshape M,N+1 | permute 1,0",
};
static const int64_t bindings[][2] = {{1, 1}, {2, 3}, {5, 4}, {3, 7}};

static const sx *psx(arena *A, const char *s, size_t n) {
  static const char *const params[] = {"M", "N", NULL};
  const sx *e = sx_parse(A, arena_strndup(A, s, n), params);
  if (!e) {
    fprintf(stderr, "bad expression '%.*s'\n", (int)n, s);
    exit(2);
  }
  return e;
}

/* Splits "a,b,c" into up to MAXR items; each item split on ':' into parts. */
static int items(const char *s, const char *end, const char *it[MAXR][3], size_t len[MAXR][3]) {
  int n = 0;
  while (s < end && n < MAXR) {
    const char *e = s;
    while (e < end && *e != ',') e++;
    int p = 0;
    for (const char *q = s; p < 3;) {
      const char *c = q;
      while (c < e && *c != ':') c++;
      it[n][p] = q, len[n][p] = (size_t)(c - q);
      p++;
      if (c >= e) break;
      q = c + 1;
    }
    for (; p < 3; p++) it[n][p] = NULL, len[n][p] = 0;
    n++;
    s = e + 1;
  }
  return n;
}

static void parse_chain(arena *A, const char *text, int *rank0, const sx **shape0, cop *ops, int *nops) {
  const char *it[MAXR][3];
  size_t len[MAXR][3];
  const char *p = strchr(text, '['), *q = strchr(text, ']');
  *rank0 = items(p + 1, q, it, len);
  for (int i = 0; i < *rank0; i++) shape0[i] = psx(A, it[i][0], len[i][0]);
  *nops = 0;
  for (const char *s = strchr(q, '|'); s; s = strchr(s + 1, '|')) {
    const char *b = s + 1;
    while (*b == ' ') b++;
    const char *w = b;
    while (*w != ' ') w++;
    const char *args = w + 1, *end = strchr(args, '|');
    if (!end) end = args + strlen(args);
    while (end > args && end[-1] == ' ') end--;
    const char *at = memchr(args, '@', (size_t)(end - args));
    cop *op = &ops[(*nops)++];
    memset(op, 0, sizeof *op);
    if (at) op->val = strtod(at + 1, NULL);
    int n = items(args, at ? at - 1 : end, it, len);
    size_t wl = (size_t)(w - b);
    for (int k = 0; k < C__N; k++)
      if (strlen(kind_name[k]) == wl && strncmp(kind_name[k], b, wl) == 0) op->k = (ckind)k;
    op->rank = n;
    for (int i = 0; i < n; i++) switch (op->k) {
      case C_RESHAPE:
      case C_EXPAND: op->shape[i] = psx(A, it[i][0], len[i][0]); break;
      case C_PERMUTE: op->perm[i] = atoi(it[i][0]); break;
      case C_FLIP: op->flip[i] = atoi(it[i][0]) != 0; break;
      case C_PAD:
      case C_SHRINK:
        op->lo[i] = psx(A, it[i][0], len[i][0]);
        op->hi[i] = psx(A, it[i][1], len[i][1]);
        op->step[i] = it[i][2] ? atoi(it[i][2]) : 1;
        break;
      case C__N: break;
      }
  }
}

static int run_symbolic(void) {
  stats S = {0};
  for (size_t c = 0; c < sizeof symbolic / sizeof symbolic[0]; c++)
    for (size_t b = 0; b < sizeof bindings / sizeof bindings[0]; b++) {
      arena A;
      arena_init(&A);
      int r0, nops;
      const sx *shape0[MAXR];
      cop ops[MAX_OPS];
      parse_chain(&A, symbolic[c], &r0, shape0, ops, &nops);
      dims dm = {2, {"M", "N"}, {bindings[b][0], bindings[b][1]}};
      char label[64];
      snprintf(label, sizeof label, "symbolic#%zu M=%lld N=%lld", c, (long long)dm.val[0], (long long)dm.val[1]);
      check_chain(label, r0, shape0, ops, nops, &dm, 0x51b0000ull + c * 16 + b, &S);
      arena_free(&A);
    }
  printf("%d symbolic-shape chain evaluations (%zu chains x %zu bindings of M, N); %d IndexBook views equal to the "
         "reference; %s\n",
         S.chains, sizeof symbolic / sizeof symbolic[0], sizeof bindings / sizeof bindings[0], S.views,
         pbt_failures ? "FAILED" : "ok");
  return pbt_failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "random") == 0) return run_random(argc >= 3 ? atoi(argv[2]) : 700);
  if (argc >= 2 && strcmp(argv[1], "symbolic") == 0) return run_symbolic();
  if (argc >= 3 && strcmp(argv[1], "dump") == 0) {
    dump_file = fopen(argv[2], "w");
    if (!dump_file) {
      perror(argv[2]);
      return 2;
    }
    int rc = run_random(argc >= 4 ? atoi(argv[3]) : 700);
    rc |= run_symbolic();
    if (fclose(dump_file) != 0) rc = 2;
    return rc;
  }
  fprintf(stderr, "usage: pb_chains random [COUNT] | symbolic | dump FILE [COUNT]\n");
  return 2;
}
