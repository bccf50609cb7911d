/* attn/plan.c: being written. */
