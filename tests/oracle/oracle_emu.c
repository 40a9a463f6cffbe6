/* oracle_emu: runs one op of a kernel library in the PTX emulator on the
 * inputs of an oracle_pb document, for the tinygrad oracle
 * (tests/oracle/tinygrad_oracle.py, issue 14 item 3).
 *
 *   oracle_emu OP < DOC
 *
 * DOC is what oracle_pb prints for a graph that the library compiles as
 * dlc_<OP>: its "dtype", its "bind" (the signature dims), its "inputs"
 * (name, dtype, shape, data) and its "outputs" (name, dtype, shape).  The
 * entry table of the library (src/dlc_entries.c) gives the entry point's
 * arguments; the instance is the first of the document's dtype whose fixed
 * arguments (compile-time dims, runtime attrs) agree with the document
 * (a runtime attr is read from the Frontend node that has it).  Tensors are
 * packed (a rank-2 tensor's leading dim is its row length); an instance that
 * needs a workspace gets the one dlc_<op>_workspace_size() reports.
 * Memcheck is on.  Prints on stdout
 *   {"kernels": [names launched], "tf32": [inputs a kernel multiplies in TF32],
 *    "outputs": [{"name", "data": [...]}]}
 * or {"skip": "why"} when the library has no such op or instance.
 * Exit status: 0 (also for a skip), 1 when the call or a kernel fails, 2 on
 * a usage or input error. */
#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlc/dlc.h"
#include "dlc/dlcemu.h"
#include "dlc_entries.h"
#include "dlc_internal.h"
#include "kt.h"

enum { MAX_LAUNCHES = 16, MAX_TENSORS = 32 };
static const dlc__kernel *launched[MAX_LAUNCHES];
static int nlaunched;

static int on_launch(const dlc__kernel *k, unsigned gx, unsigned gy, unsigned gz) {
  (void)gx, (void)gy, (void)gz;
  if (nlaunched < MAX_LAUNCHES) launched[nlaunched] = k;
  nlaunched++;
  return 0;
}

typedef struct tensor {
  const char *name;
  const char *dt; /* "fp16", "bf16", "fp32", "int32" */
  int rank;
  int64_t shape[8], n;
  int eb;
  bool out;
  const cJSON *data;
  dlcemu_deviceptr dev;
} tensor;

static int skip(const char *why) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "skip", why);
  char *s = cJSON_PrintUnformatted(o);
  puts(s);
  free(s);
  cJSON_Delete(o);
  return 0;
}

static dlc_dtype dlc_of(const char *dt) {
  return strcmp(dt, "fp16") == 0 ? DLC_F16 : strcmp(dt, "bf16") == 0 ? DLC_BF16 : DLC_F32;
}

static bool read_tensor(const cJSON *j, bool out, tensor *t) {
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name"), *dt = cJSON_GetObjectItemCaseSensitive(j, "dtype"),
              *shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
  if (!cJSON_IsString(name) || !cJSON_IsString(dt) || !cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > 8) return false;
  t->name = name->valuestring;
  t->dt = dt->valuestring;
  t->out = out;
  t->rank = cJSON_GetArraySize(shape);
  t->n = 1;
  int k = 0;
  for (const cJSON *s = shape->child; s; s = s->next, k++) {
    if (!cJSON_IsNumber(s) || s->valuedouble < 0) return false;
    t->shape[k] = (int64_t)s->valuedouble;
    t->n *= t->shape[k];
  }
  t->eb = strcmp(t->dt, "fp16") == 0 || strcmp(t->dt, "bf16") == 0 ? 2 : 4;
  t->data = out ? NULL : cJSON_GetObjectItemCaseSensitive(j, "data");
  return out || (cJSON_IsArray(t->data) && cJSON_GetArraySize(t->data) == t->n);
}

static bool upload(tensor *t) {
  size_t bytes = (size_t)(t->n ? t->n : 1) * (size_t)t->eb;
  unsigned char *h = calloc(bytes, 1);
  if (!h || dlcemu_mem_alloc(&t->dev, bytes) != 0) return free(h), false;
  int64_t f = 0;
  for (const cJSON *v = t->data ? t->data->child : NULL; v; v = v->next, f++) {
    double x = v->valuedouble;
    if (strcmp(t->dt, "int32") == 0) {
      int32_t i = (int32_t)x;
      memcpy(h + f * 4, &i, 4);
    } else if (t->eb == 4) {
      float y = (float)x;
      memcpy(h + f * 4, &y, 4);
    } else {
      uint16_t y = kt_from_f32(dlc_of(t->dt), (float)x);
      memcpy(h + f * 2, &y, 2);
    }
  }
  bool ok = dlcemu_memcpy_htod(t->dev, h, bytes) == 0;
  free(h);
  return ok;
}

