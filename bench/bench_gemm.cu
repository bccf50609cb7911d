/* The best cuBLAS/cuBLASLt rate for the matrix products of the standard forward pass at n = 512
 * (RoBERTa-base: d 768, f 3072, 12 heads, 12 layers), and the whole forward pass measured against
 * it (bench/NOTES.md, target: the whole standard forward at n = 512 reaches at least 70% of the
 * FLOP-weighted best rate of its own GEMM shapes).
 *
 * For each product of one layer, on random inputs at a large batch (--batch sequences, default
 * 64): the time of the backend's own op (what lb_forward runs: linear with its bias epilogue and
 * GELU, bmm through cublasGemmStridedBatchedEx) and the best of up to 16 cuBLASLt algorithms
 * the heuristic offers for the bare product (no epilogue), each the median of --reps runs after
 * warm-up, CUDA events on the backend's stream. Then: the sum of the best times x 12 layers
 * (the forward's GEMM floor), the whole forward through lb_forward at the same batch, and their
 * ratio. A large square product (8192^3) is printed first as the device's matrix ceiling. For the
 * feed-forward's up-projection, also its product with the bias epilogue alone and followed by the
 * gelu op: what folding GELU into the epilogue costs or saves.
 * Exit 77 without a CUDA device.
 *
 * usage: bench_gemm [--gpu N] [--batch B] [--dtype fp16|bf16|fp32] [--reps R] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "attn/arena.h"
#include "attn/config.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "bench/bench_util.h"

/* One product in the row-major terms of LbBmm (attn/ops.h). */
typedef struct Problem {
    const char *name;
    int ta, tb;
    int64_t m, n, k, batch;
    int64_t lda, ldb, ldc, sa, sb, sc;
    int linear; /* 1: the forward runs it as linear (A = x, B = W with tb = 1); 2: with GELU */
} Problem;

static double problem_flops(const Problem *p) { return 2.0 * (double)p->m * p->n * p->k * p->batch; }

static void lt_check(cublasStatus_t s, const char *what)
{
    if (s != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "bench: %s failed: %s\n", what, cublasLtGetStatusString(s));
        exit(1);
    }
}

static cudaDataType_t cuda_type(LbDtype t)
{
    return t == LB_DTYPE_FP16 ? CUDA_R_16F : t == LB_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* A column-major cuBLASLt layout of a stored (rows x cols, ld) matrix, batched. */
static cublasLtMatrixLayout_t layout(cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                                     int64_t stride)
{
    cublasLtMatrixLayout_t l = NULL;
    lt_check(cublasLtMatrixLayoutCreate(&l, t, (uint64_t)rows, (uint64_t)cols, ld), "cublasLtMatrixLayoutCreate");
    const int32_t bc = (int32_t)batch;
    lt_check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc), "batch count");
    lt_check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
             "batch stride");
    return l;
}

typedef struct Timing {
    double ops_ms;  /* the backend's op */
    double best_ms; /* the best cuBLASLt algorithm */
    int algos;      /* how many the heuristic offered */
    /* With GELU: the product with its bias epilogue alone, and then followed by the gelu op, to set
     * the GELU epilogue's cost beside a separate pass over the product's output. */
    double bias_ms, split_ms;
} Timing;

/* Time p both ways. Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLASLt's
 * first operand is B (op T when tb), its second A (op T when ta); m' = n, n' = m. */
