// tests/test_multi_output.cpp: autograd nodes with several outputs and gradient hooks -- split,
// split_with_sizes, chunk and unbind (values, views, errors, exact gradients with pieces that get
// no gradient, gradcheck, the in-place refusal), retain_grad and autograd::grad on a piece, and
// register_hook / register_post_accumulate_grad_hook on leaves, non-leaves and pieces, and
// autograd::queue_callback.
#include <algorithm>
#include <vector>

#include "test_util.h"

namespace ember {
namespace {

using testing::tensor_close;
using testing::tensor_equal;
using testing::throws_error;

class MultiOutputTest : public testing::DeviceTest {
 protected:
  Tensor leaf(const NestedValues& values, DType dtype = kFloat32) const {
    return tensor(values, {.dtype = dtype, .device = device(), .requires_grad = true});
  }
  Tensor value(const NestedValues& values, DType dtype = kFloat32) const {
    return tensor(values, {.dtype = dtype, .device = device()});
  }
  // (2, 5): 0 .. 9.
  Tensor grid(bool requires_grad = false) const {
    return arange(10, {.dtype = kFloat32, .device = device()})
        .reshape({2, 5})
        .requires_grad_(requires_grad);
  }
};

std::vector<Shape> shapes_of(const std::vector<Tensor>& ts) {
  std::vector<Shape> s;
  for (const Tensor& t : ts) s.push_back(t.sizes());
  return s;
}

// --- forward

TEST_P(MultiOutputTest, SplitChunkAndUnbindGiveViewsOfTheRightShapes) {
  Tensor x = grid();
  EXPECT_EQ(shapes_of(x.split(2, 1)), (std::vector<Shape>{{2, 2}, {2, 2}, {2, 1}}));
  EXPECT_EQ(shapes_of(split(x, 5, -1)), (std::vector<Shape>{{2, 5}}));
  EXPECT_EQ(shapes_of(x.split_with_sizes({1, 0, 4}, 1)),
            (std::vector<Shape>{{2, 1}, {2, 0}, {2, 4}}));
  // chunk: ceil(5 / 3) = 2 per piece; ceil(5 / 4) = 2 gives only 3 pieces, as in PyTorch.
  EXPECT_EQ(shapes_of(x.chunk(3, 1)), (std::vector<Shape>{{2, 2}, {2, 2}, {2, 1}}));
  EXPECT_EQ(shapes_of(x.chunk(4, 1)), (std::vector<Shape>{{2, 2}, {2, 2}, {2, 1}}));
  EXPECT_EQ(shapes_of(x.unbind(0)), (std::vector<Shape>{{5}, {5}}));
  EXPECT_EQ(shapes_of(unbind(x, 1)).size(), 5u);
  // An empty dim: split gives one empty piece, chunk `chunks` of them.
  Tensor e = zeros({0, 3}, {.device = device()});
  EXPECT_EQ(shapes_of(e.split(2)), (std::vector<Shape>{{0, 3}}));
  EXPECT_EQ(shapes_of(e.split(0)), (std::vector<Shape>{{0, 3}}));
  EXPECT_EQ(shapes_of(e.chunk(3)), (std::vector<Shape>{{0, 3}, {0, 3}, {0, 3}}));

  std::vector<Tensor> p = x.split(2, 1);
  EXPECT_TRUE(tensor_equal(p[1], value({{2.0, 3.0}, {7.0, 8.0}})));
  EXPECT_TRUE(tensor_equal(x.unbind(1)[4], value({4.0, 9.0})));
  // Views: writing a piece writes x.
  p[2].fill_(-1.0);
  EXPECT_EQ(x.index({1, 4}).item<float>(), -1.0f);
  EXPECT_EQ(p[1].storage(), x.storage());
}

TEST_P(MultiOutputTest, BadArgumentsAreErrorsThatSayWhy) {
  Tensor x = grid();
  EXPECT_TRUE(throws_error(
      [&] {
        x.split_with_sizes({2, 2}, 1);
      },
      ErrorKind::Value, {"[split_with_sizes]", "sum exactly to 5", "[2, 2]"}));
  EXPECT_TRUE(throws_error(
      [&] {
        x.split_with_sizes({6, -1}, 1);
      },
      ErrorKind::Value, {"[split_with_sizes]", "non-negative", "[6, -1]"}));
  EXPECT_TRUE(throws_error([&] { x.split(0, 1); }, ErrorKind::Value,
                           {"[split]", "only be 0 if dimension size is 0", "5"}));
  EXPECT_TRUE(
      throws_error([&] { x.chunk(0); }, ErrorKind::Value, {"[chunk]", "greater than 0, got: 0"}));
  EXPECT_TRUE(throws_error([&] { x.split(1, 2); }, ErrorKind::Index, {"[split]"}));
  Tensor s = tensor(3.0, {.device = device()});
  EXPECT_TRUE(throws_error([&] { s.unbind(); }, ErrorKind::Index, {"[unbind]", "no dimensions"}));
}

// --- gradients

TEST_P(MultiOutputTest, OneNodeBacksAllPiecesAndUnusedPiecesGetZero) {
  Tensor x = grid(true);
  std::vector<Tensor> p = x.split(2, 1);
  ASSERT_EQ(p[0].grad_fn(), p[2].grad_fn());
  EXPECT_EQ(p[0].grad_fn()->name(), "SplitWithSizesBackward0");
  EXPECT_EQ(p[0].grad_fn()->num_outputs(), 3u);
  // Only pieces 0 and 2 are used; piece 1's gradient is zero.
  ((p[0] * 3.0).sum() + (p[2] * p[2]).sum()).backward();
  EXPECT_TRUE(
      tensor_equal(x.grad(), value({{3.0, 3.0, 0.0, 0.0, 8.0}, {3.0, 3.0, 0.0, 0.0, 18.0}})));

  Tensor y = grid(true);
  std::vector<Tensor> rows = y.unbind(0);
  EXPECT_EQ(rows[1].grad_fn()->name(), "UnbindBackward0");
  (rows[1] * 2.0).sum().backward();
  EXPECT_TRUE(
      tensor_equal(y.grad(), value({{0.0, 0.0, 0.0, 0.0, 0.0}, {2.0, 2.0, 2.0, 2.0, 2.0}})));
}

TEST_P(MultiOutputTest, GradientsFromSeveralPiecesMeetInOneBackward) {
  Tensor x = leaf({1.0, 2.0, 3.0, 4.0});
  std::vector<Tensor> c = x.chunk(2);
  // c[0] * c[1] elementwise: d/dx = (c[1], c[0]); every piece reaches the same node.
  (c[0] * c[1]).sum().backward();
  EXPECT_TRUE(tensor_equal(x.grad(), value({3.0, 4.0, 1.0, 2.0})));
}

TEST_P(MultiOutputTest, GradcheckOfEveryMultiOutputOp) {
  Generator gen(21);
  Tensor x =
      (rand({3, 4, 5}, {.dtype = kFloat64, .device = device()}, &gen) - 0.5).requires_grad_();
  auto weighted = [](const std::vector<Tensor>& pieces) {
    // Pieces weighted differently, and one left out, so a wrong routing shows.
    Tensor total = zeros({}, {.dtype = pieces[0].dtype(), .device = pieces[0].device()});
    for (size_t i = 0; i + 1 < pieces.size(); ++i) total = total + (pieces[i] * (i + 1.0)).sum();
    return total;
  };
  using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
  for (const Fn& f :
       std::vector<Fn>{[&](const std::vector<Tensor>& in) { return weighted(in[0].split(2, 2)); },
                       [&](const std::vector<Tensor>& in) {
                         return weighted(in[0].split_with_sizes({1, 3}, 1));
                       },
                       [&](const std::vector<Tensor>& in) { return weighted(in[0].chunk(2, 0)); },
                       [&](const std::vector<Tensor>& in) { return weighted(in[0].unbind(1)); },
                       [&](const std::vector<Tensor>& in) {
                         return weighted(in[0].transpose(0, 2).unbind(0));
                       }})
    EXPECT_TRUE(autograd::gradcheck(f, {x}));
}

TEST_P(MultiOutputTest, PiecesCannotBeChangedInPlaceWhileTheyRequireGrad) {
  Tensor x = grid(true) * 1.0;
  std::vector<Tensor> p = x.split(2, 1);
  EXPECT_TRUE(throws_error(
      [&] { p[1].mul_(2.0); }, ErrorKind::Value,
      {"[mul_]", "Output 1 of SplitWithSizesBackward0", "multiple views", "out-of-place"}));
  // Without grad recording, or when nothing requires grad, it is allowed.
  Tensor y = grid();
  std::vector<Tensor> q = y.unbind(0);
  q[0].add_(1.0);
  EXPECT_EQ(y.index({0, 0}).item<float>(), 1.0f);
}

TEST_P(MultiOutputTest, RetainGradAndAutogradGradOnAPiece) {
  Tensor x = grid(true);
  std::vector<Tensor> p = x.split(2, 1);
  p[2].retain_grad();
  Tensor loss = (p[2] * p[2] * 0.5).sum() + p[0].sum();
  std::vector<Tensor> g = autograd::grad({loss}, {p[2], x}, {}, true);
  EXPECT_TRUE(tensor_equal(g[0], value({{4.0}, {9.0}})));  // d/dp2 = p2
  EXPECT_TRUE(tensor_equal(g[1], value({{1.0, 1.0, 0.0, 0.0, 4.0}, {1.0, 1.0, 0.0, 0.0, 9.0}})));
  loss.backward();
  EXPECT_TRUE(tensor_equal(p[2].grad(), value({{4.0}, {9.0}})));
}

// --- hooks

TEST_P(MultiOutputTest, HooksSeeAndCanReplaceTheGradient) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 3.0;
  std::vector<Tensor> seen;
  y.register_hook([&](const Tensor& g) {
    seen.push_back(g.clone());
    return g * 10.0;  // replaces y's gradient before it flows on
  });
  x.register_hook([&](const Tensor& g) {
    seen.push_back(g.clone());
    return Tensor();  // keeps it
  });
  y.sum().backward();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(tensor_equal(seen[0], value({1.0, 1.0})));
  EXPECT_TRUE(tensor_equal(seen[1], value({30.0, 30.0})));
  EXPECT_TRUE(tensor_equal(x.grad(), value({30.0, 30.0})));
}

TEST_P(MultiOutputTest, HooksOnPiecesSeeOnlyTheirOwnGradient) {
  Tensor x = grid(true);
  std::vector<Tensor> p = x.split(2, 1);
  std::vector<Shape> seen;
  p[2].register_hook([&](const Tensor& g) {
    seen.push_back(g.sizes());
    return g * 0.0;
  });
  p[0].register_hook([&](const Tensor& g) {
    seen.push_back(g.sizes());
    return Tensor();
  });
  (p[0].sum() + p[2].sum() * 5.0).backward();
  EXPECT_EQ(seen, (std::vector<Shape>{{2, 1}, {2, 2}}));  // registration order: p[2]'s first
  EXPECT_TRUE(
      tensor_equal(x.grad(), value({{1.0, 1.0, 0.0, 0.0, 0.0}, {1.0, 1.0, 0.0, 0.0, 0.0}})));
}

TEST_P(MultiOutputTest, RemovedHooksNoLongerRun) {
  Tensor x = leaf({1.0});
  int calls = 0;
  autograd::HookHandle h = x.register_hook([&](const Tensor&) {
    ++calls;
    return Tensor();
  });
  (x * 2.0).sum().backward();
  h.remove();
  h.remove();  // twice: nothing
  (x * 2.0).sum().backward();
  EXPECT_EQ(calls, 1);
  Tensor y = x * 2.0;
  autograd::HookHandle hy = y.register_hook([&](const Tensor& g) {
    ++calls;
    return g;
  });
  hy.remove();
  y.sum().backward();
  EXPECT_EQ(calls, 1);
}

TEST_P(MultiOutputTest, PostAccumulateHooksRunAfterGradIsUpdated) {
  Tensor w = leaf({1.0, 2.0});
  std::vector<Tensor> grads_seen;
  w.register_post_accumulate_grad_hook(
      [&](const Tensor& t) { grads_seen.push_back(t.grad().clone()); });
  (w * w).sum().backward();
  (w * 3.0).sum().backward();
  ASSERT_EQ(grads_seen.size(), 2u);
  EXPECT_TRUE(tensor_equal(grads_seen[0], value({2.0, 4.0})));
  EXPECT_TRUE(tensor_equal(grads_seen[1], value({5.0, 7.0})));  // accumulated
  // autograd::grad accumulates nothing, so the hook does not run.
  autograd::grad({(w * 2.0).sum()}, {w});
  EXPECT_EQ(grads_seen.size(), 2u);
}

TEST_P(MultiOutputTest, QueuedCallbacksRunOnceAfterEveryGradient) {
  Tensor a = leaf({1.0, 2.0});
  Tensor b = leaf({3.0});
  std::vector<std::string> events;
  auto on_grad = [&](const char* name) {
    return [&, name](const Tensor&) {
      events.push_back(name);
      // Queued by every hook: each runs once, after both leaves have their gradients.
      autograd::queue_callback([&, name] {
        events.push_back(std::string("callback ") + name + " sees " +
                         (a.grad().defined() && b.grad().defined() ? "both" : "one"));
      });
    };
  };
  a.register_post_accumulate_grad_hook(on_grad("a"));
  b.register_post_accumulate_grad_hook(on_grad("b"));
  ((a * b).sum() + b.sum()).backward();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2], std::string("callback ") + events[0] + " sees both");
  EXPECT_EQ(events[3], std::string("callback ") + events[1] + " sees both");
  // A callback may queue another, which runs in the same pass; the next pass starts empty.
  events.clear();
  Tensor c = leaf({1.0});
  c.register_post_accumulate_grad_hook([&](const Tensor&) {
    autograd::queue_callback([&] {
      events.push_back("first");
      autograd::queue_callback([&] { events.push_back("second"); });
    });
  });
  (c * 2.0).sum().backward();
  EXPECT_EQ(events, (std::vector<std::string>{"first", "second"}));
  (c * 2.0).sum().backward();
  EXPECT_EQ(events.size(), 4u);
}

