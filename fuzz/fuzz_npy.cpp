// fuzz/fuzz_npy.cpp: libFuzzer entry point for the npy reader (see readers.h).
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::read_npy(data, size);
  return 0;
}
