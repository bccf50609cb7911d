/* README.md and docs/METHOD.md against the binary they describe, with nothing but the repository
 * and its build:
 *   - README's flag tables (between their marker comments) are `linbench help --markdown`, as is.
 *   - Flags: every other --flag the documents name is a flag of the linbench command it is given
 *     to (`linbench CMD ... --flag`, `CMD --flag`), by the option table; a flag named with no
 *     command is a flag of some command. Code of other programs (meson, sbatch) is not linbench's.
 *   - Defaults: "`--flag` ... (default V)" in prose says what the option table says.
 *   - Columns: every header the documents spell (`a,b,c` after a file's name, "…" for "and so
 *     on"), README's column table of raw.csv, and every meta.csv key they name match the files a
 *     CPU sweep with --breakdown, a run --dump and a predict write, read back through libcsv.
 * With `samples` (the test test_readme_samples), README's sample outputs instead, where they do
 * not depend on the machine or the clock (predictions, largest batches, memory saved): a block
 * after `<!-- sample: output -->` is consecutive lines of what the last command of the ```sh block
 * above it printed (stdout, then stderr; the commands before it run first, as written, in a
 * scratch directory); after `<!-- sample: memory saved -->`, a sweep's closing grids: the n of
 * each row, the memory-saved half of each grid line (after its `|`) and the lines without one.
 * Each kind must have checked a fair number of things, so a document the parser no longer reads
 * fails rather than passes empty.
 * Usage: test_method_doc SOURCE_DIR PATH-TO-LINBENCH [samples] */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>

#include "attn/base/status.h"
#include "cmd/commands.h"
#include "reports/csv_io.h"
#include "reports/meta.h"
#include "reports/settings.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static char bin[PATH_MAX];
static int flags_checked, defaults_checked, columns_checked, samples_checked;

#define TABLES_BEGIN "<!-- flag tables: the output of `linbench help --markdown`, generated from the option table -->\n"
#define TABLES_END "<!-- end of the flag tables -->\n"

/* README's flag tables are the binary's own. */
static void check_tables(const char *readme)
{
    const char *a = strstr(readme, TABLES_BEGIN), *b = a ? strstr(a, TABLES_END) : NULL;
    if (!lb_check(a && b, "README.md has its flag tables between the marker comments"))
        return;
    a += strlen(TABLES_BEGIN);
    LbRun r = lb_run(LB_ARGV(bin, "help", "--markdown"));
    const size_t len = (size_t)(b - a);
    lb_check(r.code == 0 && r.out && strlen(r.out) == len && strncmp(r.out, a, len) == 0,
             "README.md's flag tables are not `linbench help --markdown` (exit %d): regenerate them", r.code);
    lb_run_free(&r);
}

/* The command table's index of `name`, or -1. */
static int command_index(const char *name)
{
    const LbCommand *c = lb_command_find(name);
    return c ? (int)(c - lb_commands) : -1;
}

/* Whether command c takes --flag (slurm takes sweep's too); c -1: any command. */
static int command_has_flag(int c, const char *flag)
{
    const unsigned mask = c < 0 ? ~0u : (1u << c) | ((1u << c) == LB_FOR_SLURM ? LB_FOR_SWEEP : 0);
    for (int id = 0; id < LB_SET_COUNT; id++)
        if ((lb_settings[id].commands & mask) && strcmp(lb_settings[id].flag, flag) == 0)
            return 1;
    return c < 0 && strcmp(flag, "version") == 0;
}

/* Whether `value` stands in `text` as whole words (not "10" inside "100"). */
static int has_words(const char *text, const char *value)
{
    const size_t len = strlen(value);
    for (const char *p = strstr(text, value); len && p; p = strstr(p + 1, value)) {
        const int before = p == text || !isalnum((unsigned char)p[-1]);
        const int after = !isalnum((unsigned char)p[len]);
        if (before && after)
            return 1;
    }
    return 0;
}

/* ---- flags in the documents ---------------------------------------------------------------- */

static int is_command(const char *word) { return lb_command_find(word) != NULL; }

