// tests/test_printing.cpp: tensors print as PyTorch prints them (expected strings are PyTorch
// 2.x's repr for the same values).
#include "test_util.h"

namespace ember {
namespace {

class PrintingTest : public testing::DeviceTest {
 protected:
  // The repr with this device's suffix, as PyTorch adds ", device='cuda:0'" before the dtype.
  std::string expect(const std::string& body, const std::string& dtype = "") const {
    std::string s = "tensor(" + body;
    if (device().is_cuda()) s += ", device='cuda:0'";
    if (!dtype.empty()) s += ", dtype=torch." + dtype;
    return s + ")";
  }
};

TEST_P(PrintingTest, FloatsIntsAndBools) {
  EXPECT_EQ(tensor({1.0, 2.0, 3.0}, on()).str(), expect("[1., 2., 3.]"));
  EXPECT_EQ(tensor({1.5, -2.25}, on()).str(), expect("[ 1.5000, -2.2500]"));
  EXPECT_EQ(tensor({1, 2, 3}, on()).str(), expect("[1, 2, 3]"));
  EXPECT_EQ(tensor({true, false}, on()).str(), expect("[ True, False]"));
  EXPECT_EQ(tensor({1, -20}, on(kInt32)).str(), expect("[  1, -20]", "int32"));
  EXPECT_EQ(tensor({1.0, 2.5}, on(kFloat64)).str(), expect("[1.0000, 2.5000]", "float64"));
  EXPECT_EQ(tensor({3, 4}, on(kUInt8)).str(), expect("[3, 4]", "uint8"));
}

TEST_P(PrintingTest, ZeroDimAndEmpty) {
  EXPECT_EQ(tensor(3.0, on()).str(), expect("3."));
  EXPECT_EQ(tensor(3, on()).str(), expect("3"));
  EXPECT_EQ(tensor(0.5, on()).str(), expect("0.5000"));
  EXPECT_EQ(zeros({0}, on()).str(), expect("[]"));
  // PyTorch puts the device before the size.
  EXPECT_EQ(zeros({0, 3}, on()).str(), device().is_cuda()
                                           ? "tensor([], device='cuda:0', size=(0, 3))"
                                           : "tensor([], size=(0, 3))");
  EXPECT_EQ(zeros({0}, on(kInt64)).str(), expect("[]", "int64"));
}

TEST_P(PrintingTest, ScientificNotationAndSpecialValues) {
  EXPECT_EQ(tensor({1e-5, 1e3}, on()).str(), expect("[1.0000e-05, 1.0000e+03]"));
  EXPECT_EQ(tensor({0.1, 100.0}, on()).str(), expect("[  0.1000, 100.0000]"));
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(tensor({1.0, inf, -inf}, on()).str(), expect("[1., inf, -inf]"));
  EXPECT_EQ(tensor({0.0, 0.0}, on()).str(), expect("[0., 0.]"));
}

TEST_P(PrintingTest, NestedDimsAlignAndIndent) {
  EXPECT_EQ(tensor({{1.0, 2.0}, {3.0, 40.0}}, on()).str(),
            expect("[[ 1.,  2.],\n        [ 3., 40.]]"));
  Tensor t = arange(8, on()).reshape({2, 2, 2});
  EXPECT_EQ(t.str(), expect("[[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]]"));
}

TEST_P(PrintingTest, LargeTensorsAreSummarised) {
  EXPECT_EQ(arange(2000, on()).str(), expect("[   0,    1,    2,  ..., 1997, 1998, 1999]"));
  Tensor m = arange(1100, on()).reshape({100, 11});
  std::string s = m.str();
  EXPECT_NE(s.find("[   0,    1,    2,  ...,    8,    9,   10],"), std::string::npos) << s;
  EXPECT_NE(s.find("        ...,\n"), std::string::npos) << s;
  EXPECT_NE(s.find("[1089, 1090, 1091,  ..., 1097, 1098, 1099]]"), std::string::npos) << s;
}

TEST_P(PrintingTest, LongRowsWrapAtEightyColumns) {
  std::string s = arange(30, on(kFloat32)).div(3.0).str();
  EXPECT_NE(s.find(",\n        "), std::string::npos) << s;
  for (size_t start = 0, end; start < s.size(); start = end + 1) {
    end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    EXPECT_LE(end - start, 80u) << s;
  }
}

TEST_P(PrintingTest, StreamOperatorMatchesStr) {
  Tensor t = tensor({1.0, 2.0}, on());
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), t.str());
}

EMBER_INSTANTIATE_DEVICE_TESTS(PrintingTest);

}  // namespace
}  // namespace ember
