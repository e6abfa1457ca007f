// tools/ember/checkpoint.cpp: saving and restoring training state.
#include "checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace ember::cli {

namespace {

uint64_t parse_u64(const io::Metadata& m, const std::string& key, const std::string& path) {
  auto it = m.find(key);
  EMBER_CHECK_KIND(IO, it != m.end(), "[checkpoint] '", path, "' lacks '", key,
                   "': it was not written by `ember train`");
  try {
    return std::stoull(it->second);
  } catch (const std::exception&) {
    EMBER_THROW(IO, "[checkpoint] '", path, "' has a malformed '", key, "': ", it->second);
  }
}

CheckpointInfo info_of(const io::Metadata& m, const std::string& path) {
  auto it = m.find("format");
  EMBER_CHECK_KIND(IO, it != m.end() && it->second == "ember-checkpoint-1", "[checkpoint] '", path,
                   "' is not an ember training checkpoint");
  CheckpointInfo info;
  info.model = m.count("model") ? m.at("model") : "";
  info.optimizer = m.count("optimizer") ? m.at("optimizer") : "";
  const uint64_t epoch = parse_u64(m, "epoch", path);
  EMBER_CHECK_KIND(IO, epoch <= (uint64_t{1} << 30), "[checkpoint] '", path, "' has 'epoch' ",
                   epoch, ", out of range; the file is damaged");
  info.epoch = static_cast<int>(epoch);
  info.seed = parse_u64(m, "seed", path);
  info.generator_seed = parse_u64(m, "generator_seed", path);
  info.generator_offset = parse_u64(m, "generator_offset", path);
  info.extra = m;
  return info;
}

}  // namespace

void save_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer* opt,
                     const CheckpointInfo& info, const amp::GradScaler* scaler) {
  io::NamedTensors tensors;
  for (auto& [name, t] : model.state_dict()) tensors.emplace_back("model." + name, t);
  if (opt)
    for (auto& [name, t] : opt->state_dict()) tensors.emplace_back("optimizer." + name, t);
  if (scaler)
    for (auto& [name, t] : scaler->state_dict()) tensors.emplace_back("scaler." + name, t);
  io::Metadata meta{{"format", "ember-checkpoint-1"},
                    {"model", info.model},
                    {"optimizer", info.optimizer},
                    {"epoch", std::to_string(info.epoch)},
                    {"seed", std::to_string(info.seed)},
                    {"generator_seed", std::to_string(info.generator_seed)},
                    {"generator_offset", std::to_string(info.generator_offset)}};
  meta.insert(info.extra.begin(), info.extra.end());
  io::save_safetensors(path, tensors, meta);
}

void prepare_out_dir(const std::string& out) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  EMBER_CHECK_KIND(IO, !ec, "--out '", out, "' cannot be created: ", ec.message(),
                   "; give a directory you can write to");
  const std::string probe = out + "/.ember-write-check." + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  EMBER_CHECK_KIND(IO, fd >= 0, "--out '", out, "' is not writable: ", std::strerror(errno),
                   "; give a directory you can write to");
  ::close(fd);
  ::unlink(probe.c_str());
}

CheckpointInfo read_checkpoint_info(const std::string& path) {
  io::SafetensorsFile file = io::load_safetensors(path);
  CheckpointInfo info = info_of(file.metadata, path);
  for (const auto& [name, t] : file.tensors) info.shapes[name] = t.sizes();
  return info;
}

void check_resume_flag(const CheckpointInfo& info, const std::string& path, const std::string& key,
                       const std::string& flag, const std::string& value) {
  auto it = info.extra.find(key);
  if (it == info.extra.end() || it->second == value) return;
  EMBER_THROW(Value, "--resume: the run in '", path, "' was trained with ", flag, " ", it->second,
              ", not ", value, "; resuming continues that run exactly, so pass ", flag, " ",
              it->second, " (or give another --out to start a new run)");
}

CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer* opt,
                               const std::string& expected_model, amp::GradScaler* scaler) {
  io::SafetensorsFile file = io::load_safetensors(path);
  CheckpointInfo info = info_of(file.metadata, path);
  EMBER_CHECK_KIND(Value, info.model == expected_model, "[checkpoint] '", path,
                   "' holds a model of kind '", info.model, "', not '", expected_model,
                   "'; use --model ", info.model, " or another --out directory");
  nn::StateDict model_state, opt_state, scaler_state;
  for (auto& [name, t] : file.tensors) {
    if (name.rfind("model.", 0) == 0)
      model_state.emplace_back(name.substr(6), t);
    else if (name.rfind("optimizer.", 0) == 0)
      opt_state.emplace_back(name.substr(10), t);
    else if (name.rfind("scaler.", 0) == 0)
      scaler_state.emplace_back(name.substr(7), t);
  }
  model.load_state_dict(model_state);
  if (opt) opt->load_state_dict(opt_state);
  if (scaler && scaler->is_enabled() && !scaler_state.empty())
    scaler->load_state_dict(scaler_state);
  return info;
}

}  // namespace ember::cli
