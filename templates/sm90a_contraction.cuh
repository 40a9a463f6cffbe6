// The sm90a skeleton for contractions (spec §9.1, algo_choice "tma_wgmma"):
//
//   producer warp: TMA tile loads of A and B -> a ring of Op::STAGES stages,
//     each completed on its `full` mbarrier (arrive.expect_tx + complete_tx)
//     and handed back on its `empty` mbarrier by the consumers;
//   two consumer warpgroups: wgmma.mma_async m64nBNk16 SS from the ring
//     (128-byte swizzle descriptors), 64 rows of the CTA tile each;
//   setmaxnreg: the producer warpgroup gives registers up, the consumers
//     take them;
//   epilogue: the fp32 accumulators through a shared staging tile into the
//     Op's epilogue (the region's lets), the sm80 skeleton's pairs
//     (store_full, store_checked), with predicated stores for the tails.
//
// Load tails need no code: the TMA zero-fills every element of a box outside
// the tensor (M, N and K), and a zero in K adds nothing.  The kernel takes
// one __grid_constant__ parameter block (Op::TParams): the tensor maps of A
// and B (CUtensorMap, 64-byte aligned, encoded per call by the runtime's
// backend) and the op's Params.  Thread layout (Op::THREADS = 384):
// warpgroup 0 is the producer (its warp 0 issues the copies), warpgroups 1
// and 2 the consumers.
//
// Op provides, beyond what store_full, store_checked and tile_coord read
// (BM, BN, EPI_VEC, epi_vec_ok, epi_cols, epi_row, epilogue4, extent_m/n/k,
// RASTER_GROUP):
//   T, BK, STAGES, TParams (tmap_a, tmap_b, p), B_K_CONTIG (B is stored
//   along K: K-major descriptors; else along N: MN-major, imm-trans-b 1),
//   and, rendered from the GPU IR: kernel(tp), the CTA's setup and roles,
//   one call a statement on Sm90aCta (the tile, the ring, the barriers'
//   init, the roles' setmaxnreg budgets, the accumulators' zero, the
//   descriptors); produce(tp, ring, full, empty, mt, nt, KT): the
//   producer's k-loop (its waits, arrivals and TMA boxes on the ring slot
//   of each k-tile); consume(acc, ring, KT): the consumers' k-loop (waits,
//   sm90a_wgmma_slot, commits and releases on compile-time ring slots);
//   store_tile(p, acc, c): their epilogue on Sm90aTile c (the last wait,
//   the staging and the stores).
//
// sm90a_gather_contraction.cuh runs the same state and consumers with a
// gathering cp.async producer.
#pragma once

#include "dlc_device.cuh"
#include "sm80_contraction.cuh"

namespace dlc {

// The consumers' ring as their k-loop (Op::consume, rendered from the GPU
// IR) reads it: the shared addresses of the full and empty barriers, and
// the low words of slot 0's descriptors (A at the warpgroup's rows, B).
struct Sm90aRing {
  uint32_t full0, empty0, da_lo, db_lo;
};

// The ring's addresses opaque to the compiler, once a lap: it would keep
// every unrolled step's descriptors live across the loop (in vector
// registers, moved to uniform ones before each wgmma) instead.
__device__ __forceinline__ void sm90a_opaque(Sm90aRing &r) { keep(r.full0), keep(r.empty0), keep(r.da_lo), keep(r.db_lo); }

// One k-tile's wgmma from ring slot SLOT (compile time): wgmma.fence, then
// BK / 16 wgmma m64nBNk16 SS.  A descriptor's start address is its low 14
// bits (address >> 4, below 2^14 for any shared address), so the slot, a
// k16 step or a warpgroup's rows are an addition to its low word, here a
// constant: A (K-major, 8 rows of 128 bytes an atom: SBO 1024) moves 32
// bytes a k16 step inside the swizzle row; B K-major as A, or MN-major (64
// columns x 8 k-rows an atom: SBO 1024; the next 64 columns one box on:
// LBO) 2048 bytes a k16 step.  The high word (SBO, 128-byte swizzle) is the
// same for every descriptor.
template <class Op, int SLOT, int N>
__device__ __forceinline__ void sm90a_wgmma_slot(float (&acc)[N], const Sm90aRing &r) {
  using T = typename Op::T;
  constexpr int BM = Op::BM, BN = Op::BN, BK = Op::BK;
  static_assert(N == BN / 2 && SLOT >= 0 && SLOT < Op::STAGES, "a warpgroup's 64 x BN fp32 fragment, a ring slot");
  constexpr uint32_t SO = (uint32_t)SLOT * ((BM + BN) * BK * (int)sizeof(T) / 16);
  constexpr uint32_t DB_STEP = Op::B_K_CONTIG ? 32 / 16 : 2048 / 16;
  constexpr uint64_t HI = wgmma_desc_128b(0, 0, 1024);
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < BK / 16; ++ks)
    Wgmma<T, BN, !Op::B_K_CONTIG>::run(acc, HI | (r.da_lo + SO + 2 * ks), HI | (r.db_lo + SO + DB_STEP * ks));
}

