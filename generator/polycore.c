/* Poly Core (spec §7, 001 §4): the polyhedral analysis of each region, on isl.
 *
 * Every let of a region becomes an isl statement over its axes (a reduction
 * over its axes plus its reduce axes, reading and writing its accumulator);
 * each yield becomes a statement that reads its let and writes the output.
 * The schedule runs the statements in let order, each over its loops in
 * region axis order (reduce axes innermost).  From the reads (region inputs
 * through their AxisMaps, restricted by their Select guards; lets at the
 * reader's point) and the writes, isl computes the flow (RAW), anti (WAR)
 * and output (WAW) dependences.  An iteration axis is parallel when every
 * dependence between two statements that both run it has distance 0 along
 * it; the other axes carry a reduction.  The rest of the report (tail axes,
 * halo, minimum buffers, barrier and bank hints, compute-at legality) is
 * derived from those results, the contraction classification (pc_classify)
 * and the AxisMaps; docs/analysis.md defines each quantity.  One isl_ctx
 * serves a pc_analyze() call; every result is kept as text in the arena. */
#include "polycore.h"

#include <isl/aff.h>
#include <isl/ctx.h>
#include <isl/flow.h>
#include <isl/ilp.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* ---- contraction classification -------------------------------------------------- */

static const rexpr *operand_read(const rexpr *e) {
  if (e->k == RX_SELECT && !e->a) e = e->b;
  if (e->k == RX_UNARY && e->op == TINY_CAST) e = e->a;
  return e->k == RX_READ ? e : NULL;
}

static bool has_axis(const rexpr *e, int ax) {
  for (int i = 0; i < e->nax; i++)
    if (e->ax[i] == ax) return true;
  return false;
}

/* Position of the tensor dim in which `ax` appears in the read's map (the
 * first one), or a large number. */
static int dim_of_axis(const rexpr *rd, const char *name) {
  for (int d = 0; d < rd->nmap; d++)
    if (sx_mentions(rd->map[d], SXA_VAR, name)) return d;
  return 1 << 20;
}

/* floor(v / den) with den a multiple of 8: constant over an aligned
 * 16-byte chunk along v */
static bool chunk_floor(const sx_atom *a) { return a->kind == SXA_FLOOR && a->den % 8 == 0 && sx_as_var(a->a); }

/* atom a varies within an aligned chunk along v: it is v, or reads v other
 * than through chunk_floor atoms */
static bool reads_off_chunk(const sx_atom *a, const char *v) {
  switch (a->kind) {
  case SXA_VAR: return strcmp(a->name, v) == 0;
  case SXA_PARAM:
  case SXA_OVERFLOW: return false;
  case SXA_PROD:
    for (int i = 0; i < a->nf; i++)
      if (reads_off_chunk(a->f[i], v)) return true;
    return false;
  case SXA_FLOOR:
    if (chunk_floor(a)) return false;
    return sx_mentions(a->a, SXA_VAR, v);
  case SXA_FDIVSYM:
  case SXA_MODSYM: return sx_mentions(a->a, SXA_VAR, v) || sx_mentions(a->b, SXA_VAR, v);
  }
  return true;
}

/* The axis along which the last dim of a read runs contiguously: the dim's
 * index itself, or the one axis v with coefficient 1 in an index such as a
 * head split's 64*h+d or a head merge's k-64*floor(k/64), whose other terms
 * are axes and chunk_floor atoms with coefficients (and a constant) that are
 * multiples of 8 elements.  Then a 16-byte chunk along v, aligned, runs over
 * consecutive addresses and starts aligned wherever the other axes stand,
 * provided the other dims read v only through chunk_floor atoms.  NULL when
 * there is no such axis. */
static const char *contig_var(const rexpr *rd) {
  if (!rd->nmap) return NULL;
  const sx *x = rd->map[rd->nmap - 1];
  const char *v = sx_as_var(x);
  if (!v) {
    if (x->c0 % 8) return NULL;
    for (int i = 0; i < x->nterms; i++) {
      const sx_term *t = &x->terms[i];
      if (t->atom->kind == SXA_VAR && t->coef == 1 && !v) v = t->atom->name;
      else if ((t->atom->kind != SXA_VAR && !chunk_floor(t->atom)) || t->coef % 8) return NULL;
    }
    if (!v) return NULL;
  }
  for (int d = 0; d < rd->nmap - 1; d++)
    for (int i = 0; i < rd->map[d]->nterms; i++)
      if (reads_off_chunk(rd->map[d]->terms[i].atom, v)) return NULL;
  return v;
}

void pc_classify(arena *A, const region *r, pc_contraction *con) {
  memset(con, 0, sizeof *con);
  con->lhs = con->rhs = -1;
  con->lhs_contig = con->rhs_contig = -1;
  if (r->acc_let < 0) return;
  const rexpr *acc = r->lets[r->acc_let].e;
  if (acc->k != RX_REDUCE || acc->a->k != RX_BINARY || acc->a->op != TINY_MUL) return;
  const rexpr *x = acc->a->a, *y = acc->a->b;
  const rexpr *rx = operand_read(x), *ry = operand_read(y);
  if (!rx || !ry) return;
  con->present = true;
  con->lhs_read = x;
  con->rhs_read = y;
  con->lhs = rx->input;
  con->rhs = ry->input;
  int n = acc->nax + acc->nred;
  con->m_axes = ARENA_ARRAY(A, int, n + 1);
  con->n_axes = ARENA_ARRAY(A, int, n + 1);
  con->b_axes = ARENA_ARRAY(A, int, n + 1);
  con->k_axes = ARENA_ARRAY(A, int, n + 1);
  for (int i = 0; i < acc->nax; i++) {
    int ax = acc->ax[i];
    bool in_l = has_axis(x, ax), in_r = has_axis(y, ax);
    if (in_l && in_r) con->b_axes[con->nb++] = ax;
    else if (in_l) con->m_axes[con->nm++] = ax;
    else con->n_axes[con->nn++] = ax;
  }
  /* an axis of extent 1 (a reshape's leading 1, read at index 0 or not at
   * all) has one point, which both operands read: a batch of one, unless
   * it is the only axis of its M or N group (a GEMV's M of 1 stays M) */
  for (int g = 0; g < 2; g++) {
    int *grp = g ? con->n_axes : con->m_axes, *ng = g ? &con->nn : &con->nm, keep = 0;
    for (int i = 0; i < *ng; i++) {
      int64_t one;
      bool unit = sx_is_int(r->it[grp[i]].size, &one) && one == 1;
      if (unit && *ng - (i - keep) > 1) con->b_axes[con->nb++] = grp[i];
      else grp[keep++] = grp[i];
    }
    *ng = keep;
  }
  /* batch axes in the accumulator's order */
  for (int i = 1; i < con->nb; i++)
    for (int j = i; j > 0 && con->b_axes[j - 1] > con->b_axes[j]; j--) {
      int t = con->b_axes[j];
      con->b_axes[j] = con->b_axes[j - 1];
      con->b_axes[j - 1] = t;
    }
  /* K axes in the order of the lhs tensor's dims (outer to inner), so that the
   * flattened K index runs along memory */
  for (int i = 0; i < acc->nred; i++) con->k_axes[con->nk++] = acc->red[i];
  for (int i = 1; i < con->nk; i++)
    for (int j = i; j > 0 && dim_of_axis(rx, r->it[con->k_axes[j - 1]].name) > dim_of_axis(rx, r->it[con->k_axes[j]].name);
         j--) {
      int t = con->k_axes[j];
      con->k_axes[j] = con->k_axes[j - 1];
      con->k_axes[j - 1] = t;
    }
  for (int side = 0; side < 2; side++) {
    const rexpr *rd = side ? ry : rx;
    const char *v = contig_var(rd);
    int ax = -1;
    for (int i = 0; v && i < r->niters + r->nred; i++)
      if (strcmp(r->it[i].name, v) == 0) ax = i;
    const int *grp = side ? con->n_axes : con->m_axes;
    int ng = side ? con->nn : con->nm;
    bool kc = con->nk > 0 && ax == con->k_axes[con->nk - 1];
    bool gc = ng > 0 && ax == grp[ng - 1];
    if (side) con->rhs_contig = (kc || gc) ? ax : -1, con->rhs_k_contig = kc;
    else con->lhs_contig = (kc || gc) ? ax : -1, con->lhs_k_contig = kc;
  }
}

/* ---- text ------------------------------------------------------------------------------ */

static const char *join_names(arena *A, int n, const char *const *s) {
  strbuf t = {0};
  for (int i = 0; i < n; i++) {
    if (i) sb_puts(&t, ", ");
    sb_puts(&t, s[i]);
  }
  return sb_take_arena(&t, A);
}

/* ---- the builder of one region's analysis ------------------------------------------ */

/* A statement: a let over its loops, or a yield. */
typedef struct pc_stmt {
  const char *name;      /* isl tuple name */
  const char *label;     /* the let's name, or "yield.<output>" */
  int let, yield;        /* the one it stands for (the other is -1) */
  int ndims;
  int *dims;             /* region axes, in loop order */
} pc_stmt;

