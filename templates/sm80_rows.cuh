// The sm80 row skeleton (algo_choice "row_reduce"): regions without a
// contraction (elementwise chains, reductions over one axis, softmax and
// normalizations).  A warp, or the whole CTA, takes one row:
//
//   per reduction P (in the region's order; SRNF R4 keeps them apart):
//     pass over the row, VEC elements a thread at a time -> the body of P in
//     fp32 (Op::body) folded into a per-thread partial -> warp butterfly,
//     then the warps' partials through shared memory -> Op::done stores the
//     row value and computes the row-scalar lets that follow it;
//   then one pass for the element outputs (Op::out), and the row-scalar
//   outputs once a row (Op::row_end).
//
// A tensor that several passes load (X in softmax and the norms) is kept in
// shared memory by the first one when the row has at most Op::CACHE_CAP
// elements: each thread keeps the elements it loaded and reads back only
// those, so the cache needs no barrier.  Longer rows re-read it from global
// memory (L1/L2) in each pass.  The values between passes are row scalars in
// registers.
//
// Op provides:
//   T, Params, WARPS (a CTA), ROW_WARPS (warps on one row: 1 or WARPS), NRED
//   (reductions), HAS_OUT (element outputs), CACHE_CAP and CACHE_FLOATS
//   (the row cache of a row: the longest row it holds, its floats; 0: none);
//   extent_rows(p), extent_row(p): the number of rows and their length;
//   Row: the row-scalar values; row_begin(p, ri, rw): those before the first
//   reduction;
//   init<P>(), combine<P>(a, b): reduction P's neutral and combine;
//   body<P, VEC>(p, ri, c, n, rw, x, rc, cached): reduction P's body at the
//   n <= VEC elements c, c+1, ... of row ri, into x (rc: the row's cache,
//   used when cached);
//   done<P>(p, ri, rw, v): v is P's row value;
//   out<VEC>(p, ri, c, n, rw, rc, cached): the element outputs at those elements;
//   row_end(p, ri, rw): the row-scalar outputs.
#pragma once

#include "dlc_device.cuh"

namespace dlc {

template <class Op, int VEC, int P>
__device__ __forceinline__ void rows_pass(const typename Op::Params *p, int64_t ri, int64_t len, int t,
                                          typename Op::Row &rw, float *part, float *rc, bool cached) {
  if constexpr (P < Op::NRED) {
    constexpr int STEP = 32 * Op::ROW_WARPS * VEC;
    float acc = Op::template init<P>();
    for (int64_t c = (int64_t)t * VEC; c < len; c += STEP) {
      const int n = len - c < VEC ? (int)(len - c) : VEC;
      float x[VEC];
      Op::template body<P, VEC>(p, ri, c, n, rw, x, rc, cached);
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        if (j < n) acc = Op::template combine<P>(acc, x[j]);
    }
    acc = warp_allreduce<Op, P>(acc);
    if constexpr (Op::ROW_WARPS > 1) acc = cta_allreduce<Op, P, Op::ROW_WARPS>(acc, part);
    Op::template done<P>(p, ri, rw, acc);
    rows_pass<Op, VEC, P + 1>(p, ri, len, t, rw, part, rc, cached);
  }
}

template <class Op, int VEC>
__device__ __forceinline__ void sm80_rows(const typename Op::Params *p) {
  constexpr int RW = Op::ROW_WARPS;
  static_assert(Op::WARPS % RW == 0, "whole rows a CTA");
  __shared__ float part[RW > 1 ? RW : 1];
  constexpr int CACHE = Op::CACHE_FLOATS;
  __shared__ float cache[CACHE > 0 ? CACHE * (Op::WARPS / RW) : 1];
  const int t = RW == 1 ? (int)(threadIdx.x % 32) : (int)threadIdx.x;
  const int64_t ri = (int64_t)blockIdx.x * (Op::WARPS / RW) + (RW == 1 ? (int64_t)(threadIdx.x / 32) : 0);
  // a warp past the last row leaves; with a CTA a row, the whole CTA does
  if (ri >= Op::extent_rows(p)) return;
  const int64_t len = Op::extent_row(p);
  float *rc = cache + (RW == 1 ? (int)(threadIdx.x / 32) * CACHE : 0);
  const bool cached = CACHE > 0 && len <= Op::CACHE_CAP;
  typename Op::Row rw;
  Op::row_begin(p, ri, rw);
  rows_pass<Op, VEC, 0>(p, ri, len, t, rw, part, rc, cached);
  if constexpr (Op::HAS_OUT) {
    for (int64_t c = (int64_t)t * VEC; c < len; c += 32 * RW * VEC)
      Op::template out<VEC>(p, ri, c, len - c < VEC ? (int)(len - c) : VEC, rw, rc, cached);
  }
  if (t == 0) Op::row_end(p, ri, rw);
}

}  // namespace dlc
