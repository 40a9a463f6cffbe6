#!/usr/bin/env python3
"""tinygrad as an oracle for dlc's playback (issue 14, docs/testing.md).

Each case is built a second time with tinygrad's public Tensor API and run on
tinygrad's CPU backend (DEV=CPU), on the inputs that dlc's playback got, and
the two results are compared within the playback tolerance (pbtest.h):
    |dlc - tinygrad| <= tol * (S + |tinygrad|),  S = max |tinygrad| over the output,
tol = 1e-3 for fp32 and fp16 outputs, 4 * 2^-8 for bf16.

    tinygrad_oracle.py graphs  --oracle-pb EXE --dlcgen EXE CASE...
        CASE is FILE[:dtype][:NAME=V,...][:dom,...][:attrs JSON]; oracle_pb
        plays the graph back and prints the Frontend dump, the inputs and the
        outputs; the graph is rebuilt node by node from the Frontend dump.
        In graphs without a contraction, the REDUCE UOps of dlc's Tiny DAG
        and of tinygrad's graph are compared too: op, source shape, axes.
        With --emu MANIFEST EXE (any number): a graph that MANIFEST compiles
        (an op whose "graph" is the case's file) also runs through its
        kernels: EXE (oracle_emu, linked with that manifest's library) calls
        dlc_<op> in the PTX emulator on the same inputs, and its outputs are
        compared with tinygrad's within the same tolerance; inputs that a
        kernel multiplies in TF32 are rounded to TF32 for that comparison
        (tinygrad runs again on them), as the kernel tests do (kt.h).
    tinygrad_oracle.py chains  --pb-chains EXE [--count N]
        the movement-chain generator's random and symbolic chains
        (pb_chains dump): each chain is replayed with Tensor movement ops, the
        values compared exactly (movement ops do no arithmetic), and where
        tinygrad keeps one UOp per Tensor call (no strided slices) the
        movement UOps of tinygrad's graph are compared one by one, op and
        shape, with those of dlc's Tiny DAG.
    tinygrad_oracle.py gathers --oracle-pb EXE [--count N]
        random chains of Flip, Pad, Slice, Transpose and Gather (indices in
        [-1, size], so some out of range), written as graphs and compared as
        above; oracle_pb also checks every IndexBook view against playback.
    tinygrad_oracle.py negative --oracle-pb EXE --pb-chains EXE CASE
        the comparisons must fail where they should: a perturbed playback
        output, a graph rebuilt with a wrong attribute, a chain replayed with
        one op changed, a UOp sequence with one op changed, and (for the
        further CASEs) a Tiny REDUCE with another op or axis must each be
        reported as a mismatch; with --emu, a case that a library compiles
        run through its kernels on an input with one element changed too.

Exit status: 0 when everything agrees, 1 on a mismatch, 77 (CTest's skip)
when tinygrad is not installed.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import struct
import tempfile

os.environ.setdefault("DEV", "CPU")
try:
    from tinygrad import Tensor, dtypes
    from tinygrad.uop.ops import Ops
except ImportError as e:
    print(f"tinygrad is not installed ({e}): pip install tinygrad==0.14.0", file=sys.stderr)
    sys.exit(77)

def version():
    try:
        from importlib.metadata import version as v
        return v("tinygrad")
    except Exception:
        return "?"


# bf16 values are held in float32 and rounded to bf16 (to_dtype): tinygrad's
# CPU backend compiles bf16 kernels with clang, and clang 14 (Debian 12) has
# no __bf16 on x86-64.
DT = {"fp32": dtypes.float32, "fp16": dtypes.float16, "bf16": dtypes.float32, "int32": dtypes.int32}


def to_dtype(t, name):
    """t rounded to dtype `name`; bf16 by round-to-nearest-even of the float32
    bits (NaN stays NaN: its payload is not rounded into infinity)."""
    if name != "bf16":
        return t.cast(DT[name])
    u = t.cast(dtypes.float32).contiguous().bitcast(dtypes.uint32)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).bitcast(dtypes.float32)
    return t.isnan().where(t.cast(dtypes.float32), r)
TOL = {"fp32": 1e-3, "fp16": 1e-3, "bf16": 4 * 2.0 ** -8}


def close(what, got, want, dtype, report):
    """pbtest's rule: (every element of got within tolerance, the largest
    ratio of error to allowance)."""
    if len(got) != len(want):
        report.append(f"{what}: {len(got)} elements, tinygrad {len(want)}")
        return False, math.inf
    tol = TOL[dtype]
    s = max((abs(w) for w in want if math.isfinite(w)), default=0.0)
    bad, worst = 0, 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        if math.isnan(g) and math.isnan(w):
            continue
        if math.isinf(w) or math.isinf(g):
            ok = g == w
            ratio = 0.0 if ok else math.inf
        else:
            allow = tol * (s + abs(w))
            err = abs(g - w)
            ok = err <= allow
            ratio = err / allow if allow > 0 else (0.0 if err == 0 else math.inf)
        worst = max(worst, ratio)
        if not ok:
            if bad < 5:
                report.append(f"{what}[{i}]: dlc {g!r}, tinygrad {w!r}")
            bad += 1
    if bad:
        report.append(f"{what}: {bad} of {len(got)} elements differ (worst error/allowance {worst:.3g})")
    return bad == 0, worst


def f32(vals):
    """Values rounded to float32.  cJSON prints a double with 15 significant
    digits when that reads back within DBL_EPSILON, enough to give back
    every float32 exactly but not every double; JSON null (a NaN or an
    infinity, which cJSON cannot print) becomes NaN."""
    return [math.nan if v is None else struct.unpack("f", struct.pack("f", v))[0] for v in vals]


def flat(t):
    """A tinygrad tensor's values, row-major, as Python floats."""
    v = t.tolist()
    out = []

    def walk(x):
        if isinstance(x, list):
            for y in x:
                walk(y)
        else:
            out.append(float(x))

    walk(v)
    return out


