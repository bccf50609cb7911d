/* attn/backend.c: being written. */
