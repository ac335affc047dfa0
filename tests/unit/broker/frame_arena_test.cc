#include "util/frame_arena.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace exactly::broker {
namespace {

FrameArenaOptions SmallChunks() {
  FrameArenaOptions options;
  options.chunk_bytes = size_t{4} << 20;
  options.min_frame_bytes = 1024;
  return options;
}

// The VmFlags of the mapping holding `p` (/proc/self/smaps): "hg" marks
// MADV_HUGEPAGE, "nh" MADV_NOHUGEPAGE, whatever the machine's THP setting.
std::vector<std::string> MappingFlags(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-' &&
        line.find(':') > line.find(' ')) {
      inside = begin <= address && address < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) {
      std::istringstream words(line.substr(8));
      std::vector<std::string> flags;
      for (std::string flag; words >> flag;) flags.push_back(flag);
      return flags;
    }
  }
  return {};
}

bool HasFlag(const std::vector<std::string>& flags, const std::string& flag) {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

TEST(FrameArenaTest, ChunksAskForHugePagesOrForSmallOnesAsTold) {
  FrameArenaOptions huge = SmallChunks();
  huge.huge_pages = true;
  FrameArena with(huge);
  SharedBuffer in_huge = with.Allocate(8192);
  std::vector<std::string> flags = MappingFlags(in_huge.get());
  ASSERT_FALSE(flags.empty()) << "no mapping found in /proc/self/smaps";
  EXPECT_TRUE(HasFlag(flags, "hg"));
  EXPECT_FALSE(HasFlag(flags, "nh"));

  FrameArenaOptions small = SmallChunks();  // the default
  FrameArena without(small);
  SharedBuffer in_small = without.Allocate(8192);
  flags = MappingFlags(in_small.get());
  ASSERT_FALSE(flags.empty()) << "no mapping found in /proc/self/smaps";
  EXPECT_TRUE(HasFlag(flags, "nh"));
  EXPECT_FALSE(HasFlag(flags, "hg"));
  // Both hold bytes alike.
  std::memset(in_small.get(), 7, 8192);
  EXPECT_EQ(in_small.get()[8191], 7);
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

// Four of these fill a chunk of SmallChunks(), with or without ASan's red
// zones, and a fifth does not fit.
constexpr size_t kQuarterFrame = (size_t{1} << 20) - 4096;

// Fills `chunks` whole chunks of SmallChunks().
std::vector<SharedBuffer> FillChunks(FrameArena& arena, int chunks,
                                     unsigned char fill) {
  std::vector<SharedBuffer> frames;
  const size_t frame = kQuarterFrame;
  for (int i = 0; i < 4 * chunks; ++i) {
    SharedBuffer b = arena.Allocate(frame);
    std::memset(b.get(), fill, frame);
    frames.push_back(std::move(b));
  }
  return frames;
}

TEST(FrameArenaTest, AnEmptiedChunkIsReusedInsteadOfMappingAnother) {
  FrameArena arena(SmallChunks());
  std::vector<SharedBuffer> first = FillChunks(arena, 1, 1);
  std::vector<SharedBuffer> second = FillChunks(arena, 1, 2);
  ASSERT_EQ(arena.chunks_mapped(), 2u);
  const char* first_chunk = first.front().get();
  first.clear();  // retention dropped every frame of the first chunk
  // The third chunk's frames are cut from the first chunk's memory, without
  // touching the second chunk's live frames.
  std::vector<SharedBuffer> third = FillChunks(arena, 1, 3);
  EXPECT_EQ(arena.chunks_mapped(), 2u);
  EXPECT_EQ(arena.chunks_reused(), 1u);
  EXPECT_EQ(third.front().get(), first_chunk);
  for (const SharedBuffer& b : second) {
    ASSERT_EQ(b[0], 2);
    ASSERT_EQ(b[kQuarterFrame - 1], 2);
  }
}

TEST(FrameArenaTest, SpareChunksAreBounded) {
  FrameArenaOptions options = SmallChunks();
  options.spare_chunks = 1;
  FrameArena arena(options);
  std::vector<SharedBuffer> frames = FillChunks(arena, 3, 1);
  std::vector<SharedBuffer> live = FillChunks(arena, 1, 2);
  ASSERT_EQ(arena.chunks_mapped(), 4u);
  frames.clear();  // three chunks emptied; one is kept, two are unmapped
  std::vector<SharedBuffer> more = FillChunks(arena, 3, 3);
  EXPECT_EQ(arena.chunks_reused(), 1u);
  EXPECT_EQ(arena.chunks_mapped(), 6u);
  EXPECT_EQ(live.back()[0], 2);
}

TEST(FrameArenaTest, NoSparesMeansEveryChunkIsMapped) {
  FrameArenaOptions options = SmallChunks();
  options.spare_chunks = 0;
  FrameArena arena(options);
  FillChunks(arena, 2, 1);  // dropped at once
  FillChunks(arena, 2, 1);
  EXPECT_EQ(arena.chunks_reused(), 0u);
  EXPECT_GE(arena.chunks_mapped(), 3u);
}

}  // namespace
}  // namespace exactly::broker

