// dlc device primitives: every piece of inline PTX the kernels use, written
// once.  The per-arch skeletons (sm80_contraction.cuh, ...) are built on
// these; generated kernels never contain inline asm of their own.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace dlc {

// x clamped into int32 (a walking operand's 32-bit guard bounds).
__device__ __forceinline__ int clamp_i32(int64_t x) {
  return x < (int64_t)INT32_MIN ? INT32_MIN : x > (int64_t)INT32_MAX ? INT32_MAX : (int)x;
}
// Floor division and modulo of index expressions (the IR's floordiv).
__device__ __forceinline__ int64_t floordiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ int64_t floormod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }

// p moved by n elements in integer arithmetic: a pointer stepped past its
// tensor (a thread's row pointers after its last row) is never dereferenced,
// but forming it by pointer arithmetic would be undefined.
template <class P>
__device__ __forceinline__ void step_ptr(P *&p, int64_t n) {
  p = reinterpret_cast<P *>(reinterpret_cast<uintptr_t>(p) + (uint64_t)n * sizeof(P));
}

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Global -> shared copy of BYTES bytes, of which the first `src_bytes` come
// from `gmem` and the rest are zero-filled (tails and padding).  4, 8 and 16
// bytes are asynchronous (cp.async, completed by cp_async_wait); 2 bytes is a
// plain synchronous copy for 2-byte-aligned operands.
template <int BYTES>
__device__ __forceinline__ void copy_g2s(void *smem, const void *gmem, int src_bytes) {
  static_assert(BYTES == 2 || BYTES == 4 || BYTES == 8 || BYTES == 16, "copy size");
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem),
                 "r"(src_bytes));
  } else if constexpr (BYTES == 2) {
    *static_cast<uint16_t *>(smem) = src_bytes ? __ldg(static_cast<const unsigned short *>(gmem)) : 0;
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_addr(smem)), "l"(gmem), "n"(BYTES),
                 "r"(src_bytes));
  }
}

// Global -> shared copy of BYTES (4, 8 or 16) bytes that all come from
// `gmem` (no source size: nothing to compute or zero-fill).
template <int BYTES>
__device__ __forceinline__ void copy_g2s_full(void *smem, const void *gmem) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "copy size");
  if constexpr (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(smem)), "l"(gmem));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(smem_addr(smem)), "l"(gmem), "n"(BYTES));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Wait until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Four 8x8 b16 matrices from shared memory; lane l gives the row address of
// matrix l/8.  TRANS loads each matrix transposed.
template <bool TRANS>
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t saddr) {
  if constexpr (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(saddr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(saddr));
}
template <bool TRANS>
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void *smem) {
  ldmatrix_x4<TRANS>(r, smem_addr(smem));
}

// D = A * B + D on the tensor cores: m16n8k16, row-major A, column-major B,
// fp32 accumulators, for T = __half or __nv_bfloat16.
template <typename T>
struct mma16816;
template <>
struct mma16816<__half> {
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <>
struct mma16816<__nv_bfloat16> {
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  mma16816<T>::run(d, a, b);
}

// A lane's two rows of an m16n8 accumulator fragment (rows lane/4 and
// lane/4 + 8) are shared by the quad of lanes 4 (lane/4) .. + 3: each
// row's max and sum over that quad.
__device__ __forceinline__ void quad_max2(float (&v)[2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    v[h] = fmaxf(v[h], __shfl_xor_sync(0xffffffffu, v[h], 1));
    v[h] = fmaxf(v[h], __shfl_xor_sync(0xffffffffu, v[h], 2));
  }
}
__device__ __forceinline__ void quad_sum2(float (&v)[2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    v[h] += __shfl_xor_sync(0xffffffffu, v[h], 1);
    v[h] += __shfl_xor_sync(0xffffffffu, v[h], 2);
  }
}

// D = A * B + D on the tensor cores in TF32: m16n8k8, row-major A,
// column-major B, fp32 accumulators.  A and B are fp32 words already rounded
// to tf32 (to_tf32); the fragments are the PTX ISA's for .tf32: a0..a3 at
// (row g, col t), (g + 8, t), (g, t + 4), (g + 8, t + 4), b0, b1 at
// (row t, col g), (t + 4, g), with g = lane / 4 and t = lane % 4.
__device__ __forceinline__ void mma_1688_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// An fp32 word rounded to tf32 (10 mantissa bits), to the nearest with ties
// away from zero (cvt.rna.tf32.f32); the low 13 bits of the result are zero.
__device__ __forceinline__ uint32_t to_tf32(uint32_t x) {
  uint32_t y;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(y) : "f"(__uint_as_float(x)));
  return y;
}

