/* cmd_run.c — `bench run KIND [NAME=VALUE ...]`: one point, generated or from --input, printed
 * as one result row; optionally the output tensor (--output) and a results row (--out). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_suggest.h"
#include "bench_mpi.h"
#include "commands.h"
#include "machine.h"
#include "point.h"
#include "signals.h"
#include "spec.h"
#include "table.h"
#include "targets.h"
#include "yardstick.h"

/* The options of bench run as text (NULL: not given). */
typedef struct run_opts {
    const char *help, *n, *mode, *q_len, *kv_len, *heads, *kv_heads, *head_dim, *batch, *causal;
    const char *dataset, *input, *output, *results, *pass;
    const char *dtype;
    bench_measure_opts measure;
} run_opts;

static const char run_description[] =
    "Measures one attention kind at one shape and prints one result row: median time,\n"
    "GFLOP/s, exact workspace, peak RSS, and the error against exact float64 attention.\n"
    "NAME=VALUE sets a parameter of the kind (bench list) or of the dataset (bench\n"
    "datasets). With --input the shape comes from the file (--q-len keeps its newest\n"
    "queries), so you can check a kind on your own tensors:\n"
    "  bench run full --causal 1 --input qkv.h5 --output o.h5\n"
    "Decode: one step of incremental decoding, the time is per step:\n"
    "  bench run gqa --mode decode --n 32768 --heads 32 --kv-heads 8 --head-dim 128\n"
    "Training: --pass backward times dq, dk, dv given dout (the file's 'do' or generated);\n"
    "--pass train times the forward and the backward together:\n"
    "  bench run full --pass backward --input qkv.h5 --output grads.h5";

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
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s is ambiguous: kind '%s' and dataset '%s' "
                         "both have a parameter '%s'",
                         arg, spec->ops->name, spec->dataset->name, name);
    if (!in_kind && !in_dataset) {
        const attn_param_table *tables[] = {attn_kind_params(spec->ops), &spec->dataset->params};
        char hint[96];
        attn_suggest s = attn_suggest_start(name);
        for (int t = 0; t < 2; t++)
            for (int n = 0; n < tables[t]->count; n++)
                attn_suggest_offer(&s, tables[t]->defs[n].name);
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "kind '%s' has no parameter '%s', nor has dataset '%s' (%s)",
                         spec->ops->name, name, spec->dataset->name,
                         attn_suggest_hint(&s, "see bench list, bench datasets", hint,
                                           sizeof hint));
    }
    if (in_kind)
        return attn_param_set(attn_kind_params(spec->ops), &spec->params, name, eq + 1, msg,
                              msg_len);
    return ds_param_set(spec->dataset, &spec->dataset_params, name, eq + 1, msg, msg_len);
}

/* The kind (positional 0), the dataset (--dataset, or --input) and the NAME=VALUE parameters
 * (positionals 1..) into spec. */
static attn_status choose(const run_opts *o, const char **pos, int npos, bench_point_spec *spec,
                          char *msg, size_t msg_len)
{
    if (npos < 1) return attn_fail(ATTN_EINVAL, msg, msg_len, "run needs a KIND (see bench list)");
    const attn_ops *ops = attn_kind_find(pos[0]);
    if (!ops) return bench_unknown_kind(pos[0], "", msg, msg_len);
    *spec = (bench_point_spec){.ops = ops, .params = attn_params_defaults(attn_kind_params(ops))};
    if (o->input && o->dataset)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--input FILE is --dataset file=FILE: give one of them");
    if (o->input) {
        spec->dataset = ds_find("file");
        spec->dataset_params = ds_params_defaults(spec->dataset);
        spec->dataset_params.path = o->input;
    } else if (ds_parse(o->dataset ? o->dataset : "gaussian", &spec->dataset, &spec->dataset_params,
                        msg, msg_len)) {
        return ATTN_EINVAL;
    }
    for (int a = 1; a < npos; a++) {
        const size_t len = strcspn(pos[a], "=");
        for (int e = 1; e < a; e++)
            if (strcspn(pos[e], "=") == len && strncmp(pos[e], pos[a], len) == 0)
                return attn_fail(ATTN_EINVAL, msg, msg_len, "%.*s given twice ('%s', '%s')",
                                 (int)len, pos[a], pos[e], pos[a]);
        if (set_param(spec, pos[a], msg, msg_len)) return ATTN_EINVAL;
    }
    return ATTN_OK;
}

