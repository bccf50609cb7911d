/* Clock-event reasons as names and back: see clock_events.h. */
#include "attn/measure/clock_events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    uint64_t bit;
    const char *name;
} lb_clock_event_names[] = {
    {LB_CLOCK_EVENT_GPU_IDLE, "gpu_idle"},           {LB_CLOCK_EVENT_APP_CLOCKS, "app_clocks"},
    {LB_CLOCK_EVENT_SW_POWER_CAP, "sw_power_cap"},   {LB_CLOCK_EVENT_HW_SLOWDOWN, "hw_slowdown"},
    {LB_CLOCK_EVENT_SYNC_BOOST, "sync_boost"},       {LB_CLOCK_EVENT_SW_THERMAL, "sw_thermal"},
    {LB_CLOCK_EVENT_HW_THERMAL, "hw_thermal"},       {LB_CLOCK_EVENT_HW_POWER_BRAKE, "hw_power_brake"},
    {LB_CLOCK_EVENT_DISPLAY_CLOCKS, "display_clocks"},
};
#define LB_CLOCK_EVENT_COUNT (sizeof lb_clock_event_names / sizeof lb_clock_event_names[0])

int lb_clock_events_text(uint64_t mask, char *buf, size_t size)
{
    size_t used = 0;
    int w = snprintf(buf, size, "%s", mask ? "" : "none");
    if (w < 0 || (size_t)w >= size)
        return -1;
    used = (size_t)w;
    uint64_t rest = mask;
    for (size_t i = 0; i < LB_CLOCK_EVENT_COUNT; i++) {
        if (!(mask & lb_clock_event_names[i].bit))
            continue;
        rest &= ~lb_clock_event_names[i].bit;
        w = snprintf(buf + used, size - used, "%s%s", used ? "+" : "", lb_clock_event_names[i].name);
        if (w < 0 || (size_t)w >= size - used)
            return -1;
        used += (size_t)w;
    }
    if (rest) {
        w = snprintf(buf + used, size - used, "%s0x%llx", used ? "+" : "", (unsigned long long)rest);
        if (w < 0 || (size_t)w >= size - used)
            return -1;
    }
    return 0;
}

int lb_clock_events_parse(const char *text, uint64_t *mask)
{
    *mask = 0;
    if (strcmp(text, "none") == 0)
        return 0;
    const char *p = text;
    while (*p) {
        const char *end = strchr(p, '+');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        int found = 0;
        for (size_t i = 0; i < LB_CLOCK_EVENT_COUNT && !found; i++)
            if (strlen(lb_clock_event_names[i].name) == len && strncmp(p, lb_clock_event_names[i].name, len) == 0) {
                *mask |= lb_clock_event_names[i].bit;
                found = 1;
            }
        if (!found && len > 2 && p[0] == '0' && p[1] == 'x') {
            char *e = NULL;
            const unsigned long long v = strtoull(p + 2, &e, 16);
            if (e == p + len) {
                *mask |= v;
                found = 1;
            }
        }
        if (!found)
            return -1;
        p += len;
        if (*p == '+')
            p++;
    }
    return 0;
}
