// Damaging a spool's files on disk, for the corruption tests: find the bytes
// of a known record value in the WAL or SST files and flip one of them.
#ifndef EXACTLY_TESTS_UNIT_SDK_SPOOL_FILES_H_
#define EXACTLY_TESTS_UNIT_SDK_SPOOL_FILES_H_

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace exactly::testing {

// The spool's RocksDB files with `extension` (".log" for the WAL, ".sst").
inline std::vector<std::string> SpoolFiles(const std::string& spool_dir,
                                           const std::string& extension) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator(spool_dir + "/db", ec)) {
    if (e.path().extension() == extension) out.push_back(e.path().string());
  }
  return out;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

inline void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// Flips one byte in the middle of the first occurrence of `needle` in the
// spool's files with `extension`; returns how many files had it (flipping
// only the first).
inline int FlipByteIn(const std::string& spool_dir, const std::string& extension,
                      const std::string& needle) {
  int found = 0;
  for (const std::string& path : SpoolFiles(spool_dir, extension)) {
    std::string data = ReadFile(path);
    const size_t at = data.find(needle);
    if (at == std::string::npos) continue;
    if (found++ == 0) {
      data[at + needle.size() / 2] ^= 0x5A;
      WriteFile(path, data);
    }
  }
  return found;
}

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_UNIT_SDK_SPOOL_FILES_H_