/* The mode, measurement and shape options into mc and req (defaults: n 1024, 8 heads of dim 64,
 * batch 1, prefill; decode: q_len 1, causal). A dataset that gives the shape (a file) is checked
 * against the options afterwards (check_given_shape). */
static attn_status parse_shape(const run_opts *o, bench_measure_cfg *mc, bench_shape_req *req,
                               char *msg, size_t msg_len)
{
    int64_t n = 1024, T = -1, S = -1, H = 8, Hkv = 0, D = 64, B = 1, causal = 0;
    bool decode = false;
    if (o->mode && bench_parse_mode(o->mode, &decode, msg, msg_len)) return ATTN_EINVAL;
    if (decode) T = 1, causal = 1;
    if (bench_measure_parse(&o->measure, mc, msg, msg_len) ||
        (o->n && bench_parse_i64(o->n, "--n", 1, INT64_MAX / 2, &n, msg, msg_len)) ||
        (o->q_len && bench_parse_i64(o->q_len, "--q-len", 1, INT64_MAX / 2, &T, msg, msg_len)) ||
        (o->kv_len && bench_parse_i64(o->kv_len, "--kv-len", 1, INT64_MAX / 2, &S, msg, msg_len)) ||
        (o->heads && bench_parse_i64(o->heads, "--heads", 1, 1 << 20, &H, msg, msg_len)) ||
        (o->kv_heads &&
         bench_parse_i64(o->kv_heads, "--kv-heads", 1, 1 << 20, &Hkv, msg, msg_len)) ||
        (o->head_dim && bench_parse_i64(o->head_dim, "--head-dim", 1, 1 << 20, &D, msg, msg_len)) ||
        (o->batch && bench_parse_i64(o->batch, "--batch", 1, 1 << 20, &B, msg, msg_len)) ||
        (o->causal && bench_parse_i64(o->causal, "--causal", 0, 1, &causal, msg, msg_len)))
        return ATTN_EINVAL;
    attn_dtype dtype = ATTN_F32;
    if (o->dtype && bench_parse_dtype(o->dtype, &dtype, msg, msg_len)) return ATTN_EINVAL;
    *req = (bench_shape_req){.n = n,
                             .q_len = T,
                             .kv_len = S,
                             .batch = B,
                             .heads = H,
                             .kv_heads = Hkv,
                             .head_dim = D,
                             .causal = causal != 0,
                             .decode = decode,
                             .dtype = dtype};
    return ATTN_OK;
}

/* A dataset that gives the shape (a file): the shape options may repeat it, not change it. */
static attn_status check_given_shape(const run_opts *o, const bench_shape_req *req,
                                     const attn_shape *s, char *msg, size_t msg_len)
{
    const struct {
        const char *given, *name;
        int64_t asked, has;
    } opts[] = {{o->n, "--n", req->n, s->S},
                {o->n && !o->q_len && !req->decode ? o->n : NULL, "--n", req->n, s->T},
                {o->kv_len, "--kv-len", req->kv_len, s->S},
                {o->heads, "--heads", req->heads, s->H},
                {o->kv_heads, "--kv-heads", req->kv_heads, s->Hkv},
                {o->head_dim, "--head-dim", req->head_dim, s->D},
                {o->batch, "--batch", req->batch, s->B}};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (opts[i].given && opts[i].asked != opts[i].has)
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "%s gives the shape and the data, and it has %s %lld, not %lld: drop "
                             "%s or give the file's value (--q-len keeps its newest queries)",
                             o->input ? "--input" : "--dataset file=PATH", opts[i].name + 2,
                             (long long)opts[i].has, (long long)opts[i].asked, opts[i].name);
    return ATTN_OK;
}

