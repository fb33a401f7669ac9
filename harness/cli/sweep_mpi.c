/*
 * sweep_mpi.c — a sweep spread over MPI ranks (sweep_mpi.h): the plan (series to ranks by
 * predicted cost), the messages that bring every point to rank 0, the collective points, and the
 * hosts' yardsticks. Messages travel on a communicator of their own (a duplicate of
 * MPI_COMM_WORLD), so a collective kind's own messages never meet them. Every rank runs the same
 * binary on the same architecture: points travel as raw bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_HAVE_MPI
#include <mpi.h>
#endif

#include "bench_mpi.h"
#include "machine.h"
#include "sweep_mpi.h"

/* One rank, or a rank-less build: grid order, each point recorded as it ends. */
static void spread_serial(int64_t n, const bench_sweep_hooks *h)
{
    for (int64_t p = 0; p < n && !h->stopping(h->ctx); p++) {
        double *samples = NULL;
        int64_t nsamples = 0;
        h->measure(h->ctx, p, &samples, &nsamples);
        const bool stored = h->record(h->ctx, p, samples, nsamples);
        free(samples);
        if (!stored) break;
    }
}

#ifdef BENCH_HAVE_MPI
enum { TAG_POINT = 1, TAG_DONE = 2, TAG_STOP = 3 };

/* A point on its way to rank 0; its nsamples doubles follow. */
typedef struct point_msg {
    int64_t p, nsamples;
    bench_point pt;
} point_msg;

/* The owner rank of every non-collective point (-1: collective): whole series, largest
 * predicted first, each to the rank with the least predicted work so far (lowest on ties). */
static int *plan(const bench_sweep_item *items, int64_t n, int ranks)
{
    int *owner = malloc((size_t)(n > 0 ? n : 1) * sizeof *owner);
    int64_t *first = malloc((size_t)(n > 0 ? n : 1) * sizeof *first); /* series' first points */
    double *cost = malloc((size_t)(n > 0 ? n : 1) * sizeof *cost),
           *load = calloc((size_t)ranks, sizeof *load);
    int64_t nseries = 0;
    if (!owner || !first || !cost || !load) {
        free(owner), free(first), free(cost), free(load);
        return NULL;
    }
    for (int64_t p = 0; p < n; p++) {
        owner[p] = -1;
        if (items[p].collective) continue;
        if (p == 0 || items[p].series != items[p - 1].series || items[p - 1].collective)
            first[nseries] = p, cost[nseries++] = 0;
        cost[nseries - 1] += items[p].cost_s;
    }
    for (int64_t done = 0; done < nseries; done++) {
        int64_t big = -1; /* the largest series not placed yet (placed: cost < 0) */
        for (int64_t s = 0; s < nseries; s++)
            if (cost[s] >= 0 && (big < 0 || cost[s] > cost[big])) big = s;
        int to = 0;
        for (int r = 1; r < ranks; r++)
            if (load[r] < load[to]) to = r;
        load[to] += cost[big];
        for (int64_t p = first[big];
             p < n && !items[p].collective && items[p].series == items[first[big]].series; p++)
            owner[p] = to;
        cost[big] = -1;
    }
    free(first), free(cost), free(load);
    return owner;
}

/* Rank 0: tell every other rank to stop measuring. */
static void send_stop(MPI_Comm comm, int ranks)
{
    int stop = 1;
    for (int r = 1; r < ranks; r++) MPI_Send(&stop, 1, MPI_INT, r, TAG_STOP, comm);
}

/* Rank 0: handle one message from another rank, waiting for it when block (else none may be
 * pending: false). A point is recorded (unless *stop); DONE counts into *done. */
static bool receive_one(MPI_Comm comm, int ranks, bench_point *points, const bench_sweep_hooks *h,
                        bool block, int *done, bool *stop)
{
    MPI_Status s;
    int flag = 1, bytes = 0;
    for (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &s); block && !flag;
         MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &s))
        bench_mpi_nap(); /* not MPI_Probe: it spins on a core the other ranks may measure on */
    if (!flag) return false;
    MPI_Get_count(&s, MPI_BYTE, &bytes);
    char *buf = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 1); /* the message cannot be left unread */
    MPI_Recv(buf, bytes, MPI_BYTE, s.MPI_SOURCE, s.MPI_TAG, comm, MPI_STATUS_IGNORE);
    if (s.MPI_TAG == TAG_DONE) {
        (*done)++;
    } else if (s.MPI_TAG == TAG_POINT && (size_t)bytes >= sizeof(point_msg)) {
        point_msg m;
        memcpy(&m, buf, sizeof m);
        points[m.p] = m.pt;
        if (!*stop && !h->record(h->ctx, m.p, (const double *)(buf + sizeof m), m.nsamples)) {
            *stop = true;
            send_stop(comm, ranks);
        }
    }
    free(buf);
    return true;
}