def tensor_of(data, shape, dtype):
    t = Tensor(data if data else [0.0], dtype=dtypes.float32)
    if not data:
        t = t.shrink(((0, 0),))
    return to_dtype(t.reshape(tuple(shape)), dtype)


# ---- Frontend graphs ----------------------------------------------------------------------


def axis(a, rank):
    return a + rank if a < 0 else a


def size(v, bind):
    """A size attribute: an integer, or a size expression of bound dims."""
    if isinstance(v, (int, float)):
        return int(v)
    expr = v.replace("/", "//")
    return int(eval(expr, {"__builtins__": {}}, dict(bind, floor=lambda x: x)))


def ewise(fn, xs, attrs):
    x = xs[0]
    if "scalar" in attrs:
        xs = xs + [float(attrs["scalar"])]
    y = xs[1] if len(xs) > 1 else None
    z = xs[2] if len(xs) > 2 else None
    table = {
        "add": lambda: x + y,
        "sub": lambda: x - y,
        "mul": lambda: x * y,
        "div": lambda: x / y,
        "max": lambda: x.maximum(y),
        "min": lambda: x.minimum(y),
        "neg": lambda: -x,
        "abs": lambda: x.abs(),
        "relu": lambda: x.relu(),
        "sigmoid": lambda: x.sigmoid(),
        "silu": lambda: x.silu(),
        "tanh": lambda: x.tanh(),
        "gelu_tanh": lambda: x.gelu(),
        "gelu": lambda: 0.5 * x * (1 + (x * (1 / math.sqrt(2))).erf()),
        "erf": lambda: x.erf(),
        "sign": lambda: x.sign(),
        "softplus": lambda: x.softplus(),
        "mish": lambda: x.mish(),
        "hardswish": lambda: x.hardswish(),
        "exp": lambda: x.exp(),
        "exp2": lambda: x.exp2(),
        "log": lambda: x.log(),
        "sqrt": lambda: x.sqrt(),
        "rsqrt": lambda: x.rsqrt(),
        "recip": lambda: x.reciprocal(),
        "pow": lambda: x.pow(y),
        "clamp_min": lambda: x.maximum(y),
        "clamp_max": lambda: x.minimum(y),
        "leaky_relu": lambda: (x > 0).where(x, x * y),
        "clamp": lambda: x.maximum(y).minimum(z),
        "where": lambda: (x != 0).where(y, z),
        "cast": lambda: to_dtype(x, attrs["to"]),
    }
    if fn not in table:
        raise NotImplementedError(f"elementwise function {fn}")
    return table[fn]()


