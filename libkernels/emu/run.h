/*
 * run.h: the state of one launch, shared by the layers that run it (report,
 * race, sync, exec, launch), and report.c's functions (layer 5).
 *
 * A launch runs its blocks one after another.  A block's warps live in
 * emu_warp: the register file uint64_t reg[slot][32], one predicate mask per
 * predicate register, per-lane PCs, lane masks (live / blocked at a barrier /
 * waiting at a warp collective), per-lane .local and .param frames, call
 * stacks and cp.async queues.  Shared memory has a shadow byte per byte:
 * valid, pending (a cp.async has not landed yet: reading is an error) or
 * never written (only when uninitialized reads are checked).
 *
 * Generic addresses: global pointers are host addresses; the shared, local
 * and kernel-parameter windows sit at 0x1.., 0x2.. and 0x3.. in the top
 * nibble, which no host pointer uses.
 */
#ifndef DLC_EMU_RUN_H
#define DLC_EMU_RUN_H

#include <stdint.h>

#include "emu.h"
#include "mem.h"
#include "util.h"

#define WIN_SHARED 0x1000000000000000ull
#define WIN_LOCAL 0x2000000000000000ull
#define WIN_PARAM 0x3000000000000000ull
#define WIN_TAG(a) ((a) >> 60)

enum {
  SH_VALID = 0,   /* readable */
  SH_PENDING = 1, /* the destination of an asynchronous copy that has not landed: poison */
  SH_UNINIT = 2,  /* never written (only with DLCEMU_LIMIT_CHECK_UNINIT_SHARED) */
  SH_MBAR = 3,    /* a live mbarrier object: only mbarrier instructions may touch it */
  SH_READING = 4  /* the source of a TMA store whose bulk group has not completed: readable, not writable */
};

/* an mbarrier object (PTX ISA "Parallel Synchronization and Communication
 * Instructions: mbarrier"): its state lives here, keyed by its shared offset */
typedef struct emu_mbar {
  uint32_t off;       /* shared offset of the 8-byte object */
  uint32_t expected;  /* arrivals each phase expects */
  uint32_t pending;   /* arrivals the current phase still waits for */
  int32_t tx;         /* tx-count of the current phase (bytes expected minus completed) */
  uint32_t phase;     /* phases completed so far (the current phase's parity is phase & 1) */
  int live;           /* initialized and not invalidated */
  uint32_t init_pc;   /* where it was initialized (messages) */
  uint32_t vc[32];    /* race detector: the join of the clocks released into it */
} emu_mbar;

/* one cp.async.bulk.tensor in flight: read and counted at issue, it lands
 * when a thread observes its mbarrier phase complete */
typedef struct emu_bulk {
  uint32_t dst, bytes;  /* shared destination */
  uint32_t mbar;        /* index into emu_run.mbars */
  uint32_t phase;       /* the mbarrier phase it completes transactions of */
  uint32_t pc;          /* issuing instruction */
  uint32_t warp, lane;  /* issuing thread */
  uint32_t race_rec;    /* race detector: the issuing warp's epoch record */
  uint8_t *data;        /* the box as it lands (swizzled) */
} emu_bulk;

/* one cp.async.bulk.tensor store whose shared source is still being read:
 * until its thread's cp.async.bulk.wait_group(.read) covers its group */
typedef struct emu_bstore {
  uint32_t src, bytes;  /* shared source */
  uint32_t warp, lane;  /* issuing thread */
  uint32_t group;       /* the thread's bulk group */
  uint32_t pc;          /* issuing instruction */
} emu_bstore;

/* one cp.async in flight: its bytes were read at issue and land at the wait */
typedef struct emu_cp {
  uint32_t dst;      /* shared offset */
  uint32_t group;    /* commit-group number of its thread */
  uint32_t pc;       /* issuing instruction */
  uint8_t size;
  uint8_t data[16];
} emu_cp;

