/*
 * mem.h: layer 1 (mem.c): the process-wide table of global allocations
 * (dlcemu_mem_alloc results and module .global/.const variables).
 */
#ifndef DLC_EMU_MEM_H
#define DLC_EMU_MEM_H

#include <stdint.h>

typedef struct emu_range {
  uint64_t base, end;     /* [base, end) */
  int readonly;           /* .const variable */
  int user;               /* made by dlcemu_mem_alloc (may be freed by the user) */
} emu_range;

int dlcemu_mem_register(uint64_t base, uint64_t size, int readonly, int user);
int dlcemu_mem_unregister(uint64_t base);
/* copies the table for a launch; *out is malloc'd, sorted by base */
int dlcemu_mem_snapshot(emu_range **out, int *n);

#endif /* DLC_EMU_MEM_H */
