/* backprop: the two kernels of Rodinia's backprop (a 3-layer perceptron: `in` inputs, 16 hidden
 * units, 1 output), our own code of what they compute.
 *
 * Weights are an (in + 1) x (hid + 1) row-major matrix, row 0 and column 0 the biases. A
 * 16x16-thread block owns 16 input rows (blockIdx.y) and the 16 hidden columns.
 *
 * layerforward: each thread multiplies its weight by its row's input unit in a shared tile, the
 * block sums the tile's columns with a tree (rows 2^i apart, a barrier per level), and the
 * block's 16 column sums go to hidden_partial_sum[by][j]; the host adds the blocks' sums. As in
 * Rodinia, the reduced tile is also written back over the weights (the host uploads them again
 * before adjust_weights).
 *
 * adjust_weights: w += ETA * delta[j] * ly[i] + MOMENTUM * oldw, oldw = the change; the bias row
 * (row 0) is updated by block 0's first thread row.
 *
 * Launch both with grid (1, in / 16) and block (16, 16). Rodinia's ETA and MOMENTUM are double
 * constants (0.3); here they are FP32 and every operation is FP32. */
#include "dualflow_cuda.h"

#define WIDTH 16   /* hidden units = threads per block row */
#define HEIGHT 16  /* input rows per block */
#define ETA 0.3f
#define MOMENTUM 0.3f

extern "C" __global__ void bpnn_layerforward(const float *input, float *input_weights,
                                             float *hidden_partial_sum, int in, int hid)
{
    __shared__ float input_node[HEIGHT];
    __shared__ float weights[HEIGHT][WIDTH];

    int by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    int row = HEIGHT * by + ty + 1;                     /* input unit (row 0 is the bias) */
    int index = (hid + 1) * row + tx + 1;               /* weight of row, hidden unit tx + 1 */

    if (tx == 0)
        input_node[ty] = input[row];
    __syncthreads();
    weights[ty][tx] = input_weights[index];
    __syncthreads();
    weights[ty][tx] = weights[ty][tx] * input_node[ty];
    __syncthreads();

    /* tree over the rows: at level i, rows that are multiples of 2^i add the row 2^(i-1) below */
    for (int step = 2; step <= HEIGHT; step *= 2) {
        if (ty % step == 0)
            weights[ty][tx] = weights[ty][tx] + weights[ty + step / 2][tx];
        __syncthreads();
    }
    input_weights[index] = weights[ty][tx];
    __syncthreads();
    if (tx == 0)
        hidden_partial_sum[by * hid + ty] = weights[0][ty];
}

extern "C" __global__ void bpnn_adjust_weights(const float *delta, int hid, const float *ly, int in,
                                               float *w, float *oldw)
{
    int by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    int row = HEIGHT * by + ty + 1;
    int index = (hid + 1) * row + tx + 1;
    int col = tx + 1;

    float change = ETA * delta[col] * ly[row] + MOMENTUM * oldw[index];
    w[index] += change;
    oldw[index] = change;
    __syncthreads();
    if (ty == 0 && by == 0) {                           /* the bias row: its input is 1 */
        float bias_change = ETA * delta[col] + MOMENTUM * oldw[col];
        w[col] += bias_change;
        oldw[col] = bias_change;
    }
}
