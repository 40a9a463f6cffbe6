/* Tiny IR (spec §3, §10.1): lowering of every frontend op, the ewise.def
 * decompositions, automatic RESHAPE/EXPAND for right-aligned broadcast,
 * dtype promotion and casts, the naive tinygrad matmul folded into the same
 * CONTRACT as GEMM, the builders' shape rules and tiny_verify. */
#include <math.h>

#include "pipe.h"

static arena A;

/* "OP OP OP" of the DAG, without BUFFERs (they come first, one per input). */
static const char *ops(const tiny_dag *d) {
  const char **names = ARENA_ARRAY(&A, const char *, d->n + 1);
  int n = 0;
  for (int i = 0; i < d->n; i++)
    if (d->u[i].op != TINY_BUFFER) names[n++] = tiny_op_name(d->u[i].op);
  return join(&A, n, names);
}

static const char *shp(const tiny_uop *u) { return u ? shape_s(&A, u->rank, u->shape) : "(none)"; }

/* A graph with inputs X (and Y) of the given dtypes and shapes, a body of
 * nodes, and the output Z. */
static const char *graph(const char *dims, const char *x, const char *y, const char *z, const char *nodes) {
  return J(arena_printf(&A,
                        "{'signature':{'dims':%s,'inputs':[{'tensor':'X'}%s],'outputs':[{'tensor':'Z'}]},"
                        "'tensors':{'X':%s%s%s,'Z':%s},'graph':%s}",
                        dims, y ? ",{'tensor':'Y'}" : "", x, y ? ",'Y':" : "", y ? y : "", z, nodes));
}

static bool lower(front *p, const char *text) {
  pipe_init(p);
  bool ok = pipe_run(p, text, TO_TINY);
  if (!ok) pipe_show(p);
  return ok;
}

/* GEMM + bias + ReLU as spec §3.5.1: CONTRACT, the bias cast to the
 * accumulator and EXPANDed, ADD, ReLU as WHERE(CMPLT(0,x),x,0), CAST back. */
static void test_gemm_bias_relu(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "gemm_bias_relu.json", DT_FP16, TO_TINY));
  const tiny_dag *d = p.tiny;
  CHECK_STR(ops(d), "CONTRACT,CAST,RESHAPE,EXPAND,ADD,CONST,CMPLT,CONST,WHERE,CAST,STORE");
  const tiny_uop *c0 = tiny_node(d, "C0");
  CHECK(c0 && c0->op == TINY_CONTRACT && c0->dt == DT_FP32);
  if (c0) {
    CHECK_STR(c0->con->pattern, "matmul");
    CHECK_STR(join(&A, c0->con->nl, c0->con->lhs_idx), "m,k");
    CHECK_STR(join(&A, c0->con->nr, c0->con->rhs_idx), "k,n");
    CHECK_STR(join(&A, c0->con->no, c0->con->out_idx), "m,n");
    CHECK_STR(join(&A, c0->con->nk, c0->con->reduce_idx), "k");
    CHECK_STR(d->u[c0->src[0]].out, "A");
    CHECK_STR(d->u[c0->src[1]].out, "B");
  }
  const tiny_uop *bx = tiny_node(d, "bias.expand");
  CHECK_STR(shp(bx), "[M,N]");
  CHECK(bx && bx->dt == DT_FP32);
  CHECK_STR(shp(tiny_node(d, "bias.reshape")), "[1,N]");
  const tiny_uop *c1 = tiny_node(d, "C1");
  CHECK(c1 && c1->op == TINY_ADD && c1->src[1] == tiny_find(d, "bias.expand"));
  const tiny_uop *c = tiny_node(d, "C");
  CHECK(c && c->op == TINY_WHERE && c->dt == DT_FP32 && d->u[c->src[0]].op == TINY_CMPLT);
  CHECK(c && d->u[c->src[0]].dt == DT_BOOL);
  const tiny_uop *cc = tiny_node(d, "C.cast");
  CHECK(cc && cc->op == TINY_CAST && cc->dt == DT_FP16);
  const tiny_uop *st = tiny_node(d, "store.C");
  CHECK(st && st->op == TINY_STORE && !strcmp(st->tensor, "C") && st->src[0] == tiny_find(d, "C.cast"));
  CHECK(tiny_verify(d, &p.dl));
  pipe_free(&p);
}

