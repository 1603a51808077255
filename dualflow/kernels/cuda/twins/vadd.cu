/* Twin of the vadd sample (dualflow/kernels/samples/vadd.reg.s): c[i] = a[i] + b[i], one thread
 * per element, threads past n leave at once. */
#include "dualflow_cuda.h"

extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
