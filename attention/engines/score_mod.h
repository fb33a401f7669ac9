/*
 * score_mod.h — score modifiers of the softmax kinds: ALiBi biases and tanh soft-capping.
 * Internal to attention/ (and tests/): the engines and the float64 masked reference use them.
 *
 * Definition (the one place it is written; docs/engines.md#score-modifiers explains it):
 *   score      s_ij = scale · q_i · k_j                                  (scale = 1/sqrt(D))
 *   softcap=C  s_ij <- C · tanh(s_ij / C)              (Gemma 2; C > 0, 0: off), then
 *   alibi=1    s_ij <- s_ij - m_h · |p_i - j|,  p_i = i + S - T          (Press et al. 2022)
 *   out_i = Σ_j softmax_j(s_ij) v_j over the keys the kind's mask allows. Causal: j <= p_i, so
 *   the bias is m_h·(j - p_i), the paper's. Not causal: the same distance both ways (symmetric:
 *   keys after the query are penalised like keys before it, as in ALiBi's bidirectional use).
 *   Slopes (the paper's reference code, get_slopes): for H a power of two,
 *   m_h = 2^(-8(h+1)/H), h = 0..H-1; otherwise, with P the largest power of two below H, the P
 *   slopes for P heads, then slopes 0, 2, 4, ... of the 2P-head sequence for the remaining H - P
 *   heads (m = 2^(-4(2k+1)/P), k = 0..H-P-1). Query head h has its own slope (with grouped K/V
 *   heads, not its KV head's).
 *
 * A kind has the modifiers when its parameter table ends with ATTN_SCORE_MOD_PARAMS (every
 * softmax kind on the dense and block-sparse engines); attn_score_mod_of finds them by name, so
 * a kind without them (linear) is unaffected. flops do not count the modifiers (4·D per score,
 * like the exp of the softmax): their cost shows as time.
 */
#ifndef ATTN_SCORE_MOD_H
#define ATTN_SCORE_MOD_H

#include "attention.h"

/* The two parameter definitions every softmax kind appends to its table. */
enum { ATTN_SCORE_MOD_NPARAMS = 2 };
/* clang-format off */
#define ATTN_SCORE_MOD_PARAMS                                                                      \
    {"alibi", "1: ALiBi bias s - m_h·|p - j|, slopes m_h as in Press et al. 2022 (engines.md)",    \
     0, 0, 1, true},                                                                               \
    {"softcap", "C > 0: soft-capped score C·tanh(s/C) before ALiBi (Gemma 2); 0: off",            \
     0, 0, 1e6, false}
/* clang-format on */

/* The modifiers of one forward. */
typedef struct attn_score_mod {
    bool alibi;
    double softcap; /* C, or 0: off */
    int64_t H;      /* query heads (the slopes depend on them) */
    int64_t shift;  /* S - T: query i sits at position i + shift */
} attn_score_mod;

/* The modifiers set in p for shape s, found by name in table t (all off when t has none or is
 * NULL). */
attn_score_mod attn_score_mod_of(const attn_param_table *t, const attn_params *p,
                                 const attn_shape *s);
static inline bool attn_score_mod_on(const attn_score_mod *m) { return m->alibi || m->softcap > 0; }
/* ALiBi slope m_h of query head h of H. */
double attn_alibi_slope(int64_t h, int64_t H);
/* The modified score of query i (head h) and key j, in float64: the definition above. */
double attn_score_mod_apply(const attn_score_mod *m, double score, int64_t h, int64_t i, int64_t j);

#endif
