/* The flash model's op (LbOps.flash_attention): exact softmax attention fused into one kernel in
 * FlashAttention-2's form (Dao, 2023), never writing the n x n scores.
 *
 * fp16/bf16 (tensor cores): a block of 4 warps per (sequence, head, tile of query rows), each
 * warp 32 rows as two m16 tiles (one at d_h > 64, gpu/flash_tiles.h) so every K/V fragment read
 * feeds one mma per tile. Q, K and V tiles come from the fused QKV buffer by cp.async, K and V
 * double-buffered. S = Q K^T by mma.sync m16n8k16 (fp32 accumulation), then the online softmax in
 * registers (exp2 as one FFMA and one ex2.approx.ftz), then O += P V with P taken straight from
 * S's accumulators. Keys past n score -inf; rows past n are computed on zeros and not stored.
 *
 * fp32 (SIMT: TF32 would round Q and K to 10 bits): one thread per query row, K/V tiles of 32 keys
 * in shared memory, the same online softmax.
 *
 * Head widths: multiples of 16 up to LB_FLASH_HD_MAX, each its own instantiation so the fragments
 * stay in registers. Checked by the check table (attn/check.c, tests/gpu/test_gpu_ops.c) against lb_flash_attention_cpu. */
#include <math.h>

#include "gpu/cuda_check.h"
#include "gpu/device_util.cuh"
#include "gpu/flash_tiles.h"
#include "gpu/kernels.h"
#include "gpu/tensor_core.cuh"

