/*
 * ring — exact softmax attention with the sequence split over the MPI ranks (ring attention,
 * Liu et al. 2023): each rank keeps its own queries and passes key/value blocks around a ring of
 * ranks, computing on one block while the next one travels. Definition: .definition below (the
 * same as full's). Without MPI, or outside mpirun, it is one rank and computes alone.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   placement (zig-zag): T and S are each cut into 2R balanced chunks (chunk c of n rows is
 *     [n·c/2R, n·(c+1)/2R): any n, sizes differ by at most one); rank r owns query chunks r and
 *     2R-1-r and key/value chunks r and 2R-1-r, for every batch and head. Causal, an early chunk
 *     has few keys to see and a late one many: the pair balances every rank's work (docs/
 *     distributed.md shows the counts). Not causal every placement is balanced; the same one is
 *     used.
 *   the ring: R steps. At step t rank r holds the K/V block of rank (r - t) mod R (its own at
 *     t = 0, packed into buffer 0); it posts MPI_Irecv of the next block from rank r-1 and
 *     MPI_Isend of the current one to rank r+1 (double buffering), then merges the current block
 *     into every own query row's online softmax (running max m, sum l, unnormalised acc: the dense
 *     engine's tile, attn_tile_* in kernels.h), testing the messages between tiles (Open MPI moves
 *     large messages only inside MPI calls), and waits for them (MPI_Waitall) before the next step.
 *     The merge is exact: m, l and acc of a row carry over from step to step (acc in the row of
 *     out, m and l in the workspace) as they do from key block to key block in one tile. Causal
 *     (query, key) chunk pairs that see nothing are skipped. Every rank reads only its own rows
 *     of q, k, v and writes only its own rows of out; other ranks' blocks arrive by MPI only.
 *   time O(B·H·T·S·D / R) per rank   flops 4·D per allowed score, counted exactly (all ranks)
 *   communication: R-1 steps, each rank sends its K/V block onward once per step: ·
 *     2·B·Hkv·(S/R)·D floats per rank, about (R-1)/R of K and V per rank.
 *   grouped K/V: each query head is its own tile against its KV head's block (the G heads of a
 *     KV head read the same block, G times from cache).
 *   workspace (per rank; the same on every rank): a 64-byte record of the last forward's
 *     measurements (stats); with R > 1 two K/V buffers of 2·B·Hkv·(largest block)·D floats (the
 *     block computed on and the block arriving; R = 1 reads k and v in place); m and l of every
 *     own query row, 2·B·H·(most own rows) floats; threads × (tile: block_q × block_k scores +
 *     block_q × D + 2·block_q floats, the modifiers' scratch, block_q int64 key limits).
 *   threads: OpenMP over (b, h, own query chunk, query block) within each step, dynamic; thread 0
 *     also tests the messages; OpenBLAS single-threaded inside. MPI calls only from thread 0:
 *     MPI must be initialised with at least MPI_THREAD_FUNNELED for the tests inside the
 *     parallel region (else the messages are only tested between steps).
 *   time of a forward: it ends with MPI_Barrier, so every rank's clock covers the slowest rank.
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#ifdef BENCH_HAVE_MPI
#include <mpi.h>
#endif

#include "dense.h" /* the allowed-score count, bytes and causal mask of exact attention */
#include "kernel_set.h"
#include "kernels.h"

enum { P_BLOCK_Q, P_BLOCK_K, P_RANKS };
enum {
    DIAG_ROWS = 64,    /* rows per group on a key block crossing the causal diagonal (as dense) */
    ALIGN_FLOATS = 16, /* 64 bytes */
    RECORD_BYTES = 64,
    TAG_KV = 4150,
    TAG_OUT = 4160,
};

static const attn_param_def params[] = {
    [P_BLOCK_Q] = {"block_q", "tile rows: query positions of one head", 256, 1, 4096, true},
    [P_BLOCK_K] = {"block_k", "keys per tile (online-softmax step)", 256, 1, 65536, true},
    [P_RANKS] = {"ranks", "R: the MPI ranks it runs on (0: those of mpirun, 1 without; recorded)",
                 0, 0, 1 << 20, true},
    ATTN_SCORE_MOD_PARAMS,
};

