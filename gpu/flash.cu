/* Exact softmax attention fused into one kernel in FlashAttention-2's form (Dao, 2023), never
 * writing the n x n scores; each row's log-sum-exp on request, and the backward that recomputes
 * P from it. fp16/bf16: a block of 4 warps per (sequence, head, tile of query rows), K/V tiles by
 * cp.async double-buffered, S = Q K^T and O += P V by mma.sync m16n8k16 with fp32 accumulation,
 * the online softmax in registers, P taken straight from S's accumulators. fp32 (SIMT: TF32 would
 * round Q and K to 10 bits): one thread per query row. Keys past n score -inf. Head widths:
 * multiples of 16 up to LB_FLASH_HD_MAX, one instantiation each so fragments stay in registers.
 * Checked by the check table (attn/check.c) against lb_cpu_flash_attention and its backward. */
#include <math.h>

#include <type_traits>

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
constexpr float kLn2 = 0.6931471805599453f;

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
flash_tensor_kernel(const T *q, const T *k, const T *v, int ld, T *o, float *lse, int64_t n, int64_t heads,
                    int64_t tiles, int64_t items, float scale_log2)
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
                const float l = lb_lane_reduce<LbSum, 4>(l_run[mt][r]), inv = 1.0f / l;
                const int64_t row = row0 + (warp * MT + mt) * 16 + group + r * 8;
                if (row >= n)
                    continue;
                if (lse && tig == 0)
                    lse[bh * n + row] = (m_run[mt][r] + log2f(l)) * kLn2;
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
flash_simt_kernel(const float *q, const float *k, const float *v, int64_t ld, float *o, float *lse, int64_t n,
                  int64_t heads, int64_t tiles, int64_t items, float scale_log2)
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
            if (lse)
                lse[bh * n + row] = (m_run + log2f(l_run)) * kLn2;
        }
    }
}

/* --- the backward (LbOps.flash_attention_backward) ------------------------------------------- */

/* One pass of the backward. A block owns 64 rows of one (sequence, head), 16 a warp (X1, X2), and
 * walks the other side's rows (Y1, Y2) tile by tile, summing into acc1 (and acc2):
 *   keys pass:    X = K, V; Y = Q, dO; acc1 = dK = scale dS^T Q, acc2 = dV = P^T dO
 *   queries pass: X = Q, dO; Y = K, V; acc1 = dQ = scale dS K
 * from S = X1 Y1^T and dP = X2 Y2^T (S^T and dP^T in the keys pass), P = exp(scale S - lse) and
 * dS = P (dP - D), lse and D those of the query. Two passes rather than FlashAttention-2's one
 * with dQ summed by atomics: S and dP are computed twice (7 products of n^2 d_h, not 5), and
 * every gradient is deterministic. */
template <typename T> struct BwdPass {
    const T *x1, *x2, *y1, *y2; /* sequence 0, head 0, row 0 */
    int64_t ld_x2, ld_y2;       /* row strides of X2 and Y2 (V: ld, dO: heads d_h); the rest: ld */
    const float *lse, *dsum;    /* (batch, heads, n): each query's log-sum-exp and D = rowsum(dO o) */
    T *out1, *out2;             /* dK and dV, or dQ and NULL, rows of ld */
    int64_t ld, n, heads, tiles, items;
    float scale, scale_log2;
};

/* c (16 x I) = a (16 rows) b^T (I rows), rows of HD elements in shared memory, stride S: A from
 * a's rows as Q in the forward, B from b's rows as K there. */
template <typename T, int HD, int I>
__device__ __forceinline__ void product_abt(float c[I / 8][4], const T *a, const T *b, int lane)
{
    constexpr int S = row_stride<HD>();
#pragma unroll
    for (int i = 0; i < I / 8; i++)
        c[i][0] = c[i][1] = c[i][2] = c[i][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < HD / 16; kk++) {
        uint32_t af[4]; /* rows (0-7 | 8-15) x columns kk*16 + (0-7 | 8-15) */
        lb_ldmatrix_x4(af, a + ((lane & 7) + ((lane >> 3) & 1) * 8) * S + kk * 16 + (lane >> 4) * 8);
#pragma unroll
        for (int nt = 0; nt < I / 16; nt++) {
            uint32_t bf[4]; /* b's rows nt*16 + (0-7 | 8-15) x columns kk*16 + (0-7 | 8-15) */
            lb_ldmatrix_x4(bf, b + (nt * 16 + (lane & 7) + (lane >> 4) * 8) * S + kk * 16 + ((lane >> 3) & 1) * 8);
            lb_mma_16816<T>(c[2 * nt], af, bf);
            lb_mma_16816<T>(c[2 * nt + 1], af, bf + 2);
        }
    }
}

