/*
 * cmd_sweep.c — `bench sweep`: the options, the grid (sweep_grid.h) validated before anything is
 * written, the results file opened, the run and its hosts recorded, every point measured and
 * appended (flushed) to it (sweep_measure.h), then the closing summary table and, when asked
 * for (or after the no-options sweep), the figures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_mpi.h"
#include "commands.h"
#include "signals.h"
#include "sweep_grid.h"
#include "sweep_measure.h"
#include "sweep_mpi.h"
#include "table.h"
#include "targets.h"
#include "yardstick.h"

/* With the default --n, a point predicted to take longer (seconds) is skipped: see
 * over_budget. */
#define DEFAULT_MAX_POINT_TIME "4"

/* results/<UTC timestamp>.h5 under $ATTNBENCH_HOME (set by ./bench) or the current directory. */
static attn_status default_out(char *path, size_t len, char *msg, size_t msg_len)
{
    const char *home = getenv("ATTNBENCH_HOME");
    char dir[3072];
    snprintf(dir, sizeof dir, "%s/results", home && *home ? home : ".");
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot create %s: %s (use --out FILE.h5)", dir,
                         strerror(errno));
    }
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(path, len, "%s/%s.h5", dir, stamp);
    return ATTN_OK;
}

static const char sweep_description[] =
    "Measures every point of a grid (kinds x parameter values x mode x dataset x causal x pass x\n"
    "batch x heads x kv_heads x head_dim x threads x isa x n) and appends one row per point to\n"
    "an HDF5 results file, flushed as each point ends. With no options: every kind but those\n"
    "`bench list` shows as measured on request, n = " DEFAULT_N ", causal (--causal auto:\n"
    "non-causal for a kind defined without the mask), 8 heads of dim 64, datasets " DEFAULT_DATASETS
    ", points predicted over " DEFAULT_MAX_POINT_TIME " s skipped\n"
    "(--max-point-time; under 3 minutes on 2 cores), then its figures are drawn into plots/.\n"
    "Points outside their kind's definition (a causal mask for a kind defined without one)\n"
    "are skipped and listed once before measuring.\n"
    "A file dataset (--dataset file=qkv.h5) fixes the shape: --n, --heads, --kv-heads,\n"
    "--head-dim and --batch do not apply to its points (decode: its --q-len newest queries).\n"
    "Example: bench sweep --kinds full --n 1K:16K:x2 --causal 1 --out full.h5";

/* The results file (--out, or results/<time>.h5) into path, checked (never a file dataset's
 * input: targets.h) and opened. */
static attn_status open_results(const sweep_opts *o, const sweep_grid *g, char *path, size_t len,
                                bench_store **store, char *msg, size_t msg_len)
{
    attn_status st = ATTN_OK;
    if (o->out) snprintf(path, len, "%s", o->out);
    else st = default_out(path, len, msg, msg_len);
    for (int d = 0; d < g->nvariants && !st; d++) {
        const bench_input input = {"the input", g->datasets[d].params.path};
        st = bench_check_target(path, "--out", BENCH_TARGET_RESULTS, &input, 1, msg, msg_len);
    }
    if (!st) st = bench_check_target(path, "--out", BENCH_TARGET_RESULTS, NULL, 0, msg, msg_len);
    if (!st) st = bench_store_open(path, store, msg, msg_len);
    return st;
}

/* The figures' directory (--plots DIR; plots/ for the no-options sweep), checked before the sweep:
 * an existing directory we can write into, or one we can create. */