/* --kv-heads asks for a number of KV heads the kind must run with, or is refused: mqa has one. */
static attn_status check_kv_heads(const run_opts *o, const bench_point_spec *spec,
                                  const bench_shape_req *req, char *msg, size_t msg_len)
{
    if (!o->kv_heads || spec->dataset->shape) return ATTN_OK; /* a file: check_given_shape */
    const int64_t Hkv = attn_kind_kv_heads(spec->ops, req->heads, req->kv_heads);
    if (Hkv == req->kv_heads) return ATTN_OK;
    return attn_fail(ATTN_EINVAL, msg, msg_len,
                     "%s has %lld KV head%s, not --kv-heads %lld: leave --kv-heads out, or run gqa "
                     "or full with --kv-heads %lld",
                     spec->ops->name, (long long)Hkv, Hkv == 1 ? "" : "s", (long long)req->kv_heads,
                     (long long)req->kv_heads);
}

/* Refuse an --output or --out that cannot be written, that is the input file, a results file
 * (--output) or the other one of the two, before anything is measured (targets.h). */
static attn_status check_targets(const run_opts *o, const bench_point_spec *spec, char *msg,
                                 size_t msg_len)
{
    const bench_input inputs[] = {{"the input", spec->dataset_params.path}, {"--out", o->results}};
    if (o->output &&
        (bench_check_target(o->output, "--output", BENCH_TARGET_TENSORS, inputs, 2, msg, msg_len) ||
         bench_tensor_check_target(o->output, msg, msg_len)))
        return ATTN_EINVAL;
    if (o->results &&
        bench_check_target(o->results, "--out", BENCH_TARGET_RESULTS, inputs, 1, msg, msg_len))
        return ATTN_EINVAL;
    return ATTN_OK;
}

/* Append pt as a run of its own to store, then close it; the run's sgemm into *sgemm. Returns 0,
 * or the exit status of a failure (reported). */
static int store_point(bench_store *store, int argc, char **argv, const bench_measure_cfg *mc,
                       bench_point *pt, const double *samples, int64_t nsamples, double *sgemm)
{
    bench_run run = bench_new_run(argc, argv, mc);
    *sgemm = run.sgemm_gflops;
    bench_yardstick_seed(run.threads, run.sgemm_gflops, run.mem_bandwidth_gbs);
    bench_yardstick_fill(pt);          /* and the peak of the point's (threads, isa) */
    if (bench_stop_signal()) return 0; /* the caller closes the store as interrupted */
    char msg[ATTN_MSG_LEN];
    int exit_code = 0;
    bench_store_set_planned(store, 1);
    if (bench_store_begin_run(store, &run, msg, sizeof msg) ||
        bench_store_add_point(store, pt, samples, nsamples, msg, sizeof msg))
        exit_code = bench_fail(ATTN_EFAIL, msg);
    bench_store_close(store);
    return exit_code;
}

/* The kind's weights the point used, beside `o` in path (--output): the data's or drawn again
 * from the kind's seed (the same values), each a dataset of its name with attributes kind,
 * summary and source (where it came from: file, seed). */
static attn_status write_weights(const char *path, const bench_point_spec *spec, char *msg,
                                 size_t msg_len)
{
    attn_params p = spec->params;
    float *owned[ATTN_MAX_WEIGHTS];
    const char *from[ATTN_MAX_WEIGHTS];
    attn_status st = bench_point_weights(spec, &p, owned, from, msg, msg_len);
    attn_weight w[ATTN_MAX_WEIGHTS];
    const int n = st ? 0 : attn_kind_weights(spec->ops, &spec->shape, &p, w);
    for (int i = 0; i < n && !st; i++) {
        const char *names[] = {"kind", "summary", "source"};
        const char *values[] = {spec->ops->name, w[i].summary, from[i]};
        st = bench_tensor_add(path, w[i].name, w[i].rank, w[i].dims, p.w[i], names, values, 3, msg,
                              msg_len);
    }
    attn_weights_free(owned);
    return st;
}

/* A signal stopped the run before its point was stored in results (--out; a new file is
 * discarded): one line. The exit status: 128 + the signal. */
