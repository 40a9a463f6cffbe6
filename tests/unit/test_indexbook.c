/* IndexBook (spec §4): every §4.4 update rule on hand-built Tiny DAGs
 * (reshape by linearize/decompose, symbolic reshape marked non_scop, pad
 * pieces, shrink with step, flip, expand as a 0 map, permute, reduce keeping
 * axis ids), composition of view chains, the GEMM and Conv entries of spec
 * §4.5, align_params (derived symbols, E1304) and indexbook_verify. */
#include "pipe.h"

static arena A;
static diag_list dl;

static const sx *I(int64_t v) { return sx_int(&A, v); }
static const sx *Pm(const char *n) { return sx_param(&A, n); }

/* The map of a view entry into its root, "[3*i0+i1]". */
static const char *map_of(const ib_entry *e, int k) {
  if (!e || k >= e->nin) return "(none)";
  return shape_s(&A, e->in[k].n, e->in[k].map);
}

static const char *guards_of(const ib_entry *e, int k) {
  if (!e || k >= e->nin) return "(none)";
  const ib_input *in = &e->in[k];
  const char **g = ARENA_ARRAY(&A, const char *, in->nguards + 1);
  for (int i = 0; i < in->nguards; i++)
    g[i] = arena_printf(&A, "%s<=%s<%s", sx_str(&A, in->guards[i].lo), sx_str(&A, in->guards[i].e),
                        sx_str(&A, in->guards[i].hi));
  return join(&A, in->nguards, g);
}

static indexbook *build(tiny_dag *d) {
  indexbook *b = ib_build(&A, d, &dl);
  if (!b) diag_print_text(&dl, "ib_build");
  return b;
}

static tiny_dag *dag(void) { return tiny_new(&A, NULL); }

/* reshape: linearize L = sum(o_j * stride'_j), then decompose
 * s_i = floor(L / stride_i) mod size_i, with mod as L - q*floor(L/q). */
static void test_reshape_linearize_decompose(void) {
  tiny_dag *d = dag();
  const sx *s6[1] = {I(6)}, *s23[2] = {I(2), I(3)}, *s32[2] = {I(3), I(2)};
  int x6 = tiny_buffer(d, "X6", DT_FP32, 1, s6);
  int x23 = tiny_buffer(d, "X23", DT_FP32, 2, s23);
  int a = tiny_reshape(d, x6, 2, s23, &dl, "t");    /* [6] -> [2,3] */
  int b = tiny_reshape(d, x23, 1, s6, &dl, "t");    /* [2,3] -> [6] */
  int c = tiny_reshape(d, a, 2, s32, &dl, "t");     /* [6] -> [2,3] -> [3,2] */
  int e = tiny_reshape(d, x23, 2, s32, &dl, "t");   /* [2,3] -> [3,2] */
  indexbook *ib = build(d);
  CHECK(ib != NULL);
  if (!ib) return;
  const ib_entry *ea = &ib->e[ib->of_uop[a]], *eb = &ib->e[ib->of_uop[b]];
  const ib_entry *ec = &ib->e[ib->of_uop[c]], *ee = &ib->e[ib->of_uop[e]];
  CHECK(ea->kind == IBK_VIEW && ea->rank == 2);
  CHECK_STR(map_of(ea, 0), "[3*i0+i1]");
  CHECK(ea->ndiv_guards == 0 && !ea->non_scop);
  /* decomposition with floordiv; the floor atoms become div guards */
  CHECK_STR(map_of(eb, 0), "[floor(i0/3),-3*floor(i0/3)+i0]");
  CHECK(eb->ndiv_guards == 1);
  if (eb->ndiv_guards) CHECK_STR(sx_str(&A, eb->div_guards[0]), "floor(i0/3)");
  CHECK(!eb->non_scop);
  /* a chain composes to the root and cancels back to a linear index */
  CHECK_STR(ec->in[0].value, "X6");
  CHECK_STR(ec->in[0].via, ea->value); /* the last view of the chain */
  CHECK_STR(map_of(ec, 0), "[2*i0+i1]");
  /* [2,3] -> [3,2] needs floordiv on the linear index */
  CHECK_STR(map_of(ee, 0), "[floor((2*i0+i1)/3),-3*floor((2*i0+i1)/3)+2*i0+i1]");
  CHECK(indexbook_verify(ib, &dl));
  /* the dump lists the div guards as q*d <= e < q*d + d */
  cJSON *j = ib_dump(ib);
  const cJSON *dg = cJSON_GetObjectItem(
      cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "index_book"), eb->value), "domain"), "div_guards");
  CHECK(cJSON_GetArraySize(dg) == 1);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetArrayItem(dg, 0), 0)), "3*floor(i0/3)<=i0");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetArrayItem(dg, 0), 1)), "i0<3*floor(i0/3)+3");
  cJSON_Delete(j);
}

