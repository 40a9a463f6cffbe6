/* The graph DSL (seed 003; grammar and semantics in docs/dsl.md).
 *
 * dsl_parse() reads a .dlc file in three steps.  The lexer cuts the text into
 * tokens that carry line and column.  A recursive-descent parser builds the
 * graph definitions (dims, typed parameters and results, statements).
 * Lowering then walks `main`: every op call becomes a node of the graph JSON
 * format (docs/graph-format.md), and every call of another graph of the file
 * is inlined, its values taking fresh, deterministic names, so that fusion
 * sees across subgraph boundaries.  fe_read_json() validates the result like
 * any JSON graph.  A source map from JSON paths to DSL positions lets
 * dsl_locate() point the diagnostics of every later stage at the text.
 *
 * Inlining binds the callee's dims by matching its parameter types against
 * the shapes of the arguments.  Those shapes come from the Frontend's own
 * shape rules: the graph built so far is read by fe_read_json() with the
 * arguments as its outputs (a probe), so no shape rule is written twice.
 *
 * dsl_decompile() goes the other way, from a graph JSON object (checked by
 * fe_read_json()) to one `graph main`. */
#include "dsl.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "strbuf.h"
#include "sx.h"

/* Names the DSL keeps for itself (seed 003). */
static const char *const dsl_reserved[] = {"graph", "return", "true", "false", "fused", "fused_reduce",
                                           "fused_cumulative", NULL};

/* The DSL's dtype spellings and the graph format's. */
static const struct {
  const char *dsl, *json;
} dsl_dtypes[] = {{"f16", "fp16"}, {"bf16", "bf16"}, {"f32", "fp32"}, {"T", "T"},
                   {"i32", "int32"}, {"fp16", "fp16"}, {"fp32", "fp32"}, {"int32", "int32"}};

/* Signature modifiers: the word, the signature key it sets, its value. */
static const struct {
  const char *word, *key;
} dsl_mods[] = {{"data", "role"},       {"param", "role"},   {"immutable", "mutability"},
                {"mutable", "mutability"}, {"arena", "storage"}, {"const_pool", "storage"}};

#define DSL_MAX_NEST 200 /* expression nesting, so that no input overflows the stack */

static bool is_reserved(const char *s) {
  for (const char *const *r = dsl_reserved; *r; r++)
    if (strcmp(*r, s) == 0) return true;
  return false;
}

static const char *dtype_from_dsl(const char *s) {
  for (size_t i = 0; i < sizeof dsl_dtypes / sizeof dsl_dtypes[0]; i++)
    if (strcmp(dsl_dtypes[i].dsl, s) == 0) return dsl_dtypes[i].json;
  return NULL;
}

static const char *dtype_to_dsl(const char *s) {
  for (size_t i = 0; i < 5; i++) /* the usual spellings: the first five */
    if (strcmp(dsl_dtypes[i].json, s) == 0) return dsl_dtypes[i].dsl;
  return NULL;
}

