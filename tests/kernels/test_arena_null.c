/* The arena a chain's workspace is placed in (issue 37 item 3:
 * dlc__arena_place, libkernels/runtime.c), on its own and through the
 * generated entry points of the null backend's library.
 *
 *   - random chains of up to 16 values: each offset a multiple of 256, two
 *     values whose kernel intervals meet never share a byte, the workspace
 *     the end of the highest value, and at least the most bytes live at
 *     one kernel (counted here, kernel by kernel);
 *   - values live one after another share their bytes: the workspace of a
 *     line of equal values, each read by the next kernel, is two of them;
 *   - the placement is a function of its arguments, and it is recorded as
 *     the thread's last arena;
 *   - a negative size, DLC__OVF, a sum that overflows, or more than 16
 *     values give DLC__OVF;
 * (test_every_kernel checks every chain of every manifest in the emulator:
 * each call's arena within 1.1x the live-set bound, and each value
 * poisoned once read last.) */
#include "kt_null.h"

static uint64_t rng = 88172645463325252u;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

static bool meet(const signed char *b, const signed char *d, int i, int j) { return b[i] <= d[j] && b[j] <= d[i]; }

/* one random chain: n values over nk kernels, sizes up to `big` bytes */
static void random_case(int n, int nk, int64_t big, int64_t *worst_ratio_x1000) {
  int64_t bytes[16], off[16];
  signed char born[16], dies[16];
  for (int i = 0; i < n; i++) {
    bytes[i] = (int64_t)(next() % (uint64_t)big);
    born[i] = (signed char)(next() % (uint64_t)nk);
    dies[i] = (signed char)(born[i] + (int)(next() % (uint64_t)(nk - born[i])));
  }
  int64_t ws = dlc__arena_place(n, bytes, born, dies, off);
  CHECK(ws >= 0);
  int64_t end = 0, lower = 0;
  for (int i = 0; i < n; i++) {
    const int64_t b = (bytes[i] + 255) / 256 * 256;
    CHECK(off[i] % 256 == 0 && off[i] >= 0);
    if (off[i] + b > end) end = off[i] + b;
    for (int j = 0; j < i; j++) {
      const int64_t bj = (bytes[j] + 255) / 256 * 256;
      if (meet(born, dies, i, j) && b > 0 && bj > 0) CHECK(off[i] + b <= off[j] || off[j] + bj <= off[i]);
    }
  }
  for (int t = 0; t < nk; t++) {
    int64_t live = 0;
    for (int i = 0; i < n; i++)
      if (born[i] <= t && t <= dies[i]) live += (bytes[i] + 255) / 256 * 256;
    if (live > lower) lower = live;
  }
  CHECK(ws == end);
  CHECK(ws >= lower);
  const dlc__arena_rec *r = dlc__last_arena();
  CHECK(r->n == n && r->peak == ws && r->lower == lower);
  for (int i = 0; i < n; i++) CHECK(r->off[i] == off[i] && r->born[i] == born[i] && r->dies[i] == dies[i]);
  int64_t again[16];
  CHECK(dlc__arena_place(n, bytes, born, dies, again) == ws);
  for (int i = 0; i < n; i++) CHECK(again[i] == off[i]);
  if (lower > 0 && ws * 1000 / lower > *worst_ratio_x1000) *worst_ratio_x1000 = ws * 1000 / lower;
}

int main(void) {
  int64_t worst = 0;
  for (int c = 0; c < 20000; c++) random_case(1 + (int)(next() % 16), 1 + (int)(next() % 12), c % 2 ? 1 << 20 : 4096, &worst);
  printf("random chains: the workspace at most %.3fx the live-set bound\n", (double)worst / 1000);

  /* a line: value i written by kernel i, read by kernel i + 1 */
  int64_t bytes[16], off[16];
  signed char born[16], dies[16];
  for (int i = 0; i < 12; i++) bytes[i] = 1000, born[i] = (signed char)i, dies[i] = (signed char)(i + 1);
  CHECK(dlc__arena_place(12, bytes, born, dies, off) == 2 * 1024);
  CHECK(dlc__last_arena()->lower == 2 * 1024);
  /* all live at once: one after another */
  for (int i = 0; i < 4; i++) born[i] = 0, dies[i] = 3;
  CHECK(dlc__arena_place(4, bytes, born, dies, off) == 4 * 1024);
  /* empty values take no bytes */
  bytes[0] = 0, bytes[1] = 0;
  CHECK(dlc__arena_place(2, bytes, born, dies, off) == 0);
  CHECK(dlc__arena_place(0, bytes, born, dies, off) == 0);

  /* what the entry points pass when a size overflowed, and nonsense */
  born[0] = born[1] = 0, dies[0] = dies[1] = 1;
  bytes[0] = 256, bytes[1] = DLC__OVF;
  CHECK(dlc__arena_place(2, bytes, born, dies, off) == DLC__OVF);
  bytes[1] = -1;
  CHECK(dlc__arena_place(2, bytes, born, dies, off) == DLC__OVF);
  bytes[0] = INT64_MAX - 100, bytes[1] = INT64_MAX - 100;
  CHECK(dlc__arena_place(2, bytes, born, dies, off) == DLC__OVF);
  bytes[0] = INT64_MAX; /* rounding up to 256 overflows */
  CHECK(dlc__arena_place(1, bytes, born, dies, off) == DLC__OVF);
  CHECK(dlc__arena_place(17, bytes, born, dies, off) == DLC__OVF);
  CHECK(dlc__arena_place(-1, bytes, born, dies, off) == DLC__OVF);

  if (fails) fprintf(stderr, "%d checks failed\n", fails);
  return fails != 0;
}
