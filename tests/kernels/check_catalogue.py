#!/usr/bin/env python3
"""The operator catalogue dlcgen writes with a library (docs/ops.md, ops.json)
says what the manifest and the generated library say (issue 38 item 5).

    check_catalogue.py MANIFEST GEN_DIR

Checked against sources the catalogue is not built from:
  - ops, descriptions, dtypes and variants: the manifest's JSON;
  - the compile-time constants: every "scalar" attr of the op's graph JSON;
  - each signature: the prototype in GEN_DIR/include/dlc/dlc_ops.h, whose doc
    comment must carry the description (and the constants);
  - each kernel the catalogue names (a dispatch row a chunk width) with its
    tile, block and shared memory: the rows of the dispatch tables
    dlc__k_<op>[] in GEN_DIR/src/dlc_dispatch.c;
  - ops.md: a section per op with its signature, formula and every instance.
"""
import json
import os
import re
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    manifest_path, gen = sys.argv[1], sys.argv[2]
    man = json.load(open(manifest_path))
    cat = json.load(open(os.path.join(gen, "ops.json")))
    md = open(os.path.join(gen, "docs", "ops.md")).read()
    hdr = open(os.path.join(gen, "include", "dlc", "dlc_ops.h")).read()
    disp = open(os.path.join(gen, "src", "dlc_dispatch.c")).read()
    mdir = os.path.dirname(manifest_path)

    if cat["archs"] != man["archs"]:
        fail("archs %s, the manifest's %s" % (cat["archs"], man["archs"]))
    if [o["name"] for o in cat["ops"]] != [o["name"] for o in man["ops"]]:
        fail("ops %s, the manifest's %s" % ([o["name"] for o in cat["ops"]], [o["name"] for o in man["ops"]]))
    rows = 0
    for mo, co in zip(man["ops"], cat["ops"]):
        name = mo["name"]
        graph = mo["graph"]
        if isinstance(graph, str):
            graph = json.load(open(os.path.join(mdir, graph))) if graph.endswith(".json") else None
        desc = mo.get("description", graph.get("description") if graph else None)
        if desc is None and not graph:
            desc = co["description"]  # a .dlc graph's own description: dlc_ops.h and ops.md must still give it
        if co["description"] != desc:
            fail("%s: description %r, the manifest's %r" % (name, co["description"], desc))
        if co["dtypes"] != mo["dtypes"]:
            fail("%s: dtypes %s, the manifest's %s" % (name, co["dtypes"], mo["dtypes"]))
        if co["variants"] != mo.get("variants", {}):
            fail("%s: variants %s, the manifest's %s" % (name, co["variants"], mo.get("variants", {})))
        if graph:
            want = [(n["name"], n["attrs"]["scalar"]) for n in graph["graph"] if "scalar" in n.get("attrs", {})]
            got = [(k["node"], k["value"]) for k in co["constants"] if k["what"].endswith("scalar")]
            if want != got:
                fail("%s: constants %s, the graph's scalars %s" % (name, got, want))
        # the signature is dlc_ops.h's prototype, and its doc comment the formula
        m = re.search(r"/\*\*((?:(?!\*/).)*?)\*/\s*(dlc_status dlc_%s\(.*?\));" % name, hdr, re.S)
        if not m or m.group(2) != co["signature"]:
            fail("%s: signature %r is not dlc_ops.h's %r" % (name, co["signature"], m and m.group(2)))
        if desc and desc not in " ".join(l.strip(" *") for l in m.group(1).splitlines()):
            fail("%s: dlc_ops.h's doc comment does not give the formula %r" % (name, desc))
        for k in co["constants"]:
            if "%s (%s) %s" % (k["node"], k["what"], k["value"]) not in m.group(1):
                fail("%s: dlc_ops.h's doc comment does not name constant %s" % (name, k["node"]))
        if co["entry_points"] != ["dlc_%s%s" % (name, s) for s in ("", "_ws", "_workspace_size", "_query")]:
            fail("%s: entry points %s" % (name, co["entry_points"]))
        for e in co["entry_points"]:
            if not re.search(r"\b%s\(" % e, hdr):
                fail("%s: %s is not declared in dlc_ops.h" % (name, e))
        # every kernel the catalogue names is a row of the dispatch table
        t = re.search(r"static const dlc__kernel dlc__k_%s\[\] = \{\n(.*?)\n\};" % name, disp, re.S)
        if not t:
            fail("%s: no dispatch table" % name)
        table = []
        for line in t.group(1).splitlines():
            f = [x.strip() for x in line.strip().strip("{},").split(",")]
            table.append({"name": f[0].strip('"'), "threads": int(f[3]), "smem": int(f[4]),
                          "tile": [int(f[6]), int(f[7]), int(f[8])]})
        for inst in co["instances"]:
            for arch, ks in inst["archs"].items():
                for k in ks:
                    for kn in k["names"]:
                        hit = [r for r in table if r["name"] == kn]
                        if len(hit) != 1:
                            fail("%s %s %s: kernel %s is %d rows of dlc__k_%s" % (name, inst["tag"], arch, kn, len(hit), name))
                        r = hit[0]
                        if r["tile"] != k["tile"] or r["threads"] != k["threads"] or r["smem"] != k["smem_bytes"]:
                            fail("%s %s: %s has tile %s, %d threads, %d bytes; the catalogue says %s, %d, %d" %
                                 (name, inst["tag"], kn, r["tile"], r["threads"], r["smem"], k["tile"], k["threads"],
                                  k["smem_bytes"]))
                    if len(k["names"]) != len(k["widths"]) and "when" not in k and not k["names"][0].endswith("_r"):
                        fail("%s %s: %d widths, %d rows" % (name, inst["tag"], len(k["widths"]), len(k["names"])))
                    rows += 1
        sec = md.split("\n## %s\n" % name, 1)
        if len(sec) != 2:
            fail("ops.md has no section for %s" % name)
        body = sec[1].split("\n## ", 1)[0]
        if co["signature"] not in body or (desc and desc not in body):
            fail("ops.md's %s section lacks its signature or formula" % name)
        for inst in co["instances"]:
            if "| %s |" % inst["tag"] not in body:
                fail("ops.md's %s section lacks instance %s" % (name, inst["tag"]))
    print("catalogue: %d ops, %d kernels by arch, all as the manifest, dlc_ops.h and the dispatch tables say"
          % (len(cat["ops"]), rows))


main()
