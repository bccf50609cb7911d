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
    sc_same_cells(merged, whole, "merged");
    sc_same_settings(merged, whole, NULL, "merged");
    LbCellResult *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    if (lb_check(sc_read_rows(merged, &a, &na) == 0 && sc_read_rows(whole, &b, &nb) == 0, "both raw.csv read")) {
        lb_check(na > 0, "the merge holds cells (%zu)", na);
        for (size_t i = 0; i < na; i++) {
            const LbCellResult *w = sc_find(b, nb, a[i].model, a[i].n, a[i].k);
            lb_check(w && a[i].batch == w->batch && a[i].planned_bytes == w->planned_bytes &&
                         a[i].peak_bytes == w->peak_bytes && a[i].status == w->status,
                     "%s n=%lld k=%lld: batch %lld planned %lld peak %lld, as the unsharded sweep's (%lld %lld %lld)",
                     lb_model_name(a[i].model), (long long)a[i].n, (long long)a[i].k, (long long)a[i].batch,
                     (long long)a[i].planned_bytes, (long long)a[i].peak_bytes, w ? (long long)w->batch : -1LL,
                     w ? (long long)w->planned_bytes : -1LL, w ? (long long)w->peak_bytes : -1LL);
        }
    }
    free(a);
    free(b);
    sc_check_meta(merged, "status", "complete", "merged");
    sc_check_meta(merged, "parts", parts, "merged");
    return lb_test_finish("slurm_result_check");
}
