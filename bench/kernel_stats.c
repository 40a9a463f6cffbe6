#define _POSIX_C_SOURCE 200809L
/* Emulator report for the library's kernels: shared-memory bank-conflict
 * wavefronts against the ideal, global 32-byte sectors against bytes
 * requested / 32, and the tensor-core FLOPs issued (mma.sync or wgmma)
 * against the useful FLOPs, both in m16n8k16 units, for the GEMMs at aligned shapes, the 3x3
 * convolutions and causal attention; for the row-skeleton ops (softmax,
 * layernorm, RMSNorm) warp instructions per element, global bytes against
 * the size of X, the row cache's shared-memory wavefronts, and barriers.  A benchmark that
 * prints figures; ctest does not run it.
 *
 *   kernel_stats [M N K]      (GEMM shape; default 512 512 512) */
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
         g->sectors, g->bytes / 32,
         g->sectors * 32 == g->bytes  ? "= bytes/32"
         : g->sectors * 32 < g->bytes ? "(lanes share sectors)"
                                      : "(partial sectors)");
}

static void report(const char *name, double secs, double useful_flops) {
  dlcemu_launch_stats s;
  dlcemu_last_launch_stats(&s);
  double mma_ideal = useful_flops / (2.0 * 16 * 8 * 16);
  printf("%s  (%llu warp instructions, %.2f s emulated, %.1f M warp-instr/s)\n", name, s.warp_instructions, secs,
         (double)s.warp_instructions / secs / 1e6);
  printf(" shared memory:\n");
  row("cp.async st", &s.cp_async);
  row("ldmatrix", &s.ldmatrix);
  row("st.shared", &s.shared_store);
  row("ld.shared", &s.shared_load);
  printf(" global memory:\n");
  grow("loads", &s.global_load);
  grow("stores", &s.global_store);
  /* the tensor FLOPs issued (padding included) against the useful ones, in
   * m16n8k16 units; an sm90a kernel (DLC_EMU_ARCH=sm90a) issues wgmma */
  printf(" tensor cores: mma.sync %llu, wgmma %llu, issued FLOPs/(2*16*8*16) = %.0f, useful = %.0f (ratio %.3f)\n\n",
         s.mma_ops, s.wgmma_ops, (double)s.tensor_flops / (2.0 * 16 * 8 * 16), mma_ideal,
         mma_ideal > 0 ? (double)s.tensor_flops / (2.0 * 16 * 8 * 16) / mma_ideal : 0.0);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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
    double t0 = now();
    dlc_status st = cases[i].nt ? dlc_gemm_bias_relu_nt(cases[i].dt, M, N, K, a, K, b, K, bias, c, N, NULL)
                                : dlc_gemm_bias_relu(cases[i].dt, M, N, K, a, K, b, N, bias, c, N, NULL);
    double t1 = now();
    if (st != DLC_SUCCESS) {
      fprintf(stderr, "%s: %s: %s\n", cases[i].name, dlc_status_string(st), dlc_last_error_detail());
      return 1;
    }
    char name[128];
    snprintf(name, sizeof name, "%s  M=%lld N=%lld K=%lld", cases[i].name, (long long)M, (long long)N, (long long)K);
    report(name, t1 - t0, 2.0 * (double)M * N * K);
  }
  /* conv 3x3, pad 1: N=2, 56x56, C=K=64 (the MMAs also run on the zero padding and the K tail) */
  {
    const int64_t n = 2, h = 56, w = 56, ch = 64, k = 64;
    void *x = buf((size_t)(n * h * w * ch) * 2, &seed), *wt = buf((size_t)(k * 9 * ch) * 2, &seed);
    void *cb = buf((size_t)k * 2, &seed), *y = buf((size_t)(n * h * w * k) * 2, &seed);
    for (int s = 1; s <= 2; s++) {
      double t0 = now();
      dlc_status st = dlc_conv2d_bias_silu(DLC_F16, n, h, w, ch, k, s, s, 1, 1, x, wt, cb, y, NULL);
      double t1 = now();
      if (st != DLC_SUCCESS) {
        fprintf(stderr, "conv: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
        return 1;
      }
      int64_t p = (h - 1) / s + 1, q = (w - 1) / s + 1;
      char name[128];
      snprintf(name, sizeof name, "conv2d_bias_silu fp16  N=%lld H=W=%lld C=K=%lld stride %d", (long long)n, (long long)h,
               (long long)ch, s);
      report(name, t1 - t0, 2.0 * (double)(n * p * q) * k * 9 * ch);
    }
  }
  /* causal attention: B=1, H=2, S=256 (the useful FLOPs count only the unmasked half) */
  {
    const int64_t B = 1, H = 2, S = 256;
    for (int64_t D = 64; D <= 128; D *= 2) {
      size_t bytes = (size_t)(B * H * S * D) * 2;
      void *q = buf(bytes, &seed), *k = buf(bytes, &seed), *v = buf(bytes, &seed), *o = buf(bytes, &seed);
      double t0 = now();
      dlc_status st = dlc_attention_causal(DLC_F16, B, H, S, D, q, k, v, o, NULL);
      double t1 = now();
      if (st != DLC_SUCCESS) {
        fprintf(stderr, "attention: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
        return 1;
      }
      char name[128];
      snprintf(name, sizeof name, "attention_causal fp16  B=%lld H=%lld S=%lld D=%lld", (long long)B, (long long)H,
               (long long)S, (long long)D);
      report(name, t1 - t0, 2.0 * 2.0 * (double)(B * H) * (double)S * (S + 1) / 2.0 * D);
    }
  }
  /* the row skeleton: a CTA of 8 warps a row (the row length is symbolic) */
  {
    const int64_t rows = 64;
    for (int64_t len = 1024; len <= 4096; len *= 4) {
      void *x = buf((size_t)(rows * len) * 2, &seed), *g = buf((size_t)len * 2, &seed), *bt = buf((size_t)len * 2, &seed);
      void *y = buf((size_t)(rows * len) * 2, &seed);
      for (int op = 0; op < 3; op++) {
        static const char *const names[] = {"softmax", "layernorm", "rmsnorm"};
        double t0 = now();
        dlc_status st = op == 0   ? dlc_softmax(DLC_F16, rows, len, x, len, y, len, NULL)
                        : op == 1 ? dlc_layernorm(DLC_F16, rows, len, x, len, g, bt, y, len, NULL)
                                  : dlc_rmsnorm(DLC_F16, rows, len, x, len, g, y, len, NULL);
        double t1 = now();
        if (st != DLC_SUCCESS) {
          fprintf(stderr, "%s: %s: %s\n", names[op], dlc_status_string(st), dlc_last_error_detail());
          return 1;
        }
        dlcemu_launch_stats s;
        dlcemu_last_launch_stats(&s);
        double elems = (double)(rows * len);
        printf("%s fp16  M=%lld N=%lld  (%llu warp instructions, %.2f s emulated)\n", names[op], (long long)rows,
               (long long)len, s.warp_instructions, t1 - t0);
        printf("  warp instructions per element %.3f, thread instructions per element %.2f, barriers %llu\n",
               (double)s.warp_instructions / elems, (double)s.thread_instructions / elems, s.barriers);
        grow("loads", &s.global_load);
        grow("stores", &s.global_store);
        row("st.shared", &s.shared_store); /* the row cache, and the warps' partials */
        row("ld.shared", &s.shared_load);
        printf("  X is %.0f bytes; a parameter vector (gamma, beta) %.0f bytes, read once a row\n\n", elems * 2,
               (double)len * 2);
      }
    }
  }
  return 0;
}
