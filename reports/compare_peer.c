/* linbench compare of a linbench sweep against bench/peer's result (see compare_peer.h). */
#include "reports/compare_peer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn/lists.h"
#include "attn/sizes.h"
#include "attn/status.h"
#include "reports/compare.h"
#include "reports/csv_io.h"
#include "reports/grid.h"
#include "reports/settings.h"
#include "reports/speedups.h"

/* --- what the two ran ----------------------------------------------------------------------- */

/* A recorded setting of either side, through the settings table (a key missing from an older
 * meta.csv reads as what it meant then); "" when it has no value. */
static const char *setting(const LbMeta *m, LbSettingId id)
{
    const char *v = lb_settings_meta_value(m, id);
    return v ? v : "";
}

/* What each side stored: storage_dtype, or dtype where a meta.csv has no storage_dtype. */
static const char *storage(const LbMeta *m)
{
    const char *v = lb_meta_get(m, "storage_dtype");
    return v && *v ? v : setting(m, LB_SET_DTYPE);
}

int lb_compare_peer_check(const LbSweepDir *lin, const LbPeerDir *peer)
{
    if (strcmp(storage(&lin->meta), storage(&peer->meta)) != 0)
        return LB_FAIL(LB_ERR_FORMAT,
                       "not the same work: %s stored %s and %s %s: compare needs both sides to run one model",
                       lin->dir, storage(&lin->meta), peer->dir, storage(&peer->meta));
    static const LbSettingId shape[] = {LB_SET_LAYERS, LB_SET_DMODEL, LB_SET_HEADS, LB_SET_FFN, LB_SET_VOCAB};
    const int i = lb_settings_first_difference(&lin->meta, &peer->meta, shape, sizeof shape / sizeof shape[0]);
    if (i < 0)
        return LB_OK;
    return LB_FAIL(LB_ERR_FORMAT, "not the same work: %s ran %s %s and %s %s %s: compare needs both sides to run one model",
                   lin->dir, lb_settings[shape[i]].key, setting(&lin->meta, shape[i]), peer->dir,
                   lb_settings[shape[i]].key, setting(&peer->meta, shape[i]));
}

/* The host that measured a result's rows ("" when none says), for a CPU whose device name is no
 * model of hardware. */
static const char *rows_host(const LbCellResult *rows, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (rows[i].host[0])
            return rows[i].host;
    return "";
}

typedef struct Difference {
    const char *what, *x, *y; /* linbench's value, the peer's */
} Difference;

/* "differ: ..." or "same: ...": what of the run is not the same on both sides. */
static void print_differences(FILE *out, const char *item, const LbSweepDir *lin, const LbPeerDir *peer)
{
    const LbMeta *a = &lin->meta, *b = &peer->meta;
    Difference diff[8];
    int nd = 0;
    const char *dev_a = setting(a, LB_SET_DEVICE), *dev_b = setting(b, LB_SET_DEVICE);
    if (strcmp(dev_a, dev_b) != 0) {
        diff[nd++] = (Difference){"device", dev_a, dev_b};
    } else if (strcmp(dev_a, "cpu") == 0) { /* one CPU or two: the hosts say */
        const char *h_a = rows_host(lin->rows, lin->count), *h_b = rows_host(peer->rows, peer->count);
        if (*h_a && *h_b && strcmp(h_a, h_b) != 0)
            diff[nd++] = (Difference){"host", h_a, h_b};
    } else {
        const char *n_a = lb_sweep_meta(lin, "device_name", "?"), *n_b = lb_meta_get(b, "device_name");
        if (!n_b || strcmp(n_a, n_b) != 0)
            diff[nd++] = (Difference){"device_name", n_a, n_b ? n_b : "?"};
    }
    static const LbSettingId ids[] = {LB_SET_DTYPE, LB_SET_TF32, LB_SET_SHARING, LB_SET_ORDER};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        const char *x = setting(a, ids[i]), *y = setting(b, ids[i]);
        if (strcmp(x, y) != 0)
            diff[nd++] = (Difference){lb_settings[ids[i]].key, x, y};
    }
    char budget[2][48];
    const char *bb[2] = {lb_meta_get(a, "memory_budget_bytes"), lb_meta_get(b, "memory_budget_bytes")};
    for (int s = 0; s < 2; s++) {
        long long v;
        if (bb[s] && lb_csv_parse_int64(bb[s], &v) == 0 && v > 0)
            lb_format_size((uint64_t)v, budget[s], sizeof budget[s]);
        else
            snprintf(budget[s], sizeof budget[s], "?");
    }
    if (strcmp(budget[0], budget[1]) != 0)
        diff[nd++] = (Difference){"memory budget", budget[0], budget[1]};
    if (nd == 0) {
        fprintf(out, "%ssame: device, dtype, model shape, sharing, order and memory budget\n", item);
        return;
    }
    fprintf(out, "%sdiffer (linbench / peer): ", item);
    for (int i = 0; i < nd; i++)
        fprintf(out, "%s%s %s / %s", i ? "; " : "", diff[i].what, diff[i].x, diff[i].y);
    fputc('\n', out);
}

