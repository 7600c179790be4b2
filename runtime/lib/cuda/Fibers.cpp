//===- Fibers.cpp - cooperative fibers for the emulated CUDA device -------===//

#include "Fibers.h"

#include "embc/runtime/cuda/Device.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__) && !defined(EMBC_FIBERS_UCONTEXT)
#define EMBC_FIBERS_X86_64 1
#else
#include <ucontext.h>
#endif

using namespace embc::runtime::cuda;
using namespace embc::runtime::cuda::emu;

#if EMBC_FIBERS_X86_64
// embcFiberSwitch(save, to): saves the callee-saved state of the caller on
// its stack, stores the stack pointer in *save, switches to the stack `to`
// (saved by an earlier switch or built by FiberGroup::start) and restores
// its state. Everything caller-saved is dead across a call anyway, so this
// is the whole context of a fiber (SysV ABI: rbx, rbp, r12-r15, rsp, the
// MXCSR control bits and the x87 control word).
asm(R"(
  .text
  .p2align 4
  .globl embcFiberSwitch
  .hidden embcFiberSwitch
  .type embcFiberSwitch,@function
embcFiberSwitch:
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
  .size embcFiberSwitch, .-embcFiberSwitch
)");
extern "C" void embcFiberSwitch(void **save, void *to);

struct FiberGroup::Impl {
  std::vector<void *> sp; // saved stack pointer of each suspended fiber
  std::vector<char> done;
  void *scheduler = nullptr;
};
#else
struct FiberGroup::Impl {
  std::vector<ucontext_t> ctx;
  std::vector<char> done;
  ucontext_t scheduler;
};
#endif

namespace {
/// The group whose fiber is starting: fiberMain takes no arguments (neither
/// the assembly frame nor makecontext pass pointers portably).
thread_local FiberGroup *tStarting = nullptr;

size_t pageSize() {
  static const size_t page = size_t(sysconf(_SC_PAGESIZE));
  return page;
}
} // namespace

FiberGroup::FiberGroup(size_t stackBytes)
    : stackBytes_((stackBytes + pageSize() - 1) / pageSize() * pageSize()), guardBytes_(pageSize()),
      impl_(std::make_unique<Impl>()) {}

FiberGroup::~FiberGroup() {
  if (stacks_)
    munmap(stacks_, mappedBytes_);
}

void FiberGroup::reserve(int count) {
  if (count <= capacity_)
    return;
  if (stacks_)
    munmap(stacks_, mappedBytes_);
  stacks_ = nullptr;
  capacity_ = 0;
  const size_t slot = guardBytes_ + stackBytes_;
  const size_t bytes = slot * size_t(count);
  // MAP_NORESERVE: a fiber touches a few pages of its stack; the rest is
  // address space only.
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw DeviceError("emulated device: cannot map " + std::to_string(count) + " fiber stacks of " +
                      std::to_string(stackBytes_) + " bytes: " + std::strerror(errno));
  stacks_ = static_cast<std::byte *>(p);
  mappedBytes_ = bytes;
  for (int i = 0; i < count; ++i)
    if (mprotect(stacks_ + slot * size_t(i), guardBytes_, PROT_NONE) != 0)
      throw DeviceError(std::string("emulated device: cannot protect a fiber stack guard page: ") +
                        std::strerror(errno));
  capacity_ = count;
}

void FiberGroup::start(int count, Entry entry, void *arg) {
  reserve(count);
  count_ = count;
  entry_ = entry;
  arg_ = arg;
  current_ = -1;
  Impl &impl = *impl_;
  impl.done.assign(size_t(count), 0);
  const size_t slot = guardBytes_ + stackBytes_;
#if EMBC_FIBERS_X86_64
  // The frame embcFiberSwitch pops, built so that its `ret` enters
  // fiberMain with the stack aligned as after a call (rsp = 8 mod 16).
  uint32_t controls[2] = {0, 0};
  asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(controls[0]), "=m"(controls[1]));
  impl.sp.resize(size_t(count));
  for (int i = 0; i < count; ++i) {
    auto *top = reinterpret_cast<uintptr_t *>(stacks_ + slot * size_t(i) + slot);
    uintptr_t *ret = top - 2; // 16-byte aligned: the return address slot
    ret[0] = reinterpret_cast<uintptr_t>(&FiberGroup::fiberMain);
    ret[-1] = 0;                                         // rbp
    ret[-2] = ret[-3] = ret[-4] = ret[-5] = ret[-6] = 0; // rbx r12 r13 r14 r15
    std::memcpy(&ret[-7], controls, sizeof controls);    // MXCSR, x87 control word
    impl.sp[size_t(i)] = &ret[-7];
  }
#else
  impl.ctx.resize(size_t(count));
  for (int i = 0; i < count; ++i) {
    ucontext_t &c = impl.ctx[size_t(i)];
    if (getcontext(&c) != 0)
      throw DeviceError(std::string("emulated device: getcontext failed: ") + std::strerror(errno));
    c.uc_stack.ss_sp = stacks_ + slot * size_t(i) + guardBytes_;
    c.uc_stack.ss_size = stackBytes_;
    c.uc_link = nullptr; // fiberMain never returns
    makecontext(&c, &FiberGroup::fiberMain, 0);
  }
#endif
}

bool FiberGroup::resume(int i) {
  Impl &impl = *impl_;
  current_ = i;
  tStarting = this;
#if EMBC_FIBERS_X86_64
  embcFiberSwitch(&impl.scheduler, impl.sp[size_t(i)]);
#else
  swapcontext(&impl.scheduler, &impl.ctx[size_t(i)]);
#endif
  current_ = -1;
  return impl.done[size_t(i)] != 0;
}

void FiberGroup::yield() {
  Impl &impl = *impl_;
  const size_t i = size_t(current_);
#if EMBC_FIBERS_X86_64
  embcFiberSwitch(&impl.sp[i], impl.scheduler);
#else
  swapcontext(&impl.ctx[i], &impl.scheduler);
#endif
}

void FiberGroup::fiberMain() {
  FiberGroup *group = tStarting;
  group->entry_(group->arg_, group->current_);
  // Done: hand control back for good; this stack is reused by the next start().
  Impl &impl = *group->impl_;
  const size_t i = size_t(group->current_);
  impl.done[i] = 1;
#if EMBC_FIBERS_X86_64
  embcFiberSwitch(&impl.sp[i], impl.scheduler);
#else
  swapcontext(&impl.ctx[i], &impl.scheduler);
#endif
  __builtin_unreachable();
}
