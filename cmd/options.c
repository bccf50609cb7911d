/* The one parser and the generated help of every command's flags (the table: reports/settings.c),
 * and what sweep and run share around the settings. */
#include "cmd/options.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "attn/base/sizes.h"
#include "attn/base/status.h"
#include "cmd/commands.h"
#include "cmd/sweep/predict.h"
#include "reports/speedups.h"

/* The command of an LB_FOR_* bit: the table's entry at the bit's index. */
static const LbCommand *command_of(unsigned command)
{
    size_t i = 0;
    while (i + 1 < lb_command_count && !(command >> i & 1))
        i++;
    return &lb_commands[i];
}

int lb_options_parse(unsigned command, int argc, char **argv, LbRunSettings *s)
{
    const LbCommand *c = command_of(command);
    /* slurm takes sweep's flags too, to pass them on */
    const unsigned takes = command == LB_FOR_SLURM ? command | LB_FOR_SWEEP : command;
    struct option opts[LB_SET_COUNT + 1];
    int ids[LB_SET_COUNT], count = 0;
    char shorts[32] = ":";
    if (lb_run_settings_init(s) != LB_OK || !(s->cmd.passed = calloc((size_t)argc + 1, sizeof *s->cmd.passed)))
        return lb_runtime_error(LB_ERR_NOMEM);
    for (int id = 0; id < LB_SET_COUNT; id++) {
        const LbSetting *e = &lb_settings[id];
        int taken = !(e->commands & takes);
        for (int i = 0; i < count && !taken; i++) /* a command's own row before sweep's of that name */
            taken = strcmp(opts[i].name, e->flag) == 0;
        if (taken)
            continue;
        opts[count] = (struct option){e->flag, e->arg ? required_argument : no_argument, NULL, 256 + count};
        ids[count++] = id;
        if (e->short_flag)
            snprintf(shorts + strlen(shorts), sizeof shorts - strlen(shorts), "%c%s", e->short_flag, e->arg ? ":" : "");
    }
    memset(&opts[count], 0, sizeof opts[count]);
    optind = 0;
    opterr = 0;
    for (int at = 1, code, li = -1; (code = getopt_long(argc, argv, shorts, opts, &li)) != -1; at = optind, li = -1) {
        if (code == ':') {
            const char *typed = argv[optind - 1];
            int whole = strncmp(typed, "--", 2) != 0;
            for (int j = 0; j < count && !whole; j++)
                whole = strcmp(typed + 2, opts[j].name) == 0;
            if (!whole) /* a prefix of a flag, last on the line */
                return lb_usage_error("unknown flag \"%s\" for %s (see linbench %s --help)", typed, c->name, c->name);
            return lb_usage_error("flag %s needs a value (see linbench %s --help)", typed, c->name);
        }
        /* getopt_long takes any unambiguous prefix, so check --n 64 meant --no-autotune (and "64"
         * an operand) and plot DIR --n 512 --no-render: a flag counts only by its whole name */
        const char *typed = optarg && optind >= 2 && optarg == argv[optind - 1] ? argv[optind - 2] : argv[optind - 1];
        if (code >= 256 && li >= 0 && strncmp(typed, "--", 2) == 0 &&
            (strncmp(typed + 2, opts[li].name, strlen(opts[li].name)) != 0 ||
             (typed[2 + strlen(opts[li].name)] != '\0' && typed[2 + strlen(opts[li].name)] != '=')))
            return lb_usage_error("unknown flag \"%.*s\" for %s (see linbench %s --help)", (int)strcspn(typed, "="), typed,
                                  c->name, c->name);
        int i = code - 256;
        for (int j = 0; code < 256 && j < count; j++)
            if (lb_settings[ids[j]].short_flag == code)
                i = j;
        if (i < 0 || i >= count)
            return lb_usage_error("unknown flag \"%s\" for %s (see linbench %s --help)", argv[optind - 1], c->name, c->name);
        const LbSetting *e = &lb_settings[ids[i]];
        char should[160];
        s->given |= UINT64_C(1) << ids[i];
        if (ids[i] == LB_OPT_HELP) {
            lb_options_help(stdout, command);
            return LB_OPTIONS_HELPED;
        }
        if (lb_setting_apply(s, (LbSettingId)ids[i], optarg, 0, should, sizeof should) != 0)
            return lb_usage_error("invalid argument \"%s\" for --%s: should be %s", optarg ? optarg : "", e->flag, should);
        if (ids[i] == LB_SET_K)
            s->cmd.k_text = optarg;
        for (int j = at; j < optind && !(e->commands & command); j++)
            s->cmd.passed[s->cmd.npassed++] = argv[j];
    }
    s->cmd.args = optind;
    if (c->operands == 0 && optind < argc)
        return lb_usage_error("unexpected argument \"%s\" for %s: it takes flags only (see linbench %s --help)", argv[optind],
                              c->name, c->name);
    return 0;
}

