; Rodinia 3.1 nw (cuda/nw): Needleman-Wunsch global alignment scores, BLOCK_SIZE = 16.
;
; The (cols x cols) score matrix, cols = max_cols = sequence length + 1, is row-major int32; row
; 0 and column 0 hold the gap penalties -k*penalty. The 16x16 tiles of the interior are swept in
; anti-diagonals of tiles: needle_cuda_shared_1 does the upper-left triangle (launch i = 1 ..
; block_width has i tiles), needle_cuda_shared_2 the lower-right one (i = block_width-1 .. 1).
; One block of 16 threads per tile; thread tx owns column tx of the tile.
;
; Per tile: copy the 16x16 reference scores into ref[][], the tile's north row and west column
; (and the north-west corner) into the border of temp[][], then fill temp's 16x16 interior along
; its 31 anti-diagonals, one barrier per diagonal, and write temp's interior back to the matrix.
; The growing diagonals m = 0..15 keep lanes tx <= m busy, the shrinking ones (m = 14..0) lanes
; tx <= m too: lanes tx > m idle through the step, which is the divergence on the thread index.
;   temp[y][x] = max(temp[y-1][x-1] + ref[y-1][x-1], temp[y][x-1] - penalty, temp[y-1][x] - penalty)
;
; Shared memory (bytes):   0 .. 1155  temp[17][17]  (row pitch 68)
;                       1156 .. 2179  ref[16][16]   (row pitch 64)
; Addresses into temp/ref are kept as byte addresses; an anti-diagonal step moves them by a
; constant, so the wavefront loops only add (strength reduction of the C index expressions).
; Rodinia's maximum(a, b, c) (k = a <= b ? b : a; k <= c ? c : k) is max(a, b, c): two imax.

; ------------------------------------------------------------------------------------------
; Upper-left triangle: launch i, block bx handles tile (b_index_x, b_index_y) = (bx, i - 1 - bx).
; ------------------------------------------------------------------------------------------
.kernel needle_cuda_shared_1
.form reg
.param referrence matrix_cuda cols penalty i block_width
.shared 2180
    s2r r0, %tid.x              ; r0 = tx
    s2r r1, %ctaid.x            ; r1 = bx = b_index_x
    ldc r2, i
    isub r3, r2, r1
    isub r3, r3, 1              ; r3 = b_index_y = i - 1 - bx
    ldc r4, cols
    imad r5, r4, r3, r1         ; cols * b_index_y + b_index_x
    ishl r5, r5, 6              ; r5 = 4 * index_nw = 4 * 16 * (cols * b_index_y + b_index_x)
    ishl r8, r4, 2              ; r8 = cols * 4: one matrix row in bytes
    ishl r9, r0, 2              ; r9 = tx * 4
    ldc r6, matrix_cuda
    iadd r7, r6, r5             ; r7 = &matrix_cuda[index_nw], the tile's north-west corner

    ssy NW_DONE                 ; if (tx == 0) temp[0][0] = matrix_cuda[index_nw]
    brnz r0, NW_SYNC
    ldg r10, [r7]
    sts [rz], r10
NW_SYNC:
    sync
NW_DONE:
    ldc r11, referrence
    iadd r11, r11, r5
    iadd r11, r11, r8
    iadd r11, r11, r9
    iadd r11, r11, 4            ; r11 = &referrence[index], index = index_nw + cols + 1 + tx; +1 row per ty
    iadd r12, r9, 1156          ; r12 = &ref[ty][tx] in shared, 64 bytes per ty
    mov r13, 0                  ; r13 = ty
REF_LOOP:                       ; for ty in 0..15: ref[ty][tx] = referrence[index + cols * ty]
    ldg r14, [r11]
    sts [r12], r14
    iadd r11, r11, r8
    iadd r12, r12, 64
    iadd r13, r13, 1
    isetp.lt r15, r13, 16
    brnz r15, REF_LOOP          ; uniform trip count: no reconvergence needed
    bar

    iadd r16, r0, 1             ; r16 = tx + 1
    imad r17, r16, r8, r7       ; &matrix_cuda[index_w + cols * tx] = corner + (tx + 1) rows
    ldg r18, [r17]
    imul r19, r16, 68           ; &temp[tx + 1][0]
    sts [r19], r18
    bar

    iadd r20, r7, r9
    ldg r21, [r20+4]            ; matrix_cuda[index_n], index_n = index_nw + 1 + tx
    sts [r9+4], r21             ; temp[0][tx + 1]
    bar

    ldc r10, penalty            ; r10 = penalty
    imul r22, r0, -64
    iadd r22, r22, 72           ; r22 = &temp[m - tx + 1][tx + 1] at m = 0: 4 * (18 - 16 tx); +68 per m
    imul r23, r0, -60
    iadd r23, r23, 1156         ; r23 = &ref[m - tx][tx] at m = 0: 1156 + 4 * (-15 tx); +64 per m
    mov r24, 0                  ; r24 = m, anti-diagonals 0..15 of the tile (growing)
