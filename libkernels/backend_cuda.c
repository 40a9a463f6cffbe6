/* CUDA backend of libdlckernels.a: arch detection (cached per device) and
 * launch through the CUDA runtime.  The kernels are SASS compiled for every
 * manifest arch; the runtime picks the SASS of the device's arch. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- plans -------------------------------------------------------------------------------- */

dlc_status dlc__dev_alloc(void **p, size_t bytes, struct CUstream_st *stream) {
  (void)stream;
  cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
  if (e != cudaSuccess) {
    cudaGetLastError();
    *p = NULL;
    return dlc__fail(DLC_ERROR_OUT_OF_MEMORY, "the ConstPool: cudaMalloc(%zu): %s", bytes, cudaGetErrorString(e));
  }
  return DLC_SUCCESS;
}

void dlc__dev_free(void *p) { cudaFree(p); }

dlc_status dlc__dev_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t rows,
                            struct CUstream_st *stream) {
  if (!width || !rows) return DLC_SUCCESS;
  cudaError_t e = cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, cudaMemcpyDeviceToDevice, (cudaStream_t)stream);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return dlc__fail(DLC_ERROR_INVALID_VALUE, "copying a param (%zu rows of %zu bytes from %p) into the ConstPool: %s",
                     rows, width, src, cudaGetErrorString(e));
  }
  return DLC_SUCCESS;
}

dlc_status dlc__dev_sync(struct CUstream_st *stream) {
  cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return dlc__fail(DLC_ERROR_LAUNCH_FAILED, "cudaStreamSynchronize: %s", cudaGetErrorString(e));
  }
  return DLC_SUCCESS;
}

/* A plan's CUDA graphs: one executable graph per shape set seen (the
 * arguments' dtype, dims and attrs), on the device it was captured on, with
 * the whole argument block of its last call; at most GRAPHS, the least
 * recently used replaced. */
enum { GRAPHS = 8 };
typedef struct graph_entry {
  cudaGraphExec_t exec; /* NULL: free */
  int dev;
  unsigned char *args;
  size_t bytes;
  unsigned long long used;
} graph_entry;
typedef struct graph_cache {
  graph_entry e[GRAPHS];
  unsigned long long tick;
} graph_cache;

static dlc_status graph_launch(graph_entry *g, struct CUstream_st *stream) {
  cudaError_t e = cudaGraphLaunch(g->exec, (cudaStream_t)stream);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return dlc__fail(DLC_ERROR_LAUNCH_FAILED, "replaying the plan's CUDA graph: %s", cudaGetErrorString(e));
  }
  return DLC_SUCCESS;
}

dlc_status dlc__plan_exec(dlc__plan *p, const void *args, size_t args_bytes, size_t shape_bytes, dlc__plan_body body,
                          struct CUstream_st *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  /* the legacy default stream cannot be captured; a stream in capture
   * already records the launches into its caller's graph */
  if (!s || s == cudaStreamLegacy) return body(args, stream);
  enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(s, &cs) != cudaSuccess) {
    cudaGetLastError();
    return body(args, stream);
  }
  if (cs != cudaStreamCaptureStatusNone) return body(args, stream);
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return body(args, stream); /* it fails there with its own detail */
  }
  graph_cache *gc = p->cache;
  if (!gc && !(gc = p->cache = calloc(1, sizeof *gc))) return body(args, stream);
  graph_entry *hit = NULL, *shape = NULL, *victim = &gc->e[0];
  for (int i = 0; i < GRAPHS && !hit; i++) {
    graph_entry *g = &gc->e[i];
    if (!g->exec) {
      if (victim->exec) victim = g;
      continue;
    }
    if (victim->exec && g->used < victim->used) victim = g;
    if (g->dev != dev || g->bytes != args_bytes || memcmp(g->args, args, shape_bytes) != 0) continue;
    if (memcmp(g->args, args, args_bytes) == 0) hit = g;
    else if (!shape || g->used > shape->used) shape = g;
  }
  gc->tick++;
  if (hit) {
    hit->used = gc->tick;
    return graph_launch(hit, stream);
  }
  /* a new argument block: capture the call's launches (its checks and
   * kernel choice run as in a direct call), then update the shape set's
   * graph in place, or instantiate one */
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    cudaGetLastError();
    return body(args, stream);
  }
  cudaGraph_t graph = NULL;
  dlc_status st = body(args, stream);
  cudaError_t e = cudaStreamEndCapture(s, &graph);
  if (st != DLC_SUCCESS || e != cudaSuccess) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    if (st != DLC_SUCCESS) return st;
    return dlc__fail(DLC_ERROR_LAUNCH_FAILED, "capturing the plan's launches: %s", cudaGetErrorString(e));
  }
  size_t nodes = 0;
  if (cudaGraphGetNodes(graph, NULL, &nodes) == cudaSuccess && nodes == 0) {
    cudaGraphDestroy(graph); /* an empty output: nothing to launch */
    return DLC_SUCCESS;
  }
  graph_entry *g = shape ? shape : victim;
  if (shape) {
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(shape->exec, graph, &info) != cudaSuccess) {
      cudaGetLastError(); /* another kernel choice: a new graph */
      cudaGraphExecDestroy(shape->exec);
      shape->exec = NULL;
    }
  } else if (victim->exec) {
    cudaGraphExecDestroy(victim->exec);
    victim->exec = NULL;
  }
  if (!g->exec && (e = cudaGraphInstantiate(&g->exec, graph, 0)) != cudaSuccess) {
    cudaGetLastError();
    g->exec = NULL;
    cudaGraphDestroy(graph);
    return dlc__fail(DLC_ERROR_LAUNCH_FAILED, "instantiating the plan's CUDA graph: %s", cudaGetErrorString(e));
  }
  cudaGraphDestroy(graph);
  if (g->bytes != args_bytes) {
    unsigned char *a = realloc(g->args, args_bytes);
    if (!a) { /* not kept: the next call captures again */
      st = graph_launch(g, stream);
      cudaGraphExecDestroy(g->exec);
      g->exec = NULL;
      return st;
    }
    g->args = a, g->bytes = args_bytes;
  }
  memcpy(g->args, args, args_bytes);
  g->dev = dev, g->used = gc->tick;
  return graph_launch(g, stream);
}

void dlc__plan_cache_free(dlc__plan *p) {
  graph_cache *gc = p->cache;
  if (!gc) return;
  for (int i = 0; i < GRAPHS; i++) {
    if (gc->e[i].exec) cudaGraphExecDestroy(gc->e[i].exec);
    free(gc->e[i].args);
  }
  free(gc);
  p->cache = NULL;
}
