// The sm90a skeleton for attention (spec §15.3, algo_choice "wgmma_softmax"),
// FlashAttention-3's math on one warpgroup.  One block computes BM = 64 query
// rows (one warpgroup, 4 warps x 16 rows) of one batch index, streaming over
// key tiles of BN:
//
//   cp.async Q tile and a 2-stage K/V ring (the chunk functions: tails and
//   pads zero-fill) -> fence.proxy.async + barrier -> S = Q K^T as SS wgmma
//   m64nBNk16 (Q and K K-major, 128-byte swizzle descriptors) -> the score
//   lets on the accumulators (scale, mask; key tails take the max's
//   neutral) -> online softmax (running row max and sum, rescaled with the
//   IR's exp2 shift) -> P converted in registers to wgmma A fragments ->
//   O += P V as RS wgmma m64nDVk16 (V MN-major through imm-trans-b) ->
//   O / l -> the output epilogue and store, as the sm80 skeleton.
//
// A wgmma accumulator's layout per warp is the m16n8 layout of mma.sync (a
// thread holds rows lane/4 and lane/4 + 8, columns 2 (lane % 4) + {0, 1} of
// every n8 block), and an RS wgmma's A fragment is m16n8k16's: the score,
// softmax and P code is the sm80 skeleton's on those registers.
//
// Shared tiles: each is D / 64 (DV / 64) column blocks of ROWS rows of 128
// bytes, 16-byte chunk c of row r at chunk c ^ (r % 8) (the 128-byte
// swizzle, repeating every 1024 bytes: the block's dynamic shared memory is
// aligned to 1024 here, the GPU IR's 1 KB of slack).  A K-major descriptor
// (Q, K) moves 32 bytes a k16 step inside a 128-byte row and a column block
// every 4 steps; V's MN-major descriptor has SBO 1024 (8 keys), LBO one
// column block (the next 64 of DV), and moves 2048 bytes (16 keys) a step.
//
// cp.async writes through the generic proxy and wgmma reads through the
// async proxy: every thread fences (fence.proxy.async) after its copies
// land and before the barrier the wgmma follows.  Each wgmma group is
// waited for (wgmma.wait_group 0) before its accumulators are read, and the
// P V group before its stage is refilled.
//
// Op provides what sm80_attention.cuh lists (Q_REGS and SWZ_D/SWZ_DV are
// not read); full key tiles stream K and V by the row steps, as there.
#pragma once

#include "dlc_device.cuh"
#include "sm80_contraction.cuh"

