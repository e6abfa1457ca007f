// core/storage.cpp: storage allocated through the owning device's backend.
#include "ember/storage.h"

#include "core/backend.h"

namespace ember {

Storage::Storage(size_t nbytes, Device device) : data_(nullptr), nbytes_(nbytes), device_(device) {
  data_ = backend_for(device.type()).allocate(nbytes, device.index());
}

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (deleter_)
    deleter_(data_);
  else
    backend_for(device_.type()).deallocate(data_, nbytes_, device_.index());
}

}  // namespace ember
