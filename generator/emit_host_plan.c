/* The host C of the plan API (issue 37, spec §12; docs/runtime.md): for
 * every op, dlc_<op>_plan_create, _plan_run, _plan_workspace_size and
 * _plan_destroy beside its per-call entry points.
 *
 * A plan owns the op's params: the signature inputs of role `param` and
 * storage `const_pool` whose shapes are functions of the signature dims.
 * plan_create takes them, with the dims their shapes use, checks them as
 * the per-call entry would, and copies them into the plan's
 * ConstPool (libkernels/plan.c lays it out); plan_run takes the other dims,
 * attrs and tensors and runs dlc_<op>_ws with the pool's tensors in the
 * params' places, through the backend's dlc__plan_exec (a CUDA graph per
 * argument set on the CUDA backend).  The rest, the ConstPool's layout and
 * the plans' handles, is the runtime's. */
#include <stdio.h>
#include <string.h>

#include "emit_int.h"
#include "strbuf.h"

/* The pooled params of an op and the arguments the plan fixes. */
typedef struct plan_split {
  int n;
  const arg *a;
  bool *at_create;          /* per argument: given to plan_create (a fixed dim, a pooled param or its ld) */
  int npool;
  const fe_tensor *pool[16];
  const cJSON *shape[16];   /* each pooled param's shape as the graph writes it */
  int nfixed;
  const fe_graph *g;         /* the first instance's */
  /* the param conversions plan_create makes (plan_param_convs): pooled
   * param p holds conversion conv[p]'s value when conv[p] >= 0 */
  int npc;
  ws_param_conv pc[WS_MAX_VALUES];
  int conv[16];
} plan_split;

static const cJSON *graph_tensor(const emit_op *eo, const char *name) {
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(eo->op->graph, "tensors");
  return cJSON_GetObjectItemCaseSensitive(ts, name);
}

static int dim_arg(const plan_split *ps, const char *sym) {
  for (int i = 0; i < ps->n; i++)
    if (ps->a[i].role == ARG_DIM && strcmp(ps->a[i].what, sym) == 0) return i;
  return -1;
}

/* The symbols an sx reads (sx_subst as a visitor: nothing replaced): set
 * *var when one is not a signature dim, and mark the dims' arguments in
 * `use` (NULL: none). */
typedef struct sym_visit {
  const plan_split *ps;
  bool *use, *var;
} sym_visit;

static const sx *visit_sym(void *ctx, sx_atom_kind kind, const char *name) {
  sym_visit *v = ctx;
  int i = kind == SXA_PARAM ? dim_arg(v->ps, name) : -1;
  if (i < 0) *v->var = true;
  else if (v->use) v->use[i] = true;
  return NULL;
}

static void sx_syms(arena *A, const plan_split *ps, const sx *x, bool *use, bool *var) {
  sym_visit v = {ps, use, var};
  (void)sx_subst(A, x, visit_sym, &v);
}

/* Axis d of a param as the graph writes it, parsed over the signature dims;
 * NULL when it reads anything else. */
static const sx *param_axis(arena *A, const plan_split *ps, const fe_graph *g, const cJSON *e) {
  if (cJSON_IsNumber(e)) return e->valuedouble >= 0 ? sx_int(A, (int64_t)e->valuedouble) : NULL;
  if (!cJSON_IsString(e)) return NULL;
  const char **dims = ARENA_ARRAY(A, const char *, g->ndims + 1);
  for (int i = 0; i < g->ndims; i++) dims[i] = g->dims[i];
  const sx *x = sx_parse(A, e->valuestring, dims);
  bool var = false;
  if (x) sx_syms(A, ps, x, NULL, &var);
  return x && !var ? x : NULL;
}

/* A param the ConstPool can hold: its shape a function of signature dims. */
static bool poolable(arena *A, const plan_split *ps, const emit_op *eo, const fe_tensor *t) {
  if (!fe_pooled_param(t)) return false;
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(graph_tensor(eo, t->name), "shape");
  if (!cJSON_IsArray(sh) || cJSON_GetArraySize(sh) != t->rank || t->rank < 1) return false;
  for (const cJSON *e = sh->child; e; e = e->next)
    if (!param_axis(A, ps, eo->inst[0].fe, e)) return false;
  return true;
}

