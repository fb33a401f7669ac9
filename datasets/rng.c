/* rng.c — splitmix64 (Steele, Lea, Flood 2014) streams; normals by Box-Muller. */
#include <math.h>

#include "rng.h"

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

ds_rng ds_rng_stream(uint64_t seed, uint64_t stream)
{
    ds_rng r = {.state = mix(seed ^ mix(stream + 0x9e3779b97f4a7c15ULL)), .has_spare = 0};
    return r;
}

uint64_t ds_rng_u64(ds_rng *r)
{
    r->state += 0x9e3779b97f4a7c15ULL;
    return mix(r->state);
}

double ds_rng_uniform(ds_rng *r) { return (double)(ds_rng_u64(r) >> 11) * 0x1.0p-53; }

double ds_rng_normal(ds_rng *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u = 1.0 - ds_rng_uniform(r), v = ds_rng_uniform(r); /* u in (0, 1] */
    double rad = sqrt(-2.0 * log(u)), ang = 6.283185307179586 * v;
    r->spare = rad * sin(ang);
    r->has_spare = 1;
    return rad * cos(ang);
}
