/* Poly-View (spec §5): contraction detection (matmul and conv, with
 * lhs/rhs/out/reduce idx and affine offsets), epilogue membership,
 * attention's two contractions and its softmax block, non_scop boundaries,
 * and the diagnostics of this stage: E1401 UnguardedAccess, W2101
 * ExcessivePiecewise, and E1203 MissingDivGuard through a hand-corrupted
 * IndexBook (no input reaches it: the IndexBook never keeps a symbolic `%`
 * in an affine map). */
#include "pipe.h"

static arena A;

static const pv_block *block(const poly_view *pv, pv_block_kind kind, int nth) {
  for (int i = 0; i < pv->nblk; i++)
    if (pv->blk[i].kind == kind && nth-- == 0) return &pv->blk[i];
  return NULL;
}

static int count_blocks(const poly_view *pv, pv_block_kind kind) {
  int n = 0;
  for (int i = 0; i < pv->nblk; i++) n += pv->blk[i].kind == kind;
  return n;
}

/* Values of the epilogue statements, "bias.cast,C1,...". */
static const char *epilogue(const poly_view *pv, const pv_block *b) {
  const char **v = ARENA_ARRAY(&A, const char *, b->nepi + 1);
  for (int i = 0; i < b->nepi; i++) v[i] = pv->ib->e[pv->st[b->epi[i]].entry].value;
  return join(&A, b->nepi, v);
}

static const char *stmt_values(const poly_view *pv, const pv_block *b) {
  const char **v = ARENA_ARRAY(&A, const char *, b->nst + 1);
  for (int i = 0; i < b->nst; i++) v[i] = pv->ib->e[pv->st[b->st[i]].entry].value;
  return join(&A, b->nst, v);
}

static const pv_stmt *stmt_of(const poly_view *pv, const char *value) {
  int e = ib_find(pv->ib, value);
  if (e < 0 || pv->stmt_of_entry[e] < 0) return NULL;
  return &pv->st[pv->stmt_of_entry[e]];
}

static void test_gemm_matmul_and_epilogue(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "gemm_bias_relu.json", DT_FP16, TO_POLY_VIEW));
  const poly_view *pv = p.pv;
  if (!pv) return pipe_free(&p);
  CHECK_STR(pv->context, "[M, N, K] -> { : M >= 1 and N >= 1 and K >= 1 }");
  CHECK(pv->nblk == 1 && count_blocks(pv, PVB_CONTRACTION) == 1);
  const pv_block *b = block(pv, PVB_CONTRACTION, 0);
  if (b) {
    const pv_contraction *c = &b->con;
    const pv_stmt *ps = &pv->st[b->product_stmt];
    CHECK_STR(c->pattern, "matmul");
    CHECK_STR(ps->acc[c->lhs].tensor, "A");
    CHECK_STR(ps->acc[c->rhs].tensor, "B");
    CHECK_STR(join(&A, c->nl, c->lhs_idx), "m,k");
    CHECK_STR(join(&A, c->nr, c->rhs_idx), "k,n");
    CHECK_STR(join(&A, c->no, c->out_idx), "m,n");
    CHECK_STR(join(&A, c->nk, c->reduce_idx), "k");
    CHECK(c->noff == 0);
    CHECK_STR(ps->acc[c->lhs].map, "[M, N, K] -> { C0_prod[m, n, k] -> A[m, k] }");
    CHECK_STR(pv->st[b->reduce_stmt].out_domain, "[M, N, K] -> { C0[m, n] : 0 <= m < M and 0 <= n < N }");
    /* the bias add, the ReLU (compare and select), the cast and the store */
    CHECK_STR(epilogue(pv, b), "bias.cast,C1,C1.cmplt,C,C.cast,store.C");
    CHECK_STR(stmt_values(pv, b), "C0.prod,C0,bias.cast,C1,C1.cmplt,C,C.cast,store.C");
  }
  CHECK(pv->nedge == 0);
  pipe_free(&p);
}

/* Conv 3x3 s2 p1: pattern conv with the affine offsets 2*h+kh-1; the read of
 * the padded input is restricted to its in-bounds piece. */
