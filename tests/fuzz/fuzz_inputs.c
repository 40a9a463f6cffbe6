/* Malformed input never crashes dlcgen (issue 2, "Malformed input").
 *
 * Runs the in-process front half (fe_read_text -> tiny_lower -> ib_build ->
 * pv_build, and mf_read -> mf_instances -> the same stages per instance)
 * over deterministic mutations of the valid graphs and manifests:
 * truncation at every byte, type swaps at every JSON node, huge and negative
 * numbers, deleted and duplicated members, cycles, unknown ops, undeclared
 * tensors, deep nesting and seeded random byte flips.  DSL graphs (.dlc,
 * docs/dsl.md) get truncations and byte flips, through dsl_parse, the same
 * stages and dsl_decompile.  Errors are fine;
 * crashes, sanitizer reports, internal errors (exit 3) and a stage that fails
 * without recording an error are not.
 *
 *   fuzz_inputs GRAPH_DIR [--quick]
 *
 * The mutation set is fixed so that a failure reproduces; the case that
 * fails is printed before it runs when DLC_FUZZ_VERBOSE is set. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsl.h"
#include "frontend.h"
#include "indexbook.h"
#include "manifest.h"
#include "polyview.h"
#include "tiny.h"

static long ncases, nvalid, nbad_silent;
static bool verbose;
static const char *current;

/* ---- running one input ------------------------------------------------------- */

/* A stage that returns NULL must have recorded an error. */
static void expect_error(const diag_list *dl, int nerr0, const char *stage) {
  if (dl->nerrors > nerr0) return;
  nbad_silent++;
  fprintf(stderr, "fuzz: %s failed without an error diagnostic on case '%s'\n", stage, current);
}

/* Every diagnostic carries a location, a reason and a suggestion, and none
 * is a verifier's E0004 InternalError: bad input must be caught as bad input. */
static void check_diags(const diag_list *dl) {
  for (int i = 0; i < dl->n; i++) {
    const diag *d = &dl->items[i];
    if (!d->why || !*d->why || !d->suggestion || !*d->suggestion || !d->at) {
      nbad_silent++;
      fprintf(stderr, "fuzz: diagnostic %s without why/suggestion on case '%s'\n", diag_code(d->id), current);
    } else if (d->id == D_INTERNAL) {
      nbad_silent++;
      fprintf(stderr, "fuzz: internal diagnostic on case '%s': %s at %s: %s\n", current, diag_code(d->id), d->at,
              d->why);
    }
  }
}

/* Poly-View (isl) costs ~100x the other stages together, and it is a function
 * of the IndexBook (and the signature's dim order).  Mutations that do not
 * change either (a description, a role, a layout name) run it once. */
#define SEEN_CAP 4096
static uint64_t seen[SEEN_CAP];
static int nseen;
static long npv;

