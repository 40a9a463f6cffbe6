/* Causal attention (FlashAttention-2 style, streaming softmax) from
 * libdlckernels-emu in the PTX emulator against an FP64 reference
 * (tolerance: kt.h).
 *
 *   test_attention_emu <fp16|bf16> <D>
 *
 * Shapes: every B in {1, 2}, H in {1, 3}, S in {1, 17, 64, 200} (16 cases),
 * and B = 1, H = 2, S = 333: its last query blocks have two key tiles no
 * mask touches (at D = 64, 64 queries a block against 128 keys a tile,
 * S = 200 has at most one), so the full pass's loop also refills a stage;
 * packed [B,H,S,D] tensors, scale 1/sqrt(D).  Besides the values, the
 * emulator's statistics must show that the kernel writes exactly O: as many
 * global store bytes as O has.
 *
 * With DLC_EMU_ARCH=sm90a every case must run the sm90a row's kernel
 * (wgmma_softmax: a name ending in _sm90a, read from the last launch): the
 * head dims 64 and 128 are its, and tensor maps describe packed tensors
 * with 16-byte aligned bases.  A case passes Q one element past that
 * alignment: the tensor map cannot be encoded, and the entry point must
 * fall back to an sm80 row's kernel, with the same results.  Three more
 * pass K and V one element past it, and Q, K and V 2 and 4 elements past
 * it: the sm80 row's 1-, 2- and 4-element chunk kernels (the name's _v1,
 * _v2 and _v4), whose K and V stream from row pointers (a thread's chunks
 * 1, 2 or 4 rows apart at D = 128; 2, 4 or 8 at D = 64) on every pass: full,
 * masked and the key tail. */
#include "kt.h"

#include "dlc_internal.h" /* dlc__last_launch */

/* whether the last launch ran an sm90a-row kernel */
static int ran_sm90a(void) {
  const dlc__launch_rec *l = dlc__last_launch();
  size_t n = l->kernel ? strlen(l->kernel->name) : 0;
  return n > 6 && strcmp(l->kernel->name + n - 6, "_sm90a") == 0;
}

/* qoff: Q starts that many elements into its buffer (1: past the 16-byte
 * alignment a tensor map needs, so the sm90a row's TMA form cannot serve the
 * call and the sm80 row must); kvoff: K and V likewise.  want_vec: the chunk
 * width of the sm80 kernel that must run (its name's _v<want_vec>), 0 for
 * any. */
