/* Region playback against Tiny playback (spec §6.11, issue 4 item 1).  Each
 * graph goes through the whole front half and region_build; the regions are
 * evaluated with pb_eval_regions() and compared with pb_eval_tiny() on the
 * same random inputs.  Values passed between regions (attention's P, a
 * non-affine view materialized at a region boundary) flow from one region to
 * the next.
 *
 * Agreement is exact (bit for bit) unless SRNF reassociated a reduction:
 * the regions compute the same operations in the same dtypes as the Tiny
 * nodes they come from, side statements inlined at their reads compute
 * what the Tiny node computed, and both sum in double and round once per
 * reduction.  R0 (one sum over n and k instead of a sum over n of fp32
 * sums over k) and R1 (0.3 * sum instead of a sum of 0.3 * x) change the
 * rounding, so those graphs agree within pbt_close's tolerance.
 *
 *   pb_regions GROUP          the cases of one group (one CTest entry each)
 *   pb_regions file GRAPH     a graph with no runtime attrs: every signature
 *                             dim bound to small sizes, fp16, bf16 and fp32 */
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "pbtest.h"

#ifndef PB_GRAPHS_DIR
#error "PB_GRAPHS_DIR must be defined"
#endif
#ifndef PB_MANIFEST_GRAPHS_DIR
#error "PB_MANIFEST_GRAPHS_DIR must be defined"
#endif
#ifndef PB_FILECHECK_INPUTS_DIR
#error "PB_FILECHECK_INPUTS_DIR must be defined"
#endif

#define G(f) PB_GRAPHS_DIR "/" f
#define MG(f) PB_MANIFEST_GRAPHS_DIR "/" f
#define FI(f) PB_FILECHECK_INPUTS_DIR "/" f

typedef struct rcase {
  const char *group;
  pbt_agree agree;
  pbt_case c;
} rcase;

#define ANY {DOM_ANY, DOM_ANY, DOM_ANY, DOM_ANY}
#define S22 "{\"stride\":[2,2],\"pad\":[1,1],\"dilation\":[1,1]}"
#define EX PBT_EXACT
#define RND PBT_ROUNDING