/* Conv 3x3 s2 p1 (spec §3.5.2): PAD, the affine VIEW (im2col), CONTRACT. */
static void test_conv(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "conv2d_bias_silu.json", DT_FP16, TO_TINY));
  const tiny_dag *d = p.tiny;
  const tiny_uop *xp = tiny_node(d, "Xp"), *xv = tiny_node(d, "Xv"), *y0 = tiny_node(d, "Y0");
  CHECK(xp && xp->op == TINY_PAD && xv && xv->op == TINY_VIEW && y0 && y0->op == TINY_CONTRACT);
  if (xp && xv && y0) {
    CHECK_STR(shp(xp), "[N,H+2,W+2,C]");
    CHECK_STR(shape_s(&A, 4, xp->lo), "[0,1,1,0]");
    CHECK_STR(shape_s(&A, 4, xp->hi), "[0,1,1,0]");
    CHECK(xp->cval == 0);
    CHECK_STR(shp(xv), "[N,floor((H+1)/2),floor((W+1)/2),C,3,3]");
    CHECK_STR(shape_s(&A, 4, xv->vmap), "[v0,2*v1+v4,2*v2+v5,v3]");
    CHECK_STR(join(&A, 6, xv->labels), "n,h,w,ci,kh,kw");
    CHECK_STR(y0->con->pattern, "conv2d");
    CHECK(y0->con->strides[0] == 2 && y0->con->strides[1] == 2);
    CHECK_STR(join(&A, y0->con->nl, y0->con->lhs_idx), "n,h,w,ci,kh,kw");
    CHECK_STR(join(&A, y0->con->nr, y0->con->rhs_idx), "co,kh,kw,ci");
    CHECK_STR(join(&A, y0->con->no, y0->con->out_idx), "n,h,w,co");
    CHECK_STR(join(&A, y0->con->nk, y0->con->reduce_idx), "kh,kw,ci");
    CHECK_STR(shp(y0), "[N,floor((H+1)/2),floor((W+1)/2),K]");
    CHECK(y0->dt == DT_FP32);
  }
  /* SiLU = x * recip(1 + exp2(-log2e * x)) */
  CHECK(tiny_count(d, TINY_EXP2) == 1 && tiny_count(d, TINY_RECIP) == 1);
  pipe_free(&p);
}

/* Causal attention (spec §3.5.3): QK^T CONTRACT, scale with log2(e) folded
 * in, the mask as WHERE on RANGE comparisons, REDUCE MAX / SUB / EXP2 /
 * REDUCE SUM / FDIV over the key axis n, CAST, PV CONTRACT. */
