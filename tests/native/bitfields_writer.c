/* Writes records of tests/native/bitfields.dtd as a C compiler lays out
 * their struct with bit fields, independently of Meta-TF: 64 records,
 * zeroed, filled in and written with fwrite, padding and all.
 *
 * Built twice: plain, the structs are this machine's (x86-64 or another
 * little-endian one: bit fields from the least significant bit); with
 * -DMSB_FIRST, GCC's scalar_storage_order attribute lays them out as a
 * big-endian machine's compiler does (numbers big-endian, bit fields from
 * the most significant bit), so one machine makes both files.
 * The four bits of `spare` have no part in the DTD.
 * Usage: bitfields_writer OUT */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef MSB_FIRST
#define LAYOUT __attribute__((scalar_storage_order("big-endian")))
#else
#define LAYOUT
#endif

typedef unsigned char byte;

struct LAYOUT Compressed {
    byte record_type;
    byte client_id;
    byte file_desc : 6;
    byte memstride_index : 2;
    byte size_index : 2;
    byte stride_index : 2;
    byte operation_type : 3;
    byte timestamp_delta : 1;
    uint32_t duration;
    uint16_t mode : 3;
    uint16_t level : 5;
    uint16_t zone : 4;
    uint16_t spare : 4;
};

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: bitfields_writer OUT\n");
        return 2;
    }
    FILE* out = fopen(argv[1], "wb");
    if (!out) return 1;
    for (unsigned i = 0; i < 64; ++i) {
        struct Compressed r;
        memset(&r, 0, sizeof r);
        r.record_type = 20;
        r.client_id = (byte)i;
        r.file_desc = i % 64;
        r.memstride_index = i % 4;
        r.size_index = (i / 4) % 4;
        r.stride_index = (i / 16) % 4;
        r.operation_type = i % 8;
        r.timestamp_delta = i % 2;
        r.duration = i * 1000003u;
        r.mode = i % 8;
        r.level = (i * 7) % 32;
        r.zone = (i * 5) % 16;
        r.spare = i % 3 == 0 ? i % 16 : 0;
        if (fwrite(&r, sizeof r, 1, out) != 1) return 1;
    }
    return fclose(out) == 0 ? 0 : 1;
}
