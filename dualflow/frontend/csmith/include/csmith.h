/* csmith.h: our own runtime for Csmith-generated programs (Csmith's is not installed, and it
 * would not compile for the GPU: it builds a 256-entry CRC table, prints, and uses 64-bit values).
 *
 * The same text compiles two ways:
 *   - for the host, with g++ (dualflow/frontend/csmith/host.py): CSMITH_GLOBAL is empty;
 *   - for the GPU, with clang as CUDA (dualflow/frontend/csmith/transform.py): CSMITH_GLOBAL is
 *     __device__ and the whole program sits inside `#pragma clang force_cuda_host_device`, so
 *     every function here is a device function; the front end's private_globals option gives
 *     each thread its own copy of the globals, this file's crc32_context included.
 *
 * The checksum is Csmith's: CRC-32 (reflected, polynomial 0xEDB88320) over the bytes of every
 * global's value taken as 32 bits (Csmith's NO_LONGLONG variant), least significant byte first;
 * here computed bit by bit instead of through a table (a table would be a 1 KiB private global
 * per thread on the GPU). That it equals the table-driven byte-wise CRC-32 is checked by
 * tests/frontend/test_csmith.py against Python's zlib.crc32. */
#ifndef DUALFLOW_CSMITH_H
#define DUALFLOW_CSMITH_H

#ifndef CSMITH_GLOBAL
#define CSMITH_GLOBAL
#endif

#if defined(__CUDA__)
/* the GPU side includes no system header: the machine's types, as stdint.h would give them
 * (fabsf comes from dualflow_cuda.h) */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
#else
#include <math.h>
#include <stdint.h>
#endif
#include <float.h> /* clang's own on the GPU side: FLT_MAX for the safe float operations */

#include "safe_math.h"

/* the running CRC; a global so that each thread (GPU) or process (host) has its own */
CSMITH_GLOBAL uint32_t crc32_context = 0xFFFFFFFFu;

/* Csmith's crc32_8bytes under NO_LONGLONG feeds the value's four bytes, least significant first,
 * to the reflected CRC; with the CRC reflected, that is the same as XORing the whole word in and
 * taking 32 one-bit steps. The loop stays a loop (no byte extraction, 32 steps of a few
 * instructions, not 160 instructions per global unrolled). */
static inline void csmith_crc32_word(uint32_t val)
{
    uint32_t c = crc32_context ^ val;
#pragma nounroll
    for (int k = 0; k < 32; k++)
        c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    crc32_context = c;
}

/* a float global (Csmith's --float) is hashed by its bytes: here its 32 bits, the same CRC */
static inline void csmith_crc32_float(float f)
{
    uint32_t w;
    __builtin_memcpy(&w, &f, 4);
    csmith_crc32_word(w);
}

/* what the generated main calls; the variable's name and the print flag are not used */
#define crc32_gentab() ((void)0)
#define transparent_crc(val, vname, flag) csmith_crc32_word((uint32_t)(val))
#define transparent_crc_bytes(ptr, nbytes, vname, flag) csmith_crc32_float(*(ptr))
#define platform_main_begin() ((void)0)
/* the generated main ends with platform_main_end(crc32_context ^ 0xFFFFFFFFUL, flag): the
 * transformed main (csmith_run) returns the checksum there */
#define platform_main_end(crc, flag) return (uint32_t)(crc)
/* the generated main prints only when its print_hash_value flag is set, which it never is */
#define CSMITH_PRINTF(...) ((void)0)

#endif
