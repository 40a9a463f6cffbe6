// memory.cu: loads and stores in every state space, vectors, atomics,
// generic pointers, variables and function calls.
#include <stdint.h>

// Every width and signedness of ld/st.global, with the exact instruction.
extern "C" __global__ void ld_st_widths(const uint8_t *src, uint32_t *out, uint8_t *dst) {
  int t = threadIdx.x;
  const uint8_t *p = src + t * 16;
  uint32_t *o = out + t * 16;
  uint32_t v;
  uint64_t w;
  asm volatile("ld.global.u8 %0, [%1];" : "=r"(v) : "l"(p + 1)); o[0] = v;
  asm volatile("ld.global.s8 %0, [%1];" : "=r"(v) : "l"(p + 1)); o[1] = v;
  asm volatile("ld.global.u16 %0, [%1];" : "=r"(v) : "l"(p + 2)); o[2] = v;
  asm volatile("ld.global.s16 %0, [%1];" : "=r"(v) : "l"(p + 2)); o[3] = v;
  asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p + 4)); o[4] = v;
  asm volatile("ld.global.s32 %0, [%1+4];" : "=l"(w) : "l"(p)); o[5] = (uint32_t)(w >> 32); o[6] = (uint32_t)w;
  asm volatile("ld.global.nc.u64 %0, [%1+8];" : "=l"(w) : "l"(p)); o[7] = (uint32_t)w; o[8] = (uint32_t)(w >> 32);
  asm volatile("ld.global.s8 %0, [%1+1];" : "=l"(w) : "l"(p)); o[9] = (uint32_t)(w >> 32);
  unsigned short h;
  asm volatile("ld.global.s8 %0, [%1+1];" : "=h"(h) : "l"(p)); o[10] = h;
  uint32_t a, b, c, d;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p));
  o[11] = a ^ b ^ c ^ d;
  asm volatile("ld.global.v2.u16 {%0, %1}, [%2+12];" : "=h"(h), "=h"(*(unsigned short *)&v) : "l"(p));
  o[12] = h | (v << 16);
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  asm volatile("ld.global.L1::evict_last.L2::cache_hint.u32 %0, [%1+8], %2;" : "=r"(v) : "l"(p), "l"(pol));
  o[13] = v;
  uint8_t *q = dst + t * 16;
  asm volatile("st.global.u8 [%0], %1;" ::"l"(q), "r"(0x1234A5u));
  asm volatile("st.global.u16 [%0+2], %1;" ::"l"(q), "h"((unsigned short)0xBEEF));
  asm volatile("st.global.u32 [%0+4], %1;" ::"l"(q), "r"(0xCAFEF00Du));
  asm volatile("st.global.v2.u32 [%0+8], {%1, %2};" ::"l"(q), "r"(a), "r"(7u));
}

// Vector types through ordinary CUDA code: float4, double2, int2 copies and arithmetic.
extern "C" __global__ void vectors(const float4 *a, const double2 *b, const int2 *c, float4 *fa, double2 *fb, int2 *fc) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float4 x = __ldg(&a[t]);
  fa[t] = make_float4(x.w, x.z * 2, x.y + 1, x.x);
  double2 y = b[t];
  fb[t] = make_double2(y.y, y.x - 1);
  int2 z = c[t];
  fc[t] = make_int2(z.y, z.x * 3);
}

// Shared memory: static and dynamic, scalar and vector, exchanged across warps.
extern __shared__ float dyn[];
extern "C" __global__ void shared_exchange(const float *in, float *out, int n) {
  __shared__ float4 tile[64];
  __shared__ unsigned short halves[128];
  int t = threadIdx.x;
  tile[t] = make_float4(in[4 * t], in[4 * t + 1], in[4 * t + 2], in[4 * t + 3]);
  halves[t] = (unsigned short)t;
  halves[t + 64] = (unsigned short)(t * 3);
  dyn[t] = in[t] * 10;
  __syncthreads();
  float4 v = tile[63 - t];
  out[4 * t] = v.x;
  out[4 * t + 1] = v.y;
  out[4 * t + 2] = v.z;
  out[4 * t + 3] = v.w + halves[127 - t] + dyn[(t + 1) % n];
}

// A per-thread array indexed at run time lives in local memory.
extern "C" __global__ void local_array(const int *idx, int *out) {
  int t = threadIdx.x;
  int arr[24];
  for (int i = 0; i < 24; i++) arr[i] = t * 100 + i;
  arr[idx[t] % 24] += 1000;
  int s = 0;
  for (int i = 0; i < 24; i++) s += arr[(idx[t] + i) % 24] * (i + 1);
  out[t] = s;
}

