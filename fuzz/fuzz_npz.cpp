// fuzz/fuzz_npz.cpp: libFuzzer entry point for the npz reader (see readers.h).
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::read_npz(data, size);
  return 0;
}
