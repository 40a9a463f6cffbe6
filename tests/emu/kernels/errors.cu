// errors.cu: kernels with bugs the emulator must report (memcheck, poisoned
// cp.async data, deadlocks, traps), each in its smallest form.
#include <assert.h>
#include <stdint.h>

#define FULL 0xffffffffu

extern "C" __global__ void oob_read(const float *in, float *out, int shift) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = in[t + shift];
}

extern "C" __global__ void oob_write_2d(float *out, int width) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x == 3 + 8 && y == 1 + 4 * 2) out[x + y * width + 4096] = 1.0f; /* block (1,2,0) thread (3,1,0) */
  else out[(x + y * width) % 64] = 0.0f;
}

extern "C" __global__ void wild_pointer(float *out, unsigned long long addr) {
  out[threadIdx.x] = *(const float *)(uintptr_t)(addr + threadIdx.x * 4);
}

extern "C" __global__ void misaligned_word(const char *p, int *out) {
  out[threadIdx.x] = *(const int *)(p + 2 + threadIdx.x * 4);
}

extern "C" __global__ void misaligned_vector(const float *p, float *out) {
  float4 v = *(const float4 *)(p + 2 + threadIdx.x * 4); /* 8-byte aligned only */
  out[threadIdx.x] = v.x + v.w;
}

extern __shared__ float dyn[];
extern "C" __global__ void dynamic_shared_user(float *out) {
  int t = threadIdx.x;
  dyn[t] = (float)t; /* needs blockDim.x floats of dynamic shared memory */
  __syncthreads();
  out[t] = dyn[blockDim.x - 1 - t];
}

extern "C" __global__ void local_overflow(const int *idx, int *out) {
  int arr[16];
  for (int i = 0; i < 16; i++) arr[i] = idx[i];
  arr[idx[threadIdx.x]] = 7; /* idx[0] is far past the array */
  out[threadIdx.x] = arr[(threadIdx.x * 3) % 16];
}

__device__ __forceinline__ uint32_t sa(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// reads its own cp.async destination before cp.async.wait_all
extern "C" __global__ void read_before_wait(const int4 *src, int4 *out) {
  __shared__ int4 s[64];
  int t = threadIdx.x;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(&s[t])), "l"(&src[t]));
  asm volatile("cp.async.commit_group;");
  out[t] = s[t]; /* the bug: no wait */
  asm volatile("cp.async.wait_all;");
}

// waits for group 0 only, then reads group 1's data after the barrier
extern "C" __global__ void read_other_threads_pending(const int4 *src, int4 *out) {
  __shared__ int4 s[2][64];
  int t = threadIdx.x;
  for (int g = 0; g < 2; g++) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(&s[g][t])), "l"(&src[g * 64 + t]));
    asm volatile("cp.async.commit_group;");
  }
  asm volatile("cp.async.wait_group 1;");
  __syncthreads();
  out[t] = s[0][(t + 1) % 64];          /* fine: group 0 has landed */
  out[64 + t] = s[1][(t + 1) % 64];     /* the bug: group 1 is still in flight */
  asm volatile("cp.async.wait_all;");
}

// stores into a cp.async destination while the copy is pending
extern "C" __global__ void write_pending(const int4 *src, int4 *out) {
  __shared__ int4 s[64];
  int t = threadIdx.x;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(&s[t])), "l"(&src[t]));
  s[t].x = 5;
  asm volatile("cp.async.wait_all;");
  out[t] = s[t];
}

// warp 0 waits at barrier 0; warp 1 waits at barrier 1 for 64 threads that never come
extern "C" __global__ void barrier_deadlock(int *out) {
  int t = threadIdx.x;
  if (t < 32) __syncthreads();
  else asm volatile("bar.sync 1, 64;");
  out[t] = t;
}

// lanes of one warp at two different bar.sync instructions
extern "C" __global__ void divergent_bar_sync(int *out) {
  int t = threadIdx.x;
  if (t & 1) asm volatile("bar.sync 0;");
  else asm volatile("bar.sync 0;");
  out[t] = t;
}

