// The system LMDB (liblmdb-dev), called directly by the benchmark's raw baseline.
#include <lmdb.h>
