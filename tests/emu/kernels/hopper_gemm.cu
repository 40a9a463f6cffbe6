// hopper_gemm.cu (sm_90a only): a warp-specialized GEMM built from the
// Hopper pieces the emulator models, end to end: a producer warp issues TMA
// loads (128B swizzle) of A and B tiles into a 4-stage ring guarded by
// full/empty mbarriers; one consumer warpgroup runs wgmma.mma_async
// m64n64k16 (SS, K-major descriptors with the 128B swizzle, advanced 32
// bytes per k16 step inside the swizzle row) and stores C with predicates.
// C[M][N] (f32) = A[M][K] (bf16, row-major) * B (bf16, stored N x K).
// Tails in M, N and K come from TMA zero fill and predicated stores.
#include <cuda.h>
#include <stdint.h>

__device__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ void wait_parity(uint32_t b, uint32_t parity) {
  asm volatile("{\n .reg .pred p;\n WAIT%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
               " @!p bra WAIT%=;\n}" ::"r"(b), "r"(parity) : "memory");
}

__device__ uint64_t desc128(uint32_t addr) { /* K-major, 128B swizzle: SBO = 1024 (8 rows of 128 bytes) */
  return (uint64_t)((addr >> 4) & 0x3FFF) | (uint64_t)(1024 >> 4) << 32 | 1ull << 62;
}

enum { STAGES = 4, TILE = 64 * 64 * 2, STAGE = 2 * TILE };

extern "C" __global__ void __launch_bounds__(160) gemm_tma_wgmma(const __grid_constant__ CUtensorMap ta,
                                                                 const __grid_constant__ CUtensorMap tb, float *C,
                                                                 int M, int N, int K) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  int warp = threadIdx.x / 32;
  int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64, ktiles = (K + 63) / 64;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s])) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 128;" ::"r"(smem_addr(&empty[s])) : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  uint32_t base = smem_addr(smem);
  if (warp == 4) { /* producer */
    uint32_t elected;
    asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(elected));
    if (elected)
      for (int kt = 0; kt < ktiles; kt++) {
        int s = kt % STAGES;
        uint32_t f = smem_addr(&full[s]), dst = base + s * STAGE;
        wait_parity(smem_addr(&empty[s]), ((kt / STAGES) & 1) ^ 1);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(f), "r"(STAGE) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst), "l"(&ta), "r"(kt * 64), "r"(m0), "r"(f) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst + TILE), "l"(&tb), "r"(kt * 64), "r"(n0), "r"(f) : "memory");
      }
    return;
  }
  /* the consumer warpgroup: warps 0..3 */
  float d[32];
  for (int i = 0; i < 32; i++) d[i] = 0.0f;
  for (int kt = 0; kt < ktiles; kt++) {
    int s = kt % STAGES;
    wait_parity(smem_addr(&full[s]), (kt / STAGES) & 1);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (int j = 0; j < 4; j++) {
      uint64_t ad = desc128(base + s * STAGE + 32 * j), bd = desc128(base + s * STAGE + TILE + 32 * j);
      asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, 0;"
                   : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                   : "l"(ad), "l"(bd)
                   : "memory");
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(&empty[s])) : "memory");
  }
  int l = threadIdx.x % 32, g = l / 4, q = l % 4;
  for (int i = 0; i < 32; i++) {
    int row = m0 + 16 * warp + g + 8 * ((i >> 1) & 1), col = n0 + (i >> 2) * 8 + 2 * q + (i & 1);
    if (row < M && col < N) C[(size_t)row * N + col] = d[i];
  }
}
