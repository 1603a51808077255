; Rodinia 3.1 nn (cuda/nn/nn_cuda.cu): Euclidean distance from every hurricane record to a target.
; One thread per record; blocks of 256 threads on a grid that may be 2-D when the record count
; needs more blocks than the device's largest grid x extent. The host picks the k nearest.
;     globalId = ntid.x * (nctaid.x * ctaid.y + ctaid.x) + tid.x
;     if (globalId < numRecords)
;         distances[globalId] = sqrt((lat - loc[globalId].lat)^2 + (lng - loc[globalId].lng)^2)
; Records are the 8-byte struct {float lat; float lng;} (array of structs).
.kernel euclid
.form reg
.param d_locations d_distances numRecords lat lng
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ctaid.y
    s2r r3, %nctaid.x
    s2r r4, %ntid.x
    imad r5, r3, r2, r1         ; r5 = nctaid.x * ctaid.y + ctaid.x, linear block number
    imad r6, r4, r5, r0         ; r6 = globalId (a signed int in CUDA)
    ldc r7, numRecords          ; r7 = numRecords
    isetp.ge r8, r6, r7         ; signed, as 'globalId < numRecords' compares two ints
    brnz r8, DONE               ; threads past the last record (and spare 2-D blocks) leave
    ishl r9, r6, 3              ; r9 = globalId * sizeof(LatLong)
    ldc r10, d_locations
    iadd r10, r10, r9           ; r10 = &d_locations[globalId]
    ldg r11, [r10]              ; r11 = record.lat
    ldg r12, [r10+4]            ; r12 = record.lng
    ldc r13, lat                ; r13 = target lat
    ldc r14, lng                ; r14 = target lng
    fsub r15, r13, r11          ; r15 = lat - record.lat
    fsub r16, r14, r12          ; r16 = lng - record.lng
    fmul r16, r16, r16          ; r16 = (lng - record.lng)^2, rounded
    ffma r15, r15, r15, r16     ; r15 = (lat - record.lat)^2 + r16, one rounding (nvcc contracts this)
    fsqrt r15, r15              ; correctly rounded, as CUDA's sqrtf with -prec-sqrt=true
    ishl r17, r6, 2             ; r17 = globalId * sizeof(float)
    ldc r18, d_distances
    iadd r18, r18, r17          ; r18 = &d_distances[globalId]
    stg [r18], r15
DONE:
    exit
