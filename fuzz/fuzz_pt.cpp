// fuzz/fuzz_pt.cpp: libFuzzer entry point for the torch.save file reader (see readers.h).
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::read_pt(data, size);
  return 0;
}
