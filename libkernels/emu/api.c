/*
 * api.c: the public C API (include/dlc/dlcemu.h) around the parser, linker
 * and launch driver: module and function handles (the error detail, status
 * names and settings are in util.c, the memory API in mem.c).  Handles are validated against the
 * set of live modules, so a stale or bogus handle gets a status, not a crash.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "link.h"
#include "parse.h"
#include "util.h"

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static emu_module **modules;
static int nmodules, capmodules;

/* the linked kernels (link layer), then what the parser built */
static void module_free(emu_module *m) {
  if (m->kernels)
    for (int i = 0; i < m->nfuncs; i++) dlcemu_kernel_free(m->kernels[i]);
  dlcemu_module_free(m);
}

static int module_live_locked(const emu_module *m) {
  for (int i = 0; i < nmodules; i++)
    if (modules[i] == m) return 1;
  return 0;
}

static int module_live(const emu_module *m) {
  pthread_mutex_lock(&modules_lock);
  int ok = module_live_locked(m);
  pthread_mutex_unlock(&modules_lock);
  return ok;
}

static int function_live(const emu_kernel *k) {
  pthread_mutex_lock(&modules_lock);
  int ok = 0;
  for (int i = 0; i < nmodules && !ok; i++) {
    emu_module *m = modules[i];
    for (int f = 0; f < m->nfuncs && !ok; f++) ok = m->kernels[f] == k && k;
  }
  pthread_mutex_unlock(&modules_lock);
  return ok;
}

