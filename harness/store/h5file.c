/*
 * h5file.c — the HDF5 plumbing of the store (h5table.h): HDF5 quiet and without its own file
 * locking, tables created with their describing attributes, row counts, resizes and row ranges
 * read or written, the root's format attributes, and the check that a file is a results file of
 * a format_version this build reads or appends to.
 */
#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets.h"
#include "h5table.h"

/* Library code never prints: turn off HDF5's automatic error stack printing. */
void bench_h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

/* H5Pset_file_locking: HDF5 1.10.7 and later 1.10, 1.12.1 and later. */
#if (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10 && H5_VERS_RELEASE >= 7) || H5_VERSION_GE(1, 12, 1)
#define HAVE_SET_FILE_LOCKING 1
#endif

/* File access properties with HDF5's own file locking off (a flock() held while the file is open:
 * a writer's would refuse every reader for the whole sweep). Writers are serialised by the
 * writers' lock of atomic.h instead; readers see the file as of its last flush. H5Pclose it. */
hid_t bench_h5_unlocked_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
#ifdef HAVE_SET_FILE_LOCKING
    if (fapl >= 0) H5Pset_file_locking(fapl, 0, 1);
#else
    setenv("HDF5_USE_FILE_LOCKING", "FALSE", 0); /* older HDF5 reads it at every open */
#endif
    return fapl;
}