static void test_conv_pattern(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "conv2d_bias_silu.json", DT_FP16, TO_POLY_VIEW));
  const poly_view *pv = p.pv;
  if (!pv) return pipe_free(&p);
  const pv_block *b = block(pv, PVB_CONTRACTION, 0);
  CHECK(b != NULL && pv->nblk == 1);
  if (b) {
    const pv_contraction *c = &b->con;
    const pv_stmt *ps = &pv->st[b->product_stmt];
    CHECK_STR(c->pattern, "conv");
    CHECK_STR(ps->acc[c->lhs].tensor, "X");
    CHECK_STR(ps->acc[c->lhs].via, "Xv");
    CHECK_STR(ps->acc[c->rhs].tensor, "Wt");
    CHECK_STR(join(&A, c->no, c->out_idx), "n,h,w,co");
    CHECK_STR(join(&A, c->nk, c->reduce_idx), "kh,kw,ci");
    CHECK_STR(join(&A, c->nr, c->rhs_idx), "co,kh,kw,ci");
    CHECK(c->noff == 2);
    if (c->noff == 2) {
      CHECK_STR(c->off_key[0], "X[1]");
      CHECK_STR(c->off_expr[0], "2*h+kh-1");
      CHECK_STR(c->off_key[1], "X[2]");
      CHECK_STR(c->off_expr[1], "2*w+kw-1");
    }
    const pv_access *x = &ps->acc[c->lhs];
    CHECK(strstr(x->map, "X[n, -1 + 2h + kh, -1 + 2w + kw, ci]") != NULL);
    CHECK(strstr(x->map, "-2h < kh <= H - 2h") != NULL);
    CHECK(x->pad_pieces >= 1 && x->pad_pieces <= PV_MAX_PIECES);
    CHECK(x->pma != NULL);
    CHECK_STR(epilogue(pv, b), "bias.cast,Y1,Y1.mul,Y1.exp2,Y1.add,Y1.recip,Y,Y.cast,store.Y");
  }
  CHECK(diag_count(&p.dl, "W2101") == 0);
  pipe_free(&p);
}

/* Causal attention: two contraction blocks (QK^T and PV) and the softmax
 * block between them, connected by edges. */
static void test_attention_blocks(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "attention_causal.json", DT_FP16, TO_POLY_VIEW));
  const poly_view *pv = p.pv;
  if (!pv) return pipe_free(&p);
  CHECK(count_blocks(pv, PVB_CONTRACTION) == 2 && count_blocks(pv, PVB_FUSED) == 1 && pv->nblk == 3);
  const pv_block *qk = block(pv, PVB_CONTRACTION, 0), *pvb = block(pv, PVB_CONTRACTION, 1);
  const pv_block *sm = block(pv, PVB_FUSED, 0);
  if (qk && pvb && sm) {
    CHECK_STR(join(&A, qk->con.nl, qk->con.lhs_idx), "b,h,m,d");
    CHECK_STR(join(&A, qk->con.nr, qk->con.rhs_idx), "b,h,n,d");
    CHECK_STR(join(&A, qk->con.nk, qk->con.reduce_idx), "d");
    CHECK_STR(pv->st[qk->product_stmt].acc[0].tensor, "Q");
    CHECK_STR(pv->st[qk->product_stmt].acc[1].tensor, "K");
    /* the scale and the causal mask are the first contraction's epilogue */
    CHECK_STR(epilogue(pv, qk), "S.mul,mask,S_masked");
    CHECK_STR(join(&A, pvb->con.nl, pvb->con.lhs_idx), "b,h,m,n");
    CHECK_STR(join(&A, pvb->con.nk, pvb->con.reduce_idx), "n");
    CHECK_STR(pv->st[pvb->product_stmt].acc[0].tensor, "P");
    CHECK_STR(pv->st[pvb->product_stmt].acc[1].tensor, "V");
    /* softmax: REDUCE MAX, SUB, EXP2, REDUCE SUM, FDIV, CAST */
    CHECK_STR(stmt_values(pv, sm), "S_masked.reduce,S_masked.sub,S_masked.exp2,S_masked.reduce.1,P_fp32,P");
    const pv_stmt *mx = stmt_of(pv, "S_masked.reduce");
    CHECK(mx && mx->ndims == 4);
    if (mx) CHECK_STR(mx->dims[3], "n"); /* reduced over the key axis */
  }
  CHECK(pv->nedge == 2);
  pipe_free(&p);
}

/* A graph with one Elementwise neg reading X through `node`. */
static const char *through(const char *xshape, const char *zshape, const char *node) {
  return J(arena_printf(&A,
                        "{'signature':{'dims':['N','M'],'inputs':[{'tensor':'X'}],'outputs':[{'tensor':'Z'}]},"
                        "'tensors':{'X':{'dtype':'fp32','shape':%s},'Z':{'dtype':'fp32','shape':%s}},"
                        "'graph':[{'name':'v','inputs':['X'],'outputs':['V'],%s},"
                        "{'op':'Elementwise','name':'neg','fn':'neg','inputs':['V'],'outputs':['Z']}]}",
                        xshape, zshape, node));
}

