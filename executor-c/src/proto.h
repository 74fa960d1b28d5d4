/* The executor's side of the Falkon wire protocol (docs/protocol.md): message types, the
 * task spec, executions, and the data-diffusion extensions, decoded and encoded exactly as
 * the Java implementation does (both are checked against the golden vectors). */
#ifndef FK_PROTO_H
#define FK_PROTO_H

#include "buf.h"

#include <stddef.h>
#include <stdint.h>

#define FK_MAGIC 0x46414C4Bu
#define FK_VERSION 2
#define FK_ROLE_EXECUTOR 1
#define FK_ROLE_CLIENT 2
#define FK_REGISTER_NO_EXEC 1u
#define FK_MAX_FRAME (16u * 1024 * 1024)

enum fk_type {
    FK_HELLO = 0x01,
    FK_WELCOME = 0x02,
    FK_HEARTBEAT = 0x03,
    FK_ERROR = 0x04,
    FK_REGISTER = 0x10,
    FK_CREDIT = 0x11,
    FK_DISPATCH = 0x12,
    FK_RESULT = 0x13,
    FK_CANCEL = 0x14,
    FK_CACHE_UPDATE = 0x15,
    FK_RELEASE = 0x16, /* temporary outputs the executor held that no task needs from it any more */
    FK_REPLICATE = 0x17 /* objects to fetch into the cache now, ahead of the tasks (multicast) */
};

enum fk_status {
    FK_EXITED = 0,
    FK_TIMEOUT = 1,
    FK_LAUNCH_FAILED = 2,
    FK_EXECUTOR_LOST = 3,
    FK_CANCELLED = 4,
    FK_REJECTED = 5,
    FK_FETCH_FAILED = 6,
    FK_OUTPUT_FAILED = 7,
    FK_DEPENDENCY_FAILED = 8 /* the dispatcher's alone: never run, a task it needed failed */
};

enum fk_error_code {
    FK_ERR_MALFORMED = 1,
    FK_ERR_UNSUPPORTED_VERSION = 2,
    FK_ERR_UNAUTHORIZED = 3,
    FK_ERR_UNEXPECTED_MESSAGE = 4,
    FK_ERR_FRAME_TOO_LARGE = 5,
    FK_ERR_HANDSHAKE_TIMEOUT = 6,
    FK_ERR_UNKNOWN_INSTANCE = 10,
    FK_ERR_INVALID_TASK = 11,
    FK_ERR_DUPLICATE_EXECUTOR = 12,
    FK_ERR_SHUTTING_DOWN = 13,
    FK_ERR_BUSY = 14
};

/* The name of a message type, as docs/protocol.md spells it; NULL for a type an executor does not know. */
const char *fk_type_name(int type);

/* The name of an ERROR code, as docs/protocol.md and the Java side (ErrorCode) spell it: the Java and
 * C executors say the same thing when the dispatcher stops them. "UNKNOWN" for a code it does not know. */
const char *fk_error_name(int code);

#define FK_FLAG_STDOUT_TRUNCATED 1
#define FK_FLAG_STDERR_TRUNCATED 2
#define FK_FLAG_NO_EXEC 4
/* the failure would happen on any executor: not retried (docs/protocol.md) */
#define FK_FLAG_PERMANENT 8

enum fk_ext_tag {
    FK_EXT_RETRIES = 0x0001,
    FK_EXT_INPUTS = 0x0002,
    FK_EXT_OUTPUTS = 0x0003,
    FK_EXT_SHELL_LINE = 0x0004, /* the shell line this argv was split from: run it if the program cannot start */
    FK_EXT_RESOURCES = 0x0009,  /* cores:u32 memoryMiB:u32: the task takes that many slots at once */
    FK_EXT_WORKER = 0x000A,     /* command:list<str> payload:blob: run by a persistent worker (worker.h) */
    FK_EXT_TEMPORARY = 0x000B,  /* count:u16 (index:u16)*: OUTPUTS held in the cache, not written to the store */
    FK_EXT_ARCHIVE = 0x000C,    /* count:u16 (index:u16)*: OUTPUTS appended to the executor's output archive */
    FK_EXT_NAMED_RESOURCES = 0x000E, /* count:u16 (name:str amount:u32)*: GPUs and the like (resources.h) */
    FK_EXT_READ_ONLY = 0x000F,  /* count:u16 (index:u16)*: INPUTS the task only reads (binds.h) */
    FK_EXT_HINTS = 0x0010,
    FK_EXT_BYPASS_CACHE = 0x0011,
    FK_EXT_DATA_STATS = 0x0020,
    FK_EXT_HELD = 0x0022,       /* count:u16 (id:str)*: the temporary outputs this executor holds */
    FK_EXT_ARCHIVED = 0x0023    /* count:u16 (id:str archive:str offset:u64 size:u64 sha256:str)* */
};

/* A string or byte string: owned, NUL-terminated for convenience (may also contain NULs). */
typedef struct {
    char *s;
    size_t len;
} fk_str;

typedef struct {
    uint16_t tag;
    fk_str value;
} fk_ext;

typedef struct {
    size_t n;
    fk_ext *items;
} fk_ext_list;

typedef struct {
    fk_str key;
    fk_str value;
} fk_kv;

typedef struct {
    size_t n;
    fk_kv *items;
} fk_map;

typedef struct {
    size_t argc;
    fk_str *argv;
    fk_map env;
    fk_str workdir;
    uint32_t wall_ms;
    fk_ext_list ext;
} fk_spec;

