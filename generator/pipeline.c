/* Pipeline driver (see pipeline.h).  The stages, in spec order:
 *   frontend  (frontend.c)   spec §2     graph -> Frontend IR
 *   layout    (layout.c)     seed 004    -> layouts decided, conversions inserted
 *   tiny      (tiny.c)       spec §3     -> UOp DAG
 *   indexbook (indexbook.c)  spec §4     -> axes, domains, AxisMaps
 *   poly_view (polyview.c)   spec §5     -> isl statements, contraction patterns
 *   region    (region.c)     spec §6     -> Region SSA, one region per kernel
 *   analysis  (polycore.c)   spec §7     -> dependences, axes, halo, buffers
 *   plan      (plan.c)       spec §8,11  -> Schedule Plan per kernel
 *   gpu       (gpuir.c, skel/) spec §9   -> the skeleton with tokens
 *   cu        (emit.c, skel/, emit_host.c) 001 §7 -> CUDA and C sources
 * Each stage verifies its output.  Nothing is written unless the whole run
 * succeeds, and unchanged files are not rewritten. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime: --time-report */
#include "pipeline.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "algo.h"
#include "arch.h"
#include "dsl.h"
#include "emit.h"
#include "frontend.h"
#include "gpuir.h"
#include "indexbook.h"
#include "jsonutil.h"
#include "layout.h"
#include "manifest.h"
#include "outfiles.h"
#include "plan.h"
#include "polycore.h"
#include "polyview.h"
#include "region.h"
#include "skel/skel.h"
#include "tiny.h"
#include "workspace.h"

/* the stages' names; after them, the name of every stage at once */
static const char *const stage_names[] = {
#define X(e, name) name,
    DLC_STAGES(X)
#undef X
        "all"};

bool pipeline_parse_stages(const char *list, unsigned *mask) {
  *mask = 0;
  const char *p = list;
  while (*p) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    bool found = false;
    for (int i = 0; i <= STAGE__COUNT; i++)
      if (strlen(stage_names[i]) == n && strncmp(p, stage_names[i], n) == 0) {
        *mask |= i == STAGE__COUNT ? (1u << STAGE__COUNT) - 1 : 1u << i;
        found = true;
      }
    if (!found) return false;
    p += n;
    if (*p == ',') p++;
  }
  return *mask != 0;
}

/* One shape bucket of a contraction instance (spec §12 ShapeSets): bounds
 * on signature dims, the plan chosen on its representative shapes, and its
 * kernel.  Dispatch tries an instance's buckets in order before its default
 * plan (run.plan), which serves every shape. */
typedef struct bucket {
  const char *name;      /* the shape set's name, or "m<lo>_<hi>" for a derived bucket */
  int nbounds;
  const char **dim;      /* signature dims; a product bound's text (ext's sx_str) */
  int64_t *lo, *hi;
  const sx **ext;        /* per bound: NULL (a signature dim), or the product of
                          * dims it bounds (a GEMM group's extent, conv's N P Q) */
  plan_result *plan;
  gpu_kernel *kernel;
  plan_result *plan90;   /* the sm90a row's plan for the bucket, or NULL: its sm80 kernel serves sm90a */
} bucket;

/* The results of one instance, stage by stage. */
typedef struct run {
  arena A;
  fe_graph *fe;          /* the graph the later stages compile */
  fe_graph *fe_given;    /* the graph as given, when fe is a layout rewrite with conversions */
  layout_result *lay;
  tiny_dag *tiny;
  indexbook *ib;
  poly_view *pv;
  region_set *rs;
  pc_report *pc;
  plan_result *plan;     /* of the kernel region */
  gpu_kernel *kernel;    /* NULL when the graph is not compiled to a kernel */
  plan_result *plan90;   /* the sm90a row's plan (arch_rows), or NULL */
  dlc_algo algo90;       /* its skeleton (an `only` one: skel_ops) */
  int nbuckets;          /* shape buckets with a plan of their own (contractions) */
  bucket *buckets;
  const plan_bucket *bucket90; /* an arch row's run for one shape bucket (arch_rows_plan), or NULL */
  /* the back half's state, from its plan pass (run_plan) on: its options,
   * the archs (sm80 first), the skeleton that took the run and the sm90a
   * row's arch, or the chain's regions (each compiled in a run of its own) */
  const struct codegen_opts *cg;
  const arch_info *archs[16];
  int na;
  const skel_ops *row;
  const arch_info *arch90;
  int nchain;
  struct chain_step *chain;
  cJSON *dumps[STAGE__COUNT];
  double ms[STAGE__COUNT];     /* each stage's wall time (--time-report), summed over its runs; */
  bool timed[STAGE__COUNT];    /* which stages ran */
} run;

static void run_free(run *r) {
  layout_result_free(r->lay);
  for (int i = 0; i < STAGE__COUNT; i++) cJSON_Delete(r->dumps[i]);
  arena_free(&r->A);
}

/* What the back half needs from the manifest. */
typedef struct codegen_opts {
  bool enabled;
  const char *kernel_name;     /* e.g. "dlc_gemm_bias_relu_fp16" */
  int narchs;
  const char *const *archs;
  int nplans;
  cJSON *const *plans;         /* pinned plans, or none */
  const char *at;
  bool math_ieee;              /* the op's "math": "ieee" */
  bool buckets;                /* plan shape buckets (manifest mode): the shape sets, or derived ones */
  int nsets;
  const mf_shape_set *sets;
  const plan_calibration *cal; /* --calibrate, or NULL */
  bool no_fusion;              /* the op's "fusion": "off" */
} codegen_opts;

/* The pinned plan a kernel for every arch is built on: the one for the
 * planning arch, else the first without an "arch".  The others are reported
 * as unused, and so is every pinned plan of a skeleton whose plan is fixed
 * (`fixed_why`). */
static const cJSON *pinned_plan(const codegen_opts *cg, const arch_info *planning, const char *fixed_why,
                                diag_list *dl) {
  const cJSON *use = fixed_why ? NULL : plan_pinned_for(cg->plans, cg->nplans, planning->name);
  for (int i = 0; i < cg->nplans; i++) {
    if (cg->plans[i] == use) continue;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(cg->plans[i], "arch");
    const char *arch = cJSON_IsString(a) ? a->valuestring : "any";
    if (fixed_why)
      diag_report(dl, D_PLAN_UNUSED, cg->at, "Remove the pinned plans of this op.", "pinned plan %d (arch %s) is not used: %s",
                  i, arch, fixed_why);
    else if (use)
      diag_report(dl, D_PLAN_UNUSED, cg->at, NULL,
                  "pinned plan %d (arch %s) is not used: the kernel is built once for all archs, on the plan pinned "
                  "for %s",
                  i, arch, planning->name);
    else
      diag_report(dl, D_PLAN_UNUSED, cg->at, NULL,
                  "pinned plan %d (arch %s) is not used: the kernel is built once for all archs, and with no plan "
                  "pinned for %s (or for any arch) its plan is searched",
                  i, arch, planning->name);
  }
  return use;
}

/* ---- the front half: a table of passes ----------------------------------------------- */

/* What a run starts from: the graph object and its instance, and the back
 * half's options (NULL, or not enabled: the front half alone). */
typedef struct run_in {
  const cJSON *graph;
  const char *where;
  const fe_instance *inst;
  const layout_opts *lo;
  const codegen_opts *cg;
} run_in;

static bool run_frontend(run *r, const run_in *in, diag_list *dl) {
  return (r->fe = fe_read_json(&r->A, in->graph, in->where, in->inst, dl)) != NULL;
}
/* The layout pass.  The later stages compile its rewrite: collapsed view
 * chains, and each layout conversion as a region of its own (a kernel of
 * the op's chain, writing the converted operand into the workspace).  The
 * graph as given is kept in fe_given: when the rewrite with a conversion
 * does not compile, run_stages compiles that instead (W2107). */
static bool run_layout(run *r, const run_in *in, diag_list *dl) {
  if (!(r->lay = layout_run(&r->A, r->fe, in->graph, in->inst, in->lo, dl))) return false;
  const layout_result *l = r->lay;
  if (!l->rewrite) return true;
  fe_graph *g = fe_read_json(&r->A, l->rewrite, in->where, in->inst, dl);
  if (!g) return false;
  if (l->nconvert) r->fe_given = r->fe;
  r->fe = g;
  return true;
}
static bool run_tiny(run *r, const run_in *in, diag_list *dl) { return (r->tiny = tiny_lower(&r->A, r->fe, dl)) != NULL; }
static bool run_indexbook(run *r, const run_in *in, diag_list *dl) { return (r->ib = ib_build(&r->A, r->tiny, dl)) != NULL; }
static bool run_poly_view(run *r, const run_in *in, diag_list *dl) { return (r->pv = pv_build(&r->A, r->ib, dl)) != NULL; }
static bool run_region(run *r, const run_in *in, diag_list *dl) { return (r->rs = region_build(&r->A, r->pv, dl)) != NULL; }
static bool run_analysis(run *r, const run_in *in, diag_list *dl) { return (r->pc = pc_analyze(&r->A, r->rs, dl)) != NULL; }

static bool verify_frontend(const run *r, diag_list *dl) { return fe_verify(r->fe, dl); }
static bool verify_layout(const run *r, diag_list *dl) { return layout_verify(r->lay, dl); }
static bool verify_tiny(const run *r, diag_list *dl) { return tiny_verify(r->tiny, dl); }
static bool verify_indexbook(const run *r, diag_list *dl) { return indexbook_verify(r->ib, dl); }
static bool verify_poly_view(const run *r, diag_list *dl) { return pv_verify(r->pv, dl); }
static bool verify_region(const run *r, diag_list *dl) { return region_verify(r->rs, dl); }
static bool verify_analysis(const run *r, diag_list *dl) { return pc_verify(r->pc, dl); }

static cJSON *dump_frontend(const run *r) { return fe_dump(r->fe); }
static cJSON *dump_layout(const run *r) { return layout_dump(r->lay); }
static cJSON *dump_tiny(const run *r) { return tiny_dump(r->tiny); }
static cJSON *dump_indexbook(const run *r) { return ib_dump(r->ib); }
static cJSON *dump_poly_view(const run *r) { return pv_dump(r->pv); }
static cJSON *dump_region(const run *r) { return region_dump(r->rs); }
static cJSON *dump_analysis(const run *r) { return pc_dump(r->pc); }


/* ---- the back half: each skeleton's plan ----------------------------------------------- */

/* A skeleton's part of the pipeline is its table (skel/skel.h): the oldest
 * arch its kernels need (they run on every later one; with `only`, on that
 * arch alone), whether a run's regions fit it, its plan's check and its GPU
 * IR builder.  The pipeline tries the skeletons in algo.def order: the
 * first without `only` that serves every arch of the run and whose regions
 * fit takes the run.  An `only` skeleton whose arch is among the run's also
 * compiles the run for that arch (arch_rows): the entry point prefers its
 * kernel there, and falls back on the first one's for a call its kernel
 * cannot take (a tensor map that does not encode).  Its launch constants
 * are its algo's row of algo.def, which the emitter reads.  What is the
 * pipeline's own is how each skeleton's plan is found (PLAN below): the
 * pinned plans, the shape buckets, the calibration. */