DIAG1:
    ssy DIAG1_BAR
    isetp.gt r15, r0, r24
    brnz r15, DIAG1_SYNC        ; tx > m: this lane's cell is not on diagonal m
    lds r25, [r22-72]           ; temp[y-1][x-1]
    lds r26, [r23]              ; ref[y-1][x-1]
    iadd r25, r25, r26          ; north-west + match score
    lds r27, [r22-4]            ; temp[y][x-1]
    isub r27, r27, r10          ; west - penalty
    lds r28, [r22-68]           ; temp[y-1][x]
    isub r28, r28, r10          ; north - penalty
    imax r25, r25, r27
    imax r25, r25, r28
    sts [r22], r25              ; temp[y][x]
DIAG1_SYNC:
    sync
DIAG1_BAR:
    bar                         ; diagonal m complete before m + 1 reads it
    iadd r22, r22, 68
    iadd r23, r23, 64
    iadd r24, r24, 1
    isetp.lt r15, r24, 16
    brnz r15, DIAG1

    imul r22, r0, -64
    iadd r22, r22, 1096         ; r22 = &temp[16 - tx][tx + 16 - m] at m = 14: 4 * (288 - 16 tx - 14); +4 per step
    imul r23, r0, -60
    iadd r23, r23, 2120         ; r23 = &ref[15 - tx][tx + 15 - m] at m = 14: 1156 + 4 * (241 - 15 tx); +4
    mov r24, 14                 ; r24 = m, anti-diagonals 16..30 of the tile (shrinking): m = 14..0
DIAG2:
    ssy DIAG2_BAR
    isetp.gt r15, r0, r24
    brnz r15, DIAG2_SYNC        ; tx > m: past the end of this diagonal
    lds r25, [r22-72]           ; temp[y-1][x-1]
    lds r26, [r23]              ; ref[y-1][x-1]
    iadd r25, r25, r26
    lds r27, [r22-4]            ; temp[y][x-1]
    isub r27, r27, r10
    lds r28, [r22-68]           ; temp[y-1][x]
    isub r28, r28, r10
    imax r25, r25, r27
    imax r25, r25, r28
    sts [r22], r25
DIAG2_SYNC:
    sync
DIAG2_BAR:
    bar
    iadd r22, r22, 4
    iadd r23, r23, 4
    isub r24, r24, 1
    isetp.ge r15, r24, 0
    brnz r15, DIAG2

    iadd r29, r7, r8
    iadd r29, r29, r9
    iadd r29, r29, 4            ; r29 = &matrix_cuda[index], one row (r8 bytes) per ty
    iadd r30, r9, 72            ; r30 = &temp[1][tx + 1], 68 bytes per ty
    mov r13, 0                  ; r13 = ty
OUT_LOOP:                       ; for ty in 0..15: matrix_cuda[index + ty * cols] = temp[ty + 1][tx + 1]
    lds r14, [r30]
    stg [r29], r14
    iadd r29, r29, r8
    iadd r30, r30, 68
    iadd r13, r13, 1
    isetp.lt r15, r13, 16
    brnz r15, OUT_LOOP
    exit

; ------------------------------------------------------------------------------------------
; Lower-right triangle: launch i, block bx handles tile (bx + block_width - i, block_width - 1 - bx).
; Same tile computation; as in Rodinia the ref tile is loaded before the corner and the west
; column, with no barrier between those two.
; ------------------------------------------------------------------------------------------
.kernel needle_cuda_shared_2
.form reg
.param referrence matrix_cuda cols penalty i block_width
.shared 2180
    s2r r0, %tid.x              ; r0 = tx
    s2r r1, %ctaid.x            ; r1 = bx
    ldc r2, i
    ldc r31, block_width
    isub r3, r31, r1
    isub r3, r3, 1              ; r3 = b_index_y = block_width - bx - 1
    iadd r1, r1, r31
    isub r1, r1, r2             ; r1 = b_index_x = bx + block_width - i
    ldc r4, cols
    imad r5, r4, r3, r1         ; cols * b_index_y + b_index_x
    ishl r5, r5, 6              ; r5 = 4 * index_nw
    ishl r8, r4, 2              ; r8 = cols * 4: one matrix row in bytes
    ishl r9, r0, 2              ; r9 = tx * 4
    ldc r6, matrix_cuda
    iadd r7, r6, r5             ; r7 = &matrix_cuda[index_nw]

    ldc r11, referrence
    iadd r11, r11, r5
    iadd r11, r11, r8
    iadd r11, r11, r9
    iadd r11, r11, 4            ; r11 = &referrence[index], one row per ty
    iadd r12, r9, 1156          ; r12 = &ref[ty][tx] in shared
    mov r13, 0                  ; r13 = ty
