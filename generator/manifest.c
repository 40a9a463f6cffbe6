/* Manifest reader (see manifest.h and docs/manifest.md). */
#include "manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "dsl.h"
#include "jsonutil.h"

static const char *const top_keys[] = {"schema", "description", "archs", "ops", "layout", NULL};
static const char *const op_keys[] = {"name", "description", "graph", "dtypes", "plans", "variants", "shape_sets", "math", "fusion", NULL};
static const char *const plan_keys[] = {"tile", "stages", "bind", "warp_tile", "cache", "vectorize",
                                        "predicate_tail", "epilogue", "arch", "layout_hints", "algo_choice",
                                        "local_edges", "async", "barrier_model", NULL};
static const char *const shape_set_keys[] = {"name", "bounds", NULL};
/* Variant combinations per dtype that mf_instances enumerates. */
#define MF_MAX_COMBOS 4096

bool mf_arch_known(const char *arch) {
  dlc_arch a;
  return arch_parse(arch, &a) && strcmp(arch_name(a), arch) == 0;
}

static bool is_ident(const char *s) {
  if (!*s || strlen(s) > 64 || (s[0] >= '0' && s[0] <= '9')) return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  return true;
}

/* The directory part of a path ("" for a bare file name). */
static char *dirname_of(arena *A, const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? arena_strndup(A, path, (size_t)(slash - path + 1)) : arena_strdup(A, "");
}