static const rcase cases[] = {
    /* the three shared graphs, and GEMM with B stored [N,K] */
    {"gemm_bias_relu", EX, {"gemm_bias_relu", MG("gemm_bias_relu.json"), NULL, DT_FP16, NULL, "M=9,N=7,K=13", ANY, 1, 0, false}},
    {"gemm_bias_relu", EX, {"gemm_bias_relu", MG("gemm_bias_relu.json"), NULL, DT_BF16, NULL, "M=16,N=16,K=32", ANY, 2, 0, false}},
    {"gemm_bias_relu", EX, {"gemm_bias_relu", MG("gemm_bias_relu.json"), NULL, DT_FP32, NULL, "M=1,N=3,K=1", ANY, 3, 0, false}},
    {"gemm_bias_relu_nt", EX, {"gemm_bias_relu_nt", MG("gemm_bias_relu_nt.json"), NULL, DT_FP16, NULL, "M=9,N=7,K=13", ANY, 4, 0, false}},
    {"gemm_bias_relu_nt", EX, {"gemm_bias_relu_nt", MG("gemm_bias_relu_nt.json"), NULL, DT_BF16, NULL, "M=5,N=17,K=8", ANY, 5, 0, false}},
    {"gemm_bias_relu_nt", EX, {"gemm_bias_relu_nt", MG("gemm_bias_relu_nt.json"), NULL, DT_FP32, NULL, "M=2,N=1,K=3", ANY, 6, 0, false}},
    {"conv2d_bias_silu", EX, {"conv2d_bias_silu s2 p1", MG("conv2d_bias_silu.json"), NULL, DT_FP16, "{\"stride\":[2,2],\"pad\":[1,1]}", "N=2,H=7,W=8,C=3,K=5", ANY, 7, 0, false}},
    {"conv2d_bias_silu", EX, {"conv2d_bias_silu s1 p0", MG("conv2d_bias_silu.json"), NULL, DT_BF16, "{\"stride\":[1,1],\"pad\":[0,0]}", "N=1,H=5,W=4,C=2,K=3", ANY, 8, 0, false}},
    {"conv2d_bias_silu", EX, {"conv2d_bias_silu s2 p1", MG("conv2d_bias_silu.json"), NULL, DT_FP32, "{\"stride\":[2,2],\"pad\":[1,1]}", "N=1,H=4,W=4,C=1,K=1", ANY, 9, 0, false}},
    {"attention_causal", EX, {"attention_causal", MG("attention_causal.json"), NULL, DT_FP16, NULL, "B=1,H=1,S=1,D=8", ANY, 10, 0, false}},
    {"attention_causal", EX, {"attention_causal", MG("attention_causal.json"), NULL, DT_FP16, NULL, "B=2,H=2,S=5,D=8", ANY, 11, 0, false}},
    {"attention_causal", EX, {"attention_causal", MG("attention_causal.json"), NULL, DT_BF16, NULL, "B=1,H=2,S=17,D=16", ANY, 12, 0, false}},
    {"attention_causal", EX, {"attention_causal", MG("attention_causal.json"), NULL, DT_FP32, NULL, "B=1,H=1,S=9,D=4", ANY, 13, 0, false}},
    /* the row skeleton's ops of the default manifest */
    {"norms_and_softmax", RND, {"layernorm", MG("layernorm.json"), NULL, DT_FP16, NULL, "M=3,N=37", ANY, 14, 0, false}},
    {"norms_and_softmax", RND, {"layernorm", MG("layernorm.json"), NULL, DT_BF16, NULL, "M=2,N=8", ANY, 15, 0, false}},
    {"norms_and_softmax", RND, {"rmsnorm", MG("rmsnorm.json"), NULL, DT_FP16, NULL, "M=4,N=19", ANY, 16, 0, false}},
    {"norms_and_softmax", RND, {"softmax", MG("softmax.json"), NULL, DT_BF16, NULL, "M=3,N=33", ANY, 17, 0, false}},
    {"norms_and_softmax", RND, {"layernorm in two passes", G("layernorm_two_pass.json"), NULL, DT_FP16, NULL, "M=3,N=37", ANY, 91, 0, false}},
    {"norms_and_softmax", RND, {"layernorm in two passes", G("layernorm_two_pass.json"), NULL, DT_FP32, NULL, "M=2,N=5", ANY, 92, 0, false}},
    /* GEMMs: tinygrad's naive reshape*mul+sum, which folds to CONTRACT */
    {"gemm_naive_tinygrad", EX, {"gemm_naive_tinygrad", FI("gemm_naive_tinygrad.json"), NULL, DT_FP16, NULL, "M=6,N=7,K=11", ANY, 20, 0, true}},
    {"gemm_naive_tinygrad", EX, {"gemm_naive_tinygrad", FI("gemm_naive_tinygrad.json"), NULL, DT_BF16, NULL, "M=3,N=1,K=5", ANY, 21, 0, true}},
    {"gemm_naive_tinygrad", EX, {"naive reshape*mul+sum(k)", G("gemm_naive.json"), NULL, DT_FP16, NULL, "M=6,N=7,K=11", ANY, 22, 0, true}},
    {"gemm_naive_tinygrad", EX, {"naive reshape*mul+sum(k)", G("gemm_naive.json"), NULL, DT_FP32, NULL, "M=9,N=4,K=16", ANY, 23, 0, true}},
    {"gemm", EX, {"gemm", G("gemm.json"), NULL, DT_FP16, NULL, "M=7,N=5,K=9", ANY, 24, 0, false}},
    {"gemm", EX, {"gemm", G("gemm.json"), NULL, DT_BF16, NULL, "M=16,N=8,K=33", ANY, 25, 0, false}},
    {"gemm", EX, {"gemm [B,1,M,K]x[H,K,N]", G("gemm_batch_broadcast.json"), NULL, DT_FP16, NULL, "B=2,H=3,M=4,N=5,K=6", ANY, 26, 0, false}},
    /* Conv2D layouts, strides, pads, dilations */
    {"conv", EX, {"conv nhwc s2 p1", G("conv_nhwc.json"), NULL, DT_FP16, S22, "N=2,H=7,W=6,C=3,K=4", ANY, 30, 0, false}},
    {"conv", EX, {"conv nhwc s[1,2] p[0,2] d[2,1]", G("conv_nhwc.json"), NULL, DT_FP16, "{\"stride\":[1,2],\"pad\":[0,2],\"dilation\":[2,1]}", "N=2,H=9,W=5,C=3,K=2", ANY, 31, 0, false}},
    {"conv", EX, {"conv nchw/kcrs s2 p1", G("conv_nchw.json"), NULL, DT_BF16, S22, "N=2,H=7,W=8,C=3,K=4", ANY, 32, 0, false}},
    {"conv", EX, {"conv nchw/kcrs s[1,2] p[2,1] d[1,2]", G("conv_nchw.json"), NULL, DT_FP32, "{\"stride\":[1,2],\"pad\":[2,1],\"dilation\":[1,2]}", "N=1,H=5,W=9,C=2,K=3", ANY, 33, 0, false}},
    /* attention variants: two regions, P deferred from the first to the second */
    {"attention", EX, {"attention scale 0.25, L != S", G("attention_scaled.json"), NULL, DT_FP16, NULL, "B=2,S=5,L=7,D=8,E=6", ANY, 40, 0, false}},
    {"attention", EX, {"attention causal [B,S,D]", G("attention_causal_rank3.json"), NULL, DT_BF16, NULL, "B=3,S=10,D=8", ANY, 41, 0, false}},
    /* softmax over rows and over columns: reductions over an iter, and a
     * value read transposed inside its region */
    {"softmax", EX, {"softmax", G("softmax.json"), NULL, DT_FP16, NULL, "M=5,N=9", ANY, 50, 0, false}},
    {"softmax", EX, {"softmax", G("softmax.json"), NULL, DT_BF16, NULL, "M=1,N=17", ANY, 51, 0, false}},
    {"softmax", EX, {"softmax", G("softmax.json"), NULL, DT_FP32, NULL, "M=8,N=1", ANY, 52, 0, false}},
    /* reductions, movement, casts */
    {"reduce", EX, {"reduce", G("reduce.json"), NULL, DT_FP16, NULL, "A=3,B=4,C=5", ANY, 60, 0, false}},
    {"reduce", EX, {"reduce", G("reduce.json"), NULL, DT_FP32, NULL, "A=6,B=1,C=9", ANY, 61, 0, false}},
    {"movement", EX, {"transpose", G("transpose.json"), NULL, DT_FP16, NULL, "A=2,B=3,C=4", ANY, 62, 0, false}},
    {"movement", EX, {"reshape (non-affine: boundary regions)", G("reshape.json"), NULL, DT_FP16, NULL, "M=2,N=3", ANY, 63, 0, false}},
    {"movement", EX, {"pad", G("pad.json"), NULL, DT_FP16, NULL, "M=3,N=4", ANY, 64, 0, false}},
    {"movement", EX, {"slice", G("slice.json"), NULL, DT_FP16, NULL, "M=7,N=8", ANY, 65, 0, false}},
    {"movement", EX, {"flip", G("flip.json"), NULL, DT_FP16, NULL, "A=3,B=2,C=5", ANY, 66, 0, false}},
    {"movement", EX, {"expand", G("expand.json"), NULL, DT_BF16, NULL, "B=2,M=3,N=4", ANY, 67, 0, false}},
    {"movement", EX, {"pad,slice,flip,transpose,reshape,expand", G("movement_mix.json"), NULL, DT_FP16, NULL, "M=3,N=4", ANY, 68, 0, false}},
    {"movement", EX, {"pad,slice,flip,transpose,reshape,expand", G("movement_mix.json"), NULL, DT_FP32, NULL, "M=1,N=2", ANY, 69, 0, false}},
    /* gathers (a Read through a loaded index; a padded, flipped source) and
     * tiles (i mod M: boundary regions) */
    {"movement", EX, {"gather", G("gather.json"), NULL, DT_FP16, NULL, "M=4,N=2,K=7", ANY, 84, 0, false}},
    {"movement", EX, {"gather", G("gather.json"), NULL, DT_FP32, NULL, "M=1,N=5,K=3", ANY, 85, 0, false}},
    {"movement", EX, {"tile", G("tile.json"), NULL, DT_FP16, NULL, "M=3,N=4", ANY, 86, 0, false}},
    {"cast", EX, {"cast", G("cast.json"), NULL, DT_FP16, NULL, "M=4,N=7", ANY, 70, 0, false}},
    {"cast", EX, {"cast", G("cast.json"), NULL, DT_BF16, NULL, "M=3,N=3", ANY, 71, 0, false}},
    /* SRNF: R0 merges rowsum(A B) into one sum over n and k; R1 hoists 0.3 */
    {"srnf_r0_rowsum_of_gemm", RND, {"rowsum(A B)", G("gemm_rowsum.json"), NULL, DT_FP16, NULL, "M=5,N=9,K=7", ANY, 80, 0, false}},
    {"srnf_r0_rowsum_of_gemm", RND, {"rowsum(A B)", G("gemm_rowsum.json"), NULL, DT_BF16, NULL, "M=3,N=16,K=33", ANY, 81, 0, false}},
    {"srnf_r1_hoisted_factor", RND, {"sum(0.3 X)", G("scaled_rowsum.json"), NULL, DT_FP16, NULL, "M=4,N=33", ANY, 82, 0, false}},
    {"srnf_r1_hoisted_factor", RND, {"sum(0.3 X)", G("scaled_rowsum.json"), NULL, DT_FP32, NULL, "M=7,N=5", ANY, 83, 0, false}},
};