typedef struct pcb {
  arena *A;
  isl_ctx *ctx;
  const region_set *rs;
  int ri;
  const region *r;
  diag_list *dl;
  const char *at;
  bool failed;
  int nparams;
  const char **params;
  int nalias;
  const sx **alias_of;
  const char **alias_name;
  const char *pfx;       /* "[M, N, K] -> " */
  const char *context;   /* "[M, N, K] -> { : M >= 1 and ... }" */
  int nst;
  pc_stmt *st;
  int *stmt_of_let;
  bool affine;
} pcb;

#define PC_BUG(b, ...)                                            \
  do {                                                            \
    diag_report((b)->dl, D_INTERNAL, (b)->at, NULL, __VA_ARGS__); \
    (b)->failed = true;                                           \
  } while (0)

static const char *isl_msg(pcb *b) {
  const char *m = isl_ctx_last_error_msg(b->ctx);
  return arena_strdup(b->A, m ? m : "unknown isl error");
}

static const char *sanitize(arena *A, const char *s) {
  char *r = arena_strdup(A, s);
  for (char *p = r; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) *p = '_';
  if (r[0] >= '0' && r[0] <= '9') r = arena_printf(A, "s_%s", r);
  return r;
}

static bool has_param(const pcb *b, const char *name) {
  for (int i = 0; i < b->nparams; i++)
    if (strcmp(b->params[i], name) == 0) return true;
  return false;
}

static void add_param(pcb *b, const char *name) {
  if (has_param(b, name)) return;
  const char **np = ARENA_ARRAY(b->A, const char *, b->nparams + 1);
  if (b->nparams) memcpy(np, b->params, sizeof(*np) * (size_t)b->nparams);
  np[b->nparams++] = name;
  b->params = np;
}

static void collect_params(pcb *b, const sx *x) {
  if (!x) return;
  for (int t = 0; t < x->nterms; t++) {
    const sx_atom *a = x->terms[t].atom;
    if (a->kind == SXA_PARAM) add_param(b, a->name);
    if (a->kind == SXA_FLOOR) collect_params(b, a->a);
  }
}

/* A size that is not quasi-affine (M*N) is a parameter of its own, as in
 * Poly-View: of p_M_N only p_M_N >= 1 is known. */
static void note_size(pcb *b, const sx *x) {
  if (!x || sx_is_affine(x)) return;
  for (int i = 0; i < b->nalias; i++)
    if (sx_equal(b->alias_of[i], x)) return;
  const char *nm = sanitize(b->A, arena_printf(b->A, "p_%s", sx_str(b->A, x)));
  const sx **no = ARENA_ARRAY(b->A, const sx *, b->nalias + 1);
  const char **nn = ARENA_ARRAY(b->A, const char *, b->nalias + 1);
  if (b->nalias) {
    memcpy(no, b->alias_of, sizeof(*no) * (size_t)b->nalias);
    memcpy(nn, b->alias_name, sizeof(*nn) * (size_t)b->nalias);
  }
  no[b->nalias] = x;
  nn[b->nalias++] = nm;
  b->alias_of = no;
  b->alias_name = nn;
  add_param(b, nm);
}

static const char *size_text(pcb *b, const sx *x) {
  for (int i = 0; i < b->nalias; i++)
    if (sx_equal(b->alias_of[i], x)) return b->alias_name[i];
  return sx_str(b->A, x);
}

static void params_of_expr(pcb *b, const rexpr *e) {
  if (!e) return;
  for (int i = 0; i < e->nmap; i++) collect_params(b, e->map[i]);
  for (int g = 0; g < e->ng; g++) {
    collect_params(b, e->guards[g].e);
    collect_params(b, e->guards[g].lo);
    collect_params(b, e->guards[g].hi);
    note_size(b, e->guards[g].lo);
    note_size(b, e->guards[g].hi);
  }
  params_of_expr(b, e->a);
  params_of_expr(b, e->b);
  params_of_expr(b, e->c);
}

/* Parameters: Poly-View's (in signature order), then any other symbol or
 * non-affine size of this region; all are >= 1. */
static void setup_params(pcb *b) {
  const region *r = b->r;
  const poly_view *pv = b->rs->pv;
  for (int i = 0; pv && i < pv->nparams; i++) add_param(b, pv->params[i]);
  for (int i = 0; i < r->niters + r->nred; i++) collect_params(b, r->it[i].size), note_size(b, r->it[i].size);
  for (int l = 0; l < r->nlets; l++) params_of_expr(b, r->lets[l].e);
  strbuf t = {0};
  sb_puts(&t, "[");
  sb_puts(&t, join_names(b->A, b->nparams, b->params));
  sb_puts(&t, "] -> ");
  b->pfx = sb_take_arena(&t, b->A);
  sb_puts(&t, b->pfx);
  sb_puts(&t, "{ : ");
  for (int i = 0; i < b->nparams; i++) {
    if (i) sb_puts(&t, " and ");
    sb_puts(&t, arena_printf(b->A, "%s >= 1", b->params[i]));
  }
  if (!b->nparams) sb_puts(&t, "true");
  sb_puts(&t, " }");
  b->context = sb_take_arena(&t, b->A);
}

static int cmp_int(const void *x, const void *y) { return *(const int *)x - *(const int *)y; }

static const char *axis_name(const pcb *b, int ax) { return b->r->it[ax].name; }

/* "name[m, n, k]" */
static const char *stmt_tuple(pcb *b, const pc_stmt *s) {
  const char **n = ARENA_ARRAY(b->A, const char *, s->ndims + 1);
  for (int i = 0; i < s->ndims; i++) n[i] = axis_name(b, s->dims[i]);
  return arena_printf(b->A, "%s[%s]", s->name, join_names(b->A, s->ndims, n));
}

/* "0 <= m < M and 0 <= n < N" (or "true") */
static const char *bounds_text(pcb *b, int n, const int *dims) {
  strbuf t = {0};
  for (int i = 0; i < n; i++) {
    if (i) sb_puts(&t, " and ");
    sb_puts(&t, arena_printf(b->A, "0 <= %s < %s", axis_name(b, dims[i]), size_text(b, b->r->it[dims[i]].size)));
  }
  if (!n) sb_puts(&t, "true");
  return sb_take_arena(&t, b->A);
}

/* The value array of a let: "L3[m, n]" over the let's axes. */
static const char *let_array(pcb *b, int let) {
  const rexpr *e = b->r->lets[let].e;
  const char **n = ARENA_ARRAY(b->A, const char *, e->nax + 1);
  for (int i = 0; i < e->nax; i++) n[i] = axis_name(b, e->ax[i]);
  return arena_printf(b->A, "L%d[%s]", let, join_names(b->A, e->nax, n));
}

static bool stmt_has_axis(const pc_stmt *s, int ax) {
  for (int i = 0; i < s->ndims; i++)
    if (s->dims[i] == ax) return true;
  return false;
}

static int stmt_axis_pos(const pc_stmt *s, int ax) {
  for (int i = 0; i < s->ndims; i++)
    if (s->dims[i] == ax) return i;
  return -1;
}

static bool unique_name(const pcb *b, const char *nm) {
  for (int i = 0; i < b->nst; i++)
    if (strcmp(b->st[i].name, nm) == 0) return false;
  for (int i = 0; i < b->r->niters + b->r->nred; i++)
    if (strcmp(b->r->it[i].name, nm) == 0) return false;
  return true;
}

static void make_stmts(pcb *b) {
  const region *r = b->r;
  b->st = ARENA_ARRAY(b->A, pc_stmt, r->nlets + r->nyields + 1);
  b->stmt_of_let = ARENA_ARRAY(b->A, int, r->nlets + 1);
  for (int k = 0; k < r->nlets + r->nyields; k++) {
    pc_stmt s = {0};
    s.let = k < r->nlets ? k : -1;
    s.yield = k < r->nlets ? -1 : k - r->nlets;
    const rexpr *e = r->lets[k < r->nlets ? k : r->yields[s.yield].let].e;
    bool red = s.let >= 0 && e->k == RX_REDUCE;
    s.dims = ARENA_ARRAY(b->A, int, e->nax + (red ? e->nred : 0) + 1);
    memcpy(s.dims, e->ax, sizeof(int) * (size_t)e->nax);
    qsort(s.dims, (size_t)e->nax, sizeof(int), cmp_int);
    s.ndims = e->nax;
    if (red) {
      memcpy(s.dims + e->nax, e->red, sizeof(int) * (size_t)e->nred);
      qsort(s.dims + e->nax, (size_t)e->nred, sizeof(int), cmp_int);
      s.ndims += e->nred;
    }
    s.label = s.let >= 0 ? r->lets[k].name : arena_printf(b->A, "yield.%s", r->out[r->yields[s.yield].output].name);
    const char *nm = sanitize(b->A, s.label);
    if (!unique_name(b, nm)) nm = arena_printf(b->A, "%s_%d", nm, k);
    s.name = nm;
    if (s.let >= 0) b->stmt_of_let[k] = b->nst;
    b->st[b->nst++] = s;
  }
}

