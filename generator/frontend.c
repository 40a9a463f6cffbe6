/* Frontend IR: reading, instantiating, shape inference and verification of a
 * graph (spec §2; graph format in docs/graph-format.md).
 *
 * Reading is strict: unknown keys, wrong types, out-of-range numbers,
 * duplicate names, undeclared tensors and cycles are diagnostics, never
 * crashes.  After reading, nodes are sorted topologically and every
 * intermediate tensor gets a dtype and a shape by the op's shape rule. */
#include "frontend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"

static const struct {
  const char *name;
  int min_in, max_in;
  const char *attrs;
} fe_table[] = {
#define X(e, name, mn, mx, attrs, infer) {name, mn, mx, attrs},
#include "frontend.def"
#undef X
};

static const struct {
  const char *name;
  int arity;
  const char *decomp;
} ew_table[] = {
#define X(e, name, arity, decomp) {name, arity, decomp},
#include "ewise.def"
#undef X
};

const char *fe_op_name(fe_op op) { return fe_table[op].name; }
const char *ewise_name(ewise_fn fn) { return ew_table[fn].name; }
int ewise_arity(ewise_fn fn) { return ew_table[fn].arity; }
const char *ewise_decomposition(ewise_fn fn) { return ew_table[fn].decomp; }
const char *reduce_op_name(reduce_op op) { return op == RED_SUM ? "sum" : op == RED_MAX ? "max" : "min"; }

typedef struct reader {
  arena *A;
  diag_list *dl;
  ju_ctx jc;
  fe_graph *g;
  const fe_instance *inst;
  const char *where;
} reader;

bool fe_pooled_param(const fe_tensor *t) {
  return t->role && t->storage && strcmp(t->role, "param") == 0 && strcmp(t->storage, "const_pool") == 0;
}

int fe_find_tensor(const fe_graph *g, const char *name) {
  for (int i = 0; i < g->ntensors; i++)
    if (strcmp(g->tensors[i].name, name) == 0) return i;
  return -1;
}

bool fe_is_dim(const fe_graph *g, const char *sym) {
  for (int i = 0; i < g->ndims; i++)
    if (strcmp(g->dims[i], sym) == 0) return true;
  return false;
}

static int add_tensor(reader *r, const char *name, const char *at) {
  fe_graph *g = r->g;
  fe_tensor t = {0};
  t.name = arena_strdup(r->A, name);
  t.dt = DT_T;
  t.producer = -1;
  t.sig_input = t.sig_output = -1;
  t.at = at;
  ARENA_PUSH(r->A, g->tensors, g->ntensors, g->cap_tensors, t);
  return g->ntensors - 1;
}

