/* Manifest reader (schema dlc-manifest/1, docs/manifest.md): a valid
 * manifest with every part of the schema, the instances of its ops (dtype x
 * variant values, in a fixed order, with their tags), shape sets, and the
 * strictness of the reader: unknown and misspelled keys ("did you mean"),
 * bad values, duplicates and missing files are diagnostics. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdlib.h>
#include <unistd.h>

#include "manifest.h"
#include "pipe.h"

static arena A;
static char tmpdir[64];

static void test_valid_manifest(void) {
  diag_list dl;
  diag_init(&dl);
  manifest *m = mf_read(&A, DLC_TEST_DATA "/manifest_valid.json", &dl);
  CHECK(m != NULL && dl.n == 0);
  if (!m) {
    diag_print_text(&dl, "manifest_valid");
    diag_free(&dl);
    return;
  }
  CHECK(m->narchs == 2);
  CHECK_STR(join(&A, m->narchs, m->archs), "sm80,sm90a");
  CHECK(m->nops == 4);
  const mf_op *g = &m->ops[0], *c = &m->ops[1], *at = &m->ops[2], *in = &m->ops[3];
  CHECK_STR(g->name, "gemm_bias_relu");
  CHECK_STR(g->at, "manifest.ops[0]");
  CHECK(strstr(g->graph_where, "manifests/graphs/gemm_bias_relu.json") != NULL);
  CHECK(g->ndtypes == 2 && g->dtypes[0] == DT_FP16 && g->dtypes[1] == DT_BF16);
  CHECK(g->plans_auto && g->nplans == 0);
  /* shape sets */
  CHECK(g->nshape_sets == 2);
  if (g->nshape_sets == 2) {
    const mf_shape_set *s = &g->shape_sets[0];
    CHECK_STR(s->name, "small");
    CHECK(s->nbounds == 2);
    CHECK_STR(s->dim[1], "N");
    CHECK(s->lo[1] == 1 && s->hi[1] == 128);
    CHECK(g->shape_sets[1].nbounds == 1 && g->shape_sets[1].hi[0] == 1048576);
  }
  /* pinned plans */
  CHECK(!c->plans_auto && c->nplans == 1);
  if (c->nplans == 1) CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(c->plans[0], "tile")) == 3);
  /* variants: runtime attrs and compile-time dims */
  CHECK(c->nvkeys == 2 && !c->vkeys[0].is_dim && c->vkeys[0].nvalues == 2);
  CHECK(c->math_ieee && !g->math_ieee && !at->math_ieee);
  CHECK(at->nvkeys == 1 && at->vkeys[0].is_dim);
  CHECK_STR(in->graph_where, "manifest.ops[3].graph");
  CHECK(cJSON_IsObject(in->graph));

  /* instances: dtype-major, the first variant key varies fastest */
  static const char *const want[4][4] = {
      {"fp16", "bf16"},
      {"fp16.stride1.pad0", "fp16.stride2x2.pad0", "fp16.stride1.pad1", "fp16.stride2x2.pad1"},
      {"bf16.D64", "bf16.D128"},
      {"fp32"},
  };
  static const int nwant[4] = {2, 4, 2, 1};
  for (int o = 0; o < 4; o++) {
    mf_instance *v;
    int n = mf_instances(&A, &m->ops[o], &v);
    CHECK(n == nwant[o]);
    for (int k = 0; k < n && k < nwant[o]; k++) {
      CHECK_STR(v[k].tag, want[o][k]);
      /* every instance runs through the front half */
      arena R;
      arena_init(&R);
      diag_list rl;
      diag_init(&rl);
      fe_instance fi = {v[k].dt, v[k].attr_values, v[k].dim_values};
      fe_graph *fg = fe_read_json(&R, m->ops[o].graph, m->ops[o].graph_where, &fi, &rl);
      tiny_dag *t = fg ? tiny_lower(&R, fg, &rl) : NULL;
      indexbook *ib = t ? ib_build(&R, t, &rl) : NULL;
      CHECK(ib && pv_build(&R, ib, &rl) && !diag_has_errors(&rl));
      if (o == 1 && k == 1 && fg) {
        int y0 = fe_find_tensor(fg, "Y0");
        CHECK_STR(sxs(&R, fg->nodes[fg->tensors[y0].producer].rshape[1]), "floor((H+1)/2)-1"); /* s2 p0 */
      }
      if (o == 2 && k == 1 && fg) CHECK(fg->nbound == 1 && fg->bound_value[0] == 128);
      if (diag_has_errors(&rl)) diag_print_text(&rl, v[k].tag);
      diag_free(&rl);
      arena_free(&R);
    }
    if (o == 1 && n == 4) {
      char *s = cJSON_PrintUnformatted(v[3].attr_values);
      CHECK_STR(s, "{\"stride\":[2,2],\"pad\":1}");
      free(s);
      CHECK(v[3].dim_values == NULL);
    }
    if (o == 2 && n == 2) {
      char *s = cJSON_PrintUnformatted(v[0].dim_values);
      CHECK_STR(s, "{\"D\":64}");
      free(s);
    }
    mf_instances_free(v, n);
  }
  mf_free(m);
  diag_free(&dl);
}

