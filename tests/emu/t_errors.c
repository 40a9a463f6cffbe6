/*
 * t_errors.c: the bugs the emulator reports (kernels/errors.cu).  Every
 * report must carry the status, the kernel, block and thread coordinates,
 * the PTX line with the instruction text and the source line (-lineinfo).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_test.h"

/* launch and expect `status` with every substring of `want` (NULL-terminated) in the detail */
static int expect_error(tctx *t, const char *kernel, unsigned grid, unsigned block, unsigned shared, void **params,
                        int status, const char *const *want) {
  dlcemu_function f = t_func(t, t_load(t, "errors"), kernel);
  REQUIRE(f, "no kernel %s", kernel);
  int rc = t_launch(t, f, grid, block, shared, params);
  const char *d = dlcemu_last_error_detail();
  CHECK(rc == status, "%s: status %s, want %s (%s)", kernel, dlcemu_error_string(rc), dlcemu_error_string(status), d);
  for (int i = 0; want[i]; i++) CHECK(strstr(d, want[i]) != NULL, "%s: '%s' missing from: %s", kernel, want[i], d);
  return 0;
}

int test_out_of_bounds_global_read_is_reported(tctx *t) {
  float in[64];
  for (int i = 0; i < 64; i++) in[i] = (float)i;
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, sizeof in, NULL);
  int shift = 3;
  void *params[] = {&din, &dout, &shift};
  static const char *const want[] = {"DLCEMU_ERROR_OUT_OF_BOUNDS", "kernel 'oob_read'", "block (0,0,0)",
                                     "thread (61,0,0)", "PTX line", "ld.global", "errors.cu:", "past the end of the 256-byte allocation",
                                     NULL};
  return expect_error(t, "oob_read", 1, 64, 0, params, DLCEMU_ERROR_OUT_OF_BOUNDS, want);
}

int test_out_of_bounds_write_names_2d_block_and_thread(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "errors"), "oob_write_2d");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr dout = t_alloc(t, 64 * 4, NULL);
  int width = 16;
  void *params[] = {&dout, &width};
  int rc = dlcemu_launch_kernel(f, 2, 3, 1, 8, 4, 1, 0, params);
  const char *d = dlcemu_last_error_detail();
  CHECK(rc == DLCEMU_ERROR_OUT_OF_BOUNDS, "status %s", dlcemu_error_string(rc));
  CHECK(strstr(d, "block (1,2,0) thread (3,1,0)") && strstr(d, "st.global") && strstr(d, "write"), "detail: %s", d);
  return 0;
}

int test_access_outside_any_allocation_is_reported(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 64 * 4, NULL);
  unsigned long long addr = 0x1000;
  void *params[] = {&dout, &addr};
  static const char *const want[] = {"not inside any allocation", "0x1000", "thread (0,0,0)", NULL};
  return expect_error(t, "wild_pointer", 1, 32, 0, params, DLCEMU_ERROR_OUT_OF_BOUNDS, want);
}

int test_misaligned_scalar_and_vector_accesses(tctx *t) {
  dlcemu_deviceptr p = t_alloc(t, 1024, NULL), dout = t_alloc(t, 1024, NULL);
  void *params[] = {&p, &dout};
  static const char *const w1[] = {"DLCEMU_ERROR_MISALIGNED", "misaligned global read of 4 bytes", "ld.global", NULL};
  if (expect_error(t, "misaligned_word", 1, 32, 0, params, DLCEMU_ERROR_MISALIGNED, w1)) return 1;
  static const char *const w2[] = {"misaligned global read of 16 bytes", "v4", NULL};
  if (expect_error(t, "misaligned_vector", 1, 32, 0, params, DLCEMU_ERROR_MISALIGNED, w2)) return 1;
  void *p1[] = {&p};
  static const char *const w3[] = {"misaligned global write of 4 bytes", "atom", NULL};
  return expect_error(t, "misaligned_atomic", 1, 1, 0, p1, DLCEMU_ERROR_MISALIGNED, w3);
}