namespace {

constexpr int kWarps = LB_FLASH_WARPS;
constexpr int kThreads = kWarps * 32;
constexpr int kKeys = LB_FLASH_KEYS;
constexpr float kLog2e = 1.4426950408889634f;

template <int HD> __host__ __device__ constexpr int m_tiles() { return LB_FLASH_M_TILES(HD); }
template <int HD> __host__ __device__ constexpr int block_rows() { return LB_FLASH_BLOCK_ROWS(HD); }
template <int HD> __host__ __device__ constexpr int row_stride() { return HD + LB_FLASH_PAD; }
template <int HD> constexpr size_t tensor_shared_bytes() { return LB_FLASH_SHARED_BYTES(HD); }
/* The least a block may opt into of the GPUs built for: 99 KiB on sm_86, sm_89 and sm_120 (the
 * CUDA programming guide's table of compute capabilities); the emulated device, compute
 * capability 9.0, allows 227 KiB and would not show a width past it. */
static_assert(tensor_shared_bytes<LB_FLASH_HD_MAX>() <= 101376 && tensor_shared_bytes<64>() <= 101376,
              "the tiles of every head width must fit the shared memory of an L4 or RTX 4090");

/* ROWS rows [r0, r0 + ROWS) of a head (row t at src + t ld) into dst (ROWS x stride), by
 * cp.async in 16-byte pieces, a fixed number per thread; rows at or past n are zeros (src's row 0
 * is named but not read). Offsets within the tile are 32-bit: ld ROWS < 2^31 (the launch checks). */
template <typename T, int HD, int ROWS>
__device__ __forceinline__ void load_tile(T *dst, const T *src, int ld, int64_t r0, int64_t n)
{
    constexpr int kPieces = HD / 8; /* 16 bytes = 8 elements of 2 bytes */
    constexpr int kSteps = (ROWS * kPieces + kThreads - 1) / kThreads;
    const T *tile = src + r0 * (int64_t)ld;
    const int valid = n - r0 < ROWS ? (int)(n - r0) : ROWS;
#pragma unroll
    for (int step = 0; step < kSteps; step++) {
        const int i = (int)threadIdx.x + step * kThreads;
        if (ROWS * kPieces % kThreads == 0 || i < ROWS * kPieces) {
            const int r = i / kPieces, c = (i % kPieces) * 8;
            const bool in = r < valid;
            lb_cp_async16(dst + r * row_stride<HD>() + c, in ? tile + r * ld + c : src, in);
        }
    }
}

template <typename T, int HD>
__global__ void __launch_bounds__(kThreads)
flash_tensor_kernel(const T *q, const T *k, const T *v, int ld, T *o, int64_t n, int64_t heads, int64_t tiles,
                    int64_t items, float scale_log2)
{
    constexpr int MT = m_tiles<HD>(), R = block_rows<HD>(), S = row_stride<HD>();
    LB_DYNAMIC_SHARED(T, smem);
    T *sq = smem, *sk = sq + R * S, *sv = sk + 2 * kKeys * S;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, group = lane >> 2, tig = lane & 3;
    const int64_t kv_tiles = (n + kKeys - 1) / kKeys;
    const int last_keys = (int)(n - (kv_tiles - 1) * kKeys); /* keys of the last tile that are < n */

    for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
        const int64_t tile = item % tiles, bh = item / tiles, head = bh % heads, b = bh / heads;
        const int64_t row0 = tile * R;
        const T *qb = q + b * n * ld + head * HD, *kb = k + b * n * ld + head * HD, *vb = v + b * n * ld + head * HD;
        __syncthreads(); /* the previous item's reads of the tiles are done */
        load_tile<T, HD, R>(sq, qb, ld, row0, n);
        load_tile<T, HD, kKeys>(sk, kb, ld, 0, n);
        load_tile<T, HD, kKeys>(sv, vb, ld, 0, n);
        lb_cp_async_commit();

        uint32_t qf[MT][HD / 16][4];
        float acc[MT][HD / 8][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int i = 0; i < HD / 8; i++)
                acc[mt][i][0] = acc[mt][i][1] = acc[mt][i][2] = acc[mt][i][3] = 0.0f;
        /* per m16 tile, rows `group` and group + 8: the running maximum in exp2's units (scores
         * times scale log2 e) and this lane's part of the running sum */
        float m_run[MT][2], l_run[MT][2];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
            m_run[mt][0] = m_run[mt][1] = -INFINITY, l_run[mt][0] = l_run[mt][1] = 0.0f;

        for (int64_t j = 0; j < kv_tiles; j++) {
            lb_cp_async_wait<0>();
            __syncthreads(); /* tile j is in, and every warp is done with tile j - 1's buffers */
            if (j + 1 < kv_tiles) {
                const int nb = (int)((j + 1) & 1);
                load_tile<T, HD, kKeys>(sk + nb * kKeys * S, kb, ld, (j + 1) * kKeys, n);
                load_tile<T, HD, kKeys>(sv + nb * kKeys * S, vb, ld, (j + 1) * kKeys, n);
            }
            lb_cp_async_commit();
            if (j == 0) {
                /* this warp's rows of Q as A fragments, m16 tile mt at rows (warp MT + mt) 16:
                 * matrices (rows 0-7 | 8-15) x (cols 0-7 | 8-15) */
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int kk = 0; kk < HD / 16; kk++)
                        lb_ldmatrix_x4(qf[mt][kk], sq + ((warp * MT + mt) * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * S +
                                                       kk * 16 + (lane >> 4) * 8);
            }
            const T *ck = sk + (j & 1) * kKeys * S, *cv = sv + (j & 1) * kKeys * S;

            /* S (MT 16 x 64 per warp) = Q K^T: B of key tile n8 is K's rows (keys) read as
             * columns, each fragment used by every m16 tile */
            float s[MT][kKeys / 8][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int i = 0; i < kKeys / 8; i++)
                    s[mt][i][0] = s[mt][i][1] = s[mt][i][2] = s[mt][i][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < HD / 16; kk++) {
#pragma unroll
                for (int nt = 0; nt < kKeys / 16; nt++) {
                    uint32_t bf[4]; /* keys nt*16 + (0-7 | 8-15) x head columns kk*16 + (0-7 | 8-15) */
                    lb_ldmatrix_x4(bf, ck + (nt * 16 + (lane & 7) + (lane >> 4) * 8) * S + kk * 16 +
                                           ((lane >> 3) & 1) * 8);
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) {
                        lb_mma_16816<T>(s[mt][2 * nt], qf[mt][kk], bf);
                        lb_mma_16816<T>(s[mt][2 * nt + 1], qf[mt][kk], bf + 2);
                    }
                }
            }
            /* keys past n score -inf: only the last tile has any */
            if (j == kv_tiles - 1 && last_keys < kKeys) {
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int nt = 0; nt < kKeys / 8; nt++)
#pragma unroll
                        for (int i = 0; i < 4; i++)
                            if (nt * 8 + 2 * tig + (i & 1) >= last_keys)
                                s[mt][nt][i] = -INFINITY;
            }