/* The flag at `at` (its name's lower-case letters, digits and dashes, after "--") */
static void check_flag(const char *at, const char *cmd, const char *where)
{
    char flag[64] = "";
    sscanf(at, "%63[a-z0-9-]", flag);
    flags_checked++;
    if (cmd && cmd[0])
        lb_check(command_has_flag(command_index(cmd), flag), "%s names --%s for linbench %s, which takes no such flag",
                 where, flag, cmd);
    else
        lb_check(command_has_flag(-1, flag), "%s names --%s, which no linbench command takes", where, flag);
}

/* VAR=value */
static int is_assignment(const char *w)
{
    if (!isalpha((unsigned char)w[0]) && w[0] != '_')
        return 0;
    while (isalnum((unsigned char)*w) || *w == '_')
        w++;
    return *w == '=';
}

/* The flags of a piece of shell-like code, each checked against the linbench command it is given
 * to: `linbench CMD ...`, a piece that starts with a command's name (`run --dump DIR`), or, for a
 * piece that starts with a flag (`--k LIST`), `implicit` ("" for none). Another program's flags
 * (meson, sbatch) are not looked at. *cmd_out: the command the code runs, if it names one. */
static void code_flags(const char *code, const char *implicit, const char *where, char *cmd_out, size_t cmd_size)
{
    char *buf = strdup(code);
    if (!buf)
        return;
    /* markdown's escaped \| is a literal bar in a value (cuda\|cpu), not a pipe */
    for (char *p = buf; *p; p++) {
        if (p[0] == '\\' && (p[1] == '|' || p[1] == '\n'))
            p[0] = ' ', p[1] = p[1] == '|' ? '/' : ' ';
        if (*p == '\n' || *p == ';' || *p == '|' || *p == '&' || *p == '(' || *p == ')' || *p == '`')
            *p = '\n';
        if (p[0] == '$' && p[1] == '(')
            p[0] = '\n';
    }
    char *outer = NULL;
    for (char *piece = strtok_r(buf, "\n", &outer); piece; piece = strtok_r(NULL, "\n", &outer)) {
        char *words[64];
        int n = 0;
        for (char *save = NULL, *w = strtok_r(piece, " \t", &save); w && n < 64; w = strtok_r(NULL, " \t", &save))
            words[n++] = w;
        int i = 0;
        while (i < n && (strcmp(words[i], "do") == 0 || strcmp(words[i], "then") == 0 || strcmp(words[i], "exec") == 0 ||
                         is_assignment(words[i])))
            i++; /* shell keywords and VAR=value before the program */
        if (i >= n)
            continue;
        const char *program = strrchr(words[i], '/') ? strrchr(words[i], '/') + 1 : words[i];
        const char *cmd;
        if (strcmp(program, "linbench") == 0) {
            cmd = i + 1 < n && is_command(words[i + 1]) ? words[i + 1] : "";
        } else if (is_command(words[i])) {
            cmd = words[i];
        } else if (words[i][0] == '-') {
            cmd = implicit;
        } else {
            continue; /* another program */
        }
        if (cmd_out && cmd[0] && !cmd_out[0])
            snprintf(cmd_out, cmd_size, "%s", cmd);
        for (int j = i; j < n; j++)
            if (strncmp(words[j], "--", 2) == 0 && islower((unsigned char)words[j][2]))
                check_flag(words[j] + 2, cmd, where);
    }
    free(buf);
}

/* --flags in prose (outside code): given to no command in particular. */
static void prose_flags(const char *text, const char *where)
{
    for (const char *p = strstr(text, "--"); p; p = strstr(p + 2, "--")) {
        if ((p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '-')) && islower((unsigned char)p[2]))
            check_flag(p + 2, "", where);
    }
}

/* ---- the files a CPU sweep and a run --dump write ------------------------------------------ */

static char sweep_dir[512], dump_dir[512], predict_dir[512];
static LbMeta metas[3]; /* the sweep's, the dump's and predict's (whose predict_* keys are documented too) */