static bool same_convs(const ws_param_conv *x, int nx, const ws_param_conv *y, int ny) {
  if (nx != ny) return false;
  for (int i = 0; i < nx; i++)
    if (x[i].value != y[i].value || strcmp(x[i].param, y[i].param) || strcmp(x[i].m->name, y[i].m->name) ||
        x[i].k->chain_index != y[i].k->chain_index)
      return false;
  return true;
}

/* The layout conversions of pooled params that plan_create makes once
 * (issue 37 item 2; docs/runtime.md, The ConstPool): a chain's
 * ws_param_convs (each over its param's dims alone, which plan_create
 * takes), when every instance's chain has the same ones and an instance is
 * picked by its dtype alone (so plan_create knows whose kernel to run).
 * Otherwise none: the plan's runs then make them, as the call does. */
static void split_convs(const emit_op *eo, plan_split *ps) {
  for (int p = 0; p < 16; p++) ps->conv[p] = -1;
  if (!is_chain(eo) || !ps->npool) return;
  for (int i = 0; i < eo->ninst; i++) {
    const emit_instance *in = &eo->inst[i];
    if (in->attr_values || in->dim_values || in->bucket) return;
    for (int j = 0; j < i; j++)
      if (eo->inst[j].dt == in->dt) return;
  }
  ws_param_conv pc[WS_MAX_VALUES];
  int n = ws_param_convs(eo->inst[0].fe, eo->inst[0].k, pc, WS_MAX_VALUES);
  if (n > WS_MAX_VALUES) return;
  for (int i = 1; i < eo->ninst; i++) {
    ws_param_conv o[WS_MAX_VALUES];
    int no = ws_param_convs(eo->inst[i].fe, eo->inst[i].k, o, WS_MAX_VALUES);
    if (!same_convs(pc, n, o, no)) return;
  }
  for (int j = 0; j < n; j++) {
    int p = 0;
    while (p < ps->npool && strcmp(ps->pool[p]->name, pc[j].param)) p++;
    if (p == ps->npool) continue;
    ps->conv[p] = ps->npc;
    ps->pc[ps->npc++] = pc[j];
  }
}

static void split_args(emit_ctx *c, const emit_op *eo, const arg *a, int n, plan_split *ps) {
  const fe_graph *g = eo->inst[0].fe;
  *ps = (plan_split){.n = n, .a = a, .at_create = ARENA_ARRAY(c->A, bool, n + 1), .g = g};
  for (int i = 0; i < g->nin && ps->npool < 16; i++) {
    const fe_tensor *t = &g->tensors[g->inputs[i]];
    if (!poolable(c->A, ps, eo, t)) continue;
    const int p = ps->npool++;
    ps->pool[p] = t;
    ps->shape[p] = cJSON_GetObjectItemCaseSensitive(graph_tensor(eo, t->name), "shape");
    bool var = false;
    for (const cJSON *e = ps->shape[p]->child; e; e = e->next) sx_syms(c->A, ps, param_axis(c->A, ps, g, e), ps->at_create, &var);
    for (int j = 0; j < n; j++)
      if ((a[j].role == ARG_INPUT || a[j].role == ARG_LD) && strcmp(a[j].what, t->name) == 0) ps->at_create[j] = true;
  }
  for (int i = 0; i < n; i++) ps->nfixed += a[i].role == ARG_DIM && ps->at_create[i];
  split_convs(eo, ps);
}

int plan_param_convs(emit_ctx *c, const emit_op *eo, const arg *a, int n, ws_param_conv *out) {
  plan_split ps;
  split_args(c, eo, a, n, &ps);
  for (int j = 0; j < ps.npc; j++) out[j] = ps.pc[j];
  return ps.npc;
}

/* x as checked host C over plan_create's dims (its arguments: the dims'
 * lower-case names); pool_axis: axis d of pooled param p so. */
static const char *create_text(arena *A, const sx *x) { return sxc_args(A, x); }
static const char *pool_axis(arena *A, const plan_split *ps, int p, int d) {
  return create_text(A, param_axis(A, ps, ps->g, cJSON_GetArrayItem(ps->shape[p], d)));
}

static bool is_shape(const arg *x) { return x->role == ARG_DIM || x->role == ARG_ATTR; }

