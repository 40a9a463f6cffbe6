/* Hostile arguments against the entry points of the default manifest
 * (libdlckernels-emu; issue 12; of the row skeleton's, layernorm, whose
 * dispatcher softmax and rmsnorm share in form): negative, INT64_MIN and INT64_MAX dims,
 * strides and pads, huge and short leading dimensions, NULL, misaligned and
 * wrapping pointers for every operand, bias and output, dtypes outside the
 * enum, grids whose arithmetic overflows int64, and empty outputs with bad
 * arguments.  Each case must return its status with a detail naming the
 * offending value, and leave every byte of every buffer as it was: each
 * buffer is random bytes with canary zones on both sides, read back whole
 * after every call.  Under the asan preset a signed overflow in a
 * dispatcher aborts the run.
 *
 * One valid call per entry point runs too, and must change its output: that
 * shows the canary comparison sees a kernel's writes. */
#include <limits.h>

#include "../unit/check.h"
#include "kt.h"

enum { NBUF = 4, GUARD = 256, PAYLOAD = 8192, TOTAL = GUARD + PAYLOAD + GUARD };

static dlcemu_deviceptr dev[NBUF];
static uint8_t want[NBUF][TOTAL], got[NBUF][TOTAL];

static void *payload(int i) { return kt_ptr(dev[i] + GUARD); }

/* Every buffer as it was after fill(): canaries and payload. */
static int intact(void) {
  int ok = 1;
  for (int i = 0; i < NBUF; i++) {
    dlcemu_memcpy_dtoh(got[i], dev[i], TOTAL);
    ok &= memcmp(got[i], want[i], TOTAL) == 0;
  }
  return ok;
}

static void restore(void) {
  for (int i = 0; i < NBUF; i++) dlcemu_memcpy_htod(dev[i], want[i], TOTAL);
}

/* canaries: random bytes; payloads: fp16 values in [-1, 1) (bf16 reads
 * them as other finite numbers), so that the valid calls compute numbers */
static void fill(void) {
  uint64_t s = 12;
  for (int i = 0; i < NBUF; i++) {
    for (int j = 0; j < TOTAL; j++) want[i][j] = (uint8_t)(kt_next(&s) >> 56);
    for (int j = GUARD; j < GUARD + PAYLOAD; j += 2) {
      uint16_t h = kt_f32_to_f16((float)kt_uniform(&s));
      memcpy(&want[i][j], &h, 2);
    }
  }
  restore();
}

/* One call of any entry point: its int64 arguments before the tensors (dims,
 * then attrs), its tensors in argument order, and their leading dims. */
typedef struct call {
  dlc_dtype dt;
  int64_t v[9];
  const void *p[NBUF];
  int64_t ld[NBUF];
  struct CUstream_st *stream;
} call;

typedef enum { DIM, CDIM, STRIDE, PAD } vkind; /* CDIM: compiled in (a variant) */

typedef struct op {
  const char *name;
  int nv;
  const char *vname[9];
  vkind vk[9];
  const char *pname[NBUF];
  int has_ld[NBUF];
  dlc_status (*run)(const call *);
  call base; /* valid; its output fits in PAYLOAD */
} op;

static dlc_status run_gemm(const call *c) {
  return dlc_gemm_bias_relu(c->dt, c->v[0], c->v[1], c->v[2], c->p[0], c->ld[0], c->p[1], c->ld[1], c->p[2],
                            (void *)(uintptr_t)c->p[3], c->ld[3], c->stream);
}
static dlc_status run_gemm_nt(const call *c) {
  return dlc_gemm_bias_relu_nt(c->dt, c->v[0], c->v[1], c->v[2], c->p[0], c->ld[0], c->p[1], c->ld[1], c->p[2],
                               (void *)(uintptr_t)c->p[3], c->ld[3], c->stream);
}
static dlc_status run_conv(const call *c) {
  return dlc_conv2d_bias_silu(c->dt, c->v[0], c->v[1], c->v[2], c->v[3], c->v[4], c->v[5], c->v[6], c->v[7], c->v[8],
                              c->p[0], c->p[1], c->p[2], (void *)(uintptr_t)c->p[3], c->stream);
}
static dlc_status run_attention(const call *c) {
  return dlc_attention_causal(c->dt, c->v[0], c->v[1], c->v[2], c->v[3], c->p[0], c->p[1], c->p[2],
                              (void *)(uintptr_t)c->p[3], c->stream);
}