static attn_status check_plot_dir(const sweep_opts *o, bool draws, char *msg, size_t msg_len)
{
    if (!draws) return ATTN_OK;
    char dir[4096];
    if (o->plots) snprintf(dir, sizeof dir, "%s", o->plots);
    else bench_default_plot_dir(dir, sizeof dir);
    if (!*dir) return attn_fail(ATTN_EINVAL, msg, msg_len, "--plots: empty directory name");
    if (o->out && bench_same_file(dir, o->out))
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--plots %s and --out %s are the same path: the figures need a directory "
                         "of their own",
                         dir, o->out);
    /* the nearest existing ancestor (plot makes the missing ones) must be a writable directory */
    char at[4096];
    snprintf(at, sizeof at, "%s", dir);
    struct stat sb;
    while (stat(at, &sb) != 0) {
        char *slash = strrchr(at, '/');
        while (slash && slash > at && slash[1] == '\0') *slash = '\0', slash = strrchr(at, '/');
        if (!slash) snprintf(at, sizeof at, ".");
        else if (slash == at) at[1] = '\0';
        else *slash = '\0';
    }
    if (!S_ISDIR(sb.st_mode))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "--plots %s: %s is not a directory", dir, at);
    if (access(at, W_OK) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "--plots %s: cannot write into %s (%s)", dir,
                         at, strerror(errno));
    return ATTN_OK;
}

/* The closing lines: the summary table (unless quiet), where the results went, noise. */
static void print_summary(const bench_run *run, const bench_host *hosts, int nhosts,
                          const bench_point *points, int64_t npoints, const char *out_path,
                          bool quiet, const sweep_tally *t)
{
    if (!quiet) {
        if (bench_mpi_size() == 1)
            printf("run %lld: sgemm %.1f GFLOP/s on %d threads; %s\n", (long long)run->run_id,
                   run->sgemm_gflops, run->threads, run->cpu_model);
        else
            printf("run %lld: %d ranks on %d host%s\n", (long long)run->run_id, bench_mpi_size(),
                   nhosts, nhosts == 1 ? "" : "s");
        for (int h = 0; bench_mpi_size() > 1 && h < nhosts; h++)
            printf("  %s (ranks %d, yardsticks by rank %d): sgemm %.1f GFLOP/s on %d threads; %s\n",
                   hosts[h].host, hosts[h].ranks, hosts[h].rank, hosts[h].sgemm_gflops,
                   hosts[h].threads, hosts[h].cpu_model);
        const bench_table_cols cols = bench_table_columns(points, npoints);
        bench_table_header(stdout, &cols);
        for (int64_t p = 0; p < npoints; p++) /* %sgemm: against the sgemm of the point's host */
            if (strcmp(points[p].status, "skipped") != 0)
                bench_table_row(stdout, &points[p],
                                bench_sweep_host_sgemm(hosts, nhosts, points[p].host), &cols);
    }
    printf("results: %s (run %lld, %lld points%s%s)\n", out_path, (long long)run->run_id,
           (long long)(npoints - t->over.total),
           t->failed ? ", some failed: see status/message" : "",
           t->nonfinite ? ", some with non-finite outputs: status nonfinite" : "");
    bench_skips_print(
        stderr, &t->over, "skipped",
        "over the time budget (give --n, or raise --max-point-time, to measure them)");
    if (t->noisy) {
        char named[SWEEP_NOISY_NAMED * 72] = "";
        for (int i = 0, w = 0; i < t->noisy && i < SWEEP_NOISY_NAMED; i++)
            w += snprintf(named + w, sizeof named - (size_t)w, "%s%s", i ? ", " : "",
                          t->noisy_named[i]);
        fprintf(stderr,
                "bench: timings vary at %d of %lld points even measured twice (interquartile "
                "range above 10%% of the median: %s%s): their medians are less certain; to "
                "steady them, " BENCH_NOISE_FIX " (--verbose names each; the repetitions are "
                "in /samples)\n",
                t->noisy, (long long)(npoints - t->over.total), named,
                t->noisy > SWEEP_NOISY_NAMED ? ", ..." : "");
    }
}

/* The run's figures into --plots DIR (or plots/<file>-run<ID>); 0, or 1 when they cannot be drawn.
 * A run with nothing to draw (one n, every point failed) is no failure: said on stdout, 0. */