typedef plan_result *(*plan_fn)(run *r, const arch_info *const *archs, int na, const codegen_opts *cg, diag_list *dl);

/* attention: its head dims compile-time (a manifest variant binds them), the pinned plan */
static plan_result *attention_plan(run *r, const arch_info *const *archs, int na, const codegen_opts *cg,
                                   diag_list *dl) {
  const region *r1 = &r->rs->r[0], *r2 = &r->rs->r[1];
  const pc_contraction *c1 = &r->pc->a[0].con, *c2 = &r->pc->a[1].con;
  int64_t d = 0, dv = 0;
  if (c1->present && c2->present && c1->nk == 1 && c2->nn == 1)
    sx_is_int(r1->it[c1->k_axes[0]].size, &d), sx_is_int(r2->it[c2->n_axes[0]].size, &dv);
  if (d <= 0 || dv <= 0 || d > 256 || dv > 256) {
    diag_report(dl, D_PLAN_UNSUPPORTED, cg->at, "Bind the head dim with a manifest variant (e.g. \"D\": [64, 128]).",
                "attention needs compile-time head dims (at most 256) for the streaming skeleton");
    return NULL;
  }
  const cJSON *pinned = pinned_plan(cg, archs[0], NULL, dl);
  return plan_attention(&r->A, r1, &r->pc->a[0], (int)d, (int)dv, archs, na, pinned, dl, cg->at);
}

/* The signature dim that a GEMM group's extent is, when it is exactly one
 * (GEMM's M, N, K); NULL for a product (conv's N*P*Q) or a constant. */
static const char *group_param(const region *r, const int *ax, int n) {
  if (n != 1) return NULL;
  const sx *x = r->it[ax[0]].size;
  if (x->nterms != 1 || x->c0 != 0 || x->terms[0].coef != 1 || x->terms[0].atom->kind != SXA_PARAM) return NULL;
  return x->terms[0].atom->name;
}

/* A GEMM group's extent when it is a product that is not one signature
 * dim (conv's N P Q): NULL for one dim (group_param) or a constant. */
static const sx *group_product(arena *A, const region *r, const int *ax, int n) {
  if (group_param(r, ax, n)) return NULL;
  const sx *x = sx_int(A, 1);
  for (int i = 0; i < n; i++) x = sx_mul(A, x, r->it[ax[i]].size);
  int64_t v;
  return sx_is_int(x, &v) ? NULL : x;
}

/* Two plans that compile to the same kernel. */
static bool same_plan(const sched_plan *a, const sched_plan *b) {
  return a->tile[0] == b->tile[0] && a->tile[1] == b->tile[1] && a->tile[2] == b->tile[2] && a->stages == b->stages &&
         a->warps_m == b->warps_m && a->warps_n == b->warps_n && a->vec == b->vec &&
         a->raster_group == b->raster_group && (a->split_k > 1 ? a->split_k : 1) == (b->split_k > 1 ? b->split_k : 1);
}

/* The derived buckets (no shape sets): ranges of the GEMM's M, then of its
 * N, each where that group is one signature dim (a product, such as conv's
 * N P Q, gets the small-output bucket below instead of M ranges), planned
 * in turn; adjacent ranges with the same plan merge, and a range whose
 * plan is the default's is left to the default (docs/plan.md, Shape
 * buckets).  The M buckets come first, so a call in both (M <= 128 and N
 * <= 64) takes its M bucket. */
static const int64_t DERIVED_M[][2] = {{1, 16}, {17, 128}};
static const int64_t DERIVED_N[][2] = {{1, 64}};
#define NDERIVED_M ((int)(sizeof DERIVED_M / sizeof *DERIVED_M))
#define NDERIVED_N ((int)(sizeof DERIVED_N / sizeof *DERIVED_N))
/* The small-output bucket of an M group that is a product of dims (conv's
 * N P Q; the bound applies to the product, which the dispatcher computes
 * from the call's dims): M at most SMALL_M and N at most SMALL_N, where the
 * default 128x128 tile has at most 16 x 4 = 64 CTAs, fewer than the SMs of
 * any arch the manifests name.  Planned on the default shapes with M and N
 * clamped into it (docs/plan.md, Shape buckets). */
#define SMALL_M 2048
#define SMALL_N 512

/* The derived skinny bucket (no shape sets), where split-K may pay: M and
 * N at most SKINNY_MN, K at least SKINNY_K, when M, N and K are each one
 * signature dim and K one axis (docs/plan.md, Split-K).  It comes before
 * the M buckets (dispatch takes the first match). */
#define SKINNY_MN 512
#define SKINNY_K 4096

/* Plans one bucket: the default representative shapes with each of M, N
 * and K that is one bounded signature dim clamped into its bounds, and M
 * into m_range when it is not NULL (a bound on M's product of dims).  NULL
 * (with the search's diagnostics) when no candidate fits. */
static plan_result *bucket_plan(run *r, const arch_info *const *archs, int na, const codegen_opts *cg, int nb,
                                const char *const *dim, const int64_t *lo, const int64_t *hi, bool split,
                                bool keep_mn, const int64_t *m_range, diag_list *dl) {
  const region *rg = &r->rs->r[0];
  const pc_contraction *c = &r->pc->a[0].con;
  const char *gp[3] = {group_param(rg, c->m_axes, c->nm), group_param(rg, c->n_axes, c->nn),
                       group_param(rg, c->k_axes, c->nk)};
  const int64_t(*def)[3];
  int ns = plan_default_shapes(&def);
  int64_t(*shapes)[3] = (int64_t(*)[3])arena_alloc(&r->A, sizeof(int64_t[3]) * (size_t)ns);
  for (int i = 0; i < ns; i++)
    for (int g = 0; g < 3; g++) {
      shapes[i][g] = def[i][g];
      for (int b = 0; b < nb && gp[g]; b++)
        if (strcmp(dim[b], gp[g]) == 0) shapes[i][g] = shapes[i][g] < lo[b] ? lo[b] : shapes[i][g] > hi[b] ? hi[b] : shapes[i][g];
      /* m_range: a range of the M group's extent, a product of dims */
      if (g == 0 && m_range)
        shapes[i][0] = shapes[i][0] < m_range[0] ? m_range[0] : shapes[i][0] > m_range[1] ? m_range[1] : shapes[i][0];
    }
  /* keep_mn (a range of N alone): M grows by the factor N shrank, so that
   * the shapes keep the default ones' output size and tiles */
  for (int i = 0; keep_mn && i < ns; i++)
    if (shapes[i][1] < def[i][1]) shapes[i][0] = shapes[i][0] * (def[i][1] / shapes[i][1]);
  return plan_choose_bucket(&r->A, rg, &r->pc->a[0], archs, na, ns, (const int64_t(*)[3])shapes, cg->cal, split, dl,
                            cg->at);
}

/* The best candidate of a split search that does not split (a split
 * bucket's fallback when the call passes no workspace), as a result of
 * its own; NULL when none was kept. */
static plan_result *unsplit_plan(run *r, const plan_result *pr) {
  int best = -1;
  for (int i = 0; i < pr->ncand; i++)
    if (pr->cand[i].kept && pr->cand[i].p.split_k <= 1 && (best < 0 || pr->cand[i].score < pr->cand[best].score))
      best = i;
  if (best < 0) return NULL;
  plan_result *u = ARENA_NEW(&r->A, plan_result);
  *u = *pr;
  u->chosen = pr->cand[best].p;
  return u;
}

static bool add_bucket(run *r, const char *name, int nb, const char *const *dim, const int64_t *lo, const int64_t *hi,
                       plan_result *pr) {
  if (same_plan(&pr->chosen, &r->plan->chosen)) return false; /* the default plan serves it */
  bucket *nbk = arena_alloc(&r->A, sizeof(bucket) * (size_t)(r->nbuckets + 1));
  if (r->nbuckets) memcpy(nbk, r->buckets, sizeof(bucket) * (size_t)r->nbuckets);
  bucket *b = &nbk[r->nbuckets];
  memset(b, 0, sizeof *b);
  b->name = name, b->nbounds = nb, b->plan = pr;
  b->dim = ARENA_ARRAY(&r->A, const char *, nb + 1);
  b->lo = ARENA_ARRAY(&r->A, int64_t, nb + 1);
  b->hi = ARENA_ARRAY(&r->A, int64_t, nb + 1);
  b->ext = ARENA_ARRAY(&r->A, const sx *, nb + 1);
  for (int i = 0; i < nb; i++) b->dim[i] = dim[i], b->lo[i] = lo[i], b->hi[i] = hi[i], b->ext[i] = NULL;
  r->buckets = nbk;
  r->nbuckets++;
  return true;
}

/* A bucket planned with split-K allowed: when its plan splits, the best
 * plan that does not follows it with the same bounds (a call without a
 * workspace falls through to it). */
static void add_split_bucket(run *r, const char *name, int nb, const char *const *dim, const int64_t *lo,
                             const int64_t *hi, plan_result *pr) {
  plan_result *u = pr->chosen.split_k > 1 ? unsplit_plan(r, pr) : NULL;
  if (u) {
    /* the plan's side cannot see an operand that walks (its slices could
     * not start by pointer steps): the GPU IR decides; without split then */
    diag_list scratch;
    diag_init(&scratch);
    bool builds = gpuir_build(&r->A, &r->rs->r[0], &r->pc->a[0], &pr->chosen, "split_probe", &scratch) != NULL;
    diag_free(&scratch);
    if (!builds) {
      add_bucket(r, name, nb, dim, lo, hi, u);
      return;
    }
  }
  add_bucket(r, name, nb, dim, lo, hi, pr);
  if (u) add_bucket(r, arena_printf(&r->A, "%s_nosplit", name), nb, dim, lo, hi, u);
}

/* The derived buckets of one group, whose extent is signature dim `dim`:
 * each range planned on the default shapes with `dim` clamped into it
 * (without split-K); adjacent ranges that choose the same plan merge, and
 * each bucket is named <prefix><lo>_<hi>. */
static bool derived_ranges(run *r, const arch_info *const *archs, int na, const codegen_opts *cg, const char *dim,
                           const char *prefix, const int64_t (*ranges)[2], int nr, bool keep_mn, diag_list *dl) {
  plan_result *prev = NULL;
  int64_t lo = 0, hi = 0;
  for (int i = 0; i <= nr; i++) {
    plan_result *pr = NULL;
    if (i < nr && !(pr = bucket_plan(r, archs, na, cg, 1, &dim, &ranges[i][0], &ranges[i][1], false, keep_mn, NULL, dl)))
      return false;
    if (prev && pr && same_plan(&prev->chosen, &pr->chosen)) { /* the range grows */
      hi = ranges[i][1];
      continue;
    }
    if (prev)
      add_bucket(r, arena_printf(&r->A, "%s%lld_%lld", prefix, (long long)lo, (long long)hi), 1, &dim, &lo, &hi, prev);
    if (pr) prev = pr, lo = ranges[i][0], hi = ranges[i][1];
  }
  return true;
}

/* The buckets of a searched contraction: the manifest's shape sets, each
 * planned on its shapes (split-K allowed); with none, the skinny bucket
 * (split-K allowed) when M, N and K are each one signature dim, then M
 * ranges when M is one, the small-output bucket when M is a product and N
 * one dim (conv's N P Q and K), then N ranges when N is one (conv's K). */
