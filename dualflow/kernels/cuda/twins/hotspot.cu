/* Twin of Rodinia's hotspot (dualflow/kernels/rodinia/hotspot.s): transient 2-D thermal
 * simulation. A 16x16 block loads a tile of temperature and power, then runs `iteration` time
 * steps of the 5-point stencil on it in shared memory (a pyramid: after step i only tile cells
 * i+1 .. 14-i on both axes are still exact), the neighbours clamped to the part of the tile inside
 * the grid. One step:
 *     t' = T + step/Cap * (P + (S + N - 2T) / Ry + (E + W - 2T) / Rx + (80 - T) / Rz)
 * in FP32, left to right (Rodinia's CUDA source writes 2.0 as a double; the machine has FP32
 * only, so 2.0f as in its OpenCL kernel). Compiled with -ffp-contract=off: the check is bit-exact
 * against a numpy stencil in this order, with no fused multiply-add. */
#include "dualflow_cuda.h"

#define BLOCK_SIZE 16
#define EXPAND_RATE 2

static __device__ __forceinline__ bool in_range(int x, int lo, int hi) { return x >= lo && x <= hi; }

extern "C" __global__ void calculate_temp(int iteration, const float *power, const float *temp_src,
                                          float *temp_dst, int grid_cols, int grid_rows, int border_cols,
                                          int border_rows, float Cap, float Rx, float Ry, float Rz, float step,
                                          float time_elapsed)
{
    __shared__ float temp_on_cuda[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float power_on_cuda[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float temp_t[BLOCK_SIZE][BLOCK_SIZE];

    float amb_temp = 80.0f;
    float step_div_Cap = step / Cap;
    float Rx_1 = 1.0f / Rx;
    float Ry_1 = 1.0f / Ry;
    float Rz_1 = 1.0f / Rz;

    int tx = threadIdx.x;
    int ty = threadIdx.y;

    /* the cells this block owns at the end, and where its tile starts in the grid */
    int small_block_rows = BLOCK_SIZE - iteration * EXPAND_RATE;
    int small_block_cols = BLOCK_SIZE - iteration * EXPAND_RATE;
    int blkY = small_block_rows * blockIdx.y - border_rows;
    int blkX = small_block_cols * blockIdx.x - border_cols;
    int blkYmax = blkY + BLOCK_SIZE - 1;
    int blkXmax = blkX + BLOCK_SIZE - 1;
    int yidx = blkY + ty;
    int xidx = blkX + tx;
    int index = grid_cols * yidx + xidx;

    if (in_range(yidx, 0, grid_rows - 1) && in_range(xidx, 0, grid_cols - 1)) {
        temp_on_cuda[ty][tx] = temp_src[index];
        power_on_cuda[ty][tx] = power[index];
    }
    __syncthreads();

    /* the part of the tile inside the grid, and this cell's clamped neighbours */
    int validYmin = blkY < 0 ? -blkY : 0;
    int validYmax = blkYmax > grid_rows - 1 ? BLOCK_SIZE - 1 - (blkYmax - grid_rows + 1) : BLOCK_SIZE - 1;
    int validXmin = blkX < 0 ? -blkX : 0;
    int validXmax = blkXmax > grid_cols - 1 ? BLOCK_SIZE - 1 - (blkXmax - grid_cols + 1) : BLOCK_SIZE - 1;
    int N = max(ty - 1, validYmin);
    int S = min(ty + 1, validYmax);
    int W = max(tx - 1, validXmin);
    int E = min(tx + 1, validXmax);
    bool inside = in_range(tx, validXmin, validXmax) && in_range(ty, validYmin, validYmax);

    bool computed;
    for (int i = 0; i < iteration; i++) {
        computed = in_range(tx, i + 1, BLOCK_SIZE - i - 2) && in_range(ty, i + 1, BLOCK_SIZE - i - 2) && inside;
        if (computed) {
            float t = temp_on_cuda[ty][tx];
            temp_t[ty][tx] = t + step_div_Cap * (power_on_cuda[ty][tx]
                                                 + (temp_on_cuda[S][tx] + temp_on_cuda[N][tx] - 2.0f * t) * Ry_1
                                                 + (temp_on_cuda[ty][E] + temp_on_cuda[ty][W] - 2.0f * t) * Rx_1
                                                 + (amb_temp - t) * Rz_1);
        }
        __syncthreads();
        if (i == iteration - 1)
            break;
        if (computed)
            temp_on_cuda[ty][tx] = temp_t[ty][tx];
        __syncthreads();
    }
    /* the cells still exact after the last step write the block's part of the grid */
    if (computed)
        temp_dst[index] = temp_t[ty][tx];
}
