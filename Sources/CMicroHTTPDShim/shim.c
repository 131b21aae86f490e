#include "CMicroHTTPDShim.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>

/* The stack of each server thread, whatever the environment's `ulimit -s` (which the default
 * follows): handlers start on these threads, and the $filter parser recurses about 18 KB per
 * nesting level in a debug build (64 levels at most), more than a 1 MB stack holds. Only what is
 * used of it is ever backed by memory. */
#define TODOSYNC_MHD_THREAD_STACK (8u << 20)

/* Leaves the request target as it came, so that Swift decodes paths and queries itself
 * (strictly, as UTF-8). libmicrohttpd has already turned '+' into ' ' in query arguments. */
static size_t todosync_mhd_keep_escapes(void *cls, struct MHD_Connection *connection, char *s) {
    (void)cls; (void)connection;
    return strlen(s);
}

struct MHD_Daemon *todosync_mhd_start(const char *host, uint16_t port,
                                      unsigned int thread_pool_size,
                                      unsigned int connection_timeout_seconds,
                                      unsigned int connection_limit,
                                      MHD_AccessHandlerCallback handler, void *handler_cls,
                                      MHD_RequestCompletedCallback completed, void *completed_cls,
                                      const char *tls_certificate, const char *tls_key,
                                      int *error_out) {
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    const struct sockaddr *address;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;

    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (inet_pton(AF_INET, host, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(port);
        address = (const struct sockaddr *)&v4;
    } else if (inet_pton(AF_INET6, host, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(port);
        address = (const struct sockaddr *)&v6;
        flags |= MHD_USE_IPv6;
    } else {
        *error_out = -1;
        return NULL;
    }
    *error_out = 0;
    if (thread_pool_size < 2) thread_pool_size = 0; /* 1 is refused by libmicrohttpd */

    /* The certificate and key when TLS is asked for; otherwise the array starts at its end. */
    struct MHD_OptionItem tls_options[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)tls_certificate},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)tls_key},
        {MHD_OPTION_END, 0, NULL},
    };
    const struct MHD_OptionItem *tls = &tls_options[2];
    if (tls_certificate != NULL && tls_key != NULL) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            *error_out = -2;
            return NULL;
        }
        flags |= MHD_USE_TLS;
        tls = tls_options;
    }
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                            MHD_OPTION_THREAD_STACK_SIZE, (size_t)TODOSYNC_MHD_THREAD_STACK,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_UNESCAPE_CALLBACK, todosync_mhd_keep_escapes, NULL,
                            MHD_OPTION_ARRAY, tls,
                            MHD_OPTION_END);
}

uint16_t todosync_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

int todosync_mhd_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

void todosync_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length) {
    if (length == 0) return;
    buffer[0] = '\0';
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *address = info->client_addr;
    socklen_t size = address->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (getnameinfo(address, size, buffer, (socklen_t)length, NULL, 0, NI_NUMERICHOST) != 0) buffer[0] = '\0';
}
