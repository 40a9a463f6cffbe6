/*
 * t_fuzz.c: the loader on hostile input.  Real nvcc PTX, cut at many points
 * and with bytes replaced, must load or fail with a status; never crash, hang
 * or leak (this test is most useful in the DLC_SANITIZE build).  Modules that
 * do load are launched once and must not crash either.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_test.h"

static int valid_status(int rc) { return rc >= 0 && rc <= DLCEMU_ERROR_RACE; }

/* load text; if it loads, launch every kernel named in `names` once on zeroed buffers */
static void try_text(tctx *t, const char *text, int *loaded) {
  dlcemu_module m = NULL;
  int rc = dlcemu_module_load_data(&m, text);
  CHECK(valid_status(rc), "load returned %d", rc);
  if (rc) return;
  (*loaded)++;
  static const char *const kernels[] = {"shuffles", "votes", "divergence", "barrier_after_exit", "named_barriers", NULL};
  dlcemu_deviceptr buf = 0;
  if (!dlcemu_mem_alloc(&buf, 1 << 16)) {
    dlcemu_memset_d8(buf, 0, 1 << 16);
    int n = 16;
    void *params[] = {&buf, &buf, &n};
    dlcemu_set_limit(DLCEMU_LIMIT_WARP_INSTRUCTIONS, 200000);
    for (int i = 0; kernels[i]; i++) {
      dlcemu_function f;
      if (dlcemu_module_get_function(&f, m, kernels[i])) continue;
      rc = dlcemu_launch_kernel(f, 1, 1, 1, 64, 1, 1, 0, params);
      CHECK(valid_status(rc), "launch returned %d", rc);
    }
    dlcemu_set_limit(DLCEMU_LIMIT_WARP_INSTRUCTIONS, 20000000000ull);
    dlcemu_mem_free(buf);
  }
  dlcemu_module_unload(m);
}

int test_loader_survives_truncated_and_mutated_ptx(tctx *t) {
  char *text = t_read_ptx(t, "warp");
  REQUIRE(text, "cannot read warp PTX");
  size_t n = strlen(text);
  char *copy = malloc(n + 1);
  int loaded = 0;
  uint32_t s = 1234;
  for (int i = 0; i < 150; i++) { /* truncations */
    size_t cut = (size_t)t_rand(&s) % n;
    memcpy(copy, text, cut);
    copy[cut] = 0;
    try_text(t, copy, &loaded);
  }
  static const char junk[] = "{}[]();,.%@!|+-_0123456789abcdefxyz\n\t \"<>:=";
  for (int i = 0; i < 150; i++) { /* byte replacements */
    memcpy(copy, text, n + 1);
    int edits = 1 + (int)(t_rand(&s) % 4);
    for (int e = 0; e < edits; e++) copy[t_rand(&s) % n] = junk[t_rand(&s) % (sizeof junk - 1)];
    try_text(t, copy, &loaded);
  }
  for (int i = 0; i < 60; i++) { /* deleted lines */
    memcpy(copy, text, n + 1);
    size_t at = (size_t)t_rand(&s) % n;
    char *line = strchr(copy + at, '\n');
    if (line) {
      char *next = strchr(line + 1, '\n');
      if (next) memmove(line, next, strlen(next) + 1);
    }
    try_text(t, copy, &loaded);
  }
  CHECK(loaded > 0, "some mutants still load (%d did)", loaded);
  free(copy);
  free(text);
  return 0;
}

/* The loader once copied a .file name of a lone quote with a length of -1
 * (a heap overrun that truncated PTX reached) and took an unclosed name as
 * far as the text went. */
int test_file_directive_with_unterminated_name_fails(tctx *t) {
#define HEAD ".version 8.0\n.target sm_80\n.address_size 64\n"
  static const char *const bad[] = {
      HEAD ".file 1 \"",
      HEAD ".file 1 \"/src/k.cu",
      HEAD ".file 1 \"/src/k.cu\n.visible .entry k()\n{\n  ret;\n}\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    dlcemu_module m = NULL;
    int rc = dlcemu_module_load_data(&m, bad[i]);
    CHECK(rc != 0 && valid_status(rc), "case %zu: load returned %d, not an error", i, rc);
    if (!rc) dlcemu_module_unload(m);
  }
  dlcemu_module m = NULL;
  int rc = dlcemu_module_load_data(&m, HEAD ".file 1 \"/src/k.cu\"\n.visible .entry k()\n{\n  ret;\n}\n");
  CHECK(rc == 0, "a closed .file name: load returned %d", rc);
  if (!rc) dlcemu_module_unload(m);
#undef HEAD
  return 0;
}
