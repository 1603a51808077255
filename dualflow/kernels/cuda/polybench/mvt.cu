/* mvt.cu: matrix-vector product and transpose, x1 += A y1 and x2 += A^T y2 (Polybench/GPU MVT),
 * two kernels, one thread per output element.
 *
 * A is n x n, row-major FP32. mvt_kernel1: thread i adds sum_j A[i][j] y1[j] to x1[i] (a row per
 * thread: uncoalesced); mvt_kernel2: thread i adds sum_j A[j][i] y2[j] to x2[i] (a column per
 * thread: coalesced). Both accumulate through the output pointer, as the original does.
 *
 * Deviation: the grid's and block's y dimension runs over independent problems (problem
 * b = blockIdx.y * blockDim.y + threadIdx.y; each array of problem b starts b problems in), so
 * that a launch can fill the GPU while each thread's loop stays as short as the original's at a
 * modest n. The host launches 256-thread blocks as Polybench/GPU, shaped 128 elements x 2 problems;
 * one problem on 1-D blocks is the original.
 */
#include "dualflow_cuda.h"

extern "C" __global__ void mvt_kernel1(int n, int problems, const float *a, float *x1, const float *y1)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && b < problems) {
        const float *row = a + (b * n + i) * n;
        const float *yb = y1 + b * n;
        float *xi = &x1[b * n + i];
        for (int j = 0; j < n; j++)
            *xi += row[j] * yb[j];
    }
}

extern "C" __global__ void mvt_kernel2(int n, int problems, const float *a, float *x2, const float *y2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && b < problems) {
        const float *col = a + b * n * n + i;
        const float *yb = y2 + b * n;
        float *xi = &x2[b * n + i];
        for (int j = 0; j < n; j++)
            *xi += col[j * n] * yb[j];
    }
}
