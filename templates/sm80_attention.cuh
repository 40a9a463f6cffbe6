// The sm80 skeleton for attention (spec §15.3, algo_choice "streaming_softmax"),
// FlashAttention-2 style.  One block computes BM query rows (4 warps x 16
// rows) of one batch index, streaming over key tiles of BN:
//
//   cp.async Q tile and a 2-stage K/V ring -> S = Q K^T (mma.sync, Q's
//   fragments in registers, or re-read from shared memory when Op::Q_REGS
//   is false) -> the score lets (scale, mask; key tails take the max's
//   neutral) -> online softmax: running row max and sum, rescaled with the
//   IR's exp2 shift -> P converted in registers to A fragments -> O += P V
//   (V through ldmatrix.trans) -> O / l -> the output epilogue and store.
//
// P never leaves registers (it is the region's "deferred" value).  Key tiles
// on which the mask holds everywhere are skipped (Op::tile_live).  Three
// passes take the others: tiles the mask does not touch first, without
// per-element tests (Op::tile_full); then the masked tiles inside the keys
// (the diagonal), with the mask and no key bound; then the key tail, with
// both.  With Op::LANE_MASK the masks cost one compare an element: a lane's
// value at its first element (lane_mask) plus the element's constant offset.
//
// Op provides:
//   T (Q/K/V), PT (the type of P: T, or float, which is fed to the tensor
//   cores as a hi + lo pair of T fragments), BM, BN, D (QK^T contraction), DV
//   (PV output), Q_REGS (the plan's q_fragments), Params; extent_kv(p) (the
//   key length; queries and the batch are covered by the grid);
//   q_chunk<VEC>(p, m, d, b, &src), k_chunk<VEC>(p, n, d, b, &src),
//   v_chunk<VEC>(p, dv, n, b, &src): elements valid, as in sm80_contraction;
//   score(p, m, n, b, s): the score lets on one QK^T element;
//   MAX_INIT: the neutral of the row max (key tails and the initial max);
//   expdiff(a, b): the IR's exp2(a - b) (probabilities and rescaling);
//   finish(o, l): the IR's division of the accumulator by the row sum;
//   score_full(p, m, n, b, s): the same where tile_full holds (no mask test);
//   LANE_MASK, and when true LaneMask, lane_mask(p, m, n, b, lm) (the masks
//     at a lane's first element (m, n), or at each of its ATT_LANE_ROWS rows
//     m + ATT_LANE_ROW * h) and score_lane(p, m, n, b, lm, dm, dn, s) (score
//     at (m + dm, n + dn), its masks from lm); with a value per row, also
//     LaneRows and lane_rows(p, m, b, lr) (the rows' values at key 0, once a
//     CTA) and lane_mask_at(p, lr, n, lm) (lm at key n from them);
//   tile_live(p, m0, m1, n0, n1, b): false when the mask removes the whole tile;
//   tile_full(p, m0, m1, n0, n1, b): true when no mask removes any element;
//   epilogue4(p, m, dv, b, o[4]): the output lets and the store of 4 values;
//   EPI_VEC and, when > 0, extent_m, extent_n, epi_vec_ok, epi_cols, epi_row:
//     the full-width epilogue, as in sm80_contraction.
#pragma once

#include "sm80_contraction.cuh"

