/* Backend-independent runtime: status names, the thread-local detail
 * string (spec §12: errors are explicit diagnostics, not crashes), and the
 * tensor checks that every generated entry point runs before its launch. */
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dlc_internal.h"

#define DLC_STR_(x) #x
#define DLC_STR(x) DLC_STR_(x)
/* from the header's macros, so that library and header agree by construction */
#define DLC_VERSION_STRING DLC_STR(DLC_VERSION_MAJOR) "." DLC_STR(DLC_VERSION_MINOR) "." DLC_STR(DLC_VERSION_PATCH)

static _Thread_local char detail[512];

const char *dlc_status_string(dlc_status s) {
  switch (s) {
  case DLC_SUCCESS: return "DLC_SUCCESS";
  case DLC_ERROR_INVALID_VALUE: return "DLC_ERROR_INVALID_VALUE";
  case DLC_ERROR_NOT_SUPPORTED: return "DLC_ERROR_NOT_SUPPORTED";
  case DLC_ERROR_MISALIGNED: return "DLC_ERROR_MISALIGNED";
  case DLC_ERROR_NO_DEVICE: return "DLC_ERROR_NO_DEVICE";
  case DLC_ERROR_LAUNCH_FAILED: return "DLC_ERROR_LAUNCH_FAILED";
  case DLC_ERROR_INTERNAL: return "DLC_ERROR_INTERNAL";
  case DLC_ERROR_OUT_OF_MEMORY: return "DLC_ERROR_OUT_OF_MEMORY";
  }
  return "DLC_ERROR_UNKNOWN";
}

const char *dlc_last_error_detail(void) { return detail; }

int (*dlc__launch_hook)(const dlc__kernel *k, unsigned gx, unsigned gy, unsigned gz);

static _Thread_local dlc__launch_rec last_launch;

void dlc__record_launch(const dlc__kernel *k, unsigned gx, unsigned gy, unsigned gz) {
  last_launch.kernel = k;
  last_launch.grid[0] = gx, last_launch.grid[1] = gy, last_launch.grid[2] = gz;
  last_launch.count++;
}

const dlc__launch_rec *dlc__last_launch(void) { return &last_launch; }

static _Thread_local dlc_launch_info *query;

void dlc__query_begin(dlc_launch_info *info) {
  *info = (dlc_launch_info){.kernel = "", .arch = ""};
  query = info;
}

dlc_status dlc__query_end(dlc_status s) {
  if (s != DLC_SUCCESS) *query = (dlc_launch_info){.kernel = "", .arch = ""};
  query = NULL;
  return s;
}

/* The code a row runs, from the bits of its archs that the device runs:
 * the newest. */
static const char *arch_name(unsigned bits) {
  if (bits & DLC__ARCH_SM120) return "sm_120";
  if (bits & DLC__ARCH_SM100) return "sm_100";
  if (bits & DLC__ARCH_SM90A) return "sm_90a";
  if (bits & DLC__ARCH_SM89) return "sm_89";
  if (bits & DLC__ARCH_SM86) return "sm_86";
  if (bits & DLC__ARCH_SM80) return "sm_80";
  return "";
}

int dlc__query_launch(const dlc__kernel *k, unsigned gx, unsigned gy, unsigned gz) {
  dlc_launch_info *q = query;
  if (!q) return 0;
  if (q->kernels++ == 0) {
    q->kernel = k->name;
    q->arch = arch_name(k->archs & dlc__device_arch());
    q->tile_m = k->bm, q->tile_n = k->bn, q->tile_k = k->bk;
    q->threads = k->threads, q->smem_bytes = k->smem;
  }
  int64_t n;
  if (__builtin_mul_overflow((int64_t)gx * gy, (int64_t)gz, &n) || __builtin_add_overflow(q->ctas, n, &q->ctas))
    q->ctas = INT64_MAX; /* past any grid a device takes */
  return 1;
}

void dlc__query_workspace(int64_t bytes) {
  if (query && bytes > 0) query->workspace_bytes = (size_t)bytes;
}

int dlc__query_active(void) { return query != NULL; }

static _Thread_local dlc__arena_rec arena_last;

const dlc__arena_rec *dlc__last_arena(void) { return &arena_last; }

/* First fit of value v at the lowest offset that no placed value whose
 * interval meets v's covers; the candidates are 0 and the ends of those. */
