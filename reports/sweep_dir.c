/* A sweep directory read back (see sweep_dir.h). */
#include "reports/sweep_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "attn/lists.h"
#include "attn/status.h"
#include "reports/atomic_file.h"
#include "reports/csv_io.h"
#include "reports/peer_dir.h"
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

int lb_sweep_meta_read(const char *dir, LbMeta *meta)
{
    char *path = lb_path_join(dir, "meta.csv");
    if (!path)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory");
    int rc = lb_meta_read(path, meta);
    if (rc == LB_OK && !lb_meta_is_peer(meta) && (rc = lb_settings_meta_check(meta, path)) != LB_OK)
        lb_meta_free(meta);
    free(path);
    return rc;
}

int lb_sweep_dir_load(const char *dir, LbSweepDir *s)
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
    if (rc == LB_OK && lb_meta_is_peer(&s->meta)) /* its model column holds the peer's names */
        rc = LB_FAIL(LB_ERR_FORMAT,
                     "%s is a result of bench/peer (meta.csv's %s is %s), not of linbench sweep: set it beside a linbench sweep with linbench compare (or plot) LINBENCH_DIR %s",
                     dir, LB_META_TOOL, LB_TOOL_PEER, dir);
    if (rc == LB_OK)
        rc = lb_raw_read_cut(raw, &s->rows, &s->count, &s->raw_cut_line);
    if (rc != LB_OK)
        goto out;
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

void lb_sweep_dir_free(LbSweepDir *s)
{
    free(s->dir);
    lb_meta_free(&s->meta);
    free(s->rows);
    lb_grid_free(&s->grid);
    memset(s, 0, sizeof *s);
}

const char *lb_sweep_meta(const LbSweepDir *s, const char *key, const char *fallback)
{
    const char *v = lb_meta_get(&s->meta, key);
    return v && *v ? v : fallback;
}
