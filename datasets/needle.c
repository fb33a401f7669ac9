/*
 * needle — retrieval: a Gaussian haystack in which chosen queries must find one planted key
 * (definition: .definition below).
 *   Haystack streams: q 1, k 2, v 3 (v normalised to norm sqrt(D): the nearest value to an
 *   output is the one most aligned with it). Planted queries: per head (b, h), one in each of n
 *   equal strata of the eligible queries (seeded per head). With grouped heads (GQA/MQA) the
 *   plants of one KV head use distinct keys: a uniform key already taken is redrawn (up to 64
 *   times), a fixed-distance one is left unplanted. The planted score ln(n_i) + margin (n_i the
 *   keys query i sees, causal rule) gives the planted key ~ 1/(1 + e^(1/2 - margin)) of the
 *   attention whatever S (0.97 at margin 4; the haystack's scores are ~ N(0, 1)).
 * Retrieval accuracy (harness/measure/accuracy.c) asks whether a kind's output for a planted query
 * is nearer to the marker v[b,g,j*] than to any other value of that KV head.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets.h"

extern const ds_ops ds_needle;

enum { NEEDLES, DISTANCE, MARGIN };
enum { P_PLANT = 16, UNIFORM = -1, REDRAWS = 64 };

static const attn_param_def params[] = {
    [NEEDLES] = {"needles", "planted queries per head (fewer if fewer are eligible)", 16, 1, 1e6,
                 true},
    [DISTANCE] = {"distance",
                  "keys from query back to its planted key; -1: uniform over "
                  "the keys it sees",
                  -1, -1, 1e9, true},
    [MARGIN] = {"margin", "planted score = ln(keys seen) + margin (4: ~97% of exact attention)", 4,
                -20, 50, false},
};

static int64_t plants(const attn_shape *s, const ds_params *p, uint64_t seed, ds_plant *out)
{
    const int64_t T = s->T, S = s->S, H = s->H, group = H / s->Hkv;
    const int64_t dist = (int64_t)p->v[DISTANCE];
    const int64_t lo = dist > 0 ? dist : 0; /* lowest eligible position */
    const int64_t i0 = lo - (S - T) > 0 ? lo - (S - T) : 0, E = T - i0;
    if (E <= 0) return 0;
    const int64_t n = (int64_t)p->v[NEEDLES] < E ? (int64_t)p->v[NEEDLES] : E;
    unsigned char *taken = malloc((size_t)S); /* keys of the current KV head already planted */
    if (!taken) return -1;
    int64_t count = 0;
    for (int64_t b = 0; b < s->B; b++)
        for (int64_t g = 0; g < s->Hkv; g++) {
            memset(taken, 0, (size_t)S);
            for (int64_t h = g * group; h < (g + 1) * group; h++) {
                ds_rng rng = ds_row_rng(seed, P_PLANT, b * H + h);
                for (int64_t r = 0; r < n; r++) {
                    const int64_t i = i0 + ds_stratum(r, n, E, ds_rng_uniform(&rng));
                    const int64_t pos = i + S - T, seen = s->causal ? pos + 1 : S;
                    int64_t j = dist >= 0 ? pos - dist : -1;
                    for (int t = 0; dist == UNIFORM && t < REDRAWS && (j < 0 || taken[j]); t++)
                        j = (int64_t)(ds_rng_uniform(&rng) * (double)seen);
                    if (j < 0 || taken[j]) continue; /* another plant of this KV head has it */
                    taken[j] = 1;
                    if (out) out[count] = (ds_plant){.row = (b * H + h) * T + i, .key = j};
                    count++;
                }
            }
        }
    free(taken);
    return count;
}

static attn_status fill(const attn_shape *s, const ds_params *p, uint64_t seed, int threads,
                        float *q, float *k, float *v, char *msg, size_t msg_len)
{
    const int64_t D = s->D, T = s->T;
    ds_fill_normal(q, attn_q_elems(s), 1.0, seed, 1);
    ds_fill_normal(k, attn_kv_elems(s), 1.0, seed, 2);
    ds_fill_normal(v, attn_kv_elems(s), 1.0, seed, 3);
    ds_normalize_rows(v, s->B * s->Hkv * s->S, D, sqrt((double)D), threads);
    ds_plant *list;
    const int64_t n = ds_plants_list(&ds_needle, s, p, seed, &list);
    if (n < 0) return attn_fail(ATTN_EFAIL, msg, msg_len, "needle: out of memory for the plants");
    for (int64_t e = 0; e < n; e++) {
        const int64_t i = list[e].row % T, bg = ds_kv_head(s, list[e].row / T);
        const float *qi = q + list[e].row * D;
        float *kj = k + (bg * s->S + list[e].key) * D;
        double qq = 0;
        for (int64_t d = 0; d < D; d++) qq += (double)qi[d] * qi[d];
        const double target = log((double)attn_causal_keys(s, i)) + p->v[MARGIN];
        for (int64_t d = 0; d < D; d++)
            kj[d] = qq > 0 ? (float)(qi[d] * target / (s->scale * qq)) : 0.0f;
    }
    free(list);
    return ATTN_OK;
}

const ds_ops ds_needle = {
    .name = "needle",
    .summary =
        "retrieval: planted queries each match one key at a set distance; its value is the marker",
    .definition =
        "Haystack: q, k ~ N(0,1), v rows uniform on the sphere of radius sqrt(D).\n"
        "Per head, min(needles, eligible) queries are planted (one per stratum of the queries\n"
        "at position p >= max(distance, 0)). Planted key j* = p - distance, or (distance = -1)\n"
        "uniform over the keys the query sees; keys are distinct within a KV head.\n"
        "k[j*] = q * (ln(keys seen) + margin) / (scale * |q|^2): planted score ln(keys seen) +\n"
        "margin, so exact attention puts ~1/(1+e^(0.5-margin)) on it; the marker is v[j*].\n"
        "Retrieval: the output is nearer (L2) to v[j*] than to every other value of its KV head.",
    .params = DS_PARAM_TABLE("needle", params),
    .fill = fill,
    .plants = plants,
};