def build_node(node, xs, tensors, bind):
    op, attrs = node["op"], node.get("attrs", {})
    x = xs[0]
    rank = len(x.shape)
    acc = DT.get(attrs.get("acc_dtype"), dtypes.float32)
    if op == "GEMM":
        return xs[0].cast(acc).matmul(xs[1].cast(acc), dtype=acc)
    if op == "Conv2D":
        w = xs[1]
        nchw = tensors[node["inputs"][0]].get("layout") == "NCHW"
        kcrs = tensors[node["inputs"][1]].get("layout") == "KCRS"
        if not nchw:
            x = x.permute(0, 3, 1, 2)
        if not kcrs:
            w = w.permute(0, 3, 1, 2)
        pair = lambda v, d: tuple(v) if isinstance(v, list) else (v, v) if v is not None else (d, d)
        y = x.cast(acc).conv2d(w.cast(acc), stride=pair(attrs.get("stride"), 1), dilation=pair(attrs.get("dilation"), 1),
                                padding=pair(attrs.get("pad"), 0), dtype=acc)
        return y if nchw else y.permute(0, 2, 3, 1)
    if op == "Attention":
        q, k, v = (t.cast(acc) for t in xs)
        s = q.matmul(k.transpose(-1, -2), dtype=acc)
        if "scale" in attrs:
            s = s * float(attrs["scale"])
        if attrs.get("causal"):
            S, T = s.shape[-2], s.shape[-1]
            keep = Tensor.ones(S, T, dtype=dtypes.bool).tril(0)
            s = keep.where(s, -math.inf)
        return s.softmax(-1).matmul(v, dtype=acc)
    if op == "Elementwise":
        return ewise(node["fn"], xs, attrs)
    if op == "Reduce":
        axes = tuple(axis(a, rank) for a in attrs["axes"])
        r = attrs["op"]
        xa = x.cast(acc) if "acc_dtype" in attrs else x
        if r == "sum":
            return xa.sum(axes, dtype=acc) if "acc_dtype" in attrs else xa.sum(axes)
        if r == "mean":
            return xa.mean(axes)
        if r == "max":
            return xa.max(axes)
        if r == "min":
            return xa.min(axes)
        raise NotImplementedError(f"Reduce op {r}")
    if op == "Softmax":
        return x.cast(dtypes.float32).softmax(axis(attrs.get("axis", -1), rank))
    if op == "Transpose":
        return x.permute(tuple(attrs["perm"]))
    if op == "Reshape":
        return x.reshape(tuple(size(s, bind) for s in attrs["shape"]))
    if op == "Cast":
        return to_dtype(x, attrs["to"])
    if op == "Pad":
        return x.pad(tuple((size(lo, bind), size(hi, bind)) for lo, hi in attrs["pads"]), value=attrs.get("value", 0.0))
    if op == "Slice":
        steps = attrs.get("steps", [1] * rank)
        return x[tuple(slice(size(a, bind), size(b, bind), s) for a, b, s in zip(attrs["starts"], attrs["ends"], steps))]
    if op == "Flip":
        return x.flip(tuple(axis(a, rank) for a in attrs["axes"]))
    if op == "Expand":
        return x.expand(tuple(size(s, bind) for s in attrs["shape"]))
    if op == "Gather":  # tinygrad's gather reads 0 for an index out of range, as dlc's
        return x.gather(axis(attrs["dim"], rank), xs[1])
    if op == "Tile":  # torch's Tensor.repeat, which tinygrad's repeat follows
        return x.repeat(tuple(attrs["repeats"]))
    raise NotImplementedError(f"Frontend op {op}")


def run_tinygrad(doc, mutate=None, uops=None):
    """Rebuilds the Frontend dump in tinygrad on doc's inputs; returns the
    outputs by name.  `mutate(node)` may change a node first (negative tests);
    `uops` (a list) receives the outputs' UOp graphs before they run."""
    fe, bind = doc["frontend"], doc["bind"]
    tensors = fe["tensors"]
    env = {i["name"]: tensor_of(i["data"], i["shape"], i["dtype"]) for i in doc["inputs"]}
    for node in fe["graph"]:
        if mutate:
            node = mutate(node)
        y = build_node(node, [env[n] for n in node["inputs"]], tensors, bind)
        out = node["outputs"][0]
        env[out] = to_dtype(y, tensors[out]["dtype"])  # every value in the dtype dlc gives it
    if uops is not None:
        uops.extend(env[o["name"]].uop for o in doc["outputs"])
    return {o["name"]: env[o["name"]].realize() for o in doc["outputs"]}


# tinygrad writes min as -max(-x)
RED_OP = {"SUM": "ADD", "MAX": "MAX", "MIN": "MAX"}


