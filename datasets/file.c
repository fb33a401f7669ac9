/*
 * file — the user's own tensors, e.g. captured from a real model: selected as file=PATH, an HDF5
 * file in the `bench run --input` layout, float datasets (float64 is converted to float32; a
 * finite value beyond float32's range is refused as such)
 *   q [B,H,Tf,D]   k [B,Hkv,S,D]   v [B,Hkv,S,D]
 * and beside them a kind's weights (attn_weight), each a float dataset of the weight's name and
 * dims (the `tensor` slot: read when present, whole).
 * The file fixes B, H, Hkv, S and D (and the scale, 1/sqrt(D)). The point uses the newest
 * T <= Tf queries of every head, rows Tf-T..Tf-1 (all of them by default; decode's q_len newest),
 * so the positions keep their meaning: file row r sits at position r + S - Tf. The seed is not
 * used; only the q rows needed are read (a hyperslab), k and v whole.
 */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>

#include "datasets.h"

enum { Q, K, V };
static const char *const names[3] = {"q", "k", "v"};

typedef struct tensors {
    hid_t file, dset[3];
    int64_t dims[3][4]; /* q, k, v */
} tensors;

static void close_all(tensors *t)
{
    for (int n = 0; n < 3; n++)
        if (t->dset[n] >= 0) H5Dclose(t->dset[n]);
    if (t->file >= 0) H5Fclose(t->file);
}

/* Open dataset n of t and read its dims: a rank-4 floating-point dataset, sizes >= 1. */
static attn_status open_tensor(const char *path, tensors *t, int n, char *msg, size_t msg_len)
{
    if (H5Lexists(t->file, names[n], H5P_DEFAULT) <= 0 ||
        (t->dset[n] = H5Dopen2(t->file, names[n], H5P_DEFAULT)) < 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s has no dataset '%s' (expected q [B,H,T,D], k and v [B,Hkv,S,D])", path,
                         names[n]);
    hid_t type = H5Dget_type(t->dset[n]), space = H5Dget_space(t->dset[n]);
    const bool is_float = type >= 0 && H5Tget_class(type) == H5T_FLOAT;
    const int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    hsize_t hd[4] = {0, 0, 0, 0};
    if (rank == 4) H5Sget_simple_extent_dims(space, hd, NULL);
    if (type >= 0) H5Tclose(type);
    if (space >= 0) H5Sclose(space);
    if (!is_float)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: dataset '%s' is not floating point", path,
                         names[n]);
    if (rank != 4)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: dataset '%s' has rank %d, expected 4",
                         path, names[n], rank);
    for (int d = 0; d < 4; d++) {
        if (hd[d] < 1 || hd[d] > (hsize_t)INT32_MAX)
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "%s: dataset '%s' has a size %llu; "
                             "sizes must be in [1, 2^31)",
                             path, names[n], (unsigned long long)hd[d]);
        t->dims[n][d] = (int64_t)hd[d];
    }
    return ATTN_OK;
}

/* Open q, k, v and check that they fit q [B,H,T,D], k and v [B,Hkv,S,D]. */
static attn_status open_all(const char *path, tensors *t, char *msg, size_t msg_len)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    *t = (tensors){.file = -1, .dset = {-1, -1, -1}};
    if (ds_check_input_file(path, "", msg, msg_len)) return ATTN_EINVAL;
    if ((t->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot read %s as an HDF5 file", path);
    for (int n = 0; n < 3; n++)
        if (open_tensor(path, t, n, msg, msg_len) != ATTN_OK) return ATTN_EINVAL;
    const int64_t *q = t->dims[Q], *k = t->dims[K], *v = t->dims[V];
    bool fits = q[0] == k[0] && q[3] == k[3] && q[1] % k[1] == 0;
    for (int d = 0; d < 4; d++) fits &= k[d] == v[d];
    if (!fits)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s: shapes do not fit q [B,H,T,D], k and v [B,Hkv,S,D] (Hkv dividing H): "
                         "q [%lld,%lld,%lld,%lld] k [%lld,%lld,%lld,%lld] v [%lld,%lld,%lld,%lld]",
                         path, (long long)q[0], (long long)q[1], (long long)q[2], (long long)q[3],
                         (long long)k[0], (long long)k[1], (long long)k[2], (long long)k[3],
                         (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3]);
    return ATTN_OK;
}

