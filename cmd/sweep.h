/* The sweep's settings under their former names, for the files that still walk them this way
 * (cmd/cmd_merge.c). The table is reports/settings.h; its recorded settings come first. */
#ifndef LB_SWEEP_H
#define LB_SWEEP_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include <stddef.h>

#include "reports/settings.h"

#define lb_sweep_settings lb_settings
#define lb_sweep_setting_count ((size_t)LB_SET_RECORDED)

#endif
