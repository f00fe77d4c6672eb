/* Writes a CHARISMA trace file the way a tracer on the traced machine did,
 * independently of Meta-TF: the magic number and format version, then each
 * record as its C struct from the CHARISMA header, zeroed with calloc,
 * filled in and written with fwrite, padding and all. Every record type of
 * the header appears once or more; the structs ending in a one-element
 * array ("actually [num_clients]") are written as sizeof(struct) plus the
 * further elements.
 *
 * Built twice: with -DIPSC860 the machine-dependent types are the
 * iPSC/860's (time_t, long and u_long of 4 bytes) and every field is stored
 * big-endian; without it they are this LP64 machine's own, stored as they
 * are. The structs are laid out by this compiler, which aligns every type at
 * its size as both machines do. TRACE_NAME_LENGTH and TRACE_PATH_LENGTH are
 * 32 and 128, as dtds/charisma.dtd assumes.
 * Usage: charisma_writer OUT */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef IPSC860
typedef int32_t time_type;
typedef int32_t long_type;
typedef uint32_t ulong_type;
#define BIG_ENDIAN_FILE 1
#else
typedef int64_t time_type;
typedef int64_t long_type;
typedef uint64_t ulong_type;
#define BIG_ENDIAN_FILE 0
#endif

typedef unsigned char byte;
typedef uint64_t TimestampType;
typedef int64_t BigInt;
typedef uint32_t TraceUserId, TraceAppId, TraceClientId, TraceFileDesc, TraceAsyncId;
typedef uint64_t TraceFileId;

#define TRACE_NAME_LENGTH 32
#define TRACE_PATH_LENGTH 128

typedef struct {
    uint16_t record_type;
    time_type start_date;
    long_type gmt_offset;
    TimestampType timestamp;
    ulong_type SystemId;
    byte system_type;
    int32_t md_version;
    char release_data[80];
    int32_t num_processors, memory_per_proc, num_disks, num_IO_nodes, memory_per_disk;
    double timestamp_unit;
} TraceHeaderRecord;

typedef struct {
    uint16_t record_type;
    TimestampType timestamp;
    char name[TRACE_NAME_LENGTH];
    char path[TRACE_PATH_LENGTH];
    TraceUserId user_id;
    ulong_type initial_load_size;
    TraceAppId appl_id;
    uint16_t num_clients;
    TraceClientId clients[1];
} TraceAppLoadRecord;

typedef struct {
    uint16_t record_type;
    TimestampType timestamp;
    TraceAppId appl_id;
} TraceAppExitRecord;

typedef struct {
    uint16_t record_type;
    TimestampType timestamp;
    TraceAppId appl_id;
    TraceClientId client_id;
} TraceClientJoinRecord, TraceClientLeaveRecord;

typedef struct {
    uint16_t record_type;
    TimestampType timestamp;
    uint32_t who; /* appl_id or client_id */
    char name[TRACE_NAME_LENGTH];
    char path[TRACE_PATH_LENGTH];
    TraceFileId file_id;
    TraceFileDesc file_desc;
    BigInt file_size;
    time_type creation_date;
    byte open_flags;
} TraceOpenRecord;

typedef struct {
    uint16_t record_type;
    TimestampType timestamp;
    uint32_t who; /* appl_id or client_id */
    TraceFileDesc file_desc;
    BigInt file_size;
} TraceCloseRecord;

typedef struct {
    BigInt offset;
    ulong_type memory_offset;
    BigInt IO_size;
    TraceClientId client_id;
} TraceIORequest;

typedef struct {
    uint16_t record_type;
    TimestampType starttime, endtime;
    TraceFileDesc file_desc;
    byte operation_type;
    TraceAsyncId async_id;
    TraceAppId appl_id;
    uint16_t num_clients;
    TraceIORequest requests[1];
} TraceRWRecord;

typedef struct {
    uint16_t record_type;
    TimestampType call_time, end_time;
    TraceAsyncId async_id;
    TraceClientId client_id;
    TraceAppId appl_id;
} TraceAsynchEndRecord;

typedef struct {
    uint16_t record_type;
    TimestampType timestamp;
    TraceClientId client_id;
    TraceFileId file_id;
    BigInt original_size, new_size;
} TraceResizeRecord; /* extend and truncate */

typedef struct {
    uint16_t record_type;
    TimestampType timestamp;
    TraceClientId client_id;
    TraceFileId file_id;
    uint16_t new_link_count;
} TraceLinkRecord; /* link and unlink */

