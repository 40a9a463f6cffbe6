/* Poly Core (spec §7, 001 §4): dependences from isl (flow, anti, output),
 * parallel / reduce / tail axes, halos (conv 3x3 s1 and s2 with pad 1, none
 * for GEMM), minimum buffers (smem rings for the contraction operands, the
 * accumulator and epilogue inputs in registers, a deferred value in
 * registers), barrier and bank hints (ldmatrix.x4 against .trans by the
 * operand's contiguous index), compute-at legality and the dump.  Every
 * input goes through the real front half: Frontend -> Tiny -> IndexBook ->
 * Poly-View -> Region SSA.  PC_DUMP=1 prints each analysis. */
#include "pipe.h"
#include "polycore.h"
#include "region.h"

static arena A;

typedef struct pcase {
  front p;
  region_set *rs;
  pc_report *pc;
} pcase;

static bool pc_run(pcase *c, const char *text, dtype T) {
  memset(c, 0, sizeof *c);
  pipe_init(&c->p);
  fe_instance inst = {T, NULL, NULL};
  if (!pipe_run_inst(&c->p, text, &inst, TO_POLY_VIEW)) return pipe_show(&c->p), false;
  c->rs = region_build(&c->p.A, c->p.pv, &c->p.dl);
  if (!c->rs) return pipe_show(&c->p), false;
  c->pc = pc_analyze(&c->p.A, c->rs, &c->p.dl);
  if (!c->pc) return pipe_show(&c->p), false;
  if (getenv("PC_DUMP")) {
    cJSON *j = pc_dump(c->pc);
    char *s = cJSON_Print(j);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(j);
  }
  return true;
}

static bool pc_run_file(pcase *c, const char *name, dtype T) {
  char *t = shared_graph(name);
  bool ok = pc_run(c, t, T);
  free(t);
  return ok;
}

static void pc_free(pcase *c) { pipe_free(&c->p); }

static const pc_buffer *buffer(const pc_analysis *a, const char *role, const char *value) {
  for (int i = 0; i < a->nbuf; i++)
    if (strcmp(a->buf[i].role, role) == 0 && strcmp(a->buf[i].value, value) == 0) return &a->buf[i];
  return NULL;
}

static const pc_bank *bank(const pc_analysis *a, const char *tensor) {
  for (int i = 0; i < a->nbank; i++)
    if (strcmp(a->bank[i].tensor, tensor) == 0) return &a->bank[i];
  return NULL;
}

static int count_deps(const pc_analysis *a, pc_dep_kind k) {
  int n = 0;
  for (int i = 0; i < a->ndeps; i++) n += a->deps[i].kind == k;
  return n;
}

static const pc_dep *dep(const pc_analysis *a, pc_dep_kind k, const char *from, const char *to) {
  for (int i = 0; i < a->ndeps; i++)
    if (a->deps[i].kind == k && strcmp(a->deps[i].from, from) == 0 && strcmp(a->deps[i].to, to) == 0) return &a->deps[i];
  return NULL;
}

static const pc_halo *halo(const pc_analysis *a, const char *tensor, int dim) {
  for (int i = 0; i < a->nhalo; i++)
    if (strcmp(a->halo[i].tensor, tensor) == 0 && a->halo[i].tensor_axis == dim) return &a->halo[i];
  return NULL;
}

static int64_t halo_axis(const pcase *c, const pc_analysis *a, const char *axis) {
  const region *r = &c->rs->r[a->region];
  for (int i = 0; i < r->niters + r->nred; i++)
    if (strcmp(r->it[i].name, axis) == 0) return a->halo_axis[i];
  return -1;
}

static bool has_hint(int n, const char *const *h, const char *needle) {
  for (int i = 0; i < n; i++)
    if (strstr(h[i], needle)) return true;
  return false;
}

static int let_index(const region *r, const char *name) {
  for (int i = 0; i < r->nlets; i++)
    if (strcmp(r->lets[i].name, name) == 0) return i;
  return -1;
}

/* ---- GEMM + bias + ReLU (spec §7's example, 001 §4) ---------------------------------- */

/* m and n are parallel, k carries the reduction; every extent is symbolic,
 * so m, n and k are tails; reads are at plain indices: no halo. */
static void test_gemm_axes_tails_no_halo(void) {
  pcase c;
  CHECK(pc_run_file(&c, "gemm_bias_relu.json", DT_FP16));
  if (!c.pc) return pc_free(&c);
  CHECK(c.pc->n == 1);
  const pc_analysis *a = &c.pc->a[0];
  CHECK_STR(join(&A, a->npar, a->parallel_axes), "m,n");
  CHECK_STR(join(&A, a->nred, a->reduce_axes), "k");
  CHECK_STR(join(&A, a->ntail, a->tail_axes), "m,n,k");
  CHECK(a->affine);
  CHECK(a->halo_bytes == 0);
  CHECK(halo_axis(&c, a, "m") == 0 && halo_axis(&c, a, "n") == 0 && halo_axis(&c, a, "k") == 0);
  const pc_halo *ha = halo(a, "A", 0), *hb = halo(a, "B", 1);
  CHECK(ha && ha->lo == 0 && ha->hi == 0 && ha->stride == 1 && strcmp(ha->iter, "m") == 0);
  CHECK(hb && hb->lo == 0 && hb->hi == 0 && strcmp(hb->iter, "n") == 0);
  CHECK(halo(a, "A", 1) == NULL); /* k: a reduce index, no output axis strides along it */
  pc_free(&c);
}