int test_dynamic_shared_smaller_than_used_is_out_of_bounds(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 64 * 4, NULL);
  void *params[] = {&dout};
  static const char *const want[] = {"out-of-bounds shared write of 4 bytes at offset 0x80",
                                     "128 bytes of shared memory: 0 static + 128 dynamic", "thread (32,0,0)", "st.shared",
                                     NULL};
  if (expect_error(t, "dynamic_shared_user", 1, 64, 32 * 4, params, DLCEMU_ERROR_OUT_OF_BOUNDS, want)) return 1;
  dlcemu_function f = t_func(t, t_load(t, "errors"), "dynamic_shared_user");
  OK(t_launch(t, f, 1, 64, 64 * 4, params)); /* the right size works */
  float out[64];
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < 64; i++) CHECK(out[i] == (float)(63 - i), "thread %d", i);
  return 0;
}

int test_local_array_overflow_is_reported(tctx *t) {
  int idx[32];
  for (int i = 0; i < 32; i++) idx[i] = i % 16;
  idx[0] = 5000;
  dlcemu_deviceptr di = t_alloc(t, sizeof idx, idx), dout = t_alloc(t, sizeof idx, NULL);
  void *params[] = {&di, &dout};
  static const char *const want[] = {"out-of-bounds local write of 4 bytes", "thread (0,0,0)", "st.local", NULL};
  return expect_error(t, "local_overflow", 1, 32, 0, params, DLCEMU_ERROR_OUT_OF_BOUNDS, want);
}

int test_reading_cp_async_data_before_wait_is_poison(tctx *t) {
  dlcemu_deviceptr src = t_alloc(t, 128 * 16, NULL), dout = t_alloc(t, 128 * 16, NULL);
  void *params[] = {&src, &dout};
  static const char *const want[] = {"DLCEMU_ERROR_POISON", "read of shared memory", "while a cp.async to it is pending",
                                     "ld.shared", "the copy was issued at kernel 'read_before_wait'", "cp.async.cg", NULL};
  return expect_error(t, "read_before_wait", 1, 64, 0, params, DLCEMU_ERROR_POISON, want);
}

int test_reading_another_threads_pending_copy_is_poison(tctx *t) {
  dlcemu_deviceptr src = t_alloc(t, 128 * 16, NULL), dout = t_alloc(t, 128 * 16, NULL);
  void *params[] = {&src, &dout};
  /* thread 0 reads s[1][1], copied by thread 1, whose group 1 has not been waited for */
  static const char *const want[] = {"thread (0,0,0)", "issued at kernel 'read_other_threads_pending' block (0,0,0) thread (1,0,0)",
                                     NULL};
  return expect_error(t, "read_other_threads_pending", 1, 64, 0, params, DLCEMU_ERROR_POISON, want);
}

int test_writing_a_pending_cp_async_destination_is_a_race(tctx *t) {
  dlcemu_deviceptr src = t_alloc(t, 64 * 16, NULL), dout = t_alloc(t, 64 * 16, NULL);
  void *params[] = {&src, &dout};
  static const char *const want[] = {"DLCEMU_ERROR_RACE", "write to shared memory", "st.shared", NULL};
  return expect_error(t, "write_pending", 1, 64, 0, params, DLCEMU_ERROR_RACE, want);
}

int test_cp_async_source_out_of_bounds(tctx *t) {
  dlcemu_deviceptr src = t_alloc(t, 64 * 16, NULL), dout = t_alloc(t, 64 * 16, NULL);
  int n = 8;
  void *params[] = {&src, &dout, &n};
  static const char *const want[] = {"out-of-bounds cp.async read of 16 bytes", "thread (56,0,0)", NULL};
  return expect_error(t, "cp_async_oob_source", 1, 64, 0, params, DLCEMU_ERROR_OUT_OF_BOUNDS, want);
}

int test_barrier_that_never_completes_is_a_deadlock(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 64 * 4, NULL);
  void *params[] = {&dout};
  static const char *const want[] = {"DLCEMU_ERROR_DEADLOCK", "barrier 0 can never complete", "thread (32,0,0) waits at barrier 1",
                                     "bar.sync 1, 64", NULL};
  return expect_error(t, "barrier_deadlock", 1, 64, 0, params, DLCEMU_ERROR_DEADLOCK, want);
}

