/* `linbench compare LINBENCH_DIR PEER_DIR`: a linbench sweep against bench/peer's result (the
 * same encoder in PyTorch, run under the same protocol, reports/peer_dir.h), cell by cell.
 *
 * Pairs (a peer variant is one model name of the peer's raw.csv, e.g. torch-sdpa-flash):
 *   - the same work (lb_peer_same_work): each linbench model measured against each peer variant
 *     doing its work (standard with torch-standard, linformer with torch-linformer, and every
 *     exact model of the table, standard, chunked and flash, with torch-sdpa-*), at the same n
 *     (and k); per cell linbench's ms per sequence and the peer's, linbench / peer
 *     (below 1: linbench takes less time), and the same for the largest batch (above 1: linbench
 *     fits more). A pair whose model reads --sharing or --order is refused, with one line,
 *     where the two directories ran it with different ones (not the same work).
 *   - against the peer's exact baseline: every linbench model measured against each peer-only
 *     exact attention (torch-sdpa-*), as Table 3 sets Linformer against standard: time saved =
 *     peer ms / linbench ms per sequence, memory saved = linbench batch / peer batch.
 * The header says what each side ran and what differs between them (device, the CPU's host,
 * dtype, TF32, memory budget, sharing, order), and whether the peer ran linbench's batches.
 * Markers as everywhere: "-" no such cell (k >= n), OOM (batch 1 did not fit), ERR (failed),
 * NA (not measured on one side).
 *
 * Formats: text and md (the tables); csv, one row per cell of every pair:
 *   comparison,linbench_model,peer_model,n,k,linbench_ms_per_seq,peer_ms_per_seq,
 *   linbench_over_peer_time,linbench_batch,peer_batch,linbench_over_peer_batch
 * comparison "same_work" or "baseline" (a pair of both kinds, an exact model against
 * torch-sdpa-*, is written once, as same_work); values %.6g, markers as above. */
#ifndef LB_COMPARE_PEER_H
#define LB_COMPARE_PEER_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stdio.h>

#include "reports/peer_dir.h"
#include "reports/sweep_dir.h"
#include "reports/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the two ran the same model: the storage type and the model's shape (layers, d_model,
 * heads, ffn, vocab) must agree, or no cell is the same work. LB_OK, or LB_ERR_FORMAT naming the
 * first that differs and both values. */
int lb_compare_peer_check(const LbSweepDir *lin, const LbPeerDir *peer);

/* The report. LB_OK, or a status from building it (LB_ERR_NOMEM). */
int lb_compare_peer(FILE *out, const LbSweepDir *lin, const LbPeerDir *peer, LbFormat fmt);

#ifdef __cplusplus
}
#endif

#endif
