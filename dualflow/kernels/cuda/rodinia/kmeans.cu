/* kmeans: the two kernels of Rodinia's CUDA kmeans, our own code of what they compute.
 *
 * invert_mapping: transposes the features from point-major (npoints x nfeatures, as read) to
 * feature-major (nfeatures x npoints), so that in kmeans_point the threads of a warp, one point
 * each, read consecutive words. One thread per point.
 *
 * kmeans_point: each thread finds the cluster centre nearest its point (squared Euclidean
 * distance, features in order, the first of equal distances wins) and writes its index to
 * membership. Rodinia reads the features through a texture and the centres from constant memory;
 * here both are ordinary global loads. The grid is two-dimensional as in Rodinia (a square of
 * blocks, rows of gridDim.x blocks), and threads past npoints do nothing. */
#include "dualflow_cuda.h"

#define FLT_MAX 3.402823466e+38f

extern "C" __global__ void invert_mapping(const float *input, float *output, int npoints, int nfeatures)
{
    int point = blockIdx.x * blockDim.x + threadIdx.x;
    if (point < npoints)
        for (int i = 0; i < nfeatures; i++)
            output[point + npoints * i] = input[point * nfeatures + i];
}

extern "C" __global__ void kmeans_point(const float *features, int nfeatures, int npoints, int nclusters,
                                        int *membership, const float *clusters)
{
    int block = blockIdx.y * gridDim.x + blockIdx.x;
    int point = block * blockDim.x + threadIdx.x;
    if (point >= npoints)
        return;

    int index = -1;
    float min_dist = FLT_MAX;
    for (int i = 0; i < nclusters; i++) {
        float dist = 0.0f;
        for (int l = 0; l < nfeatures; l++) {
            float diff = features[l * npoints + point] - clusters[i * nfeatures + l];
            dist += diff * diff;
        }
        if (dist < min_dist) {
            min_dist = dist;
            index = i;
        }
    }
    membership[point] = index;
}
