/* Growable strings (see strbuf.h). */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

static void reserve(strbuf *s, size_t k) {
  if (s->n + k + 1 <= s->cap) return;
  size_t nc = (s->cap ? s->cap * 2 : 256) + k;
  char *np = realloc(s->p, nc);
  if (!np) dlc_die_oom();
  s->p = np;
  s->cap = nc;
}

void sb_puts(strbuf *s, const char *t) {
  size_t k = strlen(t);
  reserve(s, k);
  memcpy(s->p + s->n, t, k + 1);
  s->n += k;
}

void sb_printf(strbuf *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  reserve(s, (size_t)k);
  va_start(ap, fmt);
  vsnprintf(s->p + s->n, (size_t)k + 1, fmt, ap);
  va_end(ap);
  s->n += (size_t)k;
}

const char *sb_str(strbuf *s) {
  if (!s->p) reserve(s, 0), s->p[0] = 0;
  return s->p;
}

char *sb_take_arena(strbuf *s, arena *A) {
  char *r = arena_strdup(A, sb_str(s));
  sb_free(s);
  return r;
}

char *sb_take(strbuf *s) {
  sb_str(s);
  char *r = s->p;
  memset(s, 0, sizeof *s);
  return r;
}

void sb_free(strbuf *s) {
  free(s->p);
  memset(s, 0, sizeof *s);
}
