/* attn/model.c: being written. */
