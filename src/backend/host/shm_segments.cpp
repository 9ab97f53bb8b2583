#include "shm_segments.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
  bool named = true;  // false once unlink_name() removed it (or closed its descriptor)
  int fd = -1;        // anonymous segments: open until unlink_name() or destroy()
  bool anonymous = false;
};
std::mutex g_mu;
std::map<const char *, Segment> g_segments;  // by base address
std::atomic<unsigned> g_counter{0};

// Anonymous segments need memfd_create and peers that open /proc/<pid>/fd/<fd> of this process.
// Probed once: a memfd of this process is opened through /proc under this process's pid (which
// fails where /proc belongs to another PID namespace or is not mounted), and the file opened is
// checked to be that memfd.
bool anonymous_works() {
  static const bool works = [] {
#ifdef MFD_CLOEXEC
    const int fd = memfd_create("mpixst-probe", MFD_CLOEXEC);
    if (fd < 0) return false;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(getpid()), fd);
    const int again = open(path, O_RDWR | O_CLOEXEC);
    struct stat a{}, b{};
    const bool same = again >= 0 && fstat(fd, &a) == 0 && fstat(again, &b) == 0 && a.st_ino == b.st_ino &&
                      a.st_dev == b.st_dev;
    if (again >= 0) close(again);
    close(fd);
    return same;
#else
    return false;
#endif
  }();
  return works;
}

// An anonymous segment's name: "/mpixst.<pid>.<n>#<fd>.<inode>". Peers open /proc/<pid>/fd/<fd>
// and check the inode, so a descriptor number that was closed and reused is never mistaken for
// the segment.
bool parse_anonymous(const std::string &name, int *pid, int *fd, unsigned long long *ino) {
  unsigned n = 0;
  return std::sscanf(name.c_str(), "/mpixst.%d.%u#%d.%llu", pid, &n, fd, ino) == 4;
}

void *map_fd(int fd, size_t bytes) {
  void *base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return base == MAP_FAILED ? nullptr : base;
}

// Creates and maps an anonymous segment; *fd stays open. nullptr (and errno) on failure.
void *create_anonymous(size_t bytes, const char *tag, int *fd, unsigned long long *ino) {
#ifdef MFD_CLOEXEC
  *fd = memfd_create(tag, MFD_CLOEXEC);
  if (*fd < 0) return nullptr;
  struct stat st{};
  void *base = nullptr;
  if (ftruncate(*fd, static_cast<off_t>(bytes)) == 0 && fstat(*fd, &st) == 0) base = map_fd(*fd, bytes);
  if (!base) {
    const int e = errno;
    close(*fd);
    errno = e;
    return nullptr;
  }
  *ino = static_cast<unsigned long long>(st.st_ino);
  return base;
#else
  (void)bytes;
  (void)tag;
  (void)fd;
  (void)ino;
  errno = ENOSYS;
  return nullptr;
#endif
}

void *create_named(const char *name, size_t bytes) {
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0 && errno == EEXIST) {
    // Names carry our pid, so this one was left by a dead process that had the same pid (a crash
    // skips the unlink): it is stale, and no live process can be using it.
    shm_unlink(name);
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  }
  if (fd < 0) return nullptr;
  void *base = ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? map_fd(fd, bytes) : nullptr;
  const int e = errno;
  close(fd);
  if (!base) {
    shm_unlink(name);
    errno = e;
  }
  return base;
}
}  // namespace

bool anonymous() { return anonymous_works(); }

void *create(size_t bytes) {
  if (bytes == 0) bytes = 1;
  const int pid = static_cast<int>(getpid());
  const unsigned n = g_counter++;
  char name[96];
  std::snprintf(name, sizeof name, "/mpixst.%d.%u", pid, n);
  Segment seg{bytes, name};
  void *base = nullptr;
  if (anonymous_works()) {
    unsigned long long ino = 0;
    base = create_anonymous(bytes, name + 1, &seg.fd, &ino);
    if (base) {
      char full[96];
      std::snprintf(full, sizeof full, "%s#%d.%llu", name, seg.fd, ino);
      seg.name = full;
      seg.anonymous = true;
    }
  }
  if (!seg.anonymous) base = create_named(name, bytes);
  if (!base) return nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  g_segments[static_cast<const char *>(base)] = seg;
  return base;
}

void destroy(void *base) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_segments.find(static_cast<const char *>(base));
  if (it == g_segments.end()) return;
  munmap(base, it->second.bytes);
  if (it->second.fd >= 0) close(it->second.fd);
  else if (it->second.named && !it->second.anonymous) shm_unlink(it->second.name.c_str());
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
  if (it->second.anonymous) {
    close(it->second.fd);
    it->second.fd = -1;
  } else {
    shm_unlink(it->second.name.c_str());
  }
  it->second.named = false;
}

void *map(const std::string &name, size_t bytes) {
  if (bytes == 0) bytes = 1;
  int pid = 0, fd_number = -1;
  unsigned long long ino = 0;
  int fd = -1;
  if (parse_anonymous(name, &pid, &fd_number, &ino)) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd_number);
    fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st{};
    if (fd >= 0 && (fstat(fd, &st) != 0 || static_cast<unsigned long long>(st.st_ino) != ino)) {
      close(fd);  // the descriptor number now names another file: the segment is gone
      fd = -1;
      errno = ENOENT;
    }
  } else {
    fd = shm_open(name.c_str(), O_RDWR, 0);
  }
  if (fd < 0) return nullptr;
  void *base = map_fd(fd, bytes);
  const int e = errno;
  close(fd);
  errno = e;
  return base;
}

void unmap(void *base, size_t bytes) { munmap(base, bytes ? bytes : 1); }

}  // namespace mpix::gpu::shm
