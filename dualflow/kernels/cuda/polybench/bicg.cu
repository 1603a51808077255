/* bicg.cu: the BiCG sub-kernel s = A^T r, q = A p (Polybench/GPU BICG) in two kernels, one thread
 * per output element.
 *
 * A is nx x ny, row-major FP32; r and q have nx elements, p and s ny. bicg_kernel1: thread j forms
 * s[j] = sum_i r[i] A[i][j] (a column per thread: coalesced); bicg_kernel2: thread i forms
 * q[i] = sum_j A[i][j] p[j] (a row per thread: uncoalesced). Both accumulate through the output
 * pointer, as the original does.
 *
 * Deviation: the grid's and block's y dimension runs over independent problems (problem
 * b = blockIdx.y * blockDim.y + threadIdx.y; each array of problem b starts b problems in), so
 * that a launch can fill the GPU while each thread's loop stays as short as the original's at a
 * modest n. The host launches 256-thread blocks as Polybench/GPU, shaped 128 elements x 2 problems;
 * one problem on 1-D blocks is the original.
 */
#include "dualflow_cuda.h"

extern "C" __global__ void bicg_kernel1(int nx, int ny, int problems, const float *a, const float *r, float *s)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y * blockDim.y + threadIdx.y;
    if (j < ny && b < problems) {
        const float *col = a + b * nx * ny + j;
        const float *rb = r + b * nx;
        float *sj = &s[b * ny + j];
        *sj = 0.0f;
        for (int i = 0; i < nx; i++)
            *sj += rb[i] * col[i * ny];
    }
}

extern "C" __global__ void bicg_kernel2(int nx, int ny, int problems, const float *a, const float *p, float *q)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < nx && b < problems) {
        const float *row = a + (b * nx + i) * ny;
        const float *pb = p + b * ny;
        float *qi = &q[b * nx + i];
        *qi = 0.0f;
        for (int j = 0; j < ny; j++)
            *qi += row[j] * pb[j];
    }
}
