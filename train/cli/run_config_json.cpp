#include "train/cli/run_config_json.h"

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "tensor/json_depth.h"

namespace rematch::cli {
namespace {

std::string config_path(const std::string& run_dir) { return run_dir + "/config.json"; }

[[noreturn]] void wrong_type(const nlohmann::json& value, const std::string& run_dir, const char* key,
                             const char* expected) {
  std::string shown = value.dump();
  if (shown.size() > 60) shown = shown.substr(0, 60) + "...";
  REMATCH_FAIL("'", config_path(run_dir), "': \"", key, "\" is ", shown, ", not ", expected,
               " (rematch train writes it so: was the file edited by hand?)");
}

}  // namespace

nlohmann::json read_run_config_json(const std::string& run_dir) {
  const std::string path = config_path(run_dir);
  nlohmann::json j;
  const std::string text = io::read_text_file(path, "run config");
  io::require_shallow_json(text, "run config", path);
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    REMATCH_FAIL("run config '", path, "' is not valid JSON: ", e.what());
  }
  REMATCH_CHECK(j.is_object(), "run config '", path, "' is not a JSON object");
  return j;
}

std::string config_string(const nlohmann::json& config, const std::string& run_dir, const char* key,
                          const std::string& fallback) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_string()) wrong_type(*it, run_dir, key, "a string");
  return it->get<std::string>();
}

int64_t config_integer(const nlohmann::json& config, const std::string& run_dir, const char* key, int64_t fallback) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) wrong_type(*it, run_dir, key, "an integer");
  return it->get<int64_t>();
}

}  // namespace rematch::cli