/* ---- accesses ------------------------------------------------------------------------ */

/* The guards of the Selects above a read.  Past 32 the rest are dropped: a
 * larger access relation only over-approximates the dependences. */
typedef struct guard_list {
  int n;
  const ib_guard *g[32];
} guard_list;

static bool guard_affine(const ib_guard *g) { return sx_is_affine(g->e); }

static void put_guards(pcb *b, strbuf *t, const guard_list *gl) {
  for (int i = 0; i < gl->n; i++) {
    const ib_guard *g = gl->g[i];
    const char *e = sx_str(b->A, g->e);
    sb_puts(t, i ? " and " : " : ");
    if (g->lo) sb_puts(t, arena_printf(b->A, "%s <= %s", size_text(b, g->lo), e));
    if (g->lo && g->hi) sb_puts(t, " and ");
    if (g->hi) sb_puts(t, arena_printf(b->A, "%s < %s", e, size_text(b, g->hi)));
    if (!g->lo && !g->hi) sb_puts(t, "true");
  }
}

static void add_access(strbuf *t, const char *text) {
  if (t->n) sb_puts(t, "; ");
  sb_puts(t, text);
}

/* Reads of `e` by statement s: region inputs "I<k>[map]" (under the guards
 * of the Selects above them) and lets "L<l>[axes]". */
static void walk_reads(pcb *b, const pc_stmt *s, const rexpr *e, guard_list gl, strbuf *reads) {
  if (!e || b->failed) return;
  switch (e->k) {
  case RX_READ: {
    if (e->ldvar) {
      /* a read through a loaded index (a gather): the index's read is
       * affine; the source's is not, and like a non_scop view's it is left
       * out (the source is a region input, which the region never writes) */
      walk_reads(b, s, e->a, gl, reads);
      b->affine = false;
      return;
    }
    bool aff = true;
    for (int i = 0; i < e->nmap; i++) aff &= sx_is_affine(e->map[i]);
    for (int i = 0; i < gl.n; i++) aff &= guard_affine(gl.g[i]);
    if (!aff) {
      /* a non_scop view is only materialized: it writes nothing the region
       * reads, so leaving the read out loses no dependence */
      b->affine = false;
      return;
    }
    strbuf t = {0};
    sb_puts(&t, stmt_tuple(b, s));
    sb_puts(&t, arena_printf(b->A, " -> I%d[", e->input));
    for (int i = 0; i < e->nmap; i++) {
      if (i) sb_puts(&t, ", ");
      sb_puts(&t, sx_str(b->A, e->map[i]));
    }
    sb_puts(&t, "]");
    put_guards(b, &t, &gl);
    add_access(reads, sb_take_arena(&t, b->A));
    return;
  }
  case RX_LET: {
    /* the let at the reader's point; an axis of extent 1 that the reader
     * does not run (the let read squeezed, Region SSA's operand) at its
     * one point */
    const rexpr *le = b->r->lets[e->let].e;
    const char **n = ARENA_ARRAY(b->A, const char *, le->nax + 1);
    for (int i = 0; i < le->nax; i++) {
      int64_t one;
      n[i] = axis_name(b, le->ax[i]);
      if (stmt_has_axis(s, le->ax[i])) continue;
      if (!sx_is_int(b->r->it[le->ax[i]].size, &one) || one != 1) {
        PC_BUG(b, "'%s' reads let '%s' whose axis %s it does not run", s->label, b->r->lets[e->let].name, n[i]);
        return;
      }
      n[i] = "0";
    }
    add_access(reads, arena_printf(b->A, "%s -> L%d[%s]", stmt_tuple(b, s), e->let, join_names(b->A, le->nax, n)));
    return;
  }
  case RX_SELECT:
    if (e->a) {
      walk_reads(b, s, e->a, gl, reads);
      walk_reads(b, s, e->b, gl, reads);
      walk_reads(b, s, e->c, gl, reads);
      return;
    } else {
      guard_list in = gl;
      for (int g = 0; g < e->ng && in.n < 32; g++) in.g[in.n++] = &e->guards[g];
      walk_reads(b, s, e->b, in, reads);
      walk_reads(b, s, e->c, gl, reads);
      return;
    }
  default:
    walk_reads(b, s, e->a, gl, reads);
    walk_reads(b, s, e->b, gl, reads);
    walk_reads(b, s, e->c, gl, reads);
    return;
  }
}

static isl_union_map *read_umap(pcb *b, const char *body) {
  const char *text = arena_printf(b->A, "%s{ %s }", b->pfx, body);
  isl_union_map *u = isl_union_map_read_from_str(b->ctx, text);
  if (!u) PC_BUG(b, "isl rejected '%s': %s", text, isl_msg(b));
  return u;
}

/* ---- dependences ----------------------------------------------------------------------- */

typedef struct dep_tmp {
  pc_dep_kind kind;
  int from, to;          /* statements */
  isl_map *map;
} dep_tmp;

typedef struct dep_list {
  pcb *b;
  pc_dep_kind kind;
  int n, cap;
  dep_tmp *d;
} dep_list;

static int stmt_by_name(const pcb *b, const char *name) {
  for (int i = 0; name && i < b->nst; i++)
    if (strcmp(b->st[i].name, name) == 0) return i;
  return -1;
}

static isl_stat collect_dep(__isl_take isl_map *map, void *user) {
  dep_list *l = user;
  int from = stmt_by_name(l->b, isl_map_get_tuple_name(map, isl_dim_in));
  int to = stmt_by_name(l->b, isl_map_get_tuple_name(map, isl_dim_out));
  if (from < 0 || to < 0) {
    isl_map_free(map);
    return isl_stat_error;
  }
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 16;
    dep_tmp *nd = realloc(l->d, sizeof(*nd) * (size_t)l->cap);
    if (!nd) dlc_die_oom();
    l->d = nd;
  }
  l->d[l->n++] = (dep_tmp){l->kind, from, to, map};
  return isl_stat_ok;
}

static int cmp_dep(const void *x, const void *y) {
  const dep_tmp *a = x, *c = y;
  if (a->kind != c->kind) return (int)a->kind - (int)c->kind;
  if (a->from != c->from) return a->from - c->from;
  return a->to - c->to;
}

/* Simplifies a dependence relation and splits it into per-statement-pair maps. */
static void add_deps(pcb *b, dep_list *l, pc_dep_kind kind, __isl_take isl_union_map *dep) {
  dep = isl_union_map_gist_params(dep, isl_set_read_from_str(b->ctx, b->context));
  dep = isl_union_map_coalesce(dep);
  l->kind = kind;
  if (!dep || isl_union_map_foreach_map(dep, collect_dep, l) < 0)
    PC_BUG(b, "isl could not compute the %s dependences: %s", kind == PC_FLOW ? "flow" : kind == PC_ANTI ? "anti" : "output",
           isl_msg(b));
  isl_union_map_free(dep);
}

/* compute_flow for one kind: flow (sink reads, must-source writes), anti
 * (sink writes, may-source reads, killed by writes), output (sink writes,
 * must-source writes). */
static __isl_give isl_union_map *compute_deps(__isl_keep isl_union_map *sink, __isl_keep isl_union_map *must,
                                              __isl_keep isl_union_map *may, __isl_keep isl_union_map *kill,
                                              __isl_keep isl_union_map *sched) {
  isl_union_access_info *ai = isl_union_access_info_from_sink(isl_union_map_copy(sink));
  if (must) ai = isl_union_access_info_set_must_source(ai, isl_union_map_copy(must));
  if (may) ai = isl_union_access_info_set_may_source(ai, isl_union_map_copy(may));
  if (kill) ai = isl_union_access_info_set_kill(ai, isl_union_map_copy(kill));
  ai = isl_union_access_info_set_schedule_map(ai, isl_union_map_copy(sched));
  isl_union_flow *f = isl_union_access_info_compute_flow(ai);
  isl_union_map *dep = isl_union_flow_get_may_dependence(f);
  isl_union_flow_free(f);
  return dep;
}

/* Is every pair of `map` at distance 0 along region axis ax?  (true when one
 * side does not run ax). */
static isl_bool zero_distance(const pcb *b, __isl_keep isl_map *map, int from, int to, int ax) {
  int pi = stmt_axis_pos(&b->st[from], ax), po = stmt_axis_pos(&b->st[to], ax);
  if (pi < 0 || po < 0) return isl_bool_true;
  isl_map *eq = isl_map_equate(isl_map_copy(map), isl_dim_in, (unsigned)pi, isl_dim_out, (unsigned)po);
  isl_bool sub = isl_map_is_subset(map, eq);
  isl_map_free(eq);
  return sub;
}

static char *map_text(arena *A, __isl_keep isl_map *m) {
  char *s = isl_map_to_str(m);
  char *r = arena_strdup(A, s ? s : "");
  free(s);
  return r;
}

