#include "models/sgraf_config.h"

#include <nlohmann/json.hpp>

#include "tensor/json_depth.h"

namespace rematch::models {
namespace {

using Json = nlohmann::json;

int64_t int_field(const Json& j, const char* key, int64_t fallback, bool required) {
  if (!j.contains(key)) {
    REMATCH_CHECK(!required, "SGRAF model config: the field '", key, "' is required: ", j.dump());
    return fallback;
  }
  REMATCH_CHECK(j[key].is_number_integer(), "SGRAF model config: '", key, "' must be an integer, got ", j[key].dump());
  return j[key].get<int64_t>();
}

}  // namespace

const char* module_name(SimilarityModule m) { return m == SimilarityModule::SGR ? "SGR" : "SAF"; }

SimilarityModule parse_module_name(const std::string& name) {
  if (name == "SGR") return SimilarityModule::SGR;
  if (name == "SAF") return SimilarityModule::SAF;
  REMATCH_FAIL("module_name must be SGR or SAF, got '", name, "'");
}

void validate(const SgrafConfig& c) {
  const std::pair<const char*, int64_t> sizes[] = {{"vocab_size", c.vocab_size}, {"img_dim", c.img_dim},
                                                   {"word_dim", c.word_dim},     {"embed_size", c.embed_size},
                                                   {"sim_dim", c.sim_dim},       {"num_regions", c.num_regions},
                                                   {"sgr_step", c.sgr_step}};
  for (const auto& [name, value] : sizes)
    REMATCH_CHECK(value > 0, "SGRAF model config: ", name, " must be positive, got ", value);
  REMATCH_CHECK(c.dropout >= 0 && c.dropout < 1, "SGRAF model config: dropout must be in [0, 1), got ", c.dropout);
  // One graph-reasoning layer per step, built before anything else runs: a step count in the millions built
  // layers until memory ran out, deaf to SIGTERM.
  REMATCH_CHECK(c.sgr_step <= kMaxSgrStep, "SGRAF model config: sgr_step must be at most ", kMaxSgrStep,
                " (the SGR papers use 3), got ", c.sgr_step);
}

double state_dict_size(const SgrafConfig& c) {
  const double V = c.vocab_size, I = c.img_dim, W = c.word_dim, d = c.embed_size, m = c.sim_dim,
               R = c.num_regions;
  const auto linear = [](double in, double out) { return in * out + out; };
  const auto batch_norm = [](double channels) { return 4 * channels + 1; };  // weight, bias, running mean and var, count
  const double image = linear(I, d);
  const double text = V * W + 2 * (3 * d * W + 3 * d * d + 6 * d);  // embedding, Bi-GRU (two directions)
  const double visual_sa = linear(d, d) + batch_norm(R) + linear(d, d) + batch_norm(d) + linear(d, 1);
  const double text_sa = 2 * linear(d, d) + linear(d, 1);
  const double similarity = 2 * linear(d, m) + linear(m, 1);
  const double module = c.module == SimilarityModule::SGR ? static_cast<double>(c.sgr_step) * 3 * linear(m, m)
                                                          : linear(m, 1) + batch_norm(1);
  return image + text + visual_sa + text_sa + similarity + module;
}

std::string to_json(const SgrafConfig& c) {
  Json j = {{"model", "sgraf"},           {"module_name", module_name(c.module)},
            {"vocab_size", c.vocab_size}, {"img_dim", c.img_dim},
            {"word_dim", c.word_dim},     {"embed_size", c.embed_size},
            {"sim_dim", c.sim_dim},       {"num_regions", c.num_regions},
            {"sgr_step", c.sgr_step},     {"dropout", c.dropout}};
  return j.dump();
}

SgrafConfig sgraf_config_from_json(const std::string& text) {
  Json j;
  io::require_shallow_json(text, "SGRAF model config");
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    REMATCH_FAIL("SGRAF model config is not valid JSON: ", e.what());
  }
  REMATCH_CHECK(j.is_object(), "SGRAF model config must be a JSON object, got ", j.dump());
  if (j.contains("model"))
    REMATCH_CHECK(j["model"] == "sgraf", "model config describes a '", j["model"].dump(),
                  "' model, not an SGRAF one (SGR/SAF)");
  SgrafConfig c;
  if (j.contains("module_name")) {
    REMATCH_CHECK(j["module_name"].is_string(), "SGRAF model config: module_name must be a string");
    c.module = parse_module_name(j["module_name"].get<std::string>());
  }
  c.vocab_size = int_field(j, "vocab_size", 0, true);
  c.img_dim = int_field(j, "img_dim", c.img_dim, false);
  c.word_dim = int_field(j, "word_dim", c.word_dim, false);
  c.embed_size = int_field(j, "embed_size", c.embed_size, false);
  c.sim_dim = int_field(j, "sim_dim", c.sim_dim, false);
  c.num_regions = int_field(j, "num_regions", c.num_regions, false);
  c.sgr_step = int_field(j, "sgr_step", c.sgr_step, false);
  if (j.contains("dropout")) {
    REMATCH_CHECK(j["dropout"].is_number(), "SGRAF model config: dropout must be a number");
    c.dropout = j["dropout"].get<double>();
  }
  validate(c);
  return c;
}

std::string describe(const SgrafConfig& c) {
  return detail::concat(module_name(c.module), " (V=", c.vocab_size, ", img_dim=", c.img_dim, ", word_dim=", c.word_dim,
                        ", embed=", c.embed_size, ", sim_dim=", c.sim_dim, ", R=", c.num_regions,
                        c.module == SimilarityModule::SGR ? ", steps=" : "",
                        c.module == SimilarityModule::SGR ? std::to_string(c.sgr_step) : "", ")");
}

}  // namespace rematch::models