/* What the last forward measured (the start of the workspace). */
typedef struct record {
    double compute_s, wait_s, inflight_s, bytes;
} record;

typedef struct world {
    int rank, size;
    bool funneled; /* MPI may be called from thread 0 inside a parallel region */
} world;

/* This process's place: MPI_COMM_WORLD when MPI is initialised (and not finalised), else alone. */
static world ring_world(void)
{
    world w = {0, 1, true};
#ifdef BENCH_HAVE_MPI
    int init = 0, fin = 0, level = MPI_THREAD_SINGLE;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) {
        MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &w.size);
        MPI_Query_thread(&level);
        w.funneled = level >= MPI_THREAD_FUNNELED;
    }
#endif
    return w;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t n) { return ceil_div(n, ALIGN_FLOATS) * ALIGN_FLOATS; }

/* Chunk c of C over n rows: [start, start + len). */
static int64_t chunk_start(int64_t n, int64_t C, int64_t c) { return n * c / C; }
static int64_t chunk_len(int64_t n, int64_t C, int64_t c)
{
    return chunk_start(n, C, c + 1) - chunk_start(n, C, c);
}
/* The chunk a rank owns: half 0 is chunk r, half 1 chunk 2R-1-r. */
static int64_t owned(int64_t R, int64_t r, int half) { return half ? 2 * R - 1 - r : r; }
/* Rows rank r owns of n. */
static int64_t rank_rows(int64_t n, int64_t R, int64_t r)
{
    return chunk_len(n, 2 * R, owned(R, r, 0)) + chunk_len(n, 2 * R, owned(R, r, 1));
}

typedef struct plan {
    world w;
    int64_t R, C;        /* ranks, chunks (2R) */
    int64_t bq, bk;      /* tile rows and keys per visit */
    int64_t kv_rows_max; /* most K/V rows a rank owns */
    int64_t q_rows_max;  /* most query rows a rank owns */
    int64_t buf_floats;  /* one K/V buffer (K then V), 0 when R = 1 */
    int64_t ml_floats;   /* m and l of every own query row */
    int64_t tile_floats, mod_floats;
    size_t thread_bytes;
    attn_score_mod mod;
    const attn_kernel_set *ks; /* the set of the call (NULL: counts, the reference) */
} plan;

static plan make_plan(const attn_shape *s, const attn_params *p)
{
    plan pl = {.w = ring_world()};
    pl.R = pl.w.size, pl.C = 2 * pl.R;
    pl.bq = min64((int64_t)p->v[P_BLOCK_Q], s->T);
    pl.bk = min64((int64_t)p->v[P_BLOCK_K], s->S);
    for (int64_t r = 0; r < pl.R; r++) {
        pl.kv_rows_max = max64(pl.kv_rows_max, rank_rows(s->S, pl.R, r));
        pl.q_rows_max = max64(pl.q_rows_max, rank_rows(s->T, pl.R, r));
    }
    pl.buf_floats = pl.R > 1 ? round_up(2 * s->B * s->Hkv * pl.kv_rows_max * s->D) : 0;
    pl.ml_floats = round_up(2 * s->B * s->H * pl.q_rows_max);
    pl.tile_floats = attn_tile_floats(pl.bq, pl.bk, s->D);
    const attn_param_table t = ATTN_PARAM_TABLE("ring", params);
    pl.mod = attn_score_mod_of(&t, p, s);
    pl.mod_floats = round_up(attn_tile_mod_floats(&pl.mod, pl.bq, pl.bk));
    pl.thread_bytes = (size_t)(pl.tile_floats + pl.mod_floats) * sizeof(float) +
                      (size_t)ceil_div(pl.bq, 8) * 8 * sizeof(int64_t);
    return pl;
}

