/* Frontend IR (spec §2): reading valid graphs, the signature, inferred
 * dtypes and shapes of intermediates (incl. the Conv2D P/Q rule), derived
 * symbols, instantiation of T / runtime attrs / compile-time dims
 * (fe_instance), topological order and fe_verify.  Malformed graphs are
 * covered by tests/diag and tests/fuzz; here only the errors of the shape
 * rules. */
#include "pipe.h"

static arena A;

static const fe_tensor *tensor(const fe_graph *g, const char *name) {
  int t = fe_find_tensor(g, name);
  return t < 0 ? NULL : &g->tensors[t];
}

/* The shape of a tensor as its consumers see it, "[M,N]". */
static const char *tshape(const fe_graph *g, const char *name) {
  int t = fe_find_tensor(g, name);
  if (t < 0) return "(no such tensor)";
  dtype dt;
  int rank;
  const sx *const *shape;
  fe_tensor_value(g, t, &dt, &rank, &shape);
  return shape_s(&A, rank, shape);
}

static dtype tdtype(const fe_graph *g, const char *name) {
  int t = fe_find_tensor(g, name);
  if (t < 0) return DT__COUNT;
  dtype dt;
  int rank;
  const sx *const *shape;
  fe_tensor_value(g, t, &dt, &rank, &shape);
  return dt;
}

/* A graph with inputs X (and Y) and one node writing Z; the body is the
 * node's op/fn/attrs. */
static const char *one_node(const char *xshape, const char *xdt, const char *yshape, const char *ydt,
                            const char *zshape, const char *node) {
  const char *ydecl = yshape ? arena_printf(&A, ",'Y':{'dtype':'%s','shape':%s}", ydt, yshape) : "";
  return J(arena_printf(&A,
                        "{'signature':{'dims':['M','N','K'],'inputs':[{'tensor':'X'}%s],'outputs':[{'tensor':'Z'}]},"
                        "'tensors':{'X':{'dtype':'%s','shape':%s}%s,'Z':{'dtype':'fp32','shape':%s}},"
                        "'graph':[{'name':'n','inputs':['X'%s],'outputs':['Z'],%s}]}",
                        yshape ? ",{'tensor':'Y'}" : "", xdt, xshape, ydecl, zshape, yshape ? ",'Y'" : "", node));
}

/* The inferred result of the single node of one_node(). */
static const char *infer(const char *xshape, const char *yshape, const char *node, dtype *dt) {
  front p;
  pipe_init(&p);
  const char *r = NULL;
  if (pipe_run(&p, one_node(xshape, "T", yshape, "T", "['M']", node), TO_FRONTEND)) {
    r = arena_strdup(&A, shape_s(&A, p.fe->nodes[0].rrank, p.fe->nodes[0].rshape));
    if (dt) *dt = p.fe->nodes[0].rdt;
  } else {
    pipe_show(&p);
  }
  pipe_free(&p);
  return r ? r : "(error)";
}

/* The first error code of a one-node graph, or "" when it reads. */
static const char *infer_error(const char *xshape, const char *yshape, const char *node) {
  front p;
  pipe_init(&p);
  const char *r = "";
  if (!pipe_run(&p, one_node(xshape, "T", yshape, "T", "['M']", node), TO_FRONTEND))
    for (int i = 0; i < p.dl.n && !*r; i++)
      if (diag_sev(p.dl.items[i].id) == DIAG_ERROR) r = diag_code(p.dl.items[i].id);
  pipe_free(&p);
  return r;
}

