/*
 * t_memory.c: loads and stores in every state space, vectors, atomics,
 * generic pointers, module variables and calls (kernels/memory.cu).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu_test.h"

int test_load_store_widths_and_sign_extension(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "memory"), "ld_st_widths");
  REQUIRE(f, "no kernel");
  uint8_t src[64 * 16], dst[64 * 16];
  uint32_t s = 9;
  for (int i = 0; i < 64 * 16; i++) src[i] = (uint8_t)t_rand(&s);
  memset(dst, 0, sizeof dst);
  dlcemu_deviceptr dsrc = t_alloc(t, sizeof src, src), dout = t_alloc(t, 64 * 16 * 4, NULL),
                   ddst = t_alloc(t, sizeof dst, dst);
  void *params[] = {&dsrc, &dout, &ddst};
  OK(t_launch(t, f, 1, 64, 0, params));
  uint32_t out[64 * 16];
  t_download(t, out, dout, sizeof out);
  t_download(t, dst, ddst, sizeof dst);
  for (int i = 0; i < 64; i++) {
    const uint8_t *p = src + 16 * i;
    const uint32_t *o = out + 16 * i;
    uint32_t u32[4];
    memcpy(u32, p, 16);
    uint16_t u16_2, u16_12, u16_14;
    memcpy(&u16_2, p + 2, 2);
    memcpy(&u16_12, p + 12, 2);
    memcpy(&u16_14, p + 14, 2);
    uint64_t u64;
    memcpy(&u64, p + 8, 8);
    CHECK(o[0] == p[1], "ld.u8");
    CHECK(o[1] == (uint32_t)(int32_t)(int8_t)p[1], "ld.s8 into .b32: 0x%08x", o[1]);
    CHECK(o[2] == u16_2, "ld.u16");
    CHECK(o[3] == (uint32_t)(int32_t)(int16_t)u16_2, "ld.s16");
    CHECK(o[4] == u32[1], "ld.u32");
    CHECK(o[5] == ((int32_t)u32[1] < 0 ? 0xFFFFFFFFu : 0) && o[6] == u32[1], "ld.s32 into .b64");
    CHECK(o[7] == (uint32_t)u64 && o[8] == (uint32_t)(u64 >> 32), "ld.nc.u64");
    CHECK(o[9] == ((int8_t)p[1] < 0 ? 0xFFFFFFFFu : 0), "ld.s8 into .b64 sign-extends to 64 bits");
    CHECK(o[10] == (uint16_t)(int16_t)(int8_t)p[1], "ld.s8 into .b16: 0x%x", o[10]);
    CHECK(o[11] == (u32[0] ^ u32[1] ^ u32[2] ^ u32[3]), "ld.v4.u32");
    CHECK(o[12] == (u16_12 | (uint32_t)u16_14 << 16), "ld.v2.u16: 0x%08x", o[12]);
    CHECK(o[13] == u32[2], "ld with .L2::cache_hint and a createpolicy operand");
    const uint8_t *q = dst + 16 * i;
    uint32_t w4, w8, w12;
    uint16_t w2;
    memcpy(&w2, q + 2, 2);
    memcpy(&w4, q + 4, 4);
    memcpy(&w8, q + 8, 4);
    memcpy(&w12, q + 12, 4);
    CHECK(q[0] == 0xA5 && q[1] == 0, "st.u8 stores the low byte only");
    CHECK(w2 == 0xBEEF && w4 == 0xCAFEF00Du && w8 == u32[0] && w12 == 7, "st.u16/u32/v2");
  }
  return 0;
}

int test_vector_loads_and_stores(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "memory"), "vectors");
  REQUIRE(f, "no kernel");
  enum { n = 128 };
  float a[4 * n];
  double b[2 * n];
  int c[2 * n];
  for (int i = 0; i < 4 * n; i++) a[i] = (float)i * 0.5f;
  for (int i = 0; i < 2 * n; i++) {
    b[i] = i * 1.25;
    c[i] = i - 50;
  }
  dlcemu_deviceptr da = t_alloc(t, sizeof a, a), db = t_alloc(t, sizeof b, b), dc = t_alloc(t, sizeof c, c);
  dlcemu_deviceptr fa = t_alloc(t, sizeof a, NULL), fb = t_alloc(t, sizeof b, NULL), fc = t_alloc(t, sizeof c, NULL);
  void *params[] = {&da, &db, &dc, &fa, &fb, &fc};
  OK(t_launch(t, f, 2, 64, 0, params));
  float ra[4 * n];
  double rb[2 * n];
  int rc_[2 * n];
  t_download(t, ra, fa, sizeof ra);
  t_download(t, rb, fb, sizeof rb);
  t_download(t, rc_, fc, sizeof rc_);
  for (int i = 0; i < n; i++) {
    CHECK(ra[4 * i] == a[4 * i + 3] && ra[4 * i + 1] == a[4 * i + 2] * 2 && ra[4 * i + 2] == a[4 * i + 1] + 1 &&
              ra[4 * i + 3] == a[4 * i],
          "float4 %d", i);
    CHECK(rb[2 * i] == b[2 * i + 1] && rb[2 * i + 1] == b[2 * i] - 1, "double2 %d", i);
    CHECK(rc_[2 * i] == c[2 * i + 1] && rc_[2 * i + 1] == c[2 * i] * 3, "int2 %d", i);
  }
  return 0;
}

int test_shared_memory_static_and_dynamic(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "memory"), "shared_exchange");
  REQUIRE(f, "no kernel");
  float in[256], out[256];
  for (int i = 0; i < 256; i++) in[i] = (float)(i * 3 % 17) - 4;
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, sizeof out, NULL);
  int n = 64;
  void *params[] = {&din, &dout, &n};
  OK(t_launch(t, f, 1, 64, 64 * sizeof(float), params));
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < 64; i++) {
    int j = 63 - i;
    CHECK(out[4 * i] == in[4 * j] && out[4 * i + 1] == in[4 * j + 1] && out[4 * i + 2] == in[4 * j + 2], "tile %d", i);
    float want = in[4 * j + 3] + (float)((63 - i) * 3) + in[(i + 1) % 64] * 10;
    CHECK(out[4 * i + 3] == want, "lane %d: %g, want %g", i, out[4 * i + 3], want);
  }
  int sh = 0;
  OK(dlcemu_function_get_attribute(&sh, DLCEMU_FUNC_ATTRIBUTE_STATIC_SHARED_BYTES, f));
  CHECK(sh == 64 * 16 + 128 * 2, "static shared bytes %d", sh);
  return 0;
}

/* cudaFuncAttributeMaxDynamicSharedMemorySize: static and dynamic shared
 * memory fit in 48 KB until the kernel opts in, up to the device's limit.
 * (A kernel of 49152 dynamic bytes and 8 static ones once passed the
 * emulator and failed to launch on an H100.) */
