/* An outside consumer linked with the installed libdlckernels (CUDA, SASS)
 * and cudart_static: it proves that the link line of dlckernels.pc /
 * dlc::dlckernels is complete.  It runs without a GPU: it calls only what
 * never reaches the device (argument checks and a call with no elements). */
#include <stdio.h>

#include <dlc/dlc.h>

int main(void) {
  static const unsigned short x[16];
  dlc_status bad = dlc_gemm_bias_relu(DLC_F16, 4, 4, 4, x, 4, x, 4, x, NULL, 4, NULL);
  /* M = 0: A and C have no elements and may be NULL; B and bias have some */
  dlc_status empty = dlc_gemm_bias_relu(DLC_F16, 0, 4, 4, NULL, 4, x, 4, x, NULL, 4, NULL);
  if (bad != DLC_ERROR_INVALID_VALUE || empty != DLC_SUCCESS) {
    fprintf(stderr, "c = NULL gave %s, M = 0 gave %s\n", dlc_status_string(bad), dlc_status_string(empty));
    return 1;
  }
  printf("dlc %s (CUDA): argument checks ok\n", dlc_version());
  return 0;
}