int test_warp_collective_that_never_completes_is_a_deadlock(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 32 * 4, NULL);
  void *params[] = {&dout};
  static const char *const want[] = {"DLCEMU_ERROR_DEADLOCK", "thread (0,0,0)", NULL};
  return expect_error(t, "collective_deadlock", 1, 32, 0, params, DLCEMU_ERROR_DEADLOCK, want);
}

int test_divergent_bar_sync_is_illegal_barrier_sync_is_not(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 64 * 4, NULL);
  void *params[] = {&dout};
  static const char *const want[] = {"DLCEMU_ERROR_ILLEGAL", "different instructions", ".aligned", NULL};
  if (expect_error(t, "divergent_bar_sync", 1, 64, 0, params, DLCEMU_ERROR_ILLEGAL, want)) return 1;
  dlcemu_function f = t_func(t, t_load(t, "errors"), "divergent_barrier_sync");
  OK(t_launch(t, f, 1, 64, 0, params));
  return 0;
}

int test_trap_and_failed_assert_stop_the_launch(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 64 * 4, NULL);
  void *params[] = {&dout};
  static const char *const w1[] = {"DLCEMU_ERROR_TRAP", "trap executed", "thread (5,0,0)", NULL};
  if (expect_error(t, "trap_kernel", 1, 32, 0, params, DLCEMU_ERROR_TRAP, w1)) return 1;
  int in[32];
  for (int i = 0; i < 32; i++) in[i] = i + 1;
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in);
  void *p2[] = {&din, &dout};
  static const char *const w2[] = {"device-side assertion failed: v != 5", "errors.cu", "thread (4,0,0)", NULL};
  return expect_error(t, "assert_kernel", 1, 32, 0, p2, DLCEMU_ERROR_TRAP, w2);
}

int test_endless_loop_hits_the_instruction_limit(tctx *t) {
  int zero = 0;
  dlcemu_deviceptr flag = t_alloc(t, 4, &zero);
  void *params[] = {&flag};
  OK(dlcemu_set_limit(DLCEMU_LIMIT_WARP_INSTRUCTIONS, 100000));
  static const char *const want[] = {"DLCEMU_ERROR_LIMIT", "exceeded 100000 warp instructions", NULL};
  int rc = expect_error(t, "spin_forever", 1, 32, 0, params, DLCEMU_ERROR_LIMIT, want);
  OK(dlcemu_set_limit(DLCEMU_LIMIT_WARP_INSTRUCTIONS, 20000000000ull));
  return rc;
}

int test_mma_with_exited_lanes_is_illegal(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 32 * 4, NULL);
  void *params[] = {&dout};
  static const char *const want[] = {"DLCEMU_ERROR_ILLEGAL", "mma needs all 32 lanes", NULL};
  return expect_error(t, "mma_partial_warp", 1, 32, 0, params, DLCEMU_ERROR_ILLEGAL, want);
}

int test_uninitialized_shared_read_is_reported_on_request(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "errors"), "uninit_shared");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr dout = t_alloc(t, 64 * 4, NULL);
  void *params[] = {&dout};
  OK(t_launch(t, f, 1, 64, 0, params)); /* off by default */
  OK(dlcemu_set_limit(DLCEMU_LIMIT_CHECK_UNINIT_SHARED, 1));
  static const char *const want[] = {"DLCEMU_ERROR_POISON", "that no thread of the block has written", "thread (0,0,0)", NULL};
  int rc = expect_error(t, "uninit_shared", 1, 64, 0, params, DLCEMU_ERROR_POISON, want);
  OK(dlcemu_set_limit(DLCEMU_LIMIT_CHECK_UNINIT_SHARED, 0));
  return rc;
}

int test_module_stays_usable_after_an_error(tctx *t) {
  dlcemu_module m = t_load(t, "errors");
  dlcemu_function bad = t_func(t, m, "oob_read"), good = t_func(t, m, "dynamic_shared_user");
  REQUIRE(bad && good, "no kernels");
  float in[64];
  memset(in, 0, sizeof in);
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, sizeof in, NULL);
  int shift = 10;
  void *p1[] = {&din, &dout, &shift};
  CHECK(t_launch(t, bad, 1, 64, 0, p1) == DLCEMU_ERROR_OUT_OF_BOUNDS, "the faulty launch fails");
  void *p2[] = {&dout};
  OK(t_launch(t, good, 1, 64, 256, p2));
  shift = 0;
  OK(t_launch(t, bad, 1, 64, 0, p1));
  return 0;
}

