// arith.cu: one kernel per instruction table (ops_*.def).  Thread i reads
// a[i], b[i], c[i] and writes the result of every instruction of the table to
// out[i * count + k], in table order; the host test computes the same with
// the references in ref.h.
#include <stdint.h>

#define TPL1(op) op " %0, %1;"
#define TPL2(op) op " %0, %1, %2;"
#define TPL3(op) op " %0, %1, %2, %3;"
#define ASM1(tpl, k, d, a, b, c) asm volatile(tpl : "=" k(d) : k(a))
#define ASM2(tpl, k, d, a, b, c) asm volatile(tpl : "=" k(d) : k(a), k(b))
#define ASM3(tpl, k, d, a, b, c) asm volatile(tpl : "=" k(d) : k(a), k(b), k(c))

/* ---- 32-bit integers */
#define A(name, tpl, n, ...) \
  __device__ __forceinline__ uint32_t i32_##name(uint32_t a, uint32_t b, uint32_t c) { uint32_t d; ASM##n(tpl, "r", d, a, b, c); return d; }
#define O(name, op, n, ...) A(name, TPL##n(op), n, __VA_ARGS__)
#define S(name, tpl, fb, arch, n, ...) \
  __device__ __forceinline__ uint32_t i32_##name(uint32_t a, uint32_t b, uint32_t c) { \
    uint32_t d; \
    if (__CUDA_ARCH__ >= arch) ASM##n(tpl, "r", d, a, b, c); else ASM##n(fb, "r", d, a, b, c); \
    return d; }
#include "ops_i32.def"
#undef A
#undef O
#undef S
/* ---- 64-bit integers */
#define A(name, tpl, n, ...) \
  __device__ __forceinline__ uint64_t i64_##name(uint64_t a, uint64_t b, uint64_t c) { uint64_t d; ASM##n(tpl, "l", d, a, b, c); return d; }
#define O(name, op, n, ...) A(name, TPL##n(op), n, __VA_ARGS__)
#include "ops_i64.def"
#undef A
#undef O
/* ---- 16-bit integers */
#define A(name, tpl, n, ...) \
  __device__ __forceinline__ unsigned short i16_##name(unsigned short a, unsigned short b, unsigned short c) { unsigned short d; ASM##n(tpl, "h", d, a, b, c); return d; }
#define O(name, op, n, ...) A(name, TPL##n(op), n, __VA_ARGS__)
#include "ops_i16.def"
#undef A
#undef O
/* ---- f32 */
#define A(name, tpl, n, ...) \
  __device__ __forceinline__ float f32_##name(float a, float b, float c) { float d; ASM##n(tpl, "f", d, a, b, c); return d; }
#define O(name, op, n, ...) A(name, TPL##n(op), n, __VA_ARGS__)
#define S(name, tpl, fb, arch, n, ...) \
  __device__ __forceinline__ float f32_##name(float a, float b, float c) { \
    float d; \
    if (__CUDA_ARCH__ >= arch) ASM##n(tpl, "f", d, a, b, c); else ASM##n(fb, "f", d, a, b, c); \
    return d; }
#include "ops_f32.def"
#include "ops_f32_approx.def"
#undef A
#undef O
#undef S
/* ---- f64 */
#define A(name, tpl, n, ...) \
  __device__ __forceinline__ double f64_##name(double a, double b, double c) { double d; ASM##n(tpl, "d", d, a, b, c); return d; }
#define O(name, op, n, ...) A(name, TPL##n(op), n, __VA_ARGS__)
#include "ops_f64.def"
#undef A
#undef O
/* ---- conversions and halves on .b32 */
#define A(name, tpl, n, ...) \
  __device__ __forceinline__ uint32_t cvt_##name(uint32_t a, uint32_t b, uint32_t c) { uint32_t d; ASM##n(tpl, "r", d, a, b, c); return d; }
#include "ops_cvt.def"
#undef A

#define TABLE_KERNEL(kname, T, prefix)                                                             \
  extern "C" __global__ void kname(const T *A_, const T *B_, const T *C_, T *out, int n, int count) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                                 \
    if (i >= n) return;                                                                            \
    T a = A_[i], b = B_[i], c = C_[i];                                                             \
    T *o = out + (size_t)i * count;                                                                \
    int k = 0;

TABLE_KERNEL(ops_i32, uint32_t, i32)
#define A(name, tpl, n, ...) o[k++] = i32_##name(a, b, c);
#define O A
#define S(name, ...) o[k++] = i32_##name(a, b, c);
#include "ops_i32.def"
#undef A
#undef O
#undef S
}

TABLE_KERNEL(ops_i64, uint64_t, i64)
#define A(name, tpl, n, ...) o[k++] = i64_##name(a, b, c);
#define O A
#include "ops_i64.def"
#undef A
#undef O
}

TABLE_KERNEL(ops_i16, unsigned short, i16)
#define A(name, tpl, n, ...) o[k++] = i16_##name(a, b, c);
#define O A
#include "ops_i16.def"
#undef A
#undef O
}

TABLE_KERNEL(ops_f32, float, f32)
#define A(name, tpl, n, ...) o[k++] = f32_##name(a, b, c);
#define O A
#define S(name, ...) o[k++] = f32_##name(a, b, c);
#include "ops_f32.def"
#undef A
#undef O
#undef S
}

TABLE_KERNEL(ops_f32_approx, float, f32)
#define O(name, tpl, n, ...) o[k++] = f32_##name(a, b, c);
#include "ops_f32_approx.def"
#undef O
}

TABLE_KERNEL(ops_f64, double, f64)
#define A(name, tpl, n, ...) o[k++] = f64_##name(a, b, c);
#define O A
#include "ops_f64.def"
#undef A
#undef O
}

TABLE_KERNEL(ops_cvt, uint32_t, cvt)
#define A(name, tpl, n, ...) o[k++] = cvt_##name(a, b, c);
#include "ops_cvt.def"
#undef A
}
