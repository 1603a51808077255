/* safe_math.h: the safe_*_func_* operations Csmith-generated programs call, written for this
 * project (Csmith's own header is not installed).
 *
 * Csmith's convention: an operation whose result would be undefined in C (signed overflow,
 * division by zero, INT_MIN / -1, a shift by a negative amount or by the width or more, a left
 * shift of a negative value or one that overflows) returns its first operand instead. Each
 * function here is free of undefined behaviour for every argument, on the host (g++) and on the
 * GPU (clang CUDA), so both compute the same value. Names follow Csmith's:
 * safe_<op>_func_<type>_<s|u>[_<s|u>], the letters saying whether each operand is signed.
 *
 * The narrow types compute in int (their values cannot overflow it) and check the result's range;
 * the 32-bit ones check before they operate. Shifts count against 32, the width of the promoted
 * operand, as Csmith's do, and a left shift must keep the value within its type. */
#ifndef DUALFLOW_CSMITH_SAFE_MATH_H
#define DUALFLOW_CSMITH_SAFE_MATH_H

#define CSMITH_INT8_MIN (-128)
#define CSMITH_INT8_MAX 127
#define CSMITH_INT16_MIN (-32767 - 1)
#define CSMITH_INT16_MAX 32767
#define CSMITH_INT32_MIN (-2147483647 - 1)
#define CSMITH_INT32_MAX 2147483647
#define CSMITH_UINT8_MAX 255u
#define CSMITH_UINT16_MAX 65535u
#define CSMITH_UINT32_MAX 4294967295u

/* operations common to every signed type */
#define CSMITH_SIGNED_COMMON(T, MIN, MAX)                                                       \
    static inline T safe_unary_minus_func_##T##_s(T si)                                        \
    {                                                                                          \
        return si == (MIN) ? si : (T)(-si);                                                    \
    }                                                                                          \
    static inline T safe_mod_func_##T##_s_s(T si1, T si2)                                      \
    {                                                                                          \
        return (si2 == 0 || (si1 == (MIN) && si2 == -1)) ? si1 : (T)(si1 % si2);               \
    }                                                                                          \
    static inline T safe_div_func_##T##_s_s(T si1, T si2)                                     \
    {                                                                                          \
        return (si2 == 0 || (si1 == (MIN) && si2 == -1)) ? si1 : (T)(si1 / si2);               \
    }                                                                                          \
    static inline T safe_lshift_func_##T##_s_s(T left, int right)                              \
    {                                                                                          \
        return (left < 0 || right < 0 || right >= 32 || left > ((MAX) >> right))               \
            ? left : (T)(left << right);                                                       \
    }                                                                                          \
    static inline T safe_lshift_func_##T##_s_u(T left, unsigned int right)                     \
    {                                                                                          \
        return (left < 0 || right >= 32u || left > ((MAX) >> right)) ? left : (T)(left << right); \
    }                                                                                          \
    static inline T safe_rshift_func_##T##_s_s(T left, int right)                              \
    {                                                                                          \
        return (left < 0 || right < 0 || right >= 32) ? left : (T)(left >> right);             \
    }                                                                                          \
    static inline T safe_rshift_func_##T##_s_u(T left, unsigned int right)                     \
    {                                                                                          \
        return (left < 0 || right >= 32u) ? left : (T)(left >> right);                         \
    }

/* add, sub, mul of a signed type narrower than int: in int, then a range check */
#define CSMITH_SIGNED_NARROW(T, MIN, MAX)                                                       \
    CSMITH_SIGNED_COMMON(T, MIN, MAX)                                                           \
    static inline T safe_add_func_##T##_s_s(T si1, T si2)                                      \
    {                                                                                          \
        int r = (int)si1 + (int)si2;                                                           \
        return (r < (MIN) || r > (MAX)) ? si1 : (T)r;                                          \
    }                                                                                          \
    static inline T safe_sub_func_##T##_s_s(T si1, T si2)                                      \
    {                                                                                          \
        int r = (int)si1 - (int)si2;                                                           \
        return (r < (MIN) || r > (MAX)) ? si1 : (T)r;                                          \
    }                                                                                          \
    static inline T safe_mul_func_##T##_s_s(T si1, T si2)                                      \
    {                                                                                          \
        int r = (int)si1 * (int)si2;                                                           \
        return (r < (MIN) || r > (MAX)) ? si1 : (T)r;                                          \
    }

CSMITH_SIGNED_NARROW(int8_t, CSMITH_INT8_MIN, CSMITH_INT8_MAX)
CSMITH_SIGNED_NARROW(int16_t, CSMITH_INT16_MIN, CSMITH_INT16_MAX)
CSMITH_SIGNED_COMMON(int32_t, CSMITH_INT32_MIN, CSMITH_INT32_MAX)

/* int32_t add, sub, mul: the overflow is ruled out before the operation */
static inline int32_t safe_add_func_int32_t_s_s(int32_t si1, int32_t si2)
{
    return ((si2 > 0 && si1 > CSMITH_INT32_MAX - si2) || (si2 < 0 && si1 < CSMITH_INT32_MIN - si2))
        ? si1 : si1 + si2;
}

