/*
 * decode.c — the dense engine's decode kernel (full, mqa, gqa with T = 1 query per head and no
 * score modifiers; dense.c hands such shapes here) and the up-front widening of low-precision
 * inputs for its prefill.
 *   definition: softmax attention, out[b,h] = Σ_j softmax_j(scale·q[b,h]·k[b,g,j]) v[b,g,j],
 *     g = h / G, G = H/Hkv; q [B,H,1,D], k, v [B,Hkv,S,D] of s->dtype (f32, bf16, f16),
 *     out [B,H,1,D] float32.
 *   algorithm: a task is one key chunk of one (b, KV head); it streams each K/V row of the
 *     chunk once for the G query heads of that KV head (kernels/decode_body.h: scores by dot
 *     products, online softmax, acc += p·v; bf16/f16 rows converted in registers, or once per
 *     block of 64 keys when G >= 8; vdpbf16ps for G = 1 bf16 where the CPU has AVX512_BF16;
 *     G < 8 reads four parts of the chunk side by side, 8 streams in flight; G >= 8 runs
 *     the rows in vector lanes against K read in place, small GEMMs) and leaves
 *     its (m, l, acc) in a slot; the chunks are merged exactly as dense.c does:
 *     out = Σ_c e^(m_c-M) acc_c / Σ_c e^(m_c-M) l_c, M = max_c m_c.
 *     Auto split: enough chunks for TASKS_TARGET tasks, each >= MIN_CHUNK_KEYS keys (dense.c's
 *     rule; never dependent on the thread count, so neither is the result).
 *   time O(B·H·S·D); flops 4·D per score (the dense count); bytes: the KV cache once, q, out.
 *   workspace: threads × (G·D floats of scaled q + the body's scratch: 64·(G + 2·D) floats,
 *     or for G >= 8 gp·(D + 67) + 128·D if more, gp = G rounded up to the vector width) +
 *     tasks × G·(D + 2) floats of partials.
 *   threads: OpenMP over the B·Hkv·split tasks (dynamic), then over the B·Hkv merges.
 * Widening (prefill of a non-f32 dtype): q, k, v converted once into float32 copies at the head
 *   of the workspace (attn_widen_bytes: 4 bytes per element of q, k and v), OpenMP over the
 *   elements; the tile then runs on the copies as for f32.
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "decode.h"
#include "kernel_set.h"
#include "kernels.h"

enum { TASKS_TARGET = 32, MIN_CHUNK_KEYS = 512, ALIGN_FLOATS = 16 };

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t n) { return ceil_div(n, ALIGN_FLOATS) * ALIGN_FLOATS; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

int64_t attn_decode_split(const attn_shape *s, int64_t requested)
{
    const int64_t groups = s->B * s->Hkv;
    const int64_t split =
        requested > 0 ? requested
                      : min64(ceil_div(TASKS_TARGET, groups), max64(1, s->S / MIN_CHUNK_KEYS));
    return min64(split, s->S);
}

typedef struct dplan {
    int64_t G, split, tasks, slot_floats, thread_floats;
} dplan;

static dplan make_dplan(const attn_exec *x, const attn_shape *s, int64_t split)
{
    dplan pl;
    pl.G = s->H / s->Hkv;
    pl.split = attn_decode_split(s, split);
    pl.tasks = s->B * s->Hkv * pl.split;
    pl.slot_floats = round_up(pl.G * (s->D + 2));
    pl.thread_floats = round_up(pl.G * s->D) + round_up(x->ks->decode.scratch_floats(pl.G, s->D));
    return pl;
}

size_t attn_decode_workspace_bytes(const attn_exec *x, const attn_shape *s, int64_t split)
{
    const dplan pl = make_dplan(x, s, split);
    return sizeof(float) * (size_t)(x->threads * pl.thread_floats + pl.tasks * pl.slot_floats);
}

/* Merge the split slots of group bg (b·Hkv + g) into its G output rows. */
static void merge(const attn_shape *s, const dplan *pl, const float *slots, int64_t bg, float *out)
{
    const int64_t D = s->D, G = pl->G;
    const float *first = slots + bg * pl->split * pl->slot_floats;
    float *o0 = out + (bg / s->Hkv * s->H + bg % s->Hkv * G) * D; /* T = 1: rows adjacent */
    for (int64_t r = 0; r < G; r++) {
        float *o = o0 + r * D, M = -INFINITY, L = 0;
        for (int64_t c = 0; c < pl->split; c++) M = fmaxf(M, first[c * pl->slot_floats + r]);
        memset(o, 0, (size_t)D * sizeof(float));
        if (M == -INFINITY) continue;
        for (int64_t c = 0; c < pl->split; c++) {
            const float *slot = first + c * pl->slot_floats, m = slot[r], l = slot[G + r];
            if (m == -INFINITY) continue;
            const float w = expf(m - M), *acc = slot + 2 * G + r * D;
            L += w * l;
            for (int64_t d = 0; d < D; d++) o[d] += w * acc[d];
        }
        const float inv = 1.0f / L;
        for (int64_t d = 0; d < D; d++) o[d] *= inv;
    }
}

