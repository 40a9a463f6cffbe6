/* Layout re-optimization (seed 004; layout.h has the passes, docs/layout.md
 * the model).  The stage sits between the frontend and Tiny IR and works on
 * the Frontend graph: the analysis (A0-A2) on fe_graph, the decision (T1,
 * T2) on small dense matrices, and the rewrite (T3) on a copy of the graph
 * JSON, which V1 reads back through the frontend to check it.
 *
 * The co-access graph of a stored tensor has one node per axis and one
 * "lane" node: the position after the innermost axis, where the vectorized
 * copy runs.  An axis's weight to the lane says how much a consumer gains
 * from having it innermost: a contraction (K) axis most, an M, N or
 * elementwise axis a little, a compound window index (Conv2D's h+r, w+s)
 * or an outer K index (a conv filter's axis whose activation counterpart is
 * not the activation's innermost) nothing, since it cannot be copied in
 * chunks (W2104).  Axes that one loop
 * role iterates together (the M axes, the K axes) co-access each other, and
 * a Reshape reads its input row-major, so its consecutive axes co-access
 * strongly.  The stored order adds a weak prior on its neighbours. */
#define _POSIX_C_SOURCE 200809L
#include "layout.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonutil.h"

/* ---- options ----------------------------------------------------------------------- */

void layout_opts_default(layout_opts *o) {
  *o = (layout_opts){0};
  o->enabled = true;
  o->time_budget_s = 300;
  o->refine_steps = 2000;
  o->epsilon = 0.05;
  o->align = 32;
  o->fuse_transpose = true;
  o->strict = true;
}

static const char *const layout_keys[] = {"enabled", "source",  "trace",          "time_budget_s", "refine_steps",
                                          "epsilon", "align",   "fuse_transpose", "strict",        "seed",
                                          NULL};

/* A trace: {"tensors": {"NAME": [[i, j, w], ...]}}; checked when merged. */
static bool trace_shape_ok(const cJSON *tr) {
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(tr, "tensors");
  return cJSON_IsObject(tr) && cJSON_IsObject(ts);
}

cJSON *layout_read_trace(const char *path, diag_list *dl) {
  char *text = ju_read_file(path, dl, path);
  if (!text) return NULL;
  cJSON *j = ju_parse(text, dl, path);
  free(text);
  if (j && !trace_shape_ok(j)) {
    diag_report(dl, D_LAYOUT_TRACE, path, NULL, "the trace is not an object with a \"tensors\" object");
    cJSON_Delete(j);
    return NULL;
  }
  return j;
}

bool layout_opts_read(arena *A, const cJSON *obj, const char *at, const char *base_dir, layout_opts *o,
                      cJSON **trace_owned, diag_list *dl) {
  ju_ctx c = {A, dl, D_MANIFEST_SCHEMA, D_MANIFEST_UNKNOWN_KEY, at};
  int before = dl->n;
  *trace_owned = NULL;
  if (!cJSON_IsObject(obj)) {
    diag_report(dl, D_MANIFEST_SCHEMA, at, NULL, "expected an object, found %s", ju_type_name(obj));
    return false;
  }
  ju_check_keys(&c, obj, at, layout_keys);
  ju_bool(&c, obj, "enabled", at, false, &o->enabled);
  ju_bool(&c, obj, "fuse_transpose", at, false, &o->fuse_transpose);
  ju_bool(&c, obj, "strict", at, false, &o->strict);
  const char *src;
  if (ju_string(&c, obj, "source", at, false, &src)) {
    if (strcmp(src, "static") == 0) o->trace_only = false;
    else if (strcmp(src, "trace") == 0) o->trace_only = true;
    else diag_report(dl, D_MANIFEST_VALUE, ju_path_key(&c, at, "source"), NULL, "source '%s' is not static or trace", src);
  }
  const cJSON *it;
  int64_t v;
  double d;
  if ((it = cJSON_GetObjectItemCaseSensitive(obj, "refine_steps")) &&
      ju_int_item(&c, it, ju_path_key(&c, at, "refine_steps"), 0, 100000000, &v))
    o->refine_steps = (int)v;
  if ((it = cJSON_GetObjectItemCaseSensitive(obj, "seed")) &&
      ju_int_item(&c, it, ju_path_key(&c, at, "seed"), 0, JU_INT_MAX, &v))
    o->seed = (uint64_t)v;
  if ((it = cJSON_GetObjectItemCaseSensitive(obj, "align")) &&
      ju_int_item(&c, it, ju_path_key(&c, at, "align"), 16, 64, &v)) {
    if (v != 16 && v != 32 && v != 64)
      diag_report(dl, D_MANIFEST_VALUE, ju_path_key(&c, at, "align"), NULL, "align %lld is not 16, 32 or 64", (long long)v);
    o->align = (int)v;
  }
  if ((it = cJSON_GetObjectItemCaseSensitive(obj, "time_budget_s")) &&
      ju_number_item(&c, it, ju_path_key(&c, at, "time_budget_s"), &d)) {
    if (d <= 0 || d > 86400) diag_report(dl, D_BAD_NUMBER, ju_path_key(&c, at, "time_budget_s"), NULL, "time_budget_s %g is not in (0, 86400]", d);
    o->time_budget_s = d;
  }
  if ((it = cJSON_GetObjectItemCaseSensitive(obj, "epsilon")) &&
      ju_number_item(&c, it, ju_path_key(&c, at, "epsilon"), &d)) {
    if (d < 0 || d >= 1) diag_report(dl, D_BAD_NUMBER, ju_path_key(&c, at, "epsilon"), NULL, "epsilon %g is not in [0, 1)", d);
    o->epsilon = d;
  }
  const char *tp;
  if (ju_string(&c, obj, "trace", at, false, &tp)) {
    const char *path = tp[0] == '/' || !base_dir ? tp : arena_printf(A, "%s/%s", base_dir, tp);
    *trace_owned = layout_read_trace(path, dl);
    o->trace = *trace_owned;
    o->trace_where = arena_strdup(A, path);
  } else if (o->trace_only) {
    diag_report(dl, D_MANIFEST_VALUE, ju_path_key(&c, at, "source"), "Add \"trace\": \"FILE\" next to \"source\": \"trace\".",
                "source \"trace\" needs a trace file");
  }
  return dl->n == before || !diag_has_errors(dl);
}

/* ---- A2: cost and modularity ------------------------------------------------------- */

static void positions(int n, const int *order, int *pos) {
  for (int p = 0; p < n; p++) pos[order[p]] = p;
}

double lay_cost(const double *W, int n, const int *order) {
  int pos[64];
  DLC_ASSERT(n <= 64);
  positions(n, order, pos);
  double c = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) c += W[i * n + j] * fabs((double)(pos[i] - pos[j]));
  return c;
}

/* Newman's Q with the communities taken as consecutive blocks of `block`
 * positions of the order. */
double lay_modularity(const double *W, int n, const int *order, int block) {
  int pos[64];
  DLC_ASSERT(n <= 64 && block >= 1);
  positions(n, order, pos);
  double k[64], m2 = 0;
  for (int i = 0; i < n; i++) {
    k[i] = 0;
    for (int j = 0; j < n; j++) k[i] += W[i * n + j];
    m2 += k[i];
  }
  if (m2 <= 0) return 0;
  double q = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (pos[i] / block == pos[j] / block) q += W[i * n + j] - k[i] * k[j] / m2;
  return q / m2;
}

static int inversions(int n, const int *order, const int *ref) {
  int pr[64], po[64], inv = 0;
  positions(n, ref, pr);
  positions(n, order, po);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) inv += (pr[i] < pr[j]) != (po[i] < po[j]);
  return inv;
}

