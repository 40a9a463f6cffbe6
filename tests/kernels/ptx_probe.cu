// A kernel built with PTX embedded (code=compute_80): fatbin_scan must reject it.
extern "C" __global__ void probe(float *x) { x[threadIdx.x] *= 2.0f; }