static void test_attention(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "attention_causal.json", DT_FP16, TO_TINY));
  const tiny_dag *d = p.tiny;
  CHECK(tiny_count(d, TINY_CONTRACT) == 2);
  const tiny_uop *s = tiny_node(d, "S"), *o = tiny_node(d, "O");
  CHECK(s && o);
  if (s && o) {
    CHECK_STR(join(&A, s->con->nl, s->con->lhs_idx), "b,h,m,d");
    CHECK_STR(join(&A, s->con->nr, s->con->rhs_idx), "b,h,n,d");
    CHECK_STR(join(&A, s->con->no, s->con->out_idx), "b,h,m,n");
    CHECK_STR(join(&A, s->con->nk, s->con->reduce_idx), "d");
    CHECK_STR(join(&A, o->con->nl, o->con->lhs_idx), "b,h,m,n");
    CHECK_STR(join(&A, o->con->nr, o->con->rhs_idx), "b,h,n,d");
    CHECK_STR(join(&A, o->con->nk, o->con->reduce_idx), "n");
    CHECK_STR(d->u[o->src[0]].out, "P");
    CHECK(d->u[o->src[0]].dt == DT_FP16 && o->dt == DT_FP32);
  }
  int nmax = 0, nsum = 0;
  for (int i = 0; i < d->n; i++) {
    const tiny_uop *u = &d->u[i];
    if (u->op != TINY_REDUCE) continue;
    CHECK(u->naxes == 1 && u->axes[0] == 3);
    CHECK(d->u[u->src[0]].labels && !strcmp(d->u[u->src[0]].labels[3], "n"));
    nmax += u->rop == RED_MAX;
    nsum += u->rop == RED_SUM;
  }
  CHECK(nmax == 1 && nsum == 1);
  const tiny_uop *mask = tiny_node(d, "mask"), *sm = tiny_node(d, "S_masked");
  CHECK(mask && mask->op == TINY_CMPLT && mask->dt == DT_BOOL);
  CHECK(tiny_count(d, TINY_RANGE) == 2);
  CHECK(sm && sm->op == TINY_WHERE);
  if (sm) CHECK(d->u[sm->src[1]].op == TINY_CONST && isinf(d->u[sm->src[1]].cval) && d->u[sm->src[1]].cval < 0);
  /* the scale: log2(e) * rsqrt(D) */
  bool scale = false;
  for (int i = 0; i < d->n; i++)
    if (d->u[i].op == TINY_CONST && d->u[i].crsqrt && !strcmp(d->u[i].crsqrt, "D") &&
        fabs(d->u[i].cval - 1.4426950408889634) < 1e-12)
      scale = true;
  CHECK(scale);
  CHECK(tiny_count(d, TINY_EXP2) == 1 && tiny_count(d, TINY_FDIV) == 1 && tiny_count(d, TINY_SUB) == 1);
  pipe_free(&p);
}

