/* Region Buffer SSA (spec §6, 001 §3): formation from Poly-View blocks
 * (C-CON1 bodies, BroadcastInDim before a Binary, Transpose for a transposed
 * read, pads as Select with the pad value, the epilogue after the reduce,
 * the yield with its cast, attention's two regions with P deferred), SRNF
 * (R0 merging nested sums, R1 hoisting a reduce-invariant factor, R4 / E1601
 * through region_merge_reduce), E1602 NeutralInvalid, and region_verify on
 * hand-broken regions.  Graphs go through the real front half.
 * RG_DUMP=1 prints each region set. */
#include <math.h>

#include "pipe.h"
#include "region.h"

static arena A;

typedef struct rcase {
  front p;
  region_set *rs;
} rcase;

static void rg_print(const region_set *rs) {
  if (!getenv("RG_DUMP") || !rs) return;
  cJSON *j = region_dump(rs);
  char *s = cJSON_Print(j);
  printf("%s\n", s);
  free(s);
  cJSON_Delete(j);
}

/* Front half, then region_build; false (diagnostics kept) when any stage fails. */
static bool rg_run(rcase *c, const char *text, dtype T, const char *attrs) {
  memset(c, 0, sizeof *c);
  pipe_init(&c->p);
  cJSON *at = attrs ? cJSON_Parse(attrs) : NULL;
  fe_instance inst = {T, at, NULL};
  bool ok = pipe_run_inst(&c->p, text, &inst, TO_POLY_VIEW);
  cJSON_Delete(at);
  if (!ok) return pipe_show(&c->p), false;
  c->rs = region_build(&c->p.A, c->p.pv, &c->p.dl);
  rg_print(c->rs);
  return c->rs != NULL;
}

static bool rg_run_file(rcase *c, const char *name, dtype T, const char *attrs) {
  char *t = shared_graph(name);
  bool ok = rg_run(c, t, T, attrs);
  free(t);
  return ok;
}

static void rg_free(rcase *c) { pipe_free(&c->p); }

static int let_index(const region *r, const char *name) {
  for (int l = 0; l < r->nlets; l++)
    if (strcmp(r->lets[l].name, name) == 0) return l;
  return -1;
}

static const rexpr *let_expr(const region *r, const char *name) {
  int l = let_index(r, name);
  return l < 0 ? NULL : r->lets[l].e;
}

static const char *axes_s(const region *r, int n, const int *ax) {
  const char **s = ARENA_ARRAY(&A, const char *, n + 1);
  for (int i = 0; i < n; i++) s[i] = ax[i] >= 0 && ax[i] < r->niters + r->nred ? r->it[ax[i]].name : "?";
  return join(&A, n, s);
}

static int count_kind(const rexpr *e, rx_kind k) {
  if (!e) return 0;
  return (e->k == k) + count_kind(e->a, k) + count_kind(e->b, k) + count_kind(e->c, k);
}

static const char *input_name(const region *r, const rexpr *e) {
  return e && e->k == RX_READ && e->input >= 0 && e->input < r->nin ? r->in[e->input].name : "(not a read)";
}

static const char *map_s(const rexpr *e) {
  if (!e || e->k != RX_READ) return "(not a read)";
  const char **s = ARENA_ARRAY(&A, const char *, e->nmap + 1);
  for (int i = 0; i < e->nmap; i++) s[i] = sx_str(&A, e->map[i]);
  return join(&A, e->nmap, s);
}

static const char *GEMM_ROWSUM =
    "{'name':'gemm_rowsum','signature':{'dims':['M','N','K'],'inputs':[{'tensor':'A'},{'tensor':'B'}],"
    "'outputs':[{'tensor':'S'}]},'tensors':{'A':{'dtype':'T','shape':['M','K']},'B':{'dtype':'T','shape':['K','N']},"
    "'S':{'dtype':'fp32','shape':['M']}},'graph':[{'op':'GEMM','name':'gemm','inputs':['A','B'],'outputs':['C0'],"
    "'attrs':{'acc_dtype':'fp32'}},{'op':'Reduce','name':'rowsum','inputs':['C0'],'outputs':['S'],"
    "'attrs':{'op':'sum','axes':[1],'acc_dtype':'fp32'}}]}";

static const char *SOFTMAX =
    "{'name':'softmax','signature':{'dims':['M','N'],'inputs':[{'tensor':'X'}],'outputs':[{'tensor':'P'},"
    "{'tensor':'P0'}]},'tensors':{'X':{'dtype':'T','shape':['M','N']},'P':{'dtype':'T','shape':['M','N']},"
    "'P0':{'dtype':'fp32','shape':['M','N']}},'graph':[{'op':'Softmax','name':'rows','inputs':['X'],"
    "'outputs':['P'],'attrs':{'axis':-1}},{'op':'Softmax','name':'cols','inputs':['X'],'outputs':['P0'],"
    "'attrs':{'axis':0}}]}";

