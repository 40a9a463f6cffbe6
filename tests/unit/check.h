/* A minimal test harness: CHECK(cond) records a failure with file and line
 * and goes on; a test program returns check_status(). */
#ifndef DLC_TEST_CHECK_H
#define DLC_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                            \
  do {                                                                         \
    check_count++;                                                             \
    if (!(cond)) {                                                             \
      check_failures++;                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define CHECK_STR(a, b)                                                                        \
  do {                                                                                         \
    check_count++;                                                                             \
    const char *a_ = (a), *b_ = (b);                                                           \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                   \
      check_failures++;                                                                        \
      fprintf(stderr, "%s:%d: CHECK_STR failed: %s = \"%s\", expected \"%s\"\n", __FILE__,     \
              __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                            \
    }                                                                                          \
  } while (0)

static inline int check_status(const char *name) {
  if (check_failures) fprintf(stderr, "%s: %d of %d checks failed\n", name, check_failures, check_count);
  else printf("%s: %d checks passed\n", name, check_count);
  return check_failures ? 1 : 0;
}

#endif