/* A reshape whose decomposition divides by a symbol is not quasi-affine: the
 * view is marked non_scop (W2103) and becomes a region boundary. */
static void test_symbolic_reshape_is_non_scop(void) {
  tiny_dag *d = dag();
  const sx *mn[2] = {Pm("M"), Pm("N")}, *flat[1] = {sx_mul(&A, Pm("M"), Pm("N"))};
  int x = tiny_buffer(d, "X", DT_FP32, 2, mn);
  int f = tiny_reshape(d, x, 1, flat, &dl, "t");     /* [M,N] -> [M*N] */
  int y = tiny_buffer(d, "Y", DT_FP32, 1, flat);
  int u = tiny_reshape(d, y, 2, mn, &dl, "t");       /* [M*N] -> [M,N] */
  int mn_fixed[2] = {0};
  (void)mn_fixed;
  int w0 = dl.n;
  indexbook *ib = build(d);
  CHECK(ib != NULL);
  if (!ib) return;
  const ib_entry *ef = &ib->e[ib->of_uop[f]], *eu = &ib->e[ib->of_uop[u]];
  CHECK(ef->non_scop && ef->non_scop_why && strstr(ef->non_scop_why, "not quasi-affine"));
  CHECK(eu->non_scop);
  CHECK(ef->map_kind == IBM_INDEX_EXPR && ef->in[0].map_kind == IBM_INDEX_EXPR && eu->map_kind == IBM_INDEX_EXPR);
  CHECK(diag_count(&dl, "W2103") >= 2 && dl.n > w0 && !diag_has_errors(&dl));
  CHECK(indexbook_verify(ib, &dl));
  /* a constant reshape stays affine */
  tiny_dag *d2 = dag();
  const sx *m6[2] = {Pm("M"), I(6)}, *m23[3] = {Pm("M"), I(2), I(3)};
  int x2 = tiny_buffer(d2, "X", DT_FP32, 2, m6);
  int r2 = tiny_reshape(d2, x2, 3, m23, &dl, "t");
  indexbook *ib2 = build(d2);
  if (ib2) {
    CHECK(!ib2->e[ib2->of_uop[r2]].non_scop);
    CHECK(ib2->e[ib2->of_uop[r2]].map_kind == IBM_LINEAR);
    CHECK_STR(map_of(&ib2->e[ib2->of_uop[r2]], 0), "[i0,3*i1+i2]");
  }
}

/* pad: the in-bounds piece is guarded, the rest is the pad piece. */
static void test_pad_pieces(void) {
  tiny_dag *d = dag();
  const sx *n[2] = {Pm("N"), I(4)}, *lo[2] = {I(1), I(0)}, *hi[2] = {I(2), I(0)};
  int x = tiny_buffer(d, "X", DT_FP32, 2, n);
  int p = tiny_pad(d, x, lo, hi, &dl, "t");
  d->u[p].cval = -1;
  indexbook *ib = build(d);
  CHECK(ib != NULL);
  if (!ib) return;
  const ib_entry *e = &ib->e[ib->of_uop[p]];
  CHECK_STR(shape_s(&A, 2, (const sx *const[]){e->axes[0].size, e->axes[1].size}), "[N+3,4]");
  CHECK_STR(map_of(e, 0), "[i0-1,i1]");
  CHECK_STR(guards_of(e, 0), "0<=i0-1<N"); /* the unpadded axis needs no guard */
  CHECK(e->in[0].pad_value == -1);
  cJSON *j = ib_dump(ib);
  const cJSON *pieces = cJSON_GetObjectItem(
      cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "index_book"), e->value), "domain"), "pieces");
  CHECK(cJSON_GetArraySize(pieces) == 2);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(pieces, 0), "kind")), "in_bounds");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(pieces, 1), "kind")), "pad");
  CHECK(cJSON_GetObjectItem(cJSON_GetArrayItem(pieces, 1), "value")->valuedouble == -1);
  cJSON_Delete(j);
}