static attn_status check(const attn_ops *self, const attn_shape *s, const attn_params *p, char *msg,
                         size_t msg_len)
{
    const plan pl = make_plan(s, p);
    if (p->v[P_RANKS] != 0 && p->v[P_RANKS] != (double)pl.R)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "ring: ranks=%.0f, but it runs on %lld rank%s (mpirun -n gives them)",
                         p->v[P_RANKS], (long long)pl.R, pl.R == 1 ? "" : "s");
    if (pl.R == 1) return ATTN_OK;
    /* one message per block, per chunk of out: MPI counts are int */
    const int64_t block = 2 * s->B * s->Hkv * pl.kv_rows_max * s->D;
    if (!attn_blas_int_ok(block) || !attn_blas_int_ok(s->B * s->H) ||
        !attn_blas_int_ok(pl.q_rows_max * s->D))
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "ring: a rank's K/V block or output rows exceed one MPI message (2^31-1 "
                         "floats): use more ranks or a smaller batch");
    return ATTN_OK;
}

static void resolve(const attn_ops *self, const attn_shape *s, attn_params *p)
{
    (void)s;
    if (p->v[P_RANKS] == 0) p->v[P_RANKS] = ring_world().size;
}

static size_t workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                              const attn_params *p)
{
    plan pl = make_plan(s, p);
    pl.ks = x->ks;
    return RECORD_BYTES + (size_t)(2 * pl.buf_floats + pl.ml_floats) * sizeof(float) +
           (size_t)x->threads * pl.thread_bytes;
}

static double flops(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    (void)p;
    return 4.0 * (double)s->D * attn_dense_allowed_scores(s);
}

/* The messages of one step, tested by thread 0 between tiles. */
typedef struct exchange {
    int active;    /* messages in flight */
    double posted; /* when they were posted */
    double done;   /* when they were seen complete (0: not yet) */
#ifdef BENCH_HAVE_MPI
    MPI_Request req[2];
#endif
} exchange;

/* Thread 0: have the step's messages completed? (drives Open MPI's progress) */
static void progress(exchange *xc)
{
#ifdef BENCH_HAVE_MPI
    if (!xc->active || xc->done > 0) return;
    int flag = 0;
    MPI_Testall(2, xc->req, &flag, MPI_STATUSES_IGNORE);
    if (flag) xc->done = omp_get_wtime();
#else
    (void)xc;
#endif
}

/* One step's state shared by the tasks. */
typedef struct step {
    const float *q, *kb, *vb; /* q; the current block's K and V ([B·Hkv, rows, D] each) */
    float *out, *ml;
    int64_t rows;   /* rows of the current block per (b, kv head) */
    int64_t src;    /* the rank whose block it is */
    int64_t t;      /* step number */
    int64_t nqb[2]; /* query blocks of each own chunk */
} step;

/* Keys [j0, j0 + kn) (global indices; rows at kp, vp) into the tile's rows, query positions
 * i0..i0 + n - 1: whole visits where every row sees every key, row groups on the diagonal. */
static void visit_keys(const attn_shape *s, const plan *pl, attn_tile *tile, const float *qt,
                       const float *kp, const float *vp, int64_t i0, int64_t n, int64_t j0,
                       int64_t kn, int64_t *col_end)
{
    const int64_t D = s->D, first_sees = attn_causal_keys(s, i0);
    const int64_t end = min64(j0 + kn, attn_causal_keys(s, i0 + n - 1));
    for (int64_t jj = j0; jj < end; jj += pl->bk) {
        const int64_t cols = min64(pl->bk, j0 + kn - jj);
        const float *kk = kp + (jj - j0) * D, *vv = vp + (jj - j0) * D;
        attn_tile_mod_keys(tile, jj, 1, cols);
        if (jj + cols <= first_sees) {
            attn_tile_visit(tile, 0, n, qt, kk, vv, cols, NULL);
            continue;
        }
        for (int64_t r = 0; r < n; r++) col_end[r] = attn_causal_keys(s, i0 + r) - jj;
        for (int64_t r0 = 0; r0 < n; r0 += DIAG_ROWS) {
            const int64_t nr = min64(DIAG_ROWS, n - r0);
            const int64_t gcols = min64(cols, col_end[r0 + nr - 1]);
            if (gcols > 0) attn_tile_visit(tile, r0, nr, qt + r0 * D, kk, vv, gcols, col_end + r0);
        }
    }
}

