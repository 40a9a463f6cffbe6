/* Schedule Plan (spec §8, §11): the arch table; validation of pinned plans,
 * one bad plan per code E1701-E1706; a pinned plan used as given; the
 * search (10-20 candidates with their STOP rules, a chosen plan that fits
 * 80% of shared memory and validates on every arch, deterministic); the cost
 * model's monotonicity; and the region-derived fields (epilogue, tails,
 * vector width and axis, algo_choice) on GEMM, GEMM with B stored [N,K],
 * batched attention, conv and fp32 graphs.  Regions come from the real
 * pipeline (frontend -> tiny -> indexbook -> poly_view -> region) and
 * pc_classify; the tail axes are set the way Poly Core reports them (axes of
 * symbolic size). */
#include <math.h>

#include "pipe.h"
#include "plan.h"
#include "polycore.h"
#include "region.h"

static arena A;

static const char *const ALL_ARCHS[] = {"sm80", "sm86", "sm89", "sm90a", "sm100", "sm120"};
#define NARCH 6

/* One region through the pipeline, with its contraction classified. */
typedef struct prun {
  front f;
  region_set *rs;
  const region *r;
  pc_analysis an;
} prun;

static void prun_analyze(prun *x, int ri) {
  x->rs = region_build(&x->f.A, x->f.pv, &x->f.dl);
  if (!x->rs || ri >= x->rs->n) {
    x->r = NULL;
    return;
  }
  x->r = &x->rs->r[ri];
  memset(&x->an, 0, sizeof x->an);
  x->an.region = ri;
  pc_classify(&x->f.A, x->r, &x->an.con);
  int n = x->r->niters + x->r->nred;
  x->an.tail_axes = ARENA_ARRAY(&x->f.A, const char *, n + 1);
  for (int i = 0; i < n; i++) {
    int64_t v;
    if (!sx_is_int(x->r->it[i].size, &v)) x->an.tail_axes[x->an.ntail++] = x->r->it[i].name;
  }
}

static bool prun_file(prun *x, const char *name, dtype T, int ri) {
  pipe_init(&x->f);
  x->r = NULL;
  if (!pipe_run_file(&x->f, name, T, TO_POLY_VIEW)) {
    pipe_show(&x->f);
    return false;
  }
  prun_analyze(x, ri);
  if (!x->r) pipe_show(&x->f);
  return x->r != NULL;
}

static bool prun_text(prun *x, const char *text, dtype T, int ri) {
  pipe_init(&x->f);
  x->r = NULL;
  fe_instance inst = {T, NULL, NULL};
  if (!pipe_run_inst(&x->f, text, &inst, TO_POLY_VIEW)) {
    pipe_show(&x->f);
    return false;
  }
  prun_analyze(x, ri);
  if (!x->r) pipe_show(&x->f);
  return x->r != NULL;
}

static void prun_free(prun *x) { pipe_free(&x->f); }

/* A GEMM with B stored [N,K] (PyTorch's Linear weight) through a Transpose
 * node, no epilogue; K is a compile-time 64 when `kconst`. */
static const char *gemm_nt(bool kconst) {
  return J(kconst ? "{'name':'lin','signature':{'dims':['M','N'],'inputs':[{'tensor':'X'},{'tensor':'W'}],"
                    "'outputs':[{'tensor':'Y'}]},"
                    "'tensors':{'X':{'dtype':'T','shape':['M',64]},'W':{'dtype':'T','shape':['N',64]},"
                    "'Y':{'dtype':'T','shape':['M','N']}},"
                    "'graph':[{'op':'Transpose','name':'wt','inputs':['W'],'outputs':['Wt'],'attrs':{'perm':[1,0]}},"
                    "{'op':'GEMM','name':'mm','inputs':['X','Wt'],'outputs':['Y'],'attrs':{'acc_dtype':'fp32'}}]}"
                  : "{'name':'lin','signature':{'dims':['M','N','K'],'inputs':[{'tensor':'X'},{'tensor':'W'}],"
                    "'outputs':[{'tensor':'Y'}]},"
                    "'tensors':{'X':{'dtype':'T','shape':['M','K']},'W':{'dtype':'T','shape':['N','K']},"
                    "'Y':{'dtype':'T','shape':['M','N']}},"
                    "'graph':[{'op':'Transpose','name':'wt','inputs':['W'],'outputs':['Wt'],'attrs':{'perm':[1,0]}},"
                    "{'op':'GEMM','name':'mm','inputs':['X','Wt'],'outputs':['Y'],'attrs':{'acc_dtype':'fp32'}}]}");
}

static cJSON *parse(const char *single_quoted) { return cJSON_Parse(J(single_quoted)); }

static const plan_candidate *find_cand(const plan_result *pr, int bm, int bn, int bk, int st, int wm, int wn) {
  for (int i = 0; i < pr->ncand; i++) {
    const sched_plan *p = &pr->cand[i].p;
    if (p->tile[0] == bm && p->tile[1] == bn && p->tile[2] == bk && p->stages == st && p->warps_m == wm &&
        p->warps_n == wn)
      return &pr->cand[i];
  }
  return NULL;
}

static char *dump_text(const plan_result *pr) {
  cJSON *j = plan_dump(pr);
  char *s = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return s;
}

/* ---- arch table -------------------------------------------------------------------------- */

static void test_arch_table(void) {
  for (int i = 0; i < NARCH; i++) {
    const arch_info *ai = plan_arch(ALL_ARCHS[i]);
    CHECK(ai != NULL);
    if (!ai) continue;
    CHECK_STR(ai->name, ALL_ARCHS[i]);
    CHECK(ai->smem_per_sm - ai->smem_per_block == ai->smem_reserved_per_block);
    CHECK(ai->sm_count > 0 && ai->peak_tflops > 0 && ai->peak_gbs > 0 && ai->regs_per_sm == 65536);
  }
  CHECK(plan_arch("sm90") == plan_arch("sm90a"));
  CHECK(plan_arch("sm70") == NULL && plan_arch(NULL) == NULL);
  const arch_info *a100 = plan_arch("sm80"), *h100 = plan_arch("sm90a"), *b200 = plan_arch("sm100"),
                  *r5090 = plan_arch("sm120");
  CHECK(a100->sm_count == 108 && a100->peak_tflops == 312 && a100->peak_gbs == 2039 && a100->smem_per_block == 166912);
  CHECK(h100->sm_count == 132 && h100->peak_tflops == 989 && h100->peak_gbs == 3350 && h100->smem_per_block == 232448);
  CHECK(b200->sm_count == 148 && b200->peak_tflops == 2250 && b200->peak_gbs == 8000 && b200->smem_per_block == 232448);
  CHECK(r5090->sm_count == 170 && r5090->peak_tflops == 209.5 && r5090->peak_gbs == 1792 &&
        r5090->smem_per_block == 101376);
}

