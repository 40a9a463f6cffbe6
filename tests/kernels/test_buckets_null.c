/* The shape buckets of the default manifest's GEMMs, through the real entry
 * points on the null backend (libdlckernels-null: every check and the table
 * lookup, a launch that only records):
 *
 *   - decode GEMMs, M = 1..16 with N = K = 4096, launch at least one CTA per
 *     SM of an A100 (108) and an H100 (132);
 *   - each bucket's plan, pinned: M <= 16 takes the m1_16 kernels (16x16
 *     tiles), 17..128 the m17_128 kernels (64x64), anything larger the
 *     default 128x128 ones (docs/plan.md, Shape buckets), for both layouts
 *     and dtypes.  A change of the model that moves a bucket fails here;
 *   - the skinny bucket (docs/plan.md, Split-K): its slices, chosen per call
 *     so that the CTAs cover the SMs, its workspace size, its two launches
 *     through dlc_<op>_ws, and its unsplit twin without one;
 *   - the N bucket n1_64 (GEMM-N <= 64, planned with M grown as N shrank):
 *     the convolution with K <= 64 output channels (its M, N P Q, is a
 *     product) takes 128x64 tiles, not the default 128x128 ones that throw
 *     half of each B tile away, for both strides and dtypes; a GEMM with
 *     N <= 64 takes it too unless an M bucket (M <= 128) comes first;
 *   - the small-output bucket `small` of an M group that is a product
 *     (conv's N P Q <= 2048, bound on the product the dispatcher computes,
 *     and K <= 512): 64x64 tiles, so that ResNet-50's 7x7 layers (32x7x7x512
 *     -> 512, and 32x14x14x512 -> 512 stride 2: N P Q = 1568) launch at
 *     least a CTA per SM of an A100 and an H100, where the default 128x128
 *     tiles launch 52; it comes before n1_64;
 *   - on an sm90a device (the null backend playing one: dlc__null_arch),
 *     the n1_64 bucket runs its own sm90a kernel (tma_wgmma for the GEMMs,
 *     cp_async_wgmma for the convolution: 128x64 tiles), the default
 *     instance its 128x128 one, and the other buckets (m1_16, m17_128,
 *     skinny), which the sm90a row's bucket STOP rules leave without one
 *     (docs/plan.md, Shape buckets), their sm80 kernels. */
#include "kt_null.h"

static dlc_status call(int nt, dlc_dtype dt, int64_t M, int64_t N, int64_t K) {
  return nt ? dlc_gemm_bias_relu_nt(dt, M, N, K, fake(0x10000000), K, fake(0x20000000), K, fake(0x30000000),
                                    fake(0x40000000), N, NULL)
            : dlc_gemm_bias_relu(dt, M, N, K, fake(0x10000000), K, fake(0x20000000), N, fake(0x30000000),
                                 fake(0x40000000), N, NULL);
}

