// tests/interop/interop_check.cpp: the C++ half of the Python interop tests.
//   interop_check read DIR          loads the files make_fixtures.py wrote with numpy/safetensors
//   interop_check write DIR         writes the files check_ember_files.py loads with numpy
//   interop_check write-models DIR  saves an MLP's and a CNN's state dicts, inputs and outputs,
//                                   which torch_check.py loads into the same PyTorch models
//   interop_check read-models DIR   loads the state dicts torch_check.py saved from PyTorch and
//                                   checks ember's outputs against PyTorch's
//   interop_check write-pt DIR      writes the torch.save files (save_pt) pt_check.py loads with
//                                   torch.load; write-models adds the MLP's and CNN's as .pt
// The values are those of fixture_values.py. Prints one line per check; exits 1 on any failure.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/io/npy.h"
#include "ember/io/npz.h"
#include "ember/io/pt.h"
#include "ember/io/safetensors.h"
#include "ember/nn/modules.h"

namespace {

using ember::DType;
using ember::Tensor;

const std::vector<std::pair<std::string, DType>> kDtypes = {
    {"float32", ember::kFloat32}, {"float64", ember::kFloat64}, {"float16", ember::kFloat16},
    {"int32", ember::kInt32},     {"int64", ember::kInt64},     {"uint8", ember::kUInt8},
    {"bool", ember::kBool}};

// fixture_values.values(dtype): a (2, 3, 4) array.
Tensor values(DType dtype) {
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) {
    double b = i;
    switch (dtype) {
      case ember::kFloat16:
      case ember::kBFloat16:
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

// The models both sides build: PyTorch's nn.Sequential of the same layers has the same
// state-dict names ("0.weight", "1.running_mean", "1.num_batches_tracked", ...).
ember::nn::Sequential make_mlp() {
  namespace nn = ember::nn;
  return nn::Sequential(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 3));
}
ember::nn::Sequential make_cnn() {
  namespace nn = ember::nn;
  return nn::Sequential(nn::Conv2d(1, 4, 3, {.padding = 1}), nn::BatchNorm2d(4), nn::ReLU(),
                        nn::MaxPool2d(2), nn::Flatten(), nn::Linear(4 * 4 * 4, 3));
}

Tensor named(const ember::io::NamedTensors& tensors, const std::string& name) {
  for (const auto& [key, t] : tensors)
    if (key == name) return t;
  throw std::runtime_error("no tensor named " + name);
}

void check_close(const std::string& what, const Tensor& actual, const Tensor& expected,
                 double rtol = 1e-5, double atol = 1e-5) {
  bool same = actual.sizes() == expected.sizes() && actual.dtype() == expected.dtype();
  if (same) {
    auto a = actual.to(ember::kFloat64).contiguous().to_vector<double>();
    auto e = expected.to(ember::kFloat64).contiguous().to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i)
      same = same && std::abs(a[i] - e[i]) <= atol + rtol * std::abs(e[i]);
  }
  std::cout << (same ? "ok " : "FAIL ") << what << "\n";
  if (!same) {
    ++failures;
    std::cout << "got " << actual << "\nexpected " << expected << "\n";
  }
}

void write_models(const std::string& dir) {
  namespace io = ember::io;
  ember::manual_seed(7);
  auto mlp = make_mlp();
  auto cnn = make_cnn();
  {  // one training-mode pass, so that the running statistics are not their initial values
    ember::NoGradGuard no_grad;
    cnn(ember::randn({6, 1, 8, 8}) * 2 + 0.5);
  }
  mlp->eval();
  cnn->eval();
  Tensor x_mlp = ember::randn({5, 4}), x_cnn = ember::randn({2, 1, 8, 8});
  ember::NoGradGuard no_grad;
  io::save_safetensors(dir + "/mlp.safetensors", mlp->state_dict());
  io::save_safetensors(dir + "/cnn.safetensors", cnn->state_dict());
  io::save_pt(dir + "/mlp.pt", io::PtValue::state_dict(mlp->state_dict()));
  io::save_pt(dir + "/cnn.pt", io::PtValue::state_dict(cnn->state_dict()));
  io::save_safetensors(
      dir + "/io.safetensors",
      {{"x_mlp", x_mlp}, {"y_mlp", mlp(x_mlp)}, {"x_cnn", x_cnn}, {"y_cnn", cnn(x_cnn)}});
  // bfloat16, which NumPy lacks: the fixture's values and the MLP's state dict in bfloat16.
  mlp->to(ember::kBFloat16);
  io::save_safetensors(dir + "/bfloat16.safetensors", {{"values", values(ember::kBFloat16)},
                                                       {"x_mlp", x_mlp.to(ember::kBFloat16)},
                                                       {"y_mlp", mlp(x_mlp.to(ember::kBFloat16))}});
  io::save_safetensors(dir + "/mlp_bfloat16.safetensors", mlp->state_dict());
  std::cout << "wrote models to " << dir << "\n";
}

void read_models(const std::string& dir) {
  namespace io = ember::io;
  auto mlp = make_mlp();
  auto cnn = make_cnn();
  mlp->load_state_dict(io::load_safetensors(dir + "/mlp.safetensors").tensors);
  cnn->load_state_dict(io::load_safetensors(dir + "/cnn.safetensors").tensors);
  mlp->eval();
  cnn->eval();
  io::NamedTensors data = io::load_safetensors(dir + "/io.safetensors").tensors;
  ember::NoGradGuard no_grad;
  check_close("PyTorch MLP in ember", mlp(named(data, "x_mlp")), named(data, "y_mlp"));
  check_close("PyTorch CNN in ember", cnn(named(data, "x_cnn")), named(data, "y_cnn"));
  // PyTorch's bfloat16 MLP and its output: the same within bfloat16's tolerance (PyTorch rounds
  // the product and the bias add separately, ember once).
  auto mlp16 = make_mlp();
  mlp16->to(ember::kBFloat16);
  mlp16->load_state_dict(io::load_safetensors(dir + "/mlp_bfloat16.safetensors").tensors);
  mlp16->eval();
  io::NamedTensors bf = io::load_safetensors(dir + "/bfloat16.safetensors").tensors;
  check_close("bfloat16 values from PyTorch", named(bf, "values"), values(ember::kBFloat16), 0, 0);
  check_close("PyTorch bfloat16 MLP in ember", mlp16(named(bf, "x_mlp")), named(bf, "y_mlp"),
              1.6e-2, 2e-2);
}

// The files pt_check.py loads with torch.load; keep the two in step.
void write_pt(const std::string& dir) {
  namespace io = ember::io;
  using io::PtValue;
  // every ember dtype: the fixture values (bfloat16 too)
  std::vector<PtValue::Item> dtypes;
  for (const auto& [name, dtype] : kDtypes) dtypes.emplace_back(name, values(dtype));
  dtypes.emplace_back("bfloat16", values(ember::kBFloat16));
  io::save_pt(dir + "/pt_dtypes.pt", PtValue::dict(dtypes));
  // views of one storage (a slice with an offset, a transpose, a step view) and one tensor twice
  Tensor base = ember::arange(24, {.dtype = ember::kFloat32}).reshape({4, 6});
  Tensor emb = ember::arange(6, {.dtype = ember::kFloat64}).reshape({3, 2});
  io::save_pt(dir + "/pt_views.pt", PtValue::dict({{"base", base},
                                                   {"row_slice", base.slice(0, 1, 3)},
                                                   {"transpose", base.t()},
                                                   {"step", base.slice(1, 1, std::nullopt, 2)},
                                                   {"emb", emb},
                                                   {"tied", emb}}));
  // a state_dict whose head shares the embedding's storage (tied weights, two tensors)
  Tensor w = ember::arange(15, {.dtype = ember::kFloat32}).reshape({5, 3}) / 4;
  io::save_pt(dir + "/pt_state_dict.pt", PtValue::state_dict({{"embed.weight", w},
                                                              {"head.weight", w.detach()},
                                                              {"head.bias", ember::zeros({5})}}));
  Tensor p = ember::tensor({0.25, -0.5, 4.0});
  p.requires_grad_(true);
  io::save_pt(dir + "/pt_parameter.pt", PtValue(p, true));
  // what torch 1.13 loads with weights_only=True besides tensors: ints, str, bool, None, lists,
  // tuples, dicts (str and int keys) and OrderedDicts
  io::save_pt(dir + "/pt_nested.pt",
              PtValue::dict(
                  {{"s", "text"},
                   {7, PtValue::list({1, -2, true, PtValue(), false, 300, 70000})},
                   {"t", PtValue::tuple({ember::tensor({1.0, 2.0}), "x", PtValue::tuple({1, 2})})},
                   {"big", int64_t{1} << 40},
                   {"neg", -(int64_t{1} << 33)},
                   {"min", std::numeric_limits<int64_t>::min()},
                   {"max", std::numeric_limits<int64_t>::max()},
                   {"u", "h\xc3\xa9llo \xe2\x82\xac"},
                   {"empty", PtValue::list({})},
                   {"od", PtValue::dict({{"b", PtValue::tuple({})}, {"a", 1}}, true)}}));
  // more than 256 memo entries (LONG_BINPUT/LONG_BINGET) and ten storages or more, which
  // torch.save writes in the order of their keys as strings ("10" before "2")
  io::NamedTensors many;
  for (int i = 0; i < 40; ++i) {
    std::string name = "t";
    name += std::to_string(i);
    many.emplace_back(name, ember::full({2}, static_cast<double>(i)));
  }
  io::save_pt(dir + "/pt_many.pt", PtValue::state_dict(many));
  // Python floats (BINFLOAT) and bytes: torch 1.13 needs weights_only=False for them
  io::save_pt(dir + "/pt_floats.pt",
              PtValue::dict({{"lr", 0.01},
                             {"betas", PtValue::tuple({0.9, 0.999})},
                             {"neg_zero", -0.0},
                             {"inf", std::numeric_limits<double>::infinity()},
                             {"blob", PtValue::bytes(std::string("\x00\x01\xff", 3))},
                             {"w", ember::tensor({1.5})}}));
  std::cout << "wrote .pt files to " << dir << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode != "read" && mode != "write" && mode != "read-models" && mode != "write-models" &&
      mode != "write-pt") {
    std::cerr << "usage: interop_check read|write|read-models|write-models|write-pt DIR\n";
    return 2;
  }
  try {
    if (mode == "read")
      read_fixtures(argv[2]);
    else if (mode == "write")
      write_files(argv[2]);
    else if (mode == "read-models")
      read_models(argv[2]);
    else if (mode == "write-pt")
      write_pt(argv[2]);
    else
      write_models(argv[2]);
  } catch (const std::exception& e) {
    std::cout << "FAIL: " << e.what() << "\n";
    return 1;
  }
  return failures ? 1 : 0;
}
