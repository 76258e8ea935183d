// The folder one training run writes (`--run_dir DIR`, by default runs/<method>-<timestamp>):
//   config.json                      the run's settings (write_config, atomic)
//   metrics.jsonl                    one JSON object per line, appended as the run goes (MetricsLog)
//   checkpoint_latest.safetensors    the newest checkpoint (written by the checkpoint code; paths only here)
//   checkpoint_best.safetensors      the checkpoint with the best validation score
//   plots/                           PNG plots
//   results.md                       the final table (write_results, atomic)
//   run.lock                         locked (flock) by the process writing the run; says which process it is
// A folder holds a run once it has config.json. A fresh start refuses such a folder, so a typo cannot wipe
// out a finished run: the user says --resume (continue it; config.json must be there) or --overwrite (delete
// the earlier run's files, then start fresh). What counts as a run's files, and as a run folder, is said in
// run_folder_contents.h: --overwrite deletes only in a rematch run folder holding nothing else (and never in
// the root, home or current folder), and deletes everything a run and its report wrote there (splits/,
// report/, the noise record too), so a new run never shows an older run's files as its own. A fresh start
// refuses a folder without config.json that holds files a run would write over (results.md, metrics.jsonl...).
// One writer: a RunFolder holds an exclusive flock on run.lock from before it changes anything until it is
// destroyed; the kernel releases it when the process ends however it ends, so a killed run never leaves a
// stale lock. A second RunFolder on the same folder, in this process or another, is refused at once with the
// holder's pid and command line. Readers (eval, --dry_run) take no lock.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

namespace rematch::run {

enum class RunStart {
  Fresh,      // the folder must not hold a run
  Resume,     // the folder must hold a run; its files are kept
  Overwrite,  // an earlier run's files are deleted first (a folder holding other files is refused)
  Follower,   // another process writes the folder (rank 0 of an mpirun, docs/distributed.md §4): this one only
              // reads it; nothing is created, locked or deleted
};

// "runs/<method>-YYYYmmdd-HHMMSS" in the local time of `when`; method must be non-empty and hold no '/'.
std::string default_run_dir(const std::string& method, std::time_t when);

class RunFolder {
 public:
  // Creates `dir` (parents too) and dir/plots, applying `start` as above (a resume creates nothing when the
  // folder holds no run). Errors name the folder, e.g.
  // "run folder 'runs/x': already holds a run (runs/x/config.json); pass --resume to continue it or
  // --overwrite to replace it". A folder or file that cannot be created or deleted is an io::WriteError
  // (tensor/file_io.h), which for a fresh or overwritten run ends with the advice to pick another --run_dir.
  // Then, holding the lock, it deletes the temporary files (*.tmp.<pid>.<n>, tensor/file_io.h) that
  // processes no longer alive left in the folder and in plots/ (a kill inside an atomic write); a live
  // process's are left alone. removed_temporaries() lists them.
  RunFolder(std::string dir, RunStart start);
  ~RunFolder();
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

  const std::string& dir() const { return dir_; }
  std::string config_path() const;
  std::string metrics_path() const;
  std::string checkpoint_latest_path() const;
  std::string checkpoint_best_path() const;
  std::string plots_dir() const;
  std::string plot_path(const std::string& file_name) const;  // plots/<file_name>
  std::string results_path() const;
  std::string lock_path() const;
  const std::vector<std::string>& removed_temporaries() const { return removed_temporaries_; }

  // Writes config.json atomically; the text must parse as one JSON object (the error says where it does
  // not). A trailing newline is added when missing. A failed write is an io::WriteError, as above.
  void write_config(const std::string& json_text) const;
  // The text of config.json.
  std::string read_config() const;
  // Writes results.md atomically.
  void write_results(const std::string& markdown) const;

 private:
  std::string file(const std::string& name) const;
  std::string refusal(RunStart start) const;
  void lock(RunStart start);
  std::string dir_;
  int lock_fd_ = -1;
  std::vector<std::string> removed_temporaries_;
};

// The temporary files of atomic writes (<name>.tmp.<pid>.<n>) directly in `folder` whose process is no longer
// alive, deleted; returns their paths. Files of live processes, and any other file, are kept.
std::vector<std::string> remove_dead_temporaries(const std::string& folder);

// One line of metrics.jsonl: {"epoch":3,"step":120,"kind":"train","loss":0.4312,"lr":0.0002}. `values` keep
// their order; a non-finite value is written as null and reads back as NaN.
struct MetricRecord {
  int64_t epoch = 0;
  int64_t step = 0;
  std::string kind;  // what the line is: "train", "epoch", "eval", ...
  std::vector<std::pair<std::string, double>> values;

  bool has(const std::string& name) const;
  double get(const std::string& name) const;  // error when absent, listing the names there are
};

// Appends records to a metrics.jsonl file, one JSON object per line, each line handed to the kernel with
// one write(2) as it is appended (no user-space buffering), so a crash loses at most the line being written.
// Opening a file whose last line lacks its newline (a crash mid-write) drops that torn line first.
// Resume rule (truncate_after): a run that continues from a checkpoint taken at (epoch, step) keeps the
// lines up to the first record whose (epoch, step) is lexicographically past it and drops that record and
// every one after it, so the steps the resumed run repeats are not logged twice. Records written just
// before a checkpoint therefore carry the (epoch, step) the checkpoint is saved with.
class MetricsLog {
 public:
  // Opens (creating it when missing) `path` for appending; failure is an io::WriteError.
  explicit MetricsLog(std::string path);
  ~MetricsLog();
  MetricsLog(MetricsLog&& other) noexcept;
  MetricsLog& operator=(MetricsLog&& other) noexcept;
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  const std::string& path() const { return path_; }

  // Appends one line. Value names must be unique and none of "epoch", "step", "kind". A failed write (a full
  // disk) is an io::WriteError naming the file, and the part of the line already written is cut off again,
  // so the file never ends in half a line that a later append would glue to the next one.
  void append(const MetricRecord& record);
  // Applies the resume rule above (rewriting the file atomically); returns how many records were dropped.
  int64_t truncate_after(int64_t epoch, int64_t step);
  // Every record in the file, in order.
  std::vector<MetricRecord> records() const;

 private:
  void open_for_append();
  void close() noexcept;

  std::string path_;
  int fd_ = -1;
};

// Every record of a metrics.jsonl file, in order. A last line without its newline (torn by a crash) is
// ignored; any other line that is not a record is an error naming the file and the line number.
std::vector<MetricRecord> read_metrics(const std::string& path);

}  // namespace rematch::run
