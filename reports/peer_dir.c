/* bench/peer's model names (see peer_dir.h). */
#include "reports/peer_dir.h"

#include <stdio.h>
#include <string.h>


/* The peer's attentions that are not models of linbench's table: exact softmax attention by
 * another kernel, the baseline's work, and the kernels each may name. */
static const struct {
    const char *name;
    const char *backends[5];
} peer_only[] = {
    {"sdpa", {"flash", "efficient", "cudnn", "math", NULL}},
};
#define PEER_ONLY_COUNT (sizeof peer_only / sizeof peer_only[0])
#define COMPILED "compiled"

static int in_list(const char *const *list, const char *word)
{
    for (; *list; list++)
        if (strcmp(*list, word) == 0)
            return 1;
    return 0;
}

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
    if (!word || strlen(word) >= sizeof m->attention)
        return -1;
    snprintf(m->attention, sizeof m->attention, "%s", word);
    const char *const *backends = NULL;
    if (lb_model_parse(word, &m->work) != 0) {
        for (size_t i = 0; i < PEER_ONLY_COUNT && !backends; i++)
            if (strcmp(word, peer_only[i].name) == 0)
                backends = peer_only[i].backends;
        if (!backends)
            return -1;
        m->exact_baseline = 1;
        m->work = LB_MODEL_STANDARD; /* exact softmax attention: the baseline's work */
        word = strtok_r(NULL, "-", &save);
        if (!word || !in_list(backends, word))
            return -1;
        snprintf(m->backend, sizeof m->backend, "%s", word);
    }
    word = strtok_r(NULL, "-", &save);
    if (word && strcmp(word, COMPILED) == 0) {
        m->compiled = 1;
        word = strtok_r(NULL, "-", &save);
    }
    return word ? -1 : 0; /* nothing after the last part */
}

int lb_peer_same_work(const LbPeerModel *pm, LbModelKind m)
{
    return m == pm->work || (pm->exact_baseline && lb_model_baseline(m) != 0);
}