static bool is_ident_start(int c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_ident_char(int c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

/* ---- tokens ----------------------------------------------------------------- */

typedef enum {
  TK_EOF,   /* end of input */
  TK_IDENT, /* graph, main, x, f32 */
  TK_NUM,   /* 3, 0.5, 1e-3 */
  TK_STR,   /* "NHWC" */
  TK_ARROW, /* -> */
  TK_PUNCT, /* ( ) [ ] { } < > , : ; = + - * / % */
} tk_kind;

typedef struct token {
  tk_kind kind;
  char c;           /* TK_PUNCT */
  const char *text; /* IDENT and NUM as written, STR unescaped */
  double num;
  bool nl;          /* a newline comes before it */
  int line, col;
} token;

static const char *vfmt(arena *A, const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  char *s = arena_alloc(A, (size_t)n + 1);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

static void report_at(arena *A, diag_list *dl, diag_id id, const char *file, int line, int col,
                      const char *sugg, const char *fmt, ...) __attribute__((format(printf, 8, 9)));
static void report_at(arena *A, diag_list *dl, diag_id id, const char *file, int line, int col,
                      const char *sugg, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *why = vfmt(A, fmt, ap);
  va_end(ap);
  diag_report(dl, id, arena_printf(A, "%s:%d:%d", file, line, col), sugg, "%s", why);
}

/* Cuts `text` into tokens, ending with TK_EOF.  False (with one diagnostic)
 * on a character that starts no token. */
static bool lex(arena *A, const char *text, const char *file, diag_list *dl, token **out, int *nout) {
  token *v = NULL;
  int n = 0, cap = 0, line = 1, col = 1;
  bool nl = false;
  const char *p = text;
  for (;;) {
    if (*p == '\n') {
      line++, col = 1, nl = true, p++;
      continue;
    }
    if (*p == ' ' || *p == '\t' || *p == '\r') {
      p++, col++;
      continue;
    }
    if (p[0] == '/' && p[1] == '/') {
      while (*p && *p != '\n') p++;
      continue;
    }
    token t = {0};
    t.line = line, t.col = col, t.nl = nl;
    nl = false;
    const char *b = p;
    if (!*p) {
      t.kind = TK_EOF;
      ARENA_PUSH(A, v, n, cap, t);
      break;
    }
    if (is_ident_start((unsigned char)*p)) {
      while (is_ident_char((unsigned char)*p)) p++;
      if (p - b > 64) {
        report_at(A, dl, D_DSL_SYNTAX, file, line, col, "Names have at most 64 characters.",
                  "the name '%.20s...' is %d characters long", b, (int)(p - b));
        return false;
      }
      t.kind = TK_IDENT;
      t.text = arena_strndup(A, b, (size_t)(p - b));
    } else if (*p >= '0' && *p <= '9') {
      while (*p >= '0' && *p <= '9') p++;
      if (*p == '.' && p[1] >= '0' && p[1] <= '9') {
        p++;
        while (*p >= '0' && *p <= '9') p++;
      }
      if ((*p == 'e' || *p == 'E') &&
          ((p[1] >= '0' && p[1] <= '9') || ((p[1] == '+' || p[1] == '-') && p[2] >= '0' && p[2] <= '9'))) {
        p += 2;
        while (*p >= '0' && *p <= '9') p++;
      }
      if (is_ident_char((unsigned char)*p) || *p == '.') {
        report_at(A, dl, D_DSL_SYNTAX, file, line, col, "Write numbers as 3, 0.5 or 1e-3.",
                  "malformed number '%.*s'", (int)(p - b + 1), b);
        return false;
      }
      t.kind = TK_NUM;
      t.text = arena_strndup(A, b, (size_t)(p - b));
      t.num = strtod(t.text, NULL);
      if (!isfinite(t.num)) {
        report_at(A, dl, D_BAD_NUMBER, file, line, col, NULL, "the number %s is out of range", t.text);
        return false;
      }
    } else if (*p == '"') {
      strbuf sb = {0};
      p++;
      while (*p && *p != '"' && *p != '\n') {
        char ch[2] = {*p++, 0};
        if (ch[0] == '\\' && (*p == '"' || *p == '\\' || *p == 'n' || *p == 't')) {
          ch[0] = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
          p++;
        }
        sb_puts(&sb, ch);
      }
      if (*p != '"') {
        sb_free(&sb);
        report_at(A, dl, D_DSL_SYNTAX, file, line, col, "Close the string with '\"' on the same line.",
                  "unterminated string");
        return false;
      }
      p++;
      t.kind = TK_STR;
      t.text = sb_take_arena(&sb, A);
    } else if (p[0] == '-' && p[1] == '>') {
      t.kind = TK_ARROW;
      p += 2;
    } else if (strchr("()[]{}<>,:;=+-*/%", *p)) {
      t.kind = TK_PUNCT;
      t.c = *p++;
    } else {
      unsigned char c = (unsigned char)*p;
      if (c >= 0x20 && c < 0x7f)
        report_at(A, dl, D_DSL_SYNTAX, file, line, col, NULL, "unexpected character '%c'", c);
      else
        report_at(A, dl, D_DSL_SYNTAX, file, line, col, "Outside comments, the DSL is ASCII.",
                  "unexpected byte 0x%02x", c);
      return false;
    }
    col += (int)(p - b);
    ARENA_PUSH(A, v, n, cap, t);
  }
  *out = v;
  *nout = n;
  return true;
}

/* ---- syntax tree ----------------------------------------------------------- */

typedef enum {
  EX_NUM,  /* 3, 0.5 */
  EX_STR,  /* "NHWC" */
  EX_NAME, /* x, M, f32, true */
  EX_CALL, /* f(x, key=value), g<N=4>(x) */
  EX_BIN,  /* a + b, a - b, a * b, a / b, a % b */
  EX_NEG,  /* -a */
  EX_LIST, /* [a, b] */
} ex_kind;

typedef struct ex ex;
typedef struct kwarg {
  const token *tok; /* the key */
  const ex *val;
} kwarg;

struct ex {
  ex_kind k;
  const token *tok; /* the literal, name, callee or operator */
  const char *s;    /* NUM text, STR value, NAME, callee */
  double num;
  char op;          /* BIN */
  const ex *a, *b;  /* BIN, NEG */
  int n;
  const ex **items; /* CALL positional arguments, LIST items */
  int nkw;
  kwarg *kw;        /* CALL key=value arguments */
  int nbind;
  kwarg *bind;      /* CALL <N=...> dims */
};

/* A tensor type: T[M, K] param const_pool layout=NHWC */
typedef struct ttype {
  const token *tok; /* the dtype */
  const char *dtype; /* graph-format spelling: fp16, bf16, fp32, T */
  int rank;
  const ex **dims;
  const char *mod[4];       /* role, mutability, storage, layout */
  const token *mod_tok[4];
} ttype;

enum { MOD_ROLE, MOD_MUTABILITY, MOD_STORAGE, MOD_LAYOUT };
static const char *const mod_keys[] = {"role", "mutability", "storage", "layout"};

typedef struct param {
  const token *tok;
  const char *name;
  const ttype *type; /* NULL for an untyped assignment target */
} param;

typedef struct stmt {
  bool is_return;
  const token *tok;   /* its first token */
  const token *label; /* `label: x = op(...)` names the node */
  int ntargets;
  param *targets;
  const ex *value;
  int nvals;
  const ex **vals;    /* return */
} stmt;

typedef struct gdef {
  const token *tok; /* the name */
  const char *name;
  int ndims;
  const token **dim_tok;
  const ex **dim_default; /* NULL when none */
  int nin, nout;
  param *in, *out;
  int nrt;
  const token **rt;       /* runtime(stride, pad) */
  int nstmts;
  stmt *stmts;
  const token *close;     /* its '}' */
} gdef;

/* ---- parser -------------------------------------------------------------------- */

typedef struct parser {
  arena *A;
  const char *file;
  diag_list *dl;
  const token *t;
  int pos, n;
  int nest;
  bool failed;
} parser;

static const token *peek(const parser *P, int k) {
  int i = P->pos + k;
  return &P->t[i < P->n ? i : P->n - 1];
}

static const token *advance(parser *P) {
  const token *t = peek(P, 0);
  if (P->pos < P->n - 1) P->pos++;
  return t;
}

static bool is_punct(const token *t, char c) { return t->kind == TK_PUNCT && t->c == c; }
static bool is_word(const token *t, const char *w) { return t->kind == TK_IDENT && strcmp(t->text, w) == 0; }

static const char *tk_desc(arena *A, const token *t) {
  switch (t->kind) {
  case TK_EOF: return "the end of the file";
  case TK_IDENT: return arena_printf(A, "'%s'", t->text);
  case TK_NUM: return arena_printf(A, "the number %s", t->text);
  case TK_STR: return "a string";
  case TK_ARROW: return "'->'";
  case TK_PUNCT: return arena_printf(A, "'%c'", t->c);
  }
  return "?";
}

static void perr(parser *P, diag_id id, const token *t, const char *sugg, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void perr(parser *P, diag_id id, const token *t, const char *sugg, const char *fmt, ...) {
  if (P->failed) return; /* one error per parse: later ones would follow from it */
  va_list ap;
  va_start(ap, fmt);
  const char *why = vfmt(P->A, fmt, ap);
  va_end(ap);
  diag_report(P->dl, id, arena_printf(P->A, "%s:%d:%d", P->file, t->line, t->col), sugg, "%s", why);
  P->failed = true;
}

static bool expect(parser *P, char c, const char *where) {
  if (is_punct(peek(P, 0), c)) {
    advance(P);
    return true;
  }
  perr(P, D_DSL_SYNTAX, peek(P, 0), NULL, "expected '%c' %s, found %s", c, where, tk_desc(P->A, peek(P, 0)));
  return false;
}

/* A name being defined: an identifier that is not reserved. */
static const token *def_name(parser *P, const char *what) {
  const token *t = peek(P, 0);
  if (t->kind != TK_IDENT) {
    perr(P, D_DSL_SYNTAX, t, NULL, "expected %s, found %s", what, tk_desc(P->A, t));
    return NULL;
  }
  if (is_reserved(t->text)) {
    perr(P, D_RESERVED_WORD, t, NULL, "'%s' is a reserved word and cannot be %s", t->text, what);
    return NULL;
  }
  return advance(P);
}

static ex *new_ex(parser *P, ex_kind k, const token *t) {
  ex *e = ARENA_NEW(P->A, ex);
  e->k = k;
  e->tok = t;
  return e;
}

static const ex *parse_expr(parser *P);

/* f(args, key=value) or f<N=4>(args), after the callee name */
static const ex *parse_call(parser *P, const token *name) {
  ex *e = new_ex(P, EX_CALL, name);
  e->s = name->text;
  int capb = 0, capa = 0, capk = 0;
  if (is_punct(peek(P, 0), '<')) {
    advance(P);
    do {
      const token *k = peek(P, 0);
      if (k->kind != TK_IDENT || !is_punct(peek(P, 1), '=')) {
        perr(P, D_DSL_SYNTAX, k, "Bind a dim as in f<N=64>(x).", "expected DIM=size, found %s", tk_desc(P->A, k));
        return NULL;
      }
      advance(P), advance(P);
      const ex *v = parse_expr(P);
      if (!v) return NULL;
      kwarg kw = {k, v};
      ARENA_PUSH(P->A, e->bind, e->nbind, capb, kw);
    } while (is_punct(peek(P, 0), ',') && advance(P));
    if (!expect(P, '>', "after the dims of the call")) return NULL;
    if (!is_punct(peek(P, 0), '(')) {
      perr(P, D_DSL_SYNTAX, peek(P, 0), NULL, "expected '(' after %s<...>, found %s", name->text,
           tk_desc(P->A, peek(P, 0)));
      return NULL;
    }
  }
  advance(P); /* ( */
  if (!is_punct(peek(P, 0), ')')) {
    do {
      const token *k = peek(P, 0);
      if (k->kind == TK_IDENT && is_punct(peek(P, 1), '=')) {
        advance(P), advance(P);
        const ex *v = parse_expr(P);
        if (!v) return NULL;
        kwarg kw = {k, v};
        ARENA_PUSH(P->A, e->kw, e->nkw, capk, kw);
      } else {
        if (e->nkw) {
          perr(P, D_DSL_SYNTAX, k, "Put the tensor arguments first, then the key=value attributes.",
               "positional argument after a key=value argument");
          return NULL;
        }
        const ex *v = parse_expr(P);
        if (!v) return NULL;
        ARENA_PUSH(P->A, e->items, e->n, capa, v);
      }
    } while (is_punct(peek(P, 0), ',') && advance(P));
  }
  if (!expect(P, ')', "to close the call")) return NULL;
  return e;
}

static const ex *parse_primary(parser *P) {
  const token *t = peek(P, 0);
  switch (t->kind) {
  case TK_NUM: {
    ex *e = new_ex(P, EX_NUM, advance(P));
    e->s = t->text;
    e->num = t->num;
    return e;
  }
  case TK_STR: {
    ex *e = new_ex(P, EX_STR, advance(P));
    e->s = t->text;
    return e;
  }
  case TK_IDENT: {
    if (is_reserved(t->text) && !is_word(t, "true") && !is_word(t, "false")) {
      perr(P, D_RESERVED_WORD, t, NULL, "'%s' is a reserved word, not a value", t->text);
      return NULL;
    }
    advance(P);
    const token *u = peek(P, 0);
    /* a call's '(' is on the callee's line: a '(' on the next line starts a
     * tuple assignment */
    if ((is_punct(u, '(') || is_punct(u, '<')) && !u->nl) return parse_call(P, t);
    ex *e = new_ex(P, EX_NAME, t);
    e->s = t->text;
    return e;
  }
  case TK_PUNCT:
    if (t->c == '(') {
      advance(P);
      const ex *e = parse_expr(P);
      if (!e || !expect(P, ')', "to close the parenthesis")) return NULL;
      return e;
    }
    if (t->c == '[') {
      ex *e = new_ex(P, EX_LIST, advance(P));
      int cap = 0;
      if (!is_punct(peek(P, 0), ']')) {
        do {
          const ex *it = parse_expr(P);
          if (!it) return NULL;
          ARENA_PUSH(P->A, e->items, e->n, cap, it);
        } while (is_punct(peek(P, 0), ',') && advance(P));
      }
      if (!expect(P, ']', "to close the list")) return NULL;
      return e;
    }
    break;
  default: break;
  }
  perr(P, D_DSL_SYNTAX, t, NULL, "expected a value, found %s", tk_desc(P->A, t));
  return NULL;
}

static const ex *parse_unary(parser *P) {
  if (!is_punct(peek(P, 0), '-')) return parse_primary(P);
  if (++P->nest > DSL_MAX_NEST) {
    perr(P, D_DSL_SYNTAX, peek(P, 0), NULL, "expression nested more than %d deep", DSL_MAX_NEST);
    return NULL;
  }
  ex *e = new_ex(P, EX_NEG, advance(P));
  e->a = parse_unary(P);
  P->nest--;
  return e->a ? e : NULL;
}

static const ex *parse_term(parser *P) {
  const ex *a = parse_unary(P);
  while (a && (is_punct(peek(P, 0), '*') || is_punct(peek(P, 0), '/') || is_punct(peek(P, 0), '%'))) {
    ex *e = new_ex(P, EX_BIN, advance(P));
    e->op = e->tok->c;
    e->a = a;
    e->b = parse_unary(P);
    a = e->b ? e : NULL;
  }
  return a;
}

static const ex *parse_expr(parser *P) {
  if (++P->nest > DSL_MAX_NEST) {
    perr(P, D_DSL_SYNTAX, peek(P, 0), NULL, "expression nested more than %d deep", DSL_MAX_NEST);
    return NULL;
  }
  const ex *a = parse_term(P);
  while (a && (is_punct(peek(P, 0), '+') || is_punct(peek(P, 0), '-'))) {
    ex *e = new_ex(P, EX_BIN, advance(P));
    e->op = e->tok->c;
    e->a = a;
    e->b = parse_term(P);
    a = e->b ? e : NULL;
  }
  P->nest--;
  return a;
}

/* dtype[sizes] modifiers */
static const ttype *parse_type(parser *P) {
  ttype *t = ARENA_NEW(P->A, ttype);
  const token *d = peek(P, 0);
  if (d->kind != TK_IDENT) {
    perr(P, D_DSL_SYNTAX, d, "A type is a dtype and a shape, as f32[M, N].", "expected a dtype, found %s",
         tk_desc(P->A, d));
    return NULL;
  }
  if (!(t->dtype = dtype_from_dsl(d->text))) {
    perr(P, D_BAD_DTYPE, d, "Use f16, bf16, f32 or T, the dtype parameter.", "unknown dtype '%s'", d->text);
    return NULL;
  }
  t->tok = advance(P);
  if (!expect(P, '[', "after the dtype (a shape, as f32[M, N])")) return NULL;
  int cap = 0;
  if (!is_punct(peek(P, 0), ']')) {
    do {
      const ex *s = parse_expr(P);
      if (!s) return NULL;
      ARENA_PUSH(P->A, t->dims, t->rank, cap, s);
    } while (is_punct(peek(P, 0), ',') && advance(P));
  }
  if (!expect(P, ']', "to close the shape")) return NULL;
  while (peek(P, 0)->kind == TK_IDENT && !peek(P, 0)->nl) {
    const token *m = advance(P);
    int key = -1;
    const char *val = NULL;
    for (size_t i = 0; i < sizeof dsl_mods / sizeof dsl_mods[0]; i++)
      if (strcmp(dsl_mods[i].word, m->text) == 0) {
        key = strcmp(dsl_mods[i].key, "role") == 0 ? MOD_ROLE : strcmp(dsl_mods[i].key, "mutability") == 0
                                                                  ? MOD_MUTABILITY
                                                                  : MOD_STORAGE;
        val = dsl_mods[i].word;
      }
    if (strcmp(m->text, "layout") == 0) {
      if (!expect(P, '=', "after layout")) return NULL;
      const token *v = peek(P, 0);
      if (v->kind != TK_IDENT && v->kind != TK_STR) {
        perr(P, D_DSL_SYNTAX, v, NULL, "expected a layout name (as NHWC), found %s", tk_desc(P->A, v));
        return NULL;
      }
      key = MOD_LAYOUT;
      val = advance(P)->text;
    }
    if (key < 0) {
      perr(P, D_DSL_SYNTAX, m, "After a type come: data or param, immutable or mutable, arena or const_pool, "
                               "layout=NAME.",
           "unknown modifier '%s'", m->text);
      return NULL;
    }
    if (t->mod[key]) {
      perr(P, D_DSL_SYNTAX, m, NULL, "the %s is given twice", mod_keys[key]);
      return NULL;
    }
    t->mod[key] = val;
    t->mod_tok[key] = m;
  }
  return t;
}

static bool parse_param(parser *P, param *p, const char *what) {
  if (!(p->tok = def_name(P, what))) return false;
  p->name = p->tok->text;
  if (!expect(P, ':', arena_printf(P->A, "after '%s' (a type, as x: f32[N])", p->name))) return false;
  return (p->type = parse_type(P)) != NULL;
}

static bool parse_params(parser *P, int *n, param **out, const char *what) {
  int cap = 0;
  if (!expect(P, '(', arena_printf(P->A, "before the %ss", what))) return false;
  if (!is_punct(peek(P, 0), ')')) {
    do {
      param p = {0};
      if (!parse_param(P, &p, what)) return false;
      for (int i = 0; i < *n; i++)
        if (strcmp((*out)[i].name, p.name) == 0) {
          perr(P, D_DUPLICATE_NAME, p.tok, NULL, "'%s' is already a %s (line %d)", p.name, what,
               (*out)[i].tok->line);
          return false;
        }
      ARENA_PUSH(P->A, *out, *n, cap, p);
    } while (is_punct(peek(P, 0), ',') && advance(P));
  }
  return expect(P, ')', arena_printf(P->A, "after the %ss", what));
}

static bool parse_stmt(parser *P, stmt *s) {
  s->tok = peek(P, 0);
  if (is_word(s->tok, "return")) {
    advance(P);
    s->is_return = true;
    int cap = 0;
    do {
      const ex *v = parse_expr(P);
      if (!v) return false;
      ARENA_PUSH(P->A, s->vals, s->nvals, cap, v);
    } while (is_punct(peek(P, 0), ',') && advance(P));
    return true;
  }
  /* `label: target = ...`, told from the typed `target: f32[N] = ...` */
  const token *t0 = peek(P, 0), *t2 = peek(P, 2);
  if (t0->kind == TK_IDENT && is_punct(peek(P, 1), ':') && !(t2->kind == TK_IDENT && is_punct(peek(P, 3), '['))) {
    if (!(s->label = def_name(P, "a node label"))) return false;
    advance(P);
  }
  int cap = 0;
  bool tuple = is_punct(peek(P, 0), '(');
  if (tuple) advance(P);
  do {
    param p = {0};
    if (!(p.tok = def_name(P, "an assignment target"))) return false;
    p.name = p.tok->text;
    if (is_punct(peek(P, 0), ':')) {
      advance(P);
      if (!(p.type = parse_type(P))) return false;
    }
    ARENA_PUSH(P->A, s->targets, s->ntargets, cap, p);
  } while (tuple && is_punct(peek(P, 0), ',') && advance(P));
  if (tuple && !expect(P, ')', "to close the targets")) return false;
  if (!is_punct(peek(P, 0), '=')) {
    perr(P, D_DSL_SYNTAX, peek(P, 0), "A statement is `name = expression` or `return values`.",
         "expected '=' after the target, found %s", tk_desc(P->A, peek(P, 0)));
    return false;
  }
  advance(P);
  return (s->value = parse_expr(P)) != NULL;
}

/* graph<dims> name(params) -> (results) [runtime(attrs)] { statements } */
static bool parse_graph(parser *P, gdef *g) {
  advance(P); /* graph */
  int cap = 0, capd = 0;
  if (is_punct(peek(P, 0), '<')) {
    advance(P);
    do {
      const token *d = def_name(P, "a dim");
      if (!d) return false;
      for (int i = 0; i < g->ndims; i++)
        if (strcmp(g->dim_tok[i]->text, d->text) == 0) {
          perr(P, D_DUPLICATE_NAME, d, NULL, "the dim '%s' is declared twice", d->text);
          return false;
        }
      const ex *def = NULL;
      if (is_punct(peek(P, 0), '=')) {
        advance(P);
        if (!(def = parse_expr(P))) return false;
      }
      int n0 = g->ndims;
      ARENA_PUSH(P->A, g->dim_tok, g->ndims, capd, d);
      ARENA_PUSH(P->A, g->dim_default, n0, cap, def);
    } while (is_punct(peek(P, 0), ',') && advance(P));
    if (!expect(P, '>', "after the dims")) return false;
  }
  if (!(g->tok = def_name(P, "a graph name"))) return false;
  g->name = g->tok->text;
  if (!parse_params(P, &g->nin, &g->in, "parameter")) return false;
  if (peek(P, 0)->kind != TK_ARROW) {
    perr(P, D_DSL_SYNTAX, peek(P, 0), "Results follow '->', as in -> (y: f32[N]).",
         "expected '->' after the parameters, found %s", tk_desc(P->A, peek(P, 0)));
    return false;
  }
  advance(P);
  const token *lp = peek(P, 0);
  if (!parse_params(P, &g->nout, &g->out, "result")) return false;
  if (g->nout == 0) {
    perr(P, D_DSL_SYNTAX, lp, NULL, "graph '%s' has no results", g->name);
    return false;
  }
  for (int i = 0; i < g->nout; i++)
    for (int j = 0; j < g->nin; j++)
      if (strcmp(g->out[i].name, g->in[j].name) == 0) {
        perr(P, D_DUPLICATE_NAME, g->out[i].tok, NULL, "'%s' is both a parameter and a result", g->out[i].name);
        return false;
      }
  if (is_word(peek(P, 0), "runtime")) {
    advance(P);
    int capr = 0;
    if (!expect(P, '(', "after runtime")) return false;
    do {
      const token *r = def_name(P, "a runtime attribute");
      if (!r) return false;
      ARENA_PUSH(P->A, g->rt, g->nrt, capr, r);
    } while (is_punct(peek(P, 0), ',') && advance(P));
    if (!expect(P, ')', "after the runtime attributes")) return false;
  }
  const token *open = peek(P, 0);
  if (!expect(P, '{', "to open the graph's body")) return false;
  int caps = 0;
  bool returned = false;
  for (;;) {
    const token *t = peek(P, 0);
    if (is_punct(t, '}')) break;
    if (is_punct(t, ';')) {
      advance(P);
      continue;
    }
    if (t->kind == TK_EOF) {
      perr(P, D_DSL_SYNTAX, t, NULL, "graph '%s' (opened at line %d) is not closed with '}'", g->name, open->line);
      return false;
    }
    if (returned) {
      perr(P, D_DSL_SYNTAX, t, "Put `return` last.", "a statement follows the return of graph '%s'", g->name);
      return false;
    }
    const token *prev = &P->t[P->pos - 1];
    if (!t->nl && !is_punct(prev, ';') && !is_punct(prev, '{')) {
      perr(P, D_DSL_SYNTAX, t, "End each statement with a newline or ';'.", "expected the end of the statement, found %s",
           tk_desc(P->A, t));
      return false;
    }
    stmt s = {0};
    if (!parse_stmt(P, &s)) return false;
    returned = s.is_return;
    ARENA_PUSH(P->A, g->stmts, g->nstmts, caps, s);
  }
  g->close = advance(P);
  if (!returned) {
    perr(P, D_MISSING_RETURN, g->close, NULL, "graph '%s' ends without `return`", g->name);
    return false;
  }
  return true;
}

/* The file: graphs, and at most one `name "..."` and `description "..."`
 * (the graph format's top-level keys). */
static bool parse_file(parser *P, int *ng, gdef **gs, const char *meta[2], const token *meta_tok[2]) {
  static const char *const meta_words[2] = {"name", "description"};
  int cap = 0;
  while (peek(P, 0)->kind != TK_EOF) {
    int w = is_word(peek(P, 0), "name") ? 0 : is_word(peek(P, 0), "description") ? 1 : -1;
    if (w >= 0 && peek(P, 1)->kind == TK_STR) {
      if (meta[w]) {
        perr(P, D_DUPLICATE_NAME, peek(P, 0), NULL, "the file gives its %s twice", meta_words[w]);
        return false;
      }
      advance(P);
      meta_tok[w] = peek(P, 0);
      meta[w] = advance(P)->text;
      continue;
    }
    if (!is_word(peek(P, 0), "graph")) {
      perr(P, D_DSL_SYNTAX, peek(P, 0), "A .dlc file is a list of `graph` definitions.", "expected 'graph', found %s",
           tk_desc(P->A, peek(P, 0)));
      return false;
    }
    gdef g = {0};
    if (!parse_graph(P, &g)) return false;
    for (int i = 0; i < *ng; i++)
      if (strcmp((*gs)[i].name, g.name) == 0) {
        perr(P, D_DUPLICATE_NAME, g.tok, NULL, "graph '%s' is defined twice (first at line %d)", g.name,
             (*gs)[i].tok->line);
        return false;
      }
    ARENA_PUSH(P->A, *gs, *ng, cap, g);
  }
  return true;
}

/* ---- lowering: names ------------------------------------------------------------ */

/* A set of strings (open addressing), for fresh names. */
typedef struct nameset {
  const char **slot;
  size_t cap, n;
} nameset;

static uint64_t str_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool ns_has(const nameset *ns, const char *s) {
  if (!ns->cap) return false;
  for (size_t i = str_hash(s) & (ns->cap - 1);; i = (i + 1) & (ns->cap - 1)) {
    if (!ns->slot[i]) return false;
    if (strcmp(ns->slot[i], s) == 0) return true;
  }
}

static void ns_add(arena *A, nameset *ns, const char *s) {
  if (ns_has(ns, s)) return;
  if (2 * (ns->n + 1) > ns->cap) {
    nameset bigger = {ARENA_ARRAY(A, const char *, ns->cap ? ns->cap * 2 : 64), ns->cap ? ns->cap * 2 : 64, 0};
    for (size_t i = 0; i < ns->cap; i++)
      if (ns->slot[i]) ns_add(A, &bigger, ns->slot[i]);
    *ns = bigger;
  }
  size_t i = str_hash(s) & (ns->cap - 1);
  while (ns->slot[i]) i = (i + 1) & (ns->cap - 1);
  ns->slot[i] = s;
  ns->n++;
}

/* ---- lowering: the graph being built ----------------------------------------------- */

typedef struct srcpos {
  const char *path; /* "graph[2].attrs.pad" */
  const char *at;   /* "f.dlc:7:12" */
} srcpos;

struct dsl_srcmap {
  int n, cap;
  srcpos *e;
};

/* A tensor of the graph being built. */
typedef struct bval {
  const char *name;
  int producer;     /* node index, or -1 for a signature input */
  int input;        /* signature input index, or -1 */
  int output;       /* signature output index (after main's return), or -1 */
  cJSON *decl;      /* {"dtype", "shape"[, "layout"]} of a typed target (pool-owned), or NULL */
  const char *at;
} bval;

typedef struct bnode {
  const char *op, *fn, *name;
  int nin;
  int *in;
  const char **in_at;
  int out;
  cJSON *attrs;     /* pool-owned */
  int nkw;
  const char **kw_key, **kw_at;
  const char *at, *out_at;
} bnode;

typedef struct var {
  const char *name;
  const token *tok;
  bool scalar;
  int vid;
  double num;
} var;

/* One activation of a graph: main, or an inlined call. */
typedef struct scope {
  const gdef *g;
  const struct scope *parent;
  int depth;
  const char *trail;  /* ", inlined at f.dlc:9:5": appended to positions inside the call */
  const char *main_at; /* the position of the call in main that this scope descends from */
  const char *prefix; /* base of fresh names; NULL in main */
  const char **dim;   /* per dim of g: its size in main's terms; NULL in main (the dim itself) */
  int nvars, capvars;
  var *vars;
} scope;

typedef struct lower {
  arena *A;
  diag_list *dl;
  const char *file, *gname, *description;
  const char *gname_at; /* where the name is written: its string, or the file (named after it) */
  int ngraphs;
  const gdef *graphs;
  const gdef *main;
  cJSON *pool; /* owns every cJSON of the builder */
  int nv, capv;
  bval *v;
  int nn, capn;
  bnode *nd;
  int *in_vid; /* main's parameters */
  int nrt, caprt, caprt_at;
  const char **rt, **rt_at;
  nameset taken;
  bool returned;
} lower;

static void lerr(lower *L, diag_id id, const char *at, const char *sugg, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void lerr(lower *L, diag_id id, const char *at, const char *sugg, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *why = vfmt(L->A, fmt, ap);
  va_end(ap);
  diag_report(L->dl, id, at, sugg, "%s", why);
}

static const char *pos(lower *L, const scope *s, const token *t) {
  return arena_printf(L->A, "%s:%d:%d%s", L->file, t->line, t->col, s ? s->trail : "");
}

/* A name that no identifier of the file and no earlier fresh name uses:
 * base, base_2, base_3, ... (at most 64 characters). */
static const char *fresh(lower *L, const char *base) {
  char cand[80];
  for (int k = 1;; k++) {
    if (k == 1) snprintf(cand, sizeof cand, "%.56s", base);
    else snprintf(cand, sizeof cand, "%.56s_%d", base, k);
    if (!ns_has(&L->taken, cand)) {
      const char *s = arena_strdup(L->A, cand);
      ns_add(L->A, &L->taken, s);
      return s;
    }
  }
}

static int new_val(lower *L, const char *name, int producer) {
  bval b = {name, producer, -1, -1, NULL, NULL};
  ARENA_PUSH(L->A, L->v, L->nv, L->capv, b);
  return L->nv - 1;
}

static var *find_var(const scope *s, const char *name) {
  for (int i = 0; i < s->nvars; i++)
    if (strcmp(s->vars[i].name, name) == 0) return &s->vars[i];
  return NULL;
}

static int find_dim(const gdef *g, const char *name) {
  for (int i = 0; i < g->ndims; i++)
    if (strcmp(g->dim_tok[i]->text, name) == 0) return i;
  return -1;
}

static const gdef *find_graph(const lower *L, const char *name) {
  for (int i = 0; i < L->ngraphs; i++)
    if (strcmp(L->graphs[i].name, name) == 0) return &L->graphs[i];
  return NULL;
}

/* ---- lowering: sizes and attribute values ---------------------------------------------- */

/* The size a dim name stands for in scope s (main's terms), or NULL when the
 * name is not a bound dim of s (in main, dims stand for themselves). */
static const char *dim_text(const scope *s, const char *name) {
  int d = find_dim(s->g, name);
  return d >= 0 && s->dim ? s->dim[d] : NULL;
}

static bool simple_text(const char *s) {
  for (; *s; s++)
    if (!is_ident_char((unsigned char)*s)) return false;
  return true;
}

/* The canonical text of an expression (sizes: "floor((H+1)/2)"), with the
 * dims of s replaced by their sizes. */
static void ex_text(strbuf *sb, const scope *s, const ex *e, int prec) {
  switch (e->k) {
  case EX_NUM: sb_puts(sb, e->s); break;
  case EX_STR: sb_printf(sb, "\"%s\"", e->s); break;
  case EX_NAME: {
    const char *t = s ? dim_text(s, e->s) : NULL;
    if (!t) sb_puts(sb, e->s);
    else if (simple_text(t)) sb_puts(sb, t);
    else sb_printf(sb, "(%s)", t);
    break;
  }
  case EX_NEG:
    if (prec > 3) sb_puts(sb, "(");
    sb_puts(sb, "-");
    ex_text(sb, s, e->a, 3);
    if (prec > 3) sb_puts(sb, ")");
    break;
  case EX_BIN: {
    int p = e->op == '+' || e->op == '-' ? 1 : 2;
    if (p < prec) sb_puts(sb, "(");
    ex_text(sb, s, e->a, p);
    sb_printf(sb, "%c", e->op);
    ex_text(sb, s, e->b, p + 1);
    if (p < prec) sb_puts(sb, ")");
    break;
  }
  case EX_CALL:
    sb_printf(sb, "%s(", e->s);
    for (int i = 0; i < e->n; i++) {
      if (i) sb_puts(sb, ",");
      ex_text(sb, s, e->items[i], 0);
    }
    sb_puts(sb, ")");
    break;
  case EX_LIST:
    sb_puts(sb, "[");
    for (int i = 0; i < e->n; i++) {
      if (i) sb_puts(sb, ",");
      ex_text(sb, s, e->items[i], 0);
    }
    sb_puts(sb, "]");
    break;
  }
}

static const char *size_text(lower *L, const scope *s, const ex *e) {
  strbuf sb = {0};
  ex_text(&sb, s, e, 0);
  return sb_take_arena(&sb, L->A);
}

/* Integer arithmetic of literals, floor division as in sizes. */
static bool const_int(const ex *e, int64_t *out) {
  int64_t a, b;
  switch (e->k) {
  case EX_NUM:
    if (strpbrk(e->s, ".eE") || e->num > 9e18) return false;
    *out = (int64_t)e->num;
    return true;
  case EX_NEG:
    if (!const_int(e->a, &a) || a == INT64_MIN) return false;
    *out = -a;
    return true;
  case EX_BIN:
    if (!const_int(e->a, &a) || !const_int(e->b, &b)) return false;
    switch (e->op) {
    case '+': return !__builtin_add_overflow(a, b, out);
    case '-': return !__builtin_sub_overflow(a, b, out);
    case '*': return !__builtin_mul_overflow(a, b, out);
    case '/':
    case '%': {
      if (b == 0 || (a == INT64_MIN && b == -1)) return false;
      int64_t q = a / b, r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) q--, r += b;
      *out = e->op == '/' ? q : r;
      return true;
    }
    }
    return false;
  default: return false;
  }
}

/* The JSON of a size whose text is `t`: a number when it is an integer. */
static cJSON *size_json(const char *t) {
  char *end;
  long long v = strtoll(t, &end, 10);
  if (*t && *t != '+' && !*end && strlen(t) < 16) return cJSON_CreateNumber((double)v);
  return cJSON_CreateString(t);
}

/* An attribute value or a size in the graph format: numbers, true/false,
 * lists, strings; names are strings (f16/f32 become fp16/fp32, a dim of s its
 * size); other expressions their text ("H+2", "rsqrt(D)"). */
static cJSON *attr_json(lower *L, const scope *s, const ex *e) {
  int64_t iv;
  switch (e->k) {
  case EX_NUM: return cJSON_CreateNumber(e->num);
  case EX_STR: return cJSON_CreateString(e->s);
  case EX_LIST: {
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < e->n; i++) {
      cJSON *it = attr_json(L, s, e->items[i]);
      cJSON_AddItemToArray(arr, it);
    }
    return arr;
  }
  case EX_NAME: {
    if (strcmp(e->s, "true") == 0) return cJSON_CreateTrue();
    if (strcmp(e->s, "false") == 0) return cJSON_CreateFalse();
    const char *t = s ? dim_text(s, e->s) : NULL;
    if (t) return size_json(t);
    const char *d = dtype_from_dsl(e->s);
    return cJSON_CreateString(d && strcmp(d, "T") != 0 ? d : e->s);
  }
  default:
    if (const_int(e, &iv)) return cJSON_CreateNumber((double)iv);
    if (e->k == EX_NEG && e->a->k == EX_NUM) return cJSON_CreateNumber(-e->a->num);
    return cJSON_CreateString(size_text(L, s, e));
  }
}

/* {"dtype", "shape"[, "layout"]} of a type in scope s (the caller owns it). */
static cJSON *type_obj(lower *L, const scope *s, const ttype *t) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "dtype", t->dtype);
  cJSON *sh = cJSON_AddArrayToObject(o, "shape");
  for (int i = 0; i < t->rank; i++) cJSON_AddItemToArray(sh, attr_json(L, s, t->dims[i]));
  if (t->mod[MOD_LAYOUT]) cJSON_AddStringToObject(o, "layout", t->mod[MOD_LAYOUT]);
  return o;
}

/* The same, owned by the builder's pool. */
static cJSON *type_json(lower *L, const scope *s, const ttype *t) {
  cJSON *o = type_obj(L, s, t);
  cJSON_AddItemToArray(L->pool, o);
  return o;
}

/* "f32[B, N]" */
static const char *type_text(lower *L, const ttype *t) {
  strbuf sb = {0};
  sb_printf(&sb, "%s[", dtype_to_dsl(t->dtype));
  for (int i = 0; i < t->rank; i++) {
    if (i) sb_puts(&sb, ", ");
    ex_text(&sb, NULL, t->dims[i], 0);
  }
  sb_puts(&sb, "]");
  return sb_take_arena(&sb, L->A);
}

/* Every name in a size expression is a dim of g (E0302 otherwise). */
static bool check_dims(lower *L, const scope *s, const ex *e, const char *what) {
  switch (e->k) {
  case EX_NAME:
    if (find_dim(s->g, e->s) >= 0) return true;
    lerr(L, D_UNKNOWN_NAME, pos(L, s, e->tok),
         arena_printf(L->A, "Declare it with the dims: graph<..., %s> %s(...).", e->s, s->g->name),
         "'%s' in the shape of %s is not a dim of graph '%s'", e->s, what, s->g->name);
    return false;
  case EX_NEG: return check_dims(L, s, e->a, what);
  case EX_BIN: return check_dims(L, s, e->a, what) && check_dims(L, s, e->b, what);
  case EX_CALL:
    for (int i = 0; i < e->n; i++)
      if (!check_dims(L, s, e->items[i], what)) return false;
    return true;
  default: return true;
  }
}

/* ---- lowering: the graph JSON -------------------------------------------------------------- */

static void map_add(lower *L, dsl_srcmap *m, const char *path, const char *at) {
  if (!m || !at) return;
  srcpos p = {path, at};
  ARENA_PUSH(L->A, m->e, m->n, m->cap, p);
}

static void map_type(lower *L, dsl_srcmap *m, const char *path, const scope *s, const ttype *t) {
  map_add(L, m, arena_printf(L->A, "%s.dtype", path), pos(L, s, t->tok));
  for (int k = 0; k < t->rank; k++)
    map_add(L, m, arena_printf(L->A, "%s.shape[%d]", path, k), pos(L, s, t->dims[k]->tok));
  if (t->mod_tok[MOD_LAYOUT]) map_add(L, m, arena_printf(L->A, "%s.layout", path), pos(L, s, t->mod_tok[MOD_LAYOUT]));
}

static cJSON *sig_entry(lower *L, dsl_srcmap *m, const char *path, const char *name, const ttype *t) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "tensor", name);
  for (int k = 0; t && k < MOD_LAYOUT; k++)
    if (t->mod[k]) {
      cJSON_AddStringToObject(o, mod_keys[k], t->mod[k]);
      map_add(L, m, arena_printf(L->A, "%s.%s", path, mod_keys[k]), pos(L, NULL, t->mod_tok[k]));
    }
  return o;
}

