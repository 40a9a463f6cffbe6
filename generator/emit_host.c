/* The host C dlcgen writes (see emit.h): the public header dlc_ops.h, the
 * parameter blocks of dlc_params.h, the op list dlc_ops.def, and
 * dlc_dispatch.c's argument checks, kernel selection and launch, and the
 * entry table dlc_entries.c.  The kernels' .cu is emit.c's. */
#include "emit_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "arch.h"
#include "skel/skel.h"
#include "strbuf.h"

/* ---- entry points -------------------------------------------------------------------- */

static const char *const ARG_ROLE_C[] = {"DLC__ARG_DIM", "DLC__ARG_ATTR", "DLC__ARG_INPUT", "DLC__ARG_OUTPUT",
                                         "DLC__ARG_LD"};

/* A tensor's shape as its graph writes it ("B,H,S,D"; the instances have
 * the variant-bound dims replaced by numbers), with the symbols that are not
 * signature dims named as derived ("[N,P,Q,K] (P, Q derived)"). */
const char *host_written_shape(arena *A, const emit_op *eo, const fe_tensor *t) {
  const fe_graph *g = eo->inst[0].fe;
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(eo->op->graph, "tensors");
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ts, t->name), "shape");
  const char *shape = "", *derived = "";
  int d = 0;
  for (const cJSON *e = sh ? sh->child : NULL; e; e = e->next, d++) {
    const char *v = cJSON_IsString(e) ? e->valuestring : arena_printf(A, "%lld", (long long)e->valuedouble);
    shape = arena_printf(A, "%s%s%s", shape, d ? "," : "", v);
    bool sig = !cJSON_IsString(e);
    for (int i = 0; i < g->ndims && !sig; i++) sig = strcmp(g->dims[i], v) == 0;
    if (!sig) derived = arena_printf(A, "%s%s%s", derived, *derived ? ", " : "", v);
  }
  if (d == t->rank) return *derived ? arena_printf(A, "[%s] (%s derived)", shape, derived) : arena_printf(A, "[%s]", shape);
  shape = "";
  for (d = 0; d < t->rank; d++) shape = arena_printf(A, "%s%s%s", shape, d ? "," : "", sx_str(A, t->shape[d]));
  return arena_printf(A, "[%s]", shape);
}

int host_entry_args(emit_ctx *c, const emit_op *eo, arg **out) {
  arena *A = c->A;
  const fe_graph *g = eo->inst[0].fe;
  int cap = 4 + g->ndims + 2 * g->nsig_attrs + 2 * (g->nin + g->nout), n = 0;
  arg *a = ARENA_ARRAY(A, arg, cap);
  for (int i = 0; i < g->ndims; i++) {
    const char *doc = arena_printf(A, "signature dim %s", g->dims[i]);
    for (int v = 0; v < eo->op->nvkeys; v++) {
      const mf_variant_key *vk = &eo->op->vkeys[v];
      if (!vk->is_dim || strcmp(vk->name, g->dims[i]) != 0) continue;
      doc = arena_printf(A, "%s, one of", doc);
      for (int j = 0; j < vk->nvalues; j++)
        doc = arena_printf(A, "%s%s %lld", doc, j ? "," : "", (long long)vk->values[j]->valuedouble);
      doc = arena_printf(A, "%s (compiled in)", doc);
    }
    a[n++] = (arg){lc(A, g->dims[i]), "int64_t", doc, ARG_DIM, g->dims[i], 0};
  }
  for (int i = 0; i < g->nsig_attrs; i++)
    for (int e = 0; e < 2; e++)
      a[n++] = (arg){arena_printf(A, "%s%d", lc(A, g->sig_attrs[i]), e), "int64_t",
                     arena_printf(A, "%s[%d]", g->sig_attrs[i], e), ARG_ATTR, g->sig_attrs[i], e};
  for (int io = 0; io < 2; io++) {
    int nt = io ? g->nout : g->nin;
    for (int i = 0; i < nt; i++) {
      const fe_tensor *t = &g->tensors[io ? g->outputs[i] : g->inputs[i]];
      const char *shape = host_written_shape(A, eo, t);
      a[n++] = (arg){lc(A, t->name), io ? "void *" : "const void *",
                     arena_printf(A, "%s %s %s, %s%s", io ? "output" : "input", t->name, shape,
                                  t->dt == DT_INT32 ? "int32 indices (one outside [0, size of the gathered axis) reads 0), " : "",
                                  t->rank == 2 ? "rows of ld elements" : "packed row-major"),
                     io ? ARG_OUTPUT : ARG_INPUT, t->name, 0};
      if (t->rank == 2)
        a[n++] = (arg){gpuir_ld_param(A, t->name), "int64_t",
                       arena_printf(A, "leading dimension of %s, in elements (>= max(1, %s))", t->name, sx_str(A, t->shape[1])),
                       ARG_LD, t->name, 0};
    }
  }
  *out = a;
  return n;
}

/* dlc_status fn(dtype, the arguments four a line, <tail>); entry_prototype:
 * the prototypes of dlc_<op><suffix>: dlc_<op>, dlc_<op>_ws and dlc_<op>_query. */
static void named_prototype(strbuf *s, const char *fn, const arg *a, int n, const char *tail) {
  sb_printf(s, "dlc_status %s(dlc_dtype dtype", fn);
  for (int i = 0; i < n; i++) sb_printf(s, ",%s%s%s%s", i % 4 == 0 ? "\n    " : " ", a[i].type,
                                        a[i].type[strlen(a[i].type) - 1] == '*' ? "" : " ", a[i].name);
  sb_printf(s, ",\n    %s)", tail);
}
static void entry_prototype(strbuf *s, const emit_op *eo, const char *suffix, const arg *a, int n, const char *tail) {
  strbuf fn = {0};
  sb_printf(&fn, "dlc_%s%s", eo->op->name, suffix);
  named_prototype(s, sb_str(&fn), a, n, tail);
  sb_free(&fn);
}

void host_prototype(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n) {
  (void)c;
  entry_prototype(s, eo, "", a, n, "struct CUstream_st *stream");
}

/* The shape arguments of an entry point: its dims and runtime attrs, the
 * int64 arguments before the first tensor. */
static int shape_args(const arg *a, int n) {
  int k = 0;
  while (k < n && (a[k].role == ARG_DIM || a[k].role == ARG_ATTR)) k++;
  return k;
}

static void workspace_prototype(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n) {
  sb_printf(s, "size_t dlc_%s_workspace_size(dlc_dtype dtype", eo->op->name);
  int ns = shape_args(a, n);
  for (int i = 0; i < ns; i++) sb_printf(s, ", %s %s", a[i].type, a[i].name);
  sb_puts(s, ")");
  (void)c;
}

static void prototype_ws(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n) {
  (void)c;
  entry_prototype(s, eo, "_ws", a, n, "void *workspace, size_t workspace_bytes, struct CUstream_st *stream");
}

/* dlc__ws_<op>: dlc_<op>_ws of a chain whose plan makes param conversions,
 * with dlc_pre: NULL for the call, the made values for a plan's run. */
static void ws_impl_prototype(strbuf *s, const emit_op *eo, const arg *a, int n) {
  strbuf fn = {0};
  sb_printf(&fn, "dlc__ws_%s", eo->op->name);
  sb_puts(s, "static ");
  named_prototype(s, sb_str(&fn), a, n, "void *workspace, size_t workspace_bytes, struct CUstream_st *stream, const void *const *dlc_pre");
  sb_free(&fn);
}

/* A doc comment of `text` wrapped at spaces to 110 columns: slash, two
 * stars and a space before the first line, " * " before the others. */
void host_doc_comment(strbuf *s, const char *text) {
  const char *p = text;
  for (bool first = true; *p; first = false) {
    size_t w = 106, n = strlen(p), cut = n;
    if (n > w) {
      cut = w;
      while (cut > 0 && p[cut] != ' ') cut--;
      if (!cut) cut = strcspn(p, " ");
    }
    sb_printf(s, "%s%.*s%s", first ? "/** " : " * ", (int)cut, p, cut == n ? " */\n" : "\n");
    p += cut;
    while (*p == ' ') p++;
  }
}

static void query_prototype(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n) {
  (void)c;
  entry_prototype(s, eo, "_query", a, n, "void *workspace, size_t workspace_bytes, dlc_launch_info *info");
}

