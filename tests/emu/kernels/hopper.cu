// hopper.cu (sm_90a only): mbarrier phases, arrival and transaction counts,
// try_wait sleeping, and TMA (cp.async.bulk.tensor) loads of every rank and
// swizzle.  The PTX is spelled out with inline asm so each test exercises
// exactly the instruction forms of the PTX ISA it names.
#include <cuda.h>
#include <stdint.h>

__device__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ void mbar_init(uint32_t b, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(count) : "memory");
}
__device__ uint64_t mbar_arrive(uint32_t b, uint32_t count) {
  uint64_t s;
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(b), "r"(count) : "memory");
  return s;
}
__device__ uint64_t mbar_arrive1(uint32_t b) {
  uint64_t s;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(s) : "r"(b) : "memory");
  return s;
}
__device__ uint64_t mbar_arrive_tx(uint32_t b, uint32_t tx) {
  uint64_t s;
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(b), "r"(tx) : "memory");
  return s;
}
__device__ void mbar_expect_tx(uint32_t b, uint32_t tx) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(tx) : "memory");
}
__device__ void mbar_complete_tx(uint32_t b, uint32_t tx) {
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(tx) : "memory");
}
__device__ int mbar_test_parity(uint32_t b, uint32_t parity) {
  uint32_t r;
  asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
               " selp.u32 %0, 1, 0, p;\n}" : "=r"(r) : "r"(b), "r"(parity) : "memory");
  return (int)r;
}
__device__ int mbar_test_state(uint32_t b, uint64_t state) {
  uint32_t r;
  asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
               : "=r"(r) : "r"(b), "l"(state) : "memory");
  return (int)r;
}
__device__ void mbar_wait_parity(uint32_t b, uint32_t parity) {
  asm volatile("{\n .reg .pred p;\n WAIT%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
               " @!p bra WAIT%=;\n}" ::"r"(b), "r"(parity) : "memory");
}
__device__ void mbar_wait_state(uint32_t b, uint64_t state) {
  asm volatile("{\n .reg .pred p;\n WAIT%=:\n mbarrier.try_wait.shared::cta.b64 p, [%0], %1, %2;\n"
               " @!p bra WAIT%=;\n}" ::"r"(b), "l"(state), "r"(1000000) : "memory");
}
__device__ void mbar_inval(uint32_t b) { asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(b) : "memory"); }

// One thread walks an mbarrier through phases; out[] records what test_wait
// sees after each step (the host holds the table the ISA implies).
extern "C" __global__ void mbar_phases(int *out) {
  __shared__ uint64_t bar;
  uint32_t b = smem_addr(&bar);
  int k = 0;
  mbar_init(b, 2);
  out[k++] = mbar_test_parity(b, 0);     // 0: phase 0 not complete
  out[k++] = mbar_test_parity(b, 1);     // 1: "phase -1" (parity 1) counts as complete
  uint64_t s0 = mbar_arrive1(b);         // pending 2 -> 1
  out[k++] = mbar_test_state(b, s0);     // 0
  mbar_expect_tx(b, 64);                 // tx 64
  uint64_t s1 = mbar_arrive1(b);         // pending 0, tx 64: not complete
  out[k++] = s1 == s0;                   // 1: same phase
  out[k++] = mbar_test_parity(b, 0);     // 0
  mbar_complete_tx(b, 32);
  out[k++] = mbar_test_parity(b, 0);     // 0: tx 32 left
  mbar_complete_tx(b, 32);               // phase 0 completes
  out[k++] = mbar_test_parity(b, 0);     // 1
  out[k++] = mbar_test_state(b, s0);     // 1
  out[k++] = mbar_test_parity(b, 1);     // 0: phase 1 is current
  uint64_t s2 = mbar_arrive(b, 2);       // completes phase 1 at once
  out[k++] = s2 != s0;                   // 1
  out[k++] = mbar_test_parity(b, 1);     // 1
  out[k++] = mbar_test_state(b, s2);     // 1
  mbar_complete_tx(b, 16);               // tx -16 in phase 2 (before the expect: allowed)
  uint64_t s3 = mbar_arrive_tx(b, 16);  // tx back to 0, 1 arrival pending
  out[k++] = mbar_test_state(b, s3);     // 0
  mbar_arrive1(b);                       // phase 2 completes
  out[k++] = mbar_test_state(b, s3);     // 1
  out[k++] = mbar_test_parity(b, 0);     // 1: phase 2 (parity 0) is complete
  out[k++] = mbar_test_parity(b, 1);     // 0: phase 3 (parity 1) is current
  mbar_inval(b);
  out[k++] = -1;
}

// Lanes of one warp: lane 0 sleeps in try_wait while lanes 1..31 run on
// through a loop longer than a scheduling quantum; warp 1 arrives meanwhile
// and wakes lane 0, which must resume right after its try_wait.
extern "C" __global__ void mbar_lanes(int *out, int n) {
  __shared__ uint64_t bar;
  uint32_t b = smem_addr(&bar);
  int lane = threadIdx.x & 31;
  if (threadIdx.x == 0) mbar_init(b, 1);
  __syncthreads();
  if (threadIdx.x < 32) {
    if (lane == 0) mbar_wait_parity(b, 0);
    int v = lane;
    for (int i = 0; i < n; i++) asm volatile("mad.lo.s32 %0, %0, 3, %1;" : "+r"(v) : "r"(i));
    out[lane] = v;
  } else if (threadIdx.x == 32) {
    mbar_arrive1(b);
  }
}

