/* The warp-collective instructions of gpu/emu/emu_tensor_core.h: mma.sync m16n8k16 and ldmatrix
 * x4, computed once per warp from every lane's operands by the fragment layouts the PTX ISA gives
 * (cited in gpu/tensor_core.cuh). Each lane hands its operands to the scheduler's collective
 * (scheduler.cc), which calls the functions below when all 32 lanes are there. */
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gpu/emu/emu_device.h"
#include "gpu/emu/emu_internal.h"
#include "gpu/emu/emu_tensor_core.h"

namespace lb_emu {

namespace {

struct MmaLane {
    const uint32_t *a, *b;
    float *d;
};

float widen(uint16_t bits, bool bf16)
{
    if (bf16) {
        const uint32_t u = (uint32_t)bits << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    return __half2float(__ushort_as_half(bits));
}

/* Element `half` (0 low, 1 high) of a .b32 register of two 16-bit elements. */
float element(uint32_t reg, int half, bool bf16) { return widen((uint16_t)(reg >> (16 * half)), bf16); }

template <bool BF16> void run_mma(void *const *lanes)
{
    float a[16][16], b[16][8], c[16][8];
    for (int l = 0; l < 32; l++) {
        const MmaLane *x = static_cast<const MmaLane *>(lanes[l]);
        const int group = l >> 2, tig = l & 3;
        for (int i = 0; i < 8; i++) {
            const int row = (i < 2 || (i >= 4 && i < 6)) ? group : group + 8;
            const int col = 2 * tig + (i & 1) + (i >= 4 ? 8 : 0);
            a[row][col] = element(x->a[i / 2], i & 1, BF16);
        }
        for (int i = 0; i < 4; i++)
            b[2 * tig + (i & 1) + (i >= 2 ? 8 : 0)][group] = element(x->b[i / 2], i & 1, BF16);
        for (int i = 0; i < 4; i++)
            c[i < 2 ? group : group + 8][2 * tig + (i & 1)] = x->d[i];
    }
    for (int l = 0; l < 32; l++) {
        MmaLane *x = static_cast<MmaLane *>(lanes[l]);
        const int group = l >> 2, tig = l & 3;
        for (int i = 0; i < 4; i++) {
            const int row = i < 2 ? group : group + 8, col = 2 * tig + (i & 1);
            /* exact products (16-bit inputs), summed in double, one rounding to fp32 */
            double s = c[row][col];
            for (int k = 0; k < 16; k++)
                s += (double)a[row][k] * (double)b[k][col];
            x->d[i] = (float)s;
        }
    }
}

struct LdmLane {
    const void *row;
    uint32_t *r;
};

template <bool TRANS> void run_ldmatrix(void *const *lanes)
{
    uint16_t m[4][8][8];
    for (int l = 0; l < 32; l++) {
        const void *p = static_cast<const LdmLane *>(lanes[l])->row;
        if ((uintptr_t)p % 16u != 0 || !shared_range_valid(p, 16)) {
            warp_fault("ldmatrix: lane %d's row address %p is not 16 bytes of shared memory at a 16-byte boundary", l,
                       p);
            return;
        }
        memcpy(m[l / 8][l % 8], p, 16);
    }
    for (int l = 0; l < 32; l++) {
        uint32_t *r = static_cast<LdmLane *>(lanes[l])->r;
        const int row = l / 4, col = 2 * (l % 4);
        for (int i = 0; i < 4; i++) {
            const uint16_t lo = TRANS ? m[i][col][row] : m[i][row][col];
            const uint16_t hi = TRANS ? m[i][col + 1][row] : m[i][row][col + 1];
            r[i] = (uint32_t)lo | (uint32_t)hi << 16;
        }
    }
}

} // namespace

void mma_16816(bool bf16, float d[4], const uint32_t a[4], const uint32_t b[2], const char *file, int line)
{
    MmaLane me{a, b, d};
    warp_collective(bf16 ? "mma.sync.m16n8k16.bf16" : "mma.sync.m16n8k16.f16", bf16 ? run_mma<true> : run_mma<false>,
                    &me, file, line);
}

void ldmatrix_x4(uint32_t r[4], const void *row, bool trans, const char *file, int line)
{
    LdmLane me{row, r};
    warp_collective(trans ? "ldmatrix.x4.trans" : "ldmatrix.x4", trans ? run_ldmatrix<true> : run_ldmatrix<false>,
                    &me, file, line);
}

} // namespace lb_emu