char *emit_ops_h(emit_ctx *c) {
  strbuf s = {0};
  sb_printf(&s, "/* Generated by dlcgen %s from %s.  Do not edit.\n", DLC_VERSION, cmt(c->A, c->manifest_path));
  sb_puts(&s, " * The entry points of the kernels in this build of libdlckernels; include <dlc/dlc.h>. */\n");
  sb_puts(&s, "#ifndef DLC_OPS_H\n#define DLC_OPS_H\n\n#ifndef DLC_H\n#error \"include <dlc/dlc.h>, not dlc_ops.h\"\n#endif\n\n");
  sb_puts(&s, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  for (int o = 0; o < c->nops; o++) {
    const emit_op *eo = &c->ops[o];
    arg *a;
    int n = host_entry_args(c, eo, &a);
    sb_printf(&s, "/** %s", eo->op->name);
    sb_printf(&s, " (manifest ops[%d]).  dtypes:", eo->index);
    for (int d = 0; d < eo->op->ndtypes; d++) sb_printf(&s, " %s", dlc_dtype_enum(eo->op->dtypes[d]));
    sb_puts(&s, ".\n");
    const char *desc = catalog_description(c, eo), *konst = catalog_constants(c, eo);
    if (desc) sb_printf(&s, " * %s\n", cmt(c->A, desc));
    if (*konst) sb_printf(&s, " * Compile-time constants: %s.\n", cmt(c->A, konst));
    sb_puts(&s, " * Its variants, kernels by arch, shape buckets and limits: the operator catalogue (ops.md, ops.json).\n");
    for (int i = 0; i < n; i++) sb_printf(&s, " * @param %s %s\n", a[i].name, cmt(c->A, a[i].doc));
    sb_puts(&s, " * @param stream CUDA stream (NULL: the default stream; must be NULL with libdlckernels-emu)\n");
    sb_puts(&s, " * @return DLC_SUCCESS, or an error status with dlc_last_error_detail() saying why; every argument is\n"
                " * checked before anything is launched, also when the output is empty (see dlc.h). */\n");
    host_prototype(c, &s, eo, a, n);
    sb_puts(&s, ";\n\n");
    /* dlc_<op>_workspace_size and dlc_<op>_ws, documented by the op's kind */
    const char *on = eo->op->name, *size_doc, *ws_doc;
    if (has_split(eo)) {
      size_doc = arena_printf(c->A,
                              "the split-K partials of the plan dispatch picks when the workspace is large enough; 0 when "
                              "that plan needs none (or the dtype, dims or variant have no kernel, or the size overflows: "
                              "dlc_%s_query() tells these apart)", on);
      ws_doc = arena_printf(c->A,
                            "dlc_%s() with a caller's workspace (NULL and 0: none; else 256-byte aligned): with at least "
                            "dlc_%s_workspace_size() bytes, shapes whose plan splits K run it (a deterministic split-K: the "
                            "slices' fp32 partials are summed in a fixed order); with fewer, the plan that needs none. "
                            "dlc_%s() is this with no workspace.", on, on, on);
    } else if (is_chain(eo) && eo->ngiven) {
      size_doc = arena_printf(c->A,
                              "what its faster plan needs (the layout pass's converted operands, 256-byte aligned); 0 when "
                              "the dtype, dims or variant have no kernel or the size overflows (dlc_%s_query() tells these "
                              "apart)", on);
      ws_doc = arena_printf(c->A,
                            "dlc_%s() with a caller's workspace (NULL and 0: none; else 256-byte aligned): with at least "
                            "dlc_%s_workspace_size() bytes the op runs as several kernels (the layout pass's conversions "
                            "into the workspace, then the op on the converted operands); with fewer, as one kernel that "
                            "loads its operands in their stored layouts. dlc_%s() is this with no workspace.", on, on, on);
    } else if (is_chain(eo)) {
      size_doc = arena_printf(c->A,
                              "what it needs (each value between the op's kernels, 256-byte aligned); 0 when the dtype, "
                              "dims or variant have no kernel or the size overflows (dlc_%s_query() tells these apart)", on);
      ws_doc = arena_printf(c->A,
                            "dlc_%s() with a workspace of at least dlc_%s_workspace_size() bytes, 256-byte aligned: the op "
                            "runs as several kernels, and the values between them live there.", on, on);
    } else {
      size_doc = "0, as no plan of this build uses one (a later build's may: size it with this, and the call stays the "
                 "same)";
      ws_doc = arena_printf(c->A,
                            "dlc_%s() with a caller's workspace (NULL and 0: none; else 256-byte aligned, and it shares no "
                            "byte with an output or input): this build's plans use none, so it runs as dlc_%s() does.", on,
                            on);
    }
    host_doc_comment(&s, arena_printf(c->A, "The workspace dlc_%s_ws() can use for these shapes, in bytes: %s.", on, size_doc));
    workspace_prototype(c, &s, eo, a, n);
    sb_puts(&s, ";\n\n");
    host_doc_comment(&s, ws_doc);
    prototype_ws(c, &s, eo, a, n);
    sb_puts(&s, ";\n\n");
    sb_printf(&s, "/** A dry run of dlc_%s_ws() with these arguments (workspace NULL and 0: of dlc_%s()): every\n"
                  " * check and the kernel choice of the call on the current device, and nothing launched.  Returns\n"
                  " * the status the call would return (with its dlc_last_error_detail()) and on DLC_SUCCESS fills\n"
                  " * *info with what it would launch (see dlc_launch_info); on failure *info is zeroed. */\n",
              eo->op->name, eo->op->name);
    query_prototype(c, &s, eo, a, n);
    sb_puts(&s, ";\n\n");
    plan_prototypes_h(c, &s, eo, a, n);
  }
  sb_puts(&s, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
  return sb_take(&s);
}

char *emit_params_h(emit_ctx *c) {
  arena *A = c->A;
  strbuf s = {0};
  sb_printf(&s, "/* Generated by dlcgen %s from %s.  Do not edit.\n", DLC_VERSION, cmt(A, c->manifest_path));
  sb_puts(&s, " * The parameter block each op's kernels take (one by-value struct), shared by the\n"
              " * host dispatch (C) and the kernels (CUDA). */\n");
  sb_puts(&s, "#ifndef DLC_PARAMS_H\n#define DLC_PARAMS_H\n\n#include <stdint.h>\n\n");
  bool any_tma = false;
  for (int o = 0; o < c->nops; o++)
    for (int i = 0; i < c->ops[o].ninst; i++)
      any_tma |= c->ops[o].inst[i].k->sm90a != NULL && tmaps90(c->ops[o].inst[i].k->sm90a);
  if (any_tma)
    sb_puts(&s, "/* A CUtensorMap: 128 opaque bytes, 64-byte aligned, as cuTensorMapEncodeTiled\n"
                " * (and dlcemu_tensor_map_encode_tiled) fill it. */\n"
                "typedef struct dlc__tmap {\n  __attribute__((aligned(64))) uint64_t opaque[16];\n} dlc__tmap;\n\n");
  for (int o = 0; o < c->nops; o++) {
    const emit_op *eo = &c->ops[o];
    arg *a;
    int n = host_entry_args(c, eo, &a);
    sb_printf(&s, "typedef struct dlc__p_%s {\n", eo->op->name);
    for (int i = 0; i < n; i++) sb_printf(&s, "  %s%s%s;\n", a[i].type, a[i].type[strlen(a[i].type) - 1] == '*' ? "" : " ", a[i].name);
    chain_val cv[16];
    int ncv = chain_vals(eo, &eo->inst[0], cv, 16);
    if (ncv) sb_puts(&s, "  /* the values between the chain's kernels, in the caller's workspace */\n");
    for (int i = 0; i < ncv; i++) {
      sb_printf(&s, "  void *%s;\n", lc(A, cv[i].m->name));
      if (cv[i].m->rank == 2) sb_printf(&s, "  int64_t %s;\n", gpuir_ld_param(A, cv[i].m->name));
    }
    if (has_split(eo))
      sb_puts(&s, "  /* split-K: the caller's workspace (fp32 partial tiles), k-tiles a slice, slices */\n"
                  "  void *dlc_split_ws;\n  int32_t dlc_split_ktp, dlc_split_n;\n");
    sb_printf(&s, "} dlc__p_%s;\n\n", eo->op->name);
    bool tma = false, att = false;
    for (int i = 0; i < eo->ninst; i++) tma |= eo->inst[i].k->sm90a != NULL && tmaps90(eo->inst[i].k->sm90a);
    for (int i = 0; i < eo->ninst; i++) att |= eo->inst[i].k->sm90a != NULL && skel_shape_of(eo->inst[i].k->sm90a) == SKEL_ATTENTION;
    if (att)
      sb_printf(&s,
                "/* The sm90a kernels' parameter block: the tensor maps of Q, K and V, encoded\n"
                " * per call by the backend (dlc__tmap_encode_nd), then the op's. */\n"
                "typedef struct dlc__tp_%s {\n  dlc__tmap tmap_q;\n  dlc__tmap tmap_k;\n  dlc__tmap tmap_v;\n"
                "  dlc__p_%s p;\n} dlc__tp_%s;\n\n",
                eo->op->name, eo->op->name, eo->op->name);
    else if (tma)
      sb_printf(&s,
                "/* The sm90a kernels' parameter block: the tensor maps of A and B, encoded\n"
                " * per call by the backend (dlc__tmap_encode_2d), then the op's. */\n"
                "typedef struct dlc__tp_%s {\n  dlc__tmap tmap_a;\n  dlc__tmap tmap_b;\n  dlc__p_%s p;\n} dlc__tp_%s;\n\n",
                eo->op->name, eo->op->name, eo->op->name);
  }
  (void)A;
  sb_puts(&s, "#endif\n");
  return sb_take(&s);
}

char *emit_ops_def(emit_ctx *c) {
  strbuf s = {0};
  sb_printf(&s, "/* Generated by dlcgen %s from %s.  Do not edit.\n", DLC_VERSION, cmt(c->A, c->manifest_path));
  sb_puts(&s, " * X(index, op): the ops whose kernels this library holds, for the runtime backends. */\n");
  for (int o = 0; o < c->nops; o++) sb_printf(&s, "X(%d, %s)\n", o, c->ops[o].op->name);
  return sb_take(&s);
}

/* ---- dispatch --------------------------------------------------------------------------- */

static const char *arch_mask(emit_ctx *c) {
  const char *m = "";
  for (int i = 0; i < c->m->narchs; i++) {
    dlc_arch a;
    if (!arch_parse(c->m->archs[i], &a)) {
      /* the manifest reader accepts only arch.def's names */
      diag_report(c->dl, D_INTERNAL, "dispatch", NULL, "arch '%s' has no dispatch bit", c->m->archs[i]);
      continue;
    }
    m = arena_printf(c->A, "%s%s%s", m, *m ? " | " : "", arch_dispatch_bit(a));
  }
  return *m ? m : "0";
}

/* Host-side sx: params are the entry's arguments, already in dlc_p;
 * checked arithmetic (h_sx). */
static char *hsx(arena *A, const sx *x) {
  char *t = sxc(A, x, true);
  return t;
}

/* An sx whose host C is overflow-free as written: a constant or one param. */
static bool h_plain(const sx *x) {
  if (x->nterms == 0) return true;
  return x->nterms == 1 && x->c0 == 0 && x->terms[0].coef == 1 && x->terms[0].atom->kind == SXA_PARAM;
}

/* "x is a multiple of w", checked */
static const char *h_divisible(arena *A, const sx *x, int w) {
  if (h_plain(x)) return arena_printf(A, "%s %% %d == 0", hsx(A, x), w);
  return arena_printf(A, "dlc__divisible(%s, %d)", hsx(A, x), w);
}

/* sx text for a detail string: lower-case names (the arguments' spelling),
 * escaped for a C string literal that is a printf format. */
static const char *h_text(arena *A, const sx *x) {
  const char *t = sx_str(A, x);
  strbuf b = {0};
  for (const char *p = t; *p; p++) {
    if (*p == '%') sb_puts(&b, "%%");
    else if (*p == '"' || *p == '\\') sb_printf(&b, "\\%c", *p);
    else if (*p >= 'A' && *p <= 'Z') sb_printf(&b, "%c", *p - 'A' + 'a');
    else sb_printf(&b, "%c", *p);
  }
  char *r = arena_strdup(A, sb_str(&b));
  sb_free(&b);
  return r;
}

/* The params an sx reads, as " with h = %lld, w = %lld" and the matching
 * printf arguments (each param once: `seen` holds those written). */
typedef struct h_param_list {
  const char *with, *vals;
  int n, cap;
  const char **seen;
} h_param_list;
static void h_params_atom(arena *A, const sx_atom *a, h_param_list *l);
static void h_params(arena *A, const sx *x, h_param_list *l) {
  for (int i = 0; i < x->nterms; i++) h_params_atom(A, x->terms[i].atom, l);
}
static void h_params_atom(arena *A, const sx_atom *a, h_param_list *l) {
  switch (a->kind) {
  case SXA_PARAM: {
    const char *nm = lc(A, a->name);
    for (int i = 0; i < l->n; i++)
      if (strcmp(l->seen[i], nm) == 0) return;
    ARENA_PUSH(A, l->seen, l->n, l->cap, nm);
    l->with = arena_printf(A, "%s%s%s = %%lld", l->with, *l->with ? ", " : " with ", nm);
    l->vals = arena_printf(A, "%s, (long long)dlc_p->%s", l->vals, nm);
    return;
  }
  case SXA_FLOOR: h_params(A, a->a, l); return;
  case SXA_PROD:
    for (int i = 0; i < a->nf; i++) h_params_atom(A, a->f[i], l);
    return;
  case SXA_FDIVSYM:
  case SXA_MODSYM: h_params(A, a->a, l), h_params(A, a->b, l); return;
  default: return;
  }
}

/* An instance's tensor checks, in argument order: dims (derived ones
 * checked here, naming the expression), then dlc__check_rows or
 * dlc__check_packed for leading dims, spans, NULL and element alignment,
 * then dlc__check_disjoint (no output shares memory with another tensor or
 * the workspace); an empty output returns DLC_SUCCESS only after all of
 * them. */
static void dispatch_tensors(arena *A, strbuf *s, const fe_graph *g, const emit_instance *in, const char *on, bool ws,
                             bool decl_st) {
  int maxrank = 1;
  bool packed = false;
  for (int t = 0; t < g->nin + g->nout; t++) {
    const fe_tensor *ft = &g->tensors[t < g->nin ? g->inputs[t] : g->outputs[t - g->nin]];
    if (ft->rank > maxrank) maxrank = ft->rank;
    packed |= ft->rank != 2;
  }
  if (decl_st) sb_puts(s, "    dlc_status dlc_st;\n");
  sb_printf(s, "    dlc__span dlc_sp[%d];\n    int64_t dlc_work = 0", g->nin + g->nout);
  if (packed) sb_printf(s, ", dlc_dims[%d]", maxrank);
  sb_puts(s, ";\n");
  for (int t = 0; t < g->nin + g->nout; t++) {
    bool out_t = t >= g->nin;
    const fe_tensor *ft = &g->tensors[out_t ? g->outputs[t - g->nin] : g->inputs[t]];
    const char *nm = lc(A, ft->name);
    /* the instance's graph has its own (bound) shapes; outputs take the
     * shape rule's (derived symbols such as P are not arguments) */
    dtype idt;
    int irank;
    const sx *const *ishape;
    int it = fe_find_tensor(in->fe, ft->name);
    fe_tensor_value(in->fe, it, &idt, &irank, &ishape);
    int eb = dtype_bytes(in->fe->tensors[it].dt); /* as declared: an output is stored as T */
    const char **dim = ARENA_ARRAY(A, const char *, irank ? irank : 1);
    for (int d = 0; d < irank; d++) {
      dim[d] = hsx(A, ishape[d]);
      if (irank != 2) sb_printf(s, "    dlc_dims[%d] = %s;\n", d, dim[d]), dim[d] = arena_printf(A, "dlc_dims[%d]", d);
      if (!h_plain(ishape[d])) {
        if (irank == 2) sb_printf(s, "    const int64_t dlc_%s%d = %s;\n", nm, d, dim[d]), dim[d] = arena_printf(A, "dlc_%s%d", nm, d);
        h_param_list pl = {"", "", 0, 0, NULL};
        h_params(A, ishape[d], &pl);
        sb_printf(s,
                  "    if (%s < 0) return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s: axis %d of %s, %s, is negative or "
                  "overflows "
                  "int64%s\"%s);\n",
                  dim[d], on, d, nm, h_text(A, ishape[d]), pl.with, pl.vals);
      }
    }
    const char *cnt = arena_printf(A, "&dlc_sp[%d]", t);
    if (irank == 2)
      sb_printf(s, "    if ((dlc_st = dlc__check_rows(\"%s\", \"%s\", dlc_p->%s, %d, %s, %s, dlc_p->ld%s, %s))) return dlc_st;\n", on,
                nm, nm, eb, dim[0], dim[1], nm, cnt);
    else
      sb_printf(s, "    if ((dlc_st = dlc__check_packed(\"%s\", \"%s\", dlc_p->%s, %d, %d, dlc_dims, %s))) return dlc_st;\n", on,
                nm, nm, eb, irank, cnt);
    if (out_t) sb_printf(s, "    if (dlc_sp[%d].count > 0) dlc_work = 1;\n", t);
  }
  sb_printf(s, "    if ((dlc_st = dlc__check_disjoint(\"%s\", dlc_sp, %d, %d, %s))) return dlc_st;\n", on, g->nin, g->nin + g->nout,
            ws ? "workspace, workspace_bytes" : "NULL, 0");
  sb_puts(s, "    if (!dlc_work) return DLC_SUCCESS; /* every output is empty: nothing to launch */\n");
}

const char *host_grid_what(const gpu_kernel *k, int d) {
  static const char *const att[3] = {"query tiles", "batch x heads", ""}, *const other[3] = {"M tiles x N tiles", "", "batch"};
  return (skel_shape_of(k) == SKEL_ATTENTION ? att : other)[d];
}

/* The chunk width: the widest whose alignment every operand meets.  Every
 * pointer is element-aligned by now, so width 1 always fits. */
static void dispatch_width(arena *A, strbuf *s, const gpu_kernel *k, const char *on, bool decl) {
  if (skel_shape_of(k) == SKEL_ROWS) {
    /* one kernel: each vector access tests its own alignment */
    sb_printf(s, "    %sdlc_vec = %d;\n", decl ? "const int " : "", k->vecs[0]);
    return;
  }
  if (decl) sb_puts(s, "    int dlc_vec = 0;\n");  /* else the entry point's, 0 */
  for (int v = 0; v < k->nvec; v++) {
    int w = k->vecs[v];
    if (w == 1) {
      sb_puts(s, "    if (!dlc_vec) dlc_vec = 1;\n");
      continue;
    }
    strbuf cond = {0};
    for (int side = 0; side < gpuir_width_sides(k); side++) {
      const gpu_operand *o;
      const gpu_view *gv;
      const region_memref *m = gpuir_width_operand(k, side, &o, &gv);
      int eb = dtype_bytes(m->dt);
      sb_printf(&cond, "%sdlc__aligned(dlc_p->%s, %d)", side ? " && " : "", lc(A, m->name), w * eb);
      for (int d = 0; d < m->rank - 1; d++) {
        const sx *st = gpuir_stride(A, m, d);
        int64_t cst;
        if (!sx_is_int(st, &cst) || cst % w) sb_printf(&cond, " && %s", h_divisible(A, st, w));
      }
      /* a chunk must not cross into the next index of a flattened group */
      int ng = o->k_contig ? gv->nk : (side == 0 ? gv->nm : gv->nn);
      if (o->contig_axis >= 0 && ng > 1)
        sb_printf(&cond, " && %s", h_divisible(A, gv->r->it[o->contig_axis].size, w));
    }
    sb_printf(s, "    if (!dlc_vec && %s) dlc_vec = %d;\n", sb_str(&cond), w);
    sb_free(&cond);
  }
  if (k->vecs[k->nvec - 1] != 1)
    sb_printf(s,
              "    if (!dlc_vec) return dlc__fail(DLC_ERROR_MISALIGNED, \"%s: the operands must be aligned to chunks of %d "
              "elements\");\n",
              on, k->vecs[k->nvec - 1]);
}

/* The 32-bit K parts of the walking operands (gpu_operand.kpart32): the
 * steady loop's kernels add them to the chunk pointers in 32 bits, so a call
 * whose K-part span in bytes passes INT32_MAX takes the widest kernel off
 * the steady loop (gpu_kernel.kpart32_fallback), whose chunk functions form
 * 64-bit addresses.  Each distinct span of an entry point is checked by one
 * static function, dlc__kpart_fits_<op>[_i] (kpart_fns), which every
 * instance's case calls after the sm90a kernel's pick (that kernel keeps no
 * K part). */
static const char *kpart_bytes(arena *A, const gpu_kernel *k, const gpu_operand *o) {
  return hsx(A, sx_scale(A, o->kspan, dtype_bytes(k->r->in[o->input].dt)));
}

/* The distinct span checks of entry point eo, in order of first use. */
static int kpart_exprs(arena *A, const emit_op *eo, const char **ex, const char **what, int max) {
  int n = 0;
  for (int i = 0; i < eo->ninst; i++)
    for (const gpu_kernel *k = eo->inst[i].k; k; k = k->next)
      for (int side = 0; side < 2 && k->kpart32_fallback && skel_shape_of(k) == SKEL_CONTRACTION; side++) {
        const gpu_operand *o = side ? &k->B : &k->A;
        if (!o->kpart32) continue;
        const char *b = kpart_bytes(A, k, o);
        int j = 0;
        while (j < n && strcmp(ex[j], b)) j++;
        if (j < n || n == max) continue;
        what[n] = arena_printf(A, "%s's K part %s, 32-bit in the steady loop's kernels: whether\n * its span, %s elements of %d bytes,",
                               o->tensor, sx_str(A, o->koff), sx_str(A, o->kspan), dtype_bytes(k->r->in[o->input].dt));
        ex[n++] = b;
      }
  return n;
}

#define KPART_MAX 8

static const char *kpart_fn_name(arena *A, const emit_op *eo, int i, int n) {
  return n == 1 ? arena_printf(A, "dlc__kpart_fits_%s", eo->op->name) : arena_printf(A, "dlc__kpart_fits_%s_%d", eo->op->name, i);
}

/* The span checks' functions, once for the entry point. */
static void kpart_fns(arena *A, strbuf *s, const emit_op *eo) {
  const char *ex[KPART_MAX], *what[KPART_MAX];
  int n = kpart_exprs(A, eo, ex, what, KPART_MAX);
  for (int i = 0; i < n; i++)
    sb_printf(s,
              "/* %s fits int32 bytes */\n"
              "static int %s(const dlc__p_%s *dlc_p) {\n"
              "  const int64_t dlc_ks = %s;\n"
              "  return dlc_ks != DLC__OVF && dlc_ks <= 2147483647;\n"
              "}\n",
              what[i], kpart_fn_name(A, eo, i, n), eo->op->name, ex[i]);
}

static void dispatch_kpart32(arena *A, strbuf *s, const emit_op *eo, const gpu_kernel *k) {
  if (!k->kpart32_fallback || skel_shape_of(k) != SKEL_CONTRACTION) return;
  const char *ex[KPART_MAX], *what[KPART_MAX];
  int n = kpart_exprs(A, eo, ex, what, KPART_MAX);
  for (int side = 0; side < 2; side++) {
    const gpu_operand *o = side ? &k->B : &k->A;
    if (!o->kpart32) continue;
    const char *b = kpart_bytes(A, k, o);
    int j = 0;
    while (j < n && strcmp(ex[j], b)) j++;
    if (j == n) {
      /* more distinct spans than KPART_MAX: checked in place */
      sb_printf(s,
                "    if (dlc_vec >= %d) {\n      const int64_t dlc_ks = %s;\n"
                "      if (dlc_ks == DLC__OVF || dlc_ks > 2147483647) dlc_vec = %d;\n    }\n",
                k->steady_min_vec, b, k->kpart32_fallback);
      continue;
    }
    sb_printf(s, "    if (dlc_vec >= %d && !%s(dlc_p)) dlc_vec = %d;  /* %s's K part: 64-bit addresses */\n",
              k->steady_min_vec, kpart_fn_name(A, eo, j, n), k->kpart32_fallback, o->tensor);
  }
}

/* The grid, from the GPU IR with checked arithmetic, against the device limits. */
static void dispatch_grid(arena *A, strbuf *s, const fe_graph *g, const gpu_kernel *k, const char *on, bool chain) {
  const char *dfmt = "", *dargs = "";
  for (int d = 0; d < g->ndims; d++) {
    dfmt = arena_printf(A, "%s%s%s = %%lld", dfmt, d ? ", " : "", lc(A, g->dims[d]));
    dargs = arena_printf(A, "%s, (long long)dlc_p->%s", dargs, lc(A, g->dims[d]));
  }
  const char *gx = k->grid_tiles[0] ? arena_printf(A, "dlc__mul(%s, %s)", hsx(A, k->grid_tiles[0]), hsx(A, k->grid_tiles[1]))
                               : hsx(A, k->grid[0]);
  sb_printf(s, "    const int64_t dlc_gx = %s, dlc_gy = %s, dlc_gz = %s;\n", gx, hsx(A, k->grid[1]), hsx(A, k->grid[2]));
  sb_printf(s,
            "    if (dlc_gx == DLC__OVF || dlc_gy == DLC__OVF || dlc_gz == DLC__OVF)\n"
            "      return dlc__fail(DLC_ERROR_NOT_SUPPORTED, \"%s: the launch grid overflows int64 with %s\"%s);\n",
            on, dfmt, dargs);
  /* each limit named, with what the kernel puts on that dimension */
  static const char *const lim[3] = {"2147483647", "65535", "65535"};
  const char *what[3];
  for (int d = 0; d < 3; d++) what[d] = host_grid_what(k, d);
  for (int d = 0; d < 3; d++) {
    int64_t v;
    if (sx_is_int(k->grid[d], &v) && v <= (d ? 65535 : 2147483647)) continue; /* fits (gpuir_build checked it) */
    sb_printf(s,
              "    if (dlc_g%c > %s)\n"
              "      return dlc__fail(DLC_ERROR_NOT_SUPPORTED, \"%s: the launch grid needs %%lld blocks on %c (%s); "
              "CUDA's limit is %s\", (long long)dlc_g%c);\n",
              "xyz"[d], lim[d], on, "xyz"[d], what[d], lim[d], "xyz"[d]);
  }
  /* the contraction kernels count k-tiles and K counters in 32 bits */
  if (skel_shape_of(k) == SKEL_CONTRACTION) {
    const sx *kx = sx_int(A, 1);
    for (int i = 0; i < k->v.nk; i++) kx = sx_mul(A, kx, k->r->it[k->v.k_axes[i]].size);
    sb_printf(s, "    const int64_t dlc_kx = %s;\n", hsx(A, kx));
    sb_printf(s,
              "    if (dlc_kx == DLC__OVF || dlc_kx > 2147483647 - %d)\n"
              "      return dlc__fail(DLC_ERROR_NOT_SUPPORTED, \"%s: a reduction of %%lld elements exceeds 2^31 - %d (the "
              "kernels count k in 32 bits)\", (long long)dlc_kx);\n",
              k->plan.tile[2], on, k->plan.tile[2]);
  }
  /* a chain's kernel may have nothing to do (an empty value between kernels) */
  if (!chain)
    sb_printf(s,
              "    if (dlc_gx < 1 || dlc_gy < 1 || dlc_gz < 1)\n"
              "      return dlc__fail(DLC_ERROR_INTERNAL, \"%s: the launch grid (%%lld, %%lld, %%lld) is empty for a non-empty "
              "output\", (long long)dlc_gx, (long long)dlc_gy, (long long)dlc_gz);\n",
              on);
}

/* Appends each line of `text` to s, `prefix` before it (a generated block
 * moved into a deeper scope). */
static void put_indented(strbuf *s, const char *text, const char *prefix) {
  for (const char *l = text; *l;) {
    const char *e = strchr(l, '\n');
    if (!e) e = l + strlen(l);
    sb_printf(s, "%s%.*s\n", prefix, (int)(e - l), l);
    l = *e ? e + 1 : e;
  }
}

/* An sm90a kernel's grid (dispatch_grid, indented by ind) and its launch
 * with the parameter block params ("pointer, size"), one level deeper. */
static void grid_and_launch(arena *A, strbuf *s, const fe_graph *g, const gpu_kernel *k, const char *on,
                            const char *ind, const char *params) {
  strbuf gb = {0};
  dispatch_grid(A, &gb, g, k, on, false);
  put_indented(s, sb_str(&gb), ind);
  sb_free(&gb);
  /* the instance's sm90a kernel, from dlc__k90_<op>: the same text for
   * every instance, so that instances of one kernel text share a case */
  sb_printf(s,
            "%s    return dlc__launch(&dlc__k_%s[dlc__k90_%s[dlc_inst]], %s, (unsigned)dlc_gx, (unsigned)dlc_gy, "
            "(unsigned)dlc_gz, stream);\n",
            ind, on, on, params);
}

/* The end of an sm90a kernel's dispatch once its tensor maps encoded: the
 * grid and the launch with dlc_tp; else (the maps' `if` closed here) the
 * encoder's detail is dropped and the call goes on to the other kernels. */
static void launch_with_tmaps(arena *A, strbuf *s, const fe_graph *g, const gpu_kernel *k, const char *on) {
  grid_and_launch(A, s, g, k, on, "    ", "&dlc_tp, sizeof dlc_tp");
  sb_printf(s, "      }\n      dlc__clear_detail();\n    }\n");
}

/* An instance's sm90a kernel (gpu_kernel.sm90a, the dispatch table's row
 * `row`): on an sm90a device, when the tensor maps of both operands encode
 * (16-byte aligned rows, nonzero dims), it runs with them; any other call
 * goes on to the instance's other kernels below. */
static void dispatch_sm90a(arena *A, strbuf *s, const fe_graph *g, const gpu_kernel *k, const char *on) {
  const region *r = k->r;
  const char *M = hsx(A, r->it[k->v.m_axes[0]].size), *N = hsx(A, r->it[k->v.n_axes[0]].size),
             *K = hsx(A, r->it[k->v.k_axes[0]].size);
  const char *ta = k->A.tensor, *tb = k->B.tensor;
  int BM = k->plan.tile[0], BN = k->plan.tile[1], BK = k->plan.tile[2];
  sb_printf(s, "    if (dlc__device_arch() == DLC__ARCH_SM90A) {\n");
  sb_printf(s, "      /* the sm90a kernel (tma_wgmma): its tensor maps, else the kernels below */\n");
  sb_printf(s, "      dlc__tp_%s dlc_tp;\n      dlc_tp.p = *dlc_p;\n", on);
  sb_printf(s, "      if (dlc__tmap_encode_2d(&dlc_tp.tmap_a, dtype, dlc_p->%s, %s, %s, dlc_p->%s, %d, %d) == DLC_SUCCESS &&\n",
            lc(A, ta), K, M, gpuir_ld_param(A, ta), BK, BM);
  if (k->B.k_contig)
    sb_printf(s, "          dlc__tmap_encode_2d(&dlc_tp.tmap_b, dtype, dlc_p->%s, %s, %s, dlc_p->%s, %d, %d) == DLC_SUCCESS) {\n",
              lc(A, tb), K, N, gpuir_ld_param(A, tb), BK, BN);
  else
    sb_printf(s, "          dlc__tmap_encode_2d(&dlc_tp.tmap_b, dtype, dlc_p->%s, %s, %s, dlc_p->%s, 64, %d) == DLC_SUCCESS) {\n",
              lc(A, tb), N, K, gpuir_ld_param(A, tb), BK);
  launch_with_tmaps(A, s, g, k, on);
}

/* An instance's sm90a attention kernel (wgmma_softmax, the dispatch table's
 * row `row`): on an sm90a device, when the tensor maps of Q, K and V all
 * encode (gpu_tmap: each tensor as stored, innermost dim first; 16-byte
 * aligned bases and strides, dims the kernel's int32 coordinates reach), it
 * runs with them; any other call goes on to the instance's sm80 kernels. */
static void dispatch_sm90a_attention(arena *A, strbuf *s, const fe_graph *g, const gpu_kernel *k, const char *on) {
  const gpu_tmap *all[3] = {&k->tmq, &k->tmk, &k->tmv};
  const char *nm[3] = {"q", "k", "v"};
  sb_printf(s, "    if (dlc__device_arch() == DLC__ARCH_SM90A) {\n");
  sb_printf(s, "      /* the sm90a kernel (%s): the tensor maps of %s, %s and %s, else the kernels below */\n", algo_name(k->algo),
            k->tmq.tensor, k->tmk.tensor, k->tmv.tensor);
  sb_printf(s, "      dlc__tp_%s dlc_tp;\n      dlc_tp.p = *dlc_p;\n", on);
  for (int i = 0; i < 3; i++) {
    const gpu_tmap *tm = all[i];
    const char *dims = "", *strides = "", *box = "";
    for (int j = 0; j < tm->rank; j++) {
      int d = tm->rank - 1 - j;
      dims = arena_printf(A, "%s%s%s", dims, j ? ", " : "", hsx(A, tm->m->shape[d]));
      if (j) strides = arena_printf(A, "%s%s%s", strides, j > 1 ? ", " : "", hsx(A, gpuir_stride(A, tm->m, d)));
      box = arena_printf(A, "%s%s%d", box, j ? ", " : "", j == 0 ? 64 : d == tm->row_dim ? tm->rows : 1);
    }
    sb_printf(s, "      const int64_t dlc_%sd[%d] = {%s}, dlc_%ss[%d] = {%s};\n", nm[i], tm->rank, dims, nm[i],
              tm->rank - 1, strides);
    sb_printf(s, "      const int dlc_%sb[%d] = {%s};\n", nm[i], tm->rank, box);
  }
  for (int i = 0; i < 3; i++)
    sb_printf(s, "      %sdlc__tmap_encode_nd(&dlc_tp.tmap_%s, dtype, dlc_p->%s, %d, dlc_%sd, dlc_%ss, dlc_%sb) == DLC_SUCCESS%s\n",
              i ? "    " : "if (", nm[i], lc(A, all[i]->tensor), all[i]->rank, nm[i], nm[i], nm[i], i == 2 ? ") {" : " &&");
  launch_with_tmaps(A, s, g, k, on);
}

/* An instance's sm90a kernel with the gathering producer (algo_choice cp_async_wgmma):
 * after the width choice, on an sm90a device, when the widest chunks (16
 * bytes) were chosen, it runs with the op's parameters; any other call goes
 * on to the instance's other kernels. */
static void dispatch_sm90a_gather(arena *A, strbuf *s, const fe_graph *g, const gpu_kernel *k, const char *on) {
  sb_printf(s, "    if (dlc_vec == %d && dlc__device_arch() == DLC__ARCH_SM90A) {\n", k->vecs[0]);
  sb_printf(s, "      /* the sm90a kernel (%s): 16-byte chunks, as the widest kernel below */\n", algo_name(k->algo));
  grid_and_launch(A, s, g, k, on, "  ", "dlc_p, sizeof *dlc_p");
  sb_printf(s, "    }\n");
}

/* The dispatch of each sm90a skeleton's kernel, by its algo: every algo
 * of an `only` skeleton (skel_ops.only: the pipeline plans it for sm90a) has one. */
typedef void (*dispatch90_fn)(arena *A, strbuf *s, const fe_graph *g, const gpu_kernel *k, const char *on);
static const dispatch90_fn DISPATCH90[ALGO__COUNT] = {
    [ALGO_TMA_WGMMA] = dispatch_sm90a,
    [ALGO_CPASYNC_WGMMA] = dispatch_sm90a_gather,
    [ALGO_WGMMA_SOFTMAX] = dispatch_sm90a_attention,
};

/* The instance of the call: dtype, runtime-attr and compile-time dim values. */
static void inst_match(emit_ctx *c, strbuf *s, const emit_op *eo) {
  arena *A = c->A;
  for (int i = 0; i < eo->ninst; i++) {
    const emit_instance *in = &eo->inst[i];
    sb_printf(s, "  if (dlc_inst < 0 && dtype == %s", dlc_dtype_enum(in->dt));
    for (const cJSON *v = in->attr_values ? in->attr_values->child : NULL; v; v = v->next) {
      for (int e = 0; e < 2; e++) {
        double val = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, e)->valuedouble : v->valuedouble;
        sb_printf(s, " && dlc_p->%s%d == %lld", lc(A, v->string), e, (long long)val);
      }
    }
    for (const cJSON *v = in->dim_values ? in->dim_values->child : NULL; v; v = v->next)
      sb_printf(s, " && dlc_p->%s == %lld", lc(A, v->string), (long long)v->valuedouble);
    sb_printf(s, ") dlc_inst = %d;\n", i);
  }
}

/* A chain's workspace: an arena (dlc__arena_place) in which each value
 * between its kernels, 256-byte aligned, takes bytes that no value live
 * at the same time takes.  Prints each value's bytes dlc_wb[i] and offset
 * dlc_off[i], and the total dlc_ws over dlc_p (DLC__OVF on overflow); the
 * values of param conversions pc[0..npc) take none when dlc_pre is set (a
 * plan's run: its ConstPool holds them). */
static void chain_layout(arena *A, strbuf *s, const emit_op *eo, const emit_instance *in, const char *indent,
                         const ws_param_conv *pc, int npc) {
  chain_val cv[16];
  int ncv = chain_vals(eo, in, cv, 16);
  if (!ncv) {
    sb_printf(s, "%sint64_t dlc_ws = 0, dlc_off[1];\n", indent);
    return;
  }
  sb_printf(s, "%sint64_t dlc_ws, dlc_off[%d], dlc_wb[%d];\n", indent, ncv, ncv);
  sb_printf(s, "%s/* each value's kernels: the one that writes it, the last that reads it */\n", indent);
  sb_printf(s, "%sstatic const signed char dlc_live[2][%d] = {{", indent, ncv);
  for (int i = 0; i < ncv; i++) sb_printf(s, "%s%d", i ? ", " : "", cv[i].born);
  sb_puts(s, "}, {");
  for (int i = 0; i < ncv; i++) sb_printf(s, "%s%d", i ? ", " : "", cv[i].dies);
  sb_puts(s, "}};\n");
  for (int i = 0; i < ncv; i++) {
    const region_memref *m = cv[i].m;
    const char *e = m->rank ? hsx(A, m->shape[0]) : "1";
    for (int d = 1; d < m->rank; d++) e = arena_printf(A, "dlc__mul(%s, %s)", e, hsx(A, m->shape[d]));
    sb_printf(s, "%sdlc_wb[%d] = dlc__mul(%s, %d);  /* %s [", indent, i, e, dtype_bytes(m->dt), cmt(A, m->name));
    for (int d = 0; d < m->rank; d++) sb_printf(s, "%s%s", d ? ", " : "", cmt(A, sx_str(A, m->shape[d])));
    sb_printf(s, "] %s */\n", dtype_name(m->dt));
  }
  for (int j = 0; j < npc; j++)
    sb_printf(s, "%sif (dlc_pre) dlc_wb[%d] = 0;  /* %s: made by the plan, in its ConstPool */\n", indent, pc[j].value,
              cmt(A, pc[j].m->name));
  sb_printf(s, "%sdlc_ws = dlc__arena_place(%d, dlc_wb, dlc_live[0], dlc_live[1], dlc_off);\n", indent, ncv);
}

/* The plain dlc_<op>: dlc_<op>_ws with no workspace. */
static void plain_calls_ws(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n) {
  host_prototype(c, s, eo, a, n);
  sb_printf(s, " {\n  return dlc_%s_ws(dtype", eo->op->name);
  for (int i = 0; i < n; i++) sb_printf(s, ", %s", a[i].name);
  sb_puts(s, ", NULL, 0, stream);\n}\n\n");
}

/* dlc_<op>_workspace_size() and dlc_<op>() (dlc_<op>_ws() without one). */
static void dispatch_chain_extras(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n, const ws_param_conv *pc,
                                  int npc) {
  arena *A = c->A;
  const char *on = eo->op->name;
  int ns = shape_args(a, n);
  if (npc) {
    /* the size for the call (dlc_pre 0) or for a plan's run (1) */
    workspace_prototype(c, s, eo, a, n);
    sb_printf(s, " {\n  return dlc__wsize_%s(dtype", on);
    for (int i = 0; i < ns; i++) sb_printf(s, ", %s", a[i].name);
    sb_printf(s, ", 0);\n}\n\nstatic size_t dlc__wsize_%s(dlc_dtype dtype", on);
    for (int i = 0; i < ns; i++) sb_printf(s, ", %s %s", a[i].type, a[i].name);
    sb_puts(s, ", int dlc_pre)");
  } else
    workspace_prototype(c, s, eo, a, n);
  sb_printf(s, " {\n  dlc__p_%s dlc_params = {0}, *dlc_p = &dlc_params;\n", on);
  for (int i = 0; i < ns; i++) sb_printf(s, "  dlc_p->%s = %s;\n  if (%s < 0) return 0;\n", a[i].name, a[i].name, a[i].name);
  sb_puts(s, "  int dlc_inst = -1;\n");
  inst_match(c, s, eo);
  sb_puts(s, "  switch (dlc_inst) {\n");
  for (int i = 0; i < eo->ninst; i++) {
    sb_printf(s, "  case %d: {\n", i);
    chain_layout(A, s, eo, &eo->inst[i], "    ", pc, npc);
    sb_puts(s, "    (void)dlc_off;\n    return dlc_ws == DLC__OVF ? 0 : (size_t)dlc_ws;\n  }\n");
  }
  sb_puts(s, "  }\n  return 0;\n}\n\n");
  plain_calls_ws(c, s, eo, a, n);
}

/* The given instance (emit_op.given) of chain instance `in`, or NULL. */
static const emit_instance *given_of(const emit_op *eo, const emit_instance *in) {
  for (int i = 0; i < eo->ngiven; i++)
    if (eo->given[i].source == in->source) return &eo->given[i];
  return NULL;
}

/* The first row of dlc__k_<op> that a given instance's kernels take: after
 * the chain's rows (a chain op has no sm90a row). */
static int given_row(const emit_op *eo, const emit_instance *gv) {
  int idx = 0;
  for (int i = 0; i < eo->ninst; i++)
    for (const gpu_kernel *k = eo->inst[i].k; k; k = k->next) idx += k->nvec + (k->reduce ? 1 : 0);
  for (const emit_instance *g = eo->given; g < gv; g++) idx += g->k->nvec;
  return idx;
}

/* A chain instance's workspace when the op has a plan without one: NULL
 * and 0, or 256-byte aligned memory; with fewer bytes than the chain needs
 * (dlc_<op>() passes none), the graph as given runs in one kernel. */
static void given_dispatch(emit_ctx *c, strbuf *s, const emit_op *eo, const emit_instance *gv, const ws_param_conv *pc,
                           int npc) {
  arena *A = c->A;
  const char *on = eo->op->name;
  const gpu_kernel *k = gv->k;
  sb_printf(s,
            "    if (!workspace && workspace_bytes)\n"
            "      return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s: workspace is NULL with workspace_bytes = %%zu (pass NULL and 0 for "
            "none)\", workspace_bytes);\n"
            "    if (workspace && !dlc__aligned(workspace, 256))\n"
            "      return dlc__fail(DLC_ERROR_MISALIGNED, \"%s: workspace = %%p is not aligned to 256 bytes\", workspace);\n"
            "    if ((uintptr_t)workspace > UINTPTR_MAX - workspace_bytes)\n"
            "      return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s: workspace + workspace_bytes wraps the address space\");\n"
            "    if (dlc_ws == DLC__OVF || workspace_bytes < (size_t)dlc_ws) {\n",
            on, on, on);
  if (npc) {
    const char *made = "";
    for (int j = 0; j < npc; j++) made = arena_printf(A, "%s%s%s", made, j ? ", " : "", pc[j].param);
    sb_printf(s,
              "      if (dlc_pre)  /* a plan's run: its ConstPool holds %s converted, which that kernel would read as stored */\n"
              "        return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s_plan_run: workspace_bytes = %%zu, the plan needs %%lld "
              "(dlc_%s_plan_workspace_size())\", workspace_bytes, (long long)dlc_ws);\n",
              made, on, on);
  }
  sb_printf(s,
            "      /* without the chain's workspace: the graph as given, one kernel that loads the operands in their\n"
            "       * stored layouts (region %s) */\n",
            cmt(A, k->r->name));
  strbuf b = {0};
  dispatch_width(A, &b, k, on, true);
  dispatch_kpart32(A, &b, eo, k);
  dispatch_grid(A, &b, eo->inst[0].fe, k, on, false);
  put_indented(s, sb_str(&b), "  ");
  sb_free(&b);
  int row = given_row(eo, gv);
  sb_puts(s, "      int dlc_k = -1;\n      switch (dlc_vec) {\n");
  for (int v = 0; v < k->nvec; v++) sb_printf(s, "      case %d: dlc_k = %d; break;\n", k->vecs[v], row + v);
  sb_printf(s,
            "      }\n      if (dlc_k < 0) return dlc__fail(DLC_ERROR_INTERNAL, \"%s: no kernel\");\n"
            "      return dlc__launch(&dlc__k_%s[dlc_k], dlc_p, sizeof *dlc_p, (unsigned)dlc_gx, (unsigned)dlc_gy, "
            "(unsigned)dlc_gz, stream);\n    }\n",
            on, on);
}

/* The param conversion (plan_param_convs) whose value is chain value v, or -1. */
static int conv_of_value(const ws_param_conv *pc, int npc, int v) {
  for (int j = 0; j < npc; j++)
    if (pc[j].value == v) return j;
  return -1;
}

/* The first row of dlc__k_<op> that kernel k of chain instance `in` takes. */
static int chain_row(const emit_op *eo, const emit_instance *in, const gpu_kernel *k) {
  int idx = 0;
  for (const emit_instance *i = eo->inst; i <= in; i++)
    for (const gpu_kernel *q = i->k; q && q != k; q = q->next) idx += q->nvec + (q->reduce ? 1 : 0);
  return idx;
}

/* dlc__pc_<op>_<j>: param conversion j's kernel (plan_param_convs) on the
 * parameter block plan_create fills (its dims, the param, the value's place
 * in the pool), in the instance of the dtype (an instance of such an op is
 * its dtype's alone). */
static void param_conv_fns(emit_ctx *c, strbuf *s, const emit_op *eo, const ws_param_conv *pc, int npc) {
  arena *A = c->A;
  const char *on = eo->op->name, *fn = arena_printf(A, "%s_plan_create", on);
  for (int j = 0; j < npc; j++) {
    sb_printf(s,
              "/* Kernel %d of %s's chain: %s's layout conversion into %s, which a plan makes once, into its ConstPool */\n"
              "static dlc_status dlc__pc_%s_%d(dlc_dtype dtype, dlc__p_%s *dlc_p, struct CUstream_st *stream) {\n"
              "  int dlc_inst = -1;\n",
              pc[j].k->chain_index, on, cmt(A, pc[j].param), cmt(A, pc[j].m->name), on, j, on);
    for (int i = 0; i < eo->ninst; i++) sb_printf(s, "  if (dtype == %s) dlc_inst = %d;\n", dlc_dtype_enum(eo->inst[i].dt), i);
    sb_puts(s, "  switch (dlc_inst) {\n");
    for (int i = 0; i < eo->ninst; i++) {
      const emit_instance *in = &eo->inst[i];
      const gpu_kernel *k = in->k;
      while (k && k->chain_index != pc[j].k->chain_index) k = k->next;
      sb_printf(s, "  case %d: {\n", i);
      dispatch_width(A, s, k, fn, true);
      dispatch_kpart32(A, s, eo, k);
      dispatch_grid(A, s, in->fe, k, fn, true);
      int row = chain_row(eo, in, k);
      sb_puts(s, "    int dlc_k = -1;\n    switch (dlc_vec) {\n");
      for (int v = 0; v < k->nvec; v++) sb_printf(s, "    case %d: dlc_k = %d; break;\n", k->vecs[v], row + v);
      sb_printf(s,
                "    }\n    if (dlc_k < 0) return dlc__fail(DLC_ERROR_INTERNAL, \"%s: no kernel\");\n"
                "    if (dlc_gx < 1 || dlc_gy < 1 || dlc_gz < 1) return DLC_SUCCESS;\n"
                "    return dlc__launch(&dlc__k_%s[dlc_k], dlc_p, sizeof *dlc_p, (unsigned)dlc_gx, (unsigned)dlc_gy, "
                "(unsigned)dlc_gz, stream);\n  }\n",
                fn, on);
    }
    sb_printf(s, "  }\n  return dlc__fail(DLC_ERROR_INTERNAL, \"%s: no instance\");\n}\n\n", fn);
  }
}

/* The chain's instance cases: the tensors, the workspace, then each kernel
 * with its width and grid, launched in order; with dlc_pre (a plan's run),
 * the param conversions pc[0..npc) are the plan's, made: their values are
 * at dlc_pre[j] and their kernels do not run. */
static void dispatch_chain_body(emit_ctx *c, strbuf *s, const emit_op *eo, const ws_param_conv *pc, int npc) {
  arena *A = c->A;
  const char *on = eo->op->name;
  const fe_graph *g = eo->inst[0].fe;
  sb_puts(s, "  switch (dlc_inst) {\n");
  int idx = 0;
  for (int i = 0; i < eo->ninst; i++) {
    const emit_instance *in = &eo->inst[i];
    sb_printf(s, "  case %d: {\n", i);
    dispatch_tensors(A, s, g, in, on, true, true);
    chain_layout(A, s, eo, in, "    ", pc, npc);
    const emit_instance *gv = given_of(eo, in);
    if (gv) given_dispatch(c, s, eo, gv, pc, npc);
    else
    sb_printf(s,
              "    if (dlc_ws == DLC__OVF) return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s: the workspace size overflows int64\");\n"
              "    if (dlc_ws > 0 && !workspace && workspace_bytes == 0)\n"
              "      return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s runs as several kernels and needs a workspace of %%lld bytes: "
              "call dlc_%s_ws() with dlc_%s_workspace_size() bytes\", (long long)dlc_ws);\n"
              "    if (dlc_ws > 0 && !workspace) return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s: workspace is NULL\");\n"
              "    if (workspace_bytes < (size_t)dlc_ws)\n"
              "      return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s: workspace_bytes = %%zu, the call needs %%lld (dlc_%s_workspace_size())\", "
              "workspace_bytes, (long long)dlc_ws);\n"
              "    if (!dlc__aligned(workspace, 256)) return dlc__fail(DLC_ERROR_MISALIGNED, \"%s: workspace = %%p is not aligned to 256 bytes\", workspace);\n"
              "    if ((uintptr_t)workspace > UINTPTR_MAX - (uintptr_t)dlc_ws) return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s: the workspace wraps the address space\");\n",
              on, on, on, on, on, on, on, on, on);
    chain_val cv[16];
    int ncv = chain_vals(eo, in, cv, 16);
    sb_puts(s, "    dlc__query_workspace(dlc_ws);\n");
    if (!ncv) sb_puts(s, "    (void)dlc_off;  /* every value between the kernels was fused: no workspace */\n");
    for (int v = 0; v < ncv; v++) {
      int j = conv_of_value(pc, npc, v);
      if (j >= 0)
        sb_printf(s, "    dlc_p->%s = dlc_pre ? (void *)(uintptr_t)dlc_pre[%d] : (char *)workspace + dlc_off[%d];\n",
                  lc(A, cv[v].m->name), j, v);
      else
        sb_printf(s, "    dlc_p->%s = (char *)workspace + dlc_off[%d];\n", lc(A, cv[v].m->name), v);
      if (cv[v].m->rank == 2) sb_printf(s, "    dlc_p->%s = %s;\n", gpuir_ld_param(A, cv[v].m->name), hsx(A, cv[v].m->shape[1]));
    }
    for (const gpu_kernel *k = in->k; k; k = k->next) {
      int made = -1;
      for (int j = 0; j < npc; j++)
        if (pc[j].k->chain_index == k->chain_index) made = j;
      if (made >= 0)
        sb_printf(s, "    if (!dlc_pre) {  /* kernel %d: region %s (a plan's run has %s made) */\n", k->chain_index,
                  cmt(A, k->r->name), cmt(A, pc[made].m->name));
      else
        sb_printf(s, "    {  /* kernel %d: region %s */\n", k->chain_index, cmt(A, k->r->name));
      strbuf b = {0};
      dispatch_width(A, &b, k, on, true);
      dispatch_kpart32(A, &b, eo, k);
      dispatch_grid(A, &b, g, k, on, true);
      put_indented(s, sb_str(&b), "  ");
      sb_free(&b);
      sb_puts(s, "      int dlc_k = -1;\n      switch (dlc_vec) {\n");
      for (int v = 0; v < k->nvec; v++) sb_printf(s, "      case %d: dlc_k = %d; break;\n", k->vecs[v], idx + v);
      sb_printf(s,
                "      }\n      if (dlc_k < 0) return dlc__fail(DLC_ERROR_INTERNAL, \"%s: no kernel\");\n"
                "      if (dlc_gx > 0 && dlc_gy > 0 && dlc_gz > 0 &&\n"
                "          (dlc_st = dlc__launch(&dlc__k_%s[dlc_k], dlc_p, sizeof *dlc_p, (unsigned)dlc_gx, (unsigned)dlc_gy,\n"
                "                                (unsigned)dlc_gz, stream)))\n"
                "        return dlc_st;\n",
                on, on);
      for (int v = 0; v < ncv; v++)
        if (cv[v].dies == k->chain_index)
          sb_printf(s, "      %sdlc__arena_release((char *)workspace + dlc_off[%d], dlc_wb[%d]);  /* %s: read last */\n",
                    conv_of_value(pc, npc, v) >= 0 ? "if (!dlc_pre) " : "", v, v, cmt(A, cv[v].m->name));
      sb_puts(s, "    }\n");
      idx += k->nvec + (k->reduce ? 1 : 0);
    }
    sb_puts(s, "    return DLC_SUCCESS;\n  }\n");
  }
  sb_printf(s, "  }\n  return dlc__fail(DLC_ERROR_INTERNAL, \"%s: no instance\");\n}\n\n", on);
}

/* switch (dlc_inst) with one case a distinct text of blk[0..n): the case
 * lists every instance whose text it is, then the text and `tail`. */
static void switch_groups(arena *A, strbuf *s, char *const *blk, int n, const char *tail) {
  bool *done = ARENA_ARRAY(A, bool, n);
  sb_puts(s, "  switch (dlc_inst) {\n");
  for (int i = 0; i < n; i++) {
    if (done[i]) continue;
    sb_puts(s, "  ");
    for (int j = i; j < n; j++)
      if (!done[j] && strcmp(blk[j], blk[i]) == 0) {
        done[j] = true;
        sb_printf(s, "case %d: ", j);
      }
    sb_printf(s, "{\n%s%s  }\n", blk[i], tail);
  }
  sb_puts(s, "  }\n");
}

/* A part of the entry point the instances write: once when every
 * instance's text is the same, else a case a distinct text. */
static void once_or_groups(arena *A, strbuf *s, char *const *blk, int n, const char *what) {
  bool one = true;
  for (int i = 1; i < n; i++) one &= strcmp(blk[i], blk[0]) == 0;
  if (one) {
    sb_printf(s, "  {  /* %s (every instance alike) */\n%s  }\n", what, blk[0]);
    return;
  }
  sb_printf(s, "  /* %s, the instance's */\n", what);
  switch_groups(A, s, blk, n, "    break;\n");
}

/* ---- the selection tables ---------------------------------------------------------
 * An entry point picks its instance from dlc__sel_<op> (one row per
 * instance, in order: dtype, the variant keys, the bounds of the shape
 * bucket; the first match wins, so an instance's buckets come before its
 * default row, which has no bounds) and its kernel row from dlc__row_<op>
 * (instance x chunk width).  Both are data (spec §12); the per-instance
 * checks that read shapes stay code. */

/* Variant key values of an instance: each runtime attr's pair, then each
 * bound dim (the manifest's order, the same for every instance). */
static int inst_keys(const emit_instance *in, int64_t *out) {
  int n = 0;
  for (const cJSON *v = in->attr_values ? in->attr_values->child : NULL; v; v = v->next)
    for (int e = 0; e < 2; e++) {
      double val = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, e)->valuedouble : v->valuedouble;
      if (out) out[n] = (int64_t)val;
      n++;
    }
  for (const cJSON *v = in->dim_values ? in->dim_values->child : NULL; v; v = v->next) {
    if (out) out[n] = (int64_t)v->valuedouble;
    n++;
  }
  return n;
}

