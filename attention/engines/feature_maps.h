/*
 * feature_maps.h — the feature maps φ of linear attention (attention/kinds/linear.c): the seeded
 * random projections, float32 features of blocks of rows (the forward), float64 pieces of one row
 * and the float64 attention they define (the reference). The definitions are in feature_maps.c.
 */
#ifndef ATTN_FEATURE_MAPS_H
#define ATTN_FEATURE_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attention.h"

typedef enum { ATTN_FM_ELU, ATTN_FM_RELU, ATTN_FM_FAVOR, ATTN_FM_TRIG } attn_fm_map;
extern const char *const attn_fm_names[]; /* "elu", "relu", "favor", "trig", NULL */

typedef struct attn_fm {
    attn_fm_map map;
    int64_t D;      /* input dimension */
    int64_t m;      /* random projections (favor, trig); 0 for elu and relu */
    int64_t M;      /* feature dimension: D (elu, relu), m (favor), 2m (trig) */
    double scale;   /* softmax scale: favor and trig see x = sqrt(scale)·q, y = sqrt(scale)·k */
    const float *W; /* [m, D] projections w_l (attn_fm_draw, or the caller's: linear's weight
                       `features`); φ sees W·x = sqrt(scale)·W·q. NULL for elu, relu */
    const struct attn_kernel_set *ks; /* the set its row loops run on (attn_fm_make: NULL, set
                                         by the caller before computing) */
} attn_fm;

attn_fm attn_fm_make(attn_fm_map map, int64_t D, int64_t m, double scale);
/* favor and trig: key features carry a shift c (a running maximum, see feature_maps.c). */
static inline bool attn_fm_shifted(const attn_fm *f) { return f->map >= ATTN_FM_FAVOR; }
/* Floats of W (0 for elu, relu) and scratch bytes attn_fm_draw needs. */
int64_t attn_fm_w_floats(const attn_fm *f);
size_t attn_fm_draw_bytes(const attn_fm *f);
/* Draw W [m, D] (rows w_l ~ N(0, I_D); favor: orthogonal blocks) from seed: the same values on
 * every machine and thread count; scratch of attn_fm_draw_bytes. */
void attn_fm_draw(const attn_fm *f, uint64_t seed, float *W, void *scratch);

/* Key features of n rows k [n, D] into phi [n, M]. Shifted maps: c [M] is the shift of the
 * keys summed so far (NULL: none), c_new [M] receives max(c, the maxima of these rows) and
 * phi is scaled by exp(-c_new); trig also writes each key's weight into w [n]; raw [n, m+1]
 * (if not NULL) keeps the unshifted logarithms: favor W y - |y|²/2; trig W y, then |y|²/2. */
void attn_fm_keys(const attn_fm *f, const float *k, int64_t n, const float *c, float *c_new,
                  float *phi, float *w, float *raw);
/* Features of one key from its raw row (attn_fm_keys) against shift c [M]; returns its weight
 * (trig: exp(|y|²/2 - c); else 1). */
float attn_fm_key_from_raw(const attn_fm *f, const float *raw, const float *c, float *phi);
/* Query features of n rows q [n, D] into psi [n, M] (favor: against the key shift c [M]). */
void attn_fm_queries(const attn_fm *f, const float *q, int64_t n, const float *c, float *psi);
/* Flops of the features of n rows (keys: with the squared norms), as attn_fm_keys/queries run. */
double attn_fm_flops(const attn_fm *f, int64_t n, bool keys);

/* float64, one row x [D]: elu/relu: raw = φ(x) [D]; favor/trig: raw = W x [m] and
 * h = scale·|x|²/2. */
void attn_fm_raw64(const attn_fm *f, const float *x, double *raw, double *h);

/* float64 linear attention with the kernel φ(q)·φ(k) of f (W drawn), rows as attn_ops.reference;
 * trig's denominator floored at den_floor·|φ(q)|·Σ_j|φ(k_j)| (linear_reference.c). ATTN_EFAIL
 * when out of memory (S·M doubles). */
attn_status attn_fm_reference(const attn_fm *f, double den_floor, const attn_shape *s,
                              const float *q, const float *k, const float *v, const int64_t *rows,
                              int64_t nrows, double *out);

/* Its float64 gradients for dout (dq [B,H,T,D], dk, dv [B,Hkv,S,D]; W constant):
 * linear_reference.c. */
attn_status attn_fm_reference_backward(const attn_fm *f, double den_floor, const attn_shape *s,
                                       const float *q, const float *k, const float *v,
                                       const float *dout, double *dq, double *dk, double *dv);

/* The gradient through the features of rows x [n, D] (float32, W constant): phi [n, M] as
 * attn_fm_keys (key) or attn_fm_queries wrote them (their shifts are constants: a query row's
 * cancels in the normalised output, the keys' are shared by numerator and denominator), dphi
 * [n, M] the gradient of phi (overwritten: scratch), dh [n] (trig keys, or NULL) an extra
 * gradient of each key's log-weight |y'|²/2 (the denominator floor's). dx [n, D] is written.
 * favor keys dx = sqrt(scale)·(dφ∘φ)W - scale·x·Σ dφ∘φ; favor queries the first term only;
 * trig du_l = dφ_l φ_(m+l) - dφ_(m+l) φ_l, dx = sqrt(scale)·du W (+ scale·x·(Σ dφ∘φ + dh) for
 * keys); elu dφ·(x > 0 ? 1 : φ); relu dφ·[x > 0]. */
void attn_fm_backward(const attn_fm *f, const float *x, int64_t n, bool key, const float *phi,
                      float *dphi, const float *dh, float *dx);

/* linear's backward (linear_backward.c) for feature map f, the causal scan's `chunk` and the
 * trig floor den_floor: its exact workspace, and dq, dk, dv (overwritten) from dout. */
size_t attn_linear_backward_bytes(const attn_exec *x, const attn_fm *f, int64_t chunk,
                                  const attn_shape *s);
attn_status attn_linear_backward(const attn_exec *x, const attn_fm *f, int64_t chunk,
                                 double den_floor, const attn_shape *s, const float *q,
                                 const float *k, const float *v, const float *dout, float *dq,
                                 float *dk, float *dv, void *workspace);

#endif
