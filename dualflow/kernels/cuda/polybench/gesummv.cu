/* gesummv.cu: scalar, vector and matrix multiplication y = alpha * A x + beta * B x
 * (Polybench/GPU GESUMMV), one kernel, one thread per output element.
 *
 * A and B are n x n, row-major FP32. Thread i accumulates tmp[i] = sum_j A[i][j] x[j] and
 * y[i] = sum_j B[i][j] x[j] together, through their pointers as the original does (two rows per
 * thread: uncoalesced), then writes y[i] = alpha * tmp[i] + beta * y[i]. The kernel zeroes tmp[i]
 * and y[i] first (Polybench/GPU relies on the host's copies of them; its CPU version zeroes them).
 *
 * Deviation: the grid's and block's y dimension runs over independent problems (problem
 * b = blockIdx.y * blockDim.y + threadIdx.y; each array of problem b starts b problems in), so
 * that a launch can fill the GPU while each thread's loop stays as short as the original's at a
 * modest n. The host launches 256-thread blocks as Polybench/GPU, shaped 128 elements x 2 problems;
 * one problem on 1-D blocks is the original.
 */
#include "dualflow_cuda.h"

extern "C" __global__ void gesummv_kernel(int n, int problems, float alpha, float beta, const float *a, const float *b,
                                          float *tmp, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int p = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && p < problems) {
        const float *arow = a + (p * n + i) * n;
        const float *brow = b + (p * n + i) * n;
        const float *xp = x + p * n;
        float *ti = &tmp[p * n + i];
        float *yi = &y[p * n + i];
        *ti = 0.0f;
        *yi = 0.0f;
        for (int j = 0; j < n; j++) {
            *ti += arow[j] * xp[j];
            *yi += brow[j] * xp[j];
        }
        *yi = alpha * *ti + beta * *yi;
    }
}
