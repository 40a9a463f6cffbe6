/*
 * launch.h: layer 9 (launch.c): a kernel launch.
 */
#ifndef DLC_EMU_LAUNCH_H
#define DLC_EMU_LAUNCH_H

#include "emu.h"

/* The most shared memory (static + dynamic) a block of sm_<target_sm> may
 * opt in to: 227 KB on sm_90 and later, 163 KB on sm_80, 99 KB otherwise. */
static inline uint64_t emu_max_shared_optin(int target_sm) {
  return target_sm >= 90 ? 232448 : target_sm == 80 ? 166912 : 101376;
}

int dlcemu_launch(emu_kernel *k, unsigned g[3], unsigned b[3], unsigned dyn_shared, void **params);

#endif /* DLC_EMU_LAUNCH_H */
