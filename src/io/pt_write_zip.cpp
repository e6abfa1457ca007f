// io/pt_write_zip.cpp: save_pt -- the archive torch.save writes (<name>/data.pkl, byteorder,
// data/<key> per storage, version), written by libzip into write_file_atomic's temporary file
// from the storages' own memory, members stored and each one's data at a 64-byte aligned offset
// as torch pads them.
#include <algorithm>
#include <bit>
#include <memory>

#include "ember/error.h"
#include "ember/io/atomic_file.h"
#include "ember/io/pt.h"
#include "io/pt_write.h"
#include "io/zip_write.h"

namespace ember::io {

namespace {

struct Member {
  std::string name;
  const void* data;
  size_t size;
};

// torch's writer pads each record's local header with an extra field "FB" of 'Z's so the data
// starts at a multiple of this (tensors can then be mapped in place).
constexpr uint64_t kAlignment = 64;
constexpr zip_uint16_t kPaddingField = 0x4246;  // "FB" little-endian

}  // namespace

void save_pt(const std::string& path, const PtValue& value) {
  detail::PtPickle pickle = detail::pickle_pt(value, path);
  const std::string archive = detail::pt_archive_name(path);
  static const std::string kByteOrder =
      std::endian::native == std::endian::little ? "little" : "big";
  static const std::string kVersion = "3\n";

  std::vector<Member> members;
  members.push_back({archive + "/data.pkl", pickle.data.data(), pickle.data.size()});
  members.push_back({archive + "/byteorder", kByteOrder.data(), kByteOrder.size()});
  // torch.save writes the storages in the order of their keys as strings
  std::vector<const detail::PtStorageRecord*> records;
  for (const auto& r : pickle.storages) records.push_back(&r);
  std::sort(records.begin(), records.end(),
            [](const auto* a, const auto* b) { return a->key < b->key; });
  std::vector<Tensor> host_copies;  // device storages copied once each; kept until written
  for (const auto* r : records) {
    const void* data = r->storage->data();
    if (!r->storage->device().is_cpu() && r->nbytes() > 0) {
      auto impl = std::make_shared<TensorImpl>();
      impl->storage = r->storage;
      impl->sizes = Shape{static_cast<int64_t>(r->nbytes())};
      impl->strides = Shape{1};
      impl->dtype = kUInt8;
      host_copies.push_back(Tensor(std::move(impl)).to(Device(kCPU)));
      data = host_copies.back().raw_data_ptr();
    }
    members.push_back({archive + "/data/" + r->key, data, r->nbytes()});
  }
  members.push_back({archive + "/version", kVersion.data(), kVersion.size()});

  // The archive goes straight to the temporary file, libzip reading each storage from its
  // tensor's memory: saving needs no second copy of the model.
  write_file_atomic(path, [&](const std::string& temporary) {
    detail::ZipWriter zip("save_pt", path, temporary);
    // Where each member's local header will start: libzip writes them in order, each 30 bytes,
    // the name, the extra fields (a Zip64 one of 20 bytes past 4 GiB), then the data.
    uint64_t offset = 0;
    const std::string padding(kAlignment, 'Z');
    for (const auto& m : members) {
      const zip_uint64_t i = zip.add(m.name, m.data, m.size, ZIP_CM_STORE);
      const uint64_t zip64 = m.size >= 0xffffffffu ? 20 : 0;
      const uint64_t header = 30 + m.name.size() + zip64 + 4;
      const auto pad =
          static_cast<zip_uint16_t>((kAlignment - (offset + header) % kAlignment) % kAlignment);
      zip.check(zip_file_extra_field_set(zip.archive(), i, kPaddingField, ZIP_EXTRA_FIELD_NEW,
                                         reinterpret_cast<const zip_uint8_t*>(padding.data()), pad,
                                         ZIP_FL_LOCAL));
      // 1980-01-01 00:00, not the time of day: the same value gives the same file
      zip.check(zip_file_set_dostime(zip.archive(), i, 0, (1 << 5) | 1, 0));
      offset += header + pad + m.size;
    }
    zip.close();
  });
}

}  // namespace ember::io