/* Builds the statements' domains, accesses and schedule, and computes the
 * three kinds of dependences; marks the axes they carry. */
static void dependences(pcb *b, pc_analysis *an, bool *carried) {
  const region *r = b->r;
  strbuf dom = {0}, rd = {0}, wr = {0}, sc = {0};
  int maxd = 0;
  for (int i = 0; i < b->nst; i++) maxd = b->st[i].ndims > maxd ? b->st[i].ndims : maxd;
  for (int i = 0; i < b->nst && !b->failed; i++) {
    const pc_stmt *s = &b->st[i];
    const char *tup = stmt_tuple(b, s);
    add_access(&dom, arena_printf(b->A, "%s : %s", tup, bounds_text(b, s->ndims, s->dims)));
    strbuf t = {0};
    sb_puts(&t, arena_printf(b->A, "%s -> [%d", tup, i));
    for (int d = 0; d < maxd; d++) sb_puts(&t, d < s->ndims ? arena_printf(b->A, ", %s", axis_name(b, s->dims[d])) : ", 0");
    sb_puts(&t, "]");
    add_access(&sc, sb_take_arena(&t, b->A));
    if (s->let >= 0) {
      const rexpr *e = r->lets[s->let].e;
      guard_list none = {0};
      walk_reads(b, s, e->k == RX_REDUCE ? e->a : e, none, &rd);
      add_access(&wr, arena_printf(b->A, "%s -> %s", tup, let_array(b, s->let)));
      if (e->k == RX_REDUCE) add_access(&rd, arena_printf(b->A, "%s -> %s", tup, let_array(b, s->let)));
    } else {
      const region_yield *y = &r->yields[s->yield];
      const rexpr *e = r->lets[y->let].e;
      const char **n = ARENA_ARRAY(b->A, const char *, e->nax + 1);
      for (int k = 0; k < e->nax; k++) n[k] = axis_name(b, e->ax[k]);
      add_access(&rd, arena_printf(b->A, "%s -> %s", tup, let_array(b, y->let)));
      add_access(&wr, arena_printf(b->A, "%s -> O%d[%s]", tup, y->output, join_names(b->A, e->nax, n)));
    }
  }
  char *dom_s = sb_take_arena(&dom, b->A), *rd_s = sb_take_arena(&rd, b->A), *wr_s = sb_take_arena(&wr, b->A),
       *sc_s = sb_take_arena(&sc, b->A);
  if (b->failed) return;
  const char *dom_text = arena_printf(b->A, "%s{ %s }", b->pfx, dom_s);
  isl_union_set *domain = isl_union_set_read_from_str(b->ctx, dom_text);
  if (!domain) {
    PC_BUG(b, "isl rejected the domain '%s': %s", dom_text, isl_msg(b));
    return;
  }
  domain = isl_union_set_intersect_params(domain, isl_set_read_from_str(b->ctx, b->context));
  isl_union_map *reads = read_umap(b, rd_s);
  isl_union_map *writes = read_umap(b, wr_s);
  isl_union_map *sched = read_umap(b, sc_s);
  reads = isl_union_map_intersect_domain(reads, isl_union_set_copy(domain));
  writes = isl_union_map_intersect_domain(writes, isl_union_set_copy(domain));
  sched = isl_union_map_intersect_domain(sched, domain);
  dep_list l = {b, PC_FLOW, 0, 0, NULL};
  if (reads && writes && sched) {
    add_deps(b, &l, PC_FLOW, compute_deps(reads, writes, NULL, NULL, sched));
    add_deps(b, &l, PC_ANTI, compute_deps(writes, NULL, reads, writes, sched));
    add_deps(b, &l, PC_OUTPUT, compute_deps(writes, writes, NULL, NULL, sched));
  } else if (!b->failed) {
    PC_BUG(b, "isl could not build the accesses of the region: %s", isl_msg(b));
  }
  isl_union_map_free(reads);
  isl_union_map_free(writes);
  isl_union_map_free(sched);
  if (l.n > 1) qsort(l.d, (size_t)l.n, sizeof(*l.d), cmp_dep);
  an->ndeps = l.n;
  an->deps = ARENA_ARRAY(b->A, pc_dep, l.n + 1);
  /* compute-at: the epilogue runs at the accumulator's point when every flow
   * dependence into it (from the accumulator or an earlier epilogue let) has
   * distance 0 along the accumulator's output axes */
  const rexpr *acc = r->acc_let >= 0 ? r->lets[r->acc_let].e : NULL;
  int acc_st = r->acc_let >= 0 ? b->stmt_of_let[r->acc_let] : -1;
  const char *bad = NULL;
  for (int i = 0; i < l.n; i++) {
    dep_tmp *d = &l.d[i];
    pc_dep *o = &an->deps[i];
    o->kind = d->kind;
    o->relation = map_text(b->A, d->map);
    o->from = b->st[d->from].label;
    o->to = b->st[d->to].label;
    for (int ax = 0; ax < r->niters + r->nred && !b->failed; ax++) {
      isl_bool z = zero_distance(b, d->map, d->from, d->to, ax);
      if (z < 0) PC_BUG(b, "isl could not compare distances of %s: %s", o->relation, isl_msg(b));
      else if (!z) carried[ax] = true;
    }
    int fl = b->st[d->from].let, tl = b->st[d->to].let;
    bool into_epi = d->kind == PC_FLOW && acc && tl >= 0 && r->lets[tl].post_reduce &&
                    (d->from == acc_st || (fl >= 0 && r->lets[fl].post_reduce));
    for (int k = 0; into_epi && !bad && acc && k < acc->nax && !b->failed; k++) {
      isl_bool z = zero_distance(b, d->map, d->from, d->to, acc->ax[k]);
      if (z < 0) PC_BUG(b, "isl could not compare distances of %s: %s", o->relation, isl_msg(b));
      else if (!z)
        bad = arena_printf(b->A, "the flow dependence %s -> %s has a nonzero distance along %s: %s", o->from, o->to,
                           axis_name(b, acc->ax[k]), o->relation);
    }
  }
  for (int i = 0; i < l.n; i++) isl_map_free(l.d[i].map);
  free(l.d);
  if (!acc) {
    an->compute_at_ok = false;
    an->compute_at_why = "the region has no accumulator to compute the epilogue at";
  } else if (bad) {
    an->compute_at_ok = false;
    an->compute_at_why = bad;
  } else {
    const char **epi = ARENA_ARRAY(b->A, const char *, r->nlets + 1), **oax = ARENA_ARRAY(b->A, const char *, acc->nax + 1);
    int ne = 0;
    for (int k = 0; k < r->nlets; k++)
      if (r->lets[k].post_reduce) epi[ne++] = r->lets[k].name;
    for (int k = 0; k < acc->nax; k++) oax[k] = axis_name(b, acc->ax[k]);
    an->compute_at_ok = true;
    an->compute_at_why =
        ne ? arena_printf(b->A, "every flow dependence from %s into the epilogue (%s) has distance 0 along %s",
                          r->lets[r->acc_let].name, join_names(b->A, ne, epi), join_names(b->A, acc->nax, oax))
           : arena_printf(b->A, "no epilogue lets after %s", r->lets[r->acc_let].name);
  }
}

/* ---- axes ------------------------------------------------------------------------------ */

/* The MMA granule (mma.m16n8k16) of an axis: 16 for M and K axes, 8 for N
 * axes; 1 (never a tail) for batch axes and regions without a contraction. */
static int granule(const pc_contraction *c, int ax) {
  if (!c->present) return 1;
  for (int i = 0; i < c->nm; i++)
    if (c->m_axes[i] == ax) return PC_MMA_M;
  for (int i = 0; i < c->nn; i++)
    if (c->n_axes[i] == ax) return PC_MMA_N;
  for (int i = 0; i < c->nk; i++)
    if (c->k_axes[i] == ax) return PC_MMA_K;
  return 1;
}

static void classify_axes(pcb *b, pc_analysis *an, const bool *carried) {
  const region *r = b->r;
  int n = r->niters + r->nred;
  bool *reduced = ARENA_ARRAY(b->A, bool, n + 1);
  for (int l = 0; l < r->nlets; l++) {
    const rexpr *e = r->lets[l].e;
    if (e->k == RX_REDUCE)
      for (int k = 0; k < e->nred; k++)
        if (e->red[k] >= 0 && e->red[k] < n) reduced[e->red[k]] = true;
  }
  an->parallel_axes = ARENA_ARRAY(b->A, const char *, n + 1);
  an->reduce_axes = ARENA_ARRAY(b->A, const char *, n + 1);
  an->tail_axes = ARENA_ARRAY(b->A, const char *, n + 1);
  for (int ax = 0; ax < n; ax++) {
    const char *nm = r->it[ax].name;
    if (ax < r->niters && !carried[ax] && !reduced[ax]) an->parallel_axes[an->npar++] = nm;
    else an->reduce_axes[an->nred++] = nm;
    int64_t v;
    int g = granule(&an->con, ax);
    if (g > 1 && (!sx_is_int(r->it[ax].size, &v) || v % g != 0)) an->tail_axes[an->ntail++] = nm;
  }
}

