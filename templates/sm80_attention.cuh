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
// i is i*RPP keys below its chunk 0, RPP * rstep elements further.  TAIL
// false: no bounds (the tile lies inside the keys and the head dims); TAIL
// true: chunk i holds a key when i*RPP < left (the keys from the thread's
// chunk 0 to the key length), else it is zero-filled from `base` (a valid
// address, nothing read).
template <class Op, int VEC, int KIND, bool TAIL = false>
__device__ __forceinline__ void load_att_rows(typename Op::T *tile, const typename Op::T *row0, int64_t rstep,
                                              const typename Op::T *base = nullptr, int left = 0) {
  constexpr int L = KIND == 2 ? Op::DV : Op::D, CPR = L / VEC, RPP = 128 / CPR, CH = Op::BN / RPP;
  constexpr int BYTES = VEC * (int)sizeof(typename Op::T);
  const int off = swz<L, KIND == 2 ? Op::SWZ_DV : Op::SWZ_D>((int)threadIdx.x / CPR, ((int)threadIdx.x % CPR) * VEC);
#pragma unroll
  for (int i = 0; i < CH; ++i) {
    if constexpr (TAIL) {
      const bool in = i * RPP < left;
      copy_g2s<BYTES>(tile + off + i * RPP * L, in ? row0 + i * RPP * rstep : base, in ? BYTES : 0);
    } else {
      copy_g2s_full<BYTES>(tile + off + i * RPP * L, row0 + i * RPP * rstep);
    }
  }
}

