/* linbench plot end to end with gnuplot (skipped, exit 77, only when gnuplot is not on PATH):
 * on a sweep directory made from rows, renders the three figures; each PNG decodes (signature,
 * chunk CRCs, IHDR 900x650, IDAT inflated with zlib where linked) and each SVG is a whole SVG
 * document; the data gnuplot drew is read back through libcsv and matches the rows.
 * Usage: test_cli_plot PATH-TO-LINBENCH */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "expect.h"
#include "fixture.h"
#include "png_check.h"
#include "reports/csv_io.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int gnuplot_on_path(void)
{
    const char *path = getenv("PATH");
    char buf[4200];
    while (path && *path) {
        size_t len = strcspn(path, ":");
        snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)len, path);
        if (len && access(buf, X_OK) == 0)
            return 1;
        path += len + (path[len] == ':');
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_cli_plot PATH-TO-LINBENCH\n");
        return 1;
    }
    if (!gnuplot_on_path()) {
        printf("test_cli_plot: gnuplot is not on PATH: rendering not tested (skipped)\n");
        return 77;
    }
    const char *scratch = lb_scratch_dir("cli-plot");
    LbCellResult rows[] = {
        FX_STD(512, 40, 2.0),
        FX_LIN(512, 128, 68, 1.25),
        FX_LIN(512, 256, 60, 1.6),
        FX_STD(1024, 10, 8.0),
        FX_LIN(1024, 128, 30, 4.0),
        fx_row(LB_MODEL_LINFORMER, 1024, 256, 0, 0, LB_CELL_OOM),
        fx_row(LB_MODEL_LINFORMER, 1024, 512, 0, 0, LB_CELL_ERROR),
        fx_row(LB_MODEL_STANDARD, 2048, 0, 0, 0, LB_CELL_OOM),
        FX_LIN(2048, 128, 5, 3.0),
        FX_LIN(2048, 256, 4, 4.5),
    };
    size_t count = sizeof rows / sizeof rows[0];
    char dir[4200], out[4200];
    snprintf(dir, sizeof dir, "%s/sweep", scratch);
    snprintf(out, sizeof out, "%s/figures", scratch); /* created by plot */
    lb_check(fx_sweep_dir(dir, rows, count, "512,1024,2048,4096", "128,256,512", "Tesla V100-SXM2-16GB") == 0,
             "made a sweep directory");

    char *av[] = {argv[1], "plot", dir, "--out", out, NULL};
    LbRun r = lb_run(av);
    lb_check(r.code == 0, "plot: exit %d: %s", r.code, r.err);
    lb_check(lb_lines(r.out) == 3 && strstr(r.out, "time_speedup.png") && strstr(r.out, "memory_speedup.svg") &&
                 strstr(r.out, "time_per_seq.png"),
             "plot says what it wrote:\n%s", r.out);
    printf("%s", r.out);
    lb_run_free(&r);

    const char *names[3] = {"time_speedup", "memory_speedup", "time_per_seq"};
    for (int i = 0; i < 3; i++) {
        char path[4400];
        const char *ext[2] = {".gp", ".plot.csv"};
        for (int e = 0; e < 2; e++) {
            snprintf(path, sizeof path, "%s/%s%s", out, names[i], ext[e]);
            lb_check(file_size(path) > 0, "%s: written, not empty (size %ld)", path, file_size(path));
        }
        snprintf(path, sizeof path, "%s/%s.png", out, names[i]);
        lb_check(file_size(path) > 1000, "%s: size %ld", path, file_size(path));
        uint32_t w, h;
        if (png_check(path, &w, &h))
            lb_check(w == 900 && h == 650, "%s: %ux%u: should be 900x650", path, w, h);
        snprintf(path, sizeof path, "%s/%s.svg", out, names[i]);
        lb_check(file_size(path) > 1000, "%s: size %ld", path, file_size(path));
        char *svg = lb_slurp(path);
        lb_check(svg && strstr(svg, "<svg") && strstr(svg, "</svg>"), "%s: a whole SVG document", path);
        if (i < 2) /* the heatmaps print their values */
            lb_check(svg && strstr(svg, "OOM") && strstr(svg, "ERR"), "%s: cell labels OOM and ERR drawn", path);
        free(svg);
    }

    /* What gnuplot drew, through libcsv: ms per sequence per n, standard and each k. */
    char path[4400];
    snprintf(path, sizeof path, "%s/time_per_seq.plot.csv", out);
    LbCsvTable t;
    if (lb_check(lb_csv_read_file(path, 0, &t) == 0 && t.rows == 5 && t.row[0].count == 5,
                 "time_per_seq.plot.csv: header and 4 rows of n,standard,linformer k=128,linformer k=256,linformer k=512")) {
        const int64_t ns[4] = {512, 1024, 2048, 4096}, ks[3] = {128, 256, 512};
        lb_check(strcmp(t.row[0].fields[0], "n") == 0 && strcmp(t.row[0].fields[1], "standard") == 0 &&
                     strcmp(t.row[0].fields[2], "linformer k=128") == 0 && strcmp(t.row[0].fields[4], "linformer k=512") == 0,
                 "time_per_seq.plot.csv header");
        for (int i = 0; i < 4; i++) {
            for (int c = 1; c < 5; c++) {
                const LbCellResult *rr = c == 1 ? ex_last(rows, count, LB_MODEL_STANDARD, ns[i], 0)
                                                : ex_last(rows, count, LB_MODEL_LINFORMER, ns[i], ks[c - 2]);
                const char *s = t.row[i + 1].fields[c];
                double v;
                if (rr && rr->status == LB_CELL_OK)
                    lb_check(lb_csv_parse_double(s, &v) == 0 && fabs(v - rr->ms_per_seq) <= 1e-5 * rr->ms_per_seq,
                             "n=%lld column %d: \"%s\": should be %g", (long long)ns[i], c, s, rr->ms_per_seq);
                else
                    lb_check(s[0] == '\0', "n=%lld column %d: \"%s\": should be empty (no ok row)", (long long)ns[i], c, s);
            }
        }
    }
    lb_csv_table_free(&t);
    snprintf(path, sizeof path, "%s/time_speedup.plot.csv", out);
    if (lb_check(lb_csv_read_file(path, 0, &t) == 0 && t.rows == 13, "time_speedup.plot.csv: 12 cells")) {
        /* k_index,n_index,value,label,n,k: row for (512, 128) is the first */
        lb_check(strcmp(t.row[1].fields[3], "1.60x") == 0 && strcmp(t.row[1].fields[2], "1.6") == 0,
                 "(512, 128): value \"%s\", label \"%s\"", t.row[1].fields[2], t.row[1].fields[3]);
    }
    lb_csv_table_free(&t);
    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_plot");
}
