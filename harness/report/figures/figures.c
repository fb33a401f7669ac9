/*
 * figures.c — the registry of `bench plot`'s figures (plot.h): the table that lists them, in the
 * order a subset's figures are drawn (and its files named in bench report), and which file names
 * are figures (an earlier plot's, removed by the next plot into the same folder).
 */
#include <stdbool.h>
#include <string.h>

#include "figures.h"

/* One line per figure (each defined in its family's file), in the order they are drawn: the
 * figures over n first (fig->over_n: plot.c skips them together when no series has 2 n). */
extern const bench_figure bench_figure_time_vs_n, bench_figure_speedup_vs_n,
    bench_figure_memory_vs_n, bench_figure_throughput_vs_n, bench_figure_train_vs_forward,
    bench_figure_accuracy_vs_n, bench_figure_accuracy_vs_param, bench_figure_error_vs_cost,
    bench_figure_time_vs_heads, bench_figure_time_vs_kv_heads, bench_figure_scaling;

static const bench_figure *const figures[] = {
    &bench_figure_time_vs_n,         /* fig_time.c */
    &bench_figure_speedup_vs_n,      /* fig_speedup.c */
    &bench_figure_memory_vs_n,       /* fig_memory.c */
    &bench_figure_throughput_vs_n,   /* fig_throughput.c */
    &bench_figure_train_vs_forward,  /* fig_time.c */
    &bench_figure_accuracy_vs_n,     /* fig_accuracy.c */
    &bench_figure_accuracy_vs_param, /* fig_accuracy.c */
    &bench_figure_error_vs_cost,     /* fig_accuracy.c */
    &bench_figure_time_vs_heads,     /* fig_heads.c */
    &bench_figure_time_vs_kv_heads,  /* fig_heads.c */
    &bench_figure_scaling,           /* fig_scaling.c */
};
enum { NFIGURES = sizeof figures / sizeof figures[0] };

int bench_figure_count(void) { return NFIGURES; }

const bench_figure *bench_figure_at(int i) { return i >= 0 && i < NFIGURES ? figures[i] : NULL; }

bool bench_figure_file(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot || !(strcmp(dot, ".png") == 0 || strcmp(dot, ".svg") == 0 || strcmp(dot, ".pdf") == 0))
        return false;
    for (int i = 0; i < NFIGURES; i++) {
        const size_t stem = strcspn(figures[i]->name, "<"); /* scaling_<kind>: scaling_ */
        if (strncmp(name, figures[i]->name, stem) == 0) return true;
    }
    return false;
}
