/* The flash model's op (LbOps.flash_attention, attn/model_flash.c): exact softmax attention fused
 * into one kernel in FlashAttention-2's form (Dao, 2023), never writing the n x n scores.
 *
 * fp16 and bf16 (tensor cores): one block of 4 warps per (sequence, head, tile of 64 query rows),
 * each warp 16 of the rows. The Q tile, and K and V tiles of 64 keys, are copied from the fused
 * QKV buffer (token-major, read in place) into shared memory with cp.async, K and V
 * double-buffered: the copy of tile j + 1 is issued before tile j is computed. Per tile,
 * S = Q K^T (mma.sync m16n8k16, fp32 accumulation; A from ldmatrix of Q, B from ldmatrix of K),
 * then the online softmax in registers: the running row maximum m and sum l, the scale folded into
 * the exponent's base-2 argument (exp2((s - m) scale log2 e)), O rescaled by exp2(m_old - m_new)
 * whenever the maximum grows; then O += P V with P taken straight from S's accumulators (the C
 * fragment of two n8 tiles is the A fragment of one k16 chunk) and V through ldmatrix.trans. Keys
 * past n score -inf; rows past n are computed on zeros and not stored. The output, O / l, is
 * written token-major.
 *
 * fp32 (SIMT, no tensor cores: TF32 would round Q and K to 10 bits, further from the reference
 * than fp32 storage promises): one thread per query row, K and V tiles of 32 keys in shared
 * memory, the same online softmax.
 *
 * Head widths: multiples of 16 up to 128 (LB_FLASH_HD_MAX), each its own instantiation so the
 * fragments stay in registers. The instructions are gpu/tensor_core.cuh's; the emulated build
 * runs them as warp collectives with the PTX ISA's layouts, and poisons a cp.async destination
 * until its wait. Checked by tests/gpu/test_gpu_flash.c against lb_flash_attention_cpu (double),
 * three storage types, head widths 16 to 128, lengths that are and are not multiples of the tiles,
 * several sequences and heads, the grid capped so blocks take several tiles. */
#include <math.h>

#include "gpu/cuda_check.h"
#include "gpu/device_util.cuh"
#include "gpu/kernels.h"
#include "gpu/tensor_core.cuh"

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kRows = kWarps * 16; /* query rows per block: a warp's m16 */
constexpr int kKeys = 64;          /* keys per K, V tile */
/* Each shared row padded by 16 bytes: the 8 rows one ldmatrix reads then start in 8 different
 * 16-byte bank groups (a row of 64 elements is 128 bytes, a whole number of bank rows). */
constexpr int kPad = 8;
constexpr float kLog2e = 1.4426950408889634f;

template <int HD> __host__ __device__ constexpr int row_stride() { return HD + kPad; }
/* Q tile, two K tiles, two V tiles. */
template <int HD> constexpr size_t tensor_shared_bytes() { return (size_t)(kRows + 4 * kKeys) * row_stride<HD>() * 2; }
/* The least a block may opt into of the GPUs built for: 99 KiB on sm_86, sm_89 and sm_120 (the
 * CUDA programming guide's table of compute capabilities); the emulated device, compute
 * capability 9.0, allows 227 KiB and would not show a width past it. */
static_assert(tensor_shared_bytes<LB_FLASH_HD_MAX>() <= 101376,
              "the widest head's tiles must fit the shared memory of an L4 or RTX 4090");

/* rows [r0, r0 + count) of a head (row t at src + t ld) into dst (count x stride), by cp.async
 * in 16-byte pieces; rows at or past n are zeros (src's row 0 is named but not read). */
template <typename T, int HD>
__device__ __forceinline__ void load_tile(T *dst, const T *src, int64_t ld, int64_t r0, int count, int64_t n)
{
    constexpr int kPieces = HD / 8; /* 16 bytes = 8 elements of 2 bytes */
    for (int i = threadIdx.x; i < count * kPieces; i += kThreads) {
        const int r = i / kPieces, c = (i % kPieces) * 8;
        const int64_t t = r0 + r;
        const bool in = t < n;
        lb_cp_async16(dst + r * row_stride<HD>() + c, src + (in ? t : 0) * ld + c, in);
    }
}

