; Rodinia 3.1 bfs (cuda/bfs): level-synchronous breadth-first search after Harish & Narayanan,
; HiPC'07. One thread per node; the host launches Kernel then Kernel2 until no thread raises
; `over`. Blocks are MAX_THREADS_PER_BLOCK = 512 threads (fewer if the graph is smaller).
;
; Deviation from Rodinia: the frontier mask, the updating mask, the visited array and the `over`
; flag are C `bool` (one byte) there; this ISA has only 32-bit word accesses, so every one of
; them is a 32-bit word here (0 = false, 1 = true) and is indexed with tid * 4.
;
; Data layout (global memory):
;   graph_nodes  Node[n], Node = { int starting; int no_of_edges; }: 8 bytes, fields at +0, +4
;   graph_edges  int[edge_list_size]: neighbour ids, node v's at [starting, starting + no_of_edges)
;   graph_mask, updating_graph_mask, graph_visited  word[n];  cost  int[n] (-1 = not reached)

; ------------------------------------------------------------------------------------------
; Kernel: every node in the frontier (graph_mask) leaves it and marks its unvisited neighbours
; with cost[tid] + 1 and in updating_graph_mask. Lane-dependent work everywhere: the frontier
; test, the edge count (loop trip count), the visited test, and the gathers through graph_edges.
; ------------------------------------------------------------------------------------------
.kernel Kernel
.form reg
.param graph_nodes graph_edges graph_mask updating_graph_mask graph_visited cost no_of_nodes
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    ishl r1, r1, 9              ; blockIdx.x * MAX_THREADS_PER_BLOCK: Rodinia uses the constant 512,
    iadd r2, r1, r0             ; not blockDim.x.  r2 = tid, this thread's node
    ldc r3, no_of_nodes
    isetp.ge r4, r2, r3
    brnz r4, DONE               ; tid >= no_of_nodes: nothing to do (early exit, no reconvergence)
    ishl r5, r2, 2              ; r5 = tid * 4: byte offset of node tid in the word arrays
    ldc r6, graph_mask
    iadd r6, r6, r5             ; r6 = &graph_mask[tid]
    ldg r7, [r6]
    brz r7, DONE                ; not in the frontier: early exit (&& of the if, short-circuit)
    stg [r6], rz                ; graph_mask[tid] = false
    ishl r8, r2, 3
    ldc r9, graph_nodes
    iadd r8, r9, r8             ; r8 = &graph_nodes[tid]
    ldg r10, [r8]               ; r10 = i = starting (the loop counter)
    ldg r11, [r8+4]             ; no_of_edges
    iadd r11, r11, r10          ; r11 = loop bound starting + no_of_edges
    isetp.ge r4, r10, r11
    brnz r4, DONE               ; zero edges: the loop body never runs (loop guard of the rotated loop)
    ldc r12, graph_edges
    ishl r13, r10, 2
    iadd r13, r12, r13          ; r13 = &graph_edges[i], advanced by 4 bytes per edge
    ldc r14, graph_visited      ; r14, r15, r16: bases of the neighbour-indexed arrays
    ldc r15, cost
    ldc r16, updating_graph_mask
    iadd r17, r15, r5           ; r17 = &cost[tid]
    mov r18, 1                  ; r18 = true, stored into updating_graph_mask
    ssy JOIN                    ; trip count (no_of_edges) differs between lanes
LOOP:
    ldg r19, [r13]              ; id = graph_edges[i]: data-dependent (indirect) index
    ishl r19, r19, 2            ; r19 = id * 4
    iadd r20, r14, r19
    ldg r21, [r20]              ; graph_visited[id] (gather)
    ssy NEXT                    ; lanes disagree on whether the neighbour is visited
    brnz r21, SKIP              ; visited: nothing to update
    ldg r22, [r17]              ; cost[tid], reloaded per edge: without __restrict__ the store to
    iadd r22, r22, 1            ; cost[id] below may alias it, so the compiler cannot hoist it
    iadd r23, r15, r19
    stg [r23], r22              ; cost[id] = cost[tid] + 1 (scatter; racing lanes store the same value)
    iadd r24, r16, r19
    stg [r24], r18              ; updating_graph_mask[id] = true
SKIP:
    sync
NEXT:
    iadd r10, r10, 1            ; i++
    iadd r13, r13, 4
    ldg r25, [r8]               ; the bound nodes[tid].no_of_edges + nodes[tid].starting is
    ldg r11, [r8+4]             ; re-read every iteration, as compiled C must: the int stores
    iadd r11, r11, r25          ; to cost[] may alias the Node fields
    isetp.lt r4, r10, r11
    brnz r4, LOOP               ; lanes with edges left go round again
    sync                        ; each group of finished lanes parks here until all are done
JOIN:
DONE:
    exit

; ------------------------------------------------------------------------------------------
; Kernel2: nodes marked in updating_graph_mask become the next frontier and visited; any such
; node raises `over` so that the host runs another level.
; ------------------------------------------------------------------------------------------
.kernel Kernel2
.form reg
.param graph_mask updating_graph_mask graph_visited over no_of_nodes
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    ishl r1, r1, 9              ; blockIdx.x * MAX_THREADS_PER_BLOCK (512)
    iadd r2, r1, r0             ; r2 = tid
    ldc r3, no_of_nodes
    isetp.ge r4, r2, r3
    brnz r4, DONE               ; past the last node: early exit
    ishl r5, r2, 2              ; r5 = tid * 4
    ldc r6, updating_graph_mask
    iadd r6, r6, r5             ; r6 = &updating_graph_mask[tid]
    ldg r7, [r6]
    brz r7, DONE                ; not discovered in this level: early exit
    mov r8, 1                   ; r8 = true
    ldc r9, graph_mask
    iadd r9, r9, r5
    stg [r9], r8                ; graph_mask[tid] = true
    ldc r10, graph_visited
    iadd r10, r10, r5
    stg [r10], r8               ; graph_visited[tid] = true
    ldc r11, over
    stg [r11], r8               ; *over = true (every such lane stores the same word)
    stg [r6], rz                ; updating_graph_mask[tid] = false
DONE:
    exit
