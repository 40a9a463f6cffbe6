/* Playback of lowered Frontend graphs against the FP64 reference (spec
 * §6.11): every Frontend op, the three shared graphs, attention with its
 * causal mask, conv with stride/pad/dilation, the naive tinygrad GEMM that
 * folds into CONTRACT, and every elementwise function of ewise.def.  Each
 * case also re-evaluates every view of the DAG through the IndexBook.
 *
 *   pb_graphs GROUP     runs the cases of one group (one CTest entry each) */
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "pbtest.h"

#ifndef PB_GRAPHS_DIR
#error "PB_GRAPHS_DIR must be defined"
#endif
#ifndef PB_SHARED_GRAPHS_DIR
#define PB_SHARED_GRAPHS_DIR ""
#endif

#define G(f) PB_GRAPHS_DIR "/" f
#define SG(f) PB_SHARED_GRAPHS_DIR "/" f
#define AG(f) PB_ATTN_GRAPHS_DIR "/" f
#define MG(f) PB_MANIFEST_GRAPHS_DIR "/" f

typedef struct gcase {
  const char *group;
  pbt_case c;
} gcase;

#define ANY2 {DOM_ANY, DOM_ANY, DOM_ANY, DOM_ANY}
#define STD22 "{\"stride\":[2,2],\"pad\":[1,1],\"dilation\":[1,1]}"

