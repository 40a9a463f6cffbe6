/* Known answers for each UOp's playback semantics (values worked out by
 * hand from tiny.h/tiny.def), and the error statuses of playback: bad
 * input never crashes, it returns a pb_status.
 *
 *   pb_ops semantics | rounding | errors */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "indexbook.h"
#include "pbtest.h"
#include "playback.h"
#include "tiny.h"

static arena A;
static diag_list dl;

static const sx *I(int64_t v) { return sx_int(&A, v); }
static const sx *P(const char *s) {
  static const char *const params[] = {"M", "N", "D", NULL};
  return sx_parse(&A, s, params);
}

/* Evaluates d (single input `in`) and checks node `node` against `want`. */
static void expect(const char *what, tiny_dag *d, const pb_binding *b, int nin, const pb_tensor *in, int node,
                   int rank, const int64_t *shape, const double *want) {
  pb_result r;
  pb_status st = pb_eval_tiny(d, b, nin, in, true, &r);
  PBT_CHECK(st == PB_OK, "%s: %s: %s", what, pb_status_name(st), r.why);
  if (st == PB_OK) {
    const pb_tensor *v = &r.vals[node];
    bool ok = v->rank == rank;
    for (int k = 0; ok && k < rank; k++) ok = v->shape[k] == shape[k];
    PBT_CHECK(ok, "%s: wrong shape", what);
    if (ok) PBT_CHECK(pbt_same(what, v->data, want, v->n), "%s: wrong values", what);
    else printf("  got rank %d\n", v->rank);
  }
  pb_result_free(&r);
  printf("%-44s %s\n", what, st == PB_OK ? "checked" : "FAILED");
}

static pb_tensor tensor(int rank, const int64_t *shape, const double *vals) {
  pb_tensor t;
  if (pb_tensor_alloc(&t, rank, shape) != PB_OK) exit(3);
  memcpy(t.data, vals, sizeof(double) * (size_t)t.n);
  return t;
}

