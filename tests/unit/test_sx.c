/* sx: canonical forms, floor division rules, printing, parsing, evaluation. */
#include <stdlib.h>

#include "check.h"
#include "strbuf.h"
#include "sx.h"

static arena A;

static const char *S(const sx *x) { return sx_str(&A, x); }
static const sx *P(const char *t) {
  static const char *const params[] = {"M", "N", "K", "H", "W", "S", NULL};
  return sx_parse(&A, t, params);
}

static bool lookup(void *ctx, sx_atom_kind k, const char *name, int64_t *v) {
  (void)ctx, (void)k;
  if (!strcmp(name, "i")) return *v = 7, true;
  if (!strcmp(name, "j")) return *v = -3, true;
  if (!strcmp(name, "K")) return *v = 5, true;
  return false;
}

static bool range(void *ctx, sx_atom_kind k, const char *name, int64_t *lo, int64_t *hi) {
  (void)ctx;
  if (k == SXA_VAR && !strcmp(name, "i")) return *lo = 0, *hi = 2, true;
  if (k == SXA_VAR && !strcmp(name, "j")) return *lo = 0, *hi = 3, true;
  return false;
}

/* Horner text in the parser's syntax, so that it can be read back. */
static void h_atom(void *ctx, strbuf *s, const sx_atom *a) {
  (void)ctx;
  strbuf t = {0};
  switch (a->kind) {
  case SXA_PARAM:
  case SXA_VAR: sb_puts(s, a->name); break;
  case SXA_FLOOR:
    sx_print_horner(&t, a->a, h_atom, NULL);
    sb_printf(s, "floor((%s)/%lld)", sb_str(&t), (long long)a->den);
    break;
  default: sb_puts(s, "<bad atom>"); break;
  }
  sb_free(&t);
}

static const char *HS(const sx *x) {
  strbuf s = {0};
  sx_print_horner(&s, x, h_atom, NULL);
  return sb_take_arena(&s, &A);
}

static const char *const rnames[] = {"M", "N", "K", "H", "W", "i", "j", "k", "l"};

static const sx *rnd_expr(int depth) {
  const sx *e = sx_int(&A, rand() % 9 - 4);
  int nt = 1 + rand() % 6;
  for (int t = 0; t < nt; t++) {
    const sx *m = sx_int(&A, (rand() % 2 ? 1 : -1) * (1 + rand() % 4) * (rand() % 3 ? 1 : 16));
    int nf = 1 + rand() % 3;
    for (int f = 0; f < nf; f++) {
      const sx *a = P(rnames[rand() % 9]);
      if (depth > 0 && rand() % 6 == 0) a = sx_floordiv(&A, rnd_expr(depth - 1), sx_int(&A, 2 + rand() % 7));
      m = sx_mul(&A, m, a);
    }
    e = sx_add(&A, e, m);
  }
  return e;
}

static bool rnd_lookup(void *ctx, sx_atom_kind k, const char *name, int64_t *v) {
  (void)k;
  const int64_t *vals = ctx;
  for (int i = 0; i < 9; i++)
    if (!strcmp(name, rnames[i])) return *v = vals[i], true;
  return false;
}

/* Horner form: the text reads back as the same canonical form and evaluates
 * to the same value, for random linear forms over params, vars, monomials
 * and floors. */
