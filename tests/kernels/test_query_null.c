/* dlc_<op>_query() and the workspace entry points every op has (issue 38
 * items 1 and 2), on the null backend (libdlckernels-null: every check and
 * the kernel choice of the real entry points, a launch that only records).
 * The pointers are aligned addresses that are never dereferenced.
 *
 *   - a query names the kernel, tile, CTAs and workspace that the call then
 *     launches (dlc__last_launch), and launches nothing itself;
 *   - a split-K shape: without a workspace one kernel and none used; with
 *     dlc_<op>_workspace_size() bytes the two kernels and exactly those bytes;
 *   - what _workspace_size cannot tell apart (0 for "needs none" and for
 *     "no kernel"), the query does: DLC_SUCCESS and DLC_ERROR_NOT_SUPPORTED;
 *   - a bad argument: the call's status and detail, *info zeroed; NULL info;
 *   - an empty output: DLC_SUCCESS, no kernel;
 *   - on an sm90a device the query names the sm90a kernel and "sm_90a";
 *   - the ops whose plans use no workspace have _ws (checking the workspace
 *     as the others do) and a _workspace_size of 0.
 * (The emulator's every-kernel test compares the query with every call it
 * makes, on every row of every manifest's dispatch.) */
#include "kt_null.h"
#define A0 ((uintptr_t)1 << 40)
#define B0 ((uintptr_t)2 << 40)
#define BIAS0 ((uintptr_t)3 << 40)
#define C0 ((uintptr_t)4 << 40)
#define WS0 ((uintptr_t)5 << 40)

static int zeroed(const dlc_launch_info *q) {
  return !strcmp(q->kernel, "") && !strcmp(q->arch, "") && q->kernels == 0 && q->ctas == 0 && q->tile_m == 0 &&
         q->workspace_bytes == 0;
}

/* The query of a GEMM, then the call: both DLC_SUCCESS, and the query named
 * the call's last kernel's plan when it launches one kernel. */
static void gemm_matches(int64_t M, int64_t N, int64_t K, void *ws, size_t wsb, int kernels) {
  dlc_launch_info q;
  const dlc__launch_rec *l = dlc__last_launch();
  long before = l->count;
  dlc_status qs = dlc_gemm_bias_relu_query(DLC_F16, M, N, K, fake(A0), K, fake(B0), N, fake(BIAS0), fake(C0), N, ws,
                                           wsb, &q);
  CHECK(qs == DLC_SUCCESS);
  CHECK(l->count == before); /* the query launched nothing */
  CHECK(!strcmp(dlc_last_error_detail(), ""));
  dlc_status st = dlc_gemm_bias_relu_ws(DLC_F16, M, N, K, fake(A0), K, fake(B0), N, fake(BIAS0), fake(C0), N, ws, wsb,
                                        NULL);
  CHECK(st == DLC_SUCCESS);
  CHECK(q.kernels == kernels && l->count - before == kernels);
  if (kernels == 1) {
    CHECK(!strcmp(q.kernel, l->kernel->name));
    CHECK(q.ctas == (int64_t)l->grid[0] * l->grid[1] * l->grid[2]);
    CHECK(q.tile_m == l->kernel->bm && q.tile_n == l->kernel->bn && q.tile_k == l->kernel->bk);
    CHECK(q.threads == l->kernel->threads && q.smem_bytes == l->kernel->smem);
  }
  printf("gemm %lldx%lldx%lld, workspace %zu: %s on %s, tile %dx%dx%d, %d kernel(s), %lld CTAs, uses %zu bytes\n",
         (long long)M, (long long)N, (long long)K, wsb, q.kernel, q.arch, q.tile_m, q.tile_n, q.tile_k, q.kernels,
         (long long)q.ctas, q.workspace_bytes);
}

