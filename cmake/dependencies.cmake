# cmake/dependencies.cmake: the libraries ember builds with, found once for the library and the
# tests (included by the top-level CMakeLists.txt).
# EMBER_MINIMAL_DEPS (scripts/gpu-check.sh on machines without Debian's packages): zlib, libzip
# and OpenBLAS become optional -- without them gzip-compressed IDX files, .npz archives and BLAS
# GEMM are unavailable (clear errors; matmul uses ember's own loops) -- and nlohmann/json.hpp may
# come from EMBER_DEPS_DIR/include (scripts/device-deps.sh carries it).
set(EMBER_DEP_MODE REQUIRED)
if(EMBER_MINIMAL_DEPS)
  set(EMBER_DEP_MODE QUIET)
endif()
# zlib reads the gzip-compressed MNIST files (Debian: zlib1g-dev).
find_package(ZLIB ${EMBER_DEP_MODE})
find_package(nlohmann_json 3 ${EMBER_DEP_MODE})
if(NOT nlohmann_json_FOUND)
  find_path(EMBER_NLOHMANN_INCLUDE nlohmann/json.hpp HINTS ${EMBER_DEPS_DIR}/include REQUIRED)
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED GLOBAL)
  target_include_directories(nlohmann_json::nlohmann_json INTERFACE ${EMBER_NLOHMANN_INCLUDE})
  message(STATUS "ember: nlohmann/json.hpp from ${EMBER_NLOHMANN_INCLUDE}")
endif()
# libzip reads and writes .npz archives (Debian: libzip-dev). Through pkg-config: Debian's
# libzip CMake config wants the zipcmp tools of another package.
find_package(PkgConfig ${EMBER_DEP_MODE})
if(PKG_CONFIG_FOUND)
  pkg_check_modules(LIBZIP ${EMBER_DEP_MODE} IMPORTED_TARGET GLOBAL libzip)
endif()

# BLAS: Debian's OpenMP build of OpenBLAS when present (libopenblas-openmp-dev), so that GEMM
# shares ember's OpenMP threads instead of competing with them from a second pool; any OpenBLAS
# otherwise.
find_library(EMBER_OPENBLAS_OPENMP NAMES openblas NO_DEFAULT_PATH
             PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp)
find_path(EMBER_OPENBLAS_OPENMP_INCLUDE cblas.h NO_DEFAULT_PATH
          PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp)
set(EMBER_HAVE_BLAS ON)
if(EMBER_OPENBLAS_OPENMP AND EMBER_OPENBLAS_OPENMP_INCLUDE)
  set(EMBER_BLAS_LIBRARIES ${EMBER_OPENBLAS_OPENMP})
  set(EMBER_BLAS_INCLUDE ${EMBER_OPENBLAS_OPENMP_INCLUDE})
  message(STATUS "ember: BLAS is OpenBLAS (OpenMP) ${EMBER_OPENBLAS_OPENMP}")
else()
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS ${EMBER_DEP_MODE})
  find_path(EMBER_BLAS_INCLUDE cblas.h PATH_SUFFIXES openblas)
  if(BLAS_FOUND AND EMBER_BLAS_INCLUDE)
    set(EMBER_BLAS_LIBRARIES BLAS::BLAS)
    message(STATUS "ember: BLAS is ${BLAS_LIBRARIES}")
  elseif(EMBER_MINIMAL_DEPS)
    set(EMBER_HAVE_BLAS OFF)
    set(EMBER_BLAS_LIBRARIES "")
    set(EMBER_BLAS_INCLUDE "")
    message(STATUS "ember: no OpenBLAS (EMBER_MINIMAL_DEPS): matmul uses ember's own loops")
  else()
    message(FATAL_ERROR "ember: OpenBLAS found without cblas.h; install libopenblas-openmp-dev")
  endif()
endif()