static bool contraction_buckets(run *r, const arch_info *const *archs, int na, const codegen_opts *cg,
                                diag_list *dl) {
  for (int i = 0; i < cg->nsets; i++) {
    const mf_shape_set *ss = &cg->sets[i];
    plan_result *pr = bucket_plan(r, archs, na, cg, ss->nbounds, ss->dim, ss->lo, ss->hi, true, false, NULL, dl);
    if (!pr) return false;
    add_split_bucket(r, ss->name, ss->nbounds, ss->dim, ss->lo, ss->hi, pr);
  }
  const region *rg = &r->rs->r[0];
  const pc_contraction *c = &r->pc->a[0].con;
  const char *m = group_param(rg, c->m_axes, c->nm), *n = group_param(rg, c->n_axes, c->nn),
             *k = group_param(rg, c->k_axes, c->nk);
  if (cg->nsets) return true;
  if (m && n && k && plan_split_legal(rg, &r->pc->a[0])) {
    const char *sd[3] = {m, n, k};
    const int64_t slo[3] = {1, 1, SKINNY_K}, shi[3] = {SKINNY_MN, SKINNY_MN, INT64_MAX};
    plan_result *pr = bucket_plan(r, archs, na, cg, 3, sd, slo, shi, true, false, NULL, dl);
    if (!pr) return false;
    if (pr->chosen.split_k > 1) add_split_bucket(r, "skinny", 3, sd, slo, shi, pr);
  }
  if (m && !derived_ranges(r, archs, na, cg, m, "m", DERIVED_M, NDERIVED_M, false, dl)) return false;
  const sx *mp = group_product(&r->A, rg, c->m_axes, c->nm);
  if (mp && n) { /* the small-output bucket: the product's bound first, then N's */
    const int64_t lo[2] = {1, 1}, hi[2] = {SMALL_M, SMALL_N}, mr[2] = {lo[0], hi[0]};
    plan_result *pr = bucket_plan(r, archs, na, cg, 1, &n, &lo[1], &hi[1], false, false, mr, dl);
    if (!pr) return false;
    const char *sd[2] = {sx_str(&r->A, mp), n};
    if (add_bucket(r, "small", 2, sd, lo, hi, pr)) r->buckets[r->nbuckets - 1].ext[0] = mp;
  }
  return !n || derived_ranges(r, archs, na, cg, n, "n", DERIVED_N, NDERIVED_N, true, dl);
}

/* a contraction: the searched (or pinned) plan, calibrated, then its shape buckets */
static plan_result *contraction_plan(run *r, const arch_info *const *archs, int na, const codegen_opts *cg,
                                     diag_list *dl) {
  const cJSON *pinned = pinned_plan(cg, archs[0], NULL, dl);
  r->plan = plan_choose_calibrated(&r->A, &r->rs->r[0], &r->pc->a[0], archs, na, pinned, 0, NULL, cg->cal, dl, cg->at);
  /* a pinned plan serves every shape */
  if (r->plan && cg->buckets && !pinned && !contraction_buckets(r, archs, na, cg, dl)) return NULL;
  return r->plan;
}

/* rows: the row length's warps (plan_rows); pinned plans go unused */
static plan_result *rows_plan(run *r, const arch_info *const *archs, int na, const codegen_opts *cg, diag_list *dl) {
  const region *rg = &r->rs->r[0];
  gpu_rows rw;
  const char *why = NULL;
  if (!gpuir_rows_view(&r->A, rg, &rw, &why)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, cg->at, rw.hint, "region %s does not fit the row skeleton: %s", rg->name, why);
    return NULL;
  }
  pinned_plan(cg, archs[0], "the row_reduce skeleton's warps are chosen by plan_rows from the row length", dl);
  return plan_rows(&r->A, rg, rg->it[rw.row_axis].size, rw.vec, archs, na, dl, cg->at);
}

/* the sm90a contraction: searched for sm90a alone, with the bucket of an arch row's run */
static plan_result *sm90a_plan(run *r, const arch_info *const *archs, int na, const codegen_opts *cg, diag_list *dl) {
  if (na != 1 || archs[0]->cc != arch_cc(ARCH_SM90A)) {
    diag_report(dl, D_INTERNAL, "plan", NULL, "the tma_wgmma skeleton is planned for sm90a alone");
    return NULL;
  }
  return plan_sm90a(&r->A, &r->rs->r[0], &r->pc->a[0], archs[0], r->bucket90, NULL, dl, cg->at);
}

/* the same, with the gathering producer */
static plan_result *sm90a_gather_plan(run *r, const arch_info *const *archs, int na, const codegen_opts *cg,
                                      diag_list *dl) {
  if (na != 1 || archs[0]->cc != arch_cc(ARCH_SM90A)) {
    diag_report(dl, D_INTERNAL, "plan", NULL, "the cp_async_wgmma skeleton is planned for sm90a alone");
    return NULL;
  }
  return plan_sm90a_gather(&r->A, &r->rs->r[0], &r->pc->a[0], archs[0], r->bucket90, NULL, dl, cg->at);
}

/* sm90a attention: the head dims and P's dtype */
static plan_result *sm90a_attention_plan(run *r, const arch_info *const *archs, int na, const codegen_opts *cg,
                                         diag_list *dl) {
  if (na != 1 || archs[0]->cc != arch_cc(ARCH_SM90A)) {
    diag_report(dl, D_INTERNAL, "plan", NULL, "the wgmma_softmax skeleton is planned for sm90a alone");
    return NULL;
  }
  const region *r1 = &r->rs->r[0], *r2 = &r->rs->r[1];
  const pc_contraction *c1 = &r->pc->a[0].con, *c2 = &r->pc->a[1].con;
  int64_t d = 0, dv = 0;
  sx_is_int(r1->it[c1->k_axes[0]].size, &d), sx_is_int(r2->it[c2->n_axes[0]].size, &dv);
  /* P's dtype: the softmax's last let before region 1's yield */
  bool p_fp32 = r1->nyields == 1 && r1->lets[r1->yields[0].let].e->dt == DT_FP32;
  return plan_sm90a_attention(&r->A, r1, &r->pc->a[0], (int)d, (int)dv, p_fp32, archs[0], dl, cg->at);
}

static const plan_fn PLAN[ALGO__COUNT] = {
    [ALGO_IMPLICIT_GEMM] = contraction_plan, [ALGO_STREAMING_SOFTMAX] = attention_plan,
    [ALGO_ROW_REDUCE] = rows_plan,           [ALGO_TMA_WGMMA] = sm90a_plan,
    [ALGO_CPASYNC_WGMMA] = sm90a_gather_plan, [ALGO_WGMMA_SOFTMAX] = sm90a_attention_plan,
};

/* The skeleton of algo a, when it takes runs of its own (a split-K reduce
 * does not: its contraction's builder makes it), or NULL. */
static const skel_ops *skeleton(int a) {
  const skel_ops *sk = skel_of((dlc_algo)a);
  DLC_ASSERT(sk && (sk->fits != NULL) == (PLAN[a] != NULL) && (!sk->fits || (sk->verify_plan && sk->build)));
  return sk->fits ? sk : NULL;
}

/* Whether skeleton s (not `only`) serves every arch of the run. */
static bool row_serves(const skel_ops *s, const arch_info *const *archs, int na) {
  bool serves = true;
  for (int a = 0; a < na; a++) serves &= archs[a]->cc >= arch_cc(s->arch);
  return serves;
}

/* The run's kernels on skeleton sk: each shape bucket's, then the default
 * plan's (verify_gpu checks them). */
static gpu_kernel *build_kernels(run *r, const skel_ops *sk, const codegen_opts *cg, diag_list *dl) {
  for (int i = 0; i < r->nbuckets; i++) {
    bucket *b = &r->buckets[i];
    b->kernel = sk->build(&r->A, r->rs, r->pc, &b->plan->chosen, arena_printf(&r->A, "%s_b%d", cg->kernel_name, i), dl);
    if (!b->kernel) return NULL;
    /* the op's math holds for its bucket kernels too */
    b->kernel->math_ieee = cg->math_ieee;
    if (b->kernel->reduce) b->kernel->reduce->math_ieee = cg->math_ieee;
  }
  return sk->build(&r->A, r->rs, r->pc, &r->plan->chosen, cg->kernel_name, dl);
}

/* The run's plan checks on skeleton sk: the default plan's, then each
 * shape bucket's. */
static bool verify_plans(const run *r, const skel_ops *sk, const arch_info *const *archs, int na, const codegen_opts *cg,
                         diag_list *dl) {
  bool ok = sk->verify_plan(r->rs, r->pc, &r->plan->chosen, archs, na, cg->at, dl);
  for (int b = 0; b < r->nbuckets; b++)
    ok &= sk->verify_plan(r->rs, r->pc, &r->buckets[b].plan->chosen, archs, na, cg->at, dl);
  return ok;
}

/* A bucket's plan dump: its plan, with `shape_bucket` {name, bounds}. */
static cJSON *bucket_plan_dump(const bucket *bk, const plan_result *pr) {
  cJSON *pd = plan_dump(pr), *b = cJSON_CreateObject();
  cJSON_AddStringToObject(b, "name", bk->name);
  cJSON *bd = cJSON_AddObjectToObject(b, "bounds");
  for (int d = 0; d < bk->nbounds; d++) {
    cJSON *lh = cJSON_AddArrayToObject(bd, bk->dim[d]);
    cJSON_AddItemToArray(lh, cJSON_CreateNumber((double)bk->lo[d]));
    cJSON_AddItemToArray(lh, cJSON_CreateNumber((double)bk->hi[d]));
  }
  cJSON_AddItemToObject(pd, "shape_bucket", b);
  return pd;
}

/* A bucket as the arch rows' plan functions see it: its largest GEMM M and
 * N (the bounds on the groups that are one signature dim) and the shapes
 * its plan was searched on. */
static plan_bucket bucket_view(const run *r, const bucket *b) {
  const region *rg = &r->rs->r[0];
  const pc_contraction *c = &r->pc->a[0].con;
  const char *m = group_param(rg, c->m_axes, c->nm), *n = group_param(rg, c->n_axes, c->nn);
  plan_bucket pb = {b->name, INT64_MAX, INT64_MAX, b->plan->nshapes, (const int64_t(*)[3])b->plan->shapes};
  for (int d = 0; d < b->nbounds; d++) {
    if (m && strcmp(b->dim[d], m) == 0 && b->hi[d] < pb.m_max) pb.m_max = b->hi[d];
    if (n && strcmp(b->dim[d], n) == 0 && b->hi[d] < pb.n_max) pb.n_max = b->hi[d];
  }
  return pb;
}

/* The `only` rows of archs among the run's that did not take it: each
 * compiles the run for its arch alone (its own plan, check and builder, in
 * a run of its own sharing the arena), and the entry point prefers that
 * kernel there (gpu_kernel.sm90a).  A run with pinned plans keeps them: the
 * pins are the main row's.  Skips a row the regions do not fit.  Each shape
 * bucket whose plan does not split gets a run of the row too, with the
 * bucket (run.bucket90) for the row's plan function, whose bucket STOP
 * rules may leave it none (docs/plan.md, Shape buckets).  First the plans
 * (arch_rows_plan, dumped with the run's), then, once the run's kernels
 * are built, the kernels (arch_rows_build). */
