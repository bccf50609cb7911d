/* cmd/args.c: being written. */
