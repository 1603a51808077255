/* Twin of the divloop sample (dualflow/kernels/samples/divloop.reg.s):
 * out[i] = float(sum of k*k for k = 0 .. i & 7) * x[i], a loop whose trip count differs between
 * the lanes of a warp.
 *
 * Left alone, clang removes the loop: it unrolls it into a switch over i & 7 (at most 8 trips),
 * or, with unrolling off, replaces the sum by its closed form k(k-1)(k-2)/6-style polynomial in
 * 64-bit arithmetic, which the machine lacks. `#pragma unroll 1` and the flag
 * `-mllvm -replexitval=never` (twins/__init__.py) keep the loop the sample is about. */
#include "dualflow_cuda.h"

extern "C" __global__ void divloop(const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int last = i & 7;
    int acc = 0;
#pragma unroll 1
    for (int k = 0; k <= last; ++k)
        acc += k * k;
    out[i] = (float)acc * x[i];
}