static int draw_plots(const char *plots, const char *out_path, int64_t run_id)
{
    char msg[ATTN_MSG_LEN]; /* no --plots: plots/<file>-run<ID> */
    const attn_status st =
        bench_plot_results(out_path, run_id, plots, "png", NULL, NULL, msg, sizeof msg);
    if (st == ATTN_ENODEF) {
        printf("plots: none drawn: %s\n", msg);
        return 0;
    }
    if (st) {
        fprintf(stderr, "bench: no plots: %s (the results are saved: bench plot %s)\n", msg,
                out_path);
        return 1;
    }
    return 0;
}

/* Rank 0: the run and its hosts into store. */
static attn_status begin_run(bench_store *store, bench_run *run, bench_host *hosts, int nhosts,
                             char *msg, size_t msg_len)
{
    attn_status st = bench_store_begin_run(store, run, msg, msg_len);
    for (int h = 0; !st && h < nhosts; h++)
        st = bench_store_add_host(store, &hosts[h], msg, msg_len);
    return st;
}

/* A signal stopped the sweep: mark its run interrupted, close the file, say what was kept (one
 * line). The exit status: 128 + the signal. */
static int interrupted(bench_store *store, const char *out_path)
{
    const int sig = bench_stop_signal();
    if (!store) return 128 + sig; /* a rank other than 0: rank 0 speaks */
    int64_t kept = 0, planned = bench_store_planned(store);
    const int64_t run_id = bench_store_interrupt(store, sig, &kept);
    if (run_id > 0)
        fprintf(stderr, "bench: interrupted (SIG%s): %lld of %lld points kept in %s (run %lld)\n",
                bench_signal_name(sig), (long long)kept, (long long)planned, out_path,
                (long long)run_id);
    else
        fprintf(stderr,
                "bench: interrupted (SIG%s) before the first point finished: nothing written "
                "to %s\n",
                bench_signal_name(sig), out_path);
    return 128 + sig;
}

/* The run (machine facts, the yardsticks of every host), every point into store (rank 0; closed
 * here), the summary, then the figures: asked for with --plots, and always after the no-options
 * sweep. The exit status (under mpirun: rank 0's is the sweep's, the other ranks' 128 + a signal
 * or 0). */
static int sweep(int argc, char **argv, const sweep_opts *o, const bench_measure_cfg *mc,
                 const spec_list *list, double budget_s, bench_point *points, bench_store *store,
                 const char *out_path)
{
    char msg[ATTN_MSG_LEN];
    const bool lead = bench_mpi_rank() == 0, quiet = o->quiet != NULL || !lead;
    if (lead) {
        bench_skips_print(stderr, &list->undefined, "skipping", "outside their kind's definition");
        bench_skips_print(stderr, &list->uncausal, "--causal auto: measuring",
                          "without the causal mask (their kind is defined without one)");
    }
    if (!quiet)
        fprintf(stderr,
                "bench: measuring the yardsticks: OpenBLAS sgemm (2048^3, %d threads) and "
                "memory read bandwidth (FMA peaks, other thread counts: as points need them)...\n",
                mc->threads);
    bench_signals_catch(); /* SIGINT, SIGTERM: stop after the point in progress, abandoned */
    bench_run run;
    bench_host *hosts = NULL;
    int nhosts = 0;
    attn_status st = bench_sweep_machines(argc, argv, mc, &run, &hosts, &nhosts, msg, sizeof msg);
    if (!st && bench_mpi_size() == 1) /* the other threads and the peaks: as points need them */
        bench_yardstick_seed(run.threads, run.sgemm_gflops, run.mem_bandwidth_gbs);
    if (bench_mpi_size() == 1 && bench_stop_signal()) { /* ranks would part: the loop stops them */
        free(hosts);
        return interrupted(store, out_path);
    }
    if (lead) bench_store_set_planned(store, list->n);
    if (!st && lead) st = begin_run(store, &run, hosts, nhosts, msg, sizeof msg);
    bool speak;
    if ((st = bench_mpi_agree(st, &speak)) != ATTN_OK) {
        bench_store_close(store);
        free(hosts);
        return bench_fail(st, speak ? msg : NULL);
    }
    sweep_tally t = bench_sweep_measure(list->v, points, list->n, run.run_id, store, quiet,
                                        o->verbose != NULL, budget_s, msg, sizeof msg);
    if (bench_stop_signal() && !t.store_failed) {
        bench_skips_free(&t.over);
        free(hosts);
        return interrupted(store, out_path);
    }
    bench_store_close(store);
    int exit_code = t.failed || (t.nonfinite && !mc->allow_nonfinite) ? 1 : 0;
    if (!lead) exit_code = 0; /* rank 0 speaks for the sweep */
    else if (t.store_failed) exit_code = bench_fail(ATTN_EFAIL, msg);
    else print_summary(&run, hosts, nhosts, points, list->n, out_path, quiet, &t);
    if (lead && !t.store_failed && (o->plots || argc == 2) &&
        draw_plots(o->plots, out_path, run.run_id))
        exit_code = 1;
    bench_skips_free(&t.over);
    free(hosts);
    return exit_code;
}