/* shrink with a step, flip, permute, expand; and a chain composed to its root. */
static void test_shrink_flip_permute_expand(void) {
  tiny_dag *d = dag();
  const sx *s10[1] = {I(10)}, *lo[1] = {I(1)}, *hi[1] = {I(10)};
  int64_t step[1] = {3};
  int x = tiny_buffer(d, "X", DT_FP32, 1, s10);
  int s = tiny_shrink(d, x, lo, hi, step, &dl, "t");
  const sx *n[1] = {Pm("N")};
  int y = tiny_buffer(d, "Y", DT_FP32, 1, n);
  bool fl[1] = {true};
  int f = tiny_flip(d, y, fl, &dl, "t");
  const sx *mnk[3] = {Pm("M"), Pm("N"), Pm("K")};
  int z = tiny_buffer(d, "Z", DT_FP32, 3, mnk);
  int perm[3] = {2, 0, 1};
  int pz = tiny_permute(d, z, perm, &dl, "t");
  const sx *one_n[2] = {I(1), Pm("N")}, *mn[2] = {Pm("M"), Pm("N")};
  int w = tiny_buffer(d, "W", DT_FP32, 2, one_n);
  int ew = tiny_expand(d, w, 2, mn, &dl, "t");
  /* pad -> flip -> shrink, composed */
  const sx *plo[1] = {I(2)}, *phi[1] = {I(2)}, *slo[1] = {I(1)}, *shi[1] = {sx_add_int(&A, Pm("N"), 4)};
  int pc = tiny_pad(d, y, plo, phi, &dl, "t");
  int fc = tiny_flip(d, pc, fl, &dl, "t");
  int sc = tiny_shrink(d, fc, slo, shi, NULL, &dl, "t");
  indexbook *ib = build(d);
  CHECK(ib != NULL);
  if (!ib) return;
  const ib_entry *es = &ib->e[ib->of_uop[s]];
  CHECK_STR(sx_str(&A, es->axes[0].size), "3");
  CHECK_STR(map_of(es, 0), "[3*i0+1]");
  CHECK(es->in[0].nguards == 0);
  CHECK_STR(map_of(&ib->e[ib->of_uop[f]], 0), "[N-i0-1]");
  /* flip is Linear: a negative coefficient, not an IndexExpr */
  CHECK(ib->e[ib->of_uop[f]].map_kind == IBM_LINEAR && !ib->e[ib->of_uop[f]].non_scop);
  const ib_entry *ep = &ib->e[ib->of_uop[pz]];
  CHECK_STR(shape_s(&A, 3, (const sx *const[]){ep->axes[0].size, ep->axes[1].size, ep->axes[2].size}), "[K,M,N]");
  CHECK_STR(map_of(ep, 0), "[i1,i2,i0]");
  const ib_entry *ee = &ib->e[ib->of_uop[ew]];
  CHECK_STR(map_of(ee, 0), "[0,i1]");
  CHECK(ee->axes[0].kind == AX_BROADCAST && ee->axes[1].kind == AX_ITER);
  const ib_entry *esc = &ib->e[ib->of_uop[sc]];
  CHECK_STR(esc->in[0].value, "Y");
  CHECK_STR(map_of(esc, 0), "[N-i0]");  /* N+3 - (i0+1) - 2 */
  CHECK_STR(guards_of(esc, 0), "0<=N-i0<N");
  CHECK(esc->map_kind == IBM_LINEAR && !esc->non_scop);
  CHECK(indexbook_verify(ib, &dl));
}

/* Seed 003's two kinds of view: a tile (i mod N, N a symbol: no guard can
 * make it affine) is an IndexExpr and a region boundary; a tile of a
 * constant extent (mod 4) and a flip stay Linear.  The dump says which. */
