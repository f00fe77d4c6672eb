/* Writes a classic libpcap capture file as libpcap's savefile code lays it
 * out, with no Meta-TF code: the magic (microseconds or nanoseconds), the
 * rest of struct pcap_file_header, then per packet its 16-byte header and
 * the bytes kept. Every number goes out in the byte order asked for, one
 * byte at a time, so the host's order does not matter.
 *
 *     pcap_writer le|be usec|nsec FILE
 *
 * Packets of 0, 1, 60 and 96 bytes (96 is the snapshot length, the last
 * packet cut from 1514), with timestamps whose fraction needs all 32 bits
 * in the nanosecond file; the time zone field is -3600, not libpcap's 0,
 * to show that the header's fields are kept as they are. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int big;

static void put(FILE *f, uint32_t v, int bytes) {
    for (int k = 0; k < bytes; ++k) {
        int shift = big ? 8 * (bytes - 1 - k) : 8 * k;
        fputc((int)((v >> shift) & 0xff), f);
    }
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "le") && strcmp(argv[1], "be")) || (strcmp(argv[2], "usec") && strcmp(argv[2], "nsec"))) {
        fprintf(stderr, "usage: pcap_writer le|be usec|nsec FILE\n");
        return 2;
    }
    big = strcmp(argv[1], "be") == 0;
    int nsec = strcmp(argv[2], "nsec") == 0;
    FILE *f = fopen(argv[3], "wb");
    if (!f) {
        perror(argv[3]);
        return 1;
    }
    const uint32_t snaplen = 96;
    put(f, nsec ? 0xa1b23c4du : 0xa1b2c3d4u, 4);
    put(f, 2, 2);                  /* version_major */
    put(f, 4, 2);                  /* version_minor */
    put(f, (uint32_t)-3600, 4);    /* thiszone */
    put(f, 0, 4);                  /* sigfigs */
    put(f, snaplen, 4);
    put(f, 1, 4);                  /* LINKTYPE_ETHERNET */
    const uint32_t kept[] = {0, 1, 60, 96};
    const uint32_t wire[] = {0, 1, 60, 1514};
    for (int p = 0; p < 4; ++p) {
        put(f, 1700000000u + (uint32_t)p, 4);
        put(f, nsec ? 999999999u - (uint32_t)p : 999999u - (uint32_t)p, 4);
        put(f, kept[p], 4);
        put(f, wire[p], 4);
        for (uint32_t k = 0; k < kept[p]; ++k) fputc((int)((k * 7 + (uint32_t)p) & 0xff), f);
    }
    return fclose(f) == 0 ? 0 : 1;
}
