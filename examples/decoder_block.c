/* Example: a Llama-style decoder block (manifests/graphs/decoder_block.dlc)
 * with dlc_decoder_block_ws, checked against a CPU FP64 reference of the
 * block.
 *
 * The block is an op of the test library's manifest
 * (tests/kernels/extra/manifest.json, variant G = 2, HD = 32), which builds
 * it for the emulator: this program links libdlcextra-emu and runs the
 * kernels' PTX in the PTX emulator.  The reference computes in double and
 * rounds to fp16 where the graph stores fp16 (its Casts to T: the normed
 * inputs of the projections, the projections, RoPE's outputs, the attention
 * output, the residual stream, the gated hidden layer); the check is the
 * kernel tests' tolerance (tests/kernels/kt.h).
 *
 * It also prints the global sectors the call's kernels load and store,
 * summed over its launches (dlcemu_thread_stats), beside the bytes of its
 * inputs and output.
 *
 *   decoder_block [S Hkv F]        (default 40 2 72: E = Hkv * G * HD = 128) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlc/dlc.h>
#include <dlc/dlcemu.h>

#include "kt.h"

enum { G = 2, HD = 32 }; /* the manifest's variant */

static void *dev_alloc(size_t bytes) {
  dlcemu_deviceptr p;
  return dlcemu_mem_alloc(&p, bytes ? bytes : 1) == 0 ? (void *)(uintptr_t)p : NULL;
}
static void dev_free(void *p) {
  if (p) dlcemu_mem_free((dlcemu_deviceptr)(uintptr_t)p);
}

static double h16(double v) { return kt_round(DLC_F16, v); }

/* a tensor: its fp16 bits (for the device), its values as doubles, and its
 * device copy */
typedef struct tensor {
  int64_t n;
  uint16_t *bits;
  double *v;
  void *dev;
} tensor;

static int tensor_new(tensor *t, int64_t n, uint64_t *seed, double scale) {
  t->n = n;
  t->bits = calloc((size_t)n, 2);
  t->v = calloc((size_t)n, sizeof(double));
  t->dev = dev_alloc((size_t)n * 2);
  if (!t->bits || !t->v || !t->dev) return 1;
  for (int64_t i = 0; seed && i < n; i++) {
    t->bits[i] = kt_f32_to_f16((float)(kt_uniform(seed) * scale));
    t->v[i] = kt_f16_to_f32(t->bits[i]);
  }
  return seed && dlcemu_memcpy_htod((dlcemu_deviceptr)(uintptr_t)t->dev, t->bits, (size_t)n * 2);
}

static void tensor_free(tensor *t) {
  free(t->bits), free(t->v), dev_free(t->dev);
}

/* y[S,E] = fp16(x / sqrt(mean(x^2) + 1e-6) * g) */
static void rmsnorm(const double *x, const double *g, int64_t S, int64_t E, double *y) {
  for (int64_t s = 0; s < S; s++) {
    double ss = 0;
    for (int64_t e = 0; e < E; e++) ss += x[s * E + e] * x[s * E + e];
    double r = 1.0 / sqrt(ss / (double)E + 1e-6);
    for (int64_t e = 0; e < E; e++) y[s * E + e] = h16(x[s * E + e] * r * g[e]);
  }
}

/* c[M,N] = a[M,K] b[K,N], summed in double */
static void matmul(const double *a, const double *b, int64_t M, int64_t N, int64_t K, double *c) {
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) acc += a[m * K + k] * b[k * N + n];
      c[m * N + n] = acc;
    }
}

/* RoPE (rotate-half) of the heads of x[S, nh*HD] in place, in fp32's place
 * double, rounded to fp16 once */
static void rope(double *x, int64_t S, int64_t nh, const double *cs, const double *sn) {
  double t[HD];
  for (int64_t s = 0; s < S; s++)
    for (int64_t h = 0; h < nh; h++) {
      double *r = x + (s * nh + h) * HD;
      for (int d = 0; d < HD; d++) {
        double rh = d < HD / 2 ? -r[d + HD / 2] : r[d - HD / 2];
        t[d] = h16(r[d] * cs[s * HD + d] + rh * sn[s * HD + d]);
      }
      memcpy(r, t, sizeof t);
    }
}

