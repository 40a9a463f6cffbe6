#define _POSIX_C_SOURCE 200809L
/* tf32_stats: the fp32 GEMMs of tests/kernels/extra (TF32 mma m16n8k8) in
 * the emulator: shared-memory wavefronts against the ideal for the
 * cp.async stores, the ldmatrix and the ld.shared.b32 fragment loads (an
 * M/N-contiguous fp32 operand's, whose swizzle gpuir_swizzle_xor makes
 * conflict-free), and the mma.sync count against FLOPs / (2*16*8*8).  A
 * benchmark that prints figures; ctest does not run it.
 *
 *   tf32_stats [M N K]      (default 512 512 512) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dlc/dlc.h"
#include "dlc/dlc_ops.h"
#include "dlc/dlcemu.h"

static void *buf(size_t n, uint64_t *seed) {
  dlcemu_deviceptr p;
  if (dlcemu_mem_alloc(&p, n * 4)) return NULL;
  float *h = malloc(n * 4);
  if (!h) return NULL;
  for (size_t i = 0; i < n; i++) {
    *seed = *seed * 6364136223846793005ull + 1;
    h[i] = (float)((*seed >> 40) & 0xFFFF) / 65536.0f - 0.5f;
  }
  dlcemu_memcpy_htod(p, h, n * 4);
  free(h);
  return (void *)(uintptr_t)p;
}

static void row(const char *what, const dlcemu_shared_stats *s) {
  printf("  %-12s requests %9llu  wavefronts %9llu  ideal %9llu  %s\n", what, s->requests, s->wavefronts,
         s->ideal_wavefronts, s->wavefronts == s->ideal_wavefronts ? "= ideal" : "CONFLICTS");
}

int main(int argc, char **argv) {
  int64_t M = 512, N = 512, K = 512;
  if (argc == 4) M = atoll(argv[1]), N = atoll(argv[2]), K = atoll(argv[3]);
  uint64_t seed = 1;
  void *a = buf((size_t)(M * K), &seed), *b = buf((size_t)(K * N), &seed), *bias = buf((size_t)N, &seed);
  void *c = buf((size_t)(M * N), &seed);
  if (!a || !b || !bias || !c) return 1;
  for (int i = 0; i < 3; i++) {
    static const char *const names[] = {"gemm_bias_relu_f32 (nn: B N-contiguous)",
                                        "gemm_bias_relu_nt_f32 (nt: both K-contiguous)",
                                        "gemm_at_silu_f32 (A^T: A M-contiguous)"};
    dlc_status st = i == 0   ? dlc_gemm_bias_relu_f32(DLC_F32, M, N, K, a, K, b, N, bias, c, N, NULL)
                    : i == 1 ? dlc_gemm_bias_relu_nt_f32(DLC_F32, M, N, K, a, K, b, K, bias, c, N, NULL)
                             : dlc_gemm_at_silu_f32(DLC_F32, M, N, K, a, M, b, N, c, N, NULL);
    if (st != DLC_SUCCESS) {
      fprintf(stderr, "%s: %s: %s\n", names[i], dlc_status_string(st), dlc_last_error_detail());
      return 1;
    }
    dlcemu_launch_stats s;
    dlcemu_last_launch_stats(&s);
    unsigned long long mma = s.class_count[DLCEMU_CLASS_TENSOR] - s.ldmatrix.requests - s.stmatrix.requests;
    double ideal = 2.0 * (double)M * (double)N * (double)K / (2.0 * 16 * 8 * 8);
    printf("%s  M=%lld N=%lld K=%lld  (%llu warp instructions)\n", names[i], (long long)M, (long long)N, (long long)K,
           s.warp_instructions);
    row("cp.async st", &s.cp_async);
    row("ldmatrix", &s.ldmatrix);
    row("ld.shared", &s.shared_load);
    row("st.shared", &s.shared_store);
    printf("  mma.sync m16n8k8 %llu, FLOPs/(2*16*8*8) = %.0f (ratio %.3f)\n\n", mma, ideal, mma / ideal);
  }
  return 0;
}
