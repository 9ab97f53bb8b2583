// Misuse, MPI not running: library calls before MPI_Init and after MPI_Finalize. No error handler
// can be called then, so each call must return its error class and print its message (checked
// here on stderr), and must neither crash nor call into the MPI. The calls run in child processes
// (forked before MPI_Init, and after MPI_Finalize) so that a crash is reported, not suffered.
// After MPI_Finalize, calls on a window freed before (MPICH aborts in MPI_Finalize on a window
// left unfreed, so there is no live one to try) and on MPI_WIN_NULL are refused before anything
// else is looked at. Each rank runs the cases; the exit status says whether they passed.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "misuse_common.h"

namespace {

int g_rank = -1;  // known after MPI_Init
long g_cases = 0, g_failed = 0;

// The child's stderr goes to a file; text() gives what was written since the last call.
struct Captured {
  int fd = -1;
  off_t seen = 0;
  Captured() {
    char path[] = "/tmp/mpixst-misuse-XXXXXX";
    fd = mkstemp(path);
    unlink(path);
    std::fflush(stderr);
    dup2(fd, STDERR_FILENO);
  }
  std::string text() {
    std::fflush(stderr);
    std::string out;
    char buf[512];
    ssize_t n;
    while ((n = pread(fd, buf, sizeof buf, seen)) > 0) {
      out.append(buf, static_cast<size_t>(n));
      seen += n;
    }
    return out;
  }
};

Captured *g_err = nullptr;

void say(const char *fmt, const std::string &a, const std::string &b = "") {
  std::printf("[rank %d] FAIL ", g_rank);
  std::printf(fmt, a.c_str(), b.c_str());
  std::printf("\n");
  std::fflush(stdout);
}

// `rc` must be the class `cls` itself (no error code can be added when MPI is not running) and the
// call must have printed a message "mpix-st: ..." containing `part`.
void expect(int rc, int cls, const char *part, const char *what) {
  ++g_cases;
  const std::string printed = g_err->text();
  if (rc != cls) {
    ++g_failed;
    say("%s: returned %s", what, std::to_string(rc) + ", want " + std::to_string(cls));
  }
  if (printed.find("mpix-st: ") == std::string::npos || printed.find(part) == std::string::npos) {
    ++g_failed;
    say("%s: printed \"%s\"", what, printed + "\", want a message with \"" + part);
  }
}
#define EXPECT(call, cls, part) expect((call), (cls), (part), #call)
#define CHECK_TRUE(cond)                  \
  do {                                    \
    if (!(cond)) {                        \
      ++g_failed;                         \
      say("check failed: %s", #cond, ""); \
    }                                     \
  } while (0)

// Runs `body` in a child process; returns the child's failures (a crash counts as one).
template <typename Fn>
long in_child(const char *what, Fn body) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    Captured err;
    g_err = &err;
    body();
    std::printf("[rank %d] %s: %ld cases, %ld failed\n", g_rank, what, g_cases, g_failed);
    std::fflush(stdout);
    _exit(g_failed > 100 ? 100 : static_cast<int>(g_failed));
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  if (WIFSIGNALED(status)) {
    std::printf("[rank %d] FAIL %s: the child died of signal %d\n", g_rank, what, WTERMSIG(status));
    return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

void host_streams_still_run() {
  // Host streams need no MPI: they work, and their argument errors are still reported.
  MPIX_Host_stream s = nullptr;
  CHECK_TRUE(MPIX_Host_stream_create(&s) == MPI_SUCCESS);
  static int ran = 0;
  CHECK_TRUE(MPIX_Host_stream_enqueue(s, [](void *p) { *static_cast<int *>(p) = 1; }, &ran) == MPI_SUCCESS);
  CHECK_TRUE(MPIX_Host_stream_synchronize(s) == MPI_SUCCESS);
  CHECK_TRUE(ran == 1);
  CHECK_TRUE(MPIX_Host_stream_destroy(s) == MPI_SUCCESS);
  EXPECT(MPIX_Host_stream_create(nullptr), MPI_ERR_ARG, "stream is NULL");
  EXPECT(MPIX_Host_stream_synchronize(s), MPI_ERR_ARG, "destroyed");
  EXPECT(MPIX_Host_stream_destroy(nullptr), MPI_ERR_ARG, "stream is NULL");
}

void before_init() {
  const char *when = "before MPI_Init";
  MPIX_Host_stream s = nullptr;
  CHECK_TRUE(MPIX_Host_stream_create(&s) == MPI_SUCCESS);
  EXPECT(MPIX_Win_post_stream(MPI_GROUP_EMPTY, MPI_WIN_NULL, s), MPI_ERR_OTHER, when);
  EXPECT(MPIX_Win_complete_stream(MPI_WIN_NULL, s), MPI_ERR_OTHER, when);
  EXPECT(MPIX_Win_wait_stream(MPI_WIN_NULL, s), MPI_ERR_OTHER, when);
  EXPECT(MPI_Win_start(MPI_GROUP_EMPTY, MPIX_MODE_STREAM, MPI_WIN_NULL), MPI_ERR_OTHER, when);
  EXPECT(MPIX_St_check(MPI_WIN_NULL), MPI_ERR_OTHER, when);
  char buf[64];
  MPI_Win win = MPI_WIN_NULL;
  EXPECT(MPI_Win_create(buf, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_OTHER, when);
  void *base = nullptr;
  EXPECT(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_OTHER, when);
  MPI_Win none = MPI_WIN_NULL;
  EXPECT(MPI_Win_free(&none), MPI_ERR_OTHER, when);
  // The resource class cannot be created yet: MPI_ERR_OTHER now, a class of its own later.
  ++g_cases;
  CHECK_TRUE(MPIX_St_error_class_resource() == MPI_ERR_OTHER);
  CHECK_TRUE(MPIX_Host_stream_destroy(s) == MPI_SUCCESS);
  host_streams_still_run();
}

void after_finalize(MPI_Win win, void *stream, int resource_class) {
  const char *when = "after MPI_Finalize";
  MPIX_Host_stream s = nullptr;
  CHECK_TRUE(MPIX_Host_stream_create(&s) == MPI_SUCCESS);
  (void)stream;  // the parent's stream: its thread does not exist in this child
  // Calls on a managed window freed before MPI_Finalize, and on MPI_WIN_NULL.
  EXPECT(MPIX_Win_post_stream(MPI_GROUP_EMPTY, MPI_WIN_NULL, s), MPI_ERR_OTHER, when);
  EXPECT(MPI_Win_fence(0, win), MPI_ERR_OTHER, when);
  EXPECT(MPIX_St_check(win), MPI_ERR_OTHER, when);
  EXPECT(MPIX_St_check(MPI_WIN_NULL), MPI_ERR_OTHER, when);
  EXPECT(MPI_Win_lock_all(0, win), MPI_ERR_OTHER, when);
  EXPECT(MPIX_Win_post_stream(MPI_GROUP_EMPTY, win, s), MPI_ERR_OTHER, when);
  EXPECT(MPIX_Win_complete_stream(win, s), MPI_ERR_OTHER, when);
  EXPECT(MPIX_Win_wait_stream(win, s), MPI_ERR_OTHER, when);
  EXPECT(MPI_Win_start(MPI_GROUP_EMPTY, MPIX_MODE_STREAM, win), MPI_ERR_OTHER, when);
  EXPECT(MPI_Win_start(MPI_GROUP_EMPTY, 0, win), MPI_ERR_OTHER, when);
  EXPECT(MPI_Win_post(MPI_GROUP_EMPTY, 0, win), MPI_ERR_OTHER, when);
  EXPECT(MPI_Win_complete(win), MPI_ERR_OTHER, when);
  EXPECT(MPI_Win_wait(win), MPI_ERR_OTHER, when);
  int v = 0;
  EXPECT(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_OTHER, when);
  EXPECT(MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_OTHER, when);
  EXPECT(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_OTHER, when);
  MPI_Win copy = win;
  EXPECT(MPI_Win_free(&copy), MPI_ERR_OTHER, when);
  // Creation.
  char buf[64];
  MPI_Win w2 = MPI_WIN_NULL;
  EXPECT(MPI_Win_create(buf, 64, 1, MPI_INFO_NULL, MPI_COMM_SELF, &w2), MPI_ERR_OTHER, when);
  void *base = nullptr;
  EXPECT(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_SELF, &base, &w2), MPI_ERR_OTHER, when);
  // Introspection still answers; the resource class made while MPI ran is still the answer.
  ++g_cases;
  CHECK_TRUE(MPIX_St_error_class_resource() == resource_class);
  CHECK_TRUE(std::string(MPIX_St_backend_name()) == "host");
  CHECK_TRUE(MPIX_Host_stream_destroy(s) == MPI_SUCCESS);
  host_streams_still_run();
}

}  // namespace

int main(int argc, char **argv) {
  long failed = in_child("before MPI_Init", before_init);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  const int resource_class = MPIX_St_error_class_resource();
  if (resource_class == MPI_ERR_OTHER) {
    std::printf("[rank %d] FAIL MPIX_St_error_class_resource is still MPI_ERR_OTHER after MPI_Init\n", g_rank);
    ++failed;
  }
  // A window of this rank alone, one correct epoch on it, then freed.
  void *stream = xdev::stream_create();
  mt::TestWin w = mt::make_window(mt::WinKind::create, 64, 1, MPI_COMM_SELF);
  {
    mt::Group self({0}, MPI_COMM_SELF);
    int one = 1;
    mt::DevBuf src(sizeof one);
    src.upload(&one, sizeof one);
    MT_OK(MPIX_Win_post_stream(self, w.win, stream));
    MT_OK(MPI_Win_start(self, MPIX_MODE_STREAM, w.win));
    MT_OK(MPI_Put(src.p, 1, MPI_INT, 0, 0, 1, MPI_INT, w.win));
    MT_OK(MPIX_Win_complete_stream(w.win, stream));
    MT_OK(MPIX_Win_wait_stream(w.win, stream));
    MT_SYNC(stream);
  }
  const MPI_Win kept = w.win;
  mt::free_window(w);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  failed += in_child("after MPI_Finalize", [&] { after_finalize(kept, stream, resource_class); });
  xdev::stream_destroy(stream);
  std::printf("misuse_finalize [rank %d]: %s\n", g_rank, failed ? "FAILED" : "PASSED");
  return failed ? 1 : 0;
}
