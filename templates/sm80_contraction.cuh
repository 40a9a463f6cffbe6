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
// axes, flattened), over the reduce axes (K) in steps of BK.  blockIdx.x
// numbers the M x N tiles in the plan's raster order (tile_coord), so that M
// is not bounded by gridDim.y; blockIdx.z is the batch index.  VEC is the
// width, in elements, of one global->shared copy.
//
// Op provides:
//   T, BM, BN, BK, STAGES, WARPS_M, WARPS_N, A_K_CONTIG, B_K_CONTIG, Params,
//   RASTER_GROUP (M tiles per group of the CTA order; 1: N fastest)
//   extent_m(p), extent_n(p), extent_k(p): the flattened M, N and K lengths
//     (p: const Params *; the grid covers M, N and the batch, the chunk
//     functions their tails)
//   a_chunk<VEC>(p, m, k, b, &src) -> elements valid in [0, VEC]; src is the
//     chunk's address, or the tensor's base when nothing is valid.  The chunk
//     runs along k when A_K_CONTIG, else along m.  b_chunk likewise.
//   A_ADVANCE, a_kstep(p): whether A's chunk addresses move by a fixed number
//     of elements per unit of k (the GPU IR's advance), and that number.  B
//     likewise.  STEADY_MIN_VEC: the GPU IR's choice of the widths whose
//     kernels stream both operands over the full k-tiles (0: none).
//   epilogue4(p, m, n, b, acc[4]): applies the epilogue to 4 consecutive
//     outputs (n .. n+3) and stores them, bounds-checked.
//   SPLIT_K: the plan splits K (the GPU IR's split-K pair).  When true:
//     split_ws(p), split_ktp(p), split_n(p): the caller's workspace (fp32
//     partial tiles), the k-tiles of one slice and the slices; blockIdx.y
//     is the slice, and the kernel stores its partial tile there instead
//     of the epilogue (sm80_splitk_reduce sums the slices and applies it).
//   EPI_VEC: the GPU IR's full-width epilogue width (0: none).  When > 0:
//     epi_vec_ok(p, n0): the tile at column n0 is inside N and the tensors
//     are aligned (store_full skips the rows past M); epi_cols(p, n, b,
//     cols): the reads that depend only on columns n .. n+EPI_VEC-1;
//     EpiRow, epi_row_at(p, m, n, b, rp): row m's pointers into the row
//     tensors; EPI_ROW_STEP: every row tensor has a fixed row step (the GPU
//     IR's), and epi_row_step(p, rp, rows) moves rp `rows` rows on (else
//     each row's pointers come from epi_row_at); epi_row(p, m, n, b, cols,
//     rp, acc): EPI_VEC outputs of row m, stored with 16-byte stores.
#pragma once

#include <type_traits>

#include "dlc_device.cuh"

namespace dlc {

// The chunk XOR of row `row` in a tile swizzled W chunks wide, for chunks of
// CE elements: (row / SH) % W, the phase repeating every SH * W = 8 rows.
// fp32 tiles 8 chunks wide (CE = 4) take the same values in another order,
// ((row & 3) << 1) | ((row >> 2) & 1): 4 consecutive k rows read at a pair of
// chunks (the ld.shared.b32 of an M/N-contiguous tf32 fragment) then land
// on 8 distinct chunks, while 8 consecutive rows still take 8 distinct
// values (ldmatrix, cp.async).  gpuir_swizzle_xor is the same function.
template <int W, int CE>
__device__ __forceinline__ int swz_xor(int row) {
  if constexpr (CE == 4 && W == 8) return ((row & 3) << 1) | ((row >> 2) & 1);
  else return (row / (8 / W)) % W;
}

// Element offset of (row, col) in a shared tile of `L` elements per row, with
// 16-byte chunks (CE elements) XOR-swizzled so that the 8 rows an ldmatrix or
// a cp.async phase touches fall in distinct bank groups.  W, the chunks
// XORed, is the GPU IR's (gpu_smem_tile.swz): a power of two dividing the
// row's chunks, so that no chunk leaves its row; the phase repeats every
// SH * W = 8 rows.
template <int L, int W, int CE = 8>
__device__ __forceinline__ int swz(int row, int col) {
  constexpr int SH = 8 / W;                // rows that share one XOR value
  static_assert(L % CE == 0 && (L / CE) % W == 0 && SH * W == 8, "chunks stay in their row");
  return row * L + (((col / CE) ^ swz_xor<W, CE>(row)) * CE) + (col % CE);
}

// Where column c of the fp32 staging tile lives in its row: 16-byte groups
// (4 floats) swap in pairs in every other run of 8 groups, so that the 8
// threads of an ld.shared.v4 phase reading groups 2t (or 2t + 1) of one row
// hit distinct bank quads.  A group never moves out of its run of 8 groups,
// which keeps the accumulator stores conflict-free too.
__device__ __forceinline__ int stage_col(int c) { return c ^ (((c >> 5) & 1) << 2); }

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
  auto chunk = [&](int i) {
    const int row = i / (L / VEC), col = (i % (L / VEC)) * VEC;
    const int64_t r = KC ? r0 + row : r0 + col;  // m or n
    const int64_t k = KC ? k0 + col : k0 + row;
    const T *src;
    const int valid = IS_A ? Op::template a_chunk<VEC>(p, r, k, b, &src) : Op::template b_chunk<VEC>(p, r, k, b, &src);
    copy_g2s<VEC * (int)sizeof(T)>(tile + swz<L, IS_A ? Op::SWZ_A : Op::SWZ_B, 16 / (int)sizeof(T)>(row, col), src,
                                   valid * (int)sizeof(T));
  };
  // The trip count depends on the thread.  Up to 4 chunks a thread, cicc
  // unrolls the loop; beyond that it is not unrolled: cicc's unrolling, a
  // guard on every copy, multiplied the code of the narrow widths' kernels,
  // for compute_100 and compute_120 most (docs/performance.md).
  if constexpr (CHUNKS <= 4 * NT) {
#pragma unroll
    for (int i = threadIdx.x; i < CHUNKS; i += NT) chunk(i);
  } else {
#pragma unroll 1
    for (int i = threadIdx.x; i < CHUNKS; i += NT) chunk(i);
  }
}

