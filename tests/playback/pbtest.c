/* The playback test harness (see pbtest.h). */
#include "pbtest.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "indexbook.h"
#include "jsonutil.h"
#include "playback.h"
#include "ref.h"
#include "tiny.h"

int pbt_failures;

uint64_t pbt_next(pbt_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double pbt_uniform(pbt_rng *r, double lo, double hi) {
  return lo + (hi - lo) * ((double)(pbt_next(r) >> 11) * (1.0 / 9007199254740992.0));
}

int pbt_int(pbt_rng *r, int lo, int hi) { return lo + (int)(pbt_next(r) % (uint64_t)(hi - lo + 1)); }

double pbt_tol(dtype t) { return t == DT_BF16 ? 4 * ldexp(1.0, -8) : 1e-3; }

void pbt_err_merge(pbt_err *into, const pbt_err *e) {
  into->max_abs = fmax(into->max_abs, e->max_abs);
  into->max_rel = fmax(into->max_rel, e->max_rel);
  into->worst_ratio = fmax(into->worst_ratio, e->worst_ratio);
  into->n += e->n;
  into->nbad += e->nbad;
}

bool pbt_close(const char *what, const double *got, const double *want, int64_t n, double tol, pbt_err *e) {
  double S = 0;
  for (int64_t i = 0; i < n; i++)
    if (isfinite(want[i])) S = fmax(S, fabs(want[i]));
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double g = got[i], w = want[i];
    bool ok;
    double err = 0, allow = tol * (S + fabs(w));
    if (isnan(g) || isnan(w)) ok = isnan(g) && isnan(w);
    else if (isinf(g) || isinf(w)) ok = g == w;
    else {
      err = fabs(g - w);
      ok = err <= allow;
      e->max_abs = fmax(e->max_abs, err);
      if (S + fabs(w) > 0) e->max_rel = fmax(e->max_rel, err / (S + fabs(w)));
      if (allow > 0) e->worst_ratio = fmax(e->worst_ratio, err / allow);
      else if (err > 0) e->worst_ratio = INFINITY;
    }
    if (!ok) {
      if (bad < 5)
        fprintf(stderr, "  %s[%lld]: playback %.9g, reference %.9g (|diff| %.3g > %.3g)\n", what, (long long)i, g, w,
                err, allow);
      bad++;
    }
  }
  e->n += n;
  e->nbad += bad;
  return bad == 0;
}

bool pbt_same(const char *what, const double *got, const double *want, int64_t n) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    bool ok = (isnan(got[i]) && isnan(want[i])) || got[i] == want[i];
    if (!ok && bad++ < 5) fprintf(stderr, "  %s[%lld]: %.9g vs %.9g\n", what, (long long)i, got[i], want[i]);
  }
  return bad == 0;
}

/* "M=7,N=5" -> both binding forms */
static bool parse_dims(arena *A, const char *text, pb_binding *pb, ref_dims *rd) {
  const char *p = text ? text : "";
  while (*p) {
    const char *eq = strchr(p, '=');
    if (!eq) return false;
    char *name = arena_strndup(A, p, (size_t)(eq - p));
    char *end;
    long long v = strtoll(eq + 1, &end, 10);
    if (!pb_bind(pb, name, v) || rd->n >= 32) return false;
    rd->name[rd->n] = name;
    rd->val[rd->n++] = v;
    p = *end == ',' ? end + 1 : end;
    if (end == eq + 1) return false;
  }
  return true;
}

static double draw(pbt_rng *r, pbt_domain d) {
  switch (d) {
  case DOM_POS: return pbt_uniform(r, 0.25, 4.0);
  case DOM_NONZERO: {
    double m = pbt_uniform(r, 0.5, 2.0);
    return pbt_next(r) & 1 ? m : -m;
  }
  case DOM_COND: return pbt_next(r) & 1 ? 0.0 : pbt_uniform(r, -2, 2);
  case DOM_ANY: break;
  }
  return pbt_uniform(r, -2.0, 2.0);
}