/* The reduction reads and writes its accumulator: flow, anti and output
 * dependences carried by k; the epilogue and the yield are fed at distance
 * 0 from the last k. */
static void test_gemm_dependences(void) {
  pcase c;
  CHECK(pc_run_file(&c, "gemm_bias_relu.json", DT_FP16));
  if (!c.pc) return pc_free(&c);
  const pc_analysis *a = &c.pc->a[0];
  /* C0 -> C0, C0 -> C1, C1 -> C1.cmplt, C1 -> C, C1.cmplt -> C, C -> yield */
  CHECK(count_deps(a, PC_FLOW) == 6);
  CHECK(count_deps(a, PC_ANTI) == 1);
  CHECK(count_deps(a, PC_OUTPUT) == 1);
  CHECK(a->ndeps == 8);
  const pc_dep *self = dep(a, PC_FLOW, "C0", "C0");
  CHECK(self && strstr(self->relation, "C0[m, n, k] -> C0[m' = m, n' = n, k' = 1 + k]"));
  CHECK(self && strstr(self->relation, "0 <= k <= -2 + K"));
  const pc_dep *epi = dep(a, PC_FLOW, "C0", "C1");
  CHECK(epi && strstr(epi->relation, "C0[m, n, k = -1 + K] -> C1[m' = m, n' = n]"));
  CHECK(dep(a, PC_FLOW, "C", "yield.C") != NULL);
  CHECK(dep(a, PC_ANTI, "C0", "C0") && dep(a, PC_OUTPUT, "C0", "C0"));
  CHECK(dep(a, PC_ANTI, "C1", "C") == NULL); /* SSA lets: nothing but the reduction is rewritten */
  CHECK(a->compute_at_ok);
  CHECK(a->compute_at_why && strstr(a->compute_at_why, "(C1, C1.cmplt, C) has distance 0 along m, n"));
  pc_free(&c);
}

/* A and B are reused across the output axis they do not index: shared
 * memory rings, 3 deep for a symbolic K; the bias (read once per output
 * element) and the accumulator stay in registers; C goes to global memory. */
static void test_gemm_buffers_and_hints(void) {
  pcase c;
  CHECK(pc_run_file(&c, "gemm_bias_relu.json", DT_FP16));
  if (!c.pc) return pc_free(&c);
  const pc_analysis *a = &c.pc->a[0];
  const pc_buffer *ba = buffer(a, "input", "A"), *bb = buffer(a, "input", "B"), *bias = buffer(a, "input", "bias");
  CHECK(ba && ba->buffer == BUF_SMEM_RING && ba->depth == 3);
  CHECK(bb && bb->buffer == BUF_SMEM_RING && bb->depth == 3);
  CHECK(ba && strstr(ba->why, "reused across n"));
  CHECK(bias && bias->buffer == BUF_REG && strstr(bias->why, "epilogue"));
  const pc_buffer *acc = buffer(a, "let", "C0"), *out = buffer(a, "output", "C");
  CHECK(acc && acc->buffer == BUF_REG);
  CHECK(out && out->buffer == BUF_GMEM);
  CHECK(a->min_buffer == BUF_REG);
  CHECK(a->min_depth == 1);
  /* B is [K,N]: n contiguous -> ldmatrix.x4.trans; A [M,K] -> ldmatrix.x4 */
  const pc_bank *ka = bank(a, "A"), *kb = bank(a, "B");
  CHECK(a->nbank == 2);
  CHECK(ka && ka->k_contig && strcmp(ka->ldmatrix, "ldmatrix.x4") == 0 && strcmp(ka->swizzle, "xor16B") == 0);
  CHECK(kb && !kb->k_contig && strcmp(kb->ldmatrix, "ldmatrix.x4.trans") == 0 && strcmp(kb->swizzle, "xor16B") == 0);
  CHECK(bank(a, "bias") == NULL);
  CHECK(has_hint(a->nbarrier80, a->barrier_sm80, "cp.async.commit_group after each stage's loads of A, B"));
  CHECK(has_hint(a->nbarrier80, a->barrier_sm80, "cp.async.wait_group 1 + bar.sync before consuming a stage"));
  CHECK(has_hint(a->nbarrier80, a->barrier_sm80, "bar.sync before the epilogue reuses shared memory"));
  CHECK(has_hint(a->nbarrier90, a->barrier_sm90, "mbarrier.arrive.expect_tx per stage"));
  CHECK(has_hint(a->nbarrier90, a->barrier_sm90, "mbarrier.try_wait.parity before consuming a stage"));
  CHECK(has_hint(a->nbarrier90, a->barrier_sm90, "wgmma.fence"));
  CHECK(has_hint(a->nbarrier90, a->barrier_sm90, "wgmma.commit_group"));
  CHECK(has_hint(a->nbarrier90, a->barrier_sm90, "wgmma.wait_group"));
  /* the contraction classification rides along */
  CHECK(a->con.present && a->con.nm == 1 && a->con.nn == 1 && a->con.nk == 1 && a->con.nb == 0);
  CHECK(a->con.lhs_k_contig && !a->con.rhs_k_contig);
  pc_free(&c);
}

