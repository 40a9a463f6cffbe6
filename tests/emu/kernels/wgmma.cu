// wgmma.cu (sm_90a only): wgmma.mma_async in the SS and RS forms.  Each
// kernel copies a shared-memory image (laid out by the host from the ISA's
// canonical descriptor layouts) into dynamic shared memory with ordinary
// stores, fences the generic proxy, runs one wgmma with the descriptors the
// host encoded (start address relative to the image) and stores D in
// fragment order.  The register lists of each shape are spelled out below.
// mode 1 reads an accumulator between commit_group and wait_group; mode 2
// leaves out fence.proxy.async: both must be reported.  The first kernel
// also copies the image with 16-byte cp.async (modes 3 and 4: landed by
// cp.async.wait_all, a generic-proxy write), without (3, reported) and with
// (4) fence.proxy.async after the landing.
#include <stdint.h>

__device__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

extern "C" __global__ void wg_ss_f16_f32_none_kk(const uint8_t *img, uint32_t img_bytes, uint64_t adesc, uint64_t bdesc,
                                  const uint32_t *afrag, const uint32_t *dinit, int scale_d, uint32_t *dout, int mode) {
  extern __shared__ __align__(1024) uint8_t smem[];
  int tid = threadIdx.x;
  if (mode >= 3) {
    for (uint32_t i = 16 * tid; i < img_bytes; i += 16 * blockDim.x)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(smem + i)), "l"(img + i) : "memory");
    asm volatile("cp.async.wait_all;" ::: "memory");
  } else {
    for (uint32_t i = tid; i < img_bytes; i += blockDim.x) smem[i] = img[i];
  }
  if (mode != 2 && mode != 3) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint64_t start = (smem_addr(smem) >> 4) & 0x3FFF;
  adesc += start;
  bdesc += start;
  uint32_t d[4], a[4];
  for (int i = 0; i < 4; i++) d[i] = dinit[tid * 4 + i];
  for (int i = 0; i < 4; i++) a[i] = afrag[tid * 4 + i];
  (void)a;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %6, 0;\n wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
               : "l"(adesc), "l"(bdesc), "r"(scale_d)
               : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  if (mode == 1) {
    uint32_t early;
    asm volatile("mov.b32 %0, %1;" : "=r"(early) : "r"(d[0]));
    dout[tid] = early;
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < 4; i++) dout[tid * 4 + i] = d[i];
}

extern "C" __global__ void wg_ss_bf16_f32_128_kmn(const uint8_t *img, uint32_t img_bytes, uint64_t adesc, uint64_t bdesc,
                                  const uint32_t *afrag, const uint32_t *dinit, int scale_d, uint32_t *dout, int mode) {
  extern __shared__ __align__(1024) uint8_t smem[];
  int tid = threadIdx.x;
  for (uint32_t i = tid; i < img_bytes; i += blockDim.x) smem[i] = img[i];
  if (mode != 2) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint64_t start = (smem_addr(smem) >> 4) & 0x3FFF;
  adesc += start;
  bdesc += start;
  uint32_t d[8], a[4];
  for (int i = 0; i < 8; i++) d[i] = dinit[tid * 8 + i];
  for (int i = 0; i < 4; i++) a[i] = afrag[tid * 4 + i];
  (void)a;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %10, 0;\n wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, -1, 1, 0, 1;\n}"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
               : "l"(adesc), "l"(bdesc), "r"(scale_d)
               : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  if (mode == 1) {
    uint32_t early;
    asm volatile("mov.b32 %0, %1;" : "=r"(early) : "r"(d[0]));
    dout[tid] = early;
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < 8; i++) dout[tid * 8 + i] = d[i];
}

extern "C" __global__ void wg_ss_f16_f16_64_mnk(const uint8_t *img, uint32_t img_bytes, uint64_t adesc, uint64_t bdesc,
                                  const uint32_t *afrag, const uint32_t *dinit, int scale_d, uint32_t *dout, int mode) {
  extern __shared__ __align__(1024) uint8_t smem[];
  int tid = threadIdx.x;
  for (uint32_t i = tid; i < img_bytes; i += blockDim.x) smem[i] = img[i];
  if (mode != 2) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint64_t start = (smem_addr(smem) >> 4) & 0x3FFF;
  adesc += start;
  bdesc += start;
  uint32_t d[8], a[4];
  for (int i = 0; i < 8; i++) d[i] = dinit[tid * 8 + i];
  for (int i = 0; i < 4; i++) a[i] = afrag[tid * 4 + i];
  (void)a;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %10, 0;\n wgmma.mma_async.sync.aligned.m64n32k16.f16.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, -1, 1, 0;\n}"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
               : "l"(adesc), "l"(bdesc), "r"(scale_d)
               : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  if (mode == 1) {
    uint32_t early;
    asm volatile("mov.b32 %0, %1;" : "=r"(early) : "r"(d[0]));
    dout[tid] = early;
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < 8; i++) dout[tid * 8 + i] = d[i];
}