static bool is_ident(const char *s) {
  if (!*s || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z'))) return false;
  for (const char *p = s; *p; p++)
    if (!(*p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')))
      return false;
  return strlen(s) <= 64;
}

/* A node name: identifiers joined by '.' (the DSL names the nodes of an
 * inlined subgraph "call.node"). */
static bool is_node_name(const char *s) {
  if (strlen(s) > 256) return false;
  char part[65];
  for (const char *p = s;;) {
    size_t n = strcspn(p, ".");
    if (n == 0 || n >= sizeof part) return false;
    memcpy(part, p, n);
    part[n] = 0;
    if (!is_ident(part)) return false;
    if (!p[n]) return true;
    p += n + 1;
  }
}

/* A name as a diagnostic quotes it: control characters and non-ASCII bytes
 * escaped, at most 80 characters. */
static const char *quoted(arena *A, const char *s) {
  char *r = arena_alloc(A, 80 * 4 + 4), *q = r;
  size_t i = 0;
  for (; s[i] && i < 80; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c >= 0x7f || c == '\\') q += sprintf(q, "\\x%02x", c);
    else *q++ = (char)c;
  }
  strcpy(q, s[i] ? "..." : "");
  return r;
}

/* Substitute compile-time dims bound by the instance (e.g. D=64). */
static const sx *bind_dims_fn(void *ctx, sx_atom_kind kind, const char *name) {
  reader *r = ctx;
  if (kind != SXA_PARAM) return NULL;
  for (int i = 0; i < r->g->nbound; i++)
    if (strcmp(r->g->bound_name[i], name) == 0) return sx_int(r->A, r->g->bound_value[i]);
  return NULL;
}

/* A shape entry or size-like attribute: an integer, a symbol or an
 * expression over dims.  `allow_derived` lets non-dim symbols through (they
 * become PARAMs that align_params binds later). */
static const sx *read_size(reader *r, const cJSON *item, const char *path, int64_t lo, bool allow_derived) {
  if (cJSON_IsNumber(item)) {
    int64_t v;
    if (!ju_int_item(&r->jc, item, path, lo, JU_INT_MAX, &v)) return NULL;
    return sx_int(r->A, v);
  }
  if (!cJSON_IsString(item)) {
    diag_report(r->dl, D_BAD_SHAPE, path, NULL, "a size must be an integer or a symbol, not %s",
                ju_type_name(item));
    return NULL;
  }
  const char *text = item->valuestring;
  /* the size syntax: integers, symbols, + - * / % floor() and parentheses
   * (sx_parse also reads primed names such as N', which are not symbols) */
  if (strspn(text, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_ +-*/%()") != strlen(text)) {
    diag_report(r->dl, D_BAD_SHAPE, path, NULL, "cannot parse size expression '%s'", text);
    return NULL;
  }
  /* every identifier in the expression is a PARAM; check them against dims */
  const char **names = ARENA_ARRAY(r->A, const char *, strlen(text) + 1);
  int nn = 0;
  for (const char *p = text; *p;) {
    if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_') {
      const char *b = p;
      while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_') p++;
      const char *nm = arena_strndup(r->A, b, (size_t)(p - b));
      if (strcmp(nm, "floor") == 0) continue;
      if (!fe_is_dim(r->g, nm) && !allow_derived) {
        diag_report(r->dl, D_BAD_SHAPE, path,
                    "Use a dim of signature.dims, add the symbol to signature.dims, or write an integer.",
                    "symbol '%s' is not in signature.dims", nm);
        return NULL;
      }
      names[nn++] = nm;
    } else {
      p++;
    }
  }
  names[nn] = NULL;
  const sx *e = sx_parse(r->A, text, names);
  if (!e) {
    diag_report(r->dl, D_BAD_SHAPE, path, NULL, "cannot parse size expression '%s'", text);
    return NULL;
  }
  e = sx_subst(r->A, e, bind_dims_fn, r);
  int64_t v;
  if (sx_is_int(e, &v) && (v < lo || v > JU_INT_MAX)) {
    diag_report(r->dl, D_BAD_NUMBER, path, NULL, "size '%s' = %lld is out of range", text, (long long)v);
    return NULL;
  }
  if (sx_has_overflow(e)) {
    diag_report(r->dl, D_BAD_NUMBER, path, NULL, "size '%s' overflows", text);
    return NULL;
  }
  return e;
}

static bool read_dtype_ex(reader *r, const cJSON *obj, const char *key, const char *path, bool required,
                          bool allow_T, bool allow_int32, dtype *out) {
  const char *s;
  if (!ju_string(&r->jc, obj, key, path, required, &s)) return false;
  dtype d;
  /* graphs compute in fp16, bf16 and fp32 only (bool is internal); a
   * tensor may be int32 to be a Gather's index, and nothing else */
  if (!dtype_parse(s, &d) ||
      !(d == DT_FP16 || d == DT_BF16 || d == DT_FP32 || (d == DT_T && allow_T) || (d == DT_INT32 && allow_int32))) {
    diag_report(r->dl, D_BAD_DTYPE, ju_path_key(&r->jc, path, key), NULL, "unknown dtype '%s'", s);
    return false;
  }
  if (d == DT_T) d = r->g->T;
  *out = d;
  return true;
}

static bool read_dtype(reader *r, const cJSON *obj, const char *key, const char *path, bool required,
                       bool allow_T, dtype *out) {
  return read_dtype_ex(r, obj, key, path, required, allow_T, false, out);
}

/* ---- signature ---------------------------------------------------------- */

static const char *const sig_keys[] = {"dims", "attrs", "inputs", "outputs", NULL};
static const char *const sig_in_keys[] = {"tensor", "role", "mutability", "storage", NULL};
static const char *const tensor_keys[] = {"dtype",      "shape",          "layout",         "layout_perm",
                                          "layout_tag", "transform_meta", "coaccess_block", NULL};
static const char *const transform_meta_keys[] = {"delta_layout", "kind", "coaccess", "conversion_of", NULL};
static const char *const top_keys[] = {"name", "description", "signature", "tensors", "graph", NULL};
static const char *const node_keys[] = {"op", "name", "fn", "inputs", "outputs", "attrs", NULL};

static bool one_of(const char *s, const char *const *vals) {
  for (; *vals; vals++)
    if (strcmp(s, *vals) == 0) return true;
  return false;
}

static void read_string_list(reader *r, const cJSON *arr, const char *path, int *n, const char ***out) {
  int cnt = cJSON_GetArraySize(arr);
  *out = ARENA_ARRAY(r->A, const char *, cnt + 1);
  *n = 0;
  int i = 0;
  for (const cJSON *it = arr->child; it; it = it->next, i++) {
    const char *p = ju_path_idx(&r->jc, path, i);
    if (!cJSON_IsString(it) || !is_ident(it->valuestring)) {
      diag_report(r->dl, D_GRAPH_SCHEMA, p, NULL, "expected an identifier string, found %s",
                  cJSON_IsString(it) ? "a non-identifier string" : ju_type_name(it));
      continue;
    }
    for (int j = 0; j < *n; j++)
      if (strcmp((*out)[j], it->valuestring) == 0)
        diag_report(r->dl, D_DUPLICATE_NAME, p, NULL, "'%s' is listed twice", it->valuestring);
    (*out)[(*n)++] = arena_strdup(r->A, it->valuestring);
  }
  (*out)[*n] = NULL;
}

static void read_signature(reader *r, const cJSON *sig) {
  fe_graph *g = r->g;
  const char *path = "signature";
  ju_check_keys(&r->jc, sig, path, sig_keys);
  const cJSON *dims = ju_array(&r->jc, sig, "dims", path, false);
  if (dims) read_string_list(r, dims, "signature.dims", &g->ndims, &g->dims);
  else g->dims = ARENA_ARRAY(r->A, const char *, 1);
  g->params = g->dims;
  const cJSON *attrs = ju_array(&r->jc, sig, "attrs", path, false);
  if (attrs) read_string_list(r, attrs, "signature.attrs", &g->nsig_attrs, &g->sig_attrs);
  /* the attributes a signature may leave to run time, and the least value
   * of each */
  static const struct {
    const char *name;
    int least;
  } RUNTIME_ATTRS[] = {{"stride", 1}, {"pad", 0}, {"dilation", 1}};
  g->sig_attr_least = ARENA_ARRAY(r->A, int, g->nsig_attrs + 1);
  for (int i = 0; i < g->nsig_attrs; i++) {
    int j = 0, n = (int)(sizeof RUNTIME_ATTRS / sizeof *RUNTIME_ATTRS);
    while (j < n && strcmp(g->sig_attrs[i], RUNTIME_ATTRS[j].name) != 0) j++;
    if (j < n) g->sig_attr_least[i] = RUNTIME_ATTRS[j].least;
    else
      diag_report(r->dl, D_GRAPH_SCHEMA, ju_path_idx(&r->jc, "signature.attrs", i),
                  "Runtime attributes are stride, pad and dilation.",
                  "'%s' cannot be a runtime attribute", g->sig_attrs[i]);
  }

  for (int io = 0; io < 2; io++) {
    const char *key = io ? "outputs" : "inputs";
    const cJSON *arr = ju_array(&r->jc, sig, key, path, true);
    if (!arr) continue;
    int n = cJSON_GetArraySize(arr), i = 0;
    int *idx = ARENA_ARRAY(r->A, int, n);
    int cnt = 0;
    const char *apath = ju_path_key(&r->jc, path, key);
    for (const cJSON *it = arr->child; it; it = it->next, i++) {
      const char *p = ju_path_idx(&r->jc, apath, i);
      if (!cJSON_IsObject(it)) {
        diag_report(r->dl, D_GRAPH_SCHEMA, p, NULL, "expected an object, found %s", ju_type_name(it));
        continue;
      }
      ju_check_keys(&r->jc, it, p, sig_in_keys);
      const char *name;
      if (!ju_string(&r->jc, it, "tensor", p, true, &name)) continue;
      if (!is_ident(name)) {
        diag_report(r->dl, D_GRAPH_SCHEMA, p, NULL, "tensor name '%s' is not an identifier", name);
        continue;
      }
      if (fe_find_tensor(g, name) >= 0) {
        diag_report(r->dl, D_DUPLICATE_NAME, p, NULL, "tensor '%s' appears twice in the signature", name);
        continue;
      }
      int t = add_tensor(r, name, p);
      fe_tensor *tt = &g->tensors[t];
      const char *s;
      tt->role = "data";
      tt->mutability = io ? "mutable" : "immutable";
      tt->storage = "arena";
      if (ju_string(&r->jc, it, "role", p, false, &s)) {
        if (!one_of(s, (const char *const[]){"data", "param", NULL}))
          diag_report(r->dl, D_GRAPH_SCHEMA, ju_path_key(&r->jc, p, "role"), NULL,
                      "role must be \"data\" or \"param\", not '%s'", s);
        tt->role = s;
      }
      if (!strcmp(tt->role, "param")) tt->storage = "const_pool"; /* a weight: the plan's ConstPool holds it */
      if (ju_string(&r->jc, it, "mutability", p, false, &s)) {
        if (!one_of(s, (const char *const[]){"immutable", "mutable", NULL}))
          diag_report(r->dl, D_GRAPH_SCHEMA, ju_path_key(&r->jc, p, "mutability"), NULL,
                      "mutability must be \"immutable\" or \"mutable\", not '%s'", s);
        tt->mutability = s;
      }
      if (ju_string(&r->jc, it, "storage", p, false, &s)) {
        if (!one_of(s, (const char *const[]){"arena", "const_pool", NULL}))
          diag_report(r->dl, D_GRAPH_SCHEMA, ju_path_key(&r->jc, p, "storage"), NULL,
                      "storage must be \"arena\" or \"const_pool\", not '%s'", s);
        tt->storage = s;
      }
      if (io) tt->sig_output = cnt;
      else tt->sig_input = cnt;
      idx[cnt++] = t;
    }
    if (io) g->outputs = idx, g->nout = cnt;
    else g->inputs = idx, g->nin = cnt;
  }
  if (g->nout == 0)
    diag_report(r->dl, D_SIGNATURE, "signature.outputs", NULL, "the signature has no outputs");
}

/* transform_meta (seed 004 EXT): {"delta_layout", "kind", "coaccess", "conversion_of"} */
static void read_transform_meta(reader *r, const cJSON *tm, const char *p, fe_tensor *tt) {
  ju_check_keys(&r->jc, tm, p, transform_meta_keys);
  tt->has_transform_meta = true;
  ju_bool(&r->jc, tm, "delta_layout", p, false, &tt->delta_layout);
  const char *kind;
  if (ju_string(&r->jc, tm, "kind", p, false, &kind)) {
    if (strcmp(kind, "S") && strcmp(kind, "Q") && strcmp(kind, "K"))
      diag_report(r->dl, D_GRAPH_SCHEMA, ju_path_key(&r->jc, p, "kind"), "Use \"S\" (sparsity), \"Q\" (quantization) or \"K\" (KV compression).",
                  "transform_meta.kind '%s' is not S, Q or K", kind);
    else
      tt->tm_kind = kind;
  }
  const char *conv;
  if (ju_string(&r->jc, tm, "conversion_of", p, false, &conv)) tt->conversion_of = conv;
  const cJSON *co = ju_array(&r->jc, tm, "coaccess", p, false);
  if (!co) return;
  const char *cp = ju_path_key(&r->jc, p, "coaccess");
  int n = cJSON_GetArraySize(co), k = 0;
  tt->co_i = ARENA_ARRAY(r->A, int, n + 1);
  tt->co_j = ARENA_ARRAY(r->A, int, n + 1);
  tt->co_w = ARENA_ARRAY(r->A, double, n + 1);
  for (const cJSON *e = co->child; e; e = e->next, k++) {
    const char *ep = ju_path_idx(&r->jc, cp, k);
    int64_t i, j;
    double w;
    if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 3) {
      diag_report(r->dl, D_GRAPH_SCHEMA, ep, NULL, "a coaccess entry is [axis_i, axis_j, weight]");
      continue;
    }
    /* axis `rank` is the lane (the innermost, vectorized position) */
    if (!ju_int_item(&r->jc, e->child, ep, 0, FE_MAX_RANK, &i) ||
        !ju_int_item(&r->jc, e->child->next, ep, 0, FE_MAX_RANK, &j) ||
        !ju_number_item(&r->jc, e->child->next->next, ep, &w))
      continue;
    if (w < 0 || w > 1e6) {
      diag_report(r->dl, D_BAD_NUMBER, ep, NULL, "coaccess weight %g is not in [0, 1e6]", w);
      continue;
    }
    tt->co_i[tt->ncoaccess] = (int)i, tt->co_j[tt->ncoaccess] = (int)j, tt->co_w[tt->ncoaccess] = w;
    tt->ncoaccess++;
  }
}

/* The optional seed 004 fields of a tensor declaration; checked against its
 * rank once the shape is known. */
static void read_layout_meta(reader *r, const cJSON *it, const char *p, fe_tensor *tt) {
  const char *tag;
  if (ju_string(&r->jc, it, "layout_tag", p, false, &tag)) tt->layout_tag = tag;
  const cJSON *lp = ju_array(&r->jc, it, "layout_perm", p, false);
  if (lp) {
    const char *pp = ju_path_key(&r->jc, p, "layout_perm");
    int n = cJSON_GetArraySize(lp), k = 0;
    unsigned seen = 0;
    bool ok = n == tt->rank;
    int *perm = ARENA_ARRAY(r->A, int, n + 1);
    for (const cJSON *e = lp->child; e && ok; e = e->next, k++) {
      int64_t v;
      ok = ju_int_item(&r->jc, e, ju_path_idx(&r->jc, pp, k), 0, FE_MAX_RANK - 1, &v) && v < n && !(seen >> v & 1);
      if (ok) seen |= 1u << v, perm[k] = (int)v;
    }
    if (ok) tt->layout_perm = perm, tt->nlayout_perm = n;
    else
      diag_report(r->dl, D_GRAPH_SCHEMA, pp, "Give each axis of the tensor once, outermost first (e.g. [0, 2, 3, 1]).",
                  "layout_perm of '%s' is not a permutation of its %d axes", tt->name, tt->rank);
  }
  const cJSON *tm = ju_object(&r->jc, it, "transform_meta", p, false);
  if (tm) read_transform_meta(r, tm, ju_path_key(&r->jc, p, "transform_meta"), tt);
  for (int k = 0; k < tt->ncoaccess; k++)
    if (tt->co_i[k] > tt->rank || tt->co_j[k] > tt->rank || tt->co_i[k] == tt->co_j[k]) {
      diag_report(r->dl, D_GRAPH_SCHEMA, ju_path_idx(&r->jc, ju_path_key(&r->jc, ju_path_key(&r->jc, p, "transform_meta"), "coaccess"), k),
                  NULL, "coaccess pair (%d, %d) of '%s' must name two different axes in [0, %d] (%d is the lane)",
                  tt->co_i[k], tt->co_j[k], tt->name, tt->rank, tt->rank);
      tt->ncoaccess = 0;
    }
  const cJSON *cb = cJSON_GetObjectItemCaseSensitive(it, "coaccess_block");
  int64_t b;
  if (cb && ju_int_item(&r->jc, cb, ju_path_key(&r->jc, p, "coaccess_block"), 1, FE_MAX_RANK + 1, &b))
    tt->coaccess_block = (int)b;
}

static void read_tensors(reader *r, const cJSON *tens) {
  fe_graph *g = r->g;
  for (const cJSON *it = tens->child; it; it = it->next) {
    const char *p = ju_path_key(&r->jc, "tensors", it->string);
    for (const cJSON *jt = it->next; jt; jt = jt->next)
      if (strcmp(jt->string, it->string) == 0)
        diag_report(r->dl, D_DUPLICATE_NAME, p, NULL, "tensor '%s' is declared twice", it->string);
    if (!is_ident(it->string)) {
      diag_report(r->dl, D_GRAPH_SCHEMA, p, NULL, "tensor name '%s' is not an identifier", it->string);
      continue;
    }
    if (!cJSON_IsObject(it)) {
      diag_report(r->dl, D_GRAPH_SCHEMA, p, NULL, "expected an object, found %s", ju_type_name(it));
      continue;
    }
    ju_check_keys(&r->jc, it, p, tensor_keys);
    int t = fe_find_tensor(g, it->string);
    if (t >= 0 && g->tensors[t].declared) continue; /* duplicate, reported above */
    if (t < 0) t = add_tensor(r, it->string, p);
    fe_tensor *tt = &g->tensors[t];
    tt->declared = true;
    tt->at = p;
    read_dtype_ex(r, it, "dtype", p, true, true, true, &tt->dt);
    const cJSON *shape = ju_array(&r->jc, it, "shape", p, true);
    if (shape) {
      int n = cJSON_GetArraySize(shape);
      if (n > FE_MAX_RANK) {
        diag_report(r->dl, D_BAD_SHAPE, ju_path_key(&r->jc, p, "shape"), NULL, "rank %d exceeds the limit %d",
                    n, FE_MAX_RANK);
      } else {
        tt->shape = ARENA_ARRAY(r->A, const sx *, n);
        tt->rank = n;
        int i = 0;
        bool derived_ok = tt->sig_input < 0;
        for (const cJSON *s = shape->child; s; s = s->next, i++) {
          tt->shape[i] = read_size(r, s, ju_path_idx(&r->jc, ju_path_key(&r->jc, p, "shape"), i), 1, derived_ok);
          if (!tt->shape[i]) tt->shape = NULL, tt->rank = 0;
          if (!tt->shape) break;
        }
      }
    }
    const char *lay;
    if (ju_string(&r->jc, it, "layout", p, false, &lay)) tt->layout = lay;
    read_layout_meta(r, it, p, tt);
  }
  for (int i = 0; i < g->ntensors; i++) {
    fe_tensor *t = &g->tensors[i];
    if ((t->sig_input >= 0 || t->sig_output >= 0) && !t->declared)
      diag_report(r->dl, D_UNDECLARED_TENSOR, t->at, NULL,
                  "signature tensor '%s' is not declared in `tensors`", t->name);
  }
}

/* ---- attributes ------------------------------------------------------------ */

static bool attr_allowed(fe_op op, const char *key) {
  const char *a = fe_table[op].attrs;
  size_t k = strlen(key);
  while (*a) {
    const char *e = strchr(a, ' ');
    size_t n = e ? (size_t)(e - a) : strlen(a);
    if (n == k && strncmp(a, key, n) == 0) return true;
    a += n;
    while (*a == ' ') a++;
  }
  return false;
}

/* The value of a runtime attr: the instance's (manifest variant) value if it
 * gives one, else the graph's. */
static const cJSON *attr_value(reader *r, const cJSON *attrs, const char *key) {
  if (r->inst && r->inst->attr_values) {
    for (int i = 0; i < r->g->nsig_attrs; i++)
      if (strcmp(r->g->sig_attrs[i], key) == 0) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->inst->attr_values, key);
        if (v) return v;
      }
  }
  return cJSON_GetObjectItemCaseSensitive(attrs, key);
}

