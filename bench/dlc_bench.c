/* dlc-bench: the library's entry points over the standard shape list
 * (issue 10; spec §13 "measurement log"), one CSV row per (op, shape, dtype,
 * arch):
 *
 *   op,shape,dtype,arch,plan,ctas,flops,bytes,occupancy,estimate_us,actual_us
 *
 * GEMM shapes are written MxNxK, convolutions NxHxWxC->K/s<stride>,
 * attention BxHxSxD.  One source, three builds (bench/CMakeLists.txt):
 *
 *   dlc-bench --model --csv FILE   (libdlckernels-null) the plan each call
 *       dispatches to, its CTAs, and the §11 model's estimate for sm80 and
 *       sm90a; actual_us empty.  No device.
 *   dlc-bench-emu --emu            (libdlckernels-emu) small shapes in the PTX
 *       emulator against an FP64 reference (GEMM, both layouts); prints the
 *       worst error; the emulator's time is not a GPU time, so no CSV.
 *   dlc-bench-gpu --gpu --csv FILE [--dtype fp16|bf16] (libdlckernels + CUDA
 *       + cuBLASLt; built only where the CUDA libraries exist) every shape on
 *       random operands, timed with CUDA events: warm-up, L2 flushed before
 *       each run, median of the repeats,
 *       in actual_us beside the plan that ran and the model's columns for
 *       the device's arch (what dlcgen --calibrate reads); GEMMs also
 *       through cuBLASLt with the same epilogue (RELU_BIAS for
 *       gemm_bias_relu*, GELU_BIAS for gemm_bias_gelu), layouts and
 *       dtype, as op "cublaslt_<op>" (actual_us only), into a second output
 *       buffer; stderr gets each time and, for the GEMMs, the relative
 *       difference between dlc's output and cuBLASLt's.
 *
 * The model's numbers rank plans; they are not a performance prediction.
 * bench/roofline.gp draws the CSV (gnuplot). */
#define _POSIX_C_SOURCE 200809L /* dlopen */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlc/dlc.h"

#if defined(DLC_BENCH_NULL) || defined(DLC_BENCH_GPU)
#include "dlc_internal.h"
#include "plan.h"
#endif
#if defined(DLC_BENCH_EMU)
#include "dlc/dlcemu.h"
#endif
#if defined(DLC_BENCH_GPU)
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#endif

/* ---- the standard shape list ------------------------------------------------------- */

/* (the --emu build uses little of what follows) */
#define MAYBE_UNUSED __attribute__((unused))

typedef enum { OP_GEMM, OP_GEMM_NT, OP_GEMM_GELU, OP_CONV, OP_ATTN, OP_SOFTMAX, OP_LAYERNORM, OP_RMSNORM, OP__COUNT } op_kind;
static const char *const OP_NAME[] = {"gemm_bias_relu", "gemm_bias_relu_nt", "gemm_bias_gelu", "conv2d_bias_silu",
                                      "attention_causal", "softmax", "layernorm", "rmsnorm"};
/* each op's dims as --op NAME takes them (--m 1 --n 4096 --k 4096), in shape.v's order */
static const char *const OP_DIMS[][7] = {{"m", "n", "k"}, {"m", "n", "k"}, {"m", "n", "k"},
                                         {"n", "h", "w", "c", "k", "stride"}, {"b", "h", "s", "d"},
                                         {"m", "n"}, {"m", "n"}, {"m", "n"}};
/* a row op: M rows of N (the row skeleton) */
MAYBE_UNUSED static bool is_row(op_kind op) { return op == OP_SOFTMAX || op == OP_LAYERNORM || op == OP_RMSNORM; }
/* a GEMM entry point (M N K shapes, cuBLASLt beside it on a GPU) */
MAYBE_UNUSED static bool is_gemm(op_kind op) { return op == OP_GEMM || op == OP_GEMM_NT || op == OP_GEMM_GELU; }

typedef struct shape {
  op_kind op;
  int64_t v[6]; /* GEMM: M N K; conv: N H W C K stride; attention: B H S D; rows: M N */
  const char *why;
} shape;

/* Square GEMMs 1024..8192; skinny GEMMs (M, N <= 512, K >= 4096: the
 * split-K bucket, with a workspace); Llama-7B-sized linear layers (hidden 4096, MLP
 * 11008) at decode (M = 1, 16) and prefill (M = 2048), B stored [N,K] as
 * PyTorch stores weights; the GEMM + bias + GELU (tanh form, cuBLASLt's
 * GELU_BIAS) on a square shape and the prefill MLP up projection (B
 * stored [K,N]: this op's layout); ResNet-50's 3x3 convolutions at batch 32 (the
 * stride-1 layer of each stage and the stride-2 first layers of stages 2-4);
 * attention as in the FlashAttention-2 paper's benchmark: 16k tokens per
 * batch (B = 16384 / S), hidden 2048 (H = 2048 / D), causal; the row ops at
 * Llama-7B's hidden size (RMSNorm at prefill and decode, a layernorm) and
 * a softmax over attention scores (32 heads x 2048 queries, 2048 keys). */
