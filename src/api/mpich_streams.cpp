// MPIX_Info_set_hex, MPIX_Stream_create / _free / _comm_create with MPICH 4.1's signatures, for
// MPIs whose mpi.h has no MPIX_Stream (see include/mpix/mpix_st.h).
#include "mpich_streams.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backend/backend.h"
#include "errors.h"
#include "host_streams.h"
#include "mpix/mpix_st.h"
#include "window_lookup.h"

#ifdef MPIX_ST_DEFINES_MPIX_STREAM

struct mpix_st_stream {
  bool has_stream = false;     // made with an info type and value (else no *_enqueue on it)
  void *gpu_stream = nullptr;  // the wrapped stream (a GPU runtime's default stream may be null)
  int bound = 0;               // communicators bound to it
};

using mpix::core::fail;
using mpix::core::ok;
using mpix::core::Result;

namespace {

// Live streams by handle. A handle is a number (odd, from a 64-bit sequence), never the object's
// address, so no stream ever gets a freed one's handle and a stale handle is refused instead of
// reaching a newer stream. The communicator attribute holds the object itself, which is not freed
// while bound.
std::mutex g_mu;
std::unordered_map<uintptr_t, std::unique_ptr<mpix_st_stream>> g_streams;
uint64_t g_made = 0;
int g_keyval = MPI_KEYVAL_INVALID;

// The object behind a live handle, or null. Call with g_mu held.
mpix_st_stream *live_locked(MPIX_Stream s) {
  auto it = g_streams.find(reinterpret_cast<uintptr_t>(s));
  return it == g_streams.end() ? nullptr : it->second.get();
}

bool live(MPIX_Stream s) {
  std::lock_guard<std::mutex> lock(g_mu);
  return live_locked(s) != nullptr;
}

int unbind(MPI_Comm, int, void *value, void *) {
  std::lock_guard<std::mutex> lock(g_mu);
  --static_cast<mpix_st_stream *>(value)->bound;
  return MPI_SUCCESS;
}

// The info "type" each backend's streams have.
std::string stream_type_of_backend() {
  const std::string be = mpix::gpu::backend().name();
  return be == "cuda" ? "cudaStream_t" : be == "hip" ? "hipStream_t" : "MPIX_Host_stream";
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads the GPU stream out of the info (type and hex value); *has stays false without a type.
Result stream_from_info(MPI_Info info, void **stream, bool *has) {
  *stream = nullptr;
  *has = false;
  if (info == MPI_INFO_NULL) return ok();
  char type[64] = {}, value[2 * sizeof(void *) + 2] = {};
  int has_type = 0, has_value = 0;
  if (PMPI_Info_get(info, "type", sizeof type - 1, type, &has_type) != MPI_SUCCESS)
    return fail(MPI_ERR_INFO, "the info is not valid");
  if (!has_type) return ok();
  const std::string want = stream_type_of_backend();
  if (want != type)
    return fail(MPI_ERR_INFO_VALUE, std::string("info type \"") + type + "\" is not a stream of the " +
                                        mpix::gpu::backend().name() + " backend (it takes \"" + want + "\")");
  PMPI_Info_get(info, "value", sizeof value - 1, value, &has_value);
  const std::string hex = has_value ? value : "";
  if (hex.size() != 2 * sizeof(void *))
    return fail(MPI_ERR_INFO_VALUE, "info value must hold the stream handle's " + std::to_string(sizeof(void *)) +
                                        " bytes, set with MPIX_Info_set_hex");
  unsigned char bytes[sizeof(void *)];
  for (size_t i = 0; i < sizeof bytes; ++i) {
    const int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return fail(MPI_ERR_INFO_VALUE, "info value is not hexadecimal: " + hex);
    bytes[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  std::memcpy(stream, bytes, sizeof bytes);
  *has = true;
  if (!*stream && want != "MPIX_Host_stream") return ok();  // the GPU runtime's default stream
  return mpix::api::check_stream(*stream);
}

template <typename Body>
int call(const char *name, Body &&body) {
  Result r = mpix::api::mpi_state(name);
  if (!r) r = body();
  if (!r) return MPI_SUCCESS;
  r.message = std::string(name) + ": " + r.message;
  return mpix::api::raise_no_object(r);
}

}  // namespace

Result mpix::api::bound_stream(MPI_Comm comm, void **stream) {
  *stream = nullptr;
  if (comm == MPI_COMM_NULL) return fail(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  void *value = nullptr;
  int found = 0;
  if (g_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_get_attr(comm, g_keyval, &value, &found);
  if (!found)
    return fail(MPI_ERR_COMM, "the communicator has no stream: make it with MPIX_Stream_comm_create");
  auto *s = static_cast<mpix_st_stream *>(value);
  if (!s->has_stream)
    return fail(MPI_ERR_COMM, "the communicator's MPIX_Stream was made without a stream (info type and value)");
  *stream = s->gpu_stream;
  return ok();
}

extern "C" {

int MPIX_Info_set_hex(MPI_Info info, const char *key, const void *value, int value_size) {
  return call("MPIX_Info_set_hex", [&]() -> Result {
    if (info == MPI_INFO_NULL) return fail(MPI_ERR_INFO, "the info is MPI_INFO_NULL");
    if (!key || (!value && value_size > 0) || value_size < 0)
      return fail(MPI_ERR_ARG, "key or value is NULL, or the size is negative");
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    for (int i = 0; i < value_size; ++i) {
      const unsigned char b = static_cast<const unsigned char *>(value)[i];
      hex += digits[b >> 4];
      hex += digits[b & 15];
    }
    if (PMPI_Info_set(info, key, hex.c_str()) != MPI_SUCCESS) return fail(MPI_ERR_INFO_KEY, "the MPI refused the key");
    return ok();
  });
}

int MPIX_Stream_create(MPI_Info info, MPIX_Stream *stream) {
  return call("MPIX_Stream_create", [&]() -> Result {
    if (!stream) return fail(MPI_ERR_ARG, "stream is NULL");
    void *gpu = nullptr;
    bool has = false;
    if (Result r = stream_from_info(info, &gpu, &has)) return r;
    auto s = std::make_unique<mpix_st_stream>();
    s->gpu_stream = gpu;
    s->has_stream = has;
    std::lock_guard<std::mutex> lock(g_mu);
    const uintptr_t handle = static_cast<uintptr_t>(++g_made) * 2 + 1;
    g_streams.emplace(handle, std::move(s));
    *stream = reinterpret_cast<MPIX_Stream>(handle);
    return ok();
  });
}

int MPIX_Stream_free(MPIX_Stream *stream) {
  return call("MPIX_Stream_free", [&]() -> Result {
    if (!stream) return fail(MPI_ERR_ARG, "the stream argument (MPIX_Stream *) is NULL");
    std::unique_ptr<mpix_st_stream> gone;  // deleted once the lock is released
    std::lock_guard<std::mutex> lock(g_mu);
    mpix_st_stream *s = live_locked(*stream);
    if (!s) return fail(MPI_ERR_ARG, "not a stream of MPIX_Stream_create (freed already, or never created)");
    if (s->bound > 0)
      return fail(MPI_ERR_OTHER, "the stream is still bound to " + std::to_string(s->bound) +
                                     " communicator(s): free them first");
    auto it = g_streams.find(reinterpret_cast<uintptr_t>(*stream));
    gone = std::move(it->second);
    g_streams.erase(it);
    *stream = MPIX_STREAM_NULL;
    return ok();
  });
}

int MPIX_Stream_comm_create(MPI_Comm comm, MPIX_Stream stream, MPI_Comm *newcomm) {
  return call("MPIX_Stream_comm_create", [&]() -> Result {
    if (comm == MPI_COMM_NULL) return fail(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
    if (!newcomm) return fail(MPI_ERR_ARG, "newcomm is NULL");
    if (stream != MPIX_STREAM_NULL && !live(stream))
      return fail(MPI_ERR_ARG, "not a stream of MPIX_Stream_create (freed already, or never created)");
    if (g_keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, unbind, &g_keyval, nullptr) != MPI_SUCCESS)
      return fail(MPI_ERR_OTHER, "cannot create the attribute key of bound streams");
    if (PMPI_Comm_dup(comm, newcomm) != MPI_SUCCESS) return fail(MPI_ERR_COMM, "MPI_Comm_dup failed");
    if (stream != MPIX_STREAM_NULL) {
      mpix_st_stream *s = nullptr;
      {
        std::lock_guard<std::mutex> lock(g_mu);
        s = live_locked(stream);
        if (s) ++s->bound;
      }
      if (!s) {  // freed by another thread meanwhile
        PMPI_Comm_free(newcomm);
        return fail(MPI_ERR_ARG, "not a stream of MPIX_Stream_create (freed already, or never created)");
      }
      PMPI_Comm_set_attr(*newcomm, g_keyval, s);
    }
    return ok();
  });
}

}  // extern "C"

#endif  // MPIX_ST_DEFINES_MPIX_STREAM
