/* Internal to attn/cpu/: the CPU reference's energy counter (cpu_energy.c). */
#ifndef LB_CPU_ENERGY_H
#define LB_CPU_ENERGY_H

typedef struct LbCpuEnergy {
    int started;                 /* a first reading was taken */
    unsigned long long last_uj;  /* energy_uj at the last reading */
    unsigned long long total_uj; /* since the first reading, wraps unwrapped */
} LbCpuEnergy;

/* Joules since the first reading through e (0 at it), wraps of the counter unwrapped.
 * LB_ERR_UNSUPPORTED, the message naming the file and why, where no counter can be read. */
int lb_cpu_energy_read(LbCpuEnergy *e, double *joules);

#endif
