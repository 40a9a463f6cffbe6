/* GPU IR: the sm80 contraction skeleton with the plan injected, async tokens
 * and tail predication (spec §9). */
#include "gpuir.h"

#include <stdio.h>
#include <string.h>

static void emit(gpu_kernel *k, arena *A, gpu_stmt_kind kind, const char *what, const char *detail,
                 const char *out, int nin, const char *in0, const char *in1) {
  gpu_stmt s = {kind, what, detail, nin, {in0, in1, NULL, NULL}, out};
  ARENA_PUSH(A, k->st, k->nst, k->cap_st, s);
}

static const char *axes_str(arena *A, const region *r, const int *ax, int n) {
  const char *s = "";
  for (int i = 0; i < n; i++) s = arena_printf(A, "%s%s%s", s, i ? "," : "", r->it[ax[i]].name);
  return arena_printf(A, "(%s)", s);
}

gpu_kernel *gpuir_build(arena *A, const region *r, const pc_analysis *a, const sched_plan *p, const char *name,
                        diag_list *dl) {
  const pc_contraction *c = &a->con;
  const char *at = arena_printf(A, "GPU IR[%s]", r->name);
  if (!c->present) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "region %s has no contraction to put on the %s skeleton", r->name,
                "sm80 contraction");
    return NULL;
  }
  /* everything but the accumulator must be its pointwise epilogue */
  for (int l = 0; l < r->nlets; l++)
    if (l != r->acc_let && !r->lets[l].post_reduce) {
      diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL,
                  "let %s of region %s is neither the contraction nor a pointwise epilogue on it", r->lets[l].name,
                  r->name);
      return NULL;
    }
  int nsig = 0;
  gpu_kernel *k = ARENA_NEW(A, gpu_kernel);
  for (int y = 0; y < r->nyields; y++)
    if (strcmp(r->out[r->yields[y].output].materialize, "gmem") == 0) {
      k->out = r->yields[y].output;
      k->out_let = r->yields[y].let;
      k->out_dt = r->yields[y].cast;
      nsig++;
    }
  if (nsig != 1 || r->nyields != 1) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "region %s stores %d outputs; the skeleton stores exactly one",
                r->name, r->nyields);
    return NULL;
  }
  k->name = name;
  k->skeleton = "sm80_contraction";
  k->algo = p->algo ? p->algo : "implicit_gemm";
  k->r = r;
  k->a = a;
  k->plan = *p;
  k->nm = c->nm, k->nn = c->nn, k->nb = c->nb, k->nk = c->nk;
  k->m_axes = c->m_axes, k->n_axes = c->n_axes, k->b_axes = c->b_axes, k->k_axes = c->k_axes;
  if (k->nm == 0 || k->nn == 0) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "region %s has an empty M or N group", r->name);
    return NULL;
  }
  for (int side = 0; side < 2; side++) {
    gpu_operand *o = side ? &k->B : &k->A;
    o->input = side ? c->rhs : c->lhs;
    o->tensor = r->in[o->input].name;
    o->read = side ? c->rhs_read : c->lhs_read;
    o->k_contig = side ? c->rhs_k_contig : c->lhs_k_contig;
    o->contig_axis = side ? c->rhs_contig : c->lhs_contig;
    o->vec_max = o->contig_axis >= 0 ? 16 / dtype_bytes(r->in[o->input].dt) : 1;
    if (o->contig_axis < 0) o->k_contig = true; /* scalar chunks: any layout; keep K-major tiles */
  }
  k->T = r->in[k->A.input].dt;
  if (k->T != r->in[k->B.input].dt || (k->T != DT_FP16 && k->T != DT_BF16)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "the tensor-core skeleton takes fp16 or bf16 operands of one dtype, not %s x %s",
                dtype_name(r->in[k->A.input].dt), dtype_name(r->in[k->B.input].dt));
    return NULL;
  }
  /* chunk widths: the plan's width and every narrower one, for operands whose
   * pointers or leading dimensions are less aligned (dispatch picks) */
  int vmax = k->A.vec_max < k->B.vec_max ? k->A.vec_max : k->B.vec_max;
  if (p->vec < vmax) vmax = p->vec;
  for (int v = vmax; v >= 1; v /= 2) k->vecs[k->nvec++] = v;
  /* tails: Poly Core's tail axes */
  k->tail = ARENA_ARRAY(A, const char *, a->ntail + 1);
  for (int i = 0; i < a->ntail; i++) k->tail[k->ntail++] = a->tail_axes[i];

  /* the skeleton, with tokens */
  int BM = p->tile[0], BN = p->tile[1], BK = p->tile[2], S = p->stages;
  const char *ta = k->A.k_contig ? arena_printf(A, "[%d][%d][%d] (M x K, K contiguous)", S, BM, BK)
                                 : arena_printf(A, "[%d][%d][%d] (K x M, M contiguous)", S, BK, BM);
  const char *tb = k->B.k_contig ? arena_printf(A, "[%d][%d][%d] (N x K, K contiguous)", S, BN, BK)
                                 : arena_printf(A, "[%d][%d][%d] (K x N, N contiguous)", S, BK, BN);
  emit(k, A, GS_ALLOC_SHARED, "smA", arena_printf(A, "%s %s, swizzle xor16B", dtype_name(k->T), ta), NULL, 0, NULL, NULL);
  emit(k, A, GS_ALLOC_SHARED, "smB", arena_printf(A, "%s %s, swizzle xor16B", dtype_name(k->T), tb), NULL, 0, NULL, NULL);
  const char *pm = axes_str(A, r, k->m_axes, k->nm), *pn = axes_str(A, r, k->n_axes, k->nn),
             *pk = axes_str(A, r, k->k_axes, k->nk);
  for (int s = 0; s < S - 1; s++) {
    const char *tA = arena_printf(A, "tA%d", s), *tB = arena_printf(A, "tB%d", s);
    emit(k, A, GS_CP_ASYNC, arena_printf(A, "smA[%d] <- %s", s, k->A.tensor),
         arena_printf(A, "M%s x K%s tile %d, pred tails", pm, pk, s), tA, 0, NULL, NULL);
    emit(k, A, GS_CP_ASYNC, arena_printf(A, "smB[%d] <- %s", s, k->B.tensor),
         arena_printf(A, "N%s x K%s tile %d, pred tails", pn, pk, s), tB, 0, NULL, NULL);
    emit(k, A, GS_COMMIT, "cp.async.commit_group", NULL, NULL, 2, tA, tB);
  }
  emit(k, A, GS_LOOP, "kt", arena_printf(A, "0 <= kt < ceil(K%s / %d)", pk, BK), NULL, 0, NULL, NULL);
  emit(k, A, GS_WAIT, "cp.async.wait_group", arena_printf(A, "%d", S - 2), NULL, 2, "tA[kt]", "tB[kt]");
  emit(k, A, GS_BARRIER, "bar.sync", "stage kt landed for every thread; stage kt-1 free", NULL, 0, NULL, NULL);
  emit(k, A, GS_CP_ASYNC, arena_printf(A, "smA[(kt+%d)%%%d] <- %s", S - 1, S, k->A.tensor), "tile kt+stages-1, pred tails",
       "tA[kt+S-1]", 0, NULL, NULL);
  emit(k, A, GS_CP_ASYNC, arena_printf(A, "smB[(kt+%d)%%%d] <- %s", S - 1, S, k->B.tensor), "tile kt+stages-1, pred tails",
       "tB[kt+S-1]", 0, NULL, NULL);
  emit(k, A, GS_COMMIT, "cp.async.commit_group", NULL, NULL, 2, "tA[kt+S-1]", "tB[kt+S-1]");
  emit(k, A, GS_LDMATRIX, k->A.k_contig ? "ldmatrix.x4" : "ldmatrix.x4.trans",
       arena_printf(A, "smA[kt%%%d]: A fragments", S), NULL, 1, "tA[kt]", NULL);
  emit(k, A, GS_LDMATRIX, k->B.k_contig ? "ldmatrix.x4" : "ldmatrix.x4.trans",
       arena_printf(A, "smB[kt%%%d]: B fragments", S), NULL, 1, "tB[kt]", NULL);
  emit(k, A, GS_MMA, arena_printf(A, "mma.sync.m16n8k16.row.col.f32.%s", dtype_name(k->T)),
       arena_printf(A, "warp tile %dx%d", BM / p->warps_m, BN / p->warps_n), "tMMA", 0, NULL, NULL);
  emit(k, A, GS_END_LOOP, "kt", NULL, NULL, 0, NULL, NULL);
  emit(k, A, GS_WAIT, "cp.async.wait_group", "0", NULL, 0, NULL, NULL);
  emit(k, A, GS_BARRIER, "bar.sync", "the ring is free for the staging tile", NULL, 0, NULL, NULL);
  emit(k, A, GS_STAGE_ACC, "st.shared.v2.f32", arena_printf(A, "acc -> stage[%d][%d+8] fp32", BM, BN), "tStage", 1,
       "tMMA", NULL);
  emit(k, A, GS_BARRIER, "bar.sync", "staging tile complete", NULL, 0, NULL, NULL);
  const char *lets = "";
  for (int l = 0; l < r->nlets; l++)
    if (r->lets[l].post_reduce) lets = arena_printf(A, "%s%s%s", lets, *lets ? ", " : "", r->lets[l].name);
  emit(k, A, GS_EPILOGUE, r->lets[r->acc_let].name, arena_printf(A, "lets: %s", *lets ? lets : "(none)"), "tE", 1,
       "tStage", NULL);
  const char *pred = "";
  for (int i = 0; i < k->ntail; i++) pred = arena_printf(A, "%s%s%s < %s", pred, i ? " && " : "", k->tail[i], k->tail[i]);
  emit(k, A, GS_ST_GLOBAL, arena_printf(A, "st.global.v2.b32 (4 x %s) -> %s", dtype_name(k->out_dt), r->out[k->out].name),
       arena_printf(A, "pred tails (%s), scalar where a row ends or is misaligned", *pred ? pred : "none"), NULL, 1, "tE",
       NULL);
  if (!gpuir_verify(k, dl)) return NULL;
  return k;
}

