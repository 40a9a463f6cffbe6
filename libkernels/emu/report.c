/*
 * report.c: where a launch is and what went wrong: the message of a runtime
 * error (kernel, block, thread, PTX and source line, instruction text), the
 * allocation lookups that memcheck and its messages use, and the message of
 * a read of poisoned shared memory (naming the copy that poisoned it).
 * The first error of a launch wins; later ones are dropped.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "run.h"

void dlcemu_thread_coords(const emu_run *R, const emu_warp *w, int lane, unsigned t[3]) {
  unsigned lin = (unsigned)w->id * 32u + (unsigned)lane;
  t[0] = lin % R->block[0];
  t[1] = (lin / R->block[0]) % R->block[1];
  t[2] = lin / (R->block[0] * R->block[1]);
}

static void where(const emu_run *R, const emu_warp *w, int lane, const emu_insn *in, char *buf, size_t cap) {
  unsigned t[3];
  dlcemu_thread_coords(R, w, lane, t);
  const emu_module *m = R->m;
  char src[300] = "";
  if (in->loc_file > 0 && in->loc_file < m->nfiles && m->files[in->loc_file] && in->loc_line > 0) {
    const char *f = m->files[in->loc_file];
    const char *slash = strrchr(f, '/');
    snprintf(src, sizeof src, " (%s:%d)", slash ? slash + 1 : f, in->loc_line);
  }
  snprintf(buf, cap, "kernel '%s' block (%u,%u,%u) thread (%u,%u,%u) PTX line %u%s `%s`",
           m->funcs[R->k->func].name, R->bidx[0], R->bidx[1], R->bidx[2], t[0], t[1], t[2], in->line, src,
           m->pool + in->text);
}

void dlcemu_report(emu_run *R, int status, const emu_warp *w, int lane, const emu_insn *in, const char *fmt, ...) {
  if (R->status) return;
  R->status = status;
  char what[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  char loc[1024];
  where(R, w, lane, in, loc, sizeof loc);
  snprintf(R->msg, R->msg_cap, "%s: %s: %s", dlcemu_error_string(status), loc, what);
}

const emu_range *dlcemu_find_range(emu_run *R, uint64_t a) {
  if (R->last_range >= 0) {
    const emu_range *g = &R->ranges[R->last_range];
    if (a >= g->base && a < g->end) return g;
  }
  int lo = 0, hi = R->nranges - 1, best = -1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (R->ranges[mid].base <= a) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (best >= 0 && a < R->ranges[best].end) {
    R->last_range = best;
    return &R->ranges[best];
  }
  return NULL;
}

const emu_range *dlcemu_near_range(emu_run *R, uint64_t a) {
  int lo = 0, hi = R->nranges - 1, best = -1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (R->ranges[mid].base <= a) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (best >= 0 && a - R->ranges[best].base < R->ranges[best].end - R->ranges[best].base + (1u << 20))
    return &R->ranges[best];
  return NULL;
}

void dlcemu_poison_report(emu_run *R, const emu_warp *w, int lane, const emu_insn *in, uint64_t off, unsigned size,
                       int write) {
  /* find the pending copy that covers the bytes */
  for (uint32_t wi = 0; wi < R->nwarps; wi++) {
    const emu_warp *ww = &R->warps[wi];
    for (int l = 0; l < 32; l++) {
      const emu_cpq *q = &ww->cp[l];
      for (int i = 0; i < q->n; i++) {
        const emu_cp *e = &q->e[i];
        if (e->dst < off + size && off < (uint64_t)e->dst + e->size) {
          char issuer[1024];
          where(R, ww, l, &R->k->code[e->pc], issuer, sizeof issuer);
          dlcemu_report(R, write ? DLCEMU_ERROR_RACE : DLCEMU_ERROR_POISON, w, lane, in,
                     "%s shared memory [0x%llx, 0x%llx) while a cp.async to it is pending (poisoned until the "
                     "issuing thread's cp.async.wait_group/wait_all covers it); the copy was issued at %s",
                     write ? "write to" : "read of", (unsigned long long)off, (unsigned long long)(off + size), issuer);
          return;
        }
      }
    }
  }
  /* a TMA copy that no thread has observed landing */
  for (int i = 0; i < R->nbulks; i++) {
    const emu_bulk *e = &R->bulks[i];
    if (e->dst < off + size && off < (uint64_t)e->dst + e->bytes) {
      char issuer[1024];
      where(R, &R->warps[e->warp], (int)e->lane, &R->k->code[e->pc], issuer, sizeof issuer);
      const emu_mbar *B = &R->mbars[e->mbar];
      dlcemu_report(R, write ? DLCEMU_ERROR_RACE : DLCEMU_ERROR_POISON, w, lane, in,
                    "%s shared memory [0x%llx, 0x%llx) while a cp.async.bulk.tensor to it has not landed (poisoned "
                    "until a thread's mbarrier.try_wait/test_wait observes phase %u of the mbarrier at 0x%x complete; "
                    "it has %u arrivals pending and tx-count %d); the copy was issued at %s",
                    write ? "write to" : "read of", (unsigned long long)off, (unsigned long long)(off + size),
                    e->phase, B->off, B->pending, B->tx, issuer);
      return;
    }
  }
  /* the source of a TMA store */
  for (int i = 0; i < R->nbstores; i++) {
    const emu_bstore *e = &R->bstores[i];
    if (e->src < off + size && off < (uint64_t)e->src + e->bytes) {
      char issuer[1024];
      where(R, &R->warps[e->warp], (int)e->lane, &R->k->code[e->pc], issuer, sizeof issuer);
      dlcemu_report(R, DLCEMU_ERROR_RACE, w, lane, in,
                    "write to shared memory [0x%llx, 0x%llx) while a cp.async.bulk.tensor store still reads it (until "
                    "the issuing thread's cp.async.bulk.wait_group.read covers its bulk group %u); the store was issued "
                    "at %s",
                    (unsigned long long)off, (unsigned long long)(off + size), e->group, issuer);
      return;
    }
  }
  /* an mbarrier object */
  for (int i = 0; i < R->nmbars; i++) {
    const emu_mbar *B = &R->mbars[i];
    if (B->live && B->off < off + size && off < (uint64_t)B->off + 8) {
      dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in,
                    "%s shared memory [0x%llx, 0x%llx), which holds the mbarrier initialized at PTX line %u: only "
                    "mbarrier instructions may access it until mbarrier.inval",
                    write ? "write to" : "read of", (unsigned long long)off, (unsigned long long)(off + size),
                    R->k->code[B->init_pc].line);
      return;
    }
  }
  dlcemu_report(R, DLCEMU_ERROR_POISON, w, lane, in,
             "read of shared memory [0x%llx, 0x%llx) that no thread of the block has written",
             (unsigned long long)off, (unsigned long long)(off + size));
}