def tiny_reductions(doc):
    """dlc's Tiny REDUCEs as (op, source shape, reduced axes), leaving out
    size-1 axes, which tinygrad reshapes away instead of reducing."""
    uops = doc["tiny"]["uops"]
    by_out = {u["out"]: u for u in uops}
    out = []
    for u in uops:
        if u["uop"] != "REDUCE":
            continue
        shape = by_out[u["src"][0]]["shape"]
        axes = tuple(a for a in sorted(u["arg"]["axes"]) if shape[a] != 1)
        if axes:
            out.append((RED_OP[u["arg"]["op"]], tuple(shape), axes))
    return sorted(out)


def uop_reductions(roots):
    """tinygrad's REDUCE UOps as (op, source shape, reduced axes): its
    Tensor reductions permute the reduced axes to the front and reduce the
    first arg[1] of them."""
    seen, stack, out = set(), list(roots), []
    while stack:
        u = stack.pop()
        if id(u) in seen:
            continue
        seen.add(id(u))
        stack.extend(u.src)
        if u.op != Ops.REDUCE:
            continue
        op, n = u.arg
        src = u.src[0]
        if src.op == Ops.PERMUTE:
            shape, axes = tuple(src.src[0].shape), tuple(sorted(src.arg[:n]))
        else:
            shape, axes = tuple(src.shape), tuple(range(n))
        out.append((op.name, tuple(int(s) for s in shape), axes))
    return sorted(out)


def compare_reductions(doc, roots, report):
    """Graphs without a contraction (GEMM, Conv2D and Attention are a REDUCE
    in tinygrad and a CONTRACT in dlc) and without a Gather (a one-hot sum in
    tinygrad, a GATHER in dlc): the reductions must be the same ops over the
    same axes of the same shapes.  None when not compared."""
    if any(u["uop"] == "CONTRACT" for u in doc["tiny"]["uops"]) or \
            any(n["op"] in ("GEMM", "Conv2D", "Attention", "Gather") for n in doc["frontend"]["graph"]):
        return None
    mine, theirs = tiny_reductions(doc), uop_reductions(roots)
    if mine != theirs:
        report.append(f"reductions: dlc {mine}, tinygrad {theirs}")
        return False
    return len(mine)


def playback(exe, case):
    """Runs oracle_pb on one CASE string; returns its JSON document."""
    parts = case.split(":", 4)
    cmd = [exe, parts[0]]
    if len(parts) > 1 and parts[1]:
        cmd += ["--dtype", parts[1]]
    if len(parts) > 2 and parts[2]:
        for b in parts[2].split(","):
            cmd += ["--bind", b]
    if len(parts) > 3 and parts[3]:
        cmd += ["--dom", parts[3]]
    if len(parts) > 4 and parts[4]:
        cmd += ["--attrs", parts[4]]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return json.loads(p.stdout)


def compare_graph(doc, tg, report, perturb=False):
    ok, worst = True, 0.0
    for o in doc["outputs"]:
        t = tg[o["name"]]
        if list(t.shape) != o["shape"]:
            report.append(f"{o['name']}: dlc shape {o['shape']}, tinygrad {list(t.shape)}")
            ok = False
            continue
        got = [math.nan if v is None else v for v in o["data"]]
        if perturb and got:
            i = len(got) // 2
            got[i] += 0.01 * (1 + abs(got[i]))  # ten times the fp32 allowance
        good, w = close(o["name"], got, flat(t), o["dtype"], report)
        ok &= good
        worst = max(worst, w)
    return ok, worst


def emu_ops(emus):
    """graph file's real path -> [(op name, exe)] over the ops of the --emu
    manifests (several ops may compile one graph: in fp16 and in fp32)."""
    out = {}
    for manifest, exe in emus:
        with open(manifest) as f:
            m = json.load(f)
        base = os.path.dirname(os.path.abspath(manifest))
        for op in m.get("ops", []):
            if isinstance(op.get("graph"), str):
                out.setdefault(os.path.realpath(os.path.join(base, op["graph"])), []).append((op["name"], exe))
    return out


def tf32(v):
    """kt_tf32: fp32 rounded to TF32 (10 mantissa bits, to nearest, ties away)."""
    x = struct.unpack("<I", struct.pack("<f", v))[0]
    if (x & 0x7F800000) != 0x7F800000:
        x = (x + 0x1000) & 0xFFFFE000
    return struct.unpack("<f", struct.pack("<I", x))[0]