// One 32-bit word of shared memory (fp32 fragments of a tile that is not
// K-contiguous: ldmatrix.trans moves 16-bit elements only).
__device__ __forceinline__ uint32_t ld_shared_b32(uint32_t saddr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(saddr));
  return v;
}

// One 8-byte shared store of two floats (a single st.shared.v2, so that the
// staging of accumulators stays conflict-free: see sm80_contraction.cuh).
__device__ __forceinline__ void st_shared_v2(void *smem, float a, float b) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(smem_addr(smem)), "f"(a), "f"(b) : "memory");
}

// Element conversions (round to nearest even, as the IR's CAST).
__device__ __forceinline__ float to_f32(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_f32(float x) { return x; }
template <typename T> __device__ __forceinline__ T from_f32(float x);
template <> __device__ __forceinline__ __half from_f32<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ float from_f32<float>(float x) { return x; }

// Keeps a value hoisted out of a loop in its register: the empty asm hides
// where it came from, so the compiler cannot recompute it inside the loop
// (ptxas otherwise rematerializes lane offsets from threadIdx every tile).
__device__ __forceinline__ void keep(int &x) { asm volatile("" : "+r"(x)); }
__device__ __forceinline__ void keep(uint32_t &x) { asm volatile("" : "+r"(x)); }
__device__ __forceinline__ void keep(int64_t &x) { asm volatile("" : "+l"(x)); }
template <class T>
__device__ __forceinline__ void keep(const T *&x) { asm volatile("" : "+l"(x)); }

// x clamped to [-2^30, 2^30]: an attention lane mask's value (the GPU IR's
// lane_mask).  Adding an element's offset, below 2^29 in magnitude
// (GPUIR_LANE_MASK_SPAN), keeps the sign of the unclamped sum.
__device__ __forceinline__ int clamp_lane(int64_t x) {
  return (int)(x < -(int64_t(1) << 30) ? -(int64_t(1) << 30) : x > (int64_t(1) << 30) ? (int64_t(1) << 30) : x);
}

// The PTX approximate forms the generated code spells for the "approx"
// math of docs/manifest.md: one SFU instruction each (div.full: a few),
// where exp2f, log2f, 1.0f / x, sqrtf and x / y add a subnormal rescale or
// an IEEE slow path.  .ftz flushes subnormal inputs and results to zero.
// The softmax takes ex2 on arguments <= 0 in either math (its flushes are
// below 2^-126 of the row's largest term 1).
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float lg2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float rcp(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float sqrt_approx(float x) {
  float y;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// tanh.approx.f32 (sm_75 and later): one MUFU.TANH.  The generated code
// spells the logistic 1 / (1 + exp2(z)) of the "approx" math as
// 0.5 + 0.5 tanh(-z ln2 / 2) with it (docs/codegen.md, "Lowered lets").
__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// A lowered gate h + h t (or h - h t, Neg) as one fma.rn.f32, h one operand
// of the asm (Neg: -h and h).  Spelled fmaf(h, t, h), h is an operand of
// the fma twice, and cicc's optimizer takes time growing about as 3^G on a
// chain of G gates (each gate's h the previous gate's result times a
// constant): 16 SiLUs in a row took 135 s for one kernel; with this, about
// 2^G, 1.4 s (docs/codegen.md, "Lowered lets").  The PTX is the fma cicc
// emits for fmaf.
template <bool Neg = false>
__device__ __forceinline__ float gate(float h, float t) {
  float y;
  if constexpr (Neg)
    asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(y) : "f"(-h), "f"(t), "f"(h));
  else
    asm("fma.rn.f32 %0, %1, %2, %1;" : "=f"(y) : "f"(h), "f"(t));
  return y;
}
// The gates whose tanh is of a polynomial Q in h that the lowering names,
// each one asm with h its one operand: h + h tanh(Q) (Neg: h - h tanh(Q)),
// Q = h (gate_tanh), c1 h (gate_tanh_lin) or h (c1 + c3 h^2)
// (gate_tanh_odd3: ewise.def's GELU).  With dlc::gate(h, tanh_approx(Q)),
// h reaches the gate's result along two paths or more (Q's own reads of h,
// and the fma's), and cicc's time on a chain of G gates grows as the
// number of paths, 2^G or more (16 SiLUs in a row, 13 s for one op and
// dtype; 20, 91 s: docs/codegen.md, "Lowered lets"); along one path it
// grows as G.  The PTX is the instructions cicc writes for the two-asm
// spelling: mul.f32, fma.rn.f32, tanh.approx.f32.
template <bool Neg = false>
__device__ __forceinline__ float gate_tanh(float h) {
  float y;
  if constexpr (Neg)
    asm("{\n\t.reg .f32 t, n;\n\ttanh.approx.f32 t, %1;\n\tneg.f32 n, %1;\n\tfma.rn.f32 %0, n, t, %1;\n\t}"
        : "=f"(y) : "f"(h));
  else
    asm("{\n\t.reg .f32 t;\n\ttanh.approx.f32 t, %1;\n\tfma.rn.f32 %0, %1, t, %1;\n\t}" : "=f"(y) : "f"(h));
  return y;
}
template <bool Neg = false>
__device__ __forceinline__ float gate_tanh_lin(float h, float c1) {
  float y;
  if constexpr (Neg)
    asm("{\n\t.reg .f32 u, t, n;\n\tmul.f32 u, %1, %2;\n\ttanh.approx.f32 t, u;\n\tneg.f32 n, %1;\n\t"
        "fma.rn.f32 %0, n, t, %1;\n\t}"
        : "=f"(y) : "f"(h), "f"(c1));
  else
    asm("{\n\t.reg .f32 u, t;\n\tmul.f32 u, %1, %2;\n\ttanh.approx.f32 t, u;\n\tfma.rn.f32 %0, %1, t, %1;\n\t}"
        : "=f"(y) : "f"(h), "f"(c1));
  return y;
}
template <bool Neg = false>
__device__ __forceinline__ float gate_tanh_odd3(float h, float c1, float c3) {
  float y;
  if constexpr (Neg)
    asm("{\n\t.reg .f32 s, q, u, t, n;\n\tmul.f32 s, %1, %1;\n\tfma.rn.f32 q, s, %3, %2;\n\tmul.f32 u, %1, q;\n\t"
        "tanh.approx.f32 t, u;\n\tneg.f32 n, %1;\n\tfma.rn.f32 %0, n, t, %1;\n\t}"
        : "=f"(y) : "f"(h), "f"(c1), "f"(c3));
  else
    asm("{\n\t.reg .f32 s, q, u, t;\n\tmul.f32 s, %1, %1;\n\tfma.rn.f32 q, s, %3, %2;\n\tmul.f32 u, %1, q;\n\t"
        "tanh.approx.f32 t, u;\n\tfma.rn.f32 %0, %1, t, %1;\n\t}"
        : "=f"(y) : "f"(h), "f"(c1), "f"(c3));
  return y;
}
__device__ __forceinline__ float div_approx(float x, float d) {
  float y;
  asm("div.full.ftz.f32 %0, %1, %2;" : "=f"(y) : "f"(x), "f"(d));
  return y;
}

// Read-only loads of 1 or 4 consecutive elements (the 4-wide form needs
// 4-element alignment) as fp32.
template <typename T>
__device__ __forceinline__ float ld1(const T *p) {
  return to_f32(__ldg(p));
}
template <typename T>
__device__ __forceinline__ void ld4(float (&v)[4], const T *p) {
  if constexpr (sizeof(T) == 2) {
    uint2 raw = __ldg(reinterpret_cast<const uint2 *>(p));
    const T *e = reinterpret_cast<const T *>(&raw);
    for (int i = 0; i < 4; ++i) v[i] = to_f32(e[i]);
  } else {
    float4 raw = __ldg(reinterpret_cast<const float4 *>(p));
    v[0] = raw.x, v[1] = raw.y, v[2] = raw.z, v[3] = raw.w;
  }
}

// Read-only load of N consecutive elements as fp32, in 16-byte pieces (8-
// or 4-byte when the whole vector is smaller); p holds that alignment.
template <int N, typename T>
__device__ __forceinline__ void ldv(float (&v)[N], const T *p) {
  constexpr int BYTES = N * (int)sizeof(T);
  if constexpr (BYTES >= 16) {
    static_assert(BYTES % 16 == 0, "whole 16-byte pieces");
    constexpr int E = 16 / (int)sizeof(T);
#pragma unroll
    for (int q = 0; q < BYTES / 16; ++q) {
      const uint4 raw = __ldg(reinterpret_cast<const uint4 *>(p) + q);
      const T *e = reinterpret_cast<const T *>(&raw);
#pragma unroll
      for (int i = 0; i < E; ++i) v[q * E + i] = to_f32(e[i]);
    }
  } else if constexpr (BYTES == 8) {
    const uint2 raw = __ldg(reinterpret_cast<const uint2 *>(p));
    const T *e = reinterpret_cast<const T *>(&raw);
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = to_f32(e[i]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = ld1(p + i);
  }
}

// Stores of 1 or 4 consecutive elements from fp32 (the 4-wide form is one
// vector st.global and needs 4-element alignment).
template <typename T>
__device__ __forceinline__ void st1(T *p, float v) {
  *p = from_f32<T>(v);
}
// Two fp32 values rounded and packed into one 32-bit word of T pairs.
template <typename T> __device__ __forceinline__ uint32_t pack2(float a, float b);
template <> __device__ __forceinline__ uint32_t pack2<__half>(float a, float b) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<uint32_t *>(&h);
}
template <> __device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float a, float b) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<uint32_t *>(&h);
}
template <typename T>
__device__ __forceinline__ void st4(T *p, const float (&v)[4]) {
  if constexpr (sizeof(T) == 2)
    asm volatile("st.global.v2.b32 [%0], {%1, %2};\n" ::"l"(__cvta_generic_to_global(p)), "r"(pack2<T>(v[0], v[1])), "r"(pack2<T>(v[2], v[3]))
                 : "memory");
  else
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(__cvta_generic_to_global(p)), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3])
                 : "memory");
}

