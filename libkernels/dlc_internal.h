/* Internal interface between the generated dispatch code (dlc_dispatch.c)
 * and the runtime: status details, index helpers, the kernel table row, and
 * the two backends (backend_cuda.c, backend_emu.c) that launch a row. */
#ifndef DLC_INTERNAL_H
#define DLC_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "dlc/dlc.h"

/* Archs a kernel row was compiled for. */
enum {
  DLC__ARCH_SM80 = 1 << 0,  /* runs on compute capability 8.x */
  DLC__ARCH_SM86 = 1 << 1,
  DLC__ARCH_SM89 = 1 << 2,
  DLC__ARCH_SM90A = 1 << 3,
  DLC__ARCH_SM100 = 1 << 4, /* 10.x */
  DLC__ARCH_SM120 = 1 << 5  /* 12.x */
};

/* One row of the dispatch table: a compiled kernel. */
typedef struct dlc__kernel {
  const char *name; /* entry point name in the SASS / PTX */
  int op;           /* index of its op (dlc_ops.def) */
  int index;        /* index in its op's kernel list */
  int threads;      /* block size */
  int smem;         /* dynamic shared memory, bytes */
  unsigned archs;   /* DLC__ARCH_* bits */
  /* its plan (docs/plan.md), for tools that estimate a call (bench/dlc-bench):
   * BM, BN, BK, stages, warps along M and N, raster group (0: attention's
   * fixed order), the plan's extra address registers */
  short bm, bn, bk, stages, warps_m, warps_n, raster, addr_regs;
  /* split-K: the plan's slices at most (0: no split), and 1 on its second
   * kernel (the one that sums the partials and applies the epilogue) */
  short split, split_reduce;
} dlc__kernel;

/* The column of a chunk width in the generated dlc__row_<op> tables:
 * 8, 4, 2, 1 elements -> 0, 1, 2, 3. */
static inline int dlc__width_slot(int vec) { return vec >= 8 ? 0 : vec >= 4 ? 1 : vec >= 2 ? 2 : 3; }

/* Sets the thread's detail string and returns `s`. */
dlc_status dlc__fail(dlc_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clears it; every entry point starts with this, which also counts the
 * thread's calls in dlc__call_epoch (the CUDA backend asks the runtime for
 * the current device once a call, not once a launch). */
void dlc__clear_detail(void);
extern _Thread_local unsigned dlc__call_epoch;
const char *dlc__dtype_name(dlc_dtype t);

static inline int dlc__aligned(const void *p, int bytes) { return ((uintptr_t)p % (uintptr_t)bytes) == 0; }

/* Checked int64 arithmetic for the generated dispatch.  The entry points
 * evaluate every shape, stride and grid expression with these, never with
 * the plain operators, so that no argument can make them overflow (undefined
 * behaviour).  DLC__OVF, the one value an int64_t has without a negation, is
 * the poison: a result that leaves [-(2^63 - 1), 2^63 - 1], a division by
 * zero, or any operand that is already DLC__OVF gives DLC__OVF.  A check
 * then needs to look at the final value only. */
