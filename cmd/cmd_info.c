/* linbench info: what linbench sees: its build, the CUDA devices (or that there are none), and
 * the CPU reference. Exits 0 on a machine without a GPU: saying so is the answer. */
#include <string.h>

#include "attn/ops.h"
#include "attn/base/sizes.h"
#include "attn/base/status.h"
#include "cmd/check.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "lb_config.h"
#include "lb_revision.h"

/* v with its unit, or "unknown" for what the device did not say (-1: clocks without NVML) */
static const char *known(int v, const char *unit, char *buf, size_t size)
{
    if (v < 0)
        return "unknown";
    snprintf(buf, size, "%d%s", v, unit);
    return buf;
}

static void print_device(const LbDeviceInfo *d)
{
    char total[32] = "unknown", free_s[32] = "unknown", a[32], b[32], c[32];
    if (d->total_bytes >= 0)
        lb_format_size((uint64_t)d->total_bytes, total, sizeof total);
    if (d->free_bytes >= 0)
        lb_format_size((uint64_t)d->free_bytes, free_s, sizeof free_s);
    printf("cuda:%d %s\n", d->device_index, d->name);
    if (d->cc_major >= 0)
        printf("  %-18s %d.%d\n", "compute capability", d->cc_major, d->cc_minor);
    else
        printf("  %-18s unknown\n", "compute capability");
    printf("  %-18s %s\n", "SMs", known(d->sm_count, "", a, sizeof a));
    printf("  %-18s %s total, %s free\n", "memory", total, free_s);
    printf("  %-18s SM %s now, %s max; memory %s\n", "clocks", known(d->sm_clock_mhz, " MHz", a, sizeof a),
           known(d->sm_clock_max_mhz, " MHz", b, sizeof b), known(d->mem_clock_mhz, " MHz", c, sizeof c));
    lb_print_version(18, "driver", d->driver_version);
    lb_print_version(18, "CUDA runtime", d->runtime_version);
    printf("  %-18s %s\n", "cuBLAS", known(d->cublas_version, "", a, sizeof a));
}

int lb_cmd_info(LbRunSettings *o, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const int only = (o->given >> LB_OPT_INFO_GPU) & 1 ? o->gpu : -1;

    /* --gpu N: open it first, so that an index this machine does not have is refused as bad input
     * (exit 2, nothing on stdout) rather than described */
    LbBackend *asked = NULL;
    int asked_rc = LB_OK;
    if (only >= 0 && (asked_rc = lb_cuda_backend_open(only, LB_DTYPE_FP16, 0, &asked)) == LB_ERR_INVALID)
        return lb_open_error(asked_rc);
    const char *kind = lb_cuda_backend_kind();
    printf("linbench %s (git %s), CUDA backend %s\n\n", LB_VERSION, LB_GIT_REVISION,
           strcmp(kind, "CUDA") == 0 ? "built in"
           : strcmp(kind, "none") == 0 ? "not built (nvcc or cuBLAS missing at configure time)"
                                       : "on the EMULATED GPU (gpu/emu: runs on the CPU, never a GPU measurement)");
    int shown = 0;
    for (int i = only < 0 ? 0 : only; i < (only < 0 ? 1024 : only + 1); i++) {
        LbBackend *be = asked;
        int rc = only >= 0 ? asked_rc : lb_cuda_backend_open(i, LB_DTYPE_FP16, 0, &be);
        if (rc != LB_OK) {
            if (shown == 0)
                printf("%s\n", lb_error_message()); /* says it in words of its own ("no CUDA device found ...") */
            break;
        }
        LbDeviceInfo d = {0};
        rc = be->ops->describe(be, &d);
        d.device_index = i;
        if (rc == LB_OK)
            print_device(&d);
        else
            printf("cuda:%d: cannot describe: %s\n", i, lb_error_message());
        lb_backend_close(be);
        shown++;
    }
    printf("\ncpu: the plain-C reference backend (fp32 storage, double accumulation); use --device cpu\n");
    return LB_EXIT_OK;
}
