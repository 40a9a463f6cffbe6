/* The installed public headers compile alone, with no CUDA headers, as C11
 * and as C++ (the install test builds this file with both). */
#include <dlc/dlc.h>
#include <dlc/dlcemu.h>

int dlc_install_header_check(void);
int dlc_install_header_check(void) {
  dlc_status (*fn)(dlc_dtype, int64_t, int64_t, int64_t, const void *, int64_t, const void *, int64_t, const void *,
                   void *, int64_t, struct CUstream_st *) = dlc_gemm_bias_relu;
  dlcemu_deviceptr p = 0;
  return (fn != 0) + (int)DLC_SUCCESS + (int)DLC_F16 + (int)p + (int)DLCEMU_SUCCESS;
}
