/* GPU IR's shared-layout verifier (gpuir_verify_smem): the 16-byte chunks
 * of a swizzled shared row stay in their row and never share a place, the
 * tiles stay apart and inside the block's shared memory, and
 * gpuir_swizzle_width picks a width that passes for every row length a
 * plan can ask for. */
#include <stdlib.h>

#include "check.h"
#include "gpuir.h"

static gpu_kernel one_tile(int rows, int row_elems, int swz) {
  gpu_kernel k;
  memset(&k, 0, sizeof k);
  k.nvec = 1, k.vecs[0] = 8;
  k.tiles[0] = (gpu_smem_tile){"smK", 0, 2, rows, row_elems, 2, swz};
  k.ntiles = 1;
  k.smem = 2 * rows * row_elems * 2;
  return k;
}

static bool verifies(const gpu_kernel *k, const char *why) {
  diag_list dl;
  diag_init(&dl);
  bool ok = gpuir_verify_smem(k, &dl);
  CHECK(ok == !diag_has_errors(&dl));
  if (!ok && why) {
    bool found = false;
    for (int i = 0; i < dl.n; i++) found |= dl.items[i].why && strstr(dl.items[i].why, why) != NULL;
    CHECK(found);
  }
  diag_free(&dl);
  return ok;
}

int main(void) {
  /* the layout attention had at head dim 80 and 96 (xor 8 over rows of 10
   * and 12 chunks): chunk 8 of row 7 went to chunk 15 */
  gpu_kernel k = one_tile(64, 80, 8);
  CHECK(!verifies(&k, "outside its row"));
  k = one_tile(64, 96, 8);
  CHECK(!verifies(&k, "outside its row"));
  /* xor 6 over rows of 6 chunks (head dim 48) */
  k = one_tile(64, 48, 6);
  CHECK(!verifies(&k, "repeat every 8 rows"));
  /* the widths gpuir_swizzle_width picks pass, for every row of whole
   * 16-byte chunks up to 4096 two-byte elements */
  for (int l = 8; l <= 4096; l += 8) {
    int w = gpuir_swizzle_width(l * 2);
    CHECK(w >= 1 && w <= 8 && (l / 8) % w == 0);
    k = one_tile(16, l, w);
    CHECK(verifies(&k, NULL));
  }
  CHECK(gpuir_swizzle_width(160) == 2 && gpuir_swizzle_width(192) == 4 && gpuir_swizzle_width(256) == 8 &&
        gpuir_swizzle_width(512) == 8 && gpuir_swizzle_width(24) == 0);
  /* rows that are not whole chunks */
  k = one_tile(64, 36, 1);
  CHECK(!verifies(&k, "not whole 16-byte chunks"));
  /* chunks wider than the row divides */
  k = one_tile(64, 80, 2);
  k.vecs[0] = 16;
  CHECK(!verifies(&k, "do not divide"));
  /* two tiles that overlap, and a tile past the block's shared memory */
  k = one_tile(64, 64, 8);
  k.tiles[1] = (gpu_smem_tile){"smV", 64 * 64 * 2, 2, 64, 64, 2, 8};
  k.ntiles = 2;
  k.smem = 4 * 64 * 64 * 2;
  CHECK(!verifies(&k, "overlap"));
  k.tiles[1].offset = 2 * 64 * 64 * 2;
  CHECK(verifies(&k, NULL));
  k.smem -= 16;
  CHECK(!verifies(&k, "outside the block"));
  return check_status("test_gpuir");
}