attn_status attn_decode_forward(const attn_exec *x, const attn_shape *s, int64_t split,
                                const float *q, const float *k, const float *v, float *out,
                                void *workspace)
{
    const dplan pl = make_dplan(x, s, split);
    const attn_kernel_set *ks = x->ks;
    const int64_t S = s->S, D = s->D, G = pl.G;
    const size_t esz = attn_dtype_size(s->dtype);
    const bool dp = s->dtype == ATTN_BF16 && ks->decode.has_dpbf16() && attn_cpu_has_avx512bf16();
    float *slots = (float *)workspace + x->threads * pl.thread_floats;

#pragma omp parallel num_threads(x->threads)
    {
        float *qs = (float *)workspace + omp_get_thread_num() * pl.thread_floats;
        float *scratch = qs + round_up(G * D);
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < pl.tasks; task++) {
            const int64_t bg = task / pl.split, c = task % pl.split;
            const int64_t j0 = c * S / pl.split, j1 = (c + 1) * S / pl.split;
            const int64_t qrow = bg / s->Hkv * s->H + bg % s->Hkv * G; /* first of G rows */
            const char *qh = (const char *)q + (size_t)(qrow * D) * esz;
            ks->convert.to_f32((int)s->dtype, qh, qs, G * D);
            ks->math.vscale(qs, G * D, (float)s->scale);
            float *slot = slots + task * pl.slot_floats, *m = slot, *l = slot + G;
            for (int64_t r = 0; r < G; r++) m[r] = -INFINITY, l[r] = 0;
            memset(slot + 2 * G, 0, (size_t)(G * D) * sizeof(float));
            const size_t kv0 = (size_t)((bg * S + j0) * D) * esz;
            ks->decode.chunk((int)s->dtype, qs, dp ? (const uint16_t *)qh : NULL, (float)s->scale,
                             G, D, (const char *)k + kv0, (const char *)v + kv0, j1 - j0, m, l,
                             slot + 2 * G, scratch);
        }
#pragma omp for schedule(static)
        for (int64_t bg = 0; bg < s->B * s->Hkv; bg++) merge(s, &pl, slots, bg, out);
    }
    return ATTN_OK;
}

size_t attn_widen_bytes(const attn_shape *s)
{
    if (s->dtype == ATTN_F32) return 0;
    return sizeof(float) * (size_t)(round_up(attn_q_elems(s)) + 2 * round_up(attn_kv_elems(s)));
}

/* n elements of src (dtype t) into dst, in pieces over the threads. */
static void widen_one(const attn_exec *x, const attn_shape *s, const void *src, float *dst,
                      int64_t n)
{
    enum { PIECE = 1 << 16 };
    const size_t esz = attn_dtype_size(s->dtype);
#pragma omp parallel for schedule(static) num_threads(x->threads)
    for (int64_t i = 0; i < n; i += PIECE)
        x->ks->convert.to_f32((int)s->dtype, (const char *)src + (size_t)i * esz, dst + i,
                              min64(PIECE, n - i));
}

void *attn_widen(const attn_exec *x, const attn_shape *s, const float **q, const float **k,
                 const float **v, void *workspace)
{
    if (s->dtype == ATTN_F32) return workspace;
    float *wq = workspace, *wk = wq + round_up(attn_q_elems(s)),
          *wv = wk + round_up(attn_kv_elems(s));
    widen_one(x, s, *q, wq, attn_q_elems(s));
    widen_one(x, s, *k, wk, attn_kv_elems(s));
    widen_one(x, s, *v, wv, attn_kv_elems(s));
    *q = wq, *k = wk, *v = wv;
    return wv + round_up(attn_kv_elems(s));
}
