/* The pipeline driver: runs the stages in spec order (as QBE's main lists
 * its passes), verifying after each and dumping what was asked for. */
#ifndef DLC_PIPELINE_H
#define DLC_PIPELINE_H

#include <stdbool.h>

#include "layout.h"

/* Stages that can be dumped, in pipeline order. */
#define DLC_STAGES(X) \
  X(STAGE_FRONTEND, "frontend") \
  X(STAGE_LAYOUT, "layout") \
  X(STAGE_TINY, "tiny") \
  X(STAGE_INDEXBOOK, "indexbook") \
  X(STAGE_POLY_VIEW, "poly_view") \
  X(STAGE_REGION, "region") \
  X(STAGE_ANALYSIS, "analysis") \
  X(STAGE_PLAN, "plan") \
  X(STAGE_GPU, "gpu") \
  X(STAGE_ARENA, "arena") \
  X(STAGE_CONSTPOOL, "constpool") \
  X(STAGE_CU, "cu")

typedef enum {
#define X(e, name) e,
  DLC_STAGES(X)
#undef X
  STAGE__COUNT
} dlc_stage;

#define PIPELINE_MAX_BINDS 16

typedef struct pipeline_opts {
  const char *graph, *manifest, *out_dir, *dump_dir, *dtype;
  unsigned dump; /* bit per dlc_stage */
  int until;     /* last stage to run (--until); STAGE_CU by default */
  bool diag_json, quiet;
  bool time_report; /* --time-report: each stage's wall time on stderr */
  bool decompile; /* --decompile: print the --graph as DSL */
  int nbind;            /* --bind NAME=VALUE (graph mode): compile-time dims,
                         * checked by the driver; the argv strings */
  const char *bind[PIPELINE_MAX_BINDS];
  const char *calibrate; /* --calibrate FILE.csv: measured times that re-rank plans, or NULL */
  const char *arch;      /* --arch LIST (--graph): comma-separated archs, or NULL for sm80 */
  /* In memory (the libFuzzer target, tests/fuzz/libfuzzer): with `text`, the
   * --graph or --manifest file is not read but has this content (the path
   * still names it, picks JSON or DSL, and anchors the manifest's relative
   * graph paths); with `sink`, every output is handed to it instead of
   * written, and no file is touched; with `diags`, the diagnostics are moved
   * there instead of printed. */
  /* the layout pass (seed 004): --no-layout, --layout-trace FILE; a
   * manifest's "layout" object overrides these */
  bool no_layout;
  const char *layout_trace;
  const char *text;
  void (*sink)(void *ctx, const char *path, const char *text);
  void *sink_ctx;
  struct diag_list *diags;
} pipeline_opts;

bool pipeline_parse_stages(const char *list, unsigned *mask);
/* Runs the whole command; returns the process exit status. */
int pipeline_main(const pipeline_opts *o);

#endif