namespace dlc {

// The element offset of (row r, column c, c a multiple of 8) in a tile of
// ROWS rows laid out in 64-element column blocks of 128-byte swizzle rows.
template <int ROWS>
__device__ __forceinline__ int sw128(int r, int c) {
  return (c / 64) * ROWS * 64 + r * 64 + ((((c % 64) / 8) ^ (r % 8)) * 8);
}

// The Q (KIND 0), K (1) or V (2) tile: 16-byte chunks through the chunk
// functions (elements past a tail or under a pad are zero-filled).
template <class Op, int KIND>
__device__ __forceinline__ void load_att90(const typename Op::Params *p, typename Op::T *tile, int64_t r0, int64_t b) {
  using T = typename Op::T;
  constexpr int VEC = 16 / (int)sizeof(T);
  constexpr int ROWS = KIND == 0 ? Op::BM : Op::BN;
  constexpr int L = KIND == 2 ? Op::DV : Op::D;
  constexpr int CHUNKS = ROWS * (L / VEC);
#pragma unroll 4
  for (int i = threadIdx.x; i < CHUNKS; i += 128) {
    const int row = i / (L / VEC), col = (i % (L / VEC)) * VEC;
    const T *src;
    int valid;
    if constexpr (KIND == 0) valid = Op::template q_chunk<VEC>(p, r0 + row, col, b, &src);
    else if constexpr (KIND == 1) valid = Op::template k_chunk<VEC>(p, r0 + row, col, b, &src);
    else valid = Op::template v_chunk<VEC>(p, col, r0 + row, b, &src);
    copy_g2s<16>(tile + sw128<ROWS>(row, col), src, valid * (int)sizeof(T));
  }
}

// A full K (KIND 1) or V (KIND 2) tile from the thread's row pointer (the
// GPU IR's row steps): its chunk i is i * RPP keys below its chunk 0, at a
// fixed distance in the tile (RPP is a multiple of 8: the swizzle's phase
// stays); no bounds (a full tile lies inside the keys and the head dims).
template <class Op, int KIND>
__device__ __forceinline__ void load_att90_rows(typename Op::T *tile, const typename Op::T *row0, int64_t rstep) {
  constexpr int VEC = 16 / (int)sizeof(typename Op::T);
  constexpr int L = KIND == 2 ? Op::DV : Op::D, CPR = L / VEC, RPP = 128 / CPR, CH = Op::BN / RPP;
  const int off = sw128<Op::BN>((int)threadIdx.x / CPR, ((int)threadIdx.x % CPR) * VEC);
#pragma unroll
  for (int i = 0; i < CH; ++i) copy_g2s_full<16>(tile + off + i * RPP * 64, row0 + i * RPP * rstep);
}

template <class Op>
__device__ __forceinline__ void sm90a_attention(const typename Op::Params *p) {
  using T = typename Op::T;
  using PT = typename Op::PT;
  constexpr int BM = Op::BM, BN = Op::BN, D = Op::D, DV = Op::DV;
  constexpr int NTS = BN / 8;  // n8 blocks of S a warp
  constexpr int NTO = DV / 8;  // n8 blocks of O a warp
  constexpr bool SPLIT = sizeof(PT) == 4;  // fp32 P: hi + lo fragments of T
  static_assert(BM == 64 && (BN == 64 || BN == 128) && (D == 64 || D == 128) && (DV == 64 || DV == 128),
                "one warpgroup of 64 query rows; key tiles and head dims of 64 or 128");

  extern __shared__ __align__(1024) unsigned char smem_dyn[];
  unsigned char *smem_raw = smem_dyn + ((1024 - (smem_addr(smem_dyn) & 1023)) & 1023);
  T *smQ = reinterpret_cast<T *>(smem_raw);
  T *smK = smQ + BM * D;      // [2][D/64][BN][64]
  T *smV = smK + 2 * BN * D;  // [2][DV/64][BN][64]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t m0 = (int64_t)blockIdx.x * BM, b = blockIdx.y;
  const int64_t SK = Op::extent_kv(p);
  const int64_t NT = (SK + BN - 1) / BN;
  // the last key tile the mask leaves anything of
  int64_t nt = NT;
  while (nt > 0 && !Op::tile_live(p, m0, m0 + BM, (nt - 1) * BN, nt * BN, b)) --nt;
  // full tiles (inside the keys, no mask removes anything) first, then the
  // other live tiles; the online softmax takes them in any order
  auto full = [&](int64_t t) {
    return (t + 1) * BN <= SK && Op::tile_full(p, m0, m0 + BM, t * BN, (t + 1) * BN, b);
  };
  auto next = [&](int64_t t, bool want_full) {
    for (++t; t < nt; ++t)
      if (full(t) == want_full && Op::tile_live(p, m0, m0 + BM, t * BN, (t + 1) * BN, b)) return t;
    return nt;
  };

  load_att90<Op, 0>(p, smQ, m0, b);
  cp_async_commit();  // TokLoad Q
  cp_async_wait<0>();
  fence_proxy_async();
  __syncthreads();

  // Descriptors: the low word holds the start address (>> 4, below 2^14),
  // so a stage, a k16 step or a column block is a 32-bit addition to it.
  const uint64_t dq0 = wgmma_desc_128b(smem_addr(smQ), 16, 1024);
  const uint64_t dk0 = wgmma_desc_128b(smem_addr(smK), 16, 1024);
  const uint64_t dv0 = wgmma_desc_128b(smem_addr(smV), BN * 128, 1024);
  uint32_t q_lo = (uint32_t)dq0, k_lo = (uint32_t)dk0, v_lo = (uint32_t)dv0;
  keep(q_lo), keep(k_lo), keep(v_lo);
  const uint64_t q_hi = dq0 & ~0xFFFFFFFFull, k_hi = dk0 & ~0xFFFFFFFFull, v_hi = dv0 & ~0xFFFFFFFFull;

  float o[DV / 2];
#pragma unroll
  for (int i = 0; i < DV / 2; ++i) o[i] = 0.f;
  float mrow[2] = {Op::MAX_INIT, Op::MAX_INIT}, lrow[2] = {0.f, 0.f};  // rows lane/4 and lane/4+8

  // One key tile from stage st (TokCompute for S and for O += P V).
  auto compute = [&](auto full_tag, int64_t t, int st) {
    constexpr bool FULL = decltype(full_tag)::value;
    const int64_t n0 = t * BN;
    // S = Q K^T: D/16 SS wgmma into fresh accumulators
    float s[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) s[i] = 0.f;
    const uint32_t ks0 = k_lo + (uint32_t)st * (BN * D * (int)sizeof(T) / 16);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      // (bytes >> 4): column block kk / 4 (ROWS rows of 128 bytes), 32 bytes a k16 step inside it
      Wgmma<T, BN, false>::run(s, q_hi | (q_lo + (uint32_t)((kk / 4) * BM * 8 + (kk % 4) * 2)),
                               k_hi | (ks0 + (uint32_t)((kk / 4) * BN * 8 + (kk % 4) * 2)));
    }
    wgmma_commit();
    wgmma_wait<0>();
    // the score lets; on other tiles key tails take the row max's neutral
    const int64_t mr0 = m0 + warp * 16 + lane / 4;
    float mnew[2] = {mrow[0], mrow[1]};
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t m = mr0 + (e >> 1) * 8, n = n0 + j * 8 + 2 * (lane % 4) + (e & 1);
        float &x = s[4 * j + e];
        if constexpr (FULL) x = Op::score_full(p, m, n, b, x);
        else x = n < SK ? Op::score(p, m, n, b, x) : Op::MAX_INIT;
        mnew[e >> 1] = fmaxf(mnew[e >> 1], x);
      }
    // the running row max across the quad that shares each row
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mnew[h] = fmaxf(mnew[h], __shfl_xor_sync(0xffffffffu, mnew[h], 1));
      mnew[h] = fmaxf(mnew[h], __shfl_xor_sync(0xffffffffu, mnew[h], 2));
    }
    float scale[2], psum[2] = {0.f, 0.f};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // a row with nothing unmasked yet keeps a zero shift (no inf - inf)
      const float mref = mnew[h] == Op::MAX_INIT ? 0.f : mnew[h];
      scale[h] = mrow[h] == Op::MAX_INIT ? 0.f : Op::expdiff(mrow[h], mref);
      mrow[h] = mnew[h];