bool pbt_run_graph(const pbt_case *c, pbt_err *err, int *views_checked) {
  int fails0 = pbt_failures;
  arena A;
  arena_init(&A);
  diag_list dl;
  diag_init(&dl);
  char *text = c->graph_path ? ju_read_file(c->graph_path, &dl, c->graph_path) : NULL;
  cJSON *attrs = c->attrs_json ? cJSON_Parse(c->attrs_json) : NULL;
  pb_binding pb = {0};
  ref_dims rd = {0};
  fe_graph *g = NULL;
  tiny_dag *d = NULL;
  pb_result res = {0};
  int nsig = 0;
  ref_tensor *rin = NULL, *rout = NULL;
  pb_tensor *pin = NULL;
  pbt_err e = {0};
  int nviews = 0;

  PBT_CHECK(text || c->graph_text, "%s: cannot read %s", c->name, c->graph_path);
  PBT_CHECK(!c->attrs_json || attrs, "%s: bad attrs JSON", c->name);
  PBT_CHECK(parse_dims(&A, c->dims, &pb, &rd), "%s: bad dims '%s'", c->name, c->dims);
  if (pbt_failures != fails0) goto out;
  fe_instance inst = {c->T, attrs, NULL};
  g = fe_read_text(&A, text ? text : c->graph_text, c->name, &inst, &dl);
  if (g) d = tiny_lower(&A, g, &dl);
  if (!d) {
    diag_print_text(&dl, c->name);
    PBT_CHECK(0, "%s: the graph does not lower", c->name);
    goto out;
  }
  if (c->want_contract) {
    int ncon = 0, nred = 0;
    for (int i = 0; i < d->n; i++) ncon += d->u[i].op == TINY_CONTRACT, nred += d->u[i].op == TINY_REDUCE;
    PBT_CHECK(ncon == 1 && nred == 0, "%s: expected one CONTRACT and no REDUCE, got %d and %d", c->name, ncon, nred);
  }

  /* random inputs, representable in their dtype */
  pbt_rng rng = {c->seed};
  nsig = g->nin;
  rin = calloc((size_t)nsig + 1, sizeof(ref_tensor));
  rout = calloc((size_t)g->nout + 1, sizeof(ref_tensor));
  for (int i = 0; i < nsig; i++) {
    const fe_tensor *t = &g->tensors[g->inputs[i]];
    int64_t shape[REF_MAX_RANK];
    if (!ref_shape(&rd, t->rank, t->shape, shape) || !ref_tensor_new(&rin[i], t->rank, shape)) {
      PBT_CHECK(0, "%s: cannot make input %s", c->name, t->name);
      goto out;
    }
    for (int64_t f = 0; f < rin[i].n; f++) rin[i].d[f] = dtype_round(t->dt, draw(&rng, i < 4 ? c->dom[i] : DOM_ANY));
  }
  /* playback takes them in BUFFER order */
  int nbuf = pb_num_inputs(d);
  pin = calloc((size_t)nbuf + 1, sizeof(pb_tensor));
  for (int k = 0; k < nbuf; k++) {
    const char *nm = pb_input_name(d, k);
    int j = -1;
    for (int i = 0; i < nsig; i++)
      if (strcmp(g->tensors[g->inputs[i]].name, nm) == 0) j = i;
    if (j < 0 || pb_tensor_alloc(&pin[k], rin[j].rank, rin[j].shape) != PB_OK) {
      PBT_CHECK(0, "%s: BUFFER %s is no signature input", c->name, nm);
      goto out;
    }
    memcpy(pin[k].data, rin[j].d, sizeof(double) * (size_t)rin[j].n);
  }
  pb_status st = pb_eval_tiny(d, &pb, nbuf, pin, true, &res);
  PBT_CHECK(st == PB_OK, "%s: playback failed: %s: %s", c->name, pb_status_name(st), res.why);
  char why[256] = "";
  bool rok = ref_eval_graph(g, &rd, rin, rout, why, sizeof why);
  PBT_CHECK(rok, "%s: reference failed: %s", c->name, why);
  if (st != PB_OK || !rok) goto out;

  double tol = c->tol > 0 ? c->tol : pbt_tol(c->T);
  for (int i = 0; i < g->nout; i++) {
    const char *nm = g->tensors[g->outputs[i]].name;
    int k = -1;
    for (int j = 0; j < res.nout; j++)
      if (strcmp(res.out_name[j], nm) == 0) k = j;
    if (k < 0 || res.out[k].n != rout[i].n) {
      PBT_CHECK(0, "%s: output %s is missing or has %lld elements, the reference %lld", c->name, nm,
                k < 0 ? -1LL : (long long)res.out[k].n, (long long)rout[i].n);
      continue;
    }
    bool same_shape = res.out[k].rank == rout[i].rank;
    for (int a = 0; same_shape && a < rout[i].rank; a++) same_shape = res.out[k].shape[a] == rout[i].shape[a];
    PBT_CHECK(same_shape, "%s: output %s shapes differ", c->name, nm);
    PBT_CHECK(pbt_close(nm, res.out[k].data, rout[i].d, rout[i].n, tol, &e), "%s: output %s differs from FP64", c->name,
              nm);
  }

  /* every view of the lowered DAG, through the IndexBook */
  indexbook *ib = ib_build(&A, d, &dl);
  if (!ib) {
    diag_print_text(&dl, c->name);
    PBT_CHECK(0, "%s: ib_build failed", c->name);
    goto out;
  }
  for (int i = 0; i < ib->n; i++) {
    const ib_entry *en = &ib->e[i];
    if ((en->kind != IBK_VIEW && en->kind != IBK_STORE) || en->uop < 0) continue;
    pb_tensor v;
    char w[256] = "";
    st = pb_eval_view(ib, i, &pb, res.vals, &v, w, sizeof w);
    PBT_CHECK(st == PB_OK, "%s: view %s: %s: %s", c->name, en->value, pb_status_name(st), w);
    if (st != PB_OK) continue;
    const pb_tensor *want = &res.vals[en->uop];
    PBT_CHECK(v.n == want->n && pbt_same(en->value, v.data, want->data, v.n),
              "%s: IndexBook view %s differs from step-by-step playback", c->name, en->value);
    pb_tensor_free(&v);
    nviews++;
  }

out:
  printf("%-40s %-4s %-22s %6lld elems  max|d| %.3g  max rel %.3g  worst/allowed %.3f  views %d  %s\n", c->name,
         dtype_name(c->T), c->dims ? c->dims : "", (long long)e.n, e.max_abs, e.max_rel, e.worst_ratio, nviews,
         pbt_failures == fails0 ? "ok" : "FAILED");
  if (err) pbt_err_merge(err, &e);
  if (views_checked) *views_checked += nviews;
  pb_result_free(&res);
  for (int i = 0; rin && i < nsig; i++) ref_tensor_free(&rin[i]);
  for (int i = 0; rout && g && i < g->nout; i++) ref_tensor_free(&rout[i]);
  for (int k = 0; pin && d && k < pb_num_inputs(d); k++) pb_tensor_free(&pin[k]);
  free(rin);
  free(rout);
  free(pin);
  free(text);
  cJSON_Delete(attrs);
  diag_free(&dl);
  arena_free(&A);
  return pbt_failures == fails0;
}

