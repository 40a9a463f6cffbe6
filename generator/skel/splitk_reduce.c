/* The split-K reduce (algo_choice splitk_reduce): a split-K plan's second
 * kernel, on the first's Op (templates/sm80_contraction.cuh,
 * Sm80SplitReduce): it sums the slices' fp32 partials from the workspace in
 * slice order, then runs the epilogue.  Here are its GPU IR builder (from
 * the first kernel), its check and its renderer (reduce_kernel, through the
 * sm80 contraction's statement table). */
#include "emit_int.h"
#include "gpuir_int.h"
#include "skel.h"

gpu_kernel *gpuir_build_splitk_reduce(arena *A, const gpu_kernel *part, const char *name, diag_list *dl) {
  const region *r = part->r;
  const char *at = arena_printf(A, "GPU IR[%s]", r->name);
  if (part->plan.split_k <= 1 || skel_shape_of(part) != SKEL_CONTRACTION) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "kernel %s is not the first kernel of a split-K plan", part->name);
    return NULL;
  }
  gpu_kernel *k = ARENA_NEW(A, gpu_kernel);
  *k = *part;
  k->name = name;
  k->algo = ALGO_SPLITK_REDUCE;
  k->reduce = NULL;
  k->next = NULL;
  k->smem = 0;
  k->ntiles = 0;
  k->nvec = 1;           /* reads no operand: one kernel */
  k->steady_min_vec = 0;
  k->kpart32_fallback = 0;
  k->A.kpart32 = k->B.kpart32 = false;
  k->epi_vec = 0;        /* the bounds-checked epilogue */
  k->nst = k->cap_st = 0;
  k->st = NULL;
  int BM = k->plan.tile[0], BN = k->plan.tile[1];
  int nt = 32 * k->plan.warps_m * k->plan.warps_n;
  /* one float4 column of the tile a thread: the tile's BM x BN / 4 columns
   * over split_parts CTAs of the threads the first kernel has */
  k->split_parts = (BM * BN / 4 + nt - 1) / nt;
  const char *lets = "";
  for (int l = 0; l < r->nlets; l++)
    if (r->lets[l].post_reduce) lets = arena_printf(A, "%s%s%s", lets, *lets ? ", " : "", r->lets[l].name);
  gpuir_push(
      k, A, GS_TILE_COORD, "(m.o, n.o) <- blockIdx.x; column <- blockIdx.y x threads + thread",
      arena_printf(A,
                   "%s x %s tiles in the first kernel's order (groups of %d M tiles), %d CTAs a tile on "
                   "blockIdx.y; batch <- blockIdx.z",
                   sx_str(A, k->grid_tiles[0]), sx_str(A, k->grid_tiles[1]), k->plan.raster_group, k->split_parts),
      0, 0, 0, 0);
  gpuir_push(
      k, A, GS_LOOP, "column",
      arena_printf(A,
                   "blockIdx.y x %d + thread, stepping %d x gridDim.y, over the tile's %d 4-float columns, to the "
                   "first row past M",
                   nt, nt, BM * BN / 4),
      0, 0, 0, 0)
      ->loop = GLOOP_COLUMNS;
  gpuir_push(k, A, GS_LD_GLOBAL, "ld.global.v4.f32 workspace -> acc",
             arena_printf(A,
                          "a thread's 4-float column of the tile's %dx%d fp32 partials, every slice's loaded before "
                          "any add (at most %d), then summed in slice order 0, 1, ..., n - 1 (the same bits "
                          "whatever order the slices ran in); rows past the M tail skipped",
                          BM, BN, k->plan.split_k),
             gpuir_tok(k, A, "tSum"), 0, 0, 0);
  gpuir_push(k, A, GS_EPILOGUE, r->lets[r->acc_let].name,
             arena_printf(A, "lets: %s, once, on the sum", *lets ? lets : "(none)"), gpuir_tok(k, A, "tE"), 1,
             gpuir_tok(k, A, "tSum"), 0);
  gpuir_push(k, A, GS_ST_GLOBAL,
             arena_printf(A, "st.global.v2.b32 (4 x %s) -> %s", dtype_name(k->v.out_dt), r->out[k->v.out].name),
             arena_printf(A, "pred tails (%s), scalar where a row ends or is misaligned", tail_pred(A, &k->v)), 0, 1,
             gpuir_tok(k, A, "tE"), 0);
  gpuir_push(k, A, GS_END_LOOP, "column", NULL, 0, 0, 0, 0);
  return k;
}

/* Split-K's second kernel as its renderer takes it: the tile, then a loop
 * over the thread's columns holding the partials' load, the epilogue and
 * its store, in that order. */
static bool verify_splitk_render(const gpu_kernel *k, diag_list *dl) {
  static const gpu_stmt_kind WANT[] = {GS_TILE_COORD, GS_LOOP, GS_LD_GLOBAL, GS_EPILOGUE, GS_ST_GLOBAL, GS_END_LOOP};
  bool ok = k->nst == (int)(sizeof WANT / sizeof *WANT);
  for (int i = 0; ok && i < k->nst; i++) ok = k->st[i].k == WANT[i];
  ok = ok && k->st[1].loop == GLOOP_COLUMNS;
  if (!ok)
    diag_report(dl, D_INTERNAL, "GPU IR", NULL,
                "split-K kernel %s: not TileCoord, then a loop over the columns of the partials' load, the epilogue "
                "and the store",
                k->name);
  return ok;
}

/* The Op's reduce_kernel: the reduce's statements through the sm80
 * contraction's table (SM80_RENDER, with the reduce's spellings) */
void splitk_reduce_fn(opgen *g, const gpu_kernel *reduce, const char *sname) {
  sb_printf(g->s, "  // split-K's second kernel, rendered from its GPU IR: the slices' sums and the epilogue\n"
                  "  static __device__ __forceinline__ void reduce_kernel(const Params *p) {\n"
                  "    using Self = %s;\n"
                  "    using C = dlc::Sm80SplitReduce<Self>;\n"
                  "    C c;\n",
            sname);
  render_stmts(g->A, g->log, g->s, reduce, 0, true, SM80_RENDER);
}

static void splitk_dump(cJSON *g, const gpu_kernel *k) { dump_contraction(g, k, false); }


/* ---- the skeleton's table ---------------------------------------------------------- */

static bool splitk_verify(const gpu_kernel *k, diag_list *dl) {
  bool ok = verify_stage_reuse(k, dl);
  ok &= verify_epilogue_width(k, k->plan.tile[1], k->v.out_dt, k->threads, dl);
  ok &= verify_splitk_render(k, dl);
  ok &= gpuir_verify_stores(k, true, dl);
  return ok;
}

/* rendered with its first kernel's Op (contraction_split, splitk_reduce_fn) */
const skel_ops skel_splitk_reduce = {
    .algo = ALGO_SPLITK_REDUCE, .shape = SKEL_CONTRACTION, .arch = ARCH_SM80, .only = false,
    .fits = NULL,               .verify_plan = NULL,       .build = NULL,
    .verify = splitk_verify,    .render = NULL,            .dump = splitk_dump,
};
