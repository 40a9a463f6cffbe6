#!/bin/bash
# Packs what bench/device_run.sh runs on a GPU machine, from this machine's
# builds (docs/testing.md "On a GPU"), run from the repository root:
#
#   bench/device_bundle.sh BUILD EXTRA_BUILD EXTRA_GPU_BUILD OUT.tar.xz
#
# BUILD is the default preset's build directory.  EXTRA_BUILD is configured
# with -DDLC_MANIFEST=tests/kernels/extra/manifest.json, whose "archs" is
# sm80 alone: its emulator run gives the dump the GPU is compared with.
# EXTRA_GPU_BUILD is configured with a copy of that manifest, in a sibling
# directory of it (its graphs are named relative to it), whose "archs" name
# the GPU's arch (sm90a for an H100); the same kernels and dispatch rows, so
# the same calls.  All three built.  For a Hopper GPU run it with
# DLC_EMU_ARCH=sm90a, so that the emulator runs the kernels the GPU will:
# the sm90a rows (docs/emulator.md).
set -eu
b=$(cd "$1" && pwd)
x=$(cd "$2" && pwd)
xg=$(cd "$3" && pwd)
out=$4
manifest_of() { sed -n 's/^DLC_MANIFEST:FILEPATH=//p' "$1/CMakeCache.txt"; }
rel() { realpath --relative-to="$PWD" "$1"; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir "$d/bundle" "$d/bundle/lib"
cp "$b/tests/kernels/test_every_kernel_dlckernels_gpu" "$d/bundle/lib_gpu"
cp "$xg/tests/kernels/test_every_kernel_dlckernels_gpu" "$d/bundle/extra_gpu"
rel "$(manifest_of "$xg")" >"$d/bundle/extra_manifest"
cp "$b/bench/dlc-bench-gpu" "$b/examples/gemm_bias_relu" "$d/bundle/"
cp -L "$b/libkernels/libdlckernels.so.0" "$d/bundle/"
# the host libraries the programs link that a bare CUDA machine may lack
for lib in $(ldd "$d/bundle/lib_gpu" "$d/bundle/dlc-bench-gpu" | awk '/=> \//{print $3}' | sort -u); do
  case $(basename "$lib") in
  libisl* | libgmp* | libcjson* | liblapacke* | liblapack* | libblas* | libgfortran* | libquadmath*) cp -L "$lib" "$d/bundle/lib/" ;;
  esac
done
echo "emulator dumps (default manifest, extra manifest)..."
"$b/tests/kernels/test_every_kernel_dlckernels" "$(manifest_of "$b")" --dump "$d/bundle/emu_lib.bin" >/dev/null
"$x/tests/kernels/test_every_kernel_dlckernels" "$(manifest_of "$x")" --dump "$d/bundle/emu_extra.bin" >/dev/null
tar -C "$d" -cJf "$out" bundle
ls -l "$out"
