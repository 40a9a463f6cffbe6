/*
 * emu.h: the data structures of the PTX emulator (libdlcemu): opcodes,
 * types, the decoded instruction, symbols, functions, modules and linked
 * kernels.  It declares no functions: each layer has its own header.
 *
 * The layers, bottom up (a file calls only files of lower layers, and
 * includes only their headers; tests/emu/layering.cmake checks both):
 *   0  util.c    error detail, settings, growable arrays, type/opcode tables
 *   1  fp.c      exact fp16/bf16/f32 rounding              (fp.h)
 *      mem.c     the global allocation table, memory API   (mem.h)
 *      stats.c   launch statistics, JSON                   (stats.h)
 *      tmap.c    dlcemu_tensor_map_encode_tiled            (tmap.h)
 *   2  decode.c  one instruction -> emu_insn (ops.def)     (decode.h)
 *   3  parse.c   PTX text -> module; calls decode per line (parse.h)
 *   4  link.c    module + entry -> flat slot-addressed kernel (link.h)
 *   5  report.c  runtime error messages, allocation lookups (run.h: the launch state)
 *   6  race.c    the shared-memory race detector           (race.h)
 *   7  sync.c    barriers, warpgroups, async copies landing (sync.h)
 *      mbar.c    mbarrier objects, TMA tensor loads        (mbar.h)
 *      wgmma.c   wgmma.mma_async, register/proxy hazards   (wgmma.h)
 *   8  exec.c    the SIMT interpreter                      (exec.h)
 *   9  launch.c  blocks, scheduling, deadlocks             (launch.h)
 *  10  api.c     module and function handles, launch entry (the public header)
 * Every function shared between files is named dlcemu_* like the public API,
 * so the static library exports nothing outside that namespace; the public
 * API is only what include/dlc/dlcemu.h declares.
 * Values live in a per-warp register file uint64_t reg[slot][32]; immediates
 * and special registers are slots too, filled before the block runs, so every
 * operand is a slot and the interpreter's inner loops are plain array code.
 */
#ifndef DLC_EMU_H
#define DLC_EMU_H

#include <stddef.h>
#include <stdint.h>

#include "dlc/dlcemu.h"

/* ---------------------------------------------------------------- opcodes */
typedef enum emu_op {
#define OP(e, name, cls, executor) OP_##e,
#include "ops.def"
#undef OP
  OP_COUNT
} emu_op;

/* ------------------------------------------------------------------ types */
typedef enum emu_type {
  T_NONE,
  T_B8, T_B16, T_B32, T_B64, T_B128,
  T_U8, T_U16, T_U32, T_U64,
  T_S8, T_S16, T_S32, T_S64,
  T_F16, T_F16X2, T_BF16, T_BF16X2, T_TF32, T_F32, T_F64,
  T_PRED,
  T_COUNT
} emu_type;

/* rounding modes (cvt, arithmetic) */
enum { RND_NONE, RND_RN, RND_RZ, RND_RM, RND_RP, RND_RNA, RND_RNI, RND_RZI, RND_RMI, RND_RPI };

/* comparison operators of setp / set */
enum {
  CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_LO, CMP_LS, CMP_HI, CMP_HS,
  CMP_EQU, CMP_NEU, CMP_LTU, CMP_LEU, CMP_GTU, CMP_GEU, CMP_NUM, CMP_NAN
};
enum { BOOL_NONE, BOOL_AND, BOOL_OR, BOOL_XOR };

/* memory state spaces */
enum {
  SP_GENERIC, SP_GLOBAL, SP_SHARED, SP_LOCAL, SP_CONST,
  SP_KPARAM,   /* the launch's kernel parameter buffer */
  SP_TPARAM    /* the per-thread frame of .func params and call-site params */
};

/* atomic / redux operations */
enum { AOP_ADD, AOP_MIN, AOP_MAX, AOP_INC, AOP_DEC, AOP_AND, AOP_OR, AOP_XOR, AOP_EXCH, AOP_CAS };

