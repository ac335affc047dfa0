// A program run as a child process, for tests that kill it (SIGKILL at a
// random moment) and count what survived. Killed if still running when it
// goes out of scope.
//
//   ChildProcess child(EXACTLY_SPOOL_CHILD, {"--records", "100"});
//   ...
//   child.Signal(SIGKILL);
//   int status = child.Wait();
#ifndef EXACTLY_TESTS_SUPPORT_CHILD_PROCESS_H_
#define EXACTLY_TESTS_SUPPORT_CHILD_PROCESS_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace exactly::testing {

class ChildProcess {
 public:
  ChildProcess(std::string program, std::vector<std::string> args) {
    std::vector<char*> argv = {program.data()};
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      // Not the test's descriptors: an inherited copy of an in-process
      // broker's listening socket would keep its port busy across a restart.
      close_range(3, ~0u, 0);
      execv(program.c_str(), argv.data());
      _exit(127);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      Wait();
    }
  }

  bool started() const { return pid_ > 0; }
  void Signal(int sig) {
    if (pid_ > 0) kill(pid_, sig);
  }
  // Waits for it to end; returns the wait status.
  int Wait() {
    int status = 0;
    if (pid_ > 0) waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }
  // Whether it has already ended by itself (its wait status in *status).
  bool Exited(int* status) {
    return pid_ > 0 && waitpid(pid_, status, WNOHANG) == pid_ &&
           (pid_ = -1, true);
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_CHILD_PROCESS_H_
