/* Symbolic integer expressions (see sx.h).
 *
 * The canonical form is a polynomial: a constant plus integer multiples of
 * monomials, each monomial a sorted product of base atoms.  Products of
 * linear forms distribute, floor division by a constant pulls out every
 * multiple of the divisor, and nested floors merge, so the usual
 * reshape/permute/pad compositions cancel to small expressions. */
#include "sx.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "strbuf.h"

/* ---- atoms ------------------------------------------------------------ */

static int atom_cmp(const sx_atom *a, const sx_atom *b);

static int i64cmp(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

static int atom_cmp(const sx_atom *a, const sx_atom *b) {
  if (a == b) return 0;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  int c;
  switch (a->kind) {
  case SXA_PARAM:
  case SXA_VAR:
    return strcmp(a->name, b->name);
  case SXA_FLOOR:
    if ((c = i64cmp(a->den, b->den))) return c;
    return sx_cmp(a->a, b->a);
  case SXA_PROD:
    if (a->nf != b->nf) return a->nf < b->nf ? -1 : 1;
    for (int i = 0; i < a->nf; i++)
      if ((c = atom_cmp(a->f[i], b->f[i]))) return c;
    return 0;
  case SXA_FDIVSYM:
  case SXA_MODSYM:
    if ((c = sx_cmp(a->a, b->a))) return c;
    return sx_cmp(a->b, b->b);
  case SXA_OVERFLOW:
    return 0;
  }
  return 0;
}

int sx_cmp(const sx *x, const sx *y) {
  if (x == y) return 0;
  int n = x->nterms < y->nterms ? x->nterms : y->nterms;
  for (int i = 0; i < n; i++) {
    int c = atom_cmp(x->terms[i].atom, y->terms[i].atom);
    if (c) return c;
    if ((c = i64cmp(x->terms[i].coef, y->terms[i].coef))) return c;
  }
  if (x->nterms != y->nterms) return x->nterms < y->nterms ? -1 : 1;
  return i64cmp(x->c0, y->c0);
}

bool sx_equal(const sx *x, const sx *y) { return sx_cmp(x, y) == 0; }

static const sx_atom overflow_atom = {.kind = SXA_OVERFLOW};

/* ---- linear-form builder ------------------------------------------------ */

typedef struct builder {
  arena *A;
  int64_t c0;
  sx_term *t;
  int n, cap;
  bool ovf;
} builder;

static void b_init(builder *b, arena *A) { memset(b, 0, sizeof *b), b->A = A; }

static void b_const(builder *b, int64_t c) {
  if (__builtin_add_overflow(b->c0, c, &b->c0)) b->ovf = true;
}

static void b_term(builder *b, int64_t coef, const sx_atom *atom) {
  if (coef == 0) return;
  if (atom->kind == SXA_OVERFLOW) b->ovf = true;
  if (b->n == b->cap) {
    int nc = b->cap ? b->cap * 2 : 8;
    b->t = arena_grow(b->A, b->t, (size_t)b->n, (size_t)nc, sizeof(sx_term));
    b->cap = nc;
  }
  b->t[b->n].coef = coef;
  b->t[b->n].atom = atom;
  b->n++;
}

static void b_add(builder *b, const sx *x, int64_t k) {
  int64_t c;
  if (__builtin_mul_overflow(x->c0, k, &c)) b->ovf = true;
  b_const(b, c);
  for (int i = 0; i < x->nterms; i++) {
    if (__builtin_mul_overflow(x->terms[i].coef, k, &c)) b->ovf = true;
    b_term(b, c, x->terms[i].atom);
  }
}

static int term_cmp(const void *pa, const void *pb) {
  const sx_term *a = pa, *b = pb;
  return atom_cmp(a->atom, b->atom);
}

static const sx *b_finish(builder *b) {
  sx *r = ARENA_NEW(b->A, sx);
  if (b->ovf) {
    sx_term *t = ARENA_NEW(b->A, sx_term);
    t->coef = 1;
    t->atom = &overflow_atom;
    r->terms = t;
    r->nterms = 1;
    return r;
  }
  if (b->n > 1) qsort(b->t, (size_t)b->n, sizeof(sx_term), term_cmp); /* qsort(NULL, 0) is UB */
  int m = 0;
  for (int i = 0; i < b->n; i++) {
    if (m > 0 && atom_cmp(b->t[m - 1].atom, b->t[i].atom) == 0) {
      if (__builtin_add_overflow(b->t[m - 1].coef, b->t[i].coef, &b->t[m - 1].coef)) {
        b->ovf = true;
        return b_finish(b);
      }
    } else {
      b->t[m++] = b->t[i];
    }
  }
  int k = 0; /* drop terms whose coefficients cancelled */
  for (int i = 0; i < m; i++)
    if (b->t[i].coef != 0) b->t[k++] = b->t[i];
  r->c0 = b->c0;
  r->nterms = k;
  r->terms = b->t;
  return r;
}

/* ---- constructors ------------------------------------------------------- */

const sx *sx_int(arena *A, int64_t v) {
  sx *r = ARENA_NEW(A, sx);
  r->c0 = v;
  return r;
}

static const sx *single(arena *A, int64_t coef, const sx_atom *atom) {
  builder b;
  b_init(&b, A);
  b_term(&b, coef, atom);
  return b_finish(&b);
}

static const sx *named(arena *A, sx_atom_kind k, const char *name) {
  sx_atom *at = ARENA_NEW(A, sx_atom);
  at->kind = k;
  at->name = arena_strdup(A, name);
  return single(A, 1, at);
}

const sx *sx_param(arena *A, const char *name) { return named(A, SXA_PARAM, name); }
const sx *sx_var(arena *A, const char *name) { return named(A, SXA_VAR, name); }

const sx *sx_add(arena *A, const sx *x, const sx *y) {
  builder b;
  b_init(&b, A);
  b_add(&b, x, 1);
  b_add(&b, y, 1);
  return b_finish(&b);
}

const sx *sx_sub(arena *A, const sx *x, const sx *y) {
  builder b;
  b_init(&b, A);
  b_add(&b, x, 1);
  b_add(&b, y, -1);
  return b_finish(&b);
}

const sx *sx_scale(arena *A, const sx *x, int64_t k) {
  builder b;
  b_init(&b, A);
  b_add(&b, x, k);
  return b_finish(&b);
}

const sx *sx_neg(arena *A, const sx *x) { return sx_scale(A, x, -1); }

const sx *sx_add_int(arena *A, const sx *x, int64_t v) { return sx_add(A, x, sx_int(A, v)); }

bool sx_is_one(const sx *x) {
  int64_t v;
  return sx_is_int(x, &v) && v == 1;
}

bool sx_is_int(const sx *x, int64_t *v) {
  if (x->nterms) return false;
  if (v) *v = x->c0;
  return true;
}

/* The product of two atoms as a monomial atom (factors flattened and sorted). */
static const sx_atom *atom_mul(arena *A, const sx_atom *p, const sx_atom *q) {
  int np = p->kind == SXA_PROD ? p->nf : 1, nq = q->kind == SXA_PROD ? q->nf : 1;
  const sx_atom **f = ARENA_ARRAY(A, const sx_atom *, np + nq);
  int n = 0;
  for (int i = 0; i < np; i++) f[n++] = p->kind == SXA_PROD ? p->f[i] : p;
  for (int i = 0; i < nq; i++) f[n++] = q->kind == SXA_PROD ? q->f[i] : q;
  /* insertion sort: monomials are short */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && atom_cmp(f[j - 1], f[j]) > 0; j--) {
      const sx_atom *t = f[j];
      f[j] = f[j - 1];
      f[j - 1] = t;
    }
  sx_atom *r = ARENA_NEW(A, sx_atom);
  r->kind = SXA_PROD;
  r->nf = n;
  r->f = f;
  return r;
}

