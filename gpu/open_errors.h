/* Why a CUDA device cannot be used, said as what it is (gpu/open_errors.c): the first failure a
 * user meets on a new machine must name its cause, not read as "no CUDA device". C and the host
 * code of gpu/backend.cu. */
#ifndef LB_GPU_OPEN_ERRORS_H
#define LB_GPU_OPEN_ERRORS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The message and status (LB_ERR_NODEVICE where there is truly no GPU to use, so tests skip;
 * LB_ERR_DEVICE where a GPU exists but cannot be used, so tests fail) for a failed
 * cudaGetDeviceCount. `error` is its cudaError_t, `error_name` and `error_text` the runtime's
 * strings, `driver` and `runtime` cudaDriverGetVersion / cudaRuntimeGetVersion (0 unknown),
 * `have_module` whether /proc/driver/nvidia/version exists. Sets the error through LB_FAIL and
 * returns the status. */
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
