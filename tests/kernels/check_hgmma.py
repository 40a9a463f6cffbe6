#!/usr/bin/env python3
"""The sm_90a SASS of every sm90a-row kernel (names ending in _sm90a) in a
library holds HGMMA in its steady-state loop and spills nothing: the
figures of bench/sass_stats (cuobjdump from the CUDA install or PyPI's
nvidia-cuda-cuobjdump).  With --with-bucket each op after it (up to
--no-bucket) must also have a shape bucket's sm90a kernel (dlc_<op>_<instance>_b<i>_sm90a).  Exit 77 (CTest's
skip) when cuobjdump is missing.

usage: check_hgmma.py SASS_STATS LIB [--with-bucket OP... --no-bucket] OP..."""
import csv
import io
import re
import subprocess
import sys


def main():
    stats, lib = sys.argv[1], sys.argv[2]
    # --with-bucket applies to the ops after it, --no-bucket ends it
    need_bucket, ops, bucket = set(), [], False
    for a in sys.argv[3:]:
        if a in ("--with-bucket", "--no-bucket"):
            bucket = a == "--with-bucket"
            continue
        ops.append(a)
        if bucket:
            need_bucket.add(a)
    r = subprocess.run([sys.executable, stats, "--lib", lib, "--arch", "sm_90a", "--filter", "_sm90a", "--csv"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr.strip())
        return 77 if "not found" in r.stderr else 1
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    bad = 0
    for op in ops:
        # dlc_<op>_<instance>_sm90a, not another op's whose name extends op's
        longer = [o for o in ops if o != op and o.startswith(op)]
        mine = [x for x in rows if x["kernel"].startswith("dlc_%s_" % op) and x["arch"] == "sm_90a" and
                not any(x["kernel"].startswith("dlc_%s_" % o) for o in longer)]
        if not mine:
            print("FAIL: no sm90a-row kernel of %s in %s" % (op, lib))
            bad += 1
        if op in need_bucket and not any(re.search(r"_b[0-9]+_sm90a$", x["kernel"]) for x in mine):
            print("FAIL: no shape bucket's sm90a-row kernel of %s in %s" % (op, lib))
            bad += 1
        for x in mine:
            ok = int(x["mma"]) > 0 and int(x["spill"]) == 0
            print("%s %s: %s HGMMA in the loop, %s non-MMA instructions per HGMMA, %s spill instructions" %
                  ("ok" if ok else "FAIL:", x["kernel"], x["mma"], x["nonmma/mma"], x["spill"]))
            bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
