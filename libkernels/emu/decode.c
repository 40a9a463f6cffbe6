/*
 * decode.c: one PTX instruction (opcode with modifiers, parsed operands) ->
 * emu_insn.
 *
 * The base opcode is found in ops.def (longest dotted prefix first); the
 * remaining modifiers are sorted into the generic ones (types, rounding,
 * .ftz/.sat, state spaces, vector widths, cache and ordering hints that have
 * no effect here) and the ones each opcode interprets itself (comparison,
 * atomic operation, shuffle mode, mma shape, ...).  A modifier no rule claims
 * makes the instruction unsupported, so nothing is silently misread.
 * Operands become references (REF_* in emu.h); immediates are converted to
 * the operand's type here, once.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "fp.h"

enum { CLS_ARITH = 100 };
#define CLS_INT DLCEMU_CLASS_INT
#define CLS_SFU DLCEMU_CLASS_SFU
#define CLS_MOVE DLCEMU_CLASS_MOVE
#define CLS_CONVERT DLCEMU_CLASS_CONVERT
#define CLS_LOAD_STORE DLCEMU_CLASS_LOAD_STORE
#define CLS_ATOMIC DLCEMU_CLASS_ATOMIC
#define CLS_CONTROL DLCEMU_CLASS_CONTROL
#define CLS_BARRIER DLCEMU_CLASS_BARRIER
#define CLS_WARP DLCEMU_CLASS_WARP
#define CLS_TENSOR DLCEMU_CLASS_TENSOR
#define CLS_ASYNC_COPY DLCEMU_CLASS_ASYNC_COPY
#define CLS_OTHER DLCEMU_CLASS_OTHER

static const int op_class[OP_COUNT] = {
#define OP(e, name, cls, executor) CLS_##cls,
#include "ops.def"
#undef OP
};

static int is_int_type(int t) { return t >= T_B8 && t <= T_S64; }
static int is_half_type(int t) { return t == T_F16 || t == T_F16X2 || t == T_BF16 || t == T_BF16X2; }

static int class_for_type(int t) {
  if (is_half_type(t)) return DLCEMU_CLASS_FP16;
  if (t == T_F32 || t == T_TF32) return DLCEMU_CLASS_FP32;
  if (t == T_F64) return DLCEMU_CLASS_FP64;
  return DLCEMU_CLASS_INT;
}

/* ---------------------------------------------------- the decoded function's tables */
static emu_func *cur_func(emu_parse_ctx *pc) { return &pc->m->funcs[pc->func]; }

uint32_t dlcemu_pc_const(emu_parse_ctx *pc, uint64_t value) {
  emu_func *f = cur_func(pc);
  for (int i = 0; i < f->nconsts; i++)
    if (f->consts[i].sym < 0 && f->consts[i].value == value) return REF_CONST | (uint32_t)i;
  if (dlcemu_grow(&f->consts, &f->capconsts, f->nconsts + 1, sizeof(emu_const))) return REF_NONE;
  f->consts[f->nconsts].value = value;
  f->consts[f->nconsts].sym = -1;
  return REF_CONST | (uint32_t)f->nconsts++;
}

uint32_t dlcemu_pc_const_sym(emu_parse_ctx *pc, int sym, int64_t off) {
  emu_func *f = cur_func(pc);
  if (dlcemu_grow(&f->consts, &f->capconsts, f->nconsts + 1, sizeof(emu_const))) return REF_NONE;
  f->consts[f->nconsts].value = (uint64_t)off;
  f->consts[f->nconsts].sym = sym;
  return REF_CONST | (uint32_t)f->nconsts++;
}

int dlcemu_pc_vec(emu_parse_ctx *pc, const uint32_t *refs, int n, uint32_t *out) {
  emu_func *f = cur_func(pc);
  if (dlcemu_grow(&f->vpool, &f->capvpool, f->nvpool + n + 1, sizeof(uint32_t)))
    return dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
  *out = REF_VEC | (uint32_t)f->nvpool;
  f->vpool[f->nvpool++] = (uint32_t)n;
  for (int i = 0; i < n; i++) f->vpool[f->nvpool++] = refs[i];
  return 0;
}

int dlcemu_pc_unsupported(emu_parse_ctx *pc, const char *what) {
  return dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "PTX line %d: unsupported instruction '%s' (%s)", pc->line,
                  pc->opcode_text, what);
}

int dlcemu_pc_error(emu_parse_ctx *pc, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return dlcemu_fail(DLCEMU_ERROR_PARSE, "PTX line %d: '%s': %s", pc->line, pc->opcode_text, msg);
}

/* -------------------------------------------------------------- modifiers */
typedef struct mods {
  int types[4];
  int ntypes;
  int rnd;
  int ftz, sat, satfinite, relu, approx, full, nan, xorsign, abs, noftz;
  int space;      /* -1: none */
  int vec;
  int sync, aligned, uni;
  int cache_hint; /* .L2::cache_hint: one extra operand */
  int strong;     /* .volatile/.relaxed/.acquire/.release/... */
  const char *rest[12];
  int nrest;
  int used[12];
} mods;

static int is_ignored_hint(const char *w) {
  static const char *const hints[] = {
    "ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "volatile", "relaxed", "acquire", "release",
    "acq_rel", "sc", "weak", "mmio", "cta", "gpu", "sys", "cluster", "L1::evict_normal",
    "L1::evict_unchanged", "L1::evict_first", "L1::evict_last", "L1::no_allocate", "L2::evict_normal",
    "L2::evict_first", "L2::evict_last", "L2::64B", "L2::128B", "L2::256B", "level::eviction_priority",
    "level::prefetch_size", "unified", NULL};
  for (int i = 0; hints[i]; i++)
    if (!strcmp(w, hints[i])) return 1;
  return 0;
}

static int space_from_name(const char *w) {
  if (!strcmp(w, "global")) return SP_GLOBAL;
  if (!strcmp(w, "shared") || !strcmp(w, "shared::cta")) return SP_SHARED;
  if (!strcmp(w, "local")) return SP_LOCAL;
  if (!strcmp(w, "const")) return SP_CONST;
  if (!strcmp(w, "param") || !strcmp(w, "param::entry") || !strcmp(w, "param::func")) return SP_KPARAM;
  return -1;
}

static int rnd_from_name(const char *w) {
  static const char *const names[] = {"", "rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi"};
  for (int i = 1; i < 10; i++)
    if (!strcmp(w, names[i])) return i;
  return 0;
}

static void classify(mods *m, char **parts, int n) {
  memset(m, 0, sizeof *m);
  m->space = -1;
  m->vec = 1;
  for (int i = 0; i < n; i++) {
    const char *w = parts[i];
    int t = dlcemu_type_from_name(w);
    int r = rnd_from_name(w);
    int sp = space_from_name(w);
    if (t != T_NONE && m->ntypes < 4) m->types[m->ntypes++] = t;
    else if (r) m->rnd = r;
    else if (sp >= 0) m->space = sp;
    else if (!strcmp(w, "ftz")) m->ftz = 1;
    else if (!strcmp(w, "sat")) m->sat = 1;
    else if (!strcmp(w, "satfinite")) m->satfinite = 1;
    else if (!strcmp(w, "relu")) m->relu = 1;
    else if (!strcmp(w, "approx")) m->approx = 1;
    else if (!strcmp(w, "full")) m->full = 1;
    else if (!strcmp(w, "NaN")) m->nan = 1;
    else if (!strcmp(w, "xorsign")) m->xorsign = 1;
    else if (!strcmp(w, "noftz")) m->noftz = 1;
    else if (!strcmp(w, "v2")) m->vec = 2;
    else if (!strcmp(w, "v4")) m->vec = 4;
    else if (!strcmp(w, "v8")) m->vec = 8;
    else if (!strcmp(w, "sync")) m->sync = 1;
    else if (!strcmp(w, "aligned")) m->aligned = 1;
    else if (!strcmp(w, "uni")) m->uni = 1;
    else if (!strcmp(w, "L2::cache_hint")) m->cache_hint = 1;
    else if (is_ignored_hint(w)) {
      if (!strcmp(w, "volatile") || !strcmp(w, "relaxed") || !strcmp(w, "acquire") || !strcmp(w, "release") ||
          !strcmp(w, "acq_rel") || !strcmp(w, "sc") || !strcmp(w, "mmio"))
        m->strong = 1;
    } else if (m->nrest < 12) m->rest[m->nrest++] = w;
  }
}

/* consume an op-specific modifier */
static int take(mods *m, const char *w) {
  for (int i = 0; i < m->nrest; i++)
    if (!m->used[i] && !strcmp(m->rest[i], w)) {
      m->used[i] = 1;
      return 1;
    }
  return 0;
}

static int check_rest(emu_parse_ctx *pc, mods *m) {
  for (int i = 0; i < m->nrest; i++)
    if (!m->used[i]) {
      char what[64];
      snprintf(what, sizeof what, "modifier .%s", m->rest[i]);
      return dlcemu_pc_unsupported(pc, what);
    }
  return 0;
}

/* ---------------------------------------------------------------- operands */

static uint64_t imm_for_type(const emu_operand *o, int type) {
  int k = o->imm_kind;
  switch (type) {
  case T_F32:
    if (k == IMM_F64) return fp_u32((float)fp_f64((uint64_t)o->ival));
    if (k == IMM_INT) return fp_u32((float)o->ival);
    return (uint64_t)o->ival & 0xFFFFFFFFu;
  case T_F64:
    if (k == IMM_F32) return fp_u64((double)fp_f32((uint32_t)o->ival));
    if (k == IMM_INT) return fp_u64((double)o->ival);
    return (uint64_t)o->ival;
  case T_F16:
  case T_BF16: {
    int fmt = type == T_F16 ? FMT_F16 : FMT_BF16;
    if (k == IMM_F32) return dlcemu_fp_from_double(fmt, fp_f32((uint32_t)o->ival), RND_RN, 0);
    if (k == IMM_F64) return dlcemu_fp_from_double(fmt, fp_f64((uint64_t)o->ival), RND_RN, 0);
    return (uint64_t)o->ival & 0xFFFFu;
  }
  default:
    return (uint64_t)o->ival;
  }
}

static int bad_operand(emu_parse_ctx *pc, int i, const char *want) {
  return dlcemu_pc_error(pc, "operand %d: expected %s", i + 1, want);
}

