/*
 * launch.c: runs a kernel launch (the scheduling model of docs/emulator.md).
 *
 * Blocks run one after another in linear order (x fastest).  In a block the
 * warps take turns in index order: each runs until all its lanes are blocked
 * (barrier, warp collective), have exited, or a quantum of instructions has
 * passed; then the next warp runs.  When a barrier completes, the round
 * starts again at warp 0.  When no warp can run and some lanes are still alive
 * the block is deadlocked, which is reported with the waiting and the missing
 * threads.
 *
 * Barriers, the warpgroup rendezvous and the landing of cp.async copies are
 * in sync.c; the interpreter (exec.c) runs a warp's quantum.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "launch.h"
#include "mbar.h"
#include "race.h"
#include "stats.h"
#include "sync.h"
#include "wgmma.h"

#define QUANTUM 2048

/* ------------------------------------------------------------- deadlock */
static void describe_lane(emu_run *R, const emu_warp *w, int l, char *buf, size_t cap) {
  unsigned t[3];
  dlcemu_thread_coords(R, w, l, t);
  if (!(w->live >> l & 1)) {
    snprintf(buf, cap, "thread (%u,%u,%u) has exited", t[0], t[1], t[2]);
  } else if (w->bar_wait >> l & 1) {
    const emu_insn *in = &R->k->code[w->pc[l]];
    snprintf(buf, cap, "thread (%u,%u,%u) waits at barrier %u at PTX line %u `%s`", t[0], t[1], t[2],
             w->bar_id[l], in->line, R->m->pool + in->text);
  } else if (w->mb_wait >> l & 1) {
    const emu_insn *in = &R->k->code[w->pc[l]];
    const emu_mbar *B = &R->mbars[w->mb_idx[l]];
    snprintf(buf, cap,
             "thread (%u,%u,%u) waits at PTX line %u `%s` for phase %u of the mbarrier at 0x%x (%u of %u arrivals "
             "pending, tx-count %d)",
             t[0], t[1], t[2], in->line, R->m->pool + in->text, w->mb_phase[l], B->off, B->pending, B->expected, B->tx);
  } else if (w->wg_wait >> l & 1) {
    const emu_insn *in = &R->k->code[w->pc[l]];
    snprintf(buf, cap, "thread (%u,%u,%u) waits at the warpgroup collective at PTX line %u `%s`", t[0], t[1],
             t[2], in->line, R->m->pool + in->text);
  } else if (w->coll_wait >> l & 1) {
    const emu_insn *in = &R->k->code[w->pc[l]];
    snprintf(buf, cap, "thread (%u,%u,%u) waits at the warp collective at PTX line %u `%s`", t[0], t[1], t[2],
             in->line, R->m->pool + in->text);
  } else {
    snprintf(buf, cap, "thread (%u,%u,%u) is runnable", t[0], t[1], t[2]);
  }
}