/* ---- halo ------------------------------------------------------------------------------ */

static bool in_list(int n, const int *l, int x) {
  for (int i = 0; i < n; i++)
    if (l[i] == x) return true;
  return false;
}

static int axis_by_name(const region *r, const char *name) {
  for (int i = 0; i < r->niters + r->nred; i++)
    if (strcmp(r->it[i].name, name) == 0) return i;
  return -1;
}

static bool floor_mentions_any(const region *r, const sx *x, int n, const int *axes) {
  for (int t = 0; t < x->nterms; t++) {
    const sx_atom *a = x->terms[t].atom;
    if (a->kind != SXA_FLOOR) continue;
    for (int i = 0; i < n; i++)
      if (sx_mentions(a->a, SXA_VAR, r->it[axes[i]].name)) return true;
  }
  return false;
}

/* Max over its domain of a piecewise affine value, when finite. */
static bool pa_max(pcb *b, __isl_take isl_pw_aff *pa, int64_t *out) {
  isl_val *v = isl_pw_aff_max_val(pa);
  bool ok = v && isl_val_is_int(v);
  if (ok) *out = isl_val_get_num_si(v);
  if (!v) PC_BUG(b, "isl could not bound a halo: %s", isl_msg(b));
  isl_val_free(v);
  return ok;
}

/* The halo of one map entry `x` that strides along the output axis `it`
 * (coefficient s): the least lo, hi >= 0 such that, for every output point,
 * the elements read lie in [s*o - lo, s*o + s - 1 + hi] (mirrored for s < 0).
 * isl gives the image of the entry over the other axes of the statement
 * (reduce axes, other output axes) as lexmin/lexmax functions of o. */
static bool entry_halo(pcb *b, const pc_stmt *s, const sx *x, int it, int64_t stride, int64_t *lo, int64_t *hi) {
  int *ord = ARENA_ARRAY(b->A, int, s->ndims + 1), n = 0;
  ord[n++] = it;
  for (int i = 0; i < s->ndims; i++)
    if (s->dims[i] != it) ord[n++] = s->dims[i];
  const char **nm = ARENA_ARRAY(b->A, const char *, n + 1);
  for (int i = 0; i < n; i++) nm[i] = axis_name(b, ord[i]);
  const char *text = arena_printf(b->A, "%s{ [%s] -> [(%s)] : %s }", b->pfx, join_names(b->A, n, nm), sx_str(b->A, x),
                                  bounds_text(b, n, ord));
  isl_map *m = isl_map_read_from_str(b->ctx, text);
  if (!m) {
    PC_BUG(b, "isl rejected the halo map '%s': %s", text, isl_msg(b));
    return false;
  }
  m = isl_map_intersect_params(m, isl_set_read_from_str(b->ctx, b->context));
  m = isl_map_project_out(m, isl_dim_in, 1, (unsigned)(n - 1));
  isl_pw_multi_aff *mn = isl_map_lexmin_pw_multi_aff(isl_map_copy(m));
  isl_pw_multi_aff *mx = isl_map_lexmax_pw_multi_aff(m);
  isl_pw_aff *emin = isl_pw_multi_aff_get_pw_aff(mn, 0), *emax = isl_pw_multi_aff_get_pw_aff(mx, 0);
  isl_pw_multi_aff_free(mn);
  isl_pw_multi_aff_free(mx);
  int64_t a = stride > 0 ? stride : -stride;
  const char *o = nm[0];
  const char *lo_t = arena_printf(b->A, "%s{ [%s] -> [(%lld*%s - %lld)] }", b->pfx, o, (long long)stride, o,
                                  (long long)(stride > 0 ? 0 : a - 1));
  const char *hi_t = arena_printf(b->A, "%s{ [%s] -> [(%lld*%s + %lld)] }", b->pfx, o, (long long)stride, o,
                                  (long long)(stride > 0 ? a - 1 : 0));
  isl_pw_aff *core_lo = isl_pw_aff_read_from_str(b->ctx, lo_t), *core_hi = isl_pw_aff_read_from_str(b->ctx, hi_t);
  if (!emin || !emax || !core_lo || !core_hi) {
    PC_BUG(b, "isl could not bound the read '%s': %s", text, isl_msg(b));
    isl_pw_aff_free(emin);
    isl_pw_aff_free(emax);
    isl_pw_aff_free(core_lo);
    isl_pw_aff_free(core_hi);
    return false;
  }
  bool ok = pa_max(b, isl_pw_aff_sub(core_lo, emin), lo);
  ok &= pa_max(b, isl_pw_aff_sub(emax, core_hi), hi);
  if (*lo < 0) *lo = 0;
  if (*hi < 0) *hi = 0;
  return ok && !b->failed;
}

typedef struct read_seen {
  int n, cap;
  const char **key;
} read_seen;

/* Halo entries of one read (one per tensor dim that strides along exactly
 * one output axis), and its bytes per output point. */
static void read_halo(pcb *b, pc_analysis *an, const pc_stmt *s, const rexpr *let, const rexpr *rd, read_seen *seen,
                      int *cap) {
  const region *r = b->r;
  for (int i = 0; i < rd->nmap; i++)
    if (!sx_is_affine(rd->map[i])) return;
  strbuf k = {0};
  sb_puts(&k, arena_printf(b->A, "%d", rd->input));
  for (int i = 0; i < rd->nmap; i++) sb_puts(&k, arena_printf(b->A, "|%s", sx_str(b->A, rd->map[i])));
  const char *key = sb_take_arena(&k, b->A);
  for (int i = 0; i < seen->n; i++)
    if (strcmp(seen->key[i], key) == 0) return;
  ARENA_PUSH(b->A, seen->key, seen->n, seen->cap, key);
  int64_t span = 1, core = 1;
  bool any = false;
  for (int d = 0; d < rd->nmap && !b->failed; d++) {
    const sx *x = rd->map[d];
    if (floor_mentions_any(r, x, let->nax, let->ax)) continue;
    int it = -1, nout = 0;
    int64_t stride = 0;
    for (int t = 0; t < x->nterms; t++) {
      const sx_atom *a = x->terms[t].atom;
      int ax = a->kind == SXA_VAR ? axis_by_name(r, a->name) : -1;
      if (ax >= 0 && in_list(let->nax, let->ax, ax)) it = ax, stride = x->terms[t].coef, nout++;
    }
    if (nout != 1 || stride == 0) continue;
    pc_halo h = {r->in[rd->input].name, d, axis_name(b, it), stride, 0, 0};
    if (!entry_halo(b, s, x, it, stride, &h.lo, &h.hi)) continue;
    ARENA_PUSH(b->A, an->halo, an->nhalo, *cap, h);
    int64_t a = stride > 0 ? stride : -stride;
    span *= a + h.lo + h.hi;
    core *= a;
    an->halo_axis[it] += h.lo + h.hi;
    any = true;
  }
  if (any) an->halo_bytes += (int64_t)dtype_bytes(r->in[rd->input].dt) * (span - core);
}

static void walk_halo(pcb *b, pc_analysis *an, const pc_stmt *s, const rexpr *let, const rexpr *e, read_seen *seen,
                      int *cap) {
  if (!e || b->failed) return;
  if (e->k == RX_READ && e->ldvar) {
    /* a gather has no halo along its loaded index; its index may */
    walk_halo(b, an, s, let, e->a, seen, cap);
    return;
  }
  if (e->k == RX_READ) {
    read_halo(b, an, s, let, e, seen, cap);
    return;
  }
  walk_halo(b, an, s, let, e->a, seen, cap);
  walk_halo(b, an, s, let, e->b, seen, cap);
  walk_halo(b, an, s, let, e->c, seen, cap);
}

static void halos(pcb *b, pc_analysis *an) {
  const region *r = b->r;
  an->halo_axis = ARENA_ARRAY(b->A, int64_t, r->niters + r->nred + 1);
  read_seen seen = {0};
  int cap = 0;
  for (int l = 0; l < r->nlets && !b->failed; l++)
    walk_halo(b, an, &b->st[b->stmt_of_let[l]], r->lets[l].e, r->lets[l].e, &seen, &cap);
}

/* ---- buffers, barriers, banks ------------------------------------------------------------ */

/* The value `in` of region ri was yielded "deferred" by an earlier region. */
static const char *deferred_from(const region_set *rs, int ri, const region_memref *in, int *from) {
  if (in->signature) return NULL;
  for (int j = 0; j < ri; j++)
    for (int o = 0; o < rs->r[j].nout; o++) {
      const region_memref *m = &rs->r[j].out[o];
      if (m->entry == in->entry && m->materialize == MAT_DEFERRED) {
        if (from) *from = j;
        return rs->r[j].name;
      }
    }
  return NULL;
}

