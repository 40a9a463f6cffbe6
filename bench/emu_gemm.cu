// emu_gemm.cu: the emulator benchmark kernel.  C[M][N] (f32) = A[M][K] (f16,
// row-major) * B[K][N] (f16, row-major) on sm_80 tensor cores:
//   64x64x32 block tiles, 128 threads = 4 warps of 32x32, a 3-stage
//   cp.async pipeline (cp.async.cg 16 B -> commit_group -> wait_group),
//   ldmatrix.x4 for A and ldmatrix.x4.trans for B, mma.sync m16n8k16 f32.
// Shared rows are padded by 8 halves so ldmatrix is conflict-free.
// M, N must be multiples of 64 and K of 32.
#include <cuda_fp16.h>
#include <stdint.h>

#define BM 64
#define BN 64
#define BK 32
#define STAGES 3
#define AS (BK + 8) /* A tile row stride in halves */
#define BS (BN + 8) /* B tile row stride in halves */

__device__ __forceinline__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void mma_16816(float c[4], const uint32_t a[4], const uint32_t b[2]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(128)
    gemm_f16_f32(const __half *A, const __half *B, float *C, int M, int N, int K) {
  __shared__ __align__(128) __half sA[STAGES][BM * AS];
  __shared__ __align__(128) __half sB[STAGES][BK * BS];
  int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  int wm = warp / 2, wn = warp % 2;
  int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  float acc[2][4][4] = {};
  int ktiles = K / BK;

  auto load_stage = [&](int stage, int kt) {
    for (int i = tid; i < BM * BK / 8; i += 128) { /* A: 64 rows x 4 chunks of 8 halves */
      int r = i / (BK / 8), c = (i % (BK / 8)) * 8;
      cp_async_16(smem_addr(&sA[stage][r * AS + c]), A + (size_t)(bm + r) * K + kt * BK + c);
    }
    for (int i = tid; i < BK * BN / 8; i += 128) { /* B: 32 rows x 8 chunks */
      int r = i / (BN / 8), c = (i % (BN / 8)) * 8;
      cp_async_16(smem_addr(&sB[stage][r * BS + c]), B + (size_t)(kt * BK + r) * N + bn + c);
    }
  };

  for (int s = 0; s < STAGES - 1; s++) {
    if (s < ktiles) load_stage(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; kt++) {
    cp_async_wait<STAGES - 2>(); /* stage kt has landed */
    __syncthreads();             /* ...for every thread, and stage kt-1 is no longer read */
    int next = kt + STAGES - 1;
    if (next < ktiles) load_stage(next % STAGES, next);
    cp_async_commit();
    const __half *a_tile = sA[kt % STAGES], *b_tile = sB[kt % STAGES];
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t af[2][4], bf[4][2];
#pragma unroll
      for (int mi = 0; mi < 2; mi++) {
        int row = wm * 32 + mi * 16 + (lane % 16);
        ldmatrix_x4(af[mi], smem_addr(&a_tile[row * AS + kk + (lane / 16) * 8]));
      }
#pragma unroll
      for (int nj = 0; nj < 2; nj++) {
        uint32_t r[4];
        int krow = kk + (lane % 16);
        ldmatrix_x4_trans(r, smem_addr(&b_tile[krow * BS + wn * 32 + nj * 16 + (lane / 16) * 8]));
        bf[2 * nj][0] = r[0];
        bf[2 * nj][1] = r[1];
        bf[2 * nj + 1][0] = r[2];
        bf[2 * nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++) mma_16816(acc[mi][ni], af[mi], bf[ni]);
    }
  }
  cp_async_wait<0>();
  int g = lane / 4, t4 = lane % 4;
#pragma unroll
  for (int mi = 0; mi < 2; mi++)
#pragma unroll
    for (int ni = 0; ni < 4; ni++) {
      int r = bm + wm * 32 + mi * 16 + g, c = bn + wn * 32 + ni * 8 + t4 * 2;
      *(float2 *)&C[(size_t)r * N + c] = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
      *(float2 *)&C[(size_t)(r + 8) * N + c] = make_float2(acc[mi][ni][2], acc[mi][ni][3]);
    }
}
