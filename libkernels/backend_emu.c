/* Emulator backend of libdlckernels-emu.a: the same entry points, run on
 * the PTX that nvcc emits for sm_80, in the dlcemu PTX emulator (spec: every
 * kernel is proven in the emulator).  Device pointers are dlcemu_mem_alloc
 * allocations; the stream must be NULL; every call runs synchronously.
 * Modules are loaded on first use and kept for the process.
 *
 * The emulated device is sm_80 unless DLC_EMU_ARCH says otherwise
 * (docs/emulator.md): DLC_EMU_ARCH=sm90a makes it an sm_90a device, which
 * runs the rows built for sm90a from their sm_90a PTX.  That PTX is not
 * embedded yet (it comes with the sm90a skeletons), so such a call is
 * DLC_ERROR_NOT_SUPPORTED saying so; it never falls back to the sm_80 PTX. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dlc/dlcemu.h"
#include "dlc_internal.h"

/* PTX text, one per op (embedded by the build from nvcc -ptx). */
#define X(i, op) extern const char dlc__ptx_##op[];
#include "dlc_ops.def"
#undef X
static const char *const ptx[] = {
#define X(i, op) dlc__ptx_##op,
#include "dlc_ops.def"
#undef X
};
enum { NOPS = sizeof ptx / sizeof ptx[0] };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dlcemu_module modules[NOPS];

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
  if (arch == DLC__ARCH_SM90A)
    return dlc__fail(DLC_ERROR_NOT_SUPPORTED,
                     "%s: the emulated device is sm90a (DLC_EMU_ARCH), but this libdlckernels-emu embeds only sm_80 "
                     "PTX; unset DLC_EMU_ARCH to emulate sm80",
                     k->name);
  if (!(k->archs & DLC__ARCH_SM80))
    return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "%s has no sm80 build to emulate", k->name);
  if (k->op < 0 || k->op >= NOPS) return dlc__fail(DLC_ERROR_INTERNAL, "%s: op %d out of range", k->name, k->op);
  /* one launch at a time: the emulator is a single device */
  dlc_status r = DLC_SUCCESS;
  pthread_mutex_lock(&lock);
  int st = 0;
  dlcemu_function fn;
  if (dlc__launch_hook && dlc__launch_hook(k, gx, gy, gz)) {
    /* a dry run: the hook saw the row, nothing runs */
  } else if (!modules[k->op] && (st = dlcemu_module_load_data(&modules[k->op], ptx[k->op])) != 0) {
    r = dlc__fail(DLC_ERROR_LAUNCH_FAILED, "%s: the emulator cannot load its PTX: %s", k->name,
                  dlcemu_last_error_detail());
  } else if ((st = dlcemu_module_get_function(&fn, modules[k->op], k->name)) != 0) {
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
