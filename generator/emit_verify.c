/* The cu stage's verifier (emit.h, emit_verify_cu): the renderers mark
 * each GPU IR statement they render in the op's render log (emit_int.h);
 * the log is checked against every kernel of the op.  A statement no
 * renderer marked is GPU IR the CUDA does not execute; a token consumed
 * before the statement that produces it was rendered is CUDA that runs
 * the IR out of order. */
#include <stdlib.h>
#include <string.h>

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
  return ok;
}
