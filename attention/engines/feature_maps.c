/*
 * feature_maps.c — the feature maps φ of linear attention, each from its paper.
 *   x = sqrt(scale)·q, y = sqrt(scale)·k for the random maps (scale = 1/sqrt(D) by default), so
 *   that favor and trig estimate the softmax kernel exp(q·k·scale); elu and relu see q, k as
 *   they are (the scale does not enter, as in their paper). The projections W [m, D] are the
 *   rows w_l below as drawn (attn_fm_draw) or given (linear's weight `features`), unscaled:
 *   W x = sqrt(scale)·W q is one sgemm with alpha sqrt(scale).
 *
 *   elu    φ(x) = elu(x) + 1 = x + 1 (x > 0), exp(x) (x <= 0), elementwise; M = D.
 *          Katharopoulos et al. 2020, "Transformers are RNNs", eq. 7.
 *   relu   φ(x) = max(x, 0) elementwise; M = D. A common scale of q or k would cancel anyway.
 *   favor  Performer FAVOR+, Choromanski et al. 2021, "Rethinking Attention with Performers",
 *          Lemma 1: positive random features, E[φ(x)·φ(y)] = exp(x·y),
 *            φ(x) = exp(-|x|²/2) / sqrt(m) · (exp(w_1·x), ..., exp(w_m·x));  M = m.
 *          w_l orthogonal random features (their section 2.4): blocks of D rows made orthonormal
 *          (Gram–Schmidt of a Gaussian D×D matrix, in float64), each row rescaled to the norm of
 *          an independent N(0, I_D) draw, so every w_l is N(0, I_D) and rows of a block are
 *          exactly orthogonal.
 *   trig   Random Fourier features as in RFA, Peng et al. 2021, "Random Feature Attention",
 *          eq. 3-4 (Rahimi & Recht 2007): w_l ~ N(0, I_D) i.i.d.,
 *            φ(x) = exp(|x|²/2) / sqrt(m) · (sin(w_1·x), ..., sin(w_m·x), cos(w_1·x), ...,
 * cos(w_m·x)) E[φ(x)·φ(y)] = exp(|x|²/2 + |y|²/2) · exp(-|x-y|²/2) = exp(x·y);  M = 2m. RFA
 *          normalises q and k so that the exp(|x|²/2) factors are constant; here they are kept so
 *          trig estimates the same kernel as favor. Its features, and φ(q)·φ(k), can be negative.
 *
 * What is computed (the stabiliser). Factors constant per query row or per head cancel in the
 * normalised attention, so they are dropped or moved, exactly (Performer's shift by a maximum,
 * refined so that nothing underflows when a row sees all keys summed):
 *   favor  keys    φ_l(y) = exp(w_l·y - |y|²/2 - c_l),  c_l = max over the keys summed so far
 *          queries ψ_l(x) = exp(w_l·x + c_l - A),      A = max_l (w_l·x + c_l)
 *          ψ(x)·φ(y) = m·exp(|x|²/2 - A)·φ_FAVOR(x)·φ_FAVOR(y): a constant per query row. The
 *          largest query feature is 1 and every feature l has a key with φ_l = 1, so a row
 *          that sees every key summed has ψ·Σφ >= 1.
 *   trig   keys    φ(y) = exp(|y|²/2 - c) · (sin W y, cos W y),  c = max |y|²/2 so far
 *          queries ψ(x) = (sin W x, cos W x)                     (|ψ| = sqrt(m))
 * When more keys raise c, sums taken with the old c are rescaled by exp(c_old - c_new).
 * Flops: 2 per multiply-add of the projection W x (favor, trig) and of the squared norms of keys,
 * plus 1 per feature value (its exp, sin, cos, max or elu) — see attn_fm_flops.
 * Loops: the projections by sgemm; the elementwise maps, favor's shifted exponentials, trig's
 * (sin, cos) pairs and the gradients' row loops by the feature map's kernel set (f->ks->linear,
 * kernels/linear_body.h: one body for the portable, AVX2 and AVX-512 sets).
 */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "feature_maps.h"
#include "kernel_set.h"
#include "kernels.h"

const char *const attn_fm_names[] = {"elu", "relu", "favor", "trig", NULL};

attn_fm attn_fm_make(attn_fm_map map, int64_t D, int64_t m, double scale)
{
    attn_fm f = {.map = map, .D = D, .m = 0, .M = D, .scale = scale, .W = NULL};
    if (map == ATTN_FM_FAVOR) f.m = m, f.M = m;
    if (map == ATTN_FM_TRIG) f.m = m, f.M = 2 * m;
    return f;
}

int64_t attn_fm_w_floats(const attn_fm *f) { return f->m * f->D; }

