/* The header's DLC_VERSION_* macros, dlc_version(), dlc_version_number()
 * and the CMake project version (argv[1]) are one version: a library built
 * from other headers, or a CMake version that stopped reading dlc.h, fails
 * here.  With the manifest the library was built from (argv[2]),
 * dlc_build_info() must be JSON whose version fields agree, whose manifest
 * name and FNV-1a hash are the file's (hashed here, independently of the
 * generator), whose ops and archs are the manifest's, in its order, and
 * whose backend and sass_archs are argv[3] and argv[4] (comma-separated):
 * the emulator library has no CUDA runtime and no SASS, the CUDA one the
 * runtime it was built with and the archs its build compiled. */
#include <cJSON.h>
#ifdef DLC_TEST_CUDA /* linked with libdlckernels: the toolkit's runtime version */
#include <cuda_runtime_api.h>
#define CUDART_VERSION_BUILT CUDART_VERSION
#else
#define CUDART_VERSION_BUILT 0
#endif
#include <dlc/dlc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const char *info) {
  fprintf(stderr, "dlc_build_info: %s\n  %s\n", what, info);
  return 1;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *t = NULL;
  size_t n = 0, cap = 0;
  int ch;
  while ((ch = fgetc(f)) != EOF) {
    if (n + 1 >= cap) {
      char *g = realloc(t, cap = cap ? 2 * cap : 4096);
      if (!g) {
        free(t), fclose(f);
        return NULL;
      }
      t = g;
    }
    t[n++] = (char)ch;
  }
  fclose(f);
  if (t) t[n] = 0;
  return t;
}

/* the names of a manifest array (ops by "name", archs as strings) against info's */
static int same_names(const cJSON *want, const cJSON *got, int by_name) {
  if (!cJSON_IsArray(got) || cJSON_GetArraySize(want) != cJSON_GetArraySize(got)) return 0;
  for (int i = 0; i < cJSON_GetArraySize(want); i++) {
    const cJSON *w = cJSON_GetArrayItem(want, i), *g = cJSON_GetArrayItem(got, i);
    if (by_name) w = cJSON_GetObjectItemCaseSensitive(w, "name");
    if (!cJSON_IsString(w) || !cJSON_IsString(g) || strcmp(w->valuestring, g->valuestring) != 0) return 0;
  }
  return 1;
}

/* info's sass_archs against a comma-separated list */
static int same_list(const char *want, const cJSON *got) {
  if (!cJSON_IsArray(got)) return 0;
  int i = 0;
  for (const char *p = want; *p; i++) {
    size_t n = strcspn(p, ",");
    const cJSON *g = cJSON_GetArrayItem(got, i);
    if (!cJSON_IsString(g) || strlen(g->valuestring) != n || strncmp(g->valuestring, p, n) != 0) return 0;
    p += n + (p[n] == ',');
  }
  return cJSON_GetArraySize(got) == i;
}

static int check_build_info(const char *manifest, const char *backend, const char *sass) {
  const char *info = dlc_build_info();
  if (info != dlc_build_info()) return fail("two calls gave two strings", info);
  cJSON *j = cJSON_Parse(info);
  if (!cJSON_IsObject(j)) return fail("not a JSON object", info);
  int bad = 0;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "version");
  const cJSON *vn = cJSON_GetObjectItemCaseSensitive(j, "version_number");
  if (!cJSON_IsString(v) || strcmp(v->valuestring, dlc_version()) != 0) bad |= fail("version is not dlc_version()", info);
  if (!cJSON_IsNumber(vn) || vn->valueint != DLC_VERSION_NUMBER) bad |= fail("version_number is not DLC_VERSION_NUMBER", info);
  const cJSON *be = cJSON_GetObjectItemCaseSensitive(j, "backend");
  if (!cJSON_IsString(be) || strcmp(be->valuestring, backend) != 0) bad |= fail("backend is not argv[3]'s", info);
  const cJSON *rt = cJSON_GetObjectItemCaseSensitive(j, "cuda_runtime"), *drv = cJSON_GetObjectItemCaseSensitive(j, "min_driver");
  if (strcmp(backend, "cuda") == 0) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d", CUDART_VERSION_BUILT / 1000, CUDART_VERSION_BUILT % 1000 / 10);
    if (!cJSON_IsString(rt) || strcmp(rt->valuestring, want) != 0) bad |= fail("cuda_runtime is not the toolkit's", info);
    if (!cJSON_IsString(drv)) bad |= fail("min_driver is not a driver branch", info);
  } else if (!cJSON_IsNull(rt) || !cJSON_IsNull(drv)) {
    bad |= fail("cuda_runtime and min_driver are not null without CUDA", info);
  }
  if (!same_list(sass, cJSON_GetObjectItemCaseSensitive(j, "sass_archs"))) bad |= fail("sass_archs are not argv[4]'s", info);
  char *text = read_file(manifest);
  cJSON *m = text ? cJSON_Parse(text) : NULL;
  if (!m) {
    free(text), cJSON_Delete(j);
    return fail("cannot read the manifest", manifest);
  }
  uint64_t h = 0xcbf29ce484222325u;
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) h = (h ^ *p) * 0x100000001b3u;
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
  const char *base = strrchr(manifest, '/');
  base = base ? base + 1 : manifest;
  const cJSON *mf = cJSON_GetObjectItemCaseSensitive(j, "manifest");
  const cJSON *nm = cJSON_GetObjectItemCaseSensitive(mf, "name"), *fh = cJSON_GetObjectItemCaseSensitive(mf, "fnv1a64");
  if (!cJSON_IsString(nm) || strcmp(nm->valuestring, base) != 0) bad |= fail("manifest.name is not the file's name", info);
  if (!cJSON_IsString(fh) || strcmp(fh->valuestring, hex) != 0) bad |= fail("manifest.fnv1a64 is not the file's hash", info);
  if (!same_names(cJSON_GetObjectItemCaseSensitive(m, "ops"), cJSON_GetObjectItemCaseSensitive(j, "ops"), 1))
    bad |= fail("ops are not the manifest's", info);
  if (!same_names(cJSON_GetObjectItemCaseSensitive(m, "archs"), cJSON_GetObjectItemCaseSensitive(j, "archs"), 0))
    bad |= fail("archs are not the manifest's", info);
  if (!bad) printf("dlc_build_info: %s\n", info);
  cJSON_Delete(m), cJSON_Delete(j), free(text);
  return bad;
}

int main(int argc, char **argv) {
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", DLC_VERSION_MAJOR, DLC_VERSION_MINOR, DLC_VERSION_PATCH);
  if (strcmp(dlc_version(), want) != 0) {
    fprintf(stderr, "dlc_version() = %s, the header's macros say %s\n", dlc_version(), want);
    return 1;
  }
  int number = DLC_VERSION_MAJOR * 10000 + DLC_VERSION_MINOR * 100 + DLC_VERSION_PATCH;
  if (dlc_version_number() != number || DLC_VERSION_NUMBER != number) {
    fprintf(stderr, "dlc_version_number() = %d, DLC_VERSION_NUMBER = %d, the header's macros say %d\n",
            dlc_version_number(), DLC_VERSION_NUMBER, number);
    return 1;
  }
  if (argc < 2 || strcmp(argv[1], want) != 0) {
    fprintf(stderr, "the CMake project version is %s, the header's macros say %s\n", argc > 1 ? argv[1] : "(none)",
            want);
    return 1;
  }
  if (argc > 4 && check_build_info(argv[2], argv[3], argv[4])) return 1;
  printf("dlc %s (%d): header, library and project agree\n", want, number);
  return 0;
}
