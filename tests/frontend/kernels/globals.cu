// Module-scope variables of several widths, as Csmith writes them: with private globals each thread
// gets its own initialized copy in local memory.
#include "dualflow_cuda.h"
__device__ int g_a = 5;
__device__ unsigned char g_b[3] = {1, 2, 3};
__device__ short g_c = -7;
__device__ int g_arr[4][2] = {{1,2},{3,4},{5,6},{7,8}};
extern "C" __global__ void prog(unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  g_a ^= i;
  for (int k = 0; k < 3; k++) g_b[k] += g_a >> k;
  g_c = (short)(g_c * g_a);
  g_arr[i & 3][1] += g_c;
  unsigned s = g_a + g_b[0] + g_b[1] * 7 + g_b[2] * 13 + g_c;
  for (int k = 0; k < 8; k++) s = s * 31 + ((int*)g_arr)[k];
  if (i < n) out[i] = s;
}
