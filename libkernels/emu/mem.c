/*
 * mem.c: the global allocation table and the memory API.
 *
 * Emulator "device" memory is host memory: dlcemu_mem_alloc returns a host
 * address, and kernels use it directly as a global pointer.  Every
 * allocation (and every module .global/.const variable) is recorded with its
 * exact size in one sorted table, guarded by a mutex; a launch works on a
 * snapshot of it, so every global access of a kernel is checked against the
 * live allocations without locking.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "util.h"

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static emu_range *table;
static int ntable, captable;

/* index of the range containing a, or -1 */
static int find_locked(uint64_t a) {
  int lo = 0, hi = ntable - 1, best = -1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (table[mid].base <= a) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best >= 0 && a < table[best].end ? best : -1;
}

int dlcemu_mem_register(uint64_t base, uint64_t size, int readonly, int user) {
  pthread_mutex_lock(&table_lock);
  int rc = 0;
  if (dlcemu_grow(&table, &captable, ntable + 1, sizeof(emu_range))) {
    rc = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory for the allocation table");
  } else {
    int i = ntable;
    while (i > 0 && table[i - 1].base > base) {
      table[i] = table[i - 1];
      i--;
    }
    table[i] = (emu_range){base, base + size, readonly, user};
    ntable++;
  }
  pthread_mutex_unlock(&table_lock);
  return rc;
}

int dlcemu_mem_unregister(uint64_t base) {
  pthread_mutex_lock(&table_lock);
  int i = find_locked(base);
  int rc = DLCEMU_ERROR_INVALID_POINTER;
  if (i >= 0 && table[i].base == base) {
    memmove(&table[i], &table[i + 1], sizeof(emu_range) * (size_t)(ntable - i - 1));
    ntable--;
    rc = 0;
  }
  pthread_mutex_unlock(&table_lock);
  return rc;
}

int dlcemu_mem_snapshot(emu_range **out, int *n) {
  pthread_mutex_lock(&table_lock);
  emu_range *copy = malloc(sizeof(emu_range) * (size_t)(ntable ? ntable : 1));
  int rc = 0;
  if (!copy) {
    rc = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
  } else {
    if (ntable) memcpy(copy, table, sizeof(emu_range) * (size_t)ntable);
    *out = copy;
    *n = ntable;
  }
  pthread_mutex_unlock(&table_lock);
  return rc;
}

int dlcemu_mem_alloc(dlcemu_deviceptr *ptr, size_t bytes) {
  if (!ptr) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_mem_alloc: ptr is NULL");
  if (!bytes) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_mem_alloc: size is 0");
  if (bytes > ((size_t)1 << 40)) return dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "dlcemu_mem_alloc: %zu bytes", bytes);
  size_t rounded = (bytes + 255) / 256 * 256;
  void *p = aligned_alloc(256, rounded);
  if (!p) return dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "dlcemu_mem_alloc: %zu bytes", bytes);
  memset(p, 0xFF, rounded); /* undefined contents: a NaN pattern rather than friendly zeros */
  int rc = dlcemu_mem_register((uint64_t)(uintptr_t)p, bytes, 0, 1);
  if (rc) {
    free(p);
    return rc;
  }
  *ptr = (dlcemu_deviceptr)(uintptr_t)p;
  return 0;
}

int dlcemu_mem_free(dlcemu_deviceptr ptr) {
  pthread_mutex_lock(&table_lock);
  int i = find_locked(ptr);
  int ok = i >= 0 && table[i].base == ptr && table[i].user;
  if (ok) {
    memmove(&table[i], &table[i + 1], sizeof(emu_range) * (size_t)(ntable - i - 1));
    ntable--;
  }
  pthread_mutex_unlock(&table_lock);
  if (!ok)
    return dlcemu_fail(DLCEMU_ERROR_INVALID_POINTER, "dlcemu_mem_free: 0x%llx is not an allocation made by dlcemu_mem_alloc",
                    ptr);
  free((void *)(uintptr_t)ptr);
  return 0;
}

/* is [p, p + bytes) inside one allocation? */
static int check_span(const char *fn, dlcemu_deviceptr p, size_t bytes) {
  pthread_mutex_lock(&table_lock);
  int i = find_locked(p);
  int ok = i >= 0 && p + bytes <= table[i].end && p + bytes >= p;
  uint64_t base = i >= 0 ? table[i].base : 0, end = i >= 0 ? table[i].end : 0;
  pthread_mutex_unlock(&table_lock);
  if (ok) return 0;
  if (i < 0) return dlcemu_fail(DLCEMU_ERROR_INVALID_POINTER, "%s: 0x%llx is not inside any allocation", fn, p);
  return dlcemu_fail(DLCEMU_ERROR_INVALID_POINTER,
                  "%s: %zu bytes at 0x%llx run past the end of the %llu-byte allocation at 0x%llx", fn, bytes, p,
                  (unsigned long long)(end - base), (unsigned long long)base);
}

int dlcemu_memcpy_htod(dlcemu_deviceptr dst, const void *src, size_t bytes) {
  if (!bytes) return 0;
  if (!src) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_memcpy_htod: src is NULL");
  int rc = check_span("dlcemu_memcpy_htod", dst, bytes);
  if (rc) return rc;
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return 0;
}

int dlcemu_memcpy_dtoh(void *dst, dlcemu_deviceptr src, size_t bytes) {
  if (!bytes) return 0;
  if (!dst) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_memcpy_dtoh: dst is NULL");
  int rc = check_span("dlcemu_memcpy_dtoh", src, bytes);
  if (rc) return rc;
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return 0;
}

int dlcemu_memset_d8(dlcemu_deviceptr dst, unsigned char value, size_t bytes) {
  if (!bytes) return 0;
  int rc = check_span("dlcemu_memset_d8", dst, bytes);
  if (rc) return rc;
  memset((void *)(uintptr_t)dst, value, bytes);
  return 0;
}