def compare_emu(doc, tg, op, exe, report, ref_doc=None):
    """dlc_<op>'s kernels in the emulator on doc's inputs against tinygrad's
    outputs tg (on ref_doc's inputs, doc's by default): (ok, worst, the
    kernels that ran); None when the library has no instance for the case."""
    p = subprocess.run([exe, op], input=json.dumps(doc), capture_output=True, text=True)
    if p.returncode != 0:
        report.append(f"emulator: {exe} {op}: exit {p.returncode}: {p.stderr.strip()}")
        return False, math.inf, ""
    res = json.loads(p.stdout)
    if "skip" in res:
        return None
    if res["tf32"]:
        rounded = json.loads(json.dumps(ref_doc or doc))
        for i in rounded["inputs"]:
            if i["name"] in res["tf32"]:
                i["data"] = [tf32(v) for v in i["data"]]
        tg = run_tinygrad(rounded)
    ok, worst = True, 0.0
    for o in res["outputs"]:
        dt = next(x["dtype"] for x in doc["outputs"] if x["name"] == o["name"])
        got = [math.nan if v is None else v for v in o["data"]]
        good, w = close(f"{o['name']} (emulator)", got, flat(tg[o["name"]]), dt, report)
        ok &= good
        worst = max(worst, w)
    return ok, worst, "+".join(res["kernels"])


def cmd_graphs(a):
    fails = nred = nemu = 0
    emus = emu_ops(a.emu)
    for case in a.cases:
        report, n, red, emu, lib = [], 0, None, None, None
        try:
            doc = playback(a.oracle_pb, case)
            n = sum(len(o["data"]) for o in doc["outputs"])
            roots = []
            tg = run_tinygrad(doc, uops=roots)
            ok, worst = compare_graph(doc, tg, report)
            red = compare_reductions(doc, roots, report)
            ok &= red is not False
            for op, exe in emus.get(os.path.realpath(case.split(":")[0]), []):
                lib = (op, exe)
                emu = compare_emu(doc, tg, op, exe, report)
                if emu:
                    ok &= emu[0]
                    nemu += 1
                    break
        except Exception as e:  # a graph the oracle cannot build is a failure too
            ok, worst = False, math.nan
            report.append(f"{type(e).__name__}: {e}")
        nred += red or 0
        parts = case.split(":")
        print(f"{os.path.basename(parts[0]):32s} {parts[1] if len(parts) > 1 and parts[1] else 'fp32':5s} "
              f"{parts[2] if len(parts) > 2 else '':28s} {n:7d} elems  worst/allowed {worst:.3f}  "
              f"{'' if red is None else f'reduces {red} same  '}{'ok' if ok else 'FAILED'}")
        if emu:
            print(f"  emulator: dlc_{lib[0]} ran {emu[2]}, worst/allowed {emu[1]:.3f}")
        elif lib:
            print("  emulator: no op of the libraries has an instance for this case (dtype or compile-time dims)")
        for r in report:
            print("  " + r)
        fails += not ok
    print(f"{len(a.cases)} graphs against tinygrad {version()}, {nred} reductions compared UOp by UOp, "
          f"{nemu} run through their kernels in the emulator: {'ok' if not fails else f'{fails} FAILED'}")
    return 1 if fails else 0


# ---- movement chains ----------------------------------------------------------------------

MOVE = {Ops.RESHAPE: "RESHAPE", Ops.PERMUTE: "PERMUTE", Ops.EXPAND: "EXPAND", Ops.PAD: "PAD", Ops.SHRINK: "SHRINK",
        Ops.FLIP: "FLIP"}


def replay_chain(ch, mutate=None):
    x = tensor_of(ch["input"], ch["shape"], "fp32").realize()
    x0 = x.uop
    strided = False
    for i, op in enumerate(ch["ops"]):
        if mutate:
            op = mutate(i, op)
        k = op["op"]
        if k == "reshape":
            x = x.reshape(tuple(op["shape"]))
        elif k == "expand":
            x = x.expand(tuple(op["shape"]))
        elif k == "permute":
            x = x.permute(tuple(op["perm"]))
        elif k == "pad":
            x = x.pad(tuple(zip(op["lo"], op["hi"])), value=op["value"])
        elif k == "shrink":
            if any(s != 1 for s in op["step"]):
                strided = True
                x = x[tuple(slice(lo, hi, s) for lo, hi, s in zip(op["lo"], op["hi"], op["step"]))]
            else:
                x = x.shrink(tuple(zip(op["lo"], op["hi"])))
        elif k == "flip":
            x = x.flip(tuple(a for a, f in enumerate(op["flip"]) if f)) if any(op["flip"]) else x
        else:
            raise NotImplementedError(k)
    return x, strided, x0


