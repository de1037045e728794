// SPDX-License-Identifier: Apache-2.0
// The MPI transport (the only file that includes mpi.h).
#include <dlfcn.h>
#include <mpi.h>

#include <cstring>
#include <string>

#include "sim/core/error.h"

#include "sim/report/sweep/transport.h"

namespace clustersim::sweep {
namespace {

constexpr int kTagLines = 1;
constexpr int kTagDone = 2;

class MpiTransport : public Transport {
 public:
  MpiTransport() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiTransport() override {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void broadcast(std::vector<int64_t>& values) override {
    long long n = static_cast<long long>(values.size());
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    values.resize(static_cast<size_t>(n));
    if (n > 0) MPI_Bcast(values.data(), static_cast<int>(n), MPI_INT64_T, 0, MPI_COMM_WORLD);
  }

  void send_lines(const std::string& lines) override {
    if (lines.empty()) return;
    MPI_Send(lines.data(), static_cast<int>(lines.size()), MPI_CHAR, 0, kTagLines, MPI_COMM_WORLD);
  }

  void send_done() override {
    char dummy = 0;
    MPI_Send(&dummy, 1, MPI_CHAR, 0, kTagDone, MPI_COMM_WORLD);
  }

  int receive(std::vector<std::string>& lines) override {
    int dones = 0;
    while (true) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
      if (!flag) break;
      int count = 0;
      MPI_Get_count(&status, MPI_CHAR, &count);
      std::string buf(static_cast<size_t>(count), '\0');
      MPI_Recv(buf.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (status.MPI_TAG == kTagDone) {
        ++dones;
        continue;
      }
      size_t start = 0;
      for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
        lines.push_back(buf.substr(start, nl - start));
      }
    }
    return dones;
  }

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

bool built_with_mpi() { return true; }

std::unique_ptr<Transport> make_mpi_transport() {
  // SimGrid's library also defines MPI_Init (SMPI); make sure the real MPI is the one bound.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&MPI_Init), &info) && info.dli_fname &&
      std::string(info.dli_fname).find("simgrid") != std::string::npos) {
    throw BadInput(InputError{"", 0, "mpirun",
                              "MPI_Init resolves to SimGrid's SMPI (" + std::string(info.dli_fname) +
                                  "), not Open MPI: link clustersim with MPI before SimGrid"});
  }
  return std::make_unique<MpiTransport>();
}

}  // namespace clustersim::sweep