/* Set s from the file; s->T: newest queries wanted (0: all). */
static attn_status layout(const char *path, const tensors *t, attn_shape *s, char *msg,
                          size_t msg_len)
{
    const int64_t *q = t->dims[Q], *k = t->dims[K];
    if (s->T > q[2])
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s has %lld queries per head, fewer than "
                         "the %lld asked for",
                         path, (long long)q[2], (long long)s->T);
    s->B = q[0], s->H = q[1], s->Hkv = k[1], s->S = k[2], s->D = q[3];
    s->scale = 1.0 / sqrt((double)s->D); /* as attn_shape_init */
    if (s->T == 0) s->T = q[2];
    return ATTN_OK;
}

static attn_status shape(const ds_params *p, attn_shape *s, char *msg, size_t msg_len)
{
    tensors t;
    attn_status st = open_all(p->path, &t, msg, msg_len);
    if (st == ATTN_OK) st = layout(p->path, &t, s, msg, msg_len);
    close_all(&t);
    return st;
}

/* Values read as float32 (x: count[0..rank) elements of dataset name, from file position
 * start): a ±Inf that the file holds as a finite value of a wider type (1e300 as float64) is
 * beyond float32's range, refused as what it is rather than reported as an infinity. */
static attn_status check_range(const char *path, hid_t dset, const char *name, const float *x,
                               int rank, const hsize_t *start, const hsize_t *count, char *msg,
                               size_t msg_len)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= (int64_t)count[d];
    for (int64_t i = 0; i < n; i++) {
        if (!isinf(x[i])) continue;
        hsize_t at[H5S_MAX_RANK];
        int64_t rest = i;
        for (int d = rank - 1; d >= 0; d--)
            at[d] = start[d] + (hsize_t)rest % count[d], rest /= (int64_t)count[d];
        const hsize_t one = 1;
        double wide = NAN;
        hid_t fspace = H5Dget_space(dset), mspace = H5Screate_simple(1, &one, NULL);
        const bool read = fspace >= 0 && mspace >= 0 &&
                          H5Sselect_elements(fspace, H5S_SELECT_SET, 1, at) >= 0 &&
                          H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, &wide) >= 0;
        if (fspace >= 0) H5Sclose(fspace);
        if (mspace >= 0) H5Sclose(mspace);
        if (!read || !isfinite(wide)) continue; /* a true infinity: the non-finite check names it */
        char where[96];
        int w = snprintf(where, sizeof where, "%s[", name);
        for (int d = 0; d < rank && w < (int)sizeof where; d++)
            w += snprintf(where + w, sizeof where - (size_t)w, "%s%llu", d ? "," : "",
                          (unsigned long long)at[d]);
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s: %s] is %.6g, beyond float32's range (|x| <= 3.4e+38) in which the "
                         "data are computed: scale it down",
                         path, where, wide);
    }
    return ATTN_OK;
}