static bool read_pair(reader *r, const cJSON *v, const char *path, int64_t lo, int64_t def, int64_t out[2]) {
  out[0] = out[1] = def;
  if (!v) return true;
  if (cJSON_IsNumber(v)) {
    if (!ju_int_item(&r->jc, v, path, lo, 1 << 20, &out[0])) return false;
    out[1] = out[0];
    return true;
  }
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2) {
    diag_report(r->dl, D_BAD_ATTR, path, NULL, "expected an integer or a pair of integers, found %s",
                ju_type_name(v));
    return false;
  }
  return ju_int_item(&r->jc, cJSON_GetArrayItem(v, 0), ju_path_idx(&r->jc, path, 0), lo, 1 << 20, &out[0]) &&
         ju_int_item(&r->jc, cJSON_GetArrayItem(v, 1), ju_path_idx(&r->jc, path, 1), lo, 1 << 20, &out[1]);
}

static bool read_int_list(reader *r, const cJSON *v, const char *path, int64_t lo, int64_t hi, int *n,
                          int64_t *out) {
  if (!cJSON_IsArray(v)) {
    diag_report(r->dl, D_BAD_ATTR, path, NULL, "expected an array of integers, found %s", ju_type_name(v));
    return false;
  }
  int cnt = cJSON_GetArraySize(v);
  if (cnt > FE_MAX_RANK) {
    diag_report(r->dl, D_BAD_ATTR, path, NULL, "more than %d entries", FE_MAX_RANK);
    return false;
  }
  int i = 0;
  for (const cJSON *it = v->child; it; it = it->next, i++)
    if (!ju_int_item(&r->jc, it, ju_path_idx(&r->jc, path, i), lo, hi, &out[i])) return false;
  *n = cnt;
  return true;
}

static bool read_size_list(reader *r, const cJSON *v, const char *path, int64_t lo, int *n, const sx ***out) {
  if (!cJSON_IsArray(v)) {
    diag_report(r->dl, D_BAD_ATTR, path, NULL, "expected an array of sizes, found %s", ju_type_name(v));
    return false;
  }
  int cnt = cJSON_GetArraySize(v);
  if (cnt > FE_MAX_RANK) {
    diag_report(r->dl, D_BAD_ATTR, path, NULL, "more than %d entries", FE_MAX_RANK);
    return false;
  }
  *out = ARENA_ARRAY(r->A, const sx *, cnt);
  int i = 0;
  for (const cJSON *it = v->child; it; it = it->next, i++)
    if (!((*out)[i] = read_size(r, it, ju_path_idx(&r->jc, path, i), lo, false))) return false;
  *n = cnt;
  return true;
}

/* Attention's scale: a number, or "rsqrt(D)" of a signature dim (a number when D is bound) */
static bool read_scale(reader *r, fe_attrs *a, const cJSON *v, const char *path) {
  a->has_scale = true;
  if (cJSON_IsString(v)) {
    const char *s = v->valuestring;
    size_t n = strlen(s);
    if (n > 7 && strncmp(s, "rsqrt(", 6) == 0 && s[n - 1] == ')') {
      char *sym = arena_strndup(r->A, s + 6, n - 7);
      if (!fe_is_dim(r->g, sym)) {
        diag_report(r->dl, D_BAD_ATTR, ju_path_key(&r->jc, path, "scale"), NULL,
                    "'%s' is not in signature.dims", sym);
        return false;
      }
      a->scale_rsqrt = sym;
      for (int i = 0; i < r->g->nbound; i++)
        if (strcmp(r->g->bound_name[i], sym) == 0) {
          a->scale = 1.0 / sqrt((double)r->g->bound_value[i]);
          a->scale_rsqrt = NULL;
        }
    } else {
      diag_report(r->dl, D_BAD_ATTR, ju_path_key(&r->jc, path, "scale"),
                  "Use a number or \"rsqrt(D)\" with D a signature dim.", "cannot read scale '%s'", s);
      return false;
    }
  } else if (!ju_number_item(&r->jc, v, ju_path_key(&r->jc, path, "scale"), &a->scale)) {
    return false;
  }
  return true;
}

/* Reduce's op (sum, mean, max, min) and axes */
static bool read_reduce(reader *r, fe_attrs *a, const cJSON *attrs, const char *path) {
  const cJSON *v;
  const char *s;
  if (!ju_string(&r->jc, attrs, "op", path, true, &s)) return false;
  if (strcmp(s, "sum") == 0) a->rop = RED_SUM;
  else if (strcmp(s, "max") == 0) a->rop = RED_MAX;
  else if (strcmp(s, "min") == 0) a->rop = RED_MIN;
  else if (strcmp(s, "mean") == 0) a->rop = RED_SUM, a->mean = true;
  else {
    diag_report(r->dl, D_BAD_ATTR, ju_path_key(&r->jc, path, "op"), "Use sum, mean, max or min.",
                "unknown reduce op '%s'", s);
    return false;
  }
  if (!(v = ju_array(&r->jc, attrs, "axes", path, true))) return false;
  if (!read_int_list(r, v, ju_path_key(&r->jc, path, "axes"), -FE_MAX_RANK, FE_MAX_RANK - 1, &a->naxes, a->axes))
    return false;
  return true;
}

/* Pad's [lo, hi] sizes an axis and its value */
static bool read_pads(reader *r, fe_attrs *a, const cJSON *attrs, const char *path) {
  const cJSON *v;
  if (!(v = ju_array(&r->jc, attrs, "pads", path, true))) return false;
  int n = cJSON_GetArraySize(v);
  if (n > FE_MAX_RANK) {
    diag_report(r->dl, D_BAD_ATTR, path, NULL, "more than %d pads", FE_MAX_RANK);
    return false;
  }
  a->npads = n;
  a->pad_lo = ARENA_ARRAY(r->A, const sx *, n);
  a->pad_hi = ARENA_ARRAY(r->A, const sx *, n);
  int i = 0;
  const char *pp = ju_path_key(&r->jc, path, "pads");
  for (const cJSON *it = v->child; it; it = it->next, i++) {
    const char *ip = ju_path_idx(&r->jc, pp, i);
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2) {
      diag_report(r->dl, D_BAD_ATTR, ip, NULL, "expected [lo, hi], found %s", ju_type_name(it));
      return false;
    }
    if (!(a->pad_lo[i] = read_size(r, it->child, ju_path_idx(&r->jc, ip, 0), 0, false)) ||
        !(a->pad_hi[i] = read_size(r, it->child->next, ju_path_idx(&r->jc, ip, 1), 0, false)))
      return false;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(attrs, "value")) &&
      !ju_number_item(&r->jc, v, ju_path_key(&r->jc, path, "value"), &a->pad_value))
    return false;
  return true;
}

/* Slice's starts, ends and steps, one each an axis */
static bool read_slice(reader *r, fe_attrs *a, const cJSON *attrs, const char *path) {
  const cJSON *v;
  const cJSON *st = ju_array(&r->jc, attrs, "starts", path, true);
  const cJSON *en = ju_array(&r->jc, attrs, "ends", path, true);
  if (!st || !en) return false;
  int n1, n2, n3 = -1;
  if (!read_size_list(r, st, ju_path_key(&r->jc, path, "starts"), 0, &n1, &a->starts) ||
      !read_size_list(r, en, ju_path_key(&r->jc, path, "ends"), 0, &n2, &a->ends))
    return false;
  a->steps = ARENA_ARRAY(r->A, int64_t, FE_MAX_RANK);
  for (int i = 0; i < FE_MAX_RANK; i++) a->steps[i] = 1;
  if ((v = cJSON_GetObjectItemCaseSensitive(attrs, "steps")) &&
      !read_int_list(r, v, ju_path_key(&r->jc, path, "steps"), 1, 1 << 20, &n3, a->steps))
    return false;
  if (n1 != n2 || (n3 >= 0 && n3 != n1)) {
    diag_report(r->dl, D_BAD_ATTR, path, NULL, "starts, ends and steps must have the same length");
    return false;
  }
  a->nslice = n1;
  return true;
}

