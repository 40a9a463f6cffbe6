/* The row skeleton (algo_choice row_reduce, templates/sm80_rows.cuh): a
 * region without a contraction, its reductions over one axis (Softmax,
 * LayerNorm, RMSNorm, Reduce), a warp or a CTA a row.  Here are its view of
 * the region (gpuir_rows_view), its GPU IR builder (gpuir_build_rows: the
 * row cache, then one pass a reduction), its checks (verify_rows) and its
 * renderer (rows_op: the Op and its kernel, from the statements). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "emit_int.h"
#include "gpuir_int.h"
#include "skel.h"
#include "strbuf.h"

static bool verify_rows_render(const gpu_kernel *k, diag_list *dl);

/* rows: every output stored once, fed by its pass; a reduction folds the
 * lets of its own pass */
static bool verify_rows(const gpu_kernel *k, diag_list *dl) {
  bool ok = true;
  const region *r = k->r;
  ok &= verify_rows_render(k, dl);
  for (int o = 0; o < r->nout; o++) {
    int n = 0;
    for (int i = 0; i < k->nst; i++)
      n += k->st[i].k == GS_ST_GLOBAL && k->st[i].pass >= 0 && k->st[i].pass < r->nyields &&
           r->yields[k->st[i].pass].output == o;
    if (n != 1) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "output %s is stored %d times by the row skeleton", r->out[o].name, n);
      ok = false;
    }
  }
  /* a gather loads through its index: it consumes the index's load,
   * made earlier in the same pass */
  for (int i = 0; i < k->nst; i++) {
    const gpu_stmt *s = &k->st[i];
    if (s->k != GS_LD_GATHER) continue;
    bool fed = s->nin > 0;
    for (int t = 0; t < s->nin; t++) {
      bool loaded = false;
      for (int j = i - 1; j >= 0 && k->st[j].k != GS_LOOP; j--)
        loaded |= k->st[j].out && k->st[j].out == s->in[t] &&
                  (k->st[j].k == GS_LD_GLOBAL || k->st[j].k == GS_LD_SHARED || k->st[j].k == GS_LD_GATHER);
      fed &= loaded;
    }
    if (!fed) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the gather of %s does not follow the load of its index in its pass",
                  s->what);
      ok = false;
    }
  }
  for (int i = 0; i < k->nst; i++)
    if (k->st[i].k == GS_REDUCE && (i == 0 || k->st[i - 1].k != GS_END_LOOP)) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "reduction %s does not follow its pass over the row", k->st[i].what);
      ok = false;
    }
  int64_t cache = (int64_t)k->rw.ncache * k->rw.cache_cap * 4 * (k->rw.row_warps == 1 ? k->rw.warps : 1);
  if (cache > GPUIR_ROW_CACHE_BYTES || (k->rw.ncache && (k->rw.cache_cap < 1 || k->rw.cache_cap % k->rw.vec))) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the row cache takes %lld bytes of shared memory, over %d",
                (long long)cache, GPUIR_ROW_CACHE_BYTES);
    ok = false;
  }
  /* a fused value lives in registers: no input, output, load or store names it */
  int nf = 0;
  for (int i = 0; i < k->nst; i++) {
    if (k->st[i].k != GS_FUSED) continue;
    const char *v = k->st[i].what;
    bool named = nf >= k->nfused || strcmp(k->fused[nf], v) != 0;
    nf++;
    for (int j = 0; j < r->nin; j++) named |= strcmp(r->in[j].name, v) == 0;
    for (int j = 0; j < r->nout; j++) named |= strcmp(r->out[j].name, v) == 0;
    for (int j = 0; j < k->nst; j++) {
      const gpu_stmt *s = &k->st[j];
      bool ld = (s->k == GS_LD_GLOBAL || s->k == GS_LD_SHARED) && s->rd;
      bool st = s->k == GS_ST_GLOBAL && s->pass >= 0 && s->pass < r->nyields;
      named |= (ld && strcmp(r->in[s->rd->input].name, v) == 0) ||
               (st && strcmp(r->out[r->yields[s->pass].output].name, v) == 0);
    }
    if (named) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "fused value %s is loaded, stored or a kernel argument", v);
      ok = false;
    }
  }
  if (nf != k->nfused) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "%d fused values, %d Fused statements", k->nfused, nf);
    ok = false;
  }
  if (k->rw.row_warps < 1 || k->rw.warps % k->rw.row_warps || k->threads != 32 * k->rw.warps || k->nvec != 1 ||
      k->rw.vec < 1 || k->rw.vec > 16) {
    diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the row skeleton's %d warps, %d a row, vec %d do not fit", k->rw.warps,
                k->rw.row_warps, k->rw.vec);
    ok = false;
  }
  return ok;
}

/* Whether every Read of e has a load among st[from, to) (by the rows' read
 * identity; a gather's index Reads too). */
static bool rows_reads_loaded(const gpu_kernel *k, const rexpr *e, int from, int to, const char **missing) {
  if (!e) return true;
  if (e->k == RX_READ) {
    bool found = false;
    for (int i = from; i < to && !found; i++)
      found = k->st[i].rd && (k->st[i].rd == e || gpuir_rows_same_read(k->r, &k->rw, k->st[i].rd, e));
    if (!found) {
      *missing = k->r->in[e->input].name;
      return false;
    }
  }
  return rows_reads_loaded(k, e->a, from, to, missing) && rows_reads_loaded(k, e->b, from, to, missing) &&
         rows_reads_loaded(k, e->c, from, to, missing);
}

/* The row skeleton's statements in the order its renderer (below,
 * rows_kernel) writes them as one kernel: RowBegin and the Fused values;
 * per reduction P a Loop of pass P, its loads, its RowLets, an EndLoop, a
 * Reduce and a RowScalar of pass P; the output pass (Loop, loads, RowLets,
 * a store per element output, EndLoop) when there are element outputs;
 * then a store per row-scalar output.  Each pass loads every Read its lets
 * read (the lets spell a Read from its load), a gather after its index. */
static bool verify_rows_render(const gpu_kernel *k, diag_list *dl) {
  const region *r = k->r;
  const gpu_rows *rw = &k->rw;
  int i = 0, n = k->nst;
  const char *why = NULL;
  if (n < 1 || k->st[0].k != GS_ROW_BEGIN) why = "it does not begin with RowBegin";
  for (i = 1; !why && i < n && k->st[i].k == GS_FUSED; i++) {}
  for (int p = 0; !why && p <= rw->nred && i < n && k->st[i].k == GS_LOOP; p++) {
    const gpu_stmt *lp = &k->st[i++];
    if (lp->loop != GLOOP_ROW || lp->pass != p) {
      why = "a Loop out of pass order";
      break;
    }
    int from = i;
    for (; i < n && k->st[i].rd; i++)
      if (k->st[i].pass != p || !k->st[i].load || (k->st[i].k == GS_LD_SHARED && k->st[i].load != GLOAD_VEC) ||
          (k->st[i].load == GLOAD_ROW && k->st[i].nguard))
        why = "a load of another pass, or loaded as its kind cannot be";
    if (why) break;
    if (i - from > GPUIR_ROW_PASS_LOADS) why = "a pass loads more Reads than the renderer holds";
    if (why || i >= n || k->st[i].k != GS_ROW_LETS || k->st[i].pass != p) {
      why = why ? why : "a pass's loads are not followed by its RowLets";
      break;
    }
    bool need[GPUIR_ROW_LETS] = {0};
    gpuir_rows_pass_lets(r, rw, p, need);
    const char *missing = NULL;
    bool loaded = p == rw->nred || rows_reads_loaded(k, r->lets[rw->red_let[p]].e->a, from, i, &missing);
    for (int l = 0; l < r->nlets && loaded; l++)
      if (need[l]) loaded = rows_reads_loaded(k, r->lets[l].e, from, i, &missing);
    if (!loaded) {
      diag_report(dl, D_INTERNAL, "GPU IR", NULL, "pass %d of the row skeleton reads %s without loading it", p, missing);
      return false;
    }
    i++;
    if (p == rw->nred)
      for (; i < n && k->st[i].k == GS_ST_GLOBAL; i++)
        if (rw->scalar[r->yields[k->st[i].pass].let]) why = "a row-scalar output stored in the output pass";
    if (why || i >= n || k->st[i].k != GS_END_LOOP) {
      why = why ? why : "a pass does not end in EndLoop";
      break;
    }
    i++;
    if (p == rw->nred) break;
    if (i + 1 >= n || k->st[i].k != GS_REDUCE || k->st[i].pass != p || k->st[i + 1].k != GS_ROW_SCALAR ||
        k->st[i + 1].pass != p) {
      why = "a reduction's pass is not followed by its Reduce and RowScalar";
      break;
    }
    i += 2;
  }
  for (; !why && i < n; i++)
    if (k->st[i].k != GS_ST_GLOBAL || !rw->scalar[r->yields[k->st[i].pass].let])
      why = "a statement after the passes that is not a row-scalar output's store";
  if (!why) return true;
  diag_report(dl, D_INTERNAL, "GPU IR", NULL, "the row skeleton cannot render its statements: %s", why);
  return false;
}

