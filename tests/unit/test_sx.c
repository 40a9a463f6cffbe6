/* sx: canonical forms, floor division rules, printing, parsing, evaluation. */
#include "check.h"
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
  arena_free(&A);
  return check_status("test_sx");
}