extern "C" __global__ void wg_rs_f16_f32_32_k(const uint8_t *img, uint32_t img_bytes, uint64_t adesc, uint64_t bdesc,
                                  const uint32_t *afrag, const uint32_t *dinit, int scale_d, uint32_t *dout, int mode) {
  extern __shared__ __align__(1024) uint8_t smem[];
  int tid = threadIdx.x;
  for (uint32_t i = tid; i < img_bytes; i += blockDim.x) smem[i] = img[i];
  if (mode != 2) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint64_t start = (smem_addr(smem) >> 4) & 0x3FFF;
  adesc += start;
  bdesc += start;
  uint32_t d[4], a[4];
  for (int i = 0; i < 4; i++) d[i] = dinit[tid * 4 + i];
  for (int i = 0; i < 4; i++) a[i] = afrag[tid * 4 + i];
  (void)a;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %9, 0;\n wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1, 0;\n}"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(bdesc), "r"(scale_d)
               : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  if (mode == 1) {
    uint32_t early;
    asm volatile("mov.b32 %0, %1;" : "=r"(early) : "r"(d[0]));
    dout[tid] = early;
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < 4; i++) dout[tid * 4 + i] = d[i];
}

extern "C" __global__ void wg_ss_bf16_f32_n256(const uint8_t *img, uint32_t img_bytes, uint64_t adesc, uint64_t bdesc,
                                  const uint32_t *afrag, const uint32_t *dinit, int scale_d, uint32_t *dout, int mode) {
  extern __shared__ __align__(1024) uint8_t smem[];
  int tid = threadIdx.x;
  for (uint32_t i = tid; i < img_bytes; i += blockDim.x) smem[i] = img[i];
  if (mode != 2) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint64_t start = (smem_addr(smem) >> 4) & 0x3FFF;
  adesc += start;
  bdesc += start;
  uint32_t d[128], a[4];
  for (int i = 0; i < 128; i++) d[i] = dinit[tid * 128 + i];
  for (int i = 0; i < 4; i++) a[i] = afrag[tid * 4 + i];
  (void)a;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 1;\n}"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]), "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]), "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]), "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]), "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), "+r"(d[96]), "+r"(d[97]), "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]), "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]), "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]), "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])
               : "l"(adesc), "l"(bdesc), "r"(scale_d)
               : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  if (mode == 1) {
    uint32_t early;
    asm volatile("mov.b32 %0, %1;" : "=r"(early) : "r"(d[0]));
    dout[tid] = early;
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < 128; i++) dout[tid * 128 + i] = d[i];
}

extern "C" __global__ void wg_ss_f16_f32_32_mnmn(const uint8_t *img, uint32_t img_bytes, uint64_t adesc, uint64_t bdesc,
                                  const uint32_t *afrag, const uint32_t *dinit, int scale_d, uint32_t *dout, int mode) {
  extern __shared__ __align__(1024) uint8_t smem[];
  int tid = threadIdx.x;
  for (uint32_t i = tid; i < img_bytes; i += blockDim.x) smem[i] = img[i];
  if (mode != 2) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint64_t start = (smem_addr(smem) >> 4) & 0x3FFF;
  adesc += start;
  bdesc += start;
  uint32_t d[8], a[4];
  for (int i = 0; i < 8; i++) d[i] = dinit[tid * 8 + i];
  for (int i = 0; i < 4; i++) a[i] = afrag[tid * 4 + i];
  (void)a;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %10, 0;\n wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, -1, -1, 1, 1;\n}"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
               : "l"(adesc), "l"(bdesc), "r"(scale_d)
               : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  if (mode == 1) {
    uint32_t early;
    asm volatile("mov.b32 %0, %1;" : "=r"(early) : "r"(d[0]));
    dout[tid] = early;
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < 8; i++) dout[tid * 8 + i] = d[i];
}

extern "C" __global__ void wg_rs_f16_f16_64_mn(const uint8_t *img, uint32_t img_bytes, uint64_t adesc, uint64_t bdesc,
                                  const uint32_t *afrag, const uint32_t *dinit, int scale_d, uint32_t *dout, int mode) {
  extern __shared__ __align__(1024) uint8_t smem[];
  int tid = threadIdx.x;
  for (uint32_t i = tid; i < img_bytes; i += blockDim.x) smem[i] = img[i];
  if (mode != 2) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint64_t start = (smem_addr(smem) >> 4) & 0x3FFF;
  adesc += start;
  bdesc += start;
  uint32_t d[6], a[4];
  for (int i = 0; i < 6; i++) d[i] = dinit[tid * 6 + i];
  for (int i = 0; i < 4; i++) a[i] = afrag[tid * 4 + i];
  (void)a;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %11, 0;\n wgmma.mma_async.sync.aligned.m64n24k16.f16.f16.f16 {%0, %1, %2, %3, %4, %5}, {%6, %7, %8, %9}, %10, p, 1, 1, 1;\n}"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(bdesc), "r"(scale_d)
               : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  if (mode == 1) {
    uint32_t early;
    asm volatile("mov.b32 %0, %1;" : "=r"(early) : "r"(d[0]));
    dout[tid] = early;
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < 6; i++) dout[tid * 6 + i] = d[i];
}
