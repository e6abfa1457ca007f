// fuzz/fuzz_idx.cpp: libFuzzer entry point for the idx reader (see readers.h).
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::read_idx(data, size);
  return 0;
}