/* ---- T1: Fiedler ordering and refinement ------------------------------------------- */

static void move_last(int n, int *order, int node) {
  int p = 0;
  while (p < n && order[p] != node) p++;
  for (; p + 1 < n; p++) order[p] = order[p + 1];
  order[n - 1] = node;
}

bool lay_fiedler(const double *W, int n, int lane, int *order) {
  for (int i = 0; i < n; i++) order[i] = i;
  bool any = false;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) any |= i != j && W[i * n + j] > 0;
  if (!any || n < 2) return false;
  double *L = calloc((size_t)n * (size_t)n, sizeof(double)), *ev = calloc((size_t)n, sizeof(double));
  if (!L || !ev) dlc_die_oom();
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j) L[i * n + j] = -W[i * n + j], L[i * n + i] += W[i * n + j];
  /* eigenvalues ascending; the eigenvectors overwrite L, column by column */
  lapack_int info = LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', n, L, n, ev);
  bool ok = info == 0;
  if (ok) {
    /* the Fiedler vector, rounded so that ties sort by index on every machine */
    double f[64];
    for (int i = 0; i < n; i++) f[i] = round(L[i * n + 1] * 1e9) / 1e9;
    for (int i = 1; i < n; i++)
      for (int j = i; j > 0 && f[order[j - 1]] > f[order[j]]; j--) {
        int t = order[j];
        order[j] = order[j - 1], order[j - 1] = t;
      }
    /* orient: the lane's end of the line is the inner end */
    if (lane >= 0) {
      int p = 0;
      while (order[p] != lane) p++;
      if (2 * p < n - 1)
        for (int a = 0, b = n - 1; a < b; a++, b--) {
          int t = order[a];
          order[a] = order[b], order[b] = t;
        }
      move_last(n, order, lane);
    }
  }
  free(L);
  free(ev);
  return ok;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Better on (C, inversions against ref): C by more than rounding, or equal C
 * and fewer inversions. */
static bool better(double c, int inv, double bc, int binv) {
  double tol = 1e-12 * (fabs(bc) + 1);
  return c < bc - tol || (c <= bc + tol && inv < binv);
}

static void reverse(int *order, int a, int b) {
  for (; a < b; a++, b--) {
    int t = order[a];
    order[a] = order[b], order[b] = t;
  }
}

int lay_refine(const double *W, int n, int lane, const int *ref, int steps, double budget_s, uint64_t seed,
               int *order, bool *capped) {
  int m = lane >= 0 ? n - 1 : n; /* the lane stays last */
  int used = 0;
  *capped = false;
  double t0 = now_s(), bc = lay_cost(W, n, order);
  int binv = inversions(n, order, ref);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  bool improved = true;
  while (improved && used < steps && !*capped) {
    improved = false;
    /* adjacent swaps first (seed §14) */
    for (int p = 0; p + 1 < m && used < steps; p++, used++) {
      reverse(order, p, p + 1);
      double c = lay_cost(W, n, order);
      int inv = inversions(n, order, ref);
      if (better(c, inv, bc, binv)) bc = c, binv = inv, improved = true;
      else reverse(order, p, p + 1);
    }
    if (improved) continue;
    /* then 2-opt segment reversals, from a seeded start */
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    int start = m > 0 ? (int)(s % (uint64_t)m) : 0;
    for (int k = 0; k < m && used < steps && !improved; k++) {
      int a = (start + k) % m;
      for (int b = a + 2; b < m && used < steps; b++, used++) {
        reverse(order, a, b);
        double c = lay_cost(W, n, order);
        int inv = inversions(n, order, ref);
        if (better(c, inv, bc, binv)) {
          bc = c, binv = inv, improved = true;
          break;
        }
        reverse(order, a, b);
      }
      if ((used & 255) == 0 && now_s() - t0 > budget_s) *capped = true;
    }
    if (now_s() - t0 > budget_s) *capped = true;
  }
  return used;
}

/* ---- A1: the co-access graph ------------------------------------------------------- */

/* How a consumer iterates an operand's axis. */
/* RL_KOUT: a K index that is not the contraction's innermost (a conv
 * filter's axis whose activation counterpart is not the activation's
 * innermost): loaded with it innermost, the operand is copied element by
 * element, like a window axis. */
enum { RL_M = 1, RL_N = 2, RL_K = 4, RL_B = 8, RL_E = 16, RL_WIN = 32, RL_ROWMAJOR = 64, RL_KOUT = 128 };
#define RL_SCALAR (RL_WIN | RL_KOUT) /* innermost, no chunked copies */

/* Weights of the co-access model (docs/layout.md). */
static const double W_SAME_ROLE = 1.0;   /* per role two axes share */
static const double W_ROWMAJOR = 4.0;    /* consecutive axes a Reshape reads */
static const double W_PRIOR = 0.25;      /* neighbours in the stored order */
static double lane_weight(unsigned roles) {
  if (roles & RL_SCALAR) return 0;       /* compound or outer K index: scalar copies */
  if (roles & RL_K) return 4;            /* the streamed contraction axis */
  if (roles & (RL_M | RL_N | RL_E)) return 1;
  return 0;
}

/* Roles of the inputs of one node, by input and axis (right-aligned).
 * order[t] is tensor t's axis order, outermost first: a Conv2D's K loop
 * runs in its activation's order of (c, h, w), and the filter's (c, r, s)
 * must follow it. */
static void node_roles(const fe_graph *g, const fe_node *nd, int *const *order, unsigned roles[3][FE_MAX_RANK]) {
  memset(roles, 0, sizeof(unsigned) * 3 * FE_MAX_RANK);
  int rk[3] = {0};
  for (int i = 0; i < nd->nin && i < 3; i++) {
    dtype dt;
    const sx *const *sh;
    fe_tensor_value(g, nd->in[i], &dt, &rk[i], &sh);
  }
  switch (nd->op) {
  case FE_GEMM:
    for (int i = 0; i < 2; i++)
      for (int a = 0; a < rk[i]; a++) roles[i][a] = RL_B;
    if (rk[0] >= 2) roles[0][rk[0] - 2] = RL_M, roles[0][rk[0] - 1] = RL_K;
    if (rk[1] >= 2) roles[1][rk[1] - 2] = RL_K, roles[1][rk[1] - 1] = RL_N;
    break;
  case FE_CONV2D: {
    /* X: n, then c and the two window axes (h + r, w + s) in its layout's
     * order; Wt: k, then c, r, s in any order, all K */
    bool nchw = g->tensors[nd->in[0]].layout && strcmp(g->tensors[nd->in[0]].layout, "NCHW") == 0;
    bool kcrs = g->tensors[nd->in[1]].layout && strcmp(g->tensors[nd->in[1]].layout, "KCRS") == 0;
    unsigned win = RL_M | RL_K | RL_WIN;
    unsigned x[4] = {RL_M, nchw ? RL_K : win, win, nchw ? win : RL_K};
    if (rk[0] != 4 || rk[1] != 4) break;
    /* (c, h, w) of X and (c, r, s) of Wt, as axes; X's innermost of them
     * is the K loop's innermost, and so Wt's counterpart is */
    int xa[3] = {nchw ? 1 : 3, nchw ? 2 : 1, nchw ? 3 : 2}, wa[3] = {kcrs ? 1 : 3, kcrs ? 2 : 1, kcrs ? 3 : 2};
    int pos[FE_MAX_RANK], inner = 0;
    positions(4, order[nd->in[0]], pos);
    for (int j = 1; j < 3; j++)
      if (pos[xa[j]] > pos[xa[inner]]) inner = j;
    for (int a = 0; a < 4; a++) roles[0][a] = x[a];
    roles[1][0] = RL_N;
    for (int j = 0; j < 3; j++) roles[1][wa[j]] = j == inner ? RL_K : RL_K | RL_KOUT;
    break;
  }
  case FE_ATTENTION:
    for (int i = 0; i < 3; i++)
      for (int a = 0; a + 2 < rk[i]; a++) roles[i][a] = RL_B;
    if (rk[0] >= 2) roles[0][rk[0] - 2] = RL_M, roles[0][rk[0] - 1] = RL_K;
    if (rk[1] >= 2) roles[1][rk[1] - 2] = RL_N, roles[1][rk[1] - 1] = RL_K;
    if (rk[2] >= 2) roles[2][rk[2] - 2] = RL_K, roles[2][rk[2] - 1] = RL_N;
    break;
  case FE_RESHAPE:
    for (int a = 0; a < rk[0]; a++) roles[0][a] = RL_ROWMAJOR;
    break;
  default: /* elementwise, reductions, views: every axis a single index */
    for (int i = 0; i < nd->nin && i < 3; i++)
      for (int a = 0; a < rk[i]; a++) roles[i][a] = RL_E;
  }
}

