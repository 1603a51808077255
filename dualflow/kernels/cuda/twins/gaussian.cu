/* Twin of Rodinia's gaussian (dualflow/kernels/rodinia/gaussian.s): Gaussian elimination without
 * pivoting; the host launches Fan1 then Fan2 for each pivot t and back-substitutes itself.
 * Matrices are row-major float, Size x Size.
 *
 * Compiled with FP contraction on (clang's default for CUDA, as nvcc): each `x -= p * q` becomes
 * one fused multiply-add, which is what the check's float32 elimination computes. */
#include "dualflow_cuda.h"

/* Multipliers of column t: one thread per row below the pivot. */
extern "C" __global__ void Fan1(float *m, float *a, int Size, int t)
{
    unsigned row_below = blockIdx.x * blockDim.x + threadIdx.x;
    if (row_below >= Size - 1 - t)
        return;
    int row = row_below + t + 1;
    m[row * Size + t] = a[row * Size + t] / a[t * Size + t];
}

/* Eliminate column t from the rows below the pivot: x indexes the row below the pivot, y the
 * column from t on; the y == 0 threads also update b. j1 (= Size - t) is unused, as in Rodinia. */
extern "C" __global__ void Fan2(float *m, float *a, float *b, int Size, int j1, int t)
{
    unsigned xidx = blockIdx.x * blockDim.x + threadIdx.x;
    if (xidx >= Size - 1 - t)
        return;
    unsigned yidx = blockIdx.y * blockDim.y + threadIdx.y;
    if (yidx >= Size - t)
        return;
    int row = xidx + 1 + t;
    int col = yidx + t;
    a[row * Size + col] -= m[row * Size + t] * a[t * Size + col];
    if (yidx == 0)
        b[row] -= m[row * Size + col] * b[t];
}
