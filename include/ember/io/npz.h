// ember/io/npz.h: NumPy's .npz archives -- a zip file of .npy arrays, one per name, as
// numpy.savez and numpy.savez_compressed write them and numpy.load reads them.
#pragma once

#include <string>

#include "ember/io/named_tensors.h"

namespace ember::io {

// Writes each tensor as "<name>.npy" in a zip archive, stored or (compressed) deflated, to
// `path` atomically. Names must be non-empty and distinct.
void save_npz(const std::string& path, const NamedTensors& tensors, bool compressed = false);

// Reads every array of an .npz archive, in archive order, named without the ".npy" suffix and
// placed on `device`. Members that are not .npy arrays, encrypted members, compression methods
// other than stored and deflated, and corrupt data (CRC errors included) are refused.
NamedTensors load_npz(const std::string& path, Device device = Device(kCPU));

}  // namespace ember::io
