/* raw.csv: rows written by lb_raw_append read back field for field (through libcsv, both by
 * lb_raw_read and by a plain parse of the file), a kill -9's partial last line ignored by the
 * reader and dropped by a resumed writer, and a foreign header refused. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/measure/clock_events.h"
#include <time.h>

#include "attn/base/status.h"
#include "reports/csv_io.h"
#include "reports/raw.h"
#include "tests/lib/check.h"
#include "tests/reports/fixture.h"

static double rand_real(double lo, double hi)
{
    return lo + (hi - lo) * ((double)(lb_test_u64() >> 11) / 9007199254740992.0);
}

static LbCellResult standard_row(int64_t n)
{
    LbCellResult r;
    memset(&r, 0, sizeof r);
    r.model = LB_MODEL_STANDARD;
    r.n = n;
    r.dtype = LB_DTYPE_FP16;
    r.batch = (int64_t)(lb_test_u64() % 500) + 1;
    r.planned_bytes = (int64_t)(lb_test_u64() % (1ull << 40));
    r.peak_bytes = r.planned_bytes;
    r.min_ms = rand_real(0.01, 100);
    r.median_ms = r.min_ms * rand_real(1, 1.1);
    r.max_ms = r.median_ms * rand_real(1, 1.5);
    r.ms_per_seq = r.median_ms / (double)r.batch;
    r.tokens_per_s = (double)(r.batch * n) / (r.median_ms / 1e3);
    r.tflop_per_s = rand_real(0.001, 900);
    r.passes = (int)(lb_test_u64() % 50) + 5;
    r.sm_clock_start_mhz = 1980;
    r.sm_clock_end_mhz = 1755;
    r.clock_events_known = 1;
    r.clock_events = LB_CLOCK_EVENT_SW_POWER_CAP | LB_CLOCK_EVENT_HW_THERMAL;
    r.slowdown = 1;
    r.power_w = rand_real(50, 700);
    r.energy_j_per_seq = r.power_w * r.ms_per_seq / 1e3;
    r.status = LB_CELL_OK;
    snprintf(r.error, sizeof r.error, "ok");
    /* where it ran: a UUID as nvidia-smi prints it and a host name, random so a swap shows */
    uint64_t u = lb_test_u64();
    snprintf(r.device_uuid, sizeof r.device_uuid, "GPU-%08x-%04x-%04x-%04x-%012llx", (unsigned)(u >> 32),
             (unsigned)(u >> 16) & 0xffff, (unsigned)u & 0xffff, (unsigned)(lb_test_u64() & 0xffff),
             (unsigned long long)(lb_test_u64() & 0xffffffffffffull));
    snprintf(r.host, sizeof r.host, "node-%llu.cluster", (unsigned long long)(lb_test_u64() % 100000));
    return r;
}

static LbCellResult linformer_row(int64_t n, int64_t k)
{
    LbCellResult r = standard_row(n);
    r.model = LB_MODEL_LINFORMER;
    r.k = k;
    r.sharing = LB_SHARE_KV;
    r.order = LB_ORDER_LATE;
    r.dtype = LB_DTYPE_BF16;
    r.clock_events_known = 0;
    r.clock_events = 0;
    r.slowdown = 0;
    r.sm_clock_end_mhz = 1980;
    r.power_w = r.energy_j_per_seq = NAN; /* no energy counter: both empty */
    snprintf(r.energy_why, sizeof r.energy_why, "no energy counter");
    return r;
}

static LbCellResult oom_row(int64_t n)
{
    LbCellResult r = fx_row(LB_MODEL_STANDARD, n, 0, 0, 0, LB_CELL_OOM);
    r.dtype = LB_DTYPE_FP32;
    r.planned_bytes = 25769803776;
    r.power_w = r.energy_j_per_seq = NAN;
    return r;
}

static LbCellResult error_row(int64_t n, int64_t k)
{
    LbCellResult r = oom_row(n);
    r.model = LB_MODEL_LINFORMER;
    r.k = k;
    r.sharing = LB_SHARE_NONE;
    r.order = LB_ORDER_LATE;
    r.status = LB_CELL_ERROR;
    /* commas and quotes: libcsv must quote them on the way out and undo it on the way in */
    snprintf(r.error, sizeof r.error, "cuBLAS failed: \"CUBLAS_STATUS_EXECUTION_FAILED\", code 13");
    return r;
}

