// io/pt_write.h: the two halves of save_pt -- the pickle of a value tree with the storages its
// tensors use (pt_write.cpp), and the zip archive torch.save writes (pt_write_zip.cpp, libzip).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ember/io/pt.h"

namespace ember::io::detail {

// One storage of a checkpoint: member data/<key> holds its first numel elements of dtype.
struct PtStorageRecord {
  std::string key;                   // "0", "1", ... in order of first use, as torch.save
  std::shared_ptr<Storage> storage;  // as the tensors hold it, on any device
  DType dtype = kFloat32;
  int64_t numel = 0;
  size_t nbytes() const { return static_cast<size_t>(numel) * element_size(dtype); }
};

struct PtPickle {
  std::string data;                       // the archive's data.pkl
  std::vector<PtStorageRecord> storages;  // one per distinct ember::Storage
};

// The pickle torch.save writes for `value` (protocol 2). Errors name `path` and where in the
// tree the value is that cannot be written.
PtPickle pickle_pt(const PtValue& value, const std::string& path);

// torch.Storage class of a dtype ("FloatStorage", ...).
const char* pt_storage_class(DType dtype);

// The folder torch.save names inside the zip for a file: its stem ("model" for
// dir/model.pt), or "archive" where that is empty or not printable ASCII.
std::string pt_archive_name(const std::string& path);

}  // namespace ember::io::detail