typedef struct {
    uint8_t status;
    int32_t exit_code;
    uint8_t flags;
    int64_t started_us;
    int64_t finished_us;
    fk_str out;
    fk_str err;
    fk_str detail;
    fk_ext_list ext;
} fk_exec;

typedef struct {
    uint64_t task_id;
    uint32_t attempt;
    fk_str spec; /* the encoded spec blob */
    fk_ext_list ext;
} fk_dtask;

typedef struct {
    uint64_t task_id;
    uint32_t attempt;
    fk_exec exec;
} fk_tresult;

typedef struct {
    fk_str id;
    int64_t size;
} fk_cached;

/* An input object of a task (the INPUTS extension). */
typedef struct {
    fk_str id;
    fk_str source;
    int64_t size;
    fk_str checksum;
    uint8_t unpack;
    fk_str name;
    uint8_t read_only; /* marked by READ_ONLY: the task only reads it */
} fk_input;

/* One object of a REPLICATE: as a task's input declares it (stored form), and the peers to try first. */
typedef struct {
    fk_input ref;
    size_t npeers;
    fk_str *peers;
} fk_replica;

typedef struct {
    int type;
    union {
        struct {
            uint32_t magic;
            uint16_t version;
            uint8_t role;
            fk_str token;
            fk_str agent;
        } hello;
        struct {
            uint16_t version;
            uint32_t heartbeat_ms;
            uint32_t max_frame;
            fk_str dispatcher_id;
        } welcome;
        struct {
            int64_t time_us;
        } heartbeat;
        struct {
            uint32_t request_id;
            uint16_t code;
            fk_str message;
        } error;
        struct {
            fk_str id;
            fk_str host;
            uint32_t slots;
            uint32_t flags;
            fk_map attrs;
        } reg;
        struct {
            uint32_t credits;
        } credit;
        struct {
            size_t n;
            fk_dtask *tasks;
        } dispatch;
        struct {
            uint32_t credits;
            size_t n;
            fk_tresult *results;
        } result;
        struct {
            size_t n;
            uint64_t *ids;
        } cancel;
        struct {
            uint8_t full;
            size_t nadded;
            fk_cached *added;
            size_t nremoved;
            fk_str *removed;
        } cache;
        struct {
            size_t n;
            fk_str *ids;
        } release;
        struct {
            size_t n;
            fk_replica *objects;
        } replicate;
    } u;
} fk_msg;


typedef struct {
    fk_str path;
    fk_str id;
    int temporary; /* marked by the TEMPORARY extension */
    int archived;  /* marked by the ARCHIVE extension */
} fk_output;

typedef struct {
    uint64_t local_hits, peer_hits, misses, bytes_local, bytes_peer, bytes_store;
    uint64_t refetched;     /* cached copies found stale and fetched again */
    uint64_t bytes_written; /* bytes of declared outputs written to the shared store */
} fk_data_stats;

/* Decodes one frame body (the type byte and what follows). Returns 0, or -1 with err filled
 * in naming the message and field. */
int fk_decode(const uint8_t *body, size_t len, fk_msg *out, char *err, size_t errlen);
/* Appends a whole frame (length prefix, type, body). */
void fk_encode(const fk_msg *m, fk_buf *out);
void fk_msg_free(fk_msg *m);

int fk_spec_decode(const uint8_t *blob, size_t len, fk_spec *out, char *err, size_t errlen);
void fk_spec_free(fk_spec *s);
void fk_exec_free(fk_exec *e);
void fk_ext_list_free(fk_ext_list *l);
void fk_str_free(fk_str *s);
fk_str fk_str_dup(const char *s, size_t len);
fk_str fk_str_of(const char *s);

/* The extension with this tag, or NULL. */
const fk_ext *fk_ext_find(const fk_ext_list *l, uint16_t tag);
/* The slots a task takes at once (its RESOURCES cores, 1 when it states none); *declared (may be
 * NULL) says whether it stated them. */
uint32_t fk_spec_cores(const fk_spec *s, int *declared);
/* The same, read straight from an encoded spec without decoding it (1 when it is malformed). */
uint32_t fk_spec_blob_cores(const uint8_t *blob, size_t len);

int fk_inputs_decode(const fk_str *value, fk_input **out, size_t *n, char *err, size_t errlen);
void fk_inputs_free(fk_input *in, size_t n);
int fk_outputs_decode(const fk_str *value, fk_output **out, size_t *n, char *err, size_t errlen);
/* Marks outs[0..n) temporary (archive 0) or archived (archive 1) as a TEMPORARY or ARCHIVE extension
 * says (indexes ascending, each once, below n; none both). 0, or -1 with err. */
int fk_output_marks_decode(const fk_str *value, fk_output *outs, size_t n, int archive, char *err, size_t errlen);
void fk_outputs_free(fk_output *o, size_t n);
/* Marks ins[0..n) read-only as a READ_ONLY extension says (indexes ascending, each once, below n). 0, or -1
 * with err. */
int fk_input_marks_decode(const fk_str *value, fk_input *ins, size_t n, char *err, size_t errlen);
/* Hints: for each object id, peers ("host:port"). Returns the peers for id (count in *n), or NULL. */
typedef struct {
    fk_str id;
    size_t npeers;
    fk_str *peers;
} fk_hint;
int fk_hints_decode(const fk_str *value, fk_hint **out, size_t *n, char *err, size_t errlen);
void fk_hints_free(fk_hint *h, size_t n);
void fk_stats_encode(const fk_data_stats *s, fk_buf *out);

#endif