/* The graph JSON of what is built so far.  For a probe, `outs` (n values) are
 * the signature outputs; NULL gives main's results.  Fills `m` when not NULL. */
static cJSON *build_json(lower *L, int nouts, const int *outs, dsl_srcmap *m) {
  const gdef *g = L->main;
  scope ms = {g, NULL, 0, "", NULL, NULL, NULL, 0, 0, NULL};
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "name", L->gname);
  map_add(L, m, "name", L->gname_at);
  if (L->description) cJSON_AddStringToObject(root, "description", L->description);
  cJSON *sig = cJSON_AddObjectToObject(root, "signature");
  cJSON *dims = cJSON_AddArrayToObject(sig, "dims");
  for (int i = 0; i < g->ndims; i++) {
    cJSON_AddItemToArray(dims, cJSON_CreateString(g->dim_tok[i]->text));
    map_add(L, m, arena_printf(L->A, "signature.dims[%d]", i), pos(L, NULL, g->dim_tok[i]));
  }
  if (L->nrt) {
    cJSON *at = cJSON_AddArrayToObject(sig, "attrs");
    for (int i = 0; i < L->nrt; i++) {
      cJSON_AddItemToArray(at, cJSON_CreateString(L->rt[i]));
      map_add(L, m, arena_printf(L->A, "signature.attrs[%d]", i), L->rt_at[i]);
    }
  }
  cJSON *tens = cJSON_CreateObject();
  cJSON *ins = cJSON_AddArrayToObject(sig, "inputs");
  for (int i = 0; i < g->nin; i++) {
    const char *path = arena_printf(L->A, "signature.inputs[%d]", i);
    const char *tp = arena_printf(L->A, "tensors.%s", g->in[i].name);
    cJSON_AddItemToArray(ins, sig_entry(L, m, path, g->in[i].name, g->in[i].type));
    cJSON_AddItemToObject(tens, g->in[i].name, cJSON_Duplicate(L->v[L->in_vid[i]].decl, 1));
    map_add(L, m, path, pos(L, NULL, g->in[i].tok));
    map_add(L, m, tp, pos(L, NULL, g->in[i].tok));
    map_type(L, m, tp, &ms, g->in[i].type);
  }
  cJSON *os = cJSON_AddArrayToObject(sig, "outputs");
  if (outs) {
    for (int i = 0; i < nouts; i++) cJSON_AddItemToArray(os, sig_entry(L, NULL, "", L->v[outs[i]].name, NULL));
  } else {
    for (int i = 0; i < g->nout; i++) {
      const char *path = arena_printf(L->A, "signature.outputs[%d]", i);
      const char *tp = arena_printf(L->A, "tensors.%s", g->out[i].name);
      cJSON_AddItemToArray(os, sig_entry(L, m, path, g->out[i].name, g->out[i].type));
      cJSON_AddItemToObject(tens, g->out[i].name, type_obj(L, &ms, g->out[i].type));
      map_add(L, m, path, pos(L, NULL, g->out[i].tok));
      map_add(L, m, tp, pos(L, NULL, g->out[i].tok));
      map_type(L, m, tp, &ms, g->out[i].type);
    }
  }
  for (int i = 0; i < L->nv; i++) {
    const bval *b = &L->v[i];
    if (!b->decl || b->input >= 0 || b->output >= 0) continue;
    cJSON_AddItemToObject(tens, b->name, cJSON_Duplicate(b->decl, 1));
    map_add(L, m, arena_printf(L->A, "tensors.%s", b->name), b->at);
  }
  /* a probe's outputs need a declaration; the shape a probe reads is the
   * producer's inferred one (fe_tensor_value), not this */
  for (int i = 0; outs && i < nouts; i++)
    if (!L->v[outs[i]].decl) {
      cJSON *d = cJSON_AddObjectToObject(tens, L->v[outs[i]].name);
      cJSON_AddStringToObject(d, "dtype", "T");
      cJSON_AddArrayToObject(d, "shape");
    }
  cJSON_AddItemToObject(root, "tensors", tens);
  cJSON *nodes = cJSON_AddArrayToObject(root, "graph");
  for (int i = 0; i < L->nn; i++) {
    const bnode *n = &L->nd[i];
    const char *path = arena_printf(L->A, "graph[%d]", i);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", n->op);
    cJSON_AddStringToObject(o, "name", n->name);
    if (n->fn) cJSON_AddStringToObject(o, "fn", n->fn);
    cJSON *in = cJSON_AddArrayToObject(o, "inputs");
    for (int k = 0; k < n->nin; k++) {
      cJSON_AddItemToArray(in, cJSON_CreateString(L->v[n->in[k]].name));
      map_add(L, m, arena_printf(L->A, "%s.inputs[%d]", path, k), n->in_at[k]);
    }
    cJSON *out = cJSON_AddArrayToObject(o, "outputs");
    cJSON_AddItemToArray(out, cJSON_CreateString(L->v[n->out].name));
    map_add(L, m, arena_printf(L->A, "%s.outputs[0]", path), n->out_at);
    if (n->attrs->child) cJSON_AddItemToObject(o, "attrs", cJSON_Duplicate(n->attrs, 1));
    for (int k = 0; k < n->nkw; k++) map_add(L, m, arena_printf(L->A, "%s.attrs.%s", path, n->kw_key[k]), n->kw_at[k]);
    map_add(L, m, path, n->at);
    cJSON_AddItemToArray(nodes, o);
  }
  return root;
}

