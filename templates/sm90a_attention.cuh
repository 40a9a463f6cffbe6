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
// The kernel is the Op's kernel(tp), rendered from the GPU IR: the CTA's
// setup (Sm90aAttCta below: the tiles, the barriers, the roles) and what
// each role runs.
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
// q_box, k_box, v_box (Q_RANK, K_RANK, V_RANK): a box's coordinates in its
// tensor map, innermost dim first; and, rendered from the GPU IR:
// kernel(tp), the CTA's setup and roles, one call on Sm90aAttCta a
// statement; produce(tp, smQ, smK, smV, qfull, full, empty, m0, b, nt,
// next): the producer's copies; consume(p, c, qfull, next): the consumers'
// key tiles and epilogue, one call on Sm90aAttConsumer a statement; both
// over the key tiles that next(t, full) (Sm90aKeyOrder) walks.
#pragma once

#include "dlc_device.cuh"
#include "sm80_contraction.cuh"

namespace dlc {

// The sm90a attention consumers' state and primitives, one thread's: the
// consumers run the Op's consume(p, c, qfull, next), which the emitter
// renders from the GPU IR, one call a statement (docs/codegen.md); nothing
// here decides an order.
//   (constructor)  the warpgroup, the wgmma descriptors' words, the ring's
//                  barriers
//   acc_zero       AccZero: O, each lane's rows' max and sum
//   first_turn, turn, hand_off, last_turn, consumers_sync   the Barriers:
//                  the ping-pong scheduler's (2 + wg) and the consumers' (1)
//   wait_full      MbarWait on the stage's full barrier
//   qk             Wgmma: S = Q K^T, D/16 SS wgmma into fresh accumulators
//   wgmma_done     WgmmaWait: commit_group and wait_group 0
//   score_full, score<MODE>   the score lets; row_max, rescale, probs,
//                  p_frags   the online softmax, and P as A fragments
//   pv             Wgmma: O += P V, BN/16 RS wgmma (twice for an fp32 P)
//   release        MbarArrive on the stage's empty barrier; next_stage
//   row_sums, finish, stage_o, store_full, store_checked   the rows' sums
//                  over the quad, O / l, staged, stored
// A wgmma accumulator's layout per warp is the m16n8 layout of mma.sync (a
// thread holds rows lane/4 and lane/4 + 8, columns 2 (lane % 4) + {0, 1} of
// every n8 block), and an RS wgmma's A fragment is m16n8k16's.
template <class Op>
struct Sm90aAttConsumer {
  using T = typename Op::T;
  using PT = typename Op::PT;
  using Params = typename Op::Params;
  static constexpr int BM = Op::BM, BN = Op::BN, D = Op::D, DV = Op::DV, STAGES = Op::STAGES;
  static constexpr int NTS = BN / 8;  // n8 blocks of S a warp
  static constexpr int NTO = DV / 8;  // n8 blocks of O a warp
  static constexpr int CONSUMERS = 256;  // two warpgroups of 64 query rows each
  static constexpr bool SPLIT = sizeof(PT) == 4;  // fp32 P: hi + lo fragments of T
  using SAcc = float[BN / 2];
  using PFrags = uint32_t[SPLIT ? 2 : 1][BN / 16][4];  // P's A fragments (and their lo parts)

  // What the key tiles read but never change is computed here once (Q's
  // descriptors, the thread's first row): derived from these members
  // inside the loops, they were recomputed every key tile.
  unsigned char *smem_raw;
  int tid, wg, warp, lane, st;
  uint32_t phase;
  int64_t m0, b, SK, nt, mr0;  // mr0: the thread's first row
  uint32_t k_lo, v_lo, full0, empty0;
  uint64_t k_hi, v_hi;
  uint64_t qd[D / 16];  // Q's descriptor at each k16 step
  float o[DV / 2];
  float mrow[2], lrow[2];  // rows lane/4 and lane/4+8