static const char *elem_bytes(arena *A, const emit_op *eo, const fe_tensor *t) {
  const cJSON *dt = cJSON_GetObjectItemCaseSensitive(graph_tensor(eo, t->name), "dtype");
  dtype d;
  if (cJSON_IsString(dt) && dtype_parse(dt->valuestring, &d) && d == DT_T) return "(dtype == DLC_F32 ? 4 : 2)";
  return arena_printf(A, "%d", dtype_bytes(t->dt));
}

/* The arguments plan_create (create) or plan_run takes, four a line. */
static void args_list(strbuf *s, const plan_split *ps, bool create, bool shape_only) {
  for (int i = 0, k = 0; i < ps->n; i++) {
    const arg *x = &ps->a[i];
    if (ps->at_create[i] != create || (shape_only && !is_shape(x))) continue;
    sb_printf(s, ",%s%s%s%s", k++ % 4 == 0 ? "\n    " : " ", x->type, x->type[strlen(x->type) - 1] == '*' ? "" : " ",
              x->name);
  }
}

static void proto_create(strbuf *s, const char *on, const plan_split *ps) {
  sb_printf(s, "dlc_status dlc_%s_plan_create(dlc_%s_plan **plan, dlc_dtype dtype", on, on);
  args_list(s, ps, true, false);
  sb_puts(s, ",\n    struct CUstream_st *stream)");
}
static void proto_run(strbuf *s, const char *on, const plan_split *ps) {
  sb_printf(s, "dlc_status dlc_%s_plan_run(dlc_%s_plan *plan", on, on);
  args_list(s, ps, false, false);
  sb_puts(s, ",\n    void *workspace, size_t workspace_bytes, struct CUstream_st *stream)");
}
static void proto_size(strbuf *s, const char *on, const plan_split *ps) {
  sb_printf(s, "size_t dlc_%s_plan_workspace_size(const dlc_%s_plan *plan", on, on);
  args_list(s, ps, false, true);
  sb_puts(s, ")");
}
static void proto_destroy(strbuf *s, const char *on) { sb_printf(s, "void dlc_%s_plan_destroy(dlc_%s_plan *plan)", on, on); }

/* The header's word on the param conversions the plan makes (none: ""). */
static const char *conv_note(arena *A, const char *on, const plan_split *ps) {
  if (!ps->npc) return "";
  const char *made = "";
  for (int j = 0; j < ps->npc; j++)
    made = arena_printf(A, "%s%s%s as %s", made, j ? ", " : "", ps->pc[j].param, ps->pc[j].m->name);
  return arena_printf(A,
                      " The pool holds %s, the layout pass's conversion, made once by dlc_%s_plan_create(): a run "
                      "skips it, needs dlc_%s_plan_workspace_size() bytes (the call's less the converted values) and "
                      "returns DLC_ERROR_INVALID_VALUE with fewer, where the call would run the graph as given.",
                      made, on, on);
}