/* A graph file with no runtime attrs: each signature dim gets one of a few
 * small sizes (not multiples of each other), for each graph dtype. */
static int run_file(const char *path) {
  diag_list dl;
  diag_init(&dl);
  arena A;
  arena_init(&A);
  FILE *f = fopen(path, "rb");
  char *text = NULL;
  if (f) {
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = n >= 0 ? calloc((size_t)n + 1, 1) : NULL;
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) text[0] = 0;
    fclose(f);
  }
  fe_instance inst = {DT_FP16, NULL, NULL};
  fe_graph *g = text ? fe_read_text(&A, text, path, &inst, &dl) : NULL;
  if (!g) {
    diag_print_text(&dl, path);
    fprintf(stderr, "pb_regions: cannot read graph %s\n", path);
    free(text);
    diag_free(&dl);
    arena_free(&A);
    return 1;
  }
  static const int64_t sizes[][8] = {{7, 5, 9, 3, 6, 4, 5, 3}, {1, 3, 2, 5, 2, 3, 1, 2}, {16, 9, 33, 4, 3, 5, 2, 2}};
  static const dtype dts[] = {DT_FP16, DT_BF16, DT_FP32};
  pbt_err err = {0};
  int nreg = 0;
  for (int v = 0; v < 3; v++) {
    char dims[256] = "";
    size_t p = 0;
    for (int i = 0; i < g->ndims && i < 8; i++)
      p += (size_t)snprintf(dims + p, sizeof dims - p, "%s%s=%lld", i ? "," : "", g->dims[i], (long long)sizes[v][i]);
    pbt_case c = {g->name, path, NULL, dts[v], NULL, dims, ANY, 90 + (uint64_t)v, 0, false};
    pbt_run_regions(&c, PBT_EXACT, &err, &nreg);
  }
  printf("%s: %lld elements compared, %d regions; %s\n", path, (long long)err.n, nreg, pbt_failures ? "FAILED" : "ok");
  free(text);
  diag_free(&dl);
  arena_free(&A);
  return pbt_failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "file") == 0) return run_file(argv[2]);
  if (argc != 2) {
    fprintf(stderr, "usage: pb_regions GROUP | pb_regions file GRAPH\n");
    return 2;
  }
  const char *grp = argv[1];
  pbt_err err = {0};
  int n = 0, nreg = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (strcmp(cases[i].group, grp) == 0) {
      pbt_run_regions(&cases[i].c, cases[i].agree, &err, &nreg);
      n++;
    }
  if (n == 0) {
    fprintf(stderr, "pb_regions: no cases in group '%s'\n", grp);
    return 2;
  }
  printf("%s: %d cases, %lld elements compared, %d regions, max|d| %.3g, worst error/allowed %.3f; %s\n", grp, n,
         (long long)err.n, nreg, err.max_abs, err.worst_ratio, pbt_failures ? "FAILED" : "ok");
  return pbt_failures ? 1 : 0;
}