// A producer warp fills a 2-stage ring in shared memory; a consumer warp
// waits on the "full" barrier of each stage and releases it through an
// "empty" barrier.  Ordinary st.shared / ld.shared, ordered only by the
// mbarriers: the race detector must see them as ordered.
extern "C" __global__ void mbar_ring(int *out, int rounds) {
  __shared__ int ring[2][32];
  __shared__ uint64_t full[2], empty[2];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (threadIdx.x == 0)
    for (int s = 0; s < 2; s++) {
      mbar_init(smem_addr(&full[s]), 32);
      mbar_init(smem_addr(&empty[s]), 32);
    }
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  __syncthreads();
  for (int r = 0; r < rounds; r++) {
    int s = r & 1;
    uint32_t phase = (uint32_t)(r >> 1) & 1;
    if (warp == 0) {
      mbar_wait_parity(smem_addr(&empty[s]), phase ^ 1);
      ring[s][lane] = r * 100 + lane;
      mbar_arrive1(smem_addr(&full[s]));
    } else {
      mbar_wait_parity(smem_addr(&full[s]), phase);
      out[r * 32 + lane] = ring[s][lane];
      mbar_arrive1(smem_addr(&empty[s]));
    }
  }
}

// errors: which = 0 an arrival count above the pending count, 1 ld.shared of the
// mbarrier, 2 try_wait on a phase no one completes, 3 arrive on memory never
// initialized, 4 a consumer that does not wait (race on the ring)
extern "C" __global__ void mbar_errors(int which, int *out) {
  __shared__ uint64_t bar, other;
  __shared__ int data;
  uint32_t b = smem_addr(&bar);
  if (threadIdx.x == 0) mbar_init(b, 1);
  __syncthreads();
  if (which == 0 && threadIdx.x == 1) mbar_arrive(b, 2);
  if (which == 1 && threadIdx.x == 0) out[0] = (int)*(volatile uint64_t *)&bar;
  if (which == 2) mbar_wait_parity(b, 0);
  if (which == 3 && threadIdx.x == 0) mbar_arrive1(smem_addr(&other));
  if (which == 4) { /* plain (not .volatile) shared accesses, as written */
    uint32_t a = smem_addr(&data);
    if (threadIdx.x == 0) {
      asm volatile("st.shared.u32 [%0], %1;" ::"r"(a), "r"(42) : "memory");
      mbar_arrive1(b);
    }
    if (threadIdx.x == 32) {
      int v;
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
      out[0] = v;
    }
  }
}

// TMA: the box at (c[0..rank-1]) of the tensor map, as it lands in shared
// memory, copied out byte for byte; out_info[0] = the box's shared address.
// expect_extra adds bytes to the expected transaction count (a test that the
// copy completes exactly the box's bytes); read_early reads the box before
// waiting.
template <int RANK>
__device__ void tma_load_box(const CUtensorMap *tm, const int *c, uint32_t dst, uint32_t b) {
  if (RANK == 1)
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                 ::"r"(dst), "l"(tm), "r"(c[0]), "r"(b) : "memory");
  if (RANK == 2)
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(dst), "l"(tm), "r"(c[0]), "r"(c[1]), "r"(b) : "memory");
  if (RANK == 3)
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                 ::"r"(dst), "l"(tm), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(b) : "memory");
  if (RANK == 4)
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                 ::"r"(dst), "l"(tm), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(b) : "memory");
  if (RANK == 5)
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3, %4, %5, %6}], [%7], %8;"
                 ::"r"(dst), "l"(tm), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(b), "l"(0ull) : "memory");
}

template <int RANK>
__device__ void tma_test(const CUtensorMap *tm, const int *c, uint32_t bytes, uint32_t expect_extra, int read_early,
                         uint8_t *out, uint32_t *info) {
  extern __shared__ __align__(1024) uint8_t box[];
  __shared__ uint64_t bar;
  uint32_t b = smem_addr(&bar), dst = smem_addr(box);
  if (threadIdx.x == 0) {
    mbar_init(b, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  uint32_t elected;
  asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(elected));
  if (threadIdx.x < 32 && elected) {
    mbar_arrive_tx(b, bytes + expect_extra);
    tma_load_box<RANK>(tm, c, dst, b);
  }
  if (read_early && threadIdx.x == 0) out[0] = box[0];
  mbar_wait_parity(b, 0);
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = box[i];
  if (threadIdx.x == 0) info[0] = dst;
}

#define TMA_KERNEL(R)                                                                                                  \
  extern "C" __global__ void tma_load_##R##d(const __grid_constant__ CUtensorMap tm, const int *c, uint32_t bytes,    \
                                             uint32_t expect_extra, int read_early, uint8_t *out, uint32_t *info) {   \
    tma_test<R>(&tm, c, bytes, expect_extra, read_early, out, info);                                                  \
  }
TMA_KERNEL(1)
TMA_KERNEL(2)
TMA_KERNEL(3)
TMA_KERNEL(4)
TMA_KERNEL(5)

// TMA store: the box image (already swizzled by the host) is written to
// shared memory with ordinary stores, fenced to the async proxy and stored
// through the tensor map.  mode 1 leaves out fence.proxy.async; mode 2
// overwrites the source before cp.async.bulk.wait_group.read.
extern "C" __global__ void tma_store_2d(const __grid_constant__ CUtensorMap tm, const uint8_t *img, uint32_t bytes,
                                        int cx, int cy, int mode) {
  extern __shared__ __align__(1024) uint8_t box[];
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) box[i] = img[i];
  if (mode != 1) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(&tm), "r"(cx), "r"(cy), "r"(smem_addr(box)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    if (mode == 2) asm volatile("st.shared.u8 [%0], %1;" ::"r"(smem_addr(box)), "h"((unsigned short)1) : "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}
