// distributed/store.cpp: PrefixStore, a namespace of keys inside another store.
#include "distributed/store.h"

namespace ember::distributed {

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> inner)
    : Store(inner->timeout()), prefix_(std::move(prefix)), inner_(std::move(inner)) {}

std::vector<std::string> PrefixStore::keys(const std::vector<std::string>& ks) const {
  std::vector<std::string> out;
  out.reserve(ks.size());
  for (const auto& k : ks) out.push_back(key(k));
  return out;
}

void PrefixStore::set(const std::string& k, const std::vector<uint8_t>& value) {
  inner_->set(key(k), value);
}
std::vector<uint8_t> PrefixStore::get(const std::string& k) {
  return inner_->get(key(k));
}
int64_t PrefixStore::add(const std::string& k, int64_t delta) {
  return inner_->add(key(k), delta);
}
bool PrefixStore::check(const std::vector<std::string>& ks) {
  return inner_->check(keys(ks));
}
void PrefixStore::wait(const std::vector<std::string>& ks, std::chrono::milliseconds timeout) {
  inner_->wait(keys(ks), timeout);
}

}  // namespace ember::distributed
