/* linbench predict: what a sweep would show on a GPU that is not here, from the roofline
 * (reports/predict.h, METHOD.md "Predicting"). Validate (exit 2, nothing written), make and lock
 * the directory, compute every cell and write it as a sweep writes its own, print the grids. No
 * backend is opened: it runs the same on a machine without a GPU. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/sizes.h"
#include "attn/status.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/outdir.h"
#include "reports/grid.h"
#include "reports/predict.h"
#include "reports/settings.h"

void lb_help_predict(FILE *out)
{
    char names[512];
    lb_gpu_spec_names(names, sizeof names);
    fputs("usage: linbench predict (--gpu NAME | --spec tflops=T,bw=B,mem=SIZE) [FLAGS]\n\n"
          "Predicts what linbench sweep would write on a GPU, without one: for every cell of the\n"
          "sweep's grid, the largest batch from the memory plan for the card's memory less the\n"
          "sweep's headroom, and the time of a pass as the sum over its operations of\n"
          "max(FLOPs / (rate x product efficiency), bytes / (bandwidth x copy efficiency)) plus a\n"
          "launch overhead per kernel. Writes raw.csv, time_speedup.csv, memory_speedup.csv,\n"
          "speedups.csv, breakdown.csv (predicted shares) and meta.csv (source predicted, every\n"
          "parameter), which compare and plot read as they read a sweep; prints both grids.\n\n"
          "Card:\n",
          out);
    fputs("  --gpu NAME          a card of the table (docs/METHOD.md cites each datasheet):\n", out);
    /* the names, wrapped under the text column */
    fprintf(out, "%22s", "");
    lb_options_wrap(out, names, 22, 22, 70);
    fputc('\n', out);
    fputs("  --spec S            any other card: tflops=T (its product rate for --dtype, TFLOP/s),\n"
          "                      bw=B (memory bandwidth, GB/s), mem=SIZE (memory, as --mem-limit)\n"
          "Roofline:\n",
          out);
    fprintf(out,
            "  --product-efficiency E  share of the rate a product reaches, above 0 to 1 (default %g)\n"
            "  --copy-efficiency E     share of the bandwidth a memory-bound call reaches, above 0 to 1\n"
            "                          (default %g)\n"
            "  --launch-us US          microseconds added per kernel, 0 to 1000000 (default %g)\n",
            LB_PREDICT_PRODUCT_EFFICIENCY, LB_PREDICT_COPY_EFFICIENCY, LB_PREDICT_LAUNCH_US);
    lb_options_help(out, LB_FOR_PREDICT);
    fputs("  (--mem-limit's default here: the card's memory less --headroom)\n\n"
          "Output:\n"
          "  -o, --out DIR       where the files go; must be new or hold no results (default a new\n"
          "                      directory linbench-YYYYmmdd-HHMMSS here)\n"
          "  --force             remove the results already in --out first\n"
          "  --format F          the grids as text or md (default text)\n"
          "  -q, --quiet         no summary line on stderr\n"
          "  -h, --help          this help\n\n"
          "Exit codes: 0 done; 1 a file not written, or the directory in use; 2 bad input.\n",
          out);
}

enum {
    OPT_OUT = 'o', OPT_QUIET = 'q', OPT_HELP = 'h', OPT_FORCE = 1000, OPT_FORMAT, OPT_GPU, OPT_SPEC,
    OPT_PRODUCT_EFF, OPT_COPY_EFF, OPT_LAUNCH
};

typedef struct PredictFlags {
    const char *out, *gpu, *spec, *k_text;
    int force, quiet, help;
    LbFormat format;
    LbPredictParams params;
} PredictFlags;

/* A number in (lo, hi] (or [lo, hi] when lo_closed), the whole text. */
static int number_in(const char *text, double lo, int lo_closed, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    const double v = strtod(text, &end);
    if (end == text || *end || errno || !isfinite(v) || v > hi || v < lo || (!lo_closed && v == lo))
        return -1;
    *out = v;
    return 0;
}