int main(int argc, char **argv) {
  int64_t S = 40, Hkv = 2, F = 72;
  if (argc == 4) S = atoll(argv[1]), Hkv = atoll(argv[2]), F = atoll(argv[3]);
  if (S <= 0 || Hkv <= 0 || F <= 0 || S > 4096 || Hkv > 64 || F > 16384) {
    fprintf(stderr, "usage: %s [S Hkv F]  (S <= 4096, Hkv <= 64, F <= 16384)\n", argv[0]);
    return 2;
  }
  const int64_t E = Hkv * G * HD, Ekv = Hkv * HD;
  uint64_t seed = 2026;
  tensor X, g1, Wq, Wk, Wv, Wo, cs, sn, g2, W1, W3, W2, Y;
  /* weights scaled by 1/sqrt(fan-in), as a trained model's are of the order */
  double we = 1.0 / sqrt((double)E), wf = 1.0 / sqrt((double)F);
  int bad = tensor_new(&X, S * E, &seed, 1.0) | tensor_new(&g1, E, &seed, 1.0) | tensor_new(&Wq, E * E, &seed, we) |
            tensor_new(&Wk, E * Ekv, &seed, we) | tensor_new(&Wv, E * Ekv, &seed, we) |
            tensor_new(&Wo, E * E, &seed, we) | tensor_new(&cs, S * HD, &seed, 1.0) | tensor_new(&sn, S * HD, &seed, 1.0) |
            tensor_new(&g2, E, &seed, 1.0) | tensor_new(&W1, E * F, &seed, we) | tensor_new(&W3, E * F, &seed, we) |
            tensor_new(&W2, F * E, &seed, wf) | tensor_new(&Y, S * E, NULL, 0);
  /* the tables as RoPE's: cos and sin of s * 10000^(-2i/HD), i = d mod HD/2 */
  for (int64_t s = 0; !bad && s < S; s++)
    for (int d = 0; d < HD; d++) {
      double th = (double)s * pow(10000.0, -2.0 * (d % (HD / 2)) / HD);
      cs.bits[s * HD + d] = kt_f32_to_f16((float)cos(th)), cs.v[s * HD + d] = kt_f16_to_f32(cs.bits[s * HD + d]);
      sn.bits[s * HD + d] = kt_f32_to_f16((float)sin(th)), sn.v[s * HD + d] = kt_f16_to_f32(sn.bits[s * HD + d]);
    }
  bad = bad || dlcemu_memcpy_htod((dlcemu_deviceptr)(uintptr_t)cs.dev, cs.bits, (size_t)(S * HD) * 2) ||
        dlcemu_memcpy_htod((dlcemu_deviceptr)(uintptr_t)sn.dev, sn.bits, (size_t)(S * HD) * 2);
  if (bad) {
    fprintf(stderr, "allocation or copy failed\n");
    return 1;
  }

  size_t ws_bytes = dlc_decoder_block_workspace_size(DLC_F16, S, Hkv, G, HD, F);
  void *ws = dev_alloc(ws_bytes);
  dlcemu_thread_stats_reset(); /* the call's kernels' statistics, summed (below) */
  dlc_status st = ws ? dlc_decoder_block_ws(DLC_F16, S, Hkv, G, HD, F, X.dev, E, g1.dev, Wq.dev, E, Wk.dev, Ekv, Wv.dev,
                                            Ekv, Wo.dev, E, cs.dev, HD, sn.dev, HD, g2.dev, W1.dev, F, W3.dev, F, W2.dev,
                                            E, Y.dev, E, ws, ws_bytes, NULL)
                     : DLC_ERROR_INTERNAL;
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "dlc_decoder_block_ws: %s: %s\n", dlc_status_string(st), dlc_last_error_detail());
    return 1;
  }
  dlcemu_launch_stats es;
  unsigned long long launches = 0;
  dlcemu_thread_stats(&es, &launches);
  if (dlcemu_memcpy_dtoh(Y.bits, (dlcemu_deviceptr)(uintptr_t)Y.dev, (size_t)(S * E) * 2)) {
    fprintf(stderr, "copy back failed\n");
    return 1;
  }

  /* the reference */
  double *xn = calloc((size_t)(S * E), sizeof(double)), *q = calloc((size_t)(S * E), sizeof(double)),
         *k = calloc((size_t)(S * Ekv), sizeof(double)), *v = calloc((size_t)(S * Ekv), sizeof(double)),
         *o = calloc((size_t)(S * E), sizeof(double)), *h = calloc((size_t)(S * E), sizeof(double)),
         *a = calloc((size_t)(S * F), sizeof(double)), *b = calloc((size_t)(S * F), sizeof(double)),
         *y = calloc((size_t)(S * E), sizeof(double)), *w = calloc((size_t)S, sizeof(double));
  if (!xn || !q || !k || !v || !o || !h || !a || !b || !y || !w) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  rmsnorm(X.v, g1.v, S, E, xn);
  matmul(xn, Wq.v, S, E, E, q);
  matmul(xn, Wk.v, S, Ekv, E, k);
  matmul(xn, Wv.v, S, Ekv, E, v);
  for (int64_t i = 0; i < S * E; i++) q[i] = h16(q[i]);
  for (int64_t i = 0; i < S * Ekv; i++) k[i] = h16(k[i]), v[i] = h16(v[i]);
  rope(q, S, Hkv * G, cs.v, sn.v);
  rope(k, S, Hkv, cs.v, sn.v);
  /* causal attention; query head (j, g) reads key/value head j; o[s, (j G + g) HD + d] */
  for (int64_t j = 0; j < Hkv; j++)
    for (int64_t g = 0; g < G; g++)
      for (int64_t s = 0; s < S; s++) {
        const double *qr = q + s * E + (j * G + g) * HD;
        double mx = -INFINITY, sum = 0;
        for (int64_t t = 0; t <= s; t++) {
          double dot = 0;
          for (int d = 0; d < HD; d++) dot += qr[d] * k[t * Ekv + j * HD + d];
          w[t] = dot / sqrt((double)HD);
          if (w[t] > mx) mx = w[t];
        }
        for (int64_t t = 0; t <= s; t++) sum += (w[t] = exp(w[t] - mx));
        for (int d = 0; d < HD; d++) {
          double acc = 0;
          for (int64_t t = 0; t <= s; t++) acc += w[t] * v[t * Ekv + j * HD + d];
          o[s * E + (j * G + g) * HD + d] = h16(acc / sum);
        }
      }
  matmul(o, Wo.v, S, E, E, h);
  for (int64_t i = 0; i < S * E; i++) h[i] = h16(X.v[i] + h16(h[i]));
  rmsnorm(h, g2.v, S, E, xn);
  matmul(xn, W1.v, S, F, E, a);
  matmul(xn, W3.v, S, F, E, b);
  for (int64_t i = 0; i < S * F; i++) a[i] = h16(a[i] / (1 + exp(-a[i])) * b[i]);
  matmul(a, W2.v, S, E, F, y);
  for (int64_t i = 0; i < S * E; i++) y[i] = h16(h[i] + h16(y[i]));

  /* kt.h's rule: |y - r| <= max(ulp(r), 1e-3 (|r| + R)) */
  double R = 0, worst = 0, max_err = 0;
  int64_t nbad = 0;
  for (int64_t i = 0; i < S * E; i++) R = fmax(R, fabs(y[i]));
  for (int64_t i = 0; i < S * E; i++) {
    double got = kt_f16_to_f32(Y.bits[i]), err = fabs(got - y[i]), tol = fmax(kt_ulp(DLC_F16, y[i]), 1e-3 * (fabs(y[i]) + R));
    if (!(err <= tol) && nbad++ < 5)
      fprintf(stderr, "Y[%lld, %lld] = %.6g, reference %.6g\n", (long long)(i / E), (long long)(i % E), got, y[i]);
    worst = fmax(worst, err / tol), max_err = fmax(max_err, err);
  }
  printf("dlc_decoder_block fp16 S=%lld Hkv=%lld G=%d HD=%d (E=%lld) F=%lld on the PTX emulator (libdlcextra-emu)\n",
         (long long)S, (long long)Hkv, G, HD, (long long)E, (long long)F);
  printf("workspace %zu bytes; at S=2048, E=4096 (Hkv=64), F=11008 it would be %zu bytes\n", ws_bytes,
         dlc_decoder_block_workspace_size(DLC_F16, 2048, 64, G, HD, 11008));
  /* what the chain moves against what it must: each input read once and Y
   * written once (the intermediates cross the workspace, and a tile's
   * operands are read once a CTA that needs them) */
  int64_t must = 0;
  tensor *in[] = {&X, &g1, &Wq, &Wk, &Wv, &Wo, &cs, &sn, &g2, &W1, &W3, &W2};
  for (size_t i = 0; i < sizeof in / sizeof *in; i++) must += in[i]->n * 2;
  printf("%llu kernels launched; global loads %llu sectors (%.3f MB), stores %llu sectors (%.3f MB); the inputs "
         "are %.3f MB and Y %.3f MB (emulator sectors of 32 bytes)\n",
         launches, es.global_load.sectors, (double)es.global_load.sectors * 32 / 1e6, es.global_store.sectors,
         (double)es.global_store.sectors * 32 / 1e6, (double)must / 1e6, (double)(S * E * 2) / 1e6);
  printf("max |error| against the CPU FP64 reference: %.3g (max |Y| = %.3g), worst %.3f of the tolerance%s\n", max_err,
         R, worst, nbad ? ": FAILED" : "");
  free(xn), free(q), free(k), free(v), free(o), free(h), free(a), free(b), free(y), free(w);
  dev_free(ws);
  tensor *all[] = {&X, &g1, &Wq, &Wk, &Wv, &Wo, &cs, &sn, &g2, &W1, &W3, &W2, &Y};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tensor_free(all[i]);
  return nbad ? 1 : 0;
}