static Timing time_problem(LbBackend *be, cublasLtHandle_t lt, void *ws, size_t ws_bytes, const Problem *p, int reps)
{
    cudaStream_t st = lb_cuda_backend_stream(be);
    const size_t eb = be->elem_bytes;
    const int64_t rows_a = p->ta ? p->k : p->m, rows_b = p->tb ? p->n : p->k;
    const int64_t ea = (p->batch - 1) * p->sa + rows_a * p->lda;
    const int64_t ebb = (p->batch - 1) * p->sb + rows_b * p->ldb;
    const int64_t ec = (p->batch - 1) * p->sc + p->m * p->ldc;
    void *a = NULL, *b = NULL, *c = NULL, *bias = NULL;
    lb_bench_ok(be->ops->mem_alloc(be, (size_t)ea * eb, &a), "mem_alloc A");
    lb_bench_ok(be->ops->mem_alloc(be, (size_t)ebb * eb, &b), "mem_alloc B");
    lb_bench_ok(be->ops->mem_alloc(be, (size_t)ec * eb, &c), "mem_alloc C");
    lb_bench_ok(be->ops->mem_alloc(be, (size_t)p->n * eb, &bias), "mem_alloc bias");
    lb_bench_ok(be->ops->fill_uniform(be, a, ea, 11, -1.0f, 1.0f), "fill A");
    lb_bench_ok(be->ops->fill_uniform(be, b, ebb, 12, -0.05f, 0.05f), "fill B");
    lb_bench_ok(be->ops->fill_uniform(be, bias, p->n, 13, -0.5f, 0.5f), "fill bias");
    Timing t = {0, INFINITY, 0, 0, 0};

    const auto linear = [&](int gelu) {
        lb_bench_ok(be->ops->linear(be, a, b, bias, c, p->m, p->k, p->n, gelu), "linear");
    };
    if (!p->linear) {
        LbBmm q = {p->ta, p->tb, p->m, p->n, p->k, 1.0f, a, p->lda, p->sa, b, p->ldb, p->sb, c, p->ldc, p->sc, p->batch};
        t.ops_ms = lb_bench_median_ms(st, 3, reps, [&] { lb_bench_ok(be->ops->bmm(be, &q), "bmm"); }, [] {});
    } else {
        t.ops_ms = lb_bench_median_ms(st, 3, reps, [&] { linear(p->linear == 2); }, [] {});
    }
    if (p->linear == 2) {
        t.bias_ms = lb_bench_median_ms(st, 3, reps, [&] { linear(0); }, [] {});
        t.split_ms = lb_bench_median_ms(
            st, 3, reps,
            [&] {
                linear(0);
                lb_bench_ok(be->ops->gelu(be, c, p->m, p->n), "gelu");
            },
            [] {});
    }

    const cudaDataType_t dt = cuda_type(be->storage);
    const cublasOperation_t op1 = p->tb ? CUBLAS_OP_T : CUBLAS_OP_N, op2 = p->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int64_t mm = p->n, nn = p->m, kk = p->k;
    cublasLtMatmulDesc_t desc = NULL;
    lt_check(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    lt_check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op1, sizeof op1), "transa");
    lt_check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op2, sizeof op2), "transb");
    cublasLtMatrixLayout_t l1 = op1 == CUBLAS_OP_N ? layout(dt, mm, kk, p->ldb, p->batch, p->sb)
                                                   : layout(dt, kk, mm, p->ldb, p->batch, p->sb);
    cublasLtMatrixLayout_t l2 = op2 == CUBLAS_OP_N ? layout(dt, kk, nn, p->lda, p->batch, p->sa)
                                                   : layout(dt, nn, kk, p->lda, p->batch, p->sa);
    cublasLtMatrixLayout_t lc = layout(dt, mm, nn, p->ldc, p->batch, p->sc);
    cublasLtMatmulPreference_t pref = NULL;
    lt_check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    lt_check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                  sizeof ws_bytes),
             "max workspace");
    cublasLtMatmulHeuristicResult_t res[16];
    int found = 0;
    cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lt, desc, l1, l2, lc, lc, pref, 16, res, &found);
    if (s != CUBLAS_STATUS_SUCCESS && s != CUBLAS_STATUS_NOT_SUPPORTED)
        lt_check(s, "cublasLtMatmulAlgoGetHeuristic");
    const float alpha = 1.0f, beta = 0.0f;
    for (int i = 0; i < found; i++) {
        /* An algorithm can still refuse at run time (workspace, alignment): skip it. */
        if (cublasLtMatmul(lt, desc, &alpha, b, l1, a, l2, &beta, c, lc, c, lc, &res[i].algo, ws, ws_bytes, st) !=
            CUBLAS_STATUS_SUCCESS)
            continue;
        const double ms = lb_bench_median_ms(
            st, 2, reps,
            [&] {
                lt_check(cublasLtMatmul(lt, desc, &alpha, b, l1, a, l2, &beta, c, lc, c, lc, &res[i].algo, ws,
                                        ws_bytes, st),
                         "cublasLtMatmul");
            },
            [] {});
        t.algos++;
        if (ms < t.best_ms)
            t.best_ms = ms;
    }
    lb_bench_cuda(cudaStreamSynchronize(st), "cudaStreamSynchronize");
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(l1);
    cublasLtMatrixLayoutDestroy(l2);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
    be->ops->mem_free(be, a);
    be->ops->mem_free(be, b);
    be->ops->mem_free(be, c);
    be->ops->mem_free(be, bias);
    return t;
}

