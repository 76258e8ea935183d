#include "autograd/grad_mode.h"

#include <atomic>

namespace rematch {

namespace {
thread_local bool g_grad_enabled = true;
thread_local bool g_in_backward = false;
std::atomic<bool> g_anomaly{false};
}  // namespace

bool grad_enabled() { return g_grad_enabled; }
void set_grad_enabled(bool on) { g_grad_enabled = on; }
bool anomaly_mode() { return g_anomaly.load(std::memory_order_relaxed); }
void set_anomaly_mode(bool on) { g_anomaly.store(on, std::memory_order_relaxed); }
bool in_backward() { return g_in_backward; }
void set_in_backward(bool on) { g_in_backward = on; }

}  // namespace rematch