static int parse_flags(int argc, char **argv, LbRunSettings *s, PredictFlags *f)
{
    struct option longopts[LB_OPTIONS_MAX] = {
        {"out", required_argument, NULL, OPT_OUT},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, OPT_HELP},
        {"force", no_argument, NULL, OPT_FORCE},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"gpu", required_argument, NULL, OPT_GPU},
        {"spec", required_argument, NULL, OPT_SPEC},
        {"product-efficiency", required_argument, NULL, OPT_PRODUCT_EFF},
        {"copy-efficiency", required_argument, NULL, OPT_COPY_EFF},
        {"launch-us", required_argument, NULL, OPT_LAUNCH},
    };
    lb_options_fill(longopts, 10, LB_FOR_PREDICT);
    int c, rc;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_OUT: f->out = optarg; break;
        case OPT_QUIET: f->quiet = 1; break;
        case OPT_HELP: f->help = 1; return 0;
        case OPT_FORCE: f->force = 1; break;
        case OPT_GPU: f->gpu = optarg; break;
        case OPT_SPEC: f->spec = optarg; break;
        case OPT_FORMAT: /* the printed grid: a table, not CSV (the files are the CSV) */
            if (lb_format_parse(optarg, &f->format) != 0 || f->format == LB_FORMAT_CSV)
                return lb_usage_error("invalid argument \"%s\" for --format: should be text or md", optarg);
            break;
        case OPT_PRODUCT_EFF:
            if (number_in(optarg, 0, 0, 1, &f->params.product_efficiency))
                return lb_usage_error("invalid argument \"%s\" for --product-efficiency: should be a number above 0 and at most 1", optarg);
            break;
        case OPT_COPY_EFF:
            if (number_in(optarg, 0, 0, 1, &f->params.copy_efficiency))
                return lb_usage_error("invalid argument \"%s\" for --copy-efficiency: should be a number above 0 and at most 1", optarg);
            break;
        case OPT_LAUNCH:
            if (number_in(optarg, 0, 1, 1e6, &f->params.launch_us))
                return lb_usage_error("invalid argument \"%s\" for --launch-us: should be a number from 0 to 1000000", optarg);
            break;
        case ':': return lb_usage_error("flag %s needs a value (see linbench predict --help)", argv[optind - 1]);
        case '?': return lb_usage_error("unknown flag \"%s\" for predict (see linbench predict --help)", argv[optind - 1]);
        default:
            if ((rc = lb_options_apply(s, c, optarg)) != 0)
                return rc;
            if (c == LB_OPT_SETTING + LB_SET_K)
                f->k_text = optarg;
        }
    }
    if (optind < argc)
        return lb_usage_error("unexpected argument \"%s\" for predict: it takes flags only (see linbench predict --help)", argv[optind]);
    return 0;
}

/* The card: --gpu NAME from the table, or --spec; exactly one of them. */
static int pick_card(const LbRunSettings *s, const PredictFlags *f, LbPredictCard *card)
{
    char names[512], why[256];
    lb_gpu_spec_names(names, sizeof names);
    if (f->gpu && f->spec)
        return lb_usage_error("--gpu and --spec cannot be used together: should be one card, a name of the table or its figures");
    if (!f->gpu && !f->spec)
        return lb_usage_error("predict needs a card: should be --gpu NAME (one of %s) or --spec tflops=T,bw=B,mem=SIZE", names);
    if (f->spec) {
        if (lb_predict_card_parse(f->spec, card, why, sizeof why) != 0)
            return lb_usage_error("invalid argument \"%s\" for --spec: should be %s", f->spec, why);
        return 0;
    }
    const LbGpuSpec *g = lb_gpu_spec_find(f->gpu);
    if (!g)
        return lb_usage_error("invalid argument \"%s\" for --gpu: should be one of %s (or --spec tflops=T,bw=B,mem=SIZE)",
                              f->gpu, names);
    if (lb_predict_card_from_spec(g, s->model.dtype, s->tf32, card, why, sizeof why) != 0)
        return lb_usage_error("invalid argument \"%s\" for --gpu: %s: should be another --dtype%s, or --spec", f->gpu, why,
                              s->tf32 ? " or no --tf32" : "");
    return 0;
}

