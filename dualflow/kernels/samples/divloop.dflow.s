; divloop.reg.s in hand-written DFLOW form. After the loop's reconvergence RP is that of the
; lanes that left last, so lanes that left earlier could not read loop values there: each lane
; stores its result on its own exit path, before the sync. At LOOP (RP = R) the loop values
; sit at R-5 &out[i], R-4 x[i], R-3 last k, R-2 acc, R-1 k.
.kernel divloop
.form dflow
.param x out n
    s2r %tid.x                  ; P0
    s2r %ctaid.x                ; P1
    s2r %ntid.x                 ; P2
    imad |2|, |1|, |3|          ; P3 i
    ldc n                       ; P4
    isetp.ge |2|, |1|           ; P5
    brnz |1|, DONE
    ishl |3|, 2                 ; P6 i*4
    ldc x                       ; P7
    iadd |1|, |2|               ; P8 &x[i]
    ldg [|1|]                   ; P9 x[i]
    ldc out                     ; P10
    iadd |1|, |5|               ; P11 &out[i]
    iand |9|, 7                 ; P12 last k
    mov |2|                     ; P13 &out[i]
    mov |5|                     ; P14 x[i]
    mov |3|                     ; P15 last k
    mov 0                       ; P16 acc
    mov 0                       ; P17 k
    ssy JOIN
LOOP:                           ; R
    isetp.lt |1|, |3|           ; R+0 k < last (so k+1 <= last)
    mov |6|                     ; R+1 &out[i]
    mov |6|                     ; R+2 x[i]
    mov |6|                     ; R+3 last k
    imad |5|, |5|, |6|          ; R+4 acc + k*k
    iadd |6|, 1                 ; R+5 k+1
    brnz |6|, LOOP              ; next R = R+6
    i2f |2|                     ; E   float(acc)
    fmul |1|, |5|               ; E+1 * x[i]
    stg [|7|], |1|
    sync
JOIN:
DONE:
    exit
