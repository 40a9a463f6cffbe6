/* The sm80 attention skeleton (algo_choice streaming_softmax,
 * templates/sm80_attention.cuh): QK^T with its score lets and a row
 * softmax (region 1, P deferred), then P V (region 2), streamed
 * FlashAttention-2 style over key tiles with an online softmax.  Here are
 * its GPU IR builder (gpuir_build_attention: the regions, the masks, the
 * prologue, the key passes, the epilogue), its check (verify_att_render)
 * and its renderer (attention_op: the Op's score, mask and softmax
 * functions and the kernel).  The sm90a attention starts from this
 * builder's kernel, and attention_op renders its Op too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "emit_int.h"
#include "gpuir_int.h"
#include "skel.h"
#include "strbuf.h"

/* Whether the kernel is the sm90a attention's (wgmma_softmax), whose Op
 * attention_op writes too, with its tensor maps and producer */
static bool wgmma(const gpu_kernel *k) { return k->algo == ALGO_WGMMA_SOFTMAX; }

static bool let_is(const region *r, const rexpr *e, int *let) {
  while (e && (e->k == RX_BCAST || e->k == RX_TRANSPOSE)) e = e->a;
  if (!e || e->k != RX_LET) return false;
  *let = e->let;
  return true;
}

/* Finds the row softmax after the score lets in region 1 (see gpu_softmax). */
static bool find_softmax(const region *r, gpu_softmax *sm) {
  memset(sm, 0, sizeof *sm);
  sm->max = -1;
  for (int l = 0; l < r->nlets; l++) {
    const rexpr *e = r->lets[l].e;
    if (e->k == RX_REDUCE && e->rop == RED_MAX && e->nred == 1 && let_is(r, e->a, &sm->x)) {
      sm->max = l;
      sm->key_axis = e->red[0];
      sm->max_init = e->init;
      break;
    }
  }
  if (sm->max < 0) return false;
  /* sub = x - bcast(max); exp = exp2(sub); sum = Reduce(sum){exp}; div = exp / bcast(sum); p = cast(div) */
  int found = 0, a, b;
  for (int l = sm->max + 1; l < r->nlets; l++) {
    const rexpr *e = r->lets[l].e;
    if (found == 0 && e->k == RX_BINARY && e->op == TINY_SUB && let_is(r, e->a, &a) && a == sm->x &&
        let_is(r, e->b, &b) && b == sm->max)
      sm->sub = l, found++;
    else if (found == 1 && e->k == RX_UNARY && e->op == TINY_EXP2 && let_is(r, e->a, &a) && a == sm->sub)
      sm->exp = l, found++;
    else if (found == 2 && e->k == RX_REDUCE && e->rop == RED_SUM && e->nred == 1 && e->red[0] == sm->key_axis &&
             let_is(r, e->a, &a) && a == sm->exp)
      sm->sum = l, found++;
    else if (found == 3 && e->k == RX_BINARY && e->op == TINY_FDIV && let_is(r, e->a, &a) && a == sm->exp &&
             let_is(r, e->b, &b) && b == sm->sum)
      sm->div = l, found++;
    else if (found == 4 && e->k == RX_UNARY && e->op == TINY_CAST && let_is(r, e->a, &a) && a == sm->div)
      sm->p = l, sm->pt = e->dt, found++;
    else
      return false;
  }
  if (found == 4) sm->p = sm->div, sm->pt = r->lets[sm->div].e->dt, found++; /* P kept in fp32 */
  return found == 5;
}

/* The online softmax of both attention rows, after the scores (tScore):
 * the running row max, the rescale of O and the row sum, and the
 * probabilities (tP). */
void emit_online_softmax(gpu_kernel *k, arena *A, const region *r1) {
  gpuir_push(k, A, GS_EPILOGUE, "row_max", arena_printf(A, "%s: running max, quad shuffles", r1->lets[k->sm.max].name),
             gpuir_tok(k, A, "tMax"), 1, gpuir_tok(k, A, "tScore"), 0)
      ->step = GSTEP_ROW_MAX;
  gpuir_push(k, A, GS_EPILOGUE, "rescale",
             arena_printf(A, "%s(%s) of the old and new max on O and the row sum", r1->lets[k->sm.exp].name,
                          r1->lets[k->sm.sub].name),
             gpuir_tok(k, A, "tRescale"), 1, gpuir_tok(k, A, "tMax"), 0)
      ->step = GSTEP_RESCALE;
  gpuir_push(k, A, GS_EPILOGUE, "probabilities",
             arena_printf(A, "%s = %s(%s), an argument <= 0; %s += row sum", r1->lets[k->sm.exp].name, "ex2.approx.ftz",
                          r1->lets[k->sm.sub].name, r1->lets[k->sm.sum].name),
             gpuir_tok(k, A, "tP"), 1, gpuir_tok(k, A, "tRescale"), 0)
      ->step = GSTEP_PROBS;
}

/* The masks of the score lets, and whether the tiles they touch test them
 * per lane (gpu_kernel.lane_mask): each guard affine in the innermost query
 * axis and the key axis, offsets within a tile inside GPUIR_LANE_MASK_SPAN.
 * When the rows flatten several query axes, 8 rows down is not 8 down the
 * axis the mask reads: the lane then evaluates each mask at each of its
 * rows (gpu_kernel.lane_rows), and only the key offset is added. */
static void attention_masks(gpu_kernel *k, const region *r) {
  int mq = k->v.m_axes[k->v.nm - 1], nk = k->v.n_axes[0];
  int BM = k->plan.tile[0], BN = k->plan.tile[1];
  k->nmasks = 0;
  k->lane_mask = true;
  k->lane_rows = k->v.nm > 1;
  for (int l = 0; l <= k->sm.x; l++) {
    const ib_guard *gd;
    int kind = l == r->acc_let ? 0 : gpuir_mask_kind(k, r, r->lets[l].e, &gd);
    if (!kind) continue;
    if (k->nmasks == GPUIR_MAX_MASKS) {
      k->lane_mask = false;
      continue;
    }
    gpu_mask *mk = &k->masks[k->nmasks++];
    mk->let = l, mk->kind = kind, mk->guard = gd, mk->cm = mk->cn = 0;
    for (int t = 0; t < gd->e->nterms; t++) {
      const sx_atom *at = gd->e->terms[t].atom;
      if (at->kind != SXA_VAR) continue;
      if (strcmp(at->name, r->it[mq].name) == 0) mk->cm += gd->e->terms[t].coef;
      else if (strcmp(at->name, r->it[nk].name) == 0) mk->cn += gd->e->terms[t].coef;
    }
    if (!lane_span_ok(mk, k->lane_rows, BM, BN)) k->lane_mask = false;
  }
  if (!k->nmasks) k->lane_rows = false;
  /* a lane's key offsets dn run along the one key axis */
  if (k->lane_rows && k->v.nn != 1) k->lane_mask = false;
}

/* sm80 attention: the two regions as the streaming skeleton takes them
 * (QK^T with the row softmax, then P V of its deferred P), into k: the
 * views, the softmax's lets, the head dims; false with a diagnostic when
 * they are not. */
