/* syrk.cu: symmetric rank-k update C = alpha * A * A^T + beta * C (Polybench/GPU SYRK), one thread
 * per element of C.
 *
 * A is n x m, C is n x n, row-major FP32. 32 x 8 blocks, x along the columns j of C, y along its
 * rows i; the thread scales C[i][j] by beta and adds alpha * A[i][k] * A[j][k] over k, through the
 * element's pointer as the original does. Like Polybench/GPU it computes the whole of C, both
 * triangles. Row i of A is read along k by every thread of a block row (a broadcast), row j by
 * 32 threads at a stride of m words (uncoalesced): the access pattern of the original. */
#include "dualflow_cuda.h"

extern "C" __global__ void syrk_kernel(int n, int m, float alpha, float beta, const float *a, float *c)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < n) {
        float *cij = &c[i * n + j];
        *cij *= beta;
        for (int k = 0; k < m; k++)
            *cij += alpha * a[i * m + k] * a[j * m + k];
    }
}
