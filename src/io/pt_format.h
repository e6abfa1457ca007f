// io/pt_format.h: what the readers of torch.save's two containers (zip and legacy) share -- the
// pickle tree turned into PtValues, with storages fetched by key from the container only when a
// tensor uses them.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "ember/io/pt.h"
#include "ember/storage.h"
#include "io/file_bytes.h"
#include "io/pickle.h"

namespace ember::io::detail {

// Gives all the bytes of storage `key` as host memory (an IO error naming the key when the
// container lacks it); the caller checks they hold what the pickle says. Called once per key.
using PtStorageReader = std::function<std::shared_ptr<Storage>(const std::string& key)>;

// Rebuilds the value tree of a checkpoint's pickle: tensors from torch._utils._rebuild_tensor_v2
// over the storages named by persistent ids, Parameters, OrderedDicts, torch.Size. Every
// storage is read once and shared by the tensors that view it; tensors end on `device`.
// `legacy` accepts the legacy format's persistent ids (with view metadata).
PtValue pt_value_from_pickle(const PickleRef& root, const PtStorageReader& read_storage,
                             const std::string& what, Device device, bool legacy);

// The zip container (torch.save's default since 1.6): data.pkl and data/<key> members under one
// folder. Throws an IO error where libzip is not built in (EMBER_MINIMAL_DEPS).
PtValue load_pt_zip(const unsigned char* data, size_t size, const std::string& path, Device device);

// The same, reading the archive file at `path` member by member, storages straight into their
// tensors' memory (what load_pt uses: peak memory is about the tensors kept).
PtValue load_pt_zip_file(const std::string& path, Device device);

// The legacy container: a magic-number pickle, the protocol version, system info, the object,
// the storage keys, then each storage's element count and bytes.
// `source`, when the bytes are a FileBytes', has each storage's bytes released once copied.
PtValue load_pt_legacy(const unsigned char* data, size_t size, const std::string& path,
                       Device device, const FileBytes* source = nullptr);

// Parses bytes of either container; the fuzz target. load_pt reads zip archives from the file
// itself and maps the rest (`source`).
PtValue decode_pt(const unsigned char* data, size_t size, const std::string& path, Device device,
                  const FileBytes* source = nullptr);

}  // namespace ember::io::detail
