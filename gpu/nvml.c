/* NVML through dlopen: see nvml.h. Only the few entry points and types linbench needs are
 * declared here (as in nvml.h of the driver's development files, which need not be installed):
 * every NVML function returns 0 (NVML_SUCCESS) on success. */
#include "gpu/nvml.h"

#include <dlfcn.h>
#include <unistd.h>
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
    int (*clock_events)(LbNvmlDeviceRaw, unsigned long long *); /* NULL where the driver has neither */
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
    /* Drivers from 535 name them clock events; older ones throttle reasons (same bits). */
    if (lb_nvml_sym(lib, "nvmlDeviceGetCurrentClocksEventReasons", &nv->clock_events, sizeof nv->clock_events))
        (void)lb_nvml_sym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &nv->clock_events,
                          sizeof nv->clock_events);
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
    unsigned int mhz = 0;
    if (!nv || (unsigned)which > LB_NVML_MEM_MAX)
        return -1;
    /* LbNvmlClock's bit 0: the maximum, not the current; bit 1: memory, not SM */
    const int rc = (which & 1 ? nv->max_clock_info : nv->clock_info)(nv->dev, which & 2 ? LB_NVML_CLOCK_MEM
                                                                                     : LB_NVML_CLOCK_SM, &mhz);
    return rc == 0 && mhz > 0 ? (int)mhz : -1;
}

int lb_nvml_clock_events(LbNvml *nv, unsigned long long *reasons)
{
    *reasons = 0;
    if (!nv || !nv->clock_events)
        return -1;
    return nv->clock_events(nv->dev, reasons) == 0 ? 0 : -1;
}

/* nvmlProcessInfo_v2_t, the entries of the _v2 entry point on every driver. The _v3 one's differ
 * by driver: the 535 series appended usedGpuCcProtectedMemory (32 bytes) under the same version,
 * later drivers went back to these 24 (nvitop pull requests 79 and 226). */
typedef struct LbNvmlProcess {
    unsigned int pid;
    unsigned long long used_bytes;
    unsigned int gpu_instance, compute_instance;
} LbNvmlProcess;

void lb_nvml_state(LbNvml *nv, int *persistence, int *mig, int *other_processes)
{
    *persistence = *mig = *other_processes = -1;
    if (!nv)
        return;
    int (*get_persistence)(LbNvmlDeviceRaw, int *) = NULL;
    int (*get_mig)(LbNvmlDeviceRaw, unsigned int *, unsigned int *) = NULL;
    int (*get_procs)(LbNvmlDeviceRaw, unsigned int *, LbNvmlProcess *) = NULL;
    int v = 0;
    if (lb_nvml_sym(nv->lib, "nvmlDeviceGetPersistenceMode", &get_persistence, sizeof get_persistence) == 0 &&
        get_persistence(nv->dev, &v) == 0)
        *persistence = v != 0;
    unsigned int cur = 0, pending = 0;
    if (lb_nvml_sym(nv->lib, "nvmlDeviceGetMigMode", &get_mig, sizeof get_mig) == 0) {
        int rc = get_mig(nv->dev, &cur, &pending);
        *mig = rc == 0 ? cur != 0 : rc == 3 /* NVML_ERROR_NOT_SUPPORTED: a GPU without MIG */ ? 0 : -1;
    }
    /* _v2 first, whose entries are LbNvmlProcess wherever it exists: read as those, a 535 driver's
     * _v3 list miscounted the processes (every pid after the first from the wrong bytes), and
     * past 48 processes overflowed p. _v3 only where a driver has no _v2; p has room for 64 of
     * the larger entries either way. */
    if (lb_nvml_sym(nv->lib, "nvmlDeviceGetComputeRunningProcesses_v2", &get_procs, sizeof get_procs) != 0 &&
        lb_nvml_sym(nv->lib, "nvmlDeviceGetComputeRunningProcesses_v3", &get_procs, sizeof get_procs) != 0)
        return;
    LbNvmlProcess p[(64 * 32 + sizeof(LbNvmlProcess) - 1) / sizeof(LbNvmlProcess)];
    unsigned int count = 64;
    if (get_procs(nv->dev, &count, p) != 0 || count > 64)
        return;
    int others = 0;
    for (unsigned int i = 0; i < count; i++)
        others += p[i].pid != (unsigned int)getpid();
    *other_processes = others;
}

int lb_nvml_energy_mj(LbNvml *nv, unsigned long long *mj)
{
    *mj = 0;
    int (*get)(LbNvmlDeviceRaw, unsigned long long *) = NULL;
    if (!nv || lb_nvml_sym(nv->lib, "nvmlDeviceGetTotalEnergyConsumption", &get, sizeof get) != 0)
        return -1;
    return get(nv->dev, mj) == 0 ? 0 : -1;
}

void lb_nvml_close(LbNvml *nv)
{
    if (!nv)
        return;
    nv->shutdown();
    dlclose(nv->lib);
    free(nv);
}
