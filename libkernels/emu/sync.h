/*
 * sync.h: layer 7 (sync.c): barriers, the warpgroup rendezvous, landing of
 * asynchronous copies, exiting lanes.
 */
#ifndef DLC_EMU_SYNC_H
#define DLC_EMU_SYNC_H

#include "run.h"

void dlcemu_bar_exec(emu_run *R, emu_warp *w, const emu_insn *in, uint32_t pc, uint32_t active, uint32_t exec);
/* 1: the warpgroup is complete and the instruction runs now; 0: the warp waits (or an error) */
int dlcemu_wg_arrive(emu_run *R, emu_warp *w, const emu_insn *in, uint32_t pc);
void dlcemu_lanes_exit(emu_run *R, emu_warp *w, uint32_t lanes);
int dlcemu_cp_land(emu_run *R, emu_warp *w, int lane, int all, uint32_t keep_groups);

#endif /* DLC_EMU_SYNC_H */
