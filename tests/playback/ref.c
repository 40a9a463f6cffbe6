/* FP64 reference of the Frontend ops (see ref.h).  Every op is a direct
 * transcription of its definition: out[index] = formula(in[...]).  Index
 * arithmetic goes through unravel()/ravel() so that no code is shared with
 * the playback interpreter's gather loops. */
#include "ref.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_PI 3.14159265358979323846

bool ref_tensor_new(ref_tensor *t, int rank, const int64_t *shape) {
  memset(t, 0, sizeof *t);
  if (rank < 0 || rank > REF_MAX_RANK) return false;
  t->rank = rank;
  t->n = 1;
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0 || (shape[i] && t->n > ((int64_t)1 << 30) / shape[i])) return false;
    t->shape[i] = shape[i];
    t->n *= shape[i];
  }
  t->d = calloc((size_t)(t->n ? t->n : 1), sizeof(double));
  return t->d != NULL;
}

void ref_tensor_free(ref_tensor *t) {
  free(t->d);
  t->d = NULL;
}

static bool dims_lookup(void *ctx, sx_atom_kind kind, const char *name, int64_t *v) {
  const ref_dims *d = ctx;
  (void)kind;
  for (int i = 0; i < d->n; i++)
    if (strcmp(d->name[i], name) == 0) {
      *v = d->val[i];
      return true;
    }
  return false;
}

bool ref_shape(const ref_dims *dims, int rank, const sx *const *shape, int64_t *out) {
  for (int i = 0; i < rank; i++)
    if (!sx_eval(shape[i], dims_lookup, (void *)dims, &out[i]) || out[i] < 0) return false;
  return true;
}

/* flat offset -> multi-index, and back (row-major) */
static void unravel(const ref_tensor *t, int64_t f, int64_t *idx) {
  for (int k = t->rank - 1; k >= 0; k--) {
    idx[k] = t->shape[k] ? f % t->shape[k] : 0;
    f = t->shape[k] ? f / t->shape[k] : 0;
  }
}

static int64_t ravel(const ref_tensor *t, const int64_t *idx) {
  int64_t f = 0;
  for (int k = 0; k < t->rank; k++) f = f * t->shape[k] + idx[k];
  return f;
}

/* Right-aligned broadcast read: x's axes align with the last x->rank axes of
 * an index of rank `r`; size-1 axes read index 0. */
static double bread(const ref_tensor *x, int r, const int64_t *idx) {
  int64_t j[REF_MAX_RANK];
  for (int k = 0; k < x->rank; k++) {
    int64_t i = idx[r - x->rank + k];
    j[k] = x->shape[k] == 1 ? 0 : i;
  }
  return x->d[ravel(x, j)];
}

static double round_to(dtype t, double v) {
  /* an independent rounding: via float for fp32, by mantissa bits otherwise */
  if (t == DT_FP32) return (double)(float)v;
  if (t != DT_FP16 && t != DT_BF16) return v;
  if (!isfinite(v) || v == 0) return v;
  int mant = t == DT_FP16 ? 10 : 7, emin = t == DT_FP16 ? -14 : -126;
  double maxv = t == DT_FP16 ? 65504.0 : 3.3895313892515355e38;
  int e = ilogb(v);
  if (e < emin) e = emin;
  double q = ldexp(1.0, e - mant);
  double r = rint(v / q) * q; /* ties to even */
  if (fabs(r) > maxv) r = copysign(INFINITY, v);
  return r;
}