static int same_row(const LbCellResult *a, const LbCellResult *b, size_t i)
{
    int ok = 1;
#define SAME_I(field)                                                                             \
    ok &= lb_check(a->field == b->field, "row %zu: " #field " %lld read back as %lld", i,            \
                   (long long)a->field, (long long)b->field)
/* the same double, or NaN (empty) on both sides */
#define SAME_D(field)                                                                             \
    ok &= lb_check(a->field == b->field || (isnan(a->field) && isnan(b->field)),                  \
                   "row %zu: " #field " %.17g read back as %.17g", i, a->field, b->field)
    SAME_I(model);
    SAME_I(n);
    SAME_I(k);
    SAME_I(sharing);
    SAME_I(order);
    SAME_I(dtype);
    SAME_I(batch);
    SAME_I(planned_bytes);
    SAME_I(peak_bytes);
    SAME_D(median_ms);
    SAME_D(min_ms);
    SAME_D(max_ms);
    SAME_D(ms_per_seq);
    SAME_D(tokens_per_s);
    SAME_D(tflop_per_s);
    SAME_I(passes);
    SAME_I(sm_clock_start_mhz);
    SAME_I(sm_clock_end_mhz);
    SAME_I(clock_events_known);
    SAME_I(clock_events);
    SAME_I(slowdown);
    SAME_I(status);
    SAME_D(power_w);
    SAME_D(energy_j_per_seq);
#undef SAME_I
#undef SAME_D
    ok &= lb_check(strcmp(a->error, b->error) == 0, "row %zu: status \"%s\" read back as \"%s\"", i,
                   a->error, b->error);
    ok &= lb_check(strcmp(a->device_uuid, b->device_uuid) == 0 && strcmp(a->host, b->host) == 0,
                   "row %zu: device_uuid \"%s\" host \"%s\" read back as \"%s\" \"%s\"", i, a->device_uuid, a->host,
                   b->device_uuid, b->host);
    return ok;
}

static size_t file_size(const char *path)
{
    size_t len = 0;
    free(lb_slurp_len(path, &len));
    return len;
}

/* rows written to path by a writer opened with `append`; the first failing status. */
static int write_rows(const char *path, int append, const LbCellResult *rows, size_t count)
{
    LbRawWriter *w = NULL;
    int rc = lb_raw_open(path, append, &w);
    for (size_t i = 0; rc == LB_OK && i < count; i++)
        rc = lb_raw_append(w, &rows[i]);
    lb_raw_close(w);
    return rc;
}

/* path reads back through lb_raw_read as exactly `want`, field for field. */
static void read_back(const char *path, const LbCellResult *want, size_t count, const char *what)
{
    LbCellResult *got = NULL;
    size_t n = 0;
    const int rc = lb_raw_read(path, &got, &n);
    if (lb_check(rc == LB_OK && n == count, "%s: lb_raw_read = %d, %zu rows: should be %zu", what, rc, n, count))
        for (size_t i = 0; i < n; i++)
            same_row(&want[i], &got[i], i);
    free(got);
}

/* bench/peer writes raw.csv too (lbpeer/resultdir.py's RAW_COLUMNS): its names must be these. */
static void same_as_peer(const char *src, const LbCsvRow *header)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/bench/peer/lbpeer/resultdir.py", src);
    char *text = lb_slurp(path);
    const char *p = text ? strstr(text, "RAW_COLUMNS = (") : NULL;
    lb_check(p != NULL, "%s: no RAW_COLUMNS = (...)", path);
    size_t c = 0;
    for (const char *end = p ? strchr(p, ')') : NULL; p && end && (p = strchr(p, '"')) && p < end; c++) {
        const char *close = strchr(p + 1, '"');
        const int w = close ? (int)(close - p - 1) : 0;
        lb_check(c < header->count && (int)strlen(header->fields[c]) == w && strncmp(header->fields[c], p + 1, (size_t)w) == 0,
                 "peer column %zu is \"%.*s\": raw.csv's is \"%s\"", c, w, p + 1, c < header->count ? header->fields[c] : "");
        p = close ? close + 1 : end;
    }
    lb_check(c == header->count, "the peer has %zu raw.csv columns: linbench %zu", c, header->count);
    free(text);
}

