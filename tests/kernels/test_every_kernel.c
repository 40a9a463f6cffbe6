/* Every kernel of a library, built from any manifest, in the PTX emulator
 * against the generator's own playback of its regions (issue 11 item 5,
 * issue 12 item 5; docs/testing.md "every kernel").
 *
 *   test_every_kernel MANIFEST [--op NAME] [--corrupt] [--skip-row N] [--search-only] [--threads N] [--graph]
 *
 * What the library holds comes from dlcgen as data: the entry table
 * (src/dlc_entries.c, libkernels/dlc_entries.h) gives each entry point's
 * arguments and their roles, its instances (dtype, runtime attrs and
 * compile-time dims) and the rows of its dispatch table with their chunk
 * widths.  The reference comes from the generator's stages, run here on the
 * same manifest: every instance goes through the front half to Region SSA,
 * its tensors' shapes are evaluated from the Frontend, and pb_eval_regions()
 * computes the outputs in FP64 (rounded where the regions round).
 *
 * For each instance (a shape bucket's too: the entry table names the
 * manifest instance it compiles, whose graph gives the reference, and its
 * bounds, which the sizes stay within; the instance that serves every shape
 * takes sizes past its buckets), one call per row (chunk width; for a chain
 * op, each kernel's widths) on sizes of the entry table's test extents
 * (full tiles and tails) with leading dimensions padded by 8, the width
 * forced by offsetting the tensors that select the row's width (aligned to
 * w elements, not 2w), the other free dims and the bounded ones made odd
 * wherever a dry run shows the dispatcher still selects the same rows; then
 * one call on odd sizes with odd padding, the other tensors one element off
 * their allocation's alignment.  A chain op is called through
 * dlc_<op>_ws with the workspace dlc_<op>_workspace_size reports.  Each
 * call runs with
 * memcheck, the shared-memory race check and the uninitialized-shared check
 * on; the backend's launch hook (dlc__launch_hook) records which rows of
 * the dispatch table ran.
 * A chain call's workspace arena (dlc__last_arena) must fit the workspace
 * and stay within 1.1x the most bytes live at one kernel; the emulator
 * poisons each value after its last reader, so a wrong interval shows in
 * the outputs.
 * Each output must match playback within kt.h's tolerance, every byte of
 * every buffer outside the tensors (the ld padding, the guards) must keep its
 * canary, and the inputs must be unchanged.  At the end every row of every
 * dispatch table must have run, else the test fails naming the row.  A row
 * those calls do not reach (a shape bucket, a plan the dispatcher picks by
 * size) is searched for with dry runs, which ask the dispatcher itself: each
 * free dim over a ladder of sizes, then each pair; a row found is run like
 * the others.
 *
 * --op runs one op; --corrupt changes one output element of every call
 * before the check, and --skip-row N leaves out the call that forces row N
 * of the dispatch table and the odd-size calls, and does not count row N's
 * launches by other calls (a split-K pair's second kernel is called on its
 * first kernel's widest row): both must make the test fail
 * (the negative tests in tests/kernels/CMakeLists.txt).  --search-only makes
 * no call on the test sizes, so that every row must be found by search.
 * --threads N makes, for each instance that serves every shape, its first row's call, and then the
 * same call from N threads at once (after each thread's call that fails on
 * a dim of its own value, whose detail string it must get back while the
 * others set theirs), each checked against that first call's playback as
 * every call is (issue 38 item 3: calls from any number of threads are
 * safe, detail strings are per thread); it does not require every row.
 * --graph (the GPU build, KT_GPU) also captures each call on a stream into
 * a CUDA graph, replays it, and requires the kernels and the output bytes
 * of the direct call. */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlc_entries.h"
#include "dlc_internal.h"
#include "frontend.h"
#include "indexbook.h"
#include "kt.h"
#include "manifest.h"
#include "playback.h"
#include "polyview.h"
#include "region.h"
#include "tiny.h"

/* Region-domain points a call may cost (the sum over regions of the product
 * of their axis sizes); the free dims without a test extent shrink while a
 * call is over it, which bounds the playback's time. */
#define WORK_BUDGET 8000000LL
#define GUARD 16 /* canary elements after each tensor */
#define MAX_DRY_ELEMS ((int64_t)1 << 25) /* the largest tensor a dry run allocates */
#define CANARY 0xA7

static atomic_int failures;
/* The emulated device's arch (DLC_EMU_ARCH): rows built for other archs are
 * not expected to run, and on sm90a a row whose calls the instance's sm90a
 * kernel takes first (dlc__entry_kernel.sm90a_first) is covered by it. */
static unsigned emu_arch;

/* Whether the emulated device runs row k for the calls that select it. */
static bool row_runs_here(const dlc__entry_kernel *k) {
  return (k->archs & emu_arch) && !(emu_arch == DLC__ARCH_SM90A && k->sm90a_first >= 0);
}

static double now(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define FAIL(...) (fprintf(stderr, "FAIL: " __VA_ARGS__), fputc('\n', stderr), atomic_fetch_add(&failures, 1))

/* ---- device memory: the emulator's, or with KT_GPU a CUDA device's ---------------- */

#ifdef KT_GPU
#include <cuda_runtime_api.h>
typedef uint64_t devptr;
static int dev_alloc(devptr *p, size_t n) {
  void *q = NULL;
  if (cudaMalloc(&q, n) != cudaSuccess) return 1;
  *p = (devptr)(uintptr_t)q;
  return 0;
}
static void dev_free(devptr p) { cudaFree((void *)(uintptr_t)p); }
static int dev_htod(devptr d, const void *h, size_t n) {
  return cudaMemcpy((void *)(uintptr_t)d, h, n, cudaMemcpyHostToDevice) != cudaSuccess;
}
static int dev_dtoh(void *h, devptr d, size_t n) {
  return cudaMemcpy(h, (const void *)(uintptr_t)d, n, cudaMemcpyDeviceToHost) != cudaSuccess;
}
/* Waits for the call's kernels; a kernel's fault shows here. */
static const char *dev_sync(void) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  return e == cudaSuccess ? NULL : cudaGetErrorString(e);
}
#define BACKEND "GPU"
#else
#include "dlc/dlcemu.h"
typedef dlcemu_deviceptr devptr;
static int dev_alloc(devptr *p, size_t n) { return dlcemu_mem_alloc(p, n); }
static void dev_free(devptr p) { dlcemu_mem_free(p); }
static int dev_htod(devptr d, const void *h, size_t n) { return dlcemu_memcpy_htod(d, h, n); }
static int dev_dtoh(void *h, devptr d, size_t n) { return dlcemu_memcpy_dtoh(h, d, n); }
static const char *dev_sync(void) { return NULL; } /* the emulator runs each launch to its end */
#define BACKEND "emulator"
#endif

/* ---- the launch hook ----------------------------------------------------------- */

enum { MAX_LAUNCHES = 16 };
/* per thread: --threads calls from several at once */
static _Thread_local const dlc__kernel *launched[MAX_LAUNCHES];
static _Thread_local int nlaunched;
static _Thread_local int64_t launched_ctas; /* over the call's launches */
static _Thread_local bool dry; /* record the rows, launch nothing */

static int on_launch(const dlc__kernel *k, unsigned gx, unsigned gy, unsigned gz) {
  if (nlaunched < MAX_LAUNCHES) launched[nlaunched] = k;
  nlaunched++;
  launched_ctas += (int64_t)gx * gy * gz;
  return dry;
}

/* ---- one tensor in the emulator --------------------------------------------------- */

static dlc_dtype dlc_of(dtype t) { return t == DT_FP16 ? DLC_F16 : t == DT_BF16 ? DLC_BF16 : DLC_F32; }

typedef struct tensor {
  const char *name;
  bool out;
  dtype dt;
  int eb;        /* bytes per element */
  int rank;
  int64_t shape[FE_MAX_RANK];
  int64_t n;     /* elements */
  int64_t ld;    /* rank 2: the leading dimension; else 0 */
  int64_t off;   /* elements between the allocation and the tensor */
  int64_t total; /* elements allocated: off + span + GUARD */
  devptr dev;
  unsigned char *host; /* what was uploaded (the expected bytes outside the tensor) */
  pb_tensor ref;       /* inputs: the values, for playback */
  int64_t idx_hi;      /* an int32 input (a gather's index): its values lie in [-3, idx_hi) */
} tensor;

/* Element f (row-major over the shape) of the tensor, in elements from the allocation. */
static int64_t elem_at(const tensor *t, int64_t f) {
  if (t->rank == 2) return t->off + (f / t->shape[1]) * t->ld + f % t->shape[1];
  return t->off + f;
}

static double load(const tensor *t, const unsigned char *buf, int64_t e) {
  if (t->dt == DT_INT32) {
    int32_t v;
    memcpy(&v, buf + e * 4, 4);
    return v;
  }
  if (t->eb == 4) {
    float v;
    memcpy(&v, buf + e * 4, 4);
    return v;
  }
  uint16_t h;
  memcpy(&h, buf + e * 2, 2);
  return kt_to_f32(dlc_of(t->dt), h);
}

