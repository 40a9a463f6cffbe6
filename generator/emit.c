/* CUDA emission (see emit.h): each op's kernels/<op>.cu.  The renderer is a walk of the IR:
 * sx index expressions -> C, rexpr lets -> CUDA expressions through the
 * spellings of tiny.def, and the GPU IR's decisions -> the constants and
 * functions of the `Op` that the skeleton calls. */
#include "emit_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "arch.h"
#include "skel/skel.h"
#include "strbuf.h"

/* ---- names ------------------------------------------------------------------ */

const char *lc(arena *A, const char *s) { return arena_lower_ident(A, s); }

const char *cid(arena *A, const char *s) {
  char *r = arena_strdup(A, s);
  for (char *p = r; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) *p = '_';
  return r;
}

/* Text for a generated comment.  File names, and names from the graph and
 * the manifest, reach comments: nothing in them may end the comment (a
 * newline, a star-slash), open a nested one, or splice the next line into it
 * (a backslash at the end, the trigraph for one).  Such bytes are written as
 * \xHH; the names that pass validation print unchanged. */
const char *cmt(arena *A, const char *s) {
  strbuf b = {0};
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    bool pair = (p[0] == '*' && p[1] == '/') || (p[0] == '/' && p[1] == '*') || (p[0] == '?' && p[1] == '?');
    if (*p < 0x20 || *p >= 0x7f || *p == '\\') sb_printf(&b, "\\x%02x", *p);
    else if (pair) sb_printf(&b, "%c\\x%02x", p[0], p[1]), p++;
    else sb_printf(&b, "%c", *p);
  }
  return sb_take_arena(&b, A);
}

/* A comment line "<lead><text>" wrapped at spaces to at most CMT_WIDTH
 * columns where it can be, at the least nested space of the line's second
 * half, leaving no short tail; continuation lines indent 4 more.  `text` is
 * already escaped by cmt(). */
#define CMT_WIDTH 110
void cmt_wrap(strbuf *s, const char *lead, const char *text) {
  size_t ll = strlen(lead), w = CMT_WIDTH > ll + 24 ? CMT_WIDTH - ll : 24;
  const char *p = text;
  bool first = true;
  while (*p) {
    size_t n = strlen(p), cut = n;
    if (n > w) { /* the outermost space in the second half that fits and leaves 12 or more, else the first one after */
      cut = 0;
      size_t lim = n - 12 < w ? n - 12 : w;
      int depth = 0, best = 1 << 30;
      for (size_t i = 1; i <= lim; i++) {
        depth += (p[i] == '(' || p[i] == '[') - (p[i] == ')' || p[i] == ']');
        if (p[i] == ' ' && i >= lim / 2 && depth <= best) cut = i, best = depth;
      }
      if (!cut) cut = strcspn(p + 1, " ") + 1;
    }
    sb_printf(s, "%s%s%.*s\n", lead, first ? "" : "    ", (int)cut, p);
    p += cut;
    while (*p == ' ') p++;
    if (first) w = w > 28 ? w - 4 : 24;
    first = false;
  }
}

/* "<lead><name> = <the let's compact text>", escaped and wrapped */
void cmt_let(arena *A, strbuf *s, const char *lead, const region *r, int l) {
  cmt_wrap(s, lead, arena_printf(A, "%s = %s", cmt(A, r->lets[l].name), cmt(A, region_expr_text(A, r, r->lets[l].e))));
}

const char *ctype(dtype t) {
  switch (t) {
  case DT_FP16: return "__half";
  case DT_BF16: return "__nv_bfloat16";
  case DT_FP32: return "float";
  case DT_INT32: return "int32_t";
  default: return "float";
  }
}

const char *dlc_dtype_enum(dtype t) {
  switch (t) {
  case DT_FP16: return "DLC_F16";
  case DT_BF16: return "DLC_BF16";
  default: return "DLC_F32";
  }
}

/* ---- sx -> C ------------------------------------------------------------------ */

/* Device-side C: params are fields of the kernel's `p`; the kernels' own
 * arithmetic is int64 on values that the entry point bounded. */
typedef struct cprint {
  arena *A;
} cprint;

static void c_sx(cprint *cp, strbuf *s, const sx *x);

static void c_atom(cprint *cp, strbuf *s, const sx_atom *a) {
  switch (a->kind) {
  case SXA_PARAM: sb_printf(s, "p->%s", lc(cp->A, a->name)); break;
  case SXA_VAR: sb_printf(s, "i_%s", cid(cp->A, a->name)); break;
  case SXA_FLOOR:
    sb_puts(s, "dlc::floordiv(");
    c_sx(cp, s, a->a);
    sb_printf(s, ", %lld)", (long long)a->den);
    break;
  case SXA_PROD:
    for (int i = 0; i < a->nf; i++) {
      if (i) sb_puts(s, " * ");
      c_atom(cp, s, a->f[i]);
    }
    break;
  case SXA_FDIVSYM:
  case SXA_MODSYM:
    sb_puts(s, a->kind == SXA_FDIVSYM ? "dlc::floordiv(" : "dlc::floormod(");
    c_sx(cp, s, a->a);
    sb_puts(s, ", ");
    c_sx(cp, s, a->b);
    sb_puts(s, ")");
    break;
  case SXA_OVERFLOW: sb_puts(s, "0 /* overflow */"); break;
  }
}

static void c_atom_cb(void *cp, strbuf *s, const sx_atom *a) { c_atom(cp, s, a); }

/* In Horner form (sx_print_horner): the same polynomial, so the same int64
 * value modulo 2^64 as the expanded sum, with fewer multiplies. */
static void c_sx(cprint *cp, strbuf *s, const sx *x) {
  if (x->nterms == 0) {
    sb_printf(s, "%lld", (long long)x->c0);
    return;
  }
  sb_puts(s, "(");
  sx_print_horner(s, x, c_atom_cb, cp);
  sb_puts(s, ")");
}

/* Host-side C for the entry points: params are the arguments in `dlc_p`,
 * and every operation is checked (dlc__add, dlc__sub, dlc__mul, dlc__fdiv,
 * dlc__fmod of dlc_internal.h), so that a hostile argument gives the poison
 * DLC__OVF instead of undefined behaviour.  Positive terms are summed first,
 * then the negative ones subtracted: "n - floor(127*n/128)" is
 * dlc__sub(dlc_p->n, dlc__fdiv(dlc__mul(127, dlc_p->n), 128)); `pre` goes before each
 * param's name ("dlc_p->", or "" for a function's own arguments). */
static const char *h_sx(arena *A, const sx *x, const char *pre);

static const char *h_atom(arena *A, const sx_atom *a, const char *pre) {
  switch (a->kind) {
  case SXA_PARAM: return arena_printf(A, "%s%s", pre, lc(A, a->name));
  case SXA_VAR: return arena_printf(A, "i_%s", cid(A, a->name)); /* never on the host */
  case SXA_FLOOR: return arena_printf(A, "dlc__fdiv(%s, %lld)", h_sx(A, a->a, pre), (long long)a->den);
  case SXA_PROD: {
    const char *r = h_atom(A, a->f[0], pre);
    for (int i = 1; i < a->nf; i++) r = arena_printf(A, "dlc__mul(%s, %s)", r, h_atom(A, a->f[i], pre));
    return r;
  }
  case SXA_FDIVSYM: return arena_printf(A, "dlc__fdiv(%s, %s)", h_sx(A, a->a, pre), h_sx(A, a->b, pre));
  case SXA_MODSYM: return arena_printf(A, "dlc__fmod(%s, %s)", h_sx(A, a->a, pre), h_sx(A, a->b, pre));
  case SXA_OVERFLOW: return "DLC__OVF";
  }
  return "DLC__OVF";
}

/* |coef| * atom, or coef * atom when `sign` is set */
static const char *h_term(arena *A, const sx_term *t, bool sign, const char *pre) {
  int64_t c = sign || t->coef > 0 ? t->coef : -t->coef;
  if (c == 1) return h_atom(A, t->atom, pre);
  return arena_printf(A, "dlc__mul(%lld, %s)", (long long)c, h_atom(A, t->atom, pre));
}

static const char *h_sx(arena *A, const sx *x, const char *pre) {
  const char *acc = NULL;
  for (int neg = 0; neg < 2; neg++)
    for (int i = 0; i < x->nterms; i++) {
      const sx_term *t = &x->terms[i];
      if ((t->coef < 0) != neg) continue;
      if (!acc) acc = h_term(A, t, true, pre);
      else acc = arena_printf(A, "dlc__%s(%s, %s)", neg ? "sub" : "add", acc, h_term(A, t, false, pre));
    }
  if (!acc) return x->c0 == INT64_MIN ? "DLC__OVF" : arena_printf(A, "%lld", (long long)x->c0);
  if (x->c0 > 0) return arena_printf(A, "dlc__add(%s, %lld)", acc, (long long)x->c0);
  if (x->c0 < 0) return x->c0 == INT64_MIN ? "DLC__OVF" : arena_printf(A, "dlc__sub(%s, %lld)", acc, -(long long)x->c0);
  return acc;
}

char *sxc(arena *A, const sx *x, bool host) {
  if (host) return arena_strdup(A, h_sx(A, x, "dlc_p->"));
  cprint cp = {A};
  strbuf s = {0};
  c_sx(&cp, &s, x);
  char *t = sb_take(&s);
  char *r = arena_strdup(A, t);
  free(t);
  return r;
}

char *sxc_args(arena *A, const sx *x) { return arena_strdup(A, h_sx(A, x, "")); }

char *emit_sx_c(arena *A, const sx *x) { return sxc(A, x, false); }

