/*
 * test_dtype.c — low-precision q, k, v (attn_shape.dtype: bf16, f16). The conversions of every
 * kernel set equal the scalar rounding rules bit for bit (kernels/half.h, itself checked on known
 * values); every kind on the dense engine, in every ISA this machine runs, prefill (causal or
 * not, grouped heads, odd D) and decode (T = 1: the decode kernel, explicit and auto chunks):
 *   - against the float64 reference of the ROUNDED inputs: rel L2 <= 1e-6 (the computation is
 *     float32 whatever the storage, so only float32 rounding remains);
 *   - against the float64 reference of the ORIGINAL float32 inputs: within the format's cost,
 *     8·u (u = 2^-8 bf16, 2^-11 f16: q, k and v each off by <= u relative; the scores of these
 *     inputs are O(1), so the output moves by a few u);
 *   - decode = the last row of the causal prefill of the same dtype.
 * Other kinds refuse a non-f32 dtype with ATTN_ENODEF (attn_ops.dtypes), and so does the backward.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "attn_isa.h"
#include "decode.h"
#include "half.h"
#include "kernel_set.h"
#include "test_util.h"

static const attn_dtype lowp[] = {ATTN_BF16, ATTN_F16};

Test(dtype, names_and_sizes)
{
    attn_dtype t;
    cr_expect(attn_dtype_parse("bf16", &t) && t == ATTN_BF16);
    cr_expect(attn_dtype_parse("f16", &t) && t == ATTN_F16);
    cr_expect(attn_dtype_parse("f32", &t) && t == ATTN_F32);
    cr_expect(!attn_dtype_parse("fp16", &t));
    cr_expect_str_eq(attn_dtype_name(ATTN_BF16), "bf16");
    cr_expect_eq(attn_dtype_size(ATTN_F16), 2);
    cr_expect_eq(attn_dtype_size(ATTN_F32), 4);
}

Test(dtype, scalar_rounding_known_values)
{
    /* bf16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1); 1 + 3·2^-8 up to 1 + 2^-6 */
    cr_expect_eq(attn_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    cr_expect_eq(attn_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
    cr_expect_eq(attn_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
    cr_expect(isnan(attn_bf16_to_f32(attn_f32_to_bf16(NAN))));
    cr_expect_eq(attn_f32_to_bf16(INFINITY), 0x7f80);
    /* f16: 1 + 2^-11 ties to 1; 65504 max; 65520 to inf; 2^-24 the smallest subnormal */
    cr_expect_eq(attn_f32_to_f16(1.0f), 0x3c00);
    cr_expect_eq(attn_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    cr_expect_eq(attn_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
    cr_expect_eq(attn_f32_to_f16(65504.0f), 0x7bff);
    cr_expect_eq(attn_f32_to_f16(65519.0f), 0x7bff);
    cr_expect_eq(attn_f32_to_f16(65520.0f), 0x7c00);
    cr_expect_eq(attn_f32_to_f16(-0x1p-24f), 0x8001);
    cr_expect_eq(attn_f32_to_f16(0x1p-25f), 0x0000);         /* tie to even: 0 */
    cr_expect_eq(attn_f32_to_f16(0x1p-25f * 1.5f), 0x0001);  /* above the tie */
    cr_expect_eq(attn_f32_to_f16(0x1p-14f * 0.75f), 0x0300); /* subnormal 768·2^-24 */
    cr_expect_eq(attn_f16_to_f32(0x0300), 0x1p-14f * 0.75f);
    cr_expect_eq(attn_f16_to_f32(0x7bff), 65504.0f);
    cr_expect(isinf(attn_f16_to_f32(0xfc00)) && attn_f16_to_f32(0xfc00) < 0);
    cr_expect(isnan(attn_f16_to_f32(attn_f32_to_f16(NAN))));
    /* every f16 value survives f16 -> f32 -> f16 */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue; /* NaN payloads */
        cr_assert_eq(attn_f32_to_f16(attn_f16_to_f32((uint16_t)h)), h, "f16 %#x", h);
    }
}

/* Every kernel set's conversions equal the scalar rules on random values of many scales. */
Test(dtype, sets_convert_like_the_scalar_rules)
{
    enum { N = 4099 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    uint16_t *h = malloc(N * sizeof *h);
    ds_rng r = ds_rng_stream(5, 1);
    for (int i = 0; i < N; i++) x[i] = (float)(ds_rng_normal(&r) * ldexp(1.0, i % 40 - 28));
    for (int a = 0; a < ATTN_ISA_COUNT; a++) {
        const attn_kernel_set *ks = attn_ks_of((attn_isa)a);
        if (!ks || !attn_isa_supported((attn_isa)a)) continue;
        for (size_t t = 0; t < 2; t++) {
            ks->convert.from_f32((int)lowp[t], x, h, N);
            ks->convert.to_f32((int)lowp[t], h, y, N);
            for (int i = 0; i < N; i++) {
                const uint16_t want =
                    lowp[t] == ATTN_BF16 ? attn_f32_to_bf16(x[i]) : attn_f32_to_f16(x[i]);
                const float back =
                    lowp[t] == ATTN_BF16 ? attn_bf16_to_f32(want) : attn_f16_to_f32(want);
                cr_assert_eq(h[i], want, "%s %s: %a", attn_isa_name((attn_isa)a),
                             attn_dtype_name(lowp[t]), x[i]);
                cr_assert_eq(attn_f32_bits(y[i]), attn_f32_bits(back), "%s %s: %a",
                             attn_isa_name((attn_isa)a), attn_dtype_name(lowp[t]), x[i]);
            }
        }
    }
    free(x), free(y), free(h);
}

/* x rounded to t, as stored (h) and as float32 values again (xr). */
static void round_to(attn_dtype t, const float *x, int64_t n, uint16_t **h, float **xr)
{
    *h = malloc((size_t)n * sizeof **h + 1);
    *xr = bench_alloc((size_t)n * sizeof **xr);
    attn_dtype_from_f32(t, x, *h, n);
    attn_dtype_to_f32(t, *h, *xr, n);
}

typedef struct dcase {
    int64_t H, kv_request, T, S, D;
    bool causal;
    const char *params;
} dcase;

/* One dense kind, one case, one dtype, the ISA in force: the two references. */
static void check_case(const attn_ops *ops, const dcase *c, attn_dtype t)
{
    const int64_t Hkv = attn_kind_kv_heads(ops, c->H, c->kv_request);
    attn_shape s = attn_shape_init(1, c->H, Hkv, c->T, c->S, c->D, c->causal);
    const attn_exec x = tu_exec(2); /* on the ISA in force */
    s.decode = c->T == 1;
    attn_shape s32 = s;
    s.dtype = t;
    attn_params p = tu_params(ops, c->params, &s);
    char msg[ATTN_MSG_LEN], label[200];
    snprintf(label, sizeof label, "%s %s isa=%s H=%lld Hkv=%lld T=%lld S=%lld D=%lld%s %s",
             ops->name, attn_dtype_name(t), attn_isa_name(attn_exec_isa(&x)), (long long)c->H,
             (long long)Hkv, (long long)c->T, (long long)c->S, (long long)c->D,
             c->causal ? " causal" : "", c->params);
    cr_assert_eq(attn_check(ops, &s, &p, msg, sizeof msg), ATTN_OK, "%s: %s", label, msg);
    const int64_t qn = attn_q_elems(&s), kvn = attn_kv_elems(&s);
    float *q = tu_random(qn, 1, 21), *k = tu_random(kvn, 1, 22), *v = tu_random(kvn, 1, 23);
    uint16_t *qh, *kh, *vh;
    float *qr, *kr, *vr, *o = bench_alloc((size_t)qn * sizeof *o);
    round_to(t, q, qn, &qh, &qr);
    round_to(t, k, kvn, &kh, &kr);
    round_to(t, v, kvn, &vh, &vr);
    cr_assert_eq(tu_forward(ops, &x, &s, &p, (const float *)qh, (const float *)kh,
                            (const float *)vh, o),
                 ATTN_OK, "%s: forward failed", label);
    double *exact = tu_reference(ops, &s32, &p, qr, kr, vr);
    double *orig = tu_reference(ops, &s32, &p, q, k, v);
    const double u = t == ATTN_BF16 ? 0x1p-8 : 0x1p-11;
    const double e_exact = tu_rel_l2(o, exact, qn), e_orig = tu_rel_l2(o, orig, qn);
    cr_expect(e_exact <= 1e-6, "%s: vs float64 of the rounded inputs: rel L2 %.3g > 1e-6", label,
              e_exact);
    cr_expect(e_orig <= 8 * u, "%s: vs float64 of the original inputs: rel L2 %.3g > 8u = %.3g",
              label, e_orig, 8 * u);
    cr_expect(e_orig > 1e-2 * u, "%s: rel L2 %.3g vs the original inputs: nothing was rounded?",
              label, e_orig);
    free(q), free(k), free(v), free(qh), free(kh), free(vh), free(qr), free(kr), free(vr);
    free(o), free(exact), free(orig);
}

static const dcase cases[] = {
    {4, 0, 37, 37, 20, false, ""},
    {4, 0, 64, 64, 64, true, "block_q=16,block_k=16"},
    {8, 2, 33, 50, 16, true, ""},
    {4, 0, 1, 700, 64, true, ""},
    {8, 2, 1, 1500, 20, true, "split=3"},
    {8, 1, 1, 999, 128, false, ""},
    {4, 0, 1, 5, 3, true, "split=5"},
    {9, 1, 1, 300, 20, true, ""},
    {9, 1, 1, 200, 7, false, "split=2"},
    {6, 1, 1, 333, 48, true, "split=2"},
    {7, 1, 1, 301, 32, false, ""}, /* decode: rows by fours and single rows left over */
    /* decode, one row per KV head: whole passes of 2·DEC_EOG vectors of D (128) and a partial
     * one (160), blocks and chunks that leave keys over from the VW-key score tiles */
    {3, 0, 1, 1001, 128, true, "split=3"},
    {2, 0, 1, 777, 160, false, ""},
};

/* The dense kinds with every case, in every ISA this machine runs. */
Test(dtype, dense_kinds_against_both_references)
{
    int checked = 0;
    for (int a = 0; a < ATTN_ISA_COUNT; a++) {
        if (!attn_isa_supported((attn_isa)a)) continue;
        cr_assert_eq(attn_isa_select((attn_isa)a, NULL, 0), ATTN_OK);
        for (int i = 0; i < attn_kind_count(); i++) {
            const attn_ops *ops = attn_kind_at(i);
            if (ops->engine != ATTN_ENGINE_DENSE) continue;
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
                for (size_t t = 0; t < 2; t++) check_case(ops, &cases[c], lowp[t]), checked++;
        }
    }
    cr_assert_gt(checked, 0);
    attn_isa_select(attn_isa_best(), NULL, 0);
}

/* Decode (T = 1, the decode kernel) = the last row of the causal prefill (the tile on widened
 * inputs), each dtype, each ISA. */
Test(dtype, decode_is_last_prefill_row)
{
    const int64_t H = 8, S = 1200, D = 64;
    for (int a = 0; a < ATTN_ISA_COUNT; a++) {
        if (!attn_isa_supported((attn_isa)a)) continue;
        cr_assert_eq(attn_isa_select((attn_isa)a, NULL, 0), ATTN_OK);
        const attn_ops *ops = attn_kind_find("gqa");
        for (int td = 0; td < ATTN_DTYPE_COUNT; td++) {
            const attn_dtype t = (attn_dtype)td;
            const int64_t Hkv = attn_kind_kv_heads(ops, H, 2);
            attn_shape pre = attn_shape_init(1, H, Hkv, S, S, D, true);
            attn_shape dec = attn_shape_init(1, H, Hkv, 1, S, D, true);
            const attn_exec x = tu_exec(2); /* on the ISA selected above */
            dec.decode = true, pre.dtype = dec.dtype = t;
            attn_params pp = tu_params(ops, "", &pre), pd = tu_params(ops, "", &dec);
            const int64_t qn = attn_q_elems(&pre), kvn = attn_kv_elems(&pre),
                          es = attn_dtype_size(t);
            float *q = tu_random(qn, 1, 31), *k = tu_random(kvn, 1, 32), *v = tu_random(kvn, 1, 33);
            char *qh = malloc((size_t)qn * es), *kh = malloc((size_t)kvn * es),
                 *vh = malloc((size_t)kvn * es), *qd = malloc((size_t)(H * D) * es);
            attn_dtype_from_f32(t, q, qh, qn), attn_dtype_from_f32(t, k, kh, kvn);
            attn_dtype_from_f32(t, v, vh, kvn);
            for (int64_t h = 0; h < H; h++) /* the newest query of each head */
                memcpy(qd + h * D * es, qh + ((h * S + S - 1) * D) * es, (size_t)D * es);
            float *o = bench_alloc((size_t)qn * 4), *od = bench_alloc((size_t)(H * D) * 4);
            double *last = malloc((size_t)(H * D) * sizeof *last);
            cr_assert_eq(tu_forward(ops, &x, &pre, &pp, (float *)qh, (float *)kh, (float *)vh, o),
                         0);
            cr_assert_eq(tu_forward(ops, &x, &dec, &pd, (float *)qd, (float *)kh, (float *)vh, od),
                         0);
            for (int64_t h = 0; h < H; h++)
                for (int64_t d = 0; d < D; d++) last[h * D + d] = o[(h * S + S - 1) * D + d];
            const double err = tu_rel_l2(od, last, H * D);
            cr_expect(err <= 1e-6, "%s %s: decode vs last prefill row: rel L2 %.3g",
                      attn_isa_name((attn_isa)a), attn_dtype_name(t), err);
            free(q), free(k), free(v), free(qh), free(kh), free(vh), free(qd), free(o), free(od);
            free(last);
        }
    }
    attn_isa_select(attn_isa_best(), NULL, 0);
}

/* Kinds that do not declare a dtype refuse it (ATTN_ENODEF), and no backward takes one. */
Test(dtype, others_refuse)
{
    char msg[ATTN_MSG_LEN];
    int refused = 0;
    for (int i = 0; i < attn_kind_count(); i++) {
        const attn_ops *ops = attn_kind_at(i);
        attn_shape s = attn_shape_init(1, 4, attn_kind_kv_heads(ops, 4, 0), 64, 64, 16, true);
        s.dtype = ATTN_BF16;
        attn_params p = attn_params_defaults(attn_kind_params(ops));
        attn_params_resolve(ops, &s, &p);
        const attn_status st = attn_check(ops, &s, &p, msg, sizeof msg);
        if (ops->dtypes & ATTN_DTYPE_BIT(ATTN_BF16)) {
            cr_expect_eq(st, ATTN_OK, "%s: %s", ops->name, msg);
            if (attn_kind_has_backward(ops))
                cr_expect_eq(attn_backward_check(ops, &s, &p, msg, sizeof msg), ATTN_ENODEF,
                             "%s: a bf16 backward accepted", ops->name);
        } else {
            cr_expect_eq(st, ATTN_ENODEF, "%s: bf16 not refused", ops->name);
            refused++;
        }
    }
    cr_expect_gt(refused, 0);
    cr_expect(attn_kind_find("full")->dtypes & ATTN_DTYPE_BIT(ATTN_F16));
}
