// The device wires' exchanges (backend/device_wire.hpp) on the MPI wire over host memory
// (the host launcher's target memory, which any MPI library carries): a personalised
// all-to-all with empty and uneven messages, an all-gather with sizes exchanged or known,
// a ring shift, each byte in place and booked as this rank's sends; and the wires that
// cannot run here are refused with one line. Runs without CUDA too.
#include "zbfs/backend/device_wire.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/mpi/environment.hpp"

namespace zbfs {
namespace {

Communicator world() { return Communicator::duplicate(MPI_COMM_WORLD); }

// Byte k of the message from `from` to `to`.
std::uint8_t byte_of(int from, int to, std::uint64_t k) { return static_cast<std::uint8_t>(from * 31 + to * 7 + k); }

TEST(DeviceWire, AllToAllDeliversUnevenMessagesInPlace) {
  Communicator comm = world();
  PhaseMetrics metrics;
  comm.observe(&metrics);
  const ScopedPhase phase(metrics, Phase::kRowExchange);
  const int p = comm.size();
  const int me = comm.rank();
  const std::unique_ptr<DeviceWire> wire = make_device_wire(DeviceExchange::kCudaAware, ExecutionTarget::kHost);
  EXPECT_EQ(wire->kind(), DeviceExchange::kCudaAware);
  // Rank s sends (s + d) % 3 * 5 bytes to rank d: some messages are empty.
  std::vector<std::uint64_t> send_bytes(static_cast<std::size_t>(p));
  std::vector<std::uint8_t> send;
  std::uint64_t to_others = 0;
  for (int d = 0; d < p; ++d) {
    send_bytes[static_cast<std::size_t>(d)] = static_cast<std::uint64_t>((me + d) % 3 * 5);
    for (std::uint64_t k = 0; k < send_bytes[static_cast<std::size_t>(d)]; ++k) send.push_back(byte_of(me, d, k));
    if (d != me) to_others += send_bytes[static_cast<std::size_t>(d)];
  }
  std::vector<std::uint8_t> received;
  const std::vector<std::uint64_t> arrived =
      wire_all_to_all(*wire, comm, send.data(), send_bytes, [&](std::uint64_t bytes) {
        received.assign(bytes, 0xEE);
        return received.data();
      });
  ASSERT_EQ(arrived.size(), static_cast<std::size_t>(p));
  std::uint64_t at = 0;
  for (int s = 0; s < p; ++s) {
    ASSERT_EQ(arrived[static_cast<std::size_t>(s)], static_cast<std::uint64_t>((s + me) % 3 * 5));
    for (std::uint64_t k = 0; k < arrived[static_cast<std::size_t>(s)]; ++k) {
      ASSERT_EQ(received[at + k], byte_of(s, me, k)) << "from " << s << " byte " << k;
    }
    at += arrived[static_cast<std::size_t>(s)];
  }
  EXPECT_EQ(at, received.size());
  // The data is booked as this rank's sends to others, beside the count exchange.
  if (p > 1) {
    EXPECT_GE(metrics[Phase::kRowExchange].wire_bytes, to_others);
  }
}

TEST(DeviceWire, AllGatherWithSizesExchangedOrKnown) {
  const Communicator comm = world();
  const int p = comm.size();
  const int me = comm.rank();
  const std::unique_ptr<DeviceWire> wire = make_device_wire(DeviceExchange::kCudaAware, ExecutionTarget::kHost);
  // Rank s holds 2 * s + 1 bytes.
  std::vector<std::uint8_t> mine(static_cast<std::size_t>(2 * me + 1));
  for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = byte_of(me, 0, k);
  std::vector<std::uint8_t> all;
  const std::vector<std::uint64_t> sizes = wire_all_gather(*wire, comm, mine.data(), mine.size(), [&](std::uint64_t b) {
    all.assign(b, 0);
    return all.data();
  });
  std::vector<std::uint8_t> known(all.size(), 0);
  wire_all_gather_known(*wire, comm, mine.data(), sizes, known.data());
  std::vector<std::uint8_t> want;
  for (int s = 0; s < p; ++s) {
    ASSERT_EQ(sizes[static_cast<std::size_t>(s)], static_cast<std::uint64_t>(2 * s + 1));
    for (int k = 0; k < 2 * s + 1; ++k) want.push_back(byte_of(s, 0, static_cast<std::uint64_t>(k)));
  }
  EXPECT_EQ(all, want);
  EXPECT_EQ(known, want);
}

TEST(DeviceWire, RingShiftPassesToTheNextMember) {
  const Communicator comm = world();
  const int p = comm.size();
  const int me = comm.rank();
  const std::unique_ptr<DeviceWire> wire = make_device_wire(DeviceExchange::kCudaAware, ExecutionTarget::kHost);
  std::vector<std::uint8_t> mine(24);
  std::iota(mine.begin(), mine.end(), static_cast<std::uint8_t>(me * 40));
  std::vector<std::uint8_t> got(24, 0);
  wire_shift(*wire, comm, mine.data(), got.data(), mine.size());
  std::vector<std::uint8_t> want(24);
  std::iota(want.begin(), want.end(), static_cast<std::uint8_t>((me + p - 1) % p * 40));
  EXPECT_EQ(got, want);
}

TEST(DeviceWire, WiresThatCannotRunHereAreRefused) {
  try {
    require_device_wire(DeviceExchange::kNccl, Backend::kCudaHost);
    FAIL() << "nccl on the host launcher";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("--device-exchange nccl"), std::string::npos) << e.what();
  }
  EXPECT_THROW(require_device_wire(DeviceExchange::kCudaAware, Backend::kCpu), Error);
  EXPECT_NO_THROW(require_device_wire(DeviceExchange::kStaged, Backend::kCpu));
  EXPECT_NO_THROW(require_device_wire(DeviceExchange::kCudaAware, Backend::kCudaHost));
  // On a device, cuda-aware asks the MPI library, and refuses where it does not say yes.
  if (!mpi_is_cuda_aware()) {
    EXPECT_THROW(require_device_wire(DeviceExchange::kCudaAware, Backend::kCuda), Error);
  }
}

}  // namespace
}  // namespace zbfs
