/*
 * falkon-pyrun: the launcher of one Parsl python_app call (python/src/falkon/parsl/worker.py).
 *
 *   falkon-pyrun SOCKET PYTHON SCRIPT IN OUT
 *
 * Hands this process's standard streams, working directory and environment to the node's
 * zygote listening on the Unix socket SOCKET, which runs the call in one of its Python workers,
 * and exits with the status the zygote reports (a worker killed by a signal: that signal). It is
 * what `python -S SCRIPT IN OUT` (_pyrun.py) does, without starting Python for every task; when
 * there is no zygote yet, or SOCKET's directory is not private to this user, it becomes exactly
 * that command (which starts the zygote, or runs the call itself).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

static char *python, *script, *in, *out;

static _Noreturn void fallback(void) {
    char *argv[] = {python, "-S", script, in, out, NULL};
    execv(python, argv);
    fprintf(stderr, "falkon-pyrun: cannot run %s: %s\n", python, strerror(errno));
    exit(127);
}

/* The socket's directory must be this user's alone: never hand streams to a socket someone else placed. */
static int private_dir(const char *sock) {
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    const char *slash = strrchr(sock, '/');
    size_t n = slash ? (size_t)(slash - sock) : 0;
    if (n == 0 || n >= sizeof dir) {
        return 0;
    }
    memcpy(dir, sock, n);
    dir[n] = '\0';
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 077) == 0;
}

static int write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* IN \0 OUT \0 CWD (\0 K=V)* : what worker.py's _parse_request reads. */
static char *request(size_t *len) {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) {
        return NULL;
    }
    size_t total = strlen(in) + 1 + strlen(out) + 1 + strlen(cwd);
    for (char **e = environ; *e; e++) {
        total += 1 + strlen(*e);
    }
    char *buf = malloc(total + 1);
    if (!buf) {
        return NULL;
    }
    size_t at = (size_t)sprintf(buf, "%s%c%s%c%s", in, '\0', out, '\0', cwd);
    for (char **e = environ; *e; e++) {
        buf[at++] = '\0';
        size_t k = strlen(*e);
        memcpy(buf + at, *e, k);
        at += k;
    }
    *len = at;
    return buf;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: falkon-pyrun SOCKET PYTHON SCRIPT IN OUT\n");
        return 2;
    }
    const char *sock = argv[1];
    python = argv[2];
    script = argv[3];
    in = argv[4];
    out = argv[5];

    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof addr.sun_path || !private_dir(sock)) {
        fallback();
    }
    strcpy(addr.sun_path, sock);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&addr, sizeof addr) != 0) {
        fallback(); /* no zygote yet: _pyrun.py starts one under its lock */
    }

    size_t len;
    char *req = request(&len);
    if (!req || len > UINT32_MAX) {
        fprintf(stderr, "falkon-pyrun: cannot build the request\n");
        return 70;
    }
    unsigned char hdr[4] = {(unsigned char)(len >> 24), (unsigned char)(len >> 16), (unsigned char)(len >> 8),
                            (unsigned char)len};
    int fds[3] = {0, 1, 2};
    union {
        char buf[CMSG_SPACE(sizeof fds)];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {.iov_base = hdr, .iov_len = sizeof hdr};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(cm), fds, sizeof fds);
    if (sendmsg(s, &msg, 0) != (ssize_t)sizeof hdr || write_all(s, req, len) != 0) {
        fprintf(stderr, "falkon-pyrun: cannot reach the Python worker zygote at %s: %s\n", sock, strerror(errno));
        return 70;
    }
    free(req);

    char reply[32];
    size_t got = 0;
    while (got < sizeof reply - 1) {
        ssize_t r = read(s, reply + got, sizeof reply - 1 - got);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        got += (size_t)r;
        if (memchr(reply, '\n', got)) {
            break;
        }
    }
    reply[got] = '\0';
    if (!memchr(reply, '\n', got)) {
        fprintf(stderr, "falkon-pyrun: the Python worker zygote went away while running this task\n");
        return 70;
    }
    int code = atoi(reply);
    if (code < 0) { /* the worker died of a signal: so does this process, for the executor to report it */
        signal(-code, SIG_DFL);
        raise(-code);
        return 128 - code;
    }
    return code;
}
