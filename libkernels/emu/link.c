/*
 * link.c: module + entry -> kernel (a flat, slot-addressed code array).
 *
 * An entry and every .func it reaches (no recursion: each function gets one
 * static frame) are laid out once per kernel:
 *   register file   [special registers][regs of each function][constants]
 *   predicates      [false, true, sink][preds of each function]
 *   shared memory   [module .shared if used][function .shared]...[dynamic]
 *   local frame     .local of each function, per thread
 *   param frame     .func params, returns and call-site .params, per thread
 * Then the functions' instructions are copied one after another, with every
 * reference replaced by its slot, every [symbol+offset] by a number in the
 * instruction's state space, and every label by an absolute pc.  A call
 * becomes a jump plus a copy list (call_info) for its arguments and returns.
 */
#include <stdlib.h>
#include <string.h>

#include "link.h"
#include "util.h"

typedef struct linker {
  emu_module *m;
  emu_kernel *k;
  int *order;        /* reachable functions, entry first */
  int norder;
  int *state;        /* DFS state per function: 0 new, 1 on stack, 2 done */
  int *depth;        /* longest call chain below a function */
  uint32_t *regbase, *predbase;
  uint64_t *localbase, *tpbase;
  int *codebase;
  uint64_t *sym_off; /* per-kernel offsets of function-scope .shared variables */
  int capvpool, capconsts, capcall;
} linker;

static uint64_t align_up(uint64_t x, uint64_t a) { return a ? (x + a - 1) / a * a : x; }

/* a body-less function the runtime provides (vprintf, __assertfail) */
static int is_runtime_extern(const emu_func *fn) {
  return !fn->has_body && (!strcmp(fn->name, "vprintf") || !strcmp(fn->name, "__assertfail") ||
                           !strcmp(fn->name, "__assert_fail"));
}

static int visit(linker *L, int f, int *depth_out) {
  emu_func *fn = &L->m->funcs[f];
  if (L->state[f] == 1)
    return dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "PTX line %d: recursive call of %s is not supported",
                    fn->decl_line, fn->name);
  if (L->state[f] == 2) {
    *depth_out = L->depth[f];
    return 0;
  }
  if (!fn->has_body)
    return dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "PTX line %d: call of external function %s is not supported",
                       fn->decl_line, fn->name);
  L->state[f] = 1;
  L->order[L->norder++] = f;
  int d = 0;
  for (int i = 0; i < fn->ncallees; i++) {
    int cd;
    if (is_runtime_extern(&L->m->funcs[fn->callees[i]])) continue;
    int rc = visit(L, fn->callees[i], &cd);
    if (rc) return rc;
    if (cd + 1 > d) d = cd + 1;
  }
  L->state[f] = 2;
  L->depth[f] = d;
  *depth_out = d;
  return 0;
}

/* a body that can fall off its end gets an implicit ret, so control never
 * runs into the next function of the flat code array */
static int needs_ret(const emu_func *fn) {
  if (!fn->ncode) return 1;
  const emu_insn *last = &fn->code[fn->ncode - 1];
  return last->guard != SLOT_NONE || (last->op != OP_RET && last->op != OP_EXIT && last->op != OP_BRA);
}

/* the address of a symbol in its state space, as this kernel lays it out */
static int sym_addr(linker *L, int s, int user_func, uint64_t *out) {
  emu_sym *y = &L->m->syms[s];
  switch (y->kind) {
  case SYM_GLOBAL:
  case SYM_CONST: *out = (uint64_t)(uintptr_t)y->host; return 0;
  case SYM_SHARED: *out = y->owner < 0 ? y->off : L->sym_off[s]; return 0;
  case SYM_EXTERN_SHARED: *out = align_up(L->k->static_shared, L->k->dyn_align); return 0;
  case SYM_LOCAL: *out = L->localbase[y->owner] + y->off; return 0;
  case SYM_KPARAM:
    if (y->owner != L->k->func)
      return dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "parameter %s of another kernel used in %s", y->name,
                      L->m->funcs[user_func].name);
    *out = y->off;
    return 0;
  case SYM_TPARAM: *out = L->tpbase[y->owner] + y->off; return 0;
  default:
    return dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "symbol %s cannot be used as an address", y->name);
  }
}

