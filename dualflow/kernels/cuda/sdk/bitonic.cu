/* bitonic: each block sorts its own array of key/value pairs in shared memory with Batcher's
 * bitonic sorting network, as the CUDA SDK's sortingNetworks sample does for arrays that fit
 * in shared memory (our own code). The network is data-independent: for every merge size k and
 * every stride j a thread compare-exchanges one pair, with a barrier between steps, so barriers
 * sit inside two nested loops.
 *
 * A block of length / 2 threads sorts `length` pairs (a power of two, 2..MAX_LENGTH) from
 * src_key/src_val at blockIdx.x * length into dst_key/dst_val; dir = 1 sorts ascending, 0
 * descending. Keys are unsigned 32-bit words; values travel with their keys. */
#include "dualflow_cuda.h"

#define MAX_LENGTH 1024

/* put the pair at a, b in order: ascending when up, else descending */
static __device__ __forceinline__ void compare_exchange(unsigned *key, unsigned *val,
                                                        unsigned a, unsigned b, unsigned up)
{
    unsigned ka = key[a], kb = key[b];
    if ((ka > kb) == up) {
        unsigned va = val[a], vb = val[b];
        key[a] = kb; key[b] = ka;
        val[a] = vb; val[b] = va;
    }
}

extern "C" __global__ void bitonic_sort(unsigned *dst_key, unsigned *dst_val, const unsigned *src_key,
                                        const unsigned *src_val, unsigned length, unsigned dir)
{
    __shared__ unsigned s_key[MAX_LENGTH];
    __shared__ unsigned s_val[MAX_LENGTH];

    unsigned t = threadIdx.x;
    unsigned base = blockIdx.x * length;
    unsigned half = length / 2;
    s_key[t] = src_key[base + t];
    s_val[t] = src_val[base + t];
    s_key[t + half] = src_key[base + t + half];
    s_val[t + half] = src_val[base + t + half];

    /* merge sizes k = 2, 4, .., length; thread t owns the pair (lo, lo + j) of step (k, j):
     * lo is t with a zero bit inserted at position log2(j). A pair lying in a k-run whose
     * index has bit k set sorts the other way, which makes each 2k-run bitonic. */
    for (unsigned k = 2; k <= length; k <<= 1) {
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            __syncthreads();
            unsigned lo = 2 * t - (t & (j - 1));
            unsigned up = ((lo & k) == 0) == (dir != 0);
            compare_exchange(s_key, s_val, lo, lo + j, up);
        }
    }
    __syncthreads();
    dst_key[base + t] = s_key[t];
    dst_val[base + t] = s_val[t];
    dst_key[base + t + half] = s_key[t + half];
    dst_val[base + t + half] = s_val[t + half];
}