static void test_gemm_signature_and_intermediates(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "gemm_bias_relu.json", DT_FP16, TO_FRONTEND));
  const fe_graph *g = p.fe;
  CHECK_STR(g->name, "gemm_bias_relu");
  CHECK(g->ndims == 3);
  CHECK_STR(join(&A, g->ndims, g->dims), "M,N,K");
  CHECK(g->nin == 3 && g->nout == 1);
  CHECK_STR(g->tensors[g->inputs[2]].name, "bias");
  /* roles, mutability and storage: given, or the defaults */
  CHECK_STR(tensor(g, "bias")->role, "param");
  CHECK_STR(tensor(g, "bias")->storage, "const_pool");
  CHECK_STR(tensor(g, "A")->storage, "arena");
  CHECK_STR(tensor(g, "C")->mutability, "mutable");
  CHECK_STR(tensor(g, "C")->role, "data");
  /* T instantiated; intermediates inferred: GEMM accumulates in fp32 */
  CHECK(tensor(g, "A")->dt == DT_FP16);
  CHECK(tdtype(g, "C0") == DT_FP32);
  CHECK(tdtype(g, "C1") == DT_FP32);
  CHECK(!tensor(g, "C0")->declared && tensor(g, "C")->declared);
  CHECK_STR(tshape(g, "C0"), "[M,N]");
  CHECK_STR(tshape(g, "C1"), "[M,N]");
  CHECK(g->nnodes == 3);
  CHECK(g->nodes[0].op == FE_GEMM && g->nodes[0].attrs.has_acc && g->nodes[0].attrs.acc_dtype == DT_FP32);
  CHECK(g->nodes[2].op == FE_ELEMENTWISE && g->nodes[2].fn == EW_RELU);
  CHECK(tensor(g, "C1")->producer == 1);
  CHECK(p.dl.n == 0);
  pipe_free(&p);
  /* the same graph for bf16 */
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "gemm_bias_relu.json", DT_BF16, TO_FRONTEND));
  CHECK(tensor(p.fe, "A")->dt == DT_BF16 && tensor(p.fe, "C")->dt == DT_BF16 && p.fe->T == DT_BF16);
  pipe_free(&p);
}

/* Conv2D: P = floor((H + 2*pad - dil*(R-1) - 1)/stride) + 1, and the runtime
 * attrs stride/pad take the values of the instance. */
static void test_param_storage_defaults_to_the_const_pool(void) {
  /* a param whose storage is not given is a weight of the plan's
   * ConstPool; one that says arena stays a per-call argument */
  static const char *const text =
      "{\"name\": \"scale_rows\", \"signature\": {\"dims\": [\"M\", \"N\"], \"inputs\": [{\"tensor\": \"X\"}, "
      "{\"tensor\": \"g\", \"role\": \"param\"}, {\"tensor\": \"h\", \"role\": \"param\", \"storage\": \"arena\"}], "
      "\"outputs\": [{\"tensor\": \"Y\"}]}, \"tensors\": {\"X\": {\"dtype\": \"T\", \"shape\": [\"M\", \"N\"]}, "
      "\"g\": {\"dtype\": \"T\", \"shape\": [\"N\"]}, \"h\": {\"dtype\": \"T\", \"shape\": [\"N\"]}, "
      "\"Y\": {\"dtype\": \"T\", \"shape\": [\"M\", \"N\"]}}, \"graph\": ["
      "{\"op\": \"Elementwise\", \"name\": \"m\", \"fn\": \"mul\", \"inputs\": [\"X\", \"g\"], \"outputs\": [\"P\"]},"
      "{\"op\": \"Elementwise\", \"name\": \"a\", \"fn\": \"add\", \"inputs\": [\"P\", \"h\"], \"outputs\": [\"Y\"]}]}";
  front p;
  pipe_init(&p);
  fe_instance inst = {DT_FP16, NULL, NULL};
  CHECK(pipe_run_inst(&p, text, &inst, TO_FRONTEND));
  CHECK_STR(tensor(p.fe, "g")->storage, "const_pool");
  CHECK_STR(tensor(p.fe, "h")->storage, "arena");
  CHECK_STR(tensor(p.fe, "X")->storage, "arena");
  pipe_free(&p);
}