double ref_ewise(ewise_fn fn, double a, double b, double c) {
  switch (fn) {
  case EW_ADD: return a + b;
  case EW_SUB: return a - b;
  case EW_MUL: return a * b;
  case EW_DIV: return a / b;
  case EW_MAX: return a > b ? a : b;
  case EW_MIN: return a < b ? a : b;
  case EW_NEG: return -a;
  case EW_ABS: return fabs(a);
  case EW_RELU: return a > 0 ? a : 0;
  case EW_SIGMOID: return 1.0 / (1.0 + exp(-a));
  case EW_SILU: return a / (1.0 + exp(-a));
  case EW_TANH: return tanh(a);
  case EW_GELU_TANH: return 0.5 * a * (1.0 + tanh(sqrt(2.0 / REF_PI) * (a + 0.044715 * a * a * a)));
  case EW_EXP: return exp(a);
  case EW_EXP2: return exp2(a);
  case EW_LOG: return log(a);
  case EW_SQRT: return sqrt(a);
  case EW_RSQRT: return 1.0 / sqrt(a);
  case EW_RECIP: return 1.0 / a;
  case EW_GELU: return 0.5 * a * (1.0 + erf(a / sqrt(2.0)));
  case EW_ERF: return erf(a);
  case EW_SIGN: return a > 0 ? 1 : a < 0 ? -1 : 0;
  case EW_SOFTPLUS: return log1p(exp(a));
  case EW_MISH: return a * tanh(log1p(exp(a)));
  case EW_HARDSWISH: return a * fmin(fmax(a + 3, 0), 6) / 6;
  case EW_POW: return pow(a, b);
  case EW_CLAMP_MIN: return fmax(a, b);
  case EW_CLAMP_MAX: return fmin(a, b);
  case EW_LEAKY_RELU: return a > 0 ? a : a * b;
  case EW_CLAMP: return fmin(fmax(a, b), c);
  case EW_WHERE: return a != 0 ? b : c;
  case EW_CAST: return a;
  case EW__COUNT: break;
  }
  return NAN;
}

typedef struct rctx {
  const fe_graph *g;
  const ref_dims *dims;
  ref_tensor *val; /* per tensor */
  char *why;
  size_t nwhy;
} rctx;

static bool fail(rctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(rctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, c->nwhy, fmt, ap);
  va_end(ap);
  return false;
}

static bool ref_gemm(const ref_tensor *A, const ref_tensor *B, ref_tensor *C) {
  int r = C->rank;
  int64_t K = A->shape[A->rank - 1];
  int64_t oi[REF_MAX_RANK], ai[REF_MAX_RANK], bi[REF_MAX_RANK];
  for (int64_t f = 0; f < C->n; f++) {
    unravel(C, f, oi);
    /* batch axes right-aligned, size-1 broadcast */
    for (int k = 0; k < A->rank - 2; k++) {
      int64_t i = oi[(r - 2) - (A->rank - 2) + k];
      ai[k] = A->shape[k] == 1 ? 0 : i;
    }
    for (int k = 0; k < B->rank - 2; k++) {
      int64_t i = oi[(r - 2) - (B->rank - 2) + k];
      bi[k] = B->shape[k] == 1 ? 0 : i;
    }
    double acc = 0;
    for (int64_t k = 0; k < K; k++) {
      ai[A->rank - 2] = oi[r - 2];
      ai[A->rank - 1] = k;
      bi[B->rank - 2] = k;
      bi[B->rank - 1] = oi[r - 1];
      acc += A->d[ravel(A, ai)] * B->d[ravel(B, bi)];
    }
    C->d[f] = acc;
  }
  return true;
}

static bool ref_conv(const fe_graph *g, const fe_node *nd, const ref_tensor *X, const ref_tensor *W, ref_tensor *Y) {
  const fe_tensor *xt = &g->tensors[nd->in[0]], *wt = &g->tensors[nd->in[1]];
  bool nchw = xt->layout && strcmp(xt->layout, "NCHW") == 0;
  bool kcrs = wt->layout && strcmp(wt->layout, "KCRS") == 0;
  const fe_attrs *a = &nd->attrs;
  int64_t C = X->shape[nchw ? 1 : 3], H = X->shape[nchw ? 2 : 1], Wd = X->shape[nchw ? 3 : 2];
  int64_t R = W->shape[kcrs ? 2 : 1], S = W->shape[kcrs ? 3 : 2];
  int64_t oi[4], xi[4], wi[4];
  for (int64_t f = 0; f < Y->n; f++) {
    unravel(Y, f, oi);
    int64_t n = oi[0], k = nchw ? oi[1] : oi[3], p = nchw ? oi[2] : oi[1], q = nchw ? oi[3] : oi[2];
    double acc = 0;
    for (int64_t r = 0; r < R; r++)
      for (int64_t s = 0; s < S; s++) {
        int64_t h = p * a->stride[0] - a->pad[0] + r * a->dilation[0];
        int64_t w = q * a->stride[1] - a->pad[1] + s * a->dilation[1];
        if (h < 0 || h >= H || w < 0 || w >= Wd) continue; /* zero padding */
        for (int64_t c = 0; c < C; c++) {
          if (nchw) xi[0] = n, xi[1] = c, xi[2] = h, xi[3] = w;
          else xi[0] = n, xi[1] = h, xi[2] = w, xi[3] = c;
          if (kcrs) wi[0] = k, wi[1] = c, wi[2] = r, wi[3] = s;
          else wi[0] = k, wi[1] = r, wi[2] = s, wi[3] = c;
          acc += X->d[ravel(X, xi)] * W->d[ravel(W, wi)];
        }
      }
    Y->d[f] = acc;
  }
  return true;
}