static bool att_regions(gpu_kernel *k, arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                        const char *name, const char *at, diag_list *dl, int64_t *dp, int64_t *dvp) {
  if (rs->n != 2 || !pc->a[0].con.present || !pc->a[1].con.present) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL,
                "the attention skeleton takes two contraction regions (QK^T with the softmax, then P V)");
    return false;
  }
  const region *r1 = &rs->r[0], *r2 = &rs->r[1];
  k->name = name;
  k->algo = ALGO_STREAMING_SOFTMAX;
  k->r = r1;
  k->a = &pc->a[0];
  k->plan = *p;
  view_of(A, &k->v, r1, &pc->a[0]);
  view_of(A, &k->v2, r2, &pc->a[1]);
  if (!find_softmax(r1, &k->sm)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL,
                "region %s does not end in the row softmax Reduce(max), exp2(x - max), Reduce(sum), division, cast "
                "that the streaming skeleton implements",
                r1->name);
    return false;
  }
  /* the score lets between QK^T and the softmax are pointwise */
  for (int l = 0; l <= k->sm.x; l++)
    if (l != r1->acc_let && !r1->lets[l].post_reduce) {
      diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "let %s before the softmax is not pointwise on QK^T", r1->lets[l].name);
      return false;
    }
  /* P V reads the deferred P at the same points; its epilogue is pointwise */
  const pc_contraction *c2 = &pc->a[1].con;
  /* O is stored: in the caller's buffer, or in the chain's workspace when
   * the next region reads it (deferred, the chain's step boundary) */
  if (r2->nyields != 1 || r1->nyields != 1 ||
      r1->out[r1->yields[0].output].materialize != MAT_DEFERRED ||
      r1->yields[0].let != k->sm.p || strcmp(r2->in[c2->lhs].name, r1->out[r1->yields[0].output].name) != 0) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "region %s must consume region %s's deferred P and store one output",
                r2->name, r1->name);
    return false;
  }
  for (int l = 0; l < r2->nlets; l++)
    if (l != r2->acc_let && !r2->lets[l].post_reduce) {
      diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "let %s after P V is not pointwise", r2->lets[l].name);
      return false;
    }
  k->v2.out = r2->yields[0].output;
  k->v2.out_let = r2->yields[0].let;
  k->v2.out_dt = r2->yields[0].cast;
  /* one query axis, one key axis, a K of region 1 that is the head dim */
  const gpu_view *v = &k->v;
  int64_t d, dv;
  /* the query group may hold several axes: grouped-query attention's query
   * heads that share a K/V head (K and V expanded over them) join the query
   * rows, and one block covers BM rows of the flattened group */
  if (v->nm < 1 || v->nn != 1 || v->nk != 1 || v->n_axes[0] != k->sm.key_axis || k->v2.nk != 1 || k->v2.nn != 1) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at,
                "Write K and V with one key axis and one head-dim axis (the last two), and Q with its query axis "
                "before the head dim; broadcast K and V over grouped query heads with Expand.",
                "the streaming skeleton needs one key axis and one head-dim axis; region %s has %d key and %d head-dim "
                "axes",
                r1->name, v->nn, v->nk);
    return false;
  }
  if (!sx_is_int(r1->it[v->k_axes[0]].size, &d) || !sx_is_int(r2->it[k->v2.n_axes[0]].size, &dv)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, "Bind the head dim with a manifest variant (e.g. \"D\": [64, 128]).",
                "the streaming skeleton needs head dims that are compile-time constants; here they are %s and %s",
                sx_str(A, r1->it[v->k_axes[0]].size), sx_str(A, r2->it[k->v2.n_axes[0]].size));
    return false;
  }
  if (d % 16 || dv % 16 || d < 16 || dv < 16 || d > 256 || dv > 256) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at,
                "Use head dims that are multiples of 16 from 16 to 256; for another head dim, zero-pad Q, K and V along "
                "it to the next multiple of 16 before the call (zero columns add nothing to QK^T), set attrs.scale to "
                "1/sqrt of the unpadded head dim, and drop O's padded columns.",
                "the streaming skeleton takes head dims that are multiples of 16 up to 256, not %lld / %lld", (long long)d,
                (long long)dv);
    return false;
  }
  *dp = d, *dvp = dv;
  return true;
}

/* sm80 attention's operands, dtype, launch and shared tiles; false with a
 * diagnostic when the operands are not the skeleton's. */
static bool att_setup(gpu_kernel *k, arena *A, const pc_report *pc, const sched_plan *p, const char *at, diag_list *dl) {
  const region *r1 = k->r, *r2 = k->v2.r;
  const pc_contraction *c2 = &pc->a[1].con;
  const gpu_view *v = &k->v;
  attention_masks(k, r1);
  operand_of(A, dl, at, r1, &pc->a[0].con, false, &k->A); /* Q */
  operand_of(A, dl, at, r1, &pc->a[0].con, true, &k->B);  /* K */
  operand_of(A, dl, at, r2, c2, true, &k->V);
  k->B.rstep = operand_axis_step(A, r1, &k->B, v->n_axes[0]);
  k->V.rstep = operand_axis_step(A, r2, &k->V, k->v2.k_axes[0]);
  if (k->B.rstep) k->B.rstep_str = sx_str(A, k->B.rstep);
  if (k->V.rstep) k->V.rstep_str = sx_str(A, k->V.rstep);
  k->T = r1->in[k->A.input].dt;
  if (k->T == DT_FP32) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at,
                "Compile the attention in fp16 or bf16: list \"fp16\" or \"bf16\" in the op's \"dtypes\" and convert Q, K "
                "and V before the call (the scores, the softmax and the PV sums stay fp32 in the kernel). fp32 "
                "operands compile for GEMM and convolution, on the tensor cores in TF32.",
                "the streaming skeleton has no fp32 (TF32) path: Q, K and V are fp32");
    return false;
  }
  if (!k->A.k_contig || !k->B.k_contig || k->V.k_contig || k->A.contig_axis < 0 || k->B.contig_axis < 0 ||
      k->V.contig_axis < 0 || k->T != r1->in[k->B.input].dt || k->T != r2->in[k->V.input].dt ||
      (k->T != DT_FP16 && k->T != DT_BF16) || (k->sm.pt != k->T && k->sm.pt != DT_FP32)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL,
                "the streaming skeleton takes fp16 or bf16 Q, K, V of one dtype, contiguous along the head dim, and "
                "P in that dtype or fp32");
    return false;
  }
  vec_variants(k, k->A.vec_max);
  static_widths(k, A);
  k->threads = 128;
  int BM = p->tile[0], BN = p->tile[1];
  int ring = (BM * k->D + 2 * BN * (k->D + k->DV)) * dtype_bytes(k->T), stage = BM * (k->DV + 8) * 4;
  k->smem = ring > stage ? ring : stage;
  int eb = dtype_bytes(k->T);
  int end = add_tile(k, "smQ", 0, 1, BM, k->D, eb);
  end = add_tile(k, "smK", end, 2, BN, k->D, eb);
  add_tile(k, "smV", end, 2, BN, k->DV, eb);
  k->grid[0] = sx_ceildiv_int(A, gpuir_extent(A, r1, v->m_axes, v->nm), BM);
  k->grid[1] = gpuir_extent(A, r1, v->b_axes, v->nb);
  k->grid[2] = sx_int(A, 1);
  return grid_fits(A, k, dl, at);

}

/* sm80 attention's statements before the key tiles: the tile, Q's copy
 * and fragments, the lanes' hoisted offsets and pointers. */
static void att_prologue(gpu_kernel *k, arena *A, const sched_plan *p) {
  const region *r1 = k->r;
  int BM = p->tile[0], BN = p->tile[1];
  gpuir_push(
      k, A, GS_TILE_COORD, "m0 <- blockIdx.x x BM; batch <- blockIdx.y",
      arena_printf(A, "%d query rows; the key tiles up to the last one some row of the tile keeps (Op::tile_live)", BM),
      0, 0, 0, 0);
  gpuir_push(k, A, GS_ALLOC_SHARED, "smQ",
             arena_printf(A, "%s [%d][%d], 16B chunks xor %d", dtype_name(k->T), BM, k->D, k->tiles[0].swz), 0, 0, 0, 0)
      ->side = GSIDE_A;
  gpuir_push(k, A, GS_ALLOC_SHARED, "smK,smV",
             arena_printf(A, "%s [2][%d][%d] and [2][%d][%d] ring, 16B chunks xor %d and %d", dtype_name(k->T), BN,
                          k->D, BN, k->DV, k->tiles[1].swz, k->tiles[2].swz),
             0, 0, 0, 0)
      ->side = GSIDE_B;
  gpuir_push(k, A, GS_ACC_ZERO, "O, row max, row sum",
             arena_printf(A, "fp32: a warp's 16 x %d of O, and each lane's two rows' max (%s's init) and sum", k->DV,
                          r1->lets[k->sm.max].name),
             0, 0, 0, 0);
  gpuir_push(k, A, GS_CP_ASYNC, arena_printf(A, "smQ <- %s", k->A.tensor), "query rows m0..m0+BM, pred tails",
             gpuir_tok(k, A, "tQ"), 0, 0, 0)
      ->side = GSIDE_A;
  gpuir_push(k, A, GS_COMMIT, "cp.async.commit_group", NULL, 0, 1, gpuir_tok(k, A, "tQ"), 0);
  gpuir_push(k, A, GS_WAIT, "cp.async.wait_group", "0", 0, 1, gpuir_tok(k, A, "tQ"), 0)->lo = 0;
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "the Q tile landed", 0, 0, 0, 0);
  if (p->a_frag_regs)
    gpuir_push(k, A, GS_LDMATRIX, "ldmatrix.x4", "smQ: Q fragments (once, kept in registers)", 0, 1,
               gpuir_tok(k, A, "tQ"), 0)
        ->side = GSIDE_A;
  gpuir_push(k, A, GS_FRAG_SETUP, "K fragment lane offsets",
             "the lane's ldmatrix offset of each k16 step of QK^T, hoisted", 0, 0, 0, 0)
      ->side = GSIDE_B;
  gpuir_push(k, A, GS_FRAG_SETUP, "V fragment lane offsets",
             "the lane's ldmatrix.trans offset of each pair of O's n8 tiles, hoisted", 0, 0, 0, 0)
      ->side = GSIDE_V;
  bool stream = k->B.rstep && k->V.rstep;
  if (k->lane_mask && k->lane_rows)
    gpuir_push(k, A, GS_ADDR_SETUP, "lane_rows",
               "per lane, once: each mask's guard - its bounds at each of its rows (m, m + 8; the rows flatten the "
               "query axes) "
               "and key 0, in 64 bits",
               gpuir_tok(k, A, "tRows"), 0, 0, 0)
        ->side = GSIDE_A;
  if (stream)
    gpuir_push(k, A, GS_ADDR_SETUP, arena_printf(A, "%s, %s row pointers", k->B.tensor, k->V.tensor),
               arena_printf(A, "per thread, key 0 of its chunk rows; row steps %s, %s", k->B.rstep_str, k->V.rstep_str),
               0, 0, 0, 0)
        ->side = GSIDE_B;
}

