// What every fuzz target shares: the fuzz input as files in a private temporary folder (the readers take
// paths), an input split into several files, and the one rule every target checks — a reader given any bytes
// either succeeds or throws rematch::Error whose message names the file it read. Anything else (another
// exception type, a message that does not say which file, and of course a crash or a sanitizer report) stops
// the fuzzer with the input that did it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rematch::fuzz {

// This process's temporary folder (created on first use, removed at exit).
const std::string& temp_dir();

// Writes `bytes` to temp_dir()/name, replacing what an earlier input left there, and returns the path.
std::string write_file(const std::string& name, std::string_view bytes);

// Creates the folder temp_dir()/name (and its parents) when missing and returns its path.
std::string make_folder(const std::string& name);

// Removes temp_dir()/name if it is there (a part of a multi-file input that this input does not have).
void remove_file(const std::string& name);

// The input as one string.
std::string_view bytes(const uint8_t* data, size_t size);

// Splits a multi-file input at each kFileSeparator line: part i becomes file i. The separator is a text line so
// that mutations which insert or drop bytes keep the other parts intact, and corpora stay readable with `less`.
constexpr std::string_view kFileSeparator = "\n--rematch-fuzz-next-file--\n";
std::vector<std::string_view> split_files(std::string_view input);

// Writes part i of a split input to temp_dir()/names[i], and removes the named files it has no part for.
void write_parts(const std::vector<std::string_view>& parts, const std::vector<std::string>& names);

// Runs `read`. Returns true when it returned normally, false when it threw a rematch::Error whose message holds
// `must_name` (a path, usually). Any other exception, or an Error that does not name it, aborts with the message.
bool reads_or_names(const std::string& must_name, const std::function<void()>& read);

// Aborts with `what` (an invariant of a successful read that does not hold).
[[noreturn]] void fail(const std::string& what);

}  // namespace rematch::fuzz
