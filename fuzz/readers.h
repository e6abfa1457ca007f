// fuzz/readers.h: each ember file reader fed raw bytes, as the fuzz targets and the corpus replay
// test run them. A reader either loads the bytes or refuses them with an ember::Error; anything
// else (a crash, another exception, a sanitizer report) is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ember::fuzz {

enum class Outcome { Loaded, Refused };

Outcome read_safetensors(const uint8_t* data, size_t size);
Outcome read_npy(const uint8_t* data, size_t size);
Outcome read_npz(const uint8_t* data, size_t size);
// The pickle virtual machine under the PyTorch checkpoint reader (io/pickle.h).
Outcome read_pickle(const uint8_t* data, size_t size);
// A torch.save file, zip or legacy (io/pt_format.h, decode_pt).
Outcome read_pt(const uint8_t* data, size_t size);
// A GGUF file (io/gguf_format.h, decode_gguf), dequantizing its tensors; when it says it is a
// Llama, also mapped to the Hugging Face names (gguf_to_hf_llama).
Outcome read_gguf(const uint8_t* data, size_t size);
// Writes the bytes to a scratch file (the IDX reader takes a path) and reads it as an IDX file
// of the dimensionality its magic number names (1 to 4; 1 when the magic names none).
Outcome read_idx(const uint8_t* data, size_t size);

}  // namespace ember::fuzz
