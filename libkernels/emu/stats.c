/*
 * stats.c: the statistics of the last launch on each thread, as a struct
 * and as JSON (schema in docs/emulator.md), and their sums over the
 * thread's launches.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"
#include "util.h"

static _Thread_local dlcemu_launch_stats last;
/* the sums of dlcemu_thread_stats: every field of the struct is an
 * unsigned long long (dlcemu.h), so they add as an array of them */
static _Thread_local dlcemu_launch_stats sum;
static _Thread_local unsigned long long nsum;
_Static_assert(sizeof(dlcemu_launch_stats) % sizeof(unsigned long long) == 0,
               "dlcemu_launch_stats holds only unsigned long long fields");
enum { STATS_WORDS = sizeof(dlcemu_launch_stats) / sizeof(unsigned long long) };
static _Thread_local char json[8192] = "{}";

static const char *const class_names[DLCEMU_CLASS_COUNT] = {
  "int", "fp32", "fp16", "fp64", "convert", "move", "special_function", "load_store",
  "atomic", "control", "barrier", "warp", "tensor", "async_copy", "other",
};

typedef struct out {
  char *p;
  size_t left;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(o->p, o->left, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t k = (size_t)n < o->left ? (size_t)n : o->left ? o->left - 1 : 0;
  o->p += k;
  o->left -= k;
}

static void put_global(out *o, const char *name, const dlcemu_global_stats *g, int comma) {
  put(o, "\"%s\": {\"requests\": %llu, \"bytes\": %llu, \"sectors\": %llu}%s", name, g->requests, g->bytes,
      g->sectors, comma ? ", " : "");
}

static void put_shared(out *o, const char *name, const dlcemu_shared_stats *s, int comma) {
  put(o, "\"%s\": {\"requests\": %llu, \"bytes\": %llu, \"wavefronts\": %llu, \"ideal_wavefronts\": %llu}%s", name,
      s->requests, s->bytes, s->wavefronts, s->ideal_wavefronts, comma ? ", " : "");
}

void dlcemu_stats_publish(const dlcemu_launch_stats *s, const char *kernel, const unsigned g[3], const unsigned b[3],
                       unsigned dyn_shared, uint64_t static_shared) {
  last = *s;
  unsigned long long acc[STATS_WORDS], add[STATS_WORDS];
  memcpy(acc, &sum, sizeof acc);
  memcpy(add, s, sizeof add);
  for (int i = 0; i < STATS_WORDS; i++) acc[i] += add[i];
  memcpy(&sum, acc, sizeof acc);
  nsum++;
  out o = {json, sizeof json};
  put(&o, "{\"kernel\": \"");
  for (const char *c = kernel; *c; c++) {
    if (*c == '"' || *c == '\\') put(&o, "\\%c", *c);
    else if ((unsigned char)*c < 0x20) put(&o, "\\u%04x", (unsigned)(unsigned char)*c);
    else put(&o, "%c", *c);
  }
  put(&o, "\", \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], ", g[0], g[1], g[2], b[0], b[1], b[2]);
  put(&o, "\"shared_bytes\": {\"static\": %llu, \"dynamic\": %u}, ", (unsigned long long)static_shared, dyn_shared);
  put(&o, "\"blocks\": %llu, \"warp_instructions\": %llu, \"thread_instructions\": %llu, ", s->blocks,
      s->warp_instructions, s->thread_instructions);
  put(&o, "\"instruction_classes\": {");
  for (int i = 0; i < DLCEMU_CLASS_COUNT; i++)
    put(&o, "\"%s\": %llu%s", class_names[i], s->class_count[i], i + 1 < DLCEMU_CLASS_COUNT ? ", " : "");
  put(&o, "}, \"global\": {");
  put_global(&o, "load", &s->global_load, 1);
  put_global(&o, "store", &s->global_store, 1);
  put_global(&o, "atomic", &s->global_atomic, 0);
  put(&o, "}, \"shared\": {");
  dlcemu_shared_stats total = {0, 0, 0, 0};
  const dlcemu_shared_stats *kinds[] = {&s->shared_load, &s->shared_store, &s->shared_atomic,
                                        &s->ldmatrix,    &s->stmatrix,     &s->cp_async};
  for (int i = 0; i < 6; i++) {
    total.requests += kinds[i]->requests;
    total.bytes += kinds[i]->bytes;
    total.wavefronts += kinds[i]->wavefronts;
    total.ideal_wavefronts += kinds[i]->ideal_wavefronts;
  }
  put_shared(&o, "ld", &s->shared_load, 1);
  put_shared(&o, "st", &s->shared_store, 1);
  put_shared(&o, "atomic", &s->shared_atomic, 1);
  put_shared(&o, "ldmatrix", &s->ldmatrix, 1);
  put_shared(&o, "stmatrix", &s->stmatrix, 1);
  put_shared(&o, "cp_async", &s->cp_async, 1);
  put_shared(&o, "total", &total, 0);
  put(&o, "}, \"local\": {\"requests\": %llu, \"bytes\": %llu}, ", s->local_requests, s->local_bytes);
  put(&o, "\"cp_async\": {\"copies\": %llu, \"bytes\": %llu, \"groups\": %llu, \"waits\": %llu}, ",
      s->cp_async_copies, s->cp_async_bytes, s->cp_async_groups, s->cp_async_waits);
  put(&o, "\"barriers\": {\"completed\": %llu, \"warp_arrivals\": %llu, \"warpgroup_syncs\": %llu}, ", s->barriers,
      s->barrier_arrivals, s->warpgroup_syncs);
  put(&o, "\"mbarrier\": {\"ops\": %llu, \"phases\": %llu}, \"tma\": {\"copies\": %llu, \"bytes\": %llu}, "
          "\"wgmma\": {\"ops\": %llu}, \"mma\": {\"ops\": %llu}, \"tensor_flops\": %llu}",
      s->mbarrier_ops, s->mbarrier_phases, s->tma_copies, s->tma_bytes, s->wgmma_ops, s->mma_ops, s->tensor_flops);
}

int dlcemu_last_launch_stats(dlcemu_launch_stats *outp) {
  if (!outp) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_last_launch_stats: out is NULL");
  *outp = last;
  return 0;
}

const char *dlcemu_last_launch_stats_json(void) { return json; }

int dlcemu_thread_stats(dlcemu_launch_stats *outp, unsigned long long *launches) {
  if (!outp) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_thread_stats: out is NULL");
  *outp = sum;
  if (launches) *launches = nsum;
  return 0;
}

void dlcemu_thread_stats_reset(void) {
  memset(&sum, 0, sizeof sum);
  nsum = 0;
}
