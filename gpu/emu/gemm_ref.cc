/* The emulated libraries' product: see gemm_ref.h. */
#include "gpu/emu/gemm_ref.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <string.h>

#include <vector>

#include "gpu/emu/emu_internal.h"

namespace lb_emu {
namespace {

/* TF32 keeps 10 of fp32's 23 mantissa bits; the conversion rounds to nearest, ties away from
 * zero (PTX cvt.rna.tf32.f32). */
float round_tf32(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return v; /* inf, NaN */
    u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&v, &u, sizeof v);
    return v;
}

double load(const void *p, cudaDataType_t t, int64_t i, bool tf32)
{
    switch (t) {
    case CUDA_R_16F: return (double)__half2float(static_cast<const __half *>(p)[i]);
    case CUDA_R_16BF: return (double)__bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    default: {
        const float f = static_cast<const float *>(p)[i];
        return (double)(tf32 ? round_tf32(f) : f);
    }
    }
}

void store(void *p, cudaDataType_t t, int64_t i, double v)
{
    switch (t) {
    case CUDA_R_16F: static_cast<__half *>(p)[i] = __double2half(v); break;
    case CUDA_R_16BF: static_cast<__nv_bfloat16 *>(p)[i] = __double2bfloat16(v); break;
    default: static_cast<float *>(p)[i] = (float)v; break;
    }
}

const char *at(const GemmMatrix &x, int64_t b, size_t eb)
{
    return static_cast<const char *>(x.p) + (size_t)(b * x.stride) * eb;
}

} // namespace

size_t type_bytes(cudaDataType_t t)
{
    switch (t) {
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    case CUDA_R_32F: return 4;
    default: return 0;
    }
}

size_t matrix_span_bytes(const GemmMatrix &x, int64_t batch)
{
    if (x.rows <= 0 || x.cols <= 0 || batch <= 0)
        return 0;
    const int64_t last = (batch - 1) * x.stride + (x.cols - 1) * x.ld + x.rows;
    return (size_t)last * type_bytes(x.type);
}

bool batches_overlap(const GemmMatrix &x, int64_t batch)
{
    if (batch <= 1 || x.rows <= 0 || x.cols <= 0)
        return false;
    return x.stride < (x.cols - 1) * x.ld + x.rows;
}

bool operands_in_memory(const char *api, const GemmProblem &g)
{
    const char *bad = nullptr;
    const GemmMatrix *ms[4] = {&g.a, &g.b, &g.c, &g.d};
    const char *names[4] = {"A", "B", "C", "D"};
    for (int i = 0; i < 4; i++) {
        /* C is not read when beta is 0 (cuBLAS documents that C may then hold anything). */
        if (i == 2 && g.beta == 0.0)
            continue;
        const size_t span = matrix_span_bytes(*ms[i], g.batch);
        if (!bad && span && !device_range_valid(ms[i]->p, span))
            bad = names[i];
    }
    if (!bad && g.bias && !device_range_valid(g.bias, (size_t)g.m * type_bytes(g.bias_type)))
        bad = "bias";
    if (!bad)
        return true;
    report_fault(cudaErrorIllegalAddress,
                 "%s (m %lld, n %lld, k %lld, ld A %lld, B %lld, C %lld, D %lld, batch %lld): %s reaches outside every device allocation",
                 api, (long long)g.m, (long long)g.n, (long long)g.k, (long long)g.a.ld, (long long)g.b.ld,
                 (long long)g.c.ld, (long long)g.d.ld, (long long)g.batch, bad);
    return false;
}

void gemm_ref(const GemmProblem &g)
{
    if (g.m <= 0 || g.n <= 0 || g.batch <= 0)
        return;
    lock_device();
    const size_t ea = type_bytes(g.a.type), eb = type_bytes(g.b.type), ec = type_bytes(g.c.type),
                 ed = type_bytes(g.d.type);
    std::vector<double> opa((size_t)(g.m * g.k)), opb((size_t)(g.n * g.k)), bias((size_t)g.m, 0.0);
    if (g.bias)
        for (int64_t i = 0; i < g.m; i++)
            bias[(size_t)i] = load(g.bias, g.bias_type, i, false);
    for (int64_t b = 0; b < g.batch; b++) {
        const char *pa = at(g.a, b, ea), *pb = at(g.b, b, eb), *pc = at(g.c, b, ec);
        char *pd = const_cast<char *>(at(g.d, b, ed));
        /* op(A) row i and op(B) column j, each contiguous in the inner index p. */
        for (int64_t i = 0; i < g.m; i++)
            for (int64_t p = 0; p < g.k; p++)
                opa[(size_t)(i * g.k + p)] =
                    load(pa, g.a.type, g.trans_a ? p + i * g.a.ld : i + p * g.a.ld, g.tf32);
        for (int64_t j = 0; j < g.n; j++)
            for (int64_t p = 0; p < g.k; p++)
                opb[(size_t)(j * g.k + p)] =
                    load(pb, g.b.type, g.trans_b ? j + p * g.b.ld : p + j * g.b.ld, g.tf32);
        for (int64_t j = 0; j < g.n; j++)
            for (int64_t i = 0; i < g.m; i++) {
                const double *x = &opa[(size_t)(i * g.k)], *y = &opb[(size_t)(j * g.k)];
                double s = 0.0;
                for (int64_t p = 0; p < g.k; p++)
                    s += x[p] * y[p];
                double v = g.alpha * s + bias[(size_t)i];
                if (g.beta != 0.0)
                    v += g.beta * load(pc, g.c.type, i + j * g.c.ld, false);
                store(pd, g.d.type, i + j * g.d.ld, v);
            }
    }
    unlock_device();
}

} // namespace lb_emu
