/**
 * @file dlcemu.h
 * @brief dlcemu: a PTX emulator that runs the PTX nvcc emits on the CPU.
 *
 * dlcemu loads PTX text produced by nvcc for sm_80 or sm_90a, decodes it once
 * into an instruction array and interprets it warp by warp, with memcheck
 * (out-of-bounds, misaligned, poisoned cp.async destinations, barrier
 * deadlocks) and per-launch statistics (instruction classes, global sectors,
 * shared-memory bank-conflict wavefronts, barriers).  The API mirrors the CUDA
 * driver API: load a module, get a function, allocate and copy memory, launch.
 *
 * Every function returns a status: 0 (::DLCEMU_SUCCESS) on success, one of
 * ::dlcemu_status otherwise.  dlcemu_error_string() names a status and
 * dlcemu_last_error_detail() returns the full message of the last failure on
 * the calling thread (parse error with line, or memcheck report naming kernel,
 * block, thread, PTX line and instruction).  The library never prints, exits
 * or aborts.
 *
 * Threading: modules are independent and may be used from different threads;
 * the global allocation table is guarded by a mutex.  Error details, the last
 * launch's statistics and the limits set with dlcemu_set_limit() are per
 * calling thread.  See docs/emulator.md for a walk-through.
 */
#ifndef DLC_DLCEMU_H
#define DLC_DLCEMU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A loaded PTX module (all its entries, functions and variables). */
typedef struct dlcemu_module_st *dlcemu_module;
/** A kernel entry of a module; valid until the module is unloaded. */
typedef struct dlcemu_function_st *dlcemu_function;
/** Host address inside an emulator allocation (what a kernel sees as a global pointer). */
typedef unsigned long long dlcemu_deviceptr;

/** Status codes.  0 is success; the others name the failure class. */
typedef enum dlcemu_status {
  DLCEMU_SUCCESS = 0,                 /**< success */
  DLCEMU_ERROR_INVALID_VALUE = 1,     /**< a NULL or otherwise invalid argument */
  DLCEMU_ERROR_OUT_OF_MEMORY = 2,     /**< host allocation failed */
  DLCEMU_ERROR_PARSE = 3,             /**< PTX syntax error (detail names the line) */
  DLCEMU_ERROR_UNSUPPORTED = 4,       /**< PTX instruction or directive not supported (detail names opcode and line) */
  DLCEMU_ERROR_NOT_FOUND = 5,         /**< no entry or variable of that name */
  DLCEMU_ERROR_INVALID_POINTER = 6,   /**< pointer is not (inside) a live allocation */
  DLCEMU_ERROR_LAUNCH_CONFIG = 7,     /**< bad grid/block dimensions or shared-memory size */
  DLCEMU_ERROR_OUT_OF_BOUNDS = 8,     /**< memcheck: access outside an allocation / shared / local window */
  DLCEMU_ERROR_MISALIGNED = 9,        /**< memcheck: address not a multiple of the access size */
  DLCEMU_ERROR_POISON = 10,           /**< memcheck: read of a cp.async destination before its wait */
  DLCEMU_ERROR_DEADLOCK = 11,         /**< a barrier or warp collective that can never complete */
  DLCEMU_ERROR_TRAP = 12,             /**< trap, brkpt or a failed device-side assert */
  DLCEMU_ERROR_ILLEGAL = 13,          /**< illegal use at run time (e.g. mma.sync with inactive lanes) */
  DLCEMU_ERROR_LIMIT = 14,            /**< the warp-instruction limit was exceeded (endless loop?) */
  DLCEMU_ERROR_RACE = 15              /**< memcheck: write to shared memory with a cp.async pending on it */
} dlcemu_status;

/**
 * Parse and decode PTX text into a module.
 * @param mod      receives the module
 * @param ptx_text NUL-terminated PTX as produced by nvcc (-ptx), sm_80 or sm_90a
 * @return ::DLCEMU_ERROR_PARSE or ::DLCEMU_ERROR_UNSUPPORTED with the line in
 *         dlcemu_last_error_detail() when the text cannot be run.
 */
int dlcemu_module_load_data(dlcemu_module *mod, const char *ptx_text);
/** Free a module, its functions and its .global/.const variables. */
int dlcemu_module_unload(dlcemu_module mod);
/** Look up a `.entry` by its (mangled) name. */
int dlcemu_module_get_function(dlcemu_function *fn, dlcemu_module mod, const char *name);
/**
 * Address and size of a module-scope `.global` or `.const` variable
 * (like cuModuleGetGlobal); either output may be NULL.
 */