#define DLC__OVF INT64_MIN
static inline int64_t dlc__add(int64_t a, int64_t b) {
  int64_t r;
  return a == DLC__OVF || b == DLC__OVF || __builtin_add_overflow(a, b, &r) ? DLC__OVF : r;
}
static inline int64_t dlc__sub(int64_t a, int64_t b) {
  int64_t r;
  return a == DLC__OVF || b == DLC__OVF || __builtin_sub_overflow(a, b, &r) ? DLC__OVF : r;
}
static inline int64_t dlc__mul(int64_t a, int64_t b) {
  int64_t r;
  return a == DLC__OVF || b == DLC__OVF || __builtin_mul_overflow(a, b, &r) ? DLC__OVF : r;
}
/* floor(a / b) */
static inline int64_t dlc__fdiv(int64_t a, int64_t b) {
  if (a == DLC__OVF || b == DLC__OVF || b == 0) return DLC__OVF;
  int64_t q = a / b; /* no INT64_MIN / -1: a is not DLC__OVF */
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
/* a - b * floor(a / b) */
static inline int64_t dlc__fmod(int64_t a, int64_t b) { return dlc__sub(a, dlc__mul(dlc__fdiv(a, b), b)); }
/* v is a multiple of w (and not the poison) */
static inline int dlc__divisible(int64_t v, int64_t w) { return v != DLC__OVF && v % w == 0; }
/* A shape bucket's bound on a product of dims (conv's N P Q): the product
 * as the selection compares it, the poison past every upper bound. */
static inline int64_t dlc__bound_value(int64_t v) { return v == DLC__OVF ? INT64_MAX : v; }

/* The tensor checks of an entry point (runtime.c); each returns
 * DLC_SUCCESS or fails with a detail that names the op, the argument and the
 * offending value.  For a tensor `arg` of `elem` bytes per element:
 *   - every dim is >= 0 (and not DLC__OVF);
 *   - rank 2 with a leading dimension: ld >= max(1, cols), and the span
 *     (rows - 1) * ld + cols (0 when the tensor is empty) fits in int64;
 *     packed: every stride (product of the trailing dims) and the element
 *     count fit in int64;
 *   - the span in bytes fits in int64, and p + bytes does not wrap;
 *   - p is not NULL unless the tensor has no elements;
 *   - p is aligned to `elem` bytes, NULL or not (DLC_ERROR_MISALIGNED).
 * `*sp` receives the tensor's element count and the bytes it covers, for
 * dlc__check_disjoint. */
typedef struct dlc__span {
  const char *arg;
  uintptr_t lo, hi; /* the first byte, one past the last */
  int64_t count;  /* elements; 0: the tensor covers no byte */
  int64_t rows;   /* rows of `width` bytes, `pitch` bytes apart (packed: one row) */
  int64_t pitch, width;
} dlc__span;
dlc_status dlc__check_rows(const char *op, const char *arg, const void *p, int elem, int64_t rows, int64_t cols,
                           int64_t ld, dlc__span *sp);
dlc_status dlc__check_packed(const char *op, const char *arg, const void *p, int elem, int rank, const int64_t *dims,
                             dlc__span *sp);

/* No output shares a byte with an input, another output or the workspace,
 * and the workspace shares none with an input (in-place calls are not
 * supported: a kernel may read an input after another CTA wrote the output).
 * sp[0..nin) are the inputs, sp[nin..n) the outputs, both as the checks above
 * left them.  Two tensors of rows with the same pitch are compared row by
 * row (a packed QKV buffer's column slices do not overlap); any other pair
 * by the bytes from its first to its last (DLC_ERROR_INVALID_VALUE when
 * they meet, naming both). */
dlc_status dlc__check_disjoint_rows(const char *op, const dlc__span *sp, int nin, int n, const void *workspace,
                                    size_t workspace_bytes);
/* The common case inline (every pair's byte ranges apart, a few compares);
 * any pair whose ranges meet goes to dlc__check_disjoint_rows. */
static inline dlc_status dlc__check_disjoint(const char *op, const dlc__span *sp, int nin, int n, const void *workspace,
                                             size_t workspace_bytes) {
  const uintptr_t wlo = (uintptr_t)workspace, wend = wlo + (workspace ? workspace_bytes : 0);
  for (int o = 0; o < n; o++) {
    if (sp[o].count == 0) continue;
    if (sp[o].lo < wend && wlo < sp[o].hi)
      return dlc__check_disjoint_rows(op, sp, nin, n, workspace, workspace_bytes);
    if (o < nin) continue;
    for (int t = 0; t < o; t++)
      if (sp[t].count > 0 && sp[o].lo < sp[t].hi && sp[t].lo < sp[o].hi)
        return dlc__check_disjoint_rows(op, sp, nin, n, workspace, workspace_bytes);
  }
  return DLC_SUCCESS;
}

/* The last launch on this thread: every backend records the row and grid
 * of each successful launch (dlc__record_launch, runtime.c).  bench/ and the
 * null-backend tests read it; the shared libraries do not export it. */
typedef struct dlc__launch_rec {
  const dlc__kernel *kernel; /* the row dispatch chose */
  unsigned grid[3];
  long count;                /* launches so far on this thread */
} dlc__launch_rec;
void dlc__record_launch(const dlc__kernel *k, unsigned gx, unsigned gy, unsigned gz);
const dlc__launch_rec *dlc__last_launch(void);

/* dlc_<op>_query(): dlc__query_begin zeroes *info and makes it the calling
 * thread's query sink; while one is set, every backend's dlc__launch runs
 * its checks (device, arch) and then hands the launch to dlc__query_launch,
 * which records it into the sink and launches nothing; the generated
 * dispatch notes the workspace its plan uses with dlc__query_workspace (a
 * no-op outside a query).  dlc__query_end clears the sink, zeroes *info
 * again when the call failed, and returns the call's status. */
void dlc__query_begin(dlc_launch_info *info);
dlc_status dlc__query_end(dlc_status s);
int dlc__query_launch(const dlc__kernel *k, unsigned gx, unsigned gy, unsigned gz);
void dlc__query_workspace(int64_t bytes);

/* A chain's workspace as an arena (issue 37 item 3): value i, of bytes[i]
 * bytes, is written by the chain's kernel born[i] and read last by kernel
 * dies[i].  dlc__arena_place gives each value an offset, off[i], a
 * multiple of 256, such that two values whose kernel intervals
 * [born, dies] meet never share a byte, while a value dead after kernel t
 * leaves its bytes to one born after t (the kernels run in stream order).
 * It returns the workspace the placement needs (the end of the highest
 * value), DLC__OVF when a size is negative, DLC__OVF, or the sum of the
 * sizes overflows, and records the placement as the thread's last arena,
 * for tests.  Placement: first fit at the lowest offset, the values taken
 * in each of three orders (by size, by birth, by lifetime; ties by index),
 * the order with the smallest workspace kept; deterministic, a function of
 * the sizes alone. */
enum { DLC__ARENA_MAX = 16 };
typedef struct dlc__arena_rec {
  int n;
  int64_t bytes[DLC__ARENA_MAX], off[DLC__ARENA_MAX]; /* bytes rounded up to 256 */
  signed char born[DLC__ARENA_MAX], dies[DLC__ARENA_MAX];
  int64_t peak;   /* the workspace: max(off + bytes) */
  int64_t lower;  /* the most bytes live at one kernel: no placement needs less */
  long count;     /* placements so far on this thread */
} dlc__arena_rec;
int64_t dlc__arena_place(int n, const int64_t *bytes, const signed char *born, const signed char *dies, int64_t *off);
const dlc__arena_rec *dlc__last_arena(void);
/* After the chain's last reader of a value: the emulator backend fills its
 * bytes with 0xff (a NaN in every float dtype), so that a kernel that read
 * a value the placement had thought dead, or one whose bytes a later value
 * took, reads NaN (test_every_kernel then fails on the output); the other
 * backends, and any backend during a query, do nothing. */
void dlc__arena_release(void *p, int64_t bytes);
int dlc__query_active(void);

/* dlc_build_info()'s parts: the manifest's, generated into dlc_dispatch.c
 * (one JSON object: the manifest's name and hash, the ops, the archs of
 * the dispatch), and the backend's: its name ("cuda", "emulator", "null"), the
 * CUDA runtime version it was built with (CUDART_VERSION, 0 without one),
 * and the archs it holds SASS for, as a JSON array (the CUDA libraries':
 * sass_archs.c, written by cmake/DlcKernels.cmake; "[]" otherwise). */
extern const char dlc__sass_archs[];
extern const char dlc__build_manifest[];
extern const char dlc__backend_name[];
extern const int dlc__cuda_runtime_version;

/* The backend: launches row `k` with the parameter block `params` (one
 * by-value kernel argument of `size` bytes) on a gx x gy x gz grid. */
dlc_status dlc__launch(const dlc__kernel *k, const void *params, size_t size, unsigned gx, unsigned gy, unsigned gz,
                       struct CUstream_st *stream);

/* The arch bit (DLC__ARCH_*) of the device the backend launches on: the
 * current CUDA device's, the emulated one's (DLC_EMU_ARCH), dlc__null_arch
 * for the null backend; 0 when there is none (the launch then reports why).
 * The generated entry points run an op's sm90a kernel only where this is
 * DLC__ARCH_SM90A. */
unsigned dlc__device_arch(void);
/* The arch the null backend plays (libdlckernels-null only): DLC__ARCH_SM80
 * unless a test or bench sets it before its calls. */
extern unsigned dlc__null_arch;

/* Encodes the 2-D tiled tensor map (a CUtensorMap: 128 bytes, 64-byte
 * aligned) of a row-major matrix of `outer` rows of `inner` elements of
 * `dtype`, rows `ld` elements apart, read in boxes of box_inner x box_outer
 * elements with the 128-byte swizzle and zero fill out of bounds: through
 * the driver's cuTensorMapEncodeTiled (CUDA backend, obtained with
 * cudaGetDriverEntryPointByVersion: nothing links -lcuda), with
 * dlcemu_tensor_map_encode_tiled (emulator backend), or not at all (null
 * backend: success).  Fails, with a detail, where the tensor map cannot
 * describe the matrix (base not 16-byte aligned, rows not a multiple of 16
 * bytes apart, a dim of 0 or past 2^32); the entry point then runs the
 * op's other kernels. */
dlc_status dlc__tmap_encode_2d(void *map, dlc_dtype dtype, const void *base, int64_t inner, int64_t outer, int64_t ld,
                               int box_inner, int box_outer);

/* Encodes the tiled tensor map of a tensor of `rank` (2 to 5) dims, dims[0]
 * the contiguous one and the others strides[i - 1] elements apart, read in
 * boxes of box[0] x ... elements (box[0] whole 128-byte swizzle rows), with
 * the 128-byte swizzle and zero fill out of bounds, as dlc__tmap_encode_2d
 * does (the sm90a attention kernels' Q, K and V).  Fails, with a detail,
 * where a tensor map cannot describe the tensor (base not 16-byte aligned,
 * a stride not a nonzero multiple of 16 bytes, a dim of 0 or past the
 * kernels' int32 coordinates); the entry point then runs the op's other
 * kernels. */
dlc_status dlc__tmap_encode_nd(void *map, dlc_dtype dtype, const void *base, int rank, const int64_t *dims,
                               const int64_t *strides, const int *box);

/* The checks of dlc__tmap_encode_nd, shared by the backends. */
dlc_status dlc__tmap_check_nd(dlc_dtype dtype, const void *base, int rank, const int64_t *dims, const int64_t *strides,
                              const int *box, int *elem);

/* The checks shared by the backends' encoders: DLC_SUCCESS when a 2-D tiled
 * tensor map can describe the matrix, with its element size in *elem. */
dlc_status dlc__tmap_check_2d(dlc_dtype dtype, const void *base, int64_t inner, int64_t outer, int64_t ld, int box_inner,
                              int box_outer, int *elem);

/* For tests (libdlckernels-emu and libdlckernels): when set, called before
 * every launch with the row and the grid (the emulator backend holds its
 * lock); a nonzero return skips the launch (a dry run: dlc__launch returns
 * DLC_SUCCESS and nothing runs).  It shows which kernels an entry point
 * selects and runs (tests/kernels/test_every_kernel.c, in the emulator and
 * on a GPU).  Defined in runtime.c; internal: the shared libraries do not
 * export it. */
extern int (*dlc__launch_hook)(const dlc__kernel *k, unsigned gx, unsigned gy, unsigned gz);

/* Plans (plan.c; issue 37): dlc_<op>_plan_create() checks its arguments,
 * then dlc__plan_new makes the plan: the dims its params fix, and the
 * ConstPool, one device buffer (dlc__dev_alloc) in which param i lies at
 * off[i] (a multiple of DLC__POOL_ALIGN, enough for every vector and TMA
 * load), in order, a rank-2 one with its rows ld[i] elements apart (the
 * row's bytes rounded up to 16: TMA's pitch, and the widest chunk's); the generated code copies the params in
 * (dlc__dev_copy_2d, then dlc__dev_sync) and hands the plan out with
 * dlc__plan_publish, which gives it a handle (or frees it on failure), or
 * frees it with dlc__plan_discard.  Every other plan function first takes
 * the plan from its handle with dlc__plan_acquire (NULL with *st and the
 * detail set when the handle is NULL, destroyed, never created or another
 * op's), and gives it back with dlc__plan_release; with `run`, the plan's
 * lock is held in between, so that calls on one plan run one at a time.
 * dlc__plan_destroy makes the handle stale at once and frees the plan when
 * its last user gives it back; a stale or foreign handle is ignored. */
enum { DLC__PLAN_MAX = 16, DLC__POOL_ALIGN = 256 };
typedef struct dlc__plan {
  int op;                /* dlc_ops.def's index */
  dlc_dtype dtype;
  int nfixed, npool;
  int64_t fixed[DLC__PLAN_MAX];                      /* the fixed dims' values, in argument order */
  int64_t off[DLC__PLAN_MAX], bytes[DLC__PLAN_MAX];  /* the pooled params' places in the pool */
  int64_t ld[DLC__PLAN_MAX];   /* a rank-2 param's rows, elements apart in the pool (16-byte multiples); 0: packed */
  void *pool;            /* the ConstPool (NULL when no param is pooled) */
  size_t pool_bytes;
  void *cache;           /* the backend's: the CUDA graphs of the shape sets seen */
  pthread_mutex_t run;   /* held by a running call */
  int users, dead;       /* under plan.c's table lock */
} dlc__plan;
dlc_status dlc__plan_new(const char *fn, int op, dlc_dtype dtype, int nfixed, const int64_t *fixed, int npool,
                         const int64_t *bytes, const int64_t *ld, struct CUstream_st *stream, dlc__plan **out);
dlc_status dlc__plan_publish(const char *fn, dlc__plan *p, const void **handle);
void dlc__plan_discard(dlc__plan *p);
dlc__plan *dlc__plan_acquire(const void *handle, int op, const char *fn, int run, dlc_status *st);
void dlc__plan_release(dlc__plan *p, int run);
void dlc__plan_destroy(const void *handle, int op);
/* For tests: the live plan a handle names, or NULL (not held: the caller
 * must not destroy it meanwhile). */
const dlc__plan *dlc__plan_peek(const void *handle);

/* The backends' part of plans.  Device memory: cudaMalloc, the emulator's,
 * or aligned host memory for the null backend (which runs no kernel and
 * copies nothing); a 2-D copy of `rows` rows of `width` bytes, device to
 * device, stream-ordered; dlc__dev_sync waits for the stream's work. */
dlc_status dlc__dev_alloc(void **p, size_t bytes, struct CUstream_st *stream);
void dlc__dev_free(void *p);
dlc_status dlc__dev_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t rows,
                            struct CUstream_st *stream);
dlc_status dlc__dev_sync(struct CUstream_st *stream);
/* A plan's call: body(args, stream) runs dlc_<op>_ws with the arguments
 * `args` holds (args_bytes of them, no padding; the first shape_bytes are
 * the dtype, dims and attrs: its shape set).  The CUDA backend captures
 * the launches into a CUDA graph the first time it sees the arguments and
 * replays it (updated in place for new pointers of a shape set it has
 * seen), and runs body directly on a stream that is being captured; the
 * other backends run body. */
typedef dlc_status (*dlc__plan_body)(const void *args, struct CUstream_st *stream);
dlc_status dlc__plan_exec(dlc__plan *p, const void *args, size_t args_bytes, size_t shape_bytes, dlc__plan_body body,
                          struct CUstream_st *stream);
void dlc__plan_cache_free(dlc__plan *p);

#endif