const sx *sx_mul(arena *A, const sx *x, const sx *y) {
  int64_t c;
  if (sx_is_int(x, &c)) return sx_scale(A, y, c);
  if (sx_is_int(y, &c)) return sx_scale(A, x, c);
  builder b;
  b_init(&b, A);
  int64_t t;
  if (__builtin_mul_overflow(x->c0, y->c0, &t)) b.ovf = true;
  b_const(&b, t);
  for (int i = 0; i < x->nterms; i++) {
    if (__builtin_mul_overflow(x->terms[i].coef, y->c0, &t)) b.ovf = true;
    b_term(&b, t, x->terms[i].atom);
  }
  for (int j = 0; j < y->nterms; j++) {
    if (__builtin_mul_overflow(y->terms[j].coef, x->c0, &t)) b.ovf = true;
    b_term(&b, t, y->terms[j].atom);
  }
  for (int i = 0; i < x->nterms; i++)
    for (int j = 0; j < y->nterms; j++) {
      if (__builtin_mul_overflow(x->terms[i].coef, y->terms[j].coef, &t)) b.ovf = true;
      b_term(&b, t, atom_mul(A, x->terms[i].atom, y->terms[j].atom));
    }
  return b_finish(&b);
}

static int64_t fdiv(int64_t a, int64_t d) { /* d > 0 */
  int64_t q = a / d;
  if ((a % d != 0) && (a < 0)) q--;
  return q;
}

static int64_t fmod_(int64_t a, int64_t d) { return a - fdiv(a, d) * d; }

