/*
 * t_api.c: the C API's contracts and error paths, on hand-written PTX (these
 * tests need no nvcc): parse and unsupported-instruction errors at load with
 * the line, handles, pointers, launch configuration, attributes, statuses,
 * threads, determinism, and a library that prints nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu_test.h"

#define HEADER ".version 8.0\n.target sm_80\n.address_size 64\n"

/* out[tid] += 1 for tid < n; line numbers below count from this text */
static const char add1_ptx[] = HEADER
    ".visible .entry add1(.param .u64 p, .param .u32 n)\n" /* 4 */
    "{\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  .reg .pred %p<2>;\n"
    "  ld.param.u64 %rd1, [p];\n" /* 9 */
    "  ld.param.u32 %r1, [n];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  setp.ge.u32 %p1, %r2, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  mul.wide.u32 %rd2, %r2, 4;\n" /* 14 */
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  ld.global.u32 %r3, [%rd3];\n"
    "  add.u32 %r3, %r3, 1;\n" /* 17 */
    "  st.global.u32 [%rd3], %r3;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

/* add1_ptx with line `line` (1-based) replaced by `text` */
static char *with_line(int line, const char *text) {
  size_t n = strlen(add1_ptx) + strlen(text) + 2;
  char *out = malloc(n);
  const char *p = add1_ptx;
  char *o = out;
  for (int l = 1; *p; l++) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p + 1) : strlen(p);
    if (l == line) o += sprintf(o, "%s\n", text);
    else {
      memcpy(o, p, len);
      o += len;
    }
    p += len;
  }
  *o = 0;
  return out;
}

static int expect_load_error(tctx *t, const char *text, int status, const char *w1, const char *w2) {
  dlcemu_module m = NULL;
  int rc = dlcemu_module_load_data(&m, text);
  const char *d = dlcemu_last_error_detail();
  CHECK(rc == status, "load: %s, want %s (%s)", dlcemu_error_string(rc), dlcemu_error_string(status), d);
  CHECK(m == NULL, "no module after a failed load");
  if (w1) CHECK(strstr(d, w1) != NULL, "'%s' missing from: %s", w1, d);
  if (w2) CHECK(strstr(d, w2) != NULL, "'%s' missing from: %s", w2, d);
  if (!rc) dlcemu_module_unload(m);
  return 0;
}

int test_api_handwritten_ptx_runs(tctx *t) {
  dlcemu_module m = t_load_text(t, add1_ptx);
  dlcemu_function f = t_func(t, m, "add1");
  REQUIRE(f, "no kernel");
  int v[100];
  for (int i = 0; i < 100; i++) v[i] = i * 3;
  dlcemu_deviceptr d = t_alloc(t, sizeof v, v);
  unsigned n = 90;
  void *params[] = {&d, &n};
  OK(t_launch(t, f, 1, 128, 0, params));
  int out[100];
  t_download(t, out, d, sizeof out);
  for (int i = 0; i < 100; i++) CHECK(out[i] == v[i] + (i < 90), "element %d", i);
  return 0;
}

int test_api_bad_ptx_is_a_parse_error_with_line(tctx *t) {
  char *s = with_line(17, "  add.u32 %r3 %r3, 1;");
  expect_load_error(t, s, DLCEMU_ERROR_PARSE, "line 17", "expected ','");
  free(s);
  s = with_line(17, "  add.u32 %r3, %r9, 1;");
  expect_load_error(t, s, DLCEMU_ERROR_PARSE, "line 17", "unknown register '%r9'");
  free(s);
  s = with_line(13, "  @%p1 bra NOWHERE;");
  expect_load_error(t, s, DLCEMU_ERROR_PARSE, "unknown label 'NOWHERE'", "line 13");
  free(s);
  expect_load_error(t, "this is not PTX", DLCEMU_ERROR_PARSE, "line 1", NULL);
  expect_load_error(t, ".target sm_80\n.address_size 64\n", DLCEMU_ERROR_PARSE, "missing .version", NULL);
  expect_load_error(t, "", DLCEMU_ERROR_PARSE, NULL, NULL);
  s = with_line(21, "");
  expect_load_error(t, s, DLCEMU_ERROR_PARSE, "unterminated", NULL);
  free(s);
  return 0;
}

