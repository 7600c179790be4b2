//===- NcclCommunicatorTest.cpp - NCCL over a one-rank bootstrap ----------===//
//
// Built where the CUDA toolkit has NCCL. On a machine with a GPU it runs
// every collective of a world-size-1 NCCL communicator on device buffers
// (the bootstrap is the self communicator); without a GPU it checks that
// asking for NCCL fails with a CommError naming the CUDA call. Either way the
// NCCL communicator is linked into a program, so CI catches link errors.
//
//===----------------------------------------------------------------------===//

#include "embc/runtime/comm/Communicator.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

using namespace embc::runtime::comm;

namespace {

bool haveGpu() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

/// `count` floats on the device, filled from `values`.
struct DeviceFloats {
  explicit DeviceFloats(const std::vector<float> &values) : count(values.size()) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&data), count * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data, values.data(), count * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  ~DeviceFloats() { cudaFree(data); }
  std::vector<float> read(cudaStream_t stream) const {
    std::vector<float> values(count);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(values.data(), data, count * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return values;
  }
  float *data = nullptr;
  size_t count;
};

TEST(Nccl, WithoutAGpuTheFactorySaysWhy) {
  if (haveGpu())
    GTEST_SKIP() << "a GPU is present";
  auto self = createSelfCommunicator();
  try {
    createNcclCommunicator(*self, 0, nullptr);
    ADD_FAILURE() << "createNcclCommunicator succeeded without a GPU";
  } catch (const CommError &error) {
    EXPECT_NE(std::string(error.what()).find("cudaSetDevice"), std::string::npos) << error.what();
  }
}

TEST(Nccl, OneRankCollectivesOnTheDevice) {
  if (!haveGpu())
    GTEST_SKIP() << "no GPU";
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  {
    auto self = createSelfCommunicator();
    auto comm = createNcclCommunicator(*self, 0, stream);
    EXPECT_STREQ(comm->name(), "nccl");
    EXPECT_EQ(comm->size(), 1);

    DeviceFloats buf({1, 2, 3});
    comm->allReduce(buf.data, 3, DType::F32, ReduceOp::Sum);
    Request request = comm->startAllReduce(buf.data, 3, DType::F32, ReduceOp::Max);
    comm->wait(request);
    EXPECT_EQ(buf.read(stream), (std::vector<float>{1, 2, 3}));

    DeviceFloats gathered({0, 0, 0});
    comm->allGather(buf.data, gathered.data, 3, DType::F32);
    EXPECT_EQ(gathered.read(stream), (std::vector<float>{1, 2, 3}));

    DeviceFloats gatheredV({0, 0, 0});
    comm->allGatherV(buf.data, gatheredV.data, {2}, DType::F32);
    EXPECT_EQ(gatheredV.read(stream), (std::vector<float>{1, 2, 0}));

    DeviceFloats scattered({0, 0, 0});
    comm->reduceScatter(buf.data, scattered.data, 3, DType::F32, ReduceOp::Sum);
    EXPECT_EQ(scattered.read(stream), (std::vector<float>{1, 2, 3}));

    DeviceFloats exchanged({0, 0, 0});
    comm->allToAllV(buf.data, {3}, exchanged.data, {3}, DType::F32);
    EXPECT_EQ(exchanged.read(stream), (std::vector<float>{1, 2, 3}));

    comm->broadcast(buf.data, 3, DType::F32, 0);
    comm->barrier();
    EXPECT_EQ(buf.read(stream), (std::vector<float>{1, 2, 3}));
    EXPECT_THROW(comm->send(buf.data, 1, DType::F32, 0, 0), CommError);
  }
  cudaStreamDestroy(stream);
}

} // namespace
