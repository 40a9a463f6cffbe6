/*
 * mbar.c: mbarrier objects and TMA tensor loads (PTX ISA: "mbarrier" and
 * "cp.async.bulk.tensor"; docs/emulator.md, "mbarrier and TMA").
 *
 * An mbarrier is 8 bytes of shared memory; its state (emu_mbar: phase count,
 * expected and pending arrivals, tx-count) lives in a side table keyed by
 * the offset, and the 8 bytes are marked SH_MBAR in the shadow so ordinary
 * loads and stores of them are errors.  A phase completes when its pending
 * arrivals and its tx-count are both zero; then the pending count is reset to
 * the expected count and the phase count goes up by one (its parity flips).
 *
 * A TMA load reads its box at issue (memcheck there), writes the poison
 * pattern to its destination and marks it SH_PENDING, and completes its
 * bytes as transactions on the mbarrier at once.  The data lands when a
 * thread observes the phase complete (test_wait / try_wait returning true):
 * until then a read of the destination is DLCEMU_ERROR_POISON.
 * mbarrier.try_wait sleeps until the phase completes (the ISA lets the
 * time limit be anything), so a wait nothing can satisfy is a deadlock.
 */
#include <stdlib.h>
#include <string.h>

#include "mbar.h"
#include "race.h"

#define TX_LIMIT ((1 << 20) - 1) /* the ISA's tx-count and arrival-count range */

void dlcemu_mbar_block(emu_run *R) {
  for (int i = 0; i < R->nbulks; i++) free(R->bulks[i].data);
  R->nbulks = 0;
  R->nbstores = 0;
  memset(R->bulk_committed, 0, sizeof R->bulk_committed);
  R->nmbars = 0;
  R->live_mbars = 0;
}

void dlcemu_mbar_free(emu_run *R) {
  dlcemu_mbar_block(R);
  free(R->bulks);
  free(R->bstores);
  free(R->mbars);
}

static int find(emu_run *R, const emu_warp *w, int lane, const emu_insn *in, uint32_t off) {
  for (int i = 0; i < R->nmbars; i++)
    if (R->mbars[i].off == off && R->mbars[i].live) return i;
  dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in,
                "mbarrier operation on shared offset 0x%x, which holds no initialized mbarrier "
                "(mbarrier.init it first; every thread must see the init through a barrier or fence.mbarrier_init)",
                off);
  return -1;
}

/* the TMA copies of phases that have completed land */
static void land(emu_run *R, int idx) {
  emu_mbar *B = &R->mbars[idx];
  int j = 0;
  for (int i = 0; i < R->nbulks; i++) {
    emu_bulk *e = &R->bulks[i];
    if (e->mbar == (uint32_t)idx && (int32_t)(B->phase - e->phase) > 0) {
      memcpy(R->smem + e->dst, e->data, e->bytes);
      memset(R->shadow + e->dst, SH_VALID, e->bytes);
      if (R->proxy_mark) memset(R->proxy_mark + e->dst, 0, e->bytes * sizeof(uint32_t)); /* written by the async proxy */
      if (R->check_races) dlcemu_race_landed_rec(R, e->race_rec, e->pc, (int)e->lane, e->dst, e->bytes);
      R->pending_bytes -= e->bytes;
      free(e->data);
    } else {
      R->bulks[j++] = *e;
    }
  }
  R->nbulks = j;
  emu_shadow_update(R);
}

/* the current phase is complete: the next begins, sleeping waiters wake */
static void complete(emu_run *R, int idx) {
  emu_mbar *B = &R->mbars[idx];
  B->phase++;
  B->pending = B->expected;
  B->tx = 0;
  R->st.mbarrier_phases++;
  int woke = 0;
  for (uint32_t wi = 0; wi < R->nwarps; wi++) {
    emu_warp *v = &R->warps[wi];
    uint32_t m = v->mb_wait, wake = 0;
    while (m) {
      int l = __builtin_ctz(m);
      m &= m - 1;
      if (v->mb_idx[l] == idx && (int32_t)(B->phase - v->mb_phase[l]) > 0) wake |= 1u << l;
    }
    if (!wake) continue;
    woke = 1;
    emu_materialize(v); /* per-lane pcs of the lanes still running, before the woken ones rejoin */
    v->mb_wait &= ~wake;
    if (R->check_races) dlcemu_race_acquire_from(R, v, B->vc);
    while (wake) { /* the try_wait returns true */
      int l = __builtin_ctz(wake);
      wake &= wake - 1;
      const emu_insn *in = &R->k->code[v->pc[l]];
      v->p[in->a[0]] |= 1u << l;
      v->pc[l]++;
    }
  }
  if (woke) land(R, idx); /* a woken thread observed the phase */
}

