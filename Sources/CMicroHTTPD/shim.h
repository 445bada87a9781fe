#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

/* MHD_start_daemon is variadic, which Swift cannot call: one fixed form, listening on `addr`
   (an IPv4 sockaddr_in), with libmicrohttpd's own polling thread. No MHD_USE_ERROR_LOG: a port in use
   is our one line ("--metrics …: cannot listen (Address already in use)"), not that and libmicrohttpd's too. */
typedef enum MHD_Result (*spy_mhd_handler)(void *cls, struct MHD_Connection *connection, const char *url,
                                           const char *method, const char *version, const char *upload_data,
                                           size_t *upload_data_size, void **req_cls);

static inline struct MHD_Daemon *spy_mhd_start(const struct sockaddr_in *addr, spy_mhd_handler handler, void *cls) {
    return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, ntohs(addr->sin_port), NULL, NULL,
                            (MHD_AccessHandlerCallback)handler, cls,
                            MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)addr,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
                            MHD_OPTION_END);
}

/* The port the daemon listens on (for port 0). */
static inline uint16_t spy_mhd_port(struct MHD_Daemon *d) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/* A response holding its own copy of `bytes`. */
static inline struct MHD_Response *spy_mhd_response_copy(size_t size, const void *bytes) {
    return MHD_create_response_from_buffer(size, (void *)bytes, MHD_RESPMEM_MUST_COPY);
}
