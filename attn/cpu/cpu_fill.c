/* The reference initialisation: tensors and token ids drawn from the counter-based generator of
 * attn/rng.h, value i a pure function of (seed, i), so the CUDA fill kernels must reproduce these
 * arrays bit for bit (attn/cpu/cpu_ref.h). */
#include "attn/cpu/cpu_ref.h"
#include "attn/rng.h"

void lb_fill_uniform_cpu(float *x, int64_t count, uint64_t seed, float lo, float hi)
{
    for (int64_t i = 0; i < count; i++)
        x[i] = lb_rng_range(seed, (uint64_t)i, lo, hi);
}

void lb_fill_tokens_cpu(int32_t *ids, int64_t count, uint64_t seed, int32_t vocab)
{
    for (int64_t i = 0; i < count; i++)
        ids[i] = lb_rng_token(seed, (uint64_t)i, vocab);
}