static int const_slot(linker *L, uint64_t v, uint32_t *slot) {
  emu_kernel *k = L->k;
  for (uint32_t i = 0; i < k->nconsts; i++)
    if (k->const_vals[i] == v) {
      *slot = k->const_base + i;
      return 0;
    }
  int n = (int)k->nconsts;
  if (dlcemu_grow(&k->const_vals, &L->capconsts, n + 1, sizeof(uint64_t)))
    return dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
  k->const_vals[n] = v;
  k->nconsts++;
  *slot = k->const_base + (uint32_t)n;
  return 0;
}

static int ref_slot(linker *L, int f, uint32_t ref, uint32_t *out);

static int vec_slots(linker *L, int f, uint32_t ref, uint32_t *out) {
  emu_func *fn = &L->m->funcs[f];
  uint32_t at = REF_IDX(ref);
  uint32_t n = fn->vpool[at];
  emu_kernel *k = L->k;
  if (dlcemu_grow(&k->vpool, &L->capvpool, k->nvpool + (int)n + 1, sizeof(uint32_t)))
    return dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
  int base = k->nvpool;
  k->vpool[k->nvpool++] = n;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t s;
    int rc = ref_slot(L, f, fn->vpool[at + 1 + i], &s);
    if (rc) return rc;
    k->vpool[k->nvpool++] = s;
  }
  *out = (uint32_t)base;
  return 0;
}

static int ref_slot(linker *L, int f, uint32_t ref, uint32_t *out) {
  emu_func *fn = &L->m->funcs[f];
  uint32_t idx = REF_IDX(ref);
  switch (REF_TAG(ref)) {
  case REF_NONE: *out = SLOT_NONE; return 0;
  case REF_REG: *out = L->regbase[f] + idx; return 0;
  case REF_PRED:
    if (ref == PRED_FALSE_REF) *out = PSLOT_FALSE;
    else if (ref == PRED_TRUE_REF) *out = PSLOT_TRUE;
    else if (ref == PRED_SINK_REF) *out = PSLOT_SINK;
    else *out = L->predbase[f] + idx;
    return 0;
  case REF_SREG: *out = idx; return 0;
  case REF_CONST: {
    emu_const *c = &fn->consts[idx];
    uint64_t v = c->value;
    if (c->sym >= 0) {
      uint64_t a = 0; /* set by sym_addr when it returns 0 */
      int rc = sym_addr(L, c->sym, f, &a);
      if (rc) return rc;
      v += a;
    }
    return const_slot(L, v, out);
  }
  case REF_VEC: return vec_slots(L, f, ref, out);
  default: return dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "internal: bad operand reference");
  }
}

/* fold [sym + off] into the offset and fix the instruction's state space
 * (second: 0 the first address, 1 cp.async's global source, 2 a generic second address) */
static int fold_address(linker *L, int f, emu_insn *in, int32_t sym, int64_t *off, int second) {
  if (sym < 0) {
    if (!second && in->space == SP_KPARAM && !L->m->funcs[f].is_entry) in->space = SP_TPARAM;
    return 0;
  }
  emu_sym *y = &L->m->syms[sym];
  uint64_t a = 0; /* set by sym_addr when it returns 0 */
  int rc = sym_addr(L, sym, f, &a);
  if (rc) return rc;
  *off += (int64_t)a;
  if (!second && in->space == SP_KPARAM && y->kind == SYM_TPARAM) in->space = SP_TPARAM;
  if ((!second && in->space == SP_GENERIC) || second == 2) {
    /* a variable named in a generic address means its generic address */
    if (y->kind == SYM_SHARED || y->kind == SYM_EXTERN_SHARED) *off += (int64_t)0x1000000000000000ll;
    else if (y->kind == SYM_LOCAL) *off += (int64_t)0x2000000000000000ll;
    else if (y->kind == SYM_KPARAM) *off += (int64_t)0x3000000000000000ll;
    else if (y->kind == SYM_TPARAM)
      return dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "PTX line %u: generic access to a .func parameter", in->line);
  }
  return 0;
}