/* B stored [N,K] (a Transpose in the graph, as PyTorch stores Linear
 * weights): K is contiguous in both operands, so neither needs .trans. */
static void test_gemm_b_nk_not_trans(void) {
  pcase c;
  CHECK(pc_run(&c, J("{'name':'gemm_nt','signature':{'dims':['M','N','K'],"
                     "'inputs':[{'tensor':'A'},{'tensor':'B'},{'tensor':'bias'}],'outputs':[{'tensor':'C'}]},"
                     "'tensors':{'A':{'dtype':'T','shape':['M','K']},'B':{'dtype':'T','shape':['N','K']},"
                     "'bias':{'dtype':'T','shape':['N']},'C':{'dtype':'T','shape':['M','N']}},"
                     "'graph':[{'op':'Transpose','name':'bt','inputs':['B'],'outputs':['Bt'],'attrs':{'perm':[1,0]}},"
                     "{'op':'GEMM','name':'mm','inputs':['A','Bt'],'outputs':['C0'],'attrs':{'acc_dtype':'fp32'}},"
                     "{'op':'Elementwise','name':'ba','fn':'add','inputs':['C0','bias'],'outputs':['C']}]}"),
               DT_FP16));
  if (!c.pc) return pc_free(&c);
  const pc_analysis *a = &c.pc->a[0];
  const pc_bank *kb = bank(a, "B");
  CHECK(kb && kb->k_contig && strcmp(kb->ldmatrix, "ldmatrix.x4") == 0);
  CHECK(bank(a, "A") && bank(a, "A")->k_contig);
  CHECK_STR(join(&A, a->npar, a->parallel_axes), "m,n");
  CHECK(a->compute_at_ok);
  pc_free(&c);
}

static const char *gemm_fixed(int m, int n, int k) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "{\"name\":\"g\",\"signature\":{\"dims\":[],\"inputs\":[{\"tensor\":\"A\"},{\"tensor\":\"B\"}],"
           "\"outputs\":[{\"tensor\":\"C\"}]},\"tensors\":{\"A\":{\"dtype\":\"T\",\"shape\":[%d,%d]},"
           "\"B\":{\"dtype\":\"T\",\"shape\":[%d,%d]},\"C\":{\"dtype\":\"T\",\"shape\":[%d,%d]}},"
           "\"graph\":[{\"op\":\"GEMM\",\"name\":\"mm\",\"inputs\":[\"A\",\"B\"],\"outputs\":[\"C\"],"
           "\"attrs\":{\"acc_dtype\":\"fp32\"}}]}",
           m, k, k, n, m, n);
  return buf;
}

/* Fixed extents: an axis is a tail only when its extent is not a multiple of
 * its MMA granule (m 16, n 8, k 16); the ring is 2 deep below 3 K tiles. */
static void test_gemm_fixed_tails_and_depth(void) {
  pcase c;
  CHECK(pc_run(&c, gemm_fixed(128, 100, 32), DT_FP16));
  if (c.pc) {
    const pc_analysis *a = &c.pc->a[0];
    CHECK_STR(join(&A, a->ntail, a->tail_axes), "n");
    const pc_buffer *ba = buffer(a, "input", "A");
    CHECK(ba && ba->buffer == BUF_SMEM_RING && ba->depth == 2);
    CHECK(has_hint(a->nbarrier80, a->barrier_sm80, "cp.async.wait_group 0 + bar.sync"));
  }
  pc_free(&c);
  CHECK(pc_run(&c, gemm_fixed(40, 64, 48), DT_FP16));
  if (c.pc) {
    const pc_analysis *a = &c.pc->a[0];
    CHECK_STR(join(&A, a->ntail, a->tail_axes), "m");
    CHECK(buffer(a, "input", "B") && buffer(a, "input", "B")->depth == 3);
  }
  pc_free(&c);
  CHECK(pc_run(&c, gemm_fixed(16, 8, 20), DT_FP16));
  if (c.pc) {
    const pc_analysis *a = &c.pc->a[0];
    CHECK_STR(join(&A, a->ntail, a->tail_axes), "k");
    CHECK(buffer(a, "input", "B") && buffer(a, "input", "B")->depth == 2);
  }
  pc_free(&c);
}

/* ---- Conv 3x3 (spec §6.8.2) ------------------------------------------------------------ */

/* s2 p1: the input rows read for output row h are 2h-1 .. 2h+1, the strided
 * core is 2h .. 2h+1: one extra row below, none above; per output point
 * 2 bytes * (3*3 - 2*2) = 10 bytes. */
