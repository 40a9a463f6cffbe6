/*
 * sync.c: the block-level synchronization a warp's instructions hand over
 * to: barriers (bar / barrier with ids, thread counts and reductions), the
 * warpgroup rendezvous of the sm_90a collectives, the landing of a thread's
 * cp.async copies and what happens when lanes exit (their copies land, the
 * barriers they no longer hold may complete).
 *
 * Barriers follow the PTX ISA: a warp arrives at barrier b when all of its
 * non-exited lanes have arrived (bar.sync / bar.red wait, bar.arrive does
 * not), and counts as 32 threads; a barrier without a thread count completes
 * when every warp with live lanes has arrived, one with a count when that
 * many threads have.  bar.sync is .aligned: the lanes of one warp must wait
 * at the same instruction.
 */
#include <string.h>

#include "race.h"
#include "sync.h"

/* ------------------------------------------------------------- cp.async */
int dlcemu_cp_land(emu_run *R, emu_warp *w, int lane, int all, uint32_t keep_groups) {
  emu_cpq *q = &w->cp[lane];
  uint32_t limit = q->committed > keep_groups ? q->committed - keep_groups : 0;
  int j = 0;
  for (int i = 0; i < q->n; i++) {
    emu_cp *e = &q->e[i];
    if (all || e->group < limit) {
      uint8_t *d = R->smem + e->dst, *sh = R->shadow + e->dst;
      switch (e->size) { /* constant sizes: inline copies */
      case 16: memcpy(d, e->data, 16); memset(sh, SH_VALID, 16); break;
      case 8: memcpy(d, e->data, 8); memset(sh, SH_VALID, 8); break;
      default: memcpy(d, e->data, 4); memset(sh, SH_VALID, 4); break;
      }
      if (R->check_races) dlcemu_race_landed(R, w, lane, e->pc, e->dst, e->size);
      /* cp.async writes through the generic proxy: a wgmma reading these
       * bytes needs this thread's fence.proxy.async after the landing */
      emu_proxy_write(R, w, lane, e->pc, e->dst, e->size);
      R->pending_bytes -= e->size;
    } else {
      q->e[j++] = *e;
    }
  }
  if (all && j != q->n) q->committed++; /* wait_all closes the open group */
  q->n = j;
  emu_shadow_update(R);
  return 0;
}

/* ------------------------------------------------------------- barriers */
static void bar_release(emu_run *R, int b) {
  emu_barrier *B = &R->bars[b];
  for (uint32_t wi = 0; wi < R->nwarps; wi++) {
    emu_warp *w = &R->warps[wi];
    uint32_t m = 0, bw = w->bar_wait;
    while (bw) {
      int l = __builtin_ctz(bw);
      bw &= bw - 1;
      if (w->bar_id[l] == b) m |= 1u << l;
    }
    if (!m) continue;
    emu_materialize(w);
    if (R->check_races) dlcemu_race_release(R, w, b);
    w->bar_wait &= ~m;
    while (m) {
      int l = __builtin_ctz(m);
      m &= m - 1;
      const emu_insn *in = &R->k->code[w->pc[l]];
      if (in->sub == BAR_RED) {
        if (in->sub2 == BRED_POPC) {
          w->r[in->a[0]][l] = B->red_popc;
        } else {
          int v = in->sub2 == BRED_AND ? B->red_and : B->red_or;
          w->p[in->a[0]] = (w->p[in->a[0]] & ~(1u << l)) | ((uint32_t)(v != 0) << l);
        }
      }
      w->pc[l]++;
    }
  }
  memset(B, 0, sizeof *B);
  if (R->check_races) dlcemu_race_barrier_done(R, b);
  R->bar_active &= ~(1u << b);
  R->st.barriers++;
  R->restart = 1;
}

static void bar_check_complete(emu_run *R, int b) {
  emu_barrier *B = &R->bars[b];
  int done = B->expected ? B->count >= B->expected : (B->warps & R->live_warps) == R->live_warps;
  if (done) bar_release(R, b);
}

/* warp w arrives at barrier b once all its live lanes have */
static void bar_check_warp(emu_run *R, emu_warp *w, int b, const emu_insn *in) {
  emu_barrier *B = &R->bars[b];
  if (B->warps & (1u << w->id)) return;
  uint32_t lanes = w->bar_lanes[b] & w->live;
  if (!lanes || lanes != w->live) return;
  /* an aligned barrier must be reached by the whole warp at one instruction */
  uint32_t waiting = 0, bw = w->bar_wait;
  while (bw) {
    int l = __builtin_ctz(bw);
    bw &= bw - 1;
    if (w->bar_id[l] == b) waiting |= 1u << l;
  }
  if (waiting) {
    int l0 = __builtin_ctz(waiting);
    uint32_t pc0 = w->pc[l0];
    uint32_t m = waiting;
    while (m) {
      int l = __builtin_ctz(m);
      m &= m - 1;
      if (w->pc[l] != pc0 && (R->k->code[pc0].flags & IF_ALIGNED)) {
        dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, l, &R->k->code[w->pc[l]],
                   "lanes of one warp wait at barrier %d at different instructions (PTX lines %u and %u); "
                   "bar.sync is .aligned, so every thread of a warp must execute the same one",
                   b, R->k->code[pc0].line, R->k->code[w->pc[l]].line);
        return;
      }
    }
  }
  (void)in;
  B->warps |= 1u << w->id;
  B->count += 32;
  if (R->check_races) dlcemu_race_arrive(R, w, b);
  w->bar_lanes[b] = 0;
  R->st.barrier_arrivals++;
  bar_check_complete(R, b);
}

