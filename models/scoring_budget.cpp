#include "models/scoring_budget.h"

#include <cctype>
#include <fstream>
#include <mutex>

#include "tensor/cuda/runtime.h"
#include "tensor/error.h"

namespace rematch::models {
namespace {

std::mutex g_mutex;
std::optional<int64_t> g_budget;  // auto

int64_t host_total_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") return kib * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;  // unknown: no limit
}

}  // namespace

void set_scoring_memory_budget(std::optional<int64_t> bytes) {
  REMATCH_CHECK(!bytes || *bytes >= 0, "memory budget: must not be negative, got ", *bytes);
  std::lock_guard<std::mutex> lock(g_mutex);
  g_budget = bytes;
}

std::optional<int64_t> scoring_memory_budget_setting() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_budget;
}

int64_t scoring_memory_budget(Device device) {
  const std::optional<int64_t> b = scoring_memory_budget_setting();
  if (b) return *b;
  const int64_t total = device.is_cuda() ? static_cast<int64_t>(cuda::total_memory(device.index)) : host_total_memory();
  return total / 2;
}

std::optional<int64_t> parse_memory_budget(const std::string& text, const std::string& flag) {
  if (text == "auto") return std::nullopt;
  if (text == "none") return 0;
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string unit = text.substr(digits);
  const struct {
    const char* name;
    int64_t factor;
  } units[] = {{"", 1},           {"KiB", 1 << 10},   {"MiB", 1 << 20},   {"GiB", int64_t{1} << 30},
               {"KB", 1000},      {"MB", 1000000},     {"GB", 1000000000}};
  for (const auto& u : units) {
    if (digits == 0 || digits > 12 || unit != u.name) continue;
    const int64_t n = std::stoll(text.substr(0, digits));
    REMATCH_CHECK(n > 0, flag, " ", text, ": a budget must be positive (or none for no limit)");
    return n * u.factor;
  }
  REMATCH_FAIL(flag, " ", text, ": expected auto, none, or a size such as 512MiB, 2GiB or 1500000000 (bytes)");
}

int64_t pair_bytes_per_caption(int64_t n_img, int64_t n_word, int64_t n_reg, int64_t embed, int64_t sim_dim,
                               int64_t sgr_steps, DType dtype) {
  const int64_t nodes = n_word + 1;
  int64_t values = 5 * n_word * n_reg      // attention: scores, LeakyReLU, l2n, softmax, α
                   + 2 * n_word * sim_dim  // local similarity vectors and their l2n
                   + 3 * embed + 2 * sim_dim  // the global node
                   + nodes * sim_dim;         // the node tensor
  if (sgr_steps > 0)
    values += (sgr_steps - 1) * (6 * nodes * sim_dim + 2 * nodes * nodes) + 3 * nodes * sim_dim;
  else
    values += 4 * nodes * sim_dim + 4 * nodes;
  return n_img * values * static_cast<int64_t>(dtype_size(dtype)) * 3 / 2;
}

}  // namespace rematch::models