/* ---- the search ---------------------------------------------------------------------------- */

static void test_search_gemm_every_arch(void) {
  prun x;
  CHECK(prun_file(&x, "gemm_bias_relu.json", DT_FP16, 0));
  if (!x.r) return prun_free(&x);
  CHECK(x.an.con.present);
  for (int i = 0; i < NARCH; i++) {
    const arch_info *ai = plan_arch(ALL_ARCHS[i]);
    diag_list dl;
    diag_init(&dl);
    plan_result *pr = plan_choose(&x.f.A, x.r, &x.an, ai, NULL, 0, NULL, &dl, "test");
    CHECK(pr != NULL && dl.n == 0);
    if (!pr) {
      diag_print_text(&dl, ALL_ARCHS[i]);
      diag_free(&dl);
      continue;
    }
    /* the spec's MVP space was 10-20 points; issue 10 adds small-M and wide tiles */
    CHECK(pr->ncand >= 10 && pr->ncand <= 27);
    CHECK(pr->nshapes == 3 && pr->shapes[0][0] == 4096 && pr->shapes[2][0] == 128);
    int kept = 0;
    double best = 1e300;
    for (int c = 0; c < pr->ncand; c++) {
      const plan_candidate *pc = &pr->cand[c];
      CHECK(pc->kept == (pc->stop == STOP__NONE));
      if (pc->kept) {
        kept++;
        CHECK(pc->p.time_us > 0 && pc->p.time_us < 1e9);
        if (pc->p.time_us < best) best = pc->p.time_us;
      } else {
        CHECK(pc->why != NULL);
      }
      /* small to large */
      if (c > 0) CHECK(pc->p.tile[0] * pc->p.tile[1] >= pr->cand[c - 1].p.tile[0] * pr->cand[c - 1].p.tile[1]);
    }
    CHECK(kept >= 1);
    const sched_plan *p = &pr->chosen;
    CHECK(p->time_us == best);
    CHECK(!p->pinned);
    CHECK(p->arch == plan_arch_id(ai));
    CHECK(p->smem_bytes <= PLAN_SMEM_FRACTION * ai->smem_per_block);
    CHECK(p->regs_per_thread <= PLAN_MAX_REGS && p->ctas_per_sm >= 1);
    CHECK(p->vec == 8);
    CHECK_STR(p->vec_axis, "k.i.i,n.i.i");
    CHECK_STR(join(&A, p->nepi, p->epilogue), "C1,C1.cmplt,C");
    CHECK_STR(join(&A, p->npred, p->predicate_tail), "m.i.i,n.i.i,k.i.i");
    CHECK_STR(pattern_key(p->pattern), "matmul");
    CHECK(p->algo == ALGO_IMPLICIT_GEMM);
    CHECK(p->barrier_model == BARRIER_CP_ASYNC_GROUP && strcmp(barrier_name(p->barrier_model), "cp_async_group") == 0);
    CHECK(p->async_enable == (p->stages > 2) && p->prefetch_depth == p->stages - 1 && !p->epilogue_overlap);
    CHECK(p->nedges == 1 && strcmp(p->edges[0].from, "C0") == 0 && strcmp(p->edges[0].to, "C") == 0 &&
          p->edges[0].buffer == BUF_REG);
    /* it validates on every arch whose shared memory is at least as large */
    for (int j = 0; j < NARCH; j++) {
      const arch_info *aj = plan_arch(ALL_ARCHS[j]);
      if (aj->smem_per_block < ai->smem_per_block) continue;
      diag_list dv;
      diag_init(&dv);
      CHECK(plan_validate(p, x.r, &x.an, aj, &dv, "chosen"));
      diag_free(&dv);
    }
    /* the STOP rules that must fire: 128x128 with 8 warps leaves one CTA per
     * SM by registers; 128x128x64 in 3 stages (96 KB) is over 80% of 99 KB */
    const plan_candidate *c8 = find_cand(pr, 128, 128, 32, 3, 2, 4);
    CHECK(c8 && c8->stop == STOP_REGS_ONE_CTA_PER_SM);
    const plan_candidate *big = find_cand(pr, 128, 128, 64, 3, 2, 2);
    CHECK(big != NULL);
    if (big && ai->smem_per_block < 120000) CHECK(big->stop == STOP_SMEM_OVER_80PCT);
    if (big && ai->smem_per_block > 120000) CHECK(big->stop == STOP__NONE);
    diag_free(&dl);
  }
  prun_free(&x);
}

/* The chosen plans and the dump: the §8.1 keys in order, plus estimate and
 * candidates. */
static void test_dump_shape(void) {
  prun x;
  CHECK(prun_file(&x, "gemm_bias_relu.json", DT_FP16, 0));
  if (!x.r) return prun_free(&x);
  diag_list dl;
  diag_init(&dl);
  plan_result *pr = plan_choose(&x.f.A, x.r, &x.an, plan_arch("sm80"), NULL, 0, NULL, &dl, "test");
  CHECK(pr != NULL);
  if (pr) {
    cJSON *j = plan_dump(pr);
    static const char *const keys[] = {"tile",         "stages",      "bind",        "raster",        "warp_tile",     "cache",
                                       "vectorize",    "predicate_tail", "epilogue", "arch",          "layout_hints",
                                       "algo_choice",  "local_edges", "async",       "barrier_model", "estimate",
                                       "candidates",   NULL};
    const cJSON *it = j->child;
    for (int k = 0; keys[k]; k++, it = it ? it->next : NULL) CHECK_STR(it ? it->string : NULL, keys[k]);
    CHECK(it == NULL);
    char *bind = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "bind"));
    CHECK_STR(bind, "{\"m.o\":\"block.x\",\"n.o\":\"block.x\",\"m.i.o\":\"warp.y\",\"n.i.o\":\"warp.x\"}");
    free(bind);
    char *cache = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "cache"));
    CHECK_STR(cache, "[{\"tensor\":\"A\",\"where\":\"smem\",\"at\":\"k.i\",\"pingpong\":true},"
                     "{\"tensor\":\"B\",\"where\":\"smem\",\"at\":\"k.i\",\"pingpong\":true}]");
    free(cache);
    const cJSON *est = cJSON_GetObjectItem(j, "estimate");
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(est, "source")), "search");
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(est, "shapes")) == 3);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "candidates")) == pr->ncand);
    const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "candidates"), 0);
    CHECK(cJSON_GetObjectItem(c0, "stop") != NULL && cJSON_GetObjectItem(c0, "estimate") != NULL);
    /* a plan dump reads back as a pinned plan that gives the same plan */
    cJSON *back = cJSON_Duplicate(j, true);
    cJSON_DeleteItemFromObject(back, "estimate");
    cJSON_DeleteItemFromObject(back, "candidates");
    diag_list d2;
    diag_init(&d2);
    plan_result *pp = plan_choose(&x.f.A, x.r, &x.an, plan_arch("sm80"), back, 0, NULL, &d2, "pinned");
    CHECK(pp != NULL && d2.n == 0);
    if (pp) {
      CHECK(pp->chosen.pinned && pp->ncand == 0);
      cJSON *j2 = plan_dump(pp);
      cJSON_DeleteItemFromObject(j2, "estimate");
      cJSON_DeleteItemFromObject(j2, "candidates");
      CHECK(cJSON_Compare(j2, back, true));
      cJSON_Delete(j2);
    }
    diag_free(&d2);
    cJSON_Delete(back);
    cJSON_Delete(j);
  }
  diag_free(&dl);
  prun_free(&x);
}

