/* Pipeline driver (see pipeline.h).  Stages, in spec order:
 *   frontend  (frontend.c)   spec §2
 *   tiny      (tiny.c)       spec §3
 *   indexbook (indexbook.c)  spec §4
 *   poly_view (polyview.c)   spec §5
 * Nothing is written unless the whole run succeeds. */
#include "pipeline.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "indexbook.h"
#include "jsonutil.h"
#include "manifest.h"
#include "polyview.h"
#include "region.h"
#include "tiny.h"

static const char *const stage_names[] = {
#define X(e, name) name,
    DLC_STAGES(X)
#undef X
};

bool pipeline_parse_stages(const char *list, unsigned *mask) {
  *mask = 0;
  const char *p = list;
  while (*p) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    bool found = false;
    if (n == 3 && strncmp(p, "all", 3) == 0) {
      *mask = (1u << STAGE__COUNT) - 1;
      found = true;
    }
    for (int i = 0; i < STAGE__COUNT; i++)
      if (strlen(stage_names[i]) == n && strncmp(p, stage_names[i], n) == 0) {
        *mask |= 1u << i;
        found = true;
      }
    if (!found) return false;
    p += n;
    if (*p == ',') p++;
  }
  return *mask != 0;
}

/* The results of one instance, stage by stage. */
typedef struct run {
  arena A;
  fe_graph *fe;
  tiny_dag *tiny;
  indexbook *ib;
  poly_view *pv;
  region_set *rs;
  cJSON *dumps[STAGE__COUNT];
} run;

static void run_free(run *r) {
  for (int i = 0; i < STAGE__COUNT; i++) cJSON_Delete(r->dumps[i]);
  arena_free(&r->A);
}

/* Runs the stages on a parsed graph object.  Returns false with diagnostics. */
static bool run_stages(run *r, const cJSON *graph, const char *where, const fe_instance *inst, unsigned dump,
                       diag_list *dl) {
  r->fe = fe_read_json(&r->A, graph, where, inst, dl);
  if (!r->fe) return false;
  if (dump & (1u << STAGE_FRONTEND)) r->dumps[STAGE_FRONTEND] = fe_dump(r->fe);
  r->tiny = tiny_lower(&r->A, r->fe, dl);
  if (!r->tiny) return false;
  if (dump & (1u << STAGE_TINY)) r->dumps[STAGE_TINY] = tiny_dump(r->tiny);
  r->ib = ib_build(&r->A, r->tiny, dl);
  if (!r->ib) return false;
  if (dump & (1u << STAGE_INDEXBOOK)) r->dumps[STAGE_INDEXBOOK] = ib_dump(r->ib);
  r->pv = pv_build(&r->A, r->ib, dl);
  if (!r->pv) return false;
  if (dump & (1u << STAGE_POLY_VIEW)) r->dumps[STAGE_POLY_VIEW] = pv_dump(r->pv);
  r->rs = region_build(&r->A, r->pv, dl);
  if (!r->rs) return false;
  if (dump & (1u << STAGE_REGION)) r->dumps[STAGE_REGION] = region_dump(r->rs);
  return !diag_has_errors(dl);
}

static void print_diags(const pipeline_opts *o, const diag_list *dl) {
  if (o->diag_json) diag_print_json(dl);
  else diag_print_text(dl, "dlcgen");
}

