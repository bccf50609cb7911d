/* See plot_style.h. The hues are of Tableau's palette, in the model table's order, the first six
 * picked so any two are at least 40 degrees apart (HSV): blue, red, green, purple, olive, pink;
 * the Linformer's general projections then take the gaps between them: orange (30 degrees, half way
 * between red and olive), indigo (between blue and purple) and teal (between green and blue), so
 * any two of the nine are at least 30 degrees apart (tests/reports/test_cli_plot.c). A shade mixes the hue
 * with black or white, which keeps the hue itself. */
#include "reports/plot_style.h"

static const unsigned model_hue[] = {0x1f77b4, 0xd62728, 0x2ca02c, 0x9467bd, 0xbcbd22, 0xe377c2,
                                     0xff8000, 0x3c44c8, 0x17be8a};
_Static_assert(sizeof model_hue / sizeof model_hue[0] >= LB_MODEL_COUNT,
               "a new model needs its hue in reports/plot_style.c");
static const int model_point[] = {7, 5, 9, 13, 11, 15, 4, 6, 8}; /* circle, square, triangles, diamond, ... */
_Static_assert(sizeof model_point / sizeof model_point[0] >= LB_MODEL_COUNT,
               "a new model needs its point type in reports/plot_style.c");

/* The darkest and lightest shades: mixed a third with black, two fifths with white; lighter than
 * that a line fades into the white page. */
#define LB_SHADE_DARK 0.33
#define LB_SHADE_LIGHT 0.40
#define LB_DASH_TYPES 5 /* gnuplot's distinct dash types: solid, dashed, dotted, dash-dot, dash-dot-dot */

static unsigned shade(unsigned rgb, double t)
{
    unsigned out = 0;
    for (int shift = 16; shift >= 0; shift -= 8) {
        const double c = (double)(rgb >> shift & 255);
        const double v = t < 0 ? c * (1 + t) : c + (255 - c) * t;
        out |= (unsigned)(v + 0.5) << shift;
    }
    return out;
}

LbLineStyle lb_plot_line_style(LbModelKind m, int index, int count)
{
    const int i = (unsigned)m < LB_MODEL_COUNT ? (int)m : 0;
    LbLineStyle s;
    const double t = count > 1 ? -LB_SHADE_DARK + (LB_SHADE_DARK + LB_SHADE_LIGHT) * index / (count - 1) : 0;
    s.rgb = shade(model_hue[i], t);
    s.dashtype = 1 + index % LB_DASH_TYPES;
    s.pointtype = model_point[i];
    return s;
}
