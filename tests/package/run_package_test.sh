#!/usr/bin/env bash
# The Debian packages (debian/): build them from a clean copy of the source
# tree with dpkg-buildpackage -us -uc -b, then lintian on the .changes must
# report no error and no warning.  With --twice, build a second time from a
# fresh copy at the same path, with the same SOURCE_DATE_EPOCH, and require
# byte-identical .deb files (reproducible builds).
#
#   run_package_test.sh SRC WORK [--twice]
#
# Exit 77 (CTest: skipped) when dpkg-buildpackage, debhelper or lintian is
# missing.  The build uses every CPU (DEB_BUILD_OPTIONS=parallel=N) and
# takes as long as a full build of the tree.
set -euo pipefail
src=$1 work=$2 twice=${3:-}

missing=()
for t in dpkg-buildpackage dh lintian; do
  command -v "$t" >/dev/null || missing+=("$t")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "SKIPPED: ${missing[*]} not installed (apt-get install dpkg-dev debhelper lintian)"
  exit 77
fi

# every build of this source sees the date of its last changelog entry
export SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH=$(cd "$src" && dpkg-parsechangelog -STimestamp)
export DEB_BUILD_OPTIONS="parallel=$(nproc)"
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"

# build <out>: a clean copy of the tree (no build directories, no .git) in
# $work/src, its packages moved to <out>
build() {
  local out=$1
  rm -rf "$work/src" "$out"
  mkdir -p "$work/src" "$out"
  tar -C "$src" --exclude='./build*' --exclude=./.git --exclude=./out --exclude=./.cache --exclude=./.ci-cache -cf - . \
    | tar -C "$work/src" -xf -
  local t0=$SECONDS
  (cd "$work/src" && dpkg-buildpackage -us -uc -b) > "$out/build.log" 2>&1 || {
    tail -n 60 "$out/build.log"; echo "FAILED: dpkg-buildpackage (log: $out/build.log)"; exit 1; }
  echo "dpkg-buildpackage: $((SECONDS - t0)) s"
  mv "$work"/*.deb "$work"/*.ddeb "$work"/*.changes "$work"/*.buildinfo "$out"/ 2>/dev/null || true
  ls "$out"
  # the five packages of debian/control, and their -dbgsym
  local n
  n=$(find "$out" -maxdepth 1 -name '*.deb' ! -name '*-dbgsym_*' | wc -l)
  [ "$n" -eq 5 ] || { echo "FAILED: $n packages in $out, expected 5"; exit 1; }
}

mkdir -p "$work"
build "$work/1"
# lintian exits nonzero on an error or a warning (an override would go in
# debian/<package>.lintian-overrides, with a comment giving its reason)
echo "== lintian =="
lintian --fail-on error,warning --display-info "$work"/1/*.changes
echo "lintian: no errors or warnings"

if [ "$twice" = --twice ]; then
  build "$work/2"
  status=0
  for deb in "$work"/1/*.deb "$work"/1/*.ddeb; do
    [ -e "$deb" ] || continue
    if cmp -s "$deb" "$work/2/${deb##*/}"; then
      echo "identical: ${deb##*/}"
    else
      echo "DIFFER: ${deb##*/}"; status=1
    fi
  done
  [ $status -eq 0 ] || { echo "FAILED: two builds with SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH differ"; exit 1; }
  echo "two builds with SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH are byte-identical"
fi