static dlc_status run_layernorm(const call *c) {
  return dlc_layernorm(c->dt, c->v[0], c->v[1], c->p[0], c->ld[0], c->p[1], c->p[2], (void *)(uintptr_t)c->p[3], c->ld[3],
                       c->stream);
}

static int ncases;

/* Runs one case: status, a detail that contains `needle` (when given), and
 * every buffer byte-identical. */
static void expect(const op *o, const char *what, const call *c, dlc_status st, const char *needle) {
  dlc_status r = o->run(c);
  const char *d = dlc_last_error_detail();
  int ok_status = r == st, ok_detail = st == DLC_SUCCESS ? d[0] == 0 : d[0] != 0 && (!needle || strstr(d, needle));
  int ok_bytes = intact();
  ncases++;
  CHECK(ok_status && ok_detail && ok_bytes);
  if (!(ok_status && ok_detail && ok_bytes)) {
    fprintf(stderr, "  %s, %s: got %s (\"%s\"), want %s%s%s%s\n", o->name, what, dlc_status_string(r), d,
            dlc_status_string(st), needle ? " naming " : "", needle ? needle : "", ok_bytes ? "" : "; buffers changed");
    if (!ok_bytes) restore();
  }
}

static const char *num(int64_t v) {
  static char buf[8][32];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%lld", (long long)v);
  return buf[k];
}

/* Addresses for calls whose tensors are too large to exist (they fail before
 * any launch): far enough apart that no two of them share a byte, so the
 * overlap check passes and the check the case is about is reached. */
static void apart(call *c, uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3) {
  c->p[0] = (const void *)a0, c->p[1] = (const void *)a1, c->p[2] = (const void *)a2, c->p[3] = (const void *)a3;
}