/* ---- formation ------------------------------------------------------------------------- */

/* C-CON1 (spec §6.3.1): the GEMM reduction's body is mul(Read A[m,k],
 * Read B[k,n]) with no BroadcastInDim inside; it is the accumulator. */
static void test_ccon1_gemm(void) {
  rcase c;
  CHECK(rg_run_file(&c, "gemm_bias_relu.json", DT_FP16, NULL));
  if (c.rs) {
    CHECK(c.rs->n == 1);
    const region *r = &c.rs->r[0];
    CHECK_STR(axes_s(r, r->niters, (int[]){0, 1}), "m,n");
    CHECK(r->nred == 1 && strcmp(r->it[2].name, "k") == 0);
    CHECK(r->acc_let == 0);
    const rexpr *acc = r->lets[0].e;
    CHECK(acc->k == RX_REDUCE && acc->rop == RED_SUM && acc->dt == DT_FP32 && acc->init == 0.0);
    CHECK_STR(axes_s(r, acc->nred, acc->red), "k");
    CHECK_STR(axes_s(r, acc->nax, acc->ax), "m,n");
    const rexpr *body = acc->a;
    CHECK(body->k == RX_BINARY && body->op == TINY_MUL);
    CHECK_STR(input_name(r, body->a), "A");
    CHECK_STR(map_s(body->a), "m,k");
    CHECK_STR(input_name(r, body->b), "B");
    CHECK_STR(map_s(body->b), "k,n");
    CHECK(count_kind(body, RX_BCAST) == 0 && count_kind(body, RX_TRANSPOSE) == 0);
    CHECK(body->dt == DT_FP64); /* CONTRACT's products are exact; the sum rounds to fp32 */
  }
  rg_free(&c);
  /* B stored [N,K]: still two direct reads, B at [n,k] */
  CHECK(rg_run_file(&c, "gemm_bias_relu_nt.json", DT_BF16, NULL));
  if (c.rs) {
    const region *r = &c.rs->r[0];
    const rexpr *body = r->lets[r->acc_let].e->a;
    CHECK_STR(map_s(body->b), "n,k");
    CHECK(count_kind(body, RX_BCAST) == 0 && count_kind(body, RX_TRANSPOSE) == 0);
  }
  rg_free(&c);
}

/* spec §6.4: add(acc[m,n], bias[n]) gets BroadcastInDim(bias, [M,N], [1]). */
static void test_broadcast_before_binary(void) {
  rcase c;
  CHECK(rg_run_file(&c, "gemm_bias_relu.json", DT_FP16, NULL));
  if (c.rs) {
    const region *r = &c.rs->r[0];
    const rexpr *c1 = let_expr(r, "C1");
    CHECK(c1 && c1->k == RX_BINARY && c1->op == TINY_ADD);
    if (c1) {
      CHECK(c1->a->k == RX_LET && c1->a->let == r->acc_let);
      const rexpr *bc = c1->b;
      CHECK(bc->k == RX_BCAST);
      if (bc->k == RX_BCAST) {
        CHECK_STR(axes_s(r, bc->nax, bc->ax), "m,n");
        CHECK(bc->a->nax == 1 && bc->bdims[0] == 1);
        CHECK(bc->a->k == RX_UNARY && bc->a->op == TINY_CAST && bc->a->dt == DT_FP32);
        CHECK_STR(input_name(r, bc->a->a), "bias");
      }
    }
  }
  rg_free(&c);
}

/* spec §6.4 2: X[m,n] + transpose(Z)[m,n] reads Z at [n,m]; the Read varies
 * over (n, m) and a Transpose puts it in the statement's order.  A value of
 * the region read in another axis order also gets one (column softmax). */
static void test_transpose_for_transposed_read(void) {
  rcase c;
  CHECK(rg_run(&c, J("{'name':'add_t','signature':{'dims':['M','N'],'inputs':[{'tensor':'X'},{'tensor':'Z'}],"
                     "'outputs':[{'tensor':'Y'}]},'tensors':{'X':{'dtype':'T','shape':['M','N']},"
                     "'Z':{'dtype':'T','shape':['N','M']},'Y':{'dtype':'T','shape':['M','N']}},"
                     "'graph':[{'op':'Transpose','name':'t','inputs':['Z'],'outputs':['Zt'],'attrs':{'perm':[1,0]}},"
                     "{'op':'Elementwise','name':'a','fn':'add','inputs':['X','Zt'],'outputs':['Y']}]}"),
               DT_FP16, NULL));
  if (c.rs) {
    const region *r = &c.rs->r[0];
    CHECK(r->nlets == 1);
    const rexpr *add = r->lets[0].e;
    CHECK(add->k == RX_BINARY && add->op == TINY_ADD);
    const rexpr *t = add->b;
    CHECK(t->k == RX_TRANSPOSE);
    if (t->k == RX_TRANSPOSE) {
      CHECK(t->perm[0] == 1 && t->perm[1] == 0);
      CHECK_STR(input_name(r, t->a), "Z");
      CHECK_STR(axes_s(r, t->a->nax, t->a->ax), "i1,i0");
      CHECK_STR(axes_s(r, t->nax, t->ax), "i0,i1");
    }
    CHECK(add->a->k == RX_READ); /* X is already in order */
  }
  rg_free(&c);
  CHECK(rg_run(&c, J(SOFTMAX), DT_FP16, NULL));
  if (c.rs) {
    CHECK(c.rs->n == 2);
    const region *r = &c.rs->r[1];
    const rexpr *z = let_expr(r, "X.reduce.3"); /* sum over rows of exp2 */
    CHECK(z && z->k == RX_REDUCE && z->a->k == RX_TRANSPOSE && z->a->a->k == RX_LET);
  }
  rg_free(&c);
}

