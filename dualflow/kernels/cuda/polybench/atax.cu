/* atax.cu: y = A^T (A x) (Polybench/GPU ATAX) in two kernels, one thread per output element.
 *
 * A is nx x ny, row-major FP32; x and y have ny elements, tmp nx. atax_kernel1: thread i forms
 * tmp[i] = sum_j A[i][j] x[j] (a row per thread: uncoalesced); atax_kernel2: thread j forms
 * y[j] = sum_i A[i][j] tmp[i] (a column per thread: coalesced). Both accumulate through the output
 * pointer, as the original does.
 *
 * Deviation: the grid's and block's y dimension runs over independent problems (problem
 * b = blockIdx.y * blockDim.y + threadIdx.y; each array of problem b starts b problems in), so
 * that a launch can fill the GPU while each thread's loop stays as short as the original's at a
 * modest n. The host launches 256-thread blocks as Polybench/GPU, shaped 128 elements x 2 problems;
 * one problem on 1-D blocks is the original.
 */
#include "dualflow_cuda.h"

extern "C" __global__ void atax_kernel1(int nx, int ny, int problems, const float *a, const float *x, float *tmp)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < nx && b < problems) {
        const float *row = a + (b * nx + i) * ny;
        const float *xb = x + b * ny;
        float *t = &tmp[b * nx + i];
        *t = 0.0f;
        for (int j = 0; j < ny; j++)
            *t += row[j] * xb[j];
    }
}

extern "C" __global__ void atax_kernel2(int nx, int ny, int problems, const float *a, float *y, const float *tmp)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y * blockDim.y + threadIdx.y;
    if (j < ny && b < problems) {
        const float *col = a + b * nx * ny + j;
        const float *tb = tmp + b * nx;
        float *yj = &y[b * ny + j];
        *yj = 0.0f;
        for (int i = 0; i < nx; i++)
            *yj += col[i * ny] * tb[i];
    }
}
