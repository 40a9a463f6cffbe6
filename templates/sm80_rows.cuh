// The sm80 row skeleton (algo_choice "row_reduce"): regions without a
// contraction (elementwise chains, reductions over one axis, softmax and
// normalizations).  A warp, or the whole CTA, takes one row.
//
// The kernel itself is the Op's kernel<VEC>(p), which the emitter renders
// from the GPU IR (generator/emit.c, rows_kernel): per reduction, a pass
// over the row, VEC elements a thread at a time, whose loads, element lets
// and fold into a per-thread partial are its statements, then the
// all-reduce below; then one pass for the element outputs, and the
// row-scalar outputs once a row.  This file holds the row's state and the
// all-reduce.
//
// A tensor that several passes load (X in softmax and the norms) is kept in
// shared memory by the first one when the row has at most Op::CACHE_CAP
// elements: each thread keeps the elements it loaded and reads back only
// those, so the cache needs no barrier.  Longer rows re-read it from global
// memory (L1/L2) in each pass.
//
// Op provides:
//   Params, WARPS (a CTA), ROW_WARPS (warps on one row: 1 or WARPS),
//   CACHE_CAP and CACHE_FLOATS (the row cache of a row: the longest row it
//   holds, its floats; 0: none); init<P>() and combine<P>(a, b): reduction
//   P's neutral element and combine; kernel<VEC>(p).
#pragma once

#include "dlc_device.cuh"

namespace dlc {

// The row a warp (ROW_WARPS 1) or a CTA takes, and what its passes share:
// the thread's place t on the row, the row's index and length, its slice of
// the row cache, and the warps' partials of an all-reduce.
template <class Op, int VEC>
struct Sm80Rows {
  static constexpr int RW = Op::ROW_WARPS;
  static_assert(Op::WARPS % RW == 0, "whole rows a CTA");
  // the elements a pass's loop advances: the row's threads, VEC each
  static constexpr int STEP = 32 * RW * VEC;
  int t;
  int64_t ri, len;
  float *rc, *part;
  bool cached;

  // RowBegin: the row of this warp or CTA among `rows` rows of `row_len`
  // elements; false past the last row (a warp leaves; with a CTA a row, the
  // whole CTA does, so its barriers stay uniform).
  __device__ __forceinline__ bool begin(int64_t rows, int64_t row_len) {
    __shared__ float part_s[RW > 1 ? RW : 1];
    constexpr int CACHE = Op::CACHE_FLOATS;
    __shared__ float cache[CACHE > 0 ? CACHE * (Op::WARPS / RW) : 1];
    t = RW == 1 ? (int)(threadIdx.x % 32) : (int)threadIdx.x;
    ri = (int64_t)blockIdx.x * (Op::WARPS / RW) + (RW == 1 ? (int64_t)(threadIdx.x / 32) : 0);
    if (ri >= rows) return false;
    len = row_len;
    part = part_s;
    rc = cache + (RW == 1 ? (int)(threadIdx.x / 32) * CACHE : 0);
    cached = CACHE > 0 && len <= Op::CACHE_CAP;
    return true;
  }

  // the elements of the thread's chunk at c that lie in the row (at most VEC)
  __device__ __forceinline__ int count(int64_t c) const { return len - c < VEC ? (int)(len - c) : VEC; }

  // Reduce: reduction P of the row's per-thread partials, in every thread
  template <int P>
  __device__ __forceinline__ float allreduce(float acc) const {
    acc = warp_allreduce<Op, P>(acc);
    if constexpr (RW > 1) acc = cta_allreduce<Op, P, RW>(acc, part);
    return acc;
  }
};

template <class Op, int VEC>
__device__ __forceinline__ void sm80_rows(const typename Op::Params *p) {
  Op::template kernel<VEC>(p);
}

}  // namespace dlc
