/*
 * tensor_io.c — rank-4 float32 tensors into HDF5 files (`bench run --output`): write (create or
 * replace) a float32 dataset; add a kind's weights beside it (any rank up to 4, with string
 * attributes). The read side is the file dataset (datasets/file.c). Library code: a status and a
 * message, never printing. A new file is written under a temporary name and renamed into place
 * once complete; an existing one is written under the writers' lock, after checking that the
 * disk has room (atomic.h).
 */
#include "results.h"

#include "atomic.h"

#include <errno.h>
#include <hdf5.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Room beyond the data that a new dataset needs (object header, the superblock). */
enum { TENSOR_MARGIN = 64 * 1024 };

static htri_t is_hdf5(const char *path)
{
#if H5_VERSION_GE(1, 12, 0)
    return H5Fis_accessible(path, H5P_DEFAULT);
#else
    return H5Fis_hdf5(path);
#endif
}

/* Element count of dims[4] (each >= 1) as float32 bytes; 0 with msg if too large. */
static uint64_t tensor_bytes(const char *path, const char *name, const int64_t dims[4], char *msg,
                             size_t msg_len)
{
    uint64_t elems = 1;
    for (int i = 0; i < 4; i++) {
        if ((uint64_t)dims[i] > (uint64_t)PTRDIFF_MAX / sizeof(float) / elems) {
            attn_fail(ATTN_EINVAL, msg, msg_len,
                      "%s: dataset '%s' [%lld,%lld,%lld,%lld] is too large to address", path, name,
                      (long long)dims[0], (long long)dims[1], (long long)dims[2],
                      (long long)dims[3]);
            return 0;
        }
        elems *= (uint64_t)dims[i];
    }
    return elems * sizeof(float);
}

attn_status bench_tensor_check_target(const char *path, char *msg, size_t msg_len)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (access(path, F_OK) != 0) return ATTN_OK;
    if (bench_store_is_results(path))
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s is a results file, not written over: choose another output file",
                         path);
    htri_t h5 = is_hdf5(path);
    if (h5 > 0) return ATTN_OK;
    return attn_fail(ATTN_EINVAL, msg, msg_len,
                     "%s exists and is not an HDF5 file%s; choose another output file", path,
                     h5 < 0 ? " (or cannot be read)" : "");
}

/* Create (or replace) dataset name [dims] in the open file (path for messages). */
static attn_status write_dataset(hid_t file, const char *path, const char *name,
                                 const int64_t dims[4], const float *data, char *msg,
                                 size_t msg_len)
{
    attn_status st = ATTN_OK;
    hsize_t hd[4] = {(hsize_t)dims[0], (hsize_t)dims[1], (hsize_t)dims[2], (hsize_t)dims[3]};
    hid_t space = H5Screate_simple(4, hd, NULL);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t dset = -1;
    if (space < 0 || lcpl < 0 || H5Pset_create_intermediate_group(lcpl, 1) < 0) {
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "%s: cannot set up dataset '%s'", path, name);
        goto done;
    }
    if (H5Lexists(file, name, H5P_DEFAULT) > 0) {
        /* replace a dataset, never a group or anything else of that name */
        hid_t old = H5Dopen2(file, name, H5P_DEFAULT);
        if (old < 0) {
            st = attn_fail(ATTN_EINVAL, msg, msg_len,
                           "%s: '%s' exists and is not a dataset; choose another name", path, name);
            goto done;
        }
        H5Dclose(old);
        if (H5Ldelete(file, name, H5P_DEFAULT) < 0) {
            st = attn_fail(ATTN_EFAIL, msg, msg_len, "%s: cannot replace the existing dataset '%s'",
                           path, name);
            goto done;
        }
    }
    dset = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    if (dset < 0) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len, "%s: cannot create dataset '%s' (invalid name?)",
                       path, name);
        goto done;
    }
    errno = 0;
    if (H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
        char why[64];
        bench_write_reason(path, errno, why, sizeof why);
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "%s: writing dataset '%s' failed: %s", path, name,
                       why);
    }
done:
    if (dset >= 0) H5Dclose(dset);
    if (lcpl >= 0) H5Pclose(lcpl);
    if (space >= 0) H5Sclose(space);
    return st;
}

/* Close file after write_dataset returned st; a failed close (the data are written then) fails. */
static attn_status close_written(hid_t file, const char *path, attn_status st, char *msg,
                                 size_t msg_len)
{
    errno = 0;
    if (H5Fclose(file) < 0 && st == ATTN_OK) {
        char why[64];
        bench_write_reason(path, errno, why, sizeof why);
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "%s: closing the file failed: %s", path, why);
    }
    return st;
}

/* Open the existing HDF5 file path to write dataset name (bytes of data) into it: under the
 * writers' lock, once the disk has room. On ATTN_OK the caller writes, then close_written and
 * bench_unlock(*lock); otherwise nothing is held. */
static attn_status open_locked(const char *path, const char *name, int64_t bytes, int *lock,
                               hid_t *file, char *msg, size_t msg_len)
{
    *file = -1;
    *lock = bench_lock(path, "; choose another output file", msg, msg_len);
    if (*lock < 0) return ATTN_EINVAL;
    char why[64];
    attn_status st = ATTN_OK;
    if (bench_room(*lock, path, bytes + TENSOR_MARGIN, why, sizeof why) < 0)
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write '%s' into %s: %s; %s is unchanged",
                       name, path, why, path);
    else if ((*file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT)) < 0)
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "cannot open %s for writing (permissions, or open elsewhere?)", path);
    if (st != ATTN_OK) bench_unlock(*lock);
    return st;
}