static void test_horner(void) {
  CHECK_STR(HS(P("2*K*i + 2*K*W*j + K*H*W*l - K - K*W")), "K * (2 * i - 1 + W * (2 * j + H * l - 1))");
  CHECK_STR(HS(P("i + 64*j + 64*M*k + 64*M*N*l")), "i + 64 * (j + M * (k + N * l))");
  CHECK_STR(HS(P("K*W - 3*K")), "K * (W - 3)");
  CHECK_STR(HS(P("-K - K*W")), "-K * (W + 1)");
  CHECK_STR(HS(P("i - K - K*W")), "i - K * (W + 1)");
  CHECK_STR(HS(P("M*K*i + M*K*j")), "K * M * (i + j)");
  CHECK_STR(HS(P("M*N*K")), "K * M * N");
  CHECK_STR(HS(P("2*i + 4*j")), "2 * (i + 2 * j)");
  CHECK_STR(HS(P("-7")), "-7");
  CHECK_STR(HS(P("i - 1")), "i - 1");
  CHECK_STR(HS(P("M*i + M*j + 1")), "M * (i + j) + 1");
  srand(8);
  static const char *const params[] = {"M", "N", "K", "H", "W", NULL};
  int same = 0, nested = 0;
  for (int it = 0; it < 2000; it++) {
    const sx *x = rnd_expr(1);
    const char *h = HS(x);
    const sx *y = sx_parse(&A, h, params);
    bool eq = y && sx_equal(x, y);
    if (!eq) fprintf(stderr, "horner: %s reads back as %s\n", S(x), y ? S(y) : "(syntax error)");
    same += eq;
    nested += strchr(h, '(') != NULL;
    int64_t vals[9], vx, vy;
    for (int i = 0; i < 9; i++) vals[i] = rand() % 41 - 20;
    if (eq && sx_eval(x, rnd_lookup, vals, &vx)) CHECK(sx_eval(y, rnd_lookup, vals, &vy) && vx == vy);
  }
  CHECK(same == 2000);
  CHECK(nested > 500); /* the random forms do exercise the factoring */
}

int main(void) {
  arena_init(&A);
  /* canonical order and merging */
  CHECK_STR(S(P("kh + 2*h - 1")), "2*h+kh-1");
  CHECK_STR(S(P("h + h + 3 - 3")), "2*h");
  CHECK(sx_equal(P("M*K"), P("K*M")));
  CHECK(sx_equal(P("(M+1)*K"), P("M*K + K")));
  CHECK_STR(S(P("0")), "0");
  CHECK_STR(S(P("-i")), "-i");
  /* floor division pulls out multiples and merges nested floors */
  CHECK_STR(S(P("(4*i + 2*j + 3) / 2")), "2*i+j+1");
  CHECK_STR(S(P("(i + 3) / 4")), "floor((i+3)/4)");
  CHECK(sx_equal(P("(i/2)/3"), P("i/6")));
  CHECK_STR(S(P("floor((H-1)/2)+1")), "floor((H+1)/2)");
  /* % by a constant becomes floordiv; by a symbol stays (non-affine) */
  const sx *m = P("i % 4");
  CHECK_STR(S(m), "-4*floor(i/4)+i");
  CHECK(sx_is_affine(m));
  CHECK(!sx_is_affine(P("i % K")));
  CHECK(sx_has_modsym(P("i % K")));
  CHECK(!sx_is_affine(P("i * K")));
  CHECK(sx_is_affine(P("i * 3 + K")));
  /* reshape round trip cancels: 3*floor(L/3) + (L mod 3) = L */
  CHECK_STR(S(P("3*(i/3) + i % 3")), "i");
  /* evaluation with floor semantics for negatives */
  int64_t v;
  CHECK(sx_eval(P("j / 2"), lookup, NULL, &v) && v == -2);
  CHECK(sx_eval(P("j % 2"), lookup, NULL, &v) && v == 1);
  CHECK(sx_eval(P("i*K + j"), lookup, NULL, &v) && v == 32);
  CHECK(sx_eval(P("i % K"), lookup, NULL, &v) && v == 2);
  CHECK(!sx_eval(P("i + M"), lookup, NULL, &v));
  /* bounds and range simplification */
  int64_t lo, hi;
  CHECK(sx_bounds(P("2*i - j"), range, NULL, &lo, &hi) && lo == -3 && hi == 4);
  CHECK_STR(S(sx_simplify(&A, P("(i + j) / 8"), range, NULL)), "0");
  CHECK_STR(S(sx_simplify(&A, P("(i + 4) / 4"), range, NULL)), "1");
  /* overflow is detected, never wraps */
  CHECK(P("9223372036854775807 + 1") == NULL);
  CHECK(sx_has_overflow(sx_mul(&A, sx_int(&A, INT64_MAX), sx_int(&A, 2))));
  /* syntax errors */
  CHECK(P("i +") == NULL);
  CHECK(P("(i") == NULL);
  CHECK(P("i / 0") == NULL);
  CHECK(P("i $ j") == NULL);
  test_horner();
  arena_free(&A);
  return check_status("test_sx");
}
