// tests/internal/test_half_convert.cpp: the CPU's vectorized float32 <-> float16 / bfloat16 spans
// give the bits of ember/half.h's scalar conversions for every float16 and bfloat16 value and a
// float32 sweep with NaNs, infinities, subnormals and ties, at whatever level EMBER_CPU_ISA
// selects (CI runs this at avx512, avx2 and baseline), with lengths that leave vector tails.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "backend/cpu/cpu_half_convert.h"
#include "backend/cpu/cpu_isa.h"

namespace ember {
namespace {

std::vector<float> float32_sweep() {
  std::vector<float> v;
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += 0x10001)
    v.push_back(std::bit_cast<float>(uint32_t(i)));
  for (uint32_t b : {0x7fc00000u, 0xffc12345u, 0x7f800001u, 0x7f800000u, 0xff800000u, 0x477ff000u,
                     0x477fefffu, 0x33000000u, 0x33000001u, 0x387fc000u, 0x3f808000u, 0x3f818000u})
    v.push_back(std::bit_cast<float>(b));
  v.push_back(1.0f);  // an odd length: the last elements take the scalar tail
  return v;
}

TEST(HalfConvert, Float32ToHalfAndBFloat16MatchTheScalarRules) {
  const std::vector<float> in = float32_sweep();
  std::vector<Half> h(in.size());
  std::vector<BFloat16> b(in.size());
  cpu::convert(h.data(), in.data(), static_cast<int64_t>(in.size()));
  cpu::convert(b.data(), in.data(), static_cast<int64_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(h[i].x, Half(in[i]).x)
        << std::hex << std::bit_cast<uint32_t>(in[i]) << " at " << cpu::isa_name(cpu::cpu_isa());
    ASSERT_EQ(b[i].x, BFloat16(in[i]).x) << std::hex << std::bit_cast<uint32_t>(in[i]);
  }
}

TEST(HalfConvert, EveryHalfAndBFloat16ValueToFloat32) {
  std::vector<Half> h(65536 + 3);
  std::vector<BFloat16> b(h.size());
  for (size_t i = 0; i < h.size(); ++i) {
    h[i] = Half::from_bits(static_cast<uint16_t>(i));
    b[i] = BFloat16::from_bits(static_cast<uint16_t>(i));
  }
  std::vector<float> fh(h.size()), fb(h.size());
  cpu::convert(fh.data(), h.data(), static_cast<int64_t>(h.size()));
  cpu::convert(fb.data(), b.data(), static_cast<int64_t>(b.size()));
  for (size_t i = 0; i < h.size(); ++i) {
    const float want_h = h[i], want_b = b[i];
    if (std::isnan(want_h))
      ASSERT_TRUE(std::isnan(fh[i])) << std::hex << i;
    else
      ASSERT_EQ(std::bit_cast<uint32_t>(fh[i]), std::bit_cast<uint32_t>(want_h)) << std::hex << i;
    if (std::isnan(want_b))
      ASSERT_TRUE(std::isnan(fb[i])) << std::hex << i;
    else
      ASSERT_EQ(std::bit_cast<uint32_t>(fb[i]), std::bit_cast<uint32_t>(want_b)) << std::hex << i;
  }
}

}  // namespace
}  // namespace ember
