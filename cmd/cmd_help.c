/* cmd/cmd_help.c: being written. */