static int semantics(void) {
  const int64_t s23[] = {2, 3};
  const double x23[] = {1, 2, 3, 4, 5, 6};
  const sx *sh23[] = {I(2), I(3)};
  pb_tensor X = tensor(2, s23, x23);
  pb_binding none = {0};
  tiny_dag *d = tiny_new(&A, NULL);
  int x = tiny_buffer(d, "X", DT_FP32, 2, sh23);
  /* PAD lo [1,0] hi [0,1] with 9 */
  const sx *plo[] = {I(1), I(0)}, *phi[] = {I(0), I(1)};
  int pad = tiny_pad(d, x, plo, phi, &dl, "t");
  d->u[pad].cval = 9;
  /* FLIP axis 1, PERMUTE [1,0], RESHAPE [3,2], EXPAND [1,3]->[2,3] */
  int fl = tiny_flip(d, x, (const bool[]){false, true}, &dl, "t");
  int pe = tiny_permute(d, x, (const int[]){1, 0}, &dl, "t");
  const sx *sh32[] = {I(3), I(2)};
  int rs = tiny_reshape(d, x, 2, sh32, &dl, "t");
  /* SHRINK [1,2) x [0,3) step [1,2] */
  const sx *slo[] = {I(1), I(0)}, *shi[] = {I(2), I(3)};
  int sr = tiny_shrink(d, x, slo, shi, (const int64_t[]){1, 2}, &dl, "t");
  /* VIEW of the flat 6 as [2,2] with index 2*v0+v1+1 */
  const sx *sh6[] = {I(6)}, *sh22[] = {I(2), I(2)};
  int flat = tiny_reshape(d, x, 1, sh6, &dl, "t");
  const sx *vm[] = {P("2*v0+v1+1")};
  int vw = tiny_view(d, flat, 2, sh22, vm);
  int row = tiny_shrink(d, x, (const sx *[]){I(0), I(0)}, (const sx *[]){I(1), I(3)}, NULL, &dl, "t");
  int ex = tiny_expand(d, row, 2, sh23, &dl, "t");
  /* RANGE [2,3] along axis 1; CMPLT(range, X-2) -> bool; WHERE */
  int rg = tiny_range(d, 2, sh23, 1);
  int two = tiny_const(d, 2, DT_FP32);
  int xm2 = tiny_alu(d, TINY_SUB, x, two, -1, &dl, "t");
  int rgf = tiny_cast(d, rg, DT_FP32);
  int lt = tiny_alu(d, TINY_CMPLT, rgf, xm2, -1, &dl, "t");
  int neg = tiny_const(d, -1, DT_FP32);
  int wh = tiny_alu(d, TINY_WHERE, lt, x, neg, &dl, "t");
  /* CONST times rsqrt(D): 2/sqrt(16) = 0.5 */
  int c = tiny_const(d, 2, DT_FP32);
  d->u[c].crsqrt = "D";
  int sc = tiny_alu(d, TINY_MUL, x, c, -1, &dl, "t");
  /* REDUCE max over axis 1, min over axis 0, sum over both */
  int rmax = tiny_reduce(d, x, RED_MAX, 1, (const int[]){1}, DT_FP32, &dl, "t");
  int rmin = tiny_reduce(d, x, RED_MIN, 1, (const int[]){0}, DT_FP32, &dl, "t");
  int rsum = tiny_reduce(d, x, RED_SUM, 2, (const int[]){0, 1}, DT_FP32, &dl, "t");
  /* CONTRACT X[m,k] * Xr[k,n] where Xr = reshape [3,2] */
  tiny_contract con = {"matmul", 2, 2, 2, 1, (const char *[]){"m", "k"}, (const char *[]){"k", "n"},
                       (const char *[]){"m", "n"}, (const char *[]){"k"}, {0, 0}};
  int mm = tiny_contract_op(d, x, rs, &con, DT_FP32, &dl, "t");
  tiny_store(d, mm, "Y");
  PBT_CHECK(pad >= 0 && fl >= 0 && pe >= 0 && rs >= 0 && sr >= 0 && vw >= 0 && ex >= 0 && wh >= 0 && sc >= 0 &&
                rmax >= 0 && rmin >= 0 && rsum >= 0 && mm >= 0,
            "a builder failed");
  PBT_CHECK(tiny_verify(d, &dl), "tiny_verify");
  if (pbt_failures) return 1;
  pb_binding b = {0};
  pb_bind(&b, "D", 16);
  expect("PAD [1,0]/[0,1] value 9", d, &b, 1, &X, pad, 2, (const int64_t[]){3, 4},
         (const double[]){9, 9, 9, 9, 1, 2, 3, 9, 4, 5, 6, 9});
  expect("FLIP axis 1", d, &b, 1, &X, fl, 2, s23, (const double[]){3, 2, 1, 6, 5, 4});
  expect("PERMUTE [1,0]", d, &b, 1, &X, pe, 2, (const int64_t[]){3, 2}, (const double[]){1, 4, 2, 5, 3, 6});
  expect("RESHAPE [2,3]->[3,2] row-major", d, &b, 1, &X, rs, 2, (const int64_t[]){3, 2}, x23);
  expect("SHRINK [1,2)x[0,3) step [1,2]", d, &b, 1, &X, sr, 2, (const int64_t[]){1, 2}, (const double[]){4, 6});
  expect("VIEW 2*v0+v1+1 over [6]", d, &b, 1, &X, vw, 2, (const int64_t[]){2, 2}, (const double[]){2, 3, 4, 5});
  expect("EXPAND [1,3]->[2,3]", d, &b, 1, &X, ex, 2, s23, (const double[]){1, 2, 3, 1, 2, 3});
  expect("RANGE [2,3] axis 1", d, &b, 1, &X, rg, 2, s23, (const double[]){0, 1, 2, 0, 1, 2});
  expect("CMPLT(range, X-2) is bool", d, &b, 1, &X, lt, 2, s23, (const double[]){0, 0, 0, 1, 1, 1});
  expect("WHERE(cmp, X, -1)", d, &b, 1, &X, wh, 2, s23, (const double[]){-1, -1, -1, 4, 5, 6});
  expect("CONST 2 times rsqrt(D=16) broadcast", d, &b, 1, &X, sc, 2, s23, (const double[]){0.5, 1, 1.5, 2, 2.5, 3});
  expect("REDUCE max axis 1 (keepdim=false)", d, &b, 1, &X, rmax, 1, (const int64_t[]){2}, (const double[]){3, 6});
  expect("REDUCE min axis 0", d, &b, 1, &X, rmin, 1, (const int64_t[]){3}, (const double[]){1, 2, 3});
  expect("REDUCE sum over all axes is rank 0", d, &b, 1, &X, rsum, 0, NULL, (const double[]){21});
  expect("CONTRACT m,k x k,n -> m,n", d, &b, 1, &X, mm, 2, (const int64_t[]){2, 2}, (const double[]){22, 28, 49, 64});
  pb_result r;
  PBT_CHECK(pb_eval_tiny(d, &none, 1, &X, false, &r) == PB_ERR_UNBOUND, "rsqrt(D) without D must be unbound");
  pb_result_free(&r);
  pb_tensor_free(&X);
  return pbt_failures ? 1 : 0;
}