// Store of N consecutive elements from fp32 as 16-byte st.global pieces
// (N * sizeof(T) a multiple of 16; p holds 16-byte alignment).
template <int N, typename T>
__device__ __forceinline__ void stv(T *p, const float (&v)[N]) {
  static_assert(N * sizeof(T) % 16 == 0, "whole 16-byte pieces");
#pragma unroll
  for (int q = 0; q < N * (int)sizeof(T) / 16; ++q) {
    if constexpr (sizeof(T) == 2)
      asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(__cvta_generic_to_global(p + 8 * q)),
                   "r"(pack2<T>(v[8 * q], v[8 * q + 1])), "r"(pack2<T>(v[8 * q + 2], v[8 * q + 3])),
                   "r"(pack2<T>(v[8 * q + 4], v[8 * q + 5])), "r"(pack2<T>(v[8 * q + 6], v[8 * q + 7]))
                   : "memory");
    else
      asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(__cvta_generic_to_global(p + 4 * q)), "f"(v[4 * q]),
                   "f"(v[4 * q + 1]), "f"(v[4 * q + 2]), "f"(v[4 * q + 3])
                   : "memory");
  }
}

// Butterfly all-reduce of one fp32 value over the 32 lanes of a warp
// (shfl.sync.bfly), with the combine of reduction P of Op: every lane ends
// with the warp's result.
template <class Op, int P>
__device__ __forceinline__ float warp_allreduce(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = Op::template combine<P>(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// All-reduce over the W warps of a CTA, after warp_allreduce: lane 0 of each
// warp leaves its value in part[W] (shared memory), and every thread combines
// them in warp order, so all threads get the same bits.  The second barrier
// lets the next reduction reuse part.
template <class Op, int P, int W>
__device__ __forceinline__ float cta_allreduce(float v, float *part) {
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
  __syncthreads();
  v = part[0];
#pragma unroll
  for (int w = 1; w < W; ++w) v = Op::template combine<P>(v, part[w]);
  __syncthreads();
  return v;
}

// ---- sm_90a (Hopper) primitives: mbarrier, TMA, wgmma, setmaxnreg --------
// The sm90a skeleton (sm90a_contraction.cuh) is built on these.  They
// assemble only for sm_90a; a kernel that uses them guards its body with
// __CUDA_ARCH_FEAT_SM90_ALL (emit.c), so the same .cu builds for every arch.

// mbarrier (PTX ISA "Parallel Synchronization and Communication
// Instructions: mbarrier"): init with an arrival count, the fence that makes
// the init visible to the async proxy (TMA), arrive (releasing a slot),
// arrive.expect_tx (the producer's arrival with the bytes its copies will
// complete), and a spin on try_wait.parity for the phase of that parity.
// wait and arrive also take the barrier's shared-space address (a loop
// that computes it once).
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
// Which barriers an sm90a CTA state's mbar_init sets up (the GPU IR's
// MbarInit): a ring's full or empty barriers, one a stage, or the
// attention's Q barrier.
enum MbarRing : int { MBAR_FULL = 0, MBAR_EMPTY = 1, MBAR_Q = 2 };

__device__ __forceinline__ void mbar_fence_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
// n barriers, each completing on `arrivals` arrivals, initialized by
// thread 0 and fenced for the async proxy (the CTA's barrier follows)
__device__ __forceinline__ void mbar_init_by_thread0(uint64_t *bars, int n, uint32_t arrivals) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < n; ++s) mbar_init(&bars[s], arrivals);
    mbar_fence_init();
  }
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t *bar) { mbar_arrive(smem_addr(bar)); }
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n DLC_WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra DLC_WAIT_%=;\n}\n" ::"r"(
          bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity) { mbar_wait(smem_addr(bar), parity); }

