/* How a figure of several models tells its lines apart (linbench plot's time_per_seq): one hue
 * per model, so a model reads as one colour family, and within it a shade (darker to lighter as
 * k grows) and a dash type per k, so each k reads apart too; a point shape per model for print in
 * grey. Written out per line, never gnuplot's colour cycle, which repeats after eight lines. */
#ifndef LB_REPORTS_PLOT_STYLE_H
#define LB_REPORTS_PLOT_STYLE_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include "attn/config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbLineStyle {
    unsigned rgb;  /* 0xRRGGBB: the model's hue, shaded by the line's place among its k */
    int dashtype;  /* gnuplot's dashtype: 1 (solid) for the first k, then 2, 3, ... */
    int pointtype; /* gnuplot's pointtype: one per model */
} LbLineStyle;

/* The style of line `index` (0 .. count - 1, in k order) of model m's `count` lines. */
LbLineStyle lb_plot_line_style(LbModelKind m, int index, int count);

#ifdef __cplusplus
}
#endif

#endif
