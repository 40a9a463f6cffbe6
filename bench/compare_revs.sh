#!/usr/bin/env bash
# compare_revs.sh: does a change of the generator change the kernels?
#
#   bench/compare_revs.sh [--manifest FILE] REV_A [REV_B]
#
# Builds libdlckernels.a (every arch of the manifest, SASS only) at two
# revisions in git worktrees under ${COMPARE_DIR:-/tmp/dlc-compare}, then
# compares:
#   1. the generated sources (the build's dlckernels-gen/: kernels, dispatch,
#      headers), with diff -r;
#   2. every kernel's SASS on every arch, with bench/sass_diff.
# REV_B defaults to the working tree as it is (uncommitted changes included,
# through `git stash create`).  --manifest is relative to the repository
# (default manifests/default.json).  The exit status is 0 when both are the
# same, 1 when either differs, 2 on error.
#
# Each build's nvcc commands go through ccache when it is installed (the
# kernels' commands are the same in any build tree), so a kernel whose
# source did not change is compiled once; CCACHE_DIR is honoured.
set -euo pipefail
usage() { echo "usage: bench/compare_revs.sh [--manifest FILE] REV_A [REV_B]" >&2; exit 2; }

manifest=manifests/default.json
revs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --manifest) [ $# -ge 2 ] || usage; manifest=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*) usage ;;
    *) revs+=("$1"); shift ;;
  esac
done
[ ${#revs[@]} -ge 1 ] && [ ${#revs[@]} -le 2 ] || usage

top=$(git rev-parse --show-toplevel)
cd "$top"
resolve() {
  git rev-parse --verify -q "$1^{commit}" || { echo "compare_revs: $1 is no revision" >&2; exit 2; }
}
a=$(resolve "${revs[0]}")
if [ ${#revs[@]} -eq 2 ]; then
  b=$(resolve "${revs[1]}")
  b_name=${revs[1]}
else
  # the working tree as a commit object (HEAD when nothing is changed);
  # files git does not track are not in it
  b=$(git stash create "compare_revs" || true)
  [ -n "$b" ] || b=$(git rev-parse HEAD)
  b_name="the working tree"
fi

work=${COMPARE_DIR:-/tmp/dlc-compare}
mkdir -p "$work"
export LC_ALL=C.UTF-8
if command -v ccache > /dev/null; then
  export CMAKE_CUDA_COMPILER_LAUNCHER=ccache CCACHE_NOHASHDIR=1
fi
export PATH="/usr/local/cuda/bin:$PATH"

build() { # build REV DIR: configure and build libdlckernels.a of REV in DIR
  local rev=$1 dir=$2
  if [ -d "$dir/src" ]; then
    git -C "$dir/src" checkout -q --detach "$rev"
  else
    rm -rf "$dir"
    git worktree add -q --detach "$dir/src" "$rev"
  fi
  [ -f "$dir/src/$manifest" ] || { echo "compare_revs: $manifest is not in $rev" >&2; exit 2; }
  echo "== $rev: configure and build libdlckernels.a in $dir/src/build =="
  local t=$SECONDS
  cmake -S "$dir/src" -B "$dir/src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DDLC_MANIFEST="$dir/src/$manifest" -DDLC_LIBFUZZER=OFF > "$dir/configure.log"
  cmake --build "$dir/src/build" --target dlckernels > "$dir/build.log" ||
    { tail -30 "$dir/build.log" >&2; exit 2; }
  echo "   $((SECONDS - t)) s"
}

build "$a" "$work/a"
build "$b" "$work/b"

status=0
echo "== generated sources: ${revs[0]} against $b_name =="
if diff -r -q "$work/a/src/build/dlckernels-gen" "$work/b/src/build/dlckernels-gen"; then
  echo "the same bytes"
else
  status=1
fi
echo "== SASS: ${revs[0]} against $b_name =="
"$top/bench/sass_diff" "$work/a/src/build/libkernels/libdlckernels.a" \
                       "$work/b/src/build/libkernels/libdlckernels.a" || status=1
exit $status
