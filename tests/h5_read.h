/* h5_read.h — reading back what the bench wrote, for tests only: a rank-4 float tensor (bench run
 * --output) and the timed repetitions of one point (/samples of a results file). The shipped
 * readers are elsewhere: results tables in store/reader.c, the user's q, k, v in datasets/file.c.
 * Header-only (static) so each test links alone. */
#ifndef TEST_H5_READ_H
#define TEST_H5_READ_H

#include <hdf5.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Dataset `name` of path as float32 with its dims (rank 4): true and a malloc'd *data, or false
 * (*data NULL) when it cannot be read as such. */
static inline bool tu_read_tensor(const char *path, const char *name, int64_t dims[4], float **data)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    *data = NULL;
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t dset = file >= 0 ? H5Dopen2(file, name, H5P_DEFAULT) : -1;
    hid_t space = dset >= 0 ? H5Dget_space(dset) : -1;
    hsize_t hd[4];
    bool ok = space >= 0 && H5Sget_simple_extent_ndims(space) == 4 &&
              H5Sget_simple_extent_dims(space, hd, NULL) == 4;
    size_t elems = 1;
    for (int i = 0; ok && i < 4; i++) elems *= (size_t)(dims[i] = (int64_t)hd[i]);
    if (ok) ok = (*data = malloc(elems * sizeof(float))) != NULL;
    if (ok) ok = H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, *data) >= 0;
    if (!ok) free(*data), *data = NULL;
    if (space >= 0) H5Sclose(space);
    if (dset >= 0) H5Dclose(dset);
    if (file >= 0) H5Fclose(file);
    return ok;
}

/* The seconds of point point_id's repetitions in /samples of results file path, in repetition
 * order: true with *n of them in a malloc'd *samples (NULL when none), false when unreadable. */
static inline bool tu_read_samples(const char *path, int64_t point_id, double **samples, int64_t *n)
{
    typedef struct row {
        int64_t run_id, point_id;
        int32_t rep;
        double seconds;
    } row;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    *samples = NULL;
    *n = 0;
    hid_t type = H5Tcreate(H5T_COMPOUND, sizeof(row));
    H5Tinsert(type, "point_id", HOFFSET(row, point_id), H5T_NATIVE_INT64);
    H5Tinsert(type, "rep", HOFFSET(row, rep), H5T_NATIVE_INT32);
    H5Tinsert(type, "seconds", HOFFSET(row, seconds), H5T_NATIVE_DOUBLE);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t dset = file >= 0 ? H5Dopen2(file, "samples", H5P_DEFAULT) : -1;
    hid_t space = dset >= 0 ? H5Dget_space(dset) : -1;
    hsize_t rows = 0;
    bool ok = space >= 0 && H5Sget_simple_extent_dims(space, &rows, NULL) == 1;
    row *all = ok ? malloc((rows ? rows : 1) * sizeof *all) : NULL;
    double *out = ok ? malloc((rows ? rows : 1) * sizeof *out) : NULL;
    ok = ok && all && out && H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0;
    for (hsize_t r = 0; ok && r < rows; r++) { /* reps are 0..count-1: place each by its rep */
        if (all[r].point_id != point_id) continue;
        ok = all[r].rep >= 0 && (hsize_t)all[r].rep < rows;
        if (ok) out[all[r].rep] = all[r].seconds, (*n)++;
    }
    free(all);
    if (ok && *n > 0) *samples = out;
    else free(out);
    if (space >= 0) H5Sclose(space);
    if (dset >= 0) H5Dclose(dset);
    if (file >= 0) H5Fclose(file);
    H5Tclose(type);
    return ok;
}

#endif
