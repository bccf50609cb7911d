/* README.md's sample outputs against what today's binary prints, where the output does not depend
 * on the machine or the clock (predictions, largest batches, memory saved), so a sample cannot
 * drift from the code. A sample is an output block marked by the line before it:
 *   <!-- sample: output -->        the block is consecutive lines of what the last command of the
 *                                  ```sh block above it printed (standard output, then standard
 *                                  error, as a terminal shows it; the commands before it run first);
 *   <!-- sample: memory saved -->  the block is a sweep's closing grids: its memory-saved half
 *                                  (after the `|` of each grid line), the n of each row and the
 *                                  lines without a `|` are as printed; the times are the machine's.
 * The commands run as written (`linbench` is the binary under test) in a scratch directory, so
 * their --out folders land there. As test_method_doc.c reads README.md for flags, this reads it
 * for samples; and, like it, fails when too few samples are found to mean anything.
 * Usage: test_readme_samples SOURCE_DIR PATH-TO-LINBENCH */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>

#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static char bin[PATH_MAX];
static int samples_checked;

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

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_readme_samples SOURCE_DIR PATH-TO-LINBENCH\n");
        return 2;
    }
    lb_test_init("test_readme_samples");
    if (!realpath(argv[2], bin)) {
        printf("FAIL: %s: no such binary\n", argv[2]);
        return 1;
    }
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/README.md", argv[1]);
    char *doc = lb_slurp(path);
    if (!lb_check(doc != NULL, "%s cannot be read", path))
        return lb_test_finish("test_readme_samples");
    char scratch[256];
    snprintf(scratch, sizeof scratch, "%s", lb_scratch_dir("readme-samples"));
    /* line by line: the last ```sh block, then a marker and the block after it */
    char *sh = NULL, mode[64] = "";
    int in_fence = 0, is_sh = 0, want_sample = 0, in_sample = 0, line_no = 0, sample_line = 0, nsample = 0;
    size_t used = 0, cap = strlen(doc) + 1;
    char *block = malloc(cap);
    char line[4096];
    for (const char *p = doc; block && next_line(&p, line, sizeof line);) {
        line_no++;
        if (in_fence && strcmp(line, "```") == 0) {
            block[used] = '\0';
            if (is_sh) {
                free(sh);
                sh = strdup(block);
            } else if (in_sample) {
                char where[64], dir[320];
                snprintf(where, sizeof where, "README.md:%d", sample_line);
                snprintf(dir, sizeof dir, "%s/%d", scratch, ++nsample);
                mkdir(dir, 0755);
                char *out = sh ? run_block(sh, dir, where) : NULL;
                lb_check(sh != NULL, "%s: a sample with no ```sh block above it", where);
                if (out)
                    check_sample(mode, block, out, where);
                free(out);
                in_sample = 0;
            }
            in_fence = 0;
        } else if (in_fence) {
            memcpy(block + used, line, strlen(line));
            used += strlen(line);
            block[used++] = '\n';
        } else if (strncmp(line, "```", 3) == 0) {
            in_fence = 1;
            is_sh = strcmp(line, "```sh") == 0;
            used = 0;
            in_sample = want_sample && !is_sh;
            sample_line = line_no + 1;
            lb_check(!want_sample || !is_sh, "README.md:%d: a sample marker before a ```sh block", line_no);
            want_sample = 0;
        } else if (sscanf(line, "<!-- sample: %63[a-z ] -->", mode) == 1) {
            size_t n = strlen(mode);
            while (n && mode[n - 1] == ' ')
                mode[--n] = '\0';
            want_sample = 1;
        } else if (line[0]) {
            lb_check(!want_sample, "README.md:%d: a sample marker not right before its block", line_no);
            want_sample = 0;
        }
    }
    printf("checked %d README samples\n", samples_checked);
    /* a floor under today's count: a README the parser no longer reads fails here */
    lb_check(samples_checked >= 3, "only %d README samples checked: are the markers still read?", samples_checked);
    free(block);
    free(sh);
    free(doc);
    if (chdir("/") == 0)
        lb_test_cleanup(scratch);
    return lb_test_finish("test_readme_samples");
}
