// Warp votes: any, all and ballot over each warp's active lanes.
#include "dualflow_cuda.h"

extern "C" __global__ void votes(const int *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = i < n ? in[i] : 0;
    unsigned any = __any_sync(0xffffffffu, x > 5);
    unsigned all = __all_sync(0xffffffffu, x > 5);
    unsigned bal = __ballot_sync(0xffffffffu, x & 1);
    if (i < n) out[i] = any + 2 * all + 4 * (bal & 0xff);
}