// the same with barrier.sync (not .aligned) is allowed
extern "C" __global__ void divergent_barrier_sync(int *out) {
  int t = threadIdx.x;
  if (t & 1) asm volatile("barrier.sync 0;");
  else asm volatile("barrier.sync 0;");
  out[t] = t;
}

// half the warp waits in a shuffle for lanes that wait at a barrier
extern "C" __global__ void collective_deadlock(int *out) {
  int t = threadIdx.x, v = t;
  if (t < 16) v = __shfl_sync(FULL, v, 31);
  else __syncthreads();
  out[t] = v;
}

extern "C" __global__ void trap_kernel(int *out) {
  if (threadIdx.x == 5) asm volatile("trap;");
  out[threadIdx.x] = 1;
}

extern "C" __global__ void assert_kernel(const int *in, int *out) {
  int v = in[threadIdx.x];
  assert(v != 5);
  out[threadIdx.x] = v;
}

extern "C" __global__ void spin_forever(volatile int *flag) {
  while (*flag == 0) {
  }
}

// mma.sync after half the warp has exited
extern "C" __global__ void mma_partial_warp(float *out) {
  if (threadIdx.x >= 16) return;
  float d0, d1, d2, d3;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%4,%4,%4}, {%4,%4}, {%5,%5,%5,%5};"
               : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
               : "r"(0u), "f"(0.0f));
  out[threadIdx.x] = d0 + d1 + d2 + d3;
}

// reads shared memory that was never written
extern "C" __global__ void uninit_shared(float *out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  if (t < 32) s[t] = 1.0f;
  __syncthreads();
  out[t] = s[63 - t];
}

extern "C" __global__ void misaligned_atomic(int *p) { atomicAdd((int *)((char *)p + 2), 1); }

extern "C" __global__ void cp_async_oob_source(const int4 *src, int4 *out, int n) {
  __shared__ int4 s[64];
  int t = threadIdx.x;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(&s[t])), "l"(&src[t + n]));
  asm volatile("cp.async.wait_all;");
  out[t] = s[t];
}

// warps exchange data through shared memory without a barrier
extern "C" __global__ void missing_barrier(int *out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = t;
  out[t] = s[(t + 32) % 64]; /* the bug: no __syncthreads() */
}

// warp 0 and warp 1 write different values to one word, unordered
extern "C" __global__ void conflicting_writes(int *out) {
  __shared__ int v;
  v = threadIdx.x / 32;
  __syncthreads();
  out[threadIdx.x] = v;
}

// every thread writes the same value: benign
extern "C" __global__ void same_value_writes(int *out) {
  __shared__ int v;
  v = 7;
  __syncthreads();
  out[threadIdx.x] = v;
}

// volatile accesses synchronize; they are not data races
extern "C" __global__ void volatile_writes(int *out) {
  __shared__ volatile int v[1];
  if (threadIdx.x % 32 == 0) v[0] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = v[0];
}

// a cp.async stage is refilled while another warp may still read it
extern "C" __global__ void stage_reuse_without_barrier(const int4 *src, int *out) {
  __shared__ int4 s[64];
  int t = threadIdx.x;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(&s[t])), "l"(&src[t]));
  asm volatile("cp.async.wait_all;");
  __syncthreads();
  int v = s[(t + 32) % 64].x;
  /* the bug: no __syncthreads() before the stage is refilled */
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(&s[t])), "l"(&src[64 + t]));
  asm volatile("cp.async.wait_all;");
  out[t] = v;
}

// Warpgroup collectives (sm_90a) that cannot complete or are misused.
extern "C" __global__ void warpgroup_exited_warp(int *out) {
#if __CUDA_ARCH__ >= 900
  if (threadIdx.x / 32 == 2) return; /* warp 2 leaves its warpgroup */
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  out[threadIdx.x] = 1;
#endif
}

extern "C" __global__ void warpgroup_mismatch(int *out) {
#if __CUDA_ARCH__ >= 900
  if (threadIdx.x / 32 == 1) asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  else asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  out[threadIdx.x] = 1;
#endif
}

extern "C" __global__ void warpgroup_partial(int *out) {
#if __CUDA_ARCH__ >= 900
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  out[threadIdx.x] = 1;
#endif
}
