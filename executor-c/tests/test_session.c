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
#include <string.h>
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

/* The dispatcher stops for good while the executor has bytes to send: it writes ERROR
 * SHUTTING_DOWN and closes with bytes of the executor's unread, so the executor's kernel gets the
 * frame and then a reset. The executor's next write fails; it must still read the frame, leave
 * with status 0 and not dial for ten minutes a dispatcher that said it is not coming back. */
static void test_shutting_down_read_before_a_failed_write(void) {
    int port;
    int l = listen_local(&port);
    if (l < 0) {
        CHECK(0, "no listening socket");
        return;
    }
    fk_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.host = "127.0.0.1";
    cfg.port = port;
    cfg.reconnect_for_s = 600;
    ex e;
    memset(&e, 0, sizeof e);
    e.cfg = &cfg;
    e.session.disconnected_at = -1;
    e.session.next_dial = -1;
    e.reports.linger_until = -1;
    e.session.max_frame = FK_MAX_FRAME;
    e.queue.wake_fd = -1;
    pthread_mutex_init(&e.queue.lock, NULL);
    pthread_cond_init(&e.queue.cond, NULL);
    fk_conn_init(&e.session.conn, NULL);
    char why[256] = "";
    CHECK(fk_conn_dial(&e.session.conn, "127.0.0.1", port, why, sizeof why) == 0, "dial: %s", why);
    int d = accept(l, NULL, NULL);
    int progressed;
    while ((progressed = fk_conn_progress(&e.session.conn, why, sizeof why)) == 0) {
        struct pollfd p = {.fd = e.session.conn.fd, .events = POLLOUT};
        poll(&p, 1, -1);
    }
    CHECK(progressed == 1, "connect: %s", why);
    e.session.registered = e.session.registered_once = 1;

    /* something of the executor's the dispatcher never reads: its close becomes a reset */
    const char unread[] = "credit";
    CHECK(send(e.session.conn.fd, unread, sizeof unread, 0) == (ssize_t)sizeof unread, "send: %s", strerror(errno));
    struct pollfd arrived = {.fd = d, .events = POLLIN};
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
    CHECK(send(d, frame.data, frame.len, 0) == (ssize_t)frame.len, "send: %s", strerror(errno));
    fk_buf_free(&frame);
    close(d);
    close(l);
    /* the reset has arrived once the socket reports the hang-up */
    for (;;) {
        struct pollfd p = {.fd = e.session.conn.fd, .events = 0};
        poll(&p, 1, -1);
        if (p.revents & (POLLHUP | POLLERR)) {
            break;
        }
    }

    /* a heartbeat, say, waits to go out: the write fails first */
    fk_buf_put(&e.session.conn.out, "heartbeat", 9);
    ex_write_out(&e);
    CHECK(e.terminated, "the executor did not stop: it read %s", e.session.next_dial >= 0 ? "nothing and dials again" : "?");
    CHECK(e.exit_status == 0, "exit status %d (%s)", e.exit_status, e.exit_why);
    CHECK(strstr(e.exit_why, "SHUTTING_DOWN") != NULL, "why: %s", e.exit_why);
    ex_close_conn(&e);
    fk_conn_destroy(&e.session.conn);
    pthread_mutex_destroy(&e.queue.lock);
    pthread_cond_destroy(&e.queue.cond);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    test_shutting_down_read_before_a_failed_write();
    printf("session tests: %d failures\n", check_failures);
    return check_failures ? 1 : 0;
}
