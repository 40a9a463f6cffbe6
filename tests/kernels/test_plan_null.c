/* The plan API of every op of the default manifest (issue 37 items 1, 2
 * and 5; docs/runtime.md), through the entry table and the null backend's
 * library (every check and the kernel choice of the real entry points, a
 * launch that only records it):
 *
 *   - plan_run launches what the per-call dlc_<op>_ws launches with the
 *     same arguments (the same status, as many kernels, the same last row
 *     and grid), and plan_workspace_size is dlc_<op>_workspace_size;
 *   - the ConstPool: each param at a multiple of 256 bytes, packed, in
 *     order, of the bytes its shape needs;
 *   - hostile arguments to every plan function return their status, leave
 *     *plan as it was, and launch nothing: a NULL plan pointer, a dtype
 *     outside the enum, a negative fixed dim, a NULL, misaligned or short
 *     param, a NULL, forged, foreign (another op's) or destroyed handle, a
 *     negative runtime dim;
 *   - a plan destroyed twice, or used after destroy, is an error and no
 *     crash, and a new plan never revives a stale handle;
 *   - plans from 8 threads at once, and a thousand plans alive at once.
 * (The emulator's test_every_kernel runs every instance of every manifest
 * through a plan and compares its outputs bit for bit with the per-call
 * entry's.) */
#include <pthread.h>
#include <stdlib.h>

#include "dlc_entries.h"
#include "kt_null.h"

enum { MAXA = 64 };

/* A call of the op's first instance: dims from its test extents, tensors at
 * fake addresses 2^40 apart, leading dims of 2^16. */
static void args_of(const dlc__entry *e, dlc__arg_value *a) {
  const dlc__entry_instance *in = &e->inst[0];
  for (int i = 0; i < e->nargs && i < MAXA; i++) {
    switch (e->args[i].role) {
    case DLC__ARG_DIM: a[i].i = in->extent && in->extent[i] ? in->extent[i] : 16; break;
    case DLC__ARG_ATTR: a[i].i = 1; break;
    case DLC__ARG_INPUT:
    case DLC__ARG_OUTPUT: a[i].p = fake(((uintptr_t)i + 1) << 40); break;
    case DLC__ARG_LD: a[i].i = 1 << 16; break;
    }
  }
  for (int f = 0; f < in->nfixed; f++) a[in->fixed[f].arg].i = in->fixed[f].value;
}

static long launches(void) { return dlc__last_launch()->count; }

/* The per-call entry and the plan with the same arguments launch the same. */
static void same_launches(const dlc__entry *e, const dlc__arg_value *a) {
  dlc_dtype dt = e->inst[0].dtype;
  size_t ws = e->workspace_size(dt, a);
  void *w = ws ? fake((uintptr_t)62 << 40) : NULL;
  long c0 = launches();
  dlc_status s1 = e->call_ws(dt, a, w, ws, NULL);
  long n1 = launches() - c0;
  dlc__launch_rec r1 = *dlc__last_launch();
  void *p = NULL;
  dlc_status cs = e->plan_create(&p, dt, a, NULL);
  CHECK(cs == DLC_SUCCESS && p != NULL);
  if (cs != DLC_SUCCESS) {
    fprintf(stderr, "  %s: plan_create: %s: %s\n", e->op, dlc_status_string(cs), dlc_last_error_detail());
    return;
  }
  CHECK(e->plan_workspace_size(p, a) == ws);
  for (int rep = 0; rep < 2; rep++) { /* the second run: a CUDA backend's replay */
    c0 = launches();
    dlc_status s2 = e->plan_run(p, a, w, ws, NULL);
    long n2 = launches() - c0;
    const dlc__launch_rec *r2 = dlc__last_launch();
    CHECK(s2 == s1);
    CHECK(n2 == n1);
    if (n1 && n2)
      CHECK(r2->kernel == r1.kernel && !memcmp(r2->grid, r1.grid, sizeof r1.grid));
    if (s2 != s1 || n2 != n1)
      fprintf(stderr, "  %s: per call %s (%ld launches), plan %s (%ld): %s\n", e->op, dlc_status_string(s1), n1,
              dlc_status_string(s2), n2, dlc_last_error_detail());
  }
  /* the ConstPool: packed params at multiples of 256 bytes */
  const dlc__plan *pl = dlc__plan_peek(p);
  CHECK(pl && pl->npool == e->npool);
  for (int i = 0; pl && i < pl->npool; i++) {
    CHECK(pl->off[i] % DLC__POOL_ALIGN == 0);
    CHECK(pl->bytes[i] > 0);
    if (i) CHECK(pl->off[i] >= pl->off[i - 1] + pl->bytes[i - 1]);
    CHECK((size_t)(pl->off[i] + pl->bytes[i]) <= pl->pool_bytes);
    CHECK(pl->pool && (uintptr_t)pl->pool % DLC__POOL_ALIGN == 0);
  }
  e->plan_destroy(p);
}

