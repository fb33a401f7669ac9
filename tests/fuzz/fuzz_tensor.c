/*
 * fuzz_tensor.c — libFuzzer target: the HDF5 tensor reader behind --input and --dataset file=
 * (datasets/file.c) and the non-finite scan of what it reads (bench_dataset_check_finite), plus
 * --output's target check (tensor_io.c). The input is the file's bytes. Shapes above 2^20
 * elements are not read (memory), only checked.
 */
#include "fuzz_common.h"
#include "point.h"
#include "results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size, "tensor");
    if (!path) return 0;
    char msg[ATTN_MSG_LEN];
    bench_tensor_check_target(path, msg, sizeof msg);
    const ds_ops *ds = ds_find("file");
    ds_params p = ds_params_defaults(ds);
    p.path = path;
    attn_shape s = attn_shape_init(1, 1, 1, 0, 1, 1, false);
    if (ds->shape(&p, &s, msg, sizeof msg) == ATTN_OK &&
        attn_shape_check(&s, msg, sizeof msg) == ATTN_OK &&
        attn_q_elems(&s) + 2 * attn_kv_elems(&s) <= (1 << 20))
        bench_dataset_check_finite(ds, &p, msg, sizeof msg);
    unlink(path);
    fuzz_expect_no_open_objects();
    return 0;
}