typedef struct {
    uint16_t record_type;
    TimestampType timestamp;
    TraceClientId client_id;
    TraceFileId file_desc;
    int32_t request, arg;
} TraceFcntlRecord;

enum {
    HEADER, APP_LOAD, APP_EXIT, CLIENT_JOIN, CLIENT_LEAVE, APP_OPEN, CLIENT_OPEN, APP_CLOSE, CLIENT_CLOSE,
    RW, EXTEND, TRUNCATE, LINK, UNLINK, ASYNCH_END, FCNTL
};

static FILE *out;

/* Stores v in the `size` bytes of a struct member, in the file's byte order. */
static void put(void *member, size_t size, uint64_t v) {
    unsigned char *p = member;
    for (size_t k = 0; k < size; ++k) {
        const size_t shift = BIG_ENDIAN_FILE ? 8 * (size - 1 - k) : 8 * k;
        p[k] = (unsigned char)(v >> shift);
    }
}
#define SET(member, value) put(&(member), sizeof(member), (uint64_t)(value))

static void put_double(double *member, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    put(member, sizeof *member, bits);
}

static void write_struct(const void *s, size_t size) {
    if (fwrite(s, 1, size, out) != size) exit(1);
}

static int system_type = 1;  /* IPSC_TYPE, or the writer's second argument */

static void header(void) {
    TraceHeaderRecord r;
    memset(&r, 0, sizeof r);
    SET(r.record_type, HEADER);
    SET(r.start_date, 804556800);   /* 1995-07-01 00:00:00 UTC */
    SET(r.gmt_offset, -18000);      /* EST */
    SET(r.timestamp, 123456789);
    SET(r.SystemId, 0x81aa0a01);    /* 129.170.10.1 */
    SET(r.system_type, system_type);
    SET(r.md_version, 2);
    strcpy(r.release_data, "OSF/1 R1.3.3, CFS, icc R4.5");
    SET(r.num_processors, 128);
    SET(r.memory_per_proc, 8);
    SET(r.num_disks, 2);
    SET(r.num_IO_nodes, 2);
    SET(r.memory_per_disk, 16);
    put_double(&r.timestamp_unit, 0.0001);
    write_struct(&r, sizeof r);
}

static void app_load(void) {
    const size_t size = sizeof(TraceAppLoadRecord) + sizeof(TraceClientId);  /* two clients */
    TraceAppLoadRecord *r = calloc(1, size);
    if (!r) exit(1);
    SET(r->record_type, APP_LOAD);
    SET(r->timestamp, 1000);
    strcpy(r->name, "matmul");
    strcpy(r->path, "/home/user/bin");
    SET(r->user_id, 501);
    SET(r->initial_load_size, 262144);
    SET(r->appl_id, 7);
    SET(r->num_clients, 2);
    TraceClientId *clients = r->clients;  /* the array runs past its declared [1] */
    SET(clients[0], 70);
    SET(clients[1], 71);
    write_struct(r, size);
    free(r);
}

static void join_or_leave(unsigned type, uint64_t time, unsigned client) {
    TraceClientJoinRecord r;
    memset(&r, 0, sizeof r);
    SET(r.record_type, type);
    SET(r.timestamp, time);
    SET(r.appl_id, 7);
    SET(r.client_id, client);
    write_struct(&r, sizeof r);
}

static void open_file(unsigned type, uint64_t time, unsigned who, const char *name, const char *path, unsigned desc) {
    TraceOpenRecord r;
    memset(&r, 0, sizeof r);
    SET(r.record_type, type);
    SET(r.timestamp, time);
    SET(r.who, who);
    memcpy(r.name, name, strlen(name) < sizeof r.name ? strlen(name) : sizeof r.name);  /* may fill it: no NUL */
    strcpy(r.path, path);
    SET(r.file_id, 0x0000000300001234ULL);
    SET(r.file_desc, desc);
    SET(r.file_size, 1048576);
    SET(r.creation_date, 804470400);
    SET(r.open_flags, 0x02 | 0x08);  /* read/write, create */
    write_struct(&r, sizeof r);
}

static void close_file(unsigned type, uint64_t time, unsigned who, unsigned desc, int64_t size) {
    TraceCloseRecord r;
    memset(&r, 0, sizeof r);
    SET(r.record_type, type);
    SET(r.timestamp, time);
    SET(r.who, who);
    SET(r.file_desc, desc);
    SET(r.file_size, size);
    write_struct(&r, sizeof r);
}