int dlcemu_module_get_global(dlcemu_deviceptr *ptr, size_t *bytes, dlcemu_module mod,
                             const char *name);

/** Allocate @p bytes (256-byte aligned, contents undefined) of emulator global memory. */
int dlcemu_mem_alloc(dlcemu_deviceptr *ptr, size_t bytes);
/** Free an allocation made by dlcemu_mem_alloc(); anything else is ::DLCEMU_ERROR_INVALID_POINTER. */
int dlcemu_mem_free(dlcemu_deviceptr ptr);
/** Copy host memory into an allocation; the destination range must lie inside one allocation. */
int dlcemu_memcpy_htod(dlcemu_deviceptr dst, const void *src, size_t bytes);
/** Copy from an allocation to host memory; the source range must lie inside one allocation. */
int dlcemu_memcpy_dtoh(void *dst, dlcemu_deviceptr src, size_t bytes);
/** Set @p bytes of an allocation to the byte @p value. */
int dlcemu_memset_d8(dlcemu_deviceptr dst, unsigned char value, size_t bytes);

/**
 * Run a kernel to completion.  Blocks run one after another in linear order;
 * the run is deterministic.
 * @param fn           the kernel, from dlcemu_module_get_function()
 * @param gx,gy,gz     grid size in blocks
 * @param bx,by,bz     block size in threads
 * @param shared_bytes dynamic shared memory (the `extern .shared` array)
 * @param params       as in cuLaunchKernel: params[i] points to the value of
 *                     the i-th kernel parameter (its size is taken from the PTX)
 * @return 0, or the memcheck / deadlock / trap status of the first error; the
 *         message is in dlcemu_last_error_detail().  Statistics are available
 *         either way through dlcemu_last_launch_stats_json().
 */
int dlcemu_launch_kernel(dlcemu_function fn,
                         unsigned gx, unsigned gy, unsigned gz,
                         unsigned bx, unsigned by, unsigned bz,
                         unsigned shared_bytes, void **params);

/** Tensor map element types: the values of CUDA's CUtensorMapDataType. */
enum {
  DLCEMU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  DLCEMU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
  DLCEMU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
  DLCEMU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
  DLCEMU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
  DLCEMU_TENSOR_MAP_DATA_TYPE_INT64 = 5,
  DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
  DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
  DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8,
  DLCEMU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
  DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ = 10,
  DLCEMU_TENSOR_MAP_DATA_TYPE_TFLOAT32 = 11,
  DLCEMU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ = 12,
  DLCEMU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B = 13,
  DLCEMU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B = 14,
  DLCEMU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B = 15
};
/** CUtensorMapInterleave */
enum { DLCEMU_TENSOR_MAP_INTERLEAVE_NONE = 0, DLCEMU_TENSOR_MAP_INTERLEAVE_16B = 1, DLCEMU_TENSOR_MAP_INTERLEAVE_32B = 2 };
/** CUtensorMapSwizzle */
enum {
  DLCEMU_TENSOR_MAP_SWIZZLE_NONE = 0,
  DLCEMU_TENSOR_MAP_SWIZZLE_32B = 1,
  DLCEMU_TENSOR_MAP_SWIZZLE_64B = 2,
  DLCEMU_TENSOR_MAP_SWIZZLE_128B = 3,
  DLCEMU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B = 4,
  DLCEMU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5,
  DLCEMU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B = 6
};
/** CUtensorMapL2promotion */
enum {
  DLCEMU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  DLCEMU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1,
  DLCEMU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
  DLCEMU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3
};
/** CUtensorMapFloatOOBfill */
enum { DLCEMU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0, DLCEMU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1 };

/**
 * Encode a tiled tensor map, as cuTensorMapEncodeTiled does: the same
 * parameters in the same order, the same enum values and the same
 * validation (::DLCEMU_ERROR_INVALID_VALUE with the broken rule in
 * dlcemu_last_error_detail()).  @p tensor_map is the 128-byte, 64-byte aligned
 * object a kernel receives by value as a `const __grid_constant__ CUtensorMap`
 * parameter (pass a pointer to it in the launch's params).  Its contents are
 * the emulator's own encoding.  Valid maps the emulator's TMA does not
 * implement (interleaved layouts, the sm_100 128B_ATOM swizzles, packed 4/6-bit
 * types) are ::DLCEMU_ERROR_UNSUPPORTED.
 */
int dlcemu_tensor_map_encode_tiled(void *tensor_map, int data_type, uint32_t rank,
                                   dlcemu_deviceptr global_address, const uint64_t *global_dim,
                                   const uint64_t *global_strides, const uint32_t *box_dim,
                                   const uint32_t *element_strides, int interleave, int swizzle,
                                   int l2_promotion, int oob_fill);

