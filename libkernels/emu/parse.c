/*
 * parse.c: PTX text -> emu_module.
 *
 * A hand-written lexer feeds a recursive-descent parser for the subset of PTX
 * that nvcc 12.8-13.x emits: module directives (.version, .target,
 * .address_size, .file, .section), variables (.global/.const/.shared with
 * alignment, arrays and initializers, extern .shared), .entry and .func with
 * .param lists and performance directives, and bodies with .reg ranges,
 * nested { } scopes (inline asm declares registers inside them), labels,
 * .loc, call sequences, predicates and every operand form.  Names are resolved
 * while reading, innermost scope first; each instruction is handed to
 * dlcemu_decode() at once, so an unsupported opcode stops the load with its line.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "mem.h"
#include "parse.h"
#include "util.h"

/* ------------------------------------------------------------------ lexer */
enum { TK_EOF, TK_WORD, TK_NUM, TK_STR, TK_PUNCT };

typedef struct token {
  int kind;
  const char *s;
  int len;
  int line;
} token;

typedef struct lexer {
  const char *p;
  int line;
} lexer;

static int is_word_start(int c) { return isalpha(c) || c == '_' || c == '$' || c == '%' || c == '.'; }
static int is_word_char(int c) { return isalnum(c) || c == '_' || c == '$' || c == '%' || c == '.'; }

static void skip_space(lexer *L) {
  for (;;) {
    char c = *L->p;
    if (c == '\n') {
      L->line++;
      L->p++;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      L->p++;
    } else if (c == '/' && L->p[1] == '/') {
      while (*L->p && *L->p != '\n') L->p++;
    } else if (c == '/' && L->p[1] == '*') {
      L->p += 2;
      while (*L->p && !(L->p[0] == '*' && L->p[1] == '/')) {
        if (*L->p == '\n') L->line++;
        L->p++;
      }
      if (*L->p) L->p += 2;
    } else {
      break;
    }
  }
}

