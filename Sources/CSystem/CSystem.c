#define _GNU_SOURCE
#include <malloc.h>
#include <poll.h>
#include <time.h>
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "CSystem.h"

int spy_wait_readable(int fd, long micros) {
    struct pollfd p = { fd, POLLIN, 0 };
    struct timespec ts = { micros / 1000000, (micros % 1000000) * 1000 };
    return ppoll(&p, 1, &ts, 0);
}

int spy_wait_readable2(int fd1, int fd2, long micros) {
    struct pollfd p[2] = { { fd1, POLLIN, 0 }, { fd2, POLLIN, 0 } };
    struct timespec ts = { micros / 1000000, (micros % 1000000) * 1000 };
    int rc = ppoll(p, 2, &ts, 0);
    if (rc <= 0) return rc;
    return (p[0].revents ? 1 : 0) | (p[1].revents ? 2 : 0);
}

int spy_accept_cloexec(int fd, void *addr, unsigned int *len) {
    return accept4(fd, (struct sockaddr *)addr, (socklen_t *)len, SOCK_CLOEXEC);
}

int spy_name_this_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

/* The self-pipe of the stop signals: the handler writes, spy_wait_stop_signal reads. */
static int spy_stop_pipe[2] = { -1, -1 };

/* Async-signal-safe: one write(2), errno kept. */
static void spy_stop_handler(int sig) {
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    ssize_t n = write(spy_stop_pipe[1], &b, 1);
    (void)n;
    errno = saved;
}

int spy_install_stop_signals(void) {
    if (spy_stop_pipe[0] >= 0) return 0;
    if (pipe2(spy_stop_pipe, O_CLOEXEC) != 0) return -1;
    fcntl(spy_stop_pipe[1], F_SETFL, O_NONBLOCK);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = spy_stop_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGINT, &sa, 0) != 0 || sigaction(SIGTERM, &sa, 0) != 0) return -1;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &set, 0);
    return 0;
}

int spy_wait_stop_signal(void) {
    for (;;) {
        unsigned char b;
        ssize_t n = read(spy_stop_pipe[0], &b, 1);
        if (n == 1) return b;
        if (n < 0 && errno == EINTR) continue;
        return -1;
    }
}

int spy_malloc_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }

int spy_malloc_trim(void) { return malloc_trim(0); }