static int link_call(linker *L, int f, emu_insn *in) {
  emu_module *m = L->m;
  emu_kernel *k = L->k;
  emu_func *fn = &m->funcs[f];
  int callee = (int)in->a[0];
  emu_func *cf = &m->funcs[callee];
  int na = in->vec, nr = in->sub;
  if (in->op == OP_CALL && (na != cf->nparams || nr != cf->nrets))
    return dlcemu_fail(DLCEMU_ERROR_PARSE, "PTX line %u: call of %s with %d arguments and %d returns (it takes %d and %d)",
                    in->line, cf->name, na, nr, cf->nparams, cf->nrets);
  int need = 2 + 3 * (na + nr);
  if (dlcemu_grow(&k->call_info, &L->capcall, k->ncall_info + need, sizeof(uint32_t)))
    return dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
  int at = k->ncall_info;
  uint32_t *ci = k->call_info + at;
  ci[0] = (uint32_t)na;
  ci[1] = (uint32_t)nr;
  for (int i = 0; i < na; i++) {
    emu_sym *as = &m->syms[fn->vpool[REF_IDX(in->a[1]) + 1 + i]];
    uint64_t size = as->size;
    uint64_t dst = 0;
    if (in->op == OP_CALL) {
      emu_sym *ps = &m->syms[cf->params[i]];
      if (ps->size < size) size = ps->size;
      dst = L->tpbase[callee] + ps->off;
    }
    ci[2 + 3 * i] = (uint32_t)(L->tpbase[f] + as->off);
    ci[3 + 3 * i] = (uint32_t)dst;
    ci[4 + 3 * i] = (uint32_t)size;
  }
  for (int i = 0; i < nr; i++) {
    emu_sym *rs = &m->syms[fn->vpool[REF_IDX(in->a[2]) + 1 + i]];
    uint64_t size = rs->size;
    uint64_t from = 0;
    if (in->op == OP_CALL) {
      emu_sym *cs = &m->syms[cf->rets[i]];
      if (cs->size < size) size = cs->size;
      from = L->tpbase[callee] + cs->off;
    }
    ci[2 + 3 * (na + i)] = (uint32_t)from;
    ci[3 + 3 * (na + i)] = (uint32_t)(L->tpbase[f] + rs->off);
    ci[4 + 3 * (na + i)] = (uint32_t)size;
  }
  k->ncall_info += need;
  in->imm = at;
  in->a[0] = in->op == OP_CALL ? (uint32_t)L->codebase[callee] : SLOT_NONE;
  in->a[1] = in->a[2] = SLOT_NONE;
  return 0;
}

static int link_insn(linker *L, int f, emu_insn *in) {
  int rc;
  if (in->guard != SLOT_NONE) {
    uint32_t neg = in->guard & GUARD_NEG;
    uint32_t s;
    if ((rc = ref_slot(L, f, in->guard & ~GUARD_NEG, &s))) return rc;
    in->guard = s | neg;
  }
  if (in->op == OP_CALL && is_runtime_extern(&L->m->funcs[in->a[0]])) in->op = OP_CALL_EXTERN;
  if (in->op == OP_CALL || in->op == OP_CALL_EXTERN) return link_call(L, f, in);
  if (in->op == OP_BRA) {
    in->imm += L->codebase[f];
    return 0;
  }
  for (int i = 0; i < 6; i++) {
    uint32_t s;
    if (REF_TAG(in->a[i]) == REF_REG) in->regmask |= (uint8_t)(1u << i);
    if (REF_TAG(in->a[i]) == REF_VEC) in->vecmask |= (uint8_t)(1u << i);
    if ((rc = ref_slot(L, f, in->a[i], &s))) return rc;
    in->a[i] = s;
  }
  if ((rc = fold_address(L, f, in, in->sym, &in->imm, 0))) return rc;
  if (in->op == OP_CP_ASYNC && (rc = fold_address(L, f, in, in->sym2, &in->imm2, 1))) return rc;
  /* cp.async.bulk.tensor's tensor map is a generic address */
  if (in->op == OP_CP_BULK_TENSOR && (rc = fold_address(L, f, in, in->sym2, &in->imm2, 2))) return rc;
  in->sym = in->sym2 = -1;
  return 0;
}

