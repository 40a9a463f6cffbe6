/* The operator catalogue dlcgen writes with a library (issue 38 item 5):
 * docs/ops.md for people and ops.json for tools, both rendered from one
 * model of each op built here from what the back half compiled: the
 * manifest's description, the entry points and their arguments, the
 * tensors' shapes, layouts and dtypes, the variants, the compile-time
 * constants of the graph, each instance's kernels by arch (skeleton, algo,
 * tile, chunk widths), its shape bucket, the workspace rule and the limits
 * the entry point checks.  emit_ops_h puts the description and the
 * constants into each op's doc comment (catalog_description,
 * catalog_constants). */
#include "emit_int.h"

#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "arch.h"
#include "skel/skel.h"
#include "strbuf.h"

const char *catalog_description(emit_ctx *c, const emit_op *eo) {
  const cJSON *ops = cJSON_GetObjectItemCaseSensitive(c->m->root, "ops");
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ops, eo->index), "description");
  if (!cJSON_IsString(d)) d = cJSON_GetObjectItemCaseSensitive(eo->op->graph, "description");
  return cJSON_IsString(d) ? d->valuestring : NULL;
}

/* A double as the graph writes it, shortest first ("1e-05", "0.5"). */
static const char *num(arena *A, double v) {
  for (int p = 1; p <= 17; p++) {
    const char *t = arena_printf(A, "%.*g", p, v);
    if (strtod(t, NULL) == v) return t;
  }
  return arena_printf(A, "%.17g", v);
}

/* The graph's compile-time constants as it writes them (before a variant
 * binds a dim: attention's scale stays "rsqrt(D)"): each node's scalar
 * operand, scale and pad value, as {"node", "what", "value"}.  Which nodes
 * have one comes from the Frontend's nodes; the value from the node of the
 * graph's JSON it was read from (fe_node.src). */
static cJSON *constants(arena *A, const emit_op *eo) {
  cJSON *a = cJSON_CreateArray();
  const fe_graph *g = eo->inst[0].fe;
  const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(eo->op->graph, "graph");
  for (int i = 0; i < g->nnodes; i++) {
    const fe_node *nd = &g->nodes[i];
    const char *key = NULL, *what = NULL;
    if (nd->attrs.has_scalar) key = "scalar", what = arena_printf(A, "%s scalar", ewise_name(nd->fn));
    else if (nd->attrs.has_scale) key = "scale", what = "scale";
    else if (nd->op == FE_PAD) key = "value", what = "pad value";
    const cJSON *v = key ? cJSON_GetObjectItemCaseSensitive(
                               cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(nodes, nd->src), "attrs"), key)
                         : NULL;
    if (!v) continue; /* none, or a node the Frontend made (a cast) */
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "node", nd->name);
    cJSON_AddStringToObject(o, "what", what);
    if (cJSON_IsNumber(v)) cJSON_AddRawToObject(o, "value", num(A, v->valuedouble));
    else cJSON_AddItemToObject(o, "value", cJSON_Duplicate(v, 1));
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

const char *catalog_constants(emit_ctx *c, const emit_op *eo) {
  cJSON *k = constants(c->A, eo);
  const char *t = "";
  for (const cJSON *o = k->child; o; o = o->next) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "value");
    t = arena_printf(c->A, "%s%s%s (%s) %s", t, *t ? ", " : "", cJSON_GetObjectItemCaseSensitive(o, "node")->valuestring,
                     cJSON_GetObjectItemCaseSensitive(o, "what")->valuestring,
                     cJSON_IsString(v) || cJSON_IsRaw(v) ? v->valuestring : "?");
  }
  cJSON_Delete(k);
  return t;
}

static cJSON *tile(const gpu_kernel *k) {
  const int t[3] = {k->plan.tile[0], k->plan.tile[1], k->plan.tile[2]};
  return cJSON_CreateIntArray(t, 3);
}

/* One kernel of an instance: its skeleton and plan, and the names of its
 * dispatch rows (one a chunk width; what dlc_<op>_query reports). */