/* Each node rounds to its dtype (ties to even); REDUCE and CONTRACT round once. */
static int rounding(void) {
  tiny_dag *d = tiny_new(&A, NULL);
  const sx *s4[] = {I(4)};
  int x = tiny_buffer(d, "X", DT_FP16, 1, s4);
  int h = tiny_const(d, ldexp(1, -11), DT_FP16);
  int add = tiny_alu(d, TINY_ADD, x, h, -1, &dl, "t");
  int sum = tiny_reduce(d, x, RED_SUM, 1, (const int[]){0}, DT_FP16, &dl, "t");
  int c32 = tiny_cast(d, x, DT_FP32);
  int third = tiny_const(d, 1.0 / 3.0, DT_FP32);
  int mul = tiny_alu(d, TINY_MUL, c32, third, -1, &dl, "t");
  int back = tiny_cast(d, mul, DT_BF16);
  tiny_store(d, back, "Y");
  PBT_CHECK(tiny_verify(d, &dl), "tiny_verify");
  pb_binding b = {0};
  const double e = ldexp(1, -10); /* fp16 spacing at 1 */
  const double xin[] = {2048.0, 1.0, 1.0, 1.0 + e};
  pb_tensor X = tensor(1, (const int64_t[]){4}, xin);
  /* 2048 + 2^-11 -> 2048; 1 + 2^-11 ties to 1 (even); 1 + 3*2^-11 ties to 1 + 2^-9 (even) */
  expect("fp16 ADD rounds to nearest even", d, &b, 1, &X, add, 1, (const int64_t[]){4},
         (const double[]){2048.0, 1.0, 1.0, 1.0 + 2 * e});
  /* in double 2051.0009765625, rounded once to fp16: 2052.  Summed in fp16
   * step by step it would be 2048, 2048, 2050. */
  expect("REDUCE sums in double, rounds once", d, &b, 1, &X, sum, 0, NULL, (const double[]){2052.0});
  double t = (double)(float)(1.0 / 3.0);
  double want[4];
  for (int i = 0; i < 4; i++) want[i] = dtype_round(DT_BF16, (double)(float)(xin[i] * t));
  expect("fp32 MUL then CAST to bf16", d, &b, 1, &X, back, 1, (const int64_t[]){4}, want);
  pb_tensor_free(&X);
  return pbt_failures ? 1 : 0;
}

static void expect_status(const char *what, pb_status got, pb_status want, const char *why) {
  PBT_CHECK(got == want, "%s: got %s, want %s (%s)", what, pb_status_name(got), pb_status_name(want), why);
  printf("%-44s %-18s %s\n", what, pb_status_name(got), why);
}