/* Which axis of input k each output axis of a view or elementwise op
 * reads, or -1 (the output is a fresh value): these carry roles back to
 * their sources. */
static int source_axis(const fe_graph *g, const fe_node *nd, int k, int out_axis) {
  int rin, rout = nd->rrank;
  dtype dt;
  const sx *const *sh;
  fe_tensor_value(g, nd->in[k], &dt, &rin, &sh);
  switch (nd->op) {
  case FE_TRANSPOSE: return (int)nd->attrs.perm[out_axis];
  case FE_CAST:
  case FE_PAD:
  case FE_SLICE:
  case FE_FLIP:
  case FE_ELEMENTWISE:
  case FE_EXPAND: {
    int a = out_axis - (rout - rin);
    return a >= 0 && a < rin ? a : -1;
  }
  default: return -1;
  }
}

/* A1: the roles of every axis of every tensor, from its consumers, carried
 * back through views (reverse topological order). */
static unsigned **axis_roles(arena *A, const fe_graph *g, int *const *order) {
  unsigned **ro = ARENA_ARRAY(A, unsigned *, g->ntensors + 1);
  for (int t = 0; t < g->ntensors; t++) ro[t] = ARENA_ARRAY(A, unsigned, FE_MAX_RANK);
  /* the store of a signature output iterates each of its axes */
  for (int k = 0; k < g->nout; k++)
    for (int a = 0; a < FE_MAX_RANK; a++) ro[g->outputs[k]][a] = RL_E;
  for (int i = g->nnodes - 1; i >= 0; i--) {
    const fe_node *nd = &g->nodes[i];
    unsigned r[3][FE_MAX_RANK];
    node_roles(g, nd, order, r);
    /* views and elementwise ops are fused into their consumer's loop nest:
     * their inputs are read the way their result is */
    bool through = nd->op == FE_TRANSPOSE || nd->op == FE_CAST || nd->op == FE_PAD || nd->op == FE_SLICE ||
                   nd->op == FE_FLIP || nd->op == FE_EXPAND || nd->op == FE_ELEMENTWISE;
    bool view = through && nd->op != FE_ELEMENTWISE; /* reads, computes nothing */
    for (int k = 0; k < nd->nin && k < 3; k++) {
      for (int a = 0; a < FE_MAX_RANK && !view; a++) ro[nd->in[k]][a] |= r[k][a];
      for (int a = 0; through && a < nd->rrank; a++) {
        int s = source_axis(g, nd, k, a);
        if (s >= 0) ro[nd->in[k]][s] |= ro[nd->out[0]][a];
      }
    }
  }
  return ro;
}

static void add_w(double *W, int n, int i, int j, double w) {
  W[i * n + j] += w;
  W[j * n + i] += w;
}

/* Trace entries for tensor `name`: [[i, j, w], ...].  Returns false with
 * E0213 on a malformed entry; *found says whether the tensor is listed. */
static bool merge_trace(const layout_opts *o, const char *name, double *W, int n, bool *found, diag_list *dl) {
  *found = false;
  if (!o->trace) return true;
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(o->trace, "tensors");
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(ts, name);
  if (!e) return true;
  *found = true;
  if (!cJSON_IsArray(e)) {
    diag_report(dl, D_LAYOUT_TRACE, o->trace_where, NULL, "tensors.%s is not a list of [axis_i, axis_j, weight]", name);
    return false;
  }
  int k = 0;
  for (const cJSON *p = e->child; p; p = p->next, k++) {
    const cJSON *a = cJSON_GetArrayItem(p, 0), *b = cJSON_GetArrayItem(p, 1), *w = cJSON_GetArrayItem(p, 2);
    if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 3 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) || !cJSON_IsNumber(w) ||
        a->valuedouble != floor(a->valuedouble) || b->valuedouble != floor(b->valuedouble) || a->valuedouble < 0 ||
        b->valuedouble < 0 || a->valuedouble >= n || b->valuedouble >= n || a->valueint == b->valueint ||
        !isfinite(w->valuedouble) || w->valuedouble < 0 || w->valuedouble > 1e6) {
      diag_report(dl, D_LAYOUT_TRACE, o->trace_where, NULL,
                  "tensors.%s[%d] is not [axis_i, axis_j, weight] with two different axes in [0, %d] (%d is the lane) "
                  "and a weight in [0, 1e6]",
                  name, k, n - 1, n - 1);
      return false;
    }
    add_w(W, n, a->valueint, b->valueint, w->valuedouble);
  }
  return true;
}

/* W of a stored tensor: roles, trace, stored-order prior.  *empty when no
 * co-access was found (the prior alone is not co-access). */
static bool build_w(const layout_opts *o, const fe_tensor *t, const unsigned *roles, double *W, int n, bool *empty,
                    diag_list *dl) {
  int rank = n - 1;
  memset(W, 0, sizeof(double) * (size_t)(n * n));
  if (!o->trace_only) {
    static const unsigned pair_roles[] = {RL_M, RL_N, RL_K, RL_B, RL_E};
    for (int i = 0; i < rank; i++) {
      for (int j = i + 1; j < rank; j++)
        for (size_t r = 0; r < sizeof pair_roles / sizeof *pair_roles; r++)
          if (roles[i] & roles[j] & pair_roles[r]) add_w(W, n, i, j, W_SAME_ROLE);
      if ((roles[i] & RL_ROWMAJOR) && i + 1 < rank) add_w(W, n, i, i + 1, W_ROWMAJOR);
      if ((roles[i] & RL_ROWMAJOR) && i + 1 == rank) add_w(W, n, i, rank, W_ROWMAJOR);
      add_w(W, n, i, rank, lane_weight(roles[i]));
    }
  }
  bool found;
  if (!merge_trace(o, t->name, W, n, &found, dl)) return false;
  *empty = true;
  for (int i = 0; i < n * n; i++) *empty &= W[i] == 0;
  if (*empty) {
    for (int i = 0; i < n; i++) W[i * n + i] = 1; /* W_min: the diagonal */
    return true;
  }
  for (int i = 0; i < rank; i++) add_w(W, n, i, i + 1, W_PRIOR);
  return true;
}

/* ---- the pass --------------------------------------------------------------------- */

typedef struct lay_ctx {
  arena *A;
  const fe_graph *g;
  const layout_opts *o;
  layout_result *r;
  diag_list *dl;
  double t0;
  const char *round;      /* prefixes the events' reasons, or NULL */
} lay_ctx;