/* Writes a manifest (single-quoted JSON; @G stands for the shared graph
 * directory) and reads it.  Returns the diagnostics' codes and suggestions
 * as one string, and whether mf_read failed. */
typedef struct result {
  bool failed;
  int n;
  const char *codes;  /* "E0102,E0101" */
  const char *text;   /* every code, at, why and suggestion */
} result;

static result read_manifest(const char *body) {
  const char *b = J(body);
  size_t len = strlen(b) + 1;
  for (const char *p = strstr(b, "@G"); p; p = strstr(p + 2, "@G")) len += strlen(DLC_SHARED_GRAPHS);
  char *text = arena_alloc(&A, len), *q = text;
  for (const char *p = b; *p;) {
    if (p[0] == '@' && p[1] == 'G') {
      q += sprintf(q, "%s", DLC_SHARED_GRAPHS);
      p += 2;
    } else {
      *q++ = *p++;
    }
  }
  *q = 0;
  const char *path = arena_printf(&A, "%s/m.json", tmpdir);
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
  diag_list dl;
  diag_init(&dl);
  arena R;
  arena_init(&R);
  manifest *m = mf_read(&R, path, &dl);
  result r = {m == NULL, dl.n, "", ""};
  const char **codes = ARENA_ARRAY(&A, const char *, dl.n + 1);
  for (int i = 0; i < dl.n; i++) {
    codes[i] = diag_code(dl.items[i].id);
    r.text = arena_printf(&A, "%s%s at %s: %s | %s\n", r.text, codes[i], dl.items[i].at, dl.items[i].why,
                          dl.items[i].suggestion);
    /* every diagnostic is complete */
    CHECK(*dl.items[i].at && *dl.items[i].why && *dl.items[i].suggestion);
  }
  r.codes = join(&A, dl.n, codes);
  if (m) mf_free(m);
  arena_free(&R);
  diag_free(&dl);
  return r;
}

#define GEMM "'graph':'@G/gemm_bias_relu.json'"
#define OP(extra) "{'name':'g'," GEMM ",'dtypes':['fp16'],'plans':'auto'" extra "}"
#define MF(archs, ops) "{'schema':'dlc-manifest/1','archs':" archs ",'ops':[" ops "]}"

static void expect(const char *body, const char *codes, const char *needle) {
  result r = read_manifest(body);
  CHECK(r.failed);
  if (strcmp(r.codes, codes) != 0 || (needle && !strstr(r.text, needle))) {
    fprintf(stderr, "manifest %s\n  gave %s, expected %s containing '%s':\n%s", body, r.codes, codes,
            needle ? needle : "", r.text);
    CHECK(false);
  }
}

static void test_unknown_keys_did_you_mean(void) {
  /* the minimal manifest reads */
  result ok = read_manifest(MF("['sm80']", OP("")));
  CHECK(!ok.failed && ok.n == 0);
  /* misspelled keys name the nearest allowed key */
  expect("{'schema':'dlc-manifest/1','arch':['sm80'],'ops':[" OP("") "]}", "E0102,E0101",
         "Did you mean 'archs'?");
  expect(MF("['sm80']", "{'name':'g'," GEMM ",'dtype':['fp16'],'plans':'auto'}"), "E0102,E0101",
         "Did you mean 'dtypes'?");
  expect(MF("['sm80']", OP(",'variant':{}")), "E0102", "Did you mean 'variants'?");
  expect(MF("['sm80']", "{'name':'g'," GEMM ",'dtypes':['fp16'],'plans':[{'tile':[128,128,32],'stage':3}]}"),
         "E0102", "Did you mean 'stages'?");
  expect(MF("['sm80']", OP(",'shape_sets':[{'name':'s','bound':{'M':[1,2]}}]")), "E0102,E0101",
         "Did you mean 'bounds'?");
  /* a key far from every allowed one lists them all, without a guess */
  result r = read_manifest(MF("['sm80']", OP(",'zzzzzzzz':1")));
  CHECK(r.failed && !strcmp(r.codes, "E0102") && !strstr(r.text, "Did you mean") &&
        strstr(r.text, "Allowed keys: name, description, graph, dtypes, plans, variants, shape_sets"));
  /* a key given twice */
  expect("{'schema':'dlc-manifest/1','archs':['sm80'],'archs':['sm90a'],'ops':[" OP("") "]}", "E0101",
         "appears more than once");
  /* variant keys are the graph's runtime attrs and dims */
  expect(MF("['sm80']", OP(",'variants':{'stride':[1,2]}")), "E0102", "neither a runtime attr nor a dim");
  expect(MF("['sm80']", OP(",'shape_sets':[{'name':'s','bounds':{'Q':[1,2]}}]")), "E0102",
         "not a signature dim");
}