// Geometry of one operand's shared tile (see load_operand).
template <class Op, int VEC, bool IS_A>
struct OperandTile {
  static constexpr int NT = 32 * Op::WARPS_M * Op::WARPS_N;
  static constexpr bool KC = IS_A ? Op::A_K_CONTIG : Op::B_K_CONTIG;
  static constexpr int R = IS_A ? Op::BM : Op::BN;
  static constexpr int ROWS = KC ? R : Op::BK, L = KC ? Op::BK : R;
  static constexpr int SWZ = IS_A ? Op::SWZ_A : Op::SWZ_B;
  static constexpr int CE = 16 / (int)sizeof(typename Op::T);  // elements a 16-byte chunk
  static constexpr int CPR = L / VEC;              // chunks per tile row
  static constexpr int CHUNKS = ROWS * CPR;
  static constexpr int CPT = CHUNKS / NT;          // chunks per thread
  static constexpr int RSTEP = NT / CPR;           // rows between a thread's chunks
  // A thread's chunks share one swizzle phase when they are 8 rows apart.
  static constexpr bool ONE_PHASE = NT % CPR == 0 && RSTEP % 8 == 0;
  // The GPU IR decides which widths run its steady loop, streaming both
  // operands (both advance, and the tile splits into few chunks a thread).
  static constexpr bool STREAM = Op::STEADY_MIN_VEC > 0 && VEC >= Op::STEADY_MIN_VEC;
  static constexpr bool WALK = IS_A ? Op::A_WALK : Op::B_WALK;
  static_assert(!STREAM || ((IS_A ? Op::A_ADVANCE : Op::B_ADVANCE) || WALK) && CHUNKS % NT == 0,
                "a streamed operand advances or walks, and splits evenly over the threads");
  static_assert(!STREAM || !WALK || (KC && NT % CPR == 0), "a walking operand keeps one K column a thread");
};

// The operand row that tile row r (of the tile from r0) loads: r itself
// inside the extent (rows 0..last), else one of the tile's rows inside it,
// cyclically.  A row past the tail feeds only outputs the epilogue never
// stores, so any row will do; spreading them over the tile's own rows keeps
// the loads where the tile's other rows already are, where reading the one
// last row sent every CTA of an N tail to the same few lines (on an H100 a
// conv with K = 64 outputs ran 3.6x slower than one with K = 128).
__device__ __forceinline__ int64_t tail_row(int64_t r, int64_t r0, int64_t last) {
  return r <= last ? r : r0 + (int)(r - r0) % (int)(last - r0 + 1);
}

// The copy state of one operand over the full k-tiles: each thread's chunk
// pointers and byte counts, computed once per CTA from the chunk function at
// k-tile 0, then moved by the operand's k-step after every tile.  On a full
// k-tile nothing along k is out of bounds, so the byte counts (the M/N tails)
// hold for every tile; a chunk with none left points at the tensor's base.
template <class Op, int VEC, bool IS_A>
struct OperandStream {
  using G = OperandTile<Op, VEC, IS_A>;
  using T = typename Op::T;
  static constexpr int N = G::STREAM ? G::CPT : 1;
  // When tile rows are k and every thread keeps one column, a thread's chunk
  // i is its chunk 0 moved i*RSTEP rows along k: one pointer and one byte
  // count serve all of them.  When chunks run along k, a full k-tile's chunk
  // is whole, once a row past the M (N) tail reads one of the tile's rows
  // inside it instead (tail_row): an operand row feeds only its own output
  // row (column), which the epilogue never stores.  No predicate, no count, and one pointer: chunk i stays
  // rel[i] elements from chunk 0 on every tile.
  static constexpr bool K_ROWS = !G::KC && G::NT % G::CPR == 0;
  static constexpr bool WHOLE = G::KC && VEC > 1;
  static constexpr int NP = K_ROWS || WHOLE ? 1 : N;
  const T *src[NP];
  int bytes[WHOLE ? 1 : NP];
  int64_t rel[WHOLE ? N : 1];
  int soff[G::ONE_PHASE ? 1 : N];
  int64_t kstride;  // K_ROWS: elements between a thread's chunks

  int64_t step;     // elements a full k-tile moves every pointer

