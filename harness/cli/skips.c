/* skips.c — the points a sweep leaves out, listed once (skips.h). */
#include "skips.h"

#include <stdlib.h>
#include <string.h>

attn_status bench_skips_add(bench_skips *s, const char *kind, const char *what, const char *reason,
                            char *msg, size_t msg_len)
{
    s->total++;
    for (int e = 0; e < s->n; e++) {
        bench_skip *x = &s->v[e];
        if (strcmp(x->kind, kind) != 0 || strcmp(x->reason, reason) != 0) continue;
        x->count++;
        bool listed = false; /* is what one of the ", "-separated items of x->what? */
        const size_t len = strlen(what);
        for (const char *at = x->what; !listed && (at = strstr(at, what)) != NULL; at++)
            listed = (at == x->what || at[-1] == ' ') && (at[len] == ',' || at[len] == '\0');
        const size_t used = strlen(x->what);
        if (!listed && used + len + 2 < sizeof x->what)
            snprintf(x->what + used, sizeof x->what - used, ", %s", what);
        return ATTN_OK;
    }
    if (s->n == s->cap) {
        const int cap = s->cap ? 2 * s->cap : 8;
        bench_skip *grown = realloc(s->v, (size_t)cap * sizeof *grown);
        if (!grown) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for skipped points");
        s->v = grown, s->cap = cap;
    }
    bench_skip *e = &s->v[s->n++];
    snprintf(e->kind, sizeof e->kind, "%s", kind);
    snprintf(e->what, sizeof e->what, "%s", what);
    snprintf(e->reason, sizeof e->reason, "%s", reason);
    e->count = 1;
    return ATTN_OK;
}

void bench_skips_print(FILE *f, const bench_skips *s, const char *verb, const char *why)
{
    if (s->total == 0) return;
    fprintf(f, "bench: %s %lld point%s %s:\n", verb, (long long)s->total, s->total == 1 ? "" : "s",
            why);
    for (int e = 0; e < s->n; e++)
        fprintf(f, "bench:   %s (%s; %lld point%s): %s\n", s->v[e].kind, s->v[e].what,
                (long long)s->v[e].count, s->v[e].count == 1 ? "" : "s", s->v[e].reason);
}

void bench_skips_free(bench_skips *s)
{
    free(s->v);
    *s = (bench_skips){0};
}