int test_dynamic_shared_opt_in(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "memory"), "shared_exchange");
  REQUIRE(f, "no kernel");
  float in[256] = {0};
  dlcemu_deviceptr din = t_alloc(t, sizeof in, in), dout = t_alloc(t, sizeof in, NULL);
  int n = 64, sh = 0, max_dyn = 0;
  void *params[] = {&din, &dout, &n};
  OK(dlcemu_function_get_attribute(&sh, DLCEMU_FUNC_ATTRIBUTE_STATIC_SHARED_BYTES, f));
  OK(dlcemu_function_get_attribute(&max_dyn, DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES, f));
  CHECK(max_dyn == 49152 - sh, "default limit %d, want %d", max_dyn, 49152 - sh);
  OK(t_launch(t, f, 1, 64, (unsigned)max_dyn, params));
  CHECK(t_launch(t, f, 1, 64, (unsigned)max_dyn + 16, params) == DLCEMU_ERROR_LAUNCH_CONFIG,
        "48 KB of static and dynamic shared memory exceeded without opting in");
  CHECK(strstr(dlcemu_last_error_detail(), "cudaFuncSetAttribute") != NULL, "detail: %s", dlcemu_last_error_detail());
  OK(dlcemu_function_set_attribute(f, DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES, 65536));
  OK(dlcemu_function_get_attribute(&max_dyn, DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES, f));
  CHECK(max_dyn == 65536, "raised limit %d", max_dyn);
  OK(t_launch(t, f, 1, 64, 65536, params));
  CHECK(t_launch(t, f, 1, 64, 65536 + 16, params) == DLCEMU_ERROR_LAUNCH_CONFIG, "over the raised limit");
  int optin = t_is_sm90(t) ? 232448 : 166912;
  CHECK(dlcemu_function_set_attribute(f, DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES, optin - sh + 1) ==
            DLCEMU_ERROR_INVALID_VALUE, "past the opt-in limit");
  OK(dlcemu_function_set_attribute(f, DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES, optin - sh));
  CHECK(dlcemu_function_set_attribute(f, DLCEMU_FUNC_ATTRIBUTE_STATIC_SHARED_BYTES, 0) == DLCEMU_ERROR_INVALID_VALUE,
        "a read-only attribute set");
  return 0;
}

