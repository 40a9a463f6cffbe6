#!/bin/sh
# Determinism of dlcgen's outputs (DESIGN.md):
#   same      the same input twice gives byte-identical files, and a second
#             run into the same directory rewrites nothing (mtimes kept);
#   edit      (manifest mode) a one-op edit rewrites none of the other ops'
#             files, stale outputs are removed, and a failed run leaves the
#             earlier outputs untouched.
# usage: check_determinism.sh same DLCGEN WORK graph|manifest INPUT
#        check_determinism.sh edit DLCGEN WORK SRCDIR
set -eu
what=$1 dlcgen=$2 work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
stamp="$work/stamp"

# Ages every file under $1, so that a rewrite shows as a newer mtime.
age() { find "$1" -type f -exec touch -t 200001010000 {} +; touch -t 200001020000 "$stamp"; }
rewritten() { find "$1" -type f -newer "$stamp" | sort; }
files() { (cd "$1" && find . -type f | sort); }

if [ "$what" = same ]; then
  mode=$4 input=$5
  run() {
    if [ "$mode" = graph ]; then
      "$dlcgen" --graph "$input" --dump=frontend,tiny,indexbook,poly_view --dump-dir "$1"
    else
      "$dlcgen" --manifest "$input" --out "$1" --quiet
    fi
  }
  run "$work/a"
  run "$work/b"
  files "$work/a" > "$work/list.a"
  files "$work/b" > "$work/list.b"
  [ -s "$work/list.a" ] || fail "no outputs"
  cmp -s "$work/list.a" "$work/list.b" || fail "the two runs wrote different files"
  while read -r f; do
    cmp "$work/a/$f" "$work/b/$f" || fail "$f differs between two runs"
  done < "$work/list.a"
  age "$work/a"
  run "$work/a"
  [ -z "$(rewritten "$work/a")" ] || fail "unchanged files were rewritten: $(rewritten "$work/a")"
  files "$work/a" > "$work/list.c"
  cmp -s "$work/list.a" "$work/list.c" || fail "the second run changed the set of files"
  echo "deterministic: $(wc -l < "$work/list.a") files"
  exit 0
fi

[ "$what" = edit ] || fail "unknown check '$what'"
src=$4
m="$work/m"
mkdir -p "$m/graphs"
cp "$src/manifests/graphs/"*.json "$m/graphs/"
cp "$src/tests/determinism/two_ops.json" "$m/manifest.json"
out="$work/out"
"$dlcgen" --manifest "$m/manifest.json" --out "$out" --quiet
# the check does not depend on the output layout: the files of an op are the
# ones whose path names it
[ -n "$(find "$out" -type f -path '*mlp_layer*')" ] || fail "no outputs name mlp_layer"
[ -n "$(find "$out" -type f -path '*gemm_bias_relu*')" ] || fail "no outputs name gemm_bias_relu"
cp -R "$out" "$work/original"

# 1. mlp_layer gains bf16: its files change, gemm_bias_relu's are not rewritten
age "$out"
sed 's/"mlp_layer", "graph": "graphs\/gemm_bias_relu.json", "dtypes": \["fp16"\]/"mlp_layer", "graph": "graphs\/gemm_bias_relu.json", "dtypes": ["fp16", "bf16"]/' \
  "$src/tests/determinism/two_ops.json" > "$m/manifest.json"
grep -q '"fp16", "bf16"\], "plans": "auto"}$' "$m/manifest.json" || fail "the edit did not apply"
"$dlcgen" --manifest "$m/manifest.json" --out "$out" --quiet
rewritten "$out" | grep -q mlp_layer || fail "the edit of mlp_layer changed none of its files"
for f in $(rewritten "$out"); do
  case "$f" in
    *gemm_bias_relu*) fail "the edit of mlp_layer rewrote $f" ;;
  esac
done

# 2. a failed run (an unknown dtype) leaves every earlier output untouched
files "$out" > "$work/before"
age "$out"
sed 's/"dtypes": \["fp16", "bf16"\], "plans": "auto"}$/"dtypes": ["fp64"], "plans": "auto"}/' \
  "$m/manifest.json" > "$m/bad.json"
if "$dlcgen" --manifest "$m/bad.json" --out "$out" --quiet 2>/dev/null; then fail "the bad manifest passed"; fi
[ -z "$(rewritten "$out")" ] || fail "a failed run rewrote: $(rewritten "$out")"
files "$out" > "$work/after"
cmp -s "$work/before" "$work/after" || fail "a failed run added or removed files"

# 3. back to the original manifest: the outputs are the original ones again,
# file for file (stale outputs of the removed instance are deleted), and
# gemm_bias_relu's files are still not rewritten
age "$out"
cp "$src/tests/determinism/two_ops.json" "$m/manifest.json"
"$dlcgen" --manifest "$m/manifest.json" --out "$out" --quiet
files "$out" > "$work/list.out"
files "$work/original" > "$work/list.orig"
cmp -s "$work/list.out" "$work/list.orig" || fail "reverting the edit left other files: $(diff "$work/list.orig" "$work/list.out")"
while read -r f; do
  cmp "$out/$f" "$work/original/$f" || fail "$f differs from the original run after reverting the edit"
done < "$work/list.orig"
for f in $(rewritten "$out"); do
  case "$f" in
    *gemm_bias_relu*) fail "reverting the edit of mlp_layer rewrote $f" ;;
  esac
done
echo "one-op edits rewrite only that op's files"