int dlcemu_mbar_init(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t off, uint64_t count) {
  if (count == 0 || count > TX_LIMIT) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in, "mbarrier.init count %llu is not in 1..%d",
                  (unsigned long long)count, TX_LIMIT);
    return -1;
  }
  int idx = -1;
  for (int i = 0; i < R->nmbars; i++)
    if (R->mbars[i].off == off) {
      if (R->mbars[i].live) {
        dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in,
                      "mbarrier.init of shared offset 0x%x, which holds a live mbarrier (initialized at PTX line %u; "
                      "mbarrier.inval it first)",
                      off, R->k->code[R->mbars[i].init_pc].line);
        return -1;
      }
      idx = i;
    }
  for (int i = 0; i < 8; i++)
    if (R->shadow[off + i] == SH_PENDING) {
      dlcemu_poison_report(R, w, lane, in, off, 8, 1);
      return -1;
    }
  if (idx < 0) {
    if (dlcemu_grow(&R->mbars, &R->capmbars, R->nmbars + 1, sizeof(emu_mbar))) {
      dlcemu_report(R, DLCEMU_ERROR_OUT_OF_MEMORY, w, lane, in, "out of memory for mbarriers");
      return -1;
    }
    idx = R->nmbars++;
  }
  emu_mbar *B = &R->mbars[idx];
  memset(B, 0, sizeof *B);
  B->off = off;
  B->expected = B->pending = (uint32_t)count;
  B->live = 1;
  B->init_pc = (uint32_t)(in - R->k->code);
  memset(R->smem + off, 0, 8);
  memset(R->shadow + off, SH_MBAR, 8);
  R->live_mbars++;
  emu_shadow_update(R);
  return 0;
}

int dlcemu_mbar_inval(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t off) {
  int idx = find(R, w, lane, in, off);
  if (idx < 0) return -1;
  for (int i = 0; i < R->nbulks; i++)
    if (R->bulks[i].mbar == (uint32_t)idx) {
      dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in,
                    "mbarrier.inval of the mbarrier at 0x%x while a cp.async.bulk.tensor issued at PTX line %u "
                    "completes on it has not landed",
                    off, R->k->code[R->bulks[i].pc].line);
      return -1;
    }
  for (uint32_t wi = 0; wi < R->nwarps; wi++) {
    uint32_t m = R->warps[wi].mb_wait;
    while (m) {
      int l = __builtin_ctz(m);
      m &= m - 1;
      if (R->warps[wi].mb_idx[l] == idx) {
        dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in,
                      "mbarrier.inval of the mbarrier at 0x%x while thread %u waits on it", off, wi * 32u + (unsigned)l);
        return -1;
      }
    }
  }
  R->mbars[idx].live = 0;
  memset(R->shadow + off, SH_VALID, 8);
  R->live_mbars--;
  emu_shadow_update(R);
  return 0;
}

static int tx_add(emu_run *R, emu_warp *w, int lane, const emu_insn *in, int idx, int64_t delta) {
  emu_mbar *B = &R->mbars[idx];
  int64_t tx = (int64_t)B->tx + delta;
  if (tx > TX_LIMIT || tx < -TX_LIMIT) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in,
                  "the tx-count of the mbarrier at 0x%x would be %lld, outside the ISA's range [-%d, %d]", B->off,
                  (long long)tx, TX_LIMIT, TX_LIMIT);
    return -1;
  }
  B->tx = (int32_t)tx;
  if (B->pending == 0 && B->tx == 0) complete(R, idx);
  return 0;
}

