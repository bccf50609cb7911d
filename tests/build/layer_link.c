/* The link check of a layer (tests/build/meson.build): linked with one layer's library whole and
 * only the layers below it, so that a call from that layer into one above it (reports/ into cmd/,
 * attn/ into reports/ or gpu/, the base library into attn/) is an undefined symbol and the build
 * fails. Nothing to run: building it is the check. */
int main(void)
{
    return 0;
}
