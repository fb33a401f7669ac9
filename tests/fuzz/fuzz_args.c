/*
 * fuzz_args.c — libFuzzer target: the command-line parser (harness/cli/args.c) and the run options
 * up to a checked point spec (spec.c), never measuring. The input's first byte picks the entry;
 * the rest, split at NUL bytes, is the argument vector (at most 64 words):
 *   0  bench_parse_opts with bench run's option table, then the values as bench run parses them
 *      (numbers, --mode, the measurement options), the kind, NAME=VALUE, the shape, the spec
 *   1  bench_parse_i64_list   2  bench_split_list   3  bench_parse_i64 / bench_parse_double
 * Every entry must return a status with a message, never crash or leak.
 */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "point.h"
#include "spec.h"

enum { MAX_WORDS = 64 };

/* bench run's options (cmd_run.c) without its file targets: parse, then build and check. */
static void run_like(int argc, char **argv)
{
    const char *n = NULL, *mode = NULL, *q_len = NULL, *kv_len = NULL, *heads = NULL;
    const char *kv_heads = NULL, *head_dim = NULL, *batch = NULL, *causal = NULL, *ds = NULL;
    bench_measure_opts m = {0};
    const bench_opt opts[] = {
        {"--n", "N", "", &n},
        {"--mode", "M", "", &mode},
        {"--q-len", "T", "", &q_len},
        {"--kv-len", "S", "", &kv_len},
        {"--heads", "H", "", &heads},
        {"--kv-heads", "G", "", &kv_heads},
        {"--head-dim", "D", "", &head_dim},
        {"--batch", "B", "", &batch},
        {"--causal", "C", "", &causal},
        {"--dataset", "NAME", "", &ds},
        BENCH_MEASURE_OPTS(&m),
    };
    const char *pos[1 + ATTN_MAX_PARAMS];
    int npos = 0;
    char msg[ATTN_MSG_LEN];
    if (bench_parse_opts(argc, argv, 0, opts, BENCH_COUNT(opts), pos, 1 + ATTN_MAX_PARAMS, &npos,
                         "run", msg, sizeof msg))
        return;
    bench_measure_cfg mc;
    int64_t vn = 1024, T = -1, S = -1, H = 8, G = 0, D = 64, B = 1, c = 0;
    bool decode = false;
    if (bench_measure_parse(&m, &mc, msg, sizeof msg) ||
        (mode && bench_parse_mode(mode, &decode, msg, sizeof msg)) ||
        (n && bench_parse_i64(n, "--n", 1, INT64_MAX / 2, &vn, msg, sizeof msg)) ||
        (q_len && bench_parse_i64(q_len, "--q-len", 1, INT64_MAX / 2, &T, msg, sizeof msg)) ||
        (kv_len && bench_parse_i64(kv_len, "--kv-len", 1, INT64_MAX / 2, &S, msg, sizeof msg)) ||
        (heads && bench_parse_i64(heads, "--heads", 1, 1 << 20, &H, msg, sizeof msg)) ||
        (kv_heads && bench_parse_i64(kv_heads, "--kv-heads", 1, 1 << 20, &G, msg, sizeof msg)) ||
        (head_dim && bench_parse_i64(head_dim, "--head-dim", 1, 1 << 20, &D, msg, sizeof msg)) ||
        (batch && bench_parse_i64(batch, "--batch", 1, 1 << 20, &B, msg, sizeof msg)) ||
        (causal && bench_parse_i64(causal, "--causal", 0, 1, &c, msg, sizeof msg)) || npos < 1)
        return;
    const attn_ops *ops = attn_kind_find(pos[0]);
    if (!ops) return;
    bench_point_spec spec = {.ops = ops, .params = attn_params_defaults(attn_kind_params(ops))};
    if (ds_parse(ds ? ds : "gaussian", &spec.dataset, &spec.dataset_params, msg, sizeof msg) ||
        spec.dataset->shape) /* a file: the tensor target reads files */
        return;
    for (int a = 1; a < npos; a++) {
        const char *eq = strchr(pos[a], '=');
        char name[64];
        if (!eq || (size_t)(eq - pos[a]) >= sizeof name) return;
        snprintf(name, sizeof name, "%.*s", (int)(eq - pos[a]), pos[a]);
        if (attn_param_index(attn_kind_params(ops), name) >= 0
                ? attn_param_set(attn_kind_params(ops), &spec.params, name, eq + 1, msg, sizeof msg)
                : ds_param_set(spec.dataset, &spec.dataset_params, name, eq + 1, msg, sizeof msg))
            return;
    }
    const bench_shape_req req = {.n = vn,
                                 .q_len = decode && T < 0 ? 1 : T,
                                 .kv_len = S,
                                 .batch = B,
                                 .heads = H,
                                 .kv_heads = G,
                                 .head_dim = D,
                                 .causal = c || decode,
                                 .decode = decode};
    if (bench_spec_build(&spec, &req, &mc, "", "", msg, sizeof msg)) return;
    bench_point_check(&spec, msg, sizeof msg);
    bench_point_bytes(&spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096) return 0;
    char *text = malloc(size); /* the words, NUL-terminated */
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char *argv[MAX_WORDS];
    int argc = 0;
    for (size_t at = 0; at < size - 1 && argc < MAX_WORDS; at += strlen(text + at) + 1)
        argv[argc++] = text + at;
    char msg[ATTN_MSG_LEN];
    const char *word = argc ? argv[0] : "";
    switch (data[0] % 4) {
    case 0: run_like(argc, argv); break;
    case 1: {
        int64_t *v = NULL;
        int n = 0;
        if (!bench_parse_i64_list(word, "--n", 1, INT64_MAX / 2, &v, &n, msg, sizeof msg)) free(v);
        break;
    }
    case 2: {
        char **items = NULL;
        int n = 0;
        if (!bench_split_list(word, "--kinds", &items, &n, msg, sizeof msg))
            bench_free_strings(items, n);
        break;
    }
    default: {
        int64_t i;
        double d;
        bench_parse_i64(word, "--x", INT64_MIN, INT64_MAX, &i, msg, sizeof msg);
        bench_parse_double(word, "--t", -1e300, 1e300, &d, msg, sizeof msg);
    }
    }
    free(text);
    return 0;
}
