/*
 * linear_reference.c — the float64 definition of linear attention (attention/kinds/linear.c): the
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

/* ---- gradients (float64) ----
 * The same function without shifts (they cancel): φ(x) = exp(W x' - |x'|²/2) (favor, x' =
 * sqrt(scale)·x), keys exp(|y'|²/2)·(sin, cos)(W y') and queries (sin, cos)(W x') (trig: the
 * query's weight cancels, in the floor too), elu(x) + 1, max(x, 0); the 1/sqrt(m) factors
 * cancel. Per row: κ_j = φ(q)·φ(k_j), o = Σ κ_j v_j / den, den = Σ κ_j (trig: floored at
 * F·m·Σ_j exp(|y_j'|²/2) when below), g = dout / den, gden = -dout·o / den:
 *   dv_j += κ_j g,  dκ_j = g·v_j + gden (0 when floored),  dφ(q) = Σ dκ_j φ(k_j),
 *   dφ(k_j) += dκ_j φ(q);  a floored row adds gden·F·m to each seen key's exp(|y'|²/2);
 * then through φ: favor dx = sqrt(scale) Σ_l dφ_l φ_l w_l - scale·x Σ_l dφ_l φ_l; trig
 * du_l = dφ_l φ_(m+l) - dφ_(m+l) φ_l, dx = sqrt(scale) Σ_l du_l w_l (+ scale·x·dh for keys,
 * dh = Σ_l dφ_l φ_l + the floor's share); elu dφ·(x > 0 ? 1 : e^x); relu dφ·[x > 0].
 * time O(B·H·T·S·M + (B·H·T + B·Hkv·S)·M·D); memory 2·S·M + 2·S doubles per call. */

/* φ(x) [M] of a key or query, and exp(|x'|²/2) (trig keys' weight, else 1). */
static double features64(const attn_fm *f, const float *x, bool key, double *phi, double *raw)
{
    const int64_t m = f->m;
    double h;
    attn_fm_raw64(f, x, attn_fm_shifted(f) ? raw : phi, &h);
    if (f->map == ATTN_FM_FAVOR)
        for (int64_t l = 0; l < m; l++) phi[l] = exp(raw[l] - h);
    if (f->map != ATTN_FM_TRIG) return 1;
    const double w = key ? exp(h) : 1;
    for (int64_t l = 0; l < m; l++) phi[l] = w * sin(raw[l]), phi[m + l] = w * cos(raw[l]);
    return w;
}

/* dx [D] from dφ [M] (dh_extra: trig keys' extra gradient of their log-weight). */
static void features64_backward(const attn_fm *f, const float *x, bool key, const double *phi,
                                const double *dphi, double dh_extra, double *dx)
{
    const int64_t D = f->D, m = f->m;
    if (!attn_fm_shifted(f)) {
        for (int64_t d = 0; d < D; d++)
            dx[d] = x[d] > 0 ? dphi[d] : (f->map == ATTN_FM_ELU ? dphi[d] * phi[d] : 0);
        return;
    }
    const double root = sqrt(f->scale);
    double dh = 0;
    memset(dx, 0, (size_t)D * sizeof *dx);
    for (int64_t l = 0; l < m; l++) {
        double du = dphi[l] * phi[l];
        dh += du;
        if (f->map == ATTN_FM_TRIG) {
            dh += dphi[m + l] * phi[m + l];
            du = dphi[l] * phi[m + l] - dphi[m + l] * phi[l];
        }
        for (int64_t d = 0; d < D; d++) dx[d] += root * du * (double)f->W[l * D + d];
    }
    if (f->map == ATTN_FM_FAVOR) dh = -dh; /* favor: φ = exp(u - h) */
    else if (key) dh += dh_extra;          /* trig keys: φ = exp(h)·(sin, cos) */
    else dh = 0;                           /* trig queries carry no weight */
    for (int64_t d = 0; d < D; d++) dx[d] += f->scale * (double)x[d] * dh;
}

/* One query row against the first `sees` keys of its KV head (features E, weights wk): its dq,
 * and its shares of dE, dv, dwk (the floor's). */
