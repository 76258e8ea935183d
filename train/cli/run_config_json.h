// A run folder's config.json as the report pages read it (they need a few fields, not a whole TrainConfig): the
// file is read without blocking on a FIFO, must be a JSON object, and a field of the wrong type is an Error
// naming the file and the key instead of the JSON library's bare type error.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace rematch::cli {

// The object in <run_dir>/config.json; an Error naming the file when it is missing, not a regular file, not
// JSON or not an object.
nlohmann::json read_run_config_json(const std::string& run_dir);

// The string field `key`, or `fallback` when it is absent or null; any other type is an Error
// "'<run_dir>/config.json': \"<key>\" is 5, not a string (it names ...)".
std::string config_string(const nlohmann::json& config, const std::string& run_dir, const char* key,
                          const std::string& fallback = "");

// The integer field `key`, or `fallback` when absent or null; any other type is an Error as above.
int64_t config_integer(const nlohmann::json& config, const std::string& run_dir, const char* key, int64_t fallback);

}  // namespace rematch::cli
