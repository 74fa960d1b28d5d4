/* The C executor's session with its dispatcher over a real TCP connection on 127.0.0.1, the
 * dispatcher's side played by the test with plain sockets: what the dispatcher said before it
 * closed is honoured even when the executor finds the connection gone by writing to it. */
#include "../src/executor_state.h"
#include "check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

static int listen_local(int *port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 1) != 0
        || getsockname(s, (struct sockaddr *)&a, &len) != 0) {
        perror("listen");
        return -1;
    }
    *port = ntohs(a.sin_port);
    return s;
}

/* The next frame the executor sent on the dispatcher's end d, decoded into *m: 0, or -1 (why in err). */
static int read_msg(int d, fk_msg *m, char *err, size_t errlen) {
    uint8_t head[4];
    size_t got = 0;
    while (got < sizeof head) {
        ssize_t n = recv(d, head + got, sizeof head - got, 0);
        if (n <= 0) {
            snprintf(err, errlen, "connection closed");
            return -1;
        }
        got += (size_t)n;
    }
    size_t len = (size_t)head[0] << 24 | (size_t)head[1] << 16 | (size_t)head[2] << 8 | head[3];
    uint8_t body[8192];
    if (len > sizeof body) {
        snprintf(err, errlen, "frame of %zu bytes", len);
        return -1;
    }
    for (got = 0; got < len;) {
        ssize_t n = recv(d, body + got, len - got, 0);
        if (n <= 0) {
            snprintf(err, errlen, "connection closed");
            return -1;
        }
        got += (size_t)n;
    }
    memset(m, 0, sizeof *m);
    return fk_decode(body, len, m, err, errlen);
}

/* An executor and the dispatcher's side of its session: its end of the connection d, its
 * listening socket l. */
typedef struct {
    fk_config cfg;
    ex e;
    int d, l;
} session;

/* The executor of *s registered over a real connection on 127.0.0.1, its state as main() leaves it
 * (the main thread's wake-up included): 0, or -1. */
static int registered(session *s) {
    int port;
    ex *e = &s->e;
    fk_config *cfg = &s->cfg;
    int l = s->l = listen_local(&port);
    if (l < 0) {
        CHECK(0, "no listening socket");
        return -1;
    }
    memset(cfg, 0, sizeof *cfg);
    cfg->host = "127.0.0.1";
    cfg->port = port;
    memset(e, 0, sizeof *e);
    e->cfg = cfg;
    ex_session_init(e, ex_on_message);
    ex_reports_init(e);
    char err[256];
    CHECK(ex_queue_init(e) == 0 && ex_session_open(e, err, sizeof err) == 0, "the state set up: %s", err);
    char why[256] = "";
    CHECK(fk_conn_dial(&e->session.conn, "127.0.0.1", port, why, sizeof why) == 0, "dial: %s", why);
    int d = accept(l, NULL, NULL);
    int progressed;
    while ((progressed = fk_conn_progress(&e->session.conn, why, sizeof why)) == 0) {
        struct pollfd p = {.fd = e->session.conn.fd, .events = POLLOUT};
        poll(&p, 1, -1);
    }
    CHECK(progressed == 1, "connect: %s", why);
    e->session.registered = e->session.registered_once = 1;
    s->d = d;
    return d < 0 ? -1 : 0;
}

/* What registered() set up, gone: both ends of the connection, the listener (when the test has
 * not closed them itself: -1), the wake-up. */
static void released(session *s) {
    ex *e = &s->e;
    if (s->d >= 0) {
        close(s->d);
        close(s->l);
    }
    ex_close_conn(e);
    ex_session_destroy(e);
    ex_queue_destroy(e);
}

/* The dispatcher stops for good while the executor has bytes to send: it writes ERROR
 * SHUTTING_DOWN and closes with bytes of the executor's unread, so the executor's kernel gets the
 * frame and then a reset. The executor's next write fails; it must still read the frame, leave
 * with status 0 and not dial for ten minutes a dispatcher that said it is not coming back. */
static void test_shutting_down_read_before_a_failed_write(void) {
    session s;
    if (registered(&s) != 0) {
        return;
    }
    s.cfg.reconnect_for_s = 600;

    /* something of the executor's the dispatcher never reads: its close becomes a reset */
    const char unread[] = "credit";
    CHECK(send(s.e.session.conn.fd, unread, sizeof unread, 0) == (ssize_t)sizeof unread, "send: %s", strerror(errno));
    struct pollfd arrived = {.fd = s.d, .events = POLLIN};
    poll(&arrived, 1, -1);
    fk_msg m;
    memset(&m, 0, sizeof m);
    m.type = FK_ERROR;
    m.u.error.code = FK_ERR_SHUTTING_DOWN;
    m.u.error.message = fk_str_of("the dispatcher is shutting down");
    fk_buf frame;
    fk_buf_init(&frame);
    fk_encode(&m, &frame);
    fk_str_free(&m.u.error.message);
    CHECK(send(s.d, frame.data, frame.len, 0) == (ssize_t)frame.len, "send: %s", strerror(errno));
    fk_buf_free(&frame);
    close(s.d);
    close(s.l);
    s.d = -1; /* closed here, not by released() */
    /* the reset has arrived once the socket reports the hang-up */
    for (;;) {
        struct pollfd p = {.fd = s.e.session.conn.fd, .events = 0};
        poll(&p, 1, -1);
        if (p.revents & (POLLHUP | POLLERR)) {
            break;
        }
    }

    /* a heartbeat, say, waits to go out: the write fails first */
    fk_buf_put(&s.e.session.conn.out, "heartbeat", 9);
    ex_write_out(&s.e);
    CHECK(s.e.terminated, "the executor did not stop: it read %s", s.e.session.next_dial >= 0 ? "nothing and dials again" : "?");
    CHECK(s.e.exit_status == 0, "exit status %d (%s)", s.e.exit_status, s.e.exit_why);
    CHECK(strstr(s.e.exit_why, "SHUTTING_DOWN") != NULL, "why: %s", s.e.exit_why);
    released(&s);
}