static bool ref_attention(rctx *c, const fe_node *nd, const ref_tensor *Q, const ref_tensor *K, const ref_tensor *V,
                          ref_tensor *O) {
  const fe_attrs *a = &nd->attrs;
  int r = Q->rank;
  int64_t S = Q->shape[r - 2], D = Q->shape[r - 1], Sk = K->shape[r - 2], Dv = V->shape[r - 1];
  double scale = 1.0; /* no scale attr: unscaled scores */
  if (a->scale_rsqrt) {
    int64_t dv;
    if (!dims_lookup((void *)c->dims, SXA_PARAM, a->scale_rsqrt, &dv)) return fail(c, "'%s' unbound", a->scale_rsqrt);
    scale = 1.0 / sqrt((double)dv);
  } else if (a->has_scale) {
    scale = a->scale;
  }
  int64_t nb = Q->n / (S * D);
  double *row = malloc(sizeof(double) * (size_t)(Sk ? Sk : 1));
  if (!row) return fail(c, "out of memory");
  /* batch axes are equal for Q, K, V and O: the flat batch index works */
  for (int64_t b = 0; b < nb; b++)
    for (int64_t m = 0; m < S; m++) {
      double mx = -INFINITY;
      for (int64_t n = 0; n < Sk; n++) {
        double s = 0;
        for (int64_t d = 0; d < D; d++) s += Q->d[(b * S + m) * D + d] * K->d[(b * Sk + n) * D + d];
        s *= scale;
        if (a->causal && n > m) s = -INFINITY;
        row[n] = s;
        if (s > mx) mx = s;
      }
      double z = 0;
      for (int64_t n = 0; n < Sk; n++) z += row[n] = exp(row[n] - mx);
      for (int64_t d = 0; d < Dv; d++) {
        double acc = 0;
        for (int64_t n = 0; n < Sk; n++) acc += row[n] / z * V->d[(b * Sk + n) * Dv + d];
        O->d[(b * S + m) * Dv + d] = acc;
      }
    }
  free(row);
  return true;
}

