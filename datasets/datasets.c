/* datasets.c — the list of generators, and helpers they share. */
#include <string.h>

#include "datasets.h"
#include "rng.h"

extern const ds_ops ds_gaussian;

static const ds_ops *const all[] = {&ds_gaussian};

int ds_count(void) { return (int)(sizeof all / sizeof all[0]); }

const ds_ops *ds_at(int index) { return index >= 0 && index < ds_count() ? all[index] : NULL; }

const ds_ops *ds_find(const char *name)
{
    for (int n = 0; n < ds_count(); n++)
        if (strcmp(all[n]->name, name) == 0) return all[n];
    return NULL;
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
