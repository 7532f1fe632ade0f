/* version.c: mbd_version, the release that the file VERSION names (the Makefile passes it). */
#include "mbd.h"

#ifndef MBD_VERSION
#define MBD_VERSION "unknown"
#endif

const char *mbd_version(void) { return MBD_VERSION; }
