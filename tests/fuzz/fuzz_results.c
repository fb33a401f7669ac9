/*
 * fuzz_results.c — libFuzzer target: the results reader behind bench plot and bench fit
 * (harness/store/reader.c: /runs, /points, /fits) and the loading of a run into series
 * (harness/report/series.c: bench_run_load, which normalises the recorded parameters by resolving
 * them for each point's recorded shape). The input is the file's bytes.
 */
#include <stdlib.h>

#include "fuzz_common.h"
#include "results.h"
#include "series.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size, "results");
    if (!path) return 0;
    char msg[ATTN_MSG_LEN];
    bench_run *runs = NULL;
    bench_point *pts = NULL;
    bench_fit_row *fits = NULL;
    int64_t n = 0;
    if (bench_store_read_runs(path, &runs, &n, msg, sizeof msg) == ATTN_OK) free(runs);
    if (bench_store_read_points(path, &pts, &n, msg, sizeof msg) == ATTN_OK) free(pts);
    if (bench_store_read_fits(path, &fits, &n, msg, sizeof msg) == ATTN_OK) free(fits);
    bench_run_data rd;
    if (bench_run_load(path, 0, &rd, msg, sizeof msg) == ATTN_OK) {
        for (int64_t p = 0; p < rd.n; p++) {
            bench_expected_bytes(&rd.pts[p]);
            bench_rss_of(&rd.pts[p], true);
        }
        bench_run_data_free(&rd);
    }
    unlink(path);
    fuzz_expect_no_open_objects();
    return 0;
}