int main(int argc, char **argv)
{
    lb_test_init("test_raw");

    char *dir = lb_test_tempdir("raw");
    char path[4200], other[4200];
    snprintf(path, sizeof path, "%s/raw.csv", dir);

    /* Standard model, Linformer, OOM, error. */
    LbCellResult want[5] = {standard_row(512), linformer_row(512, 128), oom_row(65536),
                            error_row(4096, 256), linformer_row(4096, 1024)};
    lb_check(write_rows(path, 0, want, 4) == LB_OK, "4 rows written: %s", lb_error_message());
    read_back(path, want, 4, "4 rows");

    /* The file itself, through libcsv: the header METHOD.md fixes and the empty fields (a model
     * without a k axis: below, for every model). */
    LbCsvTable t;
    int rc = lb_csv_read_file(path, 0, &t);
    lb_check(rc == LB_OK && t.rows == 5, "raw.csv parses into %zu records: should be 5", t.rows);
    if (rc == LB_OK && t.rows == 5) {
        lb_check(t.row[0].count == LB_RAW_COLUMNS, "header has %zu fields", t.row[0].count);
        same_as_peer(argc > 1 ? argv[1] : ".", &t.row[0]);
        lb_check(strcmp(t.row[2].fields[2], "128") == 0 && strcmp(t.row[2].fields[3], "kv") == 0 &&
                     strcmp(t.row[2].fields[4], "late") == 0 && strcmp(t.row[2].fields[5], "bf16") == 0,
                 "linformer row: k=%s sharing=%s order=%s dtype=%s", t.row[2].fields[2],
                 t.row[2].fields[3], t.row[2].fields[4], t.row[2].fields[5]);
        lb_check(strcmp(t.row[3].fields[6], "0") == 0, "OOM row batch \"%s\": should be 0",
                 t.row[3].fields[6]);
        int empty = 1;
        for (int c = 9; c <= 18; c++)
            empty &= t.row[3].fields[c][0] == '\0';
        lb_check(empty, "OOM row: timing, passes, clock and clock-event fields should be empty");
        const char *const status[5] = {"status", "ok", "ok", "OOM", want[3].error};
        for (int i = 1; i < 5; i++)
            lb_check(strcmp(t.row[i].fields[LB_RAW_COLUMNS - 1], status[i]) == 0, "row %d status \"%s\": should be \"%s\"",
                     i, t.row[i].fields[LB_RAW_COLUMNS - 1], status[i]);
    }
    lb_csv_table_free(&t);

    /* kill -9 in the middle of a row: half a row, no newline; the reader ignores it, a resumed
     * writer drops it. */
    size_t before = file_size(path);
    fx_write(path, "a", "linformer,8192,512,layerwise,ea");
    read_back(path, want, 4, "with a partial last line");
    lb_check(write_rows(path, 1, NULL, 0) == LB_OK, "lb_raw_open(append) after a partial line: %s", lb_error_message());
    lb_check(file_size(path) == before, "resume left %zu bytes: should drop the partial line back to %zu",
             file_size(path), before);
    lb_check(write_rows(path, 1, &want[4], 1) == LB_OK, "append after resume: %s", lb_error_message());
    read_back(path, want, 5, "after resume");

    /* A header cut short (killed while creating the file): resume starts it again; append=0
     * truncates. */
    snprintf(other, sizeof other, "%s/short.csv", dir);
    fx_write(other, "a", "model,n,k,shar");
    lb_check(write_rows(other, 1, want, 1) == LB_OK, "one row appended on a cut header: %s", lb_error_message());
    read_back(other, want, 1, "cut header then one row");
    write_rows(other, 0, NULL, 0);
    read_back(other, NULL, 0, "after append=0");

    /* A foreign header. */
    LbRawWriter *w = NULL;
    LbCellResult *got = NULL;
    size_t count = 0;
    snprintf(other, sizeof other, "%s/other.csv", dir);
    fx_write(other, "a", "model,n,x\nstandard,512,\n");
    lb_error_clear();
    rc = lb_raw_open(other, 1, &w);
    lb_check(rc == LB_ERR_FORMAT && w == NULL, "lb_raw_open(append) on another header = %d: should be LB_ERR_FORMAT", rc);
    lb_error_clear();
    rc = lb_raw_read(other, &got, &count);
    lb_check(rc == LB_ERR_FORMAT, "lb_raw_read on another header = %d: should be LB_ERR_FORMAT", rc);

    lb_error_clear();
    rc = lb_raw_read("/nonexistent/raw.csv", &got, &count);
    lb_check(rc == LB_ERR_IO, "missing file: rc %d: should be LB_ERR_IO", rc);

    /* Every model kind the table has: k, sharing and order written for a model with a k axis and
     * empty for the others, and each row read back whole. */
    snprintf(other, sizeof other, "%s/models.csv", dir);
    LbCellResult kinds[LB_MODEL_COUNT];
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        LbModelKind parsed;
        lb_check(lb_model_parse(lb_model_name((LbModelKind)m), &parsed) == 0 && parsed == (LbModelKind)m,
                 "model %d: its name \"%s\" parses back", m, lb_model_name((LbModelKind)m));
        kinds[m] = linformer_row(1024, (int64_t)(lb_test_u64() % 1000) + 1);
        kinds[m].model = (LbModelKind)m;
        if (!lb_model_has_k((LbModelKind)m)) {
            kinds[m].k = 0;
            kinds[m].sharing = (LbSharing)0;
            kinds[m].order = (LbOrder)0;
        }
    }
    lb_check(write_rows(other, 0, kinds, LB_MODEL_COUNT) == LB_OK, "a row of every model written: %s", lb_error_message());
    read_back(other, kinds, LB_MODEL_COUNT, "every model kind");
    rc = lb_csv_read_file(other, 0, &t);
    for (size_t i = 1; rc == LB_OK && i < t.rows && i <= LB_MODEL_COUNT; i++) {
        int has_k = lb_model_has_k(kinds[i - 1].model);
        int empty = t.row[i].fields[2][0] == '\0' && t.row[i].fields[3][0] == '\0' && t.row[i].fields[4][0] == '\0';
        int full = t.row[i].fields[2][0] && t.row[i].fields[3][0] && t.row[i].fields[4][0];
        lb_check(has_k ? full : empty, "%s row: k \"%s\" sharing \"%s\" order \"%s\": should be %s", t.row[i].fields[0],
                 t.row[i].fields[2], t.row[i].fields[3], t.row[i].fields[4], has_k ? "written" : "empty");
    }
    lb_csv_table_free(&t);
    /* raw.csv's older layouts read, the columns they lack empty (energy NaN), and a resume appends
     * rows in the file's own layout (the measured energy has nowhere to go: the writer says so). */