def uop_moves(u, x0):
    """The movement UOps from u down to the chain's input x0, first op first,
    each as (op, shape, arg), arg a PERMUTE's perm or a FLIP's flags.  A PAD
    with a value is WHERE(PAD(mask), PAD(x), value) in tinygrad 0.14: the
    value path is followed."""
    seq = []
    while u is not x0:
        if u.op in MOVE:
            arg = [int(a) for a in u.arg] if u.op in (Ops.PERMUTE, Ops.FLIP) else None
            seq.append((MOVE[u.op], list(u.shape), arg))
            u = u.src[0]
        elif u.op == Ops.WHERE:
            u = u.src[1]
        else:
            break
    return seq[::-1]


def tiny_moves(ch):
    return [(m["op"], m["shape"], m.get("arg")) for m in ch["tiny"]]


def canonical(seq, shape0):
    """A movement sequence with what tinygrad's Tensor API folds folded on
    either side: a RESHAPE to its source's shape and an identity PERMUTE are
    dropped, consecutive RESHAPEs become the last one, consecutive PERMUTEs
    their composition."""
    out, shape = [], list(shape0)
    for op, sh, arg in seq:
        if op == "RESHAPE" and out and out[-1][0] == "RESHAPE":
            out.pop()
            shape = out[-1][1] if out else list(shape0)
        if op == "PERMUTE" and out and out[-1][0] == "PERMUTE":
            prev = out.pop()
            arg = [prev[2][a] for a in arg]
            shape = out[-1][1] if out else list(shape0)
        if op == "RESHAPE" and sh == shape:
            continue
        if op == "PERMUTE" and arg == sorted(arg):
            continue
        out.append((op, sh, arg))
        shape = sh
    return out


def cmd_chains(a):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "chains.jsonl")
        p = subprocess.run([a.pb_chains, "dump", path, str(a.count)], capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stdout + p.stderr)
            print("pb_chains dump failed")
            return 1
        chains = [json.loads(line) for line in open(path)]
    fails = nuop = uop_same = 0
    for ch in chains:
        x, strided, x0 = replay_chain(ch)
        report = []
        if list(x.shape) != ch["output_shape"]:
            report.append(f"shape: dlc {ch['output_shape']}, tinygrad {list(x.shape)}")
        elif f32(flat(x)) != f32(ch["output"]):
            report.append("values differ")
        # tinygrad 0.14 writes Tensor.expand as RESHAPE + EXPAND + PERMUTE
        # (new axes in front): values only for chains with an expand
        if not strided and not any(o["op"] == "expand" for o in ch["ops"]):
            nuop += 1
            mine, theirs = canonical(tiny_moves(ch), ch["shape"]), canonical(uop_moves(x.uop, x0), ch["shape"])
            if mine == theirs:
                uop_same += 1
            else:
                report.append(f"UOps: dlc {mine}\n    tinygrad {theirs}")
        if report:
            fails += 1
            print(f"{ch['label']}: FAILED\n  ops {[o['op'] for o in ch['ops']]}")
            for r in report:
                print("  " + r)
    print(f"{len(chains)} movement chains replayed in tinygrad, values equal: {len(chains) - fails} ; "
          f"{nuop} without strided slices compared UOp by UOp, {uop_same} identical; "
          f"{'ok' if not fails else f'{fails} FAILED'}")
    return 1 if fails else 0


# ---- random gather, flip and pad chains ---------------------------------------------------


