/* Twin of Rodinia's nw (dualflow/kernels/rodinia/nw.s): Needleman-Wunsch alignment scores in 16x16
 * tiles. The (cols x cols) score matrix is row-major int; row 0 and column 0 hold the gap
 * penalties. The tiles are swept in anti-diagonals of tiles: needle_cuda_shared_1 the upper-left
 * triangle (launch i has i tiles), needle_cuda_shared_2 the lower-right one. One block of 16
 * threads per tile, thread tx owning column tx: the tile's reference scores and its north row and
 * west column go to shared memory, the 16x16 interior is filled along its 31 anti-diagonals with a
 * barrier per diagonal, and written back:
 *     temp[y][x] = max(temp[y-1][x-1] + ref[y-1][x-1], temp[y][x-1] - penalty, temp[y-1][x] - penalty) */
#include "dualflow_cuda.h"

#define BS 16

static __device__ __forceinline__ int maximum(int a, int b, int c) { return max(max(a, b), c); }

/* The tile whose north-west corner is matrix[corner]: every step after the loads. */
static __device__ __forceinline__ void fill_tile(int (*temp)[BS + 1], int (*ref)[BS], int *matrix_cuda, int cols,
                                                 int penalty, int corner)
{
    int tx = threadIdx.x;
    /* growing anti-diagonals m = 0..15: cell (m - tx + 1, tx + 1) */
    for (int m = 0; m < BS; m++) {
        if (tx <= m) {
            int x = tx + 1;
            int y = m - tx + 1;
            temp[y][x] = maximum(temp[y - 1][x - 1] + ref[y - 1][x - 1], temp[y][x - 1] - penalty,
                                 temp[y - 1][x] - penalty);
        }
        __syncthreads();
    }
    /* shrinking anti-diagonals m = 14..0: cell (16 - tx, tx + 16 - m) */
    for (int m = BS - 2; m >= 0; m--) {
        if (tx <= m) {
            int x = tx + BS - m;
            int y = BS - tx;
            temp[y][x] = maximum(temp[y - 1][x - 1] + ref[y - 1][x - 1], temp[y][x - 1] - penalty,
                                 temp[y - 1][x] - penalty);
        }
        __syncthreads();
    }
    for (int ty = 0; ty < BS; ty++)
        matrix_cuda[corner + (ty + 1) * cols + tx + 1] = temp[ty + 1][tx + 1];
}

extern "C" __global__ void needle_cuda_shared_1(const int *referrence, int *matrix_cuda, int cols, int penalty,
                                                int i, int block_width)
{
    __shared__ int temp[BS + 1][BS + 1];
    __shared__ int ref[BS][BS];
    int tx = threadIdx.x;
    int b_index_x = blockIdx.x;
    int b_index_y = i - 1 - blockIdx.x;
    int corner = cols * BS * b_index_y + BS * b_index_x;

    if (tx == 0)
        temp[0][0] = matrix_cuda[corner];
    for (int ty = 0; ty < BS; ty++)
        ref[ty][tx] = referrence[corner + (ty + 1) * cols + tx + 1];
    __syncthreads();
    temp[tx + 1][0] = matrix_cuda[corner + (tx + 1) * cols];
    __syncthreads();
    temp[0][tx + 1] = matrix_cuda[corner + tx + 1];
    __syncthreads();
    fill_tile(temp, ref, matrix_cuda, cols, penalty, corner);
}

extern "C" __global__ void needle_cuda_shared_2(const int *referrence, int *matrix_cuda, int cols, int penalty,
                                                int i, int block_width)
{
    __shared__ int temp[BS + 1][BS + 1];
    __shared__ int ref[BS][BS];
    int tx = threadIdx.x;
    int b_index_x = blockIdx.x + block_width - i;
    int b_index_y = block_width - blockIdx.x - 1;
    int corner = cols * BS * b_index_y + BS * b_index_x;

    for (int ty = 0; ty < BS; ty++)
        ref[ty][tx] = referrence[corner + (ty + 1) * cols + tx + 1];
    __syncthreads();
    if (tx == 0)
        temp[0][0] = matrix_cuda[corner];
    temp[tx + 1][0] = matrix_cuda[corner + (tx + 1) * cols];
    __syncthreads();
    temp[0][tx + 1] = matrix_cuda[corner + tx + 1];
    __syncthreads();
    fill_tile(temp, ref, matrix_cuda, cols, penalty, corner);
}