namespace dlc {

// A lane's rows in the m16n8k16 accumulator fragments of its warp's 16: m
// and m + 8 (dm = 0, 8 in score_lane).
constexpr int ATT_LANE_ROWS = 2, ATT_LANE_ROW = 8;

// Whether Op's lane masks hold a value per row computed once a CTA
// (Op::LaneRows, lane_rows, lane_mask_at).
template <class Op, class = void>
struct att_lane_rows : std::false_type {};
template <class Op>
struct att_lane_rows<Op, std::void_t<typename Op::LaneRows>> : std::true_type {};
template <class Op, bool = att_lane_rows<Op>::value>
struct att_rows_of {
  struct type {};
};
template <class Op>
struct att_rows_of<Op, true> {
  using type = typename Op::LaneRows;
};

// A K (VT = false, rows are keys, d contiguous) or V (VT = true, the same
// layout read transposed) tile of BN x L elements, or the Q tile.
template <class Op, int VEC, int KIND>  // 0: Q, 1: K, 2: V
__device__ __forceinline__ void load_att_tile(const typename Op::Params *p, typename Op::T *tile, int64_t r0, int64_t b) {
  using T = typename Op::T;
  constexpr int NT = 128;
  constexpr int ROWS = KIND == 0 ? Op::BM : Op::BN;
  constexpr int L = KIND == 2 ? Op::DV : Op::D;
  constexpr int CHUNKS = ROWS * (L / VEC);
  // partly unrolled: full unrolling of the narrow-vector variants made
  // ptxas spill on sm_100/sm_120
#pragma unroll 4
  for (int i = threadIdx.x; i < CHUNKS; i += NT) {
    const int row = i / (L / VEC), col = (i % (L / VEC)) * VEC;
    const T *src;
    int valid;
    if constexpr (KIND == 0) valid = Op::template q_chunk<VEC>(p, r0 + row, col, b, &src);
    else if constexpr (KIND == 1) valid = Op::template k_chunk<VEC>(p, r0 + row, col, b, &src);
    else valid = Op::template v_chunk<VEC>(p, col, r0 + row, b, &src);
    copy_g2s<VEC * (int)sizeof(T)>(tile + swz<L, KIND == 2 ? Op::SWZ_DV : Op::SWZ_D>(row, col), src, valid * (int)sizeof(T));
  }
}

// A K (KIND 1) or V (KIND 2) tile from the thread's row pointer: its chunk
// i is i*RPP keys below its chunk 0, RPP * rstep elements further.  The
// swizzle's phase repeats every 8 rows, so the thread's chunks take P =
// 8 / RPP shared offsets (one when RPP is a multiple of 8), chunk i the
// (i % P)-th plus (i / P) * 8 rows.  TAIL false: no bounds (the tile lies
// inside the keys and the head dims); TAIL true: chunk i holds a key when
// i*RPP < left (the keys from the thread's chunk 0 to the key length), else
// it is zero-filled from `base` (a valid address, nothing read).
template <class Op, int VEC, int KIND, bool TAIL = false>
__device__ __forceinline__ void load_att_rows(typename Op::T *tile, const typename Op::T *row0, int64_t rstep,
                                              const typename Op::T *base = nullptr, int left = 0) {
  constexpr int L = KIND == 2 ? Op::DV : Op::D, CPR = L / VEC, RPP = 128 / CPR, CH = Op::BN / RPP;
  constexpr int P = RPP % 8 == 0 ? 1 : 8 / RPP;
  static_assert(RPP % 8 == 0 || 8 % RPP == 0, "a thread's chunks in whole swizzle phases");
  constexpr int BYTES = VEC * (int)sizeof(typename Op::T);
  int off[P];
#pragma unroll
  for (int j = 0; j < P; ++j)
    off[j] = swz<L, KIND == 2 ? Op::SWZ_DV : Op::SWZ_D>((int)threadIdx.x / CPR + j * RPP, ((int)threadIdx.x % CPR) * VEC);
  if constexpr (BYTES < 4) {
    // 2-byte chunks are a load and a store each (no cp.async of 2 bytes):
    // one pass of P chunks at a time, or ptxas holds every load of the
    // tile in registers and spills
    static_assert(CH % P == 0, "whole passes");
#pragma unroll 1
    for (int i0 = 0; i0 < CH; i0 += P)
#pragma unroll
      for (int j = 0; j < P; ++j) {
        const int i = i0 + j;
        const bool in = !TAIL || i * RPP < left;
        copy_g2s<BYTES>(tile + off[j] + i0 * RPP * L, in ? row0 + i * RPP * rstep : base, in ? BYTES : 0);
      }
  } else {
#pragma unroll
    for (int i = 0; i < CH; ++i) {
      typename Op::T *dst = tile + off[i % P] + (i / P) * P * RPP * L;
      if constexpr (TAIL) {
        const bool in = i * RPP < left;
        copy_g2s<BYTES>(dst, in ? row0 + i * RPP * rstep : base, in ? BYTES : 0);
      } else {
        copy_g2s_full<BYTES>(dst, row0 + i * RPP * rstep);
      }
    }
  }
}

// The sm80 attention's state and primitives, one CTA's: the kernel is the
// Op's kernel<VEC>(p), which the emitter renders from the GPU IR, one call
// a statement (docs/codegen.md); nothing here decides an order.
//   tile_coord     TileCoord: the query tile, the batch, nt (the last key
//                  tile some row keeps, Op::tile_live)
//   alloc_q/kv     AllocShared: Q's tile and the K/V ring
//   acc_zero       AccZero: O, each lane's rows' max and sum
//   copy_q         CpAsync of Q's tile; q_frags: Q's fragments, kept
//   frag_setup_k/v FragSetup: the lane's hoisted ldmatrix offsets
//   lane_rows      AddrSetup: per-row lane mask values (grouped queries)
//   kv_setup       AddrSetup: K's and V's row pointers (full tiles stream)
//   next<M>        the pass's next key tile after t (the Loop's, and its
//                  first from -1); copy_kv<M>: CpAsync of a key tile if any
//   s_zero, q_reload, k_frags, mma_s   S = Q K^T, k16 step by step
//   score_full, lane_mask, score_lane<M>, score<M>   the score lets
//   row_max, rescale, probs, p_frags   the online softmax, and P as A
//                  fragments of one k16 step of P V
//   v_frags, mma_o O += P V; row_sums: the rows' sums over the quad
//   finish, stage_o, store_full, store_checked   O / l, staged, stored
template <class Op, int VEC>
struct Sm80AttCta {
  using T = typename Op::T;
  using PT = typename Op::PT;
  using Params = typename Op::Params;
  static constexpr int BM = Op::BM, BN = Op::BN, D = Op::D, DV = Op::DV;
  static constexpr int NTS = BN / 8;   // n8 tiles of S per warp
  static constexpr int NTO = DV / 8;   // n8 tiles of O per warp
  static constexpr int KD = D / 16;    // k-steps of QK^T
  static_assert(BM == 64 && BN % 16 == 0 && D % 16 == 0 && DV % 16 == 0, "attention tiling");
  static constexpr bool QREG = Op::Q_REGS;
  static constexpr bool SPLIT = sizeof(PT) == 4;  // fp32 P: hi + lo fragments of T
  // Full tiles stream K and V from one row pointer each (the GPU IR's row
  // steps) when a thread's chunks are a whole number of rows apart that
  // divides 8 or is a multiple of 8 (whole phases of the swizzle:
  // load_att_rows).
  static constexpr int CPRK = D / VEC, CPRV = DV / VEC;
  static constexpr int RPK = CPRK <= 128 ? 128 / CPRK : 1, RPV = CPRV <= 128 ? 128 / CPRV : 1;  // rows a pass
  static constexpr bool KVS = Op::KV_STREAM && 128 % CPRK == 0 && 128 % CPRV == 0 &&
                              (RPK % 8 == 0 || 8 % RPK == 0) && (RPV % 8 == 0 || 8 % RPV == 0) && BN % RPK == 0 &&
                              BN % RPV == 0;
  using SFrag = float[NTS][4];
  using PFrag = uint32_t[SPLIT ? 2 : 1][4];  // P's A fragment (and its lo part)

