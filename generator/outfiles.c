/* Output transaction (see outfiles.h): prepare temporaries, then replace
 * with a journal of backups, and roll the journal back on any failure.
 *
 * Why a journal rather than writing a new tree and swapping one directory:
 * the output directory is the user's (generated/ is committed, and holds
 * files dlcgen does not own), so there is no single directory whose rename
 * would swap exactly dlcgen's files.  Hard-linked backups make each
 * replacement undoable without copying, keep the old inode (so a restored
 * file is byte-identical, mtime included), and leave the target present at
 * every instant.  A crash (not a failure) can leave hidden
 * `.<name>.dlcgen-XXXXXX` temporaries or backups behind, never a truncated
 * output. */
#define _POSIX_C_SOURCE 200809L
#include "outfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arena.h" /* dlc_die_oom */

/* ---- test hooks ------------------------------------------------------------------- */

static struct {
  bool read;
  char kind[16];
  long n;          /* fail the nth step of kind (0: never) */
  long count;      /* steps of kind seen */
  bool sequential; /* DLCGEN_TEST_TEMP_NAMES=sequential */
} hook;

static void hook_read(void) {
  if (hook.read) return;
  hook.read = true;
  const char *f = getenv("DLCGEN_TEST_FAIL_IO"), *colon = f ? strchr(f, ':') : NULL;
  if (colon && (size_t)(colon - f) < sizeof hook.kind) {
    memcpy(hook.kind, f, (size_t)(colon - f));
    hook.n = strtol(colon + 1, NULL, 10);
  }
  const char *t = getenv("DLCGEN_TEST_TEMP_NAMES");
  hook.sequential = t && strcmp(t, "sequential") == 0;
}

/* True when the test hook makes this step fail (errno is then EIO). */
static bool injected(const char *kind) {
  hook_read();
  if (hook.n <= 0 || (strcmp(hook.kind, "any") != 0 && strcmp(hook.kind, kind) != 0)) return false;
  if (++hook.count != hook.n) return false;
  errno = EIO;
  return true;
}

/* ---- names ------------------------------------------------------------------------- */

static char *xstrdup(const char *s) {
  char *r = malloc(strlen(s) + 1);
  if (!r) dlc_die_oom();
  return strcpy(r, s);
}

/* "<dir>/.<base>.dlcgen-XXXXXX" for attempt `k`: six random letters and
 * digits, or the attempt number under DLCGEN_TEST_TEMP_NAMES=sequential. */
static char *side_name(const char *path, int k) {
  static uint64_t state;
  if (!state) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    state = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^ (uintptr_t)&ts;
    state |= 1;
  }
  char suffix[8];
  if (hook.sequential) {
    snprintf(suffix, sizeof suffix, "%06d", k % 1000000);
  } else {
    static const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (int i = 0; i < 6; i++) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17; /* xorshift64 */
      suffix[i] = abc[state % 36];
    }
    suffix[6] = 0;
  }
  const char *slash = strrchr(path, '/');
  int dn = slash ? (int)(slash - path + 1) : 0;
  size_t len = strlen(path) + 24;
  char *r = malloc(len);
  if (!r) dlc_die_oom();
  snprintf(r, len, "%.*s.%s.dlcgen-%s", dn, path, path + dn, suffix);
  return r;
}

#define NAME_ATTEMPTS 100

/* Creates a new temporary beside `path` (never following or reusing an
 * existing name) and writes `text` to it, with `mode`.  Returns its name
 * (malloc'ed), or NULL with errno and *step set. */