static const sx *floordiv_int(arena *A, const sx *x, int64_t d) {
  if (d < 0) return floordiv_int(A, sx_neg(A, x), -d);
  if (d == 1) return x;
  builder q, r;
  b_init(&q, A);
  b_init(&r, A);
  b_const(&q, fdiv(x->c0, d));
  b_const(&r, fmod_(x->c0, d));
  for (int i = 0; i < x->nterms; i++) {
    const sx_term *t = &x->terms[i];
    b_term(&q, fdiv(t->coef, d), t->atom);
    b_term(&r, fmod_(t->coef, d), t->atom);
  }
  const sx *rem = b_finish(&r);
  int64_t rc;
  if (sx_is_int(rem, &rc)) {
    b_const(&q, fdiv(rc, d));
    return b_finish(&q);
  }
  /* floor(floor(e/a)/d) = floor(e/(a*d)) */
  if (rem->nterms == 1 && rem->c0 == 0 && rem->terms[0].coef == 1 &&
      rem->terms[0].atom->kind == SXA_FLOOR) {
    int64_t nd;
    if (!__builtin_mul_overflow(rem->terms[0].atom->den, d, &nd)) {
      const sx *inner = floordiv_int(A, rem->terms[0].atom->a, nd);
      b_add(&q, inner, 1);
      return b_finish(&q);
    }
  }
  sx_atom *at = ARENA_NEW(A, sx_atom);
  at->kind = SXA_FLOOR;
  at->a = rem;
  at->den = d;
  b_term(&q, 1, at);
  return b_finish(&q);
}

const sx *sx_floordiv(arena *A, const sx *x, const sx *y) {
  int64_t d;
  if (sx_is_int(y, &d)) {
    if (d == 0) return single(A, 1, &overflow_atom);
    return floordiv_int(A, x, d);
  }
  if (sx_equal(x, y)) return sx_int(A, 1);
  sx_atom *at = ARENA_NEW(A, sx_atom);
  at->kind = SXA_FDIVSYM;
  at->a = x;
  at->b = y;
  return single(A, 1, at);
}

const sx *sx_mod(arena *A, const sx *x, const sx *y) {
  int64_t d;
  if (sx_is_int(y, &d)) {
    if (d == 0) return single(A, 1, &overflow_atom);
    return sx_sub(A, x, sx_scale(A, floordiv_int(A, x, d), d));
  }
  if (sx_equal(x, y)) return sx_int(A, 0);
  sx_atom *at = ARENA_NEW(A, sx_atom);
  at->kind = SXA_MODSYM;
  at->a = x;
  at->b = y;
  return single(A, 1, at);
}

const sx *sx_ceildiv_int(arena *A, const sx *x, int64_t d) {
  return sx_neg(A, floordiv_int(A, sx_neg(A, x), d));
}

/* ---- queries ------------------------------------------------------------ */

typedef bool (*atom_pred)(const sx_atom *a, const void *ctx);

static bool any_atom(const sx *x, atom_pred p, const void *ctx);

static bool atom_any(const sx_atom *a, atom_pred p, const void *ctx) {
  if (p(a, ctx)) return true;
  switch (a->kind) {
  case SXA_FLOOR:
    return any_atom(a->a, p, ctx);
  case SXA_PROD:
    for (int i = 0; i < a->nf; i++)
      if (atom_any(a->f[i], p, ctx)) return true;
    return false;
  case SXA_FDIVSYM:
  case SXA_MODSYM:
    return any_atom(a->a, p, ctx) || any_atom(a->b, p, ctx);
  default:
    return false;
  }
}

static bool any_atom(const sx *x, atom_pred p, const void *ctx) {
  for (int i = 0; i < x->nterms; i++)
    if (atom_any(x->terms[i].atom, p, ctx)) return true;
  return false;
}

static bool is_nonaffine(const sx_atom *a, const void *ctx) {
  (void)ctx;
  return a->kind == SXA_PROD || a->kind == SXA_FDIVSYM || a->kind == SXA_MODSYM ||
         a->kind == SXA_OVERFLOW;
}
static bool is_overflow(const sx_atom *a, const void *ctx) { return (void)ctx, a->kind == SXA_OVERFLOW; }
static bool is_modsym(const sx_atom *a, const void *ctx) { return (void)ctx, a->kind == SXA_MODSYM; }
static bool is_var(const sx_atom *a, const void *ctx) { return (void)ctx, a->kind == SXA_VAR; }

bool sx_is_affine(const sx *x) { return !any_atom(x, is_nonaffine, NULL); }
bool sx_has_overflow(const sx *x) { return any_atom(x, is_overflow, NULL); }
bool sx_has_modsym(const sx *x) { return any_atom(x, is_modsym, NULL); }
bool sx_has_vars(const sx *x) { return any_atom(x, is_var, NULL); }