static void test_conv_output_size_rule(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "conv2d_bias_silu.json", DT_FP16, TO_FRONTEND));
  CHECK_STR(tshape(p.fe, "Y0"), "[N,floor((H+1)/2),floor((W+1)/2),K]");
  CHECK(tdtype(p.fe, "Y0") == DT_FP32);
  CHECK_STR(join(&A, p.fe->nsig_attrs, p.fe->sig_attrs), "stride,pad");
  /* Y declares the derived symbols P and Q, which are not signature dims */
  const fe_tensor *y = tensor(p.fe, "Y");
  CHECK(y->rank == 4 && !fe_is_dim(p.fe, "P"));
  CHECK_STR(sxs(&A, y->shape[1]), "P");
  CHECK_STR(y->layout, "NHWC");
  pipe_free(&p);

  char *text = shared_graph("conv2d_bias_silu.json");
  static const struct {
    const char *attrs, *P;
  } cases[] = {
      {"{'stride':[1,1],'pad':[0,0]}", "H-2"},
      {"{'stride':1,'pad':1}", "H"},
      {"{'stride':[3,2],'pad':[2,1]}", "floor((H+1)/3)+1"},
      {"{'pad':[0,0]}", "floor((H+1)/2)-1"}, /* stride keeps the graph's 2: floor((H-3)/2)+1 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cJSON *av = cJSON_Parse(J(cases[i].attrs));
    fe_instance inst = {DT_FP16, av, NULL};
    pipe_init(&p);
    CHECK(pipe_run_inst(&p, text, &inst, TO_FRONTEND));
    if (p.fe) {
      int t = fe_find_tensor(p.fe, "Y0");
      CHECK_STR(sxs(&A, p.fe->nodes[p.fe->tensors[t].producer].rshape[1]), cases[i].P);
    }
    pipe_free(&p);
    cJSON_Delete(av);
  }
  free(text);
  /* dilation and NCHW/KCRS layouts */
  pipe_init(&p);
  const char *nchw = J("{'signature':{'dims':['N','C','H','W','K'],'inputs':[{'tensor':'X'},{'tensor':'F'}],"
                       "'outputs':[{'tensor':'Y'}]},'tensors':{'X':{'dtype':'T','shape':['N','C','H','W'],'layout':'NCHW'},"
                       "'F':{'dtype':'T','shape':['K','C',3,3],'layout':'KCRS'},'Y':{'dtype':'fp32','shape':['N','K','P','Q']}},"
                       "'graph':[{'op':'Conv2D','name':'c','inputs':['X','F'],'outputs':['Y'],"
                       "'attrs':{'stride':1,'pad':0,'dilation':2,'acc_dtype':'fp32'}}]}");
  CHECK(pipe_run(&p, nchw, TO_FRONTEND));
  if (p.fe) CHECK_STR(shape_s(&A, p.fe->nodes[0].rrank, p.fe->nodes[0].rshape), "[N,K,H-4,W-4]");
  pipe_free(&p);
}

/* A derived symbol (not in signature.dims) may name an output's size, never
 * an input's: inputs are the ABI. */
static void test_derived_symbols_only_on_outputs(void) {
  CHECK_STR(infer_error("['M','P']", NULL, "'op':'Cast','attrs':{'to':'fp32'}"), "E0211");
  /* sizes are expressions over symbols; a primed name is not one */
  CHECK_STR(infer_error("['M','N\\u0027']", NULL, "'op':'Cast','attrs':{'to':'fp32'}"), "E0211");
  CHECK_STR(infer_error("['M','N+1']", NULL, "'op':'Cast','attrs':{'to':'fp32'}"), "");
  CHECK_STR(infer_error("['M','N;']", NULL, "'op':'Cast','attrs':{'to':'fp32'}"), "E0211");
  front p;
  pipe_init(&p);
  CHECK(pipe_run(&p, one_node("['M','N']", "T", NULL, NULL, "['M','P']", "'op':'Cast','attrs':{'to':'fp32'}"),
                 TO_FRONTEND));
  pipe_free(&p);
}

