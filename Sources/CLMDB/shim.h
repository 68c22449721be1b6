#ifndef OFFLINESYNC_CLMDB_SHIM_H
#define OFFLINESYNC_CLMDB_SHIM_H

#include <lmdb.h>

#endif