void plan_prototypes_h(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n) {
  arena *A = c->A;
  plan_split ps;
  split_args(c, eo, a, n, &ps);
  const char *on = eo->op->name, *params = "";
  for (int p = 0; p < ps.npool; p++)
    params = arena_printf(A, "%s%s%s", params, p ? (p + 1 == ps.npool ? " and " : ", ") : "", ps.pool[p]->name);
  host_doc_comment(
      s, arena_printf(
             A,
             "A plan of %s (docs/runtime.md): an opaque handle, not an address. dlc_%s_plan_create() %s; "
             "dlc_%s_plan_run() then takes the other arguments of dlc_%s_ws() and runs it, with the same kernels "
             "and the same results (through a CUDA graph per argument set on a stream of the caller's, replayed "
             "on later calls with the same arguments; directly on the default stream, in a stream capture and in "
             "libdlckernels-emu). Calls on one plan run one at a time; calls on different plans may run in parallel. "
             "A destroyed or foreign handle is DLC_ERROR_INVALID_VALUE, never a crash. Destroy a plan once the "
             "work it queued has completed.%s",
             on, on,
             ps.npool ? arena_printf(A,
                                     "copies %s (the params: each row-major at a multiple of 256 bytes, a matrix's rows 16 "
                                     "bytes apart at least) into "
                                     "the plan's ConstPool in device memory, with the dims their shapes use, and "
                                     "waits for the copy: the caller's buffers are free once it returns",
                                     params)
                      : "takes the dtype (the op has no param the ConstPool holds)",
             on, on, conv_note(A, on, &ps)));
  sb_printf(s, "typedef struct dlc_%s_plan dlc_%s_plan;\n", on, on);
  host_doc_comment(s, arena_printf(A,
                                   "Makes a plan of %s for this dtype%s: on DLC_SUCCESS *plan is the new plan; on an "
                                   "error, with dlc_last_error_detail() saying why, *plan is unchanged.",
                                   on, ps.npool ? " and these params" : ""));
  proto_create(s, on, &ps);
  sb_puts(s, ";\n");
  host_doc_comment(s, arena_printf(A,
                                   "dlc_%s_ws() with the plan's dtype, fixed dims and params and these arguments: its "
                                   "status, its checks and its results.",
                                   on));
  proto_run(s, on, &ps);
  sb_puts(s, ";\n");
  host_doc_comment(s, arena_printf(A,
                                   "dlc_%s_workspace_size() for the plan's dtype and fixed dims and these; 0 for a "
                                   "plan that is not live (and as dlc_%s_workspace_size() returns 0).",
                                   on, on));
  proto_size(s, on, &ps);
  sb_puts(s, ";\n");
  host_doc_comment(s, "Frees the plan (its ConstPool and graphs); NULL, a destroyed or a foreign handle is ignored.");
  proto_destroy(s, on);
  sb_puts(s, ";\n\n");
}

/* plan_create's conversions of the params the pool holds converted: each
 * one's kernel (host_param_conv_fn's dlc__pc_<op>_<j>) over a parameter
 * block of plan_create's dims, the param as the caller passed it and its
 * value in the pool. */
static const char *conv_launches(emit_ctx *c, const emit_op *eo, const plan_split *ps) {
  arena *A = c->A;
  const char *on = eo->op->name;
  strbuf b = {0};
  for (int p = 0; p < ps->npool; p++) {
    if (ps->conv[p] < 0) continue;
    const ws_param_conv *pc = &ps->pc[ps->conv[p]];
    const fe_tensor *t = ps->pool[p];
    sb_printf(&b, "  if (dlc_sp[%d].count > 0) {  /* %s -> %s: kernel %d of the chain (region %s), once */\n", p, cmt(A, t->name),
              cmt(A, pc->m->name), pc->k->chain_index, cmt(A, pc->k->r->name));
    sb_printf(&b, "    dlc__p_%s dlc_q;\n    memset(&dlc_q, 0, sizeof dlc_q);\n", on);
    for (int i = 0; i < ps->n; i++)
      if (ps->a[i].role == ARG_DIM && ps->at_create[i]) sb_printf(&b, "    dlc_q.%s = %s;\n", ps->a[i].name, ps->a[i].name);
    sb_printf(&b, "    dlc_q.%s = %s;\n", lc(A, t->name), lc(A, t->name));
    if (t->rank == 2) sb_printf(&b, "    dlc_q.%s = %s;\n", gpuir_ld_param(A, t->name), gpuir_ld_param(A, t->name));
    sb_printf(&b, "    dlc_q.%s = (void *)((uintptr_t)dlc_p->pool + (uintptr_t)dlc_p->off[%d]);\n", lc(A, pc->m->name), p);
    if (pc->m->rank == 2)
      sb_printf(&b, "    dlc_q.%s = %s;\n", gpuir_ld_param(A, pc->m->name), create_text(A, pc->m->shape[1]));
    sb_printf(&b,
              "    if ((dlc_st = dlc__pc_%s_%d(dtype, &dlc_q, stream))) {\n"
              "      dlc__plan_discard(dlc_p);\n      return dlc_st;\n    }\n  }\n",
              on, ps->conv[p]);
  }
  const char *r = arena_strdup(A, sb_str(&b));
  sb_free(&b);
  return r;
}

/* dlc_<op>_plan_create: the checks of the per-call entry on the params,
 * then the pool: each param copied, or converted (conv_launches). */