int dlcemu_mbar_arrive(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t off, uint64_t count,
                       uint64_t tx, uint64_t *state) {
  int idx = find(R, w, lane, in, off);
  if (idx < 0) return -1;
  emu_mbar *B = &R->mbars[idx];
  if (tx > TX_LIMIT) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in, "expect_tx of %llu bytes exceeds the ISA's limit %d",
                  (unsigned long long)tx, TX_LIMIT);
    return -1;
  }
  if (count == 0 || count > B->pending) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in,
                  "arrival count %llu on the mbarrier at 0x%x, whose current phase (%u) has %u of its %u arrivals "
                  "pending: more threads arrive than the barrier was initialized for",
                  (unsigned long long)count, off, B->phase, B->pending, B->expected);
    return -1;
  }
  *state = (uint64_t)off << 32 | B->phase;
  if (R->check_races) dlcemu_race_release_to(R, w, B->vc);
  int64_t t = (int64_t)B->tx + (int64_t)tx;
  if (t > TX_LIMIT) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in,
                  "the tx-count of the mbarrier at 0x%x would be %lld, above the ISA's limit %d", off, (long long)t,
                  TX_LIMIT);
    return -1;
  }
  B->tx = (int32_t)t;
  B->pending -= (uint32_t)count;
  if (B->pending == 0 && B->tx == 0) complete(R, idx);
  return 0;
}

int dlcemu_mbar_tx(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t off, int64_t delta) {
  int idx = find(R, w, lane, in, off);
  if (idx < 0) return -1;
  if (delta < -TX_LIMIT || delta > TX_LIMIT) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in, "a tx-count change of %lld exceeds the ISA's limit %d",
                  (long long)delta, TX_LIMIT);
    return -1;
  }
  if (delta < 0 && R->check_races) dlcemu_race_release_to(R, w, R->mbars[idx].vc);
  return tx_add(R, w, lane, in, idx, delta);
}

int dlcemu_mbar_wait(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t off, int parity,
                     uint64_t value, int sleep, int *done) {
  int idx = find(R, w, lane, in, off);
  if (idx < 0) return -1;
  emu_mbar *B = &R->mbars[idx];
  uint32_t target; /* the phase waited for: done once the phase count exceeds it */
  if (parity) {
    target = (B->phase & 1) == (value & 1) ? B->phase : B->phase - 1;
  } else {
    if ((uint32_t)(value >> 32) != off) {
      dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in,
                    "the state 0x%llx was not returned by an arrive on the mbarrier at 0x%x",
                    (unsigned long long)value, off);
      return -1;
    }
    target = (uint32_t)value;
    if ((int32_t)(target - B->phase) > 0) {
      dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in, "the state names phase %u of the mbarrier at 0x%x, "
                    "which has completed only %u phases", target, off, B->phase);
      return -1;
    }
  }
  *done = (int32_t)(B->phase - target) > 0;
  if (*done) {
    if (R->check_races) dlcemu_race_acquire_from(R, w, B->vc);
    land(R, idx);
  } else if (sleep) {
    w->mb_wait |= 1u << lane;
    w->mb_idx[lane] = (uint16_t)idx;
    w->mb_phase[lane] = target;
  }
  return 0;
}

/* ------------------------------------------------------------------ TMA */
/* the swizzled position of a 16-byte chunk: bits [4, 4+b) of the shared
 * address are xor-ed with bits [7, 7+b) (b = 1, 2, 3 for 32, 64, 128 bytes) */
static uint32_t swizzle(uint32_t a, int mode) {
  uint32_t mask = mode == DLCEMU_TENSOR_MAP_SWIZZLE_32B ? 1 : mode == DLCEMU_TENSOR_MAP_SWIZZLE_64B ? 3 : 7;
  return mode == DLCEMU_TENSOR_MAP_SWIZZLE_NONE ? a : a ^ (((a >> 7) & mask) << 4);
}

static void fill_oob(uint8_t *p, unsigned n, const emu_tmap *t) {
  if (t->oob_fill != DLCEMU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) {
    memset(p, 0, n);
    return;
  }
  unsigned es = t->elem_bytes; /* a canonical quiet NaN of the element type */
  uint64_t nan = es == 2 ? 0x7FFFu : es == 4 ? 0x7FFFFFFFu : 0x7FF8000000000000ull;
  if (t->data_type == DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT16) nan = 0x7FFFu;
  for (unsigned i = 0; i < n; i += es) memcpy(p + i, &nan, es);
}