/* ---- lowering: expressions ---------------------------------------------------------------- */

typedef enum { OPD_NONE, OPD_TENSOR, OPD_SCALAR, OPD_TUPLE } opd_kind;

/* The value of an expression: a tensor, a number, or a call's results. */
typedef struct opd {
  opd_kind k;
  int vid;
  double num;
  int n;
  const int *vids;
} opd;

/* What the statement around an expression asks of the value it makes: the
 * targets' names and the node's label. */
typedef struct hint {
  int n;
  const param *targets;
  const token *label;
  bool used, label_used;
} hint;

static opd eval(lower *L, scope *s, const ex *e, hint *h);
static bool lower_stmt(lower *L, scope *s, const stmt *st);

static const char *cat3(lower *L, const char *a, const char *b) { return arena_printf(L->A, "%s_%s", a, b); }

/* Adds a node writing one new value; the statement's target names it when
 * the node is the statement's outermost op. */
static int add_node(lower *L, scope *s, hint *h, const token *at, const char *op, const char *fn, int nin,
                    const int *in, const char *const *in_at, cJSON *attrs, int nkw, const kwarg *kw) {
  const char *vname, *nname, *out_at;
  const char *base = fn ? fn : arena_lower_ident(L->A, op);
  if (h && !h->used && h->n == 1) {
    h->used = true;
    const char *t = h->targets[0].name;
    vname = s->prefix ? fresh(L, cat3(L, s->prefix, t)) : t;
    nname = vname;
    if (h->label) {
      h->label_used = true;
      nname = s->prefix ? fresh(L, cat3(L, s->prefix, h->label->text)) : h->label->text;
    }
    out_at = pos(L, s, h->targets[0].tok);
  } else {
    vname = fresh(L, s->prefix ? cat3(L, s->prefix, base) : base);
    nname = vname;
    out_at = pos(L, s, at);
  }
  bnode n = {0};
  n.op = op;
  n.fn = fn;
  n.name = nname;
  n.nin = nin;
  n.in = ARENA_ARRAY(L->A, int, nin + 1);
  n.in_at = ARENA_ARRAY(L->A, const char *, nin + 1);
  for (int i = 0; i < nin; i++) n.in[i] = in[i], n.in_at[i] = in_at[i];
  if (!attrs) {
    attrs = cJSON_CreateObject();
    cJSON_AddItemToArray(L->pool, attrs);
  }
  n.attrs = attrs;
  n.nkw = nkw;
  n.kw_key = ARENA_ARRAY(L->A, const char *, nkw + 1);
  n.kw_at = ARENA_ARRAY(L->A, const char *, nkw + 1);
  for (int i = 0; i < nkw; i++) n.kw_key[i] = kw[i].tok->text, n.kw_at[i] = pos(L, s, kw[i].tok);
  n.at = pos(L, s, at);
  n.out_at = out_at;
  n.out = new_val(L, vname, L->nn);
  ARENA_PUSH(L->A, L->nd, L->nn, L->capn, n);
  return n.out;
}

