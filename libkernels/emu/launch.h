/*
 * launch.h: layer 9 (launch.c): a kernel launch.
 */
#ifndef DLC_EMU_LAUNCH_H
#define DLC_EMU_LAUNCH_H

#include "emu.h"

int dlcemu_launch(emu_kernel *k, unsigned g[3], unsigned b[3], unsigned dyn_shared, void **params);

#endif /* DLC_EMU_LAUNCH_H */