typedef struct emu_cpq {
  emu_cp *e;
  int n, cap;
  uint32_t committed; /* groups committed by this thread */
} emu_cpq;

typedef struct emu_warp {
  uint64_t (*r)[32];  /* register file [nslots][32] */
  uint32_t *p;        /* predicate masks [npreds] */
  uint32_t pc[32];    /* per-lane pc; authoritative for all lanes while diverged */
  uint32_t upc;       /* pc of every runnable lane while !diverged */
  int diverged;
  uint32_t exist;     /* lanes that are threads of the block */
  uint32_t live;      /* exist and not exited */
  uint32_t bar_wait;  /* blocked at a barrier */
  uint32_t coll_wait; /* waiting at a warp collective for the rest of its mask */
  uint32_t wg_wait;   /* waiting at a warpgroup collective for the other warps of its warpgroup */
  uint32_t mb_wait;   /* sleeping in mbarrier.try_wait until a phase completes */
  uint16_t mb_idx[32];   /* the mbarrier a sleeping lane waits on */
  uint32_t mb_phase[32]; /* it wakes when that mbarrier's phase count exceeds this */
  uint32_t *wgtag;    /* [nslots]: 1 + the wgmma group that last wrote (accumulator) or reads (A) the register; NULL before the first wgmma */
  uint32_t *wgpc;     /* [nslots]: that wgmma's pc (messages) */
  uint32_t wg_maxtag; /* the newest tag set: registers are in flight while it exceeds the group's done count */
  uint32_t bar_lanes[16]; /* lanes that arrived (sync or arrive) at barrier b, this round */
  uint8_t bar_id[32]; /* barrier a blocked lane waits for */
  uint8_t *local;     /* [32][local_bytes] */
  uint8_t *tparam;    /* [32][tparam_bytes] */
  uint32_t *cstack;   /* [32][max_depth]: pc of each active call */
  uint8_t depth[32];
  emu_cpq cp[32];
  int id;             /* warp index in the block */
} emu_warp;

typedef struct emu_barrier {
  uint32_t warps;     /* warps that arrived (bit per warp) */
  uint32_t expected;  /* thread count of the barrier (0: all threads of the block) */
  uint32_t count;     /* threads counted so far (a warp counts as 32) */
  uint32_t red_popc;  /* bar.red accumulators */
  int red_and, red_or;
} emu_barrier;

/* a warpgroup collective (wgmma.*, setmaxnreg): the 4 warps 4g..4g+3 meet at
 * one instruction, which then runs once for all of them */
typedef struct emu_wgroup {
  uint32_t arrived;   /* bit per warp of the group (id % 4) */
  uint32_t pc;        /* the instruction they meet at */
  uint32_t committed; /* wgmma groups committed (the open group's index) */
  uint32_t done;      /* groups known complete (wait_group): those with index < done */
} emu_wgroup;

