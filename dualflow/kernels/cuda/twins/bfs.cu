/* Twin of Rodinia's bfs (dualflow/kernels/rodinia/bfs.s): level-synchronous breadth-first search,
 * one thread per node; the host launches Kernel then Kernel2 until no thread raises `over`.
 *
 * As in the hand-written kernels, Rodinia's bool arrays (frontier mask, updating mask, visited)
 * and the `over` flag are 32-bit words here: the machine stores whole words only. Blocks index
 * their nodes with the constant MAX_THREADS_PER_BLOCK, as Rodinia does, not blockDim.x. */
#include "dualflow_cuda.h"

#define MAX_THREADS_PER_BLOCK 512

struct Node {
    int starting;
    int no_of_edges;
};

/* Every frontier node leaves the frontier and marks its unvisited neighbours with its cost + 1. */
extern "C" __global__ void Kernel(const Node *graph_nodes, const int *graph_edges, int *graph_mask,
                                  int *updating_graph_mask, const int *graph_visited, int *cost,
                                  int no_of_nodes)
{
    int tid = blockIdx.x * MAX_THREADS_PER_BLOCK + threadIdx.x;
    if (tid < no_of_nodes && graph_mask[tid]) {
        graph_mask[tid] = 0;
        for (int i = graph_nodes[tid].starting;
             i < graph_nodes[tid].starting + graph_nodes[tid].no_of_edges; i++) {
            int id = graph_edges[i];
            if (!graph_visited[id]) {
                cost[id] = cost[tid] + 1;
                updating_graph_mask[id] = 1;
            }
        }
    }
}

/* The nodes discovered in this level become the next frontier; any of them raises `over`. */
extern "C" __global__ void Kernel2(int *graph_mask, int *updating_graph_mask, int *graph_visited, int *over,
                                   int no_of_nodes)
{
    int tid = blockIdx.x * MAX_THREADS_PER_BLOCK + threadIdx.x;
    if (tid < no_of_nodes && updating_graph_mask[tid]) {
        graph_mask[tid] = 1;
        graph_visited[tid] = 1;
        *over = 1;
        updating_graph_mask[tid] = 0;
    }
}