static bool read_attrs(reader *r, fe_node *nd, const cJSON *attrs, const char *path) {
  fe_attrs *a = &nd->attrs;
  bool ok = true;
  for (const cJSON *it = attrs ? attrs->child : NULL; it; it = it->next)
    if (!attr_allowed(nd->op, it->string)) {
      diag_report(r->dl, D_BAD_ATTR, ju_path_key(&r->jc, path, it->string),
                  arena_printf(r->A, "%s takes: %s", fe_table[nd->op].name,
                               *fe_table[nd->op].attrs ? fe_table[nd->op].attrs : "no attributes"),
                  "unknown attribute '%s' for %s", it->string, fe_table[nd->op].name);
      ok = false;
    }
  if (!ok) return false;
  const cJSON *v;
  if ((v = cJSON_GetObjectItemCaseSensitive(attrs, "acc_dtype"))) {
    if (!read_dtype(r, attrs, "acc_dtype", path, true, false, &a->acc_dtype)) return false;
    a->has_acc = true;
  }
  a->stride[0] = a->stride[1] = a->dilation[0] = a->dilation[1] = 1;
  if (nd->op == FE_CONV2D) {
    if (!read_pair(r, attr_value(r, attrs, "stride"), ju_path_key(&r->jc, path, "stride"), 1, 1, a->stride) ||
        !read_pair(r, attr_value(r, attrs, "pad"), ju_path_key(&r->jc, path, "pad"), 0, 0, a->pad) ||
        !read_pair(r, attr_value(r, attrs, "dilation"), ju_path_key(&r->jc, path, "dilation"), 1, 1,
                   a->dilation))
      return false;
  }
  if (cJSON_GetObjectItemCaseSensitive(attrs, "causal") &&
      !ju_bool(&r->jc, attrs, "causal", path, true, &a->causal))
    return false;
  if ((v = cJSON_GetObjectItemCaseSensitive(attrs, "scale")) && !read_scale(r, a, v, path)) return false;
  if (nd->op == FE_REDUCE && !read_reduce(r, a, attrs, path)) return false;
  if (nd->op == FE_FLIP) {
    if (!(v = ju_array(&r->jc, attrs, "axes", path, true))) return false;
    if (!read_int_list(r, v, ju_path_key(&r->jc, path, "axes"), -FE_MAX_RANK, FE_MAX_RANK - 1, &a->naxes, a->axes))
      return false;
  }
  if (nd->op == FE_SOFTMAX) {
    int64_t ax = -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(attrs, "axis")) &&
        !ju_int_item(&r->jc, v, ju_path_key(&r->jc, path, "axis"), -FE_MAX_RANK, FE_MAX_RANK - 1, &ax))
      return false;
    a->axis = ax;
  }
  if (nd->op == FE_GATHER) {
    if (!(v = cJSON_GetObjectItemCaseSensitive(attrs, "dim"))) {
      diag_report(r->dl, D_BAD_ATTR, path, "Give the axis to gather along: \"dim\": 0 (negative counts from the end).",
                  "Gather needs attrs.dim");
      return false;
    }
    if (!ju_int_item(&r->jc, v, ju_path_key(&r->jc, path, "dim"), -FE_MAX_RANK, FE_MAX_RANK - 1, &a->axis))
      return false;
  }
  if (nd->op == FE_TILE) {
    if (!(v = ju_array(&r->jc, attrs, "repeats", path, true))) return false;
    if (!read_int_list(r, v, ju_path_key(&r->jc, path, "repeats"), 1, 1 << 20, &a->nrep, a->repeats)) return false;
  }
  if (nd->op == FE_TRANSPOSE) {
    if (!(v = ju_array(&r->jc, attrs, "perm", path, true))) return false;
    if (!read_int_list(r, v, ju_path_key(&r->jc, path, "perm"), 0, FE_MAX_RANK - 1, &a->nperm, a->perm))
      return false;
  }
  if (nd->op == FE_RESHAPE || nd->op == FE_EXPAND) {
    if (!(v = ju_array(&r->jc, attrs, "shape", path, true))) return false;
    if (!read_size_list(r, v, ju_path_key(&r->jc, path, "shape"), 1, &a->nshape, &a->shape)) return false;
  }
  if (cJSON_GetObjectItemCaseSensitive(attrs, "to")) {
    if (!read_dtype(r, attrs, "to", path, true, true, &a->to)) return false;
    a->has_to = true;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(attrs, "scalar"))) {
    if (!ju_number_item(&r->jc, v, ju_path_key(&r->jc, path, "scalar"), &a->scalar)) return false;
    a->has_scalar = true;
  }
  if (nd->op == FE_PAD && !read_pads(r, a, attrs, path)) return false;
  if (nd->op == FE_SLICE && !read_slice(r, a, attrs, path)) return false;
  return true;
}

/* ---- nodes ------------------------------------------------------------------ */

static bool read_node(reader *r, const cJSON *it, int idx, fe_node *nd) {
  const char *p = ju_path_idx(&r->jc, "graph", idx);
  if (!cJSON_IsObject(it)) {
    diag_report(r->dl, D_GRAPH_SCHEMA, p, NULL, "expected an object, found %s", ju_type_name(it));
    return false;
  }
  ju_check_keys(&r->jc, it, p, node_keys);
  const char *op, *name = NULL;
  if (!ju_string(&r->jc, it, "op", p, true, &op)) return false;
  ju_string(&r->jc, it, "name", p, false, &name);
  if (name && !is_node_name(name)) {
    diag_report(r->dl, D_NOT_IDENT, ju_path_key(&r->jc, p, "name"),
                "Name the node with a C identifier (a letter or '_', then letters, digits and '_', at most 64 "
                "characters), e.g. \"name\": \"bias_add\"; the names reach generated code.",
                "node name '%s' is not a C identifier", quoted(r->A, name));
    return false;
  }
  nd->name = name ? name : arena_printf(r->A, "n%d", idx);
  nd->at = arena_printf(r->A, "graph[%d] (%s)", idx, nd->name);
  nd->src = idx;
  int found = -1;
  for (int i = 0; i < FE__COUNT; i++)
    if (strcmp(fe_table[i].name, op) == 0) found = i;
  if (found < 0) {
    diag_report(r->dl, D_UNKNOWN_OP, nd->at, NULL, "unknown op '%s'", op);
    return false;
  }
  nd->op = (fe_op)found;
  if (nd->op == FE_ELEMENTWISE) {
    const char *fn;
    if (!ju_string(&r->jc, it, "fn", p, true, &fn)) return false;
    int f = -1;
    for (int i = 0; i < EW__COUNT; i++)
      if (strcmp(ew_table[i].name, fn) == 0) f = i;
    if (f < 0) {
      size_t len = 64;
      for (int i = 0; i < EW__COUNT; i++) len += strlen(ew_table[i].name) + 2;
      char *s = arena_alloc(r->A, len), *q = s;
      q += sprintf(q, "Use one of: ");
      for (int i = 0; i < EW__COUNT; i++) q += sprintf(q, "%s%s", i ? ", " : "", ew_table[i].name);
      diag_report(r->dl, D_UNKNOWN_OP, nd->at, s, "unknown elementwise fn '%s'", fn);
      return false;
    }
    nd->fn = (ewise_fn)f;
  } else if (cJSON_GetObjectItemCaseSensitive(it, "fn")) {
    diag_report(r->dl, D_GRAPH_SCHEMA, ju_path_key(&r->jc, p, "fn"), NULL, "only Elementwise nodes take `fn`");
    return false;
  }
  for (int io = 0; io < 2; io++) {
    const char *key = io ? "outputs" : "inputs";
    const cJSON *arr = ju_array(&r->jc, it, key, p, true);
    if (!arr) return false;
    int n = cJSON_GetArraySize(arr);
    if (n > 8) {
      diag_report(r->dl, D_GRAPH_SCHEMA, ju_path_key(&r->jc, p, key), NULL, "too many %s (%d)", key, n);
      return false;
    }
    int *v = ARENA_ARRAY(r->A, int, n);
    int i = 0;
    for (const cJSON *s = arr->child; s; s = s->next, i++) {
      const char *sp = ju_path_idx(&r->jc, ju_path_key(&r->jc, p, key), i);
      if (!cJSON_IsString(s) || !is_ident(s->valuestring)) {
        diag_report(r->dl, D_GRAPH_SCHEMA, sp, NULL, "expected a tensor name, found %s",
                    cJSON_IsString(s) ? "a non-identifier string" : ju_type_name(s));
        return false;
      }
      int t = fe_find_tensor(r->g, s->valuestring);
      if (t < 0) t = add_tensor(r, s->valuestring, sp);
      v[i] = t;
    }
    if (io) nd->out = v, nd->nout = n;
    else nd->in = v, nd->nin = n;
  }
  int mn = fe_table[nd->op].min_in, mx = fe_table[nd->op].max_in;
  if (nd->op == FE_ELEMENTWISE) {
    mn = mx = ew_table[nd->fn].arity;
  }
  const cJSON *attrs = ju_object(&r->jc, it, "attrs", p, false);
  if (!read_attrs(r, nd, attrs, ju_path_key(&r->jc, p, "attrs"))) return false;
  if (nd->op == FE_ELEMENTWISE && nd->attrs.has_scalar && mn == 2) mn = mx = 1;
  if (nd->nin < mn || nd->nin > mx) {
    diag_report(r->dl, D_GRAPH_SCHEMA, nd->at, NULL, "%s%s%s takes %d input%s, got %d", fe_table[nd->op].name,
                nd->op == FE_ELEMENTWISE ? " " : "", nd->op == FE_ELEMENTWISE ? ew_table[nd->fn].name : "", mn,
                mn == 1 ? "" : "s", nd->nin);
    return false;
  }
  if (nd->nout != 1) {
    diag_report(r->dl, D_GRAPH_SCHEMA, nd->at, NULL, "%s has %d outputs; every op has exactly one",
                fe_table[nd->op].name, nd->nout);
    return false;
  }
  if (nd->op == FE_ELEMENTWISE && nd->fn == EW_CAST && !nd->attrs.has_to) {
    diag_report(r->dl, D_BAD_ATTR, nd->at, NULL, "Elementwise cast needs attrs.to");
    return false;
  }
  if (nd->op == FE_CAST && !nd->attrs.has_to) {
    diag_report(r->dl, D_BAD_ATTR, nd->at, NULL, "Cast needs attrs.to");
    return false;
  }
  return true;
}

