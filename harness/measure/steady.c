/* steady.c — a point whose timings vary measured once more (point.h: bench_point_run_steady). */
#include <stdlib.h>
#include <string.h>

#include "point.h"
#include "signals.h"
#include "stats.h"

attn_status bench_point_run_steady(const bench_point_spec *spec, bench_point *pt,
                                   double **samples_s, int64_t *nsamples, float **out_keep,
                                   char *msg, size_t msg_len)
{
    const attn_status st =
        bench_point_run(spec, NULL, NULL, NULL, pt, samples_s, nsamples, out_keep, msg, msg_len);
    if (st != ATTN_OK || strcmp(pt->status, "ok") != 0 || out_keep || spec->keep_grads ||
        spec->ops->distributed || bench_stop_signal() || !bench_timings_vary(*samples_s, *nsamples))
        return st;
    bench_point again;
    double *samples = NULL;
    int64_t n = 0;
    char why[ATTN_MSG_LEN];
    const attn_status st2 =
        bench_point_run(spec, NULL, NULL, NULL, &again, &samples, &n, NULL, why, sizeof why);
    if (st2 == ATTN_OK && strcmp(again.status, "ok") == 0 && !bench_stop_signal() &&
        !(bench_relative_iqr(samples, n) >= bench_relative_iqr(*samples_s, *nsamples))) {
        free(*samples_s);
        *pt = again, *samples_s = samples, *nsamples = n;
    } else {
        free(samples);
    }
    return st;
}