static bool has_axis(const rexpr *e, int ax) {
  for (int i = 0; i < e->nax; i++)
    if (e->ax[i] == ax) return true;
  return false;
}

/* The Reduces below e (not e itself when `top`), and the lets e reads. */
static int count_reduces(const rexpr *e) {
  if (!e) return 0;
  return (e->k == RX_REDUCE) + count_reduces(e->a) + count_reduces(e->b) + count_reduces(e->c);
}

static bool reads_let_where(const region *r, const rexpr *e, const bool *bad) {
  if (!e) return false;
  if (e->k == RX_LET && bad[e->let]) return true;
  return reads_let_where(r, e->a, bad) || reads_let_where(r, e->b, bad) || reads_let_where(r, e->c, bad);
}

bool gpuir_rows_view(arena *A, const region *r, gpu_rows *rw, const char **why) {
  memset(rw, 0, sizeof *rw);
  rw->row_axis = -1;
  if (r->acc_let >= 0) return *why = "the region holds a contraction", false;
  if (r->nlets > GPUIR_ROW_LETS)
    return *why = arena_printf(A, "the region has %d lets; the row skeleton takes at most %d", r->nlets, GPUIR_ROW_LETS),
           false;
  /* the Reduces: each the whole of its let, over one axis, the same for all */
  for (int l = 0; l < r->nlets; l++) {
    const rexpr *e = r->lets[l].e;
    int nr = count_reduces(e);
    if (!nr) continue;
    if (e->k != RX_REDUCE || nr != 1)
      return *why = arena_printf(A, "let %s nests a reduction inside a larger expression", r->lets[l].name), false;
    if (e->nred != 1) {
      rw->hint = "Reshape the reduced axes into one, e.g. X[B,M,N] to [B, M*N], and reduce that last axis.";
      return *why = arena_printf(A, "let %s reduces %d axes; the row skeleton reduces one", r->lets[l].name, e->nred),
             false;
    }
    if (rw->row_axis >= 0 && e->red[0] != rw->row_axis) {
      rw->hint = "Write one op per reduction axis: the row skeleton runs one kernel whose reductions share their axis.";
      return *why = arena_printf(A, "let %s reduces axis %s, another reduction axis %s", r->lets[l].name,
                                 r->it[e->red[0]].name, r->it[rw->row_axis].name),
             false;
    }
    if (e->rop != RED_SUM && e->rop != RED_MAX && e->rop != RED_MIN)
      return *why = arena_printf(A, "let %s is a reduction the row skeleton does not combine", r->lets[l].name), false;
    if (rw->nred == 8) return *why = "the region has more than 8 reductions", false;
    rw->row_axis = e->red[0];
    rw->red_let[rw->nred++] = l;
  }
  for (int y = 0; y < r->nyields; y++) {
    const region_memref *m = &r->out[r->yields[y].output];
    const rexpr *e = r->lets[r->yields[y].let].e;
    if (m->rank != e->nax || m->rank == 0)
      return *why = arena_printf(A, "output %s is not stored over its let's axes", m->name), false;
  }
  if (r->nyields == 0) return *why = "the region stores nothing", false;
  /* no reduction: rows run along the first output's innermost axis */
  if (rw->row_axis < 0) {
    const rexpr *e = r->lets[r->yields[0].let].e;
    rw->row_axis = e->ax[e->nax - 1];
  }
  rw->red_axis = rw->row_axis;
  /* a reduction over a reduce axis next to element lets over an iter of
   * the same extent: the row runs along that iter */
  if (rw->nred && rw->row_axis >= r->niters) {
    const rexpr *re = r->lets[rw->red_let[0]].e;
    int cand = -1, ncand = 0;
    for (int i = 0; i < r->niters; i++)
      if (!has_axis(re, i)) cand = i, ncand++;
    if (ncand > 1) return *why = "the element lets run along more than one axis besides the rows", false;
    if (ncand == 1) {
      if (!sx_equal(r->it[cand].size, r->it[rw->red_axis].size))
        return *why = arena_printf(A, "the reductions run along %s and the element lets along %s, of another extent",
                                   r->it[rw->red_axis].name, r->it[cand].name),
               false;
      rw->row_axis = cand;
    }
  }
  int *ax = ARENA_ARRAY(A, int, r->niters + 1);
  for (int i = 0; i < r->niters; i++)
    if (i != rw->row_axis) ax[rw->nrows++] = i;
  rw->row_axes = ax;
  /* every Reduce keeps exactly the row axes, but may leave out one of
   * extent 1 (the 1 of an [M, 1] value elsewhere in the region: a row has
   * one point along it) */
  for (int i = 0; i < rw->nred; i++) {
    const rexpr *re = r->lets[rw->red_let[i]].e;
    int kept = 0;
    bool same = true;
    for (int j = 0; j < rw->nrows; j++) {
      int64_t one;
      if (has_axis(re, ax[j])) kept++;
      else same &= sx_is_int(r->it[ax[j]].size, &one) && one == 1;
    }
    same &= kept == re->nax;
    if (!same) return *why = arena_printf(A, "let %s does not keep the row axes", r->lets[rw->red_let[i]].name), false;
  }
  /* row-scalar lets read no element let */
  for (int l = 0; l < r->nlets; l++) rw->scalar[l] = !has_axis(r->lets[l].e, rw->row_axis);
  bool elem[GPUIR_ROW_LETS] = {0};
  for (int l = 0; l < r->nlets; l++) elem[l] = !rw->scalar[l];
  for (int l = 0; l < r->nlets; l++)
    if (rw->scalar[l] && r->lets[l].e->k != RX_REDUCE && reads_let_where(r, r->lets[l].e, elem))
      return *why = arena_printf(A, "row value %s reads a row element outside a reduction", r->lets[l].name), false;
  for (int i = 0; i < rw->nred; i++)
    if (!rw->scalar[rw->red_let[i]]) return *why = "a reduction keeps the row axis", false;
  /* 16-byte vectors of the narrowest tensor */
  int eb = 16;
  for (int i = 0; i < r->nin; i++)
    if (dtype_bytes(r->in[i].dt) < eb) eb = dtype_bytes(r->in[i].dt);
  for (int i = 0; i < r->nout; i++)
    if (dtype_bytes(r->out[i].dt) < eb) eb = dtype_bytes(r->out[i].dt);
  rw->vec = 16 / eb;
  return true;
}

/* Whether two Reads load the same elements of a row: the same tensor and
 * index map, where the row axis and the reduction axis (both the element
 * index along the row) count as one. */
