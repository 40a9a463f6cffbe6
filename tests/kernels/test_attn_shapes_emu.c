/* The attention shapes of tests/kernels/attn/manifest.json (issue 11) in the
 * PTX emulator against an FP64 reference (tolerance: kt.h), memcheck on:
 *
 *   test_attn_shapes_emu causal <fp16|bf16> <D>   head dims 80, 96, 160, 256
 *   test_attn_shapes_emu cross <fp16|bf16> <D>    no mask, key length != query length
 *   test_attn_shapes_emu causal_cross <fp16|bf16> <D>  the causal mask, key length != query
 *                                                 length (top-left: query m sees keys n <= m)
 *   test_attn_shapes_emu gqa <fp16|bf16> <D>      G query heads share a K/V head
 *   test_attn_shapes_emu gqa_causal fp16 128      the same with the causal mask
 *
 * Every shape has tails: query and key lengths that are not multiples of
 * the 64-row or key tiles.  One shape also runs with tensors 1, 2 and 4
 * elements off 16-byte alignment, which the dispatch sends to the 1-, 2- and
 * 4-element chunk kernels (checked from the emulator's cp.async sizes).  Tensors are packed: Q and O [B, HQ, S, D], K and
 * V [B, HK, T, D] with HQ = HK * G (query head h reads K/V head h / G). */
#include <stdbool.h>

#include "kt.h"

typedef struct shape {
  int64_t B, HK, G, S, T;
} shape;

typedef enum { CAUSAL, CROSS, GQA, GQA_CAUSAL, CAUSAL_CROSS } kind;

static dlc_status call(kind k, dlc_dtype dt, const shape *s, int64_t D, const void *q, const void *kk, const void *v,
                       void *o) {
  switch (k) {
  case CAUSAL: return dlc_attention_causal(dt, s->B, s->HK * s->G, s->S, D, q, kk, v, o, NULL);
  case CROSS: return dlc_attention_cross(dt, s->B, s->HK, s->S, s->T, D, q, kk, v, o, NULL);
  case GQA: return dlc_attention_gqa(dt, s->B, s->HK, s->G, s->S, s->T, D, q, kk, v, o, NULL);
  case GQA_CAUSAL: return dlc_attention_gqa_causal(dt, s->B, s->HK, s->G, s->S, D, q, kk, v, o, NULL);
  case CAUSAL_CROSS: return dlc_attention_causal_cross(dt, s->B, s->HK, s->S, s->T, D, q, kk, v, o, NULL);
  }
  return DLC_ERROR_INVALID_VALUE;
}

/* One shape; every tensor starts `off` elements into its allocation, so that
 * off = 1, 2, 4 select the 1-, 2- and 4-element chunk kernels (0: 8). */
