// The sm80 skeleton for contractions (spec §9.1, algo_choice "implicit_gemm"):
//
//   cp.async ring (Op::STAGES deep) -> commit/wait -> ldmatrix from a swizzled
//   shared layout -> mma.sync m16n8k16 -> epilogue on the fp32 accumulator ->
//   vectorized st.global
//
// Everything specific to an op comes from the generated `Op` (dlcgen's
// emitter): tile constants, the operand layouts (which index is contiguous),
// the address and in-bounds functions of one operand chunk (from the IndexBook
// AxisMaps and domains), and the epilogue (from the region's post-reduce lets).
// The block computes an output tile of BM x BN (M: lhs-only axes, N: rhs-only
// axes, flattened), over the reduce axes (K) in steps of BK; blockIdx.z is the
// batch index.  VEC is the width, in elements, of one global->shared copy.
//
// Op provides:
//   T, BM, BN, BK, STAGES, WARPS_M, WARPS_N, A_K_CONTIG, B_K_CONTIG, Params
//   extent_k(p)   (the reduction length; p: const Params *.  M, N and the
//     batch are covered by the grid, their tails by the chunk functions)
//   a_chunk<VEC>(p, m, k, b, &src) -> elements valid in [0, VEC]; src is the
//     chunk's address, or the tensor's base when nothing is valid.  The chunk
//     runs along k when A_K_CONTIG, else along m.  b_chunk likewise.
//   epilogue4(p, m, n, b, acc[4]): applies the epilogue to 4 consecutive
//     outputs (n .. n+3) and stores them.
#pragma once

#include "dlc_device.cuh"

namespace dlc {

// Element offset of (row, col) in a shared tile of `L` elements per row, with
// 16-byte chunks XOR-swizzled so that the 8 rows an ldmatrix or a cp.async
// phase touches fall in distinct bank groups.
template <int L>
__device__ __forceinline__ int swz(int row, int col) {
  constexpr int NCH = L / 8;               // 16-byte chunks per row
  constexpr int W = NCH < 8 ? NCH : 8;     // chunks XORed
  constexpr int SH = 8 / W;                // rows that share one XOR value
  return row * L + (((col >> 3) ^ ((row / SH) % W)) << 3) + (col & 7);
}

// One operand tile of the pipeline: ROWS x L elements of shared memory.
// KC: the operand's contiguous index is k (rows are m or n, L = BK);
// otherwise rows are k and L = BM or BN.
template <class Op, int VEC, bool IS_A>
__device__ __forceinline__ void load_operand(const typename Op::Params *p, typename Op::T *tile, int64_t r0,
                                             int64_t k0, int64_t b) {
  using T = typename Op::T;
  constexpr int NT = 32 * Op::WARPS_M * Op::WARPS_N;
  constexpr bool KC = IS_A ? Op::A_K_CONTIG : Op::B_K_CONTIG;
  constexpr int R = IS_A ? Op::BM : Op::BN;
  constexpr int ROWS = KC ? R : Op::BK;
  constexpr int L = KC ? Op::BK : R;
  constexpr int CHUNKS = ROWS * (L / VEC);
  static_assert(L % VEC == 0, "tile row is a whole number of chunks");
#pragma unroll
  for (int i = threadIdx.x; i < CHUNKS; i += NT) {
    const int row = i / (L / VEC), col = (i % (L / VEC)) * VEC;
    const int64_t r = KC ? r0 + row : r0 + col;  // m or n
    const int64_t k = KC ? k0 + col : k0 + row;
    const T *src;
    const int valid = IS_A ? Op::template a_chunk<VEC>(p, r, k, b, &src) : Op::template b_chunk<VEC>(p, r, k, b, &src);
    copy_g2s<VEC * (int)sizeof(T)>(tile + swz<L>(row, col), src, valid * (int)sizeof(T));
  }
}

template <class Op, int VEC>
__device__ __forceinline__ void sm80_contraction(const typename Op::Params *p) {
  using T = typename Op::T;
  constexpr int BM = Op::BM, BN = Op::BN, BK = Op::BK, STAGES = Op::STAGES;
  constexpr int WARPS_N = Op::WARPS_N, NT = 32 * Op::WARPS_M * Op::WARPS_N;
  constexpr int WM = BM / Op::WARPS_M, WN = BN / WARPS_N;
  constexpr int MT = WM / 16, NTL = WN / 8;
  constexpr bool AKC = Op::A_K_CONTIG, BKC = Op::B_K_CONTIG;
  static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "mma tiling");
  static_assert(STAGES >= 2, "a ring needs two stages");

