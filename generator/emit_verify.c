/* The cu stage's verifier (emit.h, emit_verify_cu): the renderers mark
 * each GPU IR statement they render in the op's render log (emit_int.h);
 * the log is checked against every kernel of the op.  A statement no
 * renderer marked is GPU IR the CUDA does not execute; a token consumed
 * before the statement that produces it was rendered is CUDA that runs
 * the IR out of order. */
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "diag.h"
#include "emit_int.h"

void render_mark_stmt(render_log *log, const gpu_kernel *k, const gpu_stmt *st) {
  DLC_ASSERT(log && st >= k->st && st < k->st + k->nst);
  render_mark m = {k, (int)(st - k->st), log->fn, RENDER_FN_KERNEL};
  ARENA_PUSH(log->A, log->m, log->n, log->cap, m);
}

void render_mark_call(render_log *log, const gpu_kernel *k, render_fn fn) {
  DLC_ASSERT(log && fn != RENDER_FN_KERNEL && log->fn == RENDER_FN_KERNEL);
  render_mark m = {k, -1, log->fn, fn};
  ARENA_PUSH(log->A, log->m, log->n, log->cap, m);
}

void render_in_fn(render_log *log, render_fn fn) { log->fn = fn; }

void render_log_op(render_log *log, const gpu_kernel *k, const char *name, const char *text) {
  render_op o = {k, name, text};
  ARENA_PUSH(log->A, log->ops, log->nops, log->cap_ops, o);
}

/* ---- what the templates read from the Op ----------------------------------------------- */

typedef struct op_read {
  const char *tpl, *name, *when;
} op_read;

static const op_read OP_READS[] = {
#define X(tpl, name, when) {tpl, name, when},
#include "op_reads.def"
#undef X
};

