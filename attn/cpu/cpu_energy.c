/* The CPU reference's energy counter (LbOps.energy_j): the powercap package zone (RAPL),
 * energy_uj, unwrapped past max_energy_range_uj; /sys/class/powercap/intel-rapl:0 or
 * $LB_POWERCAP_ZONE. Often readable by root only; elsewhere unsupported, with the reason. */
#include "attn/cpu/cpu_energy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/status.h"

static const char *zone(void)
{
    const char *z = getenv("LB_POWERCAP_ZONE");
    return z && *z ? z : "/sys/class/powercap/intel-rapl:0";
}

/* One whole number from DIR/name; errno's text in why on failure. */
static int read_u64(const char *name, unsigned long long *v, char *why, size_t why_size)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", zone(), name);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, why_size, "%s cannot be read: %s", path, strerror(errno));
        return -1;
    }
    const int ok = fscanf(f, "%llu", v) == 1;
    fclose(f);
    if (!ok)
        snprintf(why, why_size, "%s holds no number", path);
    return ok ? 0 : -1;
}

int lb_cpu_energy_read(LbCpuEnergy *e, double *joules)
{
    char why[4400];
    unsigned long long uj = 0, range = 0;
    *joules = 0;
    if (read_u64("energy_uj", &uj, why, sizeof why) != 0 ||
        read_u64("max_energy_range_uj", &range, why, sizeof why) != 0)
        return LB_FAIL(LB_ERR_UNSUPPORTED,
                       "no energy counter: %s (the kernel exposes no RAPL package counter here, or only to root)", why);
    if (!e->started) {
        e->started = 1;
        e->total_uj = 0;
    } else if (uj >= e->last_uj) {
        e->total_uj += uj - e->last_uj;
    } else { /* wrapped past max_energy_range_uj to 0 */
        e->total_uj += range - e->last_uj + uj + 1;
    }
    e->last_uj = uj;
    *joules = (double)e->total_uj / 1e6;
    return LB_OK;
}