/* The prose of sm80 attention's mask tests, for the dump. */
static const char *att_mask_prose(const gpu_kernel *k, arena *A) {
  const region *r1 = k->r;
  const char *masks = "";
  for (int i = 0; i < k->nmasks; i++) {
    const gpu_mask *mk = &k->masks[i];
    const char *off = "";
    const int64_t cf[2] = {k->lane_rows ? 0 : mk->cm, mk->cn};
    for (int a = 0; a < 2; a++)
      if (cf[a])
        off = arena_printf(A, "%s %c %s%s", off, cf[a] < 0 ? '-' : '+',
                           cf[a] == 1 || cf[a] == -1 ? "" : arena_printf(A, "%lld * ", (long long)(cf[a] < 0 ? -cf[a] : cf[a])),
                           a ? "dn" : "dm");
    masks = arena_printf(A, "%s%s%s removed where its guard %s at the lane's value%s", masks, i ? "; " : "",
                         r1->lets[mk->let].name, mk->kind == 1 ? "holds" : "fails", off);
  }
  return masks;
}

/* One of sm80 attention's three passes over the key tiles (0 the full
 * ones, 1 the masked ones inside the keys, 2 the key tail): its first
 * tile's copy, then the loop (copy ahead, QK^T, the score lets and the
 * online softmax, P V). */
static void att_key_pass(gpu_kernel *k, arena *A, const sched_plan *p, int pass, bool stream, const char *masks) {
  const region *r1 = k->r, *r2 = k->v2.r;
  const char *tok = pass == 0 ? "tKVf" : pass == 1 ? "tKVm" : "tKVt";
  const char *kv = arena_printf(A, "%s, %s", k->B.tensor, k->V.tensor);
  const char *how = !stream    ? "pred tails"
                    : pass < 2 ? "row pointers + tile * BN * row step, whole chunks"
                               : "row pointers + tile * BN * row step, rows past the keys zero-filled";
  /* the pass's first tile, into the stage the last pass left free */
  gpu_stmt *st = gpuir_push(k, A, GS_CP_ASYNC, arena_printf(A, "smK, smV[st] <- %s", kv),
                            arena_printf(A, "the pass's first key tile if any: %s", how),
                            gpuir_tok_at(k, A, tok, "first"), 0, 0, 0);
  st->side = GSIDE_B, st->lo = pass, st->ring = 1 + pass, st->ring_first = true;
  gpuir_push(k, A, GS_COMMIT, "cp.async.commit_group", NULL, 0, 1, gpuir_tok_at(k, A, tok, "first"), 0);
  st = gpuir_push(k, A, GS_LOOP, "t",
                  pass == 0 ? "full key tiles first (Op::tile_full: no mask removes anything; inside the keys)"
                  : pass == 1
                      ? "masked key tiles inside the keys (Op::tile_live and not Op::tile_full: the mask predicate's "
                        "affine bound)"
                      : "the live key tile past the key length (the key tail)",
                  0, 0, 0, 0);
  st->loop = GLOOP_KEYS, st->lo = pass;
  st =
      gpuir_push(k, A, GS_CP_ASYNC, arena_printf(A, "smK, smV[next%%2] <- %s", kv),
                 arena_printf(A, "the pass's next key tile if any: %s", how), gpuir_tok_at(k, A, tok, "next"), 0, 0, 0);
  st->side = GSIDE_B, st->lo = pass, st->tile = 1, st->ring = 1 + pass;
  gpuir_push(k, A, GS_COMMIT, "cp.async.commit_group", NULL, 0, 1, gpuir_tok_at(k, A, tok, "next"), 0);
  gpuir_push(k, A, GS_WAIT, "cp.async.wait_group", "1", 0, 1, gpuir_tok_at(k, A, tok, "t"), 0)->lo = 1;
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "tile t landed", 0, 0, 0, 0);
  if (!p->a_frag_regs)
    gpuir_push(k, A, GS_LDMATRIX, "ldmatrix.x4", "smQ: Q fragments (each key tile)", 0, 1, gpuir_tok(k, A, "tQ"), 0)
        ->side = GSIDE_A;
  st = gpuir_push(k, A, GS_LDMATRIX, "ldmatrix.x4", "smK[t%2]: K^T fragments", 0, 1, gpuir_tok_at(k, A, tok, "t"), 0);
  st->side = GSIDE_B, st->ring = 1 + pass;
  gpuir_push(k, A, GS_MMA, arena_printf(A, "mma.sync.m16n8k16 S = Q K^T (%s)", r1->lets[r1->acc_let].name),
             "16 rows per warp", gpuir_tok(k, A, "tS"), 0, 0, 0)
      ->side = GSIDE_B;
  const char *score = "";
  for (int l = 0; l <= k->sm.x; l++)
    if (l != r1->acc_let) score = arena_printf(A, "%s%s%s", score, *score ? ", " : "", r1->lets[l].name);
  const char *tail = pass == 2 ? arena_printf(A, "; key tails -> %s's neutral", r1->lets[k->sm.max].name) : "";
  if (pass == 0)
    gpuir_push(k, A, GS_EPILOGUE, "score_full",
               arena_printf(A, "lets: %s, each mask its kept branch; no per-element test", *score ? score : "(none)"),
               gpuir_tok(k, A, "tScore"), 1, gpuir_tok(k, A, "tS"), 0)
        ->step = GSTEP_SCORE_FULL;
  else if (!k->lane_mask)
    gpuir_push(k, A, GS_EPILOGUE, "score",
               arena_printf(A, "lets: %s, masks at each element's indices%s", *score ? score : "(none)", tail),
               gpuir_tok(k, A, "tScore"), 1, gpuir_tok(k, A, "tS"), 0)
        ->step = GSTEP_SCORE;
  else {
    if (k->lane_rows)
      gpuir_push(k, A, GS_EPILOGUE, "lane_mask",
                 arena_printf(A,
                              "per lane at each of its rows and its first key n: lane_rows + key coefficient * n, "
                              "clamped to 32 bits%s",
                              pass == 2 ? "; keys left from n" : ""),
                 gpuir_tok_n(k, A, "tLane", pass), 1, gpuir_tok(k, A, "tRows"), 0)
          ->step = GSTEP_LANE_MASK;
    else
      gpuir_push(k, A, GS_EPILOGUE, "lane_mask",
                 arena_printf(A, "per lane at its first element (m, n): %s%s",
                              k->nmasks ? "each mask's guard - its bounds, clamped to 32 bits" : "no masks",
                              pass == 2 ? "; keys left from n" : ""),
                 gpuir_tok_n(k, A, "tLane", pass), 0, 0, 0)
          ->step = GSTEP_LANE_MASK;
    gpuir_push(k, A, GS_EPILOGUE, "score_lane",
               arena_printf(A, "lets: %s; each element (dm, dn) of the lane's fragments: %s%s",
                            *score ? score : "(none)", *masks ? masks : "no masks", tail),
               gpuir_tok(k, A, "tScore"), 2, gpuir_tok(k, A, "tS"), gpuir_tok_n(k, A, "tLane", pass))
        ->step = GSTEP_SCORE_LANE;
  }
  emit_online_softmax(k, A, r1);
  gpuir_push(k, A, GS_EPILOGUE, "P fragments",
             k->sm.pt == DT_FP32
                 ? arena_printf(A, "%s: fp32 P as hi + lo %s A fragments in registers (deferred; two mma per step)",
                                r1->lets[k->sm.p].name, dtype_name(k->T))
                 : arena_printf(A, "%s: cvt to %s A fragments in registers (deferred)", r1->lets[k->sm.p].name,
                                dtype_name(k->sm.pt)),
             gpuir_tok(k, A, "tPf"), 1, gpuir_tok(k, A, "tP"), 0)
      ->step = GSTEP_P_FRAGS;
  st = gpuir_push(k, A, GS_LDMATRIX, "ldmatrix.x4.trans", "smV[t%2]: V fragments", 0, 1, gpuir_tok_at(k, A, tok, "t"),
                  0);
  st->side = GSIDE_V, st->ring = 1 + pass;
  gpuir_push(k, A, GS_MMA, arena_printf(A, "mma.sync.m16n8k16 O += P V (%s)", r2->lets[r2->acc_let].name), NULL,
             gpuir_tok(k, A, "tO"), 1, gpuir_tok(k, A, "tPf"), 0)
      ->side = GSIDE_V;
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "stage t%2 free", 0, 0, 0, 0);
  gpuir_push(k, A, GS_END_LOOP, "t", NULL, 0, 0, 0, 0);
}

/* sm80 attention's statements after the key tiles: the row sums, O / l,
 * the staging tile and the two epilogue/store pairs. */
