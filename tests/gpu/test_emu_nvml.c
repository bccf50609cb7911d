/* gpu/nvml.c against the stand-in NVML (gpu/emu/nvml_standin.c) through the same dlopen as on a
 * user's machine (LB_TEST_NVML=current, old or none says which driver it plays): clocks, clock
 * events, persistence, MIG, other processes and each failure, "unknown" where NVML cannot say and
 * never a crash; the emulated backend's clocks read by bus id; and, given linbench-emu, `run`
 * printing the SM clock and a slowdown, and a `sweep` whose files hold the energy where the
 * stand-in has a counter and say why not where it has none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <math.h>

#include "attn/ops.h"
#include "attn/base/status.h"
#include "gpu/nvml.h"
#include "reports/grid.h"
#include "reports/meta.h"
#include "reports/raw.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static const char *const kBus = "ffff:00:00.0";
static char *linbench; /* linbench-emu, when given */

/* linbench-emu's model, as small as the emulator runs fast */
#define EMU_MODEL "--device", "cuda", "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", "64", "--vocab", "100"

static void clear(void)
{
    static const char *const vars[] = {"LB_EMU_NVML_FAIL", "LB_EMU_NVML_ERROR", "LB_EMU_NVML_SM_MHZ",
                                       "LB_EMU_NVML_SM_STEP", "LB_EMU_NVML_EVENTS", "LB_EMU_NVML_MIG",
                                       "LB_EMU_NVML_PERSISTENCE", "LB_EMU_NVML_OTHERS", "LB_EMU_NVML_V3_STRIDE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

static void check_no_library(void)
{
    LbNvml *nv = lb_nvml_open(kBus);
    lb_check(nv == NULL, "no libnvidia-ml.so.1: lb_nvml_open gives NULL");
    unsigned long long r = 1;
    int p, m, o;
    lb_nvml_state(nv, &p, &m, &o);
    lb_check(lb_nvml_clock(nv, LB_NVML_SM_NOW) == -1 && lb_nvml_clock_events(nv, &r) == -1 && r == 0 && p == -1 &&
                 m == -1 && o == -1,
             "no NVML: clocks -1, events unknown, state unknown");
    lb_nvml_close(nv);
}

static void check_library(int old)
{
    clear();
    LbNvml *nv = lb_nvml_open(kBus);
    if (!lb_check(nv != NULL, "%s driver: lb_nvml_open(%s)", old ? "old" : "current", kBus))
        return;
    lb_check(lb_nvml_clock(nv, LB_NVML_SM_NOW) == 1755 && lb_nvml_clock(nv, LB_NVML_SM_MAX) == 1980 &&
                 lb_nvml_clock(nv, LB_NVML_MEM_NOW) == 2619 && lb_nvml_clock(nv, LB_NVML_MEM_MAX) == 2619 &&
                 lb_nvml_clock(nv, (LbNvmlClock)9) == -1,
             "clocks: SM 1755 of 1980, memory 2619 MHz, an unknown clock -1");
    setenv("LB_EMU_NVML_SM_STEP", "-100", 1);
    const int a = lb_nvml_clock(nv, LB_NVML_SM_NOW), b = lb_nvml_clock(nv, LB_NVML_SM_NOW);
    lb_check(b == a - 100, "a clock that moves: %d then %d MHz", a, b);
    unsetenv("LB_EMU_NVML_SM_STEP");
    /* sw_power_cap (0x4) and hw_slowdown (0x8), under either name of the entry point */
    setenv("LB_EMU_NVML_EVENTS", "0xc", 1);
    unsigned long long r = 0;
    lb_check(lb_nvml_clock_events(nv, &r) == 0 && r == 0xc, "clock events 0x%llx, want 0xc (%s name)", r,
             old ? "the old driver's throttle-reason" : "the clock-event");
    setenv("LB_EMU_NVML_ERROR", "clock:4,max_clock:3,events:4", 1); /* NO_PERMISSION, NOT_SUPPORTED */
    lb_check(lb_nvml_clock(nv, LB_NVML_SM_NOW) == -1 && lb_nvml_clock(nv, LB_NVML_MEM_MAX) == -1 &&
                 lb_nvml_clock_events(nv, &r) == -1 && r == 0,
             "NO_PERMISSION and NOT_SUPPORTED: clocks -1, events unknown");
    unsetenv("LB_EMU_NVML_ERROR");
    int p, m, o;
    setenv("LB_EMU_NVML_OTHERS", "2", 1);
    lb_nvml_state(nv, &p, &m, &o);
    lb_check(p == 1 && m == 0 && o == 2, "state: persistence %d, MIG %d, %d other processes (want 1, 0, 2)", p, m, o);
    /* a 535 driver's _v3 list, 32 bytes an entry: counted right, and 60 of them (1920 bytes) fit
     * where 64 entries of 24 bytes were asked for */
    setenv("LB_EMU_NVML_V3_STRIDE", "32", 1);
    lb_nvml_state(nv, &p, &m, &o);
    lb_check(o == 2, "a 535 driver's process list: %d other processes (want 2)", o);
    setenv("LB_EMU_NVML_OTHERS", "59", 1);
    lb_nvml_state(nv, &p, &m, &o);
    lb_check(o == 59, "a 535 driver's list of 60 processes: %d others (want 59)", o);
    unsetenv("LB_EMU_NVML_V3_STRIDE");
    setenv("LB_EMU_NVML_OTHERS", "80", 1); /* more than the 64 it asks for */
    setenv("LB_EMU_NVML_MIG", "on", 1);
    setenv("LB_EMU_NVML_PERSISTENCE", "0", 1);
    lb_nvml_state(nv, &p, &m, &o);
    lb_check(p == 0 && m == 1 && o == -1, "state: persistence %d, MIG %d, processes %d (want 0, 1, unknown)", p, m, o);
    setenv("LB_EMU_NVML_MIG", "unsupported", 1);
    setenv("LB_EMU_NVML_ERROR", "persistence:4,processes:4", 1);
    lb_nvml_state(nv, &p, &m, &o);
    lb_check(p == -1 && m == 0 && o == -1, "a GPU without MIG reads MIG off; errors unknown: %d, %d, %d", p, m, o);
    setenv("LB_EMU_NVML_ERROR", "mig:4", 1);
    lb_nvml_state(nv, &p, &m, &o);
    lb_check(m == -1, "MIG NO_PERMISSION: unknown (%d)", m);
    /* the total-energy counter: a current driver's advances, an old one has none */
    unsigned long long e0 = 0, e1 = 0;
    const int got0 = lb_nvml_energy_mj(nv, &e0);
    usleep(20000);
    const int got1 = lb_nvml_energy_mj(nv, &e1);
    if (old)
        lb_check(got0 == -1 && got1 == -1, "the old driver: no energy counter");
    else
        lb_check(got0 == 0 && got1 == 0 && e0 >= 5000000ull && e1 > e0, "energy counter: %llu then %llu mJ", e0, e1);
    setenv("LB_EMU_NVML_ERROR", "energy:3", 1);
    lb_check(lb_nvml_energy_mj(nv, &e0) == -1 && e0 == 0, "energy NOT_SUPPORTED: -1");
    unsetenv("LB_EMU_NVML_ERROR");
    lb_nvml_close(nv);
    clear();

    setenv("LB_EMU_NVML_FAIL", "init", 1);
    nv = lb_nvml_open(kBus);
    lb_check(nv == NULL, "nvmlInit_v2 failing: NULL");
    lb_nvml_close(nv);
    setenv("LB_EMU_NVML_FAIL", "handle", 1);
    nv = lb_nvml_open(kBus);
    lb_check(nv == NULL, "the device not found by its bus id: NULL");
    lb_nvml_close(nv);
    clear();
    nv = lb_nvml_open("0000:3b:00.0");
    lb_check(nv == NULL, "a real bus id is not the stand-in's: NULL");
    lb_nvml_close(nv);
}

/* The emulated backend reads its clocks through NVML as the real one does. */
static void check_backend(int have)
{
    clear();
    setenv("LB_EMU_NVML_EVENTS", "0x4", 1);
    LbBackend *be = NULL;
    if (!lb_check(lb_cuda_backend_open(0, LB_DTYPE_FP16, 0, &be) == LB_OK, "open the emulated backend: %s",
                  lb_error_message()))
        return;
    LbDeviceInfo d;
    lb_check(be->ops->describe(be, &d) == LB_OK, "describe");
    uint64_t r = 0;
    const int events = be->ops->clock_events(be, &r);
    if (have)
        lb_check(d.sm_clock_mhz == 1755 && d.sm_clock_max_mhz == 1980 && d.mem_clock_mhz == 2619 &&
                     be->ops->sm_clock_mhz(be) == 1755 && events == LB_OK && r == 0x4 && d.persistence == 1 &&
                     d.mig == 0 && d.other_processes == 0,
                 "backend through NVML: SM %d of %d MHz, memory %d, now %d, events %d 0x%llx, persistence %d, "
                 "MIG %d, others %d",
                 d.sm_clock_mhz, d.sm_clock_max_mhz, d.mem_clock_mhz, be->ops->sm_clock_mhz(be), events,
                 (unsigned long long)r, d.persistence, d.mig, d.other_processes);
    else
        lb_check(d.sm_clock_mhz == -1 && be->ops->sm_clock_mhz(be) == -1 && events == LB_ERR_UNSUPPORTED,
                 "backend without NVML: clocks -1 (%d), events unsupported (%d)", d.sm_clock_mhz, events);
    lb_backend_close(be);
    clear();
}

/* linbench-emu ARGS...: its exit code, its stdout then its stderr into out. */
#define EMU(out, ...) emu_run(out, sizeof out, LB_ARGV(linbench, __VA_ARGS__))
static int emu_run(char *out, size_t size, char **argv)
{
    LbRun r = lb_run(argv);
    snprintf(out, size, "%s%s", r.out, r.err);
    lb_run_free(&r);
    return r.code;
}

/* linbench run on the emulated GPU, the stand-in reporting hw_slowdown (0x8): the result names
 * the clock and the slowdown. */
static void check_run(void)
{
    clear();
    setenv("LB_EMU_NVML_EVENTS", "0x8", 1);
    char out[8192];
    const int rc = EMU(out, "run", EMU_MODEL, "--n", "32", "--max-batch", "2", "--cell-time", "1", "--no-check");
    const char *power = strstr(out, "(mean power ");
    const double watts = power ? atof(power + strlen("(mean power ")) : 0;
    lb_check(rc == 0 && strstr(out, "SM clock: 1755 -> 1755 MHz") && strstr(out, "hw_slowdown") &&
                 strstr(out, "(slowed: thermal or hardware slowdown)") && strstr(out, "energy per sequence: ") &&
                 watts > 200 && watts < 400,
             "linbench run through the stand-in NVML (300 W): exit %d, %g W\n%s", rc, watts, out);
    clear();
}

/* A two-cell sweep (standard and Linformer at n 32, k 8) on the emulated GPU, then compare and
 * plot of it: energy everywhere where the stand-in has a counter (has_energy), else empty cells,
 * NA ratios and meta.csv's reason. */
static void check_sweep(int has_energy)
{
    clear();
    setenv("LB_EMU_NVML_EVENTS", "0x8", 1); /* hw_slowdown, where NVML can say so */
    char out[16384], path[4400], res[512];
    snprintf(res, sizeof res, "%s/r", lb_scratch);
    int rc = EMU(out, "sweep", EMU_MODEL, "--n", "32", "--k", "8", "--max-batch", "2", "--cell-time", "1", "--no-check",
                 "--quiet", "--out", res);
    lb_check(rc == 0, "sweep through the stand-in NVML: exit %d\n%s", rc, out);
    snprintf(path, sizeof path, "%s/raw.csv", res);
    LbCellResult *rows = NULL;
    size_t count = 0;
    rc = lb_raw_read(path, &rows, &count);
    lb_check(rc == LB_OK && count == 2, "raw.csv: rc %d (%s), %zu rows: should be 2", rc, lb_error_message(), count);
    for (size_t i = 0; rc == LB_OK && i < count; i++) {
        const LbCellResult *r = &rows[i];
        if (has_energy)
            lb_check(r->status == LB_CELL_OK && r->power_w > 200 && r->power_w < 400 && r->energy_j_per_seq > 0 &&
                         fabs(r->energy_j_per_seq - r->power_w * r->ms_per_seq / 1e3) <= 1e-9 * r->energy_j_per_seq,
                     "%s row: power %g W (the stand-in draws 300 W), %g J per sequence = power x ms per sequence",
                     lb_model_name(r->model), r->power_w, r->energy_j_per_seq);
        else
            lb_check(r->status == LB_CELL_OK && isnan(r->power_w) && isnan(r->energy_j_per_seq),
                     "%s row without a counter: power %g, energy %g: should be empty", lb_model_name(r->model),
                     r->power_w, r->energy_j_per_seq);
        /* the clock columns and the throttle flag, as NVML gives them (an old driver has the
         * reasons under their old name; without NVML, none of it) */
        const int nvml = strcmp(getenv("LB_TEST_NVML") ? getenv("LB_TEST_NVML") : "none", "none") != 0;
        if (nvml)
            lb_check(r->sm_clock_start_mhz == 1755 && r->sm_clock_end_mhz == 1755 && r->clock_events_known &&
                         r->slowdown == 1,
                     "%s row: SM clock %d -> %d MHz, events known %d, slowdown %d: should be 1755, 1755, 1, 1",
                     lb_model_name(r->model), r->sm_clock_start_mhz, r->sm_clock_end_mhz, r->clock_events_known,
                     r->slowdown);
        else
            lb_check(r->sm_clock_start_mhz == -1 && !r->clock_events_known && r->slowdown == 0,
                     "%s row without NVML: SM clock %d, events known %d, slowdown %d: should be empty",
                     lb_model_name(r->model), r->sm_clock_start_mhz, r->clock_events_known, r->slowdown);
    }
    LbGrid g;
    rc = lb_grids_read(res, &g);
    if (lb_check(rc == LB_OK && g.rows == 1 && g.cols == 1, "the grids read back: %s", lb_error_message())) {
        const double want = rc == LB_OK && count == 2 ? rows[0].energy_j_per_seq / rows[1].energy_j_per_seq : NAN;
        if (has_energy)
            lb_check(g.energy[0].kind == LB_GRID_VALUE && fabs(g.energy[0].value - want) <= 1e-5 * want,
                     "energy_speedup.csv: %g: should be standard's joules over Linformer's, %g", g.energy[0].value, want);
        else
            lb_check(g.energy[0].kind == LB_GRID_MISSING, "energy_speedup.csv without a counter: NA");
        lb_grid_free(&g);
    }
    free(rows);
    LbMeta meta;
    memset(&meta, 0, sizeof meta);
    snprintf(path, sizeof path, "%s/meta.csv", res);
    rc = lb_meta_read(path, &meta);
    const char *energy = rc == LB_OK ? lb_meta_get(&meta, "energy") : NULL;
    const char *note = rc == LB_OK ? lb_meta_get(&meta, "energy_note") : NULL;
    lb_check(energy && note && strcmp(energy, has_energy ? "measured" : "none") == 0 &&
                 (has_energy ? note[0] == '\0' : strstr(note, "no energy counter") != NULL),
             "meta.csv: energy \"%s\", energy_note \"%s\"", energy ? energy : "(none)", note ? note : "(none)");
    lb_meta_free(&meta);

    /* check names the counter a sweep will read, or why there is none, before anything runs */
    rc = EMU(out, "check", "--device", "cuda", "--quick");
    lb_check(rc == 0 && (has_energy ? strstr(out, "energy counter       NVML total energy") != NULL
                                    : strstr(out, "energy counter       none (no energy counter") != NULL),
             "check --quick: exit %d, the energy counter %s\n%s", rc, has_energy ? "named" : "missing, with why", out);

    rc = EMU(out, "compare", res);
    lb_check(rc == 0 && (has_energy ? strstr(out, "Energy saved (joules per sequence, standard / Linformer)") != NULL
                                    : strstr(out, "Energy per sequence: not measured (no energy counter") != NULL),
             "compare %s energy: exit %d\n%s", has_energy ? "shows the" : "says why there is no", rc, out);
    rc = EMU(out, "plot", res, "--no-render");
    const int heat = lb_exists_in(res, "energy_speedup.gp"), lines = lb_exists_in(res, "energy_per_seq.plot.csv");
    lb_check(rc == 0 && heat == has_energy && lines == has_energy,
             "plot: exit %d, energy_speedup.gp %s, energy_per_seq.plot.csv %s: should be %s\n%s", rc,
             heat ? "written" : "absent", lines ? "written" : "absent", has_energy ? "written" : "absent", out);
    clear();
}

int main(int argc, char **argv)
{
    lb_test_init("test_emu_nvml");
    linbench = argc > 1 ? argv[1] : NULL;
    if (linbench) /* where its runs capture their output, and the sweep writes */
        lb_scratch_dir("nvml");
    const char *which = getenv("LB_TEST_NVML");
    which = which ? which : "none";
    printf("stand-in NVML: %s\n", which);
    if (strcmp(which, "none") == 0) {
        check_no_library();
        check_backend(0);
    } else {
        check_library(strcmp(which, "old") == 0);
        check_backend(1);
        if (argc > 1 && strcmp(which, "current") == 0)
            check_run();
    }
    if (argc > 1) /* a current driver has the energy counter; an old one and no NVML have none */
        check_sweep(strcmp(which, "current") == 0);
    if (linbench)
        lb_test_cleanup(lb_scratch);
    return lb_test_finish("test_emu_nvml");
}
