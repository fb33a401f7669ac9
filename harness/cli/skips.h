/* skips.h — the points a sweep leaves out, listed once with why: outside their kind's definition
 * (ATTN_ENODEF), or over the per-point time budget. One entry per distinct kind and reason, with
 * the distinct settings of its points (what: "causal=1", "decode", "n=8192", joined by ", ")
 * and their count. */
#ifndef BENCH_SKIPS_H
#define BENCH_SKIPS_H

#include <stdint.h>
#include <stdio.h>

#include "attn_core.h"

typedef struct bench_skip {
    char kind[64], what[64], reason[ATTN_MSG_LEN];
    int64_t count;
} bench_skip;

typedef struct bench_skips {
    bench_skip *v;
    int n, cap;
    int64_t total; /* points, over every entry */
} bench_skips;

/* Count one point under (kind, reason), adding the entry when new and what to its settings when
 * not there yet. ATTN_EFAIL (message) when out of memory. */
attn_status bench_skips_add(bench_skips *s, const char *kind, const char *what, const char *reason,
                            char *msg, size_t msg_len);
/* Nothing when empty; else "bench: <verb> N point(s) <why>:" then one line per entry,
 * "bench:   KIND (WHAT; N points): REASON". */
void bench_skips_print(FILE *f, const bench_skips *s, const char *verb, const char *why);
void bench_skips_free(bench_skips *s);

#endif