static void write_files(const char *scratch)
{
    snprintf(sweep_dir, sizeof sweep_dir, "%s/sweep", scratch);
    snprintf(dump_dir, sizeof dump_dir, "%s/dump", scratch);
    snprintf(predict_dir, sizeof predict_dir, "%s/predict", scratch);
    char *sweep[] = {(char *)bin, "sweep", "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2",
                     "--ffn", "32", "--vocab", "100", "--models", "standard,linformer,chunked,performer", "--n",
                     "256,512", "--k", "128,256", "--max-batch", "1", "--cell-time", "1", "--breakdown", "-q",
                     "--out", sweep_dir, NULL};
    char *dump[] = {(char *)bin, "run", "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn",
                    "32", "--vocab", "100", "--model", "linformer", "--n", "32", "--k", "8", "--dump", dump_dir, NULL};
    char *predict[] = {(char *)bin, "predict", "--gpu", "a10", "--n", "512", "--k", "128", "-q", "--out", predict_dir, NULL};
    char **runs[] = {sweep, dump, predict};
    const char *dirs[] = {sweep_dir, dump_dir, predict_dir};
    for (int i = 0; i < 3; i++) {
        lb_run_ok(runs[i], runs[i][1]);
        char path[700];
        snprintf(path, sizeof path, "%s/meta.csv", dirs[i]);
        lb_check(lb_meta_read(path, &metas[i]) == LB_OK, "%s's meta.csv reads back: %s", runs[i][1], lb_error_message());
    }
}

/* names (count of them; "…" or "..." ends a list that goes on) against the header of file as a
 * CPU sweep or run --dump wrote it, read back through libcsv */
static void check_columns(const char *file, char names[][64], int count, const char *where)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", strcmp(file, "index.csv") == 0 ? dump_dir : sweep_dir, file);
    struct stat st;
    LbCsvTable t;
    memset(&t, 0, sizeof t);
    if (stat(path, &st) != 0 || lb_csv_read_file(path, 0, &t) != LB_OK || t.rows == 0) {
        printf("%s: %s is not written by a CPU sweep or run --dump: its columns not checked\n", where, file);
        return;
    }
    const LbCsvRow *h = &t.row[0];
    int open_ended = 0;
    for (int i = 0; i < count; i++) {
        if (strcmp(names[i], "…") == 0 || strcmp(names[i], "...") == 0) {
            open_ended = 1;
            break;
        }
        columns_checked++;
        lb_check((size_t)i < h->count && strcmp(h->fields[i], names[i]) == 0,
                 "%s: column %d of %s is \"%s\", the file's is \"%s\"", where, i + 1, file, names[i],
                 (size_t)i < h->count ? h->fields[i] : "(none)");
    }
    if (!open_ended)
        lb_check(h->count == (size_t)count, "%s: names %d columns of %s, the file has %zu", where, count, file, h->count);
    lb_csv_table_free(&t);
}

static void check_meta_key(const char *key, const char *where)
{
    columns_checked++;
    lb_check(lb_meta_get(&metas[0], key) || lb_meta_get(&metas[1], key) || lb_meta_get(&metas[2], key),
             "%s names meta.csv key %s, which no sweep's, dump's or prediction's meta.csv has", where, key);
}

/* ---- reading the documents ----------------------------------------------------------------- */

typedef struct Span {
    const char *start; /* inside the backticks */
    size_t len;
} Span;

/* The `code spans` of text (which may run over a line end), at most max. */
static int spans(const char *text, Span *out, int max)
{
    int n = 0;
    for (const char *p = strchr(text, '`'); p && n < max;) {
        const char *q = strchr(p + 1, '`');
        if (!q)
            break;
        out[n].start = p + 1;
        out[n].len = (size_t)(q - p - 1);
        n++;
        p = strchr(q + 1, '`');
    }
    return n;
}

/* A span's text with its white space removed (a header wrapped over two lines). */
static void span_text(const Span *s, char *buf, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; i < s->len && o + 1 < size; i++)
        if (!isspace((unsigned char)s->start[i]))
            buf[o++] = s->start[i];
    buf[o] = '\0';
}

static int is_csv_name(const char *t)
{
    const size_t len = strlen(t);
    return len > 4 && strcmp(t + len - 4, ".csv") == 0 && !strchr(t, ' ');
}

/* `a,b,c`: a header as the documents spell one (no spaces, two or more names). */
static int split_header(const char *t, char names[][64], int max)
{
    if (!strchr(t, ',') || strchr(t, ' '))
        return 0;
    int n = 0;
    for (const char *p = t; *p && n < max;) {
        const size_t len = strcspn(p, ",");
        if (len == 0 || len >= 64)
            return 0;
        snprintf(names[n++], 64, "%.*s", (int)len, p);
        p += len + (p[len] == ',');
    }
    for (int i = 0; i < n; i++)
        for (const char *c = names[i]; *c; c++)
            if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '=' || *c == '.' || (unsigned char)*c >= 0x80))
                return 0;
    return n;
}

