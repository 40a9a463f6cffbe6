#define _POSIX_C_SOURCE 200809L
/* layout_stats: what the layout pass's conversion buys, in the emulator.
 * Runs, at one shape (default N=2, 56x56, C=K=64, 3x3, stride 1, pad 1,
 * fp16), the three convolutions of tests/kernels/extra:
 *   conv_nchw_pinned  the NCHW/KCRS conv with its stored layouts pinned
 *              (layout_perm given): one kernel, X loaded one element per
 *              copy (W2104), what the pass replaces;
 *   conv_nchw  the same graph with nothing pinned.  The layout pass converts X
 *              to NHWC and Wt to KRSC, so dlc_conv_nchw_ws runs a chain:
 *              two row-skeleton conversion kernels writing the workspace,
 *              then the conv reading it in 16-byte chunks;
 *   conv_nhwc  the same conv on operands already stored NHWC / KRSC: the
 *              chain's last kernel, alone.
 * It prints each launch's counts (instructions, cp.async, shared stores,
 * global load and store requests, bytes and sectors) and the chain's
 * total.  docs/layout.md records the figures.  A benchmark that prints
 * figures; ctest does not run it.
 *
 *   layout_stats [N H W C K] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlc/dlc.h"
#include "dlc/dlc_ops.h"
#include "dlc/dlcemu.h"
#include "dlc_internal.h"

#define MAX_LAUNCHES 8

/* The launches of one entry-point call: the backend's hook runs before each
 * launch, when the emulator's last statistics are those of the launch
 * before it. */
static struct {
  int n;
  const char *name[MAX_LAUNCHES];
  dlcemu_launch_stats st[MAX_LAUNCHES];
} rec;

static int hook(const dlc__kernel *k, unsigned gx, unsigned gy, unsigned gz) {
  (void)gx, (void)gy, (void)gz;
  if (rec.n > 0 && rec.n <= MAX_LAUNCHES) dlcemu_last_launch_stats(&rec.st[rec.n - 1]);
  if (rec.n < MAX_LAUNCHES) rec.name[rec.n] = k->name;
  rec.n++;
  return 0; /* run it */
}

static void *buf(size_t bytes, uint64_t *seed) {
  dlcemu_deviceptr p;
  if (dlcemu_mem_alloc(&p, bytes ? bytes : 1)) return NULL;
  uint16_t *h = malloc(bytes + 2);
  if (!h) return NULL;
  for (size_t i = 0; i < bytes / 2; i++) {
    *seed = *seed * 6364136223846793005ull + 1;
    h[i] = (uint16_t)(0x3000 + ((*seed >> 40) & 0x3FF));
  }
  dlcemu_memcpy_htod(p, h, bytes);
  free(h);
  return (void *)(uintptr_t)p;
}

static void add(dlcemu_launch_stats *t, const dlcemu_launch_stats *s) {
  t->warp_instructions += s->warp_instructions;
  for (int c = 0; c < DLCEMU_CLASS_COUNT; c++) t->class_count[c] += s->class_count[c];
  t->cp_async.requests += s->cp_async.requests;
  t->cp_async_copies += s->cp_async_copies;
  t->shared_store.requests += s->shared_store.requests;
  t->ldmatrix.requests += s->ldmatrix.requests;
  t->stmatrix.requests += s->stmatrix.requests;
  t->global_load.requests += s->global_load.requests;
  t->global_load.bytes += s->global_load.bytes;
  t->global_load.sectors += s->global_load.sectors;
  t->global_store.requests += s->global_store.requests;
  t->global_store.bytes += s->global_store.bytes;
  t->global_store.sectors += s->global_store.sectors;
}

static void print(const char *what, const dlcemu_launch_stats *s) {
  printf("  %-34s %12llu warp instr  cp.async %9llu (copies %9llu)  st.shared %9llu  mma %9llu\n", what,
         s->warp_instructions, s->cp_async.requests, s->cp_async_copies, s->shared_store.requests,
         s->class_count[DLCEMU_CLASS_TENSOR] - s->ldmatrix.requests - s->stmatrix.requests);
  printf("  %-34s global loads: requests %9llu bytes %10llu sectors %9llu (bytes/32 %9llu)\n", "", s->global_load.requests,
         s->global_load.bytes, s->global_load.sectors, s->global_load.bytes / 32);
  printf("  %-34s global stores: requests %9llu bytes %10llu sectors %9llu (bytes/32 %9llu)\n", "",
         s->global_store.requests, s->global_store.bytes, s->global_store.sectors, s->global_store.bytes / 32);
}

/* Prints every launch of the call just made, and their total. */
static void report(const char *op, dlc_status st) {
  if (rec.n > 0 && rec.n <= MAX_LAUNCHES) dlcemu_last_launch_stats(&rec.st[rec.n - 1]);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "%s: %s: %s\n", op, dlc_status_string(st), dlc_last_error_detail());
    exit(1);
  }
  dlcemu_launch_stats total;
  memset(&total, 0, sizeof total);
  printf("%s: %d launch%s\n", op, rec.n, rec.n == 1 ? "" : "es");
  for (int i = 0; i < rec.n && i < MAX_LAUNCHES; i++) {
    print(rec.name[i], &rec.st[i]);
    add(&total, &rec.st[i]);
  }
  if (rec.n > 1) print("total", &total);
  rec.n = 0;
}

int main(int argc, char **argv) {
  int64_t n = 2, h = 56, w = 56, c = 64, k = 64;
  if (argc == 6) n = atoll(argv[1]), h = atoll(argv[2]), w = atoll(argv[3]), c = atoll(argv[4]), k = atoll(argv[5]);
  if (n < 1 || h < 1 || w < 1 || c < 1 || k < 1) {
    fprintf(stderr, "usage: layout_stats [N H W C K] (each at least 1)\n");
    return 2;
  }
  uint64_t seed = 1;
  void *x = buf((size_t)(n * c * h * w) * 2, &seed), *wt = buf((size_t)(k * c * 9) * 2, &seed);
  void *y = buf((size_t)(n * k * h * w) * 2, &seed);
  size_t wsb = dlc_conv_nchw_workspace_size(DLC_F16, n, h, w, c, k);
  void *ws = buf(wsb, &seed);
  if (!x || !wt || !y || !ws) return 1;
  printf("fp16 N=%lld C=%lld H=%lld W=%lld K=%lld, 3x3, stride 1, pad 1; conv_nchw's workspace %zu bytes\n",
         (long long)n, (long long)c, (long long)h, (long long)w, (long long)k, wsb);
  dlc__launch_hook = hook;
  report("conv_nchw_pinned (X NCHW, Wt KCRS: as given)", dlc_conv_nchw_pinned(DLC_F16, n, h, w, c, k, x, wt, y, NULL));
  report("conv_nchw (X NCHW, Wt KCRS: converted)", dlc_conv_nchw_ws(DLC_F16, n, h, w, c, k, x, wt, y, ws, wsb, NULL));
  /* the same buffers: only the layout the kernel assumes differs */
  report("conv_nhwc (X NHWC, Wt KRSC)", dlc_conv_nhwc(DLC_F16, n, h, w, c, k, x, wt, y, NULL));
  return 0;
}
