// Shared-memory segments: window memory and flags that node-local processes map.
//
// Anonymous where the system allows (memfd_create, and /proc/<pid>/fd of this process reachable
// under its own pid): a segment never has a name in /dev/shm, so a process killed at any moment,
// in window or collective set-up included, leaves nothing behind; a peer maps it by opening the
// creator's descriptor through /proc/<pid>/fd/<fd> (allowed between processes of one user) and
// checks its inode. Otherwise named POSIX segments (/dev/shm/mpixst.<pid>.<n>), whose names go
// once every peer has mapped them (unlink_name): a death before that leaves them behind.
#pragma once
#include <cstddef>
#include <string>

namespace mpix::gpu::shm {

// Whether segments are anonymous in this process (probed once).
bool anonymous();
// Creates and maps a zeroed segment; returns nullptr (and sets errno) on failure.
void *create(size_t bytes);
// Unmaps a segment made by create() and removes its name (or closes its descriptor).
void destroy(void *base);
// If `ptr` lies in a segment made by create() that peers can still map: its name and the offset
// of ptr in it. Names start with "/mpixst.<pid>.<n>" either way; an anonymous segment's adds
// "#<fd>.<inode>".
bool find(const void *ptr, std::string *name, size_t *offset);
// Peers have mapped the segment holding `ptr`: its name goes (named segments) or its descriptor is
// closed (anonymous ones); its mappings stay. Later peers cannot map it.
void unlink_name(const void *ptr);
// Maps a peer's segment by the name find() gave there; returns nullptr (and errno) on failure.
void *map(const std::string &name, size_t bytes);
void unmap(void *base, size_t bytes);

}  // namespace mpix::gpu::shm