int dlcemu_bulk_tensor_load(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t dst,
                            const emu_tmap *t, const int32_t *coords, uint32_t mbar_off) {
  if (t->magic != TMAP_MAGIC || t->rank < 1 || t->rank > 5 || !t->elem_bytes) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in,
                  "the tensor map operand does not hold a map made by dlcemu_tensor_map_encode_tiled");
    return -1;
  }
  if (t->rank != in->vec) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in, "the tensor map has rank %u but the instruction is .%ud",
                  t->rank, in->vec);
    return -1;
  }
  if (dst % 128) {
    dlcemu_report(R, DLCEMU_ERROR_MISALIGNED, w, lane, in,
                  "cp.async.bulk.tensor destination 0x%x is not 128-byte aligned", dst);
    return -1;
  }
  int rank = t->rank;
  unsigned es = t->elem_bytes;
  uint32_t n[5] = {1, 1, 1, 1, 1};
  uint64_t bytes = es;
  for (int i = 0; i < rank; i++) {
    n[i] = i == 0 ? t->box[0] : (t->box[i] + t->estride[i] - 1u) / t->estride[i];
    bytes *= n[i];
  }
  if (dst + bytes > R->shared_size) {
    dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, lane, in,
                  "cp.async.bulk.tensor writes %llu bytes at shared offset 0x%x, past the block's %llu bytes of "
                  "shared memory",
                  (unsigned long long)bytes, dst, (unsigned long long)R->shared_size);
    return -1;
  }
  int idx = find(R, w, lane, in, mbar_off);
  if (idx < 0) return -1;
  for (uint64_t i = 0; i < bytes; i++)
    if (R->shadow[dst + i] == SH_PENDING || R->shadow[dst + i] == SH_MBAR || R->shadow[dst + i] == SH_READING) {
      dlcemu_poison_report(R, w, lane, in, dst + i, 1, 1);
      return -1;
    }
  uint8_t *box = malloc(bytes), *out = malloc(bytes);
  if (!box || !out) {
    free(box);
    free(out);
    dlcemu_report(R, DLCEMU_ERROR_OUT_OF_MEMORY, w, lane, in, "out of memory for a TMA copy");
    return -1;
  }
  /* the box, dense, one row (n[0] elements along dimension 0) at a time */
  uint32_t rows = (uint32_t)(bytes / ((uint64_t)es * n[0]));
  unsigned rowb = es * n[0];
  for (uint32_t row = 0; row < rows; row++) {
    uint8_t *p = box + (uint64_t)row * rowb;
    int64_t c[5];
    uint32_t rest = row;
    int inb = 1;
    uint64_t a = t->global_address;
    for (int i = 1; i < rank; i++) {
      uint32_t j = rest % n[i];
      rest /= n[i];
      c[i] = (int64_t)coords[i] + (int64_t)j * t->estride[i];
      if (c[i] < 0 || c[i] > (int64_t)t->dim_minus1[i]) inb = 0;
      a += (uint64_t)c[i] * t->stride[i - 1];
    }
    int64_t lo = coords[0], hi = lo + n[0]; /* elements [lo, hi) of dimension 0 */
    int64_t in_lo = lo < 0 ? 0 : lo, in_hi = hi > (int64_t)t->dim_minus1[0] + 1 ? (int64_t)t->dim_minus1[0] + 1 : hi;
    if (!inb || in_lo >= in_hi) {
      fill_oob(p, rowb, t);
      continue;
    }
    fill_oob(p, (unsigned)((in_lo - lo) * es), t);
    fill_oob(p + (in_hi - lo) * es, (unsigned)((hi - in_hi) * es), t);
    uint64_t ga = a + (uint64_t)in_lo * es, gn = (uint64_t)(in_hi - in_lo) * es;
    const emu_range *g = dlcemu_find_range(R, ga);
    if (!g || ga + gn > g->end) {
      dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, lane, in,
                    "cp.async.bulk.tensor reads %llu bytes at 0x%llx (box row %u of the tensor map at global "
                    "address 0x%llx), which are not inside one allocation: the tensor map's dimensions or strides "
                    "describe memory that was not allocated",
                    (unsigned long long)gn, (unsigned long long)ga, row, (unsigned long long)t->global_address);
      free(box);
      free(out);
      return -1;
    }
    memcpy(p + (in_lo - lo) * es, (const void *)(uintptr_t)ga, gn);
  }
  /* the swizzle moves 16-byte chunks by their shared address */
  for (uint64_t o = 0; o < bytes; o += 16) {
    uint32_t to = swizzle(dst + (uint32_t)o, t->swizzle) - dst;
    if (to + 16 > bytes) {
      dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in,
                    "the swizzled box leaves its %llu-byte destination at 0x%x: align it to the swizzle's repeat "
                    "(256, 512 or 1024 bytes for 32, 64 or 128-byte swizzles)",
                    (unsigned long long)bytes, dst);
      free(box);
      free(out);
      return -1;
    }
    memcpy(out + to, box + o, 16);
  }
  free(box);
  uint32_t pc = (uint32_t)(in - R->k->code);
  if (R->check_races && dlcemu_race_write(R, w, lane, in, pc, dst, (unsigned)bytes, NULL)) {
    free(out);
    return -1;
  }
  if (dlcemu_grow(&R->bulks, &R->capbulks, R->nbulks + 1, sizeof(emu_bulk))) {
    free(out);
    dlcemu_report(R, DLCEMU_ERROR_OUT_OF_MEMORY, w, lane, in, "out of memory for a TMA copy");
    return -1;
  }
  emu_bulk *e = &R->bulks[R->nbulks++];
  e->dst = dst;
  e->bytes = (uint32_t)bytes;
  e->mbar = (uint32_t)idx;
  e->phase = R->mbars[idx].phase;
  e->pc = pc;
  e->warp = (uint32_t)w->id;
  e->lane = (uint32_t)lane;
  e->race_rec = R->check_races ? dlcemu_race_epoch_rec(R, w) : 0;
  e->data = out;
  memset(R->shadow + dst, SH_PENDING, bytes);
  memset(R->smem + dst, 0xFF, bytes); /* the poison pattern until it lands */
  R->pending_bytes += bytes;
  emu_shadow_update(R);
  R->st.tma_copies++;
  R->st.tma_bytes += bytes;
  /* the copy's bytes complete as transactions on the mbarrier */
  if (R->check_races) dlcemu_race_release_to(R, w, R->mbars[idx].vc);
  return tx_add(R, w, lane, in, idx, -(int64_t)bytes);
}

