/* cmd_run.c — `bench run KIND [NAME=VALUE ...]`: one point, generated or from --input, printed
 * as one result row; optionally the output tensor (--output) and a results row (--out). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "machine.h"
#include "point.h"
#include "table.h"

/* NAME=VALUE after the kind: a parameter of the kind or of the dataset (not both). */
static attn_status set_param(bench_point_spec *spec, const char *arg, char *msg, size_t msg_len)
{
    const char *eq = strchr(arg, '=');
    char name[64];
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof name)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "expected NAME=VALUE after the kind, got '%s'",
                         arg);
    snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
    const bool in_kind = attn_param_index(attn_kind_params(spec->ops), name) >= 0;
    const bool in_dataset = ds_param_index(spec->dataset, name) >= 0;
    if (in_kind && in_dataset)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s is ambiguous: kind '%s' and dataset '%s' "
                         "both have a parameter '%s'", arg, spec->ops->name, spec->dataset->name,
                         name);
    if (!in_kind && !in_dataset)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "kind '%s' has no parameter '%s', nor has "
                         "dataset '%s' (see bench list, bench datasets)", spec->ops->name, name,
                         spec->dataset->name);
    if (in_kind)
        return attn_param_set(attn_kind_params(spec->ops), &spec->params, name, eq + 1, msg, msg_len);
    return ds_param_set(spec->dataset, &spec->dataset_params, name, eq + 1, msg, msg_len);
}

