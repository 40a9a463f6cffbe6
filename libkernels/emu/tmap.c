/*
 * tmap.c: dlcemu_tensor_map_encode_tiled, the emulator's cuTensorMapEncodeTiled.
 *
 * The parameters, their order, the enum values and the validation are those
 * of the CUDA driver API's cuTensorMapEncodeTiled (its documented
 * requirements, checked in the order the documentation lists them); a
 * violation is DLCEMU_ERROR_INVALID_VALUE naming the rule.  The object written
 * is the emulator's encoding (tmap.h); cp.async.bulk.tensor (mbar.c) decodes
 * it.  Maps that are valid for CUDA but that the emulator's TMA does not
 * implement are DLCEMU_ERROR_UNSUPPORTED.
 */
#include <string.h>

#include "tmap.h"
#include "util.h"

unsigned dlcemu_tmap_elem_bytes(int t) {
  static const unsigned bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  return t >= 0 && t < (int)(sizeof bytes / sizeof bytes[0]) ? bytes[t] : 0;
}

int dlcemu_tmap_is_float(int t) {
  return t == DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT16 || t == DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT32 ||
         t == DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT64 || t == DLCEMU_TENSOR_MAP_DATA_TYPE_BFLOAT16 ||
         t == DLCEMU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ || t == DLCEMU_TENSOR_MAP_DATA_TYPE_TFLOAT32 ||
         t == DLCEMU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ;
}

#define BAD(...) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_tensor_map_encode_tiled: " __VA_ARGS__)

