// Tests of io/pickle.h, the safe pickle reader under the PyTorch checkpoint loader: the byte
// strings are what Python's pickle writes (protocols 2 and 4) for the values named, and hostile
// ones that must be refused with a clear message.
#include <gtest/gtest.h>

#include <string>

#include "ember/error.h"
#include "io/pickle.h"

namespace {

using ember::io::detail::PickleRef;
using ember::io::detail::read_pickle;
using Kind = ember::io::detail::PickleValue::Kind;

PickleRef run(const std::string& bytes) {
  return read_pickle(bytes, "test.pkl");
}

std::string error_of(const std::string& bytes) {
  try {
    run(bytes);
  } catch (const ember::Error& e) {
    return e.what();
  }
  return "no error";
}

// pickle.dumps({'a': [1, -2, 3.5, True, None], 7: (b'x', 300, 2**40)}, protocol=2)
const std::string kProtocol2 = std::string(
    "\x80\x02}q\x00(X\x01\x00\x00\x00"
    "aq\x01]q\x02(K\x01J\xfe\xff\xff\xffG@\x0c\x00\x00\x00\x00"
    "\x00\x00\x88NeK\x07"
    "c_codecs\nencode\nq\x03X\x01\x00\x00\x00xq\x04X\x06\x00\x00\x00latin1q"
    "\x05\x86q\x06Rq\x07M,\x01\x8a\x06\x00\x00\x00\x00\x00\x01\x87q\x08u.",
    100);

TEST(Pickle, Protocol4FramesMemoAndStackGlobal) {
  // x = [1, 2]; pickle.dumps(collections.OrderedDict([('w', x), ('v', x)]), protocol=4): the
  // list is stored once and fetched again through the memo
  const std::string bytes(
      "\x80\x04\x95\x36\x00\x00\x00\x00\x00\x00\x00\x8c\x0b"
      "collections\x94\x8c\x0b"
      "OrderedDict\x94\x93\x94)R\x94(\x8c\x01w\x94]\x94(K\x01K\x02"
      "e\x8c\x01v\x94h\x05u.",
      65);
  const auto v = run(bytes);
  ASSERT_EQ(v->kind, Kind::Call);
  EXPECT_EQ(v->items[0]->text, "collections.OrderedDict");
  ASSERT_EQ(v->items.size(), 6u);
  EXPECT_EQ(v->items[2]->text, "w");
  EXPECT_EQ(v->items[4]->text, "v");
  ASSERT_EQ(v->items[3]->kind, Kind::List);
  EXPECT_EQ(v->items[3]->items[1]->integer, 2);
  EXPECT_EQ(v->items[3].get(), v->items[5].get());  // the memo shares, as Python does
}

TEST(Pickle, Protocol2ValuesAndGlobalsOutsideTheAllowList) {
  // _codecs.encode is how protocol 2 writes bytes: allowed (the checkpoint layer makes bytes of
  // it); the same pickle calling builtins.eval instead is refused
  EXPECT_EQ(error_of(kProtocol2), "no error");
  std::string evil = kProtocol2;
  evil.replace(evil.find("c_codecs\nencode\n"), 16, "cbuiltins\neval\n");
  EXPECT_NE(error_of(evil).find("global 'builtins.eval' is not allowed"), std::string::npos);
  // the same pickle with the bytes value replaced by a SHORT_BINBYTES one
  std::string plain = kProtocol2;
  const auto start = plain.find("c_codecs");
  const auto end = plain.find("q\x07", start) + 2;
  plain.replace(start, end - start, std::string("C\x01x", 3));
  const auto v = run(plain);
  ASSERT_EQ(v->kind, Kind::Dict);
  ASSERT_EQ(v->items.size(), 4u);
  EXPECT_EQ(v->items[0]->text, "a");
  const auto& list = v->items[1]->items;
  ASSERT_EQ(list.size(), 5u);
  EXPECT_EQ(list[0]->integer, 1);
  EXPECT_EQ(list[1]->integer, -2);
  EXPECT_EQ(list[2]->floating, 3.5);
  EXPECT_TRUE(list[3]->boolean);
  EXPECT_EQ(list[4]->kind, Kind::None);
  EXPECT_EQ(v->items[2]->integer, 7);
  const auto& tuple = v->items[3]->items;
  ASSERT_EQ(tuple.size(), 3u);
  EXPECT_EQ(tuple[0]->kind, Kind::Bytes);
  EXPECT_EQ(tuple[1]->integer, 300);
  EXPECT_EQ(tuple[2]->integer, int64_t{1} << 40);
}

TEST(Pickle, HostilePicklesAreRefusedWithAReason) {
  // what a malicious checkpoint holds: GLOBAL posix.system, called by REDUCE
  EXPECT_NE(error_of(std::string("\x80\x02"
                                 "cposix\nsystem\nq\x00X\x02\x00\x00\x00"
                                 "idq\x01\x85q\x02Rq\x03.",
                                 34))
                .find("'posix.system' is not allowed"),
            std::string::npos);
  EXPECT_NE(error_of("\x80\x02"
                     "cbuiltins\neval\n.")
                .find("'builtins.eval'"),
            std::string::npos);
  EXPECT_NE(error_of(std::string("\x80\x02h\x05.", 4)).find("memo index 5 was never stored"),
            std::string::npos);
  EXPECT_NE(error_of("\x80\x02X\xff\xff\xff\x7f"
                     "abc")
                .find("truncated"),
            std::string::npos);
  EXPECT_NE(
      error_of(std::string("\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\xff", 11)).find("truncated"),
      std::string::npos);
  EXPECT_NE(error_of("\x80\x02]").find("truncated"), std::string::npos);
  EXPECT_NE(error_of("\x80\x02K\x01K\x02.").find("2 values on the stack"), std::string::npos);
  EXPECT_NE(error_of("\x80\x02\xff").find("opcode 0xff"), std::string::npos);
  // a list appended into itself, through the memo
  EXPECT_NE(error_of(std::string("\x80\x02]q\x00h\x00"
                                 "a.",
                                 9))
                .find("inside itself"),
            std::string::npos);
  // an OrderedDict given itself as its state
  EXPECT_NE(error_of(std::string("\x80\x02"
                                 "ccollections\nOrderedDict\n)R2b.",
                                 32))
                .find("built from itself"),
            std::string::npos);
  // 200000 nested lists: refused at the depth limit, without deep recursion
  std::string deep = "\x80\x02";
  for (int i = 0; i < 200000; ++i) deep += "]";
  for (int i = 0; i < 200000; ++i) deep += "a";
  deep += ".";
  EXPECT_NE(error_of(deep).find("nesting deeper than 1000"), std::string::npos);
}

}  // namespace