static bool is_ident(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/* Whether the line [l, e) declares something: it starts (after its
 * indentation) with static, using, struct or template. */
static bool declares(const char *l, const char *e) {
  while (l < e && *l == ' ') l++;
  static const char *const KW[] = {"static ", "using ", "struct ", "template "};
  for (size_t i = 0; i < sizeof KW / sizeof *KW; i++)
    if ((size_t)(e - l) >= strlen(KW[i]) && memcmp(l, KW[i], strlen(KW[i])) == 0) return true;
  return false;
}

/* The first place in a declaring line of the Op's text where `name` is
 * declared: the word followed by one of = ( { ; < , (a constant, a
 * function, a type), not named through the plan (Plan::name); NULL when
 * there is none.  *after: past the word. */
static const char *declared_at(const char *text, const char *name, const char **after) {
  size_t n = strlen(name);
  for (const char *l = text; *l;) {
    const char *e = strchr(l, '\n');
    if (!e) e = l + strlen(l);
    if (declares(l, e))
      for (const char *p = l; p + n <= e; p++) {
        if (memcmp(p, name, n) != 0 || (p > l && is_ident(p[-1])) || (p + n < e && is_ident(p[n]))) continue;
        /* a shared template's `using Plan::X` declares X only where the plan does */
        if (p - l >= 6 && memcmp(p - 6, "Plan::", 6) == 0) continue;
        const char *q = p + n;
        while (q < e && *q == ' ') q++;
        if (q < e && strchr("=({;<,", *q)) {
          *after = q;
          return p;
        }
      }
    l = *e ? e + 1 : e;
  }
  return NULL;
}

/* Whether the Op declares `name` as a type (using, struct: the template
 * detects it), or as a constant that is true (or nonzero). */
static bool op_true(const char *text, const char *name) {
  const char *q, *p = declared_at(text, name, &q);
  if (!p) return false;
  if ((p - text >= 6 && memcmp(p - 6, "using ", 6) == 0) || (p - text >= 7 && memcmp(p - 7, "struct ", 7) == 0)) return true;
  if (*q != '=') return false;
  q++;
  while (*q == ' ') q++;
  if (strncmp(q, "true", 4) == 0 && !is_ident(q[4])) return true;
  return *q >= '1' && *q <= '9';
}

/* Whether `when` ("" or "A|B") holds for the Op. */
static bool op_when(const char *text, const char *when) {
  if (!*when) return true;
  char one[64];
  for (const char *p = when; *p;) {
    size_t n = strcspn(p, "|");
    if (n < sizeof one) {
      memcpy(one, p, n), one[n] = 0;
      if (op_true(text, one)) return true;
    }
    p += n + (p[n] == '|');
  }
  return false;
}

/* Each read of the Op's template (op_reads.def) that holds for it is a
 * name the Op declares. */
static bool verify_op_reads(const render_op *o, diag_list *dl) {
  const char *tpl = algo_template(o->k->algo);
  bool ok = true;
  for (size_t i = 0; i < sizeof OP_READS / sizeof *OP_READS; i++) {
    const op_read *r = &OP_READS[i];
    const char *q;
    if (strcmp(r->tpl, tpl) != 0 || !op_when(o->text, r->when) || declared_at(o->text, r->name, &q)) continue;
    diag_report(dl, D_INTERNAL, "cu", NULL, "%s (templates/%s.cuh) does not declare %s, which the template reads%s%s%s",
                o->name, tpl, r->name, *r->when ? " when " : "", r->when, *r->when ? " holds" : "");
    ok = false;
  }
  return ok;
}

/* Appends k's statements rendered in function fn to order (the ones seen
 * first), a called function's where it is called. */
static void order_fn(const render_log *log, const gpu_kernel *k, render_fn fn, int depth, bool *seen, int *order,
                     int *n) {
  for (int i = 0; i < log->n && depth < RENDER_FN__COUNT; i++) {
    const render_mark *m = &log->m[i];
    if (m->k != k || m->fn != fn) continue;
    if (m->st < 0) order_fn(log, k, m->call, depth + 1, seen, order, n);
    else if (!seen[m->st]) seen[m->st] = true, order[(*n)++] = m->st;
  }
}

/* Kernel k's statements in the order the kernel function runs them, into
 * order[0..nst); returns the first statement it never runs, or -1. */
static int render_order(const render_log *log, const gpu_kernel *k, int *order) {
  bool *seen = ARENA_ARRAY(log->A, bool, k->nst + 1);
  memset(seen, 0, sizeof *seen * (size_t)(k->nst + 1));
  int n = 0;
  order_fn(log, k, RENDER_FN_KERNEL, 0, seen, order, &n);
  for (int i = 0; i < k->nst; i++)
    if (!seen[i]) return i;
  return -1;
}

static bool verify_kernel_cu(const render_log *log, const gpu_kernel *k, diag_list *dl) {
  int *order = ARENA_ARRAY(log->A, int, k->nst + 1);
  int missing = render_order(log, k, order);
  if (missing >= 0) {
    const gpu_stmt *s = &k->st[missing];
    diag_report(dl, D_INTERNAL, "cu", NULL, "kernel %s: statement %d (%s %s) of its GPU IR was not rendered", k->name,
                missing, gpuir_stmt_name(s->k), s->what ? s->what : "");
    return false;
  }
  return gpuir_verify_token_order(k, order, "cu", dl);
}

bool emit_verify_cu(const emit_ctx *c, const emit_op *eo, diag_list *dl) {
  if (!c->log) {
    diag_report(dl, D_INTERNAL, "cu", NULL, "op %s: no render log (emit_op_cu did not run)", eo->op->name);
    return false;
  }
  bool ok = true;
  for (int i = 0; i < eo->ninst; i++) {
    for (const gpu_kernel *k = eo->inst[i].k; k; k = k->next) {
      ok &= verify_kernel_cu(c->log, k, dl);
      if (k->reduce) ok &= verify_kernel_cu(c->log, k->reduce, dl);
    }
    if (eo->inst[i].k->sm90a) ok &= verify_kernel_cu(c->log, eo->inst[i].k->sm90a, dl);
  }
  for (int i = 0; i < eo->ngiven; i++) ok &= verify_kernel_cu(c->log, eo->given[i].k, dl); /* its sm80 kernel alone */
  for (int i = 0; i < c->log->nops; i++) ok &= verify_op_reads(&c->log->ops[i], dl);
  return ok;
}
