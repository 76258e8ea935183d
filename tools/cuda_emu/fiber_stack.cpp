// Fiber stacks and the context switch of the CUDA emulator (tools/cuda_emu/fiber_stack.h).
#include "tools/cuda_emu/fiber_stack.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// A new fiber's stack holds the frame cuda_emu_switch pops, whose return address is cuda_emu_fiber_start and
// whose r12 is the argument for cuda_emu_fiber_main.
asm(R"(
  .text
  .globl cuda_emu_switch
  .type cuda_emu_switch, @function
cuda_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size cuda_emu_switch, .-cuda_emu_switch

  .globl cuda_emu_fiber_start
  .type cuda_emu_fiber_start, @function
cuda_emu_fiber_start:
  movq %r12, %rdi
  call cuda_emu_fiber_main
  ud2
  .size cuda_emu_fiber_start, .-cuda_emu_fiber_start
  .section .note.GNU-stack,"",@progbits
  .text
)");


namespace cuda_emu {

namespace {
constexpr size_t kGuardBytes = 4096;
}  // namespace

Stack make_stack() {
  void* p = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "cuda emulator: cannot map a fiber stack (%zu bytes)\n", kStackBytes);
    std::abort();
  }
  mprotect(p, kGuardBytes, PROT_NONE);
  return Stack{static_cast<char*>(p) + kGuardBytes};
}

void* initial_frame(const Stack& stack, void* arg) {
  // Control words, r15..r12, rbx, rbp, return address; 16-byte aligned so that cuda_emu_fiber_start's call sees
  // the ABI's alignment.
  auto* top = reinterpret_cast<uint64_t*>(stack.low + kStackBytes);
  uint64_t* frame = top - 8;
  const uint32_t mxcsr = 0x1F80;
  const uint16_t fpucw = 0x037F;
  std::memcpy(frame, &mxcsr, 4);
  std::memcpy(reinterpret_cast<char*>(frame) + 4, &fpucw, 2);
  frame[1] = 0;                                  // r15
  frame[2] = 0;                                  // r14
  frame[3] = 0;                                  // r13
  frame[4] = reinterpret_cast<uint64_t>(arg);    // r12
  frame[5] = 0;                                  // rbx
  frame[6] = 0;                                  // rbp
  frame[7] = reinterpret_cast<uint64_t>(&cuda_emu_fiber_start);
  return frame;
}

}  // namespace cuda_emu
