/*
 * emu_test.c: main, the test table (tests.def) and the helpers of emu_test.h.
 */
#include "emu_test.h"
#include "ref.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct test_entry {
  const char *name;
  int (*fn)(tctx *);
} test_entry;

static const test_entry tests[] = {
#define TEST(name, mode, desc) {#name, test_##name},
#include "tests.def"
#undef TEST
};

void t_fail(tctx *t, const char *file, int line, const char *fmt, ...) {
  t->failures++;
  if (t->failures > 40) return;
  fprintf(stderr, "%s:%d: ", file, line);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int t_is_sm90(const tctx *t) { return strcmp(t->arch, "sm_90a") == 0; }

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  if (b) b[n] = 0;
  fclose(f);
  return b;
}

dlcemu_module t_load_text(tctx *t, const char *text) {
  dlcemu_module m = NULL;
  int rc = dlcemu_module_load_data(&m, text);
  if (rc) {
    t_fail(t, __FILE__, __LINE__, "module load: %s: %s", dlcemu_error_string(rc), dlcemu_last_error_detail());
    return NULL;
  }
  if (t->nmods < 16) t->mods[t->nmods++] = m;
  return m;
}

char *t_read_ptx(tctx *t, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.%s.ptx", t->ptxdir, file, t->arch);
  return slurp(path);
}

dlcemu_module t_load(tctx *t, const char *file) {
  char *text = t_read_ptx(t, file);
  if (!text) {
    t_fail(t, __FILE__, __LINE__, "cannot read %s/%s.%s.ptx", t->ptxdir, file, t->arch);
    return NULL;
  }
  dlcemu_module m = t_load_text(t, text);
  free(text);
  return m;
}

dlcemu_function t_func(tctx *t, dlcemu_module m, const char *name) {
  dlcemu_function f = NULL;
  if (!m) return NULL;
  int rc = dlcemu_module_get_function(&f, m, name);
  if (rc) t_fail(t, __FILE__, __LINE__, "get_function %s: %s", name, dlcemu_last_error_detail());
  return f;
}

dlcemu_deviceptr t_alloc(tctx *t, size_t n, const void *init) {
  dlcemu_deviceptr p = 0;
  if (dlcemu_mem_alloc(&p, n)) {
    t_fail(t, __FILE__, __LINE__, "mem_alloc: %s", dlcemu_last_error_detail());
    return 0;
  }
  if (t->nptrs < 64) t->ptrs[t->nptrs++] = p;
  if (init && dlcemu_memcpy_htod(p, init, n)) t_fail(t, __FILE__, __LINE__, "htod: %s", dlcemu_last_error_detail());
  return p;
}

void t_download(tctx *t, void *dst, dlcemu_deviceptr src, size_t n) {
  if (dlcemu_memcpy_dtoh(dst, src, n)) t_fail(t, __FILE__, __LINE__, "dtoh: %s", dlcemu_last_error_detail());
}

int t_launch(tctx *t, dlcemu_function f, unsigned grid, unsigned block, unsigned shared, void **params) {
  (void)t;
  if (!f) return -1;
  return dlcemu_launch_kernel(f, grid, 1, 1, block, 1, 1, shared, params);
}

uint32_t t_rand(uint32_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

float t_h2f(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v;
  if (e == 0) v = ldexpf((float)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexpf((float)(m + 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}

float t_bf2f(uint16_t h) { return t_f32((uint32_t)h << 16); }

/* the finite non-negative values of a 16-bit format in increasing order are
 * its bit patterns 0x0000 .. max: search them.  sticky is the sign of
 * (exact value - x) when x is not exact. */
uint16_t r_round16s(long double x, int sticky, int bf16, int mode) {
  int maxf = bf16 ? 0x7F7F : 0x7BFF, inf = bf16 ? 0x7F80 : 0x7C00;
  if (isnan(x)) return 0x7FFF;
  if (isinf(x)) return (uint16_t)((signbit(x) ? 0x8000 : 0) | inf); /* infinity is exact in every mode */
  int neg = signbit(x) != 0;
  long double a = fabsl(x);
  if (a == 0 && sticky) neg = sticky < 0;
  int smag = sticky == 0 ? 0 : ((sticky > 0) != neg ? 1 : -1); /* direction of the exact magnitude */
  uint16_t s = neg ? 0x8000 : 0;
  int lo = 0, hi = maxf;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    long double v = bf16 ? t_bf2f((uint16_t)mid) : t_h2f((uint16_t)mid);
    if (v <= a) lo = mid;
    else hi = mid - 1;
  }
  long double vlo = bf16 ? t_bf2f((uint16_t)lo) : t_h2f((uint16_t)lo);
  long double ulp_top = bf16 ? (long double)t_bf2f((uint16_t)maxf) - t_bf2f((uint16_t)(maxf - 1))
                             : (long double)t_h2f((uint16_t)maxf) - t_h2f((uint16_t)(maxf - 1));
  long double vhi = lo == maxf ? vlo + ulp_top : (bf16 ? t_bf2f((uint16_t)(lo + 1)) : t_h2f((uint16_t)(lo + 1)));
  int away = (mode == 2 && neg) || (mode == 3 && !neg); /* magnitude rounds up */
  int r;
  if (vlo == a && smag == 0) {
    r = lo;
  } else if (vlo == a && smag < 0) { /* just below vlo */
    r = (mode == 1 || (mode >= 2 && !away)) ? lo - 1 : lo;
  } else if (vlo == a) { /* just above vlo */
    r = away ? lo + 1 : lo;
  } else if (mode == 1 || (mode >= 2 && !away)) {
    r = lo;
  } else if (mode >= 2) {
    r = lo + 1;
  } else {
    long double dl = a - vlo, dh = vhi - a;
    int up = dh < dl || (dh == dl && (smag > 0 || (smag == 0 && (lo & 1))));
    r = up ? lo + 1 : lo;
  }
  if (r > maxf) r = inf;
  if (r < 0) r = 0;
  return (uint16_t)(s | r);
}

uint16_t t_round16(double x, int bf16, int mode) { return r_round16s(x, 0, bf16, mode); }

int main(int argc, char **argv) {
  size_t ntests = sizeof tests / sizeof tests[0];
  if (argc >= 2 && !strcmp(argv[1], "--list")) {
    for (size_t i = 0; i < ntests; i++) printf("%s\n", tests[i].name);
    return 0;
  }
  if (argc != 4) {
    fprintf(stderr, "usage: %s <ptx dir> <arch> <test> | --list\n", argv[0]);
    return 2;
  }
  tctx t;
  memset(&t, 0, sizeof t);
  t.ptxdir = argv[1];
  t.arch = argv[2];
  for (size_t i = 0; i < ntests; i++) {
    if (strcmp(tests[i].name, argv[3])) continue;
    int rc = tests[i].fn(&t);
    for (int k = 0; k < t.nptrs; k++) dlcemu_mem_free(t.ptrs[k]);
    for (int k = 0; k < t.nmods; k++) dlcemu_module_unload(t.mods[k]);
    if (rc || t.failures) {
      fprintf(stderr, "FAIL %s (%s): %d of %d checks failed\n", argv[3], t.arch, t.failures, t.checks);
      return 1;
    }
    printf("PASS %s (%s): %d checks\n", argv[3], t.arch, t.checks);
    return 0;
  }
  fprintf(stderr, "unknown test %s\n", argv[3]);
  return 2;
}
