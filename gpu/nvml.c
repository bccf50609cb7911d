/* NVML through dlopen: see nvml.h. Only the few entry points and types linbench needs are
 * declared here (as in nvml.h of the driver's development files, which need not be installed):
 * every NVML function returns 0 (NVML_SUCCESS) on success. */
#include "gpu/nvml.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef struct LbNvmlDevice_st *LbNvmlDeviceRaw;

/* nvmlClockType_t */
enum { LB_NVML_CLOCK_SM = 1, LB_NVML_CLOCK_MEM = 2 };

struct LbNvml {
    void *lib;
    LbNvmlDeviceRaw dev;
    int (*shutdown)(void);
    int (*clock_info)(LbNvmlDeviceRaw, int, unsigned int *);
    int (*max_clock_info)(LbNvmlDeviceRaw, int, unsigned int *);
};

/* dlsym returns void *; ISO C has no conversion from it to a function pointer, so copy the bits
 * (POSIX guarantees they mean the function). */
static int lb_nvml_sym(void *lib, const char *name, void *fn_ptr, size_t size)
{
    void *p = dlsym(lib, name);
    if (!p)
        return -1;
    memcpy(fn_ptr, &p, size);
    return 0;
}

LbNvml *lb_nvml_open(const char *pci_bus_id)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return NULL;
    LbNvml *nv = calloc(1, sizeof *nv);
    if (!nv) {
        dlclose(lib);
        return NULL;
    }
    nv->lib = lib;
    int (*init)(void) = NULL;
    int (*by_pci)(const char *, LbNvmlDeviceRaw *) = NULL;
    if (lb_nvml_sym(lib, "nvmlInit_v2", &init, sizeof init) ||
        lb_nvml_sym(lib, "nvmlShutdown", &nv->shutdown, sizeof nv->shutdown) ||
        lb_nvml_sym(lib, "nvmlDeviceGetHandleByPciBusId_v2", &by_pci, sizeof by_pci) ||
        lb_nvml_sym(lib, "nvmlDeviceGetClockInfo", &nv->clock_info, sizeof nv->clock_info) ||
        lb_nvml_sym(lib, "nvmlDeviceGetMaxClockInfo", &nv->max_clock_info, sizeof nv->max_clock_info))
        goto fail_lib;
    if (init() != 0)
        goto fail_lib;
    if (by_pci(pci_bus_id, &nv->dev) != 0) {
        nv->shutdown();
        goto fail_lib;
    }
    return nv;
fail_lib:
    dlclose(lib);
    free(nv);
    return NULL;
}

int lb_nvml_clock(LbNvml *nv, LbNvmlClock which)
{
    if (!nv)
        return -1;
    unsigned int mhz = 0;
    int rc;
    switch (which) {
    case LB_NVML_SM_NOW: rc = nv->clock_info(nv->dev, LB_NVML_CLOCK_SM, &mhz); break;
    case LB_NVML_SM_MAX: rc = nv->max_clock_info(nv->dev, LB_NVML_CLOCK_SM, &mhz); break;
    case LB_NVML_MEM_NOW: rc = nv->clock_info(nv->dev, LB_NVML_CLOCK_MEM, &mhz); break;
    case LB_NVML_MEM_MAX: rc = nv->max_clock_info(nv->dev, LB_NVML_CLOCK_MEM, &mhz); break;
    default: return -1;
    }
    return rc == 0 && mhz > 0 ? (int)mhz : -1;
}

void lb_nvml_close(LbNvml *nv)
{
    if (!nv)
        return;
    nv->shutdown();
    dlclose(nv->lib);
    free(nv);
}
