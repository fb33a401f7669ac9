/* fuzz_common.h — what the fuzz targets share: the input bytes as a file (the readers take paths),
 * in /dev/shm when there is one, named by the process so parallel jobs do not collide. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline const char *fuzz_write_file(const uint8_t *data, size_t size, const char *tag)
{
    static char path[256];
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/attnbench-fuzz-%s-%d.h5", dir, tag, (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return NULL;
    const size_t wrote = fwrite(data, 1, size, f);
    if (fclose(f) != 0 || wrote != size) return NULL;
    return path;
}

/* Every HDF5 file, dataset, type, space ... the readers opened is closed again: a handle left open
 * aborts (the fuzzer's leak check cannot see them: HDF5 keeps them reachable). HDF5 1.10's own
 * leaks on some malformed files' error paths are not ours: ./bench fuzz runs -detect_leaks=0. */
static inline void fuzz_expect_no_open_objects(void)
{
    const ssize_t open = H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL);
    if (open != 0) {
        fprintf(stderr, "fuzz: %zd HDF5 objects left open\n", open);
        abort();
    }
}

#endif
