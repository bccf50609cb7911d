/* Embedding: x (batch, n, d) = tok[ids[b, t]] + pos[t], fp32 sum rounded once; a row per `tpr`
 * threads. Its gradient, deterministic without atomics: a stable counting sort of the positions by
 * id (one block), then a row per id summing its positions' rows of dx in (b, t) order in fp32, and
 * a row per position t summing over the batch. Checked by the check table (attn/check.c,
 * tests/gpu/test_gpu_ops.c) against lb_cpu_embed and lb_embed_backward_cpu. */
#include "gpu/cuda_check.h"
#include "gpu/device_util.cuh"
#include "gpu/kernels.h"

namespace {

template <typename T, int N>
__global__ void __launch_bounds__(kRowBlock)
embed_kernel(const int32_t *ids, const T *tok, const T *pos, T *x, int64_t rows, int64_t n,
             int64_t d, int tpr)
{
    const int64_t dpk = d / N;
    const int rows_per_block = kRowBlock / tpr;
    const int lane = threadIdx.x % tpr;
    for (int64_t r = (int64_t)blockIdx.x * rows_per_block + threadIdx.x / tpr; r < rows;
         r += (int64_t)gridDim.x * rows_per_block) {
        const int64_t t = r - (int64_t)lb_udiv64((uint64_t)r, (uint64_t)n) * n;
        const T *tr = tok + (int64_t)ids[r] * d;
        const T *pr = pos + t * d;
        T *xr = x + r * d;
        for (int64_t j = lane; j < dpk; j += tpr) {
            const LbPack<T, N> a = lb_load_pack<T, N>(tr + j * N);
            const LbPack<T, N> b = lb_load_pack<T, N>(pr + j * N);
            LbPack<T, N> o;
#pragma unroll
            for (int e = 0; e < N; e++)
                o.v[e] = lb_from_float<T>(lb_to_float(a.v[e]) + lb_to_float(b.v[e]));
            lb_store_pack<T, N>(xr + j * N, o);
        }
    }
}

template <typename T, int N>
int launch_n(const int32_t *ids, const T *tok, const T *pos, T *x, int64_t rows, int64_t n,
             int64_t d, cudaStream_t st)
{
    const int tpr = lb_threads_per_row(d / N);
    LB_LAUNCH(lb_grid_for(rows, kRowBlock / tpr), kRowBlock, 0, st, embed_kernel<T, N>)(ids, tok, pos, x, rows, n, d, tpr);
    LB_LAUNCH_CHECK("embed_kernel");
    return LB_OK;
}


/* The sort's block: a chunk of kSortBlock positions at a time. */
constexpr int kSortBlock = 512;

/* Of the chunk's ids (s_ids, `len` of them), how many before position i equal id (rank) and
 * whether i is the last of them: a broadcast read per element, so every lane of a warp reads the
 * same word. Ids out of range are -1 and belong nowhere. */
__device__ __forceinline__ uint32_t chunk_rank(const int32_t *s_ids, int len, int i, int32_t id, bool *last)
{
    uint32_t before = 0, after = 0;
    for (int j = 0; j < len; j++) {
        const uint32_t same = s_ids[j] == id;
        before += j < i ? same : 0u;
        after += j > i ? same : 0u;
    }
    *last = after == 0;
    return before;
}

/* first (vocab) and order (tokens), uint32: order lists the positions grouped by id, each id's in
 * (b, t) order, and id v's span is [v ? first[v - 1] : 0, first[v]) (the cursors end where the
 * next id starts). One block, chunks in order: a chunk's last occurrence of an id moves that id's
 * cursor for the next chunk, so no two threads ever write one word between barriers. */
__global__ void __launch_bounds__(kSortBlock)
embed_sort_kernel(const int32_t *ids, uint32_t *first, uint32_t *order, int64_t tokens, int64_t vocab)
{
    LB_SHARED(int32_t, s_ids, kSortBlock);
    LB_SHARED(uint32_t, s_sum, kSortBlock);
    const int i = threadIdx.x;
    for (int64_t v = i; v < vocab; v += kSortBlock)
        first[v] = 0;
    __syncthreads();
    /* pass 0 counts each id into first[id]; pass 1 scatters, first[id] the cursor */
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t base = 0; base < tokens; base += kSortBlock) {
            const int len = (int)(tokens - base < kSortBlock ? tokens - base : kSortBlock);
            int32_t id = -1;
            if (i < len) {
                id = ids[base + i];
                id = id >= 0 && id < vocab ? id : -1;
            }
            s_ids[i] = id;
            __syncthreads();
            bool last = false;
            const uint32_t rank = i < len && id >= 0 ? chunk_rank(s_ids, len, i, id, &last) : 0u;
            if (pass == 1 && i < len && id >= 0)
                order[first[id] + rank] = (uint32_t)(base + i);
            __syncthreads(); /* every cursor read before any moves */
            if (i < len && id >= 0 && last)
                first[id] += rank + 1;
            __syncthreads();
        }
        if (pass == 1)
            break;
        /* counts to starts: an exclusive scan of first in place, a strip per thread */
        const int64_t strip = (vocab + kSortBlock - 1) / kSortBlock;
        const int64_t lo = i * strip, hi = lo + strip < vocab ? lo + strip : vocab;
        uint32_t mine = 0;
        for (int64_t v = lo; v < hi; v++)
            mine += first[v];
        s_sum[i] = mine;
        __syncthreads();
        for (int off = 1; off < kSortBlock; off <<= 1) {
            const uint32_t add = i >= off ? s_sum[i - off] : 0u;
            __syncthreads();
            s_sum[i] += add;
            __syncthreads();
        }
        uint32_t run = s_sum[i] - mine;
        for (int64_t v = lo; v < hi; v++) {
            const uint32_t cnt = first[v];
            first[v] = run;
            run += cnt;
        }
        __syncthreads();
    }
}