static uint64_t fnv(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool first_sight(const indexbook *ib) {
  cJSON *d = ib_dump(ib);
  char *s = cJSON_PrintUnformatted(d);
  uint64_t h = fnv(14695981039346656037ull, s);
  for (int i = 0; i < ib->dag->fe->ndims; i++) h = fnv(h, ib->dag->fe->dims[i]);
  free(s);
  cJSON_Delete(d);
  for (int i = 0; i < nseen; i++)
    if (seen[i] == h) return false;
  if (nseen < SEEN_CAP) seen[nseen++] = h;
  npv++;
  return true;
}

static void run_stages(arena *A, const cJSON *root, const char *text, const fe_instance *inst, diag_list *dl) {
  int e0 = dl->nerrors;
  fe_graph *g = root ? fe_read_json(A, root, "fuzz", inst, dl) : fe_read_text(A, text, "fuzz", inst, dl);
  if (!g) return expect_error(dl, e0, "fe_read");
  cJSON_Delete(fe_dump(g));
  e0 = dl->nerrors;
  tiny_dag *t = tiny_lower(A, g, dl);
  if (!t) return expect_error(dl, e0, "tiny_lower");
  cJSON_Delete(tiny_dump(t));
  e0 = dl->nerrors;
  indexbook *ib = ib_build(A, t, dl);
  if (!ib) return expect_error(dl, e0, "ib_build");
  if (!first_sight(ib)) {
    nvalid++;
    return;
  }
  e0 = dl->nerrors;
  poly_view *pv = pv_build(A, ib, dl);
  if (!pv) return expect_error(dl, e0, "pv_build");
  cJSON_Delete(pv_dump(pv));
  nvalid++;
}

static void run_graph(const char *text) {
  ncases++;
  if (verbose) fprintf(stderr, "case %ld: %s\n", ncases, current);
  arena A;
  arena_init(&A);
  diag_list dl;
  diag_init(&dl);
  fe_instance inst = {DT_FP16, NULL, NULL};
  run_stages(&A, NULL, text, &inst, &dl);
  check_diags(&dl);
  diag_free(&dl);
  arena_free(&A);
}

/* A DSL graph: parse (inlining its subgraphs), the stages, and decompile. */
static void run_dsl(const char *text) {
  ncases++;
  if (verbose) fprintf(stderr, "case %ld: %s\n", ncases, current);
  arena A;
  arena_init(&A);
  diag_list dl;
  diag_init(&dl);
  fe_instance inst = {DT_FP16, NULL, NULL};
  dsl_srcmap *map;
  cJSON *j = dsl_parse(&A, text, "fuzz.dlc", &map, &dl);
  if (!j) {
    expect_error(&dl, 0, "dsl_parse");
  } else {
    int n0 = dl.n;
    run_stages(&A, j, NULL, &inst, &dl);
    dsl_locate(map, &dl, n0);
    diag_list d2;
    diag_init(&d2);
    fe_graph *g = fe_read_json(&A, j, "fuzz.dlc", &inst, &d2);
    if (g) free(dsl_decompile(j, g, &d2));
    check_diags(&d2);
    diag_free(&d2);
    cJSON_Delete(j);
  }
  check_diags(&dl);
  diag_free(&dl);
  arena_free(&A);
}

/* Subgraphs, tuples, dim defaults, scalars and every statement form. */
static const char dsl_graph[] =
    "name \"subgraphs\"\n"
    "graph<M, N, G=2> pair(x: T[M, N], b: T[N]) -> (lo: T[M, N], hi: f32[M, G, N]) {\n"
    "  zero = 0.5 * 2 - 1\n"
    "  lo = max(x + b, zero)\n"
    "  r: r3 = Reshape(lo, shape=[M, 1, N])\n"
    "  hi: f32[M, G, N] = cast(Expand(r3, shape=[M, G, N]), to=f32)\n"
    "  return lo, hi\n"
    "}\n"
    "graph<M, N> main(x: T[M, N] layout=\"RM\", b: T[N] param const_pool) -> (y: T[M, N], z: f32[M, 3, N]) {\n"
    "  (a, c) = pair<G=3>(-x, b)\n"
    "  y = Softmax(Flip(a, axes=[-1]), axis=-1); z = c / 2\n"
    "  return y, z\n"
    "}\n";

static char tmpdir[256];

static void run_manifest(const char *text) {
  ncases++;
  if (verbose) fprintf(stderr, "case %ld: %s\n", ncases, current);
  char path[300];
  snprintf(path, sizeof path, "%s/m.json", tmpdir);
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
  arena A;
  arena_init(&A);
  diag_list dl;
  diag_init(&dl);
  manifest *m = mf_read(&A, path, &dl);
  if (!m) {
    expect_error(&dl, 0, "mf_read");
  } else {
    int budget = 48; /* instances per manifest: enough to reach every stage */
    for (int i = 0; i < m->nops && budget > 0; i++) {
      mf_instance *inst;
      int n = mf_instances(&A, &m->ops[i], &inst);
      for (int k = 0; k < n && budget > 0; k++, budget--) {
        arena R;
        arena_init(&R);
        fe_instance fi = {inst[k].dt, inst[k].attr_values, inst[k].dim_values};
        run_stages(&R, m->ops[i].graph, NULL, &fi, &dl);
        arena_free(&R);
      }
      mf_instances_free(inst, n);
    }
    mf_free(m);
  }
  check_diags(&dl);
  diag_free(&dl);
  arena_free(&A);
  remove(path);
}

typedef void (*runner)(const char *text);

/* ---- mutations ------------------------------------------------------------------ */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) { /* xorshift64*: fixed seed, same cases on every run */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

static void truncations(const char *name, const char *text, runner run, size_t step) {
  size_t n = strlen(text);
  char *buf = malloc(n + 1);
  char label[128];
  for (size_t k = 0; k < n; k += step) {
    memcpy(buf, text, k);
    buf[k] = 0;
    snprintf(label, sizeof label, "%s truncated at %zu", name, k);
    current = label;
    run(buf);
  }
  free(buf);
}

static void byte_flips(const char *name, const char *text, runner run, int count) {
  size_t n = strlen(text);
  char *buf = malloc(n + 1);
  char label[128];
  /* bytes that make structural damage likely */
  static const char alphabet[] = "{}[]\":,0123456789-+.eE tfnaxyzMNK\\/";
  for (int c = 0; c < count; c++) {
    memcpy(buf, text, n + 1);
    int flips = 1 + (int)(rng() % 3);
    for (int f = 0; f < flips; f++) {
      size_t at = (size_t)(rng() % n);
      if (rng() % 2) buf[at] = alphabet[rng() % (sizeof alphabet - 1)];
      else buf[at] = (char)(buf[at] ^ (1 << (rng() % 7)));
      if (!buf[at]) buf[at] = ' ';
    }
    snprintf(label, sizeof label, "%s byte flips #%d", name, c);
    current = label;
    run(buf);
  }
  free(buf);
}

/* Pre-order walk: the k-th node and its parent. */
static cJSON *nth_node(cJSON *root, int *k, cJSON **parent) {
  for (cJSON *c = root->child; c; c = c->next) {
    if ((*k)-- == 0) {
      *parent = root;
      return c;
    }
    cJSON *r = nth_node(c, k, parent);
    if (r) return r;
  }
  return NULL;
}

static int count_nodes(const cJSON *root) {
  int n = 0;
  for (const cJSON *c = root->child; c; c = c->next) n += 1 + count_nodes(c);
  return n;
}

static cJSON *replacement(int kind) {
  switch (kind) {
  case 0: return cJSON_CreateNull();
  case 1: return cJSON_CreateTrue();
  case 2: return cJSON_CreateNumber(1e300);                  /* huge */
  case 3: return cJSON_CreateNumber(4611686018427387904.0);  /* 2^62 */
  case 4: return cJSON_CreateNumber(-3);                     /* negative size */
  case 5: return cJSON_CreateNumber(0);
  case 6: return cJSON_CreateNumber(2.5);
  case 7: return cJSON_CreateString("M");
  case 8: return cJSON_CreateString("");
  case 9: return cJSON_CreateString("Conv3D");               /* unknown op / fn / dtype */
  case 10: return cJSON_CreateString("M*K % N");             /* non-affine size */
  case 11: return cJSON_CreateArray();
  case 12: return cJSON_CreateObject();
  case 13: return cJSON_CreateString("C0");                  /* an existing name: cycles, duplicates */
  case 14: return cJSON_CreateString("undeclared_x");        /* undeclared tensor */
  case 15: return cJSON_CreateNumber(-4611686018427387904.0);
  case 16: return cJSON_CreateString("M*N");                 /* a product of dims */
  case 17: return cJSON_CreateString("N-M");                 /* may be <= 0 */
  case 18: return cJSON_CreateString("M/N");
  case 19: return cJSON_CreateString("M'");                  /* sx_parse reads primes */
  default: return cJSON_CreateNumber(1);
  }
}
#define NREPL 21

static void emit(cJSON *doc, const char *label, runner run) {
  char *s = cJSON_PrintUnformatted(doc);
  current = label;
  run(s);
  free(s);
}

static void type_swaps(const char *name, const char *text, runner run, int stride) {
  cJSON *orig = cJSON_Parse(text);
  if (!orig) {
    fprintf(stderr, "fuzz: seed %s does not parse\n", name);
    exit(1);
  }
  int n = count_nodes(orig);
  char label[160];
  for (int i = 0; i < n; i++)
    for (int r = (i * 7) % stride; r < NREPL; r += stride) {
      cJSON *doc = cJSON_Duplicate(orig, 1);
      int k = i;
      cJSON *parent = NULL, *node = nth_node(doc, &k, &parent);
      cJSON_ReplaceItemViaPointer(parent, node, replacement(r));
      snprintf(label, sizeof label, "%s node %d -> replacement %d", name, i, r);
      emit(doc, label, run);
      cJSON_Delete(doc);
    }
  /* delete each member, and duplicate each array element */
  for (int i = 0; i < n; i++) {
    cJSON *doc = cJSON_Duplicate(orig, 1);
    int k = i;
    cJSON *parent = NULL, *node = nth_node(doc, &k, &parent);
    cJSON_Delete(cJSON_DetachItemViaPointer(parent, node));
    snprintf(label, sizeof label, "%s node %d deleted", name, i);
    emit(doc, label, run);
    cJSON_Delete(doc);
    doc = cJSON_Duplicate(orig, 1);
    k = i;
    node = nth_node(doc, &k, &parent);
    if (cJSON_IsArray(parent)) {
      cJSON_AddItemToArray(parent, cJSON_Duplicate(node, 1));
      snprintf(label, sizeof label, "%s node %d duplicated", name, i);
      emit(doc, label, run);
    }
    cJSON_Delete(doc);
  }
  cJSON_Delete(orig);
}

/* Graph-level damage that a node swap rarely produces. */
static void graph_surgery(const char *name, const char *text) {
  char label[160];
  cJSON *orig = cJSON_Parse(text);
  cJSON *nodes = cJSON_GetObjectItem(orig, "graph");
  int nn = cJSON_GetArraySize(nodes);
  for (int i = 0; i < nn; i++) {
    /* cycle: node i reads the last node's output */
    cJSON *doc = cJSON_Duplicate(orig, 1);
    cJSON *g = cJSON_GetObjectItem(doc, "graph");
    cJSON *last_out = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(g, nn - 1), "outputs"), 0);
    cJSON *ins = cJSON_GetObjectItem(cJSON_GetArrayItem(g, i), "inputs");
    cJSON_ReplaceItemInArray(ins, 0, cJSON_CreateString(last_out->valuestring));
    snprintf(label, sizeof label, "%s cycle into node %d", name, i);
    emit(doc, label, run_graph);
    cJSON_Delete(doc);
    /* reversed order: still a DAG, must be sorted */
    doc = cJSON_Duplicate(orig, 1);
    g = cJSON_GetObjectItem(doc, "graph");
    cJSON *it = cJSON_DetachItemFromArray(g, i);
    cJSON_InsertItemInArray(g, 0, it);
    snprintf(label, sizeof label, "%s node %d moved first", name, i);
    emit(doc, label, run_graph);
    cJSON_Delete(doc);
    /* every op name in turn */
    static const char *const ops[] = {"GEMM", "Conv2D", "Attention", "Elementwise", "Reduce", "Softmax",
                                      "Transpose", "Reshape", "Cast", "Pad", "Slice", "Flip", "Expand", "Matmul"};
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
      doc = cJSON_Duplicate(orig, 1);
      cJSON *nd = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "graph"), i);
      cJSON_ReplaceItemInObject(nd, "op", cJSON_CreateString(ops[o]));
      snprintf(label, sizeof label, "%s node %d op -> %s", name, i, ops[o]);
      emit(doc, label, run_graph);
      cJSON_Delete(doc);
    }
  }
  cJSON_Delete(orig);
}