// The consumers' tile, as their epilogue (Op::store_tile, rendered from the
// GPU IR) reads it: the tile's first row and column, its batch index, the
// thread among the 256 consumers, the staging tile (the ring's memory).
//   consumers_sync   Barrier: bar.sync 1 of the 256 consumer threads
//   stage_acc        StageAcc: a warpgroup's 64 x BN accumulators (the
//                    m16n8 layout a warp) into the fp32 staging tile
//   store_full, store_checked   the epilogue pairs, BN wide
template <class Op>
struct Sm90aTile {
  static constexpr int BN = Op::BN, CONSUMERS = 256, SROW = BN + 8;
  unsigned char *smem_raw;
  int64_t m0, n0, b;
  unsigned tid;
  __device__ __forceinline__ void consumers_sync() const { named_barrier(1, CONSUMERS); }
  __device__ __forceinline__ float *stage_acc(const float (&acc)[BN / 2]) const {
    float *stage = reinterpret_cast<float *>(smem_raw);
    const int warp = tid / 32, lane = tid % 32;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int r = 16 * warp + lane / 4, c = stage_col(8 * j + 2 * (lane % 4));
      st_shared_v2(&stage[r * SROW + c], acc[4 * j], acc[4 * j + 1]);
      st_shared_v2(&stage[(r + 8) * SROW + c], acc[4 * j + 2], acc[4 * j + 3]);
    }
    return stage;
  }
  __device__ __forceinline__ void store_full(const typename Op::Params *p, const float *stage) const {
    dlc::store_full<Op, CONSUMERS>(p, stage, m0, n0, b, tid);
  }
  __device__ __forceinline__ void store_checked(const typename Op::Params *p, const float *stage) const {
    dlc::store_checked<Op, CONSUMERS>(p, stage, m0, n0, b, tid);
  }
};

// The sm90a contraction's CTA state and primitives: the kernel is the Op's
// kernel(tp) (kernel(p) for the gathering producer), which the emitter
// renders from the GPU IR, one call a statement (docs/codegen.md); nothing
// here decides an order.  Thread layout (Op::THREADS = 384): warpgroup 0 is
// the producer (the TMA's: warp 0's elected lane), warpgroups 1 and 2 the
// consumers, 64 rows of the tile each.
//   tile_coord    TileCoord: the tile (the plan's raster order), the batch,
//                 the k-tiles
//   alloc         AllocShared: the ring (A's slots, the dynamic shared
//                 memory's first 1024-byte boundary: the 128-byte swizzle's
//                 period, which the block has 1 KB to spare for), B's
//   mbar_init     MbarInit: a ring of barriers and their arrival count, by
//                 thread 0, with fence.mbarrier_init
//   producer, elected, thread   Role: the producer warpgroup's threads, the
//                 TMA producer's one lane, a gathering thread's index
//   acc_zero      AccZero: the warpgroup's fp32 accumulators
//   frag_setup    FragSetup: the low word of A's descriptor at slot 0 and
//                 the warpgroup's rows, or of B's (sm90a_wgmma_slot adds
//                 the slot and the k16 step)
//   ring_state, tile   what the consumers' k-loop (Op::consume) and their
//                 epilogue (Op::store_tile) read
template <class Op>
struct Sm90aCta {
  using T = typename Op::T;
  using Params = typename Op::Params;
  static constexpr int BM = Op::BM, BN = Op::BN, BK = Op::BK, STAGES = Op::STAGES;
  static constexpr int A_BYTES = BM * BK * (int)sizeof(T);