typedef enum { KJ_ROW, KJ_REDUCE, KJ_SM90A, KJ_GIVEN } kj_kind;
static cJSON *kernel_json(arena *A, const emit_op *eo, const emit_instance *in, const gpu_kernel *k, kj_kind kind) {
  cJSON *o = cJSON_CreateObject(), *names = cJSON_AddArrayToObject(o, "names");
  if (kind == KJ_SM90A) cJSON_AddItemToArray(names, cJSON_CreateString(kernel_name_90(A, eo, in)));
  else if (kind == KJ_REDUCE) cJSON_AddItemToArray(names, cJSON_CreateString(reduce_name(A, eo, in)));
  else if (kind == KJ_GIVEN)
    for (int v = 0; v < k->nvec; v++) cJSON_AddItemToArray(names, cJSON_CreateString(kernel_name_given(A, eo, in, k->vecs[v])));
  else
    for (int v = 0; v < k->nvec; v++) cJSON_AddItemToArray(names, cJSON_CreateString(kernel_name_k(A, eo, in, k, k->vecs[v])));
  cJSON_AddStringToObject(o, "region", k->r->name);
  cJSON_AddStringToObject(o, "algo", algo_name(k->algo));
  cJSON_AddStringToObject(o, "skeleton", algo_template(k->algo));
  cJSON_AddItemToObject(o, "tile", tile(k));
  cJSON_AddNumberToObject(o, "threads", k->threads);
  cJSON_AddNumberToObject(o, "smem_bytes", k->smem);
  cJSON_AddItemToObject(o, "widths", cJSON_CreateIntArray(k->vecs, k->nvec));
  if (k->reduce) cJSON_AddNumberToObject(o, "split_k", k->plan.split_k);
  return o;
}

/* What the entry point checks of an instance's first kernel beyond the
 * arguments: each grid dimension that grows with the dims, and a
 * contraction's reduction, which the kernels count in 32 bits. */
static cJSON *limits(arena *A, const gpu_kernel *k) {
  cJSON *a = cJSON_CreateArray();
  static const char *const lim[3] = {"2147483647", "65535", "65535"};
  for (int d = 0; d < 3; d++) {
    int64_t v;
    if (sx_is_int(k->grid[d], &v)) continue;
    const char *w = host_grid_what(k, d);
    cJSON_AddItemToArray(a, cJSON_CreateString(arena_printf(A, "grid %c (%s) <= %s", "xyz"[d], *w ? w : "blocks", lim[d])));
  }
  if (skel_shape_of(k) == SKEL_CONTRACTION)
    cJSON_AddItemToArray(a, cJSON_CreateString(arena_printf(A, "reduction extent <= 2^31 - %d", k->plan.tile[2] + 1)));
  return a;
}

