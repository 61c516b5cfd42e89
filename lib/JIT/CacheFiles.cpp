// Cache folders and atomic files, in plain POSIX (see CacheFiles.h).
#include "JIT/CacheFiles.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tilec::cachefiles {

std::string defaultDir() {
  auto env = [](const char *name) -> std::string {
    const char *value = std::getenv(name);
    return value ? value : "";
  };
  if (std::string dir = env("TILEC_CACHE_DIR"); !dir.empty())
    return dir;
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty())
    return xdg + "/tilec";
  if (std::string home = env("HOME"); !home.empty())
    return home + "/.cache/tilec";
  return {};
}

std::string createDirectories(const std::string &dir) {
  if (dir.empty())
    return "empty folder name";
  struct stat st;
  if (stat(dir.c_str(), &st) == 0)
    return S_ISDIR(st.st_mode) ? std::string() : std::strerror(ENOTDIR);
  size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    std::string parentError = createDirectories(dir.substr(0, slash));
    if (!parentError.empty())
      return parentError;
  }
  if (mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    return std::strerror(errno);
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return std::strerror(ENOTDIR);
  return {};
}

std::string writeAtomically(const std::string &path, std::string_view bytes) {
  std::string temp = path + std::string(kTempInfix) + "XXXXXXXX";
  int fd = mkstemp(temp.data());
  if (fd < 0)
    return std::strerror(errno);
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      std::string reason = n < 0 ? std::strerror(errno) : "short write";
      close(fd);
      unlink(temp.c_str());
      return reason;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // mkstemp creates the file 0600; entries are as readable as other files.
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  if (close(fd) != 0) {
    std::string reason = std::strerror(errno);
    unlink(temp.c_str());
    return reason;
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    unlink(temp.c_str());
    return reason;
  }
  return {};
}

int removeStaleTemporaries(const std::string &dir, int maxAgeSeconds) {
  DIR *d = opendir(dir.c_str());
  if (!d)
    return 0;
  const time_t now = time(nullptr);
  int removed = 0;
  while (const dirent *e = readdir(d)) {
    std::string_view name(e->d_name);
    if (name.find(kTempInfix) == std::string_view::npos)
      continue;
    std::string path = dir + "/" + e->d_name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (now - st.st_mtime > maxAgeSeconds && unlink(path.c_str()) == 0)
      ++removed;
  }
  closedir(d);
  return removed;
}

} // namespace tilec::cachefiles
