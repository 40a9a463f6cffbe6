/* Fusing a value yielded "deferred" (tests/kernels/extra/qk_norm_bias.json):
 * Q = X + b over [M, H*D], then a per-head RMSNorm of Q through a symbolic
 * Reshape to [M, H, D].  Region SSA forms two regions (the Reshape is an
 * IndexExpr view); Poly Core finds Q pointwise, so dlc_qk_norm_bias is one
 * row kernel that computes Q where it reads it.  qk_norm_bias_chain is the
 * same graph with "fusion": "off": two kernels, Q in the workspace.  Both
 * run in the PTX emulator (memcheck on every launch) on shapes with tails
 * (D not a multiple of the vector width, padded leading dims), fp16 and
 * bf16, against an FP64 reference that rounds Q to T as the graph does
 * (tolerance: kt.h); the fused kernel must give the chain's bits, since it
 * rounds Q to T where the chain's store did.  The fused op has no workspace
 * (no dlc_qk_norm_bias_workspace_size); the chain's is Q's bytes.
 * qk_norm_bias_q (fp16) also returns Q: its bias add keeps a kernel for that
 * store, the norm still fuses Q, and its workspace_size is 0 (a plain call
 * runs it).  Each
 * case prints the emulator's counts of both, summed over their launches
 * (the launches are counted through a --wrap of dlcemu_launch_kernel). */
#include "kt.h"

#define CANARY 0x7E5Bu

static dlcemu_launch_stats total;
static int launches;

int __real_dlcemu_launch_kernel(dlcemu_function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned shared_bytes, void **params);
int __wrap_dlcemu_launch_kernel(dlcemu_function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned shared_bytes, void **params);
int __wrap_dlcemu_launch_kernel(dlcemu_function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned shared_bytes, void **params) {
  int st = __real_dlcemu_launch_kernel(fn, gx, gy, gz, bx, by, bz, shared_bytes, params);
  dlcemu_launch_stats s;
  dlcemu_last_launch_stats(&s);
  total.warp_instructions += s.warp_instructions;
  total.global_load.sectors += s.global_load.sectors;
  total.global_load.bytes += s.global_load.bytes;
  total.global_store.sectors += s.global_store.sectors;
  total.global_store.bytes += s.global_store.bytes;
  total.blocks += s.blocks;
  launches++;
  return st;
}

static void counts(const char *what) {
  printf("  %-6s %d launch%s, %llu warp instructions, global load sectors %llu (%llu bytes), store sectors %llu "
         "(%llu bytes)\n",
         what, launches, launches == 1 ? "" : "es", total.warp_instructions, total.global_load.sectors,
         total.global_load.bytes, total.global_store.sectors, total.global_store.bytes);
  memset(&total, 0, sizeof total);
  launches = 0;
}