int test_local_memory_arrays(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "memory"), "local_array");
  REQUIRE(f, "no kernel");
  int idx[96], out[96];
  for (int i = 0; i < 96; i++) idx[i] = i * 7 + 3;
  dlcemu_deviceptr di = t_alloc(t, sizeof idx, idx), dout = t_alloc(t, sizeof out, NULL);
  void *params[] = {&di, &dout};
  OK(t_launch(t, f, 1, 96, 0, params));
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < 96; i++) {
    int arr[24], s = 0;
    for (int k = 0; k < 24; k++) arr[k] = i * 100 + k;
    arr[idx[i] % 24] += 1000;
    for (int k = 0; k < 24; k++) s += arr[(idx[i] + k) % 24] * (k + 1);
    CHECK(out[i] == s, "thread %d: %d, want %d", i, out[i], s);
  }
  int local = 0;
  OK(dlcemu_function_get_attribute(&local, DLCEMU_FUNC_ATTRIBUTE_LOCAL_BYTES, f));
  CHECK(local >= 96, "local bytes %d", local);
  return 0;
}

struct Params {
  float scale;
  int offset;
  double bias;
  short tag;
  char c[3];
};

int test_struct_parameter_by_value(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "memory"), "struct_param");
  REQUIRE(f, "no kernel");
  struct Params p = {1.5f, -7, 0.25, 300, {5, 6, 7}};
  dlcemu_deviceptr dout = t_alloc(t, 32 * 4, NULL);
  void *params[] = {&p, &dout};
  size_t off = 0, bytes = 0;
  OK(dlcemu_function_get_param_info(f, 0, &off, &bytes));
  CHECK(off == 0 && bytes == sizeof p, "param 0 at %zu, %zu bytes", off, bytes);
  OK(dlcemu_function_get_param_info(f, 1, &off, &bytes));
  CHECK(off == 24 && bytes == 8, "param 1 at %zu, %zu bytes", off, bytes);
  OK(t_launch(t, f, 1, 32, 0, params));
  float out[32];
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < 32; i++) CHECK(out[i] == 1.5f * i - 7 + 0.25f + 300 + 5 + 7, "thread %d: %g", i, out[i]);
  return 0;
}

int test_const_and_global_variables(tctx *t) {
  dlcemu_module m = t_load(t, "memory");
  dlcemu_function f = t_func(t, m, "module_variables");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr ct, gb, gc;
  size_t n1, n2, n3;
  OK(dlcemu_module_get_global(&ct, &n1, m, "ctable"));
  OK(dlcemu_module_get_global(&gb, &n2, m, "gbuf"));
  OK(dlcemu_module_get_global(&gc, &n3, m, "gcounter"));
  CHECK(n1 == 64 && n2 == 128 && n3 == 4, "sizes %zu %zu %zu", n1, n2, n3);
  float table[16], buf[32];
  for (int i = 0; i < 16; i++) table[i] = (float)(i * i);
  for (int i = 0; i < 32; i++) buf[i] = 0.5f * i;
  int zero = 0;
  OK(dlcemu_memcpy_htod(ct, table, sizeof table));
  OK(dlcemu_memcpy_htod(gb, buf, sizeof buf));
  OK(dlcemu_memcpy_htod(gc, &zero, 4));
  dlcemu_deviceptr dout = t_alloc(t, 32 * 4, NULL);
  void *params[] = {&dout};
  OK(t_launch(t, f, 1, 32, 0, params));
  float out[32], after[32];
  int counter;
  t_download(t, out, dout, sizeof out);
  t_download(t, after, gb, sizeof after);
  t_download(t, &counter, gc, 4);
  for (int i = 0; i < 32; i++) {
    CHECK(out[i] == table[(i * 7) % 16] + buf[i], "thread %d", i);
    CHECK(after[i] == (float)i, "gbuf[%d]", i);
  }
  CHECK(counter == 31 * 32 / 2, "counter %d", counter);
  return 0;
}

