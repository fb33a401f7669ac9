/*
 * test_decode.c — decode mode and grouped K/V heads. Generated from the registry: for every
 * kind, decoding the last T positions (T = 1 and 3) against the KV cache equals the last T rows
 * of the causal prefill on the same k and v (through the decode table's state_bytes, prepare and
 * step when the kind has one, as harness/measure/point.c does; else forward on the decode shape);
 * a kind may refuse decode shapes only when kind_cases.h says so (refuses_decode). Then the KV
 * heads mqa and gqa resolve to, and every kind on the dense engine (ATTN_ENGINE_DENSE: the G heads
 * of a KV head stacked in one tile, keys cut into chunks merged afterwards) against the float64
 * reference at Hkv = 1, 2, H with odd T, small tiles and explicit chunk counts, and its decode
 * workspace independent of the cache length.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "kind_cases.h"
#include "test_util.h"

/* The kind's output on shape s, run on x: forward, or prepare + step when s->decode and it has a
 * decode state. */
static attn_status run_kind(const attn_ops *ops, const attn_exec *x, const attn_shape *s,
                            const attn_params *p, const float *q, const float *k, const float *v,
                            float *out)
{
    if (!(s->decode && ops->decode)) return tu_forward(ops, x, s, p, q, k, v, out);
    attn_params given = *p;
    float *owned[ATTN_MAX_WEIGHTS];
    cr_assert_eq(attn_weights_draw(ops, s, &given, owned, NULL, 0), ATTN_OK);
    void *ws = bench_alloc(ops->workspace_bytes(ops, x, s, &given)),
         *state = bench_alloc(ops->decode->state_bytes(ops, s, &given));
    attn_status st = ops->decode->prepare(ops, x, s, &given, k, v, state, ws);
    if (st == ATTN_OK) st = ops->decode->step(ops, x, s, &given, q, k, v, out, state, ws);
    free(ws), free(state);
    attn_weights_free(owned);
    return st;
}

typedef struct decode_case {
    int64_t B, H, kv_request, S,
        D; /* kv_request: --kv-heads as given (0: none), resolved per kind */
} decode_case;

/* Decode (T newest queries) vs the last T rows of the causal prefill; false when refused. */
static bool decode_matches_prefill(const attn_ops *ops, const decode_case *c, int64_t T)
{
    const int64_t Hkv = attn_kind_kv_heads(ops, c->H, c->kv_request);
    attn_shape pre = attn_shape_init(c->B, c->H, Hkv, c->S, c->S, c->D, true);
    attn_shape dec = attn_shape_init(c->B, c->H, Hkv, T, c->S, c->D, true);
    const attn_exec x = tu_exec(2);
    dec.decode = true;
    attn_params pp = attn_params_defaults(attn_kind_params(ops)), pd = pp;
    attn_params_resolve(ops, &pre, &pp);
    attn_params_resolve(ops, &dec, &pd);
    char msg[ATTN_MSG_LEN], label[160];
    snprintf(label, sizeof label, "%s B=%lld H=%lld Hkv=%lld S=%lld D=%lld T=%lld", ops->name,
             (long long)c->B, (long long)c->H, (long long)Hkv, (long long)c->S, (long long)c->D,
             (long long)T);
    if (attn_check(ops, &pre, &pp, msg, sizeof msg) ||
        attn_check(ops, &dec, &pd, msg, sizeof msg)) {
        cr_log_info("%s: refused (%s)", label, msg);
        return false;
    }
    const int64_t D = c->D, rows = c->B * c->H, kvn = attn_kv_elems(&pre);
    float *q = tu_random(attn_q_elems(&pre), 1, 11), *k = tu_random(kvn, 1, 12);
    float *v = tu_random(kvn, 1, 13), *o = bench_alloc((size_t)attn_q_elems(&pre) * 4);
    float *qd = bench_alloc((size_t)(rows * T * D) * 4),
          *od = bench_alloc((size_t)(rows * T * D) * 4);
    double *last = malloc((size_t)(rows * T * D) * sizeof *last);
    cr_assert_eq(run_kind(ops, &x, &pre, &pp, q, k, v, o), ATTN_OK, "%s: prefill failed", label);
    for (int64_t bh = 0; bh < rows; bh++) { /* the newest T positions of every (b, h) */
        const int64_t from = (bh * c->S + c->S - T) * D;
        memcpy(qd + bh * T * D, q + from, (size_t)(T * D) * 4);
        for (int64_t e = 0; e < T * D; e++) last[bh * T * D + e] = o[from + e];
    }
    cr_assert_eq(run_kind(ops, &x, &dec, &pd, qd, k, v, od), ATTN_OK, "%s: decode failed", label);
    const double err = tu_rel_l2(od, last, rows * T * D);
    cr_expect(err <= 1e-5, "%s: decode vs last rows of prefill: rel L2 %.3g > 1e-5", label, err);
    free(q), free(k), free(v), free(o), free(qd), free(od), free(last);
    return true;
}

