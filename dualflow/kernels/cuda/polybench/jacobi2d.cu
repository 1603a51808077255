/* jacobi2d.cu: two-dimensional Jacobi relaxation (Polybench/GPU JACOBI2D), two kernels per time
 * step, one thread per grid point.
 *
 * A and B are n x n, row-major FP32. 32 x 8 blocks, x along the columns j, y along the rows i.
 * Per step, for interior points (0 < i, j < n-1): jacobi2d_kernel1 writes B[i][j] = 0.2 times the
 * sum of A[i][j] and its four neighbours (summed centre, left, right, below, above, as the
 * original), then jacobi2d_kernel2 copies B back into A. Compiled without FP contraction. */
#include "dualflow_cuda.h"

extern "C" __global__ void jacobi2d_kernel1(int n, const float *a, float *b)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > 0 && i < n - 1 && j > 0 && j < n - 1) {
        int at = i * n + j;
        b[at] = 0.2f * (a[at] + a[at - 1] + a[at + 1] + a[at + n] + a[at - n]);
    }
}

extern "C" __global__ void jacobi2d_kernel2(int n, float *a, const float *b)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > 0 && i < n - 1 && j > 0 && j < n - 1) {
        int at = i * n + j;
        a[at] = b[at];
    }
}
