/* transpose: out = in^T through a shared 32x32 tile, as the CUDA SDK's transpose sample's
 * "no bank conflicts" kernel does it (our own code): a 32x8 block reads a tile row by row
 * (coalesced), waits at a barrier, and writes the transposed tile row by row (coalesced again),
 * reading the tile down a column. The tile has one padding column (TILE + 1 words per row), so
 * the 32 words of a column fall into 32 different banks.
 *
 * in is height x width, out is width x height, row-major 32-bit words. Launch: grid
 * (ceil(width / TILE), ceil(height / TILE)), block (TILE, BLOCK_ROWS). Edge tiles are guarded,
 * so any extent works (the SDK requires multiples of the tile). */
#include "dualflow_cuda.h"

#define TILE 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose(float *out, const float *in, int width, int height)
{
    __shared__ float tile[TILE][TILE + 1];

    int x = blockIdx.x * TILE + threadIdx.x;        /* column of in */
    int y = blockIdx.y * TILE + threadIdx.y;        /* first row of in this thread reads */
    for (int i = 0; i < TILE; i += BLOCK_ROWS)
        if (x < width && y + i < height)
            tile[threadIdx.y + i][threadIdx.x] = in[(y + i) * width + x];
    __syncthreads();

    x = blockIdx.y * TILE + threadIdx.x;            /* column of out = row of in */
    y = blockIdx.x * TILE + threadIdx.y;            /* row of out = column of in */
    for (int i = 0; i < TILE; i += BLOCK_ROWS)
        if (x < height && y + i < width)
            out[(y + i) * height + x] = tile[threadIdx.x][threadIdx.y + i];
}