static int sel_nkey(const emit_op *eo) { return inst_keys(&eo->inst[0], NULL); }

/* the call's key values, as C, in inst_keys' order */
static void sel_keys(emit_ctx *c, strbuf *s, const emit_op *eo) {
  const emit_instance *in = &eo->inst[0];
  int n = 0;
  for (const cJSON *v = in->attr_values ? in->attr_values->child : NULL; v; v = v->next)
    for (int e = 0; e < 2; e++) sb_printf(s, "%sdlc_p->%s%d", n++ ? ", " : "", lc(c->A, v->string), e);
  for (const cJSON *v = in->dim_values ? in->dim_values->child : NULL; v; v = v->next)
    sb_printf(s, "%sdlc_p->%s", n++ ? ", " : "", lc(c->A, v->string));
}

/* The signature dims some bucket of the op bounds, in first-seen order. */
static int sel_bound_dims(const emit_op *eo, const char **out) {
  int n = 0;
  for (int i = 0; i < eo->ninst; i++)
    for (int d = 0; d < eo->inst[i].nbounds; d++) {
      bool seen = false;
      for (int j = 0; j < n; j++) seen |= strcmp(out[j], eo->inst[i].bdim[d]) == 0;
      if (!seen) out[n++] = eo->inst[i].bdim[d];
    }
  return n;
}
static int sel_nbound(emit_ctx *c, const emit_op *eo) {
  int cap = 1;
  for (int i = 0; i < eo->ninst; i++) cap += eo->inst[i].nbounds;
  return sel_bound_dims(eo, ARENA_ARRAY(c->A, const char *, cap));
}
static const char *sel_bound_dim(emit_ctx *c, const emit_op *eo, int d) {
  int cap = 1;
  for (int i = 0; i < eo->ninst; i++) cap += eo->inst[i].nbounds;
  const char **dims = ARENA_ARRAY(c->A, const char *, cap);
  sel_bound_dims(eo, dims);
  return dims[d];
}
/* The product bound column d is (its text is the column's name), or NULL
 * for a signature dim. */
