#!/usr/bin/env python3
"""Compares two output dumps of test_every_kernel (--dump FILE): an emulator
run and a GPU run of the same library on the same manifest, which make the
same calls on the same inputs.

    compare_dumps.py EMU.bin GPU.bin

Each record of a dump is a line `op|call|dims|output|dtype|elements` and then the
elements, row-major, in the output's dtype.  For each op this prints how many
elements are bit-identical, and the largest difference in units in the last
place of the output's dtype (fp16: 10 fraction bits, bf16: 7, fp32: 23) at
the larger of the two values, and the largest difference over the largest
magnitude of the output it is in (an ulp count inflates where a sum cancels
to near zero; this does not).
It exits 1 when the two dumps do not hold the same calls, or when any element
is NaN in one dump and not the other.  Standard library only."""
import math
import struct
import sys
from collections import OrderedDict

FRACTION_BITS = {"fp16": 10, "bf16": 7, "fp32": 23}
BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def decode(dtype, raw):
    if dtype == "fp16":
        return list(struct.unpack("<%de" % (len(raw) // 2), raw))
    if dtype == "bf16":
        halves = struct.unpack("<%dH" % (len(raw) // 2), raw)
        return list(struct.unpack("<%df" % len(halves), struct.pack("<%dI" % len(halves), *[h << 16 for h in halves])))
    return list(struct.unpack("<%df" % (len(raw) // 4), raw))


def read(path):
    records = OrderedDict()
    with open(path, "rb") as f:
        data = f.read()
    at = 0
    while at < len(data):
        end = data.index(b"\n", at)
        op, call, dims, name, dtype, n = data[at:end].decode().split("|")
        n = int(n)
        at = end + 1
        raw = data[at:at + n * BYTES[dtype]]
        if len(raw) != n * BYTES[dtype]:
            raise SystemExit("%s: record %s %s %s is cut short" % (path, op, call, name))
        at += len(raw)
        records[(op, call, dims, name)] = (dtype, raw)
    return records


def ulps(a, b, dtype):
    """|a - b| in units in the last place of dtype at the larger magnitude."""
    m = max(abs(a), abs(b))
    if m == 0:
        return 0.0
    e = math.frexp(m)[1] - 1
    return abs(a - b) / math.ldexp(1.0, e - FRACTION_BITS[dtype])


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    emu, gpu = read(argv[1]), read(argv[2])
    ok = True
    if emu.keys() != gpu.keys():
        only = [k for k in emu if k not in gpu][:3] + [k for k in gpu if k not in emu][:3]
        print("the dumps hold different calls, e.g. %s" % only)
        ok = False
    per_op = OrderedDict()
    for key in emu:
        if key not in gpu:
            continue
        dtype, raw_e = emu[key]
        _, raw_g = gpu[key]
        a, b = decode(dtype, raw_e), decode(dtype, raw_g)
        s = per_op.setdefault(key[0], {"calls": 0, "n": 0, "same": 0, "max_ulp": 0.0, "nan": 0, "max_rel": 0.0})
        scale = max([abs(v) for v in a + b if math.isfinite(v)] + [0.0])
        s["calls"] += 1
        s["n"] += len(a)
        w = BYTES[dtype]
        for i, (x, y) in enumerate(zip(a, b)):
            if raw_e[i * w:(i + 1) * w] == raw_g[i * w:(i + 1) * w]:
                s["same"] += 1
            elif math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
                s["nan"] += 1
            else:
                s["max_ulp"] = max(s["max_ulp"], ulps(x, y, dtype))
                if scale > 0:
                    s["max_rel"] = max(s["max_rel"], abs(x - y) / scale)
    print("%-22s %6s %10s %14s %10s %14s %8s" % ("op", "calls", "elements", "bit-identical", "max ulp",
                                                  "max diff/max", "NaN/Inf"))
    for op, s in per_op.items():
        print("%-22s %6d %10d %13.2f%% %10.1f %14.2e %8d" % (op, s["calls"], s["n"], 100.0 * s["same"] / max(s["n"], 1),
                                                            s["max_ulp"], s["max_rel"], s["nan"]))
        ok = ok and s["nan"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
