#ifndef TODOSYNC_MHD_SHIM_H
#define TODOSYNC_MHD_SHIM_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// Starts a daemon with an internal epoll polling thread (and a thread pool when
/// `thread_pool_size` >= 2), suspend/resume allowed, bound to `host` (IPv4 or IPv6
/// literal) and `port` (0 = ephemeral). Paths and query arguments reach the handler
/// still percent-encoded. Returns NULL when the daemon cannot start;
/// `error_out` then says why (-1: bad address, -2: this libmicrohttpd has no TLS, 0: libmicrohttpd
/// refused, e.g. port in use or a certificate or key it cannot read). With `tls_certificate` and
/// `tls_key` (PEM text, both or neither) it speaks HTTPS, through libmicrohttpd's own TLS (GnuTLS).
struct MHD_Daemon *todosync_mhd_start(const char *host,
                                      uint16_t port,
                                      unsigned int thread_pool_size,
                                      unsigned int connection_timeout_seconds,
                                      unsigned int connection_limit,
                                      MHD_AccessHandlerCallback handler,
                                      void *handler_cls,
                                      MHD_RequestCompletedCallback completed,
                                      void *completed_cls,
                                      const char *tls_certificate,
                                      const char *tls_key,
                                      int *error_out);

/// The port the daemon is bound to (the real one when it was started on port 0).
uint16_t todosync_mhd_bound_port(struct MHD_Daemon *daemon);

/// The connection's socket (-1 if unknown). MHD_get_connection_info is variadic, which Swift cannot call.
int todosync_mhd_connection_socket(struct MHD_Connection *connection);

/// The client's numeric address ("192.0.2.7", "::1") into `buffer`; an empty string when unknown.
void todosync_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length);

#endif
