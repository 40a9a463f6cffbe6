/* The algos of algo.def (the skeletons' names, templates and launch
 * constants) and their lookups. */
#include "algo.h"

#include <string.h>

static const struct {
  const char *name, *tpl;
  algo_launch launch;
} ALGO_ROWS[] = {
#define X(e, name, tpl, entry, params, blocks, guard, skel) {name, tpl, {entry, params, blocks, guard}},
#include "algo.def"
#undef X
};

bool algo_parse(const char *name, dlc_algo *out) {
  if (!name) return false;
  for (int i = 0; i < ALGO__COUNT; i++)
    if (strcmp(ALGO_ROWS[i].name, name) == 0) {
      *out = (dlc_algo)i;
      return true;
    }
  return false;
}

const char *algo_name(dlc_algo a) { return ALGO_ROWS[a].name; }
const char *algo_template(dlc_algo a) { return ALGO_ROWS[a].tpl; }
const algo_launch *algo_launch_of(dlc_algo a) { return &ALGO_ROWS[a].launch; }

static const struct {
  const char *key;
  dlc_algo algo;
} PATTERN_ROWS[] = {
#define X(e, key, algo) {key, algo},
#include "pattern.def"
#undef X
};

const char *pattern_key(algo_pattern p) { return PATTERN_ROWS[p].key; }
dlc_algo pattern_algo(algo_pattern p) { return PATTERN_ROWS[p].algo; }
