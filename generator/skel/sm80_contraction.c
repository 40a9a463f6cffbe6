/* The sm80 contraction skeleton (algo_choice implicit_gemm,
 * templates/sm80_contraction.cuh): one contraction region with a pointwise
 * epilogue (GEMM, implicit-GEMM convolution), in a multistage cp.async ring
 * of shared tiles feeding ldmatrix and mma.sync.  Here are its operands'
 * walks, its GPU IR builder (gpuir_build: the prologue, the main and tail
 * loops, the epilogue), its checks (verify_sm80_render) and its renderer
 * (contraction_split: the Op's shared template, with its chunk and walk
 * functions and epilogues, and the plan's struct with its kernel<VEC>).
 * The sm90a contraction starts from this builder's kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "emit_int.h"
#include "gpuir_int.h"
#include "skel.h"
#include "strbuf.h"

/* How a contraction operand's fragments leave shared memory. */
static const char *gpuir_frag_load(const gpu_operand *o, int mma_k) {
  if (o->k_contig) return "ldmatrix.x4";
  return mma_k == 8 ? "ld.shared.b32" : "ldmatrix.x4.trans";
}

/* The operand's k-step: how far its address moves per unit of the K group,
 * flattened as the chunk functions index it (the last K axis innermost),
 * when that is one fixed number and no pad guard reads a K axis: one K axis
 * with a fixed step, or a K group the offset reads packed, x0 + s * kflat
 * (conv's KRSC filter over r, s, c; gpuir_flatten).  Then the chunk
 * pointers of a full k-tile are those of the tile before, moved by BK
 * steps: the skeleton hoists them. */
static const sx *operand_kstep(arena *A, const region *r, const gpu_view *v, const gpu_operand *o) {
  if (v->nk == 1) return operand_axis_step(A, r, o, v->k_axes[0]);
  if (v->nk == 0) return NULL;
  const sx *off = operand_offset_free_of(A, r, o, v->k_axes, v->nk);
  const sx *flat = off ? gpuir_flatten(A, r, v->k_axes, v->nk, off, "k_flat") : NULL;
  return flat ? axis_step(A, flat, "k_flat") : NULL;
}

/* The guard mask of walking operand o (gpu_operand.gmask): its bits, or 0
 * when a guard's K part has no constant range or the ranges' product passes
 * 32. */
static int walk_guard_mask(arena *A, const gpu_view *v, gpu_operand *o) {
  if (!o->walk || o->ng == 0) return 0;
  int64_t *kmin = ARENA_ARRAY(A, int64_t, o->ng);
  int *range = ARENA_ARRAY(A, int, o->ng), *stride = ARENA_ARRAY(A, int, o->ng);
  int64_t bits = 1;
  for (int g = o->ng - 1; g >= 0; g--) {
    int64_t lo, hi;
    if (!sx_bounds(o->gk[g], k_axis_range, (void *)v, &lo, &hi) || hi < lo || (uint64_t)hi - (uint64_t)lo >= 32) return 0;
    kmin[g] = lo, range[g] = (int)(hi - lo + 1), stride[g] = (int)bits;
    bits *= range[g];
    if (bits > 32) return 0;
  }
  o->gkmin = kmin, o->gkrange = range, o->gkstride = stride;
  return (int)bits;
}

/* A signature dim's range for a sign test: the entry points reject negative
 * dims (the upper bound only keeps sx_bounds's products from overflowing). */
static bool param_nonneg(void *ctx, sx_atom_kind kind, const char *name, int64_t *lo, int64_t *hi) {
  (void)ctx, (void)name;
  if (kind != SXA_PARAM) return false;
  *lo = 0, *hi = 1 << 15;
  return true;
}

/* The K part's span of walking operand o (gpu_operand.kspan): sum over the
 * K axes of |kcoef_j| * (extent_j - 1), or NULL when a coefficient's sign is
 * not fixed over the dims. */
static const sx *walk_kspan(arena *A, const gpu_view *v, const gpu_operand *o) {
  if (!o->walk) return NULL;
  const sx *span = sx_int(A, 0);
  for (int j = 0; j < v->nk; j++) {
    int64_t lo, hi;
    if (!sx_bounds(o->kcoef[j], param_nonneg, NULL, &lo, &hi)) return NULL;
    const sx *c = lo >= 0 ? o->kcoef[j] : hi <= 0 ? sx_neg(A, o->kcoef[j]) : NULL;
    if (!c) return NULL;
    span = sx_add(A, span, sx_mul(A, c, sx_sub(A, v->r->it[v->k_axes[j]].size, sx_int(A, 1))));
  }
  return span;
}

/* Whether operand o can walk its K axes (gpu_operand.walk), and its parts. */
static void operand_walk(arena *A, const gpu_view *v, gpu_operand *o) {
  const region *r = v->r;
  const rexpr *sel = o->read, *rd = o->read;
  if (o->kstep || !o->k_contig || v->nk == 0 || v->nk > GPUIR_WALK_AXES || o->contig_axis != v->k_axes[v->nk - 1]) return;
  if (rd->k == RX_SELECT && !rd->a) rd = rd->b;
  if (rd->k == RX_UNARY && rd->op == TINY_CAST) rd = rd->a;
  if (rd->k != RX_READ) return;
  const sx *off = gpuir_offset(A, &r->in[o->input], rd->map);
  if (!split_k(A, v, off, &o->moff, &o->koff)) return;
  /* koff = sum of kcoef[j] * k_j: the steps a counter's carries add */
  o->kcoef = ARENA_ARRAY(A, const sx *, v->nk + 1);
  group_pick gp = {r, v->k_axes, v->nk, -1, sx_int(A, 0), sx_int(A, 1)};
  const sx *sum = sx_int(A, 0);
  for (int j = 0; j < v->nk; j++) {
    gp.one = j;
    o->kcoef[j] = sx_subst(A, o->koff, subst_pick, &gp);
    if (sx_has_vars(o->kcoef[j])) return;
    sum = sx_add(A, sum, sx_mul(A, o->kcoef[j], sx_var(A, r->it[v->k_axes[j]].name)));
  }
  if (!sx_equal(sum, o->koff)) return;
  o->ng = sel->k == RX_SELECT && !sel->a ? sel->ng : 0;
  o->gm = ARENA_ARRAY(A, const sx *, o->ng + 1);
  o->gk = ARENA_ARRAY(A, const sx *, o->ng + 1);
  o->guards = o->ng ? sel->guards : NULL;
  /* a chunk's elements share its guards: no guard reads the chunk's axis */
  const char *cn = r->it[o->contig_axis].name;
  for (int g = 0; g < o->ng; g++) {
    if (sx_has_vars(sel->guards[g].lo) || (sel->guards[g].hi && sx_has_vars(sel->guards[g].hi))) return;
    if (sx_mentions(sel->guards[g].e, SXA_VAR, cn)) return;
    if (!split_k(A, v, sel->guards[g].e, &o->gm[g], &o->gk[g])) return;
  }
  o->walk = true;
  o->gmask = walk_guard_mask(A, v, o);
  o->g32 = !o->gmask && walk_guards_32(v, o);
  o->kspan = walk_kspan(A, v, o);
}

/* The fragment loads of k steps lo..hi (k16, or k8 in TF32) of tile
 * kt + tile, held in stage (kt + tile) % S: A's, then B's; `ahead`, into the
 * set loaded a tile ahead (k step 0 only), with `min_vec` for the widths
 * that run it. */
static void frag_loads(gpu_kernel *k, arena *A, int S, int lo, int hi, int tile, bool ahead, int min_vec) {
  const char *steps = k_steps(A, k, lo, hi);
  const char *kt = tile ? arena_printf(A, "kt+%d", tile) : "kt", *at = tile ? arena_printf(A, "(%s)", kt) : kt;
  for (int side = 0; side < 2; side++) {
    const gpu_operand *o = side ? &k->B : &k->A;
    const char *into = ahead ? ", into the set loaded a tile ahead" : "";
    gpu_stmt *st =
        gpuir_push(k, A, GS_LDMATRIX, gpuir_frag_load(o, k->mma_k),
                   k->mma_k == 8 ? arena_printf(A,
                                                "sm%c[%s%%%d], %s: %c fragments (%s), lane offsets hoisted, then "
                                                "cvt.rna.tf32.f32%s",
                                                side ? 'B' : 'A', at, S, steps, side ? 'B' : 'A',
                                                o->k_contig ? "8 x 4 fp32 matrices"
                                                : side      ? "(k t, n g), (k t+4, n g)"
                                                            : "(k t, m g), (k t, m g+8), (k t+4, ...)",
                                                into)
                                 : arena_printf(A, "sm%c[%s%%%d], %s: %c fragments, lane offsets hoisted%s",
                                                side ? 'B' : 'A', at, S, steps, side ? 'B' : 'A', into),
                   0, 1, gpuir_tok_at(k, A, side ? "tB" : "tA", kt), 0);
    st->side = side ? GSIDE_B : GSIDE_A, st->lo = lo, st->hi = hi, st->tile = tile, st->ahead = ahead, st->ring = side + 1;
    st->min_vec = min_vec;
  }
}

/* The fragment loads and MMAs of k steps lo..hi of tile kt: A's, B's,
 * then the warp tile's MMAs on them (the renderer's k-step group). */
static void frags_mmas(gpu_kernel *k, arena *A, int S, int lo, int hi) {
  frag_loads(k, A, S, lo, hi, 0, false, 0);
  mmas(k, A, lo, hi, false);
}

/* The wait for tile kt + tile (S - 2 groups left in flight) and the
 * barrier after it (`why`); the index of the wait. */
static int wait_tile(gpu_kernel *k, arena *A, int S, int tile, const char *why) {
  const char *kt = tile ? arena_printf(A, "kt+%d", tile) : "kt";
  gpuir_push(k, A, GS_WAIT, "cp.async.wait_group", arena_printf(A, "%d", S - 2), 0, 2, gpuir_tok_at(k, A, "tA", kt),
             gpuir_tok_at(k, A, "tB", kt))
      ->lo = S - 2;
  gpuir_push(k, A, GS_BARRIER, "bar.sync", why, 0, 0, 0, 0);
  return k->nst - 2;
}