int test_api_unsupported_instruction_fails_at_load(tctx *t) {
  char *s = with_line(17, "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r3, %r3, %r3, %r3}, %rd3, %rd3, 1, 1, 1, 0, 0;");
  expect_load_error(t, s, DLCEMU_ERROR_UNSUPPORTED, "PTX line 17", "wgmma.mma_async");
  free(s);
  s = with_line(17, "  wgmma.fence.sync.aligned;"); /* the module targets sm_80 */
  expect_load_error(t, s, DLCEMU_ERROR_UNSUPPORTED, "requires sm_90a, the module targets sm_80", "wgmma.fence.sync.aligned");
  free(s);
  s = with_line(17, "  elect.sync %r3|%p1, -1;");
  expect_load_error(t, s, DLCEMU_ERROR_UNSUPPORTED, "requires sm_90", "elect.sync");
  free(s);
  expect_load_error(t,
                    ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
                    "  setmaxnreg.inc.sync.aligned.u32 20;\n  ret;\n}\n",
                    DLCEMU_ERROR_PARSE, "line 6", "register count in 24..256");
  s = with_line(17, "  tex.2d.v4.u32.s32 {%r3, %r3, %r3, %r3}, [tex0, {%r1, %r1}];");
  expect_load_error(t, s, DLCEMU_ERROR_UNSUPPORTED, "PTX line 17", "tex.2d");
  free(s);
  s = with_line(16, "  ld.global.weird.u32 %r3, [%rd3];");
  expect_load_error(t, s, DLCEMU_ERROR_UNSUPPORTED, "PTX line 16", "modifier .weird");
  free(s);
  s = with_line(17, "  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                    "[%r3], [%rd3, {%r3, %r3}], [%r3], %r3;"); /* a cluster of more than one CTA */
  expect_load_error(t, s, DLCEMU_ERROR_UNSUPPORTED, "PTX line 17", "multicast");
  free(s);
  s = with_line(17, "  mbarrier.try_wait.parity.shared.b64 %p1, [%rd3], %r3;"); /* try_wait is sm_90 */
  expect_load_error(t, s, DLCEMU_ERROR_UNSUPPORTED, "requires sm_90, the module targets sm_80", "mbarrier.try_wait");
  free(s);
  s = with_line(17, "  stmatrix.sync.aligned.m8n8.x1.shared.b16 [%rd3], {%r3};");
  expect_load_error(t, s, DLCEMU_ERROR_UNSUPPORTED, "requires sm_90, the module targets sm_80", "stmatrix");
  free(s);
  s = with_line(17, "  add.rn.bf16x2 %r3, %r3, %r3;");
  expect_load_error(t, s, DLCEMU_ERROR_UNSUPPORTED, "requires sm_90", "PTX line 17");
  free(s);
  expect_load_error(t, ".version 8.0\n.target sm_60\n.address_size 64\n", DLCEMU_ERROR_UNSUPPORTED, "target", "sm_60");
  expect_load_error(t, ".version 8.0\n.target sm_80\n.address_size 32\n", DLCEMU_ERROR_UNSUPPORTED, "address size", NULL);
  static const char rec[] = HEADER
      ".func (.param .b32 r) f(.param .b32 x)\n"
      "{\n .reg .b32 %a;\n ld.param.b32 %a, [x];\n"
      " { .param .b32 p; .param .b32 q; st.param.b32 [p], %a; call.uni (q), f, (p); ld.param.b32 %a, [q]; }\n"
      " st.param.b32 [r], %a;\n ret;\n}\n"
      ".visible .entry k()\n{\n .reg .b32 %b;\n { .param .b32 p; .param .b32 q; st.param.b32 [p], 1; call.uni (q), f, (p); }\n ret;\n}\n";
  expect_load_error(t, rec, DLCEMU_ERROR_UNSUPPORTED, "recursive call of f", NULL);
  return 0;
}

int test_api_unknown_function_is_not_found(tctx *t) {
  dlcemu_module m = t_load_text(t, add1_ptx);
  dlcemu_function f = (dlcemu_function)(uintptr_t)1;
  int rc = dlcemu_module_get_function(&f, m, "add2");
  CHECK(rc == DLCEMU_ERROR_NOT_FOUND && f == NULL, "status %s", dlcemu_error_string(rc));
  CHECK(strstr(dlcemu_last_error_detail(), "'add2'") != NULL, "detail: %s", dlcemu_last_error_detail());
  dlcemu_deviceptr p;
  rc = dlcemu_module_get_global(&p, NULL, m, "nothing");
  CHECK(rc == DLCEMU_ERROR_NOT_FOUND, "get_global: %s", dlcemu_error_string(rc));
  return 0;
}

int test_api_bad_pointers_to_free_and_memcpy(tctx *t) {
  CHECK(dlcemu_mem_free(0) == DLCEMU_ERROR_INVALID_POINTER, "free(0)");
  CHECK(dlcemu_mem_free(0x1234) == DLCEMU_ERROR_INVALID_POINTER, "free of a random address");
  CHECK(strstr(dlcemu_last_error_detail(), "0x1234") != NULL, "detail names the pointer");
  dlcemu_deviceptr p;
  OK(dlcemu_mem_alloc(&p, 64));
  CHECK(p % 256 == 0, "allocations are 256-byte aligned");
  CHECK(dlcemu_mem_free(p + 4) == DLCEMU_ERROR_INVALID_POINTER, "free of an interior pointer");
  char buf[128] = {0};
  CHECK(dlcemu_memcpy_htod(p + 60, buf, 8) == DLCEMU_ERROR_INVALID_POINTER, "htod past the end");
  CHECK(strstr(dlcemu_last_error_detail(), "past the end of the 64-byte allocation") != NULL, "detail: %s",
        dlcemu_last_error_detail());
  CHECK(dlcemu_memcpy_dtoh(buf, p - 8, 8) == DLCEMU_ERROR_INVALID_POINTER, "dtoh before the start");
  CHECK(dlcemu_memset_d8(p, 1, 65) == DLCEMU_ERROR_INVALID_POINTER, "memset past the end");
  OK(dlcemu_memset_d8(p, 7, 64));
  OK(dlcemu_memcpy_dtoh(buf, p, 64));
  CHECK(buf[0] == 7 && buf[63] == 7, "memset");
  CHECK(dlcemu_memcpy_htod(p, NULL, 4) == DLCEMU_ERROR_INVALID_VALUE, "NULL source");
  OK(dlcemu_memcpy_htod(p, NULL, 0)); /* nothing to copy */
  OK(dlcemu_mem_free(p));
  CHECK(dlcemu_mem_free(p) == DLCEMU_ERROR_INVALID_POINTER, "double free");
  CHECK(dlcemu_mem_alloc(&p, 0) == DLCEMU_ERROR_INVALID_VALUE, "zero-byte allocation");
  CHECK(dlcemu_mem_alloc(NULL, 4) == DLCEMU_ERROR_INVALID_VALUE, "NULL ptr argument");
  static const char var_ptx[] = HEADER ".global .align 4 .u32 counter = 42;\n.visible .entry k()\n{\n ret;\n}\n";
  dlcemu_module m = t_load_text(t, var_ptx);
  dlcemu_deviceptr g;
  size_t bytes;
  OK(dlcemu_module_get_global(&g, &bytes, m, "counter"));
  unsigned v = 0;
  OK(dlcemu_memcpy_dtoh(&v, g, 4));
  CHECK(bytes == 4 && v == 42, "initialized .global: %u", v);
  CHECK(dlcemu_mem_free(g) == DLCEMU_ERROR_INVALID_POINTER, "a module variable is not the user's to free");
  return 0;
}

int test_api_launch_configuration_errors(tctx *t) {
  dlcemu_function f = t_func(t, t_load_text(t, add1_ptx), "add1");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr d = t_alloc(t, 4096, NULL);
  unsigned n = 0;
  void *params[] = {&d, &n};
  CHECK(dlcemu_launch_kernel(f, 0, 1, 1, 32, 1, 1, 0, params) == DLCEMU_ERROR_LAUNCH_CONFIG, "empty grid");
  CHECK(dlcemu_launch_kernel(f, 1, 1, 1, 1025, 1, 1, 0, params) == DLCEMU_ERROR_LAUNCH_CONFIG, "1025 threads");
  CHECK(dlcemu_launch_kernel(f, 1, 1, 1, 32, 33, 1, 0, params) == DLCEMU_ERROR_LAUNCH_CONFIG, "32x33 threads");
  CHECK(dlcemu_launch_kernel(f, 1, 1, 1, 1, 1, 65, 0, params) == DLCEMU_ERROR_LAUNCH_CONFIG, "bz 65");
  CHECK(dlcemu_launch_kernel(f, 1, 70000, 1, 32, 1, 1, 0, params) == DLCEMU_ERROR_LAUNCH_CONFIG, "grid y 70000");
  CHECK(dlcemu_launch_kernel(f, 1, 1, 1, 32, 1, 1, 300000, params) == DLCEMU_ERROR_LAUNCH_CONFIG, "300 KB shared");
  CHECK(strstr(dlcemu_last_error_detail(), "shared memory") != NULL, "detail: %s", dlcemu_last_error_detail());
  CHECK(dlcemu_launch_kernel(f, 1, 1, 1, 32, 1, 1, 49153, params) == DLCEMU_ERROR_LAUNCH_CONFIG, "48 KB + 1, no opt-in");
  OK(dlcemu_function_set_attribute(f, DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES, 166912));
  OK(dlcemu_launch_kernel(f, 1, 1, 1, 32, 1, 1, 166912 - 0, params)); /* the sm_80 maximum, opted in to */
  CHECK(dlcemu_launch_kernel(f, 1, 1, 1, 32, 1, 1, 0, NULL) == DLCEMU_ERROR_INVALID_VALUE, "NULL params");
  void *bad[] = {&d, NULL};
  CHECK(dlcemu_launch_kernel(f, 1, 1, 1, 32, 1, 1, 0, bad) == DLCEMU_ERROR_INVALID_VALUE, "NULL params[1]");
  static const char lim_ptx[] = HEADER ".visible .entry m64() .maxntid 64, 1, 1\n{\n ret;\n}\n"
                                       ".visible .entry r32() .reqntid 32\n{\n ret;\n}\n";
  dlcemu_module m = t_load_text(t, lim_ptx);
  dlcemu_function m64 = t_func(t, m, "m64"), r32 = t_func(t, m, "r32");
  REQUIRE(m64 && r32, "no kernels");
  CHECK(dlcemu_launch_kernel(m64, 1, 1, 1, 128, 1, 1, 0, NULL) == DLCEMU_ERROR_LAUNCH_CONFIG, ".maxntid");
  OK(dlcemu_launch_kernel(m64, 1, 1, 1, 64, 1, 1, 0, NULL));
  CHECK(dlcemu_launch_kernel(r32, 1, 1, 1, 64, 1, 1, 0, NULL) == DLCEMU_ERROR_LAUNCH_CONFIG, ".reqntid");
  OK(dlcemu_launch_kernel(r32, 1, 1, 1, 32, 1, 1, 0, NULL));
  int v = 0;
  OK(dlcemu_function_get_attribute(&v, DLCEMU_FUNC_ATTRIBUTE_MAX_THREADS, m64));
  CHECK(v == 64, "max threads %d", v);
  return 0;
}

int test_api_invalid_handles_and_null_arguments(tctx *t) {
  dlcemu_module m = NULL;
  CHECK(dlcemu_module_load_data(NULL, add1_ptx) == DLCEMU_ERROR_INVALID_VALUE, "NULL module out");
  CHECK(dlcemu_module_load_data(&m, NULL) == DLCEMU_ERROR_INVALID_VALUE, "NULL text");
  CHECK(dlcemu_module_unload(NULL) == DLCEMU_ERROR_INVALID_VALUE, "unload NULL");
  OK(dlcemu_module_load_data(&m, add1_ptx));
  dlcemu_function f;
  OK(dlcemu_module_get_function(&f, m, "add1"));
  CHECK(dlcemu_module_get_function(&f, m, NULL) == DLCEMU_ERROR_INVALID_VALUE, "NULL name");
  CHECK(dlcemu_module_get_function(NULL, m, "add1") == DLCEMU_ERROR_INVALID_VALUE, "NULL function out");
  OK(dlcemu_module_unload(m));
  CHECK(dlcemu_module_unload(m) == DLCEMU_ERROR_INVALID_VALUE, "unload twice");
  CHECK(dlcemu_module_get_function(&f, m, "add1") == DLCEMU_ERROR_INVALID_VALUE, "get_function on an unloaded module");
  CHECK(dlcemu_launch_kernel(f, 1, 1, 1, 32, 1, 1, 0, NULL) == DLCEMU_ERROR_INVALID_VALUE, "launch of a stale function");
  CHECK(dlcemu_launch_kernel(NULL, 1, 1, 1, 32, 1, 1, 0, NULL) == DLCEMU_ERROR_INVALID_VALUE, "launch of NULL");
  int v;
  CHECK(dlcemu_function_get_attribute(&v, DLCEMU_FUNC_ATTRIBUTE_NUM_PARAMS, f) == DLCEMU_ERROR_INVALID_VALUE, "stale");
  CHECK(dlcemu_last_launch_stats(NULL) == DLCEMU_ERROR_INVALID_VALUE, "NULL stats");
  CHECK(dlcemu_set_limit((dlcemu_limit)99, 1) == DLCEMU_ERROR_INVALID_VALUE, "unknown limit");
  return 0;
}

int test_api_status_names_and_function_attributes(tctx *t) {
  for (int s = 0; s <= DLCEMU_ERROR_RACE; s++) {
    const char *n = dlcemu_error_string(s);
    CHECK(n && !strncmp(n, "DLCEMU_", 7) && strcmp(n, "DLCEMU_ERROR_UNKNOWN"), "status %d: %s", s, n);
    for (int r = 0; r < s; r++) CHECK(strcmp(n, dlcemu_error_string(r)), "names %d and %d differ", s, r);
  }
  CHECK(!strcmp(dlcemu_error_string(0), "DLCEMU_SUCCESS"), "success");
  CHECK(!strcmp(dlcemu_error_string(99), "DLCEMU_ERROR_UNKNOWN"), "unknown");
  dlcemu_function f = t_func(t, t_load_text(t, add1_ptx), "add1");
  REQUIRE(f, "no kernel");
  int v;
  OK(dlcemu_function_get_attribute(&v, DLCEMU_FUNC_ATTRIBUTE_NUM_PARAMS, f));
  CHECK(v == 2, "params %d", v);
  OK(dlcemu_function_get_attribute(&v, DLCEMU_FUNC_ATTRIBUTE_PARAM_BYTES, f));
  CHECK(v == 12, "param bytes %d", v);
  OK(dlcemu_function_get_attribute(&v, DLCEMU_FUNC_ATTRIBUTE_STATIC_SHARED_BYTES, f));
  CHECK(v == 0, "shared %d", v);
  OK(dlcemu_function_get_attribute(&v, DLCEMU_FUNC_ATTRIBUTE_NUM_INSTRUCTIONS, f));
  CHECK(v == 11, "instructions %d", v);
  OK(dlcemu_function_get_attribute(&v, DLCEMU_FUNC_ATTRIBUTE_NUM_REGS, f));
  CHECK(v == 10, "registers %d", v);
  size_t off, bytes;
  OK(dlcemu_function_get_param_info(f, 1, &off, &bytes));
  CHECK(off == 8 && bytes == 4, "param 1: %zu %zu", off, bytes);
  CHECK(dlcemu_function_get_param_info(f, 2, &off, &bytes) == DLCEMU_ERROR_INVALID_VALUE, "param 2");
  CHECK(dlcemu_function_get_attribute(&v, (dlcemu_function_attribute)42, f) == DLCEMU_ERROR_INVALID_VALUE, "attr 42");
  return 0;
}

typedef struct worker {
  int ok;
  char detail[256];
} worker;

static void *work(void *arg) {
  worker *w = arg;
  dlcemu_module m;
  dlcemu_function f;
  w->ok = 0;
  if (dlcemu_module_load_data(&m, add1_ptx) || dlcemu_module_get_function(&f, m, "add1")) return NULL;
  dlcemu_deviceptr d;
  int v[256];
  for (int i = 0; i < 256; i++) v[i] = i;
  if (dlcemu_mem_alloc(&d, sizeof v) || dlcemu_memcpy_htod(d, v, sizeof v)) return NULL;
  unsigned n = 256;
  void *params[] = {&d, &n};
  int ok = 1;
  for (int it = 0; it < 50; it++) ok &= dlcemu_launch_kernel(f, 1, 1, 1, 256, 1, 1, 0, params) == 0;
  dlcemu_memcpy_dtoh(v, d, sizeof v);
  for (int i = 0; i < 256; i++) ok &= v[i] == i + 50;
  ok &= dlcemu_mem_free(0x10) == DLCEMU_ERROR_INVALID_POINTER; /* this thread's detail */
  snprintf(w->detail, sizeof w->detail, "%s", dlcemu_last_error_detail());
  dlcemu_mem_free(d);
  dlcemu_module_unload(m);
  w->ok = ok;
  return NULL;
}

int test_api_concurrent_launches_on_two_threads(tctx *t) {
  pthread_t th[2];
  worker w[2];
  for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&th[i], NULL, work, &w[i]) == 0, "pthread_create");
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 2; i++) {
    CHECK(w[i].ok, "worker %d", i);
    CHECK(strstr(w[i].detail, "0x10") != NULL, "worker %d detail: %s", i, w[i].detail);
  }
  CHECK(strstr(dlcemu_last_error_detail(), "0x10") == NULL, "the main thread's detail is its own");
  return 0;
}