static void create_fn(emit_ctx *c, strbuf *s, const emit_op *eo, int opi, const plan_split *psp) {
  arena *A = c->A;
  const plan_split ps = *psp;
  const arg *a = ps.a;
  const int n = ps.n;
  const char *on = eo->op->name;
  proto_create(s, on, &ps);
  sb_printf(s, " {\n  dlc__clear_detail();\n  const char *dlc_fn = \"%s_plan_create\";\n", on);
  sb_puts(s, "  if (!plan) return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s: plan is NULL\", dlc_fn);\n");
  sb_puts(s, "  if (!dlc__dtype_name(dtype)) return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%s: dtype = %d is not a dlc_dtype\", dlc_fn, (int)dtype);\n");
  sb_puts(s, "  int dlc_dtype_ok = 0;\n");
  for (int d = 0; d < eo->op->ndtypes; d++) sb_printf(s, "  dlc_dtype_ok |= dtype == %s;\n", dlc_dtype_enum(eo->op->dtypes[d]));
  sb_puts(s, "  if (!dlc_dtype_ok) return dlc__fail(DLC_ERROR_NOT_SUPPORTED, \"%s: dtype %s (%d) is not compiled; add it to the "
             "manifest's dtypes\", dlc_fn, dlc__dtype_name(dtype), (int)dtype);\n");
  for (int i = 0; i < n; i++)
    if (a[i].role == ARG_DIM && ps.at_create[i])
      sb_printf(s, "  if (%s < 0) return dlc__fail(DLC_ERROR_INVALID_VALUE, \"%%s: %s = %%lld is negative\", dlc_fn, (long long)%s);\n",
                a[i].name, a[i].name, a[i].name);
  sb_puts(s, "  int64_t dlc_fixed[] = {0");
  for (int i = 0; i < n; i++)
    if (a[i].role == ARG_DIM && ps.at_create[i]) sb_printf(s, ", %s", a[i].name);
  sb_puts(s, "};\n");
  if (ps.npool) {
    int maxrank = 1;
    for (int p = 0; p < ps.npool; p++)
      if (ps.pool[p]->rank > maxrank) maxrank = ps.pool[p]->rank;
    sb_printf(s,
              "  dlc_status dlc_st;\n  dlc__span dlc_sp[%d];\n"
              "  int64_t dlc_dims[%d], dlc_bytes[%d], dlc_rows[%d], dlc_width[%d], dlc_pitchp[%d], dlc_ld[%d];\n",
              ps.npool, maxrank, ps.npool, ps.npool, ps.npool, ps.npool, ps.npool);
    sb_printf(s, "  const int dlc_eb[%d] = {", ps.npool);
    for (int p = 0; p < ps.npool; p++) sb_printf(s, "%s%s", p ? ", " : "", elem_bytes(A, eo, ps.pool[p]));
    sb_puts(s, "};\n");
    for (int p = 0; p < ps.npool; p++) {
      const fe_tensor *t = ps.pool[p];
      const char *nm = lc(A, t->name);
      if (t->rank == 2) {
        sb_printf(s, "  if ((dlc_st = dlc__check_rows(dlc_fn, \"%s\", %s, dlc_eb[%d], %s, %s, %s, &dlc_sp[%d]))) return dlc_st;\n",
                  nm, nm, p, pool_axis(A, &ps, p, 0), pool_axis(A, &ps, p, 1), gpuir_ld_param(A, t->name), p);
        sb_printf(s, "  dlc_rows[%d] = %s, dlc_width[%d] = dlc__mul(%s, dlc_eb[%d]);\n", p, pool_axis(A, &ps, p, 0), p,
                  pool_axis(A, &ps, p, 1), p);
        /* rows 16-byte multiples apart in the pool: TMA's pitch, the widest chunk's alignment */
        sb_printf(s, "  dlc_pitchp[%d] = dlc__mul(dlc__fdiv(dlc__add(dlc_width[%d], 15), 16), 16);\n"
                     "  dlc_ld[%d] = dlc_pitchp[%d] > 0 ? dlc_pitchp[%d] / dlc_eb[%d] : 1;\n", p, p, p, p, p, p);
      } else {
        for (int d = 0; d < t->rank; d++) sb_printf(s, "  dlc_dims[%d] = %s;\n", d, pool_axis(A, &ps, p, d));
        sb_printf(s, "  if ((dlc_st = dlc__check_packed(dlc_fn, \"%s\", %s, dlc_eb[%d], %d, dlc_dims, &dlc_sp[%d]))) return dlc_st;\n",
                  nm, nm, p, t->rank, p);
        sb_printf(s, "  dlc_rows[%d] = 1, dlc_width[%d] = dlc__mul(dlc_sp[%d].count, dlc_eb[%d]);\n", p, p, p, p);
        sb_printf(s, "  dlc_pitchp[%d] = dlc_width[%d], dlc_ld[%d] = 0;\n", p, p, p);
      }
      if (ps.conv[p] >= 0) {
        /* the pool holds the param's conversion instead: packed, made below */
        const region_memref *m = ps.pc[ps.conv[p]].m;
        const char *e = "1";
        for (int d = 0; d < m->rank; d++) e = arena_printf(A, "dlc__mul(%s, %s)", e, create_text(A, m->shape[d]));
        sb_printf(s, "  /* %s: the pool holds %s %s, its layout conversion, made once below */\n", cmt(A, t->name),
                  cmt(A, m->name), cmt(A, sx_shape_str(A, m->rank, m->shape)));
        sb_printf(s, "  dlc_rows[%d] = 1, dlc_width[%d] = dlc__mul(%s, dlc_eb[%d]), dlc_pitchp[%d] = dlc_width[%d];\n", p, p, e, p, p,
                  p);
        if (t->rank == 2)
          sb_printf(s, "  dlc_ld[%d] = %s > 0 ? %s : 1;  /* %s's ld as the entry checks it: the call never reads %s */\n", p,
                    pool_axis(A, &ps, p, 1), pool_axis(A, &ps, p, 1), nm, nm);
        else sb_printf(s, "  dlc_ld[%d] = 0;\n", p);
      }
      sb_printf(s, "  dlc_bytes[%d] = dlc__mul(dlc_rows[%d], dlc_pitchp[%d]);\n", p, p, p);
    }
    sb_printf(s,
              "  dlc__plan *dlc_p;\n"
              "  if ((dlc_st = dlc__plan_new(dlc_fn, %d, dtype, %d, dlc_fixed + 1, %d, dlc_bytes, dlc_ld, stream, &dlc_p)))\n"
              "    return dlc_st;\n",
              opi, ps.nfixed, ps.npool);
    if (ps.npc) {
      sb_puts(s, "  static const char dlc_made[] = {");
      for (int p = 0; p < ps.npool; p++) sb_printf(s, "%s%d", p ? ", " : "", ps.conv[p] >= 0);
      sb_puts(s, "};  /* the params the pool holds converted */\n");
    }
    sb_puts(s, "  const void *dlc_src[] = {");
    for (int p = 0; p < ps.npool; p++) sb_printf(s, "%s%s", p ? ", " : "", lc(A, ps.pool[p]->name));
    sb_puts(s, "};\n  const int64_t dlc_pitch[] = {");
    for (int p = 0; p < ps.npool; p++)
      sb_printf(s, "%s%s", p ? ", " : "",
                ps.pool[p]->rank == 2 ? arena_printf(A, "dlc__mul(%s, dlc_eb[%d])", gpuir_ld_param(A, ps.pool[p]->name), p)
                                      : arena_printf(A, "dlc_width[%d]", p));
    sb_printf(s,
              "};\n"
              "  for (int dlc_i = 0; dlc_i < %d; dlc_i++) {\n"
              "    if (dlc_sp[dlc_i].count == 0%s) continue;\n"
              "    void *dlc_dst = (void *)((uintptr_t)dlc_p->pool + (uintptr_t)dlc_p->off[dlc_i]);\n"
              "    if ((dlc_st = dlc__dev_copy_2d(dlc_dst, (size_t)dlc_pitchp[dlc_i], dlc_src[dlc_i], (size_t)dlc_pitch[dlc_i],\n"
              "                                   (size_t)dlc_width[dlc_i], (size_t)dlc_rows[dlc_i], stream))) {\n"
              "      dlc__plan_discard(dlc_p);\n      return dlc_st;\n    }\n  }\n"
              "%s"
              "  if ((dlc_st = dlc__dev_sync(stream))) {\n    dlc__plan_discard(dlc_p);\n    return dlc_st;\n  }\n",
              ps.npool, ps.npc ? " || dlc_made[dlc_i]" : "", conv_launches(c, eo, &ps));
  } else {
    sb_printf(s,
              "  dlc_status dlc_st;\n  dlc__plan *dlc_p;\n"
              "  if ((dlc_st = dlc__plan_new(dlc_fn, %d, dtype, %d, dlc_fixed + 1, 0, NULL, NULL, stream, &dlc_p))) return dlc_st;\n",
              opi, ps.nfixed);
  }
  sb_printf(s,
            "  const void *dlc_h;\n"
            "  if ((dlc_st = dlc__plan_publish(dlc_fn, dlc_p, &dlc_h))) return dlc_st;\n"
            "  *plan = (dlc_%s_plan *)(uintptr_t)dlc_h;\n  return DLC_SUCCESS;\n}\n\n",
            on);

}