static const sx *sel_bound_ext(emit_ctx *c, const emit_op *eo, int d) {
  const char *dim = sel_bound_dim(c, eo, d);
  for (int i = 0; i < eo->ninst; i++)
    for (int b = 0; b < eo->inst[i].nbounds; b++)
      if (eo->inst[i].bext && eo->inst[i].bext[b] && strcmp(eo->inst[i].bdim[b], dim) == 0) return eo->inst[i].bext[b];
  return NULL;
}
/* The call's value of bound column d, as C: the signature dim, or the
 * product of dims computed from them (the poison past every bound). */
static const char *sel_bound_value(emit_ctx *c, const emit_op *eo, int d) {
  const sx *x = sel_bound_ext(c, eo, d);
  if (x) return arena_printf(c->A, "dlc__bound_value(%s)", hsx(c->A, x));
  return arena_printf(c->A, "dlc_p->%s", lc(c->A, sel_bound_dim(c, eo, d)));
}

/* The SMs a split-K call's CTAs cover: the most of any arch the library
 * is built for (plan_arch's sm_count). */
static int split_sms(const emit_ctx *c) {
  int sms = 1;
  for (int i = 0; i < c->m->narchs; i++) {
    const arch_info *ai = plan_arch(c->m->archs[i]);
    if (ai && ai->sm_count > sms) sms = ai->sm_count;
  }
  return sms;
}