static void att_epilogue(gpu_kernel *k, arena *A, const sched_plan *p) {
  const region *r2 = k->v2.r, *r1 = k->r;
  int BM = p->tile[0];
  /* the staging tile reuses Q's tile and the ring: no copy left in flight,
   * and every warp past its last fragment load (a query tile no pass gives
   * a key tile has run no loop barrier since Q's) */
  gpuir_push(k, A, GS_WAIT, "cp.async.wait_group", "0", 0, 0, 0, 0)->lo = 0;
  gpuir_push(k, A, GS_REDUCE, arena_printf(A, "sum %s", r1->lets[k->sm.sum].name),
             "each row's sum over the quad of lanes that share it: shfl.bfly 1, 2", gpuir_tok(k, A, "tL"), 1,
             gpuir_tok(k, A, "tO"), 0);
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "Q's tile and the ring are free for the staging tile", 0, 0, 0, 0);
  gpuir_push(k, A, GS_EPILOGUE, "finish", arena_printf(A, "%s: O / row sum", r1->lets[k->sm.div].name),
             gpuir_tok(k, A, "tFin"), 2, gpuir_tok(k, A, "tO"), gpuir_tok(k, A, "tL"))
      ->step = GSTEP_FINISH;
  gpuir_push(k, A, GS_STAGE_ACC, "st.shared.v2.f32", arena_printf(A, "O -> stage[%d][%d+8] fp32", BM, k->DV),
             gpuir_tok(k, A, "tStage"), 1, gpuir_tok(k, A, "tFin"), 0);
  gpuir_push(k, A, GS_BARRIER, "bar.sync", "staging tile complete", 0, 0, 0, 0);
  /* the full-width epilogue over the BM x DV staging tile of O, as for a contraction */
  k->epi_vec = epi_vec(A, &k->v2, BM, k->DV, k->threads);
  if (k->epi_vec) {
    gpuir_push(k, A, GS_EPILOGUE, r2->lets[r2->acc_let].name,
               arena_printf(A,
                            "tensors %d-element aligned, rows up to the queries: the P V region's post-reduce lets; "
                            "%d outputs a thread at a fixed column; %s",
                            k->epi_vec, k->epi_vec, epi_row_steps(A, &k->v2)),
               gpuir_tok(k, A, "tEfull"), 1, gpuir_tok(k, A, "tStage"), 0)
        ->full = true;
    gpuir_push(k, A, GS_ST_GLOBAL,
               arena_printf(A, "st.global.v4.b32 (%d x %s) -> %s", k->epi_vec, dtype_name(k->v2.out_dt),
                            r2->out[k->v2.out].name),
               "no column predicate; rows past the queries skipped", 0, 1, gpuir_tok(k, A, "tEfull"), 0)
        ->full = true;
  }
  gpuir_push(k, A, GS_EPILOGUE, r2->lets[r2->acc_let].name,
             k->epi_vec ? "other tiles: the P V region's post-reduce lets" : "the P V region's post-reduce lets",
             gpuir_tok(k, A, "tE"), 1, gpuir_tok(k, A, "tStage"), 0);
  gpuir_push(k, A, GS_ST_GLOBAL,
             arena_printf(A, "st.global.v2.b32 (4 x %s) -> %s", dtype_name(k->v2.out_dt), r2->out[k->v2.out].name),
             arena_printf(A, "pred tails (%s)", tail_pred(A, &k->v2)), 0, 1, gpuir_tok(k, A, "tE"), 0);
}

gpu_kernel *gpuir_build_attention(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                                  const char *name, diag_list *dl) {
  const char *at = arena_printf(A, "GPU IR[%s]", rs->n ? rs->r[0].name : "?");
  gpu_kernel *k = ARENA_NEW(A, gpu_kernel);
  int64_t d, dv;
  if (!att_regions(k, A, rs, pc, p, name, at, dl, &d, &dv)) return NULL;
  k->D = (int)d, k->DV = (int)dv;
  if (!att_setup(k, A, pc, p, at, dl)) return NULL;
  att_prologue(k, A, p);
  /* three passes over the key tiles: the full ones (tile_full, inside the
   * keys), the masked ones inside the keys (the diagonal), then the key
   * tail; each pays only for the tests it needs */
  const char *masks = att_mask_prose(k, A);
  bool stream = k->B.rstep && k->V.rstep;
  for (int pass = 0; pass < 3; pass++) att_key_pass(k, A, p, pass, stream, masks);
  att_epilogue(k, A, p);
  return k;  /* run_stages verifies it */
}

/* sm80 attention's statements as its renderer takes them (below,
 * ATT_RENDER): the kinds it renders; three key-tile loops, passes 0, 1
 * and 2 in order, not nested, each after the copy of its first tile; in a
 * loop the copy of the next tile (of the loop's pass), S = Q K^T as Q's
 * fragments (when not kept), K's, then the MMAs, the score steps, the
 * online softmax, then P V as P's fragments, V's, then the MMAs; the
 * finish, staging and the output's pairs after the loops; a ring of two
 * stages. */
static bool verify_att_render(const gpu_kernel *k, diag_list *dl) {
  static const bool RENDERS[GS__COUNT] = {
      [GS_TILE_COORD] = true, [GS_ALLOC_SHARED] = true, [GS_ACC_ZERO] = true, [GS_CP_ASYNC] = true,
      [GS_COMMIT] = true,     [GS_WAIT] = true,         [GS_BARRIER] = true,  [GS_LDMATRIX] = true,
      [GS_FRAG_SETUP] = true, [GS_ADDR_SETUP] = true,   [GS_LOOP] = true,     [GS_END_LOOP] = true,
      [GS_MMA] = true,        [GS_EPILOGUE] = true,     [GS_REDUCE] = true,   [GS_STAGE_ACC] = true,
      [GS_ST_GLOBAL] = true,
  };
  const char *bad = NULL;
  int at = -1, pass = -1, first = -1;
  bool loop = false, full_seen = false;
  for (int i = 0; i < k->nst && !bad; i++) {
    const gpu_stmt *s = &k->st[i];
    at = i;
    if (s->k < 0 || s->k >= GS__COUNT || !RENDERS[s->k]) bad = "a kind sm80 attention does not render";
    else if (s->k == GS_LOOP) {
      if (loop || s->loop != GLOOP_KEYS || s->lo != pass + 1 || first != s->lo)
        bad = "a key-tile loop out of place (passes 0, 1, 2 in order, each after its first tile's copy)";
      loop = true, pass = s->lo;
    } else if (s->k == GS_END_LOOP) {
      if (!loop) bad = "an EndLoop outside a loop";
      loop = false;
    } else if (s->k == GS_CP_ASYNC && s->side == GSIDE_B) {
      if (loop ? s->lo != pass || s->tile != 1 : s->lo != pass + 1 || s->lo > 2)
        bad = "a key tile's copy of another pass than its loop's";
      if (!loop) first = s->lo;
    } else if (s->k == GS_CP_ASYNC && (s->side != GSIDE_A || loop)) {
      bad = "a copy of no operand, or Q's inside a loop";
    } else if (s->k == GS_LDMATRIX && (s->side == GSIDE_B || (s->side == GSIDE_A && loop))) {
      /* S = Q K^T: [Q's fragments,] K's, the MMAs */
      int j = i + (s->side == GSIDE_A);
      if (!loop || j + 1 >= k->nst || k->st[j].k != GS_LDMATRIX || k->st[j].side != GSIDE_B || k->st[j + 1].k != GS_MMA ||
          k->st[j + 1].side != GSIDE_B)
        bad = "S = Q K^T that is not Q's fragments (when not kept), K's, then the MMAs, in a loop";
      i = j + 1;
    } else if (s->k == GS_EPILOGUE && s->step == GSTEP_P_FRAGS) {
      if (!loop || i + 2 >= k->nst || k->st[i + 1].k != GS_LDMATRIX || k->st[i + 1].side != GSIDE_V ||
          k->st[i + 2].k != GS_MMA || k->st[i + 2].side != GSIDE_V)
        bad = "P V that is not P's fragments, V's, then the MMAs, in a loop";
      i += 2;
    } else if (s->k == GS_LDMATRIX || s->k == GS_MMA) {
      if (!(s->k == GS_LDMATRIX && s->side == GSIDE_A && !loop)) bad = "fragments or MMAs outside S = Q K^T and P V";
    } else if (s->k == GS_EPILOGUE) {
      bool in_loop = s->step != GSTEP_NONE && s->step != GSTEP_FINISH;
      if (in_loop != loop || (s->step == GSTEP_SCORE_FULL && pass != 0) ||
          ((s->step == GSTEP_SCORE || s->step == GSTEP_LANE_MASK || s->step == GSTEP_SCORE_LANE) && pass == 0))
        bad = "an epilogue step out of place";
      if (s->step == GSTEP_NONE && ((s->full && full_seen) || (!s->full && full_seen && k->st[i - 1].k != GS_ST_GLOBAL)))
        bad = "the output's epilogue pairs out of place";
      full_seen |= s->full;
    } else if (s->k == GS_ST_GLOBAL) {
      if (loop || i == 0 || k->st[i - 1].k != GS_EPILOGUE || k->st[i - 1].full != s->full)
        bad = "a store without its epilogue";
    } else if (s->k == GS_WAIT) {
      if (s->lo != (loop ? 1 : 0)) bad = "a wait that leaves the wrong number of groups in flight";
    } else if ((s->k == GS_FRAG_SETUP || s->k == GS_ADDR_SETUP || s->k == GS_ALLOC_SHARED || s->k == GS_TILE_COORD ||
                s->k == GS_ACC_ZERO || s->k == GS_REDUCE || s->k == GS_STAGE_ACC) &&
               loop) {
      bad = "a setup, reduction or staging inside a loop";
    }
  }
  if (!bad && (loop || pass != 2)) bad = "not the three passes over the key tiles";
  /* Sm80AttCta's ring is two stages (c.st ^ 1, smV[next%2]) */
  if (k->plan.stages != 2) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "plan of %d stages: a ring of other than two stages", k->plan.stages);
    return false;
  }
  if (bad) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "statement %d (%s %s): %s", at, at >= 0 ? gpuir_stmt_name(k->st[at].k) : "",
                at >= 0 && k->st[at].what ? k->st[at].what : "", bad);
    return false;
  }
  return true;
}