/* A hostile call: its status, *plan untouched, nothing launched. */
static void hostile_create(const dlc__entry *e, const char *what, dlc_dtype dt, const dlc__arg_value *a, dlc_status want) {
  void *p = fake(0x5a5a0);
  long c0 = launches();
  dlc_status s = e->plan_create(&p, dt, a, NULL);
  CHECK(s == want);
  CHECK(p == fake(0x5a5a0));
  CHECK(launches() == c0);
  CHECK(s == DLC_SUCCESS || *dlc_last_error_detail());
  if (s != want) fprintf(stderr, "  %s plan_create %s: %s, wanted %s\n", e->op, what, dlc_status_string(s), dlc_status_string(want));
  if (s == DLC_SUCCESS) e->plan_destroy(p);
}

static void hostile_run(const dlc__entry *e, const char *what, void *p, const dlc__arg_value *a, dlc_status want,
                        const char *needle) {
  long c0 = launches();
  dlc_status s = e->plan_run(p, a, NULL, 0, NULL);
  CHECK(s == want);
  CHECK(launches() == c0);
  if (needle) CHECK(strstr(dlc_last_error_detail(), needle) != NULL);
  if (s != want || (needle && !strstr(dlc_last_error_detail(), needle)))
    fprintf(stderr, "  %s plan_run %s: %s: %s\n", e->op, what, dlc_status_string(s), dlc_last_error_detail());
}

static void hostile(const dlc__entry *e, const dlc__entry *other, const dlc__arg_value *a0) {
  dlc_dtype dt = e->inst[0].dtype;
  dlc__arg_value a[MAXA];
  memcpy(a, a0, sizeof a);
  /* plan_create */
  CHECK(e->plan_create(NULL, dt, a, NULL) == DLC_ERROR_INVALID_VALUE);
  hostile_create(e, "dtype 99", (dlc_dtype)99, a, DLC_ERROR_INVALID_VALUE);
  hostile_create(e, "dtype -1", (dlc_dtype)-1, a, DLC_ERROR_INVALID_VALUE);
  for (int i = 0; i < e->nargs; i++) {
    if (!e->plan_args[i]) continue;
    memcpy(a, a0, sizeof a);
    switch (e->args[i].role) {
    case DLC__ARG_DIM:
      a[i].i = -1, hostile_create(e, e->args[i].name, dt, a, DLC_ERROR_INVALID_VALUE);
      a[i].i = INT64_MIN, hostile_create(e, e->args[i].name, dt, a, DLC_ERROR_INVALID_VALUE);
      break;
    case DLC__ARG_INPUT:
      a[i].p = NULL, hostile_create(e, e->args[i].name, dt, a, DLC_ERROR_INVALID_VALUE);
      a[i].p = (char *)a0[i].p + 1, hostile_create(e, e->args[i].name, dt, a, DLC_ERROR_MISALIGNED);
      a[i].p = fake(UINTPTR_MAX - 7), hostile_create(e, e->args[i].name, dt, a, DLC_ERROR_INVALID_VALUE);
      break;
    case DLC__ARG_LD:
      a[i].i = 0, hostile_create(e, e->args[i].name, dt, a, DLC_ERROR_INVALID_VALUE);
      a[i].i = INT64_MAX, hostile_create(e, e->args[i].name, dt, a, DLC_ERROR_INVALID_VALUE);
      break;
    default: break;
    }
  }
  /* plan_run */
  memcpy(a, a0, sizeof a);
  void *p = NULL, *q = NULL;
  CHECK(e->plan_create(&p, dt, a, NULL) == DLC_SUCCESS);
  CHECK(other->plan_create(&q, other->inst[0].dtype, a, NULL) == DLC_SUCCESS || q == NULL);
  int local = 0;
  hostile_run(e, "NULL", NULL, a, DLC_ERROR_INVALID_VALUE, "plan is NULL");
  hostile_run(e, "forged 8", fake(8), a, DLC_ERROR_INVALID_VALUE, "not a live plan");
  hostile_run(e, "forged 0x1238", fake(0x1238), a, DLC_ERROR_INVALID_VALUE, "not a live plan");
  hostile_run(e, "an address", &local, a, DLC_ERROR_INVALID_VALUE, "not a live plan");
  hostile_run(e, "a slot never used", fake((uintptr_t)p + 16 * 100000), a, DLC_ERROR_INVALID_VALUE, "not a live plan");
  hostile_run(e, "the next generation", fake((uintptr_t)p + ((uintptr_t)2 << 28)), a, DLC_ERROR_INVALID_VALUE,
              "not a live plan");
  if (q && other != e) hostile_run(e, "another op's", q, a, DLC_ERROR_INVALID_VALUE, "another op's plan");
  for (int i = 0; i < e->nargs; i++) {
    if (e->plan_args[i] || e->args[i].role != DLC__ARG_DIM) continue;
    memcpy(a, a0, sizeof a);
    a[i].i = -1;
    hostile_run(e, e->args[i].name, p, a, DLC_ERROR_INVALID_VALUE, NULL);
  }
  memcpy(a, a0, sizeof a);
  /* destroyed: an error, twice no crash, never revived */
  e->plan_destroy(p);
  hostile_run(e, "destroyed", p, a, DLC_ERROR_INVALID_VALUE, "not a live plan");
  CHECK(e->plan_workspace_size(p, a) == 0);
  e->plan_destroy(p);
  e->plan_destroy(NULL);
  e->plan_destroy(fake(8));
  void *r = NULL;
  CHECK(e->plan_create(&r, dt, a, NULL) == DLC_SUCCESS);
  CHECK(r != p);
  hostile_run(e, "destroyed, slot taken again", p, a, DLC_ERROR_INVALID_VALUE, "not a live plan");
  CHECK(dlc__plan_peek(r) != NULL && dlc__plan_peek(p) == NULL);
  e->plan_destroy(r);
  if (q) other->plan_destroy(q);
}

