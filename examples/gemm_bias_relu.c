/* Example: C = relu(A B + bias) with dlc_gemm_bias_relu, checked against a
 * CPU reference.
 *
 * Built twice: `gemm_bias_relu` links libdlckernels (CUDA) and runs on the
 * GPU; when the machine has no GPU it hands over to `gemm_bias_relu-emu`,
 * the same program linked with libdlckernels-emu, which runs the kernel's
 * PTX in the emulator.
 *
 *   gemm_bias_relu [M N K]        (default 256 384 512) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlc/dlc.h>

#ifdef DLC_EXAMPLE_EMU
#include <dlc/dlcemu.h>
static void *dev_alloc(size_t bytes) {
  dlcemu_deviceptr p;
  return dlcemu_mem_alloc(&p, bytes) == 0 ? (void *)(uintptr_t)p : NULL;
}
static int to_dev(void *d, const void *h, size_t n) { return dlcemu_memcpy_htod((dlcemu_deviceptr)(uintptr_t)d, h, n); }
static int to_host(void *h, const void *d, size_t n) { return dlcemu_memcpy_dtoh(h, (dlcemu_deviceptr)(uintptr_t)d, n); }
static void dev_free(void *p) { dlcemu_mem_free((dlcemu_deviceptr)(uintptr_t)p); }
static const char *backend = "the PTX emulator (libdlckernels-emu)";
#else
#include <cuda_runtime_api.h>
#include <unistd.h>
static void *dev_alloc(size_t bytes) {
  void *p = NULL;
  return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}
static int to_dev(void *d, const void *h, size_t n) { return cudaMemcpy(d, h, n, cudaMemcpyHostToDevice) != cudaSuccess; }
static int to_host(void *h, const void *d, size_t n) {
  return cudaDeviceSynchronize() != cudaSuccess || cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost) != cudaSuccess;
}
static void dev_free(void *p) { cudaFree(p); }
static const char *backend = "the GPU (libdlckernels)";
#endif

/* fp16 <-> float, round to nearest even (normal range is enough here) */
static uint16_t to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t s = (x >> 16) & 0x8000;
  int e = (int)((x >> 23) & 255) - 127 + 15;
  uint32_t m = x & 0x7FFFFF;
  if (e <= 0) return (uint16_t)s;
  if (e >= 31) return (uint16_t)(s | 0x7C00);
  uint32_t h = s | ((uint32_t)e << 10) | (m >> 13), rem = m & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return (uint16_t)h;
}
static float from_half(uint16_t h) {
  uint32_t e = (h >> 10) & 31, m = h & 1023, x = (uint32_t)(h & 0x8000) << 16;
  if (e) x |= ((e + 112) << 23) | (m << 13);
  else if (m) return (h & 0x8000 ? -1.f : 1.f) * ldexpf((float)m, -24);
  float f;
  memcpy(&f, &x, 4);
  return f;
}

int main(int argc, char **argv) {
#ifndef DLC_EXAMPLE_EMU
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    /* no GPU here: run the emulator build of this example instead */
    char path[4096];
    snprintf(path, sizeof path, "%s-emu", argv[0]);
    fprintf(stderr, "no CUDA device; running %s\n", path);
    execv(path, argv);
    perror(path);
    return 1;
  }
#endif
  int64_t M = 256, N = 384, K = 512;
  if (argc == 4) M = atoll(argv[1]), N = atoll(argv[2]), K = atoll(argv[3]);
  if (M <= 0 || N <= 0 || K <= 0) {
    fprintf(stderr, "usage: %s [M N K]\n", argv[0]);
    return 2;
  }
  size_t na = (size_t)(M * K), nb = (size_t)(K * N), nc = (size_t)(M * N);
  uint16_t *a = malloc(na * 2), *b = malloc(nb * 2), *bias = malloc((size_t)N * 2), *c = malloc(nc * 2);
  uint64_t s = 12345;
  for (size_t i = 0; i < na + nb + (size_t)N; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    float v = (float)((s >> 40) & 0xFFFF) / 65536.f - 0.5f;
    if (i < na) a[i] = to_half(v);
    else if (i < na + nb) b[i - na] = to_half(v);
    else bias[i - na - nb] = to_half(v);
  }
  void *da = dev_alloc(na * 2), *db = dev_alloc(nb * 2), *dbias = dev_alloc((size_t)N * 2), *dc = dev_alloc(nc * 2);
  if (!da || !db || !dbias || !dc || to_dev(da, a, na * 2) || to_dev(db, b, nb * 2) || to_dev(dbias, bias, (size_t)N * 2)) {
    fprintf(stderr, "device allocation or copy failed\n");
    return 1;
  }
  /* what the call will run (a dry run: the same checks, nothing launched) */
  dlc_launch_info q;
  dlc_status st = dlc_gemm_bias_relu_query(DLC_F16, M, N, K, da, K, db, N, dbias, dc, N, NULL, 0, &q);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "dlc_gemm_bias_relu_query: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    return 1;
  }
  printf("runs %s (%s, %dx%dx%d tiles, %lld CTAs)\n", q.kernel, q.arch, q.tile_m, q.tile_n, q.tile_k, (long long)q.ctas);
  st = dlc_gemm_bias_relu(DLC_F16, M, N, K, da, K, db, N, dbias, dc, N, NULL);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "dlc_gemm_bias_relu: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    return 1;
  }
  if (to_host(c, dc, nc * 2)) {
    fprintf(stderr, "copy back failed\n");
    return 1;
  }
  double max_err = 0, max_ref = 0;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double acc = from_half(bias[n]);
      for (int64_t k = 0; k < K; k++) acc += (double)from_half(a[m * K + k]) * from_half(b[k * N + n]);
      double ref = acc > 0 ? acc : 0, err = fabs(from_half(c[m * N + n]) - ref);
      if (err > max_err) max_err = err;
      if (fabs(ref) > max_ref) max_ref = fabs(ref);
    }
  printf("dlc_gemm_bias_relu fp16 M=%lld N=%lld K=%lld on %s\n", (long long)M, (long long)N, (long long)K, backend);
  printf("max |error| against the CPU reference: %.3g (max |C| = %.3g, relative %.2g)\n", max_err, max_ref,
         max_ref > 0 ? max_err / max_ref : 0.0);
  dev_free(da), dev_free(db), dev_free(dbias), dev_free(dc);
  free(a), free(b), free(bias), free(c);
  return max_err <= 1e-3 * 2 * max_ref + 1e-3 ? 0 : 1;
}