def random_gather_chain(rng):
    """A random Frontend graph: X through 2 to 5 of Flip, Pad, Slice,
    Transpose and Gather (at least one), each Gather with an int32 index
    input of its own; concrete sizes.  Returns (graph, domains)."""
    rank = rng.randint(1, 3)
    shape = [rng.randint(1, 5) for _ in range(rank)]
    tensors = {"X": {"dtype": "T", "shape": list(shape)}}
    inputs, doms, nodes, cur = [{"tensor": "X"}], ["any"], [], "X"
    n = rng.randint(2, 5)
    kinds = [rng.choice(["flip", "pad", "slice", "transpose", "gather"]) for _ in range(n)]
    if "gather" not in kinds:
        kinds[rng.randrange(n)] = "gather"
    for i, k in enumerate(kinds):
        out, at = f"t{i}", {}
        if k == "flip":
            op, at = "Flip", {"axes": sorted(rng.sample(range(rank), rng.randint(1, rank)))}
        elif k == "pad":
            pads = [[rng.randint(0, 2), rng.randint(0, 2)] for _ in range(rank)]
            op, at = "Pad", {"pads": pads, "value": rng.choice([0.0, 1.5, -1.0])}
            shape = [s + lo + hi for s, (lo, hi) in zip(shape, pads)]
        elif k == "slice":
            st = [rng.randint(0, s - 1) for s in shape]
            en = [rng.randint(a + 1, s) for a, s in zip(st, shape)]
            sp = [rng.randint(1, 2) for _ in shape]
            op, at = "Slice", {"starts": st, "ends": en, "steps": sp}
            shape = [-(-(e - a) // p) for a, e, p in zip(st, en, sp)]
        elif k == "transpose":
            perm = list(range(rank))
            rng.shuffle(perm)
            op, at = "Transpose", {"perm": perm}
            shape = [shape[p] for p in perm]
        else:
            d = rng.randrange(rank)
            ishape = list(shape)
            ishape[d] = rng.randint(1, 5)
            name = f"I{i}"
            tensors[name] = {"dtype": "int32", "shape": ishape}
            inputs.append({"tensor": name})
            doms.append(f"idx{shape[d]}")  # [-1, size]: both ends out of range
            op, at = "Gather", {"dim": d - rank if rng.random() < 0.5 else d}
            shape = ishape
        ins = [cur] + ([f"I{i}"] if k == "gather" else [])
        nodes.append({"op": op, "name": f"n{i}", "inputs": ins, "outputs": [out], "attrs": at})
        cur = out
    nodes[-1]["outputs"] = ["Y"]
    tensors["Y"] = {"dtype": "T", "shape": list(shape)}
    graph = {"name": "gather_chain", "signature": {"dims": [], "inputs": inputs, "outputs": [{"tensor": "Y"}]},
             "tensors": tensors, "graph": nodes}
    return graph, doms


def cmd_gathers(a):
    import random
    fails = views = 0
    with tempfile.TemporaryDirectory() as tmp:
        for c in range(a.count):
            rng = random.Random(0x6A7E + c)
            graph, doms = random_gather_chain(rng)
            path = os.path.join(tmp, f"gather_chain_{c}.json")
            with open(path, "w") as f:
                json.dump(graph, f)
            dt = ["fp32", "fp16", "bf16"][c % 3]
            report = []
            try:
                doc = playback(a.oracle_pb, f"{path}:{dt}::{','.join(doms)}:")
                views += doc["views_checked"]
                ok, _ = compare_graph(doc, run_tinygrad(doc), report)
            except Exception as e:
                ok = False
                report.append(f"{type(e).__name__}: {e}")
            if not ok:
                fails += 1
                print(f"gather chain #{c} ({dt}): FAILED\n  {json.dumps(graph)}")
                for r in report:
                    print("  " + r)
    print(f"{a.count} random gather/flip/pad/slice/transpose chains against tinygrad {version()}, "
          f"{views} IndexBook views equal to playback: {'ok' if not fails else f'{fails} FAILED'}")
    return 1 if fails else 0


# ---- the comparisons must be able to fail -------------------------------------------------


def cmd_negative(a):
    missed = []
    doc = playback(a.oracle_pb, a.cases[0])
    # (1) a playback output off by ten allowances in one element
    r = []
    ok, _ = compare_graph(doc, run_tinygrad(doc), r, perturb=True)
    if ok:
        missed.append("a perturbed playback output passed")
    # (2) the graph rebuilt with one attribute changed
    def wrong(node):
        node = json.loads(json.dumps(node))
        at = node.get("attrs", {})
        if node["op"] == "Elementwise" and node.get("fn") == "add":
            node["fn"] = "sub"
        elif "axes" in at and node["op"] == "Flip":
            at["axes"] = [0]
        elif node["op"] == "Pad":
            at["value"] = at.get("value", 0.0) + 1.0
        elif node["op"] == "Attention":
            at["causal"] = not at.get("causal", False)
        return node
    r = []
    ok, _ = compare_graph(doc, run_tinygrad(doc, wrong), r)
    if ok:
        missed.append("a graph rebuilt with a changed attribute passed")
    # (3) a chain replayed with one op changed, (4) its UOps compared after a change
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "chains.jsonl")
        subprocess.run([a.pb_chains, "dump", path, "60"], capture_output=True, check=True)
        chains = [json.loads(line) for line in open(path)]
    pads = [c for c in chains if any(o["op"] == "pad" and o["value"] != 0 for o in c["ops"])]
    flips = [c for c in chains if any(o["op"] == "flip" for o in c["ops"]) and
             not any(o["op"] in ("expand", "shrink") for o in c["ops"])]
    caught = 0
    for ch in pads[:5]:
        x, _, _ = replay_chain(ch, lambda i, o: dict(o, value=o["value"] + 0.5) if o["op"] == "pad" else o)
        caught += f32(flat(x)) != f32(ch["output"])
    if caught != min(5, len(pads)) or not pads:
        missed.append(f"a chain with a changed pad value passed ({caught} of {min(5, len(pads))} caught)")
    caught = 0
    for ch in flips[:5]:
        moves = tiny_moves(ch)
        i = next(k for k, m in enumerate(moves) if m[0] == "FLIP")
        moves[i] = ("PERMUTE", moves[i][1], list(range(len(moves[i][1]))))
        x, strided, x0 = replay_chain(ch)
        caught += strided or canonical(moves, ch["shape"]) != canonical(uop_moves(x.uop, x0), ch["shape"])
    if caught != min(5, len(flips)) or not flips:
        missed.append("a UOp sequence with FLIP changed to PERMUTE passed")
    # (5) the reductions of a graph compared after one REDUCE of dlc's Tiny
    # DAG is changed (its op, or its axis)
    for case in a.cases[1:]:
        doc = playback(a.oracle_pb, case)
        roots = []
        run_tinygrad(doc, uops=roots)
        reds = [u for u in doc["tiny"]["uops"] if u["uop"] == "REDUCE"]
        if not reds or compare_reductions(doc, roots, []) in (None, False):
            missed.append(f"{case}: no reductions to compare, or they differ unchanged")
            continue
        r0 = reds[0]["arg"]
        op0, axes0 = r0["op"], list(r0["axes"])
        r0["op"] = "SUM" if op0 != "SUM" else "MAX"
        if compare_reductions(doc, roots, []) is not False:
            missed.append(f"{case}: a REDUCE with another op passed")
        rank = len(next(u for u in doc["tiny"]["uops"] if u["out"] == reds[0]["src"][0])["shape"])
        r0["op"], r0["axes"] = op0, [(axes0[0] + 1) % rank]
        if compare_reductions(doc, roots, []) is not False:
            missed.append(f"{case}: a REDUCE over another axis passed")
    for m in missed:
        print("MISSED: " + m)
    # (6) with --emu: the kernels of a library run on an input with one
    # element changed must differ from tinygrad on the original inputs
    emus = emu_ops(a.emu)
    tried = False
    for case in a.cases:
        libs = emus.get(os.path.realpath(case.split(":")[0]), [])
        if not libs:
            continue
        lib = libs[0]
        doc = playback(a.oracle_pb, case)
        bad = json.loads(json.dumps(doc))
        x = bad["inputs"][0]["data"]
        x[len(x) // 2] += 4.0
        res = compare_emu(bad, run_tinygrad(doc), lib[0], lib[1], [], ref_doc=doc)
        if res is None:
            continue
        tried = True
        if res[0]:
            missed.append(f"{case}: the emulator's outputs on a changed input passed")
        break
    if a.emu and not tried:
        missed.append("no case ran through a library's kernels")
    print(f"negative cases: {'every one caught' if not missed else f'{len(missed)} missed'}")
    return 1 if missed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["graphs", "chains", "gathers", "negative"])
    ap.add_argument("--oracle-pb")
    ap.add_argument("--pb-chains")
    ap.add_argument("--count", type=int, default=700)
    ap.add_argument("--emu", nargs=2, action="append", default=[], metavar=("MANIFEST", "EXE"))
    ap.add_argument("cases", nargs="*")
    a = ap.parse_intermixed_args()
    return {"graphs": cmd_graphs, "chains": cmd_chains, "gathers": cmd_gathers, "negative": cmd_negative}[a.mode](a)


if __name__ == "__main__":
    sys.exit(main())
