// Named POSIX shared-memory segments: window memory and flags that node-local processes map.
#pragma once
#include <cstddef>
#include <string>

namespace mpix::gpu::shm {

// Creates and maps a zeroed segment; returns nullptr (and sets errno) on failure.
void *create(size_t bytes);
// Unmaps and unlinks a segment made by create().
void destroy(void *base);
// If `ptr` lies in a segment made by create() whose name still exists: its name and the offset
// of ptr in it.
bool find(const void *ptr, std::string *name, size_t *offset);
// Removes the name of the segment holding `ptr` (its mappings stay): once every peer has mapped
// it, nothing is left in /dev/shm that a process killed later could leak.
void unlink_name(const void *ptr);
// Maps a peer's segment by name; returns nullptr on failure.
void *map(const std::string &name, size_t bytes);
void unmap(void *base, size_t bytes);

}  // namespace mpix::gpu::shm
