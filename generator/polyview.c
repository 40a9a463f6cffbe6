/* Poly-View: IndexBook -> isl statements, accesses and blocks (spec §5). */
#include "polyview.h"

#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/aff.h>
#include <isl/point.h>
#include <isl/set.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

typedef struct builder {
  arena *A;
  isl_ctx *ctx;
  const indexbook *ib;
  poly_view *pv;
  diag_list *dl;
  const char **iname;    /* isl tuple name per IndexBook entry */
  const char ***dimname; /* per entry: names of axes then reduce axes */
  int nalias;            /* non-affine sizes and their parameter names */
  const sx **alias_of;
  const char **alias_name;
} builder;

/* ---- names ------------------------------------------------------------------- */

static bool is_param(const poly_view *pv, const char *s) {
  for (int i = 0; i < pv->nparams; i++)
    if (strcmp(pv->params[i], s) == 0) return true;
  return false;
}

static void collect_params(builder *b, const sx *x) {
  for (int t = 0; t < x->nterms; t++) {
    const sx_atom *a = x->terms[t].atom;
    if (a->kind == SXA_PARAM && !is_param(b->pv, a->name)) {
      const char **np = ARENA_ARRAY(b->A, const char *, b->pv->nparams + 1);
      if (b->pv->nparams) memcpy(np, b->pv->params, sizeof(*np) * (size_t)b->pv->nparams);
      np[b->pv->nparams++] = a->name;
      b->pv->params = np;
    }
    if (a->kind == SXA_FLOOR) collect_params(b, a->a);
    if (a->kind == SXA_FDIVSYM || a->kind == SXA_MODSYM) collect_params(b, a->a), collect_params(b, a->b);
    if (a->kind == SXA_PROD)
      for (int i = 0; i < a->nf; i++)
        if (a->f[i]->kind == SXA_PARAM) {
          sx one = {0};
          sx_term tm = {1, a->f[i]};
          one.nterms = 1;
          one.terms = &tm;
          collect_params(b, &one);
        }
  }
}

/* A size that is not quasi-affine (M*N from a symbolic reshape) cannot be
 * written in isl; it becomes a parameter of its own ("p_M_N"), of which only
 * p_M_N >= 1 is known.  Registered before the context is built. */
static const char *sanitize(builder *b, const char *value);

static void note_size(builder *b, const sx *x) {
  if (sx_is_affine(x)) return;
  for (int i = 0; i < b->nalias; i++)
    if (sx_equal(b->alias_of[i], x)) return;
  const char *nm = sanitize(b, arena_printf(b->A, "p_%s", sx_str(b->A, x)));
  if (is_param(b->pv, nm)) nm = arena_printf(b->A, "%s_%d", nm, b->nalias);
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
  const char **np = ARENA_ARRAY(b->A, const char *, b->pv->nparams + 1);
  if (b->pv->nparams) memcpy(np, b->pv->params, sizeof(*np) * (size_t)b->pv->nparams);
  np[b->pv->nparams++] = nm;
  b->pv->params = np;
}

static const char *size_text(builder *b, const sx *x) {
  for (int i = 0; i < b->nalias; i++)
    if (sx_equal(b->alias_of[i], x)) return b->alias_name[i];
  return sx_str(b->A, x);
}

static const char *sanitize(builder *b, const char *value) {
  char *s = arena_strdup(b->A, value);
  for (char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) *p = '_';
  if (s[0] >= '0' && s[0] <= '9') s = arena_printf(b->A, "v_%s", s);
  return s;
}

/* Dimension names of an entry: labels when all present, unique and not a
 * param name; otherwise the IndexBook names. */
static const char **dim_names(builder *b, const ib_entry *e) {
  int n = e->rank + e->nred;
  const char **d = ARENA_ARRAY(b->A, const char *, n + 1);
  bool labels = true;
  for (int i = 0; i < n && labels; i++) {
    const ib_axis *ax = i < e->rank ? &e->axes[i] : &e->red[i - e->rank];
    if (!ax->label || is_param(b->pv, ax->label)) labels = false;
    for (int j = 0; j < i && labels; j++)
      if (strcmp(d[j], ax->label) == 0) labels = false;
    if (labels) d[i] = ax->label;
  }
  for (int i = 0; i < n && !labels; i++) d[i] = i < e->rank ? e->axes[i].name : e->red[i - e->rank].name;
  return d;
}

typedef struct rn_ctx {
  const ib_entry *e;
  const char **names;
  arena *A;
} rn_ctx;

static const sx *rename_fn(void *ctx, sx_atom_kind kind, const char *name) {
  rn_ctx *r = ctx;
  if (kind != SXA_VAR) return NULL;
  for (int i = 0; i < r->e->rank + r->e->nred; i++) {
    const ib_axis *ax = i < r->e->rank ? &r->e->axes[i] : &r->e->red[i - r->e->rank];
    if (strcmp(ax->name, name) == 0) return sx_var(r->A, r->names[i]);
  }
  return NULL;
}

static char *render(builder *b, const ib_entry *e, const sx *x) {
  rn_ctx r = {e, b->dimname[e - b->ib->e], b->A};
  return sx_str(b->A, sx_subst(b->A, x, rename_fn, &r));
}

static void params_prefix(builder *b, strbuf *s) {
  sb_puts(s, "[");
  for (int i = 0; i < b->pv->nparams; i++) {
    if (i) sb_puts(s, ", ");
    sb_puts(s, b->pv->params[i]);
  }
  sb_puts(s, "] -> ");
}

