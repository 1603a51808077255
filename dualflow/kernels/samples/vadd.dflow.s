; c[i] = a[i] + b[i], hand-written DFLOW form. Comments give each producer's ring position P.
.kernel vadd
.form dflow
.param a b c n
    s2r %tid.x                  ; P0 tid
    s2r %ctaid.x                ; P1 ctaid
    s2r %ntid.x                 ; P2 ntid
    imad |2|, |1|, |3|          ; P3 i
    ldc n                       ; P4
    isetp.ge |2|, |1|           ; P5 i >= n
    brnz |1|, DONE              ; (RP 6)
    ishl |3|, 2                 ; P6 i*4
    ldc a                       ; P7
    iadd |1|, |2|               ; P8 &a[i]
    ldg [|1|]                   ; P9 a[i]
    ldc b                       ; P10
    iadd |1|, |5|               ; P11 &b[i]
    ldg [|1|]                   ; P12 b[i]
    fadd |4|, |1|               ; P13 a[i] + b[i]
    ldc c                       ; P14
    iadd |1|, |9|               ; P15 &c[i]
    stg [|1|], |3|              ; (RP 16)
DONE:
    exit