/* spec §6.5: the pad of a conv becomes Select(guards, Read X, 0), marked as a
 * pad (its else is data); a pad of value -1 keeps -1. */
static void test_pad_is_select_with_pad_value(void) {
  rcase c;
  CHECK(rg_run_file(&c, "conv2d_bias_silu.json", DT_FP16, "{\"stride\":[2,2],\"pad\":[1,1]}"));
  if (c.rs) {
    const region *r = &c.rs->r[0];
    const rexpr *acc = r->lets[r->acc_let].e;
    CHECK_STR(axes_s(r, acc->nred, acc->red), "kh,kw,ci");
    const rexpr *sel = acc->a->a;
    CHECK(sel->k == RX_SELECT && !sel->a && sel->pad && sel->ng == 2);
    if (sel->k == RX_SELECT && sel->ng == 2) {
      CHECK_STR(sxs(&A, sel->guards[0].e), "2*h+kh-1");
      CHECK_STR(sxs(&A, sel->guards[0].lo), "0");
      CHECK_STR(sxs(&A, sel->guards[0].hi), "H");
      CHECK_STR(sxs(&A, sel->guards[1].e), "2*w+kw-1");
      CHECK(sel->c->k == RX_CONST && sel->c->cval == 0.0);
      CHECK_STR(input_name(r, sel->b), "X");
      CHECK_STR(map_s(sel->b), "n,2*h+kh-1,2*w+kw-1,ci");
    }
    CHECK_STR(input_name(r, acc->a->b), "Wt");
  }
  rg_free(&c);
  CHECK(rg_run(&c, J("{'name':'padm1','signature':{'dims':['M','N'],'inputs':[{'tensor':'X'}],"
                     "'outputs':[{'tensor':'Y'}]},'tensors':{'X':{'dtype':'T','shape':['M','N']},"
                     "'Y':{'dtype':'T','shape':['M+2','N']}},'graph':[{'op':'Pad','name':'p','inputs':['X'],"
                     "'outputs':['Y'],'attrs':{'pads':[[1,1],[0,0]],'value':-1.0}}]}"),
               DT_FP16, NULL));
  if (c.rs) {
    const region *r = &c.rs->r[0];
    const rexpr *sel = r->lets[0].e;
    CHECK(sel->k == RX_SELECT && sel->pad && sel->c->k == RX_CONST && sel->c->cval == -1.0);
  }
  rg_free(&c);
}

/* spec §6.6 R3, 001 §8: the lets after the accumulator that read it are the
 * epilogue; the yield carries the cast to fp16 (no CAST let). */
static void test_epilogue_and_yield_cast(void) {
  rcase c;
  CHECK(rg_run_file(&c, "gemm_bias_relu.json", DT_FP16, NULL));
  if (c.rs) {
    const region *r = &c.rs->r[0];
    CHECK(!r->lets[r->acc_let].post_reduce);
    int nepi = 0;
    for (int l = r->acc_let + 1; l < r->nlets; l++) nepi += r->lets[l].post_reduce;
    CHECK(nepi == r->nlets - 1 && nepi == 3); /* C1 = acc + bias, C1 > 0, C = where */
    for (int l = 0; l < r->nlets; l++) CHECK(!(r->lets[l].e->k == RX_UNARY && r->lets[l].e->op == TINY_CAST));
    CHECK(r->nyields == 1 && r->nout == 1);
    CHECK_STR(r->lets[r->yields[0].let].name, "C");
    CHECK(r->lets[r->yields[0].let].e->dt == DT_FP32);
    CHECK(r->yields[0].cast == DT_FP16);
    CHECK_STR(r->out[0].name, "C");
    CHECK(r->out[0].materialize == MAT_GMEM);
  }
  rg_free(&c);
  CHECK(rg_run_file(&c, "gemm_bias_relu.json", DT_BF16, NULL));
  if (c.rs) CHECK(c.rs->r[0].yields[0].cast == DT_BF16);
  rg_free(&c);
}

/* spec §6.8.3: S = QK^T with the mask and the row softmax in one region
 * (max and sum stay apart, R4), P yielded "deferred" to the P V region. */