  T *smQ, *smK, *smV;
  int warp, lane, r8, mat, st;
  int64_t m0, b, SK, nt;
  [[maybe_unused]] typename att_rows_of<Op>::type lrows;
  uint32_t qf[QREG ? KD : 1][4];
  int kofs[KD], vofs[NTO / 2];
  float o[NTO][4];
  float mrow[2], lrow[2];  // rows lane/4 and lane/4+8
  const T *krow, *vrow, *kbase, *vbase;
  int64_t krs, vrs;

  __device__ __forceinline__ void tile_coord(const Params *p) {
    warp = threadIdx.x / 32, lane = threadIdx.x % 32, r8 = lane % 8, mat = lane / 8, st = 0;
    m0 = (int64_t)blockIdx.x * BM, b = blockIdx.y;
    SK = Op::extent_kv(p);
    nt = (SK + BN - 1) / BN;
    // the last key tile the mask leaves anything of
    while (nt > 0 && !Op::tile_live(p, m0, m0 + BM, (nt - 1) * BN, nt * BN, b)) --nt;
  }
  __device__ __forceinline__ void alloc_q() {
    extern __shared__ __align__(128) unsigned char smem_raw[];
    smQ = reinterpret_cast<T *>(smem_raw);
  }
  __device__ __forceinline__ void alloc_kv() {
    smK = smQ + BM * D;      // [2][BN][D]
    smV = smK + 2 * BN * D;  // [2][BN][DV]
  }
  __device__ __forceinline__ void acc_zero() {
#pragma unroll
    for (int j = 0; j < NTO; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    mrow[0] = mrow[1] = Op::MAX_INIT, lrow[0] = lrow[1] = 0.f;
  }
  __device__ __forceinline__ void copy_q(const Params *p) { load_att_tile<Op, VEC, 0>(p, smQ, m0, b); }
  __device__ __forceinline__ void q_frags() {
    static_assert(QREG, "Q's fragments kept in registers (the plan's q_fragments)");
#pragma unroll
    for (int kk = 0; kk < KD; ++kk) {
      const int m = warp * 16 + (mat & 1) * 8, k = kk * 16 + (mat >> 1) * 8;
      ldmatrix_x4<false>(qf[kk], smQ + swz<D, Op::SWZ_D>(m + r8, k));
    }
  }
  // This lane's ldmatrix offsets, hoisted: 8 rows down keeps swz's phase,
  // so one offset per k16 step serves every key fragment of K, and one per
  // fragment pair every k16 step of V.  keep() stops ptxas from recomputing
  // them inside the loop.
  __device__ __forceinline__ void frag_setup_k() {
#pragma unroll
    for (int kk = 0; kk < KD; ++kk) kofs[kk] = swz<D, Op::SWZ_D>((mat >> 1) * 8 + r8, kk * 16 + (mat & 1) * 8), keep(kofs[kk]);
  }
  __device__ __forceinline__ void frag_setup_v() {
#pragma unroll
    for (int j = 0; j < NTO; j += 2) vofs[j / 2] = swz<DV, Op::SWZ_DV>((mat & 1) * 8 + r8, j * 8 + (mat >> 1) * 8), keep(vofs[j / 2]);
  }
  // per-row lane masks: the lane's rows decomposed once, not per key tile
  __device__ __forceinline__ void lane_rows(const Params *p) {
    if constexpr (att_lane_rows<Op>::value) Op::lane_rows(p, m0 + warp * 16 + lane / 4, b, lrows);
  }
  __device__ __forceinline__ void kv_setup(const Params *p) {
    krow = vrow = kbase = vbase = nullptr, krs = vrs = 0;
    if constexpr (KVS) {
      if (SK > 0) {
        // key 0, head-dim column 0 of this batch index: valid whenever SK > 0
        Op::template k_chunk<VEC>(p, 0, 0, b, &krow);
        Op::template v_chunk<VEC>(p, 0, 0, b, &vrow);
      }
      kbase = krow, vbase = vrow;
      krs = Op::k_rstep(p), vrs = Op::v_rstep(p);
      krow += ((int)threadIdx.x / CPRK) * krs + ((int)threadIdx.x % CPRK) * VEC;
      vrow += ((int)threadIdx.x / CPRV) * vrs + ((int)threadIdx.x % CPRV) * VEC;
    }
  }

  // A tile's pass: 0, full (inside the keys, and no mask removes anything:
  // tile_full), with Op::score_full and no per-element test; 1, masked
  // inside the keys, with the masks; 2, past the key length, with the
  // masks and the key bound.  The online softmax takes the tiles in any
  // order.
  __device__ __forceinline__ int kind(const Params *p, int64_t t) const {
    return (t + 1) * BN > SK ? 2 : Op::tile_full(p, m0, m0 + BM, t * BN, (t + 1) * BN, b) ? 0 : 1;
  }
  template <int MODE>
  __device__ __forceinline__ int64_t next(const Params *p, int64_t t) const {
    for (++t; t < nt; ++t)
      if (kind(p, t) == MODE && Op::tile_live(p, m0, m0 + BM, t * BN, (t + 1) * BN, b)) return t;
    return nt;
  }
  // Key tile t of pass MODE into ring stage `stage`, when t < nt.  The
  // first two passes load whole chunks from the row pointers; the tail
  // zero-fills the rows past the keys.
  template <int MODE>
  __device__ __forceinline__ void copy_kv(const Params *p, int64_t t, int stage) {
    if (t >= nt) return;
    if constexpr (MODE < 2 && KVS) {
      load_att_rows<Op, VEC, 1>(smK + stage * BN * D, krow + t * BN * krs, krs);
      load_att_rows<Op, VEC, 2>(smV + stage * BN * DV, vrow + t * BN * vrs, vrs);
    } else if constexpr (KVS) {
      const int64_t kl = SK - t * BN;  // keys from the tile's first
      const int lk = (int)(kl - (int)threadIdx.x / CPRK), lv = (int)(kl - (int)threadIdx.x / CPRV);
      load_att_rows<Op, VEC, 1, true>(smK + stage * BN * D, krow + t * BN * krs, krs, kbase, lk);
      load_att_rows<Op, VEC, 2, true>(smV + stage * BN * DV, vrow + t * BN * vrs, vrs, vbase, lv);
    } else {
      load_att_tile<Op, VEC, 1>(p, smK + stage * BN * D, t * BN, b);
      load_att_tile<Op, VEC, 2>(p, smV + stage * BN * DV, t * BN, b);
    }
  }

  // S = Q K^T, a k16 step at a time: Q's fragments (kept, or re-read),
  // K's, the MMAs.
  __device__ __forceinline__ void s_zero(SFrag &s) const {
#pragma unroll
    for (int j = 0; j < NTS; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
  }
  __device__ __forceinline__ void q_reload(uint32_t (&qk)[4], int kk) const {
    const int m = warp * 16 + (mat & 1) * 8, k = kk * 16 + (mat >> 1) * 8;
    ldmatrix_x4<false>(qk, smQ + swz<D, Op::SWZ_D>(m + r8, k));
  }
  __device__ __forceinline__ void k_frags(uint32_t (&kf)[4], int stage, int kk, int j) const {
    ldmatrix_x4<false>(kf, smK + stage * BN * D + kofs[kk] + j * 8 * D);
  }
  __device__ __forceinline__ void mma_s(SFrag &s, const uint32_t (&qk)[4], int kk, const uint32_t (&kf)[4], int j) const {
    const uint32_t(&qa)[4] = QREG ? qf[QREG ? kk : 0] : qk;
    const uint32_t b0[2] = {kf[0], kf[1]}, b1[2] = {kf[2], kf[3]};
    mma_16816<T>(s[j], qa, b0);
    mma_16816<T>(s[j + 1], qa, b1);
  }

  // The score lets, and each row's max over the lane's elements.  Element
  // e of fragment j is (dm, dn) from the lane's first element (mr0, nr0).
  __device__ __forceinline__ int64_t mr0() const { return m0 + warp * 16 + lane / 4; }
  __device__ __forceinline__ int64_t nr0(int64_t t) const { return t * BN + 2 * (lane % 4); }
  __device__ __forceinline__ void score_full(const Params *p, SFrag &s, int64_t t, float (&mnew)[2]) const {
    mnew[0] = mrow[0], mnew[1] = mrow[1];
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[j][e] = Op::score_full(p, mr0() + (e >> 1) * 8, nr0(t) + j * 8 + (e & 1), b, s[j][e]);
        mnew[e >> 1] = fmaxf(mnew[e >> 1], s[j][e]);
      }
  }
  template <class LM>
  __device__ __forceinline__ void lane_mask(const Params *p, int64_t t, LM &lm) const {
    if constexpr (att_lane_rows<Op>::value) Op::lane_mask_at(p, lrows, nr0(t), lm);
    else Op::lane_mask(p, mr0(), nr0(t), b, lm);
  }
  template <int MODE, class LM>
  __device__ __forceinline__ void score_lane(const Params *p, SFrag &s, int64_t t, const LM &lm, float (&mnew)[2]) const {
    mnew[0] = mrow[0], mnew[1] = mrow[1];
    const int64_t n0 = nr0(t);
    // the lane's keys left: its element dn is a key when dn < kl
    const int kl = MODE == 2 ? (int)(SK - n0 < 0 ? -1 : SK - n0 > BN ? BN : SK - n0) : BN;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int dm = (e >> 1) * ATT_LANE_ROW, dn = j * 8 + (e & 1);
        const float v = Op::score_lane(p, mr0(), n0, b, lm, dm, dn, s[j][e]);
        s[j][e] = MODE == 2 && dn >= kl ? Op::MAX_INIT : v;
        mnew[e >> 1] = fmaxf(mnew[e >> 1], s[j][e]);
      }
  }
  template <int MODE>
  __device__ __forceinline__ void score(const Params *p, SFrag &s, int64_t t, float (&mnew)[2]) const {
    mnew[0] = mrow[0], mnew[1] = mrow[1];
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t m = mr0() + (e >> 1) * 8, n = nr0(t) + j * 8 + (e & 1);
        s[j][e] = MODE == 2 && n >= SK ? Op::MAX_INIT : Op::score(p, m, n, b, s[j][e]);
        mnew[e >> 1] = fmaxf(mnew[e >> 1], s[j][e]);
      }
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
  __device__ __forceinline__ void probs(SFrag &s, const float (&mref)[2], const float (&scale)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float psum = 0.f;
#pragma unroll
      for (int j = 0; j < NTS; ++j) {
        s[j][2 * h] = Op::expdiff(s[j][2 * h], mref[h]);
        s[j][2 * h + 1] = Op::expdiff(s[j][2 * h + 1], mref[h]);
        psum += s[j][2 * h] + s[j][2 * h + 1];
      }
      lrow[h] = lrow[h] * scale[h] + psum;
    }
#pragma unroll
    for (int j = 0; j < NTO; ++j) {
      o[j][0] *= scale[0], o[j][1] *= scale[0];
      o[j][2] *= scale[1], o[j][3] *= scale[1];
    }
  }
  // O += P V: the S accumulators of two n8 tiles are one A fragment of P
  __device__ __forceinline__ void p_frags(const SFrag &s, int kk, PFrag &pf) const {
    const float *q[4] = {&s[2 * kk][0], &s[2 * kk][2], &s[2 * kk + 1][0], &s[2 * kk + 1][2]};
#pragma unroll
    for (int f = 0; f < 4; ++f) {
      pf[0][f] = pack2<T>(q[f][0], q[f][1]);
      if constexpr (SPLIT) {
        const float h0 = to_f32(from_f32<T>(q[f][0])), h1 = to_f32(from_f32<T>(q[f][1]));
        pf[SPLIT ? 1 : 0][f] = pack2<T>(q[f][0] - h0, q[f][1] - h1);
      }
    }
  }
  __device__ __forceinline__ void v_frags(uint32_t (&vf)[4], int stage, int kk, int j) const {
    ldmatrix_x4<true>(vf, smV + stage * BN * DV + vofs[j / 2] + kk * 16 * DV);
  }
  __device__ __forceinline__ void mma_o(const PFrag &pf, const uint32_t (&vf)[4], int j) {
    const uint32_t b0[2] = {vf[0], vf[1]}, b1[2] = {vf[2], vf[3]};
    mma_16816<T>(o[j], pf[0], b0);
    mma_16816<T>(o[j + 1], pf[0], b1);
    if constexpr (SPLIT) {
      mma_16816<T>(o[j], pf[SPLIT ? 1 : 0], b0);
      mma_16816<T>(o[j + 1], pf[SPLIT ? 1 : 0], b1);
    }
  }
  // the row sums over the quad
  __device__ __forceinline__ void row_sums() { quad_sum2(lrow); }
  // O / l (the IR's division), in place
  __device__ __forceinline__ void finish() {
#pragma unroll
    for (int j = 0; j < NTO; ++j) {
      o[j][0] = Op::finish(o[j][0], lrow[0]), o[j][1] = Op::finish(o[j][1], lrow[0]);
      o[j][2] = Op::finish(o[j][2], lrow[1]), o[j][3] = Op::finish(o[j][3], lrow[1]);
    }
  }
  // O staged as the contraction skeleton stages its accumulators (stage_col)
  static constexpr int SROW = DV + 8;
  __device__ __forceinline__ float *stage_o() const {
    extern __shared__ __align__(128) unsigned char smem_raw[];
    float *stage = reinterpret_cast<float *>(smem_raw);
#pragma unroll
    for (int j = 0; j < NTO; ++j) {
      const int r = warp * 16 + lane / 4, c = stage_col(j * 8 + 2 * (lane % 4));
      st_shared_v2(&stage[r * SROW + c], o[j][0], o[j][1]);
      st_shared_v2(&stage[(r + 8) * SROW + c], o[j][2], o[j][3]);
    }
    return stage;
  }
  // the output epilogue, DV wide: the full-width pair when the GPU IR has
  // one (the query rows past the end skipped), else 4 bounds-checked
  // outputs a thread
  __device__ __forceinline__ void store_full(const Params *p, const float *stage) const {
    dlc::store_full<Op, 128, DV>(p, stage, m0, 0, b, threadIdx.x);
  }
  __device__ __forceinline__ void store_checked(const Params *p, const float *stage) const {
    dlc::store_checked<Op, 128, DV>(p, stage, m0, 0, b, threadIdx.x);
  }
};

template <class Op>
constexpr int sm80_attention_smem() {
  constexpr int ring = (Op::BM * Op::D + 2 * Op::BN * (Op::D + Op::DV)) * (int)sizeof(typename Op::T);
  constexpr int stage = Op::BM * (Op::DV + 8) * (int)sizeof(float);
  return ring > stage ? ring : stage;
}

}  // namespace dlc
