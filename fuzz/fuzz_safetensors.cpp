// fuzz/fuzz_safetensors.cpp: libFuzzer entry point for the safetensors reader (see readers.h).
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::read_safetensors(data, size);
  return 0;
}
