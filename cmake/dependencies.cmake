# cmake/dependencies.cmake: the libraries ember builds with, found once for the library and the
# tests (included by the top-level CMakeLists.txt).
# EMBER_MINIMAL_DEPS (scripts/gpu-check.sh on machines without Debian's packages): zlib and libzip
# become optional -- without them gzip-compressed IDX files and .npz archives are unavailable
# (clear errors) -- and nlohmann/json.hpp may come from EMBER_DEPS_DIR/include
# (scripts/device-deps.sh carries it). CPU matrix products need no BLAS: ember has its own GEMM.
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
  # utf8proc gives the BERT tokenizer Unicode categories, NFD and lower case (Debian:
  # libutf8proc-dev).
  pkg_check_modules(UTF8PROC ${EMBER_DEP_MODE} IMPORTED_TARGET GLOBAL libutf8proc)
  # PCRE2 runs the byte-level BPE tokenizer's pre-tokenizer regexes with Unicode classes
  # (Debian: libpcre2-dev).
  pkg_check_modules(PCRE2 ${EMBER_DEP_MODE} IMPORTED_TARGET GLOBAL libpcre2-8)
endif()
# Gloo runs the collectives of CPU tensors (Debian: libgloo-dev), as in PyTorch; without it the
# "gloo" backend is unavailable (clear errors). EMBER_GLOO=OFF leaves it out even when present.
option(EMBER_GLOO "Build the Gloo backend of ember::distributed when Gloo is found" ON)
if(EMBER_GLOO)
  find_package(Gloo CONFIG QUIET)
endif()