void plan_functions_c(emit_ctx *c, strbuf *s, const emit_op *eo, int opi, const arg *a, int n) {
  arena *A = c->A;
  plan_split ps;
  split_args(c, eo, a, n, &ps);
  const char *on = eo->op->name;
  create_fn(c, s, eo, opi, &ps);

  /* the call's arguments as one block without padding: the dtype and the
   * shape arguments (the shape set) first */
  sb_printf(s, "typedef struct dlc__pa_%s {\n  int64_t dtype;\n", on);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n; i++)
      if (is_shape(&a[i]) == (pass == 0))
        sb_printf(s, "  %s%s%s;\n", a[i].type, a[i].type[strlen(a[i].type) - 1] == '*' ? "" : " ", a[i].name);
  sb_puts(s, "  void *workspace;\n  size_t workspace_bytes;\n");
  if (ps.npc) sb_printf(s, "  const void *dlc_pre[%d];  /* the converted params in the pool (dlc__ws_%s) */\n", ps.npc, on);
  sb_printf(s, "} dlc__pa_%s;\n", on);
  const char *first_rest = NULL;
  for (int i = 0; i < n && !first_rest; i++)
    if (!is_shape(&a[i])) first_rest = a[i].name;
  sb_printf(s, "static dlc_status dlc__pb_%s(const void *dlc_args, struct CUstream_st *stream) {\n"
               "  const dlc__pa_%s *x = dlc_args;\n  return dlc%s_%s%s((dlc_dtype)x->dtype", on, on, ps.npc ? "_" : "",
            ps.npc ? "ws" : on, ps.npc ? arena_printf(A, "_%s", on) : "_ws");
  for (int i = 0; i < n; i++) sb_printf(s, ",%sx->%s", i % 8 == 0 ? "\n      " : " ", a[i].name);
  sb_printf(s, ", x->workspace, x->workspace_bytes, stream%s);\n}\n\n", ps.npc ? ", x->dlc_pre" : "");

  proto_run(s, on, &ps);
  sb_printf(s, " {\n  dlc__clear_detail();\n  dlc_status dlc_st;\n"
               "  dlc__plan *dlc_p = dlc__plan_acquire(plan, %d, \"%s_plan_run\", 1, &dlc_st);\n"
               "  if (!dlc_p) return dlc_st;\n"
               "  dlc__pa_%s dlc_a;\n  memset(&dlc_a, 0, sizeof dlc_a);\n  dlc_a.dtype = dlc_p->dtype;\n",
            opi, on, on);
  for (int i = 0, f = 0; i < n; i++)
    if (a[i].role == ARG_DIM && ps.at_create[i]) sb_printf(s, "  dlc_a.%s = dlc_p->fixed[%d];\n", a[i].name, f++);
  for (int p = 0; p < ps.npool; p++) {
    const fe_tensor *t = ps.pool[p];
    sb_printf(s, "  dlc_a.%s = (const void *)((uintptr_t)dlc_p->pool + (uintptr_t)dlc_p->off[%d]);\n", lc(A, t->name), p);
    if (t->rank == 2) sb_printf(s, "  dlc_a.%s = dlc_p->ld[%d];\n", gpuir_ld_param(A, t->name), p);
    if (ps.conv[p] >= 0)
      sb_printf(s, "  dlc_a.dlc_pre[%d] = dlc_a.%s;  /* %s's place holds %s: the run never reads it as %s */\n", ps.conv[p],
                lc(A, t->name), cmt(A, t->name), cmt(A, ps.pc[ps.conv[p]].m->name), cmt(A, t->name));
  }
  for (int i = 0; i < n; i++)
    if (!ps.at_create[i]) sb_printf(s, "  dlc_a.%s = %s;\n", a[i].name, a[i].name);
  sb_printf(s,
            "  dlc_a.workspace = workspace, dlc_a.workspace_bytes = workspace_bytes;\n"
            "  dlc_st = dlc__plan_exec(dlc_p, &dlc_a, sizeof dlc_a, offsetof(dlc__pa_%s, %s), dlc__pb_%s, stream);\n"
            "  dlc__plan_release(dlc_p, 1);\n  return dlc_st;\n}\n\n",
            on, first_rest, on);

  proto_size(s, on, &ps);
  sb_printf(s, " {\n  dlc_status dlc_st;\n"
               "  dlc__plan *dlc_p = dlc__plan_acquire(plan, %d, \"%s_plan_workspace_size\", 0, &dlc_st);\n"
               "  if (!dlc_p) return 0;\n  size_t dlc_r = %s(dlc_p->dtype",
            opi, on, arena_printf(A, ps.npc ? "dlc__wsize_%s" : "dlc_%s_workspace_size", on));
  for (int i = 0, f = 0; i < n && is_shape(&a[i]); i++) {
    if (a[i].role == ARG_DIM && ps.at_create[i]) sb_printf(s, ", dlc_p->fixed[%d]", f++);
    else sb_printf(s, ", %s", a[i].name);
  }
  sb_printf(s, "%s);\n  dlc__plan_release(dlc_p, 0);\n  return dlc_r;\n}\n\n", ps.npc ? ", 1" : "");

  proto_destroy(s, on);
  sb_printf(s, " { dlc__plan_destroy(plan, %d); }\n\n", opi);
}

