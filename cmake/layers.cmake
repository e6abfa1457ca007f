# cmake/layers.cmake: ember's layers, bottom to top. This table is what docs/ARCHITECTURE.md
# shows and what the build enforces: src/CMakeLists.txt makes one target per layer from it, and
# cmake/check_layers.cmake fails the build when a file includes a header it may not use.
# A file of a layer may include
#   - any header of its own layer,
#   - the internal headers (under src/) of the layers its layer USES,
#   - the public headers (under include/) of every layer below it (USES, followed transitively).
# ember/ember.h and the programs (tools, examples, tests, benchmarks) sit above every layer.
set(EMBER_LAYERS base kernels core backend_cpu backend_cuda autograd ops distributed nn data_io)

# Errors, dtypes and scalars; the fault-injection test hook.
set(EMBER_LAYER_base_DIRS src/base)
set(EMBER_LAYER_base_HEADERS ember/error.h ember/dtype.h ember/dtypes.def ember/half.h
    ember/scalar.h ember/fault_point.h)
set(EMBER_LAYER_base_USES)

# Kernel-common code, header-only and usable on host and device: the element-wise op tables and
# their scalar functors, reducers, Philox, optimizer updates, GEMM layouts, strided iteration, and
# the views and op parameters the backends are handed.
set(EMBER_LAYER_kernels_DIRS src/kernels)
set(EMBER_LAYER_kernels_HEADERS)
set(EMBER_LAYER_kernels_USES base)

# Tensors, storage, devices, the backend interface and registry, generators, printing.
set(EMBER_LAYER_core_DIRS src/core)
set(EMBER_LAYER_core_HEADERS ember/device.h ember/shape.h ember/storage.h ember/tensor.h
    ember/cuda.h ember/settings.h ember/op_variants.def ember/autocast.h)
set(EMBER_LAYER_core_USES base kernels)

# The device backends: kernels only, no op semantics.
set(EMBER_LAYER_backend_cpu_DIRS src/backend/cpu)
set(EMBER_LAYER_backend_cpu_HEADERS)
set(EMBER_LAYER_backend_cpu_USES core kernels base)
set(EMBER_LAYER_backend_cuda_DIRS src/backend/cuda)
set(EMBER_LAYER_backend_cuda_HEADERS)
set(EMBER_LAYER_backend_cuda_USES core kernels base)

# Graph nodes, the backward engine, grad mode, saved tensors, hooks.
set(EMBER_LAYER_autograd_DIRS src/autograd)
set(EMBER_LAYER_autograd_HEADERS ember/autograd.h)
set(EMBER_LAYER_autograd_USES core base)

# Every op once: promotion, broadcasting, checks, the backend call and the gradient.
set(EMBER_LAYER_ops_DIRS src/ops)
set(EMBER_LAYER_ops_HEADERS ember/ops.h ember/creation.h ember/nn_ops.h ember/quantized.h)
set(EMBER_LAYER_ops_USES autograd core kernels base)

# Process groups and collectives across processes: rendezvous stores, Gloo and NCCL.
set(EMBER_LAYER_distributed_DIRS src/distributed)
set(EMBER_LAYER_distributed_HEADERS ember/distributed.h)
set(EMBER_LAYER_distributed_USES ops core base)

# Modules, functional forms, losses and init; optimizers and schedules; DistributedDataParallel.
set(EMBER_LAYER_nn_DIRS src/nn src/optim)
set(EMBER_LAYER_nn_HEADERS ember/nn.h ember/nn/* ember/optim.h ember/optim/*)
set(EMBER_LAYER_nn_USES ops distributed)

# Datasets, samplers and the DataLoader; safetensors, NumPy, DLPack, atomic files.
set(EMBER_LAYER_data_io_DIRS src/data src/io)
set(EMBER_LAYER_data_io_HEADERS ember/data.h ember/data/* ember/io/*)
set(EMBER_LAYER_data_io_USES ops distributed core)
