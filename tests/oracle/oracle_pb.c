/* oracle_pb: dlc's playback of one graph, as JSON, for the tinygrad oracle
 * (tests/oracle/tinygrad_oracle.py).
 *
 *   oracle_pb FILE [--dtype T] [--bind NAME=V]... [--attrs JSON] [--seed S]
 *             [--dom any|pos|nonzero|cond|idxN,...]
 *
 * FILE is a graph, JSON or DSL (.dlc).  Every bound dim becomes a constant
 * of the graph (as --bind does for dlcgen), so the Frontend dump that the
 * oracle reads carries concrete sizes.  The tool draws fixed-seed inputs
 * (representable in their dtype; --dom picks each input's domain, in
 * signature order: idxN draws integers in [-1, N], indices for a Gather that
 * are out of range now and then), lowers the graph to Tiny IR, runs
 * pb_eval_tiny(), checks that every view of the IndexBook, evaluated through
 * its composed map (pb_eval_view), equals playback's value, and prints on stdout
 *   {"name", "dtype", "bind": {NAME: V}, "frontend": <--dump=frontend>,
 *    "tiny": <--dump=tiny>, "views_checked": N,
 *    "inputs":  [{"name", "dtype", "shape": [...], "data": [...]}, ...],
 *    "outputs": [{"name", "dtype", "shape": [...], "data": [...]}, ...]}
 * Exit status: 0, 1 when the graph is rejected, playback fails or a view
 * differs (diagnostics on stderr), 2 on a usage error. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl.h"
#include "frontend.h"
#include "indexbook.h"
#include "pbtest.h"
#include "playback.h"
#include "tiny.h"

static int usage(void) {
  fprintf(stderr, "usage: oracle_pb FILE [--dtype fp16|bf16|fp32] [--bind NAME=V]... [--attrs JSON] [--seed S] "
                  "[--dom any|pos|nonzero|cond|idxN,...]\n");
  return 2;
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

static cJSON *tensor_json(const char *name, dtype dt, const pb_tensor *t) {
  cJSON *o = cJSON_CreateObject(), *shape = cJSON_AddArrayToObject(o, "shape"),
        *data = cJSON_AddArrayToObject(o, "data");
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "dtype", dtype_name(dt));
  for (int k = 0; k < t->rank; k++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[k]));
  for (int64_t f = 0; f < t->n; f++) cJSON_AddItemToArray(data, cJSON_CreateNumber(t->data[f]));
  return o;
}

int main(int argc, char **argv) {
  const char *file = NULL, *attrs_text = NULL, *dom_text = "";
  dtype T = DT_FP32;
  uint64_t seed = 1;
  cJSON *dims = cJSON_CreateObject();
  pb_binding pb = {0};
  arena A;
  arena_init(&A);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--dtype") == 0 && i + 1 < argc) {
      if (!dtype_parse(argv[++i], &T)) return usage();
    } else if (strcmp(a, "--bind") == 0 && i + 1 < argc) {
      const char *b = argv[++i], *eq = strchr(b, '=');
      char *end;
      if (!eq || eq == b) return usage();
      long long v = strtoll(eq + 1, &end, 10);
      if (*end || end == eq + 1) return usage();
      char *name = arena_strndup(&A, b, (size_t)(eq - b));
      cJSON_AddNumberToObject(dims, name, (double)v);
      if (!pb_bind(&pb, name, v)) return usage();
    } else if (strcmp(a, "--attrs") == 0 && i + 1 < argc) {
      attrs_text = argv[++i];
    } else if (strcmp(a, "--seed") == 0 && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 10);
    } else if (strcmp(a, "--dom") == 0 && i + 1 < argc) {
      dom_text = argv[++i];
    } else if (a[0] != '-' && !file) {
      file = a;
    } else {
      return usage();
    }
  }
  if (!file) return usage();

  int rc = 1;
  diag_list dl;
  diag_init(&dl);
  cJSON *attrs = attrs_text ? cJSON_Parse(attrs_text) : NULL, *out = NULL;
  pb_result res = {0};
  pb_tensor *sig = NULL, *pin = NULL;
  int nsig = 0, nbuf = 0;
  if (attrs_text && !attrs) {
    fprintf(stderr, "oracle_pb: --attrs is not JSON\n");
    goto done;
  }
  dsl_srcmap *map = NULL;
  cJSON *gj = dsl_read_graph_file(&A, file, file, &map, &dl);
  fe_instance inst = {T, attrs, dims};
  fe_graph *g = gj ? fe_read_json(&A, gj, file, &inst, &dl) : NULL;
  if (map) dsl_locate(map, &dl, 0);
  cJSON_Delete(gj);
  tiny_dag *d = g ? tiny_lower(&A, g, &dl) : NULL;
  if (!d || diag_has_errors(&dl)) {
    diag_print_text(&dl, file);
    goto done;
  }

  /* inputs in signature order, then in the DAG's BUFFER order */
  pbt_rng rng = {seed};
  nsig = g->nin;
  sig = calloc((size_t)nsig + 1, sizeof *sig);
  for (int i = 0; i < nsig; i++) {
    const fe_tensor *t = &g->tensors[g->inputs[i]];
    int64_t shape[TINY_MAX_RANK];
    char why[256] = "";
    if (pb_shape_eval(&pb, t->rank, t->shape, shape, why, sizeof why) != PB_OK ||
        pb_tensor_alloc(&sig[i], t->rank, shape) != PB_OK) {
      fprintf(stderr, "oracle_pb: input %s: %s (bind every dim)\n", t->name, why);
      goto done;
    }
    /* the i-th domain of --dom, else any */
    pbt_domain dom = DOM_ANY;
    int idx_hi = -2; /* idxN: integers in [-1, N] */
    const char *p = dom_text;
    for (int k = 0; k < i && p; k++) p = strchr(p, ','), p = p ? p + 1 : NULL;
    if (p && strncmp(p, "pos", 3) == 0) dom = DOM_POS;
    if (p && strncmp(p, "nonzero", 7) == 0) dom = DOM_NONZERO;
    if (p && strncmp(p, "cond", 4) == 0) dom = DOM_COND;
    if (p && strncmp(p, "idx", 3) == 0) idx_hi = atoi(p + 3);
    for (int64_t f = 0; f < sig[i].n; f++)
      sig[i].data[f] = idx_hi >= -1 ? (double)pbt_int(&rng, -1, idx_hi) : dtype_round(t->dt, draw(&rng, dom));
  }
  nbuf = pb_num_inputs(d);
  pin = calloc((size_t)nbuf + 1, sizeof *pin);
  for (int k = 0; k < nbuf; k++) {
    const char *nm = pb_input_name(d, k);
    int j = -1;
    for (int i = 0; i < nsig; i++)
      if (strcmp(g->tensors[g->inputs[i]].name, nm) == 0) j = i;
    if (j < 0 || pb_tensor_alloc(&pin[k], sig[j].rank, sig[j].shape) != PB_OK) {
      fprintf(stderr, "oracle_pb: BUFFER %s is no signature input\n", nm);
      goto done;
    }
    memcpy(pin[k].data, sig[j].data, sizeof(double) * (size_t)sig[j].n);
  }
  pb_status st = pb_eval_tiny(d, &pb, nbuf, pin, true, &res);
  if (st != PB_OK) {
    fprintf(stderr, "oracle_pb: playback failed: %s: %s\n", pb_status_name(st), res.why);
    goto done;
  }
  /* every view, evaluated through the IndexBook, must equal playback's value */
  indexbook *ib = ib_build(&A, d, &dl);
  if (!ib) {
    diag_print_text(&dl, file);
    goto done;
  }
  int nviews = 0;
  for (int i = 0; i < ib->n; i++) {
    const ib_entry *en = &ib->e[i];
    if ((en->kind != IBK_VIEW && en->kind != IBK_STORE) || en->uop < 0) continue;
    pb_tensor v;
    char w[256] = "";
    st = pb_eval_view(ib, i, &pb, res.vals, &v, w, sizeof w);
    const pb_tensor *want = &res.vals[en->uop];
    bool same = st == PB_OK && v.n == want->n;
    for (int64_t f = 0; same && f < v.n; f++)
      same = v.data[f] == want->data[f] || (isnan(v.data[f]) && isnan(want->data[f]));
    if (st == PB_OK) pb_tensor_free(&v);
    if (!same) {
      fprintf(stderr, "oracle_pb: the IndexBook view %s differs from playback (%s%s%s)\n", en->value,
              pb_status_name(st), *w ? ": " : "", w);
      goto done;
    }
    nviews++;
  }

  out = cJSON_CreateObject();
  cJSON_AddStringToObject(out, "name", g->name);
  cJSON_AddStringToObject(out, "dtype", dtype_name(T));
  cJSON_AddItemToObject(out, "bind", cJSON_Duplicate(dims, true));
  cJSON_AddItemToObject(out, "frontend", fe_dump(g));
  cJSON_AddItemToObject(out, "tiny", tiny_dump(d));
  cJSON_AddNumberToObject(out, "views_checked", nviews);
  cJSON *ins = cJSON_AddArrayToObject(out, "inputs"), *outs = cJSON_AddArrayToObject(out, "outputs");
  for (int i = 0; i < nsig; i++) {
    const fe_tensor *t = &g->tensors[g->inputs[i]];
    cJSON_AddItemToArray(ins, tensor_json(t->name, t->dt, &sig[i]));
  }
  for (int i = 0; i < g->nout; i++) {
    const fe_tensor *t = &g->tensors[g->outputs[i]];
    int k = -1;
    for (int j = 0; j < res.nout; j++)
      if (strcmp(res.out_name[j], t->name) == 0) k = j;
    if (k < 0) {
      fprintf(stderr, "oracle_pb: playback has no output %s\n", t->name);
      goto done;
    }
    cJSON_AddItemToArray(outs, tensor_json(t->name, t->dt, &res.out[k]));
  }
  char *txt = cJSON_PrintUnformatted(out);
  if (txt) {
    puts(txt);
    rc = 0;
  }
  free(txt);

done:
  cJSON_Delete(out);
  cJSON_Delete(attrs);
  cJSON_Delete(dims);
  pb_result_free(&res);
  for (int i = 0; sig && i < nsig; i++) pb_tensor_free(&sig[i]);
  for (int k = 0; pin && k < nbuf; k++) pb_tensor_free(&pin[k]);
  free(sig);
  free(pin);
  diag_free(&dl);
  arena_free(&A);
  return rc;
}
