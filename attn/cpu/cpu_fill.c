/* The reference initialisation: tensors and token ids drawn from the counter-based generator of
 * attn/rng.h, value i a pure function of (seed, i), so the CUDA fill kernels must reproduce these
 * arrays bit for bit (attn/cpu/cpu_ref.h). */
#include <inttypes.h>

#include "attn/cpu/cpu_ref.h"
#include "attn/op_args.h"
#include "attn/rng.h"
#include "attn/base/status.h"

void lb_fill_uniform_cpu(float *x, int64_t count, uint64_t seed, float lo, float hi)
{
    for (int64_t i = 0; i < count; i++)
        x[i] = lb_rng_range(seed, (uint64_t)i, lo, hi);
}

int lb_fill_tokens_cpu(LbBackend *be, int32_t *ids, int64_t count, uint64_t seed, int32_t vocab)
{
    LB_TRY(lb_arg_need(be, ids, count, "fill_tokens", "ids"));
    if (vocab < 1)
        return LB_FAIL(LB_ERR_INVALID, "cpu fill_tokens: vocabulary of %" PRId32 " tokens", vocab);
    for (int64_t i = 0; i < count; i++)
        ids[i] = lb_rng_token(seed, (uint64_t)i, vocab);
    return LB_OK;
}
