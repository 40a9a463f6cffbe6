/* The skeletons, by algo_choice, from one table (algo.def). */
#ifndef DLC_ALGO_H
#define DLC_ALGO_H

#include <stdbool.h>

typedef enum {
#define X(e, name, tpl) e,
#include "algo.def"
#undef X
  ALGO__COUNT
} dlc_algo;

/* The skeleton an algo_choice names; false for any other name. */
bool algo_parse(const char *name, dlc_algo *out);
const char *algo_name(dlc_algo a);
/* Its template, templates/<name>.cuh without the extension. */
const char *algo_template(dlc_algo a);

#endif