  __device__ __forceinline__ void init(const typename Op::Params *p, int64_t r0, int64_t b) {
    int64_t kstep;
    if constexpr (IS_A) kstep = Op::a_kstep(p);
    else kstep = Op::b_kstep(p);
    step = kstep * Op::BK;
    kstride = G::RSTEP * kstep;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int idx = (int)threadIdx.x + i * G::NT;
      const int row = idx / G::CPR, col = (idx % G::CPR) * VEC;
      int64_t r = G::KC ? r0 + row : r0 + col;
      const int64_t k = G::KC ? col : row;
      if constexpr (WHOLE) r = tail_row(r, r0, (IS_A ? Op::extent_m(p) : Op::extent_n(p)) - 1);
      if (i < NP || WHOLE) {
        const T *s0;
        const int valid = IS_A ? Op::template a_chunk<VEC>(p, r, k, b, &s0) : Op::template b_chunk<VEC>(p, r, k, b, &s0);
        if (i < NP) src[i] = s0;
        if constexpr (WHOLE) rel[i] = s0 - src[0];
        else bytes[i] = valid * (int)sizeof(T);
      }
      if (!G::ONE_PHASE || i == 0) soff[G::ONE_PHASE ? 0 : i] = swz<G::L, G::SWZ, G::CE>(row, col);
    }
  }
  // Moves every pointer `tiles` full k-tiles on (a split-K slice's first tile).
  __device__ __forceinline__ void skip(int tiles) {
#pragma unroll
    for (int i = 0; i < NP; ++i) src[i] += (int64_t)tiles * step;
  }
  // Copies the next full k-tile into `tile`.
  __device__ __forceinline__ void copy(const typename Op::Params *, T *tile, const typename Op::KWalk &) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int off = G::ONE_PHASE ? soff[0] + i * G::RSTEP * G::L : soff[G::ONE_PHASE ? 0 : i];
      const T *s = K_ROWS ? src[0] + i * kstride : WHOLE ? src[0] + rel[i] : src[i];
      if constexpr (WHOLE) copy_g2s_full<VEC * (int)sizeof(T)>(tile + off, s);
      else copy_g2s<VEC * (int)sizeof(T)>(tile + off, s, bytes[K_ROWS ? 0 : i]);
    }
  }
  // Steps to the tile after.
  __device__ __forceinline__ void advance() {
#pragma unroll
    for (int i = 0; i < NP; ++i) src[i] += step;
  }
};

// The copy state of a walking operand (the GPU IR's walk: no fixed k-step,
// but an address and pad guards that split into a part over the K axes and
// a rest).  Each thread keeps, per chunk, the tensor's base moved by the rest
// of the offset (a pointer: one 64-bit add a tile forms the chunk's address,
// where an offset let ptxas recompute rest = C * q from q every tile) and the
// rest of each guard (fixed over the k-tiles; a row past the M (N) tail reads
// one of the tile's rows inside it, as in OperandStream).  The K part comes
// from the kernel's one K counter (Op::KWalk, the thread's K column), which
// steps by BK with carries after every tile.  A chunk whose pad guard fails
// is zero-filled, from the tensor's base.
//
// The guard words (Op::a_gw, A_NGW): the rest of each guard (int64_t, NG of
// them), or with the GPU IR's 32-bit guards each guard's two bounds on its K
// part (int, 2 NG of them); Op::a_inside tests them against the K parts.
template <class Op, bool IS_A> struct WalkWords;
template <class Op> struct WalkWords<Op, true> {
  using W = typename Op::a_gw;
  static constexpr int N = Op::A_NGW;
};
template <class Op> struct WalkWords<Op, false> {
  using W = typename Op::b_gw;
  static constexpr int N = Op::B_NGW;
};
template <class Op, int VEC, bool IS_A>
struct OperandWalk {
  using G = OperandTile<Op, VEC, IS_A>;
  using T = typename Op::T;
  using GW = typename WalkWords<Op, IS_A>::W;
  static constexpr int N = G::STREAM ? G::CPT : 1;
  static constexpr int NG = IS_A ? Op::A_NG : Op::B_NG;
  static constexpr int NG1 = NG > 0 ? NG : 1;
  static constexpr int NGW = WalkWords<Op, IS_A>::N;
  static constexpr int NGW1 = NGW > 0 ? NGW : 1;
  const T *base;
  const T *at[N];  // base + the rest of chunk i's offset (outside the tensor when its row is in the pad)
  GW gm[N][NGW1];
  int soff[G::ONE_PHASE ? 1 : N];

  __device__ __forceinline__ void init(const typename Op::Params *p, int64_t r0, int64_t b) {
    const int64_t last = (IS_A ? Op::extent_m(p) : Op::extent_n(p)) - 1;
    if constexpr (IS_A) base = Op::a_tensor(p);
    else base = Op::b_tensor(p);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int row = ((int)threadIdx.x + i * G::NT) / G::CPR;
      const int64_t r = tail_row(r0 + row, r0, last);
      int64_t rest;
      if constexpr (IS_A) rest = Op::a_rest(p, r, b, gm[i]);
      else rest = Op::b_rest(p, r, b, gm[i]);
      at[i] = reinterpret_cast<const T *>(reinterpret_cast<uintptr_t>(base) + (uint64_t)rest * sizeof(T));
      keep(at[i]);
#pragma unroll
      for (int g = 0; g < NGW; ++g) keep(gm[i][g]);
      if (!G::ONE_PHASE || i == 0)
        soff[G::ONE_PHASE ? 0 : i] = swz<G::L, G::SWZ, G::CE>(row, ((int)threadIdx.x % G::CPR) * VEC);
    }
  }
  // Copies the full k-tile at the counter `w` into `tile`.
  __device__ __forceinline__ void copy(const typename Op::Params *p, T *tile, const typename Op::KWalk &w) {
    GW gk[NG1];
    // the K part: int64_t, or int where the GPU IR keeps it in 32 bits (kpart32);
    // then at[i] + ko is one IMAD.WIDE
    const auto ko = [&] {
      if constexpr (IS_A) return Op::a_kpart(p, w, gk);
      else return Op::b_kpart(p, w, gk);
    }();
#pragma unroll
    for (int i = 0; i < N; ++i) {
      bool in;
      if constexpr (IS_A) in = Op::a_inside(p, gm[i], gk);
      else in = Op::b_inside(p, gm[i], gk);
      const int off = G::ONE_PHASE ? soff[0] + i * G::RSTEP * G::L : soff[G::ONE_PHASE ? 0 : i];
      const T *s = reinterpret_cast<const T *>(reinterpret_cast<uintptr_t>(at[i]) +
                                               (uint64_t)((int64_t)ko * (int64_t)sizeof(T)));
      copy_g2s<VEC * (int)sizeof(T)>(tile + off, in ? s : base, in ? VEC * (int)sizeof(T) : 0);
    }
  }
};

