/* Symbolic integer expressions for shapes and index maps (spec §4.2 AxisExpr).
 *
 * An sx is a canonical linear form  c0 + sum(coef_i * atom_i)  over atoms:
 *   - a variable: a dim symbol (param, e.g. M) or an axis variable (i0, k, ...);
 *   - floor(e / d) for an integer d >= 2 (the only division the IndexBook allows);
 *   - three non-affine atoms that are kept only to mark a view non_scop:
 *     a monomial of several atoms (M*K), floor(e / s) and e % s with a symbolic s;
 *   - an overflow marker, produced when a coefficient leaves int64.
 * Terms are sorted by atom and merged, so two equal expressions built in
 * different ways compare equal and print the same ("2*h+kh-1").
 * `%` by a constant never survives: e % c becomes e - c*floor(e/c).
 * Expressions are immutable and live in an arena. */
#ifndef DLC_SX_H
#define DLC_SX_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"

typedef struct sx sx;
typedef struct sx_atom sx_atom;

typedef enum {
  SXA_PARAM,    /* dim symbol */
  SXA_VAR,      /* axis / iteration variable */
  SXA_FLOOR,    /* floor(a / den), den >= 2 */
  SXA_PROD,     /* a * b, non-affine */
  SXA_FDIVSYM,  /* floor(a / b), b symbolic: non-affine */
  SXA_MODSYM,   /* a % b, b symbolic: non-affine */
  SXA_OVERFLOW, /* arithmetic left int64 */
} sx_atom_kind;

struct sx_atom {
  sx_atom_kind kind;
  const char *name;        /* PARAM, VAR */
  const sx *a, *b;         /* FLOOR: a; FDIVSYM/MODSYM: a, b */
  int64_t den;             /* FLOOR */
  int nf;                  /* PROD: a monomial of nf >= 2 sorted factors */
  const sx_atom *const *f; /* PROD factors (never PROD themselves) */
};

typedef struct sx_term {
  int64_t coef;
  const sx_atom *atom;
} sx_term;

struct sx {
  int64_t c0;
  int nterms;
  const sx_term *terms;
};

/* Constructors (all results canonical). */
const sx *sx_int(arena *A, int64_t v);
const sx *sx_param(arena *A, const char *name);
const sx *sx_var(arena *A, const char *name);
const sx *sx_add(arena *A, const sx *x, const sx *y);
const sx *sx_sub(arena *A, const sx *x, const sx *y);
const sx *sx_neg(arena *A, const sx *x);
const sx *sx_add_int(arena *A, const sx *x, int64_t v);
const sx *sx_scale(arena *A, const sx *x, int64_t k);
const sx *sx_mul(arena *A, const sx *x, const sx *y);
const sx *sx_floordiv(arena *A, const sx *x, const sx *y); /* y must not be 0 */
const sx *sx_mod(arena *A, const sx *x, const sx *y);
/* ceil(x / d) for an integer d >= 1. */
const sx *sx_ceildiv_int(arena *A, const sx *x, int64_t d);

/* Queries. */
bool sx_is_int(const sx *x, int64_t *v);
bool sx_is_one(const sx *x);
bool sx_is_affine(const sx *x);       /* only PARAM, VAR and FLOOR atoms */
bool sx_has_overflow(const sx *x);
bool sx_has_modsym(const sx *x);
bool sx_has_vars(const sx *x);        /* any SXA_VAR inside */
bool sx_mentions(const sx *x, sx_atom_kind kind, const char *name);
/* If x is exactly one variable with coefficient 1 and no constant, its name. */
const char *sx_as_var(const sx *x);
int sx_cmp(const sx *x, const sx *y);
bool sx_equal(const sx *x, const sx *y);

/* Substitution: every VAR (and PARAM if `params` is set) for which `fn`
 * returns non-NULL is replaced. */
typedef const sx *(*sx_subst_fn)(void *ctx, sx_atom_kind kind, const char *name);
const sx *sx_subst(arena *A, const sx *x, sx_subst_fn fn, void *ctx);

/* Integer evaluation with floor semantics.  `lookup` returns false for an
 * unbound name.  Returns false on unbound names, division by zero or overflow. */
typedef bool (*sx_lookup_fn)(void *ctx, sx_atom_kind kind, const char *name, int64_t *v);
bool sx_eval(const sx *x, sx_lookup_fn lookup, void *ctx, int64_t *out);

/* Interval bounds given bounds of variables (`range` returns false when a
 * variable's range is unknown).  Returns false when the bound is unknown. */
typedef bool (*sx_range_fn)(void *ctx, sx_atom_kind kind, const char *name, int64_t *lo, int64_t *hi);
bool sx_bounds(const sx *x, sx_range_fn range, void *ctx, int64_t *lo, int64_t *hi);
/* Simplify floor atoms whose numerator range is known:
 * floor(e/d) with e in [q*d, q*d+d-1] becomes q. */
const sx *sx_simplify(arena *A, const sx *x, sx_range_fn range, void *ctx);

/* Text: "2*h+kh-1", "floor((i0+3)/4)", "M*K", "i0 % S".  The affine subset of
 * this syntax is also valid isl syntax. */
char *sx_str(arena *A, const sx *x);
/* Horner form for the C printers: common factors pulled out of the sum and
 * nested, "c*(2*w - 1 + W*(2*h - 1 + H*n))" instead of the expanded
 * "2*c*w - c - c*W + ...".  Only the form changes: the text is the same
 * polynomial (over the integers, and so also modulo 2^64), with constants
 * folded by the canonical form.  A term's factors are its atom, or a PROD's
 * factors; `atom` prints one factor (never a PROD), and FLOOR atoms recurse
 * through it.  Writes no outer parentheses; " + ", " - ", " * " separate.
 * Deterministic: the factor shared by most terms is pulled out first, ties
 * going to the first in canonical atom order. */
struct strbuf;
typedef void (*sx_atom_print_fn)(void *ctx, struct strbuf *s, const sx_atom *a);
void sx_print_horner(struct strbuf *s, const sx *x, sx_atom_print_fn atom, void *ctx);
/* A shape as "[M,K]". */
char *sx_shape_str(arena *A, int rank, const sx *const *shape);
/* A shape as a JSON array for the dumps: integers as numbers, the rest as
 * their text (["M", 3, "2*h+kh-1"]). */
struct cJSON;
struct cJSON *sx_shape_json(arena *A, int rank, const sx *const *shape);
/* Parse the syntax above (ints, names, + - * / % floor(), parentheses).
 * Names in `params` (NULL-terminated) become PARAM atoms, others VAR.  `/` is
 * floor division.  Returns NULL on a syntax error. */
const sx *sx_parse(arena *A, const char *text, const char *const *params);

#endif