int bench_cmd_run(int argc, char **argv)
{
    const char *help = NULL, *n_s = NULL, *t_s = NULL, *s_s = NULL, *h_s = NULL, *hkv_s = NULL;
    const char *d_s = NULL, *b_s = NULL, *causal_s = NULL, *dataset_s = NULL, *input = NULL;
    const char *output = NULL, *results = NULL, *mode_s = NULL;
    bench_measure_opts mo = {0};
    bench_opt opts[16 + BENCH_MEASURE_NOPTS] = {
        {"--n", "N", "sequence length: q_len = kv_len = N (default 1024); decode: kv_len", &n_s},
        {"--mode", "MODE", "prefill (all n queries) or decode (--q-len newest queries against a "
                           "KV cache of n keys; default prefill)", &mode_s},
        {"--q-len", "T", "queries per head (overrides --n; decode default 1)", &t_s},
        {"--kv-len", "S", "keys per head (overrides --n): cross attention when != q_len", &s_s},
        {"--heads", "H", "query heads (default 8)", &h_s},
        {"--kv-heads", "G", "key/value heads, divides --heads (default: --heads; mqa: 1, gqa: its "
                            "own grouping)", &hkv_s},
        {"--head-dim", "D", "head dimension (default 64)", &d_s},
        {"--batch", "B", "batch size (default 1)", &b_s},
        {"--causal", "0|1", "causal mask, last query aligned with last key (default 0; decode 1)",
         &causal_s},
        {"--dataset", "NAME", "input generator, or file=FILE.h5 (default gaussian; see bench "
                              "datasets)", &dataset_s},
        {"--input", "FILE.h5", "read q [B,H,T,D], k, v [B,Hkv,S,D] (float) from FILE: the same "
                               "as --dataset file=FILE.h5", &input},
        {"--output", "FILE.h5", "write the output as dataset 'o' [B,H,T,D] into FILE", &output},
        {"--out", "RESULTS.h5", "also append this point as a run to a results file", &results},
        {"--help", NULL, "this help", &help},
    };
    int nopts = 14;
    bench_measure_opt_table(&mo, opts + nopts);
    nopts += BENCH_MEASURE_NOPTS;
    const char *pos[1 + ATTN_MAX_PARAMS];
    int npos = 0;
    char msg[ATTN_MSG_LEN];
    if (bench_parse_opts(argc, argv, 2, opts, nopts, pos, 1 + ATTN_MAX_PARAMS, &npos, "run", msg,
                         sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (help) {
        bench_print_help(
            "bench run KIND [NAME=VALUE ...] [options]",
            "Measures one attention kind at one shape and prints one result row: median time,\n"
            "GFLOP/s, exact workspace, peak RSS, and the error against exact float64 attention.\n"
            "NAME=VALUE sets a parameter of the kind (bench list) or of the dataset (bench\n"
            "datasets). With --input the shape comes from the file (--q-len keeps its newest\n"
            "queries), so you can check a kind on your own tensors:\n"
            "  bench run full --causal 1 --input qkv.h5 --output o.h5\n"
            "Decode: one step of incremental decoding, the time is per step:\n"
            "  bench run gqa --mode decode --n 32768 --heads 32 --kv-heads 8 --head-dim 128",
            opts, nopts);
        return 0;
    }
    if (npos < 1) return bench_fail(ATTN_EINVAL, "run needs a KIND (see bench list)");
    const attn_ops *ops = attn_kind_find(pos[0]);
    if (!ops) {
        snprintf(msg, sizeof msg, "unknown kind '%s' (see bench list)", pos[0]);
        return bench_fail(ATTN_EINVAL, msg);
    }
    bench_point_spec spec = {.ops = ops, .params = attn_params_defaults(attn_kind_params(ops))};
    if (input && dataset_s)
        return bench_fail(ATTN_EINVAL, "--input FILE is --dataset file=FILE: give one of them");
    if (input) {
        spec.dataset = ds_find("file");
        spec.dataset_params = ds_params_defaults(spec.dataset);
        spec.dataset_params.path = input;
    } else if (ds_parse(dataset_s ? dataset_s : "gaussian", &spec.dataset, &spec.dataset_params,
                        msg, sizeof msg)) {
        return bench_fail(ATTN_EINVAL, msg);
    }
    for (int a = 1; a < npos; a++)
        if (set_param(&spec, pos[a], msg, sizeof msg)) return bench_fail(ATTN_EINVAL, msg);

    bench_measure_cfg mc;
    int64_t n = 1024, T = -1, S = -1, H = 8, Hkv = 0, D = 64, B = 1, causal = 0;
    bool decode = false;
    if (mode_s && bench_parse_mode(mode_s, &decode, msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (decode) T = 1, causal = 1;
    if (bench_measure_parse(&mo, &mc, msg, sizeof msg) ||
        (n_s && bench_parse_i64(n_s, "--n", 1, INT64_MAX / 2, &n, msg, sizeof msg)) ||
        (t_s && bench_parse_i64(t_s, "--q-len", 1, INT64_MAX / 2, &T, msg, sizeof msg)) ||
        (s_s && bench_parse_i64(s_s, "--kv-len", 1, INT64_MAX / 2, &S, msg, sizeof msg)) ||
        (h_s && bench_parse_i64(h_s, "--heads", 1, 1 << 20, &H, msg, sizeof msg)) ||
        (hkv_s && bench_parse_i64(hkv_s, "--kv-heads", 1, 1 << 20, &Hkv, msg, sizeof msg)) ||
        (d_s && bench_parse_i64(d_s, "--head-dim", 1, 1 << 20, &D, msg, sizeof msg)) ||
        (b_s && bench_parse_i64(b_s, "--batch", 1, 1 << 20, &B, msg, sizeof msg)) ||
        (causal_s && bench_parse_i64(causal_s, "--causal", 0, 1, &causal, msg, sizeof msg)))
        return bench_fail(ATTN_EINVAL, msg);
    const bool fixed = spec.dataset->shape != NULL; /* the file gives the shape */
    if (fixed && (n_s || s_s || h_s || hkv_s || d_s || b_s)) {
        snprintf(msg, sizeof msg, "%s gives the shape and the data: drop --n, --kv-len, --heads, "
                 "--kv-heads, --head-dim, --batch (--q-len keeps its newest queries)",
                 input ? "--input" : "--dataset file=PATH");
        return bench_fail(ATTN_EINVAL, msg);
    }
    if (output && (bench_check_writable(output, "--output", msg, sizeof msg) ||
                   bench_tensor_check_target(output, msg, sizeof msg)))
        return bench_fail(ATTN_EINVAL, msg);
    if (results && bench_check_writable(results, "--out", msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);

    spec.shape = attn_shape_init(B, H, attn_kind_kv_heads(ops, H, Hkv), T > 0 ? T : n,
                                 S > 0 ? S : n, D, causal);
    if (fixed) {
        spec.shape.T = T > 0 ? T : 0; /* 0: every query of the file */
        if (spec.dataset->shape(&spec.dataset_params, &spec.shape, msg, sizeof msg))
            return bench_fail(ATTN_EINVAL, msg);
        if (attn_kind_kv_heads(ops, spec.shape.H, spec.shape.Hkv) != spec.shape.Hkv) {
            snprintf(msg, sizeof msg, "%s has %lld KV heads; kind %s runs with %lld",
                     spec.dataset_params.path, (long long)spec.shape.Hkv, ops->name,
                     (long long)attn_kind_kv_heads(ops, spec.shape.H, spec.shape.Hkv));
            return bench_fail(ATTN_EINVAL, msg);
        }
    }
    spec.shape.decode = decode;
    spec.shape.threads = mc.threads;
    attn_params_resolve(ops, &spec.shape, &spec.params);
    spec.seed = mc.seed;
    spec.timing = mc.timing;
    spec.accuracy_rows = mc.accuracy_rows;
    if (bench_point_check(&spec, msg, sizeof msg)) return bench_fail(ATTN_EINVAL, msg);
    bench_store *store = NULL;
    if (results && bench_store_open(results, &store, msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);

    bench_point pt;
    double *samples = NULL;
    int64_t nsamples = 0;
    float *out = NULL;
    attn_status st = bench_point_run(&spec, NULL, NULL, NULL, &pt, &samples, &nsamples,
                                     output ? &out : NULL, msg, sizeof msg);
    int exit_code = 0;
    double sgemm = NAN; /* measured only when the point goes into a results file */
    if (st == ATTN_OK && output) {
        int64_t od[4] = {spec.shape.B, spec.shape.H, spec.shape.T, spec.shape.D};
        st = bench_tensor_write(output, "o", od, out, msg, sizeof msg);
    }
    if (store) {
        bench_run run = bench_new_run(argc, argv, &mc);
        sgemm = run.sgemm_gflops;
        char smsg[ATTN_MSG_LEN];
        if (bench_store_begin_run(store, &run, smsg, sizeof smsg) ||
            bench_store_add_point(store, &pt, samples, nsamples, smsg, sizeof smsg))
            exit_code = bench_fail(ATTN_EFAIL, smsg);
        bench_store_close(store);
    }
    if (st != ATTN_OK) exit_code = bench_fail(st, msg);
    else {
        const bool retrieval = bench_table_has_retrieval(&pt, 1);
        bench_table_header(stdout, retrieval);
        bench_table_row(stdout, &pt, sgemm, retrieval);
        bench_warn_noisy(&pt, true);
    }
    free(samples);
    free(out);
    return exit_code;
}
