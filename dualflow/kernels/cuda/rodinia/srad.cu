/* srad: the two kernels of one iteration of Rodinia's srad_v2 (speckle-reducing anisotropic
 * diffusion of an image J), our own code of what they compute.
 *
 * srad_1: per pixel, the differences to its four neighbours (north, south, west, east; a pixel on
 * the image border is its own neighbour), the diffusion coefficient c from the normalized gradient
 * and Laplacian and the ROI statistic q0sqr, clamped to [0, 1]; writes the four differences and c.
 * srad_2: per pixel, the divergence from its own c (north, west) and its south and east
 * neighbours' c, and the update J += lambda / 4 * divergence.
 *
 * A 16x16 block stages its tile in shared memory with the halo it needs (srad_1: all four sides,
 * srad_2: south and east), the border rows and columns clamped, then computes from shared memory
 * only. rows and cols are multiples of 16 (Rodinia's requirement). Launch both with grid
 * (cols / 16, rows / 16), block (16, 16). Rodinia's constants 0.5, 1/16, 0.25 and 1.0 are
 * double there; here everything is FP32, evaluated left to right as written. */
#include "dualflow_cuda.h"

#define B 16

extern "C" __global__ void srad_1(float *E_C, float *W_C, float *N_C, float *S_C, const float *J, float *C,
                                  int cols, int rows, float q0sqr)
{
    __shared__ float tile[B + 2][B + 2];  /* the block's pixels at [1..B][1..B], halo around */

    int tx = threadIdx.x, ty = threadIdx.y;
    int r = blockIdx.y * B + ty, c = blockIdx.x * B + tx;
    int index = r * cols + c;

    tile[ty + 1][tx + 1] = J[index];
    if (ty == 0) tile[0][tx + 1] = J[max(r - 1, 0) * cols + c];
    if (ty == B - 1) tile[B + 1][tx + 1] = J[min(r + 1, rows - 1) * cols + c];
    if (tx == 0) tile[ty + 1][0] = J[r * cols + max(c - 1, 0)];
    if (tx == B - 1) tile[ty + 1][B + 1] = J[r * cols + min(c + 1, cols - 1)];
    __syncthreads();

    float jc = tile[ty + 1][tx + 1];
    float n = tile[ty][tx + 1] - jc;
    float s = tile[ty + 2][tx + 1] - jc;
    float w = tile[ty + 1][tx] - jc;
    float e = tile[ty + 1][tx + 2] - jc;

    float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);   /* squared gradient magnitude */
    float l = (n + s + w + e) / jc;                           /* Laplacian */
    float num = 0.5f * g2 - 0.0625f * (l * l);
    float den = 1.0f + 0.25f * l;
    float qsqr = num / (den * den);
    den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    float coef = 1.0f / (1.0f + den);
    if (coef < 0.0f) coef = 0.0f;
    else if (coef > 1.0f) coef = 1.0f;

    C[index] = coef;
    N_C[index] = n;
    S_C[index] = s;
    W_C[index] = w;
    E_C[index] = e;
}

extern "C" __global__ void srad_2(const float *E_C, const float *W_C, const float *N_C, const float *S_C,
                                  float *J, const float *C, int cols, int rows, float lambda)
{
    __shared__ float c_tile[B + 1][B + 1];  /* the block's c at [0..B-1][0..B-1], south and east halo */

    int tx = threadIdx.x, ty = threadIdx.y;
    int r = blockIdx.y * B + ty, c = blockIdx.x * B + tx;
    int index = r * cols + c;

    c_tile[ty][tx] = C[index];
    if (ty == B - 1) c_tile[B][tx] = C[min(r + 1, rows - 1) * cols + c];
    if (tx == B - 1) c_tile[ty][B] = C[r * cols + min(c + 1, cols - 1)];
    __syncthreads();

    float cc = c_tile[ty][tx];
    float cs = c_tile[ty + 1][tx];
    float ce = c_tile[ty][tx + 1];
    float divergence = cc * N_C[index] + cs * S_C[index] + cc * W_C[index] + ce * E_C[index];
    J[index] = J[index] + 0.25f * lambda * divergence;
}
