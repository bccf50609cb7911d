/* The check at the end of test_slurm_real.sh: a real Slurm's merge equals an unsharded sweep cell
 * for cell (batch, planned and peak bytes, status; not times) and in every setting, complete with
 * `parts` shards. Usage: slurm_result_check MERGED UNSHARDED PARTS; exit 0 when all hold. */
#include <string.h>

#include "tests/cli/sweep_check.h"

int main(int argc, char **argv)
{
    lb_test_init("slurm_result_check");
    if (argc != 4) {
        fprintf(stderr, "usage: slurm_result_check MERGED UNSHARDED PARTS\n");
        return 1;
    }
    const char *merged = argv[1], *whole = argv[2], *parts = argv[3];
    sc_files_parse(merged, 1, "merged");
    sc_same_rows(merged, whole, 1, "merged");
    sc_same_settings(merged, whole, NULL, "merged");
    sc_check_meta(merged, "status", "complete", "merged");
    sc_check_meta(merged, "parts", parts, "merged");
    return lb_test_finish("slurm_result_check");
}