/* The copies of one ring stage and the advances after them: the tile
 * `tile` (kt + tile inside a loop), into stage `stage` before one. */
static void copy_stage(gpu_kernel *k, arena *A, gpu_copy how, int tile, int stage, int ta, int tb) {
  int S = k->plan.stages;
  bool looped = how != GCOPY_TILE;
  for (int side = 0; side < 2; side++) {
    const gpu_operand *o = side ? &k->B : &k->A;
    const char *sm = side ? "smB" : "smA";
    const char *what = looped ? arena_printf(A, "%s[(kt+%d)%%%d] <- %s", sm, tile, S, o->tensor)
                              : arena_printf(A, "%s[%d] <- %s", sm, stage, o->tensor);
    const char *detail;
    if (how == GCOPY_TILE) {
      const char *pr = gpuir_axes(A, k->r, side ? k->v.n_axes : k->v.m_axes, side ? k->v.nn : k->v.nm),
                 *pk = gpuir_axes(A, k->r, k->v.k_axes, k->v.nk);
      detail = k->steady_min_vec ? arena_printf(A, "%c%s x K%s tile %d if any: streamed when full at the widths >= %d, "
                                                   "else pred tails",
                                                side ? 'N' : 'M', pr, pk, tile, k->steady_min_vec)
                                 : arena_printf(A, "%c%s x K%s tile %d if any, pred tails", side ? 'N' : 'M', pr, pk, tile);
    } else if (how == GCOPY_BOUNDED) {
      detail = k->steady_min_vec ? "tile kt+stages-1 if any, pred tails (after the steady loop: the remainder at most)"
                                 : "tile kt+stages-1 if any, pred tails";
    } else {
      const char *guards = "";
      for (int g = 0; g < o->ng; g++) guards = arena_printf(A, "%s%s%s", guards, g ? ", " : "", sx_str(A, o->guards[g].e));
      detail = o->walk ? (o->ng ? arena_printf(A, "full tile kt+stages-1: chunk rest + K part, zero fill where a pad guard "
                                                  "(%s) fails%s",
                                               guards,
                                               o->gmask ? arena_printf(A, " (the chunk's %d-bit mask at the K parts' bit)",
                                                                       o->gmask)
                                               : o->g32 ? " (32-bit: lo' <= K part < hi')"
                                                        : "")
                                : "full tile kt+stages-1: chunk rest + K part, whole chunks")
               : o->k_contig ? "full tile kt+stages-1 from the chunk pointers, whole chunks"
                             : "full tile kt+stages-1 from the chunk pointers, tails as byte counts";
    }
    gpu_stmt *st = gpuir_push(k, A, GS_CP_ASYNC, what, detail, side ? tb : ta, 0, 0, 0);
    st->side = side ? GSIDE_B : GSIDE_A, st->copy = how, st->tile = tile, st->stage = stage, st->ring = side + 1;
    /* a stream's pointers step after its copy; the walks' one K counter
     * after both copies */
    if (how == GCOPY_BOUNDED || !k->steady_min_vec || o->walk) continue;
    st = gpuir_push(k, A, GS_ADVANCE, arena_printf(A, "%s chunk pointers", o->tensor),
                    arena_printf(A, "+= %d * (%s)%s", k->plan.tile[2], o->kstep_str,
                                 how == GCOPY_TILE ? " after a streamed (full) tile" : ""),
                    0, 0, 0, 0);
    st->side = side ? GSIDE_B : GSIDE_A, st->copy = how, st->tile = tile, st->min_vec = k->steady_min_vec;
  }
  if (how != GCOPY_BOUNDED && k->steady_min_vec && (k->A.walk || k->B.walk)) {
    const char *parts = "";
    for (int side = 0; side < 2; side++) {
      const gpu_operand *o = side ? &k->B : &k->A;
      if (!o->walk) continue;
      parts = arena_printf(A, "%s; %s's K part %s%s", parts, o->tensor, sx_str(A, o->koff),
                           o->kpart32 ? arena_printf(A, " in 32 bits (the dispatcher: span %s elements fits int32 bytes, "
                                                        "else width %d)",
                                                     sx_str(A, o->kspan), k->kpart32_fallback)
                                      : "");
    }
    gpu_stmt *st =
        gpuir_push(k, A, GS_ADVANCE, "K counter",
                   arena_printf(A, "%s += %d with carries%s%s", gpuir_axes(A, k->r, k->v.k_axes, k->v.nk),
                                k->plan.tile[2], parts, how == GCOPY_TILE ? "; after a streamed (full) tile" : ""),
                   0, 0, 0, 0);
    st->side = GSIDE_KWALK, st->copy = how, st->tile = tile, st->min_vec = k->steady_min_vec;
  }
  gpuir_push(k, A, GS_COMMIT, "cp.async.commit_group", NULL, 0, 2, ta, tb);
}

/* One k-tile of the contraction's loops: wait for tile kt, refill the stage
 * freed last iteration, then the fragments and MMAs of tile kt.  In the
 * steady loop the refill is the operands' streamed copy and advance, issued
 * after the first k step's MMAs (it writes stage kt-1, which every warp
 * finished reading before the barrier), so that the tile's first MMAs wait
 * only on the barrier and their own fragments.  In the drain the steady
 * loop has left at most one tile to copy, the remainder (kt + S - 1 >= KTF
 * when it ends), and a kernel without it copies every tile there: bounded
 * copies, no advance. */
static void loop_body(gpu_kernel *k, arena *A, int S, bool steady) {
  int ks = k->plan.tile[2] / k->mma_k; /* k steps a tile */
  wait_tile(k, A, S, 0, "stage kt landed for every thread; stage kt-1 free");
  if (steady) frags_mmas(k, A, S, 0, 0);
  copy_stage(k, A, steady ? GCOPY_STREAM : GCOPY_BOUNDED, S - 1, -1, gpuir_tok_at(k, A, "tA", "kt+S-1"),
             gpuir_tok_at(k, A, "tB", "kt+S-1"));
  if (!steady || ks > 1) frags_mmas(k, A, S, steady ? 1 : 0, ks - 1);
}

/* The steady loop with k step 0's fragments a tile ahead (ahead_vec):
 * before it, when it runs, the first tile's wait, barrier and step-0
 * fragments; in it, step 0's MMAs on the fragments loaded an iteration
 * earlier, the refill, the middle steps, then the last step's fragments,
 * the wait for tile kt+1 and the barrier, tile kt+1's step-0 fragments,
 * and the last step's MMAs.  A tile's first MMAs then wait on nothing: the
 * barrier and the next tile's fragment loads issue under the last step's
 * MMAs.  The refill writes stage kt-1, which every warp finished reading
 * (its last step before the previous iteration's barrier, its step 0 an
 * iteration before that). */
static void ahead_prologue(gpu_kernel *k, arena *A, int S) {
  int w = wait_tile(k, A, S, 0, "the steady loop's first tile landed for every thread");
  for (int i = w; i < w + 2; i++) k->st[i].min_vec = k->ahead_vec, k->st[i].ahead = true;
  frag_loads(k, A, S, 0, 0, 0, true, k->ahead_vec);
}

static void loop_body_ahead(gpu_kernel *k, arena *A, int S) {
  int ks = k->plan.tile[2] / k->mma_k;
  mmas(k, A, 0, 0, true);
  copy_stage(k, A, GCOPY_STREAM, S - 1, -1, gpuir_tok_at(k, A, "tA", "kt+S-1"), gpuir_tok_at(k, A, "tB", "kt+S-1"));
  if (ks > 2) frags_mmas(k, A, S, 1, ks - 2);
  frag_loads(k, A, S, ks - 1, ks - 1, 0, false, 0);
  wait_tile(k, A, S, 1, "stage kt+1 landed for every thread; stage kt read by every warp");
  frag_loads(k, A, S, 0, 0, 1, true, 0);
  mmas(k, A, ks - 1, ks - 1, false);
}

/* A contraction's epilogue statements, from the staging tile: with
 * `full` (its description), the full-width pair (the region's lets, then
 * one 16-byte store of epi_vec outputs a row, the rows past M skipped),
 * then the bounds-checked pair every other tile takes. */
void emit_epilogue(gpu_kernel *k, arena *A, const region *r, const char *lets, const char *full) {
  if (full) {
    gpuir_push(k, A, GS_EPILOGUE, r->lets[r->acc_let].name, full, gpuir_tok(k, A, "tEfull"), 1,
               gpuir_tok(k, A, "tStage"), 0)
        ->full = true;
    gpuir_push(
        k, A, GS_ST_GLOBAL,
        arena_printf(A, "st.global.v4.b32 (%d x %s) -> %s", k->epi_vec, dtype_name(k->v.out_dt), r->out[k->v.out].name),
        "no column predicate; rows past M skipped", 0, 1, gpuir_tok(k, A, "tEfull"), 0)
        ->full = true;
  }
  gpuir_push(k, A, GS_EPILOGUE, r->lets[r->acc_let].name,
             arena_printf(A, "%slets: %s", k->epi_vec ? "other tiles: " : "", *lets ? lets : "(none)"),
             gpuir_tok(k, A, "tE"), 1, gpuir_tok(k, A, "tStage"), 0);
  gpuir_push(k, A, GS_ST_GLOBAL,
             arena_printf(A, "st.global.v2.b32 (4 x %s) -> %s", dtype_name(k->v.out_dt), r->out[k->v.out].name),
             arena_printf(A, "pred tails (%s), scalar where a row ends or is misaligned", tail_pred(A, &k->v)), 0, 1,
             gpuir_tok(k, A, "tE"), 0);
}

/* The sm80 contraction's view, operands, dtype, shared tiles and launch
 * (every contraction row's, the sm90a ones' too); NULL with a diagnostic
 * when the region is not a contraction with a pointwise epilogue. */