static int graph_main(const pipeline_opts *o) {
  diag_list dl;
  diag_init(&dl);
  int status = 0;
  dtype T;
  if (!dtype_parse(o->dtype, &T) || (T != DT_FP16 && T != DT_BF16 && T != DT_FP32)) {
    fprintf(stderr, "dlcgen: --dtype takes fp16, bf16 or fp32, not '%s'\n", o->dtype);
    return 2;
  }
  run r = {0};
  arena_init(&r.A);
  char *text = ju_read_file(o->graph, &dl, o->graph);
  cJSON *j = text ? ju_parse(text, &dl, o->graph) : NULL;
  free(text);
  fe_instance inst = {T, NULL, NULL};
  bool ok = j && run_stages(&r, j, o->graph, &inst, o->dump, &dl);
  cJSON_Delete(j);
  if (ok && o->dump) {
    if (o->dump_dir && ju_mkdirs(o->dump_dir) != 0) {
      diag_report(&dl, D_OUTPUT_IO, o->dump_dir, NULL, "cannot create '%s': %s", o->dump_dir, strerror(errno));
      ok = false;
    }
    for (int s = 0; ok && s < STAGE__COUNT; s++) {
      if (!r.dumps[s]) continue;
      char *txt = cJSON_Print(r.dumps[s]);
      if (!txt) dlc_die_oom();
      if (o->dump_dir) {
        char *path = arena_printf(&r.A, "%s/%s.json", o->dump_dir, stage_names[s]);
        size_t n = strlen(txt);
        char *withnl = malloc(n + 2);
        if (!withnl) dlc_die_oom();
        memcpy(withnl, txt, n);
        withnl[n] = '\n';
        withnl[n + 1] = 0;
        bool changed;
        if (ju_write_if_changed(path, withnl, &changed) != 0) {
          diag_report(&dl, D_OUTPUT_IO, path, NULL, "cannot write '%s': %s", path, strerror(errno));
          ok = false;
        }
        free(withnl);
      } else {
        fputs(txt, stdout);
        fputc('\n', stdout);
      }
      free(txt);
    }
  }
  if (dl.n) print_diags(o, &dl);
  if (!ok || diag_has_errors(&dl)) status = 1;
  run_free(&r);
  diag_free(&dl);
  return status;
}

/* Files a manifest run produces, written only after every instance passed. */
typedef struct outfile {
  char *path, *text;
} outfile;

typedef struct outlist {
  outfile *f;
  int n, cap;
} outlist;

static void out_add(outlist *l, char *path, char *text) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 32;
    l->f = realloc(l->f, sizeof(outfile) * (size_t)l->cap);
    if (!l->f) dlc_die_oom();
  }
  l->f[l->n].path = path;
  l->f[l->n].text = text;
  l->n++;
}

static void out_free(outlist *l) {
  for (int i = 0; i < l->n; i++) free(l->f[i].path), free(l->f[i].text);
  free(l->f);
}

static char *xprintf(const char *fmt, const char *a, const char *b, const char *c) {
  int n = snprintf(NULL, 0, fmt, a, b, c);
  char *p = malloc((size_t)n + 1);
  if (!p) dlc_die_oom();
  snprintf(p, (size_t)n + 1, fmt, a, b, c);
  return p;
}

static char *json_text(cJSON *j) {
  char *t = cJSON_Print(j);
  if (!t) dlc_die_oom();
  size_t n = strlen(t);
  char *r = realloc(t, n + 2);
  if (!r) dlc_die_oom();
  r[n] = '\n';
  r[n + 1] = 0;
  return r;
}

/* Removes files listed in the previous run's index that this run did not
 * produce, then writes the new index. */
static bool sync_outputs(const pipeline_opts *o, outlist *l, diag_list *dl) {
  char *idx_path = xprintf("%s/%s%s", o->out_dir, "dlcgen.outputs", "");
  FILE *f = fopen(idx_path, "r");
  if (f) {
    char line[4096];
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\n")] = 0;
      if (!*line || strstr(line, "..") || line[0] == '/') continue;
      bool keep = false;
      for (int i = 0; i < l->n && !keep; i++) {
        const char *rel = l->f[i].path + strlen(o->out_dir) + 1;
        keep = strcmp(rel, line) == 0;
      }
      if (!keep) {
        char *p = xprintf("%s/%s%s", o->out_dir, line, "");
        remove(p);
        free(p);
      }
    }
    fclose(f);
  }
  size_t len = 1;
  for (int i = 0; i < l->n; i++) len += strlen(l->f[i].path) + 2;
  char *idx = malloc(len), *q = idx;
  if (!idx) dlc_die_oom();
  *q = 0;
  for (int i = 0; i < l->n; i++) q += sprintf(q, "%s\n", l->f[i].path + strlen(o->out_dir) + 1);
  bool changed, ok = true;
  if (ju_write_if_changed(idx_path, idx, &changed) != 0) {
    diag_report(dl, D_OUTPUT_IO, idx_path, NULL, "cannot write '%s': %s", idx_path, strerror(errno));
    ok = false;
  }
  free(idx);
  free(idx_path);
  return ok;
}

