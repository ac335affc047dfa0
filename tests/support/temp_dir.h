// A fresh directory under the system temp dir, removed with everything in it at
// scope end.
#ifndef EXACTLY_TESTS_SUPPORT_TEMP_DIR_H_
#define EXACTLY_TESTS_SUPPORT_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace exactly::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "exactly-test-XXXXXX")
            .string();
    char* made = mkdtemp(pattern.data());
    path_ = made != nullptr ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_TEMP_DIR_H_