/* A split-K op's second-kernel row per instance (-1: the instance does not
 * split), and dlc__split_ws_<op>: the workspace a split instance needs at
 * the call's shapes (its whole fp32 partial tiles: tiles x batch x slices
 * x BM x BN x 4 bytes; DLC__OVF on overflow), with its slices and k-tiles
 * a slice.  The call chooses its slices: the fewest whose CTAs (tiles x
 * batch x slices) cover split_sms() SMs, at most the plan's split_k and
 * the k-tiles, cut as plan_split_slices cuts (docs/plan.md#split-k); 0
 * bytes when that is one slice, so that the selection goes on to the row
 * without split. */
static void split_tables(emit_ctx *c, strbuf *s, const emit_op *eo) {
  arena *A = c->A;
  const char *on = eo->op->name;
  sb_printf(s, "/* split-K: the second kernel's row by instance; -1: the instance does not split */\n");
  sb_printf(s, "static const int16_t dlc__red_%s[] = {", on);
  int idx = 0;
  for (int i = 0; i < eo->ninst; i++) {
    const gpu_kernel *k = eo->inst[i].k;
    sb_printf(s, "%s%d", i ? ", " : "", k->reduce ? idx + k->nvec : -1);
    idx += k->nvec + (k->reduce ? 1 : 0);
  }
  sb_puts(s, "};\n");
  sb_printf(s,
            "/* split-K: the workspace instance dlc_i needs at these shapes (DLC__OVF: overflow), its slices and\n"
            " * k-tiles a slice */\n"
            "static int64_t dlc__split_ws_%s(int dlc_i, const dlc__p_%s *dlc_p, int64_t *dlc_sn, int64_t *dlc_ktp) {\n"
            "  int64_t dlc_kx, dlc_tiles, dlc_batch, dlc_bk, dlc_smax, dlc_tile;\n  switch (dlc_i) {\n",
            on, on);
  for (int i = 0; i < eo->ninst; i++) {
    const gpu_kernel *k = eo->inst[i].k;
    if (!k->reduce) continue;
    const sx *kx = sx_int(A, 1);
    for (int j = 0; j < k->v.nk; j++) kx = sx_mul(A, kx, k->r->it[k->v.k_axes[j]].size);
    sb_printf(s,
              "  case %d: /* %s */\n    dlc_kx = %s, dlc_tiles = dlc__mul(%s, %s), dlc_batch = %s;\n"
              "    dlc_bk = %d, dlc_smax = %d, dlc_tile = %d;\n    break;\n",
              i, cmt(A, eo->inst[i].tag), hsx(A, kx), hsx(A, k->grid_tiles[0]), hsx(A, k->grid_tiles[1]), hsx(A, k->grid[2]),
              k->plan.tile[2], k->plan.split_k, k->plan.tile[0] * k->plan.tile[1]);
  }
  sb_printf(s,
            "  default:\n    return DLC__OVF;\n  }\n"
            "  if (dlc_kx == DLC__OVF || dlc_kx < 0 || dlc_tiles == DLC__OVF || dlc_batch == DLC__OVF) return DLC__OVF;\n"
            "  const int64_t dlc_kt = dlc_kx / dlc_bk + (dlc_kx %% dlc_bk != 0), dlc_tb = dlc__mul(dlc_tiles, dlc_batch);\n"
            "  if (dlc_tb == DLC__OVF) return DLC__OVF;\n"
            "  /* the slices: the fewest whose CTAs cover %d SMs, at most the plan's and the k-tiles */\n"
            "  int64_t dlc_split = dlc_tb > 0 ? (%d + dlc_tb - 1) / dlc_tb : 1;\n"
            "  if (dlc_split > dlc_smax) dlc_split = dlc_smax;\n  if (dlc_split > dlc_kt) dlc_split = dlc_kt;\n"
            "  if (dlc_split <= 1) return 0; /* one slice: the row without split */\n"
            "  const int64_t dlc_per = (dlc_kt + dlc_split - 1) / dlc_split, dlc_n = (dlc_kt + dlc_per - 1) / dlc_per;\n"
            "  if (dlc_sn) *dlc_sn = dlc_n;\n  if (dlc_ktp) *dlc_ktp = dlc_per;\n"
            "  return dlc__mul(dlc__mul(dlc_tb, dlc_n), dlc_tile * 4);\n}\n",
            split_sms(c), split_sms(c));
}