static void test_conv_s2_halo(void) {
  pcase c;
  CHECK(pc_run_file(&c, "conv2d_bias_silu.json", DT_FP16));
  if (!c.pc) return pc_free(&c);
  const pc_analysis *a = &c.pc->a[0];
  const pc_halo *hh = halo(a, "X", 1), *hw = halo(a, "X", 2);
  CHECK(hh && hh->stride == 2 && hh->lo == 1 && hh->hi == 0 && strcmp(hh->iter, "h") == 0);
  CHECK(hw && hw->stride == 2 && hw->lo == 1 && hw->hi == 0 && strcmp(hw->iter, "w") == 0);
  const pc_halo *hn = halo(a, "X", 0);
  CHECK(hn && hn->lo == 0 && hn->hi == 0);
  CHECK(halo(a, "X", 3) == NULL); /* ci: reduced */
  CHECK(a->halo_bytes == 10);
  CHECK(halo_axis(&c, a, "h") == 1 && halo_axis(&c, a, "w") == 1 && halo_axis(&c, a, "co") == 0);
  CHECK_STR(join(&A, a->npar, a->parallel_axes), "n,h,w,co");
  CHECK_STR(join(&A, a->nred, a->reduce_axes), "kh,kw,ci");
  /* kh and kw (3) are not multiples of the k granule; the rest are symbolic */
  CHECK_STR(join(&A, a->ntail, a->tail_axes), "n,h,w,co,kh,kw,ci");
  CHECK(a->affine);
  CHECK(a->compute_at_ok);
  CHECK(buffer(a, "input", "X") && buffer(a, "input", "X")->buffer == BUF_SMEM_RING);
  CHECK(buffer(a, "input", "Wt") && buffer(a, "input", "Wt")->depth == 3);
  CHECK(bank(a, "X") && bank(a, "X")->k_contig && bank(a, "Wt") && bank(a, "Wt")->k_contig);
  /* the reduction's dependences step through ci, then kw, then kh */
  const pc_dep *self = dep(a, PC_FLOW, "Y0", "Y0");
  CHECK(self && strstr(self->relation, "ci' = 1 + ci") && strstr(self->relation, "kh' = 1 + kh"));
  pc_free(&c);
}

static const char *conv_graph(int stride) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           "{\"name\":\"conv\",\"signature\":{\"dims\":[\"N\",\"H\",\"W\",\"C\",\"K\"],"
           "\"inputs\":[{\"tensor\":\"X\"},{\"tensor\":\"Wt\"}],\"outputs\":[{\"tensor\":\"Y\"}]},"
           "\"tensors\":{\"X\":{\"dtype\":\"T\",\"shape\":[\"N\",\"H\",\"W\",\"C\"]},"
           "\"Wt\":{\"dtype\":\"T\",\"shape\":[\"K\",3,3,\"C\"]},"
           "\"Y\":{\"dtype\":\"T\",\"shape\":[\"N\",\"P\",\"Q\",\"K\"]}},"
           "\"graph\":[{\"op\":\"Conv2D\",\"name\":\"conv\",\"inputs\":[\"X\",\"Wt\"],\"outputs\":[\"Y\"],"
           "\"attrs\":{\"stride\":[%d,%d],\"pad\":[1,1],\"dilation\":[1,1],\"acc_dtype\":\"fp32\"}}]}",
           stride, stride);
  return buf;
}

/* s1 p1: rows h-1 .. h+1 around a core of one row: lo = hi = 1, and
 * 2 bytes * (3*3 - 1) = 16 bytes per output point; fp32 doubles it. */
static void test_conv_s1_halo(void) {
  pcase c;
  CHECK(pc_run(&c, conv_graph(1), DT_FP16));
  if (c.pc) {
    const pc_analysis *a = &c.pc->a[0];
    const pc_halo *hh = halo(a, "X", 1), *hw = halo(a, "X", 2);
    CHECK(hh && hh->stride == 1 && hh->lo == 1 && hh->hi == 1);
    CHECK(hw && hw->stride == 1 && hw->lo == 1 && hw->hi == 1);
    CHECK(a->halo_bytes == 16);
    CHECK(halo_axis(&c, a, "h") == 2 && halo_axis(&c, a, "w") == 2);
    CHECK(a->compute_at_ok);
  }
  pc_free(&c);
  CHECK(pc_run(&c, conv_graph(1), DT_FP32));
  if (c.pc) CHECK(c.pc->a[0].halo_bytes == 32);
  pc_free(&c);
  CHECK(pc_run(&c, conv_graph(2), DT_FP16));
  if (c.pc) CHECK(c.pc->a[0].halo_bytes == 10);
  pc_free(&c);
}

/* ---- Attention (spec §6.8.3, §15.3) ------------------------------------------------------ */

/* Two regions.  QK^T + row softmax: b, h, m parallel; the softmax's max and
 * sum reduce over n, so n is carried as well as d; P is yielded deferred and
 * stays in registers.  PV: P (deferred) in registers, V in a ring with n
 * (the K axis) strided, d contiguous: ldmatrix.x4.trans. */
