/* The entry points' argument checks (libdlckernels-emu): bad arguments get
 * the right status and a detail string, and write nothing; dims of zero are
 * a no-op once the other arguments pass; operands aligned to their elements
 * but not to a chunk go to a narrower kernel; a pointer (operand, bias or
 * output) not aligned to its elements is DLC_ERROR_MISALIGNED.
 * DLC_EMU_ARCH selects the emulated arch (sm80 runs the sm_80 PTX, sm90a
 * the sm_90a PTX of a library built for it; other values are refused).
 * test_hostile_emu.c covers every entry point with hostile values. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "kt.h"

#define CANARY 0x7E5Bu
enum { M = 20, N = 24, K = 40 };

static kt_buf A, B, bias, C;

static void reset_c(void) {
  for (size_t i = 0; i < C.n; i++) C.host[i] = CANARY;
  kt_upload(&C);
}

static int c_untouched(void) {
  kt_download(&C);
  for (size_t i = 0; i < C.n; i++)
    if (C.host[i] != CANARY) return 0;
  return 1;
}

static dlc_status call(dlc_dtype dt, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda, const void *b,
                       int64_t ldb, const void *bs, void *c, int64_t ldc, struct CUstream_st *stream) {
  reset_c();
  return dlc_gemm_bias_relu(dt, m, n, k, a, lda, b, ldb, bs, c, ldc, stream);
}

#define EXPECT(st, expr)                                                                       \
  do {                                                                                         \
    dlc_status got_ = (expr);                                                                  \
    CHECK(got_ == (st));                                                                       \
    if (got_ != (st)) fprintf(stderr, "  got %s: %s\n", dlc_status_string(got_), dlc_last_error_detail()); \
    if ((st) != DLC_SUCCESS) CHECK(dlc_last_error_detail()[0] != 0);                           \
  } while (0)

int main(void) {
  kt_alloc(&A, M * K + 16, 0), kt_alloc(&B, K * N + 16, 0), kt_alloc(&bias, N + 16, 0), kt_alloc(&C, M * N + 16, 0);
  uint64_t s = 7;
  for (size_t i = 0; i < A.n; i++) A.host[i] = kt_f32_to_f16((float)kt_uniform(&s));
  for (size_t i = 0; i < B.n; i++) B.host[i] = kt_f32_to_f16((float)kt_uniform(&s));
  for (size_t i = 0; i < bias.n; i++) bias.host[i] = kt_f32_to_f16((float)kt_uniform(&s));
  kt_upload(&A), kt_upload(&B), kt_upload(&bias);
  void *a = kt_ptr(A.dev), *b = kt_ptr(B.dev), *bs = kt_ptr(bias.dev), *c = kt_ptr(C.dev);
  char *a1 = (char *)a + 2, *a_odd = (char *)a + 1;

  /* status names */
  CHECK(strcmp(dlc_status_string(DLC_SUCCESS), "DLC_SUCCESS") == 0);
  CHECK(strcmp(dlc_status_string(DLC_ERROR_MISALIGNED), "DLC_ERROR_MISALIGNED") == 0);
  CHECK(dlc_status_string((dlc_status)99) != NULL);

  EXPECT(DLC_SUCCESS, call(DLC_F16, M, N, K, a, K, b, N, bs, c, N, NULL));
  CHECK(!c_untouched());
  /* the emulated arch (DLC_EMU_ARCH): sm80 runs, sm90a runs the rows built
   * for sm90a from their sm_90a PTX (the default library lists sm90a), with
   * the same result here (the same kernel: M = 20 is a shape bucket's),
   * anything else is refused */
  setenv("DLC_EMU_ARCH", "sm80", 1);
  EXPECT(DLC_SUCCESS, call(DLC_F16, M, N, K, a, K, b, N, bs, c, N, NULL));
  kt_download(&C);
  uint16_t *c80 = malloc(C.n * sizeof *c80);
  memcpy(c80, C.host, C.n * sizeof *c80);
  setenv("DLC_EMU_ARCH", "sm90a", 1);
  EXPECT(DLC_SUCCESS, call(DLC_F16, M, N, K, a, K, b, N, bs, c, N, NULL));
  kt_download(&C);
  CHECK(memcmp(c80, C.host, C.n * sizeof *c80) == 0);
  free(c80);
  setenv("DLC_EMU_ARCH", "sm75", 1);
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, M, N, K, a, K, b, N, bs, c, N, NULL));
  CHECK(strstr(dlc_last_error_detail(), "DLC_EMU_ARCH=sm75") != NULL);
  CHECK(c_untouched());
  unsetenv("DLC_EMU_ARCH");
  /* NULL pointers */
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, M, N, K, NULL, K, b, N, bs, c, N, NULL));
  CHECK(c_untouched());
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, M, N, K, a, K, NULL, N, bs, c, N, NULL));
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, M, N, K, a, K, b, N, NULL, c, N, NULL));
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, M, N, K, a, K, b, N, bs, NULL, N, NULL));
  /* negative dims */
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, -1, N, K, a, K, b, N, bs, c, N, NULL));
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, M, -5, K, a, K, b, N, bs, c, N, NULL));
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, M, N, -2, a, K, b, N, bs, c, N, NULL));
  CHECK(c_untouched());
  /* leading dimensions smaller than the row */
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, M, N, K, a, K - 1, b, N, bs, c, N, NULL));
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, M, N, K, a, K, b, N - 1, bs, c, N, NULL));
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, M, N, K, a, K, b, N, bs, c, N - 1, NULL));
  CHECK(c_untouched());
  /* an output with no elements is a no-op, after the same checks; only a
   * tensor with no elements may be NULL */
  EXPECT(DLC_SUCCESS, call(DLC_F16, 0, N, K, a, K, b, N, bs, c, N, NULL));
  EXPECT(DLC_SUCCESS, call(DLC_F16, M, 0, K, a, K, NULL, 1, NULL, NULL, 1, NULL));
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, M, 0, K, NULL, K, NULL, 1, NULL, NULL, 1, NULL));
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, 0, N, K, NULL, -7, NULL, -7, NULL, NULL, -7, NULL));
  EXPECT(DLC_ERROR_MISALIGNED, call(DLC_F16, 0, N, K, a, K, b, N, bs, (char *)c + 1, N, NULL));
  CHECK(c_untouched());
  /* K = 0: C = relu(bias) */
  EXPECT(DLC_SUCCESS, call(DLC_F16, M, N, 0, a, 1, b, N, bs, c, N, NULL));
  kt_download(&C);
  int ok = 1;
  for (int n = 0; n < N; n++) {
    float want = kt_f16_to_f32(bias.host[n]);
    if (want < 0) want = 0;
    ok &= kt_f16_to_f32(C.host[n]) == want;
  }
  CHECK(ok);
  /* misaligned: a 2-byte offset still runs (a narrower chunk), an odd byte
   * address cannot */
  EXPECT(DLC_SUCCESS, call(DLC_F16, M, N, K, a1, K, b, N, bs, c, N, NULL));
  EXPECT(DLC_ERROR_MISALIGNED, call(DLC_F16, M, N, K, a_odd, K, b, N, bs, c, N, NULL));
  CHECK(c_untouched());
  /* bias and output: element-aligned runs (the epilogue checks its own
   * vector alignment), an odd byte address is DLC_ERROR_MISALIGNED */
  EXPECT(DLC_ERROR_MISALIGNED, call(DLC_F16, M, N, K, a, K, b, N, (char *)bs + 1, c, N, NULL));
  CHECK(strstr(dlc_last_error_detail(), "bias = ") != NULL);
  EXPECT(DLC_ERROR_MISALIGNED, call(DLC_F16, M, N, K, a, K, b, N, bs, (char *)c + 1, N, NULL));
  CHECK(strstr(dlc_last_error_detail(), "c = ") != NULL);
  EXPECT(DLC_ERROR_MISALIGNED, call(DLC_BF16, M, N, K, a, K, b, N, bs, (char *)c + 3, N, NULL));
  CHECK(c_untouched());
  EXPECT(DLC_SUCCESS, call(DLC_F16, M, N, K, a, K, b, N, (char *)bs + 2, c, N, NULL));
  EXPECT(DLC_SUCCESS, call(DLC_F16, M, N, K, a, K, b, N, bs, (char *)c + 2, N, NULL));
  /* the emulator runs synchronously: no streams */
  EXPECT(DLC_ERROR_INVALID_VALUE, call(DLC_F16, M, N, K, a, K, b, N, bs, c, N, (struct CUstream_st *)0x1));
  CHECK(c_untouched());
  /* a dtype that is not compiled, and one that is no dtype: the detail
   * names the value */
  EXPECT(DLC_ERROR_NOT_SUPPORTED, call(DLC_F32, M, N, K, a, K, b, N, bs, c, N, NULL));
  CHECK(strstr(dlc_last_error_detail(), "DLC_F32") != NULL);
  EXPECT(DLC_ERROR_INVALID_VALUE, call((dlc_dtype)77, M, N, K, a, K, b, N, bs, c, N, NULL));
  CHECK(strstr(dlc_last_error_detail(), "77") != NULL);
  CHECK(c_untouched());
  /* a conv variant the manifest does not list: the detail names it */
  {
    dlc_status st = dlc_conv2d_bias_silu(DLC_F16, 1, 8, 8, 8, 8, 3, 3, 1, 1, a, b, bs, c, NULL);
    CHECK(st == DLC_ERROR_NOT_SUPPORTED);
    CHECK(strstr(dlc_last_error_detail(), "stride=(3,3)") != NULL);
    CHECK(strstr(dlc_last_error_detail(), "variants") != NULL);
    CHECK(c_untouched());
    /* C % 8 != 0 cannot use 16-byte chunks along C: a narrower kernel runs */
    reset_c();
    st = dlc_conv2d_bias_silu(DLC_F16, 1, 4, 4, 3, 2, 1, 1, 1, 1, a, b, bs, c, NULL);
    CHECK(st == DLC_SUCCESS);
  }
  /* the detail string is cleared by a success */
  EXPECT(DLC_SUCCESS, call(DLC_F16, M, N, K, a, K, b, N, bs, c, N, NULL));
  CHECK(dlc_last_error_detail()[0] == 0);
  kt_free(&A), kt_free(&B), kt_free(&bias), kt_free(&C);
  return check_status("test_api_emu");
}
