/* Why a CUDA device cannot be used, said as what it is (gpu/open_errors.c): the first failure a
 * user meets on a new machine must name its cause, not read as "no CUDA device". C and the host
 * code of gpu/backend.cu. */
#ifndef LB_GPU_OPEN_ERRORS_H
#define LB_GPU_OPEN_ERRORS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The status for a failed cudaGetDeviceCount, its message set through LB_FAIL: LB_ERR_NODEVICE
 * where there is no GPU (tests skip), LB_ERR_DEVICE where one exists but cannot be used (tests
 * fail). driver/runtime versions 0 when unknown; have_module: /proc/driver/nvidia/version exists. */
int lb_cuda_explain_no_device(int error, const char *error_name, const char *error_text, int driver,
                              int runtime, int have_module);

/* Whether this build has code for a GPU of compute capability major.minor: 2 native code (SASS
 * for that architecture), 1 PTX that the driver JIT-compiles (an architecture newer than the
 * newest built), 0 none. `archs` is the built list ("80,86,89,90,100") and `ptx` the architecture
 * whose PTX is embedded. The words go into `what` ("native sm_90", "PTX of compute_100, JIT"). */
int lb_cuda_arch_verdict(int major, int minor, const char *archs, int ptx, char *what, size_t size);

#ifdef __cplusplus
}
#endif

#endif
