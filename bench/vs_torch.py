#!/usr/bin/env python3
"""dlc's entry points against PyTorch on a CUDA device, in one process.

    vs_torch.py LIBDLCKERNELS.so [--repeats N] [--quick]

Loads the shared library with ctypes and calls dlc_gemm_bias_relu,
dlc_conv2d_bias_silu and dlc_attention_causal on PyTorch's tensors, next to
what PyTorch runs for the same computation:
  GEMM       torch.relu(torch.addmm(bias, A, B))          (cuBLAS)
  conv       F.silu(F.conv2d(x, w, bias, stride, 1)), channels_last (cuDNN)
  attention  F.scaled_dot_product_attention(q, k, v, is_causal=True)
Each pair runs on the same random inputs (never zeros); the outputs are
compared (relative Frobenius error of dlc against PyTorch, and against an
FP64 reference for the GEMMs up to 4096), then each is timed with CUDA events:
3 warm-ups, L2 flushed before every run, the median of the repeats.  Prints
one row per shape; a benchmark, not a test: it fails only when a call fails
or an output is not finite."""
import ctypes
import statistics
import sys

import torch
import torch.nn.functional as F

DT = {torch.float16: 0, torch.bfloat16: 1}


def load(path):
    lib = ctypes.CDLL(path)
    i64, vp = ctypes.c_int64, ctypes.c_void_p
    lib.dlc_gemm_bias_relu.argtypes = [ctypes.c_int] + [i64] * 3 + [vp, i64, vp, i64, vp, vp, i64, vp]
    lib.dlc_conv2d_bias_silu.argtypes = [ctypes.c_int] + [i64] * 9 + [vp] * 5
    lib.dlc_attention_causal.argtypes = [ctypes.c_int] + [i64] * 4 + [vp] * 5
    for f in (lib.dlc_gemm_bias_relu, lib.dlc_conv2d_bias_silu, lib.dlc_attention_causal):
        f.restype = ctypes.c_int
    lib.dlc_last_error_detail.restype = ctypes.c_char_p
    return lib


def check(lib, st, what):
    if st != 0:
        raise SystemExit("%s: status %d: %s" % (what, st, lib.dlc_last_error_detail().decode()))


FLUSH = None


def median_us(fn, repeats):
    global FLUSH
    if FLUSH is None:
        FLUSH = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8, device="cuda")
    for _ in range(3):
        fn()
    times = []
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for r in range(repeats):
        FLUSH.fill_(r & 0xFF)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(1e3 * a.elapsed_time(b))
    return statistics.median(times)


