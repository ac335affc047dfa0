// Access to the captured request frames in shared/wire-samples (see its
// README). A user's clone does not have them: WireSamplesDir() is then empty
// and tests skip that part, saying so.
#ifndef EXACTLY_TESTS_SUPPORT_WIRE_SAMPLES_H_
#define EXACTLY_TESTS_SUPPORT_WIRE_SAMPLES_H_

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace exactly::testing {

struct WireSample {
  std::string file;
  std::string client;
  int16_t api_key = 0;
  std::string api_name;
  int16_t api_version = 0;
  bool flexible = false;
  std::string notes;
  std::string bytes;  // the whole frame, size prefix included
};

inline std::string WireSamplesDir() {
  const char* env = std::getenv("EXACTLY_WIRE_SAMPLES");
  std::filesystem::path dir = env != nullptr ? env : EXACTLY_WIRE_SAMPLES_DIR;
  return std::filesystem::exists(dir / "index.tsv") ? dir.string()
                                                    : std::string();
}

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every sample listed in index.tsv, with its bytes.
inline std::vector<WireSample> LoadWireSamples() {
  std::vector<WireSample> samples;
  std::string dir = WireSamplesDir();
  if (dir.empty()) return samples;
  std::ifstream index(dir + "/index.tsv");
  std::string line;
  std::getline(index, line);  // column names
  while (std::getline(index, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols.size() < 9) continue;
    WireSample s;
    s.file = cols[0];
    s.client = cols[1];
    s.api_key = static_cast<int16_t>(std::stoi(cols[2]));
    s.api_name = cols[3];
    s.api_version = static_cast<int16_t>(std::stoi(cols[4]));
    s.flexible = cols[5] == "yes";
    s.notes = cols[8];
    s.bytes = ReadWholeFile(dir + "/" + s.file);
    samples.push_back(std::move(s));
  }
  return samples;
}

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_WIRE_SAMPLES_H_