static void test_determinism(void) {
  char *s[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    prun x;
    CHECK(prun_file(&x, "gemm_bias_relu.json", DT_BF16, 0));
    if (!x.r) {
      prun_free(&x);
      continue;
    }
    diag_list dl;
    diag_init(&dl);
    plan_result *pr = plan_choose(&x.f.A, x.r, &x.an, plan_arch("sm90a"), NULL, 0, NULL, &dl, "test");
    if (pr) s[k] = dump_text(pr);
    diag_free(&dl);
    prun_free(&x);
  }
  CHECK(s[0] && s[1] && strcmp(s[0], s[1]) == 0);
  free(s[0]);
  free(s[1]);
}

/* dlcgen --calibrate: a dlc-bench CSV whose rows measure the searched plan
 * three times slower than its estimate on sm80 moves the search off it; a
 * factor of 1 leaves the choice alone; bad files are E0001 / E0005. */
static void test_calibration(void) {
  prun x;
  CHECK(prun_file(&x, "gemm_bias_relu.json", DT_FP16, 0));
  if (!x.r) return prun_free(&x);
  const arch_info *ai = plan_arch("sm80");
  diag_list dl;
  diag_init(&dl);
  plan_result *base = plan_choose(&x.f.A, x.r, &x.an, ai, NULL, 0, NULL, &dl, "test");
  CHECK(base && dl.n == 0);
  if (!base) return diag_free(&dl), prun_free(&x);
  const sched_plan *b = &base->chosen;
  char plan[64];
  snprintf(plan, sizeof plan, "%dx%dx%d s%d w%dx%d r%d", b->tile[0], b->tile[1], b->tile[2], b->stages, b->warps_m,
           b->warps_n, b->raster_group);
  static const char *const hdr = "op,shape,dtype,arch,plan,ctas,flops,bytes,occupancy,estimate_us,actual_us\n";
  for (int slow = 0; slow < 2; slow++) {
    const char *path = slow ? "test_plan_calib_slow.csv" : "test_plan_calib_same.csv";
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) continue;
    fputs(hdr, f);
    /* two rows of the plan (geometric mean 3 or 1), a row of another arch and one without actual_us */
    fprintf(f, "gemm_bias_relu,4096x4096x4096,fp16,sm80,%s,1024,1,1,0.9,100.00,%s\n", plan, slow ? "200.00" : "100.00");
    fprintf(f, "gemm_bias_relu,1024x1024x1024,fp16,sm80,%s,64,1,1,0.5,10.00,%s\n", plan, slow ? "45.00" : "10.00");
    fprintf(f, "gemm_bias_relu,1024x1024x1024,fp16,sm90a,%s,64,1,1,0.5,10.00,1.00\n", plan);
    fprintf(f, "gemm_bias_relu,1024x1024x1024,fp16,sm80,%s,64,1,1,0.5,10.00,\n", plan);
    fclose(f);
    plan_calibration cal;
    CHECK(plan_calibration_read(&x.f.A, path, &cal, &dl) && dl.n == 0);
    CHECK(cal.n == 2); /* sm80 and sm90a entries of the one plan */
    for (int i = 0; i < cal.n; i++)
      if (cal.e[i].arch == ARCH_SM80) CHECK(cal.e[i].rows == 2 && fabs(cal.e[i].factor - (slow ? 3.0 : 1.0)) < 1e-9);
    const arch_info *one[1] = {ai};
    plan_result *pr = plan_choose_calibrated(&x.f.A, x.r, &x.an, one, 1, NULL, 0, NULL, &cal, &dl, "test");
    CHECK(pr != NULL);
    if (pr) {
      bool same = pr->chosen.tile[0] == b->tile[0] && pr->chosen.tile[1] == b->tile[1] &&
                  pr->chosen.tile[2] == b->tile[2] && pr->chosen.stages == b->stages &&
                  pr->chosen.warps_m == b->warps_m && pr->chosen.warps_n == b->warps_n;
      CHECK(slow ? !same : same);
    }
    remove(path);
  }
  /* E0001: no file; E0005: no header, a short row, a non-number */
  plan_calibration cal;
  CHECK(!plan_calibration_read(&x.f.A, "no_such_calibration.csv", &cal, &dl) && diag_count(&dl, "E0001") == 1);
  static const char *const bad[] = {"op,shape\n", "", "H\ngemm,1x1x1,fp16,sm80,16x16x64 s4 w1x1 r8\n",
                                    "H\ngemm,1x1x1,fp16,sm80,16x16x64 s4 w1x1 r8,1,1,1,1,ten,5\n"};
  for (int i = 0; i < 4; i++) {
    FILE *f = fopen("test_plan_calib_bad.csv", "w");
    if (!f) continue;
    if (strncmp(bad[i], "H\n", 2) == 0) fprintf(f, "%s%s", hdr, bad[i] + 2);
    else fputs(bad[i], f);
    fclose(f);
    diag_list d2;
    diag_init(&d2);
    CHECK(!plan_calibration_read(&x.f.A, "test_plan_calib_bad.csv", &cal, &d2) && diag_count(&d2, "E0005") == 1);
    diag_free(&d2);
    remove("test_plan_calib_bad.csv");
  }
  diag_free(&dl);
  prun_free(&x);
}

