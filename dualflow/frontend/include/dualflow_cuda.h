/* dualflow_cuda.h: what a CUDA kernel needs to compile for the Dualflow GPU with clang alone
 * (no CUDA toolkit): the qualifiers, the built-in index variables, and the device functions the
 * machine runs. `dualflow compile` puts this file's folder on the include path.
 *
 * The machine is 32-bit: pointers, int and float are 32 bits; there is no 64-bit arithmetic,
 * no double, no atomics and no sub-word store to global or shared memory (the front end refuses
 * them with the PTX line). Math the SFU has (division, square root) is exact; the others below
 * are written in software from the FP32 operations and say their error. */
#ifndef DUALFLOW_CUDA_H
#define DUALFLOW_CUDA_H

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
/* no constant bank: __constant__ data lives in global memory */
#define __constant__ __attribute__((device))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))

/* threadIdx.x and friends read the special registers, as in CUDA */
#define DF_INDEX3(NAME, SREG)                                                              \
    struct __df_##NAME##_t {                                                               \
        __declspec(property(get = __get_x)) unsigned int x;                                \
        __declspec(property(get = __get_y)) unsigned int y;                                \
        __declspec(property(get = __get_z)) unsigned int z;                                \
        static __device__ __forceinline__ unsigned int __get_x(void) { return __nvvm_read_ptx_sreg_##SREG##_x(); } \
        static __device__ __forceinline__ unsigned int __get_y(void) { return __nvvm_read_ptx_sreg_##SREG##_y(); } \
        static __device__ __forceinline__ unsigned int __get_z(void) { return __nvvm_read_ptx_sreg_##SREG##_z(); } \
    };                                                                                     \
    extern const __device__ struct __df_##NAME##_t NAME;
DF_INDEX3(threadIdx, tid)
DF_INDEX3(blockIdx, ctaid)
DF_INDEX3(blockDim, ntid)
DF_INDEX3(gridDim, nctaid)
#undef DF_INDEX3
#define warpSize 32

/* __syncthreads() is clang's built-in (bar.sync 0) */
static __device__ __forceinline__ void __threadfence_block(void) { __nvvm_membar_cta(); }

/* warp votes over the active lanes (the machine's vote): the mask must name exactly those lanes */
static __device__ __forceinline__ int __any_sync(unsigned int mask, int p) { (void)mask; return __nvvm_vote_any(p); }
static __device__ __forceinline__ int __all_sync(unsigned int mask, int p) { (void)mask; return __nvvm_vote_all(p); }
static __device__ __forceinline__ unsigned int __ballot_sync(unsigned int mask, int p) { (void)mask; return __nvvm_vote_ballot(p); }

/* bit casts */
static __device__ __forceinline__ int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
static __device__ __forceinline__ unsigned int __float_as_uint(float x) { return __builtin_bit_cast(unsigned int, x); }
static __device__ __forceinline__ float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
static __device__ __forceinline__ float __uint_as_float(unsigned int x) { return __builtin_bit_cast(float, x); }

/* integer min/max (CUDA's overloads) */
static __device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }
static __device__ __forceinline__ int max(int a, int b) { return a > b ? a : b; }
static __device__ __forceinline__ unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
static __device__ __forceinline__ unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
static __device__ __forceinline__ int abs(int a) { return a < 0 ? -a : a; }

/* FP32 functions the machine has exactly: IEEE division and square root (SFU), min/max, abs */
static __device__ __forceinline__ float sqrtf(float x) { return __nvvm_sqrt_rn_ftz_f(x); }
static __device__ __forceinline__ float __fdiv_rn(float a, float b) { return __nvvm_div_rn_ftz_f(a, b); }
static __device__ __forceinline__ float fminf(float a, float b) { return __nvvm_fmin_ftz_f(a, b); }
static __device__ __forceinline__ float fmaxf(float a, float b) { return __nvvm_fmax_ftz_f(a, b); }
static __device__ __forceinline__ float fabsf(float x) { return __int_as_float(__float_as_int(x) & 0x7fffffff); }
static __device__ __forceinline__ float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static __device__ __forceinline__ float fmaf(float a, float b, float c) { return __nvvm_fma_rn_ftz_f(a, b, c); }

#endif
