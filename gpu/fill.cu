/* Initialisation on the device, so nothing large crosses PCIe: fill_uniform (lb_rng_range, in
 * double so no FMA separates it from the CPU's, rounded to storage) and fill_tokens. Checked bit for bit against the CPU's by the check table (attn/check.c, tests/gpu/test_gpu_ops.c). */
#include "attn/rng.h"
#include "gpu/cuda_check.h"
#include "gpu/device_util.cuh"
#include "gpu/kernels.h"

namespace {

constexpr int kFillBlock = 256;

template <typename T>
__global__ void __launch_bounds__(kFillBlock)
fill_uniform_kernel(T *x, int64_t count, uint64_t seed, float lo, float hi)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (int64_t)gridDim.x * blockDim.x)
        x[i] = lb_from_float<T>(lb_rng_range(seed, (uint64_t)i, lo, hi));
}

__global__ void __launch_bounds__(kFillBlock)
fill_tokens_kernel(int32_t *ids, int64_t count, uint64_t seed, int32_t vocab)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (int64_t)gridDim.x * blockDim.x)
        ids[i] = lb_rng_token(seed, (uint64_t)i, vocab);
}

/* Enough blocks to fill the GPU many times over; the grid-stride loop does the rest. */
unsigned fill_grid(int64_t count)
{
    const unsigned g = lb_grid_for(count, kFillBlock);
    return g < 65536u ? g : 65536u;
}

} // namespace

extern "C" int lb_cuda_fill_uniform(LbBackend *be, void *d_x, int64_t count, uint64_t seed, float lo, float hi)
{
    LB_TRY(lb_args_fill_uniform(be, d_x, count, lo, hi));
    if (count == 0)
        return LB_OK;
    LB_DISPATCH_DTYPE(be->storage, T,
                      LB_LAUNCH(fill_grid(count), kFillBlock, 0, lb_cuda_stream(be), fill_uniform_kernel<T>)(
                          static_cast<T *>(d_x), count, seed, lo, hi));
    LB_LAUNCH_CHECK("fill_uniform_kernel");
    return LB_OK;
}

extern "C" int lb_cuda_fill_tokens(LbBackend *be, int32_t *d_ids, int64_t count, uint64_t seed, int32_t vocab)
{
    LB_TRY(lb_arg_need(be, d_ids, count, "fill_tokens", "ids"));
    if (count < 0 || vocab < 1)
        return LB_FAIL(LB_ERR_INVALID, "fill_tokens: bad count %lld or vocabulary %d",
                       (long long)count, (int)vocab);
    if (count == 0)
        return LB_OK;
    LB_LAUNCH(fill_grid(count), kFillBlock, 0, lb_cuda_stream(be), fill_tokens_kernel)(d_ids, count, seed, vocab);
    LB_LAUNCH_CHECK("fill_tokens_kernel");
    return LB_OK;
}