/* A read or write by `n` clients, each at its own offset. */
static void read_write(unsigned n, unsigned operation, unsigned async_id) {
    const size_t size = sizeof(TraceRWRecord) + (n - 1) * sizeof(TraceIORequest);
    TraceRWRecord *r = calloc(1, size);
    if (!r) exit(1);
    SET(r->record_type, RW);
    SET(r->starttime, 3000 + n);
    SET(r->endtime, 3100 + n);
    SET(r->file_desc, 3);
    SET(r->operation_type, operation);
    SET(r->async_id, async_id);
    SET(r->appl_id, 7);
    SET(r->num_clients, n);
    TraceIORequest *requests = r->requests;  /* the array runs past its declared [1] */
    for (unsigned k = 0; k < n; ++k) {
        SET(requests[k].offset, (int64_t)k * 65536);
        SET(requests[k].memory_offset, 0x10000000u + k * 4096);
        SET(requests[k].IO_size, 65536);
        SET(requests[k].client_id, 70 + k);
    }
    write_struct(r, size);
    free(r);
}

static void resize(unsigned type, int64_t from, int64_t to) {
    TraceResizeRecord r;
    memset(&r, 0, sizeof r);
    SET(r.record_type, type);
    SET(r.timestamp, 4000);
    SET(r.client_id, 70);
    SET(r.file_id, 0x0000000300001234ULL);
    SET(r.original_size, from);
    SET(r.new_size, to);
    write_struct(&r, sizeof r);
}

static void link_record(unsigned type, unsigned count) {
    TraceLinkRecord r;
    memset(&r, 0, sizeof r);
    SET(r.record_type, type);
    SET(r.timestamp, 5000);
    SET(r.client_id, 71);
    SET(r.file_id, 0x0000000300001234ULL);
    SET(r.new_link_count, count);
    write_struct(&r, sizeof r);
}

int main(int argc, char **argv) {
    /* charisma_writer FILE [SYSTEM_TYPE]: a type other than 1 tests mtf check's rules. */
    if (argc < 2 || argc > 3 || !(out = fopen(argv[1], "wb"))) return 2;
    if (argc == 3) system_type = atoi(argv[2]);
    uint32_t words[2];
    SET(words[0], 0x01234567);  /* MAGIC */
    SET(words[1], 1);           /* FORMAT_VERSION */
    write_struct(words, sizeof words);
    header();
    app_load();
    join_or_leave(CLIENT_JOIN, 1500, 72);
    open_file(APP_OPEN, 2000, 7, "matrix.dat", "/cfs/user", 3);
    open_file(CLIENT_OPEN, 2100, 72, "a_name_of_exactly_32_characters_", "/cfs/user/scratch", 4);
    read_write(2, 0x02, 0);          /* an application-wide synchronous write by two clients */
    read_write(1, 0x01 | 0x04, 9);   /* a client's asynchronous read */
    {
        TraceAsynchEndRecord r;
        memset(&r, 0, sizeof r);
        SET(r.record_type, ASYNCH_END);
        SET(r.call_time, 3500);
        SET(r.end_time, 3600);
        SET(r.async_id, 9);
        SET(r.client_id, 70);
        SET(r.appl_id, 0xffffffffu);  /* none */
        write_struct(&r, sizeof r);
    }
    resize(EXTEND, 1048576, 4194304);
    resize(TRUNCATE, 4194304, 0);
    link_record(LINK, 2);
    link_record(UNLINK, 0);
    {
        TraceFcntlRecord r;
        memset(&r, 0, sizeof r);
        SET(r.record_type, FCNTL);
        SET(r.timestamp, 5500);
        SET(r.client_id, 70);
        SET(r.file_desc, 3);
        SET(r.request, 4);    /* F_SETFL */
        SET(r.arg, -1);
        write_struct(&r, sizeof r);
    }
    close_file(CLIENT_CLOSE, 6000, 72, 4, 0);
    close_file(APP_CLOSE, 6100, 7, 3, 131072);
    join_or_leave(CLIENT_LEAVE, 6200, 72);
    {
        TraceAppExitRecord r;
        memset(&r, 0, sizeof r);
        SET(r.record_type, APP_EXIT);
        SET(r.timestamp, 7000);
        SET(r.appl_id, 7);
        write_struct(&r, sizeof r);
    }
    return fclose(out) == 0 ? 0 : 1;
}
