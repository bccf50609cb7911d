/* The check at the end of tests/cli/test_slurm_real.sh: the result a real Slurm's merge job wrote
 * equals an unsharded sweep's, read back through libcsv. Cell for cell in model, n, k, batch,
 * planned and peak bytes and status (times differ between runs, so they are not compared), each
 * cell once; every setting of meta.csv equal; the merge complete, with `parts` shards.
 * Usage: slurm_result_check MERGED UNSHARDED PARTS; exit 0 when all hold, 1 otherwise. */
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
    sc_same_settings(merged, whole, "merged");
    char pa[4200], pb[4200];
    snprintf(pa, sizeof pa, "%s/raw.csv", merged);
    snprintf(pb, sizeof pb, "%s/raw.csv", whole);
    LbCellResult *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    if (lb_check(lb_raw_read(pa, &a, &na) == 0 && lb_raw_read(pb, &b, &nb) == 0, "both raw.csv read")) {
        lb_check(na > 0, "the merge holds cells (%zu)", na);
        for (size_t i = 0; i < na; i++) {
            size_t j = 0;
            while (j < nb && !(a[i].model == b[j].model && a[i].n == b[j].n && a[i].k == b[j].k))
                j++;
            lb_check(j < nb && a[i].batch == b[j].batch && a[i].planned_bytes == b[j].planned_bytes &&
                         a[i].peak_bytes == b[j].peak_bytes && a[i].status == b[j].status,
                     "%s n=%lld k=%lld: batch %lld planned %lld peak %lld, as the unsharded sweep's (%lld %lld %lld)",
                     lb_model_name(a[i].model), (long long)a[i].n, (long long)a[i].k, (long long)a[i].batch,
                     (long long)a[i].planned_bytes, (long long)a[i].peak_bytes, j < nb ? (long long)b[j].batch : -1LL,
                     j < nb ? (long long)b[j].planned_bytes : -1LL, j < nb ? (long long)b[j].peak_bytes : -1LL);
        }
    }
    free(a);
    free(b);
    char *status = sc_meta(merged, "status"), *count = sc_meta(merged, "parts");
    lb_check(status && strcmp(status, "complete") == 0, "merged meta.csv: status complete (%s)", status ? status : "(none)");
    lb_check(count && strcmp(count, parts) == 0, "merged meta.csv: parts %s (%s)", parts, count ? count : "(none)");
    free(status);
    free(count);
    return lb_test_finish("slurm_result_check");
}