static gpu_kernel *contraction_kernel(arena *A, const region *r, const pc_analysis *a, const sched_plan *p,
                                      const char *name, const char *at, diag_list *dl) {
  const pc_contraction *c = &a->con;
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
  gpu_kernel *k = ARENA_NEW(A, gpu_kernel);
  view_of(A, &k->v, r, a);
  /* a "deferred" output is stored too: to the workspace, when the region is
   * one kernel of a chain (the pipeline allows it only there) */
  if (r->nyields != 1) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "region %s stores %d outputs; the skeleton stores exactly one",
                r->name, r->nyields);
    return NULL;
  }
  k->v.out = r->yields[0].output;
  k->v.out_let = r->yields[0].let;
  k->v.out_dt = r->yields[0].cast;
  if (k->v.nm == 0 || k->v.nn == 0) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "region %s has an empty M or N group", r->name);
    return NULL;
  }
  k->name = name;
  k->algo = ALGO_IMPLICIT_GEMM;
  k->r = r;
  k->a = a;
  k->plan = *p;
  operand_of(A, dl, at, r, c, false, &k->A);
  operand_of(A, dl, at, r, c, true, &k->B);
  k->A.kstep = operand_kstep(A, r, &k->v, &k->A);
  k->B.kstep = operand_kstep(A, r, &k->v, &k->B);
  if (k->A.kstep) k->A.kstep_str = sx_str(A, k->A.kstep);
  if (k->B.kstep) k->B.kstep_str = sx_str(A, k->B.kstep);
  operand_walk(A, &k->v, &k->A);
  operand_walk(A, &k->v, &k->B);
  bool split = p->split_k > 1;
  if (split && (k->v.nk != 1 || k->A.walk || k->B.walk)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL,
                "split_k = %d: a slice starts at a k-tile by pointer steps, which needs one K axis and operands "
                "that do not walk (region %s has %d K axes)",
                p->split_k, r->name, k->v.nk);
    return NULL;
  }
  k->T = r->in[k->A.input].dt;
  if (k->T != r->in[k->B.input].dt || (k->T != DT_FP16 && k->T != DT_BF16 && k->T != DT_FP32)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL,
                "the tensor-core skeleton takes fp16, bf16 or fp32 operands of one dtype, not %s x %s",
                dtype_name(r->in[k->A.input].dt), dtype_name(r->in[k->B.input].dt));
    return NULL;
  }
  /* fp32 operands run on the tensor cores in TF32: m16n8k8, each fragment
   * rounded to tf32 (cvt.rna) after its shared-memory load */
  k->mma_k = k->T == DT_FP32 ? 8 : 16;
  /* chunk widths: the plan's width and every narrower one, for operands whose
   * pointers or leading dimensions are less aligned (dispatch picks) */
  vec_variants(k, k->A.vec_max < k->B.vec_max ? k->A.vec_max : k->B.vec_max);
  static_widths(k, A);
  int BM = p->tile[0], BN = p->tile[1], BK = p->tile[2], S = p->stages;
  k->threads = 32 * p->warps_m * p->warps_n;
  int ring = S * (BM + BN) * BK * dtype_bytes(k->T), stage = BM * (BN + 8) * 4;
  k->smem = ring > stage ? ring : stage;
  int eb = dtype_bytes(k->T);
  int end = add_tile(k, "smA", 0, S, k->A.k_contig ? BM : BK, k->A.k_contig ? BK : BM, eb);
  add_tile(k, "smB", end, S, k->B.k_contig ? BN : BK, k->B.k_contig ? BK : BN, eb);
  /* every (M tile, N tile) on blockIdx.x, in the plan's raster order; the batch on z */
  const sx *tiles_m = sx_ceildiv_int(A, gpuir_extent(A, r, k->v.m_axes, k->v.nm), BM),
           *tiles_n = sx_ceildiv_int(A, gpuir_extent(A, r, k->v.n_axes, k->v.nn), BN);
  k->grid[0] = sx_mul(A, tiles_m, tiles_n);
  k->grid_tiles[0] = tiles_m, k->grid_tiles[1] = tiles_n;
  k->grid[1] = sx_int(A, 1);
  k->grid[2] = gpuir_extent(A, r, k->v.b_axes, k->v.nb);
  return grid_fits(A, k, dl, at) ? k : NULL;
}

/* The sm80 contraction's statements, in groups: before the k-loops (the
 * tile, the shared tiles, the streamed operands' state, the first S - 1
 * tiles' copies), the k-loops (steady, a tile ahead, drain), and after them
 * (the staging tile, then the epilogue or a split-K slice's partial). */
static void sm80_prologue(gpu_kernel *k, arena *A, const region *r, const sched_plan *p, const char *pm, const char *pn,
                          const char *pk) {
  int BM = p->tile[0], BN = p->tile[1], BK = p->tile[2], S = p->stages;
  bool split = p->split_k > 1;
  const sx *tiles_m = k->grid_tiles[0], *tiles_n = k->grid_tiles[1];
  /* the skeleton, with tokens */
  const char *ta = k->A.k_contig ? arena_printf(A, "[%d][%d][%d] (M x K, K contiguous)", S, BM, BK)
                                 : arena_printf(A, "[%d][%d][%d] (K x M, M contiguous)", S, BK, BM);
  const char *tb = k->B.k_contig ? arena_printf(A, "[%d][%d][%d] (N x K, K contiguous)", S, BN, BK)
                                 : arena_printf(A, "[%d][%d][%d] (K x N, N contiguous)", S, BK, BN);
  gpuir_push(k, A, GS_TILE_COORD, "(m.o, n.o) <- blockIdx.x",
             p->raster_group > 1
                 ? arena_printf(
                       A, "%s x %s tiles in groups of %d M tiles, M fastest within a group; batch <- blockIdx.z%s",
                       sx_str(A, tiles_m), sx_str(A, tiles_n), p->raster_group, split ? "; K slice <- blockIdx.y" : "")
                 : arena_printf(A, "%s x %s tiles, N fastest; batch <- blockIdx.z%s", sx_str(A, tiles_m),
                                sx_str(A, tiles_n), split ? "; K slice <- blockIdx.y" : ""),
             0, 0, 0, 0);
  gpuir_push(k, A, GS_ALLOC_SHARED, "smA",
             arena_printf(A, "%s %s, 16B chunks xor %d", dtype_name(k->T), ta, k->tiles[0].swz), 0, 0, 0, 0)
      ->side = GSIDE_A;
  gpuir_push(k, A, GS_ALLOC_SHARED, "smB",
             arena_printf(A, "%s %s, 16B chunks xor %d", dtype_name(k->T), tb, k->tiles[1].swz), 0, 0, 0, 0)
      ->side = GSIDE_B;
  k->steady_min_vec = steady_min_vec(k);
  /* 32-bit K parts where the dispatcher has a 64-bit kernel for the calls past their span */
  k->kpart32_fallback = kpart32_fallback(k);
  k->A.kpart32 = k->kpart32_fallback && k->A.kspan;
  k->B.kpart32 = k->kpart32_fallback && k->B.kspan;
  if (!k->A.kpart32 && !k->B.kpart32) k->kpart32_fallback = 0;
  gpuir_push(k, A, GS_ACC_ZERO, "acc",
             arena_printf(A, "fp32, the warp tile %dx%d's MMA accumulators", BM / p->warps_m, BN / p->warps_n), 0, 0, 0,
             0);
  /* the streamed operands' state at the slice's first k-tile, for the
   * widths that run the steady loop */
  for (int side = 0; side < 2 && k->steady_min_vec; side++) {
    const gpu_operand *o = side ? &k->B : &k->A;
    gpu_stmt *st;
    if (o->walk) {
      st = gpuir_push(
          k, A, GS_ADDR_SETUP, arena_printf(A, "%s chunk rests", o->tensor),
          arena_printf(A,
                       "per thread at k-tile 0: each chunk's rest %s (rows past the %s tail read one of the "
                       "tile's rows)%s",
                       sx_str(A, o->moff), side ? pn : pm,
                       o->gmask
                           ? arena_printf(A, "; a %d-bit mask of the K parts at which every pad guard passes", o->gmask)
                       : o->g32 ? "; each pad guard's bounds on its K part, clamped into int32"
                                : ""),
          0, 0, 0, 0);
    } else {
      st = gpuir_push(k, A, GS_ADDR_SETUP, arena_printf(A, "%s chunk pointers", o->tensor),
                      o->k_contig
                          ? arena_printf(A,
                                         "per thread at the slice's first k-tile; rows past the %s tail read one of "
                                         "the tile's rows (they feed only outputs never stored): whole chunks, no "
                                         "predicate; k-step %s",
                                         side ? pn : pm, o->kstep_str)
                          : arena_printf(A,
                                         "per thread at the slice's first k-tile, with the %s tail's byte counts; "
                                         "k-step %s",
                                         side ? pn : pm, o->kstep_str),
                      0, 0, 0, 0);
    }
    st->side = side ? GSIDE_B : GSIDE_A, st->min_vec = k->steady_min_vec;
  }
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "the tile's coordinates parked in shared memory for every thread", 0, 0, 0,
             0);
  if (k->steady_min_vec && (k->A.walk || k->B.walk)) {
    gpu_stmt *st = gpuir_push(k, A, GS_ADDR_SETUP, "K counter",
                              arena_printf(A, "%s at the thread's K column of k-tile 0", pk), 0, 0, 0, 0);
    st->side = GSIDE_KWALK, st->min_vec = k->steady_min_vec;
  }
  for (int side = 0; side < 2; side++)
    gpuir_push(k, A, GS_FRAG_SETUP, arena_printf(A, "%c fragment lane offsets", side ? 'B' : 'A'),
               "the lane's shared addresses in stage 0 of each k step's (or fragment's) ldmatrix, hoisted", 0, 0, 0, 0)
        ->side = side ? GSIDE_B : GSIDE_A;
  for (int s = 0; s < S - 1; s++)
    copy_stage(k, A, GCOPY_TILE, s, s, gpuir_tok_n(k, A, "tA", s), gpuir_tok_n(k, A, "tB", s));
}