#define OLD_COLUMNS "model,n,k,sharing,order,dtype,batch,planned_bytes,peak_bytes,median_ms,min_ms,max_ms," \
                    "ms_per_seq,tokens_per_s,tflop_per_s,passes,sm_clock_start_mhz,sm_clock_end_mhz,clock_events,slowdown"
    const struct {
        const char *text, *uuid;
        int has_host;
        size_t width;
    } old[] = {
        {OLD_COLUMNS ",status\nstandard,512,,,,fp16,7,100,90,2,1,3,0.25,2048,1.5,5,,,,0,ok\n", "", 0, LB_RAW_COLUMNS - 4},
        {OLD_COLUMNS ",device_uuid,host,status\nstandard,512,,,,fp16,7,100,90,2,1,3,0.25,2048,1.5,5,,,,0,GPU-1,h,ok\n",
         "GPU-1", 1, LB_RAW_COLUMNS - 2},
    };
#undef OLD_COLUMNS
    snprintf(other, sizeof other, "%s/old.csv", dir);
    for (size_t o = 0; o < sizeof old / sizeof old[0]; o++) {
        remove(other);
        fx_write(other, "a", old[o].text);
        rc = write_rows(other, 1, want, 1);
        lb_check(rc == LB_OK && !lb_raw_has_energy_columns(other), "layout %zu: a row appended = %d (%s), energy %d", o,
                 rc, lb_error_message(), lb_raw_has_energy_columns(other));
        rc = lb_raw_read(other, &got, &count);
        lb_check(rc == LB_OK && count == 2 && got[0].batch == 7 && got[0].peak_bytes == 90 && got[0].median_ms == 2.0 &&
                     got[0].status == LB_CELL_OK && strcmp(got[0].device_uuid, old[o].uuid) == 0 &&
                     got[1].batch == want[0].batch && strcmp(got[1].host, old[o].has_host ? want[0].host : "") == 0 &&
                     isnan(got[0].power_w) && isnan(got[1].energy_j_per_seq),
                 "layout %zu: rc %d (%s), %zu rows, uuid \"%s\"", o, rc, lb_error_message(), count,
                 count ? got[0].device_uuid : "");
        free(got);
        rc = lb_csv_read_file(other, 0, &t);
        lb_check(rc == LB_OK && t.rows == 3 && t.row[2].count == old[o].width,
                 "layout %zu after an append: %zu lines, the new one %zu fields: should be 3 and %zu", o, t.rows,
                 rc == LB_OK && t.rows > 2 ? t.row[2].count : 0, old[o].width);
        if (rc == LB_OK)
            lb_csv_table_free(&t);
    }
    lb_check(lb_raw_has_energy_columns(path), "this version's raw.csv has the energy columns");

    /* A bad row is refused, naming its line, column and what the column holds: an unknown model
     * (with the names the table knows), energy that is not both columns, positive, on an ok row. */
    char last_model[64];
    snprintf(last_model, sizeof last_model, "%s", lb_model_name((LbModelKind)(LB_MODEL_COUNT - 1)));
    const struct {
        const char *row, *words, *more;
    } bad[] = {
        {"standard,zero,,,,fp16,1,1,1,1,1,1,1,1,1,5,,,,0,,,,,ok\n", "invalid n \"zero\"", "line 3"},
        {"nosuchmodel,512,,,,fp16,1,1,1,1,1,1,1,1,1,5,,,,0,,,,,ok\n", "invalid model \"nosuchmodel\"", last_model},
        {"standard,512,,,,fp16,7,100,90,2,1,3,0.25,2048,1.5,5,,,,0,300,,,,ok\n", "energy_j_per_seq", "line 3"},
        {"standard,512,,,,fp16,7,100,90,2,1,3,0.25,2048,1.5,5,,,,0,,0.1,,,ok\n", "power_w", "line 3"},
        {"standard,512,,,,fp16,7,100,90,2,1,3,0.25,2048,1.5,5,,,,0,-3,0.1,,,ok\n", "power_w", "line 3"},
        {"standard,512,,,,fp16,0,100,0,,,,,,,,,,,0,300,0.1,,,OOM\n", "power_w", "not ok"},
        /* hand-edited times: strtod reads nan and inf, which made an "infx" speedup or an ERR cell */
        {"standard,512,,,,fp16,7,100,90,2,1,3,inf,2048,1.5,5,,,,0,,,,,ok\n", "invalid ms_per_seq \"inf\"", "finite number >= 0"},
        {"standard,512,,,,fp16,7,100,90,nan,1,3,0.25,2048,1.5,5,,,,0,,,,,ok\n", "invalid median_ms \"nan\"", "line 3"},
        {"standard,512,,,,fp16,7,100,90,2,1,3,-0.25,2048,1.5,5,,,,0,,,,,ok\n", "invalid ms_per_seq \"-0.25\"", "line 3"},
        {"standard,512,,,,fp16,7,100,90,2,-1,3,0.25,2048,1.5,5,,,,0,,,,,ok\n", "invalid min_ms \"-1\"", "line 3"},
        {"standard,512,,,,fp16,7,100,90,2,1,INF,0.25,2048,1.5,5,,,,0,,,,,ok\n", "invalid max_ms \"INF\"", "line 3"},
        {"standard,512,,,,fp16,7,100,90,2,1,3,0.25,-inf,1.5,5,,,,0,,,,,ok\n", "invalid tokens_per_s \"-inf\"", "line 3"},
        {"standard,512,,,,fp16,7,100,90,2,1,3,0.25,2048,-1.5,5,,,,0,,,,,ok\n", "invalid tflop_per_s \"-1.5\"", "number >= 0"},
    };
    snprintf(other, sizeof other, "%s/bad.csv", dir);
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        write_rows(other, 0, want, 1);
        fx_write(other, "a", bad[b].row);
        lb_error_clear();
        rc = lb_raw_read(other, &got, &count);
        lb_check(rc == LB_ERR_FORMAT && strstr(lb_error_message(), bad[b].words) && strstr(lb_error_message(), bad[b].more),
                 "bad row %zu: rc %d, message \"%s\": should name %s and %s", b, rc, lb_error_message(), bad[b].words,
                 bad[b].more);
    }

    lb_test_cleanup(dir);
    return lb_test_finish("test_raw");
}