/* The cases every entry point gets, from its table row. */
static void generic_cases(const op *o) {
  char what[96];
  /* the valid call runs and writes its output, and nothing else */
  {
    dlc_status r = o->run(&o->base);
    CHECK(r == DLC_SUCCESS);
    intact();
    int others = 1;
    for (int i = 0; i < NBUF - 1; i++) others &= memcmp(got[i], want[i], TOTAL) == 0;
    CHECK(others);
    CHECK(memcmp(got[3], want[3], GUARD) == 0 && memcmp(got[3] + GUARD + PAYLOAD, want[3] + GUARD + PAYLOAD, GUARD) == 0);
    CHECK(memcmp(got[3] + GUARD, want[3] + GUARD, PAYLOAD) != 0); /* the comparison sees a kernel's writes */
    restore();
  }
  /* int64 arguments: negative, INT64_MIN, INT64_MAX; a stride of 0 */
  for (int i = 0; i < o->nv; i++) {
    const int64_t vals[] = {-1, INT64_MIN, INT64_MAX, 0};
    for (int j = 0; j < 4; j++) {
      call c = o->base;
      c.v[i] = vals[j];
      dlc_status st = DLC_ERROR_INVALID_VALUE;
      if (vals[j] == 0 && o->vk[i] != STRIDE) continue; /* 0 dims: the empty cases below */
      if (vals[j] == INT64_MAX && o->vk[i] != DIM) st = DLC_ERROR_NOT_SUPPORTED; /* no such variant */
      snprintf(what, sizeof what, "%s = %lld", o->vname[i], (long long)vals[j]);
      expect(o, what, &c, st, num(vals[j]));
    }
  }
  /* pointers: NULL, one byte off, and a span that wraps the address space */
  for (int i = 0; i < NBUF; i++) {
    call c = o->base;
    c.p[i] = NULL;
    snprintf(what, sizeof what, "%s = NULL", o->pname[i]);
    expect(o, what, &c, DLC_ERROR_INVALID_VALUE, "is NULL");
    c.p[i] = (const char *)payload(i) + 1;
    snprintf(what, sizeof what, "%s + 1 byte", o->pname[i]);
    expect(o, what, &c, DLC_ERROR_MISALIGNED, "not aligned");
    c.p[i] = (const void *)(UINTPTR_MAX - 15); /* element-aligned, 16 bytes below the top */
    snprintf(what, sizeof what, "%s at the top of the address space", o->pname[i]);
    expect(o, what, &c, DLC_ERROR_INVALID_VALUE, "wraps");
  }
  /* leading dims: 0, negative, one short of the row, INT64_MAX (the span
   * overflows), INT64_MAX / 2 (the span in bytes overflows) */
  for (int i = 0; i < NBUF; i++) {
    if (!o->has_ld[i]) continue;
    const int64_t vals[] = {0, -7, INT64_MIN, o->base.ld[i] - 1, INT64_MAX, INT64_MAX / 2};
    for (int j = 0; j < 6; j++) {
      call c = o->base;
      c.ld[i] = vals[j];
      snprintf(what, sizeof what, "ld%s = %lld", o->pname[i], (long long)vals[j]);
      expect(o, what, &c, DLC_ERROR_INVALID_VALUE, num(vals[j]));
    }
  }
  /* the output (the last tensor) on each input, and one element into it:
   * in-place calls are not supported, and a partial overlap is caught too */
  for (int i = 0; i < NBUF - 1; i++) {
    call c = o->base;
    c.p[NBUF - 1] = c.p[i];
    if (o->has_ld[NBUF - 1] && o->has_ld[i]) c.ld[NBUF - 1] = c.ld[i];
    snprintf(what, sizeof what, "%s = %s", o->pname[NBUF - 1], o->pname[i]);
    expect(o, what, &c, DLC_ERROR_INVALID_VALUE, "overlaps");
    c.p[NBUF - 1] = (const char *)c.p[i] + 2;
    snprintf(what, sizeof what, "%s = %s + 2 bytes", o->pname[NBUF - 1], o->pname[i]);
    expect(o, what, &c, DLC_ERROR_INVALID_VALUE, "overlaps");
  }
  /* dtypes: outside the enum, and in it but not compiled */
  {
    call c = o->base;
    c.dt = (dlc_dtype)77;
    expect(o, "dtype = 77", &c, DLC_ERROR_INVALID_VALUE, "77");
    c.dt = (dlc_dtype)-1;
    expect(o, "dtype = -1", &c, DLC_ERROR_INVALID_VALUE, "-1");
    c.dt = DLC_F32;
    expect(o, "dtype = DLC_F32", &c, DLC_ERROR_NOT_SUPPORTED, "DLC_F32");
  }
  /* the emulator runs synchronously */
  {
    call c = o->base;
    c.stream = (struct CUstream_st *)0x10;
    expect(o, "a stream", &c, DLC_ERROR_INVALID_VALUE, NULL);
  }
}

/* An empty output (dim `zero` = 0): with every argument bad it fails; with
 * NULL for the tensors that have no elements it succeeds and writes nothing;
 * a misaligned output or a NULL non-empty input still fails. */
static void empty_cases(const op *o, int zero, const int empty[NBUF]) {
  call c = o->base;
  c.v[zero] = 0;
  for (int i = 0; i < NBUF; i++) c.p[i] = NULL, c.ld[i] = -7;
  int bad = 0; /* a tensor with elements, or a leading dim */
  for (int i = 0; i < NBUF; i++) bad |= o->has_ld[i] || !empty[i];
  expect(o, "empty, NULLs and ld = -7", &c, bad ? DLC_ERROR_INVALID_VALUE : DLC_SUCCESS, NULL);
  c = o->base;
  c.v[zero] = 0;
  for (int i = 0; i < NBUF; i++)
    if (empty[i]) c.p[i] = NULL;
  expect(o, "empty, NULL for the empty tensors", &c, DLC_SUCCESS, NULL);
  for (int i = 0; i < NBUF; i++) {
    call b = c;
    b.p[i] = (const char *)payload(i) + 1;
    expect(o, "empty, a pointer one byte off", &b, DLC_ERROR_MISALIGNED, "not aligned");
    if (empty[i]) continue;
    b.p[i] = NULL;
    expect(o, "empty, NULL for a tensor with elements", &b, DLC_ERROR_INVALID_VALUE, "is NULL");
  }
  for (int i = 0; i < NBUF; i++) {
    if (!o->has_ld[i]) continue;
    call b = c;
    b.ld[i] = -7;
    expect(o, "empty, ld = -7", &b, DLC_ERROR_INVALID_VALUE, "-7");
  }
  c.v[zero] = -1;
  expect(o, "a negative dim with NULLs", &c, DLC_ERROR_INVALID_VALUE, "-1");
}