static cJSON *op_json(emit_ctx *c, const emit_op *eo) {
  arena *A = c->A;
  const char *on = eo->op->name;
  const fe_graph *g = eo->inst[0].fe;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", on);
  cJSON_AddNumberToObject(o, "index", eo->index);
  const char *desc = catalog_description(c, eo);
  if (desc) cJSON_AddStringToObject(o, "description", desc);
  else cJSON_AddNullToObject(o, "description");
  cJSON *dts = cJSON_AddArrayToObject(o, "dtypes");
  for (int d = 0; d < eo->op->ndtypes; d++) cJSON_AddItemToArray(dts, cJSON_CreateString(dtype_name(eo->op->dtypes[d])));
  arg *a;
  int n = host_entry_args(c, eo, &a);
  strbuf p = {0};
  host_prototype(c, &p, eo, a, n);
  cJSON_AddStringToObject(o, "signature", sb_str(&p));
  sb_free(&p);
  cJSON *args = cJSON_AddArrayToObject(o, "arguments");
  static const char *const role[] = {"dim", "attr", "input", "output", "ld"};
  for (int i = 0; i < n; i++) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", a[i].name);
    cJSON_AddStringToObject(x, "role", role[a[i].role]);
    cJSON_AddStringToObject(x, "doc", a[i].doc);
    cJSON_AddItemToArray(args, x);
  }
  cJSON *ts = cJSON_AddArrayToObject(o, "tensors");
  for (int io = 0; io < 2; io++)
    for (int i = 0; i < (io ? g->nout : g->nin); i++) {
      const fe_tensor *t = &g->tensors[io ? g->outputs[i] : g->inputs[i]];
      const cJSON *decl = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(eo->op->graph, "tensors"), t->name);
      const cJSON *dt = cJSON_GetObjectItemCaseSensitive(decl, "dtype");
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "name", t->name);
      cJSON_AddStringToObject(x, "io", io ? "output" : "input");
      cJSON_AddStringToObject(x, "shape", host_written_shape(A, eo, t));
      cJSON_AddStringToObject(x, "dtype", cJSON_IsString(dt) ? dt->valuestring : dtype_name(t->dt));
      cJSON_AddStringToObject(x, "layout", t->rank == 2 ? arena_printf(A, "row-major, rows ld%s elements apart", lc(A, t->name))
                                                        : "packed row-major");
      cJSON_AddItemToArray(ts, x);
    }
  const cJSON *mops = cJSON_GetObjectItemCaseSensitive(c->m->root, "ops");
  const cJSON *var = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(mops, eo->index), "variants");
  cJSON_AddItemToObject(o, "variants", var ? cJSON_Duplicate(var, 1) : cJSON_CreateObject());
  cJSON_AddItemToObject(o, "constants", constants(A, eo));
  cJSON *ep = cJSON_AddArrayToObject(o, "entry_points");
  static const char *const sfx[] = {"", "_ws", "_workspace_size", "_query"};
  for (int i = 0; i < 4; i++) cJSON_AddItemToArray(ep, cJSON_CreateString(arena_printf(A, "dlc_%s%s", on, sfx[i])));
  const char *ws = is_chain(eo) ? "chain" : has_split(eo) ? "split_k" : "none";
  cJSON_AddStringToObject(o, "workspace", ws);
  cJSON_AddStringToObject(
      o, "workspace_rule",
      is_chain(eo) && eo->ngiven
          ? arena_printf(A, "optional: with dlc_%s_workspace_size() bytes (256-byte aligned) dlc_%s_ws runs several "
                            "kernels (the layout pass's conversions into the workspace, then the op); with fewer, and "
                            "dlc_%s always, one kernel on the operands in their stored layouts (the .given instances)",
                         on, on, on)
      : is_chain(eo) ? arena_printf(A, "runs as several kernels: dlc_%s_ws needs dlc_%s_workspace_size() bytes, 256-byte "
                                     "aligned (the values between the kernels); dlc_%s without one is refused", on, on, on)
      : has_split(eo) ? arena_printf(A, "optional: with dlc_%s_workspace_size() bytes (256-byte aligned) the shape buckets "
                                        "that split K run it; without, the plan that needs none", on)
                      : arena_printf(A, "none: dlc_%s_workspace_size() is 0 and dlc_%s_ws runs as dlc_%s", on, on, on));
  cJSON *insts = cJSON_AddArrayToObject(o, "instances");
  for (int i = 0; i < eo->ninst + eo->ngiven; i++) {
    const bool given = i >= eo->ninst;
    const emit_instance *in = given ? &eo->given[i - eo->ninst] : &eo->inst[i];
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "tag", in->tag);
    cJSON_AddStringToObject(x, "dtype", dtype_name(in->dt));
    if (in->bucket) {
      cJSON *b = cJSON_AddObjectToObject(x, "bucket"), *bounds;
      cJSON_AddStringToObject(b, "name", in->bucket);
      bounds = cJSON_AddObjectToObject(b, "bounds");
      for (int j = 0; j < in->nbounds; j++) {
        const int64_t r[2] = {in->blo[j], in->bhi[j]};
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)r[0]));
        /* INT64_MAX is no double: an open upper bound is null */
        cJSON_AddItemToArray(pair, r[1] == INT64_MAX ? cJSON_CreateNull() : cJSON_CreateNumber((double)r[1]));
        cJSON_AddItemToObject(bounds, in->bdim[j], pair);
      }
    } else {
      cJSON_AddNullToObject(x, "bucket");
    }
    /* by arch: the manifest's archs run the instance's kernels (their SASS);
     * an sm90a device runs its sm90a kernel first where there is one */
    cJSON *by = cJSON_AddObjectToObject(x, "archs");
    for (int ai = 0; ai < c->m->narchs; ai++) {
      const char *arch = c->m->archs[ai];
      dlc_arch ar = ARCH_NONE;
      cJSON *ks = cJSON_CreateArray();
      if (arch_parse(arch, &ar) && ar == ARCH_SM90A && in->k->sm90a && !is_chain(eo)) {
        cJSON *k90 = kernel_json(A, eo, in, in->k->sm90a, KJ_SM90A);
        cJSON_AddStringToObject(k90, "when", in->k->sm90a->algo == ALGO_CPASYNC_WGMMA
                                                 ? "the operands allow 16-byte chunks (the widest width)"
                                                 : "its operands' tensor maps encode (16-byte aligned rows)");
        cJSON_AddItemToArray(ks, k90);
      }
      if (given) {
        /* a chain op's plan without a workspace: its sm80 kernel on every arch */
        cJSON *kg = kernel_json(A, eo, in, in->k, KJ_GIVEN);
        cJSON_AddStringToObject(kg, "when", arena_printf(A, "the workspace is smaller than dlc_%s_workspace_size() bytes", on));
        cJSON_AddItemToArray(ks, kg);
      }
      for (const gpu_kernel *k = given ? NULL : in->k; k; k = k->next) {
        cJSON_AddItemToArray(ks, kernel_json(A, eo, in, k, KJ_ROW));
        if (k->reduce) cJSON_AddItemToArray(ks, kernel_json(A, eo, in, k->reduce, KJ_REDUCE));
      }
      cJSON_AddItemToObject(by, arch, ks);
    }
    cJSON_AddItemToObject(x, "limits", limits(A, in->k));
    cJSON_AddItemToArray(insts, x);
  }
  return o;
}

