/* A chain's workspace: its values' live intervals (workspace.h). */
#include "workspace.h"

#include <string.h>

#include "arena.h"
#include "dtype.h"

#include "skel/skel.h"
#include "sx.h"

/* The regions a chain's kernel reads: its region, and attention's P V
 * region (its kernel stores that region's outputs; P stays on chip). */
static int kernel_regions(const gpu_kernel *k, const region **r) {
  r[0] = k->r;
  if (skel_shape_of(k) != SKEL_ATTENTION) return 1;
  r[1] = k->v2.r;
  return 2;
}

/* Whether kernel k reads the value named `name`. */
static bool kernel_reads(const gpu_kernel *k, const char *name) {
  const region *rs[2];
  int nr = kernel_regions(k, rs);
  for (int j = 0; j < nr; j++)
    for (int i = 0; rs[j] && i < rs[j]->nin; i++)
      if (!rs[j]->in[i].signature && strcmp(rs[j]->in[i].name, name) == 0) return true;
  return false;
}

/* Whether kernel k reads signature input `name`. */
static bool kernel_reads_input(const gpu_kernel *k, const char *name) {
  const region *rs[2];
  int nr = kernel_regions(k, rs);
  for (int j = 0; j < nr; j++)
    for (int i = 0; rs[j] && i < rs[j]->nin; i++)
      if (rs[j]->in[i].signature && strcmp(rs[j]->in[i].name, name) == 0) return true;
  return false;
}

int ws_values(const gpu_kernel *first, ws_value *out, int cap) {
  int n = 0;
  for (const gpu_kernel *k = first; k; k = k->next) {
    const region *rs[2];
    const region *r = rs[kernel_regions(k, rs) - 1]; /* the region it stores */
    for (int o = 0; o < r->nout; o++) {
      if (r->out[o].signature) continue;
      if (n < cap) out[n] = (ws_value){&r->out[o], k->chain_index, k->chain_index};
      n++;
    }
  }
  for (int v = 0; v < n && v < cap; v++)
    for (const gpu_kernel *k = first; k; k = k->next)
      if (k->chain_index > out[v].dies && kernel_reads(k, out[v].m->name)) out[v].dies = k->chain_index;
  return n;
}

bool ws_verify(const gpu_kernel *first, diag_list *dl) {
  ws_value v[WS_MAX_VALUES];
  int n = ws_values(first, v, WS_MAX_VALUES);
  if (n > WS_MAX_VALUES) {
    diag_report(dl, D_INTERNAL, "arena", NULL, "the chain hands %d values between its kernels; the entry point places at most %d",
                n, WS_MAX_VALUES);
    return false;
  }
  bool ok = true;
  for (const gpu_kernel *k = first; k; k = k->next)
    for (int i = 0; i < n; i++) {
      if (!kernel_reads(k, v[i].m->name)) continue;
      if (k->chain_index <= v[i].born || k->chain_index > v[i].dies) {
        diag_report(dl, D_INTERNAL, "arena", NULL, "kernel %d reads '%s', live from kernel %d to %d", k->chain_index, v[i].m->name,
                    v[i].born, v[i].dies);
        ok = false;
      }
    }
  return ok;
}

cJSON *ws_dump(const gpu_kernel *first) {
  ws_value v[WS_MAX_VALUES];
  int n = ws_values(first, v, WS_MAX_VALUES), nk = 0;
  for (const gpu_kernel *k = first; k; k = k->next) nk++;
  arena A;
  arena_init(&A);
  cJSON *d = cJSON_CreateObject();
  cJSON_AddNumberToObject(d, "kernels", nk);
  cJSON *a = cJSON_AddArrayToObject(d, "values");
  for (int i = 0; i < n && i < WS_MAX_VALUES; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", v[i].m->name);
    cJSON_AddStringToObject(o, "dtype", dtype_name(v[i].m->dt));
    cJSON *sh = cJSON_AddArrayToObject(o, "shape");
    for (int d2 = 0; d2 < v[i].m->rank; d2++) cJSON_AddItemToArray(sh, cJSON_CreateString(sx_str(&A, v[i].m->shape[d2])));
    /* its bytes before the 256-byte rounding: the shape's product, each
     * dim parenthesized unless it is one symbol or number */
    const char *b = "";
    for (int d2 = 0; d2 < v[i].m->rank; d2++) {
      const char *t = sx_str(&A, v[i].m->shape[d2]);
      bool atom = strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(t);
      b = arena_printf(&A, atom ? "%s%s*" : "%s(%s)*", b, t);
    }
    cJSON_AddStringToObject(o, "bytes", arena_printf(&A, "%s%d", b, dtype_bytes(v[i].m->dt)));
    cJSON_AddNumberToObject(o, "born", v[i].born);
    cJSON_AddNumberToObject(o, "dies", v[i].dies);
    cJSON_AddItemToArray(a, o);
  }
  /* the values live at each kernel: the workspace is at least the largest
   * of these sets' bytes */
  cJSON *live = cJSON_AddArrayToObject(d, "live");
  for (int t = 0; t < nk; t++) {
    cJSON *at = cJSON_CreateArray();
    for (int i = 0; i < n && i < WS_MAX_VALUES; i++)
      if (v[i].born <= t && t <= v[i].dies) cJSON_AddItemToArray(at, cJSON_CreateString(v[i].m->name));
    cJSON_AddItemToArray(live, at);
  }
  arena_free(&A);
  return d;
}