template <typename T, int HD>
__global__ void __launch_bounds__(kThreads)
flash_tensor_kernel(const T *q, const T *k, const T *v, int64_t ld, T *o, int64_t n, int64_t heads, int64_t tiles,
                    int64_t items, float scale_log2)
{
    LB_DYNAMIC_SHARED(T, smem);
    constexpr int S = row_stride<HD>();
    T *sq = smem, *sk = sq + kRows * S, *sv = sk + 2 * kKeys * S;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, group = lane >> 2, tig = lane & 3;
    const int64_t kv_tiles = (n + kKeys - 1) / kKeys;

    for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
        const int64_t tile = item % tiles, bh = item / tiles, head = bh % heads, b = bh / heads;
        const int64_t row0 = tile * kRows;
        const T *qb = q + b * n * ld + head * HD, *kb = k + b * n * ld + head * HD, *vb = v + b * n * ld + head * HD;
        __syncthreads(); /* the previous item's reads of the tiles are done */
        load_tile<T, HD>(sq, qb, ld, row0, kRows, n);
        load_tile<T, HD>(sk, kb, ld, 0, kKeys, n);
        load_tile<T, HD>(sv, vb, ld, 0, kKeys, n);
        lb_cp_async_commit();

        uint32_t qf[HD / 16][4];
        float acc[HD / 8][4];
#pragma unroll
        for (int i = 0; i < HD / 8; i++)
            acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
        float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.0f, 0.0f};

        for (int64_t j = 0; j < kv_tiles; j++) {
            lb_cp_async_wait<0>();
            __syncthreads(); /* tile j is in, and every warp is done with tile j - 1's buffers */
            if (j + 1 < kv_tiles) {
                const int nb = (int)((j + 1) & 1);
                load_tile<T, HD>(sk + nb * kKeys * S, kb, ld, (j + 1) * kKeys, kKeys, n);
                load_tile<T, HD>(sv + nb * kKeys * S, vb, ld, (j + 1) * kKeys, kKeys, n);
            }
            lb_cp_async_commit();
            if (j == 0) {
                /* this warp's 16 rows of Q as A fragments: matrices (rows 0-7 | 8-15) x (cols 0-7 | 8-15) */
#pragma unroll
                for (int kk = 0; kk < HD / 16; kk++)
                    lb_ldmatrix_x4(qf[kk], sq + (warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * S + kk * 16 +
                                               (lane >> 4) * 8);
            }
            const T *ck = sk + (j & 1) * kKeys * S, *cv = sv + (j & 1) * kKeys * S;

            /* S (16 x 64 per warp) = Q K^T: B of key tile n8 is K's rows (keys) read as columns */
            float s[kKeys / 8][4];
#pragma unroll
            for (int i = 0; i < kKeys / 8; i++)
                s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < HD / 16; kk++) {
#pragma unroll
                for (int nt = 0; nt < kKeys / 16; nt++) {
                    uint32_t bf[4]; /* keys nt*16 + (0-7 | 8-15) x head columns kk*16 + (0-7 | 8-15) */
                    lb_ldmatrix_x4(bf, ck + (nt * 16 + (lane & 7) + (lane >> 4) * 8) * S + kk * 16 +
                                           ((lane >> 3) & 1) * 8);
                    lb_mma_16816<T>(s[2 * nt], qf[kk], bf);
                    lb_mma_16816<T>(s[2 * nt + 1], qf[kk], bf + 2);
                }
            }

            /* Online softmax: this lane holds rows `group` (c0, c1) and group + 8 (c2, c3) */
            const int64_t key0 = j * kKeys;
            float mx[2] = {m_run[0], m_run[1]};
#pragma unroll
            for (int nt = 0; nt < kKeys / 8; nt++)
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const int64_t key = key0 + nt * 8 + 2 * tig + (i & 1);
                    const float x = key < n ? s[nt][i] * scale_log2 : -INFINITY;
                    s[nt][i] = x;
                    mx[i >> 1] = fmaxf(mx[i >> 1], x);
                }
            float alpha[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
            for (int r = 0; r < 2; r++) {
                mx[r] = lb_group_max<4>(mx[r]); /* the row's four lanes */
                alpha[r] = exp2f(m_run[r] - mx[r]); /* 0 on the first tile (m_run -inf) */
                m_run[r] = mx[r];
            }
#pragma unroll
            for (int nt = 0; nt < kKeys / 8; nt++)
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const float p = exp2f(s[nt][i] - mx[i >> 1]);
                    s[nt][i] = p;
                    sum[i >> 1] += p;
                }