/* The caller's shapes steer the choice: a 64x64 problem gets a tile no
 * larger than 64x64 (the default shapes choose 128x128). */
static void test_caller_shapes(void) {
  prun x;
  CHECK(prun_file(&x, "gemm_bias_relu.json", DT_FP16, 0));
  if (!x.r) return prun_free(&x);
  static const int64_t small[1][3] = {{64, 64, 4096}};
  for (int i = 0; i < NARCH; i++) {
    diag_list dl;
    diag_init(&dl);
    plan_result *pr = plan_choose(&x.f.A, x.r, &x.an, plan_arch(ALL_ARCHS[i]), NULL, 1, small, &dl, "test");
    CHECK(pr && pr->nshapes == 1 && pr->chosen.tile[0] <= 64 && pr->chosen.tile[1] <= 64);
    diag_free(&dl);
  }
  prun_free(&x);
}

/* One plan for several archs: STOP rules on each, validates on each, and the
 * ranking is relative per arch (a lone arch's best scores 1). */
static void test_multi_arch(void) {
  prun x;
  CHECK(prun_file(&x, "gemm_bias_relu.json", DT_FP16, 0));
  if (!x.r) return prun_free(&x);
  const arch_info *archs[4] = {plan_arch("sm80"), plan_arch("sm90a"), plan_arch("sm100"), plan_arch("sm120")};
  diag_list dl;
  diag_init(&dl);
  plan_result *pr = plan_choose_multi(&x.f.A, x.r, &x.an, archs, 4, NULL, 0, NULL, &dl, "multi");
  CHECK(pr != NULL && dl.n == 0);
  if (pr) {
    const plan_candidate *big = find_cand(pr, 128, 128, 64, 3, 2, 2);
    CHECK(big && big->stop == STOP_SMEM_OVER_80PCT && strstr(big->why, "sm120"));
    double best = 1e300;
    for (int i = 0; i < pr->ncand; i++)
      if (pr->cand[i].kept) {
        CHECK(pr->cand[i].score >= 1.0);
        if (pr->cand[i].score < best) best = pr->cand[i].score;
      }
    CHECK(pr->chosen.arch == ARCH_SM80);
    for (int k = 0; k < 4; k++) CHECK(plan_validate(&pr->chosen, x.r, &x.an, archs[k], &dl, "multi"));
    /* the chosen candidate has the best score */
    for (int i = 0; i < pr->ncand; i++)
      if (pr->cand[i].kept && pr->cand[i].p.tile[0] == pr->chosen.tile[0] &&
          pr->cand[i].p.tile[1] == pr->chosen.tile[1] && pr->cand[i].p.tile[2] == pr->chosen.tile[2] &&
          pr->cand[i].p.stages == pr->chosen.stages && pr->cand[i].p.warps_m == pr->chosen.warps_m &&
          pr->cand[i].p.warps_n == pr->chosen.warps_n)
        CHECK(pr->cand[i].score == best);
  }
  /* one arch: the best scores exactly 1 */
  pr = plan_choose_multi(&x.f.A, x.r, &x.an, archs, 1, NULL, 0, NULL, &dl, "one");
  CHECK(pr != NULL);
  for (int i = 0; pr && i < pr->ncand; i++)
    if (pr->cand[i].kept && pr->cand[i].p.time_us == pr->chosen.time_us) CHECK(pr->cand[i].score == 1.0);
  /* a pinned plan must fit every arch: 128 KB of ring is over 80% of sm120's 99 KB */
  cJSON *j = parse("{'tile':[128,128,64],'stages':4}");
  CHECK(plan_choose_multi(&x.f.A, x.r, &x.an, archs, 4, j, 0, NULL, &dl, "p") == NULL);
  const diag *d = diag_find(&dl, "E1702");
  CHECK(d && strstr(d->at, "sm120"));
  cJSON_Delete(j);
  diag_free(&dl);
  prun_free(&x);
}

/* ---- pinned plans ---------------------------------------------------------------------------- */

static void test_pinned_used_as_given(void) {
  prun x;
  CHECK(prun_file(&x, "gemm_bias_relu.json", DT_FP16, 0));
  if (!x.r) return prun_free(&x);
  cJSON *j = parse("{'tile':[64,128,32],'stages':2,'warp_tile':'32x64','vectorize':{'axis':'k.i.i','width':4},"
                   "'arch':'sm80'}");
  diag_list dl;
  diag_init(&dl);
  plan_result *pr = plan_choose(&x.f.A, x.r, &x.an, plan_arch("sm80"), j, 0, NULL, &dl, "ops[0].plans[0]");
  CHECK(pr != NULL && dl.n == 0);
  if (pr) {
    const sched_plan *p = &pr->chosen;
    CHECK(p->pinned && pr->ncand == 0);
    CHECK(p->tile[0] == 64 && p->tile[1] == 128 && p->tile[2] == 32 && p->stages == 2);
    CHECK(p->warps_m == 2 && p->warps_n == 2 && p->vec == 4);
    CHECK_STR(p->vec_axis, "k.i.i");
    CHECK(!p->async_enable && p->prefetch_depth == 1);
    CHECK_STR(join(&A, p->nepi, p->epilogue), "C1,C1.cmplt,C");
    CHECK(p->time_us > 0 && p->smem_bytes == 64 * 136 * 4);
  }
  diag_free(&dl);
  cJSON_Delete(j);

  /* the spec §8.1 example, with the overlap the sm80 skeleton does not do
   * turned off and m.o on block.x (the skeleton puts every tile on x, in
   * its raster order): accepted, its epilogue names kept as written */
  j = parse("{'tile':[128,64,64],'stages':2,'bind':{'m.o':'block.x','n.o':'block.x','m.i.o':'warp.y','n.i.o':'warp.x'},"
            "'warp_tile':'64x64','cache':[{'tensor':'A','where':'smem','at':'k.i','pingpong':true},"
            "{'tensor':'B','where':'smem','at':'k.i','pingpong':true}],'vectorize':{'axis':'n.i.i','width':8},"
            "'predicate_tail':['m.i.i','n.i.i','k.i.i'],'epilogue':['bias','relu'],'arch':'sm80',"
            "'layout_hints':{'A_swizzle':true,'B_swizzle':true,'C_stride':'row'},'algo_choice':{'matmul':'implicit_gemm'},"
            "'local_edges':[{'from':'sum_k','to':'relu','buffer':'reg'}],"
            "'async':{'enable':true,'prefetch_depth':1,'epilogue_overlap':false},'barrier_model':'cp_async_group'}");
  diag_init(&dl);
  pr = plan_choose(&x.f.A, x.r, &x.an, plan_arch("sm80"), j, 0, NULL, &dl, "p");
  CHECK(pr != NULL && dl.n == 0);
  if (!pr) diag_print_text(&dl, "spec example");
  if (pr) {
    const sched_plan *p = &pr->chosen;
    CHECK(p->warps_m == 2 && p->warps_n == 1 && p->vec == 8);
    CHECK_STR(join(&A, p->nepi, p->epilogue), "bias,relu");
    CHECK(p->nedges == 1 && strcmp(p->edges[0].from, "sum_k") == 0);
    CHECK(p->async_enable);
  }
  diag_free(&dl);
  /* as written in the spec (epilogue_overlap true, prefetch_depth 2 with 2
   * stages): the skeleton cannot realize it, E1706 at the key */
  cJSON *as = cJSON_GetObjectItem(j, "async");
  cJSON_ReplaceItemInObject(as, "epilogue_overlap", cJSON_CreateTrue());
  cJSON_ReplaceItemInObject(as, "prefetch_depth", cJSON_CreateNumber(2));
  diag_init(&dl);
  CHECK(plan_choose(&x.f.A, x.r, &x.an, plan_arch("sm80"), j, 0, NULL, &dl, "p") == NULL);
  CHECK(diag_count(&dl, "E1706") == 2);
  const diag *d = diag_find(&dl, "E1706");
  CHECK(d && strstr(d->at, "p.async.") == d->at);
  diag_free(&dl);
  cJSON_Delete(j);
  prun_free(&x);
}