            /* Online softmax: this lane holds rows `group` (c0, c1) and group + 8 (c2, c3) of each
             * m16 tile. The maximum is taken of the raw scores (the scale is positive) and the
             * scale folded into the exponent's fused multiply-add. */
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
                for (int nt = 0; nt < kKeys / 8; nt++)
#pragma unroll
                    for (int i = 0; i < 4; i++)
                        mx[i >> 1] = fmaxf(mx[i >> 1], s[mt][nt][i]);
                float alpha[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    const float m_new = fmaxf(m_run[mt][r], lb_lane_reduce<LbMax, 4>(mx[r]) * scale_log2); /* the row's lanes */
                    alpha[r] = lb_exp2_ftz(m_run[mt][r] - m_new); /* 0 on the first tile (m_run -inf) */
                    m_run[mt][r] = m_new;
                }
#pragma unroll
                for (int nt = 0; nt < kKeys / 8; nt++)
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        const float p = lb_exp2_ftz(fmaf(s[mt][nt][i], scale_log2, -m_run[mt][i >> 1]));
                        s[mt][nt][i] = p;
                        sum[i >> 1] += p;
                    }
#pragma unroll
                for (int r = 0; r < 2; r++)
                    l_run[mt][r] = l_run[mt][r] * alpha[r] + sum[r]; /* the quad sums it at the end */
#pragma unroll
                for (int dt = 0; dt < HD / 8; dt++)
#pragma unroll
                    for (int i = 0; i < 4; i++)
                        acc[mt][dt][i] *= alpha[i >> 1];
            }

            /* O += P V: P's k16 chunk c is S's n8 tiles 2c and 2c + 1; V's B fragments transposed,
             * each used by every m16 tile */
#pragma unroll
            for (int c = 0; c < kKeys / 16; c++) {
                uint32_t pa[MT][4];
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    pa[mt][0] = lb_pack2<T>(s[mt][2 * c][0], s[mt][2 * c][1]);
                    pa[mt][1] = lb_pack2<T>(s[mt][2 * c][2], s[mt][2 * c][3]);
                    pa[mt][2] = lb_pack2<T>(s[mt][2 * c + 1][0], s[mt][2 * c + 1][1]);
                    pa[mt][3] = lb_pack2<T>(s[mt][2 * c + 1][2], s[mt][2 * c + 1][3]);
                }
#pragma unroll
                for (int dt = 0; dt < HD / 16; dt++) {
                    uint32_t bf[4]; /* keys c*16 + (0-7 | 8-15) x head columns dt*16 + (0-7 | 8-15) */
                    lb_ldmatrix_x4_trans(bf, cv + (c * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * S + dt * 16 +
                                                 (lane >> 4) * 8);
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) {
                        lb_mma_16816<T>(acc[mt][2 * dt], pa[mt], bf);
                        lb_mma_16816<T>(acc[mt][2 * dt + 1], pa[mt], bf + 2);
                    }
                }
            }
        }

        /* O / l, token-major; rows past n were computed on zeros and are not stored */
        const int64_t width = heads * HD;
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const float inv = 1.0f / lb_lane_reduce<LbSum, 4>(l_run[mt][r]);
                const int64_t row = row0 + (warp * MT + mt) * 16 + group + r * 8;
                if (row >= n)
                    continue;
                T *out = o + (b * n + row) * width + head * HD + 2 * tig;
#pragma unroll
                for (int dt = 0; dt < HD / 8; dt++) {
                    out[dt * 8] = lb_from_float<T>(acc[mt][dt][2 * r] * inv);
                    out[dt * 8 + 1] = lb_from_float<T>(acc[mt][dt][2 * r + 1] * inv);
                }
            }
    }
}

