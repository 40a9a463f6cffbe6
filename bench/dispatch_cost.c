/* dispatch_cost: the host cost of one entry-point call, from the call to
 * the (null) launch: argument and tensor checks, instance selection from
 * the dispatch tables (dtype, variant, shape bucket), chunk-width choice,
 * grid.  Linked with libdlckernels-null, whose backend records the launch
 * instead of making it, so no device or emulator time is counted.  Goal
 * (issue 10, spec §12): at most 100 ns a call.
 *
 *   dispatch_cost [calls] [--cpu] [--sm90a]
 *
 * Prints the median over 9 runs of `calls` calls (default 2000000) of the
 * ns per call, per entry point and shape.  --cpu times with the thread's
 * CPU clock (CLOCK_THREAD_CPUTIME_ID) instead of the wall clock, which on a
 * loaded machine also counts the time the thread waited for a core.
 * --sm90a makes the null backend play an sm90a device (dlc__null_arch), so
 * that the calls take the sm90a kernels' paths (the null backend's tensor
 * map encode does nothing: the driver's cuTensorMapEncodeTiled is not
 * counted).
 * Benchmark only: not a test. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlc/dlc.h"
#include "dlc_internal.h"

static clockid_t clock_id = CLOCK_MONOTONIC;

static double now_ns(void) {
  struct timespec t;
  clock_gettime(clock_id, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void *fake(uintptr_t a) { return (void *)a; }

typedef dlc_status (*call_fn)(const int64_t *s);

static dlc_status gemm(const int64_t *s) {
  return dlc_gemm_bias_relu(DLC_F16, s[0], s[1], s[2], fake(0x10000000), s[2], fake(0x20000000), s[1],
                            fake(0x30000000), fake(0x40000000), s[1], NULL);
}
/* a skinny GEMM with the workspace its split-K plan asks for: two launches */
static dlc_status gemm_split(const int64_t *s) {
  return dlc_gemm_bias_relu_ws(DLC_F16, s[0], s[1], s[2], fake(0x10000000), s[2], fake(0x20000000), s[1],
                               fake(0x30000000), fake(0x40000000), s[1], fake(0x50000000), (size_t)s[3], NULL);
}
static dlc_status gemm_nt(const int64_t *s) {
  return dlc_gemm_bias_relu_nt(DLC_BF16, s[0], s[1], s[2], fake(0x10000000), s[2], fake(0x20000000), s[2],
                               fake(0x30000000), fake(0x40000000), s[1], NULL);
}
static dlc_status conv(const int64_t *s) {
  return dlc_conv2d_bias_silu(DLC_F16, s[0], s[1], s[2], s[3], s[4], 1, 1, 1, 1, fake(0x10000000), fake(0x20000000),
                              fake(0x30000000), fake(0x40000000), NULL);
}
static dlc_status attn(const int64_t *s) {
  return dlc_attention_causal(DLC_F16, s[0], s[1], s[2], s[3], fake(0x10000000), fake(0x20000000), fake(0x30000000),
                              fake(0x40000000), NULL);
}

int main(int argc, char **argv) {
  long calls = 2000000;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--cpu") == 0) clock_id = CLOCK_THREAD_CPUTIME_ID;
    else if (strcmp(argv[i], "--sm90a") == 0) dlc__null_arch = DLC__ARCH_SM90A;
    else calls = strtol(argv[i], NULL, 10);
  }
  if (calls < 1) calls = 1;
  static struct {
    const char *name;
    call_fn fn;
    int64_t s[5];
  } cases[] = {
      {"gemm_bias_relu fp16 16x4096x4096 (decode)", gemm, {16, 4096, 4096}},
      {"gemm_bias_relu fp16 4096x4096x4096", gemm, {4096, 4096, 4096}},
      {"gemm_bias_relu fp16 4096x64x4096 (N <= 64)", gemm, {4096, 64, 4096}},
      {"gemm_bias_relu fp16 512x512x4096 (no ws)", gemm, {512, 512, 4096}},
      {"gemm_bias_relu_ws fp16 512x512x4096 split-K", gemm_split, {512, 512, 4096, 0}},
      {"gemm_bias_relu_nt bf16 1x4096x4096", gemm_nt, {1, 4096, 4096}},
      {"conv2d_bias_silu fp16 32x56x56x64 -> 64", conv, {32, 56, 56, 64, 64}},
      {"conv2d_bias_silu fp16 32x7x7x512 -> 512", conv, {32, 7, 7, 512, 512}},
      {"attention_causal fp16 4x32x2048 d128", attn, {4, 32, 2048, 128}},
  };
  printf("ns per call (median of 9 runs of %ld calls, %s clock), null backend playing %s\n", calls,
         clock_id == CLOCK_MONOTONIC ? "wall" : "thread CPU", dlc__null_arch == DLC__ARCH_SM90A ? "sm90a" : "sm80");
  /* the split-K case passes what dlc_gemm_bias_relu_workspace_size reports (not timed) */
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    if (cases[c].fn == gemm_split)
      cases[c].s[3] = (int64_t)dlc_gemm_bias_relu_workspace_size(DLC_F16, cases[c].s[0], cases[c].s[1], cases[c].s[2]);
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    dlc_status st = cases[c].fn(cases[c].s);
    if (st != DLC_SUCCESS) {
      printf("%-44s %s: %s\n", cases[c].name, dlc_status_string(st), dlc_last_error_detail());
      continue;
    }
    double runs[9];
    for (int r = 0; r < 9; r++) {
      double t0 = now_ns();
      for (long i = 0; i < calls; i++) st |= cases[c].fn(cases[c].s);
      runs[r] = (now_ns() - t0) / (double)calls;
    }
    qsort(runs, 9, sizeof *runs, cmp);
    const dlc__launch_rec *l = dlc__last_launch();
    printf("%-44s %7.1f ns  (%s, grid %u x %u x %u)%s\n", cases[c].name, runs[4], l->kernel->name, l->grid[0],
           l->grid[1], l->grid[2], st ? "  FAILED" : "");
  }
  return 0;
}
