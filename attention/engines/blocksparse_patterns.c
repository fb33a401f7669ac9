/*
 * blocksparse_patterns.c — the helpers patterns share (blocksparse.h): floor division, tasks of
 * position blocks and residue classes, bands, strides, seeded stratified draws.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blocksparse_engine.h"

int64_t attn_bs_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

int64_t attn_bs_floormod(int64_t a, int64_t b) { return a - b * attn_bs_floordiv(a, b); }

attn_bs_keys attn_bs_range(int64_t j0, int64_t j1)
{
    const int64_t n = j1 > j0 ? j1 - j0 : 0;
    return (attn_bs_keys){.j0 = j0, .n = n, .run = n > 0 ? n : 1, .step = n > 0 ? n : 1};
}

int64_t attn_bs_block_tasks(const attn_shape *s, int64_t size)
{
    return attn_bs_floordiv(s->S - 1, size) - attn_bs_floordiv(s->S - s->T, size) + 1;
}

attn_bs_rows attn_bs_block_rows(const attn_shape *s, int64_t size, int64_t t)
{
    const int64_t shift = s->S - s->T; /* position of row 0 */
    const int64_t block = attn_bs_floordiv(shift, size) + t;
    const int64_t i0 = attn_bs_max(0, block * size - shift);
    const int64_t i1 = attn_bs_min(s->T, (block + 1) * size - shift);
    return (attn_bs_rows){.i0 = i0, .n = attn_bs_max(0, i1 - i0), .step = 1};
}

/* Chunks of `size` rows in the largest residue class (ceil(T/step) rows). */
static int64_t class_chunks(const attn_shape *s, int64_t step, int64_t size)
{
    return ((s->T + step - 1) / step + size - 1) / size;
}

int64_t attn_bs_class_tasks(const attn_shape *s, int64_t step, int64_t size)
{
    return attn_bs_min(step, s->T) * class_chunks(s, step, size);
}

attn_bs_rows attn_bs_class_rows(const attn_shape *s, int64_t step, int64_t size, int64_t t)
{
    const int64_t chunks = class_chunks(s, step, size), a = t / chunks, chunk = t % chunks;
    const int64_t count = (s->T - a + step - 1) / step, first = chunk * size;
    return (attn_bs_rows){.i0 = a + first * step,
                          .n = attn_bs_clamp(count - first, 0, size),
                          .step = step};
}

void attn_bs_plan_blocks(const attn_shape *s, int64_t block, attn_bs_plan *pl)
{
    pl->nphases = 1;
    pl->block = block;
    pl->tasks[0] = attn_bs_block_tasks(s, block);
    pl->rows_max = attn_bs_min(block, s->T);
}

attn_status attn_bs_accept(const attn_ops *self, const attn_shape *s, const attn_params *p,
                           char *msg, size_t msg_len)
{
    (void)s, (void)p, (void)msg, (void)msg_len;
    return ATTN_OK;
}

void attn_bs_band(const attn_shape *s, const attn_bs_task *t, int64_t r0, int64_t r1, int64_t w,
                  int64_t from, int64_t *ints, attn_bs_run *run)
{
    if (r1 <= r0 || w <= 0) return;
    int64_t *lo = ints, *hi = ints + t->rows.n;
    const int64_t p0 = attn_bs_pos(s, t->rows.i0);
    const int64_t j0 = attn_bs_max(from, p0 + r0 - w + 1); /* the first row's lowest key */
    for (int64_t r = r0; r < r1; r++) {
        const int64_t pos = p0 + r;
        lo[r] = attn_bs_max(from, pos - w + 1) - j0;
        hi[r] = attn_bs_min(s->S, s->causal ? pos + 1 : pos + w) - j0;
    }
    const attn_bs_seg seg = {
        .keys = attn_bs_range(j0, j0 + hi[r1 - 1]), .r0 = r0, .nrows = r1 - r0, .lo = lo, .hi = hi};
    attn_bs_visit(run, &seg);
}

int64_t attn_bs_band_sub(const attn_shape *s, const attn_bs_plan *pl, int64_t w)
{
    const int64_t width = s->causal ? w : 2 * w - 1, mr = pl->kernel_rows;
    if (width < BAND_NARROW) return 2 * mr; /* 12 rows: a triangle of at most 11 extra */
    return (width >= 1024 ? 2 * BAND_BLOCKS : BAND_BLOCKS) * mr;
}

void attn_bs_plan_band(const attn_shape *s, int64_t w, attn_bs_plan *pl)
{
    const int64_t width = s->causal ? w : 2 * w - 1;
    pl->sub = attn_bs_band_sub(s, pl, w);
    /* a group's keys (width + sub - 1) in one visit, up to BAND_COLS_MAX */
    pl->cols_max = attn_bs_clamp((width + pl->sub + 63) / 64 * 64, COLS_DEFAULT, BAND_COLS_MAX);
}

int64_t attn_bs_stride(const attn_shape *s, double v)
{
    if (v > 0) return (int64_t)v;
    int64_t r = (int64_t)sqrt((double)s->S);
    while (r * r < s->S) r++;
    while (r > 1 && (r - 1) * (r - 1) >= s->S) r--;
    return r;
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* floor(k·N/r) without overflow (k <= r, r < 2^31, N < 2^62). */
static int64_t stratum_start(int64_t k, int64_t N, int64_t r)
{
    return k * (N / r) + k * (N % r) / r;
}

/* The hash of (seed, h, who), then of draw k: uniform 64-bit words. */
static uint64_t draw_base(uint64_t seed, int64_t h, int64_t who)
{
    return mix64(mix64(mix64(seed) ^ (uint64_t)h) ^ (uint64_t)who);
}

/* a + a uniform offset in [0, len): the high word of z·len. */
static int64_t pick(uint64_t base, int64_t k, int64_t a, int64_t len)
{
    return a + (int64_t)(((unsigned __int128)mix64(base ^ (uint64_t)k) * (uint64_t)len) >> 64);
}

int64_t attn_bs_draw(uint64_t seed, int64_t h, int64_t who, int64_t k, int64_t N, int64_t r)
{
    const int64_t a = stratum_start(k, N, r);
    return pick(draw_base(seed, h, who), k, a, stratum_start(k + 1, N, r) - a);
}

void attn_bs_draws(uint64_t seed, int64_t h, int64_t who, int64_t N, int64_t r, int64_t *out)
{
    if (r <= 0) return;
    const uint64_t base = draw_base(seed, h, who);
    const int64_t q = N / r, rem = N % r;
    int64_t a = 0, carry = 0; /* a = floor(k·N/r), carry = k·rem mod r */
    for (int64_t k = 0; k < r; k++) {
        carry += rem;
        const int64_t len = q + (carry >= r);
        if (carry >= r) carry -= r;
        out[k] = pick(base, k, a, len);
        a += len;
    }
}

bool attn_bs_drawn(uint64_t seed, int64_t h, int64_t who, int64_t x, int64_t N, int64_t r)
{
    if (x < 0 || x >= N) return false;
    if (r >= N) return true;
    if (r <= 0) return false;
    int64_t k = (int64_t)((double)x * (double)r / (double)N); /* its stratum, then exact */
    k = attn_bs_clamp(k, 0, r - 1);
    while (k > 0 && stratum_start(k, N, r) > x) k--;
    while (k + 1 < r && stratum_start(k + 1, N, r) <= x) k++;
    return attn_bs_draw(seed, h, who, k, N, r) == x;
}