static void event(lay_ctx *c, const char *stage, bool improved, const char *reason) {
  layout_result *r = c->r;
  double t = now_s();
  if (c->round) reason = arena_printf(c->A, "%s: %s", c->round, reason);
  if (r->nev < LAY_MAX_EVENTS) r->ev[r->nev++] = (lay_event){stage, (t - c->t0) * 1e3, improved, reason};
  c->t0 = t;
}

static int *iota(arena *A, int n) {
  int *p = ARENA_ARRAY(A, int, n + 1);
  for (int i = 0; i < n; i++) p[i] = i;
  return p;
}

static int *dup_order(arena *A, const int *o, int n) {
  int *p = ARENA_ARRAY(A, int, n + 1);
  memcpy(p, o, sizeof(int) * (size_t)n);
  return p;
}

static bool same_order(const int *a, const int *b, int n) {
  return memcmp(a, b, sizeof(int) * (size_t)n) == 0;
}

/* A0: tags and perms for every tensor; views carry their source's order. */
static void attach(lay_ctx *c) {
  const fe_graph *g = c->g;
  for (int i = 0; i < g->ntensors; i++) {
    const fe_tensor *ft = &g->tensors[i];
    lay_tensor *t = &c->r->t[i];
    if (ft->layout_tag && strcmp(ft->layout_tag, LAYOUT_TAG) != 0)
      diag_report(c->dl, D_LAYOUT_TAG_REPLACED, ft->at, NULL,
                  "tensor '%s' carries layout_tag '%s'; attach replaces it with '%s'", ft->name, ft->layout_tag,
                  LAYOUT_TAG);
    t->tag = LAYOUT_TAG;
    t->block = ft->coaccess_block ? ft->coaccess_block : 2;
    dtype dt;
    const sx *const *sh;
    fe_tensor_value(g, i, &dt, &t->rank, &sh);
    t->perm = ft->nlayout_perm == t->rank && ft->layout_perm ? dup_order(c->A, ft->layout_perm, t->rank) : iota(c->A, t->rank);
    t->given = ft->nlayout_perm > 0;
  }
  /* propagate through views, in topological order: an output axis sits
   * where the input axis it reads sits */
  for (int k = 0; k < g->nnodes; k++) {
    const fe_node *nd = &g->nodes[k];
    lay_tensor *out = &c->r->t[nd->out[0]], *in = &c->r->t[nd->in[0]];
    if (g->tensors[nd->out[0]].nlayout_perm) continue;
    bool view = nd->op == FE_TRANSPOSE || nd->op == FE_CAST || nd->op == FE_PAD || nd->op == FE_SLICE ||
                nd->op == FE_FLIP || nd->op == FE_ELEMENTWISE || nd->op == FE_SOFTMAX;
    if (!view || out->rank != nd->rrank) continue;
    int pin[FE_MAX_RANK], key[FE_MAX_RANK];
    positions(in->rank, in->perm, pin);
    bool all = true;
    for (int a = 0; a < out->rank; a++) {
      int s = nd->op == FE_SOFTMAX ? (out->rank == in->rank ? a : -1) : source_axis(g, nd, 0, a);
      all &= s >= 0;
      key[a] = s >= 0 ? pin[s] : 0;
    }
    if (!all) continue;
    for (int a = 0; a < out->rank; a++) out->perm[a] = a;
    for (int a = 1; a < out->rank; a++)
      for (int b = a; b > 0 && key[out->perm[b - 1]] > key[out->perm[b]]; b--) {
        int tmp = out->perm[b];
        out->perm[b] = out->perm[b - 1], out->perm[b - 1] = tmp;
      }
  }
  event(c, "A0", false, "attached layout_perm, layout_tag, transform_meta and coaccess_block");
}

/* A1, A2: W and the stored order's cost for each signature input of rank >= 2. */
static bool coaccess(lay_ctx *c, unsigned **ro) {
  const fe_graph *g = c->g;
  int nfallback = 0, ndecided = 0;
  for (int k = 0; k < g->nin; k++) {
    int i = g->inputs[k];
    lay_tensor *t = &c->r->t[i];
    if (t->rank < 2 || t->rank + 1 > 64) continue;
    t->decided = true;
    ndecided++;
    t->n = t->rank + 1;
    t->W = ARENA_ARRAY(c->A, double, t->n * t->n);
    if (!build_w(c->o, &g->tensors[i], ro[i], t->W, t->n, &t->fallback, c->dl)) return false;
    if (t->fallback) {
      nfallback++;
      diag_report(c->dl, D_COACCESS_FALLBACK, g->tensors[i].at, NULL,
                  "no co-access was found for '%s'%s: W falls back to the diagonal and the stored order is kept",
                  g->tensors[i].name, c->o->trace_only ? " in the trace" : "");
    }
    /* the stored order: layout_perm as attached, lane last */
    t->stored = ARENA_ARRAY(c->A, int, t->n);
    for (int a = 0; a < t->rank; a++) t->stored[a] = t->given ? a : t->perm[a];
    t->stored[t->rank] = t->rank;
    t->c_stored = lay_cost(t->W, t->n, t->stored);
    t->q_stored = lay_modularity(t->W, t->n, t->stored, t->block);
  }
  event(c, "A1", false,
        arena_printf(c->A, "co-access graphs of %d stored input%s (%d fell back to the diagonal)", ndecided,
                     ndecided == 1 ? "" : "s", nfallback));
  event(c, "A2", false, "cost C(pi) and modularity Q of the stored orders");
  return true;
}

/* Each tensor's axis order as stored (attached), outermost first. */
static int *const *stored_orders(lay_ctx *c) {
  int **o = ARENA_ARRAY(c->A, int *, c->g->ntensors + 1);
  for (int i = 0; i < c->g->ntensors; i++) o[i] = c->r->t[i].given ? iota(c->A, c->r->t[i].rank) : c->r->t[i].perm;
  return o;
}

/* The same after T3: a decided input in its final order. */
static int *const *final_orders(lay_ctx *c) {
  int **o = (int **)stored_orders(c);
  for (int i = 0; i < c->g->ntensors; i++)
    if (c->r->t[i].decided && c->r->t[i].final) o[i] = c->r->t[i].final;
  return o;
}

/* Whether a decided input's roles differ between two role tables. */
static bool roles_differ(lay_ctx *c, unsigned **a, unsigned **b) {
  for (int i = 0; i < c->g->ntensors; i++)
    for (int x = 0; c->r->t[i].decided && x < c->r->t[i].rank; x++)
      if (a[i][x] != b[i][x]) return true;
  return false;
}

/* T1 on one W: Fiedler, then refinement.  Returns the moves evaluated. */
static int decide_on(lay_ctx *c, const double *W, int n, const int *ref, int *order, bool *capped) {
  if (!lay_fiedler(W, n, n - 1, order)) {
    memcpy(order, ref, sizeof(int) * (size_t)n);
    *capped = false;
    return 0;
  }
  return lay_refine(W, n, n - 1, ref, c->o->refine_steps, c->o->time_budget_s, c->o->seed, order, capped);
}

static void decide(lay_ctx *c) {
  int n_improved = 0, ncapped = 0;
  for (int i = 0; i < c->g->ntensors; i++) {
    lay_tensor *t = &c->r->t[i];
    if (!t->decided) continue;
    t->pi0 = dup_order(c->A, t->stored, t->n);
    bool capped = false;
    if (t->given) {
      /* T1 runs only where no layout_perm is given: pi0 is the given one */
      for (int a = 0; a < t->rank; a++) t->pi0[a] = t->perm[a];
    } else if (!t->fallback) {
      t->steps = decide_on(c, t->W, t->n, t->stored, t->pi0, &capped);
    }
    ncapped += capped;
    t->c0 = lay_cost(t->W, t->n, t->pi0);
    t->q0 = lay_modularity(t->W, t->n, t->pi0, t->block);
    n_improved += t->c0 < t->c_stored;
  }
  event(c, "T1", n_improved > 0,
        ncapped ? "Fiedler order and refinement; the wall-clock budget stopped a refinement"
                : arena_printf(c->A, "Fiedler order and refinement: %d tensor%s improved on the stored order", n_improved,
                               n_improved == 1 ? "" : "s"));
}

