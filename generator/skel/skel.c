/* The skeletons' tables, in algo.def order (see skel.h). */
#include "skel.h"

#include <stddef.h>

static const skel_ops *const SKELS[ALGO__COUNT] = {
#define X(e, name, tpl, entry, params, blocks, guard, skel) [e] = &skel,
#include "algo.def"
#undef X
};

const skel_ops *skel_of(dlc_algo a) { return a >= 0 && a < ALGO__COUNT ? SKELS[a] : NULL; }

skel_shape skel_shape_of(const gpu_kernel *k) {
  const skel_ops *sk = skel_of(k->algo);
  DLC_ASSERT(sk); /* every builder sets an algo of algo.def; gpuir_verify rejects others */
  return sk->shape;
}