static void print_header(FILE *out, LbFormat fmt, const LbSweepDir *lin, const LbPeerDir *peer)
{
    const char *item = fmt == LB_FORMAT_MD ? "- " : "  ";
    fprintf(out, fmt == LB_FORMAT_MD ? "## linbench compare: linbench against PyTorch (bench/peer), cell by cell\n\n"
                                     : "linbench compare: linbench against PyTorch (bench/peer), cell by cell\n");
    fprintf(out, "%slinbench: %s: ", item, lin->dir);
    lb_compare_describe(out, lin);
    /* The peer's meta.csv holds linbench's keys, so the same line describes it. */
    LbSweepDir view;
    memset(&view, 0, sizeof view);
    view.dir = peer->dir;
    view.meta = peer->meta;
    fprintf(out, "\n%speer:     %s: ", item, peer->dir);
    lb_compare_describe(out, &view);
    const char *compiled = lb_meta_get(&peer->meta, "compile");
    const char *sdpa = lb_meta_get(&peer->meta, "sdpa");
    fprintf(out, "; PyTorch %s, %s%s%s, timer %s\n", lb_sweep_meta(&view, "torch_version", "?"),
            compiled && strcmp(compiled, "1") == 0 ? "torch.compile" : "eager", sdpa && *sdpa ? ", SDPA " : "",
            sdpa && *sdpa ? sdpa : "", lb_sweep_meta(&view, "timer", "?"));
    print_differences(out, item, lin, peer);
    const char *from = lb_meta_get(&peer->meta, "batch_from");
    if (from && *from)
        fprintf(out, "%sbatch: the peer ran linbench's batches (--batch-from %s)\n", item, from);
    else
        fprintf(out, "%sbatch: each side its own largest within its memory budget\n", item);
    static const char *const labels[2] = {"linbench", "peer"};
    const LbMeta *metas[2] = {&lin->meta, &peer->meta};
    for (int s = 0; s < 2; s++) {
        const char *st = lb_meta_get(metas[s], "status");
        if (st && *st && strcmp(st, "complete") != 0)
            fprintf(out, "%s%s status: %s (cells not measured show NA)\n", item, labels[s], st);
    }
    /* Why a side's J per sequence reads NA (meta.csv's energy and energy_note). */
    for (int s = 0; s < 2; s++) {
        const char *energy = lb_meta_get(metas[s], "energy"), *note = lb_meta_get(metas[s], "energy_note");
        if (!energy)
            fprintf(out, "%s%s energy: none (written before energy was measured)\n", item, labels[s]);
        else if (*energy && strcmp(energy, "measured") != 0)
            fprintf(out, "%s%s energy: %s%s%s%s\n", item, labels[s], energy, note && *note ? " (" : "",
                    note && *note ? note : "", note && *note ? ")" : "");
    }
    fputc('\n', out);
}

/* --- cells -------------------------------------------------------------------------------- */

/* The last row of `model` at (n, k) (k ignored for a model without a k axis), or NULL. */
static const LbCellResult *last_row(const LbCellResult *rows, size_t count, LbModelKind model, int64_t n, int64_t k)
{
    const LbCellResult *found = NULL;
    const int has_k = lb_model_has_k(model);
    for (size_t i = 0; i < count; i++)
        if (rows[i].model == model && rows[i].n == n && (!has_k || rows[i].k == k))
            found = &rows[i];
    return found;
}