typedef struct emu_run {
  emu_kernel *k;
  emu_module *m;
  unsigned grid[3], block[3];
  uint32_t nthreads, nwarps;
  uint8_t *params;
  uint64_t param_bytes;
  uint32_t dyn_shared;
  uint64_t dyn_base;      /* offset of the dynamic window */
  uint64_t shared_size;   /* static + dynamic */
  uint8_t *smem, *shadow;
  uint64_t pending_bytes; /* shadow bytes in state SH_PENDING */
  int check_uninit;
  int shadow_active;      /* pending_bytes || check_uninit */
  emu_warp *warps;
  uint32_t live_warps;    /* bit per warp with live lanes */
  emu_barrier bars[16];
  uint32_t bar_active;    /* barriers with arrivals this round */
  emu_wgroup wgroups[8];  /* warpgroup rendezvous, one per 4 warps */
  emu_mbar *mbars;        /* mbarrier objects of the block (live and invalidated) */
  int nmbars, capmbars;
  int live_mbars;
  emu_bulk *bulks;        /* cp.async.bulk.tensor copies in flight */
  int nbulks, capbulks;
  emu_bstore *bstores;    /* TMA stores whose source is still read */
  int nbstores, capbstores;
  uint32_t bulk_committed[32][32]; /* bulk groups committed per warp and lane */
  uint32_t *proxy_mark;   /* per shared byte: 1 + (writer's fence.proxy.async count << 5 | writer warp) of the last generic-proxy write, 0: none; NULL without wgmma */
  uint32_t *proxy_src;    /* per shared byte: that write's pc << 5 | lane */
  double *wg_buf;         /* wgmma operands and results: A[64][16], B[16][256], D[64][256] */
  uint32_t proxy_fences[32]; /* fence.proxy.async executed per warp */
  emu_range *ranges;
  int nranges;
  int last_range;
  dlcemu_launch_stats st;
  unsigned bidx[3];       /* current block */
  uint64_t block_linear;
  int status;             /* first error of the launch */
  char *msg;              /* its message */
  size_t msg_cap;
  unsigned long long limit;
  uint64_t clock;         /* deterministic clock: warp instructions so far */
  int nsm;
  int restart;            /* a barrier completed: restart the round at warp 0 */
  int yield;              /* the running warp should end its quantum (a failed test_wait) */
  int check_races;        /* race.c: the shared-memory race detector */
  uint32_t *race_w, *race_r;       /* per shared byte: last write / read (epoch << 5 | warp) */
  uint32_t *race_wsrc, *race_rsrc; /* per shared byte: where (pc << 5 | lane) */
  uint32_t vc[32][32];    /* vector clock of each warp */
  uint32_t bar_vc[16][32];/* join of the clocks that arrived at each barrier */
} emu_run;

/* report.c */
void dlcemu_report(emu_run *R, int status, const emu_warp *w, int lane, const emu_insn *in, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void dlcemu_thread_coords(const emu_run *R, const emu_warp *w, int lane, unsigned t[3]);
void dlcemu_poison_report(emu_run *R, const emu_warp *w, int lane, const emu_insn *in, uint64_t off, unsigned size,
                          int write);
const emu_range *dlcemu_find_range(emu_run *R, uint64_t a); /* the allocation containing a, or NULL */
const emu_range *dlcemu_near_range(emu_run *R, uint64_t a); /* the allocation at or just below a (messages) */

/* lanes that can run now */
static inline uint32_t emu_runnable(const emu_warp *w) {
  return w->live & ~(w->bar_wait | w->coll_wait | w->wg_wait | w->mb_wait);
}

/* the shadow is consulted while copies are pending, mbarriers live or
 * uninitialized reads are checked */
static inline void emu_shadow_update(emu_run *R) {
  R->shadow_active = R->pending_bytes != 0 || R->live_mbars != 0 || R->nbstores != 0 || R->check_uninit;
}

/* a generic-proxy write of shared bytes [off, off + size) by lane `lane` of
 * warp w at pc: until w's next fence.proxy.async, the async proxy (wgmma,
 * TMA stores) may not see it (proxy_mark; no-op without wgmma) */
static inline void emu_proxy_write(emu_run *R, const emu_warp *w, int lane, uint32_t pc, uint64_t off, unsigned size) {
  if (!R->proxy_mark) return;
  uint32_t mark = 1 + (R->proxy_fences[w->id] << 5 | (uint32_t)w->id), src = pc << 5 | (uint32_t)lane;
  for (unsigned i = 0; i < size; i++) {
    R->proxy_mark[off + i] = mark;
    R->proxy_src[off + i] = src;
  }
}

static inline void emu_materialize(emu_warp *w) {
  if (w->diverged) return;
  uint32_t m = emu_runnable(w);
  while (m) {
    int l = __builtin_ctz(m);
    m &= m - 1;
    w->pc[l] = w->upc;
  }
  w->diverged = 1;
}

#endif /* DLC_EMU_RUN_H */
