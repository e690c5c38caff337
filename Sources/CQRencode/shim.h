#ifndef OCTUNNEL_CQRENCODE_SHIM_H
#define OCTUNNEL_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
