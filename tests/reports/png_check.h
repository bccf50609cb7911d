/* A PNG file checked the hard way: the signature, every chunk's CRC32 (computed here), IHDR
 * first and IEND last, and, with zlib, the IDAT stream inflated to exactly the size IHDR
 * implies (height rows of a filter byte plus the packed pixels; non-interlaced images). */
#ifndef LB_TESTS_PNG_CHECK_H
#define LB_TESTS_PNG_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/check.h"

#ifdef LB_HAVE_ZLIB
#include <zlib.h>
#endif

static inline uint32_t png_crc32(const unsigned char *p, size_t len)
{
    static uint32_t table[256];
    static int ready;
    if (!ready) {
        for (uint32_t n = 0; n < 256; n++) {
            uint32_t c = n;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[n] = c;
        }
        ready = 1;
    }
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < len; i++)
        c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

static inline uint32_t png_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Checks the file; *width and *height from IHDR (0 when unreadable). Returns 1 when all held. */
static inline int png_check(const char *path, uint32_t *width, uint32_t *height)
{
    *width = *height = 0;
    size_t len = 0;
    unsigned char *b = (unsigned char *)lb_slurp_len(path, &len);
    if (!lb_check(b != NULL, "%s: cannot open", path))
        return 0;
    int ok = lb_check(len >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0, "%s: PNG signature", path);
    size_t pos = 8, chunks = 0, idat_len = 0;
    unsigned char *idat = NULL;
    int seen_end = 0, bad_crc = 0, depth = 0, colour = -1, interlace = 0;
    while (ok && pos + 12 <= len && !seen_end) {
        uint32_t clen = png_be32(b + pos);
        if (!lb_check(pos + 12 + (size_t)clen <= len, "%s: chunk %zu runs past the end", path, chunks)) {
            ok = 0;
            break;
        }
        const unsigned char *type = b + pos + 4, *data = b + pos + 8;
        if (png_crc32(type, 4 + (size_t)clen) != png_be32(data + clen))
            bad_crc++;
        if (chunks == 0) {
            ok &= lb_check(memcmp(type, "IHDR", 4) == 0 && clen == 13, "%s: first chunk should be IHDR", path);
            if (ok) {
                *width = png_be32(data);
                *height = png_be32(data + 4);
                depth = data[8];
                colour = data[9];
                interlace = data[12];
            }
        }
        if (memcmp(type, "IDAT", 4) == 0) {
            unsigned char *n = realloc(idat, idat_len + clen + 1);
            if (n) {
                idat = n;
                memcpy(idat + idat_len, data, clen);
                idat_len += clen;
            }
        }
        seen_end = memcmp(type, "IEND", 4) == 0;
        pos += 12 + (size_t)clen;
        chunks++;
    }
    ok &= lb_check(bad_crc == 0, "%s: %d chunks with a wrong CRC32", path, bad_crc);
    ok &= lb_check(seen_end && pos == len, "%s: should end with IEND", path);
    ok &= lb_check(idat_len > 0, "%s: no image data (IDAT)", path);
    ok &= lb_check(*width > 0 && *height > 0, "%s: IHDR size %ux%u", path, *width, *height);
#ifdef LB_HAVE_ZLIB
    int channels = colour == 0 ? 1 : colour == 2 ? 3 : colour == 3 ? 1 : colour == 4 ? 2 : colour == 6 ? 4 : 0;
    if (ok && channels && !interlace) {
        size_t row = ((size_t)*width * (size_t)channels * (size_t)depth + 7) / 8;
        size_t want = (size_t)*height * (1 + row);
        uLongf got = (uLongf)want + 16;
        unsigned char *pix = malloc(got);
        int z = pix ? uncompress(pix, &got, idat, (uLong)idat_len) : Z_MEM_ERROR;
        ok &= lb_check(z == Z_OK && got == want, "%s: IDAT inflates to %lu bytes (zlib %d): should be %zu",
                       path, (unsigned long)got, z, want);
        int filters_ok = 1;
        for (uint32_t y = 0; z == Z_OK && got == want && y < *height; y++)
            filters_ok &= pix[(size_t)y * (1 + row)] <= 4;
        ok &= lb_check(filters_ok, "%s: every row starts with a filter type 0..4", path);
        free(pix);
    } else if (ok) {
        printf("%s: colour type %d, interlace %d: inflate check skipped\n", path, colour, interlace);
    }
#else
    (void)depth;
    (void)colour;
    (void)interlace;
#endif
    free(idat);
    free(b);
    return ok;
}

#endif