template <class Op, int VEC>
__device__ __forceinline__ void sm80_attention(const typename Op::Params *p) {
  using T = typename Op::T;
  using PT = typename Op::PT;
  constexpr int BM = Op::BM, BN = Op::BN, D = Op::D, DV = Op::DV;
  constexpr int NTS = BN / 8;   // n8 tiles of S per warp
  constexpr int NTO = DV / 8;   // n8 tiles of O per warp
  constexpr int KD = D / 16;    // k-steps of QK^T
  static_assert(BM == 64 && BN % 16 == 0 && D % 16 == 0 && DV % 16 == 0, "attention tiling");

  extern __shared__ __align__(128) unsigned char smem_raw[];
  T *smQ = reinterpret_cast<T *>(smem_raw);
  T *smK = smQ + BM * D;          // [2][BN][D]
  T *smV = smK + 2 * BN * D;      // [2][BN][DV]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t m0 = (int64_t)blockIdx.x * BM, b = blockIdx.y;
  const int64_t SK = Op::extent_kv(p);
  const int64_t NT = (SK + BN - 1) / BN;
  // the last key tile the mask leaves anything of
  int64_t nt = NT;
  while (nt > 0 && !Op::tile_live(p, m0, m0 + BM, (nt - 1) * BN, nt * BN, b)) --nt;
  // A tile's pass: 0, full (inside the keys, and no mask removes anything:
  // tile_full), with Op::score_full and no per-element test; 1, masked inside
  // the keys, with the masks; 2, past the key length, with the masks and the
  // key bound.  The online softmax takes the tiles in any order.
  // per-row lane masks: the lane's rows decomposed once, not per key tile
  [[maybe_unused]] typename att_rows_of<Op>::type lrows;
  if constexpr (att_lane_rows<Op>::value) Op::lane_rows(p, m0 + warp * 16 + lane / 4, b, lrows);
  auto kind = [&](int64_t t) {
    return (t + 1) * BN > SK ? 2 : Op::tile_full(p, m0, m0 + BM, t * BN, (t + 1) * BN, b) ? 0 : 1;
  };
  auto next = [&](int64_t t, int want) {
    for (++t; t < nt; ++t)
      if (kind(t) == want && Op::tile_live(p, m0, m0 + BM, t * BN, (t + 1) * BN, b)) return t;
    return nt;
  };

  load_att_tile<Op, VEC, 0>(p, smQ, m0, b);
  cp_async_commit();  // TokLoad Q
  cp_async_wait<0>();
  __syncthreads();

  constexpr bool QREG = Op::Q_REGS;
  const int r8 = lane % 8, mat = lane / 8;
  uint32_t qf[QREG ? KD : 1][4];
  if constexpr (QREG) {
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
  int kofs[KD], vofs[NTO / 2];
#pragma unroll
  for (int kk = 0; kk < KD; ++kk) kofs[kk] = swz<D, Op::SWZ_D>((mat >> 1) * 8 + r8, kk * 16 + (mat & 1) * 8), keep(kofs[kk]);
#pragma unroll
  for (int j = 0; j < NTO; j += 2) vofs[j / 2] = swz<DV, Op::SWZ_DV>((mat & 1) * 8 + r8, j * 8 + (mat >> 1) * 8), keep(vofs[j / 2]);
  float o[NTO][4];
#pragma unroll
  for (int j = 0; j < NTO; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
  float mrow[2] = {Op::MAX_INIT, Op::MAX_INIT}, lrow[2] = {0.f, 0.f};  // rows lane/4 and lane/4+8

  // One key tile from stage st (TokCompute for S and for O += P V).
  auto compute = [&](auto mode_tag, int64_t t, int st) {
    constexpr int MODE = decltype(mode_tag)::value;
    const int64_t n0 = t * BN;
    const T *sK = smK + st * BN * D, *sV = smV + st * BN * DV;
    // S = Q K^T
    float s[NTS][4];
#pragma unroll
    for (int j = 0; j < NTS; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KD; ++kk) {
      uint32_t qk[4];
      if constexpr (!QREG) {
        const int m = warp * 16 + (mat & 1) * 8, k = kk * 16 + (mat >> 1) * 8;
        ldmatrix_x4<false>(qk, smQ + swz<D, Op::SWZ_D>(m + r8, k));
      }
      const uint32_t(&qa)[4] = QREG ? qf[QREG ? kk : 0] : qk;
#pragma unroll
      for (int j = 0; j < NTS; j += 2) {
        uint32_t kf[4];
        ldmatrix_x4<false>(kf, sK + kofs[kk] + j * 8 * D);
        const uint32_t b0[2] = {kf[0], kf[1]}, b1[2] = {kf[2], kf[3]};
        mma_16816<T>(s[j], qa, b0);
        mma_16816<T>(s[j + 1], qa, b1);
      }
    }
    // the score lets; in the tail pass keys past the length take the row
    // max's neutral.  Element e of fragment j is (dm, dn) from the lane's
    // first element (mr0, nr0).
    const int64_t mr0 = m0 + warp * 16 + lane / 4, nr0 = n0 + 2 * (lane % 4);
    float mnew[2] = {mrow[0], mrow[1]};
    if constexpr (MODE == 0) {
#pragma unroll
      for (int j = 0; j < NTS; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[j][e] = Op::score_full(p, mr0 + (e >> 1) * 8, nr0 + j * 8 + (e & 1), b, s[j][e]);
          mnew[e >> 1] = fmaxf(mnew[e >> 1], s[j][e]);
        }
    } else if constexpr (Op::LANE_MASK) {
      typename Op::LaneMask lm;
      if constexpr (att_lane_rows<Op>::value) Op::lane_mask_at(p, lrows, nr0, lm);
      else Op::lane_mask(p, mr0, nr0, b, lm);
      // the lane's keys left: its element dn is a key when dn < kl
      const int kl = MODE == 2 ? (int)(SK - nr0 < 0 ? -1 : SK - nr0 > BN ? BN : SK - nr0) : BN;
#pragma unroll
      for (int j = 0; j < NTS; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int dm = (e >> 1) * ATT_LANE_ROW, dn = j * 8 + (e & 1);
          const float v = Op::score_lane(p, mr0, nr0, b, lm, dm, dn, s[j][e]);
          s[j][e] = MODE == 2 && dn >= kl ? Op::MAX_INIT : v;
          mnew[e >> 1] = fmaxf(mnew[e >> 1], s[j][e]);
        }
    } else {
#pragma unroll
      for (int j = 0; j < NTS; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int64_t m = mr0 + (e >> 1) * 8, n = nr0 + j * 8 + (e & 1);
          s[j][e] = MODE == 2 && n >= SK ? Op::MAX_INIT : Op::score(p, m, n, b, s[j][e]);
          mnew[e >> 1] = fmaxf(mnew[e >> 1], s[j][e]);
        }
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
        s[j][2 * h] = Op::expdiff(s[j][2 * h], mref);
        s[j][2 * h + 1] = Op::expdiff(s[j][2 * h + 1], mref);
        psum[h] += s[j][2 * h] + s[j][2 * h + 1];
      }
      lrow[h] = lrow[h] * scale[h] + psum[h];  // the quad's partial sums are combined at the end
    }
#pragma unroll
    for (int j = 0; j < NTO; ++j) {
      o[j][0] *= scale[0], o[j][1] *= scale[0];
      o[j][2] *= scale[1], o[j][3] *= scale[1];
    }
    // O += P V: the S accumulators of two n8 tiles are one A fragment of P
    constexpr bool SPLIT = sizeof(PT) == 4;  // fp32 P: hi + lo fragments of T
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      uint32_t pf[4];
      [[maybe_unused]] uint32_t pl[SPLIT ? 4 : 1];
      const float *q[4] = {&s[2 * kk][0], &s[2 * kk][2], &s[2 * kk + 1][0], &s[2 * kk + 1][2]};
#pragma unroll
      for (int f = 0; f < 4; ++f) {
        pf[f] = pack2<T>(q[f][0], q[f][1]);
        if constexpr (SPLIT) {
          const float h0 = to_f32(from_f32<T>(q[f][0])), h1 = to_f32(from_f32<T>(q[f][1]));
          pl[f] = pack2<T>(q[f][0] - h0, q[f][1] - h1);
        }
      }
#pragma unroll
      for (int j = 0; j < NTO; j += 2) {
        uint32_t vf[4];
        ldmatrix_x4<true>(vf, sV + vofs[j / 2] + kk * 16 * DV);
        const uint32_t b0[2] = {vf[0], vf[1]}, b1[2] = {vf[2], vf[3]};
        mma_16816<T>(o[j], pf, b0);
        mma_16816<T>(o[j + 1], pf, b1);
        if constexpr (SPLIT) {
          mma_16816<T>(o[j], pl, b0);
          mma_16816<T>(o[j + 1], pl, b1);
        }
      }
    }
  };

  // Full tiles stream K and V from one row pointer each (the GPU IR's row
  // steps), when a thread's chunks are whole numbers of 8 rows apart.
  constexpr int CPRK = D / VEC, CPRV = DV / VEC;
  constexpr int RPK = CPRK <= 128 ? 128 / CPRK : 1, RPV = CPRV <= 128 ? 128 / CPRV : 1;  // rows a pass of the threads
  constexpr bool KVS = Op::KV_STREAM && VEC > 1 && 128 % CPRK == 0 && 128 % CPRV == 0 && RPK % 8 == 0 &&
                       RPV % 8 == 0 && BN % RPK == 0 && BN % RPV == 0;
  const T *krow = nullptr, *vrow = nullptr, *kbase = nullptr, *vbase = nullptr;
  int64_t krs = 0, vrs = 0;
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

  // One pass over the full tiles, one over the masked tiles inside the keys,
  // one over the key tail: a 2-stage K/V ring, the next tile of the pass
  // prefetched while this one computes.  The first two load whole chunks
  // from the row pointers; the tail zero-fills the rows past the keys.
  int st = 0;
  auto load_kv = [&](auto mode_tag, int64_t t, int stage) {
    constexpr int MODE = decltype(mode_tag)::value;
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
  };
  auto pass = [&](auto mode_tag) {
    constexpr int MODE = decltype(mode_tag)::value;
    int64_t t = next(-1, MODE);
    if (t < nt) load_kv(mode_tag, t, st);
    cp_async_commit();  // TokLoad K/V t
    while (t < nt) {
      const int64_t tn = next(t, MODE);
      if (tn < nt) load_kv(mode_tag, tn, st ^ 1);
      cp_async_commit();
      cp_async_wait<1>();  // Wait(TokLoad t)
      __syncthreads();
      compute(mode_tag, t, st);
      __syncthreads();  // the stage is free for the load two tiles ahead
      st ^= 1;
      t = tn;
    }
  };
  pass(std::integral_constant<int, 0>{});
  pass(std::integral_constant<int, 1>{});
  pass(std::integral_constant<int, 2>{});
  cp_async_wait<0>();
  // the row sums over the quad, then O / l (the IR's division)
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    lrow[h] += __shfl_xor_sync(0xffffffffu, lrow[h], 1);
    lrow[h] += __shfl_xor_sync(0xffffffffu, lrow[h], 2);
  }
  __syncthreads();
  // O / l staged as the contraction skeleton stages its accumulators
  // (stage_col), then its epilogue (store_staged, DV wide): the full-width
  // one when the GPU IR has one (the query rows past the end skipped), else
  // 4 bounds-checked outputs a thread.
  constexpr int SROW = DV + 8;
  float *stage = reinterpret_cast<float *>(smem_raw);
#pragma unroll
  for (int j = 0; j < NTO; ++j) {
    const int r = warp * 16 + lane / 4, c = stage_col(j * 8 + 2 * (lane % 4));
    st_shared_v2(&stage[r * SROW + c], Op::finish(o[j][0], lrow[0]), Op::finish(o[j][1], lrow[0]));
    st_shared_v2(&stage[(r + 8) * SROW + c], Op::finish(o[j][2], lrow[1]), Op::finish(o[j][3], lrow[1]));
  }
  __syncthreads();
  store_staged<Op, 128, DV>(p, stage, m0, 0, b, threadIdx.x);
}

template <class Op>
constexpr int sm80_attention_smem() {
  constexpr int ring = (Op::BM * Op::D + 2 * Op::BN * (Op::D + Op::DV)) * (int)sizeof(typename Op::T);
  constexpr int stage = Op::BM * (Op::DV + 8) * (int)sizeof(float);
  return ring > stage ? ring : stage;
}

}  // namespace dlc
