// SPDX-License-Identifier: Apache-2.0
#include "sim/report/sweep/worker_pool.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

namespace clustersim::sweep {
namespace {

struct Child {
  pid_t pid = -1;
  int fd = -1;          // its result lines
  int command_fd = -1;  // a reused child's chunk numbers; -1 when it runs one chunk, or is told to stop
  std::string buffer;
  std::set<int64_t> pending;  // indexes not reported yet
};

// Reads one line (without its newline) from `fd`, a byte at a time (a command is a few bytes);
// false at end of file or on an error.
bool read_line(int fd, std::string& line) {
  line.clear();
  char ch;
  for (;;) {
    const ssize_t n = ::read(fd, &ch, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (ch == '\n') return true;
    line += ch;
  }
}

bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string exit_reason(int status) {
  if (WIFSIGNALED(status)) return "worker process killed by signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return "worker process exited with code " + std::to_string(WEXITSTATUS(status));
  return "worker process ended";
}

// Kills and reaps the children this pool started (by pid) when the run loop is left early.
struct ChildGuard {
  std::map<int, Child>& live;
  ~ChildGuard() {
    for (auto& [fd, c] : live) {
      ::kill(c.pid, SIGKILL);
      ::close(fd);
      if (c.command_fd >= 0) ::close(c.command_fd);
      int status = 0;
      ::waitpid(c.pid, &status, 0);
    }
  }
};

}  // namespace

std::vector<std::vector<int64_t>> make_chunks(const std::vector<int64_t>& todo, int jobs, int max_chunk) {
  const auto n = static_cast<int64_t>(todo.size());
  const int64_t size = std::clamp<int64_t>(n / (std::max(jobs, 1) * 8), 1, std::max(max_chunk, 1));
  std::vector<std::vector<int64_t>> chunks;
  for (int64_t i = 0; i < n; i += size) {
    chunks.emplace_back(todo.begin() + i, todo.begin() + std::min(n, i + size));
  }
  return chunks;
}

void WorkerPool::run(const std::vector<std::vector<int64_t>>& chunks, const Work& work, const OnLine& on_line,
                     const OnLost& on_lost, const std::function<void()>& idle) {
  if (jobs_ == 1 && !fork_always_) {
    for (const auto& chunk : chunks) {
      for (const int64_t index : chunk) on_line(index, work(index));
      idle();
    }
    return;
  }
  std::map<int, Child> live;  // by pipe fd
  ChildGuard guard{live};
  size_t next = 0;
  // Hands chunk `next` to `c`: a reused child reads its number from its command pipe (a fresh
  // one runs the chunk it was forked for).
  const auto assign = [&](Child& c) {
    c.pending.insert(chunks[next].begin(), chunks[next].end());
    const std::string command = std::to_string(next++) + "\n";
    if (c.command_fd >= 0 && !write_all(c.command_fd, command)) {
      ::close(c.command_fd);  // the child is gone: its end of file reports the chunk lost
      c.command_fd = -1;
    }
  };
  while (next < chunks.size() || !live.empty()) {
    while (next < chunks.size() && static_cast<int>(live.size()) < jobs_) {
      int fds[2];
      int command[2] = {-1, -1};
      if (::pipe(fds) != 0 || (!fork_always_ && ::pipe(command) != 0)) {
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
      }
      const size_t first = next;
      const pid_t pid = ::fork();
      if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
      if (pid == 0) {
        ::close(fds[0]);
        // The other children's pipes are the parent's: a copy of a sibling's command pipe here
        // would keep it from seeing its end of file when the parent closes it.
        for (const auto& [fd, other] : live) {
          ::close(fd);
          if (other.command_fd >= 0) ::close(other.command_fd);
        }
        ::signal(SIGPIPE, SIG_DFL);  // the parent is gone: stop quietly
        const auto run_chunk = [&](size_t k) {
          for (const int64_t index : chunks[k]) {
            if (!write_all(fds[1], std::to_string(index) + " " + work(index) + "\n")) ::_exit(3);
          }
        };
        if (fork_always_) {
          run_chunk(first);
        } else {
          // Chunk numbers, one a line, until the parent closes the pipe.
          ::close(command[1]);
          for (std::string line; read_line(command[0], line);) run_chunk(std::stoul(line));
        }
        ::_exit(0);  // no atexit handlers or MPI finalisation in the child
      }
      ::close(fds[1]);
      if (command[0] >= 0) ::close(command[0]);
      Child& c = live[fds[0]];
      c.pid = pid;
      c.fd = fds[0];
      c.command_fd = command[1];
      assign(c);
    }
    std::vector<pollfd> pfds;
    for (const auto& [fd, c] : live) pfds.push_back(pollfd{fd, POLLIN, 0});
    const int ready = ::poll(pfds.data(), pfds.size(), 20);
    if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    for (const pollfd& p : pfds) {
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Child& c = live[p.fd];
      char buf[65536];
      const ssize_t n = ::read(p.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        c.buffer.append(buf, static_cast<size_t>(n));
        size_t start = 0;
        for (size_t nl; (nl = c.buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
          const std::string line = c.buffer.substr(start, nl - start);
          const size_t space = line.find(' ');
          const int64_t index = std::stoll(line.substr(0, space));
          c.pending.erase(index);
          on_line(index, line.substr(space + 1));
        }
        c.buffer.erase(0, start);
        // A reused child whose chunk is done gets the next, or end of file to stop.
        if (c.pending.empty() && c.command_fd >= 0) {
          if (next < chunks.size()) {
            assign(c);
          } else {
            ::close(c.command_fd);
            c.command_fd = -1;
          }
        }
        continue;
      }
      // End of file: the child is done (or died).
      int status = 0;
      ::waitpid(c.pid, &status, 0);
      ::close(p.fd);
      if (c.command_fd >= 0) ::close(c.command_fd);
      const std::set<int64_t> lost = std::move(c.pending);
      live.erase(p.fd);
      for (const int64_t index : lost) on_lost(index, exit_reason(status));
    }
    idle();
  }
}

}  // namespace clustersim::sweep