// Shared-memory element offsets of this lane's ldmatrix rows, hoisted out of
// the k loop.  swz's phase is (row / SH) % W with SH * W = 8, so 16 rows
// down keeps it.  With K contiguous, one offset per k16 step then serves
// every fragment; with M/N contiguous, one offset per fragment serves every
// k16 step (16 k rows down).
template <class Op, bool IS_A>
struct FragOffsets {
  static constexpr bool KC = IS_A ? Op::A_K_CONTIG : Op::B_K_CONTIG;
  static constexpr int R = IS_A ? Op::BM : Op::BN;
  static constexpr int W = IS_A ? Op::BM / Op::WARPS_M : Op::BN / Op::WARPS_N;
  static constexpr int NF = W / 16;   // x4 loads per k16 step (each 16 rows of the warp tile)
  static constexpr int KS = Op::BK / 16;
  static constexpr int TB = (int)sizeof(typename Op::T);
  uint32_t off[KC ? KS : NF];  // shared-space byte addresses in stage 0

  // A's matrices: (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15);
  // B's: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
  __device__ __forceinline__ void init(const void *ring, int w0, int lane) {
    const uint32_t base = smem_addr(ring);
    const int mat = lane / 8, r8 = lane % 8;
    const int dr = IS_A ? (mat & 1) * 8 : (mat >> 1) * 8, dk = IS_A ? (mat >> 1) * 8 : (mat & 1) * 8;
    if constexpr (KC) {
#pragma unroll
      for (int s = 0; s < KS; ++s) off[s] = base + TB * swz<Op::BK, IS_A ? Op::SWZ_A : Op::SWZ_B>(w0 + dr + r8, s * 16 + dk);
    } else {
#pragma unroll
      for (int f = 0; f < NF; ++f) off[f] = base + TB * swz<R, IS_A ? Op::SWZ_A : Op::SWZ_B>(dk + r8, w0 + f * 16 + dr);
    }
#pragma unroll
    for (int i = 0; i < (KC ? KS : NF); ++i) keep(off[i]);
  }
  // The address of fragment f of k16 step s in the stage `stage` bytes on.
  __device__ __forceinline__ uint32_t at(uint32_t stage, int s, int f) const {
    if constexpr (KC) return off[s] + stage + TB * f * 16 * Op::BK;
    else return off[f] + stage + TB * s * 16 * R;
  }
};

// The same for fp32 operands and the tf32 m16n8k8 MMA (Op::MMA_K = 8), per
// k8 step.  A K-contiguous tile still goes through ldmatrix.x4: an 8 x 8 b16
// matrix is an 8 x 4 fp32 one, of which lane l gets row l / 4, fp32 column
// l % 4, the tf32 fragment's (g, t) element.  A's matrices are (m 0-7 | 8-15)
// x (k 0-3 | 4-7) in a0..a3 order, B's (n 0-7, k 0-3), (n 0-7, k 4-7),
// (n 8-15, k 0-3), (n 8-15, k 4-7): two n8 fragments.  An M/N-contiguous
// tile (rows k) has no 32-bit transposing ldmatrix: each fragment element is
// one ld.shared.b32 at k row t (+4: q), column g (+8: h) of a 16-column
// group f.  Its chunk is 4 (w0 / 16 + f) + 2 h + g / 4, and the XOR (< 8)
// flips at most bit 0 of w0 / 16 + f: one address per (q, h, parity of f)
// serves every group, (f / 2) * 32 elements on, and every k8 step, 8 rows on.
template <class Op, bool IS_A>
struct FragOffsets32 {
  static constexpr bool KC = IS_A ? Op::A_K_CONTIG : Op::B_K_CONTIG;
  static constexpr int R = IS_A ? Op::BM : Op::BN;
  static constexpr int SWZ = IS_A ? Op::SWZ_A : Op::SWZ_B;
  static constexpr int KS = Op::BK / 8;
  static_assert(sizeof(typename Op::T) == 4 && Op::MMA_K == 8, "fp32 operands, tf32 m16n8k8");
  uint32_t off[KC ? KS : 8];  // shared-space byte addresses in stage 0

  __device__ __forceinline__ void init(const void *ring, int w0, int lane) {
    const uint32_t base = smem_addr(ring);
    if constexpr (KC) {
      const int mat = lane / 8, r8 = lane % 8;
      const int dr = IS_A ? (mat & 1) * 8 : (mat >> 1) * 8, dk = IS_A ? (mat >> 1) * 4 : (mat & 1) * 4;
#pragma unroll
      for (int s = 0; s < KS; ++s) off[s] = base + 4 * swz<Op::BK, SWZ, 4>(w0 + dr + r8, s * 8 + dk);
    } else {
      const int g = lane / 4, t = lane % 4;
#pragma unroll
      for (int q = 0; q < 2; ++q)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int f = 0; f < 2; ++f)
            off[(q * 2 + h) * 2 + f] = base + 4 * swz<R, SWZ, 4>(t + 4 * q, w0 + f * 16 + 8 * h + g);
    }
#pragma unroll
    for (int i = 0; i < (KC ? KS : 8); ++i) keep(off[i]);
  }
  // KC: the ldmatrix address of 16-row fragment f of k8 step s.
  __device__ __forceinline__ uint32_t at(uint32_t stage, int s, int f) const {
    return off[s] + stage + 4 * f * 16 * Op::BK;
  }
  // Not KC: the word at k row 4 q + t of step s, column 16 f + 8 h + g.
  __device__ __forceinline__ uint32_t at(uint32_t stage, int s, int f, int h, int q) const {
    return off[(q * 2 + h) * 2 + (f & 1)] + stage + 4 * ((f >> 1) * 32 + s * 8 * R);
  }
};