static const char printf_ptx[] = HEADER
    ".extern .func (.param .b32 func_retval0) vprintf\n(\n .param .b64 vprintf_param_0,\n .param .b64 vprintf_param_1\n);\n"
    ".global .align 1 .b8 $str[4] = {104, 105, 10, 0};\n"
    ".visible .entry pr(.param .u64 out)\n{\n"
    " .reg .b32 %r<4>;\n .reg .b64 %rd<6>;\n"
    " ld.param.u64 %rd1, [out];\n mov.u64 %rd2, $str;\n cvta.global.u64 %rd3, %rd2;\n"
    " { // callseq 0, 0\n .param .b64 param0;\n st.param.b64 [param0+0], %rd3;\n .param .b64 param1;\n"
    " st.param.b64 [param1+0], 0;\n .param .b32 retval0;\n call.uni (retval0),\n vprintf,\n (\n param0,\n param1\n );\n"
    " ld.param.b32 %r1, [retval0+0];\n } // callseq 0\n"
    " mov.u32 %r2, %tid.x;\n mul.wide.u32 %rd4, %r2, 4;\n add.s64 %rd5, %rd1, %rd4;\n add.u32 %r3, %r1, 7;\n"
    " st.global.u32 [%rd5], %r3;\n ret;\n}\n";