static void test_attention_two_regions(void) {
  rcase c;
  CHECK(rg_run_file(&c, "attention_causal.json", DT_FP16, NULL));
  if (c.rs) {
    CHECK(c.rs->n == 2);
    const region *r0 = &c.rs->r[0], *r1 = &c.rs->r[1];
    CHECK_STR(r0->lets[r0->acc_let].name, "S");
    CHECK(r0->nout == 1 && strcmp(r0->out[0].name, "P") == 0);
    CHECK(r0->out[0].materialize == MAT_DEFERRED);
    CHECK(!r0->out[0].signature);
    int nmax = 0, nsum = 0;
    for (int l = 0; l < r0->nlets; l++)
      if (r0->lets[l].e->k == RX_REDUCE) {
        const rexpr *e = r0->lets[l].e;
        nmax += e->rop == RED_MAX, nsum += e->rop == RED_SUM;
        if (l != r0->acc_let) CHECK_STR(axes_s(r0, e->nred, e->red), "n"); /* softmax reduces an iter */
      }
    CHECK(nmax == 1 && nsum == 2);
    /* the second region reads P directly in its contraction */
    const rexpr *body = r1->lets[r1->acc_let].e->a;
    CHECK_STR(input_name(r1, body->a), "P");
    CHECK(!r1->in[body->a->input].signature);
    CHECK_STR(input_name(r1, body->b), "V");
    CHECK_STR(axes_s(r1, r1->lets[r1->acc_let].e->nred, r1->lets[r1->acc_let].e->red), "n");
  }
  rg_free(&c);
}

/* The former bug: a graph that is only softmax forms its regions with no
 * error, no accumulator (no contraction), reductions over an iter. */
static void test_softmax_regions(void) {
  rcase c;
  CHECK(rg_run(&c, J(SOFTMAX), DT_FP16, NULL));
  CHECK(c.p.dl.nerrors == 0);
  if (c.rs) {
    CHECK(c.rs->n == 2);
    for (int i = 0; i < c.rs->n; i++) {
      const region *r = &c.rs->r[i];
      CHECK(r->acc_let == -1);
      CHECK(r->niters == 2 && r->nred == 0);
      for (int l = 0; l < r->nlets; l++) {
        CHECK(!r->lets[l].post_reduce);
        const rexpr *e = r->lets[l].e;
        if (e->k == RX_REDUCE) CHECK(e->nred == 1 && e->red[0] < r->niters);
      }
    }
    CHECK_STR(c.rs->r[0].out[0].name, "P");
    CHECK_STR(c.rs->r[1].out[0].name, "P0");
  }
  rg_free(&c);
}

/* A value of a region read at shifted indices inside it (R[i] + R[i+1] of a
 * row sum) cannot be a let reference: reported, and region_build returns
 * NULL. */
static void test_shifted_read_is_reported(void) {
  rcase c;
  CHECK(!rg_run(&c, J("{'name':'shift','signature':{'dims':['M','N'],'inputs':[{'tensor':'X'}],"
                      "'outputs':[{'tensor':'Z'}]},'tensors':{'X':{'dtype':'T','shape':['M','N']},"
                      "'Z':{'dtype':'fp32','shape':['M-1']}},'graph':[{'op':'Reduce','name':'rs','inputs':['X'],"
                      "'outputs':['R'],'attrs':{'op':'sum','axes':[1],'acc_dtype':'fp32'}},"
                      "{'op':'Slice','name':'lo','inputs':['R'],'outputs':['R0'],'attrs':{'starts':[0],'ends':['M-1'],'steps':[1]}},"
                      "{'op':'Slice','name':'hi','inputs':['R'],'outputs':['R1'],'attrs':{'starts':[1],'ends':['M'],'steps':[1]}},"
                      "{'op':'Elementwise','name':'add','fn':'add','inputs':['R0','R1'],'outputs':['Z']}]}"),
                DT_FP16, NULL));
  CHECK(c.rs == NULL);
  CHECK(diag_count(&c.p.dl, "E1706") >= 1);
  rg_free(&c);
}

/* ---- SRNF -------------------------------------------------------------------------------- */

/* A row sum of a GEMM's output is a region of its own after the GEMM's (a
 * contraction's epilogue is pointwise, and the sum over n would leave the
 * contraction no N group): the GEMM's region yields C0, and the sum's
 * region reduces its read of C0 over n. */
static void test_rowsum_of_a_gemm_is_a_region_of_its_own(void) {
  rcase c;
  CHECK(rg_run(&c, J(GEMM_ROWSUM), DT_FP16, NULL));
  if (c.rs) {
    CHECK(c.rs->n == 2);
    const region *g = &c.rs->r[0], *r = &c.rs->r[c.rs->n - 1];
    CHECK(g->acc_let == 0 && g->nyields == 1);
    CHECK(r->acc_let < 0 && r->nlets == 1);
    const rexpr *e = r->lets[0].e;
    CHECK(e->k == RX_REDUCE && e->rop == RED_SUM);
    CHECK_STR(axes_s(r, e->nred, e->red), "n");
    CHECK_STR(axes_s(r, e->nax, e->ax), "m");
    CHECK(e->a->k == RX_READ);
    CHECK_STR(input_name(r, e->a), "C0");
  }
  rg_free(&c);
}

