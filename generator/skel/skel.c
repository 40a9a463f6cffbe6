/* The skeletons' tables, in algo.def order (see skel.h). */
#include "skel.h"

#include <stddef.h>

static const skel_ops *const SKELS[ALGO__COUNT] = {
#define X(e, name, tpl, entry, params, blocks, guard, skel) [e] = &skel,
#include "algo.def"
#undef X
};

const skel_ops *skel_of(dlc_algo a) { return a >= 0 && a < ALGO__COUNT ? SKELS[a] : NULL; }

skel_shape skel_shape_of(const gpu_kernel *k) { return SKELS[k->algo]->shape; }
