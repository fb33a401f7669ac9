/*
 * dtype_body.h — the per-dtype traits table (as ggml's type_traits): one row per attn_dtype with
 * its element size, its row conversions to and from float32 (convert_body.h) and the decode block
 * forms (decode_body.h), compiled in every set against its vector layer. The convert slots (here)
 * and the decode chunk (decode_chunk_body.h) reach a dtype's forms through its row and never
 * branch on the dtype; a new storage dtype is its forms and one row. Included by set_body.h after
 * convert_body.h and decode_body.h.
 */

typedef struct dt_traits {
    size_t size; /* bytes per element */
    bool floats; /* stored as float32: rows read in place, nothing to widen */
    /* the one-row p·v keeps acc paired where D % (2·VW) == 0 (bf16: dec_pair, vload_bf16_eo) */
    bool pairs;
    /* the multi-row forms prefetch the next block's V rows in their p·v pass, K rows in their
     * scores (else both in the scores, lines alternating) */
    bool prefetch_split;
    /* dst[i] = src[i] as float, i < n; and back, rounded to nearest even */
    void (*to_f32)(const void *src, float *dst, int64_t n);
    void (*from_f32)(const float *src, void *dst, int64_t n);
    /* one row: s[j] = q·k_j, j < nb (qh: the row as stored, for vdpbf16ps, else NULL); acc +=
     * Σ_j p[j]·v_j (paired when pairs and D % (2·VW) == 0) */
    void (*scores1)(const float *q, const uint16_t *qh, float scale, const void *const *kr,
                    int64_t nb, int64_t D, float *s);
    void (*pv1)(float *acc, const float *p, const void *const *vr, int64_t n, int64_t D);
    /* DECODE_QUAD rows, D % VW == 0: s[r·DECODE_KB + j] = q_r·k_j; acc_r += Σ_j s_r[j]·v_j */
    void (*scores4)(const float *q, const void *const *kr, int64_t n, int64_t D, float *s,
                    const dec_next *nx);
    void (*pv4)(float *acc, const float *s, const void *const *vr, int64_t n, int64_t D,
                const dec_next *nx);
} dt_traits;

static const dt_traits dt_types[ATTN_DTYPE_COUNT] = {
    [ATTN_F32] = {.size = sizeof(float),
                  .floats = true,
                  .prefetch_split = true,
                  .to_f32 = cvt_f32_to_f32,
                  .from_f32 = cvt_f32_from_f32,
                  .scores1 = dec_scores1_f32,
                  .pv1 = dec_pv1_f32,
                  .scores4 = dec_scores4_f32,
                  .pv4 = dec_pv4w_any_f32},
    [ATTN_BF16] = {.size = sizeof(uint16_t),
                   .pairs = true,
                   .to_f32 = cvt_bf16_to_f32,
                   .from_f32 = cvt_bf16_from_f32,
                   .scores1 = dec_scores1_bf16,
                   .pv1 = dec_pv1_bf16,
                   .scores4 = dec_scores4_bf16,
                   .pv4 = dec_pv4_bf16},
    [ATTN_F16] = {.size = sizeof(uint16_t),
                  .to_f32 = cvt_f16_to_f32,
                  .from_f32 = cvt_f16_from_f32,
                  .scores1 = dec_scores1_f16,
                  .pv1 = dec_pv1_f16,
                  .scores4 = dec_scores4_f16,
                  .pv4 = dec_pv4_f16},
};

/* The convert slots: dtype t's row conversions. */
static void k_cvt_to_f32(int t, const void *src, float *dst, int64_t n)
{
    dt_types[t].to_f32(src, dst, n);
}

static void k_cvt_from_f32(int t, const float *src, void *dst, int64_t n)
{
    dt_types[t].from_f32(src, dst, n);
}

#define CONVERT_SLOTS                                                                              \
    {                                                                                              \
        .to_f32 = k_cvt_to_f32, .from_f32 = k_cvt_from_f32                                         \
    }