static void store(const tensor *t, unsigned char *buf, int64_t e, double v) {
  if (t->dt == DT_INT32) {
    int32_t i = (int32_t)v;
    memcpy(buf + e * 4, &i, 4);
    return;
  }
  if (t->eb == 4) {
    float f = (float)v;
    memcpy(buf + e * 4, &f, 4);
    return;
  }
  uint16_t h = kt_from_f32(dlc_of(t->dt), (float)v);
  memcpy(buf + e * 2, &h, 2);
}

/* Allocates the tensor; `fill` gives it its canaries and (inputs) random
 * values, uploaded; without, a dry run's tensor holds whatever it holds. */
static bool tensor_alloc(tensor *t, uint64_t *seed, bool fill) {
  int64_t span = t->n == 0 ? 0 : t->rank == 2 ? (t->shape[0] - 1) * t->ld + t->shape[1] : t->n;
  t->total = t->off + span + GUARD;
  if (!fill) return t->total <= MAX_DRY_ELEMS && dev_alloc(&t->dev, (size_t)(t->total * t->eb)) == 0;
  t->host = malloc((size_t)(t->total * t->eb));
  if (!t->host || dev_alloc(&t->dev, (size_t)(t->total * t->eb)) != 0) return false;
  memset(t->host, CANARY, (size_t)(t->total * t->eb));
  if (!t->out) {
    if (pb_tensor_alloc(&t->ref, t->rank, t->shape) != PB_OK) return false;
    for (int64_t f = 0; f < t->n; f++) {
      /* an index: in range, past the end and negative (which read 0) */
      double v = t->dt == DT_INT32 ? floor(-3 + (t->idx_hi + 3) * (kt_uniform(seed) + 1) / 2)
                                   : dtype_round(t->dt, kt_uniform(seed));
      store(t, t->host, elem_at(t, f), v);
      t->ref.data[f] = load(t, t->host, elem_at(t, f));
    }
  }
  return dev_htod(t->dev, t->host, (size_t)(t->total * t->eb)) == 0;
}

static void tensor_free(tensor *t) {
  if (t->dev) dev_free(t->dev);
  free(t->host);
  pb_tensor_free(&t->ref);
}

/* ---- one instance: its graph through the front half ------------------------------- */

typedef struct inst_ctx {
  arena A;
  diag_list dl;
  fe_graph *fe;
  region_set *rs;
} inst_ctx;

static bool inst_build(inst_ctx *c, const mf_op *op, const mf_instance *mi) {
  arena_init(&c->A);
  diag_init(&c->dl);
  fe_instance fi = {mi->dt, mi->attr_values, mi->dim_values};
  c->fe = fe_read_json(&c->A, op->graph, op->graph_where, &fi, &c->dl);
  tiny_dag *d = c->fe ? tiny_lower(&c->A, c->fe, &c->dl) : NULL;
  indexbook *ib = d ? ib_build(&c->A, d, &c->dl) : NULL;
  poly_view *pv = ib ? pv_build(&c->A, ib, &c->dl) : NULL;
  c->rs = pv ? region_build(&c->A, pv, &c->dl) : NULL;
  if (!c->rs || diag_has_errors(&c->dl)) {
    diag_print_text(&c->dl, "test_every_kernel");
    return false;
  }
  return true;
}

static void inst_free(inst_ctx *c) {
  diag_free(&c->dl);
  arena_free(&c->A);
}

/* ---- one call ------------------------------------------------------------------- */

typedef struct opts {
  const char *only;
  bool corrupt;
  int skip_row;     /* -1: none */
  bool search_only; /* no calls on the test sizes: every row by search */
  FILE *dump;       /* --dump: every output of every call, for compare_dumps.py */
  int threads;      /* --threads N: each instance's call again from N threads at once */
  bool graph;       /* --graph (KT_GPU): each call also captured into a CUDA graph and replayed */
} opts;

typedef struct config {
  bool odd;     /* odd sizes and padding, natural alignment; else test extents, padding 8 */
  const dlc__entry_kernel *row; /* aligned: the row whose width is forced (NULL: none, all aligned) */
  int wmax;     /* the widest chunk of the row's kernel (its instance and chain step) */
} config;

static int64_t find_fixed(const dlc__entry_instance *in, int arg, bool *found) {
  for (int i = 0; i < in->nfixed; i++)
    if (in->fixed[i].arg == arg) return *found = true, in->fixed[i].value;
  *found = false;
  return 0;
}

static bool row_vec_tensor(const dlc__entry_kernel *k, const char *name) {
  for (int i = 0; i < k->nvec_tensors; i++)
    if (strcmp(k->vec_tensors[i], name) == 0) return true;
  return false;
}

/* Whether the tensor picks the width of some kernel of instance ii. */
static bool is_vec_tensor(const dlc__entry *e, int ii, const char *name) {
  for (int k = 0; k < e->nkernels; k++)
    if (e->kernels[k].inst == ii && row_vec_tensor(&e->kernels[k], name)) return true;
  return false;
}

/* The widest chunk of the kernel of row k (its instance and chain step). */
static int row_wmax(const dlc__entry *e, const dlc__entry_kernel *k) {
  int w = 0;
  for (int j = 0; j < e->nkernels; j++)
    if (e->kernels[j].inst == k->inst && e->kernels[j].step == k->step && e->kernels[j].vec > w) w = e->kernels[j].vec;
  return w;
}

/* A shape bucket's bound on argument `arg`: false when it has none. */
static bool find_bound(const dlc__entry_instance *in, int arg, int64_t *lo, int64_t *hi) {
  for (int b = 0; b < in->nbounds; b++)
    if (in->bounds[b].arg == arg && arg >= 0) return *lo = in->bounds[b].lo, *hi = in->bounds[b].hi, true;
  return false;
}

/* The value bound b sees at the argument values val: the argument, or the
 * product of dims it bounds. */
static int64_t bound_value(const dlc__entry_bound *b, const int64_t *val) {
  return b->product ? b->product(val) : val[b->arg];
}

/* Whether product bound b grows with dim argument i (probed at twice its
 * value plus 2, past a floor division's steps). */
static bool in_product(const dlc__entry_bound *b, int64_t *val, int i) {
  int64_t keep = val[i], now = b->product(val);
  val[i] = keep * 2 + 2;
  int64_t grown = b->product(val);
  val[i] = keep;
  return grown > now;
}

/* The dim argument that moves a product bound: the first free one (not
 * fixed, not bounded itself) in the product; -1 if none. */
static int product_dim(const dlc__entry *e, const dlc__entry_instance *in, const dlc__entry_bound *b, int64_t *val) {
  int64_t lo, hi;
  for (int i = 0; i < e->nargs && i < 64; i++) {
    bool fixed;
    if (e->args[i].role != DLC__ARG_DIM || find_bound(in, i, &lo, &hi)) continue;
    find_fixed(in, i, &fixed);
    if (!fixed && in_product(b, val, i)) return i;
  }
  return -1;
}

/* Sum over the regions of the product of their axis sizes (INT64_MAX past
 * int64), or -1. */
static int64_t region_work(const region_set *rs, const pb_binding *b) {
  int64_t w = 0;
  for (int r = 0; r < rs->n; r++) {
    const region *rg = &rs->r[r];
    int na = rg->niters + rg->nred;
    int64_t p = 1, sz[64];
    const sx *shape[64];
    if (na > 64) return -1;
    for (int a = 0; a < na; a++) shape[a] = rg->it[a].size;
    char why[128];
    if (pb_shape_eval(b, na, shape, sz, why, sizeof why) != PB_OK) return -1;
    for (int a = 0; a < na; a++)
      if (__builtin_mul_overflow(p, sz[a], &p)) return INT64_MAX;
    if (__builtin_add_overflow(w, p, &w)) return INT64_MAX;
  }
  return w;
}

static bool bind_dims(const dlc__entry *e, const int64_t *val, pb_binding *b) {
  b->n = 0;
  for (int i = 0; i < e->nargs; i++)
    if (e->args[i].role == DLC__ARG_DIM && !pb_bind(b, e->args[i].what, val[i])) return false;
  return true;
}

/* Whether dispatch would take a row before `in` for the dims val: one of
 * the buckets of its manifest instance tried before it holds them. */
/* Whether bucket bk of the instances before `in` (of its manifest
 * instance) holds the dims val. */
static bool earlier_holds(const dlc__entry *e, const dlc__entry_instance *in, const dlc__entry_instance *bk,
                          int64_t *val) {
  if (bk == in || bk->source != in->source || bk->nbounds == 0 || (in->nbounds && bk - e->inst > in - e->inst))
    return false;
  bool inside = true;
  for (int bi = 0; bi < bk->nbounds; bi++) {
    const dlc__entry_bound *bd = &bk->bounds[bi];
    inside &= (bd->product || (bd->arg >= 0 && bd->arg < e->nargs)) && bound_value(bd, val) >= bd->lo &&
              bound_value(bd, val) <= bd->hi;
  }
  return inside;
}

