/* Twin of Rodinia's nn (dualflow/kernels/rodinia/nn.s): the Euclidean distance from every
 * hurricane record {lat, lng} to a target, one thread per record, on a grid that may be 2-D.
 *
 * Compiled with FP contraction on (as nvcc): the sum of the two squares becomes one fused
 * multiply-add, dlat * dlat + round(dlng * dlng), which is what the check computes. */
#include "dualflow_cuda.h"

struct LatLong {
    float lat;
    float lng;
};

extern "C" __global__ void euclid(const LatLong *d_locations, float *d_distances, int numRecords,
                                  float lat, float lng)
{
    int globalId = blockDim.x * (gridDim.x * blockIdx.y + blockIdx.x) + threadIdx.x;
    if (globalId < numRecords) {
        float dlat = lat - d_locations[globalId].lat;
        float dlng = lng - d_locations[globalId].lng;
        d_distances[globalId] = sqrtf(dlat * dlat + dlng * dlng);
    }
}
