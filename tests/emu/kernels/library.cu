// library.cu: real library code through the emulator: CUB's BlockReduce,
// BlockScan and BlockRadixSort (bmsk, shuffles, barriers, bit tricks), half2
// atomics, and a by-value struct indexed at run time.
#include <cub/cub.cuh>
#include <cuda_fp16.h>
extern "C" __global__ void cub_kernels(const int *in, int *out, float *fout, __half2 *h2) {
  typedef cub::BlockReduce<int, 128> BR;
  typedef cub::BlockScan<int, 128> BS;
  typedef cub::BlockRadixSort<int, 128, 4> RS;
  __shared__ union { typename BR::TempStorage r; typename BS::TempStorage s; typename RS::TempStorage rs; } tmp;
  int t = threadIdx.x;
  int v = in[t];
  int sum = BR(tmp.r).Sum(v);
  __syncthreads();
  int excl;
  BS(tmp.s).ExclusiveSum(v, excl);
  __syncthreads();
  int keys[4];
  for (int i = 0; i < 4; i++) keys[i] = in[(t * 4 + i) % 128] * 7 % 1000;
  RS(tmp.rs).Sort(keys);
  if (t == 0) out[0] = sum;
  out[1 + t] = excl;
  for (int i = 0; i < 4; i++) out[200 + t * 4 + i] = keys[i];


  atomicAdd(&h2[t % 4], __floats2half2_rn(1.0f, 2.0f));
  fout[t] = __half2float(__hmul(__float2half(fout[t]), __float2half(2.0f)));
}
struct S { int arr[8]; float f; };
extern "C" __global__ void param_index(S s, int *out) {
  const S *p = &s;
  out[threadIdx.x] = p->arr[threadIdx.x % 8] + (int)p->f;
}

struct P16 { int a[16]; float s; };
__device__ __noinline__ int pick(const P16 *p, int i) { return p->a[i & 15]; }
// __grid_constant__: the parameter's own address (cvta.param) passed to a function
extern "C" __global__ void grid_constant_param(const __grid_constant__ P16 p, int *out) {
  out[threadIdx.x] = pick(&p, threadIdx.x) + (int)p.s;
}
