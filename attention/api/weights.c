/* weights.c — a kind's weights (attention.h: attn_ops.weights, draw_weights): describing them,
 * drawing the ones a caller does not give, and the check a kind's forward makes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"

int attn_kind_weights(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                      attn_weight *out)
{
    return ops->weights ? ops->weights->list(ops, s, p, out) : 0;
}

int64_t attn_weight_elems(const attn_weight *w)
{
    int64_t n = 1;
    for (int d = 0; d < w->rank; d++) n *= w->dims[d];
    return n;
}

/* ---- seeded normals: splitmix64 steps, Box–Muller (the pair's second value is dropped) ---- */

uint64_t attn_rng_state(uint64_t seed, uint64_t stream)
{
    return seed * 0xd1342543de82ef95ULL + 0x5851f42d4c957f2dULL + stream * 0x9e3779b97f4a7c15ULL;
}

static uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double attn_rng_normal(uint64_t *state)
{
    double u = ((double)(next_u64(state) >> 11) + 1.0) * 0x1.0p-53; /* (0, 1] */
    double v = (double)(next_u64(state) >> 11) * 0x1.0p-53;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

void attn_weights_normal(float *w, int64_t n, double sigma, uint64_t seed, uint64_t stream)
{
    uint64_t state = attn_rng_state(seed, stream);
    for (int64_t e = 0; e < n; e++) w[e] = (float)(sigma * attn_rng_normal(&state));
}

void attn_weights_free(float *owned[ATTN_MAX_WEIGHTS])
{
    for (int i = 0; i < ATTN_MAX_WEIGHTS; i++) free(owned[i]), owned[i] = NULL;
}

attn_status attn_weights_draw(const attn_ops *ops, const attn_shape *s, attn_params *p,
                              float *owned[ATTN_MAX_WEIGHTS], char *msg, size_t msg_len)
{
    for (int i = 0; i < ATTN_MAX_WEIGHTS; i++) owned[i] = NULL;
    attn_weight w[ATTN_MAX_WEIGHTS];
    const int n = attn_kind_weights(ops, s, p, w);
    float *drawn[ATTN_MAX_WEIGHTS] = {0};
    bool missing = false;
    for (int i = 0; i < n; i++) missing |= p->w[i] == NULL;
    if (!missing) return ATTN_OK;
    /* the kind draws all of its weights at once; keep the ones p does not give */
    for (int i = 0; i < n; i++) {
        drawn[i] = malloc((size_t)attn_weight_elems(&w[i]) * sizeof(float) + 1);
        if (!drawn[i]) {
            attn_weights_free(drawn);
            return attn_fail(ATTN_EFAIL, msg, msg_len,
                             "%s: out of memory for weight '%s' (%lld floats)", ops->name,
                             w[i].name, (long long)attn_weight_elems(&w[i]));
        }
    }
    if (ops->weights->draw(ops, s, p, drawn) != ATTN_OK) {
        attn_weights_free(drawn);
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: drawing its weights failed", ops->name);
    }
    for (int i = 0; i < n; i++) {
        if (p->w[i]) {
            free(drawn[i]);
        } else {
            owned[i] = drawn[i];
            p->w[i] = drawn[i];
        }
    }
    return ATTN_OK;
}

attn_status attn_weights_given(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                               char *msg, size_t msg_len)
{
    attn_weight w[ATTN_MAX_WEIGHTS];
    const int n = attn_kind_weights(ops, s, p, w);
    for (int i = 0; i < n; i++)
        if (!p->w[i])
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "%s: weight '%s' not given (attn_weights_draw draws it)", ops->name,
                             w[i].name);
    return ATTN_OK;
}