static bool same_read_at(const region *r, const gpu_rows *rw, const rexpr *a, const rexpr *b) {
  if (a == b) return true;
  if (a->ldvar || b->ldvar) return false; /* a gather's map holds its index variable */
  if (a->input != b->input || a->nmap != b->nmap) return false;
  const char *row = r->it[rw->row_axis].name, *red = r->it[rw->red_axis].name;
  for (int d = 0; d < a->nmap; d++) {
    if (sx_equal(a->map[d], b->map[d])) continue;
    const char *va = sx_as_var(a->map[d]), *vb = sx_as_var(b->map[d]);
    bool ra = va && (strcmp(va, row) == 0 || strcmp(va, red) == 0);
    bool rb = vb && (strcmp(vb, row) == 0 || strcmp(vb, red) == 0);
    if (!ra || !rb) return false;
  }
  return true;
}

int gpuir_rows_cache_slot(const region *r, const gpu_rows *rw, const rexpr *rd) {
  for (int i = 0; i < rw->ncache; i++)
    if (same_read_at(r, rw, rw->cache_rd[i], rd)) return i;
  return -1;
}

/* A Read loaded as a vector along the row: unit stride, outside pad guards. */
static bool row_vec_read(const gpu_kernel *k, arena *A, const rexpr *e, bool under_guard) {
  if (e->ldvar) return false; /* a gather: one element at a time, through its index */
  int along = has_axis(e, k->rw.row_axis) ? k->rw.row_axis : has_axis(e, k->rw.red_axis) ? k->rw.red_axis : -1;
  const sx *st = along >= 0 && !under_guard ? gpuir_read_step(A, k->r, e, k->r->it[along].name) : NULL;
  int64_t one;
  return st && sx_is_int(st, &one) && one == 1;
}

/* The vector Reads of e, added to rd[] once each. */
static void pass_vreads(const gpu_kernel *k, arena *A, const rexpr *e, bool guard, const rexpr **rd, int *n, int cap) {
  if (!e) return;
  if (e->k == RX_READ) {
    if (!row_vec_read(k, A, e, guard)) return;
    for (int i = 0; i < *n; i++)
      if (same_read_at(k->r, &k->rw, rd[i], e)) return;
    if (*n < cap) rd[(*n)++] = e;
    return;
  }
  guard |= e->k == RX_SELECT && !e->a;
  pass_vreads(k, A, e->a, guard, rd, n, cap);
  pass_vreads(k, A, e->b, guard, rd, n, cap);
  pass_vreads(k, A, e->c, guard, rd, n, cap);
}

/* The loads of pass `pass` for expression e, in the order the lets read
 * them: each Read once (gpuir_rows_same_read, under the same pad Selects
 * gd[0..ng), loaded the same way), a gather's index before the gather.  A
 * Read under a pad Select (guards, no condition) is loaded only where the
 * guards hold, one element at a time; `index`: e is (part of) a gather's
 * index, whose int32 Reads load as int64 (emit.c's index_c).  The tokens
 * the pass's lets consume go to toks. */
typedef struct row_loader {
  gpu_kernel *k;
  arena *A;
  int pass, first;     /* the pass, and the index of its first statement */
  int *toks;
  int *nt;
  int nloads;
  bool too_deep;       /* a Read under more than GPUIR_ROW_GUARD_DEPTH pad Selects */
} row_loader;

static int row_load(row_loader *L, const rexpr *e, gpu_stmt_kind kind, gpu_load ld, const rexpr **gd, int ng,
                    const char *det, int nin, const int *in) {
  gpu_kernel *k = L->k;
  const region *r = k->r;
  for (int i = L->first; i < k->nst; i++) {
    const gpu_stmt *s = &k->st[i];
    if (!s->rd || s->load != ld || s->nguard != ng || !gpuir_rows_same_read(r, &k->rw, s->rd, e)) continue;
    bool same = true;
    for (int g = 0; g < ng; g++) same &= s->guard[g] == gd[g];
    if (same) return s->out;
  }
  /* a token per load: tL<pass>.<tensor>, then .1, .2 ... for further Reads of it */
  const char *name = arena_printf(L->A, "tL%d.%s", L->pass, r->in[e->input].name);
  int dup = 0;
  for (int i = L->first; i < k->nst; i++)
    if (k->st[i].rd && k->st[i].rd->input == e->input) dup++;
  int tok = gpuir_tok(k, L->A, dup ? arena_printf(L->A, "%s.%d", name, dup) : name);
  if (ng)
    det = arena_printf(L->A, "%s; where the guards of the %d pad Select%s around it hold, else 0", det, ng, ng > 1 ? "s" : "");
  const rexpr **g = ng ? ARENA_ARRAY(L->A, const rexpr *, ng) : NULL;
  for (int i = 0; i < ng; i++) g[i] = gd[i];
  gpu_stmt s = {.k = kind, .what = r->in[e->input].name, .detail = det, .out = tok, .lo = -1, .hi = -1, .pass = L->pass,
                .rd = e, .load = ld, .nguard = ng, .guard = g};
  for (int i = 0; i < nin && s.nin < 4; i++) s.in[s.nin++] = in[i];
  ARENA_PUSH(L->A, k->st, k->nst, k->cap_st, s);
  L->nloads++;
  return tok;
}

static void row_loads(row_loader *L, const rexpr *e, const rexpr **gd, int ng, bool index);

static void row_tok(row_loader *L, int tok) {
  for (int i = 0; i < *L->nt; i++)
    if (L->toks[i] == tok) return;
  if (*L->nt < 4) L->toks[(*L->nt)++] = tok;
}

/* A gather's index, as emit.c's index_c spells it: its int32 Reads (through
 * pad Selects, broadcasts and transposes) as int64 indices, anything else
 * as a float expression. */
static void row_index_loads(row_loader *L, const rexpr *e, const rexpr **gd, int ng) {
  if (!e) return;
  switch (e->k) {
  case RX_READ:
    if (!e->ldvar && L->k->r->in[e->input].dt == DT_INT32) {
      row_tok(L, row_load(L, e, GS_LD_GLOBAL, GLOAD_INDEX, gd, ng,
                          "one index at a time (its value picks the gathered element)", 0, NULL));
      return;
    }
    break;
  case RX_CONST: return;
  case RX_SELECT: {
    const rexpr *g2[GPUIR_ROW_GUARD_DEPTH];
    int n2 = ng;
    for (int i = 0; i < ng; i++) g2[i] = gd[i];
    if (e->a) row_loads(L, e->a, gd, ng, false);
    else if (n2 < GPUIR_ROW_GUARD_DEPTH) g2[n2++] = e;
    else L->too_deep = true;
    row_index_loads(L, e->b, g2, n2);
    row_index_loads(L, e->c, g2, n2);
    return;
  }
  case RX_BCAST:
  case RX_TRANSPOSE: row_index_loads(L, e->a, gd, ng); return;
  default: break;
  }
  row_loads(L, e, gd, ng, false);
}

