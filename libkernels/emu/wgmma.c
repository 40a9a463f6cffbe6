/*
 * wgmma.c: wgmma.mma_async (PTX ISA "Asynchronous Warpgroup Level Matrix
 * Multiply-Accumulate"; docs/emulator.md, "wgmma").
 *
 * The 4 warps of a warpgroup meet at the instruction (sync.c's rendezvous),
 * then it runs once: A (64x16) comes from the registers of the 4 warps (RS)
 * or from shared memory through a matrix descriptor (SS), B (16xN) always
 * from shared memory, and D (64xN) is each warp's 16 rows in the
 * m16n8-style fragment of the ISA.  The result is computed at issue and
 * written to the registers at once, but those registers (and the RS A
 * registers) are marked in flight in the warpgroup's open wgmma group until a
 * wgmma.wait_group covers it; any other instruction touching them before
 * that is reported.  Products of f16/bf16 are exact in double; D (or 0 when
 * scale-d is false) and the 16 products are summed in k order and rounded
 * once, as for mma.sync.
 *
 * Descriptors: start address bits 0-13, leading byte offset 16-29, stride
 * byte offset 32-45 (all >> 4), base offset 49-51, swizzle 62-63 (0 none,
 * 1 128B, 2 64B, 3 32B).  The canonical layouts are the ISA's, in 16-byte
 * units (T) with W = 8, 4, 2, 1 units per swizzle row:
 *   K-major:  (row x, k): (x%8)*W + (x/8)*SBO + (kc%W) + (kc/W)*LBO, kc = k/8
 *             (without swizzle: (x%8) + (x/8)*SBO + kc*LBO)
 *   MN-major: (x, k):     (xc%W) + (xc/W)*LBO + (k%8)*W + (k/8)*SBO, xc = x/8
 *             (without swizzle: xc*SBO + (k%8) + (k/8)*LBO)
 * plus the element's bytes within its unit, then the swizzle xor of address
 * bits [4,7) with [7,10) (as the TMA writes them).
 *
 * Proxies: shared memory written by the generic proxy (st.shared, atomics,
 * stmatrix) must be made visible to the async proxy with fence.proxy.async by
 * the writing thread before a wgmma reads it; each byte remembers its last
 * generic writer and the writer's fence count at the time.
 */
#include <stdlib.h>
#include <string.h>

#include "fp.h"
#include "race.h"
#include "wgmma.h"

int dlcemu_wgmma_alloc(emu_run *R) {
  size_t n = R->shared_size ? R->shared_size : 1;
  R->proxy_mark = calloc(n, sizeof(uint32_t));
  R->proxy_src = calloc(n, sizeof(uint32_t));
  R->wg_buf = malloc(sizeof(double) * (64 * 16 + 16 * 256 + 64 * 256));
  if (!R->proxy_mark || !R->proxy_src || !R->wg_buf)
    return dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory for wgmma");
  return 0;
}

void dlcemu_wgmma_block(emu_run *R) {
  if (R->proxy_mark) memset(R->proxy_mark, 0, R->shared_size * sizeof(uint32_t));
  memset(R->proxy_fences, 0, sizeof R->proxy_fences);
  for (uint32_t wi = 0; wi < R->nwarps; wi++) {
    emu_warp *w = &R->warps[wi];
    if (w->wgtag) memset(w->wgtag, 0, R->k->nslots * sizeof(uint32_t));
    w->wg_maxtag = 0;
  }
}

void dlcemu_wgmma_free(emu_run *R) {
  free(R->proxy_mark);
  free(R->proxy_src);
  free(R->wg_buf);
  if (R->warps)
    for (uint32_t wi = 0; wi < R->nwarps; wi++) {
      free(R->warps[wi].wgtag);
      free(R->warps[wi].wgpc);
    }
}

void dlcemu_proxy_write(emu_run *R, const emu_warp *w, int lane, uint32_t pc, uint64_t off, unsigned size) {
  emu_proxy_write(R, w, lane, pc, off, size);
}

void dlcemu_proxy_fence(emu_run *R, const emu_warp *w) { R->proxy_fences[w->id]++; }

void dlcemu_wgmma_commit(emu_run *R, uint32_t g) { R->wgroups[g].committed++; }

void dlcemu_wgmma_wait(emu_run *R, uint32_t g, uint32_t n) {
  emu_wgroup *G = &R->wgroups[g];
  if (G->committed > n && G->committed - n > G->done) G->done = G->committed - n;
}

/* ------------------------------------------------------------- hazards */
static int slot_hazard(emu_run *R, emu_warp *w, const emu_insn *in, uint32_t slot) {
  uint32_t done = R->wgroups[w->id / 4].done;
  if (slot >= R->k->nslots || w->wgtag[slot] <= done) return 0;
  const emu_insn *wi = &R->k->code[w->wgpc[slot]];
  dlcemu_report(R, DLCEMU_ERROR_POISON, w, 0, in,
                "this touches a register of the wgmma.mma_async at PTX line %u (wgmma group %u) before a "
                "wgmma.wait_group covers that group: its accumulator and A-fragment registers are undefined to "
                "other instructions until then",
                wi->line, w->wgtag[slot] - 1);
  return -1;
}