MAYBE_UNUSED static const shape SHAPES[] = {
    {OP_GEMM, {1024, 1024, 1024}, "square"},
    {OP_GEMM, {2048, 2048, 2048}, "square"},
    {OP_GEMM, {4096, 4096, 4096}, "square"},
    {OP_GEMM, {8192, 8192, 8192}, "square"},
    {OP_GEMM_NT, {1, 4096, 4096}, "decode qkvo"},
    {OP_GEMM_NT, {16, 4096, 4096}, "decode qkvo"},
    {OP_GEMM_NT, {16, 11008, 4096}, "decode mlp up"},
    {OP_GEMM_NT, {16, 4096, 11008}, "decode mlp down"},
    {OP_GEMM_NT, {2048, 4096, 4096}, "prefill qkvo"},
    {OP_GEMM_NT, {2048, 11008, 4096}, "prefill mlp up"},
    {OP_GEMM_NT, {2048, 4096, 11008}, "prefill mlp down"},
    {OP_GEMM, {256, 256, 8192}, "skinny (split-K)"},
    {OP_GEMM_NT, {512, 512, 4096}, "skinny (split-K)"},
    {OP_GEMM_NT, {128, 512, 16384}, "skinny (split-K)"},
    {OP_GEMM_GELU, {4096, 4096, 4096}, "square, GELU"},
    {OP_GEMM_GELU, {2048, 11008, 4096}, "prefill mlp up, GELU"},
    {OP_CONV, {32, 56, 56, 64, 64, 1}, "resnet50 conv2_x"},
    {OP_CONV, {32, 28, 28, 128, 128, 1}, "resnet50 conv3_x"},
    {OP_CONV, {32, 14, 14, 256, 256, 1}, "resnet50 conv4_x"},
    {OP_CONV, {32, 7, 7, 512, 512, 1}, "resnet50 conv5_x"},
    {OP_CONV, {32, 56, 56, 128, 128, 2}, "resnet50 conv3_1"},
    {OP_CONV, {32, 28, 28, 256, 256, 2}, "resnet50 conv4_1"},
    {OP_CONV, {32, 14, 14, 512, 512, 2}, "resnet50 conv5_1"},
    {OP_ATTN, {32, 32, 512, 64}, "fa2 d64"},
    {OP_ATTN, {8, 32, 2048, 64}, "fa2 d64"},
    {OP_ATTN, {2, 32, 8192, 64}, "fa2 d64"},
    {OP_ATTN, {32, 16, 512, 128}, "fa2 d128"},
    {OP_ATTN, {8, 16, 2048, 128}, "fa2 d128"},
    {OP_ATTN, {2, 16, 8192, 128}, "fa2 d128"},
    {OP_RMSNORM, {2048, 4096}, "prefill norm"},
    {OP_RMSNORM, {16, 4096}, "decode norm"},
    {OP_LAYERNORM, {2048, 4096}, "prefill layernorm"},
    {OP_SOFTMAX, {65536, 2048}, "attention scores"},
};
#define NSHAPES ((int)(sizeof SHAPES / sizeof *SHAPES))

MAYBE_UNUSED static int64_t conv_out(int64_t x, int64_t stride) { return (x + 2 - 3) / stride + 1; } /* 3x3, pad 1 */

MAYBE_UNUSED static void shape_text(const shape *s, char *buf, size_t n) {
  switch (s->op) {
  case OP_GEMM:
  case OP_GEMM_NT:
  case OP_GEMM_GELU:
    snprintf(buf, n, "%lldx%lldx%lld", (long long)s->v[0], (long long)s->v[1], (long long)s->v[2]);
    break;
  case OP_CONV:
    snprintf(buf, n, "%lldx%lldx%lldx%lld->%lld/s%lld", (long long)s->v[0], (long long)s->v[1], (long long)s->v[2],
             (long long)s->v[3], (long long)s->v[4], (long long)s->v[5]);
    break;
  case OP_ATTN:
    snprintf(buf, n, "%lldx%lldx%lldx%lld", (long long)s->v[0], (long long)s->v[1], (long long)s->v[2],
             (long long)s->v[3]);
    break;
  default: /* the row ops */
    snprintf(buf, n, "%lldx%lld", (long long)s->v[0], (long long)s->v[1]);
    break;
  }
}

/* The GEMM view of a contraction call: M, N, K (conv: N P Q, K, 9 C). */
MAYBE_UNUSED static void gemm_view(const shape *s, int64_t *M, int64_t *N, int64_t *K) {
  if (s->op == OP_CONV) {
    *M = s->v[0] * conv_out(s->v[1], s->v[5]) * conv_out(s->v[2], s->v[5]), *N = s->v[4], *K = 9 * s->v[3];
  } else {
    *M = s->v[0], *N = s->v[1], *K = s->v[2];
  }
}

/* Useful FLOPs: 2 M N K; causal attention computes half of the 2 S^2 D of
 * each of QK^T and PV: 2 B H S^2 D. */
MAYBE_UNUSED static double flops_of(const shape *s) {
  if (is_row(s->op)) return 5.0 * (double)s->v[0] * (double)s->v[1]; /* a few elementwise ops an element, no MMA */
  if (s->op == OP_ATTN) return 2.0 * (double)s->v[0] * (double)s->v[1] * (double)s->v[2] * (double)s->v[2] * (double)s->v[3];
  int64_t M, N, K;
  gemm_view(s, &M, &N, &K);
  return 2.0 * (double)M * (double)N * (double)K;
}

/* The workspace a GEMM of shape s can use (dlc_<op>_workspace_size: its
 * split-K plan's partials; 0 for the others). */
MAYBE_UNUSED static size_t ws_of(const shape *s, dlc_dtype dt) {
  const int64_t *v = s->v;
  if (s->op == OP_GEMM) return dlc_gemm_bias_relu_workspace_size(dt, v[0], v[1], v[2]);
  if (s->op == OP_GEMM_NT) return dlc_gemm_bias_relu_nt_workspace_size(dt, v[0], v[1], v[2]);
  if (s->op == OP_GEMM_GELU) return dlc_gemm_bias_gelu_workspace_size(dt, v[0], v[1], v[2]);
  return 0;
}

/* One call of shape s with pointers p[4] (inputs, then the output); GEMMs
 * through dlc_<op>_ws with the workspace ws of ws_bytes (NULL, 0: none). */
static dlc_status call(const shape *s, dlc_dtype dt, void *const *p, void *ws, size_t ws_bytes) {
  const int64_t *v = s->v;
  switch (s->op) {
  case OP_GEMM:
    return dlc_gemm_bias_relu_ws(dt, v[0], v[1], v[2], p[0], v[2], p[1], v[1], p[2], p[3], v[1], ws, ws_bytes, NULL);
  case OP_GEMM_NT:
    return dlc_gemm_bias_relu_nt_ws(dt, v[0], v[1], v[2], p[0], v[2], p[1], v[2], p[2], p[3], v[1], ws, ws_bytes, NULL);
  case OP_GEMM_GELU:
    return dlc_gemm_bias_gelu_ws(dt, v[0], v[1], v[2], p[0], v[2], p[1], v[1], p[2], p[3], v[1], ws, ws_bytes, NULL);
  case OP_CONV:
    return dlc_conv2d_bias_silu(dt, v[0], v[1], v[2], v[3], v[4], v[5], v[5], 1, 1, p[0], p[1], p[2], p[3], NULL);
  case OP_ATTN: return dlc_attention_causal(dt, v[0], v[1], v[2], v[3], p[0], p[1], p[2], p[3], NULL);
  case OP_SOFTMAX: return dlc_softmax(dt, v[0], v[1], p[0], v[1], p[3], v[1], NULL);
  case OP_LAYERNORM: return dlc_layernorm(dt, v[0], v[1], p[0], v[1], p[1], p[2], p[3], v[1], NULL);
  case OP_RMSNORM: return dlc_rmsnorm(dt, v[0], v[1], p[0], v[1], p[1], p[3], v[1], NULL);
  case OP__COUNT: break;
  }
  return DLC_ERROR_INTERNAL;
}