/** Name of a status ("DLCEMU_ERROR_OUT_OF_BOUNDS", ...); never NULL. */
const char *dlcemu_error_string(int status);
/** Full message of the last failure on this thread ("" if none); valid until the next call. */
const char *dlcemu_last_error_detail(void);

/** Attributes of a function, read with dlcemu_function_get_attribute(). */
typedef enum dlcemu_function_attribute {
  DLCEMU_FUNC_ATTRIBUTE_NUM_PARAMS = 0,         /**< number of kernel parameters */
  DLCEMU_FUNC_ATTRIBUTE_PARAM_BYTES = 1,        /**< size of the parameter buffer */
  DLCEMU_FUNC_ATTRIBUTE_STATIC_SHARED_BYTES = 2,/**< static `.shared` bytes of the kernel and its callees */
  DLCEMU_FUNC_ATTRIBUTE_LOCAL_BYTES = 3,        /**< `.local` bytes per thread */
  DLCEMU_FUNC_ATTRIBUTE_MAX_THREADS = 4,        /**< from .maxntid/.reqntid, else 1024 */
  DLCEMU_FUNC_ATTRIBUTE_NUM_REGS = 5,           /**< PTX virtual registers (all functions reached) */
  DLCEMU_FUNC_ATTRIBUTE_NUM_INSTRUCTIONS = 6,   /**< decoded instructions (all functions reached) */
  /**
   * The most dynamic shared memory a launch may ask for, as CUDA's
   * cudaFuncAttributeMaxDynamicSharedMemorySize: 48 KB less the static
   * shared bytes until dlcemu_function_set_attribute() raises it (to at most
   * the device's opt-in limit less the static bytes: 227 KB on sm_90, 163 KB
   * on sm_80).  A launch over it fails with ::DLCEMU_ERROR_LAUNCH_CONFIG, as
   * it does on a GPU.
   */
  DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES = 7
} dlcemu_function_attribute;

/** Read an attribute of @p fn into @p value. */
int dlcemu_function_get_attribute(int *value, dlcemu_function_attribute attrib, dlcemu_function fn);
/** Set an attribute of @p fn, as cudaFuncSetAttribute: only
 *  ::DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES can be set. */
int dlcemu_function_set_attribute(dlcemu_function fn, dlcemu_function_attribute attrib, int value);
/** Offset and size in bytes of kernel parameter @p index in the parameter buffer. */
int dlcemu_function_get_param_info(dlcemu_function fn, int index, size_t *offset, size_t *bytes);

/** Per-thread settings, changed with dlcemu_set_limit(). */
typedef enum dlcemu_limit {
  /** Abort a launch with ::DLCEMU_ERROR_LIMIT after this many warp-instructions (default 2e10; 0 = none). */
  DLCEMU_LIMIT_WARP_INSTRUCTIONS = 0,
  /** Nonzero: reading shared memory never written in the block is an ::DLCEMU_ERROR_POISON error (default 0). */
  DLCEMU_LIMIT_CHECK_UNINIT_SHARED = 1,
  /**
   * Nonzero (the default): a shared-memory access by one warp that conflicts
   * with an access by another warp not ordered by a barrier (a read after an
   * unordered write, a write after an unordered read or write) is an
   * ::DLCEMU_ERROR_RACE error.  Atomics, .volatile/.relaxed/.acquire/.release
   * accesses and writes of the value already stored are not races.
   */
  DLCEMU_LIMIT_CHECK_SHARED_RACES = 2
} dlcemu_limit;

/** Change a per-thread setting for subsequent launches on this thread. */
int dlcemu_set_limit(dlcemu_limit which, unsigned long long value);

/** Shared-memory traffic of one instruction kind. */
typedef struct dlcemu_shared_stats {
  unsigned long long requests;        /**< warp-level instructions with at least one active lane */
  unsigned long long bytes;           /**< bytes requested by the active lanes */
  unsigned long long wavefronts;      /**< wavefronts the hardware needs (bank conflicts included) */
  unsigned long long ideal_wavefronts;/**< ceil(bytes / 128), at least 1, per request */
} dlcemu_shared_stats;

/** Global-memory traffic of one access kind. */
typedef struct dlcemu_global_stats {
  unsigned long long requests;        /**< warp-level instructions with at least one active lane */
  unsigned long long bytes;           /**< bytes requested by the active lanes */
  unsigned long long sectors;         /**< distinct 32-byte sectors touched, summed over requests */
} dlcemu_global_stats;