static void sm80_loops(gpu_kernel *k, arena *A, const sched_plan *p, const char *pk) {
  int BK = p->tile[2], S = p->stages;
  /* the steady state streams both operands over the full k-tiles when both
   * advance by a fixed step (for the widths steady_min_vec allows); the drain
   * loop takes the last tiles with bounds */
  bool steady = k->steady_min_vec > 0;
  k->ahead_vec = ahead_vec(k);
  const char *body = k->A.walk || k->B.walk ? "no bounds, the K counters' carries only" : "one basic block";
  if (k->ahead_vec) {
    ahead_prologue(k, A, S);
    gpu_stmt *st =
        gpuir_push(k, A, GS_LOOP, "kt",
                   arena_printf(A,
                                "steady (vec >= %d), k step 0's fragments a tile ahead: 0 <= kt < floor(K%s / %d) "
                                "- %d, every prefetched tile full: %s",
                                k->ahead_vec, pk, BK, S - 1, body),
                   0, 0, 0, 0);
    st->loop = GLOOP_STEADY, st->min_vec = k->ahead_vec;
    loop_body_ahead(k, A, S);
    gpuir_push(k, A, GS_END_LOOP, "kt", NULL, 0, 0, 0, 0);
  }
  if (steady && k->ahead_vec != k->steady_min_vec) {
    gpu_stmt *st = gpuir_push(
        k, A, GS_LOOP, "kt",
        arena_printf(A, "steady (vec >= %d%s): 0 <= kt < floor(K%s / %d) - %d, every prefetched tile full: %s",
                     k->steady_min_vec, k->ahead_vec ? arena_printf(A, ", < %d", k->ahead_vec) : "", pk, BK, S - 1,
                     body),
        0, 0, 0, 0);
    st->loop = GLOOP_STEADY, st->min_vec = k->steady_min_vec, st->below_vec = k->ahead_vec;
    loop_body(k, A, S, true);
    gpuir_push(k, A, GS_END_LOOP, "kt", NULL, 0, 0, 0, 0);
  }
  gpuir_push(k, A, GS_LOOP, "kt",
             arena_printf(A, "%s kt < ceil(K%s / %d): the last tiles, the remainder bounds-checked",
                          steady ? "drain:" : "0 <=", pk, BK),
             0, 0, 0, 0)
      ->loop = GLOOP_DRAIN;
  loop_body(k, A, S, false);
  gpuir_push(k, A, GS_END_LOOP, "kt", NULL, 0, 0, 0, 0);
}

static void sm80_after_loops(gpu_kernel *k, arena *A, const region *r, const sched_plan *p, const char *pk) {
  int BM = p->tile[0], BN = p->tile[1], BK = p->tile[2];
  bool split = p->split_k > 1;
  gpuir_push(k, A, GS_WAIT, "cp.async.wait_group", "0", 0, 0, 0, 0)->lo = 0;
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "the ring is free for the staging tile", 0, 0, 0, 0);
  gpuir_push(k, A, GS_STAGE_ACC, "st.shared.v2.f32", arena_printf(A, "acc -> stage[%d][%d+8] fp32", BM, BN),
             gpuir_tok(k, A, "tStage"), 1, gpuir_tok(k, A, "tMMA"), 0);
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "staging tile complete", 0, 0, 0, 0);
  if (split) {
    /* the slice's partial tile, for the second kernel (gpuir_build_splitk_reduce) */
    k->grid[1] = sx_int(A, 1); /* times the slices, which the dispatcher computes from K */
    gpuir_push(
        k, A, GS_ST_GLOBAL, "st.global.v4.f32 stage -> workspace",
        arena_printf(A,
                     "the slice's whole %dx%d fp32 partial tile at [batch][slice][tile] of the caller's workspace; "
                     "no epilogue (k-tiles [slice x ktp, (slice + 1) x ktp) of ceil(K%s / %d), %d slices at most)",
                     BM, BN, pk, BK, p->split_k),
        0, 1, gpuir_tok(k, A, "tStage"), 0);
    return;
  }
  const char *lets = "";
  for (int l = 0; l < r->nlets; l++)
    if (r->lets[l].post_reduce) lets = arena_printf(A, "%s%s%s", lets, *lets ? ", " : "", r->lets[l].name);
  k->epi_vec = epi_vec(A, &k->v, BM, BN, k->threads);
  emit_epilogue(k, A, r, lets,
                k->epi_vec ? arena_printf(A,
                                          "tile inside %s, tensors %d-element aligned, rows up to %s: lets: %s; %d "
                                          "outputs a thread at a fixed column, rows %d apart; column reads once a thread; %s",
                                          sx_str(A, gpuir_extent(A, r, k->v.n_axes, k->v.nn)), k->epi_vec,
                                          sx_str(A, gpuir_extent(A, r, k->v.m_axes, k->v.nm)),
                                          *lets ? lets : "(none)", k->epi_vec, k->threads / (BN / k->epi_vec),
                                          epi_row_steps(A, &k->v))
                           : NULL);
}

gpu_kernel *gpuir_build(arena *A, const region *r, const pc_analysis *a, const sched_plan *p, const char *name,
                        diag_list *dl) {
  const char *at = arena_printf(A, "GPU IR[%s]", r->name);
  gpu_kernel *k = contraction_kernel(A, r, a, p, name, at, dl);
  if (!k) return NULL;
  /* the M, N and K axes as the statements' prose names them */
  const char *pm = gpuir_axes(A, r, k->v.m_axes, k->v.nm), *pn = gpuir_axes(A, r, k->v.n_axes, k->v.nn),
             *pk = gpuir_axes(A, r, k->v.k_axes, k->v.nk);
  sm80_prologue(k, A, r, p, pm, pn, pk);
  sm80_loops(k, A, p, pk);
  sm80_after_loops(k, A, r, p, pk);
  return k;  /* run_stages verifies it */
}

/* The sm80 contraction's statements as its renderer takes them (below,
 * kernel_fn): only the kinds it renders; loops (steady, then drain) at the
 * top level, not nested; a copy and its advance before the loops at an
 * absolute tile into its own stage (tile s < S - 1), inside them at tile
 * kt + S - 1, streamed in the steady loop and bounded in the drain; each
 * k-step group A's fragments, B's, then the MMAs on the same steps of
 * tile kt; waits that leave S - 2 groups in flight inside the loops and
 * none after them; the full-width epilogue pair before the other. */
