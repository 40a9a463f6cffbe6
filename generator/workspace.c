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