static bool arch_rows_plan(run *r, const skel_ops *taken, const arch_info *const *archs, int na,
                           const codegen_opts *cg, diag_list *dl) {
  for (int s = 0; s < ALGO__COUNT; s++) {
    const skel_ops *row = skeleton(s);
    if (!row) continue;
    if (!row->only || row == taken || cg->nplans > 0 || row->arch != ARCH_SM90A) continue;
    const arch_info *one[1] = {NULL};
    for (int a = 0; a < na; a++)
      if (archs[a]->cc == arch_cc(row->arch)) one[0] = archs[a];
    if (!one[0] || !row->fits(r->rs, r->pc)) continue;
    run sub = *r;
    sub.plan = NULL;
    sub.nbuckets = 0;
    sub.plan = PLAN[s](&sub, one, 1, cg, dl);
    r->A = sub.A; /* the arena's blocks, grown by the row's run */
    if (!sub.plan) return false;
    /* one sm90a row fits a run (the rows' fits exclude each other) */
    DLC_ASSERT(!r->plan90);
    r->plan90 = sub.plan;
    r->algo90 = row->algo;
    r->arch90 = one[0];
    for (int i = 0; i < r->nbuckets; i++) {
      bucket *bk = &r->buckets[i];
      if (bk->plan->chosen.split_k > 1) continue; /* the row does not split: the split rows keep the bucket */
      plan_bucket pb = bucket_view(r, bk);
      run bs = *r;
      bs.plan = NULL;
      bs.nbuckets = 0;
      bs.bucket90 = &pb;
      bs.plan = PLAN[s](&bs, one, 1, cg, dl);
      r->A = bs.A;
      bk->plan90 = bs.plan;
    }
  }
  return true;
}

/* The row's kernel from its plan. */
static gpu_kernel *arch_row_kernel(run *r, const plan_result *plan, const char *name, const codegen_opts *cg,
                                   diag_list *dl) {
  const skel_ops *row = skeleton(r->algo90);
  run sub = *r;
  sub.plan = (plan_result *)plan;
  sub.nbuckets = 0;
  codegen_opts c2 = *cg;
  c2.kernel_name = name;
  gpu_kernel *k = build_kernels(&sub, row, &c2, dl);
  if (k) k->math_ieee = cg->math_ieee;
  if (k && k->reduce) k->reduce->math_ieee = cg->math_ieee;
  r->A = sub.A;
  return k;
}

static bool arch_rows_build(run *r, const codegen_opts *cg, diag_list *dl) {
  if (!r->plan90) return true;
  const char *an = arch_name(skeleton(r->algo90)->arch);
  gpu_kernel *k = arch_row_kernel(r, r->plan90, arena_printf(&r->A, "%s_%s", cg->kernel_name, an), cg, dl);
  if (!k) return false;
  r->kernel->sm90a = k;
  /* each bucket's: kernel <name>_b<i>_<arch>, dumped as gpu_ir_<arch>_b<i> */
  for (int i = 0; i < r->nbuckets; i++) {
    bucket *bk = &r->buckets[i];
    if (!bk->plan90) continue;
    if (!(k = arch_row_kernel(r, bk->plan90, arena_printf(&r->A, "%s_b%d_%s", cg->kernel_name, i, an), cg, dl)))
      return false;
    bk->kernel->sm90a = k;
  }
  return true;
}

/* A chain's regions after fusion: where Poly Core's verdict holds
 * (pc_fusion: a row region reading a pointwise value the previous region
 * yielded deferred), the reader takes the producer's lets at the points it
 * reads (region_fuse_deferred) and the producer keeps only its other
 * outputs, or goes.  A fused region the row skeleton would not take keeps
 * the chain.  Returns the regions (NULL on an error), their analysis
 * (*pc) and, per region, the values fused into it ((*fu)[i]). */
typedef struct chain_fusion {
  int n;
  const char *value[GPUIR_MAX_FUSED], *from[GPUIR_MAX_FUSED], *why[GPUIR_MAX_FUSED];
} chain_fusion;

static region_set *chain_fuse(run *r, pc_report **pc, chain_fusion **fu, diag_list *dl) {
  const region_set *rs = r->rs;
  arena *A = &r->A;
  region *cur = ARENA_ARRAY(A, region, rs->n + 1);
  int *orig = ARENA_ARRAY(A, int, rs->n + 1);
  chain_fusion *f = ARENA_ARRAY(A, chain_fusion, rs->n + 1);
  int n = 0, nfused = 0;
  for (int i = 0; i < rs->n; i++) {
    const pc_analysis *a = &r->pc->a[i];
    bool fused = false;
    if (a->fuse_ok && n > 0 && orig[n - 1] == a->fuse_from) {
      const region *prod = &cur[n - 1];
      int out = -1;
      for (int o = 0; o < prod->nout; o++)
        if (prod->out[o].entry == rs->r[i].in[a->fuse_in].entry) out = o;
      region *left = NULL;
      region *g = out >= 0 ? region_fuse_deferred(A, prod, out, &rs->r[i], a->fuse_in, &left) : NULL;
      gpu_rows rw;
      const char *why = NULL;
      chain_fusion carried = f[n - 1];
      if (g && gpuir_rows_view(A, g, &rw, &why) && carried.n < GPUIR_MAX_FUSED) {
        if (left) cur[n - 1] = *left;
        else n--;
        /* what was fused into the producer is fused into the reader too */
        f[n] = carried;
        f[n].value[f[n].n] = rs->r[i].in[a->fuse_in].name;
        f[n].from[f[n].n] = prod->name;
        f[n].why[f[n].n++] = a->fuse_why;
        cur[n] = *g;
        orig[n++] = i;
        fused = true;
        nfused++;
      }
    }
    if (!fused) {
      f[n].n = 0;
      cur[n] = rs->r[i];
      orig[n++] = i;
    }
  }
  *fu = f;
  if (!nfused) {
    *pc = r->pc;
    return r->rs;
  }
  region_set *out = ARENA_NEW(A, region_set);
  *out = (region_set){rs->A, rs->pv, n, cur};
  *pc = pc_analyze(A, out, dl);
  if (!*pc || !pc_verify(*pc, dl)) return NULL;
  return out;
}

/* The regions of the chain step that starts at region i: attention's two
 * (QK^T/softmax yielding P deferred, and PV: one step, one kernel, P never
 * stored), else one. */
static int chain_step_regions(const region_set *rs, const pc_report *pc, int i) {
  if (i + 1 >= rs->n) return 1;
  region_set two = {rs->A, rs->pv, 2, &rs->r[i]};
  pc_report pc2 = {pc->A, &two, 2, &pc->a[i]};
  return skel_of(ALGO_STREAMING_SOFTMAX)->fits(&two, &pc2) ? 2 : 1;
}

/* The skeleton a chain step's regions fit (attention's, for two), or NULL. */
static const skel_ops *chain_step_skeleton(const region_set *one, const pc_report *pc) {
  for (int s = 0; s < ALGO__COUNT; s++)
    if (skeleton(s) && !skeleton(s)->only && (s == ALGO_STREAMING_SOFTMAX) == (one->n == 2) && skeleton(s)->fits(one, pc))
      return skeleton(s);
  return NULL;
}

/* A chain: several steps, each a region on the single-region skeleton it
 * fits or attention's two regions, compiled as one kernel each and
 * launched in order by one entry point.  A value between steps (an output
 * that is not a signature tensor) is materialized in the caller's
 * workspace.  Each step runs the row's plan, plan check and builder in a
 * run of its own (sharing the arena). */
typedef struct chain_step {
  run sub;
  region_set one;
  pc_report pc;
  const skel_ops *row;
  codegen_opts cg;       /* the run's, with the step's kernel name */
  chain_fusion fu;       /* the values fused into its region */
} chain_step;

/* The chain's plan pass: its regions after fusion, each with its plan
 * (r->plan: the first's). */
static bool chain_plan(run *r, const codegen_opts *cg, diag_list *dl) {
  pc_report *fpc = r->pc;
  chain_fusion *fu = ARENA_ARRAY(&r->A, chain_fusion, r->rs->n + 1);
  const region_set *rs = cg->no_fusion ? r->rs : chain_fuse(r, &fpc, &fu, dl);
  if (!rs) return false;
  chain_step *c = ARENA_ARRAY(&r->A, chain_step, rs->n);
  r->chain = c;
  int nsteps = 0;
  for (int i = 0; i < rs->n; i += chain_step_regions(rs, fpc, i)) nsteps++;
  for (int i = 0, step = 0; i < rs->n; i += c->one.n, c++, step++) {
    const int n = chain_step_regions(rs, fpc, i);
    c->one = (region_set){rs->A, rs->pv, n, &rs->r[i]};
    c->pc = (pc_report){fpc->A, &c->one, n, &fpc->a[i]};
    c->fu = fu[i];
    c->sub = *r;
    c->sub.rs = &c->one;
    c->sub.pc = &c->pc;
    c->sub.plan = NULL;
    c->sub.kernel = NULL;
    c->sub.nchain = 0;
    c->sub.chain = NULL;
    c->row = chain_step_skeleton(c->sub.rs, c->sub.pc);
    c->sub.row = c->row;
    c->cg = *cg;
    /* a chain fused into one kernel is a plain kernel */
    c->cg.kernel_name = nsteps == 1 ? cg->kernel_name : arena_printf(&c->sub.A, "%s_k%d", cg->kernel_name, step);
    c->sub.cg = &c->cg;
    c->sub.plan = c->row ? PLAN[c->row->algo](&c->sub, r->archs, r->na, &c->cg, dl) : NULL;
    if (step == 0) r->plan = c->sub.plan;
    r->A = c->sub.A; /* the arena's blocks, grown by the region's run */
    r->nchain = step + 1;
    if (!c->sub.plan) return false;
  }
  return true;
}

/* The chain's GPU pass: each step's kernel, with the values fused into it,
 * linked in launch order from r->kernel. */
static bool chain_build(run *r, diag_list *dl) {
  gpu_kernel *last = NULL;
  for (int i = 0; i < r->nchain; i++) {
    chain_step *c = &r->chain[i];
    c->sub.A = r->A;
    gpu_kernel *k = build_kernels(&c->sub, c->row, &c->cg, dl);
    if (k) k->math_ieee = c->cg.math_ieee;
    for (int f = 0; k && f < c->fu.n; f++)
      if (!gpuir_add_fused(k, &c->sub.A, c->fu.value[f], c->fu.from[f], c->fu.why[f])) {
        diag_report(dl, D_INTERNAL, "GPU IR", NULL, "kernel %s cannot hold fused value %s", k->name, c->fu.value[f]);
        k = NULL;
      }
    r->A = c->sub.A;
    if (!k) return false;
    c->sub.kernel = k;
    k->chain_index = i;
    k->chain_plan = c->sub.plan;
    if (last) last->next = k;
    else r->kernel = k;
    last = k;
  }
  return true;
}

/* Whether the regions form a chain the skeletons take: every step (a
 * region, or attention's two) fits one, and each value between regions is
 * written by one region and read only by later ones (Region SSA orders
 * regions by data flow).  *misfit: the first region that fits no skeleton. */
