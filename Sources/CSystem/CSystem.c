#define _GNU_SOURCE
#include <poll.h>
#include <time.h>
#include <sys/socket.h>
#include "CSystem.h"

int spy_wait_readable(int fd, long micros) {
    struct pollfd p = { fd, POLLIN, 0 };
    struct timespec ts = { micros / 1000000, (micros % 1000000) * 1000 };
    return ppoll(&p, 1, &ts, 0);
}

int spy_accept_cloexec(int fd, void *addr, unsigned int *len) {
    return accept4(fd, (struct sockaddr *)addr, (socklen_t *)len, SOCK_CLOEXEC);
}