/* T2: where transform_meta.delta_layout is set, re-decide on W'. */
static void redecide(lay_ctx *c) {
  int nre = 0, nkept = 0;
  for (int i = 0; i < c->g->ntensors; i++) {
    lay_tensor *t = &c->r->t[i];
    const fe_tensor *ft = &c->g->tensors[i];
    t->pi1 = t->pi0;
    if (!t->decided || !ft->delta_layout) continue;
    nre++;
    t->redecided = true;
    t->W2 = ARENA_ARRAY(c->A, double, t->n * t->n);
    memcpy(t->W2, t->W, sizeof(double) * (size_t)(t->n * t->n));
    if (t->fallback)
      for (int a = 0; a < t->n; a++) t->W2[a * t->n + a] = 0;
    for (int k = 0; k < ft->ncoaccess; k++) add_w(t->W2, t->n, ft->co_i[k], ft->co_j[k], ft->co_w[k]);
    int *p1 = dup_order(c->A, t->pi0, t->n);
    bool capped;
    t->steps += decide_on(c, t->W2, t->n, t->pi0, p1, &capped);
    t->c2_pi0 = lay_cost(t->W2, t->n, t->pi0);
    t->c2_pi1 = lay_cost(t->W2, t->n, p1);
    if (t->c2_pi1 < t->c2_pi0 * (1 - c->o->epsilon)) t->pi1 = p1, nkept++;
    else t->rolled_back = true;
  }
  event(c, "T2", nkept > 0,
        nre == 0 ? "no tensor has transform_meta.delta_layout"
                 : arena_printf(c->A, "re-decided %d tensor%s on W'; %d kept, %d rolled back (C' did not fall by epsilon)",
                                nre, nre == 1 ? "" : "s", nkept, nre - nkept));
}

/* ---- T3: legalize ------------------------------------------------------------------- */

static cJSON *find_tensor_json(cJSON *g, const char *name) {
  return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(g, "tensors"), name);
}

static bool name_used(cJSON *g, const char *name) {
  if (find_tensor_json(g, name)) return true;
  const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(g, "graph");
  for (const cJSON *nd = nodes ? nodes->child : NULL; nd; nd = nd->next) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(nd, "name");
    if (cJSON_IsString(nm) && strcmp(nm->valuestring, name) == 0) return true;
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(nd, "outputs");
    for (const cJSON *o = outs ? outs->child : NULL; o; o = o->next)
      if (cJSON_IsString(o) && strcmp(o->valuestring, name) == 0) return true;
  }
  return false;
}

static const char *fresh_name(arena *A, cJSON *g, const char *base) {
  const char *n = base;
  for (int k = 2; name_used(g, n); k++) n = arena_printf(A, "%s%d", base, k);
  return n;
}

static cJSON *int_array(const int *v, int n) { return cJSON_CreateIntArray(v, n); }

/* Every node input named `from` reads `to` instead. */
static void rename_uses(cJSON *g, const char *from, const char *to, const cJSON *except) {
  cJSON *nodes = cJSON_GetObjectItemCaseSensitive(g, "graph");
  for (cJSON *nd = nodes ? nodes->child : NULL; nd; nd = nd->next) {
    if (nd == except) continue;
    cJSON *ins = cJSON_GetObjectItemCaseSensitive(nd, "inputs");
    for (cJSON *in = ins ? ins->child : NULL; in; in = in->next)
      if (cJSON_IsString(in) && strcmp(in->valuestring, from) == 0) cJSON_SetValuestring(in, to);
  }
}

/* The tensor's layout string with its letters in `order` (NCHW -> NHWC). */
static const char *permuted_layout(arena *A, const char *lay, const int *order, int rank) {
  if (!lay || (int)strlen(lay) != rank) return NULL;
  char *s = arena_strdup(A, lay);
  for (int a = 0; a < rank; a++) s[a] = lay[order[a]];
  return s;
}

/* T3's model, in copy instructions per element of the operand: a slow
 * stored layout costs one copy per element and per read; the converted one
 * 1/v, v the elements of a 16-byte chunk; the conversion reads and writes
 * the tensor once in chunks (2/v).  The operand is read at least once. */
static void conversion_model(lay_ctx *c, int i, lay_tensor *t, unsigned roles_inner) {
  int v = 16 / dtype_bytes(c->g->tensors[i].dt);
  t->slow_stored = (roles_inner & RL_SCALAR) != 0;
  t->load_slow = t->slow_stored ? 1.0 : 1.0 / v;
  t->load_fast = 1.0 / v;
  t->convert_cost = 2.0 / v;
}

/* Inserts conv = Transpose(X, pi) (the conversion, its own region) and
 * view = Transpose(conv, pi^-1) (what X's consumers now read). */
static void insert_conversion(lay_ctx *c, cJSON *rw, int i, lay_tensor *t) {
  const fe_tensor *ft = &c->g->tensors[i];
  cJSON *decl = find_tensor_json(rw, ft->name);
  const char *conv = fresh_name(c->A, rw, arena_printf(c->A, "%s_icd", ft->name));
  cJSON *cd = cJSON_CreateObject();
  cJSON_AddItemToObject(cd, "dtype", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(decl, "dtype"), true));
  cJSON *shape = cJSON_AddArrayToObject(cd, "shape");
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(decl, "shape");
  for (int a = 0; a < t->rank; a++) cJSON_AddItemToArray(shape, cJSON_Duplicate(cJSON_GetArrayItem(sh, t->final[a]), true));
  const char *lay = permuted_layout(c->A, ft->layout, t->final, t->rank);
  if (lay) cJSON_AddStringToObject(cd, "layout", lay);
  int *id = iota(c->A, t->rank);
  cJSON_AddItemToObject(cd, "layout_perm", int_array(id, t->rank));
  cJSON_AddStringToObject(cd, "layout_tag", LAYOUT_TAG);
  cJSON *tm = cJSON_AddObjectToObject(cd, "transform_meta");
  cJSON_AddStringToObject(tm, "conversion_of", ft->name);
  cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(rw, "tensors"), conv, cd);
  /* the view back: X's declaration, under a new name */
  const char *view = fresh_name(c->A, rw, arena_printf(c->A, "%s_view", conv));
  cJSON *vd = cJSON_Duplicate(decl, true);
  cJSON_DeleteItemFromObjectCaseSensitive(vd, "layout_perm");
  cJSON_DeleteItemFromObjectCaseSensitive(vd, "transform_meta");
  cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(rw, "tensors"), view, vd);
  rename_uses(rw, ft->name, view, NULL);
  int inv[FE_MAX_RANK];
  positions(t->rank, t->final, inv);
  cJSON *nodes = cJSON_GetObjectItemCaseSensitive(rw, "graph");
  const char *names[2] = {fresh_name(c->A, rw, arena_printf(c->A, "%s_to_icd", ft->name)), NULL};
  cJSON *n1 = cJSON_CreateObject();
  cJSON_AddStringToObject(n1, "op", "Transpose");
  cJSON_AddStringToObject(n1, "name", names[0]);
  cJSON_AddItemToObject(n1, "inputs", cJSON_CreateStringArray((const char *[]){ft->name}, 1));
  cJSON_AddItemToObject(n1, "outputs", cJSON_CreateStringArray((const char *[]){conv}, 1));
  cJSON_AddItemToObject(cJSON_AddObjectToObject(n1, "attrs"), "perm", int_array(t->final, t->rank));
  cJSON_AddItemToArray(nodes, n1);
  names[1] = fresh_name(c->A, rw, arena_printf(c->A, "%s_view", names[0]));
  cJSON *n2 = cJSON_CreateObject();
  cJSON_AddStringToObject(n2, "op", "Transpose");
  cJSON_AddStringToObject(n2, "name", names[1]);
  cJSON_AddItemToObject(n2, "inputs", cJSON_CreateStringArray((const char *[]){conv}, 1));
  cJSON_AddItemToObject(n2, "outputs", cJSON_CreateStringArray((const char *[]){view}, 1));
  cJSON_AddItemToObject(cJSON_AddObjectToObject(n2, "attrs"), "perm", int_array(inv, t->rank));
  cJSON_AddItemToArray(nodes, n2);
  t->conv_name = conv;
}

