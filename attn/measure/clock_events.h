/* The GPU's clock-event reasons (NVML's nvmlClocksEventReasons): why the SM clock ran below its
 * maximum during a cell. NVML's bit mask, written in raw.csv as names joined by '+'; a cell is
 * flagged only for reasons that slow the GPU against its will (thermal, hardware slowdown, power
 * brake), not for the power cap or idle that a GPU under tensor-core load routinely shows. */
#ifndef LB_CLOCK_EVENTS_H
#define LB_CLOCK_EVENTS_H

#include <stddef.h>
#include <stdint.h>

/* NVML's bits (nvml.h, nvmlClocksEventReason*). */
#define LB_CLOCK_EVENT_GPU_IDLE 0x1ull
#define LB_CLOCK_EVENT_APP_CLOCKS 0x2ull
#define LB_CLOCK_EVENT_SW_POWER_CAP 0x4ull
#define LB_CLOCK_EVENT_HW_SLOWDOWN 0x8ull
#define LB_CLOCK_EVENT_SYNC_BOOST 0x10ull
#define LB_CLOCK_EVENT_SW_THERMAL 0x20ull
#define LB_CLOCK_EVENT_HW_THERMAL 0x40ull
#define LB_CLOCK_EVENT_HW_POWER_BRAKE 0x80ull
#define LB_CLOCK_EVENT_DISPLAY_CLOCKS 0x100ull

/* The reasons that flag a cell as slowed. */
#define LB_CLOCK_EVENTS_SLOWDOWN                                                                  \
    (LB_CLOCK_EVENT_HW_SLOWDOWN | LB_CLOCK_EVENT_SW_THERMAL | LB_CLOCK_EVENT_HW_THERMAL |         \
     LB_CLOCK_EVENT_HW_POWER_BRAKE)

/* "none", or the names of the set bits joined by '+' ("sw_power_cap+hw_thermal"); unknown bits as
 * hex. Returns 0, or -1 when buf is too small (nothing is cut: the caller's buffer must hold them). */
int lb_clock_events_text(uint64_t mask, char *buf, size_t size);
/* The mask of such a text; -1 on an unknown name. */
int lb_clock_events_parse(const char *text, uint64_t *mask);

#endif
