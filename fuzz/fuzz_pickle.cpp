// fuzz/fuzz_pickle.cpp: libFuzzer entry point for the PyTorch pickle reader (see readers.h).
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::fuzz::read_pickle(data, size);
  return 0;
}