/* Tokens: a TokLoad is consumed by the wait that covers it before any
 * ldmatrix reads its tile; mma produces TokCompute, which the staging and
 * epilogue consume in order; the store consumes TokEpilogue; nothing is used
 * before it is produced.  Loop-carried tokens are written "tA[kt]": the
 * wait of iteration kt covers the load issued STAGES-1 iterations earlier
 * (or in the prologue). */
bool gpuir_verify(const gpu_kernel *k, diag_list *dl) {
  const char *produced[64], *waited[64];
  int np = 0, nw = 0;
  bool ok = true;
  for (int i = 0; i < k->nst; i++) {
    const gpu_stmt *s = &k->st[i];
    for (int t = 0; t < s->nin; t++) {
      const char *tok = s->in[t];
      bool have = false;
      for (int j = 0; j < np; j++) have |= strcmp(produced[j], tok) == 0;
      /* a loop-carried load token is produced by the prologue (tA0..) and by
       * the refill of earlier iterations (tA[kt+S-1]) */
      if (!have && strchr(tok, '[')) {
        char pre[8] = {0};
        size_t n = (size_t)(strchr(tok, '[') - tok);
        memcpy(pre, tok, n < 7 ? n : 7);
        for (int j = 0; j < np; j++) have |= strncmp(produced[j], pre, n) == 0;
      }
      if (!have) {
        diag_report(dl, D_GRAPH_SCHEMA, "GPU IR", "This is a compiler bug; please report it.",
                    "statement %d (%s) uses token %s before it is produced", i, s->what, tok);
        ok = false;
      }
      if (s->k == GS_WAIT && nw < 64) waited[nw++] = tok;
      if (s->k == GS_LDMATRIX) {
        bool w = false;
        for (int j = 0; j < nw; j++) w |= strcmp(waited[j], tok) == 0;
        if (!w) {
          diag_report(dl, D_GRAPH_SCHEMA, "GPU IR", "This is a compiler bug; please report it.",
                      "ldmatrix reads tile %s before a wait covers it", tok);
          ok = false;
        }
      }
    }
    if (s->out && np < 64) produced[np++] = s->out;
  }
  /* the last statement is the store, fed by the epilogue */
  if (k->nst == 0 || k->st[k->nst - 1].k != GS_ST_GLOBAL) {
    diag_report(dl, D_GRAPH_SCHEMA, "GPU IR", "This is a compiler bug; please report it.", "the skeleton does not end in a store");
    ok = false;
  }
  return ok;
}

