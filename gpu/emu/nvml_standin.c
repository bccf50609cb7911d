/* A stand-in for NVML (libnvidia-ml.so.1) for the emulated GPU's tests: the entry points gpu/nvml.c
 * looks up, answering from switches as the emulator's other parts do, so every path of gpu/nvml.c
 * (clocks, clock events, persistence, MIG, other processes, and each way NVML fails) runs in CI
 * through the same dlopen that finds the driver's library on a user's machine. Tests put its
 * directory first on LD_LIBRARY_PATH. Built twice: as a current driver (gpu/emu/nvml/) and, with
 * LB_NVML_OLD_DRIVER, as one from before 535 (gpu/emu/nvml_old/), which names clock events
 * "throttle reasons" and lists processes only through the _v2 entry point.
 *
 * It answers only for the emulated devices' PCI bus ids (domain ffff, gpu/emu/runtime.cc), and
 * NVML_ERROR_NOT_FOUND for any other. Switches (read at every call):
 *   LB_EMU_NVML_FAIL=init|handle   nvmlInit_v2 fails (NVML_ERROR_UNKNOWN), or the device is not
 *                                  found by its bus id (NVML_ERROR_NOT_FOUND)
 *   LB_EMU_NVML_ERROR=FN:CODE,...  FN (clock, max_clock, events, persistence, mig, processes)
 *                                  returns CODE: 3 NVML_ERROR_NOT_SUPPORTED, 4 NO_PERMISSION, ...
 *   LB_EMU_NVML_SM_MHZ, LB_EMU_NVML_SM_STEP   the SM clock (default 1755 MHz), and how much it
 *                                  changes at each read (default 0): a clock moving during a cell
 *   LB_EMU_NVML_EVENTS=BITS        the clock-event reasons in force (default 0)
 *   LB_EMU_NVML_MIG=on|off|unsupported, LB_EMU_NVML_PERSISTENCE=0|1, LB_EMU_NVML_OTHERS=N
 *                                  MIG (default off), persistence (default 1), and compute
 *                                  processes besides the caller (default 0)
 *   LB_EMU_NVML_V3_STRIDE=32       the _v3 process list in 32-byte entries, as the 535 drivers
 *                                  wrote it (default 24, nvmlProcessInfo_v2_t's size)
 *   LB_EMU_NVML_POWER_W            the power the total-energy counter advances at, with the host
 *                                  clock since the first reading (default 300 W; the counter
 *                                  starts at 5e6 mJ; absent from the old driver, as before Volta)
 * FN names for LB_EMU_NVML_ERROR also include energy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_UNKNOWN 999

typedef struct nvmlDevice_st {
    int index;
} *nvmlDevice_t;

/* The entry points, as the driver's nvml.h declares them (no header of ours declares them). */
int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvmlDevice_t *dev);
int nvmlDeviceGetClockInfo(nvmlDevice_t dev, int type, unsigned int *mhz);
int nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, int type, unsigned int *mhz);
int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t dev, unsigned long long *r);
int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev, unsigned long long *r);
int nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, int *mode);
int nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *current, unsigned int *pending);
int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t dev, unsigned long long *mj);

static struct nvmlDevice_st devices[256];
static unsigned long long sm_reads;

static const char *env(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

/* The code LB_EMU_NVML_ERROR gives fn, 0 when none. */
static int forced(const char *fn)
{
    const char *s = env("LB_EMU_NVML_ERROR", "");
    const size_t len = strlen(fn);
    for (const char *p = s; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, fn, len) == 0 && p[len] == ':')
            return atoi(p + len + 1);
    return 0;
}

int nvmlInit_v2(void) { return strcmp(env("LB_EMU_NVML_FAIL", ""), "init") == 0 ? NVML_ERROR_UNKNOWN : NVML_SUCCESS; }

int nvmlShutdown(void) { return NVML_SUCCESS; }

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvmlDevice_t *dev)
{
    unsigned domain = 0, index = 0;
    if (strcmp(env("LB_EMU_NVML_FAIL", ""), "handle") == 0 || sscanf(bus, "%x:%x", &domain, &index) != 2 ||
        domain != 0xffff || index >= sizeof devices / sizeof devices[0])
        return NVML_ERROR_NOT_FOUND;
    devices[index].index = (int)index;
    *dev = &devices[index];
    return NVML_SUCCESS;
}

