#!/usr/bin/env python3
"""The CUDA backend launches dispatch row `index` of op `op` through
dlc__fns_<op>[index], the kernel handle array each generated kernels/<op>.cu
defines (libkernels/backend_cuda.c).  Nothing but a GPU run would notice a
handle array out of step with the rows (the emulator and null backends look
kernels up by name), so this reads both from a dlcgen output directory and
checks, for every op, that row i has index i and that handle i names row i's
kernel, with as many handles as rows.

usage: check_fns_order.py GENERATED_DIR   (the --out of dlcgen)
"""
import os
import re
import sys

ROWS = re.compile(r"static const dlc__kernel dlc__k_(\w+)\[\] = \{\n(.*?)\n\};", re.S)
ROW = re.compile(r'^\s*\{"(\w+)", (\d+), (\d+),')
FNS = re.compile(r"extern const void \*const dlc__fns_(\w+)\[\] = \{\n(.*?)\n\};", re.S)
HANDLE = re.compile(r"^\s*\(const void \*\)(\w+),$")


def main(out):
    with open(os.path.join(out, "src", "dlc_dispatch.c")) as f:
        dispatch = f.read()
    rows = {}
    for op, body in ROWS.findall(dispatch):
        rows[op] = []
        for line in body.splitlines():
            m = ROW.match(line)
            if not m:
                sys.exit(f"{op}: dispatch row not understood: {line.strip()}")
            rows[op].append((m.group(1), int(m.group(3))))
    if not rows:
        sys.exit("no dlc__k_<op> table in src/dlc_dispatch.c")
    fns = {}
    kdir = os.path.join(out, "kernels")
    for name in sorted(os.listdir(kdir)):
        if not name.endswith(".cu"):
            continue
        with open(os.path.join(kdir, name)) as f:
            for op, body in FNS.findall(f.read()):
                handles = []
                for line in body.splitlines():
                    m = HANDLE.match(line)
                    if not m:
                        sys.exit(f"{name}: handle not understood: {line.strip()}")
                    handles.append(m.group(1))
                fns[op] = handles
    bad = 0
    for op, table in rows.items():
        handles = fns.get(op)
        if handles is None:
            print(f"{op}: no dlc__fns_{op} in kernels/*.cu")
            bad += 1
            continue
        if len(handles) != len(table):
            print(f"{op}: {len(table)} dispatch rows but {len(handles)} kernel handles")
            bad += 1
        for i, (kname, index) in enumerate(table):
            if index != i:
                print(f"{op}: row {i} ({kname}) says index {index}")
                bad += 1
            elif i < len(handles) and handles[i] != kname:
                print(f"{op}: row {i} is {kname} but dlc__fns_{op}[{i}] is {handles[i]}")
                bad += 1
    for op in fns:
        if op not in rows:
            print(f"dlc__fns_{op}: no dispatch table for it")
            bad += 1
    n = sum(len(t) for t in rows.values())
    print(f"{len(rows)} ops, {n} dispatch rows: {'every handle in step' if not bad else f'{bad} mismatches'}")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
