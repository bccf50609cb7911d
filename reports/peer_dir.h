/* A result directory of bench/peer (linbench's encoder in PyTorch, run under the same protocol)
 * read back: meta.csv, whose `tool` is "peer", and raw.csv in linbench's columns (25, with energy; 23, as
 * peers wrote it before the energy columns) whose model column holds the peer's names
 * (bench/peer/lbpeer/names.py):
 *   "torch-" NAME ["-" BACKEND] ["-compiled"]
 * NAME is a model of linbench's table (the row did that model's work: torch-standard,
 * torch-linformer) or a peer-only exact attention (sdpa: F.scaled_dot_product_attention, whose
 * work is the baseline's, LB_MODEL_STANDARD); BACKEND (flash, efficient, cudnn, math) follows a
 * peer-only attention and nothing else; "compiled" says the row ran under torch.compile. Each
 * distinct name is one variant; a row's LbCellResult.model is its variant's work, so the grid and
 * ratio code of reports/ reads a peer's rows as it reads linbench's, one variant at a time. */
#ifndef LB_PEER_DIR_H
#define LB_PEER_DIR_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>

#include "attn/measure.h"
#include "reports/meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* meta.csv's key naming what wrote a result, and its values; a meta.csv without it is linbench's
 * (written before the key existed). */
#define LB_META_TOOL "tool"
#define LB_TOOL_LINBENCH "linbench"
#define LB_TOOL_PEER "peer"

#define LB_PEER_PREFIX "torch-"

typedef struct LbPeerModel {
    char name[64];      /* as raw.csv holds it: "torch-sdpa-flash-compiled" */
    char attention[24]; /* "standard", "linformer", "sdpa" */
    char backend[16];   /* a peer-only attention's kernel ("flash"), else "" */
    int compiled;       /* ran under torch.compile */
    int exact_baseline; /* a peer-only exact attention: the baseline every linbench model is set against */
    LbModelKind work;   /* the linbench model whose work it does */
} LbPeerModel;

/* name as the grammar above: 0, or -1 with what a name should be in `should`. */
int lb_peer_model_parse(const char *name, LbPeerModel *m, char *should, size_t size);

/* Whether the peer's model does the work of linbench's model m: m is its work, or the peer's is a
 * peer-only exact attention and m one of the table's exact models (lb_model_baseline: standard,
 * chunked, flash compute the same attention to rounding). compare and plot pair them by this. */
int lb_peer_same_work(const LbPeerModel *pm, LbModelKind m);

/* Whether a result's meta.csv says bench/peer wrote it. */
int lb_meta_is_peer(const LbMeta *meta);
/* The same for the meta.csv of a directory: 1, 0, or -1 when it cannot be read. */
int lb_result_dir_is_peer(const char *dir);

typedef struct LbPeerDir {
    char *dir;
    LbMeta meta;
    LbCellResult *rows;    /* model: the variant's work */
    size_t *variant;       /* per row: its index in variants */
    size_t count;
    LbPeerModel *variants; /* each name once, in the order of first appearance */
    size_t nvariants;
} LbPeerDir;

/* LB_ERR_IO when raw.csv or meta.csv cannot be read, LB_ERR_FORMAT when meta.csv's tool is not
 * "peer" or a file is not what bench/peer writes (naming the line and column). */
int lb_peer_dir_load(const char *dir, LbPeerDir *p);
void lb_peer_dir_free(LbPeerDir *p);

/* The rows of variant v (malloc'd copies; free() them), in file order. NULL with *count 0 when
 * none, or when out of memory (*count then SIZE_MAX). */
LbCellResult *lb_peer_rows_of(const LbPeerDir *p, size_t v, size_t *count);

#ifdef __cplusplus
}
#endif

#endif
