/* bench/peer's model names (bench/peer/lbpeer/names.py), as the model column of its raw.csv holds
 * them:   "torch-" NAME ["-" BACKEND] ["-compiled"]
 * NAME is a model of linbench's table (the row did that model's work) or a peer-only exact
 * attention (sdpa, whose work is the baseline's, LB_MODEL_STANDARD); BACKEND (flash, efficient,
 * cudnn, math) follows a peer-only attention and nothing else; "compiled": run under
 * torch.compile. A peer's result is read by lb_result_load (reports/sweep_dir.h). */
#ifndef LB_PEER_DIR_H
#define LB_PEER_DIR_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>

#include "attn/measure/measure.h"

/* meta.csv's key naming what wrote a result; without it, linbench. */
#define LB_META_TOOL "tool"
#define LB_TOOL_LINBENCH "linbench"
#define LB_TOOL_PEER "peer"

#define LB_PEER_PREFIX "torch-"

typedef struct LbPeerModel {
    char name[64];      /* as raw.csv holds it: "torch-sdpa-flash-compiled" */
    char backend[16];   /* a peer-only attention's kernel ("flash"), else "" */
    int compiled;       /* ran under torch.compile */
    int exact_baseline; /* a peer-only exact attention: the baseline every linbench model is set against */
    LbModelKind work;   /* the linbench model whose work it does */
} LbPeerModel;

/* name as the grammar above: 0, or -1 with what a name should be in `should`. */
int lb_peer_model_parse(const char *name, LbPeerModel *m, char *should, size_t size);

/* Whether the peer's model does the work of linbench's model m: m is its work, or the peer's is a
 * peer-only exact attention and m one of the table's exact models (standard, chunked, flash). */
int lb_peer_same_work(const LbPeerModel *pm, LbModelKind m);

#endif
