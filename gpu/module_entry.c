/* The entry point of linbench-cuda.so (gpu/module.h): the CUDA backend's open and kind. */
#include "gpu/module.h"

const LbCudaModule *lb_cuda_module(void)
{
    static const LbCudaModule m = {LB_CUDA_MODULE_ABI, lb_cuda_backend_open, lb_cuda_backend_kind};
    return &m;
}
