/* The temp-and-rename writes of reports/atomic_file.c when they fail: at each step (the temporary
 * file cannot be made, a write fails part-way, fsync fails, rename fails) the call returns
 * LB_ERR_IO with a message naming the target, the file that was there before is untouched, and
 * no temporary file is left. Write failures are real ones (RLIMIT_FSIZE, SIGXFSZ ignored: the
 * way a full disk fails); mkstemp, fsync and rename failures come from the test-only hook
 * lb_atomic_inject_fault. Also meta.csv and the grids through the same path, and meta.csv's
 * round trip. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "attn/base/paths.h"
#include "attn/base/status.h"
#include "reports/atomic_file.h"
#include "reports/csv_io.h"
#include "reports/grid.h"
#include "reports/meta.h"
#include "tests/lib/check.h"
#include "tests/reports/fixture.h"

static int holds(const char *path, const char *text)
{
    char *got = lb_slurp(path);
    const int same = got && strcmp(got, text) == 0;
    free(got);
    return same;
}

/* `*size` bytes of 'x' into f; with *size 0, half a line and then a refusal of the writer's own. */
static int xs(FILE *f, const void *ctx)
{
    const size_t *size = ctx;
    if (*size == 0) {
        fputs("half", f);
        return LB_FAIL(LB_ERR_FORMAT, "the writer's own refusal");
    }
    for (size_t i = 0; i < *size; i++)
        fputc('x', f);
    return LB_OK;
}

/* Write `size` bytes of 'x' to path atomically; the status. */
static int write_bytes(const char *path, size_t size) { return lb_atomic_write_path(path, xs, &size); }

static void fails_cleanly(const char *dir, const char *path, LbAtomicFault fault, size_t size, const char *what)
{
    fx_write(path, "w", "before\n");
    lb_error_clear();
    lb_atomic_inject_fault(fault);
    int rc = write_bytes(path, size);
    lb_atomic_inject_fault(LB_ATOMIC_FAULT_NONE);
    lb_check(rc == LB_ERR_IO, "%s: LB_ERR_IO (got %d)", what, rc);
    lb_check(strstr(lb_error_message(), path) != NULL, "%s: the message names the target: %s", what, lb_error_message());
    lb_check(holds(path, "before\n"), "%s: the old file is untouched", what);
    lb_check(fx_count_files(dir, ".tmp.") == 0, "%s: no temporary file left", what);
}

/* meta.csv: keys set, replaced and read back in order with awkward values (commas, quotes, a
 * newline, leading blanks, empty); a missing key is NULL; a foreign header is refused. */
static void check_meta(void)
{
    LbMeta m = {0};
    lb_check(lb_meta_set(&m, "linbench_version", "%s", "0.1.0") == LB_OK, "set");
    lb_meta_set(&m, "command_line", "%s", "linbench sweep --n 512,1024 --out \"my dir\"");
    lb_meta_set(&m, "device_name", "%s", "  NVIDIA H100 80GB HBM3");
    lb_meta_set(&m, "mem_limit", "%s", "");
    lb_meta_set(&m, "note", "%s", "two\nlines");
    lb_meta_set(&m, "layers", "%d", 12);
    lb_meta_set(&m, "linbench_version", "%s", "0.1.1"); /* replaces, keeps its place */
    lb_check(m.count == 6, "%zu keys: should be 6", m.count);
    lb_check(lb_meta_get(&m, "absent") == NULL, "an absent key should be NULL");
    lb_check(strcmp(lb_meta_get(&m, "linbench_version"), "0.1.1") == 0, "replace");

    char *dir = lb_test_tempdir("meta");
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    int rc = lb_meta_write(path, &m);
    lb_check(rc == LB_OK, "lb_meta_write = %d: %s", rc, lb_error_message());

    LbMeta r = {0};
    rc = lb_meta_read(path, &r);
    lb_check(rc == LB_OK && r.count == m.count, "lb_meta_read = %d, %zu keys", rc, r.count);
    for (size_t i = 0; rc == LB_OK && i < m.count && i < r.count; i++)
        lb_check(strcmp(m.keys[i], r.keys[i]) == 0 && strcmp(m.values[i], r.values[i]) == 0,
                 "key %zu: %s=\"%s\" read back as %s=\"%s\"", i, m.keys[i], m.values[i], r.keys[i],
                 r.values[i]);

    LbCsvTable t;
    rc = lb_csv_read_file(path, 0, &t);
    lb_check(rc == LB_OK && t.rows == 7 && strcmp(t.row[0].fields[0], "key") == 0 &&
                 strcmp(t.row[0].fields[1], "value") == 0 && strcmp(t.row[1].fields[0], "linbench_version") == 0,
             "meta.csv: header key,value then one row per key in order");
    lb_csv_table_free(&t);

    fx_write(path, "w", "name,value\na,b\n");
    lb_error_clear();
    rc = lb_meta_read(path, &r);
    lb_check(rc == LB_ERR_FORMAT && r.count == 0, "foreign header: rc %d: should be LB_ERR_FORMAT", rc);
    /* a key twice (a hand edit, two files joined): which value the run had cannot be told */
    fx_write(path, "w", "key,value\nlayers,1\nheads,2\nlayers,4\n");
    lb_error_clear();
    rc = lb_meta_read(path, &r);
    lb_check(rc == LB_ERR_FORMAT && r.count == 0 && strstr(lb_error_message(), "line 4: key layers again (first on line 2)"),
             "layers on lines 2 and 4: rc %d, \"%s\": should be LB_ERR_FORMAT naming both lines", rc, lb_error_message());
    lb_error_clear();
    rc = lb_meta_read("/nonexistent/meta.csv", &r);
    lb_check(rc == LB_ERR_IO, "missing file: rc %d: should be LB_ERR_IO", rc);
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/no/such/dir/meta.csv", dir);
    lb_error_clear();
    rc = lb_meta_write(bad, &m);
    lb_check(rc == LB_ERR_IO && strstr(lb_error_message(), "no/such/dir/meta.csv"),
             "unwritable path: rc %d, \"%s\"", rc, lb_error_message());

    lb_meta_free(&m);
    lb_meta_free(&r);
    lb_test_cleanup(dir);
}