/* "S[d0, d1] : 0 <= d0 < s0 and ..." without braces */
static void tuple_with_bounds(builder *b, strbuf *s, const char *name, const char **dims, int n,
                              const sx *const *sizes, bool bounds) {
  sb_puts(s, name);
  sb_puts(s, "[");
  for (int i = 0; i < n; i++) {
    if (i) sb_puts(s, ", ");
    sb_puts(s, dims[i]);
  }
  sb_puts(s, "]");
  if (!bounds || n == 0) return;
  sb_puts(s, " : ");
  for (int i = 0; i < n; i++) {
    if (i) sb_puts(s, " and ");
    sb_puts(s, arena_printf(b->A, "0 <= %s < %s", dims[i], size_text(b, sizes[i])));
  }
}

static char *isl_err(builder *b) {
  const char *m = isl_ctx_last_error_msg(b->ctx);
  return arena_strdup(b->A, m ? m : "unknown isl error");
}

/* ---- statements ------------------------------------------------------------------- */

static const sx **entry_sizes(builder *b, const ib_entry *e) {
  int n = e->rank + e->nred;
  const sx **s = ARENA_ARRAY(b->A, const sx *, n + 1);
  for (int i = 0; i < n; i++) s[i] = i < e->rank ? e->axes[i].size : e->red[i - e->rank].size;
  return s;
}

static char *simplified_set(builder *b, const char *text, isl_set **out) {
  isl_set *set = isl_set_read_from_str(b->ctx, text);
  if (!set) return NULL;
  isl_set *ctx = isl_set_read_from_str(b->ctx, b->pv->context);
  set = isl_set_coalesce(set);
  set = isl_set_gist_params(set, ctx);
  set = isl_set_remove_redundancies(set);
  char *str = isl_set_to_str(set);
  char *r = str ? arena_strdup(b->A, str) : NULL;
  free(str);
  if (out) *out = set;
  else isl_set_free(set);
  return r;
}

static bool has_modsym(const ib_input *in) {
  for (int i = 0; i < in->n; i++)
    if (sx_has_modsym(in->map[i])) return true;
  return false;
}

static bool add_access(builder *b, pv_stmt *st, const ib_entry *e, const ib_input *in, isl_set *domain) {
  arena *A = b->A;
  const ib_entry *root = &b->ib->e[in->entry];
  pv_access acc = {0};
  acc.tensor = in->value;
  acc.entry = in->entry;
  acc.via = in->via;
  if (has_modsym(in) && !e->non_scop) {
    diag_report(b->dl, D_MISSING_DIV_GUARD, "Poly-View", NULL,
                "the read of '%s' by '%s' keeps a `%%` in its AxisMap", in->value, e->value);
    return false;
  }
  if (e->load_var && in == &e->in[0]) {
    /* a gather's read of its source: the index is a loaded value, not an
     * affine function of the statement's dims; keep it out of isl */
    acc.map = arena_printf(A, "non-affine: %s[%s] loaded from %s", in->value, e->load_var, e->in[1].value);
    ARENA_PUSH(A, st->acc, st->nacc, st->cap_acc, acc);
    return true;
  }
  for (int i = 0; i < in->n + in->nguards; i++) {
    const sx *x = i < in->n ? in->map[i] : in->guards[i - in->n].e;
    if (!sx_is_affine(x)) {
      /* a non-affine read only appears at a non_scop boundary: keep it out of isl */
      acc.map = arena_printf(A, "non-affine: %s", render(b, e, x));
      ARENA_PUSH(A, st->acc, st->nacc, st->cap_acc, acc);
      return true;
    }
  }
  strbuf s = {0};
  params_prefix(b, &s);
  sb_puts(&s, "{ ");
  tuple_with_bounds(b, &s, st->name, st->dims, st->ndims, NULL, false);
  sb_puts(&s, " -> ");
  sb_puts(&s, b->iname[in->entry]);
  sb_puts(&s, "[");
  for (int i = 0; i < in->n; i++) {
    if (i) sb_puts(&s, ", ");
    sb_puts(&s, render(b, e, in->map[i]));
  }
  sb_puts(&s, "]");
  for (int g = 0; g < in->nguards; g++) {
    const char *ex = render(b, e, in->guards[g].e);
    sb_puts(&s, g ? " and " : " : ");
    sb_puts(&s, arena_printf(A, "%s <= %s < %s", size_text(b, in->guards[g].lo), ex, size_text(b, in->guards[g].hi)));
  }
  sb_puts(&s, " }");
  char *text = sb_take_arena(&s, A);
  isl_map *m = isl_map_read_from_str(b->ctx, text);
  if (!m) {
    diag_report(b->dl, D_INTERNAL, "Poly-View", NULL, "isl rejected access '%s': %s", text, isl_err(b));
    return false;
  }
  m = isl_map_intersect_domain(m, isl_set_copy(domain));
  m = isl_map_coalesce(m);
  m = isl_map_gist_domain(m, isl_set_copy(domain));
  m = isl_map_remove_redundancies(m);
  char *ms = isl_map_to_str(m);
  acc.map = arena_strdup(A, ms);
  free(ms);
  isl_pw_multi_aff *pma = isl_pw_multi_aff_from_map(isl_map_copy(m));
  if (pma) {
    char *ps = isl_pw_multi_aff_to_str(pma);
    acc.pma = arena_strdup(A, ps);
    free(ps);
    isl_pw_multi_aff_free(pma);
  }
  /* the pad piece: where the guards fail */
  isl_map *mdom = isl_map_intersect_domain(isl_map_copy(m), isl_set_copy(domain));
  if (in->nguards) {
    isl_set *inb = isl_map_domain(isl_map_copy(mdom));
    isl_set *pad = isl_set_subtract(isl_set_copy(domain), inb);
    pad = isl_set_coalesce(pad);
    isl_size nb = isl_set_n_basic_set(pad);
    acc.pad_pieces = nb < 0 ? 0 : (int)nb;
    isl_set_free(pad);
    if (acc.pad_pieces > PV_MAX_PIECES)
      diag_report(b->dl, D_EXCESSIVE_PIECEWISE, arena_printf(A, "Poly-View[%s]", in->via ? in->via : e->value), NULL,
                  "the read of '%s' by '%s' has %d pad pieces after coalesce (limit %d)", in->value, e->value,
                  acc.pad_pieces, PV_MAX_PIECES);
  }
  /* every read stays inside the root tensor */
  strbuf x = {0};
  params_prefix(b, &x);
  sb_puts(&x, "{ ");
  const char **rd = ARENA_ARRAY(A, const char *, root->rank + 1);
  for (int i = 0; i < root->rank; i++) rd[i] = arena_printf(A, "a%d", i);
  const sx **rs = ARENA_ARRAY(A, const sx *, root->rank + 1);
  for (int i = 0; i < root->rank; i++) rs[i] = root->axes[i].size;
  tuple_with_bounds(b, &x, b->iname[in->entry], rd, root->rank, rs, true);
  sb_puts(&x, " }");
  char *xt = sb_take_arena(&x, A);
  isl_set *extent = isl_set_read_from_str(b->ctx, xt);
  isl_set *range = isl_map_range(mdom);
  isl_set *ctxs = isl_set_read_from_str(b->ctx, b->pv->context);
  range = isl_set_intersect_params(range, isl_set_copy(ctxs));
  extent = isl_set_intersect_params(extent, ctxs);
  isl_bool sub = isl_set_is_subset(range, extent);
  bool ok = true;
  if (sub == isl_bool_false) {
    isl_set *bad = isl_set_subtract(range, extent);
    isl_point *pt = isl_set_sample_point(bad);
    char *ps = pt ? isl_point_to_str(pt) : NULL;
    diag_report(b->dl, D_UNGUARDED_ACCESS, arena_printf(A, "Poly-View[%s]", e->value), NULL,
                "'%s' reads '%s' at %s, which can leave the tensor's extent %s (for example %s)", e->value,
                in->value, acc.map, xt, ps ? ps : "?");
    free(ps);
    isl_point_free(pt);
    ok = false;
  } else {
    isl_set_free(range);
    isl_set_free(extent);
    if (sub < 0) {
      diag_report(b->dl, D_INTERNAL, "Poly-View", NULL, "isl could not compare the read of '%s': %s", in->value, isl_err(b));
      ok = false;
    }
  }
  isl_map_free(m);
  ARENA_PUSH(A, st->acc, st->nacc, st->cap_acc, acc);
  return ok;
}