/* Topological sort by DFS; a back edge is a cycle. */
static bool topo_sort(reader *r, fe_node *nodes, int n) {
  fe_graph *g = r->g;
  if (n <= 0 || n > 10000) return false;
  size_t cnt = (size_t)n + 1;
  int *state = calloc(cnt, sizeof(int)), *order = calloc(cnt, sizeof(int));
  int *stack = calloc(cnt * 2, sizeof(int));
  if (!state || !order || !stack) dlc_die_oom();
  int no = 0;
  bool ok = true;
  for (int s = 0; s < n && ok; s++) {
    if (state[s]) continue;
    /* iterative DFS: stack of (node, next input index) */
    int sp = 0;
    stack[sp++] = s;
    stack[sp++] = 0;
    state[s] = 1;
    while (sp && ok) {
      int v = stack[sp - 2], k = stack[sp - 1];
      if (k < nodes[v].nin) {
        stack[sp - 1]++;
        int prod = g->tensors[nodes[v].in[k]].producer;
        if (prod < 0) continue;
        if (state[prod] == 1) {
          diag_report(r->dl, D_GRAPH_CYCLE, nodes[v].at, NULL,
                      "node '%s' reads '%s', which depends on the node's own output", nodes[v].name,
                      g->tensors[nodes[v].in[k]].name);
          ok = false;
        } else if (state[prod] == 0) {
          state[prod] = 1;
          stack[sp++] = prod;
          stack[sp++] = 0;
        }
      } else {
        state[v] = 2;
        order[no++] = v;
        sp -= 2;
      }
    }
  }
  if (ok) {
    fe_node *sorted = ARENA_ARRAY(r->A, fe_node, n);
    for (int i = 0; i < n; i++) sorted[i] = nodes[order[i]];
    g->nodes = sorted;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < sorted[i].nout; j++) g->tensors[sorted[i].out[j]].producer = i;
  }
  free(state);
  free(order);
  free(stack);
  return ok;
}

/* ---- shape inference ------------------------------------------------------------ */

/* Right-aligned broadcast of two shapes (spec §3.3). */
static bool broadcast_shapes(reader *r, const fe_node *nd, int ra, const sx *const *a, int rb, const sx *const *b,
                             int *rout, const sx ***out) {
  int n = ra > rb ? ra : rb;
  const sx **o = ARENA_ARRAY(r->A, const sx *, n);
  for (int i = 0; i < n; i++) {
    int ia = i - (n - ra), ib = i - (n - rb);
    const sx *x = ia >= 0 ? a[ia] : NULL, *y = ib >= 0 ? b[ib] : NULL;
    if (!x) o[i] = y;
    else if (!y) o[i] = x;
    else if (sx_equal(x, y) || sx_is_one(y)) o[i] = x;
    else if (sx_is_one(x)) o[i] = y;
    else {
      diag_report(r->dl, D_BROADCAST_MISMATCH, nd->at, NULL,
                  "right-aligned broadcast of %s and %s: axis %d has sizes %s and %s, neither 1",
                  sx_shape_str(r->A, ra, a), sx_shape_str(r->A, rb, b), i, sx_str(r->A, x), sx_str(r->A, y));
      return false;
    }
  }
  *rout = n;
  *out = o;
  return true;
}

static bool need_acc(reader *r, const fe_node *nd, dtype in) {
  if (nd->attrs.has_acc || in == DT_FP32) return true;
  diag_report(r->dl, D_ACC_DTYPE_MISSING, nd->at, NULL,
              "%s '%s' accumulates %s values but has no acc_dtype", fe_table[nd->op].name, nd->name,
              dtype_name(in));
  return false;
}

static bool norm_axis(reader *r, const fe_node *nd, int64_t ax, int rank, int64_t *out) {
  if (ax < -rank || ax >= rank) {
    diag_report(r->dl, D_BAD_ATTR, nd->at, NULL, "axis %lld is out of range for rank %d", (long long)ax, rank);
    return false;
  }
  *out = ax < 0 ? ax + rank : ax;
  return true;
}

static const sx *prod(arena *A, int n, const sx *const *s) {
  const sx *p = sx_int(A, 1);
  for (int i = 0; i < n; i++) p = sx_mul(A, p, s[i]);
  return p;
}

void fe_tensor_value(const fe_graph *g, int t, dtype *dt, int *rank, const sx *const **shape) {
  const fe_tensor *tt = &g->tensors[t];
  if (tt->producer >= 0) {
    const fe_node *nd = &g->nodes[tt->producer];
    *dt = nd->rdt, *rank = nd->rrank, *shape = nd->rshape;
  } else {
    *dt = tt->dt, *rank = tt->rank, *shape = tt->shape;
  }
}

/* What the shape rules read of an input: name, dtype, shape, layout. */
typedef struct operand {
  const char *name;
  dtype dt;
  int rank;
  const sx *const *shape;
  const char *layout;
} operand;

/* An op's result as its shape rule infers it. */
typedef struct fe_result {
  int rank;
  const sx **shape;
  dtype dt;
} fe_result;

typedef bool fe_infer_fn(reader *r, fe_node *nd, operand *const *in, fe_result *res);

/* A contraction's result dtype: its operands' one dtype, or acc_dtype when
 * given (which a low-precision operand needs: need_acc). */
static bool contraction_dtype(reader *r, fe_node *nd, const char *op, const operand *x, const operand *y, dtype *dt) {
  if (x->dt != y->dt) {
    diag_report(r->dl, D_DTYPE_MISMATCH, nd->at, NULL, "%s operands are %s and %s", op, dtype_name(x->dt),
                dtype_name(y->dt));
    return false;
  }
  if (!need_acc(r, nd, x->dt)) return false;
  *dt = nd->attrs.has_acc ? nd->attrs.acc_dtype : x->dt;
  return true;
}

/* Gather's result: its shape and dtype, or a diagnostic. */
static bool infer_gather(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  arena *A = r->A;
  fe_attrs *a = &nd->attrs;
  /* torch.gather: out[i][j] = X[index[i][j]][j] (dim 0); the index has X's
   * rank, and its other axes are X's (stricter than torch's <=) */
  operand *x = in[0], *ix = in[1];
  if (ix->rank != x->rank || x->rank == 0) {
    diag_report(r->dl, D_BAD_MOVEMENT, nd->at, NULL, "Gather's index has rank %d, its input rank %d; they must be equal and >= 1",
                ix->rank, x->rank);
    return false;
  }
  if (!norm_axis(r, nd, a->axis, x->rank, &a->axis)) return false;
  for (int i = 0; i < x->rank; i++)
    if (i != a->axis && !sx_equal(x->shape[i], ix->shape[i])) {
      diag_report(r->dl, D_BAD_MOVEMENT, nd->at, "Slice the input or the index so that they agree on every axis but dim.",
                  "Gather along dim %lld: axis %d of the index has size %s, of the input %s", (long long)a->axis, i,
                  sx_str(A, ix->shape[i]), sx_str(A, x->shape[i]));
      return false;
    }
  res->rank = ix->rank;
  res->shape = (const sx **)ix->shape;
  return true;
}

/* GEMM's result: its shape and dtype, or a diagnostic. */
static bool infer_gemm(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  arena *A = r->A;
  operand *x = in[0], *y = in[1];
  if (x->rank < 2 || y->rank < 2) {
    diag_report(r->dl, D_BAD_SHAPE, nd->at, NULL, "GEMM operands need rank >= 2, got %d and %d", x->rank,
                y->rank);
    return false;
  }
  if (!sx_equal(x->shape[x->rank - 1], y->shape[y->rank - 2])) {
    diag_report(r->dl, D_CONTRACT_MISMATCH, nd->at, NULL, "GEMM contracts A's K=%s with B's K=%s",
                sx_str(A, x->shape[x->rank - 1]), sx_str(A, y->shape[y->rank - 2]));
    return false;
  }
  int rb;
  const sx **batch;
  if (!broadcast_shapes(r, nd, x->rank - 2, x->shape, y->rank - 2, y->shape, &rb, &batch)) return false;
  res->rank = rb + 2;
  res->shape = ARENA_ARRAY(A, const sx *, res->rank);
  for (int i = 0; i < rb; i++) res->shape[i] = batch[i];
  res->shape[rb] = x->shape[x->rank - 2];
  res->shape[rb + 1] = y->shape[y->rank - 1];
  if (!contraction_dtype(r, nd, "GEMM", x, y, &res->dt)) return false;
  return true;
}

/* Conv2D's result: its shape and dtype, or a diagnostic. */
static bool infer_conv2d(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  arena *A = r->A;
  fe_attrs *a = &nd->attrs;
  operand *x = in[0], *w = in[1];
  if (x->rank != 4 || w->rank != 4) {
    diag_report(r->dl, D_BAD_SHAPE, nd->at, NULL, "Conv2D takes rank-4 X and Wt, got %d and %d", x->rank,
                w->rank);
    return false;
  }
  bool nchw = x->layout && strcmp(x->layout, "NCHW") == 0;
  bool kcrs = w->layout && strcmp(w->layout, "KCRS") == 0;
  if ((x->layout && !nchw && strcmp(x->layout, "NHWC") != 0) ||
      (w->layout && !kcrs && strcmp(w->layout, "KRSC") != 0)) {
    diag_report(r->dl, D_BAD_ATTR, nd->at, "Use NHWC or NCHW activations and KRSC or KCRS filters.",
                "unsupported Conv2D layouts %s/%s", x->layout ? x->layout : "-", w->layout ? w->layout : "-");
    return false;
  }
  const sx *N = x->shape[0], *H = x->shape[nchw ? 2 : 1], *W = x->shape[nchw ? 3 : 2],
           *C = x->shape[nchw ? 1 : 3];
  const sx *K = w->shape[0], *R = w->shape[kcrs ? 2 : 1], *S = w->shape[kcrs ? 3 : 2],
           *Cw = w->shape[kcrs ? 1 : 3];
  if (!sx_equal(C, Cw)) {
    diag_report(r->dl, D_CONTRACT_MISMATCH, nd->at, NULL, "Conv2D input channels %s differ from the filter's %s",
                sx_str(A, C), sx_str(A, Cw));
    return false;
  }
  const sx *P, *Q;
  /* P = floor((H + 2*pad - dil*(R-1) - 1) / stride) + 1 */
  P = sx_add_int(A, sx_floordiv(A, sx_add_int(A, sx_sub(A, sx_add_int(A, H, 2 * a->pad[0]),
                                                       sx_scale(A, sx_add_int(A, R, -1), a->dilation[0])), -1),
                                sx_int(A, a->stride[0])), 1);
  Q = sx_add_int(A, sx_floordiv(A, sx_add_int(A, sx_sub(A, sx_add_int(A, W, 2 * a->pad[1]),
                                                       sx_scale(A, sx_add_int(A, S, -1), a->dilation[1])), -1),
                                sx_int(A, a->stride[1])), 1);
  res->rank = 4;
  res->shape = ARENA_ARRAY(A, const sx *, 4);
  res->shape[0] = N;
  if (nchw) res->shape[1] = K, res->shape[2] = P, res->shape[3] = Q;
  else res->shape[1] = P, res->shape[2] = Q, res->shape[3] = K;
  if (!contraction_dtype(r, nd, "Conv2D", x, w, &res->dt)) return false;
  return true;
}