/* The Reduce let that e reads, directly or through other lets, or -1. */
static int reduce_under(const region *r, const rexpr *e) {
  if (!e) return -1;
  if (e->k == RX_LET) {
    if (r->lets[e->let].e->k == RX_REDUCE) return e->let;
    return reduce_under(r, r->lets[e->let].e);
  }
  int l = reduce_under(r, e->a);
  if (l < 0) l = reduce_under(r, e->b);
  if (l < 0) l = reduce_under(r, e->c);
  return l;
}

/* A Read through a loaded index (a Gather's) that e makes, directly or
 * through other lets, or NULL. */
static const rexpr *gather_under(const region *r, const rexpr *e) {
  if (!e) return NULL;
  if (e->k == RX_LET) return gather_under(r, r->lets[e->let].e);
  if (e->k == RX_READ && e->ldvar) return e;
  const rexpr *x = gather_under(r, e->a);
  if (!x) x = gather_under(r, e->b);
  if (!x) x = gather_under(r, e->c);
  return x;
}

/* A Read of input `in` in e, or NULL. */
static const rexpr *read_of(const rexpr *e, int in) {
  if (!e) return NULL;
  if (e->k == RX_READ) return e->input == in ? e : NULL;
  const rexpr *x = read_of(e->a, in);
  if (!x) x = read_of(e->b, in);
  if (!x) x = read_of(e->c, in);
  return x;
}

void pc_fusion(arena *A, const region_set *rs, int ci, pc_analysis *a) {
  const region *r = &rs->r[ci];
  a->fuse_in = a->fuse_from = a->fuse_out = -1;
  a->fuse_ok = false;
  a->fuse_why = NULL;
  int nread = 0;
  for (int i = 0; i < r->nin; i++) {
    if (r->in[i].signature) continue;
    for (int j = 0; j < ci; j++)
      for (int o = 0; o < rs->r[j].nout; o++) {
        const region_memref *m = &rs->r[j].out[o];
        if (m->entry != r->in[i].entry || m->materialize != MAT_DEFERRED) continue;
        if (nread++ == 0) a->fuse_in = i, a->fuse_from = j, a->fuse_out = o;
      }
  }
  if (a->fuse_in < 0) return;
  const region *p = &rs->r[a->fuse_from];
  const region_memref *m = &p->out[a->fuse_out];
  int y = -1;
  for (int k = 0; k < p->nyields; k++)
    if (p->yields[k].output == a->fuse_out) y = k;
  const rexpr *ye = y >= 0 ? p->lets[p->yields[y].let].e : NULL;
  const rexpr *rd = NULL;
  for (int l = 0; l < r->nlets && !rd; l++) rd = read_of(r->lets[l].e, a->fuse_in);
  const char *at = rd ? region_expr_text(A, r, rd) : m->name;
  int red = ye ? reduce_under(p, ye) : -1;
  bool same_axes = ye && ye->nax == m->rank;
  for (int d = 0; same_axes && d < m->rank; d++) same_axes = sx_equal(p->it[ye->ax[d]].size, m->shape[d]);
  if (nread > 1)
    a->fuse_why = arena_printf(A, "reads %d values yielded deferred; one fuses at a time", nread);
  else if (r->acc_let >= 0)
    a->fuse_why = arena_printf(A, "%s is read by a contraction, whose operand tiles are copied to shared memory as "
                                  "stored: the skeleton computes no prologue",
                               m->name);
  else if (p->acc_let >= 0)
    a->fuse_why = arena_printf(A, "%s comes from the contraction %s: a point of it needs the K loop of the CTA that "
                                  "owns its output tile",
                               m->name, p->name);
  else if (red >= 0)
    a->fuse_why = arena_printf(A, "%s depends on the reduction %s over %s: a point of it needs the producer's whole "
                                  "row, which the reader's CTA does not own",
                               m->name, p->lets[red].name, p->it[p->lets[red].e->red[0]].name);
  else if (rd && rd->ldvar)
    a->fuse_why = arena_printf(A, "%s is read through a loaded index (a Gather, at %s): the producer's maps would "
                                  "carry the loaded value, which Poly Core's affine maps cannot",
                               m->name, at);
  else if (ye && gather_under(p, ye))
    a->fuse_why = arena_printf(A, "%s reads through a loaded index (a Gather): the reader's maps would carry the "
                                  "loaded value, which Poly Core's affine maps cannot",
                               m->name);
  else if (!same_axes)
    a->fuse_why = arena_printf(A, "%s is not yielded over its let's axes", m->name);
  else if (!rd)
    a->fuse_why = arena_printf(A, "%s is not read by a let", m->name);
  else {
    a->fuse_ok = true;
    a->fuse_why = arena_printf(A, "%s is pointwise in %s: the reader computes it in registers at each point it reads "
                                  "(%s) from %s's inputs, and nothing is stored",
                               m->name, p->name, at, p->name);
  }
}

static bool reads_input(const rexpr *e, int in) {
  if (!e) return false;
  if (e->k == RX_READ) return e->input == in || reads_input(e->a, in);
  return reads_input(e->a, in) || reads_input(e->b, in) || reads_input(e->c, in);
}

/* Ring depth of the operand pipeline: 3 when the K loop is symbolic or runs
 * at least three MMA-K tiles (a deeper cp.async ring hides more latency),
 * else 2. */
static int ring_depth(const region *r, const pc_contraction *c) {
  int64_t k = 1;
  for (int i = 0; i < c->nk; i++) {
    int64_t v;
    if (!sx_is_int(r->it[c->k_axes[i]].size, &v)) return 3;
    k *= v;
    if (k >= 3 * PC_MMA_K) return 3;
  }
  return k >= 3 * PC_MMA_K ? 3 : 2;
}

static const char *axes_list(pcb *b, int n, const int *ax) {
  const char **nm = ARENA_ARRAY(b->A, const char *, n + 1);
  for (int i = 0; i < n; i++) nm[i] = axis_name(b, ax[i]);
  return join_names(b->A, n, nm);
}

static void buffers(pcb *b, pc_analysis *an) {
  const region *r = b->r;
  const pc_contraction *c = &an->con;
  arena *A = b->A;
  an->buf = ARENA_ARRAY(A, pc_buffer, r->nin + r->nlets + r->nout + 1);
  int depth = c->present ? ring_depth(r, c) : 2;
  for (int i = 0; i < r->nin; i++) {
    pc_buffer *o = &an->buf[an->nbuf++];
    o->value = r->in[i].name;
    o->role = "input";
    o->depth = 1;
    int from = -1;
    const char *def = deferred_from(b->rs, b->ri, &r->in[i], &from);
    bool epi = false;
    for (int l = 0; l < r->nlets; l++) epi |= r->lets[l].post_reduce && reads_input(r->lets[l].e, i);
    if (def && i == an->fuse_in && an->fuse_ok) {
      o->buffer = BUF_REG;
      o->why = arena_printf(A, "yielded deferred by %s and fused: %s", def, an->fuse_why);
    } else if (def && i == an->fuse_in && r->acc_let < 0) {
      o->buffer = BUF_GMEM;
      o->why = arena_printf(A, "yielded deferred by %s, not fused (%s): its kernel stores it to the caller's workspace "
                               "and this region's kernel reads it",
                            def, an->fuse_why);
    } else if (def && region_streams_to(&b->rs->r[from], r)) {
      o->buffer = BUF_REG;
      o->why = arena_printf(A, "yielded deferred by %s: kept in registers, never stored (as FlashAttention keeps P)", def);
    } else if (def) {
      o->buffer = BUF_GMEM;
      o->why = arena_printf(A, "yielded deferred by %s to a contraction that does not stream it: the chain's earlier "
                               "kernel stores it to the caller's workspace and this region's kernel reads it",
                            def);
    } else if (c->present && (i == c->lhs || i == c->rhs)) {
      bool lhs = i == c->lhs;
      int nmiss = lhs ? c->nn : c->nm;
      const int *miss = lhs ? c->n_axes : c->m_axes;
      if (nmiss > 0) {
        o->buffer = BUF_SMEM_RING;
        o->depth = depth;
        o->why = arena_printf(A, "contraction operand reused across %s, which it does not index; %d-stage ring over %s",
                              axes_list(b, nmiss, miss), depth, axes_list(b, c->nk, c->k_axes));
      } else {
        o->buffer = BUF_REG;
        o->why = "contraction operand indexed by every output axis: no reuse, loaded straight into fragments";
      }
    } else if (epi) {
      o->buffer = BUF_REG;
      o->why = "epilogue input read once per output element";
    } else {
      o->buffer = BUF_REG;
      o->why = "read once per point where it is used";
    }
  }
  for (int l = 0; l < r->nlets; l++) {
    pc_buffer *o = &an->buf[an->nbuf++];
    o->value = r->lets[l].name;
    o->role = "let";
    o->buffer = BUF_REG;
    o->depth = 1;
    const rexpr *e = r->lets[l].e;
    if (l == r->acc_let) o->why = "the accumulator: mma fragments in registers for the whole K loop";
    else if (e->k == RX_REDUCE)
      o->why = arena_printf(A, "%s reduction over %s: one register per row, combined across threads", reduce_op_name(e->rop),
                            axes_list(b, e->nred, e->red));
    else if (r->lets[l].post_reduce) o->why = "epilogue value at the accumulator's point";
    else o->why = "pointwise value at its point";
  }
  for (int k = 0; k < r->nout; k++) {
    pc_buffer *o = &an->buf[an->nbuf++];
    o->value = r->out[k].name;
    o->role = "output";
    o->depth = 1;
    bool deferred = r->out[k].materialize == MAT_DEFERRED;
    /* the reader's verdict: a row region that does not fuse it reads it
     * from the workspace */
    pc_analysis next = {0};
    if (deferred && b->ri + 1 < b->rs->n) pc_fusion(A, b->rs, b->ri + 1, &next);
    bool mine = deferred && next.fuse_in >= 0 && next.fuse_from == b->ri && next.fuse_out == k;
    o->buffer = deferred ? BUF_REG : BUF_GMEM;
    o->why = deferred ? "yielded deferred: handed to the next region in registers (no GMEM round trip)"
                      : "region output: stored once to global memory";
    if (mine && next.fuse_ok)
      o->why = arena_printf(A, "yielded deferred and fused into %s: never stored", b->rs->r[b->ri + 1].name);
    else if (mine && b->rs->r[b->ri + 1].acc_let < 0)
      o->buffer = BUF_GMEM, o->why = arena_printf(A, "yielded deferred, not fused into %s (%s): stored to the caller's "
                                                   "workspace",
                                                b->rs->r[b->ri + 1].name, next.fuse_why);
    else if (deferred && b->ri + 1 < b->rs->n && !region_streams_to(r, &b->rs->r[b->ri + 1]))
      o->buffer = BUF_GMEM, o->why = arena_printf(A, "yielded deferred to the contraction %s, which does not stream it: "
                                                   "stored to the caller's workspace",
                                                b->rs->r[b->ri + 1].name);
  }
  an->min_buffer = BUF_REG;
  an->min_depth = 1;
  if (r->acc_let >= 0) {
    const pc_buffer *acc = &an->buf[r->nin + r->acc_let];
    an->min_buffer = acc->buffer;
    an->min_depth = acc->depth;
  }
}

