// Switches of the autograd recorder: whether ops record a graph (NoGradGuard turns it off for a scope,
// GradModeGuard sets it either way), and anomaly mode, which checks every op's output (and every backward
// gradient) for NaN/Inf and names the op.
#pragma once

namespace rematch {

bool grad_enabled();
void set_grad_enabled(bool on);
bool anomaly_mode();
void set_anomaly_mode(bool on);
// True while the engine runs a node's backward; anomaly mode then checks gradients per node instead of
// every intermediate op, so the error names the node whose backward failed.
bool in_backward();
void set_in_backward(bool on);

class GradModeGuard {
 public:
  explicit GradModeGuard(bool on) : prev_(grad_enabled()) { set_grad_enabled(on); }
  ~GradModeGuard() { set_grad_enabled(prev_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

class NoGradGuard : public GradModeGuard {
 public:
  NoGradGuard() : GradModeGuard(false) {}
};

class AnomalyModeGuard {
 public:
  explicit AnomalyModeGuard(bool on = true) : prev_(anomaly_mode()) { set_anomaly_mode(on); }
  ~AnomalyModeGuard() { set_anomaly_mode(prev_); }
  AnomalyModeGuard(const AnomalyModeGuard&) = delete;
  AnomalyModeGuard& operator=(const AnomalyModeGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace rematch
