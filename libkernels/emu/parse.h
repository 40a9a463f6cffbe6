/*
 * parse.h: layer 3 (parse.c): PTX text -> module.
 */
#ifndef DLC_EMU_PARSE_H
#define DLC_EMU_PARSE_H

#include "emu.h"

int dlcemu_parse_module(emu_module *m, const char *text);
/* frees what the parser built (the caller frees linked kernels first) */
void dlcemu_module_free(emu_module *m);

#endif /* DLC_EMU_PARSE_H */
