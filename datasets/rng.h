/* rng.h — seeded, splittable random numbers: splitmix64 streams, uniform and normal draws. */
#ifndef DS_RNG_H
#define DS_RNG_H

#include <stdint.h>

typedef struct ds_rng {
    uint64_t state;
    double spare; /* second Box-Muller normal */
    int has_spare;
} ds_rng;

/* An independent stream for (seed, stream): same pair, same numbers, on any thread count. */
ds_rng ds_rng_stream(uint64_t seed, uint64_t stream);
uint64_t ds_rng_u64(ds_rng *r);
double ds_rng_uniform(ds_rng *r); /* [0, 1) */
double ds_rng_normal(ds_rng *r);  /* N(0, 1) */

#endif
