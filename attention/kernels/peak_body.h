/*
 * peak_body.h — the FMA peak yardstick's loop (kernel_set.h: attn_ks_peak): PEAK_CHAINS
 * independent accumulators, each updated by one FMA per round, enough chains to cover the FMA
 * latency on every unit of current x86 cores (4-cycle latency × 2 units: 8; 12 leaves margin and
 * fits the 16 registers of AVX2). Flops per round: 2 · VW · PEAK_CHAINS.
 */
#define PEAK_CHAINS 12

static float k_fma_loop(int64_t iters, float seed)
{
    vf acc[PEAK_CHAINS];
    for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = vset1(seed + (float)c * 1e-3f);
    const vf a = vset1(0.999999f), b = vset1(1e-7f);
    for (int64_t i = 0; i < iters; i++)
        for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = vfma(acc[c], a, b);
    vf s = acc[0];
    for (int c = 1; c < PEAK_CHAINS; c++) s = vadd(s, acc[c]);
    return vhsum(s);
}

#define PEAK_SLOTS                                                                                 \
    {                                                                                              \
        .fma_loop = k_fma_loop                                                                     \
    }