/* The selection loop: the first row of dlc__sel_<op> that matches the call
 * (dtype, variant keys, bucket bounds) and, for a split-K row, whose
 * workspace fits in `ws` bytes (an expression of type size_t). */
static void sel_loop(emit_ctx *c, strbuf *s, const emit_op *eo, const char *ws) {
  const char *on = eo->op->name;
  if (sel_nkey(eo)) {
    sb_puts(s, "  const int64_t dlc_key[] = {");
    sel_keys(c, s, eo);
    sb_puts(s, "};\n");
  }
  if (sel_nbound(c, eo)) {
    sb_puts(s, "  const int64_t dlc_bv[] = {");
    for (int d = 0; d < sel_nbound(c, eo); d++) sb_printf(s, "%s%s", d ? ", " : "", sel_bound_value(c, eo, d));
    sb_puts(s, "};\n");
  }
  sb_printf(s, "  for (int dlc_i = 0; dlc_i < %d && dlc_inst < 0; dlc_i++) {\n", eo->ninst);
  sb_printf(s, "    const struct dlc__sel_%s *dlc_t = &dlc__sel_%s[dlc_i];\n    int dlc_ok = dlc_t->dtype == dtype;\n", on, on);
  if (sel_nkey(eo))
    sb_printf(s, "    for (int dlc_j = 0; dlc_j < %d; dlc_j++) dlc_ok &= dlc_t->key[dlc_j] == dlc_key[dlc_j];\n", sel_nkey(eo));
  if (sel_nbound(c, eo))
    sb_printf(s, "    for (int dlc_j = 0; dlc_j < %d; dlc_j++)\n      dlc_ok &= dlc_bv[dlc_j] >= dlc_t->lo[dlc_j] && dlc_bv[dlc_j] <= dlc_t->hi[dlc_j];\n",
              sel_nbound(c, eo));
  if (has_split(eo))
    sb_printf(s,
              "    /* a split-K row only with its workspace; else the next row that matches */\n"
              "    if (dlc_ok && dlc__red_%s[dlc_i] >= 0) {\n"
              "      const int64_t dlc_need = dlc__split_ws_%s(dlc_i, dlc_p, NULL, NULL);\n"
              "      dlc_ok = dlc_need > 0 && (uint64_t)dlc_need <= (uint64_t)(%s);\n    }\n",
              on, on, ws);
  sb_puts(s, "    if (dlc_ok) dlc_inst = dlc_i;\n  }\n");
}

/* dlc_<op>_workspace_size() of a split-K op: the workspace of the row the
 * selection picks when any workspace fits; and dlc_<op>(), which is
 * dlc_<op>_ws() without one. */
static void dispatch_split_extras(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n) {
  const char *on = eo->op->name;
  int ns = shape_args(a, n);
  workspace_prototype(c, s, eo, a, n);
  sb_printf(s, " {\n  dlc__p_%s dlc_params = {0}, *dlc_p = &dlc_params;\n", on);
  for (int i = 0; i < ns; i++) sb_printf(s, "  dlc_p->%s = %s;\n  if (%s < 0) return 0;\n", a[i].name, a[i].name, a[i].name);
  sb_puts(s, "  int dlc_inst = -1;\n");
  sel_loop(c, s, eo, "SIZE_MAX");
  sb_printf(s, "  if (dlc_inst < 0 || dlc__red_%s[dlc_inst] < 0) return 0;\n"
               "  const int64_t dlc_need = dlc__split_ws_%s(dlc_inst, dlc_p, NULL, NULL);\n"
               "  return dlc_need > 0 ? (size_t)dlc_need : 0;\n}\n\n",
            on, on);
  plain_calls_ws(c, s, eo, a, n);
}

static void selection_tables(emit_ctx *c, strbuf *s, const emit_op *eo) {
  arena *A = c->A;
  const char *on = eo->op->name;
  int nk = sel_nkey(eo), nb = sel_nbound(c, eo);
  int64_t *key = ARENA_ARRAY(A, int64_t, nk + 1);
  sb_printf(s, "/* instance selection (first match): dtype%s%s */\n", nk ? ", variant keys" : "",
            nb ? ", shape-bucket bounds" : "");
  sb_printf(s, "static const struct dlc__sel_%s {\n  dlc_dtype dtype;\n", on);
  if (nk) sb_printf(s, "  int64_t key[%d];\n", nk);
  if (nb) {
    sb_printf(s, "  int64_t lo[%d], hi[%d]; /* bounds on", nb, nb);
    for (int d = 0; d < nb; d++)
      sb_printf(s, " %s", sel_bound_ext(c, eo, d) ? cmt(A, sel_bound_dim(c, eo, d)) : lc(A, sel_bound_dim(c, eo, d)));
    sb_puts(s, " */\n");
  }
  sb_printf(s, "} dlc__sel_%s[] = {\n", on);
  for (int i = 0; i < eo->ninst; i++) {
    const emit_instance *in = &eo->inst[i];
    if (inst_keys(in, key) != nk) diag_report(c->dl, D_INTERNAL, "dispatch", NULL, "instances of %s have different keys", on);
    sb_printf(s, "    {%s", dlc_dtype_enum(in->dt));
    if (nk) {
      sb_puts(s, ", {");
      for (int j = 0; j < nk; j++) sb_printf(s, "%s%lld", j ? ", " : "", (long long)key[j]);
      sb_puts(s, "}");
    }
    if (nb) {
      strbuf lo = {0}, hi = {0};
      for (int d = 0; d < nb; d++) {
        const char *dim = sel_bound_dim(c, eo, d);
        int64_t l = 0, h = INT64_MAX;
        for (int b = 0; b < in->nbounds; b++)
          if (strcmp(in->bdim[b], dim) == 0) l = in->blo[b], h = in->bhi[b];
        sb_printf(&lo, "%s%lld", d ? ", " : "", (long long)l);
        if (h == INT64_MAX) sb_printf(&hi, "%sINT64_MAX", d ? ", " : "");
        else sb_printf(&hi, "%s%lld", d ? ", " : "", (long long)h);
      }
      sb_printf(s, ", {%s}, {%s}", sb_str(&lo), sb_str(&hi));
      sb_free(&lo), sb_free(&hi);
    }
    sb_printf(s, "}, /* %s%s%s */\n", cmt(A, in->tag), in->bucket ? ": shape bucket " : "", in->bucket ? cmt(A, in->bucket) : "");
  }
  sb_puts(s, "};\n");
  /* kernel row by (instance, width slot: 8, 4, 2, 1 elements) */
  sb_printf(s, "/* kernel row by instance and chunk width (8, 4, 2, 1 elements); -1: not compiled */\n");
  sb_printf(s, "static const int16_t dlc__row_%s[][4] = {\n", on);
  int idx = 0;
  for (int i = 0; i < eo->ninst; i++) {
    const gpu_kernel *k = eo->inst[i].k;
    int row[4] = {-1, -1, -1, -1};
    for (int v = 0; v < k->nvec; v++) {
      int w = k->vecs[v], slot = w == 8 ? 0 : w == 4 ? 1 : w == 2 ? 2 : 3;
      row[slot] = idx + v;
    }
    sb_printf(s, "    {%d, %d, %d, %d},\n", row[0], row[1], row[2], row[3]);
    idx += k->nvec + (k->reduce ? 1 : 0);
  }
  sb_puts(s, "};\n");
  if (has_split(eo)) split_tables(c, s, eo);
  sb_puts(s, "\n");
}

/* An entry point's parts: its kernel table (the rows, then the sm90a
 * row's kernels; row90[i]: instance i's sm90a kernel, -1 for none), the
 * checks of its arguments and the choice of the instance (with a reason
 * when none matches), and each instance's checks and launch. */
static int *kernel_table(emit_ctx *c, strbuf *s, const emit_op *eo) {
  arena *A = c->A;
  const char *on = eo->op->name;
  /* kernel table */
  sb_printf(s, "static const dlc__kernel dlc__k_%s[] = {\n", on);
  int idx = 0;
  for (int i = 0; i < eo->ninst; i++)
    for (const gpu_kernel *k = eo->inst[i].k; k; k = k->next) {
      const sched_plan *p = &k->plan;
      for (int v = 0; v < k->nvec; v++)
        sb_printf(s, "    {\"%s\", %d, %d, %d, %d, %s, %d, %d, %d, %d, %d, %d, %d, %d, %d, 0},\n",
                  kernel_name_k(A, eo, &eo->inst[i], k, k->vecs[v]), eo->index, idx++, k->threads, k->smem, arch_mask(c),
                  p->tile[0], p->tile[1], p->tile[2], p->stages, p->warps_m, p->warps_n,
                  skel_shape_of(k) == SKEL_ATTENTION ? 0 : p->raster_group, p->addr_regs, k->reduce ? p->split_k : 0);
      if (k->reduce)
        sb_printf(s, "    {\"%s\", %d, %d, %d, %d, %s, %d, %d, %d, %d, %d, %d, %d, %d, %d, 1},\n",
                  reduce_name(A, eo, &eo->inst[i]), eo->index, idx++, k->reduce->threads, k->reduce->smem, arch_mask(c),
                  p->tile[0], p->tile[1], p->tile[2], p->stages, p->warps_m, p->warps_n, p->raster_group, p->addr_regs,
                  p->split_k);
    }
  /* then the sm90a row's kernels, one an instance that has one */
  int *row90 = ARENA_ARRAY(A, int, eo->ninst + 1);
  for (int i = 0; i < eo->ninst; i++) {
    const gpu_kernel *k = is_chain(eo) ? NULL : eo->inst[i].k->sm90a;
    row90[i] = -1;
    if (!k) continue;
    const sched_plan *p = &k->plan;
    row90[i] = idx;
    sb_printf(s, "    {\"%s\", %d, %d, %d, %d, DLC__ARCH_SM90A, %d, %d, %d, %d, %d, %d, %d, %d, 0, 0},\n",
              kernel_name_90(A, eo, &eo->inst[i]), eo->index,
              idx++, k->threads, k->smem, p->tile[0], p->tile[1], p->tile[2], p->stages, p->warps_m, p->warps_n,
              p->raster_group, p->addr_regs);
  }
  /* then a chain op's plan without a workspace: one kernel a given instance */
  for (int i = 0; i < eo->ngiven; i++) {
    const gpu_kernel *k = eo->given[i].k;
    const sched_plan *p = &k->plan;
    for (int v = 0; v < k->nvec; v++)
      sb_printf(s, "    {\"%s\", %d, %d, %d, %d, %s, %d, %d, %d, %d, %d, %d, %d, %d, 0, 0},\n",
                kernel_name_given(A, eo, &eo->given[i], k->vecs[v]), eo->index, idx++, k->threads, k->smem, arch_mask(c),
                p->tile[0], p->tile[1], p->tile[2], p->stages, p->warps_m, p->warps_n,
                skel_shape_of(k) == SKEL_ATTENTION ? 0 : p->raster_group, p->addr_regs);
  }
  sb_puts(s, "};\n");
  bool any90 = false;
  for (int i = 0; i < eo->ninst; i++) any90 |= row90[i] >= 0;
  if (any90) {
    sb_printf(s, "/* the sm90a row's kernel by instance; -1: none */\nstatic const int16_t dlc__k90_%s[] = {", on);
    for (int i = 0; i < eo->ninst; i++) sb_printf(s, "%s%d", i ? ", " : "", row90[i]);
    sb_puts(s, "};\n");
  }
  return row90;
}

static void entry_checks(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n) {
  arena *A = c->A;
  const fe_graph *g = eo->inst[0].fe;
  const char *on = eo->op->name;
  sb_puts(s, " {\n  dlc__clear_detail();\n");
  sb_printf(s, "  dlc__p_%s dlc_params = {0}, *dlc_p = &dlc_params;\n", on);
  for (int i = 0; i < n; i++) sb_printf(s, "  dlc_p->%s = %s;\n", a[i].name, a[i].name);
  if (!is_chain(eo)) /* a chain checks its workspace against the size its instance needs */
    sb_printf(s,
              "  /* the workspace: none (NULL, 0), or 256-byte aligned memory of workspace_bytes */\n"
              "  if (!workspace && workspace_bytes)\n"
              "    return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s: workspace is NULL with workspace_bytes = %%zu (pass NULL and 0 "
              "for none)\", workspace_bytes);\n"
              "  if (workspace && !dlc__aligned(workspace, 256))\n"
              "    return dlc__fail(DLC_ERROR_MISALIGNED, \"%s: workspace = %%p is not aligned to 256 bytes\", workspace);\n"
              "  if ((uintptr_t)workspace > UINTPTR_MAX - workspace_bytes)\n"
              "    return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s: workspace + workspace_bytes wraps the address space\");\n",
              on, on, on);
  /* dims and attrs */
  for (int i = 0; i < g->ndims; i++) {
    const char *d = lc(A, g->dims[i]);
    sb_printf(s, "  if (dlc_p->%s < 0) return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s = %%lld is negative\", (long long)dlc_p->%s);\n", d, d, d);
  }
  /* runtime attrs: a pad is >= 0, a stride or dilation >= 1 (the frontend's least values) */
  for (int i = 0; i < g->nsig_attrs; i++)
    for (int e = 0; e < 2; e++) {
      const char *nm = arena_printf(A, "%s%d", lc(A, g->sig_attrs[i]), e);
      int least = g->sig_attr_least[i];
      sb_printf(s, "  if (dlc_p->%s < %d) return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s = %%lld is %s\", (long long)dlc_p->%s);\n",
                nm, least, nm, least == 0 ? "negative" : "not positive", nm);
    }
  /* instance: for a chain, dtype, runtime attrs and compile-time dims;
   * else the first row of the selection table (data: dtype, runtime attrs,
   * compile-time dims, shape-bucket bounds) that matches the call */
  sb_puts(s, "  int dlc_inst = -1;\n");
  if (is_chain(eo)) {
    inst_match(c, s, eo);
  } else {
    sel_loop(c, s, eo, "workspace_bytes");
  }
  /* a clear reason when nothing matches */
  sb_puts(s, "  if (dlc_inst < 0) {\n");
  sb_printf(s, "    if (!dlc__dtype_name(dtype)) return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s: dtype = %%d is not a dlc_dtype\", (int)dtype);\n", on);
  sb_puts(s, "    int dlc_dtype_ok = 0;\n");
  for (int d = 0; d < eo->op->ndtypes; d++) sb_printf(s, "    dlc_dtype_ok |= dtype == %s;\n", dlc_dtype_enum(eo->op->dtypes[d]));
  sb_printf(s, "    if (!dlc_dtype_ok) return dlc__fail(DLC_ERROR_NOT_SUPPORTED, \"%s: dtype %%s (%%d) is not compiled; add it to the manifest's dtypes\", dlc__dtype_name(dtype), (int)dtype);\n", on);
  if (eo->op->nvkeys) {
    const char *fmt = "", *args = "";
    for (int i = 0; i < g->nsig_attrs; i++) {
      const char *nm = lc(A, g->sig_attrs[i]);
      fmt = arena_printf(A, "%s%s%s=(%%lld,%%lld)", fmt, *fmt ? " " : "", g->sig_attrs[i]);
      args = arena_printf(A, "%s, (long long)dlc_p->%s0, (long long)dlc_p->%s1", args, nm, nm);
    }
    for (int k2 = 0; k2 < eo->op->nvkeys; k2++)
      if (eo->op->vkeys[k2].is_dim) {
        const char *nm = lc(A, eo->op->vkeys[k2].name);
        fmt = arena_printf(A, "%s%s%s=%%lld", fmt, *fmt ? " " : "", eo->op->vkeys[k2].name);
        args = arena_printf(A, "%s, (long long)dlc_p->%s", args, nm);
      }
    sb_printf(s,
              "    return dlc__fail(DLC_ERROR_NOT_SUPPORTED, \"%s: no kernel compiled for %s; add this variant to the "
              "manifest's ops[%d].variants\"%s);\n",
              on, fmt, eo->index, args);
  } else {
    sb_printf(s, "    return dlc__fail(DLC_ERROR_NOT_SUPPORTED, \"%s: no kernel for this call\");\n", on);
  }
  sb_puts(s, "  }\n");
}

