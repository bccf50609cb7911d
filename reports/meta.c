/* meta.csv, key,value rows (see meta.h). */
#include "reports/meta.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/status.h"
#include "reports/atomic_file.h"
#include "reports/csv_io.h"

static int meta_put(LbMeta *m, const char *key, char *value /* taken */)
{
    for (size_t i = 0; i < m->count; i++) {
        if (strcmp(m->keys[i], key) == 0) {
            free(m->values[i]);
            m->values[i] = value;
            return LB_OK;
        }
    }
    if (m->count == m->cap) {
        const size_t cap = m->cap ? 2 * m->cap : 32;
        char **k = realloc(m->keys, cap * sizeof *k);
        m->keys = k ? k : m->keys;
        char **v = k ? realloc(m->values, cap * sizeof *v) : NULL;
        m->values = v ? v : m->values;
        m->cap = v ? cap : m->cap;
    }
    char *kc = m->count < m->cap ? strdup(key) : NULL;
    if (!kc) {
        free(value);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory setting %s", key);
    }
    m->keys[m->count] = kc;
    m->values[m->count++] = value;
    return LB_OK;
}

int lb_meta_set(LbMeta *m, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (len < 0)
        return LB_FAIL(LB_ERR_INVALID, "cannot format the value of %s", key);
    char *value = malloc((size_t)len + 1);
    if (!value)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory setting %s", key);
    va_start(ap, fmt);
    vsnprintf(value, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return meta_put(m, key, value);
}

const char *lb_meta_get(const LbMeta *m, const char *key)
{
    for (size_t i = 0; i < m->count; i++)
        if (strcmp(m->keys[i], key) == 0)
            return m->values[i];
    return NULL;
}

static int write_rows(FILE *f, const void *ctx)
{
    const LbMeta *m = ctx;
    static const char *const header[2] = {"key", "value"};
    int rc = lb_csv_write_record(f, header, 2);
    for (size_t i = 0; rc == LB_OK && i < m->count; i++) {
        const char *row[2] = {m->keys[i], m->values[i]};
        rc = lb_csv_write_record(f, row, 2);
    }
    return rc;
}

int lb_meta_write(const char *path, const LbMeta *m) { return lb_atomic_write_path(path, write_rows, m); }

int lb_meta_read(const char *path, LbMeta *m)
{
    lb_meta_free(m);
    LbCsvTable t;
    LB_TRY(lb_csv_read_file(path, 0, &t));
    int rc = LB_OK;
    if (t.rows == 0 || t.row[0].count != 2 || strcmp(t.row[0].fields[0], "key") != 0 ||
        strcmp(t.row[0].fields[1], "value") != 0) {
        rc = LB_FAIL(LB_ERR_FORMAT, "%s: header should be key,value", path);
        goto out;
    }
    for (size_t i = 1; i < t.rows; i++) {
        if (t.row[i].count != 2) {
            rc = LB_FAIL(LB_ERR_FORMAT, "%s line %zu: %zu fields: should be 2 (key,value)", path,
                         t.line[i], t.row[i].count);
            goto out;
        }
        /* linbench writes each key once: a second row for it (a hand edit, two files joined)
         * leaves no way to tell which value the run had */
        for (size_t j = 1; j < i; j++)
            if (strcmp(t.row[j].fields[0], t.row[i].fields[0]) == 0) {
                rc = LB_FAIL(LB_ERR_FORMAT, "%s line %zu: key %s again (first on line %zu): should be given once",
                             path, t.line[i], t.row[i].fields[0], t.line[j]);
                goto out;
            }
        char *v = strdup(t.row[i].fields[1]);
        if (!v) {
            rc = LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", path);
            goto out;
        }
        rc = meta_put(m, t.row[i].fields[0], v);
        if (rc != LB_OK)
            goto out;
    }
out:
    lb_csv_table_free(&t);
    if (rc != LB_OK)
        lb_meta_free(m);
    return rc;
}

void lb_meta_free(LbMeta *m)
{
    for (size_t i = 0; i < m->count; i++) {
        free(m->keys[i]);
        free(m->values[i]);
    }
    free(m->keys);
    free(m->values);
    memset(m, 0, sizeof *m);
}

int lb_meta_is_predicted(const LbMeta *m)
{
    const char *v = lb_meta_get(m, LB_META_SOURCE);
    return v && strcmp(v, LB_SOURCE_PREDICTED) == 0;
}