/* R1: sum_n(X * 0.3) becomes 0.3 * sum_n(X): the factor does not depend on n. */
static void test_srnf_r1_hoists_invariant_factor(void) {
  rcase c;
  CHECK(rg_run(&c, J("{'name':'ss','signature':{'dims':['M','N'],'inputs':[{'tensor':'X'}],"
                     "'outputs':[{'tensor':'S'}]},'tensors':{'X':{'dtype':'T','shape':['M','N']},"
                     "'S':{'dtype':'fp32','shape':['M']}},'graph':[{'op':'Elementwise','name':'s','fn':'mul',"
                     "'inputs':['X'],'outputs':['Xs'],'attrs':{'scalar':0.3}},{'op':'Reduce','name':'r','inputs':['Xs'],"
                     "'outputs':['S'],'attrs':{'op':'sum','axes':[1],'acc_dtype':'fp32'}}]}"),
               DT_FP16, NULL));
  if (c.rs) {
    CHECK(c.rs->n == 1);
    const region *r = &c.rs->r[0];
    CHECK(r->nlets == 1 && r->acc_let == -1);
    const rexpr *e = r->lets[0].e;
    CHECK(e->k == RX_BINARY && e->op == TINY_MUL);
    if (e->k == RX_BINARY) {
      CHECK(e->a->k == RX_CONST && fabs(e->a->cval - 0.3) < 1e-6);
      CHECK(e->b->k == RX_REDUCE && e->b->rop == RED_SUM);
      CHECK(e->b->a->k == RX_UNARY && e->b->a->op == TINY_CAST); /* cast(X) stays inside */
    }
  }
  rg_free(&c);
}

static rexpr *hand_read(arena *a, int input, int nax, const int *ax, dtype dt) {
  rexpr *e = region_expr_new(a, RX_READ);
  e->input = input;
  e->dt = dt;
  e->nax = nax;
  e->ax = ARENA_ARRAY(a, int, nax + 1);
  memcpy(e->ax, ax, sizeof(int) * (size_t)nax);
  return e;
}

static rexpr *hand_reduce(arena *a, reduce_op op, rexpr *body, int nax, const int *ax, int red) {
  rexpr *e = region_expr_new(a, RX_REDUCE);
  e->rop = op;
  e->dt = DT_FP32;
  e->init = op == RED_SUM ? 0.0 : op == RED_MAX ? -INFINITY : INFINITY;
  e->nred = 1;
  e->red = ARENA_ARRAY(a, int, 1);
  e->red[0] = red;
  e->nax = nax;
  e->ax = ARENA_ARRAY(a, int, nax + 1);
  memcpy(e->ax, ax, sizeof(int) * (size_t)nax);
  e->a = body;
  return e;
}

/* R4: a max over a sum is not merged (E1601); a sum over a sum is. */
static void test_srnf_r4_merge_reduce(void) {
  arena a;
  arena_init(&a);
  diag_list dl;
  diag_init(&dl);
  region_set rs = {.A = &a};
  rexpr *x = hand_read(&a, 0, 3, (int[]){0, 1, 2}, DT_FP32);
  rexpr *inner = hand_reduce(&a, RED_SUM, x, 2, (int[]){0, 1}, 2);
  rexpr *outer = hand_reduce(&a, RED_MAX, inner, 1, (int[]){0}, 1);
  rexpr *m = region_merge_reduce(&rs, outer, &dl);
  CHECK(m == outer && m->nred == 1 && m->a == inner);
  CHECK(diag_count(&dl, "E1601") == 1);
  const diag *d = diag_find(&dl, "E1601");
  CHECK(d && strstr(d->why, "max reduction over a sum") != NULL);
  diag_free(&dl);
  diag_init(&dl);
  rexpr *souter = hand_reduce(&a, RED_SUM, inner, 1, (int[]){0}, 1);
  m = region_merge_reduce(&rs, souter, &dl);
  CHECK(dl.n == 0);
  CHECK(m->k == RX_REDUCE && m->nred == 2 && m->red[0] == 1 && m->red[1] == 2 && m->a == x);
  diag_free(&dl);
  arena_free(&a);
}

/* ---- region_verify ------------------------------------------------------------------------- */

/* A hand-built region over iters (m) and a reduce axis (k), reading X[m,k]:
 * let 0 = Reduce(op, k){ body }, yielded into S[m]. */
typedef struct hand {
  arena a;
  diag_list dl;
  region_set rs;
  region r;
  region_axis it[2];
  region_memref in, out;
  region_let lets[2];
  region_yield y;
} hand;

