// tests/interop/interop_check.cpp: the C++ half of the Python interop tests.
//   interop_check read DIR   loads the files make_fixtures.py wrote with numpy and safetensors
//   interop_check write DIR  writes the files check_ember_files.py loads with numpy
// The values are those of fixture_values.py. Prints one line per check; exits 1 on any failure.
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/io/npy.h"
#include "ember/io/npz.h"
#include "ember/io/safetensors.h"

namespace {

using ember::DType;
using ember::Tensor;

const std::vector<std::pair<std::string, DType>> kDtypes = {
    {"float32", ember::kFloat32}, {"float64", ember::kFloat64}, {"int32", ember::kInt32},
    {"int64", ember::kInt64},     {"uint8", ember::kUInt8},     {"bool", ember::kBool}};

// fixture_values.values(dtype): a (2, 3, 4) array.
Tensor values(DType dtype) {
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) {
    double b = i;
    switch (dtype) {
      case ember::kFloat32:
      case ember::kFloat64:
        v[i] = b * 0.75 - 5;
        break;
      case ember::kInt32:
        v[i] = b * 100003 - 1000000;
        break;
      case ember::kInt64:
        v[i] = (b - 12) * std::ldexp(1.0, 40) + 7;
        break;
      case ember::kUInt8:
        v[i] = std::fmod(b * 11, 256);
        break;
      case ember::kBool:
        v[i] = std::fmod(b, 3) == 0;
        break;
    }
  }
  return ember::from_vector(v, ember::Shape{2, 3, 4}).to(dtype);
}

int failures = 0;

void check(const std::string& what, const Tensor& actual, const Tensor& expected) {
  bool same = actual.dtype() == expected.dtype() && actual.sizes() == expected.sizes();
  if (same) {
    auto a = actual.to(ember::kFloat64).contiguous().to_vector<double>();
    auto e = expected.to(ember::kFloat64).contiguous().to_vector<double>();
    same = a == e;
  }
  if (same) {
    std::cout << "ok " << what << "\n";
  } else {
    ++failures;
    std::cout << "FAIL " << what << ": got " << actual.dtype() << " " << actual << "\nexpected "
              << expected.dtype() << " " << expected << "\n";
  }
}

void check_named(const std::string& what, const ember::io::NamedTensors& got) {
  if (got.size() != kDtypes.size()) {
    ++failures;
    std::cout << "FAIL " << what << ": " << got.size() << " tensors\n";
    return;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].first != kDtypes[i].first) {
      ++failures;
      std::cout << "FAIL " << what << ": key " << i << " is " << got[i].first << "\n";
    }
    check(what + "[" + kDtypes[i].first + "]", got[i].second, values(kDtypes[i].second));
  }
}

void read_fixtures(const std::string& dir) {
  namespace io = ember::io;
  for (const auto& [name, dtype] : kDtypes) {
    for (const char* suffix : {"", "_fortran", "_big_endian"}) {
      std::string file = name + suffix + ".npy";
      check(file, io::load_npy(dir + "/" + file), values(dtype));
    }
  }
  for (const char* v : {"2", "3"}) {
    std::string file = std::string("float32_v") + v + ".npy";
    check(file, io::load_npy(dir + "/" + file), values(ember::kFloat32));
  }
  check("scalar.npy", io::load_npy(dir + "/scalar.npy"),
        ember::scalar_tensor(2.5, {.dtype = ember::kFloat64}));
  check("empty.npy", io::load_npy(dir + "/empty.npy"), ember::zeros({0, 3}));
  check_named("stored.npz", io::load_npz(dir + "/stored.npz"));
  check_named("compressed.npz", io::load_npz(dir + "/compressed.npz"));

  io::SafetensorsFile st = io::load_safetensors(dir + "/all.safetensors");
  for (const auto& [name, dtype] : kDtypes) {
    bool found = false;
    for (const auto& [key, t] : st.tensors) {
      if (key != name) continue;
      found = true;
      check("all.safetensors[" + name + "]", t, values(dtype));
    }
    if (!found) {
      ++failures;
      std::cout << "FAIL all.safetensors lacks " << name << "\n";
    }
  }
  if (st.metadata != io::Metadata{{"who", "numpy"}}) {
    ++failures;
    std::cout << "FAIL all.safetensors: metadata\n";
  }
}

void write_files(const std::string& dir) {
  namespace io = ember::io;
  io::NamedTensors all;
  for (const auto& [name, dtype] : kDtypes) {
    // A non-contiguous view with the fixture's values: written in C order all the same.
    Tensor t = values(dtype).transpose(0, 2).contiguous().transpose(0, 2);
    io::save_npy(dir + "/" + name + ".npy", t);
    all.emplace_back(name, t);
  }
  io::save_npy(dir + "/scalar.npy", ember::scalar_tensor(2.5, {.dtype = ember::kFloat64}));
  io::save_npy(dir + "/empty.npy", ember::zeros({0, 3}));
  io::save_npz(dir + "/stored.npz", all, false);
  io::save_npz(dir + "/compressed.npz", all, true);
  io::save_safetensors(dir + "/all.safetensors", all, {{"who", "ember"}});
  std::cout << "wrote " << dir << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "read" && std::string(argv[1]) != "write")) {
    std::cerr << "usage: interop_check read|write DIR\n";
    return 2;
  }
  try {
    if (std::string(argv[1]) == "read")
      read_fixtures(argv[2]);
    else
      write_files(argv[2]);
  } catch (const ember::Error& e) {
    std::cout << "FAIL: " << e.what() << "\n";
    return 1;
  }
  return failures ? 1 : 0;
}
