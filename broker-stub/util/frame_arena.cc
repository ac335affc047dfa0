#include "util/frame_arena.h"

#include <sanitizer/asan_interface.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
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
  Chunk(size_t bytes, bool huge_pages) : size_(RoundUp(bytes, kHugePage)) {
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
    // NOHUGEPAGE keeps 4 KiB pages even where THP is "always".
    madvise(base_, size_, huge_pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
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

  // Guarded by the registry's lock.
  size_t kept = 0;         // bytes the log keeps in place in this chunk
  bool evacuated = false;  // named by PlanEvacuation: keep nothing more here

 private:
  size_t size_;
  char* base_ = nullptr;
};

// Every chunk mapped: those frames or kept batches live in (by address, so that
// Keep can tell which chunk a frame was cut from) and the spares. Shared with
// deleters that run on any thread, hence the lock.
class FrameArena::Registry {
 public:
  explicit Registry(size_t spare_capacity) : spare_capacity_(spare_capacity) {}

  std::mutex mu;
  std::map<const char*, Chunk*> live;  // by base
  size_t mapped = 0;                   // bytes, live and spare
  size_t kept = 0;                     // bytes kept in live chunks

  // A new mapping of at least `bytes`.
  std::unique_ptr<Chunk> Map(size_t bytes, bool huge_pages) {
    auto chunk = std::make_unique<Chunk>(bytes, huge_pages);
    std::lock_guard<std::mutex> lock(mu);
    mapped += chunk->size();
    return chunk;
  }

  std::unique_ptr<Chunk> TakeSpare() {
    std::lock_guard<std::mutex> lock(mu);
    if (spares_.empty()) return nullptr;
    std::unique_ptr<Chunk> chunk = std::move(spares_.back());
    spares_.pop_back();
    return chunk;
  }

  // Called where a chunk's last frame and kept batch are released: it is no
  // longer live; it becomes a spare if `reuse` and there is room, else it is
  // unmapped (outside the lock).
  void Release(std::unique_ptr<Chunk> chunk, bool reuse) {
    // Whatever the frames held is stale; under ASan nothing may read it again
    // before it is handed out anew.
    ASAN_POISON_MEMORY_REGION(chunk->base(), chunk->size());
    std::lock_guard<std::mutex> lock(mu);
    live.erase(chunk->base());
    chunk->evacuated = false;
    if (reuse && spares_.size() < spare_capacity_) {
      spares_.push_back(std::move(chunk));
    } else {
      mapped -= chunk->size();
    }
  }

  // Shares `chunk`: the deleter releases it where its last user lets go.
  static std::shared_ptr<Chunk> Share(std::shared_ptr<Registry> registry,
                                      std::unique_ptr<Chunk> chunk,
                                      bool reuse) {
    {
      std::lock_guard<std::mutex> lock(registry->mu);
      registry->live[chunk->base()] = chunk.get();
    }
    return std::shared_ptr<Chunk>(
        chunk.release(), [registry = std::move(registry), reuse](Chunk* c) {
          registry->Release(std::unique_ptr<Chunk>(c), reuse);
        });
  }

 private:
  const size_t spare_capacity_;
  std::vector<std::unique_ptr<Chunk>> spares_;
};

// What keeps a batch kept in place alive: its frame (and so its chunk), and
// the count of bytes kept in the chunk until the log lets go.
class FrameArena::KeptInChunk {
 public:
  KeptInChunk(SharedBuffer frame, Chunk* chunk, size_t size,
              std::shared_ptr<Registry> registry)
      : frame_(std::move(frame)),
        chunk_(chunk),
        size_(size),
        registry_(std::move(registry)) {}
  ~KeptInChunk() {
    std::lock_guard<std::mutex> lock(registry_->mu);
    chunk_->kept -= size_;
    registry_->kept -= size_;
  }
  KeptInChunk(const KeptInChunk&) = delete;
  KeptInChunk& operator=(const KeptInChunk&) = delete;

 private:
  SharedBuffer frame_;
  Chunk* chunk_;  // alive as long as frame_ is
  size_t size_;
  std::shared_ptr<Registry> registry_;
};

bool FrameEvacuation::Contains(const char* p) const {
  auto it = std::upper_bound(
      ranges_.begin(), ranges_.end(), p,
      [](const char* q, const auto& range) { return q < range.first; });
  return it != ranges_.begin() && p < std::prev(it)->second;
}

FrameArena::FrameArena(FrameArenaOptions options)
    : options_(options),
      registry_(std::make_shared<Registry>(options.spare_chunks)) {}

FrameArena::~FrameArena() = default;

std::shared_ptr<FrameArena::Chunk> FrameArena::NextChunk() {
  std::unique_ptr<Chunk> chunk = registry_->TakeSpare();
  if (chunk != nullptr) {
    ++chunks_reused_;
  } else {
    chunk = registry_->Map(options_.chunk_bytes, options_.huge_pages);
    ++chunks_mapped_;
  }
  return Registry::Share(registry_, std::move(chunk), /*reuse=*/true);
}

SharedBuffer FrameArena::Allocate(size_t size) {
  if (size < options_.min_frame_bytes) return NewSharedBuffer(size);
  if (size > options_.chunk_bytes / 4) {
    std::shared_ptr<Chunk> own = Registry::Share(
        registry_, registry_->Map(size + kRedZone, options_.huge_pages),
        /*reuse=*/false);
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

KeptBytes FrameArena::Keep(const SharedBuffer& frame, char* data, size_t size) {
  Chunk* chunk = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry_->mu);
    auto it = registry_->live.upper_bound(data);
    if (it != registry_->live.begin()) {
      Chunk* c = std::prev(it)->second;
      if (data < c->base() + c->size() && !c->evacuated) chunk = c;
    }
    if (chunk != nullptr) {
      chunk->kept += size;
      registry_->kept += size;
    }
  }
  if (chunk == nullptr) {
    SharedBuffer copy = CopyToSharedBuffer({data, size});
    char* bytes = copy.get();
    return {std::move(copy), bytes};
  }
  auto holder = std::make_shared<KeptInChunk>(frame, chunk, size, registry_);
  return {SharedBuffer(std::move(holder), data), data};
}

FrameEvacuation FrameArena::PlanEvacuation() {
  FrameEvacuation plan;
  if (options_.max_waste_bytes == SIZE_MAX) return plan;
  std::lock_guard<std::mutex> lock(registry_->mu);
  size_t waste = 0;
  std::vector<Chunk*> sparse;
  for (const auto& [base, chunk] : registry_->live) {
    if (chunk == current_.get() || chunk->evacuated) continue;
    if (2 * chunk->kept < chunk->size()) {
      waste += chunk->size() - 2 * chunk->kept;
      sparse.push_back(chunk);
    }
  }
  if (waste <= options_.max_waste_bytes) return plan;
  for (Chunk* chunk : sparse) {  // in address order, as the map is
    chunk->evacuated = true;
    plan.ranges_.emplace_back(chunk->base(), chunk->base() + chunk->size());
  }
  chunks_evacuated_ += sparse.size();
  return plan;
}

FrameMemory FrameArena::memory() const {
  std::lock_guard<std::mutex> lock(registry_->mu);
  return {.mapped = registry_->mapped, .kept = registry_->kept};
}

}  // namespace exactly::broker