#pragma unroll
            for (int r = 0; r < 2; r++)
                l_run[r] = l_run[r] * alpha[r] + sum[r]; /* this lane's part; the quad sums it at the end */
#pragma unroll
            for (int dt = 0; dt < HD / 8; dt++)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    acc[dt][i] *= alpha[i >> 1];

            /* O += P V: P's k16 chunk c is S's n8 tiles 2c and 2c + 1; V's B fragments transposed */
#pragma unroll
            for (int c = 0; c < kKeys / 16; c++) {
                const uint32_t pa[4] = {lb_pack2<T>(s[2 * c][0], s[2 * c][1]), lb_pack2<T>(s[2 * c][2], s[2 * c][3]),
                                        lb_pack2<T>(s[2 * c + 1][0], s[2 * c + 1][1]),
                                        lb_pack2<T>(s[2 * c + 1][2], s[2 * c + 1][3])};
#pragma unroll
                for (int dt = 0; dt < HD / 16; dt++) {
                    uint32_t bf[4]; /* keys c*16 + (0-7 | 8-15) x head columns dt*16 + (0-7 | 8-15) */
                    lb_ldmatrix_x4_trans(bf, cv + (c * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * S + dt * 16 +
                                                 (lane >> 4) * 8);
                    lb_mma_16816<T>(acc[2 * dt], pa, bf);
                    lb_mma_16816<T>(acc[2 * dt + 1], pa, bf + 2);
                }
            }
        }

        /* O / l, token-major; rows past n were computed on zeros and are not stored */
        float inv[2];
#pragma unroll
        for (int r = 0; r < 2; r++)
            inv[r] = 1.0f / lb_group_sum<4>(l_run[r]);
        const int64_t width = heads * HD;
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int64_t row = row0 + warp * 16 + group + r * 8;
            if (row >= n)
                continue;
            T *out = o + (b * n + row) * width + head * HD + 2 * tig;
#pragma unroll
            for (int dt = 0; dt < HD / 8; dt++) {
                out[dt * 8] = lb_from_float<T>(acc[dt][2 * r] * inv[r]);
                out[dt * 8 + 1] = lb_from_float<T>(acc[dt][2 * r + 1] * inv[r]);
            }
        }
    }
}

constexpr int kSimtRows = 64; /* fp32: one thread per query row */
constexpr int kSimtKeys = 32;

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
            const int keys = n - key0 < kSimtKeys ? (int)(n - key0) : kSimtKeys;
            float s[kSimtKeys];
            float mx = m_run;
            for (int c = 0; c < keys; c++) {
                float dot = 0.0f;
#pragma unroll
                for (int e = 0; e < HD; e++)
                    dot = fmaf(qr[e], sk[c * HD + e], dot);
                s[c] = dot;
                mx = fmaxf(mx, dot);
            }
            const float alpha = exp2f(m_run - mx);
            m_run = mx;
            l_run *= alpha;
