//===- NoCudaDevice.cpp - the real device where the toolkit was absent ---===//

#include "embc/runtime/cuda/Device.h"

using namespace embc::runtime::cuda;

bool embc::runtime::cuda::cudaDeviceAvailable(std::string &why) {
  why = "this embrun was built without the CUDA toolkit";
  return false;
}

int embc::runtime::cuda::cudaDeviceOrdinalFor(int) { return 0; }

std::unique_ptr<Device> embc::runtime::cuda::createCudaDevice(int) {
  throw DeviceError("this embrun was built without the CUDA toolkit (no nvcc found at "
                    "configure time); rebuild with CUDA, or use --device cpu");
}
