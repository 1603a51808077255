; Rodinia 3.1 hotspot (cuda/hotspot/hotspot.cu), REG form.
;
; calculate_temp: a 16x16 block (BLOCK_SIZE = 16) loads a 16x16 tile of temperature and power,
; then runs `iteration` explicit time steps of the 5-point thermal stencil on the tile in shared
; memory (a pyramid: after step i only tile cells i+1 .. 14-i on both axes are still exact, so
; each block owns the middle (16 - 2*iteration)^2 cells; EXPAND_RATE 2). Neighbours are clamped
; to the part of the tile inside the grid (validXmin .. validYmax), which makes the grid edges
; reflect. One step, in FP32 and in this operation order (the CUDA source writes the literal 2.0
; as a double; the ISA has FP32 only, so 2.0f as in Rodinia's OpenCL kernel; no FMA contraction):
;
;   t' = T + step_div_Cap * (P + ((S + N) - 2T) * Ry_1 + ((E + W) - 2T) * Rx_1 + (80 - T) * Rz_1)
;
; Shared memory, row-major [ty][tx] float tiles of 1024 bytes:
;   temp_on_cuda at 0, power_on_cuda at 1024, temp_t at 2048.
; Byte address of [y][x] within a tile = (16*y + x) * 4.
.kernel calculate_temp
.form reg
.param iteration power temp_src temp_dst grid_cols grid_rows border_cols border_rows Cap Rx Ry Rz step time_elapsed
.shared 3072
    s2r r0, %tid.x              ; r0  = tx
    s2r r1, %tid.y              ; r1  = ty
    s2r r2, %ctaid.x            ; r2  = bx
    s2r r3, %ctaid.y            ; r3  = by
    ; the block-uniform coefficients, computed per thread as the CUDA kernel does
    ldc r4, step
    ldc r5, Cap
    fdiv r4, r4, r5             ; r4  = step_div_Cap = step / Cap
    mov r8, 0f3f800000          ; 1.0f
    ldc r5, Rx
    fdiv r5, r8, r5             ; r5  = Rx_1 = 1 / Rx
    ldc r6, Ry
    fdiv r6, r8, r6             ; r6  = Ry_1 = 1 / Ry
    ldc r7, Rz
    fdiv r7, r8, r7             ; r7  = Rz_1 = 1 / Rz
    ; small_block_rows = small_block_cols = BLOCK_SIZE - iteration*2 (this launch's iteration)
    ldc r8, iteration           ; r8  = iteration (uniform, >= 1: the host never launches 0)
    ishl r9, r8, 1
    mov r10, 16
    isub r9, r10, r9            ; r9  = small_block_rows = small_block_cols
    ; blkY = small_block_rows*by - border_rows, blkX = small_block_cols*bx - border_cols
    ldc r10, border_rows
    imul r11, r9, r3
    isub r11, r11, r10          ; r11 = blkY
    ldc r10, border_cols
    imul r12, r9, r2
    isub r12, r12, r10          ; r12 = blkX
    iadd r13, r11, r1           ; r13 = yidx = blkY + ty
    iadd r14, r12, r0           ; r14 = xidx = blkX + tx
    ldc r15, grid_cols          ; r15 = grid_cols
    ldc r16, grid_rows          ; r16 = grid_rows
    imad r17, r15, r13, r14     ; r17 = index = grid_cols*yidx + xidx
    ishl r17, r17, 2            ; r17 = 4*index (byte offset into the grids)
    ishl r18, r1, 4
    iadd r18, r18, r0
    ishl r18, r18, 2            ; r18 = &tile[ty][tx] (+0 temp_on_cuda, +1024 power, +2048 temp_t)
    ; load if IN_RANGE(yidx, 0, grid_rows-1) && IN_RANGE(xidx, 0, grid_cols-1): one unsigned
    ; compare per axis covers both bounds (a negative index is a huge unsigned number)
    usetp.lt r19, r13, r16
    usetp.lt r20, r14, r15
    iand r19, r19, r20
    ssy LOADED
    brz r19, LOAD_SKIP          ; cells outside the grid load nothing
    ldc r20, temp_src
    iadd r20, r20, r17
    ldg r21, [r20]
    sts [r18], r21              ; temp_on_cuda[ty][tx] = temp_src[index]
    ldc r20, power
    iadd r20, r20, r17
    ldg r21, [r20]
    sts [r18+1024], r21         ; power_on_cuda[ty][tx] = power[index]
LOAD_SKIP:
    sync
LOADED:
    bar                         ; the tiles are complete before any neighbour is read
    ; validYmin = (blkY < 0) ? -blkY : 0
    isetp.lt r19, r11, 0
    isub r20, rz, r11
    selp r20, r20, rz, r19      ; r20 = validYmin
    ; validYmax = (blkYmax > grid_rows-1) ? BLOCK_SIZE-1-(blkYmax-grid_rows+1) : BLOCK_SIZE-1
    iadd r21, r11, 15           ; blkYmax = blkY + BLOCK_SIZE - 1
    iadd r22, r16, -1           ; grid_rows - 1
    isetp.gt r19, r21, r22
    isub r21, r21, r22          ; blkYmax - grid_rows + 1
    mov r23, 15
    isub r21, r23, r21
    selp r21, r21, r23, r19     ; r21 = validYmax
    ; validXmin = (blkX < 0) ? -blkX : 0
    isetp.lt r19, r12, 0
    isub r22, rz, r12
    selp r22, r22, rz, r19      ; r22 = validXmin
    ; validXmax = (blkXmax > grid_cols-1) ? BLOCK_SIZE-1-(blkXmax-grid_cols+1) : BLOCK_SIZE-1
    iadd r24, r12, 15           ; blkXmax
    iadd r25, r15, -1           ; grid_cols - 1
    isetp.gt r19, r24, r25
    isub r24, r24, r25
    isub r24, r23, r24
    selp r23, r24, r23, r19     ; r23 = validXmax
    ; clamped neighbours: N = max(ty-1, validYmin), S = min(ty+1, validYmax),
    ;                     W = max(tx-1, validXmin), E = min(tx+1, validXmax)
    iadd r24, r1, -1
    imax r24, r24, r20          ; N
    iadd r25, r1, 1
    imin r25, r25, r21          ; S
    iadd r26, r0, -1
    imax r26, r26, r22          ; W
    iadd r27, r0, 1
    imin r27, r27, r23          ; E
    ; neighbour addresses in temp_on_cuda
    ishl r24, r24, 4
    iadd r24, r24, r0
    ishl r24, r24, 2            ; r24 = &temp_on_cuda[N][tx]
    ishl r25, r25, 4
    iadd r25, r25, r0
    ishl r25, r25, 2            ; r25 = &temp_on_cuda[S][tx]
    ishl r28, r1, 4             ; 16*ty
    iadd r26, r28, r26
    ishl r26, r26, 2            ; r26 = &temp_on_cuda[ty][W]
    iadd r27, r28, r27
    ishl r27, r27, 2            ; r27 = &temp_on_cuda[ty][E]
    ; loop-invariant half of the compute test:
    ; IN_RANGE(tx, validXmin, validXmax) && IN_RANGE(ty, validYmin, validYmax)
    isetp.ge r19, r0, r22
    isetp.le r28, r0, r23
    iand r19, r19, r28
    isetp.ge r28, r1, r20
    iand r19, r19, r28
    isetp.le r28, r1, r21
    iand r19, r19, r28          ; r19 = inside the grid's part of the tile
    mov r20, 1                  ; r20 = i + 1 (pyramid lower bound); validY* no longer needed
    mov r21, 14                 ; r21 = BLOCK_SIZE - i - 2 (upper bound)
    iadd r22, r8, -1            ; r22 = iteration - 1 (the last step)
    mov r23, 0                  ; r23 = i
    mov r29, 0f42a00000         ; r29 = amb_temp = 80.0f
STEP:
    ; computed = IN_RANGE(tx, i+1, 14-i) && IN_RANGE(ty, i+1, 14-i) && inside
    isetp.ge r28, r0, r20
    isetp.le r30, r0, r21
    iand r28, r28, r30
    isetp.ge r30, r1, r20
    iand r28, r28, r30
    isetp.le r30, r1, r21
    iand r28, r28, r30
    iand r28, r28, r19          ; r28 = computed
    ssy STEPPED
    brz r28, STEP_SKIP
    lds r30, [r18]              ; T = temp_on_cuda[ty][tx]
    lds r31, [r18+1024]         ; P = power_on_cuda[ty][tx]
    lds r32, [r25]              ; temp_on_cuda[S][tx]
    lds r33, [r24]              ; temp_on_cuda[N][tx]
    lds r34, [r27]              ; temp_on_cuda[ty][E]
    lds r35, [r26]              ; temp_on_cuda[ty][W]
    fmul r36, r30, 2            ; 2.0f * T (exact)
    fadd r32, r32, r33          ; S + N
    fsub r32, r32, r36          ; (S + N) - 2T
    fmul r32, r32, r6           ; * Ry_1
    fadd r34, r34, r35          ; E + W
    fsub r34, r34, r36          ; (E + W) - 2T
    fmul r34, r34, r5           ; * Rx_1
    fsub r33, r29, r30          ; amb_temp - T
    fmul r33, r33, r7           ; * Rz_1
    fadd r31, r31, r32          ; P + vertical term
    fadd r31, r31, r34          ; + horizontal term
    fadd r31, r31, r33          ; + ambient term
    fmul r31, r4, r31           ; step_div_Cap * (...)
    fadd r30, r30, r31          ; T + ...
    sts [r18+2048], r30         ; temp_t[ty][tx]
STEP_SKIP:
    sync
STEPPED:
    bar                         ; temp_t of this step complete
    isetp.eq r30, r23, r22
    brnz r30, WRITE_BACK        ; uniform: i == iteration-1 leaves the loop
    ssy COPIED
    brz r28, COPY_SKIP
    lds r30, [r18+2048]         ; temp_on_cuda[ty][tx] = temp_t[ty][tx] for computing cells
    sts [r18], r30
COPY_SKIP:
    sync
COPIED:
    bar                         ; the tile is updated before the next step reads neighbours
    iadd r23, r23, 1
    iadd r20, r20, 1
    iadd r21, r21, -1
    bra STEP
WRITE_BACK:
    ; only cells computed in the last step write: the block's small block (in a shorter final
    ; launch, the wider middle given by that launch's iteration)
    brz r28, DONE               ; divergent early exit
    lds r30, [r18+2048]
    ldc r31, temp_dst
    iadd r31, r31, r17
    stg [r31], r30              ; temp_dst[index] = temp_t[ty][tx]
DONE:
    exit