static bool chain_fits(const run *r, int *misfit) {
  const region_set *rs = r->rs;
  if (rs->n < 2) return false;
  int steps = 0;
  for (int i = 0; i < rs->n; steps++) {
    int n = chain_step_regions(rs, r->pc, i);
    region_set one = {rs->A, rs->pv, n, &rs->r[i]};
    pc_report pc = {r->pc->A, &one, n, &r->pc->a[i]};
    if (!chain_step_skeleton(&one, &pc)) {
      *misfit = i;
      return false;
    }
    i += n;
  }
  if (steps < 2) return false;
  for (int i = 0; i < rs->n; i++) {
    for (int j = 0; j < rs->r[i].nin; j++) {
      const region_memref *m = &rs->r[i].in[j];
      if (m->signature) continue;
      bool earlier = false;
      for (int p = 0; p < i; p++)
        for (int o = 0; o < rs->r[p].nout; o++) earlier |= rs->r[p].out[o].entry == m->entry;
      if (!earlier) return false;
    }
  }
  return true;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Adds the time since t0 to stage s's (--time-report; no dump holds times,
 * so that two runs dump the same bytes). */
static void stage_time(run *r, dlc_stage s, double t0) {
  r->ms[s] += now_ms() - t0;
  r->timed[s] = true;
}

/* ---- the back half as passes: plan, gpu, cu --------------------------------------------- */

/* The run's archs: cg's, each once (the manifest and --arch admit only
 * known archs, arch.def), sm80 first: plans rank on sm80 (the skeletons'
 * arch) and must fit every arch. */
static void run_archs(run *r, const codegen_opts *cg) {
  DLC_ASSERT(cg->narchs <= 16);
  r->na = 0;
  for (int i = 0; i < cg->narchs; i++) {
    DLC_ASSERT(plan_arch(cg->archs[i]) != NULL);
    r->archs[r->na++] = plan_arch(cg->archs[i]);
  }
  if (r->na == 0) r->archs[r->na++] = plan_arch_of(ARCH_SM80);
  for (int i = 1; i < r->na; i++)
    if (plan_arch_id(r->archs[i]) == ARCH_SM80) r->archs[i] = r->archs[0], r->archs[0] = plan_arch_of(ARCH_SM80);
}

/* The plan pass: the skeleton the regions fit, or a chain of them, and its
 * plans (the default, each shape bucket's, the sm90a row's). */
static bool run_plan(run *r, const run_in *in, diag_list *dl) {
  const codegen_opts *cg = in->cg;
  r->cg = cg;
  run_archs(r, cg);
  const arch_info *const *archs = r->archs;
  int na = r->na;
  const skel_ops *row = NULL;
  for (int i = 0; i < ALGO__COUNT && !row; i++)
    if (skeleton(i) && !skeleton(i)->only && row_serves(skeleton(i), archs, na) && skeleton(i)->fits(r->rs, r->pc))
      row = skeleton(i);
  int misfit = -1;
  if (!row && chain_fits(r, &misfit)) return chain_plan(r, cg, dl);
  if (!row) {
    int nk = 0;
    for (int i = 0; i < r->rs->n; i++) nk += r->rs->r[i].acc_let >= 0;
    diag_report(dl, D_PLAN_UNSUPPORTED, cg->at, NULL,
                "the graph forms %d regions with %d contractions; the skeletons compile one contraction region "
                "(GEMM, convolution), attention's two, or one region without contraction (row reductions, "
                "elementwise chains), or a chain of those%s%s%s",
                r->rs->n, nk, misfit >= 0 ? ", and region " : "", misfit >= 0 ? r->rs->r[misfit].name : "",
                misfit >= 0 ? " fits none of them" : "");
    return false;
  }
  r->row = row;
  r->plan = PLAN[row->algo](r, archs, na, cg, dl);
  return r->plan && arch_rows_plan(r, row, archs, na, cg, dl);
}

/* Each plan's check on its skeleton: a chain's steps', or the default
 * plan's and each bucket's, then the sm90a row's. */
static bool verify_plan(const run *r, diag_list *dl) {
  bool ok = true;
  for (int i = 0; i < r->nchain; i++) {
    const chain_step *c = &r->chain[i];
    ok &= verify_plans(&c->sub, c->row, r->archs, r->na, &c->cg, dl);
  }
  if (r->nchain) return ok;
  ok = verify_plans(r, r->row, r->archs, r->na, r->cg, dl);
  if (r->plan90) {
    const skel_ops *row = skeleton(r->algo90);
    const arch_info *one[1] = {r->arch90};
    ok &= row->verify_plan(r->rs, r->pc, &r->plan90->chosen, one, 1, r->cg->at, dl);
    for (int i = 0; i < r->nbuckets; i++)
      if (r->buckets[i].plan90)
        ok &= row->verify_plan(r->rs, r->pc, &r->buckets[i].plan90->chosen, one, 1, r->cg->at, dl);
  }
  return ok;
}

/* The plans: a chain's, one a step; or the default, then each bucket's
 * with its bounds, then the sm90a row's (its default's, its buckets'). */
static cJSON *dump_plan(const run *r) {
  cJSON *pa = cJSON_CreateArray();
  for (int i = 0; i < r->nchain; i++) cJSON_AddItemToArray(pa, plan_dump(r->chain[i].sub.plan));
  if (r->nchain) return pa;
  cJSON_AddItemToArray(pa, plan_dump(r->plan));
  for (int i = 0; i < r->nbuckets; i++) cJSON_AddItemToArray(pa, bucket_plan_dump(&r->buckets[i], r->buckets[i].plan));
  if (r->plan90) cJSON_AddItemToArray(pa, plan_dump(r->plan90));
  for (int i = 0; i < r->nbuckets; i++)
    if (r->plan90 && r->buckets[i].plan90)
      cJSON_AddItemToArray(pa, bucket_plan_dump(&r->buckets[i], r->buckets[i].plan90));
  return pa;
}

/* The GPU IR pass: the kernels of the plans. */
static bool run_gpu(run *r, const run_in *in, diag_list *dl) {
  if (r->nchain) return chain_build(r, dl);
  r->kernel = build_kernels(r, r->row, in->cg, dl);
  if (!r->kernel) return false;
  r->kernel->math_ieee = in->cg->math_ieee;
  return arch_rows_build(r, in->cg, dl);
}

/* Each kernel's GPU IR checks: each chain step's, as a run's; or each
 * bucket's (and its split-K reduce), the default's and the sm90a row's. */
static bool verify_gpu(const run *r, diag_list *dl) {
  bool ok = true;
  for (int i = 0; i < r->nchain; i++) ok &= verify_gpu(&r->chain[i].sub, dl);
  if (r->nchain) return ok;
  for (int i = 0; i < r->nbuckets; i++) {
    const gpu_kernel *k = r->buckets[i].kernel;
    ok &= gpuir_verify(k, dl) && (!k->reduce || gpuir_verify(k->reduce, dl));
  }
  ok &= gpuir_verify(r->kernel, dl);
  if (r->kernel->sm90a) ok &= gpuir_verify(r->kernel->sm90a, dl);
  for (int i = 0; i < r->nbuckets; i++)
    if (r->buckets[i].kernel->sm90a) ok &= gpuir_verify(r->buckets[i].kernel->sm90a, dl);
  return ok;
}

/* The kernels' GPU IR: a chain's, one a step (its one kernel when fusion
 * left one); or the default's, with the sm90a row's as gpu_ir_<arch> (and
 * its buckets' as gpu_ir_<arch>_b<i>). */
static cJSON *dump_gpu(const run *r) {
  if (r->nchain == 1) return gpuir_dump(r->kernel);
  if (r->nchain) {
    cJSON *a = cJSON_CreateArray();
    for (const gpu_kernel *k = r->kernel; k; k = k->next) cJSON_AddItemToArray(a, gpuir_dump(k));
    return a;
  }
  cJSON *d = gpuir_dump(r->kernel);
  const char *an = r->plan90 ? arch_name(skeleton(r->algo90)->arch) : NULL;
  for (int i = -1; an && i < r->nbuckets; i++) {
    const gpu_kernel *k = i < 0 ? r->kernel->sm90a : r->buckets[i].kernel->sm90a;
    if (!k) continue;
    cJSON *kd = gpuir_dump(k);
    char key[64];
    if (i < 0) snprintf(key, sizeof key, "gpu_ir_%s", an);
    else snprintf(key, sizeof key, "gpu_ir_%s_b%d", an, i);
    cJSON_AddItemToObject(d, key, cJSON_DetachItemFromObject(kd, "gpu_ir"));
    cJSON_Delete(kd);
  }
  return d;
}

/* The chain's workspace (workspace.h): the intervals over which its
 * values are live, from the kernels the gpu pass built; nothing to build,
 * the verifier checks them, the dump lists them (an op of one kernel has
 * none). */
static bool run_arena(run *r, const run_in *in, diag_list *dl) {
  (void)r, (void)in, (void)dl;
  return true;
}
static bool verify_arena(const run *r, diag_list *dl) { return !r->nchain || ws_verify(r->kernel, dl); }
static cJSON *dump_arena(const run *r) {
  if (r->nchain) return ws_dump(r->kernel);
  cJSON *d = cJSON_CreateObject();
  cJSON_AddNumberToObject(d, "kernels", 1);
  cJSON_AddArrayToObject(d, "values");
  return d;
}

/* The ConstPool a plan lays out (workspace.h): its params' offsets, the
 * param conversions it makes at plan_create; nothing to build or verify
 * beyond the arena's intervals, which the conversions are values of. */
static bool run_constpool(run *r, const run_in *in, diag_list *dl) {
  (void)r, (void)in, (void)dl;
  return true;
}
static bool verify_constpool(const run *r, diag_list *dl) {
  (void)r, (void)dl;
  return true;
}
static cJSON *dump_constpool(const run *r) { return ws_constpool_dump(r->fe, r->nchain ? r->kernel : NULL); }

/* ---- the pass table ---------------------------------------------------------------------- */

/* An op's stage, once each of its instances ran the stages before it:
 * the CUDA of the op's kernels. */
typedef struct op_run {
  emit_ctx *ec;
  const emit_op *eo;
  char *cu;
} op_run;

static bool run_cu(op_run *o, diag_list *dl) { return (o->cu = emit_op_cu(o->ec, o->eo)) != NULL; }
static bool verify_cu(const op_run *o, diag_list *dl) { return emit_verify_cu(o->ec, o->eo, dl); }

/* One stage: `run` builds its product into the run from the previous one,
 * `verify` checks that product's invariants, `dump` prints it (--dump).
 * An op's stage (cu) has run_op and verify_op instead, and its product is
 * the text it dumps. */
typedef struct pass {
  dlc_stage stage;
  bool (*run)(run *r, const run_in *in, diag_list *dl);
  bool (*verify)(const run *r, diag_list *dl);
  cJSON *(*dump)(const run *r);
  bool (*run_op)(op_run *o, diag_list *dl);
  bool (*verify_op)(const op_run *o, diag_list *dl);
} pass;