// The (M tile, N tile) of block t: groups of G M tiles, M fastest within a
// group, so that the CTAs resident at once share B's column panels and read
// few of A's row panels (L2 reuse).  The last group holds the M tiles left.
// In 32 bits: the dispatcher keeps tiles_m x tiles_n (the grid) below 2^31;
// a group of G x tiles_n past 2^32 - 1 is clamped, still past t.  (64-bit
// divisions here cost a 255-register kernel 8 bytes of spill on sm_120.)
template <int G>
__device__ __forceinline__ void tile_coord(uint32_t t, uint32_t tiles_m, uint32_t tiles_n, uint32_t *mt,
                                           uint32_t *nt) {
  if constexpr (G == 1) {
    *mt = t / tiles_n, *nt = t - *mt * tiles_n;
  } else {
    const uint32_t per = tiles_n > 0xFFFFFFFFu / G ? 0xFFFFFFFFu : G * tiles_n;
    const uint32_t g = t / per, first = g * G, r = t - g * per;
    const uint32_t gm = tiles_m - first < (uint32_t)G ? tiles_m - first : (uint32_t)G;
    *nt = r / gm, *mt = first + (r - *nt * gm);
  }
}

// The epilogue from the fp32 staging tile (BM rows of SROW = BN + 8 floats,
// columns permuted by stage_col; BN the tile's width, Op::BN unless given:
// the attention skeletons stage O, DV wide) to global memory, by NT threads
// (tid in [0, NT); unsigned, as threadIdx.x, so that its divisions stay
// shifts).  store_full: the GPU IR's full-width pair, for a tile inside N
// with aligned tensors (Op::epi_vec_ok): each thread owns EV consecutive
// columns, reads what depends only on them once, and stores EV outputs of a
// row with one 16-byte st.global.  Rows past M are not stored: a tile on
// M's edge (every tile of a decode shape, M < BM) takes this path too.
template <class Op, int NT, int BN = Op::BN>
__device__ __forceinline__ void store_full(const typename Op::Params *p, const float *stage, int64_t m0, int64_t n0,
                                           int64_t b, unsigned tid) {
  constexpr int BM = Op::BM, SROW = BN + 8;
  constexpr int EV = Op::EPI_VEC, TPR = BN / EV, RPP = NT / TPR;
  static_assert(EV > 0 && BN % EV == 0 && NT % TPR == 0 && BM % RPP == 0 && EV % 4 == 0, "threads cover whole rows");
  const int64_t mleft = Op::extent_m(p) - m0;
  const int rows = mleft < BM ? (int)mleft : BM;
  const int c = (tid % TPR) * EV;
  const int r0 = tid / TPR;
  if (r0 >= rows) return;
  typename Op::EpiCols cols;
  Op::epi_cols(p, n0 + c, b, cols);
  // the row pointers: the thread's first row's, stepped RPP rows at a
  // time (the GPU IR's row steps), or each row's from its index
  typename Op::EpiRow rp;
  if constexpr (Op::EPI_ROW_STEP) Op::epi_row_at(p, m0 + r0, n0 + c, b, rp);
#pragma unroll 2
  for (int r = r0; r < rows; r += RPP) {
    if constexpr (!Op::EPI_ROW_STEP) Op::epi_row_at(p, m0 + r, n0 + c, b, rp);
    float a[EV];
#pragma unroll
    for (int q = 0; q < EV / 4; ++q) {
      const float4 v = *reinterpret_cast<const float4 *>(&stage[r * SROW + stage_col(c + 4 * q)]);
      a[4 * q] = v.x, a[4 * q + 1] = v.y, a[4 * q + 2] = v.z, a[4 * q + 3] = v.w;
    }
    Op::epi_row(p, m0 + r, n0 + c, b, cols, rp, a);
    if constexpr (Op::EPI_ROW_STEP) Op::epi_row_step(p, rp, RPP);
  }
}

// store_checked: the bounds-checked pair, for any tile: 4 consecutive
// outputs a thread, one vector st.global where the row and alignment allow.
template <class Op, int NT, int BN = Op::BN>
__device__ __forceinline__ void store_checked(const typename Op::Params *p, const float *stage, int64_t m0, int64_t n0,
                                              int64_t b, unsigned tid) {
  constexpr int BM = Op::BM, SROW = BN + 8;
#pragma unroll 2
  for (int i = tid; i < BM * BN / 4; i += NT) {
    const int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
    const float4 v = *reinterpret_cast<const float4 *>(&stage[r * SROW + stage_col(c)]);
    const float a4[4] = {v.x, v.y, v.z, v.w};
    Op::epilogue4(p, m0 + r, n0 + c, b, a4);  // TokEpilogue, then the store
  }
}

// The operand a primitive of Sm80Cta moves.
enum Operand : int { OPA = 0, OPB = 1 };

