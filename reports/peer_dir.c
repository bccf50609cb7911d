/* A bench/peer result directory read back (see peer_dir.h). */
#include "reports/peer_dir.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/status.h"
#include "reports/atomic_file.h"
#include "reports/raw.h"

/* The peer's attentions that are not models of linbench's table: exact softmax attention by
 * another kernel, the baseline's work, and the kernels each may name. */
static const struct {
    const char *name;
    const char *backends[5];
} peer_only[] = {
    {"sdpa", {"flash", "efficient", "cudnn", "math", NULL}},
};
#define PEER_ONLY_COUNT (sizeof peer_only / sizeof peer_only[0])
#define COMPILED "compiled"

static int in_list(const char *const *list, const char *word)
{
    for (; *list; list++)
        if (strcmp(*list, word) == 0)
            return 1;
    return 0;
}

int lb_peer_model_parse(const char *name, LbPeerModel *m, char *should, size_t size)
{
    memset(m, 0, sizeof *m);
    snprintf(should, size,
             "a bench/peer model: torch-NAME[-BACKEND][-compiled], NAME a linbench model or sdpa (with flash, "
             "efficient, cudnn or math)");
    const size_t prefix = strlen(LB_PEER_PREFIX);
    if (strncmp(name, LB_PEER_PREFIX, prefix) != 0 || strlen(name) >= sizeof m->name)
        return -1;
    snprintf(m->name, sizeof m->name, "%s", name);
    char rest[64];
    snprintf(rest, sizeof rest, "%s", name + prefix);
    char *save = NULL;
    const char *word = strtok_r(rest, "-", &save);
    if (!word || strlen(word) >= sizeof m->attention)
        return -1;
    snprintf(m->attention, sizeof m->attention, "%s", word);
    const char *const *backends = NULL;
    if (lb_model_parse(word, &m->work) != 0) {
        for (size_t i = 0; i < PEER_ONLY_COUNT && !backends; i++)
            if (strcmp(word, peer_only[i].name) == 0)
                backends = peer_only[i].backends;
        if (!backends)
            return -1;
        m->exact_baseline = 1;
        m->work = LB_MODEL_STANDARD; /* exact softmax attention: the baseline's work */
        word = strtok_r(NULL, "-", &save);
        if (!word || !in_list(backends, word))
            return -1;
        snprintf(m->backend, sizeof m->backend, "%s", word);
    }
    word = strtok_r(NULL, "-", &save);
    if (word && strcmp(word, COMPILED) == 0) {
        m->compiled = 1;
        word = strtok_r(NULL, "-", &save);
    }
    return word ? -1 : 0; /* nothing after the last part */
}

int lb_peer_same_work(const LbPeerModel *pm, LbModelKind m)
{
    return m == pm->work || (pm->exact_baseline && lb_model_baseline(m) != 0);
}

int lb_meta_is_peer(const LbMeta *meta)
{
    const char *tool = lb_meta_get(meta, LB_META_TOOL);
    return tool && strcmp(tool, LB_TOOL_PEER) == 0;
}

int lb_result_dir_is_peer(const char *dir)
{
    char *path = lb_path_join(dir, "meta.csv");
    if (!path)
        return -1;
    LbMeta meta;
    memset(&meta, 0, sizeof meta);
    int rc = lb_meta_read(path, &meta);
    free(path);
    int peer = rc == LB_OK ? lb_meta_is_peer(&meta) : -1;
    lb_meta_free(&meta);
    return peer;
}

/* The model column of a peer's raw.csv: each name parsed once and given its variant's index. */
typedef struct Names {
    LbPeerDir *p;
    size_t cap;
    int nomem;
} Names;

static int peer_name(const char *name, size_t row, void *ctx, LbModelKind *model, char *should, size_t size)
{
    Names *c = ctx;
    LbPeerDir *p = c->p;
    size_t v = 0;
    while (v < p->nvariants && strcmp(p->variants[v].name, name) != 0)
        v++;
    if (v == p->nvariants) {
        LbPeerModel m;
        if (lb_peer_model_parse(name, &m, should, size) != 0)
            return -1;
        if (p->nvariants == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 8;
            LbPeerModel *grown = realloc(p->variants, cap * sizeof *grown);
            if (!grown) {
                c->nomem = 1;
                snprintf(should, size, "a name that fits in memory");
                return -1;
            }
            p->variants = grown;
            c->cap = cap;
        }
        p->variants[p->nvariants++] = m;
    }
    /* rows come in order, one call each: the index array grows with them */
    size_t *grown = realloc(p->variant, (row + 1) * sizeof *grown);
    if (!grown) {
        c->nomem = 1;
        snprintf(should, size, "a row that fits in memory");
        return -1;
    }
    p->variant = grown;
    p->variant[row] = v;
    *model = p->variants[v].work;
    return 0;
}

int lb_peer_dir_load(const char *dir, LbPeerDir *p)
{
    memset(p, 0, sizeof *p);
    char *raw = lb_path_join(dir, "raw.csv"), *meta = lb_path_join(dir, "meta.csv");
    p->dir = strdup(dir);
    int rc = LB_OK;
    if (!raw || !meta || !p->dir) {
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory");
        goto out;
    }
    rc = lb_meta_read(meta, &p->meta);
    if (rc == LB_OK && !lb_meta_is_peer(&p->meta))
        rc = LB_FAIL(LB_ERR_FORMAT, "%s is not a result of bench/peer (its meta.csv's %s is not %s)", dir,
                     LB_META_TOOL, LB_TOOL_PEER);
    if (rc == LB_OK) {
        Names names = {p, 0, 0};
        rc = lb_raw_read_named(raw, peer_name, &names, &p->rows, &p->count, NULL);
        if (rc != LB_OK && names.nomem)
            rc = LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", raw);
    }
out:
    free(raw);
    free(meta);
    if (rc != LB_OK)
        lb_peer_dir_free(p);
    return rc;
}

void lb_peer_dir_free(LbPeerDir *p)
{
    free(p->dir);
    lb_meta_free(&p->meta);
    free(p->rows);
    free(p->variant);
    free(p->variants);
    memset(p, 0, sizeof *p);
}

LbCellResult *lb_peer_rows_of(const LbPeerDir *p, size_t v, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0; i < p->count; i++)
        n += p->variant[i] == v;
    *count = 0;
    if (n == 0)
        return NULL;
    LbCellResult *rows = malloc(n * sizeof *rows);
    if (!rows) {
        *count = SIZE_MAX;
        return NULL;
    }
    for (size_t i = 0; i < p->count; i++)
        if (p->variant[i] == v)
            rows[(*count)++] = p->rows[i];
    return rows;
}
