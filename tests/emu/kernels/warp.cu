// warp.cu: shuffles, votes, match, redux, divergence and reconvergence,
// barriers with exited threads, barrier reductions, named barriers.
#include <stdint.h>

#define FULL 0xffffffffu

extern "C" __global__ void shuffles(const int *in, int *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x % 32;
  int v = in[t];
  int *o = out + t * 16;
  o[0] = __shfl_sync(FULL, v, (lane * 7 + 3) % 32);
  o[1] = __shfl_up_sync(FULL, v, 3);
  o[2] = __shfl_down_sync(FULL, v, 5);
  o[3] = __shfl_xor_sync(FULL, v, 6);
  o[4] = __shfl_sync(FULL, v, 2, 8);
  o[5] = __shfl_up_sync(FULL, v, 1, 8);
  o[6] = __shfl_down_sync(FULL, v, 2, 16);
  o[7] = __shfl_xor_sync(FULL, v, 1, 4);
  o[8] = __shfl_sync(FULL, v, in[t] & 31); /* run-time source lane */
  double d = __shfl_down_sync(FULL, (double)v * 0.5, 1);
  o[9] = (int)(d * 2);
  int r, p;
  asm volatile("{ .reg .pred q; shfl.sync.up.b32 %0|q, %2, 4, 0, -1; selp.b32 %1, 1, 0, q; }" : "=r"(r), "=r"(p) : "r"(v));
  o[10] = r;
  o[11] = p;
  asm volatile("{ .reg .pred q; shfl.sync.idx.b32 %0|q, %2, 3, 0x1c1f, -1; selp.b32 %1, 1, 0, q; }" : "=r"(r), "=r"(p) : "r"(v));
  o[12] = r; /* width 4 via the segment mask in c */
  o[13] = p;
}

extern "C" __global__ void votes(const int *in, unsigned *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[t];
  unsigned *o = out + t * 16;
  o[0] = __ballot_sync(FULL, v & 1);
  o[1] = __any_sync(FULL, v == 7);
  o[2] = __all_sync(FULL, v >= 0);
  o[3] = __match_any_sync(FULL, v % 3);
  int pred;
  o[4] = __match_all_sync(FULL, v / 1000, &pred);
  o[5] = pred;
  o[6] = __reduce_add_sync(FULL, v);
  o[7] = __reduce_min_sync(FULL, v);
  o[8] = __reduce_max_sync(FULL, (unsigned)v);
  o[9] = __reduce_and_sync(FULL, (unsigned)v | 0x100);
  o[10] = __reduce_or_sync(FULL, (unsigned)v);
  o[11] = __reduce_xor_sync(FULL, (unsigned)v);
  unsigned u;
  asm volatile("{ .reg .pred p, q; setp.lt.s32 p, %1, 1000000; vote.sync.uni.pred q, p, -1; selp.u32 %0, 1, 0, q; }" : "=r"(u) : "r"(v));
  o[12] = u;
  if (v & 2) o[13] = __activemask();
  else o[13] = 0xABCD;
  unsigned long long wide = ((unsigned long long)(v % 5) << 40) | 7;
  o[14] = __match_any_sync(FULL, wide);
  o[15] = __ballot_sync(FULL, !(v & 4));
}

// Per-lane loop trip counts, nested branches, breaks; results after reconvergence.
extern "C" __global__ void divergence(const int *in, int *out) {
  int t = threadIdx.x;
  int lane = t % 32;
  int v = in[t];
  int acc = 0;
  for (int i = 0; i < (v & 15); i++) {
    if (i & 1) acc += i * 3;
    else acc -= i;
    if (acc > 40 && (lane & 4)) break;
  }
  if (lane < 10) {
    acc *= 2;
    if (lane < 5) acc += 100;
    else acc -= 100;
  } else if (lane < 20) {
    for (int k = 0; k < lane; k++) acc ^= k;
  } else {
    acc += __popc(v);
  }
  /* every lane is back: a full-mask ballot sees all of them */
  unsigned all = __ballot_sync(FULL, 1);
  int s = acc;
  for (int off = 16; off; off >>= 1) s += __shfl_xor_sync(FULL, s, off);
  out[t * 4] = acc;
  out[t * 4 + 1] = (int)all;
  out[t * 4 + 2] = s;
  /* shuffles among the even lanes only, inside a branch */
  int e = -1;
  if ((lane & 1) == 0) e = __shfl_sync(0x55555555u, v, (lane + 2) % 32);
  out[t * 4 + 3] = e;
}

