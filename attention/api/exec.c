/* exec.c — execution contexts (attn_core.h): the threads, the kernel set and the backend a call
 * runs on. */
#include "attn_isa.h"
#include "kernel_set.h"

static attn_exec exec_on(int threads, const attn_kernel_set *ks)
{
    return (
        attn_exec){.threads = threads > 0 ? threads : 1, .ks = ks, .backend = &attn_backend_cpu};
}

attn_exec attn_exec_of(int threads, attn_isa isa)
{
    const attn_kernel_set *ks = attn_kernel_set_for(isa);
    return exec_on(threads, ks ? ks : attn_ks());
}

attn_exec attn_exec_init(int threads) { return exec_on(threads, attn_ks()); }

attn_isa attn_exec_isa(const attn_exec *x) { return x->ks ? x->ks->isa : attn_isa_current(); }