/** Instruction classes counted in dlcemu_launch_stats::class_count. */
typedef enum dlcemu_class {
  DLCEMU_CLASS_INT, DLCEMU_CLASS_FP32, DLCEMU_CLASS_FP16, DLCEMU_CLASS_FP64,
  DLCEMU_CLASS_CONVERT, DLCEMU_CLASS_MOVE, DLCEMU_CLASS_SFU, DLCEMU_CLASS_LOAD_STORE,
  DLCEMU_CLASS_ATOMIC, DLCEMU_CLASS_CONTROL, DLCEMU_CLASS_BARRIER, DLCEMU_CLASS_WARP,
  DLCEMU_CLASS_TENSOR, DLCEMU_CLASS_ASYNC_COPY, DLCEMU_CLASS_OTHER,
  DLCEMU_CLASS_COUNT
} dlcemu_class;

/** Statistics of one launch (see docs/emulator.md for the JSON form). */
typedef struct dlcemu_launch_stats {
  unsigned long long warp_instructions;   /**< warp-level instructions issued */
  unsigned long long thread_instructions; /**< sum of active lanes over issued instructions */
  unsigned long long class_count[DLCEMU_CLASS_COUNT]; /**< warp instructions per class */
  dlcemu_global_stats global_load;       /**< ld.global and the global reads of cp.async */
  dlcemu_global_stats global_store;      /**< st.global */
  dlcemu_global_stats global_atomic;     /**< atom.global and red.global */
  dlcemu_shared_stats shared_load;       /**< ld.shared */
  dlcemu_shared_stats shared_store;      /**< st.shared */
  dlcemu_shared_stats shared_atomic;     /**< atom.shared and red.shared */
  dlcemu_shared_stats ldmatrix;          /**< ldmatrix reads */
  dlcemu_shared_stats stmatrix;          /**< stmatrix writes */
  dlcemu_shared_stats cp_async;          /**< the shared-memory writes of cp.async */
  unsigned long long local_requests;     /**< warp-level ld/st.local instructions */
  unsigned long long local_bytes;        /**< bytes they moved over the active lanes */
  unsigned long long cp_async_copies;    /**< per-thread cp.async copies queued */
  unsigned long long cp_async_bytes;     /**< bytes those copies write (zero-fill included) */
  unsigned long long cp_async_groups;    /**< warp-level cp.async.commit_group instructions */
  unsigned long long cp_async_waits;     /**< warp-level cp.async.wait_group / wait_all instructions */
  unsigned long long barriers;            /**< barrier completions (all participants released) */
  unsigned long long barrier_arrivals;    /**< warp arrivals at barriers */
  unsigned long long warpgroup_syncs;     /**< warpgroup collectives completed (all 4 warps met) */
  unsigned long long blocks;              /**< blocks run */
  /* sm_90a (appended: the fields above keep their offsets) */
  unsigned long long mbarrier_ops;        /**< warp-level mbarrier instructions (init, inval, arrive, expect/complete_tx, waits) */
  unsigned long long mbarrier_phases;     /**< mbarrier phases completed */
  unsigned long long tma_copies;          /**< cp.async.bulk.tensor copies, loads and stores (one per issuing thread) */
  unsigned long long tma_bytes;           /**< box bytes those copies move (zero fill included) */
  unsigned long long wgmma_ops;           /**< wgmma.mma_async instructions (one per warpgroup) */
  /* appended after the sm_90a fields */
  unsigned long long mma_ops;             /**< warp-level mma.sync instructions */
  unsigned long long tensor_flops;        /**< 2*m*n*k over the mma.sync and wgmma.mma_async issued (padding included) */
} dlcemu_launch_stats;

/** Copy the calling thread's last launch statistics into @p out. */
int dlcemu_last_launch_stats(dlcemu_launch_stats *out);
/**
 * The calling thread's last launch statistics as one JSON object (schema in
 * docs/emulator.md); "{}" before the first launch.  Valid until the next launch
 * on this thread.
 */
const char *dlcemu_last_launch_stats_json(void);
/**
 * The calling thread's statistics summed over every launch since the last
 * dlcemu_thread_stats_reset() (or the thread's first launch): each field of
 * @p out the sum of that field over the launches, and @p launches (may be
 * NULL) their number.  What an entry point that runs a chain of kernels
 * moves in all, where dlcemu_last_launch_stats() sees only its last kernel.
 */
int dlcemu_thread_stats(dlcemu_launch_stats *out, unsigned long long *launches);
/** Zero the calling thread's sums of dlcemu_thread_stats(). */
void dlcemu_thread_stats_reset(void);

#ifdef __cplusplus
}
#endif
#endif /* DLC_DLCEMU_H */