/* What a PairCell holds of each side. */
enum { TIME, BATCH, ENERGY, WHATS };

/* One side's own value: ms per sequence, batch or J per sequence (NA where the side has no
 * energy counter). */
static LbGridCell own_cell(const LbCellResult *r, int what)
{
    if (!r)
        return (LbGridCell){LB_GRID_MISSING, 0.0};
    if (r->status == LB_CELL_OOM)
        return (LbGridCell){LB_GRID_OOM, 0.0};
    if (r->status != LB_CELL_OK)
        return (LbGridCell){LB_GRID_ERROR, 0.0};
    if (what == ENERGY)
        return r->energy_j_per_seq > 0 ? (LbGridCell){LB_GRID_VALUE, r->energy_j_per_seq}
                                       : (LbGridCell){LB_GRID_MISSING, 0.0};
    return (LbGridCell){LB_GRID_VALUE, what == BATCH ? (double)r->batch : r->ms_per_seq};
}

/* One cell of a pair, both sides and their ratios. */
typedef struct PairCell {
    int exists;                     /* the model has this cell (else "-") */
    LbGridCell own[2][WHATS];       /* [linbench, peer][time, batch, energy] */
    LbGridCell lin_over_peer[WHATS]; /* [time, batch, energy] */
    LbGridCell saved[WHATS];        /* against a baseline: peer / linbench time and energy, linbench / peer batch */
} PairCell;

static PairCell pair_cell(const LbCellResult *lin, const LbCellResult *peer, int exists)
{
    PairCell c;
    memset(&c, 0, sizeof c);
    c.exists = exists;
    if (!exists)
        return c;
    for (int w = 0; w < WHATS; w++) {
        c.own[0][w] = own_cell(lin, w);
        c.own[1][w] = own_cell(peer, w);
    }
    LbGridCell unused;
    lb_grid_ratio_cell(lin, peer, &c.lin_over_peer[TIME], &unused);      /* time: linbench / peer */
    lb_grid_ratio_cell(peer, lin, &c.saved[TIME], &c.saved[BATCH]);      /* peer / linbench; linbench / peer */
    c.lin_over_peer[BATCH] = c.saved[BATCH];
    lb_grid_energy_cell(lin, peer, &c.lin_over_peer[ENERGY]);
    lb_grid_energy_cell(peer, lin, &c.saved[ENERGY]);
    return c;
}

static void cell_text(const PairCell *c, const LbGridCell *g, int integer, const char *suffix, char *buf, size_t size)
{
    if (!c->exists)
        snprintf(buf, size, "-");
    else if (g->kind == LB_GRID_VALUE && integer)
        snprintf(buf, size, "%.0f", g->value);
    else
        lb_grid_cell_text(g, suffix, buf, size);
}

/* A pair (a linbench model, a peer variant) over the n and k axes. */
typedef struct Pair {
    int energy; /* some cell has energy on either side: the tables show it */
    LbModelKind model;
    const LbPeerModel *peer;
    size_t rows, cols;
    const int64_t *n;
    int64_t *k; /* cols of them; one column, k 0, for a model without a k axis */
    PairCell *cell;
} Pair;

static void pair_free(Pair *p)
{
    free(p->k);
    free(p->cell);
    memset(p, 0, sizeof *p);
}

