/*
 * stats.h: layer 1 (stats.c): publishes a launch's statistics as the
 * calling thread's last ones (struct and JSON).
 */
#ifndef DLC_EMU_STATS_H
#define DLC_EMU_STATS_H

#include <stdint.h>

#include "dlc/dlcemu.h"

void dlcemu_stats_publish(const dlcemu_launch_stats *s, const char *kernel, const unsigned g[3],
                          const unsigned b[3], unsigned dyn_shared, uint64_t static_shared);

#endif /* DLC_EMU_STATS_H */