static bool build_stmt(builder *b, int ei) {
  arena *A = b->A;
  const ib_entry *e = &b->ib->e[ei];
  poly_view *pv = b->pv;
  pv_stmt st = {0};
  st.entry = ei;
  st.name = b->iname[ei];
  st.dims = b->dimname[ei];
  st.ndims = e->rank + e->nred;
  strbuf s = {0};
  params_prefix(b, &s);
  sb_puts(&s, "{ ");
  tuple_with_bounds(b, &s, st.name, st.dims, st.ndims, entry_sizes(b, e), true);
  sb_puts(&s, " }");
  char *text = sb_take_arena(&s, A);
  isl_set *dom = NULL;
  st.domain = simplified_set(b, text, &dom);
  if (!st.domain) {
    diag_report(b->dl, D_INTERNAL, "Poly-View", NULL, "isl rejected domain '%s': %s", text, isl_err(b));
    return false;
  }
  if (e->nred) {
    isl_set *od = isl_set_project_out(isl_set_copy(dom), isl_dim_set, (unsigned)e->rank, (unsigned)e->nred);
    od = isl_set_set_tuple_name(od, st.name);
    od = isl_set_gist_params(od, isl_set_read_from_str(b->ctx, b->pv->context));
    od = isl_set_coalesce(od);
    char *os = isl_set_to_str(od);
    st.out_domain = arena_strdup(A, os ? os : "");
    free(os);
    isl_set_free(od);
  }
  bool ok = true;
  for (int k = 0; k < e->nin; k++)
    if (!e->in[k].is_const) ok &= add_access(b, &st, e, &e->in[k], dom);
  /* the write of the value itself */
  pv_access w = {0};
  w.tensor = e->value;
  w.entry = ei;
  w.write = true;
  strbuf ws = {0};
  params_prefix(b, &ws);
  sb_puts(&ws, "{ ");
  tuple_with_bounds(b, &ws, st.name, st.dims, st.ndims, NULL, false);
  sb_puts(&ws, " -> ");
  tuple_with_bounds(b, &ws, b->iname[ei], st.dims, e->rank, NULL, false);
  sb_puts(&ws, " }");
  char *wt = sb_take_arena(&ws, A);
  isl_map *wm = isl_map_read_from_str(b->ctx, wt);
  wm = isl_map_intersect_domain(wm, isl_set_copy(dom));
  wm = isl_map_coalesce(wm);
  wm = isl_map_gist_domain(wm, isl_set_copy(dom));
  char *wms = isl_map_to_str(wm);
  w.map = arena_strdup(A, wms ? wms : wt);
  free(wms);
  isl_map_free(wm);
  ARENA_PUSH(A, st.acc, st.nacc, st.cap_acc, w);
  isl_set_free(dom);
  pv->stmt_of_entry[ei] = pv->nst;
  ARENA_PUSH(A, pv->st, pv->nst, pv->cap_st, st);
  return ok;
}

/* ---- blocks ------------------------------------------------------------------------- */