typedef struct {
  sx_atom_kind kind;
  const char *name;
} named_q;
static bool is_named(const sx_atom *a, const void *ctx) {
  const named_q *q = ctx;
  return a->kind == q->kind && strcmp(a->name, q->name) == 0;
}
bool sx_mentions(const sx *x, sx_atom_kind kind, const char *name) {
  named_q q = {kind, name};
  return any_atom(x, is_named, &q);
}

const char *sx_as_var(const sx *x) {
  if (x->c0 || x->nterms != 1 || x->terms[0].coef != 1) return NULL;
  const sx_atom *a = x->terms[0].atom;
  return a->kind == SXA_VAR ? a->name : NULL;
}

/* ---- substitution ------------------------------------------------------- */

static const sx *atom_subst(arena *A, const sx_atom *a, sx_subst_fn fn, void *ctx) {
  switch (a->kind) {
  case SXA_PARAM:
  case SXA_VAR: {
    const sx *r = fn(ctx, a->kind, a->name);
    return r ? r : single(A, 1, a);
  }
  case SXA_FLOOR:
    return floordiv_int(A, sx_subst(A, a->a, fn, ctx), a->den);
  case SXA_PROD: {
    const sx *r = sx_int(A, 1);
    for (int i = 0; i < a->nf; i++) r = sx_mul(A, r, atom_subst(A, a->f[i], fn, ctx));
    return r;
  }
  case SXA_FDIVSYM:
    return sx_floordiv(A, sx_subst(A, a->a, fn, ctx), sx_subst(A, a->b, fn, ctx));
  case SXA_MODSYM:
    return sx_mod(A, sx_subst(A, a->a, fn, ctx), sx_subst(A, a->b, fn, ctx));
  case SXA_OVERFLOW:
    return single(A, 1, a);
  }
  return single(A, 1, a);
}

const sx *sx_subst(arena *A, const sx *x, sx_subst_fn fn, void *ctx) {
  builder b;
  b_init(&b, A);
  b_const(&b, x->c0);
  for (int i = 0; i < x->nterms; i++) b_add(&b, atom_subst(A, x->terms[i].atom, fn, ctx), x->terms[i].coef);
  return b_finish(&b);
}

/* ---- evaluation and bounds ------------------------------------------------ */

static bool atom_eval(const sx_atom *a, sx_lookup_fn lookup, void *ctx, int64_t *out) {
  int64_t p, q;
  switch (a->kind) {
  case SXA_PARAM:
  case SXA_VAR:
    return lookup(ctx, a->kind, a->name, out);
  case SXA_FLOOR:
    if (!sx_eval(a->a, lookup, ctx, &p)) return false;
    *out = fdiv(p, a->den);
    return true;
  case SXA_PROD:
    *out = 1;
    for (int i = 0; i < a->nf; i++) {
      if (!atom_eval(a->f[i], lookup, ctx, &p)) return false;
      if (__builtin_mul_overflow(*out, p, out)) return false;
    }
    return true;
  case SXA_FDIVSYM:
  case SXA_MODSYM:
    if (!sx_eval(a->a, lookup, ctx, &p) || !sx_eval(a->b, lookup, ctx, &q)) return false;
    if (q == 0) return false;
    if (q < 0) p = -p, q = -q; /* floor(p/q) = floor(-p/-q) */
    *out = a->kind == SXA_FDIVSYM ? fdiv(p, q) : fmod_(p, q);
    return true;
  case SXA_OVERFLOW:
    return false;
  }
  return false;
}

bool sx_eval(const sx *x, sx_lookup_fn lookup, void *ctx, int64_t *out) {
  int64_t acc = x->c0, v, t;
  for (int i = 0; i < x->nterms; i++) {
    if (!atom_eval(x->terms[i].atom, lookup, ctx, &v)) return false;
    if (__builtin_mul_overflow(v, x->terms[i].coef, &t) || __builtin_add_overflow(acc, t, &acc))
      return false;
  }
  *out = acc;
  return true;
}

static bool imul_range(int64_t alo, int64_t ahi, int64_t blo, int64_t bhi, int64_t *lo, int64_t *hi) {
  int64_t c[4];
  if (__builtin_mul_overflow(alo, blo, &c[0]) || __builtin_mul_overflow(alo, bhi, &c[1]) ||
      __builtin_mul_overflow(ahi, blo, &c[2]) || __builtin_mul_overflow(ahi, bhi, &c[3]))
    return false;
  *lo = *hi = c[0];
  for (int i = 1; i < 4; i++) {
    if (c[i] < *lo) *lo = c[i];
    if (c[i] > *hi) *hi = c[i];
  }
  return true;
}

