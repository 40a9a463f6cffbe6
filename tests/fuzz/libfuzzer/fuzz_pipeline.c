/* Coverage-guided fuzzing of the whole of dlcgen (issue 12, Build item 3):
 * a libFuzzer target that runs one input through pipeline_main() in memory,
 * every stage from the reader to the emitted CUDA and C, and writes no file.
 *
 * The input is a manifest, a JSON graph or a DSL graph, told apart by its
 * text (a manifest is a JSON object with "ops"; a graph in JSON starts with
 * '{'; anything else is read as .dlc):
 *   - a manifest runs as `dlcgen --manifest DIR/fuzz.json --out mem`, where
 *     DIR is manifests/ of the source tree, so "graphs/gemm_bias_relu.json"
 *     names a real graph (inline graphs need no file);
 *   - a graph runs as `dlcgen --graph fuzz.json|fuzz.dlc --dump=all`, whose
 *     back half (plan, GPU IR, emission for sm80) runs when the front half
 *     accepts the graph.
 * Errors are expected.  Besides crashes, leaks and undefined behaviour
 * (ASan, LSan, UBSan), these abort:
 *   - an internal error (E0004): a verifier caught a stage's bug;
 *   - a failed run without an error diagnostic, or a diagnostic without its
 *     location, reason or suggestion;
 *   - an output with a NUL byte, an output path outside the output
 *     directory, or a generated source whose comment openings and closings
 *     do not pair (text from the input broke out of a comment).
 *
 * Built by tests/fuzz/libfuzzer/CMakeLists.txt with clang's
 * -fsanitize=fuzzer,address,undefined; run by tests/fuzz/run_libfuzzer.cmake
 * (docs/testing.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "pipeline.h"

#ifndef DLC_FUZZ_MANIFEST_DIR
#error "DLC_FUZZ_MANIFEST_DIR names manifests/ of the source tree"
#endif

/* Inputs past this size add nothing but time. */
#define MAX_INPUT 65536

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_pipeline: %s: %s\n", what, detail ? detail : "");
  abort();
}

static size_t count(const char *s, const char *pat) {
  size_t n = 0;
  for (const char *p = strstr(s, pat); p; p = strstr(p + strlen(pat), pat)) n++;
  return n;
}

static bool ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && strcmp(s + n - m, suf) == 0;
}

/* Every output the run would write. */
static void sink(void *ctx, const char *path, const char *text) {
  int *nout = ctx;
  (*nout)++;
  if (strncmp(path, "mem/", 4) != 0 || strstr(path, "..") || strstr(path, "//")) fail("output path outside mem/", path);
  if (ends_with(path, ".cu") || ends_with(path, ".c") || ends_with(path, ".h")) {
    // a comment opening inside a line comment is legal C, but no emitter writes one
    if (count(text, "/*") != count(text, "*/")) fail("unpaired comment in", path);
  }
}

static bool is_manifest(const char *text) {
  const char *p = text;
  while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
  return *p == '{' && strstr(p, "\"ops\"") != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > MAX_INPUT) return -1;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  if (strlen(text) != size) {
    /* the file readers refuse NUL bytes before any stage sees them */
    free(text);
    return -1;
  }
  diag_list dl;
  diag_init(&dl);
  int nout = 0;
  pipeline_opts o = {0};
  o.dtype = "fp16";
  o.until = STAGE_CU;
  o.quiet = true;
  o.text = text;
  o.sink = sink;
  o.sink_ctx = &nout;
  o.diags = &dl;
  if (is_manifest(text)) {
    o.manifest = DLC_FUZZ_MANIFEST_DIR "/fuzz.json";
    o.out_dir = "mem";
  } else {
    const char *p = text;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    o.graph = *p == '{' ? "fuzz.json" : "fuzz.dlc";
    o.dump = (1u << STAGE__COUNT) - 1;
    o.dump_dir = "mem";
  }
  int status = pipeline_main(&o);
  for (int i = 0; i < dl.n; i++) {
    const diag *d = &dl.items[i];
    if (d->id == D_INTERNAL) fail("internal error", d->why);
    if (!d->at || !d->why || !*d->why || !d->suggestion || !*d->suggestion) fail("incomplete diagnostic", diag_code(d->id));
  }
  if (status != 0 && !diag_has_errors(&dl)) fail("failed without an error", text);
  if (status == 0 && diag_has_errors(&dl)) fail("succeeded with an error", text);
  diag_free(&dl);
  free(text);
  return 0;
}
