/* The value parsers moved below cmd/ (reports/args.h) so the settings table in reports/ can use
 * them; this name stays for the files that still include it. */
#ifndef LB_ARGS_H
#define LB_ARGS_H

#include "reports/args.h"

#endif