size_t attn_fm_draw_bytes(const attn_fm *f)
{
    return f->map == ATTN_FM_FAVOR ? (size_t)(f->D * f->D) * sizeof(double) : 0;
}

void attn_fm_draw(const attn_fm *f, uint64_t seed, float *W, void *scratch)
{
    const int64_t D = f->D, m = f->m;
    uint64_t state = attn_rng_state(seed, 0);
    if (f->map == ATTN_FM_TRIG) {
        for (int64_t e = 0; e < m * D; e++) W[e] = (float)attn_rng_normal(&state);
        return;
    }
    if (f->map != ATTN_FM_FAVOR) return;
    double *G = scratch; /* one D×D block, rows made orthonormal one after the other */
    for (int64_t l0 = 0; l0 < m; l0 += D) {
        const int64_t rows = m - l0 < D ? m - l0 : D;
        for (int64_t e = 0; e < rows * D; e++) G[e] = attn_rng_normal(&state);
        for (int64_t r = 0; r < rows; r++) { /* modified Gram–Schmidt */
            double *g = G + r * D;
            for (int64_t r2 = 0; r2 < r; r2++) {
                const double *u = G + r2 * D;
                double dot = 0;
                for (int64_t d = 0; d < D; d++) dot += g[d] * u[d];
                for (int64_t d = 0; d < D; d++) g[d] -= dot * u[d];
            }
            double nrm = 0;
            for (int64_t d = 0; d < D; d++) nrm += g[d] * g[d];
            nrm = sqrt(nrm);
            for (int64_t d = 0; d < D; d++) g[d] = nrm > 0 ? g[d] / nrm : 0;
        }
        for (int64_t r = 0; r < rows; r++) { /* length of an independent N(0, I_D) vector */
            double len = 0;
            for (int64_t d = 0; d < D; d++) {
                double z = attn_rng_normal(&state);
                len += z * z;
            }
            len = sqrt(len);
            for (int64_t d = 0; d < D; d++) W[(l0 + r) * D + d] = (float)(len * G[r * D + d]);
        }
    }
}

/* ---- float32 features of row blocks ---- */

/* phi = elu(x) + 1 or max(x, 0), rows of x [n, D] into phi [n, D] (kernel set's slots). */
static void elementwise(const attn_fm *f, const float *restrict x, int64_t n, float *restrict phi)
{
    if (f->map == ATTN_FM_RELU) f->ks->linear.relu(x, phi, n * f->D);
    else f->ks->linear.elu1(x, phi, n * f->D);
}

/* out [n, ld] columns 0..m) = sqrt(scale) · x Wᵀ (the scale folded into sgemm's alpha). */
static void project(const attn_fm *f, const float *x, int64_t n, float *out, int64_t ld)
{
    const float root = (float)sqrt(f->scale);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)f->m, (int)f->D, root, x,
                (int)f->D, f->W, (int)f->D, 0.0f, out, (int)ld);
}

static float half_sq_norm(const attn_fm *f, const float *x)
{
    float s = 0;
    for (int64_t d = 0; d < f->D; d++) s += x[d] * x[d];
    return 0.5f * (float)f->scale * s;
}

/* (sin u, cos u) of the m projections in row[0..m) into row[0..m) and row[m..2m), times wt. */
static void sincos_row(const attn_fm *f, float *row, int64_t m, float wt)
{
    f->ks->linear.sincos(row, m, wt);
}

void attn_fm_keys(const attn_fm *f, const float *k, int64_t n, const float *c, float *c_new,
                  float *phi, float *w, float *raw)
{
    const int64_t D = f->D, M = f->M, m = f->m;
    if (!attn_fm_shifted(f)) {
        elementwise(f, k, n, phi);
        return;
    }
    project(f, k, n, phi, M);
    if (f->map == ATTN_FM_FAVOR) {
        /* log-features b = W y - |y|²/2, their maxima per feature, then exp(b - c_new) */
        const attn_ks_linear *ks = &f->ks->linear;
        for (int64_t l = 0; l < M; l++) c_new[l] = c ? c[l] : -INFINITY;
        for (int64_t j = 0; j < n; j++) {
            float *row = phi + j * M;
            ks->sub_max(row, half_sq_norm(f, k + j * D), c_new, M);
            if (raw) memcpy(raw + j * (m + 1), row, (size_t)m * sizeof(float));
        }
        for (int64_t j = 0; j < n; j++) ks->exp_sub(phi + j * M, c_new, phi + j * M, M);
        return;
    }
    /* trig: weights exp(|y|²/2 - c_new), one shift for all features */
    float cmax = c ? c[0] : -INFINITY;
    for (int64_t j = 0; j < n; j++) {
        w[j] = half_sq_norm(f, k + j * D);
        cmax = w[j] > cmax ? w[j] : cmax;
        if (raw) {
            memcpy(raw + j * (m + 1), phi + j * M, (size_t)m * sizeof(float));
            raw[j * (m + 1) + m] = w[j];
        }
    }
    for (int64_t l = 0; l < M; l++) c_new[l] = cmax;
    for (int64_t j = 0; j < n; j++) {
        w[j] = expf(w[j] - cmax);
        sincos_row(f, phi + j * M, m, w[j]);
    }
}

