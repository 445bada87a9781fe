#ifndef SPYGLASS_CSYSTEM_H
#define SPYGLASS_CSYSTEM_H
/* GNU extensions of glibc that Swift's Glibc module does not expose (ppoll, accept4, malloc.h).
   The header includes no system header, so it cannot clash with Glibc's module. */

/* Waits up to `micros` µs for `fd` to become readable (ppoll: µs precision, unlike poll's ms).
   Returns >0 when readable or hung up, 0 on timeout, <0 on error or EINTR. */
int spy_wait_readable(int fd, long micros);

/* Waits up to `micros` µs for `fd1` or `fd2` (ppoll). Returns a mask (1: fd1 readable or hung up,
   2: fd2), 0 on timeout, <0 on error or EINTR. */
int spy_wait_readable2(int fd1, int fd2, long micros);

/* accept4(fd, addr, len, SOCK_CLOEXEC). `addr` is a struct sockaddr *, `len` a socklen_t *. */
int spy_accept_cloexec(int fd, void *addr, unsigned int *len);
/* Names the calling thread (pthread_setname_np: at most 15 bytes are kept), as top -H, gdb and
   /proc/PID/task/TID/comm show it. Returns 0 or an error number. */
int spy_name_this_thread(const char *name);

/* Installs one handler (sigaction, SA_RESTART) for SIGINT and SIGTERM in every thread: it writes
   the signal's number to a pipe, so no signal is lost whatever thread takes it. Unblocks both in
   the calling thread. Call once, before any thread starts. Returns 0, or -1 with errno set. */
int spy_install_stop_signals(void);

/* Blocks until a signal the handler caught; returns its number (-1 if none can come). */
int spy_wait_stop_signal(void);

/* mallopt(M_MMAP_THRESHOLD, bytes): a fixed threshold (glibc's dynamic one is turned off).
   Returns 1 on success, 0 on error. */
int spy_malloc_set_mmap_threshold(int bytes);

/* malloc_trim(0): returns freed pages of every arena to the system. Returns 1 if any were. */
int spy_malloc_trim(void);
#endif