void dlcemu_bar_exec(emu_run *R, emu_warp *w, const emu_insn *in, uint32_t pc, uint32_t active, uint32_t exec) {
  if (!exec) {
    if (!w->diverged) {
      w->upc = pc + 1;
    } else {
      uint32_t m = active;
      while (m) {
        int l = __builtin_ctz(m);
        m &= m - 1;
        w->pc[l] = pc + 1;
      }
    }
    return;
  }
  int l0 = __builtin_ctz(exec);
  int red = in->sub == BAR_RED;
  uint32_t id_slot = red ? in->a[1] : in->a[0];
  uint32_t cnt_slot = red ? in->a[2] : in->a[1];
  uint64_t b = w->r[id_slot][l0];
  if (b > 15) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, l0, in, "barrier id %llu is not in 0..15", (unsigned long long)b);
    return;
  }
  uint32_t cnt = 0;
  if (cnt_slot != SLOT_NONE) {
    uint64_t c = w->r[cnt_slot][l0] & 0xFFFFFFFFu;
    if (c == 0 || c % 32 || c > R->nwarps * 32u) {
      dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, l0, in,
                 "barrier thread count %llu must be a nonzero multiple of 32 no larger than the block (%u warps)",
                 (unsigned long long)c, R->nwarps);
      return;
    }
    cnt = (uint32_t)c;
  }
  emu_barrier *B = &R->bars[b];
  if (!(R->bar_active & (1u << b))) {
    memset(B, 0, sizeof *B);
    B->expected = cnt;
    B->red_and = 1;
    R->bar_active |= 1u << b;
  }
  emu_materialize(w);
  uint32_t m = active;
  int blocking = in->sub != BAR_ARRIVE;
  uint32_t pv = 0;
  if (red) {
    pv = w->p[in->a[3]];
    if (in->flags & IF_NEGB) pv = ~pv;
  }
  while (m) {
    int l = __builtin_ctz(m);
    m &= m - 1;
    if ((exec >> l & 1) && blocking) {
      w->pc[l] = pc;
      w->bar_id[l] = (uint8_t)b;
      if (red) {
        int v = (pv >> l) & 1;
        B->red_popc += (uint32_t)v;
        B->red_and &= v;
        B->red_or |= v;
      }
    } else {
      w->pc[l] = pc + 1;
    }
  }
  if (blocking) w->bar_wait |= exec;
  w->bar_lanes[b] |= exec;
  bar_check_warp(R, w, (int)b, in);
}

/* ------------------------------------------------------------- warpgroups */
/* Warp w (all 32 lanes, gathered at pc) arrives at a warpgroup collective.
 * Returns 1 when it completed the rendezvous (the instruction runs now and the
 * other three warps go on at pc + 1), 0 when it waits or on an error. */
int dlcemu_wg_arrive(emu_run *R, emu_warp *w, const emu_insn *in, uint32_t pc) {
  uint32_t g = (uint32_t)w->id / 4, bit = 1u << (w->id % 4);
  if (4 * g + 3 >= R->nwarps) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, 0, in,
                  "%s is a warpgroup collective: warpgroup %u needs warps %u..%u, but the block has %u warps "
                  "(launch a multiple of 128 threads)",
                  dlcemu_op_names[in->op], g, 4 * g, 4 * g + 3, R->nwarps);
    return 0;
  }
  emu_wgroup *G = &R->wgroups[g];
  if (G->arrived && G->pc != pc) {
    const emu_insn *other = &R->k->code[G->pc];
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, 0, in,
                  "the warps of warpgroup %u are at different warpgroup collectives (PTX lines %u and %u); "
                  ".aligned requires all 4 warps to execute the same one",
                  g, in->line, other->line);
    return 0;
  }
  G->pc = pc;
  G->arrived |= bit;
  if (G->arrived != 0xFu) {
    w->wg_wait = w->live;
    for (int l = 0; l < 32; l++) w->pc[l] = pc;
    w->upc = pc;
    w->diverged = 1;
    return 0;
  }
  /* complete: the instruction runs now, once for the whole warpgroup (the
   * caller does that: exec.c, wgmma.c); the waiting warps move on */
  for (uint32_t wi = 4 * g; wi < 4 * g + 4; wi++) {
    emu_warp *v = &R->warps[wi];
    if (v == w) continue;
    v->wg_wait = 0;
    v->diverged = 0;
    v->upc = pc + 1;
  }
  G->arrived = 0;
  R->st.warpgroup_syncs++;
  return 1;
}

void dlcemu_lanes_exit(emu_run *R, emu_warp *w, uint32_t lanes) {
  /* the copies of an exiting thread still complete */
  uint32_t m = lanes;
  while (m) {
    int l = __builtin_ctz(m);
    m &= m - 1;
    dlcemu_cp_land(R, w, l, 1, 0);
  }
  w->live &= ~lanes;
  if (!w->live) R->live_warps &= ~(1u << w->id);
  /* lanes waiting at a warp collective look again: the exited lanes no
   * longer count (shfl.sync waits for the non-exited lanes of its mask) */
  if (w->coll_wait) {
    emu_materialize(w);
    w->coll_wait = 0;
  }
  uint32_t act = R->bar_active;
  while (act) {
    int b = __builtin_ctz(act);
    act &= act - 1;
    if (!(R->bar_active & (1u << b))) continue;
    if (w->live) bar_check_warp(R, w, b, NULL);
    if (R->status) return;
    if (R->bar_active & (1u << b)) bar_check_complete(R, b);
  }
}