/* The pipeline (spec §3): each stage's pass, in order */
static const pass PASSES[] = {
    {STAGE_FRONTEND, run_frontend, verify_frontend, dump_frontend, NULL, NULL},
    {STAGE_LAYOUT, run_layout, verify_layout, dump_layout, NULL, NULL},
    {STAGE_TINY, run_tiny, verify_tiny, dump_tiny, NULL, NULL},
    {STAGE_INDEXBOOK, run_indexbook, verify_indexbook, dump_indexbook, NULL, NULL},
    {STAGE_POLY_VIEW, run_poly_view, verify_poly_view, dump_poly_view, NULL, NULL},
    {STAGE_REGION, run_region, verify_region, dump_region, NULL, NULL},
    {STAGE_ANALYSIS, run_analysis, verify_analysis, dump_analysis, NULL, NULL},
    {STAGE_PLAN, run_plan, verify_plan, dump_plan, NULL, NULL},
    {STAGE_GPU, run_gpu, verify_gpu, dump_gpu, NULL, NULL},
    {STAGE_ARENA, run_arena, verify_arena, dump_arena, NULL, NULL},
    {STAGE_CONSTPOOL, run_constpool, verify_constpool, dump_constpool, NULL, NULL},
    {STAGE_CU, NULL, NULL, NULL, run_cu, verify_cu},
};

/* Runs the passes from `first` on, each followed by its verifier and, when
 * asked for, its dump, up to stage `until`; the back half's when in->cg
 * enables it.  Returns false with diagnostics. */
static bool run_passes(run *r, const run_in *in, size_t first, unsigned dump, int until, diag_list *dl) {
  for (size_t i = first; i < sizeof PASSES / sizeof *PASSES; i++) {
    const pass *ps = &PASSES[i];
    if (!ps->run || (ps->stage >= STAGE_PLAN && (!in->cg || !in->cg->enabled))) break; /* an op's stage follows */
    double t0 = now_ms();
    bool ok = ps->run(r, in, dl) && ps->verify(r, dl);
    stage_time(r, ps->stage, t0);
    if (!ok) return false;
    if (dump & (1u << ps->stage)) r->dumps[ps->stage] = ps->dump(r);
    if (until <= (int)ps->stage) break;
  }
  return !diag_has_errors(dl);
}

/* Runs the op's stages (cu), each followed by its verifier, once its
 * instances ran theirs; adds their time to *ms.  On an error the text is
 * dropped (o->cu NULL). */
static bool run_op_passes(op_run *o, double *ms, diag_list *dl) {
  for (size_t i = 0; i < sizeof PASSES / sizeof *PASSES; i++) {
    const pass *ps = &PASSES[i];
    if (!ps->run_op) continue;
    double t0 = now_ms();
    bool ok = ps->run_op(o, dl) && ps->verify_op(o, dl);
    *ms += now_ms() - t0;
    if (!ok) {
      free(o->cu);
      o->cu = NULL;
      return false;
    }
  }
  return true;
}

/* The run's products after the layout pass, dropped. */
static void run_reset_after_layout(run *r) {
  r->tiny = NULL, r->ib = NULL, r->pv = NULL, r->rs = NULL, r->pc = NULL;
  r->plan = NULL, r->kernel = NULL, r->nbuckets = 0, r->buckets = NULL;
  r->plan90 = NULL, r->row = NULL, r->arch90 = NULL, r->nchain = 0, r->chain = NULL;
  for (int s = STAGE_LAYOUT + 1; s < STAGE__COUNT; s++) cJSON_Delete(r->dumps[s]), r->dumps[s] = NULL;
}

/* Runs the stages on a parsed graph object.  Returns false with diagnostics.
 * When the layout pass converts an input, the later stages compile its
 * rewrite; if that fails (a conversion region no skeleton row takes, a
 * chain of regions the skeletons cannot launch in order), they compile the
 * graph as given, and W2107 names each conversion and why it was not
 * compiled (the rewrite's first error). */
static bool run_stages(run *r, const cJSON *graph, const char *where, const fe_instance *inst,
                       const layout_opts *lo, unsigned dump, int until, const codegen_opts *cg, bool as_given,
                       diag_list *dl) {
  run_in in = {graph, where, inst, lo, NULL};
  size_t after = 0;
  while (after < sizeof PASSES / sizeof *PASSES && PASSES[after].stage <= STAGE_LAYOUT) after++;
  if (!run_passes(r, &in, 0, dump, until < STAGE_LAYOUT ? until : STAGE_LAYOUT, dl)) return false;
  if (until <= STAGE_LAYOUT) return !diag_has_errors(dl);
  in.cg = cg;
  if (!r->fe_given) return run_passes(r, &in, after, dump, until, dl);
  if (as_given) {
    /* the plan without a workspace of an op whose rewrite is a chain
     * (given_run): the graph as given, its conversions not compiled */
    r->fe = r->fe_given;
    r->fe_given = NULL;
    return run_passes(r, &in, after, dump, until, dl);
  }
  diag_list tried;
  diag_init(&tried);
  /* DLCGEN_TEST_FAIL_REWRITE (a test hook, docs/testing.md): the rewrite
   * fails as a skeleton's refusal would, so that the tests reach the
   * fallback below, which no known graph does since the regions are
   * chained in data-flow order */
  const char *hook = getenv("DLCGEN_TEST_FAIL_REWRITE");
  if (hook && *hook)
    diag_report(&tried, D_PLAN_UNSUPPORTED, where, NULL, "DLCGEN_TEST_FAIL_REWRITE is set: the rewrite is taken as not compiling");
  else if (run_passes(r, &in, after, dump, until, &tried)) {
    diag_append(dl, &tried);
    return true;
  }
  const char *why = "";
  for (int i = 0; i < tried.n && !*why; i++)
    if (diag_sev(tried.items[i].id) == DIAG_ERROR)
      why = arena_printf(&r->A, "%s %s: %s", diag_code(tried.items[i].id), diag_kind(tried.items[i].id), tried.items[i].why);
  diag_free(&tried);
  run_reset_after_layout(r);
  r->fe = r->fe_given;
  r->fe_given = NULL;
  const layout_result *l = r->lay;
  for (int i = 0; i < l->g->ntensors; i++) {
    const lay_tensor *t = &l->t[i];
    if (!t->convert) continue;
    const fe_tensor *ft = &l->g->tensors[i];
    const char *to = "";
    for (int a = 0; a < t->rank; a++) to = arena_printf(&r->A, "%s%s%d", to, a ? "," : "", t->final[a]);
    diag_report(dl, D_LAYOUT_NOT_COMPILED, ft->at, NULL,
                "the layout pass converts '%s'%s%s to axis order [%s] (%s), but the rewritten graph does not "
                "compile (%s): the kernel is built for the graph as given and loads '%s' in its stored layout",
                ft->name, ft->layout ? " " : "", ft->layout ? ft->layout : "", to, t->reason, *why ? why : "no error recorded", ft->name);
  }
  return run_passes(r, &in, after, dump, until, dl);
}

/* The plan without a workspace of an instance whose kernels are the layout
 * pass's rewrite run as a chain (conversion kernels writing into the
 * caller's workspace, then the op): the graph as given, compiled again into
 * `g` without its conversions (issue 38 item 2: whether dlc_<op>() needs a
 * workspace must not depend on the pass's choice).  dlc_<op>_ws() runs it
 * when the workspace is smaller than the chain's, dlc_<op>() always.  It
 * serves when it is one kernel that needs no workspace (no chain, no
 * split-K: its default plan, no shape buckets); else, or when it does not
 * compile, W2109 says that dlc_<op>() refuses calls.  Its diagnostics are
 * dropped: its front half is the instance's, already reported.  The test
 * hook DLCGEN_TEST_FAIL_GIVEN (docs/testing.md) takes it as not compiling. */
static bool given_run(run *g, const run *r, const cJSON *graph, const char *where, const fe_instance *fi,
                      const layout_opts *lo, unsigned dump, int until, codegen_opts cg, const char *op_name,
                      diag_list *dl) {
  diag_list local;
  diag_init(&local);
  arena_init(&g->A);
  cg.buckets = false;
  cg.nsets = 0;
  const char *hook = getenv("DLCGEN_TEST_FAIL_GIVEN");
  const char *why = "";
  if (hook && *hook) {
    why = "DLCGEN_TEST_FAIL_GIVEN is set: the graph as given is taken as not compiling";
  } else if (!run_stages(g, graph, where, fi, lo, dump, until, &cg, true, &local) || !g->kernel) {
    for (int i = 0; i < local.n && !*why; i++)
      if (diag_sev(local.items[i].id) == DIAG_ERROR)
        why = arena_printf(&g->A, "%s %s: %s", diag_code(local.items[i].id), diag_kind(local.items[i].id), local.items[i].why);
    if (!*why) why = "it yields no kernel";
  } else if (g->kernel->next || g->kernel->reduce) {
    why = g->kernel->next ? "it runs as several kernels too" : "its plan splits K into a workspace";
  }
  diag_free(&local);
  if (!*why) return true;
  int nk = 0;
  for (const gpu_kernel *k = r->kernel; k; k = k->next) nk++;
  diag_report(dl, D_WORKSPACE_REQUIRED, where, NULL,
              "the layout pass's rewrite runs as %d kernels with the converted operands in a workspace, and the graph "
              "as given, which would need none, does not compile to one kernel (%s): dlc_%s() refuses the calls that "
              "dlc_%s_ws() takes with dlc_%s_workspace_size() bytes",
              nk, why, op_name, op_name, op_name);
  return false;
}

/* --time-report: one line on stderr with the wall time of each stage that
 * ran for `what` (a graph, or a manifest instance), and the layout pass's
 * steps (seed 004's stages, each the time since the pass began). */
static void print_time_report(const char *what, const run *r) {
  fprintf(stderr, "dlcgen: time: %s:", what);
  const char *sep = "";
  for (int s = 0; s < STAGE__COUNT; s++) {
    if (!r->timed[s]) continue;
    fprintf(stderr, "%s %s %.2f ms", sep, stage_names[s], r->ms[s]);
    sep = ",";
    if (s == STAGE_LAYOUT && r->lay && r->lay->nev) {
      fputs(" (", stderr);
      for (int i = 0; i < r->lay->nev; i++)
        fprintf(stderr, "%s%s at %.2f", i ? ", " : "", r->lay->ev[i].stage, r->lay->ev[i].elapsed_ms);
      fputs(")", stderr);
    }
  }
  fputs("\n", stderr);
}

static void print_diags(const pipeline_opts *o, diag_list *dl) {
  if (o->diags) diag_append(o->diags, dl);
  else if (o->diag_json) diag_print_json(dl);
  else diag_print_text(dl, "dlcgen");
}

/* The --graph file: read, or in memory (o->text). */
static cJSON *read_graph(const pipeline_opts *o, arena *A, dsl_srcmap **map, diag_list *dl) {
  if (!o->text) return dsl_read_graph_file(A, o->graph, o->graph, map, dl);
  return dsl_parse_graph_text(A, o->text, o->graph, map, dl);
}

/* ---- output files ----------------------------------------------------------------- */

typedef struct outfile {
  char *path, *text;
} outfile;

typedef struct outlist {
  outfile *f;
  int n, cap;
} outlist;

static void out_add(outlist *l, char *path, char *text) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 32;
    l->f = realloc(l->f, sizeof(outfile) * (size_t)l->cap);
    if (!l->f) dlc_die_oom();
  }
  l->f[l->n].path = path;
  l->f[l->n].text = text;
  l->n++;
}