/* sub-operations (emu_insn.sub / sub2) */
enum { BAR_SYNC, BAR_ARRIVE, BAR_RED };                 /* bar: sub */
enum { BRED_POPC, BRED_AND, BRED_OR };                  /* bar.red: sub2 */
enum { SHFL_UP, SHFL_DOWN, SHFL_BFLY, SHFL_IDX };       /* shfl: sub */
enum { VOTE_ALL, VOTE_ANY, VOTE_UNI, VOTE_BALLOT };     /* vote: sub */
enum { MMA_M16N8K16 = 1, MMA_M16N8K8 = 2 };             /* mma: sub */
enum { WG_NEG_A = 1, WG_NEG_B = 2, WG_TRANS_A = 4, WG_TRANS_B = 8, WG_RS = 16 }; /* wgmma: sub2; sub = N / 8 */
enum { PRED_MOV, PRED_AND, PRED_OR, PRED_XOR, PRED_NOT };/* pred logic: sub */
enum { EXT_VPRINTF = 1, EXT_ASSERT = 2 };               /* call of an external: sub2 */
enum { TESTP_FINITE, TESTP_INFINITE, TESTP_NUMBER, TESTP_NAN, TESTP_NORMAL, TESTP_SUBNORMAL };

/* insn flags */
enum {
  IF_FTZ = 1 << 0,      /* flush subnormal inputs/outputs to zero */
  IF_SAT = 1 << 1,      /* clamp (float: [0,1]; integer: to range) */
  IF_SATFINITE = 1 << 2,/* clamp overflow to the largest finite value */
  IF_RELU = 1 << 3,     /* clamp negative results to 0 */
  IF_APPROX = 1 << 4,   /* .approx / .full */
  IF_NEGA = 1 << 5,     /* first predicate source negated */
  IF_NEGB = 1 << 6,     /* second predicate source negated (setp's c, selp's p) */
  IF_ALIGNED = 1 << 7,  /* .aligned collective */
  IF_TRANS = 1 << 8,    /* ldmatrix/stmatrix .trans */
  IF_CC = 1 << 9,       /* writes the carry flag (.cc) */
  IF_NAN = 1 << 10,     /* min/max .NaN */
  IF_HI = 1 << 11,      /* mul/mad .hi */
  IF_WIDE = 1 << 12,    /* mul/mad .wide */
  IF_WRAP = 1 << 13,    /* shf .wrap */
  IF_LEFT = 1 << 14,    /* shf .l */
  IF_TO = 1 << 15,      /* cvta.to */
  IF_ADDR32 = 1 << 16,  /* the address base register is 32-bit */
  IF_ADDR32B = 1 << 17, /* the second address (cp.async source) base is 32-bit */
  IF_STRONG = 1 << 18,  /* .volatile/.relaxed/.acquire/.release: a synchronizing access */
  IF_ADDR32C = 1 << 19  /* the third address (cp.async.bulk.tensor's mbarrier) base is 32-bit */
};

/* ------------------------------------------------------ operand references
 * Before linking an operand is a tagged reference; after, a slot number. */
enum {
  REF_NONE = 0u,
  REF_REG = 1u << 28,   /* function-local scalar register index */
  REF_PRED = 2u << 28,  /* function-local predicate register index */
  REF_CONST = 3u << 28, /* index into the function's constant table */
  REF_SREG = 4u << 28,  /* special register id (emu_sreg) */
  REF_VEC = 5u << 28,   /* index into the function's vector pool */
  REF_SINK = 6u << 28   /* the sink `_` */
};
#define REF_TAG(r) ((r) & 0xF0000000u)
#define REF_IDX(r) ((r) & 0x0FFFFFFFu)
#define SLOT_NONE 0xFFFFFFFFu
/* predicate references with fixed slots: constant false / true, and the sink */
#define PRED_FALSE_REF (REF_PRED | 0x0FFFFFFEu)
#define PRED_TRUE_REF (REF_PRED | 0x0FFFFFFDu)
#define PRED_SINK_REF (REF_PRED | 0x0FFFFFFCu)
enum { PSLOT_FALSE, PSLOT_TRUE, PSLOT_SINK, PSLOT_FIRST };

