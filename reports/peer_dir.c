/* bench/peer's model names (see peer_dir.h). */
#include "reports/peer_dir.h"

#include <stdio.h>
#include <string.h>

/* The peer's one attention that is not a model of linbench's table: exact softmax attention by
 * PyTorch's kernels, the baseline's work, and the kernels it may name. */
#define PEER_ONLY "sdpa"
static const char *const peer_backends[] = {"flash", "efficient", "cudnn", "math"};

int lb_peer_model_parse(const char *name, LbPeerModel *m, char *should, size_t size)
{
    memset(m, 0, sizeof *m);
    snprintf(should, size,
             "a bench/peer model: torch-NAME[-BACKEND][-compiled], NAME a linbench model or sdpa (with flash, "
             "efficient, cudnn or math)");
    const size_t prefix = strlen(LB_PEER_PREFIX);
    if (strncmp(name, LB_PEER_PREFIX, prefix) != 0 || strlen(name) >= sizeof m->name)
        return -1;
    snprintf(m->name, sizeof m->name, "%s", name);
    char rest[64];
    snprintf(rest, sizeof rest, "%s", name + prefix);
    char *save = NULL;
    const char *word = strtok_r(rest, "-", &save);
    if (!word)
        return -1;
    if (lb_model_parse(word, &m->work) != 0) {
        if (strcmp(word, PEER_ONLY) != 0 || !(word = strtok_r(NULL, "-", &save)))
            return -1;
        for (size_t i = 0; i < sizeof peer_backends / sizeof peer_backends[0] && !m->backend[0]; i++)
            if (strcmp(word, peer_backends[i]) == 0)
                snprintf(m->backend, sizeof m->backend, "%s", word);
        if (!m->backend[0])
            return -1;
        m->exact_baseline = 1;
        m->work = LB_MODEL_STANDARD; /* exact softmax attention: the baseline's work */
    }
    word = strtok_r(NULL, "-", &save);
    if (word && strcmp(word, "compiled") == 0) {
        m->compiled = 1;
        word = strtok_r(NULL, "-", &save);
    }
    return word ? -1 : 0; /* nothing after the last part */
}

int lb_peer_same_work(const LbPeerModel *pm, LbModelKind m)
{
    return m == pm->work || (pm->exact_baseline && lb_model_baseline(m) != 0);
}
