; Rodinia 3.1 gaussian (cuda/gaussian/gaussian.cu): Gaussian elimination without pivoting.
; The host launches Fan1 then Fan2 for t = 0 .. Size-2; back substitution runs on the host.
; Matrices are row-major float32, Size x Size; element [r][c] lives at byte 4 * (r * Size + c).
; All index arithmetic is 32-bit (Size <= 2^15 keeps Size*Size*4 well inside 2^31).

; ---------------------------------------------------------------------------------------------
; Fan1: multipliers of column t.  One thread per row below the pivot (1-D blocks, 512 threads):
;     i = ctaid.x * ntid.x + tid.x;  if (i >= Size-1-t) return;
;     m[t+1+i][t] = a[t+1+i][t] / a[t][t]
; ---------------------------------------------------------------------------------------------
.kernel Fan1
.form reg
.param m a Size t
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0         ; r3 = i, this thread's row below the pivot (unsigned in CUDA)
    ldc r4, Size                ; r4 = Size
    ldc r5, t                   ; r5 = t, the pivot index
    isub r6, r4, r5
    iadd r6, r6, -1             ; r6 = Size-1-t, rows left below the pivot (>= 1)
    usetp.ge r7, r3, r6         ; CUDA compares unsigned (threadIdx/blockIdx arithmetic is unsigned)
    brnz r7, F1_DONE            ; lanes past the last row leave: an early exit, no ssy needed
    iadd r8, r3, r5
    iadd r8, r8, 1              ; r8 = row = i + t + 1
    imad r9, r8, r4, r5         ; r9 = row*Size + t, element index of [row][t] in a and in m
    ishl r9, r9, 2              ; r9 = its byte offset
    ldc r10, a                  ; r10 = a
    iadd r11, r10, r9           ; r11 = &a[row][t]
    ldg r12, [r11]              ; r12 = a[row][t]
    imad r13, r5, r4, r5        ; r13 = t*Size + t, the pivot's element index
    ishl r13, r13, 2
    iadd r13, r10, r13          ; r13 = &a[t][t]
    ldg r14, [r13]              ; r14 = a[t][t], the pivot (every lane loads the same word)
    fdiv r15, r12, r14          ; r15 = multiplier; CUDA's '/' is correctly rounded (-prec-div=true)
    ldc r16, m
    iadd r16, r16, r9           ; r16 = &m[row][t]
    stg [r16], r15
F1_DONE:
    exit

; ---------------------------------------------------------------------------------------------
; Fan2: eliminate column t from the rows below the pivot.  2-D blocks of 4 x 4 threads over the
; (Size-1-t) x (Size-t) submatrix; x indexes the row below the pivot, y the column from t on:
;     if (xidx >= Size-1-t) return;  if (yidx >= Size-t) return;
;     a[t+1+xidx][t+yidx] -= m[t+1+xidx][t] * a[t][t+yidx];
;     if (yidx == 0) b[t+1+xidx] -= m[t+1+xidx][t+yidx] * b[t];
; nvcc contracts each 'x -= p * q' into one FFMA with the product negated, x + (-p)*q; we do the
; same: the sign flip of p is an exact ixor of its sign bit, then ffma rounds once.
; j1 (= Size-t) is passed by the host but, as in Rodinia, not used by the kernel.
; ---------------------------------------------------------------------------------------------
.kernel Fan2
.form reg
.param m a b Size j1 t
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0         ; r3 = xidx, row offset below the pivot
    ldc r4, Size                ; r4 = Size
    ldc r5, t                   ; r5 = t
    isub r6, r4, r5             ; r6 = Size-t, columns in the active submatrix
    iadd r7, r6, -1             ; r7 = Size-1-t, rows in the active submatrix
    usetp.ge r8, r3, r7
    brnz r8, F2_DONE            ; first early return: row outside the submatrix
    s2r r9, %tid.y
    s2r r10, %ctaid.y
    s2r r11, %ntid.y
    imad r12, r10, r11, r9      ; r12 = yidx, column offset from the pivot column
    usetp.ge r13, r12, r6
    brnz r13, F2_DONE           ; second early return: column outside the submatrix
    iadd r14, r3, r5
    iadd r14, r14, 1            ; r14 = row = xidx + 1 + t
    imul r15, r14, r4           ; r15 = row*Size, start of the row
    iadd r16, r12, r5           ; r16 = col = yidx + t
    ldc r17, m                  ; r17 = m
    ldc r18, a                  ; r18 = a
    iadd r19, r15, r5           ; [row][t]
    ishl r19, r19, 2
    iadd r19, r17, r19          ; r19 = &m[row][t]
    ldg r20, [r19]              ; r20 = m[row][t], this row's multiplier
    imad r21, r5, r4, r16       ; [t][col]
    ishl r21, r21, 2
    iadd r21, r18, r21          ; r21 = &a[t][col]
    ldg r22, [r21]              ; r22 = a[t][col], pivot-row element (row t is never written here)
    iadd r23, r15, r16          ; [row][col]
    ishl r23, r23, 2            ; r23 = byte offset of [row][col], reused for m below
    iadd r24, r18, r23          ; r24 = &a[row][col]
    ldg r25, [r24]              ; r25 = a[row][col]
    ixor r26, r20, 0x80000000   ; r26 = -m[row][t] (exact sign flip)
    ffma r25, r26, r22, r25     ; a[row][col] - m[row][t]*a[t][col], one rounding
    stg [r24], r25
    brnz r12, F2_DONE           ; only the yidx == 0 column updates b: the rest leave
    ; yidx == 0 here, so col == t; CUDA re-reads m[row][col] (a and m may alias as far as
    ; the compiler knows, so the load above cannot be reused after the store to a)
    iadd r27, r17, r23          ; r27 = &m[row][col]
    ldg r28, [r27]              ; r28 = m[row][col]
    ldc r29, b                  ; r29 = b
    ishl r30, r5, 2
    iadd r30, r29, r30          ; r30 = &b[t]
    ldg r31, [r30]              ; r31 = b[t]
    ishl r32, r14, 2
    iadd r32, r29, r32          ; r32 = &b[row]
    ldg r33, [r32]              ; r33 = b[row]
    ixor r34, r28, 0x80000000   ; r34 = -m[row][col]
    ffma r33, r34, r31, r33     ; b[row] - m[row][col]*b[t], one rounding
    stg [r32], r33
F2_DONE:
    exit
