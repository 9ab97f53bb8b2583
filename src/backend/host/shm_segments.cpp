#include "shm_segments.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <map>
#include <mutex>

namespace mpix::gpu::shm {
namespace {
struct Segment {
  size_t bytes;
  std::string name;
  bool named = true;  // false once unlink_name() removed it
};
std::mutex g_mu;
std::map<const char *, Segment> g_segments;  // by base address
std::atomic<unsigned> g_counter{0};
}  // namespace

void *create(size_t bytes) {
  if (bytes == 0) bytes = 1;
  char name[96];
  std::snprintf(name, sizeof name, "/mpixst.%d.%u", static_cast<int>(getpid()), g_counter++);
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0 && errno == EEXIST) {
    // Names carry our pid, so this one was left by a dead process that had the same pid (a crash
    // skips the unlink): it is stale, and no live process can be using it.
    shm_unlink(name);
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  }
  if (fd < 0) return nullptr;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int e = errno;
    close(fd);
    shm_unlink(name);
    errno = e;
    return nullptr;
  }
  void *base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    int e = errno;
    shm_unlink(name);
    errno = e;
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_segments[static_cast<const char *>(base)] = Segment{bytes, name};
  return base;
}

void destroy(void *base) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_segments.find(static_cast<const char *>(base));
  if (it == g_segments.end()) return;
  munmap(base, it->second.bytes);
  if (it->second.named) shm_unlink(it->second.name.c_str());
  g_segments.erase(it);
}

bool find(const void *ptr, std::string *name, size_t *offset) {
  const char *p = static_cast<const char *>(ptr);
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_segments.upper_bound(p);
  if (it == g_segments.begin()) return false;
  --it;
  if (p >= it->first + it->second.bytes || !it->second.named) return false;
  *name = it->second.name;
  *offset = static_cast<size_t>(p - it->first);
  return true;
}

void unlink_name(const void *ptr) {
  const char *p = static_cast<const char *>(ptr);
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_segments.upper_bound(p);
  if (it == g_segments.begin()) return;
  --it;
  if (p >= it->first + it->second.bytes || !it->second.named) return;
  shm_unlink(it->second.name.c_str());
  it->second.named = false;
}

void *map(const std::string &name, size_t bytes) {
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return nullptr;
  void *base = mmap(nullptr, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return base == MAP_FAILED ? nullptr : base;
}

void unmap(void *base, size_t bytes) { munmap(base, bytes ? bytes : 1); }

}  // namespace mpix::gpu::shm