static void test_linear_and_index_expr_views(void) {
  tiny_dag *d = dag();
  const sx *n[1] = {Pm("N")}, *tn[1] = {sx_scale(&A, Pm("N"), 3)}, *c4[1] = {I(4)}, *t4[1] = {I(12)};
  int x = tiny_buffer(d, "X", DT_FP32, 1, n);
  const sx *modn[1] = {sx_mod(&A, sx_var(&A, "v0"), Pm("N"))}, *mod4[1] = {sx_mod(&A, sx_var(&A, "v0"), I(4))};
  int tile = tiny_view(d, x, 1, tn, modn);       /* [3N]: X[i mod N] */
  int y = tiny_buffer(d, "Y", DT_FP32, 1, c4);
  int tile4 = tiny_view(d, y, 1, t4, mod4);      /* [12]: Y[i mod 4] */
  bool fl[1] = {true};
  int f = tiny_flip(d, tile4, fl, &dl, "t");     /* Y[(11 - i) mod 4] */
  int w0 = diag_count(&dl, "W2103");
  indexbook *ib = build(d);
  CHECK(ib != NULL);
  if (!ib) return;
  const ib_entry *et = &ib->e[ib->of_uop[tile]], *e4 = &ib->e[ib->of_uop[tile4]], *ef = &ib->e[ib->of_uop[f]];
  CHECK(et->map_kind == IBM_INDEX_EXPR && et->non_scop);
  CHECK(diag_count(&dl, "W2103") == w0 + 1);
  CHECK(e4->map_kind == IBM_LINEAR && !e4->non_scop);
  CHECK(ef->map_kind == IBM_LINEAR && !ef->non_scop);
  CHECK_STR(ef->in[0].value, "Y");
  cJSON *j = ib_dump(ib);
  const cJSON *book = cJSON_GetObjectItem(j, "index_book");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(book, et->value), "view_kind")), "index_expr");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(book, ef->value), "view_kind")), "linear");
  CHECK(indexbook_verify(ib, &dl));
  cJSON_Delete(j);
}

/* reduce: the removed axes keep their ids in reduce_axes; kept axes keep
 * their ids and are renamed i0, i1, ... */
static void test_reduce_keeps_ids(void) {
  tiny_dag *d = dag();
  const sx *mnk[3] = {Pm("M"), Pm("N"), Pm("K")};
  int x = tiny_buffer(d, "X", DT_FP32, 3, mnk);
  int ng = tiny_alu(d, TINY_NEG, x, -1, -1, &dl, "t");
  int ax[1] = {1};
  int r = tiny_reduce(d, ng, RED_MAX, 1, ax, DT_FP32, &dl, "t");
  indexbook *ib = build(d);
  CHECK(ib != NULL);
  if (!ib) return;
  const ib_entry *en = &ib->e[ib->of_uop[ng]], *er = &ib->e[ib->of_uop[r]], *ex = &ib->e[ib->of_uop[x]];
  /* unary: identity inheritance of the axes */
  for (int k = 0; k < 3; k++) CHECK(en->axes[k].id == ex->axes[k].id);
  CHECK(er->kind == IBK_REDUCE && er->rank == 2 && er->nred == 1);
  CHECK(er->axes[0].id == en->axes[0].id && er->axes[1].id == en->axes[2].id);
  CHECK_STR(er->axes[1].name, "i1");
  CHECK(er->reduce_axes[0] == en->axes[1].id);
  CHECK_STR(er->red[0].name, "r0");
  CHECK(er->red[0].kind == AX_REDUCE);
  CHECK_STR(map_of(er, 0), "[i0,r0,i1]");
  CHECK(indexbook_verify(ib, &dl));
}

