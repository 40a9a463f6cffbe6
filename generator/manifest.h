/* Manifest reader (schema "dlc-manifest/1", docs/manifest.md).
 *
 * A manifest lists the archs to build for and the ops; each op names a
 * graph (inline, or a path relative to the manifest), the dtypes that
 * instantiate its T, its plans ("auto" or pinned plan objects, spec §8),
 * and optionally `variants` (allowed values of runtime attrs such as stride,
 * and of compile-time dims such as D) and `shape_sets`.  Reading is strict:
 * unknown or misspelled keys are diagnostics. */
#ifndef DLC_MANIFEST_H
#define DLC_MANIFEST_H

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "dtype.h"

typedef struct mf_variant_key {
  const char *name;      /* "stride", "pad", "dilation" or a dim symbol */
  bool is_dim;
  int nvalues;
  cJSON **values;        /* each an int or an int pair (owned by the manifest's JSON) */
} mf_variant_key;

typedef struct mf_shape_set {
  const char *name;
  int nbounds;
  const char **dim;
  int64_t *lo, *hi;
} mf_shape_set;

typedef struct mf_op {
  const char *name;
  const char *at;        /* "manifest.ops[0]" */
  cJSON *graph;          /* the graph JSON (owned by the manifest) */
  const char *graph_where; /* path or "manifest.ops[0].graph" */
  const char *graph_ref;   /* as the manifest writes it: a relative path, or "(inline)" */
  const struct dsl_srcmap *srcmap; /* DSL positions of a .dlc graph (dsl_locate), else NULL */
  int ndtypes;
  dtype *dtypes;
  bool plans_auto;
  int nplans;
  cJSON **plans;         /* pinned plan objects */
  int nvkeys;
  mf_variant_key *vkeys;
  int nshape_sets;
  mf_shape_set *shape_sets;
  bool math_ieee;        /* "math": "ieee": the epilogue's exp2, log2, recip,
                            sqrt and division round as IEEE (default "approx":
                            the PTX .approx.ftz forms, docs/manifest.md) */
  bool no_fusion;        /* "fusion": "off": a chain keeps every region's kernel,
                            each value between them in the workspace (default
                            "auto": fuse where Poly Core says it is legal) */
} mf_op;

typedef struct manifest {
  arena *A;
  const char *path;
  cJSON *root;           /* owns every cJSON above */
  cJSON *graphs;         /* array owning graphs read from files */
  int narchs;
  const char **archs;
  int nops;
  mf_op *ops;
  const cJSON *layout;   /* the "layout" options (layout_opts_read), or NULL */
  uint64_t text_hash;    /* FNV-1a (64-bit) of the manifest's bytes: the library's dlc_build_info() */
} manifest;

/* One instance of an op: dtype x one value per variant key. */
typedef struct mf_instance {
  const mf_op *op;
  dtype dt;
  cJSON *attr_values;    /* {"stride":[2,2],...}: owned, free with cJSON_Delete */
  cJSON *dim_values;     /* {"D":64}: owned */
  const char *tag;       /* "fp16", "fp16.stride2x2.pad1x1", "bf16.D128" */
} mf_instance;

manifest *mf_read(arena *A, const char *path, diag_list *dl);
/* The same for a manifest already in memory; `path` names it and anchors
 * its relative graph paths. */
manifest *mf_read_text(arena *A, const char *text, const char *path, diag_list *dl);
void mf_free(manifest *m);
/* All instances of an op, in a deterministic order. */
int mf_instances(arena *A, const mf_op *op, mf_instance **out);
void mf_instances_free(mf_instance *v, int n);
bool mf_arch_known(const char *arch);

#endif
