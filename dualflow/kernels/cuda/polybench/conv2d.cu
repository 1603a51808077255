/* conv2d.cu: 3 x 3 two-dimensional convolution B = K * A (Polybench/GPU 2DCONV), one thread per
 * output element.
 *
 * A and B are ni x nj, row-major FP32. 32 x 8 blocks, x along the columns j, y along the rows i.
 * Interior threads (0 < i < ni-1, 0 < j < nj-1) write the weighted sum of the 3 x 3 window around
 * A[i][j] with Polybench's nine weights; border threads write nothing. The sum runs over the
 * window row by row, left to right (compiled without FP contraction, so the numpy reference
 * rounds every product and sum as the kernel does). */
#include "dualflow_cuda.h"

/* Polybench's weights: K[di][dj] for the neighbour at row i+di-1, column j+dj-1 */
#define K00 0.2f
#define K01 0.5f
#define K02 -0.8f
#define K10 -0.3f
#define K11 0.6f
#define K12 -0.9f
#define K20 0.4f
#define K21 0.7f
#define K22 0.10f

extern "C" __global__ void convolution2d_kernel(int ni, int nj, const float *a, float *b)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > 0 && i < ni - 1 && j > 0 && j < nj - 1) {
        const float *up = a + (i - 1) * nj + j;
        const float *mid = up + nj;
        const float *down = mid + nj;
        b[i * nj + j] = K00 * up[-1] + K01 * up[0] + K02 * up[1]
                      + K10 * mid[-1] + K11 * mid[0] + K12 * mid[1]
                      + K20 * down[-1] + K21 * down[0] + K22 * down[1];
    }
}
