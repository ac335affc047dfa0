// The exactly-broker binary as a child process, for tests that must exercise
// the program users run (flags, stdout protocol, signals), not only the
// embeddable class.
//
//   BrokerProcess broker(EXACTLY_BROKER_BIN, {"--data-dir", dir});
//   ASSERT_TRUE(broker.running()) << broker.error();
//   Use(broker.bootstrap_servers());
//   broker.Stop();  // SIGTERM, waits for a clean exit
#ifndef EXACTLY_TESTS_SUPPORT_BROKER_PROCESS_H_
#define EXACTLY_TESTS_SUPPORT_BROKER_PROCESS_H_

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace exactly::testing {

class BrokerProcess {
 public:
  // Starts `binary --port 0 args...` and waits up to 10 s for its
  // "bootstrap.servers=HOST:PORT" line.
  BrokerProcess(const std::string& binary, std::vector<std::string> args) {
    args.insert(args.begin(), {binary, "--port", "0"});
    int out[2];
    if (pipe(out) != 0) {
      error_ = "pipe failed";
      return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr,
                               argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (rc != 0) {
      error_ = "cannot run " + binary;
      pid_ = -1;
      close(out[0]);
      return;
    }
    stdout_ = out[0];
    std::string line;
    while (line.find('\n') == std::string::npos) {
      pollfd p{.fd = stdout_, .events = POLLIN, .revents = 0};
      if (poll(&p, 1, 10000) <= 0) break;
      char buf[256];
      const ssize_t n = read(stdout_, buf, sizeof(buf));
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
    constexpr std::string_view kPrefix = "bootstrap.servers=";
    if (line.rfind(kPrefix, 0) != 0 || line.find('\n') == std::string::npos) {
      error_ = "no bootstrap.servers line; got: " + line;
      Kill();
      return;
    }
    bootstrap_ = line.substr(kPrefix.size(), line.find('\n') - kPrefix.size());
    pending_ = line.substr(line.find('\n') + 1);
  }
  BrokerProcess(const BrokerProcess&) = delete;
  BrokerProcess& operator=(const BrokerProcess&) = delete;
  ~BrokerProcess() { Kill(); }

  bool running() const { return pid_ > 0 && !bootstrap_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& bootstrap_servers() const { return bootstrap_; }

  // The next line the program prints on stdout after the bootstrap line
  // (without its newline), waiting up to `timeout_ms`; empty when none came.
  std::string NextLine(int timeout_ms = 10000) {
    while (pending_.find('\n') == std::string::npos && stdout_ >= 0) {
      pollfd p{.fd = stdout_, .events = POLLIN, .revents = 0};
      if (poll(&p, 1, timeout_ms) <= 0) return "";
      char buf[256];
      const ssize_t n = read(stdout_, buf, sizeof(buf));
      if (n <= 0) return "";
      pending_.append(buf, static_cast<size_t>(n));
    }
    const size_t end = pending_.find('\n');
    if (end == std::string::npos) return "";
    std::string line = pending_.substr(0, end);
    pending_.erase(0, end + 1);
    return line;
  }

  // SIGTERM and wait: true if the broker exited by itself with status 0.
  bool Stop() {
    if (pid_ <= 0) return false;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    CloseStdout();
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  void Kill() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    CloseStdout();
  }

 private:
  void CloseStdout() {
    if (stdout_ >= 0) close(stdout_);
    stdout_ = -1;
  }

  pid_t pid_ = -1;
  int stdout_ = -1;
  std::string bootstrap_;
  std::string pending_;  // read from stdout after the bootstrap line
  std::string error_;
};

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_BROKER_PROCESS_H_
