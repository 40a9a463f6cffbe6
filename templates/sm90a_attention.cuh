// The sm90a skeleton for attention (spec §15.3, algo_choice "wgmma_softmax"),
// FlashAttention-3's structure.  One block computes BM = 128 query rows of
// one batch index, streaming over key tiles of BN (Op::THREADS = 384):
//
//   producer warp (warpgroup 0, one elected lane): TMA boxes of Q (once, on
//     its own mbarrier) and of K and V into a ring of Op::STAGES stages,
//     each completed on its `full` mbarrier (arrive.expect_tx +
//     complete_tx) after the wait on its `empty` mbarrier; query and key
//     tails are the TMA's zero fill;
//   two consumer warpgroups (warpgroups 1 and 2, wg 0 and 1: query rows
//     64 wg .. 64 wg + 63), each a key tile: wait on the stage's full
//     barrier -> in its ping-pong turn (bar.sync on its scheduler barrier
//     2 + wg, which the other warpgroup arrives at once it has issued its
//     S) S = Q K^T as SS wgmma m64nBNk16 (Q and K K-major, 128-byte swizzle
//     descriptors), then bar.arrive on the other's barrier -> the score
//     lets on the accumulators (scale, mask; key tails take the max's
//     neutral) -> online softmax (running row max and sum, rescaled with
//     the IR's exp2 shift) -> P converted in registers to wgmma A
//     fragments -> O += P V as RS wgmma m64nDVk16 (V MN-major through
//     imm-trans-b) -> release the stage on its empty barrier.  One
//     warpgroup's softmax thus runs while the other's S is on the tensor
//     cores;
//   setmaxnreg: the producer warpgroup gives registers up, the consumers
//     take them;
//   O / l -> the output epilogue and store, as the sm80 skeleton.
//
// A wgmma accumulator's layout per warp is the m16n8 layout of mma.sync (a
// thread holds rows lane/4 and lane/4 + 8, columns 2 (lane % 4) + {0, 1} of
// every n8 block), and an RS wgmma's A fragment is m16n8k16's: the score,
// softmax and P code is the sm80 skeleton's on those registers.
//
// Shared tiles: each is D / 64 (DV / 64) column blocks of ROWS rows of 128
// bytes, one TMA box {64, ROWS} each, 16-byte chunk c of row r at chunk
// c ^ (r % 8) (the 128-byte swizzle, repeating every 1024 bytes: the
// block's dynamic shared memory is aligned to 1024 here, the GPU IR's 1 KB
// of slack).  A K-major descriptor (Q, K) moves 32 bytes a k16 step inside
// a 128-byte row and a column block every 4 steps; V's MN-major descriptor
// has SBO 1024 (8 keys), LBO one column block (the next 64 of DV), and
// moves 2048 bytes (16 keys) a step.
//
// TMA writes through the async proxy, as wgmma reads: a wait on the full
// barrier is all a consumer needs before its wgmma.  Each wgmma group is
// waited for (wgmma.wait_group 0) before its accumulators are read, and the
// P V group before its stage is released.
//
// Op provides, beyond the score, softmax, tile and epilogue functions of
// sm80_attention.cuh: TParams (tmap_q, tmap_k, tmap_v, p), STAGES, THREADS,
// PRODUCER_REGS, CONSUMER_REGS, q_box, k_box, v_box (Q_RANK, K_RANK,
// V_RANK): a box's coordinates in its tensor map, innermost dim first, and
// produce(tp, smQ, smK, smV, qfull, full, empty, m0, b, nt, next): the
// producer's copies, rendered from the GPU IR, over the key tiles that
// next(t, full) walks.
#pragma once

#include "dlc_device.cuh"
#include "sm80_contraction.cuh"

