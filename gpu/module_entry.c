/* The entry point of linbench-cuda.so (gpu/module.h): the CUDA backend's open. */
#include "gpu/module.h"

const LbCudaModule *lb_cuda_module(void)
{
    static const LbCudaModule m = {LB_CUDA_MODULE_ABI, lb_cuda_backend_open, sizeof(LbOps), sizeof(LbBackend),
                                   sizeof(LbDeviceInfo)};
    return &m;
}