static char *write_temp(const char *path, const char *text, mode_t mode, const char **step) {
  int fd = -1;
  char *tmp = NULL;
  *step = "create a temporary file beside";
  if (injected("create")) return NULL;
  for (int k = 0; k < NAME_ATTEMPTS && fd < 0; k++) {
    free(tmp);
    tmp = side_name(path, k);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    int e = errno;
    free(tmp);
    errno = e;
    return NULL;
  }
  *step = "write";
  size_t n = strlen(text), off = 0;
  bool ok = !injected("write");
  while (ok && off < n) {
    ssize_t w = write(fd, text + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ok = false;
    else off += (size_t)w;
  }
  if (ok && mode && fchmod(fd, mode) != 0) ok = false;
  int e = errno;
  if (close(fd) != 0 && ok) ok = false, e = errno;
  if (!ok) {
    unlink(tmp);
    free(tmp);
    errno = e;
    return NULL;
  }
  return tmp;
}

/* Makes a backup name for `path`: a hard link to it (copying when the file
 * system has no hard links).  Returns the name, or NULL with errno set. */
static char *backup(const char *path) {
  if (injected("link")) return NULL;
  char *b = NULL;
  for (int k = 0; k < NAME_ATTEMPTS; k++) {
    free(b);
    b = side_name(path, k);
    if (link(path, b) == 0) return b;
    if (errno != EEXIST) break;
  }
  free(b);
  if (errno != EPERM && errno != EXDEV && errno != EMLINK && errno != ENOTSUP && errno != ENOSYS) return NULL;
  /* no hard links here: keep a copy */
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  struct stat st;
  char *text = NULL;
  if (fstat(fileno(f), &st) == 0 && (text = malloc((size_t)st.st_size + 1))) {
    size_t got = fread(text, 1, (size_t)st.st_size, f);
    text[got] = 0;
    if (got != (size_t)st.st_size || strlen(text) != got) free(text), text = NULL, errno = EIO;
  }
  fclose(f);
  if (!text) return NULL;
  const char *step;
  b = write_temp(path, text, st.st_mode & 07777, &step);
  free(text);
  return b;
}

/* ---- content --------------------------------------------------------------------- */

static bool same_content(const char *path, const char *text, size_t n) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  bool same = true;
  char buf[65536];
  size_t off = 0, k;
  while ((k = fread(buf, 1, sizeof buf, f)) > 0) {
    if (off + k > n || memcmp(buf, text + off, k) != 0) {
      same = false;
      break;
    }
    off += k;
  }
  if (off != n) same = false;
  fclose(f);
  return same;
}

/* ---- the transaction --------------------------------------------------------------- */

typedef struct step_rec {
  const char *path; /* the item's path */
  char *tmp;        /* prepared temporary (NULL once renamed, or none) */
  char *bak;        /* backup of the earlier file (NULL: there was none) */
  bool done;        /* applied: the rollback must undo it */
  bool remove;
} step_rec;

typedef struct txn {
  step_rec *s;
  int n;
  char **dirs; /* directories this run created, in creation order */
  int ndirs, capdirs;
  of_report *rep;
} txn;

static bool fail(txn *t, const char *path, const char *step) {
  t->rep->failed = path;
  t->rep->step = step;
  t->rep->err = errno;
  return false;
}

/* mkdir -p of the directory part of `path`, recording what it created. */
static bool make_parents(txn *t, const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n >= sizeof buf) {
    errno = ENAMETOOLONG;
    return false;
  }
  memcpy(buf, path, n + 1);
  char *last = strrchr(buf, '/');
  if (!last || last == buf) return true;
  *last = 0;
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p) continue;
    char c = *p;
    *p = 0;
    if (mkdir(buf, 0777) == 0) {
      if (t->ndirs == t->capdirs) {
        t->capdirs = t->capdirs ? 2 * t->capdirs : 8;
        t->dirs = realloc(t->dirs, sizeof(char *) * (size_t)t->capdirs);
        if (!t->dirs) dlc_die_oom();
      }
      t->dirs[t->ndirs++] = xstrdup(buf);
    } else if (errno != EEXIST) {
      return false;
    }
    struct stat st;
    if (stat(buf, &st) != 0) return false;
    if (!S_ISDIR(st.st_mode)) {
      errno = ENOTDIR;
      return false;
    }
    if (!c) break;
    *p = c;
  }
  return true;
}