static int is_meta_key(const char *t)
{
    return islower((unsigned char)t[0]) && strchr(t, '_') && strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(t);
}

static int span_has_flag(const Span *s)
{
    for (size_t i = 0; i + 1 < s->len; i++)
        if (s->start[i] == '-' && s->start[i + 1] == '-')
            return 1;
    return 0;
}

/* After the span s: "(default V)" or ", default V" before the next span that names a flag;
 * V a code span or a number. 1 with V in value. */
static int stated_default(const Span *s, const Span *next, int nnext, char *value, size_t size)
{
    const char *from = s->start + s->len + 1, *limit = from + 90;
    for (int i = 0; i < nnext; i++)
        if (span_has_flag(&next[i]) && next[i].start - 1 < limit)
            limit = next[i].start - 1;
    const char *d = NULL;
    for (const char *p = from; p < limit && *p; p++)
        if (strncmp(p, "default ", 8) == 0 && p > from && (p[-1] == '(' || p[-1] == ' ')) {
            d = p + 8;
            break;
        }
    if (!d || d >= limit)
        return 0;
    if (*d == '`') {
        const char *e = strchr(d + 1, '`');
        if (!e)
            return 0;
        snprintf(value, size, "%.*s", (int)(e - d - 1), d + 1);
        return 1;
    }
    if (!isdigit((unsigned char)*d))
        return 0;
    size_t len = 0;
    while (isalnum((unsigned char)d[len]) || d[len] == ':' || d[len] == '.')
        len++;
    while (len && d[len - 1] == '.')
        len--;
    snprintf(value, size, "%.*s", (int)len, d);
    return 1;
}

/* value (what a document says) against --flag's default in the option table: its def, its
 * def_help's words or the default as printed; a switch without one is off. cmd "": any command. */
static void check_default(const char *flag, const char *cmd, const char *stated, const char *where)
{
    char value[256];
    snprintf(value, sizeof value, "%s", stated);
    char *paren = strstr(value, " (");
    if (paren)
        *paren = '\0'; /* "early (late with none)": the default, then when it differs */
    if (!value[0] || strcmp(value, "—") == 0 || strcmp(value, "-") == 0)
        return;
    defaults_checked++;
    LbRunSettings defaults;
    lb_run_settings_init(&defaults);
    const int c = cmd[0] ? command_index(cmd) : -1;
    int found = 0, agrees = 0;
    for (int id = 0; id < LB_SET_COUNT && !agrees; id++) {
        const LbSetting *e = &lb_settings[id];
        if (strcmp(e->flag, flag) != 0 || (c >= 0 && !(e->commands & (1u << c))))
            continue;
        found = 1;
        char *printed = lb_setting_text(&defaults, (LbSettingId)id);
        agrees = (e->def && has_words(e->def, value)) || (e->def_help && has_words(e->def_help, value)) ||
                 (!e->def && !e->def_help && e->arg && printed && has_words(printed, value)) ||
                 (!e->arg && strcmp(value, "off") == 0);
        free(printed);
    }
    lb_run_settings_free(&defaults);
    lb_check(found && agrees, "%s: default of --%s%s%s stated as \"%s\", the option table says otherwise%s", where, flag,
             cmd[0] ? " for " : "", cmd, value, found ? "" : " (no such flag)");
}

/* ---- README's samples --------------------------------------------------------------------- */

/* Runs the commands of an sh block (lines joined at a trailing backslash, split at newlines and
 * "&&", "# ..." comments dropped) in dir; returns the last one's standard output (malloc'd), or
 * NULL when one failed or is not a linbench command. */
