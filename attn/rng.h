/* Counter-based random numbers shared by the CPU reference and the CUDA kernels: value i of
 * stream `seed` is a pure function of (seed, i) (splitmix64), so both backends draw the same fp32
 * values for one seed without weights crossing PCIe. */
#ifndef LB_RNG_H
#define LB_RNG_H

#include <stdint.h>

#if defined(__CUDACC__)
#define LB_HOST_DEVICE __host__ __device__
#else
#define LB_HOST_DEVICE
#endif

static inline LB_HOST_DEVICE uint64_t lb_rng_mix(uint64_t seed, uint64_t i)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1): the top 24 bits, exact in fp32. */
static inline LB_HOST_DEVICE float lb_rng_uniform(uint64_t seed, uint64_t i)
{
    return (float)(lb_rng_mix(seed, i) >> 40) * (1.0f / 16777216.0f);
}

/* lo + (hi - lo) * u, computed in double and rounded once, so a compiler's choice to fuse the
 * multiply-add (nvcc does by default) cannot make the GPU's value differ from the CPU's. The value
 * lies in [lo, hi], hi included: rounding to fp32 can carry one just below hi up to it (seed
 * 602233 gives 1.1f for [0.9, 1.1)). */
static inline LB_HOST_DEVICE float lb_rng_range(uint64_t seed, uint64_t i, float lo, float hi)
{
    return (float)((double)lo + ((double)hi - (double)lo) * (double)lb_rng_uniform(seed, i));
}

/* Token id in [0, vocab). */
static inline LB_HOST_DEVICE int32_t lb_rng_token(uint64_t seed, uint64_t i, int32_t vocab)
{
    return (int32_t)(lb_rng_mix(seed, i) % (uint64_t)vocab);
}

#endif