int dlcemu_wgmma_hazard(emu_run *R, emu_warp *w, const emu_insn *in) {
  switch (in->op) {
  case OP_WGMMA: case OP_WG_FENCE: case OP_WG_COMMIT: case OP_WG_WAIT: case OP_SETMAXNREG: return 0;
  default: break;
  }
  for (int i = 0; i < 6; i++) {
    if (in->regmask >> i & 1) {
      if (slot_hazard(R, w, in, in->a[i])) return -1;
    } else if (in->vecmask >> i & 1) {
      const uint32_t *v = &R->k->vpool[in->a[i]];
      for (uint32_t j = 1; j <= v[0]; j++)
        if (slot_hazard(R, w, in, v[j])) return -1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------- operands */
static uint32_t desc_addr(uint64_t desc, int mn_major, uint32_t x, uint32_t k) {
  uint32_t start = (uint32_t)(desc & 0x3FFF) << 4, lbo = (uint32_t)((desc >> 16) & 0x3FFF) << 4,
           sbo = (uint32_t)((desc >> 32) & 0x3FFF) << 4;
  int mode = (int)(desc >> 62);
  uint32_t W = mode == 1 ? 8 : mode == 2 ? 4 : mode == 3 ? 2 : 1, a;
  if (!mn_major) {
    uint32_t kc = k / 8;
    a = mode ? (x % 8) * W * 16 + (x / 8) * sbo + (kc % W) * 16 + (kc / W) * lbo
             : (x % 8) * 16 + (x / 8) * sbo + kc * lbo;
    a += (k % 8) * 2;
  } else {
    uint32_t xc = x / 8;
    a = mode ? (xc % W) * 16 + (xc / W) * lbo + (k % 8) * W * 16 + (k / 8) * sbo
             : xc * sbo + (k % 8) * 16 + (k / 8) * lbo;
    a += (x % 8) * 2;
  }
  a += start;
  if (mode) a ^= ((a >> 7) & (W - 1)) << 4;
  return a;
}

/* one 16-bit element of a shared operand, checked like a load */
static int smem16(emu_run *R, emu_warp *w, const emu_insn *in, uint32_t pc, uint32_t a, int bf, double *out) {
  if (a + 2 > R->shared_size) {
    dlcemu_report(R, DLCEMU_ERROR_OUT_OF_BOUNDS, w, 0, in,
                  "wgmma reads shared offset 0x%x through its matrix descriptor, past the block's %llu bytes", a,
                  (unsigned long long)R->shared_size);
    return -1;
  }
  if (R->shadow_active && ((R->shadow[a] != SH_VALID && R->shadow[a] != SH_READING) ||
                           (R->shadow[a + 1] != SH_VALID && R->shadow[a + 1] != SH_READING))) {
    dlcemu_poison_report(R, w, 0, in, a, 2, 0);
    return -1;
  }
  for (int i = 0; i < 2; i++) {
    uint32_t m = R->proxy_mark[a + i];
    if (m && R->proxy_fences[(m - 1) & 31] == (m - 1) >> 5) {
      uint32_t src = R->proxy_src[a + i], wr = (m - 1) & 31;
      const emu_insn *wi = &R->k->code[src >> 5];
      dlcemu_report(R, DLCEMU_ERROR_RACE, w, 0, in,
                    "wgmma reads shared byte 0x%x, which thread %u wrote through the generic proxy at PTX line %u "
                    "`%s` with no fence.proxy.async by that thread since: the async proxy may not see the write",
                    a + i, wr * 32 + (src & 31), wi->line, R->m->pool + wi->text);
      return -1;
    }
  }
  if (R->check_races && dlcemu_race_read(R, w, 0, in, pc, a, 2)) return -1;
  uint16_t h;
  memcpy(&h, R->smem + a, 2);
  *out = bf ? fp_bf16_to_f32(h) : fp_f16_to_f32(h);
  return 0;
}

static int frag_row(int wi, int l, int i) { return 16 * wi + (l >> 2) + 8 * ((i >> 1) & 1); }
static int d_col(int l, int i) { return (i >> 2) * 8 + 2 * (l & 3) + (i & 1); }
static int a_col(int l, int i) { return 2 * (l & 3) + (i & 1) + 8 * (i >> 2); }

int dlcemu_wgmma_issue(emu_run *R, uint32_t g, const emu_insn *in, uint32_t pc) {
  emu_warp *w0 = &R->warps[4 * g];
  int N = in->sub * 8, bf = in->t2 == T_BF16, f32 = in->t == T_F32;
  double(*A)[16] = (double(*)[16])R->wg_buf;
  double(*B)[256] = (double(*)[256])(R->wg_buf + 64 * 16);
  double(*D)[256] = (double(*)[256])(R->wg_buf + 64 * 16 + 16 * 256);
  const uint32_t *vp = R->k->vpool;
  const uint32_t *Dv = &vp[in->a[0] + 1];
  /* the descriptors and scale-d come from the first thread: they must be warpgroup-uniform */
  uint64_t bdesc = w0->r[in->a[2]][0];
  int scale_d = (int)((w0->p[in->a[3]] & 1u) ^ ((in->flags & IF_NEGA) != 0));
  double sa = (in->sub2 & WG_NEG_A) ? -1.0 : 1.0, sb = (in->sub2 & WG_NEG_B) ? -1.0 : 1.0;
  if (((bdesc >> 49) & 7) || (!(in->sub2 & WG_RS) && ((w0->r[in->a[1]][0] >> 49) & 7))) {
    dlcemu_report(R, DLCEMU_ERROR_UNSUPPORTED, w0, 0, in, "a matrix descriptor with a nonzero base offset");
    return -1;
  }
  if (in->sub2 & WG_RS) {
    const uint32_t *Av = &vp[in->a[1] + 1];
    for (int wi = 0; wi < 4; wi++)
      for (int l = 0; l < 32; l++)
        for (int i = 0; i < 8; i++) {
          uint16_t h = (uint16_t)(R->warps[4 * g + wi].r[Av[i >> 1]][l] >> (16 * (i & 1)));
          A[frag_row(wi, l, i)][a_col(l, i)] = (bf ? fp_bf16_to_f32(h) : fp_f16_to_f32(h)) * sa;
        }
  } else {
    uint64_t adesc = w0->r[in->a[1]][0];
    for (uint32_t m = 0; m < 64; m++)
      for (uint32_t k = 0; k < 16; k++) {
        if (smem16(R, w0, in, pc, desc_addr(adesc, (in->sub2 & WG_TRANS_A) != 0, m, k), bf, &A[m][k])) return -1;
        A[m][k] *= sa;
      }
  }
  for (uint32_t k = 0; k < 16; k++)
    for (uint32_t n = 0; n < (uint32_t)N; n++) {
      if (smem16(R, w0, in, pc, desc_addr(bdesc, (in->sub2 & WG_TRANS_B) != 0, n, k), bf, &B[k][n])) return -1;
      B[k][n] *= sb;
    }
  /* D = (scale-d ? D : 0) + A * B, summed in k order in double, rounded once */
  int nd = f32 ? N / 2 : N / 4;
  for (int wi = 0; wi < 4; wi++) {
    uint64_t(*r)[32] = R->warps[4 * g + wi].r;
    for (int l = 0; l < 32; l++)
      for (int i = 0; i < N / 2; i++) {
        double c = 0;
        if (scale_d) {
          if (f32) c = fp_f32((uint32_t)r[Dv[i]][l]);
          else c = fp_f16_to_f32((uint16_t)(r[Dv[i >> 1]][l] >> (16 * (i & 1))));
        }
        D[frag_row(wi, l, i)][d_col(l, i)] = c;
      }
  }
  for (int m = 0; m < 64; m++)
    for (int n = 0; n < N; n++) {
      double acc = D[m][n];
      for (int k = 0; k < 16; k++) acc += A[m][k] * B[k][n];
      D[m][n] = acc;
    }
  uint32_t tag = R->wgroups[g].committed + 1;
  for (int wi = 0; wi < 4; wi++) {
    emu_warp *v = &R->warps[4 * g + wi];
    if (!v->wgtag) {
      v->wgtag = calloc(R->k->nslots, sizeof(uint32_t));
      v->wgpc = calloc(R->k->nslots, sizeof(uint32_t));
      if (!v->wgtag || !v->wgpc) {
        dlcemu_report(R, DLCEMU_ERROR_OUT_OF_MEMORY, v, 0, in, "out of memory for wgmma");
        return -1;
      }
    }
    uint64_t(*r)[32] = v->r;
    for (int l = 0; l < 32; l++) {
      if (f32) {
        for (int i = 0; i < nd; i++) {
          float x = (float)D[frag_row(wi, l, i)][d_col(l, i)];
          r[Dv[i]][l] = x != x ? 0x7FFFFFFFu : fp_u32(x);
        }
      } else {
        for (int j = 0; j < nd; j++) {
          uint64_t lo = dlcemu_fp_from_double(FMT_F16, D[frag_row(wi, l, 2 * j)][d_col(l, 2 * j)], RND_RN, 0);
          uint64_t hi = dlcemu_fp_from_double(FMT_F16, D[frag_row(wi, l, 2 * j + 1)][d_col(l, 2 * j + 1)], RND_RN, 0);
          r[Dv[j]][l] = lo | hi << 16;
        }
      }
    }
    for (int i = 0; i < nd; i++) {
      v->wgtag[Dv[i]] = tag;
      v->wgpc[Dv[i]] = pc;
    }
    if (in->sub2 & WG_RS) {
      const uint32_t *Av = &vp[in->a[1] + 1];
      for (int i = 0; i < 4; i++) {
        v->wgtag[Av[i]] = tag;
        v->wgpc[Av[i]] = pc;
      }
    }
    v->wg_maxtag = tag;
  }
  R->st.wgmma_ops++;
  R->st.tensor_flops += 2ull * 64 * (unsigned long long)N * 16;
  return 0;
}