static int mask_kind(const gpu_kernel *k, const region *r, const rexpr *e, const ib_guard **gd) {
  return gpuir_mask_kind(k, r, e, gd);
}

/* Whether e holds a guard Select (an index-dependent choice) other than in
 * a recognised mask's predicate. */
static bool has_guard_select(const gpu_kernel *k, const region *r, const rexpr *e) {
  if (!e) return false;
  const ib_guard *gd;
  if (mask_kind(k, r, e, &gd)) return has_guard_select(k, r, e->b) || has_guard_select(k, r, e->c);
  if (e->k == RX_SELECT && !e->a) return true;
  return has_guard_select(k, r, e->a) || has_guard_select(k, r, e->b) || has_guard_select(k, r, e->c);
}

/* Appends cf * x to a sum being written (b empty: its first term), with
 * the unit coefficients and the signs folded: "- x", "+ 3 * x". */
static void lin_term(strbuf *b, int64_t cf, const char *x) {
  if (cf == 0) return;
  int64_t a = cf < 0 ? -cf : cf;
  const char *sign = b->n ? (cf < 0 ? " - " : " + ") : cf < 0 ? "-" : "";
  if (a == 1) sb_printf(b, "%s%s", sign, x);
  else sb_printf(b, "%s%lld * %s", sign, (long long)a, x);
}

static void tile_test_fn(opgen *g, const gpu_kernel *k, bool full) {
  const region *r = g->r;
  strbuf *s = g->s;
  int mq = k->v.m_axes[k->v.nm - 1];
  if (full)
    sb_puts(s, "  // true when no mask (the score lets' guard Selects) removes any element of the tile\n"
               "  static __device__ __forceinline__ bool tile_full(const Params *p, int64_t m0, int64_t m1, int64_t n0,\n"
               "                                                  int64_t n1, int64_t bi) {\n");
  else
    sb_puts(s, "  // false when the mask (the score lets' guard Selects) removes every element of the tile\n"
               "  static __device__ __forceinline__ bool tile_live(const Params *p, int64_t m0, int64_t m1, int64_t n0,\n"
               "                                                  int64_t n1, int64_t bi) {\n");
  bool unknown = false, masked = false;
  for (int l = 0; l <= k->sm.x; l++)
    if (l != r->acc_let) {
      const ib_guard *gd;
      unknown |= has_guard_select(k, r, r->lets[l].e);
      masked |= mask_kind(k, r, r->lets[l].e, &gd) != 0;
    }
  if (full && unknown) {
    sb_puts(s, "    (void)p, (void)m0, (void)m1, (void)n0, (void)n1, (void)bi;\n"
               "    return false;  // a guard the corners do not bound\n  }\n");
    return;
  }
  /* with several query axes (grouped-query heads flattened into the rows) the
   * masks read the innermost one: its range over the tile's rows is
   * [m0, m1 - 1] less the outer part when the tile stays in one row block of
   * the outer axes, and the whole axis otherwise */
  const char *m_lo = "m0", *m_hi = "(m1 - 1)";
  if (masked && k->v.nm > 1) {
    sb_printf(s,
              "    // the rows flatten %d query axes; the masks read %s\n"
              "    const int64_t e_q = %s, q0 = m0 / e_q, q1 = (m1 - 1) / e_q;\n"
              "    const int64_t mlo = q0 == q1 ? m0 - q0 * e_q : 0, mhi = q0 == q1 ? m1 - 1 - q0 * e_q : e_q - 1;\n",
              k->v.nm, r->it[mq].name, sxc(g->A, r->it[mq].size, false));
    m_lo = "mlo", m_hi = "mhi";
  }
  int nmasks = 0;
  for (int l = 0; l <= k->sm.x; l++) {
    const rexpr *e = r->lets[l].e;
    const ib_guard *gd;
    int kind = mask_kind(k, r, e, &gd);
    if (!kind) continue;
    /* min and max of the guard expression over the tile */
    const sx *ge = gd->e;
    strbuf lo = {0}, hi = {0};
    if (ge->c0) sb_printf(&lo, "%lld", (long long)ge->c0), sb_printf(&hi, "%lld", (long long)ge->c0);
    for (int t = 0; t < ge->nterms; t++) {
      const sx_atom *at = ge->terms[t].atom;
      int64_t cf = ge->terms[t].coef;
      if (at->kind == SXA_PARAM) {
        const char *x = arena_printf(g->A, "p->%s", lc(g->A, at->name));
        lin_term(&lo, cf, x), lin_term(&hi, cf, x);
        continue;
      }
      bool is_m = strcmp(at->name, r->it[mq].name) == 0;
      const char *a0 = is_m ? m_lo : "n0", *a1 = is_m ? m_hi : "(n1 - 1)";
      lin_term(&lo, cf, cf > 0 ? a0 : a1);
      lin_term(&hi, cf, cf > 0 ? a1 : a0);
    }
    if (!lo.n) sb_puts(&lo, "0"), sb_puts(&hi, "0");
    const char *glo = sxc(g->A, gd->lo, false);
    const char *ghi = gd->hi ? sxc(g->A, gd->hi, false) : NULL;
    /* the guard holds everywhere / nowhere on the tile */
    const char *all = ghi ? arena_printf(g->A, "emin >= %s && emax < %s", glo, ghi) : arena_printf(g->A, "emin >= %s", glo);
    const char *none = ghi ? arena_printf(g->A, "emax < %s || emin >= %s", glo, ghi) : arena_printf(g->A, "emax < %s", glo);
    sb_printf(s, "    {  // mask %s\n", cmt(g->A, r->lets[l].name));
    sb_printf(s, "      [[maybe_unused]] const int64_t emin = %s, emax = %s;\n", sb_str(&lo), sb_str(&hi));
    if (!full) sb_printf(s, "      if (%s) return false;  // the mask removes the whole tile\n", kind == 1 ? all : none);
    else sb_printf(s, "      if (!(%s)) return false;  // the mask removes some element\n", kind == 1 ? none : all);
    sb_puts(s, "    }\n");
    sb_free(&lo);
    sb_free(&hi);
    nmasks++;
  }
  if (!nmasks) sb_puts(s, "    (void)p, (void)m0, (void)m1, (void)n0, (void)n1;\n");
  sb_puts(s, "    (void)bi;\n    return true;\n  }\n");
}

/* cm * dm + cn * dn as `lm.<f> - dm + dn` */
static const char *lane_sum(arena *A, const char *f, int64_t cm, int64_t cn) {
  const char *x = arena_printf(A, "lm.%s", f);
  const int64_t cf[2] = {cm, cn};
  const char *nm[2] = {"dm", "dn"};
  for (int i = 0; i < 2; i++) {
    if (!cf[i]) continue;
    long long a = cf[i] < 0 ? -(long long)cf[i] : (long long)cf[i];
    x = a == 1 ? arena_printf(A, "%s %c %s", x, cf[i] < 0 ? '-' : '+', nm[i])
               : arena_printf(A, "%s %c %lld * %s", x, cf[i] < 0 ? '-' : '+', a, nm[i]);
  }
  return x;
}

/* The GPU IR's lane masks (gpu_kernel.lane_mask): lane_mask() evaluates each
 * mask's guard minus its bounds once at a lane's first element, and
 * score_lane() is score() with each mask's guard a compare of that value
 * plus the element's offset, a constant once the fragment loops unroll. */
