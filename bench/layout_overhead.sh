#!/bin/sh
# The layout pass's compile-time overhead (seed 004 §13: at most +10%):
# dlcgen on a manifest, with the pass on and with --no-layout, N runs each,
# interleaved; prints the median user+system CPU seconds of each and the
# ratio.  Usage: bench/layout_overhead.sh DLCGEN [MANIFEST] [N]
set -eu
dlcgen=$1
manifest=${2:-$(dirname "$0")/../manifests/default.json}
n=${3:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cpu() { # prints user+sys seconds of one run
  /usr/bin/time -f "%U %S" -o "$tmp/t" "$dlcgen" --manifest "$manifest" --out "$tmp/out" --quiet "$@" >/dev/null
  awk '{print $1 + $2}' "$tmp/t"
}
i=0
: >"$tmp/on"; : >"$tmp/off"
while [ $i -lt "$n" ]; do
  cpu >>"$tmp/on"
  cpu --no-layout >>"$tmp/off"
  i=$((i + 1))
done
med() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
on=$(med "$tmp/on"); off=$(med "$tmp/off")
echo "layout on:  $on s (median of $n)"
echo "layout off: $off s (median of $n)"
awk -v a="$on" -v b="$off" 'BEGIN {printf "overhead: %+.1f%%\n", (a / b - 1) * 100}'