struct Params {
  float scale;
  int offset;
  double bias;
  short tag;
  char c[3];
};

// A struct passed by value is a .param byte array.
extern "C" __global__ void struct_param(Params p, float *out) {
  int t = threadIdx.x;
  out[t] = p.scale * t + p.offset + (float)p.bias + p.tag + p.c[0] + p.c[2];
}

__constant__ float ctable[16];
__device__ int gcounter;
__device__ float gbuf[32];

// __constant__ read at a run-time index, __device__ variables read and written.
extern "C" __global__ void module_variables(float *out) {
  int t = threadIdx.x;
  out[t] = ctable[(t * 7) % 16] + gbuf[t];
  gbuf[t] = (float)t;
  atomicAdd(&gcounter, t);
}

__device__ __noinline__ float touch(float *p, int i, float v) {
  float old = p[i];
  p[i] = v;
  return old;
}

// One non-inlined function on shared, global and local pointers: generic addressing.
extern "C" __global__ void generic_pointers(float *g, int *flags) {
  __shared__ float s[64];
  float loc[8];
  int t = threadIdx.x;
  s[t] = 1.0f + t;
  for (int i = 0; i < 8; i++) loc[i] = -i;
  __syncthreads();
  float a = touch(s, (t + 1) % 64, 5.0f);
  float b = touch(g, t, a * 2);
  float c = touch(loc, t % 8, 3.0f);
  __syncthreads();
  g[64 + t] = a + b + c + s[t] + loc[t % 8];
  flags[t] = __isShared(s + t) | __isGlobal(g + t) << 1 | __isLocal(loc) << 2 | __isShared(g) << 3 |
             (int)(__cvta_generic_to_shared(s + t) - __cvta_generic_to_shared(s)) << 4;
}

// Atomics on global and shared memory; results are order-independent sums and extremes.
extern "C" __global__ void atomics(int *gi, unsigned *gu, float *gf, double *gd, unsigned long long *gl, int *old) {
  __shared__ int si[4];
  __shared__ float sf;
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < 4) si[threadIdx.x] = 0;
  if (threadIdx.x == 0) sf = 0;
  __syncthreads();
  atomicAdd(&gi[0], t);
  atomicSub(&gi[1], t);
  atomicMin(&gi[2], 1000 - t);
  atomicMax(&gi[3], t * 3);
  atomicAnd(&gi[4], ~(1 << (t % 31)));
  atomicOr(&gi[5], 1 << (t % 31));
  atomicXor(&gi[6], t);
  old[t] = atomicExch(&gi[7], t);
  atomicCAS(&gi[8], t - 1, t); /* succeeds in thread order only */
  atomicInc(&gu[0], 17u);
  atomicDec(&gu[1], 5u);
  atomicMin(&gu[2], 0xFFFFFF00u + t);
  atomicMax(&gu[3], 0xFFFFFF00u + t);
  atomicAdd(&gf[0], 0.5f);
  atomicAdd(&gd[0], 0.25);
  atomicAdd(&gl[0], 1ull << 33);
  atomicAdd(&si[t % 4], 1);
  atomicAdd(&sf, 1.5f);
  asm volatile("red.global.add.u32 [%0], %1;" ::"l"(&gi[13]), "r"(1));
  asm volatile("red.relaxed.gpu.global.max.s32 [%0], %1;" ::"l"(&gi[14]), "r"(t));
  asm volatile("red.shared.add.f32 [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(&sf)), "f"(0.5f));
  asm volatile("red.global.add.noftz.f16x2 [%0], %1;" ::"l"(&gi[15]), "r"(0x3C003C00));
  __syncthreads();
  if (threadIdx.x < 4) atomicAdd(&gi[9 + threadIdx.x], si[threadIdx.x]);
  if (threadIdx.x == 0) atomicAdd(&gf[1], sf);
}

struct Pair {
  float a;
  int b;
};

__device__ __noinline__ Pair make_pair(float x, int y) {
  Pair p;
  p.a = x * 2;
  p.b = y + 1;
  return p;
}

__device__ __noinline__ int depth2(int x) { return x * 3 + 1; }
__device__ __noinline__ int depth1(int x, int y) { return depth2(x) + depth2(y) * 2; }

// Calls: parameters, struct returns, nested calls, calls under divergence.
extern "C" __global__ void calls(int *out) {
  int t = threadIdx.x;
  Pair p = make_pair((float)t, t * 2);
  int r = depth1(t, p.b);
  if (t % 3 == 0) r += depth2(t + 100);
  else if (t % 3 == 1) r -= depth1(t, 1);
  out[t] = r + (int)p.a;
}