static opd tensor(int vid) { return (opd){OPD_TENSOR, vid, 0, 0, NULL}; }
static opd scalar(double v) { return (opd){OPD_SCALAR, -1, v, 0, NULL}; }
static const opd bad = {OPD_NONE, -1, 0, 0, NULL};

/* One tensor operand; numbers and multi-result calls are errors here. */
static bool want_tensor(lower *L, const scope *s, const ex *e, opd *v, const char *what) {
  if (v->k == OPD_TUPLE && v->n == 1) *v = tensor(v->vids[0]);
  if (v->k == OPD_TENSOR) return true;
  if (v->k == OPD_SCALAR)
    lerr(L, D_DSL_SYNTAX, pos(L, s, e->tok), "Numbers are operands of binary functions only (add(x, 1), x * 2).",
         "%s takes a tensor here, not a number", what);
  else if (v->k == OPD_TUPLE)
    lerr(L, D_DSL_SHAPE, pos(L, s, e->tok), "Assign the results first: (a, b) = f(x).",
         "%s takes one tensor, but this call returns %d", what, v->n);
  return false;
}

static cJSON *new_attrs(lower *L) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToArray(L->pool, o);
  return o;
}

/* A binary elementwise function of two operands, either of which may be a
 * number: numbers fold, a number on the right is attrs.scalar, and one on the
 * left swaps (add, mul, max, min) or goes through neg/recip (sub, div). */
static opd ew_binary(lower *L, scope *s, hint *h, const token *at, const char *fn, opd a, opd b,
                     const char *at_a, const char *at_b, cJSON *attrs, int nkw, const kwarg *kw) {
  if (a.k == OPD_SCALAR && b.k == OPD_SCALAR && !nkw) {
    double x = a.num, y = b.num, r = 0;
    if (strcmp(fn, "add") == 0) r = x + y;
    else if (strcmp(fn, "sub") == 0) r = x - y;
    else if (strcmp(fn, "mul") == 0) r = x * y;
    else if (strcmp(fn, "div") == 0) r = x / y;
    else if (strcmp(fn, "max") == 0) r = x > y ? x : y;
    else if (strcmp(fn, "min") == 0) r = x < y ? x : y;
    if (!isfinite(r)) {
      lerr(L, D_BAD_NUMBER, pos(L, s, at), NULL, "%s of %g and %g is not a finite number", fn, x, y);
      return bad;
    }
    return scalar(r);
  }
  if (a.k == OPD_SCALAR && b.k == OPD_SCALAR) {
    lerr(L, D_DSL_SYNTAX, pos(L, s, at), NULL, "%s of two numbers takes no attributes", fn);
    return bad;
  }
  if (!attrs) attrs = new_attrs(L);
  if (a.k == OPD_TENSOR && b.k == OPD_TENSOR) {
    int in[2] = {a.vid, b.vid};
    const char *ia[2] = {at_a, at_b};
    return tensor(add_node(L, s, h, at, "Elementwise", fn, 2, in, ia, attrs, nkw, kw));
  }
  if (cJSON_GetObjectItemCaseSensitive(attrs, "scalar")) {
    lerr(L, D_BAD_ATTR, pos(L, s, at), NULL, "%s has a number operand and a scalar attribute", fn);
    return bad;
  }
  if (a.k == OPD_SCALAR) {
    opd t = b;
    const char *tat = at_b;
    if (strcmp(fn, "sub") == 0 || strcmp(fn, "div") == 0) {
      /* c - x = (-x) + c, c / x = recip(x) * c */
      bool sub = strcmp(fn, "sub") == 0;
      t = tensor(add_node(L, s, NULL, at, "Elementwise", sub ? "neg" : "recip", 1, &b.vid, &at_b, NULL, 0, NULL));
      fn = sub ? "add" : "mul";
    } else if (strcmp(fn, "add") != 0 && strcmp(fn, "mul") != 0 && strcmp(fn, "max") != 0 &&
               strcmp(fn, "min") != 0) {
      lerr(L, D_DSL_SYNTAX, pos(L, s, at), NULL, "%s takes its number operand second", fn);
      return bad;
    }
    b = a;
    a = t;
    at_a = tat;
  }
  cJSON_AddNumberToObject(attrs, "scalar", b.num);
  return tensor(add_node(L, s, h, at, "Elementwise", fn, 1, &a.vid, &at_a, attrs, nkw, kw));
}

/* key=value arguments as an attrs object (NULL after a diagnostic). */
static cJSON *kw_attrs(lower *L, const scope *s, const ex *e) {
  cJSON *attrs = new_attrs(L);
  for (int i = 0; i < e->nkw; i++) {
    const char *k = e->kw[i].tok->text;
    if (cJSON_GetObjectItemCaseSensitive(attrs, k)) {
      lerr(L, D_BAD_ATTR, pos(L, s, e->kw[i].tok), "Give each attribute once.", "attribute '%s' is given twice", k);
      return NULL;
    }
    cJSON_AddItemToObject(attrs, k, attr_json(L, s, e->kw[i].val));
  }
  return attrs;
}

/* A call of an op of frontend.def or an elementwise function of ewise.def. */
static opd lower_builtin(lower *L, scope *s, const ex *e, hint *h, const char *op, int fn) {
  if (e->nbind) {
    lerr(L, D_DSL_SYNTAX, pos(L, s, e->bind[0].tok), "Only calls of graphs bind dims: f<N=4>(x).",
         "%s takes no <dims>", e->s);
    return bad;
  }
  opd *args = ARENA_ARRAY(L->A, opd, e->n + 1);
  const char **at = ARENA_ARRAY(L->A, const char *, e->n + 1);
  int nscalar = 0;
  for (int i = 0; i < e->n; i++) {
    args[i] = eval(L, s, e->items[i], NULL);
    if (args[i].k == OPD_NONE) return bad;
    if (args[i].k == OPD_TUPLE && args[i].n == 1) args[i] = tensor(args[i].vids[0]);
    at[i] = pos(L, s, e->items[i]->tok);
    if (args[i].k == OPD_SCALAR) nscalar++;
  }
  cJSON *attrs = kw_attrs(L, s, e);
  if (!attrs) return bad;
  const char *fname = fn >= 0 ? ewise_name((ewise_fn)fn) : NULL;
  if (nscalar && fn >= 0 && ewise_arity((ewise_fn)fn) == 2 && e->n == 2 && args[0].k != OPD_TUPLE &&
      args[1].k != OPD_TUPLE)
    return ew_binary(L, s, h, e->tok, fname, args[0], args[1], at[0], at[1], attrs, e->nkw, e->kw);
  int *in = ARENA_ARRAY(L->A, int, e->n + 1);
  for (int i = 0; i < e->n; i++) {
    if (!want_tensor(L, s, e->items[i], &args[i], arena_printf(L->A, "argument %d of %s", i + 1, e->s)))
      return bad;
    in[i] = args[i].vid;
  }
  return tensor(add_node(L, s, h, e->tok, fname ? "Elementwise" : op, fname, e->n, in, at, attrs, e->nkw, e->kw));
}

/* ---- lowering: subgraph calls ------------------------------------------------------------ */

/* An sx of a size text, every name a PARAM (as fe_read reads sizes). */
static const sx *sx_of_text(arena *A, const char *text) {
  const char **names = ARENA_ARRAY(A, const char *, strlen(text) + 1);
  int n = 0;
  for (const char *p = text; *p;) {
    if (is_ident_start((unsigned char)*p)) {
      const char *b = p;
      while (is_ident_char((unsigned char)*p)) p++;
      const char *nm = arena_strndup(A, b, (size_t)(p - b));
      if (strcmp(nm, "floor") != 0) names[n++] = nm;
    } else {
      p++;
    }
  }
  names[n] = NULL;
  return sx_parse(A, text, names);
}

/* The shapes of values, as the Frontend's shape rules give them: a probe
 * reads the graph built so far with the values as its outputs.  Shapes are
 * allocated in PA.  False with the probe's errors when it fails. */
static bool probe_shapes(lower *L, arena *PA, int n, const int *vids, int *rank, const sx *const **shape) {
  int *outs = ARENA_ARRAY(PA, int, n + 1);
  int nouts = 0;
  for (int i = 0; i < n; i++) {
    const bval *b = &L->v[vids[i]];
    if (b->input >= 0) {
      const cJSON *sh = cJSON_GetObjectItemCaseSensitive(b->decl, "shape");
      int r = cJSON_GetArraySize(sh), k = 0;
      const sx **v = ARENA_ARRAY(PA, const sx *, r + 1);
      for (const cJSON *it = sh->child; it; it = it->next, k++) {
        v[k] = cJSON_IsNumber(it) ? sx_int(PA, (int64_t)it->valuedouble) : sx_of_text(PA, it->valuestring);
        if (!v[k]) v[k] = sx_param(PA, cJSON_IsString(it) ? it->valuestring : "?");
      }
      rank[i] = r;
      shape[i] = v;
      continue;
    }
    bool dup = false;
    for (int k = 0; k < nouts; k++) dup |= outs[k] == vids[i];
    if (!dup) outs[nouts++] = vids[i];
  }
  if (!nouts) return true;
  dsl_srcmap map = {0};
  cJSON *j = build_json(L, nouts, outs, &map);
  diag_list pdl;
  diag_init(&pdl);
  fe_graph *g = fe_read_json(PA, j, L->file, NULL, &pdl);
  cJSON_Delete(j);
  if (!g) {
    dsl_locate(&map, &pdl, 0);
    for (int i = 0; i < pdl.n; i++)
      if (diag_sev(pdl.items[i].id) == DIAG_ERROR)
        diag_report(L->dl, pdl.items[i].id, pdl.items[i].at, pdl.items[i].suggestion, "%s", pdl.items[i].why);
    diag_free(&pdl);
    return false;
  }
  diag_free(&pdl);
  for (int i = 0; i < n; i++) {
    if (L->v[vids[i]].input >= 0) continue;
    dtype dt;
    int t = fe_find_tensor(g, L->v[vids[i]].name);
    fe_tensor_value(g, t, &dt, &rank[i], &shape[i]);
  }
  return true;
}