/* Measure point p here: its rank and host recorded (collective: rank -1, rank 0's host). */
static void measure_here(const bench_sweep_hooks *h, bench_point *points, int64_t p,
                         bool collective, double **samples, int64_t *nsamples)
{
    h->measure(h->ctx, p, samples, nsamples);
    points[p].rank = collective ? -1 : bench_mpi_rank();
    snprintf(points[p].host, sizeof points[p].host, "%s", bench_mpi_host());
}

/* Rank 0's share: its own points, recording the others' as they arrive, until every rank is
 * done. false: stopped (a point could not be stored, or stopping). */
static bool lead(MPI_Comm comm, const int *owner, bench_point *points, int64_t n,
                 const bench_sweep_hooks *h)
{
    const int ranks = bench_mpi_size();
    int done = 0;
    bool stop = false;
    for (int64_t p = 0; p < n; p++) {
        while (receive_one(comm, ranks, points, h, false, &done, &stop)) {}
        if (!stop && h->stopping(h->ctx)) stop = true, send_stop(comm, ranks);
        if (stop) break;
        if (owner[p] != 0) continue;
        double *samples = NULL;
        int64_t nsamples = 0;
        measure_here(h, points, p, false, &samples, &nsamples);
        if (!h->record(h->ctx, p, samples, nsamples)) stop = true, send_stop(comm, ranks);
        free(samples);
    }
    while (done < ranks - 1) receive_one(comm, ranks, points, h, true, &done, &stop);
    return !stop;
}

/* Another rank's share: its points, each sent to rank 0 as it ends, until done or told to
 * stop; then DONE. */
static void follow(MPI_Comm comm, const int *owner, bench_point *points, int64_t n,
                   const bench_sweep_hooks *h)
{
    const int me = bench_mpi_rank();
    int64_t mine = 0, sent = 0;
    for (int64_t p = 0; p < n; p++) mine += owner[p] == me;
    MPI_Request *req = malloc((size_t)(mine + 1) * sizeof *req);
    char **bufs = calloc((size_t)(mine + 1), sizeof *bufs);
    int *index = malloc((size_t)(mine + 1) * sizeof *index);
    if (!req || !bufs || !index) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int64_t p = 0; p < n; p++) {
        int stop = 0;
        MPI_Iprobe(0, TAG_STOP, comm, &stop, MPI_STATUS_IGNORE);
        if (stop) MPI_Recv(&stop, 1, MPI_INT, 0, TAG_STOP, comm, MPI_STATUS_IGNORE);
        if (stop || h->stopping(h->ctx)) break;
        if (owner[p] != me) continue;
        double *samples = NULL;
        point_msg m = {.p = p};
        measure_here(h, points, p, false, &samples, &m.nsamples);
        m.pt = points[p];
        const size_t bytes = sizeof m + (size_t)m.nsamples * sizeof *samples;
        if (!(bufs[sent] = malloc(bytes))) MPI_Abort(MPI_COMM_WORLD, 1);
        memcpy(bufs[sent], &m, sizeof m);
        if (m.nsamples) memcpy(bufs[sent] + sizeof m, samples, bytes - sizeof m);
        free(samples);
        MPI_Isend(bufs[sent], (int)bytes, MPI_BYTE, 0, TAG_POINT, comm, &req[sent]);
        sent++;
        int completed = 0; /* free what has gone */
        MPI_Testsome((int)sent, req, &completed, index, MPI_STATUSES_IGNORE);
        for (int c = 0; c < completed && completed != MPI_UNDEFINED; c++)
            free(bufs[index[c]]), bufs[index[c]] = NULL;
    }
    int all = 0; /* wait for rank 0 to take them, napping (MPI_Waitall would spin) */
    for (MPI_Testall((int)sent, req, &all, MPI_STATUSES_IGNORE); !all;
         MPI_Testall((int)sent, req, &all, MPI_STATUSES_IGNORE))
        bench_mpi_nap();
    for (int64_t s = 0; s < sent; s++) free(bufs[s]);
    free(req), free(bufs), free(index);
    int64_t count = sent;
    MPI_Send(&count, 1, MPI_INT64_T, 0, TAG_DONE, comm);
}

/* The collective points, every rank together in grid order: rank 0 decides whether to go on,
 * its row is the point's on every rank (so --max-point-time decides alike everywhere), and it
 * records it. */