static bool verify_sm80_render(const gpu_kernel *k, diag_list *dl) {
  static const bool RENDERS[GS__COUNT] = {
      [GS_TILE_COORD] = true, [GS_ALLOC_SHARED] = true, [GS_ACC_ZERO] = true, [GS_ADDR_SETUP] = true,
      [GS_FRAG_SETUP] = true, [GS_BARRIER] = true,      [GS_COMMIT] = true,   [GS_WAIT] = true,
      [GS_CP_ASYNC] = true,   [GS_ADVANCE] = true,      [GS_LOOP] = true,     [GS_END_LOOP] = true,
      [GS_LDMATRIX] = true,   [GS_MMA] = true,          [GS_STAGE_ACC] = true, [GS_EPILOGUE] = true,
      [GS_ST_GLOBAL] = true,
  };
  int S = k->plan.stages, nloops = 0, ks = k->plan.tile[2] / (k->mma_k ? k->mma_k : 16);
  /* the loops in order: the steady loop with fragments a tile ahead (the
   * widths >= ahead_vec), the steady loop (the other widths that stream),
   * the drain; {loop, min_vec, below_vec} */
  int loops[3][3], nwant = 0;
  if (k->ahead_vec) loops[nwant][0] = GLOOP_STEADY, loops[nwant][1] = k->ahead_vec, loops[nwant++][2] = 0;
  if (k->steady_min_vec && k->ahead_vec != k->steady_min_vec)
    loops[nwant][0] = GLOOP_STEADY, loops[nwant][1] = k->steady_min_vec, loops[nwant++][2] = k->ahead_vec;
  loops[nwant][0] = GLOOP_DRAIN, loops[nwant][1] = 0, loops[nwant++][2] = 0;
  gpu_loop loop = GLOOP_NONE;
  bool full_seen = false, in_ahead = false;
  int next_step = 0; /* the ahead loop: the next k step its MMAs take */
  const char *bad = NULL;
  int at = -1;
  if (k->ahead_vec && (k->ahead_vec < k->steady_min_vec || ks < 2 || k->mma_k != 16)) {
    bad = "fragments a tile ahead without the steady loop, two k steps a tile, or fp16/bf16 fragments";
    at = 0;
  }
  for (int i = 0; i < k->nst && !bad; i++) {
    const gpu_stmt *s = &k->st[i];
    at = i;
    bool walks = k->A.walk || k->B.walk;
    if (s->k < 0 || s->k >= GS__COUNT || !RENDERS[s->k]) bad = "a kind the sm80 contraction does not render";
    else if (s->min_vec && s->min_vec != k->steady_min_vec &&
             !(s->min_vec == k->ahead_vec && (s->ahead || s->k == GS_LOOP)))
      bad = "runs for widths other than a steady loop's";
    else if (s->ahead && (s->k == GS_WAIT || s->k == GS_BARRIER) && loop)
      bad = "a wait or barrier of the prologue of fragments a tile ahead inside a loop";
    else if (s->ahead && !loop) {
      /* the ahead loop's prologue: the first tile's wait, barrier and
       * step-0 fragments, for its widths, right before it */
      static const char *const PROLOGUE = "a prologue of fragments a tile ahead that is not the first tile's wait, "
                                          "barrier and step-0 fragments of A and B, right before the first loop";
      if (!k->ahead_vec || i + 4 >= k->nst) bad = PROLOGUE;
      else {
        const gpu_stmt *w = s, *b = s + 1, *fa = s + 2, *fb = s + 3, *l = s + 4;
        if (w->k != GS_WAIT || w->lo != S - 2 || b->k != GS_BARRIER || !b->ahead || fa->k != GS_LDMATRIX ||
            fa->side != GSIDE_A || fb->k != GS_LDMATRIX || fb->side != GSIDE_B || !fa->ahead || !fb->ahead || fa->lo ||
            fa->hi || fb->lo || fb->hi || fa->tile || fb->tile || w->min_vec != k->ahead_vec ||
            b->min_vec != k->ahead_vec || fa->min_vec != k->ahead_vec || fb->min_vec != k->ahead_vec ||
            l->k != GS_LOOP || nloops != 0)
          bad = PROLOGUE;
      }
      i += 3;
    } else if (s->k == GS_LOOP) {
      if (loop || nloops >= nwant || (int)s->loop != loops[nloops][0] || s->min_vec != loops[nloops][1] ||
          s->below_vec != loops[nloops][2])
        bad = "a loop out of place (the steady loop with fragments a tile ahead, the steady loop, for the widths that "
              "stream, then the drain)";
      else if (k->ahead_vec && nloops == 0 && (i < 4 || !k->st[i - 1].ahead))
        bad = "the loop with fragments a tile ahead without its prologue";
      in_ahead = k->ahead_vec && nloops == 0;
      next_step = 0;
      if (in_ahead) {
        const gpu_stmt *m = i + 1 < k->nst ? s + 1 : NULL;
        if (!m || m->k != GS_MMA || !m->ahead || m->lo || m->hi)
          bad = "the loop with fragments a tile ahead does not open with step 0's MMAs on them";
        i += 1, next_step = 1;
      }
      loop = s->loop, nloops++;
    } else if (s->k == GS_END_LOOP) {
      if (!loop) bad = "an EndLoop outside a loop";
      else if (in_ahead && next_step != ks) bad = "the loop with fragments a tile ahead leaves k steps without MMAs";
      loop = GLOOP_NONE, in_ahead = false;
    } else if (in_ahead && s->k == GS_LDMATRIX && s->side == GSIDE_A && s->lo == ks - 1 && !s->ahead) {
      /* the last step: its fragments, the wait for tile kt+1 and the
       * barrier, tile kt+1's step-0 fragments, then the last step's MMAs */
      static const char *const LAST = "the last k step of the loop with fragments a tile ahead is not its "
                                      "fragments, the wait and barrier, tile kt+1's step-0 fragments, then its MMAs";
      if (i + 6 >= k->nst) bad = LAST;
      else {
        const gpu_stmt *b = s + 1, *w = s + 2, *br = s + 3, *fa = s + 4, *fb = s + 5, *m = s + 6;
        if (s->hi != ks - 1 || s->tile || b->k != GS_LDMATRIX || b->side != GSIDE_B || b->ahead || b->lo != ks - 1 ||
            b->hi != ks - 1 || b->tile || w->k != GS_WAIT || w->lo != S - 2 || br->k != GS_BARRIER ||
            fa->k != GS_LDMATRIX || fa->side != GSIDE_A || fb->k != GS_LDMATRIX || fb->side != GSIDE_B ||
            !fa->ahead || !fb->ahead || fa->tile != 1 || fb->tile != 1 || fa->lo || fa->hi || fb->lo || fb->hi ||
            m->k != GS_MMA || m->ahead || m->lo != ks - 1 || m->hi != ks - 1 || next_step != ks - 1)
          bad = LAST;
      }
      next_step = ks;
      i += 6;
    } else if (s->k == GS_CP_ASYNC || s->k == GS_ADVANCE) {
      gpu_copy want = loop == GLOOP_STEADY ? GCOPY_STREAM : loop == GLOOP_DRAIN ? GCOPY_BOUNDED : GCOPY_TILE;
      if (s->copy != want) bad = "a copy or advance of the wrong kind for where it is";
      else if (loop ? s->tile != S - 1 : (s->tile < 0 || s->tile >= S - 1 || (s->k == GS_CP_ASYNC && s->stage != s->tile)))
        bad = "a copy or advance of a tile the ring does not hold there";
      else if (s->k == GS_CP_ASYNC && s->side != GSIDE_A && s->side != GSIDE_B) bad = "a copy of no operand";
      else if (s->k == GS_ADVANCE &&
               (s->copy == GCOPY_BOUNDED || !s->min_vec ||
                (s->side == GSIDE_KWALK ? !walks
                 : s->side == GSIDE_A   ? k->A.walk
                 : s->side == GSIDE_B   ? k->B.walk
                                        : true)))
        bad = "an advance of state no streamed operand keeps";
    } else if (s->k == GS_ADDR_SETUP) {
      if (loop || !s->min_vec || (s->side == GSIDE_KWALK && !walks) || s->side == GSIDE_NONE)
        bad = "an operand's setup inside a loop, for no width that streams, or of no operand";
    } else if (s->k == GS_FRAG_SETUP || s->k == GS_ALLOC_SHARED) {
      if (loop || (s->side != GSIDE_A && s->side != GSIDE_B)) bad = "a setup inside a loop or of no operand";
    } else if (s->k == GS_WAIT) {
      if (s->lo != (loop ? S - 2 : 0)) bad = "a wait that leaves the wrong number of groups in flight";
    } else if (s->k == GS_LDMATRIX && s->side == GSIDE_A) {
      const gpu_stmt *b = i + 2 < k->nst ? &k->st[i + 1] : NULL, *m = b ? &k->st[i + 2] : NULL;
      if (!loop || !b || b->k != GS_LDMATRIX || b->side != GSIDE_B || m->k != GS_MMA || b->lo != s->lo ||
          m->lo != s->lo || b->hi != s->hi || m->hi != s->hi || s->lo < 0 || s->hi < s->lo || s->hi >= ks ||
          s->tile != 0 || b->tile != 0 || s->ahead || b->ahead || m->ahead || (in_ahead && s->lo != next_step))
        bad = "a k-step group that is not A's fragments, B's, then their MMAs, on steps of tile kt";
      next_step = s->hi + 1;
      i += 2;
    } else if (s->k == GS_LDMATRIX || s->k == GS_MMA) {
      bad = "fragments or MMAs outside a k-step group";
    } else if (s->k == GS_EPILOGUE) {
      if (loop || (s->full && full_seen) || (!s->full && full_seen && k->st[i - 1].k != GS_ST_GLOBAL))
        bad = "an epilogue out of place";
      full_seen |= s->full;
    } else if (s->k == GS_ST_GLOBAL) {
      bool after_epi = i > 0 && k->st[i - 1].k == GS_EPILOGUE && k->st[i - 1].full == s->full;
      if (loop || !(after_epi || (k->plan.split_k > 1 && !s->full))) bad = "a store without its epilogue";
    }
  }
  if (!bad && loop) bad = "a loop left open";
  if (bad) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "statement %d (%s %s): %s", at, at >= 0 ? gpuir_stmt_name(k->st[at].k) : "",
                at >= 0 && k->st[at].what ? k->st[at].what : "", bad);
    return false;
  }
  return true;
}

/* The range of a signature dim: the entry points reject negative dims
 * (the upper bound only keeps sx_bounds from overflowing). */
static bool dims_nonneg(void *ctx, sx_atom_kind kind, const char *name, int64_t *lo, int64_t *hi) {
  (void)ctx, (void)name;
  if (kind != SXA_PARAM) return false;
  *lo = 0, *hi = INT64_MAX / 4;
  return true;
}

/* The GPU IR's advance of one operand: its k-step, when it has one. */
static void kstep_fn(opgen *g, const gpu_operand *o, const char *role, const char *fname) {
  if (!o->kstep) {
    sb_printf(g->s, "  static constexpr bool %s_ADVANCE = false;  // chunk addresses recomputed every k-tile\n", role);
    return;
  }
  sb_printf(g->s, "  // advance of %s: its chunk addresses move by this many elements per unit of k\n", role);
  sb_printf(g->s, "  static constexpr bool %s_ADVANCE = true;\n", role);
  sb_printf(g->s, "  static __device__ __forceinline__ int64_t %s(const Params *p) { return %s; }\n", fname,
            sxc(g->A, o->kstep, false));
}

/* How a K part's term is written: cast to uint32_t when the K part is kept
 * in 32 bits (gpu_operand.kpart32) and the term is not a constant. */
static const char *kterm(opgen *g, const gpu_operand *o, const sx *x) {
  int64_t c;
  const char *e = sxc(g->A, x, false);
  return o->kpart32 && !sx_is_int(x, &c) ? arena_printf(g->A, "(uint32_t)%s", e) : e;
}

/* The K counter of the walking operands (gpu_operand.walk): one a thread,
 * shared by both operands (their chunks run along the same K axes, and a
 * thread keeps one K column of each), stepped by BK with carries.  It also
 * carries each walking operand's K part: a step adds BK times the inner
 * axis's coefficient, a carry from axis j+1 into axis j adds the delta
 * coef_j - extent_{j+1} * coef_{j+1} (a table computed once). */