/* a value source: register, immediate, static special register, symbol address */
static int src(emu_parse_ctx *pc, const emu_operand *o, int type, int i, uint32_t *ref) {
  switch (o->kind) {
  case OPD_REG: *ref = REF_REG | (uint32_t)o->reg; return 0;
  case OPD_IMM: *ref = dlcemu_pc_const(pc, imm_for_type(o, type)); return 0;
  case OPD_SREG:
    if (o->reg >= SR_COUNT_STATIC) return dlcemu_pc_unsupported(pc, "this use of %clock/%globaltimer");
    *ref = REF_SREG | (uint32_t)o->reg;
    return 0;
  case OPD_SYM: {
    int k = pc->m->syms[o->sym].kind;
    if (k == SYM_FUNC) return dlcemu_pc_unsupported(pc, "address of a function");
    *ref = dlcemu_pc_const_sym(pc, o->sym, o->ival);
    return 0;
  }
  default: return bad_operand(pc, i, "a register or immediate");
  }
}

static int dst(emu_parse_ctx *pc, const emu_operand *o, int i, uint32_t *ref) {
  if (o->kind == OPD_REG) {
    *ref = REF_REG | (uint32_t)o->reg;
    return 0;
  }
  if (o->kind == OPD_SINK) {
    *ref = REF_SREG | SR_SINK;
    return 0;
  }
  return bad_operand(pc, i, "a destination register");
}

static int psrc(emu_parse_ctx *pc, const emu_operand *o, int i, uint32_t *ref, int *neg) {
  *neg = 0;
  if (o->kind == OPD_PRED) {
    *ref = REF_PRED | (uint32_t)o->reg;
    *neg = o->neg;
    return 0;
  }
  if (o->kind == OPD_IMM && o->imm_kind == IMM_INT) {
    *ref = o->ival ? PRED_TRUE_REF : PRED_FALSE_REF;
    return 0;
  }
  return bad_operand(pc, i, "a predicate");
}

static int pdst(emu_parse_ctx *pc, const emu_operand *o, int i, uint32_t *ref) {
  if (o->kind == OPD_PRED) {
    *ref = REF_PRED | (uint32_t)o->reg;
    return 0;
  }
  if (o->kind == OPD_SINK) {
    *ref = PRED_SINK_REF;
    return 0;
  }
  return bad_operand(pc, i, "a destination predicate");
}

static int addr(emu_parse_ctx *pc, const emu_operand *o, int i, uint32_t *base, int64_t *off, int32_t *sym,
                emu_insn *in, uint32_t flag32) {
  if (o->kind != OPD_ADDR) return bad_operand(pc, i, "an address [...]");
  if (o->nelems) return bad_operand(pc, i, "an address without a coordinate list");
  if (o->base_reg >= 0 && dlcemu_type_size(o->rtype) < 8) in->flags |= flag32;
  *base = o->base_reg >= 0 ? REF_REG | (uint32_t)o->base_reg : REF_NONE;
  *off = o->ival;
  *sym = o->sym;
  if (o->sym >= 0 && pc->m->syms[o->sym].kind == SYM_FUNC) return bad_operand(pc, i, "a data address");
  return 0;
}

/* { r, r, ... } of n elements (n = 0: any count); dst: destinations */
static int vec(emu_parse_ctx *pc, const emu_operand *o, int i, int n, int type, int is_dst, uint32_t *ref,
               int *count) {
  if (o->kind != OPD_VEC) return bad_operand(pc, i, "a vector {...}");
  if (n && o->nelems != n) {
    char want[48];
    snprintf(want, sizeof want, "a vector of %d elements", n);
    return bad_operand(pc, i, want);
  }
  uint32_t refs[128];
  if (o->nelems > 128 || o->nelems == 0) return bad_operand(pc, i, "a vector of 1 to 128 elements");
  for (int k = 0; k < o->nelems; k++) {
    int rc = is_dst ? dst(pc, &o->elems[k], i, &refs[k]) : src(pc, &o->elems[k], type, i, &refs[k]);
    if (rc) return rc;
  }
  if (count) *count = o->nelems;
  return dlcemu_pc_vec(pc, refs, o->nelems, ref);
}

/* ---------------------------------------------------------------- helpers */
static int one_type(emu_parse_ctx *pc, const mods *m, int *t) {
  if (m->ntypes != 1) return dlcemu_pc_error(pc, "expected exactly one type modifier");
  *t = m->types[0];
  return 0;
}

static int nops_is(emu_parse_ctx *pc, int nops, int want) {
  if (nops != want) return dlcemu_pc_error(pc, "expected %d operands, found %d", want, nops);
  return 0;
}

