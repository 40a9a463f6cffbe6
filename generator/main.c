/* dlcgen: the command-line driver.
 *
 *   dlcgen --graph FILE [--dtype T] [--bind NAME=VALUE]... [--dump=STAGES] [--until=STAGE]
 *          [--dump-dir DIR] [--diag=json]
 *   dlcgen --decompile --graph FILE [--dtype T] [--diag=json]
 *   dlcgen --manifest FILE --out DIR [--dump=STAGES] [--until=STAGE] [--diag=json] [--quiet]
 *   (both compile modes also take --calibrate FILE.csv)
 *
 * The pipeline runs the stages in spec order (pipeline.c); a verifier runs
 * after each.  Exit status: 0 success, 1 user error (diagnostics printed),
 * 2 usage error, 3 internal error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"

#ifndef DLC_VERSION
#define DLC_VERSION "0.0.0"
#endif

static void usage(FILE *f) {
  fputs("usage: dlcgen --graph FILE [--dtype fp16|bf16|fp32] [--bind NAME=VALUE]... [--dump=STAGES]\n"
        "                     [--arch ARCHS] [--no-layout] [--layout-trace FILE]\n"
        "                     [--until=STAGE] [--dump-dir DIR] [--diag=json|text]\n"
        "       dlcgen --manifest FILE --out DIR [--dump=STAGES] [--until=STAGE] [--diag=json|text] [--quiet]\n"
        "                     [--time-report]\n"
        "                     [--calibrate FILE.csv]\n"
        "       dlcgen --decompile --graph FILE [--dtype fp16|bf16|fp32] [--diag=json|text]\n"
        "       dlcgen --help | --version\n"
        "\n"
        "Compiles a Frontend graph, or every entry of a dlc-manifest/1 manifest, through the\n"
        "pipeline of the dlc specification.\n"
        "\n"
        "  --graph FILE      compile one graph: JSON (docs/graph-format.md), or the DSL\n"
        "                    (docs/dsl.md) when FILE ends in .dlc\n"
        "  --decompile       print the --graph FILE (JSON or DSL) as DSL on stdout, as one\n"
        "                    `graph main`, after the front end has checked it\n"
        "  --dtype T         instantiate the graph's dtype parameter T (default fp16)\n"
        "  --bind NAME=VALUE bind a signature dim to a constant, as a manifest variant does\n"
        "                    (e.g. --bind D=64 for attention's head dim); repeatable\n"
        "  --arch ARCHS      with --graph: the archs to plan and build for, comma-separated\n"
        "                    (default sm80; e.g. sm80,sm90a adds the sm90a row's kernel)\n"
        "  --manifest FILE   compile every op x dtype x variant of a manifest (docs/manifest.md);\n"
        "                    its graphs may be JSON or .dlc files\n"
        "  --out DIR         where --manifest writes its outputs (rewritten only when changed);\n"
        "                    dumps go to DIR/dumps/<op>/<instance>/<stage>.json\n"
        "  --no-layout       turn the layout pass (seed 004, docs/layout.md) off\n"
        "  --layout-trace FILE  merge co-access weights from a trace file into the layout\n"
        "                    pass's co-access graph (docs/layout.md)\n"
        "  --dump=STAGES     comma-separated stages to dump, or 'all': frontend, layout, tiny,\n"
        "                    indexbook, poly_view, region, analysis, plan, gpu, arena (a chain's\n"
        "                    values and their kernels, JSON), constpool (a plan's params: each\n"
        "                    one's offset, alignment and fold, JSON) and cu\n"
        "                    (cu with --graph only: --manifest writes its code under --out);\n"
        "                    --graph runs no stage after the last one dumped\n"
        "  --until=STAGE     stop after STAGE (default: cu, i.e. compile to CUDA; --manifest\n"
        "                    then writes kernels/, src/ and include/ under --out, and with an\n"
        "                    earlier STAGE leaves an earlier run's code there alone)\n"
        "  --calibrate CSV   re-rank searched plans by times measured on a GPU: a CSV that\n"
        "                    dlc-bench-gpu wrote (docs/plan.md, Calibration)\n"
        "  --dump-dir DIR    write each dump to DIR/<stage>.json instead of stdout\n"
        "  --diag=json       print diagnostics as one JSON document on stderr\n"
        "  --quiet, -q       no progress output\n"
        "  --time-report     print each stage's wall time on stderr, for every graph or\n"
        "                    manifest instance (no dump holds times: two runs dump the same bytes)\n"
        "  --help, -h        this text\n"
        "\n"
        "Exit status: 0 success, 1 error in the input (diagnostics printed), 2 usage error,\n"
        "3 internal error.\n",
        f);
}

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "dlcgen: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'dlcgen --help'.\n");
  return 2;
}

/* "--opt=value" or "--opt value" */
static const char *opt_value(int argc, char **argv, int *i, const char *name, bool *err) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, n) != 0) return NULL;
  if (a[n] == '=') return a + n + 1;
  if (a[n] != 0) return NULL;
  if (*i + 1 >= argc) {
    *err = true;
    return NULL;
  }
  return argv[++*i];
}

