/*
 * race.c: the shared-memory race detector.
 *
 * Warps of a block run one after another, so a missing barrier can go
 * unnoticed: the data happens to be there.  This detector finds such races
 * the way FastTrack does, with vector clocks over the block's warps:
 *   - each warp w has a clock vc[w][*]; its own entry is its epoch;
 *   - every shared byte remembers its last writer and last reader (warp,
 *     epoch, instruction);
 *   - an access by w conflicts with a remembered access by another warp u
 *     at epoch e when w has not yet learned of it (e > vc[w][u]): a read
 *     after an unordered write, a write after an unordered read or write;
 *   - a barrier orders: each arriving warp adds its clock to the barrier's
 *     join and starts a new epoch; each warp the barrier releases takes the
 *     join (bar.arrive releases, bar.sync / bar.red also acquire).
 * Lanes of one warp count as one thread.  Atomics and .volatile / .relaxed /
 * .acquire / .release accesses are synchronizing operations, not races.  A
 * write of the value a byte already holds is benign and not reported.
 * cp.async destinations are written when the copy lands, by the issuing warp.
 */
#include <stdlib.h>
#include <string.h>

#include "race.h"

/* packed access records: epoch << 5 | warp, 0 = none; source: pc << 5 | lane */
#define REC(epoch, warp) ((epoch) << 5 | (uint32_t)(warp))
#define REC_WARP(r) ((r) & 31u)
#define REC_EPOCH(r) ((r) >> 5)

int dlcemu_race_alloc(emu_run *R) {
  size_t n = R->shared_size ? R->shared_size : 1;
  R->race_w = calloc(n, sizeof(uint32_t));
  R->race_r = calloc(n, sizeof(uint32_t));
  R->race_wsrc = calloc(n, sizeof(uint32_t));
  R->race_rsrc = calloc(n, sizeof(uint32_t));
  if (!R->race_w || !R->race_r || !R->race_wsrc || !R->race_rsrc)
    return dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory for the race detector");
  return 0;
}

void dlcemu_race_free(emu_run *R) {
  free(R->race_w);
  free(R->race_r);
  free(R->race_wsrc);
  free(R->race_rsrc);
}

/* A new block starts as if after a barrier of everything before: every
 * clock starts above every epoch recorded so far, so the records of earlier
 * blocks never conflict and need no clearing (until the epochs run out). */
void dlcemu_race_block(emu_run *R) {
  if (!R->check_races) return;
  uint32_t top = 0;
  for (int w = 0; w < 32; w++)
    for (int u = 0; u < 32; u++)
      if (R->vc[w][u] > top) top = R->vc[w][u];
  uint32_t base = top + 1;
  if (base > (1u << 26)) {
    memset(R->race_w, 0, R->shared_size * sizeof(uint32_t));
    memset(R->race_r, 0, R->shared_size * sizeof(uint32_t));
    base = 1;
  }
  for (int w = 0; w < 32; w++) {
    for (int u = 0; u < 32; u++) R->vc[w][u] = base;
    R->vc[w][w] = base + 1;
  }
  memset(R->bar_vc, 0, sizeof R->bar_vc);
}

static void race_report(emu_run *R, const emu_warp *w, int lane, const emu_insn *in, uint64_t off, int write,
                        uint32_t other, uint32_t src, int other_wrote) {
  unsigned u = REC_WARP(other), olane = src & 31u, opc = src >> 5;
  unsigned lin = u * 32u + olane;
  unsigned t[3] = {lin % R->block[0], (lin / R->block[0]) % R->block[1], lin / (R->block[0] * R->block[1])};
  const emu_insn *oin = &R->k->code[opc < (unsigned)R->k->ncode ? opc : 0];
  dlcemu_report(R, DLCEMU_ERROR_RACE, w, lane, in,
                "data race on shared memory byte 0x%llx: this %s what thread (%u,%u,%u) %s at PTX line %u `%s` "
                "with no barrier between them",
                (unsigned long long)off, write ? "overwrites" : "reads", t[0], t[1], t[2],
                other_wrote ? "wrote" : "read", oin->line, R->m->pool + oin->text);
}

