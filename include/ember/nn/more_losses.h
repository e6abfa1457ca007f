// ember/nn/more_losses.h: the module forms of nn/more_losses.cpp's functions and the distance
// layers -- SmoothL1Loss, HuberLoss, KLDivLoss, PoissonNLLLoss, GaussianNLLLoss,
// MarginRankingLoss, HingeEmbeddingLoss, CosineEmbeddingLoss, TripletMarginLoss,
// MultiLabelSoftMarginLoss, CosineSimilarity, PairwiseDistance -- with PyTorch's arguments and
// defaults; forward forwards to the F:: function.
#pragma once

#include "ember/nn/functional.h"
#include "ember/nn/losses.h"
#include "ember/nn/module.h"

namespace ember::nn {

class SmoothL1LossImpl : public Module {
 public:
  explicit SmoothL1LossImpl(Reduction reduction = Reduction::Mean, double beta = 1.0)
      : Module("SmoothL1Loss"), reduction(reduction), beta(beta) {}
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return F::smooth_l1_loss(input, target, reduction, beta);
  }
  Reduction reduction;
  double beta;
};
EMBER_BUILTIN_MODULE(SmoothL1Loss);

class HuberLossImpl : public Module {
 public:
  explicit HuberLossImpl(Reduction reduction = Reduction::Mean, double delta = 1.0)
      : Module("HuberLoss"), reduction(reduction), delta(delta) {}
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return F::huber_loss(input, target, reduction, delta);
  }
  Reduction reduction;
  double delta;
};
EMBER_BUILTIN_MODULE(HuberLoss);

// input: log-probabilities. PyTorch's reduction="batchmean" is kSum divided by input.size(0).
class KLDivLossImpl : public Module {
 public:
  explicit KLDivLossImpl(Reduction reduction = Reduction::Mean, bool log_target = false)
      : Module("KLDivLoss"), reduction(reduction), log_target(log_target) {}
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return F::kl_div(input, target, reduction, log_target);
  }
  Reduction reduction;
  bool log_target;
};
EMBER_BUILTIN_MODULE(KLDivLoss);

class PoissonNLLLossImpl : public Module {
 public:
  explicit PoissonNLLLossImpl(bool log_input = true, bool full = false, double eps = 1e-8,
                              Reduction reduction = Reduction::Mean)
      : Module("PoissonNLLLoss"),
        log_input(log_input),
        full(full),
        eps(eps),
        reduction(reduction) {}
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return F::poisson_nll_loss(input, target, log_input, full, eps, reduction);
  }
  bool log_input, full;
  double eps;
  Reduction reduction;
};
EMBER_BUILTIN_MODULE(PoissonNLLLoss);

class GaussianNLLLossImpl : public Module {
 public:
  explicit GaussianNLLLossImpl(bool full = false, double eps = 1e-6,
                               Reduction reduction = Reduction::Mean)
      : Module("GaussianNLLLoss"), full(full), eps(eps), reduction(reduction) {}
  Tensor forward(const Tensor& input, const Tensor& target, const Tensor& var) const {
    return F::gaussian_nll_loss(input, target, var, full, eps, reduction);
  }
  bool full;
  double eps;
  Reduction reduction;
};
EMBER_BUILTIN_MODULE(GaussianNLLLoss);

class MarginRankingLossImpl : public Module {
 public:
  explicit MarginRankingLossImpl(double margin = 0.0, Reduction reduction = Reduction::Mean)
      : Module("MarginRankingLoss"), margin(margin), reduction(reduction) {}
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target) const {
    return F::margin_ranking_loss(input1, input2, target, margin, reduction);
  }
  double margin;
  Reduction reduction;
};
EMBER_BUILTIN_MODULE(MarginRankingLoss);

class HingeEmbeddingLossImpl : public Module {
 public:
  explicit HingeEmbeddingLossImpl(double margin = 1.0, Reduction reduction = Reduction::Mean)
      : Module("HingeEmbeddingLoss"), margin(margin), reduction(reduction) {}
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return F::hinge_embedding_loss(input, target, margin, reduction);
  }
  double margin;
  Reduction reduction;
};
EMBER_BUILTIN_MODULE(HingeEmbeddingLoss);

class CosineEmbeddingLossImpl : public Module {
 public:
  explicit CosineEmbeddingLossImpl(double margin = 0.0, Reduction reduction = Reduction::Mean)
      : Module("CosineEmbeddingLoss"), margin(margin), reduction(reduction) {}
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target) const {
    return F::cosine_embedding_loss(input1, input2, target, margin, reduction);
  }
  double margin;
  Reduction reduction;
};
EMBER_BUILTIN_MODULE(CosineEmbeddingLoss);

class TripletMarginLossImpl : public Module {
 public:
  explicit TripletMarginLossImpl(double margin = 1.0, double p = 2.0, double eps = 1e-6,
                                 bool swap = false, Reduction reduction = Reduction::Mean)
      : Module("TripletMarginLoss"),
        margin(margin),
        p(p),
        eps(eps),
        swap(swap),
        reduction(reduction) {}
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative) const {
    return F::triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction);
  }
  double margin, p, eps;
  bool swap;
  Reduction reduction;
};
EMBER_BUILTIN_MODULE(TripletMarginLoss);

class MultiLabelSoftMarginLossImpl : public Module {
 public:
  explicit MultiLabelSoftMarginLossImpl(Tensor weight = Tensor(),
                                        Reduction reduction = Reduction::Mean)
      : Module("MultiLabelSoftMarginLoss"), weight(std::move(weight)), reduction(reduction) {}
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return F::multilabel_soft_margin_loss(input, target, weight, reduction);
  }
  Tensor weight;
  Reduction reduction;
};
EMBER_BUILTIN_MODULE(MultiLabelSoftMarginLoss);

class CosineSimilarityImpl : public Module {
 public:
  explicit CosineSimilarityImpl(int64_t dim = 1, double eps = 1e-8)
      : Module("CosineSimilarity"), dim(dim), eps(eps) {}
  Tensor forward(const Tensor& x1, const Tensor& x2) const {
    return F::cosine_similarity(x1, x2, dim, eps);
  }
  int64_t dim;
  double eps;
};
EMBER_BUILTIN_MODULE(CosineSimilarity);

class PairwiseDistanceImpl : public Module {
 public:
  explicit PairwiseDistanceImpl(double p = 2.0, double eps = 1e-6, bool keepdim = false)
      : Module("PairwiseDistance"), p(p), eps(eps), keepdim(keepdim) {}
  Tensor forward(const Tensor& x1, const Tensor& x2) const {
    return F::pairwise_distance(x1, x2, p, eps, keepdim);
  }
  double p, eps;
  bool keepdim;
};
EMBER_BUILTIN_MODULE(PairwiseDistance);

}  // namespace ember::nn