static bool atom_bounds(const sx_atom *a, sx_range_fn range, void *ctx, int64_t *lo, int64_t *hi) {
  int64_t l, h;
  switch (a->kind) {
  case SXA_PARAM:
  case SXA_VAR:
    return range(ctx, a->kind, a->name, lo, hi);
  case SXA_FLOOR:
    if (!sx_bounds(a->a, range, ctx, &l, &h)) return false;
    *lo = fdiv(l, a->den);
    *hi = fdiv(h, a->den);
    return true;
  case SXA_PROD:
    *lo = *hi = 1;
    for (int i = 0; i < a->nf; i++) {
      if (!atom_bounds(a->f[i], range, ctx, &l, &h)) return false;
      if (!imul_range(*lo, *hi, l, h, lo, hi)) return false;
    }
    return true;
  default:
    return false;
  }
}

bool sx_bounds(const sx *x, sx_range_fn range, void *ctx, int64_t *lo, int64_t *hi) {
  int64_t L = x->c0, H = x->c0, l, h, tl, th;
  for (int i = 0; i < x->nterms; i++) {
    if (!atom_bounds(x->terms[i].atom, range, ctx, &l, &h)) return false;
    if (!imul_range(l, h, x->terms[i].coef, x->terms[i].coef, &tl, &th)) return false;
    if (__builtin_add_overflow(L, tl, &L) || __builtin_add_overflow(H, th, &H)) return false;
  }
  *lo = L;
  *hi = H;
  return true;
}

typedef struct {
  sx_range_fn range;
  void *ctx;
} simp_ctx;

static const sx *atom_simplify(arena *A, const sx_atom *a, simp_ctx *sc);

const sx *sx_simplify(arena *A, const sx *x, sx_range_fn range, void *ctx) {
  simp_ctx sc = {range, ctx};
  builder b;
  b_init(&b, A);
  b_const(&b, x->c0);
  for (int i = 0; i < x->nterms; i++) b_add(&b, atom_simplify(A, x->terms[i].atom, &sc), x->terms[i].coef);
  return b_finish(&b);
}

static const sx *atom_simplify(arena *A, const sx_atom *a, simp_ctx *sc) {
  if (a->kind != SXA_FLOOR) return single(A, 1, a);
  const sx *inner = sx_simplify(A, a->a, sc->range, sc->ctx);
  int64_t lo, hi;
  if (sx_bounds(inner, sc->range, sc->ctx, &lo, &hi) && fdiv(lo, a->den) == fdiv(hi, a->den))
    return sx_int(A, fdiv(lo, a->den));
  return floordiv_int(A, inner, a->den);
}

/* ---- printing ------------------------------------------------------------- */

static void sb_int(strbuf *s, int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)v);
  sb_puts(s, buf);
}

static void print_sx(strbuf *s, const sx *x);

static bool simple_sx(const sx *x) { return x->c0 == 0 && x->nterms == 1 && x->terms[0].coef == 1; }

static void print_paren(strbuf *s, const sx *x) {
  bool p = !simple_sx(x) && !(x->nterms == 0 && x->c0 >= 0);
  if (p) sb_puts(s, "(");
  print_sx(s, x);
  if (p) sb_puts(s, ")");
}

static void print_atom(strbuf *s, const sx_atom *a) {
  switch (a->kind) {
  case SXA_PARAM:
  case SXA_VAR:
    sb_puts(s, a->name);
    break;
  case SXA_FLOOR:
    sb_puts(s, "floor(");
    print_paren(s, a->a);
    sb_puts(s, "/");
    sb_int(s, a->den);
    sb_puts(s, ")");
    break;
  case SXA_PROD:
    for (int i = 0; i < a->nf; i++) {
      if (i) sb_puts(s, "*");
      print_atom(s, a->f[i]);
    }
    break;
  case SXA_FDIVSYM:
    sb_puts(s, "floor(");
    print_paren(s, a->a);
    sb_puts(s, "/");
    print_paren(s, a->b);
    sb_puts(s, ")");
    break;
  case SXA_MODSYM:
    print_paren(s, a->a);
    sb_puts(s, "%");
    print_paren(s, a->b);
    break;
  case SXA_OVERFLOW:
    sb_puts(s, "<overflow>");
    break;
  }
}

/* Print order: terms with larger coefficients first ("2*w+kw-1"), then the
 * canonical order. */
static int print_cmp(const sx_term *a, const sx_term *b) {
  uint64_t ca = a->coef < 0 ? -(uint64_t)a->coef : (uint64_t)a->coef;
  uint64_t cb = b->coef < 0 ? -(uint64_t)b->coef : (uint64_t)b->coef;
  if (ca != cb) return ca > cb ? -1 : 1;
  return atom_cmp(a->atom, b->atom);
}