/* The same call through a plan of the op (docs/runtime.md): plan_make
 * copies the params (p[1] or p[2], as call() passes them) into its pool;
 * plan_call runs it with the call's other arguments. */
typedef struct bench_plan {
  int op;
  void *h;
} bench_plan;

MAYBE_UNUSED static dlc_status plan_make(const shape *s, dlc_dtype dt, void *const *p, bench_plan *bp) {
  const int64_t *v = s->v;
  bp->op = s->op;
  switch (s->op) {
  case OP_GEMM: return dlc_gemm_bias_relu_plan_create((dlc_gemm_bias_relu_plan **)&bp->h, dt, v[1], p[2], NULL);
  case OP_GEMM_NT:
    return dlc_gemm_bias_relu_nt_plan_create((dlc_gemm_bias_relu_nt_plan **)&bp->h, dt, v[1], v[2], p[1], v[2], p[2], NULL);
  case OP_GEMM_GELU: return dlc_gemm_bias_gelu_plan_create((dlc_gemm_bias_gelu_plan **)&bp->h, dt, v[1], p[2], NULL);
  case OP_CONV: return dlc_conv2d_bias_silu_plan_create((dlc_conv2d_bias_silu_plan **)&bp->h, dt, v[3], v[4], p[1], p[2], NULL);
  case OP_ATTN: return dlc_attention_causal_plan_create((dlc_attention_causal_plan **)&bp->h, dt, NULL);
  case OP_SOFTMAX: return dlc_softmax_plan_create((dlc_softmax_plan **)&bp->h, dt, NULL);
  case OP_LAYERNORM: return dlc_layernorm_plan_create((dlc_layernorm_plan **)&bp->h, dt, v[1], p[1], p[2], NULL);
  case OP_RMSNORM: return dlc_rmsnorm_plan_create((dlc_rmsnorm_plan **)&bp->h, dt, v[1], p[1], NULL);
  case OP__COUNT: break;
  }
  return DLC_ERROR_INTERNAL;
}

MAYBE_UNUSED static dlc_status plan_call(const shape *s, const bench_plan *bp, void *const *p, void *ws, size_t ws_bytes,
                                         struct CUstream_st *st) {
  const int64_t *v = s->v;
  switch (s->op) {
  case OP_GEMM: return dlc_gemm_bias_relu_plan_run(bp->h, v[0], v[2], p[0], v[2], p[1], v[1], p[3], v[1], ws, ws_bytes, st);
  case OP_GEMM_NT: return dlc_gemm_bias_relu_nt_plan_run(bp->h, v[0], p[0], v[2], p[3], v[1], ws, ws_bytes, st);
  case OP_GEMM_GELU: return dlc_gemm_bias_gelu_plan_run(bp->h, v[0], v[2], p[0], v[2], p[1], v[1], p[3], v[1], ws, ws_bytes, st);
  case OP_CONV: return dlc_conv2d_bias_silu_plan_run(bp->h, v[0], v[1], v[2], v[5], v[5], 1, 1, p[0], p[3], NULL, 0, st);
  case OP_ATTN: return dlc_attention_causal_plan_run(bp->h, v[0], v[1], v[2], v[3], p[0], p[1], p[2], p[3], NULL, 0, st);
  case OP_SOFTMAX: return dlc_softmax_plan_run(bp->h, v[0], v[1], p[0], v[1], p[3], v[1], NULL, 0, st);
  case OP_LAYERNORM: return dlc_layernorm_plan_run(bp->h, v[0], p[0], v[1], p[3], v[1], NULL, 0, st);
  case OP_RMSNORM: return dlc_rmsnorm_plan_run(bp->h, v[0], p[0], v[1], p[3], v[1], NULL, 0, st);
  case OP__COUNT: break;
  }
  return DLC_ERROR_INTERNAL;
}

MAYBE_UNUSED static void plan_free(bench_plan *bp) {
  switch (bp->op) {
  case OP_GEMM: dlc_gemm_bias_relu_plan_destroy(bp->h); break;
  case OP_GEMM_NT: dlc_gemm_bias_relu_nt_plan_destroy(bp->h); break;
  case OP_GEMM_GELU: dlc_gemm_bias_gelu_plan_destroy(bp->h); break;
  case OP_CONV: dlc_conv2d_bias_silu_plan_destroy(bp->h); break;
  case OP_ATTN: dlc_attention_causal_plan_destroy(bp->h); break;
  case OP_SOFTMAX: dlc_softmax_plan_destroy(bp->h); break;
  case OP_LAYERNORM: dlc_layernorm_plan_destroy(bp->h); break;
  case OP_RMSNORM: dlc_rmsnorm_plan_destroy(bp->h); break;
  default: break;
  }
  bp->h = NULL;
}

MAYBE_UNUSED static const char CSV_HEADER[] = "op,shape,dtype,arch,plan,ctas,flops,bytes,occupancy,estimate_us,actual_us\n";

static int usage(void) {
  fprintf(stderr,
          "usage: dlc-bench --model --csv FILE|- [--op NAME [--DIM V ...]] [--dtype fp16|bf16]\n"
          "       dlc-bench --host [--op NAME [--DIM V ...]] [--dtype fp16|bf16]\n"
          "       dlc-bench-emu --emu\n"
          "       dlc-bench-gpu --gpu --csv FILE|- [--op NAME [--DIM V ...]] [--repeats N] [--dtype fp16|bf16]\n"
          "       dlc-bench-gpu --host [--op NAME [--DIM V ...]] [--dtype fp16|bf16]\n"
          "ops and their dims:");
  for (int o = 0; o < OP__COUNT; o++) {
    fprintf(stderr, "%s %s", o ? "," : "", OP_NAME[o]);
    for (int d = 0; d < 7 && OP_DIMS[o][d]; d++) fprintf(stderr, " --%s", OP_DIMS[o][d]);
  }
  fputc('\n', stderr);
  return 2;
}

/* The shapes a run covers: the standard list, or --op's (its shapes in the
 * list; with dims, one shape: the op's first in the list with those dims
 * replaced). */
static shape sel[sizeof SHAPES / sizeof *SHAPES];
static int nsel;

