; out[i] = float(sum_{k=0..i&7} k*k) * x[i]: a loop whose trip count differs between the lanes
; of a warp, reconverging at JOIN.
.kernel divloop
.form reg
.param x out n
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0         ; i
    ldc r4, n
    isetp.ge r5, r3, r4
    brnz r5, DONE
    iand r6, r3, 7              ; last k
    mov r7, 0                   ; acc
    mov r8, 0                   ; k
    ssy JOIN
LOOP:
    imad r7, r8, r8, r7
    iadd r8, r8, 1
    isetp.le r9, r8, r6
    brnz r9, LOOP               ; lanes leave the loop at different iterations
    sync
JOIN:
    ishl r10, r3, 2
    ldc r11, x
    iadd r11, r11, r10
    ldg r12, [r11]
    i2f r13, r7
    fmul r13, r13, r12
    ldc r14, out
    iadd r14, r14, r10
    stg [r14], r13
DONE:
    exit
