/* TLS of the gRPC port ([daemon.tls]): server certificate and key, and with client_ca mutual
 * TLS (a client must present a certificate signed by it). The PEM files are read at start and
 * again by cuzk_rpc_tls_reload (SIGHUP); gRPC asks for the current ones at every handshake,
 * so a reload takes effect for new connections and open ones keep theirs. */
#ifndef CUZK_RPC_TLS_H
#define CUZK_RPC_TLS_H

#include <grpc/grpc_security.h>

#include "cuzk/err.h"

typedef struct cuzk_rpc_tls cuzk_rpc_tls;

/* Reads and checks the files (client_ca NULL or "": server-only TLS). */
cuzk_err cuzk_rpc_tls_new(cuzk_rpc_tls **out, const char *cert, const char *key,
                          const char *client_ca, cuzk_errbuf *eb);
/* Server credentials that fetch the current files; t must outlive the server using them. */
grpc_server_credentials *cuzk_rpc_tls_credentials(cuzk_rpc_tls *t);
/* Re-reads the files; on any error the ones in use stay. */
cuzk_err cuzk_rpc_tls_reload(cuzk_rpc_tls *t, cuzk_errbuf *eb);
void cuzk_rpc_tls_free(cuzk_rpc_tls *t);

#endif