static void kwalk_fn(opgen *g, const gpu_kernel *k, int BK) {
  const region *r = g->r;
  strbuf *s = g->s;
  const int *kax = k->v.k_axes;
  int nk = k->v.nk;
  if (!k->A.walk && !k->B.walk) {
    sb_puts(s, "  struct KWalk {};  // no operand walks its K axes\n");
    return;
  }
  const gpu_operand *ops[2] = {&k->A, &k->B};
  /* (operand_walk allows at most GPUIR_WALK_AXES K axes) */
  const char *pre[2] = {"a", "b"};
  /* the dispatcher keeps the flattened K below 2^31: 32-bit counters */
  strbuf kc = {0};
  sb_printf(&kc, "the K counter of the walking operands: (");
  for (int j = 0; j < nk; j++) sb_printf(&kc, "%s%s", j ? ", " : "", cmt(g->A, r->it[kax[j]].name));
  sb_printf(&kc, ") at the thread's K column, += %d with carries each tile, and their K parts", BK);
  cmt_wrap(s, "  // ", sb_str(&kc));
  sb_free(&kc);
  sb_printf(s, "  struct KWalk {\n    int k[%d];\n", nk);
  /* the deltas; the constant ones are written into k_next */
  const sx *d[2][GPUIR_WALK_AXES] = {{0}};
  bool stored[2] = {false, false};
  for (int o = 0; o < 2; o++) {
    if (!ops[o]->walk) continue;
    /* a 32-bit K part (gpu_operand.kpart32) steps in uint32_t: it wraps
     * only past the tiles it addresses (the dispatcher proved their span) */
    sb_printf(s, "    %s %s_off;\n", ops[o]->kpart32 ? "uint32_t" : "int64_t", pre[o]);
    for (int j = 0; j + 1 < nk; j++) {
      d[o][j] = sx_sub(g->A, ops[o]->kcoef[j], sx_mul(g->A, r->it[kax[j + 1]].size, ops[o]->kcoef[j + 1]));
      int64_t c;
      stored[o] |= !sx_is_int(d[o][j], &c);
    }
    if (stored[o])
      sb_printf(s, "    %s %s_d[%d];  // %s_off's step when axis j takes a carry\n", ops[o]->kpart32 ? "uint32_t" : "int64_t",
                pre[o], nk - 1, pre[o]);
  }
  sb_puts(s, "  };\n");
  sb_puts(s, "  static __device__ __forceinline__ void k_start([[maybe_unused]] const Params *p, int64_t ki, KWalk &w) {\n");
  decompose(g, "ki", kax, nk, "    ");
  for (int j = 0; j < nk; j++) sb_printf(s, "    w.k[%d] = (int)i_%s;\n", j, cid(g->A, r->it[kax[j]].name));
  for (int o = 0; o < 2; o++) {
    const gpu_operand *op = ops[o];
    if (!op->walk) continue;
    sb_printf(s, "    w.%s_off = %s;\n", pre[o], kterm(g, op, op->koff));
    for (int j = 0; j + 1 < nk && stored[o]; j++) sb_printf(s, "    w.%s_d[%d] = %s;\n", pre[o], j, kterm(g, op, d[o][j]));
  }
  sb_puts(s, "  }\n");
  /* the innermost axis may wrap several times, each outer one once per
   * wrap of the axis inside it */
  sb_puts(s, "  static __device__ __forceinline__ void k_next([[maybe_unused]] const Params *p, KWalk &w) {\n");
  sb_printf(s, "    w.k[%d] += %d;\n", nk - 1, BK);
  for (int o = 0; o < 2; o++)
    if (ops[o]->walk)
      sb_printf(s, "    w.%s_off += %s;\n", pre[o], kterm(g, ops[o], sx_scale(g->A, ops[o]->kcoef[nk - 1], BK)));
  if (nk > 1) {
    const char *e = sxc(g->A, r->it[kax[nk - 1]].size, false);
    /* extents of K axes are at most K < 2^31: 32-bit compares */
    int64_t ec;
    if (!sx_is_int(r->it[kax[nk - 1]].size, &ec)) e = arena_printf(g->A, "(int)%s", e);
    sb_printf(s, "    while (w.k[%d] >= %s) {\n      w.k[%d] -= %s;\n", nk - 1, e, nk - 1, e);
    const char *ind = "      ";
    for (int j = nk - 2; j >= 0; j--) {
      for (int o = 0; o < 2; o++) {
        int64_t c;
        if (!ops[o]->walk || (sx_is_int(d[o][j], &c) && c == 0)) continue;
        if (stored[o]) sb_printf(s, "%sw.%s_off += w.%s_d[%d];\n", ind, pre[o], pre[o], j);
        else sb_printf(s, "%sw.%s_off += %s;\n", ind, pre[o], kterm(g, ops[o], d[o][j]));
      }
      if (j == 0) {
        sb_printf(s, "%s++w.k[0];\n", ind);
        break;
      }
      const char *ej = sxc(g->A, r->it[kax[j]].size, false);
      if (!sx_is_int(r->it[kax[j]].size, &ec)) ej = arena_printf(g->A, "(int)%s", ej);
      sb_printf(s, "%sif (++w.k[%d] >= %s) {\n%s  w.k[%d] = 0;\n", ind, j, ej, ind, j);
      ind = arena_printf(g->A, "%s  ", ind);
    }
    for (int j = 1; j < nk - 1; j++) {
      ind = arena_printf(g->A, "%.*s", (int)strlen(ind) - 2, ind);
      sb_printf(s, "%s}\n", ind);
    }
    sb_puts(s, "    }\n");
  }
  sb_puts(s, "  }\n");
}

/* A walking operand's pad guard lo <= x < hi on the value x, without
 * short-circuit branches (after " & " when `and`). */
static void guard_test_c(opgen *g, strbuf *s, const ib_guard *gd, const char *x, bool and) {
  int64_t lo, hlo, hhi;
  if (and) sb_puts(s, " & ");
  /* 0 <= x < hi with hi >= 0 is one unsigned compare: a negative x wraps past hi */
  if (gd->hi && sx_is_int(gd->lo, &lo) && lo == 0 && sx_bounds(gd->hi, dims_nonneg, NULL, &hlo, &hhi) && hlo >= 0) {
    sb_printf(s, "((uint64_t)%s < (uint64_t)(%s))", x, sxc(g->A, gd->hi, false));
    return;
  }
  sb_printf(s, "(%s <= %s)", sxc(g->A, gd->lo, false), x);
  if (gd->hi) sb_printf(s, " & (%s < %s)", x, sxc(g->A, gd->hi, false));
}

/* The GPU IR's walk of one operand: the rest of its offset and pad guards for
 * a chunk row, the K part at the counter, and the guard test. */
static void walk_fn(opgen *g, const gpu_operand *o, const char *role, const char *pre, const int *rax, int nr) {
  const gpu_view *v = g->v;
  const region *r = g->r;
  strbuf *s = g->s;
  if (!o->walk) {
    sb_printf(s, "  static constexpr bool %s_WALK = false;\n  static constexpr int %s_NG = 0;\n", role, role);
    return;
  }
  const region_memref *m = &r->in[o->input];
  sb_printf(s, "  // walk of %s: offset %s + %s", role, cmt(g->A, sx_str(g->A, o->moff)), cmt(g->A, sx_str(g->A, o->koff)));
  for (int i = 0; i < o->ng; i++) sb_printf(s, "%s%s", i ? ", " : "; pad guards on ", cmt(g->A, sx_str(g->A, o->guards[i].e)));
  sb_printf(s, "\n  static constexpr bool %s_WALK = true;\n  static constexpr int %s_NG = %d;\n", role, role, o->ng);
  /* the guard words a chunk keeps: each guard's rest (64 bits), its two
   * bounds on the K part clamped into int32 (gpu_operand.g32), or one mask
   * over the K parts (gpu_operand.gmask) */
  const char *gw = o->gmask ? "uint32_t" : o->g32 ? "int" : "int64_t";
  int ngw = o->gmask ? 1 : o->g32 ? 2 * o->ng : o->ng;
  if (o->gmask)
    sb_printf(s, "  // guards as a mask: bit t of a chunk's is set when every guard passes at the t-th tuple of K parts\n");
  else if (o->g32)
    sb_puts(s, "  // guards in 32 bits: a chunk keeps each guard's bounds on its K part, clamped into int32\n");
  sb_printf(s, "  using %s_gw = %s;\n  static constexpr int %s_NGW = %d;\n", pre, gw, role, ngw);
  int ng1 = o->ng ? o->ng : 1, ngw1 = ngw ? ngw : 1;
  sb_printf(s, "  static __device__ __forceinline__ const T *%s_tensor(const Params *p) { return static_cast<const T *>(p->%s); }\n",
            pre, lc(g->A, m->name));
  /* the rest: a chunk row's part */
  sb_printf(s,
            "  static __device__ __forceinline__ int64_t %s_rest([[maybe_unused]] const Params *p, int64_t ri, "
            "[[maybe_unused]] int64_t bi,\n"
            "                                                 [[maybe_unused]] %s (&g)[%d]) {\n",
            pre, gw, ngw1);
  decompose(g, "ri", rax, nr, "    ");
  decompose(g, "bi", v->b_axes, v->nb, "    ");
  if (o->gmask) {
    /* every tuple of K parts, in the mask's bit order */
    for (int i = 0; i < o->ng; i++) sb_printf(s, "    const int64_t r%d = %s;\n", i, sxc(g->A, o->gm[i], false));
    sb_printf(s, "    uint32_t m = 0;\n#pragma unroll\n    for (int t = 0; t < %d; ++t) {\n", o->gmask);
    for (int i = 0; i < o->ng; i++) {
      const char *j = o->gkstride[i] == 1 ? "t" : arena_printf(g->A, "t / %d", o->gkstride[i]);
      if (o->gkstride[i] * o->gkrange[i] < o->gmask) j = arena_printf(g->A, "%s %% %d", j, o->gkrange[i]);
      if (o->gkmin[i]) j = arena_printf(g->A, "%lld + %s", (long long)o->gkmin[i], j);
      sb_printf(s, "      const int64_t x%d = r%d + (%s);\n", i, i, j);
    }
    sb_puts(s, "      m |= (uint32_t)(");
    for (int i = 0; i < o->ng; i++) guard_test_c(g, s, &o->guards[i], arena_printf(g->A, "x%d", i), i > 0);
    sb_puts(s, ") << t;\n    }\n    g[0] = m;\n");
  }
  for (int i = 0; i < o->ng && !o->gmask; i++) {
    if (!o->g32) {
      sb_printf(s, "    g[%d] = %s;\n", i, sxc(g->A, o->gm[i], false));
      continue;
    }
    const ib_guard *gd = &o->guards[i];
    sb_printf(s, "    g[%d] = dlc::clamp_i32(%s);\n", 2 * i, sxc(g->A, sx_sub(g->A, gd->lo, o->gm[i]), false));
    if (gd->hi) sb_printf(s, "    g[%d] = dlc::clamp_i32(%s);\n", 2 * i + 1, sxc(g->A, sx_sub(g->A, gd->hi, o->gm[i]), false));
    else sb_printf(s, "    g[%d] = INT32_MAX;\n", 2 * i + 1);
  }
  sb_printf(s, "    return %s;\n  }\n", sxc(g->A, o->moff, false));
  /* the K part of the offset and guards */
  sb_printf(s,
            "  static __device__ __forceinline__ %s %s_kpart([[maybe_unused]] const Params *p, const KWalk &w,\n"
            "                                                  [[maybe_unused]] %s (&g)[%d]) {\n",
            o->kpart32 ? "int" : "int64_t", pre, gw, ng1);
  for (int j = 0; j < v->nk; j++)
    sb_printf(s, "    [[maybe_unused]] const int64_t i_%s = w.k[%d];\n", cid(g->A, r->it[v->k_axes[j]].name), j);
  if (o->gmask) {
    /* the bit of the tile's tuple of K parts */
    const sx *bit = sx_int(g->A, 0);
    for (int i = 0; i < o->ng; i++)
      bit = sx_add(g->A, bit, sx_scale(g->A, sx_sub(g->A, o->gk[i], sx_int(g->A, o->gkmin[i])), o->gkstride[i]));
    sb_printf(s, "    g[0] = 1u << (int)%s;\n", sxc(g->A, bit, false));
  }
  for (int i = 0; i < o->ng && !o->gmask; i++)
    sb_printf(s, o->g32 ? "    g[%d] = (int)%s;\n" : "    g[%d] = %s;\n", i, sxc(g->A, o->gk[i], false));
  sb_printf(s, "    return %sw.%s_off;  // %s%s\n  }\n", o->kpart32 ? "(int)" : "", pre, cmt(g->A, sx_str(g->A, o->koff)),
            o->kpart32 ? arena_printf(g->A, " (32 bits: the dispatcher checks (%s) * sizeof(T))", cmt(g->A, sx_str(g->A, o->kspan)))
                       : "");
  /* the guards on the two parts, without short-circuit branches */
  sb_printf(s,
            "  static __device__ __forceinline__ bool %s_inside([[maybe_unused]] const Params *p, [[maybe_unused]] const "
            "%s (&gm)[%d],\n"
            "                                                [[maybe_unused]] const %s (&gk)[%d]) {\n",
            pre, gw, ngw1, gw, ng1);
  if (!o->ng) {
    sb_puts(s, "    return true;\n  }\n");
    return;
  }
  sb_puts(s, "    return ");
  if (o->gmask) sb_puts(s, "(gm[0] & gk[0]) != 0u");
  for (int i = 0; i < o->ng && o->g32 && !o->gmask; i++)
    sb_printf(s, "%s(gm[%d] <= gk[%d]) & (gk[%d] < gm[%d])", i ? " & " : "", 2 * i, i, i, 2 * i + 1);
  for (int i = 0; i < o->ng && !o->g32 && !o->gmask; i++)
    guard_test_c(g, s, &o->guards[i], arena_printf(g->A, "(gm[%d] + gk[%d])", i, i), i > 0);
  sb_puts(s, ";\n  }\n");
}