/* Attention's result: its shape and dtype, or a diagnostic. */
static bool infer_attention(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  arena *A = r->A;
  fe_attrs *a = &nd->attrs;
  operand *q = in[0], *k = in[1], *v = in[2];
  if (q->rank < 2 || q->rank != k->rank || q->rank != v->rank) {
    diag_report(r->dl, D_BAD_SHAPE, nd->at, NULL, "Attention takes Q, K, V of equal rank >= 2");
    return false;
  }
  int n = q->rank;
  for (int i = 0; i < n - 2; i++)
    if (!sx_equal(q->shape[i], k->shape[i]) || !sx_equal(q->shape[i], v->shape[i])) {
      diag_report(r->dl, D_BROADCAST_MISMATCH, nd->at, NULL, "Attention batch axis %d differs between Q, K, V", i);
      return false;
    }
  if (!sx_equal(q->shape[n - 1], k->shape[n - 1]) || !sx_equal(k->shape[n - 2], v->shape[n - 2])) {
    diag_report(r->dl, D_CONTRACT_MISMATCH, nd->at, NULL,
                "Attention needs Q[...,S,D], K[...,Sk,D], V[...,Sk,Dv]; got %s, %s, %s",
                sx_shape_str(A, n, q->shape), sx_shape_str(A, n, k->shape), sx_shape_str(A, n, v->shape));
    return false;
  }
  if (q->dt != k->dt || q->dt != v->dt) {
    diag_report(r->dl, D_DTYPE_MISMATCH, nd->at, NULL, "Attention operands must share a dtype");
    return false;
  }
  if (!need_acc(r, nd, q->dt)) return false;
  res->rank = n;
  res->shape = ARENA_ARRAY(A, const sx *, n);
  for (int i = 0; i < n - 1; i++) res->shape[i] = q->shape[i];
  res->shape[n - 1] = v->shape[n - 1];
  res->dt = a->has_acc ? a->acc_dtype : q->dt;
  return true;
}

/* Elementwise's result: its shape and dtype, or a diagnostic. */
static bool infer_elementwise(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  fe_attrs *a = &nd->attrs;
  res->rank = in[0]->rank;
  res->shape = (const sx **)in[0]->shape;
  res->dt = in[0]->dt;
  int first = nd->fn == EW_WHERE ? 1 : 0;
  if (nd->fn == EW_WHERE) res->dt = in[1]->dt;
  for (int i = 1; i < nd->nin; i++) {
    if (!broadcast_shapes(r, nd, res->rank, res->shape, in[i]->rank, in[i]->shape, &res->rank, &res->shape)) return false;
    if (i > first) res->dt = dtype_promote(res->dt, in[i]->dt);
  }
  if (nd->fn == EW_CAST) res->dt = a->to;
  return true;
}

/* Reduce's result: its shape and dtype, or a diagnostic. */
static bool infer_reduce(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  arena *A = r->A;
  fe_attrs *a = &nd->attrs;
  operand *x = in[0];
  bool drop[FE_MAX_RANK] = {0};
  for (int i = 0; i < a->naxes; i++) {
    if (!norm_axis(r, nd, a->axes[i], x->rank, &a->axes[i])) return false;
    if (drop[a->axes[i]]) {
      diag_report(r->dl, D_BAD_ATTR, nd->at, NULL, "axis %lld is reduced twice", (long long)a->axes[i]);
      return false;
    }
    drop[a->axes[i]] = true;
  }
  res->shape = ARENA_ARRAY(A, const sx *, x->rank);
  for (int i = 0; i < x->rank; i++)
    if (!drop[i]) res->shape[res->rank++] = x->shape[i];
  if (a->rop == RED_SUM) {
    if (!need_acc(r, nd, x->dt)) return false;
    res->dt = a->has_acc ? a->acc_dtype : x->dt;
  }
  return true;
}

/* Softmax's result: its shape and dtype, or a diagnostic. */
static bool infer_softmax(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  fe_attrs *a = &nd->attrs;
  res->rank = in[0]->rank;
  res->shape = (const sx **)in[0]->shape;
  if (res->rank == 0 || !norm_axis(r, nd, a->axis, res->rank, &a->axis)) {
    if (res->rank == 0) diag_report(r->dl, D_BAD_SHAPE, nd->at, NULL, "Softmax of a scalar");
    return false;
  }
  return true;
}

/* Transpose's result: its shape and dtype, or a diagnostic. */
static bool infer_transpose(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  arena *A = r->A;
  fe_attrs *a = &nd->attrs;
  operand *x = in[0];
  bool seen[FE_MAX_RANK] = {0};
  bool ok = a->nperm == x->rank;
  for (int i = 0; ok && i < a->nperm; i++) {
    if (a->perm[i] >= x->rank || seen[a->perm[i]]) ok = false;
    else seen[a->perm[i]] = true;
  }
  if (!ok) {
    diag_report(r->dl, D_BAD_MOVEMENT, nd->at, NULL, "perm is not a permutation of %d axes", x->rank);
    return false;
  }
  res->rank = x->rank;
  res->shape = ARENA_ARRAY(A, const sx *, res->rank);
  for (int i = 0; i < res->rank; i++) res->shape[i] = x->shape[a->perm[i]];
  return true;
}

/* Reshape's result: its shape and dtype, or a diagnostic. */
static bool infer_reshape(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  arena *A = r->A;
  fe_attrs *a = &nd->attrs;
  const sx *p0 = prod(A, in[0]->rank, in[0]->shape), *p1 = prod(A, a->nshape, a->shape);
  if (!sx_equal(p0, p1)) {
    diag_report(r->dl, D_RESHAPE_MISMATCH, nd->at, NULL, "reshape of %s (%s elements) to %s (%s elements)",
                sx_shape_str(A, in[0]->rank, in[0]->shape), sx_str(A, p0), sx_shape_str(A, a->nshape, a->shape),
                sx_str(A, p1));
    return false;
  }
  res->rank = a->nshape;
  res->shape = a->shape;
  return true;
}

/* Cast's result: its shape and dtype, or a diagnostic. */
static bool infer_cast(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  fe_attrs *a = &nd->attrs;
  res->rank = in[0]->rank;
  res->shape = (const sx **)in[0]->shape;
  res->dt = a->to;
  return true;
}

/* Pad's result: its shape and dtype, or a diagnostic. */
static bool infer_pad(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  arena *A = r->A;
  fe_attrs *a = &nd->attrs;
  if (a->npads != in[0]->rank) {
    diag_report(r->dl, D_BAD_MOVEMENT, nd->at, NULL, "Pad gives %d pads for rank %d", a->npads, in[0]->rank);
    return false;
  }
  res->rank = in[0]->rank;
  res->shape = ARENA_ARRAY(A, const sx *, res->rank);
  for (int i = 0; i < res->rank; i++) res->shape[i] = sx_add(A, in[0]->shape[i], sx_add(A, a->pad_lo[i], a->pad_hi[i]));
  return true;
}

/* Slice's result: its shape and dtype, or a diagnostic. */
static bool infer_slice(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  arena *A = r->A;
  fe_attrs *a = &nd->attrs;
  if (a->nslice != in[0]->rank) {
    diag_report(r->dl, D_BAD_MOVEMENT, nd->at, NULL, "Slice gives %d axes for rank %d", a->nslice, in[0]->rank);
    return false;
  }
  res->rank = in[0]->rank;
  res->shape = ARENA_ARRAY(A, const sx *, res->rank);
  for (int i = 0; i < res->rank; i++) {
    const sx *len = sx_sub(A, a->ends[i], a->starts[i]);
    int64_t l, sz;
    if (sx_is_int(len, &l) && l <= 0) {
      diag_report(r->dl, D_BAD_MOVEMENT, nd->at, NULL, "Slice axis %d is empty (start %s, end %s)", i,
                  sx_str(A, a->starts[i]), sx_str(A, a->ends[i]));
      return false;
    }
    if (sx_is_int(a->ends[i], &l) && sx_is_int(in[0]->shape[i], &sz) && l > sz) {
      /* symbolic ends are checked by Poly-View (UnguardedAccess) */
      diag_report(r->dl, D_BAD_MOVEMENT, nd->at, NULL, "Slice axis %d ends at %lld past its size %lld", i,
                  (long long)l, (long long)sz);
      return false;
    }
    res->shape[i] = sx_ceildiv_int(A, len, a->steps[i]);
  }
  return true;
}

/* Flip's result: its shape and dtype, or a diagnostic. */
static bool infer_flip(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  fe_attrs *a = &nd->attrs;
  bool seen[FE_MAX_RANK] = {0};
  for (int i = 0; i < a->naxes; i++) {
    if (!norm_axis(r, nd, a->axes[i], in[0]->rank, &a->axes[i])) return false;
    if (seen[a->axes[i]]) {
      diag_report(r->dl, D_BAD_MOVEMENT, nd->at, NULL, "axis %lld is flipped twice", (long long)a->axes[i]);
      return false;
    }
    seen[a->axes[i]] = true;
  }
  res->rank = in[0]->rank;
  res->shape = (const sx **)in[0]->shape;
  return true;
}

