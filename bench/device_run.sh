#!/bin/bash
# The checks and timings that need a CUDA device, in one run (docs/testing.md
# "On a GPU"), from the repository root on the GPU machine:
#
#   bench/device_run.sh BUNDLE OUTDIR
#
# BUNDLE holds what bench/device_bundle.sh packed on the build machine: the
# GPU builds of test_every_kernel for the default and the extra manifest
# (lib_gpu, extra_gpu; the extra manifest's path, relative to the
# repository root, in extra_manifest), their emulator dumps (emu_lib.bin,
# emu_extra.bin),
# dlc-bench-gpu, the example, libdlckernels.so.0 and the host libraries
# they link (lib/).  Everything lands in OUTDIR; a summary goes to stdout.
# Every step runs under a timeout: a kernel that hangs on the hardware (an
# mbarrier phase never completed, say) ends its step, not the session.
set -u
B=$(cd "$1" && pwd)
O=$2
mkdir -p "$O"
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
step() { echo; echo "== $*"; }

step device
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv

step "every kernel on the GPU against region playback (default manifest, extra manifest)"
timeout 120 "$B/lib_gpu" manifests/default.json --dump "$O/gpu_lib.bin" >"$O/gpu_lib.log" 2>&1
echo "default manifest: exit $?: $(tail -1 "$O/gpu_lib.log")"; grep -E "FAIL|kernels .*launched" "$O/gpu_lib.log" | head -40
timeout 120 "$B/extra_gpu" "$(cat "$B/extra_manifest")" --dump "$O/gpu_extra.bin" >"$O/gpu_extra.log" 2>&1
echo "extra manifest: exit $?: $(tail -1 "$O/gpu_extra.log")"; grep -E "FAIL|kernels .*launched" "$O/gpu_extra.log" | head -40

step "every op captured into a CUDA graph and replayed; every op from 8 threads at once"
timeout 120 "$B/lib_gpu" manifests/default.json --graph >"$O/gpu_graph.log" 2>&1
echo "graph: exit $?: $(tail -1 "$O/gpu_graph.log")"; grep -E "FAIL" "$O/gpu_graph.log" | head -20
timeout 120 "$B/lib_gpu" manifests/default.json --threads 8 >"$O/gpu_threads.log" 2>&1
echo "threads: exit $?: $(tail -1 "$O/gpu_threads.log")"; grep -E "FAIL" "$O/gpu_threads.log" | head -20

step "the GPU's outputs against the emulator's (same calls, same inputs)"
python3 tests/kernels/compare_dumps.py "$B/emu_lib.bin" "$O/gpu_lib.bin"
python3 tests/kernels/compare_dumps.py "$B/emu_extra.bin" "$O/gpu_extra.bin"

step "the example"
timeout 60 "$B/gemm_bias_relu"; echo "exit $?"

step "dlc-bench-gpu against cuBLASLt (fp16, bf16)"
for dt in fp16 bf16; do
  timeout 120 "$B/dlc-bench-gpu" --gpu --csv "$O/bench_$dt.csv" --dtype $dt 2>&1 | tee "$O/bench_$dt.log"
done

step "the host cost of a call on the CUDA backend (the call's return, no sync)"
timeout 60 "$B/dlc-bench-gpu" --host 2>&1 | tee "$O/host_cost.log"

step "dlc against PyTorch (cuBLAS, cuDNN, SDPA) in one process"
timeout 120 python3 bench/vs_torch.py "$B/libdlckernels.so.0" 2>&1 | tee "$O/vs_torch.log"

step "compute-sanitizer memcheck and racecheck, every op of the default manifest"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
ops=$(grep -o '^[a-z0-9_]*: [0-9]* of [0-9]* kernels' "$O/gpu_lib.log" | cut -d: -f1)
for tool in memcheck racecheck; do
  printf '%s\n' $ops | xargs -P 8 -I{} sh -c \
    "timeout 150 '$CS' --tool $tool --error-exitcode 9 '$B/lib_gpu' manifests/default.json --op {} >'$O/cs_${tool}_{}.log' 2>&1; echo \"$tool {}: exit \$?\""
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$O"/cs_${tool}_*.log | sort | uniq -c
done