static void row_backward64(const attn_fm *f, double den_floor, const attn_shape *s, const float *qi,
                           const float *go, const float *vg, int64_t sees, const double *E,
                           const double *wk, double *dE, double *dwk, double *dv, double *dqi,
                           double *scratch)
{
    const int64_t D = s->D, M = f->M;
    double *psi = scratch, *raw = psi + M, *dpsi = raw + M + D, *kappa = dpsi + M;
    double *o = kappa + sees, den = 0, nsum = 0;
    memset(dqi, 0, (size_t)D * sizeof *dqi);
    if (sees <= 0) return;
    features64(f, qi, false, psi, raw);
    memset(o, 0, (size_t)D * sizeof *o);
    for (int64_t j = 0; j < sees; j++) {
        kappa[j] = 0;
        for (int64_t l = 0; l < M; l++) kappa[j] += psi[l] * E[j * M + l];
        for (int64_t d = 0; d < D; d++) o[d] += kappa[j] * vg[j * D + d];
        den += kappa[j], nsum += wk[j];
    }
    const double floor_ = den_floor * (double)f->m * nsum;
    const bool floored = f->map == ATTN_FM_TRIG && den <= floor_;
    if (floored) den = floor_;
    if (den <= 0) return; /* a zero row */
    double gden = 0;
    for (int64_t d = 0; d < D; d++) o[d] /= den, gden -= (double)go[d] * o[d] / den;
    memset(dpsi, 0, (size_t)M * sizeof *dpsi);
    for (int64_t j = 0; j < sees; j++) {
        double dk = floored ? 0 : gden;
        for (int64_t d = 0; d < D; d++) {
            dk += (double)go[d] / den * (double)vg[j * D + d];
            dv[j * D + d] += kappa[j] * (double)go[d] / den;
        }
        for (int64_t l = 0; l < M; l++) dpsi[l] += dk * E[j * M + l], dE[j * M + l] += dk * psi[l];
        if (floored) dwk[j] += gden * den_floor * (double)f->m;
    }
    features64_backward(f, qi, false, psi, dpsi, 0, dqi);
}

attn_status attn_fm_reference_backward(const attn_fm *f, double den_floor, const attn_shape *s,
                                       const float *q, const float *k, const float *v,
                                       const float *dout, double *dq, double *dk, double *dv)
{
    const int64_t S = s->S, T = s->T, D = s->D, M = f->M, group = s->H / s->Hkv;
    double *E = malloc((size_t)(S * M) * sizeof *E), *dE = malloc((size_t)(S * M) * sizeof *dE);
    double *wk = malloc((size_t)S * sizeof *wk), *dwk = malloc((size_t)S * sizeof *dwk);
    double *scratch = malloc((size_t)(4 * M + 2 * D + S + 1) * sizeof *scratch);
    attn_status st = ATTN_EFAIL;
    if (!E || !dE || !wk || !dwk || !scratch) goto done;
    for (int64_t bg = 0; bg < s->B * s->Hkv; bg++) {
        const float *kg = k + bg * S * D, *vg = v + bg * S * D;
        double *dkg = dk + bg * S * D, *dvg = dv + bg * S * D;
        memset(dE, 0, (size_t)(S * M) * sizeof *dE);
        memset(dwk, 0, (size_t)S * sizeof *dwk);
        memset(dvg, 0, (size_t)(S * D) * sizeof *dvg);
        for (int64_t j = 0; j < S; j++) wk[j] = features64(f, kg + j * D, true, E + j * M, scratch);
        const int64_t b = bg / s->Hkv, h0 = bg % s->Hkv * group;
        for (int64_t h = h0; h < h0 + group; h++)
            for (int64_t i = 0; i < T; i++) {
                const int64_t row = (b * s->H + h) * T + i;
                row_backward64(f, den_floor, s, q + row * D, dout + row * D, vg,
                               attn_causal_keys(s, i), E, wk, dE, dwk, dvg, dq + row * D, scratch);
            }
        for (int64_t j = 0; j < S; j++)
            features64_backward(f, kg + j * D, true, E + j * M, dE + j * M, dwk[j] * wk[j],
                                dkg + j * D);
    }
    st = ATTN_OK;
done:
    free(E), free(dE), free(wk), free(dwk), free(scratch);
    return st;
}
