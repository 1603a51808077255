/* reduction: the sum of an FP32 array, one partial sum per block, written as the CUDA SDK's
 * reduction sample's most unrolled kernel ("reduce6") is (our own code): each thread first adds
 * pairs of elements a block apart while striding over the grid, then the block folds its values
 * in shared memory with sequential addressing (sdata[tid] += sdata[tid + s], s halving) and a
 * barrier per step down to 64 values, then the first warp finishes without barriers through
 * `volatile` shared memory (warp-synchronous: the 32 lanes of a warp run in lockstep; the ISA
 * has no warp shuffles). The block size is a template parameter, so every step is unrolled and
 * the steps a smaller block does not need are compiled away.
 *
 * The host launches it again on the partial sums until one value is left. FP32 additions in a
 * fixed order: the numpy reference repeats the order and checks bit for bit. */
#include "dualflow_cuda.h"

#define BLOCK 256

template <unsigned int block_size>
static __device__ __forceinline__ void warp_reduce(volatile float *sdata, unsigned int tid)
{
    /* one warp, lockstep: every lane reads before any lane writes, no barrier needed */
    if (block_size >= 64) sdata[tid] = sdata[tid] + sdata[tid + 32];
    if (block_size >= 32) sdata[tid] = sdata[tid] + sdata[tid + 16];
    if (block_size >= 16) sdata[tid] = sdata[tid] + sdata[tid + 8];
    if (block_size >= 8) sdata[tid] = sdata[tid] + sdata[tid + 4];
    if (block_size >= 4) sdata[tid] = sdata[tid] + sdata[tid + 2];
    if (block_size >= 2) sdata[tid] = sdata[tid] + sdata[tid + 1];
}

template <unsigned int block_size>
static __device__ __forceinline__ void reduce_block(const float *in, float *out, unsigned int n)
{
    __shared__ float sdata[block_size];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (block_size * 2) + tid;
    unsigned int grid_size = block_size * 2 * gridDim.x;

    /* grid-stride: each thread adds two elements a block apart per step */
    float sum = 0.0f;
    while (i < n) {
        sum += in[i];
        if (i + block_size < n)
            sum += in[i + block_size];
        i += grid_size;
    }
    sdata[tid] = sum;
    __syncthreads();

    /* sequential addressing: the live half folds onto the front half, one barrier per step */
    if (block_size >= 1024) { if (tid < 512) sdata[tid] = sum = sum + sdata[tid + 512]; __syncthreads(); }
    if (block_size >= 512) { if (tid < 256) sdata[tid] = sum = sum + sdata[tid + 256]; __syncthreads(); }
    if (block_size >= 256) { if (tid < 128) sdata[tid] = sum = sum + sdata[tid + 128]; __syncthreads(); }
    if (block_size >= 128) { if (tid < 64) sdata[tid] = sum = sum + sdata[tid + 64]; __syncthreads(); }

    if (tid < 32)
        warp_reduce<block_size>(sdata, tid);
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

/* in: n floats; out: one partial sum per block. Launch: block BLOCK threads, any grid. */
extern "C" __global__ void reduction(const float *in, float *out, unsigned int n)
{
    reduce_block<BLOCK>(in, out, n);
}