static void row_loads(row_loader *L, const rexpr *e, const rexpr **gd, int ng, bool index) {
  if (!e) return;
  if (index) {
    row_index_loads(L, e, gd, ng);
    return;
  }
  gpu_kernel *k = L->k;
  const region *r = k->r;
  if (e->k == RX_READ && e->ldvar) {
    /* a gather: the index first (one element at a time: its value picks
     * the address), then the source element it selects, under its guards */
    int itok[4] = {0}, *toks = L->toks;
    int ni = 0, *nt = L->nt;
    L->toks = itok, L->nt = &ni;
    row_loads(L, e->a, gd, ng, true);
    L->toks = toks, L->nt = nt;
    strbuf g = {0};
    for (int i = 0; i < e->ng; i++)
      sb_printf(&g, "%s%s <= %s < %s", i ? " and " : "", sx_str(L->A, e->guards[i].lo), sx_str(L->A, e->guards[i].e),
                sx_str(L->A, e->guards[i].hi));
    strbuf m = {0};
    for (int i = 0; i < e->nmap; i++) sb_printf(&m, "%s%s", i ? ", " : "", sx_str(L->A, e->map[i]));
    const char *det = arena_printf(L->A, "%s[%s] with %s = the index just loaded, one element at a time, if %s; else %g",
                                   r->in[e->input].name, sb_str(&m), e->ldvar, sb_str(&g), e->cval);
    sb_free(&g);
    sb_free(&m);
    row_tok(L, row_load(L, e, GS_LD_GATHER, GLOAD_ELEM, gd, ng, det, ni, itok));
    return;
  }
  if (e->k == RX_READ) {
    int along = has_axis(e, k->rw.row_axis) ? k->rw.row_axis : has_axis(e, k->rw.red_axis) ? k->rw.red_axis : -1;
    bool vec = row_vec_read(k, L->A, e, ng > 0);
    int slot = vec ? gpuir_rows_cache_slot(k->r, &k->rw, e) : -1;
    gpu_load ld = vec ? GLOAD_VEC : along >= 0 || ng ? GLOAD_ELEM : GLOAD_ROW;
    const char *det = vec          ? arena_printf(L->A, "%d elements a thread: ld.global.v4 when 16-byte aligned, else scalar",
                                                  k->rw.vec)
                      : along >= 0 ? "one element at a time (not unit-stride along the row)"
                      : ng         ? "one element at a time"
                                   : "one value a row";
    if (slot >= 0 && k->rw.cache_first[slot] == L->pass)
      det = arena_printf(L->A, "%s; kept in row cache slot %d (st.shared) for the later passes", det, slot);
    else if (slot >= 0)
      det = arena_printf(L->A,
                         "from row cache slot %d (ld.shared, the thread's own elements) when the row has at most %d "
                         "elements, else %s",
                         slot, k->rw.cache_cap, det);
    row_tok(L, row_load(L, e, slot >= 0 && k->rw.cache_first[slot] != L->pass ? GS_LD_SHARED : GS_LD_GLOBAL, ld, gd,
                        ng, det, 0, NULL));
    return;
  }
  const rexpr *g2[GPUIR_ROW_GUARD_DEPTH];
  int n2 = ng;
  for (int i = 0; i < ng; i++) g2[i] = gd[i];
  if (e->k == RX_SELECT && !e->a) {
    if (n2 < GPUIR_ROW_GUARD_DEPTH) g2[n2++] = e;
    else L->too_deep = true;
  }
  row_loads(L, e->a, g2, n2, false);
  row_loads(L, e->b, g2, n2, false);
  row_loads(L, e->c, g2, n2, false);
}

static const char *let_list(arena *A, const region *r, const bool *pick) {
  const char *s = "";
  for (int l = 0; l < r->nlets; l++)
    if (pick[l]) s = arena_printf(A, "%s%s%s", s, *s ? ", " : "", r->lets[l].name);
  return s;
}

void gpuir_rows_pass_lets(const region *r, const gpu_rows *rw, int pass, bool *need) {
  if (pass < rw->nred) {
    gpuir_rows_need(r, rw, r->lets[rw->red_let[pass]].e->a, need);
    return;
  }
  for (int y = 0; y < r->nyields; y++)
    if (!rw->scalar[r->yields[y].let]) {
      need[r->yields[y].let] = true;
      gpuir_rows_need(r, rw, r->lets[r->yields[y].let].e, need);
    }
}

bool gpuir_rows_same_read(const region *r, const gpu_rows *rw, const rexpr *a, const rexpr *b) {
  return same_read_at(r, rw, a, b);
}

void gpuir_rows_need(const region *r, const gpu_rows *rw, const rexpr *e, bool *need) {
  if (!e) return;
  if (e->k == RX_LET && !rw->scalar[e->let] && !need[e->let]) {
    need[e->let] = true;
    gpuir_rows_need(r, rw, r->lets[e->let].e, need);
  }
  gpuir_rows_need(r, rw, e->a, need);
  gpuir_rows_need(r, rw, e->b, need);
  gpuir_rows_need(r, rw, e->c, need);
}

/* The row skeleton's cache: the vector Reads more than one pass loads,
 * and the elements a slot holds (a CTA a row: the budget over the slots; a
 * warp a row: the whole row, when the warps' rows fit). */
static void rows_cache(gpu_kernel *k, arena *A, const region *r) {
  gpu_rows *w = &k->rw;
  const rexpr *seen[32];
  int first[32], npass[32], ns = 0;
  for (int i = 0; i <= w->nred; i++) {
    bool need[GPUIR_ROW_LETS] = {0};
    const rexpr *rd[32];
    int n = 0;
    if (i < w->nred) {
      gpuir_rows_need(r, w, r->lets[w->red_let[i]].e->a, need);
      pass_vreads(k, A, r->lets[w->red_let[i]].e->a, false, rd, &n, 32);
    } else {
      for (int y = 0; y < r->nyields; y++)
        if (!w->scalar[r->yields[y].let]) {
          need[r->yields[y].let] = true;
          gpuir_rows_need(r, w, r->lets[r->yields[y].let].e, need);
        }
    }
    for (int l = 0; l < r->nlets; l++)
      if (need[l]) pass_vreads(k, A, r->lets[l].e, false, rd, &n, 32);
    for (int j = 0; j < n; j++) {
      int s = -1;
      for (int q = 0; q < ns; q++)
        if (same_read_at(r, w, seen[q], rd[j])) s = q;
      if (s < 0 && ns < 32) s = ns++, seen[s] = rd[j], first[s] = i, npass[s] = 0;
      if (s >= 0) npass[s]++;
    }
  }
  for (int q = 0; q < ns && w->ncache < GPUIR_ROW_CACHE; q++)
    if (npass[q] > 1) w->cache_rd[w->ncache] = seen[q], w->cache_first[w->ncache++] = first[q];
  /* a CTA a row: the budget over the slots; a warp a row (a constant
   * extent): the row, 4 rows a CTA, when that fits */
  int64_t len = 0;
  /* whole vectors: element j of a thread's chunk c sits at j * (cap / vec)
   * + c / vec, so that a warp's lanes touch consecutive words */
  if (w->ncache && w->row_warps > 1) {
    w->cache_cap = GPUIR_ROW_CACHE_BYTES / 4 / w->ncache / w->vec * w->vec;
  } else if (w->ncache && sx_is_int(r->it[w->row_axis].size, &len) &&
             (int64_t)w->warps * w->ncache * ((len + w->vec - 1) / w->vec * w->vec) * 4 <= GPUIR_ROW_CACHE_BYTES) {
    w->cache_cap = (int)((len + w->vec - 1) / w->vec * w->vec);
  } else {
    w->ncache = 0;
  }
}

/* Pass i of the row skeleton over its row (i < nred: reduction i's, then
 * the outputs'): the loop with its loads and lets, then the reduction and
 * the row-scalar lets after it; *prev is the token of the row's scalars so
 * far.  1 when it was the last pass, 0 when more follow, -1 with a
 * diagnostic. */