int test_api_library_prints_nothing(tctx *t) {
  fflush(stdout);
  fflush(stderr);
  FILE *cap = tmpfile();
  REQUIRE(cap, "tmpfile");
  int save_out = dup(1), save_err = dup(2);
  dup2(fileno(cap), 1);
  dup2(fileno(cap), 2);
  dlcemu_module m = NULL;
  dlcemu_function f = NULL;
  int rc = dlcemu_module_load_data(&m, printf_ptx);
  if (!rc) rc = dlcemu_module_get_function(&f, m, "pr");
  dlcemu_deviceptr d = 0;
  if (!rc) rc = dlcemu_mem_alloc(&d, 128);
  void *params[] = {&d};
  if (!rc) rc = dlcemu_launch_kernel(f, 1, 1, 1, 32, 1, 1, 0, params);
  int out[32] = {0};
  if (!rc) rc = dlcemu_memcpy_dtoh(out, d, sizeof out);
  dlcemu_mem_free(0x20); /* errors print nothing either */
  dlcemu_module bad = NULL;
  dlcemu_module_load_data(&bad, "garbage");
  fflush(stdout);
  fflush(stderr);
  dup2(save_out, 1);
  dup2(save_err, 2);
  close(save_out);
  close(save_err);
  long size = ftell(cap);
  fclose(cap);
  CHECK(rc == 0, "printf kernel: %s", dlcemu_last_error_detail());
  CHECK(size == 0, "the library wrote %ld bytes to stdout/stderr", size);
  for (int i = 0; i < 32; i++) CHECK(out[i] == 7, "vprintf returns 0: %d", out[i]);
  if (d) dlcemu_mem_free(d);
  if (m) dlcemu_module_unload(m);
  return 0;
}

