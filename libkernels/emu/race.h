/*
 * race.h: layer 6 (race.c): the shared-memory race detector.
 */
#ifndef DLC_EMU_RACE_H
#define DLC_EMU_RACE_H

#include "run.h"

int dlcemu_race_alloc(emu_run *R);
void dlcemu_race_free(emu_run *R);
void dlcemu_race_block(emu_run *R);
int dlcemu_race_read(emu_run *R, const emu_warp *w, int lane, const emu_insn *in, uint32_t pc, uint64_t off,
                     unsigned size);
int dlcemu_race_write(emu_run *R, const emu_warp *w, int lane, const emu_insn *in, uint32_t pc, uint64_t off,
                      unsigned size, const uint8_t *value);
void dlcemu_race_landed(emu_run *R, const emu_warp *w, int lane, uint32_t pc, uint64_t off, unsigned size);
void dlcemu_race_arrive(emu_run *R, const emu_warp *w, int b);
void dlcemu_race_release(emu_run *R, const emu_warp *w, int b);
void dlcemu_race_barrier_done(emu_run *R, int b);
/* mbarriers and TMA copies */
uint32_t dlcemu_race_epoch_rec(const emu_run *R, const emu_warp *w);
void dlcemu_race_release_to(emu_run *R, const emu_warp *w, uint32_t join[32]);
void dlcemu_race_acquire_from(emu_run *R, const emu_warp *w, const uint32_t join[32]);
void dlcemu_race_landed_rec(emu_run *R, uint32_t rec, uint32_t pc, int lane, uint64_t off, unsigned size);

#endif /* DLC_EMU_RACE_H */