static bool in_earlier_bucket(const dlc__entry *e, const dlc__entry_instance *in, int64_t *val) {
  for (int j = 0; j < e->ninst; j++)
    if (earlier_holds(e, in, &e->inst[j], val)) return true;
  return false;
}

/* The dims of the calls: fixed by the instance, else the test extent (odd:
 * 5 less), else small; the small ones shrink while the work is over budget.
 * A dim a shape bucket bounds is brought into its bounds (odd: the largest
 * odd size there, so that the bucket's tiles meet a tail). */
static bool choose_dims(const dlc__entry *e, const dlc__entry_instance *in, const inst_ctx *c, bool odd,
                        int64_t *val) {
  pb_binding pb, *b = &pb;
  static const int64_t small_aligned[] = {8, 2, 1}, small_odd[][3] = {{5, 3, 1}, {7, 3, 1}, {3, 1, 1}};
  int step[64] = {0}, nsmall = 0;
  for (int i = 0; i < e->nargs && i < 64; i++) {
    if (e->args[i].role != DLC__ARG_DIM) continue;
    bool fixed;
    val[i] = find_fixed(in, i, &fixed);
    if (fixed) continue;
    if (in->extent[i] > 0) val[i] = in->extent[i] - (odd ? 5 : 0);
    else val[i] = odd ? small_odd[nsmall++ % 3][0] : small_aligned[0], step[i] = 1;
    int64_t lo, hi;
    if (find_bound(in, i, &lo, &hi)) {
      step[i] = 0; /* it stays in the bucket */
      if (val[i] > hi) val[i] = hi;
      if (val[i] < lo) val[i] = lo;
      if (odd && val[i] % 2 == 0 && val[i] - 1 >= lo) val[i]--;
    }
  }
  /* a bound on a product of dims: its dims halve (odd: stay odd) while the
   * product is past the bound's top, and then stay */
  for (int bi = 0; bi < in->nbounds; bi++) {
    const dlc__entry_bound *bd = &in->bounds[bi];
    if (!bd->product) continue;
    for (int pass = 0; pass < 64 && bound_value(bd, val) > bd->hi; pass++) {
      int big = -1;
      for (int i = 0; i < e->nargs && i < 64; i++) {
        bool fixed;
        find_fixed(in, i, &fixed);
        if (e->args[i].role == DLC__ARG_DIM && !fixed && val[i] > 1 && in_product(bd, val, i) &&
            (big < 0 || val[i] > val[big]))
          big = i;
      }
      if (big < 0) break;
      val[big] = odd ? (val[big] / 2) | 1 : (val[big] + 1) / 2;
    }
    for (int i = 0; i < e->nargs && i < 64; i++)
      if (e->args[i].role == DLC__ARG_DIM && in_product(bd, val, i)) step[i] = 0;
  }
  /* Dispatch takes the first row that matches: an instance that serves
   * every shape is tried after its buckets, a bucket after the buckets
   * before it.  Its sizes leave each of those it lies in (of its manifest
   * instance): past the first bound on a dim argument that it does not
   * bound itself (a multiple of 8, or odd), or else past the first bound
   * on a product, its first free dim doubling (whose dims then stay); a
   * bucket with no such bound (a split bucket's `_nosplit` twin) stays. */
  for (int pass = 0, moved = 1; moved && pass < 16; pass++) {
    moved = 0;
    for (int j = 0; j < e->ninst; j++) {
      const dlc__entry_instance *bk = &e->inst[j];
      if (!earlier_holds(e, in, bk, val)) continue;
      int bi = 0;
      int64_t lo, hi;
      while (bi < bk->nbounds && (bk->bounds[bi].product || find_bound(in, bk->bounds[bi].arg, &lo, &hi))) bi++;
      if (bi == bk->nbounds) {
        const dlc__entry_bound *bd = NULL;
        for (int b2 = 0; b2 < bk->nbounds && !bd; b2++)
          if (bk->bounds[b2].product) bd = &bk->bounds[b2];
        int a = bd ? product_dim(e, in, bd, val) : -1;
        if (a < 0) continue; /* no dim of its own to leave by (a split row's twin: the same bounds) */
        for (int g = 0; g < 64 && bound_value(bd, val) <= bd->hi; g++) val[a] = odd ? (val[a] * 2) | 1 : val[a] * 2;
        for (int i = 0; i < e->nargs && i < 64; i++)
          if (e->args[i].role == DLC__ARG_DIM && in_product(bd, val, i)) step[i] = 0;
        moved = 1;
        continue;
      }
      int a = bk->bounds[bi].arg;
      int64_t v = bk->bounds[bi].hi + 1;
      val[a] = odd ? v | 1 : (v + 7) / 8 * 8;
      step[a] = 0, moved = 1;
    }
  }
  bool bounded_shrunk = false;
  for (;;) {
    if (!bind_dims(e, val, b)) return false;
    int64_t w = region_work(c->rs, b);
    if (w < 0) return false;
    /* once a bounded dim shrinks, to an eighth of the budget: the dry runs
     * that look for the wider kernels' sizes multiply the channels by 8 */
    if (w <= (bounded_shrunk ? WORK_BUDGET / 8 : WORK_BUDGET)) return true;
    /* shrink the first small dim that can */
    int k = 0, shrunk = -1;
    for (int i = 0; i < e->nargs && shrunk < 0; i++) {
      if (!step[i]) continue;
      if (step[i] < 3) {
        val[i] = odd ? small_odd[k % 3][step[i]] : small_aligned[step[i]];
        step[i]++;
        shrunk = i;
      }
      k++;
    }
    /* then a dim the bucket bounds (not through a product), halved toward
     * the bound's bottom, unless an earlier bucket would then take the call */
    for (int i = 0; i < e->nargs && i < 64 && shrunk < 0; i++) {
      int64_t lo, hi;
      bool inprod = false;
      for (int bi = 0; bi < in->nbounds; bi++) inprod |= in->bounds[bi].product && in_product(&in->bounds[bi], val, i);
      if (e->args[i].role != DLC__ARG_DIM || inprod || !find_bound(in, i, &lo, &hi) || val[i] <= lo) continue;
      const int64_t was = val[i];
      val[i] = odd ? (val[i] / 2) | 1 : val[i] / 2;
      if (val[i] < lo) val[i] = lo;
      if (val[i] == was || in_earlier_bucket(e, in, val)) val[i] = was;
      else shrunk = i, bounded_shrunk = true;
    }
    if (shrunk < 0) {
      printf("  note: %lld region points, over the budget of %lld\n", (long long)w, WORK_BUDGET);
      return true;
    }
  }
}

/* |y - round_T(r)| <= max(ulp_T(round_T(r)), 1e-3 (|r| + R)), kt.h; returns mismatches. */
static int64_t compare(const dlc__entry *e, const char *what, const tensor *t, const unsigned char *got,
                       const pb_tensor *ref, double *worst) {
  dlc_dtype T = dlc_of(t->dt);
  double R = 0;
  for (int64_t f = 0; f < ref->n; f++) R = fmax(R, fabs(ref->data[f]));
  int64_t bad = 0;
  for (int64_t f = 0; f < t->n; f++) {
    double r = ref->data[f], rr = kt_round(T, r), y = load(t, got, elem_at(t, f));
    double err = fabs(y - rr), tol = fmax(kt_ulp(T, rr), 1e-3 * (fabs(r) + R));
    if (!(err <= tol) && bad++ < 5)
      fprintf(stderr, "  %s %s: %s[%lld] = %.6g, playback %.6g\n", e->op, what, t->name, (long long)f, y, rr);
    if (err / tol > *worst) *worst = err / tol;
  }
  return bad;
}

/* A call's tensors (signature inputs, then outputs) and arguments. */
typedef struct call {
  int nt;
  tensor *ts;
  dlc__arg_value *args;
  devptr ws; /* the workspace of an instance that needs one (a chain's or a split-K plan's), of ws_bytes */
  size_t ws_bytes;
} call;

static void call_free(call *k) {
  for (int t = 0; k->ts && t < k->nt; t++) tensor_free(&k->ts[t]);
  if (k->ws) dev_free(k->ws);
  free(k->ts), free(k->args);
}

/* dlc_<op>, or for an instance that needs a workspace (a chain op's, a
 * split-K plan's) dlc_<op>_ws with the call's workspace. */
static dlc_status invoke(const dlc__entry *e, dlc_dtype dt, const call *k) {
  if (e->call_ws && k->ws) return e->call_ws(dt, k->args, (void *)(uintptr_t)k->ws, k->ws_bytes, NULL);
  return e->call(dt, k->args);
}

#ifdef KT_GPU
/* --graph: the call invoke makes, on a stream in capture (the workspace,
 * none or the call's, through dlc_<op>_ws), then the graph instantiated and
 * launched; returns the call's status, and in *why what CUDA refused. */
