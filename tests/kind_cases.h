/* kind_cases.h — what the registry-driven tests need to know about a kind beyond its slots:
 * parameter cases that exercise its pattern. A kind absent here is tested with its defaults
 * (a dense kind is full attention there); a block-sparse kind must be listed (test_sparse checks
 * it). Parameter cases are "name=value,..." texts as on the command line ("" for the defaults);
 * several cases are separated by ';'. Header-only, so each test links alone. */
#ifndef KIND_CASES_H
#define KIND_CASES_H

#include <stdbool.h>
#include <string.h>

#include "attention.h"

typedef struct tu_kind_cases {
    /* Cases where every component of the pattern matters at n ~ 40 (a window of 5, 3 global
     * tokens ...): masked keys are the majority, yet each component sees some. Required on the
     * block-sparse engine (test_sparse: decode = last prefill row, bytes from the mask, masked
     * keys without influence). */
    const char *small;
    /* Cases where the layout splits into several tasks and key visits at n ~ 600 (bands wider
     * than a block, key sets longer than one visit or than the engine gathers at once): checked
     * against the float64 mask reference at several T x S up to S = 9000. Block-sparse kinds. */
    const char *large;
    /* One case under which the kind equals full attention for every shape with T, S <= 64 (a
     * window of 64, every position global ...): mask, flops and output compared with full's.
     * NULL: the kind has none (linear). "" : the defaults (dense kinds). */
    const char *as_full;
    /* The kind refuses decode shapes (causal, T <= S, s->decode). By default a kind must accept
     * them and its decoded rows must equal the last rows of the prefill (test_decode). */
    bool refuses_decode;
} tu_kind_cases;

typedef struct tu_kind_cases_row {
    const char *kind;
    tu_kind_cases cases;
} tu_kind_cases_row;

static const tu_kind_cases_row tu_kind_cases_table[] = {
    {"bigbird",
     {.small = "block=4,window_blocks=2,global_blocks=1,random_blocks=2,seed=3",
      .large = "block=7,random_blocks=5",
      .as_full = "block=4,window_blocks=16,global_blocks=0,random_blocks=0"}},
    {"dilated",
     {.small = "window=4,dilation=3;window=2,dilation=16",
      .large = "window=300,dilation=2;window=40,dilation=5;window=2500,dilation=2",
      .as_full = "window=64,dilation=1"}},
    {"document",
     {.small = "doc=5;doc=7;doc=16",
      .large = "doc=300;doc=256;doc=37;doc=1000",
      .as_full = "doc=64"}},
    {"fixed",
     {.small = "stride=6,summary=2",
      .large = "stride=10,summary=5;stride=0,summary=3;stride=4,summary=2",
      .as_full = "stride=8,summary=8"}},
    {"global",
     {.small = "globals=3,window=4",
      .large = "globals=300,window=50",
      .as_full = "globals=64,window=0"}},
    {"linformer", {.refuses_decode = true}},
    {"nystrom", {.refuses_decode = true}},
    {"prefix",
     {.small = "prefix=5;prefix=20", .large = "prefix=300;prefix=700", .as_full = "prefix=0"}},
    {"random",
     {.small = "random=4,seed=7;draw=token,random=4,seed=7",
      .large = "random=300;random=20,seed=9;draw=token,random=300;draw=token,random=20",
      .as_full = "random=64"}},
    {"ring", {.as_full = ""}},
    {"sink",
     {.small = "sinks=3,window=5;sinks=2,window=4,current=counted;sinks=0,window=3",
      .large = "sinks=300,window=50;sinks=4,window=300;sinks=20,window=2000,current=counted",
      .as_full = "sinks=0,window=64"}},
    {"strided", {.small = "stride=0", .large = "stride=2;stride=0", .as_full = "stride=1"}},
    {"window", {.small = "window=5", .large = "window=300;window=40", .as_full = "window=64"}},
};

/* The cases of ops: its row, or the defaults (dense kinds: full attention at their defaults). */
static inline tu_kind_cases tu_cases(const attn_ops *ops)
{
    for (size_t r = 0; r < sizeof tu_kind_cases_table / sizeof *tu_kind_cases_table; r++)
        if (strcmp(tu_kind_cases_table[r].kind, ops->name) == 0)
            return tu_kind_cases_table[r].cases;
    return (tu_kind_cases){.as_full = ops->engine == ATTN_ENGINE_DENSE ? "" : NULL};
}

#endif