static int pair_build(Pair *p, const LbSweepDir *lin, const LbPeerDir *peer, size_t v, LbModelKind model,
                      const int64_t *n, size_t nn, const int64_t *k, size_t nk)
{
    memset(p, 0, sizeof *p);
    const int has_k = lb_model_has_k(model);
    p->model = model;
    p->peer = &peer->variants[v];
    p->rows = nn;
    p->n = n;
    p->cols = has_k ? nk : 1;
    p->k = calloc(p->cols ? p->cols : 1, sizeof *p->k);
    const size_t cells = p->rows * p->cols;
    p->cell = calloc(cells > 0 ? cells : 1, sizeof *p->cell);
    size_t count;
    LbCellResult *prow = lb_peer_rows_of(peer, v, &count);
    if (!p->k || !p->cell || count == SIZE_MAX) {
        free(prow);
        pair_free(p);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory comparing with the peer");
    }
    for (size_t j = 0; j < p->cols; j++)
        p->k[j] = has_k ? k[j] : 0;
    const LbModelKind pwork = p->peer->work;
    for (size_t i = 0; i < nn; i++)
        for (size_t j = 0; j < p->cols; j++) {
            const LbCellResult *a = last_row(lin->rows, lin->count, model, n[i], p->k[j]);
            /* the peer's row at the same n, and at the same k where its work has a k axis */
            const LbCellResult *b = last_row(prow, count, pwork, n[i], p->k[j]);
            PairCell *c = &p->cell[i * p->cols + j];
            *c = pair_cell(a, b, lb_model_cell_exists(model, n[i], p->k[j]));
            p->energy |= c->own[0][ENERGY].kind == LB_GRID_VALUE || c->own[1][ENERGY].kind == LB_GRID_VALUE;
        }
    free(prow);
    return LB_OK;
}

/* --- printing ------------------------------------------------------------------------------- */

typedef struct Texts {
    char (*text)[32];
    const char **ptr;
} Texts;

static int texts_alloc(Texts *t, size_t count)
{
    t->text = malloc((count ? count : 1) * sizeof *t->text);
    t->ptr = malloc((count ? count : 1) * sizeof *t->ptr);
    if (!t->text || !t->ptr) {
        free(t->text);
        free(t->ptr);
        t->text = NULL;
        t->ptr = NULL;
        return LB_FAIL(LB_ERR_NOMEM, "out of memory printing a comparison");
    }
    for (size_t i = 0; i < count; i++)
        t->ptr[i] = t->text[i];
    return LB_OK;
}

static void texts_free(Texts *t)
{
    free(t->text);
    free(t->ptr);
}

/* One value of a PairCell for a block. */
typedef enum Value {
    V_LIN_TIME, V_PEER_TIME, V_RATIO_TIME, V_LIN_BATCH, V_PEER_BATCH, V_RATIO_BATCH, V_LIN_ENERGY, V_PEER_ENERGY,
    V_RATIO_ENERGY, V_SAVED_TIME, V_SAVED_MEMORY, V_SAVED_ENERGY
} Value;

static void value_text(const PairCell *c, Value v, char *buf, size_t size)
{
    switch (v) {
    case V_LIN_TIME: cell_text(c, &c->own[0][TIME], 0, "", buf, size); return;
    case V_PEER_TIME: cell_text(c, &c->own[1][TIME], 0, "", buf, size); return;
    case V_RATIO_TIME: cell_text(c, &c->lin_over_peer[TIME], 0, "", buf, size); return;
    case V_LIN_BATCH: cell_text(c, &c->own[0][BATCH], 1, "", buf, size); return;
    case V_PEER_BATCH: cell_text(c, &c->own[1][BATCH], 1, "", buf, size); return;
    case V_RATIO_BATCH: cell_text(c, &c->lin_over_peer[BATCH], 0, "", buf, size); return;
    case V_LIN_ENERGY: cell_text(c, &c->own[0][ENERGY], 0, "", buf, size); return;
    case V_PEER_ENERGY: cell_text(c, &c->own[1][ENERGY], 0, "", buf, size); return;
    case V_RATIO_ENERGY: cell_text(c, &c->lin_over_peer[ENERGY], 0, "", buf, size); return;
    case V_SAVED_TIME: cell_text(c, &c->saved[TIME], 0, "x", buf, size); return;
    case V_SAVED_MEMORY: cell_text(c, &c->saved[BATCH], 0, "x", buf, size); return;
    case V_SAVED_ENERGY: cell_text(c, &c->saved[ENERGY], 0, "x", buf, size); return;
    }
}

/* One table: the pair's n rows, a block per value; its columns the k of a model with a k axis,
 * else one column named by the block's `units`. */