/* Expand's result: its shape and dtype, or a diagnostic. */
static bool infer_expand(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  arena *A = r->A;
  fe_attrs *a = &nd->attrs;
  operand *x = in[0];
  if (a->nshape < x->rank) {
    diag_report(r->dl, D_BAD_MOVEMENT, nd->at, NULL, "Expand to rank %d from rank %d", a->nshape, x->rank);
    return false;
  }
  for (int i = 0; i < x->rank; i++) {
    const sx *s = x->shape[i], *t = a->shape[a->nshape - x->rank + i];
    if (!sx_is_one(s) && !sx_equal(s, t)) {
      diag_report(r->dl, D_BROADCAST_MISMATCH, nd->at, NULL, "cannot expand axis of size %s to %s",
                  sx_str(A, s), sx_str(A, t));
      return false;
    }
  }
  res->rank = a->nshape;
  res->shape = a->shape;
  return true;
}

/* Tile's result: its shape and dtype, or a diagnostic. */
static bool infer_tile(reader *r, fe_node *nd, operand *const *in, fe_result *res) {
  arena *A = r->A;
  fe_attrs *a = &nd->attrs;
  /* torch's Tensor.repeat: one repeat count per result axis, at least
   * one per input axis; extra counts prepend axes of size 1 */
  operand *x = in[0];
  if (a->nrep < x->rank) {
    diag_report(r->dl, D_BAD_MOVEMENT, nd->at,
                "Give one repeat count per input axis, 1 for an axis kept as it is (more counts prepend axes).",
                "Tile has %d repeats for an input of rank %d", a->nrep, x->rank);
    return false;
  }
  res->rank = a->nrep;
  const sx **sh = ARENA_ARRAY(A, const sx *, res->rank + 1);
  for (int i = 0; i < res->rank; i++) {
    int k = i - (res->rank - x->rank);
    sh[i] = sx_mul(A, k >= 0 ? x->shape[k] : sx_int(A, 1), sx_int(A, a->repeats[i]));
  }
  res->shape = sh;
  return true;
}

/* The shape rules, one per op (frontend.def's infer column). */
static fe_infer_fn *const INFER[FE__COUNT] = {
#define X(e, name, mn, mx, attrs, infer) [e] = infer,
#include "frontend.def"
#undef X
};

static bool infer_node(reader *r, fe_node *nd) {
  fe_graph *g = r->g;
  operand inv[3] = {0}, *in[3] = {0};
  for (int i = 0; i < nd->nin; i++) {
    in[i] = &inv[i];
    const fe_tensor *t = &g->tensors[nd->in[i]];
    inv[i].name = t->name;
    inv[i].layout = t->layout;
    fe_tensor_value(g, nd->in[i], &inv[i].dt, &inv[i].rank, &inv[i].shape);
    if (inv[i].rank > 0 && !inv[i].shape) {
      diag_report(r->dl, D_BAD_SHAPE, nd->at, NULL, "'%s' has no shape", t->name);
      return false;
    }
  }
  /* int32 tensors are indices: a Gather's second operand and nothing else */
  for (int i = 0; i < nd->nin; i++)
    if ((in[i]->dt == DT_INT32) != (nd->op == FE_GATHER && i == 1)) {
      diag_report(r->dl, D_DTYPE_MISMATCH, nd->at,
                  in[i]->dt == DT_INT32 ? "int32 tensors are indices: only a Gather's second operand reads them."
                                        : "Declare the index tensor int32.",
                  "operand %d ('%s') of %s is %s%s", i, in[i]->name, fe_table[nd->op].name, dtype_name(in[i]->dt),
                  in[i]->dt == DT_INT32 ? "" : "; a Gather's index must be int32");
      return false;
    }
  DLC_ASSERT(nd->op >= 0 && nd->op < FE__COUNT);
  /* each rule sets the rank and shape, and the dtype where it is not its first operand's */
  fe_result res = {0, NULL, in[0]->dt};
  if (!INFER[nd->op](r, nd, in, &res)) return false;
  int rank = res.rank;
  const sx **shape = res.shape;
  dtype dt = res.dt;
  for (int i = 0; i < rank; i++)
    if (sx_has_overflow(shape[i])) {
      diag_report(r->dl, D_BAD_NUMBER, nd->at, NULL, "a size of the result overflows 64 bits");
      return false;
    }
  nd->rdt = dt;
  nd->rrank = rank;
  nd->rshape = shape;
  fe_tensor *out = &g->tensors[nd->out[0]];
  if (out->declared && out->dt == DT_INT32) {
    diag_report(r->dl, D_BAD_DTYPE, out->at, "Declare it fp16, bf16, fp32 or T: only a signature input may be int32 (a Gather's index).",
                "'%s' is int32, but %s computes it", out->name, nd->name);
    return false;
  }
  if (!out->declared) { /* intermediates take the inferred result */
    out->rank = rank;
    out->shape = shape;
    out->dt = dt;
  }
  return true;
}

static bool check_names(reader *r, fe_node *nodes, int n) {
  fe_graph *g = r->g;
  bool ok = true;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (strcmp(nodes[i].name, nodes[j].name) == 0) {
        diag_report(r->dl, D_DUPLICATE_NAME, nodes[j].at, NULL, "node name '%s' is used twice", nodes[j].name);
        ok = false;
      }
  for (int i = 0; i < n; i++) {
    int t = nodes[i].out[0];
    fe_tensor *tt = &g->tensors[t];
    if (tt->sig_input >= 0) {
      diag_report(r->dl, D_DUPLICATE_NAME, nodes[i].at, NULL, "node '%s' writes the signature input '%s'",
                  nodes[i].name, tt->name);
      ok = false;
    } else if (tt->producer >= 0) {
      diag_report(r->dl, D_DUPLICATE_NAME, nodes[i].at, NULL, "tensor '%s' is written by '%s' and '%s'",
                  tt->name, nodes[tt->producer].name, nodes[i].name);
      ok = false;
    } else {
      tt->producer = i;
    }
    for (int k = 0; k < nodes[i].nin; k++)
      if (nodes[i].in[k] == t) {
        diag_report(r->dl, D_GRAPH_CYCLE, nodes[i].at, NULL, "node '%s' reads its own output '%s'", nodes[i].name,
                    tt->name);
        ok = false;
      }
  }
  for (int i = 0; i < n && ok; i++)
    for (int k = 0; k < nodes[i].nin; k++) {
      fe_tensor *tt = &g->tensors[nodes[i].in[k]];
      if (tt->producer < 0 && tt->sig_input < 0 && !tt->declared) {
        diag_report(r->dl, D_UNDECLARED_TENSOR, nodes[i].at, NULL,
                    "'%s' is neither a signature input nor the output of a node", tt->name);
        ok = false;
      } else if (tt->producer < 0 && tt->sig_input < 0) {
        diag_report(r->dl, D_UNDECLARED_TENSOR, nodes[i].at,
                    "Add the tensor to signature.inputs, or produce it by a node.",
                    "'%s' is declared but is neither a signature input nor produced by a node", tt->name);
        ok = false;
      }
    }
  for (int i = 0; i < g->nout; i++) {
    fe_tensor *tt = &g->tensors[g->outputs[i]];
    if (tt->producer < 0)
      diag_report(r->dl, D_SIGNATURE, tt->at, NULL, "signature output '%s' is not written by any node", tt->name),
          ok = false;
  }
  return ok;
}

static const char *const *g_allowed_dims(reader *r) { return r->g->params; }

fe_graph *fe_read_json(arena *A, const cJSON *root, const char *where, const fe_instance *inst, diag_list *dl) {
  reader r = {0};
  r.A = A;
  r.dl = dl;
  r.inst = inst;
  r.where = where;
  r.jc = (ju_ctx){A, dl, D_GRAPH_SCHEMA, D_GRAPH_UNKNOWN_KEY, where};
  int nerr0 = dl->nerrors;
  if (!cJSON_IsObject(root)) {
    diag_report(dl, D_GRAPH_SCHEMA, where, NULL, "a graph is a JSON object, not %s", ju_type_name(root));
    return NULL;
  }
  fe_graph *g = ARENA_NEW(A, fe_graph);
  r.g = g;
  g->A = A;
  g->T = inst ? inst->T : DT_FP16;
  if (g->T == DT_T) g->T = DT_FP16;
  ju_check_keys(&r.jc, root, "", top_keys);
  const char *name = NULL;
  ju_string(&r.jc, root, "name", "", false, &name);
  g->name = name ? name : "graph";
  /* the graph's name names the generated namespace and kernels of --graph
   * ... --dump=cu, and the regions in comments */
  if (!is_ident(g->name)) {
    diag_report(dl, D_NOT_IDENT, "name",
                "Name the graph with a C identifier (a letter or '_', then letters, digits and '_', at most 64 "
                "characters): \"name\": \"my_graph\" in JSON, name \"my_graph\" in a .dlc file (which, without "
                "it, is named after its file).",
                "graph name '%s' is not a C identifier", quoted(A, g->name));
    return NULL;
  }
  const cJSON *sig = ju_object(&r.jc, root, "signature", "", true);
  const cJSON *tens = ju_object(&r.jc, root, "tensors", "", true);
  const cJSON *nodes = ju_array(&r.jc, root, "graph", "", true);
  if (!sig || !tens || !nodes) return NULL;
  read_signature(&r, sig);
  /* compile-time dims of the instance */
  if (inst && inst->dim_values) {
    int n = cJSON_GetArraySize(inst->dim_values);
    g->bound_name = ARENA_ARRAY(A, const char *, n);
    g->bound_value = ARENA_ARRAY(A, int64_t, n);
    for (const cJSON *it = inst->dim_values->child; it; it = it->next) {
      int64_t v;
      if (!fe_is_dim(g, it->string)) {
        const char *dims = "";
        for (int d = 0; d < g->ndims; d++) dims = arena_printf(A, "%s%s%s", dims, d ? ", " : "", g->dims[d]);
        diag_report(dl, D_MANIFEST_VALUE, where, arena_printf(A, "Bind one of the signature dims: %s.", dims),
                    "'%s' is bound (by a manifest variant or --bind) but is not a signature dim", it->string);
        continue;
      }
      if (!ju_int_item(&r.jc, it, it->string, 1, JU_INT_MAX, &v)) continue;
      g->bound_name[g->nbound] = it->string;
      g->bound_value[g->nbound++] = v;
    }
  }
  (void)g_allowed_dims;
  read_tensors(&r, tens);
  if (dl->nerrors > nerr0) return NULL;
  int n = cJSON_GetArraySize(nodes);
  if (n == 0) {
    diag_report(dl, D_GRAPH_SCHEMA, "graph", NULL, "the graph has no nodes");
    return NULL;
  }
  if (n > 10000) {
    diag_report(dl, D_GRAPH_SCHEMA, "graph", NULL, "the graph has %d nodes; the limit is 10000", n);
    return NULL;
  }
  fe_node *nv = ARENA_ARRAY(A, fe_node, n);
  int i = 0;
  bool ok = true;
  for (const cJSON *it = nodes->child; it; it = it->next, i++) ok &= read_node(&r, it, i, &nv[i]);
  if (!ok) return NULL;
  if (!check_names(&r, nv, n)) return NULL;
  if (!topo_sort(&r, nv, n)) return NULL;
  g->nnodes = n;
  for (int k = 0; k < n; k++)
    if (!infer_node(&r, &g->nodes[k])) return NULL;
  if (dl->nerrors > nerr0) return NULL;
  if (!fe_verify(g, dl)) return NULL;
  return g;
}

