#ifndef OFFLINE_SYNC_CLIBPQ_SHIM_H
#define OFFLINE_SYNC_CLIBPQ_SHIM_H

/// libpq, PostgreSQL's C client library (Debian `libpq-dev`, headers in /usr/include/postgresql).
#include <libpq-fe.h>

#endif