  __device__ __forceinline__ Sm90aAttConsumer(unsigned char *smem, uint64_t *full, uint64_t *empty, int64_t m0_,
                                              int64_t b_, int64_t sk, int64_t nt_)
      : smem_raw(smem), st(0), phase(0), m0(m0_), b(b_), SK(sk), nt(nt_) {
    // the warpgroup index through a shuffle: warp-uniform for the compiler
    tid = threadIdx.x - 128, wg = __shfl_sync(0xffffffffu, tid / 128, 0), warp = (tid / 32) % 4, lane = tid % 32;
    const T *smQ = reinterpret_cast<const T *>(smem_raw), *smK = smQ + BM * D, *smV = smK + STAGES * BN * D;
    // Descriptors: the low word holds the start address (>> 4, below 2^14),
    // so a stage, a k16 step or a column block is a 32-bit addition to it.
    // A warpgroup's Q rows start 64 rows (8 KB, a whole number of swizzle
    // periods) into each column block of the 128-row tile.
    const uint64_t dq0 = wgmma_desc_128b(smem_addr(smQ) + wg * 64 * 128, 16, 1024);
    const uint64_t dk0 = wgmma_desc_128b(smem_addr(smK), 16, 1024);
    const uint64_t dv0 = wgmma_desc_128b(smem_addr(smV), BN * 128, 1024);
    uint32_t q_lo = (uint32_t)dq0;
    k_lo = (uint32_t)dk0, v_lo = (uint32_t)dv0;
    full0 = smem_addr(full), empty0 = smem_addr(empty);
    keep(q_lo), keep(k_lo), keep(v_lo), keep(full0), keep(empty0);
    const uint64_t q_hi = dq0 & ~0xFFFFFFFFull;
    k_hi = dk0 & ~0xFFFFFFFFull, v_hi = dv0 & ~0xFFFFFFFFull;
    // (bytes >> 4): column block kk / 4 (BM rows of 128 bytes), 32 bytes a k16 step inside it
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) qd[kk] = q_hi | (q_lo + (uint32_t)((kk / 4) * BM * 8 + (kk % 4) * 2));
    mr0 = m0 + wg * 64 + warp * 16 + lane / 4;
  }
  __device__ __forceinline__ void acc_zero() {
#pragma unroll
    for (int i = 0; i < DV / 2; ++i) o[i] = 0.f;
    mrow[0] = mrow[1] = Op::MAX_INIT, lrow[0] = lrow[1] = 0.f;
  }

  // the ping-pong scheduler: warpgroup wg's turn on the tensor cores is
  // named barrier 2 + wg, which the other warpgroup arrives at once it has
  // issued its S; warpgroup 0 goes first, and takes the other's last
  // arrival at the end (its barrier saw one more arrival than its turns),
  // so that no barrier is left half-complete
  __device__ __forceinline__ void first_turn() const {
    if (wg == 1) named_barrier_arrive(2, CONSUMERS);
  }
  __device__ __forceinline__ void turn() const { named_barrier(2 + wg, CONSUMERS); }
  __device__ __forceinline__ void hand_off() const { named_barrier_arrive(2 + (wg ^ 1), CONSUMERS); }
  __device__ __forceinline__ void last_turn() const {
    if (wg == 0) named_barrier(2, CONSUMERS);
  }
  __device__ __forceinline__ void consumers_sync() const { named_barrier(1, CONSUMERS); }

  // the ring, in the producer's order: stage st of the lap's phase
  __device__ __forceinline__ void wait_full() const { mbar_wait(full0 + 8 * st, phase); }
  __device__ __forceinline__ void release() const { mbar_arrive(empty0 + 8 * st); }
  __device__ __forceinline__ void next_stage() {
    if (++st == STAGES) st = 0, phase ^= 1;
  }

