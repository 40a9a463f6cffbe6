/*
 * tmap.h: layer 1 (tmap.c): the emulator's encoding of a CUtensorMap, the
 * 128-byte object dlcemu_tensor_map_encode_tiled fills and
 * cp.async.bulk.tensor reads (from kernel parameter, constant or global
 * memory).  CUDA's own encoding is opaque; this one is documented here.
 */
#ifndef DLC_EMU_TMAP_H
#define DLC_EMU_TMAP_H

#include <stdint.h>

#define TMAP_MAGIC 0x31504D54u /* "TMP1" */

typedef struct emu_tmap {
  uint64_t global_address;
  uint32_t dim_minus1[5];  /* globalDim[i] - 1 (globalDim may be 2^32) */
  uint32_t magic;          /* TMAP_MAGIC: a map this emulator encoded */
  uint64_t stride[4];      /* globalStrides: bytes between steps of dimension i + 1 */
  uint16_t box[5];         /* boxDim */
  uint8_t estride[5];      /* elementStrides */
  uint8_t data_type, rank, interleave, swizzle, l2_promotion, oob_fill;
  uint8_t elem_bytes;
  uint8_t pad[42];
} emu_tmap;

_Static_assert(sizeof(emu_tmap) == 128, "a CUtensorMap is 128 bytes");

/* bytes of one element of a tensor map data type (0: packed or unknown) */
unsigned dlcemu_tmap_elem_bytes(int data_type);
/* is the data type a float (OOB NaN fill allowed)? */
int dlcemu_tmap_is_float(int data_type);

#endif /* DLC_EMU_TMAP_H */