static void hand_init(hand *h, reduce_op op, rexpr *(*body)(hand *h)) {
  memset(h, 0, sizeof *h);
  arena_init(&h->a);
  diag_init(&h->dl);
  h->it[0] = (region_axis){"m", sx_param(&h->a, "M")};
  h->it[1] = (region_axis){"k", sx_param(&h->a, "K")};
  const sx **sh = ARENA_ARRAY(&h->a, const sx *, 2);
  sh[0] = h->it[0].size, sh[1] = h->it[1].size;
  h->in = (region_memref){.name = "X", .entry = 0, .dt = DT_FP16, .rank = 2, .shape = sh, .alignment = 16,
                          .noalias = true, .layout = "row_major", .signature = true};
  h->out = (region_memref){.name = "S", .entry = 1, .dt = DT_FP32, .rank = 1, .shape = sh, .alignment = 16,
                           .noalias = true, .layout = "row_major", .materialize = MAT_GMEM, .signature = true};
  h->r = (region){.name = "hand", .niters = 1, .nred = 1, .it = h->it, .nin = 1, .nout = 1, .nlets = 1,
                  .nyields = 1, .in = &h->in, .out = &h->out, .lets = h->lets, .yields = &h->y, .acc_let = -1};
  h->lets[0] = (region_let){"s", hand_reduce(&h->a, op, body(h), 1, (int[]){0}, 1), false};
  h->y = (region_yield){0, 0, DT_FP32};
  h->rs = (region_set){.A = &h->a, .n = 1, .r = &h->r};
}

static void hand_free(hand *h) {
  diag_free(&h->dl);
  arena_free(&h->a);
}

static rexpr *x_mk(hand *h) {
  rexpr *x = hand_read(&h->a, 0, 2, (int[]){0, 1}, DT_FP16);
  x->nmap = 2;
  x->map = ARENA_ARRAY(&h->a, const sx *, 2);
  x->map[0] = sx_var(&h->a, "m");
  x->map[1] = sx_var(&h->a, "k");
  return x;
}

/* Select(k < K - 1 (a tail predicate, not a pad), cast X, else_value) */
static double else_value;
static bool else_pad;
static rexpr *tail_select(hand *h) {
  rexpr *cx = region_expr_new(&h->a, RX_UNARY);
  cx->op = TINY_CAST;
  cx->dt = DT_FP32;
  cx->a = x_mk(h);
  cx->nax = 2;
  cx->ax = cx->a->ax;
  rexpr *s = region_expr_new(&h->a, RX_SELECT);
  s->dt = DT_FP32;
  s->pad = else_pad;
  s->ng = 1;
  s->guards = ARENA_NEW(&h->a, ib_guard);
  s->guards->e = sx_var(&h->a, "k");
  s->guards->lo = sx_int(&h->a, 0);
  s->guards->hi = sx_add_int(&h->a, sx_param(&h->a, "K"), -1);
  s->b = cx;
  s->c = region_expr_new(&h->a, RX_CONST);
  s->c->dt = DT_FP32;
  s->c->cval = else_value;
  s->nax = 2;
  s->ax = cx->ax;
  return s;
}

static int verify_count(reduce_op op, double ev, bool pad, const char *code) {
  hand h;
  else_value = ev;
  else_pad = pad;
  hand_init(&h, op, tail_select);
  bool ok = region_verify(&h.rs, &h.dl);
  int n = diag_count(&h.dl, code);
  if (!ok && n == 0) diag_print_text(&h.dl, "unexpected");
  hand_free(&h);
  return n;
}

/* E1602: a tail Select directly in a reduction body must give the neutral
 * (sum 0, max -inf); a pad Select's else is data and is not checked. */
static void test_e1602_neutral_invalid(void) {
  CHECK(verify_count(RED_SUM, 0.0, false, "E1602") == 0);
  CHECK(verify_count(RED_SUM, 1.0, false, "E1602") == 1);
  CHECK(verify_count(RED_SUM, 1.0, true, "E1602") == 0); /* a pad of 1: real data */
  CHECK(verify_count(RED_MAX, 0.0, false, "E1602") == 1);
  CHECK(verify_count(RED_MAX, -INFINITY, false, "E1602") == 0);
  CHECK(verify_count(RED_MIN, INFINITY, false, "E1602") == 0);
  /* the whole check on a clean hand-built region passes */
  hand h;
  else_value = 0.0;
  else_pad = false;
  hand_init(&h, RED_SUM, tail_select);
  CHECK(region_verify(&h.rs, &h.dl) && h.dl.n == 0);
  const diag *d;
  hand_free(&h);
  else_value = 2.0;
  hand_init(&h, RED_SUM, tail_select);
  CHECK(!region_verify(&h.rs, &h.dl));
  d = diag_find(&h.dl, "E1602");
  CHECK(d && strstr(d->why, "sum reduction") && strstr(d->why, "neutral is 0"));
  hand_free(&h);
}

