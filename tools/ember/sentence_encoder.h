// tools/ember/sentence_encoder.h: a sentence-transformers folder (modules.json, config.json,
// tokenizer.json, the weights (io::load_hf_weights), 1_Pooling/config.json,
// sentence_bert_config.json) as an
// encoder of texts: WordPiece tokens, the BERT encoder, pooling over the attention mask and the
// L2 normalization the folder asks for -- sentence-transformers' own pipeline.
#pragma once

#include <string>
#include <vector>

#include "ember/data/wordpiece.h"
#include "ember/nn/bert.h"

namespace ember::cli {

class SentenceEncoder {
 public:
  // A sentence-transformers folder, or a plain Hugging Face BERT folder (then mean pooling and
  // no normalization, as sentence-transformers wraps one). Errors name the missing file.
  static SentenceEncoder load(const std::string& dir, Device device);
  // texts -> (N, hidden) float32 embeddings, in batches of batch_size.
  Tensor encode(const std::vector<std::string>& texts, int64_t batch_size = 32);

  std::string pooling = "mean";  // mean | cls | max | mean_sqrt_len
  bool normalize = false;
  int64_t max_seq_length = 512;
  data::WordPieceTokenizer tokenizer;
  nn::BertModel model;
  Device device;

 private:
  SentenceEncoder(data::WordPieceTokenizer t, nn::BertModel m, Device d)
      : tokenizer(std::move(t)), model(std::move(m)), device(d) {}
};

}  // namespace ember::cli