static void print_sx(strbuf *s, const sx *x) {
  if (x->nterms == 0) {
    sb_int(s, x->c0);
    return;
  }
  const sx_term *ord[64];
  int n = x->nterms < 64 ? x->nterms : 64;
  for (int i = 0; i < n; i++) {
    ord[i] = &x->terms[i];
    for (int j = i; j > 0 && print_cmp(ord[j - 1], ord[j]) > 0; j--) {
      const sx_term *t = ord[j];
      ord[j] = ord[j - 1];
      ord[j - 1] = t;
    }
  }
  for (int i = 0; i < x->nterms; i++) {
    const sx_term *term = i < 64 ? ord[i] : &x->terms[i];
    int64_t c = term->coef;
    if (c < 0) {
      sb_puts(s, "-");
      if (c != INT64_MIN) c = -c;
    } else if (i) {
      sb_puts(s, "+");
    }
    if (c != 1) {
      sb_int(s, c);
      sb_puts(s, "*");
    }
    print_atom(s, term->atom);
  }
  if (x->c0 > 0) {
    sb_puts(s, "+");
    sb_int(s, x->c0);
  } else if (x->c0 < 0) {
    sb_int(s, x->c0);
  }
}

char *sx_str(arena *A, const sx *x) {
  strbuf s = {0};
  print_sx(&s, x);
  return sb_take_arena(&s, A);
}

/* ---- Horner form ---------------------------------------------------------- */

/* A term as coef * f[0] * ... * f[nf-1]; a PROD contributes its factors. */
#define HF_MAX 8
typedef struct hterm {
  int64_t coef;
  int nf;
  const sx_atom *f[HF_MAX];
} hterm;

typedef struct hctx {
  strbuf *s;
  sx_atom_print_fn atom;
  void *ctx;
} hctx;

static int hterm_find(const hterm *t, const sx_atom *a) {
  for (int i = 0; i < t->nf; i++)
    if (!atom_cmp(t->f[i], a)) return i;
  return -1;
}

/* A common factor: an atom, or (a == NULL) an integer d >= 2 dividing the
 * coefficients. */
typedef struct hfac {
  const sx_atom *a;
  int64_t d;
} hfac;

static bool h_has(const hterm *t, hfac f) { return f.a ? hterm_find(t, f.a) >= 0 : t->coef % f.d == 0; }

/* t / f, for a t that has f */
static hterm h_div(hterm t, hfac f) {
  if (!f.a) {
    t.coef /= f.d;
    return t;
  }
  for (int j = hterm_find(&t, f.a); j + 1 < t.nf; j++) t.f[j] = t.f[j + 1];
  t.nf--;
  return t;
}

static int64_t gcd64(int64_t a, int64_t b) { /* a, b > INT64_MIN */
  a = a < 0 ? -a : a, b = b < 0 ? -b : b;
  while (b) {
    int64_t r = a % b;
    a = b, b = r;
  }
  return a;
}

static int h_count(const hterm *t, const bool *done, int n, hfac f) {
  int c = 0;
  for (int k = 0; k < n; k++) c += !done[k] && h_has(&t[k], f);
  return c;
}

/* The factor shared by most of the live terms (at least `min` of them); on a
 * tie an atom before an integer, atoms in canonical order, larger integers
 * first.  False when there is none. */
static bool h_best(const hterm *t, const bool *done, int n, int min, hfac *best) {
  int bestn = 0;
  for (int i = 0; i < n; i++) {
    if (done[i]) continue;
    for (int j = 0; j < t[i].nf; j++) {
      hfac f = {t[i].f[j], 0};
      if (hterm_find(&t[i], f.a) != j) continue; /* a repeated factor counts once */
      int c = h_count(t, done, n, f);
      if (c > bestn || (c == bestn && (!best->a || atom_cmp(f.a, best->a) < 0))) *best = f, bestn = c;
    }
  }
  for (int i = 0; i < n; i++)
    for (int k = i + 1; k < n; k++) {
      if (done[i] || done[k]) continue;
      hfac f = {NULL, gcd64(t[i].coef, t[k].coef)};
      if (f.d < 2) continue;
      int c = h_count(t, done, n, f);
      if (c > bestn || (c == bestn && !best->a && f.d > best->d)) *best = f, bestn = c;
    }
  return bestn >= min && bestn > 0;
}

static void h_fac(hctx *h, hfac f) {
  if (f.a) h->atom(h->ctx, h->s, f.a);
  else sb_printf(h->s, "%lld", (long long)f.d);
}

static void h_mag(hctx *h, int64_t v) { sb_printf(h->s, "%llu", v < 0 ? -(unsigned long long)v : (unsigned long long)v); }

/* a separator and a sign before a piece whose signed value is `neg`ative */
static void h_sign(hctx *h, bool first, bool neg) {
  if (first) sb_puts(h->s, neg ? "-" : "");
  else sb_puts(h->s, neg ? " - " : " + ");
}

static void h_factors(hctx *h, const hterm *t) {
  for (int i = 0; i < t->nf; i++) {
    if (i) sb_puts(h->s, " * ");
    h->atom(h->ctx, h->s, t->f[i]);
  }
}