/* region_verify on regions broken by hand, one invariant each. */
static bool breaks(void (*mutate)(region *r, arena *a), const char *code, const char *why_part) {
  rcase c;
  bool built = rg_run_file(&c, "gemm_bias_relu.json", DT_FP16, NULL);
  CHECK(built);
  if (!built) return rg_free(&c), false;
  diag_list dl;
  diag_init(&dl);
  mutate(&c.rs->r[0], &c.p.A);
  bool ok = region_verify(c.rs, &dl);
  bool hit = false;
  for (int i = 0; i < dl.n; i++)
    hit |= strcmp(diag_code(dl.items[i].id), code) == 0 && (!why_part || strstr(dl.items[i].why, why_part));
  hit &= !ok;
  if (!hit) {
    fprintf(stderr, "expected %s (%s), got:\n", code, why_part ? why_part : "");
    diag_print_text(&dl, "verify");
  }
  diag_free(&dl);
  rg_free(&c);
  return hit;
}

static void m_drop_broadcast(region *r, arena *a) {
  (void)a;
  rexpr *c1 = r->lets[1].e;
  c1->b = c1->b->a; /* bias[n] added to acc[m,n] without BroadcastInDim */
}
static void m_later_let(region *r, arena *a) {
  (void)a;
  r->lets[1].e->a->let = 2; /* C1 reads a let defined after it */
}
static void m_acc_not_contraction(region *r, arena *a) {
  (void)a;
  r->acc_let = 2;
  for (int l = 0; l < r->nlets; l++) r->lets[l].post_reduce = false;
}
static void m_fp16_sum(region *r, arena *a) {
  (void)a;
  r->lets[0].e->dt = DT_FP16;
}
static void m_epilogue_first(region *r, arena *a) {
  (void)a;
  r->lets[0].post_reduce = true;
}
static void m_unyielded(region *r, arena *a) {
  (void)a;
  r->nyields = 0;
}
static void m_bad_bdims(region *r, arena *a) {
  (void)a;
  r->lets[1].e->b->bdims[0] = 0; /* bias's n placed on m */
}
static void m_keeps_reduced_axis(region *r, arena *a) {
  rexpr *acc = r->lets[0].e;
  int *ax = ARENA_ARRAY(a, int, 3);
  ax[0] = 0, ax[1] = 1, ax[2] = 2;
  acc->ax = ax;
  acc->nax = 3;
}
static void m_body_not_read(region *r, arena *a) {
  rexpr *acc = r->lets[0].e;
  rexpr *neg = region_expr_new(a, RX_UNARY);
  neg->op = TINY_NEG;
  neg->dt = acc->a->a->dt;
  neg->a = acc->a->a;
  neg->nax = neg->a->nax;
  neg->ax = neg->a->ax;
  acc->a->a = neg; /* mul(-A, B): no longer a direct read (C-CON1) */
}
static void m_bad_transpose(region *r, arena *a) {
  rexpr *c1 = r->lets[1].e;
  rexpr *t = region_expr_new(a, RX_TRANSPOSE);
  t->a = c1->a;
  t->dt = t->a->dt;
  t->nax = 2;
  t->ax = t->a->ax; /* same order as the operand, but perm says swapped */
  t->perm = ARENA_ARRAY(a, int, 2);
  t->perm[0] = 1, t->perm[1] = 0;
  c1->a = t;
}
static void m_unguarded_select(region *r, arena *a) {
  (void)a;
  rexpr *sel = r->lets[3].e; /* C = where(C1 > 0, C1, 0) */
  sel->a = NULL;
  sel->ng = 0;
}
static void m_read_rank(region *r, arena *a) {
  (void)a;
  r->lets[0].e->a->a->nmap = 1;
}

static void test_verify_rejects_broken_regions(void) {
  CHECK(breaks(m_drop_broadcast, "E0004", "BroadcastInDim missing"));
  CHECK(breaks(m_later_let, "E0004", "not an earlier let"));
  CHECK(breaks(m_acc_not_contraction, "E0004", "not a Reduce(sum)"));
  CHECK(breaks(m_fp16_sum, "E1501", "sums in fp16"));
  CHECK(breaks(m_epilogue_first, "E0004", "precedes the reduction"));
  CHECK(breaks(m_unyielded, "E0004", "never yielded"));
  CHECK(breaks(m_bad_bdims, "E0004", "BroadcastInDim puts operand axis"));
  CHECK(breaks(m_keeps_reduced_axis, "E0004", "keeps its reduced axis"));
  CHECK(breaks(m_body_not_read, "E0004", "C-CON1"));
  CHECK(breaks(m_bad_transpose, "E0004", "Transpose result axis"));
  CHECK(breaks(m_unguarded_select, "E0004", "UnguardedAccess"));
  CHECK(breaks(m_read_rank, "E0004", "read map of 1 entries for rank 2"));
}