/* acc (16 x HD) += p (16 x I, C fragments rounded to T as A) b (I rows x HD): P V in the forward. */
template <typename T, int HD, int I>
__device__ __forceinline__ void product_ab(float acc[HD / 8][4], const float p[I / 8][4], const T *b, int lane)
{
    constexpr int S = row_stride<HD>();
#pragma unroll
    for (int c = 0; c < I / 16; c++) {
        const uint32_t pa[4] = {lb_pack2<T>(p[2 * c][0], p[2 * c][1]), lb_pack2<T>(p[2 * c][2], p[2 * c][3]),
                                lb_pack2<T>(p[2 * c + 1][0], p[2 * c + 1][1]),
                                lb_pack2<T>(p[2 * c + 1][2], p[2 * c + 1][3])};
#pragma unroll
        for (int dt = 0; dt < HD / 16; dt++) {
            uint32_t bf[4]; /* b's rows c*16 + (0-7 | 8-15) x columns dt*16 + (0-7 | 8-15), transposed */
            lb_ldmatrix_x4_trans(bf, b + (c * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * S + dt * 16 + (lane >> 4) * 8);
            lb_mma_16816<T>(acc[2 * dt], pa, bf);
            lb_mma_16816<T>(acc[2 * dt + 1], pa, bf + 2);
        }
    }
}

template <typename T, int HD, bool KEYS>
__global__ void __launch_bounds__(kThreads) flash_backward_tensor_kernel(BwdPass<T> a)
{
    constexpr int R = LB_FLASH_BWD_ROWS, I = LB_FLASH_BWD_INNER(HD), S = row_stride<HD>();
    LB_DYNAMIC_SHARED(T, smem);
    T *sx1 = smem, *sx2 = sx1 + R * S, *sy1 = sx2 + R * S, *sy2 = sy1 + 2 * I * S;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, group = lane >> 2, tig = lane & 3;
    const int64_t n = a.n, steps = (n + I - 1) / I;

    for (int64_t item = blockIdx.x; item < a.items; item += gridDim.x) {
        const int64_t tile = item % a.tiles, bh = item / a.tiles, head = bh % a.heads, seq = bh / a.heads * n;
        const int64_t row0 = tile * R;
        const T *x1 = a.x1 + seq * a.ld + head * HD, *x2 = a.x2 + seq * a.ld_x2 + head * HD;
        const T *y1 = a.y1 + seq * a.ld + head * HD, *y2 = a.y2 + seq * a.ld_y2 + head * HD;
        const float *lse = a.lse + bh * n, *dsum = a.dsum + bh * n;
        __syncthreads(); /* the previous item's reads of the tiles are done */
        load_tile<T, HD, R>(sx1, x1, (int)a.ld, row0, n);
        load_tile<T, HD, R>(sx2, x2, (int)a.ld_x2, row0, n);
        load_tile<T, HD, I>(sy1, y1, (int)a.ld, 0, n);
        load_tile<T, HD, I>(sy2, y2, (int)a.ld_y2, 0, n);
        lb_cp_async_commit();

        float acc1[HD / 8][4], acc2[KEYS ? HD / 8 : 1][4];
#pragma unroll
        for (int i = 0; i < HD / 8; i++) {
            acc1[i][0] = acc1[i][1] = acc1[i][2] = acc1[i][3] = 0.0f;
            if constexpr (KEYS)
                acc2[i][0] = acc2[i][1] = acc2[i][2] = acc2[i][3] = 0.0f;
        }
        /* the queries pass: this lane's rows group and group + 8, lse in exp2's units */
        float own_lse[2] = {0.0f, 0.0f}, own_d[2] = {0.0f, 0.0f};
#pragma unroll
        for (int r = 0; r < 2 && !KEYS; r++) {
            const int64_t row = row0 + warp * 16 + group + r * 8;
            own_lse[r] = row < n ? lse[row] * kLog2e : 0.0f;
            own_d[r] = row < n ? dsum[row] : 0.0f;
        }

        for (int64_t j = 0; j < steps; j++) {
            lb_cp_async_wait<0>();
            __syncthreads(); /* step j's tiles are in, and every warp is done with step j - 1's */
            if (j + 1 < steps) {
                const int nb = (int)((j + 1) & 1);
                load_tile<T, HD, I>(sy1 + nb * I * S, y1, (int)a.ld, (j + 1) * I, n);
                load_tile<T, HD, I>(sy2 + nb * I * S, y2, (int)a.ld_y2, (j + 1) * I, n);
            }
            lb_cp_async_commit();
            const T *cy1 = sy1 + (j & 1) * I * S, *cy2 = sy2 + (j & 1) * I * S;

            float s[I / 8][4], dp[I / 8][4];
            product_abt<T, HD, I>(s, sx1 + warp * 16 * S, cy1, lane);
            product_abt<T, HD, I>(dp, sx2 + warp * 16 * S, cy2, lane);
            /* P into s, dS into dp; the other side's rows past n (zeros in the tiles) count for
             * nothing */
#pragma unroll
            for (int nt = 0; nt < I / 8; nt++)
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const int64_t other = j * I + nt * 8 + 2 * tig + (i & 1);
                    float l2 = own_lse[i >> 1], d = own_d[i >> 1];
                    if (KEYS && other < n)
                        l2 = lse[other] * kLog2e, d = dsum[other];
                    const float p = other < n ? lb_exp2_ftz(fmaf(s[nt][i], a.scale_log2, -l2)) : 0.0f;
                    s[nt][i] = p;
                    dp[nt][i] = p * (dp[nt][i] - d);
                }
            if constexpr (KEYS)
                product_ab<T, HD, I>(acc2, s, cy2, lane); /* dV += P^T dO */
            product_ab<T, HD, I>(acc1, dp, cy1, lane);    /* dK += dS^T Q, or dQ += dS K */
        }

        /* rows past n were computed on zeros and are not stored */
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int64_t row = row0 + warp * 16 + group + r * 8;
            if (row >= n)
                continue;
            T *o1 = a.out1 + (seq + row) * a.ld + head * HD + 2 * tig, *o2 = KEYS ? a.out2 + (o1 - a.out1) : nullptr;
#pragma unroll
            for (int dt = 0; dt < HD / 8; dt++) {
                o1[dt * 8] = lb_from_float<T>(acc1[dt][2 * r] * a.scale);
                o1[dt * 8 + 1] = lb_from_float<T>(acc1[dt][2 * r + 1] * a.scale);
                if constexpr (KEYS) {
                    o2[dt * 8] = lb_from_float<T>(acc2[dt][2 * r]);
                    o2[dt * 8 + 1] = lb_from_float<T>(acc2[dt][2 * r + 1]);
                }
            }
        }
    }
}

