// Control-flow shapes the reconvergence pass must handle: if/else, lane-dependent loops,
// break and continue, early return, nested loops, a loop with two exits sharing a block.
#include "dualflow_cuda.h"

extern "C" __global__ void shapes(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;                       // early exit
    int x = in[i];
    int acc = 0;
    if (x & 1) acc = x * 3; else acc = x / 2;  // if / else
    for (int k = 0; k < (x & 15); k++) {       // lane-dependent trip count
        if (k == 11 && (x & 64)) break;        // break
        if (k & 1) continue;                   // continue
        acc += k * x;
        for (int j = 0; j < (k & 3); j++) {    // nested loop
            acc ^= j + k;
            if (acc < -1000000) goto done;     // leaves two loops
        }
    }
    while (x > 1 && acc != 7) {                // Collatz-like while with if/else inside
        if (x & 1) x = 3 * x + 1; else x >>= 1;
        acc += 1;
        if (acc > 100000) break;
    }
done:
    out[i] = acc;
}
