/* Why a CUDA device cannot be used: see open_errors.h. Plain C, no CUDA header, so the cpu suite
 * tests every message (tests/ops/test_open_errors.c) and the emulated GPU drives the same paths
 * through gpu/backend.cu (tests/gpu/test_emu_open.c). The error numbers are cudaError_t's, fixed
 * in driver_types.h since CUDA 8. */
#include "gpu/open_errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/status.h"

enum {
    CUDA_ERROR_INITIALIZATION = 3,
    CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_DEVICES_UNAVAILABLE = 46,
    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
    CUDA_ERROR_COMPAT_NOT_SUPPORTED = 804,
};

/* The oldest Linux driver of each CUDA major release (NVIDIA's CUDA Toolkit release notes, "CUDA
 * Toolkit and Minimum Required Driver Version"; minor-version compatibility lets any 12.x run on a
 * 12.0-capable driver, any 13.x on a 13.0-capable one). */
static const char *minimum_driver(int runtime)
{
    switch (runtime / 1000) {
    case 11: return "450.80.02";
    case 12: return "525.60.13";
    case 13: return "580.65.06";
    default: return "the one NVIDIA's release notes give for this CUDA";
    }
}

int lb_cuda_explain_no_device(int error, const char *error_name, const char *error_text, int driver,
                              int runtime, int have_module)
{
    switch (error) {
    case CUDA_ERROR_NO_DEVICE:
        if (!have_module)
            return LB_FAIL(LB_ERR_NODEVICE, "no CUDA device found (no NVIDIA kernel module is loaded: /proc/driver/nvidia/version is absent); try --device cpu");
        return LB_FAIL(LB_ERR_NODEVICE, "no CUDA device found (the NVIDIA driver is loaded but shows no GPU to this process: check CUDA_VISIBLE_DEVICES and nvidia-smi); try --device cpu");
    case CUDA_ERROR_INSUFFICIENT_DRIVER:
        if (driver <= 0)
            return LB_FAIL(LB_ERR_NODEVICE, "no CUDA device found: no NVIDIA driver is installed (libcuda.so.1 is missing%s); try --device cpu",
                           have_module ? "" : ", and no NVIDIA kernel module is loaded");
        return LB_FAIL(LB_ERR_DEVICE,
                       "the NVIDIA driver supports CUDA up to %d.%d, older than the CUDA %d.%d runtime linbench was built with: update the driver to release %s or newer, or build linbench with a CUDA toolkit no newer than %d.%d",
                       driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10,
                       minimum_driver(runtime), driver / 1000, driver % 1000 / 10);
    case CUDA_ERROR_DEVICES_UNAVAILABLE:
        return LB_FAIL(LB_ERR_DEVICE, "every CUDA device is unavailable: in exclusive-process mode and busy with another process, or in prohibited compute mode (nvidia-smi -q -d COMPUTE shows the mode; %s)",
                       error_name);
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
        return LB_FAIL(LB_ERR_DEVICE, "the NVIDIA kernel module and the user-space driver are of different versions, as after a driver update without a reboot (%s); reboot or reload the nvidia module",
                       error_name);
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED:
        return LB_FAIL(LB_ERR_DEVICE, "the CUDA forward-compatibility package does not support this GPU (%s); use a driver that supports CUDA %d.%d natively",
                       error_name, runtime / 1000, runtime % 1000 / 10);
    case CUDA_ERROR_INITIALIZATION:
        return LB_FAIL(LB_ERR_DEVICE, "CUDA could not initialise (%s: %s): check dmesg and nvidia-smi for the GPU's state", error_name, error_text);
    default:
        return LB_FAIL(LB_ERR_DEVICE, "CUDA cannot list its devices: %s (%s)", error_text, error_name);
    }
}

int lb_cuda_arch_verdict(int major, int minor, const char *archs, int ptx, char *what, size_t size)
{
    /* SASS for sm_XY runs on any sm_XZ with Z >= Y (same major): take the newest such. */
    const int cc = major * 10 + minor;
    long best = -1;
    const char *p = archs;
    while (p && *p) {
        char *end = NULL;
        const long a = strtol(p, &end, 10);
        if (end == p) {
            p++;
            continue;
        }
        if (a / 10 == major && a <= cc && a > best)
            best = a;
        p = end;
    }
    if (best == cc) {
        snprintf(what, size, "native sm_%d", cc);
        return 2;
    }
    if (best > 0) {
        snprintf(what, size, "native sm_%ld code, which sm_%d runs", best, cc);
        return 2;
    }
    if (ptx > 0 && cc >= ptx) {
        snprintf(what, size, "PTX of compute_%d, JIT-compiled by the driver", ptx);
        return 1;
    }
    snprintf(what, size, "no code for sm_%d (this build has sm %s and PTX of compute_%d)", cc, archs, ptx);
    return 0;
}