static int64_t arena_fit(const dlc__arena_rec *r, const bool *placed, int v) {
  int64_t best = -1;
  for (int c = -1; c < r->n; c++) {
    if (c >= 0 && !(placed[c] && r->born[c] <= r->dies[v] && r->born[v] <= r->dies[c])) continue;
    const int64_t at = c < 0 ? 0 : r->off[c] + r->bytes[c];
    if (best >= 0 && at >= best) continue;
    bool free_here = true;
    for (int j = 0; j < r->n && free_here; j++)
      free_here = !(placed[j] && r->born[j] <= r->dies[v] && r->born[v] <= r->dies[j] && r->bytes[j] > 0 &&
                    r->bytes[v] > 0 && at < r->off[j] + r->bytes[j] && r->off[j] < at + r->bytes[v]);
    if (free_here) best = at;
  }
  return best; /* some candidate is free: the end of the highest value meeting v */
}

/* whether value a goes before value b in order `o` (0: size, 1: birth, 2: lifetime) */
static bool arena_before(const dlc__arena_rec *r, int o, int a, int b) {
  const int64_t ka[3] = {-r->bytes[a], r->born[a], -(int64_t)(r->dies[a] - r->born[a])};
  const int64_t kb[3] = {-r->bytes[b], r->born[b], -(int64_t)(r->dies[b] - r->born[b])};
  for (int i = 0; i < 3; i++) {
    const int x = (o + i) % 3;
    if (ka[x] != kb[x]) return ka[x] < kb[x];
  }
  return a < b;
}

int64_t dlc__arena_place(int n, const int64_t *bytes, const signed char *born, const signed char *dies, int64_t *off) {
  dlc__arena_rec *r = &arena_last;
  const long count = r->count + 1;
  *r = (dlc__arena_rec){.n = n, .count = count, .peak = DLC__OVF, .lower = DLC__OVF};
  if (n < 0 || n > DLC__ARENA_MAX) return DLC__OVF;
  int64_t sum = 0;
  for (int i = 0; i < n; i++) {
    if (bytes[i] < 0) return DLC__OVF; /* DLC__OVF too */
    r->bytes[i] = dlc__mul(dlc__fdiv(dlc__add(bytes[i], 255), 256), 256);
    r->born[i] = born[i], r->dies[i] = dies[i];
    sum = dlc__add(sum, r->bytes[i]);
  }
  if (sum == DLC__OVF) return DLC__OVF;
  r->lower = 0;
  for (int i = 0; i < n; i++) { /* the live set is largest at some value's birth */
    int64_t live = 0;
    for (int j = 0; j < n; j++)
      if (r->born[j] <= r->born[i] && r->born[i] <= r->dies[j]) live += r->bytes[j];
    if (live > r->lower) r->lower = live;
  }
  int64_t best[DLC__ARENA_MAX], peak = DLC__OVF;
  for (int o = 0; o < 3; o++) {
    int ord[DLC__ARENA_MAX];
    for (int i = 0; i < n; i++) { /* insertion sort: n <= 16 */
      int j = i;
      for (; j > 0 && arena_before(r, o, i, ord[j - 1]); j--) ord[j] = ord[j - 1];
      ord[j] = i;
    }
    bool placed[DLC__ARENA_MAX] = {0};
    int64_t end = 0;
    for (int i = 0; i < n; i++) {
      const int v = ord[i];
      r->off[v] = arena_fit(r, placed, v);
      placed[v] = true;
      if (r->off[v] + r->bytes[v] > end) end = r->off[v] + r->bytes[v];
    }
    if (peak == DLC__OVF || end < peak) {
      peak = end;
      memcpy(best, r->off, sizeof(int64_t) * (size_t)n);
    }
  }
  memcpy(r->off, best, sizeof(int64_t) * (size_t)n);
  memcpy(off, best, sizeof(int64_t) * (size_t)n);
  return r->peak = peak;
}

const char *dlc_version(void) { return DLC_VERSION_STRING; }

int dlc_version_number(void) { return DLC_VERSION_MAJOR * 10000 + DLC_VERSION_MINOR * 100 + DLC_VERSION_PATCH; }

/* The oldest Linux driver branch that a CUDA runtime of a major version
 * runs on (CUDA's minor version compatibility: 12.x on r525 and later,
 * 13.x on r580 and later, from NVIDIA's release notes); NULL when unknown. */
static const char *min_driver(int cudart) {
  switch (cudart / 1000) {
  case 12: return "525";
  case 13: return "580";
  default: return NULL;
  }
}

