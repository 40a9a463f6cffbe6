#define _POSIX_C_SOURCE 200809L
/* Emulator report for the library's GEMM kernels at aligned shapes: shared
 * memory bank-conflict wavefronts against the ideal, global 32-byte sectors
 * against bytes requested / 32, and mma.sync instructions against
 * FLOPs / (2*16*8*16).  A benchmark that prints figures; ctest does not run it.
 *
 *   kernel_stats [M N K]      (default 512 512 512) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dlc/dlc.h"
#include "dlc/dlcemu.h"

static void *buf(size_t bytes, uint64_t *seed) {
  dlcemu_deviceptr p;
  if (dlcemu_mem_alloc(&p, bytes)) return NULL;
  uint16_t *h = malloc(bytes);
  for (size_t i = 0; i < bytes / 2; i++) {
    *seed = *seed * 6364136223846793005ull + 1;
    h[i] = (uint16_t)(0x3000 + ((*seed >> 40) & 0x3FF)); /* small positive fp16/bf16-ish values */
  }
  dlcemu_memcpy_htod(p, h, bytes);
  free(h);
  return (void *)(uintptr_t)p;
}

static void row(const char *what, const dlcemu_shared_stats *s) {
  printf("  %-14s requests %9llu  wavefronts %9llu  ideal %9llu  %s\n", what, s->requests, s->wavefronts,
         s->ideal_wavefronts, s->wavefronts == s->ideal_wavefronts ? "= ideal" : "CONFLICTS");
}

static void grow(const char *what, const dlcemu_global_stats *g) {
  printf("  %-14s requests %9llu  bytes %11llu  sectors %9llu  bytes/32 %9llu  %s\n", what, g->requests, g->bytes,
         g->sectors, g->bytes / 32, g->sectors * 32 == g->bytes ? "= bytes/32" : "(partial sectors)");
}

int main(int argc, char **argv) {
  int64_t M = 512, N = 512, K = 512;
  if (argc == 4) M = atoll(argv[1]), N = atoll(argv[2]), K = atoll(argv[3]);
  uint64_t seed = 1;
  void *a = buf((size_t)(M * K) * 2, &seed), *b = buf((size_t)(K * N) * 2, &seed), *bias = buf((size_t)N * 2, &seed);
  void *c = buf((size_t)(M * N) * 2, &seed);
  static const struct {
    const char *name;
    int nt;
    dlc_dtype dt;
  } cases[] = {{"gemm_bias_relu fp16", 0, DLC_F16},
               {"gemm_bias_relu bf16", 0, DLC_BF16},
               {"gemm_bias_relu_nt fp16", 1, DLC_F16},
               {"gemm_bias_relu_nt bf16", 1, DLC_BF16}};
  for (int i = 0; i < 4; i++) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    dlc_status st = cases[i].nt ? dlc_gemm_bias_relu_nt(cases[i].dt, M, N, K, a, K, b, K, bias, c, N, NULL)
                                : dlc_gemm_bias_relu(cases[i].dt, M, N, K, a, K, b, N, bias, c, N, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st != DLC_SUCCESS) {
      fprintf(stderr, "%s: %s: %s\n", cases[i].name, dlc_status_string(st), dlc_last_error_detail());
      return 1;
    }
    dlcemu_launch_stats s;
    dlcemu_last_launch_stats(&s);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    double mma_ideal = 2.0 * (double)M * N * K / (2.0 * 16 * 8 * 16);
    printf("%s  M=%lld N=%lld K=%lld  (%.2f s emulated, %.1f M warp-instr/s)\n", cases[i].name, (long long)M,
           (long long)N, (long long)K, secs, (double)s.warp_instructions / secs / 1e6);
    printf(" shared memory:\n");
    row("cp.async st", &s.cp_async);
    row("ldmatrix", &s.ldmatrix);
    row("st.shared", &s.shared_store);
    row("ld.shared", &s.shared_load);
    printf(" global memory:\n");
    grow("loads", &s.global_load);
    grow("stores", &s.global_store);
    /* the tensor class counts ldmatrix and stmatrix too */
    unsigned long long mma = s.class_count[DLCEMU_CLASS_TENSOR] - s.ldmatrix.requests - s.stmatrix.requests;
    printf(" tensor cores: mma.sync m16n8k16 %llu, FLOPs/(2*16*8*16) = %.0f (%s)\n\n", mma, mma_ideal,
           (double)mma == mma_ideal ? "equal" : "differ");
  }
  return 0;
}