static void test_attention_and_compile_time_dims(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "attention_causal.json", DT_FP16, TO_FRONTEND));
  const fe_node *nd = &p.fe->nodes[0];
  CHECK(nd->op == FE_ATTENTION && nd->attrs.causal);
  CHECK_STR(nd->attrs.scale_rsqrt, "D");
  CHECK_STR(tshape(p.fe, "O"), "[B,H,S,D]");
  pipe_free(&p);
  /* a variant binds D = 64: shapes and the scale become constants */
  char *text = shared_graph("attention_causal.json");
  cJSON *dims = cJSON_Parse("{\"D\":64}");
  fe_instance inst = {DT_BF16, NULL, dims};
  pipe_init(&p);
  CHECK(pipe_run_inst(&p, text, &inst, TO_FRONTEND));
  if (p.fe) {
    CHECK(p.fe->nbound == 1 && p.fe->bound_value[0] == 64);
    CHECK_STR(shape_s(&A, tensor(p.fe, "Q")->rank, tensor(p.fe, "Q")->shape), "[B,H,S,64]");
    CHECK(p.fe->nodes[0].attrs.scale_rsqrt == NULL && p.fe->nodes[0].attrs.scale == 0.125);
    CHECK(tensor(p.fe, "Q")->dt == DT_BF16);
  }
  pipe_free(&p);
  cJSON_Delete(dims);
  /* binding a symbol that is not a dim is a manifest error */
  dims = cJSON_Parse("{\"E\":64}");
  inst.dim_values = dims;
  pipe_init(&p);
  CHECK(!pipe_run_inst(&p, text, &inst, TO_FRONTEND));
  CHECK(diag_count(&p.dl, "E0103") == 1);
  pipe_free(&p);
  cJSON_Delete(dims);
  free(text);
}