static bool ref_node(rctx *c, const fe_node *nd) {
  const fe_graph *g = c->g;
  const fe_attrs *a = &nd->attrs;
  const ref_tensor *x = &c->val[nd->in[0]];
  ref_tensor *y = &c->val[nd->out[0]];
  int64_t shape[REF_MAX_RANK];
  if (!ref_shape(c->dims, nd->rrank, nd->rshape, shape)) return fail(c, "%s: result shape has an unbound symbol", nd->name);
  if (!ref_tensor_new(y, nd->rrank, shape)) return fail(c, "%s: cannot allocate the result", nd->name);
  int64_t oi[REF_MAX_RANK], xi[REF_MAX_RANK];
  switch (nd->op) {
  case FE_GEMM: return ref_gemm(x, &c->val[nd->in[1]], y);
  case FE_CONV2D: return ref_conv(g, nd, x, &c->val[nd->in[1]], y);
  case FE_ATTENTION: return ref_attention(c, nd, x, &c->val[nd->in[1]], &c->val[nd->in[2]], y);
  case FE_ELEMENTWISE:
    for (int64_t f = 0; f < y->n; f++) {
      unravel(y, f, oi);
      double v[3] = {0, 0, 0};
      for (int k = 0; k < nd->nin; k++) v[k] = bread(&c->val[nd->in[k]], y->rank, oi);
      if (a->has_scalar && nd->nin == 1) v[1] = a->scalar;
      y->d[f] = ref_ewise(nd->fn, v[0], v[1], v[2]);
      if (nd->fn == EW_CAST) y->d[f] = round_to(a->to, y->d[f]);
    }
    return true;
  case FE_REDUCE: {
    bool red[REF_MAX_RANK] = {0};
    for (int k = 0; k < a->naxes; k++) red[a->axes[k]] = true;
    double init = a->rop == RED_SUM ? 0 : a->rop == RED_MAX ? -INFINITY : INFINITY;
    for (int64_t f = 0; f < y->n; f++) y->d[f] = init;
    for (int64_t f = 0; f < x->n; f++) {
      unravel(x, f, xi);
      int r = 0;
      for (int k = 0; k < x->rank; k++)
        if (!red[k]) oi[r++] = xi[k];
      double *acc = &y->d[ravel(y, oi)];
      if (a->rop == RED_SUM) *acc += x->d[f];
      else if (a->rop == RED_MAX) *acc = fmax(*acc, x->d[f]);
      else *acc = fmin(*acc, x->d[f]);
    }
    if (a->mean) {
      int64_t cnt = 1;
      for (int k = 0; k < a->naxes; k++) cnt *= x->shape[a->axes[k]];
      for (int64_t f = 0; f < y->n; f++) y->d[f] /= (double)cnt;
    }
    return true;
  }
  case FE_SOFTMAX: {
    int ax = (int)a->axis;
    int64_t L = x->shape[ax];
    for (int64_t f = 0; f < y->n; f++) {
      unravel(y, f, oi);
      memcpy(xi, oi, sizeof xi);
      double mx = -INFINITY, z = 0;
      for (int64_t j = 0; j < L; j++) {
        xi[ax] = j;
        mx = fmax(mx, x->d[ravel(x, xi)]);
      }
      for (int64_t j = 0; j < L; j++) {
        xi[ax] = j;
        z += exp(x->d[ravel(x, xi)] - mx);
      }
      y->d[f] = exp(x->d[f] - mx) / z;
    }
    return true;
  }
  case FE_TRANSPOSE:
    for (int64_t f = 0; f < y->n; f++) {
      unravel(y, f, oi);
      for (int k = 0; k < y->rank; k++) xi[a->perm[k]] = oi[k];
      y->d[f] = x->d[ravel(x, xi)];
    }
    return true;
  case FE_RESHAPE:
    if (y->n != x->n) return fail(c, "%s: reshape of %lld elements to %lld", nd->name, (long long)x->n, (long long)y->n);
    memcpy(y->d, x->d, sizeof(double) * (size_t)x->n);
    return true;
  case FE_CAST:
    for (int64_t f = 0; f < y->n; f++) y->d[f] = round_to(a->to, x->d[f]);
    return true;
  case FE_PAD: {
    int64_t lo[REF_MAX_RANK];
    if (!ref_shape(c->dims, x->rank, a->pad_lo, lo)) return fail(c, "%s: unbound pad", nd->name);
    for (int64_t f = 0; f < y->n; f++) {
      unravel(y, f, oi);
      bool inside = true;
      for (int k = 0; k < x->rank; k++) {
        xi[k] = oi[k] - lo[k];
        inside = inside && xi[k] >= 0 && xi[k] < x->shape[k];
      }
      y->d[f] = inside ? x->d[ravel(x, xi)] : a->pad_value;
    }
    return true;
  }
  case FE_SLICE: {
    int64_t st[REF_MAX_RANK];
    if (!ref_shape(c->dims, x->rank, a->starts, st)) return fail(c, "%s: unbound start", nd->name);
    for (int64_t f = 0; f < y->n; f++) {
      unravel(y, f, oi);
      for (int k = 0; k < x->rank; k++) xi[k] = st[k] + oi[k] * a->steps[k];
      y->d[f] = x->d[ravel(x, xi)];
    }
    return true;
  }
  case FE_FLIP: {
    bool fl[REF_MAX_RANK] = {0};
    for (int k = 0; k < a->naxes; k++) fl[a->axes[k]] = true;
    for (int64_t f = 0; f < y->n; f++) {
      unravel(y, f, oi);
      for (int k = 0; k < x->rank; k++) xi[k] = fl[k] ? x->shape[k] - 1 - oi[k] : oi[k];
      y->d[f] = x->d[ravel(x, xi)];
    }
    return true;
  }
  case FE_EXPAND:
    for (int64_t f = 0; f < y->n; f++) {
      unravel(y, f, oi);
      y->d[f] = bread(x, y->rank, oi);
    }
    return true;
  case FE_GATHER: { /* torch.gather; an index out of range reads 0 */
    const ref_tensor *ix = &c->val[nd->in[1]];
    for (int64_t f = 0; f < y->n; f++) {
      unravel(y, f, oi);
      double j = ix->d[ravel(ix, oi)];
      for (int k = 0; k < x->rank; k++) xi[k] = oi[k];
      bool in = j >= 0 && j < (double)x->shape[a->axis];
      xi[a->axis] = in ? (int64_t)j : 0;
      y->d[f] = in ? x->d[ravel(x, xi)] : 0.0;
    }
    return true;
  }
  case FE_TILE: /* torch's Tensor.repeat: out[i] = x[i mod size], the leading axes dropped */
    for (int64_t f = 0; f < y->n; f++) {
      unravel(y, f, oi);
      for (int k = 0; k < x->rank; k++) xi[k] = oi[k + y->rank - x->rank] % x->shape[k];
      y->d[f] = x->d[ravel(x, xi)];
    }
    return true;
  case FE__COUNT: break;
  }
  return fail(c, "%s: op not in the reference", nd->name);
}