/* The node of `rw` that writes `name`, and how many nodes read it. */
static cJSON *writer_of(cJSON *rw, const char *name, int *nreaders) {
  cJSON *w = NULL;
  *nreaders = 0;
  cJSON *nodes = cJSON_GetObjectItemCaseSensitive(rw, "graph");
  for (cJSON *nd = nodes ? nodes->child : NULL; nd; nd = nd->next) {
    cJSON *outs = cJSON_GetObjectItemCaseSensitive(nd, "outputs"), *ins = cJSON_GetObjectItemCaseSensitive(nd, "inputs");
    for (cJSON *o = outs ? outs->child : NULL; o; o = o->next)
      if (cJSON_IsString(o) && strcmp(o->valuestring, name) == 0) w = nd;
    for (cJSON *in = ins ? ins->child : NULL; in; in = in->next)
      if (cJSON_IsString(in) && strcmp(in->valuestring, name) == 0) ++*nreaders;
  }
  return w;
}

static bool is_sig_tensor(const cJSON *rw, const char *name) {
  const cJSON *sig = cJSON_GetObjectItemCaseSensitive(rw, "signature");
  for (int io = 0; io < 2; io++) {
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(sig, io ? "outputs" : "inputs");
    for (const cJSON *e = l ? l->child : NULL; e; e = e->next) {
      const cJSON *tn = cJSON_GetObjectItemCaseSensitive(e, "tensor");
      if (cJSON_IsString(tn) && strcmp(tn->valuestring, name) == 0) return true;
    }
  }
  return false;
}

static const char *op_of(const cJSON *nd) {
  const cJSON *op = cJSON_GetObjectItemCaseSensitive(nd, "op");
  return cJSON_IsString(op) ? op->valuestring : "";
}

static const char *first_name(const cJSON *nd, const char *key) {
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(nd, key);
  const cJSON *e = l ? cJSON_GetArrayItem(l, 0) : NULL;
  return cJSON_IsString(e) ? e->valuestring : NULL;
}

/* One chain collapse: Transpose(Transpose(x)) -> Transpose(x) with the
 * composed perm, Reshape(Reshape(x)) -> Reshape(x); the inner node goes
 * when nothing else reads its (undeclared, non-signature) result.  A
 * declared tensor, a conversion among them, is never collapsed through. */
static bool collapse_one(cJSON *rw) {
  cJSON *nodes = cJSON_GetObjectItemCaseSensitive(rw, "graph");
  for (cJSON *nd = nodes ? nodes->child : NULL; nd; nd = nd->next) {
    const char *op = op_of(nd), *mid = first_name(nd, "inputs");
    if ((strcmp(op, "Transpose") && strcmp(op, "Reshape")) || !mid) continue;
    int readers;
    cJSON *inner = writer_of(rw, mid, &readers);
    if (!inner || strcmp(op_of(inner), op) || readers != 1 || find_tensor_json(rw, mid) || is_sig_tensor(rw, mid)) continue;
    const char *src = first_name(inner, "inputs");
    if (!src) continue;
    if (strcmp(op, "Transpose") == 0) {
      cJSON *p2 = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nd, "attrs"), "perm");
      cJSON *p1 = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(inner, "attrs"), "perm");
      int n = cJSON_GetArraySize(p2), r = cJSON_GetArraySize(p1), comp[FE_MAX_RANK];
      if (n != r || n > FE_MAX_RANK) continue;
      /* out axis a reads mid axis p2[a] = src axis p1[p2[a]]; negative axes count from the end */
      for (int a = 0; a < n; a++) {
        int q = cJSON_GetArrayItem(p2, a)->valueint;
        q = q < 0 ? q + n : q;
        int s = cJSON_GetArrayItem(p1, q)->valueint;
        comp[a] = s < 0 ? s + n : s;
      }
      cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(nd, "attrs"), "perm", cJSON_CreateIntArray(comp, n));
    }
    cJSON_SetValuestring(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(nd, "inputs"), 0), src);
    cJSON_DetachItemViaPointer(nodes, inner);
    cJSON_Delete(inner);
    return true;
  }
  return false;
}

/* An identity Transpose whose result is undeclared and not an output goes:
 * its readers read its input. */
static bool drop_identity(cJSON *rw) {
  cJSON *nodes = cJSON_GetObjectItemCaseSensitive(rw, "graph");
  for (cJSON *nd = nodes ? nodes->child : NULL; nd; nd = nd->next) {
    if (strcmp(op_of(nd), "Transpose")) continue;
    const char *in = first_name(nd, "inputs"), *out = first_name(nd, "outputs");
    cJSON *p = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nd, "attrs"), "perm");
    bool id = in && out && cJSON_IsArray(p);
    int n = cJSON_GetArraySize(p), a = 0;
    for (const cJSON *e = p ? p->child : NULL; e && id; e = e->next, a++) id = e->valueint == a || e->valueint == a - n;
    if (!id || find_tensor_json(rw, out) || is_sig_tensor(rw, out)) continue;
    char *src = strdup(in), *dst = strdup(out);
    if (!src || !dst) dlc_die_oom();
    cJSON_DetachItemViaPointer(nodes, nd);
    cJSON_Delete(nd);
    rename_uses(rw, dst, src, NULL);
    free(src);
    free(dst);
    return true;
  }
  return false;
}