static bool is_plain_var(const sx *x) { return sx_as_var(x) != NULL; }

/* Names of the statement dims used by a map, in order of first use. */
static const char **used_dims(builder *b, const pv_stmt *st, const ib_entry *e, const ib_input *in, int *n) {
  const char **r = ARENA_ARRAY(b->A, const char *, st->ndims + 1);
  *n = 0;
  for (int i = 0; i < in->n; i++) {
    const sx *m = in->map[i];
    for (int t = 0; t < m->nterms; t++) {
      if (m->terms[t].atom->kind != SXA_VAR) continue;
      int ax = -1;
      for (int k = 0; k < e->rank + e->nred; k++) {
        const ib_axis *a = k < e->rank ? &e->axes[k] : &e->red[k - e->rank];
        if (strcmp(a->name, m->terms[t].atom->name) == 0) ax = k;
      }
      if (ax < 0) continue;
      bool dup = false;
      for (int j = 0; j < *n; j++) dup |= strcmp(r[j], st->dims[ax]) == 0;
      if (!dup) r[(*n)++] = st->dims[ax];
    }
  }
  return r;
}

/* Whether some dim of `a` is not among those of `b`. */
static bool has_free_axis(const char **a, int na, const char **b, int nb) {
  for (int i = 0; i < na; i++) {
    bool in_b = false;
    for (int j = 0; j < nb; j++) in_b |= strcmp(a[i], b[j]) == 0;
    if (!in_b) return true;
  }
  return false;
}

/* A Reduce(sum) whose body is a mul of two reads, one of which has an axis
 * the other lacks: the contraction pattern. */
static bool detect_contraction(builder *b, int si, pv_block *blk) {
  poly_view *pv = b->pv;
  const indexbook *ib = b->ib;
  const pv_stmt *rs = &pv->st[si];
  const ib_entry *re = &ib->e[rs->entry];
  if (re->kind != IBK_REDUCE) return false;
  const tiny_uop *ru = &ib->dag->u[re->uop];
  if (!(ru->op == TINY_CONTRACT || (ru->op == TINY_REDUCE && ru->rop == RED_SUM))) return false;
  if (re->in[0].via || re->in[0].nguards) return false;
  const ib_entry *pe = &ib->e[re->in[0].entry];
  bool is_mul = pe->kind == IBK_PRODUCT ||
                (pe->kind == IBK_ALU && pe->uop >= 0 && ib->dag->u[pe->uop].op == TINY_MUL && !pe->in[0].is_const &&
                 !pe->in[1].is_const);
  if (!is_mul) return false;
  int psi = pv->stmt_of_entry[re->in[0].entry];
  if (psi < 0) return false;
  const pv_stmt *ps = &pv->st[psi];
  blk->kind = PVB_CONTRACTION;
  blk->reduce_stmt = si;
  blk->product_stmt = psi;
  pv_contraction *c = &blk->con;
  c->lhs = 0;
  c->rhs = 1;
  c->pattern = "matmul";
  c->lhs_idx = used_dims(b, ps, pe, &pe->in[0], &c->nl);
  c->rhs_idx = used_dims(b, ps, pe, &pe->in[1], &c->nr);
  /* a contraction reuses each operand along the other's free axes (M, N);
   * a product whose two sides index the same dims (sum(x * x), a dot
   * product per row) has no reuse: it is a row reduction, not an MMA tile */
  if (!has_free_axis(c->lhs_idx, c->nl, c->rhs_idx, c->nr) && !has_free_axis(c->rhs_idx, c->nr, c->lhs_idx, c->nl)) {
    memset(blk, 0, sizeof *blk);
    return false;
  }
  c->no = re->rank;
  c->nk = re->nred;
  c->out_idx = rs->dims;
  c->reduce_idx = rs->dims + re->rank;
  c->off_key = ARENA_ARRAY(b->A, const char *, pe->in[0].n + pe->in[1].n + 1);
  c->off_expr = ARENA_ARRAY(b->A, const char *, pe->in[0].n + pe->in[1].n + 1);
  for (int side = 0; side < 2; side++) {
    const ib_input *in = &pe->in[side];
    for (int i = 0; i < in->n; i++) {
      int64_t v;
      if (is_plain_var(in->map[i]) || sx_is_int(in->map[i], &v)) continue;
      c->pattern = "conv";
      c->off_key[c->noff] = arena_printf(b->A, "%s[%d]", in->value, i);
      c->off_expr[c->noff++] = render(b, pe, in->map[i]);
    }
  }
  return true;
}

static bool depends_on(const indexbook *ib, int e, int target, char *memo) {
  if (e == target) return true;
  if (memo[e]) return memo[e] == 2;
  memo[e] = 1;
  bool r = false;
  for (int k = 0; k < ib->e[e].nin && !r; k++)
    if (!ib->e[e].in[k].is_const) r = depends_on(ib, ib->e[e].in[k].entry, target, memo);
  memo[e] = r ? 2 : 1;
  return r;
}

static bool identity_read(const ib_entry *e, const ib_input *in) {
  if (in->nguards || in->n != e->rank) return false;
  for (int i = 0; i < in->n; i++) {
    const char *v = sx_as_var(in->map[i]);
    if (!v || strcmp(v, e->axes[i].name) != 0) return false;
  }
  return true;
}

/* The epilogue (spec §6.6 R3): pointwise statements over the contraction's
 * output axes that read the accumulator (or earlier epilogue values) at the
 * same point, plus values independent of the accumulator. */
