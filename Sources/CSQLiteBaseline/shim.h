// The system SQLite (libsqlite3-dev), called directly by the benchmark's raw baseline.
#include <sqlite3.h>