static void deadlock_report(emu_run *R) {
  char other[1200];
  for (uint32_t wi = 0; wi < R->nwarps; wi++) {
    emu_warp *w = &R->warps[wi];
    if (!w->bar_wait) continue;
    int l = __builtin_ctz(w->bar_wait);
    int b = w->bar_id[l];
    emu_barrier *B = &R->bars[b];
    const emu_insn *in = &R->k->code[w->pc[l]];
    other[0] = 0;
    /* a live thread that has not arrived */
    for (uint32_t wj = 0; wj < R->nwarps && !other[0]; wj++) {
      emu_warp *v = &R->warps[wj];
      if (B->warps & (1u << wj)) continue;
      uint32_t missing = v->live & ~v->bar_lanes[wj == wi ? b : b];
      uint32_t waiting_b = 0, bw = v->bar_wait;
      while (bw) {
        int k = __builtin_ctz(bw);
        bw &= bw - 1;
        if (v->bar_id[k] == b) waiting_b |= 1u << k;
      }
      missing &= ~waiting_b;
      if (missing) describe_lane(R, v, __builtin_ctz(missing), other, sizeof other);
    }
    if (!other[0] && B->expected)
      snprintf(other, sizeof other, "it expects %u threads but only %u have arrived and no other thread can",
               B->expected, B->count);
    if (!other[0]) snprintf(other, sizeof other, "no other thread can reach it");
    dlcemu_report(R, DLCEMU_ERROR_DEADLOCK, w, l, in, "barrier %d can never complete: %s", b, other);
    return;
  }
  for (uint32_t wi = 0; wi < R->nwarps; wi++) {
    emu_warp *w = &R->warps[wi];
    if (!w->mb_wait) continue;
    int l = __builtin_ctz(w->mb_wait);
    describe_lane(R, w, l, other, sizeof other);
    dlcemu_report(R, DLCEMU_ERROR_DEADLOCK, w, l, &R->k->code[w->pc[l]],
                  "mbarrier phase can never complete: no thread can arrive or complete transactions: %s", other);
    return;
  }
  for (uint32_t wi = 0; wi < R->nwarps; wi++) {
    emu_warp *w = &R->warps[wi];
    if (!w->coll_wait) continue;
    int l = __builtin_ctz(w->coll_wait);
    uint32_t pc = w->pc[l];
    const emu_insn *in = &R->k->code[pc];
    uint32_t here = 0, cw = w->coll_wait;
    while (cw) {
      int k = __builtin_ctz(cw);
      cw &= cw - 1;
      if (w->pc[k] == pc) here |= 1u << k;
    }
    uint32_t missing = w->live & ~here;
    other[0] = 0;
    if (missing) describe_lane(R, w, __builtin_ctz(missing), other, sizeof other);
    else snprintf(other, sizeof other, "its member mask names lanes that never arrive");
    dlcemu_report(R, DLCEMU_ERROR_DEADLOCK, w, l, in,
               "warp collective can never complete: lanes 0x%08x wait here, the others do not arrive: %s", here, other);
    return;
  }
  for (uint32_t wi = 0; wi < R->nwarps; wi++) {
    emu_warp *w = &R->warps[wi];
    if (!w->wg_wait) continue;
    uint32_t g = wi / 4;
    const emu_insn *in = &R->k->code[w->pc[0]];
    other[0] = 0;
    for (uint32_t wj = 4 * g; wj < 4 * g + 4 && !other[0]; wj++) {
      emu_warp *v = &R->warps[wj];
      if (R->wgroups[g].arrived >> (wj % 4) & 1) continue;
      uint32_t stuck = v->live ? v->live : v->exist;
      describe_lane(R, v, __builtin_ctz(stuck), other, sizeof other);
    }
    dlcemu_report(R, DLCEMU_ERROR_DEADLOCK, w, 0, in,
                  "warpgroup collective can never complete: warps 0x%x of warpgroup %u wait here, warp %u does not "
                  "arrive: %s",
                  R->wgroups[g].arrived, g, 4 * g + (uint32_t)__builtin_ctz(~R->wgroups[g].arrived & 0xFu), other);
    return;
  }
  dlcemu_report(R, DLCEMU_ERROR_DEADLOCK, &R->warps[0], 0, &R->k->code[0], "the block cannot make progress");
}