namespace dlc {

template <class Op>
__device__ __forceinline__ void sm90a_attention(const typename Op::TParams *tp) {
  using T = typename Op::T;
  using PT = typename Op::PT;
  constexpr int BM = Op::BM, BN = Op::BN, D = Op::D, DV = Op::DV, STAGES = Op::STAGES;
  constexpr int NTS = BN / 8;  // n8 blocks of S a warp
  constexpr int NTO = DV / 8;  // n8 blocks of O a warp
  constexpr int CONSUMERS = 256;  // two warpgroups of 64 query rows each
  constexpr bool SPLIT = sizeof(PT) == 4;  // fp32 P: hi + lo fragments of T
  static_assert(BM == 128 && (BN == 64 || BN == 128) && (D == 64 || D == 128) && (DV == 64 || DV == 128),
                "two consumer warpgroups of 64 query rows; key tiles and head dims of 64 or 128");
  static_assert(Op::THREADS == 128 + CONSUMERS && STAGES >= 2, "a producer warpgroup, two consumer warpgroups, a ring");
  const typename Op::Params *p = &tp->p;

  extern __shared__ __align__(1024) unsigned char smem_dyn[];
  __shared__ __align__(8) uint64_t qfull, full[STAGES], empty[STAGES];
  unsigned char *smem_raw = smem_dyn + ((1024 - (smem_addr(smem_dyn) & 1023)) & 1023);
  T *smQ = reinterpret_cast<T *>(smem_raw);
  T *smK = smQ + BM * D;           // [STAGES][D/64][BN][64]
  T *smV = smK + STAGES * BN * D;  // [STAGES][DV/64][BN][64]

  const int64_t m0 = (int64_t)blockIdx.x * BM, b = blockIdx.y;
  const int64_t SK = Op::extent_kv(p);
  const int64_t NT = (SK + BN - 1) / BN;
  // the last key tile the mask leaves anything of
  int64_t nt = NT;
  while (nt > 0 && !Op::tile_live(p, m0, m0 + BM, (nt - 1) * BN, nt * BN, b)) --nt;
  // full tiles (inside the keys, no mask removes anything) first, then the
  // other live tiles; the online softmax takes them in any order.  The
  // producer and the consumers walk the same sequence through the ring.
  auto full_tile = [&](int64_t t) {
    return (t + 1) * BN <= SK && Op::tile_full(p, m0, m0 + BM, t * BN, (t + 1) * BN, b);
  };
  auto next = [&](int64_t t, bool want_full) {
    for (++t; t < nt; ++t)
      if (full_tile(t) == want_full && Op::tile_live(p, m0, m0 + BM, t * BN, (t + 1) * BN, b)) return t;
    return nt;
  };

  // MbarInit: qfull and full[s] complete on the producer's arrival and its
  // bytes, empty[s] on every consumer thread's release
  if (threadIdx.x == 0) {
    mbar_init(&qfull, 1);
    for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], CONSUMERS);
    mbar_fence_init();
  }
  __syncthreads();

  if (threadIdx.x < 128) {
    // the producer warpgroup: registers down, one elected lane of warp 0 copies
    setmaxnreg_dec<Op::PRODUCER_REGS>();
    if (threadIdx.x < 32 && elect_one()) Op::produce(tp, smQ, smK, smV, &qfull, full, empty, m0, b, nt, next);
    return;
  }

  // the consumer warpgroups: registers up, 64 query rows each, 16 a warp
  setmaxnreg_inc<Op::CONSUMER_REGS>();
  // the warpgroup index through a shuffle: warp-uniform for the compiler
  const int tid = threadIdx.x - 128, wg = __shfl_sync(0xffffffffu, tid / 128, 0), warp = (tid / 32) % 4,
            lane = tid % 32;
  // Descriptors: the low word holds the start address (>> 4, below 2^14),
  // so a stage, a k16 step or a column block is a 32-bit addition to it.
  // A warpgroup's Q rows start 64 rows (8 KB, a whole number of swizzle
  // periods) into each column block of the 128-row tile.
  const uint64_t dq0 = wgmma_desc_128b(smem_addr(smQ) + wg * 64 * 128, 16, 1024);
  const uint64_t dk0 = wgmma_desc_128b(smem_addr(smK), 16, 1024);
  const uint64_t dv0 = wgmma_desc_128b(smem_addr(smV), BN * 128, 1024);
  uint32_t q_lo = (uint32_t)dq0, k_lo = (uint32_t)dk0, v_lo = (uint32_t)dv0;
  uint32_t full0 = smem_addr(full), empty0 = smem_addr(empty);
  keep(q_lo), keep(k_lo), keep(v_lo), keep(full0), keep(empty0);
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
    // ping-pong: this warpgroup's turn on the tensor cores (the other
    // warpgroup arrived after issuing its S), then the other's
    named_barrier(2 + wg, CONSUMERS);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      // (bytes >> 4): column block kk / 4 (ROWS rows of 128 bytes), 32 bytes a k16 step inside it
      Wgmma<T, BN, false>::run(s, q_hi | (q_lo + (uint32_t)((kk / 4) * BM * 8 + (kk % 4) * 2)),
                               k_hi | (ks0 + (uint32_t)((kk / 4) * BN * 8 + (kk % 4) * 2)));
    }
    wgmma_commit();
    named_barrier_arrive(2 + (wg ^ 1), CONSUMERS);
    wgmma_wait<0>();
    // the score lets; on other tiles key tails take the row max's neutral
    const int64_t mr0 = m0 + wg * 64 + warp * 16 + lane / 4;
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

  mbar_wait(&qfull, 0);  // Wait(TokLoad Q)
  // warpgroup 0 takes the tensor cores first
  if (wg == 1) named_barrier_arrive(2, CONSUMERS);
  // One pass over the full tiles, then one over the others, through the
  // ring in the producer's order.
  int st = 0;
  uint32_t phase = 0;
  auto pass = [&](auto full_tag) {
    constexpr bool FULL = decltype(full_tag)::value;
#pragma unroll 1
    for (int64_t t = next(-1, FULL); t < nt; t = next(t, FULL)) {
      mbar_wait(full0 + 8 * st, phase);  // Wait(TokLoad K/V t)
      compute(full_tag, t, st);
      mbar_arrive(empty0 + 8 * st);  // the stage's wgmma are done: back to the producer
      if (++st == STAGES) st = 0, phase ^= 1;
    }
  };
  pass(std::true_type{});
  pass(std::false_type{});
  // warpgroup 0 takes the other's last arrival (its barrier saw one more
  // arrival than its turns), so that no barrier is left half-complete
  if (wg == 0) named_barrier(2, CONSUMERS);
  // the row sums over the quad, then O / l (the IR's division)
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    lrow[h] += __shfl_xor_sync(0xffffffffu, lrow[h], 1);
    lrow[h] += __shfl_xor_sync(0xffffffffu, lrow[h], 2);
  }
  // every consumer is past its last wgmma: Q and the ring are free
  named_barrier(1, CONSUMERS);
  // O / l staged as the contraction skeleton stages its accumulators
  // (stage_col), then its epilogue (store_staged, DV wide, by the 256
  // consumers): the full-width one when the GPU IR has one (the query rows
  // past the end skipped), else 4 bounds-checked outputs a thread.
  constexpr int SROW = DV + 8;
  float *stage = reinterpret_cast<float *>(smem_raw);
#pragma unroll
  for (int j = 0; j < NTO; ++j) {
    const int r = wg * 64 + warp * 16 + lane / 4, c = stage_col(j * 8 + 2 * (lane % 4));
    st_shared_v2(&stage[r * SROW + c], Op::finish(o[4 * j], lrow[0]), Op::finish(o[4 * j + 1], lrow[0]));
    st_shared_v2(&stage[(r + 8) * SROW + c], Op::finish(o[4 * j + 2], lrow[1]), Op::finish(o[4 * j + 3], lrow[1]));
  }
  named_barrier(1, CONSUMERS);
  store_staged<Op, CONSUMERS, DV>(p, stage, m0, 0, b, (unsigned)tid);
}

}  // namespace dlc