// TMA: a 2-D box of the tensor map `tmap` (a __grid_constant__ parameter's
// address) at element coordinates (c0 inner, c1 outer) into shared memory,
// completing its bytes on `bar`.  Out-of-bounds elements are zero-filled.
__device__ __forceinline__ void tma_load_2d(void *dst, const void *tmap, int32_t c0, int32_t c1, uint64_t *bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_addr(dst)),
      "l"(tmap), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

// TMA of any rank 2..5: the box of `tmap` at element coordinates c (c[0]
// the innermost dim) into shared memory, completing its bytes on `bar`;
// out-of-bounds elements (a query or key tail) are zero-filled.
template <int R>
__device__ __forceinline__ void tma_load(void *dst, const void *tmap, const int32_t (&c)[R], uint64_t *bar) {
  static_assert(R >= 2 && R <= 5, "tensor maps of rank 2 to 5");
  const uint32_t d = smem_addr(dst), m = smem_addr(bar);
  if constexpr (R == 2) {
    tma_load_2d(dst, tmap, c[0], c[1], bar);
  } else if constexpr (R == 3) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
        "[%5];\n" ::"r"(d),
        "l"(tmap), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(m)
        : "memory");
  } else if constexpr (R == 4) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
        "%5}], [%6];\n" ::"r"(d),
        "l"(tmap), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(m)
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
        "%5, %6}], [%7];\n" ::"r"(d),
        "l"(tmap), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(m)
        : "memory");
  }
}