static dlc_status invoke_graph(const dlc__entry *e, dlc_dtype dt, const call *k, const char **why) {
  cudaStream_t s = NULL;
  cudaGraph_t g = NULL;
  cudaGraphExec_t x = NULL;
  cudaError_t ce = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  dlc_status st = DLC_ERROR_LAUNCH_FAILED;
  *why = NULL;
  if (ce == cudaSuccess) ce = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  if (ce == cudaSuccess) {
    st = e->call_ws(dt, k->args, (void *)(uintptr_t)k->ws, k->ws_bytes, (struct CUstream_st *)s);
    ce = cudaStreamEndCapture(s, &g);
  }
  if (ce == cudaSuccess && st == DLC_SUCCESS) ce = cudaGraphInstantiate(&x, g, 0);
  if (ce == cudaSuccess && st == DLC_SUCCESS) ce = cudaGraphLaunch(x, s);
  if (ce == cudaSuccess && st == DLC_SUCCESS) ce = cudaStreamSynchronize(s);
  if (ce != cudaSuccess) *why = cudaGetErrorString(ce), cudaGetLastError();
  if (x) cudaGraphExecDestroy(x);
  if (g) cudaGraphDestroy(g);
  if (s) cudaStreamDestroy(s);
  return st;
}
#endif

/* dlc_<op>_query with the arguments invoke passes. */
static dlc_status query(const dlc__entry *e, dlc_dtype dt, const call *k, dlc_launch_info *info) {
  if (k->ws) return e->query(dt, k->args, (void *)(uintptr_t)k->ws, k->ws_bytes, info);
  return e->query(dt, k->args, NULL, 0, info);
}

/* The query told what the call then launched: its first kernel and that
 * kernel's plan, the number of kernels, the CTAs, a workspace within the
 * call's (none for an instance that needs none), the same status. */
static void check_query(const dlc__entry *e, const dlc__entry_instance *in, const char *what, const call *k,
                        dlc_status qst, const dlc_launch_info *q, dlc_status st) {
  if (qst != st) {
    FAIL("%s %s: dlc_%s_query returned %s, the call %s", e->op, what, e->op, dlc_status_string(qst),
         dlc_status_string(st));
    return;
  }
  if (st != DLC_SUCCESS || nlaunched == 0 || nlaunched > MAX_LAUNCHES) return;
  const dlc__kernel *r = launched[0];
  if (q->kernels != nlaunched || strcmp(q->kernel, r->name) != 0 || q->ctas != launched_ctas)
    FAIL("%s %s: the query said %d kernels from %s, %lld CTAs; the call launched %d from %s, %lld CTAs", e->op, what,
         q->kernels, q->kernel, (long long)q->ctas, nlaunched, r->name, (long long)launched_ctas);
  if (q->tile_m != r->bm || q->tile_n != r->bn || q->tile_k != r->bk || q->threads != r->threads ||
      q->smem_bytes != r->smem || !*q->arch)
    FAIL("%s %s: the query's plan of %s (tile %dx%dx%d, %d threads, %d bytes, arch '%s') is not its row's (%dx%dx%d, "
         "%d, %d)", e->op, what, r->name, q->tile_m, q->tile_n, q->tile_k, q->threads, q->smem_bytes, q->arch, r->bm,
         r->bn, r->bk, r->threads, r->smem);
  if (q->workspace_bytes > k->ws_bytes || (!in->workspace && q->workspace_bytes))
    FAIL("%s %s: the query says the call uses %zu bytes of a workspace of %zu", e->op, what, q->workspace_bytes,
         k->ws_bytes);
}

/* The call again through the op's plan (issue 37; docs/runtime.md): its
 * params copied into a plan's ConstPool, the outputs reset, the plan run
 * twice; each run launches the call's kernels (a chunk as wide or wider:
 * the pool's matrix rows lie 16-byte multiples apart), less the param
 * conversions plan_create made (dlc__entry.plan_made; a call that ran the
 * graph as given, in a workspace too small for the plan's run, is refused
 * instead), and leaves every byte
 * of every output buffer (canaries included) as the call left it.  Destroyed,
 * the plan is an error that launches nothing. */
static const char *check_plan(const dlc__entry *e, const dlc__entry_instance *in, const char *what, const call *k) {
  const char *how = e->plan_made ? "the call's kernels less the conversions made at creation, the same bytes, twice"
                                 : "the call's kernels, the same bytes, twice";
  /* the call's launches, less the param conversions the plan made at creation */
  const dlc__kernel *direct[MAX_LAUNCHES];
  int ndirect = 0;
  for (int l = 0; l < nlaunched && l < MAX_LAUNCHES; l++)
    if (!(e->plan_made >> e->kernels[launched[l]->index].step & 1u)) direct[ndirect++] = launched[l];
  unsigned char **before = calloc((size_t)k->nt, sizeof(unsigned char *));
  bool ok = before != NULL;
  for (int t = 0; ok && t < k->nt; t++) {
    const tensor *x = &k->ts[t];
    if (x->out) ok = (before[t] = malloc((size_t)(x->total * x->eb))) && !dev_dtoh(before[t], x->dev, (size_t)(x->total * x->eb));
  }
  void *plan = NULL;
  dlc_status st = ok ? e->plan_create(&plan, in->dtype, k->args, NULL) : DLC_ERROR_INTERNAL;
  if (st != DLC_SUCCESS) FAIL("%s %s: plan_create: %s: %s", e->op, what, dlc_status_string(st), dlc_last_error_detail());
  for (int rep = 0; rep < 2 && st == DLC_SUCCESS; rep++) {
    for (int t = 0; t < k->nt; t++)
      if (k->ts[t].out) dev_htod(k->ts[t].dev, k->ts[t].host, (size_t)(k->ts[t].total * k->ts[t].eb));
    /* the call's, or less when the plan holds conversions the call makes in its workspace */
    const size_t pws = e->plan_workspace_size(plan, k->args), cws = e->workspace_size(in->dtype, k->args);
    if (e->plan_made ? pws > cws : pws != cws)
      FAIL("%s %s: plan_workspace_size %zu, the call's %zu", e->op, what, pws, cws);
    nlaunched = 0, launched_ctas = 0;
    st = e->plan_run(plan, k->args, (void *)(uintptr_t)k->ws, k->ws_bytes, NULL);
    if (e->plan_made && k->ws_bytes < pws) {
      /* the call ran the graph as given, which would read the pool's
       * converted params as stored: the plan refuses, launching nothing and
       * writing nothing */
      if (st != DLC_ERROR_INVALID_VALUE || nlaunched)
        FAIL("%s %s: plan_run with %zu of the plan's %zu workspace bytes: %s, %d launches", e->op, what, k->ws_bytes, pws,
             dlc_status_string(st), nlaunched);
      for (int t = 0; t < k->nt; t++) {
        const tensor *x = &k->ts[t];
        size_t bytes = (size_t)(x->total * x->eb);
        unsigned char *now_b = x->out ? malloc(bytes) : NULL;
        if (x->out && (!now_b || dev_dtoh(now_b, x->dev, bytes) || memcmp(now_b, x->host, bytes) != 0))
          FAIL("%s %s: a refused plan_run wrote %s", e->op, what, x->name);
        free(now_b);
      }
      st = DLC_SUCCESS;
      how = "refused: the call ran the graph as given, in less workspace than the plan's run needs";
      continue;
    }
    const char *fault = st == DLC_SUCCESS ? dev_sync() : NULL;
    if (st != DLC_SUCCESS || fault) {
      FAIL("%s %s: plan_run: %s: %s", e->op, what, dlc_status_string(st), fault ? fault : dlc_last_error_detail());
      break;
    }
    /* the call's kernels, in order; a kernel may take a wider chunk where the
     * pool's rows (16-byte multiples apart) allow it and the call's ld did not */
    bool same = nlaunched == ndirect;
    for (int l = 0; same && l < nlaunched && l < MAX_LAUNCHES; l++) {
      const dlc__entry_kernel *a = &e->kernels[launched[l]->index], *b = &e->kernels[direct[l]->index];
      same = launched[l] == direct[l] || (a->inst == b->inst && a->step == b->step && a->vec > b->vec &&
                                          launched[l]->op == direct[l]->op);
    }
    if (!same)
      FAIL("%s %s: the plan launched %d kernels (%s first), the call %d (%s)", e->op, what, nlaunched,
           nlaunched ? launched[0]->name : "none", ndirect, ndirect ? direct[0]->name : "none");
    for (int t = 0; t < k->nt; t++) {
      const tensor *x = &k->ts[t];
      size_t bytes = (size_t)(x->total * x->eb);
      unsigned char *now_b = x->out ? malloc(bytes) : NULL;
      if (x->out && (!now_b || dev_dtoh(now_b, x->dev, bytes) || memcmp(now_b, before[t], bytes) != 0))
        FAIL("%s %s: run %d of the plan: %s is not bit for bit the call's", e->op, what, rep + 1, x->name);
      free(now_b);
    }
  }
  if (plan) {
    e->plan_destroy(plan);
    nlaunched = 0;
    st = e->plan_run(plan, k->args, (void *)(uintptr_t)k->ws, k->ws_bytes, NULL);
    if (st != DLC_ERROR_INVALID_VALUE || nlaunched)
      FAIL("%s %s: a destroyed plan ran: %s, %d launches", e->op, what, dlc_status_string(st), nlaunched);
    e->plan_destroy(plan);
  }
  for (int t = 0; before && t < k->nt; t++) free(before[t]);
  free(before);
  return how;
}

