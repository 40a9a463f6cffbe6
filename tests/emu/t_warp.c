/*
 * t_warp.c: warp collectives, divergence and reconvergence, barriers
 * (kernels/warp.cu).  Shuffle references follow the CUDA C semantics of
 * __shfl*_sync (source lane and width), not the PTX formula.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_test.h"

static int shfl_idx(int lane, int src, int width) { return (lane & ~(width - 1)) | (src & (width - 1)); }
static int shfl_up(int lane, int d, int width) { return (lane % width) < d ? lane : lane - d; }
static int shfl_down(int lane, int d, int width) { return (lane % width) + d >= width ? lane : lane + d; }
static int shfl_xor(int lane, int m, int width) {
  int j = lane ^ m;
  return j / width > lane / width ? lane : j;
}

int test_shuffle_modes_widths_and_predicates(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "warp"), "shuffles");
  REQUIRE(f, "no kernel");
  enum { n = 64 };
  int in[n], out[n * 16];
  uint32_t s = 5;
  for (int i = 0; i < n; i++) in[i] = (int)(t_rand(&s) % 2000) - 1000;
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, sizeof out, NULL);
  void *params[] = {&din, &dout};
  OK(t_launch(t, f, 1, n, 0, params));
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < n; i++) {
    int lane = i % 32, base = i - lane;
    const int *o = out + i * 16;
#define V(l) in[base + (l)]
    CHECK(o[0] == V(shfl_idx(lane, (lane * 7 + 3) % 32, 32)), "idx lane %d", i);
    CHECK(o[1] == V(shfl_up(lane, 3, 32)), "up lane %d", i);
    CHECK(o[2] == V(shfl_down(lane, 5, 32)), "down lane %d", i);
    CHECK(o[3] == V(shfl_xor(lane, 6, 32)), "xor lane %d", i);
    CHECK(o[4] == V(shfl_idx(lane, 2, 8)), "idx width 8 lane %d", i);
    CHECK(o[5] == V(shfl_up(lane, 1, 8)), "up width 8 lane %d", i);
    CHECK(o[6] == V(shfl_down(lane, 2, 16)), "down width 16 lane %d", i);
    CHECK(o[7] == V(shfl_xor(lane, 1, 4)), "xor width 4 lane %d", i);
    CHECK(o[8] == V(in[i] & 31), "idx run-time lane %d", i);
    CHECK(o[9] == V(shfl_down(lane, 1, 32)), "double down lane %d", i);
    CHECK(o[10] == V(lane < 4 ? lane : lane - 4) && o[11] == (lane >= 4), "up predicate lane %d", i);
    CHECK(o[12] == V((lane & ~3) | 3) && o[13] == 1, "idx with segment mask lane %d", i);
#undef V
  }
  return 0;
}

int test_vote_match_redux_activemask(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "warp"), "votes");
  REQUIRE(f, "no kernel");
  enum { n = 64 };
  int in[n];
  unsigned out[n * 16];
  uint32_t s = 77;
  for (int i = 0; i < n; i++) in[i] = i < 32 ? (int)(t_rand(&s) % 900) : (int)(t_rand(&s) % 3000);
  in[40] = 7;
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, sizeof out, NULL);
  void *params[] = {&din, &dout};
  OK(t_launch(t, f, 1, n, 0, params));
  t_download(t, out, dout, sizeof out);
  for (int w = 0; w < 2; w++) {
    const int *v = in + 32 * w;
    unsigned ballot = 0, any7 = 0, allpos = 1, sum = 0, mn = 0x7FFFFFFF, mx = 0, band = ~0u, bor = 0, bxor = 0;
    unsigned act = 0, nb4 = 0;
    int same = 1;
    for (int l = 0; l < 32; l++) {
      ballot |= (unsigned)(v[l] & 1) << l;
      any7 |= v[l] == 7;
      allpos &= v[l] >= 0;
      sum += (unsigned)v[l];
      if (v[l] < (int)mn) mn = (unsigned)v[l];
      if ((unsigned)v[l] > mx) mx = (unsigned)v[l];
      band &= (unsigned)v[l] | 0x100;
      bor |= (unsigned)v[l];
      bxor ^= (unsigned)v[l];
      if (v[l] & 2) act |= 1u << l;
      if (!(v[l] & 4)) nb4 |= 1u << l;
      same &= v[l] / 1000 == v[0] / 1000;
    }
    for (int l = 0; l < 32; l++) {
      const unsigned *o = out + (32 * w + l) * 16;
      unsigned m3 = 0, m5 = 0;
      for (int k = 0; k < 32; k++) {
        if (v[k] % 3 == v[l] % 3) m3 |= 1u << k;
        if (v[k] % 5 == v[l] % 5) m5 |= 1u << k;
      }
      CHECK(o[0] == ballot && o[1] == any7 && o[2] == allpos, "warp %d lane %d ballot/any/all", w, l);
      CHECK(o[3] == m3, "match.any lane %d: 0x%08x want 0x%08x", l, o[3], m3);
      CHECK(o[4] == (same ? ~0u : 0) && o[5] == (unsigned)same, "match.all warp %d", w);
      CHECK(o[6] == sum && o[7] == mn && o[8] == mx, "redux add/min/max warp %d", w);
      CHECK(o[9] == band && o[10] == bor && o[11] == bxor, "redux and/or/xor warp %d", w);
      CHECK(o[12] == 1, "vote.uni");
      CHECK(o[13] == ((v[l] & 2) ? act : 0xABCD), "activemask lane %d: 0x%08x want 0x%08x", l, o[13], act);
      CHECK(o[14] == m5, "match.any.b64 lane %d", l);
      CHECK(o[15] == nb4, "ballot of a negated predicate");
    }
  }
  return 0;
}

int test_divergent_branches_and_loops_reconverge(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "warp"), "divergence");
  REQUIRE(f, "no kernel");
  enum { n = 64 };
  int in[n], out[n * 4];
  uint32_t s = 31;
  for (int i = 0; i < n; i++) in[i] = (int)t_rand(&s);
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, sizeof out, NULL);
  void *params[] = {&din, &dout};
  OK(t_launch(t, f, 1, n, 0, params));
  t_download(t, out, dout, sizeof out);
  int acc[n];
  for (int i = 0; i < n; i++) {
    int lane = i % 32, v = in[i], a = 0;
    for (int k = 0; k < (v & 15); k++) {
      if (k & 1) a += k * 3;
      else a -= k;
      if (a > 40 && (lane & 4)) break;
    }
    if (lane < 10) {
      a *= 2;
      a += lane < 5 ? 100 : -100;
    } else if (lane < 20) {
      for (int k = 0; k < lane; k++) a ^= k;
    } else {
      a += __builtin_popcount((unsigned)v);
    }
    acc[i] = a;
  }
  for (int i = 0; i < n; i++) {
    int base = i - i % 32, lane = i % 32, sum = 0;
    for (int k = 0; k < 32; k++) sum += acc[base + k];
    CHECK(out[i * 4] == acc[i], "acc lane %d: %d want %d", i, out[i * 4], acc[i]);
    CHECK(out[i * 4 + 1] == -1, "ballot after reconvergence 0x%08x", out[i * 4 + 1]);
    CHECK(out[i * 4 + 2] == sum, "butterfly sum lane %d", i);
    int e = (lane & 1) ? -1 : in[base + (lane + 2) % 32];
    CHECK(out[i * 4 + 3] == e, "even-lane shuffle lane %d", i);
  }
  return 0;
}

int test_exited_threads_do_not_block_barriers(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "warp"), "barrier_after_exit");
  REQUIRE(f, "no kernel");
  int in[96], out[96];
  for (int i = 0; i < 96; i++) in[i] = i * 5 - 7;
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, sizeof out, NULL);
  int n = 70; /* warp 2 keeps 6 lanes, 26 exit before the barriers */
  void *params[] = {&din, &dout, &n};
  OK(t_launch(t, f, 1, 96, 0, params));
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < n; i++) CHECK(out[i] == in[((n - 1 - i) + 1) % n] * 2 + 1, "thread %d", i);
  dlcemu_launch_stats st;
  OK(dlcemu_last_launch_stats(&st));
  CHECK(st.barriers == 3, "%llu barriers completed", st.barriers);
  n = 30; /* whole warps exit */
  OK(t_launch(t, f, 1, 96, 0, params));
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < n; i++) CHECK(out[i] == in[((n - 1 - i) + 1) % n] * 2 + 1, "thread %d", i);
  return 0;
}

