/* scan: exclusive prefix sum of 32-bit integers, Blelloch's work-efficient scan per block (as in
 * GPU Gems 3, chapter 39, and the CUDA SDK's scan samples; our own code), with the block totals
 * scanned again and added back so that the whole array is scanned.
 *
 * scan_block: a block of BLOCK threads scans ELEMS = 2 * BLOCK elements in shared memory: the
 * up-sweep builds partial sums in a balanced tree (log2 ELEMS levels, a barrier per level), the
 * root is saved as the block's total and cleared, and the down-sweep pushes the prefixes back
 * down. Shared indices skip one word every 32 (`padded`), so the tree's strided accesses do not
 * pile onto one bank. Elements at or past n read as 0. Integer addition wraps (mod 2^32).
 *
 * add_offsets: element i of block b gets the scanned total of the blocks before b.
 * Launch both with ceil(n / ELEMS) blocks of BLOCK threads. */
#include "dualflow_cuda.h"

#define BLOCK 512
#define ELEMS (2 * BLOCK)
#define LOG_BANKS 5

static __device__ __forceinline__ unsigned padded(unsigned i) { return i + (i >> LOG_BANKS); }

extern "C" __global__ void scan_block(unsigned *out, const unsigned *in, unsigned *block_sums, unsigned n)
{
    __shared__ unsigned s[ELEMS + ELEMS / 32];

    unsigned t = threadIdx.x;
    unsigned base = blockIdx.x * ELEMS;
    unsigned a = t, b = t + BLOCK;                 /* each thread loads two elements */
    s[padded(a)] = base + a < n ? in[base + a] : 0;
    s[padded(b)] = base + b < n ? in[base + b] : 0;

    /* up-sweep: at stride d, node (2t+2)d-1 gains its left sibling (2t+1)d-1 */
    unsigned stride = 1;
    for (unsigned active = ELEMS / 2; active > 0; active >>= 1) {
        __syncthreads();
        if (t < active) {
            unsigned left = stride * (2 * t + 1) - 1, right = stride * (2 * t + 2) - 1;
            s[padded(right)] += s[padded(left)];
        }
        stride <<= 1;
    }

    /* the root holds the block's total: keep it, then make the scan exclusive */
    if (t == 0) {
        block_sums[blockIdx.x] = s[padded(ELEMS - 1)];
        s[padded(ELEMS - 1)] = 0;
    }

    /* down-sweep: each node passes its value to its left child and value + left to its right */
    for (unsigned active = 1; active < ELEMS; active <<= 1) {
        stride >>= 1;
        __syncthreads();
        if (t < active) {
            unsigned left = stride * (2 * t + 1) - 1, right = stride * (2 * t + 2) - 1;
            unsigned l = s[padded(left)];
            s[padded(left)] = s[padded(right)];
            s[padded(right)] += l;
        }
    }
    __syncthreads();
    if (base + a < n) out[base + a] = s[padded(a)];
    if (base + b < n) out[base + b] = s[padded(b)];
}

extern "C" __global__ void add_offsets(unsigned *out, const unsigned *block_offsets, unsigned n)
{
    unsigned offset = block_offsets[blockIdx.x];
    unsigned i = blockIdx.x * ELEMS + threadIdx.x;
    if (i < n) out[i] += offset;
    if (i + BLOCK < n) out[i + BLOCK] += offset;
}