static void deep_nesting(void) {
  /* deeper than cJSON's nesting limit, at the top and inside a shape */
  size_t depth = 5000;
  char *s = malloc(depth * 2 + 256);
  size_t k = 0;
  for (size_t i = 0; i < depth; i++) s[k++] = '[';
  for (size_t i = 0; i < depth; i++) s[k++] = ']';
  s[k] = 0;
  current = "deep nesting (top level)";
  run_graph(s);
  run_manifest(s);
  k = (size_t)sprintf(s, "{\"signature\":{\"dims\":[\"M\"],\"inputs\":[{\"tensor\":\"A\"}],\"outputs\":[{\"tensor\":\"B\"}]},"
                         "\"tensors\":{\"A\":{\"dtype\":\"T\",\"shape\":");
  for (size_t i = 0; i < 900; i++) s[k++] = '[';
  s[k++] = '1';
  for (size_t i = 0; i < 900; i++) s[k++] = ']';
  k += (size_t)sprintf(s + k, "},\"B\":{\"dtype\":\"T\",\"shape\":[\"M\"]}},\"graph\":[{\"op\":\"Cast\",\"inputs\":[\"A\"],"
                              "\"outputs\":[\"B\"],\"attrs\":{\"to\":\"T\"}}]}");
  current = "deep nesting (shape)";
  run_graph(s);
  free(s);
}