static void out_free(outlist *l) {
  for (int i = 0; i < l->n; i++) free(l->f[i].path), free(l->f[i].text);
  free(l->f);
}

static char *xprintf(const char *fmt, const char *a, const char *b, const char *c) {
  int n = snprintf(NULL, 0, fmt, a, b, c);
  char *p = malloc((size_t)n + 1);
  if (!p) dlc_die_oom();
  snprintf(p, (size_t)n + 1, fmt, a, b, c);
  return p;
}

static char *json_text(cJSON *j) {
  char *t = cJSON_Print(j);
  if (!t) dlc_die_oom();
  size_t n = strlen(t);
  char *r = realloc(t, n + 2);
  if (!r) dlc_die_oom();
  r[n] = '\n';
  r[n + 1] = 0;
  return r;
}

/* Whether a relative path a previous run listed would leave its directory:
 * it is absolute, or a component is "..". */
static bool path_leaves(const char *p) {
  if (p[0] == '/') return true;
  for (const char *c = p; *c; c = strchr(c, '/') ? strchr(c, '/') + 1 : c + strlen(c))
    if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || !c[2])) return true;
  return false;
}

/* The stale outputs: the files a previous run listed in `idx_path` that
 * this run does not produce.  Returns false (errno set) when the list exists
 * but cannot be read. */
static bool stale_outputs(const char *dir, const char *idx_path, const outlist *l, char ***out, int *nout) {
  *out = NULL;
  *nout = 0;
  FILE *f = fopen(idx_path, "r");
  if (!f) return errno == ENOENT;
  int cap = 0;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (!*line || path_leaves(line)) continue;
    bool keep = false;
    for (int i = 0; i < l->n && !keep; i++) keep = strcmp(l->f[i].path + strlen(dir) + 1, line) == 0;
    if (keep) continue;
    if (*nout == cap) {
      cap = cap ? 2 * cap : 16;
      *out = realloc(*out, sizeof(char *) * (size_t)cap);
      if (!*out) dlc_die_oom();
    }
    (*out)[(*nout)++] = xprintf("%s/%s%s", dir, line, "");
  }
  bool ok = !ferror(f);
  fclose(f);
  return ok;
}

/* Writes every file in one transaction (only those whose content changed;
 * outfiles.h).  When `manage` is set the run owns DIR: files a previous run
 * listed in DIR/dlcgen.outputs that this run did not produce are removed,
 * and the list is rewritten, in the same transaction: a failure at any
 * write, rename, removal or index update leaves every earlier file as it
 * was. */
static bool write_outputs(const pipeline_opts *o, const char *dir, outlist *l, bool manage, diag_list *dl) {
  if (o->sink) {
    for (int i = 0; i < l->n; i++) o->sink(o->sink_ctx, l->f[i].path, l->f[i].text);
    return true;
  }
  char *idx_path = NULL, *idx = NULL, **stale = NULL;
  int nstale = 0;
  if (manage) {
    idx_path = xprintf("%s/%s%s", dir, "dlcgen.outputs", "");
    if (!stale_outputs(dir, idx_path, l, &stale, &nstale)) {
      diag_report(dl, D_OUTPUT_IO, idx_path, NULL, "cannot read '%s': %s; no output was changed", idx_path,
                  strerror(errno));
      free(idx_path);
      return false;
    }
    size_t len = 1;
    for (int i = 0; i < l->n; i++) len += strlen(l->f[i].path) + 2;
    char *q = idx = malloc(len);
    if (!idx) dlc_die_oom();
    *q = 0;
    for (int i = 0; i < l->n; i++) q += sprintf(q, "%s\n", l->f[i].path + strlen(dir) + 1);
  }
  /* the files, then the removals, then the index */
  int n = 0;
  of_item *items = calloc((size_t)(l->n + nstale + 2), sizeof(of_item));
  if (!items) dlc_die_oom();
  for (int i = 0; i < l->n; i++) items[n++] = (of_item){l->f[i].path, l->f[i].text};
  for (int i = 0; i < nstale; i++) items[n++] = (of_item){stale[i], NULL};
  if (manage) items[n++] = (of_item){idx_path, idx};
  of_report rep;
  bool ok = of_commit(n, items, &rep);
  if (!ok)
    diag_report(dl, D_OUTPUT_IO, rep.failed, NULL, "cannot %s '%s': %s; no output was changed", rep.step, rep.failed,
                strerror(rep.err));
  if (rep.lost)
    diag_report(dl, D_OUTPUT_IO, rep.lost, "Restore the file from the copy named here.",
                "'%s' could not be restored after the failure; its earlier content is in '%s'", rep.lost, rep.kept);
  for (int i = 0; i < nstale; i++) free(stale[i]);
  free(stale);
  free(items);
  free(idx);
  free(idx_path);
  return ok;
}

/* ---- --graph ------------------------------------------------------------------------- */

static int graph_main(const pipeline_opts *o) {
  diag_list dl;
  diag_init(&dl);
  dtype T;
  if (!dtype_parse(o->dtype, &T) || (T != DT_FP16 && T != DT_BF16 && T != DT_FP32)) {
    fprintf(stderr, "dlcgen: --dtype takes fp16, bf16 or fp32, not '%s'\nTry 'dlcgen --help'.\n",
            o->dtype);
    return 2;
  }
  run r = {0};
  arena_init(&r.A);
  dsl_srcmap *map;
  cJSON *j = read_graph(o, &r.A, &map, &dl);
  int read_diags = dl.n;
  /* --bind: the dims a manifest variant would bind */
  cJSON *dims = o->nbind ? cJSON_CreateObject() : NULL;
  for (int i = 0; i < o->nbind; i++) {
    const char *eq = strchr(o->bind[i], '=');
    char *name = arena_strndup(&r.A, o->bind[i], (size_t)(eq - o->bind[i]));
    cJSON_AddNumberToObject(dims, name, (double)strtoll(eq + 1, NULL, 10));
  }
  fe_instance inst = {T, NULL, dims};
  /* stages after the last one dumped are not run */
  int until = o->until;
  if (o->dump) {
    int last = 0;
    for (int s = 0; s < STAGE__COUNT; s++)
      if (o->dump & (1u << s)) last = s;
    if (last < until) until = last;
  }
  /* the back half runs when one of its dumps is asked for, for sm80 */
  unsigned back = (1u << STAGE_PLAN) | (1u << STAGE_GPU) | (1u << STAGE_ARENA) | (1u << STAGE_CONSTPOOL) | (1u << STAGE_CU);
  const char *archs[8] = {"sm80"};
  int narch = 1;
  if (o->arch) {
    narch = 0;
    for (const char *p = o->arch; *p && narch < 8;) {
      size_t n = strcspn(p, ",");
      archs[narch] = arena_strndup(&r.A, p, n);
      if (!plan_arch(archs[narch])) {
        fprintf(stderr, "dlcgen: --arch: '%s' is not an arch (sm80, sm86, sm89, sm90a, sm100, sm120)\nTry 'dlcgen --help'.\n",
                archs[narch]);
        cJSON_Delete(j);
        cJSON_Delete(dims);
        run_free(&r);
        diag_free(&dl);
        return 2;
      }
      narch++;
      p += n;
      if (*p == ',') p++;
    }
    if (narch == 0) archs[narch++] = "sm80";
  }
  /* one kernel: no shape buckets (those are a library's, planned in --manifest mode) */
  plan_calibration cal = {0, NULL};
  bool ok = !o->calibrate || plan_calibration_read(&r.A, o->calibrate, &cal, &dl);
  codegen_opts cg = {(o->dump & back) != 0 && until >= STAGE_PLAN, "dlc_graph", narch, archs, 0, NULL, o->graph, false, false, 0, NULL,
                     o->calibrate ? &cal : NULL, false};
  layout_opts lo;
  layout_opts_default(&lo);
  lo.enabled = !o->no_layout;
  cJSON *trace = NULL;
  if (o->layout_trace && !(trace = layout_read_trace(o->layout_trace, &dl))) j = (cJSON_Delete(j), NULL);
  lo.trace = trace;
  lo.trace_where = o->layout_trace;
  ok = ok && j && run_stages(&r, j, o->graph, &inst, &lo, o->dump, until, &cg, false, &dl);
  dsl_locate(map, &dl, read_diags);
  char *cu = NULL;
  if (ok && (o->dump & (1u << STAGE_CU)) && r.kernel) {
    /* one op, one instance: the same emitter as --manifest */
    mf_op op = {0};
    op.name = r.fe->name;
    op.graph = j;
    op.graph_where = o->graph;
    op.ndtypes = 1;
    op.dtypes = &T;
    emit_instance in = {dtype_name(T), T, NULL, dims, r.fe, r.kernel, r.plan, NULL, 0, NULL, NULL, NULL, NULL, 0};
    emit_op eo = {&op, 0, 1, &in, 0, NULL};
    manifest m = {0};
    m.narchs = narch;
    m.archs = (const char **)archs;
    emit_ctx ec = {&r.A, &m, NULL, 1, &eo, &dl, NULL};
    op_run orun = {&ec, &eo, NULL};
    run_op_passes(&orun, &r.ms[STAGE_CU], &dl);
    r.timed[STAGE_CU] = true;
    cu = orun.cu;
  }
  if (o->time_report) print_time_report(o->graph, &r);
  if (ok && o->dump) {
    outlist out = {0};
    for (int s = 0; s < STAGE__COUNT; s++) {
      char *txt = s == STAGE_CU ? (cu ? xprintf("%s%s%s", cu, "", "") : NULL) : r.dumps[s] ? json_text(r.dumps[s]) : NULL;
      if (!txt) continue;
      if (o->dump_dir) out_add(&out, xprintf("%s/%s.%s", o->dump_dir, stage_names[s], s == STAGE_CU ? "cu" : "json"), txt);
      else fputs(txt, stdout), free(txt);
    }
    if (o->dump_dir && !write_outputs(o, o->dump_dir, &out, false, &dl)) ok = false;
    out_free(&out);
  }
  free(cu);
  cJSON_Delete(j);
  cJSON_Delete(trace);
  cJSON_Delete(dims);
  if (dl.n) print_diags(o, &dl);
  int status = ok && !diag_has_errors(&dl) ? 0 : 1;
  run_free(&r);
  diag_free(&dl);
  return status;
}

/* ---- --manifest ------------------------------------------------------------------------ */

/* After instance k (mi, run r) of op `op` compiled: its given_run into g
 * when its kernels are a rewrite's chain (added to eo->given when it
 * serves), then the dumps of both.  Returns whether it has a given run. */
