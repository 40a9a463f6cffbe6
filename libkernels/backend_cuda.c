/* CUDA backend of libdlckernels.a: arch detection (cached per device) and
 * launch through the CUDA runtime.  The kernels are SASS compiled for every
 * manifest arch; the runtime picks the SASS of the device's arch. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>

#include "dlc_internal.h"

/* Kernel handles, one array per op (defined in the generated kernels/<op>.cu). */
#define X(i, op) extern const void *const dlc__fns_##op[];
#include "dlc_ops.def"
#undef X
static const void *const *const fns[] = {
#define X(i, op) dlc__fns_##op,
#include "dlc_ops.def"
#undef X
};

enum { MAX_DEVICES = 64 };
static atomic_int device_cc[MAX_DEVICES]; /* 0: not yet queried */

/* The calling thread's device: whether the runtime has found one, and the
 * current device and its compute capability for the thread's call
 * dlc__call_epoch (the runtime is asked once a call; a call's launches and
 * its sm90a choice reuse the answer, and the next call sees a cudaSetDevice
 * made in between). */
static _Thread_local int has_devices;
static _Thread_local unsigned cur_epoch;
static _Thread_local int cur_dev = -1, cur_cc;

static dlc_status device_cc_of(int *dev, int *cc) {
  if (cur_dev >= 0 && cur_epoch == dlc__call_epoch) {
    *dev = cur_dev, *cc = cur_cc;
    return DLC_SUCCESS;
  }
  cudaError_t e;
  if (!has_devices) {
    int n = 0;
    e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
      cudaGetLastError(); /* clear the sticky error of a missing driver */
      return dlc__fail(DLC_ERROR_NO_DEVICE, "no CUDA device: %s", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    }
    has_devices = 1;
  }
  if ((e = cudaGetDevice(dev)) != cudaSuccess)
    return dlc__fail(DLC_ERROR_NO_DEVICE, "cudaGetDevice: %s", cudaGetErrorString(e));
  if (*dev < 0 || *dev >= MAX_DEVICES) return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "device %d: too many devices", *dev);
  int c = atomic_load(&device_cc[*dev]);
  if (!c) {
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, *dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, *dev) != cudaSuccess)
      return dlc__fail(DLC_ERROR_NO_DEVICE, "cannot read the compute capability of device %d", *dev);
    c = major * 10 + minor;
    atomic_store(&device_cc[*dev], c);
  }
  *cc = c;
  cur_dev = *dev, cur_cc = c, cur_epoch = dlc__call_epoch;
  return DLC_SUCCESS;
}

/* A stream of another device than the current one: the launch would fail
 * (or run where the caller's memory is not).  Checked once a call; the
 * legacy and per-thread default streams are the current device's. */
static _Thread_local unsigned stream_epoch;
static _Thread_local struct CUstream_st *stream_ok;

static dlc_status check_stream(struct CUstream_st *stream, int dev) {
  if (!stream || (cudaStream_t)stream == cudaStreamLegacy || (cudaStream_t)stream == cudaStreamPerThread ||
      (stream == stream_ok && stream_epoch == dlc__call_epoch))
    return DLC_SUCCESS;
  int sdev = -1;
  cudaError_t e = cudaStreamGetDevice((cudaStream_t)stream, &sdev);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return dlc__fail(DLC_ERROR_INVALID_VALUE, "stream %p: cudaStreamGetDevice: %s", (void *)stream, cudaGetErrorString(e));
  }
  if (sdev != dev)
    return dlc__fail(DLC_ERROR_INVALID_VALUE,
                     "the stream belongs to device %d, and the current device is %d: call cudaSetDevice(%d) first, or "
                     "pass a stream of device %d", sdev, dev, sdev, dev);
  stream_ok = stream, stream_epoch = dlc__call_epoch;
  return DLC_SUCCESS;
}

/* The row's arch bit that SASS for this compute capability runs under. */
static unsigned arch_bit(int cc) {
  if (cc == 86 || cc == 87) return DLC__ARCH_SM86 | DLC__ARCH_SM80;
  if (cc == 89) return DLC__ARCH_SM89 | DLC__ARCH_SM80;
  if (cc / 10 == 8) return DLC__ARCH_SM80;
  if (cc == 90) return DLC__ARCH_SM90A;
  if (cc / 10 == 10) return DLC__ARCH_SM100;
  if (cc / 10 == 12) return DLC__ARCH_SM120;
  return 0;
}

/* Rows whose dynamic shared memory is settled on a device: a launch may
 * ask for at most cudaFuncAttributeMaxDynamicSharedMemorySize, 48 KB less
 * the kernel's static shared memory (a template's __shared__ variables)
 * until raised.  Keys are (row, device); a full table only means asking the
 * runtime again. */
enum { SETTLED_SLOTS = 4096, SETTLED_PROBES = 16 };
static _Atomic uintptr_t settled[SETTLED_SLOTS];