static char *run_block(const char *block, const char *dir, const char *where)
{
    char *text = strdup(block), *last = NULL;
    for (char *p = text; *p; p++) /* "\\\n": one command over two lines */
        if (p[0] == '\\' && p[1] == '\n')
            p[0] = p[1] = ' ';
    int ok = lb_check(chdir(dir) == 0, "%s: cannot enter %s", where, dir);
    char *save_line = NULL;
    for (char *line = strtok_r(text, "\n", &save_line); line && ok; line = strtok_r(NULL, "\n", &save_line)) {
        char *hash = strstr(line, " #");
        if (hash)
            *hash = '\0';
        for (char *cmd = line; cmd && ok;) {
            char *amp = strstr(cmd, "&&"), *argv[64], *save = NULL;
            if (amp)
                *amp = '\0';
            int argc = 0;
            for (char *w = strtok_r(cmd, " \t", &save); w && argc < 63; w = strtok_r(NULL, " \t", &save))
                argv[argc++] = w;
            argv[argc] = NULL;
            cmd = amp ? amp + 2 : NULL;
            ok = argc == 0 || lb_check(strcmp(argv[0], "linbench") == 0, "%s: `%s` is not a linbench command", where, argv[0]);
            if (argc == 0 || !ok)
                continue;
            argv[0] = bin;
            LbRun r = lb_run(argv);
            ok = lb_check(r.code == 0, "%s: `linbench %s ...` exits %d: %s", where, argv[1], r.code, r.err);
            free(last);
            last = ok ? malloc(strlen(r.out) + strlen(r.err) + 1) : NULL;
            if (last)
                strcat(strcpy(last, r.out), r.err);
            lb_run_free(&r);
        }
    }
    free(text);
    if (!ok) {
        free(last);
        last = NULL;
    }
    return last;
}

/* The next line of *p (without its newline, into buf), advancing *p; 0 at the end. */
static int next_line(const char **p, char *buf, size_t size)
{
    if (!*p || !**p)
        return 0;
    const char *nl = strchr(*p, '\n');
    const size_t len = nl ? (size_t)(nl - *p) : strlen(*p);
    snprintf(buf, size, "%.*s", (int)(len < size ? len : size - 1), *p);
    *p = nl ? nl + 1 : *p + len;
    return 1;
}

/* A line as a sample compares it: whole, or (a grid line) its memory-saved half and its n:
 * "  128  1.54x ... |  2.23x ..." -> "128|  2.23x ...". */
static void compared(int whole, const char *line, char *out, size_t size)
{
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", line); /* out may be line */
    const char *bar = strrchr(copy, '|'), *n = copy;
    if (whole || !bar) {
        snprintf(out, size, "%s", copy);
        return;
    }
    while (*n == ' ')
        n++;
    snprintf(out, size, "%.*s|%s", (int)strcspn(n, " "), n, bar + 1);
}

static void check_sample(const char *mode, const char *sample, const char *out, const char *where)
{
    const int whole = strcmp(mode, "output") == 0;
    if (!lb_check(whole || strcmp(mode, "memory saved") == 0, "%s: unknown sample mode \"%s\" (output, memory saved)",
                  where, mode))
        return;
    /* the output from the line that starts the sample on (for a grid, by its memory half: the
     * time half's widths follow the times) */
    char want[1024], got[1024], w[1024], g[1024];
    const char *s = sample, *o = out;
    next_line(&s, want, sizeof want);
    compared(whole, want, want, sizeof want);
    for (const char *at = out; at && *at; at = o) {
        const char *probe = at;
        next_line(&probe, got, sizeof got);
        compared(whole, got, got, sizeof got);
        if (strcmp(got, want) == 0)
            break;
        o = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL;
    }
    if (!lb_check(o && *o, "%s: the output has no line \"%s\" (regenerate the sample):\n%s", where, want, out))
        return;
    s = sample;
    for (int line = 1; next_line(&s, want, sizeof want); line++) {
        const int ho = next_line(&o, got, sizeof got);
        compared(whole, want, w, sizeof w);
        compared(whole, ho ? got : "(ends)", g, sizeof g);
        if (!lb_check(strcmp(w, g) == 0, "%s: sample line %d differs from today's output%s (regenerate it):\n"
                      "  README: %s\n  output: %s", where, line, whole ? "" : " beyond the times", want,
                      ho ? got : "(ends)"))
            return;
    }
    samples_checked++;
}

typedef struct Doc {
    const char *name;
    char *text;
    char last_file[64]; /* the file the last paragraph was about, for a column table after it */
    int samples;        /* read for its samples, not its flags */
    int fence_sh;       /* the fence being read is ```sh */
    char *sh;           /* the last ```sh block */
    char mode[64];      /* a sample marker's mode, waiting for its block */
    const char *scratch;
} Doc;

