/* The textual graph DSL (seed 003; docs/dsl.md).
 *
 * A `.dlc` file is a second spelling of the graph format of
 * docs/graph-format.md:
 *
 *   graph<M, N, K> main(A: T[M, K], B: T[K, N], bias: T[N] param) -> (C: T[M, N]) {
 *     C0 = GEMM(A, B, acc_dtype=f32)
 *     C = relu(add(C0, bias))
 *     return C
 *   }
 *
 * dsl_parse() turns the text into the graph JSON object that fe_read_json()
 * reads, with every subgraph call inlined into `main`; the stages after the
 * front end never learn that a graph was written in the DSL.  A source map
 * takes the JSON paths that diagnostics name ("graph[2].attrs.pad") back to
 * DSL lines and columns.  dsl_decompile() prints any graph as DSL. */
#ifndef DLC_DSL_H
#define DLC_DSL_H

#include <cJSON.h>
#include <stdbool.h>

#include "arena.h"
#include "diag.h"
#include "frontend.h"

/* Subgraph calls nest at most this deep (main is depth 0). */
#define DSL_MAX_DEPTH 10

typedef struct dsl_srcmap dsl_srcmap;

/* Parses DSL text into a graph JSON object (the caller deletes it).  `file`
 * names the source in diagnostics, and its base name without `.dlc` names the
 * graph.  *map (when map is not NULL) receives the source map, in A.
 * Returns NULL with diagnostics on any error. */
cJSON *dsl_parse(arena *A, const char *text, const char *file, dsl_srcmap **map, diag_list *dl);
/* Points the diagnostics [from, dl->n) that name a JSON path of the graph at
 * its DSL position: at becomes "file.dlc:LINE:COL (path)".  map may be NULL. */
void dsl_locate(const dsl_srcmap *map, diag_list *dl, int from);
/* True when `path` names a DSL file (it ends in ".dlc"). */
bool dsl_is_dsl_path(const char *path);
/* Reads a graph file: DSL when dsl_is_dsl_path(), JSON otherwise.  `at` names
 * the reference in diagnostics about the file itself.  *map (may be NULL) is
 * set for DSL files and NULL for JSON. */
cJSON *dsl_read_graph_file(arena *A, const char *path, const char *at, dsl_srcmap **map, diag_list *dl);
/* The same for text in memory, which `path` names. */
cJSON *dsl_parse_graph_text(arena *A, const char *text, const char *path, dsl_srcmap **map, diag_list *dl);
/* Prints a graph as one `graph main` (malloc'ed text).  `graph` is the JSON
 * object that fe_read_json() read as `g`: the text keeps T, runtime attrs and
 * sizes as the JSON spells them, in g's node order.  Returns NULL with
 * diagnostics when a name cannot be spelled in the DSL. */
char *dsl_decompile(const cJSON *graph, const fe_graph *g, diag_list *dl);

#endif