/* special registers: each one is a register-file slot filled per block. */
typedef enum emu_sreg {
  SR_SINK,                                   /* writes to `_` land here */
  SR_TID_X, SR_TID_Y, SR_TID_Z,
  SR_NTID_X, SR_NTID_Y, SR_NTID_Z,
  SR_CTAID_X, SR_CTAID_Y, SR_CTAID_Z,
  SR_NCTAID_X, SR_NCTAID_Y, SR_NCTAID_Z,
  SR_LANEID, SR_WARPID, SR_NWARPID, SR_SMID, SR_NSMID, SR_GRIDID,
  SR_LANEMASK_EQ, SR_LANEMASK_LT, SR_LANEMASK_LE, SR_LANEMASK_GT, SR_LANEMASK_GE,
  SR_DYN_SMEM, SR_TOTAL_SMEM,
  SR_CLUSTER_CTAID_X, SR_CLUSTER_CTAID_Y, SR_CLUSTER_CTAID_Z,
  SR_CLUSTER_NCTAID_X, SR_CLUSTER_NCTAID_Y, SR_CLUSTER_NCTAID_Z,
  SR_CLUSTERID_X, SR_CLUSTERID_Y, SR_CLUSTERID_Z,
  SR_NCLUSTERID_X, SR_NCLUSTERID_Y, SR_NCLUSTERID_Z,
  SR_CLUSTER_CTARANK, SR_CLUSTER_NCTARANK, SR_IS_EXPLICIT_CLUSTER,
  SR_CARRY,                                  /* the .cc carry flag, one per lane */
  SR_COUNT_STATIC,
  /* dynamic ones, read only through OP_MOV_CLOCK */
  SR_CLOCK = SR_COUNT_STATIC, SR_CLOCK_HI, SR_CLOCK64, SR_GLOBALTIMER, SR_GLOBALTIMER_LO,
  SR_GLOBALTIMER_HI,
  SR_COUNT
} emu_sreg;

/* ------------------------------------------------------------ instruction */
typedef struct emu_insn {
  uint16_t op;          /* emu_op */
  uint8_t t, t2;        /* instruction type; second type (cvt source, setp/set source, ...) */
  uint8_t space;        /* SP_* for memory ops */
  uint8_t vec;          /* vector count (ld/st .vN), cp.async size, ldmatrix matrices */
  uint8_t rnd;          /* RND_* */
  uint8_t sub;          /* op-specific: CMP_*, AOP_*, shfl/vote mode, mma shape, ... */
  uint8_t sub2;         /* op-specific: BOOL_*, mma types, ... */
  uint8_t cls;          /* dlcemu_class */
  uint8_t rmask;        /* bit i: a[i] (i < 4) is a register slot the interpreter reads through d/a/b/c */
  uint8_t regmask;      /* after link: bit i: a[i] is a register-file slot (a scalar register operand) */
  uint8_t vecmask;      /* after link: bit i: a[i] is a vector (an offset into the kernel's vpool) */
  uint32_t flags;       /* IF_* */
  uint32_t guard;       /* predicate slot (REF_PRED before link); SLOT_NONE if unguarded */
  uint32_t a[6];        /* operands: slots (or references before link) */
  int64_t imm, imm2;    /* address offsets, immediates */
  uint32_t line;        /* PTX line of the opcode */
  uint32_t text;        /* offset of the instruction text in the module's text pool */
  int32_t sym, sym2;    /* address symbols before link (-1: none) */
  int32_t loc_file;     /* .loc source position (-1: none) */
  int32_t loc_line;
} emu_insn;

/* bits of emu_insn.guard besides the slot */
#define GUARD_NEG 0x80000000u