int test_barrier_reductions_popc_and_or(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "warp"), "barrier_reductions");
  REQUIRE(f, "no kernel");
  int in[128], out[128];
  int cnt = 0;
  for (int i = 0; i < 128; i++) {
    in[i] = (i * 37) % 50;
    cnt += in[i] > 10;
  }
  int has42 = 0;
  for (int i = 0; i < 128; i++) has42 |= in[i] == 42;
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, sizeof out, NULL);
  void *params[] = {&din, &dout};
  OK(t_launch(t, f, 1, 128, 0, params));
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < 128; i++) CHECK(out[i] == cnt * 4 + 2 + has42, "thread %d: %d", i, out[i]);
  in[77] = -1;
  OK(dlcemu_memcpy_htod(din, in, sizeof in));
  OK(t_launch(t, f, 1, 128, 0, params));
  t_download(t, out, dout, sizeof out);
  cnt = 0;
  for (int i = 0; i < 128; i++) cnt += in[i] > 10;
  for (int i = 0; i < 128; i++) CHECK(out[i] == cnt * 4 + has42, "thread %d: %d (and is false)", i, out[i]);
  return 0;
}

int test_named_barriers_arrive_and_sync(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "warp"), "named_barriers");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr dout = t_alloc(t, 128 * 4, NULL);
  void *params[] = {&dout};
  OK(t_launch(t, f, 1, 128, 0, params));
  int out[128];
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < 64; i++) {
    int tt = i + 64;
    CHECK(out[i] == (127 - tt) * (127 - tt) + 1, "consumer %d", tt);
    CHECK(out[64 + i] == i * i, "producer %d", i);
  }
  return 0;
}

