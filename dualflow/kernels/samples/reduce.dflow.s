; The reduction of reduce.reg.s in hand-written DFLOW form. P = ring position; R = RP at LOOP.
; Every if/else advances RP by the same amount on both arms (a warp may run either arm alone),
; and loop-carried values are relayed so that at LOOP tid, ctaid, &sdata[tid] and s always sit
; at distances 4, 3, 2, 1.
.kernel reduce
.form dflow
.param in out n
.shared 512
    s2r %tid.x                  ; P0 tid
    s2r %ctaid.x                ; P1 ctaid
    s2r %ntid.x                 ; P2 ntid
    imad |2|, |1|, |3|          ; P3 i
    ldc n                       ; P4
    isetp.lt |2|, |1|           ; P5 i < n
    ldc in                      ; P6
    ishl |4|, 2                 ; P7 i*4
    iadd |2|, |1|               ; P8 &in[i]
    ssy LOADED
    brz |4|, ZERO               ; (RP 9)
    ldg [|1|]                   ; P9 in[i]
    sync
ZERO:
    mov 0                       ; P9 0 on the other arm: same position
    sync
LOADED:                         ; RP 10
    ishl |10|, 2                ; P10 &sdata[tid]
    sts [|1|], |2|
    bar
    ishr |9|, 1                 ; P11 s = ntid / 2
    mov |12|                    ; P12 tid
    mov |12|                    ; P13 ctaid
    mov |4|                     ; P14 &sdata[tid]
    mov |4|                     ; P15 s
LOOP:                           ; R
    isetp.lt |4|, |1|           ; R+0 tid < s
    ssy NEXT
    brz |1|, SKIP
    ishl |2|, 2                 ; R+1 s*4
    iadd |4|, |1|               ; R+2 &sdata[tid+s]
    lds [|1|]                   ; R+3
    lds [|6|]                   ; R+4
    fadd |1|, |2|               ; R+5
    sts [|8|], |1|
    sync
SKIP:
    rpinc 5                     ; pad: both arms advance RP by 6, whichever the warp runs
    sync
NEXT:                           ; RP R+6 on either arm
    bar
    ishr |7|, 1                 ; R+6 s/2
    mov |11|                    ; R+7 tid
    mov |11|                    ; R+8 ctaid
    mov |11|                    ; R+9 &sdata[tid]
    mov |4|                     ; R+10 s/2
    brnz |1|, LOOP
    brnz |4|, DONE              ; thread 0 writes the block's sum
    lds [rz]                    ; X
    ldc out                     ; X+1
    ishl |5|, 2                 ; X+2 ctaid*4
    iadd |2|, |1|               ; X+3
    stg [|1|], |4|
DONE:
    exit