static void test_attention(void) {
  pcase c;
  CHECK(pc_run_file(&c, "attention_causal.json", DT_FP16));
  if (!c.pc) return pc_free(&c);
  CHECK(c.pc->n == 2);
  if (c.pc->n != 2) return pc_free(&c);
  const pc_analysis *a = &c.pc->a[0], *o = &c.pc->a[1];
  CHECK_STR(join(&A, a->npar, a->parallel_axes), "b,h,m");
  CHECK_STR(join(&A, a->nred, a->reduce_axes), "n,d");
  CHECK_STR(join(&A, a->ntail, a->tail_axes), "m,n,d"); /* b, h: batch, granule 1 */
  /* the row max feeds the subtraction from its last n, for every n' */
  const pc_dep *row = dep(a, PC_FLOW, "S_masked.reduce", "S_masked.sub");
  CHECK(row && strstr(row->relation, "n = -1 + S") && strstr(row->relation, "0 <= n' < S"));
  CHECK(dep(a, PC_FLOW, "S_masked.reduce", "S_masked.reduce") != NULL);
  CHECK(dep(a, PC_OUTPUT, "S_masked.reduce.1", "S_masked.reduce.1") != NULL);
  CHECK(count_deps(a, PC_ANTI) == 3 && count_deps(a, PC_OUTPUT) == 3);
  const pc_buffer *p = buffer(a, "output", "P");
  CHECK(p && p->buffer == BUF_REG && strstr(p->why, "deferred"));
  CHECK(a->compute_at_ok); /* the scale and the causal mask run on the accumulator */
  CHECK(a->compute_at_why && strstr(a->compute_at_why, "(S.mul, S_masked)"));
  CHECK(has_hint(a->nbarrier80, a->barrier_sm80, "row reduction S_masked.reduce over n"));
  CHECK(bank(a, "Q") && bank(a, "Q")->k_contig && bank(a, "K") && bank(a, "K")->k_contig);
  CHECK(a->con.present && a->con.nb == 2);

  CHECK_STR(join(&A, o->npar, o->parallel_axes), "b,h,m,d");
  CHECK_STR(join(&A, o->nred, o->reduce_axes), "n");
  const pc_buffer *pin = buffer(o, "input", "P"), *v = buffer(o, "input", "V");
  CHECK(pin && pin->buffer == BUF_REG && strstr(pin->why, "deferred"));
  CHECK(v && v->buffer == BUF_SMEM_RING && v->depth == 3);
  CHECK(o->nbank == 1 && bank(o, "V") && !bank(o, "V")->k_contig &&
        strcmp(bank(o, "V")->ldmatrix, "ldmatrix.x4.trans") == 0);
  CHECK(has_hint(o->nbarrier80, o->barrier_sm80, "loads of V"));
  CHECK(buffer(o, "output", "O") && buffer(o, "output", "O")->buffer == BUF_GMEM);
  CHECK(o->compute_at_ok && o->halo_bytes == 0);
  pc_free(&c);
}

/* The fusion verdict on a deferred value (pc_fusion) and the fusion itself
 * (region_fuse_deferred): attention's P feeds a contraction, no verdict to
 * fuse; qk_norm_bias's Q (X + b, read through a symbolic head reshape) is
 * pointwise and fuses; qk_norm_centered's Q sits behind a row max and does
 * not.  The fused region reads X and b where Q was read, rounds to fp16 as
 * Q's store did, passes region_verify, and the producer, with no other
 * output, is gone; qk_norm_bias_q's producer keeps its store of Q. */