/* fp32: the same passes, one thread per row of the block's tile, the other side's rows through
 * shared memory kSimtKeys at a time. */
template <int HD, bool KEYS>
__global__ void __launch_bounds__(kSimtRows) flash_backward_simt_kernel(BwdPass<float> a)
{
    LB_SHARED(float, sy1, kSimtKeys * HD);
    LB_SHARED(float, sy2, kSimtKeys * HD);
    LB_SHARED(float, sl, kSimtKeys);
    LB_SHARED(float, sd, kSimtKeys);
    const int64_t n = a.n;
    for (int64_t item = blockIdx.x; item < a.items; item += gridDim.x) {
        const int64_t tile = item % a.tiles, bh = item / a.tiles, head = bh % a.heads, seq = bh / a.heads * n;
        const int64_t row = tile * kSimtRows + threadIdx.x, r = row < n ? row : 0;
        const float *x1 = a.x1 + seq * a.ld + head * HD, *x2 = a.x2 + seq * a.ld_x2 + head * HD;
        const float *y1 = a.y1 + seq * a.ld + head * HD, *y2 = a.y2 + seq * a.ld_y2 + head * HD;
        const float *lse = a.lse + bh * n, *dsum = a.dsum + bh * n;
        float x1r[HD], x2r[HD], acc1[HD], acc2[KEYS ? HD : 1];
#pragma unroll
        for (int e = 0; e < HD; e++) {
            x1r[e] = row < n ? x1[r * a.ld + e] : 0.0f;
            x2r[e] = row < n ? x2[r * a.ld_x2 + e] : 0.0f;
            acc1[e] = 0.0f;
            if constexpr (KEYS)
                acc2[e] = 0.0f;
        }
        const float own_lse = !KEYS && row < n ? lse[row] * kLog2e : 0.0f, own_d = !KEYS && row < n ? dsum[row] : 0.0f;
        for (int64_t o0 = 0; o0 < n; o0 += kSimtKeys) {
            __syncthreads(); /* every thread is done with the previous tile */
            for (int i = threadIdx.x; i < kSimtKeys * HD; i += kSimtRows) {
                const int64_t t = o0 + i / HD;
                sy1[i] = t < n ? y1[t * a.ld + i % HD] : 0.0f;
                sy2[i] = t < n ? y2[t * a.ld_y2 + i % HD] : 0.0f;
            }
            if (KEYS && threadIdx.x < kSimtKeys) {
                const int64_t t = o0 + threadIdx.x;
                sl[threadIdx.x] = t < n ? lse[t] * kLog2e : 0.0f;
                sd[threadIdx.x] = t < n ? dsum[t] : 0.0f;
            }
            __syncthreads();
            const int count = n - o0 < kSimtKeys ? (int)(n - o0) : kSimtKeys;
            for (int c = 0; c < count; c++) {
                float s = 0.0f, dp = 0.0f;
#pragma unroll
                for (int e = 0; e < HD; e++) {
                    s = fmaf(x1r[e], sy1[c * HD + e], s);
                    dp = fmaf(x2r[e], sy2[c * HD + e], dp);
                }
                const float p = exp2f(fmaf(s, a.scale_log2, -(KEYS ? sl[c] : own_lse)));
                const float ds = p * (dp - (KEYS ? sd[c] : own_d));
#pragma unroll
                for (int e = 0; e < HD; e++) {
                    acc1[e] = fmaf(ds, sy1[c * HD + e], acc1[e]);
                    if constexpr (KEYS)
                        acc2[e] = fmaf(p, sy2[c * HD + e], acc2[e]);
                }
            }
        }
        if (row < n) {
            float *o1 = a.out1 + (seq + row) * a.ld + head * HD;
#pragma unroll
            for (int e = 0; e < HD; e++) {
                o1[e] = acc1[e] * a.scale;
                if constexpr (KEYS)
                    a.out2[o1 - a.out1 + e] = acc2[e];
            }
        }
    }
}

