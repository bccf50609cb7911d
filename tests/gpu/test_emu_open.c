/* Opening the CUDA backend on machines that cannot run it, driven through the emulated GPU's
 * stand-ins (gpu/emu/runtime.cc: LB_EMU_NO_DEVICE, LB_EMU_FAIL, LB_EMU_DRIVER_VERSION, LB_EMU_CC,
 * LB_EMU_COMPUTE_MODE): each cause named as what it is, with LB_ERR_NODEVICE (tests skip) only
 * where there is no GPU to use and LB_ERR_DEVICE (tests fail) where one exists but cannot be used;
 * and lb_cuda_arch_verdict's three answers. Suite gpu-emu. */
#include <stdlib.h>
#include <string.h>

#include "attn/ops.h"
#include "attn/base/status.h"
#include "gpu/open_errors.h"
#include "tests/lib/check.h"

static void expect(const char *what, const char *var, const char *value, const char *var2, const char *value2,
                   int want_rc, const char *want_text)
{
    setenv(var, value, 1);
    if (var2)
        setenv(var2, value2, 1);
    LbBackend *be = NULL;
    const int rc = lb_cuda_backend_open(0, LB_DTYPE_FP16, 0, &be);
    const char *msg = rc == LB_OK ? "" : lb_error_message();
    printf("  %-34s %s: %s\n", what, lb_status_name(rc), msg);
    lb_check(rc == want_rc, "%s: status %s, want %s", what, lb_status_name(rc), lb_status_name(want_rc));
    lb_check(!want_text || strstr(msg, want_text), "%s: the message does not say \"%s\"", what, want_text);
    lb_backend_close(be);
    unsetenv(var);
    if (var2)
        unsetenv(var2);
}

int main(void)
{
    lb_test_init("test_emu_open");
    expect("a usable device", "LB_EMU_CC", "9.0", NULL, NULL, LB_OK, NULL);
    expect("no device", "LB_EMU_NO_DEVICE", "1", NULL, NULL, LB_ERR_NODEVICE, "no CUDA device");
    expect("no driver at all", "LB_EMU_FAIL", "insufficient-driver", "LB_EMU_DRIVER_VERSION", "0", LB_ERR_NODEVICE,
           "no NVIDIA driver");
    expect("a driver older than the runtime", "LB_EMU_FAIL", "insufficient-driver", "LB_EMU_DRIVER_VERSION", "12020",
           LB_ERR_DEVICE, "supports CUDA up to 12.2");
    expect("exclusive or prohibited mode", "LB_EMU_FAIL", "devices-unavailable", NULL, NULL, LB_ERR_DEVICE,
           "exclusive-process");
    expect("kernel module and driver differ", "LB_EMU_FAIL", "driver-mismatch", NULL, NULL, LB_ERR_DEVICE, "reboot");
    expect("a prohibited device", "LB_EMU_COMPUTE_MODE", "prohibited", NULL, NULL, LB_ERR_DEVICE, "prohibited compute mode");
    expect("an architecture without code", "LB_EMU_CC", "8.0", NULL, NULL, LB_ERR_DEVICE, "-Dgpu_arch=80");
    expect("a newer GPU, PTX JIT", "LB_EMU_CC", "12.0", NULL, NULL, LB_OK, NULL);

    char what[160];
    lb_check(lb_cuda_arch_verdict(9, 0, "80 86 89 90 100", 100, what, sizeof what) == 2, "sm_90 native: %s", what);
    lb_check(lb_cuda_arch_verdict(8, 9, "80 86", 86, what, sizeof what) == 2 && strstr(what, "sm_86"),
             "sm_89 runs sm_86 code: %s", what);
    lb_check(lb_cuda_arch_verdict(12, 0, "80 90 100", 100, what, sizeof what) == 1, "sm_120 by PTX: %s", what);
    lb_check(lb_cuda_arch_verdict(7, 5, "80 90", 90, what, sizeof what) == 0, "sm_75 without code: %s", what);
    lb_check(lb_cuda_arch_verdict(10, 0, "80 86 89 90", 90, what, sizeof what) == 1, "sm_100 on a 12.4 build: %s", what);
    /* architecture lists as other builds write them ("sm_80,86"): the non-digits are skipped */
    lb_check(lb_cuda_arch_verdict(8, 6, "sm_80,sm_86", 86, what, sizeof what) == 2 && strstr(what, "native sm_86"),
             "a list with sm_ and commas: %s", what);

    /* The causes no stand-in switch reaches, through the function backend.cu asks. */
    static const struct {
        int error, driver, runtime, module, rc;
        const char *text;
    } causes[] = {
        {100, 12040, 12040, 1, LB_ERR_NODEVICE, "shows no GPU to this process"},
        {35, 11040, 12040, 1, LB_ERR_DEVICE, "release 525.60.13 or newer"},
        {35, 11040, 11080, 1, LB_ERR_DEVICE, "release 450.80.02 or newer"},
        {35, 13000, 14000, 1, LB_ERR_DEVICE, "the one NVIDIA's release notes give"},
        {804, 12020, 13000, 1, LB_ERR_DEVICE, "forward-compatibility package"},
        {3, 13000, 13000, 1, LB_ERR_DEVICE, "could not initialise"},
        {999, 13000, 13000, 1, LB_ERR_DEVICE, "cannot list its devices"},
    };
    for (size_t i = 0; i < sizeof causes / sizeof causes[0]; i++) {
        const int rc = lb_cuda_explain_no_device(causes[i].error, "cudaErrorX", "some text", causes[i].driver,
                                                 causes[i].runtime, causes[i].module);
        lb_check(rc == causes[i].rc && strstr(lb_error_message(), causes[i].text), "error %d: %s, \"%s\"",
                 causes[i].error, lb_status_name(rc), lb_error_message());
    }
    return lb_test_finish("test_emu_open");
}
