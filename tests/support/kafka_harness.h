// The Apache Kafka cluster a test runs against, when scripts/kafka.sh
// started it: real broker faults (SIGKILL or SIGSTOP a broker JVM, restart
// it) and questions only the cluster can answer (who leads a partition, who
// coordinates a transactional id).
//
// CTest's kafka label sets EXACTLY_KAFKA_CLUSTER to the cluster's directory;
// without it FromEnv() is nullptr and such tests skip.
//
//   auto kafka = exactly::testing::KafkaHarness::FromEnv();
//   absl::StatusOr<int> leader = kafka->Leader(topic, 0);
//   ASSERT_TRUE(kafka->Signal(*leader, SIGKILL).ok());
//   ASSERT_TRUE(kafka->Restart(*leader).ok());
#ifndef EXACTLY_TESTS_SUPPORT_KAFKA_HARNESS_H_
#define EXACTLY_TESTS_SUPPORT_KAFKA_HARNESS_H_

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace exactly::testing {

class KafkaHarness {
 public:
  // The cluster named by EXACTLY_KAFKA_CLUSTER, or nullptr.
  static std::unique_ptr<KafkaHarness> FromEnv() {
    const char* dir = std::getenv("EXACTLY_KAFKA_CLUSTER");
    if (dir == nullptr || *dir == '\0') return nullptr;
    return std::unique_ptr<KafkaHarness>(new KafkaHarness(dir));
  }

  const std::string& dir() const { return dir_; }
  // "host:port,..." as the harness wrote it, or "" if it wrote none.
  std::string bootstrap_servers() const { return ReadFile("bootstrap"); }
  int brokers() const {
    int n = 0;
    return absl::SimpleAtoi(ReadFile("brokers"), &n) ? n : 0;
  }

  // Node id of the partition's leader (waits while it has none).
  absl::StatusOr<int> Leader(const std::string& topic, int partition) const {
    return RunForNode(
        absl::StrCat("leader '", dir_, "' '", topic, "' ", partition));
  }
  absl::StatusOr<int> TransactionCoordinator(const std::string& id) const {
    return RunForNode(
        absl::StrCat("coordinator '", dir_, "' --transactional-id '", id, "'"));
  }
  absl::StatusOr<int> GroupCoordinator(const std::string& group) const {
    return RunForNode(
        absl::StrCat("coordinator '", dir_, "' --group '", group, "'"));
  }

  // Until every live broker serves the topic (Kafka spreads a new topic's
  // metadata asynchronously; a broker that has not heard of it yet says it
  // does not exist, and librdkafka fails records queued for it).
  absl::Status WaitForTopic(const std::string& topic, int partitions) const {
    return Run(absl::StrCat("wait-topic '", dir_, "' '", topic, "' ",
                            partitions))
        .status();
  }

  // SIGKILL, SIGSTOP, SIGCONT or SIGTERM to node's JVM (KILL and TERM wait
  // until it is gone).
  absl::Status Signal(int node, int sig) const {
    const char* name = sig == SIGKILL   ? "KILL"
                       : sig == SIGSTOP ? "STOP"
                       : sig == SIGCONT ? "CONT"
                       : sig == SIGTERM ? "TERM"
                                        : nullptr;
    if (name == nullptr)
      return absl::InvalidArgumentError("unsupported signal");
    return Run(absl::StrCat("kill '", dir_, "' ", node, " --signal ", name))
        .status();
  }
  // Starts node again (stopping it first if it runs) and waits until it
  // serves.
  absl::Status Restart(int node) const {
    return Run(absl::StrCat("restart '", dir_, "' ", node)).status();
  }

 private:
  explicit KafkaHarness(std::string dir) : dir_(std::move(dir)) {}

  std::string ReadFile(const std::string& name) const {
    std::ifstream in(dir_ + "/" + name);
    std::string line;
    std::getline(in, line);
    return line;
  }

  // scripts/kafka.sh ARGS; its stdout, or an error with its exit code.
  static absl::StatusOr<std::string> Run(const std::string& args) {
    std::string command =
        absl::StrCat("'", EXACTLY_KAFKA_SCRIPT, "' ", args, " 2>&1");
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return absl::InternalError("popen failed");
    std::string out;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
    int status = pclose(pipe);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return absl::InternalError(
          absl::StrCat("scripts/kafka.sh ", args, " failed: ", out));
    }
    return out;
  }

  static absl::StatusOr<int> RunForNode(const std::string& args) {
    absl::StatusOr<std::string> out = Run(args);
    if (!out.ok()) return out.status();
    int node = -1;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*out), &node)) {
      return absl::InternalError(absl::StrCat("not a node id: ", *out));
    }
    return node;
  }

  std::string dir_;
};

}  // namespace exactly::testing

#endif  // EXACTLY_TESTS_SUPPORT_KAFKA_HARNESS_H_
