/* The launch grid of the contraction kernels past the old limit of 65535
 * M tiles, on the null backend (libdlckernels-null: every check and the
 * kernel choice of the real entry points, a launch that only records).
 * These shapes are far too large to run in the emulator; the raster order
 * inside the grid is checked there on shapes with partial groups
 * (test_gemm_emu).  The pointers are aligned addresses that are never
 * dereferenced: nothing runs.
 *
 *   - GEMM with 70000 M tiles: one row of M x N tiles on blockIdx.x;
 *   - conv 3x3 with N*P*Q = 64*256*256 (4.2 M output pixels, the shape the
 *     old grid refused);
 *   - a GEMM of more than 2^31 - 1 tiles: NOT_SUPPORTED naming the limit. */
#include "kt_null.h"

/* the GEMMs' tensors, far enough apart to share no byte (C of the last
 * call spans 2^47 bytes, A 2^35): the entry points refuse overlaps */
#define A0 ((uintptr_t)1 << 40)
#define B0 ((uintptr_t)2 << 40)
#define BIAS0 ((uintptr_t)3 << 40)
#define C0 ((uintptr_t)1 << 44)

int main(void) {
  /* GEMM: M = 70000 tiles of 128 rows (BM of the chosen plan, read back
   * from the grid's size over N tiles) */
  int64_t M = 70000LL * 128 + 3, N = 200, K = 64;
  dlc_status st = dlc_gemm_bias_relu(DLC_F16, M, N, K, fake(A0), K, fake(B0), N, fake(BIAS0),
                                     fake(C0), N, NULL);
  const dlc__launch_rec *l = dlc__last_launch();
  CHECK(st == DLC_SUCCESS);
  if (st) fprintf(stderr, "gemm: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
  CHECK(l->count == 1 && l->grid[1] == 1 && l->grid[2] == 1);
  /* every plan of the search has BM, BN in {64, 128} */
  int ok = 0;
  for (int bm = 64; bm <= 128; bm *= 2)
    for (int bn = 64; bn <= 128; bn *= 2) ok |= (int64_t)l->grid[0] == cdiv(M, bm) * cdiv(N, bn);
  CHECK(ok);
  CHECK(l->grid[0] > 65535u * 2);
  printf("gemm %lldx%lldx%lld: grid (%u, %u, %u), kernel %s\n", (long long)M, (long long)N, (long long)K, l->grid[0],
         l->grid[1], l->grid[2], l->kernel ? l->kernel->name : "(none)");

  /* conv: N*P*Q = 4194304 output pixels */
  st = dlc_conv2d_bias_silu(DLC_F16, 64, 256, 256, 16, 16, 1, 1, 1, 1, fake(0x10000000), fake(0x20000000),
                            fake(0x30000000), fake(0x40000000), NULL);
  CHECK(st == DLC_SUCCESS);
  if (st) fprintf(stderr, "conv: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
  CHECK(l->count == 2 && l->grid[1] == 1 && l->grid[2] == 1);
  ok = 0;
  for (int bm = 64; bm <= 128; bm *= 2) ok |= (int64_t)l->grid[0] == cdiv(64LL * 256 * 256, bm);
  CHECK(ok);
  printf("conv 64x256x256x16 -> 16: grid (%u, %u, %u), kernel %s\n", l->grid[0], l->grid[1], l->grid[2],
         l->kernel ? l->kernel->name : "(none)");

  /* 2^21 x 2^11 tiles at least: over 2^31 - 1 */
  M = 1LL << 28, N = 1LL << 18;
  st = dlc_gemm_bias_relu(DLC_F16, M, N, K, fake(A0), K, fake(B0), N, fake(BIAS0),
                          fake(C0), N, NULL);
  CHECK(st == DLC_ERROR_NOT_SUPPORTED);
  CHECK(strstr(dlc_last_error_detail(), "2147483647") != NULL);
  CHECK(l->count == 2);
  printf("gemm %lldx%lldx%lld: %s: %s\n", (long long)M, (long long)N, (long long)K, dlc_status_string(st),
         dlc_last_error_detail());
  return fails ? 1 : 0;
}
