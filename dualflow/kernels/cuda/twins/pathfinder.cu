/* Twin of Rodinia's pathfinder (dualflow/kernels/rodinia/pathfinder.s): the min-cost path dynamic
 * program, row by row. A block of BLOCK_SIZE threads advances its window of columns by
 * `iteration` rows per launch (a pyramid: after step i only threads i+1 .. BLOCK_SIZE-2-i still
 * hold exact values) in shared memory, with two barriers per row:
 *     result[x] = min(prev[x-1], prev[x], prev[x+1]) + wall[startStep + i][x]
 * the neighbours clamped to the part of the window inside the grid. gpuWall holds wall rows
 * 1 .. rows-1. Integer arithmetic only. */
#include "dualflow_cuda.h"

#define BLOCK_SIZE 256
#define HALO 1

static __device__ __forceinline__ bool in_range(int x, int lo, int hi) { return x >= lo && x <= hi; }

extern "C" __global__ void dynproc_kernel(int iteration, const int *gpuWall, const int *gpuSrc, int *gpuResults,
                                          int cols, int rows, int startStep, int border)
{
    __shared__ int prev[BLOCK_SIZE];
    __shared__ int result[BLOCK_SIZE];
    int tx = threadIdx.x;

    /* the columns this block owns at the end, and where its window starts */
    int small_block_cols = BLOCK_SIZE - iteration * HALO * 2;
    int blkX = small_block_cols * blockIdx.x - border;
    int blkXmax = blkX + BLOCK_SIZE - 1;
    int xidx = blkX + tx;

    /* the part of the window inside the grid, and this thread's clamped neighbours */
    int validXmin = blkX < 0 ? -blkX : 0;
    int validXmax = blkXmax > cols - 1 ? BLOCK_SIZE - 1 - (blkXmax - cols + 1) : BLOCK_SIZE - 1;
    int west = max(tx - 1, validXmin);
    int east = min(tx + 1, validXmax);
    bool inside = in_range(tx, validXmin, validXmax);

    if (in_range(xidx, 0, cols - 1))
        prev[tx] = gpuSrc[xidx];
    __syncthreads();

    bool computed;
    for (int i = 0; i < iteration; i++) {
        computed = in_range(tx, i + 1, BLOCK_SIZE - i - 2) && inside;
        if (computed) {
            int shortest = min(min(prev[west], prev[tx]), prev[east]);
            result[tx] = shortest + gpuWall[cols * (startStep + i) + xidx];
        }
        __syncthreads();
        if (i == iteration - 1)
            break;
        if (computed)
            prev[tx] = result[tx];
        __syncthreads();
    }
    /* the threads still exact after the last row write the block's columns */
    if (computed)
        gpuResults[xidx] = result[tx];
}
