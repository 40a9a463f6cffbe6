/*
 * mbar.h: layer 7 (mbar.c): mbarrier objects and the TMA loads
 * (cp.async.bulk.tensor) that complete transactions on them.  exec.c decodes
 * the operands (addresses resolved to shared offsets) and calls these, one
 * thread (lane) at a time.  Each returns 0, or -1 after reporting an error.
 */
#ifndef DLC_EMU_MBAR_H
#define DLC_EMU_MBAR_H

#include "run.h"
#include "tmap.h"

int dlcemu_mbar_init(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t off, uint64_t count);
int dlcemu_mbar_inval(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t off);
/* expect_tx of tx bytes (0: none), then an arrival of count; *state: the phase arrived on */
int dlcemu_mbar_arrive(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t off, uint64_t count,
                       uint64_t tx, uint64_t *state);
/* expect_tx (delta > 0) or complete_tx (delta < 0) */
int dlcemu_mbar_tx(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t off, int64_t delta);
/* test_wait / try_wait: *done = the phase named by value (a parity with
 * .parity, else a state from arrive) has completed.  When it has, the thread
 * observes it: the TMA copies of completed phases land and the thread
 * acquires what the arrivals released.  With sleep, a thread whose phase is
 * not complete sleeps (emu_warp.mb_wait) until it is. */
int dlcemu_mbar_wait(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t off, int parity,
                     uint64_t value, int sleep, int *done);
/* cp.async.bulk.tensor (tile mode): the box at coords of the tensor map is
 * read now (out-of-bounds elements filled), its destination poisoned, and
 * its bytes complete transactions on the mbarrier at mbar_off */
int dlcemu_bulk_tensor_load(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t dst,
                            const emu_tmap *t, const int32_t *coords, uint32_t mbar_off);
/* cp.async.bulk.tensor store (tile mode): the box is read from shared
 * memory at src (swizzled as the map says) now and its in-bounds elements
 * are written to global memory now; the source stays SH_READING until the
 * thread's cp.async.bulk.wait_group(.read) covers the copy's group */
int dlcemu_bulk_tensor_store(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t src,
                             const emu_tmap *t, const int32_t *coords);
void dlcemu_bulk_commit(emu_run *R, const emu_warp *w, int lane);
/* complete all but the newest keep groups of the thread (all: every one, when it exits) */
void dlcemu_bulk_wait(emu_run *R, const emu_warp *w, int lane, uint32_t keep, int all);
/* a new block: no mbarriers, no copies in flight */
void dlcemu_mbar_block(emu_run *R);
void dlcemu_mbar_free(emu_run *R);

#endif /* DLC_EMU_MBAR_H */