int dlcemu_tensor_map_encode_tiled(void *tensor_map, int data_type, uint32_t rank, dlcemu_deviceptr global_address,
                                   const uint64_t *global_dim, const uint64_t *global_strides,
                                   const uint32_t *box_dim, const uint32_t *element_strides, int interleave,
                                   int swizzle, int l2_promotion, int oob_fill) {
  if (!tensor_map || !global_dim || !box_dim || !element_strides || (rank > 1 && !global_strides))
    BAD("NULL argument");
  if ((uintptr_t)tensor_map % 64) BAD("tensorMap address %p is not aligned to 64 bytes", tensor_map);
  int packed16 = data_type == DLCEMU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B ||
                 data_type == DLCEMU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
  if (data_type < 0 || data_type > DLCEMU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B)
    BAD("tensorDataType %d is not a CUtensorMapDataType", data_type);
  if (interleave < 0 || interleave > DLCEMU_TENSOR_MAP_INTERLEAVE_32B)
    BAD("interleave %d is not a CUtensorMapInterleave", interleave);
  if (rank == 0 || rank > 5) BAD("tensorRank %u must be 1..5", rank);
  if (interleave != DLCEMU_TENSOR_MAP_INTERLEAVE_NONE && rank < 3)
    BAD("tensorRank %u must be at least 3 with an interleaved layout", rank);
  if (global_address % 16) BAD("globalAddress 0x%llx is not 16-byte aligned", global_address);
  if ((interleave == DLCEMU_TENSOR_MAP_INTERLEAVE_32B || packed16) && global_address % 32)
    BAD("globalAddress 0x%llx must be 32-byte aligned with this interleave / data type", global_address);
  for (uint32_t i = 0; i < rank; i++)
    if (global_dim[i] == 0 || global_dim[i] > (1ull << 32)) BAD("globalDim[%u] = %llu must be 1..2^32", i,
                                                                 (unsigned long long)global_dim[i]);
  if (packed16 && global_dim[0] % 128) BAD("globalDim[0] must be a multiple of 128 for this packed data type");
  if (data_type == DLCEMU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B && global_dim[0] % 2)
    BAD("globalDim[0] must be a multiple of 2 for CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B");
  for (uint32_t i = 0; i + 1 < rank; i++) {
    uint64_t s = global_strides[i];
    if (s % 16 || s >= (1ull << 40)) BAD("globalStrides[%u] = %llu must be a multiple of 16 below 2^40", i,
                                         (unsigned long long)s);
    if ((interleave == DLCEMU_TENSOR_MAP_INTERLEAVE_32B || packed16) && s % 32)
      BAD("globalStrides[%u] = %llu must be a multiple of 32 with this interleave / data type", i,
          (unsigned long long)s);
  }
  unsigned es = dlcemu_tmap_elem_bytes(data_type);
  for (uint32_t i = 0; i < rank; i++)
    if (box_dim[i] == 0 || box_dim[i] > 256) BAD("boxDim[%u] = %u must be 1..256", i, box_dim[i]);
  if (interleave == DLCEMU_TENSOR_MAP_INTERLEAVE_NONE && es && (box_dim[0] * es) % 16)
    BAD("boxDim[0] * element size = %u bytes must be a multiple of 16 without interleave", box_dim[0] * es);
  if (packed16 && box_dim[0] != 128) BAD("boxDim[0] must be 128 for this packed data type");
  for (uint32_t i = 0; i < rank; i++)
    if (element_strides[i] == 0 || element_strides[i] > 8)
      BAD("elementStrides[%u] = %u must be 1..8", i, element_strides[i]);
  if (swizzle < 0 || swizzle > DLCEMU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B)
    BAD("swizzle %d is not a CUtensorMapSwizzle", swizzle);
  if (interleave == DLCEMU_TENSOR_MAP_INTERLEAVE_NONE && swizzle != DLCEMU_TENSOR_MAP_SWIZZLE_NONE && es) {
    unsigned span = swizzle == DLCEMU_TENSOR_MAP_SWIZZLE_32B ? 32 : swizzle == DLCEMU_TENSOR_MAP_SWIZZLE_64B ? 64 : 128;
    if (box_dim[0] * es > span)
      BAD("the box's inner dimension (boxDim[0] * element size = %u bytes) exceeds the %u-byte swizzle span",
          box_dim[0] * es, span);
  }
  if (data_type == DLCEMU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B && interleave != DLCEMU_TENSOR_MAP_INTERLEAVE_NONE)
    BAD("CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B requires CU_TENSOR_MAP_INTERLEAVE_NONE");
  if (interleave == DLCEMU_TENSOR_MAP_INTERLEAVE_32B && swizzle != DLCEMU_TENSOR_MAP_SWIZZLE_32B)
    BAD("CU_TENSOR_MAP_INTERLEAVE_32B requires CU_TENSOR_MAP_SWIZZLE_32B");
  if (packed16 && swizzle != DLCEMU_TENSOR_MAP_SWIZZLE_NONE && swizzle != DLCEMU_TENSOR_MAP_SWIZZLE_128B &&
      swizzle != DLCEMU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B && swizzle != DLCEMU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B)
    BAD("swizzle %d is not supported with this packed data type", swizzle);
  if (data_type == DLCEMU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B && swizzle == DLCEMU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B)
    BAD("CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B is not supported with CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B");
  if (l2_promotion < 0 || l2_promotion > DLCEMU_TENSOR_MAP_L2_PROMOTION_L2_256B)
    BAD("l2Promotion %d is not a CUtensorMapL2promotion", l2_promotion);
  if (oob_fill < 0 || oob_fill > DLCEMU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    BAD("oobFill %d is not a CUtensorMapFloatOOBfill", oob_fill);
  if (oob_fill == DLCEMU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && !dlcemu_tmap_is_float(data_type))
    BAD("CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA needs a floating-point tensorDataType");
  /* valid for CUDA; what the emulator's TMA does not implement */
  if (!es)
    return dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "dlcemu_tensor_map_encode_tiled: packed 4/6-bit data types");
  if (interleave != DLCEMU_TENSOR_MAP_INTERLEAVE_NONE)
    return dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "dlcemu_tensor_map_encode_tiled: interleaved layouts");
  if (swizzle > DLCEMU_TENSOR_MAP_SWIZZLE_128B)
    return dlcemu_fail(DLCEMU_ERROR_UNSUPPORTED, "dlcemu_tensor_map_encode_tiled: the sm_100 128B_ATOM swizzles");
  emu_tmap t;
  memset(&t, 0, sizeof t);
  t.global_address = global_address;
  t.magic = TMAP_MAGIC;
  for (uint32_t i = 0; i < rank; i++) {
    t.dim_minus1[i] = (uint32_t)(global_dim[i] - 1);
    t.box[i] = (uint16_t)box_dim[i];
    t.estride[i] = (uint8_t)element_strides[i];
    if (i + 1 < rank) t.stride[i] = global_strides[i];
  }
  t.data_type = (uint8_t)data_type;
  t.rank = (uint8_t)rank;
  t.interleave = (uint8_t)interleave;
  t.swizzle = (uint8_t)swizzle;
  t.l2_promotion = (uint8_t)l2_promotion;
  t.oob_fill = (uint8_t)oob_fill;
  t.elem_bytes = (uint8_t)es;
  memcpy(tensor_map, &t, sizeof t);
  dlcemu_clear_error();
  return 0;
}