/* spec §4.5: the GEMM product entry and its reduction. */
static void test_gemm_entries(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "gemm_bias_relu.json", DT_FP16, TO_INDEXBOOK));
  const indexbook *ib = p.ib;
  if (!ib) return pipe_free(&p);
  const ib_entry *pr = ib_entry_of(ib, "C0.prod"), *c0 = ib_entry_of(ib, "C0");
  CHECK(pr && pr->kind == IBK_PRODUCT && pr->rank == 3);
  CHECK(c0 && c0->kind == IBK_REDUCE && c0->rank == 2 && c0->nred == 1);
  if (pr && c0) {
    CHECK_STR(pr->axes[2].label, "k");
    CHECK_STR(pr->in[0].value, "A");
    CHECK_STR(map_of(pr, 0), "[i0,i2]");
    CHECK_STR(map_of(pr, 1), "[i2,i1]");
    CHECK_STR(map_of(c0, 0), "[i0,i1,r0]");
    CHECK(c0->reduce_axes[0] == pr->axes[2].id);
    CHECK_STR(c0->red[0].label, "k");
  }
  /* the bias is read through its EXPAND with a 0 on the broadcast axis */
  const ib_entry *c1 = ib_entry_of(ib, "C1");
  CHECK(c1 && c1->nin == 2);
  if (c1) {
    CHECK_STR(c1->in[1].value, "bias.cast");
    CHECK_STR(c1->in[1].via, "bias.expand");
    CHECK_STR(map_of(c1, 1), "[i1]");
  }
  const ib_entry *bx = ib_entry_of(ib, "bias.expand");
  CHECK(bx && bx->axes[0].kind == AX_BROADCAST);
  pipe_free(&p);
}

/* spec §4.5 Conv: the padded view has an in-bounds piece 0 <= 2*h+kh-1 < H
 * and a pad piece; P and Q are derived symbols bound by align_params. */
static void test_conv_entries_and_derived_symbols(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "conv2d_bias_silu.json", DT_FP16, TO_INDEXBOOK));
  const indexbook *ib = p.ib;
  if (!ib) return pipe_free(&p);
  const ib_entry *xv = ib_entry_of(ib, "Xv");
  CHECK(xv && xv->kind == IBK_VIEW && xv->rank == 6);
  if (xv) {
    CHECK_STR(xv->in[0].value, "X");
    CHECK_STR(map_of(xv, 0), "[i0,2*i1+i4-1,2*i2+i5-1,i3]");
    CHECK_STR(join(&A, 4, (const char *const[]){ib_str_labeled(ib, xv, xv->in[0].map[0]),
                                                 ib_str_labeled(ib, xv, xv->in[0].map[1]),
                                                 ib_str_labeled(ib, xv, xv->in[0].map[2]),
                                                 ib_str_labeled(ib, xv, xv->in[0].map[3])}),
              "n,2*h+kh-1,2*w+kw-1,ci");
    CHECK_STR(guards_of(xv, 0), "0<=2*i1+i4-1<H,0<=2*i2+i5-1<W");
    CHECK(xv->in[0].pad_value == 0);
  }
  CHECK(ib->nderived == 2);
  if (ib->nderived == 2) {
    CHECK_STR(ib->dname[0], "P");
    CHECK_STR(sx_str(&A, ib->dval[0]), "floor((H+1)/2)");
    CHECK_STR(ib->dname[1], "Q");
  }
  pipe_free(&p);
}

/* align_params: a declared size that the shape rules do not produce, or a
 * derived symbol used for two different sizes, is E1304. */
static void test_align_params_mismatch(void) {
  char *g = shared_graph("gemm_bias_relu.json");
  char *bad = strstr(g, "\"C\":    {\"dtype\": \"T\", \"shape\": [\"M\", \"N\"]}");
  CHECK(bad != NULL);
  if (bad) memcpy(bad + strlen("\"C\":    {\"dtype\": \"T\", \"shape\": [\"M\", \""), "K", 1);
  front p;
  pipe_init(&p);
  CHECK(!pipe_run(&p, g, TO_INDEXBOOK));
  CHECK(diag_count(&p.dl, "E1304") == 1);
  const diag *dg = diag_find(&p.dl, "E1304");
  if (dg) {
    CHECK_STR(dg->at, "IndexBook.align_params");
    CHECK(strstr(dg->why, "'C'") && strstr(dg->why, "declares K"));
  }
  pipe_free(&p);
  free(g);
  /* P is bound to floor((H+1)/2) by the first axis, then used for W's size */
  g = shared_graph("conv2d_bias_silu.json");
  char *q = strstr(g, "\"P\", \"Q\"");
  CHECK(q != NULL);
  if (q) q[6] = 'P';
  pipe_init(&p);
  CHECK(!pipe_run(&p, g, TO_INDEXBOOK));
  CHECK(diag_count(&p.dl, "E1304") == 1);
  pipe_free(&p);
  free(g);
  /* a rank mismatch */
  pipe_init(&p);
  CHECK(!pipe_run(&p, J("{'signature':{'dims':['M'],'inputs':[{'tensor':'X'}],'outputs':[{'tensor':'Z'}]},"
                        "'tensors':{'X':{'dtype':'T','shape':['M',2]},'Z':{'dtype':'T','shape':['M']}},"
                        "'graph':[{'op':'Elementwise','fn':'neg','inputs':['X'],'outputs':['Z']}]}"),
                  TO_INDEXBOOK));
  CHECK(diag_count(&p.dl, "E1304") == 1);
  pipe_free(&p);
}