#pragma unroll
      for (int j = 0; j < NTS; ++j) {
        s[4 * j + 2 * h] = Op::expdiff(s[4 * j + 2 * h], mref);
        s[4 * j + 2 * h + 1] = Op::expdiff(s[4 * j + 2 * h + 1], mref);
        psum[h] += s[4 * j + 2 * h] + s[4 * j + 2 * h + 1];
      }
      lrow[h] = lrow[h] * scale[h] + psum[h];  // the quad's partial sums are combined at the end
    }
#pragma unroll
    for (int j = 0; j < NTO; ++j) {
      o[4 * j] *= scale[0], o[4 * j + 1] *= scale[0];
      o[4 * j + 2] *= scale[1], o[4 * j + 3] *= scale[1];
    }
    // P's A fragments: the accumulators of two n8 blocks are one k16 step
    uint32_t pf[BN / 16][4];
    [[maybe_unused]] uint32_t pl[SPLIT ? BN / 16 : 1][4];
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk)
#pragma unroll
      for (int f = 0; f < 4; ++f) {
        const float a = s[8 * kk + 2 * f], c = s[8 * kk + 2 * f + 1];
        pf[kk][f] = pack2<T>(a, c);
        if constexpr (SPLIT) {
          const float h0 = to_f32(from_f32<T>(a)), h1 = to_f32(from_f32<T>(c));
          pl[kk][f] = pack2<T>(a - h0, c - h1);
        }
      }
    // O += P V: BN/16 RS wgmma (twice for an fp32 P)
    const uint32_t vs0 = v_lo + (uint32_t)st * (BN * DV * (int)sizeof(T) / 16);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      WgmmaRS<T, DV, true>::run(o, pf[kk], v_hi | (vs0 + (uint32_t)kk * (2048 / 16)));
      if constexpr (SPLIT) WgmmaRS<T, DV, true>::run(o, pl[SPLIT ? kk : 0], v_hi | (vs0 + (uint32_t)kk * (2048 / 16)));
    }
    wgmma_commit();
    wgmma_wait<0>();
  };

  // One pass over the full tiles, then one over the others: a 2-stage K/V
  // ring, the next tile of the pass prefetched while this one computes.
  // Full tiles stream K and V from one row pointer each (the GPU IR's row
  // steps, Op::KV_STREAM): a thread's chunks are whole numbers of 8 rows
  // apart (16 rows at 64 elements a row, 8 at 128).
  constexpr int VEC = 16 / (int)sizeof(T);
  constexpr bool KVS = Op::KV_STREAM;
  const T *krow = nullptr, *vrow = nullptr;
  int64_t krs = 0, vrs = 0;
  if constexpr (KVS) {
    if (SK > 0) {
      // key 0, head-dim column 0 of this batch index: valid whenever SK > 0
      Op::template k_chunk<VEC>(p, 0, 0, b, &krow);
      Op::template v_chunk<VEC>(p, 0, 0, b, &vrow);
    }
    krs = Op::k_rstep(p), vrs = Op::v_rstep(p);
    krow += ((int)threadIdx.x / (D / VEC)) * krs + ((int)threadIdx.x % (D / VEC)) * VEC;
    vrow += ((int)threadIdx.x / (DV / VEC)) * vrs + ((int)threadIdx.x % (DV / VEC)) * VEC;
  }
  int st = 0;
  auto load_kv = [&](auto full_tag, int64_t t, int stage) {
    if constexpr (decltype(full_tag)::value && KVS) {
      load_att90_rows<Op, 1>(smK + stage * BN * D, krow + t * BN * krs, krs);
      load_att90_rows<Op, 2>(smV + stage * BN * DV, vrow + t * BN * vrs, vrs);
    } else {
      load_att90<Op, 1>(p, smK + stage * BN * D, t * BN, b);
      load_att90<Op, 2>(p, smV + stage * BN * DV, t * BN, b);
    }
  };
  auto pass = [&](auto full_tag) {
    constexpr bool FULL = decltype(full_tag)::value;
    int64_t t = next(-1, FULL);
    if (t < nt) load_kv(full_tag, t, st);
    cp_async_commit();  // TokLoad K/V t
    while (t < nt) {
      const int64_t tn = next(t, FULL);
      if (tn < nt) load_kv(full_tag, tn, st ^ 1);
      cp_async_commit();
      cp_async_wait<1>();  // Wait(TokLoad t)
      fence_proxy_async();
      __syncthreads();
      compute(full_tag, t, st);
      __syncthreads();  // the stage is free for the load two tiles ahead
      st ^= 1;
      t = tn;
    }
  };
  pass(std::true_type{});
  pass(std::false_type{});
  cp_async_wait<0>();
  // the row sums over the quad, then O / l (the IR's division)
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    lrow[h] += __shfl_xor_sync(0xffffffffu, lrow[h], 1);
    lrow[h] += __shfl_xor_sync(0xffffffffu, lrow[h], 2);
  }
  __syncthreads();
  // O / l staged as the contraction skeleton stages its accumulators
  // (stage_col), then the full-tile epilogue when the GPU IR has one and
  // the query rows are all inside, else 4 bounds-checked outputs a thread.
  constexpr int SROW = DV + 8;
  float *stage = reinterpret_cast<float *>(smem_raw);
