// tests/test_bert.cpp: the WordPiece tokenizer and the BERT encoder against Hugging Face --
// tests/reference/tiny_bert (a small random BertModel saved by `transformers` as a
// sentence-transformers folder) and bert_reference.json (tokens from `tokenizers`, BertModel's
// hidden states and pooler output from `transformers`), written by bert_reference.py -- and by
// hand: the normalizer's rules, truncation, errors and loading by name.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ember/io/safetensors.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_close;
using testing::throws_error;

const std::string kDir = std::string(EMBER_REFERENCE_DIR) + "/tiny_bert";

nlohmann::json reference() {
  std::ifstream in(std::string(EMBER_REFERENCE_DIR) + "/bert_reference.json");
  return nlohmann::json::parse(in);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Tensor matrix(const nlohmann::json& rows) {
  std::vector<int64_t> flat;
  for (const auto& r : rows)
    for (int64_t v : r) flat.push_back(v);
  return from_vector<int64_t>(
      flat, Shape{static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())});
}

TEST(WordPiece, MatchesHuggingFaceTokenizers) {
  const auto ref = reference();
  auto tok = data::WordPieceTokenizer::from_file(kDir + "/tokenizer.json");
  const auto texts = ref["texts"].get<std::vector<std::string>>();
  ASSERT_EQ(texts.size(), 8u);
  for (size_t i = 0; i < texts.size(); ++i) {
    SCOPED_TRACE(texts[i]);
    EXPECT_EQ(tok.encode(texts[i], 16).tokens, ref["tokens"][i].get<std::vector<std::string>>());
  }
  auto [ids, mask] = tok.encode_batch(texts, 16);
  EXPECT_TRUE(testing::tensor_equal(ids, matrix(ref["input_ids"])));
  EXPECT_TRUE(testing::tensor_equal(mask, matrix(ref["attention_mask"])));
}

TEST(WordPiece, NormalizerAndSplitRules) {
  std::unordered_map<std::string, int64_t> vocab = {
      {"[PAD]", 0},  {"[UNK]", 1}, {"[CLS]", 2}, {"[SEP]", 3}, {"un", 4}, {"##aff", 5},
      {"##able", 6}, {"cafe", 7},  {"!", 8},     {"中", 9},    {"x", 10}};
  data::WordPieceTokenizer tok(vocab);
  // Control characters go, whitespace splits, punctuation stands alone, CJK ideographs are
  // words, accents are stripped and letters lower-cased.
  EXPECT_EQ(tok.pre_tokenize("Un\x01"
                             "aff\tCAFÉ!中x"),
            (std::vector<std::string>{"unaff", "cafe", "!", "中", "x"}));
  EXPECT_EQ(tok.encode("unaffable cafe").tokens,
            (std::vector<std::string>{"[CLS]", "un", "##aff", "##able", "cafe", "[SEP]"}));
  // A word with a piece outside the vocabulary is one [UNK]; so is a word over 100 characters.
  EXPECT_EQ(tok.encode("unaffz").tokens, (std::vector<std::string>{"[CLS]", "[UNK]", "[SEP]"}));
  EXPECT_EQ(tok.encode(std::string(101, 'x')).tokens,
            (std::vector<std::string>{"[CLS]", "[UNK]", "[SEP]"}));
  // Truncation keeps [CLS] and [SEP].
  EXPECT_EQ(tok.encode("x x x x", 4).ids, (std::vector<int64_t>{2, 10, 10, 3}));
  // Without lower-casing and accent stripping the text stays as it is.
  data::WordPieceTokenizer cased(vocab, {.strip_accents = false, .lowercase = false});
  EXPECT_EQ(cased.pre_tokenize("CAFÉ"), (std::vector<std::string>{"CAFÉ"}));
  EXPECT_TRUE(throws_error([&] { tok.encode("bad \xff byte"); }, ErrorKind::Value,
                           {"[WordPieceTokenizer]", "not valid UTF-8"}));
  EXPECT_TRUE(throws_error([&] { tok.encode("x", 1); }, ErrorKind::Value, {"max_length 1"}));
  EXPECT_TRUE(throws_error(
      [&] {
        data::WordPieceTokenizer({{"[UNK]", 0}});
      },
      ErrorKind::Value, {"lacks [CLS]"}));
  EXPECT_TRUE(throws_error([] { data::WordPieceTokenizer::from_file("/nonexistent/tok.json"); },
                           ErrorKind::IO, {"cannot open", "/nonexistent/tok.json"}));
}

class BertTest : public testing::DeviceTest {};

TEST_P(BertTest, HiddenStatesMatchTransformers) {
  const auto ref = reference();
  nn::BertConfig config = nn::BertConfig::from_json(read_text(kDir + "/config.json"));
  EXPECT_EQ(config.hidden_size, 16);
  EXPECT_EQ(config.num_hidden_layers, 2);
  nn::BertModel model(config);
  model->load_hf_state_dict(io::load_safetensors(kDir + "/model.safetensors").tensors);
  model->eval();
  model->to(device());
  Tensor ids = matrix(ref["input_ids"]).to(device());
  Tensor mask = matrix(ref["attention_mask"]).to(device());
  nn::BertOutput out = model->forward(ids, mask);
  Shape shape;
  for (int64_t d : ref["hidden_shape"]) shape.push_back(d);
  Tensor hidden = from_vector<double>(ref["last_hidden_state"].get<std::vector<double>>(), shape);
  // Padding positions are compared too: transformers computes them with the same mask.
  EXPECT_TRUE(tensor_close(out.last_hidden_state, hidden, 1e-4, 1e-5));
  Tensor pooled = from_vector<double>(ref["pooler_output"].get<std::vector<double>>(),
                                      Shape{shape[0], shape[2]});
  EXPECT_TRUE(tensor_close(out.pooler_output, pooled, 1e-4, 1e-5));
}

