/* Closing either backend through its table. */
#include "attn/ops.h"

void lb_backend_close(LbBackend *be)
{
    if (be && be->ops && be->ops->close)
        be->ops->close(be);
}
