// tensor.cu: mma.sync fragment layouts, ldmatrix / stmatrix layouts and
// cp.async semantics.  The fragment positions used to load the operands are
// the PTX ISA tables (section "Matrix Fragments for mma.m16n8k16 / m16n8k8"),
// written out here; the host checks every element of D against the same
// tables, written out again in t_tensor.c.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

__device__ int grp(int lane) { return lane >> 2; }  /* groupID */
__device__ int tig(int lane) { return lane & 3; }   /* threadID_in_group */

/* m16n8k16, .f16/.bf16: A a0..a7, B b0..b3 */
__device__ int a16_row(int l, int i) { return (i < 2 || (i >= 4 && i < 6)) ? grp(l) : grp(l) + 8; }
__device__ int a16_col(int l, int i) { return tig(l) * 2 + (i & 1) + (i >= 4 ? 8 : 0); }
__device__ int b16_row(int l, int i) { return tig(l) * 2 + (i & 1) + (i >= 2 ? 8 : 0); }
/* m16n8k8, .f16/.bf16: A a0..a3, B b0..b1 */
__device__ int a8_row(int l, int i) { return i < 2 ? grp(l) : grp(l) + 8; }
__device__ int a8_col(int l, int i) { return tig(l) * 2 + (i & 1); }
__device__ int b8_row(int l, int i) { return tig(l) * 2 + i; }
/* m16n8k8, .tf32: A a0..a3, B b0..b1 */
__device__ int t8_arow(int l, int i) { return (i == 0 || i == 2) ? grp(l) : grp(l) + 8; }
__device__ int t8_acol(int l, int i) { return i < 2 ? tig(l) : tig(l) + 4; }
__device__ int t8_brow(int l, int i) { return i == 0 ? tig(l) : tig(l) + 4; }
/* C/D (all shapes): c0..c3; col of B and D = groupID / as below */
__device__ int c_row(int l, int i) { return i < 2 ? grp(l) : grp(l) + 8; }
__device__ int c_col(int l, int i) { return tig(l) * 2 + (i & 1); }

__device__ uint32_t pack(uint16_t lo, uint16_t hi) { return (uint32_t)lo | (uint32_t)hi << 16; }

// A: 16x16 (or 16x8) row-major 16-bit values, B: 16x8 (or 8x8) as [k][n], C: 16x8 f32; D: raw per lane.
extern "C" __global__ void mma_k16_f32(const uint16_t *A, const uint16_t *B, const float *C, float *D, int bf16) {
  int l = threadIdx.x;
  uint32_t a[4], b[2];
  float c[4], d[4];
  for (int r = 0; r < 4; r++)
    a[r] = pack(A[a16_row(l, 2 * r) * 16 + a16_col(l, 2 * r)], A[a16_row(l, 2 * r + 1) * 16 + a16_col(l, 2 * r + 1)]);
  for (int r = 0; r < 2; r++)
    b[r] = pack(B[b16_row(l, 2 * r) * 8 + grp(l)], B[b16_row(l, 2 * r + 1) * 8 + grp(l)]);
  for (int i = 0; i < 4; i++) c[i] = C[c_row(l, i) * 8 + c_col(l, i)];
  if (bf16)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  for (int i = 0; i < 4; i++) D[l * 4 + i] = d[i];
}

// f16 accumulators: C and D are two f16x2 registers per lane.
extern "C" __global__ void mma_k16_f16(const uint16_t *A, const uint16_t *B, const uint16_t *C, uint32_t *D) {
  int l = threadIdx.x;
  uint32_t a[4], b[2], c[2], d[2];
  for (int r = 0; r < 4; r++)
    a[r] = pack(A[a16_row(l, 2 * r) * 16 + a16_col(l, 2 * r)], A[a16_row(l, 2 * r + 1) * 16 + a16_col(l, 2 * r + 1)]);
  for (int r = 0; r < 2; r++)
    b[r] = pack(B[b16_row(l, 2 * r) * 8 + grp(l)], B[b16_row(l, 2 * r + 1) * 8 + grp(l)]);
  for (int r = 0; r < 2; r++)
    c[r] = pack(C[c_row(l, 2 * r) * 8 + c_col(l, 2 * r)], C[c_row(l, 2 * r + 1) * 8 + c_col(l, 2 * r + 1)]);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
               : "=r"(d[0]), "=r"(d[1])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
  D[l * 2] = d[0];
  D[l * 2 + 1] = d[1];
}

extern "C" __global__ void mma_k8_f32(const uint16_t *A, const uint16_t *B, const float *C, float *D, int bf16) {
  int l = threadIdx.x;
  uint32_t a[2], b;
  float c[4], d[4];
  for (int r = 0; r < 2; r++)
    a[r] = pack(A[a8_row(l, 2 * r) * 8 + a8_col(l, 2 * r)], A[a8_row(l, 2 * r + 1) * 8 + a8_col(l, 2 * r + 1)]);
  b = pack(B[b8_row(l, 0) * 8 + grp(l)], B[b8_row(l, 1) * 8 + grp(l)]);
  for (int i = 0; i < 4; i++) c[i] = C[c_row(l, i) * 8 + c_col(l, i)];
  if (bf16)
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  else
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  for (int i = 0; i < 4; i++) D[l * 4 + i] = d[i];
}