const char *flit(arena *A, double v, dtype t) {
  if (t == DT_BOOL) return v != 0 ? "true" : "false";
  if (isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
  if (isnan(v)) return "NAN";
  char buf[64];
  snprintf(buf, sizeof buf, "%.9g", v);
  if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
  return arena_printf(A, "%sf", buf);
}

/* ---- memrefs: element offsets --------------------------------------------------- */

/* ---- the Op struct ---------------------------------------------------------------- */

/* A dtype in an Op: `T` for the operand dtype the Op is instantiated on,
 * else its C type. */
const char *tname(const opgen *g, dtype t) { return t == g->T ? "T" : ctype(t); }

const sx *group_extent(opgen *g, const int *ax, int n) {
  const sx *e = sx_int(g->A, 1);
  for (int i = 0; i < n; i++) e = sx_mul(g->A, e, g->r->it[ax[i]].size);
  return e;
}

/* Declares i_<axis> for every axis of a group from the flattened index. */
void decompose(opgen *g, const char *idx, const int *ax, int n, const char *indent) {
  if (n == 0) return;
  if (n == 1) {
    sb_printf(g->s, "%s[[maybe_unused]] const int64_t i_%s = %s;\n", indent, cid(g->A, g->r->it[ax[0]].name), idx);
    return;
  }
  sb_printf(g->s, "%sint64_t t_%s = %s;\n", indent, idx, idx);
  for (int i = n - 1; i >= 1; i--) {
    const char *e = sxc(g->A, g->r->it[ax[i]].size, false);
    sb_printf(g->s, "%s[[maybe_unused]] const int64_t i_%s = t_%s %% %s;\n", indent, cid(g->A, g->r->it[ax[i]].name), idx, e);
    sb_printf(g->s, "%st_%s /= %s;\n", indent, idx, e);
  }
  sb_printf(g->s, "%s[[maybe_unused]] const int64_t i_%s = t_%s;\n", indent, cid(g->A, g->r->it[ax[0]].name), idx);
}

/* A tail predicate: the bound check of a flattened group, when Poly Core
 * says one of its axes is a tail. */
static void tail_check(opgen *g, const char *idx, const int *ax, int n) {
  bool tail = false;
  for (int i = 0; i < n; i++)
    for (int t = 0; t < g->v->ntail; t++) tail |= strcmp(g->v->tail[t], g->r->it[ax[i]].name) == 0;
  if (tail) sb_printf(g->s, "    if (%s >= %s) return 0;\n", idx, sxc(g->A, group_extent(g, ax, n), false));
}

static const rexpr *read_of(const rexpr *e) {
  if (e->k == RX_SELECT && !e->a) e = e->b;
  if (e->k == RX_UNARY && e->op == TINY_CAST) e = e->a;
  return e;
}

static void guards_c(opgen *g, strbuf *s, const ib_guard *gd, int ng) {
  for (int i = 0; i < ng; i++) {
    const char *e = sxc(g->A, gd[i].e, false);
    sb_printf(s, "%s(%s <= %s", i ? " && " : "", sxc(g->A, gd[i].lo, false), e);
    if (gd[i].hi) sb_printf(s, " && %s < %s", e, sxc(g->A, gd[i].hi, false));
    sb_puts(s, ")");
  }
}

/* The chunk function of one operand: the elements valid in the chunk that
 * starts at (rows index ri, k index ki, batch bi), and its address, from the
 * operand's Read map (offset), its Select guards (pads) and the tails. */
void chunk_fn(opgen *g, const gpu_operand *o, const char *fname, const int *rax, int nr, const int *kax, int nk,
              const char *role) {
  const region *r = g->r;
  const rexpr *sel = o->read, *rd = read_of(o->read);
  const region_memref *m = &r->in[o->input];
  strbuf *s = g->s;
  sb_printf(s, "  // %s = %s[", role, cmt(g->A, m->name));
  for (int d = 0; d < rd->nmap; d++) sb_printf(s, "%s%s", d ? ", " : "", sx_str(g->A, rd->map[d]));
  sb_printf(s, "]: chunks of VEC elements run along %s\n",
            o->contig_axis >= 0 ? r->it[o->contig_axis].name : "nothing (VEC = 1)");
  sb_printf(s,
            "  template <int VEC>\n  static __device__ __forceinline__ int %s(const Params *p, int64_t ri, int64_t ki, "
            "int64_t bi, const T **src) {\n",
            fname);
  sb_printf(s, "    const T *base = static_cast<const T *>(p->%s);\n    *src = base;\n", lc(g->A, m->name));
  tail_check(g, "ri", rax, nr);
  tail_check(g, "ki", kax, nk);
  decompose(g, "ri", rax, nr, "    ");
  decompose(g, "ki", kax, nk, "    ");
  decompose(g, "bi", g->v->b_axes, g->v->nb, "    ");
  if (sel->k == RX_SELECT && !sel->a && sel->ng) {
    strbuf c = {0};
    guards_c(g, &c, sel->guards, sel->ng);
    sb_printf(s, "    if (!(%s)) return 0;  // pad piece: zero fill\n", sb_str(&c));
    sb_free(&c);
  }
  if (o->contig_axis >= 0)
    sb_printf(s, "    const int64_t left = %s - i_%s;\n", sxc(g->A, r->it[o->contig_axis].size, false),
              cid(g->A, r->it[o->contig_axis].name));
  else
    sb_puts(s, "    const int64_t left = 1;\n");
  sb_printf(s, "    *src = base + %s;\n", sxc(g->A, gpuir_offset(g->A, m, rd->map), false));
  sb_puts(s, "    return left < VEC ? (int)left : VEC;\n  }\n");
}

/* Read e as the open pass loaded it (`index`: as a gather's int64 index):
 * rd<i>[j] (rd<i> for one value a row); false when no load of the pass
 * matches, which gpuir_verify rules out for a pass's lets. */
static bool rows_read(epigen *eg, strbuf *s, const rexpr *e, bool index) {
  const rows_pass *rp = eg->rp;
  if (!rp) return false;
  for (int i = 0; i < rp->nld; i++) {
    const gpu_stmt *st = rp->ld[i];
    if ((st->load == GLOAD_INDEX) != index || st->nguard != rp->ngs) continue;
    if (st->rd != e && !gpuir_rows_same_read(rp->k->r, &rp->k->rw, st->rd, e)) continue;
    bool same = true;
    for (int g = 0; g < rp->ngs; g++) same &= st->guard[g] == rp->gs[g];
    if (!same) continue;
    sb_printf(s, st->load == GLOAD_ROW ? "rd%d" : "rd%d[j]", i);
    return true;
  }
  return false;
}

/* The approximate spelling of an op (docs/manifest.md, "math"): the PTX
 * .approx.ftz forms, one MUFU each (div.full.ftz: a few instructions),
 * where the IEEE spellings of tiny.def add a subnormal rescale or a
 * slow-path call; NULL for tiny.def's own. */
static const char *fast_spelling(const epigen *eg, tiny_op op) {
  if (op == TINY_EXP2 && eg->exp2_nonpos) return "dlc::ex2($0)";
  if (eg->g->ieee) return NULL;
  switch (op) {
  case TINY_EXP2: return "dlc::ex2($0)";
  case TINY_LOG2: return "dlc::lg2($0)";
  case TINY_RECIP: return "dlc::rcp($0)";
  case TINY_SQRT: return "dlc::sqrt_approx($0)";
  case TINY_FDIV: return "dlc::div_approx($0, $1)";
  default: return NULL;
  }
}

static bool same_read(const rexpr *a, const rexpr *b) {
  if (a == b) return true;
  if (a->input != b->input || a->nmap != b->nmap) return false;
  for (int d = 0; d < a->nmap; d++)
    if (!sx_equal(a->map[d], b->map[d])) return false;
  return true;
}

static void collect_vreads(epigen *eg, const rexpr *e) {
  if (!e) return;
  if (e->k == RX_READ) {
    epi_read_kind kind = gpuir_epi_read(eg->g->A, eg->g->v, e);
    if (eg->full || kind == EPI_RD_COL || kind == EPI_RD_VEC) {
      for (int i = 0; i < eg->nv; i++)
        if (same_read(eg->v[i].rd, e)) return;
      if (eg->nv < 16) eg->v[eg->nv] = (vread){e, eg->nv, kind}, eg->nv++;
      return;
    }
  }
  collect_vreads(eg, e->a);
  collect_vreads(eg, e->b);
  collect_vreads(eg, e->c);
}

/* Whether e is the bool constant v. */
static bool bool_const(const rexpr *e, bool v) {
  return e && e->k == RX_CONST && e->dt == DT_BOOL && !e->crsqrt && !e->crecip && (e->cval != 0) == v;
}

static bool lw_let(epigen *eg, strbuf *s, int let);

/* guards_c, with the guards of lane masks spelled as their lane tests */
void eguards_c(epigen *eg, strbuf *s, const ib_guard *gd, int ng) {
  for (int i = 0; i < ng; i++) {
    if (i) sb_puts(s, " && ");
    int j = 0;
    while (j < eg->nlane && eg->lane_gd[j] != &gd[i]) j++;
    if (j < eg->nlane) sb_puts(s, eg->lane_test[j]);
    else guards_c(eg->g, s, &gd[i], 1);
  }
}

/* select(cond or guards, b, c) as `(cond ? b : c)`, the branches written
 * by `branch` (expr_c, or index_c for an index's int64 arithmetic). */
static void select_c(epigen *eg, strbuf *s, const rexpr *e, void (*branch)(epigen *, strbuf *, const rexpr *)) {
  sb_puts(s, "(");
  if (e->a) expr_c(eg, s, e->a);
  else eguards_c(eg, s, e->guards, e->ng);
  sb_puts(s, " ? ");
  /* the row skeleton loaded the Reads of a pad Select's branches under its guards */
  bool push = eg->rp && !e->a && eg->rp->ngs < GPUIR_ROW_GUARD_DEPTH;
  if (push) eg->rp->gs[eg->rp->ngs++] = e;
  branch(eg, s, e->b);
  sb_puts(s, " : ");
  branch(eg, s, e->c);
  if (push) eg->rp->ngs--;
  sb_puts(s, ")");
}

/* An index (the operand of a gather's Read) as an int64_t: the int32 loads
 * and the pad Selects of its view, never through float. */
static void index_c(epigen *eg, strbuf *s, const rexpr *e) {
  opgen *g = eg->g;
  switch (e->k) {
  case RX_READ:
    if (!e->ldvar && g->r->in[e->input].dt == DT_INT32) {
      if (rows_read(eg, s, e, true)) return;
      sb_printf(s, "(int64_t)__ldg(static_cast<const int32_t *>(p->%s) + %s)", lc(g->A, g->r->in[e->input].name),
                sxc(g->A, gpuir_offset(g->A, &g->r->in[e->input], e->map), false));
      return;
    }
    break;
  case RX_CONST:
    if (!e->crsqrt && !e->crecip) {
      sb_printf(s, "(int64_t)%lld", (long long)e->cval);
      return;
    }
    break;
  case RX_SELECT: select_c(eg, s, e, index_c); return;
  case RX_BCAST:
  case RX_TRANSPOSE: index_c(eg, s, e->a); return;
  default: break;
  }
  /* any other index expression: computed in fp32, exact below 2^24 */
  sb_puts(s, "(int64_t)(");
  expr_c(eg, s, e);
  sb_puts(s, ")");
}

/* A gather: load the index, then the element it selects when the guards
 * (0 <= ld < size, the source view's pads) hold, else cval. */
void gather_c(epigen *eg, strbuf *s, const rexpr *e) {
  opgen *g = eg->g;
  const region_memref *m = &g->r->in[e->input];
  sb_printf(s, "([&]() -> float { const int64_t i_%s = ", cid(g->A, e->ldvar));
  index_c(eg, s, e->a);
  sb_puts(s, "; return ");
  if (e->ng > 1) sb_puts(s, "(");
  guards_c(g, s, e->guards, e->ng);
  if (e->ng > 1) sb_puts(s, ")");
  sb_printf(s, " ? dlc::ld1(static_cast<const %s *>(p->%s) + %s) : %s; }())", tname(g, m->dt), lc(g->A, m->name),
            sxc(g->A, gpuir_offset(g->A, m, e->map), false), flit(g->A, e->cval, DT_FP32));
}

void expr_c(epigen *eg, strbuf *s, const rexpr *e) {
  opgen *g = eg->g;
  const region *r = g->r;
  switch (e->k) {
  case RX_CONST:
    if (e->crsqrt) sb_printf(s, "(%s * rsqrtf((float)p->%s))", flit(g->A, e->cval, DT_FP32), lc(g->A, e->crsqrt));
    else if (e->crecip) sb_printf(s, "(%s / (float)p->%s)", flit(g->A, e->cval, DT_FP32), lc(g->A, e->crecip));
    else sb_puts(s, flit(g->A, e->cval, e->dt));
    return;
  case RX_LET:
    if (lw_let(eg, s, e->let)) return;
    for (int i = 0; i < eg->nsub; i++)
      if (eg->sub_let[i] == e->let) {
        sb_puts(s, eg->sub_expr[i]);
        return;
      }
    if (e->let == r->acc_let) sb_puts(s, eg->acc);
    else sb_printf(s, "v_%s", cid(g->A, r->lets[e->let].name));
    return;
  case RX_READ: {
    if (rows_read(eg, s, e, false)) return;
    if (e->ldvar) {
      gather_c(eg, s, e);
      return;
    }
    for (int i = 0; i < eg->nv; i++)
      if (same_read(eg->v[i].rd, e)) {
        if (!eg->full || eg->v[i].kind == EPI_RD_VEC) sb_printf(s, "rd%d[j]", i);
        else if (eg->v[i].kind == EPI_RD_COL) sb_printf(s, "cc.rd%d[j]", i);
        else sb_printf(s, "rw%d", i);
        return;
      }
    const region_memref *m = &r->in[e->input];
    sb_printf(s, "dlc::ld1(static_cast<const %s *>(p->%s) + %s)", tname(g, m->dt), lc(g->A, m->name),
              sxc(g->A, gpuir_offset(g->A, m, e->map), false));
    return;
  }
  case RX_UNARY:
  case RX_BINARY: {
    if (e->op == TINY_CAST) {
      if (e->dt == DT_FP16 || e->dt == DT_BF16) {
        sb_printf(s, "dlc::to_f32(dlc::from_f32<%s>(", tname(g, e->dt));
        expr_c(eg, s, e->a);
        sb_puts(s, "))");
      } else {
        expr_c(eg, s, e->a);
      }
      return;
    }
    const char *f = fast_spelling(eg, e->op);
    if (!f) f = tiny_op_cuda(e->op);
    for (const char *p = f; *p; p++) {
      if (*p == '$' && (p[1] == '0' || p[1] == '1')) {
        expr_c(eg, s, p[1] == '0' ? e->a : e->b);
        p++;
      } else {
        char c[2] = {*p, 0};
        sb_puts(s, c);
      }
    }
    return;
  }
  case RX_SELECT:
    if (!e->a && bool_const(e->b, true) && bool_const(e->c, false)) {
      /* a mask: select(guards, true, false) is the guards (each already in parentheses) */
      if (e->ng > 1) sb_puts(s, "(");
      eguards_c(eg, s, e->guards, e->ng);
      if (e->ng > 1) sb_puts(s, ")");
      return;
    }
    select_c(eg, s, e, expr_c);
    return;
  case RX_BCAST:
  case RX_TRANSPOSE:
    /* evaluated at the point: the view needs no code */
    expr_c(eg, s, e->a);
    return;
  case RX_REDUCE:
    sb_puts(s, "0.0f /* a reduction is not pointwise */");
    return;
  }
}

/* ---- lowered lets (approx math) ---------------------------------------------------- */

/* In the "approx" math, post_lets_c lowers the chain of post-reduce lets
 * before spelling it, as far as their algebra allows (docs/codegen.md,
 * "Lowered lets"):
 *  - a let of + - * and constants over one other let x (or over none) is a
 *    polynomial in x (degree <= LW_DEG): its constants fold in double, and
 *    it is evaluated in Horner form with fmaf, an odd one as x * q(x^2) and
 *    an even one as q(x^2);
 *  - k + exp2(P) keeps P a polynomial; the logistic 1 / (1 + exp2(P)) is
 *    0.5 + 0.5 tanh(Q), Q = -P ln2 / 2: one tanh.approx where ex2, an add
 *    and rcp took three; a + b tanh(Q) keeps its form under + - * by
 *    constants (2 (0.5 + 0.5 tanh(Q)) - 1 is tanh(Q));
 *  - x (a + b tanh(Q)), Q a polynomial in x and |a| = |b|, is
 *    fmaf(+-h, t, h), h = a x, with Q rewritten over h; when x = u + v,
 *    h = fmaf(u, a, a * v), v the Read if there is one (a bias: a * v is
 *    the same on every row of a thread's columns).
 * A lowered let is written (as v_<let>) only where a let spelled as before,
 * or the output, reads it.  The "ieee" math keeps tiny.def's chain. */
#define LW_DEG 7
#define LW_LN2 0.693147180559945309417
enum { LW_PLAIN, LW_POLY, LW_EXP2, LW_TANH };
typedef struct lw_sym {
  int kind;
  int base;               /* the let x the polynomial is over; -1: a constant */
  int deg;
  double c[LW_DEG + 1];   /* POLY: sum c[i] x^i; EXP2: k + exp2(that); TANH: a + b tanh(that) */
  double k, a, b;
  bool done;              /* written as v_<let> */
} lw_sym;

typedef struct lowering {
  lw_sym *sym;            /* per let of the region */
  int ntmp;
  const char *tmp[32];    /* temporaries written (w_<x>_sq) */
} lowering;

static void lw_norm(lw_sym *p) {
  while (p->deg > 0 && p->c[p->deg] == 0) p->deg--;
  if (p->deg == 0) p->base = -1;
}

/* An operand (past views): a constant, a lowered let, or a let spelled as
 * before, the polynomial x of itself. */
static bool lw_operand(const epigen *eg, const rexpr *e, lw_sym *o) {
  while (e->k == RX_BCAST || e->k == RX_TRANSPOSE) e = e->a;
  memset(o, 0, sizeof *o);
  if (e->dt != DT_FP32) return false;
  if (e->k == RX_CONST && !e->crsqrt && !e->crecip && isfinite(e->cval)) {
    o->kind = LW_POLY, o->base = -1, o->c[0] = e->cval;
    return true;
  }
  if (e->k != RX_LET) return false;
  if (eg->lw->sym[e->let].kind != LW_PLAIN) {
    *o = eg->lw->sym[e->let];
    o->done = false;
    return true;
  }
  o->kind = LW_POLY, o->base = e->let, o->deg = 1, o->c[1] = 1;
  return true;
}

static bool lw_is_const(const lw_sym *p) { return p->kind == LW_POLY && p->base < 0; }

static void lw_scale(lw_sym *p, double f) {
  for (int i = 0; i <= p->deg; i++) p->c[i] *= f;
  lw_norm(p);
}

/* The lowered form of a let's expression; kind LW_PLAIN: none. */
static lw_sym lw_of(const epigen *eg, const rexpr *e) {
  lw_sym r, x, y;
  memset(&r, 0, sizeof r);
  while (e->k == RX_BCAST || e->k == RX_TRANSPOSE) e = e->a;
  if (e->dt != DT_FP32) return r;
  if (e->k == RX_LET || e->k == RX_CONST) return lw_operand(eg, e, &x) ? x : r;
  if (e->k == RX_UNARY && lw_operand(eg, e->a, &x)) {
    if (e->op == TINY_NEG && x.kind == LW_POLY) lw_scale(&x, -1), r = x;
    else if (e->op == TINY_NEG && x.kind == LW_TANH) x.a = -x.a, x.b = -x.b, r = x;
    else if (e->op == TINY_EXP2 && x.kind == LW_POLY && x.base >= 0) r = x, r.kind = LW_EXP2, r.k = 0;
    else if (e->op == TINY_RECIP && x.kind == LW_EXP2 && x.k == 1)
      r = x, r.kind = LW_TANH, r.a = r.b = 0.5, lw_scale(&r, -0.5 * LW_LN2);
    return r;
  }
  if (e->k != RX_BINARY || !lw_operand(eg, e->a, &x) || !lw_operand(eg, e->b, &y)) return r;
  if (e->op == TINY_SUB) {
    if (y.kind == LW_POLY) lw_scale(&y, -1);
    else if (y.kind == LW_TANH) y.a = -y.a, y.b = -y.b;
    else return r;
  }
  if (e->op != TINY_FDIV && lw_is_const(&x) && y.kind != LW_POLY) { /* the constant second */
    lw_sym t = x;
    x = y, y = t;
  }
  switch (e->op) {
  case TINY_ADD:
  case TINY_SUB:
    if (x.kind == LW_POLY && y.kind == LW_POLY && (x.base < 0 || y.base < 0 || x.base == y.base)) {
      r = x.deg >= y.deg ? x : y;
      for (int i = 0; i <= LW_DEG; i++) r.c[i] = x.c[i] + y.c[i];
      lw_norm(&r);
    } else if (lw_is_const(&y) && x.kind == LW_TANH) {
      r = x, r.a += y.c[0];
    } else if (lw_is_const(&y) && x.kind == LW_EXP2) {
      r = x, r.k += y.c[0];
    }
    return r;
  case TINY_MUL:
    if (x.kind == LW_POLY && y.kind == LW_POLY && (x.base < 0 || y.base < 0 || x.base == y.base) &&
        x.deg + y.deg <= LW_DEG) {
      r = x, r.base = x.base >= 0 ? x.base : y.base, r.deg = x.deg + y.deg;
      memset(r.c, 0, sizeof r.c);
      for (int i = 0; i <= x.deg; i++)
        for (int j = 0; j <= y.deg; j++) r.c[i + j] += x.c[i] * y.c[j];
      lw_norm(&r);
    } else if (lw_is_const(&y) && x.kind == LW_TANH) {
      r = x, r.a *= y.c[0], r.b *= y.c[0];
    }
    return r;
  case TINY_FDIV: /* c / (1 + exp2(P)) */
    if (lw_is_const(&x) && y.kind == LW_EXP2 && y.k == 1) {
      r = y, r.kind = LW_TANH, r.a = r.b = 0.5 * x.c[0], lw_scale(&r, -0.5 * LW_LN2);
    }
    return r;
  default:
    return r;
  }
}

/* How the let x a polynomial is over is spelled, and its identifier. */
static const char *lw_name(const epigen *eg, int let) {
  const region *r = eg->g->r;
  return let == r->acc_let ? eg->acc : arena_printf(eg->g->A, "v_%s", cid(eg->g->A, r->lets[let].name));
}

/* A temporary `const float <name> = <x>;`, written once (past 32 of them,
 * x itself, in parentheses). */
static const char *lw_tmp(epigen *eg, const char *name, const char *x) {
  lowering *lw = eg->lw;
  for (int i = 0; i < lw->ntmp; i++)
    if (!strcmp(lw->tmp[i], name)) return name;
  if (lw->ntmp == 32) return arena_printf(eg->g->A, "(%s)", x);
  sb_printf(eg->g->s, "      const float %s = %s;\n", name, x);
  lw->tmp[lw->ntmp++] = name;
  return name;
}

/* sum b[i] y^i, i <= m, in Horner form */
static const char *lw_horner(arena *A, const char *y, const double *b, int m) {
  if (m == 0) return flit(A, b[0], DT_FP32);
  const char *r;
  if (b[m] == 1) r = b[m - 1] == 0 ? y : arena_printf(A, "(%s + %s)", y, flit(A, b[m - 1], DT_FP32));
  else if (b[m] == -1 && b[m - 1] == 0) r = arena_printf(A, "(-%s)", y);
  else if (b[m - 1] == 0) r = arena_printf(A, "(%s * %s)", y, flit(A, b[m], DT_FP32));
  else r = arena_printf(A, "fmaf(%s, %s, %s)", y, flit(A, b[m], DT_FP32), flit(A, b[m - 1], DT_FP32));
  for (int i = m - 2; i >= 0; i--)
    r = b[i] == 0 ? arena_printf(A, "(%s * %s)", y, r) : arena_printf(A, "fmaf(%s, %s, %s)", y, r, flit(A, b[i], DT_FP32));
  return r;
}

/* The polynomial c[0..deg] over x (spelled x, identifier xid). */
static const char *lw_poly(epigen *eg, const double *c, int deg, const char *x, const char *xid) {
  arena *A = eg->g->A;
  bool odd = true, even = true;
  for (int i = 0; i <= deg; i++)
    if (c[i] != 0) *(i % 2 ? &even : &odd) = false;
  if (deg >= 2 && (odd || even)) {
    const char *sq = lw_tmp(eg, arena_printf(A, "w_%s_sq", xid), arena_printf(A, "%s * %s", x, x));
    double q[LW_DEG + 1];
    int m = 0;
    for (int i = odd ? 1 : 0; i <= deg; i += 2) q[m++] = c[i];
    const char *h = lw_horner(A, sq, q, m - 1);
    return odd ? arena_printf(A, "(%s * %s)", x, h) : h;
  }
  return lw_horner(A, x, c, deg);
}

static const char *lw_expr(epigen *eg, const lw_sym *l) {
  arena *A = eg->g->A;
  const region *r = eg->g->r;
  const char *x = l->base >= 0 ? lw_name(eg, l->base) : "",
             *xid = l->base >= 0 ? cid(A, l->base == r->acc_let ? "acc" : r->lets[l->base].name) : "";
  const char *p = l->base >= 0 ? lw_poly(eg, l->c, l->deg, x, xid) : flit(A, l->c[0], DT_FP32);
  if (l->kind == LW_POLY) return p;
  if (l->kind == LW_EXP2)
    return l->k == 0 ? arena_printf(A, "dlc::ex2(%s)", p) : arena_printf(A, "(%s + dlc::ex2(%s))", flit(A, l->k, DT_FP32), p);
  const char *t = arena_printf(A, "dlc::tanh_approx(%s)", p);
  if (l->a == 0) return l->b == 1 ? t : arena_printf(A, "(%s * %s)", t, flit(A, l->b, DT_FP32));
  return arena_printf(A, "fmaf(%s, %s, %s)", t, flit(A, l->b, DT_FP32), flit(A, l->a, DT_FP32));
}

/* expr_c's RX_LET under a lowering: a lowered let, written on first use. */
static bool lw_let(epigen *eg, strbuf *s, int let) {
  if (!eg->lw || eg->lw->sym[let].kind == LW_PLAIN) return false;
  lw_sym *l = &eg->lw->sym[let];
  const char *nm = arena_printf(eg->g->A, "v_%s", cid(eg->g->A, eg->g->r->lets[let].name));
  if (!l->done) {
    const char *x = lw_expr(eg, l);
    sb_printf(eg->g->s, "      const float %s = %s;\n", nm, x);
    l->done = true;
  }
  sb_puts(s, nm);
  return true;
}

/* A let x * (a + b tanh(Q)), Q over x and |a| = |b|, as fmaf(+-h, t, h),
 * spelled dlc::gate[<true>](h, t): h = a x written first; NULL when the
 * let is not one.  *over is x, *reads the times the gate spelled reads h. */
static const char *lw_gate(epigen *eg, int let, int *over, int *reads) {
  const region *r = eg->g->r;
  arena *A = eg->g->A;
  const rexpr *e = r->lets[let].e;
  while (e->k == RX_BCAST || e->k == RX_TRANSPOSE) e = e->a;
  lw_sym x, t;
  if (e->k != RX_BINARY || e->op != TINY_MUL || e->dt != DT_FP32 || !lw_operand(eg, e->a, &x) ||
      !lw_operand(eg, e->b, &t))
    return NULL;
  if (x.kind == LW_TANH) {
    lw_sym s = x;
    x = t, t = s;
  }
  if (t.kind != LW_TANH || t.base < 0 || x.kind != LW_POLY || x.base != t.base || x.deg != 1 || x.c[0] != 0 ||
      t.a == 0 || fabs(t.a) != fabs(t.b))
    return NULL;
  const double s = x.c[1] * t.a; /* h = s x */
  const char *hid = arena_printf(A, "%s_h", cid(A, r->lets[let].name)), *h = arena_printf(A, "w_%s", hid);
  const rexpr *xe = t.base == r->acc_let ? NULL : r->lets[t.base].e;
  while (xe && (xe->k == RX_BCAST || xe->k == RX_TRANSPOSE)) xe = xe->a;
  strbuf hx = {0};
  if (xe && xe->k == RX_BINARY && xe->op == TINY_ADD && xe->a->dt == DT_FP32 && xe->b->dt == DT_FP32) {
    const rexpr *u = xe->a, *v = xe->b;
    if (u->k == RX_READ && v->k != RX_READ) u = xe->b, v = xe->a;
    sb_puts(&hx, "fmaf(");
    expr_c(eg, &hx, u);
    sb_printf(&hx, ", %s, %s * ", flit(A, s, DT_FP32), flit(A, s, DT_FP32));
    expr_c(eg, &hx, v);
    sb_puts(&hx, ")");
  } else {
    sb_printf(&hx, "%s * %s", lw_name(eg, t.base), flit(A, s, DT_FP32));
  }
  h = lw_tmp(eg, h, sb_str(&hx));
  sb_free(&hx);
  double q[LW_DEG + 1], f = 1;
  for (int i = 0; i <= t.deg; i++, f /= s) q[i] = t.c[i] * f;
  const char *neg = t.b == t.a ? "" : "<true>";
  *over = t.base, *reads = 1;
  /* Q = h, c1 h or h (c1 + c3 h^2): one asm reading h once, so that a
   * chain of gates costs cicc time linear in its length (dlc_device.cuh) */
  if (t.deg == 1 && q[0] == 0 && q[1] == 1) return arena_printf(A, "dlc::gate_tanh%s(%s)", neg, h);
  if (t.deg == 1 && q[0] == 0) return arena_printf(A, "dlc::gate_tanh_lin%s(%s, %s)", neg, h, flit(A, q[1], DT_FP32));
  if (t.deg == 3 && q[0] == 0 && q[2] == 0)
    return arena_printf(A, "dlc::gate_tanh_odd3%s(%s, %s, %s)", neg, h, flit(A, q[1], DT_FP32), flit(A, q[3], DT_FP32));
  /* any other Q: dlc::gate reads h once, but Q reads it too (a chain of
   * these grows cicc's time as 2^G or more) */
  const char *tq = arena_printf(A, "dlc::tanh_approx(%s)", lw_poly(eg, q, t.deg, h, hid));
  *reads = 1; /* and Q's: once per term */
  for (int i = 1; i <= t.deg; i++) *reads += q[i] != 0;
  return arena_printf(A, "dlc::gate%s(%s, %s)", neg, h, tq);
}

/* ---- operand paths (docs/codegen.md, "Compile time") ------------------------------- */

/* The paths from expression e back to the epilogue's inputs (the
 * accumulator, Reads, pre-reduce lets) through the operands it spells,
 * each let's own count in P: one per Read, P[l] per use of let l (a let
 * lowered away is spelled as its lowering, an instance of its own count). */
static double epi_paths_of(const region *r, const rexpr *e, const double *P) {
  if (!e) return 0;
  switch (e->k) {
  case RX_LET: return e->let == r->acc_let || !r->lets[e->let].post_reduce ? 1 : P[e->let];
  case RX_READ: return 1;
  case RX_CONST: return 0;
  default: return epi_paths_of(r, e->a, P) + epi_paths_of(r, e->b, P) + epi_paths_of(r, e->c, P);
  }
}

/* The paths of lowered let l: its polynomial reads x once per term of
 * degree >= 1 (Horner), P[x] each. */
static double epi_paths_lowered(const region *r, const lw_sym *l, const double *P) {
  if (l->base < 0) return 0;
  int terms = 0;
  for (int i = 1; i <= l->deg; i++) terms += l->c[i] != 0;
  return (terms ? terms : 1) * (l->base == r->acc_let || !r->lets[l->base].post_reduce ? 1 : P[l->base]);
}

/* Records in the render log the operand paths of the epilogue just spelled
 * (its output's count), past EMIT_EPI_LINEAR_PATHS with the let of the most
 * paths under that (a node's value: no let's name is it plus "."), where
 * the chain could be split. */
static void epi_paths_note(const epigen *eg, const double *P) {
  const region *r = eg->g->r;
  render_log *log = eg->g->log;
  const int out = eg->g->v->out_let;
  const double n = out == r->acc_let ? 1 : P[out];
  if (!log || n <= log->epi_paths) return;
  log->epi_paths = n, log->epi_region = r->name, log->epi_split = NULL;
  double best = 0;
  for (int l = 0; l < r->nlets; l++) {
    if (!r->lets[l].post_reduce || l == out || P[l] > EMIT_EPI_LINEAR_PATHS || P[l] <= best) continue;
    size_t len = strlen(r->lets[l].name);
    bool derived = false;
    for (int m = 0; m < r->nlets && !derived; m++) {
      size_t lm = strlen(r->lets[m].name);
      derived = m != l && lm < len && r->lets[l].name[lm] == '.' && !strncmp(r->lets[m].name, r->lets[l].name, lm);
    }
    if (!derived) best = P[l], log->epi_split = r->lets[l].name;
  }
}

/* The post-reduce lets at output j, one `const float v_<let>` each (in the
 * "approx" math, lowered first: the lowered ones only where read), and
 * out[j], the yielded value. */
static void post_lets_c(epigen *eg) {
  opgen *g = eg->g;
  const region *r = g->r;
  lowering lw = {0};
  bool *base = NULL; /* a let a lowered one is over: maybe read only through it */
  double *P = ARENA_ARRAY(g->A, double, r->nlets > 0 ? r->nlets : 1); /* operand paths, per let */
  if (!g->ieee) {
    lw.sym = ARENA_ARRAY(g->A, lw_sym, r->nlets), base = ARENA_ARRAY(g->A, bool, r->nlets), eg->lw = &lw;
    for (int l = 0; l < r->nlets; l++)
      if (r->lets[l].post_reduce) {
        lw.sym[l] = lw_of(eg, r->lets[l].e);
        if (lw.sym[l].base >= 0) base[lw.sym[l].base] = true;
      }
  }
  for (int l = 0; l < r->nlets; l++) {
    if (!r->lets[l].post_reduce) continue;
    const rexpr *e = r->lets[l].e;
    if (eg->lw) {
      if (lw.sym[l].kind != LW_PLAIN) {
        P[l] = epi_paths_lowered(r, &lw.sym[l], P);
        continue;
      }
      int over, reads;
      const char *gx = lw_gate(eg, l, &over, &reads);
      if (gx) {
        P[l] = reads * (over == r->acc_let || !r->lets[over].post_reduce ? 1 : P[over]);
        sb_printf(g->s, "      const float v_%s = %s;\n", cid(g->A, r->lets[l].name), gx);
        continue;
      }
    }
    P[l] = epi_paths_of(r, e, P);
    strbuf x = {0};
    expr_c(eg, &x, e);
    sb_printf(g->s, "      %sconst %s v_%s = %s;\n", base && base[l] ? "[[maybe_unused]] " : "", e->dt == DT_BOOL ? "bool" : "float",
              cid(g->A, r->lets[l].name), sb_str(&x));
    sb_free(&x);
  }
  strbuf o = {0};
  if (g->v->out_let == r->acc_let) sb_puts(&o, "acc[j]");
  else if (!lw_let(eg, &o, g->v->out_let)) sb_printf(&o, "v_%s", cid(g->A, r->lets[g->v->out_let].name));
  sb_printf(g->s, "      out[j] = %s;\n", sb_str(&o));
  sb_free(&o);
  eg->lw = NULL;
  epi_paths_note(eg, P);
}

/* The region's post-reduce lets, on the accumulator, for 4 consecutive N
 * indices, and the store of the yielded value. */
void epilogue_fn(opgen *g, const char *rows_note) {
  const gpu_view *v = g->v;
  const region *r = g->r;
  strbuf *s = g->s;
  epigen eg = {g, {{0}}, 0, false, "acc[j]", 0, {0}, {0}, false, 0, {0}, {0}, NULL, NULL};
  for (int l = 0; l < r->nlets; l++)
    if (r->lets[l].post_reduce) collect_vreads(&eg, r->lets[l].e);
  const region_memref *om = &r->out[v->out];
  const rexpr *ol = r->lets[v->out_let].e;
  const sx **omap = gpuir_out_map(g->A, g->v);
  bool out_unit = v->nn == 1 && om->rank > 0 && ol->ax[om->rank - 1] == v->n_axes[0];
  cmt_wrap(s, "  // ",
           arena_printf(g->A, "epilogue of region %s: its post-reduce lets on the fp32 accumulator%s, then the store",
                        cmt(g->A, r->name), rows_note));
  for (int l = 0; l < r->nlets; l++)
    if (r->lets[l].post_reduce || l == r->acc_let)
      cmt_let(g->A, s, "  //   ", r, l);
  sb_printf(s, "  //   yield %s -> %s (%s)\n", cmt(g->A, r->lets[v->out_let].name), cmt(g->A, om->name),
            v->out_dt == g->T ? "T" : dtype_name(v->out_dt));
  sb_puts(s,
          "  static __device__ __forceinline__ void epilogue4(const Params *p, int64_t mi, int64_t ni, int64_t bi,\n"
          "                                                 const float (&acc)[4]) {\n");
  sb_printf(s, "    if (mi >= %s) return;\n", sxc(g->A, group_extent(g, v->m_axes, v->nm), false));
  sb_printf(s, "    const int64_t nleft = %s - ni;\n    if (nleft <= 0) return;\n",
            sxc(g->A, group_extent(g, v->n_axes, v->nn), false));
  decompose(g, "mi", v->m_axes, v->nm, "    ");
  decompose(g, "bi", v->b_axes, v->nb, "    ");
  for (int i = 0; i < eg.nv; i++) {
    const rexpr *rd = eg.v[i].rd;
    const region_memref *m = &r->in[rd->input];
    sb_printf(s, "    float rd%d[4];\n    {\n", i);
    decompose(g, "ni", v->n_axes, v->nn, "      ");
    sb_printf(s, "      const %s *src = static_cast<const %s *>(p->%s) + %s;\n", tname(g, m->dt), tname(g, m->dt),
              lc(g->A, m->name), sxc(g->A, gpuir_offset(g->A, m, rd->map), false));
    sb_printf(s,
              "      if (nleft >= 4 && reinterpret_cast<uintptr_t>(src) %% (4 * sizeof(*src)) == 0) dlc::ld4(rd%d, src);\n"
              "      else\n"
              "        for (int j = 0; j < 4; ++j) rd%d[j] = j < nleft ? dlc::ld1(src + j) : 0.f;\n    }\n",
              i, i);
  }
  sb_puts(s, "    float out[4];\n    int64_t off[4];\n#pragma unroll\n    for (int j = 0; j < 4; ++j) {\n");
  sb_puts(s, "      if (j >= nleft) break;\n      const int64_t nj = ni + j;\n");
  decompose(g, "nj", v->n_axes, v->nn, "      ");
  post_lets_c(&eg);
  sb_printf(s, "      off[j] = %s;\n", sxc(g->A, gpuir_offset(g->A, om, omap), false));
  sb_puts(s, "    }\n");
  sb_printf(s, "    OutT *dst = static_cast<OutT *>(p->%s);\n", lc(g->A, om->name));
  if (out_unit)
    sb_puts(s,
            "    if (nleft >= 4 && reinterpret_cast<uintptr_t>(dst + off[0]) % (4 * sizeof(OutT)) == 0) {\n"
            "      dlc::st4(dst + off[0], out);\n      return;\n    }\n");
  sb_puts(s, "    for (int j = 0; j < 4 && j < nleft; ++j) dlc::st1(dst + off[j], out[j]);\n  }\n");
}

/* The alignment test of one tensor the full-width epilogue accesses with
 * vectors of `ev` elements along its unit-stride last dim: the base holds
 * the vector's bytes (16 at most) and every other dim's stride is a whole
 * number of vectors. */
static void aligned_check(opgen *g, const region_memref *m, int ev) {
  int bytes = ev * dtype_bytes(m->dt);
  if (bytes > 16) bytes = 16;
  sb_printf(g->s, "    if (reinterpret_cast<uintptr_t>(p->%s) %% %d != 0) return false;\n", lc(g->A, m->name), bytes);
  for (int d = 0; d + 1 < m->rank; d++) {
    const sx *st = gpuir_stride(g->A, m, d);
    int64_t c;
    if (sx_is_int(st, &c) && c % ev == 0) continue;
    sb_printf(g->s, "    if ((%s) %% %d != 0) return false;\n", sxc(g->A, st, false), ev);
  }
}

/* A row's offset in tensor m: by the flattened M index (variable mflat)
 * when the M axes enter it packed. */
static const sx *row_offset(opgen *g, const region_memref *m, const sx *const *map) {
  const sx *off = gpuir_offset(g->A, m, map);
  const sx *f = gpuir_flatten(g->A, g->r, g->v->m_axes, g->v->nm, off, "mflat");
  return f ? f : off;
}

/* The full-width epilogue (the GPU IR's first Epilogue/StGlobalVec pair):
 * no column bounds, the column reads once a thread, and one 16-byte store
 * of `ev` consecutive outputs a row; store_full skips the rows past M. */
void epilogue_full_fn(opgen *g, int ev, const char *tile_n) {
  const gpu_view *v = g->v;
  const region *r = g->r;
  strbuf *s = g->s;
  epigen eg = {g, {{0}}, 0, true, "acc[j]", 0, {0}, {0}, false, 0, {0}, {0}, NULL, NULL};
  for (int l = 0; l < r->nlets; l++)
    if (r->lets[l].post_reduce) collect_vreads(&eg, r->lets[l].e);
  const region_memref *om = &r->out[v->out];
  const sx **omap = gpuir_out_map(g->A, g->v);
  /* split (opgen.split): EPI_VEC is the plan's, which may be 0 (a split-K
   * plan's), and the arrays take the width as a number */
  const char *EV = g->split ? arena_printf(g->A, "%d", ev) : "EPI_VEC";
  sb_printf(s, "  // tiles inside N: each thread stores %d consecutive outputs of a row with one 16-byte store\n", ev);
  if (!g->split) sb_printf(s, "  static constexpr int EPI_VEC = %d;\n", ev);
  sb_puts(s, "  struct EpiCols {\n");
  for (int i = 0; i < eg.nv; i++)
    if (eg.v[i].kind == EPI_RD_COL) sb_printf(s, "    float rd%d[%d];  // %s\n", i, ev, cmt(g->A, r->in[eg.v[i].rd->input].name));
  sb_puts(s, "  };\n");
  /* the test: the tile inside N, the vector tensors aligned (its rows past
   * M are not stored) */
  sb_puts(s, "  static __device__ __forceinline__ bool epi_vec_ok(const Params *p, int64_t n0) {\n");
  sb_printf(s, "    if (n0 + %s > extent_n(p)) return false;\n", tile_n);
  aligned_check(g, om, ev);
  for (int i = 0; i < eg.nv; i++) {
    bool seen = false;
    for (int j = 0; j < i; j++) seen |= eg.v[j].kind != EPI_RD_ROW && eg.v[j].rd->input == eg.v[i].rd->input;
    if (eg.v[i].kind != EPI_RD_ROW && !seen) aligned_check(g, &r->in[eg.v[i].rd->input], ev);
  }
  sb_puts(s, "    return true;\n  }\n");
  /* the column reads of a thread */
  sb_puts(s, "  static __device__ __forceinline__ void epi_cols([[maybe_unused]] const Params *p, [[maybe_unused]] int64_t ni,\n"
             "                                                [[maybe_unused]] int64_t bi, [[maybe_unused]] EpiCols &cc) {\n");
  decompose(g, "ni", v->n_axes, v->nn, "    ");
  decompose(g, "bi", v->b_axes, v->nb, "    ");
  for (int i = 0; i < eg.nv; i++) {
    if (eg.v[i].kind != EPI_RD_COL) continue;
    const region_memref *m = &r->in[eg.v[i].rd->input];
    sb_printf(s, "    dlc::ldv(cc.rd%d, static_cast<const %s *>(p->%s) + %s);\n", i, tname(g, m->dt), lc(g->A, m->name),
              sxc(g->A, gpuir_offset(g->A, m, eg.v[i].rd->map), false));
  }
  sb_puts(s, "  }\n");
  /* a thread's row pointers: row mi's, then the next row's by the GPU IR's
   * row steps (gpuir_epi_row_step) where every row tensor has one; a packed
   * M group (NHWC's n, h, w) addresses by the flattened row, and the
   * decomposition then goes unused (the compiler drops its divisions) */
  const sx *ooff = row_offset(g, om, omap);
  const sx **roff = ARENA_ARRAY(g->A, const sx *, eg.nv + 1);
  const sx *ostep = gpuir_epi_row_step(g->A, v, om, omap);
  const sx **rstep = ARENA_ARRAY(g->A, const sx *, eg.nv + 1);
  bool flat = sx_mentions(ooff, SXA_VAR, "mflat"), steps = ostep != NULL;
  for (int i = 0; i < eg.nv; i++) {
    if (eg.v[i].kind == EPI_RD_COL) continue;
    const region_memref *m = &r->in[eg.v[i].rd->input];
    roff[i] = row_offset(g, m, eg.v[i].rd->map);
    rstep[i] = gpuir_epi_row_step(g->A, v, m, eg.v[i].rd->map);
    flat |= sx_mentions(roff[i], SXA_VAR, "mflat");
    steps &= rstep[i] != NULL;
  }
  sb_puts(s, "  struct EpiRow {  // a thread's row pointers\n    OutT *dst;\n");
  for (int i = 0; i < eg.nv; i++)
    if (eg.v[i].kind != EPI_RD_COL)
      sb_printf(s, "    const %s *rd%d;  // %s\n", tname(g, r->in[eg.v[i].rd->input].dt), i,
                cmt(g->A, r->in[eg.v[i].rd->input].name));
  sb_puts(s, "  };\n");
  sb_puts(s, "  static __device__ __forceinline__ void epi_row_at(const Params *p, int64_t mi, int64_t ni,\n"
             "                                                  [[maybe_unused]] int64_t bi, EpiRow &rp) {\n");
  if (flat) sb_puts(s, "    [[maybe_unused]] const int64_t i_mflat = mi;\n");
  decompose(g, "mi", v->m_axes, v->nm, "    ");
  decompose(g, "bi", v->b_axes, v->nb, "    ");
  decompose(g, "ni", v->n_axes, v->nn, "    ");
  sb_printf(s, "    rp.dst = static_cast<OutT *>(p->%s) + %s;\n", lc(g->A, om->name), sxc(g->A, ooff, false));
  for (int i = 0; i < eg.nv; i++) {
    if (eg.v[i].kind == EPI_RD_COL) continue;
    const region_memref *m = &r->in[eg.v[i].rd->input];
    sb_printf(s, "    rp.rd%d = static_cast<const %s *>(p->%s) + %s;\n", i, tname(g, m->dt), lc(g->A, m->name),
              sxc(g->A, roff[i], false));
  }
  sb_puts(s, "  }\n");
  if (steps) {
    sb_puts(s, "  static constexpr bool EPI_ROW_STEP = true;  // the GPU IR's row steps: `rows` rows on, fixed counts\n"
               "  static __device__ __forceinline__ void epi_row_step([[maybe_unused]] const Params *p, EpiRow &rp, int rows) {\n");
    sb_printf(s, "    dlc::step_ptr(rp.dst, rows * %s);\n", sxc(g->A, ostep, false));
    for (int i = 0; i < eg.nv; i++)
      if (eg.v[i].kind != EPI_RD_COL) sb_printf(s, "    dlc::step_ptr(rp.rd%d, rows * %s);\n", i, sxc(g->A, rstep[i], false));
    sb_puts(s, "  }\n");
  } else {
    sb_puts(s, "  // a row tensor's offset is not affine in the flattened M index: each row's pointers from its index\n"
               "  static constexpr bool EPI_ROW_STEP = false;\n");
  }
  /* one row */
  sb_puts(s, "  static __device__ __forceinline__ void epi_row([[maybe_unused]] const Params *p, [[maybe_unused]] int64_t mi,\n"
             "                                               int64_t ni, [[maybe_unused]] int64_t bi,\n"
             "                                               [[maybe_unused]] const EpiCols &cc, const EpiRow &rp,\n"
             "                                               const float (&acc)[");
  sb_printf(s, "%s]) {\n", EV);
  decompose(g, "mi", v->m_axes, v->nm, "    ");
  decompose(g, "bi", v->b_axes, v->nb, "    ");
  for (int i = 0; i < eg.nv; i++)
    if (eg.v[i].kind == EPI_RD_VEC) sb_printf(s, "    float rd%d[%s];\n    dlc::ldv(rd%d, rp.rd%d);\n", i, EV, i, i);
    else if (eg.v[i].kind == EPI_RD_ROW) sb_printf(s, "    const float rw%d = dlc::ld1(rp.rd%d);\n", i, i);
  sb_printf(s, "    float out[%s];\n#pragma unroll\n    for (int j = 0; j < %s; ++j) {\n", EV, EV);
  sb_puts(s, "      [[maybe_unused]] const int64_t nj = ni + j;\n");
  decompose(g, "nj", v->n_axes, v->nn, "      ");
  post_lets_c(&eg);
  sb_puts(s, "    }\n    dlc::stv(rp.dst, out);\n  }\n");
}

void group_comment(opgen *g, const char *name, const int *ax, int n) {
  sb_printf(g->s, "  // %s: (", cmt(g->A, name));
  for (int j = 0; j < n; j++) sb_printf(g->s, "%s%s", j ? ", " : "", g->r->it[ax[j]].name);
  sb_printf(g->s, "), extent %s\n", sx_str(g->A, group_extent(g, ax, n)));
}

/* The M, N and K groups as comments (and the batch group's, with `batch`)
 * and the Op's extent_m/n/k. */
void group_extents(opgen *g, const gpu_kernel *k, bool batch) {
  group_comment(g, "M", k->v.m_axes, k->v.nm);
  group_comment(g, "N", k->v.n_axes, k->v.nn);
  group_comment(g, "K", k->v.k_axes, k->v.nk);
  if (batch) group_comment(g, "batch", k->v.b_axes, k->v.nb);
  sb_printf(g->s, "  static __device__ __forceinline__ int64_t extent_m(const Params *p) { return %s; }\n",
            sxc(g->A, group_extent(g, k->v.m_axes, k->v.nm), false));
  sb_printf(g->s, "  static __device__ __forceinline__ int64_t extent_n(const Params *p) { return %s; }\n",
            sxc(g->A, group_extent(g, k->v.n_axes, k->v.nn), false));
  sb_printf(g->s, "  static __device__ __forceinline__ int64_t extent_k(const Params *p) { return %s; }\n",
            sxc(g->A, group_extent(g, k->v.k_axes, k->v.nk), false));
}

/* ---- the sm80 contraction's kernel, rendered from the GPU IR ------------------------ */

const char *r_side(const gpu_stmt *st) { return st->side == GSIDE_B ? "dlc::OPB" : "dlc::OPA"; }

/* A statement's text as a comment of the Op, the operand dtype spelled T
 * ("mma.sync.m16n8k16.row.col.f32.T"): the Op is one template over the
 * dtypes. */
const char *r_text(sm80_render *r, const char *t) {
  const char *dt = dtype_name(r->k->T);
  size_t n = strlen(dt);
  strbuf b = {0};
  for (const char *q = t; *q;) {
    if (strncmp(q, dt, n) == 0) sb_puts(&b, "T"), q += n;
    else sb_printf(&b, "%c", *q++);
  }
  return cmt(r->A, sb_take_arena(&b, r->A));
}

/* One statement's line: its code, then its kind and what it moves (a
 * barrier's why, the tokens a wait or commit covers). */
void r_line(sm80_render *r, const gpu_stmt *st, const char *code) {
  const char *guard =
      st->min_vec > r->loop_vec ? arena_printf(r->A, "if constexpr (VEC >= %d) ", st->min_vec) : "";
  const char *what = st->what;
  if (st->k == GS_BARRIER) what = st->detail;
  else if ((st->k == GS_WAIT || st->k == GS_COMMIT) && st->nin)
    what = st->nin > 1 ? arena_printf(r->A, "%s, %s", gpuir_tok_name(r->k, st->in[0]), gpuir_tok_name(r->k, st->in[1]))
                       : gpuir_tok_name(r->k, st->in[0]);
  else if (st->k == GS_WAIT) what = "every group";
  sb_printf(r->s, "%s%s%s  // %s %s\n", r->ind, guard, code, gpuir_stmt_name(st->k), r_text(r, what));
}

void r_indent(sm80_render *r, int d) {
  size_t n = strlen(r->ind);
  r->ind = d > 0 ? arena_printf(r->A, "%s  ", r->ind) : arena_printf(r->A, "%.*s", (int)(n - 2), r->ind);
}

void r_tile_coord(sm80_render *r, const gpu_stmt *st) { r_line(r, st, "c.tile_coord(p);"); }
void r_alloc_shared(sm80_render *r, const gpu_stmt *st) {
  r_line(r, st, arena_printf(r->A, "c.template alloc<%s>();", r_side(st)));
}
void r_acc_zero(sm80_render *r, const gpu_stmt *st) { r_line(r, st, "c.acc_zero();"); }
void r_barrier(sm80_render *r, const gpu_stmt *st) { r_line(r, st, "__syncthreads();"); }
void r_commit(sm80_render *r, const gpu_stmt *st) { r_line(r, st, "dlc::cp_async_commit();"); }
/* The prologue of the steady loop with fragments a tile ahead opens with
 * its wait: for its widths, when the loop runs (verify_sm80_render). */
void r_wait(sm80_render *r, const gpu_stmt *st) {
  if (st->ahead && !r->loop) {
    sb_printf(r->s, "%sif constexpr (VEC >= %d) {  // the next loop's first tile: k step 0's fragments a tile ahead\n",
              r->ind, st->min_vec);
    r_indent(r, 1);
    sb_printf(r->s, "%sif (c.kt + %d < c.KTF) {  // when the loop runs\n", r->ind, r->S - 1);
    r_indent(r, 1);
    r->loop_vec = st->min_vec, r->ahead_open = true;
  }
  r_line(r, st, arena_printf(r->A, "dlc::cp_async_wait<%d>();", st->lo));
}
/* The output's epilogue pairs: the full-width one under the tile test at
 * column n0 (the contraction's tile, attention's 0), else the checked one. */
void r_epilogue_pair(sm80_render *r, const gpu_stmt *st, const char *n0) {
  if (st->full) {
    sb_printf(r->s, "%sif (Self::epi_vec_ok(p, %s)) {  // Epilogue %s: the full-width pair\n", r->ind, n0,
              r_text(r, st->what));
    r->full_open = true;
  } else if (r->full_open) {
    sb_printf(r->s, "%s} else {  // Epilogue %s: the bounds-checked pair\n", r->ind, r_text(r, st->what));
  } else {
    sb_printf(r->s, "%s{  // Epilogue %s\n", r->ind, r_text(r, st->what));
  }
  r_indent(r, 1);
}
void r_st_global(sm80_render *r, const gpu_stmt *st) {
  const gpu_stmt *prev = st - 1;
  if (r->reduce) {
    r_line(r, st, "c.store(p, i, a4);");
    r_indent(r, -1);
    sb_printf(r->s, "%s}\n", r->ind);
    return;
  }
  if (prev->k != GS_EPILOGUE) {  /* split-K: the staged partial, no epilogue */
    r_line(r, st, "c.store_partial(p, stage);");
    return;
  }
  r_line(r, st, st->full ? "c.store_full(p, stage);" : "c.store_checked(p, stage);");
  if (st->full) {
    r_indent(r, -1);  /* the else of the other pair follows */
    return;
  }
  r_indent(r, -1);
  sb_printf(r->s, "%s}\n", r->ind);
}

/* The statements of k from `from` on, one after the other through `table`,
 * then the function's closing brace. */
void render_stmts(arena *A, render_log *log, strbuf *s, const gpu_kernel *k, int from, bool reduce,
                  const sm80_render_fn *table) {
  sm80_render r = {A, s, k, k->plan.stages, "    ", GLOOP_NONE, 0, 0, false, reduce, 0, false, log};
  for (int i = from; i < k->nst; i++) {
    /* gpuir_verify (verify_sm80_render, verify_splitk_render, verify_att_render,
     * verify_sm90a_att_consumers, verify_sm90a_consumers) admits only what renders */
    DLC_ASSERT(k->st[i].k >= 0 && k->st[i].k < GS__COUNT && table[k->st[i].k]);
    render_mark_stmt(log, k, &k->st[i]);
    table[k->st[i].k](&r, &k->st[i]);
  }
  DLC_ASSERT(r.loop == GLOOP_NONE && r.group == 0 && !r.ahead_open && strlen(r.ind) == 4);
  sb_puts(s, "  }\n");
}

/* The Op's kernel<VEC>(p): its CTA state c, a dlc::<cta><Self, VEC>
 * (templates/<header>), then the statements of k through `table`. */
void render_kernel(arena *A, render_log *log, strbuf *s, const gpu_kernel *k, const char *sname, const char *header,
                   const char *cta, const sm80_render_fn *table) {
  sb_printf(s, "  // kernel<VEC> from the GPU IR (--dump=gpu): a line a statement on the CTA's state c (%s, %s)\n"
               "  template <int VEC>\n"
               "  static __device__ __forceinline__ void kernel(const Params *p) {\n"
               "    using Self = %s;\n"
               "    using C = dlc::%s<Self, VEC>;\n"
               "    C c;\n",
            header, cta, sname, cta);
  render_stmts(A, log, s, k, 0, false, table);
}

/* and the kernel, the CTA's setup and roles (below, with the attention's) */

/* The mask tests of a tile from the guard's corners: `live` returns false
 * when a mask removes every element of the tile, otherwise (`full`) it
 * returns false unless every mask keeps every element. */

/* ---- sm80 attention's kernel, rendered from the GPU IR ---------------------------------- */

/* ---- the sm90a attention consumers, rendered from the GPU IR ---------------------------- */

void h_barrier(sm80_render *r, const gpu_stmt *st) {
  static const char *const CODE[GBAR__COUNT] = {
      [GBAR_CTA] = "__syncthreads();",         [GBAR_FIRST_TURN] = "c.first_turn();", [GBAR_TURN] = "c.turn();",
      [GBAR_HAND_OFF] = "c.hand_off();",       [GBAR_LAST_TURN] = "c.last_turn();",
      [GBAR_CONSUMERS] = "c.consumers_sync();",
  };
  r_line(r, st, CODE[st->bar]);
}

/* The sm90a Op's kernel: the CTA's setup and its roles, one call a
 * statement on the CTA's state c (templates/sm90a_contraction.cuh,
 * Sm90aCta, or sm90a_attention.cuh, Sm90aAttCta), commented with its kind:
 * the tile's coordinates, the shared tiles, the barriers' init (their
 * arrival counts the statements'), the CTA's barrier; the producer's role
 * under c.producer(), its setmaxnreg (the statement's budget) and its loop,
 * Op::produce (produce_fn, att_produce_fn); the consumers' setmaxnreg, the
 * contraction's accumulators' zero and descriptors or the attention
 * consumers' state, then their loop and epilogue, Op::consume and
 * Op::store_tile (consume_fn and store_tile_fn, or att_consume_fn).
 * verify_sm90a_setup admits only the lists written here. */
static void s_mbar_init(sm80_render *r, const gpu_stmt *st) {
  static const char *const RING[GMBAR__COUNT] = {[GMBAR_FULL] = "dlc::MBAR_FULL", [GMBAR_EMPTY] = "dlc::MBAR_EMPTY",
                                                 [GMBAR_Q] = "dlc::MBAR_Q"};
  r_line(r, st, arena_printf(r->A, "c.template mbar_init<%s>(%d);", RING[st->mbar], st->lo));
}
static void s_role(sm80_render *r, const gpu_stmt *st) {
  if (st->role == GROLE_PRODUCER) {
    sb_printf(r->s, "%sif (c.producer()) {  // Role producer: %s\n", r->ind, r_text(r, st->detail));
    r_indent(r, 1);
  } else {
    sb_printf(r->s, "%s// Role consumers: %s\n", r->ind, r_text(r, st->detail));
  }
}
static void s_setmaxnreg(sm80_render *r, const gpu_stmt *st) {
  bool inc = st->role == GROLE_CONSUMERS;
  r_line(r, st, arena_printf(r->A, "dlc::setmaxnreg_%s<%d>();", inc ? "inc" : "dec", st->lo));
}
static void s_frag_setup(sm80_render *r, const gpu_stmt *st) {
  if (st->side == GSIDE_NONE) { /* the attention consumers' state: their descriptors */
    r_line(r, st, "auto cs = c.consumers();");
    render_mark_call(r->log, r->k, RENDER_FN_CONSUME);
    sb_printf(r->s, "%sconsume(p, cs, c.qfull, c.order);  // their key tiles and epilogue (consume, above)\n", r->ind);
    return;
  }
  r_line(r, st, arena_printf(r->A, "c.template frag_setup<%s>();", r_side(st)));
  if (st->side != GSIDE_B) return;
  render_mark_call(r->log, r->k, RENDER_FN_CONSUME);
  render_mark_call(r->log, r->k, RENDER_FN_STORE_TILE);
  sb_printf(r->s,
            "%sconsume(c.acc, c.ring_state(), c.KT);  // their k-loop (consume, above)\n"
            "%sstore_tile(p, c.acc, c.tile());  // their epilogue (store_tile, above)\n",
            r->ind, r->ind);
}

static const sm80_render_fn SM90A_SETUP_RENDER[GS__COUNT] = {
    [GS_TILE_COORD] = r_tile_coord, [GS_ALLOC_SHARED] = r_alloc_shared, [GS_MBAR_INIT] = s_mbar_init,
    [GS_BARRIER] = h_barrier,       [GS_ROLE] = s_role,              [GS_SETMAXNREG] = s_setmaxnreg,
    [GS_ACC_ZERO] = r_acc_zero,     [GS_FRAG_SETUP] = s_frag_setup,
};

void sm90a_kernel_fn(arena *A, render_log *log, strbuf *s, const gpu_kernel *k, const char *sname, const sm90a_cta *cta) {
  sb_printf(s,
            "  // The kernel, rendered from the GPU IR (dlcgen --dump=gpu): the CTA's setup and its roles, one line\n"
            "  // a statement, each a primitive of the CTA's state c (templates/%s, %s)\n"
            "  static __device__ __forceinline__ void kernel(const %s) {\n"
            "    using Self = %s;\n"
            "%s"
            "    dlc::%s<Self> c;\n",
            cta->header, cta->cta, cta->tmaps ? "TParams *tp" : "Params *p", sname,
            cta->tmaps ? "    const Params *p = &tp->p;\n" : "", cta->cta);
  /* the setup and the producer's role, then the consumers' role and its
   * own statements: the roles' loops are the functions above */
  sm80_render r = {A, s, k, k->plan.stages, "    ", GLOOP_NONE, 0, 0, false, false, 0, false, log};
  int role = 0;
  while (role < k->nst && !(k->st[role].k == GS_ROLE && k->st[role].role == GROLE_CONSUMERS)) role++;
  for (int i = 0; i < k->nst; i++) {
    const gpu_stmt *st = &k->st[i];
    if (st->k == GS_ROLE && st->role == GROLE_PRODUCER) {
      /* the producer's setmaxnreg and loop (Op::produce), then the role is done */
      render_mark_stmt(log, k, st), render_mark_stmt(log, k, &k->st[i + 1]);
      s_role(&r, st), s_setmaxnreg(&r, &k->st[i + 1]);
      render_mark_call(log, k, RENDER_FN_PRODUCE);
      sb_printf(s, "%s%s  // its loop (produce, above)\n%sreturn;\n", r.ind, cta->produce, r.ind);
      r_indent(&r, -1);
      sb_printf(s, "%s}\n", r.ind);
      i = role - 1;
      continue;
    }
    /* verify_sm90a_setup admits only what renders */
    DLC_ASSERT(SM90A_SETUP_RENDER[st->k]);
    render_mark_stmt(log, k, st);
    SM90A_SETUP_RENDER[st->k](&r, st);
    if (i > role && st->k == GS_FRAG_SETUP && st->side != GSIDE_A) break; /* the consumers' last */
  }
  DLC_ASSERT(strlen(r.ind) == 4); /* the body's indentation again */
  sb_puts(s, "  }\n");
}

/* ---- the row skeleton's kernel, rendered from the GPU IR --------------------------------- */

bool is_chain(const emit_op *eo) { return eo->ninst > 0 && eo->inst[0].k->next; }

/* Whether some instance of the op runs a split-K plan (a second kernel). */
bool has_split(const emit_op *eo) {
  for (int i = 0; i < eo->ninst; i++)
    if (eo->inst[i].k->reduce) return true;
  return false;
}

/* Whether the op has dlc_<op>_ws and dlc_<op>_workspace_size. */

/* A split-K instance's second kernel. */
const char *reduce_name(arena *A, const emit_op *eo, const emit_instance *in) {
  return arena_printf(A, "dlc_%s_%s_r", eo->op->name, cid(A, in->tag));
}

/* A chain's kernel j carries _k<j> in its names. */
const char *kernel_name_k(arena *A, const emit_op *eo, const emit_instance *in, const gpu_kernel *k, int vec) {
  if (!is_chain(eo)) return arena_printf(A, "dlc_%s_%s_v%d", eo->op->name, cid(A, in->tag), vec);
  return arena_printf(A, "dlc_%s_%s_k%d_v%d", eo->op->name, cid(A, in->tag), k->chain_index, vec);
}

/* Whether an sm90a-row kernel takes tensor maps (dlc__tp_<op>: the
 * tma_wgmma contraction's A and B, the wgmma_softmax attention's Q, K and
 * V), or the op's parameters alone (the gathering producer): its
 * skeleton's launch constants (algo.def) say. */
bool tmaps90(const gpu_kernel *k) { return algo_launch_of(k->algo)->params == PARAMS_TMAPS; }

/* An instance's kernel on the sm90a row (gpu_kernel.sm90a). */
const char *kernel_name_90(arena *A, const emit_op *eo, const emit_instance *in) {
  return arena_printf(A, "dlc_%s_%s_sm90a", eo->op->name, cid(A, in->tag));
}

const char *kernel_name_given(arena *A, const emit_op *eo, const emit_instance *in, int vec) {
  return arena_printf(A, "dlc_%s_%s_v%d", eo->op->name, cid(A, in->tag), vec);
}

int chain_vals(const emit_op *eo, const emit_instance *in, chain_val *out, int cap) {
  if (!is_chain(eo)) return 0;
  int n = ws_values(in->k, out, cap);
  return n < cap ? n : cap; /* the arena pass verified n <= WS_MAX_VALUES */
}

/* __launch_bounds__'s minimum blocks per SM: the skeleton's when its
 * launch constants fix it (algo.def), else the plan's estimate of
 * resident CTAs, but never so many that ptxas would have to cap a thread
 * below 255 registers (65536 / (threads x 256) blocks): the estimate is
 * sm80's, and sm_100 and sm_120 code takes more registers for the same
 * tile (a 64x64-tile kernel capped at 168 by 3 blocks spilled there).  A
 * plan whose register budget holds on every arch (regs_every_arch: the row
 * skeleton's, measured) may ask for as many blocks as that budget allows. */
static int min_blocks(const gpu_kernel *k) {
  if (algo_launch_of(k->algo)->min_blocks > 0) return algo_launch_of(k->algo)->min_blocks;
  int est = k->plan.ctas_per_sm > 0 ? k->plan.ctas_per_sm : 1;
  int cap = 65536 / (k->threads * (k->plan.regs_every_arch ? k->plan.regs_per_thread : 256));
  if (cap < 1) cap = 1;
  return est < cap ? est : cap;
}

/* A kernel's __global__ function fn, from its skeleton's launch constants
 * (algo.def): its bounds, its parameter block, the guard around its body
 * and the call of its code, the Op `opname` of op `op` over dtype T (and
 * chunk width vec, for the entries that take one). */
static void kernel_entry(strbuf *s, const gpu_kernel *k, const char *fn, const char *op, const char *opname, dtype T,
                         int vec) {
  const algo_launch *l = algo_launch_of(k->algo);
  const char *pv = l->params == PARAMS_TMAPS ? "tp" : "p";
  /* one line, but for a guard around the body */
  sb_printf(s, "__global__ void __launch_bounds__(%d, %d) %s(const %sdlc__%s_%s %s) {%s", k->threads, min_blocks(k), fn,
            l->params == PARAMS_VALUE ? "" : "__grid_constant__ ", pv, op, pv, l->guard ? "\n" : " ");
  if (l->guard) sb_printf(s, "#if defined(%s)\n  ", l->guard);
  switch (l->entry) {
  case ENTRY_OP_KERNEL: sb_printf(s, "dlc_%s::%s<%s>::kernel<%d>(&p);", op, opname, ctype(T), vec); break;
  case ENTRY_OP_REDUCE: sb_printf(s, "dlc_%s::%s<%s>::reduce_kernel(&p);", op, opname, ctype(T)); break;
  case ENTRY_SKELETON_VEC:
    sb_printf(s, "dlc::%s<dlc_%s::%s<%s>, %d>(&p);", algo_template(k->algo), op, opname, ctype(T), vec);
    break;
  case ENTRY_SKELETON: sb_printf(s, "dlc::%s<dlc_%s::%s<%s>>(&%s);", algo_template(k->algo), op, opname, ctype(T), pv); break;
  }
  sb_puts(s, l->guard ? "\n#endif\n}\n" : " }\n");
}

/* W1709 when the op's epilogue of the most operand paths has more than
 * EMIT_EPI_LINEAR_PATHS (epi_paths_note). */
static void epi_paths_warn(const emit_ctx *c, const emit_op *eo) {
  const render_log *log = c->log;
  if (log->epi_paths <= EMIT_EPI_LINEAR_PATHS || !c->dl) return;
  const char *split =
      log->epi_split
          ? arena_printf(c->A,
                         "Split the chain into two ops at '%s': the first yields it (a graph output), the second "
                         "reads it and applies the rest; or use functions the lowering spells as one instruction each "
                         "(silu, sigmoid, tanh, gelu_tanh: docs/codegen.md, \"Lowered lets\").",
                         log->epi_split)
          : NULL;
  diag_report(c->dl, D_EPI_COMPILE_TIME, arena_printf(c->A, "cu[%s]", log->epi_region), split,
              "op %s: the epilogue of region %s reaches its inputs along %.3g operand paths; nvcc's time grows "
              "with their number, not with the chain's length, and past %.0f it stops being linear (a chain of "
              "functions that each read their input twice doubles them per function)",
              eo->op->name, log->epi_region, log->epi_paths, EMIT_EPI_LINEAR_PATHS);
}

void split_shared_open(const op_split *sp, const char *doc, const char *plan_names, const char *out_t, const char *op) {
  sb_printf(sp->shared,
            "%stemplate <class T_, template <class> class P_>\nstruct %s : P_<T_> {\n  using Plan = P_<T_>;\n%s"
            "  using T = T_;\n  using OutT = %s;\n  using Params = dlc__p_%s;\n",
            doc, sp->shared_name, plan_names, out_t, op);
}

const char *split_self(arena *A, const op_split *sp) { return arena_printf(A, "%s<T_, %s>", sp->shared_name, sp->plan_name); }

void split_plan_close(arena *A, const op_split *sp) {
  sb_printf(sp->plan, "};\ntemplate <class T_> using %s = %s;\n\n", sp->name, split_self(A, sp));
}

/* One Op of an op's .cu before it is rendered: an instance with one of
 * its kernels (in.k), the Op's name (before a dtype clash renames it) and
 * what its heading says after its tags; then what render_ops made: its
 * text (the Op's struct, or split: the plan's struct and the Op's alias)
 * and, split, its shared template's name and text. */
typedef struct op_item {
  emit_instance in;
  const char *name, *tail;
  char *text, *shared;
  const char *shared_name;
} op_item;

/* The full-width epilogue's width the op's kernels on k's skeleton at k's
 * place in the chain agree on (0: none, or they differ): what a shared
 * template holds for a kernel without one (op_split.epi_vec). */
static int shared_epi_vec(const op_item *it, int n, const gpu_kernel *k) {
  int ev = 0;
  for (int j = 0; j < n; j++) {
    const gpu_kernel *o = it[j].in.k;
    if (o->algo != k->algo || o->chain_index != k->chain_index || !o->epi_vec) continue;
    if (ev && ev != o->epi_vec) return 0;
    ev = o->epi_vec;
  }
  return ev;
}

/* Renders item i (after items 0 .. i-1) as `name`, split with shared
 * template `shared_name`. */
static void render_item(emit_ctx *c, const emit_op *eo, op_item *it, int n, int i, const char *shared_name) {
  arena *A = c->A;
  op_item *o = &it[i];
  const skel_ops *sk = skel_of(o->in.k->algo);
  strbuf t = {0}, sh = {0};
  if (sk->render_split) {
    const char *plan_name = arena_printf(A, "Plan%s", o->name + 2);
    op_split sp = {&sh, &t, o->name, shared_name, plan_name, o->in.k->epi_vec ? 0 : shared_epi_vec(it, n, o->in.k)};
    sk->render_split(c, &sp, eo, &o->in);
  } else {
    sk->render(c, &t, eo, &o->in, o->name);
  }
  o->text = arena_strdup(A, sb_str(&t));
  o->shared = sk->render_split ? arena_strdup(A, sb_str(&sh)) : NULL;
  o->shared_name = sk->render_split ? shared_name : NULL;
  sb_free(&t), sb_free(&sh);
  /* the Op as the template reads it: the plan's declarations first (their
   * values), then the shared template's (emit_verify_cu) */
  render_log_op(c->log, o->in.k, o->name, o->shared ? arena_printf(A, "%s%s", o->text, o->shared) : o->text);
}

/* Renders the n Ops: an instance whose text differs from an earlier one of
 * the same name (its plan, say) is renamed with its dtype; a shared template
 * whose text differs from an earlier one of the same name is numbered. */
static void render_ops(emit_ctx *c, const emit_op *eo, op_item *it, int n) {
  arena *A = c->A;
  for (int i = 0; i < n; i++) {
    const gpu_kernel *k = it[i].in.k;
    const char *base = arena_printf(A, "Op_%s%s", algo_name(k->algo),
                                    k->next || k->chain_index ? arena_printf(A, "_k%d", k->chain_index) : "");
    for (int pass = 0; pass < 2; pass++) {
      for (int num = 1;; num++) {
        const char *shn = num == 1 ? base : arena_printf(A, "%s_%d", base, num);
        render_item(c, eo, it, n, i, shn);
        bool clash = false;
        for (int j = 0; j < i && it[i].shared; j++)
          clash |= it[j].shared && strcmp(it[j].shared_name, shn) == 0 && strcmp(it[j].shared, it[i].shared) != 0;
        if (!clash) break;
      }
      bool clash = false;
      for (int j = 0; j < i; j++) clash |= strcmp(it[j].name, it[i].name) == 0 && strcmp(it[j].text, it[i].text) != 0;
      if (!clash) break;
      it[i].name = arena_printf(A, "%s_%s", it[i].name, dtype_name(it[i].in.dt));
    }
  }
}

/* The tags of the items (from `from` on) whose Op is `name` (shared: whose
 * shared template is; an instance's kernels of one template are one
 * item, its chain's and its sm90a row's having templates of their own). */
static const char *op_tags(arena *A, const op_item *it, int n, int from, const char *name, bool shared) {
  const char *tags = "";
  for (int j = from; j < n; j++) {
    const char *nj = shared ? it[j].shared_name : it[j].name;
    if (nj && strcmp(nj, name) == 0) tags = arena_printf(A, "%s%s%s", tags, *tags ? ", " : "", cmt(A, it[j].in.tag));
  }
  return tags;
}

/* Writes each Op once, a shared template before the first Op of it. */
static void write_ops(arena *A, strbuf *s, const emit_op *eo, const op_item *it, int n) {
  for (int i = 0; i < n; i++) {
    bool seen = false, shared_seen = !it[i].shared;
    for (int j = 0; j < i; j++) {
      seen |= strcmp(it[j].name, it[i].name) == 0;
      shared_seen |= it[j].shared && it[i].shared && strcmp(it[j].shared_name, it[i].shared_name) == 0;
    }
    if (!shared_seen) {
      sb_printf(s, "// ---- %s %s: the Op template their plans share, over T_ and a plan's struct (region %s)\n",
                eo->op->name, op_tags(A, it, n, i, it[i].shared_name, true), cmt(A, it[i].in.k->r->name));
      sb_puts(s, it[i].shared);
    }
    if (seen) continue;
    sb_printf(s, "// ---- %s %s%s\n", eo->op->name, op_tags(A, it, n, i, it[i].name, false), it[i].tail);
    sb_puts(s, it[i].text);
  }
}

/* A chain op's plan without a workspace (emit_op.given): one kernel an
 * instance, rendered as emit_op_cu's; nameg[i]: instance i's Op. */
static void given_ops(emit_ctx *c, strbuf *s, const emit_op *eo, const char **nameg) {
  arena *A = c->A;
  op_item *it = ARENA_ARRAY(A, op_item, eo->ngiven + 1);
  for (int i = 0; i < eo->ngiven; i++) {
    const emit_instance *in = &eo->given[i];
    it[i] = (op_item){*in, arena_printf(A, "Op_%s", cid(A, strchr(in->tag, '.') + 1)),
                      arena_printf(A, ": region %s, without a workspace (the graph as given, its layout conversions not "
                                      "compiled)",
                                   cmt(A, in->k->r->name)),
                      NULL, NULL, NULL};
  }
  render_ops(c, eo, it, eo->ngiven);
  write_ops(A, s, eo, it, eo->ngiven);
  for (int i = 0; i < eo->ngiven; i++) nameg[i] = it[i].name;
}

/* The given instances' kernels (nameg: their Ops), or with nameg NULL
 * their lines of dlc__fns_<op>. */
static void given_entries(arena *A, strbuf *s, const emit_op *eo, const char *const *nameg) {
  for (int i = 0; i < eo->ngiven; i++)
    for (int v = 0; v < eo->given[i].k->nvec; v++) {
      const gpu_kernel *k = eo->given[i].k;
      const char *kn = kernel_name_given(A, eo, &eo->given[i], k->vecs[v]);
      if (nameg) kernel_entry(s, k, kn, eo->op->name, nameg[i], k->T, k->vecs[v]);
      else sb_printf(s, "    (const void *)%s,\n", kn);
    }
}

char *emit_op_cu(emit_ctx *c, const emit_op *eo) {
  arena *A = c->A;
  strbuf s = {0};
  /* a log of its own: what the op's renderers render (emit_verify_cu) */
  c->log = ARENA_NEW(A, render_log);
  *c->log = (render_log){A, 0, 0, NULL, RENDER_FN_KERNEL, 0, 0, NULL, 0, NULL, NULL};
  if (c->manifest_path) {
    sb_printf(&s, "// Generated by dlcgen %s from manifest entry ops[%d] \"%s\" (graph: %s).\n", DLC_VERSION,
              eo->index, eo->op->name, cmt(A, eo->op->graph_ref ? eo->op->graph_ref : eo->op->graph_where));
    sb_printf(&s, "// Regenerate with: dlcgen --manifest %s --out <dir>\n", cmt(A, c->manifest_path));
  } else {
    sb_printf(&s, "// Generated by dlcgen %s from graph %s (--graph ... --dump=cu).\n", DLC_VERSION,
              cmt(A, eo->op->graph_where));
  }
  /* the skeletons the instances use, in algo.def order */
  bool used[ALGO__COUNT] = {0};
  for (int i = 0; i < eo->ninst; i++)
    for (const gpu_kernel *k = eo->inst[i].k; k; k = k->next) {
      used[k->algo] = true;
      if (k->sm90a) used[k->sm90a->algo] = true;
    }
  const char *tpls = "";
  for (int a = 0; a < ALGO__COUNT; a++)
    if (used[a]) tpls = arena_printf(A, "%s%s%s.cuh", tpls, *tpls ? " and " : "templates/", algo_template((dlc_algo)a));
  sb_printf(&s, "// Do not edit: the kernels below are the IR of that entry laid onto %s.\n", tpls);
  sb_puts(&s, "// Built for:");
  for (int i = 0; i < c->m->narchs; i++) sb_printf(&s, " %s", c->m->archs[i]);
  sb_puts(&s, " (SASS only).\n\n#include \"dlc_params.h\"\n");
  for (int a = 0; a < ALGO__COUNT; a++)
    if (used[a]) sb_printf(&s, "#include \"%s.cuh\"\n", algo_template((dlc_algo)a));
  sb_puts(&s, "\n");
  sb_printf(&s, "namespace dlc_%s {\n\n", eo->op->name);
  /* One Op template per variant, over the operand dtype: the instances of a
   * variant whose Op text is the same, with their dtype spelled T, share
   * it.  An instance whose text differs (its plan, say) gets its own.  One
   * Op per (instance, kernel of the chain): nk Ops an instance; then the
   * sm90a row's kernels (gpu_kernel.sm90a of an instance). */
  int nk = 0;
  for (const gpu_kernel *k = eo->ninst ? eo->inst[0].k : NULL; k; k = k->next) nk++;
  int nops = eo->ninst * nk, n90 = 0;
  op_item *it = ARENA_ARRAY(A, op_item, nops + eo->ninst + 1);
  int *at90 = ARENA_ARRAY(A, int, eo->ninst + 1); /* instance i's sm90a Op: it[at90[i]], or -1 */
  for (int i = 0; i < nops; i++) {
    const emit_instance *in0 = &eo->inst[i / nk];
    const gpu_kernel *k = in0->k;
    for (int j = 0; j < i % nk; j++) k = k->next;
    emit_instance in = *in0;
    in.k = k;
    const char *dot = strchr(in.tag, '.');
    const char *name = dot ? arena_printf(A, "Op_%s", cid(A, dot + 1)) : "Op";
    if (nk > 1) name = arena_printf(A, "%s_k%d", name, i % nk);
    const char *what = skel_shape_of(k) == SKEL_ATTENTION
                           ? arena_printf(A, "regions %s and %s", cmt(A, k->r->name), cmt(A, k->v2.r->name))
                           : arena_printf(A, "region %s", cmt(A, k->r->name));
    if (nk > 1) what = arena_printf(A, "kernel %d of %d, %s", i % nk, nk, what);
    it[i] = (op_item){in, name, arena_printf(A, ": %s", what), NULL, NULL, NULL};
  }
  for (int i = 0; i < eo->ninst; i++) {
    at90[i] = -1;
    if (nk != 1 || !eo->inst[i].k->sm90a) continue;
    emit_instance in = eo->inst[i];
    in.k = eo->inst[i].k->sm90a;
    const char *dot = strchr(in.tag, '.');
    at90[i] = nops + n90++;
    it[at90[i]] = (op_item){in, dot ? arena_printf(A, "Op_%s_sm90a", cid(A, dot + 1)) : "Op_sm90a",
                            arena_printf(A, " on sm90a: region %s", cmt(A, in.k->r->name)), NULL, NULL, NULL};
  }
  render_ops(c, eo, it, nops + n90);
  write_ops(A, &s, eo, it, nops + n90);
  const char **nameg = ARENA_ARRAY(A, const char *, eo->ngiven + 1);
  given_ops(c, &s, eo, nameg);
  sb_printf(&s, "}  // namespace dlc_%s\n\nextern \"C\" {\n", eo->op->name);
  for (int i = 0; i < nops; i++) {
    const emit_instance *in = &eo->inst[i / nk];
    const gpu_kernel *k = it[i].in.k;
    for (int v = 0; v < k->nvec; v++)
      kernel_entry(&s, k, kernel_name_k(A, eo, in, k, k->vecs[v]), eo->op->name, it[i].name, k->T, k->vecs[v]);
    /* split-K: the second kernel, on the same Op */
    if (k->reduce) kernel_entry(&s, k->reduce, reduce_name(A, eo, in), eo->op->name, it[i].name, k->T, 0);
  }
  /* the sm90a kernels: their bodies exist for sm_90a alone (wgmma, TMA and
   * setmaxnreg assemble nowhere else: their skeletons' guard); the
   * dispatch runs them only there */
  for (int i = 0; i < eo->ninst; i++)
    if (at90[i] >= 0)
      kernel_entry(&s, eo->inst[i].k->sm90a, kernel_name_90(A, eo, &eo->inst[i]), eo->op->name, it[at90[i]].name,
                   eo->inst[i].k->sm90a->T, 0);
  given_entries(A, &s, eo, nameg);
  sb_printf(&s, "\n// Kernel handles for the CUDA backend, in the order of the dispatch table.\n");
  sb_printf(&s, "extern const void *const dlc__fns_%s[] = {\n", eo->op->name);
  for (int i = 0; i < nops; i++) {
    const gpu_kernel *k = it[i].in.k;
    for (int v = 0; v < k->nvec; v++)
      sb_printf(&s, "    (const void *)%s,\n", kernel_name_k(A, eo, &eo->inst[i / nk], k, k->vecs[v]));
    if (k->reduce) sb_printf(&s, "    (const void *)%s,\n", reduce_name(A, eo, &eo->inst[i / nk]));
  }
  for (int i = 0; i < eo->ninst; i++)
    if (at90[i] >= 0) sb_printf(&s, "    (const void *)%s,\n", kernel_name_90(A, eo, &eo->inst[i]));
  given_entries(A, &s, eo, NULL);
  sb_puts(&s, "};\n}  // extern \"C\"\n");
  epi_paths_warn(c, eo);
  return sb_take(&s);
}
