#define _POSIX_C_SOURCE 200809L
/* layout_stats: what W2104 costs, in the emulator.  Runs the NCHW/KCRS
 * convolution of tests/kernels/extra (conv_nchw, whose X is loaded one
 * element per cp.async) at the shape bench/kernel_stats runs the NHWC one
 * (N=2, 56x56, C=K=64, 3x3, stride 1, pad 1), and prints its cp.async and
 * global-load counts.  Compare with kernel_stats's "conv2d_bias_silu fp16
 * ... stride 1" block (docs/layout.md has both).  A benchmark that prints
 * figures; ctest does not run it.
 *
 *   layout_stats [N H W C K] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dlc/dlc.h"
#include "dlc/dlc_ops.h"
#include "dlc/dlcemu.h"

static void *buf(size_t bytes, uint64_t *seed) {
  dlcemu_deviceptr p;
  if (dlcemu_mem_alloc(&p, bytes)) return NULL;
  uint16_t *h = malloc(bytes);
  if (!h) return NULL;
  for (size_t i = 0; i < bytes / 2; i++) {
    *seed = *seed * 6364136223846793005ull + 1;
    h[i] = (uint16_t)(0x3000 + ((*seed >> 40) & 0x3FF));
  }
  dlcemu_memcpy_htod(p, h, bytes);
  free(h);
  return (void *)(uintptr_t)p;
}

int main(int argc, char **argv) {
  int64_t n = 2, h = 56, w = 56, c = 64, k = 64;
  if (argc == 6) n = atoll(argv[1]), h = atoll(argv[2]), w = atoll(argv[3]), c = atoll(argv[4]), k = atoll(argv[5]);
  uint64_t seed = 1;
  void *x = buf((size_t)(n * c * h * w) * 2, &seed), *wt = buf((size_t)(k * c * 9) * 2, &seed);
  void *y = buf((size_t)(n * k * h * w) * 2, &seed);
  if (!x || !wt || !y) return 1;
  dlc_status st = dlc_conv_nchw(DLC_F16, n, h, w, c, k, x, wt, y, NULL);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "conv_nchw: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    return 1;
  }
  dlcemu_launch_stats s;
  dlcemu_last_launch_stats(&s);
  printf("conv_nchw fp16  N=%lld C=%lld H=%lld W=%lld K=%lld  (%llu warp instructions)\n", (long long)n, (long long)c,
         (long long)h, (long long)w, (long long)k, s.warp_instructions);
  printf("  async-copy class %llu warp instructions; shared requests: cp.async st %llu  st.shared %llu  ld.shared %llu  "
         "ldmatrix %llu\n",
         s.class_count[DLCEMU_CLASS_ASYNC_COPY], s.cp_async.requests, s.shared_store.requests, s.shared_load.requests,
         s.ldmatrix.requests);
  printf("  mma.sync m16n8k16 %llu\n", s.class_count[DLCEMU_CLASS_TENSOR] - s.ldmatrix.requests - s.stmatrix.requests);
  printf("  global loads: requests %llu  bytes %llu  sectors %llu  bytes/32 %llu\n", s.global_load.requests,
         s.global_load.bytes, s.global_load.sectors, s.global_load.bytes / 32);
  printf("  global stores: requests %llu  bytes %llu  sectors %llu\n", s.global_store.requests, s.global_store.bytes,
         s.global_store.sectors);
  return 0;
}