/* One bad pinned plan: the code and the place of the first diagnostic. */
static void expect_bad(prun *x, const char *arch, const char *plan, const char *code, const char *at) {
  cJSON *j = parse(plan);
  CHECK(j != NULL);
  diag_list dl;
  diag_init(&dl);
  plan_result *pr = plan_choose(&x->f.A, x->r, &x->an, plan_arch(arch), j, 0, NULL, &dl, "ops[0].plans[0]");
  CHECK(pr == NULL);
  const diag *d = diag_find(&dl, code);
  CHECK(d != NULL);
  if (!d) {
    fprintf(stderr, "expected %s for %s\n", code, plan);
    diag_print_text(&dl, "got");
  } else if (at) {
    CHECK_STR(d->at, at);
  }
  if (d) CHECK(d->why && *d->why && d->suggestion && *d->suggestion);
  diag_free(&dl);
  cJSON_Delete(j);
}

static void test_pinned_errors(void) {
  prun x;
  CHECK(prun_file(&x, "gemm_bias_relu.json", DT_FP16, 0));
  if (!x.r) return prun_free(&x);
  /* E1701 PlanSchema: types, ranges, unknown keys, with the JSON path */
  expect_bad(&x, "sm80", "{'tile':'big'}", "E1701", "ops[0].plans[0].tile");
  expect_bad(&x, "sm80", "{'tile':[128,128]}", "E1701", "ops[0].plans[0].tile");
  expect_bad(&x, "sm80", "{'tile':[128,128,32.5]}", "E1701", "ops[0].plans[0].tile[2]");
  expect_bad(&x, "sm80", "{'stages':5}", "E1701", "ops[0].plans[0].stages");
  expect_bad(&x, "sm80", "{'stages':'3'}", "E1701", "ops[0].plans[0].stages");
  expect_bad(&x, "sm80", "{'warp_tile':'64by64'}", "E1701", "ops[0].plans[0].warp_tile");
  expect_bad(&x, "sm80", "{'tiles':[128,128,32]}", "E1701", "ops[0].plans[0].tiles");
  expect_bad(&x, "sm80", "{'async':{'prefetch_depth':'two'}}", "E1701", "ops[0].plans[0].async.prefetch_depth");
  expect_bad(&x, "sm80", "{'epilogue':['bias',1]}", "E1701", "ops[0].plans[0].epilogue[1]");
  expect_bad(&x, "sm80", "{'arch':'sm70'}", "E1701", "ops[0].plans[0].arch");
  expect_bad(&x, "sm80", "{'barrier_model':'fence'}", "E1701", "ops[0].plans[0].barrier_model");
  expect_bad(&x, "sm80", "{'cache':[{'tensor':'bias','where':'smem','at':'k.i','pingpong':true}]}", "E1701",
             "ops[0].plans[0].cache[0].tensor");
  expect_bad(&x, "sm80", "{'algo_choice':{'conv':'implicit_gemm'}}", "E1701", "ops[0].plans[0].algo_choice.conv");
  expect_bad(&x, "sm80", "{'local_edges':[{'from':'C0','to':'C','buffer':'l2'}]}", "E1701",
             "ops[0].plans[0].local_edges[0].buffer");
  expect_bad(&x, "sm80", "{'tile':[256,256,32],'warp_tile':'16x16'}", "E1701", "ops[0].plans[0].warp_tile");
  expect_bad(&x, "sm80", "[1,2]", "E1701", "ops[0].plans[0]");
  expect_bad(&x, "sm80", "{'raster':{'group_m':0}}", "E1701", "ops[0].plans[0].raster.group_m");
  expect_bad(&x, "sm80", "{'raster':{'group_m':65}}", "E1701", "ops[0].plans[0].raster.group_m");
  expect_bad(&x, "sm80", "{'raster':{'group':8}}", "E1701", "ops[0].plans[0].raster.group");
  /* E1702 SmemOverLimit: 4 x 256 x 64 x 2 = 128 KB > 80% of 99 KB */
  expect_bad(&x, "sm120", "{'tile':[128,128,64],'stages':4}", "E1702", "ops[0].plans[0].tile");
  expect_bad(&x, "sm80", "{'tile':[256,128,64],'stages':4,'warp_tile':'64x64'}", "E1702", NULL);
  /* E1703 RegisterPressure: one warp holding a 128x128 accumulator tile */
  expect_bad(&x, "sm80", "{'tile':[128,128,32],'warp_tile':'128x128'}", "E1703", "ops[0].plans[0].warp_tile");
  /* E1704 MmaShapeMismatch */
  expect_bad(&x, "sm80", "{'tile':[64,64,24]}", "E1704", "ops[0].plans[0].tile");
  expect_bad(&x, "sm80", "{'tile':[64,64,32],'warp_tile':'32x8'}", "E1704", "ops[0].plans[0].warp_tile");
  expect_bad(&x, "sm80", "{'tile':[64,64,32],'warp_tile':'48x32'}", "E1704", "ops[0].plans[0].warp_tile");
  /* E1705 VectorWidthMismatch */
  expect_bad(&x, "sm80", "{'vectorize':{'axis':'k.i.i','width':16}}", "E1705", "ops[0].plans[0].vectorize.width");
  expect_bad(&x, "sm80", "{'vectorize':{'axis':'k.i.i','width':3}}", "E1705", "ops[0].plans[0].vectorize.width");
  /* E1706 NotSupportedForCodegen: what the sm80 skeleton does not do */
  expect_bad(&x, "sm80", "{'barrier_model':'mbarrier'}", "E1706", "ops[0].plans[0].barrier_model");
  /* the output stored by columns, or a stride kinds.def does not name; an
   * operand staged in registers, or at the tile loop (kinds.def's CSTRIDE,
   * CACHE_WHERE, CACHE_AT) */
  expect_bad(&x, "sm80", "{'layout_hints':{'A_swizzle':true,'B_swizzle':true,'C_stride':'col'}}", "E1706",
             "ops[0].plans[0].layout_hints");
  expect_bad(&x, "sm80", "{'layout_hints':{'A_swizzle':true,'B_swizzle':true,'C_stride':'diagonal'}}", "E1706",
             "ops[0].plans[0].layout_hints");
  expect_bad(&x, "sm80", "{'cache':[{'tensor':'A','where':'reg','at':'k.i','pingpong':true}]}", "E1706",
             "ops[0].plans[0].cache[0]");
  expect_bad(&x, "sm80", "{'cache':[{'tensor':'A','where':'smem','at':'k.o','pingpong':true}]}", "E1706",
             "ops[0].plans[0].cache[0]");
  /* an algo_choice algo.def does not have, and one only the plan stage picks */
  expect_bad(&x, "sm80", "{'algo_choice':{'matmul':'winograd'}}", "E1706", "ops[0].plans[0].algo_choice.matmul");
  expect_bad(&x, "sm80", "{'algo_choice':{'matmul':'tma_wgmma'}}", "E1706", "ops[0].plans[0].algo_choice");
  expect_bad(&x, "sm80", "{'bind':{'m.o':'block.y'}}", "E1706", "ops[0].plans[0].bind.m.o");
  expect_bad(&x, "sm80", "{'cache':[{'tensor':'A','where':'gmem'}]}", "E1706", "ops[0].plans[0].cache[0]");
  expect_bad(&x, "sm80", "{'layout_hints':{'A_swizzle':false}}", "E1706", "ops[0].plans[0].layout_hints");
  expect_bad(&x, "sm80", "{'async':{'epilogue_overlap':true}}", "E1706", "ops[0].plans[0].async.epilogue_overlap");
  /* a plan that fits one arch and not another */
  cJSON *j = parse("{'tile':[128,128,64],'stages':4}");
  diag_list dl;
  diag_init(&dl);
  plan_result *pr = plan_choose(&x.f.A, x.r, &x.an, plan_arch("sm80"), j, 0, NULL, &dl, "p");
  CHECK(pr != NULL && dl.n == 0);
  if (pr) {
    CHECK(plan_validate(&pr->chosen, x.r, &x.an, plan_arch("sm90a"), &dl, "p"));
    CHECK(!plan_validate(&pr->chosen, x.r, &x.an, plan_arch("sm89"), &dl, "p") && diag_count(&dl, "E1702") == 1);
  }
  diag_free(&dl);
  cJSON_Delete(j);
  prun_free(&x);
}