static char build_info[4096];
static pthread_once_t build_info_once = PTHREAD_ONCE_INIT;

/* {"version", "version_number", the manifest's part, the backend's}: the
 * manifest's object (dlc_dispatch.c) is spliced in without its braces */
static void make_build_info(void) {
  const char *m = dlc__build_manifest;
  size_t n = strlen(m);
  int inner = n >= 2 && m[0] == '{' && m[n - 1] == '}' ? (int)(n - 2) : 0;
  char cudart[64] = "null", driver[64] = "null";
  int v = dlc__cuda_runtime_version;
  if (v > 0) {
    snprintf(cudart, sizeof cudart, "\"%d.%d\"", v / 1000, v % 1000 / 10);
    if (min_driver(v)) snprintf(driver, sizeof driver, "\"%s\"", min_driver(v));
  }
  int w = snprintf(build_info, sizeof build_info,
                   "{\"version\": \"%s\", \"version_number\": %d%s%.*s, \"sass_archs\": %s, "
                   "\"backend\": \"%s\", \"cuda_runtime\": %s, \"min_driver\": %s}",
                   DLC_VERSION_STRING, dlc_version_number(), inner ? ", " : "", inner, m + 1, dlc__sass_archs,
                   dlc__backend_name, cudart, driver);
  /* a manifest of very many ops: the version and the backend still, as valid JSON */
  if (w < 0 || (size_t)w >= sizeof build_info)
    snprintf(build_info, sizeof build_info,
             "{\"version\": \"%s\", \"version_number\": %d, \"backend\": \"%s\", \"truncated\": true}",
             DLC_VERSION_STRING, dlc_version_number(), dlc__backend_name);
}

const char *dlc_build_info(void) {
  pthread_once(&build_info_once, make_build_info);
  return build_info;
}

_Thread_local unsigned dlc__call_epoch;

void dlc__clear_detail(void) {
  detail[0] = 0;
  dlc__call_epoch++;
}

dlc_status dlc__fail(dlc_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return s;
}

const char *dlc__dtype_name(dlc_dtype t) {
  switch (t) {
  case DLC_F16: return "DLC_F16";
  case DLC_BF16: return "DLC_BF16";
  case DLC_F32: return "DLC_F32";
  }
  return NULL;
}

/* ---- tensor checks (dlc_internal.h) ------------------------------------- */

/* The checks every tensor shares once its span is known: bytes, NULL,
 * alignment, address wrap-around. */
static dlc_status check_span(const char *op, const char *arg, const void *p, int elem, int64_t span, int64_t count) {
  int64_t bytes;
  if (__builtin_mul_overflow(span, (int64_t)elem, &bytes))
    return dlc__fail(DLC_ERROR_INVALID_VALUE, "%s: %s spans %lld elements of %d bytes, more than 2^63 - 1 bytes", op, arg,
                     (long long)span, elem);
  if (count > 0 && !p) return dlc__fail(DLC_ERROR_INVALID_VALUE, "%s: %s is NULL but has %lld elements", op, arg, (long long)count);
  if ((uintptr_t)p % (uintptr_t)elem)
    return dlc__fail(DLC_ERROR_MISALIGNED, "%s: %s = %p is not aligned to its %d-byte elements", op, arg, p, elem);
  if ((uintptr_t)p > UINTPTR_MAX - (uint64_t)bytes)
    return dlc__fail(DLC_ERROR_INVALID_VALUE, "%s: %s = %p plus its span of %lld bytes wraps around the address space", op, arg,
                     p, (long long)bytes);
  return DLC_SUCCESS;
}

static dlc_status check_dim(const char *op, const char *arg, int axis, int64_t d) {
  if (d == DLC__OVF) return dlc__fail(DLC_ERROR_INVALID_VALUE, "%s: axis %d of %s overflows int64", op, axis, arg);
  if (d < 0) return dlc__fail(DLC_ERROR_INVALID_VALUE, "%s: axis %d of %s is %lld, negative", op, axis, arg, (long long)d);
  return DLC_SUCCESS;
}