static int print_blocks(FILE *out, LbFormat fmt, const Pair *p, const char *title, const char *const *units,
                        const char *const *block_titles, const Value *values, size_t nblocks)
{
    const int has_k = lb_model_has_k(p->model);
    const size_t cells = p->rows * p->cols;
    Texts rl = {0}, cl = {0}, s[3] = {{0}};
    int rc = texts_alloc(&rl, p->rows);
    if (rc == LB_OK)
        rc = texts_alloc(&cl, p->cols);
    for (size_t b = 0; rc == LB_OK && b < nblocks; b++)
        rc = texts_alloc(&s[b], cells);
    if (rc == LB_OK) {
        for (size_t i = 0; i < p->rows; i++)
            snprintf(rl.text[i], sizeof rl.text[i], "%lld", (long long)p->n[i]);
        LbTableBlock blocks[3];
        for (size_t b = 0; b < nblocks; b++) {
            for (size_t x = 0; x < cells; x++)
                value_text(&p->cell[x], values[b], s[b].text[x], sizeof s[b].text[x]);
            blocks[b] = (LbTableBlock){block_titles[b], p->cols, has_k ? cl.ptr : units + b, s[b].ptr};
        }
        for (size_t j = 0; has_k && j < p->cols; j++)
            snprintf(cl.text[j], sizeof cl.text[j], "%lld", (long long)p->k[j]);
        if (title[0])
            fprintf(out, fmt == LB_FORMAT_MD ? "**%s**\n\n" : "%s\n", title);
        lb_table_print(out, fmt, has_k ? "n \\ k" : "n", p->rows, rl.ptr, blocks, nblocks);
        if (fmt == LB_FORMAT_TEXT)
            fputc('\n', out);
    }
    texts_free(&rl);
    texts_free(&cl);
    for (size_t b = 0; b < nblocks; b++)
        texts_free(&s[b]);
    return rc;
}

static void pair_heading(FILE *out, LbFormat fmt, const Pair *p)
{
    const int has_k = lb_model_has_k(p->model);
    fprintf(out, fmt == LB_FORMAT_MD ? "### %s against %s%s%s%s\n\n" : "%s against %s%s%s%s\n",
            lb_model_name(p->model), p->peer->name, has_k ? " (k: " : "", has_k ? lb_model_k_meaning(p->model) : "",
            has_k ? ")" : "");
}

static int print_same_work(FILE *out, LbFormat fmt, const Pair *p)
{
    pair_heading(out, fmt, p);
    static const char *const titles[3] = {"linbench", "peer", "linbench / peer"};
    static const Value time[3] = {V_LIN_TIME, V_PEER_TIME, V_RATIO_TIME};
    static const Value batch[3] = {V_LIN_BATCH, V_PEER_BATCH, V_RATIO_BATCH};
    static const char *const time_units[3] = {"ms", "ms", "ratio"}, *const batch_units[3] = {"batch", "batch", "ratio"};
    LB_TRY(print_blocks(out, fmt, p, "ms per sequence", time_units, titles, time, 3));
    LB_TRY(print_blocks(out, fmt, p, "largest batch", batch_units, titles, batch, 3));
    if (!p->energy)
        return LB_OK;
    static const Value energy[3] = {V_LIN_ENERGY, V_PEER_ENERGY, V_RATIO_ENERGY};
    static const char *const energy_units[3] = {"J", "J", "ratio"};
    return print_blocks(out, fmt, p, "J per sequence", energy_units, titles, energy, 3);
}

static int print_against_baseline(FILE *out, LbFormat fmt, const Pair *p)
{
    pair_heading(out, fmt, p);
    static const char *const titles[3] = {"time saved", "memory saved", "energy saved"};
    static const Value values[3] = {V_SAVED_TIME, V_SAVED_MEMORY, V_SAVED_ENERGY};
    static const char *const units[3] = {"time", "memory", "energy"};
    return print_blocks(out, fmt, p, "", units, titles, values, p->energy ? 3 : 2);
}

