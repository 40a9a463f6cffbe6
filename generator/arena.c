/* Arena allocator (see arena.h).  Blocks are chained; large requests get a
 * block of their own. */
#include "arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
  arena_block *next;
  size_t used, size;
  max_align_t data[];
};

enum { ARENA_BLOCK = 64 * 1024 };

void arena_init(arena *a) { a->head = NULL; }

void arena_free(arena *a) {
  arena_block *b = a->head;
  while (b) {
    arena_block *n = b->next;
    free(b);
    b = n;
  }
  a->head = NULL;
}

void *arena_alloc(arena *a, size_t size) {
  size_t al = sizeof(max_align_t);
  size = (size + al - 1) / al * al;
  if (size == 0) size = al;
  arena_block *b = a->head;
  if (!b || b->size - b->used < size) {
    size_t bs = size > ARENA_BLOCK / 4 ? size : ARENA_BLOCK;
    b = malloc(sizeof(arena_block) + bs);
    if (!b) dlc_die_oom();
    b->used = 0;
    b->size = bs;
    if (size > ARENA_BLOCK / 4 && a->head) {
      /* keep the current block as head so small allocations continue there */
      b->next = a->head->next;
      a->head->next = b;
    } else {
      b->next = a->head;
      a->head = b;
    }
  }
  void *p = (char *)b->data + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

char *arena_strndup(arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *arena_strdup(arena *a, const char *s) { return s ? arena_strndup(a, s, strlen(s)) : NULL; }

char *arena_lower_ident(arena *a, const char *s) {
  char *r = arena_strdup(a, s);
  for (char *p = r; *p; p++) {
    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    else if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) *p = '_';
  }
  return r;
}

char *arena_printf(arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) dlc_die_oom();
  char *p = arena_alloc(a, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void *arena_grow(arena *a, void *old, size_t n, size_t cap, size_t elem) {
  void *p = arena_alloc(a, cap * elem);
  if (n) memcpy(p, old, n * elem);
  return p;
}

void dlc_die_oom(void) {
  fputs("dlcgen: out of memory\n", stderr);
  exit(3);
}

void dlc_internal_error(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "dlcgen: internal error at %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(3);
}