/* Task `task` of a step: one query block of one head against the current block's two chunks;
 * the rows' state comes from (and goes back to) out and ml, or is normalised at the last step. */
static void run_task(const attn_shape *s, const plan *pl, const step *st, int64_t task,
                     attn_tile *tile, float *scratch, float *mods, int64_t *col_end)
{
    const int64_t D = s->D, T = s->T, per_head = st->nqb[0] + st->nqb[1], bh = task / per_head;
    const int half = task % per_head >= st->nqb[0];
    const int64_t qb = task % per_head - (half ? st->nqb[0] : 0), h = bh % s->H, b = bh / s->H;
    const int64_t chunk = owned(pl->R, pl->w.rank, half);
    const int64_t i0 = chunk_start(T, pl->C, chunk) + qb * pl->bq;
    const int64_t n = min64(pl->bq, chunk_start(T, pl->C, chunk + 1) - i0);
    const int64_t own = rank_rows(T, pl->R, pl->w.rank);
    const int64_t before =
        (half ? chunk_len(T, pl->C, owned(pl->R, pl->w.rank, 0)) : 0) + qb * pl->bq;
    float *o = st->out + (bh * T + i0) * D, *ml = st->ml + 2 * (bh * own + before);
    const bool last = st->t == pl->R - 1;
    /* the block's chunks: keys [j0, j0 + len) at row offset off of the block */
    int64_t j0[2], len[2], off[2] = {0, 0};
    for (int kh = 0; kh < 2; kh++) {
        const int64_t c = owned(pl->R, st->src, kh);
        j0[kh] = chunk_start(s->S, pl->C, c), len[kh] = chunk_len(s->S, pl->C, c);
    }
    off[1] = len[0];
    const int64_t sees = attn_causal_keys(s, i0 + n - 1);
    if (!last && !(len[0] && j0[0] < sees) && !(len[1] && j0[1] < sees)) return; /* nothing */
    attn_tile_begin(tile, pl->ks, scratch, n, D, (float)s->scale);
    attn_tile_mods(tile, &pl->mod, mods);
    for (int64_t r = 0; tile->alibi && r < n; r++) attn_tile_mod_row(tile, &pl->mod, r, h, i0 + r);
    attn_tile_load(tile, o, D, ml, 2);
    const int64_t g = h / (s->H / s->Hkv), kv = (b * s->Hkv + g) * st->rows * D;
    const float *qt = st->q + (bh * T + i0) * D;
    for (int kh = 0; kh < 2; kh++)
        if (len[kh])
            visit_keys(s, pl, tile, qt, st->kb + kv + off[kh] * D, st->vb + kv + off[kh] * D, i0, n,
                       j0[kh], len[kh], col_end);
    if (last) attn_tile_end(tile, o);
    else attn_tile_save(tile, o, D, ml, 2);
}

/* Every own query row's state empty: acc (in out) 0, m = -inf, l = 0. */
static void reset_rows(const attn_shape *s, const plan *pl, float *out, float *ml)
{
    const int64_t own = rank_rows(s->T, pl->R, pl->w.rank), D = s->D;
    for (int64_t bh = 0; bh < s->B * s->H; bh++) {
        for (int half = 0; half < 2; half++) {
            const int64_t c = owned(pl->R, pl->w.rank, half), i0 = chunk_start(s->T, pl->C, c);
            memset(out + (bh * s->T + i0) * D, 0,
                   (size_t)(chunk_len(s->T, pl->C, c) * D) * sizeof(float));
        }
        for (int64_t r = bh * own; r < (bh + 1) * own; r++)
            ml[2 * r] = -INFINITY, ml[2 * r + 1] = 0;
    }
}

