/* linbench's entry point: being written. */
int main(void) { return 0; }