int main(void) {
  for (int i = 0; i < NBUF; i++) CHECK(dlcemu_mem_alloc(&dev[i], TOTAL) == 0);
  fill();
  const int64_t M = 20, N = 24, K = 40;
  op gemm = {"gemm_bias_relu", 3, {"m", "n", "k"}, {DIM, DIM, DIM}, {"a", "b", "bias", "c"}, {1, 1, 0, 1}, run_gemm,
             {DLC_F16, {M, N, K}, {payload(0), payload(1), payload(2), payload(3)}, {K, N, 0, N}, NULL}};
  op gemm_nt = gemm;
  gemm_nt.name = "gemm_bias_relu_nt", gemm_nt.run = run_gemm_nt, gemm_nt.base.ld[1] = K;
  op conv = {"conv2d_bias_silu", 9,
             {"n", "h", "w", "c", "k", "stride0", "stride1", "pad0", "pad1"},
             {DIM, DIM, DIM, DIM, DIM, STRIDE, STRIDE, PAD, PAD},
             {"x", "wt", "bias", "y"}, {0, 0, 0, 0}, run_conv,
             {DLC_F16, {1, 8, 8, 8, 8, 1, 1, 1, 1}, {payload(0), payload(1), payload(2), payload(3)}, {0}, NULL}};
  op att = {"attention_causal", 4, {"b", "h", "s", "d"}, {DIM, DIM, DIM, CDIM}, {"q", "k", "v", "o"}, {0, 0, 0, 0},
            run_attention, {DLC_F16, {1, 2, 16, 64}, {payload(0), payload(1), payload(2), payload(3)}, {0}, NULL}};
  /* the row skeleton's entry points share one dispatcher generator: layernorm has four tensors */
  op ln = {"layernorm", 2, {"m", "n"}, {DIM, DIM}, {"x", "gamma", "beta", "y"}, {1, 0, 0, 1}, run_layernorm,
           {DLC_F16, {M, N}, {payload(0), payload(1), payload(2), payload(3)}, {N, 0, 0, N}, NULL}};
  const op *ops[] = {&gemm, &gemm_nt, &conv, &att, &ln};
  for (int i = 0; i < 5; i++) generic_cases(ops[i]);

  /* empty outputs */
  empty_cases(&gemm, 0, (const int[]){1, 0, 0, 1});    /* m = 0: A and C are empty */
  empty_cases(&gemm_nt, 1, (const int[]){0, 1, 1, 1}); /* n = 0: B, bias and C */
  empty_cases(&conv, 0, (const int[]){1, 0, 0, 1});    /* n = 0: X and Y */
  empty_cases(&att, 0, (const int[]){1, 1, 1, 1});     /* b = 0: all four */
  empty_cases(&ln, 0, (const int[]){1, 0, 0, 1});      /* m = 0: X and Y */
  {
    call c = ln.base;
    c.v[0] = (int64_t)1 << 31; /* one CTA a row: grid x over 2^31 - 1 */
    c.v[1] = 1, c.ld[0] = c.ld[3] = 1, c.p[0] = (const void *)(uintptr_t)0x1000;
    c.p[3] = (const void *)(uintptr_t)0x100000000000; /* 2^31 bytes of x end below it */
    expect(&ln, "m = 2^31, n = 1", &c, DLC_ERROR_NOT_SUPPORTED, "2147483648");
  }

  /* spans and grids whose arithmetic leaves int64 (signed overflow in the
   * dispatcher before issue 12) */
  for (int g = 0; g < 2; g++) {
    const op *o = g ? &gemm_nt : &gemm;
    call c = o->base;
    /* C's span (m - 1) * ldc + n wraps: the call wrote c[-1] */
    c.v[0] = 2, c.ld[3] = INT64_MAX;
    expect(o, "m = 2, ldc = INT64_MAX", &c, DLC_ERROR_INVALID_VALUE, "9223372036854775807");
    /* n = 2^61 fits every span, but 127 * n does not fit in int64 */
    c = o->base;
    c.v[0] = 1, c.v[1] = (int64_t)1 << 61, c.v[2] = 1, c.ld[0] = 1, c.ld[1] = g ? 1 : (int64_t)1 << 61,
    c.ld[3] = (int64_t)1 << 61;
    /* B, bias and C span 2^62 bytes each */
    apart(&c, 0x1000, 0x2000, 0x2000 + ((uintptr_t)1 << 62), 0x2000 + ((uintptr_t)1 << 63));
    expect(o, "n = 2^61", &c, DLC_ERROR_NOT_SUPPORTED, "2305843009213693952");
    /* n = 2^62: B spans 2^63 bytes */
    c.v[1] = c.ld[3] = (int64_t)1 << 62;
    if (!g) c.ld[1] = (int64_t)1 << 62;
    expect(o, "n = 2^62", &c, DLC_ERROR_INVALID_VALUE, "4611686018427387904");
    /* a grid over the device limits, computed without overflow: 2^31 or
     * more M tiles on blockIdx.x (m = 2^23, past the old 65535 M tiles on
     * y, now launches: kernels.grid_holds_more_than_65535_m_tiles...) */
    c = o->base;
    c.v[0] = (int64_t)1 << 38;
    apart(&c, 0x1000, (uintptr_t)payload(1), (uintptr_t)payload(2), (uintptr_t)1 << 50);
    expect(o, "m = 2^38", &c, DLC_ERROR_NOT_SUPPORTED, "2147483647");
    /* a reduction the kernels cannot count in 32 bits: m = n = 1, k = 2^31 */
    c = o->base;
    c.v[0] = 1, c.v[1] = 1, c.v[2] = (int64_t)1 << 31, c.ld[0] = (int64_t)1 << 31, c.ld[1] = g ? (int64_t)1 << 31 : 1,
    c.ld[3] = 1;
    apart(&c, 0x1000, (uintptr_t)1 << 40, (uintptr_t)payload(2), (uintptr_t)1 << 41);
    expect(o, "k = 2^31", &c, DLC_ERROR_NOT_SUPPORTED, "2147483648");
  }
  {
    call c = conv.base;
    /* (h + 1) / 2 with h = INT64_MAX (stride 2), X and W empty (c = 0) */
    c.v[1] = INT64_MAX, c.v[2] = 1, c.v[3] = 0, c.v[5] = c.v[6] = 2;
    expect(&conv, "h = INT64_MAX, c = 0, stride 2", &c, DLC_ERROR_INVALID_VALUE, "9223372036854775807");
    c.v[5] = c.v[6] = 1;
    expect(&conv, "h = INT64_MAX, c = 0, stride 1", &c, DLC_ERROR_INVALID_VALUE, "9223372036854775807");
    /* n*h*w = 2^58 fits, 63*n*h*w does not */
    c = conv.base;
    c.v[0] = (int64_t)1 << 40, c.v[1] = c.v[2] = 512, c.v[3] = c.v[4] = 1;
    apart(&c, 0x1000, (uintptr_t)payload(1), (uintptr_t)payload(2), (uintptr_t)1 << 62);
    expect(&conv, "n*h*w = 2^58", &c, DLC_ERROR_NOT_SUPPORTED, "1099511627776");
    /* x's element count overflows */
    c = conv.base;
    c.v[3] = (int64_t)1 << 60;
    expect(&conv, "c = 2^60", &c, DLC_ERROR_INVALID_VALUE, "1152921504606846976");
    /* a variant the manifest does not list */
    c = conv.base;
    c.v[5] = c.v[6] = 3;
    expect(&conv, "stride 3", &c, DLC_ERROR_NOT_SUPPORTED, "stride=(3,3)");
  }
  {
    call c = att.base;
    c.v[0] = 70000; /* grid y = b * h over 65535 */
    apart(&c, (uintptr_t)1 << 40, (uintptr_t)2 << 40, (uintptr_t)3 << 40, (uintptr_t)4 << 40);
    expect(&att, "b = 70000", &c, DLC_ERROR_NOT_SUPPORTED, "140000");
    c = att.base;
    c.v[0] = c.v[1] = (int64_t)1 << 31; /* b * h * s * 64 overflows */
    expect(&att, "b = h = 2^31", &c, DLC_ERROR_INVALID_VALUE, "2147483648");
    c = att.base;
    c.v[3] = 96;
    expect(&att, "d = 96", &c, DLC_ERROR_NOT_SUPPORTED, "D=96");
    c.v[3] = 128; /* the D = 128 instance has its own checks */
    c.p[3] = (const char *)payload(3) + 1;
    expect(&att, "d = 128, o + 1 byte", &c, DLC_ERROR_MISALIGNED, "not aligned");
    c.p[3] = payload(3), c.v[2] = INT64_MAX;
    expect(&att, "d = 128, s = INT64_MAX", &c, DLC_ERROR_INVALID_VALUE, "9223372036854775807");
  }
  /* tensors that share a buffer without sharing a byte: A and C as column
   * slices of one buffer of rows of K + N elements (rows of one pitch are
   * compared row by row), and bias in the gap after C's last row */
  for (int g = 0; g < 2; g++) {
    const op *o = g ? &gemm_nt : &gemm;
    call c = o->base;
    const int64_t ld = K + N;
    c.p[0] = payload(0), c.ld[0] = ld;
    c.p[3] = (const char *)payload(0) + 2 * K, c.ld[3] = ld;
    c.p[2] = (const char *)payload(0) + 2 * (M * ld); /* past both */
    dlc_status r = o->run(&c);
    CHECK(r == DLC_SUCCESS);
    if (r != DLC_SUCCESS) fprintf(stderr, "  %s, A and C interleaved: %s (%s)\n", o->name, dlc_status_string(r), dlc_last_error_detail());
    restore();
    /* one column more of C reaches A's next row */
    c.p[3] = (const char *)payload(0) + 2 * (K - 1);
    expect(o, "C one column into A's rows", &c, DLC_ERROR_INVALID_VALUE, "output c overlaps input a");
    /* rows of another pitch inside C's first-to-last range: taken as overlapping */
    c.p[3] = (const char *)payload(0) + 2 * K, c.ld[0] = ld + 8;
    c.p[2] = (const char *)payload(2);
    expect(o, "A and C of different pitches", &c, DLC_ERROR_INVALID_VALUE, "different pitches");
  }
  /* the workspace shares no byte with a tensor */
  {
    const call *c = &gemm.base;
    dlc_status r = dlc_gemm_bias_relu_ws(c->dt, c->v[0], c->v[1], c->v[2], c->p[0], c->ld[0], c->p[1], c->ld[1], c->p[2],
                                         (void *)(uintptr_t)c->p[3], c->ld[3], (char *)payload(1) - GUARD, GUARD + 2, NULL);
    CHECK(r == DLC_ERROR_INVALID_VALUE && strstr(dlc_last_error_detail(), "workspace") &&
          strstr(dlc_last_error_detail(), "overlaps input b"));
    CHECK(intact());
    r = dlc_gemm_bias_relu_ws(c->dt, c->v[0], c->v[1], c->v[2], c->p[0], c->ld[0], c->p[1], c->ld[1], c->p[2],
                              (void *)(uintptr_t)c->p[3], c->ld[3], (char *)payload(1) - GUARD, GUARD, NULL);
    CHECK(r == DLC_SUCCESS); /* ending where B begins */
    restore();
    ncases += 2;
  }
  /* bf16 goes through the same checks */
  {
    call c = gemm.base;
    c.dt = DLC_BF16, c.p[2] = (const char *)payload(2) + 1;
    expect(&gemm, "bf16, bias + 1 byte", &c, DLC_ERROR_MISALIGNED, "bias = ");
    c = conv.base;
    c.dt = DLC_BF16, c.v[5] = c.v[6] = 2, c.p[3] = (const char *)payload(3) + 3;
    expect(&conv, "bf16, stride 2, y + 3 bytes", &c, DLC_ERROR_MISALIGNED, "not aligned");
  }
  printf("test_hostile_emu: %d cases\n", ncases);
  for (int i = 0; i < NBUF; i++) dlcemu_mem_free(dev[i]);
  return check_status("test_hostile_emu");
}