/* Matches the declared types of graph ns->g (its parameters, or with
 * `results` its results) against actual shapes.  Pass 1 binds the dims that
 * are a whole axis; pass 2 checks every axis whose size is then known. */
static bool unify(lower *L, scope *ns, arena *PA, int n, const param *decl, const int *rank,
                  const sx *const *const *shape, const char *const *at, bool results) {
  const gdef *g = ns->g;
  /* derived symbols of result types: bound like dims, for this match only */
  int nder = 0;
  const char **der_name = ARENA_ARRAY(PA, const char *, 64), **der_text = ARENA_ARRAY(PA, const char *, 64);
  for (int i = 0; i < n; i++) {
    const ttype *t = decl[i].type;
    const char *what = results ? arena_printf(L->A, "result %d of '%s'", i + 1, g->name)
                               : arena_printf(L->A, "argument %d of '%s'", i + 1, g->name);
    if (t->rank != rank[i]) {
      lerr(L, D_DSL_SHAPE, at[i], NULL, "%s has shape %s, of rank %d, but '%s' declares %s: %s, of rank %d", what,
           sx_shape_str(PA, rank[i], shape[i]), rank[i], g->name, decl[i].name, type_text(L, t), t->rank);
      return false;
    }
    for (int k = 0; k < t->rank; k++) {
      const ex *e = t->dims[k];
      if (e->k != EX_NAME) continue;
      int d = find_dim(g, e->s);
      if (d >= 0 && !ns->dim[d]) ns->dim[d] = arena_strdup(L->A, sx_str(PA, shape[i][k]));
      if (d < 0 && results) {
        bool have = false;
        for (int q = 0; q < nder; q++) have |= strcmp(der_name[q], e->s) == 0;
        if (!have && nder < 64) der_name[nder] = e->s, der_text[nder++] = sx_str(PA, shape[i][k]);
      }
    }
  }
  for (int i = 0; i < n; i++) {
    const ttype *t = decl[i].type;
    for (int k = 0; k < t->rank; k++) {
      /* the declared size in main's terms, unless a name in it is unbound */
      strbuf sb = {0};
      ex_text(&sb, ns, t->dims[k], 0);
      const char *txt = sb_take_arena(&sb, PA);
      const sx *want = sx_of_text(PA, txt);
      bool known = want != NULL;
      for (int q = 0; known && q < nder; q++)
        if (sx_mentions(want, SXA_PARAM, der_name[q])) {
          const sx *dv = sx_of_text(PA, der_text[q]);
          if (!dv || !sx_equal(sx_param(PA, der_name[q]), want)) known = false;
          else want = dv;
        }
      for (int d = 0; known && d < g->ndims; d++)
        if (!ns->dim[d] && sx_mentions(want, SXA_PARAM, g->dim_tok[d]->text)) known = false;
      if (!known || sx_equal(want, shape[i][k])) continue;
      lerr(L, D_DSL_SHAPE, at[i], NULL, "%s %d of '%s' has shape %s, but '%s' declares %s: %s, so axis %d should be %s",
           results ? "result" : "argument", i + 1, g->name, sx_shape_str(PA, rank[i], shape[i]), g->name,
           decl[i].name, type_text(L, t), k, sx_str(PA, want));
      return false;
    }
  }
  return true;
}

/* Adds a runtime attribute to the signature; a subgraph's are merged into
 * main's (`dedup`), main's own are kept as written so that fe_read reports
 * a repetition. */
static void add_runtime(lower *L, const scope *s, const token *r, bool dedup) {
  for (int k = 0; dedup && k < L->nrt; k++)
    if (strcmp(L->rt[k], r->text) == 0) return;
  int n0 = L->nrt;
  ARENA_PUSH(L->A, L->rt, L->nrt, L->caprt, r->text);
  ARENA_PUSH(L->A, L->rt_at, n0, L->caprt_at, pos(L, s, r));
}

/* The chain of graphs from main to scope s, for the recursion diagnostic. */
static const char *call_chain(lower *L, const scope *s, const char *callee) {
  const char *c = callee;
  for (; s; s = s->parent) c = arena_printf(L->A, "%s -> %s", s->g->name, c);
  return c;
}

/* Inlines a call of graph g: binds its dims (explicit <N=...>, then the
 * argument shapes, then the defaults), lowers its statements in a scope of
 * its own, and returns its results. */
static opd inline_call(lower *L, scope *s, const ex *e, const gdef *g, hint *h) {
  const char *at = pos(L, s, e->tok);
  if (s->depth + 1 > DSL_MAX_DEPTH) {
    bool shadows = false;
    for (int i = 0; i < FE__COUNT; i++) shadows |= strcmp(fe_op_name((fe_op)i), g->name) == 0;
    for (int i = 0; i < EW__COUNT; i++) shadows |= strcmp(ewise_name((ewise_fn)i), g->name) == 0;
    lerr(L, D_RECURSION_DEPTH, at,
         shadows ? arena_printf(L->A, "Graph '%s' hides the op of the same name; rename the graph to call the op "
                                      "inside it.",
                                g->name)
                 : NULL,
         "calling '%s' here nests %d graph calls (%s); the limit is %d", g->name, s->depth + 1,
         call_chain(L, s, g->name), DSL_MAX_DEPTH);
    return bad;
  }
  if (e->nkw) {
    lerr(L, D_DSL_SYNTAX, pos(L, s, e->kw[0].tok), "Bind dims of a graph with f<N=4>(x); graphs take no attributes.",
         "graph '%s' takes tensors only", g->name);
    return bad;
  }
  if (e->n != g->nin) {
    lerr(L, D_DSL_SHAPE, at, NULL, "graph '%s' takes %d tensor%s, but the call gives %d", g->name, g->nin,
         g->nin == 1 ? "" : "s", e->n);
    return bad;
  }
  int *args = ARENA_ARRAY(L->A, int, e->n + 1);
  const char **arg_at = ARENA_ARRAY(L->A, const char *, e->n + 1);
  for (int i = 0; i < e->n; i++) {
    opd v = eval(L, s, e->items[i], NULL);
    if (v.k == OPD_NONE ||
        !want_tensor(L, s, e->items[i], &v, arena_printf(L->A, "argument %d of '%s'", i + 1, g->name)))
      return bad;
    args[i] = v.vid;
    arg_at[i] = pos(L, s, e->items[i]->tok);
  }
  scope ns = {0};
  ns.g = g;
  ns.parent = s;
  ns.depth = s->depth + 1;
  ns.main_at = s->depth == 0 ? at : s->main_at;
  ns.trail = s->depth == 0 ? arena_printf(L->A, ", inlined at %s", at)
                           : arena_printf(L->A, ", inlined at %s:%d:%d (from main at %s)", L->file, e->tok->line,
                                          e->tok->col, ns.main_at);
  ns.prefix = h && h->label ? h->label->text : g->name;
  if (h && h->label) h->label_used = true;
  ns.dim = ARENA_ARRAY(L->A, const char *, g->ndims + 1);
  for (int i = 0; i < e->nbind; i++) {
    int d = find_dim(g, e->bind[i].tok->text);
    if (d < 0) {
      lerr(L, D_UNKNOWN_NAME, pos(L, s, e->bind[i].tok), NULL, "graph '%s' has no dim '%s'", g->name,
           e->bind[i].tok->text);
      return bad;
    }
    if (ns.dim[d]) {
      lerr(L, D_DUPLICATE_NAME, pos(L, s, e->bind[i].tok), NULL, "dim '%s' is bound twice", e->bind[i].tok->text);
      return bad;
    }
    ns.dim[d] = size_text(L, s, e->bind[i].val);
  }
  for (int i = 0; i < g->nin; i++)
    for (int k = 0; k < g->in[i].type->rank; k++)
      if (!check_dims(L, &ns, g->in[i].type->dims[k], arena_printf(L->A, "parameter '%s'", g->in[i].name)))
        return bad;
  arena PA;
  arena_init(&PA);
  int *rank = ARENA_ARRAY(&PA, int, g->nin + 1);
  const sx *const **shape = ARENA_ARRAY(&PA, const sx *const *, g->nin + 1);
  bool ok = probe_shapes(L, &PA, g->nin, args, rank, shape) &&
            unify(L, &ns, &PA, g->nin, g->in, rank, (const sx *const *const *)shape, arg_at, false);
  arena_free(&PA);
  if (!ok) return bad;
  for (int d = 0; d < g->ndims; d++) {
    if (ns.dim[d]) continue;
    if (g->dim_default[d]) {
      ns.dim[d] = size_text(L, &ns, g->dim_default[d]);
      continue;
    }
    lerr(L, D_DSL_SHAPE, at,
         arena_printf(L->A, "Bind it at the call, %s<%s=...>(...), or give it a default: graph<%s=...>.", g->name,
                      g->dim_tok[d]->text, g->dim_tok[d]->text),
         "the shapes of the arguments do not fix dim '%s' of graph '%s'", g->dim_tok[d]->text, g->name);
    return bad;
  }
  for (int i = 0; i < g->nrt; i++) add_runtime(L, &ns, g->rt[i], true);
  for (int i = 0; i < g->nin; i++) {
    var v = {g->in[i].name, g->in[i].tok, false, args[i], 0};
    ARENA_PUSH(L->A, ns.vars, ns.nvars, ns.capvars, v);
  }
  int node0 = L->nn;
  const stmt *ret = NULL;
  for (int i = 0; i < g->nstmts; i++) {
    if (g->stmts[i].is_return) ret = &g->stmts[i];
    else if (!lower_stmt(L, &ns, &g->stmts[i])) return bad;
  }
  if (ret->nvals != g->nout) {
    lerr(L, D_DSL_SHAPE, pos(L, &ns, ret->tok), NULL, "graph '%s' declares %d result%s but returns %d values",
         g->name, g->nout, g->nout == 1 ? "" : "s", ret->nvals);
    return bad;
  }
  int *res = ARENA_ARRAY(L->A, int, g->nout + 1);
  const char **res_at = ARENA_ARRAY(L->A, const char *, g->nout + 1);
  for (int i = 0; i < g->nout; i++) {
    opd v = eval(L, &ns, ret->vals[i], NULL);
    if (v.k == OPD_NONE || !want_tensor(L, &ns, ret->vals[i], &v, "return")) return bad;
    res[i] = v.vid;
    res_at[i] = pos(L, &ns, ret->vals[i]->tok);
  }
  arena_init(&PA);
  rank = ARENA_ARRAY(&PA, int, g->nout + 1);
  shape = ARENA_ARRAY(&PA, const sx *const *, g->nout + 1);
  ok = probe_shapes(L, &PA, g->nout, res, rank, shape) &&
       unify(L, &ns, &PA, g->nout, g->out, rank, (const sx *const *const *)shape, res_at, true);
  arena_free(&PA);
  if (!ok) return bad;
  /* the statement's targets name the results made inside the call */
  if (h && !h->used && h->n == g->nout) {
    h->used = true;
    for (int i = 0; i < g->nout; i++) {
      bool again = false;
      for (int k = 0; k < i; k++) again |= res[k] == res[i];
      if (again || L->v[res[i]].producer < node0) continue;
      const char *t = h->targets[i].name;
      L->v[res[i]].name = s->prefix ? fresh(L, cat3(L, s->prefix, t)) : t;
      L->nd[L->v[res[i]].producer].out_at = pos(L, s, h->targets[i].tok);
    }
  }
  if (g->nout == 1) return tensor(res[0]);
  return (opd){OPD_TUPLE, -1, 0, g->nout, res};
}

/* ---- lowering: statements ---------------------------------------------------------------- */

static const char *nearest(const char *s, int n, const char *const *cands) {
  const char *best = NULL;
  int bd = 3;
  for (int i = 0; i < n; i++) {
    int d = ju_edit_distance(s, cands[i]);
    if (d < bd) bd = d, best = cands[i];
  }
  return best;
}

static opd eval_name(lower *L, scope *s, const ex *e) {
  if (strcmp(e->s, "true") == 0 || strcmp(e->s, "false") == 0) {
    lerr(L, D_DSL_SYNTAX, pos(L, s, e->tok), "true and false are attribute values (causal=true).",
         "expected a tensor, found %s", e->s);
    return bad;
  }
  const var *v = find_var(s, e->s);
  if (v) return v->scalar ? scalar(v->num) : tensor(v->vid);
  if (find_dim(s->g, e->s) >= 0) {
    lerr(L, D_UNKNOWN_NAME, pos(L, s, e->tok), "Sizes go in types and attributes, as shape=[M, N].",
         "'%s' is a dim of graph '%s', not a tensor", e->s, s->g->name);
    return bad;
  }
  const char **cands = ARENA_ARRAY(L->A, const char *, s->nvars + 1);
  for (int i = 0; i < s->nvars; i++) cands[i] = s->vars[i].name;
  const char *near = nearest(e->s, s->nvars, cands);
  lerr(L, D_UNKNOWN_NAME, pos(L, s, e->tok),
       near ? arena_printf(L->A, "Did you mean '%s'?", near) : "Define it by an earlier assignment, or as a parameter.",
       "unknown name '%s' in graph '%s'", e->s, s->g->name);
  return bad;
}