TEST_P(MultiOutputTest, GradAccumulatorIsWhatTheGraphReaches) {
  Tensor w = leaf({1.0, 2.0});
  Tensor unused = leaf({3.0});
  std::shared_ptr<autograd::Node> acc = autograd::grad_accumulator(w);
  ASSERT_NE(acc, nullptr);
  EXPECT_EQ(acc->name(), "AccumulateGrad");
  EXPECT_EQ(autograd::grad_accumulator(w), acc);  // the same node while it lives
  Tensor y = (w * 2.0).sum();
  // A walk from y's grad_fn meets w's accumulator and not the unused leaf's.
  std::vector<autograd::Node*> stack{y.grad_fn().get()}, seen;
  while (!stack.empty()) {
    autograd::Node* n = stack.back();
    stack.pop_back();
    seen.push_back(n);
    for (const autograd::Edge& e : n->next_edges())
      if (e.fn) stack.push_back(e.fn.get());
  }
  EXPECT_NE(std::find(seen.begin(), seen.end(), acc.get()), seen.end());
  EXPECT_EQ(std::find(seen.begin(), seen.end(), autograd::grad_accumulator(unused).get()),
            seen.end());
  EXPECT_TRUE(throws_error([&] { autograd::grad_accumulator(y); }, ErrorKind::Value,
                           {"[grad_accumulator]", "grad_fn"}));
  EXPECT_TRUE(throws_error([&] { autograd::grad_accumulator(value({1.0})); }, ErrorKind::Value,
                           {"[grad_accumulator]", "does not require grad"}));
}