int dlcemu_race_read(emu_run *R, const emu_warp *w, int lane, const emu_insn *in, uint32_t pc, uint64_t off,
                     unsigned size) {
  uint32_t me = (uint32_t)w->id, epoch = R->vc[me][me];
  const uint32_t *vc = R->vc[me];
  for (unsigned i = 0; i < size; i++) {
    uint32_t wr = R->race_w[off + i];
    if (wr && REC_WARP(wr) != me && REC_EPOCH(wr) > vc[REC_WARP(wr)]) {
      race_report(R, w, lane, in, off + i, 0, wr, R->race_wsrc[off + i], 1);
      return -1;
    }
    R->race_r[off + i] = REC(epoch, me);
    R->race_rsrc[off + i] = pc << 5 | (uint32_t)lane;
  }
  return 0;
}

int dlcemu_race_write(emu_run *R, const emu_warp *w, int lane, const emu_insn *in, uint32_t pc, uint64_t off,
                      unsigned size, const uint8_t *value) {
  uint32_t me = (uint32_t)w->id, epoch = R->vc[me][me];
  const uint32_t *vc = R->vc[me];
  for (unsigned i = 0; i < size; i++) {
    uint32_t wr = R->race_w[off + i], rd = R->race_r[off + i];
    if (value && value[i] == R->smem[off + i] && wr && REC_WARP(wr) != me) continue; /* benign: same value */
    if (wr && REC_WARP(wr) != me && REC_EPOCH(wr) > vc[REC_WARP(wr)]) {
      race_report(R, w, lane, in, off + i, 1, wr, R->race_wsrc[off + i], 1);
      return -1;
    }
    if (rd && REC_WARP(rd) != me && REC_EPOCH(rd) > vc[REC_WARP(rd)]) {
      race_report(R, w, lane, in, off + i, 1, rd, R->race_rsrc[off + i], 0);
      return -1;
    }
    R->race_w[off + i] = REC(epoch, me);
    R->race_wsrc[off + i] = pc << 5 | (uint32_t)lane;
  }
  return 0;
}

void dlcemu_race_landed(emu_run *R, const emu_warp *w, int lane, uint32_t pc, uint64_t off, unsigned size) {
  uint32_t me = (uint32_t)w->id, rec = REC(R->vc[me][me], me);
  for (unsigned i = 0; i < size; i++) {
    R->race_w[off + i] = rec;
    R->race_wsrc[off + i] = pc << 5 | (uint32_t)lane;
  }
}

void dlcemu_race_arrive(emu_run *R, const emu_warp *w, int b) {
  uint32_t me = (uint32_t)w->id;
  for (int u = 0; u < 32; u++)
    if (R->vc[me][u] > R->bar_vc[b][u]) R->bar_vc[b][u] = R->vc[me][u];
  R->vc[me][me]++;
}

void dlcemu_race_release(emu_run *R, const emu_warp *w, int b) {
  uint32_t me = (uint32_t)w->id;
  for (int u = 0; u < 32; u++)
    if (R->bar_vc[b][u] > R->vc[me][u]) R->vc[me][u] = R->bar_vc[b][u];
}

void dlcemu_race_barrier_done(emu_run *R, int b) { memset(R->bar_vc[b], 0, sizeof R->bar_vc[b]); }

/* mbarriers: an arrival (or a TMA's complete_tx) releases the arriving
 * warp's clock into the mbarrier's join and starts a new epoch; a thread that
 * observes a phase complete acquires the join */
uint32_t dlcemu_race_epoch_rec(const emu_run *R, const emu_warp *w) {
  uint32_t me = (uint32_t)w->id;
  return REC(R->vc[me][me], me);
}

void dlcemu_race_release_to(emu_run *R, const emu_warp *w, uint32_t join[32]) {
  uint32_t me = (uint32_t)w->id;
  for (int u = 0; u < 32; u++)
    if (R->vc[me][u] > join[u]) join[u] = R->vc[me][u];
  R->vc[me][me]++;
}

void dlcemu_race_acquire_from(emu_run *R, const emu_warp *w, const uint32_t join[32]) {
  uint32_t me = (uint32_t)w->id;
  for (int u = 0; u < 32; u++)
    if (join[u] > R->vc[me][u]) R->vc[me][u] = join[u];
}

/* a TMA copy lands: its bytes count as written by the issuing thread at its
 * issue epoch (rec) */
void dlcemu_race_landed_rec(emu_run *R, uint32_t rec, uint32_t pc, int lane, uint64_t off, unsigned size) {
  for (unsigned i = 0; i < size; i++) {
    R->race_w[off + i] = rec;
    R->race_wsrc[off + i] = pc << 5 | (uint32_t)lane;
  }
}