/* nvmlClockType_t: 1 SM, 2 memory */
int nvmlDeviceGetClockInfo(nvmlDevice_t dev, int type, unsigned int *mhz)
{
    (void)dev;
    if (forced("clock"))
        return forced("clock");
    if (type == 1)
        *mhz = (unsigned)(atoi(env("LB_EMU_NVML_SM_MHZ", "1755")) + atoi(env("LB_EMU_NVML_SM_STEP", "0")) * (int)sm_reads++);
    else
        *mhz = 2619;
    return NVML_SUCCESS;
}

int nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, int type, unsigned int *mhz)
{
    (void)dev;
    if (forced("max_clock"))
        return forced("max_clock");
    *mhz = type == 1 ? 1980 : 2619;
    return NVML_SUCCESS;
}

static int reasons(unsigned long long *r)
{
    if (forced("events"))
        return forced("events");
    *r = strtoull(env("LB_EMU_NVML_EVENTS", "0"), NULL, 0);
    return NVML_SUCCESS;
}

#ifndef LB_NVML_OLD_DRIVER
int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t dev, unsigned long long *r)
{
    (void)dev;
    return reasons(r);
}
#endif

int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev, unsigned long long *r)
{
    (void)dev;
    return reasons(r);
}

int nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, int *mode)
{
    (void)dev;
    if (forced("persistence"))
        return forced("persistence");
    *mode = atoi(env("LB_EMU_NVML_PERSISTENCE", "1"));
    return NVML_SUCCESS;
}

int nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *current, unsigned int *pending)
{
    (void)dev;
    const char *mig = env("LB_EMU_NVML_MIG", "off");
    if (forced("mig"))
        return forced("mig");
    if (strcmp(mig, "unsupported") == 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *current = *pending = strcmp(mig, "on") == 0;
    return NVML_SUCCESS;
}

typedef struct nvmlProcessInfo {
    unsigned int pid;
    unsigned long long used_bytes;
    unsigned int gpu_instance, compute_instance;
} nvmlProcessInfo_t;

int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count, nvmlProcessInfo_t *info);
int nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t dev, unsigned int *count, nvmlProcessInfo_t *info);

/* LB_EMU_NVML_OTHERS others with the caller among them (in the middle, so a reader that gets the
 * entries' size wrong miscounts); NVML_ERROR_INSUFFICIENT_SIZE (7) past *count. Entries of
 * `stride` bytes: 24, nvmlProcessInfo_v2_t; 32, the R535 drivers' _v3, which appended
 * usedGpuCcProtectedMemory without a new version (nvitop pull request 79). */
static int processes(unsigned int *count, nvmlProcessInfo_t *info, size_t stride)
{
    if (forced("processes"))
        return forced("processes");
    const unsigned others = (unsigned)atoi(env("LB_EMU_NVML_OTHERS", "0")), total = others + 1;
    if (total > *count) {
        *count = total;
        return 7;
    }
    for (unsigned i = 0; i < total; i++) {
        char *e = (char *)info + i * stride;
        const nvmlProcessInfo_t v = {i == total / 2 ? (unsigned)getpid() : (unsigned)getpid() + 1000 + i, 1u << 20, 0,
                                     0};
        memcpy(e, &v, sizeof v);
        if (stride > sizeof v)
            memset(e + sizeof v, 0x5a, stride - sizeof v);
    }
    *count = total;
    return NVML_SUCCESS;
}

#ifndef LB_NVML_OLD_DRIVER
/* LB_EMU_NVML_V3_STRIDE=32 plays a driver of the 535 series. */
int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count, nvmlProcessInfo_t *info)
{
    (void)dev;
    return processes(count, info, strcmp(env("LB_EMU_NVML_V3_STRIDE", "24"), "32") == 0 ? 32 : sizeof *info);
}
#endif

int nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t dev, unsigned int *count, nvmlProcessInfo_t *info)
{
    (void)dev;
    return processes(count, info, sizeof *info);
}

#ifndef LB_NVML_OLD_DRIVER
/* mJ since the driver loaded: 5e6 at the first reading, then LB_EMU_NVML_POWER_W times the host
 * time since it. */
int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t dev, unsigned long long *mj)
{
    (void)dev;
    static double first = -1;
    if (forced("energy"))
        return forced("energy");
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const double now = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    if (first < 0)
        first = now;
    *mj = 5000000ull + (unsigned long long)(atof(env("LB_EMU_NVML_POWER_W", "300")) * (now - first) * 1000.0);
    return NVML_SUCCESS;
}
#endif