static void lane_fns(opgen *g, const gpu_kernel *k) {
  const region *r = g->r;
  strbuf *s = g->s;
  arena *A = g->A;
  if (!k->lane_mask) {
    sb_puts(s, "  static constexpr bool LANE_MASK = false;  // the masks are tested at each element's indices\n");
    return;
  }
  const bool rows = k->lane_rows;
  if (rows)
    sb_puts(s, "  // the masks per lane: each guard minus its bounds at each of the lane's rows mi + ATT_LANE_ROW * h\n"
               "  // (the rows flatten the query axes) and its first key (clamped to 32 bits), then per element that\n"
               "  // value plus the element's key offset dn: one compare, no index arithmetic\n"
               "  static constexpr bool LANE_MASK = true;\n  struct LaneMask {\n");
  else
    sb_puts(s, "  // the masks per lane: each guard minus its bounds at the lane's first element (clamped to 32 bits),\n"
               "  // then per element that value plus the element's offset (dm, dn): one compare, no index arithmetic\n"
               "  static constexpr bool LANE_MASK = true;\n  struct LaneMask {\n");
  const char *nr = rows ? "[dlc::ATT_LANE_ROWS]" : "";
  for (int i = 0; i < k->nmasks; i++)
    sb_printf(s, "    int g%d%s%s;  // %s\n", i, nr, k->masks[i].guard->hi ? arena_printf(A, ", h%d%s", i, nr) : "",
              cmt(A, r->lets[k->masks[i].let].name));
  sb_puts(s, "  };\n");
  sb_puts(s, "  static __device__ __forceinline__ void lane_mask([[maybe_unused]] const Params *p, [[maybe_unused]] int64_t mi,\n"
             "                                                  [[maybe_unused]] int64_t ni, [[maybe_unused]] int64_t bi,\n"
             "                                                  [[maybe_unused]] LaneMask &lm) {\n");
  const char *in = rows ? "      " : "    ", *ix = rows ? "[h]" : "";
  if (k->nmasks) {
    if (!rows) decompose(g, "mi", k->v.m_axes, k->v.nm, "    ");
    decompose(g, "ni", k->v.n_axes, k->v.nn, "    ");
    decompose(g, "bi", k->v.b_axes, k->v.nb, "    ");
    if (rows) sb_puts(s, "#pragma unroll\n    for (int h = 0; h < dlc::ATT_LANE_ROWS; ++h) {\n"
                         "      const int64_t mh = mi + dlc::ATT_LANE_ROW * h;\n");
    if (rows) decompose(g, "mh", k->v.m_axes, k->v.nm, in);
  }
  for (int i = 0; i < k->nmasks; i++) {
    const ib_guard *gd = k->masks[i].guard;
    sb_printf(s, "%slm.g%d%s = dlc::clamp_lane(%s);\n", in, i, ix, sxc(A, sx_sub(A, gd->e, gd->lo), false));
    if (gd->hi) sb_printf(s, "%slm.h%d%s = dlc::clamp_lane(%s);\n", in, i, ix, sxc(A, sx_sub(A, gd->e, gd->hi), false));
  }
  if (k->nmasks && rows) sb_puts(s, "    }\n");
  sb_puts(s, "  }\n");
  if (rows) {
    /* the rows' values at key 0 once a CTA, then + cn * n a tile: the row
     * decompositions (64-bit divisions) leave the key loops */
    sb_puts(s, "  // the same, the rows' part once a CTA: each mask's guard minus its bounds at the lane's rows and key 0\n"
               "  struct LaneRows {\n");
    for (int i = 0; i < k->nmasks; i++)
      sb_printf(s, "    int64_t g%d%s%s;  // %s\n", i, nr, k->masks[i].guard->hi ? arena_printf(A, ", h%d%s", i, nr) : "",
                cmt(A, r->lets[k->masks[i].let].name));
    sb_puts(s, "  };\n"
               "  static __device__ __forceinline__ void lane_rows([[maybe_unused]] const Params *p, [[maybe_unused]] int64_t mi,\n"
               "                                                  [[maybe_unused]] int64_t bi, [[maybe_unused]] LaneRows &lr) {\n");
    sb_printf(s, "    [[maybe_unused]] const int64_t i_%s = 0;\n", cid(A, r->it[k->v.n_axes[0]].name));
    decompose(g, "bi", k->v.b_axes, k->v.nb, "    ");
    sb_puts(s, "#pragma unroll\n    for (int h = 0; h < dlc::ATT_LANE_ROWS; ++h) {\n"
               "      const int64_t mh = mi + dlc::ATT_LANE_ROW * h;\n");
    decompose(g, "mh", k->v.m_axes, k->v.nm, "      ");
    for (int i = 0; i < k->nmasks; i++) {
      const ib_guard *gd = k->masks[i].guard;
      sb_printf(s, "      lr.g%d[h] = %s;\n", i, sxc(A, sx_sub(A, gd->e, gd->lo), false));
      if (gd->hi) sb_printf(s, "      lr.h%d[h] = %s;\n", i, sxc(A, sx_sub(A, gd->e, gd->hi), false));
    }
    sb_puts(s, "    }\n  }\n"
               "  static __device__ __forceinline__ void lane_mask_at([[maybe_unused]] const Params *p, const LaneRows &lr,\n"
               "                                                     [[maybe_unused]] int64_t ni, LaneMask &lm) {\n"
               "#pragma unroll\n    for (int h = 0; h < dlc::ATT_LANE_ROWS; ++h) {\n");
    for (int i = 0; i < k->nmasks; i++) {
      long long cn = (long long)k->masks[i].cn;
      const char *add = cn == 0 ? "" : cn == 1 ? " + ni" : cn == -1 ? " - ni" : arena_printf(A, " %c %lld * ni", cn < 0 ? '-' : '+', cn < 0 ? -cn : cn);
      sb_printf(s, "      lm.g%d[h] = dlc::clamp_lane(lr.g%d[h]%s);\n", i, i, add);
      if (k->masks[i].guard->hi) sb_printf(s, "      lm.h%d[h] = dlc::clamp_lane(lr.h%d[h]%s);\n", i, i, add);
    }
    sb_puts(s, "    }\n  }\n");
  }
  epigen eg = {g, {{0}}, 0, false, "s", 0, {0}, {0}, false, 0, {0}, {0}, NULL, NULL};
  for (int i = 0; i < k->nmasks; i++) {
    const gpu_mask *mk = &k->masks[i];
    const char *hx = rows ? "[dm / dlc::ATT_LANE_ROW]" : "";
    const int64_t cm = rows ? 0 : mk->cm;
    const char *t = arena_printf(A, "(0 <= %s", lane_sum(A, arena_printf(A, "g%d%s", i, hx), cm, mk->cn));
    if (mk->guard->hi) t = arena_printf(A, "%s && %s < 0", t, lane_sum(A, arena_printf(A, "h%d%s", i, hx), cm, mk->cn));
    eg.lane_gd[eg.nlane] = mk->guard, eg.lane_test[eg.nlane++] = arena_printf(A, "%s)", t);
  }
  sb_puts(s, "  // the score lets at the lane's element (mi + dm, ni + dn), its masks from lane_mask's values\n"
             "  static __device__ __forceinline__ float score_lane([[maybe_unused]] const Params *p, [[maybe_unused]] int64_t mi,\n"
             "                                                    [[maybe_unused]] int64_t ni, [[maybe_unused]] int64_t bi,\n"
             "                                                    [[maybe_unused]] const LaneMask &lm, [[maybe_unused]] int dm,\n"
             "                                                    [[maybe_unused]] int dn, float s) {\n"
             "    [[maybe_unused]] const int64_t mx = mi + dm, nx = ni + dn;\n");
  decompose(g, "mx", k->v.m_axes, k->v.nm, "    ");
  decompose(g, "nx", k->v.n_axes, k->v.nn, "    ");
  decompose(g, "bi", k->v.b_axes, k->v.nb, "    ");
  for (int l = 0; l <= k->sm.x; l++) {
    if (l == r->acc_let) continue;
    const rexpr *e = r->lets[l].e;
    strbuf x = {0};
    expr_c(&eg, &x, e);
    sb_printf(s, "    const %s v_%s = %s;\n", e->dt == DT_BOOL ? "bool" : "float", cid(A, r->lets[l].name), sb_str(&x));
    sb_free(&x);
  }
  sb_printf(s, "    return %s;\n  }\n", k->sm.x == r->acc_let ? "s" : arena_printf(A, "v_%s", cid(A, r->lets[k->sm.x].name)));
}

/* The attention Op's kernel<VEC>(p), as the contraction's (kernel_fn): each
 * statement one call on the CTA's state c (templates/sm80_attention.cuh,
 * Sm80AttCta), commented with its kind; a pass's Loop runs over the key
 * tiles its mode (the Loop's lo) selects, its first tile copied before it
 * (t0, t1, t2); S = Q K^T's fragment loads and MMAs are a loop over the k16
 * steps and the key fragments, P V's a loop over P's k16 steps (P's
 * fragments) and V's fragment pairs.  verify_att_render admits only lists
 * that render. */
static void a_alloc(sm80_render *r, const gpu_stmt *st) {
  r_line(r, st, st->side == GSIDE_A ? "c.alloc_q();" : "c.alloc_kv();");
}

static void a_acc_zero(sm80_render *r, const gpu_stmt *st) { r_line(r, st, "c.acc_zero();"); }

static void a_cp_async(sm80_render *r, const gpu_stmt *st) {
  if (st->side == GSIDE_A) {
    r_line(r, st, "c.copy_q(p);");
  } else if (!r->loop) {
    sb_printf(r->s, "%sconst int64_t t%d = c.template next<%d>(p, -1);\n", r->ind, st->lo, st->lo);
    r_line(r, st, arena_printf(r->A, "c.template copy_kv<%d>(p, t%d, c.st);", st->lo, st->lo));
  } else {
    sb_printf(r->s, "%sconst int64_t tn = c.template next<%d>(p, t);\n", r->ind, st->lo);
    r_line(r, st, arena_printf(r->A, "c.template copy_kv<%d>(p, tn, c.st ^ 1);", st->lo));
  }
}

