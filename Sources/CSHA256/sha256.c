// SHA-256 for the deterministic ids of the core: five hashes of a few dozen
// bytes per notification. A hasher object that allocates a context per hash
// costs several times the compression itself; this is a plain function on
// the stack, with the x86 SHA extensions when the CPU has them.

#include "notify_sha256.h"

#include <string.h>

static const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

typedef void (*compress_blocks)(uint32_t state[8], const uint8_t *data, size_t count);

static inline uint32_t rotate(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

/// FIPS 180-4 section 6.2.2, for CPUs without the SHA extensions.
static void compress_portable(uint32_t state[8], const uint8_t *data, size_t count) {
    uint32_t w[64];
    for (; count > 0; count--, data += 64) {
        for (int t = 0; t < 16; t++) {
            w[t] = (uint32_t)data[4 * t] << 24 | (uint32_t)data[4 * t + 1] << 16 | (uint32_t)data[4 * t + 2] << 8
                | (uint32_t)data[4 * t + 3];
        }
        for (int t = 16; t < 64; t++) {
            uint32_t s0 = rotate(w[t - 15], 7) ^ rotate(w[t - 15], 18) ^ (w[t - 15] >> 3);
            uint32_t s1 = rotate(w[t - 2], 17) ^ rotate(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        for (int t = 0; t < 64; t++) {
            uint32_t first = h + (rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)) + ((e & f) ^ (~e & g)) + round_constants[t] + w[t];
            uint32_t second = (rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g;
            g = f;
            f = e;
            e = d + first;
            d = c;
            c = b;
            b = a;
            a = first + second;
        }
        state[0] += a;
        state[1] += b;
        state[2] += c;
        state[3] += d;
        state[4] += e;
        state[5] += f;
        state[6] += g;
        state[7] += h;
    }
}

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

/// The same with the SHA extensions: the state is kept as (A,B,E,F) and
/// (C,D,G,H), four rounds' message words at a time.
__attribute__((target("sha,sse4.1,ssse3")))
static void compress_sha_extensions(uint32_t state[8], const uint8_t *data, size_t count) {
    const __m128i big_endian = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[0]), 0xB1);
    __m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[4]), 0x1B);
    __m128i abef = _mm_alignr_epi8(dcba, hgfe, 8);
    __m128i cdgh = _mm_blend_epi16(hgfe, dcba, 0xF0);
    for (; count > 0; count--, data += 64) {
        const __m128i abef_before = abef, cdgh_before = cdgh;
        __m128i words[4];
        // Unrolled, the four message registers stay in registers and the first four groups lose their test.
#pragma clang loop unroll(full)
        for (int group = 0; group < 16; group++) {
            __m128i *current = &words[group & 3];
            if (group < 4) {
                *current = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * group)), big_endian);
            } else {
                // W[t..t+3] from W[t-16..t-13], W[t-15..t-12], W[t-7..t-4] and W[t-2], W[t-1].
                __m128i next = _mm_sha256msg1_epu32(*current, words[(group + 1) & 3]);
                next = _mm_add_epi32(next, _mm_alignr_epi8(words[(group + 3) & 3], words[(group + 2) & 3], 4));
                *current = _mm_sha256msg2_epu32(next, words[(group + 3) & 3]);
            }
            __m128i message = _mm_add_epi32(*current, _mm_loadu_si128((const __m128i *)&round_constants[4 * group]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, message);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(message, 0x0E));
        }
        abef = _mm_add_epi32(abef, abef_before);
        cdgh = _mm_add_epi32(cdgh, cdgh_before);
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}

static compress_blocks choose_compression(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_SSSE3) || !(ecx & bit_SSE4_1)) return compress_portable;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(ebx & bit_SHA)) return compress_portable;
    return compress_sha_extensions;
}
#else
static compress_blocks choose_compression(void) { return compress_portable; }
#endif

/// Chosen once (a CPU query is slow, in a virtual machine very slow); every thread chooses the same.
static _Atomic(compress_blocks) chosen_compression;

static void hash(compress_blocks compress, const void *data, size_t length, uint8_t digest[32]) {
    uint32_t state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const uint8_t *bytes = data;
    size_t whole = length / 64;
    if (whole > 0) compress(state, bytes, whole);
    // The rest, 0x80, zeros and the length in bits (big-endian) make one or two more blocks.
    uint8_t tail[128];
    size_t rest = length - whole * 64;
    size_t tail_length = rest < 56 ? 64 : 128;
    memset(tail, 0, tail_length);
    if (rest > 0) memcpy(tail, bytes + whole * 64, rest);
    tail[rest] = 0x80;
    uint64_t bits = (uint64_t)length * 8;
    for (int index = 0; index < 8; index++) tail[tail_length - 1 - index] = (uint8_t)(bits >> (8 * index));
    compress(state, tail, tail_length / 64);
    for (int index = 0; index < 8; index++) {
        digest[4 * index] = (uint8_t)(state[index] >> 24);
        digest[4 * index + 1] = (uint8_t)(state[index] >> 16);
        digest[4 * index + 2] = (uint8_t)(state[index] >> 8);
        digest[4 * index + 3] = (uint8_t)state[index];
    }
}

void notify_sha256(const void *data, size_t length, uint8_t digest[32]) {
    compress_blocks compress = chosen_compression;
    if (compress == NULL) {
        compress = choose_compression();
        chosen_compression = compress;
    }
    hash(compress, data, length, digest);
}

void notify_sha256_portable(const void *data, size_t length, uint8_t digest[32]) {
    hash(compress_portable, data, length, digest);
}
