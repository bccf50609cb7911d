/* cmd/cmd_sweep.c: being written. */