/* ---------------------------------------------------------------- symbols */
typedef enum emu_sym_kind {
  SYM_GLOBAL,        /* module .global variable: host storage */
  SYM_CONST,         /* module .const variable: host storage */
  SYM_SHARED,        /* .shared variable (module or function scope) */
  SYM_EXTERN_SHARED, /* extern .shared: start of dynamic shared memory */
  SYM_LOCAL,         /* .local variable of a function */
  SYM_KPARAM,        /* kernel parameter */
  SYM_TPARAM,        /* .func parameter / return value / call-site .param */
  SYM_FUNC           /* a .func or .entry */
} emu_sym_kind;

typedef struct emu_sym {
  char *name;
  int kind;
  int owner;          /* owning function index, -1 for module scope */
  uint64_t size;
  uint32_t align;
  uint64_t off;       /* local/tparam: offset in owner's frame; kparam: buffer offset */
  uint8_t *host;      /* global/const: storage (registered as an allocation) */
  int func;           /* SYM_FUNC: function index */
  int type;           /* declared element type (params) */
} emu_sym;

/* a constant-table entry: a value or the address of a symbol plus offset */
typedef struct emu_const {
  uint64_t value;
  int32_t sym;        /* -1: plain value */
} emu_const;

typedef struct emu_func {
  char *name;
  int is_entry;
  int has_body;
  int decl_line;
  int *params;        /* symbol indices of formal parameters, in order */
  int nparams;
  int *rets;          /* symbol indices of return parameters */
  int nrets;
  uint64_t kparam_bytes;  /* entry: size of the parameter buffer */
  uint64_t tparam_bytes;  /* per-thread param frame of this function */
  uint32_t tparam_align;
  uint64_t local_bytes;   /* .local frame of this function */
  uint32_t local_align;
  int nregs, npreds;
  emu_insn *code;
  int ncode, capcode;
  uint32_t *vpool;        /* vector operand references: [count, ref, ref, ...] */
  int nvpool, capvpool;
  emu_const *consts;
  int nconsts, capconsts;
  int *shared_syms;       /* function-scope .shared variables */
  int nshared, capshared;
  int *callees;           /* function indices called */
  int ncallees, capcallees;
  unsigned maxntid[3], reqntid[3];
  int uses_module_shared; /* references a module-scope .shared variable */
} emu_func;

/* a kernel: an entry linked with everything it reaches */
typedef struct dlcemu_function_st {
  struct dlcemu_module_st *mod;
  int func;               /* entry function index */
  emu_insn *code;         /* flat code: entry first, then callees */
  int ncode;
  uint32_t *vpool;        /* vector operand slot lists: [count, slot, slot, ...] */
  int nvpool;
  uint32_t *call_info;    /* call copy lists, see link.c */
  int ncall_info;
  uint32_t nslots;        /* register-file slots per lane */
  uint32_t npreds;        /* predicate registers */
  uint32_t const_base;    /* first constant slot */
  uint64_t *const_vals;   /* values of the constant slots */
  uint32_t nconsts;
  uint64_t static_shared; /* bytes of static shared memory */
  uint64_t max_dyn_shared;/* cudaFuncAttributeMaxDynamicSharedMemorySize */
  uint32_t dyn_align;     /* alignment of the dynamic shared window */
  uint64_t local_bytes;   /* per-thread .local frame */
  uint64_t tparam_bytes;  /* per-thread .param frame */
  uint32_t max_call_depth;
  unsigned max_threads;
  unsigned reqntid[3];
  int nregs_total;
} emu_kernel;

typedef struct dlcemu_module_st {
  char *text;             /* the PTX source (instruction texts point here) */
  size_t text_len;
  char *pool;             /* NUL-separated instruction texts */
  size_t npool, cappool;
  int target_sm;          /* 80, 90, ... */
  int target_arch_a;      /* sm_90a */
  emu_sym *syms;
  int nsyms, capsyms;
  emu_func *funcs;
  int nfuncs, capfuncs;
  emu_kernel **kernels;   /* per function index, linked on demand */
  uint64_t module_shared; /* bytes of module-scope .shared variables (laid out first) */
  char **files;           /* .file names by index */
  int nfiles;
} emu_module;

#endif /* DLC_EMU_H */