/* Pack this rank's K/V chunks into buf: K [B·Hkv, rows, D] then V, chunk r before 2R-1-r. */
static void pack_block(const attn_shape *s, const plan *pl, const float *k, const float *v,
                       float *buf)
{
    const int64_t D = s->D, rows = rank_rows(s->S, pl->R, pl->w.rank);
    float *kd = buf, *vd = buf + s->B * s->Hkv * rows * D;
    for (int64_t bg = 0; bg < s->B * s->Hkv; bg++) {
        int64_t at = bg * rows * D;
        for (int half = 0; half < 2; half++) {
            const int64_t c = owned(pl->R, pl->w.rank, half);
            const int64_t j0 = chunk_start(s->S, pl->C, c), n = chunk_len(s->S, pl->C, c);
            memcpy(kd + at, k + (bg * s->S + j0) * D, (size_t)(n * D) * sizeof(float));
            memcpy(vd + at, v + (bg * s->S + j0) * D, (size_t)(n * D) * sizeof(float));
            at += n * D;
        }
    }
}

/* Post the step's messages: the current block onward, the next one in. */
static void post(const attn_shape *s, const plan *pl, const step *st, float *next, exchange *xc,
                 record *rec)
{
#ifdef BENCH_HAVE_MPI
    const int R = (int)pl->R, r = pl->w.rank, from = (r + R - 1) % R, to = (r + 1) % R;
    const int64_t src_in = (st->src + pl->R - 1) % pl->R;
    const int n_in = (int)(2 * s->B * s->Hkv * rank_rows(s->S, pl->R, src_in) * s->D);
    const int n_out = (int)(2 * s->B * s->Hkv * st->rows * s->D);
    xc->posted = omp_get_wtime(), xc->done = 0, xc->active = 1;
    MPI_Irecv(next, n_in, MPI_FLOAT, from, TAG_KV, MPI_COMM_WORLD, &xc->req[0]);
    MPI_Isend(st->kb, n_out, MPI_FLOAT, to, TAG_KV, MPI_COMM_WORLD, &xc->req[1]);
    rec->bytes += (double)n_out * sizeof(float);
#else
    (void)s, (void)pl, (void)st, (void)next, (void)xc, (void)rec;
#endif
}

/* Wait for the step's messages; the waiting and the messages' time in flight into rec. */
static void finish(exchange *xc, record *rec)
{
#ifdef BENCH_HAVE_MPI
    if (!xc->active) return;
    const double t0 = omp_get_wtime();
    MPI_Waitall(2, xc->req, MPI_STATUSES_IGNORE);
    const double t1 = omp_get_wtime();
    rec->wait_s += t1 - t0;
    rec->inflight_s += (xc->done > 0 ? xc->done : t1) - xc->posted;
    xc->active = 0;
#else
    (void)xc, (void)rec;
#endif
}

/* The step's tasks, on every thread; thread 0 tests the messages between its tasks. */
static void compute_step(const attn_exec *x, const attn_shape *s, const plan *pl, const step *st,
                         void *workspace, exchange *xc)
{
    const int64_t tasks = s->B * s->H * (st->nqb[0] + st->nqb[1]);
    char *tiles = (char *)workspace;
#pragma omp parallel num_threads(x->threads)
    {
        const int me = omp_get_thread_num();
        float *scratch = (float *)(tiles + (size_t)me * pl->thread_bytes);
        float *mods = scratch + pl->tile_floats;
        int64_t *col_end = (int64_t *)(mods + pl->mod_floats);
        attn_tile tile;
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < tasks; task++) {
            run_task(s, pl, st, task, &tile, scratch, mods, col_end);
            if (me == 0 && pl->w.funneled) progress(xc);
        }
    }
}

