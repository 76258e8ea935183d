// Fiber stacks and the context switch of the CUDA emulator (x86-64 System V), for launch.cpp: each CUDA thread
// runs on a stack of its own, entered and left with cuda_emu_switch.
#pragma once

#include <cstddef>

// cuda_emu_switch(save, load): pushes the callee-saved registers and the SSE/x87 control words on the current
// stack, stores the stack pointer in *save, loads `load` and pops the same frame from there.
extern "C" void cuda_emu_switch(void** save, void* load);
// Where a new fiber starts: calls cuda_emu_fiber_main (launch.cpp) with the argument initial_frame was given.
extern "C" void cuda_emu_fiber_start();
extern "C" void cuda_emu_fiber_main(void* fiber);

namespace cuda_emu {

constexpr size_t kStackBytes = 256 * 1024;

struct Stack {
  char* low = nullptr;  // lowest usable byte, above a guard page
};

// A new stack of kStackBytes with a guard page below it (an overflow faults instead of writing past it).
Stack make_stack();
// The stack pointer to give cuda_emu_switch to start a fiber on `stack` that calls cuda_emu_fiber_main(arg).
void* initial_frame(const Stack& stack, void* arg);

}  // namespace cuda_emu