static void test_fusion_verdict(void) {
  pcase c;
  CHECK(pc_run_file(&c, "attention_causal.json", DT_FP16));
  if (c.pc) {
    CHECK(c.pc->a[0].fuse_in < 0);
    CHECK(c.pc->a[1].fuse_in >= 0 && !c.pc->a[1].fuse_ok && strstr(c.pc->a[1].fuse_why, "contraction"));
  }
  pc_free(&c);

  CHECK(pc_run_file(&c, "../../tests/kernels/extra/qk_norm_bias.json", DT_FP16));
  if (c.pc && c.rs->n == 2) {
    const pc_analysis *a = &c.pc->a[1];
    const region *p = &c.rs->r[0], *r = &c.rs->r[1];
    CHECK(a->fuse_ok && a->fuse_from == 0 && strcmp(r->in[a->fuse_in].name, "Q") == 0);
    CHECK(strstr(a->fuse_why, "pointwise") && strstr(a->fuse_why, "Q[i0, i2+D*i1]"));
    CHECK(buffer(a, "input", "Q") && buffer(a, "input", "Q")->buffer == BUF_REG);
    region *left = (region *)1;
    region *f = region_fuse_deferred(&c.p.A, p, a->fuse_out, r, a->fuse_in, &left);
    CHECK(f && left == NULL);
    if (f) {
      bool q = false, x = false, b = false;
      for (int i = 0; i < f->nin; i++) {
        q |= strcmp(f->in[i].name, "Q") == 0;
        x |= strcmp(f->in[i].name, "X") == 0;
        b |= strcmp(f->in[i].name, "b") == 0;
      }
      CHECK(!q && x && b && f->nout == 1 && f->nlets == r->nlets);
      char *t = region_expr_text(&c.p.A, f, f->lets[0].e);
      CHECK(t && strstr(t, "X[i0, i2+D*i1]") && strstr(t, "b[i2+D*i1]"));
      region_set one = {c.rs->A, c.rs->pv, 1, f};
      CHECK(region_verify(&one, &c.p.dl));
      pc_report *fp = pc_analyze(&c.p.A, &one, &c.p.dl);
      CHECK(fp && pc_verify(fp, &c.p.dl) && fp->a[0].fuse_in < 0);
    }
  } else {
    CHECK(!"qk_norm_bias forms two regions");
  }
  pc_free(&c);

  /* qk_norm_bias_q also stores Q: the producer keeps that store */
  CHECK(pc_run_file(&c, "../../tests/kernels/extra/qk_norm_bias_q.json", DT_FP16));
  if (c.pc && c.rs->n == 2 && c.pc->a[1].fuse_ok) {
    const pc_analysis *a = &c.pc->a[1];
    region *left = NULL;
    region *f = region_fuse_deferred(&c.p.A, &c.rs->r[0], a->fuse_out, &c.rs->r[1], a->fuse_in, &left);
    CHECK(f && left && left->nout == 1 && left->nyields == 1 && left->out[0].signature &&
          strcmp(left->out[0].name, "Q") == 0 && left->nin == 2);
    if (left) {
      region_set two = {c.rs->A, c.rs->pv, 1, left};
      CHECK(region_verify(&two, &c.p.dl));
    }
  } else {
    CHECK(!"qk_norm_bias_q forms two regions, Q fusing");
  }
  pc_free(&c);

  CHECK(pc_run_file(&c, "../../tests/filecheck/inputs/qk_norm_centered.json", DT_FP16));
  if (c.pc && c.rs->n == 2) {
    const pc_analysis *a = &c.pc->a[1];
    CHECK(a->fuse_in >= 0 && !a->fuse_ok && strstr(a->fuse_why, "reduction MX0"));
    CHECK(buffer(a, "input", "Q") && buffer(a, "input", "Q")->buffer == BUF_GMEM);
    CHECK(buffer(&c.pc->a[0], "output", "Q") && buffer(&c.pc->a[0], "output", "Q")->buffer == BUF_GMEM);
  } else {
    CHECK(!"qk_norm_centered forms two regions");
  }
  pc_free(&c);
}

/* An axis of extent 1 is a batch of one when its group keeps another axis
 * (attention's b after Reshape([S,E] -> [1,S,H,D]), which no operand's map
 * names), and stays M when it is the group's only axis (a GEMV's A[1, K]).
 * A head split's last index 32*h+d is contiguous along d. */
static void test_unit_axes_and_head_split(void) {
  pcase c;
  CHECK(pc_run(&c, J("{'name':'gemv','signature':{'dims':['N','K'],'inputs':[{'tensor':'A'},{'tensor':'B'}],"
                     "'outputs':[{'tensor':'C'}]},'tensors':{'A':{'dtype':'T','shape':[1,'K']},"
                     "'B':{'dtype':'T','shape':['K','N']},'C':{'dtype':'fp32','shape':[1,'N']}},"
                     "'graph':[{'op':'GEMM','name':'g','inputs':['A','B'],'outputs':['C'],'attrs':{'acc_dtype':'fp32'}}]}"),
               DT_FP16));
  if (c.pc) {
    const pc_contraction *k = &c.pc->a[0].con;
    CHECK(k->nm == 1 && k->nn == 1 && k->nb == 0);
  }
  pc_free(&c);
  char *t = shared_graph("../../tests/kernels/extra/proj_attention.json");
  CHECK(t && pc_run(&c, t, DT_FP16));
  free(t);
  int qk = 0;
  for (int i = 0; c.pc && i < c.pc->n; i++) {
    const region *r = &c.rs->r[c.pc->a[i].region];
    const pc_contraction *k = &c.pc->a[i].con;
    if (!strstr(r->name, "S_t")) continue;
    qk++;
    /* QK^T: batch (b, h), M m, N n, K d; Q1 and K1 contiguous along d */
    CHECK(k->nb == 2 && k->nm == 1 && k->nn == 1 && k->nk == 1);
    CHECK_STR(r->it[k->b_axes[0]].name, "b");
    CHECK_STR(r->it[k->b_axes[1]].name, "h");
    CHECK(k->lhs_k_contig && k->rhs_k_contig && k->lhs_contig == k->k_axes[0] && k->rhs_contig == k->k_axes[0]);
  }
  CHECK(qk == 1);
  pc_free(&c);
}

/* ---- regions without a contraction -------------------------------------------------------- */