static int rows_pass_build(gpu_kernel *k, arena *A, const region *r, int i, int *prev, const char *at, diag_list *dl) {
  const gpu_rows *rw = &k->rw;
  const char *row_ax = r->it[rw->row_axis].name;
  static const char *const rop[] = {"sum", "max", "min"};
  bool last = i == rw->nred;
  bool need[GPUIR_ROW_LETS] = {0};
  gpuir_rows_pass_lets(r, rw, i, need);
  bool any = false;
  for (int l = 0; l < r->nlets; l++) any |= need[l];
  if (last && !any) return 1;
  gpu_stmt *lp = gpuir_push(
      k, A, GS_LOOP,
      last ? "the row's elements: outputs" : arena_printf(A, "the row's elements: %s", r->lets[rw->red_let[i]].name),
      arena_printf(A, "%s = t * %d; %s < %s; %s += %d * %d", row_ax, rw->vec, row_ax,
                   sx_str(A, r->it[rw->row_axis].size), row_ax, 32 * rw->row_warps, rw->vec),
      0, 0, 0, 0);
  lp->loop = GLOOP_ROW;
  lp->pass = i;
  int toks[4] = {0};
  int nt = 0;
  row_loader L = {k, A, i, k->nst, toks, &nt, 0, false};
  if (!last) row_loads(&L, r->lets[rw->red_let[i]].e->a, NULL, 0, false);
  for (int l = 0; l < r->nlets; l++)
    if (need[l]) row_loads(&L, r->lets[l].e, NULL, 0, false);
  if (L.too_deep) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, "Fewer nested pads (Pad of a Pad ...) in one view.",
                "region %s reads a tensor under more than %d nested pad Selects; the row skeleton guards at most %d",
                r->name, GPUIR_ROW_GUARD_DEPTH, GPUIR_ROW_GUARD_DEPTH);
    return -1;
  }
  if (L.nloads > GPUIR_ROW_PASS_LOADS) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, "Split the op: fewer tensors read by the lets of one pass.",
                "region %s loads %d Reads in one pass over the row; the row skeleton loads at most %d", r->name,
                L.nloads, GPUIR_ROW_PASS_LOADS);
    return -1;
  }
  int etok = gpuir_tok_n(k, A, "tE", i);
  gpu_stmt s = {.k = GS_ROW_LETS,
                .what = any ? let_list(A, r, need) : "(none)",
                .detail = last ? "the element lets of the outputs, in fp32"
                               : arena_printf(A, "the body of %s, in fp32, folded into a per-thread partial",
                                              r->lets[rw->red_let[i]].name),
                .out = etok,
                .lo = -1,
                .hi = -1,
                .pass = i};
  s.in[s.nin++] = *prev;
  for (int t = 0; t < nt && s.nin < 4; t++) s.in[s.nin++] = toks[t];
  ARENA_PUSH(A, k->st, k->nst, k->cap_st, s);
  if (last) {
    for (int y = 0; y < r->nyields; y++)
      if (!rw->scalar[r->yields[y].let])
        gpuir_push(
            k, A, GS_ST_GLOBAL, r->out[r->yields[y].output].name,
            arena_printf(A,
                         "%s from %s: st.global.v4 when the row's %d outputs are whole and 16-byte aligned, else "
                         "scalar",
                         dtype_name(r->yields[y].cast), r->lets[r->yields[y].let].name, rw->vec),
            0, 1, etok, 0)
            ->pass = y;
    gpuir_push(k, A, GS_END_LOOP, "the row's elements", NULL, 0, 0, 0, 0);
    return 1;
  }
  gpuir_push(k, A, GS_END_LOOP, "the row's elements", NULL, 0, 0, 0, 0);
  const rexpr *re = r->lets[rw->red_let[i]].e;
  int rtok = gpuir_tok_n(k, A, "tR", i);
  gpuir_push(k, A, GS_REDUCE, arena_printf(A, "%s %s", rop[re->rop], r->lets[rw->red_let[i]].name),
             rw->row_warps == 1
                 ? "shfl.bfly 16, 8, 4, 2, 1 in fp32"
                 : arena_printf(A, "shfl.bfly 16, 8, 4, 2, 1 in fp32, then %d warp partials through shared memory",
                                rw->row_warps),
             rtok, 1, etok, 0)
      ->pass = i;
  /* the row-scalar lets up to the next reduction */
  bool sc[GPUIR_ROW_LETS] = {0};
  int end = i + 1 < rw->nred ? rw->red_let[i + 1] : r->nlets;
  for (int l = rw->red_let[i] + 1; l < end; l++) sc[l] = rw->scalar[l];
  int stok = gpuir_tok_n(k, A, "tS", i);
  gpuir_push(k, A, GS_ROW_SCALAR, *let_list(A, r, sc) ? let_list(A, r, sc) : "(none)", "once a row, in every thread",
             stok, 1, rtok, 0)
      ->pass = i;
  *prev = stok;
  return 0;
}

gpu_kernel *gpuir_build_rows(arena *A, const region *r, const pc_analysis *a, const sched_plan *p, const char *name,
                             diag_list *dl) {
  const char *at = arena_printf(A, "GPU IR[%s]", r->name);
  gpu_kernel *k = ARENA_NEW(A, gpu_kernel);
  const char *why = NULL;
  if (!gpuir_rows_view(A, r, &k->rw, &why)) {
    diag_report(dl, D_PLAN_UNSUPPORTED, at, NULL, "region %s does not fit the row skeleton: %s", r->name, why);
    return NULL;
  }
  k->name = name;
  k->algo = ALGO_ROW_REDUCE;
  k->r = r;
  k->a = a;
  k->plan = *p;
  k->v.r = r;
  k->v.a = a;
  k->v.out = r->yields[0].output;
  k->v.out_let = r->yields[0].let;
  k->v.out_dt = r->yields[0].cast;
  /* the element type: the first input that is not an index (a gather's int32) */
  k->T = r->yields[0].cast;
  for (int i = r->nin - 1; i >= 0; i--)
    if (r->in[i].dt != DT_INT32) k->T = r->in[i].dt;
  k->rw.warps = p->warps_m;
  k->rw.row_warps = p->row_warps;
  k->rw.vec = p->vec;
  k->threads = 32 * k->rw.warps;
  k->smem = 0; /* the cross-warp partials are a static __shared__ array */
  const sx *rows = gpuir_extent(A, r, k->rw.row_axes, k->rw.nrows);
  int per_cta = k->rw.warps / k->rw.row_warps;
  k->grid[0] = sx_floordiv(A, sx_add_int(A, rows, per_cta - 1), sx_int(A, per_cta));
  k->grid[1] = k->grid[2] = sx_int(A, 1);
  k->nvec = 1;
  k->vecs[0] = k->rw.vec;
  rows_cache(k, A, r);
  const gpu_rows *rw = &k->rw;
  const char *row_ax = r->it[rw->row_axis].name;
  gpuir_push(k, A, GS_ROW_BEGIN, rw->row_warps == 1 ? "a warp a row" : "a CTA a row",
             arena_printf(A, "rows %s x row %s (extent %s); row-scalar lets before the first reduction",
                          gpuir_axes(A, r, rw->row_axes, rw->nrows), row_ax, sx_str(A, r->it[rw->row_axis].size)),
             gpuir_tok(k, A, "tRow"), 0, 0, 0);
  int prev = gpuir_tok(k, A, "tRow");
  for (int i = 0; i <= rw->nred; i++) {
    int st = rows_pass_build(k, A, r, i, &prev, at, dl);
    if (st < 0) return NULL;
    if (st > 0) break;
  }
  for (int y = 0; y < r->nyields; y++)
    if (rw->scalar[r->yields[y].let])
      gpuir_push(k, A, GS_ST_GLOBAL, r->out[r->yields[y].output].name,
                 arena_printf(A, "%s from %s: one value a row, by its first thread", dtype_name(r->yields[y].cast),
                              r->lets[r->yields[y].let].name),
                 0, 1, prev, 0)
          ->pass = y;
  return k;
}

/* x -> x + 1 for the row axis: an output's step along the row */
typedef struct emit_shift {
  arena *A;
  const char *x;
} emit_shift;

static const sx *emit_shift_row(void *ctx, sx_atom_kind kind, const char *name) {
  emit_shift *sh = ctx;
  if (kind == SXA_VAR && strcmp(name, sh->x) == 0) return sx_add_int(sh->A, sx_var(sh->A, name), 1);
  return NULL;
}

/* The offset of output m at the point of let e (its axes in the tensor's order). */
static const sx *row_out_off(opgen *g, const region_memref *m, const rexpr *e) {
  const sx **map = ARENA_ARRAY(g->A, const sx *, m->rank + 1);
  for (int d = 0; d < m->rank; d++) map[d] = sx_var(g->A, g->r->it[e->ax[d]].name);
  return gpuir_offset(g->A, m, map);
}

/* The Op's kernel<VEC>(p) on templates/sm80_rows.cuh: the GPU IR's
 * statements in order, each its code under a comment with its kind and
 * `what`.  The row's state (thread t, row ri, its length, the row cache)
 * is the skeleton's Sm80Rows `rs`; a pass is a loop over the thread's
 * elements, VEC at a time (c, the first; n <= VEC of them in the row),
 * whose loads fill rd<i> (the pass's i-th load: VEC values, or one a row),
 * whose RowLets compute the element lets at each element j from them and
 * fold a reduction's body into acc<P> or fill an output's o<y> and
 * off<y>; row-scalar lets are locals v_<let> of the kernel.  The renderer
 * reads the statements' structured fields (pass, rd, load, guard). */
