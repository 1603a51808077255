; c[i] = a[i] + b[i] for i < n (FP32). One thread per element; threads past n exit early.
.kernel vadd
.form reg
.param a b c n
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0         ; i = ctaid.x * ntid.x + tid.x
    ldc r4, n
    isetp.ge r5, r3, r4
    brnz r5, DONE               ; divergent early exit: no reconvergence needed
    ishl r6, r3, 2
    ldc r7, a
    iadd r7, r7, r6
    ldg r8, [r7]
    ldc r9, b
    iadd r9, r9, r6
    ldg r10, [r9]
    fadd r11, r8, r10
    ldc r12, c
    iadd r12, r12, r6
    stg [r12], r11
DONE:
    exit
