/*
 * sink — StreamingLLM's attention sinks (Xiao et al. 2024, "Efficient Streaming Language Models
 * with Attention Sinks"): every query sees the first s tokens (the sinks) and a causal window of
 * the w most recent keys, the authors' StartRecentKVCache (start_size, recent_size) as a mask.
 * Definition: .definition below.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   time O(B·H·T·(s + w)·D)   flops 4·D per allowed score, counted from the layout (exact)
 *   layout (block-sparse engine): blocks of 256 queries; per block the sinks [0, s) in one
 *           segment, then the window minus [0, s) (each key once) as a band of half-width
 *           w + 1 (current=extra) or w (current=counted), by groups of 32-64 rows, each group's
 *           window keys in one masked visit (attn_bs_plan_band)
 *   workspace: threads × (256×c scores + 256×D acc + 2·256 floats + 3·256 int64), any n;
 *              c = a group's window keys rounded up to 64, in [256, 512]
 *   threads: OpenMP over (b, h, query block), dynamic by 8 blocks; one thread per tile, no BLAS.
 */
#include "blocksparse.h"

enum { P_SINKS, P_WINDOW, P_CURRENT };
enum { CURRENT_EXTRA, CURRENT_COUNTED };
enum { BLOCK = 256 };
/* Blocks a thread takes at once: neighbouring blocks, whose rows the hardware then streams on. */
enum { TASK_CHUNK = 8 };

static const char *const current_names[] = {"extra", "counted", NULL};

static const attn_param_def params[] = {
    [P_SINKS] = {"sinks", "s: the first s keys, seen by every query (start_size)", 4, 0, 1000000000,
                 true},
    [P_WINDOW] = {"window", "w: recent keys besides the sinks (recent_size)", 256, 0, 1000000000,
                  true},
    [P_CURRENT] = {"current", "the query's own key: extra to the w (eval_long_ppl) or one of them",
                   CURRENT_EXTRA, 0, 1, true, current_names},
    ATTN_SCORE_MOD_PARAMS,
};

/* Half-width of the window as a band (attn_bs_band: keys with p - j < width). */
static int64_t band_width(const attn_params *p)
{
    const int64_t w = (int64_t)p->v[P_WINDOW];
    return (int64_t)p->v[P_CURRENT] == CURRENT_EXTRA ? w + 1 : w;
}

static void plan(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    attn_bs_plan_blocks(s, BLOCK, pl);
    attn_bs_plan_band(s, attn_bs_max(1, band_width(p)), pl);
    pl->ints = 3 * pl->rows_max;
    pl->task_chunk = TASK_CHUNK;
}

/* The task's rows: the sinks [0, s) (causal: up to p), then the band without them. */
static void visit(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run)
{
    (void)pl;
    const int64_t sinks = attn_bs_min((int64_t)p->v[P_SINKS], s->S), n = t->rows.n;
    const int64_t p0 = attn_bs_pos(s, t->rows.i0);
    int64_t *hi = t->ints + 2 * n;
    for (int64_t r = 0; r < n; r++) hi[r] = s->causal ? attn_bs_min(sinks, p0 + r + 1) : sinks;
    const attn_bs_seg seg = {.keys = attn_bs_range(0, sinks), .r0 = 0, .nrows = n, .hi = hi};
    attn_bs_visit(run, &seg);
    attn_bs_band(s, t, 0, n, band_width(p), sinks, t->ints, run);
}

static const attn_bs_pattern pattern = {.plan = plan, .visit = visit};

static bool allows(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                   int64_t i, int64_t j)
{
    (void)h;
    const int64_t d = attn_bs_pos(s, i) - j, w = (int64_t)p->v[P_WINDOW];
    const int64_t reach = (int64_t)p->v[P_CURRENT] == CURRENT_EXTRA ? w : w - 1;
    const bool recent = d <= reach && -d <= reach;
    return (j < (int64_t)p->v[P_SINKS] || recent) && attn_causal_allows(s, i, j);
}

const attn_ops attn_kind_sink = {
    .name = "sink",
    .summary = "StreamingLLM: s attention sinks plus a causal window of w recent keys",
    .definition =
        "Xiao et al. (2024), StreamingLLM. Query i at position p = i + S - T sees key j iff\n"
        "j < s (the sinks) or 0 <= p - j <= w (current=extra: the w keys before p and p\n"
        "itself) or 0 <= p - j < w (current=counted: p is one of the w), and j <= p (causal).\n"
        "Default current=extra follows the authors' released evaluation (eval_long_ppl.py:\n"
        "StartRecentKVCache trims the cache to s + w keys after each token, then the next\n"
        "token's key is appended); current=counted is the reading of evict_for_space (room\n"
        "made before the tokens arrive, run_streaming_llama.py) and of cache sizes that\n"
        "include the current token. A decode step sees the sinks and the last w (+1) keys.\n"
        "Without the causal mask (not in the paper): |p - j| within the same bound, both\n"
        "sides. Softmax over those keys, scale 1/sqrt(D). s = 0, current=counted: window.",
    .params = ATTN_PARAM_TABLE("sink", params),
    .check = attn_bs_accept,
    ATTN_BS_SLOTS(pattern),
    .allows = allows,
    .on_request =
        "a mask whose cost per score is window's and global's, which the default sweep measures",
};
