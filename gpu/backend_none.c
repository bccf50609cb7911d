/* The CUDA backend's entry point in a build without CUDA: says so, so `--device cuda` fails with
 * one clear line instead of a link error. */
#include "attn/ops.h"
#include "attn/base/status.h"

int lb_cuda_backend_open(int index, LbDtype dtype, int tf32, LbBackend **out)
{
    (void)index;
    (void)dtype;
    (void)tf32;
    *out = NULL;
    return LB_FAIL(LB_ERR_NODEVICE, "no CUDA device: linbench was built without CUDA (nvcc or cuBLAS not found at configure time); try --device cpu");
}

const char *lb_cuda_backend_kind(void) { return "none"; }
