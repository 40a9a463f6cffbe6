/* Plans (issue 37, spec §12): the handle table, the ConstPool's layout, and
 * the plan's life.  The generated dlc_<op>_plan_* functions (dlc_dispatch.c)
 * check their arguments, then create, look up and destroy plans here; the
 * backends allocate and fill the pool (dlc__dev_alloc, dlc__dev_copy_2d)
 * and run a plan's call (dlc__plan_exec: CUDA graphs on the CUDA backend).
 *
 * A handle is not an address: it encodes a slot of the table below and the
 * slot's generation (odd while a plan holds it), so that a handle the caller
 * destroyed, or never had, is found out without reading freed memory, and a
 * stale handle never reaches the plan that took its slot later. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dlc_internal.h"

typedef struct slot {
  uint64_t gen; /* odd: in use */
  dlc__plan *p;
} slot;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *table;
static uint32_t nslots, cap_slots, free_hint;

/* handle = ((gen << SLOT_BITS) | slot) << 4 | 8: never NULL, 16-byte
 * aligned as a pointer to an opaque struct may be expected to be */
enum { SLOT_BITS = 24 };
#define MAX_SLOTS (1u << SLOT_BITS)

static const void *handle_of(uint32_t s, uint64_t gen) {
  return (const void *)(uintptr_t)((((gen << SLOT_BITS) | s) << 4) | 8);
}

/* The plan a handle names, with the table locked; NULL when it names none. */
static dlc__plan *find_locked(const void *handle, uint32_t *sl) {
  uintptr_t h = (uintptr_t)handle;
  if ((h & 15) != 8) return NULL;
  h >>= 4;
  uint32_t s = (uint32_t)(h & (MAX_SLOTS - 1));
  uint64_t gen = (uint64_t)h >> SLOT_BITS;
  if (s >= nslots || table[s].gen != gen || !(gen & 1)) return NULL;
  *sl = s;
  return table[s].p;
}

static void plan_free(dlc__plan *p) {
  if (!p) return;
  dlc__plan_cache_free(p);
  if (p->pool) dlc__dev_free(p->pool);
  pthread_mutex_destroy(&p->run);
  free(p);
}

dlc_status dlc__plan_new(const char *fn, int op, dlc_dtype dtype, int nfixed, const int64_t *fixed, int npool,
                         const int64_t *bytes, const int64_t *ld, struct CUstream_st *stream, dlc__plan **out) {
  *out = NULL;
  if (nfixed < 0 || nfixed > DLC__PLAN_MAX || npool < 0 || npool > DLC__PLAN_MAX)
    return dlc__fail(DLC_ERROR_INTERNAL, "%s: %d fixed dims, %d pooled params", fn, nfixed, npool);
  dlc__plan *p = calloc(1, sizeof *p);
  if (!p) return dlc__fail(DLC_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  p->op = op, p->dtype = dtype, p->nfixed = nfixed, p->npool = npool;
  memcpy(p->fixed, fixed, sizeof(int64_t) * (size_t)nfixed);
  /* the ConstPool: each param at a multiple of DLC__POOL_ALIGN, in order */
  int64_t at = 0;
  for (int i = 0; i < npool; i++) {
    int64_t b = bytes[i];
    if (b < 0 || b == DLC__OVF || at > INT64_MAX - b - DLC__POOL_ALIGN) {
      free(p);
      return dlc__fail(DLC_ERROR_INVALID_VALUE, "%s: the params need more than 2^63 - 1 bytes", fn);
    }
    p->off[i] = at, p->bytes[i] = b, p->ld[i] = ld[i];
    at += (b + DLC__POOL_ALIGN - 1) / DLC__POOL_ALIGN * DLC__POOL_ALIGN;
  }
  p->pool_bytes = (size_t)at;
  if (pthread_mutex_init(&p->run, NULL) != 0) {
    free(p);
    return dlc__fail(DLC_ERROR_OUT_OF_MEMORY, "%s: cannot create the plan's lock", fn);
  }
  dlc_status st = at ? dlc__dev_alloc(&p->pool, (size_t)at, stream) : DLC_SUCCESS;
  if (st != DLC_SUCCESS) {
    p->pool = NULL;
    plan_free(p);
    return st;
  }
  *out = p;
  return DLC_SUCCESS;
}

dlc_status dlc__plan_publish(const char *fn, dlc__plan *p, const void **handle) {
  pthread_mutex_lock(&table_lock);
  uint32_t s = free_hint;
  while (s < nslots && (table[s].gen & 1)) s++;
  if (s == nslots) {
    for (s = 0; s < nslots && (table[s].gen & 1); s++) {
    }
  }
  if (s == nslots) {
    if (nslots == cap_slots) {
      uint32_t cap = cap_slots ? cap_slots * 2 : 64;
      slot *t = cap <= MAX_SLOTS ? realloc(table, sizeof(slot) * cap) : NULL;
      if (!t) {
        pthread_mutex_unlock(&table_lock);
        plan_free(p);
        return dlc__fail(DLC_ERROR_OUT_OF_MEMORY, "%s: no room for another plan (%u live)", fn, nslots);
      }
      table = t, cap_slots = cap;
    }
    table[nslots++] = (slot){0, NULL};
  }
  table[s].gen++; /* odd: in use */
  table[s].p = p;
  free_hint = s + 1;
  *handle = handle_of(s, table[s].gen);
  pthread_mutex_unlock(&table_lock);
  return DLC_SUCCESS;
}

void dlc__plan_discard(dlc__plan *p) { plan_free(p); }

dlc__plan *dlc__plan_acquire(const void *handle, int op, const char *fn, int run, dlc_status *st) {
  uint32_t s;
  pthread_mutex_lock(&table_lock);
  dlc__plan *p = handle ? find_locked(handle, &s) : NULL;
  if (p && p->op == op) p->users++;
  pthread_mutex_unlock(&table_lock);
  if (!handle) {
    *st = dlc__fail(DLC_ERROR_INVALID_VALUE, "%s: plan is NULL", fn);
    return NULL;
  }
  if (!p) {
    *st = dlc__fail(DLC_ERROR_INVALID_VALUE, "%s: plan %p is not a live plan (destroyed, or never created)", fn, handle);
    return NULL;
  }
  if (p->op != op) {
    *st = dlc__fail(DLC_ERROR_INVALID_VALUE, "%s: plan %p is another op's plan", fn, handle);
    return NULL;
  }
  if (run) pthread_mutex_lock(&p->run);
  *st = DLC_SUCCESS;
  return p;
}

void dlc__plan_release(dlc__plan *p, int run) {
  if (run) pthread_mutex_unlock(&p->run);
  pthread_mutex_lock(&table_lock);
  int last = --p->users == 0 && p->dead;
  pthread_mutex_unlock(&table_lock);
  if (last) plan_free(p);
}

void dlc__plan_destroy(const void *handle, int op) {
  uint32_t s;
  pthread_mutex_lock(&table_lock);
  dlc__plan *p = handle ? find_locked(handle, &s) : NULL;
  int now = 0;
  if (p && p->op == op) {
    table[s].gen++, table[s].p = NULL; /* even: free; the handle is stale from here */
    if (s < free_hint) free_hint = s;
    p->dead = 1;
    now = p->users == 0;
  }
  pthread_mutex_unlock(&table_lock);
  if (now) plan_free(p);
}

const dlc__plan *dlc__plan_peek(const void *handle) {
  uint32_t s;
  pthread_mutex_lock(&table_lock);
  const dlc__plan *p = handle ? find_locked(handle, &s) : NULL;
  pthread_mutex_unlock(&table_lock);
  return p;
}
