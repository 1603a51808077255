/* gemm.cu: C = alpha * A * B + beta * C (Polybench/GPU GEMM), one thread per element of C.
 *
 * A is ni x nk, B is nk x nj, C is ni x nj, all row-major FP32. Threads are laid out as in
 * Polybench/GPU: 32 x 8 blocks, x along the columns j of C, y along its rows i. Each thread scales
 * its element of C by beta, then adds alpha * A[i][k] * B[k][j] for every k, reading and writing
 * the element through its pointer in every iteration as the original does (the compiler may keep
 * it in a register: no other pointer is written). Deviation: the grid's x extent covers nj (the
 * original sizes it by ni, the same for its square sizes). */
#include "dualflow_cuda.h"

extern "C" __global__ void gemm_kernel(int ni, int nj, int nk, float alpha, float beta,
                                       const float *a, const float *b, float *c)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < ni && j < nj) {
        float *cij = &c[i * nj + j];
        *cij *= beta;
        for (int k = 0; k < nk; k++)
            *cij += alpha * a[i * nk + k] * b[k * nj + j];
    }
}