/* E1401: a slice with a symbolic end past the tensor's size reads outside
 * it; isl proves it and names a point. */
static void test_unguarded_access(void) {
  front p;
  pipe_init(&p);
  CHECK(!pipe_run(&p, through("['N']", "['N+1']", "'op':'Slice','attrs':{'starts':[0],'ends':['N+1']}"),
                  TO_POLY_VIEW));
  CHECK(diag_count(&p.dl, "E1401") == 1);
  const diag *d = diag_find(&p.dl, "E1401");
  if (d) {
    CHECK_STR(d->at, "Poly-View[Z]");
    CHECK(strstr(d->why, "for example") != NULL);
  }
  pipe_free(&p);
  /* the same read inside the tensor is fine */
  pipe_init(&p);
  CHECK(pipe_run(&p, through("['N']", "['N-1']", "'op':'Slice','attrs':{'starts':[1],'ends':['N']}"), TO_POLY_VIEW));
  pipe_free(&p);
}

/* W2101: a pad in five dims leaves ten pad pieces after coalesce. */
static void test_excessive_piecewise(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run(&p,
                 through("['N',2,3,4,5]", "['N+2',4,5,6,7]",
                         "'op':'Pad','attrs':{'pads':[[1,1],[1,1],[1,1],[1,1],[1,1]]}"),
                 TO_POLY_VIEW));
  CHECK(diag_count(&p.dl, "W2101") == 1 && !diag_has_errors(&p.dl));
  const pv_stmt *z = p.pv ? stmt_of(p.pv, "Z") : NULL;
  CHECK(z && z->acc[0].pad_pieces > PV_MAX_PIECES);
  pipe_free(&p);
  /* two padded dims stay under the limit */
  pipe_init(&p);
  CHECK(pipe_run(&p, through("['N',2]", "['N+2',4]", "'op':'Pad','attrs':{'pads':[[1,1],[1,1]]}"), TO_POLY_VIEW));
  CHECK(diag_count(&p.dl, "W2101") == 0);
  pipe_free(&p);
}

/* A non-affine view ends the SCoP: it is a boundary block of its own. */
static void test_non_scop_boundary(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run(&p, through("['N','M']", "['N*M']", "'op':'Reshape','attrs':{'shape':['N*M']}"), TO_POLY_VIEW));
  if (p.pv) {
    CHECK(count_blocks(p.pv, PVB_BOUNDARY) == 1 && count_blocks(p.pv, PVB_FUSED) == 1);
    const pv_block *b = block(p.pv, PVB_BOUNDARY, 0);
    if (b) CHECK_STR(stmt_values(p.pv, b), "V");
    const pv_stmt *v = stmt_of(p.pv, "V");
    CHECK(v && strncmp(v->acc[0].map, "non-affine:", 11) == 0);
    CHECK(p.pv->nedge == 1);
  }
  CHECK(diag_count(&p.dl, "W2103") == 1);
  pipe_free(&p);
}

/* E1203: an AxisMap that keeps a symbolic `%` in a view that is not marked
 * non_scop.  Built by hand: the IndexBook's reshape rule never produces it. */
static void test_missing_div_guard(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run(&p, through("['N']", "['N']", "'op':'Flip','attrs':{'axes':[0]}"), TO_INDEXBOOK));
  if (p.ib) {
    ib_entry *z = &p.ib->e[ib_find(p.ib, "Z")];
    CHECK_STR(z->in[0].value, "X");
    z->in[0].map[0] = sx_mod(&p.A, sx_var(&p.A, "i0"), sx_param(&p.A, "N"));
    CHECK(!z->non_scop);
    CHECK(pv_build(&p.A, p.ib, &p.dl) == NULL);
    CHECK(diag_count(&p.dl, "E1203") == 1);
    const diag *d = diag_find(&p.dl, "E1203");
    if (d) {
      CHECK_STR(d->at, "Poly-View");
      CHECK(strstr(d->why, "%") != NULL);
      CHECK_STR(d->suggestion, diag_default_suggestion(D_MISSING_DIV_GUARD));
    }
    /* marked non_scop, the same map is a boundary and no error */
    z->non_scop = true;
    z->non_scop_why = "test";
    diag_list dl;
    diag_init(&dl);
    CHECK(pv_build(&p.A, p.ib, &dl) != NULL && !diag_has_errors(&dl));
    diag_free(&dl);
  }
  pipe_free(&p);
}

