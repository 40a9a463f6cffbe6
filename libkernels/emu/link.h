/*
 * link.h: layer 4 (link.c): module + entry -> kernel.
 */
#ifndef DLC_EMU_LINK_H
#define DLC_EMU_LINK_H

#include "emu.h"

int dlcemu_link_kernel(emu_module *m, int func, emu_kernel **out);
void dlcemu_kernel_free(emu_kernel *k);

#endif /* DLC_EMU_LINK_H */
