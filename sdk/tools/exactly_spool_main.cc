// exactly-spool: look at a spool directory without a producer, without Kafka.
//
//   exactly-spool inspect DIR      depth, bytes, oldest record's age,
//                                  sequences, quarantine, disk use
//   exactly-spool verify DIR       checks every record's CRC-32C and that no
//                                  sequence is missing; exit status 1 if
//                                  anything is damaged or missing
//   exactly-spool quarantine DIR   lists the quarantined records
//
// It opens the spool read-only (RocksDB's read-only mode takes no lock and
// writes nothing), so it also works on a spool that a running producer owns:
// the figures are then a snapshot. Exit status: 0 fine, 1 damage found,
// 2 usage or the spool could not be read.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "spool/format.h"
#include "spool/store.h"

namespace {

namespace spool = exactly::internal::spool;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string FormatTime(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string FormatAge(int64_t ms) {
  if (ms < 1000) return absl::StrCat(ms, " ms");
  if (ms < 120000) return absl::StrCat(ms / 1000, ".", (ms % 1000) / 100, " s");
  if (ms < 7200000) return absl::StrCat(ms / 60000, " min");
  return absl::StrCat(ms / 3600000, " h");
}

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s inspect|verify|quarantine DIR\n"
               "  inspect     depth, bytes, oldest record's age, sequences, "
               "quarantine\n"
               "  verify      check every record; exit 1 if any is damaged or "
               "missing\n"
               "  quarantine  list the quarantined records\n",
               argv0);
  return 2;
}

struct Opened {
  std::unique_ptr<spool::SpoolStore> store;
  spool::StoreState state;
};

bool Open(const std::string& dir, Opened& out) {
  absl::StatusOr<std::unique_ptr<spool::SpoolStore>> store =
      spool::SpoolStore::Open({.dir = dir, .read_only = true}, &out.state);
  if (!store.ok()) {
    std::fprintf(stderr, "exactly-spool: %s\n",
                 std::string(store.status().ToString()).c_str());
    return false;
  }
  out.store = std::move(*store);
  return true;
}

int Inspect(const std::string& dir) {
  Opened o;
  if (!Open(dir, o)) return 2;
  const spool::StoreState& s = o.state;
  std::printf("spool            %s\n", dir.c_str());
  std::printf("spool id         %s\n", s.spool_id.c_str());
  std::printf("depth            %llu records\n",
              static_cast<unsigned long long>(s.records));
  std::printf("bytes            %llu\n",
              static_cast<unsigned long long>(s.bytes));
  if (!s.ages.empty() && s.records > 0) {
    std::printf("oldest record    %s old (sequence %llu, appended %s)\n",
                FormatAge(NowMs() - s.ages.front().second).c_str(),
                static_cast<unsigned long long>(s.ages.front().first),
                FormatTime(s.ages.front().second).c_str());
  } else {
    std::printf("oldest record    -\n");
  }
  if (s.records > 0) {
    std::printf("sequences        %llu..%llu\n",
                static_cast<unsigned long long>(s.first_seq),
                static_cast<unsigned long long>(s.last_seq));
  }
  std::printf("next sequence    %llu\n",
              static_cast<unsigned long long>(s.next_seq));
  std::printf(
      "committed        %llu (locally known; Kafka's checkpoint may "
      "be ahead)\n",
      static_cast<unsigned long long>(s.committed));
  std::printf("quarantined      %llu records in %llu entries\n",
              static_cast<unsigned long long>(s.quarantined_records),
              static_cast<unsigned long long>(s.quarantine_entries));
  std::printf("disk             %llu bytes (WAL and SST files)\n",
              static_cast<unsigned long long>(o.store->DiskBytes()));
  if (s.cursor_seq > 0) {
    std::printf("cursor           \"%s\" (sequence %llu)\n", s.cursor.c_str(),
                static_cast<unsigned long long>(s.cursor_seq));
  }
  for (const std::string& e : s.events)
    std::printf("note             %s\n", e.c_str());
  return 0;
}