static void instance_dispatch(emit_ctx *c, strbuf *s, const emit_op *eo, const int *row90) {
  arena *A = c->A;
  const fe_graph *g = eo->inst[0].fe;
  const char *on = eo->op->name;
  /* The checks below depend on the instance's shapes, layouts, widths and
   * plan.  Each instance's are built apart, in two parts: the tensors (dims,
   * spans, alignment, overlap: the arguments) and the rest (the width, the
   * grid and bounds of its kernels, the launch).  Each part is written once
   * for the instances whose text is the same: the tensors once for the
   * entry point when every instance checks them alike (the dtypes of one
   * element size, the buckets of one variant), the rest once a case,
   * labelled with every instance it serves. */
  char **tens = ARENA_ARRAY(A, char *, eo->ninst), **wid = ARENA_ARRAY(A, char *, eo->ninst),
       **rest = ARENA_ARRAY(A, char *, eo->ninst);
  const char *launch = arena_printf(A,
                                    "return dlc__launch(&dlc__k_%s[dlc_k], dlc_p, sizeof *dlc_p, (unsigned)dlc_gx, "
                                    "(unsigned)dlc_gy, (unsigned)dlc_gz, stream);\n",
                                    on);
  const char *pick = arena_printf(A,
                                  "const int dlc_k = dlc__row_%s[dlc_inst][dlc__width_slot(dlc_vec)];\n"
                                  "    if (dlc_k < 0) return dlc__fail(DLC_ERROR_INTERNAL, \"%s: no kernel of width %%d\", dlc_vec);\n",
                                  on, on);
  for (int i = 0; i < eo->ninst; i++) {
    const emit_instance *in = &eo->inst[i];
    const gpu_kernel *k = in->k;
    strbuf cb = {0};
    dispatch_tensors(A, &cb, g, in, on, true, false);
    tens[i] = arena_strdup(A, sb_str(&cb));
    sb_free(&cb);
    dispatch_width(A, &cb, k, on, false);
    wid[i] = arena_strdup(A, sb_str(&cb));
    sb_free(&cb);
    if (row90[i] >= 0) DISPATCH90[k->sm90a->algo](A, &cb, g, k->sm90a, on);
    dispatch_kpart32(A, &cb, eo, k);
    dispatch_grid(A, &cb, g, k, on, false);
    if (k->reduce)
      sb_printf(&cb,
                "    /* split-K: the slices' partials in the workspace (the selection checked its size), then the\n"
                "     * second kernel sums them in order and applies the epilogue */\n"
                "    int64_t dlc_sn = 1, dlc_ktp = 1;\n"
                "    dlc__query_workspace(dlc__split_ws_%s(dlc_inst, dlc_p, &dlc_sn, &dlc_ktp));\n"
                "    dlc_p->dlc_split_ws = workspace;\n"
                "    dlc_p->dlc_split_ktp = (int32_t)dlc_ktp, dlc_p->dlc_split_n = (int32_t)dlc_sn;\n"
                "    %s"
                "    dlc_st = dlc__launch(&dlc__k_%s[dlc_k], dlc_p, sizeof *dlc_p, (unsigned)dlc_gx, (unsigned)(dlc_gy * dlc_sn), "
                "(unsigned)dlc_gz, stream);\n"
                "    if (dlc_st != DLC_SUCCESS) return dlc_st;\n"
                "    return dlc__launch(&dlc__k_%s[dlc__red_%s[dlc_inst]], dlc_p, sizeof *dlc_p, (unsigned)dlc_gx, %d, "
                "(unsigned)dlc_gz, stream);\n",
                on, pick, on, on, on, k->reduce->split_parts);
    else
      sb_printf(&cb, "    %s    %s", pick, launch);
    rest[i] = arena_strdup(A, sb_str(&cb));
    sb_free(&cb);
  }
  sb_puts(s, "  dlc_status dlc_st;\n");
  once_or_groups(A, s, tens, eo->ninst, "the tensors");
  sb_puts(s, "  int dlc_vec = 0;\n");
  once_or_groups(A, s, wid, eo->ninst, "the chunk width: the widest every operand's alignment allows");
  switch_groups(A, s, rest, eo->ninst, "");
  sb_printf(s, "  return dlc__fail(DLC_ERROR_INTERNAL, \"%s: no instance\");\n}\n\n", on);
}

/* dlc_<op>_workspace_size() of an op whose plans use no workspace (0 for
 * every shape: the entry points exist so that the ABI stays when a later
 * plan uses one), and dlc_<op>(), which is dlc_<op>_ws() without one. */
static void plain_extras(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n) {
  int ns = shape_args(a, n);
  workspace_prototype(c, s, eo, a, n);
  sb_puts(s, " {\n  (void)dtype");
  for (int i = 0; i < ns; i++) sb_printf(s, ", (void)%s", a[i].name);
  sb_puts(s, ";\n  return 0;\n}\n\n");
  plain_calls_ws(c, s, eo, a, n);
}

/* dlc_<op>_query(): dlc_<op>_ws() with the runtime's query sink set, so
 * that every launch is recorded into *info instead of run (runtime.c). */
static void query_fn(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n) {
  const char *on = eo->op->name;
  query_prototype(c, s, eo, a, n);
  sb_printf(s, " {\n  if (!info) return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s_query: info is NULL\");\n", on);
  sb_printf(s, "  dlc__query_begin(info);\n  return dlc__query_end(dlc_%s_ws(dtype", on);
  for (int i = 0; i < n; i++) sb_printf(s, ",%s%s", i % 8 == 0 ? "\n      " : " ", a[i].name);
  sb_puts(s, ", workspace, workspace_bytes, NULL));\n}\n\n");
}

static void dispatch_op(emit_ctx *c, strbuf *s, const emit_op *eo) {
  arena *A = c->A;
  const char *on = eo->op->name;
  arg *a;
  int n = host_entry_args(c, eo, &a);
  int *row90 = kernel_table(c, s, eo);
  kpart_fns(A, s, eo);
  ws_param_conv pc[WS_MAX_VALUES];
  int npc = plan_param_convs(c, eo, a, n, pc);
  if (is_chain(eo)) {
    sb_puts(s, "\n");
    if (npc) {
      ws_impl_prototype(s, eo, a, n);
      sb_puts(s, ";\n");
      sb_printf(s, "static size_t dlc__wsize_%s(dlc_dtype dtype", on);
      for (int i = 0, ns = shape_args(a, n); i < ns; i++) sb_printf(s, ", %s %s", a[i].type, a[i].name);
      sb_puts(s, ", int dlc_pre);\n\n");
    }
    dispatch_chain_extras(c, s, eo, a, n, pc, npc);
    prototype_ws(c, s, eo, a, n);
    if (npc) {
      /* the call: the plan's run with nothing made */
      sb_printf(s, " {\n  return dlc__ws_%s(dtype", on);
      for (int i = 0; i < n; i++) sb_printf(s, ",%s%s", i % 8 == 0 ? "\n      " : " ", a[i].name);
      sb_puts(s, ", workspace, workspace_bytes, stream, NULL);\n}\n\n");
      ws_impl_prototype(s, eo, a, n);
    }
  } else if (has_split(eo)) {
    selection_tables(c, s, eo);
    dispatch_split_extras(c, s, eo, a, n);
    prototype_ws(c, s, eo, a, n);
  } else {
    selection_tables(c, s, eo);
    plain_extras(c, s, eo, a, n);
    prototype_ws(c, s, eo, a, n);
  }
  entry_checks(c, s, eo, a, n);
  if (is_chain(eo)) dispatch_chain_body(c, s, eo, pc, npc);
  else instance_dispatch(c, s, eo, row90);
  query_fn(c, s, eo, a, n);
  param_conv_fns(c, s, eo, pc, npc);
  plan_functions_c(c, s, eo, (int)(eo - c->ops), a, n);
}

static const char *cstr(arena *A, const char *t);

/* dlc_build_info()'s part from the manifest (libkernels/runtime.c adds the
 * version and the backend's): its file name and the FNV-1a hash of its
 * text, the ops, and the manifest's archs (the dispatch's rows; which of
 * them have SASS is the library build's, dlc__sass_archs), as one JSON
 * object in a C string. */
static void build_info(emit_ctx *c, strbuf *s) {
  cJSON *o = cJSON_CreateObject(), *mf = cJSON_AddObjectToObject(o, "manifest");
  const char *base = strrchr(c->manifest_path, '/');
  cJSON_AddStringToObject(mf, "name", base ? base + 1 : c->manifest_path);
  cJSON_AddStringToObject(mf, "fnv1a64", arena_printf(c->A, "%016llx", (unsigned long long)c->m->text_hash));
  cJSON *ops = cJSON_AddArrayToObject(o, "ops"), *archs = cJSON_AddArrayToObject(o, "archs");
  for (int i = 0; i < c->nops; i++) cJSON_AddItemToArray(ops, cJSON_CreateString(c->ops[i].op->name));
  for (int i = 0; i < c->m->narchs; i++) cJSON_AddItemToArray(archs, cJSON_CreateString(c->m->archs[i]));
  char *t = cJSON_PrintUnformatted(o);
  sb_printf(s, "/* dlc_build_info()'s manifest part (libkernels/runtime.c) */\nconst char dlc__build_manifest[] = \"%s\";\n",
            cstr(c->A, t ? t : "{}"));
  cJSON_free(t);
  cJSON_Delete(o);
}

char *emit_dispatch_c(emit_ctx *c) {
  strbuf s = {0};
  sb_printf(&s, "/* Generated by dlcgen %s from %s.  Do not edit.\n", DLC_VERSION, cmt(c->A, c->manifest_path));
  sb_puts(&s, " * The entry points: argument checks, instance and kernel selection (arch, dtype,\n"
              " * variant, alignment), the launch grid, and the launch through the backend. */\n");
  sb_puts(&s, "#include <stdint.h>\n#include <string.h>\n\n#include \"dlc/dlc.h\"\n#include \"dlc_internal.h\"\n#include \"dlc_params.h\"\n\n");
  for (int o = 0; o < c->nops; o++) dispatch_op(c, &s, &c->ops[o]);
  build_info(c, &s);
  return sb_take(&s);
}

/* ---- the entry table (libkernels/dlc_entries.h) ---------------------------------------- */

/* The text of a C string literal: quotes, backslashes, bytes outside
 * printable ASCII and the question marks of a trigraph are escaped. */
static const char *cstr(arena *A, const char *t) {
  strbuf b = {0};
  for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
    if (*p == '"' || *p == '\\') sb_printf(&b, "\\%c", *p);
    else if (*p < 0x20 || *p >= 0x7f || *p == '?') sb_printf(&b, "\\%03o", *p);
    else sb_printf(&b, "%c", *p);
  }
  return sb_take_arena(&b, A);
}

/* The arguments instance `in` fixes: its runtime attr values and its
 * compile-time dims, as {arg, value}. */
static int entry_fixed(const emit_instance *in, const arg *a, int n, strbuf *s) {
  int nf = 0;
  for (const cJSON *v = in->attr_values ? in->attr_values->child : NULL; v; v = v->next)
    for (int e = 0; e < 2; e++)
      for (int i = 0; i < n; i++)
        if (a[i].role == ARG_ATTR && a[i].elem == e && strcmp(a[i].what, v->string) == 0) {
          double val = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, e)->valuedouble : v->valuedouble;
          sb_printf(s, "%s{%d, %lld}", nf++ ? ", " : "", i, (long long)val);
        }
  for (const cJSON *v = in->dim_values ? in->dim_values->child : NULL; v; v = v->next)
    for (int i = 0; i < n; i++)
      if (a[i].role == ARG_DIM && strcmp(a[i].what, v->string) == 0)
        sb_printf(s, "%s{%d, %lld}", nf++ ? ", " : "", i, (long long)v->valuedouble);
  return nf;
}

/* Test sizes of the dims (0: none): a free dim that alone sizes the M or N
 * group of one of the instance's kernels spans one tile of its plan and 8
 * more, one that alone sizes the K group two tiles and 8 more (the steady
 * loop and the remainder), so that a test on them runs full tiles and
 * tails; the largest over a chain's kernels. */
static void entry_extents(const emit_instance *in, const arg *a, int n, strbuf *s) {
  for (int i = 0; i < n; i++) {
    int64_t ext = 0;
    /* every kernel of a chain: the largest */
    for (const gpu_kernel *k = in->k; k; k = k->next) {
      const gpu_view *v = &k->v;
      const int *ax[3] = {v->m_axes, v->n_axes, v->k_axes}, nax[3] = {v->nm, v->nn, v->nk};
      for (int g = 0; g < 3 && a[i].role == ARG_DIM; g++) {
        const sx *sz = nax[g] == 1 ? v->r->it[ax[g][0]].size : NULL;
        if (!sz || !h_plain(sz) || sz->nterms != 1 || strcmp(sz->terms[0].atom->name, a[i].what) != 0) continue;
        int64_t e = (int64_t)k->plan.tile[g] * (g == 2 ? 2 : 1) + 8;
        if (e > ext) ext = e;
      }
    }
    sb_printf(s, "%s%lld", i ? ", " : "", (long long)ext);
  }
}

