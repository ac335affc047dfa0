#include "util/frame_arena.h"

#include <sanitizer/asan_interface.h>
#include <sys/mman.h>

#include <cstdint>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace exactly::broker {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kAlignment = 16;
// Under AddressSanitizer a chunk starts poisoned and each frame is unpoisoned
// as it is handed out, with a poisoned gap after it: a decoder that reads past
// its frame is caught as it would be on the heap.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kRedZone = 32;
#else
constexpr size_t kRedZone = 0;
#endif

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }
}  // namespace

// One anonymous mapping, aligned to a huge page so that the kernel can back
// all of it with huge pages.
class FrameArena::Chunk {
 public:
  explicit Chunk(size_t bytes) : size_(RoundUp(bytes, kHugePage)) {
    // Over-map by one huge page, then trim to an aligned range.
    size_t mapped = size_ + kHugePage;
    void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    auto start = reinterpret_cast<uintptr_t>(raw);
    uintptr_t aligned = RoundUp(start, kHugePage);
    if (aligned > start) munmap(raw, aligned - start);
    uintptr_t end = start + mapped;
    if (end > aligned + size_)
      munmap(reinterpret_cast<void*>(aligned + size_), end - aligned - size_);
    base_ = reinterpret_cast<char*>(aligned);
    // Advice only: without transparent huge pages this is an ordinary mapping.
    madvise(base_, size_, MADV_HUGEPAGE);
    ASAN_POISON_MEMORY_REGION(base_, size_);
  }
  ~Chunk() {
    ASAN_UNPOISON_MEMORY_REGION(base_, size_);
    munmap(base_, size_);
  }
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;

  char* base() const { return base_; }
  size_t size() const { return size_; }

 private:
  size_t size_;
  char* base_ = nullptr;
};

// Emptied chunks, mapped and faulted in, waiting to be cut into frames again.
class FrameArena::SparePool {
 public:
  explicit SparePool(size_t capacity) : capacity_(capacity) {}

  // Keeps `chunk` if there is room; otherwise it is unmapped (outside the
  // lock) as it goes out of scope.
  void Give(std::unique_ptr<Chunk> chunk) {
    // Whatever the frames held is stale; under ASan nothing may read it again
    // before it is handed out anew.
    ASAN_POISON_MEMORY_REGION(chunk->base(), chunk->size());
    std::lock_guard<std::mutex> lock(mu_);
    if (spares_.size() < capacity_) spares_.push_back(std::move(chunk));
  }

  std::unique_ptr<Chunk> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    if (spares_.empty()) return nullptr;
    std::unique_ptr<Chunk> chunk = std::move(spares_.back());
    spares_.pop_back();
    return chunk;
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Chunk>> spares_;
};

FrameArena::FrameArena(FrameArenaOptions options)
    : options_(options),
      spares_(std::make_shared<SparePool>(options.spare_chunks)) {}

std::shared_ptr<FrameArena::Chunk> FrameArena::NextChunk() {
  std::unique_ptr<Chunk> chunk = spares_->Take();
  if (chunk != nullptr) {
    ++chunks_reused_;
  } else {
    chunk = std::make_unique<Chunk>(options_.chunk_bytes);
    ++chunks_mapped_;
  }
  // The deleter runs where the chunk's last frame is released.
  std::weak_ptr<SparePool> pool = spares_;
  return std::shared_ptr<Chunk>(chunk.release(), [pool](Chunk* c) {
    std::unique_ptr<Chunk> owned(c);
    if (std::shared_ptr<SparePool> p = pool.lock()) p->Give(std::move(owned));
  });
}

SharedBuffer FrameArena::Allocate(size_t size) {
  if (size < options_.min_frame_bytes) return NewSharedBuffer(size);
  if (size > options_.chunk_bytes / 4) {
    auto own = std::make_shared<Chunk>(size + kRedZone);
    ++chunks_mapped_;
    ASAN_UNPOISON_MEMORY_REGION(own->base(), size);
    // Aliasing: the buffer points at the bytes and owns the mapping.
    return SharedBuffer(own, own->base());
  }
  if (current_ == nullptr || used_ + size + kRedZone > current_->size()) {
    // The old chunk lives on as long as frames cut from it do.
    current_ = NextChunk();
    used_ = 0;
  }
  char* frame = current_->base() + used_;
  ASAN_UNPOISON_MEMORY_REGION(frame, size);
  used_ = RoundUp(used_ + size + kRedZone, kAlignment);
  return SharedBuffer(current_, frame);
}

}  // namespace exactly::broker