int test_missing_barrier_between_warps_is_a_race(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 64 * 4, NULL);
  void *params[] = {&dout};
  /* warp 0 read s[32..63] before warp 1 wrote it */
  static const char *const want[] = {"DLCEMU_ERROR_RACE", "data race on shared memory", "thread (32,0,0)",
                                     "overwrites what thread (0,0,0) read", "ld.shared", "with no barrier between them",
                                     NULL};
  return expect_error(t, "missing_barrier", 1, 64, 0, params, DLCEMU_ERROR_RACE, want);
}

int test_conflicting_writes_race_same_value_and_volatile_do_not(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 64 * 4, NULL);
  void *params[] = {&dout};
  static const char *const want[] = {"overwrites what thread (31,0,0) wrote", "thread (32,0,0)", NULL};
  if (expect_error(t, "conflicting_writes", 1, 64, 0, params, DLCEMU_ERROR_RACE, want)) return 1;
  dlcemu_module m = t_load(t, "errors");
  OK(t_launch(t, t_func(t, m, "same_value_writes"), 1, 64, 0, params));
  OK(t_launch(t, t_func(t, m, "volatile_writes"), 1, 64, 0, params));
  return 0;
}

int test_reusing_a_stage_without_a_barrier_is_a_race(tctx *t) {
  dlcemu_deviceptr src = t_alloc(t, 128 * 16, NULL), dout = t_alloc(t, 64 * 4, NULL);
  void *params[] = {&src, &dout};
  static const char *const want[] = {"DLCEMU_ERROR_RACE", "reads what thread (0,0,0) wrote", "cp.async", NULL};
  return expect_error(t, "stage_reuse_without_barrier", 1, 64, 0, params, DLCEMU_ERROR_RACE, want);
}

int test_race_detector_can_be_turned_off(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "errors"), "missing_barrier");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr dout = t_alloc(t, 64 * 4, NULL);
  void *params[] = {&dout};
  OK(dlcemu_set_limit(DLCEMU_LIMIT_CHECK_SHARED_RACES, 0));
  int rc = t_launch(t, f, 1, 64, 0, params);
  OK(dlcemu_set_limit(DLCEMU_LIMIT_CHECK_SHARED_RACES, 1));
  CHECK(rc == 0, "without the detector the racy kernel runs: %s", dlcemu_error_string(rc));
  return 0;
}

int test_warpgroup_collective_errors(tctx *t) {
  dlcemu_deviceptr dout = t_alloc(t, 256 * 4, NULL);
  void *params[] = {&dout};
  static const char *const w1[] = {"DLCEMU_ERROR_DEADLOCK", "warpgroup collective can never complete",
                                   "warp 2 does not arrive", "thread (64,0,0) has exited", "wgmma.fence.sync.aligned",
                                   NULL};
  if (expect_error(t, "warpgroup_exited_warp", 1, 128, 0, params, DLCEMU_ERROR_DEADLOCK, w1)) return 1;
  static const char *const w2[] = {"DLCEMU_ERROR_ILLEGAL", "different warpgroup collectives", ".aligned", NULL};
  if (expect_error(t, "warpgroup_mismatch", 1, 128, 0, params, DLCEMU_ERROR_ILLEGAL, w2)) return 1;
  static const char *const w3[] = {"DLCEMU_ERROR_ILLEGAL", "warpgroup 0 needs warps 0..3", "the block has 3 warps", NULL};
  if (expect_error(t, "warpgroup_partial", 1, 96, 0, params, DLCEMU_ERROR_ILLEGAL, w3)) return 1;
  /* 160 threads: warpgroup 0 completes, warp 4 alone cannot */
  static const char *const w4[] = {"warpgroup 1 needs warps 4..7", "the block has 5 warps", "thread (128,0,0)", NULL};
  return expect_error(t, "warpgroup_partial", 1, 160, 0, params, DLCEMU_ERROR_ILLEGAL, w4);
}