int main(int argc, char **argv) {
  pipeline_opts o = {0};
  o.dtype = "fp16";
  o.until = STAGE_CU;
  bool err = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(a, "--version") == 0) {
      printf("dlcgen %s\n", DLC_VERSION);
      return 0;
    }
    if (strcmp(a, "--decompile") == 0) {
      o.decompile = true;
      continue;
    }
    if (strcmp(a, "--no-layout") == 0) {
      o.no_layout = true;
      continue;
    }
    if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
      o.quiet = true;
      continue;
    }
    if (strcmp(a, "--time-report") == 0) {
      o.time_report = true;
      continue;
    }
    if ((v = opt_value(argc, argv, &i, "--graph", &err))) o.graph = v;
    else if ((v = opt_value(argc, argv, &i, "--manifest", &err))) o.manifest = v;
    else if ((v = opt_value(argc, argv, &i, "--out", &err))) o.out_dir = v;
    else if ((v = opt_value(argc, argv, &i, "--dtype", &err))) o.dtype = v;
    else if ((v = opt_value(argc, argv, &i, "--calibrate", &err))) o.calibrate = v;
    else if ((v = opt_value(argc, argv, &i, "--arch", &err))) o.arch = v;
    else if ((v = opt_value(argc, argv, &i, "--dump-dir", &err))) o.dump_dir = v;
    else if ((v = opt_value(argc, argv, &i, "--layout-trace", &err))) o.layout_trace = v;
    else if ((v = opt_value(argc, argv, &i, "--bind", &err))) {
      const char *eq = strchr(v, '=');
      char *end = NULL;
      long long val = eq ? strtoll(eq + 1, &end, 10) : 0;
      if (!eq || eq == v || !end || end == eq + 1 || *end || val < 1 || val > (1LL << 40))
        return usage_error("--bind takes NAME=VALUE with VALUE an integer in [1, 2^40], not '%s'", v);
      if (o.nbind == PIPELINE_MAX_BINDS) return usage_error("at most 16 --bind options ('%s' is one more)", v);
      o.bind[o.nbind++] = v;
    }
    else if ((v = opt_value(argc, argv, &i, "--dump", &err))) {
      if (!pipeline_parse_stages(v, &o.dump)) return usage_error("unknown stage in --dump=%s", v);
    } else if ((v = opt_value(argc, argv, &i, "--until", &err))) {
      unsigned m;
      if (!pipeline_parse_stages(v, &m) || (m & (m - 1)) || !strcmp(v, "all")) return usage_error("--until takes one stage, not '%s'", v);
      o.until = __builtin_ctz(m);
    } else if ((v = opt_value(argc, argv, &i, "--diag", &err))) {
      if (strcmp(v, "json") == 0) o.diag_json = true;
      else if (strcmp(v, "text") != 0) return usage_error("--diag takes json or text, not '%s'", v);
    } else if (err) {
      return usage_error("option '%s' needs a value", a);
    } else {
      return usage_error("unknown argument '%s'", a);
    }
    if (err) return usage_error("option '%s' needs a value", a);
  }
  if (o.decompile && (!o.graph || o.manifest || o.dump || o.dump_dir || o.out_dir || o.nbind || o.until != STAGE_CU ||
                      o.calibrate))
    return usage_error("%s", "--decompile takes --graph FILE, and optionally --dtype and --diag, only");
  if (!o.graph == !o.manifest) return usage_error("%s", "give exactly one of --graph and --manifest");
  if (o.manifest && !o.out_dir) return usage_error("%s", "--manifest needs --out DIR");
  if (o.graph && o.out_dir) return usage_error("%s", "--out goes with --manifest; use --dump-dir with --graph");
  if (o.manifest && o.nbind) return usage_error("%s", "--bind goes with --graph; a manifest binds dims with variants");
  if (o.manifest && o.arch) return usage_error("%s", "--arch goes with --graph; a manifest lists its archs");
  return pipeline_main(&o);
}