#pragma unroll
  for (int j = 0; j < NTO; ++j) {
    const int r = warp * 16 + lane / 4, c = stage_col(j * 8 + 2 * (lane % 4));
    st_shared_v2(&stage[r * SROW + c], Op::finish(o[4 * j], lrow[0]), Op::finish(o[4 * j + 1], lrow[0]));
    st_shared_v2(&stage[(r + 8) * SROW + c], Op::finish(o[4 * j + 2], lrow[1]), Op::finish(o[4 * j + 3], lrow[1]));
  }
  __syncthreads();
  if constexpr (Op::EPI_VEC > 0) {
    constexpr int EV = Op::EPI_VEC, TPR = DV / EV, RPP = 128 / TPR;
    static_assert(DV % EV == 0 && 128 % TPR == 0 && BM % RPP == 0 && EV % 4 == 0, "threads cover whole rows");
    if (Op::epi_full(p, m0, 0)) {
      const int c = ((int)threadIdx.x % TPR) * EV;
      typename Op::EpiCols cols;
      Op::epi_cols(p, c, b, cols);
#pragma unroll 2
      for (int r = (int)threadIdx.x / TPR; r < BM; r += RPP) {
        float a[EV];
#pragma unroll
        for (int q = 0; q < EV / 4; ++q) {
          const float4 v = *reinterpret_cast<const float4 *>(&stage[r * SROW + stage_col(c + 4 * q)]);
          a[4 * q] = v.x, a[4 * q + 1] = v.y, a[4 * q + 2] = v.z, a[4 * q + 3] = v.w;
        }
        Op::epi_row(p, m0 + r, c, b, cols, a);
      }
      return;
    }
  }
#pragma unroll 2
  for (int i = threadIdx.x; i < BM * DV / 4; i += 128) {
    const int r = i / (DV / 4), c = (i % (DV / 4)) * 4;
    const float4 v = *reinterpret_cast<const float4 *>(&stage[r * SROW + stage_col(c)]);
    const float a4[4] = {v.x, v.y, v.z, v.w};
    Op::epilogue4(p, m0 + r, c, b, a4);
  }
}

}  // namespace dlc
