// Integer and FP32 operations the machine builds from others: division, remainder, the high
// half of a product, rounding to an integral value, sub-word values in local memory.
#include "dualflow_cuda.h"

extern "C" __global__ void intdiv(const unsigned *a, const unsigned *b, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i], y = b[i];
    int sx = (int)x, sy = (int)y;
    out[8 * i + 0] = x / y;
    out[8 * i + 1] = x % y;
    out[8 * i + 2] = (unsigned)(sx / sy);
    out[8 * i + 3] = (unsigned)(sx % sy);
    out[8 * i + 4] = x / 7u;                 // division by a constant: mul.hi
    out[8 * i + 5] = (unsigned)(sx / 10);
    out[8 * i + 6] = (unsigned)(((long long)sx * sy) >> 32);  // mul.hi.s32
    out[8 * i + 7] = (unsigned)(((unsigned long long)x * y) >> 32);  // mul.hi.u32
}

extern "C" __global__ void rounding(const float *a, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i];
    out[4 * i + 0] = __builtin_floorf(x);
    out[4 * i + 1] = __builtin_ceilf(x);
    out[4 * i + 2] = __builtin_truncf(x);
    out[4 * i + 3] = __builtin_rintf(x);
}

extern "C" __global__ void bytes(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned char buf[16];
    short half[5];
    int x = in[i];
    for (int k = 0; k < 16; k++) buf[k] = (unsigned char)(x >> (k & 7)) + k;
    for (int k = 0; k < 5; k++) half[k] = (short)((unsigned)x * (k + 1) - 40000u * k);
    unsigned sum = 0;
    for (int k = 0; k < 16; k++) sum = sum * 3 + buf[(k * 5 + x) & 15];
    for (int k = 0; k < 5; k++) sum += half[((unsigned)x + k) % 5u];
    signed char c = (signed char)x;
    out[i] = (int)(sum + c);
}