typedef struct rows_render {
  opgen *g;
  const gpu_kernel *k;
  rows_pass rp;
  const char *ind;
} rows_render;

static void rr_comment(rows_render *rr, const gpu_stmt *st) {
  sb_printf(rr->g->s, "%s// %s %s\n", rr->ind, gpuir_stmt_name(st->k), cmt(rr->g->A, st->what));
}

/* i_<row axis> (and i_<reduction axis>) at element `at` of the row */
static void rr_elem(rows_render *rr, const char *at) {
  opgen *g = rr->g;
  const gpu_rows *rw = &rr->k->rw;
  sb_printf(g->s, "%s[[maybe_unused]] const int64_t i_%s = %s;\n", rr->ind, cid(g->A, g->r->it[rw->row_axis].name), at);
  if (rw->red_axis != rw->row_axis)
    sb_printf(g->s, "%s[[maybe_unused]] const int64_t i_%s = %s;\n", rr->ind, cid(g->A, g->r->it[rw->red_axis].name), at);
}

/* Row-scalar lets in [from, to) as locals. */
static void rr_scalars(rows_render *rr, int from, int to) {
  opgen *g = rr->g;
  epigen eg = {g, {{0}}, 0, false, "0.0f", 0, {0}, {0}, false, 0, {0}, {0}, NULL, NULL};
  for (int l = from; l < to; l++) {
    if (!rr->k->rw.scalar[l] || g->r->lets[l].e->k == RX_REDUCE) continue;
    strbuf x = {0};
    expr_c(&eg, &x, g->r->lets[l].e);
    sb_printf(g->s, "%s[[maybe_unused]] const %s v_%s = %s;\n", rr->ind, g->r->lets[l].e->dt == DT_BOOL ? "bool" : "float",
              cid(g->A, g->r->lets[l].name), sb_str(&x));
    sb_free(&x);
  }
}

static void rr_row_begin(rows_render *rr, const gpu_stmt *st) {
  opgen *g = rr->g;
  const gpu_rows *rw = &rr->k->rw;
  rr_comment(rr, st);
  sb_printf(g->s, "%sif (!rs.begin(extent_rows(p), extent_row(p))) return;\n", rr->ind);
  if (rw->nrows > 1) sb_printf(g->s, "%sconst int64_t ri = rs.ri;\n", rr->ind);
  decompose(g, rw->nrows > 1 ? "ri" : "rs.ri", rw->row_axes, rw->nrows, rr->ind);
  rr_scalars(rr, 0, rw->nred ? rw->red_let[0] : g->r->nlets);
}

/* a value fused from an earlier region: the lets that read it compute it */
static void rr_fused(rows_render *rr, const gpu_stmt *st) {
  sb_printf(rr->g->s, "%s// %s %s: %s\n", rr->ind, gpuir_stmt_name(st->k), cmt(rr->g->A, st->what), cmt(rr->g->A, st->detail));
}

static void rr_loop(rows_render *rr, const gpu_stmt *st) {
  opgen *g = rr->g;
  rr_comment(rr, st);
  if (st->pass < rr->k->rw.nred) sb_printf(g->s, "%sfloat acc%d = init<%d>();\n", rr->ind, st->pass, st->pass);
  sb_printf(g->s, "%sfor (int64_t c = (int64_t)rs.t * VEC; c < rs.len; c += C::STEP) {\n", rr->ind);
  rr->ind = "      ";
  sb_printf(g->s, "%sconst int n = rs.count(c);\n", rr->ind);
  rr->rp.nld = 0;
}

/* The pad guards of a load: `j < n && (guards)...` */
static const char *rr_guard(rows_render *rr, const gpu_stmt *st) {
  strbuf c = {0};
  sb_puts(&c, "j < n");
  epigen eg = {rr->g, {{0}}, 0, false, "0.0f", 0, {0}, {0}, false, 0, {0}, {0}, NULL, NULL};
  for (int i = 0; i < st->nguard; i++) {
    sb_puts(&c, " && ");
    if (st->guard[i]->ng > 1) sb_puts(&c, "(");
    eguards_c(&eg, &c, st->guard[i]->guards, st->guard[i]->ng);
    if (st->guard[i]->ng > 1) sb_puts(&c, ")");
  }
  return sb_take_arena(&c, rr->g->A);
}

static void rr_load(rows_render *rr, const gpu_stmt *st) {
  opgen *g = rr->g;
  const gpu_kernel *k = rr->k;
  const region *r = k->r;
  const rexpr *rd = st->rd;
  const region_memref *m = &r->in[rd->input];
  int i = rr->rp.nld;
  const char *ind = rr->ind;
  strbuf *s = g->s;
  rr_comment(rr, st);
  if (rr->rp.nld >= GPUIR_ROW_PASS_LOADS) { /* gpuir_verify rules it out */
    sb_printf(s, "#error \"a pass of the row skeleton loads more than %d Reads\"\n", GPUIR_ROW_PASS_LOADS);
    return;
  }
  rr->rp.ld[rr->rp.nld++] = st;
  const char *src = arena_printf(g->A, "static_cast<const %s *>(p->%s) + %s", tname(g, m->dt), lc(g->A, m->name),
                                 sxc(g->A, gpuir_offset(g->A, m, rd->map), false));
  if (st->load == GLOAD_ROW) {
    sb_printf(s, "%s[[maybe_unused]] const float rd%d = dlc::ld1(%s);\n", ind, i, src);
    return;
  }
  if (st->load == GLOAD_VEC) {
    /* VEC elements from c: from the row cache (the thread's own elements,
     * element j of chunk c at rc[slot * CACHE_CAP + j * (CACHE_CAP / VEC) +
     * c / VEC], so that the lanes of a warp touch consecutive words) when
     * the row fits it and an earlier pass kept them; else from global
     * memory, kept in the cache when this pass is the first of several */
    int slot = gpuir_rows_cache_slot(r, &k->rw, rd);
    sb_printf(s, "%sfloat rd%d[VEC];\n", ind, i);
    if (st->k == GS_LD_SHARED)
      sb_printf(s,
                "%sif (rs.cached) {\n#pragma unroll\n"
                "%s  for (int j = 0; j < VEC; ++j) rd%d[j] = j < n ? rs.rc[%d * CACHE_CAP + j * (CACHE_CAP / VEC) + c / VEC] : 0.f;\n"
                "%s} else {\n",
                ind, ind, i, slot, ind);
    else
      sb_printf(s, "%s{\n", ind);
    rr->ind = "        ";
    rr_elem(rr, "c");
    rr->ind = ind;
    sb_printf(s, "%s  const %s *src = %s;\n", ind, tname(g, m->dt), src);
    sb_printf(s,
              "%s  if (n == VEC && reinterpret_cast<uintptr_t>(src) %% (VEC * sizeof(*src)) == 0) {\n"
              "%s    dlc::ldv<VEC>(rd%d, src);\n%s  } else {\n#pragma unroll\n"
              "%s    for (int j = 0; j < VEC; ++j) rd%d[j] = j < n ? dlc::ld1(src + j) : 0.f;\n%s  }\n%s}\n",
              ind, ind, i, ind, ind, i, ind, ind);
    if (slot >= 0 && st->k == GS_LD_GLOBAL)
      sb_printf(s,
                "%sif (rs.cached)\n#pragma unroll\n"
                "%s  for (int j = 0; j < VEC; ++j)\n%s    if (j < n) rs.rc[%d * CACHE_CAP + j * (CACHE_CAP / VEC) + c / VEC] = rd%d[j];\n",
                ind, ind, ind, slot, i);
    return;
  }
  /* one element at a time: each at its element of the row, where its pad
   * guards hold (else 0); a gather through the index loaded before it */
  bool index = st->load == GLOAD_INDEX;
  sb_printf(s, "%s%s rd%d[VEC];\n#pragma unroll\n%sfor (int j = 0; j < VEC; ++j) {\n", ind, index ? "int64_t" : "float", i,
            ind);
  rr->ind = "        ";
  rr_elem(rr, "c + j");
  strbuf v = {0};
  if (index) {
    sb_printf(&v, "(int64_t)__ldg(%s)", src);
  } else if (st->k == GS_LD_GATHER) {
    epigen eg = {g, {{0}}, 0, false, "0.0f", 0, {0}, {0}, false, 0, {0}, {0}, NULL, &rr->rp};
    rr->rp.nld--; /* the gather's index loads only: not itself */
    rr->rp.ngs = st->nguard;
    for (int q = 0; q < st->nguard; q++) rr->rp.gs[q] = st->guard[q];
    gather_c(&eg, &v, rd);
    rr->rp.ngs = 0;
    rr->rp.nld++;
  } else {
    sb_printf(&v, "dlc::ld1(%s)", src);
  }
  sb_printf(s, "%srd%d[j] = %s ? %s : %s;\n", rr->ind, i, rr_guard(rr, st), sb_str(&v), index ? "0" : "0.f");
  sb_free(&v);
  rr->ind = ind;
  sb_printf(s, "%s}\n", ind);
}