dlc_status dlc__check_rows(const char *op, const char *arg, const void *p, int elem, int64_t rows, int64_t cols,
                           int64_t ld, dlc__span *sp) {
  dlc_status st;
  if ((st = check_dim(op, arg, 0, rows)) || (st = check_dim(op, arg, 1, cols))) return st;
  if (ld < 1 || ld < cols)
    return dlc__fail(DLC_ERROR_INVALID_VALUE, "%s: ld%s = %lld is smaller than max(1, %lld), the row length of %s", op, arg,
                     (long long)ld, (long long)cols, arg);
  /* rows * cols <= span when the tensor is not empty, since ld >= cols */
  int64_t n = 0, span = 0, bytes;
  if (rows > 0 && cols > 0 &&
      (__builtin_mul_overflow(rows - 1, ld, &span) || __builtin_add_overflow(span, cols, &span) ||
       __builtin_mul_overflow(span, (int64_t)elem, &bytes)))
    return dlc__fail(DLC_ERROR_INVALID_VALUE,
                     "%s: %s spans (%lld - 1) * ld%s + %lld elements of %d bytes with ld%s = %lld, more than 2^63 - 1 bytes",
                     op, arg, (long long)rows, arg, (long long)cols, elem, arg, (long long)ld);
  if (rows > 0 && cols > 0) n = rows * cols;
  if ((st = check_span(op, arg, p, elem, span, n))) return st;
  /* the span in bytes fits in int64 (checked): so do the pitch of a tensor of
   * two rows or more and the width of one that is not empty */
  *sp = (dlc__span){arg, (uintptr_t)p, n ? (uintptr_t)p + (uint64_t)(span * elem) : (uintptr_t)p, n, n ? rows : 1,
                    n && rows > 1 ? ld * elem : 0, n ? cols * elem : 0};
  return DLC_SUCCESS;
}

dlc_status dlc__check_packed(const char *op, const char *arg, const void *p, int elem, int rank, const int64_t *dims,
                             dlc__span *sp) {
  dlc_status st;
  for (int d = 0; d < rank; d++)
    if ((st = check_dim(op, arg, d, dims[d]))) return st;
  /* right to left: each partial product is the stride of the axis before it */
  int64_t n = 1;
  for (int d = rank - 1; d >= 0; d--)
    if (__builtin_mul_overflow(n, dims[d], &n)) {
      char shape[160];
      int len = 0;
      for (int e = 0; e < rank && len < (int)sizeof shape; e++)
        len += snprintf(shape + len, sizeof shape - (size_t)len, "%s%lld", e ? ", " : "", (long long)dims[e]);
      return dlc__fail(DLC_ERROR_INVALID_VALUE, "%s: %s of shape [%s] has a stride or element count beyond int64", op,
                       arg, shape);
    }
  if ((st = check_span(op, arg, p, elem, n, n))) return st;
  *sp = (dlc__span){arg, (uintptr_t)p, (uintptr_t)p + (uint64_t)(n * elem), n, 1, 0, n * elem};
  return DLC_SUCCESS;
}

/* Whether two spans that are not empty share a byte: 0 no, 1 yes, 2 their
 * first-to-last byte ranges meet and their rows have different pitches (not
 * compared further: taken as overlapping).  Rows of one pitch P (a single
 * row takes the other's P when it is at most P wide; wider, it meets a row
 * wherever it meets the range): row r of a and row q of b meet when the
 * offset x = (r - q) P - (b.lo - a.lo) lies in (-a.width, b.width), which
 * only the two multiples of P around b.lo - a.lo can give. */
static int spans_meet(const dlc__span *a, const dlc__span *b) {
  if (a->hi <= b->lo || b->hi <= a->lo) return 0;
  const __int128 alo = a->lo, blo = b->lo;
  if (a->rows == 1 && b->rows == 1) return 1;
  if (a->rows > 1 && b->rows > 1 && a->pitch != b->pitch) return 2;
  const __int128 P = a->rows > 1 ? a->pitch : b->pitch;
  if ((a->rows == 1 && a->width > P) || (b->rows == 1 && b->width > P)) return 1;
  const __int128 d = blo - alo;
  __int128 q = d / P;
  if (d % P != 0 && d < 0) q--; /* floor */
  for (__int128 delta = q; delta <= q + 1; delta++) {
    if (delta < -(__int128)(b->rows - 1) || delta > (__int128)(a->rows - 1)) continue;
    const __int128 x = delta * P - d;
    if (x > -(__int128)a->width && x < (__int128)b->width) return 1;
  }
  return 0;
}

