// Memory for request frames whose bytes the log may keep (Produce batches point
// into the frame they arrived in). Fresh anonymous memory is faulted in one
// 4 KiB page at a time, and on a virtual machine those faults cost more than
// everything else the broker does with the bytes (measured here: 0.25 GB/s
// filling fresh 4 KiB pages against 3 GB/s with 2 MiB pages; measured again
// on 2026-12-06, the opposite, 2.6-2.8 GB/s against 0.37-0.96 GB/s, on a host
// that takes back free 2 MiB blocks: README, "Against Apache Kafka"). So large
// frames are cut one after another from big chunks, on 4 KiB pages by default
// (never far behind) or, when asked, on transparent huge pages (much faster on
// some machines, much slower on others). When the last frame cut from a chunk
// is released (retention, a deleted topic), the chunk is kept as a spare, its
// pages still faulted in, and the next chunk is that one: a broker whose log
// is bounded stops faulting altogether. Chunks beyond `spare_chunks` are
// unmapped. Small frames (most requests other than Produce) come from the
// heap, which recycles them warm.
//
// Memory is bounded by what the log keeps, whatever the requests. A batch the
// log keeps in place pins its whole chunk, so the arena counts the bytes kept
// in each chunk (Keep), and a chunk that keeps less than half its size is
// emptied: PlanEvacuation names such chunks once their waste together passes a
// limit, and the log copies its batches out of them. A batch kept from a small
// heap frame is copied at once, so that a frame's unused bytes are never
// pinned. The frames of the common case, full of the batches they carry, stay
// where they arrived. See docs/architecture.md, "Where frames live".
//
// Used from the event-loop thread only; frames and kept batches may be released
// on any thread.
#ifndef EXACTLY_BROKER_UTIL_FRAME_ARENA_H_
#define EXACTLY_BROKER_UTIL_FRAME_ARENA_H_

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "util/shared_buffer.h"

namespace exactly::broker {

struct FrameArenaOptions {
  // Virtual size of one chunk. Only the 2 MiB pages a frame touches become
  // resident, so a chunk's unused tail costs address space, not memory.
  size_t chunk_bytes = size_t{16} << 20;
  // Frames below this come from the heap.
  size_t min_frame_bytes = 4096;
  // Whether chunks ask for transparent huge pages (MADV_HUGEPAGE) or keep
  // 4 KiB pages (MADV_NOHUGEPAGE). Which faults in faster depends on the
  // machine (the comment at the top); 4 KiB pages are never far behind, where
  // huge pages were 3-7 times slower on a VM whose host takes back free
  // 2 MiB blocks.
  bool huge_pages = false;
  // Emptied chunks kept mapped for reuse (resident memory the broker holds on
  // to: at most spare_chunks * chunk_bytes).
  size_t spare_chunks = 1;
  // Chunks that keep less than half their size are emptied once together they
  // waste more than this (size - 2 * kept, summed). SIZE_MAX never empties
  // one (the behaviour before memory was bounded; for benchmarks).
  size_t max_waste_bytes = size_t{8} << 20;
};

// Where a kept batch's bytes are and what keeps them alive.
struct KeptBytes {
  SharedBuffer owner;
  char* data = nullptr;
};

// Memory mapped for frames, in bytes.
struct FrameMemory {
  size_t mapped = 0;  // chunks and own mappings, spares included
  size_t kept = 0;    // batches the log keeps in place inside them
};

// The chunks an evacuation empties: the log copies out every batch it keeps
// inside one of them.
class FrameEvacuation {
 public:
  bool empty() const { return ranges_.empty(); }
  size_t chunks() const { return ranges_.size(); }
  bool Contains(const char* p) const;

 private:
  friend class FrameArena;
  std::vector<std::pair<const char*, const char*>>
      ranges_;  // sorted [begin, end)
};

class FrameArena {
 public:
  explicit FrameArena(FrameArenaOptions options = {});
  FrameArena(const FrameArena&) = delete;
  FrameArena& operator=(const FrameArena&) = delete;
  ~FrameArena();

  // `size` bytes, not zero-filled, 16-byte aligned. Frames larger than a
  // quarter of a chunk get a mapping of their own.
  SharedBuffer Allocate(size_t size);

  // The log keeps [data, data + size), which lies in `frame`: in place and
  // counted against its chunk when the frame was cut from one (and the chunk
  // is not being emptied), otherwise as a copy of its own.
  KeptBytes Keep(const SharedBuffer& frame, char* data, size_t size);

  // The chunks (the one being cut excepted) that keep less than half their
  // size, when together they waste more than options.max_waste_bytes; empty
  // otherwise. Each chunk is named once: what is kept in it afterwards is
  // copied.
  FrameEvacuation PlanEvacuation();

  FrameMemory memory() const;

  // Chunks (and own mappings) mapped so far, chunks reused from the spares,
  // and chunks named for evacuation; for tests.
  size_t chunks_mapped() const { return chunks_mapped_; }
  size_t chunks_reused() const { return chunks_reused_; }
  size_t chunks_evacuated() const { return chunks_evacuated_; }

 private:
  class Chunk;
  class Registry;
  class KeptInChunk;

  // A chunk for the next frames: a spare if there is one, else a new mapping.
  std::shared_ptr<Chunk> NextChunk();

  FrameArenaOptions options_;
  // Shared with the chunks' deleters and the kept batches, which may be
  // released on any thread, possibly after the arena is gone.
  std::shared_ptr<Registry> registry_;
  std::shared_ptr<Chunk> current_;
  size_t used_ = 0;
  size_t chunks_mapped_ = 0;
  size_t chunks_reused_ = 0;
  size_t chunks_evacuated_ = 0;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_UTIL_FRAME_ARENA_H_