/* The shape rules of the remaining ops. */
static void test_shape_rules(void) {
  dtype dt = DT__COUNT;
  /* GEMM: batch axes broadcast right-aligned */
  CHECK_STR(infer("[4,1,'M','K']", "[3,'K','N']", "'op':'GEMM','attrs':{'acc_dtype':'fp32'}", &dt),
            "[4,3,M,N]");
  CHECK(dt == DT_FP32);
  CHECK_STR(infer("['M','K']", "['K','N']", "'op':'GEMM','attrs':{'acc_dtype':'fp16'}", &dt), "[M,N]");
  CHECK(dt == DT_FP16);
  /* Elementwise: broadcast and promotion */
  CHECK_STR(infer("['M',1]", "[1,'N']", "'op':'Elementwise','fn':'add'", NULL), "[M,N]");
  CHECK_STR(infer("['M','N']", "['N']", "'op':'Elementwise','fn':'mul'", NULL), "[M,N]");
  CHECK_STR(infer("['M','N']", NULL, "'op':'Elementwise','fn':'mul','attrs':{'scalar':2.5}", NULL), "[M,N]");
  front p;
  pipe_init(&p);
  CHECK(pipe_run(&p, one_node("['M','N']", "fp16", "['N']", "fp32", "['M','N']", "'op':'Elementwise','fn':'sub'"),
                 TO_FRONTEND));
  if (p.fe) CHECK(p.fe->nodes[0].rdt == DT_FP32);
  pipe_free(&p);
  pipe_init(&p);
  CHECK(pipe_run(&p, one_node("['M','N']", "fp16", "['N']", "bf16", "['M','N']", "'op':'Elementwise','fn':'max'"),
                 TO_FRONTEND));
  if (p.fe) CHECK(p.fe->nodes[0].rdt == DT_FP32); /* fp16 with bf16 meet in fp32 */
  pipe_free(&p);
  /* Reduce drops the axes (negative axes count from the end) */
  CHECK_STR(infer("['M','N','K']", NULL, "'op':'Reduce','attrs':{'op':'max','axes':[-1,0]}", NULL), "[N]");
  CHECK_STR(infer("['M','N']", NULL, "'op':'Reduce','attrs':{'op':'sum','axes':[1],'acc_dtype':'fp32'}", &dt),
            "[M]");
  CHECK(dt == DT_FP32);
  CHECK_STR(infer_error("['M','N']", NULL, "'op':'Reduce','attrs':{'op':'sum','axes':[1]}"), "E1501");
  CHECK_STR(infer_error("['M','N']", NULL, "'op':'Reduce','attrs':{'op':'sum','axes':[2],'acc_dtype':'fp32'}"),
            "E0207");
  CHECK_STR(infer_error("['M','N']", NULL, "'op':'Reduce','attrs':{'op':'max','axes':[1,-1]}"), "E0207");
  /* Softmax, Transpose, Reshape, Cast */
  CHECK_STR(infer("['M','N']", NULL, "'op':'Softmax','attrs':{'axis':-1}", NULL), "[M,N]");
  CHECK_STR(infer("['M','N','K']", NULL, "'op':'Transpose','attrs':{'perm':[2,0,1]}", NULL), "[K,M,N]");
  CHECK_STR(infer_error("['M','N']", NULL, "'op':'Transpose','attrs':{'perm':[0,0]}"), "E1004");
  CHECK_STR(infer("['M',6]", NULL, "'op':'Reshape','attrs':{'shape':[2,'M',3]}", NULL), "[2,M,3]");
  CHECK_STR(infer_error("['M',6]", NULL, "'op':'Reshape','attrs':{'shape':[4,'M']}"), "E1003");
  CHECK_STR(infer("['M','N']", NULL, "'op':'Cast','attrs':{'to':'bf16'}", &dt), "[M,N]");
  CHECK(dt == DT_BF16);
  /* the dlc extension ops: Pad, Slice (with step), Flip, Expand */
  CHECK_STR(infer("['M','N']", NULL, "'op':'Pad','attrs':{'pads':[[1,2],[0,'K']]}", NULL), "[M+3,K+N]");
  CHECK_STR(infer("['M',10]", NULL, "'op':'Slice','attrs':{'starts':[1,0],'ends':['M',10],'steps':[1,3]}", NULL),
            "[M-1,4]");
  CHECK_STR(infer_error("['M',10]", NULL, "'op':'Slice','attrs':{'starts':[0,0],'ends':['M',11]}"), "E1004");
  CHECK_STR(infer_error("['M',10]", NULL, "'op':'Slice','attrs':{'starts':[0,5],'ends':['M',5]}"), "E1004");
  CHECK_STR(infer("['M','N']", NULL, "'op':'Flip','attrs':{'axes':[-1]}", NULL), "[M,N]");
  CHECK_STR(infer("[1,'N']", NULL, "'op':'Expand','attrs':{'shape':['K','M','N']}", NULL), "[K,M,N]");
  CHECK_STR(infer_error("[2,'N']", NULL, "'op':'Expand','attrs':{'shape':['M','N']}"), "E1001");
  /* dtypes are fp16, bf16, fp32 and T; bool and int32 exist only inside the IR */
  pipe_init(&p);
  CHECK(!pipe_run(&p, one_node("['M']", "bool", NULL, NULL, "['M']", "'op':'Cast','attrs':{'to':'fp32'}"),
                  TO_FRONTEND));
  CHECK(diag_count(&p.dl, "E0210") == 1);
  pipe_free(&p);
  pipe_init(&p);
  CHECK(!pipe_run(&p, one_node("['M']", "fp32", NULL, NULL, "['M']", "'op':'Cast','attrs':{'to':'int32'}"),
                  TO_FRONTEND));
  CHECK(diag_count(&p.dl, "E0210") == 1);
  pipe_free(&p);
  pipe_init(&p);
  CHECK(!pipe_run(&p, one_node("['M','K']", "fp16", "['K','N']", "fp16", "['M','N']",
                               "'op':'GEMM','attrs':{'acc_dtype':'T'}"),
                  TO_FRONTEND));
  CHECK(diag_count(&p.dl, "E0210") == 1);
  pipe_free(&p);
  /* contraction and broadcast mismatches */
  CHECK_STR(infer_error("['M','K']", "['N','K']", "'op':'GEMM','attrs':{'acc_dtype':'fp32'}"), "E1002");
  CHECK_STR(infer_error("['M','N']", "['K']", "'op':'Elementwise','fn':'add'"), "E1001");
  CHECK_STR(infer_error("['M','K']", "['K','N']", "'op':'GEMM'"), "E1501");
}

