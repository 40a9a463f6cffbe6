/* The header's DLC_VERSION_* macros, dlc_version() and the CMake project
 * version (argv[1]) are one version: a library built from other headers, or
 * a CMake version that stopped reading dlc.h, fails here. */
#include <dlc/dlc.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", DLC_VERSION_MAJOR, DLC_VERSION_MINOR, DLC_VERSION_PATCH);
  if (strcmp(dlc_version(), want) != 0) {
    fprintf(stderr, "dlc_version() = %s, the header's macros say %s\n", dlc_version(), want);
    return 1;
  }
  if (argc < 2 || strcmp(argv[1], want) != 0) {
    fprintf(stderr, "the CMake project version is %s, the header's macros say %s\n", argc > 1 ? argv[1] : "(none)",
            want);
    return 1;
  }
  printf("dlc %s: header, library and project agree\n", want);
  return 0;
}
