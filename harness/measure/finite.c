/* finite.c — the non-finite scan of a tensor (finite.h). */
#include <math.h>
#include <string.h>

#include "finite.h"

enum { BLOCK = 4096 };

/* 1 when the float with bits u is NaN or ±Inf (exponent all ones). */
static inline uint32_t bad_bits(uint32_t u) { return (u & 0x7f800000u) == 0x7f800000u; }

int64_t bench_find_nonfinite(const float *x, int64_t n)
{
    for (int64_t start = 0; start < n; start += BLOCK) {
        const int64_t len = n - start < BLOCK ? n - start : BLOCK;
        uint32_t any = 0;
        for (int64_t i = 0; i < len; i++) {
            uint32_t u;
            memcpy(&u, &x[start + i], sizeof u);
            any |= bad_bits(u);
        }
        if (!any) continue;
        for (int64_t i = 0; i < len; i++)
            if (!isfinite(x[start + i])) return start + i;
    }
    return -1;
}

attn_status bench_check_finite(const float *x, const int64_t dims[4], const char *name,
                               const char *where, int64_t row_offset, const char *hint, char *msg,
                               size_t msg_len)
{
    const int64_t n = dims[0] * dims[1] * dims[2] * dims[3];
    const int64_t at = bench_find_nonfinite(x, n);
    if (at < 0) return ATTN_OK;
    int64_t idx[4], rest = at;
    for (int d = 3; d >= 0; d--) idx[d] = rest % dims[d], rest /= dims[d];
    const float bad = x[at];
    return attn_fail(ATTN_EINVAL, msg, msg_len, "%s%s%s[%lld,%lld,%lld,%lld] is %s%s",
                     where && *where ? where : "", where && *where ? ": " : "", name,
                     (long long)idx[0], (long long)idx[1], (long long)(idx[2] + row_offset),
                     (long long)idx[3], isnan(bad) ? "NaN" : (bad > 0 ? "+Inf" : "-Inf"),
                     hint ? hint : "");
}