constexpr int kSimtRows = 64; /* fp32: one thread per query row */
constexpr int kSimtKeys = 32;
template <int HD> constexpr bool kSimtScoresInRegisters = HD <= 80;

template <int HD>
__global__ void __launch_bounds__(kSimtRows)
flash_simt_kernel(const float *q, const float *k, const float *v, int64_t ld, float *o, int64_t n, int64_t heads,
                  int64_t tiles, int64_t items, float scale_log2)
{
    LB_SHARED(float, sk, kSimtKeys * HD);
    LB_SHARED(float, sv, kSimtKeys * HD);
    for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
        const int64_t tile = item % tiles, bh = item / tiles, head = bh % heads, b = bh / heads;
        const int64_t row = tile * kSimtRows + threadIdx.x;
        const float *kb = k + b * n * ld + head * HD, *vb = v + b * n * ld + head * HD;
        float qr[HD], acc[HD];
        const float *qrow = q + (b * n + (row < n ? row : 0)) * ld + head * HD;
#pragma unroll
        for (int e = 0; e < HD; e++) {
            qr[e] = row < n ? qrow[e] * scale_log2 : 0.0f;
            acc[e] = 0.0f;
        }
        float m_run = -INFINITY, l_run = 0.0f;
        for (int64_t key0 = 0; key0 < n; key0 += kSimtKeys) {
            __syncthreads(); /* every thread is done with the previous tile */
            for (int i = threadIdx.x; i < kSimtKeys * HD; i += kSimtRows) {
                const int64_t t = key0 + i / HD;
                sk[i] = t < n ? kb[t * ld + i % HD] : 0.0f;
                sv[i] = t < n ? vb[t * ld + i % HD] : 0.0f;
            }
            __syncthreads();
            /* Up to d_h 80 every key of the tile, those past n masked: a loop bound the compiler
             * knows keeps the scores in registers rather than local memory. Wider heads need
             * those registers for the row and its output, and loop over the tile's keys only. */
            const int keys = n - key0 < kSimtKeys ? (int)(n - key0) : kSimtKeys;
            const int bound = kSimtScoresInRegisters<HD> ? kSimtKeys : keys;
            float s[kSimtKeys];
            float mx = m_run;
#pragma unroll
            for (int c = 0; c < bound; c++) {
                float dot = 0.0f;
#pragma unroll
                for (int e = 0; e < HD; e++)
                    dot = fmaf(qr[e], sk[c * HD + e], dot);
                s[c] = c < keys ? dot : -INFINITY;
                mx = fmaxf(mx, s[c]);
            }
            const float alpha = exp2f(m_run - mx);
            m_run = mx;
            l_run *= alpha;
#pragma unroll
            for (int e = 0; e < HD; e++)
                acc[e] *= alpha;
#pragma unroll
            for (int c = 0; c < bound; c++) {
                const float p = exp2f(s[c] - mx); /* 0 for a masked key */
                l_run += p;
#pragma unroll
                for (int e = 0; e < HD; e++)
                    acc[e] = fmaf(p, sv[c * HD + e], acc[e]);
            }
        }
        if (row < n) {
            float *out = o + (b * n + row) * heads * HD + head * HD;
            const float inv = 1.0f / l_run;
#pragma unroll
            for (int e = 0; e < HD; e++)
                out[e] = acc[e] * inv;
        }
    }
}

template <typename T, int HD>
int launch_tensor(const T *q, const T *k, const T *v, int64_t ld, T *o, int64_t batch, int64_t n, int64_t heads,
                  float scale_log2, cudaStream_t stream)
{
    const size_t bytes = tensor_shared_bytes<HD>();
    /* past 48 KiB a kernel must opt in, once per instantiation and device: remembered per device
     * (a process measures on one GPU at a time; sweep --gpus gives each its own process), so a
     * timed pass makes no host call for it */
    if (bytes > ((size_t)48 << 10)) {
        static bool opted_in[64];
        int device = 0;
        LB_CUDA_CHECK(cudaGetDevice(&device));
        if (device < 0 || device >= 64 || !opted_in[device]) {
            LB_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void *>(flash_tensor_kernel<T, HD>),
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
            if (device >= 0 && device < 64)
                opted_in[device] = true;
        }
    }
    const int64_t tiles = (n + block_rows<HD>() - 1) / block_rows<HD>(), items = tiles * heads * batch;
    LB_LAUNCH(lb_grid_for(items, 1), kThreads, bytes, stream, flash_tensor_kernel<T, HD>)(q, k, v, (int)ld, o, n, heads,
                                                                                          tiles, items, scale_log2);
    LB_LAUNCH_CHECK("flash_tensor_kernel");
    return LB_OK;
}