static void rr_row_lets(rows_render *rr, const gpu_stmt *st) {
  opgen *g = rr->g;
  const gpu_kernel *k = rr->k;
  const region *r = k->r;
  const gpu_rows *rw = &k->rw;
  const char *ind = rr->ind;
  rr_comment(rr, st);
  bool need[GPUIR_ROW_LETS] = {0};
  gpuir_rows_pass_lets(r, rw, st->pass, need);
  bool red = st->pass < rw->nred;
  if (!red)
    for (int y = 0; y < r->nyields; y++)
      if (!rw->scalar[r->yields[y].let]) sb_printf(g->s, "%sfloat o%d[VEC];\n%sint64_t off%d[VEC];\n", ind, y, ind, y);
  /* a reduction folds the row's elements only; the output pass computes
   * every j (the lets are arithmetic on what the loads hold, 0 past the
   * row) and stores those in the row */
  sb_printf(g->s, "#pragma unroll\n%sfor (int j = 0; j < VEC; ++j) {\n", ind);
  if (red) sb_printf(g->s, "%s  if (j >= n) continue;\n", ind);
  rr->ind = "        ";
  rr_elem(rr, "c + j");
  epigen eg = {g, {{0}}, 0, false, "0.0f", 0, {0}, {0}, false, 0, {0}, {0}, NULL, &rr->rp};
  for (int l = 0; l < r->nlets; l++) {
    if (!need[l]) continue;
    strbuf x = {0};
    expr_c(&eg, &x, r->lets[l].e);
    sb_printf(g->s, "%sconst %s v_%s = %s;\n", rr->ind, r->lets[l].e->dt == DT_BOOL ? "bool" : "float",
              cid(g->A, r->lets[l].name), sb_str(&x));
    sb_free(&x);
  }
  if (red) {
    strbuf x = {0};
    expr_c(&eg, &x, r->lets[rw->red_let[st->pass]].e->a);
    sb_printf(g->s, "%sacc%d = combine<%d>(acc%d, %s);\n", rr->ind, st->pass, st->pass, st->pass, sb_str(&x));
    sb_free(&x);
  } else {
    for (int y = 0; y < r->nyields; y++) {
      if (rw->scalar[r->yields[y].let]) continue;
      const region_memref *m = &r->out[r->yields[y].output];
      sb_printf(g->s, "%so%d[j] = v_%s;\n%soff%d[j] = %s;\n", rr->ind, y, cid(g->A, r->lets[r->yields[y].let].name), rr->ind,
                y, sxc(g->A, row_out_off(g, m, r->lets[r->yields[y].let].e), false));
    }
  }
  rr->ind = ind;
  sb_printf(g->s, "%s}\n", ind);
}

static void rr_store(rows_render *rr, const gpu_stmt *st) {
  opgen *g = rr->g;
  arena *A = g->A;
  const gpu_kernel *k = rr->k;
  const region *r = k->r;
  int y = st->pass;
  const region_memref *m = &r->out[r->yields[y].output];
  const char *ot = tname(g, r->yields[y].cast);
  const char *ind = rr->ind;
  rr_comment(rr, st);
  if (k->rw.scalar[r->yields[y].let]) {
    /* one value a row, by the row's first thread */
    sb_printf(g->s, "%sif (rs.t == 0) dlc::st1(static_cast<%s *>(p->%s) + %s, v_%s);\n", ind, ot, lc(A, m->name),
              sxc(A, row_out_off(g, m, r->lets[r->yields[y].let].e), false), cid(A, r->lets[r->yields[y].let].name));
    return;
  }
  sb_printf(g->s, "%s{\n%s  %s *dst = static_cast<%s *>(p->%s);\n", ind, ind, ot, ot, lc(A, m->name));
  /* unit stride along the row: one 16-byte store when whole and aligned */
  const sx *off = row_out_off(g, m, r->lets[r->yields[y].let].e);
  emit_shift sh = {A, r->it[k->rw.row_axis].name};
  const sx *step = sx_sub(A, sx_subst(A, off, emit_shift_row, &sh), off);
  if (sx_has_vars(step)) step = NULL;
  int64_t one;
  if (step && sx_is_int(step, &one) && one == 1 && (k->rw.vec * dtype_bytes(r->yields[y].cast)) % 16 == 0)
    sb_printf(g->s,
              "%s  if (n == VEC && reinterpret_cast<uintptr_t>(dst + off%d[0]) %% 16 == 0)\n"
              "%s    dlc::stv<VEC>(dst + off%d[0], o%d);\n%s  else\n",
              ind, y, ind, y, y, ind);
  sb_printf(g->s, "#pragma unroll\n%s    for (int j = 0; j < VEC; ++j)\n%s      if (j < n) dlc::st1(dst + off%d[j], o%d[j]);\n%s}\n",
            ind, ind, y, y, ind);
}

static void rr_end_loop(rows_render *rr, const gpu_stmt *st) {
  rr->ind = "    ";
  sb_printf(rr->g->s, "%s}  // %s %s\n", rr->ind, gpuir_stmt_name(st->k), cmt(rr->g->A, st->what));
}

static void rr_reduce(rows_render *rr, const gpu_stmt *st) {
  opgen *g = rr->g;
  rr_comment(rr, st);
  sb_printf(g->s, "%sconst float v_%s = rs.template allreduce<%d>(acc%d);\n", rr->ind,
            cid(g->A, g->r->lets[rr->k->rw.red_let[st->pass]].name), st->pass, st->pass);
}

static void rr_row_scalar(rows_render *rr, const gpu_stmt *st) {
  const gpu_rows *rw = &rr->k->rw;
  rr_comment(rr, st);
  rr_scalars(rr, rw->red_let[st->pass] + 1, st->pass + 1 < rw->nred ? rw->red_let[st->pass + 1] : rr->g->r->nlets);
}

static void rows_kernel(opgen *g, const gpu_kernel *k, const char *sname) {
  strbuf *s = g->s;
  sb_printf(s, "  // The kernel, rendered from the GPU IR (dlcgen --dump=gpu): each statement's code under its\n"
               "  // kind; the row's state rs is templates/sm80_rows.cuh's Sm80Rows\n"
               "  template <int VEC>\n"
               "  static __device__ __forceinline__ void kernel(const Params *p) {\n"
               "    using C = dlc::Sm80Rows<%s, VEC>;\n"
               "    C rs;\n",
            sname);
  rows_render rr = {g, k, {k, 0, {0}, 0, {0}}, "    "};
  for (int i = 0; i < k->nst; i++) {
    const gpu_stmt *st = &k->st[i];
    switch (st->k) {
    case GS_ROW_BEGIN: rr_row_begin(&rr, st); break;
    case GS_FUSED: rr_fused(&rr, st); break;
    case GS_LOOP: rr_loop(&rr, st); break;
    case GS_LD_GLOBAL:
    case GS_LD_SHARED:
    case GS_LD_GATHER: rr_load(&rr, st); break;
    case GS_ROW_LETS: rr_row_lets(&rr, st); break;
    case GS_ST_GLOBAL: rr_store(&rr, st); break;
    case GS_END_LOOP: rr_end_loop(&rr, st); break;
    case GS_REDUCE: rr_reduce(&rr, st); break;
    case GS_ROW_SCALAR: rr_row_scalar(&rr, st); break;
    default: sb_printf(s, "#error \"the row skeleton renders no %s statement\"\n", gpuir_stmt_name(st->k)); continue;
    }
    render_mark_stmt(g->log, k, st);
  }
  sb_puts(s, "  }\n");
}