static attn_status fill(const attn_shape *s, const ds_params *p, uint64_t seed, int threads,
                        float *q, float *k, float *v, char *msg, size_t msg_len)
{
    (void)seed;
    tensors t;
    attn_shape f = *s;
    attn_status st = open_all(p->path, &t, msg, msg_len);
    if (st == ATTN_OK) st = layout(p->path, &t, &f, msg, msg_len);
    if (st == ATTN_OK &&
        (f.B != s->B || f.H != s->H || f.Hkv != s->Hkv || f.S != s->S || f.D != s->D))
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s does not hold this point's shape (changed "
                       "since the sweep started?)",
                       p->path);
    if (st == ATTN_OK) {
        const hsize_t start[4] = {0, 0, (hsize_t)(t.dims[Q][2] - s->T), 0};
        const hsize_t count[4] = {(hsize_t)s->B, (hsize_t)s->H, (hsize_t)s->T, (hsize_t)s->D};
        hid_t fspace = H5Dget_space(t.dset[Q]), mspace = H5Screate_simple(4, count, NULL);
        if (fspace < 0 || mspace < 0 ||
            H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Dread(t.dset[Q], H5T_NATIVE_FLOAT, mspace, fspace, H5P_DEFAULT, q) < 0 ||
            H5Dread(t.dset[K], H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, k) < 0 ||
            H5Dread(t.dset[V], H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
            st = attn_fail(ATTN_EFAIL, msg, msg_len, "%s: reading q, k, v failed (damaged file?)",
                           p->path);
        if (fspace >= 0) H5Sclose(fspace);
        if (mspace >= 0) H5Sclose(mspace);
        const hsize_t zero[4] = {0, 0, 0, 0},
                      kc[4] = {(hsize_t)s->B, (hsize_t)s->Hkv, (hsize_t)s->S, (hsize_t)s->D};
        if (st == ATTN_OK)
            st = check_range(p->path, t.dset[Q], "q", q, 4, start, count, msg, msg_len);
        if (st == ATTN_OK) st = check_range(p->path, t.dset[K], "k", k, 4, zero, kc, msg, msg_len);
        if (st == ATTN_OK) st = check_range(p->path, t.dset[V], "v", v, 4, zero, kc, msg, msg_len);
    }
    close_all(&t);
    return st;
}

/* A named tensor beside q, k, v (a kind's weight): its rank, dims and, with data, its values. */
static attn_status tensor(const ds_params *p, const char *name, int *rank, int64_t dims[4],
                          float *data, bool *found, char *msg, size_t msg_len)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    *found = false;
    if (ds_check_input_file(p->path, "", msg, msg_len)) return ATTN_EINVAL;
    hid_t file = H5Fopen(p->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot read %s as an HDF5 file", p->path);
    attn_status st = ATTN_OK;
    hid_t dset = -1, type = -1, space = -1;
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) goto done;
    *found = true;
    if ((dset = H5Dopen2(file, name, H5P_DEFAULT)) < 0 || (type = H5Dget_type(dset)) < 0 ||
        H5Tget_class(type) != H5T_FLOAT) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len, "%s: '%s' is not a floating-point dataset",
                       p->path, name);
        goto done;
    }
    hsize_t hd[H5S_MAX_RANK];
    space = H5Dget_space(dset);
    *rank = space >= 0 ? H5Sget_simple_extent_dims(space, hd, NULL) : -1;
    for (int d = 0; d < *rank && d < 4; d++) dims[d] = (int64_t)hd[d];
    if (data && H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        st = attn_fail(ATTN_EINVAL, msg, msg_len, "%s: reading '%s' failed (damaged file?)",
                       p->path, name);
    else if (data && *rank >= 1 && *rank <= 4) {
        const hsize_t zero[H5S_MAX_RANK] = {0};
        st = check_range(p->path, dset, name, data, *rank, zero, hd, msg, msg_len);
    }
done:
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    if (dset >= 0) H5Dclose(dset);
    H5Fclose(file);
    return st;
}

const ds_ops ds_file = {
    .name = "file",
    .summary = "your own q, k, v from an HDF5 file: --dataset file=PATH (the --input layout)",
    .definition =
        "Float datasets q [B,H,Tf,D], k and v [B,Hkv,S,D] of the file (float64 converted).\n"
        "The file fixes B, H, Hkv, S, D: a sweep's --n, --heads, --kv-heads, --head-dim and\n"
        "--batch do not apply. The point uses the newest T queries, rows Tf-T..Tf-1 (prefill:\n"
        "all Tf; decode: --q-len), so file row r keeps its position r + S - Tf. A kind's\n"
        "weights (bench list --verbose) are read from datasets of their names when present,\n"
        "dims exactly as listed; the others are drawn from the kind's seed. A weight the kind\n"
        "reads only with another parameter value (linformer share=kv: no proj_v) is refused.",
    .params = {.owner = "file", .role = "dataset"},
    .takes_path = true,
    .fill = fill,
    .shape = shape,
    .tensor = tensor,
};