static void a_frag_setup(sm80_render *r, const gpu_stmt *st) {
  r_line(r, st, st->side == GSIDE_V ? "c.frag_setup_v();" : "c.frag_setup_k();");
}

static void a_addr_setup(sm80_render *r, const gpu_stmt *st) {
  r_line(r, st, st->side == GSIDE_A ? "c.lane_rows(p);" : "c.kv_setup(p);");
}

static void a_loop(sm80_render *r, const gpu_stmt *st) {
  sb_printf(r->s, "%sfor (int64_t t = t%d; t < c.nt;) {  // Loop %s: pass %d, %s\n", r->ind, st->lo, r_text(r, st->what),
            st->lo, st->lo == 0 ? "full tiles" : st->lo == 1 ? "masked tiles" : "the key tail");
  r_indent(r, 1);
  r->loop = st->loop, r->pass = st->lo;
}

static void a_end_loop(sm80_render *r, const gpu_stmt *st) {
  r_line(r, st, "c.st ^= 1, t = tn;");
  r_indent(r, -1);
  sb_printf(r->s, "%s}\n", r->ind);
  r->loop = GLOOP_NONE;
}

/* S = Q K^T: Q's fragments (re-read a key tile, or kept), K's, then the
 * MMAs, opened by the first of them */
static void a_qk_open(sm80_render *r) {
  sb_printf(r->s, "%stypename C::SFrag s;\n%sc.s_zero(s);\n#pragma unroll\n%sfor (int kk = 0; kk < C::KD; ++kk) {\n",
            r->ind, r->ind, r->ind);
  r_indent(r, 1);
  sb_printf(r->s, "%suint32_t qk[4];\n", r->ind);
  r->group = 1;
}

static void a_ldmatrix(sm80_render *r, const gpu_stmt *st) {
  if (st->side == GSIDE_A && !r->loop) {
    r_line(r, st, "c.q_frags();");
  } else if (st->side == GSIDE_A) {
    a_qk_open(r);
    r_line(r, st, "c.q_reload(qk, kk);");
  } else if (st->side == GSIDE_B) {
    if (!r->group) a_qk_open(r);
    sb_printf(r->s, "#pragma unroll\n%sfor (int j = 0; j < C::NTS; j += 2) {\n", r->ind);
    r_indent(r, 1);
    sb_printf(r->s, "%suint32_t kf[4];\n", r->ind);
    r_line(r, st, "c.k_frags(kf, c.st, kk, j);");
  } else {
    sb_printf(r->s, "#pragma unroll\n%sfor (int j = 0; j < C::NTO; j += 2) {\n", r->ind);
    r_indent(r, 1);
    sb_printf(r->s, "%suint32_t vf[4];\n", r->ind);
    r_line(r, st, "c.v_frags(vf, c.st, kk, j);");
  }
}

static void a_mma(sm80_render *r, const gpu_stmt *st) {
  r_line(r, st, st->side == GSIDE_V ? "c.mma_o(pf, vf, j);" : "c.mma_s(s, qk, kk, kf, j);");
  for (int i = 0; i < 2; i++) {
    r_indent(r, -1);
    sb_printf(r->s, "%s}\n", r->ind);
  }
  r->group = 0;
}

void a_epilogue(sm80_render *r, const gpu_stmt *st) {
  int m = r->pass;
  switch (st->step) {
  case GSTEP_SCORE_FULL:
    sb_printf(r->s, "%sfloat mnew[2];\n", r->ind);
    r_line(r, st, "c.score_full(p, s, t, mnew);");
    return;
  case GSTEP_SCORE:
    sb_printf(r->s, "%sfloat mnew[2];\n", r->ind);
    r_line(r, st, arena_printf(r->A, "c.template score<%d>(p, s, t, mnew);", m));
    return;
  case GSTEP_LANE_MASK:
    sb_printf(r->s, "%stypename Self::LaneMask lm;\n", r->ind);
    r_line(r, st, "c.lane_mask(p, t, lm);");
    return;
  case GSTEP_SCORE_LANE:
    sb_printf(r->s, "%sfloat mnew[2];\n", r->ind);
    r_line(r, st, arena_printf(r->A, "c.template score_lane<%d>(p, s, t, lm, mnew);", m));
    return;
  case GSTEP_ROW_MAX: r_line(r, st, "c.row_max(mnew);"); return;
  case GSTEP_RESCALE:
    sb_printf(r->s, "%sfloat mref[2], scale[2];\n", r->ind);
    r_line(r, st, "c.rescale(mnew, mref, scale);");
    return;
  case GSTEP_PROBS: r_line(r, st, "c.probs(s, mref, scale);"); return;
  case GSTEP_P_FRAGS:
    /* P V: a k16 step of P's fragments, then V's pairs and their MMAs */
    sb_printf(r->s, "#pragma unroll\n%sfor (int kk = 0; kk < C::BN / 16; ++kk) {\n", r->ind);
    r_indent(r, 1);
    sb_printf(r->s, "%stypename C::PFrag pf;\n", r->ind);
    r_line(r, st, "c.p_frags(s, kk, pf);");
    r->group = 2;
    return;
  case GSTEP_FINISH: r_line(r, st, "c.finish();"); return;
  case GSTEP_NONE: r_epilogue_pair(r, st, "0"); return; /* the output's pairs (O's tile is at column 0) */
  }
}

void a_reduce(sm80_render *r, const gpu_stmt *st) { r_line(r, st, "c.row_sums();"); }

void a_stage_acc(sm80_render *r, const gpu_stmt *st) { r_line(r, st, "float *stage = c.stage_o();"); }

static const sm80_render_fn ATT_RENDER[GS__COUNT] = {
    [GS_TILE_COORD] = r_tile_coord, [GS_ALLOC_SHARED] = a_alloc,     [GS_ACC_ZERO] = a_acc_zero,
    [GS_CP_ASYNC] = a_cp_async,     [GS_COMMIT] = r_commit,          [GS_WAIT] = r_wait,
    [GS_BARRIER] = r_barrier,       [GS_LDMATRIX] = a_ldmatrix,      [GS_FRAG_SETUP] = a_frag_setup,
    [GS_ADDR_SETUP] = a_addr_setup, [GS_LOOP] = a_loop,              [GS_END_LOOP] = a_end_loop,
    [GS_MMA] = a_mma,               [GS_EPILOGUE] = a_epilogue,      [GS_REDUCE] = a_reduce,
    [GS_STAGE_ACC] = a_stage_acc,   [GS_ST_GLOBAL] = r_st_global,
};