/* The elapsed seconds of the wall clock since an origin. */
MAYBE_UNUSED static double now_s(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

MAYBE_UNUSED static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The host cost of one call of shape s: the median over 9 runs of n calls
 * of the wall time a call takes to return, in microseconds (on the null
 * backend: the checks, the kernel choice and the grid; on the CUDA backend
 * also the launch's enqueue, with no synchronization in the runs); with
 * `bp`, of the call through that plan, on stream `st`. */
MAYBE_UNUSED static double host_us(const shape *s, dlc_dtype dt, void *const *p, void *ws, size_t ws_bytes, int n,
                                   const bench_plan *bp, struct CUstream_st *st) {
  double t[9];
  for (int r = 0; r < 9; r++) {
    double t0 = now_s();
    for (int i = 0; i < n; i++)
      if ((bp ? plan_call(s, bp, p, ws, ws_bytes, st) : call(s, dt, p, ws, ws_bytes)) != DLC_SUCCESS) return -1;
    t[r] = (now_s() - t0) / n * 1e6;
  }
  qsort(t, 9, sizeof *t, cmp_d);
  return t[4];
}

/* ---- the model's columns ------------------------------------------------------------ */
#if defined(DLC_BENCH_NULL) || defined(DLC_BENCH_GPU)

/* One CSV row for the launch `l` of shape s on arch `arch`: the plan of the
 * kernel row, the CTAs, and the model's flops, bytes, occupancy and
 * estimate (empty when plan_arch() does not know the arch); `actual`
 * (microseconds) or an empty actual_us when negative. */
static const char *csv_dtype = "fp16"; /* the dtype column: --dtype */

static void csv_row(FILE *csv, const char *op, const shape *s, const char *arch, const dlc__launch_rec *l,
                    double actual) {
  char sh[96], plan[96], act[32] = "";
  shape_text(s, sh, sizeof sh);
  const dlc__kernel *k = l->kernel;
  int64_t ctas = (int64_t)l->grid[0] * l->grid[1] * l->grid[2];
  snprintf(plan, sizeof plan, "%dx%dx%d s%d w%dx%d r%d", k->bm, k->bn, k->bk, k->stages, k->warps_m, k->warps_n,
           k->raster);
  /* split-K: the last launch is the second kernel (its tiles on x and z,
   * split_parts CTAs a tile on y); the plan adds " k<slices>", and the CTAs
   * are the first kernel's.  The call chose its slices: its workspace holds
   * tiles x slices fp32 tiles */
  int64_t slices = 1;
  if (k->split > 1) {
    ctas = (int64_t)l->grid[0] * l->grid[2];
    size_t ws = ws_of(s, strcmp(csv_dtype, "bf16") == 0 ? DLC_BF16 : DLC_F16);
    slices = (int64_t)(ws / ((size_t)ctas * (size_t)k->bm * (size_t)k->bn * 4));
    ctas *= slices;
    size_t n = strlen(plan);
    snprintf(plan + n, sizeof plan - n, " k%lld", (long long)slices);
  }
  if (actual >= 0) snprintf(act, sizeof act, "%.2f", actual);
  const arch_info *ai = plan_arch(arch);
  double flops = flops_of(s), bytes, occ, us;
  if (!ai) {
    fprintf(csv, "%s,%s,%s,%s,%s,%lld,%.0f,,,,%s\n", op, sh, csv_dtype, arch, plan, (long long)ctas, flops, act);
    return;
  }
  if (s->op == OP_ATTN || is_row(s->op)) {
    /* no §11 estimate for the streaming and row skeletons: a roofline bound
     * at the wave fill (CTAs over SMs), each tensor read or written once
     * (attention's Q, K, V and O; a row op's X and Y) */
    bytes = s->op == OP_ATTN ? 4.0 * 2 * (double)s->v[0] * (double)s->v[1] * (double)s->v[2] * (double)s->v[3]
                             : 2.0 * 2 * (double)s->v[0] * (double)s->v[1];
    occ = fmin(1.0, (double)ctas / ai->sm_count);
    us = fmax(flops / (ai->peak_tflops * 1e12 * occ), bytes / (ai->peak_gbs * 1e9)) * 1e6;
  } else {
    sched_plan sp;
    memset(&sp, 0, sizeof sp);
    sp.tile[0] = k->bm, sp.tile[1] = k->bn, sp.tile[2] = k->bk, sp.stages = k->stages;
    sp.warps_m = k->warps_m, sp.warps_n = k->warps_n, sp.raster_group = k->raster, sp.addr_regs = k->addr_regs;
    sp.split_k = (int)slices; /* plan_split_slices on it gives the call's slices back */
    int64_t M, N, K;
    gemm_view(s, &M, &N, &K);
    plan_shape_estimate e = plan_estimate(&sp, ai, M, N, K, 1, 2, 2);
    bytes = e.dram_bytes, occ = e.occ, us = e.us;
  }
  fprintf(csv, "%s,%s,%s,%s,%s,%lld,%.0f,%.0f,%.3f,%.2f,%s\n", op, sh, csv_dtype, arch, plan, (long long)ctas, flops,
          bytes, occ, us, act);
}
#endif

/* ---- --model ------------------------------------------------------------------------ */
#if defined(DLC_BENCH_NULL)

static void *fake(uintptr_t a) { return (void *)a; }
static dlc_dtype model_dt = DLC_F16;

/* --host: each shape's dispatch cost on the null backend (the pointers are
 * never dereferenced), with its workspace as --model gives it. */
static int run_host_null(void) {
  void *p[4] = {fake(0x10000000), fake(0x20000000), fake(0x30000000), fake(0x40000000)};
  int fails = 0;
  printf("%-18s %-24s %-5s %-12s %s\n", "op", "shape", "dtype", "dispatch_ns", "plan_run_ns (null backend: checks, kernel choice, grid)");
  for (int i = 0; i < nsel; i++) {
    char sh[96];
    shape_text(&sel[i], sh, sizeof sh);
    const size_t ws = ws_of(&sel[i], model_dt);
    double us = host_us(&sel[i], model_dt, p, fake(0x50000000), ws, 20000, NULL, NULL), pus = -1;
    bench_plan bp = {0};
    if (us >= 0 && plan_make(&sel[i], model_dt, p, &bp) == DLC_SUCCESS) {
      pus = host_us(&sel[i], model_dt, p, fake(0x50000000), ws, 20000, &bp, NULL);
      plan_free(&bp);
    }
    if (us < 0 || pus < 0) {
      fprintf(stderr, "dlc-bench: %s %s: %s\n", OP_NAME[sel[i].op], sh, dlc_last_error_detail());
      fails++;
      continue;
    }
    printf("%-18s %-24s %-5s %-12.1f %.1f\n", OP_NAME[sel[i].op], sh, model_dt == DLC_BF16 ? "bf16" : "fp16", us * 1e3,
           pus * 1e3);
  }
  return fails ? 1 : 0;
}

static int run_model(FILE *csv) {
  static const char *const archs[] = {"sm80", "sm90a"};
  void *p[4] = {fake(0x10000000), fake(0x20000000), fake(0x30000000), fake(0x40000000)};
  fputs(CSV_HEADER, csv);
  int fails = 0;
  for (int i = 0; i < nsel; i++) {
    const shape *s = &sel[i];
    char sh[96];
    shape_text(s, sh, sizeof sh);
    /* a GEMM gets the workspace its split-K plan asks for (any aligned address: nothing runs) */
    dlc_status st = call(s, model_dt, p, fake(0x50000000), ws_of(s, model_dt));
    if (st != DLC_SUCCESS) {
      fprintf(stderr, "dlc-bench: %s %s: %s: %s\n", OP_NAME[s->op], sh, dlc_status_string(st), dlc_last_error_detail());
      fails++;
      continue;
    }
    for (int a = 0; a < 2; a++) csv_row(csv, OP_NAME[s->op], s, archs[a], dlc__last_launch(), -1);
  }
  return fails ? 1 : 0;
}
#endif

/* ---- --emu ---------------------------------------------------------------------------- */
#if defined(DLC_BENCH_EMU)

static uint16_t f2h(float f) { /* round to nearest even, normal range only (the data is in [-1, 1]) */
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t s = (x >> 16) & 0x8000u, e = (x >> 23) & 0xff, m = x & 0x7fffff;
  if (e < 113) return (uint16_t)s; /* flush tiny values (none here but 0) */
  uint32_t h = ((e - 112) << 10) | (m >> 13), r = m & 0x1fff;
  if (r > 0x1000 || (r == 0x1000 && (h & 1))) h++;
  return (uint16_t)(s | h);
}
static double h2d(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
  return h & 0x8000 ? -v : v;
}

static int run_emu(void) {
  static const int64_t small[][3] = {{1, 64, 64}, {16, 136, 72}, {77, 130, 96}, {200, 72, 40}};
  int fails = 0;
  for (int nt = 0; nt < 2; nt++)
    for (size_t i = 0; i < sizeof small / sizeof *small; i++) {
      int64_t M = small[i][0], N = small[i][1], K = small[i][2];
      size_t na = (size_t)(M * K), nb = (size_t)(K * N), nc = (size_t)(M * N);
      uint16_t *ha = malloc(2 * na), *hb = malloc(2 * nb), *hbias = malloc(2 * (size_t)N), *hc = malloc(2 * nc);
      uint64_t seed = 12345 + (uint64_t)i;
      for (size_t j = 0; j < na; j++) seed = seed * 6364136223846793005ull + 1, ha[j] = f2h((float)((seed >> 40) % 2001) / 1000.f - 1.f);
      for (size_t j = 0; j < nb; j++) seed = seed * 6364136223846793005ull + 1, hb[j] = f2h((float)((seed >> 40) % 2001) / 1000.f - 1.f);
      for (int64_t j = 0; j < N; j++) seed = seed * 6364136223846793005ull + 1, hbias[j] = f2h((float)((seed >> 40) % 2001) / 1000.f - 1.f);
      dlcemu_deviceptr da, db, dbias, dc;
      dlcemu_mem_alloc(&da, 2 * na), dlcemu_mem_alloc(&db, 2 * nb), dlcemu_mem_alloc(&dbias, 2 * (size_t)N);
      dlcemu_mem_alloc(&dc, 2 * nc);
      dlcemu_memcpy_htod(da, ha, 2 * na), dlcemu_memcpy_htod(db, hb, 2 * nb), dlcemu_memcpy_htod(dbias, hbias, 2 * (size_t)N);
      shape s = {nt ? OP_GEMM_NT : OP_GEMM, {M, N, K}, "emu"};
      void *p[4] = {(void *)(uintptr_t)da, (void *)(uintptr_t)db, (void *)(uintptr_t)dbias, (void *)(uintptr_t)dc};
      dlc_status st = call(&s, DLC_F16, p, NULL, 0);
      double worst = 0;
      if (st == DLC_SUCCESS) {
        dlcemu_memcpy_dtoh(hc, dc, 2 * nc);
        double R = 0;
        double *ref = malloc(sizeof(double) * nc);
        for (int64_t m = 0; m < M; m++)
          for (int64_t n = 0; n < N; n++) {
            double acc = h2d(hbias[n]);
            for (int64_t k = 0; k < K; k++) acc += h2d(ha[m * K + k]) * h2d(nt ? hb[n * K + k] : hb[k * N + n]);
            ref[m * N + n] = acc > 0 ? acc : 0;
            R = fmax(R, fabs(ref[m * N + n]));
          }
        for (size_t j = 0; j < nc; j++) worst = fmax(worst, fabs(h2d(hc[j]) - ref[j]) / (1e-3 * (fabs(ref[j]) + R) + 1e-3));
        free(ref);
      }
      bool ok = st == DLC_SUCCESS && worst <= 1.0;
      fails += !ok;
      printf("%s %lldx%lldx%lld fp16: %s, worst error %.3f of rtol = atol = 1e-3%s\n", OP_NAME[s.op], (long long)M,
             (long long)N, (long long)K, dlc_status_string(st), worst, ok ? "" : "  FAILED");
      if (st != DLC_SUCCESS) printf("  %s\n", dlc_last_error_detail());
      dlcemu_mem_free(da), dlcemu_mem_free(db), dlcemu_mem_free(dbias), dlcemu_mem_free(dc);
      free(ha), free(hb), free(hbias), free(hc);
    }
  return fails ? 1 : 0;
}
#endif

/* ---- --gpu ---------------------------------------------------------------------------- */
#if defined(DLC_BENCH_GPU)

#define CU(x)                                                                               \
  do {                                                                                      \
    cudaError_t e_ = (x);                                                                   \
    if (e_ != cudaSuccess) {                                                                \
      fprintf(stderr, "dlc-bench: %s: %s (%s:%d)\n", #x, cudaGetErrorString(e_), __FILE__, __LINE__); \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

/* cuBLASLt, loaded at run time (lt_load): the installed dlc-bench-gpu
 * needs no cuBLASLt to time dlc's kernels and measure their host cost; where
 * libcublasLt is found it times cuBLASLt beside them. */
#define LT_FNS(X)                                                                                                    \
  X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy)                      \
  X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy)                     \
  X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)       \
  X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmul)
#define LT_PTR(f) static __typeof__(f) *lt_##f;
LT_FNS(LT_PTR)
#undef LT_PTR
#define LT_STR_(x) #x
#define LT_STR(x) LT_STR_(x)

#ifndef DLC_BENCH_CUDA_LIBDIR
#define DLC_BENCH_CUDA_LIBDIR "/usr/local/cuda/lib64"
#endif
/* Whether cuBLASLt's library (of the major version this was built with,
 * else any) loaded with every function above; says once on stderr when not. */
static bool lt_load(void) {
  static int state; /* 0: not tried; 1: loaded; -1: not */
  if (state) return state > 0;
  /* the loader's paths, then the toolkit's library directory of the build */
  static const char *const names[] = {"libcublasLt.so." LT_STR(CUBLAS_VER_MAJOR), "libcublasLt.so",
                                      DLC_BENCH_CUDA_LIBDIR "/libcublasLt.so." LT_STR(CUBLAS_VER_MAJOR)};
  void *h = NULL;
  for (size_t i = 0; i < sizeof names / sizeof *names && !h; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  bool ok = h != NULL;
#define LT_SYM(f) ok = ok && (*(void **)&lt_##f = dlsym(h, #f)) != NULL;
  LT_FNS(LT_SYM)
#undef LT_SYM
  state = ok ? 1 : -1;
  if (!ok)
    fprintf(stderr, "dlc-bench: cuBLASLt not loaded (%s): dlc's kernels alone are timed\n",
            h ? "a function is missing" : "no libcublasLt.so." LT_STR(CUBLAS_VER_MAJOR) " on the loader's paths or in "
                                           DLC_BENCH_CUDA_LIBDIR);
  return ok;
}

static int cmp_f(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* The median of `repeats` timed runs of fn after 3 warm-ups, with L2
 * flushed (a write over a buffer twice its size) before each run. */
typedef struct timed {
  int (*fn)(void *ctx);
  void *ctx;
} timed;

static double median_us(timed t, void *flush, size_t flush_bytes, int repeats) {
  cudaEvent_t a, b;
  CU(cudaEventCreate(&a));
  CU(cudaEventCreate(&b));
  for (int i = 0; i < 3; i++)
    if (t.fn(t.ctx)) return NAN;
  float *ms = malloc(sizeof(float) * (size_t)repeats);
  for (int r = 0; r < repeats; r++) {
    CU(cudaMemsetAsync(flush, r & 0xff, flush_bytes, 0));
    CU(cudaEventRecord(a, 0));
    if (t.fn(t.ctx)) return NAN;
    CU(cudaEventRecord(b, 0));
    CU(cudaEventSynchronize(b));
    CU(cudaEventElapsedTime(&ms[r], a, b));
  }
  qsort(ms, (size_t)repeats, sizeof *ms, cmp_f);
  double med = 1e3 * ms[repeats / 2];
  free(ms);
  CU(cudaEventDestroy(a));
  CU(cudaEventDestroy(b));
  return med;
}

typedef struct dlc_ctx {
  const shape *s;
  dlc_dtype dt;
  void *p[4];
  void *ws;        /* the workspace cuBLASLt gets too */
  size_t ws_bytes;
} dlc_ctx;
static int run_dlc(void *c) {
  dlc_ctx *x = c;
  dlc_status st = call(x->s, x->dt, x->p, x->ws, x->ws_bytes);
  if (st) fprintf(stderr, "dlc-bench: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
  return st != DLC_SUCCESS;
}

/* cuBLASLt with the same computation: C[M,N] (row-major) = relu(A B + bias)
 * (gemm_bias_gelu: gelu_tanh(A B + bias), CUBLASLT_EPILOGUE_GELU_BIAS,
 * whose GELU is the tanh form), fp16 in and out, fp32 compute.  Row-major
 * C = A B is column-major C^T = B^T A^T: the matmul runs on the transposed
 * problem (m = N, n = M), with the bias along its rows (the _BIAS
 * epilogues add a vector of m). */
typedef struct lt_ctx {
  cublasLtHandle_t h;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulAlgo_t algo;
  void *a, *b, *c, *ws;
  size_t ws_bytes;
} lt_ctx;
static int run_lt(void *c) {
  lt_ctx *x = c;
  const float one = 1.f, zero = 0.f;
  /* operands of the transposed problem: B^T (N x K) then A^T (K x M) */
  cublasStatus_t st = lt_cublasLtMatmul(x->h, x->op, &one, x->b, x->lb, x->a, x->la, &zero, x->c, x->lc, x->c, x->lc,
                                     &x->algo, x->ws, x->ws_bytes, 0);
  if (st != CUBLAS_STATUS_SUCCESS) fprintf(stderr, "dlc-bench: cublasLtMatmul: status %d\n", (int)st);
  return st != CUBLAS_STATUS_SUCCESS;
}

static bool lt_setup(lt_ctx *x, const shape *s, dlc_dtype dt, void *const *p, void *c, void *ws, size_t ws_bytes) {
  int64_t M = s->v[0], N = s->v[1], K = s->v[2];
  bool nt = s->op == OP_GEMM_NT;
  memset(x, 0, sizeof *x);
  x->a = p[0], x->b = p[1], x->c = c, x->ws = ws, x->ws_bytes = ws_bytes;
  cudaDataType_t et = dt == DLC_BF16 ? CUDA_R_16BF : CUDA_R_16F;
  if (lt_cublasLtCreate(&x->h) != CUBLAS_STATUS_SUCCESS) return false;
  lt_cublasLtMatmulDescCreate(&x->op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  /* first operand B^T: row-major B [K,N] is column-major N x K with ld N
   * (no transpose); B stored [N,K] (nt) is column-major K x N, transposed */
  cublasOperation_t ta = nt ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
  lt_cublasLtMatmulDescSetAttribute(x->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  lt_cublasLtMatmulDescSetAttribute(x->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  cublasLtEpilogue_t epi = s->op == OP_GEMM_GELU ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_RELU_BIAS;
  lt_cublasLtMatmulDescSetAttribute(x->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
  lt_cublasLtMatmulDescSetAttribute(x->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p[2], sizeof p[2]);
  lt_cublasLtMatmulDescSetAttribute(x->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &et, sizeof et);
  if (nt) lt_cublasLtMatrixLayoutCreate(&x->lb, et, (uint64_t)K, (uint64_t)N, K);
  else lt_cublasLtMatrixLayoutCreate(&x->lb, et, (uint64_t)N, (uint64_t)K, N);
  lt_cublasLtMatrixLayoutCreate(&x->la, et, (uint64_t)K, (uint64_t)M, K); /* A^T: column-major K x M */
  lt_cublasLtMatrixLayoutCreate(&x->lc, et, (uint64_t)N, (uint64_t)M, N);
  cublasLtMatmulPreference_t pref;
  lt_cublasLtMatmulPreferenceCreate(&pref);
  lt_cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes);
  cublasLtMatmulHeuristicResult_t r;
  int n = 0;
  cublasStatus_t st = lt_cublasLtMatmulAlgoGetHeuristic(x->h, x->op, x->lb, x->la, x->lc, x->lc, pref, 1, &r, &n);
  lt_cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || n < 1) return false;
  x->algo = r.algo;
  return true;
}

static void lt_free(lt_ctx *x) {
  if (x->lc) lt_cublasLtMatrixLayoutDestroy(x->lc);
  if (x->la) lt_cublasLtMatrixLayoutDestroy(x->la);
  if (x->lb) lt_cublasLtMatrixLayoutDestroy(x->lb);
  if (x->op) lt_cublasLtMatmulDescDestroy(x->op);
  if (x->h) lt_cublasLtDestroy(x->h);
}

static size_t bytes_of(const shape *s, int t) {
  const int64_t *v = s->v;
  switch (s->op) {
  case OP_GEMM:
  case OP_GEMM_NT:
  case OP_GEMM_GELU: {
    int64_t sz[4] = {v[0] * v[2], v[2] * v[1], v[1], v[0] * v[1]};
    return 2 * (size_t)sz[t];
  }
  case OP_CONV: {
    int64_t P = conv_out(v[1], v[5]), Q = conv_out(v[2], v[5]);
    int64_t sz[4] = {v[0] * v[1] * v[2] * v[3], v[4] * 9 * v[3], v[4], v[0] * P * Q * v[4]};
    return 2 * (size_t)sz[t];
  }
  case OP_ATTN: return 2 * (size_t)(v[0] * v[1] * v[2] * v[3]);
  case OP__COUNT: break;
  default: return 2 * (size_t)(t == 1 || t == 2 ? v[1] : v[0] * v[1]); /* the row ops: X and Y, gamma and beta */
  }
  return 0;
}

static float half_to_f(uint16_t h, dlc_dtype dt) {
  if (dt == DLC_BF16) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}

static uint16_t f_to_half(float f, dlc_dtype dt) { /* values well inside the range; rounds to nearest even */
  uint32_t u;
  memcpy(&u, &f, 4);
  if (dt == DLC_BF16) return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  float a = fabsf(f);
  if (a < ldexpf(1.f, -14)) return (uint16_t)(sign | (uint16_t)lrintf(a * ldexpf(1.f, 24)));
  int e;
  float m = frexpf(a, &e); /* a = m 2^e, m in [0.5, 1) */
  long q = lrintf(m * 2048.f); /* 11 significant bits */
  if (q == 2048) q = 1024, e++;
  return (uint16_t)(sign | (uint16_t)((e + 14) << 10) | (uint16_t)(q - 1024));
}

/* n elements of dtype dt, uniform in [-scale, scale), uploaded (never
 * constant data: the timings are of real operands). */
static void fill_random(void *dev, size_t n, dlc_dtype dt, float scale, uint64_t seed) {
  uint16_t *h = malloc(n * 2);
  if (!h) {
    fprintf(stderr, "dlc-bench: out of host memory\n");
    exit(1);
  }
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    h[i] = f_to_half(scale * ((float)(seed >> 40) * 0x1p-23f - 1.f), dt);
  }
  CU(cudaMemcpy(dev, h, n * 2, cudaMemcpyHostToDevice));
  free(h);
}

/* ||a - b|| / ||b|| over n elements of dtype dt on the device. */
static double rel_diff(const void *a, const void *b, size_t n, dlc_dtype dt) {
  uint16_t *ha = malloc(n * 2), *hb = malloc(n * 2);
  if (!ha || !hb) {
    fprintf(stderr, "dlc-bench: out of host memory\n");
    exit(1);
  }
  CU(cudaMemcpy(ha, a, n * 2, cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(hb, b, n * 2, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    double x = half_to_f(ha[i], dt), y = half_to_f(hb[i], dt);
    num += (x - y) * (x - y), den += y * y;
  }
  free(ha), free(hb);
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

static int run_gpu(FILE *csv, int repeats, dlc_dtype dt) {
  int dev;
  struct cudaDeviceProp prop;
  CU(cudaGetDevice(&dev));
  CU(cudaGetDeviceProperties(&prop, dev));
  char arch[16];
  snprintf(arch, sizeof arch, "sm%d%d%s", prop.major, prop.minor, prop.major == 9 ? "a" : "");
  size_t flush_bytes = 2 * (size_t)prop.l2CacheSize;
  void *flush, *ws;
  size_t ws_bytes = 32u << 20;
  CU(cudaMalloc(&flush, flush_bytes));
  CU(cudaMalloc(&ws, ws_bytes));
  if (csv) fputs(CSV_HEADER, csv);
  else
    printf("%-18s %-24s %-5s %-8s %s\n", "op", "shape", "dtype", "host_us",
           "plan_us (CUDA backend: the call's return, no sync; the plan's, its CUDA graph replayed)");
  for (int i = 0; i < nsel; i++) {
    const shape *s = &sel[i];
    char sh[96];
    shape_text(s, sh, sizeof sh);
    dlc_ctx x = {s, dt, {NULL, NULL, NULL, NULL}, ws, ws_bytes};
    for (int t = 0; t < 4; t++) {
      CU(cudaMalloc(&x.p[t], bytes_of(s, t)));
      fill_random(x.p[t], bytes_of(s, t) / 2, dt, s->op == OP_CONV && t == 1 ? 0.05f : 1.f, (uint64_t)(i * 4 + t + 1));
    }
    if (!csv) { /* --host: the call, then its plan on a stream of its own (a CUDA graph replayed) */
      double h = host_us(s, dt, x.p, ws, ws_bytes, 200, NULL, NULL), ph = -1;
      CU(cudaDeviceSynchronize());
      cudaStream_t st;
      bench_plan bp = {0};
      CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
      if (h >= 0 && plan_make(s, dt, x.p, &bp) == DLC_SUCCESS &&
          plan_call(s, &bp, x.p, ws, ws_bytes, (struct CUstream_st *)st) == DLC_SUCCESS) {
        ph = host_us(s, dt, x.p, ws, ws_bytes, 200, &bp, (struct CUstream_st *)st);
        CU(cudaStreamSynchronize(st));
      }
      if (bp.h) plan_free(&bp);
      CU(cudaStreamDestroy(st));
      if (h < 0 || ph < 0) fprintf(stderr, "dlc-bench: %s %s: %s\n", OP_NAME[s->op], sh, dlc_last_error_detail());
      else printf("%-18s %-24s %-5s %-8.2f %.2f\n", OP_NAME[s->op], sh, dt == DLC_BF16 ? "bf16" : "fp16", h, ph);
      for (int t = 0; t < 4; t++) CU(cudaFree(x.p[t]));
      continue;
    }
    double us = median_us((timed){run_dlc, &x}, flush, flush_bytes, repeats);
    csv_row(csv, OP_NAME[s->op], s, arch, dlc__last_launch(), us); /* the plan that ran, and the model's columns */
    if (is_gemm(s->op) && lt_load()) {
      lt_ctx lt;
      void *c2;
      CU(cudaMalloc(&c2, bytes_of(s, 3)));
      if (lt_setup(&lt, s, dt, x.p, c2, ws, ws_bytes)) {
        double lus = median_us((timed){run_lt, &lt}, flush, flush_bytes, repeats);
        fprintf(csv, "cublaslt_%s,%s,%s,%s,,,%.0f,,,,%.2f\n", OP_NAME[s->op], sh, dt == DLC_BF16 ? "bf16" : "fp16",
                arch, flops_of(s), lus);
        /* the same outputs: dlc's against cuBLASLt's, relative Frobenius error */
        fprintf(stderr, "%s %s %s: dlc %.1f us, cuBLASLt %.1f us, relative difference %.2e\n", OP_NAME[s->op], sh,
                dt == DLC_BF16 ? "bf16" : "fp16", us, lus, rel_diff(x.p[3], c2, bytes_of(s, 3) / 2, dt));
      } else {
        fprintf(stderr, "dlc-bench: cuBLASLt has no algorithm for %s %s\n", OP_NAME[s->op], sh);
      }
      lt_free(&lt);
      CU(cudaFree(c2));
    } else {
      fprintf(stderr, "%s %s %s: dlc %.1f us\n", OP_NAME[s->op], sh, dt == DLC_BF16 ? "bf16" : "fp16", us);
    }
    fflush(csv);
    for (int t = 0; t < 4; t++) CU(cudaFree(x.p[t]));
  }
  CU(cudaFree(flush));
  CU(cudaFree(ws));
  return 0;
}
#endif

/* --op NAME and its dims: sel[] is the op's shapes of the list, or with
 * dims given one shape, its first with them; 0, or 2 after a message. */
static int select_shapes(const char *op, int ndims, char **names, const int64_t *vals) {
  int o = 0;
  while (op && o < OP__COUNT && strcmp(OP_NAME[o], op) != 0) o++;
  if (op && o == OP__COUNT) {
    fprintf(stderr, "dlc-bench: no op %s in this build's shape list\n", op);
    return usage();
  }
  nsel = 0;
  for (int i = 0; i < NSHAPES; i++)
    if (!op || SHAPES[i].op == (op_kind)o) sel[nsel++] = SHAPES[i];
  if (!ndims) return 0;
  if (!op) {
    fprintf(stderr, "dlc-bench: --%s needs --op\n", names[0]);
    return usage();
  }
  shape one = sel[0];
  for (int j = 0; j < ndims; j++) {
    int d = 0;
    while (d < 7 && OP_DIMS[o][d] && strcmp(OP_DIMS[o][d], names[j]) != 0) d++;
    if (d == 7 || !OP_DIMS[o][d]) {
      fprintf(stderr, "dlc-bench: %s has no dim --%s\n", op, names[j]);
      return usage();
    }
    if (vals[j] < 1) {
      fprintf(stderr, "dlc-bench: --%s %lld: a dim is at least 1\n", names[j], (long long)vals[j]);
      return usage();
    }
    one.v[d] = vals[j];
  }
  one.why = "--op";
  sel[0] = one, nsel = 1;
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = NULL, *csv_path = NULL, *op = NULL;
  int repeats = 20, ndims = 0;
  char *names[8];
  int64_t vals[8];
  dlc_dtype dt MAYBE_UNUSED = DLC_F16;
  for (int i = 1; i < argc; i++) {
    char *end;
    if (!strcmp(argv[i], "--model") || !strcmp(argv[i], "--emu") || !strcmp(argv[i], "--gpu") || !strcmp(argv[i], "--host"))
      mode = argv[i];
    else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
    else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dtype") && i + 1 < argc && !strcmp(argv[i + 1], "fp16")) dt = DLC_F16, i++;
    else if (!strcmp(argv[i], "--dtype") && i + 1 < argc && !strcmp(argv[i + 1], "bf16")) dt = DLC_BF16, i++;
    else if (!strcmp(argv[i], "--op") && i + 1 < argc) op = argv[++i];
    else if (!strncmp(argv[i], "--", 2) && argv[i][2] && i + 1 < argc && ndims < 8 &&
             (vals[ndims] = strtoll(argv[i + 1], &end, 10), *argv[i + 1] && !*end))
      names[ndims++] = argv[i] + 2, i++;
    else return usage();
  }
  if (!mode || repeats < 1) return usage();
  if (select_shapes(op, ndims, names, vals)) return 2;
  FILE *csv = NULL;
  if (csv_path && !strcmp(csv_path, "-")) csv = stdout;
  else if (csv_path && !(csv = fopen(csv_path, "w"))) {
    perror(csv_path);
    return 1;
  }
  int rc = 2;
#if defined(DLC_BENCH_NULL)
  model_dt = dt;
  csv_dtype = dt == DLC_BF16 ? "bf16" : "fp16";
  if (!strcmp(mode, "--model") && csv) rc = run_model(csv);
  if (!strcmp(mode, "--host")) rc = run_host_null();
#elif defined(DLC_BENCH_EMU)
  if (!strcmp(mode, "--emu")) rc = run_emu();
#elif defined(DLC_BENCH_GPU)
  csv_dtype = dt == DLC_BF16 ? "bf16" : "fp16";
  if (!strcmp(mode, "--gpu") && csv) rc = run_gpu(csv, repeats, dt);
  if (!strcmp(mode, "--host")) rc = run_gpu(NULL, repeats, dt);
#endif
  if (rc == 2) {
    fprintf(stderr, "dlc-bench: %s%s is not what this build runs (%s)\n", mode, csv ? "" : " without --csv",
#if defined(DLC_BENCH_NULL)
            "dlc-bench: --model --csv FILE, --host"
#elif defined(DLC_BENCH_EMU)
            "dlc-bench-emu: --emu"
#else
            "dlc-bench-gpu: --gpu --csv FILE, --host"
#endif
    );
  }
  if (csv && csv != stdout && fclose(csv)) rc = 1;
  if (csv == stdout && fflush(stdout)) rc = 1;
  return rc;
}
