/*
 * decode.h: layer 2 (decode.c), the instruction decoder, and the operand
 * form in which the parser (parse.c, the layer above) hands it instructions.
 *
 * The parser resolves names while it reads (registers with their scopes,
 * symbols, special registers), so an operand arrives at the decoder as a
 * small tagged value.  The decoder turns opcode + modifiers + operands into an
 * emu_insn whose operands are references (REF_* in emu.h) that link.c later
 * maps onto register-file slots.
 */
#ifndef DLC_EMU_DECODE_H
#define DLC_EMU_DECODE_H

#include "emu.h"
#include "util.h"

typedef enum emu_opd_kind {
  OPD_REG,    /* scalar register: reg = function-local index, rtype = declared type */
  OPD_PRED,   /* predicate register: reg = index; neg = written as !p */
  OPD_IMM,    /* immediate: imm_kind, ival (integer or float bits), fval (decimal float) */
  OPD_SREG,   /* special register: reg = emu_sreg */
  OPD_SYM,    /* a symbol used as a value (address) or call target: sym, ival = offset */
  OPD_ADDR,   /* [base + offset]: base_reg (-1: none) or sym (-1: none), ival = offset */
  OPD_VEC,    /* { e, e, ... } */
  OPD_LIST,   /* ( e, e, ... ) call arguments */
  OPD_SINK,   /* _ */
  OPD_LABEL   /* a branch target: name */
} emu_opd_kind;

enum { IMM_INT, IMM_F32, IMM_F64 };

typedef struct emu_operand {
  int kind;
  int neg;
  int imm_kind;
  int64_t ival;
  double fval;
  int reg;
  int rtype;
  int reg2;          /* `d|p`: predicate index of the second destination, else -1 */
  int sym;
  int base_reg;
  int base_pred;     /* OPD_ADDR base is a register of this type */
  struct emu_operand *elems;
  int nelems;
  const char *name;  /* OPD_LABEL: points into the PTX text */
  int name_len;
} emu_operand;

typedef struct emu_parse_ctx {
  emu_module *m;
  int func;          /* function being parsed */
  int line;          /* line of the instruction being decoded */
  const char *opcode_text;
} emu_parse_ctx;

/* opcode + modifiers + operands -> instruction.  Returns 0 or an error
 * status (detail set). */
int dlcemu_decode(emu_parse_ctx *pc, const char *opcode, emu_operand *ops, int nops, emu_insn *out);

/* is the base opcode of "opcode.mod.mod" one the decoder knows? */
int dlcemu_opcode_known(const char *opcode);

/* the tables of the function being decoded (constants, vector operands) and
 * decode errors naming the line */
uint32_t dlcemu_pc_const(emu_parse_ctx *pc, uint64_t value);          /* -> REF_CONST */
uint32_t dlcemu_pc_const_sym(emu_parse_ctx *pc, int sym, int64_t off); /* -> REF_CONST */
int dlcemu_pc_vec(emu_parse_ctx *pc, const uint32_t *refs, int n, uint32_t *out); /* -> REF_VEC */
int dlcemu_pc_unsupported(emu_parse_ctx *pc, const char *what);
int dlcemu_pc_error(emu_parse_ctx *pc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* DLC_EMU_DECODE_H */