/* The dump: spec §5.2 keys. */
static void test_dump(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "gemm_bias_relu.json", DT_FP16, TO_POLY_VIEW));
  if (p.pv) {
    cJSON *d = pv_dump(p.pv);
    const cJSON *v = cJSON_GetObjectItem(d, "poly_view");
    const cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItem(v, "blocks"), 0);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(b, "kind")), "contraction_pattern");
    const cJSON *at = cJSON_GetObjectItem(b, "attrs");
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(at, "pattern")), "matmul");
    CHECK(cJSON_IsObject(cJSON_GetObjectItem(at, "affine_offsets")));
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(b, "accesses")) == 3);
    CHECK(cJSON_IsArray(cJSON_GetObjectItem(v, "edges")));
    cJSON_Delete(d);
  }
  pipe_free(&p);
}

/* pv_verify accepts what pv_build makes and rejects each broken invariant:
 * a domain of the wrong dims, a statement in no block. */
static void test_verify(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "gemm_bias_relu.json", DT_FP16, TO_POLY_VIEW));
  if (p.pv) {
    diag_list dl;
    diag_init(&dl);
    CHECK(pv_verify(p.pv, &dl) && dl.n == 0);
    const char *dom = p.pv->st[0].domain;
    p.pv->st[0].domain = "[M] -> { S[m] : 0 <= m < M }"; /* one dim where the statement has more */
    CHECK(!pv_verify(p.pv, &dl) && diag_count(&dl, "E0004") == 1);
    p.pv->st[0].domain = dom;
    int blk = p.pv->block_of_stmt[0];
    p.pv->block_of_stmt[0] = p.pv->nblk;
    CHECK(!pv_verify(p.pv, &dl) && diag_count(&dl, "E0004") == 2);
    p.pv->block_of_stmt[0] = blk;
    CHECK(pv_verify(p.pv, &dl) && diag_count(&dl, "E0004") == 2);
    diag_free(&dl);
  }
  pipe_free(&p);
}

/* A sum of products is a contraction only when one side has an axis the
 * other lacks: sum(X[m,k] * X[m,k]) (RMSNorm's) is a row reduction in a
 * fused block, while sum(A[m,k] * v[k]) (a GEMV) stays a matmul. */
static void test_product_without_free_axis(void) {
  static const char *const graphs[2] = {
      "{'signature':{'dims':['M','K'],'inputs':[{'tensor':'X'}],'outputs':[{'tensor':'Y'}]},"
      "'tensors':{'X':{'dtype':'fp32','shape':['M','K']},'Y':{'dtype':'fp32','shape':['M']}},"
      "'graph':[{'op':'Elementwise','fn':'mul','inputs':['X','X'],'outputs':['X2']},"
      "{'op':'Reduce','inputs':['X2'],'outputs':['Y'],'attrs':{'op':'sum','axes':[-1]}}]}",
      "{'signature':{'dims':['M','K'],'inputs':[{'tensor':'A'},{'tensor':'v'}],'outputs':[{'tensor':'Y'}]},"
      "'tensors':{'A':{'dtype':'fp32','shape':['M','K']},'v':{'dtype':'fp32','shape':['K']},"
      "'Y':{'dtype':'fp32','shape':['M']}},"
      "'graph':[{'op':'Elementwise','fn':'mul','inputs':['A','v'],'outputs':['P']},"
      "{'op':'Reduce','inputs':['P'],'outputs':['Y'],'attrs':{'op':'sum','axes':[-1]}}]}"};
  for (int g = 0; g < 2; g++) {
    front p;
    pipe_init(&p);
    CHECK(pipe_run(&p, J(graphs[g]), TO_POLY_VIEW));
    if (p.pv) CHECK(count_blocks(p.pv, PVB_CONTRACTION) == (g == 0 ? 0 : 1));
    if (p.pv && g == 0) CHECK(count_blocks(p.pv, PVB_FUSED) == 1);
    pipe_free(&p);
  }
}

int main(void) {
  arena_init(&A);
  test_product_without_free_axis();
  test_verify();
  test_gemm_matmul_and_epilogue();
  test_conv_pattern();
  test_attention_blocks();
  test_unguarded_access();
  test_excessive_piecewise();
  test_non_scop_boundary();
  test_missing_div_guard();
  test_dump();
  arena_free(&A);
  return check_status("test_polyview");
}
