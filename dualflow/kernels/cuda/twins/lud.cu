/* Twin of Rodinia's lud (dualflow/kernels/rodinia/lud.s): blocked in-place LU decomposition
 * without pivoting, 16x16 tiles. For each step `offset` the host launches
 *     lud_diagonal  <<<1, 16>>>             factor the diagonal tile in place
 *     lud_perimeter <<<nb, 32>>>            the U tiles right of it and the L tiles below it
 *     lud_internal  <<<(nb, nb), (16, 16)>>> the trailing update m -= L_panel * U_panel
 * and a last lud_diagonal for the bottom-right tile. m is row-major float,
 * matrix_dim x matrix_dim.
 *
 * Compiled with FP contraction on (as nvcc): each `v -= a * b` is one fused multiply-add, and the
 * internal tile's sum is accumulated from 0 by fused multiply-adds and subtracted once, which is
 * what the check's same-order float32 emulation computes. The running values of the triangular
 * solves are kept in a register (Rodinia updates them in shared memory in place; the same
 * operations in the same order). */
#include "dualflow_cuda.h"

#define BS 16

extern "C" __global__ void lud_diagonal(float *m, int matrix_dim, int offset)
{
    __shared__ float shadow[BS][BS];
    int tx = threadIdx.x;
    float *tile = m + offset * matrix_dim + offset;

    for (int i = 0; i < BS; i++)
        shadow[i][tx] = tile[i * matrix_dim + tx];
    __syncthreads();

    for (int i = 0; i < BS - 1; i++) {
        /* column i of L below the diagonal */
        if (tx > i) {
            float v = shadow[tx][i];
            for (int j = 0; j < i; j++)
                v -= shadow[tx][j] * shadow[j][i];
            shadow[tx][i] = v / shadow[i][i];
        }
        __syncthreads();
        /* row i+1 of U right of column i */
        if (tx > i) {
            float v = shadow[i + 1][tx];
            for (int j = 0; j < i + 1; j++)
                v -= shadow[i + 1][j] * shadow[j][tx];
            shadow[i + 1][tx] = v;
        }
        __syncthreads();
    }

    /* row 0 of the tile is unchanged */
    for (int i = 1; i < BS; i++)
        tile[i * matrix_dim + tx] = shadow[i][tx];
}

/* Block b: threads 0..15 solve the U tile right of the diagonal tile (column idx), threads 16..31
 * the L tile below it (row idx); each half loads half of the diagonal tile. */
extern "C" __global__ void lud_perimeter(float *m, int matrix_dim, int offset)
{
    __shared__ float dia[BS][BS];
    __shared__ float peri_row[BS][BS];
    __shared__ float peri_col[BS][BS];
    float *diag = m + offset * matrix_dim + offset;
    float *row_tile = diag + (blockIdx.x + 1) * BS;               /* right of the diagonal tile */
    float *col_tile = diag + (blockIdx.x + 1) * BS * matrix_dim;  /* below it */
    bool upper = threadIdx.x < BS;
    int idx = upper ? threadIdx.x : threadIdx.x - BS;

    if (upper) {
        for (int i = 0; i < BS / 2; i++)
            dia[i][idx] = diag[i * matrix_dim + idx];
        for (int i = 0; i < BS; i++)
            peri_row[i][idx] = row_tile[i * matrix_dim + idx];
    } else {
        for (int i = BS / 2; i < BS; i++)
            dia[i][idx] = diag[i * matrix_dim + idx];
        for (int i = 0; i < BS; i++)
            peri_col[i][idx] = col_tile[i * matrix_dim + idx];
    }
    __syncthreads();

    if (upper) {
        /* forward substitution with the unit lower triangle of dia, down column idx */
        for (int i = 1; i < BS; i++) {
            float v = peri_row[i][idx];
            for (int j = 0; j < i; j++)
                v -= dia[i][j] * peri_row[j][idx];
            peri_row[i][idx] = v;
        }
    } else {
        /* forward substitution with the upper triangle of dia, along row idx */
        for (int i = 0; i < BS; i++) {
            float v = peri_col[idx][i];
            for (int j = 0; j < i; j++)
                v -= peri_col[idx][j] * dia[j][i];
            peri_col[idx][i] = v / dia[i][i];
        }
    }
    __syncthreads();

    if (upper) {
        for (int i = 1; i < BS; i++)  /* row 0 is unchanged */
            row_tile[i * matrix_dim + idx] = peri_row[i][idx];
    } else {
        for (int i = 0; i < BS; i++)
            col_tile[i * matrix_dim + idx] = peri_col[i][idx];
    }
}

/* Tile (by, bx) of the trailing matrix loses the product of its L panel tile and its U panel tile. */
extern "C" __global__ void lud_internal(float *m, int matrix_dim, int offset)
{
    __shared__ float peri_row[BS][BS];
    __shared__ float peri_col[BS][BS];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int global_row = offset + (blockIdx.y + 1) * BS;
    int global_col = offset + (blockIdx.x + 1) * BS;

    peri_row[ty][tx] = m[(offset + ty) * matrix_dim + global_col + tx];
    peri_col[ty][tx] = m[(global_row + ty) * matrix_dim + offset + tx];
    __syncthreads();

    float sum = 0.0f;
    for (int i = 0; i < BS; i++)
        sum += peri_col[ty][i] * peri_row[i][tx];
    m[(global_row + ty) * matrix_dim + global_col + tx] -= sum;
}