static void test_elementwise_region(void) {
  pcase c;
  CHECK(pc_run(&c, J("{'name':'ew','signature':{'dims':['M','N'],'inputs':[{'tensor':'X'},{'tensor':'Y'}],"
                     "'outputs':[{'tensor':'Z'}]},'tensors':{'X':{'dtype':'T','shape':['M','N']},"
                     "'Y':{'dtype':'T','shape':['N']},'Z':{'dtype':'T','shape':['M','N']}},"
                     "'graph':[{'op':'Elementwise','name':'a','fn':'add','inputs':['X','Y'],'outputs':['Z']}]}"),
               DT_FP16));
  if (c.pc) {
    const pc_analysis *a = &c.pc->a[0];
    CHECK(!a->con.present);
    CHECK(a->npar == 2 && a->nred == 0 && a->ntail == 0);
    CHECK(count_deps(a, PC_ANTI) == 0 && count_deps(a, PC_OUTPUT) == 0 && count_deps(a, PC_FLOW) >= 1);
    CHECK(a->nbank == 0 && a->nbarrier80 == 0 && a->nbarrier90 == 0);
    CHECK(!a->compute_at_ok);
    CHECK(buffer(a, "input", "X") && buffer(a, "input", "X")->buffer == BUF_REG);
    CHECK(buffer(a, "output", "Z") && buffer(a, "output", "Z")->buffer == BUF_GMEM);
    CHECK(a->affine && a->halo_bytes == 0);
  }
  pc_free(&c);
}

/* A symbolic reshape is not quasi-affine: the region that materializes it is
 * reported non-affine, and its read stays out of isl. */
static void test_non_affine_region(void) {
  pcase c;
  CHECK(pc_run(&c, J("{'name':'rs','signature':{'dims':['M','N'],'inputs':[{'tensor':'X'}],"
                     "'outputs':[{'tensor':'Z'}]},'tensors':{'X':{'dtype':'T','shape':['M','N']},"
                     "'Z':{'dtype':'T','shape':['N','M']}},"
                     "'graph':[{'op':'Reshape','name':'r','inputs':['X'],'outputs':['Z0'],'attrs':{'shape':['N','M']}},"
                     "{'op':'Elementwise','name':'e','fn':'relu','inputs':['Z0'],'outputs':['Z']}]}"),
               DT_FP16));
  if (c.pc) {
    CHECK(c.pc->n >= 1);
    CHECK(!c.pc->a[0].affine);
    CHECK(c.pc->a[0].nhalo == 0);
  }
  pc_free(&c);
  CHECK(pc_run_file(&c, "conv2d_bias_silu.json", DT_FP16));
  if (c.pc) CHECK(c.pc->a[0].affine);
  pc_free(&c);
}

/* ---- compute-at refused, isl errors ------------------------------------------------------- */

/* Hand-marked as epilogue, the row max cannot run at the accumulator's
 * point: its own dependence steps along n, an output axis of S. */
static void test_compute_at_refused(void) {
  pcase c;
  CHECK(pc_run_file(&c, "attention_causal.json", DT_FP16));
  if (!c.rs) return pc_free(&c);
  region *r = &c.rs->r[0];
  int mx = let_index(r, "S_masked.reduce"), sub = let_index(r, "S_masked.sub");
  CHECK(mx >= 0 && sub >= 0);
  if (mx < 0 || sub < 0) return pc_free(&c);
  r->lets[mx].post_reduce = r->lets[sub].post_reduce = true;
  pc_report *p = pc_analyze(&c.p.A, c.rs, &c.p.dl);
  CHECK(p != NULL);
  if (p) {
    CHECK(!p->a[0].compute_at_ok);
    CHECK(p->a[0].compute_at_why && strstr(p->a[0].compute_at_why, "nonzero distance along n"));
  }
  pc_free(&c);
}

/* An index isl cannot read (here a hand-corrupted map) is an internal
 * error: a diagnostic, NULL, no abort. */
static void test_isl_error_is_diagnostic(void) {
  pcase c;
  CHECK(pc_run_file(&c, "gemm_bias_relu.json", DT_FP16));
  if (!c.rs) return pc_free(&c);
  region *r = &c.rs->r[0];
  rexpr *rd = r->lets[r->acc_let].e->a->a;
  CHECK(rd->k == RX_READ);
  int n0 = c.p.dl.n;
  if (rd->k == RX_READ) rd->map[0] = sx_var(&c.p.A, "m?");
  CHECK(pc_analyze(&c.p.A, c.rs, &c.p.dl) == NULL);
  CHECK(c.p.dl.n > n0 && c.p.dl.nerrors > 0);
  if (c.p.dl.n > n0) CHECK(strstr(c.p.dl.items[n0].suggestion, "compiler bug") != NULL);
  pc_free(&c);
}

/* ---- dump ------------------------------------------------------------------------------------- */

static const cJSON *at(const cJSON *o, const char *k) { return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL; }

/* {"analysis":[...]} with spec §7's keys plus region, dependences, affine,
 * buffers, barrier_hints, bank_hints and contraction; byte-identical twice. */
