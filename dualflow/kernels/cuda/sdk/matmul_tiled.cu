/* matmul-tiled: C = A * B through 16x16 tiles in shared memory, as the CUDA SDK's matrixMul
 * sample computes it (our own code). One thread per element of C; a block walks the A-row and
 * B-column of tiles, staging one tile of each in shared memory between two barriers.
 *
 * A is hA x wA, B is wA x wB, C is hA x wB, all row-major; every extent is a multiple of TILE
 * (the SDK's requirement: the host checks it). Launch: grid (wB / TILE, hA / TILE), block
 * (TILE, TILE). The inner product is a chain of fused multiply-adds, as nvcc contracts it. */
#include "dualflow_cuda.h"

#define TILE 16

extern "C" __global__ void matmul_tiled(float *C, const float *A, const float *B, int wA, int wB)
{
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];

    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int t = 0; t < wA; t += TILE) {
        a_tile[ty][tx] = A[row * wA + t + tx];
        b_tile[ty][tx] = B[(t + ty) * wB + col];
        __syncthreads();            /* both tiles complete before anyone reads them */
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc += a_tile[ty][k] * b_tile[k][tx];
        __syncthreads();            /* everyone done with the tiles before the next load */
    }
    C[row * wB + col] = acc;
}
