/* Emulator backend of libdlckernels-emu.a: the same entry points, run on
 * the PTX that nvcc emits for sm_80, in the dlcemu PTX emulator (spec: every
 * kernel is proven in the emulator).  Device pointers are dlcemu_mem_alloc
 * allocations; the stream must be NULL; every call runs synchronously.
 * Modules are loaded on first use and kept for the process.
 *
 * The emulated device is sm_80 unless DLC_EMU_ARCH says otherwise
 * (docs/emulator.md): DLC_EMU_ARCH=sm90a makes it an sm_90a device, which
 * runs every row built for sm90a from its sm_90a PTX (the sm90a skeleton's
 * kernels, and the sm80 skeleton's compiled for sm_90a); it never runs the
 * sm_80 PTX.  Tensor maps are encoded by dlcemu_tensor_map_encode_tiled. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dlc/dlcemu.h"
#include "dlc_internal.h"

/* PTX text, one per op and emulated arch (embedded by the build from
 * nvcc -ptx for sm_80 and sm_90a). */
#define X(i, op) extern const char dlc__ptx_##op[], dlc__ptx90_##op[];
#include "dlc_ops.def"
#undef X
static const char *const ptx[] = {
#define X(i, op) dlc__ptx_##op,
#include "dlc_ops.def"
#undef X
};
static const char *const ptx90[] = {
#define X(i, op) dlc__ptx90_##op,
#include "dlc_ops.def"
#undef X
};
enum { NOPS = sizeof ptx / sizeof ptx[0] };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dlcemu_module modules[2][NOPS]; /* [0]: sm_80, [1]: sm_90a */

/* The emulated device's arch bit, from DLC_EMU_ARCH (unset or empty: sm80);
 * 0 after failing on a value it does not know. */
static unsigned emulated_arch(void) {
  const char *v = getenv("DLC_EMU_ARCH");
  if (!v || !*v || !strcmp(v, "sm80") || !strcmp(v, "sm_80")) return DLC__ARCH_SM80;
  if (!strcmp(v, "sm90a") || !strcmp(v, "sm_90a")) return DLC__ARCH_SM90A;
  dlc__fail(DLC_ERROR_INVALID_VALUE, "DLC_EMU_ARCH=%.40s is not an emulated arch: use sm80 (the default) or sm90a", v);
  return 0;
}

dlc_status dlc__launch(const dlc__kernel *k, const void *params, size_t size, unsigned gx, unsigned gy, unsigned gz,
                       struct CUstream_st *stream) {
  (void)size;
  if (stream)
    return dlc__fail(DLC_ERROR_INVALID_VALUE, "libdlckernels-emu runs synchronously: the stream must be NULL");
  unsigned arch = emulated_arch();
  if (!arch) return DLC_ERROR_INVALID_VALUE;
  if (!(k->archs & arch))
    return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "%s has no %s build to emulate", k->name,
                     arch == DLC__ARCH_SM90A ? "sm90a" : "sm80");
  const int a = arch == DLC__ARCH_SM90A;
  const char *const *text = a ? ptx90 : ptx;
  if (k->op < 0 || k->op >= NOPS) return dlc__fail(DLC_ERROR_INTERNAL, "%s: op %d out of range", k->name, k->op);
  if (dlc__query_launch(k, gx, gy, gz)) return DLC_SUCCESS; /* dlc_<op>_query() */
  /* one launch at a time: the emulator is a single device */
  dlc_status r = DLC_SUCCESS;
  pthread_mutex_lock(&lock);
  int st = 0;
  dlcemu_function fn;
  if (dlc__launch_hook && dlc__launch_hook(k, gx, gy, gz)) {
    /* a dry run: the hook saw the row, nothing runs */
  } else if (!modules[a][k->op] && (st = dlcemu_module_load_data(&modules[a][k->op], text[k->op])) != 0) {
    r = dlc__fail(DLC_ERROR_LAUNCH_FAILED, "%s: the emulator cannot load its %s PTX: %s", k->name,
                  a ? "sm_90a" : "sm_80", dlcemu_last_error_detail());
  } else if ((st = dlcemu_module_get_function(&fn, modules[a][k->op], k->name)) != 0) {
    r = dlc__fail(DLC_ERROR_INTERNAL, "%s: not in the PTX: %s", k->name, dlcemu_error_string(st));
  } else {
    /* as on a GPU (backend_cuda.c): past 48 KB of static and dynamic
     * shared memory, the kernel must opt in first */
    int max_dyn = 0;
    void *args[1] = {(void *)params};
    if (dlcemu_function_get_attribute(&max_dyn, DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES, fn) == 0 &&
        k->smem > max_dyn &&
        dlcemu_function_set_attribute(fn, DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES, k->smem) != 0)
      st = -1;
    else
      st = dlcemu_launch_kernel(fn, gx, gy, gz, (unsigned)k->threads, 1, 1, (unsigned)k->smem, args);
    if (st != 0) r = dlc__fail(DLC_ERROR_LAUNCH_FAILED, "%s: %s", k->name, dlcemu_last_error_detail());
    else dlc__record_launch(k, gx, gy, gz);
  }
  pthread_mutex_unlock(&lock);
  return r;
}