/* The tensors of config `cf` at dims `val` (bound in `b`), allocated (and
 * with `fill`, filled), and the arguments that pass them.  A dry run's
 * setup reports nothing: its caller sees false. */
#define SETUP_FAIL(...) (fill ? FAIL(__VA_ARGS__) : 0)
static bool call_setup(const dlc__entry *e, const dlc__entry_instance *in, const inst_ctx *c, const config *cf,
                       const int64_t *val, const pb_binding *b, uint64_t seed, const char *what, bool fill, call *k) {
  const fe_graph *g = c->fe;
  int nt = k->nt = g->nin + g->nout;
  tensor *ts = k->ts = calloc((size_t)nt, sizeof(tensor));
  dlc__arg_value *args = k->args = calloc((size_t)e->nargs + 1, sizeof(dlc__arg_value));
  bool ok = ts && args;
  /* the tensors: shapes from the Frontend, padding and offsets from the config */
  for (int t = 0; ok && t < nt; t++) {
    tensor *x = &ts[t];
    int ti = t < g->nin ? g->inputs[t] : g->outputs[t - g->nin];
    const sx *const *shape;
    fe_tensor_value(g, ti, &x->dt, &x->rank, &shape);
    x->dt = g->tensors[ti].dt; /* as declared: an output is stored as declared */
    x->name = g->tensors[ti].name;
    x->out = t >= g->nin;
    x->eb = dtype_bytes(x->dt);
    for (int i = 0; i < e->nargs; i++)
      if (e->args[i].role == DLC__ARG_DIM && val[i] + 3 > x->idx_hi) x->idx_hi = val[i] + 3;
    char why[128];
    if (x->rank > FE_MAX_RANK || pb_shape_eval(b, x->rank, shape, x->shape, why, sizeof why) != PB_OK) {
      SETUP_FAIL("%s %s: the shape of %s: %s", e->op, what, x->name, why);
      ok = false;
      break;
    }
    x->n = 1;
    for (int d = 0; d < x->rank; d++) x->n *= x->shape[d];
    if (x->rank == 2) x->ld = x->shape[1] + (cf->odd ? 3 : 8);
    if (cf->odd) x->off = is_vec_tensor(e, (int)(in - e->inst), x->name) ? 0 : 1;
    else if (cf->row && row_vec_tensor(cf->row, x->name)) x->off = cf->row->vec == cf->wmax ? 0 : cf->row->vec;
    else x->off = 0;
    if (!tensor_alloc(x, &seed, fill)) {
      SETUP_FAIL("%s %s: cannot allocate %s", e->op, what, x->name);
      ok = false;
    }
  }
  /* the arguments, in the entry table's order */
  for (int i = 0; ok && i < e->nargs; i++) {
    const dlc__entry_arg *a = &e->args[i];
    bool fixed;
    int t = -1;
    for (int j = 0; j < nt && a->role >= DLC__ARG_INPUT; j++)
      if (strcmp(ts[j].name, a->what) == 0) t = j;
    switch (a->role) {
    case DLC__ARG_DIM: args[i].i = val[i]; break;
    case DLC__ARG_ATTR:
      args[i].i = find_fixed(in, i, &fixed);
      if (!fixed) SETUP_FAIL("%s %s: runtime attr %s is not fixed by the instance", e->op, what, a->name), ok = false;
      break;
    case DLC__ARG_INPUT:
    case DLC__ARG_OUTPUT:
      if (t < 0) SETUP_FAIL("%s: argument %s names no signature tensor", e->op, a->name), ok = false;
      else args[i].p = (void *)(uintptr_t)(ts[t].dev + (devptr)(ts[t].off * ts[t].eb));
      break;
    case DLC__ARG_LD:
      if (t < 0 || ts[t].rank != 2) SETUP_FAIL("%s: argument %s is no rank-2 tensor's ld", e->op, a->name), ok = false;
      else args[i].i = ts[t].ld;
      break;
    }
  }
  /* an instance that needs a workspace (a chain op's, a split-K plan's):
   * the one dlc_<op>_workspace_size() reports, in the emulator's memory
   * (256-byte aligned); the other instances are called without one */
  if (ok && e->call_ws && in->workspace) {
    k->ws_bytes = e->workspace_size(in->dtype, args);
    if (k->ws_bytes > (size_t)MAX_DRY_ELEMS * 4 || dev_alloc(&k->ws, k->ws_bytes ? k->ws_bytes : 1) != 0) {
      SETUP_FAIL("%s %s: cannot allocate a workspace of %zu bytes", e->op, what, k->ws_bytes);
      ok = false;
    }
  }
  return ok;
}

/* A dry run of config `cf` at dims `val`: the rows of the dispatch table
 * the call selects are launched[0 .. the return value); 0 when the call
 * fails or selects none. */
static int dry_call(const dlc__entry *e, int ii, const inst_ctx *c, const config *cf, const int64_t *val) {
  pb_binding b;
  call k = {0};
  int n = 0;
  if (bind_dims(e, val, &b) && call_setup(e, &e->inst[ii], c, cf, val, &b, 1, "probe", false, &k)) {
    nlaunched = 0, dry = true;
    dlc_status st = invoke(e, e->inst[ii].dtype, &k);
    dry = false;
    if (st == DLC_SUCCESS) n = nlaunched < MAX_LAUNCHES ? nlaunched : MAX_LAUNCHES;
  }
  call_free(&k);
  return n;
}

/* The rows a dry run selects, in order, hashed into one number (0: none). */
static uint64_t dry_rows(const dlc__entry *e, int ii, const inst_ctx *c, const config *cf, const int64_t *val) {
  int n = dry_call(e, ii, c, cf, val);
  uint64_t code = 0;
  for (int l = 0; l < n; l++) code = code * 1000003u + (uint64_t)launched[l]->index + 1;
  return code;
}

static bool dry_selects(const dlc__entry *e, int ii, const inst_ctx *c, const config *cf, const int64_t *val, int row) {
  int n = dry_call(e, ii, c, cf, val);
  for (int l = 0; l < n; l++)
    if (launched[l]->op == e->index && launched[l]->index == row) return true;
  return false;
}

/* Sizes at which the dispatcher selects `row` (one the calls on the test
 * sizes did not reach: a shape bucket, say), searched with dry runs from
 * `base`: each free dim over a ladder of sizes, then each pair of them.
 * The ladder holds a size of each power-of-two residue up to 8 (2: 2 mod 4,
 * 4: 4 mod 8), for a chain kernel whose width only a dim's divisibility
 * selects (its operands live in the workspace, always aligned: the conv
 * after a layout conversion). */
static bool search_row(const dlc__entry *e, int ii, const inst_ctx *c, const config *cf, const int64_t *base, int row,
                       int64_t *out) {
  static const int64_t ladder[] = {1, 2, 3, 4, 8, 17, 40, 136, 520, 2056, 4104};
  enum { NL = sizeof ladder / sizeof *ladder };
  int fr[64], nf = 0;
  for (int a = 0; a < e->nargs; a++) {
    bool fixed;
    find_fixed(&e->inst[ii], a, &fixed);
    if (e->args[a].role == DLC__ARG_DIM && !fixed) fr[nf++] = a;
  }
  for (int x = 0; x < nf; x++)
    for (int u = 0; u < NL; u++) {
      memcpy(out, base, sizeof(int64_t) * (size_t)e->nargs);
      out[fr[x]] = ladder[u];
      if (dry_selects(e, ii, c, cf, out, row)) return true;
    }
  for (int x = 0; x < nf; x++)
    for (int y = x + 1; y < nf; y++)
      for (int u = 0; u < NL * NL; u++) {
        memcpy(out, base, sizeof(int64_t) * (size_t)e->nargs);
        out[fr[x]] = ladder[u / NL], out[fr[y]] = ladder[u % NL];
        if (dry_selects(e, ii, c, cf, out, row)) return true;
      }
  return false;
}

/* One call of config `cf` at dims `val`.  The inputs depend only on the
 * seed and the sizes, so the calls that force each width share one
 * playback: `ref` keeps it (computed by the first). */
