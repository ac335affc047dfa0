#include "util/frame_arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace exactly::broker {
namespace {

FrameArenaOptions SmallChunks() {
  FrameArenaOptions options;
  options.chunk_bytes = size_t{4} << 20;
  options.min_frame_bytes = 1024;
  return options;
}

TEST(FrameArenaTest, SmallFramesComeFromTheHeap) {
  FrameArena arena(SmallChunks());
  SharedBuffer b = arena.Allocate(100);
  ASSERT_NE(b, nullptr);
  std::memset(b.get(), 1, 100);
  EXPECT_EQ(arena.chunks_mapped(), 0u);
}

TEST(FrameArenaTest, FramesDoNotOverlapAndAreAligned) {
  FrameArena arena(SmallChunks());
  std::vector<std::pair<SharedBuffer, size_t>> frames;
  // Sizes that do not divide the chunk, so that chunks fill and roll over.
  for (int i = 0; i < 200; ++i) {
    size_t size = 1024 + static_cast<size_t>(i) * 997 % 60000;
    SharedBuffer b = arena.Allocate(size);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.get()) % 16, 0u);
    std::memset(b.get(), i & 0xff, size);
    frames.emplace_back(std::move(b), size);
  }
  EXPECT_GT(arena.chunks_mapped(), 1u);
  for (size_t i = 0; i < frames.size(); ++i) {
    const auto& [b, size] = frames[i];
    for (size_t k = 0; k < size; k += 97)
      ASSERT_EQ(static_cast<unsigned char>(b[k]), i & 0xff) << "frame " << i;
    ASSERT_EQ(static_cast<unsigned char>(b[size - 1]), i & 0xff);
  }
}

TEST(FrameArenaTest, LargeFrameGetsItsOwnMapping) {
  FrameArena arena(SmallChunks());
  size_t big = (size_t{4} << 20) / 4 + 1;
  SharedBuffer b = arena.Allocate(big);
  ASSERT_NE(b, nullptr);
  std::memset(b.get(), 7, big);
  EXPECT_EQ(arena.chunks_mapped(), 1u);
  SharedBuffer c = arena.Allocate(2048);
  std::memset(c.get(), 8, 2048);
  EXPECT_EQ(arena.chunks_mapped(), 2u);
  EXPECT_EQ(b[big - 1], 7);
}

TEST(FrameArenaTest, FramesOutliveTheArenaAndEachOther) {
  SharedBuffer kept;
  {
    FrameArena arena(SmallChunks());
    SharedBuffer dropped = arena.Allocate(4096);
    kept = arena.Allocate(4096);
    std::memset(kept.get(), 3, 4096);
    dropped.reset();
  }
  // The chunk stays mapped for as long as a frame cut from it lives.
  EXPECT_EQ(kept[0], 3);
  EXPECT_EQ(kept[4095], 3);
}

}  // namespace
}  // namespace exactly::broker