/* The CSV row of every cell of a pair. */
static int print_csv_pair(FILE *out, const Pair *p, const char *comparison)
{
    for (size_t i = 0; i < p->rows; i++)
        for (size_t j = 0; j < p->cols; j++) {
            const PairCell *c = &p->cell[i * p->cols + j];
            if (!c->exists)
                continue;
            char f[14][72]; /* a peer's name is up to 63 bytes */
            const char *row[14];
            for (int x = 0; x < 14; x++)
                row[x] = f[x];
            snprintf(f[0], sizeof f[0], "%s", comparison);
            snprintf(f[1], sizeof f[1], "%s", lb_model_name(p->model));
            snprintf(f[2], sizeof f[2], "%s", p->peer->name);
            snprintf(f[3], sizeof f[3], "%lld", (long long)p->n[i]);
            if (lb_model_has_k(p->model))
                snprintf(f[4], sizeof f[4], "%lld", (long long)p->k[j]);
            else
                f[4][0] = '\0';
            const LbGridCell *g[9] = {&c->own[0][TIME], &c->own[1][TIME], &c->lin_over_peer[TIME],
                                      &c->own[0][BATCH], &c->own[1][BATCH], &c->lin_over_peer[BATCH],
                                      &c->own[0][ENERGY], &c->own[1][ENERGY], &c->lin_over_peer[ENERGY]};
            for (int x = 0; x < 9; x++)
                lb_grid_cell_csv(g[x], f[5 + x], sizeof f[0]);
            LB_TRY(lb_csv_write_record(out, row, 14));
        }
    return LB_OK;
}

/* --- the report ----------------------------------------------------------------------------- */

/* Sorted union of two sorted unique lists (malloc'd). */
static int64_t *union_of(const int64_t *a, size_t na, const int64_t *b, size_t nb, size_t *count)
{
    int64_t *u = malloc((na + nb ? na + nb : 1) * sizeof *u);
    if (!u)
        return NULL;
    size_t i = 0, j = 0, o = 0;
    while (i < na || j < nb) {
        const int64_t v = j >= nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
        i += i < na && a[i] == v;
        j += j < nb && b[j] == v;
        u[o++] = v;
    }
    *count = o;
    return u;
}

/* The peer's n and k: its meta.csv's lists, else its rows'. */
static int peer_axes(const LbPeerDir *peer, int64_t **n, size_t *nn, int64_t **k, size_t *nk)
{
    *n = *k = NULL;
    *nn = *nk = 0;
    if (lb_parse_list(setting(&peer->meta, LB_SET_N), 1, INT64_MAX, n, nn) == 0 &&
        lb_parse_list(setting(&peer->meta, LB_SET_K), 1, INT64_MAX, k, nk) == 0)
        return LB_OK;
    free(*n);
    free(*k);
    *n = malloc((peer->count ? peer->count : 1) * sizeof **n);
    *k = malloc((peer->count ? peer->count : 1) * sizeof **k);
    if (!*n || !*k)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory comparing with the peer");
    for (size_t i = 0; i < peer->count; i++) {
        (*n)[(*nn)++] = peer->rows[i].n;
        if (lb_model_has_k(peer->rows[i].model))
            (*k)[(*nk)++] = peer->rows[i].k;
    }
    *nn = lb_sort_unique_int64(*n, *nn);
    *nk = lb_sort_unique_int64(*k, *nk);
    return LB_OK;
}

/* Whether linbench's model and the peer ran it with the same settings of its own (sharing and
 * order where the model reads them): 1, or 0 with the refusal in why. */
static int same_settings(const LbSweepDir *lin, const LbPeerDir *peer, LbModelKind m, char *why, size_t size)
{
    static const LbSettingId own[] = {LB_SET_SHARING, LB_SET_ORDER};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        const char *flag = lb_settings[own[i]].flag;
        if (lb_model_reads_flag(m, flag) != 1)
            continue;
        const char *a = setting(&lin->meta, own[i]), *b = setting(&peer->meta, own[i]);
        if (strcmp(a, b) != 0) {
            snprintf(why, size, "linbench ran --%s %s, the peer %s: not the same work", flag, a, b);
            return 0;
        }
    }
    return 1;
}

