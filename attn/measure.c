/* attn/measure.c: being written. */
