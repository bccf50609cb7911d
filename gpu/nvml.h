/* The SM and memory clocks of one GPU through NVML, the standard source for clocks, loaded at
 * run time with dlopen("libnvidia-ml.so.1") so linbench has no link-time dependency on the
 * driver's library and runs (clocks unknown, -1) where it is missing. */
#ifndef LB_GPU_NVML_H
#define LB_GPU_NVML_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbNvml LbNvml;

typedef enum LbNvmlClock {
    LB_NVML_SM_NOW = 0,
    LB_NVML_SM_MAX = 1,
    LB_NVML_MEM_NOW = 2,
    LB_NVML_MEM_MAX = 3
} LbNvmlClock;

/* The device with this PCI bus id (cudaDeviceGetPCIBusId's "0000:3b:00.0" form, which also
 * maps CUDA's device order to NVML's), or NULL when NVML or the device cannot be reached. */
LbNvml *lb_nvml_open(const char *pci_bus_id);
/* MHz, or -1 when it cannot be read (NULL handle too). */
int lb_nvml_clock(LbNvml *nv, LbNvmlClock which);
/* The clock-event reasons in force now (NVML's bits, attn/measure/clock_events.h); -1 when they cannot be
 * read (NULL handle, or a driver with neither entry point). */
int lb_nvml_clock_events(LbNvml *nv, unsigned long long *reasons);
/* For `linbench check`'s environment block: persistence mode and MIG mode (1 on, 0 off) and the
 * number of compute processes on the GPU other than this one; -1 each where NVML cannot tell. */
void lb_nvml_state(LbNvml *nv, int *persistence, int *mig, int *other_processes);
/* The GPU's total energy since the driver loaded, in mJ (nvmlDeviceGetTotalEnergyConsumption,
 * Volta and later); -1 when it cannot be read (NULL handle, an older GPU or driver). */
int lb_nvml_energy_mj(LbNvml *nv, unsigned long long *mj);
void lb_nvml_close(LbNvml *nv);

#ifdef __cplusplus
}
#endif

#endif