static int run_case(dlc_dtype dt, int64_t B, int64_t H, int64_t S, int64_t D, size_t qoff, size_t kvoff, int want_vec,
                    uint64_t seed, double *worst) {
  size_t n = (size_t)(B * H * S * D);
  kt_buf Q = {0}, K = {0}, V = {0}, O = {0};
  kt_alloc(&Q, n + qoff, 0), kt_alloc(&K, n + kvoff, 0), kt_alloc(&V, n + kvoff, 0), kt_alloc(&O, n, 0);
  uint64_t st = seed;
  for (size_t i = 0; i < n; i++) {
    Q.host[qoff + i] = kt_from_f32(dt, (float)kt_uniform(&st));
    K.host[kvoff + i] = kt_from_f32(dt, (float)kt_uniform(&st));
    V.host[kvoff + i] = kt_from_f32(dt, (float)kt_uniform(&st));
  }
  kt_upload(&Q), kt_upload(&K), kt_upload(&V), kt_upload(&O);
  dlc_status r = dlc_attention_causal(dt, B, H, S, D, (uint16_t *)kt_ptr(Q.dev) + qoff, (uint16_t *)kt_ptr(K.dev) + kvoff,
                                      (uint16_t *)kt_ptr(V.dev) + kvoff, kt_ptr(O.dev), NULL);
  int bad = 0;
  if (r != DLC_SUCCESS) {
    fprintf(stderr, "B=%lld H=%lld S=%lld D=%lld: %s: %s\n", (long long)B, (long long)H, (long long)S, (long long)D,
            dlc_status_string(r), dlc_last_error_detail());
    bad = 1;
    goto out;
  }
  const char *arch = getenv("DLC_EMU_ARCH");
  int want90 = arch && strcmp(arch, "sm90a") == 0 && qoff == 0 && kvoff == 0;
  const char *ran = dlc__last_launch()->kernel->name;
  char suffix[8];
  snprintf(suffix, sizeof suffix, "_v%d", want_vec);
  if (want_vec && (strlen(ran) < strlen(suffix) || strcmp(ran + strlen(ran) - strlen(suffix), suffix) != 0)) {
    fprintf(stderr, "B=%lld H=%lld S=%lld D=%lld: ran %s, not the %d-element chunk kernel\n", (long long)B,
            (long long)H, (long long)S, (long long)D, ran, want_vec);
    bad = 1;
  }
  if (ran_sm90a() != want90) {
    fprintf(stderr, "B=%lld H=%lld S=%lld D=%lld: ran %s, not %s\n", (long long)B, (long long)H, (long long)S,
            (long long)D, dlc__last_launch()->kernel->name,
            want90 ? "the sm90a row's kernel" : qoff ? "an sm80 row's kernel (Q is not 16-byte aligned)" : "an sm80 row's kernel");
    bad = 1;
  }
  dlcemu_launch_stats stats;
  dlcemu_last_launch_stats(&stats);
  /* the sm90a row's products are wgmma, the sm80 row's mma.sync; its loads
   * are TMA boxes completing on mbarriers, with no cp.async */
  if (want90 && (stats.wgmma_ops == 0 || stats.tma_copies == 0 || stats.mbarrier_phases == 0 ||
                 stats.cp_async_copies != 0)) {
    fprintf(stderr,
            "B=%lld H=%lld S=%lld D=%lld: the sm90a kernel ran %llu wgmma, %llu TMA copies, %llu mbarrier phases "
            "and %llu cp.async copies\n",
            (long long)B, (long long)H, (long long)S, (long long)D, stats.wgmma_ops, stats.tma_copies,
            stats.mbarrier_phases, stats.cp_async_copies);
    bad = 1;
  }
  if (stats.global_store.bytes != n * 2) {
    fprintf(stderr, "B=%lld H=%lld S=%lld D=%lld: the kernel stored %llu bytes; O has %zu\n", (long long)B,
            (long long)H, (long long)S, (long long)D, stats.global_store.bytes, n * 2);
    bad = 1;
  }
  kt_download(&O);
  double *ref = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * (size_t)S), R = 0;
  const double scale = 1.0 / sqrt((double)D);
  for (int64_t bh = 0; bh < B * H; bh++)
    for (int64_t m = 0; m < S; m++) {
      const uint16_t *q = Q.host + qoff + (bh * S + m) * D;
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j <= m; j++) {
        const uint16_t *k = K.host + kvoff + (bh * S + j) * D;
        double s = 0;
        for (int64_t d = 0; d < D; d++) s += (double)kt_to_f32(dt, q[d]) * kt_to_f32(dt, k[d]);
        w[j] = s * scale;
        if (w[j] > mx) mx = w[j];
      }
      for (int64_t j = 0; j <= m; j++) sum += (w[j] = exp(w[j] - mx));
      for (int64_t d = 0; d < D; d++) {
        double acc = 0;
        for (int64_t j = 0; j <= m; j++) acc += w[j] / sum * kt_to_f32(dt, V.host[kvoff + (bh * S + j) * D + d]);
        ref[(bh * S + m) * D + d] = acc;
        if (fabs(acc) > R) R = fabs(acc);
      }
    }
  for (size_t i = 0; i < n; i++) {
    double rr = kt_round(dt, ref[i]), v = kt_to_f32(dt, O.host[i]);
    double err = fabs(v - rr), tol = fmax(kt_ulp(dt, rr), 1e-3 * (fabs(ref[i]) + R));
    if (!(err <= tol)) {
      if (bad++ < 3)
        fprintf(stderr, "B=%lld H=%lld S=%lld D=%lld: O[%zu] = %g, expected %g (tol %g)\n", (long long)B, (long long)H,
                (long long)S, (long long)D, i, v, rr, tol);
    } else if (err / tol > *worst) {
      *worst = err / tol;
    }
  }
  free(ref);
  free(w);
out:
  kt_free(&Q), kt_free(&K), kt_free(&V), kt_free(&O);
  return bad != 0;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "fp16") && strcmp(argv[1], "bf16")) || (atoi(argv[2]) != 64 && atoi(argv[2]) != 128)) {
    fprintf(stderr, "usage: test_attention_emu <fp16|bf16> <64|128>\n");
    return 2;
  }
  dlc_dtype dt = strcmp(argv[1], "fp16") == 0 ? DLC_F16 : DLC_BF16;
  int64_t D = atoi(argv[2]);
  static const int64_t bs[] = {1, 2}, hs[] = {1, 3}, ss[] = {1, 17, 64, 200};
  int fails = 0, cases = 0;
  double worst = 0;
  for (int i = 0; i < 16; i++) {
    fails += run_case(dt, bs[i / 8], hs[(i / 4) % 2], ss[i % 4], D, 0, 0, 0, 77 + (uint64_t)i, &worst);
    cases++;
  }
  fails += run_case(dt, 1, 2, 333, D, 0, 0, 0, 98, &worst);
  cases++;
  /* Q one element past 16-byte alignment: no tensor map describes it, and
   * the entry point runs the sm80 row (with DLC_EMU_ARCH=sm90a too) */
  fails += run_case(dt, 1, 3, 200, D, 1, 0, 1, 99, &worst);
  cases++;
  /* K and V one element past it (their streamed 2-byte chunks at odd
   * addresses), then Q, K and V 2 and 4 elements past it: the 1-, 2- and
   * 4-element kernels */
  fails += run_case(dt, 2, 1, 333, D, 0, 1, 1, 102, &worst);
  fails += run_case(dt, 1, 3, 200, D, 2, 2, 2, 100, &worst);
  fails += run_case(dt, 2, 1, 333, D, 4, 4, 4, 101, &worst);
  cases += 3;
  printf("attention %s D=%lld: %d cases, %d failed; worst error %.3f of the tolerance\n", argv[1], (long long)D, cases,
         fails, worst);
  return fails ? 1 : 0;
}
