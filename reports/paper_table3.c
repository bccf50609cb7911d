/* Table 3 of the Linformer paper (Wang et al. 2020, §5.3): Linformer with layerwise sharing
 * against a standard Transformer, inference on a 16 GB Tesla V100, each model at its largest
 * batch. Kept here verbatim as ../shared/paper/table3_time.csv and table3_memory.csv hold it
 * (tests/reports/test_grid.c checks the copy byte for byte when that directory exists); an
 * empty field is the paper's "-" (k >= n). Parsed through libcsv like every other grid. */
#include "reports/paper_table3.h"

#include <string.h>

const char lb_paper_table3_time_csv[] =
    "n,k=128,k=256,k=512,k=1024,k=2048\n"
    "512,1.5,1.3,,,\n"
    "1024,1.7,1.6,1.3,,\n"
    "2048,2.6,2.4,2.1,1.3,\n"
    "4096,3.4,3.2,2.8,2.2,1.3\n"
    "8192,5.5,5.0,4.4,3.5,2.1\n"
    "16384,8.6,7.8,7.0,5.6,3.3\n"
    "32768,13,12,11,8.8,5.0\n"
    "65536,20,18,16,14,7.9\n";

const char lb_paper_table3_memory_csv[] =
    "n,k=128,k=256,k=512,k=1024,k=2048\n"
    "512,1.7,1.5,,,\n"
    "1024,3.0,2.9,1.8,,\n"
    "2048,6.1,5.6,3.6,2.0,\n"
    "4096,14,13,8.3,4.3,2.3\n"
    "8192,28,26,17,8.5,4.5\n"
    "16384,56,48,32,16,8\n"
    "32768,56,48,36,18,16\n"
    "65536,60,52,40,20,18\n";

int lb_paper_table3(LbGrid *g)
{
    return lb_grids_parse(lb_paper_table3_time_csv, strlen(lb_paper_table3_time_csv),
                          lb_paper_table3_memory_csv, strlen(lb_paper_table3_memory_csv),
                          "the paper's Table 3", g);
}