/* Add (or replace) dataset name in the existing HDF5 file path, under the writers' lock. */
static attn_status write_existing(const char *path, const char *name, const int64_t dims[4],
                                  const float *data, uint64_t bytes, char *msg, size_t msg_len)
{
    int lock;
    hid_t file;
    attn_status st = open_locked(path, name, (int64_t)bytes, &lock, &file, msg, msg_len);
    if (st != ATTN_OK) return st;
    st = close_written(file, path, write_dataset(file, path, name, dims, data, msg, msg_len), msg,
                       msg_len);
    bench_unlock(lock);
    return st;
}

/* Write a new file path holding dataset name: under a temporary name, renamed into place once
 * complete (atomic.h), so that a failure or a signal leaves no file. */
static attn_status write_new(const char *path, const char *name, const int64_t dims[4],
                             const float *data, uint64_t bytes, char *msg, size_t msg_len)
{
    char why[64], tmp[BENCH_PATH_MAX];
    if (bench_room(-1, path, (int64_t)bytes + TENSOR_MARGIN, why, sizeof why) < 0)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write %s: %s; nothing was written", path,
                         why);
    attn_status st = bench_tmp_begin(path, tmp, sizeof tmp, msg, msg_len);
    if (st != ATTN_OK) return st;
    errno = 0;
    hid_t file = H5Fcreate(tmp, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0) {
        const int e = errno;
        bench_tmp_discard(tmp);
        if (e != ENOSPC && e != EFBIG && e != EDQUOT)
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "cannot create %s (does its directory exist and is it writable?)",
                             path);
        bench_write_reason(path, e, why, sizeof why);
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write %s: %s; nothing was written", path,
                         why);
    }
    st = write_dataset(file, path, name, dims, data, msg, msg_len);
    st = close_written(file, path, st, msg, msg_len);
    bool exists = false;
    if (st == ATTN_OK) st = bench_tmp_publish(tmp, path, &exists, msg, msg_len);
    bench_tmp_discard(tmp); /* gone once published; else ours to remove */
    if (st != ATTN_OK && !exists) {
        const size_t used = strlen(msg);
        snprintf(msg + used, msg_len > used ? msg_len - used : 0, "; nothing was written");
    }
    /* another process created path meanwhile: write into it as into any existing file */
    return exists ? write_existing(path, name, dims, data, bytes, msg, msg_len) : st;
}

attn_status bench_tensor_write(const char *path, const char *name, const int64_t dims[4],
                               const float *data, char *msg, size_t msg_len)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    for (int i = 0; i < 4; i++)
        if (dims[i] < 1)
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "%s: cannot write dataset '%s' of shape [%lld,%lld,%lld,%lld]; every "
                             "size must be >= 1",
                             path, name, (long long)dims[0], (long long)dims[1], (long long)dims[2],
                             (long long)dims[3]);
    const uint64_t bytes = tensor_bytes(path, name, dims, msg, msg_len);
    if (bytes == 0) return ATTN_EINVAL;
    if (!data)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: no data for dataset '%s'", path, name);
    if (bench_tensor_check_target(path, msg, msg_len) != ATTN_OK) return ATTN_EINVAL;
    if (access(path, F_OK) == 0) return write_existing(path, name, dims, data, bytes, msg, msg_len);
    return write_new(path, name, dims, data, bytes, msg, msg_len);
}

/* String attribute name = value on obj; false when HDF5 refuses it. */
static bool set_string_attr(hid_t obj, const char *name, const char *value)
{
    hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR), attr = -1;
    bool ok = type >= 0 && space >= 0 && H5Tset_size(type, strlen(value) + 1) >= 0 &&
              H5Tset_cset(type, H5T_CSET_UTF8) >= 0 &&
              (attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
              H5Awrite(attr, type, value) >= 0;
    if (attr >= 0) H5Aclose(attr);
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    return ok;
}

attn_status bench_tensor_add(const char *path, const char *name, int rank, const int64_t *dims,
                             const float *data, const char *const *names, const char *const *values,
                             int nattrs, char *msg, size_t msg_len)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hsize_t hd[4];
    int64_t bytes = (int64_t)sizeof(float);
    for (int d = 0; d < rank && d < 4; d++) {
        hd[d] = (hsize_t)(dims[d] > 0 ? dims[d] : 0);
        bytes *= dims[d] > 0 ? dims[d] : 0;
    }
    int lock;
    hid_t file;
    attn_status st = open_locked(path, name, bytes, &lock, &file, msg, msg_len);
    if (st != ATTN_OK) return st;
    hid_t space = rank >= 1 && rank <= 4 ? H5Screate_simple(rank, hd, NULL) : -1, dset = -1;
    if (H5Lexists(file, name, H5P_DEFAULT) > 0 && H5Ldelete(file, name, H5P_DEFAULT) < 0)
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "%s: cannot replace '%s'", path, name);
    else if (space < 0 || !data ||
             (dset = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT,
                                H5P_DEFAULT)) < 0 ||
             H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "%s: writing dataset '%s' (rank %d) failed", path,
                       name, rank);
    for (int a = 0; st == ATTN_OK && a < nattrs; a++)
        if (!set_string_attr(dset, names[a], values[a]))
            st = attn_fail(ATTN_EFAIL, msg, msg_len, "%s: cannot set attribute '%s' of '%s'", path,
                           names[a], name);
    if (dset >= 0) H5Dclose(dset);
    if (space >= 0) H5Sclose(space);
    st = close_written(file, path, st, msg, msg_len);
    bench_unlock(lock);
    return st;
}