int main(void) {
  static const struct {
    int64_t lo, hi;
    int bm, bn;
    const char *tag; /* in the kernel name */
  } buckets[] = {{1, 16, 16, 16, "_b2_"}, {17, 128, 64, 64, "_b3_"}, {129, 5000, 128, 128, NULL}};
  static const int64_t Ms[] = {1, 2, 7, 16, 17, 64, 100, 128, 129, 1000, 4096};
  for (int nt = 0; nt < 2; nt++)
    for (int d = 0; d < 2; d++) {
      dlc_dtype dt = d ? DLC_BF16 : DLC_F16;
      for (size_t i = 0; i < sizeof Ms / sizeof *Ms; i++) {
        int64_t M = Ms[i], N = 4096, K = 4096;
        dlc_status st = call(nt, dt, M, N, K);
        const dlc__launch_rec *l = dlc__last_launch();
        CHECK(st == DLC_SUCCESS);
        if (st != DLC_SUCCESS) {
          fprintf(stderr, "M=%lld: %s: %s\n", (long long)M, dlc_status_string(st), dlc_last_error_detail());
          continue;
        }
        int64_t ctas = (int64_t)l->grid[0] * l->grid[1] * l->grid[2];
        for (size_t b = 0; b < sizeof buckets / sizeof *buckets; b++) {
          if (M < buckets[b].lo || M > buckets[b].hi) continue;
          bool named = buckets[b].tag ? strstr(l->kernel->name, buckets[b].tag) != NULL
                                      : !strstr(l->kernel->name, "16_b"); /* fp16_b<i>, bf16_b<i>: a bucket */
          CHECK(named);
          CHECK(ctas == cdiv(M, buckets[b].bm) * cdiv(N, buckets[b].bn));
          if (!named || ctas != cdiv(M, buckets[b].bm) * cdiv(N, buckets[b].bn))
            fprintf(stderr, "%s %s M=%lld: kernel %s, %lld CTAs\n", nt ? "nt" : "nn", d ? "bf16" : "fp16",
                    (long long)M, l->kernel->name, (long long)ctas);
        }
        if (M <= 16) {
          CHECK(ctas >= 108 && ctas >= 132);
          if (nt == 0 && d == 0 && (M == 1 || M == 16))
            printf("decode M=%lld N=K=4096: %s, %lld CTAs (A100: 108 SMs, H100: 132)\n", (long long)M,
                   l->kernel->name, (long long)ctas);
        }
      }
      /* the skinny bucket (M, N <= 512, K >= 4096): with the workspace
       * dlc_<op>_workspace_size reports, 64x128x32 tiles split in the
       * fewest slices whose CTAs cover 170 SMs (the most of the manifest's
       * archs: sm120's), at most the plan's 8 (the split rows, then the
       * second kernel on 16 CTAs a tile: 64 x 128 / 4 float4 columns over
       * 128 threads); without one, its unsplit twin
       * (16x64 tiles), one launch */
      static const int64_t sk[][4] = {{512, 512, 4096, 6}, {1, 256, 8192, 8}, {300, 100, 5000, 8}, {448, 512, 4096, 7}};
      for (size_t i = 0; i < sizeof sk / sizeof *sk; i++) {
        int64_t M = sk[i][0], N = sk[i][1], K = sk[i][2], tiles = cdiv(M, 64) * cdiv(N, 128);
        int64_t kt = cdiv(K, 32), split = cdiv(170, tiles) < 8 ? cdiv(170, tiles) : 8, per = cdiv(kt, split),
                slices = cdiv(kt, per);
        CHECK(slices == sk[i][3] && (tiles * slices >= 170 || slices == 8));
        size_t ws = nt ? dlc_gemm_bias_relu_nt_workspace_size(dt, M, N, K) : dlc_gemm_bias_relu_workspace_size(dt, M, N, K);
        CHECK(ws == (size_t)(tiles * slices * 64 * 128 * 4));
        long n0 = dlc__last_launch()->count;
        dlc_status st = nt ? dlc_gemm_bias_relu_nt_ws(dt, M, N, K, fake(0x10000000), K, fake(0x20000000), K, fake(0x30000000),
                                                      fake(0x40000000), N, fake(0x50000000), ws, NULL)
                           : dlc_gemm_bias_relu_ws(dt, M, N, K, fake(0x10000000), K, fake(0x20000000), N, fake(0x30000000),
                                                   fake(0x40000000), N, fake(0x50000000), ws, NULL);
        const dlc__launch_rec *l = dlc__last_launch();
        CHECK(st == DLC_SUCCESS && l->count == n0 + 2 && l->kernel->split_reduce && l->kernel->split == 8);
        CHECK(l->grid[0] == (unsigned)tiles && l->grid[1] == 16 && strstr(l->kernel->name, "_b0_r"));
        if (nt == 0 && d == 0)
          printf("skinny %lldx%lldx%lld: split-K %lld slices x %lld tiles = %lld CTAs, then %s; workspace %zu bytes\n",
                 (long long)M, (long long)N, (long long)K, (long long)slices, (long long)tiles, (long long)(slices * tiles),
                 l->kernel->name, ws);
        n0 = l->count;
        st = call(nt, dt, M, N, K);
        CHECK(st == DLC_SUCCESS && l->count == n0 + 1 && !l->kernel->split && strstr(l->kernel->name, "_b1_"));
        CHECK(l->grid[0] == (unsigned)(cdiv(M, 16) * cdiv(N, 64)));
      }
    }
  /* n1_64: conv2d_bias_silu's instance b1 (after small), gemm's b4 (after
   * skinny, skinny_nosplit, m1_16, m17_128) */
  static const int64_t Ks[] = {1, 8, 17, 63, 64, 65, 128, 256};
  for (int d = 0; d < 2; d++)
    for (int stride = 1; stride <= 2; stride++)
      for (size_t i = 0; i < sizeof Ks / sizeof *Ks; i++) {
        dlc_dtype dt = d ? DLC_BF16 : DLC_F16;
        int64_t N = 32, H = 56, W = 56, C = 64, K = Ks[i], P = (H - 1) / stride + 1, Q = (W - 1) / stride + 1;
        dlc_status st = dlc_conv2d_bias_silu(dt, N, H, W, C, K, stride, stride, 1, 1, fake(0x10000000), fake(0x20000000),
                                             fake(0x30000000), fake(0x40000000), NULL);
        const dlc__launch_rec *l = dlc__last_launch();
        CHECK(st == DLC_SUCCESS);
        if (st != DLC_SUCCESS) {
          fprintf(stderr, "conv K=%lld: %s: %s\n", (long long)K, dlc_status_string(st), dlc_last_error_detail());
          continue;
        }
        bool bucket = K <= 64;
        int bm = 128, bn = bucket ? 64 : 128; /* the default: 128x128 (64x64 warp tiles) */
        int64_t ctas = (int64_t)l->grid[0] * l->grid[1] * l->grid[2];
        bool ok = (strstr(l->kernel->name, "1_b1_") != NULL) == bucket && l->kernel->bm == bm && l->kernel->bn == bn &&
                  ctas == cdiv(N * P * Q, bm) * cdiv(K, bn);
        CHECK(ok);
        if (!ok || (d == 0 && stride == 1 && K == 64))
          printf("conv %lldx%lldx%lldx%lld->%lld/s%d: %s, %dx%d tiles, %lld CTAs\n", (long long)N, (long long)H,
                 (long long)W, (long long)C, (long long)K, stride, l->kernel->name, l->kernel->bm, l->kernel->bn,
                 (long long)ctas);
      }
  /* small: conv2d_bias_silu's instance b0, N P Q <= 2048 and K <= 512 */
  static const struct {
    int64_t n, h, w, c, k;
    int stride;
    bool small;
  } sc[] = {{32, 7, 7, 512, 512, 1, true},   {32, 14, 14, 512, 512, 2, true}, {32, 8, 8, 64, 512, 1, true},
            {32, 16, 16, 64, 512, 2, true},  {1, 1, 1, 8, 1, 1, true},        {2, 7, 7, 256, 64, 1, true},
            {33, 8, 8, 64, 512, 1, false},   {32, 8, 8, 64, 513, 1, false},  {32, 17, 17, 64, 256, 2, false},
            {32, 14, 14, 256, 256, 1, false}};
  for (int d = 0; d < 2; d++)
    for (size_t i = 0; i < sizeof sc / sizeof *sc; i++) {
      dlc_dtype dt = d ? DLC_BF16 : DLC_F16;
      int64_t P = (sc[i].h - 1) / sc[i].stride + 1, Q = (sc[i].w - 1) / sc[i].stride + 1, M = sc[i].n * P * Q;
      dlc_status st = dlc_conv2d_bias_silu(dt, sc[i].n, sc[i].h, sc[i].w, sc[i].c, sc[i].k, sc[i].stride, sc[i].stride, 1,
                                           1, fake(0x10000000), fake(0x20000000), fake(0x30000000), fake(0x40000000), NULL);
      const dlc__launch_rec *l = dlc__last_launch();
      CHECK(st == DLC_SUCCESS);
      if (st != DLC_SUCCESS) continue;
      int64_t ctas = (int64_t)l->grid[0] * l->grid[1] * l->grid[2];
      /* outside: n1_64 (K <= 64, 128x64) or the default (128x128) */
      int bm = sc[i].small ? 64 : 128, bn = sc[i].small ? 64 : sc[i].k <= 64 ? 64 : 128;
      bool ok = (strstr(l->kernel->name, "1_b0_") != NULL) == sc[i].small && l->kernel->bm == bm &&
                l->kernel->bn == bn && ctas == cdiv(M, bm) * cdiv(sc[i].k, bn);
      CHECK(ok);
      if (sc[i].small && M == 1568) CHECK(ctas >= 108 && ctas >= 132);
      if (!ok || (d == 0 && M == 1568))
        printf("conv %lldx%lldx%lldx%lld->%lld/s%d (N P Q = %lld): %s, %dx%d tiles, %lld CTAs (A100: 108 SMs, H100: 132)\n",
               (long long)sc[i].n, (long long)sc[i].h, (long long)sc[i].w, (long long)sc[i].c, (long long)sc[i].k,
               sc[i].stride, (long long)M, l->kernel->name, l->kernel->bm, l->kernel->bn, (long long)ctas);
    }
  static const struct {
    int64_t M, N, K;
    const char *tag; /* NULL: the default */
    int bm, bn;
  } gn[] = {{4096, 64, 4096, "_b4_", 128, 64}, {129, 1, 100, "_b4_", 128, 64},  {1000, 63, 64, "_b4_", 128, 64},
            {100, 64, 1024, "_b3_", 64, 64},   {16, 64, 1024, "_b2_", 16, 16},  {4096, 65, 4096, NULL, 128, 128}};
  for (int nt = 0; nt < 2; nt++)
    for (size_t i = 0; i < sizeof gn / sizeof *gn; i++) {
      dlc_status st = call(nt, DLC_F16, gn[i].M, gn[i].N, gn[i].K);
      const dlc__launch_rec *l = dlc__last_launch();
      CHECK(st == DLC_SUCCESS);
      if (st != DLC_SUCCESS) continue;
      bool ok = (gn[i].tag ? strstr(l->kernel->name, gn[i].tag) != NULL : !strstr(l->kernel->name, "16_b")) &&
                l->kernel->bm == gn[i].bm && l->kernel->bn == gn[i].bn;
      CHECK(ok);
      if (!ok)
        fprintf(stderr, "%s %lldx%lldx%lld: kernel %s, %dx%d\n", nt ? "nt" : "nn", (long long)gn[i].M, (long long)gn[i].N,
                (long long)gn[i].K, l->kernel->name, l->kernel->bm, l->kernel->bn);
    }
  /* sm90a: which row runs, its tile and CTAs */
  dlc__null_arch = DLC__ARCH_SM90A;
  static const struct {
    int64_t M, N, K;
    const char *tag; /* in the kernel name; "_sm90a": the default instance's sm90a kernel */
    int bm, bn;
  } g90[] = {{4096, 64, 4096, "16_b4_sm90a", 128, 64}, {129, 1, 100, "16_b4_sm90a", 128, 64},
             {8192, 33, 4096, "16_b4_sm90a", 128, 64}, {4096, 65, 4096, "16_sm90a", 128, 128},
             {16, 64, 1024, "_b2_v", 16, 16},          {1, 4096, 4096, "_b2_v", 16, 16},
             {100, 64, 1024, "_b3_v", 64, 64},         {128, 4096, 4096, "_b3_v", 64, 64},
             {512, 512, 4096, "_b1_v", 16, 64}}; /* skinny without a workspace: skinny_nosplit */
  for (int nt = 0; nt < 2; nt++)
    for (int d = 0; d < 2; d++)
      for (size_t i = 0; i < sizeof g90 / sizeof *g90; i++) {
        dlc_status st = call(nt, d ? DLC_BF16 : DLC_F16, g90[i].M, g90[i].N, g90[i].K);
        const dlc__launch_rec *l = dlc__last_launch();
        CHECK(st == DLC_SUCCESS);
        if (st != DLC_SUCCESS) continue;
        int64_t ctas = (int64_t)l->grid[0] * l->grid[1] * l->grid[2];
        bool ok = strstr(l->kernel->name, g90[i].tag) && l->kernel->bm == g90[i].bm && l->kernel->bn == g90[i].bn &&
                  ctas == cdiv(g90[i].M, g90[i].bm) * cdiv(g90[i].N, g90[i].bn);
        CHECK(ok);
        if (!ok || (nt == 0 && d == 0 && i == 0))
          printf("sm90a %s %lldx%lldx%lld: %s, %dx%d tiles, %lld CTAs\n", nt ? "nt" : "nn", (long long)g90[i].M,
                 (long long)g90[i].N, (long long)g90[i].K, l->kernel->name, l->kernel->bm, l->kernel->bn,
                 (long long)ctas);
      }
  for (int d = 0; d < 2; d++)
    for (int stride = 1; stride <= 2; stride++)
      for (size_t i = 0; i < sizeof Ks / sizeof *Ks; i++) {
        dlc_dtype dt = d ? DLC_BF16 : DLC_F16;
        int64_t N = 32, H = 56, W = 56, C = 64, K = Ks[i], P = (H - 1) / stride + 1, Q = (W - 1) / stride + 1;
        dlc_status st = dlc_conv2d_bias_silu(dt, N, H, W, C, K, stride, stride, 1, 1, fake(0x10000000), fake(0x20000000),
                                             fake(0x30000000), fake(0x40000000), NULL);
        const dlc__launch_rec *l = dlc__last_launch();
        CHECK(st == DLC_SUCCESS);
        if (st != DLC_SUCCESS) continue;
        bool bucket = K <= 64;
        int bn = bucket ? 64 : 128;
        int64_t ctas = (int64_t)l->grid[0] * l->grid[1] * l->grid[2];
        const char *name = l->kernel->name;
        size_t n = strlen(name);
        bool ok = n > 6 && strcmp(name + n - 6, "_sm90a") == 0 && (strstr(name, "1_b1_") != NULL) == bucket &&
                  l->kernel->bm == 128 && l->kernel->bn == bn && ctas == cdiv(N * P * Q, 128) * cdiv(K, bn);
        CHECK(ok);
        if (!ok || (d == 0 && stride == 1 && K == 64))
          printf("sm90a conv %lldx%lldx%lldx%lld->%lld/s%d: %s, %dx%d tiles, %lld CTAs\n", (long long)N, (long long)H,
                 (long long)W, (long long)C, (long long)K, stride, name, l->kernel->bm, l->kernel->bn, (long long)ctas);
      }
  /* the small bucket has no sm90a kernel (the sm90a row's grid STOP rule):
   * on sm90a its convolutions run the bucket's sm80 kernel, 64x64 tiles */
  for (int d = 0; d < 2; d++) {
    dlc_status st = dlc_conv2d_bias_silu(d ? DLC_BF16 : DLC_F16, 32, 7, 7, 512, 512, 1, 1, 1, 1, fake(0x10000000),
                                         fake(0x20000000), fake(0x30000000), fake(0x40000000), NULL);
    const dlc__launch_rec *l = dlc__last_launch();
    CHECK(st == DLC_SUCCESS && strstr(l->kernel->name, "1_b0_v8") != NULL && l->kernel->bm == 64 && l->kernel->bn == 64);
    if (d == 0) printf("sm90a conv 32x7x7x512->512/s1: %s\n", l->kernel->name);
  }
  dlc__null_arch = DLC__ARCH_SM80;
  return fails ? 1 : 0;
}