/* D = rowsum(dO o) of every (token, head) row in fp32, a warp per row: row r of o and dO (token
 * major, r = token heads + head) into dsum (batch, heads, n). */
template <typename T>
__global__ void __launch_bounds__(kThreads)
flash_dsum_kernel(const T *o, const T *d_o, float *dsum, int64_t rows, int64_t n, int64_t heads, int hd)
{
    const int lane = threadIdx.x & 31;
    for (int64_t r = (int64_t)blockIdx.x * kWarps + (threadIdx.x >> 5); r < rows; r += (int64_t)gridDim.x * kWarps) {
        float sum = 0.0f;
        for (int e = lane; e < hd; e += 32)
            sum = fmaf(lb_to_float(o[r * hd + e]), lb_to_float(d_o[r * hd + e]), sum);
        sum = lb_lane_reduce<LbSum>(sum);
        const int64_t token = r / heads, head = r % heads;
        if (lane == 0)
            dsum[(token / n * heads + head) * n + token % n] = sum;
    }
}

/* --- launches ------------------------------------------------------------------------------- */

/* Past 48 KiB of dynamic shared memory a kernel must opt in, once per kernel (T, HD, WHICH) and
 * device: remembered per device (a process measures on one GPU at a time; sweep --gpus gives each
 * its own process), so a timed pass makes no host call for it. */
template <typename T, int HD, int WHICH> int allow_shared(const void *kernel, size_t bytes)
{
    static bool opted_in[64];
    int device = 0;
    if (bytes <= ((size_t)48 << 10))
        return LB_OK;
    LB_CUDA_CHECK(cudaGetDevice(&device));
    if (device < 0 || device >= 64 || !opted_in[device]) {
        LB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        if (device >= 0 && device < 64)
            opted_in[device] = true;
    }
    return LB_OK;
}

