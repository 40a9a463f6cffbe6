/*
 * exec.h: layer 8 (exec.c): the SIMT interpreter.
 */
#ifndef DLC_EMU_EXEC_H
#define DLC_EMU_EXEC_H

#include "run.h"

/* run warp w for at most budget instructions */
void dlcemu_exec_warp(emu_run *R, emu_warp *w, int budget);

#endif /* DLC_EMU_EXEC_H */
