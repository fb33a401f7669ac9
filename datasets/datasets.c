/* datasets.c — the list of datasets, their parameters, and helpers the generators share. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn_suggest.h"
#include "datasets.h"
#include "registry_datasets.h"

#define DS_DECLARE(name) extern const ds_ops ds_##name;
DS_DATASETS(DS_DECLARE)
#undef DS_DECLARE

#define DS_ADDRESS(name) &ds_##name,
static const ds_ops *const all[] = {DS_DATASETS(DS_ADDRESS)};
#undef DS_ADDRESS

int ds_count(void) { return (int)(sizeof all / sizeof all[0]); }

const ds_ops *ds_at(int index) { return index >= 0 && index < ds_count() ? all[index] : NULL; }

const ds_ops *ds_find(const char *name)
{
    for (int n = 0; n < ds_count(); n++)
        if (strcmp(all[n]->name, name) == 0) return all[n];
    return NULL;
}

attn_status ds_parse(const char *item, const ds_ops **ops, ds_params *p, char *msg, size_t msg_len)
{
    const char *eq = strchr(item, '=');
    char name[64];
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - item) : (int)strlen(item), item);
    *ops = ds_find(name);
    if (!*ops) {
        char hint[96];
        attn_suggest s = attn_suggest_start(name);
        for (int n = 0; n < ds_count(); n++) attn_suggest_offer(&s, all[n]->name);
        return attn_fail(ATTN_EINVAL, msg, msg_len, "--dataset: unknown dataset '%s' (%s)", name,
                         attn_suggest_hint(&s, "see bench datasets", hint, sizeof hint));
    }
    if ((*ops)->takes_path && (!eq || eq[1] == '\0'))
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--dataset: %s needs a path: --dataset %s=PATH.h5", name, name);
    if (!(*ops)->takes_path && eq)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--dataset: %s takes no '=%s' (set its parameters with NAME=VALUE in "
                         "bench run, --set NAME=V1,V2 in bench sweep)",
                         name, eq + 1);
    *p = ds_params_defaults(*ops);
    p->path = (*ops)->takes_path ? eq + 1 : NULL;
    return ATTN_OK;
}

static attn_params values(const ds_params *p)
{
    attn_params a;
    memcpy(a.v, p->v, sizeof a.v);
    return a;
}

ds_params ds_params_defaults(const ds_ops *ops)
{
    attn_params a = attn_params_defaults(&ops->params);
    ds_params p = {.path = NULL};
    memcpy(p.v, a.v, sizeof p.v);
    return p;
}

int ds_param_index(const ds_ops *ops, const char *name)
{
    return attn_param_index(&ops->params, name);
}

attn_status ds_param_set(const ds_ops *ops, ds_params *p, const char *name, const char *value,
                         char *msg, size_t msg_len)
{
    attn_params a = values(p);
    if (attn_param_set(&ops->params, &a, name, value, msg, msg_len) != ATTN_OK) return ATTN_EINVAL;
    memcpy(p->v, a.v, sizeof p->v);
    return ATTN_OK;
}

int ds_params_format(const ds_ops *ops, const ds_params *p, char *buf, size_t len)
{
    const attn_params a = values(p);
    int w = 0;
    if (len) buf[0] = '\0';
    if (ops->takes_path)
        w = snprintf(buf, len, "path=%s%s", p->path ? p->path : "", ops->params.count ? "," : "");
    if (w >= 0 && (size_t)w < len)
        w += attn_params_format(&ops->params, &a, buf + w, len - (size_t)w);
    return w;
}

int64_t ds_sample_rows(int64_t total, int64_t wanted, uint64_t seed, int64_t *rows)
{
    if (total <= wanted) {
        for (int64_t r = 0; r < total; r++) rows[r] = r;
        return total;
    }
    ds_rng rng = ds_rng_stream(seed, 0xacc);
    for (int64_t r = 0; r < wanted; r++) /* one row in each of `wanted` equal strata */
        rows[r] = ds_stratum(r, wanted, total, ds_rng_uniform(&rng));
    return wanted;
}

int64_t ds_plants_list(const ds_ops *ops, const attn_shape *s, const ds_params *p, uint64_t seed,
                       ds_plant **list)
{
    *list = NULL;
    const int64_t n = ops->plants ? ops->plants(s, p, seed, NULL) : 0;
    if (n <= 0) return n;
    if (!(*list = malloc((size_t)n * sizeof **list))) return -1;
    ops->plants(s, p, seed, *list);
    return n;
}