static void hints(pcb *b, pc_analysis *an) {
  const region *r = b->r;
  const pc_contraction *c = &an->con;
  arena *A = b->A;
  const char *ring[2];
  int nring = 0, depth = 2;
  an->bank = ARENA_ARRAY(A, pc_bank, 3);
  for (int i = 0; i < an->nbuf; i++) {
    const pc_buffer *o = &an->buf[i];
    if (strcmp(o->role, "input") || o->buffer != BUF_SMEM_RING || nring == 2) continue;
    ring[nring++] = o->value;
    depth = o->depth;
    bool lhs = i == c->lhs; /* inputs come first in buf, in region order */
    int contig = lhs ? c->lhs_contig : c->rhs_contig;
    bool kc = lhs ? c->lhs_k_contig : c->rhs_k_contig;
    const char *row = lhs ? "m" : "n";
    pc_bank *bk = &an->bank[an->nbank++];
    bk->tensor = o->value;
    bk->k_contig = kc;
    bk->swizzle = "xor16B";
    if (contig < 0) {
      bk->ldmatrix = "none";
      bk->why = arena_printf(A, "%s has no contiguous index (its last dim is not a single %s or K axis): scalar "
                                "ld.shared; XOR-16B swizzle still spreads the rows over the banks",
                             o->value, lhs ? "M" : "N");
    } else if (kc) {
      bk->ldmatrix = "ldmatrix.x4";
      bk->why = arena_printf(A, "%s is stored with K (%s) contiguous: tile rows are %s, 16-byte chunks along k; "
                                "ldmatrix.x4 loads four 8x8 b16 matrices; swz<BK> XORs the chunk index with the row "
                                "so the 8 row addresses of each matrix fall in distinct 16-byte bank groups",
                             o->value, axis_name(b, contig), row);
    } else {
      bk->ldmatrix = "ldmatrix.x4.trans";
      bk->why = arena_printf(A, "%s is stored with %s (%s) contiguous: tile rows are k; ldmatrix.x4.trans transposes "
                                "the 8x8 b16 matrices into the k-major mma.m16n8k16 fragment; swz<B%s> XORs the "
                                "chunk index with the row so the 8 rows of each matrix fall in distinct bank groups",
                             o->value, lhs ? "M" : "N", axis_name(b, contig), lhs ? "M" : "N");
    }
  }
  int cap = 8;
  an->barrier_sm80 = ARENA_ARRAY(A, const char *, cap + r->nlets);
  an->barrier_sm90 = ARENA_ARRAY(A, const char *, cap + r->nlets);
  if (nring) {
    const char *ops = nring == 2 ? arena_printf(A, "%s, %s", ring[0], ring[1]) : ring[0];
    an->barrier_sm80[an->nbarrier80++] = arena_printf(A, "cp.async.commit_group after each stage's loads of %s", ops);
    an->barrier_sm80[an->nbarrier80++] = arena_printf(
        A, "cp.async.wait_group %d + bar.sync before consuming a stage (%d stages)", depth - 2, depth);
    an->barrier_sm80[an->nbarrier80++] = "bar.sync before the epilogue reuses shared memory";
    an->barrier_sm90[an->nbarrier90++] =
        arena_printf(A, "mbarrier.arrive.expect_tx per stage (the bytes of the %s tiles)", ops);
    an->barrier_sm90[an->nbarrier90++] =
        arena_printf(A, "mbarrier.try_wait.parity before consuming a stage (%d stages, parity flips per lap)", depth);
    an->barrier_sm90[an->nbarrier90++] =
        "wgmma.fence before the first wgmma of a stage, wgmma.commit_group after, wgmma.wait_group before the "
        "stage is refilled and before the epilogue";
  }
  for (int l = 0; l < r->nlets; l++) {
    const rexpr *e = r->lets[l].e;
    if (e->k != RX_REDUCE || l == r->acc_let) continue;
    bool split = false; /* the reduced axis is spread over threads: an output (M/N/batch) axis */
    for (int k = 0; k < e->nred; k++) split |= e->red[k] < r->niters;
    if (!split) continue;
    const char *h = arena_printf(A, "row reduction %s over %s: shfl.sync.bfly within a warp, bar.sync through shared "
                                    "memory across warps",
                                 r->lets[l].name, axes_list(b, e->nred, e->red));
    an->barrier_sm80[an->nbarrier80++] = h;
    an->barrier_sm90[an->nbarrier90++] = h;
  }
}

/* ---- driver ------------------------------------------------------------------------------ */

static void analyze_region(pcb *b, pc_analysis *an) {
  const region *r = b->r;
  an->region = b->ri;
  pc_classify(b->A, r, &an->con);
  b->affine = true;
  pc_fusion(b->A, b->rs, b->ri, an);
  setup_params(b);
  make_stmts(b);
  bool *carried = ARENA_ARRAY(b->A, bool, r->niters + r->nred + 1);
  dependences(b, an, carried);
  if (b->failed) return;
  classify_axes(b, an, carried);
  halos(b, an);
  an->affine = b->affine;
  buffers(b, an);
  hints(b, an);
}

pc_report *pc_analyze(arena *A, const region_set *rs, diag_list *dl) {
  pc_report *p = ARENA_NEW(A, pc_report);
  p->A = A;
  p->rs = rs;
  p->n = rs->n;
  p->a = ARENA_ARRAY(A, pc_analysis, rs->n + 1);
  isl_ctx *ctx = isl_ctx_alloc();
  if (!ctx) dlc_die_oom();
  isl_options_set_on_error(ctx, ISL_ON_ERROR_CONTINUE);
  bool ok = true;
  for (int i = 0; i < rs->n && ok; i++) {
    pcb b = {0};
    b.A = A;
    b.ctx = ctx;
    b.rs = rs;
    b.ri = i;
    b.r = &rs->r[i];
    b.dl = dl;
    b.at = arena_printf(A, "Poly Core[%s]", rs->r[i].name);
    analyze_region(&b, &p->a[i]);
    ok = !b.failed;
  }
  isl_ctx_free(ctx);
  return ok ? p : NULL;
}

/* ---- dump -------------------------------------------------------------------------------- */

static cJSON *str_array(int n, const char *const *s) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(s[i]));
  return a;
}

static cJSON *axis_array(const region *r, int n, const int *ax) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(r->it[ax[i]].name));
  return a;
}