// Makes this thread's generic-proxy writes to shared memory (st.shared, and
// landed cp.async copies) visible to the async proxy, which wgmma reads
// through (PTX ISA "Memory Consistency Model: proxies").
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// One lane of the warp (elect.sync over the full mask).
__device__ __forceinline__ bool elect_one() {
  uint32_t e;
  asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}\n" : "=r"(e));
  return e != 0;
}

// Register rebalancing between warpgroups (setmaxnreg.dec / .inc, all the
// warpgroup's threads; the kernel is built with __launch_bounds__(T, 1)).
template <int R>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}

// A named barrier over `threads` threads (bar.sync id, threads).
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// An arrival on that barrier without waiting (bar.arrive id, threads): the
// threads that bar.sync on it wait for this thread's arrival.
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// A wgmma shared-memory matrix descriptor (PTX ISA "Matrix Descriptor
// Format"): start address, leading and stride byte offsets (all >> 4), and
// the 128-byte swizzle (layout type 1 in bits 62-63).
__host__ __device__ constexpr uint64_t wgmma_desc_128b(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((saddr >> 4) & 0x3FFF) | (uint64_t)((lbo >> 4) & 0x3FFF) << 16 |
         (uint64_t)((sbo >> 4) & 0x3FFF) << 32 | 1ull << 62;
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// D (64 x N, fp32, the warpgroup's fragment) += A (64 x 16) * B (16 x N),
// both from shared memory through descriptors (SS).  TB: B is MN-major
// (imm-trans-b 1), else K-major; A is K-major.  T: __half or __nv_bfloat16.
template <class T, int N, bool TB>
struct Wgmma;
template <>
struct Wgmma<__half, 64, false> {
  static __device__ __forceinline__ void run(float (&d)[32], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db)
                 : "memory");
  }
};
template <>
struct Wgmma<__nv_bfloat16, 64, false> {
  static __device__ __forceinline__ void run(float (&d)[32], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db)
                 : "memory");
  }
};
template <>
struct Wgmma<__half, 64, true> {
  static __device__ __forceinline__ void run(float (&d)[32], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db)
                 : "memory");
  }
};
template <>
struct Wgmma<__nv_bfloat16, 64, true> {
  static __device__ __forceinline__ void run(float (&d)[32], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db)
                 : "memory");
  }
};
template <>
struct Wgmma<__half, 128, false> {
  static __device__ __forceinline__ void run(float (&d)[64], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1, 0, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db)
                 : "memory");
  }
};
template <>
struct Wgmma<__nv_bfloat16, 128, false> {
  static __device__ __forceinline__ void run(float (&d)[64], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1, 0, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db)
                 : "memory");
  }
};
template <>
struct Wgmma<__half, 128, true> {
  static __device__ __forceinline__ void run(float (&d)[64], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1, 0, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db)
                 : "memory");
  }
};
template <>
struct Wgmma<__nv_bfloat16, 128, true> {
  static __device__ __forceinline__ void run(float (&d)[64], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1, 0, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db)
                 : "memory");
  }
};


