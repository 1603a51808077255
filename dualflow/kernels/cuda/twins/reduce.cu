/* Twin of the reduce sample (dualflow/kernels/samples/reduce.reg.s): each block sums its blockDim.x
 * inputs (zero past n) by a tree in shared memory, halving the active threads each step with a
 * barrier per step; thread 0 writes the block's sum. blockDim.x: a power of two, at most 128. */
#include "dualflow_cuda.h"

#define MAX_BLOCK 128

extern "C" __global__ void reduce(const float *in, float *out, int n)
{
    __shared__ float partial[MAX_BLOCK];
    unsigned tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    partial[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half)
            partial[tid] += partial[tid + half];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = partial[0];
}