REF_LOOP:
    ldg r14, [r11]
    sts [r12], r14
    iadd r11, r11, r8
    iadd r12, r12, 64
    iadd r13, r13, 1
    isetp.lt r15, r13, 16
    brnz r15, REF_LOOP
    bar

    ssy NW_DONE                 ; if (tx == 0) temp[0][0] = matrix_cuda[index_nw]
    brnz r0, NW_SYNC
    ldg r10, [r7]
    sts [rz], r10
NW_SYNC:
    sync
NW_DONE:
    iadd r16, r0, 1             ; r16 = tx + 1
    imad r17, r16, r8, r7       ; &matrix_cuda[index_w + cols * tx]
    ldg r18, [r17]
    imul r19, r16, 68           ; &temp[tx + 1][0]
    sts [r19], r18
    bar

    iadd r20, r7, r9
    ldg r21, [r20+4]            ; matrix_cuda[index_n]
    sts [r9+4], r21             ; temp[0][tx + 1]
    bar

    ldc r10, penalty            ; r10 = penalty
    imul r22, r0, -64
    iadd r22, r22, 72           ; r22 = &temp[m - tx + 1][tx + 1] at m = 0; +68 per m
    imul r23, r0, -60
    iadd r23, r23, 1156         ; r23 = &ref[m - tx][tx] at m = 0; +64 per m
    mov r24, 0                  ; r24 = m = 0..15
DIAG1:
    ssy DIAG1_BAR
    isetp.gt r15, r0, r24
    brnz r15, DIAG1_SYNC        ; tx > m: not on diagonal m
    lds r25, [r22-72]           ; temp[y-1][x-1]
    lds r26, [r23]              ; ref[y-1][x-1]
    iadd r25, r25, r26
    lds r27, [r22-4]            ; temp[y][x-1]
    isub r27, r27, r10
    lds r28, [r22-68]           ; temp[y-1][x]
    isub r28, r28, r10
    imax r25, r25, r27
    imax r25, r25, r28
    sts [r22], r25
DIAG1_SYNC:
    sync
DIAG1_BAR:
    bar
    iadd r22, r22, 68
    iadd r23, r23, 64
    iadd r24, r24, 1
    isetp.lt r15, r24, 16
    brnz r15, DIAG1

    imul r22, r0, -64
    iadd r22, r22, 1096         ; r22 = &temp[16 - tx][tx + 16 - m] at m = 14; +4 per step
    imul r23, r0, -60
    iadd r23, r23, 2120         ; r23 = &ref[15 - tx][tx + 15 - m] at m = 14; +4 per step
    mov r24, 14                 ; r24 = m = 14..0
DIAG2:
    ssy DIAG2_BAR
    isetp.gt r15, r0, r24
    brnz r15, DIAG2_SYNC        ; tx > m: past the end of this diagonal
    lds r25, [r22-72]           ; temp[y-1][x-1]
    lds r26, [r23]              ; ref[y-1][x-1]
    iadd r25, r25, r26
    lds r27, [r22-4]            ; temp[y][x-1]
    isub r27, r27, r10
    lds r28, [r22-68]           ; temp[y-1][x]
    isub r28, r28, r10
    imax r25, r25, r27
    imax r25, r25, r28
    sts [r22], r25
DIAG2_SYNC:
    sync
DIAG2_BAR:
    bar
    iadd r22, r22, 4
    iadd r23, r23, 4
    isub r24, r24, 1
    isetp.ge r15, r24, 0
    brnz r15, DIAG2

    iadd r29, r7, r8
    iadd r29, r29, r9
    iadd r29, r29, 4            ; r29 = &matrix_cuda[index]
    iadd r30, r9, 72            ; r30 = &temp[1][tx + 1]
    mov r13, 0                  ; r13 = ty
OUT_LOOP:
    lds r14, [r30]
    stg [r29], r14
    iadd r29, r29, r8
    iadd r30, r30, 68
    iadd r13, r13, 1
    isetp.lt r15, r13, 16
    brnz r15, OUT_LOOP
    exit