/* ------------------------------------------------------------- blocks */
static void init_block(emu_run *R) {
  emu_kernel *k = R->k;
  memset(R->smem, 0xFF, R->shared_size); /* shared memory starts as garbage */
  memset(R->shadow, R->check_uninit ? SH_UNINIT : SH_VALID, R->shared_size);
  R->pending_bytes = 0;
  dlcemu_mbar_block(R);
  dlcemu_wgmma_block(R);
  emu_shadow_update(R);
  dlcemu_race_block(R);
  memset(R->bars, 0, sizeof R->bars);
  memset(R->wgroups, 0, sizeof R->wgroups);
  R->bar_active = 0;
  R->live_warps = 0;
  unsigned bx = R->block[0], by = R->block[1];
  uint64_t dyn = R->dyn_shared, total = R->shared_size;
  for (uint32_t wi = 0; wi < R->nwarps; wi++) {
    emu_warp *w = &R->warps[wi];
    uint64_t(*r)[32] = w->r;
    uint32_t first = wi * 32u;
    uint32_t n = R->nthreads - first < 32 ? R->nthreads - first : 32;
    w->exist = n == 32 ? 0xFFFFFFFFu : (1u << n) - 1;
    w->live = w->exist;
    w->bar_wait = w->coll_wait = w->wg_wait = w->mb_wait = 0;
    memset(w->bar_lanes, 0, sizeof w->bar_lanes);
    w->upc = 0;
    w->diverged = 0;
    memset(w->depth, 0, sizeof w->depth);
    for (int l = 0; l < 32; l++) {
      w->cp[l].n = 0;
      w->cp[l].committed = 0;
      uint32_t t = first + (uint32_t)l;
      r[SR_TID_X][l] = t % bx;
      r[SR_TID_Y][l] = (t / bx) % by;
      r[SR_TID_Z][l] = t / (bx * by);
      r[SR_LANEID][l] = (uint64_t)l;
      r[SR_LANEMASK_EQ][l] = 1u << l;
      r[SR_LANEMASK_LT][l] = (1u << l) - 1;
      r[SR_LANEMASK_LE][l] = l == 31 ? 0xFFFFFFFFu : (2u << l) - 1;
      r[SR_LANEMASK_GT][l] = l == 31 ? 0 : ~((2u << l) - 1);
      r[SR_LANEMASK_GE][l] = ~((1u << l) - 1);
      r[SR_CARRY][l] = 0;
    }
    uint64_t vals[][2] = {
      {SR_NTID_X, R->block[0]}, {SR_NTID_Y, R->block[1]}, {SR_NTID_Z, R->block[2]},
      {SR_CTAID_X, R->bidx[0]}, {SR_CTAID_Y, R->bidx[1]}, {SR_CTAID_Z, R->bidx[2]},
      {SR_NCTAID_X, R->grid[0]}, {SR_NCTAID_Y, R->grid[1]}, {SR_NCTAID_Z, R->grid[2]},
      {SR_WARPID, wi}, {SR_NWARPID, 64}, {SR_SMID, R->block_linear % (uint64_t)R->nsm},
      {SR_NSMID, (uint64_t)R->nsm}, {SR_GRIDID, 1}, {SR_DYN_SMEM, dyn}, {SR_TOTAL_SMEM, total},
      {SR_CLUSTER_CTAID_X, 0}, {SR_CLUSTER_CTAID_Y, 0}, {SR_CLUSTER_CTAID_Z, 0},
      {SR_CLUSTER_NCTAID_X, 1}, {SR_CLUSTER_NCTAID_Y, 1}, {SR_CLUSTER_NCTAID_Z, 1},
      {SR_CLUSTERID_X, R->bidx[0]}, {SR_CLUSTERID_Y, R->bidx[1]}, {SR_CLUSTERID_Z, R->bidx[2]},
      {SR_NCLUSTERID_X, R->grid[0]}, {SR_NCLUSTERID_Y, R->grid[1]}, {SR_NCLUSTERID_Z, R->grid[2]},
      {SR_CLUSTER_CTARANK, 0}, {SR_CLUSTER_NCTARANK, 1}, {SR_IS_EXPLICIT_CLUSTER, 0},
    };
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
      for (int l = 0; l < 32; l++) r[vals[i][0]][l] = vals[i][1];
    w->p[PSLOT_FALSE] = 0;
    w->p[PSLOT_TRUE] = 0xFFFFFFFFu;
    if (w->live) R->live_warps |= 1u << wi;
  }
  (void)k;
}