/* ------------------------------------------------------------ TMA stores */
void dlcemu_bulk_commit(emu_run *R, const emu_warp *w, int lane) { R->bulk_committed[w->id][lane]++; }

void dlcemu_bulk_wait(emu_run *R, const emu_warp *w, int lane, uint32_t keep, int all) {
  uint32_t c = R->bulk_committed[w->id][lane], limit = c > keep ? c - keep : 0;
  int j = 0, changed = 0;
  for (int i = 0; i < R->nbstores; i++) {
    emu_bstore *e = &R->bstores[i];
    if (e->warp == (uint32_t)w->id && e->lane == (uint32_t)lane && (all || e->group < limit)) {
      memset(R->shadow + e->src, SH_VALID, e->bytes);
      changed = 1;
    } else {
      R->bstores[j++] = *e;
    }
  }
  R->nbstores = j;
  if (changed) /* sources other stores still read stay marked */
    for (int i = 0; i < R->nbstores; i++) memset(R->shadow + R->bstores[i].src, SH_READING, R->bstores[i].bytes);
  emu_shadow_update(R);
}

int dlcemu_bulk_tensor_store(emu_run *R, emu_warp *w, int lane, const emu_insn *in, uint32_t src,
                             const emu_tmap *t, const int32_t *coords) {
  if (t->magic != TMAP_MAGIC || t->rank < 1 || t->rank > 5 || !t->elem_bytes) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in,
                  "the tensor map operand does not hold a map made by dlcemu_tensor_map_encode_tiled");
    return -1;
  }
  if (t->rank != in->vec) {
    dlcemu_report(R, DLCEMU_ERROR_ILLEGAL, w, lane, in, "the tensor map has rank %u but the instruction is .%ud",
                  t->rank, in->vec);
    return -1;
  }
  if (src % 128) {
    dlcemu_report(R, DLCEMU_ERROR_MISALIGNED, w, lane, in, "cp.async.bulk.tensor source 0x%x is not 128-byte aligned",
                  src);
    return -1;
  }
  int rank = t->rank;
  unsigned es = t->elem_bytes;
  uint32_t n[5] = {1, 1, 1, 1, 1};
  uint64_t bytes = es;
  for (int i = 0; i < rank; i++) {
    n[i] = i == 0 ? t->box[0] : (t->box[i] + t->estride[i] - 1u) / t->estride[i];
    bytes *= n[i];
  }
  if (src + bytes > R->shared_size) {
    dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, lane, in,
                  "cp.async.bulk.tensor reads %llu bytes at shared offset 0x%x, past the block's %llu bytes of shared "
                  "memory",
                  (unsigned long long)bytes, src, (unsigned long long)R->shared_size);
    return -1;
  }
  /* the source, read by the async proxy: landed, and made visible by fence.proxy.async after generic writes */
  uint32_t pc = (uint32_t)(in - R->k->code);
  for (uint64_t i = 0; i < bytes; i++) {
    uint8_t sh = R->shadow[src + i];
    if (sh != SH_VALID && sh != SH_READING) {
      dlcemu_poison_report(R, w, lane, in, src + i, 1, 0);
      return -1;
    }
    uint32_t m = R->proxy_mark ? R->proxy_mark[src + i] : 0;
    if (m && R->proxy_fences[(m - 1) & 31] == (m - 1) >> 5) {
      uint32_t s = R->proxy_src[src + i], wr = (m - 1) & 31;
      const emu_insn *wi = &R->k->code[s >> 5];
      dlcemu_report(R, DLCEMU_ERROR_RACE, w, lane, in,
                    "cp.async.bulk.tensor reads shared byte 0x%llx, which thread %u wrote through the generic proxy "
                    "at PTX line %u `%s` with no fence.proxy.async by that thread since: the async proxy may not see "
                    "the write",
                    (unsigned long long)(src + i), wr * 32 + (s & 31), wi->line, R->m->pool + wi->text);
      return -1;
    }
  }
  if (R->check_races && dlcemu_race_read(R, w, lane, in, pc, src, (unsigned)bytes)) return -1;
  uint8_t *box = malloc(bytes);
  if (!box) {
    dlcemu_report(R, DLCEMU_ERROR_OUT_OF_MEMORY, w, lane, in, "out of memory for a TMA copy");
    return -1;
  }
  for (uint64_t o = 0; o < bytes; o += 16) /* undo the swizzle: chunk o of the dense box */
    memcpy(box + o, R->smem + swizzle(src + (uint32_t)o, t->swizzle), 16);
  uint32_t rows = (uint32_t)(bytes / ((uint64_t)es * n[0]));
  unsigned rowb = es * n[0];
  for (uint32_t row = 0; row < rows; row++) {
    uint32_t rest = row;
    int inb = 1;
    uint64_t a = t->global_address;
    for (int i = 1; i < rank; i++) {
      uint32_t j = rest % n[i];
      rest /= n[i];
      int64_t c = (int64_t)coords[i] + (int64_t)j * t->estride[i];
      if (c < 0 || c > (int64_t)t->dim_minus1[i]) inb = 0;
      a += (uint64_t)c * t->stride[i - 1];
    }
    int64_t lo = coords[0], hi = lo + n[0];
    int64_t in_lo = lo < 0 ? 0 : lo, in_hi = hi > (int64_t)t->dim_minus1[0] + 1 ? (int64_t)t->dim_minus1[0] + 1 : hi;
    if (!inb || in_lo >= in_hi) continue; /* out-of-bounds elements are not written */
    uint64_t ga = a + (uint64_t)in_lo * es, gn = (uint64_t)(in_hi - in_lo) * es;
    const emu_range *g = dlcemu_find_range(R, ga);
    if (!g || ga + gn > g->end || g->readonly) {
      dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, lane, in,
                    "cp.async.bulk.tensor writes %llu bytes at 0x%llx (box row %u of the tensor map at global "
                    "address 0x%llx), which are not inside one writable allocation",
                    (unsigned long long)gn, (unsigned long long)ga, row, (unsigned long long)t->global_address);
      free(box);
      return -1;
    }
    memcpy((void *)(uintptr_t)ga, box + (uint64_t)row * rowb + (in_lo - lo) * es, gn);
  }
  (void)rowb;
  free(box);
  if (dlcemu_grow(&R->bstores, &R->capbstores, R->nbstores + 1, sizeof(emu_bstore))) {
    dlcemu_report(R, DLCEMU_ERROR_OUT_OF_MEMORY, w, lane, in, "out of memory for a TMA copy");
    return -1;
  }
  emu_bstore *e = &R->bstores[R->nbstores++];
  e->src = src;
  e->bytes = (uint32_t)bytes;
  e->warp = (uint32_t)w->id;
  e->lane = (uint32_t)lane;
  e->group = R->bulk_committed[w->id][lane];
  e->pc = pc;
  memset(R->shadow + src, SH_READING, bytes);
  emu_shadow_update(R);
  R->st.tma_copies++;
  R->st.tma_bytes += bytes;
  return 0;
}
