// The settings table and its parser (src/settings): every numeric entry refuses garbage, an empty
// value, a sign, values outside its range and values past 64 bits, with a message naming the
// variable, the value and the range; choices refuse unknown words; every default parses; reading
// the environment takes unset and empty as the default.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "settings/settings.h"

using mpix::settings::Entry;
using mpix::settings::Id;
using mpix::settings::Kind;
using mpix::settings::kTable;
using mpix::settings::Value;

namespace {

bool numeric(const Entry &e) { return e.kind == Kind::count || e.kind == Kind::size || e.kind == Kind::duration; }

// Parses `text` as `e`'s value, expecting a refusal whose message names the variable and the value.
void refused(const Entry &e, const std::string &text) {
  Value v;
  v.number = 12345;
  std::string why;
  INFO(e.name << "=\"" << text << "\"");
  CHECK_FALSE(mpix::settings::parse(e, text, &v, &why));
  CHECK(v.number == 12345);  // untouched
  INFO("message: " << why);
  CHECK(why.rfind(std::string(e.name) + "=" + text + ": expected ", 0) == 0);
  CHECK(why.find(mpix::settings::accepted(e)) != std::string::npos);
}

Value accepted_value(const Entry &e, const std::string &text) {
  Value v;
  std::string why;
  INFO(e.name << "=\"" << text << "\": " << why);
  CHECK(mpix::settings::parse(e, text, &v, &why));
  CHECK(v.set);
  return v;
}

struct Env {
  const char *name;
  explicit Env(const char *n, const char *value) : name(n) {
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~Env() { unsetenv(name); }
};

}  // namespace

TEST_CASE("the table: names, order and defaults") {
  std::set<std::string> names;
  for (const Entry &e : kTable) {
    INFO(e.name);
    CHECK(std::string(e.name).rfind("MPIX_ST_", 0) == 0);
    CHECK(names.insert(e.name).second);
    CHECK(mpix::settings::find(e.name) == &e);
    CHECK(*e.help != '\0');
    // Every fixed default is a value the entry accepts; "(...)" defaults are the code's.
    if (e.fallback[0] != '(' && e.fallback[0] != '\0') accepted_value(e, e.fallback);
    if (numeric(e)) CHECK(e.min <= e.max);
    if (e.kind == Kind::text) CHECK(static_cast<bool>(e.check));
  }
  CHECK(mpix::settings::find("MPIX_ST_NO_SUCH_SETTING") == nullptr);
  CHECK(std::string(mpix::settings::entry(Id::MPIX_ST_WATCHDOG_MS).name) == "MPIX_ST_WATCHDOG_MS");
  CHECK(std::string(mpix::settings::entry(Id::MPIX_ST_TRACE_RECORDS).name) == "MPIX_ST_TRACE_RECORDS");
}

TEST_CASE("every numeric setting refuses garbage, signs, values out of range and past 64 bits") {
  int numerics = 0;
  for (const Entry &e : kTable) {
    if (!numeric(e)) continue;
    ++numerics;
    for (const char *bad : {"12x", "", "-1", "+1", " 1", "1 ", "0x10", "1e3", "1.5", "1k", "one",
                            "18446744073709551616", "99999999999999999999999999"})
      refused(e, bad);
    if (e.max < UINT64_MAX) refused(e, std::to_string(e.max + 1));
    refused(e, "18446744073709551615");  // 2^64 - 1: no range reaches it
    if (e.min > 0) refused(e, std::to_string(e.min - 1));
    CHECK(accepted_value(e, std::to_string(e.min)).number == e.min);
    CHECK(accepted_value(e, std::to_string(e.max)).number == e.max);
  }
  CHECK(numerics >= 15);
}

TEST_CASE("the messages say what is accepted") {
  std::string why;
  Value v;
  CHECK_FALSE(mpix::settings::parse(mpix::settings::entry(Id::MPIX_ST_COLL_SCRATCH_KIB), "-1", &v, &why));
  CHECK(why == "MPIX_ST_COLL_SCRATCH_KIB=-1: expected an integer in [4, 1048576] (KiB)");
  CHECK_FALSE(mpix::settings::parse(mpix::settings::entry(Id::MPIX_ST_BACKEND), "bogus", &v, &why));
  CHECK(why == "MPIX_ST_BACKEND=bogus: expected one of auto, host, cuda, hip");
  CHECK_FALSE(mpix::settings::parse(mpix::settings::entry(Id::MPIX_ST_MULTICAST), "2", &v, &why));
  CHECK(why == "MPIX_ST_MULTICAST=2: expected a boolean: 1, true, yes, on, 0, false, no or off");
}

TEST_CASE("the known crash and hang values are refused") {
  refused(mpix::settings::entry(Id::MPIX_ST_COLL_SCRATCH_KIB), "-1");
  refused(mpix::settings::entry(Id::MPIX_ST_COLL_CHANNEL_KIB), "18014398509481984");
  refused(mpix::settings::entry(Id::MPIX_ST_TRACE_RECORDS), "1152921504606846976");
  refused(mpix::settings::entry(Id::MPIX_ST_WATCHDOG_MS), "18446744073709552");
  refused(mpix::settings::entry(Id::MPIX_ST_DOORBELL_POLL_US), "4294967296");
  // The largest accepted values keep the arithmetic that uses them inside 64 bits.
  using mpix::settings::entry;
  CHECK(entry(Id::MPIX_ST_WATCHDOG_MS).max <= UINT64_MAX / 1000000 / 1000);  // ns, with room for a clock
  CHECK(entry(Id::MPIX_ST_COLL_SCRATCH_KIB).max * 1024 * 4 < (uint64_t(1) << 40));
  CHECK(entry(Id::MPIX_ST_COLL_CHANNEL_KIB).max * 1024 < (uint64_t(1) << 40));
  CHECK(entry(Id::MPIX_ST_TRACE_RECORDS).max * 16 <= (uint64_t(1) << 31));
  CHECK(entry(Id::MPIX_ST_DTYPE_LIST_MIB).max < (uint64_t(1) << 44));
  CHECK(entry(Id::MPIX_ST_COPY_ENGINE_MIB).max < (uint64_t(1) << 44));
}

TEST_CASE("choices take their words only") {
  int choices = 0;
  for (const Entry &e : kTable) {
    if (e.kind != Kind::choice) continue;
    ++choices;
    for (const char *bad : {"bogus", "", "AUTO", " auto", "auto ", "auto,direct"}) refused(e, bad);
    std::string words = e.values;
    size_t start = 0, index = 0;
    while (start <= words.size()) {
      size_t end = words.find('|', start);
      if (end == std::string::npos) end = words.size();
      const std::string w = words.substr(start, end - start);
      const Value v = accepted_value(e, w);
      CHECK(v.text == w);
      CHECK(v.number == index);
      start = end + 1;
      ++index;
    }
  }
  CHECK(choices >= 15);
  // Per-collective lists: reduce and bcast leaders have no ring, alltoall only direct.
  refused(mpix::settings::entry(Id::MPIX_ST_REDUCE_LEADERS), "ring");
  refused(mpix::settings::entry(Id::MPIX_ST_BCAST_LEADERS), "ring");
  refused(mpix::settings::entry(Id::MPIX_ST_ALLTOALL_ALGO), "ring");
  accepted_value(mpix::settings::entry(Id::MPIX_ST_ALLREDUCE_LEADERS), "ring");
}

TEST_CASE("booleans, auto-or-boolean and texts") {
  for (const Entry &e : kTable) {
    if (e.kind == Kind::flag || e.kind == Kind::autoflag) {
      for (const char *t : {"1", "true", "yes", "on"}) CHECK(accepted_value(e, t).number == 1);
      for (const char *f : {"0", "false", "no", "off"}) CHECK(accepted_value(e, f).number == 0);
      for (const char *bad : {"2", "", "TRUE", "y", "enable", "-1"}) refused(e, bad);
      if (e.kind == Kind::autoflag) CHECK(accepted_value(e, "auto").number == mpix::settings::kAuto);
      else refused(e, "auto");
    }
    if (e.kind == Kind::text) refused(e, "");
  }
  const Entry &providers = mpix::settings::entry(Id::MPIX_ST_OFI_PROVIDER);
  accepted_value(providers, "sockets");
  accepted_value(providers, "cxi, sockets");
  accepted_value(providers, "verbs;ofi_rxm,tcp");
  for (const char *bad : {",", "cxi,", ",cxi", "cxi,,sockets", "cx i", "cxi/0"}) refused(providers, bad);
  const Entry &nic = mpix::settings::entry(Id::MPIX_ST_OFI_NIC);
  for (const char *ok : {"auto", "gpu", "round-robin", "cxi3", "mlx5_0", "eth0"}) accepted_value(nic, ok);
  for (const char *bad : {"cxi 0", "cxi0,cxi1", "\t"}) refused(nic, bad);
}

TEST_CASE("reading the environment: unset and empty give the default, refusals name the variable") {
  Value v;
  std::string why;
  {
    Env env("MPIX_ST_COLL_PROTOCOL", nullptr);
    CHECK(mpix::settings::read(Id::MPIX_ST_COLL_PROTOCOL, &v, &why));
    CHECK_FALSE(v.set);
    CHECK(v.text == "auto");
  }
  {
    Env env("MPIX_ST_COLL_PROTOCOL", "");
    CHECK(mpix::settings::read(Id::MPIX_ST_COLL_PROTOCOL, &v, &why));
    CHECK_FALSE(v.set);
    CHECK(v.text == "auto");
  }
  {
    Env env("MPIX_ST_COLL_PROTOCOL", "ll");
    CHECK(mpix::settings::read(Id::MPIX_ST_COLL_PROTOCOL, &v, &why));
    CHECK(v.set);
    CHECK(v.text == "ll");
  }
  {
    Env env("MPIX_ST_COLL_PROTOCOL", "bogus");
    CHECK_FALSE(mpix::settings::read(Id::MPIX_ST_COLL_PROTOCOL, &v, &why));
    CHECK(why == "MPIX_ST_COLL_PROTOCOL=bogus: expected one of auto, simple, ll");
    CHECK(v.text == "auto");  // the default, for callers that go on
  }
  {
    Env env("MPIX_ST_OFI_RMA_PIECES", nullptr);  // a "(...)" default: unset, no number
    CHECK(mpix::settings::read(Id::MPIX_ST_OFI_RMA_PIECES, &v, &why));
    CHECK_FALSE(v.set);
    CHECK(v.number == 0);
  }
}

// Keep this the only test case that asks for the snapshot: the first call reads it.
TEST_CASE("the start-up snapshot is read once") {
  // The first call reads every start setting; later changes of the environment change nothing.
  setenv("MPIX_ST_VNODE_SIZE", "3", 1);
  setenv("MPIX_ST_TRACE_RECORDS", "99999999999999999999", 1);  // refused: kept as a problem
  const uint64_t vnode = mpix::settings::number(Id::MPIX_ST_VNODE_SIZE);
  CHECK(vnode == 3);
  CHECK(mpix::settings::is_set(Id::MPIX_ST_VNODE_SIZE));
  CHECK(mpix::settings::number(Id::MPIX_ST_TRACE_RECORDS) == 1048576);  // the default, for code that asks anyway
  CHECK_FALSE(mpix::settings::is_set(Id::MPIX_ST_TRACE_RECORDS));
  CHECK(mpix::settings::start_problems() ==
        "MPIX_ST_TRACE_RECORDS=99999999999999999999: expected an integer in [1, 134217728] (records)");
  setenv("MPIX_ST_VNODE_SIZE", "5", 1);
  unsetenv("MPIX_ST_TRACE_RECORDS");
  CHECK(mpix::settings::number(Id::MPIX_ST_VNODE_SIZE) == 3);
  // problems(): the snapshot's refusals, and call settings as they read now.
  setenv("MPIX_ST_COLL_PROTOCOL", "bogus", 1);
  auto problems = mpix::settings::problems();
  REQUIRE(problems.size() == 2);  // in table order
  CHECK(problems[0] == "MPIX_ST_COLL_PROTOCOL=bogus: expected one of auto, simple, ll");
  CHECK(problems[1] == mpix::settings::start_problems());
  unsetenv("MPIX_ST_COLL_PROTOCOL");
  CHECK(mpix::settings::problems().size() == 1);
  unsetenv("MPIX_ST_VNODE_SIZE");
  CHECK(mpix::settings::flag(Id::MPIX_ST_GRAPH_MERGE));  // default 1
  CHECK(mpix::settings::word(Id::MPIX_ST_BACKEND) == "auto");
  CHECK(mpix::settings::text(Id::MPIX_ST_OFI_PROVIDER) == "cxi,sockets");
  CHECK(mpix::settings::number(Id::MPIX_ST_OFI_STAGING) == mpix::settings::kAuto);
}