dlc_status dlc__check_disjoint_rows(const char *op, const dlc__span *sp, int nin, int n, const void *workspace,
                                    size_t workspace_bytes) {
  for (int o = nin; o < n; o++) {
    if (sp[o].count == 0) continue;
    for (int t = 0; t < o; t++) {
      const int meet = sp[t].count > 0 ? spans_meet(&sp[o], &sp[t]) : 0;
      if (meet)
        return dlc__fail(DLC_ERROR_INVALID_VALUE,
                         "%s: output %s overlaps %s %s%s (outputs share no memory with the other tensors: in-place calls "
                         "are not supported)",
                         op, sp[o].arg, t < nin ? "input" : "output", sp[t].arg,
                         meet == 2 ? " between their first and last bytes, rows of different pitches" : "");
    }
  }
  if (!workspace || workspace_bytes == 0) return DLC_SUCCESS;
  /* one row (the dispatcher checked that it does not wrap): only the first
   * and last bytes count */
  const uintptr_t wlo = (uintptr_t)workspace, wend = wlo + workspace_bytes;
  for (int t = 0; t < n; t++)
    if (sp[t].count > 0 && sp[t].hi > wlo && sp[t].lo < wend)
      return dlc__fail(DLC_ERROR_INVALID_VALUE, "%s: the workspace (%p, %zu bytes) overlaps %s %s", op, workspace,
                       workspace_bytes, t < nin ? "input" : "output", sp[t].arg);
  return DLC_SUCCESS;
}

dlc_status dlc__tmap_check_nd(dlc_dtype dtype, const void *base, int rank, const int64_t *dims, const int64_t *strides,
                              const int *box, int *elem) {
  if (dtype != DLC_F16 && dtype != DLC_BF16)
    return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "tensor map: dtype %d is not fp16 or bf16", (int)dtype);
  *elem = 2;
  if (rank < 2 || rank > 5) return dlc__fail(DLC_ERROR_INTERNAL, "tensor map: rank %d is not 2 to 5", rank);
  /* the kernels' box coordinates are int32 */
  for (int i = 0; i < rank; i++)
    if (dims[i] < 1 || dims[i] > INT32_MAX)
      return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "tensor map: dim %d of %lld elements (each dim must be in [1, 2^31))",
                       i, (long long)dims[i]);
  for (int i = 0; i + 1 < rank; i++)
    if (strides[i] < 1 || strides[i] > ((int64_t)1 << 40) / *elem || (strides[i] * *elem) % 16 != 0)
      return dlc__fail(DLC_ERROR_NOT_SUPPORTED,
                       "tensor map: dim %d's indices %lld elements apart (the stride must be a nonzero multiple of 16 "
                       "bytes below 2^40)",
                       i + 1, (long long)strides[i]);
  if (!dlc__aligned(base, 16))
    return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "tensor map: base %p is not 16-byte aligned", base);
  for (int i = 0; i < rank; i++)
    if (box[i] < 1 || box[i] > 256 || (i == 0 && box[0] * *elem > 128))
      return dlc__fail(DLC_ERROR_INTERNAL, "tensor map: box dim %d of %d does not fit the 128-byte swizzle", i, box[i]);
  return DLC_SUCCESS;
}

dlc_status dlc__tmap_check_2d(dlc_dtype dtype, const void *base, int64_t inner, int64_t outer, int64_t ld, int box_inner,
                              int box_outer, int *elem) {
  if (dtype != DLC_F16 && dtype != DLC_BF16)
    return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "tensor map: dtype %d is not fp16 or bf16", (int)dtype);
  *elem = 2;
  const int64_t lim = (int64_t)1 << 32;
  if (inner < 1 || outer < 1 || inner > lim || outer > lim)
    return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "tensor map: a %lld x %lld matrix (each dim must be in [1, 2^32])",
                     (long long)outer, (long long)inner);
  if (ld < inner || ld > ((int64_t)1 << 40) / *elem || (ld * *elem) % 16 != 0)
    return dlc__fail(DLC_ERROR_NOT_SUPPORTED,
                     "tensor map: rows %lld elements apart (the stride must be a multiple of 16 bytes below 2^40)",
                     (long long)ld);
  if (!dlc__aligned(base, 16))
    return dlc__fail(DLC_ERROR_NOT_SUPPORTED, "tensor map: base %p is not 16-byte aligned", base);
  if (box_inner < 1 || box_outer < 1 || box_inner > 256 || box_outer > 256 || box_inner * *elem > 128)
    return dlc__fail(DLC_ERROR_INTERNAL, "tensor map: a %d x %d box does not fit the 128-byte swizzle", box_outer,
                     box_inner);
  return DLC_SUCCESS;
}
