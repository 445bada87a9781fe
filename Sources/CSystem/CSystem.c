#define _GNU_SOURCE
#include <malloc.h>
#include <poll.h>
#include <time.h>
#include <sys/socket.h>
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

int spy_malloc_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }

int spy_malloc_trim(void) { return malloc_trim(0); }
