; Rodinia 3.1 lud (CUDA): blocked in-place LU decomposition without pivoting, BLOCK_SIZE = 16.
; The matrix m is row-major float32, matrix_dim x matrix_dim (a multiple of 16). For each block
; step `offset` = 0, 16, 32, ... < matrix_dim-16 the host launches
;   lud_diagonal  <<<1, 16>>>                     factor the 16x16 diagonal tile in place
;   lud_perimeter <<<nb, 32>>>                    the row panel (U) and the column panel (L) to its
;                                                 right and below, nb = (matrix_dim-offset)/16 - 1
;   lud_internal  <<<(nb, nb), (16, 16)>>>        trailing update m -= L_panel * U_panel
; and a last lud_diagonal for the bottom-right tile.
;
; Shared tiles are [16][16] float, row-major: element [r][c] is at byte tile + 64*r + 4*c.
;
; `x -= a*b` is one fused multiply-add in the CUDA build (nvcc contracts it, FFMA with a negated
; operand). This ISA has no operand negation, so the long `-=` chains keep the running value
; NEGATED: acc' = -x; acc' = ffma(a, b, acc') = a*b - x = -(x - a*b), exactly the negation of
; the FFMA CUDA computes (round-to-nearest-even is symmetric); one `fmul -1` before the chain
; and one after restore the sign. Values are bit-identical to fma(-a, b, x) except for the sign
; of an exactly-zero result. The numpy reference (lud.py) follows the same operations.

; ---------------------------------------------------------------------------------------------
; lud_diagonal(m, matrix_dim, offset): one block of 16 threads (half a warp). Thread tx owns
; column tx for the copies. Step i = 0..14: threads tx > i finish L[tx][i] (column i below the
; diagonal), barrier, then threads tx > i update U[i+1][tx] (row i+1 right of column i),
; barrier. Row 0 of the tile never changes and is not written back.
.kernel lud_diagonal
.form reg
.param m matrix_dim offset
.shared 1024                        ; shadow[16][16]
    s2r r0, %tid.x                  ; r0 = tx
    ldc r1, matrix_dim
    ldc r2, offset
    ldc r3, m
    ishl r4, r1, 2                  ; r4 = matrix row stride in bytes
    imad r5, r2, r1, r2             ; offset*matrix_dim + offset: the tile's corner
    iadd r5, r5, r0
    ishl r5, r5, 2
    iadd r5, r3, r5                 ; r5 = &m[offset][offset + tx]
    ishl r6, r0, 2                  ; r6 = &shadow[0][tx]
    iadd r7, r6, 1024               ; r7 = &shadow[16][tx]: end of column tx
    ; shadow[i][tx] = m[offset + i][offset + tx], i = 0..15
    mov r8, r5                      ; r8 = global pointer, one matrix row per iteration
    mov r9, r6                      ; r9 = shared pointer, one tile row per iteration
D_LOAD:
    ldg r10, [r8]
    sts [r9], r10
    iadd r8, r8, r4
    iadd r9, r9, 64
    isetp.lt r11, r9, r7
    brnz r11, D_LOAD                ; uniform: same trip count for every lane
    bar
    ishl r12, r0, 6                 ; r12 = &shadow[tx][0]
    mov r13, 0                      ; r13 = i, the step
D_STEP:
    ishl r14, r13, 2                ; r14 = 4*i = &shadow[0][i]
    isetp.gt r15, r0, r13           ; r15 = tx > i: this lane works in both halves of the step
    ; --- if (tx > i): L[tx][i] = (shadow[tx][i] - sum_{j<i} shadow[tx][j]*shadow[j][i]) / shadow[i][i]
    ssy D_COL_JOIN
    brz r15, D_COL_SYNC             ; lanes tx <= i idle
    iadd r16, r12, r14              ; r16 = &shadow[tx][i]
    lds r17, [r16]                  ; r17 = running value of shadow[tx][i]
    brz r13, D_COL_DIV              ; i = 0: no terms (uniform: i is the same in every lane)
    fmul r17, r17, -1               ; negated accumulator, see the file header
    mov r18, r12                    ; r18 = &shadow[tx][j], j = 0
    mov r19, r14                    ; r19 = &shadow[j][i], j = 0
D_COL_J:
    lds r20, [r18]                  ; shadow[tx][j]
    lds r21, [r19]                  ; shadow[j][i]
    ffma r17, r20, r21, r17         ; -(x - a*b)
    iadd r18, r18, 4
    iadd r19, r19, 64
    isetp.lt r22, r18, r16          ; j < i  <=>  &shadow[tx][j] < &shadow[tx][i]
    brnz r22, D_COL_J               ; uniform: trip count i
    fmul r17, r17, -1
D_COL_DIV:
    imul r23, r13, 68               ; r23 = &shadow[i][i] = 64*i + 4*i
    lds r24, [r23]
    fdiv r17, r17, r24
    sts [r16], r17
D_COL_SYNC:
    sync
D_COL_JOIN:
    bar                             ; column i of L is complete before row i+1 of U reads it
    ; --- if (tx > i): U[i+1][tx] = shadow[i+1][tx] - sum_{j<=i} shadow[i+1][j]*shadow[j][tx]
    ssy D_ROW_JOIN
    brz r15, D_ROW_SYNC
    iadd r25, r13, 1
    ishl r25, r25, 6                ; r25 = &shadow[i+1][0]
    iadd r26, r25, r6               ; r26 = &shadow[i+1][tx]
    lds r27, [r26]
    fmul r27, r27, -1               ; negated accumulator
    mov r18, r25                    ; r18 = &shadow[i+1][j], j = 0
    mov r19, r6                     ; r19 = &shadow[j][tx], j = 0
D_ROW_J:
    lds r20, [r18]                  ; shadow[i+1][j]
    lds r21, [r19]                  ; shadow[j][tx]
    ffma r27, r20, r21, r27
    iadd r18, r18, 4
    iadd r19, r19, 64
    isetp.lt r22, r19, r26          ; j <= i  <=>  &shadow[j][tx] < &shadow[i+1][tx]
    brnz r22, D_ROW_J               ; uniform: trip count i+1
    fmul r27, r27, -1
    sts [r26], r27
D_ROW_SYNC:
    sync
D_ROW_JOIN:
    bar
    iadd r13, r13, 1
    isetp.lt r28, r13, 15
    brnz r28, D_STEP
    ; m[offset + i][offset + tx] = shadow[i][tx], i = 1..15
    iadd r8, r5, r4                 ; &m[offset + 1][offset + tx]
    iadd r9, r6, 64                 ; &shadow[1][tx]
D_STORE:
    lds r10, [r9]
    stg [r8], r10
    iadd r8, r8, r4
    iadd r9, r9, 64
    isetp.lt r11, r9, r7
    brnz r11, D_STORE
    exit

; ---------------------------------------------------------------------------------------------
; lud_perimeter(m, matrix_dim, offset): block b of nb, 32 threads (one warp). The two half-warps
; take different paths in each of three phases, each a divergent if/else closed before the
; barrier that follows it:
;   threads 0..15 (idx = tx):      load dia rows 0..7 and the row tile peri_row (the 16x16 tile
;                                  at rows offset.., columns offset + 16(b+1)..); solve
;                                  peri_row = L_dia^-1 * peri_row down column idx; store rows 1..15.
;   threads 16..31 (idx = tx-16):  load dia rows 8..15 and the column tile peri_col (rows
;                                  offset + 16(b+1).., columns offset..); solve
;                                  peri_col = peri_col * U_dia^-1 along row idx; store all 16 rows.
.kernel lud_perimeter
.form reg
.param m matrix_dim offset
.shared 3072                        ; dia at 0, peri_row at 1024, peri_col at 2048
    s2r r0, %tid.x                  ; r0 = tx, 0..31
    s2r r1, %ctaid.x                ; r1 = b
    ldc r2, matrix_dim
    ldc r3, offset
    ldc r4, m
    ishl r5, r2, 2                  ; r5 = matrix row stride in bytes
    imad r6, r3, r2, r3
    ishl r6, r6, 2
    iadd r6, r4, r6                 ; r6 = &m[offset][offset]
    iadd r7, r1, 1
    ishl r7, r7, 4                  ; r7 = (b+1)*16: the panel tile's distance from the diagonal
    isetp.lt r8, r0, 16             ; r8 = tx < 16: the peri_row half-warp
    ; --- phase 1: copy the tiles in
    ssy P_LOADED
    brz r8, P_LOAD_COL              ; threads 16..31 go first (taken path)
    ishl r10, r0, 2                 ; r10 = 4*idx, idx = tx
    iadd r11, r6, r10               ; r11 = &m[offset][offset + idx]
    mov r14, r11                    ; dia[i][idx] = m[offset + i][offset + idx], i = 0..7
    mov r12, r10
    iadd r13, r10, 512              ; end: &dia[8][idx]
P_LA_DIA:
    ldg r15, [r14]
    sts [r12], r15
    iadd r14, r14, r5
    iadd r12, r12, 64
    isetp.lt r16, r12, r13
    brnz r16, P_LA_DIA
    ishl r17, r7, 2                 ; peri_row[i][idx] = m[offset + i][offset + (b+1)*16 + idx]
    iadd r14, r11, r17
    iadd r12, r10, 1024             ; &peri_row[0][idx]
    iadd r13, r10, 2048             ; end: &peri_row[16][idx]
P_LA_ROW:
    ldg r15, [r14]
    sts [r12], r15
    iadd r14, r14, r5
    iadd r12, r12, 64
    isetp.lt r16, r12, r13
    brnz r16, P_LA_ROW
    sync
P_LOAD_COL:
    iadd r10, r0, -16
    ishl r10, r10, 2                ; r10 = 4*idx, idx = tx - 16
    iadd r11, r6, r10               ; r11 = &m[offset][offset + idx]
    ishl r17, r5, 3                 ; dia[i][idx] = m[offset + i][offset + idx], i = 8..15
    iadd r14, r11, r17
    iadd r12, r10, 512              ; &dia[8][idx]
    iadd r13, r10, 1024             ; end: &dia[16][idx]
P_LB_DIA:
    ldg r15, [r14]
    sts [r12], r15
    iadd r14, r14, r5
    iadd r12, r12, 64
    isetp.lt r16, r12, r13
    brnz r16, P_LB_DIA
    imul r17, r7, r5                ; peri_col[i][idx] = m[offset + (b+1)*16 + i][offset + idx]
    iadd r14, r11, r17
    iadd r12, r10, 2048             ; &peri_col[0][idx]
    iadd r13, r10, 3072             ; end
P_LB_COL:
    ldg r15, [r14]
    sts [r12], r15
    iadd r14, r14, r5
    iadd r12, r12, 64
    isetp.lt r16, r12, r13
    brnz r16, P_LB_COL
    sync
P_LOADED:
    bar
    ; --- phase 2: the triangular solves, each thread on its own column / row
    ssy P_SOLVED
    brz r8, P_SOLVE_COL
    ; peri_row[i][idx] -= dia[i][j] * peri_row[j][idx], i = 1..15, j = 0..i-1 (forward
    ; substitution with the unit lower triangle of dia)
    ishl r10, r0, 2
    iadd r18, r10, 1024             ; r18 = &peri_row[0][idx]
    mov r19, 64                     ; r19 = 64*i = &dia[i][0], i = 1
P_RA_I:
    iadd r20, r18, r19              ; r20 = &peri_row[i][idx]
    lds r21, [r20]
    fmul r21, r21, -1               ; negated accumulator
    mov r22, r19                    ; r22 = &dia[i][j], j = 0
    mov r23, r18                    ; r23 = &peri_row[j][idx], j = 0
P_RA_J:
    lds r24, [r22]                  ; dia[i][j]
    lds r25, [r23]                  ; peri_row[j][idx]
    ffma r21, r24, r25, r21
    iadd r22, r22, 4
    iadd r23, r23, 64
    isetp.lt r26, r23, r20          ; j < i
    brnz r26, P_RA_J                ; uniform within the half-warp: trip count i >= 1
    fmul r21, r21, -1
    sts [r20], r21
    iadd r19, r19, 64
    isetp.lt r26, r19, 1024
    brnz r26, P_RA_I
    sync
P_SOLVE_COL:
    ; peri_col[idx][i] = (peri_col[idx][i] - sum_{j<i} peri_col[idx][j] * dia[j][i]) / dia[i][i],
    ; i = 0..15 (forward substitution with the upper triangle of dia, from the right)
    iadd r10, r0, -16
    ishl r10, r10, 6
    iadd r18, r10, 2048             ; r18 = &peri_col[idx][0]
    mov r19, 0                      ; r19 = 4*i = &dia[0][i], i = 0
P_RB_I:
    iadd r20, r18, r19              ; r20 = &peri_col[idx][i]
    lds r21, [r20]
    brz r19, P_RB_DIV               ; i = 0: no terms (uniform)
    fmul r21, r21, -1               ; negated accumulator
    mov r22, r18                    ; r22 = &peri_col[idx][j], j = 0
    mov r23, r19                    ; r23 = &dia[j][i], j = 0
P_RB_J:
    lds r24, [r22]                  ; peri_col[idx][j]
    lds r25, [r23]                  ; dia[j][i]
    ffma r21, r24, r25, r21
    iadd r22, r22, 4
    iadd r23, r23, 64
    isetp.lt r26, r22, r20          ; j < i
    brnz r26, P_RB_J
    fmul r21, r21, -1
P_RB_DIV:
    imul r27, r19, 17               ; r27 = &dia[i][i] = 68*i = 17*(4*i)
    lds r28, [r27]
    fdiv r21, r21, r28
    sts [r20], r21
    iadd r19, r19, 4
    isetp.lt r26, r19, 64
    brnz r26, P_RB_I
    sync
P_SOLVED:
    bar
    ; --- phase 3: copy the solved tiles out
    ssy P_STORED
    brz r8, P_STORE_COL
    ishl r10, r0, 2                 ; m[offset + i][offset + (b+1)*16 + idx] = peri_row[i][idx],
    iadd r11, r6, r10               ; i = 1..15 (row 0 is unchanged)
    ishl r17, r7, 2
    iadd r14, r11, r17
    iadd r14, r14, r5               ; row offset + 1
    iadd r12, r10, 1088             ; &peri_row[1][idx]
    iadd r13, r10, 2048             ; end
P_SA:
    lds r15, [r12]
    stg [r14], r15
    iadd r14, r14, r5
    iadd r12, r12, 64
    isetp.lt r16, r12, r13
    brnz r16, P_SA
    sync
P_STORE_COL:
    iadd r10, r0, -16               ; m[offset + (b+1)*16 + i][offset + idx] = peri_col[i][idx],
    ishl r10, r10, 2                ; i = 0..15
    iadd r11, r6, r10
    imul r17, r7, r5
    iadd r14, r11, r17
    iadd r12, r10, 2048             ; &peri_col[0][idx]
    iadd r13, r10, 3072             ; end
P_SB:
    lds r15, [r12]
    stg [r14], r15
    iadd r14, r14, r5
    iadd r12, r12, 64
    isetp.lt r16, r12, r13
    brnz r16, P_SB
    sync
P_STORED:
    exit

; ---------------------------------------------------------------------------------------------
; lud_internal(m, matrix_dim, offset): block (bx, by) of an nb x nb grid, 16x16 threads (8 warps,
; two tile rows each). Tile (by, bx) of the trailing matrix, at global row offset + 16(by+1) and
; column offset + 16(bx+1), loses the product of its L panel tile (peri_col) and U panel tile
; (peri_row): m[row][col] -= sum_{i<16} peri_col[ty][i] * peri_row[i][tx], the sum accumulated
; from 0 in i order (one ffma per term), then subtracted once. The 16-term loop is unrolled as
; nvcc does for a constant trip count; the tile offsets become load immediates.
.kernel lud_internal
.form reg
.param m matrix_dim offset
.shared 2048                        ; peri_row at 0, peri_col at 1024
    s2r r0, %tid.x                  ; r0 = tx
    s2r r1, %tid.y                  ; r1 = ty
    s2r r2, %ctaid.x
    s2r r3, %ctaid.y
    ldc r4, matrix_dim
    ldc r5, offset
    ldc r6, m
    iadd r7, r3, 1
    ishl r7, r7, 4
    iadd r7, r7, r5                 ; r7 = global_row_id = offset + (by+1)*16
    iadd r8, r2, 1
    ishl r8, r8, 4
    iadd r8, r8, r5                 ; r8 = global_col_id = offset + (bx+1)*16
    iadd r9, r5, r1                 ; peri_row[ty][tx] = m[offset + ty][global_col_id + tx]
    iadd r10, r8, r0                ; r10 = global_col_id + tx (reused by the update)
    imad r9, r9, r4, r10
    ishl r9, r9, 2
    iadd r9, r6, r9
    ldg r11, [r9]
    iadd r12, r7, r1                ; r12 = global_row_id + ty (reused by the update)
    iadd r13, r5, r0                ; peri_col[ty][tx] = m[global_row_id + ty][offset + tx]
    imad r13, r12, r4, r13
    ishl r13, r13, 2
    iadd r13, r6, r13
    ldg r14, [r13]
    ishl r15, r1, 6                 ; r15 = 64*ty: row ty of a tile
    ishl r16, r0, 2                 ; r16 = 4*tx: column tx of a tile
    iadd r17, r15, r16
    sts [r17], r11                  ; peri_row[ty][tx]
    sts [r17+1024], r14             ; peri_col[ty][tx]
    bar
    ; sum = sum_i peri_col[ty][i] * peri_row[i][tx]: peri_col[ty][i] at [r15 + 1024 + 4i],
    ; peri_row[i][tx] at [r16 + 64i]. Four terms per group; the groups alternate between two
    ; register sets so one group's loads can be issued while the previous group's ffmas wait.
    lds r18, [r15+1024]
    lds r19, [r16]
    lds r20, [r15+1028]
    lds r21, [r16+64]
    lds r22, [r15+1032]
    lds r23, [r16+128]
    lds r24, [r15+1036]
    lds r25, [r16+192]
    ffma r34, r18, r19, rz          ; r34 = sum (first term: 0 + a*b)
    ffma r34, r20, r21, r34
    ffma r34, r22, r23, r34
    ffma r34, r24, r25, r34
    lds r26, [r15+1040]
    lds r27, [r16+256]
    lds r28, [r15+1044]
    lds r29, [r16+320]
    lds r30, [r15+1048]
    lds r31, [r16+384]
    lds r32, [r15+1052]
    lds r33, [r16+448]
    ffma r34, r26, r27, r34
    ffma r34, r28, r29, r34
    ffma r34, r30, r31, r34
    ffma r34, r32, r33, r34
    lds r18, [r15+1056]
    lds r19, [r16+512]
    lds r20, [r15+1060]
    lds r21, [r16+576]
    lds r22, [r15+1064]
    lds r23, [r16+640]
    lds r24, [r15+1068]
    lds r25, [r16+704]
    ffma r34, r18, r19, r34
    ffma r34, r20, r21, r34
    ffma r34, r22, r23, r34
    ffma r34, r24, r25, r34
    lds r26, [r15+1072]
    lds r27, [r16+768]
    lds r28, [r15+1076]
    lds r29, [r16+832]
    lds r30, [r15+1080]
    lds r31, [r16+896]
    lds r32, [r15+1084]
    lds r33, [r16+960]
    ffma r34, r26, r27, r34
    ffma r34, r28, r29, r34
    ffma r34, r30, r31, r34
    ffma r34, r32, r33, r34
    ; m[global_row_id + ty][global_col_id + tx] -= sum
    imad r35, r12, r4, r10
    ishl r35, r35, 2
    iadd r35, r6, r35
    ldg r36, [r35]
    fsub r36, r36, r34
    stg [r35], r36
    exit