static cJSON *catalog(emit_ctx *c) {
  cJSON *o = cJSON_CreateObject(), *mf = cJSON_AddObjectToObject(o, "manifest");
  cJSON_AddStringToObject(mf, "name", c->manifest_path);
  cJSON_AddStringToObject(mf, "fnv1a64", arena_printf(c->A, "%016llx", (unsigned long long)c->m->text_hash));
  cJSON *archs = cJSON_AddArrayToObject(o, "archs"), *ops = cJSON_AddArrayToObject(o, "ops");
  for (int i = 0; i < c->m->narchs; i++) cJSON_AddItemToArray(archs, cJSON_CreateString(c->m->archs[i]));
  for (int i = 0; i < c->nops; i++) cJSON_AddItemToArray(ops, op_json(c, &c->ops[i]));
  return o;
}

char *emit_ops_json(emit_ctx *c) {
  cJSON *o = catalog(c);
  char *t = cJSON_Print(o);
  cJSON_Delete(o);
  strbuf s = {0};
  sb_printf(&s, "%s\n", t ? t : "{}");
  cJSON_free(t);
  return sb_take(&s);
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* A JSON value as one line (a variant's values, a bound). */
static void put_json(strbuf *s, const cJSON *v) {
  char *t = cJSON_PrintUnformatted(v);
  sb_puts(s, t ? t : "");
  cJSON_free(t);
}

char *emit_ops_md(emit_ctx *c) {
  cJSON *cat = catalog(c);
  strbuf s = {0};
  sb_printf(&s, "<!-- Generated by dlcgen %s from %s.  Do not edit. -->\n", DLC_VERSION, c->manifest_path);
  sb_printf(&s, "# Operators of this library\n\nGenerated from `%s` (fnv1a64 `%s`) for", c->manifest_path,
            str(cJSON_GetObjectItemCaseSensitive(cat, "manifest"), "fnv1a64"));
  for (const cJSON *a = cJSON_GetObjectItemCaseSensitive(cat, "archs")->child; a; a = a->next)
    sb_printf(&s, " %s%s", a->valuestring, a->next ? "," : ".");
  sb_puts(&s, "  The same catalogue, as data, is `ops.json` (both installed in `share/<library>/`).\n"
              "Every op has the four entry points listed; `<dlc/dlc.h>` says what they check.\n");
  for (const cJSON *op = cJSON_GetObjectItemCaseSensitive(cat, "ops")->child; op; op = op->next) {
    sb_printf(&s, "\n## %s\n\n", str(op, "name"));
    const char *d = str(op, "description");
    if (*d) sb_printf(&s, "%s\n\n", d);
    sb_puts(&s, "```c\n");
    sb_printf(&s, "%s;\n```\n\n", str(op, "signature"));
    sb_puts(&s, "- **dtypes**:");
    for (const cJSON *t = cJSON_GetObjectItemCaseSensitive(op, "dtypes")->child; t; t = t->next)
      sb_printf(&s, " %s%s", t->valuestring, t->next ? "," : "\n");
    sb_puts(&s, "- **tensors**:\n");
    for (const cJSON *t = cJSON_GetObjectItemCaseSensitive(op, "tensors")->child; t; t = t->next)
      sb_printf(&s, "  - %s `%s` %s, %s, %s\n", str(t, "io"), str(t, "name"), str(t, "shape"), str(t, "dtype"),
                str(t, "layout"));
    const cJSON *var = cJSON_GetObjectItemCaseSensitive(op, "variants");
    sb_puts(&s, "- **variants** (compiled in; other values are DLC_ERROR_NOT_SUPPORTED):");
    if (!var->child) sb_puts(&s, " none\n");
    for (const cJSON *v = var->child; v; v = v->next) {
      sb_printf(&s, " `%s` ", v->string);
      put_json(&s, v);
      sb_puts(&s, v->next ? ";" : "\n");
    }
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(op, "constants");
    sb_puts(&s, "- **constants** (compile time):");
    if (!k->child) sb_puts(&s, " none\n");
    for (const cJSON *v = k->child; v; v = v->next) {
      sb_printf(&s, " `%s` (%s) ", str(v, "node"), str(v, "what"));
      put_json(&s, cJSON_GetObjectItemCaseSensitive(v, "value"));
      sb_puts(&s, v->next ? ";" : "\n");
    }
    sb_puts(&s, "- **entry points**:");
    for (const cJSON *e = cJSON_GetObjectItemCaseSensitive(op, "entry_points")->child; e; e = e->next)
      sb_printf(&s, " `%s`%s", e->valuestring, e->next ? "," : "\n");
    sb_printf(&s, "- **workspace** (%s): %s\n", str(op, "workspace"), str(op, "workspace_rule"));
    sb_puts(&s, "\n| instance | bucket | arch | kernels (skeleton, algo, tile BMxBNxBK, chunk widths) | limits |\n"
                "|---|---|---|---|---|\n");
    for (const cJSON *in = cJSON_GetObjectItemCaseSensitive(op, "instances")->child; in; in = in->next) {
      const cJSON *b = cJSON_GetObjectItemCaseSensitive(in, "bucket");
      strbuf bt = {0}, lt = {0};
      if (cJSON_IsObject(b))
        for (const cJSON *x = cJSON_GetObjectItemCaseSensitive(b, "bounds")->child; x; x = x->next) {
          const cJSON *hi = cJSON_GetArrayItem(x, 1);
          sb_printf(&bt, "%s%s in [%.0f, %s]", bt.n ? ", " : "", x->string, cJSON_GetArrayItem(x, 0)->valuedouble,
                    cJSON_IsNull(hi) ? "inf" : arena_printf(c->A, "%.0f", hi->valuedouble));
        }
      for (const cJSON *l = cJSON_GetObjectItemCaseSensitive(in, "limits")->child; l; l = l->next)
        sb_printf(&lt, "%s%s", lt.n ? "; " : "", l->valuestring);
      const cJSON *all = cJSON_GetObjectItemCaseSensitive(in, "archs");
      for (const cJSON *ar = all->child; ar; ar = ar->next) {
        /* one row for the archs that run the same kernels, at the first of them */
        bool seen = false;
        for (const cJSON *q = all->child; q != ar && !seen; q = q->next) seen = cJSON_Compare(q, ar, true);
        if (seen) continue;
        sb_printf(&s, "| %s | %s%s%s | %s", str(in, "tag"), cJSON_IsObject(b) ? str(b, "name") : "",
                  cJSON_IsObject(b) ? ": " : "", bt.n ? sb_str(&bt) : "every shape", ar->string);
        for (const cJSON *q = ar->next; q; q = q->next)
          if (cJSON_Compare(q, ar, true)) sb_printf(&s, ", %s", q->string);
        sb_puts(&s, " | ");
        for (const cJSON *kk = ar->child; kk; kk = kk->next) {
          const cJSON *t = cJSON_GetObjectItemCaseSensitive(kk, "tile"), *w = cJSON_GetObjectItemCaseSensitive(kk, "widths");
          const char *sep = kk == ar->child ? "" : *str(kk->prev, "when") ? "; else " : "; then ";
          sb_printf(&s, "%s%s `%s` %dx%dx%d, widths", sep, str(kk, "skeleton"),
                    str(kk, "algo"), cJSON_GetArrayItem(t, 0)->valueint, cJSON_GetArrayItem(t, 1)->valueint,
                    cJSON_GetArrayItem(t, 2)->valueint);
          for (const cJSON *x = w->child; x; x = x->next) sb_printf(&s, "%s%d", x == w->child ? " " : "/", x->valueint);
          const cJSON *sk = cJSON_GetObjectItemCaseSensitive(kk, "split_k");
          if (sk) sb_printf(&s, ", K in up to %d slices", sk->valueint);
          if (*str(kk, "when")) sb_printf(&s, " (when %s)", str(kk, "when"));
        }
        sb_printf(&s, " | %s |\n", lt.n ? sb_str(&lt) : "");
      }
      sb_free(&bt), sb_free(&lt);
    }
  }
  cJSON_Delete(cat);
  return sb_take(&s);
}