int lb_compare_peer(FILE *out, const LbSweepDir *lin, const LbPeerDir *peer, LbFormat fmt)
{
    int64_t *pn, *pk, *n = NULL, *k = NULL;
    size_t pnn, pnk, nn = 0, nk = 0;
    int rc = peer_axes(peer, &pn, &pnn, &pk, &pnk);
    if (rc == LB_OK) {
        n = union_of(lin->grid.n, lin->grid.rows, pn, pnn, &nn);
        k = union_of(lin->grid.k, lin->grid.cols, pk, pnk, &nk);
        if (!n || !k)
            rc = LB_FAIL(LB_ERR_NOMEM, "out of memory comparing with the peer");
    }
    free(pn);
    free(pk);
    int measured[LB_MODEL_COUNT];
    (void)lb_models_measured(&lin->meta, lin->rows, lin->count, measured);

    static const char *const head[14] = {"comparison", "linbench_model", "peer_model", "n", "k",
                                         "linbench_ms_per_seq", "peer_ms_per_seq", "linbench_over_peer_time",
                                         "linbench_batch", "peer_batch", "linbench_over_peer_batch",
                                         "linbench_j_per_seq", "peer_j_per_seq", "linbench_over_peer_energy"};
    if (rc == LB_OK && fmt == LB_FORMAT_CSV)
        rc = lb_csv_write_record(out, head, 14);
    else if (rc == LB_OK)
        print_header(out, fmt, lin, peer);

    /* The same work: every linbench model against each peer variant doing its work. */
    int any = 0;
    for (int pass = 0; pass < 2 && rc == LB_OK; pass++) {
        if (pass == 1 && fmt != LB_FORMAT_CSV) {
            int baselines = 0;
            for (size_t v = 0; v < peer->nvariants; v++)
                baselines += peer->variants[v].exact_baseline;
            if (baselines == 0)
                break;
            fprintf(out, fmt == LB_FORMAT_MD ? "## Against the peer's exact attention\n\n"
                                             : "Against the peer's exact attention\n");
            fprintf(out, fmt == LB_FORMAT_MD
                             ? "Time saved = the peer's ms per sequence / linbench's; memory saved = linbench's largest "
                               "batch / the peer's (as Table 3 sets Linformer against standard).\n\n"
                             : "time saved = the peer's ms per sequence / linbench's; memory saved = linbench's largest "
                               "batch / the peer's (as Table 3 sets Linformer against standard)\n\n");
        } else if (pass == 0 && fmt != LB_FORMAT_CSV) {
            fprintf(out, fmt == LB_FORMAT_MD ? "## The same work: linbench / peer\n\n"
                                             : "The same work: linbench / peer (time below 1: linbench is faster; "
                                               "batch above 1: linbench fits more)\n\n");
        }
        for (size_t v = 0; v < peer->nvariants && rc == LB_OK; v++) {
            const LbPeerModel *pm = &peer->variants[v];
            for (int m = 0; m < LB_MODEL_COUNT && rc == LB_OK; m++) {
                const LbModelKind kind = (LbModelKind)m;
                const int same = lb_peer_same_work(pm, kind);
                if (!measured[m] || (pass == 0 ? !same : !pm->exact_baseline))
                    continue;
                if (pass == 1 && same && fmt == LB_FORMAT_CSV)
                    continue; /* written once, as the same work */
                char why[160];
                if (same && !same_settings(lin, peer, kind, why, sizeof why)) {
                    if (fmt != LB_FORMAT_CSV)
                        fprintf(out, "%s against %s: not compared: %s\n\n", lb_model_name(kind), pm->name, why);
                    continue;
                }
                Pair p;
                rc = pair_build(&p, lin, peer, v, kind, n, nn, k, nk);
                if (rc != LB_OK)
                    break;
                any = 1;
                if (fmt == LB_FORMAT_CSV)
                    rc = print_csv_pair(out, &p, pass == 0 ? "same_work" : "baseline");
                else if (pass == 0)
                    rc = print_same_work(out, fmt, &p);
                else
                    rc = print_against_baseline(out, fmt, &p);
                pair_free(&p);
            }
        }
    }
    if (rc == LB_OK && fmt != LB_FORMAT_CSV) {
        if (!any)
            fprintf(out, "No pair to compare: the peer ran no model of the work linbench measured.\n");
        if (fmt == LB_FORMAT_MD)
            fprintf(out, "`-`: no such cell (k >= n); `OOM`: out of memory at batch 1; `ERR`: the cell failed; "
                         "`NA`: not measured on that side.\n");
        else
            fprintf(out, "- : no such cell (k >= n)   OOM: out of memory at batch 1   ERR: the cell failed   "
                         "NA: not measured on that side\n");
    }
    free(n);
    free(k);
    return rc;
}
