/* attn/forward.c: being written. */