  // S = Q K^T: D/16 SS wgmma into fresh accumulators
  __device__ __forceinline__ void qk(SAcc &s) const {
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) s[i] = 0.f;
    const uint32_t ks0 = k_lo + (uint32_t)st * (BN * D * (int)sizeof(T) / 16);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      // K's: column block kk / 4 (BN rows of 128 bytes), 32 bytes a k16 step inside it
      Wgmma<T, BN, false>::run(s, qd[kk], k_hi | (ks0 + (uint32_t)((kk / 4) * BN * 8 + (kk % 4) * 2)));
    }
  }
  __device__ __forceinline__ void wgmma_done() const {
    wgmma_commit();
    wgmma_wait<0>();
  }

  // The score lets and each row's max over the thread's elements.  MODE
  // 0: a full tile (Op::tile_full), no mask test; MODE 2 (the other live
  // tiles): the masks, and key tails take the row max's neutral.
  template <int MODE>
  __device__ __forceinline__ void score(const Params *p, SAcc &s, int64_t t, float (&mnew)[2]) const {
    static_assert(MODE == 0 || MODE == 2, "full tiles, or masks and the key bound");
    const int64_t n0 = t * BN;
    // the keys left from the tile's first (at most BN): element dn is a key when dn < kl
    const int kl = (int)(SK - n0 > BN ? BN : SK - n0);
    mnew[0] = mrow[0], mnew[1] = mrow[1];
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int dn = j * 8 + 2 * (lane % 4) + (e & 1);
        const int64_t m = mr0 + (e >> 1) * 8, n = n0 + dn;
        float &x = s[4 * j + e];
        if constexpr (MODE == 0) x = Op::score_full(p, m, n, b, x);
        else x = dn < kl ? Op::score(p, m, n, b, x) : Op::MAX_INIT;
        mnew[e >> 1] = fmaxf(mnew[e >> 1], x);
      }
  }
  __device__ __forceinline__ void score_full(const Params *p, SAcc &s, int64_t t, float (&mnew)[2]) const {
    score<0>(p, s, t, mnew);
  }
  // the running row max across the quad that shares each row
  __device__ __forceinline__ void row_max(float (&mnew)[2]) const { quad_max2(mnew); }
  // the old max against the new: the factor on O and the row sum, the
  // shift of the tile's exponentials (a row with nothing unmasked yet keeps
  // a zero shift: no inf - inf)
  __device__ __forceinline__ void rescale(const float (&mnew)[2], float (&mref)[2], float (&scale)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mref[h] = mnew[h] == Op::MAX_INIT ? 0.f : mnew[h];
      scale[h] = mrow[h] == Op::MAX_INIT ? 0.f : Op::expdiff(mrow[h], mref[h]);
      mrow[h] = mnew[h];
    }
  }
  // exp2(s - max), the row sums (the quad's partial sums are combined at
  // the end), O rescaled
  __device__ __forceinline__ void probs(SAcc &s, const float (&mref)[2], const float (&scale)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float psum = 0.f;
#pragma unroll
      for (int j = 0; j < NTS; ++j) {
        s[4 * j + 2 * h] = Op::expdiff(s[4 * j + 2 * h], mref[h]);
        s[4 * j + 2 * h + 1] = Op::expdiff(s[4 * j + 2 * h + 1], mref[h]);
        psum += s[4 * j + 2 * h] + s[4 * j + 2 * h + 1];
      }
      lrow[h] = lrow[h] * scale[h] + psum;
    }