static void run_call(const dlc__entry *e, int ii, const inst_ctx *c, const config *cf, const int64_t *val,
                     const opts *o, int *hits, uint64_t seed, pb_result *ref) {
  const dlc__entry_instance *in = &e->inst[ii];
  const fe_graph *g = c->fe;
  pb_binding b = {0};
  char what[160];
  if (cf->odd) snprintf(what, sizeof what, "%s odd sizes", in->tag);
  else if (cf->row && cf->row->step) snprintf(what, sizeof what, "%s k%d width %d", in->tag, cf->row->step, cf->row->vec);
  else snprintf(what, sizeof what, "%s width %d", in->tag, cf->row ? cf->row->vec : 0);
  call k = {0};
  pb_result own = {0}, *res = ref ? ref : &own;
  const char **in_names = calloc((size_t)g->nin + 1, sizeof(char *));
  pb_tensor *in_vals = calloc((size_t)g->nin + 1, sizeof(pb_tensor));
  if (!bind_dims(e, val, &b)) {
    FAIL("%s %s: cannot bind the dims", e->op, what);
    goto out;
  }
  if (!in_names || !in_vals || !call_setup(e, in, c, cf, val, &b, seed, what, true, &k)) goto out;
  tensor *ts = k.ts;
  int nt = k.nt;

  dlc_launch_info qi;
  nlaunched = 0;
  dlc_status qst = query(e, in->dtype, &k, &qi);
  if (nlaunched) FAIL("%s %s: dlc_%s_query launched %d kernels", e->op, what, e->op, nlaunched);
  nlaunched = 0, launched_ctas = 0;
  const long arenas = dlc__last_arena()->count;
  double t0 = now();
  dlc_status st = invoke(e, in->dtype, &k);
  const char *fault = st == DLC_SUCCESS ? dev_sync() : NULL;
  double t_emu = now() - t0;
  /* the rows that ran (or failed), whichever the call's outcome */
  char ran[160] = "";
  int nran = 0;
  for (int l = 0; l < nlaunched && l < MAX_LAUNCHES; l++) {
    const dlc__kernel *r = launched[l];
    if (r->op != e->index || r->index < 0 || r->index >= e->nkernels || strcmp(r->name, e->kernels[r->index].name) != 0) {
      FAIL("%s %s: ran %s (op %d, row %d), which the entry table does not list there", e->op, what, r->name, r->op,
           r->index);
      continue;
    }
    if (r->index != o->skip_row) hits[r->index]++;
    if (nran >= 0 && nran < (int)sizeof ran) nran += snprintf(ran + nran, sizeof ran - (size_t)nran, "%s%s", nran ? "+" : "", r->name);
  }
  check_query(e, in, what, &k, qst, &qi, st);
  if (st != DLC_SUCCESS) {
    FAIL("%s %s: %s: %s", e->op, what, dlc_status_string(st), dlc_last_error_detail());
    goto out;
  }
  if (fault) {
    FAIL("%s %s: %s: %s", e->op, what, ran, fault);
    goto out;
  }
  if (nlaunched == 0 || nlaunched > MAX_LAUNCHES) {
    FAIL("%s %s: %d launches", e->op, what, nlaunched);
    goto out;
  }
  /* a chain's workspace (issue 37 item 3): its arena within 1.1x the most
   * bytes live at one kernel, and within the workspace the call was given
   * (each value poisoned once read last: a wrong interval shows in the
   * outputs below) */
  const dlc__arena_rec *ar = dlc__last_arena();
  if (ar->count != arenas && nlaunched > 1) {
    if (ar->peak < 0 || (size_t)ar->peak > k.ws_bytes || ar->peak * 10 > ar->lower * 11)
      FAIL("%s %s: the arena of %d values needs %lld bytes (the workspace %zu), the live-set bound %lld", e->op, what,
           ar->n, (long long)ar->peak, k.ws_bytes, (long long)ar->lower);
    long long slices = 0; /* a slice a value, as before the arena */
    for (int v = 0; v < ar->n; v++) slices += ar->bytes[v];
    printf("%-18s %-26s arena of %d values: %lld bytes (a slice each: %lld), the live-set bound %lld\n", e->op, what,
           ar->n, (long long)ar->peak, slices, (long long)ar->lower);
  }
#ifdef KT_GPU
  if (o->graph) {
    /* the direct call's outputs, then the outputs reset and the same call
     * captured and replayed: the same kernels, the same bytes (and checked
     * below as every call is) */
    const dlc__kernel *direct[MAX_LAUNCHES];
    int ndirect = nlaunched;
    memcpy(direct, launched, sizeof direct);
    unsigned char **before = calloc((size_t)nt, sizeof(unsigned char *));
    bool ok = before != NULL;
    for (int t = 0; ok && t < nt; t++) {
      size_t bytes = (size_t)(ts[t].total * ts[t].eb);
      if (!ts[t].out) continue;
      ok = (before[t] = malloc(bytes)) && !dev_dtoh(before[t], ts[t].dev, bytes) && !dev_htod(ts[t].dev, ts[t].host, bytes);
    }
    nlaunched = 0, launched_ctas = 0;
    const char *why = NULL;
    dlc_status gs = ok ? invoke_graph(e, in->dtype, &k, &why) : DLC_ERROR_INTERNAL;
    if (!ok) FAIL("%s %s: cannot keep the direct call's outputs", e->op, what);
    else if (gs != DLC_SUCCESS || why)
      FAIL("%s %s: in a CUDA graph: %s: %s", e->op, what, why ? why : dlc_status_string(gs), why ? "" : dlc_last_error_detail());
    else if (nlaunched != ndirect || memcmp(launched, direct, sizeof(direct[0]) * (size_t)ndirect) != 0)
      FAIL("%s %s: the captured call launched %d kernels, the direct one %d (or others)", e->op, what, nlaunched, ndirect);
    for (int t = 0; ok && gs == DLC_SUCCESS && !why && t < nt; t++) {
      size_t bytes = (size_t)(ts[t].total * ts[t].eb);
      unsigned char *now_b = ts[t].out ? malloc(bytes) : NULL;
      if (ts[t].out && (!now_b || dev_dtoh(now_b, ts[t].dev, bytes) || memcmp(now_b, before[t], bytes) != 0))
        FAIL("%s %s: the graph's %s is not the direct call's", e->op, what, ts[t].name);
      free(now_b);
    }
    for (int t = 0; before && t < nt; t++) free(before[t]);
    free(before);
  }
#endif

  /* the reference: the regions played back on the same inputs, where a
   * kernel multiplies in TF32 its operands rounded as it rounds them
   * (kt_tf32), so that the tolerance stays the one of kt.h */
  for (int t = 0; t < g->nin; t++) in_names[t] = ts[t].name, in_vals[t] = ts[t].ref;
  bool rounded[64] = {0}, tf_ok = true;
  for (int l = 0; l < nlaunched && l < MAX_LAUNCHES && res->nout == 0 && tf_ok; l++) {
    const dlc__kernel *r = launched[l];
    if (r->index < 0 || r->index >= e->nkernels) continue;
    for (int side = 0; side < 2 && tf_ok; side++) {
      const char *nm = e->kernels[r->index].tf32[side];
      if (!nm) continue;
      int t = 0;
      while (t < g->nin && strcmp(ts[t].name, nm) != 0) t++;
      if (t == g->nin || t >= 64) {
        FAIL("%s %s: %s multiplies %s in TF32, which is not an input the test can round", e->op, what,
             e->kernels[r->index].name, nm);
        tf_ok = false;
        continue;
      }
      if (rounded[t]) continue;
      pb_tensor q = {0};
      if (pb_tensor_alloc(&q, ts[t].ref.rank, ts[t].ref.shape) != PB_OK) {
        FAIL("%s %s: out of memory", e->op, what);
        tf_ok = false;
        continue;
      }
      for (int64_t f = 0; f < ts[t].n; f++) q.data[f] = kt_tf32(ts[t].ref.data[f]);
      in_vals[t] = q, rounded[t] = true;
    }
  }
  t0 = now();
  pb_status ps = PB_OK;
  if (res->nout == 0 && tf_ok) ps = pb_eval_regions(c->rs, &b, g->nin, in_names, in_vals, res);
  for (int t = 0; t < g->nin && t < 64; t++)
    if (rounded[t]) pb_tensor_free(&in_vals[t]);
  if (!tf_ok) goto out;
  double t_pb = now() - t0;
  if (ps != PB_OK) {
    FAIL("%s %s: region playback failed: %s: %s", e->op, what, pb_status_name(ps), res->why);
    goto out;
  }
  double worst = 0;
  int64_t bad = 0, elems = 0;
  char dims[256] = "";
  for (int i = 0, n = 0; i < e->nargs; i++)
    if (e->args[i].role == DLC__ARG_DIM && n < (int)sizeof dims)
      n += snprintf(dims + n, sizeof dims - (size_t)n, "%s%s=%lld", n ? " " : "", e->args[i].what, (long long)val[i]);
  for (int t = 0; t < nt; t++) {
    tensor *x = &ts[t];
    size_t bytes = (size_t)(x->total * x->eb);
    unsigned char *got = malloc(bytes);
    if (!got || dev_dtoh(got, x->dev, bytes) != 0) {
      FAIL("%s %s: cannot read %s back", e->op, what, x->name);
      free(got);
      continue;
    }
    /* every byte outside the tensor keeps its canary; inputs are unchanged */
    bool *inside = calloc((size_t)x->total, 1);
    for (int64_t f = 0; x->out && f < x->n; f++) inside[elem_at(x, f)] = true;
    int64_t clobbered = 0;
    for (int64_t el = 0; el < x->total; el++)
      if (!inside[el] && memcmp(got + el * x->eb, x->host + el * x->eb, (size_t)x->eb) != 0) clobbered++;
    if (clobbered)
      FAIL("%s %s: %lld elements of %s %s were written", e->op, what, (long long)clobbered, x->out ? "output" : "input",
           x->out ? "outside the tensor (ld padding, offset or guard)" : x->name);
    free(inside);
    if (x->out && o->dump) {
      /* a line naming the output, then its elements in row-major order */
      fprintf(o->dump, "%s|%s|%s|%s|%s|%lld\n", e->op, what, dims, x->name, dtype_name(x->dt), (long long)x->n);
      for (int64_t f = 0; f < x->n; f++) fwrite(got + elem_at(x, f) * x->eb, (size_t)x->eb, 1, o->dump);
    }
    if (x->out) {
      int ro = -1;
      for (int r = 0; r < res->nout; r++)
        if (strcmp(res->out_name[r], x->name) == 0) ro = r;
      if (ro < 0 || res->out[ro].n != x->n) {
        FAIL("%s %s: playback gives no output %s of %lld elements", e->op, what, x->name, (long long)x->n);
      } else {
        if (o->corrupt && x->n > 0) {
          /* a wrong kernel: one element off by 2% of the output's range */
          double R = 0;
          for (int64_t f = 0; f < x->n; f++) R = fmax(R, fabs(res->out[ro].data[f]));
          store(x, got, elem_at(x, x->n / 2), load(x, got, elem_at(x, x->n / 2)) + 0.02 * (R + 1));
        }
        int64_t nb = compare(e, what, x, got, &res->out[ro], &worst);
        if (nb) FAIL("%s %s: %lld of %lld elements of %s out of tolerance", e->op, what, (long long)nb, (long long)x->n, x->name);
        bad += nb, elems += x->n;
      }
    }
    free(got);
  }
  /* once an instance, on its odd sizes: the same call through a plan */
  if (cf->odd) {
    const int before_plan = atomic_load(&failures);
    const char *how = check_plan(e, in, what, &k);
    if (atomic_load(&failures) == before_plan)
      printf("%-18s %-26s through a plan (%d params in its ConstPool): %s\n", e->op, what, e->npool, how);
  }
  printf("%-18s %-26s %-26s ran %-44s %7lld elems, worst %.3f of the tolerance (%.1f s " BACKEND ", %.1f s playback)%s\n",
         e->op, what, dims, ran, (long long)elems, worst, t_emu, t_pb, bad ? " FAILED" : "");
out:
  pb_result_free(&own);
  call_free(&k);
  free(in_names), free(in_vals);
}