int test_api_register_scopes_shadow_outer_names(tctx *t) {
  static const char ptx[] = HEADER
      ".visible .entry sc(.param .u64 p)\n{\n"
      " .reg .b32 %r1;\n .reg .b64 %rd1;\n"
      " ld.param.u64 %rd1, [p];\n mov.u32 %r1, 5;\n"
      " { .reg .b32 %r<3>; mov.u32 %r1, 7; st.global.u32 [%rd1+4], %r1; }\n"
      " { .reg .b32 %r1; mov.u32 %r1, 9; { st.global.u32 [%rd1+8], %r1; } }\n"
      " st.global.u32 [%rd1], %r1;\n ret;\n}\n";
  dlcemu_function f = t_func(t, t_load_text(t, ptx), "sc");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr d = t_alloc(t, 16, NULL);
  void *params[] = {&d};
  OK(dlcemu_launch_kernel(f, 1, 1, 1, 1, 1, 1, 0, params));
  unsigned out[3];
  t_download(t, out, d, sizeof out);
  CHECK(out[0] == 5 && out[1] == 7 && out[2] == 9, "scopes: %u %u %u", out[0], out[1], out[2]);
  return 0;
}

/* nvcc -G declares every .func before its body; such calls are internal calls */
int test_api_forward_declared_function_calls(tctx *t) {
  static const char ptx[] = HEADER
      ".func (.param .b32 r) twice(.param .b32 x);\n"
      ".visible .entry fw(.param .u64 p)\n{\n"
      " .reg .b32 %r<3>;\n .reg .b64 %rd1;\n"
      " ld.param.u64 %rd1, [p];\n mov.u32 %r1, 21;\n"
      " { .param .b32 a; st.param.b32 [a], %r1; .param .b32 b;\n"
      "   call.uni (b), twice, (a); ld.param.b32 %r2, [b]; }\n"
      " st.global.u32 [%rd1], %r2;\n ret;\n}\n"
      ".func (.param .b32 r) twice(.param .b32 x)\n{\n"
      " .reg .b32 %v;\n ld.param.b32 %v, [x];\n add.s32 %v, %v, %v;\n"
      " st.param.b32 [r], %v;\n ret;\n}\n";
  dlcemu_function f = t_func(t, t_load_text(t, ptx), "fw");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr d = t_alloc(t, 4, NULL);
  void *params[] = {&d};
  OK(dlcemu_launch_kernel(f, 1, 1, 1, 32, 1, 1, 0, params));
  unsigned out = 0;
  t_download(t, &out, d, sizeof out);
  CHECK(out == 42, "forward-declared call returned %u", out);

  /* declared but never defined (and not a runtime function): fails at load */
  static const char ext[] = HEADER
      ".extern .func (.param .b32 r) missing(.param .b32 x);\n"
      ".visible .entry ex()\n{\n"
      " .reg .b32 %r1;\n mov.u32 %r1, 1;\n"
      " { .param .b32 a; st.param.b32 [a], %r1; .param .b32 b;\n"
      "   call.uni (b), missing, (a); ld.param.b32 %r1, [b]; }\n ret;\n}\n";
  expect_load_error(t, ext, DLCEMU_ERROR_UNSUPPORTED, "external function missing", "line 4");
  return 0;
}
