; Rodinia 3.1 pathfinder (cuda/pathfinder/pathfinder.cu), REG form.
;
; dynproc_kernel: one block of BLOCK_SIZE = 256 threads advances a 256-column window of the
; dynamic-programming row by `iteration` rows (a "pyramid"): after step i only threads
; i+1 .. 254-i still hold correct values, so each block finally owns the
; small_block_cols = 256 - 2*iteration columns in its middle (HALO = 1).
;
;   result[x] = min(prev[x-1], prev[x], prev[x+1]) + wall[startStep + i][x]
;
; with the neighbours clamped to the block's part of the input (validXmin .. validXmax).
; Shared memory: prev[256] at byte 0, result[256] at byte 1024 (32-bit ints).
; gpuWall holds rows 1 .. rows-1 of the wall (the host copies data + cols), so wall row
; startStep + i + 1 is gpuWall row startStep + i, as in the CUDA source.
.kernel dynproc_kernel
.form reg
.param iteration gpuWall gpuSrc gpuResults cols rows startStep border
.shared 2048
    s2r r0, %tid.x              ; r0  = tx
    s2r r1, %ctaid.x            ; r1  = bx
    ldc r2, iteration           ; r2  = iteration (uniform, >= 1: the host never launches 0)
    ldc r3, border              ; r3  = border
    ldc r4, cols                ; r4  = cols
    ; small_block_cols = BLOCK_SIZE - iteration*HALO*2 (from this launch's iteration, as in CUDA)
    ishl r9, r2, 1
    mov r5, 256
    isub r5, r5, r9             ; r5  = small_block_cols
    ; blkX = small_block_cols*bx - border; blkXmax = blkX + BLOCK_SIZE - 1
    imul r6, r5, r1
    isub r6, r6, r3             ; r6  = blkX
    iadd r7, r6, 255            ; r7  = blkXmax
    iadd r8, r6, r0             ; r8  = xidx = blkX + tx
    ; validXmin = (blkX < 0) ? -blkX : 0
    isetp.lt r9, r6, 0
    isub r10, rz, r6
    selp r10, r10, rz, r9       ; r10 = validXmin
    ; validXmax = (blkXmax > cols-1) ? BLOCK_SIZE-1-(blkXmax-cols+1) : BLOCK_SIZE-1
    iadd r11, r4, -1            ; r11 = cols - 1
    isetp.gt r9, r7, r11
    isub r12, r7, r11           ; blkXmax - (cols-1) = blkXmax - cols + 1
    mov r13, 255
    isub r12, r13, r12
    selp r12, r12, r13, r9      ; r12 = validXmax
    ; W = max(tx-1, validXmin), E = min(tx+1, validXmax): the clamped neighbours
    iadd r13, r0, -1
    imax r13, r13, r10          ; r13 = W
    iadd r14, r0, 1
    imin r14, r14, r12          ; r14 = E
    ; isValid = IN_RANGE(tx, validXmin, validXmax)
    isetp.ge r15, r0, r10
    isetp.le r16, r0, r12
    iand r15, r15, r16          ; r15 = isValid (0/1)
    ; shared addresses, in bytes
    ishl r16, r0, 2             ; r16 = &prev[tx]; &result[tx] = r16 + 1024
    ishl r13, r13, 2            ; r13 = &prev[W]
    ishl r14, r14, 2            ; r14 = &prev[E]
    ; prev[tx] = gpuSrc[xidx] if IN_RANGE(xidx, 0, cols-1): one unsigned compare covers both
    ; bounds (a negative xidx is a huge unsigned number)
    ishl r17, r8, 2             ; r17 = 4*xidx (byte offset of column xidx)
    usetp.lt r9, r8, r4
    ssy LOADED
    brz r9, LOAD_SKIP           ; columns outside the input load nothing
    ldc r18, gpuSrc
    iadd r18, r18, r17
    ldg r19, [r18]
    sts [r16], r19
LOAD_SKIP:
    sync
LOADED:
    bar                         ; prev[] complete before any thread reads a neighbour
    ; wall pointer for step i: gpuWall + 4*(cols*(startStep+i) + xidx), advanced by 4*cols per
    ; step (only dereferenced by computing threads, whose xidx is inside the input)
    ldc r18, startStep
    ldc r19, gpuWall
    imul r20, r4, r18
    ishl r20, r20, 2
    iadd r19, r19, r20
    iadd r19, r19, r17          ; r19 = &gpuWall[cols*startStep + xidx]
    ishl r20, r4, 2             ; r20 = 4*cols: one wall row
    mov r21, 0                  ; r21 = i
    mov r22, 1                  ; r22 = i + 1 (lower bound of the pyramid)
    mov r23, 254                ; r23 = BLOCK_SIZE - i - 2 (upper bound)
    iadd r24, r2, -1            ; r24 = iteration - 1 (the last step)
STEP:
    ; computed = IN_RANGE(tx, i+1, BLOCK_SIZE-i-2) && isValid
    isetp.ge r25, r0, r22
    isetp.le r26, r0, r23
    iand r25, r25, r26
    iand r25, r25, r15          ; r25 = computed
    ssy STEPPED
    brz r25, STEP_SKIP
    lds r26, [r13]              ; left  = prev[W]
    lds r27, [r16]              ; up    = prev[tx]
    lds r28, [r14]              ; right = prev[E]
    imin r26, r26, r27          ; MIN(left, up)
    imin r26, r26, r28          ; MIN(shortest, right)
    ldg r27, [r19]              ; gpuWall[cols*(startStep+i) + xidx]
    iadd r26, r26, r27
    sts [r16+1024], r26         ; result[tx]
STEP_SKIP:
    sync
STEPPED:
    bar                         ; result[] of this step complete
    isetp.eq r26, r21, r24
    brnz r26, WRITE_BACK        ; uniform: i == iteration-1 leaves the loop
    ssy COPIED
    brz r25, COPY_SKIP
    lds r26, [r16+1024]         ; prev[tx] = result[tx] for the threads that computed
    sts [r16], r26
COPY_SKIP:
    sync
COPIED:
    bar                         ; prev[] updated before the next step reads neighbours
    iadd r21, r21, 1
    iadd r22, r22, 1
    iadd r23, r23, -1
    iadd r19, r19, r20          ; next wall row
    bra STEP
WRITE_BACK:
    ; only threads that computed in the last step write: the block's small block (and, in a
    ; shorter final launch, the wider middle its own small_block_cols describes)
    brz r25, DONE               ; divergent early exit
    lds r26, [r16+1024]
    ldc r27, gpuResults
    iadd r27, r27, r17
    stg [r27], r26              ; gpuResults[xidx] = result[tx]
DONE:
    exit