static char *slurp(const char *dir, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (fread(s, 1, (size_t)n, f) != (size_t)n) exit(1);
  s[n] = 0;
  fclose(f);
  return s;
}

/* A graph that exercises the dlc extension ops and Reduce/Softmax/Transpose. */
static const char movement_graph[] =
    "{\"name\":\"moves\",\"signature\":{\"dims\":[\"M\",\"N\"],\"inputs\":[{\"tensor\":\"X\"}],"
    "\"outputs\":[{\"tensor\":\"Y\"}]},"
    "\"tensors\":{\"X\":{\"dtype\":\"T\",\"shape\":[\"M\",6]},\"Y\":{\"dtype\":\"T\",\"shape\":[3,\"M+2\"]}},"
    "\"graph\":["
    "{\"op\":\"Reshape\",\"name\":\"r\",\"inputs\":[\"X\"],\"outputs\":[\"X1\"],\"attrs\":{\"shape\":[\"M\",2,3]}},"
    "{\"op\":\"Transpose\",\"name\":\"t\",\"inputs\":[\"X1\"],\"outputs\":[\"X2\"],\"attrs\":{\"perm\":[2,0,1]}},"
    "{\"op\":\"Flip\",\"name\":\"f\",\"inputs\":[\"X2\"],\"outputs\":[\"X3\"],\"attrs\":{\"axes\":[1]}},"
    "{\"op\":\"Pad\",\"name\":\"p\",\"inputs\":[\"X3\"],\"outputs\":[\"X4\"],\"attrs\":{\"pads\":[[0,0],[1,1],[0,2]],\"value\":0}},"
    "{\"op\":\"Slice\",\"name\":\"s\",\"inputs\":[\"X4\"],\"outputs\":[\"X5\"],"
    "\"attrs\":{\"starts\":[0,0,0],\"ends\":[3,\"M+2\",4],\"steps\":[1,1,2]}},"
    "{\"op\":\"Softmax\",\"name\":\"sm\",\"inputs\":[\"X5\"],\"outputs\":[\"X6\"],\"attrs\":{\"axis\":-1}},"
    "{\"op\":\"Reduce\",\"name\":\"red\",\"inputs\":[\"X6\"],\"outputs\":[\"X7\"],"
    "\"attrs\":{\"op\":\"max\",\"axes\":[2]}},"
    "{\"op\":\"Expand\",\"name\":\"e\",\"inputs\":[\"X7\"],\"outputs\":[\"X8\"],\"attrs\":{\"shape\":[3,\"M+2\"]}},"
    "{\"op\":\"Elementwise\",\"name\":\"g\",\"fn\":\"gelu_tanh\",\"inputs\":[\"X8\"],\"outputs\":[\"Y\"]}]}";

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fuzz_inputs GRAPH_DIR [--quick]\n");
    return 2;
  }
  const char *gdir = argv[1];
  bool quick = argc > 2 && strcmp(argv[2], "--quick") == 0;
  verbose = getenv("DLC_FUZZ_VERBOSE") != NULL;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/dlc_fuzz_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  static const char *const graphs[] = {"gemm_bias_relu.json", "conv2d_bias_silu.json", "attention_causal.json"};
  int stride = quick ? 5 : 2;
  for (size_t i = 0; i < sizeof graphs / sizeof *graphs; i++) {
    char *text = slurp(gdir, graphs[i]);
    current = graphs[i];
    run_graph(text);
    truncations(graphs[i], text, run_graph, quick ? 7 : 1);
    type_swaps(graphs[i], text, run_graph, stride);
    graph_surgery(graphs[i], text);
    byte_flips(graphs[i], text, run_graph, quick ? 100 : 300);
    free(text);
  }
  current = "movement graph";
  run_graph(movement_graph);
  type_swaps("movement graph", movement_graph, run_graph, stride);
  graph_surgery("movement graph", movement_graph);
  byte_flips("movement graph", movement_graph, run_graph, quick ? 100 : 300);
  deep_nesting();

  /* DSL graphs */
  static const char *const dsls[] = {"gemm_bias_relu.dlc", "conv2d_bias_silu.dlc", "attention_causal.dlc"};
  for (size_t i = 0; i < sizeof dsls / sizeof *dsls; i++) {
    char *text = slurp(gdir, dsls[i]);
    current = dsls[i];
    run_dsl(text);
    truncations(dsls[i], text, run_dsl, quick ? 7 : 1);
    byte_flips(dsls[i], text, run_dsl, quick ? 100 : 300);
    free(text);
  }
  current = "DSL subgraphs";
  run_dsl(dsl_graph);
  truncations("DSL subgraphs", dsl_graph, run_dsl, quick ? 3 : 1);
  byte_flips("DSL subgraphs", dsl_graph, run_dsl, quick ? 150 : 500);

  /* manifests: one with graph paths, one with an inline graph and variants */
  char *conv = slurp(gdir, "conv2d_bias_silu.json");
  size_t cap = strlen(conv) + 4096;
  char *m1 = malloc(cap), *m2 = malloc(cap);
  snprintf(m1, cap,
           "{\"schema\":\"dlc-manifest/1\",\"archs\":[\"sm80\",\"sm90a\"],\"ops\":["
           "{\"name\":\"gemm_bias_relu\",\"graph\":\"%s/gemm_bias_relu.json\",\"dtypes\":[\"fp16\",\"bf16\"],"
           "\"plans\":\"auto\",\"shape_sets\":[{\"name\":\"small\",\"bounds\":{\"M\":[1,64],\"N\":[1,64]}}]},"
           "{\"name\":\"attn\",\"graph\":\"%s/attention_causal.json\",\"dtypes\":[\"fp16\"],\"plans\":"
           "[{\"tile\":[64,64,32],\"stages\":3,\"arch\":\"sm80\"}],\"variants\":{\"D\":[64,128]}}]}",
           gdir, gdir);
  snprintf(m2, cap,
           "{\"schema\":\"dlc-manifest/1\",\"archs\":[\"sm80\"],\"ops\":[{\"name\":\"conv\",\"graph\":%s,"
           "\"dtypes\":[\"fp16\"],\"plans\":\"auto\",\"variants\":{\"stride\":[1,[2,2]],\"pad\":[[0,0],1]}}]}",
           conv);
  free(conv);
  current = "manifest with paths";
  run_manifest(m1);
  current = "manifest with an inline graph";
  run_manifest(m2);
  truncations("manifest with paths", m1, run_manifest, quick ? 23 : 5);
  type_swaps("manifest with paths", m1, run_manifest, quick ? 7 : 3);
  type_swaps("manifest with an inline graph", m2, run_manifest, quick ? 13 : 5);
  byte_flips("manifest with paths", m1, run_manifest, quick ? 60 : 200);
  byte_flips("manifest with an inline graph", m2, run_manifest, quick ? 60 : 200);
  free(m1);
  free(m2);
  rmdir(tmpdir);

  printf("fuzz_inputs: %ld cases, %ld valid through the IndexBook, %ld distinct ones through Poly-View, "
         "%ld silent failures or internal errors\n", ncases, nvalid, npv, nbad_silent);
  if (nvalid < 4) {
    fprintf(stderr, "fuzz: the valid seeds did not pass the pipeline\n");
    return 1;
  }
  return nbad_silent ? 1 : 0;
}