template <int HD>
int launch_simt(const float *q, const float *k, const float *v, int64_t ld, float *o, int64_t batch, int64_t n,
                int64_t heads, float scale_log2, cudaStream_t stream)
{
    const int64_t tiles = (n + kSimtRows - 1) / kSimtRows, items = tiles * heads * batch;
    LB_LAUNCH(lb_grid_for(items, 1), kSimtRows, 0, stream, flash_simt_kernel<HD>)(q, k, v, ld, o, n, heads, tiles,
                                                                                  items, scale_log2);
    LB_LAUNCH_CHECK("flash_simt_kernel");
    return LB_OK;
}

/* Each head width its own instantiation: LB_FLASH_HD_STEP, 2 LB_FLASH_HD_STEP, ... LB_FLASH_HD_MAX. */
template <typename T, int HD = LB_FLASH_HD_STEP>
int dispatch(const T *q, const T *k, const T *v, int64_t ld, T *o, int64_t batch, int64_t n, int64_t heads, int64_t hd,
             float scale_log2, cudaStream_t stream)
{
    if (hd == HD) {
        if constexpr (sizeof(T) == 4)
            return launch_simt<HD>(q, k, v, ld, o, batch, n, heads, scale_log2, stream);
        else
            return launch_tensor<T, HD>(q, k, v, ld, o, batch, n, heads, scale_log2, stream);
    }
    if constexpr (HD < LB_FLASH_HD_MAX)
        return dispatch<T, HD + LB_FLASH_HD_STEP>(q, k, v, ld, o, batch, n, heads, hd, scale_log2, stream);
    return LB_FAIL(LB_ERR_INVALID, "flash_attention: head width %lld: should be a multiple of %d up to %d",
                   (long long)hd, LB_FLASH_HD_STEP, LB_FLASH_HD_MAX);
}

} // namespace

extern "C" int lb_cuda_flash_attention(cudaStream_t stream, LbDtype dtype, const void *d_q, const void *d_k,
                                       const void *d_v, int64_t ld, void *d_o, int64_t batch, int64_t n,
                                       int64_t heads, int64_t hd, float scale)
{
    if (batch == 0 || n == 0 || heads == 0)
        return LB_OK;
    /* cp.async moves 16-byte pieces: every head's rows must start on 16 bytes */
    const size_t e = dtype == LB_DTYPE_FP32 ? 4 : 2;
    if (dtype != LB_DTYPE_FP32 &&
        (((uintptr_t)d_q | (uintptr_t)d_k | (uintptr_t)d_v) % 16u != 0 || ((size_t)ld * e) % 16u != 0))
        return LB_FAIL(LB_ERR_INVALID, "flash_attention: Q, K, V rows not 16-byte aligned (row stride %lld)",
                       (long long)ld);
    /* the tile copies' 32-bit offsets: ld times a block's rows */
    if (ld > INT32_MAX / block_rows<16>())
        return LB_FAIL(LB_ERR_INVALID, "flash_attention: row stride %lld: should be below %d elements",
                       (long long)ld, INT32_MAX / block_rows<16>());
    const float scale_log2 = scale * kLog2e;
    LB_DISPATCH_DTYPE(dtype, T,
                      return dispatch<T>(static_cast<const T *>(d_q), static_cast<const T *>(d_k),
                                         static_cast<const T *>(d_v), ld, static_cast<T *>(d_o), batch, n, heads, hd,
                                         scale_log2, stream));
    return LB_OK;
}