static attn_status forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *q, const float *k, const float *v,
                           float *out, void *workspace)
{
    plan pl = make_plan(s, p);
    pl.ks = x->ks;
    record *rec = (record *)workspace;
    *rec = (record){0};
    float *buf[2] = {(float *)((char *)workspace + RECORD_BYTES), NULL};
    buf[1] = buf[0] + pl.buf_floats;
    float *ml = buf[1] + pl.buf_floats;
    void *tiles = ml + pl.ml_floats;
    attn_blas_threads(1);
    double t0 = omp_get_wtime();
    step st = {.q = q, .out = out, .ml = ml, .kb = k, .vb = v, .rows = s->S, .src = pl.w.rank};
    for (int half = 0; half < 2; half++)
        st.nqb[half] = ceil_div(chunk_len(s->T, pl.C, owned(pl.R, pl.w.rank, half)), pl.bq);
    reset_rows(s, &pl, out, ml);
    if (pl.R > 1) {
        pack_block(s, &pl, k, v, buf[0]);
        st.rows = rank_rows(s->S, pl.R, pl.w.rank);
        st.kb = buf[0], st.vb = buf[0] + s->B * s->Hkv * st.rows * s->D;
    }
    for (int64_t t = 0; t < pl.R; t++) {
        exchange xc = {0};
        st.t = t;
        if (t + 1 < pl.R) post(s, &pl, &st, buf[(t + 1) % 2], &xc, rec);
        compute_step(x, s, &pl, &st, tiles, &xc);
        if (t + 1 < pl.R) {
            progress(&xc);
            rec->compute_s += omp_get_wtime() - t0;
            finish(&xc, rec);
            t0 = omp_get_wtime();
            st.src = (st.src + pl.R - 1) % pl.R;
            st.rows = rank_rows(s->S, pl.R, st.src);
            st.kb = buf[(t + 1) % 2], st.vb = st.kb + s->B * s->Hkv * st.rows * s->D;
        }
    }
    rec->compute_s += omp_get_wtime() - t0;
#ifdef BENCH_HAVE_MPI
    if (pl.R > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
    return ATTN_OK;
}

/* Rank 0 receives every other rank's output chunks, each a strided [B·H, rows, D] slab of out. */
static attn_status gather(const attn_ops *self, const attn_shape *s, const attn_params *p,
                          float *out, char *msg, size_t msg_len)
{
    (void)msg, (void)msg_len;
    const plan pl = make_plan(s, p);
    if (pl.R == 1) return ATTN_OK;
#ifdef BENCH_HAVE_MPI
    for (int r = 1; r < (int)pl.R; r++) {
        if (pl.w.rank != 0 && pl.w.rank != r) continue;
        for (int half = 0; half < 2; half++) {
            const int64_t c = owned(pl.R, r, half), rows = chunk_len(s->T, pl.C, c);
            if (rows == 0) continue;
            MPI_Datatype slab;
            MPI_Type_create_hvector((int)(s->B * s->H), (int)(rows * s->D),
                                    (MPI_Aint)(s->T * s->D * (int64_t)sizeof(float)), MPI_FLOAT,
                                    &slab);
            MPI_Type_commit(&slab);
            float *at = out + chunk_start(s->T, pl.C, c) * s->D;
            if (pl.w.rank == 0)
                MPI_Recv(at, 1, slab, r, TAG_OUT + half, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else MPI_Send(at, 1, slab, 0, TAG_OUT + half, MPI_COMM_WORLD);
            MPI_Type_free(&slab);
        }
    }
#else
    (void)out;
#endif
    return ATTN_OK;
}

static void stats(const attn_ops *self, const attn_shape *s, const attn_params *p,
                  const void *workspace, attn_stats *out)
{
    (void)s, (void)p;
    const record *rec = (const record *)workspace;
    *out = (attn_stats){.compute_s = rec->compute_s,
                        .wait_s = rec->wait_s,
                        .inflight_s = rec->inflight_s,
                        .bytes = rec->bytes};
}

static const attn_distributed_ops distributed_ops = {
    .gather = gather,
    .stats = stats,
};

const attn_ops attn_kind_ring = {
    .name = "ring",
    .summary = "exact attention over MPI ranks: K/V blocks passed around a ring, overlapped",
    .definition = "out_i = sum_j softmax_j(scale * q_i . k_j) v_j over every key j\n"
                  "(causal: j <= i + S - T). scale = 1/sqrt(D). Query head h reads KV head\n"
                  "h / (H/Hkv). Computed by the R ranks of mpirun (1 without it): each owns\n"
                  "query and key chunks r and 2R-1-r of 2R (zig-zag), K/V blocks circulate.",
    .params = ATTN_PARAM_TABLE("ring", params),
    .check = check,
    .workspace_bytes = workspace_bytes,
    .flops = flops,
    .bytes = attn_dense_bytes,
    .forward = forward,
    .allows = attn_dense_allows,
    .resolve = resolve,
    .distributed = &distributed_ops,
};
