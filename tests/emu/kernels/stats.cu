// stats.cu: access patterns with known costs for the statistics (bank
// conflicts, sectors, barriers), and special registers.
#include <stdint.h>

// one warp: 32 row writes, then one column read of a 32x32 float array
extern "C" __global__ void column_read(float *out, int c) {
  __shared__ float s[32][32];
  int lane = threadIdx.x;
#pragma unroll
  for (int i = 0; i < 32; i++) s[i][lane] = (float)(i * 32 + lane);
  __syncwarp();
  out[lane] = s[lane][c];
}

// the same array padded to 33 columns
extern "C" __global__ void column_read_padded(float *out, int c) {
  __shared__ float s[32][33];
  int lane = threadIdx.x;
#pragma unroll
  for (int i = 0; i < 32; i++) s[i][lane] = (float)(i * 32 + lane);
  __syncwarp();
  out[lane] = s[lane][c];
}

// 8- and 16-byte accesses: contiguous, strided, broadcast
extern "C" __global__ void wide_accesses(double *out, int stride) {
  __shared__ double d[128];
  __shared__ float4 q[64];
  __shared__ float b_[32];
  volatile float *b = b_; /* volatile: nvcc must keep the broadcast access */
  int lane = threadIdx.x;
  d[lane] = lane;                          /* st.shared.f64: 2 wavefronts, ideal 2 */
  q[lane] = make_float4(lane, 0, 0, 1);    /* st.shared.v4.f32: 4 wavefronts, ideal 4 */
  if (lane == 0) b[0] = 3;                 /* one active lane: 1 wavefront */
  __syncwarp();
  double x = d[(lane * stride) % 128];     /* stride 2: half-warps hit each bank twice */
  float y = b[0];                          /* broadcast */
  out[lane] = x + y + q[lane].w;
}

// global access patterns: coalesced, offset by one element, strided
extern "C" __global__ void global_patterns(const float *in, float *out, int offset, int stride) {
  int lane = threadIdx.x;
  float a = in[lane];                      /* 128 bytes: 4 sectors */
  float b = in[lane + offset];             /* 5 sectors when offset is 1 */
  float c = in[lane * stride];             /* 32 sectors when stride is 32 */
  out[lane] = a + b + c;
}

// ldmatrix on unpadded 128-byte rows: 8 rows per matrix hit the same banks
extern "C" __global__ void ldmatrix_conflicts(uint32_t *out, int row_bytes) {
  __shared__ __align__(128) uint16_t s[32 * 64];
  int lane = threadIdx.x;
  for (int i = lane; i < 32 * 64; i += 32) s[i] = (uint16_t)i;
  __syncwarp();
  uint32_t addr = (uint32_t)__cvta_generic_to_shared(s) + lane * row_bytes;
  uint32_t r0, r1, r2, r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
  out[lane] = r0 ^ r1 ^ r2 ^ r3;
}

// special registers, clocks, fences and sleep
extern "C" __global__ void special_registers(unsigned *out) {
  extern __shared__ int dyn[];
  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned *o = out + (b * blockDim.x * blockDim.y * blockDim.z + t) * 16;
  unsigned v;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(v)); o[0] = v;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(v)); o[1] = v;
  asm volatile("mov.u32 %0, %%nwarpid;" : "=r"(v)); o[2] = v;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(v)); o[3] = v;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(v)); o[4] = v;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(v)); o[5] = v;
  asm volatile("mov.u32 %0, %%total_smem_size;" : "=r"(v)); o[6] = v;
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(v)); o[7] = v;
  o[8] = threadIdx.y | threadIdx.z << 8 | blockIdx.y << 16 | blockIdx.z << 24;
  o[9] = blockDim.z | gridDim.x << 8 | gridDim.y << 16;
  unsigned c0 = clock();
  long long c1 = clock64();
  unsigned long long g0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  __threadfence();
  __threadfence_block();
  __threadfence_system();
  asm volatile("fence.acq_rel.gpu;");
  __nanosleep(100);
  asm volatile("prefetch.global.L2 [%0];" ::"l"(out));
  dyn[t] = (int)t;
  __syncthreads();
  unsigned c2 = clock();
  unsigned long long g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  o[10] = c2 - c0;
  o[11] = (unsigned)(clock64() - c1 > 0);
  o[12] = (unsigned)(g1 > g0);
  o[13] = (unsigned)dyn[(t + 1) % (blockDim.x * blockDim.y * blockDim.z)];
  unsigned m;
  asm volatile("mov.u32 %0, %%lanemask_ge;" : "=r"(m)); o[14] = m;
}