/* The entry table's thunks (dlc_entries.c): the plan functions called with
 * the per-call entry's argument array, each taking its own arguments. */
void plan_entry_thunks(emit_ctx *c, strbuf *s, const emit_op *eo, const arg *a, int n) {
  plan_split ps;
  split_args(c, eo, a, n, &ps);
  const char *on = eo->op->name;
#define VAL(i) (a[i].role == ARG_INPUT || a[i].role == ARG_OUTPUT ? 'p' : 'i')
  sb_printf(s, "static dlc_status plan_create_%s(void **plan, dlc_dtype dtype, const dlc__arg_value *a, struct CUstream_st *stream) {\n"
               "  dlc_%s_plan *p = NULL;\n  dlc_status st = dlc_%s_plan_create(plan ? &p : NULL, dtype",
            on, on, on);
  for (int i = 0; i < n; i++)
    if (ps.at_create[i]) sb_printf(s, ", a[%d].%c", i, VAL(i));
  sb_puts(s, ", stream);\n  if (st == DLC_SUCCESS && plan) *plan = p;\n  return st;\n}\n");
  sb_printf(s, "static dlc_status plan_run_%s(void *plan, const dlc__arg_value *a, void *ws, size_t ws_bytes, struct CUstream_st *stream) {\n"
               "  return dlc_%s_plan_run(plan",
            on, on);
  for (int i = 0; i < n; i++)
    if (!ps.at_create[i]) sb_printf(s, ", a[%d].%c", i, VAL(i));
  sb_puts(s, ", ws, ws_bytes, stream);\n}\n");
  sb_printf(s, "static size_t plan_workspace_size_%s(const void *plan, const dlc__arg_value *a) {\n"
               "  return dlc_%s_plan_workspace_size(plan",
            on, on);
  for (int i = 0; i < n && is_shape(&a[i]); i++)
    if (!ps.at_create[i]) sb_printf(s, ", a[%d].i", i);
  sb_puts(s, ");\n}\n");
  sb_printf(s, "static void plan_destroy_%s(void *plan) { dlc_%s_plan_destroy(plan); }\n", on, on);
  sb_printf(s, "static const signed char plan_args_%s[] = {", on);
  for (int i = 0; i < n; i++) sb_printf(s, "%s%d", i ? ", " : "", ps.at_create[i] ? 1 : 0);
  sb_puts(s, "};\n");
#undef VAL
}

int plan_npool(emit_ctx *c, const emit_op *eo, const arg *a, int n) {
  plan_split ps;
  split_args(c, eo, a, n, &ps);
  return ps.npool;
}