static void find_epilogue(builder *b, pv_block *blk, bool *taken) {
  poly_view *pv = b->pv;
  const indexbook *ib = b->ib;
  int ce = pv->st[blk->reduce_stmt].entry;
  int n = ib->n;
  bool *in_epi = calloc((size_t)n, sizeof(bool));
  char *memo = calloc((size_t)n, 1);
  if (!in_epi || !memo) dlc_die_oom();
  in_epi[ce] = true;
  blk->epi = ARENA_ARRAY(b->A, int, pv->nst + 1);
  for (int ei = ce + 1; ei < n; ei++) {
    const ib_entry *e = &ib->e[ei];
    int si = pv->stmt_of_entry[ei];
    if (si < 0 || taken[si] || (e->kind != IBK_ALU && e->kind != IBK_STORE)) continue;
    if (e->rank != ib->e[ce].rank) continue;
    bool ok = true, reads_acc = false;
    for (int k = 0; k < e->nin && ok; k++) {
      const ib_input *in = &e->in[k];
      if (in->is_const) continue;
      if (in_epi[in->entry]) {
        reads_acc = true;
        ok = identity_read(e, in);
      } else {
        memset(memo, 0, (size_t)n);
        ok = !depends_on(ib, in->entry, ce, memo);
      }
    }
    if (!ok || !reads_acc) continue;
    in_epi[ei] = true;
    /* pointwise values computed from indices and parameters only, read by this
     * statement, come along (e.g. a mask) */
    for (int k = 0; k < e->nin; k++) {
      const ib_input *in = &e->in[k];
      if (in->is_const || in_epi[in->entry]) continue;
      int sj = pv->stmt_of_entry[in->entry];
      if (sj < 0 || taken[sj] || ib->e[in->entry].kind != IBK_ALU) continue;
      bool leafy = true;
      for (int q = 0; q < ib->e[in->entry].nin; q++) {
        const ib_input *iq = &ib->e[in->entry].in[q];
        if (!iq->is_const && ib->e[iq->entry].kind != IBK_LEAF) leafy = false;
      }
      if (!leafy) continue;
      in_epi[in->entry] = true;
      taken[sj] = true;
      blk->epi[blk->nepi++] = sj;
    }
    taken[si] = true;
    blk->epi[blk->nepi++] = si;
  }
  free(in_epi);
  free(memo);
}

/* Whether statement si's value is read by a statement outside the block
 * (in_blk over statements), or stores an output. */
static bool read_outside(const builder *b, int si, const bool *in_blk) {
  const poly_view *pv = b->pv;
  const indexbook *ib = b->ib;
  int ent = pv->st[si].entry;
  if (ib->e[ent].kind == IBK_STORE) return true;
  for (int sj = 0; sj < pv->nst; sj++) {
    if (in_blk[sj]) continue;
    const ib_entry *e = &ib->e[pv->st[sj].entry];
    for (int k = 0; k < e->nin; k++)
      if (!e->in[k].is_const && e->in[k].entry == ent) return true;
  }
  return false;
}

/* Whether a statement of the block other than si reads si's value. */
static bool read_inside(const builder *b, int si, const bool *in_blk) {
  const poly_view *pv = b->pv;
  int ent = pv->st[si].entry;
  for (int sj = 0; sj < pv->nst; sj++) {
    if (!in_blk[sj] || sj == si) continue;
    const ib_entry *e = &b->ib->e[pv->st[sj].entry];
    for (int k = 0; k < e->nin; k++)
      if (!e->in[k].is_const && e->in[k].entry == ent) return true;
  }
  return false;
}

/* A contraction's region stores one value (the skeletons' one output).
 * While more than one of its values leaves the block, the last epilogue
 * statement that leaves it and that no statement of the block reads moves
 * out, to the block that reads it, which computes it from the value left
 * (a norm's Cast of a GEMM's output, besides the output that a residual
 * reads, is the norm's, not the GEMM's). */
static void trim_epilogue(builder *b, pv_block *blk, bool *taken) {
  const poly_view *pv = b->pv;
  bool *in_blk = calloc((size_t)pv->nst + 1, sizeof(bool));
  if (!in_blk) dlc_die_oom();
  in_blk[blk->product_stmt] = in_blk[blk->reduce_stmt] = true;
  for (int k = 0; k < blk->nepi; k++) in_blk[blk->epi[k]] = true;
  for (;;) {
    int leaving = read_outside(b, blk->reduce_stmt, in_blk), drop = -1;
    for (int k = 0; k < blk->nepi; k++)
      if (read_outside(b, blk->epi[k], in_blk)) {
        leaving++;
        if (!read_inside(b, blk->epi[k], in_blk)) drop = k;
      }
    if (leaving <= 1 || drop < 0) break;
    in_blk[blk->epi[drop]] = taken[blk->epi[drop]] = false;
    for (int k = drop; k + 1 < blk->nepi; k++) blk->epi[k] = blk->epi[k + 1];
    blk->nepi--;
  }
  free(in_blk);
}

static int uf_find(int *p, int x) {
  while (p[x] != x) x = p[x] = p[p[x]];
  return x;
}