int test_generic_addressing_of_all_spaces(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "memory"), "generic_pointers");
  REQUIRE(f, "no kernel");
  float g[128];
  int flags[64];
  for (int i = 0; i < 128; i++) g[i] = 100.0f + i;
  dlcemu_deviceptr dg = t_alloc(t, sizeof g, g), df = t_alloc(t, sizeof flags, NULL);
  void *params[] = {&dg, &df};
  OK(t_launch(t, f, 1, 64, 0, params));
  t_download(t, g, dg, sizeof g);
  t_download(t, flags, df, sizeof flags);
  for (int i = 0; i < 64; i++) {
    float a = 1.0f + (float)((i + 1) % 64);
    CHECK(g[i] == a * 2, "g[%d] = %g", i, g[i]);
    float want = a + (100.0f + i) - (float)(i % 8) + 5 + 3;
    CHECK(g[64 + i] == want, "g[%d] = %g, want %g", 64 + i, g[64 + i], want);
    CHECK(flags[i] == (7 | (4 * i) << 4), "flags[%d] = 0x%x (isspacep, cvta.to.shared)", i, flags[i]);
  }
  return 0;
}

int test_atomics_global_and_shared(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "memory"), "atomics");
  REQUIRE(f, "no kernel");
  int gi[16] = {0, 0, 0x7FFFFFFF, (int)0x80000000, -1, 0, 0, -1, -1, 0, 0, 0, 0};
  unsigned gu[4] = {0, 0, 0xFFFFFFFFu, 0};
  float gf[2] = {0, 0};
  double gd = 0;
  unsigned long long gl = 0;
  dlcemu_deviceptr di = t_alloc(t, sizeof gi, gi), du = t_alloc(t, sizeof gu, gu), dfl = t_alloc(t, sizeof gf, gf),
                   dd = t_alloc(t, 8, &gd), dl = t_alloc(t, 8, &gl), dold = t_alloc(t, 128 * 4, NULL);
  void *params[] = {&di, &du, &dfl, &dd, &dl, &dold};
  OK(t_launch(t, f, 2, 64, 0, params));
  int old[128];
  t_download(t, gi, di, sizeof gi);
  t_download(t, gu, du, sizeof gu);
  t_download(t, gf, dfl, sizeof gf);
  t_download(t, &gd, dd, 8);
  t_download(t, &gl, dl, 8);
  t_download(t, old, dold, sizeof old);
  CHECK(gi[0] == 8128 && gi[1] == -8128, "add/sub %d %d", gi[0], gi[1]);
  CHECK(gi[2] == 873 && gi[3] == 381, "min/max %d %d", gi[2], gi[3]);
  CHECK(gi[4] == (int)0x80000000 && gi[5] == 0x7FFFFFFF && gi[6] == 0, "and/or/xor 0x%x 0x%x 0x%x", gi[4], gi[5],
        gi[6]);
  CHECK(gi[7] == 127 && gi[8] == 127, "exch/cas %d %d (threads in order)", gi[7], gi[8]);
  for (int i = 0; i < 128; i++) CHECK(old[i] == i - 1, "exch old[%d] = %d", i, old[i]);
  for (int k = 0; k < 4; k++) CHECK(gi[9 + k] == 32, "shared atomics %d", gi[9 + k]);
  CHECK(gu[0] == 2 && gu[1] == 4, "inc/dec %u %u", gu[0], gu[1]);
  CHECK(gu[2] == 0xFFFFFF00u && gu[3] == 0xFFFFFF7Fu, "unsigned min/max 0x%x 0x%x", gu[2], gu[3]);
  CHECK(gf[0] == 64.0f && gf[1] == 256.0f, "float add %g %g", gf[0], gf[1]);
  CHECK(gi[13] == 128 && gi[14] == 127 && (uint32_t)gi[15] == 0x58005800u, "red add/max/f16x2: %d %d 0x%08x", gi[13],
        gi[14], (uint32_t)gi[15]);
  CHECK(gd == 32.0 && gl == (128ull << 33), "double/u64 add %g %llu", gd, gl);
  return 0;
}

static int depth2(int x) { return x * 3 + 1; }
static int depth1(int x, int y) { return depth2(x) + depth2(y) * 2; }

int test_function_calls_params_and_returns(tctx *t) {
  dlcemu_function f = t_func(t, t_load(t, "memory"), "calls");
  REQUIRE(f, "no kernel");
  dlcemu_deviceptr dout = t_alloc(t, 96 * 4, NULL);
  void *params[] = {&dout};
  OK(t_launch(t, f, 1, 96, 0, params));
  int out[96];
  t_download(t, out, dout, sizeof out);
  for (int i = 0; i < 96; i++) {
    float pa = (float)i * 2;
    int pb = i * 2 + 1;
    int r = depth1(i, pb);
    if (i % 3 == 0) r += depth2(i + 100);
    else if (i % 3 == 1) r -= depth1(i, 1);
    CHECK(out[i] == r + (int)pa, "thread %d: %d, want %d", i, out[i], r + (int)pa);
  }
  return 0;
}