static void legalize(lay_ctx *c, const cJSON *graph, unsigned **ro) {
  cJSON *rw = cJSON_Duplicate(graph, true);
  if (!rw) dlc_die_oom();
  for (int i = 0; i < c->g->ntensors; i++) {
    lay_tensor *t = &c->r->t[i];
    if (!t->decided) continue;
    t->final = dup_order(c->A, t->stored, t->n);
    conversion_model(c, i, t, ro[i][t->stored[t->rank - 1]]);
    if (same_order(t->pi1, t->stored, t->n)) {
      t->reason = t->fallback ? "no co-access: the stored order is kept" : "the decided order is the stored order";
      continue;
    }
    unsigned new_inner = ro[i][t->pi1[t->rank - 1]];
    double gain = t->load_slow - ((new_inner & RL_SCALAR) ? 1.0 : t->load_fast);
    if (gain <= t->convert_cost) {
      t->reason = arena_printf(c->A,
                               "kept the stored order: converting costs %.3g copies per element and saves %.3g on the "
                               "loads",
                               t->convert_cost, gain);
      continue;
    }
    memcpy(t->final, t->pi1, sizeof(int) * (size_t)t->n);
    t->convert = true;
    t->reason = arena_printf(c->A,
                             "converted: the stored layout costs %.3g copies per element, the converted one %.3g plus "
                             "%.3g for the conversion",
                             t->load_slow, t->load_fast, t->convert_cost);
    insert_conversion(c, rw, i, t);
    c->r->nconvert++;
  }
  if (c->o->fuse_transpose)
    while (collapse_one(rw) || drop_identity(rw)) c->r->ncollapsed++;
  /* the decided tensors' layout_perm: what they are stored in (the caller's) */
  for (int i = 0; i < c->g->ntensors; i++) {
    lay_tensor *t = &c->r->t[i];
    if (!t->decided) continue;
    for (int a = 0; a < t->rank; a++) t->perm[a] = t->stored[a];
    cJSON *decl = find_tensor_json(rw, c->g->tensors[i].name);
    if (!decl) continue;
    cJSON_DeleteItemFromObjectCaseSensitive(decl, "layout_perm");
    cJSON_DeleteItemFromObjectCaseSensitive(decl, "layout_tag");
    cJSON_AddItemToObject(decl, "layout_perm", int_array(t->perm, t->rank));
    cJSON_AddStringToObject(decl, "layout_tag", LAYOUT_TAG);
  }
  if (c->r->nconvert || c->r->ncollapsed) c->r->rewrite = rw;
  else cJSON_Delete(rw);
  event(c, "T3", c->r->nconvert + c->r->ncollapsed > 0,
        arena_printf(c->A, "%d layout conversion%s inserted, %d transpose/reshape chain step%s collapsed",
                     c->r->nconvert, c->r->nconvert == 1 ? "" : "s", c->r->ncollapsed, c->r->ncollapsed == 1 ? "" : "s"));
}

/* ---- V1: verify and annotate ------------------------------------------------------ */

static bool is_perm(const int *p, int n) {
  unsigned seen = 0;
  for (int a = 0; a < n; a++) {
    if (p[a] < 0 || p[a] >= n || (seen >> p[a] & 1)) return false;
    seen |= 1u << p[a];
  }
  return true;
}

/* Why the result breaks an invariant, or NULL. */
static const char *check(lay_ctx *c, const cJSON *graph, const fe_instance *inst) {
  const layout_result *r = c->r;
  if (r->opt.align < 16 || (r->opt.align & (r->opt.align - 1)) || r->opt.align % 16)
    return arena_printf(c->A, "align %d is not a multiple of the 16-byte chunk", r->opt.align);
  for (int i = 0; i < c->g->ntensors; i++) {
    const lay_tensor *t = &r->t[i];
    if (!is_perm(t->perm, t->rank))
      return arena_printf(c->A, "layout_perm of '%s' is not a permutation", c->g->tensors[i].name);
    if (t->decided && (!is_perm(t->final, t->n) || t->final[t->rank] != t->rank))
      return arena_printf(c->A, "the order of '%s' is not a permutation with the lane last", c->g->tensors[i].name);
  }
  if (!r->rewrite) return NULL;
  /* the rewritten graph reads back with the same signature shapes and dtypes */
  arena A2;
  arena_init(&A2);
  diag_list dl2;
  diag_init(&dl2);
  const char *why = NULL;
  fe_graph *g2 = fe_read_json(&A2, r->rewrite, "layout rewrite", inst, &dl2);
  if (!g2 || !fe_verify(g2, &dl2)) {
    why = arena_printf(c->A, "the rewritten graph does not read back: %s", dl2.n ? dl2.items[0].why : "?");
  } else {
    for (int io = 0; io < 2 && !why; io++) {
      int n = io ? c->g->nout : c->g->nin;
      for (int k = 0; k < n && !why; k++) {
        const fe_tensor *a = &c->g->tensors[io ? c->g->outputs[k] : c->g->inputs[k]];
        int j = fe_find_tensor(g2, a->name);
        const fe_tensor *b = j >= 0 ? &g2->tensors[j] : NULL;
        bool same = b && b->dt == a->dt && b->rank == a->rank && (b->sig_input >= 0) == (a->sig_input >= 0);
        for (int d = 0; same && d < a->rank && a->shape && b->shape; d++) same = sx_equal(a->shape[d], b->shape[d]);
        if (!same) why = arena_printf(c->A, "signature tensor '%s' changed its dtype or shape", a->name);
      }
    }
  }
  (void)graph;
  diag_free(&dl2);
  arena_free(&A2);
  return why;
}

static void hash_bytes(uint64_t *h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 0x100000001b3ull;
}

static bool verify_annotate(lay_ctx *c, const cJSON *graph, const fe_instance *inst) {
  layout_result *r = c->r;
  const char *why = check(c, graph, inst);
  if (why) {
    if (r->opt.strict) {
      diag_report(c->dl, D_LAYOUT_LEGALIZE, "layout", NULL, "V1: %s", why);
      return false;
    }
    diag_report(c->dl, D_LAYOUT_VERIFY, "layout", NULL, "V1: %s; the layout pass is undone", why);
    cJSON_Delete(r->rewrite);
    r->rewrite = NULL;
    r->undone = true;
    r->nconvert = r->ncollapsed = 0;
    for (int i = 0; i < c->g->ntensors; i++)
      if (r->t[i].decided) memcpy(r->t[i].final, r->t[i].stored, sizeof(int) * (size_t)r->t[i].n), r->t[i].convert = false;
  }
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < c->g->ntensors; i++) {
    lay_tensor *t = &r->t[i];
    if (!t->decided) continue;
    const double *W = t->W2 ? t->W2 : t->W;
    t->c1 = lay_cost(W, t->n, t->final);
    t->q1 = lay_modularity(W, t->n, t->final, t->block);
    r->C0 += lay_cost(W, t->n, t->stored);
    r->Q0 += lay_modularity(W, t->n, t->stored, t->block);
    r->C1 += t->c1;
    r->Q1 += t->q1;
    const char *nm = c->g->tensors[i].name;
    hash_bytes(&h, nm, strlen(nm) + 1);
    hash_bytes(&h, t->pi1, sizeof(int) * (size_t)t->n);
    hash_bytes(&h, t->final, sizeof(int) * (size_t)t->n);
  }
  snprintf(r->pi_hash, sizeof r->pi_hash, "%016llx", (unsigned long long)h);
  event(c, "V1", r->C1 < r->C0, why ? why : "pi is a permutation; signature shapes and dtypes unchanged; alignment holds");
  return true;
}

layout_result *layout_run(arena *A, const fe_graph *g, const cJSON *graph, const fe_instance *inst,
                          const layout_opts *o, diag_list *dl) {
  layout_result *r = ARENA_NEW(A, layout_result);
  r->g = g;
  r->opt = *o;
  r->t = ARENA_ARRAY(A, lay_tensor, g->ntensors + 1);
  lay_ctx c = {A, g, &r->opt, r, dl, now_s(), NULL};
  attach(&c);
  if (!o->enabled) {
    snprintf(r->pi_hash, sizeof r->pi_hash, "%016llx", 0ull);
    event(&c, "A1", false, "the layout pass is off");
    return r;
  }
  /* round 1: the roles follow the stored orders */
  int **kept = ARENA_ARRAY(A, int *, g->ntensors + 1);
  for (int i = 0; i < g->ntensors; i++) kept[i] = dup_order(A, r->t[i].perm, r->t[i].rank);
  unsigned **ro = axis_roles(A, g, stored_orders(&c));
  diag_list dl1;
  diag_init(&dl1);
  c.dl = &dl1;
  bool ok = coaccess(&c, ro);
  if (ok) decide(&c), redecide(&c), legalize(&c, graph, ro);
  c.dl = dl;
  unsigned **ro2 = ok ? axis_roles(A, g, final_orders(&c)) : NULL;
  if (!ok || !roles_differ(&c, ro, ro2)) {
    diag_append(dl, &dl1);
    if (!ok) return NULL;
  } else {
    /* round 2: a decided layout changed a role another input's W was built
     * on (a conv's K order follows its activation's converted layout): the
     * decision runs again on the roles the decided layouts give */
    diag_free(&dl1);
    cJSON_Delete(r->rewrite);
    r->rewrite = NULL;
    r->nconvert = r->ncollapsed = 0;
    for (int i = 0; i < g->ntensors; i++) {
      lay_tensor *t = &r->t[i];
      lay_tensor keep;
      memset(&keep, 0, sizeof keep);
      keep.rank = t->rank, keep.perm = t->perm, keep.tag = t->tag, keep.block = t->block, keep.given = t->given;
      memcpy(keep.perm, kept[i], sizeof(int) * (size_t)t->rank);
      *t = keep;
    }
    c.round = "round 2 (roles from round 1's layouts)";
    if (!coaccess(&c, ro2)) return NULL;
    decide(&c);
    redecide(&c);
    legalize(&c, graph, ro2);
    c.round = NULL;
  }
  if (!verify_annotate(&c, graph, inst)) {
    layout_result_free(r);
    return NULL;
  }
  return r;
}