/* Room for the option table of bench sweep. */
enum { MAX_OPTS = 40 };

/* The option table of bench sweep, the values going into o: into opts (room for MAX_OPTS), the
 * number of options returned. */
static int sweep_options(sweep_opts *o, bench_opt *opts)
{
    const bench_opt table[] = {
        {"--kinds", "LIST",
         "kinds to sweep, comma-separated (default: every kind but those bench list shows as "
         "measured on request)",
         &o->kinds},
        {"--n", "LIST",
         "sequence lengths: 512,1024 or ranges 256:8192:x2, 1K:8K:+1K (default " DEFAULT_N ")",
         &o->n},
        {"--mode", "LIST",
         "prefill, decode or prefill,decode (default prefill); decode: --q-len "
         "newest queries against a KV cache of n keys, causal",
         &o->mode},
        {"--q-len", "LIST", "decode only: new queries per step (default 1)", &o->q_len},
        {"--heads", "LIST", "query heads (default 8)", &o->heads},
        {"--kv-heads", "LIST", "key/value heads, each dividing every --heads (default: = heads)",
         &o->kv_heads},
        {"--head-dim", "LIST", "head dimensions (default 64)", &o->head_dim},
        {"--batch", "LIST", "batch sizes (default 1)", &o->batch},
        {"--causal", "LIST",
         "0, 1, 0,1 or auto: 1, or 0 for a kind defined without a causal mask (default " DEFAULT_CAUSAL
         "); a point outside its kind's definition is skipped and listed",
         &o->causal},
        {"--pass", "LIST",
         "forward, backward, train or a list (default forward): backward times dq, dk, dv "
         "given dout; train forward and backward together; a kind without a backward is "
         "skipped and listed",
         &o->pass},
        {"--dtype", "LIST",
         "storage of q, k, v: f32, bf16, f16 or a list (default f32); a kind that takes f32 "
         "only is skipped and listed",
         &o->dtype},
        {"--dataset", "LIST",
         "datasets, NAME or file=PATH.h5 (default " DEFAULT_DATASETS "; see "
         "bench datasets)",
         &o->dataset},
        {"--set", "NAME=V1,V2",
         "sweep a parameter of the kinds or of the datasets (repeatable); "
         "those without it ignore it",
         o->set, &o->nset, BENCH_COUNT(o->set)},
        {"--out", "FILE.h5",
         "results file; appended to if it exists (default "
         "results/<UTC time>.h5)",
         &o->out},
        {"--max-point-time", "SEC",
         "skip a point predicted (from its previous n) to take longer, listing it (default " DEFAULT_MAX_POINT_TIME
         " with the default --n, else 0: none)",
         &o->max_point_time},
        {"--quiet", NULL, "no progress line and no summary table", &o->quiet},
        {"--verbose", NULL,
         "a line for each point whose timings vary, as it is stored (default: one closing line)",
         &o->verbose},
        {"--help", NULL, "this help", &o->help},
        {"--plots", "DIR",
         "then draw the run's figures into DIR (as bench plot does; with no "
         "options at all, into plots/<file>-run<ID>/)",
         &o->plots},
        BENCH_MEASURE_OPTS(&o->measure),
    };
    _Static_assert(BENCH_COUNT(table) <= MAX_OPTS, "room for the options");
    memcpy(opts, table, sizeof table);
    return BENCH_COUNT(table);
}

