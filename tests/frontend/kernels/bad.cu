#include "dualflow_cuda.h"
extern "C" __global__ void uses_double(const float *a, float *out) {
    double d = a[threadIdx.x];
    out[threadIdx.x] = (float)(d * 1.000000001);
}