char *lb_command_line(int argc, char **argv)
{
    size_t size = 16;
    for (int i = 0; i < argc; i++)
        size += strlen(argv[i]) + 3;
    char *s = malloc(size), *p = s;
    if (!s)
        return NULL;
    p += sprintf(p, "linbench");
    for (int i = 0; i < argc; i++)
        p += sprintf(p, strpbrk(argv[i], " \t\"'") ? " '%s'" : " %s", argv[i]);
    return s;
}

int lb_options_check_grid(LbRunSettings *s)
{
    return lb_run_settings_check_grid(s, NULL, 0) == LB_OK ? 0 : lb_usage_error("%s", lb_error_message());
}

/* The text column of --help: where a flag's help starts, and the widest line. */
#define HELP_COLUMN 22
#define HELP_WIDTH 94

/* The space-separated words on lines of at most `width` columns, the first line going on from
 * `column` (already reached), the next ones indented to `indent`. */
static void wrap(FILE *out, const char *words, int column, int indent, int width)
{
    int at = column;
    for (const char *p = words; *p;) {
        const int len = (int)strcspn(p, " ");
        if (at > indent && at + 1 + len > width) {
            fprintf(out, "\n%*s", indent, "");
            at = indent;
        } else if (at > indent) {
            fputc(' ', out);
            at++;
        }
        fprintf(out, "%.*s", len, p);
        at += len;
        p += len;
        while (*p == ' ')
            p++;
    }
}

/* What each model with a k axis takes as k ("linformer: projected length, 1 to n"), from the
 * model table: one line each under the text column, or (markdown) "; "-separated. */
static void help_k(FILE *out, int markdown)
{
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        const LbModelKind kind = (LbModelKind)m;
        if (!lb_model_has_k(kind))
            continue;
        char line[256];
        snprintf(line, sizeof line, "%s: %s, %s", lb_model_name(kind), lb_model_k_meaning(kind), lb_model_k_range(kind));
        if (markdown) {
            fprintf(out, "; %s", line);
            continue;
        }
        fprintf(out, "\n%*s", HELP_COLUMN, "");
        wrap(out, line, HELP_COLUMN, HELP_COLUMN + 2, HELP_WIDTH);
    }
}

/* Help text with "{models}" and "{cards}" replaced by the model and card tables' names ("{k}":
 * help_k, in markdown; --help puts it after the default), each '\n' a new line under the text
 * column (markdown: a space, '|' escaped). */
static void help_text(FILE *out, const char *t, int markdown)
{
    for (; *t; t++) {
        if (strncmp(t, "{models}", 8) == 0) {
            char names[256];
            lb_settings_model_names(LB_ALL_MODELS, ", ", ", ", names, sizeof names);
            fputs(names, out);
            t += 7;
        } else if (strncmp(t, "{cards}", 7) == 0) {
            char names[512];
            lb_gpu_spec_names(names, sizeof names);
            if (markdown)
                fputs(names, out);
            else
                wrap(out, names, HELP_COLUMN, HELP_COLUMN, HELP_WIDTH - 24);
            t += 6;
        } else if (strncmp(t, "{k}", 3) == 0) {
            if (markdown)
                help_k(out, 1);
            t += 2;
        } else if (*t == '\n') {
            if (markdown)
                fputc(' ', out);
            else
                fprintf(out, "\n%*s", HELP_COLUMN, "");
        } else {
            fputs(markdown && *t == '|' ? "\\|" : (char[2]){*t, 0}, out);
        }
    }
}

/* A row's default as --help words it: "(default 512:65536)", its own words, or "" for none (a
 * switch, a text, a value that prints empty). */