TEST_P(BertTest, LoadsByNameOnly) {
  nn::BertConfig c{.vocab_size = 10,
                   .hidden_size = 4,
                   .num_hidden_layers = 1,
                   .num_attention_heads = 2,
                   .intermediate_size = 8,
                   .max_position_embeddings = 6};
  nn::BertModel a(c);
  nn::StateDict prefixed;
  for (const auto& [name, t] : a->state_dict()) prefixed.emplace_back("bert." + name, t);
  prefixed.emplace_back("bert.embeddings.position_ids", arange(0, 6, 1, {.dtype = kInt64}));
  prefixed.emplace_back("cls.predictions.bias", zeros({10}));
  nn::BertModel b(c);
  b->load_hf_state_dict(prefixed);  // "bert." prefix, position_ids and heads skipped
  EXPECT_TRUE(tensor_close(b->embeddings->word_embeddings->weight,
                           a->embeddings->word_embeddings->weight, 0, 0));
  nn::StateDict missing = a->state_dict();
  missing.pop_back();
  EXPECT_TRUE(throws_error([&] { b->load_hf_state_dict(missing); }, ErrorKind::Value,
                           {"pooler.dense.bias"}));
  a->to(device());
  Tensor ids = tensor({{1, 2, 3, 4, 5, 6, 7}}).to(device());
  EXPECT_TRUE(throws_error([&] { a->forward(ids); }, ErrorKind::Index,
                           {"7 tokens", "max_position_embeddings (6)", "truncate"}));
  EXPECT_TRUE(
      throws_error([&] { a->forward(ids.to(kFloat32)); }, ErrorKind::DType, {"integer token ids"}));
  EXPECT_TRUE(throws_error([] { nn::BertConfig::from_json(R"({"model_type": "gpt2"})"); },
                           ErrorKind::Value, {"\"model_type\" is 'gpt2'"}));
  EXPECT_TRUE(
      throws_error([] { nn::BertConfig::from_json("{"); }, ErrorKind::IO, {"does not parse"}));
}

// Every field is checked for type and range, the error naming the file and the key; the sizes
// are checked against the weights before a model is built.
TEST(BertConfigTest, FieldsAreCheckedAndNamed) {
  auto config = [](const std::string& json) {
    return [json] { nn::BertConfig::from_json(json, "dir/config.json"); };
  };
  EXPECT_TRUE(throws_error(config(R"({"num_attention_heads": 0})"), ErrorKind::Value,
                           {"[dir/config.json] \"num_attention_heads\" is 0"}));
  EXPECT_TRUE(throws_error(config(R"({"hidden_size": 384.5})"), ErrorKind::Value,
                           {"\"hidden_size\" must be a whole number, not number 384.5"}));
  EXPECT_TRUE(throws_error(config(R"({"hidden_size": "768"})"), ErrorKind::Value,
                           {"\"hidden_size\" must be a whole number, not string"}));
  EXPECT_TRUE(throws_error(config(R"({"hidden_size": 768, "num_attention_heads": 5})"),
                           ErrorKind::Value, {"768 is not a multiple", "5"}));
  EXPECT_TRUE(throws_error(config(R"({"num_hidden_layers": 100000})"), ErrorKind::Value,
                           {"\"num_hidden_layers\" is 100000", "1 to 1024"}));
  EXPECT_TRUE(throws_error(config(R"({"hidden_act": "swish"})"), ErrorKind::Value,
                           {"\"hidden_act\" is 'swish'"}));
  EXPECT_TRUE(throws_error(config(R"({"layer_norm_eps": -1})"), ErrorKind::Value,
                           {"\"layer_norm_eps\" is -1"}));
  EXPECT_NO_THROW(config(R"({"hidden_size": 768.0, "pad_token_id": null})")());

  nn::BertConfig c;
  c.vocab_size = 20;
  c.hidden_size = 8;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 16;
  c.max_position_embeddings = 6;
  nn::StateDict weights = nn::BertModel(c)->state_dict();
  EXPECT_NO_THROW(c.check_weights(weights, "w.safetensors"));
  nn::BertConfig more_layers = c;
  more_layers.num_hidden_layers = 100000;
  EXPECT_TRUE(throws_error([&] { more_layers.check_weights(weights, "w.safetensors"); },
                           ErrorKind::Value, {"\"num_hidden_layers\" is 100000", "of 2 layers"}));
  nn::BertConfig wider = c;
  wider.vocab_size = 16000000;
  EXPECT_TRUE(
      throws_error([&] { wider.check_weights(weights, "w.safetensors"); }, ErrorKind::Value,
                   {"\"vocab_size\" is 16000000", "embeddings.word_embeddings.weight", "[20, 8]"}));
}

EMBER_INSTANTIATE_DEVICE_TESTS(BertTest);

}  // namespace
}  // namespace ember
