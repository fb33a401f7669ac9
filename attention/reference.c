/*
 * reference.c — exact attention in float64, the yardstick for tests and accuracy.
 *   For each requested row r = (b*H + h)*T + i:
 *     s_j   = scale * <q[b,h,i,:], k[b,g,j,:]>      for keys j allowed (g = h / (H/Hkv)),
 *             then the kind's score modifiers (softcap, ALiBi: score_mod.h) when it has them
 *     out_r = sum_j softmax(s)_j * v[b,g,j,:]       (zeros when no key is allowed)
 *   time O(rows · S · D), memory: one row of S doubles (malloc: references may allocate).
 * Allowed keys: ops->allows when the kind has one (plus nothing else), else the causal rule
 * alone (ops == NULL: exact full attention). attn_exact_reference: every key the causal rule
 * allows, with the kind's score modifiers — the accuracy yardstick (rel_err) of every kind.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "score_mod.h"

void attn_softmax_reference_row(const double *score, int64_t n, const float *v, int64_t D,
                                double *out)
{
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < n; j++) mx = score[j] > mx ? score[j] : mx;
    memset(out, 0, (size_t)D * sizeof *out);
    if (mx == -INFINITY) return; /* no allowed key */
    for (int64_t j = 0; j < n; j++) {
        if (score[j] == -INFINITY) continue;
        const double w = exp(score[j] - mx);
        sum += w;
        for (int64_t d = 0; d < D; d++) out[d] += w * (double)v[j * D + d];
    }
    for (int64_t d = 0; d < D; d++) out[d] /= sum;
}

static bool key_allowed(const attn_ops *ops, const attn_shape *s, const attn_params *p, int64_t h,
                        int64_t i, int64_t j)
{
    if (ops && ops->allows) return ops->allows(s, p, h, i, j);
    return attn_causal_allows(s, i, j);
}

/* Softmax attention over the keys mask allows (NULL: the causal rule alone), scores modified by
 * mod. */
static attn_status softmax_reference(const attn_ops *ops, const attn_score_mod mod,
                                     const attn_shape *s, const attn_params *p, const float *q,
                                     const float *k, const float *v, const int64_t *rows,
                                     int64_t nrows, double *out)
{
    const int64_t T = s->T, S = s->S, D = s->D, group = s->H / s->Hkv;
    const bool modified = attn_score_mod_on(&mod);
    double *score = malloc((size_t)S * sizeof *score);
    if (score == NULL) return ATTN_EFAIL;
    for (int64_t r = 0; r < nrows; r++) {
        const int64_t i = rows[r] % T, bh = rows[r] / T, b = bh / s->H, h = bh % s->H;
        const int64_t g = h / group;
        const float *qi = q + rows[r] * D;
        const float *kg = k + (b * s->Hkv + g) * S * D, *vg = v + (b * s->Hkv + g) * S * D;
        double *o = out + r * D;

        /* scores of allowed keys (-inf for the others), then their softmax over v */
        for (int64_t j = 0; j < S; j++) {
            if (!key_allowed(ops, s, p, h, i, j)) {
                score[j] = -INFINITY;
                continue;
            }
            double dot = 0;
            for (int64_t d = 0; d < D; d++) dot += (double)qi[d] * (double)kg[j * D + d];
            score[j] = dot * s->scale;
            if (modified) score[j] = attn_score_mod_apply(&mod, score[j], h, i, j);
        }
        attn_softmax_reference_row(score, S, vg, D, o);
    }
    free(score);
    return ATTN_OK;
}

/* The modifiers of ops's parameters p (none when ops is NULL or has none). */
static attn_score_mod mods_of(const attn_ops *ops, const attn_shape *s, const attn_params *p)
{
    const attn_score_mod none = {.H = s->H};
    return ops ? attn_score_mod_of(&ops->params, p, s) : none;
}

attn_status attn_masked_reference(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                  const float *q, const float *k, const float *v,
                                  const int64_t *rows, int64_t nrows, double *out)
{
    return softmax_reference(ops, mods_of(ops, s, p), s, p, q, k, v, rows, nrows, out);
}

attn_status attn_exact_reference(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                 const float *q, const float *k, const float *v,
                                 const int64_t *rows, int64_t nrows, double *out)
{
    return softmax_reference(NULL, mods_of(ops, s, p), s, p, q, k, v, rows, nrows, out);
}

attn_status attn_kind_reference(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                const float *q, const float *k, const float *v, const int64_t *rows,
                                int64_t nrows, double *out)
{
    attn_params given = *p;
    float *owned[ATTN_MAX_WEIGHTS];
    if (attn_weights_draw(ops, s, &given, owned, NULL, 0) != ATTN_OK) return ATTN_EFAIL;
    const attn_status st = ops->reference
                               ? ops->reference(s, &given, q, k, v, rows, nrows, out)
                               : attn_masked_reference(ops, s, &given, q, k, v, rows, nrows, out);
    attn_weights_free(owned);
    return st;
}