static void run_block(emu_run *R) {
  init_block(R);
  for (;;) {
    int progress = 0;
    for (uint32_t wi = 0; wi < R->nwarps; wi++) {
      emu_warp *w = &R->warps[wi];
      if (!(emu_runnable(w))) continue;
      dlcemu_exec_warp(R, w, QUANTUM);
      progress = 1;
      if (R->status) return;
      if (R->restart) { /* after a barrier the warps go on in index order */
        R->restart = 0;
        break;
      }
      if (R->limit && R->st.warp_instructions > R->limit) {
        uint32_t run = emu_runnable(w);
        int l = run ? __builtin_ctz(run) : 0;
        uint32_t pc = w->diverged ? w->pc[l] : w->upc;
        dlcemu_report(R, DLCEMU_ERROR_LIMIT, w, l, &R->k->code[pc < (uint32_t)R->k->ncode ? pc : 0],
                   "the launch exceeded %llu warp instructions (endless loop? raise DLCEMU_LIMIT_WARP_INSTRUCTIONS)",
                   R->limit);
        return;
      }
    }
    if (!R->live_warps) break;
    if (!progress) {
      deadlock_report(R);
      return;
    }
  }
  /* copies never waited for still land (and are discarded with the block) */
  for (uint32_t wi = 0; wi < R->nwarps; wi++)
    for (int l = 0; l < 32; l++) R->warps[wi].cp[l].n = 0;
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

static void free_run(emu_run *R) {
  dlcemu_wgmma_free(R);
  if (R->warps) {
    for (uint32_t wi = 0; wi < R->nwarps; wi++) {
      emu_warp *w = &R->warps[wi];
      free(w->r);
      free(w->p);
      free(w->local);
      free(w->tparam);
      free(w->cstack);
      for (int l = 0; l < 32; l++) free(w->cp[l].e);
    }
    free(R->warps);
  }
  free(R->params);
  free(R->smem);
  free(R->shadow);
  free(R->ranges);
  free(R->msg);
  dlcemu_race_free(R);
  dlcemu_mbar_free(R);
}

int dlcemu_launch(emu_kernel *k, unsigned g[3], unsigned b[3], unsigned dyn_shared, void **params) {
  emu_module *m = k->mod;
  emu_func *entry = &m->funcs[k->func];
  const char *name = entry->name;
  if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2])
    return dlcemu_fail(DLCEMU_ERROR_LAUNCH_CONFIG, "launch of %s: grid and block dimensions must be nonzero", name);
  if (g[0] > 2147483647u || g[1] > 65535 || g[2] > 65535)
    return dlcemu_fail(DLCEMU_ERROR_LAUNCH_CONFIG, "launch of %s: grid (%u,%u,%u) is too large", name, g[0], g[1], g[2]);
  uint64_t nthreads = (uint64_t)b[0] * b[1] * b[2];
  if (b[0] > 1024 || b[1] > 1024 || b[2] > 64 || nthreads > 1024)
    return dlcemu_fail(DLCEMU_ERROR_LAUNCH_CONFIG, "launch of %s: block (%u,%u,%u) is too large", name, b[0], b[1], b[2]);
  if (nthreads > k->max_threads)
    return dlcemu_fail(DLCEMU_ERROR_LAUNCH_CONFIG, "launch of %s: %llu threads per block exceed its .maxntid/.reqntid (%u)",
                    name, (unsigned long long)nthreads, k->max_threads);
  if (k->reqntid[0] && (b[0] != k->reqntid[0] || b[1] != (k->reqntid[1] ? k->reqntid[1] : 1) ||
                        b[2] != (k->reqntid[2] ? k->reqntid[2] : 1)))
    return dlcemu_fail(DLCEMU_ERROR_LAUNCH_CONFIG, "launch of %s: block (%u,%u,%u) differs from its .reqntid", name, b[0],
                    b[1], b[2]);
  uint64_t max_shared = emu_max_shared_optin(m->target_sm);
  if (dyn_shared > k->max_dyn_shared)
    return dlcemu_fail(DLCEMU_ERROR_LAUNCH_CONFIG,
                       "launch of %s: %u bytes of dynamic shared memory exceed its limit of %llu (%llu static; static "
                       "and dynamic fit in 48 KB unless dlcemu_function_set_attribute(MAX_DYNAMIC_SHARED_BYTES), as "
                       "cudaFuncSetAttribute, raises it)",
                       name, dyn_shared, (unsigned long long)k->max_dyn_shared, (unsigned long long)k->static_shared);
  uint64_t dyn_base = dyn_shared ? align_up(k->static_shared, k->dyn_align) : k->static_shared;
  uint64_t shared_size = dyn_base + dyn_shared;
  if (shared_size > max_shared)
    return dlcemu_fail(DLCEMU_ERROR_LAUNCH_CONFIG,
                    "launch of %s: %llu bytes of shared memory (%llu static + %u dynamic) exceed the %llu of sm_%d", name,
                    (unsigned long long)shared_size, (unsigned long long)k->static_shared, dyn_shared,
                    (unsigned long long)max_shared, m->target_sm);
  if (entry->nparams && !params)
    return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "launch of %s: the kernel takes %d parameters but params is NULL", name,
                    entry->nparams);

  emu_run R;
  memset(&R, 0, sizeof R);
  R.k = k;
  R.m = m;
  memcpy(R.grid, g, sizeof R.grid);
  memcpy(R.block, b, sizeof R.block);
  R.nthreads = (uint32_t)nthreads;
  R.nwarps = (R.nthreads + 31) / 32;
  R.dyn_shared = dyn_shared;
  R.dyn_base = dyn_base;
  R.shared_size = shared_size;
  R.check_uninit = dlcemu_check_uninit_shared();
  R.check_races = dlcemu_check_races();
  R.limit = dlcemu_limit_instructions();
  R.last_range = -1;
  R.nsm = m->target_sm >= 90 ? 132 : m->target_sm == 80 ? 108 : 84;
  R.msg_cap = 4096;
  R.msg = malloc(R.msg_cap);
  R.param_bytes = entry->kparam_bytes;
  R.params = calloc(1, R.param_bytes ? R.param_bytes : 1);
  R.smem = malloc(shared_size ? shared_size : 1);
  R.shadow = malloc(shared_size ? shared_size : 1);
  R.warps = calloc(R.nwarps, sizeof(emu_warp));
  int rc = 0;
  if (!R.msg || !R.params || !R.smem || !R.shadow || !R.warps) {
    rc = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory for the launch of %s", name);
    goto out;
  }
  R.msg[0] = 0;
  for (int i = 0; i < entry->nparams; i++) {
    emu_sym *s = &m->syms[entry->params[i]];
    if (!params[i]) {
      rc = dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "launch of %s: params[%d] is NULL", name, i);
      goto out;
    }
    memcpy(R.params + s->off, params[i], s->size);
  }
  if ((rc = dlcemu_mem_snapshot(&R.ranges, &R.nranges))) goto out;
  if (R.check_races && (rc = dlcemu_race_alloc(&R))) goto out;
  for (int i = 0; i < k->ncode; i++) /* the proxy tracking wgmma and TMA stores need */
    if (k->code[i].op == OP_WGMMA || (k->code[i].op == OP_CP_BULK_TENSOR && k->code[i].sub)) {
      if ((rc = dlcemu_wgmma_alloc(&R))) goto out;
      break;
    }
  for (uint32_t wi = 0; wi < R.nwarps; wi++) {
    emu_warp *w = &R.warps[wi];
    w->id = (int)wi;
    w->r = calloc((size_t)k->nslots * 32, sizeof(uint64_t));
    w->p = calloc(k->npreds, sizeof(uint32_t));
    w->local = calloc(1, (size_t)k->local_bytes * 32 + 1);
    w->tparam = calloc(1, (size_t)k->tparam_bytes * 32 + 1);
    w->cstack = calloc((size_t)(k->max_call_depth + 1) * 32, sizeof(uint32_t));
    if (!w->r || !w->p || !w->local || !w->tparam || !w->cstack) {
      rc = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory for the launch of %s", name);
      goto out;
    }
    for (uint32_t i = 0; i < k->nconsts; i++)
      for (int l = 0; l < 32; l++) w->r[k->const_base + i][l] = k->const_vals[i];
  }
  for (unsigned z = 0; z < g[2] && !R.status; z++)
    for (unsigned y = 0; y < g[1] && !R.status; y++)
      for (unsigned x = 0; x < g[0] && !R.status; x++) {
        R.bidx[0] = x;
        R.bidx[1] = y;
        R.bidx[2] = z;
        R.block_linear = ((uint64_t)z * g[1] + y) * g[0] + x;
        run_block(&R);
        R.st.blocks++;
      }
  dlcemu_stats_publish(&R.st, name, g, b, dyn_shared, k->static_shared);
  if (R.status) rc = dlcemu_fail(R.status, "%s", R.msg);
  else dlcemu_clear_error();
out:
  free_run(&R);
  return rc;
}
