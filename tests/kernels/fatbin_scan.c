/* fatbin_scan FILE [sm80 sm90a ...]: lists the device code embedded in an
 * object or archive (the CUDA toolkit here ships no cuobjdump), and fails
 * when any of it is PTX or when an expected arch has no SASS.
 *
 * An nvcc object carries its device code in fat binaries: a 16-byte header
 * (magic 0xBA55ED50, version, header size, payload size) followed by
 * entries, each with a header giving its kind (1: PTX, 2: ELF/SASS), its
 * header and padded payload sizes, and its SM version. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t u32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint64_t u64(const unsigned char *p) { return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32; }

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fatbin_scan FILE [arch...]\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *d = malloc((size_t)n + 1);
  if (!d || fread(d, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "%s: cannot read\n", argv[1]);
    return 2;
  }
  fclose(f);
  int ptx = 0, elf = 0, fatbins = 0;
  int seen[256] = {0};
  for (long i = 0; i + 16 <= n; i += 2) { /* archive members are 2-byte aligned */
    if (u32(d + i) != 0xBA55ED50u || u16(d + i + 4) != 1) continue;
    uint16_t hs = u16(d + i + 6);
    uint64_t size = u64(d + i + 8);
    if (hs < 16 || (uint64_t)i + hs + size > (uint64_t)n) continue;
    fatbins++;
    uint64_t off = (uint64_t)i + hs, end = off + size;
    while (off + 36 <= end) {
      uint16_t kind = u16(d + off);
      uint32_t ehs = u32(d + off + 4), padded = u32(d + off + 8), sm = u32(d + off + 28);
      if (ehs < 36 || off + ehs + padded > end) break;
      printf("%s entry for sm_%u\n", kind == 1 ? "PTX" : kind == 2 ? "SASS" : "unknown", sm);
      if (kind == 1) ptx++;
      if (kind == 2) elf++, seen[sm & 255] = 1;
      off += ehs + padded;
    }
  }
  free(d);
  int bad = ptx != 0 || elf == 0;
  for (int a = 2; a < argc; a++) {
    int sm = atoi(argv[a] + 2); /* "sm90a" -> 90 */
    if (!seen[sm & 255]) {
      fprintf(stderr, "no SASS for %s\n", argv[a]);
      bad = 1;
    }
  }
  printf("%d fat binaries: %d SASS entries, %d PTX entries\n", fatbins, elf, ptx);
  if (ptx) fprintf(stderr, "the file embeds PTX: it could be JIT-compiled at run time\n");
  return bad;
}