static char *default_text(const LbSetting *e, const LbRunSettings *defaults)
{
    if (e->def_help || !e->arg)
        return strdup(e->def_help ? e->def_help : "");
    char *d = lb_setting_text(defaults, (LbSettingId)(e - lb_settings));
    const char *v = e->def ? e->def : d ? d : "";
    char *t = malloc(strlen(v) + 16);
    if (t)
        sprintf(t, *v ? "(default %s)" : "", v);
    free(d);
    return t;
}

/* "--out DIR", "-o, --out DIR" */
static void flag_head(const LbSetting *e, char *buf, size_t size)
{
    char dash[8] = "";
    if (e->short_flag)
        snprintf(dash, sizeof dash, "-%c, ", e->short_flag);
    snprintf(buf, size, "%s--%s%s%s", dash, e->flag, e->arg ? " " : "", e->arg ? e->arg : "");
}

/* Each flag of `command` under its heading, as --help (markdown 0) or a README table row. */
static void flag_rows(FILE *out, unsigned command, int markdown)
{
    LbRunSettings defaults;
    if (lb_run_settings_init(&defaults) != LB_OK)
        return;
    for (const char *const *g = lb_setting_groups; *g; g++) {
        int first = 1;
        for (int id = 0; id < LB_SET_COUNT; id++) {
            const LbSetting *e = &lb_settings[id];
            if (!(e->commands & command) || strcmp(e->group, *g) != 0 || (markdown && id == LB_OPT_HELP))
                continue;
            if (first && **g && !markdown)
                fprintf(out, "%s\n", *g);
            first = 0;
            char head[64], *def = default_text(e, &defaults);
            flag_head(e, head, sizeof head);
            if (markdown) {
                /* the default's words alone: "(default: the GPU's\nfree memory)" is "the GPU's free memory" */
                char *v = def ? def + strspn(def, "\n") : NULL;
                if (v && strncmp(v, "(default", 8) == 0) {
                    v += 8 + (v[8] == ':');
                    v += strspn(v, " ");
                    v[strlen(v) - 1] = '\0';
                }
                fprintf(out, "| `%s` | ", head);
                help_text(out, v && *v ? v : "—", 1);
                fputs(" | ", out);
                help_text(out, e->help, 1);
                fputs(" |\n", out);
            } else {
                fprintf(out, "  %-*s%s", HELP_COLUMN - 2, head, strlen(head) >= HELP_COLUMN - 2 ? " " : "");
                help_text(out, e->help, 0);
                if (def && *def && def[0] != '\n')
                    fputc(' ', out);
                help_text(out, def ? def : "", 0);
                if (strstr(e->help, "{k}"))
                    help_k(out, 0);
                fputc('\n', out);
            }
            free(def);
        }
    }
    lb_run_settings_free(&defaults);
}

void lb_options_help(FILE *out, unsigned command)
{
    const LbCommand *c = command_of(command);
    fprintf(out, "usage: %s\n\n%s\n\n", c->usage, c->about);
    flag_rows(out, command, 0);
    if (c->notes)
        fprintf(out, "\n%s\n", c->notes);
}

void lb_options_markdown(FILE *out)
{
    for (size_t i = 0; i < lb_command_count; i++) {
        fprintf(out, "%sFlags of `%s`:\n\n| flag | default | meaning |\n| --- | --- | --- |\n", i ? "\n" : "",
                lb_commands[i].name);
        flag_rows(out, 1u << i, 1);
    }
    fputc('\n', out);
}

void lb_options_note_unread(uint64_t given, unsigned models)
{
    for (int id = 0; id < LB_SET_COUNT; id++) {
        const char *flag = lb_settings[id].flag;
        if (!(given >> id & 1) || lb_model_reads_flag(LB_MODEL_STANDARD, flag) < 0)
            continue;
        unsigned reading = 0; /* the models that read the flag */
        for (int m = 0; m < LB_MODEL_COUNT; m++)
            reading |= (unsigned)(lb_model_reads_flag((LbModelKind)m, flag) == 1) << m;
        if (models & reading)
            continue;
        char unread[128], readers[128];
        lb_settings_model_names(models, ", ", " and ", unread, sizeof unread);
        lb_settings_model_names(reading, ", ", " and ", readers, sizeof readers);
        fprintf(stderr, "linbench: note: --%s has no effect on %s: only %s %s it\n", flag, unread, readers,
                strchr(readers, ' ') ? "read" : "reads");
    }
}