Test(decode, last_rows_of_prefill_for_every_kind)
{
    const decode_case cases[] = {
        {2, 4, 2, 37, 16},   /* batch, grouped heads, odd S */
        {1, 8, 0, 1500, 32}, /* each kind's default KV heads; S long enough for key chunks */
        {1, 2, 1, 3, 8},     /* T = S: the whole sequence */
    };
    int decoded = 0;
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int64_t T = 1; T <= 3; T += 2) {
                const bool ran = decode_matches_prefill(ops, &cases[c], T);
                cr_expect(ran || tu_cases(ops).refuses_decode,
                          "%s refused decode case %zu (T=%lld) without refuses_decode", ops->name,
                          c, (long long)T);
                decoded += ran;
            }
    }
    cr_expect_geq(decoded, 3 * 6, "only %d decode cases ran", decoded);
}

Test(decode, mqa_and_gqa_resolve_their_kv_heads)
{
    const attn_ops *mqa = attn_kind_find("mqa"), *gqa = attn_kind_find("gqa");
    const attn_ops *full = attn_kind_find("full");
    cr_assert(mqa && gqa && full);
    /* mqa: always one KV head, whatever was asked */
    cr_expect_eq(attn_kind_kv_heads(mqa, 32, 0), 1);
    cr_expect_eq(attn_kind_kv_heads(mqa, 32, 8), 1);
    cr_expect_eq(attn_kind_kv_heads(mqa, 1, 0), 1);
    /* gqa: the request, else the largest divisor of H that is <= H/4 (1 when none is above 1) */
    cr_expect_eq(attn_kind_kv_heads(gqa, 32, 4), 4);
    cr_expect_eq(attn_kind_kv_heads(gqa, 32, 32), 32);
    const int64_t expect[][2] = {{32, 8}, {8, 2}, {12, 3}, {16, 4}, {24, 6}, {4, 1},
                                 {7, 1},  {1, 1}, {2, 1},  {18, 3}, {40, 10}};
    for (size_t e = 0; e < sizeof expect / sizeof expect[0]; e++)
        cr_expect_eq(attn_kind_kv_heads(gqa, expect[e][0], 0), expect[e][1], "gqa H=%lld: %lld",
                     (long long)expect[e][0], (long long)attn_kind_kv_heads(gqa, expect[e][0], 0));
    for (int64_t H = 1; H <= 128; H++) { /* the rule itself, for every H */
        const int64_t Hkv = attn_kind_kv_heads(gqa, H, 0);
        int64_t best = 1;
        for (int64_t d = 2; d <= H / 4; d++)
            if (H % d == 0) best = d;
        cr_expect_eq(Hkv, best, "gqa H=%lld: kv_heads %lld, expected %lld", (long long)H,
                     (long long)Hkv, (long long)best);
    }
    /* full: the request, else MHA */
    cr_expect_eq(attn_kind_kv_heads(full, 32, 0), 32);
    cr_expect_eq(attn_kind_kv_heads(full, 32, 4), 4);
    /* a shape with more KV heads (e.g. from --input) is refused by mqa, with the reason */
    attn_shape s = attn_shape_init(1, 8, 2, 4, 4, 8, false);
    attn_params p = attn_params_defaults(attn_kind_params(mqa));
    char msg[ATTN_MSG_LEN];
    cr_expect_eq(attn_check(mqa, &s, &p, msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "kv_heads 2") != NULL, "message: %s", msg);
}

/* Relative L2 error of the kind's forward on s, run on x (q, k, v drawn from seed, seed + 1,
 * seed + 2) against its float64 definition. */
static double rel_err(const attn_ops *ops, const attn_exec *x, const attn_shape *s,
                      const attn_params *p, uint64_t seed)
{
    const int64_t qn = attn_q_elems(s), kvn = attn_kv_elems(s);
    float *q = tu_random(qn, 1, seed), *k = tu_random(kvn, 1, seed + 1);
    float *v = tu_random(kvn, 1, seed + 2), *o = bench_alloc((size_t)qn * 4);
    cr_assert_eq(tu_forward(ops, x, s, p, q, k, v, o), ATTN_OK);
    double *ref = tu_reference(ops, s, p, q, k, v);
    const double err = tu_rel_l2(o, ref, qn);
    free(q), free(k), free(v), free(o), free(ref);
    return err;
}

/* The dense engine at awkward groupings: several query blocks (gathered rows), diagonal blocks,
 * key chunks merged (some wholly masked, rows that see no key at all), T = 1 and 3. */