static int manifest_main(const pipeline_opts *o) {
  diag_list dl;
  diag_init(&dl);
  arena A;
  arena_init(&A);
  outlist out = {0};
  unsigned dump = o->dump ? o->dump : (1u << STAGE__COUNT) - 1;
  manifest *m = mf_read(&A, o->manifest, &dl);
  bool ok = m != NULL;
  int total = 0, done = 0;
  for (int i = 0; ok && i < m->nops; i++) {
    mf_instance *inst;
    int n = mf_instances(&A, &m->ops[i], &inst);
    total += n;
    mf_instances_free(inst, n);
  }
  cJSON *index = cJSON_CreateObject();
  cJSON_AddStringToObject(index, "schema", "dlc-manifest-index/1");
  cJSON *iarchs = cJSON_AddArrayToObject(index, "archs");
  cJSON *iops = cJSON_AddArrayToObject(index, "ops");
  for (int i = 0; ok && i < m->narchs; i++) cJSON_AddItemToArray(iarchs, cJSON_CreateString(m->archs[i]));
  for (int i = 0; ok && i < m->nops; i++) {
    const mf_op *op = &m->ops[i];
    mf_instance *inst;
    int n = mf_instances(&A, op, &inst);
    cJSON *jo = cJSON_CreateObject();
    cJSON_AddStringToObject(jo, "name", op->name);
    cJSON *ji = cJSON_AddArrayToObject(jo, "instances");
    cJSON_AddItemToArray(iops, jo);
    for (int k = 0; k < n; k++) {
      done++;
      if (!o->quiet) fprintf(stderr, "[%d/%d] %s %s\n", done, total, op->name, inst[k].tag);
      run r = {0};
      arena_init(&r.A);
      fe_instance fi = {inst[k].dt, inst[k].attr_values, inst[k].dim_values};
      diag_list local;
      diag_init(&local);
      bool rok = run_stages(&r, op->graph, op->graph_where, &fi, dump, &local);
      /* name the instance in every diagnostic it produced */
      for (int d = 0; d < local.n; d++) {
        char *at = xprintf("%s %s: %s", op->name, inst[k].tag, local.items[d].at);
        free(local.items[d].at);
        local.items[d].at = at;
      }
      diag_append(&dl, &local);
      if (!rok) ok = false;
      cJSON_AddItemToArray(ji, cJSON_CreateString(inst[k].tag));
      char *dir = xprintf("%s/%s/%s", o->out_dir, op->name, inst[k].tag);
      for (int s = 0; rok && s < STAGE__COUNT; s++)
        if (r.dumps[s]) out_add(&out, xprintf("%s/%s.json%s", dir, stage_names[s], ""), json_text(r.dumps[s]));
      free(dir);
      run_free(&r);
    }
    mf_instances_free(inst, n);
  }
  if (ok) out_add(&out, xprintf("%s/%s%s", o->out_dir, "manifest_index.json", ""), json_text(index));
  cJSON_Delete(index);
  /* write only when everything succeeded */
  for (int i = 0; ok && i < out.n; i++) {
    char *dir = xprintf("%s%s%s", out.f[i].path, "", "");
    if (!dir) dlc_die_oom();
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    bool changed;
    if ((slash && ju_mkdirs(dir) != 0) || ju_write_if_changed(out.f[i].path, out.f[i].text, &changed) != 0) {
      diag_report(&dl, D_OUTPUT_IO, out.f[i].path, NULL, "cannot write '%s': %s", out.f[i].path, strerror(errno));
      ok = false;
    }
    free(dir);
  }
  if (ok) ok = sync_outputs(o, &out, &dl);
  if (dl.n) print_diags(o, &dl);
  int status = ok && !diag_has_errors(&dl) ? 0 : 1;
  if (!o->quiet && status == 0) fprintf(stderr, "dlcgen: %d instance%s of %d op%s -> %s\n", total, total == 1 ? "" : "s",
                                        m->nops, m->nops == 1 ? "" : "s", o->out_dir);
  out_free(&out);
  if (m) mf_free(m);
  arena_free(&A);
  diag_free(&dl);
  return status;
}

int pipeline_main(const pipeline_opts *o) {
  if (o->graph) return graph_main(o);
  return manifest_main(o);
}