#pragma unroll
    for (int j = 0; j < NTO; ++j) {
      o[4 * j] *= scale[0], o[4 * j + 1] *= scale[0];
      o[4 * j + 2] *= scale[1], o[4 * j + 3] *= scale[1];
    }
  }
  // P's A fragments: the accumulators of two n8 blocks are one k16 step
  __device__ __forceinline__ void p_frags(const SAcc &s, PFrags &pf) const {
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk)
#pragma unroll
      for (int f = 0; f < 4; ++f) {
        const float a = s[8 * kk + 2 * f], c = s[8 * kk + 2 * f + 1];
        pf[0][kk][f] = pack2<T>(a, c);
        if constexpr (SPLIT) {
          const float h0 = to_f32(from_f32<T>(a)), h1 = to_f32(from_f32<T>(c));
          pf[SPLIT ? 1 : 0][kk][f] = pack2<T>(a - h0, c - h1);
        }
      }
  }
  // O += P V: BN/16 RS wgmma (twice for an fp32 P)
  __device__ __forceinline__ void pv(const PFrags &pf) {
    const uint32_t vs0 = v_lo + (uint32_t)st * (BN * DV * (int)sizeof(T) / 16);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      WgmmaRS<T, DV, true>::run(o, pf[0][kk], v_hi | (vs0 + (uint32_t)kk * (2048 / 16)));
      if constexpr (SPLIT) WgmmaRS<T, DV, true>::run(o, pf[SPLIT ? 1 : 0][kk], v_hi | (vs0 + (uint32_t)kk * (2048 / 16)));
    }
  }

  // the row sums over the quad
  __device__ __forceinline__ void row_sums() { quad_sum2(lrow); }
  // O / l (the IR's division), in place
  __device__ __forceinline__ void finish() {
#pragma unroll
    for (int j = 0; j < NTO; ++j) {
      o[4 * j] = Op::finish(o[4 * j], lrow[0]), o[4 * j + 1] = Op::finish(o[4 * j + 1], lrow[0]);
      o[4 * j + 2] = Op::finish(o[4 * j + 2], lrow[1]), o[4 * j + 3] = Op::finish(o[4 * j + 3], lrow[1]);
    }
  }
  // O staged as the contraction skeleton stages its accumulators
  // (stage_col), on Q's tile and the ring
  static constexpr int SROW = DV + 8;
  __device__ __forceinline__ float *stage_o() const {
    float *stage = reinterpret_cast<float *>(smem_raw);
#pragma unroll
    for (int j = 0; j < NTO; ++j) {
      const int r = wg * 64 + warp * 16 + lane / 4, c = stage_col(j * 8 + 2 * (lane % 4));
      st_shared_v2(&stage[r * SROW + c], o[4 * j], o[4 * j + 1]);
      st_shared_v2(&stage[(r + 8) * SROW + c], o[4 * j + 2], o[4 * j + 3]);
    }
    return stage;
  }
  // the output epilogue, DV wide, by the 256 consumers: the full-width
  // pair (the query rows past the end skipped), or 4 bounds-checked
  // outputs a thread
  __device__ __forceinline__ void store_full(const Params *p, const float *stage) const {
    dlc::store_full<Op, CONSUMERS, DV>(p, stage, m0, 0, b, (unsigned)tid);
  }
  __device__ __forceinline__ void store_checked(const Params *p, const float *stage) const {
    dlc::store_checked<Op, CONSUMERS, DV>(p, stage, m0, 0, b, (unsigned)tid);
  }
};

// The key tiles in the order the producer and the consumers walk them
// through the ring: next(t, want_full) is the first tile after t of that
// kind that the mask leaves anything of.  Full tiles (inside the keys, no
// mask removes anything) come first, then the other live tiles; the online
// softmax takes them in any order.
template <class Op>
struct Sm90aKeyOrder {
  static constexpr int BN = Op::BN;
  const typename Op::Params *p;
  int64_t m0, b, SK, nt;
  __device__ __forceinline__ bool full_tile(int64_t t) const {
    return (t + 1) * BN <= SK && Op::tile_full(p, m0, m0 + Op::BM, t * BN, (t + 1) * BN, b);
  }
  __device__ __forceinline__ int64_t operator()(int64_t t, bool want_full) const {
    for (++t; t < nt; ++t)
      if (full_tile(t) == want_full && Op::tile_live(p, m0, m0 + Op::BM, t * BN, (t + 1) * BN, b)) return t;
    return nt;
  }
};

