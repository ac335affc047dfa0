// Memory for request frames whose bytes the log may keep (Produce batches point
// into the frame they arrived in). Fresh anonymous memory is faulted in one
// 4 KiB page at a time, and on a virtual machine those faults cost more than
// everything else the broker does with the bytes (measured here: 0.25 GB/s
// filling fresh 4 KiB pages against 3 GB/s with 2 MiB pages). So large frames
// are cut one after another from big chunks that ask for transparent huge
// pages. When the last frame cut from a chunk is released (retention, a deleted
// topic), the chunk is kept as a spare, its pages still faulted in, and the
// next chunk is that one: a broker whose log is bounded stops faulting
// altogether. Chunks beyond `spare_chunks` are unmapped. Small frames (most
// requests other than Produce) come from the heap, which recycles them warm.
// Used from the event-loop thread only; frames may be released on any thread.
#ifndef EXACTLY_BROKER_UTIL_FRAME_ARENA_H_
#define EXACTLY_BROKER_UTIL_FRAME_ARENA_H_

#include <cstddef>
#include <memory>

#include "util/shared_buffer.h"

namespace exactly::broker {

struct FrameArenaOptions {
  // Virtual size of one chunk. Only the 2 MiB pages a frame touches become
  // resident, so a chunk's unused tail costs address space, not memory.
  size_t chunk_bytes = size_t{16} << 20;
  // Frames below this come from the heap.
  size_t min_frame_bytes = 4096;
  // Emptied chunks kept mapped for reuse (resident memory the broker holds on
  // to: at most spare_chunks * chunk_bytes).
  size_t spare_chunks = 2;
};

class FrameArena {
 public:
  explicit FrameArena(FrameArenaOptions options = {});
  FrameArena(const FrameArena&) = delete;
  FrameArena& operator=(const FrameArena&) = delete;

  // `size` bytes, not zero-filled, 16-byte aligned. Frames larger than a
  // quarter of a chunk get a mapping of their own.
  SharedBuffer Allocate(size_t size);

  // Chunks (and own mappings) mapped so far, and chunks reused from the
  // spares; for tests.
  size_t chunks_mapped() const { return chunks_mapped_; }
  size_t chunks_reused() const { return chunks_reused_; }

 private:
  class Chunk;
  class SparePool;

  // A chunk for the next frames: a spare if there is one, else a new mapping.
  std::shared_ptr<Chunk> NextChunk();

  FrameArenaOptions options_;
  // Shared with the chunks' deleters, which run wherever the last frame of a
  // chunk is released, possibly after the arena is gone.
  std::shared_ptr<SparePool> spares_;
  std::shared_ptr<Chunk> current_;
  size_t used_ = 0;
  size_t chunks_mapped_ = 0;
  size_t chunks_reused_ = 0;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_UTIL_FRAME_ARENA_H_