static void rows_op(emit_ctx *c, strbuf *s, const emit_op *eo, const emit_instance *in, const char *sname) {
  arena *A = c->A;
  const gpu_kernel *k = in->k;
  const region *r = k->r;
  const gpu_rows *rw = &k->rw;
  opgen g = {A, &k->v, r, s, k->T, k->math_ieee, c->log, false};
  const char *rax = r->it[rw->row_axis].name;
  sb_printf(s, "// plan: %s, %d warps a CTA, %d elements a thread at a time, %s\n",
            rw->row_warps == 1 ? "a warp a row" : "a CTA a row", rw->warps, rw->vec, algo_name(k->algo));
  sb_printf(s, "template <class T_>\nstruct %s {\n", sname);
  sb_printf(s, "  using T = T_;\n  using Params = dlc__p_%s;\n", eo->op->name);
  sb_printf(s, "  static constexpr int WARPS = %d, ROW_WARPS = %d;\n", rw->warps, rw->row_warps);
  if (rw->ncache) {
    sb_printf(s, "  // row cache: rows of at most CACHE_CAP elements keep");
    for (int i = 0; i < rw->ncache; i++) sb_printf(s, "%s %s", i ? "," : "", cmt(A, r->in[rw->cache_rd[i]->input].name));
    sb_puts(s, " in shared memory after the first pass that loads them\n");
  }
  sb_printf(s, "  static constexpr int CACHE_CAP = %d, CACHE_FLOATS = %d;\n", rw->ncache ? rw->cache_cap : 0,
            rw->ncache * rw->cache_cap);
  group_comment(&g, "rows", rw->row_axes, rw->nrows);
  sb_printf(s, "  // row: %s, extent %s\n", cmt(A, rax), sx_str(A, r->it[rw->row_axis].size));
  for (int l = 0; l < r->nlets; l++) cmt_let(A, s, "  //   ", r, l);
  for (int y = 0; y < r->nyields; y++)
    sb_printf(s, "  //   yield %s -> %s (%s)\n", cmt(A, r->lets[r->yields[y].let].name), cmt(A, r->out[r->yields[y].output].name),
              r->yields[y].cast == k->T ? "T" : dtype_name(r->yields[y].cast));
  sb_printf(s, "  static __device__ __forceinline__ int64_t extent_rows([[maybe_unused]] const Params *p) { return %s; }\n",
            sxc(A, group_extent(&g, rw->row_axes, rw->nrows), false));
  sb_printf(s, "  static __device__ __forceinline__ int64_t extent_row([[maybe_unused]] const Params *p) { return %s; }\n",
            sxc(A, r->it[rw->row_axis].size, false));
  /* the reductions' neutral elements and combines (the skeleton's all-reduce calls combine) */
  static const char *const comb[] = {"a + b", "fmaxf(a, b)", "fminf(a, b)"};
  sb_puts(s, "  template <int P>\n  static __device__ __forceinline__ float init() {\n");
  for (int i = 0; i < rw->nred; i++)
    sb_printf(s, "    %sif constexpr (P == %d) return %s;\n", i ? "else " : "", i, flit(A, r->lets[rw->red_let[i]].e->init, DT_FP32));
  sb_printf(s, "    %sreturn 0.0f;\n  }\n", rw->nred ? "else " : "");
  sb_puts(s, "  template <int P>\n  static __device__ __forceinline__ float combine(float a, [[maybe_unused]] float b) {\n");
  for (int i = 0; i < rw->nred; i++) {
    const rexpr *e = r->lets[rw->red_let[i]].e;
    sb_printf(s, "    %sif constexpr (P == %d) return %s;  // %s\n", i ? "else " : "", i,
              comb[e->rop == RED_SUM ? 0 : e->rop == RED_MAX ? 1 : 2], cmt(A, r->lets[rw->red_let[i]].name));
  }
  sb_printf(s, "    %sreturn a;\n  }\n", rw->nred ? "else " : "");
  rows_kernel(&g, k, sname);
  sb_puts(s, "};\n\n");
}

/* its launch, rows, fused values, cache and grid, then its statements */
static void rows_dump(cJSON *g, const gpu_kernel *k) {
  const region *r = k->r;
  cJSON_AddNumberToObject(g, "threads", k->threads);
  cJSON_AddNumberToObject(g, "warps_per_row", k->rw.row_warps);
  cJSON_AddNumberToObject(g, "rows_per_cta", k->rw.warps / k->rw.row_warps);
  cJSON_AddNumberToObject(g, "vec", k->rw.vec);
  if (k->nfused) {
    cJSON *fa = cJSON_AddArrayToObject(g, "fused");
    for (int i = 0; i < k->nfused; i++) {
      cJSON *f = cJSON_CreateObject();
      cJSON_AddStringToObject(f, "value", k->fused[i]);
      cJSON_AddStringToObject(f, "buffer", buffer_name(BUF_REG));
      cJSON_AddItemToArray(fa, f);
    }
  }
  cJSON *ra = cJSON_AddArrayToObject(g, "row_axes");
  for (int i = 0; i < k->rw.nrows; i++) cJSON_AddItemToArray(ra, cJSON_CreateString(r->it[k->rw.row_axes[i]].name));
  cJSON_AddStringToObject(g, "row_axis", r->it[k->rw.row_axis].name);
  cJSON *rd = cJSON_AddArrayToObject(g, "reductions");
  for (int i = 0; i < k->rw.nred; i++) cJSON_AddItemToArray(rd, cJSON_CreateString(r->lets[k->rw.red_let[i]].name));
  arena T;
  arena_init(&T);
  cJSON *rc = cJSON_AddObjectToObject(g, "row_cache");
  cJSON *sl = cJSON_AddArrayToObject(rc, "slots");
  for (int i = 0; i < k->rw.ncache; i++) cJSON_AddItemToArray(sl, cJSON_CreateString(r->in[k->rw.cache_rd[i]->input].name));
  cJSON_AddNumberToObject(rc, "max_row", k->rw.cache_cap);
  cJSON *gr = cJSON_AddArrayToObject(g, "grid");
  for (int i = 0; i < 3; i++) cJSON_AddItemToArray(gr, cJSON_CreateString(sx_str(&T, k->grid[i])));
  arena_free(&T);  dump_stmts(g, k, true);
}

/* ---- the pipeline's part ----------------------------------------------------------------- */

/* one region without contraction, its reductions over one axis */
static bool rows_fits(const region_set *rs, const pc_report *pc) { return rs->n == 1 && rs->r[0].acc_let < 0; }

static bool rows_verify_plan(const region_set *rs, const pc_report *pc, const sched_plan *p,
                             const arch_info *const *archs, int na, const char *at, diag_list *dl) {
  return plan_fits_archs(p, ALGO_ROW_REDUCE, archs, na, dl);
}

static gpu_kernel *rows_build(arena *A, const region_set *rs, const pc_report *pc, const sched_plan *p,
                              const char *name, diag_list *dl) {
  return gpuir_build_rows(A, &rs->r[0], &pc->a[0], p, name, dl);
}

/* ---- the skeleton's table ---------------------------------------------------------- */

/* its stores are its own: verify_rows checks each output stored once */
const skel_ops skel_rows = {
    .algo = ALGO_ROW_REDUCE, .shape = SKEL_ROWS, .arch = ARCH_SM80, .only = false,
    .fits = rows_fits,       .verify_plan = rows_verify_plan, .build = rows_build,
    .verify = verify_rows,   .render = rows_op,               .dump = rows_dump,
};
