/*
 * linear_reference.c — the float64 definition of linear attention (attention/linear.c): the
 * explicit normalised kernel matrix with the features of attn_fm f (W already drawn):
 *   out_i = Σ_j κ(q_i, k_j) v_j / Σ_j κ(q_i, k_j),  κ(q, k) = φ(q)·φ(k)   over the keys row i
 *   sees (all, or j <= i + S - T when causal); 0 when the sum is <= 0; trig's sum floored at
 *   den_floor·m·Σ_j w_j (its Cauchy–Schwarz bound; w_j = |φ(k_j)|/sqrt(m)), as forward does.
 * Per (b, kv head): key features E [S, M] with a shift over all keys of the head (favor: per
 * feature; trig: key weights wgt [S]). Per row: query features ψ, κ_j = ψ·E_j over the visible
 * keys. When that shift leaves a row's visible keys below float64 range (causal rows far below
 * later keys), the row is redone with its own shift in log space (exact_row).
 *   time O(S·M·D) per (b, kv head) met + O(S·(M+D)) per row;  memory S·M doubles (malloc).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "feature_maps.h"

typedef struct ref_ctx {
    attn_fm f;
    const attn_shape *s;
    double *E, *wgt, *beta; /* [S, M], [S], [M] */
    double *raw, *psi;      /* [max(m, D)], [M] */
    double *lam, *sig;      /* [S] each: exact_row's log-weights and signs */
} ref_ctx;

static void ref_head(ref_ctx *c, const float *kg)
{
    const attn_fm *f = &c->f;
    const int64_t S = c->s->S, D = c->s->D, M = f->M, m = f->m;
    for (int64_t j = 0; j < S; j++) {
        double *e = c->E + j * M;
        attn_fm_raw64(f, kg + j * D, e, &c->wgt[j]); /* favor, trig: W y, and h in wgt */
        if (f->map == ATTN_FM_FAVOR)
            for (int64_t l = 0; l < m; l++) e[l] -= c->wgt[j];
    }
    if (f->map == ATTN_FM_FAVOR) {
        for (int64_t l = 0; l < M; l++) c->beta[l] = -INFINITY;
        for (int64_t j = 0; j < S; j++)
            for (int64_t l = 0; l < M; l++) c->beta[l] = fmax(c->beta[l], c->E[j * M + l]);
        for (int64_t j = 0; j < S; j++)
            for (int64_t l = 0; l < M; l++) c->E[j * M + l] = exp(c->E[j * M + l] - c->beta[l]);
    } else if (f->map == ATTN_FM_TRIG) {
        double hmax = -INFINITY;
        for (int64_t j = 0; j < S; j++) hmax = fmax(hmax, c->wgt[j]);
        for (int64_t j = 0; j < S; j++) {
            double *e = c->E + j * M;
            c->wgt[j] = exp(c->wgt[j] - hmax);
            for (int64_t l = 0; l < m; l++) {
                const double u = e[l];
                e[l] = c->wgt[j] * sin(u), e[m + l] = c->wgt[j] * cos(u);
            }
        }
    }
}

/* The query's features against the head's shift (psi), from its raw pieces. */
static void ref_query(ref_ctx *c, const float *qi, bool with_shift)
{
    const attn_fm *f = &c->f;
    const int64_t M = f->M, m = f->m;
    double h;
    attn_fm_raw64(f, qi, attn_fm_shifted(f) ? c->raw : c->psi, &h);
    if (f->map == ATTN_FM_FAVOR && with_shift) {
        double amax = -INFINITY;
        for (int64_t l = 0; l < M; l++) amax = fmax(amax, c->raw[l] + c->beta[l]);
        for (int64_t l = 0; l < M; l++) c->psi[l] = exp(c->raw[l] + c->beta[l] - amax);
    } else if (f->map == ATTN_FM_TRIG) {
        for (int64_t l = 0; l < m; l++) c->psi[l] = sin(c->raw[l]), c->psi[m + l] = cos(c->raw[l]);
    }
}

/* Row with its own shift: favor κ_j = Σ_l exp(a_l + b_jl - h_j - shift) via a log-sum-exp per
 * key; trig κ_j = exp(h_j - shift) ψ·(sin, cos)(W y_j). Sums into num [D], den, nsum. */
