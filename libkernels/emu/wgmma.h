/*
 * wgmma.h: layer 7 (wgmma.c): wgmma.mma_async and its groups, the register
 * hazards of asynchronous accumulators, and the generic/async proxy rule for
 * the shared memory a wgmma reads.
 */
#ifndef DLC_EMU_WGMMA_H
#define DLC_EMU_WGMMA_H

#include "run.h"

/* the warpgroup g met at wgmma.mma_async (pc): compute it now, mark its
 * accumulator (and RS A) registers in flight in the group's open group */
int dlcemu_wgmma_issue(emu_run *R, uint32_t g, const emu_insn *in, uint32_t pc);
void dlcemu_wgmma_commit(emu_run *R, uint32_t g);
/* wgmma.wait_group n: all but the n newest committed groups are complete */
void dlcemu_wgmma_wait(emu_run *R, uint32_t g, uint32_t n);
/* an instruction other than wgmma.* touching a register of an unfinished
 * wgmma: reported (returns -1) */
int dlcemu_wgmma_hazard(emu_run *R, emu_warp *w, const emu_insn *in);
/* generic-proxy writes of shared memory (st, atom, stmatrix) and fence.proxy.async */
void dlcemu_proxy_write(emu_run *R, const emu_warp *w, int lane, uint32_t pc, uint64_t off, unsigned size);
void dlcemu_proxy_fence(emu_run *R, const emu_warp *w);
/* launch set-up and teardown */
int dlcemu_wgmma_alloc(emu_run *R);
void dlcemu_wgmma_block(emu_run *R);
void dlcemu_wgmma_free(emu_run *R);

static inline int emu_wg_inflight(const emu_run *R, const emu_warp *w) {
  return w->wg_maxtag > R->wgroups[w->id / 4].done;
}

#endif /* DLC_EMU_WGMMA_H */
