/* The outputs of one dlcgen run, replaced as one transaction (README,
 * docs/manifest.md "All or nothing").
 *
 * of_commit() takes the list of files a run produces (and the stale files it
 * removes) and either applies all of it or leaves every earlier file byte for
 * byte as it was:
 *   1. prepare: each changed file is written to a fresh temporary beside it
 *      (created with O_CREAT|O_EXCL|O_NOFOLLOW under an unpredictable name, so
 *      a planted symlink is never followed); nothing is replaced yet;
 *   2. commit: each old file is first hard-linked to a backup name (also
 *      O_EXCL-style: link() never follows or replaces), then the temporary is
 *      renamed over it; a stale file is renamed to a backup; every step goes
 *      into a journal;
 *   3. a failure at any step rolls the journal back in reverse: backups are
 *      renamed back over the new files, new files are unlinked, directories
 *      the run created are removed.  On success the backups are unlinked.
 *
 * Test hooks (environment, read once; used by tests/diag/run_io_faults.cmake):
 *   DLCGEN_TEST_FAIL_IO=KIND:N   the Nth step of KIND fails with EIO, where
 *                                KIND is create, write, link, rename, remove or
 *                                any (the Nth step of any kind);
 *   DLCGEN_TEST_TEMP_NAMES=sequential   temporary and backup names end in
 *                                000000, 000001, ... instead of random
 *                                letters, so a test can plant a symlink there. */
#ifndef DLC_OUTFILES_H
#define DLC_OUTFILES_H

#include <stdbool.h>

typedef struct of_item {
  const char *path;
  const char *text; /* the new content; NULL removes the file (a stale output) */
} of_item;

typedef struct of_report {
  bool changed;       /* some file was replaced, created or removed */
  const char *failed; /* on failure: the path whose step failed (an item's path) */
  const char *step;   /* ... and the step, as a verb for "cannot <step> '<path>'" */
  int err;            /* ... and its errno */
  /* A file the rollback could not put back (NULL: none); its earlier
   * content is kept at `kept`. */
  const char *lost;
  char kept[4096];
} of_report;

/* Applies items[0..n) in order, all or nothing.  Items whose content is
 * already on disk are not touched.  Returns true on success; on failure the
 * report says which step failed and every earlier file is as it was (unless
 * rep->lost is set). */
bool of_commit(int n, const of_item *items, of_report *rep);

#endif