static void exact_row(ref_ctx *c, const float *qi, const float *kg, const float *vg, int64_t sees,
                      double *num, double *den, double *nsum)
{
    const attn_fm *f = &c->f;
    const int64_t D = c->s->D, m = f->m;
    double *a = c->psi + f->M, *kraw = c->E; /* psi has room: see attn_fm_reference */
    ref_query(c, qi, false);
    memcpy(a, c->raw, (size_t)m * sizeof(double));
    double shift = -INFINITY;
    for (int64_t j = 0; j < sees; j++) {
        double h;
        attn_fm_raw64(f, kg + j * D, kraw, &h);
        if (f->map == ATTN_FM_FAVOR) {
            double mx = -INFINITY, sum = 0;
            for (int64_t l = 0; l < m; l++) mx = fmax(mx, a[l] + kraw[l]);
            for (int64_t l = 0; l < m; l++) sum += exp(a[l] + kraw[l] - mx);
            c->lam[j] = mx + log(sum) - h, c->sig[j] = 1;
        } else {
            double dot = 0;
            for (int64_t l = 0; l < m; l++)
                dot += c->psi[l] * sin(kraw[l]) + c->psi[m + l] * cos(kraw[l]);
            c->lam[j] = h, c->sig[j] = dot;
        }
        shift = fmax(shift, c->lam[j]);
    }
    *den = *nsum = 0;
    memset(num, 0, (size_t)D * sizeof(double));
    for (int64_t j = 0; j < sees; j++) {
        const double w = exp(c->lam[j] - shift), kappa = w * c->sig[j];
        for (int64_t d = 0; d < D; d++) num[d] += kappa * vg[j * D + d];
        *den += kappa, *nsum += w;
    }
}

attn_status attn_fm_reference(const attn_fm *f, double den_floor, const attn_shape *s,
                              const float *q, const float *k, const float *v, const int64_t *rows,
                              int64_t nrows, double *out)
{
    ref_ctx c = {.f = *f, .s = s};
    const int64_t S = s->S, T = s->T, D = s->D, M = c.f.M, m = c.f.m;
    const int64_t group = s->H / s->Hkv, width = (m > D ? m : D) + 1;
    c.E = malloc((size_t)(S * M + width) * sizeof(double));
    c.wgt = malloc((size_t)S * sizeof(double)), c.beta = malloc((size_t)M * sizeof(double));
    c.raw = malloc((size_t)width * sizeof(double));
    c.psi = malloc((size_t)(M + width) * sizeof(double));
    c.lam = malloc((size_t)S * sizeof(double)), c.sig = malloc((size_t)S * sizeof(double));
    attn_status st = ATTN_EFAIL;
    if (!c.E || !c.wgt || !c.beta || !c.raw || !c.psi || !c.lam || !c.sig) goto done;
    int64_t cached = -1;
    for (int64_t r = 0; r < nrows; r++) {
        const int64_t i = rows[r] % T, bh = rows[r] / T, b = bh / s->H, h = bh % s->H;
        const int64_t bg = b * s->Hkv + h / group, sees = attn_causal_keys(s, i);
        const float *kg = k + bg * S * D, *vg = v + bg * S * D, *qi = q + rows[r] * D;
        double *num = out + r * D, den = 0, nsum = 0;
        if (bg != cached) ref_head(&c, kg), cached = bg;
        ref_query(&c, qi, true);
        memset(num, 0, (size_t)D * sizeof(double));
        for (int64_t j = 0; j < sees; j++) {
            double kappa = 0;
            for (int64_t l = 0; l < M; l++) kappa += c.psi[l] * c.E[j * M + l];
            for (int64_t d = 0; d < D; d++) num[d] += kappa * vg[j * D + d];
            den += kappa, nsum += c.f.map == ATTN_FM_TRIG ? c.wgt[j] : 0;
        }
        const double tiny = 1e-280;
        if (sees > 0 && ((c.f.map == ATTN_FM_FAVOR && den < tiny) ||
                         (c.f.map == ATTN_FM_TRIG && nsum < tiny))) {
            exact_row(&c, qi, kg, vg, sees, num, &den, &nsum);
            cached = -1; /* exact_row used E as scratch */
        }
        if (c.f.map == ATTN_FM_TRIG) den = fmax(den, den_floor * (double)m * nsum);
        for (int64_t d = 0; d < D; d++) num[d] = den > 0 ? num[d] / den : 0;
    }
    st = ATTN_OK;
done:
    free(c.E), free(c.wgt), free(c.beta), free(c.raw), free(c.psi);
    free(c.lam), free(c.sig);
    return st;
}
