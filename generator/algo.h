/* The skeletons, by algo_choice, from one table (algo.def). */
#ifndef DLC_ALGO_H
#define DLC_ALGO_H

#include <stdbool.h>

typedef enum {
#define X(e, name, tpl, entry, params, blocks, guard, skel) e,
#include "algo.def"
#undef X
  ALGO__COUNT
} dlc_algo;

/* How a skeleton's __global__ function calls its code (algo.def). */
typedef enum { ENTRY_OP_KERNEL, ENTRY_OP_REDUCE, ENTRY_SKELETON_VEC, ENTRY_SKELETON } algo_entry;
/* Its parameter block (algo.def). */
typedef enum { PARAMS_VALUE, PARAMS_GRID, PARAMS_TMAPS } algo_params;

/* A skeleton's launch constants: algo.def's last four columns. */
typedef struct algo_launch {
  algo_entry entry;
  algo_params params;
  int min_blocks;    /* 0: the plan's estimate */
  const char *guard; /* or NULL */
} algo_launch;

/* The region patterns that key an algo_choice (pattern.def). */
typedef enum {
#define X(e, key, algo) e,
#include "pattern.def"
#undef X
  PATTERN__COUNT
} algo_pattern;

/* A pattern's algo_choice key ("matmul"), and the sm80 skeleton it pins. */
const char *pattern_key(algo_pattern p);
dlc_algo pattern_algo(algo_pattern p);

/* The skeleton an algo_choice names; false for any other name. */
bool algo_parse(const char *name, dlc_algo *out);
const char *algo_name(dlc_algo a);
/* Its template, templates/<name>.cuh without the extension. */
const char *algo_template(dlc_algo a);
const algo_launch *algo_launch_of(dlc_algo a);

#endif
