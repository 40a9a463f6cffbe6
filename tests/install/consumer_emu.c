/* An outside consumer of the installed library: C = relu(A B + bias) with
 * dlc_gemm_bias_relu through libdlckernels-emu on a tiny problem, checked
 * exactly (small integers are exact in fp16 and in the fp32 accumulator).
 * Built by the install test twice: with `pkg-config dlckernels-emu` on a
 * plain cc command line, and with find_package(dlckernels).
 *
 *   consumer_emu [EXPECTED_VERSION] */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <dlc/dlc.h>
#include <dlc/dlcemu.h>

enum { M = 20, N = 24, K = 40 };

static uint16_t f16_of_int(int v) { /* |v| < 2048 */
  if (v == 0) return 0;
  uint16_t s = v < 0 ? 0x8000 : 0;
  unsigned a = (unsigned)(v < 0 ? -v : v);
  int e = 0;
  while ((a >> e) > 1) e++;
  return (uint16_t)(s | (unsigned)(e + 15) << 10 | ((a << (10 - e)) & 0x3FF));
}

static int int_of_f16(uint16_t h) { /* integers only */
  int e = (h >> 10) & 31, v;
  if (e == 0) return 0;
  v = (int)((0x400u | (h & 0x3FFu)) >> (25 - e));
  return h & 0x8000 ? -v : v;
}

static void *alloc_copy(const void *host, size_t bytes) {
  dlcemu_deviceptr p;
  if (dlcemu_mem_alloc(&p, bytes) != DLCEMU_SUCCESS) return NULL;
  if (host && dlcemu_memcpy_htod(p, host, bytes) != DLCEMU_SUCCESS) return NULL;
  return (void *)(uintptr_t)p;
}

int main(int argc, char **argv) {
  static uint16_t a[M * K], b[K * N], bias[N], c[M * N];
  int ia[M * K], ib[K * N], ibias[N];
  for (int i = 0; i < M * K; i++) ia[i] = (i * 7 + 3) % 5 - 2, a[i] = f16_of_int(ia[i]);
  for (int i = 0; i < K * N; i++) ib[i] = (i * 11 + 1) % 5 - 2, b[i] = f16_of_int(ib[i]);
  for (int i = 0; i < N; i++) ibias[i] = i % 7 - 3, bias[i] = f16_of_int(ibias[i]);

  if (argc > 1 && strcmp(dlc_version(), argv[1]) != 0) {
    fprintf(stderr, "dlc_version() = %s, expected %s\n", dlc_version(), argv[1]);
    return 1;
  }
  void *da = alloc_copy(a, sizeof a), *db = alloc_copy(b, sizeof b), *dbias = alloc_copy(bias, sizeof bias),
       *dc = alloc_copy(NULL, sizeof c);
  if (!da || !db || !dbias || !dc) {
    fprintf(stderr, "emulator allocation failed: %s\n", dlcemu_last_error_detail());
    return 1;
  }
  dlc_status st = dlc_gemm_bias_relu(DLC_F16, M, N, K, da, K, db, N, dbias, dc, N, NULL);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "dlc_gemm_bias_relu: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    return 1;
  }
  if (dlcemu_memcpy_dtoh(c, (dlcemu_deviceptr)(uintptr_t)dc, sizeof c) != DLCEMU_SUCCESS) return 1;
  int bad = 0;
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      int ref = ibias[n];
      for (int k = 0; k < K; k++) ref += ia[m * K + k] * ib[k * N + n];
      if (ref < 0) ref = 0;
      if (int_of_f16(c[m * N + n]) != ref && bad++ < 5)
        fprintf(stderr, "C[%d][%d] = %d, expected %d\n", m, n, int_of_f16(c[m * N + n]), ref);
    }
  /* a bad argument gets its status and a detail string */
  st = dlc_gemm_bias_relu(DLC_F16, M, N, K, da, K - 1, db, N, dbias, dc, N, NULL);
  if (st != DLC_ERROR_INVALID_VALUE || !dlc_last_error_detail()[0]) {
    fprintf(stderr, "lda < K gave %s\n", dlc_status_string(st));
    bad++;
  }
  dlcemu_mem_free((dlcemu_deviceptr)(uintptr_t)da), dlcemu_mem_free((dlcemu_deviceptr)(uintptr_t)db);
  dlcemu_mem_free((dlcemu_deviceptr)(uintptr_t)dbias), dlcemu_mem_free((dlcemu_deviceptr)(uintptr_t)dc);
  if (bad) return 1;
  printf("dlc %s: dlc_gemm_bias_relu fp16 %dx%dx%d in the emulator: exact\n", dlc_version(), M, N, K);
  return 0;
}