/* indexbook_verify catches a corrupted book (the §4.3 invariants). */
static void test_verify(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "conv2d_bias_silu.json", DT_FP16, TO_INDEXBOOK));
  indexbook *ib = p.ib;
  if (!ib) return pipe_free(&p);
  CHECK(indexbook_verify(ib, &p.dl));
  ib_entry *c = &ib->e[ib_find(ib, "Y1")];
  int n0 = p.dl.nerrors;
  /* 2: output axes are i0, i1, ... */
  const char *saved = c->axes[1].name;
  c->axes[1].name = "x";
  CHECK(!indexbook_verify(ib, &p.dl) && p.dl.nerrors > n0);
  c->axes[1].name = saved;
  /* 7: inputs name roots, not views */
  int ent = c->in[1].entry;
  c->in[1].entry = ib_find(ib, "bias.expand");
  CHECK(!indexbook_verify(ib, &p.dl));
  c->in[1].entry = ent;
  /* maps use the entry's own axes */
  const sx *m = c->in[0].map[0];
  c->in[0].map[0] = sx_var(&A, "zz");
  CHECK(!indexbook_verify(ib, &p.dl));
  c->in[0].map[0] = m;
  /* 1: quasi-affine unless non_scop */
  c->in[0].map[0] = sx_mul(&A, sx_var(&A, "i0"), Pm("N"));
  CHECK(!indexbook_verify(ib, &p.dl));
  c->in[0].map[0] = m;
  /* 3: a broadcast axis in a guard */
  ib_entry *xv = &ib->e[ib_find(ib, "Y0.prod")];
  ib_axis_kind k0 = xv->axes[1].kind;
  xv->axes[1].kind = AX_BROADCAST;
  CHECK(!indexbook_verify(ib, &p.dl));
  xv->axes[1].kind = k0;
  /* 4: a reduced axis that is still an output axis */
  ib_entry *y0 = &ib->e[ib_find(ib, "Y0")];
  int r0 = y0->reduce_axes[0];
  y0->reduce_axes[0] = y0->axes[0].id;
  CHECK(!indexbook_verify(ib, &p.dl));
  y0->reduce_axes[0] = r0;
  int n1 = p.dl.nerrors;
  CHECK(indexbook_verify(ib, &p.dl) && p.dl.nerrors == n1);
  for (int i = 0; i < p.dl.n; i++) CHECK(strcmp(diag_code(p.dl.items[i].id), "E0004") == 0);
  pipe_free(&p);
}

int main(void) {
  arena_init(&A);
  diag_init(&dl);
  test_reshape_linearize_decompose();
  test_symbolic_reshape_is_non_scop();
  test_linear_and_index_expr_views();
  test_pad_pieces();
  test_shrink_flip_permute_expand();
  test_reduce_keeps_ids();
  test_gemm_entries();
  test_conv_entries_and_derived_symbols();
  test_align_params_mismatch();
  test_verify();
  CHECK(!diag_has_errors(&dl));
  if (diag_has_errors(&dl)) diag_print_text(&dl, "test_indexbook");
  diag_free(&dl);
  arena_free(&A);
  return check_status("test_indexbook");
}