bool ref_eval_graph(const fe_graph *g, const ref_dims *dims, const ref_tensor *in, ref_tensor *out, char *why,
                    size_t nwhy) {
  rctx c = {g, dims, calloc((size_t)g->ntensors + 1, sizeof(ref_tensor)), why, nwhy};
  if (!c.val) return false;
  bool ok = true;
  for (int i = 0; i < g->nin && ok; i++) {
    const fe_tensor *t = &g->tensors[g->inputs[i]];
    int64_t shape[REF_MAX_RANK];
    if (!ref_shape(dims, t->rank, t->shape, shape) || in[i].rank != t->rank ||
        memcmp(shape, in[i].shape, sizeof(int64_t) * (size_t)t->rank) != 0)
      ok = fail(&c, "input %s has the wrong shape", t->name);
    else if (!ref_tensor_new(&c.val[g->inputs[i]], t->rank, shape))
      ok = fail(&c, "cannot allocate %s", t->name);
    else
      for (int64_t f = 0; f < in[i].n; f++) c.val[g->inputs[i]].d[f] = round_to(t->dt, in[i].d[f]);
  }
  for (int i = 0; i < g->nnodes && ok; i++) {
    const fe_node *nd = &g->nodes[i];
    ok = ref_node(&c, nd);
    /* a node's result is stored in its dtype (fp32 for an fp32 accumulator) */
    ref_tensor *y = &c.val[nd->out[0]];
    for (int64_t f = 0; ok && f < y->n; f++) y->d[f] = round_to(nd->rdt, y->d[f]);
  }
  for (int i = 0; i < g->nout && ok; i++) {
    const fe_tensor *t = &g->tensors[g->outputs[i]];
    const ref_tensor *v = &c.val[g->outputs[i]];
    if (!ref_tensor_new(&out[i], v->rank, v->shape)) {
      ok = fail(&c, "cannot allocate %s", t->name);
      break;
    }
    for (int64_t f = 0; f < v->n; f++) out[i].d[f] = round_to(t->dt, v->d[f]);
  }
  for (int i = 0; i < g->ntensors; i++) ref_tensor_free(&c.val[i]);
  free(c.val);
  return ok;
}