static int cmp_from_mods(mods *m) {
  static const char *const names[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi",
                                      "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
  for (int i = 0; i < 18; i++)
    if (take(m, names[i])) return i;
  return -1;
}

static int bool_from_mods(mods *m) {
  if (take(m, "and")) return BOOL_AND;
  if (take(m, "or")) return BOOL_OR;
  if (take(m, "xor")) return BOOL_XOR;
  return BOOL_NONE;
}

static int aop_from_mods(mods *m) {
  static const char *const names[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"};
  for (int i = 0; i < 10; i++)
    if (take(m, names[i])) return i;
  return -1;
}

/* the float-op flags shared by arithmetic */
static void float_flags(emu_insn *in, const mods *m) {
  if (m->ftz) in->flags |= IF_FTZ;
  if (m->sat) in->flags |= IF_SAT;
  if (m->satfinite) in->flags |= IF_SATFINITE;
  if (m->relu) in->flags |= IF_RELU;
  if (m->approx || m->full) in->flags |= IF_APPROX;
  if (m->nan) in->flags |= IF_NAN;
}

/* ------------------------------------------------------------------ decode */
static int find_base(char **parts, int n, int *used) {
  for (int k = n < 4 ? n : 4; k >= 1; k--) {
    char buf[128];
    buf[0] = 0;
    for (int i = 0; i < k; i++) {
      if (i) strcat(buf, ".");
      if (strlen(buf) + strlen(parts[i]) + 2 > sizeof buf) return -1;
      strcat(buf, parts[i]);
    }
    for (int op = 0; op < OP_COUNT; op++)
      if (dlcemu_op_names[op] && !strcmp(dlcemu_op_names[op], buf)) {
        *used = k;
        return op;
      }
  }
  return -1;
}

/* integer/float binary and unary arithmetic */
static int dec_arith(emu_parse_ctx *pc, int op, mods *m, emu_operand *o, int n, emu_insn *in) {
  int t = m->ntypes ? m->types[0] : T_NONE;
  int rc;
  in->t = (uint8_t)t;
  in->rnd = (uint8_t)m->rnd;
  float_flags(in, m);
  if (take(m, "cc")) in->flags |= IF_CC;
  int nsrc;
  switch (op) {
  case OP_ABS: case OP_NEG: case OP_NOT: case OP_CNOT: case OP_POPC: case OP_CLZ: case OP_BREV:
  case OP_BFIND: case OP_RCP: case OP_SQRT: case OP_RSQRT: case OP_SIN: case OP_COS: case OP_LG2:
  case OP_EX2: case OP_TANH:
    nsrc = 1;
    break;
  case OP_MAD: case OP_FMA: case OP_MAD24: case OP_SAD: case OP_MADC: case OP_BFE: case OP_PRMT:
  case OP_SHF: case OP_DP4A: case OP_DP2A: case OP_FNS:
    nsrc = 3;
    break;
  case OP_BFI:
    nsrc = 4;
    break;
  default:
    nsrc = 2;
    break;
  }
  if (op == OP_MUL || op == OP_MAD || op == OP_MUL24 || op == OP_MAD24 || op == OP_MADC) {
    if (take(m, "hi")) in->flags |= IF_HI;
    else if (take(m, "wide")) in->flags |= IF_WIDE;
    else take(m, "lo");
  }
  if (op == OP_BFIND && take(m, "shiftamt")) in->flags |= IF_HI;
  if (op == OP_BMSK) {
    if (take(m, "wrap")) in->flags |= IF_WRAP;
    else if (!take(m, "clamp")) return dlcemu_pc_error(pc, "bmsk needs .clamp or .wrap");
  }
  if (op == OP_SHF) {
    if (take(m, "l")) in->flags |= IF_LEFT;
    else if (!take(m, "r")) return dlcemu_pc_error(pc, "shf needs .l or .r");
    if (take(m, "wrap")) in->flags |= IF_WRAP;
    else if (!take(m, "clamp")) return dlcemu_pc_error(pc, "shf needs .wrap or .clamp");
  }
  if (op == OP_PRMT) {
    static const char *const modes[] = {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
    for (int i = 0; i < 6; i++)
      if (take(m, modes[i])) in->sub = (uint8_t)(i + 1);
  }
  if (op == OP_DP2A) {
    if (take(m, "hi")) in->flags |= IF_HI;
    else take(m, "lo");
  }
  if (op == OP_MIN || op == OP_MAX) {
    if (m->xorsign) {
      if (!take(m, "abs")) return dlcemu_pc_error(pc, ".xorsign needs .abs");
      in->sub = 1;
    }
  }
  if ((op == OP_DP4A || op == OP_DP2A)) {
    if (m->ntypes != 2) return dlcemu_pc_error(pc, "dp4a/dp2a need two types");
  }
  if ((rc = check_rest(pc, m))) return rc;
  if (op == OP_DP4A || op == OP_DP2A) {
    in->t = (uint8_t)m->types[0];
    in->t2 = (uint8_t)m->types[1];
    t = T_U32;
  } else if (m->ntypes != 1) {
    return dlcemu_pc_error(pc, "expected one type");
  }
  if (t == T_PRED) {
    /* and/or/xor/not/mov on predicates */
    int sub;
    switch (op) {
    case OP_AND: sub = 1; break;
    case OP_OR: sub = 2; break;
    case OP_XOR: sub = 3; break;
    case OP_NOT: sub = 4; break;
    default: return dlcemu_pc_unsupported(pc, "this operation on .pred");
    }
    if ((rc = nops_is(pc, n, nsrc + 1))) return rc;
    in->op = OP_PRED_LOGIC;
    in->sub = (uint8_t)sub;
    int neg;
    if ((rc = pdst(pc, &o[0], 0, &in->a[0]))) return rc;
    if ((rc = psrc(pc, &o[1], 1, &in->a[1], &neg))) return rc;
    if (neg) in->flags |= IF_NEGA;
    if (nsrc == 2) {
      if ((rc = psrc(pc, &o[2], 2, &in->a[2], &neg))) return rc;
      if (neg) in->flags |= IF_NEGB;
    }
    return 0;
  }
  if (op == OP_LOP3) {
    if ((rc = nops_is(pc, n, 5))) return rc;
    if (o[4].kind != OPD_IMM) return bad_operand(pc, 4, "an immediate lookup table");
    in->imm = o[4].ival & 0xFF;
    nsrc = 3;
  } else if ((rc = nops_is(pc, n, nsrc + 1))) {
    return rc;
  }
  if ((rc = dst(pc, &o[0], 0, &in->a[0]))) return rc;
  for (int i = 0; i < nsrc; i++) {
    int st = t;
    /* shift amounts, bit positions and selectors are u32 */
    if ((op == OP_SHL || op == OP_SHR) && i == 1) st = T_U32;
    if ((op == OP_BFE && i > 0) || (op == OP_BFI && i > 1)) st = T_U32;
    if (op == OP_SHF && i == 2) st = T_U32;
    if ((in->flags & IF_WIDE) && i == 2 && (op == OP_MAD)) st = t == T_S16 ? T_S32 : t == T_U16 ? T_U32 : t == T_S32 ? T_S64 : T_U64;
    if (op == OP_SAD && i == 2) st = t;
    if ((rc = src(pc, &o[i + 1], st, i + 1, &in->a[i + 1]))) return rc;
  }
  return 0;
}

static int dec_setp(emu_parse_ctx *pc, int op, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc;
  int cmp = cmp_from_mods(m);
  if (cmp < 0) return dlcemu_pc_error(pc, "missing comparison operator");
  int b = bool_from_mods(m);
  in->sub = (uint8_t)cmp;
  in->sub2 = (uint8_t)b;
  float_flags(in, m);
  if ((rc = check_rest(pc, m))) return rc;
  int stype;
  if (op == OP_SETP) {
    if (m->ntypes != 1) return dlcemu_pc_error(pc, "expected one type");
    stype = m->types[0];
    in->t = (uint8_t)stype;
    in->t2 = (uint8_t)stype;
    if ((rc = nops_is(pc, n, b ? 4 : 3))) return rc;
    if ((rc = pdst(pc, &o[0], 0, &in->a[0]))) return rc;
    if (o[0].reg2 >= 0) in->a[1] = REF_PRED | (uint32_t)o[0].reg2;
    else in->a[1] = PRED_SINK_REF;
    if ((rc = src(pc, &o[1], stype, 1, &in->a[2]))) return rc;
    if ((rc = src(pc, &o[2], stype, 2, &in->a[3]))) return rc;
    if (b) {
      int neg;
      if ((rc = psrc(pc, &o[3], 3, &in->a[4], &neg))) return rc;
      if (neg) in->flags |= IF_NEGB;
    } else {
      in->a[4] = PRED_TRUE_REF;
    }
  } else {
    if (m->ntypes != 2) return dlcemu_pc_error(pc, "set needs a destination and a source type");
    in->t = (uint8_t)m->types[0];
    in->t2 = (uint8_t)m->types[1];
    stype = in->t2;
    if ((rc = nops_is(pc, n, b ? 4 : 3))) return rc;
    if ((rc = dst(pc, &o[0], 0, &in->a[0]))) return rc;
    if ((rc = src(pc, &o[1], stype, 1, &in->a[2]))) return rc;
    if ((rc = src(pc, &o[2], stype, 2, &in->a[3]))) return rc;
    if (b) {
      int neg;
      if ((rc = psrc(pc, &o[3], 3, &in->a[4], &neg))) return rc;
      if (neg) in->flags |= IF_NEGB;
    } else {
      in->a[4] = PRED_TRUE_REF;
    }
  }
  in->cls = (uint8_t)class_for_type(stype);
  return 0;
}

static int dec_mov(emu_parse_ctx *pc, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc, t = T_NONE;
  if ((rc = check_rest(pc, m)) || (rc = one_type(pc, m, &t)) || (rc = nops_is(pc, n, 2))) return rc;
  in->t = (uint8_t)t;
  if (t == T_PRED) {
    int neg;
    in->op = OP_PRED_LOGIC;
    in->sub = 0;
    if ((rc = pdst(pc, &o[0], 0, &in->a[0])) || (rc = psrc(pc, &o[1], 1, &in->a[1], &neg))) return rc;
    if (neg) in->flags |= IF_NEGA;
    return 0;
  }
  unsigned size = dlcemu_type_size(t);
  if (o[0].kind == OPD_VEC) { /* unpack */
    int cnt = o[0].nelems;
    if (cnt < 2 || size % (unsigned)cnt) return dlcemu_pc_error(pc, "bad unpack vector");
    in->op = OP_MOV_UNPACK;
    in->vec = (uint8_t)cnt;
    if ((rc = vec(pc, &o[0], 0, cnt, T_NONE, 1, &in->a[0], NULL))) return rc;
    return src(pc, &o[1], t, 1, &in->a[1]);
  }
  if (o[1].kind == OPD_VEC) { /* pack */
    int cnt = o[1].nelems;
    if (cnt < 2 || size % (unsigned)cnt) return dlcemu_pc_error(pc, "bad pack vector");
    int et = size / (unsigned)cnt == 1 ? T_B8 : size / (unsigned)cnt == 2 ? T_B16 : size / (unsigned)cnt == 4 ? T_B32 : T_B64;
    in->op = OP_MOV_PACK;
    in->vec = (uint8_t)cnt;
    if ((rc = dst(pc, &o[0], 0, &in->a[0]))) return rc;
    return vec(pc, &o[1], 1, cnt, et, 0, &in->a[1], NULL);
  }
  if (o[1].kind == OPD_SREG && o[1].reg >= SR_COUNT_STATIC) {
    in->op = OP_MOV_CLOCK;
    in->sub = (uint8_t)o[1].reg;
    return dst(pc, &o[0], 0, &in->a[0]);
  }
  if ((rc = dst(pc, &o[0], 0, &in->a[0]))) return rc;
  return src(pc, &o[1], t, 1, &in->a[1]);
}

static int dec_cvt(emu_parse_ctx *pc, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc;
  if (take(m, "pack")) return dlcemu_pc_unsupported(pc, "cvt.pack");
  if ((rc = check_rest(pc, m))) return rc;
  if (m->ntypes != 2) return dlcemu_pc_error(pc, "cvt needs two types");
  in->t = (uint8_t)m->types[0];
  in->t2 = (uint8_t)m->types[1];
  in->rnd = (uint8_t)m->rnd;
  float_flags(in, m);
  int dt = in->t, stt = in->t2;
  if (dt == T_F16X2 || dt == T_BF16X2) {
    if (stt != T_F32) return dlcemu_pc_unsupported(pc, "packed conversion from this type");
    if ((rc = nops_is(pc, n, 3))) return rc;
    if ((rc = dst(pc, &o[0], 0, &in->a[0])) || (rc = src(pc, &o[1], T_F32, 1, &in->a[1])) ||
        (rc = src(pc, &o[2], T_F32, 2, &in->a[2])))
      return rc;
    return 0;
  }
  if (dt == T_PRED || stt == T_PRED || dt == T_B128 || stt == T_B128 ||
      (dt == T_TF32 && stt != T_F32) || stt == T_TF32)
    return dlcemu_pc_unsupported(pc, "conversion between these types");
  if ((rc = nops_is(pc, n, 2))) return rc;
  if ((rc = dst(pc, &o[0], 0, &in->a[0]))) return rc;
  return src(pc, &o[1], stt, 1, &in->a[1]);
}

static int dec_mem(emu_parse_ctx *pc, int op, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc, t = T_NONE;
  if (m->cache_hint) n--; /* the cache-policy operand */
  if ((rc = check_rest(pc, m)) || (rc = one_type(pc, m, &t))) return rc;
  in->t = (uint8_t)t;
  in->space = (uint8_t)(m->space < 0 ? SP_GENERIC : m->space);
  in->vec = (uint8_t)m->vec;
  if (m->strong) in->flags |= IF_STRONG;
  if ((rc = nops_is(pc, n, 2))) return rc;
  if (t == T_PRED) return dlcemu_pc_unsupported(pc, "ld/st of .pred");
  int di = op == OP_ST ? 1 : 0, ai = op == OP_ST ? 0 : 1;
  uint32_t base;
  if ((rc = addr(pc, &o[ai], ai, &base, &in->imm, &in->sym, in, IF_ADDR32))) return rc;
  if (m->vec > 1) {
    if ((rc = vec(pc, &o[di], di, m->vec, t, op != OP_ST, &in->a[op == OP_ST ? 1 : 0], NULL))) return rc;
  } else if (op == OP_ST) {
    if ((rc = src(pc, &o[di], t, di, &in->a[1]))) return rc;
  } else {
    if ((rc = dst(pc, &o[di], di, &in->a[0]))) return rc;
  }
  if (op == OP_ST) {
    in->a[0] = base;
  } else {
    const emu_operand *d0 = m->vec > 1 ? &o[di].elems[0] : &o[di];
    unsigned w = d0->kind == OPD_REG ? dlcemu_type_size(d0->rtype) : 8;
    in->sub2 = (uint8_t)(w ? w : 8);
  }
  if (op != OP_ST) in->a[1] = base;
  if (op == OP_LDU) in->op = OP_LD;
  return 0;
}

static int dec_atom(emu_parse_ctx *pc, int op, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc, t = T_NONE;
  if (m->cache_hint) n--;
  int aop = aop_from_mods(m);
  if (aop < 0) return dlcemu_pc_error(pc, "missing atomic operation");
  if ((rc = check_rest(pc, m)) || (rc = one_type(pc, m, &t))) return rc;
  if (m->vec != 1) return dlcemu_pc_unsupported(pc, "vector atomics");
  in->t = (uint8_t)t;
  in->sub = (uint8_t)aop;
  in->space = (uint8_t)(m->space < 0 ? SP_GENERIC : m->space);
  if (in->space != SP_GENERIC && in->space != SP_GLOBAL && in->space != SP_SHARED)
    return dlcemu_pc_error(pc, "atomics work on global or shared memory");
  if (t == T_BF16X2 || t == T_F16X2 || t == T_BF16 || t == T_F16) {
    if (aop != AOP_ADD && aop != AOP_MIN && aop != AOP_MAX) return dlcemu_pc_unsupported(pc, "this atomic on half types");
  } else if (dlcemu_type_is_float(t)) {
    if (aop != AOP_ADD && aop != AOP_EXCH && aop != AOP_MIN && aop != AOP_MAX)
      return dlcemu_pc_unsupported(pc, "this atomic on floats");
  }
  if (dlcemu_type_size(t) < 2 || (dlcemu_type_size(t) == 2 && !is_half_type(t) && aop != AOP_CAS))
    return dlcemu_pc_unsupported(pc, "atomics of this size");
  int want = (op == OP_RED ? 2 : 3) + (aop == AOP_CAS ? 1 : 0);
  if ((rc = nops_is(pc, n, want))) return rc;
  int k = 0;
  if (op == OP_ATOM) {
    if ((rc = dst(pc, &o[k++], 0, &in->a[0]))) return rc;
  } else {
    in->a[0] = REF_SREG | SR_SINK;
  }
  if ((rc = addr(pc, &o[k], k, &in->a[1], &in->imm, &in->sym, in, IF_ADDR32))) return rc;
  k++;
  if ((rc = src(pc, &o[k], t, k, &in->a[2]))) return rc;
  k++;
  if (aop == AOP_CAS && (rc = src(pc, &o[k], t, k, &in->a[3]))) return rc;
  in->op = OP_ATOM;
  return 0;
}

static int dec_call(emu_parse_ctx *pc, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc;
  if ((rc = check_rest(pc, m))) return rc;
  int k = 0;
  const emu_operand *rets = NULL, *args = NULL;
  if (k < n && o[k].kind == OPD_LIST) rets = &o[k++];
  if (k >= n || o[k].kind != OPD_SYM || pc->m->syms[o[k].sym].kind != SYM_FUNC) {
    if (k < n && o[k].kind == OPD_REG) return dlcemu_pc_unsupported(pc, "indirect call");
    return dlcemu_pc_error(pc, "expected a function name");
  }
  int fi = pc->m->syms[o[k++].sym].func;
  if (k < n && o[k].kind == OPD_LIST) args = &o[k++];
  if (k != n) return dlcemu_pc_error(pc, "unexpected operands after the argument list");
  emu_func *callee = &pc->m->funcs[fi];
  if (!rets && !args && n != 1) return dlcemu_pc_error(pc, "bad call");
  if (rets && !args && callee->nparams) { /* call (args)? with no returns: the list was the args */
    args = rets;
    rets = NULL;
  }
  uint32_t list[32];
  int na = args ? args->nelems : 0, nr = rets ? rets->nelems : 0;
  if (na > 32 || nr > 32) return dlcemu_pc_unsupported(pc, "call with more than 32 arguments");
  for (int i = 0; i < na; i++) {
    const emu_operand *e = &args->elems[i];
    if (e->kind != OPD_SYM || pc->m->syms[e->sym].kind != SYM_TPARAM)
      return dlcemu_pc_unsupported(pc, "call argument that is not a .param variable");
    list[i] = (uint32_t)e->sym;
  }
  in->a[1] = REF_NONE;
  in->a[2] = REF_NONE;
  if (na && (rc = dlcemu_pc_vec(pc, list, na, &in->a[1]))) return rc;
  for (int i = 0; i < nr; i++) {
    const emu_operand *e = &rets->elems[i];
    if (e->kind != OPD_SYM || pc->m->syms[e->sym].kind != SYM_TPARAM)
      return dlcemu_pc_unsupported(pc, "call return that is not a .param variable");
    list[i] = (uint32_t)e->sym;
  }
  if (nr && (rc = dlcemu_pc_vec(pc, list, nr, &in->a[2]))) return rc;
  in->a[0] = (uint32_t)fi;
  in->vec = (uint8_t)na;
  in->sub = (uint8_t)nr;
  /* the functions the runtime provides when they have no body; whether a
   * function has one is known only at the end of the module (link.c) */
  if (!strcmp(callee->name, "vprintf")) in->sub2 = EXT_VPRINTF;
  else if (!strcmp(callee->name, "__assertfail") || !strcmp(callee->name, "__assert_fail")) in->sub2 = EXT_ASSERT;
  return 0;
}

static int dec_bar(emu_parse_ctx *pc, int op, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc;
  take(m, "cta");
  int kind;
  if (m->sync) kind = BAR_SYNC;
  else if (take(m, "arrive")) kind = BAR_ARRIVE;
  else if (take(m, "red")) kind = BAR_RED;
  else return dlcemu_pc_unsupported(pc, "barrier form");
  in->sub = (uint8_t)kind;
  if (op == OP_BAR || m->aligned) in->flags |= IF_ALIGNED;
  in->op = OP_BAR;
  if (kind == BAR_RED) {
    int r;
    if (take(m, "popc")) r = BRED_POPC;
    else if (take(m, "and")) r = BRED_AND;
    else if (take(m, "or")) r = BRED_OR;
    else return dlcemu_pc_error(pc, "bar.red needs .popc, .and or .or");
    in->sub2 = (uint8_t)r;
    if ((rc = check_rest(pc, m))) return rc;
    if (n != 3 && n != 4) return dlcemu_pc_error(pc, "bar.red needs 3 or 4 operands");
    if (r == BRED_POPC) {
      if ((rc = dst(pc, &o[0], 0, &in->a[0]))) return rc;
    } else if ((rc = pdst(pc, &o[0], 0, &in->a[0]))) {
      return rc;
    }
    if ((rc = src(pc, &o[1], T_U32, 1, &in->a[1]))) return rc;
    in->a[2] = REF_NONE;
    if (n == 4 && (rc = src(pc, &o[2], T_U32, 2, &in->a[2]))) return rc;
    int neg;
    if ((rc = psrc(pc, &o[n - 1], n - 1, &in->a[3], &neg))) return rc;
    if (neg) in->flags |= IF_NEGB;
    return 0;
  }
  if ((rc = check_rest(pc, m))) return rc;
  if (n < 1 || n > 2) return dlcemu_pc_error(pc, "barrier needs 1 or 2 operands");
  if (kind == BAR_ARRIVE && n != 2) return dlcemu_pc_error(pc, "bar.arrive needs a thread count");
  if ((rc = src(pc, &o[0], T_U32, 0, &in->a[0]))) return rc;
  in->a[1] = REF_NONE;
  if (n == 2 && (rc = src(pc, &o[1], T_U32, 1, &in->a[1]))) return rc;
  return 0;
}

static int dec_warp(emu_parse_ctx *pc, int op, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc, neg;
  if (op == OP_ACTIVEMASK) {
    if ((rc = check_rest(pc, m)) || (rc = nops_is(pc, n, 1))) return rc;
    return dst(pc, &o[0], 0, &in->a[0]);
  }
  if (op == OP_BAR_WARP) {
    if ((rc = check_rest(pc, m)) || (rc = nops_is(pc, n, 1))) return rc;
    return src(pc, &o[0], T_U32, 0, &in->a[0]);
  }
  if (!m->sync) return dlcemu_pc_unsupported(pc, "warp operation without .sync");
  if (op == OP_SHFL) {
    static const char *const modes[] = {"up", "down", "bfly", "idx"};
    int mode = -1;
    for (int i = 0; i < 4; i++)
      if (take(m, modes[i])) mode = i;
    if (mode < 0) return dlcemu_pc_error(pc, "shfl needs a mode");
    in->sub = (uint8_t)mode;
    if ((rc = check_rest(pc, m)) || (rc = nops_is(pc, n, 5))) return rc;
    in->t = T_B32;
    if ((rc = dst(pc, &o[0], 0, &in->a[0]))) return rc;
    in->a[1] = o[0].reg2 >= 0 ? REF_PRED | (uint32_t)o[0].reg2 : PRED_SINK_REF;
    for (int i = 1; i < 5; i++)
      if ((rc = src(pc, &o[i], T_U32, i, &in->a[i + 1]))) return rc;
    return 0;
  }
  if (op == OP_VOTE) {
    int mode = -1;
    if (take(m, "all")) mode = VOTE_ALL;
    else if (take(m, "any")) mode = VOTE_ANY;
    else if (take(m, "uni")) mode = VOTE_UNI;
    else if (take(m, "ballot")) mode = VOTE_BALLOT;
    if (mode < 0 && m->uni) mode = VOTE_UNI;
    if (mode < 0) return dlcemu_pc_error(pc, "vote needs a mode");
    in->sub = (uint8_t)mode;
    if ((rc = check_rest(pc, m)) || (rc = nops_is(pc, n, 3))) return rc;
    if (mode == VOTE_BALLOT) {
      if ((rc = dst(pc, &o[0], 0, &in->a[0]))) return rc;
    } else if ((rc = pdst(pc, &o[0], 0, &in->a[0]))) {
      return rc;
    }
    if ((rc = psrc(pc, &o[1], 1, &in->a[1], &neg))) return rc;
    if (neg) in->flags |= IF_NEGA;
    return src(pc, &o[2], T_U32, 2, &in->a[2]);
  }
  if (op == OP_MATCH) {
    int mode;
    if (take(m, "any")) mode = 0;
    else if (take(m, "all")) mode = 1;
    else return dlcemu_pc_error(pc, "match needs .any or .all");
    in->sub = (uint8_t)mode;
    int t = T_NONE;
    if ((rc = check_rest(pc, m)) || (rc = one_type(pc, m, &t)) || (rc = nops_is(pc, n, 3))) return rc;
    in->t = (uint8_t)t;
    if ((rc = dst(pc, &o[0], 0, &in->a[0]))) return rc;
    in->a[1] = o[0].reg2 >= 0 ? REF_PRED | (uint32_t)o[0].reg2 : PRED_SINK_REF;
    if ((rc = src(pc, &o[1], t, 1, &in->a[2]))) return rc;
    return src(pc, &o[2], T_U32, 2, &in->a[3]);
  }
  if (op == OP_ELECT) {
    /* elect.sync d|p, membermask */
    if ((rc = check_rest(pc, m)) || (rc = nops_is(pc, n, 2))) return rc;
    in->t = T_B32;
    if ((rc = dst(pc, &o[0], 0, &in->a[0]))) return rc;
    in->a[1] = o[0].reg2 >= 0 ? REF_PRED | (uint32_t)o[0].reg2 : PRED_SINK_REF;
    return src(pc, &o[1], T_U32, 1, &in->a[2]);
  }
  /* redux */
  int aop = aop_from_mods(m);
  if (aop < 0 || aop == AOP_INC || aop == AOP_DEC || aop == AOP_EXCH || aop == AOP_CAS)
    return dlcemu_pc_error(pc, "redux needs .add/.min/.max/.and/.or/.xor");
  int t = T_NONE;
  if ((rc = check_rest(pc, m)) || (rc = one_type(pc, m, &t)) || (rc = nops_is(pc, n, 3))) return rc;
  if (dlcemu_type_is_float(t)) return dlcemu_pc_unsupported(pc, "floating-point redux");
  in->sub = (uint8_t)aop;
  in->t = (uint8_t)t;
  if ((rc = dst(pc, &o[0], 0, &in->a[0])) || (rc = src(pc, &o[1], t, 1, &in->a[1]))) return rc;
  return src(pc, &o[2], T_U32, 2, &in->a[2]);
}

static int dec_mma(emu_parse_ctx *pc, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc;
  if (!m->sync || !m->aligned) return dlcemu_pc_error(pc, "mma needs .sync.aligned");
  int shape = 0;
  if (take(m, "m16n8k16")) shape = MMA_M16N8K16;
  else if (take(m, "m16n8k8")) shape = MMA_M16N8K8;
  else return dlcemu_pc_unsupported(pc, "mma shape");
  if (!take(m, "row") || !take(m, "col")) return dlcemu_pc_unsupported(pc, "mma layout other than .row.col");
  if ((rc = check_rest(pc, m))) return rc;
  if (m->ntypes != 4) return dlcemu_pc_error(pc, "mma needs .dtype.atype.btype.ctype");
  if (m->satfinite || m->ftz || m->rnd) return dlcemu_pc_unsupported(pc, "mma modifier");
  int dt = m->types[0], at = m->types[1], bt = m->types[2], ct = m->types[3];
  if (at != bt) return dlcemu_pc_unsupported(pc, "mma with different A and B types");
  if (at == T_F16) {
    if ((dt != T_F32 && dt != T_F16) || (ct != T_F32 && ct != T_F16))
      return dlcemu_pc_unsupported(pc, "mma accumulator type");
  } else if (at == T_BF16 || at == T_TF32) {
    if (dt != T_F32 || ct != T_F32) return dlcemu_pc_unsupported(pc, "mma accumulator type");
    if (at == T_TF32 && shape != MMA_M16N8K8) return dlcemu_pc_unsupported(pc, "tf32 mma shape");
  } else {
    return dlcemu_pc_unsupported(pc, "mma input type");
  }
  if ((rc = nops_is(pc, n, 4))) return rc;
  int na = at == T_TF32 ? 4 : (shape == MMA_M16N8K16 ? 4 : 2);
  int nb = at == T_TF32 ? 2 : (shape == MMA_M16N8K16 ? 2 : 1);
  int nd = dt == T_F32 ? 4 : 2, nc = ct == T_F32 ? 4 : 2;
  in->sub = (uint8_t)shape;
  in->t = (uint8_t)dt;
  in->t2 = (uint8_t)at;
  in->sub2 = (uint8_t)ct;
  in->flags |= IF_ALIGNED;
  if ((rc = vec(pc, &o[0], 0, nd, T_NONE, 1, &in->a[0], NULL)) ||
      (rc = vec(pc, &o[1], 1, na, T_B32, 0, &in->a[1], NULL)) ||
      (rc = vec(pc, &o[2], 2, nb, T_B32, 0, &in->a[2], NULL)) ||
      (rc = vec(pc, &o[3], 3, nc, ct == T_F32 ? T_F32 : T_B32, 0, &in->a[3], NULL)))
    return rc;
  return 0;
}

static int dec_matrix(emu_parse_ctx *pc, int op, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc;
  if (!m->sync || !m->aligned) return dlcemu_pc_error(pc, "ldmatrix/stmatrix need .sync.aligned");
  if (!take(m, "m8n8")) return dlcemu_pc_unsupported(pc, "matrix shape");
  int num = 0;
  if (take(m, "x1")) num = 1;
  else if (take(m, "x2")) num = 2;
  else if (take(m, "x4")) num = 4;
  else return dlcemu_pc_error(pc, "missing .x1/.x2/.x4");
  if (take(m, "trans")) in->flags |= IF_TRANS;
  if ((rc = check_rest(pc, m))) return rc;
  if (m->ntypes != 1 || m->types[0] != T_B16) return dlcemu_pc_unsupported(pc, "matrix element type");
  if (m->space >= 0 && m->space != SP_SHARED) return dlcemu_pc_error(pc, "matrices live in shared memory");
  if ((rc = nops_is(pc, n, 2))) return rc;
  in->vec = (uint8_t)num;
  in->t = T_B16;
  in->space = (uint8_t)(m->space < 0 ? SP_GENERIC : SP_SHARED);
  in->flags |= IF_ALIGNED;
  if (op == OP_LDMATRIX) {
    if ((rc = vec(pc, &o[0], 0, num, T_NONE, 1, &in->a[0], NULL))) return rc;
    return addr(pc, &o[1], 1, &in->a[1], &in->imm, &in->sym, in, IF_ADDR32);
  }
  if ((rc = addr(pc, &o[0], 0, &in->a[0], &in->imm, &in->sym, in, IF_ADDR32))) return rc;
  return vec(pc, &o[1], 1, num, T_B32, 0, &in->a[1], NULL);
}

/* wgmma.mma_async.sync.aligned.m64nNk16.dtype.atype.btype
 *   SS: d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b
 *   RS: d, {a0..a3}, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b */
static int imm_in(const emu_operand *o, int a, int b) {
  return o->kind == OPD_IMM && o->imm_kind == IMM_INT && o->ival >= a && o->ival <= b;
}

static int dec_wgmma(emu_parse_ctx *pc, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc;
  if (!m->sync || !m->aligned) return dlcemu_pc_error(pc, "wgmma.mma_async needs .sync.aligned");
  int N = 0;
  for (int i = 0; i < m->nrest && !N; i++) {
    int nn = 0;
    char tail[8];
    if (!m->used[i] && sscanf(m->rest[i], "m64n%dk16%7s", &nn, tail) == 1 && nn >= 8 && nn <= 256 && nn % 8 == 0) {
      m->used[i] = 1;
      N = nn;
    }
  }
  if (!N) return dlcemu_pc_unsupported(pc, "wgmma shape other than .m64nNk16 (N = 8, 16, ..., 256)");
  if ((rc = check_rest(pc, m))) return rc;
  if (m->ntypes != 3) return dlcemu_pc_error(pc, "wgmma needs .dtype.atype.btype");
  if (m->satfinite) return dlcemu_pc_unsupported(pc, "wgmma .satfinite");
  int dt = m->types[0], at = m->types[1], bt = m->types[2];
  if (at != bt || (at != T_F16 && at != T_BF16)) return dlcemu_pc_unsupported(pc, "wgmma input types other than f16/bf16");
  if (dt != T_F32 && !(dt == T_F16 && at == T_F16)) return dlcemu_pc_error(pc, "wgmma accumulator type");
  int rs = o[1].kind == OPD_VEC;
  if ((rc = nops_is(pc, n, rs ? 7 : 8))) return rc;
  in->t = (uint8_t)dt;
  in->t2 = (uint8_t)at;
  in->sub = (uint8_t)(N / 8);
  in->flags |= IF_ALIGNED;
  int nd = dt == T_F32 ? N / 2 : N / 4;
  if ((rc = vec(pc, &o[0], 0, nd, T_NONE, 1, &in->a[0], NULL))) return rc;
  if (rs) {
    if ((rc = vec(pc, &o[1], 1, 4, T_B32, 0, &in->a[1], NULL))) return rc;
    in->sub2 |= WG_RS;
  } else if ((rc = src(pc, &o[1], T_B64, 1, &in->a[1]))) {
    return rc;
  }
  if ((rc = src(pc, &o[2], T_B64, 2, &in->a[2]))) return rc;
  int neg;
  if ((rc = psrc(pc, &o[3], 3, &in->a[3], &neg))) return rc;
  if (neg) in->flags |= IF_NEGA;
  if (!imm_in(&o[4], -1, 1) || o[4].ival == 0) return bad_operand(pc, 4, "imm-scale-a: 1 or -1");
  if (!imm_in(&o[5], -1, 1) || o[5].ival == 0) return bad_operand(pc, 5, "imm-scale-b: 1 or -1");
  if (o[4].ival < 0) in->sub2 |= WG_NEG_A;
  if (o[5].ival < 0) in->sub2 |= WG_NEG_B;
  if (!rs) {
    if (!imm_in(&o[6], 0, 1)) return bad_operand(pc, 6, "imm-trans-a: 0 or 1");
    if (o[6].ival) in->sub2 |= WG_TRANS_A;
  }
  if (!imm_in(&o[rs ? 6 : 7], 0, 1)) return bad_operand(pc, rs ? 6 : 7, "imm-trans-b: 0 or 1");
  if (o[rs ? 6 : 7].ival) in->sub2 |= WG_TRANS_B;
  return 0;
}

/* warpgroup collectives: wgmma.fence / commit_group / wait_group N, setmaxnreg.inc/dec.u32 N */
static int dec_warpgroup(emu_parse_ctx *pc, int op, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc;
  if (!m->sync || !m->aligned) return dlcemu_pc_error(pc, "warpgroup instructions need .sync.aligned");
  in->flags |= IF_ALIGNED;
  if (op == OP_SETMAXNREG) {
    if (take(m, "inc")) in->sub = 1;
    else if (take(m, "dec")) in->sub = 0;
    else return dlcemu_pc_error(pc, "setmaxnreg needs .inc or .dec");
    int t = T_NONE;
    if ((rc = check_rest(pc, m)) || (rc = one_type(pc, m, &t)) || (rc = nops_is(pc, n, 1))) return rc;
    if (t != T_U32) return dlcemu_pc_error(pc, "setmaxnreg needs .u32");
    if (o[0].kind != OPD_IMM || o[0].imm_kind != IMM_INT || o[0].ival < 24 || o[0].ival > 256 || o[0].ival % 8)
      return bad_operand(pc, 0, "a register count in 24..256, a multiple of 8");
    in->imm = o[0].ival;
    return 0;
  }
  if ((rc = check_rest(pc, m))) return rc;
  if (op != OP_WG_WAIT) return nops_is(pc, n, 0);
  if ((rc = nops_is(pc, n, 1))) return rc;
  if (o[0].kind != OPD_IMM || o[0].imm_kind != IMM_INT || o[0].ival < 0 || o[0].ival > 7)
    return bad_operand(pc, 0, "an immediate group count in 0..7");
  in->imm = o[0].ival;
  return 0;
}

static int dec_cp_async(emu_parse_ctx *pc, int op, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc;
  if (op == OP_CP_COMMIT || op == OP_CP_WAIT_ALL) {
    if ((rc = check_rest(pc, m)) || (rc = nops_is(pc, n, 0))) return rc;
    return 0;
  }
  if (op == OP_CP_WAIT) {
    if ((rc = check_rest(pc, m)) || (rc = nops_is(pc, n, 1))) return rc;
    if (o[0].kind != OPD_IMM || o[0].imm_kind != IMM_INT || o[0].ival < 0)
      return bad_operand(pc, 0, "an immediate group count");
    in->imm = o[0].ival;
    return 0;
  }
  /* cp.async.ca/cg.shared{::cta}.global [dst], [src], size{, src-size | ignore-src}{, policy} */
  if (take(m, "bulk") || take(m, "mbarrier")) return dlcemu_pc_unsupported(pc, "Hopper cp.async form");
  if ((rc = check_rest(pc, m))) return rc;
  if (m->ntypes) return dlcemu_pc_unsupported(pc, "cp.async with a type");
  if (m->cache_hint) n--;
  if (n < 3 || n > 4) return dlcemu_pc_error(pc, "cp.async needs 3 or 4 operands");
  if ((rc = addr(pc, &o[0], 0, &in->a[0], &in->imm, &in->sym, in, IF_ADDR32))) return rc;
  if ((rc = addr(pc, &o[1], 1, &in->a[1], &in->imm2, &in->sym2, in, IF_ADDR32B))) return rc;
  if (o[2].kind != OPD_IMM || o[2].imm_kind != IMM_INT ||
      (o[2].ival != 4 && o[2].ival != 8 && o[2].ival != 16))
    return bad_operand(pc, 2, "a copy size of 4, 8 or 16");
  in->vec = (uint8_t)o[2].ival;
  in->a[2] = REF_NONE;
  in->a[3] = REF_NONE;
  if (n == 4) {
    if (o[3].kind == OPD_PRED) { /* ignore-src */
      int neg;
      if ((rc = psrc(pc, &o[3], 3, &in->a[3], &neg))) return rc;
      if (neg) in->flags |= IF_NEGA;
    } else if ((rc = src(pc, &o[3], T_U32, 3, &in->a[2]))) {
      return rc;
    }
  }
  return 0;
}

/* the mbarrier operand: [addr] in shared (.shared, .shared::cta, .shared::cluster of a
 * one-CTA cluster) or generic memory */
static int mbar_space(mods *m, emu_insn *in) {
  if (take(m, "shared::cluster")) m->space = SP_SHARED;
  if (m->space >= 0 && m->space != SP_SHARED) return -1;
  in->space = (uint8_t)(m->space < 0 ? SP_GENERIC : SP_SHARED);
  return 0;
}

/* mbarrier.init / inval / arrive{.expect_tx} / expect_tx / complete_tx / test_wait / try_wait{.parity} */
static int dec_mbarrier(emu_parse_ctx *pc, int op, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc, t = T_NONE;
  if (mbar_space(m, in)) return dlcemu_pc_error(pc, "mbarrier objects live in shared memory");
  if (op == OP_MBAR_ARRIVE && take(m, "expect_tx")) in->sub = 1;
  if ((op == OP_MBAR_TEST_WAIT || op == OP_MBAR_TRY_WAIT) && take(m, "parity")) in->sub = 1;
  if (op == OP_MBAR_ARRIVE && take(m, "noComplete")) return dlcemu_pc_unsupported(pc, "mbarrier.arrive.noComplete");
  if ((rc = check_rest(pc, m)) || (rc = one_type(pc, m, &t))) return rc;
  if (t != T_B64) return dlcemu_pc_error(pc, "mbarrier instructions need .b64");
  in->t = T_B64;
  in->a[2] = in->a[3] = REF_NONE;
  switch (op) {
  case OP_MBAR_INIT:
    if ((rc = nops_is(pc, n, 2))) return rc;
    if ((rc = addr(pc, &o[0], 0, &in->a[1], &in->imm, &in->sym, in, IF_ADDR32))) return rc;
    return src(pc, &o[1], T_U32, 1, &in->a[3]);
  case OP_MBAR_INVAL:
    if ((rc = nops_is(pc, n, 1))) return rc;
    return addr(pc, &o[0], 0, &in->a[1], &in->imm, &in->sym, in, IF_ADDR32);
  case OP_MBAR_EXPECT_TX:
  case OP_MBAR_COMPLETE_TX:
    if ((rc = nops_is(pc, n, 2))) return rc;
    if ((rc = addr(pc, &o[0], 0, &in->a[1], &in->imm, &in->sym, in, IF_ADDR32))) return rc;
    return src(pc, &o[1], T_U32, 1, &in->a[2]);
  case OP_MBAR_ARRIVE: {
    /* state, [addr]{, count}  or  .expect_tx: state, [addr], txCount */
    int want = in->sub ? 3 : 2;
    if (n != want && !(n == 3 && !in->sub))
      return dlcemu_pc_error(pc, "expected %s operands, found %d", in->sub ? "3" : "2 or 3", n);
    if ((rc = dst(pc, &o[0], 0, &in->a[0]))) return rc;
    if ((rc = addr(pc, &o[1], 1, &in->a[1], &in->imm, &in->sym, in, IF_ADDR32))) return rc;
    if (in->sub && (rc = src(pc, &o[2], T_U32, 2, &in->a[2]))) return rc;
    if (n == want + 1 && (rc = src(pc, &o[want], T_U32, want, &in->a[3]))) return rc;
    return 0;
  }
  default: /* test_wait / try_wait: p, [addr], state | parity{, suspendTimeHint} */
    if (n != 3 && !(op == OP_MBAR_TRY_WAIT && n == 4))
      return dlcemu_pc_error(pc, "expected 3%s operands, found %d", op == OP_MBAR_TRY_WAIT ? " or 4" : "", n);
    if ((rc = pdst(pc, &o[0], 0, &in->a[0]))) return rc;
    if ((rc = addr(pc, &o[1], 1, &in->a[1], &in->imm, &in->sym, in, IF_ADDR32))) return rc;
    if ((rc = src(pc, &o[2], in->sub ? T_U32 : T_B64, 2, &in->a[2]))) return rc;
    return 0; /* the suspend-time hint has no effect: a waiting thread sleeps until the phase completes */
  }
}

/* cp.async.bulk.tensor.Nd.shared::cluster.global{.tile}.mbarrier::complete_tx::bytes{.L2::cache_hint}
 *   [dst], [tensorMap, {c0, ...}], [mbar]{, policy} */
static int dec_bulk_tensor(emu_parse_ctx *pc, mods *m, emu_operand *o, int n, emu_insn *in) {
  int rc, rank = 0;
  static const char *const dims[] = {"1d", "2d", "3d", "4d", "5d"};
  for (int i = 0; i < 5; i++)
    if (take(m, dims[i])) rank = i + 1;
  if (!rank) return dlcemu_pc_error(pc, "cp.async.bulk.tensor needs a dimension (.1d .. .5d)");
  if (take(m, "im2col") || take(m, "im2col::w") || take(m, "im2col::w::128") || take(m, "tile::gather4") ||
      take(m, "tile::scatter4"))
    return dlcemu_pc_unsupported(pc, "cp.async.bulk.tensor in im2col or gather/scatter mode");
  if (take(m, "multicast::cluster")) return dlcemu_pc_unsupported(pc, "multicast to a cluster larger than one CTA");
  take(m, "tile");
  /* .dst.src: a load is .shared::cluster.global or .shared::cta.global, a
   * store .global.shared::cta.bulk_group (the last state space is the source) */
  int store = take(m, "bulk_group");
  if (store) {
    if (m->space != SP_SHARED) return dlcemu_pc_error(pc, "a .bulk_group tensor copy is a store: .global.shared::cta");
    if ((rc = check_rest(pc, m))) return rc;
    if (m->ntypes) return dlcemu_pc_error(pc, "cp.async.bulk.tensor takes no type");
    if (m->cache_hint) n--;
    if ((rc = nops_is(pc, n, 2))) return rc;
    in->space = SP_SHARED;
    in->vec = (uint8_t)rank;
    in->sub = 1;
    /* [tensorMap, {coords}], [srcMem] */
    if (o[0].kind != OPD_ADDR || o[0].nelems != rank) {
      char want[64];
      snprintf(want, sizeof want, "[tensorMap, {%d coordinates}]", rank);
      return bad_operand(pc, 0, want);
    }
    emu_operand v = o[0], tm = o[0];
    tm.nelems = 0;
    if ((rc = addr(pc, &tm, 0, &in->a[1], &in->imm2, &in->sym2, in, IF_ADDR32B))) return rc;
    v.kind = OPD_VEC;
    if ((rc = vec(pc, &v, 0, rank, T_S32, 0, &in->a[2], NULL))) return rc;
    return addr(pc, &o[1], 1, &in->a[0], &in->imm, &in->sym, in, IF_ADDR32);
  }
  take(m, "shared::cluster");
  if (m->space != SP_GLOBAL) return dlcemu_pc_unsupported(pc, "cp.async.bulk.tensor other than global <-> shared copies");
  if (!take(m, "mbarrier::complete_tx::bytes")) return dlcemu_pc_error(pc, "needs .mbarrier::complete_tx::bytes");
  if ((rc = check_rest(pc, m))) return rc;
  if (m->ntypes) return dlcemu_pc_error(pc, "cp.async.bulk.tensor takes no type");
  if (m->cache_hint) n--;
  if ((rc = nops_is(pc, n, 3))) return rc;
  in->space = SP_SHARED;
  in->vec = (uint8_t)rank;
  if ((rc = addr(pc, &o[0], 0, &in->a[0], &in->imm, &in->sym, in, IF_ADDR32))) return rc;
  /* [tensorMap, {coords}]: a generic (param, const or global) address with a coordinate vector */
  if (o[1].kind != OPD_ADDR || o[1].nelems != rank) {
    char want[64];
    snprintf(want, sizeof want, "[tensorMap, {%d coordinates}]", rank);
    return bad_operand(pc, 1, want);
  }
  emu_operand v = o[1], tm = o[1];
  tm.nelems = 0;
  if ((rc = addr(pc, &tm, 1, &in->a[1], &in->imm2, &in->sym2, in, IF_ADDR32B))) return rc;
  v.kind = OPD_VEC;
  if ((rc = vec(pc, &v, 1, rank, T_S32, 0, &in->a[2], NULL))) return rc;
  /* [mbar]: base register in a[3], offset (or shared symbol + offset) as a constant in a[4] */
  if (o[2].kind != OPD_ADDR) return bad_operand(pc, 2, "an mbarrier address [...]");
  if (o[2].base_reg >= 0 && dlcemu_type_size(o[2].rtype) < 8) in->flags |= IF_ADDR32C;
  in->a[3] = o[2].base_reg >= 0 ? REF_REG | (uint32_t)o[2].base_reg : REF_NONE;
  in->a[4] = o[2].sym >= 0 ? dlcemu_pc_const_sym(pc, o[2].sym, o[2].ival) : dlcemu_pc_const(pc, (uint64_t)o[2].ival);
  return 0;
}

int dlcemu_opcode_known(const char *opcode) {
  char buf[128];
  char *parts[24];
  int np = 0, used = 0;
  snprintf(buf, sizeof buf, "%s", opcode);
  for (char *p = buf; *p && np < 24;) {
    parts[np++] = p;
    char *d = strchr(p, '.');
    if (!d) break;
    *d = 0;
    p = d + 1;
  }
  return find_base(parts, np, &used) >= 0;
}

/* instructions newer than the module's .target fail like ptxas would */
static int arch_check(emu_parse_ctx *pc, const emu_insn *in) {
  int sm = pc->m->target_sm, need = 0;
  int bf = in->t == T_BF16 || in->t == T_BF16X2;
  switch (in->op) {
  case OP_STMATRIX: case OP_ELECT: case OP_CP_BULK_TENSOR: case OP_MBAR_EXPECT_TX: case OP_MBAR_COMPLETE_TX:
  case OP_BULK_COMMIT: case OP_BULK_WAIT:
  case OP_MBAR_TRY_WAIT: case OP_FENCE_PROXY_ASYNC:
    need = 90;
    break;
  case OP_MBAR_ARRIVE: need = in->sub || in->a[3] != REF_NONE || in->a[0] == (REF_SREG | SR_SINK) ? 90 : 80; break;
  case OP_MBAR_INIT: case OP_MBAR_INVAL: case OP_MBAR_TEST_WAIT: need = in->sub ? 90 : 80; break;
  case OP_WG_FENCE: case OP_WG_COMMIT: case OP_WG_WAIT: case OP_SETMAXNREG: case OP_WGMMA:
    /* wgmma exists on sm_90a only; setmaxnreg on the arch-specific targets from sm_90a */
    if (!pc->m->target_arch_a || sm < 90 || (sm != 90 && in->op != OP_SETMAXNREG)) {
      char what[64];
      snprintf(what, sizeof what, "requires sm_90a, the module targets sm_%d%s", sm, pc->m->target_arch_a ? "a" : "");
      return dlcemu_pc_unsupported(pc, what);
    }
    break;
  case OP_ADD: case OP_SUB: case OP_MUL: case OP_EX2: case OP_TANH: need = bf ? 90 : 0; break;
  case OP_MIN:
  case OP_MAX:
    if (in->sub == 1) need = 86;                                  /* .xorsign.abs */
    if ((in->flags & IF_RELU) && !dlcemu_type_is_float(in->t)) need = 90; /* integer .relu */
    break;
  default: break;
  }
  if (need > sm) {
    char what[64];
    snprintf(what, sizeof what, "requires sm_%d, the module targets sm_%d", need, sm);
    return dlcemu_pc_unsupported(pc, what);
  }
  return 0;
}

/* which of a[0..3] the interpreter reads as register slots */
static uint8_t reg_mask(const emu_insn *in) {
  switch (in->op) {
  case OP_ADD: case OP_SUB: case OP_MUL: case OP_MAD: case OP_MUL24: case OP_MAD24: case OP_SAD:
  case OP_DIV: case OP_REM: case OP_ABS: case OP_NEG: case OP_MIN: case OP_MAX: case OP_POPC:
  case OP_CLZ: case OP_BFIND: case OP_BREV: case OP_BFE: case OP_BFI: case OP_PRMT: case OP_SHF:
  case OP_SHL: case OP_SHR: case OP_AND: case OP_OR: case OP_XOR: case OP_NOT: case OP_CNOT:
  case OP_LOP3: case OP_DP4A: case OP_DP2A: case OP_ADDC: case OP_SUBC: case OP_MADC:
  case OP_COPYSIGN: case OP_FMA: case OP_RCP: case OP_SQRT: case OP_RSQRT: case OP_SIN: case OP_COS:
  case OP_LG2: case OP_EX2: case OP_TANH: case OP_SLCT: case OP_FNS: case OP_BMSK:
    return 0xF;
  case OP_SELP: case OP_CVT: return 0x7;
  case OP_MOV: case OP_CVTA: return 0x3;
  case OP_MOV_PACK: case OP_MOV_CLOCK: case OP_SET: case OP_ACTIVEMASK: case OP_SHFL: case OP_MATCH:
  case OP_REDUX: case OP_ELECT:
    return 0x1;
  case OP_VOTE: return in->sub == VOTE_BALLOT ? 0x1 : 0;
  case OP_MOV_UNPACK: case OP_ISSPACEP: case OP_TESTP: return 0x2;
  default: return 0;
  }
}

/* arithmetic and bit operations: the operands, then the types each accepts */
static int dec_arith_checked(emu_parse_ctx *pc, int op, mods *mp, emu_operand *ops, int nops, emu_insn *in) {
  int rc = 0;
  rc = dec_arith(pc, op, mp, ops, nops, in);
  if (!rc && in->op != OP_PRED_LOGIC && in->cls == CLS_ARITH) in->cls = (uint8_t)class_for_type(in->t);
  if (!rc && in->op != OP_PRED_LOGIC) {
    int t = in->t;
    /* what each operation accepts */
    int fl = dlcemu_type_is_float(t);
    switch (op) {
    case OP_FMA:
      if (!fl || t == T_TF32) rc = dlcemu_pc_unsupported(pc, "fma type");
      else if (!in->rnd) rc = dlcemu_pc_error(pc, "fma needs a rounding mode");
      return rc;
    case OP_RCP: case OP_SQRT: case OP_RSQRT: case OP_SIN: case OP_COS: case OP_LG2: case OP_EX2:
    case OP_TANH:
      if (!fl) rc = dlcemu_pc_error(pc, "floating-point type expected");
      else if (t != T_F32 && t != T_F64 && !((op == OP_EX2 || op == OP_TANH) && is_half_type(t)))
        rc = dlcemu_pc_unsupported(pc, "type of this special function");
      if (!rc && (in->flags & IF_APPROX) == 0 && !in->rnd) rc = dlcemu_pc_error(pc, "needs .approx or a rounding mode");
      if (!rc && (op == OP_SQRT || op == OP_RCP) && in->rnd) in->cls = (uint8_t)class_for_type(t);
      return rc;
    case OP_DIV:
      if (t == T_F32 && !in->rnd && !(in->flags & IF_APPROX)) rc = dlcemu_pc_error(pc, "div.f32 needs a rounding mode, .approx or .full");
      if (is_half_type(t)) rc = dlcemu_pc_unsupported(pc, "div of half types");
      return rc;
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_MIN: case OP_MAX: case OP_ABS: case OP_NEG:
    case OP_MAD:
      if (t == T_TF32 || t == T_B128) rc = dlcemu_pc_unsupported(pc, "type");
      if (op == OP_MAD && fl && t != T_F32 && t != T_F64) rc = dlcemu_pc_unsupported(pc, "mad type");
      return rc;
    case OP_COPYSIGN: case OP_TESTP:
      if (t != T_F32 && t != T_F64) rc = dlcemu_pc_unsupported(pc, "type");
      return rc;
    default:
      if (fl) rc = dlcemu_pc_unsupported(pc, "floating-point type for an integer operation");
      else if (!is_int_type(t)) rc = dlcemu_pc_unsupported(pc, "type");
      return rc;
    }
  }
  return rc;
}

/* testp: the class test, one float type */
static int dec_testp(emu_parse_ctx *pc, int op, mods *mp, emu_operand *ops, int nops, emu_insn *in) {
  int rc = 0;
  static const char *const kinds[] = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"};
  int k = -1;
  for (int i = 0; i < 6; i++)
    if (take(mp, kinds[i])) k = i;
  int t = T_NONE;
  if (k < 0) {
    rc = dlcemu_pc_error(pc, "testp needs a test");
  } else if (!(rc = check_rest(pc, mp)) && !(rc = one_type(pc, mp, &t)) && !(rc = nops_is(pc, nops, 2))) {
    in->sub = (uint8_t)k;
    in->t = (uint8_t)t;
    in->cls = (uint8_t)class_for_type(t);
    if (t != T_F32 && t != T_F64) rc = dlcemu_pc_unsupported(pc, "testp type");
    else if (!(rc = pdst(pc, &ops[0], 0, &in->a[0]))) rc = src(pc, &ops[1], t, 1, &in->a[1]);
  }
  return rc;
}

/* selp (a predicate picks) and slct (a number's sign picks) */
static int dec_select(emu_parse_ctx *pc, int op, mods *mp, emu_operand *ops, int nops, emu_insn *in) {
  int rc = 0;
  float_flags(in, mp);
  if ((rc = check_rest(pc, mp))) return rc;
  if (op == OP_SELP) {
    int t = T_NONE, neg = 0;
    if ((rc = one_type(pc, mp, &t)) || (rc = nops_is(pc, nops, 4))) return rc;
    in->t = (uint8_t)t;
    if (t == T_PRED) {
      rc = dlcemu_pc_unsupported(pc, "selp.pred");
      return rc;
    }
    if ((rc = dst(pc, &ops[0], 0, &in->a[0])) || (rc = src(pc, &ops[1], t, 1, &in->a[1])) ||
        (rc = src(pc, &ops[2], t, 2, &in->a[2])) || (rc = psrc(pc, &ops[3], 3, &in->a[3], &neg)))
      return rc;
    if (neg) in->flags |= IF_NEGB;
  } else {
    if (mp->ntypes != 2) {
      rc = dlcemu_pc_error(pc, "slct needs two types");
      return rc;
    }
    if ((rc = nops_is(pc, nops, 4))) return rc;
    in->t = (uint8_t)mp->types[0];
    in->t2 = (uint8_t)mp->types[1];
    if (in->t2 != T_S32 && in->t2 != T_F32) {
      rc = dlcemu_pc_unsupported(pc, "slct selector type");
      return rc;
    }
    if ((rc = dst(pc, &ops[0], 0, &in->a[0])) || (rc = src(pc, &ops[1], in->t, 1, &in->a[1])) ||
        (rc = src(pc, &ops[2], in->t, 2, &in->a[2])) || (rc = src(pc, &ops[3], in->t2, 3, &in->a[3])))
      return rc;
  }
  return rc;
}

/* cvta: a state space and .u32/.u64 */
static int dec_cvta(emu_parse_ctx *pc, int op, mods *mp, emu_operand *ops, int nops, emu_insn *in) {
  int rc = 0;
  int to = take(mp, "to");
  int t = T_NONE;
  if ((rc = check_rest(pc, mp)) || (rc = one_type(pc, mp, &t)) || (rc = nops_is(pc, nops, 2))) return rc;
  if (mp->space < 0 || (t != T_U32 && t != T_U64)) {
    rc = dlcemu_pc_error(pc, "cvta needs a state space and .u32/.u64");
    return rc;
  }
  in->t = (uint8_t)t;
  in->space = (uint8_t)mp->space;
  if (to) in->flags |= IF_TO;
  if (!(rc = dst(pc, &ops[0], 0, &in->a[0]))) rc = src(pc, &ops[1], t, 1, &in->a[1]);
  return rc;
}

/* isspacep: a state space */
static int dec_isspacep(emu_parse_ctx *pc, int op, mods *mp, emu_operand *ops, int nops, emu_insn *in) {
  int rc = 0;
  if ((rc = check_rest(pc, mp)) || (rc = nops_is(pc, nops, 2))) return rc;
  if (mp->space < 0) {
    rc = dlcemu_pc_error(pc, "isspacep needs a state space");
    return rc;
  }
  in->space = (uint8_t)mp->space;
  if (!(rc = pdst(pc, &ops[0], 0, &in->a[0]))) rc = src(pc, &ops[1], T_U64, 1, &in->a[1]);
  return rc;
}

/* membar and fence: no effect here, but fence.proxy.async */
static int dec_fence(emu_parse_ctx *pc, int op, mods *mp, emu_operand *ops, int nops, emu_insn *in) {
  int rc = 0;
  if (op == OP_FENCE && take(mp, "proxy")) {
    /* fence.proxy.async{.global, .shared::cta, .shared::cluster} */
    if (!take(mp, "async")) {
      rc = dlcemu_pc_unsupported(pc, "proxy fence other than .proxy.async");
      return rc;
    }
    take(mp, "shared::cluster");
    in->op = OP_FENCE_PROXY_ASYNC;
    in->cls = DLCEMU_CLASS_OTHER;
    rc = check_rest(pc, mp);
    return rc;
  }
  if (op == OP_FENCE && take(mp, "proxy::async")) {
    rc = dlcemu_pc_unsupported(pc, "fence.proxy::async");
    return rc;
  }
  take(mp, "mbarrier_init"); /* fence.mbarrier_init.release.cluster: mbarrier.init is visible at once here */
  take(mp, "gl");
  take(mp, "sys");
  rc = check_rest(pc, mp);
  return rc;
}

/* createpolicy: an L2 policy, 0 here (a mov) */
static int dec_createpolicy(emu_parse_ctx *pc, int op, mods *mp, emu_operand *ops, int nops, emu_insn *in) {
  int rc = 0;
  /* createpolicy.fractional/range.L2::evict_*.b64 d, ... : the policy is 0 */
  for (int i = 0; i < mp->nrest; i++)
    if (!strcmp(mp->rest[i], "fractional") || !strcmp(mp->rest[i], "range") || !strcmp(mp->rest[i], "cvt") ||
        !strncmp(mp->rest[i], "L2::", 4))
      mp->used[i] = 1;
  if ((rc = check_rest(pc, mp))) return rc;
  if (nops < 1) {
    rc = dlcemu_pc_error(pc, "createpolicy needs a destination");
    return rc;
  }
  in->op = OP_MOV;
  in->t = T_B64;
  if (!(rc = dst(pc, &ops[0], 0, &in->a[0]))) in->a[1] = dlcemu_pc_const(pc, 0);
  return rc;
}

/* cp.async.bulk.commit_group and .wait_group (.read) */
static int dec_bulk_group(emu_parse_ctx *pc, int op, mods *mp, emu_operand *ops, int nops, emu_insn *in) {
  int rc = 0;
  if (op == OP_BULK_WAIT && take(mp, "read")) in->sub = 1;
  if ((rc = check_rest(pc, mp)) || (rc = nops_is(pc, nops, op == OP_BULK_WAIT))) return rc;
  if (op == OP_BULK_WAIT) {
    if (ops[0].kind != OPD_IMM || ops[0].imm_kind != IMM_INT || ops[0].ival < 0 || ops[0].ival > 63)
      rc = bad_operand(pc, 0, "an immediate group count in 0..63");
    else in->imm = ops[0].ival;
  }
  return rc;
}

/* The opcode's dot-separated parts ("ld", "global", "v4", "f32"), in
 * buf (of `cap` bytes); how many, at most 24. */
static int opcode_parts(const char *opcode, char *buf, size_t cap, char *parts[24]) {
  int np = 0;
  snprintf(buf, cap, "%s", opcode);
  for (char *p = buf; *p && np < 24;) {
    parts[np++] = p;
    char *d = strchr(p, '.');
    if (!d) break;
    *d = 0;
    p = d + 1;
  }
  return np;
}

int dlcemu_decode(emu_parse_ctx *pc, const char *opcode, emu_operand *ops, int nops, emu_insn *in) {
  char buf[128];
  char *parts[24];
  int np = opcode_parts(opcode, buf, sizeof buf, parts);
  int used = 0;
  int op = find_base(parts, np, &used);
  if (op < 0) return dlcemu_pc_unsupported(pc, "unknown opcode");
  mods m;
  classify(&m, parts + used, np - used);
  in->op = (uint16_t)op;
  in->cls = (uint8_t)op_class[op];
  in->guard = SLOT_NONE;
  for (int i = 0; i < 6; i++) in->a[i] = REF_NONE;
  int rc = 0;
  switch (op) {
  case OP_ADD: case OP_SUB: case OP_MUL: case OP_MAD: case OP_MUL24: case OP_MAD24: case OP_SAD:
  case OP_DIV: case OP_REM: case OP_ABS: case OP_NEG: case OP_MIN: case OP_MAX: case OP_POPC:
  case OP_CLZ: case OP_BFIND: case OP_BREV: case OP_BFE: case OP_BFI: case OP_PRMT: case OP_SHF:
  case OP_SHL: case OP_SHR: case OP_AND: case OP_OR: case OP_XOR: case OP_NOT: case OP_CNOT:
  case OP_LOP3: case OP_DP4A: case OP_DP2A: case OP_ADDC: case OP_SUBC: case OP_MADC:
  case OP_COPYSIGN: case OP_FMA: case OP_RCP: case OP_SQRT: case OP_RSQRT: case OP_SIN: case OP_COS:
  case OP_LG2: case OP_EX2: case OP_TANH: case OP_FNS: case OP_BMSK:
    rc = dec_arith_checked(pc, op, &m, ops, nops, in);
    break;
  case OP_TESTP:
    rc = dec_testp(pc, op, &m, ops, nops, in);
    break;
  case OP_SET:
  case OP_SETP:
    rc = dec_setp(pc, op, &m, ops, nops, in);
    break;
  case OP_SELP:
  case OP_SLCT:
    rc = dec_select(pc, op, &m, ops, nops, in);
    break;
  case OP_MOV:
    rc = dec_mov(pc, &m, ops, nops, in);
    break;
  case OP_CVT:
    rc = dec_cvt(pc, &m, ops, nops, in);
    break;
  case OP_CVTA:
    rc = dec_cvta(pc, op, &m, ops, nops, in);
    break;
  case OP_ISSPACEP:
    rc = dec_isspacep(pc, op, &m, ops, nops, in);
    break;
  case OP_LD:
  case OP_LDU:
  case OP_ST:
    rc = dec_mem(pc, op, &m, ops, nops, in);
    break;
  case OP_PREFETCH:
  case OP_PREFETCHU:
    take(&m, "L1");
    take(&m, "L2");
    in->op = OP_NOP;
    break;
  case OP_ATOM:
  case OP_RED:
    rc = dec_atom(pc, op, &m, ops, nops, in);
    break;
  case OP_BRA:
    if ((rc = check_rest(pc, &m)) || (rc = nops_is(pc, nops, 1))) break;
    if (ops[0].kind != OPD_LABEL) rc = dlcemu_pc_unsupported(pc, "branch target that is not a label");
    break;
  case OP_CALL:
    rc = dec_call(pc, &m, ops, nops, in);
    break;
  case OP_RET:
  case OP_EXIT:
  case OP_TRAP:
  case OP_BRKPT:
    if (!(rc = check_rest(pc, &m))) rc = nops_is(pc, nops, 0);
    break;
  case OP_BAR:
  case OP_BARRIER:
    if (take(&m, "cluster")) {
      rc = dlcemu_pc_unsupported(pc, "cluster barrier");
      break;
    }
    rc = dec_bar(pc, op, &m, ops, nops, in);
    break;
  case OP_MEMBAR:
  case OP_FENCE:
    rc = dec_fence(pc, op, &m, ops, nops, in);
    break;
  case OP_NANOSLEEP:
    if ((rc = check_rest(pc, &m)) || (rc = nops_is(pc, nops, 1))) break;
    rc = src(pc, &ops[0], T_U32, 0, &in->a[0]);
    break;
  case OP_PMEVENT:
    in->op = OP_NOP;
    break;
  case OP_CREATEPOLICY:
    rc = dec_createpolicy(pc, op, &m, ops, nops, in);
    break;
  case OP_GRIDDEP:
    take(&m, "wait");
    take(&m, "launch_dependents");
    rc = check_rest(pc, &m);
    in->op = OP_NOP;
    break;
  case OP_SHFL: case OP_VOTE: case OP_MATCH: case OP_REDUX: case OP_ACTIVEMASK: case OP_BAR_WARP:
  case OP_ELECT:
    rc = dec_warp(pc, op, &m, ops, nops, in);
    break;
  case OP_WG_FENCE: case OP_WG_COMMIT: case OP_WG_WAIT: case OP_SETMAXNREG:
    rc = dec_warpgroup(pc, op, &m, ops, nops, in);
    break;
  case OP_WGMMA:
    rc = dec_wgmma(pc, &m, ops, nops, in);
    break;
  case OP_MMA:
    rc = dec_mma(pc, &m, ops, nops, in);
    break;
  case OP_LDMATRIX:
  case OP_STMATRIX:
    rc = dec_matrix(pc, op, &m, ops, nops, in);
    break;
  case OP_CP_ASYNC: case OP_CP_COMMIT: case OP_CP_WAIT: case OP_CP_WAIT_ALL:
    rc = dec_cp_async(pc, op, &m, ops, nops, in);
    break;
  case OP_CP_BULK_TENSOR:
    rc = dec_bulk_tensor(pc, &m, ops, nops, in);
    break;
  case OP_BULK_COMMIT:
  case OP_BULK_WAIT:
    rc = dec_bulk_group(pc, op, &m, ops, nops, in);
    break;
  case OP_MBAR_INIT: case OP_MBAR_INVAL: case OP_MBAR_ARRIVE: case OP_MBAR_EXPECT_TX: case OP_MBAR_COMPLETE_TX:
  case OP_MBAR_TEST_WAIT: case OP_MBAR_TRY_WAIT:
    rc = dec_mbarrier(pc, op, &m, ops, nops, in);
    break;
  default:
    rc = dlcemu_pc_unsupported(pc, "opcode");
    break;
  }
  if (!rc && in->cls == CLS_ARITH) in->cls = (uint8_t)class_for_type(in->t);
  if (!rc) in->rmask = reg_mask(in);
  if (!rc) rc = arch_check(pc, in);
  return rc;
}