unsigned dlc__device_arch(void) { return emulated_arch(); }

void dlc__arena_release(void *p, int64_t bytes) {
  if (dlc__query_active() || bytes <= 0) return;
  pthread_mutex_lock(&lock);
  /* emulator memory, as the kernels that wrote it were given; a pointer
   * outside it had already failed their memcheck */
  (void)dlcemu_memset_d8((dlcemu_deviceptr)(uintptr_t)p, 0xff, (size_t)bytes);
  pthread_mutex_unlock(&lock);
}

const char dlc__backend_name[] = "emulator";
const int dlc__cuda_runtime_version = 0;
const char dlc__sass_archs[] = "[]"; /* it runs the PTX */

/* dlcemu_tensor_map_encode_tiled on a tensor the caller's checks passed
 * (the CUDA backend's encode_checked, on the emulator). */
static dlc_status encode_checked(void *map, dlc_dtype dtype, const void *base, int rank, const int64_t *dims,
                                 const int64_t *strides, const int *box, int elem) {
  uint64_t dim[5], stride[4];
  uint32_t bx[5], estride[5];
  for (int i = 0; i < rank; i++) {
    dim[i] = (uint64_t)dims[i], bx[i] = (uint32_t)box[i], estride[i] = 1;
    if (i + 1 < rank) stride[i] = (uint64_t)(strides[i] * elem);
  }
  int st = dlcemu_tensor_map_encode_tiled(
      map, dtype == DLC_BF16 ? DLCEMU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT16,
      (uint32_t)rank, (dlcemu_deviceptr)(uintptr_t)base, dim, stride, bx, estride, 0, DLCEMU_TENSOR_MAP_SWIZZLE_128B,
      DLCEMU_TENSOR_MAP_L2_PROMOTION_L2_128B, DLCEMU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (st != 0) return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "tensor map: %s", dlcemu_last_error_detail());
  return DLC_SUCCESS;
}

dlc_status dlc__tmap_encode_nd(void *map, dlc_dtype dtype, const void *base, int rank, const int64_t *dims,
                               const int64_t *strides, const int *box) {
  int elem;
  dlc_status s = dlc__tmap_check_nd(dtype, base, rank, dims, strides, box, &elem);
  if (s != DLC_SUCCESS) return s;
  return encode_checked(map, dtype, base, rank, dims, strides, box, elem);
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

/* Plans: the ConstPool in the emulator's memory; the params are copied row
 * by row through host memory (the emulator copies only between it and the
 * host), under the lock.  A plan's call: plan_direct.c. */
dlc_status dlc__dev_alloc(void **p, size_t bytes, struct CUstream_st *stream) {
  if (stream)
    return dlc__fail(DLC_ERROR_INVALID_VALUE, "libdlckernels-emu runs synchronously: the stream must be NULL");
  dlcemu_deviceptr d = 0;
  pthread_mutex_lock(&lock);
  int st = dlcemu_mem_alloc(&d, bytes ? bytes : 1);
  pthread_mutex_unlock(&lock);
  if (st != 0)
    return dlc__fail(DLC_ERROR_OUT_OF_MEMORY, "the ConstPool: %zu bytes of emulator memory: %s", bytes,
                     dlcemu_error_string(st));
  *p = (void *)(uintptr_t)d;
  return DLC_SUCCESS;
}

void dlc__dev_free(void *p) {
  pthread_mutex_lock(&lock);
  (void)dlcemu_mem_free((dlcemu_deviceptr)(uintptr_t)p);
  pthread_mutex_unlock(&lock);
}

dlc_status dlc__dev_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t rows,
                            struct CUstream_st *stream) {
  if (stream)
    return dlc__fail(DLC_ERROR_INVALID_VALUE, "libdlckernels-emu runs synchronously: the stream must be NULL");
  if (!width || !rows) return DLC_SUCCESS;
  unsigned char *row = malloc(width);
  if (!row) return dlc__fail(DLC_ERROR_OUT_OF_MEMORY, "a row of %zu bytes of host memory", width);
  dlc_status r = DLC_SUCCESS;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < rows && r == DLC_SUCCESS; i++) {
    const dlcemu_deviceptr s = (dlcemu_deviceptr)(uintptr_t)src + i * spitch, d = (dlcemu_deviceptr)(uintptr_t)dst + i * dpitch;
    int st = dlcemu_memcpy_dtoh(row, s, width);
    if (st == 0) st = dlcemu_memcpy_htod(d, row, width);
    if (st != 0)
      r = dlc__fail(DLC_ERROR_INVALID_VALUE, "a param's row %zu at %p is not emulator memory: %s", i,
                    (const void *)(uintptr_t)s, dlcemu_error_string(st));
  }
  pthread_mutex_unlock(&lock);
  free(row);
  return r;
}