void lb_options_note_no_ratio(unsigned models)
{
    int measured[LB_MODEL_COUNT];
    LbSpeedupPair pairs[LB_SPEEDUP_PAIRS_MAX];
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        measured[m] = (int)(models >> m & 1);
    if (lb_speedup_pairs(measured, pairs) > 0)
        return;
    /* the list as --models takes it, and the model table's baselines */
    char given[256], baselines[128];
    unsigned baseline = 0;
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        baseline |= (unsigned)(lb_model_baseline((LbModelKind)m) > 0) << m;
    lb_settings_model_names(models, ",", ",", given, sizeof given);
    lb_settings_model_names(baseline, ", ", ", ", baselines, sizeof baselines);
    fprintf(stderr, "linbench: note: --models %s forms no ratio: a speedup needs a baseline (%s) and another model, so every speedup grid will be NA (raw.csv still holds each cell); add one, such as --models standard,linformer\n",
            given, baselines);
}

int lb_open_error(int status)
{
    const int code = lb_runtime_error(status);
    return status == LB_ERR_INVALID ? LB_EXIT_USAGE : code;
}

int lb_runtime_error(int status)
{
    fprintf(stderr, "linbench: %s\n", lb_error_message());
    return status == LB_ERR_INTERRUPTED ? LB_EXIT_INTERRUPTED : LB_EXIT_FAILURE;
}

/* The first number after `key` on a line of a /proc or /sys file that starts with it, times
 * `unit`; -1 when absent. An empty key reads the file's first line ("max" reads as absent). */
static int read_number(const char *path, const char *key, uint64_t unit, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    int rc = -1;
    size_t klen = strlen(key);
    while (rc != 0 && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *end = NULL;
        const unsigned long long v = strtoull(line + klen, &end, 10); /* past blanks */
        if (end != line + klen) {
            *out = v > UINT64_MAX / unit ? UINT64_MAX : (uint64_t)v * unit;
            rc = 0;
        }
        if (klen == 0)
            break;
    }
    fclose(f);
    return rc;
}

/* The cgroup v2 directory of this process (/sys/fs/cgroup + the "0::" line of
 * /proc/self/cgroup) into buf; -1 when there is none. */
static int cgroup_dir(char *buf, size_t size)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return -1;
    char line[4096];
    int rc = -1;
    while (rc != 0 && fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3) != 0)
            continue;
        line[strcspn(line, "\n")] = '\0';
        int n = snprintf(buf, size, "/sys/fs/cgroup%s", strcmp(line + 3, "/") == 0 ? "" : line + 3);
        rc = n > 0 && (size_t)n < size ? 0 : -1;
    }
    fclose(f);
    return rc;
}

static void take_min(uint64_t v, const char *why, uint64_t *best, const char **what)
{
    if (v < *best) {
        *best = v;
        *what = why;
    }
}

/* A cgroup's room: the number in `limit` less the one in `usage` (0 when unreadable). */
static void take_cgroup(const char *limit, const char *usage, const char *why, uint64_t *best, const char **what)
{
    uint64_t v, used = 0;
    if (read_number(limit, "", 1, &v) != 0)
        return;
    (void)read_number(usage, "", 1, &used);
    take_min(v > used ? v - used : 0, why, best, what);
}

/* The memory this process can still have; `what` names the limit that bound it. -1: none read. */
static int host_memory_available(uint64_t *bytes, const char **what)
{
    uint64_t best = UINT64_MAX, v;
    *what = NULL;
    if (read_number("/proc/meminfo", "MemAvailable:", 1024, &v) == 0)
        take_min(v, "MemAvailable in /proc/meminfo", &best, what);
    char dir[4096], limit[4200], usage[4200];
    if (cgroup_dir(dir, sizeof dir) == 0) {
        snprintf(limit, sizeof limit, "%s/memory.max", dir);
        snprintf(usage, sizeof usage, "%s/memory.current", dir);
        take_cgroup(limit, usage, "the cgroup's memory.max", &best, what);
    }
    take_cgroup("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes",
                "the cgroup's memory.limit_in_bytes", &best, what);
    /* Address-space and data limits count what the process already maps. */
    uint64_t mapped = 0, data = 0;
    (void)read_number("/proc/self/status", "VmSize:", 1024, &mapped);
    (void)read_number("/proc/self/status", "VmData:", 1024, &data);
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        take_min(rl.rlim_cur > mapped ? rl.rlim_cur - mapped : 0, "the address-space limit (ulimit -v)", &best, what);
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        take_min(rl.rlim_cur > data ? rl.rlim_cur - data : 0, "the data-size limit (ulimit -d)", &best, what);
    if (!*what)
        return -1;
    *bytes = best;
    return 0;
}

