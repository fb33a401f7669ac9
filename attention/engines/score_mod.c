/* score_mod.c — the score modifiers' parameters, slopes and float64 definition (score_mod.h). */
#include <math.h>

#include "score_mod.h"

attn_score_mod attn_score_mod_of(const attn_param_table *t, const attn_params *p,
                                 const attn_shape *s)
{
    const int a = t ? attn_param_index(t, "alibi") : -1;
    const int c = t ? attn_param_index(t, "softcap") : -1;
    return (attn_score_mod){.alibi = a >= 0 && p->v[a] != 0,
                            .softcap = c >= 0 ? p->v[c] : 0,
                            .H = s->H,
                            .shift = s->S - s->T};
}

double attn_alibi_slope(int64_t h, int64_t H)
{
    int64_t P = 1; /* the largest power of two <= H */
    while (P * 2 <= H) P *= 2;
    if (h < P) return exp2(-8.0 * (double)(h + 1) / (double)P);
    return exp2(-4.0 * (double)(2 * (h - P) + 1) / (double)P); /* every other slope of 2P */
}

double attn_score_mod_apply(const attn_score_mod *m, double score, int64_t h, int64_t i, int64_t j)
{
    if (m->softcap > 0) score = m->softcap * tanh(score / m->softcap);
    if (m->alibi) score -= attn_alibi_slope(h, m->H) * fabs((double)(i + m->shift - j));
    return score;
}