void attention_op(emit_ctx *c, strbuf *s, const emit_op *eo, const emit_instance *in, const char *sname) {
  arena *A = c->A;
  const gpu_kernel *k = in->k;
  const region *r = k->r;
  opgen g = {A, &k->v, r, s, k->T, k->math_ieee, c->log, false};
  const sched_plan *p = &k->plan;
  sb_printf(s, "// plan: %d query rows x %d keys per step (%d warps x 16 rows), head dims %d / %d, vec %d, %s\n",
            p->tile[0], p->tile[1], p->warps_m * p->warps_n, k->D, k->DV, p->vec, algo_name(k->algo));
  sb_printf(s, "template <class T_>\nstruct %s {\n", sname);
  sb_printf(s, "  using T = T_;\n  using PT = %s;\n  using OutT = %s;\n  using Params = dlc__p_%s;\n",
            k->sm.pt == k->T ? "T_" : ctype(k->sm.pt), k->v2.out_dt == k->T ? "T_" : ctype(k->v2.out_dt), eo->op->name);
  sb_printf(s, "  static constexpr int BM = %d, BN = %d, D = %d, DV = %d;\n", p->tile[0], p->tile[1], k->D, k->DV);
  sb_printf(s, "  static constexpr int SWZ_D = %d, SWZ_DV = %d;  // 16-byte chunks XORed in a shared row (GPU IR)\n",
            k->tiles[1].swz, k->tiles[2].swz);
  sb_printf(s, "  static constexpr bool Q_REGS = %s;  // Q fragments %s\n", p->a_frag_regs ? "true" : "false",
            p->a_frag_regs ? "stay in registers" : "are re-read from shared memory per key tile");
  sb_printf(s, "  static constexpr float MAX_INIT = %s;  // %s's init\n", flit(A, k->sm.max_init, DT_FP32),
            cmt(A, r->lets[k->sm.max].name));
  group_comment(&g, "queries", k->v.m_axes, k->v.nm);
  group_comment(&g, "keys", k->v.n_axes, k->v.nn);
  group_comment(&g, "batch", k->v.b_axes, k->v.nb);
  sb_printf(s, "  static __device__ __forceinline__ int64_t extent_kv(const Params *p) { return %s; }\n",
            sxc(A, group_extent(&g, k->v.n_axes, k->v.nn), false));
  if (wgmma(k)) {
    /* the TMA producer: the kernel's parameter block, the ring, setmaxnreg */
    sb_printf(s, "  using TParams = dlc__tp_%s;\n", eo->op->name);
    sb_printf(s, "  static constexpr int STAGES = %d, THREADS = %d;  // the K/V ring; producer + consumer warpgroups\n",
              p->stages, k->threads);
    tmap_box_fn(&g, &k->tmq, "q_box", "Q_RANK", "Q");
    tmap_box_fn(&g, &k->tmk, "k_box", "K_RANK", "K");
  } else {
    chunk_fn(&g, &k->A, "q_chunk", k->v.m_axes, k->v.nm, k->v.k_axes, k->v.nk, "Q");
    chunk_fn(&g, &k->B, "k_chunk", k->v.n_axes, k->v.nn, k->v.k_axes, k->v.nk, "K");
  }
  /* the score lets */
  epigen eg = {&g, {{0}}, 0, false, "s", 0, {0}, {0}, false, 0, {0}, {0}, NULL, NULL};
  sb_printf(s, "  // the score lets of region %s on one element s of %s = QK^T\n", cmt(A, r->name), cmt(A, r->lets[r->acc_let].name));
  for (int l = 0; l <= k->sm.x; l++)
    if (l != r->acc_let) cmt_let(A, s, "  //   ", r, l);
  /* score, and score_full for tiles no mask touches (tile_full): there each
   * mask is its kept branch, and what only the masks read goes unused */
  for (int full = 0; full < 2; full++) {
    if (full) sb_puts(s, "  // the same on a tile where tile_full holds: every mask keeps the element\n");
    sb_printf(s,
              "  static __device__ __forceinline__ float %s([[maybe_unused]] const Params *p, [[maybe_unused]] int64_t mi,\n"
              "                                               [[maybe_unused]] int64_t ni, [[maybe_unused]] int64_t bi, "
              "float s) {\n",
              full ? "score_full" : "score");
    decompose(&g, "mi", k->v.m_axes, k->v.nm, "    ");
    decompose(&g, "ni", k->v.n_axes, k->v.nn, "    ");
    decompose(&g, "bi", k->v.b_axes, k->v.nb, "    ");
    for (int l = 0; l <= k->sm.x; l++) {
      if (l == r->acc_let) continue;
      const rexpr *e = r->lets[l].e;
      const ib_guard *gd;
      int kind = full ? mask_kind(k, r, e, &gd) : 0;
      strbuf x = {0};
      expr_c(&eg, &x, kind == 1 ? e->c : kind == 2 ? e->b : e);
      sb_printf(s, "    const %s v_%s = %s;\n", e->dt == DT_BOOL ? "bool" : "float", cid(A, r->lets[l].name), sb_str(&x));
      sb_free(&x);
    }
    sb_printf(s, "    return %s;\n  }\n",
              k->sm.x == r->acc_let ? "s" : arena_printf(A, "v_%s", cid(A, r->lets[k->sm.x].name)));
  }
  lane_fns(&g, k);
  /* exp2(a - b) and a / l, from the softmax lets */
  epigen ex = {&g, {{0}}, 0, false, "s", 2, {k->sm.x, k->sm.max}, {"a", "b"}, false, 0, {0}, {0}, NULL, NULL};
  strbuf x = {0};
  expr_c(&ex, &x, r->lets[k->sm.sub].e);
  cmt_let(A, s, "  // ", r, k->sm.sub);
  cmt_let(A, s, "  // ", r, k->sm.exp);
  sb_printf(s, "  static __device__ __forceinline__ float expdiff(float a, float b) {\n    const float v_%s = %s;\n",
            cid(A, r->lets[k->sm.sub].name), sb_str(&x));
  sb_free(&x);
  /* the running max is at least every score it has seen: exp2's argument
   * is <= 0 both for the probabilities and for the rescaling */
  epigen ex2 = {&g, {{0}}, 0, false, "s", 0, {0}, {0}, true, 0, {0}, {0}, NULL, NULL};
  expr_c(&ex2, &x, r->lets[k->sm.exp].e);
  sb_printf(s, "    return %s;\n  }\n", sb_str(&x));
  sb_free(&x);
  epigen dv = {&g, {{0}}, 0, false, "s", 2, {k->sm.exp, k->sm.sum}, {"o", "l"}, false, 0, {0}, {0}, NULL, NULL};
  expr_c(&dv, &x, r->lets[k->sm.div].e);
  cmt_let(A, s, "  // ", r, k->sm.div);
  sb_printf(s, "  static __device__ __forceinline__ float finish(float o, float l) { return %s; }\n", sb_str(&x));
  sb_free(&x);
  tile_test_fn(&g, k, false);
  tile_test_fn(&g, k, true);
  /* region 2: V and the output */
  opgen g2 = {A, &k->v2, k->v2.r, s, k->T, k->math_ieee, c->log, false};
  if (wgmma(k)) tmap_box_fn(&g2, &k->tmv, "v_box", "V_RANK", "V");
  else chunk_fn(&g2, &k->V, "v_chunk", k->v2.n_axes, k->v2.nn, k->v2.k_axes, k->v2.nk, "V");
  /* the GPU IR's row steps: full key tiles stream from one pointer each
   * (the sm80 row; the TMA producer's boxes need none) */
  if (!wgmma(k) && k->B.rstep && k->V.rstep)
    sb_printf(s,
              "  // full key tiles stream K and V rows: elements between consecutive keys\n"
              "  static constexpr bool KV_STREAM = true;\n"
              "  static __device__ __forceinline__ int64_t k_rstep([[maybe_unused]] const Params *p) { return %s; }\n"
              "  static __device__ __forceinline__ int64_t v_rstep([[maybe_unused]] const Params *p) { return %s; }\n",
              sxc(A, k->B.rstep, false), sxc(A, k->V.rstep, false));
  else if (!wgmma(k))
    sb_puts(s, "  static constexpr bool KV_STREAM = false;  // a row step holds an index: the chunk functions load\n");
  epilogue_fn(&g2, " (O already divided by the row sum)");
  if (k->epi_vec) {
    /* the output tile is BM queries x DV */
    sb_printf(s, "  static __device__ __forceinline__ int64_t extent_m(const Params *p) { return %s; }\n",
              sxc(A, group_extent(&g2, k->v2.m_axes, k->v2.nm), false));
    sb_printf(s, "  static __device__ __forceinline__ int64_t extent_n([[maybe_unused]] const Params *p) { return %s; }\n",
              sxc(A, group_extent(&g2, k->v2.n_axes, k->v2.nn), false));
    epilogue_full_fn(&g2, k->epi_vec, "DV");
  } else {
    sb_puts(s, "  static constexpr int EPI_VEC = 0;  // the GPU IR has no full-width epilogue\n");
  }
  if (!wgmma(k)) {
    render_kernel(A, c->log, s, k, sname, "sm80_attention.cuh", "Sm80AttCta", ATT_RENDER);
  } else {
    att90_kernel_fns(A, c->log, s, k, sname);
  }
  sb_puts(s, "};\n\n");
}

/* its tile, head dims and masks, its operands Q, K, V and statements */
static void att_dump(cJSON *g, const gpu_kernel *k) {
  dump_tile_head(g, k);
  dump_attention_tile(g, k);
  dump_vecs(g, k);
  dump_math(g, k);
  dump_operands(g, k, 3, false);
  dump_stmts(g, k, false);
}

/* ---- the pipeline's part ----------------------------------------------------------------- */

/* QK^T with its score lets and a deferred row softmax (a row max after
 * the contraction), then P V */
static bool att_fits(const region_set *rs, const pc_report *pc) {
  return rs->n == 2 && region_streams_to(&rs->r[0], &rs->r[1]);
}

static bool att_verify_plan(const region_set *rs, const pc_report *pc, const sched_plan *p,
                            const arch_info *const *archs, int na, const char *at, diag_list *dl) {
  return plan_fits_archs(p, ALGO_STREAMING_SOFTMAX, archs, na, dl);
}

static gpu_kernel *att_build(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p, const char *name,
                             diag_list *dl) {
  return gpuir_build_attention(A, rs, pc, p, name, dl);
}

/* ---- the skeleton's table ---------------------------------------------------------- */

static bool att_verify(const gpu_kernel *k, diag_list *dl) {
  bool ok = verify_stage_reuse(k, dl);
  ok &= verify_epilogue_width(k, k->DV, k->v2.out_dt, k->threads, dl);
  ok &= verify_lane_masks(k, dl);
  ok &= verify_att_render(k, dl);
  ok &= gpuir_verify_stores(k, false, dl);
  return ok;
}

const skel_ops skel_sm80_attention = {
    .algo = ALGO_STREAMING_SOFTMAX, .shape = SKEL_ATTENTION, .arch = ARCH_SM80, .only = false,
    .fits = att_fits,               .verify_plan = att_verify_plan, .build = att_build,
    .verify = att_verify,           .render = attention_op,         .dump = att_dump,
};
