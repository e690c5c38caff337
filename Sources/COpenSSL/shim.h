#ifndef OCTUNNEL_COPENSSL_SHIM_H
#define OCTUNNEL_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
#endif