/* Whether every symbol x reads is one of the shape's (sx_subst as a visitor). */
typedef struct sym_in {
  int rank;
  const sx *const *shape;
  bool outside;
} sym_in;
static const sx *visit_in(void *ctx, sx_atom_kind kind, const char *name) {
  sym_in *v = ctx;
  bool in = false;
  for (int d = 0; d < v->rank && !in; d++) in = sx_mentions(v->shape[d], kind, name);
  if (!in) v->outside = true;
  return NULL;
}
static bool reads_only(arena *A, const sx *x, sym_in *v) {
  if (x) (void)sx_subst(A, x, visit_in, v);
  return !v->outside;
}

/* Whether conversion kernel k, writing m, reads no dim but param t's: its
 * grid, its region's axes and the value's shape (plan_create has those
 * dims alone). */
static bool over_param_dims(const gpu_kernel *k, const region_memref *m, const fe_tensor *t) {
  arena A;
  arena_init(&A);
  sym_in v = {t->rank, t->shape, false};
  bool ok = t->shape != NULL;
  for (int d = 0; ok && d < 3; d++) ok = reads_only(&A, k->grid[d], &v);
  for (int d = 0; ok && d < 2; d++) ok = reads_only(&A, k->grid_tiles[d], &v);
  for (int d = 0; ok && d < m->rank; d++) ok = reads_only(&A, m->shape[d], &v);
  for (int x = 0; ok && x < k->r->niters + k->r->nred; x++) ok = reads_only(&A, k->r->it[x].size, &v);
  arena_free(&A);
  return ok;
}

int ws_param_convs(const fe_graph *g, const gpu_kernel *first, ws_param_conv *out, int cap) {
  ws_value v[WS_MAX_VALUES];
  int n = ws_values(first, v, WS_MAX_VALUES), nc = 0;
  for (int i = 0; i < n && i < WS_MAX_VALUES; i++) {
    int t = fe_find_tensor(g, v[i].m->name);
    const char *of = t >= 0 ? g->tensors[t].conversion_of : NULL;
    int p = of ? fe_find_tensor(g, of) : -1;
    if (p < 0 || g->tensors[p].sig_input < 0 || !fe_pooled_param(&g->tensors[p])) continue;
    const gpu_kernel *w = NULL;
    bool alone = true;
    for (const gpu_kernel *k = first; k; k = k->next) {
      if (k->chain_index == v[i].born) w = k;
      else if (kernel_reads_input(k, of)) alone = false;
    }
    /* the writer: one region, the param in, the value out */
    if (!w || !alone || w->reduce || skel_shape_of(w) == SKEL_ATTENTION || w->r->nin != 1 || !w->r->in[0].signature ||
        strcmp(w->r->in[0].name, of) != 0 || w->r->nout != 1 || !over_param_dims(w, v[i].m, &g->tensors[p]))
      continue;
    if (nc < cap) out[nc] = (ws_param_conv){i, of, v[i].m, w};
    nc++;
  }
  return nc;
}

/* The shape's symbols are signature dims (visitor of pool_shape). */
typedef struct sig_syms {
  const fe_graph *g;
  bool other;
} sig_syms;
static const sx *visit_sig(void *ctx, sx_atom_kind kind, const char *name) {
  sig_syms *v = ctx;
  bool dim = false;
  for (int d = 0; kind == SXA_PARAM && d < v->g->ndims && !dim; d++) dim = strcmp(v->g->dims[d], name) == 0;
  if (!dim) v->other = true;
  return NULL;
}

/* Whether the pool holds tensor t: a param over signature dims alone. */
static bool pooled(arena *A, const fe_graph *g, const fe_tensor *t) {
  if (!fe_pooled_param(t) || !t->shape || t->rank < 1) return false;
  sig_syms v = {g, false};
  for (int d = 0; d < t->rank; d++) (void)sx_subst(A, t->shape[d], visit_sig, &v);
  return !v.other;
}