static bool instance_given(arena *A, const pipeline_opts *o, const mf_op *op, const mf_instance *mi, int k, const run *r,
                           run *g, const fe_instance *fi, const layout_opts *lo, const codegen_opts *cg, emit_op *eo,
                           outlist *out, diag_list *dl) {
  bool given = false;
  if (r->fe_given && r->kernel && r->kernel->next) {
    diag_list local;
    diag_init(&local);
    given = given_run(g, r, op->graph, op->graph_where, fi, lo, o->dump, o->until, *cg, op->name, &local);
    for (int d = 0; d < local.n; d++) {
      char *at = xprintf("%s %s: %s", op->name, mi->tag, local.items[d].at);
      free(local.items[d].at);
      local.items[d].at = at;
    }
    diag_append(dl, &local);
  }
  if (given)
    eo->given[eo->ngiven++] = (emit_instance){arena_printf(A, "%s.given", mi->tag), mi->dt, mi->attr_values, mi->dim_values,
                                              g->fe, g->kernel, g->plan, NULL, 0, NULL, NULL, NULL, NULL, k};
  for (int which = 0; which < 2 && o->dump; which++) {
    const run *dr = which ? g : r;
    if (which && !given) continue;
    char *dir = xprintf("%s/dumps/%s/%s", o->out_dir, op->name, which ? arena_printf(A, "%s.given", mi->tag) : mi->tag);
    for (int s = 0; s < STAGE__COUNT; s++)
      if (dr->dumps[s]) out_add(out, xprintf("%s/%s.json%s", dir, stage_names[s], ""), json_text(dr->dumps[s]));
    free(dir);
  }
  return given;
}

static int manifest_main(const pipeline_opts *o) {
  diag_list dl;
  diag_init(&dl);
  arena A;
  arena_init(&A);
  outlist out = {0};
  plan_calibration cal = {0, NULL};
  bool cal_ok = !o->calibrate || plan_calibration_read(&A, o->calibrate, &cal, &dl);
  manifest *m = cal_ok ? (o->text ? mf_read_text(&A, o->text, o->manifest, &dl) : mf_read(&A, o->manifest, &dl)) : NULL;
  bool ok = m != NULL;
  int total = 0, done = 0;
  emit_op *eops = m ? ARENA_ARRAY(&A, emit_op, m->nops + 1) : NULL;
  mf_instance **insts = m ? ARENA_ARRAY(&A, mf_instance *, m->nops + 1) : NULL;
  run **runs = m ? ARENA_ARRAY(&A, run *, m->nops + 1) : NULL;
  run **givens = m ? ARENA_ARRAY(&A, run *, m->nops + 1) : NULL; /* given_run's, per instance */
  /* the layout pass's options: the manifest's "layout", --no-layout over it */
  layout_opts lo;
  layout_opts_default(&lo);
  cJSON *trace = NULL;
  if (m && m->layout) {
    const char *slash = strrchr(o->manifest, '/');
    const char *base = slash ? arena_strndup(&A, o->manifest, (size_t)(slash - o->manifest)) : ".";
    ok = layout_opts_read(&A, m->layout, "manifest.layout", base, &lo, &trace, &dl);
  }
  if (o->no_layout) lo.enabled = false;
  if (ok && o->layout_trace && !lo.trace) {
    ok = (trace = layout_read_trace(o->layout_trace, &dl)) != NULL;
    lo.trace = trace, lo.trace_where = o->layout_trace;
  }
  int *nmi = m ? ARENA_ARRAY(&A, int, m->nops + 1) : NULL; /* manifest instances per op */
  for (int i = 0; ok && i < m->nops; i++) {
    nmi[i] = mf_instances(&A, &m->ops[i], &insts[i]);
    total += nmi[i];
  }
  for (int i = 0; ok && i < m->nops; i++) {
    const mf_op *op = &m->ops[i];
    emit_op *eo = &eops[i];
    eo->op = op;
    eo->index = i;
    /* each instance emits its default kernel and at most two per shape set (or derived bucket, the
     * skinny one included): a split-K plan and the plan without split that follows it */
    int per = 1 + 2 * (op->nshape_sets > NDERIVED_M + NDERIVED_N + 1 ? op->nshape_sets
                                                                      : NDERIVED_M + NDERIVED_N + 1);
    eo->inst = ARENA_ARRAY(&A, emit_instance, (size_t)nmi[i] * (size_t)per + 1);
    eo->ninst = 0;
    runs[i] = calloc((size_t)nmi[i] + 1, sizeof(run));
    givens[i] = calloc((size_t)nmi[i] + 1, sizeof(run));
    if (!runs[i] || !givens[i]) dlc_die_oom();
    eo->given = ARENA_ARRAY(&A, emit_instance, (size_t)nmi[i] + 1);
    eo->ngiven = 0;
    bool all_given = true; /* every instance whose kernels are a rewrite's chain has its given_run */
    for (int k = 0; k < nmi[i]; k++) {
      mf_instance *mi = &insts[i][k];
      done++;
      if (!o->quiet) fprintf(stderr, "[%d/%d] %s %s\n", done, total, op->name, mi->tag);
      run *r = &runs[i][k];
      arena_init(&r->A);
      fe_instance fi = {mi->dt, mi->attr_values, mi->dim_values};
      codegen_opts cg = {o->until >= STAGE_PLAN,
                         arena_printf(&A, "dlc_%s_%s", op->name, mi->tag),
                         m->narchs,
                         m->archs,
                         op->nplans,
                         op->plans,
                         arena_printf(&A, "%s (%s)", op->at, mi->tag),
                         op->math_ieee,
                         true,
                         op->nshape_sets,
                         op->shape_sets,
                         o->calibrate ? &cal : NULL,
                         op->no_fusion};
      diag_list local;
      diag_init(&local);
      bool rok = run_stages(r, op->graph, op->graph_where, &fi, &lo, o->dump, o->until, &cg, false, &local);
      dsl_locate(op->srcmap, &local, 0);
      for (int d = 0; d < local.n; d++) {
        char *at = xprintf("%s %s: %s", op->name, mi->tag, local.items[d].at);
        free(local.items[d].at);
        local.items[d].at = at;
      }
      diag_append(&dl, &local);
      if (o->time_report) print_time_report(arena_printf(&A, "%s %s", op->name, mi->tag), r);
      if (!rok) {
        ok = false;
        continue;
      }
      /* the instance's buckets first (dispatch takes the first match), then its default */
      for (int b = 0; b < r->nbuckets; b++) {
        const bucket *bk = &r->buckets[b];
        eo->inst[eo->ninst++] = (emit_instance){arena_printf(&A, "%s.b%d", mi->tag, b), mi->dt, mi->attr_values,
                                                    mi->dim_values, r->fe, bk->kernel, bk->plan, bk->name,
                                                    bk->nbounds, bk->dim, bk->lo, bk->hi, bk->ext, k};
      }
      eo->inst[eo->ninst++] =
          (emit_instance){mi->tag, mi->dt, mi->attr_values, mi->dim_values, r->fe, r->kernel, r->plan, NULL, 0, NULL, NULL, NULL, NULL,
                          k};
      bool given = instance_given(&A, o, op, mi, k, r, &givens[i][k], &fi, &lo, &cg, eo, &out, &dl);
      all_given &= given || !(r->fe_given && r->kernel && r->kernel->next);
    }
    if (!all_given) eo->ngiven = 0; /* dlc_<op>() then refuses every call without a workspace (W2109) */
  }
  if (ok && o->until >= STAGE_CU) {
    /* the outputs name the manifest by its file name: they do not depend on
     * how its path was spelled */
    const char *base = strrchr(o->manifest, '/');
    emit_ctx ec = {&A, m, base ? base + 1 : o->manifest, m->nops, eops, &dl, NULL};
    if (!o->quiet) fprintf(stderr, "dlcgen: emitting CUDA and C for %d op%s\n", m->nops, m->nops == 1 ? "" : "s");
    for (int i = 0; i < m->nops; i++) {
      op_run orun = {&ec, &eops[i], NULL};
      double ms = 0;
      run_op_passes(&orun, &ms, &dl);
      out_add(&out, xprintf("%s/kernels/%s.cu%s", o->out_dir, m->ops[i].name, ""), orun.cu);
      if (o->time_report) fprintf(stderr, "dlcgen: time: %s: cu %.2f ms\n", m->ops[i].name, ms);
    }
    out_add(&out, xprintf("%s/include/dlc/dlc_ops.h%s%s", o->out_dir, "", ""), emit_ops_h(&ec));
    out_add(&out, xprintf("%s/src/dlc_params.h%s%s", o->out_dir, "", ""), emit_params_h(&ec));
    out_add(&out, xprintf("%s/src/dlc_dispatch.c%s%s", o->out_dir, "", ""), emit_dispatch_c(&ec));
    out_add(&out, xprintf("%s/src/dlc_entries.c%s%s", o->out_dir, "", ""), emit_entries_c(&ec));
    out_add(&out, xprintf("%s/src/dlc_ops.def%s%s", o->out_dir, "", ""), emit_ops_def(&ec));
    out_add(&out, xprintf("%s/docs/ops.md%s%s", o->out_dir, "", ""), emit_ops_md(&ec));
    out_add(&out, xprintf("%s/ops.json%s%s", o->out_dir, "", ""), emit_ops_json(&ec));
    ok = !diag_has_errors(&dl);
  }
  /* a run that stops before emission validates (and dumps) without
   * touching the code of an earlier run */
  if (ok) ok = write_outputs(o, o->out_dir, &out, o->until >= STAGE_CU, &dl);
  if (dl.n) print_diags(o, &dl);
  int status = ok && !diag_has_errors(&dl) ? 0 : 1;
  if (!o->quiet && status == 0)
    fprintf(stderr, "dlcgen: %d instance%s of %d op%s -> %s\n", total, total == 1 ? "" : "s", m->nops,
            m->nops == 1 ? "" : "s", o->out_dir);
  for (int i = 0; m && i < m->nops; i++) {
    for (int k = 0; runs[i] && k < nmi[i]; k++) run_free(&runs[i][k]);
    for (int k = 0; givens[i] && k < nmi[i]; k++) run_free(&givens[i][k]);
    free(runs[i]);
    free(givens[i]);
    if (insts[i]) mf_instances_free(insts[i], nmi[i]);
  }
  out_free(&out);
  cJSON_Delete(trace);
  if (m) mf_free(m);
  arena_free(&A);
  diag_free(&dl);
  return status;
}

/* ---- --decompile ---------------------------------------------------------------------- */

/* Prints the graph (JSON or DSL) as DSL on stdout, after the Frontend has
 * read it: only a valid graph is decompiled. */
static int decompile_main(const pipeline_opts *o) {
  dtype T;
  if (!dtype_parse(o->dtype, &T) || (T != DT_FP16 && T != DT_BF16 && T != DT_FP32)) {
    fprintf(stderr, "dlcgen: --dtype takes fp16, bf16 or fp32, not '%s'\nTry 'dlcgen --help'.\n", o->dtype);
    return 2;
  }
  diag_list dl;
  diag_init(&dl);
  arena A;
  arena_init(&A);
  dsl_srcmap *map;
  cJSON *j = read_graph(o, &A, &map, &dl);
  int read_diags = dl.n;
  fe_instance inst = {T, NULL, NULL};
  fe_graph *g = j ? fe_read_json(&A, j, o->graph, &inst, &dl) : NULL;
  dsl_locate(map, &dl, read_diags);
  char *text = g ? dsl_decompile(j, g, &dl) : NULL;
  if (text) fputs(text, stdout);
  if (dl.n) print_diags(o, &dl);
  int status = text && !diag_has_errors(&dl) ? 0 : 1;
  free(text);
  cJSON_Delete(j);
  arena_free(&A);
  diag_free(&dl);
  return status;
}

int pipeline_main(const pipeline_opts *o) {
  if (o->decompile) return decompile_main(o);
  if (o->graph) return graph_main(o);
  return manifest_main(o);
}