/* Every graph here forms regions that verify, with no diagnostics. */
static void test_shared_graphs_verify(void) {
  static const struct {
    const char *g, *attrs;
  } gs[] = {{"gemm_bias_relu.json", NULL},
            {"gemm_bias_relu_nt.json", NULL},
            {"conv2d_bias_silu.json", "{\"stride\":[2,2],\"pad\":[1,1]}"},
            {"attention_causal.json", NULL}};
  for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++) {
    rcase c;
    CHECK(rg_run_file(&c, gs[i].g, DT_FP16, gs[i].attrs));
    CHECK(c.p.dl.n == 0);
    if (c.rs) {
      diag_list dl;
      diag_init(&dl);
      CHECK(region_verify(c.rs, &dl) && dl.n == 0);
      diag_free(&dl);
    }
    rg_free(&c);
  }
}

/* region_expr_text, the comments' infix form: parentheses only where the
 * binding needs them, functions by name, a reduce's init only when it is
 * not the op's identity. */
static void test_expr_text(void) {
  region_let lets[3] = {{.name = "a"}, {.name = "b"}, {.name = "c"}};
  region_axis its[1] = {{.name = "k"}};
  region r = {.name = "t", .lets = lets, .nlets = 3, .it = its};
  rexpr la = {.k = RX_LET, .let = 0}, lb = {.k = RX_LET, .let = 1}, lc = {.k = RX_LET, .let = 2};
  rexpr bc = {.k = RX_BINARY, .op = TINY_SUB, .a = &lb, .b = &lc};
  rexpr ab = {.k = RX_BINARY, .op = TINY_ADD, .a = &la, .b = &lb};
  CHECK_STR(region_expr_text(&A, &r, &(rexpr){.k = RX_BINARY, .op = TINY_SUB, .a = &la, .b = &bc}), "a - (b - c)");
  CHECK_STR(region_expr_text(&A, &r, &(rexpr){.k = RX_BINARY, .op = TINY_SUB, .a = &bc, .b = &la}), "b - c - a");
  CHECK_STR(region_expr_text(&A, &r, &(rexpr){.k = RX_BINARY, .op = TINY_MUL, .a = &ab, .b = &lc}), "(a + b) * c");
  CHECK_STR(region_expr_text(&A, &r, &(rexpr){.k = RX_BINARY, .op = TINY_FDIV, .a = &lc, .b = &(rexpr){.k = RX_BINARY, .op = TINY_MUL, .a = &la, .b = &lb}}),
            "c / (a * b)");
  CHECK_STR(region_expr_text(&A, &r, &(rexpr){.k = RX_UNARY, .op = TINY_NEG, .a = &ab}), "-(a + b)");
  CHECK_STR(region_expr_text(&A, &r, &(rexpr){.k = RX_BINARY, .op = TINY_MAX, .a = &ab, .b = &lc}), "max(a + b, c)");
  CHECK_STR(region_expr_text(&A, &r, &(rexpr){.k = RX_UNARY, .op = TINY_CAST, .dt = DT_FP16, .a = &ab}), "fp16(a + b)");
  CHECK_STR(region_expr_text(&A, &r, &(rexpr){.k = RX_UNARY, .op = TINY_CAST, .dt = DT_FP32, .a = &ab}), "a + b");
  rexpr lt = {.k = RX_BINARY, .op = TINY_CMPLT, .a = &ab, .b = &lc};
  CHECK_STR(region_expr_text(&A, &r, &(rexpr){.k = RX_SELECT, .a = &lt, .b = &la, .c = &(rexpr){.k = RX_CONST, .cval = -INFINITY}}),
            "select(a + b < c, a, -inf)");
  CHECK_STR(region_expr_text(&A, &r, &(rexpr){.k = RX_BINARY, .op = TINY_MUL, .a = &la, .b = &(rexpr){.k = RX_CONST, .cval = 0.125}}),
            "a * 0.125");
  CHECK_STR(region_expr_text(&A, &r, &(rexpr){.k = RX_REDUCE, .rop = RED_MAX, .nred = 1, .red = (int[]){0}, .init = 0, .a = &la}),
            "max[k](a; init 0)");
  CHECK_STR(region_expr_text(&A, &r, &(rexpr){.k = RX_REDUCE, .rop = RED_SUM, .nred = 1, .red = (int[]){0}, .init = 0, .a = &ab}),
            "sum[k](a + b)");
}

int main(void) {
  arena_init(&A);
  test_ccon1_gemm();
  test_expr_text();
  test_broadcast_before_binary();
  test_transpose_for_transposed_read();
  test_pad_is_select_with_pad_value();
  test_epilogue_and_yield_cast();
  test_attention_two_regions();
  test_softmax_regions();
  test_shifted_read_is_reported();
  test_rowsum_of_a_gemm_is_a_region_of_its_own();
  test_srnf_r1_hoists_invariant_factor();
  test_srnf_r4_merge_reduce();
  test_e1602_neutral_invalid();
  test_verify_rejects_broken_regions();
  test_shared_graphs_verify();
  arena_free(&A);
  return check_status("test_region");
}