static const gcase cases[] = {
    /* GEMM: fp32 accumulate, output in T */
    {"gemm", {"gemm 7x5x9", G("gemm.json"), NULL, DT_FP16, NULL, "M=7,N=5,K=9", ANY2, 1, 0, false}},
    {"gemm", {"gemm 1x1x1", G("gemm.json"), NULL, DT_FP16, NULL, "M=1,N=1,K=1", ANY2, 2, 0, false}},
    {"gemm", {"gemm 16x8x33", G("gemm.json"), NULL, DT_BF16, NULL, "M=16,N=8,K=33", ANY2, 3, 0, false}},
    {"gemm", {"gemm 13x17x64", G("gemm.json"), NULL, DT_FP32, NULL, "M=13,N=17,K=64", ANY2, 4, 0, false}},
    {"gemm_batch_broadcast",
     {"gemm [B,1,M,K]x[H,K,N]", G("gemm_batch_broadcast.json"), NULL, DT_FP16, NULL, "B=2,H=3,M=4,N=5,K=6", ANY2, 5, 0,
      false}},
    {"gemm_batch_broadcast",
     {"gemm [B,1,M,K]x[H,K,N]", G("gemm_batch_broadcast.json"), NULL, DT_BF16, NULL, "B=3,H=1,M=7,N=2,K=9", ANY2, 6, 0,
      false}},
    {"gemm_naive_folds_to_contract",
     {"naive reshape*mul+sum(k)", G("gemm_naive.json"), NULL, DT_FP16, NULL, "M=6,N=7,K=11", ANY2, 7, 0, true}},
    {"gemm_naive_folds_to_contract",
     {"naive reshape*mul+sum(k)", G("gemm_naive.json"), NULL, DT_FP32, NULL, "M=3,N=1,K=5", ANY2, 8, 0, true}},
    {"gemm_naive_folds_to_contract",
     {"naive reshape*mul+sum(k)", G("gemm_naive.json"), NULL, DT_BF16, NULL, "M=9,N=4,K=16", ANY2, 9, 0, true}},
    /* Conv2D */
    {"conv_nhwc_stride2_pad1", {"conv nhwc s2 p1", G("conv_nhwc.json"), NULL, DT_FP16, STD22, "N=2,H=7,W=6,C=3,K=4", ANY2, 10, 0, false}},
    {"conv_nhwc_stride2_pad1", {"conv nhwc s2 p1", G("conv_nhwc.json"), NULL, DT_FP16, STD22, "N=1,H=8,W=9,C=5,K=2", ANY2, 11, 0, false}},
    {"conv_nhwc_stride2_pad1", {"conv nhwc s2 p1", G("conv_nhwc.json"), NULL, DT_BF16, STD22, "N=1,H=3,W=3,C=2,K=3", ANY2, 12, 0, false}},
    {"conv_nhwc_stride_pad_dilation",
     {"conv nhwc s[1,2] p[0,2] d[2,1]", G("conv_nhwc.json"), NULL, DT_FP16,
      "{\"stride\":[1,2],\"pad\":[0,2],\"dilation\":[2,1]}", "N=2,H=9,W=5,C=3,K=2", ANY2, 13, 0, false}},
    {"conv_nhwc_stride_pad_dilation",
     {"conv nhwc s[3,1] p[2,0] d[1,1]", G("conv_nhwc.json"), NULL, DT_FP32,
      "{\"stride\":[3,1],\"pad\":[2,0],\"dilation\":[1,1]}", "N=1,H=10,W=4,C=4,K=3", ANY2, 14, 0, false}},
    {"conv_nchw_kcrs",
     {"conv nchw/kcrs s2 p1", G("conv_nchw.json"), NULL, DT_FP16, STD22, "N=2,H=7,W=8,C=3,K=4", ANY2, 15, 0, false}},
    {"conv_nchw_kcrs",
     {"conv nchw/kcrs s[1,2] p[2,1] d[1,2]", G("conv_nchw.json"), NULL, DT_BF16,
      "{\"stride\":[1,2],\"pad\":[2,1],\"dilation\":[1,2]}", "N=1,H=5,W=9,C=2,K=3", ANY2, 16, 0, false}},
    /* Attention */
    {"attention_scaled_noncausal",
     {"attention scale 0.25, L != S", G("attention_scaled.json"), NULL, DT_FP16, NULL, "B=2,S=5,L=7,D=8,E=6", ANY2, 17, 0,
      false}},
    {"attention_scaled_noncausal",
     {"attention scale 0.25, L != S", G("attention_scaled.json"), NULL, DT_BF16, NULL, "B=1,S=1,L=3,D=4,E=4", ANY2, 18, 0,
      false}},
    /* tests/kernels/attn: the causal mask with T != S (top-left), grouped-query
     * attention (K and V expanded over G query heads), causal GQA */
    {"attention_causal_cross_and_gqa",
     {"attention causal, T != S", AG("attention_causal_cross.json"), NULL, DT_FP16, NULL, "B=1,H=2,S=7,T=11,D=8", ANY2,
      56, 0, false}},
    {"attention_causal_cross_and_gqa",
     {"attention causal, T < S", AG("attention_causal_cross.json"), NULL, DT_BF16, NULL, "B=2,H=1,S=9,T=4,D=16", ANY2,
      57, 0, false}},
    {"attention_causal_cross_and_gqa",
     {"attention gqa", AG("attention_gqa.json"), NULL, DT_FP16, NULL, "B=2,HK=2,G=3,S=5,T=6,D=8", ANY2, 58, 0, false}},
    {"attention_causal_cross_and_gqa",
     {"attention gqa causal", AG("attention_gqa_causal.json"), NULL, DT_FP32, NULL, "B=1,HK=2,G=2,S=6,D=4", ANY2, 59, 0,
      false}},
    {"attention_causal_mask", {"attention causal [B,S,D]", G("attention_causal_rank3.json"), NULL, DT_FP16, NULL, "B=1,S=1,D=8", ANY2, 19, 0, false}},
    {"attention_causal_mask", {"attention causal [B,S,D]", G("attention_causal_rank3.json"), NULL, DT_FP16, NULL, "B=2,S=6,D=4", ANY2, 70, 0, false}},
    {"attention_causal_mask", {"attention causal [B,S,D]", G("attention_causal_rank3.json"), NULL, DT_FP16, NULL, "B=1,S=31,D=16", ANY2, 71, 0, false}},
    {"attention_causal_mask", {"attention causal [B,S,D]", G("attention_causal_rank3.json"), NULL, DT_BF16, NULL, "B=1,S=1,D=2", ANY2, 72, 0, false}},
    {"attention_causal_mask", {"attention causal [B,S,D]", G("attention_causal_rank3.json"), NULL, DT_BF16, NULL, "B=3,S=10,D=8", ANY2, 73, 0, false}},
    {"attention_causal_mask", {"attention causal [B,S,D]", G("attention_causal_rank3.json"), NULL, DT_BF16, NULL, "B=1,S=65,D=8", ANY2, 74, 0, false}},
    /* the other ops */
    {"reduce_sum_max_min", {"reduce", G("reduce.json"), NULL, DT_FP16, NULL, "A=3,B=4,C=5", ANY2, 20, 0, false}},
    {"reduce_sum_max_min", {"reduce", G("reduce.json"), NULL, DT_BF16, NULL, "A=1,B=7,C=2", ANY2, 21, 0, false}},
    {"reduce_sum_max_min", {"reduce", G("reduce.json"), NULL, DT_FP32, NULL, "A=6,B=1,C=9", ANY2, 22, 0, false}},
    {"softmax_rows_and_cols", {"softmax", G("softmax.json"), NULL, DT_FP16, NULL, "M=5,N=9", ANY2, 23, 0, false}},
    {"softmax_rows_and_cols", {"softmax", G("softmax.json"), NULL, DT_BF16, NULL, "M=1,N=17", ANY2, 24, 0, false}},
    {"softmax_rows_and_cols", {"softmax", G("softmax.json"), NULL, DT_FP32, NULL, "M=8,N=1", ANY2, 25, 0, false}},
    {"transpose", {"transpose", G("transpose.json"), NULL, DT_FP16, NULL, "A=2,B=3,C=4", ANY2, 26, 0, false}},
    {"transpose", {"transpose", G("transpose.json"), NULL, DT_FP32, NULL, "A=5,B=1,C=3", ANY2, 27, 0, false}},
    {"reshape", {"reshape", G("reshape.json"), NULL, DT_FP16, NULL, "M=2,N=3", ANY2, 28, 0, false}},
    {"reshape", {"reshape", G("reshape.json"), NULL, DT_BF16, NULL, "M=5,N=1", ANY2, 29, 0, false}},
    {"cast", {"cast", G("cast.json"), NULL, DT_FP16, NULL, "M=4,N=7", ANY2, 30, 0, false}},
    {"cast", {"cast", G("cast.json"), NULL, DT_BF16, NULL, "M=3,N=3", ANY2, 31, 0, false}},
    {"pad_with_value", {"pad", G("pad.json"), NULL, DT_FP16, NULL, "M=3,N=4", ANY2, 32, 0, false}},
    {"pad_with_value", {"pad", G("pad.json"), NULL, DT_FP32, NULL, "M=1,N=1", ANY2, 33, 0, false}},
    {"slice_with_steps", {"slice", G("slice.json"), NULL, DT_FP16, NULL, "M=7,N=8", ANY2, 34, 0, false}},
    {"slice_with_steps", {"slice", G("slice.json"), NULL, DT_BF16, NULL, "M=2,N=3", ANY2, 35, 0, false}},
    {"flip", {"flip", G("flip.json"), NULL, DT_FP16, NULL, "A=3,B=2,C=5", ANY2, 36, 0, false}},
    {"flip", {"flip", G("flip.json"), NULL, DT_FP32, NULL, "A=1,B=4,C=1", ANY2, 37, 0, false}},
    /* Gather: the int32 indices are trunc of [-2, 2]: -1 (out of range,
     * reads 0), 0 and 1; N = 2 makes 1 the last in-range index */
    {"gather", {"gather", G("gather.json"), NULL, DT_FP32, NULL, "M=4,N=2,K=7", ANY2, 60, 0, false}},
    {"gather", {"gather", G("gather.json"), NULL, DT_FP16, NULL, "M=1,N=5,K=3", ANY2, 61, 0, false}},
    /* Tile: X read at i mod M, i mod N */
    {"tile", {"tile", G("tile.json"), NULL, DT_FP32, NULL, "M=3,N=4", ANY2, 75, 0, false}},
    {"tile", {"tile", G("tile.json"), NULL, DT_BF16, NULL, "M=1,N=5", ANY2, 76, 0, false}},
    {"expand", {"expand", G("expand.json"), NULL, DT_FP16, NULL, "B=2,M=3,N=4", ANY2, 38, 0, false}},
    {"expand", {"expand", G("expand.json"), NULL, DT_BF16, NULL, "B=1,M=1,N=5", ANY2, 39, 0, false}},
    {"movement_ops_mixed", {"pad,slice,flip,transpose,reshape,expand", G("movement_mix.json"), NULL, DT_FP16, NULL,
                            "M=3,N=4", ANY2, 40, 0, false}},
    {"movement_ops_mixed", {"pad,slice,flip,transpose,reshape,expand", G("movement_mix.json"), NULL, DT_FP32, NULL,
                            "M=1,N=2", ANY2, 41, 0, false}},
    /* SRNF inputs of pb_regions: a sum over a GEMM output, a scaled sum */
    {"gemm_rowsum", {"rowsum(A B)", G("gemm_rowsum.json"), NULL, DT_FP16, NULL, "M=5,N=9,K=7", ANY2, 42, 0, false}},
    {"gemm_rowsum", {"rowsum(A B)", G("gemm_rowsum.json"), NULL, DT_BF16, NULL, "M=3,N=16,K=33", ANY2, 43, 0, false}},
    {"scaled_rowsum", {"sum(0.3 X)", G("scaled_rowsum.json"), NULL, DT_FP16, NULL, "M=4,N=33", ANY2, 44, 0, false}},
    {"scaled_rowsum", {"sum(0.3 X)", G("scaled_rowsum.json"), NULL, DT_FP32, NULL, "M=7,N=5", ANY2, 45, 0, false}},
    /* the row skeleton's ops of the default manifest (Reduce mean, sum(x * x)) */
    {"norms_and_softmax", {"layernorm", MG("layernorm.json"), NULL, DT_FP16, NULL, "M=3,N=37", ANY2, 46, 0, false}},
    {"norms_and_softmax", {"layernorm", MG("layernorm.json"), NULL, DT_BF16, NULL, "M=2,N=8", ANY2, 47, 0, false}},
    {"norms_and_softmax", {"rmsnorm", MG("rmsnorm.json"), NULL, DT_FP16, NULL, "M=4,N=19", ANY2, 48, 0, false}},
    {"norms_and_softmax", {"rmsnorm", MG("rmsnorm.json"), NULL, DT_FP32, NULL, "M=1,N=5", ANY2, 49, 0, false}},
    {"norms_and_softmax", {"softmax", MG("softmax.json"), NULL, DT_BF16, NULL, "M=3,N=33", ANY2, 55, 0, false}},
    {"norms_and_softmax", {"mean over H*D", G("mean_over_product.json"), NULL, DT_FP16, NULL, "M=3,H=3,D=5", ANY2, 90, 0, false}},
    {"norms_and_softmax", {"mean over H*D", G("mean_over_product.json"), NULL, DT_FP32, NULL, "M=2,H=1,D=7", ANY2, 91, 0, false}},
    /* layernorm in two passes: the rsqrt over the [M, 1] variance (Region SSA squeezes its 1) */
    {"norms_and_softmax", {"layernorm in two passes", G("layernorm_two_pass.json"), NULL, DT_FP16, NULL, "M=3,N=37", ANY2, 92, 0, false}},
    {"norms_and_softmax", {"layernorm in two passes", G("layernorm_two_pass.json"), NULL, DT_BF16, NULL, "M=1,N=8", ANY2, 93, 0, false}},
    /* the shared graphs */
    {"shared_gemm_bias_relu", {"gemm_bias_relu", SG("gemm_bias_relu.json"), NULL, DT_FP16, NULL, "M=9,N=7,K=13", ANY2, 50, 0, false}},
    {"shared_gemm_bias_relu", {"gemm_bias_relu", SG("gemm_bias_relu.json"), NULL, DT_BF16, NULL, "M=16,N=16,K=32", ANY2, 51, 0, false}},
    {"shared_gemm_bias_relu", {"gemm_bias_relu", SG("gemm_bias_relu.json"), NULL, DT_FP32, NULL, "M=1,N=3,K=1", ANY2, 52, 0, false}},
    {"shared_conv2d_bias_silu",
     {"conv2d_bias_silu s2 p1", SG("conv2d_bias_silu.json"), NULL, DT_FP16, "{\"stride\":[2,2],\"pad\":[1,1]}",
      "N=2,H=7,W=8,C=3,K=5", ANY2, 53, 0, false}},
    {"shared_conv2d_bias_silu",
     {"conv2d_bias_silu s1 p0", SG("conv2d_bias_silu.json"), NULL, DT_BF16, "{\"stride\":[1,1],\"pad\":[0,0]}",
      "N=1,H=5,W=4,C=2,K=3", ANY2, 54, 0, false}},
    {"shared_conv2d_bias_silu",
     {"conv2d_bias_silu s2 p1", SG("conv2d_bias_silu.json"), NULL, DT_FP32, "{\"stride\":[2,2],\"pad\":[1,1]}",
      "N=1,H=4,W=4,C=1,K=1", ANY2, 55, 0, false}},
};