int lb_options_check_host_memory(const LbRunSettings *o)
{
    if (o->device != LB_DEVICE_CPU)
        return 0;
    uint64_t want = o->mem_limit ? o->mem_limit : LB_CPU_DEFAULT_MEM, have;
    const char *what;
    if (host_memory_available(&have, &what) != 0 || want <= have)
        return 0;
    char w[32], h[32];
    lb_format_size(want, w, sizeof w);
    lb_format_size(have, h, sizeof h);
    if (o->mem_limit)
        return lb_usage_error("invalid argument \"%s\" for --mem-limit: should be at most %s with --device cpu, the memory this process can have (%s)",
                              w, h, what);
    fprintf(stderr, "linbench: the CPU reference's default budget of %s is more than the %s this process can have (%s): pass a smaller --mem-limit\n",
            w, h, what);
    return LB_EXIT_FAILURE;
}

int lb_options_open_backend(const LbRunSettings *o, LbBackend **be, uint64_t *budget)
{
    int rc;
    if (o->device == LB_DEVICE_CPU) {
        uint64_t cap = o->mem_limit ? o->mem_limit : LB_CPU_DEFAULT_MEM;
        rc = lb_cpu_backend_open(o->model.dtype, (size_t)cap, be);
        if (rc != LB_OK)
            return lb_runtime_error(rc);
        *budget = cap;
        return 0;
    }
    rc = lb_cuda_backend_open(o->gpu, o->model.dtype, o->tf32, be);
    if (rc != LB_OK)
        return lb_open_error(rc);
    (*be)->autotune = o->autotune;
    size_t free_bytes = 0, total = 0;
    rc = (*be)->ops->mem_info(*be, &free_bytes, &total);
    const int code = rc != LB_OK ? lb_runtime_error(rc)
                                 : lb_options_gpu_budget(o, free_bytes, total, "the GPU", "this GPU", budget);
    if (code != 0) {
        lb_backend_close(*be);
        *be = NULL;
    }
    return code;
}

int lb_options_gpu_budget(const LbRunSettings *o, uint64_t free_bytes, uint64_t total, const char *gpu,
                          const char *where, uint64_t *budget)
{
    const uint64_t headroom = lb_run_settings_headroom(o, total);
    if (free_bytes <= headroom) {
        char f[32], h[32];
        lb_format_size(free_bytes, f, sizeof f);
        lb_format_size(headroom, h, sizeof h);
        fprintf(stderr, "linbench: %s has %s free, no more than the %s headroom kept for the driver and libraries: free memory, or pass a smaller --headroom\n",
                gpu, f, h);
        return LB_EXIT_FAILURE;
    }
    *budget = free_bytes - headroom;
    /* a --mem-limit the GPU cannot give is refused, as --device cpu refuses one above the host's
     * memory: capped, meta.csv would record a limit the sweep never had (one taken from a
     * resumed meta.csv is held to the budget recorded beside it instead) */
    if (o->mem_limit > *budget && (o->given & (UINT64_C(1) << LB_SET_MEM_LIMIT))) {
        lb_options_refuse_mem_limit(o->mem_limit, *budget, free_bytes, "free memory", headroom, where);
        return LB_EXIT_USAGE;
    }
    if (o->mem_limit && o->mem_limit < *budget)
        *budget = o->mem_limit;
    return 0;
}

void lb_options_refuse_mem_limit(uint64_t mem_limit, uint64_t room, uint64_t memory, const char *memory_kind,
                                 uint64_t headroom, const char *where)
{
    char w[32], r[32], f[32], h[32];
    lb_format_size(mem_limit, w, sizeof w);
    lb_format_size(room, r, sizeof r);
    lb_format_size(memory, f, sizeof f);
    lb_format_size(headroom, h, sizeof h);
    (void)lb_usage_error("invalid argument \"%s\" for --mem-limit: should be at most %s on %s, its %s (%s) less the headroom (%s; see --headroom)",
                         w, r, where, memory_kind, f, h);
}
