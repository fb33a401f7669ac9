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

/* attn_softmax_reference_row over values of type VT (float, or a kind's float64 values). */
#define SOFTMAX_REFERENCE_ROW(NAME, VT)                                                            \
    void NAME(const double *score, int64_t n, const VT *v, int64_t D, double *out)                 \
    {                                                                                              \
        double mx = -INFINITY, sum = 0;                                                            \
        for (int64_t j = 0; j < n; j++) mx = score[j] > mx ? score[j] : mx;                        \
        memset(out, 0, (size_t)D * sizeof *out);                                                   \
        if (mx == -INFINITY) return; /* no allowed key */                                          \
        for (int64_t j = 0; j < n; j++) {                                                          \
            if (score[j] == -INFINITY) continue;                                                   \
            const double w = exp(score[j] - mx);                                                   \
            sum += w;                                                                              \
            for (int64_t d = 0; d < D; d++) out[d] += w * (double)v[j * D + d];                    \
        }                                                                                          \
        for (int64_t d = 0; d < D; d++) out[d] /= sum;                                             \
    }
SOFTMAX_REFERENCE_ROW(attn_softmax_reference_row, float)
SOFTMAX_REFERENCE_ROW(attn_softmax_reference_row64, double)

static bool key_allowed(const attn_ops *ops, const attn_shape *s, const attn_params *p, int64_t h,
                        int64_t i, int64_t j)
{
    if (ops && ops->allows) return ops->allows(ops, s, p, h, i, j);
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
                               ? ops->reference(ops, s, &given, q, k, v, rows, nrows, out)
                               : attn_masked_reference(ops, s, &given, q, k, v, rows, nrows, out);
    attn_weights_free(owned);
    return st;
}

/* ---- gradients (the derivative of softmax_reference) ----
 * Per row r (query i of head h, KV head g), with the scores s_j of the allowed keys (modified:
 * u_j = scale·q·k_j, c_j = C·tanh(u_j / C) when softcapped, s_j = c_j - ALiBi bias):
 *   P_j = softmax(s)_j,  o = Σ_j P_j v_j,  dP_j = dout·v_j,  Δ = Σ_j P_j dP_j (= dout·o),
 *   dS_j = P_j (dP_j - Δ) · ds_j/du_j  (1 - (c_j / C)² with softcap, else 1),
 *   dq_r += scale Σ_j dS_j k_j,  dk_j += scale dS_j q_r,  dv_j += P_j dout_r.
 */

/* Scores of row (b, h, i) in score[], their derivative ds/du in slope[], -inf where masked. */
static void row_scores(const attn_ops *ops, const attn_score_mod *mod, const attn_shape *s,
                       const attn_params *p, const double *qi, const float *kg, int64_t h,
                       int64_t i, double *score, double *slope)
{
    const int64_t S = s->S, D = s->D;
    for (int64_t j = 0; j < S; j++) {
        slope[j] = 1;
        if (!key_allowed(ops, s, p, h, i, j)) {
            score[j] = -INFINITY;
            continue;
        }
        double u = 0;
        for (int64_t d = 0; d < D; d++) u += qi[d] * (double)kg[j * D + d];
        u *= s->scale;
        if (mod->softcap > 0) {
            const double t = tanh(u / mod->softcap);
            slope[j] = 1 - t * t;
        }
        score[j] = attn_score_mod_apply(mod, u, h, i, j);
    }
}

/* Probabilities in place of the scores (zeros when no key is allowed); false when none is. */
static bool row_softmax(double *score, int64_t n)
{
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < n; j++) mx = score[j] > mx ? score[j] : mx;
    if (mx == -INFINITY) return false;
    for (int64_t j = 0; j < n; j++) {
        score[j] = score[j] == -INFINITY ? 0 : exp(score[j] - mx);
        sum += score[j];
    }
    for (int64_t j = 0; j < n; j++) score[j] /= sum;
    return true;
}

attn_status attn_masked_reference_backward(const attn_ops *ops, const attn_shape *s,
                                           const attn_params *p, const float *q, const float *k,
                                           const float *v, const float *dout, double *dq,
                                           double *dk, double *dv)
{
    const int64_t n = attn_q_elems(s);
    double *q64 = malloc((size_t)n * sizeof *q64);
    if (!q64) return ATTN_EFAIL;
    for (int64_t e = 0; e < n; e++) q64[e] = q[e];
    const attn_status st =
        attn_softmax_reference_backward64(ops, s, p, q64, k, v, dout, dq, dk, dv);
    free(q64);
    return st;
}

attn_status attn_softmax_reference_backward64(const attn_ops *ops, const attn_shape *s,
                                              const attn_params *p, const double *q, const float *k,
                                              const float *v, const float *dout, double *dq,
                                              double *dk, double *dv)
{
    const int64_t T = s->T, S = s->S, D = s->D, group = s->H / s->Hkv;
    const attn_score_mod mod = mods_of(ops, s, p);
    double *P = malloc((size_t)S * sizeof *P), *slope = malloc((size_t)S * sizeof *slope);
    double *dP = malloc((size_t)S * sizeof *dP);
    if (!P || !slope || !dP) {
        free(P), free(slope), free(dP);
        return ATTN_EFAIL;
    }
    memset(dq, 0, (size_t)attn_q_elems(s) * sizeof *dq);
    memset(dk, 0, (size_t)attn_kv_elems(s) * sizeof *dk);
    memset(dv, 0, (size_t)attn_kv_elems(s) * sizeof *dv);
    for (int64_t row = 0; row < s->B * s->H * T; row++) {
        const int64_t i = row % T, bh = row / T, b = bh / s->H, h = bh % s->H;
        const int64_t kv = (b * s->Hkv + h / group) * S * D;
        const double *qi = q + row * D;
        const float *go = dout + row * D;
        row_scores(ops, &mod, s, p, qi, k + kv, h, i, P, slope);
        if (!row_softmax(P, S)) continue; /* no key: out is 0 whatever q, k, v */
        double delta = 0;
        for (int64_t j = 0; j < S; j++) {
            dP[j] = 0;
            if (P[j] == 0) continue;
            for (int64_t d = 0; d < D; d++) dP[j] += (double)go[d] * (double)v[kv + j * D + d];
            delta += P[j] * dP[j];
        }
        for (int64_t j = 0; j < S; j++) {
            if (P[j] == 0) continue;
            const double ds = P[j] * (dP[j] - delta) * slope[j] * s->scale;
            double *dkj = dk + kv + j * D, *dvj = dv + kv + j * D;
            for (int64_t d = 0; d < D; d++) {
                dq[row * D + d] += ds * (double)k[kv + j * D + d];
                dkj[d] += ds * qi[d];
                dvj[d] += P[j] * (double)go[d];
            }
        }
    }
    free(P), free(slope), free(dP);
    return ATTN_OK;
}