/* Cache changes wait for company: the first of a burst wakes the main thread, which reports them
 * all CACHE_CHANGES_MS later in one CACHE_UPDATE holding each object's last change. */
static void test_cache_changes_are_reported_together_once_due(void) {
    session s;
    if (registered(&s) != 0) {
        return;
    }

    CHECK(ex_flush_cache_changes(&s.e, fk_mono_millis(), 0) == -1, "nothing pending, nothing due");
    int64_t before = fk_mono_millis();
    ex_cache_changed(&s.e, "a", 10);
    ex_cache_changed(&s.e, "b", 5);
    ex_cache_changed(&s.e, "a", -1);
    ex_cache_changed(&s.e, "c", 7);
    ex_cache_changed(&s.e, "a", 20);
    ex_cache_changed(&s.e, "b", -1);
    uint64_t wakes = 0;
    CHECK(read(s.e.queue.wake_fd, &wakes, sizeof wakes) == sizeof wakes && wakes == 1, "woken %llu times for six changes",
          (unsigned long long)wakes);
    int64_t due = ex_flush_cache_changes(&s.e, before, 0);
    CHECK(due >= before + CACHE_CHANGES_MS && s.e.session.conn.out.len == 0, "reported before due (due %lld, now %lld)",
          (long long)due, (long long)before);
    CHECK(ex_flush_cache_changes(&s.e, due, 0) == -1 && s.e.session.conn.out.len > 0, "not reported once due");
    ex_write_out(&s.e);
    fk_msg m;
    char err[256] = "";
    CHECK(read_msg(s.d, &m, err, sizeof err) == 0 && m.type == FK_CACHE_UPDATE, "no CACHE_UPDATE: %s", err);
    int a20 = 0, c7 = 0;
    for (size_t i = 0; i < m.u.cache.nadded; i++) {
        a20 += strcmp(m.u.cache.added[i].id.s, "a") == 0 && m.u.cache.added[i].size == 20;
        c7 += strcmp(m.u.cache.added[i].id.s, "c") == 0 && m.u.cache.added[i].size == 7;
    }
    CHECK(m.u.cache.nadded == 2 && a20 && c7, "added: %zu entries, a as 20: %d, c: %d", m.u.cache.nadded, a20, c7);
    CHECK(m.u.cache.nremoved == 1 && strcmp(m.u.cache.removed[0].s, "b") == 0, "removed: %zu entries",
          m.u.cache.nremoved);
    fk_msg_free(&m);
    released(&s);
}

/* A task that cached what it read finishes before the changes are due: its result must not reach
 * the dispatcher before the change does, or the next task that needs the object is placed as if
 * nobody had it. The changes pending go first, and nothing is reported twice. */
static void test_cache_changes_pending_go_ahead_of_results(void) {
    session s;
    if (registered(&s) != 0) {
        return;
    }
    ex_cache_changed(&s.e, "x", 100);
    done *r = calloc(1, sizeof *r);
    r->task_id = 7;
    r->attempt = 1;
    r->cores = 1;
    r->exec.status = FK_EXITED;
    s.e.queue.dhead = s.e.queue.dtail = r;
    s.e.queue.ndone = 1;
    ex_flush_results(&s.e); /* long before the changes are due */
    ex_write_out(&s.e);
    fk_msg m;
    char err[256] = "";
    CHECK(read_msg(s.d, &m, err, sizeof err) == 0 && m.type == FK_CACHE_UPDATE, "first: type %d, not CACHE_UPDATE (%s)",
          m.type, err);
    CHECK(m.u.cache.nadded == 1 && strcmp(m.u.cache.added[0].id.s, "x") == 0, "added: %zu entries", m.u.cache.nadded);
    fk_msg_free(&m);
    CHECK(read_msg(s.d, &m, err, sizeof err) == 0 && m.type == FK_RESULT && m.u.result.n == 1
          && m.u.result.results[0].task_id == 7, "then: type %d, not the RESULT (%s)", m.type, err);
    fk_msg_free(&m);
    CHECK(ex_flush_cache_changes(&s.e, fk_mono_millis() + CACHE_CHANGES_MS, 0) == -1 && s.e.session.conn.out.len == 0,
          "the change was reported again");
    released(&s);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    test_shutting_down_read_before_a_failed_write();
    test_cache_changes_are_reported_together_once_due();
    test_cache_changes_pending_go_ahead_of_results();
    printf("session tests: %d failures\n", check_failures);
    return check_failures ? 1 : 0;
}