/* A block as the samples see it: ```sh blocks remembered, a marker's mode, then its block
 * checked against the output of the last ```sh block's commands. */
static void sample_block(Doc *doc, int kind, const char *block, int line)
{
    char where[64];
    snprintf(where, sizeof where, "%s:%d", doc->name, line);
    const char *marker = kind == 'p' ? strstr(block, "<!-- sample: ") : NULL;
    if (kind == 'f' && !doc->fence_sh && doc->mode[0]) {
        char dir[320];
        snprintf(dir, sizeof dir, "%s/%d", doc->scratch, line);
        mkdir(dir, 0755);
        char *out = doc->sh ? run_block(doc->sh, dir, where) : NULL;
        lb_check(doc->sh != NULL, "%s: a sample with no ```sh block above it", where);
        if (out)
            check_sample(doc->mode, block, out, where);
        free(out);
    } else if (doc->mode[0]) {
        lb_check(0, "%s: a sample marker not right before its block", where);
    }
    doc->mode[0] = '\0';
    if (kind == 'f' && doc->fence_sh) {
        free(doc->sh);
        doc->sh = strdup(block);
    } else if (marker && sscanf(marker, "<!-- sample: %63[a-z ] -->", doc->mode) == 1) {
        for (size_t n = strlen(doc->mode); n && doc->mode[n - 1] == ' ';)
            doc->mode[--n] = '\0';
        lb_check(!strchr(marker, '\n') || !strchr(marker, '\n')[1], "%s: a sample marker not right before its block",
                 where);
    }
}

/* A paragraph, or a table's cell: the flags in it (given to `implicit` where a span starting
 * with a flag names no command), the defaults it states, the headers and meta.csv keys it
 * names after a file. */
static void read_text(Doc *doc, const char *text, int line, const char *implicit)
{
    char where[128];
    snprintf(where, sizeof where, "%s:%d", doc->name, line);
    Span s[256];
    const int n = spans(text, s, 256);
    /* prose: the text outside the spans */
    char *prose = strdup(text);
    for (int i = 0; prose && i < n; i++)
        memset(prose + (s[i].start - text) - 1, ' ', s[i].len + 2);
    if (prose)
        prose_flags(prose, where);
    free(prose);
    char file[64] = "";
    for (int i = 0; i < n; i++) {
        char raw[1024], flat[1024], names[64][64];
        snprintf(raw, sizeof raw, "%.*s", (int)s[i].len, s[i].start);
        span_text(&s[i], flat, sizeof flat);
        char cmd[16] = "";
        code_flags(raw, implicit, where, cmd, sizeof cmd);
        char value[256];
        const char *dashes = strstr(raw, "--"); /* a span of one flag */
        if (dashes && !strstr(dashes + 2, "--") && stated_default(&s[i], s + i + 1, n - i - 1, value, sizeof value)) {
            char flag[64] = "";
            sscanf(dashes + 2, "%63[a-z0-9-]", flag);
            check_default(flag, cmd[0] ? cmd : implicit, value, where);
        }
        const char *base = strrchr(flat, '/') ? strrchr(flat, '/') + 1 : flat;
        int count;
        if (is_csv_name(base)) {
            snprintf(file, sizeof file, "%s", base);
            snprintf(doc->last_file, sizeof doc->last_file, "%s", base);
        } else if (file[0] && (count = split_header(flat, names, 64)) > 0) {
            check_columns(file, names, count, where);
        } else if (strcmp(file, "meta.csv") == 0 && is_meta_key(flat)) {
            check_meta_key(flat, where);
        }
    }
}

/* A table's row split at its unescaped bars: cells trimmed, in place. */
static int cells(char *row, char **out, int max)
{
    int n = 0;
    char *p = row;
    while (*p == ' ')
        p++;
    if (*p == '|')
        p++;
    while (*p && n < max) {
        char *start = p;
        while (*p && !(*p == '|' && (p == row || p[-1] != '\\')))
            p++;
        const int last = *p == '\0';
        *p = '\0';
        while (*start == ' ')
            start++;
        char *end = start + strlen(start);
        while (end > start && end[-1] == ' ')
            *--end = '\0';
        if (!(last && !*start))
            out[n++] = start;
        if (last)
            break;
        p++;
    }
    return n;
}

