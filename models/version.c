/* version.c: mbd_version, the commit that the Makefile names (git describe). */
#include "mbd.h"

#ifndef MBD_VERSION
#define MBD_VERSION "unknown"
#endif

const char *mbd_version(void) { return MBD_VERSION; }
