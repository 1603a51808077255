/* streamcluster: the kernel of Rodinia's CUDA streamcluster, pgain's cost computation (our own
 * code of what it computes). For a candidate facility x, each thread takes one point and compares
 * its weighted distance to x with its current cost:
 *  - closer to x: the point would switch (switch_membership = 1) and saves cost - x_cost, counted
 *    (negatively) in its row's slot K;
 *  - else: keeping the point at its centre costs cost - x_cost more if that centre is closed,
 *    counted in its row's slot of that centre (center_table[assign]).
 * Each point owns the row work_mem[point * stride ..] (stride = K + 1), so no two threads write
 * one word; the host then sums the columns and decides whether to open x.
 *
 * Points are Rodinia's struct (weight, coordinate pointer, assigned centre, cost), here four
 * 32-bit words; coordinates are feature-major (coord[i * num + point]); bool arrays are words.
 * Launch: 1-D grid of ceil(num / 512) blocks (rows of gridDim.x blocks as in Rodinia), 512 threads. */
#include "dualflow_cuda.h"

struct Point {
    float weight;
    unsigned coord;   /* the host's pointer to the coordinates, unused here */
    int assign;       /* index of the point's centre */
    float cost;       /* weight * distance to that centre */
};

/* squared Euclidean distance of points a and b, coordinates in order */
static __device__ float distance2(int a, int b, int num, int dim, const float *coord)
{
    float sum = 0.0f;
    for (int i = 0; i < dim; i++) {
        float d = coord[i * num + a] - coord[i * num + b];
        sum += d * d;
    }
    return sum;
}

extern "C" __global__ void pgain_cost(int num, int dim, int x, const Point *p, int K, int stride,
                                      const float *coord, float *work_mem, const int *center_table,
                                      int *switch_membership)
{
    int block = blockIdx.x + gridDim.x * blockIdx.y;
    int point = blockDim.x * block + threadIdx.x;
    if (point >= num)
        return;

    float *lower = &work_mem[point * stride];
    float x_cost = distance2(point, x, num, dim, coord) * p[point].weight;
    float cost = p[point].cost;
    if (x_cost < cost) {
        switch_membership[point] = 1;
        lower[K] += x_cost - cost;
    } else {
        lower[center_table[p[point].assign]] += cost - x_cost;
    }
}