static void read_table(Doc *doc, char *table, int line)
{
    char where[128];
    char *rows[256];
    int nrows = 0;
    char *save = NULL;
    for (char *r = strtok_r(table, "\n", &save); r && nrows < 256; r = strtok_r(NULL, "\n", &save))
        rows[nrows++] = r;
    if (nrows == 0)
        return;
    /* a row (| ... |) with no header and `| --- |` line above it renders as text, and nothing here
     * reads it: a row that has drifted out of its table (a line of prose that starts with a bar,
     * |x|² in a formula, is no row) */
    snprintf(where, sizeof where, "%s:%d", doc->name, line);
    const size_t len0 = strlen(rows[0]);
    const int is_row = len0 > 1 && rows[0][len0 - 1] == '|';
    if (!lb_check(!is_row || (nrows >= 2 && strspn(rows[1], "|-: ") == strlen(rows[1]) && strchr(rows[1], '-')),
                  "%s: a table row outside a table (no header and | --- | line above it): %.60s", where, rows[0]) ||
        nrows < 2)
        return;
    char *head[16];
    const int nhead = cells(rows[0], head, 16);
    const int column_table = nhead >= 1 && strcmp(head[0], "column") == 0;
    /* the file the paragraph before the table was about: a row may name another (raw.csv's energy
     * row names meta.csv's energy_note) */
    char table_file[sizeof doc->last_file];
    snprintf(table_file, sizeof table_file, "%s", doc->last_file);
    char columns[64][64];
    int ncolumns = 0;
    for (int r = 2; r < nrows; r++) {
        snprintf(where, sizeof where, "%s:%d", doc->name, line + r);
        char *cell[16];
        const int nc = cells(rows[r], cell, 16);
        if (nc < 1)
            continue;
        /* a row about `linbench CMD`: the flags in it are CMD's */
        char row_cmd[16] = "";
        const char *named = strstr(cell[0], "`linbench ");
        if (named)
            sscanf(named + 10, "%15[a-z]", row_cmd);
        if (!is_command(row_cmd))
            row_cmd[0] = '\0';
        for (int c = 0; c < nc; c++) {
            read_text(doc, cell[c], line + r, row_cmd);
            Span s[64];
            const int ns = spans(cell[c], s, 64);
            for (int i = 0; column_table && c == 0 && i < ns && ncolumns < 64; i++)
                span_text(&s[i], columns[ncolumns++], 64);
        }
    }
    if (column_table) {
        snprintf(where, sizeof where, "%s:%d", doc->name, line);
        check_columns(table_file, columns, ncolumns, where);
    }
}

/* One block of the document: fenced code, a table, or a paragraph. */
static void read_block(Doc *doc, int kind, char *block, int line)
{
    if (doc->samples) {
        sample_block(doc, kind, block, line);
    } else if (kind == 'f') {
        /* line by line, a line ending in \ going on into the next: one command */
        int at = line;
        for (char *p = block; *p;) {
            char where[128];
            char *end = p;
            int lines = 1;
            while (*end && !(*end == '\n' && (end == p || end[-1] != '\\')))
                lines += *end++ == '\n';
            const char keep = *end;
            *end = '\0';
            snprintf(where, sizeof where, "%s:%d", doc->name, at);
            code_flags(p, "", where, NULL, 0);
            at += lines;
            p = keep ? end + 1 : end;
        }
    } else if (kind == 't') {
        read_table(doc, block, line);
    } else {
        read_text(doc, block, line, "");
    }
}

static void read_doc(const char *dir, const char *name, int samples, const char *scratch)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    Doc doc;
    memset(&doc, 0, sizeof doc);
    doc.name = name;
    doc.samples = samples;
    doc.scratch = scratch;
    doc.text = lb_slurp(path);
    if (!lb_check(doc.text != NULL, "%s cannot be read", path))
        return;
    /* the repository's documents stand alone: a reader has no ../shared beside the checkout */
    const char *outside = strstr(doc.text, "../shared") ? strstr(doc.text, "../shared") : strstr(doc.text, "/work/shared");
    lb_check(outside == NULL, "%s points outside the repository: %.60s", name, outside ? outside : "");
    /* the generated flag tables: checked whole, then read as blank lines */
    char *tables = strstr(doc.text, TABLES_BEGIN), *end = tables ? strstr(tables, TABLES_END) : NULL;
    if (strcmp(name, "README.md") == 0 && !samples)
        check_tables(doc.text);
    for (char *p = tables; end && p < end; p++)
        if (*p != '\n')
            *p = ' ';
    /* blocks: fenced code, tables, paragraphs; a blank line, a heading or a list item ends a
     * paragraph, and a heading is one of its own */
    char *block = malloc(strlen(doc.text) + 2);
    size_t used = 0;
    int kind = 0, start = 0, line = 0; /* kind: 0 none, 'p' paragraph, 't' table, 'f' fence */
