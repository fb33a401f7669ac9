/* status.c — error reporting for library code: a status and a message, never printing. */
#include <stdarg.h>
#include <stdio.h>

#include "attention.h"

attn_status attn_fail(attn_status st, char *msg, size_t msg_len, const char *fmt, ...)
{
    if (msg && msg_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, msg_len, fmt, ap);
        va_end(ap);
    }
    return st;
}