#pragma unroll
            for (int e = 0; e < HD; e++)
                acc[e] *= alpha;
            for (int c = 0; c < keys; c++) {
                const float p = exp2f(s[c] - mx);
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
    const int64_t tiles = (n + kRows - 1) / kRows, items = tiles * heads * batch;
    LB_LAUNCH(lb_grid_for(items, 1), kThreads, bytes, stream, flash_tensor_kernel<T, HD>)(q, k, v, ld, o, n, heads,
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

template <typename T, int HD>
int launch_width(const void *q, const void *k, const void *v, int64_t ld, void *o, int64_t batch, int64_t n,
                 int64_t heads, float scale_log2, cudaStream_t stream)
{
    if constexpr (sizeof(T) == 4)
        return launch_simt<HD>(static_cast<const float *>(q), static_cast<const float *>(k),
                               static_cast<const float *>(v), ld, static_cast<float *>(o), batch, n, heads,
                               scale_log2, stream);
    else
        return launch_tensor<T, HD>(static_cast<const T *>(q), static_cast<const T *>(k), static_cast<const T *>(v),
                                    ld, static_cast<T *>(o), batch, n, heads, scale_log2, stream);
}

template <typename T>
int dispatch(const void *q, const void *k, const void *v, int64_t ld, void *o, int64_t batch, int64_t n,
             int64_t heads, int64_t hd, float scale_log2, cudaStream_t stream)
{
    switch (hd) {
    case 16: return launch_width<T, 16>(q, k, v, ld, o, batch, n, heads, scale_log2, stream);
    case 32: return launch_width<T, 32>(q, k, v, ld, o, batch, n, heads, scale_log2, stream);
    case 48: return launch_width<T, 48>(q, k, v, ld, o, batch, n, heads, scale_log2, stream);
    case 64: return launch_width<T, 64>(q, k, v, ld, o, batch, n, heads, scale_log2, stream);
    case 80: return launch_width<T, 80>(q, k, v, ld, o, batch, n, heads, scale_log2, stream);
    case 96: return launch_width<T, 96>(q, k, v, ld, o, batch, n, heads, scale_log2, stream);
    case 112: return launch_width<T, 112>(q, k, v, ld, o, batch, n, heads, scale_log2, stream);
    case 128: return launch_width<T, 128>(q, k, v, ld, o, batch, n, heads, scale_log2, stream);
    default:
        return LB_FAIL(LB_ERR_INVALID, "flash_attention: head width %lld: should be a multiple of %d up to %d",
                       (long long)hd, LB_FLASH_HD_STEP, LB_FLASH_HD_MAX);
    }
}

} // namespace

extern "C" int lb_cuda_flash_attention(cudaStream_t stream, LbDtype dtype, const void *d_q, const void *d_k,
                                       const void *d_v, int64_t ld, void *d_o, int64_t batch, int64_t n,
                                       int64_t heads, int64_t hd, float scale)
{
    if (batch < 0 || n < 0 || heads < 0 || hd < 0)
        return LB_FAIL(LB_ERR_INVALID, "flash_attention: negative shape (%lld, %lld, %lld, %lld)", (long long)batch,
                       (long long)n, (long long)heads, (long long)hd);
    if (batch == 0 || n == 0 || heads == 0)
        return LB_OK;
    /* cp.async moves 16-byte pieces: every head's rows must start on 16 bytes */
    const size_t e = dtype == LB_DTYPE_FP32 ? 4 : 2;
    if (dtype != LB_DTYPE_FP32 &&
        (((uintptr_t)d_q | (uintptr_t)d_k | (uintptr_t)d_v) % 16u != 0 || ((size_t)ld * e) % 16u != 0))
        return LB_FAIL(LB_ERR_INVALID, "flash_attention: Q, K, V rows not 16-byte aligned (row stride %lld)",
                       (long long)ld);
    const float scale_log2 = scale * kLog2e;
    LB_DISPATCH_DTYPE(dtype, T, return dispatch<T>(d_q, d_k, d_v, ld, d_o, batch, n, heads, hd, scale_log2, stream));
    return LB_OK;
}
