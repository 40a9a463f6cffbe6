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
[ -f "$out/attention/fp16/tiny.json" ] || fail "no attention/fp16 outputs"
[ -f "$out/gemm_bias_relu/bf16/poly_view.json" ] || fail "no gemm_bias_relu/bf16 outputs"

# 1. attention gains bf16: only its new files and the index change
age "$out"
sed 's/attention_causal.json", "dtypes": \["fp16"\]/attention_causal.json", "dtypes": ["fp16", "bf16"]/' \
  "$src/tests/determinism/two_ops.json" > "$m/manifest.json"
grep -q '"fp16", "bf16"\], "plans": "auto"}$' "$m/manifest.json" || fail "the edit did not apply"
"$dlcgen" --manifest "$m/manifest.json" --out "$out" --quiet
[ -f "$out/attention/bf16/tiny.json" ] || fail "no attention/bf16 outputs after the edit"
# nothing of the other op, nor of attention's unchanged instance, is rewritten
# (files shared by all ops, such as the index, may change)
for f in $(rewritten "$out"); do
  case "$f" in
    *gemm_bias_relu*|"$out"/attention/fp16/*) fail "the edit of one op rewrote $f" ;;
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

# 3. back to the original: the bf16 attention outputs are stale and removed
cp "$src/tests/determinism/two_ops.json" "$m/manifest.json"
"$dlcgen" --manifest "$m/manifest.json" --out "$out" --quiet
[ ! -e "$out/attention/bf16/tiny.json" ] || fail "stale outputs of a removed instance were kept"
for f in $(rewritten "$out"); do
  case "$f" in
    *gemm_bias_relu*|"$out"/attention/fp16/*) fail "reverting the edit rewrote $f" ;;
  esac
done
echo "one-op edits rewrite only that op's files"