// Threads past n return before the barriers; the rest must not deadlock.
extern "C" __global__ void barrier_after_exit(const int *in, int *out, int n) {
  __shared__ int s[256];
  int t = threadIdx.x;
  if (t >= n) return;
  s[t] = in[t] * 2;
  __syncthreads();
  int x = s[(t + 1) % n];
  __syncthreads();
  s[t] = x + 1;
  __syncthreads();
  out[t] = s[(n - 1) - t];
}

extern "C" __global__ void barrier_reductions(const int *in, int *out) {
  int t = threadIdx.x;
  int v = in[t];
  int c = __syncthreads_count(v > 10);
  int a = __syncthreads_and(v >= 0);
  int o = __syncthreads_or(v == 42);
  out[t] = c * 4 + (a ? 2 : 0) + (o ? 1 : 0);
}

// Warps 0-1 produce and arrive at barrier 1; warps 2-3 wait there and consume.
extern "C" __global__ void named_barriers(int *out) {
  __shared__ int buf[64];
  int t = threadIdx.x;
  if (t < 64) {
    buf[t] = t * t;
    asm volatile("bar.arrive 1, 128;");
  } else {
    asm volatile("bar.sync 1, 128;");
    out[t - 64] = buf[127 - t] + 1;
  }
  __syncthreads();
  if (t < 64) out[64 + t] = buf[t];
}

// 48 threads: the second warp has 16 lanes; full-mask collectives still complete.
extern "C" __global__ void partial_warp(const int *in, int *out) {
  int t = threadIdx.x;
  int v = in[t];
  int s = v;
  for (int off = 16; off; off >>= 1) s += __shfl_down_sync(FULL, s, off);
  unsigned b = __ballot_sync(FULL, v > 0);
  __syncthreads();
  out[t * 2] = s;
  out[t * 2 + 1] = (int)b;
}

// __syncwarp between divergent lanes of a warp, exchanging through shared memory.
extern "C" __global__ void syncwarp_exchange(int *out) {
  __shared__ int s[32];
  int lane = threadIdx.x;
  if (lane < 16) s[lane] = lane * 10;
  else s[lane] = -lane;
  __syncwarp();
  out[lane] = s[31 - lane];
}

// Warpgroup collectives (sm_90a): the warps of a warpgroup reach wgmma.fence after
// different amounts of work; lane 0 of each warp takes a ticket before and after
// each collective, so the tickets show whether any warp went on early.
// out[warp * 8 + 0..5]: tickets around fence, commit_group + wait_group, setmaxnreg.
extern "C" __global__ void warpgroup_rendezvous(int *out, int *counter) {
#if __CUDA_ARCH__ >= 900
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  volatile int sink = 0;
  for (int i = 0; i < (warp % 4) * 700; i++) sink = sink + i; /* warp 3 of a group is thousands of instructions late */
  int *o = out + warp * 8;
  if (lane == 0) o[0] = atomicAdd(counter, 1);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  if (lane == 0) o[1] = atomicAdd(counter, 1);
  for (int i = 0; i < (3 - warp % 4) * 700; i++) sink = sink + i; /* now warp 0 is late */
  if (lane == 0) o[2] = atomicAdd(counter, 1);
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  if (lane == 0) o[3] = atomicAdd(counter, 1);
  for (int i = 0; i < (warp % 4) * 300; i++) sink = sink + i;
  if (lane == 0) o[4] = atomicAdd(counter, 1);
  if (warp / 4 == 0) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  else asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
  if (lane == 0) o[5] = atomicAdd(counter, 1);
#endif
}

// elect.sync (sm_90): out[t*4 + 0..3] = leader and is-leader for the full warp, then for
// the odd lanes inside a branch (member mask 0xaaaaaaaa), and the sink form.
extern "C" __global__ void elect_leaders(int *out) {
#if __CUDA_ARCH__ >= 900
  int t = threadIdx.x;
  int leader, is;
  asm volatile("{ .reg .pred p; elect.sync %0|p, 0xffffffff; selp.b32 %1, 1, 0, p; }" : "=r"(leader), "=r"(is));
  out[t * 4 + 0] = leader * 2 + is;
  out[t * 4 + 1] = -1;
  if (t & 1) {
    asm volatile("{ .reg .pred p; elect.sync %0|p, 0xaaaaaaaa; selp.b32 %1, 1, 0, p; }" : "=r"(leader), "=r"(is));
    out[t * 4 + 1] = leader * 2 + is;
  }
  /* the upper half elects under a guard predicate (nvcc would hoist a branch) */
  asm volatile("{ .reg .pred p, q; setp.ge.u32 q, %1, 16; setp.eq.u32 p, 0, 1;\n"
               "  @q elect.sync _|p, %2; selp.b32 %0, 1, 0, p; }"
               : "=r"(is) : "r"(t), "r"(0xffff0000u));
  out[t * 4 + 2] = t >= 16 ? is : -1;
#endif
}