static Problem linear_problem(const char *name, int64_t rows, int64_t in, int64_t out, int gelu)
{
    Problem p = {name, 0, 1, rows, out, in, 1, in, in, out, 0, 0, 0, gelu ? 2 : 1};
    return p;
}

/* The whole standard forward at batch B: median ms of `reps` passes after two warm-ups. */
static double time_forward(LbBackend *be, const LbModelConfig *cfg, int64_t B, int reps)
{
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    LbArena a;
    LbModel m;
    LbInputs in;
    lb_bench_ok(lb_plan_compute(cfg, &pp, B, &plan), "plan");
    lb_bench_ok(lb_arena_open(&a, be, plan.total), "arena for the forward pass");
    lb_bench_ok(lb_model_build(&m, cfg, be, &a, 42), "model");
    lb_bench_ok(lb_inputs_alloc(&m, &a, B, &in), "inputs");
    lb_bench_ok(lb_inputs_fill(&m, &in, 43), "tokens");
    const double ms = lb_bench_median_ms(
        lb_cuda_backend_stream(be), 2, reps, [&] { lb_bench_ok(lb_forward(&m, &a, &in), "forward"); }, [] {});
    lb_model_release(&m);
    lb_arena_close(&a);
    return ms;
}

int main(int argc, char **argv)
{
    int gpu = 0, reps = 10;
    int64_t B = 64;
    LbDtype dtype = LB_DTYPE_FP16;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--gpu") == 0)
            gpu = (int)lb_bench_int_flag(argc, argv, &i, "gpu", 0, 1023);
        else if (strcmp(argv[i], "--batch") == 0)
            B = lb_bench_int_flag(argc, argv, &i, "batch", 1, 4096);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = (int)lb_bench_int_flag(argc, argv, &i, "reps", 1, 1000);
        else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) {
            if (lb_dtype_parse(argv[++i], &dtype) != 0) {
                fprintf(stderr, "bench: invalid argument \"%s\" for --dtype: should be fp16, bf16 or fp32\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "bench_gemm: unknown flag \"%s\" (flags: --gpu N, --batch B, --dtype T, --reps R)\n",
                    argv[i]);
            return 2;
        }
    }
    LbBackend *be = lb_bench_open(gpu, dtype);
    void *ws = NULL;
    lb_bench_ok(be->ops->mem_alloc(be, be->workspace_bytes, &ws), "workspace");
    lb_bench_ok(be->ops->set_workspace(be, ws, be->workspace_bytes), "set_workspace");
    cublasLtHandle_t lt = NULL;
    lt_check(cublasLtCreate(&lt), "cublasLtCreate");
    LbDeviceInfo info;
    lb_bench_ok(be->ops->describe(be, &info), "describe");
    printf("device: %s (cc %d.%d, %d SMs), SM clock %d MHz (max %d), cuBLAS %d; dtype %s\n", info.name,
           info.cc_major, info.cc_minor, info.sm_count, be->ops->sm_clock_mhz(be), info.sm_clock_max_mhz,
           info.cublas_version, lb_dtype_name(dtype));

    const Problem square = {"square 8192^3", 0, 0, 8192, 8192, 8192, 1, 8192, 8192, 8192, 0, 0, 0, 0};
    Timing ts = time_problem(be, lt, ws, be->workspace_bytes, &square, reps);
    printf("matrix ceiling: %s best %.3f ms = %.1f TFLOP/s (%d algorithms)\n\n", square.name, ts.best_ms,
           problem_flops(&square) / (ts.best_ms * 1e-3) / 1e12, ts.algos);

    LbModelConfig cfg = lb_config_default(); /* RoBERTa-base, standard, n = 512 */
    cfg.dtype = dtype;
    const int64_t n = cfg.n, d = cfg.d_model, f = cfg.ffn, h = cfg.heads, hd = d / h, rows = B * n;
    Problem layer[6] = {
        linear_problem("Q/K/V projection", rows, d, 3 * d, 0),
        {"scores Q K^T", 0, 1, n, n, hd, B * h, hd, hd, n, n * hd, n * hd, n * n, 0},
        {"P V", 0, 0, n, hd, n, B * h, n, hd, hd, n * n, n * hd, n * hd, 0},
        linear_problem("output projection", rows, d, d, 0),
        linear_problem("FFN up (+GELU)", rows, d, f, 1),
        linear_problem("FFN down", rows, f, d, 0),
    };
    printf("one layer at n = %lld, batch %lld (rows %lld):\n", (long long)n, (long long)B, (long long)rows);
    printf("%-20s %28s %8s %10s %9s %10s %9s\n", "product", "m x n x k (batch)", "GFLOP", "op ms", "TFLOP/s",
           "best ms", "TFLOP/s");
    double sum_best = 0.0, sum_ops = 0.0, flops_layer = 0.0;
    Timing gelu = {0, 0, 0, 0, 0};
    for (int i = 0; i < 6; i++) {
        const Problem *p = &layer[i];
        Timing t = time_problem(be, lt, ws, be->workspace_bytes, p, reps);
        if (p->linear == 2)
            gelu = t;
        const double fl = problem_flops(p);
        char shape[64];
        snprintf(shape, sizeof shape, "%lld x %lld x %lld (%lld)", (long long)p->m, (long long)p->n,
                 (long long)p->k, (long long)p->batch);
        printf("%-20s %28s %8.1f %10.4f %9.1f %10.4f %9.1f\n", p->name, shape, fl / 1e9, t.ops_ms,
               fl / (t.ops_ms * 1e-3) / 1e12, t.best_ms, fl / (t.best_ms * 1e-3) / 1e12);
        sum_best += t.best_ms;
        sum_ops += t.ops_ms;
        flops_layer += fl;
    }
    printf("\nFFN up: bias and GELU in the product's epilogue %.4f ms; the bias epilogue alone %.4f ms, "
           "then the gelu op %.4f ms in all\n",
           gelu.ops_ms, gelu.bias_ms, gelu.split_ms);
    const double layers = cfg.layers;
    const double gemm_floor_ms = sum_best * layers, best_rate = flops_layer * layers / (gemm_floor_ms * 1e-3) / 1e12;
    printf("\nGEMM floor of the forward (best times x %d layers): %.3f ms, %.1f TFLOP/s FLOP-weighted best rate\n",
           cfg.layers, gemm_floor_ms, best_rate);
    printf("the backend's own products x %d layers: %.3f ms\n", cfg.layers, sum_ops * layers);

    const double fwd_ms = time_forward(be, &cfg, B, reps);
    const double fwd_flops = lb_config_flops_per_seq(&cfg) * (double)B;
    const double fwd_rate = fwd_flops / (fwd_ms * 1e-3) / 1e12;
    printf("whole standard forward (lb_forward), n %lld, batch %lld: %.3f ms, %.1f TFLOP/s (METHOD.md FLOPs), "
           "%.0f%% of the GEMM-weighted best rate (target >= 70%%)\n",
           (long long)n, (long long)B, fwd_ms, fwd_rate, 100.0 * fwd_rate / best_rate);
    lt_check(cublasLtDestroy(lt), "cublasLtDestroy");
    be->ops->mem_free(be, ws);
    lb_backend_close(be);
    return 0;
}
