/*
 * emu_gemm_bench.c: the emulator benchmark.  Runs the 512x512x512 fp16
 * mma.sync GEMM of emu_gemm.cu (sm_80 PTX, 128 threads per block, 3-stage
 * cp.async pipeline) in the PTX emulator, checks it against a host
 * reference (rtol = atol = 1e-3), and prints the wall time, the warp
 * instructions executed, warp instructions per second and the launch
 * statistics as JSON.  Not a test: ctest does not run it.
 *
 *   emu_gemm_bench [size (multiple of 64, default 512)] [ptx file]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlc/dlcemu.h"

#ifndef EMU_GEMM_PTX
#define EMU_GEMM_PTX "emu_gemm.sm_80.ptx"
#endif

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

/* f32 -> f16 (round to nearest even) and back, for the host data */
static uint16_t to_half(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t s = (u >> 16) & 0x8000u;
  int e = (int)((u >> 23) & 0xFF) - 127 + 15;
  uint32_t m = u & 0x7FFFFFu;
  if (e <= 0) return (uint16_t)s; /* inputs here are never that small */
  uint32_t h = s | ((uint32_t)e << 10) | (m >> 13);
  uint32_t rest = m & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++;
  return (uint16_t)h;
}
static float from_half(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e ? ldexpf((float)(m + 1024), e - 25) : ldexpf((float)m, -24);
  return (h & 0x8000) ? -v : v;
}

#define CHECK(call)                                                                                                    \
  do {                                                                                                                 \
    int rc_ = (call);                                                                                                  \
    if (rc_) {                                                                                                         \
      fprintf(stderr, "%s: %s\n%s\n", #call, dlcemu_error_string(rc_), dlcemu_last_error_detail());                    \
      return 1;                                                                                                        \
    }                                                                                                                  \
  } while (0)

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 512;
  const char *path = argc > 2 ? argv[2] : EMU_GEMM_PTX;
  if (n <= 0 || n % 64) {
    fprintf(stderr, "size must be a positive multiple of 64\n");
    return 2;
  }
  int M = n, N = n, K = n;
  char *ptx = slurp(path);
  if (!ptx) {
    fprintf(stderr, "cannot read %s\n", path);
    return 2;
  }
  dlcemu_module mod;
  dlcemu_function fn;
  CHECK(dlcemu_module_load_data(&mod, ptx));
  free(ptx);
  CHECK(dlcemu_module_get_function(&fn, mod, "gemm_f16_f32"));

  uint16_t *A = malloc(sizeof(uint16_t) * (size_t)M * K), *B = malloc(sizeof(uint16_t) * (size_t)K * N);
  float *C = malloc(sizeof(float) * (size_t)M * N);
  uint32_t s = 1;
  for (size_t i = 0; i < (size_t)M * K; i++) {
    s = s * 1664525u + 1013904223u;
    A[i] = to_half((float)((s >> 8) & 0xFFFF) / 32768.0f - 1.0f);
  }
  for (size_t i = 0; i < (size_t)K * N; i++) {
    s = s * 1664525u + 1013904223u;
    B[i] = to_half((float)((s >> 8) & 0xFFFF) / 32768.0f - 1.0f);
  }
  dlcemu_deviceptr dA, dB, dC;
  CHECK(dlcemu_mem_alloc(&dA, sizeof(uint16_t) * (size_t)M * K));
  CHECK(dlcemu_mem_alloc(&dB, sizeof(uint16_t) * (size_t)K * N));
  CHECK(dlcemu_mem_alloc(&dC, sizeof(float) * (size_t)M * N));
  CHECK(dlcemu_memcpy_htod(dA, A, sizeof(uint16_t) * (size_t)M * K));
  CHECK(dlcemu_memcpy_htod(dB, B, sizeof(uint16_t) * (size_t)K * N));
  void *params[] = {&dA, &dB, &dC, &M, &N, &K};

  struct timespec t0, t1, c0, c1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  CHECK(dlcemu_launch_kernel(fn, (unsigned)N / 64, (unsigned)M / 64, 1, 128, 1, 1, 0, params));
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
  dlcemu_launch_stats st;
  CHECK(dlcemu_last_launch_stats(&st));

  CHECK(dlcemu_memcpy_dtoh(C, dC, sizeof(float) * (size_t)M * N));
  float *Af = malloc(sizeof(float) * (size_t)M * K), *Bf = malloc(sizeof(float) * (size_t)K * N);
  for (size_t i = 0; i < (size_t)M * K; i++) Af[i] = from_half(A[i]);
  for (size_t i = 0; i < (size_t)K * N; i++) Bf[i] = from_half(B[i]);
  double max_err = 0;
  size_t bad = 0;
  double *row = malloc(sizeof(double) * (size_t)N);
  for (int i = 0; i < M; i++) {
    for (int j = 0; j < N; j++) row[j] = 0;
    for (int k = 0; k < K; k++) {
      double a = Af[(size_t)i * K + k];
      const float *b = Bf + (size_t)k * N;
      for (int j = 0; j < N; j++) row[j] += a * b[j];
    }
    for (int j = 0; j < N; j++) {
      double err = fabs(C[(size_t)i * N + j] - row[j]);
      if (err > max_err) max_err = err;
      if (err > 1e-3 + 1e-3 * fabs(row[j])) bad++;
    }
  }
  printf("emu_gemm_bench: %dx%dx%d fp16 mma.sync GEMM, %llu blocks of 128 threads\n", M, N, K, st.blocks);
  printf("wall time: %.3f s (cpu time %.3f s, one thread)\n", secs, cpu);
  printf("warp instructions: %llu (%llu thread instructions)\n", st.warp_instructions, st.thread_instructions);
  printf("warp instructions per second: %.3g (per cpu second: %.3g)\n", (double)st.warp_instructions / secs,
         (double)st.warp_instructions / cpu);
  printf("max abs error vs fp64 reference: %.3g (%zu elements outside rtol=atol=1e-3)\n", max_err, bad);
  printf("stats: %s\n", dlcemu_last_launch_stats_json());
  free(row);
  free(Af);
  free(Bf);
  free(A);
  free(B);
  free(C);
  dlcemu_mem_free(dA);
  dlcemu_mem_free(dB);
  dlcemu_mem_free(dC);
  dlcemu_module_unload(mod);
  return bad ? 1 : 0;
}