static cJSON *download(const tensor *t) {
  size_t bytes = (size_t)(t->n ? t->n : 1) * (size_t)t->eb;
  unsigned char *h = malloc(bytes);
  cJSON *a = cJSON_CreateArray();
  if (!h || dlcemu_memcpy_dtoh(h, t->dev, bytes) != 0) {
    free(h);
    return a;
  }
  for (int64_t f = 0; f < t->n; f++) {
    double v;
    if (t->eb == 4) {
      float y;
      memcpy(&y, h + f * 4, 4);
      v = y;
    } else {
      uint16_t y;
      memcpy(&y, h + f * 2, 2);
      v = kt_to_f32(dlc_of(t->dt), y);
    }
    cJSON_AddItemToArray(a, v != v ? cJSON_CreateNull() : cJSON_CreateNumber(v));
  }
  free(h);
  return a;
}

/* Element `elem` of runtime attr `what` of the document's Frontend graph */
static bool attr_value(const cJSON *doc, const char *what, int elem, int64_t *v) {
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "frontend"), "graph");
  for (const cJSON *nd = g ? g->child : NULL; nd; nd = nd->next) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nd, "attrs"), what);
    if (cJSON_IsNumber(a)) return *v = (int64_t)a->valuedouble, true;
    if (cJSON_IsArray(a) && cJSON_GetArraySize(a) > elem && cJSON_IsNumber(cJSON_GetArrayItem(a, elem)))
      return *v = (int64_t)cJSON_GetArrayItem(a, elem)->valuedouble, true;
  }
  return false;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: oracle_emu OP < DOC\n");
    return 2;
  }
  size_t cap = 1 << 20, n = 0;
  char *text = malloc(cap);
  for (size_t r; text && (r = fread(text + n, 1, cap - n - 1, stdin)) > 0;) {
    n += r;
    if (n + 1 == cap) text = realloc(text, cap *= 2);
  }
  if (!text) return 2;
  text[n] = 0;
  cJSON *doc = cJSON_Parse(text);
  free(text);
  const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(doc, "dtype"), *bind = cJSON_GetObjectItemCaseSensitive(doc, "bind"),
              *ins = cJSON_GetObjectItemCaseSensitive(doc, "inputs"), *outs = cJSON_GetObjectItemCaseSensitive(doc, "outputs");
  if (!cJSON_IsString(dtype) || !cJSON_IsObject(bind) || !cJSON_IsArray(ins) || !cJSON_IsArray(outs) ||
      cJSON_GetArraySize(ins) + cJSON_GetArraySize(outs) > MAX_TENSORS) {
    fprintf(stderr, "oracle_emu: the document is not oracle_pb's\n");
    cJSON_Delete(doc);
    return 2;
  }
  const dlc__entry *e = NULL;
  for (int i = 0; i < dlc__nentries; i++)
    if (strcmp(dlc__entries[i].op, argv[1]) == 0) e = &dlc__entries[i];
  if (!e) {
    cJSON_Delete(doc);
    return skip("the library has no such op");
  }
  tensor ts[MAX_TENSORS];
  int nt = 0;
  for (const cJSON *j = ins->child; j; j = j->next, nt++)
    if (!read_tensor(j, false, &ts[nt])) nt = -100;
  for (const cJSON *j = outs->child; j && nt >= 0; j = j->next, nt++)
    if (!read_tensor(j, true, &ts[nt])) nt = -100;
  if (nt < 0) {
    fprintf(stderr, "oracle_emu: a tensor of the document is malformed\n");
    cJSON_Delete(doc);
    return 2;
  }
  /* the arguments' values from the document, then an instance that fixes
   * the same ones */
  dlc__arg_value args[64];
  int tensor_of[64];
  if (e->nargs > 64) return 2;
  for (int a = 0; a < e->nargs; a++) {
    const dlc__entry_arg *g = &e->args[a];
    tensor_of[a] = -1;
    args[a].i = 0;
    if (g->role == DLC__ARG_DIM) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(bind, g->what);
      if (!cJSON_IsNumber(v)) {
        cJSON_Delete(doc);
        return skip("a signature dim is not bound");
      }
      args[a].i = (int64_t)v->valuedouble;
    } else if (g->role == DLC__ARG_ATTR) {
      if (!attr_value(doc, g->what, g->elem, &args[a].i)) {
        cJSON_Delete(doc);
        return skip("a runtime attr is not in the graph");
      }
    } else {
      for (int t = 0; t < nt; t++)
        if (strcmp(ts[t].name, g->what) == 0) tensor_of[a] = t;
      if (tensor_of[a] < 0 || (g->role == DLC__ARG_LD && ts[tensor_of[a]].rank != 2)) {
        cJSON_Delete(doc);
        return skip("an argument names no tensor of the graph");
      }
      if (g->role == DLC__ARG_LD) args[a].i = ts[tensor_of[a]].shape[1];
    }
  }
  dlc_dtype dt = dlc_of(dtype->valuestring);
  const dlc__entry_instance *in = NULL;
  for (int i = 0; i < e->ninst && !in; i++) {
    const dlc__entry_instance *c = &e->inst[i];
    bool ok = c->dtype == dt && c->nbounds == 0;
    for (int f = 0; ok && f < c->nfixed; f++) ok = args[c->fixed[f].arg].i == c->fixed[f].value;
    if (ok) in = c;
  }
  if (!in) {
    cJSON_Delete(doc);
    return skip("no instance of this dtype fixes these dims and attrs");
  }
  for (int t = 0; t < nt; t++)
    if (!upload(&ts[t])) {
      fprintf(stderr, "oracle_emu: cannot allocate %s\n", ts[t].name);
      return 2;
    }
  for (int a = 0; a < e->nargs; a++)
    if (e->args[a].role == DLC__ARG_INPUT || e->args[a].role == DLC__ARG_OUTPUT)
      args[a].p = (void *)(uintptr_t)ts[tensor_of[a]].dev;
  dlcemu_set_limit(DLCEMU_LIMIT_CHECK_SHARED_RACES, 1);
  dlcemu_set_limit(DLCEMU_LIMIT_CHECK_UNINIT_SHARED, 1);
  dlc__launch_hook = on_launch;
  dlc_status st;
  dlcemu_deviceptr ws = 0;
  if (e->call_ws && in->workspace) {
    size_t bytes = e->workspace_size(dt, args);
    if (dlcemu_mem_alloc(&ws, bytes ? bytes : 1) != 0) return 2;
    st = e->call_ws(dt, args, (void *)(uintptr_t)ws, bytes, NULL);
  } else {
    st = e->call(dt, args);
  }
  if (st != DLC_SUCCESS) {
    fprintf(stderr, "oracle_emu: dlc_%s: %s: %s\n", e->op, dlc_status_string(st), dlc_last_error_detail());
    cJSON_Delete(doc);
    return 1;
  }
  cJSON *o = cJSON_CreateObject(), *ks = cJSON_AddArrayToObject(o, "kernels"), *tf = cJSON_AddArrayToObject(o, "tf32"),
        *res = cJSON_AddArrayToObject(o, "outputs");
  for (int l = 0; l < nlaunched && l < MAX_LAUNCHES; l++) {
    cJSON_AddItemToArray(ks, cJSON_CreateString(launched[l]->name));
    for (int r = 0; r < e->nkernels; r++)
      if (strcmp(e->kernels[r].name, launched[l]->name) == 0)
        for (int s = 0; s < 2; s++)
          if (e->kernels[r].tf32[s]) cJSON_AddItemToArray(tf, cJSON_CreateString(e->kernels[r].tf32[s]));
  }
  for (int t = 0; t < nt; t++) {
    if (!ts[t].out) continue;
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", ts[t].name);
    cJSON_AddItemToObject(x, "data", download(&ts[t]));
    cJSON_AddItemToArray(res, x);
  }
  char *s = cJSON_PrintUnformatted(o);
  puts(s);
  free(s);
  cJSON_Delete(o);
  for (int t = 0; t < nt; t++) dlcemu_mem_free(ts[t].dev);
  if (ws) dlcemu_mem_free(ws);
  cJSON_Delete(doc);
  return 0;
}
