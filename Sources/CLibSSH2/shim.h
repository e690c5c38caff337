#ifndef OCTUNNEL_CLIBSSH2_SHIM_H
#define OCTUNNEL_CLIBSSH2_SHIM_H
#include <libssh2.h>
#endif