/* does any reachable function name a module-scope .shared variable? */
static int uses_module_shared(linker *L) {
  emu_module *m = L->m;
  for (int oi = 0; oi < L->norder; oi++) {
    emu_func *fn = &m->funcs[L->order[oi]];
    for (int i = 0; i < fn->ncode; i++) {
      int32_t s[2] = {fn->code[i].sym, fn->code[i].sym2};
      for (int j = 0; j < 2; j++)
        if (s[j] >= 0 && m->syms[s[j]].kind == SYM_SHARED && m->syms[s[j]].owner < 0) return 1;
    }
    for (int i = 0; i < fn->nconsts; i++) {
      int32_t s = fn->consts[i].sym;
      if (s >= 0 && m->syms[s].kind == SYM_SHARED && m->syms[s].owner < 0) return 1;
    }
  }
  return 0;
}

static void linker_free(linker *L) {
  free(L->order);
  free(L->state);
  free(L->depth);
  free(L->regbase);
  free(L->predbase);
  free(L->localbase);
  free(L->tpbase);
  free(L->codebase);
  free(L->sym_off);
}

int dlcemu_link_kernel(emu_module *m, int func, emu_kernel **out) {
  linker L;
  memset(&L, 0, sizeof L);
  L.m = m;
  int nf = m->nfuncs;
  emu_kernel *k = calloc(1, sizeof *k);
  L.order = calloc((size_t)nf, sizeof(int));
  L.state = calloc((size_t)nf, sizeof(int));
  L.depth = calloc((size_t)nf, sizeof(int));
  L.regbase = calloc((size_t)nf, sizeof(uint32_t));
  L.predbase = calloc((size_t)nf, sizeof(uint32_t));
  L.localbase = calloc((size_t)nf, sizeof(uint64_t));
  L.tpbase = calloc((size_t)nf, sizeof(uint64_t));
  L.codebase = calloc((size_t)nf, sizeof(int));
  L.sym_off = calloc((size_t)m->nsyms + 1, sizeof(uint64_t));
  int rc = 0;
  if (!k || !L.order || !L.state || !L.depth || !L.regbase || !L.predbase || !L.localbase || !L.tpbase ||
      !L.codebase || !L.sym_off) {
    rc = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    goto fail;
  }
  L.k = k;
  k->mod = m;
  k->func = func;
  int depth;
  if ((rc = visit(&L, func, &depth))) goto fail;
  k->max_call_depth = (uint32_t)depth;

  /* register file, predicates, frames, code positions */
  uint32_t slot = SR_COUNT_STATIC, pslot = PSLOT_FIRST;
  uint64_t local = 0, tparam = 0;
  int code = 0;
  for (int i = 0; i < L.norder; i++) {
    int f = L.order[i];
    emu_func *fn = &m->funcs[f];
    L.regbase[f] = slot;
    slot += (uint32_t)fn->nregs;
    L.predbase[f] = pslot;
    pslot += (uint32_t)fn->npreds;
    local = align_up(local, fn->local_align);
    L.localbase[f] = local;
    local += fn->local_bytes;
    tparam = align_up(tparam, fn->tparam_align ? fn->tparam_align : 1);
    L.tpbase[f] = tparam;
    tparam += fn->tparam_bytes;
    L.codebase[f] = code;
    code += fn->ncode + needs_ret(fn);
    k->nregs_total += fn->nregs + fn->npreds;
  }
  k->const_base = slot;
  k->npreds = pslot;
  k->local_bytes = align_up(local, 16);
  k->tparam_bytes = align_up(tparam, 16);

  /* shared memory: module-scope variables first, then function-scope ones */
  uint64_t sh = uses_module_shared(&L) ? m->module_shared : 0;
  for (int i = 0; i < L.norder; i++) {
    emu_func *fn = &m->funcs[L.order[i]];
    for (int j = 0; j < fn->nshared; j++) {
      emu_sym *y = &m->syms[fn->shared_syms[j]];
      sh = align_up(sh, y->align);
      L.sym_off[fn->shared_syms[j]] = sh;
      sh += y->size;
    }
  }
  k->static_shared = sh;
  k->max_dyn_shared = sh < 49152 ? 49152 - sh : 0; /* static + dynamic within 48 KB until raised */
  k->dyn_align = 16;
  for (int i = 0; i < m->nsyms; i++)
    if (m->syms[i].kind == SYM_EXTERN_SHARED && m->syms[i].align > k->dyn_align) k->dyn_align = m->syms[i].align;

  /* code */
  k->code = calloc((size_t)(code ? code : 1), sizeof(emu_insn));
  if (!k->code) {
    rc = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    goto fail;
  }
  k->ncode = code;
  for (int i = 0; i < L.norder; i++) {
    int f = L.order[i];
    emu_func *fn = &m->funcs[f];
    for (int j = 0; j < fn->ncode; j++) {
      emu_insn *in = &k->code[L.codebase[f] + j];
      *in = fn->code[j];
      if ((rc = link_insn(&L, f, in))) goto fail;
    }
    if (needs_ret(fn)) {
      emu_insn *in = &k->code[L.codebase[f] + fn->ncode];
      memset(in, 0, sizeof *in);
      in->op = OP_RET;
      in->cls = DLCEMU_CLASS_CONTROL;
      in->guard = SLOT_NONE;
      in->sym = in->sym2 = -1;
      in->loc_file = -1;
      for (int o = 0; o < 6; o++) in->a[o] = SLOT_NONE;
      if (fn->ncode) {
        in->line = fn->code[fn->ncode - 1].line;
        in->text = fn->code[fn->ncode - 1].text;
      }
    }
  }
  k->nslots = k->const_base + k->nconsts;
  /* limits that keep a launch's memory sane (the hardware's are lower) */
  if (k->nslots > (1u << 20) || k->npreds > (1u << 20)) {
    rc = dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "kernel %s needs %u registers; at most 2^20 are supported",
                  m->funcs[func].name, k->nslots);
    goto fail;
  }
  if (k->local_bytes > (512u << 10) || k->tparam_bytes > (64u << 10)) {
    rc = dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "kernel %s needs %llu bytes of local memory per thread (at most 512 KiB)",
                  m->funcs[func].name, (unsigned long long)k->local_bytes);
    goto fail;
  }
  if (m->funcs[func].kparam_bytes > (32u << 10)) {
    rc = dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "kernel %s has %llu bytes of parameters (at most 32 KiB)",
                  m->funcs[func].name, (unsigned long long)m->funcs[func].kparam_bytes);
    goto fail;
  }

  emu_func *entry = &m->funcs[func];
  k->max_threads = 1024;
  unsigned *lim = entry->reqntid[0] ? entry->reqntid : entry->maxntid;
  if (lim[0]) k->max_threads = lim[0] * (lim[1] ? lim[1] : 1) * (lim[2] ? lim[2] : 1);
  memcpy(k->reqntid, entry->reqntid, sizeof k->reqntid);
  linker_free(&L);
  *out = k;
  return 0;
fail:
  linker_free(&L);
  dlcemu_kernel_free(k);
  return rc;
}

void dlcemu_kernel_free(emu_kernel *k) {
  if (!k) return;
  free(k->code);
  free(k->vpool);
  free(k->call_info);
  free(k->const_vals);
  free(k);
}