static bool prepare(txn *t, const of_item *it, step_rec *s) {
  s->path = it->path;
  s->remove = !it->text;
  struct stat st;
  bool exists = lstat(it->path, &st) == 0;
  if (!exists && errno != ENOENT) return fail(t, it->path, "replace");
  if (s->remove) return true; /* checked when it is applied */
  /* a rename onto a regular file or a free name cannot fail for want of a
   * type check, so the other kinds of target are refused here */
  if (exists && !S_ISREG(st.st_mode)) {
    errno = S_ISDIR(st.st_mode) ? EISDIR : EEXIST;
    return fail(t, it->path, "replace");
  }
  size_t len = strlen(it->text);
  if (exists && same_content(it->path, it->text, len)) return true;
  if (!make_parents(t, it->path)) return fail(t, it->path, "create the directory of");
  const char *step;
  s->tmp = write_temp(it->path, it->text, exists ? st.st_mode & 07777 : 0, &step);
  return s->tmp ? true : fail(t, it->path, step);
}

static bool apply(txn *t, step_rec *s) {
  struct stat st;
  bool exists = lstat(s->path, &st) == 0;
  if (s->remove) {
    /* a stale output: only files (and links) are removed */
    if (!exists || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) return true;
    if (injected("remove")) return fail(t, s->path, "remove the stale output");
    for (int k = 0; k < NAME_ATTEMPTS && !s->bak; k++) {
      char *b = side_name(s->path, k);
      /* link + unlink rather than rename, which would replace a name
       * planted at b */
      if (link(s->path, b) == 0) s->bak = b;
      else free(b);
      if (!s->bak && errno != EEXIST) break;
    }
    if (!s->bak) return fail(t, s->path, "remove the stale output");
    if (unlink(s->path) != 0) {
      int e = errno;
      unlink(s->bak);
      free(s->bak);
      s->bak = NULL;
      errno = e;
      return fail(t, s->path, "remove the stale output");
    }
    s->done = true;
    return true;
  }
  if (!s->tmp) return true; /* unchanged */
  if (exists && !(s->bak = backup(s->path))) return fail(t, s->path, "back up");
  if (injected("rename") || rename(s->tmp, s->path) != 0) return fail(t, s->path, "rename the new file onto");
  free(s->tmp);
  s->tmp = NULL;
  s->done = true;
  return true;
}

/* Undoes every applied step, last first. */
static void rollback(txn *t) {
  for (int i = t->n - 1; i >= 0; i--) {
    step_rec *s = &t->s[i];
    if (!s->done) continue;
    bool ok = s->bak ? rename(s->bak, s->path) == 0 : unlink(s->path) == 0;
    if (ok) {
      free(s->bak);
      s->bak = NULL;
    } else if (!t->rep->lost) {
      t->rep->lost = s->path;
      snprintf(t->rep->kept, sizeof t->rep->kept, "%s", s->bak ? s->bak : "(none)");
    }
    s->done = false;
  }
}

bool of_commit(int n, const of_item *items, of_report *rep) {
  memset(rep, 0, sizeof *rep);
  hook_read();
  txn t = {calloc((size_t)n + 1, sizeof(step_rec)), n, NULL, 0, 0, rep};
  if (!t.s) dlc_die_oom();
  bool ok = true;
  for (int i = 0; i < n && ok; i++) ok = prepare(&t, &items[i], &t.s[i]);
  for (int i = 0; i < n && ok; i++) {
    ok = apply(&t, &t.s[i]);
    rep->changed |= t.s[i].done;
  }
  if (!ok) {
    rollback(&t);
    rep->changed = false;
  }
  for (int i = 0; i < n; i++) {
    /* a backup kept for a lost file stays; every other side file goes */
    if (t.s[i].bak && !(rep->lost && strcmp(rep->kept, t.s[i].bak) == 0)) unlink(t.s[i].bak);
    if (t.s[i].tmp) unlink(t.s[i].tmp);
    free(t.s[i].bak);
    free(t.s[i].tmp);
  }
  for (int i = t.ndirs - 1; i >= 0; i--) {
    if (!ok) rmdir(t.dirs[i]); /* only when empty: another writer may use it */
    free(t.dirs[i]);
  }
  free(t.dirs);
  free(t.s);
  return ok;
}