// D (64 x N, fp32) += A (64 x 16, the warpgroup's registers: 4 x b32 a
// thread, the m16n8k16 A fragment of each warp's 16 rows) * B (16 x N, a
// shared-memory descriptor) (RS).  TB: B is MN-major (imm-trans-b 1), else
// K-major.  T: __half or __nv_bfloat16.
template <class T, int N, bool TB>
struct WgmmaRS;
template <>
struct WgmmaRS<__half, 64, false> {
  static __device__ __forceinline__ void run(float (&d)[32], const uint32_t (&a)[4], uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, 1, 1, 1, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
  }
};
template <>
struct WgmmaRS<__half, 64, true> {
  static __device__ __forceinline__ void run(float (&d)[32], const uint32_t (&a)[4], uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
  }
};
template <>
struct WgmmaRS<__nv_bfloat16, 64, false> {
  static __device__ __forceinline__ void run(float (&d)[32], const uint32_t (&a)[4], uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, 1, 1, 1, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
  }
};
template <>
struct WgmmaRS<__nv_bfloat16, 64, true> {
  static __device__ __forceinline__ void run(float (&d)[32], const uint32_t (&a)[4], uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
  }
};
template <>
struct WgmmaRS<__half, 128, false> {
  static __device__ __forceinline__ void run(float (&d)[64], const uint32_t (&a)[4], uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, 1, 1, 1, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
  }
};
template <>
struct WgmmaRS<__half, 128, true> {
  static __device__ __forceinline__ void run(float (&d)[64], const uint32_t (&a)[4], uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
  }
};
template <>
struct WgmmaRS<__nv_bfloat16, 128, false> {
  static __device__ __forceinline__ void run(float (&d)[64], const uint32_t (&a)[4], uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, 1, 1, 1, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
  }
};
template <>
struct WgmmaRS<__nv_bfloat16, 128, true> {
  static __device__ __forceinline__ void run(float (&d)[64], const uint32_t (&a)[4], uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
                 : "memory");
  }
};

}  // namespace dlc