/* the k-tile of a copy or advance: kt + tile in a loop, the slice's first + tile before one */
static const char *r_tile(sm80_render *r, const gpu_stmt *st) {
  return arena_printf(r->A, "c.%s + %d", r->loop ? "kt" : "kt0", st->tile);
}

/* the ring stage of tile kt + tile in a loop, or its stage before one */
static const char *r_stage(sm80_render *r, const gpu_stmt *st) {
  return r->loop ? arena_printf(r->A, "c.stage(%d)", st->tile) : arena_printf(r->A, "%d", st->stage);
}

static void r_addr_setup(sm80_render *r, const gpu_stmt *st) {
  r_line(r, st, st->side == GSIDE_KWALK ? "c.k_start(p);" : arena_printf(r->A, "c.template setup<%s>(p);", r_side(st)));
}

static void r_frag_setup(sm80_render *r, const gpu_stmt *st) {
  r_line(r, st, arena_printf(r->A, "c.template frag_setup<%s>();", r_side(st)));
}

static void r_cp_async(sm80_render *r, const gpu_stmt *st) {
  const char *code = st->copy == GCOPY_STREAM
                         ? arena_printf(r->A, "c.template copy_stream<%s>(p, %s);", r_side(st), r_stage(r, st))
                         : arena_printf(r->A, "c.template copy_%s<%s>(p, %s, %s);",
                                        st->copy == GCOPY_TILE ? "tile" : "bounded", r_side(st), r_tile(r, st),
                                        r_stage(r, st));
  r_line(r, st, code);
}

static void r_advance(sm80_render *r, const gpu_stmt *st) {
  bool tile = st->copy == GCOPY_TILE;
  const char *code =
      st->side == GSIDE_KWALK
          ? (tile ? arena_printf(r->A, "c.k_next_full(p, %s);", r_tile(r, st)) : "c.k_next(p);")
          : (tile ? arena_printf(r->A, "c.template advance_full<%s>(%s);", r_side(st), r_tile(r, st))
                  : arena_printf(r->A, "c.template advance<%s>();", r_side(st)));
  r_line(r, st, code);
}

static void r_loop(sm80_render *r, const gpu_stmt *st) {
  if (st->loop == GLOOP_COLUMNS) {
    sb_printf(r->s, "#pragma unroll 1\n%sfor (int i = c.first(); i < C::COLS; i += c.step()) {  // Loop %s\n", r->ind,
              r_text(r, st->what));
  } else if (st->loop == GLOOP_STEADY) {
    bool ahead = r->k->ahead_vec && st->min_vec == r->k->ahead_vec && !st->below_vec;
    sb_printf(r->s, "%sif constexpr (VEC >= %d%s) {  // Loop %s: %s\n", r->ind, st->min_vec,
              st->below_vec ? arena_printf(r->A, " && VEC < %d", st->below_vec) : "", r_text(r, st->what),
              ahead ? "the widths that stream, k step 0's fragments a tile ahead"
              : st->below_vec ? "the other widths that stream"
                              : "the widths that stream");
    r_indent(r, 1);
    sb_printf(r->s, "#pragma unroll 1\n%sfor (; c.kt + %d < c.KTF; ++c.kt) {  // steady: every tile it prefetches is full\n",
              r->ind, r->S - 1);
  } else {
    sb_printf(r->s, "%sfor (; c.kt < c.KT; ++c.kt) {  // Loop %s: the tiles left\n", r->ind, r_text(r, st->what));
  }
  r_indent(r, 1);
  r->loop = st->loop, r->loop_vec = st->min_vec;
}

static void r_end_loop(sm80_render *r, const gpu_stmt *st) {
  if (!r->reduce) r_line(r, st, "c.next_stage();");
  r_indent(r, -1);
  sb_printf(r->s, "%s}\n", r->ind);
  if (r->loop == GLOOP_STEADY) {
    r_indent(r, -1);
    sb_printf(r->s, "%s}\n", r->ind);
  }
  r->loop = GLOOP_NONE, r->loop_vec = 0;
}

/* A's fragments open the k-step group, B's follow, the MMAs close it; the
 * set a tile ahead (the CTA's ahead_a, ahead_b) opens none, and B's closes
 * the loop's prologue. */
static void r_ldmatrix(sm80_render *r, const gpu_stmt *st) {
  if (st->ahead) {
    r_line(r, st, arena_printf(r->A, "c.frags(c.ahead_%c, %s, %d);", st->side == GSIDE_B ? 'b' : 'a', r_stage(r, st),
                               st->lo));
    if (r->ahead_open && st->side == GSIDE_B) {
      for (int d = 0; d < 2; d++) {
        r_indent(r, -1);
        sb_printf(r->s, "%s}\n", r->ind);
      }
      r->ahead_open = false, r->loop_vec = 0;
    }
    return;
  }
  if (st->side == GSIDE_A) {
    if (st->lo == st->hi) sb_printf(r->s, "%s{\n%s  constexpr int ks = %d;\n", r->ind, r->ind, st->lo);
    else sb_printf(r->s, "#pragma unroll\n%sfor (int ks = %d; ks <= %d; ++ks) {\n", r->ind, st->lo, st->hi);
    r_indent(r, 1);
    sb_printf(r->s, "%stypename C::FragA af;\n", r->ind);
    r_line(r, st, arena_printf(r->A, "c.frags(af, %s, ks);", r_stage(r, st)));
  } else {
    sb_printf(r->s, "%stypename C::FragB bf;\n", r->ind);
    r_line(r, st, arena_printf(r->A, "c.frags(bf, %s, ks);", r_stage(r, st)));
  }
  r->group = st->side == GSIDE_A ? 1 : 2;
}

static void r_mma(sm80_render *r, const gpu_stmt *st) {
  if (st->ahead) {
    r_line(r, st, "c.mma(c.ahead_a, c.ahead_b);");
    return;
  }
  r_line(r, st, "c.mma(af, bf);");
  r_indent(r, -1);
  sb_printf(r->s, "%s}\n", r->ind);
  r->group = 0;
}

static void r_stage_acc(sm80_render *r, const gpu_stmt *st) { r_line(r, st, "float *stage = c.stage_acc();"); }

static void r_epilogue(sm80_render *r, const gpu_stmt *st) { r_epilogue_pair(r, st, "c.on"); }

/* split-K's second kernel: a column of every slice's partial, summed */
static void r_ld_global(sm80_render *r, const gpu_stmt *st) {
  sb_printf(r->s, "%sfloat a4[4];\n", r->ind);
  r_line(r, st, "if (!c.sum(i, a4)) break;");
}