static void test_pinned_for(void) {
  cJSON *plans[3] = {parse("{'arch':'sm120','stages':2}"), parse("{'stages':3}"), parse("{'arch':'sm90','stages':4}")};
  CHECK(plan_pinned_for(plans, 3, "sm120") == plans[0]);
  CHECK(plan_pinned_for(plans, 3, "sm90a") == plans[2]);
  CHECK(plan_pinned_for(plans, 3, "sm80") == plans[1]);
  CHECK(plan_pinned_for(plans, 1, "sm80") == NULL);
  CHECK(plan_pinned_for(plans, 0, "sm80") == NULL);
  for (int i = 0; i < 3; i++) cJSON_Delete(plans[i]);
}

/* ---- the cost model -------------------------------------------------------------------------- */

static sched_plan mk(int bm, int bn, int bk, int st, int wm, int wn) {
  sched_plan p;
  memset(&p, 0, sizeof p);
  p.tile[0] = bm, p.tile[1] = bn, p.tile[2] = bk, p.stages = st, p.warps_m = wm, p.warps_n = wn, p.vec = 8;
  return p;
}

static void test_cost_model(void) {
  static const int tiles[][2] = {{64, 64}, {64, 128}, {128, 64}, {128, 128}};
  static const int64_t shapes[][3] = {{4096, 4096, 4096}, {1024, 1024, 1024}, {128, 4096, 4096},
                                      {1, 7, 64},         {129, 255, 1000},   {8192, 8192, 1024}};
  for (int a = 0; a < NARCH; a++) {
    const arch_info *ai = plan_arch(ALL_ARCHS[a]);
    for (int t = 0; t < 4; t++)
      for (int bk = 32; bk <= 64; bk += 32)
        for (int s = 0; s < 6; s++) {
          int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
          double flops = 2.0 * M * N * K, ideal = 2.0 * (M * K + K * N + M * N);
          double prev = 0;
          int prev_ctas = -1;
          for (int st = 2; st <= 4; st++) {
            sched_plan p = mk(tiles[t][0], tiles[t][1], bk, st, 2, 2);
            int smem = st * (tiles[t][0] + tiles[t][1]) * bk * 2, stage = tiles[t][0] * (tiles[t][1] + 8) * 4;
            if (smem > stage) stage = smem;
            if (stage > PLAN_SMEM_FRACTION * ai->smem_per_block) continue; /* invalid there */
            double us = plan_time_us(&p, ai, M, N, K, 2);
            CHECK(us > 0 && isfinite(us));
            /* never faster than the peaks allow */
            CHECK(us * 1e-6 >= flops / (ai->peak_tflops * 1e12) * 0.999);
            CHECK(us * 1e-6 >= ideal / (ai->peak_gbs * 1e9) * 0.999);
            /* more stages never predict slower at equal tile and equal CTAs per SM */
            int ctas = ai->smem_per_sm / (stage + ai->smem_reserved_per_block);
            if (prev_ctas == ctas) CHECK(us <= prev);
            prev = us, prev_ctas = ctas;
            /* a longer K never predicts faster */
            CHECK(plan_time_us(&p, ai, M, N, 2 * K, 2) >= us);
          }
        }
    /* a tile larger than the problem wastes: 64x64x4096 */
    sched_plan small = mk(64, 64, 32, 3, 2, 2), large = mk(128, 128, 32, 3, 2, 2);
    CHECK(plan_time_us(&small, ai, 64, 64, 4096, 2) < plan_time_us(&large, ai, 64, 64, 4096, 2));
    /* and a big problem rewards the big tile's reuse, where two fit an SM */
    if (ai->smem_per_sm >= 2 * (128 * 136 * 4 + ai->smem_reserved_per_block))
      CHECK(plan_time_us(&large, ai, 8192, 8192, 8192, 2) < plan_time_us(&small, ai, 8192, 8192, 8192, 2));
    /* degenerate shapes cost nothing */
    CHECK(plan_time_us(&small, ai, 0, 64, 64, 2) == 0);
  }
}

