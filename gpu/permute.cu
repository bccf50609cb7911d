/* The head permutes, pure copies (one kernel per storage width, 16-byte units where the layout
 * allows): split_heads dst (batch, heads, n, hd) from token-major src (ld_src, e.g. 3 d of the
 * fused QKV); merge_heads back to (batch, n, heads * hd). Both walk the head-major side by whole
 * rows. Checked by the check table (attn/check.c, tests/gpu/test_gpu_ops.c) against lb_cpu_split_heads/lb_cpu_merge_heads. */
#include "gpu/cuda_check.h"
#include "gpu/device_util.cuh"
#include "gpu/kernels.h"

namespace {

/* Head-major row r = (b * heads + h) * n + t  <->  token-major element offset
 * (b * n + t) * ld + h * hd. All counts in units of U. */
__device__ __forceinline__ int64_t token_major_offset(int64_t r, int64_t n, int64_t heads,
                                                      int64_t hd, int64_t ld)
{
    const int64_t bh = (int64_t)lb_udiv64((uint64_t)r, (uint64_t)n);
    const int64_t t = r - bh * n;
    const int64_t b = (int64_t)lb_udiv64((uint64_t)bh, (uint64_t)heads);
    const int64_t h = bh - b * heads;
    return (b * n + t) * ld + h * hd;
}

/* to_head_major = 1: split (token-major src, head-major dst); 0: merge. hd and ld in units. */
template <typename U, int TO_HEAD_MAJOR>
__global__ void __launch_bounds__(kRowBlock)
permute_heads_kernel(const U *src, U *dst, int64_t rows, int64_t n, int64_t heads, int64_t hd,
                     int64_t ld, int tpr)
{
    const int rows_per_block = kRowBlock / tpr;
    const int lane = threadIdx.x % tpr;
    for (int64_t r = (int64_t)blockIdx.x * rows_per_block + threadIdx.x / tpr; r < rows;
         r += (int64_t)gridDim.x * rows_per_block) {
        const int64_t tm = token_major_offset(r, n, heads, hd, ld);
        const U *s = TO_HEAD_MAJOR ? src + tm : src + r * hd;
        U *o = TO_HEAD_MAJOR ? dst + r * hd : dst + tm;
        for (int64_t j = lane; j < hd; j += tpr)
            o[j] = s[j];
    }
}

template <typename U, int TO_HEAD_MAJOR>
int launch_units(const void *src, void *dst, int64_t rows, int64_t n, int64_t heads,
                 int64_t hd_units, int64_t ld_units, cudaStream_t st)
{
    const int tpr = lb_threads_per_row(hd_units);
    LB_LAUNCH(lb_grid_for(rows, kRowBlock / tpr), kRowBlock, 0, st, permute_heads_kernel<U, TO_HEAD_MAJOR>)(
        static_cast<const U *>(src), static_cast<U *>(dst), rows, n, heads, hd_units, ld_units, tpr);
    LB_LAUNCH_CHECK(TO_HEAD_MAJOR ? "permute_heads_kernel (split)" : "permute_heads_kernel (merge)");
    return LB_OK;
}

template <int TO_HEAD_MAJOR>
int launch_permute(size_t eb, const void *src, void *dst, int64_t ld, int64_t batch, int64_t n,
                   int64_t heads, int64_t hd, cudaStream_t st)
{
    if (batch == 0 || n == 0 || heads == 0 || hd == 0)
        return LB_OK;
    /* Refuse other element sizes first: the 16-byte path below would otherwise take an element of
     * 6 bytes as 16 / 6 = 2 per unit (writing past the end), and 32 bytes as 0 per unit. */
    if (eb != 2 && eb != 4)
        return LB_FAIL(LB_ERR_INVALID, "head permute: unsupported element size %zu (2 or 4)", eb);
    const int64_t rows = batch * heads * n;
    const bool v16 = ((uintptr_t)src % 16 == 0) && ((uintptr_t)dst % 16 == 0) &&
                     (hd * (int64_t)eb) % 16 == 0 && (ld * (int64_t)eb) % 16 == 0;
    if (v16) {
        const int64_t per = 16 / (int64_t)eb;
        return launch_units<uint4, TO_HEAD_MAJOR>(src, dst, rows, n, heads, hd / per, ld / per, st);
    }
    if (eb == 2)
        return launch_units<uint16_t, TO_HEAD_MAJOR>(src, dst, rows, n, heads, hd, ld, st);
    return launch_units<uint32_t, TO_HEAD_MAJOR>(src, dst, rows, n, heads, hd, ld, st);
}

} // namespace

extern "C" int lb_cuda_split_heads(LbBackend *be, const void *d_src, int64_t ld_src, void *d_dst, int64_t batch,
                                   int64_t n, int64_t heads, int64_t hd)
{
    LB_TRY(lb_args_heads(be, "split_heads", d_src, ld_src, d_dst, batch, n, heads, hd));
    return launch_permute<1>(be->elem_bytes, d_src, d_dst, ld_src, batch, n, heads, hd, lb_cuda_stream(be));
}

extern "C" int lb_cuda_merge_heads(LbBackend *be, const void *d_src, void *d_dst, int64_t batch, int64_t n,
                                   int64_t heads, int64_t hd)
{
    LB_TRY(lb_args_heads(be, "merge_heads", d_src, 0, d_dst, batch, n, heads, hd));
    return launch_permute<0>(be->elem_bytes, d_src, d_dst, heads * hd, batch, n, heads, hd, lb_cuda_stream(be));
}