extern "C" __global__ void mma_k8_tf32(const float *A, const float *B, const float *C, float *D) {
  int l = threadIdx.x;
  uint32_t a[4], b[2];
  float c[4], d[4];
  for (int i = 0; i < 4; i++) a[i] = __float_as_uint(A[t8_arow(l, i) * 8 + t8_acol(l, i)]);
  for (int i = 0; i < 2; i++) b[i] = __float_as_uint(B[t8_brow(l, i) * 8 + grp(l)]);
  for (int i = 0; i < 4; i++) c[i] = C[c_row(l, i) * 8 + c_col(l, i)];
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  for (int i = 0; i < 4; i++) D[l * 4 + i] = d[i];
}

/* storage row of row r of matrix m: rows are permuted to check that each lane's address is used */
__device__ int srow(int m, int r) { return 8 * m + (r * 5) % 8; }

// ldmatrix .x1/.x2/.x4 with and without .trans; lanes that supply no row get an address outside shared memory.
extern "C" __global__ void ldmatrix_all(uint32_t *out) {
  __shared__ __align__(16) uint16_t s[32 * 8];
  int l = threadIdx.x;
  for (int i = l; i < 256; i += 32) s[i] = (uint16_t)i;
  __syncwarp();
  uint32_t base = (uint32_t)__cvta_generic_to_shared(s);
  uint32_t mine = base + srow(l / 8, l % 8) * 16, bogus = 0xFFFFFF00u;
  uint32_t r[4];
  uint32_t *o = out + l * 14;
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(l < 8 ? mine : bogus));
  o[0] = r[0];
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(l < 16 ? mine : bogus));
  o[1] = r[0];
  o[2] = r[1];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(mine));
  for (int i = 0; i < 4; i++) o[3 + i] = r[i];
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(l < 8 ? mine : bogus));
  o[7] = r[0];
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(l < 16 ? mine : bogus));
  o[8] = r[0];
  o[9] = r[1];
  uint64_t generic = (uint64_t)(s + srow(l / 8, l % 8) * 8);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.b16 {%0, %1, %2, %3}, [%4];" /* generic address */
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "l"(generic));
  for (int i = 0; i < 4; i++) o[10 + i] = r[i];
}

// stmatrix (sm_90): lane l's register m holds the tags (m, l, 0) and (m, l, 1); stored non-transposed
// to rows 0..31 and transposed to rows 32..63 of a 64x8 tile that is copied out.
extern "C" __global__ void stmatrix_all(uint16_t *out) {
#if __CUDA_ARCH__ >= 900
  __shared__ __align__(16) uint16_t s[64 * 8];
  int l = threadIdx.x;
  uint32_t r[4];
  for (int m = 0; m < 4; m++) r[m] = pack((uint16_t)(m * 256 + l * 2), (uint16_t)(m * 256 + l * 2 + 1));
  uint32_t base = (uint32_t)__cvta_generic_to_shared(s);
  uint32_t row = base + srow(l / 8, l % 8) * 16;
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(row), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]));
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(row + 32 * 16), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]));
  asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(l < 8 ? row : 0xFFFFFF00u), "r"(r[3]));
  __syncwarp();
  for (int i = l; i < 512; i += 32) out[i] = s[i];
#endif
}

__device__ __forceinline__ uint32_t sa(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// cp.async of 4, 8, 16 bytes (.ca/.cg), with src-size zero fill and with ignore-src.
extern "C" __global__ void cp_async_sizes(const uint8_t *src, uint8_t *out, int srcsize) {
  __shared__ __align__(16) uint8_t s[4096];
  int t = threadIdx.x;
  for (int i = t; i < 4096; i += 64) s[i] = 0xEE;
  __syncthreads();
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(s + t * 16)), "l"(src + t * 16));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(sa(s + 1024 + t * 8)), "l"(src + 1024 + t * 8));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(sa(s + 1536 + t * 4)), "l"(src + 1536 + t * 4));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(sa(s + 2048 + t * 16)), "l"(src + 2048 + t * 16), "r"(srcsize));
  asm volatile("{ .reg .pred p; setp.ne.u32 p, %2, 0; cp.async.ca.shared.global [%0], [%1], 16, p; }"
               ::"r"(sa(s + 3072 + t * 16)), "l"(src + 3072 + t * 16), "r"(t & 1));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.wait_all;");
  __syncthreads();
  for (int i = t; i < 4096; i += 64) out[i] = s[i];
}

// Three commit groups; each cp.async.wait_group N lands all but the N newest.
extern "C" __global__ void cp_async_groups(const int4 *src, int4 *out) {
  __shared__ int4 s[3][64];
  int t = threadIdx.x;
  for (int g = 0; g < 3; g++) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(&s[g][t])), "l"(&src[g * 64 + t]));
    asm volatile("cp.async.commit_group;");
  }
  asm volatile("cp.async.wait_group 2;");
  __syncthreads();
  out[t] = s[0][(t + 1) % 64];
  asm volatile("cp.async.wait_group 1;");
  __syncthreads();
  out[64 + t] = s[1][(t + 2) % 64];
  asm volatile("cp.async.wait_group 0;");
  __syncthreads();
  out[128 + t] = s[2][(t + 3) % 64];
}
