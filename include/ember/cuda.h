// ember/cuda.h: what the tutorial's availability checks ask -- is CUDA here, how many GPUs, names.
// All answer false / 0 in a build without CUDA or on a machine without a driver or GPU.
#pragma once

#include <string>

namespace ember::cuda {
bool is_available();
int device_count();
// Throws an Error when there is no CUDA device `index`.
std::string get_device_name(int index = 0);
// Whether this build of ember has the CUDA backend compiled in.
bool is_built();
}  // namespace ember::cuda

namespace ember::mps {
// Apple's Metal backend; ember has none, so this is false everywhere.
bool is_available();
}  // namespace ember::mps
