/*
 * vec_portable.h — the vector layer of the portable set: a "vector" is one float (VW 1), every
 * operation plain C (the compiler may still vectorise loops with the platform's baseline).
 * The exp is the same algorithm as the SIMD sets (vmath.h). It has none of the optional
 * primitives: vec_generic.h gives their plain forms.
 */
#ifndef ATTN_VEC_PORTABLE_H
#define ATTN_VEC_PORTABLE_H

#include <math.h>

#define VW 1
#define VSET portable
typedef float vf;

static inline vf vzero(void) { return 0.0f; }
static inline vf vset1(float x) { return x; }
static inline vf vload(const float *p) { return *p; }
static inline void vstore(float *p, vf x) { *p = x; }
static inline vf vadd(vf a, vf b) { return a + b; }
static inline vf vsub(vf a, vf b) { return a - b; }
static inline vf vmul(vf a, vf b) { return a * b; }
static inline vf vdiv(vf a, vf b) { return a / b; }
static inline vf vfma(vf a, vf b, vf c) { return a * b + c; }  /* a·b + c */
static inline vf vfnma(vf a, vf b, vf c) { return c - a * b; } /* c - a·b */
static inline vf vmax(vf a, vf b) { return a > b ? a : b; }
static inline vf vmin(vf a, vf b) { return a < b ? a : b; }
static inline vf vabs(vf a) { return fabsf(a); }
static inline float vhsum(vf a) { return a; }
static inline float vhmax(vf a) { return a; }
/* nearest integer of x (|x| < 2^22), as a float */
static inline vf vround(vf x) { return nearbyintf(x); }
/* p · 2^n for integral n in [-127, 128) given as a float */
static inline vf vscale2(vf p, vf n) { return n == n ? ldexpf(p, (int)n) : n; } /* NaN: NaN */
/* x where v >= lo or v is NaN, else 0 (also where v is -inf) */
static inline vf vzero_below(vf x, vf v, vf lo) { return v < lo ? 0.0f : x; } /* NaN: x */

/* a vector is one float: bodies with a loop over elements leave it to the compiler's vectoriser */
#define VEC_SCALAR 1

#include "vec_generic.h"

#endif