static inline int32_t safe_sub_func_int32_t_s_s(int32_t si1, int32_t si2)
{
    return ((si2 < 0 && si1 > CSMITH_INT32_MAX + si2) || (si2 > 0 && si1 < CSMITH_INT32_MIN + si2))
        ? si1 : si1 - si2;
}

static inline int32_t safe_mul_func_int32_t_s_s(int32_t si1, int32_t si2)
{
    return ((si1 > 0 && si2 > 0 && si1 > CSMITH_INT32_MAX / si2)
            || (si1 > 0 && si2 <= 0 && si2 < CSMITH_INT32_MIN / si1)
            || (si1 <= 0 && si2 > 0 && si1 < CSMITH_INT32_MIN / si2)
            || (si1 <= 0 && si2 <= 0 && si1 != 0 && si2 < CSMITH_INT32_MAX / si1))
        ? si1 : si1 * si2;
}

/* unsigned types: arithmetic is modular (in unsigned int, so a uint16_t product cannot overflow
 * int); only division by zero and the out-of-range shifts fall back to the first operand */
#define CSMITH_UNSIGNED(T, MAX)                                                                 \
    static inline T safe_unary_minus_func_##T##_u(T ui)                                        \
    {                                                                                          \
        return (T)(0u - (unsigned int)ui);                                                     \
    }                                                                                          \
    static inline T safe_add_func_##T##_u_u(T ui1, T ui2)                                      \
    {                                                                                          \
        return (T)((unsigned int)ui1 + (unsigned int)ui2);                                     \
    }                                                                                          \
    static inline T safe_sub_func_##T##_u_u(T ui1, T ui2)                                      \
    {                                                                                          \
        return (T)((unsigned int)ui1 - (unsigned int)ui2);                                     \
    }                                                                                          \
    static inline T safe_mul_func_##T##_u_u(T ui1, T ui2)                                      \
    {                                                                                          \
        return (T)((unsigned int)ui1 * (unsigned int)ui2);                                     \
    }                                                                                          \
    static inline T safe_mod_func_##T##_u_u(T ui1, T ui2)                                      \
    {                                                                                          \
        return ui2 == 0 ? ui1 : (T)(ui1 % ui2);                                                \
    }                                                                                          \
    static inline T safe_div_func_##T##_u_u(T ui1, T ui2)                                      \
    {                                                                                          \
        return ui2 == 0 ? ui1 : (T)(ui1 / ui2);                                                \
    }                                                                                          \
    static inline T safe_lshift_func_##T##_u_s(T left, int right)                              \
    {                                                                                          \
        return (right < 0 || right >= 32 || (unsigned int)left > ((MAX) >> right))              \
            ? left : (T)((unsigned int)left << right);                                         \
    }                                                                                          \
    static inline T safe_lshift_func_##T##_u_u(T left, unsigned int right)                     \
    {                                                                                          \
        return (right >= 32u || (unsigned int)left > ((MAX) >> right))                          \
            ? left : (T)((unsigned int)left << right);                                         \
    }                                                                                          \
    static inline T safe_rshift_func_##T##_u_s(T left, int right)                              \
    {                                                                                          \
        return (right < 0 || right >= 32) ? left : (T)((unsigned int)left >> right);           \
    }                                                                                          \
    static inline T safe_rshift_func_##T##_u_u(T left, unsigned int right)                     \
    {                                                                                          \
        return right >= 32u ? left : (T)((unsigned int)left >> right);                         \
    }

CSMITH_UNSIGNED(uint8_t, CSMITH_UINT8_MAX)
CSMITH_UNSIGNED(uint16_t, CSMITH_UINT16_MAX)
CSMITH_UNSIGNED(uint32_t, CSMITH_UINT32_MAX)

/* float (Csmith's --float): the operation unless its result could overflow FLT_MAX (tested on
 * scaled operands, so the test itself cannot overflow); division also not by zero or by a value
 * small enough to overflow. Both sides flush denormals and do not fuse a*b+c (the host sets
 * FTZ/DAZ and both compile with -ffp-contract=off), so each operation rounds the same way. */
static inline float safe_add_func_float_f_f(float sf1, float sf2)
{
    return fabsf((0.5f * sf1) + (0.5f * sf2)) > (0.5f * FLT_MAX) ? sf1 : sf1 + sf2;
}

static inline float safe_sub_func_float_f_f(float sf1, float sf2)
{
    return fabsf((0.5f * sf1) - (0.5f * sf2)) > (0.5f * FLT_MAX) ? sf1 : sf1 - sf2;
}

static inline float safe_mul_func_float_f_f(float sf1, float sf2)
{
    return fabsf((0x1.0p-100f * sf1) * (0x1.0p-28f * sf2)) > (0x1.0p-100f * (0x1.0p-28f * FLT_MAX))
        ? sf1 : sf1 * sf2;
}

static inline float safe_div_func_float_f_f(float sf1, float sf2)
{
    return (fabsf(sf2) < 1.0f
            && (sf2 == 0.0f || fabsf((0x1.0p-49f * sf1) / (0x1.0p100f * sf2)) > (0x1.0p-100f * (0x1.0p-49f * FLT_MAX))))
        ? sf1 : sf1 / sf2;
}

#endif