void ds_fill_normal(float *x, int64_t n, double sigma, uint64_t seed, uint64_t stream)
{
    enum { CHUNK = 1 << 16 }; /* one stream per chunk: parallel and deterministic */
    const int64_t chunks = (n + CHUNK - 1) / CHUNK;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; c++) {
        ds_rng r = ds_rng_stream(seed, stream * 0x100000000ULL + (uint64_t)c);
        int64_t end = (c + 1) * CHUNK < n ? (c + 1) * CHUNK : n;
        for (int64_t e = c * CHUNK; e < end; e++) x[e] = (float)(sigma * ds_rng_normal(&r));
    }
}

void ds_from_latent(const attn_shape *s, int threads, const float *x, float *q, float *k)
{
    const int64_t L = ds_latent_len(s), D = s->D;
    const size_t row = (size_t)D * sizeof(float);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t bh = 0; bh < s->B * s->H; bh++) {
        const float *xg = x + ds_kv_head(s, bh) * L * D;
        memcpy(q + bh * s->T * D, xg + (L - s->T) * D, (size_t)s->T * row);
    }
    if (x == k) return; /* L == S: the keys are the latent itself */
    for (int64_t bg = 0; bg < s->B * s->Hkv; bg++)
        memcpy(k + bg * s->S * D, x + (bg * L + L - s->S) * D, (size_t)s->S * row);
}

attn_status ds_fill_sequence(const attn_shape *s, uint64_t seed, int threads, double sigma,
                             double rho, float *q, float *k, const char *who, char *msg,
                             size_t msg_len)
{
    const int64_t L = ds_latent_len(s), D = s->D, heads = s->B * s->Hkv;
    const double c = sqrt(1.0 - rho * rho);
    float *x = L == s->S ? k : malloc((size_t)(heads * L * D) * sizeof *x);
    if (!x)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: out of memory for %lld positions", who,
                         (long long)L);
    ds_fill_normal(x, heads * L * D, sigma, seed, 1);
    if (rho != 0) {
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int64_t bg = 0; bg < heads; bg++) {
            float *xg = x + bg * L * D;
            for (int64_t t = 1; t < L; t++)
                for (int64_t d = 0; d < D; d++)
                    xg[t * D + d] = (float)(rho * xg[(t - 1) * D + d] + c * xg[t * D + d]);
        }
    }
    ds_from_latent(s, threads, x, q, k);
    if (x != k) free(x);
    return ATTN_OK;
}

attn_status ds_fill_rows(const attn_shape *s, uint64_t seed, int threads, int64_t table_elems,
                         double table_sigma, ds_draw_row draw, const void *ctx, float *q, float *k,
                         const char *who, char *msg, size_t msg_len)
{
    enum { P_TABLE = 16, P_KEY, P_QUERY };
    const int64_t D = s->D, heads = s->B * s->Hkv;
    float *table = malloc((size_t)(heads * table_elems) * sizeof *table);
    if (!table)
        return attn_fail(ATTN_EFAIL, msg, msg_len,
                         "%s: out of memory for %lld tables of %lld "
                         "floats",
                         who, (long long)heads, (long long)table_elems);
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static)
        for (int64_t bg = 0; bg < heads; bg++) {
            ds_rng rng = ds_row_rng(seed, P_TABLE, bg);
            for (int64_t e = 0; e < table_elems; e++)
                table[bg * table_elems + e] = (float)(table_sigma * ds_rng_normal(&rng));
        }
#pragma omp for schedule(static)
        for (int64_t row = 0; row < heads * s->S; row++) {
            ds_rng rng = ds_row_rng(seed, P_KEY, row);
            draw(&rng, table + row / s->S * table_elems, ctx, D, k + row * D);
        }
#pragma omp for schedule(static)
        for (int64_t row = 0; row < s->B * s->H * s->T; row++) {
            ds_rng rng = ds_row_rng(seed, P_QUERY, row);
            draw(&rng, table + ds_kv_head(s, row / s->T) * table_elems, ctx, D, q + row * D);
        }
    }
    free(table);
    return ATTN_OK;
}

void ds_normalize_rows(float *x, int64_t rows, int64_t D, double norm, int threads)
{
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t r = 0; r < rows; r++) {
        float *xr = x + r * D;
        double ss = 0;
        for (int64_t d = 0; d < D; d++) ss += (double)xr[d] * xr[d];
        if (ss == 0) continue;
        const double f = norm / sqrt(ss);
        for (int64_t d = 0; d < D; d++) xr[d] = (float)(xr[d] * f);
    }
}

/* ---- input files ---- */

/* "a FIFO", "a directory" ...: what a file that is not a regular one is. */
static const char *file_type(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

attn_status ds_check_input_file(const char *path, const char *fix, char *msg, size_t msg_len)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot read %s: %s%s", path, strerror(errno),
                         fix);
    if (!S_ISREG(sb.st_mode))
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s is %s, not a regular file: give the path of a file%s", path,
                         file_type(sb.st_mode), fix);
    if (access(path, R_OK) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot read %s: %s%s", path, strerror(errno),
                         fix);
    return ATTN_OK;
}