float attn_fm_key_from_raw(const attn_fm *f, const float *raw, const float *c, float *phi)
{
    const int64_t m = f->m;
    if (f->map == ATTN_FM_FAVOR) {
        f->ks->linear.exp_sub(raw, c, phi, m);
        return 1.0f;
    }
    const float w = expf(raw[m] - c[0]);
    memcpy(phi, raw, (size_t)m * sizeof(float));
    sincos_row(f, phi, m, w);
    return w;
}

void attn_fm_queries(const attn_fm *f, const float *q, int64_t n, const float *c, float *psi)
{
    const int64_t M = f->M;
    if (!attn_fm_shifted(f)) {
        elementwise(f, q, n, psi);
        return;
    }
    project(f, q, n, psi, M);
    for (int64_t i = 0; i < n; i++) {
        float *row = psi + i * M;
        if (f->map == ATTN_FM_TRIG) {
            sincos_row(f, row, f->m, 1.0f);
            continue;
        }
        f->ks->linear.add(row, c, M);
        attn_vexp_sum(f->ks, row, M, attn_vmax(f->ks, row, M));
    }
}

double attn_fm_flops(const attn_fm *f, int64_t n, bool keys)
{
    double per_row = (double)f->M;
    if (attn_fm_shifted(f)) per_row += 2.0 * (double)f->m * (double)f->D + (keys ? 2.0 * f->D : 0);
    return per_row * (double)n;
}

/* ---- float64 pieces of one row (the reference) ---- */

void attn_fm_raw64(const attn_fm *f, const float *x, double *raw, double *h)
{
    const int64_t D = f->D;
    if (!attn_fm_shifted(f)) {
        for (int64_t d = 0; d < D; d++) {
            const double t = x[d];
            raw[d] = f->map == ATTN_FM_RELU ? (t > 0 ? t : 0) : (t > 0 ? t + 1 : exp(t));
        }
        *h = 0;
        return;
    }
    double sq = 0;
    for (int64_t d = 0; d < D; d++) sq += (double)x[d] * (double)x[d];
    *h = 0.5 * f->scale * sq;
    const double root = sqrt(f->scale);
    for (int64_t l = 0; l < f->m; l++) {
        double dot = 0;
        for (int64_t d = 0; d < D; d++) dot += (double)f->W[l * D + d] * (double)x[d];
        raw[l] = root * dot;
    }
}

/* ---- gradients (float32) ---- */

enum { BACK_ROWS = 64 }; /* rows per batch of attn_fm_backward (their coefficients on the stack) */

void attn_fm_backward(const attn_fm *f, const float *x, int64_t n, bool key, const float *phi,
                      float *dphi, const float *dh, float *dx)
{
    const int64_t D = f->D, M = f->M, m = f->m;
    if (!attn_fm_shifted(f)) {
        f->ks->linear.feature_grad(x, phi, dphi, dx, n * D, f->map == ATTN_FM_ELU);
        return;
    }
    const bool trig = f->map == ATTN_FM_TRIG;
    const float root = (float)sqrt(f->scale), scale = (float)f->scale;
    for (int64_t i0 = 0; i0 < n; i0 += BACK_ROWS) {
        const int64_t nb = n - i0 < BACK_ROWS ? n - i0 : BACK_ROWS;
        float coef[BACK_ROWS]; /* of scale·x: favor keys -Σ dφ∘φ, trig keys Σ + dh, queries 0 */
        for (int64_t i = 0; i < nb; i++) {
            const float *p = phi + (i0 + i) * M;
            float *g = dphi + (i0 + i) * M;
            const float sum = attn_vdot(f->ks, g, p, M);
            if (trig) f->ks->linear.trig_du(g, p, m); /* du_l in place */
            else f->ks->linear.mul(g, p, m);
            coef[i] = !key ? 0.0f : (trig ? sum + (dh ? dh[i0 + i] : 0.0f) : -sum);
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, (int)D, (int)m, root,
                    dphi + i0 * M, (int)M, f->W, (int)D, 0.0f, dx + i0 * D, (int)D);
        for (int64_t i = 0; i < nb && key; i++)
            f->ks->linear.axpy(dx + (i0 + i) * D, scale * coef[i], x + (i0 + i) * D, D);
    }
}
