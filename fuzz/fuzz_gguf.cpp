// fuzz/fuzz_gguf.cpp: libFuzzer entry point for the GGUF reader (see readers.h).
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::read_gguf(data, size);
  return 0;
}