static void make_blocks(builder *b) {
  poly_view *pv = b->pv;
  arena *A = b->A;
  const indexbook *ib = b->ib;
  int ns = pv->nst;
  bool *taken = calloc((size_t)ns + 1, sizeof(bool));
  int *owner = calloc((size_t)ns + 1, sizeof(int));
  if (!taken || !owner) dlc_die_oom();
  pv->blk = ARENA_ARRAY(A, pv_block, ns + 1);
  pv->block_of_stmt = ARENA_ARRAY(A, int, ns + 1);
  for (int i = 0; i < ns; i++) pv->block_of_stmt[i] = -1;
  /* contractions first */
  for (int si = 0; si < ns; si++) {
    pv_block blk = {0};
    if (!detect_contraction(b, si, &blk)) continue;
    if (taken[si] || taken[blk.product_stmt]) continue;
    taken[si] = taken[blk.product_stmt] = true;
    find_epilogue(b, &blk, taken);
    trim_epilogue(b, &blk, taken);
    const ib_entry *re = &ib->e[pv->st[si].entry];
    blk.name = arena_printf(A, "%s_%s", b->iname[pv->st[si].entry], blk.con.pattern);
    blk.st = ARENA_ARRAY(A, int, 2 + blk.nepi);
    blk.st[blk.nst++] = blk.product_stmt;
    blk.st[blk.nst++] = si;
    for (int k = 0; k < blk.nepi; k++) blk.st[blk.nst++] = blk.epi[k];
    (void)re;
    pv->blk[pv->nblk++] = blk;
  }
  /* non_scop views: boundaries */
  for (int si = 0; si < ns; si++) {
    const ib_entry *e = &ib->e[pv->st[si].entry];
    if (taken[si] || e->kind != IBK_VIEW) continue;
    pv_block blk = {0};
    blk.kind = PVB_BOUNDARY;
    blk.name = arena_printf(A, "%s_boundary", b->iname[pv->st[si].entry]);
    blk.st = ARENA_ARRAY(A, int, 1);
    blk.st[blk.nst++] = si;
    taken[si] = true;
    pv->blk[pv->nblk++] = blk;
  }
  /* the rest: connected components */
  int *par = owner;
  for (int i = 0; i < ns; i++) par[i] = i;
  for (int si = 0; si < ns; si++) {
    if (taken[si]) continue;
    const ib_entry *e = &ib->e[pv->st[si].entry];
    for (int k = 0; k < e->nin; k++) {
      if (e->in[k].is_const) continue;
      int sj = pv->stmt_of_entry[e->in[k].entry];
      if (sj >= 0 && !taken[sj]) par[uf_find(par, si)] = uf_find(par, sj);
    }
  }
  for (int si = 0; si < ns; si++) {
    if (taken[si]) continue;
    int root = uf_find(par, si);
    pv_block blk = {0};
    blk.kind = PVB_FUSED;
    blk.name = arena_printf(A, "%s_fused", b->iname[pv->st[si].entry]);
    blk.st = ARENA_ARRAY(A, int, ns);
    for (int sj = si; sj < ns; sj++)
      if (!taken[sj] && uf_find(par, sj) == root) {
        blk.st[blk.nst++] = sj;
        taken[sj] = true;
      }
    pv->blk[pv->nblk++] = blk;
  }
  /* blocks in program order: by their first statement */
  for (int i = 1; i < pv->nblk; i++)
    for (int j = i; j > 0 && pv->blk[j - 1].st[0] > pv->blk[j].st[0]; j--) {
      pv_block t = pv->blk[j];
      pv->blk[j] = pv->blk[j - 1];
      pv->blk[j - 1] = t;
    }
  for (int bi = 0; bi < pv->nblk; bi++)
    for (int k = 0; k < pv->blk[bi].nst; k++) pv->block_of_stmt[pv->blk[bi].st[k]] = bi;
  /* edges between blocks, by value */
  int ecap = 0;
  for (int bi = 0; bi < pv->nblk; bi++)
    for (int k = 0; k < pv->blk[bi].nst; k++) {
      const pv_stmt *st = &pv->st[pv->blk[bi].st[k]];
      for (int a = 0; a < st->nacc; a++) {
        if (st->acc[a].write) continue;
        int sj = pv->stmt_of_entry[st->acc[a].entry];
        if (sj < 0) continue;
        int from = pv->block_of_stmt[sj];
        if (from == bi) continue;
        bool dup = false;
        for (int q = 0; q < pv->nedge; q++)
          dup |= pv->edge[q].from == from && pv->edge[q].to == bi && strcmp(pv->edge[q].value, st->acc[a].tensor) == 0;
        if (!dup) {
          pv_edge ed = {from, bi, st->acc[a].tensor};
          ARENA_PUSH(A, pv->edge, pv->nedge, ecap, ed);
        }
      }
    }
  free(taken);
  free(owner);
}

