// tools/ember/models.cpp: the MLP and CNN for 28x28 grey images.
#include "models.h"

#include "ember/error.h"

namespace ember::cli {

nn::Sequential make_model(const std::string& name) {
  if (name == "mlp")
    return nn::Sequential(nn::Flatten(), nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10));
  if (name == "cnn")
    return nn::Sequential(nn::Conv2d(1, 32, 3, nn::Conv2dOptions{.padding = {1, 1}}), nn::ReLU(),
                          nn::MaxPool2d(2),
                          nn::Conv2d(32, 64, 3, nn::Conv2dOptions{.padding = {1, 1}}), nn::ReLU(),
                          nn::MaxPool2d(2), nn::Flatten(), nn::Linear(64 * 7 * 7, 128), nn::ReLU(),
                          nn::Dropout(0.25), nn::Linear(128, 10));
  EMBER_THROW(Value, "unknown model '", name, "'; expected mlp or cnn");
}

}  // namespace ember::cli
