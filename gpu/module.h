/* The CUDA backend as a module the linbench binary loads at run time (gpu/loader.c), so that the
 * binary starts, and runs --version, compare, plot and --device cpu, on a machine without the CUDA
 * libraries: only `--device cuda` needs linbench-cuda.so and, through it, cudart and cuBLAS. The
 * module resolves the core's symbols (errors, the ops table's helpers) from the binary, which
 * exports them. */
#ifndef LB_GPU_MODULE_H
#define LB_GPU_MODULE_H

#include "attn/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the struct or the meaning of a member changes, so a stale module beside a new
 * binary is refused with a message rather than called wrongly. */
#define LB_CUDA_MODULE_ABI 6
#define LB_CUDA_MODULE_FILE "linbench-cuda.so"
#define LB_CUDA_MODULE_SYMBOL "lb_cuda_module"

typedef struct LbCudaModule {
    int abi;
    int (*backend_open)(int index, LbDtype dtype, int tf32, LbBackend **out);
    /* The sizes of the structs module and binary share, as the module was built: one that grew is
     * refused without anyone remembering to bump the number (else a binary would call past the
     * end of an older module's ops table). */
    size_t ops_bytes, backend_bytes, device_info_bytes;
} LbCudaModule;

/* The one symbol the module exports (gpu/module_entry.c). */
const LbCudaModule *lb_cuda_module(void);

#ifdef __cplusplus
}
#endif

#endif