static int run_interrupted(bench_store *store, const char *results)
{
    const int sig = bench_stop_signal();
    bench_store_interrupt(store, sig, NULL);
    if (!store)
        fprintf(stderr, "bench: interrupted (SIG%s): the point was not finished\n",
                bench_signal_name(sig));
    else
        fprintf(stderr,
                "bench: interrupted (SIG%s): the point was not stored; nothing written to %s\n",
                bench_signal_name(sig), results);
    return 128 + sig;
}

/* Measure the point; write its output (--output) and its row (store: --out); print the row. A
 * SIGINT or SIGTERM meanwhile abandons the point (run_interrupted). */
static int measure(int argc, char **argv, const run_opts *o, const bench_point_spec *spec,
                   const bench_measure_cfg *mc, bench_store *store)
{
    char msg[ATTN_MSG_LEN];
    bench_point pt;
    double *samples = NULL;
    int64_t nsamples = 0;
    float *out = NULL;
    bench_signals_catch();
    attn_status st = bench_point_run_steady(spec, &pt, &samples, &nsamples, o->output ? &out : NULL,
                                            msg, sizeof msg);
    if (bench_mpi_rank() != 0) { /* under mpirun rank 0 prints and writes */
        free(samples);
        free(out);
        return st == ATTN_OK ? 0 : 1;
    }
    if (bench_stop_signal()) {
        free(samples);
        free(out);
        return run_interrupted(store, o->results);
    }
    int exit_code = 0;
    double sgemm = NAN; /* measured only when the point goes into a results file */
    if (st == ATTN_OK && o->output) {
        const attn_shape *s = &spec->shape;
        const int64_t od[4] = {s->B, s->H, s->T, s->D}, kd[4] = {s->B, s->Hkv, s->S, s->D};
        st = bench_tensor_write(o->output, "o", od, out, msg, sizeof msg);
        const char *names[3] = {"dq", "dk", "dv"};
        for (int g = 0; g < 3 && st == ATTN_OK && spec->keep_grads && spec->keep_grads[g]; g++)
            st = bench_tensor_add(o->output, names[g], 4, g ? kd : od, spec->keep_grads[g], NULL,
                                  NULL, 0, msg, sizeof msg);
        if (st == ATTN_OK) st = write_weights(o->output, spec, msg, sizeof msg);
    }
    if (spec->keep_grads)
        for (int g = 0; g < 3; g++) free(spec->keep_grads[g]);
    if (store) exit_code = store_point(store, argc, argv, mc, &pt, samples, nsamples, &sgemm);
    if (bench_stop_signal() && !exit_code) { /* during the yardsticks, before the run was begun */
        free(samples);
        free(out);
        return run_interrupted(store, o->results);
    }
    if (st != ATTN_OK) exit_code = bench_fail(st, msg);
    else {
        const bench_table_cols cols = bench_table_columns(&pt, 1);
        bench_table_header(stdout, &cols);
        bench_table_row(stdout, &pt, sgemm, &cols);
        bench_table_comm(stdout, &pt, bench_mpi_size());
        bench_warn_noisy(&pt, samples, nsamples, true);
        /* a NaN or Inf out of finite inputs is a failure; asked for (--allow-nonfinite), not */
        if (bench_warn_nonfinite(&pt) && !mc->allow_nonfinite && !exit_code) exit_code = 1;
    }
    free(samples);
    free(out);
    return exit_code;
}

/* Room for the option table of bench run. */
enum { MAX_OPTS = 40 };

/* The option table of bench run, the values going into o: into opts (room for MAX_OPTS), the
 * number of options returned. */