/* What bench sweep sets up before it measures (the same on every rank, but the results file:
 * rank 0's). */
typedef struct sweep_plan {
    bench_measure_cfg mc;
    sweep_grid g;
    spec_list list;      /* the grid's points */
    bench_point *points; /* one row each, measured into */
    double budget_s;     /* --max-point-time (0: none) */
    char out_path[4096];
    bench_store *store; /* rank 0 */
} sweep_plan;

/* The measurement options, the time budget, the grid and its points (each checked), the plots'
 * folder and the file datasets, then room for the points: into p (free with plan_free, also after
 * a failure). */
static attn_status prepare(const sweep_opts *o, int argc, sweep_plan *p, char *msg, size_t msg_len)
{
    bench_measure_opts one = o->measure; /* --threads and --isa are axes: parse_machine_axes */
    one.threads = one.isa = NULL;
    attn_status st = bench_measure_parse(&one, &p->mc, msg, msg_len);
    if (!st && !o->measure.threads) p->mc.threads = bench_mpi_default_threads(p->mc.threads);
    if (!st && (o->max_point_time || !o->n))
        st = bench_parse_double(o->max_point_time ? o->max_point_time : DEFAULT_MAX_POINT_TIME,
                                "--max-point-time", 0, 1e9, &p->budget_s, msg, msg_len);
    if (!st) st = bench_sweep_parse_grid(o, &p->mc, &p->g, msg, msg_len);
    if (!st) st = bench_sweep_enumerate(&p->g, &p->mc, &p->list, msg, msg_len);
    if (!st) st = check_plot_dir(o, o->plots || argc == 2, msg, msg_len);
    if (!st) st = bench_sweep_check_files(&p->g, &p->mc, msg, msg_len);
    if (!st && !(p->points = calloc((size_t)p->list.n + 1, sizeof *p->points)))
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for %lld points",
                       (long long)p->list.n);
    return st;
}

static void plan_free(sweep_plan *p)
{
    bench_sweep_grid_free(&p->g); /* after the points: their file paths point into it */
    free(p->points);
    free(p->list.v);
    bench_skips_free(&p->list.undefined);
    bench_skips_free(&p->list.uncausal);
}

int bench_cmd_sweep(int argc, char **argv)
{
    sweep_opts o = {0};
    bench_opt opts[MAX_OPTS];
    const int nopts = sweep_options(&o, opts);
    const char *pos[1];
    int npos;
    char msg[ATTN_MSG_LEN];
    const bool lead = bench_mpi_rank() == 0; /* under mpirun: every rank parses alike */
    if (bench_parse_opts(argc, argv, 2, opts, nopts, pos, 0, &npos, "sweep", msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, lead ? msg : NULL);
    if (o.help) {
        if (lead) bench_print_help("bench sweep [options]", sweep_description, opts, nopts);
        return 0;
    }
    sweep_plan p = {0};
    attn_status st = prepare(&o, argc, &p, msg, sizeof msg);
    bool speak; /* a failure every rank shares is printed once, by rank 0 */
    if ((st = bench_mpi_agree(st, &speak)) == ATTN_OK) { /* rank 0 alone opens the results */
        if (lead)
            st = open_results(&o, &p.g, p.out_path, sizeof p.out_path, &p.store, msg, sizeof msg);
        st = bench_mpi_agree(st, &speak);
    }
    const int exit_code =
        st ? bench_fail(st, speak ? msg : NULL)
           : sweep(argc, argv, &o, &p.mc, &p.list, p.budget_s, p.points, p.store, p.out_path);
    plan_free(&p);
    return exit_code;
}