/* Rows r < vocab: dtok[r] = the sum of dx over id r's positions (order, first); rows vocab + t:
 * dpos[t] = the sum of dx over the batch. fp32 sums in (b, t) order, rounded once. */
template <typename T, int N>
__global__ void __launch_bounds__(kRowBlock)
embed_backward_kernel(const uint32_t *first, const uint32_t *order, const T *dx, T *dtok, T *dpos, int64_t batch,
                      int64_t n, int64_t d, int64_t vocab, int tpr)
{
    const int64_t dpk = d / N, rows = vocab + n;
    const int rows_per_block = kRowBlock / tpr;
    const int lane = threadIdx.x % tpr;
    for (int64_t r = (int64_t)blockIdx.x * rows_per_block + threadIdx.x / tpr; r < rows;
         r += (int64_t)gridDim.x * rows_per_block) {
        const bool tok = r < vocab;
        const int64_t q0 = tok && r > 0 ? first[r - 1] : 0, q1 = tok ? first[r] : batch;
        T *out = tok ? dtok + r * d : dpos + (r - vocab) * d;
        for (int64_t j = lane; j < dpk; j += tpr) {
            float acc[N];
#pragma unroll
            for (int e = 0; e < N; e++)
                acc[e] = 0.0f;
            for (int64_t q = q0; q < q1; q++) {
                const int64_t p = tok ? (int64_t)order[q] : q * n + (r - vocab);
                const LbPack<T, N> a = lb_load_pack<T, N>(dx + p * d + j * N);
#pragma unroll
                for (int e = 0; e < N; e++)
                    acc[e] += lb_to_float(a.v[e]);
            }
            LbPack<T, N> o;
#pragma unroll
            for (int e = 0; e < N; e++)
                o.v[e] = lb_from_float<T>(acc[e]);
            lb_store_pack<T, N>(out + j * N, o);
        }
    }
}

template <typename T, int N>
int launch_backward(const uint32_t *first, const uint32_t *order, const T *dx, T *dtok, T *dpos, int64_t batch,
                    int64_t n, int64_t d, int64_t vocab, cudaStream_t st)
{
    const int tpr = lb_threads_per_row(d / N);
    LB_LAUNCH(lb_grid_for(vocab + n, kRowBlock / tpr), kRowBlock, 0, st, embed_backward_kernel<T, N>)(
        first, order, dx, dtok, dpos, batch, n, d, vocab, tpr);
    LB_LAUNCH_CHECK("embed_backward_kernel");
    return LB_OK;
}

} // namespace

extern "C" int lb_cuda_embed(LbBackend *be, const int32_t *d_ids, const void *d_tok, const void *d_pos, void *d_x,
                             int64_t batch, int64_t n, int64_t d)
{
    LB_TRY(lb_args_embed(be, d_ids, d_tok, d_pos, d_x, batch, n, d));
    if (batch == 0 || n == 0 || d == 0)
        return LB_OK;
    LB_DISPATCH_PACKS(be->storage, T, N,
                      lb_can_vec16(d_tok, d, sizeof(T)) && lb_can_vec16(d_pos, d, sizeof(T)) &&
                          lb_can_vec16(d_x, d, sizeof(T)),
                      LB_TRY((launch_n<T, N>(d_ids, static_cast<const T *>(d_tok), static_cast<const T *>(d_pos),
                                             static_cast<T *>(d_x), batch * n, n, d, lb_cuda_stream(be)))));
    return lb_emu_corrupt(be, "embed", d_x, batch * n * d);
}

extern "C" int lb_cuda_embed_backward(LbBackend *be, const int32_t *d_ids, const void *d_dx, void *d_dtok,
                                      void *d_dpos, int64_t batch, int64_t n, int64_t d, int64_t vocab,
                                      void *d_scratch)
{
    LB_TRY(lb_args_embed_backward(be, d_ids, d_dx, d_dtok, d_dpos, batch, n, d, vocab, d_scratch));
    const cudaStream_t stream = lb_cuda_stream(be);
    const int64_t tokens = batch * n;
    if (d == 0 || vocab + n == 0)
        return LB_OK;
    if (tokens > (int64_t)UINT32_MAX || vocab >= (int64_t)UINT32_MAX)
        return LB_FAIL(LB_ERR_INVALID, "cuda embed_backward: %lld positions or a vocabulary of %lld past 32-bit sort keys",
                       (long long)tokens, (long long)vocab);
    if ((uintptr_t)d_scratch % 4u != 0)
        return LB_FAIL(LB_ERR_INVALID, "cuda embed_backward: scratch not 4-byte aligned");
    uint32_t *first = static_cast<uint32_t *>(d_scratch), *order = first + vocab + 1;
    LB_LAUNCH(1, kSortBlock, 0, stream, embed_sort_kernel)(d_ids, first, order, tokens, vocab);
    LB_LAUNCH_CHECK("embed_sort_kernel");
    LB_DISPATCH_PACKS(be->storage, T, N,
                      lb_can_vec16(d_dx, d, sizeof(T)) && lb_can_vec16(d_dtok, d, sizeof(T)) &&
                          lb_can_vec16(d_dpos, d, sizeof(T)),
                      return launch_backward<T, N>(first, order, static_cast<const T *>(d_dx), static_cast<T *>(d_dtok),
                                                   static_cast<T *>(d_dpos), batch, n, d, vocab, stream));
    return LB_OK;
}
