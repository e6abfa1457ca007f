// tools/ember/embed.cpp: `ember embed --model DIR TEXT...` -- one embedding per text (a line of
// numbers), or with --similarity the matrix of their cosine similarities.
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "ember/ember.h"
#include "output.h"
#include "sentence_encoder.h"

namespace ember::cli {

int run_embed(const EmbedOptions& o) {
  EMBER_CHECK(!o.texts.empty(), "[embed] give at least one text to embed");
  const Device device = pick_device(o.device);
  SentenceEncoder encoder = SentenceEncoder::load(o.model, device);
  Tensor e = encoder.encode(o.texts, o.batch_size);  // (N, hidden)
  if (o.similarity) {
    Tensor unit = nn::F::normalize(e, 2.0, 1);
    Tensor sim = matmul(unit, unit.t()).contiguous();
    const auto v = sim.to_vector<float>();
    const size_t n = o.texts.size();
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) std::printf(j ? " %.4f" : "%.4f", v[i * n + j]);
      std::printf("\n");
    }
    flush_stdout_checked();
    return 0;
  }
  const auto v = e.contiguous().to_vector<float>();
  const auto dim = static_cast<size_t>(e.size(1));
  for (size_t i = 0; i < o.texts.size(); ++i) {
    for (size_t j = 0; j < dim; ++j) std::printf(j ? " %.8g" : "%.8g", v[i * dim + j]);
    std::printf("\n");
    flush_stdout_checked();  // stop at the first failed row, not after computing them all
  }
  return 0;
}

}  // namespace ember::cli
