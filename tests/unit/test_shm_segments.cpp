// Unit tests of the host backend's named shared-memory segments (src/backend/host/shm_segments.h).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "backend/host/shm_segments.h"

namespace shm = mpix::gpu::shm;

TEST_CASE("create gives zeroed, writable memory, named after the process") {
  for (size_t bytes : {size_t{1}, size_t{7}, size_t{4096}, size_t{4097}, size_t{3} << 20}) {
    CAPTURE(bytes);
    auto *p = static_cast<unsigned char *>(shm::create(bytes));
    REQUIRE(p != nullptr);
    for (size_t i = 0; i < bytes; ++i)
      if (p[i] != 0) FAIL("byte " << i << " of a new segment is " << int(p[i]));
    std::memset(p, 0xab, bytes);
    std::string name;
    size_t off = 99;
    REQUIRE(shm::find(p, &name, &off));
    CHECK(off == 0);
    CHECK(name.rfind("/mpixst." + std::to_string(getpid()) + ".", 0) == 0);
    shm::destroy(p);
  }
}

TEST_CASE("find resolves addresses inside a segment, and only those") {
  const size_t bytes = 10000;
  auto *p = static_cast<char *>(shm::create(bytes));
  REQUIRE(p);
  std::string name0, name;
  size_t off = 0;
  REQUIRE(shm::find(p, &name0, &off));
  for (size_t at : {size_t{1}, size_t{100}, size_t{4095}, size_t{4096}, bytes - 1}) {
    CAPTURE(at);
    REQUIRE(shm::find(p + at, &name, &off));
    CHECK(off == at);
    CHECK(name == name0);
  }
  // Past the end: not this segment (another segment may be mapped right after it: then it is that one).
  if (shm::find(p + bytes, &name, &off)) CHECK(name != name0);
  int on_stack = 0;
  CHECK_FALSE(shm::find(&on_stack, &name, &off));
  void *heap = std::malloc(64);
  CHECK_FALSE(shm::find(heap, &name, &off));
  std::free(heap);
  shm::destroy(p);
  CHECK_FALSE(shm::find(p, &name, &off));
  CHECK_FALSE(shm::find(p + 10, &name, &off));
}

TEST_CASE("segments have distinct names and are told apart") {
  std::vector<char *> segs;
  std::set<std::string> names;
  for (int i = 0; i < 16; ++i) {
    auto *p = static_cast<char *>(shm::create(static_cast<size_t>(4096 * (i + 1))));
    REQUIRE(p);
    segs.push_back(p);
  }
  for (size_t i = 0; i < segs.size(); ++i) {
    std::string name;
    size_t off = 0;
    REQUIRE(shm::find(segs[i] + 4095, &name, &off));
    CHECK(off == 4095);
    names.insert(name);
  }
  CHECK(names.size() == segs.size());
  for (char *p : segs) shm::destroy(p);
}

TEST_CASE("a mapping by name sees the same memory") {
  const size_t bytes = 1 << 20;
  auto *p = static_cast<uint8_t *>(shm::create(bytes));
  REQUIRE(p);
  std::string name;
  size_t off = 0;
  REQUIRE(shm::find(p + 12345, &name, &off));
  auto *q = static_cast<uint8_t *>(shm::map(name, bytes));
  REQUIRE(q != nullptr);
  CHECK(q != p);
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(i * 7 + 3);
  for (size_t i = 0; i < bytes; ++i)
    if (q[i] != static_cast<uint8_t>(i * 7 + 3)) FAIL("mapped byte " << i << " differs");
  q[bytes - 1] = 0x5a;
  CHECK(p[bytes - 1] == 0x5a);
  // A mapping made by another process too (what a peer rank does).
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto *c = static_cast<uint8_t *>(shm::map(name, bytes));
    if (!c) _exit(2);
    if (c[100] != static_cast<uint8_t>(100 * 7 + 3)) _exit(3);
    c[0] = 0xee;
    shm::unmap(c, bytes);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(p[0] == 0xee);
  shm::unmap(q, bytes);
  CHECK(p[1] == static_cast<uint8_t>(1 * 7 + 3));  // the creator's mapping survives the unmap
  shm::destroy(p);
  CHECK(shm::map(name, bytes) == nullptr);  // unlinked
}

TEST_CASE("zero-byte segments are valid") {
  void *p = shm::create(0);
  REQUIRE(p != nullptr);
  std::string name;
  size_t off = 1;
  CHECK(shm::find(p, &name, &off));
  CHECK(off == 0);
  void *q = shm::map(name, 0);
  CHECK(q != nullptr);
  if (q) shm::unmap(q, 0);
  shm::destroy(p);
}

TEST_CASE("destroy of an unknown address is harmless") {
  int x = 0;
  shm::destroy(&x);
  shm::destroy(nullptr);
  CHECK(x == 0);
}

TEST_CASE("map of a name that does not exist fails") { CHECK(shm::map("/mpixst.no-such-segment", 4096) == nullptr); }