static void read_plans(ju_ctx *c, mf_op *op, const cJSON *plans, const char *path) {
  if (cJSON_IsString(plans)) {
    if (strcmp(plans->valuestring, "auto") != 0)
      diag_report(c->dl, D_MANIFEST_VALUE, path, "Use \"auto\" or a list of plan objects.",
                  "plans is '%s'", plans->valuestring);
    op->plans_auto = true;
    return;
  }
  if (!cJSON_IsArray(plans) || cJSON_GetArraySize(plans) == 0) {
    diag_report(c->dl, D_MANIFEST_SCHEMA, path, "Use \"auto\" or a non-empty list of plan objects.",
                "plans must be \"auto\" or a list, not %s", ju_type_name(plans));
    return;
  }
  op->nplans = cJSON_GetArraySize(plans);
  op->plans = ARENA_ARRAY(c->A, cJSON *, op->nplans);
  int i = 0;
  for (cJSON *p = plans->child; p; p = p->next, i++) {
    const char *pp = ju_path_idx(c, path, i);
    if (!cJSON_IsObject(p)) {
      diag_report(c->dl, D_MANIFEST_SCHEMA, pp, NULL, "a plan is an object, not %s", ju_type_name(p));
      continue;
    }
    ju_check_keys(c, p, pp, plan_keys);
    const cJSON *tile = cJSON_GetObjectItemCaseSensitive(p, "tile");
    if (tile && (!cJSON_IsArray(tile) || cJSON_GetArraySize(tile) != 3))
      diag_report(c->dl, D_MANIFEST_SCHEMA, ju_path_key(c, pp, "tile"), "Write tile as [BM, BN, BK].",
                  "tile must be an array of three integers");
    else if (tile) {
      int k = 0;
      for (const cJSON *t = tile->child; t; t = t->next, k++) {
        int64_t v;
        ju_int_item(c, t, ju_path_idx(c, ju_path_key(c, pp, "tile"), k), 1, 1024, &v);
      }
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(p, "stages");
    int64_t v;
    if (st) ju_int_item(c, st, ju_path_key(c, pp, "stages"), 1, 8, &v);
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(p, "arch");
    dlc_arch pa;
    if (arch && (!cJSON_IsString(arch) || !arch_parse(arch->valuestring, &pa)))
      diag_report(c->dl, D_MANIFEST_VALUE, ju_path_key(c, pp, "arch"), arch_use_hint(),
                  "unknown plan arch");
    op->plans[i] = p;
  }
}

static void read_variants(ju_ctx *c, mf_op *op, const cJSON *var, const char *path) {
  if (!cJSON_IsObject(var)) {
    diag_report(c->dl, D_MANIFEST_SCHEMA, path, NULL, "variants must be an object, not %s", ju_type_name(var));
    return;
  }
  int n = cJSON_GetArraySize(var);
  op->vkeys = ARENA_ARRAY(c->A, mf_variant_key, n > 0 ? n : 1);
  /* the graph's signature says which keys are allowed */
  const cJSON *sig = cJSON_IsObject(op->graph) ? cJSON_GetObjectItemCaseSensitive(op->graph, "signature") : NULL;
  const cJSON *dims = sig ? cJSON_GetObjectItemCaseSensitive(sig, "dims") : NULL;
  const cJSON *attrs = sig ? cJSON_GetObjectItemCaseSensitive(sig, "attrs") : NULL;
  for (cJSON *k = var->child; k; k = k->next) {
    const char *kp = ju_path_key(c, path, k->string);
    bool is_attr = false, is_dim = false;
    for (const cJSON *a = cJSON_IsArray(attrs) ? attrs->child : NULL; a; a = a->next)
      if (cJSON_IsString(a) && strcmp(a->valuestring, k->string) == 0) is_attr = true;
    for (const cJSON *a = cJSON_IsArray(dims) ? dims->child : NULL; a; a = a->next)
      if (cJSON_IsString(a) && strcmp(a->valuestring, k->string) == 0) is_dim = true;
    if (!is_attr && !is_dim) {
      diag_report(c->dl, D_MANIFEST_UNKNOWN_KEY, kp,
                  "Variant keys are the graph's signature.attrs (stride, pad, dilation) or signature.dims.",
                  "variant key '%s' is neither a runtime attr nor a dim of the graph", k->string);
      continue;
    }
    if (!cJSON_IsArray(k) || cJSON_GetArraySize(k) == 0) {
      diag_report(c->dl, D_MANIFEST_SCHEMA, kp, NULL, "variant '%s' must be a non-empty list of values", k->string);
      continue;
    }
    mf_variant_key *vk = &op->vkeys[op->nvkeys++];
    vk->name = k->string;
    vk->is_dim = is_dim;
    vk->nvalues = cJSON_GetArraySize(k);
    vk->values = ARENA_ARRAY(c->A, cJSON *, vk->nvalues);
    int i = 0;
    for (cJSON *v = k->child; v; v = v->next, i++) {
      const char *vp = ju_path_idx(c, kp, i);
      int64_t x;
      bool ok;
      if (is_dim) {
        ok = ju_int_item(c, v, vp, 1, JU_INT_MAX, &x);
      } else if (cJSON_IsArray(v)) {
        ok = cJSON_GetArraySize(v) == 2 && ju_int_item(c, v->child, ju_path_idx(c, vp, 0), 0, 1 << 20, &x) &&
             ju_int_item(c, v->child->next, ju_path_idx(c, vp, 1), 0, 1 << 20, &x);
        if (!ok && cJSON_GetArraySize(v) != 2)
          diag_report(c->dl, D_MANIFEST_SCHEMA, vp, NULL, "expected an integer or a pair of integers");
      } else {
        ok = ju_int_item(c, v, vp, 0, 1 << 20, &x);
      }
      for (int j = 0; j < i && ok; j++) {
        char *a = cJSON_PrintUnformatted(v), *b2 = cJSON_PrintUnformatted(vk->values[j]);
        if (a && b2 && strcmp(a, b2) == 0)
          diag_report(c->dl, D_MANIFEST_VALUE, vp, "List each value once.", "value %s is listed twice", a);
        free(a);
        free(b2);
      }
      vk->values[i] = v;
    }
  }
}

static void read_shape_sets(ju_ctx *c, mf_op *op, const cJSON *ss, const char *path) {
  if (!cJSON_IsArray(ss)) {
    diag_report(c->dl, D_MANIFEST_SCHEMA, path, NULL, "shape_sets must be a list, not %s", ju_type_name(ss));
    return;
  }
  const cJSON *sig = cJSON_IsObject(op->graph) ? cJSON_GetObjectItemCaseSensitive(op->graph, "signature") : NULL;
  const cJSON *dims = sig ? cJSON_GetObjectItemCaseSensitive(sig, "dims") : NULL;
  int n = cJSON_GetArraySize(ss);
  op->shape_sets = ARENA_ARRAY(c->A, mf_shape_set, n > 0 ? n : 1);
  int i = 0;
  for (const cJSON *s = ss->child; s; s = s->next, i++) {
    const char *sp = ju_path_idx(c, path, i);
    if (!cJSON_IsObject(s)) {
      diag_report(c->dl, D_MANIFEST_SCHEMA, sp, NULL, "a shape set is an object, not %s", ju_type_name(s));
      continue;
    }
    ju_check_keys(c, s, sp, shape_set_keys);
    mf_shape_set *set = &op->shape_sets[op->nshape_sets];
    if (!ju_string(c, s, "name", sp, true, &set->name)) continue;
    for (int j = 0; j < op->nshape_sets; j++)
      if (strcmp(op->shape_sets[j].name, set->name) == 0)
        diag_report(c->dl, D_MANIFEST_DUPLICATE, sp, NULL, "shape set '%s' is defined twice", set->name);
    const cJSON *b = ju_object(c, s, "bounds", sp, true);
    if (!b) continue;
    int nb = cJSON_GetArraySize(b);
    set->dim = ARENA_ARRAY(c->A, const char *, nb > 0 ? nb : 1);
    set->lo = ARENA_ARRAY(c->A, int64_t, nb > 0 ? nb : 1);
    set->hi = ARENA_ARRAY(c->A, int64_t, nb > 0 ? nb : 1);
    for (const cJSON *d = b->child; d; d = d->next) {
      const char *dp = ju_path_key(c, ju_path_key(c, sp, "bounds"), d->string);
      bool known = false;
      for (const cJSON *a = cJSON_IsArray(dims) ? dims->child : NULL; a; a = a->next)
        if (cJSON_IsString(a) && strcmp(a->valuestring, d->string) == 0) known = true;
      if (!known) {
        diag_report(c->dl, D_MANIFEST_UNKNOWN_KEY, dp, "Bounds are given for signature dims.",
                    "'%s' is not a signature dim of the graph", d->string);
        continue;
      }
      int64_t lo, hi;
      if (!cJSON_IsArray(d) || cJSON_GetArraySize(d) != 2) {
        diag_report(c->dl, D_MANIFEST_SCHEMA, dp, "Write bounds as [lo, hi].", "expected [lo, hi]");
        continue;
      }
      if (!ju_int_item(c, d->child, ju_path_idx(c, dp, 0), 1, JU_INT_MAX, &lo) ||
          !ju_int_item(c, d->child->next, ju_path_idx(c, dp, 1), 1, JU_INT_MAX, &hi))
        continue;
      if (lo > hi) {
        diag_report(c->dl, D_MANIFEST_VALUE, dp, NULL, "empty range [%lld, %lld]", (long long)lo, (long long)hi);
        continue;
      }
      set->dim[set->nbounds] = d->string;
      set->lo[set->nbounds] = lo;
      set->hi[set->nbounds++] = hi;
    }
    op->nshape_sets++;
  }
}

manifest *mf_read(arena *A, const char *path, diag_list *dl) {
  char *text = ju_read_file(path, dl, path);
  if (!text) return NULL;
  manifest *m = mf_read_text(A, text, path, dl);
  free(text);
  return m;
}

manifest *mf_read_text(arena *A, const char *text, const char *path, diag_list *dl) {
  int nerr0 = dl->nerrors;
  cJSON *root = ju_parse(text, dl, path);
  if (!root) return NULL;
  manifest *m = ARENA_NEW(A, manifest);
  m->A = A;
  m->path = arena_strdup(A, path);
  m->root = root;
  /* FNV-1a, 64 bits: an identity of the text, not a security hash */
  m->text_hash = 0xcbf29ce484222325u;
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) m->text_hash = (m->text_hash ^ *p) * 0x100000001b3u;
  m->layout = cJSON_GetObjectItemCaseSensitive(root, "layout");
  m->graphs = cJSON_CreateArray();
  ju_ctx c = {A, dl, D_MANIFEST_SCHEMA, D_MANIFEST_UNKNOWN_KEY, path};
  const char *P = "manifest";
  if (!cJSON_IsObject(root)) {
    diag_report(dl, D_MANIFEST_SCHEMA, P, NULL, "a manifest is a JSON object, not %s", ju_type_name(root));
    mf_free(m);
    return NULL;
  }
  ju_check_keys(&c, root, P, top_keys);
  const char *schema;
  if (ju_string(&c, root, "schema", P, true, &schema) && strcmp(schema, "dlc-manifest/1") != 0)
    diag_report(dl, D_MANIFEST_VALUE, "manifest.schema", "This dlcgen reads \"dlc-manifest/1\".",
                "unsupported schema '%s'", schema);
  const cJSON *archs = ju_array(&c, root, "archs", P, true);
  if (archs) {
    int n = cJSON_GetArraySize(archs), i = 0;
    if (n == 0) diag_report(dl, D_MANIFEST_VALUE, "manifest.archs", NULL, "archs is empty");
    m->archs = ARENA_ARRAY(A, const char *, n > 0 ? n : 1);
    for (const cJSON *a = archs->child; a; a = a->next, i++) {
      const char *ap = ju_path_idx(&c, "manifest.archs", i);
      if (!cJSON_IsString(a) || !mf_arch_known(a->valuestring)) {
        diag_report(dl, D_MANIFEST_VALUE, ap, arch_use_hint(), "unknown arch %s",
                    cJSON_IsString(a) ? a->valuestring : ju_type_name(a));
        continue;
      }
      for (int j = 0; j < m->narchs; j++)
        if (strcmp(m->archs[j], a->valuestring) == 0)
          diag_report(dl, D_MANIFEST_VALUE, ap, "List each arch once.", "arch %s is listed twice", a->valuestring);
      m->archs[m->narchs++] = a->valuestring;
    }
  }
  const cJSON *ops = ju_array(&c, root, "ops", P, true);
  if (ops) {
    int n = cJSON_GetArraySize(ops), i = 0;
    if (n == 0) diag_report(dl, D_MANIFEST_VALUE, "manifest.ops", NULL, "ops is empty");
    m->ops = ARENA_ARRAY(A, mf_op, n > 0 ? n : 1);
    for (cJSON *o = ops->child; o; o = o->next, i++) {
      const char *op_path = ju_path_idx(&c, "manifest.ops", i);
      if (!cJSON_IsObject(o)) {
        diag_report(dl, D_MANIFEST_SCHEMA, op_path, NULL, "an op is an object, not %s", ju_type_name(o));
        continue;
      }
      ju_check_keys(&c, o, op_path, op_keys);
      mf_op *op = &m->ops[m->nops];
      op->at = op_path;
      if (!ju_string(&c, o, "name", op_path, true, &op->name)) continue;
      if (!is_ident(op->name)) {
        diag_report(dl, D_MANIFEST_VALUE, ju_path_key(&c, op_path, "name"),
                    "An op name becomes the C function dlc_<name>: use letters, digits and '_'.",
                    "op name '%s' is not a C identifier", op->name);
        continue;
      }
      for (int j = 0; j < m->nops; j++)
        if (strcmp(m->ops[j].name, op->name) == 0)
          diag_report(dl, D_MANIFEST_DUPLICATE, op_path, NULL, "op '%s' is defined twice", op->name);
      cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "graph");
      if (!g) {
        diag_report(dl, D_MANIFEST_SCHEMA, op_path, NULL, "missing required key 'graph'");
        continue;
      }
      if (cJSON_IsString(g)) {
        const char *gp = g->valuestring[0] == '/' ? g->valuestring
                                                  : arena_printf(A, "%s%s", dirname_of(A, path), g->valuestring);
        dsl_srcmap *gmap;
        cJSON *gj = dsl_read_graph_file(A, gp, ju_path_key(&c, op_path, "graph"), &gmap, dl);
        if (!gj) continue;
        op->srcmap = gmap;
        cJSON_AddItemToArray(m->graphs, gj);
        op->graph = gj;
        op->graph_where = gp;
        op->graph_ref = arena_strdup(A, g->valuestring);
      } else if (cJSON_IsObject(g)) {
        op->graph = g;
        op->graph_where = ju_path_key(&c, op_path, "graph");
        op->graph_ref = "(inline)";
      } else {
        diag_report(dl, D_MANIFEST_SCHEMA, ju_path_key(&c, op_path, "graph"), NULL,
                    "graph must be a path or an inline graph object, not %s", ju_type_name(g));
        continue;
      }
      const cJSON *dts = ju_array(&c, o, "dtypes", op_path, true);
      if (dts) {
        int nd = cJSON_GetArraySize(dts), k = 0;
        if (nd == 0) diag_report(dl, D_MANIFEST_VALUE, ju_path_key(&c, op_path, "dtypes"), NULL, "dtypes is empty");
        op->dtypes = ARENA_ARRAY(A, dtype, nd > 0 ? nd : 1);
        for (const cJSON *d = dts->child; d; d = d->next, k++) {
          dtype t;
          const char *dp = ju_path_idx(&c, ju_path_key(&c, op_path, "dtypes"), k);
          if (!cJSON_IsString(d) || !dtype_parse(d->valuestring, &t) || (t != DT_FP16 && t != DT_BF16 && t != DT_FP32)) {
            diag_report(dl, D_MANIFEST_VALUE, dp, "Use fp16, bf16 or fp32.", "unknown dtype %s",
                        cJSON_IsString(d) ? d->valuestring : ju_type_name(d));
            continue;
          }
          for (int j = 0; j < op->ndtypes; j++)
            if (op->dtypes[j] == t) diag_report(dl, D_MANIFEST_VALUE, dp, NULL, "dtype %s is listed twice", d->valuestring);
          op->dtypes[op->ndtypes++] = t;
        }
      }
      const cJSON *plans = cJSON_GetObjectItemCaseSensitive(o, "plans");
      if (!plans) diag_report(dl, D_MANIFEST_SCHEMA, op_path, "Add \"plans\": \"auto\".", "missing required key 'plans'");
      else read_plans(&c, op, plans, ju_path_key(&c, op_path, "plans"));
      const cJSON *var = cJSON_GetObjectItemCaseSensitive(o, "variants");
      if (var) read_variants(&c, op, var, ju_path_key(&c, op_path, "variants"));
      double combos = 1;
      for (int k = 0; k < op->nvkeys; k++) combos *= op->vkeys[k].nvalues;
      if (combos > MF_MAX_COMBOS)
        diag_report(dl, D_MANIFEST_VALUE, ju_path_key(&c, op_path, "variants"),
                    "Split the op into several ops, or list fewer variant values.",
                    "the variants give %.0f combinations per dtype; the limit is %d", combos, MF_MAX_COMBOS);
      const cJSON *ss = cJSON_GetObjectItemCaseSensitive(o, "shape_sets");
      if (ss) read_shape_sets(&c, op, ss, ju_path_key(&c, op_path, "shape_sets"));
      const cJSON *fusion = cJSON_GetObjectItemCaseSensitive(o, "fusion");
      if (fusion) {
        if (cJSON_IsString(fusion) && strcmp(fusion->valuestring, "off") == 0) op->no_fusion = true;
        else if (!cJSON_IsString(fusion) || strcmp(fusion->valuestring, "auto") != 0)
          diag_report(dl, D_MANIFEST_VALUE, ju_path_key(&c, op_path, "fusion"), "Use \"auto\" or \"off\".",
                      "fusion is %s%s%s", cJSON_IsString(fusion) ? "'" : "",
                      cJSON_IsString(fusion) ? fusion->valuestring : ju_type_name(fusion), cJSON_IsString(fusion) ? "'" : "");
      }
      const cJSON *math = cJSON_GetObjectItemCaseSensitive(o, "math");
      if (math) {
        if (cJSON_IsString(math) && strcmp(math->valuestring, "ieee") == 0) op->math_ieee = true;
        else if (!cJSON_IsString(math) || strcmp(math->valuestring, "approx") != 0)
          diag_report(dl, D_MANIFEST_VALUE, ju_path_key(&c, op_path, "math"), "Use \"approx\" or \"ieee\".",
                      "math is %s%s%s", cJSON_IsString(math) ? "'" : "", cJSON_IsString(math) ? math->valuestring : ju_type_name(math),
                      cJSON_IsString(math) ? "'" : "");
      }
      m->nops++;
    }
  }
  if (dl->nerrors > nerr0) {
    mf_free(m);
    return NULL;
  }
  return m;
}