void layout_result_free(layout_result *r) {
  if (!r) return;
  cJSON_Delete(r->rewrite);
  r->rewrite = NULL;
}

bool layout_verify(const layout_result *r, diag_list *dl) {
  for (int i = 0; i < r->g->ntensors; i++)
    if (!is_perm(r->t[i].perm, r->t[i].rank)) {
      diag_report(dl, D_INTERNAL, "layout", NULL, "layout_perm of '%s' is not a permutation", r->g->tensors[i].name);
      return false;
    }
  return true;
}

/* ---- dump ------------------------------------------------------------------------- */

static cJSON *order_json(const lay_tensor *t, const int *order) {
  cJSON *a = cJSON_CreateArray();
  for (int p = 0; p < t->n; p++)
    cJSON_AddItemToArray(a, order[p] == t->rank ? cJSON_CreateString("lane") : cJSON_CreateNumber(order[p]));
  return a;
}

static cJSON *matrix_json(const double *W, int n) {
  cJSON *m = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(m, cJSON_CreateDoubleArray(W + i * n, n));
  return m;
}

static cJSON *tensor_json(const layout_result *r, int i) {
  const lay_tensor *t = &r->t[i];
  const fe_tensor *ft = &r->g->tensors[i];
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "layout_tag", t->tag);
  cJSON_AddItemToObject(o, "layout_perm", int_array(t->perm, t->rank));
  cJSON_AddNumberToObject(o, "coaccess_block", t->block);
  if (ft->has_transform_meta) {
    cJSON *tm = cJSON_AddObjectToObject(o, "transform_meta");
    cJSON_AddBoolToObject(tm, "delta_layout", ft->delta_layout);
    if (ft->tm_kind) cJSON_AddStringToObject(tm, "kind", ft->tm_kind);
    if (ft->conversion_of) cJSON_AddStringToObject(tm, "conversion_of", ft->conversion_of);
  }
  if (!t->decided) return o;
  cJSON *d = cJSON_AddObjectToObject(o, "decision");
  cJSON_AddItemToObject(d, "W", matrix_json(t->W, t->n));
  if (t->W2) cJSON_AddItemToObject(d, "W_prime", matrix_json(t->W2, t->n));
  cJSON_AddBoolToObject(d, "fallback", t->fallback);
  cJSON_AddBoolToObject(d, "given", t->given);
  cJSON_AddItemToObject(d, "stored", order_json(t, t->stored));
  cJSON_AddItemToObject(d, "pi0", order_json(t, t->pi0));
  cJSON_AddItemToObject(d, "pi1", order_json(t, t->pi1));
  cJSON_AddItemToObject(d, "final", order_json(t, t->final));
  cJSON_AddNumberToObject(d, "C_stored", t->c_stored);
  cJSON_AddNumberToObject(d, "Q_stored", t->q_stored);
  cJSON_AddNumberToObject(d, "C_pi0", t->c0);
  cJSON_AddNumberToObject(d, "Q_pi0", t->q0);
  cJSON_AddNumberToObject(d, "C_final", t->c1);
  cJSON_AddNumberToObject(d, "Q_final", t->q1);
  if (t->redecided) {
    cJSON *t2 = cJSON_AddObjectToObject(d, "redecide");
    cJSON_AddNumberToObject(t2, "C_prime_pi0", t->c2_pi0);
    cJSON_AddNumberToObject(t2, "C_prime_pi1", t->c2_pi1);
    cJSON_AddBoolToObject(t2, "rolled_back", t->rolled_back);
  }
  cJSON_AddNumberToObject(d, "refine_steps", t->steps);
  cJSON *m = cJSON_AddObjectToObject(d, "model");
  cJSON_AddBoolToObject(m, "slow_stored", t->slow_stored);
  cJSON_AddNumberToObject(m, "load_stored", t->load_slow);
  cJSON_AddNumberToObject(m, "load_converted", t->load_fast);
  cJSON_AddNumberToObject(m, "conversion", t->convert_cost);
  cJSON_AddBoolToObject(d, "convert", t->convert);
  if (t->conv_name) cJSON_AddStringToObject(d, "converted_tensor", t->conv_name);
  if (t->reason) cJSON_AddStringToObject(d, "reason", t->reason);
  return o;
}

cJSON *layout_dump(const layout_result *r) {
  cJSON *root = cJSON_CreateObject();
  cJSON *op = cJSON_AddObjectToObject(root, "options");
  cJSON_AddBoolToObject(op, "enabled", r->opt.enabled);
  cJSON_AddStringToObject(op, "source", r->opt.trace_only ? "trace" : "static");
  cJSON_AddNumberToObject(op, "time_budget_s", r->opt.time_budget_s);
  cJSON_AddNumberToObject(op, "refine_steps", r->opt.refine_steps);
  cJSON_AddNumberToObject(op, "epsilon", r->opt.epsilon);
  cJSON_AddNumberToObject(op, "align", r->opt.align);
  cJSON_AddBoolToObject(op, "fuse_transpose", r->opt.fuse_transpose);
  cJSON_AddBoolToObject(op, "strict", r->opt.strict);
  cJSON_AddNumberToObject(op, "seed", (double)r->opt.seed);
  cJSON *ts = cJSON_AddObjectToObject(root, "tensors");
  for (int i = 0; i < r->g->ntensors; i++) cJSON_AddItemToObject(ts, r->g->tensors[i].name, tensor_json(r, i));
  cJSON *m = cJSON_AddObjectToObject(root, "metrics");
  cJSON_AddNumberToObject(m, "Q0", r->Q0);
  cJSON_AddNumberToObject(m, "Q1", r->Q1);
  cJSON_AddNumberToObject(m, "C0", r->C0);
  cJSON_AddNumberToObject(m, "C1", r->C1);
  cJSON_AddStringToObject(m, "pi_hash", r->pi_hash);
  cJSON_AddNumberToObject(root, "conversions", r->nconvert);
  cJSON_AddNumberToObject(root, "collapsed", r->ncollapsed);
  if (r->undone) cJSON_AddBoolToObject(root, "undone", true);
  cJSON *ev = cJSON_AddArrayToObject(root, "events");
  for (int i = 0; i < r->nev; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "stage", r->ev[i].stage);
    cJSON_AddBoolToObject(e, "improved", r->ev[i].improved);
    cJSON_AddStringToObject(e, "reason", r->ev[i].reason);
    cJSON_AddItemToArray(ev, e);
  }
  if (r->rewrite) cJSON_AddItemToObject(root, "rewrite", cJSON_Duplicate(r->rewrite, true));
  return root;
}