static int run_case(kind k, dlc_dtype dt, const shape *s, int64_t D, int off, uint64_t seed, double *worst) {
  const bool causal = k == CAUSAL || k == GQA_CAUSAL || k == CAUSAL_CROSS;
  const int64_t HQ = s->HK * s->G, S = s->S, T = s->T;
  size_t nq = (size_t)(s->B * HQ * S * D), nk = (size_t)(s->B * s->HK * T * D);
  kt_buf Q = {0}, K = {0}, V = {0}, O = {0};
  kt_alloc(&Q, nq + off, 0), kt_alloc(&K, nk + off, 0), kt_alloc(&V, nk + off, 0), kt_alloc(&O, nq + off, 0);
  uint64_t st = seed;
  for (size_t i = 0; i < nq; i++) Q.host[off + i] = kt_from_f32(dt, (float)kt_uniform(&st));
  for (size_t i = 0; i < nk; i++) K.host[off + i] = kt_from_f32(dt, (float)kt_uniform(&st));
  for (size_t i = 0; i < nk; i++) V.host[off + i] = kt_from_f32(dt, (float)kt_uniform(&st));
  kt_upload(&Q), kt_upload(&K), kt_upload(&V), kt_upload(&O);
  char *q0 = kt_ptr(Q.dev), *k0 = kt_ptr(K.dev), *v0 = kt_ptr(V.dev), *o0 = kt_ptr(O.dev);
  dlc_status r = call(k, dt, s, D, q0 + 2 * off, k0 + 2 * off, v0 + 2 * off, o0 + 2 * off);
  int bad = 0;
  char where[160];
  snprintf(where, sizeof where, "B=%lld HK=%lld G=%lld S=%lld T=%lld D=%lld offset %d", (long long)s->B,
           (long long)s->HK, (long long)s->G, (long long)S, (long long)T, (long long)D, off);
  if (r != DLC_SUCCESS) {
    fprintf(stderr, "%s: %s: %s\n", where, dlc_status_string(r), dlc_last_error_detail());
    bad = 1;
    goto out;
  }
  dlcemu_launch_stats stats;
  dlcemu_last_launch_stats(&stats);
  if (stats.global_store.bytes != nq * 2) {
    fprintf(stderr, "%s: the kernel stored %llu bytes; O has %zu\n", where, stats.global_store.bytes, nq * 2);
    bad = 1;
  }
  /* the chunk width the dispatch picked: 16-byte cp.async copies for 8
   * elements, 2 * off bytes for off = 2, 4, and plain 2-byte copies for 1 */
  const unsigned long long want = off == 0 ? 16 : off == 1 ? 0 : 2ull * (unsigned)off;
  const unsigned long long got = stats.cp_async_copies ? stats.cp_async_bytes / stats.cp_async_copies : 0;
  if (got != want) {
    fprintf(stderr, "%s: cp.async copies of %llu bytes on average; the %d-element kernel copies %llu\n", where, got,
            off ? off : 8, want);
    bad = 1;
  }
  kt_download(&O);
  double *ref = malloc(sizeof(double) * nq), *w = malloc(sizeof(double) * (size_t)T), R = 0;
  const double scale = 1.0 / sqrt((double)D);
  for (int64_t b = 0; b < s->B; b++)
    for (int64_t h = 0; h < HQ; h++)
      for (int64_t m = 0; m < S; m++) {
        const uint16_t *q = Q.host + off + ((b * HQ + h) * S + m) * D;
        const int64_t kv = (b * s->HK + h / s->G) * T, nend = causal && m + 1 < T ? m + 1 : T;
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < nend; j++) {
          const uint16_t *kr = K.host + off + (kv + j) * D;
          double acc = 0;
          for (int64_t d = 0; d < D; d++) acc += (double)kt_to_f32(dt, q[d]) * kt_to_f32(dt, kr[d]);
          w[j] = acc * scale;
          if (w[j] > mx) mx = w[j];
        }
        for (int64_t j = 0; j < nend; j++) sum += (w[j] = exp(w[j] - mx));
        for (int64_t d = 0; d < D; d++) {
          double acc = 0;
          for (int64_t j = 0; j < nend; j++) acc += w[j] / sum * kt_to_f32(dt, V.host[off + (kv + j) * D + d]);
          ref[((b * HQ + h) * S + m) * D + d] = acc;
          if (fabs(acc) > R) R = fabs(acc);
        }
      }
  for (size_t i = 0; i < nq; i++) {
    double rr = kt_round(dt, ref[i]), v = kt_to_f32(dt, O.host[off + i]);
    double err = fabs(v - rr), tol = fmax(kt_ulp(dt, rr), 1e-3 * (fabs(ref[i]) + R));
    if (!(err <= tol)) {
      if (bad++ < 3) fprintf(stderr, "%s: O[%zu] = %g, expected %g (tol %g)\n", where, i, v, rr, tol);
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
  static const char *const names[] = {"causal", "cross", "gqa", "gqa_causal", "causal_cross"};
  int k = -1;
  for (int i = 0; argc == 4 && i < 5; i++)
    if (strcmp(argv[1], names[i]) == 0) k = i;
  if (k < 0 || (strcmp(argv[2], "fp16") && strcmp(argv[2], "bf16")) || atoi(argv[3]) <= 0) {
    fprintf(stderr, "usage: test_attn_shapes_emu <causal|cross|gqa|gqa_causal|causal_cross> <fp16|bf16> <D>\n");
    return 2;
  }
  dlc_dtype dt = strcmp(argv[2], "fp16") == 0 ? DLC_F16 : DLC_BF16;
  int64_t D = atoi(argv[3]);
  /* {B, HK, G, S, T}; causal kinds take T = S */
  static const shape causal[] = {{1, 1, 1, 1, 1}, {1, 2, 1, 37, 37}, {2, 1, 1, 130, 130}};
  static const shape cross[] = {{1, 1, 1, 45, 130}, {2, 1, 1, 130, 17}, {1, 2, 1, 1, 200}};
  static const shape gqa[] = {{2, 2, 3, 29, 70}, {1, 1, 4, 70, 1}, {1, 3, 2, 17, 33}};
  static const shape gqa_causal[] = {{1, 1, 4, 70, 70}, {2, 2, 3, 29, 29}};
  const shape *sh = k == CAUSAL ? causal : k == CROSS || k == CAUSAL_CROSS ? cross : k == GQA ? gqa : gqa_causal;
  int n = k == GQA_CAUSAL ? 2 : 3, fails = 0, cases = 0;
  double worst = 0;
  for (int i = 0; i < n; i++, cases++) fails += run_case((kind)k, dt, &sh[i], D, 0, 91 + (uint64_t)i, &worst);
  /* the narrower chunk kernels, on the second shape */
  for (int off = 1; off <= 4; off *= 2, cases++) fails += run_case((kind)k, dt, &sh[1], D, off, 71 + (uint64_t)off, &worst);
  printf("attention %s %s D=%lld: %d cases (vector widths 8, 4, 2, 1), %d failed; worst error %.3f of the tolerance\n",
         argv[1], argv[2], (long long)D, cases, fails, worst);
  return fails ? 1 : 0;
}