int lb_cmd_predict(int argc, char **argv)
{
    LbRunSettings s;
    if (lb_run_settings_init(&s) != LB_OK)
        return lb_runtime_error(LB_ERR_NOMEM);
    PredictFlags f;
    memset(&f, 0, sizeof f);
    f.format = LB_FORMAT_TEXT;
    f.params = lb_predict_defaults();
    LbGrid grid;
    memset(&grid, 0, sizeof grid);
    LbPredictCard card;
    char default_dir[64], *command_line = NULL;
    int created = 0;

    int rc = parse_flags(argc, argv, &s, &f);
    if (rc == 0 && f.help) {
        lb_help_predict(stdout);
        goto out;
    }
    if (rc == 0)
        rc = lb_options_check_grid(&s, f.k_text ? f.k_text : lb_settings[LB_SET_K].def);
    if (rc == 0)
        rc = pick_card(&s, &f, &card);
    if (rc == 0 && (s.given & (UINT64_C(1) << LB_SET_MEM_LIMIT))) { /* refused as a sweep on the card refuses it */
        const uint64_t headroom = lb_run_settings_headroom(&s, card.memory_bytes);
        const uint64_t room = card.memory_bytes > headroom ? card.memory_bytes - headroom : 0;
        if (s.mem_limit > room) {
            lb_options_refuse_mem_limit(s.mem_limit, room, card.memory_bytes, "memory", headroom, card.label);
            rc = LB_EXIT_USAGE;
        }
    }
    if (rc != 0)
        goto out;
    lb_options_note_unread(s.given, s.models); /* --chunk without the chunked model ... */
    lb_options_note_no_ratio(s.models); /* --models standard alone */
    if (!f.out) {
        lb_outdir_default(default_dir, sizeof default_dir);
        f.out = default_dir;
    }
    if ((rc = lb_outdir_prepare(f.out, f.force, "--out", LB_OUTDIR_OFFER_FORCE)) != 0)
        goto out;
    created = 1;
    if (f.force && (rc = lb_outdir_clear_results(f.out)) != 0)
        goto out;
    command_line = lb_command_line(argc, argv);
    const LbPredictJob job = {&s, &card, &f.params, f.out, command_line ? command_line : "linbench predict"};
    double sweep_s = 0;
    lb_error_clear();
    int erc = lb_predict_run(&job, &grid, &sweep_s);
    if (erc != LB_OK) {
        rc = lb_runtime_error(erc);
        goto out;
    }
    created = 0;
    lb_grid_print(stdout, &grid, f.format);
    fflush(stdout);
    if (!f.quiet) {
        char budget[32];
        lb_format_size(lb_predict_budget(&s, &card), budget, sizeof budget);
        fprintf(stderr, "linbench: predicted for %s (%s %.4g TFLOP/s x %.3g, %.4g GB/s x %.3g, %.3g us per kernel, memory budget %s): a sweep of these cells would take about %.0f s at its fewest passes; results in %s\n",
                card.label, card.rate_kind, card.tflops, f.params.product_efficiency, card.bandwidth_gb_s,
                f.params.copy_efficiency, f.params.launch_us, budget, sweep_s, f.out);
    }
out:
    if (rc != 0 && created) {
        /* what the directory holds is this prediction's, cut short (it held no results, or --force
         * cleared them): a meta.csv saying running and a torn raw.csv would read as a result
         * that nothing will ever finish, since --resume refuses a prediction */
        (void)lb_outdir_clear_results(f.out);
        lb_outdir_abandon();
    }
    lb_grid_free(&grid);
    free(command_line);
    lb_run_settings_free(&s);
    return rc;
}