static token lex(lexer *L) {
  skip_space(L);
  token t = {TK_EOF, L->p, 0, L->line};
  const char *p = L->p;
  unsigned char c = (unsigned char)*p;
  if (!c) return t;
  if (isdigit(c)) {
    t.kind = TK_NUM;
    if (c == '0' && (p[1] == 'f' || p[1] == 'F' || p[1] == 'd' || p[1] == 'D' || p[1] == 'x' ||
                     p[1] == 'X' || p[1] == 'b' || p[1] == 'B') &&
        isxdigit((unsigned char)p[2])) {
      p += 2;
      while (isxdigit((unsigned char)*p)) p++;
    } else {
      while (isdigit((unsigned char)*p)) p++;
      if (*p == '.' && isdigit((unsigned char)p[1])) {
        p++;
        while (isdigit((unsigned char)*p)) p++;
      }
      if ((*p == 'e' || *p == 'E') &&
          (isdigit((unsigned char)p[1]) ||
           ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
        p += 2;
        while (isdigit((unsigned char)*p)) p++;
      }
    }
    if (*p == 'U' || *p == 'u') p++;
  } else if (is_word_start(c)) {
    t.kind = TK_WORD;
    for (;;) {
      if (is_word_char((unsigned char)*p)) {
        p++;
      } else if (p[0] == ':' && p[1] == ':' && is_word_char((unsigned char)p[2])) {
        p += 2;
      } else {
        break;
      }
    }
  } else if (c == '"') {
    t.kind = TK_STR;
    p++;
    while (*p && *p != '"') {
      if (*p == '\\' && p[1]) p++;
      if (*p == '\n') L->line++;
      p++;
    }
    if (*p == '"') p++;
  } else {
    t.kind = TK_PUNCT;
    p++;
  }
  t.len = (int)(p - L->p);
  L->p = p;
  return t;
}

static int tok_is(const token *t, const char *s) {
  return t->kind != TK_EOF && (int)strlen(s) == t->len && memcmp(t->s, s, (size_t)t->len) == 0;
}
static int tok_punct(const token *t, char c) { return t->kind == TK_PUNCT && t->s[0] == c; }

/* ----------------------------------------------------------- scoped names */
enum { NE_REG, NE_REGRANGE, NE_PRED, NE_PREDRANGE, NE_SYM, NE_LABEL };

typedef struct name_ent {
  const char *name;
  int len;
  int kind;
  int idx;      /* register / predicate base index, symbol index, instruction index */
  int count;    /* range size */
  int type;
  int next;     /* next entry in the bucket */
} name_ent;

typedef struct name_map {
  name_ent *ents;
  int nents, capents;
  int *heads;   /* bucket heads: entry index, -1 empty */
  int nbuckets;
} name_map;

static unsigned hash_name(const char *s, int len) {
  unsigned h = 2166136261u;
  for (int i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static int map_init(name_map *m, int nbuckets) {
  memset(m, 0, sizeof *m);
  m->heads = malloc(sizeof(int) * (size_t)nbuckets);
  if (!m->heads) return DLCEMU_ERROR_OUT_OF_MEMORY;
  for (int i = 0; i < nbuckets; i++) m->heads[i] = -1;
  m->nbuckets = nbuckets;
  return 0;
}

static void map_free(name_map *m) {
  free(m->ents);
  free(m->heads);
  memset(m, 0, sizeof *m);
}

static int map_add(name_map *m, const char *name, int len, int kind, int idx, int count, int type) {
  if (dlcemu_grow(&m->ents, &m->capents, m->nents + 1, sizeof(name_ent)))
    return DLCEMU_ERROR_OUT_OF_MEMORY;
  unsigned b = hash_name(name, len) % (unsigned)m->nbuckets;
  name_ent *e = &m->ents[m->nents];
  e->name = name;
  e->len = len;
  e->kind = kind;
  e->idx = idx;
  e->count = count;
  e->type = type;
  e->next = m->heads[b];
  m->heads[b] = m->nents++;
  return 0;
}

static name_ent *map_find(name_map *m, const char *name, int len) {
  if (!m->heads) return NULL;
  unsigned b = hash_name(name, len) % (unsigned)m->nbuckets;
  for (int i = m->heads[b]; i >= 0; i = m->ents[i].next)
    if (m->ents[i].len == len && memcmp(m->ents[i].name, name, (size_t)len) == 0) return &m->ents[i];
  return NULL;
}

/* drop the entries added after mark (a scope's names) */
static void map_pop(name_map *m, int mark) {
  while (m->nents > mark) {
    name_ent *e = &m->ents[m->nents - 1];
    unsigned b = hash_name(e->name, e->len) % (unsigned)m->nbuckets;
    m->heads[b] = e->next; /* the newest entry is always its bucket's head */
    m->nents--;
  }
}

/* -------------------------------------------------------------- the parser */
typedef struct label_fix {
  int insn;
  const char *name;
  int len;
  int line;
} label_fix;

typedef struct parser {
  emu_module *m;
  lexer L;
  token tok;          /* current token */
  name_map modnames;  /* module scope: variables and functions */
  name_map names;     /* function scopes: registers, variables */
  name_map labels;    /* function labels */
  label_fix *fixes;
  int nfixes, capfixes;
  int func;           /* function being parsed, -1 at module scope */
  int loc_file, loc_line;
  int err;
} parser;

static void advance(parser *P) { P->tok = lex(&P->L); }

static int perr(parser *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(parser *P, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  P->err = dlcemu_fail(DLCEMU_ERROR_PARSE, "PTX parse error at line %d: %s", P->tok.line, msg);
  return P->err;
}

static int punsupported(parser *P, int line, const char *what, const char *s, int len) {
  P->err = dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "PTX line %d: unsupported %s '%.*s'", line, what, len, s);
  return P->err;
}

static int expect_punct(parser *P, char c) {
  if (!tok_punct(&P->tok, c)) {
    if (P->tok.kind == TK_EOF) return perr(P, "expected '%c', found end of input", c);
    return perr(P, "expected '%c', found '%.*s'", c, P->tok.len, P->tok.s);
  }
  advance(P);
  return 0;
}

static int parse_uint(parser *P, const token *t, uint64_t *out) {
  if (t->kind != TK_NUM) return perr(P, "expected a number, found '%.*s'", t->len, t->s);
  char buf[80];
  int n = t->len < 79 ? t->len : 79;
  memcpy(buf, t->s, (size_t)n);
  buf[n] = 0;
  if (n && (buf[n - 1] == 'U' || buf[n - 1] == 'u')) buf[--n] = 0;
  char *end;
  if (buf[0] == '0' && (buf[1] == 'b' || buf[1] == 'B'))
    *out = strtoull(buf + 2, &end, 2);
  else
    *out = strtoull(buf, &end, 0);
  if (*end) return perr(P, "bad integer '%s'", buf);
  return 0;
}

/* a numeric literal token as an immediate operand */
static int parse_number(parser *P, const token *t, emu_operand *o) {
  char buf[80];
  int n = t->len < 79 ? t->len : 79;
  memcpy(buf, t->s, (size_t)n);
  buf[n] = 0;
  o->kind = OPD_IMM;
  if (buf[0] == '0' && (buf[1] == 'f' || buf[1] == 'F')) {
    o->imm_kind = IMM_F32;
    o->ival = (int64_t)strtoull(buf + 2, NULL, 16);
    return 0;
  }
  if (buf[0] == '0' && (buf[1] == 'd' || buf[1] == 'D')) {
    o->imm_kind = IMM_F64;
    o->ival = (int64_t)strtoull(buf + 2, NULL, 16);
    return 0;
  }
  if (strchr(buf, '.') || ((buf[1] != 'x' && buf[1] != 'X') && strpbrk(buf, "eE"))) {
    o->imm_kind = IMM_F64;
    o->fval = strtod(buf, NULL);
    double d = o->fval;
    uint64_t u = 0;
    memcpy(&u, &d, 8);
    o->ival = (int64_t)u;
    return 0;
  }
  uint64_t v = 0;
  if (parse_uint(P, t, &v)) return P->err;
  o->imm_kind = IMM_INT;
  o->ival = (int64_t)v;
  return 0;
}

/* ---------------------------------------------------------- symbol tables */
static int add_sym(parser *P, const char *name, int len, int kind, int owner) {
  emu_module *m = P->m;
  if (dlcemu_grow(&m->syms, &m->capsyms, m->nsyms + 1, sizeof(emu_sym))) return -1;
  emu_sym *s = &m->syms[m->nsyms];
  memset(s, 0, sizeof *s);
  s->name = malloc((size_t)len + 1);
  if (!s->name) return -1;
  memcpy(s->name, name, (size_t)len);
  s->name[len] = 0;
  s->kind = kind;
  s->owner = owner;
  s->func = -1;
  return m->nsyms++;
}

static uint64_t align_up(uint64_t x, uint64_t a) { return a ? (x + a - 1) / a * a : x; }

/* special registers by name */
static const struct {
  const char *name;
  int id;
} sreg_names[] = {
  {"%tid.x", SR_TID_X}, {"%tid.y", SR_TID_Y}, {"%tid.z", SR_TID_Z},
  {"%ntid.x", SR_NTID_X}, {"%ntid.y", SR_NTID_Y}, {"%ntid.z", SR_NTID_Z},
  {"%ctaid.x", SR_CTAID_X}, {"%ctaid.y", SR_CTAID_Y}, {"%ctaid.z", SR_CTAID_Z},
  {"%nctaid.x", SR_NCTAID_X}, {"%nctaid.y", SR_NCTAID_Y}, {"%nctaid.z", SR_NCTAID_Z},
  {"%laneid", SR_LANEID}, {"%warpid", SR_WARPID}, {"%nwarpid", SR_NWARPID},
  {"%smid", SR_SMID}, {"%nsmid", SR_NSMID}, {"%gridid", SR_GRIDID},
  {"%lanemask_eq", SR_LANEMASK_EQ}, {"%lanemask_lt", SR_LANEMASK_LT},
  {"%lanemask_le", SR_LANEMASK_LE}, {"%lanemask_gt", SR_LANEMASK_GT},
  {"%lanemask_ge", SR_LANEMASK_GE},
  {"%dynamic_smem_size", SR_DYN_SMEM}, {"%total_smem_size", SR_TOTAL_SMEM},
  {"%cluster_ctaid.x", SR_CLUSTER_CTAID_X}, {"%cluster_ctaid.y", SR_CLUSTER_CTAID_Y},
  {"%cluster_ctaid.z", SR_CLUSTER_CTAID_Z}, {"%cluster_nctaid.x", SR_CLUSTER_NCTAID_X},
  {"%cluster_nctaid.y", SR_CLUSTER_NCTAID_Y}, {"%cluster_nctaid.z", SR_CLUSTER_NCTAID_Z},
  {"%clusterid.x", SR_CLUSTERID_X}, {"%clusterid.y", SR_CLUSTERID_Y},
  {"%clusterid.z", SR_CLUSTERID_Z}, {"%nclusterid.x", SR_NCLUSTERID_X},
  {"%nclusterid.y", SR_NCLUSTERID_Y}, {"%nclusterid.z", SR_NCLUSTERID_Z},
  {"%cluster_ctarank", SR_CLUSTER_CTARANK}, {"%cluster_nctarank", SR_CLUSTER_NCTARANK},
  {"%is_explicit_cluster", SR_IS_EXPLICIT_CLUSTER},
  {"%clock", SR_CLOCK}, {"%clock_hi", SR_CLOCK_HI}, {"%clock64", SR_CLOCK64},
  {"%globaltimer", SR_GLOBALTIMER}, {"%globaltimer_lo", SR_GLOBALTIMER_LO},
  {"%globaltimer_hi", SR_GLOBALTIMER_HI},
};

static int find_sreg(const char *s, int len) {
  for (size_t i = 0; i < sizeof sreg_names / sizeof sreg_names[0]; i++)
    if ((int)strlen(sreg_names[i].name) == len && memcmp(sreg_names[i].name, s, (size_t)len) == 0)
      return sreg_names[i].id;
  return -1;
}

/* resolve a name in the function scopes (registers, ranges, variables); an
 * exact declaration and a %r<N> range can both match: the innermost (the
 * later entry) wins */
static int resolve_local(parser *P, const char *s, int len, emu_operand *o) {
  name_ent *exact = map_find(&P->names, s, len), *range = NULL;
  long n = 0;
  int k = len;
  while (k > 0 && isdigit((unsigned char)s[k - 1])) k--;
  if (k != len && k != 0 && !(len - k > 1 && s[k] == '0')) {
    n = strtol(s + k, NULL, 10);
    range = map_find(&P->names, s, k);
    if (range && !((range->kind == NE_REGRANGE || range->kind == NE_PREDRANGE) && n < range->count)) range = NULL;
  }
  if (exact && range && range > exact) exact = NULL;
  if (exact) {
    switch (exact->kind) {
    case NE_REG:
      o->kind = OPD_REG;
      o->reg = exact->idx;
      o->rtype = exact->type;
      return 1;
    case NE_PRED:
      o->kind = OPD_PRED;
      o->reg = exact->idx;
      o->rtype = T_PRED;
      return 1;
    case NE_SYM:
      o->kind = OPD_SYM;
      o->sym = exact->idx;
      return 1;
    default:
      break;
    }
  }
  if (!range) return 0;
  o->kind = range->kind == NE_REGRANGE ? OPD_REG : OPD_PRED;
  o->reg = range->idx + (int)n;
  o->rtype = range->kind == NE_REGRANGE ? range->type : T_PRED;
  return 1;
}

static int resolve_name(parser *P, const char *s, int len, emu_operand *o) {
  if (len == 1 && s[0] == '_') {
    o->kind = OPD_SINK;
    return 1;
  }
  if (P->func >= 0 && resolve_local(P, s, len, o)) return 1;
  name_ent *e = map_find(&P->modnames, s, len);
  if (e) {
    o->kind = OPD_SYM;
    o->sym = e->idx;
    return 1;
  }
  if (s[0] == '%') {
    int id = find_sreg(s, len);
    if (id >= 0) {
      o->kind = OPD_SREG;
      o->reg = id;
      return 1;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- operands */
static void free_operand(emu_operand *o) {
  for (int i = 0; i < o->nelems; i++) free_operand(&o->elems[i]);
  free(o->elems);
  o->elems = NULL;
  o->nelems = 0;
}

static int parse_operand(parser *P, emu_operand *o);

static int parse_list(parser *P, emu_operand *o, char close) {
  int cap = 0;
  advance(P); /* the opening bracket */
  while (!tok_punct(&P->tok, close)) {
    if (P->tok.kind == TK_EOF) return perr(P, "unterminated operand list");
    if (dlcemu_grow(&o->elems, &cap, o->nelems + 1, sizeof(emu_operand)))
      return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    emu_operand *e = &o->elems[o->nelems++];
    memset(e, 0, sizeof *e);
    if (parse_operand(P, e)) return P->err;
    if (tok_punct(&P->tok, ',')) advance(P);
    else if (!tok_punct(&P->tok, close))
      return perr(P, "expected ',' or '%c' in operand list, found '%.*s'", close, P->tok.len, P->tok.s);
  }
  advance(P);
  return 0;
}

static int parse_address(parser *P, emu_operand *o) {
  o->kind = OPD_ADDR;
  o->base_reg = -1;
  o->sym = -1;
  advance(P); /* [ */
  token t = P->tok;
  if (t.kind == TK_WORD) {
    emu_operand r;
    memset(&r, 0, sizeof r);
    if (!resolve_name(P, t.s, t.len, &r)) return perr(P, "unknown name '%.*s' in address", t.len, t.s);
    if (r.kind == OPD_REG) {
      o->base_reg = r.reg;
      o->rtype = r.rtype;
    } else if (r.kind == OPD_SYM) {
      o->sym = r.sym;
    } else {
      return perr(P, "'%.*s' cannot be an address base", t.len, t.s);
    }
    advance(P);
  } else if (t.kind == TK_NUM) {
    uint64_t v = 0;
    if (parse_uint(P, &t, &v)) return P->err;
    o->ival = (int64_t)v;
    advance(P);
  } else {
    return perr(P, "bad address operand");
  }
  while (tok_punct(&P->tok, '+') || tok_punct(&P->tok, '-')) {
    int neg = tok_punct(&P->tok, '-');
    advance(P);
    if (tok_punct(&P->tok, '-')) {
      neg = !neg;
      advance(P);
    }
    uint64_t v = 0;
    if (parse_uint(P, &P->tok, &v)) return P->err;
    o->ival += neg ? -(int64_t)v : (int64_t)v;
    advance(P);
  }
  if (tok_punct(&P->tok, ',')) { /* [tensorMap, {coordinates}] of cp.async.bulk.tensor */
    advance(P);
    if (!tok_punct(&P->tok, '{')) return perr(P, "expected '{' after ',' in an address");
    if (parse_list(P, o, '}')) return P->err;
  }
  return expect_punct(P, ']');
}

static int parse_operand(parser *P, emu_operand *o) {
  o->reg2 = -1;
  o->base_reg = -1;
  o->sym = -1;
  token t = P->tok;
  if (tok_punct(&t, '!')) {
    advance(P);
    if (parse_operand(P, o)) return P->err;
    if (o->kind != OPD_PRED) return perr(P, "'!' applies to predicates only");
    o->neg = 1;
    return 0;
  }
  if (tok_punct(&t, '-')) {
    advance(P);
    if (P->tok.kind != TK_NUM) return perr(P, "expected a number after '-'");
    if (parse_number(P, &P->tok, o)) return P->err;
    if (o->imm_kind == IMM_INT) {
      o->ival = -o->ival;
    } else if (o->imm_kind == IMM_F32) {
      o->ival ^= 0x80000000ll;
    } else {
      o->ival = (int64_t)((uint64_t)o->ival ^ 0x8000000000000000ull);
      o->fval = -o->fval;
    }
    advance(P);
    return 0;
  }
  if (tok_punct(&t, '[')) return parse_address(P, o);
  if (tok_punct(&t, '{')) {
    o->kind = OPD_VEC;
    return parse_list(P, o, '}');
  }
  if (tok_punct(&t, '(')) {
    o->kind = OPD_LIST;
    return parse_list(P, o, ')');
  }
  if (t.kind == TK_NUM) {
    if (parse_number(P, &t, o)) return P->err;
    advance(P);
    return 0;
  }
  if (t.kind != TK_WORD) return perr(P, "unexpected '%.*s' in operand", t.len, t.s);
  if (!resolve_name(P, t.s, t.len, o)) {
    if (t.s[0] == '%') return perr(P, "unknown register '%.*s'", t.len, t.s);
    o->kind = OPD_LABEL;
    o->name = t.s;
    o->name_len = t.len;
  }
  advance(P);
  if (o->kind == OPD_SYM && (tok_punct(&P->tok, '+'))) {
    advance(P);
    uint64_t v = 0;
    if (parse_uint(P, &P->tok, &v)) return P->err;
    o->ival = (int64_t)v;
    advance(P);
  }
  if (tok_punct(&P->tok, '|')) {
    advance(P);
    emu_operand q;
    memset(&q, 0, sizeof q);
    if (P->tok.kind != TK_WORD || !resolve_name(P, P->tok.s, P->tok.len, &q) || q.kind != OPD_PRED)
      return perr(P, "expected a predicate after '|'");
    o->reg2 = q.reg;
    advance(P);
  }
  return 0;
}

/* ------------------------------------------------------------- declarations */
typedef struct decl {
  int space;          /* SP_* or -1 */
  int is_reg;
  int align;
  int vec;
  int type;
  int is_extern;
  int ptr_attrs;
} decl;

/* parse the directive words of a declaration: .reg .shared .align 8 .v2 .b32 ... */
static int parse_decl_words(parser *P, decl *d) {
  memset(d, 0, sizeof *d);
  d->space = -1;
  d->vec = 1;
  while (P->tok.kind == TK_WORD && P->tok.s[0] == '.') {
    /* a token may hold several dotted words (".reg.b32") */
    const char *s = P->tok.s;
    int len = P->tok.len;
    int i = 0;
    int stop = 0;
    while (i < len) {
      int j = i + 1;
      while (j < len && s[j] != '.') j++;
      const char *w = s + i + 1;
      int wl = j - i - 1;
      char buf[32];
      if (wl > 31) wl = 31;
      memcpy(buf, w, (size_t)wl);
      buf[wl] = 0;
      int ty = dlcemu_type_from_name(buf);
      if (!strcmp(buf, "reg")) d->is_reg = 1;
      else if (!strcmp(buf, "shared")) d->space = SP_SHARED;
      else if (!strcmp(buf, "global")) d->space = d->space == SP_KPARAM ? SP_KPARAM : SP_GLOBAL;
      else if (!strcmp(buf, "const")) d->space = d->space == SP_KPARAM ? SP_KPARAM : SP_CONST;
      else if (!strcmp(buf, "local")) d->space = d->space == SP_KPARAM ? SP_KPARAM : SP_LOCAL;
      else if (!strcmp(buf, "param")) d->space = SP_KPARAM;
      else if (!strcmp(buf, "extern")) d->is_extern = 1;
      else if (!strcmp(buf, "visible") || !strcmp(buf, "weak") || !strcmp(buf, "common")) {
      } else if (!strcmp(buf, "ptr")) d->ptr_attrs = 1;
      else if (!strcmp(buf, "align")) {
        advance(P);
        uint64_t a = 0;
        if (parse_uint(P, &P->tok, &a)) return P->err;
        if (a == 0 || (a & (a - 1)) || a > 4096) return perr(P, "bad alignment %llu", (unsigned long long)a);
        d->align = (int)a;
        stop = 1;
      } else if (!strcmp(buf, "v2")) d->vec = 2;
      else if (!strcmp(buf, "v4")) d->vec = 4;
      else if (!strcmp(buf, "v8")) d->vec = 8;
      else if (ty != T_NONE) d->type = ty;
      else if (!strcmp(buf, "shared::cta")) d->space = SP_SHARED;
      else return punsupported(P, P->tok.line, "declaration attribute", s + i, j - i);
      if (stop) break;
      i = j;
    }
    advance(P);
  }
  return 0;
}

/* [N][M]... after a variable name; unsized [] gives *unsized = 1 */
static int parse_dims(parser *P, uint64_t *count, int *unsized) {
  *count = 1;
  *unsized = 0;
  while (tok_punct(&P->tok, '[')) {
    advance(P);
    if (tok_punct(&P->tok, ']')) {
      *unsized = 1;
      advance(P);
      continue;
    }
    uint64_t n = 0;
    if (parse_uint(P, &P->tok, &n)) return P->err;
    *count *= n;
    advance(P);
    if (expect_punct(P, ']')) return P->err;
  }
  return 0;
}

/* = { v, v, ... } or = v, written into buf (elements of elem_size bytes) */
static int parse_initializer(parser *P, int type, uint8_t **buf, uint64_t *nelem) {
  unsigned es = dlcemu_type_size(type);
  uint64_t cap = 0, n = 0;
  uint8_t *b = NULL;
  int depth = 0;
  if (tok_punct(&P->tok, '{')) {
    depth = 1;
    advance(P);
  }
  for (;;) {
    if (depth && tok_punct(&P->tok, '{')) { /* nested braces of multi-dim arrays */
      depth++;
      advance(P);
      continue;
    }
    if (depth && tok_punct(&P->tok, '}')) {
      depth--;
      advance(P);
      if (depth == 0) break;
      if (tok_punct(&P->tok, ',')) advance(P);
      continue;
    }
    emu_operand v;
    memset(&v, 0, sizeof v);
    if (parse_operand(P, &v)) {
      free(b);
      return P->err;
    }
    uint64_t bits = 0;
    if (v.kind == OPD_IMM) {
      if (type == T_F32 && v.imm_kind == IMM_F64) {
        float f = (float)v.fval;
        memcpy(&bits, &f, 4);
      } else if (type == T_F64 && v.imm_kind == IMM_F32) {
        uint32_t u = (uint32_t)v.ival;
        float f;
        memcpy(&f, &u, 4);
        double d = f;
        memcpy(&bits, &d, 8);
      } else {
        bits = (uint64_t)v.ival;
      }
    } else if (v.kind == OPD_SYM && (P->m->syms[v.sym].kind == SYM_GLOBAL ||
                                     P->m->syms[v.sym].kind == SYM_CONST)) {
      bits = (uint64_t)(uintptr_t)P->m->syms[v.sym].host + (uint64_t)v.ival;
    } else {
      free_operand(&v);
      free(b);
      return punsupported(P, P->tok.line, "variable initializer", P->tok.s, P->tok.len);
    }
    free_operand(&v);
    if (n + 1 > cap) {
      cap = cap ? cap * 2 : 64;
      uint8_t *nb = realloc(b, cap * es);
      if (!nb) {
        free(b);
        return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
      }
      b = nb;
    }
    memcpy(b + n * es, &bits, es);
    n++;
    if (!depth) break;
    if (tok_punct(&P->tok, ',')) advance(P);
    else if (!tok_punct(&P->tok, '}')) {
      free(b);
      return perr(P, "expected ',' or '}' in initializer");
    }
  }
  *buf = b;
  *nelem = n;
  return 0;
}

/* a .global/.const/.shared/.local/.param variable after its directive words */
static int parse_var(parser *P, const decl *d, int owner, int sym_kind_override) {
  for (;;) {
    token name = P->tok;
    if (name.kind != TK_WORD) return perr(P, "expected a variable name");
    advance(P);
    uint64_t count = 0;
    int unsized;
    if (parse_dims(P, &count, &unsized)) return P->err;
    int type = d->type ? d->type : T_B8;
    unsigned es = dlcemu_type_size(type);
    if (!es) return perr(P, "variable '%.*s' has no type", name.len, name.s);
    uint64_t size = count * es * (uint64_t)d->vec;
    uint32_t align = d->align ? (uint32_t)d->align : es * (uint32_t)d->vec;
    uint8_t *init = NULL;
    uint64_t ninit = 0;
    if (tok_punct(&P->tok, '=')) {
      advance(P);
      if (parse_initializer(P, type, &init, &ninit)) return P->err;
      if (unsized) size = ninit * es;
    }
    if (size > ((uint64_t)1 << 30) || count > ((uint64_t)1 << 30)) {
      free(init);
      return punsupported(P, name.line, "variable larger than 1 GiB", name.s, name.len);
    }
    int kind;
    if (sym_kind_override >= 0) kind = sym_kind_override;
    else if (d->space == SP_GLOBAL) kind = SYM_GLOBAL;
    else if (d->space == SP_CONST) kind = SYM_CONST;
    else if (d->space == SP_SHARED) kind = (d->is_extern || (unsized && !ninit)) ? SYM_EXTERN_SHARED : SYM_SHARED;
    else if (d->space == SP_LOCAL) kind = SYM_LOCAL;
    else {
      free(init);
      return perr(P, "variable '%.*s' has no state space", name.len, name.s);
    }
    if ((kind == SYM_SHARED || kind == SYM_LOCAL) && init) {
      free(init);
      return punsupported(P, name.line, "initializer of a .shared/.local variable", name.s, name.len);
    }
    if (kind == SYM_GLOBAL && d->is_extern) {
      free(init);
      return punsupported(P, name.line, "extern .global variable", name.s, name.len);
    }
    int si = add_sym(P, name.s, name.len, kind, owner);
    if (si < 0) {
      free(init);
      return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    emu_sym *s = &P->m->syms[si];
    s->size = size;
    s->align = align;
    s->type = type;
    int rc = 0;
    if (kind == SYM_GLOBAL || kind == SYM_CONST) {
      uint64_t al = align < 256 ? 256 : align;
      uint64_t bytes = align_up(size ? size : 1, al);
      s->host = aligned_alloc(al, bytes);
      if (!s->host) rc = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
      else {
        memset(s->host, 0, bytes);
        if (init) memcpy(s->host, init, ninit * es < size ? ninit * es : size);
        rc = dlcemu_mem_register((uint64_t)(uintptr_t)s->host, size ? size : 1, kind == SYM_CONST, 0);
        if (rc) {
          free(s->host);
          s->host = NULL;
        }
      }
    } else if (kind == SYM_SHARED && owner < 0) {
      P->m->module_shared = align_up(P->m->module_shared, align);
      s->off = P->m->module_shared;
      P->m->module_shared += size;
    } else if (kind == SYM_LOCAL) {
      emu_func *f = &P->m->funcs[owner];
      f->local_bytes = align_up(f->local_bytes, align);
      s->off = f->local_bytes;
      f->local_bytes += size;
      if (align > f->local_align) f->local_align = align;
    } else if (kind == SYM_TPARAM) {
      emu_func *f = &P->m->funcs[owner];
      f->tparam_bytes = align_up(f->tparam_bytes, align);
      s->off = f->tparam_bytes;
      f->tparam_bytes += size;
      if (align > f->tparam_align) f->tparam_align = align;
    } else if (kind == SYM_SHARED) {
      emu_func *f = &P->m->funcs[owner];
      if (dlcemu_grow(&f->shared_syms, &f->capshared, f->nshared + 1, sizeof(int)))
        rc = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
      else
        f->shared_syms[f->nshared++] = si;
    }
    free(init);
    if (rc) return P->err = rc;
    name_map *map = owner < 0 ? &P->modnames : &P->names;
    if (map_add(map, name.s, name.len, NE_SYM, si, 0, type))
      return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    if (tok_punct(&P->tok, ',')) {
      advance(P);
      continue;
    }
    return expect_punct(P, ';');
  }
}

/* .reg .type %r<N>, %x, ...; */
static int parse_reg_decl(parser *P, const decl *d) {
  emu_func *f = &P->m->funcs[P->func];
  if (d->vec != 1) return punsupported(P, P->tok.line, "vector register declaration", ".v", 2);
  if (!d->type) return perr(P, ".reg without a type");
  for (;;) {
    token name = P->tok;
    if (name.kind != TK_WORD) return perr(P, "expected a register name");
    advance(P);
    int is_pred = d->type == T_PRED;
    if (tok_punct(&P->tok, '<')) {
      advance(P);
      uint64_t n = 0;
      if (parse_uint(P, &P->tok, &n)) return P->err;
      advance(P);
      if (expect_punct(P, '>')) return P->err;
      if (n > 1000000) return perr(P, "register range too large");
      int base = is_pred ? f->npreds : f->nregs;
      if (is_pred) f->npreds += (int)n;
      else f->nregs += (int)n;
      if (map_add(&P->names, name.s, name.len, is_pred ? NE_PREDRANGE : NE_REGRANGE, base, (int)n, d->type))
        return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    } else {
      int idx = is_pred ? f->npreds++ : f->nregs++;
      if (map_add(&P->names, name.s, name.len, is_pred ? NE_PRED : NE_REG, idx, 1, d->type))
        return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    if (tok_punct(&P->tok, ',')) {
      advance(P);
      continue;
    }
    return expect_punct(P, ';');
  }
}

/* ------------------------------------------------------------ instructions */
static int append_text(emu_module *m, const char *s, const char *e, uint32_t *off) {
  size_t need = (size_t)(e - s) + 2;
  while (m->npool + need > m->cappool) {
    size_t nc = m->cappool ? m->cappool * 2 : 65536;
    char *np = realloc(m->pool, nc);
    if (!np) return DLCEMU_ERROR_OUT_OF_MEMORY;
    m->pool = np;
    m->cappool = nc;
  }
  *off = (uint32_t)m->npool;
  char *d = m->pool + m->npool;
  int space = 0;
  for (const char *p = s; p < e; p++) {
    char c = *p;
    if (c == '\n' || c == '\t' || c == '\r' || c == ' ') {
      space = 1;
      continue;
    }
    if (space && d != m->pool + m->npool) *d++ = ' ';
    space = 0;
    *d++ = c;
  }
  *d++ = 0;
  m->npool = (size_t)(d - m->pool);
  return 0;
}

static int parse_instruction(parser *P) {
  emu_module *m = P->m;
  emu_func *f = &m->funcs[P->func];
  const char *start = P->tok.s;
  int line = P->tok.line;
  uint32_t guard = SLOT_NONE;
  if (tok_punct(&P->tok, '@')) {
    advance(P);
    int neg = 0;
    if (tok_punct(&P->tok, '!')) {
      neg = 1;
      advance(P);
    }
    emu_operand g;
    memset(&g, 0, sizeof g);
    if (P->tok.kind != TK_WORD || !resolve_name(P, P->tok.s, P->tok.len, &g) || g.kind != OPD_PRED)
      return perr(P, "expected a predicate after '@'");
    guard = REF_PRED | (uint32_t)g.reg | (neg ? GUARD_NEG : 0);
    advance(P);
  }
  token op = P->tok;
  if (op.kind != TK_WORD) return perr(P, "expected an instruction, found '%.*s'", op.len, op.s);
  line = op.line;
  {
    char name[128];
    int nl = op.len < 127 ? op.len : 127;
    memcpy(name, op.s, (size_t)nl);
    name[nl] = 0;
    if (!dlcemu_opcode_known(name))
      return P->err = dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "PTX line %d: unsupported instruction '%s' (unknown opcode)",
                               line, name);
  }
  advance(P);
  emu_operand ops[16];
  int nops = 0;
  int rc = 0;
  memset(ops, 0, sizeof ops);
  while (!tok_punct(&P->tok, ';')) {
    if (P->tok.kind == TK_EOF) {
      rc = perr(P, "missing ';' after '%.*s'", op.len, op.s);
      goto out;
    }
    if (nops == 16) {
      rc = perr(P, "too many operands");
      goto out;
    }
    if ((rc = parse_operand(P, &ops[nops++]))) goto out;
    if (tok_punct(&P->tok, ',')) advance(P);
    else if (!tok_punct(&P->tok, ';')) {
      rc = perr(P, "expected ',' or ';', found '%.*s'", P->tok.len, P->tok.s);
      goto out;
    }
  }
  const char *end = P->tok.s + 1;
  advance(P);
  char opname[128];
  int ol = op.len < 127 ? op.len : 127;
  memcpy(opname, op.s, (size_t)ol);
  opname[ol] = 0;
  emu_parse_ctx pc = {m, P->func, line, opname};
  emu_insn ins;
  memset(&ins, 0, sizeof ins);
  ins.sym = ins.sym2 = -1;
  if ((rc = dlcemu_decode(&pc, opname, ops, nops, &ins))) {
    P->err = rc;
    goto out;
  }
  f = &m->funcs[P->func]; /* decode may have grown arrays, not funcs; re-read anyway */
  ins.guard = guard;
  ins.line = (uint32_t)line;
  ins.loc_file = P->loc_file;
  ins.loc_line = P->loc_line;
  if (append_text(m, start, end, &ins.text)) {
    rc = P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    goto out;
  }
  if (dlcemu_grow(&f->code, &f->capcode, f->ncode + 1, sizeof(emu_insn))) {
    rc = P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    goto out;
  }
  if (ins.op == OP_BRA) {
    emu_operand *t = &ops[nops - 1];
    if (dlcemu_grow(&P->fixes, &P->capfixes, P->nfixes + 1, sizeof(label_fix))) {
      rc = P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
      goto out;
    }
    P->fixes[P->nfixes++] = (label_fix){f->ncode, t->name, t->name_len, line};
  }
  if (ins.op == OP_CALL) {
    int callee = (int)ins.a[0];
    int found = 0;
    for (int i = 0; i < f->ncallees; i++) found |= f->callees[i] == callee;
    if (!found) {
      if (dlcemu_grow(&f->callees, &f->capcallees, f->ncallees + 1, sizeof(int))) {
        rc = P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
        goto out;
      }
      f->callees[f->ncallees++] = callee;
    }
  }
  f->code[f->ncode++] = ins;
out:
  for (int i = 0; i < nops; i++) free_operand(&ops[i]);
  return rc;
}

/* ------------------------------------------------------------------ bodies */
static void skip_line(parser *P) {
  int line = P->tok.line;
  while (P->tok.kind != TK_EOF && P->tok.line == line) advance(P);
}

static int parse_body(parser *P) {
  int depth = 0;
  int marks[256];
  if (expect_punct(P, '{')) return P->err;
  marks[0] = P->names.nents;
  for (;;) {
    token t = P->tok;
    if (t.kind == TK_EOF) return perr(P, "unterminated function body");
    if (tok_punct(&t, '}')) {
      advance(P);
      if (depth == 0) break;
      map_pop(&P->names, marks[depth]);
      depth--;
      continue;
    }
    if (tok_punct(&t, '{')) {
      if (depth == 255) return perr(P, "scopes nested too deeply");
      advance(P);
      marks[++depth] = P->names.nents;
      continue;
    }
    if (t.kind == TK_WORD && t.s[0] == '.') {
      if (tok_is(&t, ".loc")) {
        advance(P);
        uint64_t file = 0, ln = 0;
        if (P->tok.kind == TK_NUM && !parse_uint(P, &P->tok, &file)) {
          int l0 = P->tok.line;
          advance(P);
          if (P->tok.kind == TK_NUM && P->tok.line == l0 && !parse_uint(P, &P->tok, &ln)) {
            P->loc_file = (int)file;
            P->loc_line = (int)ln;
          }
        }
        P->err = 0;
        dlcemu_clear_error();
        skip_line(P);
        continue;
      }
      if (tok_is(&t, ".pragma")) {
        while (P->tok.kind != TK_EOF && !tok_punct(&P->tok, ';')) advance(P);
        if (expect_punct(P, ';')) return P->err;
        continue;
      }
      decl d;
      if (parse_decl_words(P, &d)) return P->err;
      if (d.is_reg) {
        if (parse_reg_decl(P, &d)) return P->err;
      } else if (d.space == SP_KPARAM) {
        if (parse_var(P, &d, P->func, SYM_TPARAM)) return P->err;
      } else if (d.space == SP_SHARED || d.space == SP_LOCAL) {
        if (d.is_extern) return punsupported(P, t.line, "extern declaration in a function body", t.s, t.len);
        if (parse_var(P, &d, P->func, -1)) return P->err;
      } else {
        return punsupported(P, t.line, "directive in a function body", t.s, t.len);
      }
      continue;
    }
    if (t.kind == TK_WORD && t.s[0] != '%') {
      lexer save = P->L;
      token nt = lex(&P->L);
      if (tok_punct(&nt, ':')) {
        token nn = lex(&P->L);
        if (tok_is(&nn, ".callprototype")) { /* prototype_N : .callprototype ...; */
          P->L = save;
          while (P->tok.kind != TK_EOF && !tok_punct(&P->tok, ';')) advance(P);
          if (expect_punct(P, ';')) return P->err;
          continue;
        }
        P->L = save;
        advance(P); /* the name */
        advance(P); /* ':' */
        emu_func *f = &P->m->funcs[P->func];
        if (map_find(&P->labels, t.s, t.len)) return perr(P, "label '%.*s' defined twice", t.len, t.s);
        if (map_add(&P->labels, t.s, t.len, NE_LABEL, f->ncode, 0, 0))
          return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
        continue;
      }
      P->L = save;
    }
    if (parse_instruction(P)) return P->err;
  }
  /* branch targets */
  emu_func *f = &P->m->funcs[P->func];
  for (int i = 0; i < P->nfixes; i++) {
    name_ent *e = map_find(&P->labels, P->fixes[i].name, P->fixes[i].len);
    if (!e)
      return P->err = dlcemu_fail(DLCEMU_ERROR_PARSE, "PTX parse error at line %d: unknown label '%.*s'",
                               P->fixes[i].line, P->fixes[i].len, P->fixes[i].name);
    f->code[P->fixes[i].insn].imm = e->idx;
  }
  return 0;
}

/* (.param .u64 a, .param .align 8 .b8 b[16]) */
static int parse_params(parser *P, int fi, int is_entry, int **out, int *nout) {
  if (expect_punct(P, '(')) return P->err;
  int cap = 0;
  while (!tok_punct(&P->tok, ')')) {
    decl d;
    int line = P->tok.line;
    if (parse_decl_words(P, &d)) return P->err;
    if (d.is_reg) return punsupported(P, line, "register parameter", ".reg", 4);
    if (d.space != SP_KPARAM) return perr(P, "expected .param");
    token name = P->tok;
    if (name.kind != TK_WORD) return perr(P, "expected a parameter name");
    advance(P);
    uint64_t count = 0;
    int unsized;
    if (parse_dims(P, &count, &unsized)) return P->err;
    int type = d.type ? d.type : T_B8;
    unsigned es = dlcemu_type_size(type);
    uint64_t size = count * es * (uint64_t)d.vec;
    uint32_t align = d.align && !d.ptr_attrs ? (uint32_t)d.align : es * (uint32_t)d.vec;
    if (d.align && d.ptr_attrs) align = es; /* .ptr .align N describes the pointee */
    if (d.align && !d.ptr_attrs && (uint32_t)d.align > align) align = (uint32_t)d.align;
    int si = add_sym(P, name.s, name.len, is_entry ? SYM_KPARAM : SYM_TPARAM, fi);
    if (si < 0) return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    emu_sym *s = &P->m->syms[si];
    emu_func *f = &P->m->funcs[fi];
    s->size = size;
    s->align = align;
    s->type = type;
    if (is_entry) {
      f->kparam_bytes = align_up(f->kparam_bytes, align);
      s->off = f->kparam_bytes;
      f->kparam_bytes += size;
    } else {
      f->tparam_bytes = align_up(f->tparam_bytes, align);
      s->off = f->tparam_bytes;
      f->tparam_bytes += size;
      if (align > f->tparam_align) f->tparam_align = align;
    }
    if (dlcemu_grow(out, &cap, *nout + 1, sizeof(int))) return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    (*out)[(*nout)++] = si;
    if (tok_punct(&P->tok, ',')) advance(P);
    else if (!tok_punct(&P->tok, ')')) return perr(P, "expected ',' or ')' in parameter list");
  }
  advance(P);
  return 0;
}

static int parse_dim3(parser *P, unsigned v[3]) {
  v[0] = v[1] = v[2] = 1;
  for (int i = 0; i < 3; i++) {
    uint64_t n = 0;
    if (parse_uint(P, &P->tok, &n)) return P->err;
    v[i] = (unsigned)n;
    advance(P);
    if (!tok_punct(&P->tok, ',')) break;
    advance(P);
  }
  return 0;
}

static int parse_function(parser *P, int is_entry) {
  int line = P->tok.line;
  advance(P); /* .entry / .func */
  int *rets = NULL, nrets = 0;
  /* a .func's return parameters come before its name */
  emu_module *m = P->m;
  int fi = -1;
  token name;
  int has_rets = !is_entry && tok_punct(&P->tok, '(');
  lexer save_ret = P->L;
  token save_tok = P->tok;
  if (has_rets) { /* skip for now: the function index must exist first */
    int depth = 0;
    do {
      if (tok_punct(&P->tok, '(')) depth++;
      if (tok_punct(&P->tok, ')')) depth--;
      if (P->tok.kind == TK_EOF) return perr(P, "unterminated return list");
      advance(P);
    } while (depth);
  }
  name = P->tok;
  if (name.kind != TK_WORD) return perr(P, "expected a function name");
  advance(P);
  name_ent *prev = map_find(&P->modnames, name.s, name.len);
  int redecl = 0;
  if (prev && m->syms[prev->idx].kind == SYM_FUNC) {
    fi = m->syms[prev->idx].func;
    redecl = 1;
  } else if (prev) {
    return perr(P, "'%.*s' redefined", name.len, name.s);
  } else {
    if (dlcemu_grow(&m->funcs, &m->capfuncs, m->nfuncs + 1, sizeof(emu_func)))
      return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    fi = m->nfuncs++;
    emu_func *f = &m->funcs[fi];
    memset(f, 0, sizeof *f);
    f->name = malloc((size_t)name.len + 1);
    if (!f->name) return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    memcpy(f->name, name.s, (size_t)name.len);
    f->name[name.len] = 0;
    f->is_entry = is_entry;
    f->decl_line = line;
    f->local_align = f->tparam_align = 1;
    int si = add_sym(P, name.s, name.len, SYM_FUNC, -1);
    if (si < 0) return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    m->syms[si].func = fi;
    if (map_add(&P->modnames, name.s, name.len, NE_SYM, si, 0, 0))
      return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  /* a redeclaration re-reads the lists into throwaway symbols only when it has no body */
  emu_func *f = &m->funcs[fi];
  int keep_lists = !redecl || (!f->has_body && !f->nparams && !f->nrets);
  int *params = NULL, nparams = 0;
  if (has_rets) {
    lexer after = P->L;
    token after_tok = P->tok;
    P->L = save_ret;
    P->tok = save_tok;
    if (parse_params(P, fi, 0, &rets, &nrets)) {
      free(rets);
      return P->err;
    }
    P->L = after;
    P->tok = after_tok;
  }
  if (tok_punct(&P->tok, '(')) {
    if (parse_params(P, fi, is_entry, &params, &nparams)) {
      free(rets);
      free(params);
      return P->err;
    }
  }
  f = &m->funcs[fi];
  if (keep_lists) {
    free(f->params);
    free(f->rets);
    f->params = params;
    f->nparams = nparams;
    f->rets = rets;
    f->nrets = nrets;
  } else {
    free(params);
    free(rets);
  }
  /* performance directives */
  while (P->tok.kind == TK_WORD && P->tok.s[0] == '.') {
    token d = P->tok;
    advance(P);
    if (tok_is(&d, ".maxntid")) {
      if (parse_dim3(P, f->maxntid)) return P->err;
    } else if (tok_is(&d, ".reqntid")) {
      if (parse_dim3(P, f->reqntid)) return P->err;
    } else if (tok_is(&d, ".minnctapersm") || tok_is(&d, ".maxnreg") || tok_is(&d, ".maxnctapersm") ||
               tok_is(&d, ".maxclusterrank")) {
      advance(P);
    } else if (tok_is(&d, ".reqnctapercluster")) {
      unsigned v[3];
      if (parse_dim3(P, v)) return P->err;
      if (v[0] * v[1] * v[2] != 1)
        return punsupported(P, d.line, "cluster size other than 1", d.s, d.len);
    } else if (tok_is(&d, ".noreturn") || tok_is(&d, ".explicitcluster") || tok_is(&d, ".blocksareclusters")) {
    } else if (tok_is(&d, ".pragma")) {
      while (P->tok.kind != TK_EOF && !tok_punct(&P->tok, ';')) advance(P);
      if (expect_punct(P, ';')) return P->err;
    } else {
      return punsupported(P, d.line, "function directive", d.s, d.len);
    }
  }
  if (tok_punct(&P->tok, ';')) {
    advance(P);
    return 0;
  }
  if (f->has_body) return perr(P, "function '%s' defined twice", f->name);
  f->has_body = 1;
  /* parameters are visible by name in the body */
  P->func = fi;
  P->nfixes = 0;
  map_pop(&P->names, 0);
  map_pop(&P->labels, 0);
  for (int i = 0; i < f->nparams; i++) {
    emu_sym *s = &m->syms[f->params[i]];
    if (map_add(&P->names, s->name, (int)strlen(s->name), NE_SYM, f->params[i], 0, s->type))
      return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  for (int i = 0; i < f->nrets; i++) {
    emu_sym *s = &m->syms[f->rets[i]];
    if (map_add(&P->names, s->name, (int)strlen(s->name), NE_SYM, f->rets[i], 0, s->type))
      return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  P->loc_file = -1;
  P->loc_line = 0;
  int rc = parse_body(P);
  map_pop(&P->names, 0);
  P->func = -1;
  return rc;
}

static int parse_target(parser *P) {
  int line = P->tok.line;
  advance(P);
  for (;;) {
    token t = P->tok;
    if (t.kind != TK_WORD) return perr(P, "expected a target name");
    if (t.len >= 5 && !memcmp(t.s, "sm_", 3)) {
      int v = atoi(t.s + 3);
      P->m->target_sm = v;
      P->m->target_arch_a = t.s[t.len - 1] == 'a' || t.s[t.len - 1] == 'f';
      if (v < 70) return punsupported(P, line, "target", t.s, t.len);
    } else if (!tok_is(&t, "texmode_independent") && !tok_is(&t, "texmode_unified") && !tok_is(&t, "debug") &&
               !tok_is(&t, "map_f64_to_f32")) {
      return punsupported(P, line, "target", t.s, t.len);
    }
    advance(P);
    if (!tok_punct(&P->tok, ',')) break;
    advance(P);
  }
  return 0;
}

static int parse_file_directive(parser *P) {
  advance(P);
  uint64_t idx = 0;
  if (parse_uint(P, &P->tok, &idx)) return P->err;
  advance(P);
  if (P->tok.kind != TK_STR) return perr(P, "expected a file name");
  token s = P->tok;
  /* the lexer takes a string to the end of the text when no quote closes it */
  if (s.len < 2 || s.s[s.len - 1] != '"') return perr(P, "unterminated file name");
  advance(P);
  while (tok_punct(&P->tok, ',')) { /* timestamp, size */
    advance(P);
    advance(P);
  }
  emu_module *m = P->m;
  if (idx > 100000) return 0;
  if ((int)idx >= m->nfiles) {
    char **nf = realloc(m->files, sizeof(char *) * (idx + 1));
    if (!nf) return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    for (int i = m->nfiles; i <= (int)idx; i++) nf[i] = NULL;
    m->files = nf;
    m->nfiles = (int)idx + 1;
  }
  free(m->files[idx]);
  m->files[idx] = malloc((size_t)s.len);
  if (!m->files[idx]) return P->err = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
  memcpy(m->files[idx], s.s + 1, (size_t)s.len - 2);
  m->files[idx][s.len - 2] = 0;
  return 0;
}

static int parse_toplevel(parser *P) {
  int have_version = 0, have_target = 0;
  while (P->tok.kind != TK_EOF) {
    token t = P->tok;
    if (t.kind != TK_WORD || t.s[0] != '.') return perr(P, "unexpected '%.*s' at module scope", t.len, t.s);
    if (tok_is(&t, ".version")) {
      advance(P);
      if (P->tok.kind != TK_NUM) return perr(P, "expected a version number");
      if (atoi(P->tok.s) < 7) return punsupported(P, t.line, "PTX version", P->tok.s, P->tok.len);
      advance(P);
      have_version = 1;
    } else if (tok_is(&t, ".target")) {
      if (parse_target(P)) return P->err;
      have_target = 1;
    } else if (tok_is(&t, ".address_size")) {
      advance(P);
      uint64_t n = 0;
      if (parse_uint(P, &P->tok, &n)) return P->err;
      if (n != 64) return punsupported(P, t.line, "address size", P->tok.s, P->tok.len);
      advance(P);
    } else if (tok_is(&t, ".file")) {
      if (parse_file_directive(P)) return P->err;
    } else if (tok_is(&t, ".section")) {
      advance(P);
      while (P->tok.kind != TK_EOF && !tok_punct(&P->tok, '{')) advance(P);
      int depth = 0;
      do {
        if (tok_punct(&P->tok, '{')) depth++;
        if (tok_punct(&P->tok, '}')) depth--;
        if (P->tok.kind == TK_EOF) return perr(P, "unterminated .section");
        advance(P);
      } while (depth);
    } else if (tok_is(&t, ".pragma")) {
      while (P->tok.kind != TK_EOF && !tok_punct(&P->tok, ';')) advance(P);
      if (expect_punct(P, ';')) return P->err;
    } else if (tok_is(&t, ".visible") || tok_is(&t, ".extern") || tok_is(&t, ".weak") ||
               tok_is(&t, ".common")) {
      /* linkage: look at what follows */
      lexer save = P->L;
      token nt = lex(&P->L);
      P->L = save;
      if (tok_is(&nt, ".entry") || tok_is(&nt, ".func")) {
        advance(P);
        if (parse_function(P, tok_is(&nt, ".entry"))) return P->err;
      } else {
        decl d;
        if (parse_decl_words(P, &d)) return P->err;
        if (d.is_reg || d.space < 0) return punsupported(P, t.line, "module declaration", t.s, t.len);
        if (parse_var(P, &d, -1, -1)) return P->err;
      }
    } else if (tok_is(&t, ".entry") || tok_is(&t, ".func")) {
      if (parse_function(P, tok_is(&t, ".entry"))) return P->err;
    } else if (tok_is(&t, ".global") || tok_is(&t, ".const") || tok_is(&t, ".shared") ||
               !strncmp(t.s, ".global.", 8) || !strncmp(t.s, ".const.", 7) ||
               !strncmp(t.s, ".shared.", 8)) {
      decl d;
      if (parse_decl_words(P, &d)) return P->err;
      if (parse_var(P, &d, -1, -1)) return P->err;
    } else {
      return punsupported(P, t.line, "directive", t.s, t.len);
    }
  }
  if (!have_version || !have_target) return perr(P, "missing .version or .target directive");
  return 0;
}

int dlcemu_parse_module(emu_module *m, const char *text) {
  size_t n = strlen(text);
  m->text = malloc(n + 1);
  if (!m->text) return dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
  memcpy(m->text, text, n + 1);
  m->text_len = n;
  uint32_t empty;
  if (append_text(m, "", "", &empty)) return dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory"); /* offset 0: "" */
  parser P;
  memset(&P, 0, sizeof P);
  P.m = m;
  P.func = -1;
  P.L.p = m->text;
  P.L.line = 1;
  int rc = 0;
  if ((rc = map_init(&P.modnames, 1024)) || (rc = map_init(&P.names, 4096)) ||
      (rc = map_init(&P.labels, 1024))) {
    dlcemu_fail(rc, "out of memory");
  } else {
    advance(&P);
    rc = parse_toplevel(&P);
  }
  map_free(&P.modnames);
  map_free(&P.names);
  map_free(&P.labels);
  free(P.fixes);
  return rc;
}

void dlcemu_module_free(emu_module *m) {
  free(m->kernels); /* the kernels themselves belong to the link layer: api.c frees them first */
  for (int i = 0; i < m->nsyms; i++) {
    emu_sym *s = &m->syms[i];
    if (s->host) {
      dlcemu_mem_unregister((uint64_t)(uintptr_t)s->host);
      free(s->host);
    }
    free(s->name);
  }
  free(m->syms);
  for (int i = 0; i < m->nfuncs; i++) {
    emu_func *f = &m->funcs[i];
    free(f->name);
    free(f->params);
    free(f->rets);
    free(f->code);
    free(f->vpool);
    free(f->consts);
    free(f->shared_syms);
    free(f->callees);
  }
  free(m->funcs);
  for (int i = 0; i < m->nfiles; i++) free(m->files[i]);
  free(m->files);
  free(m->pool);
  free(m->text);
  free(m);
}