poly_view *pv_build(arena *A, const indexbook *ib, diag_list *dl) {
  poly_view *pv = ARENA_NEW(A, poly_view);
  pv->A = A;
  pv->ib = ib;
  builder b = {A, isl_ctx_alloc(), ib, pv, dl, NULL, NULL, 0, NULL, NULL};
  if (!b.ctx) dlc_die_oom();
  isl_options_set_on_error(b.ctx, ISL_ON_ERROR_CONTINUE);
  int nerr0 = dl->nerrors;
  /* params: every dim symbol in a size, map or guard */
  for (int i = 0; i < ib->n; i++) {
    const ib_entry *e = &ib->e[i];
    for (int k = 0; k < e->rank; k++) collect_params(&b, e->axes[k].size);
    for (int k = 0; k < e->nred; k++) collect_params(&b, e->red[k].size);
    for (int k = 0; k < e->rank; k++) note_size(&b, e->axes[k].size);
    for (int k = 0; k < e->nred; k++) note_size(&b, e->red[k].size);
    for (int k = 0; k < e->nin; k++) {
      for (int m = 0; m < e->in[k].n; m++) collect_params(&b, e->in[k].map[m]);
      for (int g = 0; g < e->in[k].nguards; g++) {
        collect_params(&b, e->in[k].guards[g].e);
        collect_params(&b, e->in[k].guards[g].lo);
        collect_params(&b, e->in[k].guards[g].hi);
        note_size(&b, e->in[k].guards[g].lo);
        note_size(&b, e->in[k].guards[g].hi);
      }
    }
  }
  /* keep the signature's order of dims for readability */
  if (ib->dag->fe) {
    const fe_graph *g = ib->dag->fe;
    const char **ord = ARENA_ARRAY(A, const char *, pv->nparams + 1);
    int n = 0;
    for (int i = 0; i < g->ndims; i++)
      if (is_param(pv, g->dims[i])) ord[n++] = g->dims[i];
    for (int i = 0; i < pv->nparams; i++) {
      bool in = false;
      for (int j = 0; j < n; j++) in |= strcmp(ord[j], pv->params[i]) == 0;
      if (!in) ord[n++] = pv->params[i];
    }
    pv->params = ord;
  }
  strbuf s = {0};
  params_prefix(&b, &s);
  sb_puts(&s, "{ : ");
  for (int i = 0; i < pv->nparams; i++) {
    if (i) sb_puts(&s, " and ");
    sb_puts(&s, arena_printf(A, "%s >= 1", pv->params[i]));
  }
  sb_puts(&s, " }");
  pv->context = sb_take_arena(&s, A);
  b.iname = ARENA_ARRAY(A, const char *, ib->n + 1);
  b.dimname = ARENA_ARRAY(A, const char **, ib->n + 1);
  for (int i = 0; i < ib->n; i++) {
    const char *nm = sanitize(&b, ib->e[i].value);
    for (int j = 0; j < i; j++)
      if (strcmp(b.iname[j], nm) == 0) nm = arena_printf(A, "%s_%d", nm, i);
    if (is_param(pv, nm)) nm = arena_printf(A, "%s_t", nm);
    b.iname[i] = nm;
    b.dimname[i] = dim_names(&b, &ib->e[i]);
  }
  pv->stmt_of_entry = ARENA_ARRAY(A, int, ib->n + 1);
  for (int i = 0; i < ib->n; i++) pv->stmt_of_entry[i] = -1;
  bool ok = true;
  for (int i = 0; i < ib->n; i++) {
    const ib_entry *e = &ib->e[i];
    if (e->kind == IBK_LEAF || (e->kind == IBK_VIEW && !e->non_scop)) continue;
    ok &= build_stmt(&b, i);
  }
  if (ok) make_blocks(&b);
  isl_ctx_free(b.ctx);
  if (!ok || dl->nerrors > nerr0) return NULL;
  return pv;
}

/* ---- dump ----------------------------------------------------------------------------- */

static cJSON *strs(int n, const char *const *s) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(s[i]));
  return a;
}

static cJSON *access_json(const poly_view *pv, const pv_access *acc) {
  (void)pv;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "tensor", acc->tensor);
  cJSON_AddStringToObject(o, "kind", acc->write ? "write" : "read");
  if (acc->via) cJSON_AddStringToObject(o, "via", acc->via);
  cJSON_AddStringToObject(o, "map", acc->map);
  if (acc->pma && !acc->write) cJSON_AddStringToObject(o, "pw_multi_aff", acc->pma);
  if (acc->pad_pieces) cJSON_AddNumberToObject(o, "pad_pieces", acc->pad_pieces);
  return o;
}

static cJSON *stmt_json(const poly_view *pv, int si) {
  const pv_stmt *st = &pv->st[si];
  const ib_entry *e = &pv->ib->e[st->entry];
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", st->name);
  cJSON_AddStringToObject(o, "value", e->value);
  if (e->uop >= 0) cJSON_AddStringToObject(o, "op", tiny_op_name(pv->ib->dag->u[e->uop].op));
  else cJSON_AddStringToObject(o, "op", "MUL");
  cJSON *d = cJSON_AddObjectToObject(o, "domain");
  cJSON_AddStringToObject(d, "set", st->domain);
  cJSON *acc = cJSON_AddArrayToObject(o, "accesses");
  for (int a = 0; a < st->nacc; a++) cJSON_AddItemToArray(acc, access_json(pv, &st->acc[a]));
  return o;
}

