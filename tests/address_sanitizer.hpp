// Whether the tests run under AddressSanitizer: GCC defines
// __SANITIZE_ADDRESS__, Clang answers __has_feature. Sweeps that cost
// several times as much there take a sample of their cases.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define METATF_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define METATF_TEST_ASAN 1
#endif
#endif
#ifndef METATF_TEST_ASAN
#define METATF_TEST_ASAN 0
#endif

namespace metatf::test {
inline constexpr bool address_sanitizer = METATF_TEST_ASAN != 0;
}  // namespace metatf::test