#define FLUSH()                                            \
    do {                                                   \
        if (kind) {                                        \
            block[used] = '\0';                            \
            read_block(&doc, kind, block, start);          \
        }                                                  \
        kind = 0;                                          \
        used = 0;                                          \
    } while (0)
    for (const char *p = doc.text; block && p && *p;) {
        const char *next = strchr(p, '\n');
        const size_t len = next ? (size_t)(next - p) : strlen(p);
        line++;
        const char *t = p;
        while (t < p + len && *t == ' ')
            t++;
        const int blank = t == p + len, fence = strncmp(t, "```", 3) == 0;
        const int heading = *t == '#', item = (t[0] == '-' || t[0] == '*') && t[1] == ' ', row = *t == '|';
        if (kind == 'f' && fence) {
            FLUSH();
        } else if (kind == 'f') {
            memcpy(block + used, p, len);
            used += len;
            block[used++] = '\n';
        } else if (fence) {
            FLUSH();
            kind = 'f';
            start = line + 1;
            doc.fence_sh = len - (size_t)(t - p) == 5 && strncmp(t, "```sh", 5) == 0;
        } else if (blank) {
            FLUSH();
        } else {
            if (heading || item || (kind == 't') != row)
                FLUSH();
            if (!kind) {
                kind = row ? 't' : 'p';
                start = line;
            }
            memcpy(block + used, p, len);
            used += len;
            block[used++] = '\n';
            if (heading)
                FLUSH();
        }
        p = next ? next + 1 : NULL;
    }
    FLUSH();
#undef FLUSH
    lb_check(!doc.mode[0], "%s: a sample marker at the end", name);
    free(block);
    free(doc.sh);
    free(doc.text);
}

int main(int argc, char **argv)
{
    if (argc < 3 || (argc > 3 && strcmp(argv[3], "samples") != 0)) {
        fprintf(stderr, "usage: test_method_doc SOURCE_DIR PATH-TO-LINBENCH [samples]\n");
        return 2;
    }
    const int samples = argc > 3;
    const char *name = samples ? "test_readme_samples" : "test_method_doc";
    lb_test_init(name);
    if (!realpath(argv[2], bin)) { /* absolute: the samples' commands run in their own directories */
        printf("FAIL: %s: no such binary\n", argv[2]);
        return 1;
    }
    char scratch[256];
    snprintf(scratch, sizeof scratch, "%s", lb_scratch_dir(samples ? "readme-samples" : "method-doc"));
    if (samples) {
        read_doc(argv[1], "README.md", 1, scratch);
        printf("checked %d README samples\n", samples_checked);
        /* a floor under today's count: a README the parser no longer reads fails here */
        lb_check(samples_checked >= 3, "only %d README samples checked: are the markers still read?", samples_checked);
        if (chdir("/") == 0)
            lb_test_cleanup(scratch);
        return lb_test_finish(name);
    }
    write_files(scratch);
    read_doc(argv[1], "README.md", 0, scratch);
    read_doc(argv[1], "docs/METHOD.md", 0, scratch);
    printf("checked %d flags, %d defaults, %d columns and keys\n", flags_checked, defaults_checked, columns_checked);
    /* floors well under today's counts: a document the parser stops reading fails here */
    lb_check(flags_checked >= 100 && defaults_checked >= 4 && columns_checked >= 40,
             "too little checked (%d flags, %d defaults, %d columns): are the documents still read?", flags_checked,
             defaults_checked, columns_checked);
    for (int i = 0; i < 3; i++)
        lb_meta_free(&metas[i]);
    return lb_test_finish(name);
}