/* ---- threads, and many plans ------------------------------------------------------------ */

static const dlc__entry *thr_e;
static dlc__arg_value thr_a[MAXA];
static int thr_fails[8];

static void *thread_main(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int k = 0; k < 200; k++) {
    void *p = NULL;
    if (thr_e->plan_create(&p, thr_e->inst[0].dtype, thr_a, NULL) != DLC_SUCCESS) {
      thr_fails[t]++;
      continue;
    }
    size_t ws = thr_e->plan_workspace_size(p, thr_a);
    if (thr_e->plan_run(p, thr_a, ws ? fake((uintptr_t)62 << 40) : NULL, ws, NULL) != DLC_SUCCESS) thr_fails[t]++;
    thr_e->plan_destroy(p);
    if (thr_e->plan_run(p, thr_a, NULL, 0, NULL) != DLC_ERROR_INVALID_VALUE) thr_fails[t]++;
  }
  return NULL;
}

static void many(const dlc__entry *e, const dlc__arg_value *a) {
  enum { N = 1000 };
  static void *p[N];
  int made = 0;
  for (int i = 0; i < N; i++) made += e->plan_create(&p[i], e->inst[0].dtype, a, NULL) == DLC_SUCCESS;
  CHECK(made == N);
  for (int i = 0; i < N; i++)
    for (int j = i + 1; j < N && j < i + 3; j++) CHECK(p[i] != p[j]);
  /* destroyed in a shuffled order, each then stale */
  uint64_t x = 12345;
  for (int i = N - 1; i > 0; i--) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int j = (int)(x % (uint64_t)(i + 1));
    void *t = p[i];
    p[i] = p[j], p[j] = t;
  }
  for (int i = 0; i < N; i++) {
    e->plan_destroy(p[i]);
    CHECK(dlc__plan_peek(p[i]) == NULL);
    if (i + 1 < N) CHECK(dlc__plan_peek(p[N - 1]) != NULL);
  }
}

int main(void) {
  int covered = 0;
  for (int o = 0; o < dlc__nentries; o++) {
    const dlc__entry *e = &dlc__entries[o];
    dlc__arg_value a[MAXA] = {{0}};
    if (e->nargs > MAXA) {
      fprintf(stderr, "%s: %d arguments\n", e->op, e->nargs);
      fails++;
      continue;
    }
    args_of(e, a);
    same_launches(e, a);
    hostile(e, &dlc__entries[(o + 1) % dlc__nentries], a);
    covered++;
    int at_create = 0;
    for (int i = 0; i < e->nargs; i++) at_create += e->plan_args[i];
    printf("%-20s plan: %d params in the ConstPool, %d of %d arguments to plan_create\n", e->op, e->npool, at_create,
           e->nargs);
    if (o == 0) {
      many(e, a);
      thr_e = e;
      memcpy(thr_a, a, sizeof thr_a);
      pthread_t th[8];
      for (int t = 0; t < 8; t++) CHECK(pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) == 0);
      for (int t = 0; t < 8; t++) {
        pthread_join(th[t], NULL);
        CHECK(thr_fails[t] == 0);
      }
    }
  }
  CHECK(covered == dlc__nentries && covered > 0);
  int pooled = 0;
  for (int o = 0; o < dlc__nentries; o++) pooled += dlc__entries[o].npool;
  CHECK(pooled > 0); /* the default manifest's biases, gammas and betas */
  if (fails) fprintf(stderr, "%d checks failed\n", fails);
  return fails != 0;
}