int dlcemu_module_load_data(dlcemu_module *mod, const char *ptx_text) {
  if (!mod || !ptx_text) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_module_load_data: NULL argument");
  *mod = NULL;
  emu_module *m = calloc(1, sizeof *m);
  if (!m) return dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
  int rc = dlcemu_parse_module(m, ptx_text);
  if (!rc) {
    m->kernels = calloc((size_t)(m->nfuncs ? m->nfuncs : 1), sizeof(emu_kernel *));
    if (!m->kernels) rc = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  for (int i = 0; !rc && i < m->nfuncs; i++)
    if (m->funcs[i].is_entry && m->funcs[i].has_body) rc = dlcemu_link_kernel(m, i, &m->kernels[i]);
  if (!rc) {
    pthread_mutex_lock(&modules_lock);
    if (dlcemu_grow(&modules, &capmodules, nmodules + 1, sizeof(emu_module *)))
      rc = dlcemu_fail(DLCEMU_ERROR_OUT_OF_MEMORY, "out of memory");
    else
      modules[nmodules++] = m;
    pthread_mutex_unlock(&modules_lock);
  }
  if (rc) {
    module_free(m);
    return rc;
  }
  *mod = m;
  return 0;
}

int dlcemu_module_unload(dlcemu_module mod) {
  pthread_mutex_lock(&modules_lock);
  int found = -1;
  for (int i = 0; i < nmodules; i++)
    if (modules[i] == mod) found = i;
  if (found >= 0) {
    modules[found] = modules[--nmodules];
    if (!nmodules) {
      free(modules);
      modules = NULL;
      capmodules = 0;
    }
  }
  pthread_mutex_unlock(&modules_lock);
  if (found < 0) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_module_unload: not a loaded module");
  module_free(mod);
  return 0;
}

int dlcemu_module_get_function(dlcemu_function *fn, dlcemu_module mod, const char *name) {
  if (!fn || !name) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_module_get_function: NULL argument");
  *fn = NULL;
  if (!module_live(mod)) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_module_get_function: not a loaded module");
  for (int i = 0; i < mod->nfuncs; i++)
    if (mod->kernels[i] && !strcmp(mod->funcs[i].name, name)) {
      *fn = mod->kernels[i];
      return 0;
    }
  return dlcemu_fail(DLCEMU_ERROR_NOT_FOUND, "dlcemu_module_get_function: the module has no .entry named '%s'", name);
}

int dlcemu_module_get_global(dlcemu_deviceptr *ptr, size_t *bytes, dlcemu_module mod, const char *name) {
  if (!name) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_module_get_global: name is NULL");
  if (!module_live(mod)) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_module_get_global: not a loaded module");
  for (int i = 0; i < mod->nsyms; i++) {
    emu_sym *s = &mod->syms[i];
    if ((s->kind == SYM_GLOBAL || s->kind == SYM_CONST) && s->owner < 0 && !strcmp(s->name, name)) {
      if (ptr) *ptr = (dlcemu_deviceptr)(uintptr_t)s->host;
      if (bytes) *bytes = (size_t)s->size;
      return 0;
    }
  }
  return dlcemu_fail(DLCEMU_ERROR_NOT_FOUND, "dlcemu_module_get_global: no .global/.const variable named '%s'", name);
}

int dlcemu_launch_kernel(dlcemu_function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                         unsigned bz, unsigned shared_bytes, void **params) {
  if (!function_live(fn)) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_launch_kernel: not a valid function");
  unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  return dlcemu_launch(fn, g, b, shared_bytes, params);
}

int dlcemu_function_get_attribute(int *value, dlcemu_function_attribute attrib, dlcemu_function fn) {
  if (!value) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_function_get_attribute: value is NULL");
  if (!function_live(fn)) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_function_get_attribute: not a valid function");
  emu_func *f = &fn->mod->funcs[fn->func];
  switch (attrib) {
  case DLCEMU_FUNC_ATTRIBUTE_NUM_PARAMS: *value = f->nparams; return 0;
  case DLCEMU_FUNC_ATTRIBUTE_PARAM_BYTES: *value = (int)f->kparam_bytes; return 0;
  case DLCEMU_FUNC_ATTRIBUTE_STATIC_SHARED_BYTES: *value = (int)fn->static_shared; return 0;
  case DLCEMU_FUNC_ATTRIBUTE_LOCAL_BYTES: *value = (int)fn->local_bytes; return 0;
  case DLCEMU_FUNC_ATTRIBUTE_MAX_THREADS: *value = (int)fn->max_threads; return 0;
  case DLCEMU_FUNC_ATTRIBUTE_NUM_REGS: *value = fn->nregs_total; return 0;
  case DLCEMU_FUNC_ATTRIBUTE_NUM_INSTRUCTIONS: *value = fn->ncode; return 0;
  case DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES: *value = (int)fn->max_dyn_shared; return 0;
  default: return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_function_get_attribute: unknown attribute %d", (int)attrib);
  }
}

int dlcemu_function_set_attribute(dlcemu_function fn, dlcemu_function_attribute attrib, int value) {
  if (!function_live(fn)) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_function_set_attribute: not a valid function");
  if (attrib != DLCEMU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES)
    return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_function_set_attribute: attribute %d cannot be set", (int)attrib);
  uint64_t optin = emu_max_shared_optin(fn->mod->target_sm);
  if (value < 0 || fn->static_shared + (uint64_t)value > optin)
    return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE,
                       "dlcemu_function_set_attribute: %d bytes of dynamic shared memory and %llu static exceed the "
                       "%llu bytes a block of sm_%d may opt in to",
                       value, (unsigned long long)fn->static_shared, (unsigned long long)optin, fn->mod->target_sm);
  fn->max_dyn_shared = (uint64_t)value;
  return 0;
}

int dlcemu_function_get_param_info(dlcemu_function fn, int index, size_t *offset, size_t *bytes) {
  if (!function_live(fn)) return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_function_get_param_info: not a valid function");
  emu_func *f = &fn->mod->funcs[fn->func];
  if (index < 0 || index >= f->nparams)
    return dlcemu_fail(DLCEMU_ERROR_INVALID_VALUE, "dlcemu_function_get_param_info: %s has %d parameters, not %d", f->name,
                    f->nparams, index + 1);
  emu_sym *s = &fn->mod->syms[f->params[index]];
  if (offset) *offset = (size_t)s->off;
  if (bytes) *bytes = (size_t)s->size;
  return 0;
}