/* H5Fopen path (flags: H5F_ACC_RDONLY or H5F_ACC_RDWR) without HDF5's file locking. */
hid_t bench_h5_open_unlocked(const char *path, unsigned flags)
{
    hid_t fapl = bench_h5_unlocked_fapl();
    hid_t file = fapl < 0 ? -1 : H5Fopen(path, flags, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    return file;
}

/* Attribute `name` of obj: the string value (fixed length, NUL-terminated, UTF-8). */
static herr_t write_string_attr(hid_t obj, const char *name, const char *value)
{
    hid_t stype = H5Tcopy(H5T_C_S1);
    hid_t scalar = H5Screate(H5S_SCALAR);
    herr_t err = (stype < 0 || scalar < 0) ? -1 : 0;
    if (err >= 0) err = H5Tset_size(stype, strlen(value) + 1);
    if (err >= 0) err = H5Tset_strpad(stype, H5T_STR_NULLTERM);
    if (err >= 0) err = H5Tset_cset(stype, H5T_CSET_UTF8);
    if (err >= 0) {
        hid_t a = H5Acreate2(obj, name, stype, scalar, H5P_DEFAULT, H5P_DEFAULT);
        err = a < 0 ? -1 : H5Awrite(a, stype, value);
        if (a >= 0) H5Aclose(a);
    }
    if (scalar >= 0) H5Sclose(scalar);
    if (stype >= 0) H5Tclose(stype);
    return err;
}

/* The attributes that describe table t (the HDF5 high-level table convention, H5TB): CLASS,
 * VERSION, TITLE, FIELD_<i>_NAME; and ours: FIELD_<i>_UNIT, FIELD_<i>_DESCRIPTION. */
static herr_t describe_table(hid_t dset, const table *t)
{
    herr_t err = write_string_attr(dset, "CLASS", "TABLE");
    if (err >= 0) err = write_string_attr(dset, "VERSION", "3.0");
    if (err >= 0) err = write_string_attr(dset, "TITLE", t->title);
    for (size_t i = 0; i < t->nfields && err >= 0; i++) {
        const char *what[] = {"NAME", "UNIT", "DESCRIPTION"};
        const char *value[] = {t->fields[i].name, t->fields[i].unit, t->fields[i].description};
        for (int w = 0; w < 3 && err >= 0; w++) {
            char name[64];
            snprintf(name, sizeof name, "FIELD_%zu_%s", i, what[w]);
            err = write_string_attr(dset, name, value[w]);
        }
    }
    return err;
}

/* Create an empty, extendable, chunked 1-D dataset for table t, described (describe_table). */
herr_t bench_h5_create_table(hid_t file, const table *t)
{
    hsize_t dims = 0, maxdims = H5S_UNLIMITED;
    hid_t ftype = bench_h5_compound_type(t, true);
    hid_t space = H5Screate_simple(1, &dims, &maxdims);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    herr_t err = (ftype < 0 || space < 0 || dcpl < 0) ? -1 : 0;
    if (err >= 0) err = H5Pset_chunk(dcpl, 1, &t->chunk_rows);
    if (err >= 0) {
        hid_t dset = H5Dcreate2(file, t->dset, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        err = dset < 0 ? -1 : describe_table(dset, t);
        if (dset >= 0 && H5Dclose(dset) < 0) err = -1;
    }
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    if (ftype >= 0) H5Tclose(ftype);
    return err;
}

/* Number of rows of a 1-D dataset, or -1. */
int64_t bench_h5_table_rows(hid_t dset)
{
    hid_t space = H5Dget_space(dset);
    if (space < 0) return -1;
    int64_t n = -1;
    if (H5Sget_simple_extent_ndims(space) == 1) {
        hsize_t dims;
        if (H5Sget_simple_extent_dims(space, &dims, NULL) == 1) n = (int64_t)dims;
    }
    H5Sclose(space);
    return n;
}

/* Resize a 1-D dataset to n rows. */
herr_t bench_h5_set_rows(hid_t dset, int64_t n)
{
    hsize_t dims = (hsize_t)n;
    return H5Dset_extent(dset, &dims);
}

/* Write (or read) rows [first, first+n) of a 1-D dataset from (into) buf, memory type mtype. */
herr_t bench_h5_rows_io(hid_t dset, hid_t mtype, int64_t first, int64_t n, void *buf, bool write)
{
    if (n == 0) return 0;
    hsize_t start = (hsize_t)first, count = (hsize_t)n;
    hid_t fspace = H5Dget_space(dset);
    hid_t mspace = H5Screate_simple(1, &count, NULL);
    herr_t err = (fspace < 0 || mspace < 0) ? -1 : 0;
    if (err >= 0) err = H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL);
    if (err >= 0)
        err = write ? H5Dwrite(dset, mtype, mspace, fspace, H5P_DEFAULT, buf)
                    : H5Dread(dset, mtype, mspace, fspace, H5P_DEFAULT, buf);
    if (mspace >= 0) H5Sclose(mspace);
    if (fspace >= 0) H5Sclose(fspace);
    return err;
}

/* Append n rows to a 1-D dataset that currently has `first` rows. */
herr_t bench_h5_append_rows(hid_t dset, hid_t mtype, int64_t first, const void *rows, int64_t n)
{
    if (n == 0) return 0;
    if (bench_h5_set_rows(dset, first + n) < 0) return -1;
    return bench_h5_rows_io(dset, mtype, first, n, (void *)rows, true);
}

herr_t bench_h5_read_rows(hid_t dset, hid_t mtype, int64_t first, int64_t n, void *buf)
{
    return bench_h5_rows_io(dset, mtype, first, n, buf, false);
}

herr_t bench_h5_write_format_attrs(hid_t file)
{
    hid_t stype = H5Tcopy(H5T_C_S1);
    hid_t scalar = H5Screate(H5S_SCALAR);
    herr_t err = (stype < 0 || scalar < 0) ? -1 : 0;
    if (err >= 0) err = H5Tset_size(stype, strlen(BENCH_FORMAT));
    if (err >= 0) err = H5Tset_strpad(stype, H5T_STR_NULLPAD);
    if (err >= 0) err = H5Tset_cset(stype, H5T_CSET_UTF8);
    if (err >= 0) {
        hid_t a = H5Acreate2(file, "format", stype, scalar, H5P_DEFAULT, H5P_DEFAULT);
        err = a < 0 ? -1 : H5Awrite(a, stype, BENCH_FORMAT);
        if (a >= 0) H5Aclose(a);
    }
    if (err >= 0) {
        int32_t version = BENCH_FORMAT_VERSION;
        hid_t a =
            H5Acreate2(file, "format_version", H5T_STD_I32LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
        err = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_INT32, &version);
        if (a >= 0) H5Aclose(a);
    }
    if (scalar >= 0) H5Sclose(scalar);
    if (stype >= 0) H5Tclose(stype);
    return err;
}

/* Read the scalar string attribute `name` of obj into buf (fixed or variable length).
 * Returns 1 if read, 0 if absent or not a scalar string, -1 on error. */
static int read_string_attr(hid_t obj, const char *name, char *buf, size_t len)
{
    htri_t exists = H5Aexists(obj, name);
    if (exists <= 0) return exists < 0 ? -1 : 0;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t ftype = a < 0 ? -1 : H5Aget_type(a);
    hid_t space = a < 0 ? -1 : H5Aget_space(a);
    hid_t mtype = -1;
    int result = -1;
    if (ftype < 0 || space < 0) goto done;
    result = 0;
    if (H5Tget_class(ftype) != H5T_STRING || H5Sget_simple_extent_npoints(space) != 1) goto done;
    mtype = H5Tcopy(H5T_C_S1);
    /* HDF5 does not convert between ASCII and UTF-8: read in the attribute's own cset */
    if (mtype < 0 || H5Tset_cset(mtype, H5Tget_cset(ftype)) < 0) {
        result = -1;
        goto done;
    }
    if (H5Tis_variable_str(ftype) > 0) {
        char *s = NULL;
        if (H5Tset_size(mtype, H5T_VARIABLE) < 0 || H5Aread(a, mtype, &s) < 0) {
            result = -1;
            goto done;
        }
        snprintf(buf, len, "%s", s ? s : "");
        H5free_memory(s);
    } else {
        if (H5Tset_size(mtype, len) < 0 || H5Tset_strpad(mtype, H5T_STR_NULLTERM) < 0 ||
            H5Aread(a, mtype, buf) < 0) {
            result = -1;
            goto done;
        }
        buf[len - 1] = '\0';
    }
    result = 1;
done:
    if (mtype >= 0) H5Tclose(mtype);
    if (space >= 0) H5Sclose(space);
    if (ftype >= 0) H5Tclose(ftype);
    if (a >= 0) H5Aclose(a);
    return result;
}

/* Read the scalar integer attribute `name` of obj. Returns 1 if read, 0 if absent or not an
 * integer, -1 on error. */
static int read_int_attr(hid_t obj, const char *name, int64_t *value)
{
    htri_t exists = H5Aexists(obj, name);
    if (exists <= 0) return exists < 0 ? -1 : 0;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t ftype = a < 0 ? -1 : H5Aget_type(a);
    hid_t space = a < 0 ? -1 : H5Aget_space(a);
    int result = -1;
    if (ftype >= 0 && space >= 0) {
        result = 0;
        if (H5Tget_class(ftype) == H5T_INTEGER && H5Sget_simple_extent_npoints(space) == 1)
            result = H5Aread(a, H5T_NATIVE_INT64, value) < 0 ? -1 : 1;
    }
    if (space >= 0) H5Sclose(space);
    if (ftype >= 0) H5Tclose(ftype);
    if (a >= 0) H5Aclose(a);
    return result;
}

size_t bench_utf8_sequence(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    if (s[0] < 0x80) return 1;
    size_t len;
    unsigned min;
    if ((s[0] & 0xe0) == 0xc0) len = 2, min = 0x80;
    else if ((s[0] & 0xf0) == 0xe0) len = 3, min = 0x800;
    else if ((s[0] & 0xf8) == 0xf0) len = 4, min = 0x10000;
    else return 0;
    unsigned cp = s[0] & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

/* The string field s of `size` bytes (NUL-terminated within it) made valid UTF-8 in place. */
static void utf8_field(char *s, size_t size)
{
    const unsigned char *in = (const unsigned char *)s;
    size_t i = 0;
    while (in[i] && bench_utf8_sequence(s + i)) i += bench_utf8_sequence(s + i);
    if (!in[i]) return; /* valid: the common case, untouched */
    char out[4096], *o = out;
    const size_t room = (size < sizeof out ? size : sizeof out) - 1;
    for (i = 0; in[i];) {
        const size_t len = bench_utf8_sequence(s + i);
        const size_t w = len ? len : 4;
        if ((size_t)(o - out) + w > room) break;
        if (len) memcpy(o, in + i, len);
        else snprintf(o, 5, "\\x%02x", in[i]);
        o += w, i += len ? len : 1;
    }
    *o = '\0';
    memcpy(s, out, (size_t)(o - out) + 1);
}

void bench_h5_utf8_rows(const table *t, void *rows, int64_t n)
{
    for (int64_t r = 0; r < n; r++)
        for (size_t f = 0; f < t->nfields; f++)
            if (t->fields[f].kind == F_STR && t->fields[f].size > 0) {
                char *s = (char *)rows + (size_t)r * t->row_size + t->fields[f].offset;
                s[t->fields[f].size - 1] = '\0';
                utf8_field(s, t->fields[f].size);
            }
}

/* Is the existing file at path an attnbench results file of a format_version from min_version
 * to ours? Opens it read-only; never modifies it. ATTN_OK or ATTN_EINVAL with a message ending in
 * `fix` (what to do: "; choose another --out" when writing, "" when reading). */
attn_status bench_h5_check_results_file(const char *path, const char *fix, int min_version,
                                        char *msg, size_t msg_len)
{
    /* looked at before HDF5 opens it: opening a FIFO would wait for a writer forever */
    if (ds_check_input_file(path, fix, msg, msg_len)) return ATTN_EINVAL;
#if H5_VERSION_GE(1, 12, 0)
    htri_t is_h5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
    htri_t is_h5 = H5Fis_hdf5(path);
#endif
    if (is_h5 == 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s is not an attnbench results file (not an HDF5 file)%s", path, fix);
    if (is_h5 < 0) {
        if (access(path, R_OK) != 0)
            return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot read %s: %s", path,
                             strerror(errno));
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s is not an attnbench results file (HDF5 cannot read it)%s", path, fix);
    }
    hid_t file = bench_h5_open_unlocked(path, H5F_ACC_RDONLY);
    if (file < 0)
        return attn_fail(
            ATTN_EINVAL, msg, msg_len,
            "cannot open %s: HDF5 refused it (damaged, or open for writing elsewhere?)", path);
    attn_status st = ATTN_OK;
    char format[64];
    int64_t version = 0;
    int got = read_string_attr(file, "format", format, sizeof format);
    if (got < 0) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len, "cannot read the 'format' attribute of %s", path);
    } else if (got == 0) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s is not an attnbench results file (no 'format' attribute)%s", path, fix);
    } else if (strcmp(format, BENCH_FORMAT) != 0) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s is not an attnbench results file (format '%.40s', expected '%s')%s",
                       path, format, BENCH_FORMAT, fix);
    } else if ((got = read_int_attr(file, "format_version", &version)) <= 0) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s has no readable integer 'format_version' attribute%s", path, fix);
    } else if (version >= BENCH_FORMAT_VERSION_READ && version < min_version) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s is an attnbench results file of format_version %lld (an older build): "
                       "this build reads it but appends runs only to version %d files%s",
                       path, (long long)version, BENCH_FORMAT_VERSION, fix);
    } else if (version < min_version || version > BENCH_FORMAT_VERSION) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s is an attnbench results file of format_version %lld, but this build "
                       "reads versions %d to %d and writes version %d%s",
                       path, (long long)version, BENCH_FORMAT_VERSION_READ, BENCH_FORMAT_VERSION,
                       BENCH_FORMAT_VERSION, fix);
    } else {
        const char *names[] = {bench_h5_runs.dset, bench_h5_points.dset, bench_h5_samples.dset};
        for (size_t i = 0; i < sizeof names / sizeof names[0] && st == ATTN_OK; i++)
            if (H5Lexists(file, names[i], H5P_DEFAULT) <= 0)
                st = attn_fail(ATTN_EINVAL, msg, msg_len, "%s is damaged: it has no %s table%s",
                               path, names[i], fix);
    }
    H5Fclose(file);
    return st;
}

bool bench_store_is_results(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return false;
    bench_h5_quiet();
#if H5_VERSION_GE(1, 12, 0)
    if (H5Fis_accessible(path, H5P_DEFAULT) <= 0) return false;
#else
    if (H5Fis_hdf5(path) <= 0) return false;
#endif
    hid_t file = bench_h5_open_unlocked(path, H5F_ACC_RDONLY);
    if (file < 0) return false;
    char format[64];
    const bool results = read_string_attr(file, "format", format, sizeof format) > 0 &&
                         strcmp(format, BENCH_FORMAT) == 0;
    H5Fclose(file);
    return results;
}
