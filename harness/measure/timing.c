/* timing.c — the timed loop: warm-up, then samples until a minimum count and a minimum time;
 * a stop request (SIGINT, SIGTERM: signals.h) ends it between two runs. */
#include <stdlib.h>
#include <string.h>

#include "signals.h"
#include "stats.h"

double bench_now_s(void) { return attn_backend_cpu.now_s(); }

static bool decide(const bench_loop_hooks *h, bool go) { return h->decide ? h->decide(go) : go; }

attn_status bench_time_loop(const bench_timing_cfg *cfg, attn_status (*fn)(void *ctx), void *ctx,
                            double **samples_s, int64_t *n)
{
    const bench_loop_hooks none = {0};
    return bench_time_loop_hooked(cfg, fn, ctx, &none, samples_s, n);
}

/* The pattern BENCH_TEST_TIMES gives this process's loop-th timed loop (0-based; past the
 * list, its last item): 's' steady, 'o' one outlier, 'v' varying; 0 without the variable. */
static char test_pattern(int loop)
{
    const char *list = getenv("BENCH_TEST_TIMES");
    if (!list || !*list) return 0;
    for (int i = 0; i < loop && strchr(list, ','); i++) list = strchr(list, ',') + 1;
    return *list == 's' || *list == 'o' || *list == 'v' ? *list : 0;
}

/* Repetition rep's recorded time under test pattern p (bench_time_loop's contract). */
static double test_time(char p, int64_t rep, double measured)
{
    if (p == 's') return 1e-3;
    if (p == 'o') return rep == 0 ? 0.1 : 1e-3;
    if (p == 'v') return rep % 2 ? 2e-3 : 1e-3;
    return measured;
}

attn_status bench_time_loop_hooked(const bench_timing_cfg *cfg, attn_status (*fn)(void *ctx),
                                   void *ctx, const bench_loop_hooks *hooks, double **samples_s,
                                   int64_t *n)
{
    *samples_s = NULL;
    *n = 0;
    static int loops; /* timed loops begun in this process (the test hook's index) */
    const char pattern = test_pattern(loops++);
    const attn_backend *be = hooks->backend ? hooks->backend : &attn_backend_cpu;
    const double warm_start = be->now_s();
    for (int w = 0;
         decide(hooks, w < cfg->warmup || (w > 0 && be->now_s() - warm_start < cfg->warmup_time_s));
         w++) {
        if (bench_stop_signal()) return ATTN_EFAIL;
        attn_status st = fn(ctx);
        be->sync();
        if (st != ATTN_OK) return st;
    }
    int64_t cap = 64, count = 0;
    double *s = malloc((size_t)cap * sizeof *s), total = 0;
    if (!s) return ATTN_EFAIL;
    while (decide(hooks,
                  count < cfg->max_reps && (count < cfg->min_reps || total < cfg->min_time_s))) {
        if (bench_stop_signal()) {
            free(s);
            return ATTN_EFAIL;
        }
        if (count == cap) {
            double *grown = realloc(s, (size_t)(cap *= 2) * sizeof *s);
            if (!grown) {
                free(s);
                return ATTN_EFAIL;
            }
            s = grown;
        }
        const double t0 = be->now_s();
        attn_status st = fn(ctx);
        be->sync();
        const double dt = test_time(pattern, count, be->now_s() - t0);
        if (st != ATTN_OK) {
            free(s);
            return st;
        }
        if (hooks->after) hooks->after(ctx);
        s[count++] = dt;
        total += dt;
    }
    *samples_s = s;
    *n = count;
    return ATTN_OK;
}