static void h_sum(hctx *h, hterm *t, int n, int64_t c0, int sign);

/* f * (sum of q), with q the quotients; a factor that every quotient still
 * shares is chained ("W * H * (...)") rather than nested */
static void h_group(hctx *h, hfac f, hterm *q, int n, int64_t c0, int sign) {
  h_fac(h, f);
  bool *done = calloc((size_t)n, sizeof *done);
  hfac g = {0};
  while (c0 == 0 && h_best(q, done, n, n, &g)) {
    sb_puts(h->s, " * ");
    h_fac(h, g);
    int k = 0;
    for (int i = 0; i < n; i++) {
      hterm r = h_div(q[i], g);
      if (r.nf == 0) c0 = r.coef; /* at most one: the terms' atoms are distinct */
      else q[k++] = r;
    }
    n = k;
    g = (hfac){0};
  }
  free(done);
  sb_puts(h->s, " * (");
  h_sum(h, q, n, c0, sign);
  sb_puts(h->s, ")");
}

/* The sum of the terms plus c0, each multiplied by sign (+1 or -1).  Terms
 * that share no factor come first, then c0, then the groups; c0 goes last
 * when every term is in a group ("W * (...) - 1"). */
static void h_sum(hctx *h, hterm *t, int n, int64_t c0, int sign) {
  bool *done = calloc((size_t)n + 1, sizeof *done);
  int *grp = calloc((size_t)n + 1, sizeof *grp); /* 0: flat; g >= 1: in group g */
  hfac gf[64], f = {0};
  int ng = 0;
  while (ng < 64 && h_best(t, done, n, 2, &f)) {
    gf[ng++] = f;
    for (int i = 0; i < n; i++)
      if (!done[i] && h_has(&t[i], f)) done[i] = true, grp[i] = ng;
    f = (hfac){0};
  }
  bool first = true;
  for (int i = 0; i < n; i++) {
    if (grp[i]) continue;
    int64_t v = sign < 0 ? -t[i].coef : t[i].coef; /* no INT64_MIN: see below */
    h_sign(h, first, v < 0);
    first = false;
    if (v != 1 && v != -1) {
      h_mag(h, v);
      sb_puts(h->s, " * ");
    }
    h_factors(h, &t[i]);
  }
  int64_t cv = sign < 0 ? -c0 : c0;
  bool c_last = first && ng > 0;
  if (!c_last && (cv != 0 || first)) {
    h_sign(h, first, cv < 0);
    h_mag(h, cv);
    first = false;
  }
  for (int g = 1; g <= ng; g++) {
    int m = 0;
    for (int i = 0; i < n; i++) m += grp[i] == g;
    hterm *q = calloc((size_t)m, sizeof *q);
    int64_t qc = 0;
    int k = 0;
    bool allneg = true;
    for (int i = 0; i < n; i++) {
      if (grp[i] != g) continue;
      hterm r = h_div(t[i], gf[g - 1]);
      if ((sign < 0 ? -r.coef : r.coef) > 0) allneg = false;
      if (r.nf == 0) qc = r.coef; /* at most one: the terms' atoms are distinct */
      else q[k++] = r;
    }
    if ((sign < 0 ? -qc : qc) > 0) allneg = false;
    /* an all-negative group is subtracted: "- C * (W + 1)" */
    h_sign(h, first, allneg);
    first = false;
    h_group(h, gf[g - 1], q, k, qc, allneg ? -sign : sign);
    free(q);
  }
  if (c_last && cv != 0) {
    h_sign(h, false, cv < 0);
    h_mag(h, cv);
  }
  free(done);
  free(grp);
}

void sx_print_horner(strbuf *s, const sx *x, sx_atom_print_fn atom, void *ctx) {
  hctx h = {s, atom, ctx};
  hterm *t = calloc((size_t)x->nterms + 1, sizeof *t);
  /* Negating is safe without INT64_MIN; past HF_MAX factors, or with an
   * INT64_MIN, the sum is printed flat (sign +1, no group). */
  bool flat = x->c0 == INT64_MIN;
  for (int i = 0; i < x->nterms; i++) {
    const sx_atom *a = x->terms[i].atom;
    t[i].coef = x->terms[i].coef;
    flat |= t[i].coef == INT64_MIN;
    if (a->kind == SXA_PROD && a->nf <= HF_MAX) {
      t[i].nf = a->nf;
      for (int j = 0; j < a->nf; j++) t[i].f[j] = a->f[j];
    } else if (a->kind == SXA_PROD) {
      flat = true;
    } else {
      t[i].nf = 1, t[i].f[0] = a;
    }
  }
  if (flat) {
    for (int i = 0; i < x->nterms; i++) {
      h_sign(&h, i == 0, x->terms[i].coef < 0);
      if (x->terms[i].coef != 1 && x->terms[i].coef != -1) h_mag(&h, x->terms[i].coef), sb_puts(s, " * ");
      const sx_atom *a = x->terms[i].atom;
      if (a->kind != SXA_PROD) atom(ctx, s, a);
      for (int j = 0; a->kind == SXA_PROD && j < a->nf; j++) {
        if (j) sb_puts(s, " * ");
        atom(ctx, s, a->f[j]);
      }
    }
    if (x->c0 || !x->nterms) h_sign(&h, !x->nterms, x->c0 < 0), h_mag(&h, x->c0);
  } else {
    h_sum(&h, t, x->nterms, x->c0, 1);
  }
  free(t);
}