// The sm80 contraction's state and primitives, one CTA's: the kernel itself
// is the Op's kernel<VEC>(p), which the emitter renders from the GPU IR, one
// call a statement, in the IR's order (docs/codegen.md).  Nothing here
// decides an order: each primitive is one statement's work.
//   tile_coord    TileCoord: the tile (the plan's raster order), the batch
//                 and, for split-K, the slice's k-tiles; the tile is parked
//                 in shared memory, read back by the drain and the epilogue
//                 (a shared load each) rather than kept live in registers
//                 across the k loop, which 255-register kernels cannot spare
//   alloc         AllocShared: an operand's ring
//   acc_zero      AccZero: the fp32 accumulators
//   setup         AddrSetup: a streamed operand's chunk pointers (or walk
//                 state) at the slice's first k-tile; k_start: the walks'
//                 K counter; frag_setup: the lane's ldmatrix offsets
//   copy_tile     CpAsync (tile): tile t if t < KT, streamed when full and
//                 this width streams, else with bounds
//   copy_stream   CpAsync (stream): the next full tile, no predicate
//   copy_bounded  CpAsync (bounded): tile t if t < KT, with bounds
//   advance(_full), k_next(_full)   Advance: a stream's pointers, or the
//                 walks' K counter, one tile on (after a full tile only)
//   frags, mma    LdMatrix, Mma: one k step's fragments of an operand, and
//                 the warp tile's MMAs on them
//   ahead_a, ahead_b   the fragment set the GPU IR loads a tile ahead (k step
//                 0 of tile kt + 1, in the steady loop of its ahead_vec)
//   stage(d)      the ring stage of k-tile kt + d
//   next_stage    EndLoop: the stages of the next kt
//   stage_acc     StageAcc: the accumulators to the staging tile
//   store_full, store_checked, store_partial   Epilogue and StGlobalVec: the
//                 full-width pair, the bounds-checked pair, or split-K's
//                 partial tile
template <class Op, int VEC>
struct Sm80Cta {
  using T = typename Op::T;
  using Params = typename Op::Params;
  static constexpr int BM = Op::BM, BN = Op::BN, BK = Op::BK, STAGES = Op::STAGES;
  static constexpr int NT = 32 * Op::WARPS_M * Op::WARPS_N;
  static constexpr int WM = BM / Op::WARPS_M, WN = BN / Op::WARPS_N;
  static constexpr int MT = WM / 16, NTL = WN / 8;
  static constexpr bool AKC = Op::A_K_CONTIG, BKC = Op::B_K_CONTIG;
  using GA = OperandTile<Op, VEC, true>;
  using GB = OperandTile<Op, VEC, false>;
  static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "mma tiling");
  // The GPU IR's MMA: m16n8k16 for 16-bit operands, tf32 m16n8k8 for fp32.
  static constexpr bool TF32 = sizeof(T) == 4;
  static_assert(Op::MMA_K == (TF32 ? 8 : 16), "the MMA the GPU IR chose for the operand type");
  static_assert(STAGES >= 2, "a ring needs two stages");
  static_assert(GA::STREAM == GB::STREAM, "the steady loop streams both operands");
  // The walking operands' K counter runs only where a walk streams.
  static constexpr bool WALKS = GA::STREAM && (GA::WALK || GB::WALK);
  static_assert(!(GA::WALK && GB::WALK) || GA::CPR == GB::CPR, "both walks keep one K column");
  static_assert(!(Op::SPLIT_K && WALKS), "a split-K slice starts its streams by pointer steps (no walk)");
  using FragA = uint32_t[MT][4];
  using FragB = uint32_t[NTL][2];

  T *smA, *smB;
  const volatile uint32_t *mn;  // the parked tile coordinates
  int64_t om, on;               // the tile's origin, for the epilogue (stage_acc reads it back)
  int64_t b;
  int KT, KTF, kt0, kt, rd, wr;
  float acc[MT][NTL][4];
  std::conditional_t<GA::WALK, OperandWalk<Op, VEC, true>, OperandStream<Op, VEC, true>> sa;
  std::conditional_t<GB::WALK, OperandWalk<Op, VEC, false>, OperandStream<Op, VEC, false>> sb;
  typename Op::KWalk kw;
  std::conditional_t<TF32, FragOffsets32<Op, true>, FragOffsets<Op, true>> fa;
  std::conditional_t<TF32, FragOffsets32<Op, false>, FragOffsets<Op, false>> fb;
  FragA ahead_a;  // the GPU IR's fragments a tile ahead: k step 0 of the next tile
  FragB ahead_b;

  __device__ __forceinline__ int64_t m0() const { return (int64_t)mn[0] * BM; }
  __device__ __forceinline__ int64_t n0() const { return (int64_t)mn[1] * BN; }

  __device__ __forceinline__ void tile_coord(const Params *p) {
    __shared__ uint32_t tile_mn[2];
    uint32_t mt, nt;
    dlc::tile_coord<Op::RASTER_GROUP>(blockIdx.x, (uint32_t)((Op::extent_m(p) + BM - 1) / BM),
                                      (uint32_t)((Op::extent_n(p) + BN - 1) / BN), &mt, &nt);
    if (threadIdx.x == 0) tile_mn[0] = mt, tile_mn[1] = nt;
    mn = tile_mn;
    m_tile = mt, n_tile = nt;
    b = blockIdx.z;
    const int64_t K = Op::extent_k(p);
    KT = (int)((K + BK - 1) / BK);  // k-tiles; the dispatcher keeps K below 2^31 - BK
    KTF = (int)(K / BK);            // full k-tiles
    kt0 = 0;
    // Split-K: slice blockIdx.y takes the k-tiles [kt0, kt0 + split_ktp) of K.
    if constexpr (Op::SPLIT_K) {
      kt0 = (int)blockIdx.y * Op::split_ktp(p);
      KT = KT < kt0 + Op::split_ktp(p) ? KT : kt0 + Op::split_ktp(p);
      KTF = KTF < KT ? KTF : KT;
    }
    kt = kt0, rd = 0, wr = STAGES - 1;
  }
  template <Operand O>
  __device__ __forceinline__ void alloc() {
    extern __shared__ __align__(128) unsigned char smem_raw[];
    if constexpr (O == OPA) smA = reinterpret_cast<T *>(smem_raw);
    else smB = reinterpret_cast<T *>(smem_raw) + STAGES * BM * BK;
  }
  __device__ __forceinline__ void acc_zero() {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NTL; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;
  }
  template <Operand O>
  __device__ __forceinline__ void setup(const Params *p) {
    static_assert(GA::STREAM, "a width that streams");
    if constexpr (O == OPA) {
      sa.init(p, (int64_t)m_tile * BM, b);
      if constexpr (Op::SPLIT_K) sa.skip(kt0);
    } else {
      sb.init(p, (int64_t)n_tile * BN, b);
      if constexpr (Op::SPLIT_K) sb.skip(kt0);
    }
  }
  __device__ __forceinline__ void k_start(const Params *p) {
    static_assert(WALKS, "a walk that streams");
    Op::k_start(p, (threadIdx.x % (GA::WALK ? GA::CPR : GB::CPR)) * VEC, kw);
  }
  template <Operand O>
  __device__ __forceinline__ void frag_setup() {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if constexpr (O == OPA) fa.init(smA, warp / Op::WARPS_N * WM, lane);
    else fb.init(smB, warp % Op::WARPS_N * WN, lane);
  }

  template <Operand O>
  __device__ __forceinline__ T *ring(int s) const {
    return O == OPA ? smA + s * BM * BK : smB + s * BN * BK;
  }
  template <Operand O>
  __device__ __forceinline__ void copy_bounded(const Params *p, int t, int s) {
    if (t >= KT) return;
    if constexpr (O == OPA) load_operand<Op, VEC, true>(p, ring<O>(s), m0(), (int64_t)t * BK, b);
    else load_operand<Op, VEC, false>(p, ring<O>(s), n0(), (int64_t)t * BK, b);
  }
  template <Operand O>
  __device__ __forceinline__ void copy_stream(const Params *p, int s) {
    if constexpr (O == OPA) sa.copy(p, ring<O>(s), kw);
    else sb.copy(p, ring<O>(s), kw);
  }
  template <Operand O>
  __device__ __forceinline__ void copy_tile(const Params *p, int t, int s) {
    if constexpr (GA::STREAM)
      if (t < KTF) return copy_stream<O>(p, s);
    copy_bounded<O>(p, t, s);
  }
  template <Operand O>
  __device__ __forceinline__ void advance() {
    if constexpr (O == OPA) sa.advance();
    else sb.advance();
  }
  template <Operand O>
  __device__ __forceinline__ void advance_full(int t) {
    if (t < KTF) advance<O>();
  }
  __device__ __forceinline__ void k_next(const Params *p) { Op::k_next(p, kw); }
  __device__ __forceinline__ void k_next_full(const Params *p, int t) {
    if (t < KTF) k_next(p);
  }

  // One k step's fragments (k16, or k8 in TF32) of operand O from stage s.
  __device__ __forceinline__ void frags(FragA &af, int s, int ks) const {
    const uint32_t ua = (uint32_t)s * (BM * BK * (int)sizeof(T));
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      if constexpr (TF32 && !AKC) {
#pragma unroll
        for (int e = 0; e < 4; ++e) af[i][e] = ld_shared_b32(fa.at(ua, ks, i, e & 1, e >> 1));
      } else {
        ldmatrix_x4<!AKC>(af[i], fa.at(ua, ks, i));
      }
      if constexpr (TF32)
#pragma unroll
        for (int e = 0; e < 4; ++e) af[i][e] = to_tf32(af[i][e]);
    }
  }
  __device__ __forceinline__ void frags(FragB &bf, int s, int ks) const {
    const uint32_t ub = (uint32_t)s * (BN * BK * (int)sizeof(T));
#pragma unroll
    for (int j = 0; j < NTL; j += 2) {
      if constexpr (TF32 && !BKC) {
#pragma unroll
        for (int e = 0; e < 4; ++e) bf[j + (e & 1)][e >> 1] = ld_shared_b32(fb.at(ub, ks, j / 2, e & 1, e >> 1));
      } else {
        uint32_t t[4];
        ldmatrix_x4<!BKC>(t, fb.at(ub, ks, j / 2));
        bf[j][0] = t[0], bf[j][1] = t[1], bf[j + 1][0] = t[2], bf[j + 1][1] = t[3];
      }
      if constexpr (TF32)
#pragma unroll
        for (int e = 0; e < 4; ++e) bf[j + (e >> 1)][e & 1] = to_tf32(bf[j + (e >> 1)][e & 1]);
    }
  }
  __device__ __forceinline__ void mma(const FragA &af, const FragB &bf) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NTL; ++j) {
        if constexpr (TF32) mma_1688_tf32(acc[i][j], af[i], bf[j]);
        else mma_16816<T>(acc[i][j], af[i], bf[j]);
      }
  }
  // The ring stage of k-tile kt + d (the slice's first k-tile in stage 0):
  // those of kt and kt + S - 1, the stages a loop reads and refills, are
  // carried (rd, wr), set by next_stage from kt once an iteration.
  __device__ __forceinline__ int stage(int d) const {
    return d == 0 ? rd : d == STAGES - 1 ? wr : (int)((unsigned)(kt + d - kt0) % STAGES);
  }
  __device__ __forceinline__ void next_stage() {
    if constexpr ((STAGES & (STAGES - 1)) == 0) {
      rd = (int)((unsigned)(kt + 1 - kt0) % STAGES);
      wr = (int)((unsigned)(kt + STAGES - kt0) % STAGES);
    } else {
      rd = rd == STAGES - 1 ? 0 : rd + 1;
      wr = wr == STAGES - 1 ? 0 : wr + 1;
    }
  }

  // The fp32 accumulators to the staging tile, which reuses the ring (rows
  // padded by 8 floats, 16-byte groups permuted by stage_col: conflict-free
  // both ways).
  static constexpr int SROW = BN + 8;
  __device__ __forceinline__ float *stage_acc() {
    extern __shared__ __align__(128) unsigned char smem_raw[];
    om = m0(), on = n0();
    float *stage = reinterpret_cast<float *>(smem_raw);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / Op::WARPS_N, wn = warp % Op::WARPS_N;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NTL; ++j) {
        const int r = wm * WM + i * 16 + lane / 4, c = stage_col(wn * WN + j * 8 + 2 * (lane % 4));
        st_shared_v2(&stage[r * SROW + c], acc[i][j][0], acc[i][j][1]);
        st_shared_v2(&stage[(r + 8) * SROW + c], acc[i][j][2], acc[i][j][3]);
      }
    return stage;
  }
  // The epilogue pairs from the staging tile (store_full, store_checked).
  __device__ __forceinline__ void store_full(const Params *p, const float *stage) const {
    dlc::store_full<Op, NT>(p, stage, om, on, b, threadIdx.x);
  }
  __device__ __forceinline__ void store_checked(const Params *p, const float *stage) const {
    dlc::store_checked<Op, NT>(p, stage, om, on, b, threadIdx.x);
  }
  // Split-K: the partial tile, whole and in fp32, to the workspace at
  // [batch][slice][tile], for the second kernel (sm80_splitk_reduce).
  __device__ __forceinline__ void store_partial(const Params *p, const float *stage) const {
    float *ws = Op::split_ws(p) + (((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * (BM * BN);
#pragma unroll 2
    for (int i = threadIdx.x; i < BM * BN / 4; i += NT) {
      const int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
      *reinterpret_cast<float4 *>(ws + r * BN + c) = *reinterpret_cast<const float4 *>(&stage[r * SROW + stage_col(c)]);
    }
  }

 private:
  uint32_t m_tile, n_tile;  // the tile, for the setup before the loop (registers there)
};

// The second kernel of a split-K plan (algo_choice "splitk_reduce"), its
// state and primitives; the kernel is the Op's reduce_kernel(p), which the
// emitter renders from that kernel's GPU IR.  The CTAs (tile, blockIdx.y,
// batch) sum the split_n(p) partial tiles the tile's slices stored: a
// thread takes one 4-float column of the tile (the GPU IR's split_parts
// CTAs a tile cover its BM x BN / 4 columns; a grid-stride loop takes any
// others), loads that column of every slice before it adds any, so the
// loads are in flight together, and sums them in slice order 0, 1, ...,
// n-1 (one fixed order: the same inputs give the same bits however the
// slices were scheduled).  The epilogue runs once on the sum: 4 consecutive
// outputs a thread, bounds-checked.  No shared memory.
//   tile_coord   TileCoord: the tile, the batch, the slices
//   first, step  Loop: the thread's first column and the loop's stride
//   sum          LdGlobal: column i of every slice, summed; false past M
//   store        Epilogue and StGlobalVec: Op::epilogue4 on the sum
template <class Op>
struct Sm80SplitReduce {
  using Params = typename Op::Params;
  static constexpr int BM = Op::BM, BN = Op::BN, NT = 32 * Op::WARPS_M * Op::WARPS_N, SMAX = Op::SPLIT_MAX;
  static constexpr int COLS = BM * BN / 4;
  static_assert(Op::SPLIT_K && SMAX >= 1, "the reduction of a split-K plan");
  int64_t b, m0, n0, em, slice;
  int S;
  const float *ws;

  __device__ __forceinline__ void tile_coord(const Params *p) {
    uint32_t mt, nt;
    em = Op::extent_m(p);
    dlc::tile_coord<Op::RASTER_GROUP>(blockIdx.x, (uint32_t)((em + BM - 1) / BM),
                                      (uint32_t)((Op::extent_n(p) + BN - 1) / BN), &mt, &nt);
    b = blockIdx.z, m0 = (int64_t)mt * BM, n0 = (int64_t)nt * BN;
    S = Op::split_n(p);
    slice = (int64_t)gridDim.x * (BM * BN);  // floats between a tile's slices
    ws = Op::split_ws(p) + ((int64_t)b * S * gridDim.x + blockIdx.x) * (BM * BN);
  }
  __device__ __forceinline__ int first() const { return blockIdx.y * NT + threadIdx.x; }
  __device__ __forceinline__ int step() const { return gridDim.y * NT; }
  __device__ __forceinline__ bool sum(int i, float (&a4)[4]) const {
    const int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
    if (m0 + r >= em) return false;  // rows past M: nothing to store (i grows with r)
    float4 v[SMAX];
#pragma unroll
    for (int s = 0; s < SMAX; ++s)
      if (s < S) v[s] = *reinterpret_cast<const float4 *>(ws + s * slice + r * BN + c);
    float4 a = v[0];
#pragma unroll
    for (int s = 1; s < SMAX; ++s)
      if (s < S) a.x += v[s].x, a.y += v[s].y, a.z += v[s].z, a.w += v[s].w;
    a4[0] = a.x, a4[1] = a.y, a4[2] = a.z, a4[3] = a.w;
    return true;
  }
  __device__ __forceinline__ void store(const Params *p, int i, const float (&a4)[4]) const {
    const int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
    Op::epilogue4(p, m0 + r, n0 + c, b, a4);
  }
};

// Dynamic shared memory of one block: the operand ring, reused by the
// epilogue's staging tile.
template <class Op>
constexpr int sm80_contraction_smem() {
  constexpr int ring = Op::STAGES * (Op::BM + Op::BN) * Op::BK * (int)sizeof(typename Op::T);
  constexpr int stage = Op::BM * (Op::BN + 8) * (int)sizeof(float);
  return ring > stage ? ring : stage;
}

}  // namespace dlc
