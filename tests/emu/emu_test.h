/*
 * emu_test.h: the harness of the emulator tests (tests/emu).
 *
 * One program, emu_tests, runs one named test per process:
 *   emu_tests <ptx dir> <arch> <test>
 * The tests are listed in tests.def, which CMake also reads to create one
 * CTest entry per test and arch.  A test loads the PTX nvcc made from
 * kernels/<file>.cu for the arch, runs kernels through the public API and
 * compares with a host computation.  Device memory and modules a test makes
 * through the helpers are released by the harness.
 */
#ifndef DLC_EMU_TEST_H
#define DLC_EMU_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dlc/dlcemu.h"

typedef struct tctx {
  const char *arch;    /* "sm_80" or "sm_90a" */
  const char *ptxdir;
  int failures;
  int checks;
  dlcemu_module mods[16];
  int nmods;
  dlcemu_deviceptr ptrs[64];
  int nptrs;
} tctx;

void t_fail(tctx *t, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* a failed CHECK records a failure and goes on; REQUIRE returns from the test */
#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    t->checks++;                                                                                                       \
    if (!(cond)) t_fail(t, __FILE__, __LINE__, __VA_ARGS__);                                                           \
  } while (0)
#define REQUIRE(cond, ...)                                                                                             \
  do {                                                                                                                 \
    t->checks++;                                                                                                       \
    if (!(cond)) {                                                                                                     \
      t_fail(t, __FILE__, __LINE__, __VA_ARGS__);                                                                      \
      return 1;                                                                                                        \
    }                                                                                                                  \
  } while (0)
#define OK(call)                                                                                                       \
  do {                                                                                                                 \
    int rc_ = (call);                                                                                                  \
    REQUIRE(rc_ == 0, "%s -> %s: %s", #call, dlcemu_error_string(rc_), dlcemu_last_error_detail());                    \
  } while (0)

/* load kernels/<file>.cu compiled for the test's arch; NULL after a failure */
dlcemu_module t_load(tctx *t, const char *file);
/* The text of <ptxdir>/<file>.<arch>.ptx (malloc'ed), or NULL. */
char *t_read_ptx(tctx *t, const char *file);
/* load PTX text */
dlcemu_module t_load_text(tctx *t, const char *text);
dlcemu_function t_func(tctx *t, dlcemu_module m, const char *name);
/* device buffer of n bytes, optionally filled from host data */
dlcemu_deviceptr t_alloc(tctx *t, size_t n, const void *init);
void t_download(tctx *t, void *dst, dlcemu_deviceptr src, size_t n);
/* launch with 1-D grid and block; returns the status */
int t_launch(tctx *t, dlcemu_function f, unsigned grid, unsigned block, unsigned shared, void **params);
int t_is_sm90(const tctx *t);

/* deterministic pseudo-random numbers */
uint32_t t_rand(uint32_t *state);

/* host float helpers */
static inline float t_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t t_u32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline double t_f64(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }
static inline uint64_t t_u64(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
/* reference conversions by search over every value of the 16-bit format (independent of the library) */
float t_h2f(uint16_t h);
float t_bf2f(uint16_t h);
uint16_t t_round16(double x, int bf16, int mode); /* mode: 0 rn, 1 rz, 2 rm, 3 rp */

#define TEST(name, mode, desc) int test_##name(tctx *t);
#include "tests.def"
#undef TEST

#endif