def rel(x, ref):
    x, ref = x.double(), ref.double()
    if not torch.isfinite(x).all():
        return float("nan")
    return ((x - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def stream():
    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


def gemm(lib, M, N, K, dt, repeats, rows):
    A = torch.randn(M, K, device="cuda", dtype=dt)
    B = torch.randn(K, N, device="cuda", dtype=dt)
    bias = torch.randn(N, device="cuda", dtype=dt)
    C = torch.empty(M, N, device="cuda", dtype=dt)

    def run_dlc():
        check(lib, lib.dlc_gemm_bias_relu(DT[dt], M, N, K, A.data_ptr(), K, B.data_ptr(), N, bias.data_ptr(),
                                          C.data_ptr(), N, stream()), "dlc_gemm_bias_relu")

    def run_torch():
        return torch.relu(torch.addmm(bias, A, B))

    run_dlc()
    T = run_torch()
    err = rel(C, T)
    err64 = rel(C, torch.relu(A.double() @ B.double() + bias.double())) if max(M, N, K) <= 4096 else float("nan")
    t_dlc, t_torch = median_us(run_dlc, repeats), median_us(run_torch, repeats)
    rows.append(("gemm_bias_relu", "%dx%dx%d" % (M, N, K), dt, 2.0 * M * N * K, t_dlc, t_torch, err, err64))


def conv(lib, Nb, H, W, Cin, Kout, s, dt, repeats, rows):
    x = torch.randn(Nb, Cin, H, W, device="cuda", dtype=dt).to(memory_format=torch.channels_last)
    w = (torch.randn(Kout, Cin, 3, 3, device="cuda", dtype=dt) / (3 * Cin ** 0.5)).to(memory_format=torch.channels_last)
    bias = torch.randn(Kout, device="cuda", dtype=dt)
    P, Q = (H - 1) // s + 1, (W - 1) // s + 1
    y = torch.empty(Nb, Kout, P, Q, device="cuda", dtype=dt).to(memory_format=torch.channels_last)

    def run_dlc():
        check(lib, lib.dlc_conv2d_bias_silu(DT[dt], Nb, H, W, Cin, Kout, s, s, 1, 1, x.data_ptr(), w.data_ptr(),
                                            bias.data_ptr(), y.data_ptr(), stream()), "dlc_conv2d_bias_silu")

    def run_torch():
        return F.silu(F.conv2d(x, w, bias, stride=s, padding=1))

    run_dlc()
    err = rel(y, run_torch())
    t_dlc, t_torch = median_us(run_dlc, repeats), median_us(run_torch, repeats)
    flops = 2.0 * Nb * P * Q * Kout * 9 * Cin
    rows.append(("conv2d_bias_silu", "%dx%dx%dx%d->%d/s%d" % (Nb, H, W, Cin, Kout, s), dt, flops, t_dlc, t_torch,
                 err, float("nan")))


def attention(lib, Bb, Hh, S, D, dt, repeats, rows):
    q, k, v = (torch.randn(Bb, Hh, S, D, device="cuda", dtype=dt) for _ in range(3))
    o = torch.empty_like(q)

    def run_dlc():
        check(lib, lib.dlc_attention_causal(DT[dt], Bb, Hh, S, D, q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                            o.data_ptr(), stream()), "dlc_attention_causal")

    def run_torch():
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    run_dlc()
    err = rel(o, run_torch())
    t_dlc, t_torch = median_us(run_dlc, repeats), median_us(run_torch, repeats)
    flops = 2.0 * Bb * Hh * S * S * D  # causal: half of QK^T and PV's 4 B H S^2 D
    rows.append(("attention_causal", "%dx%dx%dx%d" % (Bb, Hh, S, D), dt, flops, t_dlc, t_torch, err, float("nan")))


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 20
    quick = "--quick" in argv
    lib = load(argv[1])
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    rows = []
    for dt in (torch.bfloat16, torch.float16):
        for n in ((1024, 4096) if quick else (1024, 2048, 4096, 8192)):
            gemm(lib, n, n, n, dt, repeats, rows)
        if not quick:
            gemm(lib, 2048, 11008, 4096, dt, repeats, rows)
            gemm(lib, 16, 4096, 4096, dt, repeats, rows)
        for (Nb, H, W, C, K, s) in ((32, 56, 56, 64, 64, 1), (32, 28, 28, 128, 128, 1), (32, 14, 14, 256, 256, 1),
                                    (32, 56, 56, 128, 128, 2)):
            conv(lib, Nb, H, W, C, K, s, dt, repeats, rows)
        for (Bb, Hh, S, D) in ((8, 32, 2048, 64), (2, 32, 8192, 64), (8, 16, 2048, 128), (2, 16, 8192, 128)):
            attention(lib, Bb, Hh, S, D, dt, repeats, rows)
    print("device: %s" % torch.cuda.get_device_name(0))
    print("%-18s %-22s %-5s %10s %10s %9s %9s %7s %10s %10s" % ("op", "shape", "dtype", "dlc us", "torch us", "dlc TF/s",
                                                               "torch TF/s", "ratio", "rel err", "err fp64"))
    bad = 0
    for op, sh, dt, fl, a, b, err, err64 in rows:
        print("%-18s %-22s %-5s %10.1f %10.1f %9.1f %9.1f %7.2f %10.2e %10.2e" %
              (op, sh, "bf16" if dt == torch.bfloat16 else "fp16", a, b, fl / a / 1e6, fl / b / 1e6, b / a, err, err64))
        bad += not (err == err)  # NaN: an output not finite
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