static dlc_status opt_in_shared(const dlc__kernel *k, const void *fn, int dev) {
  if (k->smem == 0) return DLC_SUCCESS;
  uintptr_t key = (uintptr_t)k * MAX_DEVICES + (uintptr_t)dev + 1, h = (key * 0x9E3779B97F4A7C15u) >> 52;
  for (int i = 0; i < SETTLED_PROBES; i++)
    if (atomic_load_explicit(&settled[(h + (uintptr_t)i) % SETTLED_SLOTS], memory_order_acquire) == key)
      return DLC_SUCCESS;
  struct cudaFuncAttributes fa;
  cudaError_t e = cudaFuncGetAttributes(&fa, fn);
  if (e != cudaSuccess) return dlc__fail(DLC_ERROR_LAUNCH_FAILED, "%s: %s", k->name, cudaGetErrorString(e));
  if ((size_t)k->smem > (size_t)fa.maxDynamicSharedSizeBytes &&
      (e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, k->smem)) != cudaSuccess)
    return dlc__fail(DLC_ERROR_LAUNCH_FAILED, "%s: %d bytes of dynamic shared memory (and %zu static): %s", k->name,
                     k->smem, fa.sharedSizeBytes, cudaGetErrorString(e));
  for (int i = 0; i < SETTLED_PROBES; i++) {
    uintptr_t empty = 0;
    _Atomic uintptr_t *slot = &settled[(h + (uintptr_t)i) % SETTLED_SLOTS];
    if (atomic_compare_exchange_strong(slot, &empty, key) || empty == key) break;
  }
  return DLC_SUCCESS;
}

dlc_status dlc__launch(const dlc__kernel *k, const void *params, size_t size, unsigned gx, unsigned gy, unsigned gz,
                       struct CUstream_st *stream) {
  (void)size;
  int dev = 0, cc = 0;
  dlc_status s = device_cc_of(&dev, &cc);
  if (s != DLC_SUCCESS) return s;
  if (!(arch_bit(cc) & k->archs))
    return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "%s has no SASS for sm_%d (compute capability %d.%d) in this library",
                     k->name, cc, cc / 10, cc % 10);
  if ((s = check_stream(stream, dev)) != DLC_SUCCESS) return s;
  if (dlc__query_launch(k, gx, gy, gz)) return DLC_SUCCESS; /* dlc_<op>_query() */
  if (dlc__launch_hook && dlc__launch_hook(k, gx, gy, gz)) return DLC_SUCCESS; /* a test's dry run */
  const void *fn = fns[k->op][k->index];
  cudaError_t e;
  if ((s = opt_in_shared(k, fn, dev)) != DLC_SUCCESS) return s;
  void *args[1] = {(void *)params};
  dim3 grid = {gx, gy, gz}, block = {(unsigned)k->threads, 1, 1};
  e = cudaLaunchKernel(fn, grid, block, args, (size_t)k->smem, (cudaStream_t)stream);
  if (e != cudaSuccess) return dlc__fail(DLC_ERROR_LAUNCH_FAILED, "%s: %s", k->name, cudaGetErrorString(e));
  dlc__record_launch(k, gx, gy, gz);
  return DLC_SUCCESS;
}

const char dlc__backend_name[] = "cuda";
const int dlc__cuda_runtime_version = CUDART_VERSION;

/* device memory, the kernels queued: nothing is poisoned */
void dlc__arena_release(void *p, int64_t bytes) { (void)p, (void)bytes; }

unsigned dlc__device_arch(void) {
  int dev = 0, cc = 0;
  if (device_cc_of(&dev, &cc) != DLC_SUCCESS) return 0;
  return arch_bit(cc);
}

/* cuTensorMapEncodeTiled from the driver the runtime loaded (no -lcuda),
 * looked up once. */
typedef CUresult (*encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                    const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                    CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static encode_tiled_fn encode_tiled;
static pthread_once_t encode_once = PTHREAD_ONCE_INIT;

static void find_encode_tiled(void) {
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
      q == cudaDriverEntryPointSuccess)
    encode_tiled = (encode_tiled_fn)fn;
  else
    cudaGetLastError();
}

/* cuTensorMapEncodeTiled on a tensor the caller's checks passed: rank dims,
 * dims[0] contiguous, strides in elements of elem bytes, the 128-byte
 * swizzle, zero fill. */
static dlc_status encode_checked(void *map, dlc_dtype dtype, const void *base, int rank, const int64_t *dims,
                                 const int64_t *strides, const int *box, int elem) {
  pthread_once(&encode_once, find_encode_tiled);
  if (!encode_tiled) return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "tensor map: the driver has no cuTensorMapEncodeTiled");
  cuuint64_t dim[5], stride[4];
  cuuint32_t bx[5], estride[5];
  for (int i = 0; i < rank; i++) {
    dim[i] = (cuuint64_t)dims[i], bx[i] = (cuuint32_t)box[i], estride[i] = 1;
    if (i + 1 < rank) stride[i] = (cuuint64_t)(strides[i] * elem);
  }
  CUresult r = encode_tiled((CUtensorMap *)map, dtype == DLC_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                            (cuuint32_t)rank, (void *)base, dim, stride, bx, estride, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "tensor map: cuTensorMapEncodeTiled returned %d", (int)r);
  return DLC_SUCCESS;
}

dlc_status dlc__tmap_encode_2d(void *map, dlc_dtype dtype, const void *base, int64_t inner, int64_t outer, int64_t ld,
                               int box_inner, int box_outer) {
  int elem;
  dlc_status s = dlc__tmap_check_2d(dtype, base, inner, outer, ld, box_inner, box_outer, &elem);
  if (s != DLC_SUCCESS) return s;
  const int64_t dims[2] = {inner, outer}, strides[1] = {ld};
  const int box[2] = {box_inner, box_outer};
  return encode_checked(map, dtype, base, 2, dims, strides, box, elem);
}

dlc_status dlc__tmap_encode_nd(void *map, dlc_dtype dtype, const void *base, int rank, const int64_t *dims,
                               const int64_t *strides, const int *box) {
  int elem;
  dlc_status s = dlc__tmap_check_nd(dtype, base, rank, dims, strides, box, &elem);
  if (s != DLC_SUCCESS) return s;
  return encode_checked(map, dtype, base, rank, dims, strides, box, elem);
}