static int run_case(dlc_dtype dt, int64_t M, int64_t H, int64_t D, int pad, uint64_t seed) {
  int64_t C = H * D, ldx = C + pad;
  kt_buf X = {0}, b = {0}, g = {0}, Y = {0}, Yc = {0};
  kt_alloc(&X, (size_t)(M * ldx), 0), kt_alloc(&b, (size_t)C, 0), kt_alloc(&g, (size_t)D, 0);
  kt_alloc(&Y, (size_t)(M * C), 0), kt_alloc(&Yc, (size_t)(M * C), 0);
  uint64_t s = seed;
  for (size_t i = 0; i < X.n; i++) X.host[i] = kt_from_f32(dt, (float)(2 * kt_uniform(&s)));
  for (size_t i = 0; i < b.n; i++) b.host[i] = kt_from_f32(dt, (float)kt_uniform(&s));
  for (size_t i = 0; i < g.n; i++) g.host[i] = kt_from_f32(dt, (float)(1 + 0.5 * kt_uniform(&s)));
  for (size_t i = 0; i < Y.n; i++) Y.host[i] = Yc.host[i] = CANARY;
  kt_upload(&X), kt_upload(&b), kt_upload(&g), kt_upload(&Y), kt_upload(&Yc);
  int fail = 0;
  printf("qk_norm_bias %s M=%lld H=%lld D=%lld ldx=%lld\n", dt == DLC_F16 ? "fp16" : "bf16", (long long)M, (long long)H,
         (long long)D, (long long)ldx);
  /* the chain: Q (T) in the workspace */
  size_t ws = dlc_qk_norm_bias_chain_workspace_size(dt, M, H, D);
  size_t want = ((size_t)(M * C) * 2 + 255) / 256 * 256;
  if (ws != want) {
    fprintf(stderr, "  the chain's workspace_size %zu, expected %zu (Q)\n", ws, want);
    fail = 1;
  }
  dlcemu_deviceptr W = 0;
  dlcemu_mem_alloc(&W, ws + 256);
  dlc_status st = dlc_qk_norm_bias_chain_ws(dt, M, H, D, kt_ptr(X.dev), ldx, kt_ptr(b.dev), kt_ptr(g.dev),
                                            kt_ptr(Yc.dev), kt_ptr(W), ws, NULL);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "  chain: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  }
  counts("chain");
  /* fused: one kernel, no workspace */
  st = dlc_qk_norm_bias(dt, M, H, D, kt_ptr(X.dev), ldx, kt_ptr(b.dev), kt_ptr(g.dev), kt_ptr(Y.dev), NULL);
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "  fused: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    fail = 1;
  }
  int nl = launches;
  counts("fused");
  if (nl != 1) {
    fprintf(stderr, "  fused: %d launches, expected 1\n", nl);
    fail = 1;
  }
  /* qk_norm_bias_q also stores Q: two kernels (the bias add keeps its own
   * for the stored Q), Q fused into the norm, the workspace empty */
  kt_buf Qs = {0}, Yq = {0};
  if (dt == DLC_F16) {
    int64_t ldq = C + pad;
    kt_alloc(&Qs, (size_t)(M * ldq), 0), kt_alloc(&Yq, (size_t)(M * C), 0);
    for (size_t i = 0; i < Qs.n; i++) Qs.host[i] = CANARY;
    for (size_t i = 0; i < Yq.n; i++) Yq.host[i] = CANARY;
    kt_upload(&Qs), kt_upload(&Yq);
    size_t wq = dlc_qk_norm_bias_q_workspace_size(dt, M, H, D);
    st = dlc_qk_norm_bias_q(dt, M, H, D, kt_ptr(X.dev), ldx, kt_ptr(b.dev), kt_ptr(g.dev), kt_ptr(Qs.dev), ldq,
                            kt_ptr(Yq.dev), NULL);
    nl = launches;
    counts("with Q");
    if (wq != 0 || st != DLC_SUCCESS || nl != 2) {
      fprintf(stderr, "  qk_norm_bias_q: workspace_size %zu (expected 0), %s (%s), %d launches (expected 2)\n", wq,
              dlc_status_string(st), dlc_last_error_detail(), nl);
      fail = 1;
    }
    kt_download(&Qs), kt_download(&Yq);
    int qbad = 0;
    for (int64_t m = 0; m < M; m++)
      for (int64_t c = 0; c < ldq; c++) {
        uint16_t qw = c < C ? kt_from_f32(dt, (float)((double)kt_to_f32(dt, X.host[m * ldx + c]) + kt_to_f32(dt, b.host[c])))
                              : (uint16_t)CANARY;
        if (Qs.host[m * ldq + c] != qw && qbad++ < 5)
          fprintf(stderr, "  qk_norm_bias_q: Q[%lld][%lld] = %g, expected %g\n", (long long)m, (long long)c,
                  (double)kt_to_f32(dt, Qs.host[m * ldq + c]), (double)kt_to_f32(dt, qw));
      }
    kt_download(&Y);
    for (int64_t i = 0; i < M * C; i++)
      if (Yq.host[i] != Y.host[i] && qbad++ < 5) fprintf(stderr, "  qk_norm_bias_q: Y[%lld] differs from qk_norm_bias's\n", (long long)i);
    if (qbad) fail = 1;
    kt_free(&Qs), kt_free(&Yq);
  }
  kt_download(&Y), kt_download(&Yc);
  double R = 0, *ref = malloc(sizeof(double) * (size_t)(M * C) + 8);
  for (int64_t m = 0; m < M; m++)
    for (int64_t h = 0; h < H; h++) {
      double ss = 0, q[4096];
      for (int64_t d = 0; d < D; d++) {
        int64_t c = h * D + d;
        q[d] = kt_round(dt, (double)kt_to_f32(dt, X.host[m * ldx + c]) + kt_to_f32(dt, b.host[c]));
        ss += q[d] * q[d];
      }
      double r = 1 / sqrt(ss / (double)D + 1e-6);
      for (int64_t d = 0; d < D; d++) {
        ref[m * C + h * D + d] = q[d] * r * kt_to_f32(dt, g.host[d]);
        R = fmax(R, fabs(ref[m * C + h * D + d]));
      }
    }
  int bad = 0, differ = 0;
  for (int64_t i = 0; i < M * C; i++) {
    double r = ref[i], rr = kt_round(dt, r), v = kt_to_f32(dt, Y.host[i]);
    double err = fabs(v - rr), tol = fmax(kt_ulp(dt, rr), 1e-3 * (fabs(r) + R));
    if (!(err <= tol) && bad++ < 5)
      fprintf(stderr, "  fused: Y[%lld] = %g, expected %g\n", (long long)i, v, rr);
    if (Y.host[i] != Yc.host[i] && differ++ < 5)
      fprintf(stderr, "  Y[%lld]: fused %g, chain %g\n", (long long)i, v, (double)kt_to_f32(dt, Yc.host[i]));
  }
  if (bad || differ) {
    fprintf(stderr, "  %d outputs off the reference, %d differ from the chain's\n", bad, differ);
    fail = 1;
  }
  free(ref);
  kt_free(&X), kt_free(&b), kt_free(&g), kt_free(&Y), kt_free(&Yc);
  dlcemu_mem_free(W);
  return fail;
}

int main(void) {
  int fail = 0;
  const dlc_dtype dts[2] = {DLC_F16, DLC_BF16};
  for (int t = 0; t < 2; t++) {
    fail |= run_case(dts[t], 5, 3, 40, 0, 11 + t);  /* D a multiple of 8, rows of 120 */
    fail |= run_case(dts[t], 3, 4, 37, 3, 23 + t);  /* D with a tail, misaligned heads */
    fail |= run_case(dts[t], 2, 2, 130, 5, 37 + t); /* more than one vector a thread */
  }
  /* a head shape (the counts in docs/performance-log.md) */
  fail |= run_case(DLC_F16, 64, 8, 128, 8, 41);
  printf(fail ? "FAILED\n" : "ok\n");
  return fail;
}