/* ---- --threads: one instance's call from several threads at once ---------------------- */

/* Each thread first makes a call that fails on a dim of its own (-1001 for
 * thread 1), waits until every thread has, and checks that its detail
 * string names its own value; then it makes the instance's call (its
 * widest row) with the inputs of the serial call, checked as every call is
 * against that call's FP64 playback (`ref`), its query included. */
typedef struct thread_job {
  const dlc__entry *e;
  int ii, tid;
  const inst_ctx *c;
  const int64_t *dims;
  const opts *o;
  const config *cf;
  pb_result *ref;
  pthread_barrier_t *barrier;
} thread_job;

static void *thread_main(void *p) {
  const thread_job *j = p;
  const dlc__entry *e = j->e;
  const dlc__entry_instance *in = &e->inst[j->ii];
#ifndef KT_GPU
  dlcemu_set_limit(DLCEMU_LIMIT_CHECK_SHARED_RACES, 1); /* per thread */
  dlcemu_set_limit(DLCEMU_LIMIT_CHECK_UNINIT_SHARED, 1);
#endif
  dlc__arg_value bad[64] = {{0}};
  int d = 0;
  while (d < e->nargs && e->args[d].role != DLC__ARG_DIM) d++;
  for (int a = 0; a < e->nargs && a < 64; a++) {
    bool ptr = e->args[a].role == DLC__ARG_INPUT || e->args[a].role == DLC__ARG_OUTPUT;
    if (ptr) bad[a].p = NULL; /* the dim fails first */
    else bad[a].i = j->dims[a];
  }
  const long long mine = -1000 - j->tid;
  dlc_status st = DLC_ERROR_INVALID_VALUE;
  if (d < e->nargs) bad[d].i = mine, st = e->call(in->dtype, bad);
  pthread_barrier_wait(j->barrier);
  char want[32];
  snprintf(want, sizeof want, "%lld", mine);
  if (d < e->nargs && (st != DLC_ERROR_INVALID_VALUE || !strstr(dlc_last_error_detail(), want)))
    FAIL("%s %s thread %d: %s with %s = %lld; the detail is \"%s\"", e->op, in->tag, j->tid, dlc_status_string(st),
         e->args[d].name, mine, dlc_last_error_detail());
  int *hits = calloc((size_t)e->nkernels + 1, sizeof(int));
  if (hits) run_call(e, j->ii, j->c, j->cf, j->dims, j->o, hits, 0x9E3779B97F4A7C15ull ^ (uint64_t)(j->ii * 131 + 7), j->ref);
  free(hits);
  return NULL;
}

static void run_threads(const dlc__entry *e, int ii, const inst_ctx *c, const int64_t *dims, const opts *o,
                        pb_result *ref) {
  int k = 0;
  while (k < e->nkernels && (e->kernels[k].inst != ii || !row_runs_here(&e->kernels[k]))) k++;
  if (k == e->nkernels) return;
  config cf = {false, &e->kernels[k], row_wmax(e, &e->kernels[k])};
  enum { MAX_THREADS = 64 };
  int n = o->threads < MAX_THREADS ? o->threads : MAX_THREADS;
  pthread_t th[MAX_THREADS];
  thread_job job[MAX_THREADS];
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, (unsigned)n);
  int started = 0;
  for (int t = 0; t < n; t++) {
    job[t] = (thread_job){e, ii, t + 1, c, dims, o, &cf, ref, &barrier};
    if (pthread_create(&th[t], NULL, thread_main, &job[t]) != 0) {
      /* the barrier waits for n: the threads started would never pass it */
      FAIL("%s %s: cannot start thread %d", e->op, e->inst[ii].tag, t + 1);
      exit(1);
    }
    started++;
  }
  for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&barrier);
  printf("%-18s %-26s %d threads at once\n", e->op, e->inst[ii].tag, started);
}

/* ---- an op: every instance, every width, then the coverage ----------------------------- */

/* Whether entry instance `in` is a chain op's plan without a workspace
 * (the graph as given: "<tag>.given", which serves every shape). */
static bool is_given(const dlc__entry_instance *in) {
  size_t n = strlen(in->tag);
  return n > 6 && strcmp(in->tag + n - 6, ".given") == 0 && in->nbounds == 0 && !in->workspace;
}

/* Whether entry instance `in` compiles manifest instance `mi`: the same tag,
 * the tag and a shape bucket's ".b<i>", or the tag and ".given". */
static bool compiles(const dlc__entry_instance *in, const mf_instance *mi) {
  size_t n = strlen(mi->tag);
  if (strncmp(in->tag, mi->tag, n) != 0) return false;
  if (in->tag[n] == 0) return in->nbounds == 0;
  if (strcmp(in->tag + n, ".given") == 0) return is_given(in);
  return in->nbounds > 0 && in->tag[n] == '.' && in->tag[n + 1] == 'b' && in->tag[n + 2];
}

