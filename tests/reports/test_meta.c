/* meta.csv: keys set, replaced and read back in order with awkward values (commas, quotes, a
 * newline, leading blanks, empty); a missing key is NULL; a foreign header is refused. */
#include <stdio.h>
#include <string.h>

#include "attn/base/status.h"
#include "reports/csv_io.h"
#include "reports/meta.h"
#include "tests/lib/check.h"
#include "tests/reports/fixture.h"

int main(void)
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
    return lb_test_finish("test_meta");
}