int main(void) {
  dlc_launch_info q;
  /* the struct is ABI: its size on LP64 stays (later fields take reserved's room) */
  CHECK(sizeof(void *) != 8 || sizeof(dlc_launch_info) == 120);
  memset(&q, 0xA5, sizeof q);
  CHECK(dlc_softmax_query(DLC_F16, 3, 5, fake(A0), 5, fake(C0), 5, NULL, 0, &q) == DLC_SUCCESS);
  for (int i = 0; i < 8; i++) CHECK(q.reserved[i] == 0);

  /* one kernel on sm80 */
  gemm_matches(1000, 1000, 256, NULL, 0, 1);
  CHECK(dlc_gemm_bias_relu_query(DLC_F16, 1000, 1000, 256, fake(A0), 256, fake(B0), 1000, fake(BIAS0), fake(C0), 1000,
                                 NULL, 0, &q) == DLC_SUCCESS);
  CHECK(!strcmp(q.arch, "sm_80") && q.workspace_bytes == 0);
  CHECK(strstr(q.kernel, "dlc_gemm_bias_relu_fp16") == q.kernel);

  /* split-K (a shape bucket of small M, N and long K): with and without the workspace */
  const int64_t M = 128, N = 128, K = 8192;
  size_t need = dlc_gemm_bias_relu_workspace_size(DLC_F16, M, N, K);
  CHECK(need > 0);
  gemm_matches(M, N, K, NULL, 0, 1);
  gemm_matches(M, N, K, fake(WS0), need, 2);
  CHECK(dlc_gemm_bias_relu_query(DLC_F16, M, N, K, fake(A0), K, fake(B0), N, fake(BIAS0), fake(C0), N, fake(WS0), need,
                                 &q) == DLC_SUCCESS);
  CHECK(q.kernels == 2 && q.workspace_bytes == need);
  CHECK(dlc_gemm_bias_relu_query(DLC_F16, M, N, K, fake(A0), K, fake(B0), N, fake(BIAS0), fake(C0), N, fake(WS0),
                                 need - 1, &q) == DLC_SUCCESS);
  CHECK(q.kernels == 1 && q.workspace_bytes == 0); /* too small: the plan that needs none */

  /* "needs none" and "no kernel" both size at 0; the query tells them apart */
  CHECK(dlc_gemm_bias_relu_workspace_size(DLC_F32, 1000, 1000, 256) == 0);
  CHECK(dlc_gemm_bias_relu_workspace_size(DLC_F16, 1000, 1000, 256) == 0);
  CHECK(dlc_gemm_bias_relu_query(DLC_F32, 1000, 1000, 256, fake(A0), 256, fake(B0), 1000, fake(BIAS0), fake(C0), 1000,
                                 NULL, 0, &q) == DLC_ERROR_NOT_SUPPORTED);
  CHECK(zeroed(&q));
  CHECK(strstr(dlc_last_error_detail(), "not compiled") != NULL);

  /* a bad argument: the call's status and detail */
  char detail[512];
  dlc_status st = dlc_gemm_bias_relu(DLC_F16, 64, 64, 64, fake(A0), 63, fake(B0), 64, fake(BIAS0), fake(C0), 64, NULL);
  snprintf(detail, sizeof detail, "%s", dlc_last_error_detail());
  CHECK(st == DLC_ERROR_INVALID_VALUE);
  q.kernels = 7;
  CHECK(dlc_gemm_bias_relu_query(DLC_F16, 64, 64, 64, fake(A0), 63, fake(B0), 64, fake(BIAS0), fake(C0), 64, NULL, 0,
                                 &q) == st);
  CHECK(!strcmp(detail, dlc_last_error_detail()) && zeroed(&q));
  CHECK(dlc_gemm_bias_relu_query(DLC_F16, 64, 64, 64, fake(A0 + 1), 64, fake(B0), 64, fake(BIAS0), fake(C0), 64, NULL,
                                 0, &q) == DLC_ERROR_MISALIGNED);
  CHECK(dlc_gemm_bias_relu_query(DLC_F16, 64, 64, 64, fake(A0), 64, fake(B0), 64, fake(BIAS0), fake(C0), 64, NULL, 0,
                                 NULL) == DLC_ERROR_INVALID_VALUE);
  CHECK(strstr(dlc_last_error_detail(), "info is NULL") != NULL);

  /* an empty output: success, nothing launched */
  CHECK(dlc_gemm_bias_relu_query(DLC_F16, 0, 64, 64, NULL, 64, fake(B0), 64, fake(BIAS0), NULL, 64, NULL, 0, &q) ==
        DLC_SUCCESS);
  CHECK(zeroed(&q));

  /* the row ops and attention: one kernel, and no workspace in this build's plans */
  const dlc__launch_rec *l = dlc__last_launch();
  CHECK(dlc_softmax_query(DLC_F16, 300, 1000, fake(A0), 1000, fake(C0), 1000, NULL, 0, &q) == DLC_SUCCESS);
  CHECK(dlc_softmax(DLC_F16, 300, 1000, fake(A0), 1000, fake(C0), 1000, NULL) == DLC_SUCCESS);
  CHECK(q.kernels == 1 && !strcmp(q.kernel, l->kernel->name) && q.ctas == (int64_t)l->grid[0] * l->grid[1] * l->grid[2]);
  CHECK(dlc_softmax_workspace_size(DLC_F16, 300, 1000) == 0);
  CHECK(dlc_attention_causal_workspace_size(DLC_F16, 2, 4, 256, 64) == 0);
  CHECK(dlc_layernorm_workspace_size(DLC_BF16, 8, 8) == 0 && dlc_rmsnorm_workspace_size(DLC_F16, 8, 8) == 0);
  CHECK(dlc_conv2d_bias_silu_workspace_size(DLC_F16, 1, 8, 8, 16, 16, 1, 1, 1, 1) == 0);
  /* their _ws checks the workspace as the split-K ops' does */
  CHECK(dlc_softmax_ws(DLC_F16, 300, 1000, fake(A0), 1000, fake(C0), 1000, fake(WS0), 4096, NULL) == DLC_SUCCESS);
  CHECK(dlc_softmax_ws(DLC_F16, 300, 1000, fake(A0), 1000, fake(C0), 1000, fake(WS0 + 16), 4096, NULL) ==
        DLC_ERROR_MISALIGNED);
  CHECK(dlc_softmax_ws(DLC_F16, 300, 1000, fake(A0), 1000, fake(C0), 1000, NULL, 4096, NULL) == DLC_ERROR_INVALID_VALUE);
  CHECK(dlc_softmax_ws(DLC_F16, 300, 1000, fake(A0), 1000, fake(C0), 1000, fake(C0), 4096, NULL) ==
        DLC_ERROR_INVALID_VALUE); /* the workspace overlaps the output */
  CHECK(strstr(dlc_last_error_detail(), "workspace") != NULL);
  CHECK(dlc_attention_causal_query(DLC_F16, 2, 4, 256, 64, fake(A0), fake(B0), fake(BIAS0), fake(C0), NULL, 0, &q) ==
        DLC_SUCCESS);
  CHECK(q.kernels == 1 && q.ctas > 0 && q.workspace_bytes == 0);
  printf("attention 2x4x256x64: %s, tile %dx%dx%d, %lld CTAs\n", q.kernel, q.tile_m, q.tile_n, q.tile_k,
         (long long)q.ctas);

  /* an sm90a device: the sm90a kernel */
  dlc__null_arch = DLC__ARCH_SM90A;
  gemm_matches(1000, 1000, 256, NULL, 0, 1);
  CHECK(dlc_gemm_bias_relu_query(DLC_F16, 1000, 1000, 256, fake(A0), 256, fake(B0), 1000, fake(BIAS0), fake(C0), 1000,
                                 NULL, 0, &q) == DLC_SUCCESS);
  CHECK(!strcmp(q.arch, "sm_90a") && strstr(q.kernel, "sm90a") != NULL);
  dlc__null_arch = DLC__ARCH_SM80;
  return fails ? 1 : 0;
}