static cJSON *contraction_json(const region *r, const pc_contraction *c) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddBoolToObject(o, "present", c->present);
  if (!c->present) return o;
  cJSON_AddStringToObject(o, "lhs", r->in[c->lhs].name);
  cJSON_AddStringToObject(o, "rhs", r->in[c->rhs].name);
  cJSON_AddItemToObject(o, "m", axis_array(r, c->nm, c->m_axes));
  cJSON_AddItemToObject(o, "n", axis_array(r, c->nn, c->n_axes));
  cJSON_AddItemToObject(o, "batch", axis_array(r, c->nb, c->b_axes));
  cJSON_AddItemToObject(o, "k", axis_array(r, c->nk, c->k_axes));
  cJSON *ct = cJSON_AddObjectToObject(o, "contiguous");
  if (c->lhs_contig >= 0) cJSON_AddStringToObject(ct, "lhs", r->it[c->lhs_contig].name);
  else cJSON_AddNullToObject(ct, "lhs");
  if (c->rhs_contig >= 0) cJSON_AddStringToObject(ct, "rhs", r->it[c->rhs_contig].name);
  else cJSON_AddNullToObject(ct, "rhs");
  cJSON_AddBoolToObject(ct, "lhs_k", c->lhs_k_contig);
  cJSON_AddBoolToObject(ct, "rhs_k", c->rhs_k_contig);
  return o;
}

cJSON *pc_dump(const pc_report *p) {
  static const char *const kinds[] = {"flow", "anti", "output"};
  cJSON *root = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(root, "analysis");
  for (int i = 0; p && i < p->n; i++) {
    const pc_analysis *a = &p->a[i];
    const region *r = &p->rs->r[a->region];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "region", r->name);
    cJSON_AddItemToObject(o, "parallel_axes", str_array(a->npar, a->parallel_axes));
    cJSON_AddItemToObject(o, "reduce_axes", str_array(a->nred, a->reduce_axes));
    cJSON_AddItemToObject(o, "tail_axes", str_array(a->ntail, a->tail_axes));
    cJSON *ca = cJSON_AddObjectToObject(o, "compute_at");
    cJSON_AddBoolToObject(ca, "ok", a->compute_at_ok);
    cJSON_AddStringToObject(ca, "why", a->compute_at_why ? a->compute_at_why : "");
    cJSON *h = cJSON_AddObjectToObject(ca, "halo");
    cJSON_AddNumberToObject(h, "bytes", (double)a->halo_bytes);
    cJSON *pa = cJSON_AddObjectToObject(h, "per_axis");
    for (int ax = 0; ax < r->niters + r->nred; ax++)
      cJSON_AddNumberToObject(pa, r->it[ax].name, a->halo_axis ? (double)a->halo_axis[ax] : 0.0);
    cJSON *rd = cJSON_AddArrayToObject(h, "reads");
    for (int k = 0; k < a->nhalo; k++) {
      const pc_halo *x = &a->halo[k];
      cJSON *e = cJSON_CreateObject();
      cJSON_AddStringToObject(e, "tensor", x->tensor);
      cJSON_AddNumberToObject(e, "dim", x->tensor_axis);
      cJSON_AddStringToObject(e, "iter", x->iter ? x->iter : "");
      cJSON_AddNumberToObject(e, "stride", (double)x->stride);
      cJSON_AddNumberToObject(e, "lo", (double)x->lo);
      cJSON_AddNumberToObject(e, "hi", (double)x->hi);
      cJSON_AddItemToArray(rd, e);
    }
    cJSON *mb = cJSON_AddObjectToObject(o, "min_buffer");
    cJSON_AddStringToObject(mb, "buffer", buffer_name(a->min_buffer ? a->min_buffer : BUF_REG));
    cJSON_AddNumberToObject(mb, "depth", a->min_depth);
    cJSON *dep = cJSON_AddObjectToObject(o, "dependences");
    for (int k = 0; k < 3; k++) {
      cJSON *l = cJSON_AddArrayToObject(dep, kinds[k]);
      for (int d = 0; d < a->ndeps; d++)
        if ((int)a->deps[d].kind == k) cJSON_AddItemToArray(l, cJSON_CreateString(a->deps[d].relation));
    }
    cJSON_AddBoolToObject(o, "affine", a->affine);
    cJSON *bu = cJSON_AddArrayToObject(o, "buffers");
    for (int k = 0; k < a->nbuf; k++) {
      const pc_buffer *x = &a->buf[k];
      cJSON *e = cJSON_CreateObject();
      cJSON_AddStringToObject(e, "value", x->value);
      cJSON_AddStringToObject(e, "role", x->role);
      cJSON_AddStringToObject(e, "buffer", buffer_name(x->buffer));
      cJSON_AddNumberToObject(e, "depth", x->depth);
      cJSON_AddStringToObject(e, "why", x->why);
      cJSON_AddItemToArray(bu, e);
    }
    cJSON *bh = cJSON_AddObjectToObject(o, "barrier_hints");
    cJSON_AddItemToObject(bh, "sm80", str_array(a->nbarrier80, a->barrier_sm80));
    cJSON_AddItemToObject(bh, "sm90", str_array(a->nbarrier90, a->barrier_sm90));
    cJSON *bk = cJSON_AddArrayToObject(o, "bank_hints");
    for (int k = 0; k < a->nbank; k++) {
      const pc_bank *x = &a->bank[k];
      cJSON *e = cJSON_CreateObject();
      cJSON_AddStringToObject(e, "tensor", x->tensor);
      cJSON_AddBoolToObject(e, "k_contig", x->k_contig);
      cJSON_AddStringToObject(e, "ldmatrix", x->ldmatrix);
      cJSON_AddStringToObject(e, "swizzle", x->swizzle);
      cJSON_AddStringToObject(e, "why", x->why);
      cJSON_AddItemToArray(bk, e);
    }
    cJSON_AddItemToObject(o, "contraction", contraction_json(r, &a->con));
    if (a->fuse_in >= 0) {
      cJSON *fu = cJSON_AddObjectToObject(o, "fusion");
      cJSON_AddStringToObject(fu, "value", r->in[a->fuse_in].name);
      cJSON_AddStringToObject(fu, "from", p->rs->r[a->fuse_from].name);
      cJSON_AddBoolToObject(fu, "fused", a->fuse_ok);
      cJSON_AddStringToObject(fu, "why", a->fuse_why);
    }
    cJSON_AddItemToArray(arr, o);
  }
  return root;
}

/* ---- verifier --------------------------------------------------------------------------- */

static bool pc_fail(diag_list *dl, const region *r, const char *what) {
  diag_report(dl, D_INTERNAL, "analysis", NULL, "region %s: %s", r ? r->name : "?", what);
  return false;
}

bool pc_verify(const pc_report *p, diag_list *dl) {
  const region_set *rs = p->rs;
  if (p->n != rs->n) return pc_fail(dl, NULL, "the report does not have one analysis per region");
  for (int i = 0; i < p->n; i++) {
    const pc_analysis *a = &p->a[i];
    const region *r = &rs->r[i];
    int nax = r->niters + r->nred;
    if (a->region != i) return pc_fail(dl, r, "its analysis is out of order");
    if (a->con.present != (r->acc_let >= 0)) return pc_fail(dl, r, "a contraction without an accumulator, or the reverse");
    if (a->con.present) {
      /* the groups are disjoint sets of region axes (a region that also
       * reduces an iter, as a row sum after the GEMM, may leave axes out:
       * the skeletons reject it later) */
      bool seen[64] = {false};
      if (nax > 64) return pc_fail(dl, r, "more axes than the verifier counts");
      const int *g[4] = {a->con.m_axes, a->con.n_axes, a->con.b_axes, a->con.k_axes};
      const int ng[4] = {a->con.nm, a->con.nn, a->con.nb, a->con.nk};
      for (int k = 0; k < 4; k++)
        for (int j = 0; j < ng[k]; j++) {
          int x = g[k][j];
          if (x < 0 || x >= nax || seen[x]) return pc_fail(dl, r, "an axis group names an axis twice, or none");
          seen[x] = true;
        }
    }
    for (int t = 0; t < a->ntail; t++) {
      bool found = false;
      for (int x = 0; x < nax && !found; x++) found = strcmp(r->it[x].name, a->tail_axes[t]) == 0;
      if (!found) return pc_fail(dl, r, "a tail axis that is not a region axis");
    }
    for (int b = 0; b < a->nbuf; b++)
      if (a->buf[b].depth < 1) return pc_fail(dl, r, "a buffer of depth below 1");
    /* a fusion verdict names a deferred input, an earlier region's output
     * of the same value, and says why */
    if (a->fuse_in >= 0) {
      if (a->fuse_in >= r->nin || a->fuse_from < 0 || a->fuse_from >= i || !a->fuse_why ||
          a->fuse_out < 0 || a->fuse_out >= rs->r[a->fuse_from].nout ||
          rs->r[a->fuse_from].out[a->fuse_out].entry != r->in[a->fuse_in].entry)
        return pc_fail(dl, r, "its fusion verdict names no deferred value of an earlier region");
      if (a->fuse_ok && (r->acc_let >= 0 || rs->r[a->fuse_from].acc_let >= 0))
        return pc_fail(dl, r, "a fusion verdict holds for a contraction");
    }
  }
  return true;
}
