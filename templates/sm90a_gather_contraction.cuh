// The sm90a skeleton for contractions read through a gather (spec §9.1;
// algo_choice "cp_async_wgmma"): sm90a_contraction.cuh's consumers fed by a
// gathering producer, for operands no tensor map
// describes (an implicit GEMM's im2col A, whose rows walk the filter taps
// with pad guards): the producer warpgroup's 128 threads each copy 16-byte
// chunks with cp.async, through the Op's a_chunk / b_chunk (the operand's
// address and how many of the chunk's 8 elements exist: tails and pads
// zero-fill), into the same 128-byte-swizzled K-major slots the TMA fills.
// A thread lands its copies LAG k-tiles later (cp.async.wait_group), makes
// them visible to the async proxy that wgmma reads through
// (fence.proxy.async) and arrives on the stage's full barrier (128
// arrivals).  Op provides a_chunk<8>, b_chunk<8>, Params and produce(p,
// ring, full, empty, mt, nt, b, KT, t): the producer's k-loop, rendered
// from the GPU IR, which copies a stage with sm90a_gather_stage; both
// operands are stored along K.
#pragma once

#include "sm90a_contraction.cuh"

namespace dlc {

// The gathering producer's copies of one operand's stage: ROWS rows of BK
// elements, 8-element (16-byte) chunks; chunk i of the stage is row i / 8,
// chunk column i % 8, stored at column (i % 8) ^ (row % 8) of its 128-byte
// row (the 128-byte swizzle the TMA applies and the descriptors read).
// Thread t takes chunks t, t + 128, ...: 8 threads a row, 16 rows a pass.
template <class Op, int ROWS, bool B_SIDE>
__device__ __forceinline__ void sm90a_gather_stage(const typename Op::Params *p, unsigned char *dst, int64_t r0,
                                                   int64_t k0, int64_t b, int t) {
  using T = typename Op::T;
  static_assert(ROWS * 8 % 128 == 0, "whole passes of the producer warpgroup");
  // one chunk at a time: a chunk's index arithmetic (64-bit divisions by the
  // tensor's extents) fits the producer's setmaxnreg budget only alone
#pragma unroll 1
  for (int j = 0; j < ROWS * 8 / 128; ++j) {
    const int i = t + 128 * j, row = i >> 3, ch = i & 7;
    const T *src;
    const int n = B_SIDE ? Op::template b_chunk<8>(p, r0 + row, k0 + 8 * ch, b, &src)
                         : Op::template a_chunk<8>(p, r0 + row, k0 + 8 * ch, b, &src);
    copy_g2s<16>(dst + row * 128 + ((ch ^ (row & 7)) << 4), src, n * (int)sizeof(T));  // TokLoad: zero past n
  }
}

template <class Op>
__device__ __forceinline__ void sm90a_gather_contraction(const typename Op::Params *p) {
  using T = typename Op::T;
  constexpr int BM = Op::BM, BN = Op::BN, BK = Op::BK, STAGES = Op::STAGES, LAG = Op::LAG;
  constexpr int CONSUMERS = 256, PRODUCERS = 128;
  static_assert(BM == 128 && BK * (int)sizeof(T) == 128 && BK == 64, "two 64-row consumer warpgroups, 128-byte K rows");
  static_assert(BN % 64 == 0 && BN <= 128 && STAGES >= 4, "wgmma N and a ring of at least 4 stages");
  static_assert(Op::B_K_CONTIG, "the gathering producer stores both operands along K");
  static_assert(LAG >= 1 && LAG < STAGES, "copies land before the producer waits on their slot again");

  extern __shared__ __align__(1024) unsigned char smem_dyn[];
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  unsigned char *smem_raw = smem_dyn + ((1024 - (smem_addr(smem_dyn) & 1023)) & 1023);

  uint32_t mt, nt;
  tile_coord<Op::RASTER_GROUP>(blockIdx.x, (uint32_t)((Op::extent_m(p) + BM - 1) / BM),
                               (uint32_t)((Op::extent_n(p) + BN - 1) / BN), &mt, &nt);
  const int64_t b = blockIdx.z;
  const int KT = (int)((Op::extent_k(p) + BK - 1) / BK);

  // MbarInit: full[s] completes on every producer thread's arrival (its
  // copies landed and fenced), empty[s] on every consumer thread's release
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], PRODUCERS), mbar_init(&empty[s], CONSUMERS);
    mbar_fence_init();
  }
  __syncthreads();

  if (threadIdx.x < PRODUCERS) {
    setmaxnreg_dec<Op::PRODUCER_REGS>();
    Op::produce(p, smem_raw, full, empty, mt, nt, b, KT, (int)threadIdx.x);
    return;
  }
  sm90a_consumers<Op>(p, smem_raw, full, empty, mt, nt, b, KT);
}

}  // namespace dlc
