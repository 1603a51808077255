; out[block] = sum of in[block*ntid .. block*ntid + ntid - 1] (zero past n), FP32 tree reduction
; in shared memory with a barrier per step. ntid must be a power of two, at most 128.
.kernel reduce
.form reg
.param in out n
.shared 512
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0         ; i
    ldc r4, n
    isetp.lt r5, r3, r4
    ldc r6, in
    ishl r7, r3, 2
    iadd r6, r6, r7
    mov r8, 0
    ssy LOADED
    brz r5, LOADED_SYNC         ; lanes past n keep 0
    ldg r8, [r6]
LOADED_SYNC:
    sync
LOADED:
    ishl r9, r0, 2              ; &sdata[tid]
    sts [r9], r8
    bar
    ishr r10, r2, 1             ; s = ntid / 2
LOOP:
    isetp.lt r11, r0, r10
    ssy NEXT
    brz r11, STEP_SYNC
    ishl r12, r10, 2
    iadd r12, r9, r12
    lds r13, [r12]
    lds r14, [r9]
    fadd r14, r14, r13
    sts [r9], r14
STEP_SYNC:
    sync
NEXT:
    bar
    ishr r10, r10, 1
    brnz r10, LOOP
    brnz r0, DONE               ; thread 0 writes the block's sum
    lds r15, [rz]
    ldc r16, out
    ishl r17, r1, 2
    iadd r16, r16, r17
    stg [r16], r15
DONE:
    exit