/* The UOps an ewise.def decomposition names, "ADD,EXP2,MUL,RECIP" sorted. */
static const char *decomp_ops(const char *s) {
  const char *names[64];
  int n = 0;
  for (const char *p = s; *p;) {
    if (*p >= 'A' && *p <= 'Z') {
      const char *b = p;
      while ((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) p++;
      if (*p == '(') names[n++] = arena_strndup(&A, b, (size_t)(p - b));
    } else {
      p++;
    }
  }
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      const char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  return join(&A, n, names);
}

static const char *alu_ops_sorted(const tiny_dag *d) {
  const char **names = ARENA_ARRAY(&A, const char *, d->n + 1);
  int n = 0;
  for (int i = 0; i < d->n; i++)
    if (tiny_op_kind(d->u[i].op) == TK_ALU && d->u[i].op != TINY_CAST) names[n++] = tiny_op_name(d->u[i].op);
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      const char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  return join(&A, n, names);
}

/* Every elementwise function lowers to exactly the UOps of its ewise.def
 * decomposition. */
static void test_ewise_decompositions(void) {
  for (int fn = 0; fn < EW__COUNT; fn++) {
    if (fn == EW_CAST || fn == EW_WHERE) continue;
    int ar = ewise_arity((ewise_fn)fn);
    const char *node = arena_printf(&A, "[{'op':'Elementwise','fn':'%s','inputs':['X'%s],'outputs':['Z']}]",
                                    ewise_name((ewise_fn)fn), ar == 2 ? ",'Y'" : ar == 3 ? ",'Y','Y'" : "");
    const char *t = "{'dtype':'fp32','shape':['M']}";
    front p;
    CHECK(lower(&p, graph("['M']", t, ar >= 2 ? t : NULL, t, node)));
    if (p.tiny) {
      const char *want = decomp_ops(ewise_decomposition((ewise_fn)fn)), *got = alu_ops_sorted(p.tiny);
      if (strcmp(want, got) != 0) fprintf(stderr, "fn %s: ", ewise_name((ewise_fn)fn));
      CHECK_STR(got, want);
      CHECK(tiny_count(p.tiny, TINY_CAST) == 0);
    }
    pipe_free(&p);
  }
  /* where: a non-bool condition is compared with 0; cast is a CAST */
  front p;
  CHECK(lower(&p, J("{'signature':{'dims':['M'],'inputs':[{'tensor':'X'},{'tensor':'Y'},{'tensor':'W'}],"
                    "'outputs':[{'tensor':'Z'}]},'tensors':{'X':{'dtype':'fp32','shape':['M']},"
                    "'Y':{'dtype':'fp32','shape':['M']},'W':{'dtype':'fp32','shape':[1]},'Z':{'dtype':'fp32','shape':['M']}},"
                    "'graph':[{'op':'Elementwise','fn':'where','inputs':['X','Y','W'],'outputs':['Z']}]}")));
  if (p.tiny) CHECK_STR(ops(p.tiny), "CONST,CMPNE,EXPAND,WHERE,STORE");
  pipe_free(&p);
  CHECK(lower(&p, graph("['M']", "{'dtype':'fp32','shape':['M']}", NULL, "{'dtype':'bf16','shape':['M']}",
                        "[{'op':'Elementwise','fn':'cast','inputs':['X'],'outputs':['Z'],'attrs':{'to':'bf16'}}]")));
  if (p.tiny) CHECK_STR(ops(p.tiny), "CAST,STORE");
  pipe_free(&p);
  /* a scalar operand is a CONST of the computation dtype */
  CHECK(lower(&p, graph("['M']", "{'dtype':'fp16','shape':['M']}", NULL, "{'dtype':'fp16','shape':['M']}",
                        "[{'op':'Elementwise','fn':'mul','inputs':['X'],'outputs':['Z'],'attrs':{'scalar':0.5}}]")));
  if (p.tiny) {
    CHECK_STR(ops(p.tiny), "CONST,MUL,STORE");
    CHECK(p.tiny->u[1].cval == 0.5 && p.tiny->u[1].dt == DT_FP16 && p.tiny->u[2].dt == DT_FP16);
  }
  pipe_free(&p);
}

/* Right-aligned broadcast inserts RESHAPE (leading 1s) and EXPAND, and
 * nothing when the shapes agree. */
static void test_auto_expand(void) {
  front p;
  CHECK(lower(&p, graph("['M','N']", "{'dtype':'fp32','shape':['M',1]}", "{'dtype':'fp32','shape':[1,'N']}",
                        "{'dtype':'fp32','shape':['M','N']}",
                        "[{'op':'Elementwise','fn':'mul','inputs':['X','Y'],'outputs':['Z']}]")));
  if (p.tiny) {
    CHECK_STR(ops(p.tiny), "EXPAND,EXPAND,MUL,STORE");
    CHECK_STR(shp(tiny_node(p.tiny, "X.expand")), "[M,N]");
    CHECK_STR(shp(tiny_node(p.tiny, "Y.expand")), "[M,N]");
  }
  pipe_free(&p);
  CHECK(lower(&p, graph("['M','N','K']", "{'dtype':'fp32','shape':['K','M','N']}", "{'dtype':'fp32','shape':['N']}",
                        "{'dtype':'fp32','shape':['K','M','N']}",
                        "[{'op':'Elementwise','fn':'add','inputs':['X','Y'],'outputs':['Z']}]")));
  if (p.tiny) {
    CHECK_STR(ops(p.tiny), "RESHAPE,EXPAND,ADD,STORE");
    CHECK_STR(shp(tiny_node(p.tiny, "Y.reshape")), "[1,1,N]");
    const tiny_uop *z = tiny_node(p.tiny, "Z");
    CHECK(z && z->src[0] == tiny_find(p.tiny, "X"));
  }
  pipe_free(&p);
  CHECK(lower(&p, graph("['M']", "{'dtype':'fp32','shape':['M']}", "{'dtype':'fp32','shape':['M']}",
                        "{'dtype':'fp32','shape':['M']}",
                        "[{'op':'Elementwise','fn':'sub','inputs':['X','Y'],'outputs':['Z']}]")));
  if (p.tiny) CHECK_STR(ops(p.tiny), "SUB,STORE");
  pipe_free(&p);
}

/* Promotion: the narrower operand is CAST; fp16 with bf16 meet in fp32; the
 * result is CAST to the declared output dtype before the STORE. */
static void test_dtype_promotion(void) {
  front p;
  CHECK(lower(&p, graph("['M']", "{'dtype':'fp16','shape':['M']}", "{'dtype':'fp32','shape':['M']}",
                        "{'dtype':'fp32','shape':['M']}",
                        "[{'op':'Elementwise','fn':'add','inputs':['X','Y'],'outputs':['Z']}]")));
  if (p.tiny) {
    CHECK_STR(ops(p.tiny), "CAST,ADD,STORE");
    CHECK(tiny_node(p.tiny, "X.cast")->dt == DT_FP32);
  }
  pipe_free(&p);
  CHECK(lower(&p, graph("['M']", "{'dtype':'fp16','shape':['M']}", "{'dtype':'bf16','shape':['M']}",
                        "{'dtype':'fp16','shape':['M']}",
                        "[{'op':'Elementwise','fn':'max','inputs':['X','Y'],'outputs':['Z']}]")));
  if (p.tiny) {
    CHECK_STR(ops(p.tiny), "CAST,CAST,MAX,CAST,STORE");
    CHECK(tiny_node(p.tiny, "Z")->dt == DT_FP32 && tiny_node(p.tiny, "Z.cast")->dt == DT_FP16);
  }
  pipe_free(&p);
  /* a Reduce(sum) accumulates in acc_dtype: the operand is CAST first */
  CHECK(lower(&p, graph("['M','N']", "{'dtype':'fp16','shape':['M','N']}", NULL, "{'dtype':'fp32','shape':['M']}",
                        "[{'op':'Reduce','inputs':['X'],'outputs':['Z'],'attrs':{'op':'sum','axes':[1],"
                        "'acc_dtype':'fp32'}}]")));
  if (p.tiny) {
    CHECK_STR(ops(p.tiny), "CAST,REDUCE,STORE");
    const tiny_uop *z = tiny_node(p.tiny, "Z");
    CHECK(z && z->dt == DT_FP32 && z->rop == RED_SUM && z->naxes == 1 && z->axes[0] == 1);
  }
  pipe_free(&p);
  /* max keeps the dtype */
  CHECK(lower(&p, graph("['M','N']", "{'dtype':'fp16','shape':['M','N']}", NULL, "{'dtype':'fp16','shape':['N']}",
                        "[{'op':'Reduce','inputs':['X'],'outputs':['Z'],'attrs':{'op':'max','axes':[0]}}]")));
  if (p.tiny) CHECK_STR(ops(p.tiny), "REDUCE,STORE");
  pipe_free(&p);
}

/* The movement ops and Softmax. */
static void test_movement_and_softmax(void) {
  front p;
  const char *x = "{'dtype':'fp32','shape':['M',6]}";
  CHECK(lower(&p, graph("['M']", x, NULL, "{'dtype':'fp32','shape':[6,'M']}",
                        "[{'op':'Transpose','inputs':['X'],'outputs':['Z'],'attrs':{'perm':[1,0]}}]")));
  if (p.tiny) {
    CHECK_STR(ops(p.tiny), "PERMUTE,STORE");
    CHECK(p.tiny->u[1].perm[0] == 1 && p.tiny->u[1].perm[1] == 0);
  }
  pipe_free(&p);
  CHECK(lower(&p, graph("['M']", x, NULL, "{'dtype':'fp32','shape':['M',2,3]}",
                        "[{'op':'Reshape','inputs':['X'],'outputs':['Z'],'attrs':{'shape':['M',2,3]}}]")));
  if (p.tiny) CHECK_STR(ops(p.tiny), "RESHAPE,STORE");
  pipe_free(&p);
  CHECK(lower(&p, graph("['M']", x, NULL, "{'dtype':'fp32','shape':['M+1',9]}",
                        "[{'op':'Pad','inputs':['X'],'outputs':['Z'],'attrs':{'pads':[[1,0],[1,2]],'value':-1}}]")));
  if (p.tiny) {
    CHECK_STR(ops(p.tiny), "PAD,STORE");
    CHECK(p.tiny->u[1].cval == -1);
    CHECK_STR(shape_s(&A, 2, p.tiny->u[1].lo), "[1,1]");
    CHECK_STR(shape_s(&A, 2, p.tiny->u[1].hi), "[0,2]");
  }
  pipe_free(&p);
  CHECK(lower(&p, graph("['M']", x, NULL, "{'dtype':'fp32','shape':['M-1',2]}",
                        "[{'op':'Slice','inputs':['X'],'outputs':['Z'],'attrs':{'starts':[1,1],'ends':['M',6],"
                        "'steps':[1,3]}}]")));
  if (p.tiny) {
    CHECK_STR(ops(p.tiny), "SHRINK,STORE");
    CHECK(p.tiny->u[1].step[1] == 3);
    CHECK_STR(shp(&p.tiny->u[1]), "[M-1,2]");
  }
  pipe_free(&p);
  CHECK(lower(&p, graph("['M']", x, NULL, x,
                        "[{'op':'Flip','inputs':['X'],'outputs':['Z'],'attrs':{'axes':[0]}}]")));
  if (p.tiny) {
    CHECK_STR(ops(p.tiny), "FLIP,STORE");
    CHECK(p.tiny->u[1].flip[0] && !p.tiny->u[1].flip[1]);
  }
  pipe_free(&p);
  CHECK(lower(&p, graph("['M','N']", "{'dtype':'fp32','shape':['N']}", NULL, "{'dtype':'fp32','shape':['M','N']}",
                        "[{'op':'Expand','inputs':['X'],'outputs':['Z'],'attrs':{'shape':['M','N']}}]")));
  if (p.tiny) CHECK_STR(ops(p.tiny), "RESHAPE,EXPAND,STORE");
  pipe_free(&p);
  /* Softmax: x*log2(e), then the row softmax with EXP2; fp16 runs in fp32 */
  CHECK(lower(&p, graph("['M','N']", "{'dtype':'fp16','shape':['M','N']}", NULL, "{'dtype':'fp16','shape':['M','N']}",
                        "[{'op':'Softmax','inputs':['X'],'outputs':['Z'],'attrs':{'axis':1}}]")));
  if (p.tiny)
    CHECK_STR(ops(p.tiny), "CAST,CONST,MUL,REDUCE,RESHAPE,EXPAND,SUB,EXP2,REDUCE,RESHAPE,EXPAND,FDIV,CAST,STORE");
  pipe_free(&p);
}

/* tinygrad's matmul, (A.reshape(M,K,1) * B.reshape(1,K,N)).sum(1), folds into
 * the CONTRACT that GEMM lowers to. */
static const char naive_gemm[] =
    "{'signature':{'dims':['M','N','K'],'inputs':[{'tensor':'A'},{'tensor':'B'}],'outputs':[{'tensor':'C'}%s]},"
    "'tensors':{'A':{'dtype':'T','shape':['M','K']},'B':{'dtype':'T','shape':['K','N']},"
    "'C':{'dtype':'fp32','shape':['M','N']}%s},"
    "'graph':[{'op':'Reshape','name':'a3','inputs':['A'],'outputs':['A3'],'attrs':{'shape':['M','K',1]}},"
    "{'op':'Reshape','name':'b3','inputs':['B'],'outputs':['B3'],'attrs':{'shape':[1,'K','N']}},"
    "{'op':'Elementwise','name':'mul','fn':'mul','inputs':['A3','B3'],'outputs':['T']},"
    "{'op':'Reduce','name':'sum','inputs':['T'],'outputs':['C'],'attrs':{'op':'sum','axes':[1],'acc_dtype':'fp32'}}]}";

static void same_contract(const tiny_contract *a, const tiny_contract *b) {
  CHECK_STR(a->pattern, b->pattern);
  CHECK_STR(join(&A, a->nl, a->lhs_idx), join(&A, b->nl, b->lhs_idx));
  CHECK_STR(join(&A, a->nr, a->rhs_idx), join(&A, b->nr, b->rhs_idx));
  CHECK_STR(join(&A, a->no, a->out_idx), join(&A, b->no, b->out_idx));
  CHECK_STR(join(&A, a->nk, a->reduce_idx), join(&A, b->nk, b->reduce_idx));
}

static void test_naive_matmul_folds_to_contract(void) {
  front g, n;
  pipe_init(&g);
  CHECK(pipe_run_file(&g, "gemm_bias_relu.json", DT_FP16, TO_TINY));
  CHECK(lower(&n, J(arena_printf(&A, naive_gemm, "", ""))));
  if (g.tiny && n.tiny) {
    CHECK_STR(ops(n.tiny), "CONTRACT,STORE");
    const tiny_uop *c = tiny_node(n.tiny, "C"), *c0 = tiny_node(g.tiny, "C0");
    CHECK(c && c->op == TINY_CONTRACT && c->dt == DT_FP32);
    if (c && c0) {
      same_contract(c->con, c0->con);
      CHECK_STR(n.tiny->u[c->src[0]].out, "A");
      CHECK_STR(n.tiny->u[c->src[1]].out, "B");
      CHECK_STR(shp(c), shp(c0));
    }
    CHECK(tiny_verify(n.tiny, &n.dl));
  }
  pipe_free(&g);
  pipe_free(&n);
  /* the batched form folds with a batch index */
  CHECK(lower(&n, J("{'signature':{'dims':['B','M','N','K'],'inputs':[{'tensor':'X'},{'tensor':'Y'}],"
                    "'outputs':[{'tensor':'Z'}]},'tensors':{'X':{'dtype':'fp32','shape':['B','M','K']},"
                    "'Y':{'dtype':'fp32','shape':['B','K','N']},'Z':{'dtype':'fp32','shape':['B','M','N']}},"
                    "'graph':[{'op':'Reshape','inputs':['X'],'outputs':['X4'],'attrs':{'shape':['B','M','K',1]}},"
                    "{'op':'Reshape','inputs':['Y'],'outputs':['Y4'],'attrs':{'shape':['B',1,'K','N']}},"
                    "{'op':'Elementwise','fn':'mul','inputs':['X4','Y4'],'outputs':['T']},"
                    "{'op':'Reduce','inputs':['T'],'outputs':['Z'],'attrs':{'op':'sum','axes':[2]}}]}")));
  if (n.tiny) {
    CHECK_STR(ops(n.tiny), "CONTRACT,STORE");
    const tiny_uop *z = tiny_node(n.tiny, "Z");
    if (z && z->con) {
      CHECK_STR(join(&A, z->con->nl, z->con->lhs_idx), "b,m,k");
      CHECK_STR(join(&A, z->con->nr, z->con->rhs_idx), "b,k,n");
      CHECK_STR(join(&A, z->con->no, z->con->out_idx), "b,m,n");
    }
  }
  pipe_free(&n);
  /* the product is also an output: it must stay, so nothing folds */
  CHECK(lower(&n, J(arena_printf(&A, naive_gemm, ",{'tensor':'T'}", ",'T':{'dtype':'T','shape':['M','K','N']}"))));
  if (n.tiny) {
    CHECK(tiny_count(n.tiny, TINY_CONTRACT) == 0);
    CHECK(tiny_count(n.tiny, TINY_MUL) == 1 && tiny_count(n.tiny, TINY_REDUCE) == 1);
  }
  pipe_free(&n);
}

/* Builders: each op's shape rule reports a diagnostic and returns -1. */
static void test_builders_and_verify(void) {
  arena B;
  arena_init(&B);
  diag_list dl;
  diag_init(&dl);
  tiny_dag *d = tiny_new(&B, NULL);
  const sx *mn[2] = {sx_param(&B, "M"), sx_param(&B, "N")}, *nm[2] = {mn[1], mn[0]};
  const sx *six[1] = {sx_int(&B, 6)}, *twothree[2] = {sx_int(&B, 2), sx_int(&B, 3)}, *four[1] = {sx_int(&B, 4)};
  int x = tiny_buffer(d, "X", DT_FP32, 2, mn);
  int y = tiny_buffer(d, "Y", DT_FP32, 2, nm);
  int v = tiny_buffer(d, "V", DT_FP32, 1, six);
  CHECK(tiny_reshape(d, v, 2, twothree, &dl, "t") >= 0);
  CHECK(tiny_reshape(d, v, 1, four, &dl, "t") < 0 && diag_count(&dl, "E1003") == 1);
  CHECK(tiny_alu(d, TINY_ADD, x, y, -1, &dl, "t") < 0 && diag_count(&dl, "E1001") == 1);
  CHECK(tiny_expand(d, x, 2, nm, &dl, "t") < 0 && diag_count(&dl, "E1001") == 2);
  int bad_perm[2] = {0, 0};
  CHECK(tiny_permute(d, x, bad_perm, &dl, "t") < 0 && diag_count(&dl, "E1004") == 1);
  const sx *lo[1] = {sx_int(&B, 2)}, *hi[1] = {sx_int(&B, 7)};
  int64_t step[1] = {1};
  CHECK(tiny_shrink(d, v, lo, hi, step, &dl, "t") < 0 && diag_count(&dl, "E1004") == 2);
  const sx *nlo[1] = {sx_int(&B, -1)}, *zhi[1] = {sx_int(&B, 0)};
  CHECK(tiny_pad(d, v, nlo, zhi, &dl, "t") < 0 && diag_count(&dl, "E1004") == 3);
  int axes[1] = {2};
  CHECK(tiny_reduce(d, x, RED_SUM, 1, axes, DT_FP32, &dl, "t") < 0 && diag_count(&dl, "E0207") == 1);
  /* CONTRACT label checks */
  static const char *mk[] = {"m", "k"}, *kn[] = {"k", "n"}, *mnl[] = {"m", "n"}, *kk[] = {"k"};
  tiny_contract c = {"matmul", 2, 2, 2, 1, mk, kn, mnl, kk, {0, 0}};
  CHECK(tiny_contract_op(d, x, x, &c, DT_FP32, &dl, "t") < 0 && diag_count(&dl, "E1002") == 1); /* K: N vs M */
  int good = tiny_contract_op(d, x, y, &c, DT_FP32, &dl, "t");
  CHECK(good >= 0);
  CHECK(good >= 0 && tiny_verify(d, &dl));
  /* a builder's valid results pass tiny_verify; a corrupted node does not */
  int e = tiny_alu(d, TINY_NEG, x, -1, -1, &dl, "t");
  CHECK(e >= 0 && tiny_verify(d, &dl));
  int nerr = dl.nerrors;
  d->u[e].shape = nm; /* the NEG now claims [N,M] from an [M,N] operand */
  CHECK(!tiny_verify(d, &dl) && dl.nerrors == nerr + 1);
  d->u[e].shape = mn;
  d->u[e].dt = DT_FP16; /* dtype differs from its operand */
  CHECK(!tiny_verify(d, &dl));
  d->u[e].dt = DT_FP32;
  d->u[e].src[0] = e; /* not an earlier node */
  CHECK(!tiny_verify(d, &dl));
  d->u[e].src[0] = x;
  d->u[e].out = "X"; /* duplicate name */
  CHECK(!tiny_verify(d, &dl));
  d->u[e].out = "neg";
  CHECK(tiny_verify(d, &dl));
  diag_free(&dl);
  arena_free(&B);
}

/* The dump names ops and args as spec §3.5 does. */
static void test_dump(void) {
  front p;
  pipe_init(&p);
  CHECK(pipe_run_file(&p, "gemm_bias_relu.json", DT_FP16, TO_TINY));
  cJSON *d = tiny_dump(p.tiny);
  const cJSON *uops = cJSON_GetObjectItem(d, "uops");
  CHECK(cJSON_GetArraySize(uops) == p.tiny->n);
  const cJSON *ex = cJSON_GetArrayItem(uops, tiny_find(p.tiny, "bias.expand"));
  const cJSON *arg = cJSON_GetObjectItem(ex, "arg");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(ex, "uop")), "EXPAND");
  CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(arg, "broadcast_dimensions")) == 1);
  CHECK(cJSON_GetArrayItem(cJSON_GetObjectItem(arg, "broadcast_dimensions"), 0)->valuedouble == 1);
  cJSON_Delete(d);
  pipe_free(&p);
}

int main(void) {
  arena_init(&A);
  test_gemm_bias_relu();
  test_conv();
  test_attention();
  test_ewise_decompositions();
  test_auto_expand();
  test_dtype_promotion();
  test_movement_and_softmax();
  test_naive_matmul_folds_to_contract();
  test_builders_and_verify();
  test_dump();
  arena_free(&A);
  return check_status("test_tiny");
}