fe_graph *fe_read_text(arena *A, const char *text, const char *where, const fe_instance *inst, diag_list *dl) {
  cJSON *j = ju_parse(text, dl, where);
  if (!j) return NULL;
  fe_graph *g = fe_read_json(A, j, where, inst, dl);
  cJSON_Delete(j);
  return g;
}

bool fe_verify(const fe_graph *g, diag_list *dl) {
  bool ok = true;
  /* every node input is produced earlier or is a signature input (purity and
   * topological order), every output is written once */
  for (int i = 0; i < g->nnodes; i++) {
    const fe_node *nd = &g->nodes[i];
    for (int k = 0; k < nd->nin; k++) {
      const fe_tensor *t = &g->tensors[nd->in[k]];
      if (t->sig_input < 0 && !(t->producer >= 0 && t->producer < i)) {
        diag_report(dl, D_GRAPH_CYCLE, nd->at, NULL, "'%s' is read before it is written", t->name);
        ok = false;
      }
      if (t->rank > 0 && !t->shape) {
        diag_report(dl, D_BAD_SHAPE, nd->at, NULL, "'%s' has no shape", t->name);
        ok = false;
      }
    }
  }
  /* unused inputs */
  for (int i = 0; i < g->nin; i++) {
    int t = g->inputs[i];
    bool used = false;
    for (int k = 0; k < g->nnodes && !used; k++)
      for (int j = 0; j < g->nodes[k].nin; j++)
        if (g->nodes[k].in[j] == t) used = true;
    if (!used) diag_report(dl, D_UNUSED_INPUT, g->tensors[t].at, NULL, "input '%s' is never read", g->tensors[t].name);
  }
  /* shapes are integers and symbols of the signature (or derived ones) */
  for (int i = 0; i < g->ntensors; i++) {
    const fe_tensor *t = &g->tensors[i];
    if (t->dt == DT_T) {
      diag_report(dl, D_BAD_DTYPE, t->at, NULL, "tensor '%s' has no concrete dtype", t->name);
      ok = false;
    }
  }
  return ok;
}

/* ---- dump ------------------------------------------------------------------ */

static cJSON *ints_json(int n, const int64_t *v) {
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)v[i]));
  return arr;
}

cJSON *fe_dump(const fe_graph *g) {
  arena *A = g->A;
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "name", g->name);
  cJSON_AddStringToObject(root, "T", dtype_name(g->T));
  cJSON *sig = cJSON_AddObjectToObject(root, "signature");
  cJSON *dims = cJSON_AddArrayToObject(sig, "dims");
  for (int i = 0; i < g->ndims; i++) cJSON_AddItemToArray(dims, cJSON_CreateString(g->dims[i]));
  if (g->nsig_attrs) {
    cJSON *at = cJSON_AddArrayToObject(sig, "attrs");
    for (int i = 0; i < g->nsig_attrs; i++) cJSON_AddItemToArray(at, cJSON_CreateString(g->sig_attrs[i]));
  }
  if (g->nbound) {
    cJSON *b = cJSON_AddObjectToObject(sig, "bound_dims");
    for (int i = 0; i < g->nbound; i++) cJSON_AddNumberToObject(b, g->bound_name[i], (double)g->bound_value[i]);
  }
  for (int io = 0; io < 2; io++) {
    cJSON *arr = cJSON_AddArrayToObject(sig, io ? "outputs" : "inputs");
    int n = io ? g->nout : g->nin;
    for (int i = 0; i < n; i++) {
      const fe_tensor *t = &g->tensors[io ? g->outputs[i] : g->inputs[i]];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "tensor", t->name);
      cJSON_AddStringToObject(o, "role", t->role);
      cJSON_AddStringToObject(o, "mutability", t->mutability);
      cJSON_AddStringToObject(o, "storage", t->storage);
      cJSON_AddItemToArray(arr, o);
    }
  }
  cJSON *tens = cJSON_AddObjectToObject(root, "tensors");
  for (int i = 0; i < g->ntensors; i++) {
    const fe_tensor *t = &g->tensors[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "dtype", dtype_name(t->dt));
    cJSON_AddItemToObject(o, "shape", sx_shape_json(A, t->rank, t->shape));
    if (t->layout) cJSON_AddStringToObject(o, "layout", t->layout);
    if (t->nlayout_perm) cJSON_AddItemToObject(o, "layout_perm", cJSON_CreateIntArray(t->layout_perm, t->nlayout_perm));
    if (t->layout_tag) cJSON_AddStringToObject(o, "layout_tag", t->layout_tag);
    if (t->coaccess_block) cJSON_AddNumberToObject(o, "coaccess_block", t->coaccess_block);
    if (t->has_transform_meta) {
      cJSON *tm = cJSON_AddObjectToObject(o, "transform_meta");
      if (t->delta_layout) cJSON_AddBoolToObject(tm, "delta_layout", true);
      if (t->tm_kind) cJSON_AddStringToObject(tm, "kind", t->tm_kind);
      if (t->conversion_of) cJSON_AddStringToObject(tm, "conversion_of", t->conversion_of);
      if (t->ncoaccess) {
        cJSON *co = cJSON_AddArrayToObject(tm, "coaccess");
        for (int k = 0; k < t->ncoaccess; k++) {
          cJSON *e = cJSON_CreateArray();
          cJSON_AddItemToArray(e, cJSON_CreateNumber(t->co_i[k]));
          cJSON_AddItemToArray(e, cJSON_CreateNumber(t->co_j[k]));
          cJSON_AddItemToArray(e, cJSON_CreateNumber(t->co_w[k]));
          cJSON_AddItemToArray(co, e);
        }
      }
    }
    cJSON_AddStringToObject(o, "kind", t->sig_input >= 0 ? "input" : t->sig_output >= 0 ? "output" : "intermediate");
    cJSON_AddItemToObject(tens, t->name, o);
  }
  cJSON *graph = cJSON_AddArrayToObject(root, "graph");
  for (int i = 0; i < g->nnodes; i++) {
    const fe_node *nd = &g->nodes[i];
    const fe_attrs *a = &nd->attrs;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", fe_table[nd->op].name);
    cJSON_AddStringToObject(o, "name", nd->name);
    if (nd->op == FE_ELEMENTWISE) cJSON_AddStringToObject(o, "fn", ew_table[nd->fn].name);
    cJSON *ins = cJSON_AddArrayToObject(o, "inputs");
    for (int k = 0; k < nd->nin; k++) cJSON_AddItemToArray(ins, cJSON_CreateString(g->tensors[nd->in[k]].name));
    cJSON *outs = cJSON_AddArrayToObject(o, "outputs");
    for (int k = 0; k < nd->nout; k++) cJSON_AddItemToArray(outs, cJSON_CreateString(g->tensors[nd->out[k]].name));
    cJSON *at = cJSON_AddObjectToObject(o, "attrs");
    if (a->has_acc) cJSON_AddStringToObject(at, "acc_dtype", dtype_name(a->acc_dtype));
    switch (nd->op) {
    case FE_CONV2D:
      cJSON_AddItemToObject(at, "stride", ints_json(2, a->stride));
      cJSON_AddItemToObject(at, "pad", ints_json(2, a->pad));
      cJSON_AddItemToObject(at, "dilation", ints_json(2, a->dilation));
      break;
    case FE_ATTENTION:
      cJSON_AddBoolToObject(at, "causal", a->causal);
      if (a->scale_rsqrt) cJSON_AddStringToObject(at, "scale", arena_printf(A, "rsqrt(%s)", a->scale_rsqrt));
      else if (a->has_scale) cJSON_AddNumberToObject(at, "scale", a->scale);
      break;
    case FE_REDUCE:
      cJSON_AddStringToObject(at, "op", a->mean ? "mean" : reduce_op_name(a->rop));
      cJSON_AddItemToObject(at, "axes", ints_json(a->naxes, a->axes));
      break;
    case FE_SOFTMAX: cJSON_AddNumberToObject(at, "axis", (double)a->axis); break;
    case FE_GATHER: cJSON_AddNumberToObject(at, "dim", (double)a->axis); break;
    case FE_TILE: cJSON_AddItemToObject(at, "repeats", ints_json(a->nrep, a->repeats)); break;
    case FE_TRANSPOSE: cJSON_AddItemToObject(at, "perm", ints_json(a->nperm, a->perm)); break;
    case FE_RESHAPE:
    case FE_EXPAND: cJSON_AddItemToObject(at, "shape", sx_shape_json(A, a->nshape, a->shape)); break;
    case FE_FLIP: cJSON_AddItemToObject(at, "axes", ints_json(a->naxes, a->axes)); break;
    case FE_PAD: {
      cJSON *p = cJSON_AddArrayToObject(at, "pads");
      for (int k = 0; k < a->npads; k++) {
        const sx *pr[2] = {a->pad_lo[k], a->pad_hi[k]};
        cJSON_AddItemToArray(p, sx_shape_json(A, 2, pr));
      }
      cJSON_AddNumberToObject(at, "value", a->pad_value);
      break;
    }
    case FE_SLICE:
      cJSON_AddItemToObject(at, "starts", sx_shape_json(A, a->nslice, a->starts));
      cJSON_AddItemToObject(at, "ends", sx_shape_json(A, a->nslice, a->ends));
      cJSON_AddItemToObject(at, "steps", ints_json(a->nslice, a->steps));
      break;
    default: break;
    }
    if (a->has_to) cJSON_AddStringToObject(at, "to", dtype_name(a->to));
    if (a->has_scalar) cJSON_AddNumberToObject(at, "scalar", a->scalar);
    cJSON_AddItemToArray(graph, o);
  }
  return root;
}