Test(decode, grouped_kernel_matches_float64_reference)
{
    const int64_t H = 4, shapes[][3] = {{37, 37, 1}, {37, 101, 0}, {9, 5, 1}, {1, 700, 1},
                                        {3, 700, 1}, {129, 129, 1}}; /* T, S, causal */
    const char *settings[][4] = {
        /* block_q, block_k, split: strings for attn_param_set; NULL: default */
        {"8", "16", "1", "small tiles, one chunk"},
        {"8", "16", "3", "small tiles, 3 chunks"},
        {"1", "7", "5", "one position per tile, 5 chunks"},
        {NULL, NULL, "0", "defaults, auto chunks"},
        {"256", "32", "2", "64-row diagonal groups, 2 chunks"},
    };
    int ran = 0, dense = 0;
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        if (ops->engine != ATTN_ENGINE_DENSE) continue;
        dense++;
        for (int64_t Hkv = 1; Hkv <= H; Hkv *= 2) { /* 1, 2, H */
            for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
                for (size_t st = 0; st < sizeof settings / sizeof settings[0]; st++) {
                    attn_shape s = attn_shape_init(1, H, Hkv, shapes[c][0], shapes[c][1], 16,
                                                   shapes[c][2] != 0);
                    const attn_exec x = tu_exec(2);
                    attn_params p = attn_params_defaults(attn_kind_params(ops));
                    char msg[ATTN_MSG_LEN];
                    const char *names[] = {"block_q", "block_k", "split"};
                    for (int n = 0; n < 3; n++)
                        if (settings[st][n])
                            cr_assert_eq(attn_param_set(attn_kind_params(ops), &p, names[n],
                                                        settings[st][n], msg, sizeof msg),
                                         ATTN_OK, "%s", msg);
                    if (attn_check(ops, &s, &p, msg, sizeof msg) != ATTN_OK)
                        continue; /* mqa, Hkv>1 */
                    const double err = rel_err(ops, &x, &s, &p, 21);
                    cr_expect(err <= 1e-5, "%s Hkv=%lld T=%lld S=%lld causal=%d, %s: rel L2 %.3g",
                              ops->name, (long long)Hkv, (long long)s.T, (long long)s.S, s.causal,
                              settings[st][3], err);
                    ran++;
                }
        }
    }
    /* every dense kind at Hkv = 1, 2, 4 but mqa (Hkv = 1 only): at least 7 of the 9 */
    cr_expect_geq(dense, 3, "only %d dense kinds", dense);
    cr_expect_geq(ran, (3 * dense - 2) * 6 * 5, "%d cases ran", ran);
}

/* Decode's workspace: per-thread tiles plus chunk partials, never a function of S beyond them. */
Test(decode, workspace_does_not_grow_with_the_cache)
{
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        if (ops->engine != ATTN_ENGINE_DENSE) continue;
        attn_params p = attn_params_defaults(attn_kind_params(ops));
        attn_shape s = attn_shape_init(1, 32, attn_kind_kv_heads(ops, 32, 0), 1, 32768, 128, true);
        const attn_exec x = tu_exec(2);
        s.decode = true;
        const size_t at32k = ops->workspace_bytes(ops, &x, &s, &p);
        s.S = 1 << 20;
        const size_t at1m = ops->workspace_bytes(ops, &x, &s, &p);
        cr_expect_eq(at1m, at32k, "%s: decode workspace %zu at S=32K, %zu at S=1M", ops->name,
                     at32k, at1m);
        cr_expect_lt(at1m, (size_t)1 << 20, "%s: decode workspace %zu bytes", ops->name, at1m);
    }
}

/* The in-place paths of the decode kernel (G < 8) in every kernel set, f32: G = 1, 4 (by fours,
 * the next block prefetched while the current one is scored), 5 and 7 (by fours and single rows
 * left over), against the float64 reference. The chunks' lengths leave its parts uneven (S % 4),
 * a last block shorter than the others (short parts), or fewer keys than parts (S = 3). D = 32
 * and 128 (AVX-512 f32 G = 4..7: p·v by two rows at a time, dec_pv4w_f32). */
Test(decode, in_place_rows_in_every_kernel_set)
{
    const attn_ops *full = attn_kind_find("full");
    cr_assert_not_null(full);
    const int64_t groups[][2] = {{8, 8}, {8, 2}, {10, 2}, {7, 1}}; /* H, Hkv: G = 1, 4, 5, 7 */
    const int64_t lengths[] = {3, 67, 131, 1029};
    const char *splits[] = {"split=1", "split=3"};
    int ran = 0;
    attn_isa isa = TU_ISA_FIRST;
    do {
        for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
            for (size_t n = 0; n < sizeof lengths / sizeof lengths[0]; n++)
                for (size_t sp = 0; sp < 4; sp++) {
                    attn_shape s = attn_shape_init(1, groups[g][0], groups[g][1], 1, lengths[n],
                                                   sp < 2 ? 32 : 128, true);
                    s.decode = true;
                    const attn_exec x = tu_exec(2); /* on the set in force */
                    const attn_params p = tu_params(full, splits[sp % 2], &s);
                    const double err = rel_err(full, &x, &s, &p, 31);
                    cr_expect(err <= 1e-5, "isa=%s H=%lld Hkv=%lld S=%lld D=%lld %s: rel L2 %.3g",
                              attn_isa_name(attn_exec_isa(&x)), (long long)s.H, (long long)s.Hkv,
                              (long long)s.S, (long long)s.D, splits[sp % 2], err);
                    ran++;
                }
    } while (tu_isa_next(&isa));
    cr_expect_gt(ran, 0);
}
