// ember/shape.h: Shape -- tensor sizes or strides, a vector of int64 that keeps up to six values
// inline, so making a tensor or a view of ordinary rank allocates nothing for its geometry.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

namespace ember {

class Shape {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;

  static constexpr size_t kInline = 6;

  Shape() = default;
  explicit Shape(size_t n, int64_t value = 0) { resize(n, value); }
  Shape(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }
  template <std::input_iterator It>
  Shape(It first, It last) {
    assign(first, last);
  }
  Shape(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit
  Shape(const Shape& other) { assign(other.begin(), other.end()); }
  Shape(Shape&& other) noexcept { steal(other); }
  Shape& operator=(const Shape& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) {
      release();
      steal(other);
    }
    return *this;
  }
  ~Shape() { release(); }

  operator std::vector<int64_t>() const { return {begin(), end()}; }  // NOLINT: implicit

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  int64_t& operator[](size_t i) { return data_[i]; }
  const int64_t& operator[](size_t i) const { return data_[i]; }
  int64_t* begin() { return data_; }
  int64_t* end() { return data_ + size_; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t& front() { return data_[0]; }
  int64_t& back() { return data_[size_ - 1]; }
  const int64_t& front() const { return data_[0]; }
  const int64_t& back() const { return data_[size_ - 1]; }

  void reserve(size_t n) {
    if (n <= capacity_) return;
    size_t cap = std::max(n, capacity_ * 2);
    auto* p = new int64_t[cap];
    std::copy(data_, data_ + size_, p);
    release();
    data_ = p;
    capacity_ = cap;
  }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  void clear() { size_ = 0; }
  void push_back(int64_t v) {
    reserve(size_ + 1);
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  int64_t* insert(const int64_t* pos, int64_t v) { return insert(pos, &v, &v + 1); }
  int64_t* insert(const int64_t* pos, std::initializer_list<int64_t> values) {
    return insert(pos, values.begin(), values.end());
  }
  template <std::input_iterator It>
  int64_t* insert(const int64_t* pos, It first, It last) {
    size_t at = static_cast<size_t>(pos - data_);
    std::vector<int64_t> values(first, last);  // first may point into *this
    reserve(size_ + values.size());
    std::move_backward(data_ + at, data_ + size_, data_ + size_ + values.size());
    std::copy(values.begin(), values.end(), data_ + at);
    size_ += values.size();
    return data_ + at;
  }
  int64_t* erase(const int64_t* pos) {
    size_t at = static_cast<size_t>(pos - data_);
    std::move(data_ + at + 1, data_ + size_, data_ + at);
    --size_;
    return data_ + at;
  }

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  template <class It>
  void assign(It first, It last) {
    clear();
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  void release() {
    if (data_ != inline_) delete[] data_;
    data_ = inline_;
    capacity_ = kInline;
  }
  void steal(Shape& other) {
    if (other.data_ == other.inline_) {
      std::copy(other.inline_, other.inline_ + other.size_, inline_);
      data_ = inline_;
      capacity_ = kInline;
    } else {
      data_ = other.data_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_;
      other.capacity_ = kInline;
    }
    size_ = other.size_;
    other.size_ = 0;
  }

  int64_t inline_[kInline];
  int64_t* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = kInline;
};

// "[2, 3]", the way PyTorch prints sizes in messages.
std::string shape_str(const Shape& shape);

}  // namespace ember
