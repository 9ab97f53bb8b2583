// Chooses the process backend once: MPIX_ST_BACKEND=auto|host|cuda|hip.
// GPU backends are plugins (libmpixst_cuda.so, libmpixst_hip.so) beside this library, so the core
// library loads on machines without any GPU runtime.
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "backend.h"
#include "backend_select.h"
#include "settings/settings.h"

namespace mpix::gpu {
namespace {

std::string library_dir() {
  if (settings::is_set(settings::Id::MPIX_ST_PLUGIN_DIR)) return settings::text(settings::Id::MPIX_ST_PLUGIN_DIR);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&host_backend), &info) && info.dli_fname) {
    std::string path = info.dli_fname;
    auto slash = path.rfind('/');
    if (slash != std::string::npos) return path.substr(0, slash);
  }
  return ".";
}

Backend *load_plugin(const std::string &which, std::string *why) {
  std::string path = library_dir() + "/libmpixst_" + which + ".so";
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *why = std::string("cannot load ") + path + ": " + dlerror();
    return nullptr;
  }
  auto create = reinterpret_cast<PluginCreateFn>(dlsym(lib, kPluginCreateSymbol));
  if (!create) {
    *why = path + " has no " + kPluginCreateSymbol;
    return nullptr;
  }
  return create(why);  // the plugin stays loaded for the life of the process
}

struct Selection {
  Backend *backend = nullptr;
  std::string error;
};

Selection select() {
  Selection s;
  // A setting the table refuses (MPI_Init reports it too): the host backend stands in and every
  // call reports the refusal, instead of running on values nobody asked for. Before any plugin
  // loads, so plugins only ever see accepted settings.
  if (const std::string &refused = settings::start_problems(); !refused.empty()) {
    s.error = "the library does no work while a setting is refused: " + refused;
    s.backend = &host_backend();
    return s;
  }
  const std::string want = settings::word(settings::Id::MPIX_ST_BACKEND);  // auto, host, cuda or hip
  if (want == "host") {
    s.backend = &host_backend();
    return s;
  }
  if (want == "cuda" || want == "hip") {
    std::string why;
    s.backend = load_plugin(want, &why);
    if (!s.backend) {
      s.error = "MPIX_ST_BACKEND=" + want + " is not available: " + why;
      s.backend = &host_backend();
    }
    return s;
  }
  for (const char *gpu : {"cuda", "hip"}) {
    std::string why;
    if ((s.backend = load_plugin(gpu, &why))) return s;
  }
  s.backend = &host_backend();
  return s;
}

const Selection &selection() {
  static const Selection s = select();
  return s;
}

}  // namespace

Backend &backend() { return *selection().backend; }
const std::string &backend_selection_error() { return selection().error; }

}  // namespace mpix::gpu