namespace exactly::broker {
namespace {

// Keep: in place (and counted) inside a chunk, a copy from a heap frame.
TEST(FrameArenaKeepTest, InAChunkInPlaceFromTheHeapACopy) {
  FrameArena arena(SmallChunks());
  SharedBuffer big = arena.Allocate(100000);
  std::memset(big.get(), 'b', 100000);
  KeptBytes in_chunk = arena.Keep(big, big.get() + 10, 5000);
  EXPECT_EQ(in_chunk.data, big.get() + 10);
  EXPECT_EQ(arena.memory().kept, 5000u);

  SharedBuffer small = arena.Allocate(500);
  std::memset(small.get(), 's', 500);
  KeptBytes copied = arena.Keep(small, small.get() + 100, 50);
  EXPECT_NE(copied.data, small.get() + 100);
  EXPECT_EQ(std::string(copied.data, 50), std::string(50, 's'));
  EXPECT_EQ(arena.memory().kept, 5000u);

  // The frame goes, the kept bytes stay valid and counted until they go too.
  big.reset();
  EXPECT_EQ(std::string(in_chunk.data, 3), "bbb");
  in_chunk.owner.reset();
  EXPECT_EQ(arena.memory().kept, 0u);
}

// A chunk that keeps little is named for evacuation once the waste passes the
// limit, once; what is kept in it afterwards is copied; emptied, it is freed.
TEST(FrameArenaKeepTest, SparseChunksAreEvacuatedOnce) {
  FrameArenaOptions options = SmallChunks();  // 4 MiB chunks
  options.max_waste_bytes = size_t{1} << 20;
  options.spare_chunks = 0;
  FrameArena arena(options);
  SharedBuffer first = arena.Allocate(4096);
  KeptBytes kept = arena.Keep(first, first.get(), 100);
  first.reset();
  EXPECT_TRUE(arena.PlanEvacuation().empty()) << "the current chunk is spared";
  // Filling the rest of the chunk and starting another retires the first.
  for (int i = 0; i < 5; ++i) arena.Allocate(1 << 20);
  FrameEvacuation plan = arena.PlanEvacuation();
  ASSERT_EQ(plan.chunks(), 1u);
  EXPECT_TRUE(plan.Contains(kept.data));
  const std::string elsewhere(10, 'x');
  EXPECT_FALSE(plan.Contains(elsewhere.data()));
  EXPECT_TRUE(arena.PlanEvacuation().empty()) << "named twice";
  // The log copies the batch out: the chunk has nothing left and is unmapped.
  const size_t mapped = arena.memory().mapped;
  kept.owner = CopyToSharedBuffer({kept.data, 100});
  EXPECT_EQ(arena.memory().kept, 0u);
  EXPECT_LT(arena.memory().mapped, mapped);
}

// Chunks that keep at least half their size are never evacuated.
TEST(FrameArenaKeepTest, WellUsedChunksStay) {
  FrameArenaOptions options = SmallChunks();
  options.max_waste_bytes = 0;
  FrameArena arena(options);
  std::vector<KeptBytes> kept;
  for (int i = 0; i < 20; ++i) {
    SharedBuffer frame = arena.Allocate(512 * 1024);
    kept.push_back(arena.Keep(frame, frame.get(), 400 * 1024));
  }
  EXPECT_GE(arena.chunks_mapped(), 2u);
  EXPECT_TRUE(arena.PlanEvacuation().empty());
}

}  // namespace
}  // namespace exactly::broker
