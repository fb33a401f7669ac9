/*
 * reformer_body.h — reformer's LSH bucket routine (attention/kinds/reformer.c), compiled in every
 * kernel set with that set's flags (kernels/set_<isa>.c via set_body.h; REFORMER_SLOTS):
 * ATTN_HASH_COLS rotation columns a GNU C vector (the set's registers: 2 SSE halves, one AVX
 * register), ATTN_HASH_ROWS rows at a time. time O(ATTN_HASH_ROWS·D·halfp) per call; no scratch;
 * one thread. Each set hashes the forward's and the reference's rows alike (one routine), so they
 * see the same buckets.
 */
#if defined(__GNUC__)
#define ATTN_HASH_NOINLINE __attribute__((noinline))
typedef float attn_hash_vec __attribute__((vector_size(ATTN_HASH_COLS * sizeof(float))));
#else
#define ATTN_HASH_NOINLINE
#endif

/*
 * The buckets of ATTN_HASH_ROWS rows x (row stride ldx) under one round's rotation Rp [D, halfp]
 * (R's half columns, then zero columns up to halfp, a multiple of ATTN_HASH_COLS): argmax over
 * [xR; -xR], the first maximum. One routine, never inlined, for the forward and the reference
 * alike (the reference hashes its row in a block of ATTN_HASH_ROWS as well): every bucket comes
 * from the same float32 operations in the same order, so both see the same buckets.
 */
static ATTN_HASH_NOINLINE void k_hash_rows(const float *x, int64_t ldx, const float *Rp, int64_t D,
                                           int64_t half, int64_t halfp, int32_t *out)
{
    float pos[ATTN_HASH_ROWS], neg[ATTN_HASH_ROWS], y[ATTN_HASH_ROWS][ATTN_HASH_COLS];
    int32_t ipos[ATTN_HASH_ROWS] = {0}, ineg[ATTN_HASH_ROWS] = {0};
    for (int r = 0; r < ATTN_HASH_ROWS; r++) pos[r] = neg[r] = -INFINITY;
    for (int64_t c0 = 0; c0 < halfp; c0 += ATTN_HASH_COLS) {
#if defined(__GNUC__) /* one vector of ATTN_HASH_COLS per row: element-wise, so the same as below  \
                       */
        attn_hash_vec acc[ATTN_HASH_ROWS] = {0};
        for (int64_t d = 0; d < D; d++) {
            attn_hash_vec row;
            memcpy(&row, Rp + d * halfp + c0, sizeof row);
            for (int r = 0; r < ATTN_HASH_ROWS; r++) acc[r] += x[r * ldx + d] * row;
        }
        memcpy(y, acc, sizeof y);
#else
        memset(y, 0, sizeof y);
        for (int64_t d = 0; d < D; d++)
            for (int r = 0; r < ATTN_HASH_ROWS; r++)
                for (int c = 0; c < ATTN_HASH_COLS; c++)
                    y[r][c] += x[r * ldx + d] * Rp[d * halfp + c0 + c];
#endif
        for (int r = 0; r < ATTN_HASH_ROWS; r++)
            for (int c = 0; c < ATTN_HASH_COLS && c0 + c < half; c++) {
                if (y[r][c] > pos[r]) pos[r] = y[r][c], ipos[r] = (int32_t)(c0 + c);
                if (-y[r][c] > neg[r]) neg[r] = -y[r][c], ineg[r] = (int32_t)(c0 + c);
            }
    }
    for (int r = 0; r < ATTN_HASH_ROWS; r++)
        out[r] = neg[r] > pos[r] ? (int32_t)half + ineg[r] : ipos[r];
}

#define REFORMER_SLOTS                                                                             \
    {                                                                                              \
        .hash_rows = k_hash_rows                                                                   \
    }