static void together(const bench_sweep_item *items, bench_point *points, int64_t n, bool go,
                     const bench_sweep_hooks *h)
{
    for (int64_t p = 0; p < n; p++) {
        if (!items[p].collective) continue;
        int on = go && !h->stopping(h->ctx);
        bench_mpi_barrier(); /* rank 0 records the previous point meanwhile */
        bench_mpi_bcast(&on, sizeof on);
        if (!on) break;
        double *samples = NULL;
        int64_t nsamples = 0;
        measure_here(h, points, p, true, &samples, &nsamples);
        bench_mpi_bcast(&points[p], sizeof points[p]);
        if (bench_mpi_rank() == 0) go = h->record(h->ctx, p, samples, nsamples);
        free(samples);
    }
}

void bench_sweep_spread(const bench_sweep_item *items, bench_point *points, int64_t n,
                        const bench_sweep_hooks *h)
{
    const int ranks = bench_mpi_size();
    if (ranks == 1) {
        spread_serial(n, h);
        return;
    }
    int *owner = plan(items, n, ranks);
    if (!owner) MPI_Abort(MPI_COMM_WORLD, 1); /* every rank plans alike: it fails alike */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int go = 1;
    if (bench_mpi_rank() == 0) go = lead(comm, owner, points, n, h);
    else follow(comm, owner, points, n, h);
    bench_mpi_barrier(); /* napping until rank 0 has every point */
    bench_mpi_bcast(&go, sizeof go);
    together(items, points, n, go, h);
    int stop = 0; /* a STOP that crossed this rank's DONE */
    MPI_Iprobe(0, TAG_STOP, comm, &stop, MPI_STATUS_IGNORE);
    if (stop) MPI_Recv(&stop, 1, MPI_INT, 0, TAG_STOP, comm, MPI_STATUS_IGNORE);
    MPI_Comm_free(&comm);
    free(owner);
}
#else
void bench_sweep_spread(const bench_sweep_item *items, bench_point *points, int64_t n,
                        const bench_sweep_hooks *h)
{
    (void)items, (void)points;
    spread_serial(n, h);
}
#endif

/* The index of host `name` among hosts[0..n), or -1. */
static int find_host(const bench_host *hosts, int n, const char *name)
{
    for (int h = 0; h < n; h++)
        if (strcmp(hosts[h].host, name) == 0) return h;
    return -1;
}

attn_status bench_sweep_machines(int argc, char **argv, const bench_measure_cfg *mc, bench_run *run,
                                 bench_host **hosts, int *nhosts, char *msg, size_t msg_len)
{
    const int ranks = bench_mpi_size();
    *hosts = NULL, *nhosts = 0;
    if (bench_mpi_host_leader()) {
        *run = bench_new_run(argc, argv, mc);
    } else { /* the host's lowest rank measures its yardsticks: not on shared cores */
        *run = (bench_run){.threads = mc->threads, .blas_threads = 1, .seed = mc->seed};
        bench_machine_facts(run);
        bench_join_args(argc, argv, run->command, sizeof run->command);
        run->sgemm_gflops = run->mem_bandwidth_gbs = NAN;
    }
    bench_host mine = {.rank = bench_mpi_rank(),
                       .ranks = bench_mpi_host_ranks(),
                       .threads = run->threads,
                       .sgemm_gflops = run->sgemm_gflops,
                       .mem_bandwidth_gbs = run->mem_bandwidth_gbs};
    snprintf(mine.host, sizeof mine.host, "%s", bench_mpi_host());
    snprintf(mine.cpu_model, sizeof mine.cpu_model, "%s", run->cpu_model);
    bench_host *all = bench_mpi_rank() == 0 ? calloc((size_t)ranks, sizeof *all) : NULL;
    attn_status st = bench_mpi_rank() == 0 && !all ? ATTN_EFAIL : ATTN_OK;
    bool speak;
    if (bench_mpi_agree(st, &speak) != ATTN_OK) {
        free(all);
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for %d hosts", ranks);
    }
    bench_mpi_barrier(); /* napping while the hosts' lowest ranks measure */
    bench_mpi_gather(&mine, all, sizeof mine);
    if (!all) return ATTN_OK;
    for (int r = 0; r < ranks; r++) /* the leaders' rows: in rank order, the first of a host */
        if (find_host(all, *nhosts, all[r].host) < 0) all[(*nhosts)++] = all[r];
    *hosts = all;
    return ATTN_OK;
}

double bench_sweep_host_sgemm(const bench_host *hosts, int n, const char *name)
{
    const int h = find_host(hosts, n, name);
    return h < 0 ? NAN : hosts[h].sgemm_gflops;
}
