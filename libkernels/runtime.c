/* Backend-independent runtime: status names and the thread-local detail
 * string (spec §12: errors are explicit diagnostics, not crashes). */
#include <stdarg.h>
#include <stdio.h>

#include "dlc_internal.h"

#define DLC_STR_(x) #x
#define DLC_STR(x) DLC_STR_(x)
/* from the header's macros, so that library and header agree by construction */
#define DLC_VERSION_STRING DLC_STR(DLC_VERSION_MAJOR) "." DLC_STR(DLC_VERSION_MINOR) "." DLC_STR(DLC_VERSION_PATCH)

static _Thread_local char detail[512];

const char *dlc_status_string(dlc_status s) {
  switch (s) {
  case DLC_SUCCESS: return "DLC_SUCCESS";
  case DLC_ERROR_INVALID_VALUE: return "DLC_ERROR_INVALID_VALUE";
  case DLC_ERROR_NOT_SUPPORTED: return "DLC_ERROR_NOT_SUPPORTED";
  case DLC_ERROR_MISALIGNED: return "DLC_ERROR_MISALIGNED";
  case DLC_ERROR_NO_DEVICE: return "DLC_ERROR_NO_DEVICE";
  case DLC_ERROR_LAUNCH_FAILED: return "DLC_ERROR_LAUNCH_FAILED";
  case DLC_ERROR_INTERNAL: return "DLC_ERROR_INTERNAL";
  }
  return "DLC_ERROR_UNKNOWN";
}

const char *dlc_last_error_detail(void) { return detail; }

const char *dlc_version(void) { return DLC_VERSION_STRING; }

void dlc__clear_detail(void) { detail[0] = 0; }

dlc_status dlc__fail(dlc_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return s;
}

const char *dlc__dtype_name(dlc_dtype t) {
  switch (t) {
  case DLC_F16: return "DLC_F16";
  case DLC_BF16: return "DLC_BF16";
  case DLC_F32: return "DLC_F32";
  }
  return "an unknown dtype";
}
