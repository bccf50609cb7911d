/* Clock-event reasons (attn/measure/clock_events.h): names and back for every bit and unknown ones, the
 * refusal of a buffer too small and of an unknown name, and which reasons flag a slowdown. */
#include "attn/measure/clock_events.h"
#include "tests/lib/check.h"

int main(void)
{
    lb_test_init("test_clock_events");
    char buf[256];
    uint64_t back = 0;
    for (int bit = 0; bit < 12; bit++) {
        const uint64_t m = 1ull << bit;
        lb_check(lb_clock_events_text(m, buf, sizeof buf) == 0 && lb_clock_events_parse(buf, &back) == 0 && back == m,
                 "bit %d: \"%s\" reads back as 0x%llx", bit, buf, (unsigned long long)back);
    }
    const uint64_t mix = LB_CLOCK_EVENT_SW_POWER_CAP | LB_CLOCK_EVENT_HW_THERMAL | (1ull << 40);
    lb_check(lb_clock_events_text(mix, buf, sizeof buf) == 0 && strcmp(buf, "sw_power_cap+hw_thermal+0x10000000000") == 0,
             "a mix reads \"%s\"", buf);
    lb_check(lb_clock_events_parse(buf, &back) == 0 && back == mix, "the mix reads back as 0x%llx", (unsigned long long)back);
    lb_check(lb_clock_events_text(0, buf, sizeof buf) == 0 && strcmp(buf, "none") == 0, "no reasons read \"%s\"", buf);
    lb_check(lb_clock_events_parse("none", &back) == 0 && back == 0, "none reads back as 0x%llx", (unsigned long long)back);
    lb_check(lb_clock_events_text(mix, buf, 8) == -1, "a buffer too small is refused, not cut");
    lb_check(lb_clock_events_parse("sw_power_cap+melting", &back) == -1, "an unknown name is refused");
    lb_check((LB_CLOCK_EVENT_SW_POWER_CAP & LB_CLOCK_EVENTS_SLOWDOWN) == 0 && (LB_CLOCK_EVENT_GPU_IDLE & LB_CLOCK_EVENTS_SLOWDOWN) == 0,
             "the power cap or idle flag a slowdown");
    lb_check((LB_CLOCK_EVENT_HW_THERMAL & LB_CLOCK_EVENTS_SLOWDOWN) && (LB_CLOCK_EVENT_HW_SLOWDOWN & LB_CLOCK_EVENTS_SLOWDOWN),
             "thermal or hardware slowdown does not flag");
    return lb_test_finish("test_clock_events");
}
