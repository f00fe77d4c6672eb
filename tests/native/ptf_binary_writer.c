/* Writes a PTF binary trace (report section 4.1) the way a C program would,
 * independently of Meta-TF: an ASCII header ended by a line "$", then each
 * event as its type byte and its parameters, big-endian, in the sizes
 * docs/formats.md gives ("PTF": formatId, oid, numberOfElements, index and
 * length 4 bytes; counts, lengthOfClassName, offset and edge 2 bytes).
 * Every event type appears, fo with both of its lists and a class name.
 * Usage: ptf_binary_writer OUT */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static FILE *out;

static void u8(unsigned v) { fputc((int)(v & 0xff), out); }
static void u16(unsigned v) { u8(v >> 8); u8(v); }
static void u32(uint32_t v) { u16(v >> 16); u16(v & 0xffff); }

enum { FO = 4, CO, CAO, DO, SR, GR, DR, DW, ADR, ADW, ER, EW, TS, TE };

int main(int argc, char **argv) {
    const char *name = "BinaryTreeNode";
    if (argc != 2 || !(out = fopen(argv[1], "wb"))) return 2;
    fputs("PTF 1.0\nbinary tree example, written by tests/native/ptf_binary_writer.c\n$\n", out);
    /* fo 41: super 0, 2 pointers, 1 data member (format 2), 1 array member (format 3, 10 elements) */
    u8(FO); u32(41); u32(0); u16(2); u16(1); u16(1); u16((unsigned)strlen(name));
    u32(2);
    u32(3); u32(10);
    fwrite(name, 1, strlen(name), out);
    u8(CO); u32(41); u32(44);
    u8(CAO); u32(3); u32(45); u32(44); u32(10);
    u8(SR); u32(41); u32(44);
    u8(GR);
    u8(DW); u32(41); u32(44); u16(1);
    u8(DR); u32(41); u32(44); u16(1);
    u8(ADW); u32(3); u32(45); u16(0xfffe); u32(7); u32(3); /* offset -2 */
    u8(ADR); u32(3); u32(45); u16(2); u32(0); u32(10);
    u8(EW); u32(41); u32(44); u16(1); u32(48);
    u8(ER); u32(41); u32(44); u16(1);
    u8(TS);
    u8(TE);
    u8(DO); u32(41); u32(44);
    u8(CO); u32(41); u32(0xffffffff); /* the largest oid */
    return fclose(out) == 0 ? 0 : 1;
}