static int errors(void) {
  pb_result r;
  pb_binding b = {0};
  /* an unbound symbol */
  tiny_dag *d = tiny_new(&A, NULL);
  const sx *sm[] = {P("M")};
  tiny_store(d, tiny_buffer(d, "X", DT_FP32, 1, sm), "Y");
  pb_tensor X = tensor(1, (const int64_t[]){4}, (const double[]){1, 2, 3, 4});
  expect_status("unbound symbol M", pb_eval_tiny(d, &b, 1, &X, false, &r), PB_ERR_UNBOUND, r.why);
  pb_result_free(&r);
  /* wrong number of inputs, wrong input shape */
  pb_bind(&b, "M", 5);
  expect_status("no input for a BUFFER", pb_eval_tiny(d, &b, 0, NULL, false, &r), PB_ERR_INPUT, r.why);
  pb_result_free(&r);
  expect_status("input of the wrong shape", pb_eval_tiny(d, &b, 1, &X, false, &r), PB_ERR_INPUT, r.why);
  pb_result_free(&r);
  /* a negative size */
  d = tiny_new(&A, NULL);
  const sx *sneg[] = {P("M-7")};
  tiny_store(d, tiny_range(d, 1, sneg, 0), "Y");
  expect_status("size M-7 with M=5", pb_eval_tiny(d, &b, 0, NULL, false, &r), PB_ERR_SHAPE, r.why);
  pb_result_free(&r);
  /* too many elements: [M, N] = 2^20 x 2^20 */
  d = tiny_new(&A, NULL);
  const sx *big[] = {P("M"), P("N")};
  tiny_store(d, tiny_range(d, 2, big, 0), "Y");
  pb_binding bb = {0};
  pb_bind(&bb, "M", 1 << 20);
  pb_bind(&bb, "N", 1 << 20);
  expect_status("2^40 elements", pb_eval_tiny(d, &bb, 0, NULL, false, &r), PB_ERR_TOO_LARGE, r.why);
  pb_result_free(&r);
  pb_tensor t;
  expect_status("pb_tensor_alloc of 2^62 elements", pb_tensor_alloc(&t, 2, (const int64_t[]){1LL << 31, 1LL << 31}),
                PB_ERR_TOO_LARGE, "");
  /* SHRINK [0, N) of an axis of size M < N: the builder cannot tell */
  d = tiny_new(&A, NULL);
  int x = tiny_buffer(d, "X", DT_FP32, 1, sm);
  const sx *lo[] = {I(0)}, *hi[] = {P("N")};
  tiny_store(d, tiny_shrink(d, x, lo, hi, NULL, &dl, "t"), "Y");
  pb_bind(&b, "M", 4);
  pb_bind(&b, "N", 6);
  expect_status("SHRINK past the end at run time", pb_eval_tiny(d, &b, 1, &X, false, &r), PB_ERR_SHAPE, r.why);
  pb_result_free(&r);
  /* a VIEW that reads outside its source */
  d = tiny_new(&A, NULL);
  x = tiny_buffer(d, "X", DT_FP32, 1, (const sx *[]){I(4)});
  const sx *vm[] = {P("v0+1")};
  tiny_store(d, tiny_view(d, x, 1, (const sx *[]){I(4)}, vm), "Y");
  expect_status("VIEW map v0+1 past the end", pb_eval_tiny(d, &b, 1, &X, true, &r), PB_ERR_OOB, r.why);
  pb_result_free(&r);
  /* pb_eval_view of an entry that is not a view */
  d = tiny_new(&A, NULL);
  x = tiny_buffer(d, "X", DT_FP32, 1, (const sx *[]){I(4)});
  int n = tiny_alu(d, TINY_NEG, x, -1, -1, &dl, "t");
  tiny_store(d, n, "Y");
  indexbook *ib = ib_build(&A, d, &dl);
  PBT_CHECK(ib != NULL, "ib_build");
  if (ib) {
    PBT_CHECK(pb_eval_tiny(d, &b, 1, &X, true, &r) == PB_OK, "eval: %s", r.why);
    char why[256] = "";
    pb_tensor v;
    expect_status("pb_eval_view of an ALU entry", pb_eval_view(ib, ib->of_uop[n], &b, r.vals, &v, why, sizeof why),
                  PB_ERR_UNSUPPORTED, why);
    expect_status("pb_eval_view of entry -1", pb_eval_view(ib, -1, &b, r.vals, &v, why, sizeof why), PB_ERR_INPUT, why);
    pb_result_free(&r);
  }
  pb_tensor_free(&X);
  return pbt_failures ? 1 : 0;
}

int main(int argc, char **argv) {
  arena_init(&A);
  diag_init(&dl);
  int rc = 2;
  if (argc == 2 && strcmp(argv[1], "semantics") == 0) rc = semantics();
  else if (argc == 2 && strcmp(argv[1], "rounding") == 0) rc = rounding();
  else if (argc == 2 && strcmp(argv[1], "errors") == 0) rc = errors();
  else fprintf(stderr, "usage: pb_ops semantics | rounding | errors\n");
  if (dl.n && rc) diag_print_text(&dl, "pb_ops");
  diag_free(&dl);
  arena_free(&A);
  return rc;
}