void mf_free(manifest *m) {
  if (!m) return;
  cJSON_Delete(m->root);
  cJSON_Delete(m->graphs);
  m->root = m->graphs = NULL;
}

static void value_tag(char *buf, size_t n, const cJSON *v) {
  if (cJSON_IsArray(v)) {
    size_t k = 0;
    for (const cJSON *e = v->child; e; e = e->next)
      k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%s%lld", e == v->child ? "" : "x", (long long)e->valuedouble);
  } else {
    snprintf(buf, n, "%lld", (long long)v->valuedouble);
  }
}

int mf_instances(arena *A, const mf_op *op, mf_instance **out) {
  int combos = 1;
  for (int k = 0; k < op->nvkeys; k++) {
    combos *= op->vkeys[k].nvalues;
    if (combos > MF_MAX_COMBOS) combos = MF_MAX_COMBOS; /* mf_read reported it */
  }
  int n = op->ndtypes * combos;
  mf_instance *v = calloc((size_t)(n > 0 ? n : 1), sizeof(mf_instance));
  if (!v) dlc_die_oom();
  int idx = 0;
  for (int d = 0; d < op->ndtypes; d++)
    for (int c = 0; c < combos; c++) {
      mf_instance *in = &v[idx++];
      in->op = op;
      in->dt = op->dtypes[d];
      char tag[512];
      size_t tl = (size_t)snprintf(tag, sizeof tag, "%s", dtype_name(in->dt));
      int rest = c;
      for (int k = 0; k < op->nvkeys; k++) {
        const mf_variant_key *vk = &op->vkeys[k];
        const cJSON *val = vk->values[rest % vk->nvalues];
        rest /= vk->nvalues;
        cJSON **dst = vk->is_dim ? &in->dim_values : &in->attr_values;
        if (!*dst) *dst = cJSON_CreateObject();
        cJSON_AddItemToObject(*dst, vk->name, cJSON_Duplicate(val, 1));
        char vt[64];
        value_tag(vt, sizeof vt, val);
        if (tl < sizeof tag) tl += (size_t)snprintf(tag + tl, sizeof tag - tl, ".%s%s", vk->name, vt);
      }
      in->tag = arena_strdup(A, tag);
    }
  *out = v;
  return n;
}

void mf_instances_free(mf_instance *v, int n) {
  for (int i = 0; i < n; i++) {
    cJSON_Delete(v[i].attr_values);
    cJSON_Delete(v[i].dim_values);
  }
  free(v);
}