/* ---- other regions ----------------------------------------------------------------------------- */

static void test_gemm_nt(void) {
  for (int kc = 0; kc < 2; kc++) {
    prun x;
    CHECK(prun_text(&x, gemm_nt(kc), DT_FP16, 0));
    if (!x.r) {
      prun_free(&x);
      continue;
    }
    CHECK(x.an.con.lhs_k_contig && x.an.con.rhs_k_contig);
    for (int i = 0; i < NARCH; i++) {
      diag_list dl;
      diag_init(&dl);
      plan_result *pr = plan_choose(&x.f.A, x.r, &x.an, plan_arch(ALL_ARCHS[i]), NULL, 0, NULL, &dl, "nt");
      CHECK(pr != NULL);
      if (pr) {
        const sched_plan *p = &pr->chosen;
        CHECK(p->vec == 8);
        CHECK_STR(p->vec_axis, "k.i.i");
        CHECK(p->nepi == 0 && p->nedges == 0);
        CHECK_STR(p->cache_tensor[0], "X");
        CHECK_STR(p->cache_tensor[1], "W");
        /* K = 64 is a multiple of BK: no k tail */
        CHECK_STR(join(&A, p->npred, p->predicate_tail), kc ? "m.i.i,n.i.i" : "m.i.i,n.i.i,k.i.i");
        CHECK(plan_validate(p, x.r, &x.an, plan_arch(ALL_ARCHS[i]), &dl, "nt"));
      }
      diag_free(&dl);
    }
    prun_free(&x);
  }
}

/* fp32 operands: 16-byte copies are 4 elements */
static void test_fp32_vec(void) {
  prun x;
  CHECK(prun_file(&x, "gemm_bias_relu.json", DT_FP32, 0));
  if (!x.r) return prun_free(&x);
  diag_list dl;
  diag_init(&dl);
  plan_result *pr = plan_choose(&x.f.A, x.r, &x.an, plan_arch("sm80"), NULL, 0, NULL, &dl, "f32");
  CHECK(pr && pr->chosen.vec == 4 && pr->chosen.elem_bytes == 4);
  diag_free(&dl);
  expect_bad(&x, "sm80", "{'vectorize':{'axis':'k.i.i','width':8}}", "E1705", "ops[0].plans[0].vectorize.width");
  prun_free(&x);
}

/* Attention: the QK^T + softmax region is "attention" (streaming_softmax),
 * P V a batched matmul bound to block.z; neither breaks the search. */
static void test_attention(void) {
  for (int ri = 0; ri < 2; ri++) {
    prun x;
    CHECK(prun_file(&x, "attention_causal.json", DT_FP16, ri));
    if (!x.r) {
      prun_free(&x);
      continue;
    }
    diag_list dl;
    diag_init(&dl);
    plan_result *pr = plan_choose(&x.f.A, x.r, &x.an, plan_arch("sm80"), NULL, 0, NULL, &dl, "attn");
    CHECK(pr != NULL);
    if (pr) {
      CHECK_STR(pattern_key(pr->chosen.pattern), ri == 0 ? "attention" : "matmul");
      CHECK(pr->chosen.algo == (ri == 0 ? ALGO_STREAMING_SOFTMAX : ALGO_IMPLICIT_GEMM));
      CHECK(pr->chosen.batched);
      cJSON *j = plan_dump(pr);
      CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "bind"), "b")), "block.z");
      cJSON_Delete(j);
    }
    diag_free(&dl);
    prun_free(&x);
  }
}

static void test_conv(void) {
  prun x;
  CHECK(prun_file(&x, "conv2d_bias_silu.json", DT_FP16, 0));
  if (!x.r) return prun_free(&x);
  diag_list dl;
  diag_init(&dl);
  plan_result *pr = plan_choose(&x.f.A, x.r, &x.an, plan_arch("sm80"), NULL, 0, NULL, &dl, "conv");
  CHECK(pr != NULL);
  if (pr) {
    CHECK_STR(pattern_key(pr->chosen.pattern), "conv");
    CHECK(pr->chosen.algo == ALGO_IMPLICIT_GEMM);
    CHECK(plan_validate(&pr->chosen, x.r, &x.an, plan_arch("sm80"), &dl, "conv"));
    /* an operand with no contiguous axis is gathered one element at a time */
    if (x.an.con.lhs_contig < 0 || x.an.con.rhs_contig < 0) CHECK(pr->chosen.vec == 1);
    CHECK(pr->chosen.nepi == 6);
  }
  diag_free(&dl);
  prun_free(&x);
}

/* A region with no contraction has no plan: E1706. */
static void test_no_contraction(void) {
  prun x;
  CHECK(prun_text(&x,
                  J("{'name':'ew','signature':{'dims':['M'],'inputs':[{'tensor':'X'}],'outputs':[{'tensor':'Y'}]},"
                    "'tensors':{'X':{'dtype':'T','shape':['M']},'Y':{'dtype':'T','shape':['M']}},"
                    "'graph':[{'op':'Elementwise','name':'r','fn':'relu','inputs':['X'],'outputs':['Y']}]}"),
                  DT_FP16, 0));
  if (!x.r) return prun_free(&x);
  diag_list dl;
  diag_init(&dl);
  CHECK(plan_choose(&x.f.A, x.r, &x.an, plan_arch("sm80"), NULL, 0, NULL, &dl, "ew") == NULL);
  CHECK(diag_count(&dl, "E1706") == 1);
  diag_free(&dl);
  prun_free(&x);
}