// The sm90a attention's CTA state and primitives: the kernel is the Op's
// kernel(tp), which the emitter renders from the GPU IR, one call a
// statement (docs/codegen.md); nothing here decides an order.
//   tile_coord    TileCoord: the query tile and the batch; the keys, and
//                 the last key tile the mask leaves anything of (the key
//                 order's bound)
//   alloc         AllocShared: Q's tile (the dynamic shared memory's first
//                 1024-byte boundary), K's and V's ring after it
//   mbar_init     MbarInit: Q's barrier or a ring of barriers, and their
//                 arrival count, by thread 0, with fence.mbarrier_init
//   producer, elected   Role: the producer warpgroup, its one lane
//   consumers     FragSetup: the consumers' state (Sm90aAttConsumer: the
//                 warpgroup, the descriptors' words)
template <class Op>
struct Sm90aAttCta {
  using T = typename Op::T;
  using Params = typename Op::Params;
  static constexpr int BM = Op::BM, BN = Op::BN, D = Op::D, DV = Op::DV, STAGES = Op::STAGES;

  unsigned char *smem_raw;
  T *smQ, *smK, *smV;  // smK: [STAGES][D/64][BN][64], smV: [STAGES][DV/64][BN][64]
  uint64_t *qfull, *full, *empty;
  int64_t m0, b, SK, nt;
  Sm90aKeyOrder<Op> order;

  __device__ __forceinline__ void tile_coord(const Params *p) {
    m0 = (int64_t)blockIdx.x * BM, b = blockIdx.y;
    SK = Op::extent_kv(p);
    nt = (SK + BN - 1) / BN;
    while (nt > 0 && !Op::tile_live(p, m0, m0 + BM, (nt - 1) * BN, nt * BN, b)) --nt;
    order = Sm90aKeyOrder<Op>{p, m0, b, SK, nt};
  }
  template <Operand O>
  __device__ __forceinline__ void alloc() {
    extern __shared__ __align__(1024) unsigned char smem_dyn[];
    if constexpr (O == OPA) {
      smem_raw = smem_dyn + ((1024 - (smem_addr(smem_dyn) & 1023)) & 1023);
      smQ = reinterpret_cast<T *>(smem_raw);
    } else {
      smK = smQ + BM * D, smV = smK + STAGES * BN * D;
    }
  }
  template <MbarRing R>
  __device__ __forceinline__ void mbar_init(uint32_t arrivals) {
    constexpr int N = R == MBAR_Q ? 1 : STAGES;
    __shared__ __align__(8) uint64_t bars[N];
    if constexpr (R == MBAR_Q) qfull = bars;
    else if constexpr (R == MBAR_FULL) full = bars;
    else empty = bars;
    mbar_init_by_thread0(bars, N, arrivals);
  }
  __device__ __forceinline__ bool producer() const { return threadIdx.x < 128; }
  __device__ __forceinline__ bool elected() const { return threadIdx.x < 32 && elect_one(); }
  __device__ __forceinline__ Sm90aAttConsumer<Op> consumers() const {
    return Sm90aAttConsumer<Op>(smem_raw, full, empty, m0, b, SK, nt);
  }
};

template <class Op>
__device__ __forceinline__ void sm90a_attention(const typename Op::TParams *tp) {
  static_assert(Op::BM == 128 && (Op::BN == 64 || Op::BN == 128) && (Op::D == 64 || Op::D == 128) &&
                    (Op::DV == 64 || Op::DV == 128),
                "two consumer warpgroups of 64 query rows; key tiles and head dims of 64 or 128");
  static_assert(Op::THREADS == 128 + Sm90aAttConsumer<Op>::CONSUMERS && Op::STAGES >= 2,
                "a producer warpgroup, two consumer warpgroups, a ring");
  Op::kernel(tp);
}

}  // namespace dlc