cJSON *gpuir_dump(const gpu_kernel *k) {
  static const char *const names[] = {"AllocShared", "CpAsync",    "CommitGroup", "Wait",     "Barrier",  "Loop",
                                      "EndLoop",     "LdMatrix",   "Mma",         "StageAcc", "Epilogue", "StGlobalVec"};
  cJSON *root = cJSON_CreateObject();
  cJSON *g = cJSON_AddObjectToObject(root, "gpu_ir");
  cJSON_AddStringToObject(g, "kernel", k->name);
  cJSON_AddStringToObject(g, "arch", k->plan.arch);
  cJSON_AddStringToObject(g, "skeleton", k->skeleton);
  cJSON_AddStringToObject(g, "algo_choice", k->algo);
  cJSON *t = cJSON_AddArrayToObject(g, "tile");
  for (int i = 0; i < 3; i++) cJSON_AddItemToArray(t, cJSON_CreateNumber(k->plan.tile[i]));
  cJSON_AddNumberToObject(g, "stages", k->plan.stages);
  char wt[32];
  snprintf(wt, sizeof wt, "%dx%d", k->plan.tile[0] / k->plan.warps_m, k->plan.tile[1] / k->plan.warps_n);
  cJSON_AddStringToObject(g, "warp_tile", wt);
  cJSON *v = cJSON_AddArrayToObject(g, "vec_variants");
  for (int i = 0; i < k->nvec; i++) cJSON_AddItemToArray(v, cJSON_CreateNumber(k->vecs[i]));
  cJSON *ops = cJSON_AddArrayToObject(g, "operands");
  for (int side = 0; side < 2; side++) {
    const gpu_operand *o = side ? &k->B : &k->A;
    cJSON *oo = cJSON_CreateObject();
    cJSON_AddStringToObject(oo, "role", side ? "B" : "A");
    cJSON_AddStringToObject(oo, "tensor", o->tensor);
    cJSON_AddStringToObject(oo, "contiguous", o->contig_axis >= 0 ? k->r->it[o->contig_axis].name : "none");
    cJSON_AddBoolToObject(oo, "k_contiguous", o->k_contig);
    cJSON_AddStringToObject(oo, "ldmatrix", o->k_contig ? "x4" : "x4.trans");
    cJSON_AddItemToArray(ops, oo);
  }
  cJSON *tails = cJSON_AddArrayToObject(g, "tail_predicates");
  for (int i = 0; i < k->ntail; i++) cJSON_AddItemToArray(tails, cJSON_CreateString(k->tail[i]));
  cJSON *st = cJSON_AddArrayToObject(g, "stmts");
  for (int i = 0; i < k->nst; i++) {
    const gpu_stmt *s = &k->st[i];
    cJSON *o = cJSON_CreateObject();
    cJSON *b = cJSON_AddObjectToObject(o, names[s->k]);
    cJSON_AddStringToObject(b, "what", s->what);
    if (s->detail) cJSON_AddStringToObject(b, "detail", s->detail);
    if (s->nin) {
      cJSON *in = cJSON_AddArrayToObject(b, "in_token");
      for (int j = 0; j < s->nin; j++) cJSON_AddItemToArray(in, cJSON_CreateString(s->in[j]));
    }
    if (s->out) cJSON_AddStringToObject(b, "out_token", s->out);
    cJSON_AddItemToArray(st, o);
  }
  return root;
}