/* Causal attention over several S, including 1 and non-multiples. */
static const struct {
  dtype T;
  const char *dims;
} causal[] = {
    {DT_FP16, "B=1,H=1,S=1,D=8"},  {DT_FP16, "B=2,H=2,S=5,D=8"},  {DT_FP16, "B=1,H=3,S=16,D=16"},
    {DT_FP16, "B=2,H=1,S=33,D=8"}, {DT_BF16, "B=1,H=1,S=1,D=4"},  {DT_BF16, "B=2,H=2,S=7,D=8"},
    {DT_BF16, "B=1,H=2,S=17,D=16"}, {DT_FP32, "B=1,H=2,S=9,D=4"},
};

/* Graph text for one elementwise function: unary over [M,N]; binary with a
 * broadcast [N] (or [M,1] with [1,N]) second operand, or with attrs.scalar;
 * where with a [M,N] condition; cast to another dtype. */
static char *ewise_graph(ewise_fn fn, dtype T, int variant, pbt_domain dom[4]) {
  const char *name = ewise_name(fn);
  int ar = ewise_arity(fn);
  char *buf = malloc(4096);
  if (!buf) return NULL;
  dom[0] = dom[1] = dom[2] = dom[3] = DOM_ANY;
  if (fn == EW_LOG || fn == EW_SQRT || fn == EW_RSQRT || fn == EW_POW) dom[0] = DOM_POS;
  if (fn == EW_RECIP) dom[0] = DOM_NONZERO;
  if (fn == EW_DIV) dom[1] = DOM_NONZERO;
  if (fn == EW_WHERE) dom[0] = DOM_COND;
  const char *head = "{\"name\":\"ew\",\"signature\":{\"dims\":[\"M\",\"N\"],\"inputs\":[";
  if (fn == EW_CAST) {
    const char *to = T == DT_FP32 ? "fp16" : "fp32";
    snprintf(buf, 4096,
             "%s{\"tensor\":\"X\"}],\"outputs\":[{\"tensor\":\"Y\"}]},\"tensors\":{\"X\":{\"dtype\":\"T\",\"shape\":[\"M\",\"N\"]},"
             "\"Y\":{\"dtype\":\"%s\",\"shape\":[\"M\",\"N\"]}},\"graph\":[{\"op\":\"Elementwise\",\"name\":\"f\",\"fn\":\"cast\","
             "\"inputs\":[\"X\"],\"outputs\":[\"Y\"],\"attrs\":{\"to\":\"%s\"}}]}",
             head, to, to);
  } else if (ar == 1 || (ar == 2 && variant == 2)) {
    char attrs[64] = "";
    if (ar == 2) snprintf(attrs, sizeof attrs, ",\"attrs\":{\"scalar\":%s}", fn == EW_DIV ? "-1.5" : "0.75");
    snprintf(buf, 4096,
             "%s{\"tensor\":\"X\"}],\"outputs\":[{\"tensor\":\"Y\"}]},\"tensors\":{\"X\":{\"dtype\":\"T\",\"shape\":[\"M\",\"N\"]},"
             "\"Y\":{\"dtype\":\"T\",\"shape\":[\"M\",\"N\"]}},\"graph\":[{\"op\":\"Elementwise\",\"name\":\"f\",\"fn\":\"%s\","
             "\"inputs\":[\"X\"],\"outputs\":[\"Y\"]%s}]}",
             head, name, attrs);
  } else if (ar == 2) {
    const char *xs = variant == 1 ? "[\"M\",1]" : "[\"M\",\"N\"]", *ys = variant == 1 ? "[1,\"N\"]" : "[\"N\"]";
    snprintf(buf, 4096,
             "%s{\"tensor\":\"X\"},{\"tensor\":\"Z\"}],\"outputs\":[{\"tensor\":\"Y\"}]},\"tensors\":{\"X\":{\"dtype\":\"T\","
             "\"shape\":%s},\"Z\":{\"dtype\":\"T\",\"shape\":%s},\"Y\":{\"dtype\":\"T\",\"shape\":[\"M\",\"N\"]}},"
             "\"graph\":[{\"op\":\"Elementwise\",\"name\":\"f\",\"fn\":\"%s\",\"inputs\":[\"X\",\"Z\"],\"outputs\":[\"Y\"]}]}",
             head, xs, ys, name);
  } else {
    snprintf(buf, 4096,
             "%s{\"tensor\":\"C\"},{\"tensor\":\"X\"},{\"tensor\":\"Z\"}],\"outputs\":[{\"tensor\":\"Y\"}]},\"tensors\":{"
             "\"C\":{\"dtype\":\"T\",\"shape\":[\"M\",\"N\"]},\"X\":{\"dtype\":\"T\",\"shape\":[\"M\",\"N\"]},"
             "\"Z\":{\"dtype\":\"T\",\"shape\":[\"N\"]},\"Y\":{\"dtype\":\"T\",\"shape\":[\"M\",\"N\"]}},"
             "\"graph\":[{\"op\":\"Elementwise\",\"name\":\"f\",\"fn\":\"%s\",\"inputs\":[\"C\",\"X\",\"Z\"],\"outputs\":[\"Y\"]}]}",
             head, name);
  }
  return buf;
}