int Verify(const std::string& dir) {
  Opened o;
  if (!Open(dir, o)) return 2;
  const spool::StoreState& s = o.state;
  const std::set<uint64_t> quarantined(s.quarantined_seqs.begin(),
                                       s.quarantined_seqs.end());
  std::vector<std::pair<uint64_t, std::string>> salvageable = s.salvageable;
  uint64_t good = 0, damaged = 0, missing = 0, recoverable = 0;
  uint64_t expected = s.committed + 1;
  auto report_gap = [&](uint64_t first, uint64_t last) {
    for (uint64_t q = first; q <= last;) {
      if (quarantined.count(q) > 0) {
        ++q;
        continue;
      }
      uint64_t end = q;
      while (end + 1 <= last && quarantined.count(end + 1) == 0) ++end;
      bool salvaged = false;
      for (const auto& [seq, value] : salvageable) {
        if (seq >= q && seq <= end) salvaged = true;
      }
      if (!salvaged) {
        std::printf("MISSING   sequences %llu..%llu\n",
                    static_cast<unsigned long long>(q),
                    static_cast<unsigned long long>(end));
        missing += end - q + 1;
      }
      q = end + 1;
    }
  };
  auto check = [&](uint64_t seq, std::string_view value, const char* where) {
    if (spool::CheckRecord(value, seq) && spool::DecodeRecord(value).ok()) {
      ++good;
      return;
    }
    ++damaged;
    std::printf(
        "DAMAGED   sequence %llu (%s): CRC-32C mismatch or "
        "malformed; the producer will quarantine it\n",
        static_cast<unsigned long long>(seq), where);
  };
  absl::Status read = o.store->Scan(s.committed + 1, s.next_seq - 1,
                                    [&](uint64_t seq, std::string_view v) {
                                      if (seq > expected)
                                        report_gap(expected, seq - 1);
                                      check(seq, v, "in the database");
                                      expected = seq + 1;
                                      return true;
                                    });
  if (!read.ok()) {
    std::printf("UNREADABLE after sequence %llu: %s\n",
                static_cast<unsigned long long>(expected - 1),
                std::string(read.message()).c_str());
    ++damaged;
  } else if (expected <= s.next_seq - 1) {
    report_gap(expected, s.next_seq - 1);
  }
  for (const auto& [seq, value] : salvageable) {
    if (spool::CheckRecord(value, seq)) {
      ++recoverable;
    } else {
      check(seq, value, "in a damaged WAL entry");
    }
  }
  for (const std::string& e : s.events)
    std::printf("note      %s\n", e.c_str());
  std::printf(
      "%s: %llu records intact, %llu recoverable from damaged WAL entries, "
      "%llu damaged, %llu missing; %llu quarantined before\n",
      damaged + missing == 0 ? "OK" : "DAMAGE",
      static_cast<unsigned long long>(good),
      static_cast<unsigned long long>(recoverable),
      static_cast<unsigned long long>(damaged),
      static_cast<unsigned long long>(missing),
      static_cast<unsigned long long>(s.quarantined_records));
  return damaged + missing == 0 ? 0 : 1;
}

int ListQuarantine(const std::string& dir) {
  Opened o;
  if (!Open(dir, o)) return 2;
  auto entries = o.store->ListQuarantine();
  for (const auto& [id, e] : entries) {
    std::printf(
        "%llu\tsequence %llu%s\t%s\t%zu bytes\t%s\n",
        static_cast<unsigned long long>(id),
        static_cast<unsigned long long>(e.seq),
        e.records > 1 ? absl::StrCat(" (+", e.records - 1, ")").c_str() : "",
        FormatTime(e.quarantined_ms).c_str(), e.bytes.size(), e.reason.c_str());
  }
  std::printf("%zu entries, %llu records\n", entries.size(),
              static_cast<unsigned long long>(o.state.quarantined_records));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return Usage(argv[0]);
  const std::string command = argv[1];
  const std::string dir = argv[2];
  if (command == "inspect") return Inspect(dir);
  if (command == "verify") return Verify(dir);
  if (command == "quarantine") return ListQuarantine(dir);
  return Usage(argv[0]);
}