template <typename T, int HD, bool KEYS> int launch_backward(BwdPass<T> a, int64_t batch, cudaStream_t stream)
{
    if constexpr (sizeof(T) == 4) {
        a.tiles = (a.n + kSimtRows - 1) / kSimtRows;
        a.items = a.tiles * a.heads * batch;
        LB_LAUNCH(lb_grid_for(a.items, 1), kSimtRows, 0, stream, flash_backward_simt_kernel<HD, KEYS>)(a);
        LB_LAUNCH_CHECK("flash_backward_simt_kernel");
    } else {
        const size_t bytes = LB_FLASH_BWD_SHARED_BYTES(HD);
        LB_TRY((allow_shared<T, HD, KEYS ? 1 : 2>(
            reinterpret_cast<const void *>(flash_backward_tensor_kernel<T, HD, KEYS>), bytes)));
        a.tiles = (a.n + LB_FLASH_BWD_ROWS - 1) / LB_FLASH_BWD_ROWS;
        a.items = a.tiles * a.heads * batch;
        LB_LAUNCH(lb_grid_for(a.items, 1), kThreads, bytes, stream, flash_backward_tensor_kernel<T, HD, KEYS>)(a);
        LB_LAUNCH_CHECK("flash_backward_tensor_kernel");
    }
    return LB_OK;
}

/* f(std::integral_constant<int, hd>()): each head width its own instantiation, LB_FLASH_HD_STEP,
 * 2 LB_FLASH_HD_STEP, ... LB_FLASH_HD_MAX. */
template <int HD = LB_FLASH_HD_STEP, typename F> int with_head_width(const char *op, int64_t hd, const F &f)
{
    if (hd == HD)
        return f(std::integral_constant<int, HD>());
    if constexpr (HD < LB_FLASH_HD_MAX)
        return with_head_width<HD + LB_FLASH_HD_STEP>(op, hd, f);
    return LB_FAIL(LB_ERR_INVALID, "%s: head width %lld: should be a multiple of %d up to %d", op, (long long)hd,
                   LB_FLASH_HD_STEP, LB_FLASH_HD_MAX);
}

/* cp.async moves 16-byte pieces: every head's rows (at `rows`, ORed) must start on 16 bytes; and
 * the tile copies' offsets are 32-bit: ld times a block's rows. */
int check_rows(const char *op, LbDtype dtype, int64_t ld, uintptr_t rows)
{
    const size_t e = dtype == LB_DTYPE_FP32 ? 4 : 2;
    if (dtype != LB_DTYPE_FP32 && (rows % 16u != 0 || ((size_t)ld * e) % 16u != 0))
        return LB_FAIL(LB_ERR_INVALID, "%s: Q, K, V rows not 16-byte aligned (row stride %lld)", op, (long long)ld);
    if (ld > INT32_MAX / block_rows<16>())
        return LB_FAIL(LB_ERR_INVALID, "%s: row stride %lld: should be below %d elements", op, (long long)ld,
                       INT32_MAX / block_rows<16>());
    return LB_OK;
}

/* The forward, lse (batch, heads, n) fp32 or NULL. */
int flash_forward(LbBackend *be, const void *d_q, const void *d_k, const void *d_v, int64_t ld, void *d_o, float *d_lse,
                  int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale)
{
    if (batch == 0 || n == 0 || heads == 0)
        return LB_OK;
    const cudaStream_t stream = lb_cuda_stream(be);
    const LbDtype dtype = be->storage;
    LB_TRY(check_rows("flash_attention", dtype, ld, (uintptr_t)d_q | (uintptr_t)d_k | (uintptr_t)d_v));
    const float scale_log2 = scale * kLog2e;
    LB_DISPATCH_DTYPE(dtype, T, return with_head_width("flash_attention", hd, [&](auto width) -> int {
        constexpr int HD = decltype(width)::value;
        const T *q = static_cast<const T *>(d_q), *k = static_cast<const T *>(d_k), *v = static_cast<const T *>(d_v);
        T *o = static_cast<T *>(d_o);
        if constexpr (sizeof(T) == 4) {
            const int64_t tiles = (n + kSimtRows - 1) / kSimtRows, items = tiles * heads * batch;
            LB_LAUNCH(lb_grid_for(items, 1), kSimtRows, 0, stream, flash_simt_kernel<HD>)(q, k, v, ld, o, d_lse, n,
                                                                                          heads, tiles, items,
                                                                                          scale_log2);
            LB_LAUNCH_CHECK("flash_simt_kernel");
        } else {
            const size_t bytes = tensor_shared_bytes<HD>();
            LB_TRY((allow_shared<T, HD, 0>(reinterpret_cast<const void *>(flash_tensor_kernel<T, HD>), bytes)));
            const int64_t tiles = (n + block_rows<HD>() - 1) / block_rows<HD>(), items = tiles * heads * batch;
            LB_LAUNCH(lb_grid_for(items, 1), kThreads, bytes, stream, flash_tensor_kernel<T, HD>)(
                q, k, v, (int)ld, o, d_lse, n, heads, tiles, items, scale_log2);
            LB_LAUNCH_CHECK("flash_tensor_kernel");
        }
        return LB_OK;
    }));
    return LB_OK;
}

} // namespace