bool pbt_run_regions(const pbt_case *c, pbt_agree agree, pbt_err *err, int *nregions) {
  int fails0 = pbt_failures;
  arena A;
  arena_init(&A);
  diag_list dl;
  diag_init(&dl);
  char *text = c->graph_path ? ju_read_file(c->graph_path, &dl, c->graph_path) : NULL;
  cJSON *attrs = c->attrs_json ? cJSON_Parse(c->attrs_json) : NULL;
  pb_binding pb = {0};
  ref_dims rd = {0};
  fe_graph *g = NULL;
  tiny_dag *d = NULL;
  region_set *rs = NULL;
  pb_result tres = {0}, rres = {0};
  pb_tensor *sig = NULL, *pin = NULL;
  const char **names = NULL;
  int nsig = 0, nbuf = 0;
  pbt_err e = {0};

  PBT_CHECK(text || c->graph_text, "%s: cannot read %s", c->name, c->graph_path);
  PBT_CHECK(!c->attrs_json || attrs, "%s: bad attrs JSON", c->name);
  PBT_CHECK(parse_dims(&A, c->dims, &pb, &rd), "%s: bad dims '%s'", c->name, c->dims);
  if (pbt_failures != fails0) goto out;
  fe_instance inst = {c->T, attrs, NULL};
  g = fe_read_text(&A, text ? text : c->graph_text, c->name, &inst, &dl);
  if (g) d = tiny_lower(&A, g, &dl);
  indexbook *ib = d ? ib_build(&A, d, &dl) : NULL;
  poly_view *pv = ib ? pv_build(&A, ib, &dl) : NULL;
  if (pv) rs = region_build(&A, pv, &dl);
  if (!rs || diag_has_errors(&dl)) {
    diag_print_text(&dl, c->name);
    PBT_CHECK(0, "%s: the graph does not form regions", c->name);
    goto out;
  }
  if (nregions) *nregions += rs->n;

  /* random signature inputs, representable in their dtype */
  pbt_rng rng = {c->seed};
  nsig = g->nin;
  sig = calloc((size_t)nsig + 1, sizeof(pb_tensor));
  names = calloc((size_t)nsig + 1, sizeof(const char *));
  for (int i = 0; i < nsig; i++) {
    const fe_tensor *t = &g->tensors[g->inputs[i]];
    int64_t shape[REF_MAX_RANK];
    names[i] = t->name;
    if (t->rank > REF_MAX_RANK || !ref_shape(&rd, t->rank, t->shape, shape) ||
        pb_tensor_alloc(&sig[i], t->rank, shape) != PB_OK) {
      PBT_CHECK(0, "%s: cannot make input %s", c->name, t->name);
      goto out;
    }
    for (int64_t f = 0; f < sig[i].n; f++) sig[i].data[f] = dtype_round(t->dt, draw(&rng, i < 4 ? c->dom[i] : DOM_ANY));
  }
  /* Tiny playback takes them in BUFFER order */
  nbuf = pb_num_inputs(d);
  pin = calloc((size_t)nbuf + 1, sizeof(pb_tensor));
  for (int k = 0; k < nbuf; k++) {
    const char *nm = pb_input_name(d, k);
    int j = -1;
    for (int i = 0; i < nsig; i++)
      if (strcmp(names[i], nm) == 0) j = i;
    if (j < 0 || pb_tensor_alloc(&pin[k], sig[j].rank, sig[j].shape) != PB_OK) {
      PBT_CHECK(0, "%s: BUFFER %s is no signature input", c->name, nm);
      goto out;
    }
    memcpy(pin[k].data, sig[j].data, sizeof(double) * (size_t)sig[j].n);
  }
  pb_status st = pb_eval_tiny(d, &pb, nbuf, pin, false, &tres);
  PBT_CHECK(st == PB_OK, "%s: Tiny playback failed: %s: %s", c->name, pb_status_name(st), tres.why);
  pb_status rst = pb_eval_regions(rs, &pb, nsig, names, sig, &rres);
  PBT_CHECK(rst == PB_OK, "%s: region playback failed: %s: %s", c->name, pb_status_name(rst), rres.why);
  if (st != PB_OK || rst != PB_OK) goto out;

  double tol = c->tol > 0 ? c->tol : pbt_tol(c->T);
  for (int i = 0; i < g->nout; i++) {
    const char *nm = g->tensors[g->outputs[i]].name;
    int kt = -1, kr = -1, nr = 0;
    for (int j = 0; j < tres.nout; j++)
      if (strcmp(tres.out_name[j], nm) == 0) kt = j;
    for (int j = 0; j < rres.nout; j++)
      if (strcmp(rres.out_name[j], nm) == 0) kr = j, nr++;
    PBT_CHECK(nr == 1, "%s: the regions yield output %s %d times", c->name, nm, nr);
    if (kt < 0 || kr < 0) continue;
    const pb_tensor *want = &tres.out[kt], *got = &rres.out[kr];
    bool same_shape = got->rank == want->rank;
    for (int a = 0; same_shape && a < want->rank; a++) same_shape = got->shape[a] == want->shape[a];
    PBT_CHECK(same_shape, "%s: output %s: the regions give another shape than Tiny", c->name, nm);
    if (!same_shape) continue;
    if (agree == PBT_EXACT) {
      PBT_CHECK(pbt_same(nm, got->data, want->data, want->n), "%s: output %s: region playback differs from Tiny playback",
                c->name, nm);
      e.n += want->n;
    } else {
      PBT_CHECK(pbt_close(nm, got->data, want->data, want->n, tol, &e),
                "%s: output %s: region playback is not within rounding of Tiny playback", c->name, nm);
    }
  }

out:
  printf("%-40s %-4s %-26s %-8s regions %d  %6lld elems  max|d| %.3g  worst/allowed %.3f  %s\n", c->name,
         dtype_name(c->T), c->dims ? c->dims : "", agree == PBT_EXACT ? "exact" : "rounding", rs ? rs->n : 0,
         (long long)e.n, e.max_abs, e.worst_ratio, pbt_failures == fails0 ? "ok" : "FAILED");
  if (err) pbt_err_merge(err, &e);
  pb_result_free(&tres);
  pb_result_free(&rres);
  for (int i = 0; sig && i < nsig; i++) pb_tensor_free(&sig[i]);
  for (int k = 0; pin && k < nbuf; k++) pb_tensor_free(&pin[k]);
  free(sig);
  free(pin);
  free(names);
  free(text);
  cJSON_Delete(attrs);
  diag_free(&dl);
  arena_free(&A);
  return pbt_failures == fails0;
}
