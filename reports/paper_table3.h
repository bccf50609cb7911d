/* The paper's Table 3, the numbers `linbench compare` sets a sweep beside. */
#ifndef LB_PAPER_TABLE3_H
#define LB_PAPER_TABLE3_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include "reports/grid.h"

/* The two grids as CSV text (header n,k=128,...,k=2048; rows n = 512 .. 65536), exactly the
 * bytes of ../shared/paper/table3_time.csv and table3_memory.csv. */
extern const char lb_paper_table3_time_csv[];
extern const char lb_paper_table3_memory_csv[];

/* Both grids parsed (cells VALUE, or EMPTY where k >= n). Free with lb_grid_free. */
int lb_paper_table3(LbGrid *g);

/* The paper's setting, for headers. */
#define LB_PAPER_DEVICE "16 GB Tesla V100"

#endif
