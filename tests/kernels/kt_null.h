/* What the null-backend tests share (libdlckernels-null: every check and the
 * kernel choice of the real entry points, a launch that only records): a
 * CHECK that counts failures and names the line, and aligned addresses that
 * are passed as tensors and never dereferenced. */
#ifndef DLC_TEST_KT_NULL_H
#define DLC_TEST_KT_NULL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dlc/dlc.h"
#include "dlc_internal.h"

static int fails;
#define CHECK(c)                                                                \
  do {                                                                          \
    if (!(c)) fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c), fails++; \
  } while (0)

static inline void *fake(uintptr_t a) { return (void *)a; }
static inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

#endif