/* plan_rows: a warp a row (4 a CTA) for a constant row of at most 8
 * vectors a lane, a CTA of 8 warps otherwise (a symbolic or longer row). */
static void test_rows(void) {
  prun x;
  CHECK(prun_text(&x,
                  J("{'name':'ew','signature':{'dims':['M'],'inputs':[{'tensor':'X'}],'outputs':[{'tensor':'Y'}]},"
                    "'tensors':{'X':{'dtype':'T','shape':['M']},'Y':{'dtype':'T','shape':['M']}},"
                    "'graph':[{'op':'Elementwise','name':'r','fn':'relu','inputs':['X'],'outputs':['Y']}]}"),
                  DT_FP16, 0));
  if (!x.r) return prun_free(&x);
  const arch_info *archs[2] = {plan_arch("sm80"), plan_arch("sm120")};
  static const struct {
    int64_t n; /* 0: symbolic */
    int warps, row_warps, rows_per_cta, ctas;
  } cases[] = {{0, 8, 8, 1, 3}, {2048, 4, 1, 4, 6}, {2049, 8, 8, 1, 3}, {64, 4, 1, 4, 6}};
  for (int i = 0; i < 4; i++) {
    diag_list dl;
    diag_init(&dl);
    const sx *n = cases[i].n ? sx_int(&x.f.A, cases[i].n) : sx_param(&x.f.A, "N");
    plan_result *res = plan_rows(&x.f.A, x.r, n, 8, archs, 2, &dl, "ew");
    CHECK(res && dl.n == 0);
    if (res) {
      const sched_plan *p = &res->chosen;
      CHECK(p->warps_m == cases[i].warps && p->row_warps == cases[i].row_warps && p->tile[0] == cases[i].rows_per_cta);
      CHECK(p->threads == 32 * cases[i].warps && p->ctas_per_sm == cases[i].ctas);
      CHECK(p->smem_bytes == (cases[i].row_warps > 1 ? 4 * cases[i].row_warps : 0));
      CHECK(p->algo == ALGO_ROW_REDUCE);
    }
    diag_free(&dl);
  }
  prun_free(&x);
}

/* plan_sm90a: the default (no bucket) takes 128x128x64 with 5 stages; a
 * shape bucket adds the STOP rules `padding` (N <= 64: the 128-wide tiles;
 * M <= 64: every tile) and `grid` (fewer CTAs than SMs on every shape),
 * and a bucket they leave nothing is NULL with no diagnostic. */
static void test_sm90a_buckets(void) {
  prun x;
  CHECK(prun_file(&x, "gemm_bias_relu.json", DT_FP16, 0));
  if (!x.r) return prun_free(&x);
  const arch_info *ai = plan_arch("sm90a");
  diag_list dl;
  diag_init(&dl);
  plan_result *pr = plan_sm90a(&x.f.A, x.r, &x.an, ai, NULL, NULL, &dl, "t");
  CHECK(pr && dl.n == 0 && pr->chosen.tile[0] == 128 && pr->chosen.tile[1] == 128 && pr->chosen.tile[2] == 64 &&
        pr->chosen.stages == 5);
  /* n1_64: M grown as N shrank */
  static const int64_t n64[][3] = {{262144, 64, 4096}, {16384, 64, 1024}, {8192, 64, 4096}};
  plan_bucket b = {"n1_64", INT64_MAX, 64, 3, n64};
  pr = plan_sm90a(&x.f.A, x.r, &x.an, ai, &b, NULL, &dl, "t");
  CHECK(pr && dl.n == 0);
  if (pr) {
    CHECK(pr->chosen.tile[0] == 128 && pr->chosen.tile[1] == 64 && pr->chosen.stages == 6);
    CHECK(pr->chosen.algo == ALGO_TMA_WGMMA);
    for (int i = 0; i < pr->ncand; i++)
      CHECK(pr->cand[i].p.tile[1] == 128 ? pr->cand[i].stop == STOP_PADDING
                                         : pr->cand[i].kept);
  }
  /* N = 65: the 128-wide tile is not stopped */
  b.n_max = 65;
  pr = plan_sm90a(&x.f.A, x.r, &x.an, ai, &b, NULL, &dl, "t");
  CHECK(pr && pr->chosen.tile[1] == 128);
  /* the decode bucket: every tile is 7/8 padding rows */
  static const int64_t m16[][3] = {{16, 4096, 4096}, {16, 1024, 1024}, {16, 4096, 4096}};
  plan_bucket d = {"m1_16", 16, INT64_MAX, 3, m16};
  const char *why = NULL;
  CHECK(plan_sm90a(&x.f.A, x.r, &x.an, ai, &d, &why, &dl, "t") == NULL && dl.n == 0);
  CHECK(why && strstr(why, "padding (bucket m1_16 has M <= 16: over half of the 128-row tile is past the output)"));
  /* 17..128: at most 64 CTAs at 128 x 4096 x 4096, under sm90a's 132 SMs */
  static const int64_t m128[][3] = {{128, 4096, 4096}, {128, 1024, 1024}, {128, 4096, 4096}};
  plan_bucket g = {"m17_128", 128, INT64_MAX, 3, m128};
  why = NULL;
  CHECK(plan_sm90a(&x.f.A, x.r, &x.an, ai, &g, &why, &dl, "t") == NULL && dl.n == 0);
  CHECK(why && strstr(why, "128x64x64, 6 stages: grid (at most 64 CTAs on bucket m17_128's shapes, fewer than sm90a's "
                           "132 SMs at one CTA an SM)"));
  /* the gathering producer's plan: the same rules */
  pr = plan_sm90a_gather(&x.f.A, x.r, &x.an, ai, &b, NULL, &dl, "t");
  CHECK(pr && pr->chosen.tile[1] == 128);
  CHECK(plan_sm90a_gather(&x.f.A, x.r, &x.an, ai, &d, NULL, &dl, "t") == NULL && dl.n == 0);
  diag_free(&dl);
  prun_free(&x);
}

int main(void) {
  arena_init(&A);
  test_sm90a_buckets();
  test_rows();
  test_arch_table();
  test_search_gemm_every_arch();
  test_dump_shape();
  test_determinism();
  test_caller_shapes();
  test_calibration();
  test_multi_arch();
  test_pinned_used_as_given();
  test_pinned_errors();
  test_pinned_for();
  test_cost_model();
  test_gemm_nt();
  test_fp32_vec();
  test_attention();
  test_conv();
  test_no_contraction();
  arena_free(&A);
  return check_status("test_plan");
}
