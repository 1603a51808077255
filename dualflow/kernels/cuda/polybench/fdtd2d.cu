/* fdtd2d.cu: two-dimensional finite-difference time-domain kernel (Polybench/GPU FDTD-2D), three
 * kernels per time step, one thread per grid point.
 *
 * ex, ey and hz are nx x ny, row-major FP32; fict holds one value per time step. 32 x 8 blocks,
 * x along the columns j, y along the rows i. Per step t, in this order:
 *   fdtd_step1_kernel: ey[0][j] = fict[t]; ey[i][j] -= 0.5 (hz[i][j] - hz[i-1][j]) for i > 0
 *   fdtd_step2_kernel: ex[i][j] -= 0.5 (hz[i][j] - hz[i][j-1]) for j > 0
 *   fdtd_step3_kernel: hz[i][j] -= 0.7 (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j])
 *                      for i < nx-1, j < ny-1
 * Compiled without FP contraction, so the numpy reference rounds as the kernels do. */
#include "dualflow_cuda.h"

extern "C" __global__ void fdtd_step1_kernel(int nx, int ny, const float *fict, float *ey, const float *hz, int t)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < nx && j < ny) {
        int at = i * ny + j;
        if (i == 0)
            ey[at] = fict[t];
        else
            ey[at] = ey[at] - 0.5f * (hz[at] - hz[at - ny]);
    }
}

extern "C" __global__ void fdtd_step2_kernel(int nx, int ny, float *ex, const float *hz)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < nx && j > 0 && j < ny) {
        int at = i * ny + j;
        ex[at] = ex[at] - 0.5f * (hz[at] - hz[at - 1]);
    }
}

extern "C" __global__ void fdtd_step3_kernel(int nx, int ny, const float *ex, const float *ey, float *hz)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < nx - 1 && j < ny - 1) {
        int at = i * ny + j;
        hz[at] = hz[at] - 0.7f * (ex[at + 1] - ex[at] + ey[at + ny] - ey[at]);
    }
}
