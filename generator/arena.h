/* Arena allocation for IR instances.
 *
 * Every IR (frontend graph, UOp DAG, IndexBook, ...) lives in one arena and
 * is freed at once with arena_free().  Nodes refer to each other by pointer
 * or index into the arena; nothing inside an arena is freed individually.
 * Allocation failure is fatal (the generator is a batch tool; see
 * dlc_die_oom()). */
#ifndef DLC_ARENA_H
#define DLC_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct arena_block arena_block;
typedef struct arena {
  arena_block *head;
} arena;

void arena_init(arena *a);
void arena_free(arena *a);
/* Zeroed memory, aligned for any object. */
void *arena_alloc(arena *a, size_t size);
char *arena_strdup(arena *a, const char *s);
char *arena_strndup(arena *a, const char *s, size_t n);
/* s lower-cased, with every character that cannot be in a C identifier as '_' */
char *arena_lower_ident(arena *a, const char *s);
/* printf into the arena. */
char *arena_printf(arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Grow an arena array: returns a copy of `old` (n elements of `elem` bytes)
 * with room for `cap` elements.  Old storage is simply abandoned. */
void *arena_grow(arena *a, void *old, size_t n, size_t cap, size_t elem);

#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

/* A growable array inside an arena: `items`, `n`, `cap` fields. */
#define ARENA_PUSH(a, vec_items, vec_n, vec_cap, value)                              \
  do {                                                                               \
    if ((vec_n) == (vec_cap)) {                                                      \
      size_t ncap_ = (vec_cap) ? (size_t)(vec_cap) * 2 : 8;                          \
      (vec_items) = arena_grow((a), (vec_items), (size_t)(vec_n), ncap_, sizeof(*(vec_items))); \
      (vec_cap) = (int)ncap_;                                                        \
    }                                                                                \
    (vec_items)[(vec_n)++] = (value);                                                \
  } while (0)

/* Out-of-memory and internal-invariant failures: print file/line and exit 3.
 * Only for states that bad user input cannot reach. */
_Noreturn void dlc_die_oom(void);
_Noreturn void dlc_internal_error(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define DLC_ASSERT(cond)                                                   \
  do {                                                                     \
    if (!(cond)) dlc_internal_error(__FILE__, __LINE__, "assertion `%s' failed", #cond); \
  } while (0)

#endif
