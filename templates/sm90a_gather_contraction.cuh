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
// arrivals).  Op provides a_chunk<8>, b_chunk<8>, Params, and, rendered
// from the GPU IR, kernel(p): the CTA's setup and roles on
// sm90a_contraction.cuh's Sm90aCta, and produce(p, ring, full, empty, mt,
// nt, b, KT, t): the producer's k-loop, which copies a stage with
// sm90a_gather_stage; both operands are stored along K.
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
  static_assert(Op::BM == 128 && Op::BK * (int)sizeof(T) == 128 && Op::BK == 64,
                "two 64-row consumer warpgroups, 128-byte K rows");
  static_assert(Op::BN % 64 == 0 && Op::BN <= 128 && Op::STAGES >= 4, "wgmma N and a ring of at least 4 stages");
  static_assert(Op::B_K_CONTIG, "the gathering producer stores both operands along K");
  static_assert(Op::LAG >= 1 && Op::LAG < Op::STAGES, "copies land before the producer waits on their slot again");
  Op::kernel(p);
}

}  // namespace dlc