int test_partial_warp_collectives(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "warp"), "partial_warp");
  REQUIRE(f, "no kernel");
  int in[48], out[96];
  for (int i = 0; i < 48; i++) in[i] = (i % 7) - 2;
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, sizeof out, NULL);
  void *params[] = {&din, &dout};
  OK(t_launch(t, f, 1, 48, 0, params));
  t_download(t, out, dout, sizeof out);
  for (int w = 0; w < 2; w++) {
    int n = w ? 16 : 32, sum = 0;
    unsigned b = 0;
    for (int l = 0; l < n; l++) {
      sum += in[32 * w + l];
      b |= (unsigned)(in[32 * w + l] > 0) << l;
    }
    if (w == 0) CHECK(out[0] == sum, "warp 0 sum %d want %d", out[0], sum);
    else CHECK(out[64] == sum, "warp 1 (16 lanes) sum %d want %d", out[64], sum);
    for (int l = 0; l < n; l++) CHECK((unsigned)out[(32 * w + l) * 2 + 1] == b, "ballot warp %d", w);
  }
  return 0;
}

int test_syncwarp_exchange(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "warp"), "syncwarp_exchange");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr dout = t_alloc(t, 32 * 4, NULL);
  void *params[] = {&dout};
  OK(t_launch(t, f, 1, 32, 0, params));
  int out[32];
  t_download(t, out, dout, sizeof out);
  for (int l = 0; l < 32; l++) {
    int src = 31 - l;
    CHECK(out[l] == (src < 16 ? src * 10 : -src), "lane %d", l);
  }
  return 0;
}

int test_warpgroup_collectives_wait_for_all_four_warps(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "warp"), "warpgroup_rendezvous");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr dout = t_alloc(t, 8 * 8 * 4, NULL), dcnt = t_alloc(t, 4, NULL);
  void *params[] = {&dout, &dcnt};
  OK(t_launch(t, f, 1, 256, 0, params));
  int out[64];
  t_download(t, out, dout, sizeof out);
  static const char *const what[] = {"wgmma.fence", "wgmma.commit_group + wait_group", "setmaxnreg"};
  for (int g = 0; g < 2; g++)
    for (int s = 0; s < 3; s++) {
      int last_before = -1, first_after = 1 << 30;
      for (int w = 4 * g; w < 4 * g + 4; w++) {
        if (out[w * 8 + 2 * s] > last_before) last_before = out[w * 8 + 2 * s];
        if (out[w * 8 + 2 * s + 1] < first_after) first_after = out[w * 8 + 2 * s + 1];
      }
      CHECK(last_before < first_after, "warpgroup %d, %s: a warp went on (ticket %d) before the last arrived (%d)", g,
            what[s], first_after, last_before);
    }
  /* the warps did arrive at different times: warp 0 took its ticket before warp 3 */
  CHECK(out[0] < out[3 * 8], "warp 0 ticket %d, warp 3 ticket %d", out[0], out[3 * 8]);
  dlcemu_launch_stats st;
  OK(dlcemu_last_launch_stats(&st));
  CHECK(st.warpgroup_syncs == 8, "warpgroup_syncs %llu, want 2 groups x 4 collectives", st.warpgroup_syncs);
  CHECK(strstr(dlcemu_last_launch_stats_json(), "\"warpgroup_syncs\": 8") != NULL, "JSON: %s",
        dlcemu_last_launch_stats_json());
  return 0;
}

int test_elect_sync_picks_lowest_member_lane(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "warp"), "elect_leaders");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr dout = t_alloc(t, 32 * 4 * 4, NULL);
  void *params[] = {&dout};
  OK(t_launch(t, f, 1, 32, 0, params));
  int out[128];
  t_download(t, out, dout, sizeof out);
  for (int l = 0; l < 32; l++) {
    CHECK(out[l * 4] == (l == 0 ? 1 : 0), "full mask, lane %d: %d", l, out[l * 4]);
    CHECK(out[l * 4 + 1] == ((l & 1) ? (l == 1 ? 3 : 2) : -1), "odd lanes, lane %d: %d", l, out[l * 4 + 1]);
    CHECK(out[l * 4 + 2] == (l >= 16 ? l == 16 : -1), "sink form, lane %d: %d", l, out[l * 4 + 2]);
  }
  return 0;
}
