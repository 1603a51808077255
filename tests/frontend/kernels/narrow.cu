// 16-bit arithmetic and merged stores as clang writes them for Csmith's programs: an unsigned
// 16-bit compare with an immediate above 0x7fff, 16-bit division by a constant (mul.hi.s16),
// widening 16-bit products (mul.wide.u16), bit-field extracts, and two 32-bit constant stores
// merged into one 64-bit store.
#include "dualflow_cuda.h"

__device__ unsigned short g = 0xFE01;
__device__ int g_pair[4] = {1, 2, 3, 4};

extern "C" __global__ void narrow(const unsigned *seeds, unsigned *out) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned s = seeds[t];
    g ^= (unsigned short)s;
    short x = (short)s;
    unsigned short a = (unsigned short)(s >> 3), b = (unsigned short)(s >> 11);
    if (s & 1) {
        g_pair[2] = -1;
        g_pair[3] = -1;
    }
    out[5 * t + 0] = g > (unsigned short)0x87A6;
    out[5 * t + 1] = (unsigned short)(short)(x / (short)7);
    out[5 * t + 2] = (unsigned)g * (unsigned short)(b ^ a);
    out[5 * t + 3] = (s >> 5) & 0x3ffu;
    out[5 * t + 4] = (unsigned)(g_pair[0] + 3 * g_pair[1] + 5 * g_pair[2] + 7 * g_pair[3]);
}