static opd eval_call(lower *L, scope *s, const ex *e, hint *h) {
  const gdef *g = find_graph(L, e->s);
  if (g) return inline_call(L, s, e, g, h);
  for (int i = 0; i < FE__COUNT; i++)
    if (i != FE_ELEMENTWISE && strcmp(fe_op_name((fe_op)i), e->s) == 0) return lower_builtin(L, s, e, h, e->s, -1);
  for (int i = 0; i < EW__COUNT; i++)
    if (strcmp(ewise_name((ewise_fn)i), e->s) == 0) return lower_builtin(L, s, e, h, NULL, i);
  int n = 0;
  const char **cands = ARENA_ARRAY(L->A, const char *, L->ngraphs + FE__COUNT + EW__COUNT + 1);
  for (int i = 0; i < L->ngraphs; i++) cands[n++] = L->graphs[i].name;
  for (int i = 0; i < FE__COUNT; i++) cands[n++] = fe_op_name((fe_op)i);
  for (int i = 0; i < EW__COUNT; i++) cands[n++] = ewise_name((ewise_fn)i);
  const char *near = nearest(e->s, n, cands);
  lerr(L, D_UNKNOWN_NAME, pos(L, s, e->tok),
       near ? arena_printf(L->A, "Did you mean '%s'?", near)
            : "Call a graph of the file, an op (GEMM, Conv2D, ...) or an elementwise function (relu, add, ...); "
              "docs/dsl.md lists them.",
       "'%s' is neither a graph of the file nor an op", e->s);
  return bad;
}

static opd eval(lower *L, scope *s, const ex *e, hint *h) {
  static const char *const binfn[] = {['+'] = "add", ['-'] = "sub", ['*'] = "mul", ['/'] = "div"};
  switch (e->k) {
  case EX_NUM: return scalar(e->num);
  case EX_NAME: return eval_name(L, s, e);
  case EX_CALL: return eval_call(L, s, e, h);
  case EX_NEG: {
    opd a = eval(L, s, e->a, NULL);
    if (a.k == OPD_SCALAR) return scalar(-a.num);
    if (a.k == OPD_NONE || !want_tensor(L, s, e->a, &a, "'-'")) return bad;
    const char *at = pos(L, s, e->a->tok);
    return tensor(add_node(L, s, h, e->tok, "Elementwise", "neg", 1, &a.vid, &at, NULL, 0, NULL));
  }
  case EX_BIN: {
    if (e->op == '%') {
      lerr(L, D_DSL_SYNTAX, pos(L, s, e->tok), NULL, "'%%' is for sizes; tensors have no remainder");
      return bad;
    }
    opd a = eval(L, s, e->a, NULL);
    if (a.k == OPD_NONE) return bad;
    opd b = eval(L, s, e->b, NULL);
    if (b.k == OPD_NONE) return bad;
    if ((a.k != OPD_SCALAR && !want_tensor(L, s, e->a, &a, arena_printf(L->A, "'%c'", e->op))) ||
        (b.k != OPD_SCALAR && !want_tensor(L, s, e->b, &b, arena_printf(L->A, "'%c'", e->op))))
      return bad;
    return ew_binary(L, s, h, e->tok, binfn[(unsigned char)e->op], a, b, pos(L, s, e->a->tok), pos(L, s, e->b->tok),
                     NULL, 0, NULL);
  }
  case EX_STR:
  case EX_LIST:
    lerr(L, D_DSL_SYNTAX, pos(L, s, e->tok), "Strings and lists are attribute values (key=value).",
         "expected a tensor, found %s", e->k == EX_STR ? "a string" : "a list");
    return bad;
  }
  return bad;
}

static bool is_defined(lower *L, const scope *s, const param *t) {
  const var *v = find_var(s, t->name);
  if (!v) return false;
  lerr(L, D_DUPLICATE_NAME, pos(L, s, t->tok), "Every name is assigned once; choose a new name.",
       "'%s' is already defined (line %d)", t->name, v->tok->line);
  return true;
}

static bool lower_assign(lower *L, scope *s, const stmt *st) {
  for (int i = 0; i < st->ntargets; i++) {
    if (is_defined(L, s, &st->targets[i])) return false;
    for (int k = 0; k < i; k++)
      if (strcmp(st->targets[k].name, st->targets[i].name) == 0) {
        lerr(L, D_DUPLICATE_NAME, pos(L, s, st->targets[i].tok), NULL, "'%s' is assigned twice here",
             st->targets[i].name);
        return false;
      }
  }
  hint h = {st->ntargets, st->targets, st->label, false, false};
  opd v = eval(L, s, st->value, &h);
  if (v.k == OPD_NONE) return false;
  if (st->label && !h.label_used) {
    lerr(L, D_DSL_SYNTAX, pos(L, s, st->label), "A label names the node of an op call: label: y = relu(x).",
         "label '%s' names no node: the statement computes no op", st->label->text);
    return false;
  }
  int n = st->ntargets;
  int nres = v.k == OPD_TUPLE ? v.n : 1;
  if (nres != n) {
    lerr(L, D_DSL_SHAPE, pos(L, s, st->value->tok),
         n == 1 ? "Assign every result: (a, b) = f(x)." : "Assign as many targets as the call returns.",
         "the value has %d result%s, assigned to %d target%s", nres, nres == 1 ? "" : "s", n, n == 1 ? "" : "s");
    return false;
  }
  for (int i = 0; i < n; i++) {
    const param *t = &st->targets[i];
    var nv = {t->name, t->tok, v.k == OPD_SCALAR, v.k == OPD_TUPLE ? v.vids[i] : v.vid, v.num};
    if (t->type) {
      const char *why = nv.scalar ? "a number has no tensor type"
                        : L->v[nv.vid].input >= 0 ? "it is a parameter, which has its type already"
                        : L->v[nv.vid].decl       ? "its value has a declared type already"
                                                  : NULL;
      if (why) {
        lerr(L, D_DSL_SHAPE, pos(L, s, t->tok), "Declare the type of a value computed by an op.",
             "'%s' cannot take a type: %s", t->name, why);
        return false;
      }
      L->v[nv.vid].decl = type_json(L, s, t->type);
      L->v[nv.vid].at = pos(L, s, t->tok);
    }
    ARENA_PUSH(L->A, s->vars, s->nvars, s->capvars, nv);
  }
  return true;
}

static bool lower_stmt(lower *L, scope *s, const stmt *st) { return lower_assign(L, s, st); }

/* main's return: each value becomes the signature output of its position,
 * renamed to the result's name, or copied by a Cast when it is a parameter
 * or already another result. */
static bool lower_main_return(lower *L, scope *s, const stmt *st) {
  const gdef *g = s->g;
  if (st->nvals != g->nout) {
    lerr(L, D_DSL_SHAPE, pos(L, s, st->tok), NULL, "main declares %d result%s but returns %d values", g->nout,
         g->nout == 1 ? "" : "s", st->nvals);
    return false;
  }
  int *vals = ARENA_ARRAY(L->A, int, g->nout + 1);
  for (int i = 0; i < g->nout; i++) {
    opd v = eval(L, s, st->vals[i], NULL);
    if (v.k == OPD_NONE || !want_tensor(L, s, st->vals[i], &v, "return")) return false;
    vals[i] = v.vid;
  }
  for (int i = 0; i < g->nout; i++) {
    const char *o = g->out[i].name;
    int vid = vals[i];
    for (int w = 0; w < L->nv; w++)
      if (w != vid && strcmp(L->v[w].name, o) == 0) L->v[w].name = fresh(L, o);
    if (L->v[vid].input < 0 && L->v[vid].output < 0) {
      L->v[vid].name = o;
      L->v[vid].output = i;
      continue;
    }
    cJSON *attrs = new_attrs(L);
    cJSON_AddStringToObject(attrs, "to", g->out[i].type->dtype);
    const char *at = pos(L, s, st->vals[i]->tok);
    int c = add_node(L, s, NULL, st->vals[i]->tok, "Cast", NULL, 1, &vid, &at, attrs, 0, NULL);
    L->nd[L->nn - 1].name = fresh(L, cat3(L, o, "copy"));
    L->v[c].name = o;
    L->v[c].output = i;
  }
  return true;
}

static bool lower_main(lower *L) {
  const gdef *g = L->main;
  scope s = {g, NULL, 0, "", NULL, NULL, NULL, 0, 0, NULL};
  /* a default of main's dim changes nothing (its dims stay symbolic): one
   * over other dims would read as binding the dim to it, and does not */
  for (int d = 0; d < g->ndims; d++)
    if (g->dim_default[d] && g->dim_default[d]->k != EX_NUM) {
      strbuf t = {0};
      ex_text(&t, NULL, g->dim_default[d], 0);
      lerr(L, D_MAIN_DIM_EXPR, pos(L, &s, g->dim_tok[d]), NULL,
           "main's dim '%s' has the default %s, which does not bind it: main's dims stay symbolic, so '%s' is a "
           "size of its own, unrelated to %s, in every shape check",
           g->dim_tok[d]->text, sb_str(&t), g->dim_tok[d]->text, sb_str(&t));
      sb_free(&t);
      return false;
    }
  L->in_vid = ARENA_ARRAY(L->A, int, g->nin + 1);
  for (int i = 0; i < g->nin; i++) {
    const param *p = &g->in[i];
    for (int k = 0; k < p->type->rank; k++)
      if (!check_dims(L, &s, p->type->dims[k], arena_printf(L->A, "input '%s'", p->name))) return false;
    int vid = new_val(L, p->name, -1);
    L->v[vid].input = i;
    L->v[vid].decl = type_json(L, &s, p->type);
    L->in_vid[i] = vid;
    var v = {p->name, p->tok, false, vid, 0};
    ARENA_PUSH(L->A, s.vars, s.nvars, s.capvars, v);
  }
  for (int i = 0; i < g->nrt; i++) add_runtime(L, &s, g->rt[i], false);
  for (int i = 0; i < g->nstmts; i++) {
    const stmt *st = &g->stmts[i];
    if (!(st->is_return ? lower_main_return(L, &s, st) : lower_stmt(L, &s, st))) return false;
  }
  return true;
}

/* The graph's name: the file's base name without ".dlc". */
static const char *base_name(arena *A, const char *file) {
  const char *b = strrchr(file, '/');
  b = b ? b + 1 : file;
  size_t n = strlen(b);
  if (n > 4 && strcmp(b + n - 4, ".dlc") == 0) n -= 4;
  return arena_strndup(A, b, n);
}

cJSON *dsl_parse(arena *A, const char *text, const char *file, dsl_srcmap **map, diag_list *dl) {
  if (map) *map = NULL;
  token *toks;
  int ntoks;
  if (!lex(A, text, file, dl, &toks, &ntoks)) return NULL;
  parser P = {A, file, dl, toks, 0, ntoks, 0, false};
  int ng = 0;
  gdef *gs = NULL;
  const char *meta[2] = {NULL, NULL};
  const token *meta_tok[2] = {NULL, NULL};
  if (!parse_file(&P, &ng, &gs, meta, meta_tok)) return NULL;
  lower L = {0};
  L.A = A;
  L.dl = dl;
  L.file = file;
  L.gname = meta[0] ? meta[0] : base_name(A, file);
  L.gname_at = meta_tok[0] ? arena_printf(A, "%s:%d:%d", file, meta_tok[0]->line, meta_tok[0]->col)
                           : arena_printf(A, "%s:1:1", file);
  L.description = meta[1];
  L.ngraphs = ng;
  L.graphs = gs;
  L.main = find_graph(&L, "main");
  if (!L.main) {
    report_at(A, dl, D_NO_MAIN, file, toks[0].line, toks[0].col, NULL, "%s has no graph named 'main'%s",
              file, ng ? "" : " (it defines no graph)");
    return NULL;
  }
  for (int i = 0; i < ntoks; i++)
    if (toks[i].kind == TK_IDENT) ns_add(A, &L.taken, toks[i].text);
  L.pool = cJSON_CreateArray();
  cJSON *j = NULL;
  if (lower_main(&L)) {
    dsl_srcmap *m = ARENA_NEW(A, dsl_srcmap);
    j = build_json(&L, 0, NULL, m);
    if (map) *map = m;
  }
  cJSON_Delete(L.pool);
  return j;
}