  unsigned char *ring, *smB;  // slot 0 of A and of B
  uint64_t *full, *empty;
  uint32_t mt, nt, da_lo, db_lo;
  int64_t b;
  int KT;
  float acc[BN / 2];

  __device__ __forceinline__ void tile_coord(const Params *p) {
    dlc::tile_coord<Op::RASTER_GROUP>(blockIdx.x, (uint32_t)((Op::extent_m(p) + BM - 1) / BM),
                                      (uint32_t)((Op::extent_n(p) + BN - 1) / BN), &mt, &nt);
    b = blockIdx.z;
    KT = (int)((Op::extent_k(p) + BK - 1) / BK);  // the dispatcher keeps K below 2^31 - BK
  }
  template <Operand O>
  __device__ __forceinline__ void alloc() {
    extern __shared__ __align__(1024) unsigned char smem_dyn[];
    if constexpr (O == OPA) ring = smem_dyn + ((1024 - (smem_addr(smem_dyn) & 1023)) & 1023);
    else smB = ring + A_BYTES;  // a stage is A's tile, then B's
  }
  template <MbarRing R>
  __device__ __forceinline__ void mbar_init(uint32_t arrivals) {
    static_assert(R == MBAR_FULL || R == MBAR_EMPTY, "a contraction's rings");
    __shared__ __align__(8) uint64_t bars[STAGES];
    if constexpr (R == MBAR_FULL) full = bars;
    else empty = bars;
    mbar_init_by_thread0(bars, STAGES, arrivals);
  }
  __device__ __forceinline__ bool producer() const { return threadIdx.x < 128; }
  __device__ __forceinline__ bool elected() const { return threadIdx.x < 32 && elect_one(); }
  __device__ __forceinline__ int thread() const { return (int)threadIdx.x; }
  __device__ __forceinline__ void acc_zero() {
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
  }
  template <Operand O>
  __device__ __forceinline__ void frag_setup() {
    if constexpr (O == OPA) {
      // the warpgroup index through a shuffle: warp-uniform for the
      // compiler, so that the descriptors live in uniform registers
      const int wg = __shfl_sync(0xffffffffu, ((int)threadIdx.x - 128) / 128, 0);
      da_lo = (uint32_t)wgmma_desc_128b(smem_addr(ring) + wg * 64 * 128, 16, 1024);
    } else {
      db_lo = (uint32_t)(Op::B_K_CONTIG ? wgmma_desc_128b(smem_addr(smB), 16, 1024)
                                        : wgmma_desc_128b(smem_addr(smB), 64 * BK * (int)sizeof(T), 1024));
    }
  }
  // computed once: the compiler would recompute the barriers' addresses
  // every lap
  __device__ __forceinline__ Sm90aRing ring_state() const {
    Sm90aRing r{smem_addr(full), smem_addr(empty), da_lo, db_lo};
    sm90a_opaque(r);
    return r;
  }
  // the epilogue's tile, once every consumer is past its last wgmma (the
  // ring is free for the staging tile)
  __device__ __forceinline__ Sm90aTile<Op> tile() const {
    return Sm90aTile<Op>{ring, (int64_t)mt * BM, (int64_t)nt * BN, b, threadIdx.x - 128};
  }
};

template <class Op>
__device__ __forceinline__ void sm90a_contraction(const typename Op::TParams *tp) {
  using T = typename Op::T;
  // 128-byte swizzle: one swizzle row is BK elements of K (K-major) or 64
  // elements of N (MN-major B); an 8-row swizzle atom is 1024 bytes
  static_assert(Op::BM == 128 && Op::BK * (int)sizeof(T) == 128, "two 64-row consumer warpgroups, 128-byte K rows");
  static_assert(Op::BN % 64 == 0 && Op::BN <= 128 && Op::STAGES >= 4, "wgmma N and a ring of at least 4 stages");
  Op::kernel(tp);
}

// Dynamic shared memory of one block: the ring (1024-byte aligned stages),
// reused by the staging tile, and 1 KB to align it.
template <class Op>
constexpr int sm90a_contraction_smem() {
  constexpr int ring = Op::STAGES * (Op::BM + Op::BN) * Op::BK * (int)sizeof(typename Op::T);
  constexpr int stage = Op::BM * (Op::BN + 8) * (int)sizeof(float);
  return (ring > stage ? ring : stage) + 1024;
}

}  // namespace dlc