extern "C" int lb_cuda_flash_attention(LbBackend *be, const void *d_q, const void *d_k, const void *d_v, int64_t ld,
                                       void *d_o, int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale)
{
    LB_TRY(lb_args_flash(be, d_q, d_k, d_v, ld, d_o, batch, n, heads, hd));
    return flash_forward(be, d_q, d_k, d_v, ld, d_o, NULL, batch, n, heads, hd, scale);
}

extern "C" int lb_cuda_flash_attention_lse(LbBackend *be, const void *d_q, const void *d_k, const void *d_v, int64_t ld,
                                           void *d_o, float *d_lse, int64_t batch, int64_t n, int64_t heads,
                                           int64_t hd, float scale)
{
    LB_TRY(lb_args_flash_backward(be, "flash_attention_lse", d_q, d_k, d_v, ld, d_o, d_lse, NULL, NULL, NULL, NULL,
                                  batch, n, heads, hd));
    return flash_forward(be, d_q, d_k, d_v, ld, d_o, d_lse, batch, n, heads, hd, scale);
}

extern "C" int lb_cuda_flash_attention_backward(LbBackend *be, const void *d_q, const void *d_k, const void *d_v,
                                                int64_t ld, const void *d_o, const float *d_lse, const void *d_do,
                                                void *d_dq, void *d_dk, void *d_dv, int64_t batch, int64_t n,
                                                int64_t heads, int64_t hd, float scale, void *d_scratch)
{
    const char *op = "flash_attention_backward";
    LB_TRY(lb_args_flash_backward(be, op, d_q, d_k, d_v, ld, d_o, d_lse, d_do, d_dq, d_dk, d_dv, batch, n, heads, hd));
    LB_TRY(lb_arg_need(be, d_scratch, batch * n * heads > 0 ? 1 : 0, op, "scratch"));
    if (batch == 0 || n == 0 || heads == 0)
        return LB_OK;
    const cudaStream_t stream = lb_cuda_stream(be);
    const LbDtype dtype = be->storage;
    LB_TRY(check_rows(op, dtype, ld, (uintptr_t)d_q | (uintptr_t)d_k | (uintptr_t)d_v | (uintptr_t)d_do));
    if ((uintptr_t)d_scratch % 4u != 0)
        return LB_FAIL(LB_ERR_INVALID, "%s: scratch not 4-byte aligned", op);
    float *dsum = static_cast<float *>(d_scratch);
    const int64_t rows = batch * n * heads;
    LB_DISPATCH_DTYPE(dtype, T, return with_head_width(op, hd, [&](auto width) -> int {
        constexpr int HD = decltype(width)::value;
        const T *q = static_cast<const T *>(d_q), *k = static_cast<const T *>(d_k), *v = static_cast<const T *>(d_v);
        const T *o = static_cast<const T *>(d_o), *g = static_cast<const T *>(d_do);
        LB_LAUNCH(lb_grid_for(rows, kWarps), kThreads, 0, stream, flash_dsum_kernel<T>)(o, g, dsum, rows, n, heads,
                                                                                        (int)hd);
        LB_LAUNCH_CHECK("flash_dsum_kernel");
        const BwdPass<T> keys = {k, v, q, g, ld, heads * hd, d_lse, dsum, static_cast<T *>(d_dk),
                                 static_cast<T *>(d_dv), ld, n, heads, 0, 0, scale, scale * kLog2e};
        const BwdPass<T> queries = {q, g, k, v, heads * hd, ld, d_lse, dsum, static_cast<T *>(d_dq),
                                    nullptr, ld, n, heads, 0, 0, scale, scale * kLog2e};
        LB_TRY((launch_backward<T, HD, true>(keys, batch, stream)));
        return launch_backward<T, HD, false>(queries, batch, stream);
    }));
    return LB_OK;
}