static void test_bad_values(void) {
  expect("{'schema':'dlc-manifest/2','archs':['sm80'],'ops':[" OP("") "]}", "E0103", "dlc-manifest/1");
  expect(MF("['sm75']", OP("")), "E0103", "unknown arch sm75");
  expect(MF("['sm80','sm80']", OP("")), "E0103", "listed twice");
  expect(MF("[]", OP("")), "E0103", "archs is empty");
  expect(MF("['sm80']", "{'name':'g'," GEMM ",'dtypes':['fp64'],'plans':'auto'}"), "E0103", "unknown dtype fp64");
  expect(MF("['sm80']", "{'name':'g'," GEMM ",'dtypes':['fp16'],'plans':'fast'}"), "E0103", "plans is 'fast'");
  expect(MF("['sm80']", "{'name':'g'," GEMM ",'dtypes':['fp16'],'plans':3}"), "E0101", "not a number");
  expect(MF("['sm80']", "{'name':'g'," GEMM ",'dtypes':['fp16'],'plans':[{'tile':[128,128]}]}"), "E0101",
         "three integers");
  expect(MF("['sm80']", "{'name':'g'," GEMM ",'dtypes':['fp16'],'plans':[{'stages':99}]}"), "E0209", "99");
  expect(MF("['sm80']", "{'name':'g-relu'," GEMM ",'dtypes':['fp16'],'plans':'auto'}"), "E0103", "C identifier");
  expect(MF("['sm80']", OP("") "," OP("")), "E0104", "defined twice");
  expect(MF("['sm80']", OP(",'math':'fast'")), "E0103", "math is 'fast'");
  expect(MF("['sm80']", OP(",'math':1")), "E0103", "math is a number");
  expect(MF("['sm80']", OP(",'shape_sets':[{'name':'s','bounds':{'M':[9,2]}}]")), "E0103", "empty range");
  expect(MF("['sm80']", OP(",'shape_sets':[{'name':'s','bounds':{'M':[1,2]}},{'name':'s','bounds':{}}]")), "E0104",
         "defined twice");
  expect(MF("['sm80']", "{'name':'c','graph':'@G/conv2d_bias_silu.json','dtypes':['fp16'],'plans':'auto',"
                        "'variants':{'stride':[1,1]}}"),
         "E0103", "listed twice");
  expect(MF("['sm80']", "{'name':'c','graph':'@G/conv2d_bias_silu.json','dtypes':['fp16'],'plans':'auto',"
                        "'variants':{'pad':[[1,2,3]]}}"),
         "E0101", "pair of integers");
  expect(MF("['sm80']", "{'name':'g','graph':'@G/no_such_graph.json','dtypes':['fp16'],'plans':'auto'}"), "E0001",
         "no_such_graph.json");
  expect(MF("['sm80']", "{'name':'g','graph':42,'dtypes':['fp16'],'plans':'auto'}"), "E0101", "not a number");
  expect(MF("['sm80']", "{'name':'g'," GEMM ",'dtypes':['fp16']}"), "E0101", "missing required key 'plans'");
  expect("[1,2]", "E0101", "a JSON object");
  expect("{'schema':'dlc-manifest/1',", "E0002", "line 1");
  /* more than 4096 variant combinations is an error, not a silent cut */
  {
    char *ds = arena_alloc(&A, 4096), *q = ds;
    for (int i = 1; i <= 65; i++) q += sprintf(q, "%s%d", i > 1 ? "," : "", i);
    expect(arena_printf(&A, MF("['sm80']", "{'name':'a','graph':'@G/attention_causal.json','dtypes':['fp16'],"
                                           "'plans':'auto','variants':{'D':[%s],'S':[%s]}}"),
                        ds, ds),
           "E0103", "4225 combinations");
  }
  /* a missing manifest */
  diag_list dl;
  diag_init(&dl);
  CHECK(mf_read(&A, "/nonexistent/dlc/manifest.json", &dl) == NULL);
  CHECK(diag_count(&dl, "E0001") == 1);
  diag_free(&dl);
}

int main(void) {
  arena_init(&A);
  snprintf(tmpdir, sizeof tmpdir, "/tmp/dlc_test_manifest_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  test_valid_manifest();
  test_unknown_keys_did_you_mean();
  test_bad_values();
  remove(arena_printf(&A, "%s/m.json", tmpdir));
  rmdir(tmpdir);
  arena_free(&A);
  return check_status("test_manifest");
}