/* A tf32 kernel's operands, which it rounds before the products, as the
 * entry table's initializer; {NULL, NULL} for the other kernels. */
static const char *tf32_operands(arena *A, const gpu_kernel *k) {
  if (skel_shape_of(k) != SKEL_CONTRACTION || k->mma_k != 8) return "{NULL, NULL}";
  const gpu_operand *o;
  const gpu_view *gv;
  const char *na = cstr(A, gpuir_width_operand(k, 0, &o, &gv)->name), *nb = cstr(A, gpuir_width_operand(k, 1, &o, &gv)->name);
  return arena_printf(A, "{\"%s\", \"%s\"}", na, nb);
}

/* Instance i of the entry table: the op's, then its given ones. */
static const emit_instance *entry_inst(const emit_op *eo, int i) {
  return i < eo->ninst ? &eo->inst[i] : &eo->given[i - eo->ninst];
}

/* The entry table's rows of dlc__k_<op>, in the order dispatch_op writes
 * them: each instance's kernels, the sm90a row's kernels, then the given
 * instances' (emit_op.given). */
static void entry_kernels(emit_ctx *c, strbuf *s, const emit_op *eo) {
  arena *A = c->A;
  const char *on = eo->op->name;
  int nrows = 0;
  for (int i = 0; i < eo->ninst; i++)
    for (const gpu_kernel *k = eo->inst[i].k; k; k = k->next) nrows += k->nvec + (k->reduce ? 1 : 0);
  int *row90 = ARENA_ARRAY(A, int, eo->ninst + 1);
  for (int i = 0; i < eo->ninst; i++) row90[i] = !is_chain(eo) && eo->inst[i].k->sm90a ? nrows++ : -1;
  sb_printf(s, "static const dlc__entry_kernel kernels_%s[] = {\n", on);
  for (int i = 0; i < eo->ninst; i++)
    for (const gpu_kernel *k = eo->inst[i].k; k; k = k->next) {
      int nv = 0;
      for (int side = 0; side < gpuir_width_sides(k); side++) {
        const gpu_operand *o;
        const gpu_view *gv;
        nv += gpuir_width_operand(k, side, &o, &gv)->signature;
      }
      const char *vt = nv ? arena_printf(A, "vec_%s_%d_%d", on, i, k->chain_index) : "NULL";
      const char *tf = tf32_operands(A, k);
      for (int v = 0; v < k->nvec; v++)
        sb_printf(s, "    {\"%s\", %d, %d, %d, %d, %s, %s, %s, %d},\n", kernel_name_k(A, eo, &eo->inst[i], k, k->vecs[v]),
                  i, k->vecs[v], k->chain_index, nv, vt, tf, arch_mask(c),
                  row90[i] >= 0 && k->vecs[v] >= eo->inst[i].k->sm90a->vecs[0] ? row90[i] : -1);
      /* split-K: the second kernel (step 1), which reads no operand */
      if (k->reduce)
        sb_printf(s, "    {\"%s\", %d, %d, 1, 0, NULL, {NULL, NULL}, %s, -1},\n", reduce_name(A, eo, &eo->inst[i]), i,
                  k->vecs[0], arch_mask(c));
    }
  for (int i = 0; i < eo->ninst; i++) {
    if (row90[i] < 0) continue;
    /* its width needs the same tensors aligned as the instance's kernel's */
    const gpu_kernel *k = eo->inst[i].k;
    int nv = 0;
    for (int side = 0; side < gpuir_width_sides(k); side++) {
      const gpu_operand *o;
      const gpu_view *gv;
      nv += gpuir_width_operand(k, side, &o, &gv)->signature;
    }
    sb_printf(s, "    {\"%s\", %d, %d, 0, %d, %s, {NULL, NULL}, DLC__ARCH_SM90A, -1},\n", kernel_name_90(A, eo, &eo->inst[i]), i,
              k->sm90a->vecs[0], nv, nv ? arena_printf(A, "vec_%s_%d_0", on, i) : "NULL");
  }
  for (int i = 0; i < eo->ngiven; i++) {
    const gpu_kernel *k = eo->given[i].k;
    int nv = 0;
    for (int side = 0; side < gpuir_width_sides(k); side++) {
      const gpu_operand *o;
      const gpu_view *gv;
      nv += gpuir_width_operand(k, side, &o, &gv)->signature;
    }
    for (int v = 0; v < k->nvec; v++)
      sb_printf(s, "    {\"%s\", %d, %d, 0, %d, %s, %s, %s, -1},\n", kernel_name_given(A, eo, &eo->given[i], k->vecs[v]),
                eo->ninst + i, k->vecs[v], nv, nv ? arena_printf(A, "vec_%s_%d_%d", on, eo->ninst + i, k->chain_index) : "NULL",
                tf32_operands(A, k), arch_mask(c));
  }
  sb_puts(s, "};\n");
}

static void entry_op(emit_ctx *c, strbuf *s, const emit_op *eo) {
  arena *A = c->A;
  const char *on = eo->op->name;
  arg *a;
  int n = host_entry_args(c, eo, &a);
  sb_printf(s, "/* %s (manifest ops[%d]) */\n", on, eo->index);
  sb_printf(s, "static const dlc__entry_arg args_%s[] = {\n", on);
  for (int i = 0; i < n; i++)
    sb_printf(s, "    {\"%s\", %s, \"%s\", %d},\n", a[i].name, ARG_ROLE_C[a[i].role], cstr(A, a[i].what), a[i].elem);
  sb_puts(s, "};\n");
  /* the instances, then a chain op's given ones (emit_op.given: the calls
   * with too small a workspace, dlc_<op>()'s) */
  const int nall = eo->ninst + eo->ngiven;
  for (int i = 0; i < nall; i++) {
    const emit_instance *in = entry_inst(eo, i);
    strbuf f = {0};
    if (entry_fixed(in, a, n, &f))
      sb_printf(s, "static const dlc__entry_fixed fixed_%s_%d[] = {%s};\n", on, i, sb_str(&f));
    sb_free(&f);
    /* each kernel's width operands that are signature tensors (a chain's
     * values between kernels live in the workspace, always aligned) */
    for (const gpu_kernel *k = in->k; k; k = k->next) {
      strbuf v = {0};
      for (int side = 0; side < gpuir_width_sides(k); side++) {
        const gpu_operand *o;
        const gpu_view *gv;
        const region_memref *m = gpuir_width_operand(k, side, &o, &gv);
        if (m->signature) sb_printf(&v, "%s\"%s\"", v.n ? ", " : "", cstr(A, m->name));
      }
      if (v.n) sb_printf(s, "static const char *const vec_%s_%d_%d[] = {%s};\n", on, i, k->chain_index, sb_str(&v));
      sb_free(&v);
    }
    sb_printf(s, "static const int64_t extent_%s_%d[] = {", on, i);
    entry_extents(in, a, n, s);
    sb_puts(s, "};\n");
    if (in->nbounds) {
      /* a bound on a product of dims: a function of the arguments */
      for (int b = 0; b < in->nbounds; b++) {
        if (!in->bext || !in->bext[b]) continue;
        sb_printf(s, "/* %s */\nstatic int64_t product_%s_%d_%d(const int64_t *dlc_a) {\n  struct {\n", cmt(A, in->bdim[b]),
                  on, i, b);
        for (int j = 0; j < n; j++)
          if (a[j].role == ARG_DIM) sb_printf(s, "    int64_t %s;\n", lc(A, a[j].what));
        sb_puts(s, "  } dlc_params = {");
        for (int j = 0, nf = 0; j < n; j++)
          if (a[j].role == ARG_DIM) sb_printf(s, "%sdlc_a[%d]", nf++ ? ", " : "", j);
        sb_printf(s, "}, *dlc_p = &dlc_params;\n  return dlc__bound_value(%s);\n}\n", hsx(A, in->bext[b]));
      }
      sb_printf(s, "static const dlc__entry_bound bounds_%s_%d[] = {", on, i);
      for (int b = 0; b < in->nbounds; b++) {
        bool product = in->bext && in->bext[b];
        int ai = -1;
        for (int j = 0; j < n && !product; j++)
          if (a[j].role == ARG_DIM && strcmp(a[j].what, in->bdim[b]) == 0) ai = j;
        if (ai < 0 && !product)
          diag_report(c->dl, D_INTERNAL, "entries", NULL, "%s %s: bucket dim %s is no argument", on, in->tag, in->bdim[b]);
        sb_printf(s, "%s{%d, %lld, %lld, %s}", b ? ", " : "", ai, (long long)in->blo[b], (long long)in->bhi[b],
                  product ? arena_printf(A, "product_%s_%d_%d", on, i, b) : "NULL");
      }
      sb_puts(s, "};\n");
    }
  }
  sb_printf(s, "static const dlc__entry_instance inst_%s[] = {\n", on);
  for (int i = 0; i < nall; i++) {
    const emit_instance *in = entry_inst(eo, i);
    strbuf f = {0};
    int nf = entry_fixed(in, a, n, &f);
    sb_free(&f);
    const char *fx = nf ? arena_printf(A, "fixed_%s_%d", on, i) : "NULL";
    const char *bd = in->nbounds ? arena_printf(A, "bounds_%s_%d", on, i) : "NULL";
    sb_printf(s, "    {\"%s\", %s, %d, %s, extent_%s_%d, %d, %d, %s, %d},\n", cstr(A, in->tag), dlc_dtype_enum(in->dt), nf, fx,
              on, i, in->source, in->nbounds, bd, (is_chain(eo) && i < eo->ninst) || in->k->reduce ? 1 : 0);
  }
  sb_puts(s, "};\n");
  entry_kernels(c, s, eo);
  sb_printf(s, "static dlc_status call_%s(dlc_dtype dtype, const dlc__arg_value *a) {\n  return dlc_%s(dtype", on, on);
  for (int i = 0; i < n; i++)
    sb_printf(s, ",%sa[%d].%c", i % 8 == 0 ? "\n      " : " ", i, a[i].role == ARG_INPUT || a[i].role == ARG_OUTPUT ? 'p' : 'i');
  sb_puts(s, ", NULL);\n}\n");
  {
    sb_printf(s, "static dlc_status call_ws_%s(dlc_dtype dtype, const dlc__arg_value *a, void *ws, size_t ws_bytes,\n"
                 "                              struct CUstream_st *stream) {\n"
                 "  return dlc_%s_ws(dtype", on, on);
    for (int i = 0; i < n; i++)
      sb_printf(s, ",%sa[%d].%c", i % 8 == 0 ? "\n      " : " ", i, a[i].role == ARG_INPUT || a[i].role == ARG_OUTPUT ? 'p' : 'i');
    sb_puts(s, ", ws, ws_bytes, stream);\n}\n");
    sb_printf(s, "static size_t workspace_size_%s(dlc_dtype dtype, const dlc__arg_value *a) {\n  return dlc_%s_workspace_size(dtype",
              on, on);
    for (int i = 0; i < shape_args(a, n); i++) sb_printf(s, ", a[%d].i", i);
    sb_puts(s, ");\n}\n");
    sb_printf(s, "static dlc_status query_%s(dlc_dtype dtype, const dlc__arg_value *a, void *ws, size_t ws_bytes, dlc_launch_info *info) {\n"
                 "  return dlc_%s_query(dtype", on, on);
    for (int i = 0; i < n; i++)
      sb_printf(s, ",%sa[%d].%c", i % 8 == 0 ? "\n      " : " ", i, a[i].role == ARG_INPUT || a[i].role == ARG_OUTPUT ? 'p' : 'i');
    sb_puts(s, ", ws, ws_bytes, info);\n}\n");
  }
  plan_entry_thunks(c, s, eo, a, n);
  sb_puts(s, "\n");
}

char *emit_entries_c(emit_ctx *c) {
  strbuf s = {0};
  sb_printf(&s, "/* Generated by dlcgen %s from %s.  Do not edit.\n", DLC_VERSION, cmt(c->A, c->manifest_path));
  sb_puts(&s, " * The entry table: every entry point and every kernel of this library as data, for\n"
              " * tests that run them all (libkernels/dlc_entries.h; not part of the library). */\n");
  sb_puts(&s, "#include <stddef.h>\n\n#include \"dlc/dlc.h\"\n#include \"dlc_entries.h\"\n#include \"dlc_internal.h\"\n\n");
  for (int o = 0; o < c->nops; o++) entry_op(c, &s, &c->ops[o]);
  sb_printf(&s, "const char dlc__entries_manifest[] = \"%s\";\n", cstr(c->A, c->manifest_path));
  sb_printf(&s, "const int dlc__nentries = %d;\n", c->nops);
  sb_puts(&s, "const dlc__entry dlc__entries[] = {\n");
  for (int o = 0; o < c->nops; o++) {
    const emit_op *eo = &c->ops[o];
    const char *on = eo->op->name;
    arg *a;
    int n = host_entry_args(c, eo, &a), nk = 0;
    for (int i = 0; i < eo->ninst; i++)
      for (const gpu_kernel *k = eo->inst[i].k; k; k = k->next)
        nk += k->nvec + (k->reduce ? 1 : 0) + (!is_chain(eo) && k->sm90a != NULL);
    for (int i = 0; i < eo->ngiven; i++) nk += eo->given[i].k->nvec;
    ws_param_conv pc[WS_MAX_VALUES];
    unsigned made = 0;
    for (int j = 0, npc = plan_param_convs(c, eo, a, n, pc); j < npc; j++) made |= 1u << pc[j].k->chain_index;
    const char *ws = arena_printf(c->A,
                                  "call_ws_%s, workspace_size_%s, query_%s, plan_create_%s, plan_run_%s, "
                                  "plan_workspace_size_%s, plan_destroy_%s, plan_args_%s, %d, 0x%xu",
                                  on, on, on, on, on, on, on, on, plan_npool(c, eo, a, n), made);
    sb_printf(&s, "    {\"%s\", %d, %d, args_%s, call_%s, %d, inst_%s, %d, kernels_%s, %s},\n", on, eo->index, n, on, on,
              eo->ninst + eo->ngiven, on, nk, on, ws);
  }
  sb_puts(&s, "};\n");
  return sb_take(&s);
}
