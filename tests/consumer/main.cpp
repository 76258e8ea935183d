// Builds y = sum(x * x) with the installed library, runs backward and checks dy/dx = 2x.
// Exits nonzero when the gradient (or the forward value) is wrong.
#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

#include "autograd/autograd.h"

int main() {
  using namespace rematch;
  try {
    Tensor x = from_vector<float>({1.f, -2.f, 3.f, 0.5f}, {2, 2});
    x.requires_grad_();
    Tensor y = sum(mul(x, x));
    backward(y);

    const std::vector<float> xs = x.to_vector<float>();
    const std::vector<float> grad = x.grad().to_vector<float>();
    const float value = y.item<float>();
    std::printf("y = %g\ndy/dx = %s\n", value, x.grad().str().c_str());

    bool ok = std::fabs(value - 14.25f) < 1e-5f && grad.size() == xs.size();
    for (size_t i = 0; ok && i < xs.size(); ++i) ok = std::fabs(grad[i] - 2 * xs[i]) < 1e-6f;
    std::printf("%s\n", ok ? "consumer: ok" : "consumer: gradient mismatch");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 2;
  }
}
