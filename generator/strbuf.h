/* A growable string with printf-style appends, for the generator's text
 * outputs (isl strings, CUDA and C sources). */
#ifndef DLC_STRBUF_H
#define DLC_STRBUF_H

#include <stddef.h>

typedef struct strbuf {
  char *p;
  size_t n, cap;
} strbuf;

void sb_puts(strbuf *s, const char *t);
void sb_printf(strbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The text so far (never NULL). */
const char *sb_str(strbuf *s);
/* Hands the buffer over (malloc'ed, caller frees) and resets s. */
char *sb_take(strbuf *s);
/* The text copied into the arena; frees the buffer and resets s. */
struct arena;
char *sb_take_arena(strbuf *s, struct arena *A);
void sb_free(strbuf *s);

#endif