/* Nodes may be listed in any order; they are sorted topologically. */
static void test_topological_order(void) {
  const char *g = J("{'signature':{'dims':['M'],'inputs':[{'tensor':'X'}],'outputs':[{'tensor':'Z'}]},"
                    "'tensors':{'X':{'dtype':'T','shape':['M']},'Z':{'dtype':'T','shape':['M']}},"
                    "'graph':[{'op':'Elementwise','name':'last','fn':'neg','inputs':['B'],'outputs':['Z']},"
                    "{'op':'Elementwise','name':'mid','fn':'exp','inputs':['A1'],'outputs':['B']},"
                    "{'op':'Elementwise','name':'first','fn':'abs','inputs':['X'],'outputs':['A1']}]}");
  front p;
  pipe_init(&p);
  CHECK(pipe_run(&p, g, TO_FRONTEND));
  if (p.fe) {
    CHECK_STR(p.fe->nodes[0].name, "first");
    CHECK_STR(p.fe->nodes[1].name, "mid");
    CHECK_STR(p.fe->nodes[2].name, "last");
    CHECK(p.fe->tensors[fe_find_tensor(p.fe, "B")].producer == 1);
    CHECK(fe_verify(p.fe, &p.dl));
  }
  pipe_free(&p);
}

/* fe_verify: an unused input is a warning (W2102), the graph still reads;
 * a tensor read before it is written fails. */
static void test_verify(void) {
  const char *g = J("{'signature':{'dims':['M'],'inputs':[{'tensor':'X'},{'tensor':'U'}],'outputs':[{'tensor':'Z'}]},"
                    "'tensors':{'X':{'dtype':'T','shape':['M']},'U':{'dtype':'T','shape':['M']},"
                    "'Z':{'dtype':'T','shape':['M']}},"
                    "'graph':[{'op':'Elementwise','fn':'neg','inputs':['X'],'outputs':['Z']}]}");
  front p;
  pipe_init(&p);
  CHECK(pipe_run(&p, g, TO_FRONTEND));
  CHECK(diag_count(&p.dl, "W2102") == 1 && !diag_has_errors(&p.dl));
  CHECK_STR(p.fe ? p.fe->nodes[0].name : NULL, "n0"); /* unnamed nodes get n<index> */
  if (p.fe) {
    /* break the order behind the reader's back: fe_verify catches it */
    fe_graph *fg = p.fe;
    int z = fe_find_tensor(fg, "Z");
    fg->nodes[0].in[0] = z;
    diag_list dl;
    diag_init(&dl);
    CHECK(!fe_verify(fg, &dl));
    CHECK(diag_count(&dl, "E0206") == 1);
    diag_free(&dl);
  }
  pipe_free(&p);
}

/* The dump has the spec's top-level keys and round-trips names. */
static void test_dump(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "conv2d_bias_silu.json", DT_FP16, TO_FRONTEND));
  cJSON *d = fe_dump(p.fe);
  CHECK(cJSON_IsObject(cJSON_GetObjectItem(d, "signature")));
  CHECK(cJSON_IsObject(cJSON_GetObjectItem(d, "tensors")));
  CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(d, "graph")) == 3);
  const cJSON *conv = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "graph"), 0);
  const cJSON *stride = cJSON_GetObjectItem(cJSON_GetObjectItem(conv, "attrs"), "stride");
  CHECK(cJSON_GetArraySize(stride) == 2 && cJSON_GetArrayItem(stride, 0)->valuedouble == 2);
  const cJSON *y0 = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "tensors"), "Y0");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(y0, "kind")), "intermediate");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(y0, "shape"), 1)), "floor((H+1)/2)");
  cJSON_Delete(d);
  pipe_free(&p);
}

int main(void) {
  arena_init(&A);
  test_gemm_signature_and_intermediates();
  test_param_storage_defaults_to_the_const_pool();
  test_conv_output_size_rule();
  test_derived_symbols_only_on_outputs();
  test_attention_and_compile_time_dims();
  test_shape_rules();
  test_topological_order();
  test_verify();
  test_dump();
  arena_free(&A);
  return check_status("test_frontend");
}