int main(void)
{
    check_meta();
    char *dir = lb_test_tempdir("atomic");
    char path[4200];
    snprintf(path, sizeof path, "%s/grid.csv", dir);

    /* It works, and replaces. */
    fx_write(path, "w", "before\n");
    lb_check(write_bytes(path, 10) == LB_OK && holds(path, "xxxxxxxxxx"), "a write replaces the file");
    lb_check(fx_count_files(dir, ".tmp.") == 0, "no temporary file after a write");

    fails_cleanly(dir, path, LB_ATOMIC_FAULT_OPEN, 10, "mkstemp fails");
    fails_cleanly(dir, path, LB_ATOMIC_FAULT_SYNC, 10, "fsync fails");
    fails_cleanly(dir, path, LB_ATOMIC_FAULT_RENAME, 10, "rename fails");

    /* A real write failure part-way: the file-size limit below what is written. */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, rl;
    getrlimit(RLIMIT_FSIZE, &old);
    rl = old;
    rl.rlim_cur = 4096;
    lb_check(setrlimit(RLIMIT_FSIZE, &rl) == 0, "set RLIMIT_FSIZE");
    fails_cleanly(dir, path, LB_ATOMIC_FAULT_NONE, 100000, "a write past the file-size limit");
    LbMeta m = {0};
    lb_meta_set(&m, "key", "%s", "value");
    char big[6000];
    memset(big, 'v', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    lb_meta_set(&m, "big", "%s", big);
    char meta[4200];
    snprintf(meta, sizeof meta, "%s/meta.csv", dir);
    fx_write(meta, "w", "before\n");
    lb_check(lb_meta_write(meta, &m) == LB_ERR_IO && holds(meta, "before\n") && fx_count_files(dir, ".tmp.") == 0,
             "meta.csv past the limit: LB_ERR_IO, the old one kept, nothing left over");
    lb_meta_free(&m);
    setrlimit(RLIMIT_FSIZE, &old);

    /* A rename onto a directory fails for real: the directory stays, no temporary is left. */
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/time_speedup.csv", dir);
    mkdir(sub, 0777);
    char inner[4300];
    snprintf(inner, sizeof inner, "%s/keep", sub);
    fx_write(inner, "w", "x");
    int64_t n[1] = {256}, k[1] = {64};
    LbGrid g;
    lb_check(lb_grid_alloc_pair(&g, LB_TABLE3_MODEL, LB_TABLE3_BASELINE, n, 1, k, 1) == LB_OK, "grid");
    lb_check(lb_grids_write(dir, &g) == LB_ERR_IO && fx_count_files(dir, ".tmp.") == 0, "a grid that cannot be renamed into place: LB_ERR_IO, nothing left over");
    lb_grid_free(&g);
    remove(inner);
    rmdir(sub);

    /* A target in a directory that does not exist: the temporary cannot be made. */
    char nowhere[4300];
    snprintf(nowhere, sizeof nowhere, "%s/missing/x.csv", dir);
    lb_error_clear();
    lb_check(write_bytes(nowhere, 1) == LB_ERR_IO && strstr(lb_error_message(), nowhere), "no directory: LB_ERR_IO naming the target");
    fx_write(path, "w", "before\n");
    lb_check(write_bytes(path, 0) == LB_ERR_FORMAT && strcmp(lb_error_message(), "the writer's own refusal") == 0,
             "a writer's refusal is returned as it is: %s", lb_error_message());
    lb_check(holds(path, "before\n") && fx_count_files(dir, ".tmp.") == 0, "a refused write keeps the old file and leaves no temporary");
    char *joined = lb_path_join("a/", "b");
    lb_check(joined && strcmp(joined, "a/b") == 0, "lb_path_join does not double the slash");
    free(joined);
    joined = lb_path_join("a", "b");
    lb_check(joined && strcmp(joined, "a/b") == 0, "lb_path_join adds the slash");
    free(joined);
    char buf[8];
    lb_check(lb_path_join_buf(buf, sizeof buf, "a/", "b") == 0 && strcmp(buf, "a/b") == 0,
             "lb_path_join_buf does not double the slash either");
    lb_check(lb_path_join_buf(buf, sizeof buf, "abc", "defg") == -1 && buf[0] == '\0',
             "lb_path_join_buf: a path one byte too long is refused and leaves the buffer empty");
    lb_check(lb_path_join_buf(buf, sizeof buf, "abc", "def") == 0 && strcmp(buf, "abc/def") == 0,
             "lb_path_join_buf: a path that just fits");
    int rc = lb_test_finish("test_atomic");
    lb_test_cleanup(dir);
    return rc;
}