static void test_dump(void) {
  pcase c;
  CHECK(pc_run_file(&c, "gemm_bias_relu.json", DT_FP16));
  if (!c.pc) return pc_free(&c);
  cJSON *j = pc_dump(c.pc);
  const cJSON *arr = at(j, "analysis");
  CHECK(cJSON_IsArray(arr) && cJSON_GetArraySize(arr) == 1);
  const cJSON *a = cJSON_GetArrayItem(arr, 0);
  CHECK(cJSON_IsString(at(a, "region")));
  CHECK(cJSON_IsArray(at(a, "parallel_axes")) && cJSON_IsArray(at(a, "reduce_axes")) && cJSON_IsArray(at(a, "tail_axes")));
  CHECK(cJSON_IsTrue(at(at(a, "compute_at"), "ok")));
  const cJSON *h = at(at(a, "compute_at"), "halo");
  CHECK(cJSON_IsNumber(at(h, "bytes")) && at(h, "bytes")->valuedouble == 0);
  CHECK(cJSON_IsNumber(at(at(h, "per_axis"), "m")) && cJSON_IsNumber(at(at(h, "per_axis"), "k")));
  CHECK_STR(cJSON_GetStringValue(at(at(a, "min_buffer"), "buffer")), "reg");
  CHECK(cJSON_IsNumber(at(at(a, "min_buffer"), "depth")));
  CHECK(cJSON_GetArraySize(at(at(a, "dependences"), "flow")) == 6);
  CHECK(cJSON_GetArraySize(at(at(a, "dependences"), "anti")) == 1);
  CHECK(cJSON_GetArraySize(at(at(a, "dependences"), "output")) == 1);
  CHECK(cJSON_IsTrue(at(a, "affine")));
  CHECK(cJSON_GetArraySize(at(a, "buffers")) == 8); /* A, B, bias, C0, C1, C1.cmplt, C, output C */
  CHECK(cJSON_GetArraySize(at(at(a, "barrier_hints"), "sm80")) == 3);
  CHECK(cJSON_GetArraySize(at(at(a, "barrier_hints"), "sm90")) == 3);
  const cJSON *bk = cJSON_GetArrayItem(at(a, "bank_hints"), 1);
  CHECK_STR(cJSON_GetStringValue(at(bk, "ldmatrix")), "ldmatrix.x4.trans");
  CHECK_STR(cJSON_GetStringValue(at(bk, "swizzle")), "xor16B");
  CHECK(cJSON_IsFalse(at(bk, "k_contig")) && cJSON_IsString(at(bk, "why")));
  const cJSON *con = at(a, "contraction");
  CHECK_STR(cJSON_GetStringValue(at(con, "lhs")), "A");
  CHECK_STR(cJSON_GetStringValue(at(con, "rhs")), "B");
  CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(at(con, "k"), 0)), "k");
  CHECK_STR(cJSON_GetStringValue(at(at(con, "contiguous"), "rhs")), "n");
  char *s1 = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  pc_free(&c);
  CHECK(pc_run_file(&c, "gemm_bias_relu.json", DT_FP16));
  if (c.pc) {
    j = pc_dump(c.pc);
    char *s2 = cJSON_PrintUnformatted(j);
    CHECK_STR(s1, s2);
    free(s2);
    cJSON_Delete(j);
  }
  free(s1);
  pc_free(&c);
  j = pc_dump(NULL);
  CHECK(cJSON_GetArraySize(at(j, "analysis")) == 0);
  cJSON_Delete(j);
}

/* pc_verify accepts pc_analyze's report and rejects a contraction whose axis
 * groups overlap, and a tail axis the region does not have. */
static void test_verify(void) {
  pcase c;
  CHECK(pc_run_file(&c, "gemm_bias_relu.json", DT_FP16));
  if (!c.pc) return pc_free(&c);
  diag_list dl;
  diag_init(&dl);
  CHECK(pc_verify(c.pc, &dl) && dl.n == 0);
  pc_contraction *con = &c.pc->a[0].con;
  int k0 = con->k_axes[0];
  con->k_axes[0] = con->m_axes[0];
  CHECK(!pc_verify(c.pc, &dl) && diag_count(&dl, "E0004") == 1);
  con->k_axes[0] = k0;
  const char *t0 = c.pc->a[0].tail_axes[0];
  c.pc->a[0].tail_axes[0] = "no_such_axis";
  CHECK(!pc_verify(c.pc, &dl) && diag_count(&dl, "E0004") == 2);
  c.pc->a[0].tail_axes[0] = t0;
  CHECK(pc_verify(c.pc, &dl));
  diag_free(&dl);
  pc_free(&c);
}

int main(void) {
  arena_init(&A);
  test_verify();
  test_gemm_axes_tails_no_halo();
  test_gemm_dependences();
  test_gemm_buffers_and_hints();
  test_gemm_b_nk_not_trans();
  test_gemm_fixed_tails_and_depth();
  test_conv_s2_halo();
  test_conv_s1_halo();
  test_attention();
  test_fusion_verdict();
  test_elementwise_region();
  test_unit_axes_and_head_split();
  test_non_affine_region();
  test_compute_at_refused();
  test_isl_error_is_diagnostic();
  test_dump();
  arena_free(&A);
  return check_status("test_polycore");
}