static bool run_ewise(dtype T, pbt_err *err, int *views) {
  bool ok = true;
  int ncase = 0;
  for (int f = 0; f < EW__COUNT; f++) {
    int nvar = ewise_arity((ewise_fn)f) == 2 ? 3 : 1;
    for (int v = 0; v < nvar; v++) {
      pbt_case c = {0};
      char name[64];
      snprintf(name, sizeof name, "elementwise %s%s", ewise_name((ewise_fn)f),
               v == 1 ? " [M,1]x[1,N]" : v == 2 ? " scalar" : "");
      c.name = name;
      c.graph_text = ewise_graph((ewise_fn)f, T, v, c.dom);
      c.T = T;
      c.dims = "M=6,N=11";
      c.seed = 100 + (uint64_t)f * 7 + (uint64_t)v;
      ok &= pbt_run_graph(&c, err, views);
      free((char *)c.graph_text);
      ncase++;
    }
  }
  printf("%d elementwise cases over %d functions of ewise.def\n", ncase, (int)EW__COUNT);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: pb_graphs GROUP\n");
    return 2;
  }
  const char *grp = argv[1];
  pbt_err err = {0};
  int views = 0, n = 0;
  if (strcmp(grp, "elementwise_fp32") == 0) n++, run_ewise(DT_FP32, &err, &views);
  if (strcmp(grp, "elementwise_fp16") == 0) n++, run_ewise(DT_FP16, &err, &views);
  if (strcmp(grp, "elementwise_bf16") == 0) n++, run_ewise(DT_BF16, &err, &views);
  if (strcmp(grp, "shared_attention_causal") == 0) {
    for (size_t i = 0; i < sizeof causal / sizeof causal[0]; i++) {
      pbt_case c = {"attention_causal", SG("attention_causal.json"), NULL, causal[i].T, NULL, causal[i].dims, ANY2,
                    60 + i, 0, false};
      pbt_run_graph(&c, &err, &views);
      n++;
    }
  }
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (strcmp(cases[i].group, grp) == 0) {
      pbt_run_graph(&cases[i].c, &err, &views);
      n++;
    }
  if (n == 0) {
    fprintf(stderr, "pb_graphs: no cases in group '%s'\n", grp);
    return 2;
  }
  printf("%s: %lld elements compared, max|d| %.3g, max rel %.3g, worst error/allowed %.3f; %d IndexBook views "
         "equal to playback; %s\n",
         grp, (long long)err.n, err.max_abs, err.max_rel, err.worst_ratio, views, pbt_failures ? "FAILED" : "ok");
  return pbt_failures ? 1 : 0;
}