cJSON *pv_dump(const poly_view *pv) {
  static const char *const kinds[] = {"contraction_pattern", "fused", "boundary"};
  cJSON *root = cJSON_CreateObject();
  cJSON *v = cJSON_AddObjectToObject(root, "poly_view");
  cJSON_AddStringToObject(v, "context", pv->context);
  cJSON *blocks = cJSON_AddArrayToObject(v, "blocks");
  for (int bi = 0; bi < pv->nblk; bi++) {
    const pv_block *blk = &pv->blk[bi];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", blk->name);
    cJSON_AddStringToObject(o, "kind", kinds[blk->kind]);
    if (blk->kind == PVB_CONTRACTION) {
      const pv_stmt *rs = &pv->st[blk->reduce_stmt], *ps = &pv->st[blk->product_stmt];
      /* the output domain (reduce axes projected out) and the full one */
      const ib_entry *re = &pv->ib->e[rs->entry];
      cJSON *dom = cJSON_AddObjectToObject(o, "domain");
      cJSON_AddStringToObject(dom, "set", rs->out_domain ? rs->out_domain : rs->domain);
      cJSON_AddStringToObject(dom, "with_reduce_axes", rs->domain);
      (void)re;
      cJSON *acc = cJSON_AddArrayToObject(o, "accesses");
      for (int a = 0; a < ps->nacc; a++)
        if (!ps->acc[a].write) cJSON_AddItemToArray(acc, access_json(pv, &ps->acc[a]));
      for (int a = 0; a < rs->nacc; a++)
        if (rs->acc[a].write) cJSON_AddItemToArray(acc, access_json(pv, &rs->acc[a]));
      const pv_contraction *c = &blk->con;
      cJSON *at = cJSON_AddObjectToObject(o, "attrs");
      cJSON_AddStringToObject(at, "pattern", c->pattern);
      cJSON_AddStringToObject(at, "lhs", ps->acc[c->lhs].tensor);
      cJSON_AddStringToObject(at, "rhs", ps->acc[c->rhs].tensor);
      cJSON_AddItemToObject(at, "lhs_idx", strs(c->nl, c->lhs_idx));
      cJSON_AddItemToObject(at, "rhs_idx", strs(c->nr, c->rhs_idx));
      cJSON_AddItemToObject(at, "out_idx", strs(c->no, c->out_idx));
      cJSON_AddItemToObject(at, "reduce_idx", strs(c->nk, c->reduce_idx));
      cJSON *off = cJSON_AddObjectToObject(at, "affine_offsets");
      for (int k = 0; k < c->noff; k++) cJSON_AddStringToObject(off, c->off_key[k], c->off_expr[k]);
      cJSON *epi = cJSON_AddArrayToObject(o, "epilogue");
      for (int k = 0; k < blk->nepi; k++) cJSON_AddItemToArray(epi, stmt_json(pv, blk->epi[k]));
    }
    cJSON *sts = cJSON_AddArrayToObject(o, "statements");
    for (int k = 0; k < blk->nst; k++) {
      if (blk->kind == PVB_CONTRACTION) {
        cJSON_AddItemToArray(sts, cJSON_CreateString(pv->st[blk->st[k]].name));
        continue;
      }
      cJSON_AddItemToArray(sts, stmt_json(pv, blk->st[k]));
    }
    if (blk->kind == PVB_BOUNDARY) {
      const ib_entry *e = &pv->ib->e[pv->st[blk->st[0]].entry];
      cJSON_AddStringToObject(o, "non_scop_why", e->non_scop_why ? e->non_scop_why : "");
    }
    cJSON_AddItemToArray(blocks, o);
  }
  cJSON *edges = cJSON_AddArrayToObject(v, "edges");
  for (int i = 0; i < pv->nedge; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "from", pv->blk[pv->edge[i].from].name);
    cJSON_AddStringToObject(e, "to", pv->blk[pv->edge[i].to].name);
    cJSON_AddStringToObject(e, "value", pv->edge[i].value);
    cJSON_AddItemToArray(edges, e);
  }
  return root;
}

/* ---- verifier --------------------------------------------------------------------------- */

static bool pv_fail(diag_list *dl, const char *what, const char *name) {
  diag_report(dl, D_INTERNAL, "poly_view", NULL, "%s%s%s", what, name ? ": " : "", name ? name : "");
  return false;
}

bool pv_verify(const poly_view *pv, diag_list *dl) {
  bool ok = true;
  isl_ctx *ctx = isl_ctx_alloc();
  isl_options_set_on_error(ctx, ISL_ON_ERROR_CONTINUE);
  for (int i = 0; i < pv->nst && ok; i++) {
    const pv_stmt *st = &pv->st[i];
    isl_set *d = isl_set_read_from_str(ctx, st->domain);
    if (!d) ok = pv_fail(dl, "a statement's domain is not an isl set", st->name);
    else if (isl_set_dim(d, isl_dim_set) != st->ndims) ok = pv_fail(dl, "a statement's domain has the wrong dims", st->name);
    isl_set_free(d);
    if (ok && st->out_domain) {
      isl_set *o = isl_set_read_from_str(ctx, st->out_domain);
      if (!o) ok = pv_fail(dl, "a reduction's output domain is not an isl set", st->name);
      isl_set_free(o);
    }
    for (int a = 0; a < st->nacc && ok; a++) {
      /* a non-affine read (at a non_scop boundary) is kept out of isl */
      if (strncmp(st->acc[a].map, "non-affine:", 11) == 0) continue;
      isl_map *m = isl_map_read_from_str(ctx, st->acc[a].map);
      if (!m) ok = pv_fail(dl, "an access is not an isl map", st->name);
      else if (isl_map_dim(m, isl_dim_in) != st->ndims) ok = pv_fail(dl, "an access's domain has the wrong dims", st->name);
      isl_map_free(m);
    }
    if (ok && (pv->block_of_stmt[i] < 0 || pv->block_of_stmt[i] >= pv->nblk))
      ok = pv_fail(dl, "a statement lies in no block", st->name);
  }
  for (int b = 0; b < pv->nblk && ok; b++) {
    const pv_block *blk = &pv->blk[b];
    bool has_reduce = false, has_product = false;
    for (int j = 0; j < blk->nst && ok; j++) {
      int s2 = blk->st[j];
      if (s2 < 0 || s2 >= pv->nst || pv->block_of_stmt[s2] != b) ok = pv_fail(dl, "a block lists a statement of another", blk->name);
      has_reduce |= s2 == blk->reduce_stmt;
      has_product |= s2 == blk->product_stmt;
    }
    if (ok && blk->kind == PVB_CONTRACTION) {
      if (!has_reduce || !has_product) ok = pv_fail(dl, "a contraction block lacks its product or reduce statement", blk->name);
      else if (blk->con.lhs < 0 || blk->con.rhs < 0 || blk->con.lhs >= pv->st[blk->product_stmt].nacc ||
               blk->con.rhs >= pv->st[blk->product_stmt].nacc)
        ok = pv_fail(dl, "a contraction's operands are not accesses of its product", blk->name);
    }
  }
  for (int e = 0; e < pv->nedge && ok; e++)
    if (pv->edge[e].from < 0 || pv->edge[e].from >= pv->nblk || pv->edge[e].to < 0 || pv->edge[e].to >= pv->nblk)
      ok = pv_fail(dl, "an edge joins no blocks", pv->edge[e].value);
  isl_ctx_free(ctx);
  return ok;
}