// A leaf's gradient is accumulated as soon as it is complete, before the rest of the graph runs,
// even when its accumulator was made before the forward pass (as DistributedDataParallel makes
// them, to hook the gradients while backward goes on).
TEST_P(MultiOutputTest, LeavesAccumulateAsSoonAsTheirGradientIsComplete) {
  Tensor x = leaf({1.0, 2.0}), w1 = leaf({3.0, 4.0}), w2 = leaf({5.0, 6.0});
  auto keep = autograd::grad_accumulator(w2);  // older than every node of the forward below
  std::vector<std::string> order;
  w2.register_post_accumulate_grad_hook([&](const Tensor&) { order.push_back("w2 accumulated"); });
  Tensor h = x * w1;
  h.register_hook([&](const Tensor&) {
    order.push_back("h's gradient");
    return Tensor();
  });
  (h * w2).sum().backward();
  EXPECT_EQ(order, (std::vector<std::string>{"w2 accumulated", "h's gradient"}));
}

TEST_P(MultiOutputTest, QueueCallbackOutsideBackwardIsAnError) {
  EXPECT_TRUE(throws_error([] { autograd::queue_callback([] {}); }, ErrorKind::Value,
                           {"[queue_callback]", "during a backward pass"}));
}

TEST_P(MultiOutputTest, HookRegistrationErrors) {
  Tensor c = value({1.0});
  EXPECT_TRUE(throws_error([&] { c.register_hook([](const Tensor& g) { return g; }); },
                           ErrorKind::Value, {"[register_hook]", "doesn't require gradient"}));
  Tensor y = leaf({1.0}) * 2.0;
  EXPECT_TRUE(throws_error([&] { y.register_post_accumulate_grad_hook([](const Tensor&) {}); },
                           ErrorKind::Value, {"[register_post_accumulate_grad_hook]", "non-leaf"}));
}

TEST_P(MultiOutputTest, OptionalInputsAreSkippedWhenRecording) {
  // linear without a bias records a node over an undefined input.
  Tensor x = leaf({{1.0, 2.0}});
  Tensor w = leaf({{3.0, 4.0}});
  Tensor y = nn::functional::linear(x, w, Tensor());
  y.sum().backward();
  EXPECT_TRUE(tensor_equal(x.grad(), value({{3.0, 4.0}})));
  EXPECT_TRUE(tensor_equal(w.grad(), value({{1.0, 2.0}})));
}

EMBER_INSTANTIATE_DEVICE_TESTS(MultiOutputTest);

}  // namespace
}  // namespace ember