cJSON *sx_shape_json(arena *A, int rank, const sx *const *shape) {
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; i < rank; i++) {
    int64_t v;
    if (sx_is_int(shape[i], &v)) cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)v));
    else cJSON_AddItemToArray(arr, cJSON_CreateString(sx_str(A, shape[i])));
  }
  return arr;
}

char *sx_shape_str(arena *A, int rank, const sx *const *shape) {
  strbuf s = {0};
  sb_puts(&s, "[");
  for (int i = 0; i < rank; i++) {
    if (i) sb_puts(&s, ",");
    print_sx(&s, shape[i]);
  }
  sb_puts(&s, "]");
  return sb_take_arena(&s, A);
}

/* ---- parsing ---------------------------------------------------------------- */

typedef struct parser {
  arena *A;
  const char *p;
  const char *const *params;
  bool err;
  int depth;
} parser;

static void skip_ws(parser *ps) {
  while (isspace((unsigned char)*ps->p)) ps->p++;
}

static const sx *p_expr(parser *ps);

static const sx *p_primary(parser *ps) {
  skip_ws(ps);
  if (++ps->depth > 200) {
    ps->err = true;
    return sx_int(ps->A, 0);
  }
  const sx *r;
  char c = *ps->p;
  if (c == '(') {
    ps->p++;
    r = p_expr(ps);
    skip_ws(ps);
    if (*ps->p != ')') ps->err = true;
    else ps->p++;
  } else if (c == '-') {
    ps->p++;
    r = sx_neg(ps->A, p_primary(ps));
  } else if (isdigit((unsigned char)c)) {
    int64_t v = 0;
    while (isdigit((unsigned char)*ps->p)) {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *ps->p - '0', &v)) ps->err = true;
      ps->p++;
    }
    r = sx_int(ps->A, v);
  } else if (isalpha((unsigned char)c) || c == '_') {
    const char *b = ps->p;
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '\'') ps->p++;
    size_t n = (size_t)(ps->p - b);
    if (n == 5 && strncmp(b, "floor", 5) == 0) {
      skip_ws(ps);
      if (*ps->p == '(') {
        ps->p++;
        const sx *num = p_expr(ps);
        skip_ws(ps);
        /* p_expr already folded any "/d" into a floor division */
        if (*ps->p != ')') ps->err = true;
        else ps->p++;
        ps->depth--;
        return num;
      }
    }
    char *name = arena_strndup(ps->A, b, n);
    bool is_param = false;
    for (const char *const *q = ps->params; q && *q; q++)
      if (strcmp(*q, name) == 0) is_param = true;
    r = is_param ? sx_param(ps->A, name) : sx_var(ps->A, name);
  } else {
    ps->err = true;
    r = sx_int(ps->A, 0);
  }
  ps->depth--;
  return r;
}

static const sx *p_term(parser *ps) {
  const sx *r = p_primary(ps);
  for (;;) {
    skip_ws(ps);
    char c = *ps->p;
    if (c != '*' && c != '/' && c != '%') return r;
    ps->p++;
    const sx *y = p_primary(ps);
    if (c == '*') {
      r = sx_mul(ps->A, r, y);
    } else {
      int64_t d;
      if (sx_is_int(y, &d) && d == 0) ps->err = true;
      r = c == '/' ? sx_floordiv(ps->A, r, y) : sx_mod(ps->A, r, y);
    }
  }
}

static const sx *p_expr(parser *ps) {
  const sx *r = p_term(ps);
  for (;;) {
    skip_ws(ps);
    char c = *ps->p;
    if (c != '+' && c != '-') return r;
    ps->p++;
    const sx *y = p_term(ps);
    r = c == '+' ? sx_add(ps->A, r, y) : sx_sub(ps->A, r, y);
  }
}

const sx *sx_parse(arena *A, const char *text, const char *const *params) {
  parser ps = {A, text, params, false, 0};
  const sx *r = p_expr(&ps);
  skip_ws(&ps);
  if (ps.err || *ps.p || sx_has_overflow(r)) return NULL;
  return r;
}