const sm80_render_fn SM80_RENDER[GS__COUNT] = {
    [GS_TILE_COORD] = r_tile_coord, [GS_ALLOC_SHARED] = r_alloc_shared, [GS_ACC_ZERO] = r_acc_zero,
    [GS_ADDR_SETUP] = r_addr_setup, [GS_FRAG_SETUP] = r_frag_setup,     [GS_BARRIER] = r_barrier,
    [GS_COMMIT] = r_commit,         [GS_WAIT] = r_wait,                 [GS_CP_ASYNC] = r_cp_async,
    [GS_ADVANCE] = r_advance,       [GS_LOOP] = r_loop,                 [GS_END_LOOP] = r_end_loop,
    [GS_LDMATRIX] = r_ldmatrix,     [GS_MMA] = r_mma,                   [GS_STAGE_ACC] = r_stage_acc,
    [GS_EPILOGUE] = r_epilogue,     [GS_ST_GLOBAL] = r_st_global,       [GS_LD_GLOBAL] = r_ld_global,
};

static void kernel_fn(opgen *g, const gpu_kernel *k, const char *sname) {
  strbuf *s = g->s;
  render_kernel(g->A, g->log, s, k, sname, "sm80_contraction.cuh", "Sm80Cta", SM80_RENDER);
  if (k->reduce) splitk_reduce_fn(g, k->reduce, sname);
}

/* The plan struct's constants: the tile, the swizzles, the raster, split-K
 * (with its workspace's accessors), the steady loop's widths and the
 * full-width epilogue's. */
static void plan_consts(strbuf *s, const gpu_kernel *k) {
  const sched_plan *p = &k->plan;
  sb_printf(s, "  static constexpr int BM = %d, BN = %d, BK = %d, STAGES = %d, WARPS_M = %d, WARPS_N = %d;\n", p->tile[0],
            p->tile[1], p->tile[2], p->stages, p->warps_m, p->warps_n);
  sb_printf(s, "  static constexpr int SWZ_A = %d, SWZ_B = %d;  // 16-byte chunks XORed in a shared row (GPU IR)\n",
            k->tiles[0].swz, k->tiles[1].swz);
  sb_printf(s, "  static constexpr int RASTER_GROUP = %d;\n", p->raster_group);
  if (k->reduce)
    sb_printf(s, "  // split-K in at most %d slices (the GPU IR's pair): slice blockIdx.y stores its fp32 partial tile in the\n"
                 "  // workspace, then reduce_kernel sums the slices in order and applies the epilogue\n"
                 "  static constexpr bool SPLIT_K = true;\n"
                 "  static constexpr int SPLIT_MAX = %d;  // the most slices a call stores\n"
                 "  static __device__ __forceinline__ float *split_ws(const Params *p) { return static_cast<float *>(p->dlc_split_ws); }\n"
                 "  static __device__ __forceinline__ int split_ktp(const Params *p) { return (int)p->dlc_split_ktp; }\n"
                 "  static __device__ __forceinline__ int split_n(const Params *p) { return (int)p->dlc_split_n; }\n",
              p->split_k, p->split_k);
  else
    sb_puts(s, "  static constexpr bool SPLIT_K = false;\n");
  sb_printf(s, "  static constexpr int STEADY_MIN_VEC = %d, EPI_VEC = %d;\n", k->steady_min_vec, k->epi_vec);
}

/* What the Op of a contraction kernel holds from its region and dtype: the
 * groups' extents, the operands' chunk functions, steps and walks, and the
 * epilogues (ev: the full-width one's width, 0: none). */
static void region_part(opgen *g, const gpu_kernel *k, int ev) {
  group_extents(g, k, true);
  chunk_fn(g, &k->A, "a_chunk", k->v.m_axes, k->v.nm, k->v.k_axes, k->v.nk, "operand A");
  chunk_fn(g, &k->B, "b_chunk", k->v.n_axes, k->v.nn, k->v.k_axes, k->v.nk, "operand B");
  kstep_fn(g, &k->A, "A", "a_kstep");
  kstep_fn(g, &k->B, "B", "b_kstep");
  kwalk_fn(g, k, k->plan.tile[2]);
  walk_fn(g, &k->A, "A", "a", k->v.m_axes, k->v.nm);
  walk_fn(g, &k->B, "B", "b", k->v.n_axes, k->v.nn);
  epilogue_fn(g, "");
  if (ev) epilogue_full_fn(g, ev, "BN");
}

static void plan_comment(arena *A, strbuf *s, const gpu_kernel *k) {
  const sched_plan *p = &k->plan;
  sb_printf(s, "// plan (%s): tile %dx%dx%d, %d stages, warps %dx%d (warp tile %dx%d), vec %d, %s%s\n",
            p->pinned ? "pinned in the manifest" : "searched", p->tile[0], p->tile[1], p->tile[2], p->stages, p->warps_m,
            p->warps_n, p->tile[0] / p->warps_m, p->tile[1] / p->warps_n, p->vec, algo_name(k->algo),
            k->reduce ? arena_printf(A, ", split-K %d (then splitk_reduce)", p->split_k) : "");
}

/* The plan constants the shared template names (its full-width epilogue's
 * test reads BN), and those the template reads through the Op. */
#define SM80_PLAN_NAMES                                                                                       \
  "Plan::BM, Plan::BN, Plan::BK, Plan::STAGES, Plan::WARPS_M, Plan::WARPS_N, Plan::SWZ_A, Plan::SWZ_B,\n" \
  "      Plan::RASTER_GROUP, Plan::SPLIT_K, Plan::STEADY_MIN_VEC, Plan::EPI_VEC"

/* The Op as two parts (op_split): the shared template, then the plan's
 * struct with its kernel (and split-K's reduce_kernel), whose Self is the
 * shared template over the plan. */
static void contraction_split(emit_ctx *c, const op_split *sp, const emit_op *eo, const emit_instance *in) {
  arena *A = c->A;
  const gpu_kernel *k = in->k;
  strbuf *S = sp->shared, *P = sp->plan;
  opgen g = {A, &k->v, k->r, S, k->T, k->math_ieee, c->log, true};
  const char *out_t = k->v.out_dt == k->T ? "T_" : ctype(k->v.out_dt);
  split_shared_open(
      sp,
      "// The plan P_<T_> (a struct below) gives the tile (BM x BN x BK), the ring's STAGES, the warps\n"
      "// (WARPS_M x WARPS_N), the shared rows' swizzles (SWZ_A, SWZ_B: 16-byte chunks XORed), the CTA\n"
      "// order on blockIdx.x (RASTER_GROUP M tiles a group, M fastest within it; 1: N fastest), SPLIT_K,\n"
      "// the chunk widths whose kernels stream both operands in the GPU IR's steady loop (>= STEADY_MIN_VEC;\n"
      "// 0: none), the full-width epilogue's outputs a 16-byte store (EPI_VEC; 0: none) and kernel<VEC>\n",
      "  using " SM80_PLAN_NAMES ";\n", out_t, eo->op->name);
  sb_printf(S, "  static constexpr bool A_K_CONTIG = %s, B_K_CONTIG = %s;\n", k->A.k_contig ? "true" : "false",
            k->B.k_contig ? "true" : "false");
  sb_printf(S, "  static constexpr int MMA_K = %d;  // %s (GPU IR)\n", k->mma_k,
            k->mma_k == 8 ? "mma.sync m16n8k8 in tf32 on fp32 operands" : "mma.sync m16n8k16");
  int ev = k->epi_vec ? k->epi_vec : sp->epi_vec;
  region_part(&g, k, ev);
  sb_puts(S, "};\n\n");
  plan_comment(A, P, k);
  sb_printf(P, "template <class T_>\nstruct %s {\n  using Params = dlc__p_%s;\n", sp->plan_name, eo->op->name);
  plan_consts(P, k);
  g.s = P;
  kernel_fn(&g, k, split_self(A, sp));
  split_plan_close(A, sp);
}

static void sm80_dump(cJSON *g, const gpu_kernel *k) { dump_contraction(g, k, false); }

/* ---- the pipeline's part ----------------------------------------------------------------- */

int skel_reduce_after_contraction(const region *r) {
  for (int l = r->acc_let + 1; r->acc_let >= 0 && l < r->nlets; l++)
    if (r->lets[l].e->k == RX_REDUCE) return l;
  return -1;
}

/* one region, one contraction with a pointwise epilogue */
static bool sm80_fits(const region_set *rs, const pc_report *pc) {
  return rs->n == 1 && rs->r[0].acc_let >= 0 && skel_reduce_after_contraction(&rs->r[0]) < 0;
}

static bool sm80_verify_plan(const region_set *rs, const pc_report *pc, const sched_plan *p,
                             const arch_info *const *archs, int na, const char *at, diag_list *dl) {
  bool ok = plan_fits_archs(p, ALGO_IMPLICIT_GEMM, archs, na, dl);
  for (int i = 0; i < na; i++) ok &= plan_validate(p, &rs->r[0], &pc->a[0], archs[i], dl, at);
  return ok;
}

/* the kernel, and split-K's second one (<name>_r, algo_choice
 * splitk_reduce) from it when the plan splits */
static gpu_kernel *sm80_build(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                              const char *name, diag_list *dl) {
  gpu_kernel *k = gpuir_build(A, &rs->r[0], &pc->a[0], p, name, dl);
  if (k && p->split_k > 1 && !(k->reduce = gpuir_build_splitk_reduce(A, k, arena_printf(A, "%s_r", name), dl)))
    return NULL;
  return k;
}

/* ---- the skeleton's table ---------------------------------------------------------- */

static bool sm80_verify(const gpu_kernel *k, diag_list *dl) {
  bool ok = verify_stage_reuse(k, dl);
  ok &= verify_epilogue_width(k, k->plan.tile[1], k->v.out_dt, k->threads, dl);
  ok &= verify_sm80_render(k, dl);
  ok &= gpuir_verify_stores(k, false, dl);
  return ok;
}

const skel_ops skel_sm80_contraction = {
    .algo = ALGO_IMPLICIT_GEMM, .shape = SKEL_CONTRACTION, .arch = ARCH_SM80, .only = false,
    .fits = sm80_fits,          .verify_plan = sm80_verify_plan, .build = sm80_build,
    .verify = sm80_verify,      .render_split = contraction_split, .dump = sm80_dump,
};