static void run_op(const dlc__entry *e, const mf_op *op, const opts *o) {
  mf_instance *mi = NULL;
  arena A;
  arena_init(&A);
  int ninst = mf_instances(&A, op, &mi);
  int *hits = calloc((size_t)e->nkernels + 1, sizeof(int));
  /* every manifest instance is compiled, as one entry instance that serves
   * every shape and any number of shape buckets; one that needs a workspace
   * (a chain) may have a plan without one, the graph as given, which serves
   * every shape too (dlc_<op>()'s calls) */
  bool ok = true;
  for (int m = 0; m < ninst; m++) {
    int serves_all = 0, given = 0, ws = 0;
    for (int i = 0; i < e->ninst; i++)
      if (e->inst[i].source == m && e->inst[i].nbounds == 0) {
        if (is_given(&e->inst[i])) given++;
        else serves_all++, ws |= e->inst[i].workspace;
      }
    if (serves_all != 1) FAIL("%s: manifest instance %s has %d entry instances for every shape", e->op, mi[m].tag, serves_all), ok = false;
    if (given > (ws ? 1 : 0))
      FAIL("%s: manifest instance %s has %d plans without a workspace beside one that %s", e->op, mi[m].tag, given,
           ws ? "needs one" : "needs none"), ok = false;
  }
  for (int i = 0; i < e->ninst; i++) {
    int m = e->inst[i].source;
    if (m < 0 || m >= ninst || !compiles(&e->inst[i], &mi[m]))
      FAIL("%s: entry instance %s names manifest instance %d of %d (%s)", e->op, e->inst[i].tag, m, ninst,
           m >= 0 && m < ninst ? mi[m].tag : "none"), ok = false;
  }
  for (int k = 0; k < e->nkernels; k++)
    if (e->kernels[k].inst < 0 || e->kernels[k].inst >= e->ninst)
      FAIL("%s: kernel %s has instance %d of %d", e->op, e->kernels[k].name, e->kernels[k].inst, e->ninst), ok = false;
  if (!ok) goto out;
  for (int i = 0; i < e->ninst; i++) {
    const dlc__entry_instance *in = &e->inst[i];
    if (o->threads && in->nbounds) continue; /* the instances that serve every shape */
    inst_ctx c;
    if (!inst_build(&c, op, &mi[in->source])) {
      FAIL("%s %s: the graph does not reach Region SSA", e->op, in->tag);
      inst_free(&c);
      continue;
    }
    int64_t dims[64] = {0}, odd_dims[64] = {0};
    if (e->nargs > 64 || !choose_dims(e, in, &c, false, dims) || !choose_dims(e, in, &c, true, odd_dims)) {
      FAIL("%s %s: cannot bind the dims", e->op, in->tag);
      inst_free(&c);
      continue;
    }
    /* A small dim, or one a shape bucket bounds, becomes odd (8 -> 7) where
     * the dispatcher still selects the same rows (the widest kernels; a dry
     * run asks it), so that the calls of every width meet tails in the
     * groups they flatten too, and a bucket's tiles a tail. */
    config widest = {false, NULL, 0};
    uint64_t want = dry_rows(e, i, &c, &widest, dims);
    for (int a = 0; a < e->nargs; a++) {
      bool fixed;
      int64_t lo, hi;
      find_fixed(in, a, &fixed);
      bool bounded = find_bound(in, a, &lo, &hi);
      if (e->args[a].role != DLC__ARG_DIM || fixed || (in->extent[a] > 0 && !bounded) || dims[a] < 3 ||
          (bounded && (dims[a] % 2 || dims[a] - 1 < lo)))
        continue;
      dims[a]--;
      if (dry_rows(e, i, &c, &widest, dims) != want) dims[a]++;
    }
    pb_result ref = {0};
    for (int k = 0; k < e->nkernels && !o->search_only; k++) {
      if (e->kernels[k].inst != i || k == o->skip_row || !row_runs_here(&e->kernels[k])) continue;
      config cf = {false, &e->kernels[k], row_wmax(e, &e->kernels[k])};
      run_call(e, i, &c, &cf, dims, o, hits, 0x9E3779B97F4A7C15ull ^ (uint64_t)(i * 131 + 7), &ref);
      if (o->threads) break; /* the instance's first row, then the threads */
    }
    if (o->threads) {
      if (ref.nout > 0) run_threads(e, i, &c, dims, o, &ref);
      pb_result_free(&ref);
      inst_free(&c);
      continue;
    }
    pb_result_free(&ref);
    config odd = {true, NULL, 0};
    if (o->skip_row < 0 && !o->search_only)
      run_call(e, i, &c, &odd, odd_dims, o, hits, 0xD1B54A32D192ED03ull ^ (uint64_t)(i * 17 + 3), NULL);
    /* rows those calls did not reach: sizes that select them, from the
     * dispatcher itself (dry runs) */
    for (int k = 0; k < e->nkernels; k++) {
      if (e->kernels[k].inst != i || hits[k] || k == o->skip_row || !row_runs_here(&e->kernels[k])) continue;
      config cf = {false, &e->kernels[k], row_wmax(e, &e->kernels[k])};
      int64_t found[64];
      pb_binding fb;
      if (!search_row(e, i, &c, &cf, dims, k, found) || !bind_dims(e, found, &fb)) continue; /* reported below */
      int64_t w = region_work(c.rs, &fb);
      if (w < 0 || w > 4 * WORK_BUDGET) {
        FAIL("%s: kernel %s is selected only at sizes of %lld region points, over 4 x the test's budget", e->op,
             e->kernels[k].name, (long long)w);
        continue;
      }
      printf("  %s: found by dry runs\n", e->kernels[k].name);
      run_call(e, i, &c, &cf, found, o, hits, 0x2545F4914F6CDD1Dull ^ (uint64_t)(k * 29 + 5), NULL);
    }
    inst_free(&c);
  }
  int expected = 0;
  for (int k = 0; k < e->nkernels && !o->threads; k++) {
    const dlc__entry_kernel *r = &e->kernels[k];
    if (!(r->archs & emu_arch)) continue; /* built for other archs */
    expected++;
    if (hits[k]) continue;
    if (!row_runs_here(r)) {
      if (r->sm90a_first < 0 || r->sm90a_first >= e->nkernels || e->kernels[r->sm90a_first].archs != DLC__ARCH_SM90A ||
          e->kernels[r->sm90a_first].inst != r->inst)
        FAIL("%s: kernel %s (instance %s) names row %d as its sm90a kernel, which is not the instance's sm90a kernel",
             e->op, r->name, e->inst[r->inst].tag, r->sm90a_first);
      else if (!hits[r->sm90a_first])
        FAIL("%s: kernel %s (instance %s, width %d) is taken by sm90a row %d, which was never launched", e->op, r->name,
             e->inst[r->inst].tag, r->vec, r->sm90a_first);
      else
        printf("  %s: its calls run %s on sm90a\n", r->name, e->kernels[r->sm90a_first].name), hits[k] = -1;
      continue;
    }
    FAIL("%s: kernel %s (instance %s, width %d) was never launched", e->op, r->name, e->inst[r->inst].tag, r->vec);
  }
  int covered = 0;
  for (int k = 0; k < e->nkernels; k++) covered += hits[k] > 0;
  if (!o->threads)
    printf("%s: %d of %d kernels for %s launched\n", e->op, covered, expected,
         emu_arch == DLC__ARCH_SM90A ? "sm90a" : "sm80");
out:
  free(hits);
  if (mi) mf_instances_free(mi, ninst);
  arena_free(&A);
}

int main(int argc, char **argv) {
  opts o = {NULL, false, -1, false, NULL, 0, false};
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) o.only = argv[++i];
    else if (strcmp(argv[i], "--corrupt") == 0) o.corrupt = true;
    else if (strcmp(argv[i], "--skip-row") == 0 && i + 1 < argc) o.skip_row = atoi(argv[++i]);
    else if (strcmp(argv[i], "--search-only") == 0) o.search_only = true;
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) o.threads = atoi(argv[++i]);
#ifdef KT_GPU
    else if (strcmp(argv[i], "--graph") == 0) o.graph = true;
#endif
    else if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc && !o.dump) {
      if (!(o.dump = fopen(argv[++i], "wb"))) {
        fprintf(stderr, "test_every_kernel: cannot write %s\n", argv[i]);
        return 2;
      }
    }
    else if (!path && argv[i][0] != '-') path = argv[i];
    else {
      fprintf(stderr, "usage: test_every_kernel MANIFEST [--op NAME] [--corrupt] [--skip-row N] [--search-only] [--dump FILE] [--threads N] [--graph]\n");
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "usage: test_every_kernel MANIFEST [--op NAME] [--corrupt] [--skip-row N] [--search-only] [--dump FILE] [--threads N] [--graph]\n");
    return 2;
  }
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (strcmp(base, dlc__entries_manifest) != 0) {
    fprintf(stderr, "test_every_kernel: the library was generated from %s, not %s\n", dlc__entries_manifest, base);
    return 2;
  }
  arena A;
  arena_init(&A);
  diag_list dl;
  diag_init(&dl);
  manifest *m = mf_read(&A, path, &dl);
  if (!m) {
    diag_print_text(&dl, "test_every_kernel");
    return 2;
  }
  /* memcheck is always on; poisoned cp.async destinations always fail */
#ifndef KT_GPU
  dlcemu_set_limit(DLCEMU_LIMIT_CHECK_SHARED_RACES, 1);
  dlcemu_set_limit(DLCEMU_LIMIT_CHECK_UNINIT_SHARED, 1);
#endif
  emu_arch = dlc__device_arch();
  if (emu_arch != DLC__ARCH_SM80 && emu_arch != DLC__ARCH_SM90A) {
    fprintf(stderr, "test_every_kernel: %s\n", dlc_last_error_detail());
    return 2;
  }
  dlc__launch_hook = on_launch;
  int ran = 0;
  for (int i = 0; i < dlc__nentries; i++) {
    const dlc__entry *e = &dlc__entries[i];
    if (o.only && strcmp(o.only, e->op) != 0) continue;
    ran++;
    if (e->index < 0 || e->index >= m->nops || strcmp(m->ops[e->index].name, e->op) != 0) {
      FAIL("%s: not the manifest's ops[%d]", e->op, e->index);
      continue;
    }
    run_op(e, &m->ops[e->index], &o);
  }
  if (!ran) FAIL("no op %s in the library", o.only ? o.only : "");
  dlc__launch_hook = NULL;
  mf_free(m);
  diag_free(&dl);
  arena_free(&A);
  if (o.dump && fclose(o.dump) != 0) FAIL("cannot write the dump");
  printf("%s\n", failures ? "FAILED"
                 : o.threads ? "every call from every thread matched playback, with its own detail string"
                             : "every kernel launched and matched playback");
  return failures ? 1 : 0;
}