static cJSON *shape_strings(arena *A, int rank, const sx *const *shape) {
  cJSON *a = cJSON_CreateArray();
  for (int d = 0; d < rank; d++) cJSON_AddItemToArray(a, cJSON_CreateString(sx_str(A, shape[d])));
  return a;
}

cJSON *ws_constpool_dump(const fe_graph *g, const gpu_kernel *first) {
  arena A;
  arena_init(&A);
  ws_param_conv pc[WS_MAX_VALUES];
  int npc = first ? ws_param_convs(g, first, pc, WS_MAX_VALUES) : 0;
  cJSON *d = cJSON_CreateObject();
  cJSON_AddNumberToObject(d, "align", 256);
  cJSON *ps = cJSON_CreateArray();
  const char *at = "0"; /* the next offset: each param's bytes rounded up to 256, summed */
  for (int i = 0; i < g->nin; i++) {
    const fe_tensor *t = &g->tensors[g->inputs[i]];
    if (!pooled(&A, g, t)) continue;
    const int eb = dtype_bytes(t->dt);
    int j = 0;
    while (j < npc && j < WS_MAX_VALUES && strcmp(pc[j].param, t->name)) j++;
    const region_memref *m = j < npc && j < WS_MAX_VALUES ? pc[j].m : NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", t->name);
    cJSON_AddStringToObject(o, "dtype", dtype_name(t->dt));
    cJSON_AddItemToObject(o, "shape", shape_strings(&A, t->rank, t->shape));
    cJSON_AddStringToObject(o, "offset", at);
    cJSON_AddNumberToObject(o, "align", 256);
    const sx *bytes;
    const char *btext;
    if (m || t->rank != 2) {
      /* packed: the param, or its conversion in its place */
      bytes = sx_int(&A, eb);
      int rank = m ? m->rank : t->rank;
      const sx *const *shape = m ? m->shape : t->shape;
      for (int x = 0; x < rank; x++) bytes = sx_mul(&A, bytes, shape[x]);
      cJSON_AddNullToObject(o, "row_pitch");
      btext = sx_str(&A, bytes);
    } else {
      /* a matrix: rows a multiple of 16 bytes apart */
      const sx *w = sx_scale(&A, t->shape[1], eb);
      int64_t wb;
      const char *pitch = sx_is_int(w, &wb) ? arena_printf(&A, "%lld", (long long)((wb + 15) / 16 * 16))
                                            : arena_printf(&A, "16*ceil((%s)/16)", sx_str(&A, w));
      cJSON_AddStringToObject(o, "row_pitch", pitch);
      bytes = sx_is_int(w, &wb) ? sx_scale(&A, t->shape[0], (wb + 15) / 16 * 16) : NULL;
      const char *rows = sx_str(&A, t->shape[0]);
      bool atom = strspn(rows, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(rows);
      btext = bytes ? sx_str(&A, bytes) : arena_printf(&A, atom ? "%s*%s" : "(%s)*%s", rows, pitch);
    }
    cJSON_AddStringToObject(o, "bytes", btext);
    if (m) {
      cJSON *f = cJSON_CreateObject();
      cJSON_AddStringToObject(f, "kind", "layout");
      cJSON_AddStringToObject(f, "value", m->name);
      cJSON_AddItemToObject(f, "shape", shape_strings(&A, m->rank, m->shape));
      int vt = fe_find_tensor(g, m->name);
      if (vt >= 0 && g->tensors[vt].layout) cJSON_AddStringToObject(f, "layout", g->tensors[vt].layout);
      else cJSON_AddNullToObject(f, "layout");
      cJSON_AddNumberToObject(f, "kernel", pc[j].k->chain_index);
      cJSON_AddStringToObject(f, "at", "plan_create");
      cJSON_AddItemToObject(o, "fold", f);
    } else
      cJSON_AddStringToObject(o, "fold", "none");
    cJSON_AddItemToArray(ps, o);
    int64_t b;
    const char *r = bytes && sx_is_int(bytes, &b) ? arena_printf(&A, "%lld", (long long)((b + 255) / 256 * 256))
                                                  : arena_printf(&A, "256*ceil((%s)/256)", btext);
    at = cJSON_GetArraySize(ps) == 1 ? r : arena_printf(&A, "%s + %s", at, r);
  }
  cJSON_AddStringToObject(d, "bytes", at);
  cJSON_AddItemToObject(d, "params", ps);
  arena_free(&A);
  return d;
}