static int run_options(run_opts *o, bench_opt *opts)
{
    const bench_opt table[] = {
        {"--n", "N", "sequence length: q_len = kv_len = N (default 1024); decode: kv_len", &o->n},
        {"--mode", "MODE",
         "prefill (all n queries) or decode (--q-len newest queries against a "
         "KV cache of n keys; default prefill)",
         &o->mode},
        {"--q-len", "T", "queries per head (overrides --n; decode default 1)", &o->q_len},
        {"--kv-len", "S", "keys per head (overrides --n): cross attention when != q_len",
         &o->kv_len},
        {"--heads", "H", "query heads (default 8)", &o->heads},
        {"--kv-heads", "G",
         "key/value heads, divides --heads (default: --heads; gqa: its own grouping; mqa has 1 "
         "and refuses another)",
         &o->kv_heads},
        {"--head-dim", "D", "head dimension (default 64)", &o->head_dim},
        {"--batch", "B", "batch size (default 1)", &o->batch},
        {"--causal", "0|1", "causal mask, last query aligned with last key (default 0; decode 1)",
         &o->causal},
        {"--dataset", "NAME",
         "input generator, or file=FILE.h5 (default gaussian; see bench "
         "datasets)",
         &o->dataset},
        {"--input", "FILE.h5",
         "read q [B,H,T,D], k, v [B,Hkv,S,D] (float) from FILE: the same "
         "as --dataset file=FILE.h5",
         &o->input},
        {"--output", "FILE.h5",
         "write the output as dataset 'o' [B,H,T,D] into FILE (--pass backward, train: and dq "
         "[B,H,T,D], dk, dv [B,Hkv,S,D])",
         &o->output},
        {"--pass", "PASS",
         "forward, backward (dq, dk, dv given dout: the --input file's 'do' [B,H,T,D], else "
         "generated) or train (forward and backward; default forward)",
         &o->pass},
        {"--dtype", "f32|bf16|f16",
         "storage of q, k, v (default f32): the inputs rounded to it, out stays float32; "
         "rel_err against the float64 result of the unrounded inputs",
         &o->dtype},
        {"--out", "RESULTS.h5", "also append this point as a run to a results file", &o->results},
        {"--help", NULL, "this help", &o->help},
        BENCH_MEASURE_OPTS(&o->measure),
    };
    _Static_assert(BENCH_COUNT(table) <= MAX_OPTS, "room for the options");
    memcpy(opts, table, sizeof table);
    return BENCH_COUNT(table);
}

int bench_cmd_run(int argc, char **argv)
{
    run_opts o = {0};
    bench_opt opts[MAX_OPTS];
    const int nopts = run_options(&o, opts);
    const char *pos[1 + ATTN_MAX_PARAMS];
    int npos = 0;
    char msg[ATTN_MSG_LEN];
    if (bench_parse_opts(argc, argv, 2, opts, nopts, pos, 1 + ATTN_MAX_PARAMS, &npos, "run", msg,
                         sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (o.help) {
        bench_print_help("bench run KIND [NAME=VALUE ...] [options]", run_description, opts, nopts);
        return 0;
    }
    bench_point_spec spec;
    bench_measure_cfg mc;
    bench_shape_req req;
    /* under mpirun: a collective kind (ring) runs on every rank, rank 0 reading --input and
     * writing --output and --out; any other kind runs on rank 0 alone */
    const bool root = bench_mpi_rank() == 0;
    float *grads[3] = {NULL, NULL, NULL};
    if (choose(&o, pos, npos, &spec, msg, sizeof msg) ||
        (o.pass && bench_parse_pass(o.pass, &spec.pass, msg, sizeof msg)) ||
        parse_shape(&o, &mc, &req, msg, sizeof msg) ||
        check_kv_heads(&o, &spec, &req, msg, sizeof msg) ||
        (root && check_targets(&o, &spec, msg, sizeof msg)) ||
        bench_spec_build(&spec, &req, &mc, spec.dataset_params.path, "", msg, sizeof msg) ||
        (spec.dataset->shape && check_given_shape(&o, &req, &spec.shape, msg, sizeof msg)) ||
        bench_point_check(&spec, msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (!root && !spec.ops->distributed) return 0;
    if (o.output && spec.pass != BENCH_PASS_FORWARD) spec.keep_grads = grads;
    attn_status fin = ATTN_OK;
    if (root && !mc.allow_nonfinite &&
        (fin = bench_dataset_check_finite(spec.dataset, &spec.dataset_params, msg, sizeof msg)))
        return bench_fail(fin, msg);
    bench_store *store = NULL;
    if (root && o.results && bench_store_open(o.results, &store, msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    return measure(argc, argv, &o, &spec, &mc, store);
}