  extern __shared__ __align__(128) unsigned char smem_raw[];
  T *smA = reinterpret_cast<T *>(smem_raw);
  T *smB = smA + STAGES * BM * BK;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int64_t m0 = (int64_t)blockIdx.y * BM, n0 = (int64_t)blockIdx.x * BN, b = blockIdx.z;
  const int64_t K = Op::extent_k(p);
  const int64_t KT = (K + BK - 1) / BK;

  float acc[MT][NTL][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NTL; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;

  // TokLoad for the first STAGES-1 k-tiles
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KT) {
      load_operand<Op, VEC, true>(p, smA + s * BM * BK, m0, (int64_t)s * BK, b);
      load_operand<Op, VEC, false>(p, smB + s * BN * BK, n0, (int64_t)s * BK, b);
    }
    cp_async_commit();
  }

  for (int64_t kt = 0; kt < KT; ++kt) {
    cp_async_wait<STAGES - 2>();  // Wait(TokLoad kt)
    __syncthreads();
    const int64_t pf = kt + STAGES - 1;  // refill the stage consumed last iteration
    if (pf < KT) {
      load_operand<Op, VEC, true>(p, smA + (pf % STAGES) * BM * BK, m0, pf * BK, b);
      load_operand<Op, VEC, false>(p, smB + (pf % STAGES) * BN * BK, n0, pf * BK, b);
    }
    cp_async_commit();
    const T *sA = smA + (kt % STAGES) * BM * BK;
    const T *sB = smB + (kt % STAGES) * BN * BK;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t af[MT][4], bfr[NTL][2];
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const int mrow = wm * WM + i * 16;
        // matrices: (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15)
        const int mat = lane / 8, r8 = lane % 8;
        const int m = mrow + (mat & 1) * 8, k = kk + (mat >> 1) * 8;
        if constexpr (AKC) ldmatrix_x4<false>(af[i], sA + swz<BK>(m + r8, k));
        else ldmatrix_x4<true>(af[i], sA + swz<BM>(k + r8, m));
      }
#pragma unroll
      for (int j = 0; j < NTL; j += 2) {
        const int ncol = wn * WN + j * 8;
        // matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
        const int mat = lane / 8, r8 = lane % 8;
        const int n = ncol + (mat >> 1) * 8, k = kk + (mat & 1) * 8;
        uint32_t t[4];
        if constexpr (BKC) ldmatrix_x4<false>(t, sB + swz<BK>(n + r8, k));
        else ldmatrix_x4<true>(t, sB + swz<BN>(k + r8, n));
        bfr[j][0] = t[0], bfr[j][1] = t[1], bfr[j + 1][0] = t[2], bfr[j + 1][1] = t[3];
      }
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NTL; ++j) mma_16816<T>(acc[i][j], af[i], bfr[j]);  // TokCompute
    }
  }
  cp_async_wait<0>();
  __syncthreads();

  // Epilogue: stage the fp32 accumulators in shared memory (rows padded by 8
  // floats: conflict-free), then each thread applies the epilogue to 4
  // consecutive outputs and stores them with one vector st.global.
  constexpr int SROW = BN + 8;
  float *stage = reinterpret_cast<float *>(smem_raw);
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NTL; ++j) {
      const int r = wm * WM + i * 16 + lane / 4, c = wn * WN + j * 8 + 2 * (lane % 4);
      st_shared_v2(&stage[r * SROW + c], acc[i][j][0], acc[i][j][1]);
      st_shared_v2(&stage[(r + 8) * SROW + c], acc[i][j][2], acc[i][j][3]);
    }
  __syncthreads();
#pragma unroll 2
  for (int i = threadIdx.x; i < BM * BN / 4; i += NT) {
    const int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
    const float4 v = *reinterpret_cast<const float4 *>(&stage[r * SROW + c]);
    const float a4[4] = {v.x, v.y, v.z, v.w};
    Op::epilogue4(p, m0 + r, n0 + c, b, a4);  // TokEpilogue, then the store
  }
}

// Dynamic shared memory of one block: the operand ring, reused by the
// epilogue's staging tile.
template <class Op>
constexpr int sm80_contraction_smem() {
  constexpr int ring = Op::STAGES * (Op::BM + Op::BN) * Op::BK * (int)sizeof(typename Op::T);
  constexpr int stage = Op::BM * (Op::BN + 8) * (int)sizeof(float);
  return ring > stage ? ring : stage;
}

}  // namespace dlc
