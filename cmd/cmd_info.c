/* cmd/cmd_info.c: being written. */
