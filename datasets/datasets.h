/*
 * datasets.h — seeded input generators for q, k, v (one file per generator, listed in
 * datasets.c). A generator fills q [B,H,T,D], k and v [B,Hkv,S,D] deterministically from
 * (seed, shape), whatever the thread count.
 */
#ifndef DS_DATASETS_H
#define DS_DATASETS_H

#include <stdint.h>

#include "attention.h"

typedef struct ds_ops {
    const char *name;     /* the CLI's --dataset value */
    const char *summary;  /* one line for `bench datasets` */
    attn_status (*fill)(const attn_shape *s, uint64_t seed, float *q, float *k, float *v, char *msg,
                        size_t msg_len);
} ds_ops;

int ds_count(void);
const ds_ops *ds_at(int index);
const ds_ops *ds_find(const char *name);

/* Fill n floats with N(0, sigma²) from stream (seed, stream). */
void ds_fill_normal(float *x, int64_t n, double sigma, uint64_t seed, uint64_t stream);

#endif
