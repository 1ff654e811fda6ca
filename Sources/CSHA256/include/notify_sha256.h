#ifndef NOTIFY_SHA256_H
#define NOTIFY_SHA256_H

#include <stddef.h>
#include <stdint.h>

/// SHA-256 (FIPS 180-4) of `length` bytes at `data` into `digest` (32 bytes).
/// Uses the CPU's SHA extensions where it has them; no allocation, no state.
void notify_sha256(const void *data, size_t length, uint8_t digest[32]);

/// The same without the SHA extensions, whatever the CPU has: the tests check both.
void notify_sha256_portable(const void *data, size_t length, uint8_t digest[32]);

#endif
