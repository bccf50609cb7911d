/* A result directory read back (see sweep_dir.h). */
#include "reports/sweep_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "attn/base/lists.h"
#include "attn/base/status.h"
#include "reports/atomic_file.h"
#include "reports/breakdown_csv.h"
#include "reports/raw.h"
#include "reports/settings.h"

int lb_sweep_dir_check(const char *dir, char *why, size_t size)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(why, size, "%s", strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, size, "not a directory");
        return -1;
    }
    static const char *const files[2] = {"raw.csv", "meta.csv"};
    for (int i = 0; i < 2; i++) {
        char *path = lb_path_join(dir, files[i]);
        int missing = !path || stat(path, &st) != 0;
        free(path);
        if (missing) {
            snprintf(why, size, "no %s in it", files[i]);
            return -1;
        }
    }
    return 0;
}

static int meta_is_peer(const LbMeta *meta)
{
    const char *tool = lb_meta_get(meta, LB_META_TOOL);
    return tool && strcmp(tool, LB_TOOL_PEER) == 0;
}

int lb_sweep_meta_read(const char *dir, LbMeta *meta)
{
    char *path = lb_path_join(dir, "meta.csv");
    if (!path)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory");
    int rc = lb_meta_read(path, meta);
    if (rc == LB_OK && !meta_is_peer(meta) && (rc = lb_settings_meta_check(meta, path)) != LB_OK)
        lb_meta_free(meta);
    free(path);
    return rc;
}

/* The model column of a peer's raw.csv: each name parsed once and given its variant's index. */
static int peer_name(const char *name, size_t row, void *ctx, LbModelKind *model, char *should, size_t size)
{
    LbSweepDir *p = ctx;
    size_t v = 0;
    while (v < p->nvariants && strcmp(p->variants[v].name, name) != 0)
        v++;
    if (v == p->nvariants) {
        LbPeerModel m;
        if (lb_peer_model_parse(name, &m, should, size) != 0)
            return -1;
        LbPeerModel *grown = realloc(p->variants, (v + 1) * sizeof *grown);
        if (!grown) {
            snprintf(should, size, "a name that fits in memory");
            return -1;
        }
        p->variants = grown;
        p->variants[p->nvariants++] = m;
    }
    size_t *rows = realloc(p->variant, (row + 1) * sizeof *rows); /* rows come in order, one call each */
    if (!rows) {
        snprintf(should, size, "a row that fits in memory");
        return -1;
    }
    p->variant = rows;
    p->variant[row] = v;
    *model = p->variants[v].work;
    return 0;
}

int lb_result_load(const char *dir, LbSweepDir *s)
{
    memset(s, 0, sizeof *s);
    int64_t *n = NULL, *k = NULL;
    size_t nn = 0, nk = 0;
    char *raw = lb_path_join(dir, "raw.csv");
    s->dir = strdup(dir);
    int rc = LB_OK;
    if (!raw || !s->dir) {
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory");
        goto out;
    }
    rc = lb_sweep_meta_read(dir, &s->meta);
    if (rc != LB_OK)
        goto out;
    s->kind = meta_is_peer(&s->meta) ? LB_RESULT_PEER
              : lb_meta_is_predicted(&s->meta) ? LB_RESULT_PREDICTED : LB_RESULT_SWEEP;
    rc = lb_raw_read_named(raw, s->kind == LB_RESULT_PEER ? peer_name : NULL, s, &s->rows, NULL, &s->count,
                           &s->raw_cut_line);
    if (rc != LB_OK)
        goto out;
    /* breakdown.csv read here, where raw.csv is: one that does not read is the directory's fault
     * (exit 2) before compare, plot or merge prints or writes anything */
    LbBreakdownRecord *recs = NULL;
    size_t nrecs = 0;
    if (s->kind != LB_RESULT_PEER && (rc = lb_breakdown_read(dir, 1, &recs, &nrecs)) != LB_OK)
        goto out;
    free(recs);
    /* The grid the sweep meant to fill, so cells not measured yet show as NA. */
    if (lb_parse_list(lb_settings_meta_value(&s->meta, LB_SET_N), 1, INT64_MAX, &n, &nn) ||
        lb_parse_list(lb_settings_meta_value(&s->meta, LB_SET_K), 1, INT64_MAX, &k, &nk)) {
        free(n);
        free(k);
        n = k = NULL;
        nn = nk = 0;
    }
    rc = lb_grid_from_raw(s->rows, s->count, n, nn, k, nk, &s->grid);
out:
    free(n);
    free(k);
    free(raw);
    if (rc != LB_OK)
        lb_sweep_dir_free(s);
    return rc;
}

int lb_sweep_dir_load(const char *dir, LbSweepDir *s)
{
    LB_TRY(lb_result_load(dir, s));
    if (s->kind != LB_RESULT_PEER)
        return LB_OK;
    lb_sweep_dir_free(s);
    return LB_FAIL(LB_ERR_FORMAT,
                   "%s is a result of bench/peer (meta.csv's %s is %s), not of linbench sweep: set it beside a linbench sweep with linbench compare (or plot) LINBENCH_DIR %s",
                   dir, LB_META_TOOL, LB_TOOL_PEER, dir);
}

void lb_sweep_dir_free(LbSweepDir *s)
{
    free(s->dir);
    lb_meta_free(&s->meta);
    free(s->rows);
    free(s->variant);
    free(s->variants);
    lb_grid_free(&s->grid);
    memset(s, 0, sizeof *s);
}

const char *lb_sweep_meta(const LbSweepDir *s, const char *key, const char *fallback)
{
    const char *v = lb_meta_get(&s->meta, key);
    return v && *v ? v : fallback;
}

int lb_sweep_is_train(const LbSweepDir *s)
{
    const char *v = lb_settings_meta_value(&s->meta, LB_SET_PASS);
    return v && strcmp(v, "train") == 0;
}

const LbCellResult *lb_result_row(const LbSweepDir *s, size_t v, LbModelKind model, int64_t n, int64_t k)
{
    const LbCellResult *found = NULL;
    const int has_k = lb_model_has_k(model);
    for (size_t i = 0; i < s->count; i++)
        if ((!s->variant || s->variant[i] == v) && s->rows[i].model == model && s->rows[i].n == n &&
            (!has_k || s->rows[i].k == k))
            found = &s->rows[i];
    return found;
}