void dsl_locate(const dsl_srcmap *map, diag_list *dl, int from) {
  if (!map) return;
  for (int i = from; i < dl->n; i++) {
    const char *at = dl->items[i].at;
    int best = -1;
    size_t bestlen = 0;
    for (int k = 0; k < map->n; k++) {
      size_t len = strlen(map->e[k].path);
      char c = at[len < strlen(at) ? len : strlen(at)];
      if (len > bestlen && strncmp(at, map->e[k].path, len) == 0 && (c == 0 || c == '.' || c == '[' || c == ' '))
        best = k, bestlen = len;
    }
    if (best < 0) continue;
    const char *loc = map->e[best].at;
    size_t n = strlen(loc) + strlen(at) + 4;
    char *s = malloc(n);
    if (!s) dlc_die_oom();
    snprintf(s, n, "%s (%s)", loc, at);
    free(dl->items[i].at);
    dl->items[i].at = s;
  }
}

bool dsl_is_dsl_path(const char *path) {
  size_t n = strlen(path);
  return n > 4 && strcmp(path + n - 4, ".dlc") == 0;
}

cJSON *dsl_read_graph_file(arena *A, const char *path, const char *at, dsl_srcmap **map, diag_list *dl) {
  if (map) *map = NULL;
  char *text = ju_read_file(path, dl, at);
  if (!text) return NULL;
  cJSON *j = dsl_parse_graph_text(A, text, path, map, dl);
  free(text);
  return j;
}

cJSON *dsl_parse_graph_text(arena *A, const char *text, const char *path, dsl_srcmap **map, diag_list *dl) {
  if (map) *map = NULL;
  return dsl_is_dsl_path(path) ? dsl_parse(A, text, path, map, dl) : ju_parse(text, dl, path);
}

/* ---- decompile ------------------------------------------------------------------------------ */

/* A name the DSL can spell: an identifier of at most 64 characters that is
 * not reserved.  Otherwise a diagnostic at `at`. */
static bool spellable(diag_list *dl, const char *name, const char *at, const char *what) {
  bool ident = is_ident_start((unsigned char)name[0]) && strlen(name) <= 64;
  for (const char *p = name; ident && *p; p++) ident = is_ident_char((unsigned char)*p);
  if (ident && !is_reserved(name)) return true;
  diag_report(dl, D_NOT_EXPRESSIBLE, at, NULL, "the %s '%s' %s", what, name,
              ident ? "is a DSL reserved word" : "is not a DSL identifier");
  return false;
}

static void put_number(strbuf *sb, double v) {
  if (v == floor(v) && fabs(v) < 1e15) {
    sb_printf(sb, "%lld", (long long)v);
    return;
  }
  char buf[48];
  for (int p = 15; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, v);
    if (strtod(buf, NULL) == v) break;
  }
  sb_puts(sb, buf);
}

/* Whether `s` reads back, unquoted, as the JSON string s. */
static bool bare_ok(const char *s) {
  arena A;
  arena_init(&A);
  diag_list dl;
  diag_init(&dl);
  token *toks;
  int n;
  bool ok = false;
  if (lex(&A, s, "", &dl, &toks, &n)) {
    parser P = {&A, "", &dl, toks, 0, n, 0, false};
    const ex *e = parse_expr(&P);
    if (e && peek(&P, 0)->kind == TK_EOF) {
      lower L = {0};
      L.A = &A;
      cJSON *j = attr_json(&L, NULL, e);
      ok = cJSON_IsString(j) && strcmp(j->valuestring, s) == 0;
      cJSON_Delete(j);
    }
  }
  diag_free(&dl);
  arena_free(&A);
  return ok;
}

/* "text", with \" \\ \n \t escaped; other control characters have no
 * spelling. */
static bool put_quoted(strbuf *sb, const char *s, const char *at, diag_list *dl) {
  for (const char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t') {
      diag_report(dl, D_NOT_EXPRESSIBLE, at, "DSL strings hold no control characters other than newlines and tabs.",
                  "the string \"%s\" has a control character", s);
      return false;
    }
  sb_puts(sb, "\"");
  for (const char *p = s; *p; p++) {
    if (*p == '\n') sb_puts(sb, "\\n");
    else if (*p == '\t') sb_puts(sb, "\\t");
    else sb_printf(sb, "%s%c", *p == '"' || *p == '\\' ? "\\" : "", *p);
  }
  sb_puts(sb, "\"");
  return true;
}

/* An attribute value or size, as the DSL spells it. */
static bool put_value(strbuf *sb, const cJSON *v, const char *at, diag_list *dl) {
  if (cJSON_IsNumber(v)) {
    put_number(sb, v->valuedouble);
  } else if (cJSON_IsBool(v)) {
    sb_puts(sb, cJSON_IsTrue(v) ? "true" : "false");
  } else if (cJSON_IsString(v)) {
    const char *s = v->valuestring, *d = dtype_to_dsl(s);
    if (d) {
      sb_puts(sb, d);
    } else if (bare_ok(s)) {
      sb_puts(sb, s);
    } else if (!put_quoted(sb, s, at, dl)) {
      return false;
    }
  } else if (cJSON_IsArray(v)) {
    sb_puts(sb, "[");
    for (const cJSON *it = v->child; it; it = it->next) {
      if (!put_value(sb, it, at, dl)) return false;
      if (it->next) sb_puts(sb, ", ");
    }
    sb_puts(sb, "]");
  } else {
    diag_report(dl, D_NOT_EXPRESSIBLE, at, NULL, "%s has no DSL spelling", ju_type_name(v));
    return false;
  }
  return true;
}

/* name: dtype[sizes] modifiers */
static bool put_param(strbuf *sb, const cJSON *tens, const cJSON *entry, const char *name, bool output, diag_list *dl) {
  const cJSON *decl = cJSON_GetObjectItemCaseSensitive(tens, name);
  const cJSON *dt = cJSON_GetObjectItemCaseSensitive(decl, "dtype");
  const char *d = cJSON_IsString(dt) ? dtype_to_dsl(dt->valuestring) : NULL;
  sb_printf(sb, "%s: %s[", name, d ? d : "?");
  const cJSON *shape = cJSON_GetObjectItemCaseSensitive(decl, "shape");
  for (const cJSON *it = shape ? shape->child : NULL; it; it = it->next) {
    if (!put_value(sb, it, name, dl)) return false;
    if (it->next) sb_puts(sb, ", ");
  }
  sb_puts(sb, "]");
  static const char *const keys[] = {"role", "mutability", "storage"};
  const char *defaults[] = {"data", output ? "mutable" : "immutable", "arena"};
  for (int k = 0; entry && k < 3; k++) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(entry, keys[k]);
    if (cJSON_IsString(m) && strcmp(m->valuestring, defaults[k]) != 0) sb_printf(sb, " %s", m->valuestring);
  }
  const cJSON *lay = cJSON_GetObjectItemCaseSensitive(decl, "layout");
  if (cJSON_IsString(lay)) {
    sb_puts(sb, " layout=");
    const cJSON *q = lay;
    if (!spellable(dl, q->valuestring, name, "layout")) return false;
    sb_puts(sb, q->valuestring);
  }
  return true;
}

char *dsl_decompile(const cJSON *j, const fe_graph *g, diag_list *dl) {
  const cJSON *sig = cJSON_GetObjectItemCaseSensitive(j, "signature");
  const cJSON *tens = cJSON_GetObjectItemCaseSensitive(j, "tensors");
  const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(j, "graph");
  const cJSON *ins = cJSON_GetObjectItemCaseSensitive(sig, "inputs");
  const cJSON *outs = cJSON_GetObjectItemCaseSensitive(sig, "outputs");
  bool ok = true;
  for (int i = 0; i < g->ndims; i++) ok &= spellable(dl, g->dims[i], "signature.dims", "dim");
  for (int i = 0; i < g->ntensors; i++) ok &= spellable(dl, g->tensors[i].name, g->tensors[i].at, "tensor");
  for (int i = 0; i < g->nnodes; i++)
    if (strcmp(g->nodes[i].name, g->tensors[g->nodes[i].out[0]].name) != 0)
      ok &= spellable(dl, g->nodes[i].name, g->nodes[i].at, "node name");
  /* the layout pass's tensor fields (docs/layout.md) have no DSL syntax */
  for (int i = 0; i < g->ntensors; i++) {
    const fe_tensor *t = &g->tensors[i];
    const char *f = t->nlayout_perm ? "layout_perm" : t->layout_tag ? "layout_tag"
                  : t->has_transform_meta ? "transform_meta" : t->coaccess_block ? "coaccess_block" : NULL;
    if (!f) continue;
    diag_report(dl, D_NOT_EXPRESSIBLE, t->at, "Keep a graph with the layout pass's tensor fields in JSON, or drop the fields.",
                "tensor '%s' has %s, which the DSL cannot write", t->name, f);
    ok = false;
  }
  if (!ok) return NULL;
  strbuf sb = {0};
  sb_puts(&sb, "name ");
  ok = put_quoted(&sb, g->name, "name", dl);
  const cJSON *desc = cJSON_GetObjectItemCaseSensitive(j, "description");
  if (ok && cJSON_IsString(desc)) {
    sb_puts(&sb, "\ndescription ");
    ok = put_quoted(&sb, desc->valuestring, "description", dl);
  }
  sb_puts(&sb, "\ngraph");
  for (int i = 0; i < g->ndims; i++) sb_printf(&sb, "%s%s", i ? ", " : "<", g->dims[i]);
  sb_puts(&sb, g->ndims ? "> main(" : " main(");
  for (int i = 0; ok && i < g->nin; i++) {
    if (i) sb_puts(&sb, ", ");
    ok = put_param(&sb, tens, cJSON_GetArrayItem(ins, i), g->tensors[g->inputs[i]].name, false, dl);
  }
  sb_puts(&sb, ") -> (");
  for (int i = 0; ok && i < g->nout; i++) {
    if (i) sb_puts(&sb, ", ");
    ok = put_param(&sb, tens, cJSON_GetArrayItem(outs, i), g->tensors[g->outputs[i]].name, true, dl);
  }
  sb_puts(&sb, ")");
  for (int i = 0; i < g->nsig_attrs; i++) sb_printf(&sb, "%s%s", i ? ", " : " runtime(", g->sig_attrs[i]);
  sb_puts(&sb, g->nsig_attrs ? ") {\n" : " {\n");
  for (int i = 0; ok && i < g->nnodes; i++) {
    const fe_node *nd = &g->nodes[i];
    const fe_tensor *out = &g->tensors[nd->out[0]];
    const cJSON *jn = cJSON_GetArrayItem(nodes, nd->src);
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(jn, "attrs");
    sb_puts(&sb, "  ");
    if (strcmp(nd->name, out->name) != 0) sb_printf(&sb, "%s: ", nd->name);
    if (out->declared && out->sig_output < 0) {
      ok = put_param(&sb, tens, NULL, out->name, false, dl);
    } else {
      sb_puts(&sb, out->name);
    }
    bool ew = nd->op == FE_ELEMENTWISE;
    sb_printf(&sb, " = %s(", ew ? ewise_name(nd->fn) : fe_op_name(nd->op));
    for (int k = 0; k < nd->nin; k++) sb_printf(&sb, "%s%s", k ? ", " : "", g->tensors[nd->in[k]].name);
    const cJSON *scalar = ew && ewise_arity(nd->fn) == 2 ? cJSON_GetObjectItemCaseSensitive(attrs, "scalar") : NULL;
    if (scalar) {
      sb_puts(&sb, ", ");
      put_number(&sb, scalar->valuedouble);
    }
    for (const cJSON *a = attrs ? attrs->child : NULL; ok && a; a = a->next) {
      if (a == scalar) continue;
      sb_printf(&sb, ", %s=", a->string);
      ok = put_value(&sb, a, nd->at, dl);
    }
    sb_puts(&sb, ")\n");
  }
  sb_puts(&sb, "  return");
  for (int i = 0; i < g->nout; i++) sb_printf(&sb, "%s%s", i ? ", " : " ", g->tensors[g->outputs[i]].name);
  sb_puts(&sb, "\n}\n");
  if (!ok) {
    sb_free(&sb);
    return NULL;
  }
  return sb_take(&sb);
}
