# tests/layers/check_layers_test.cmake: the layer check passes on the real tree and fails, naming
# the file, both layers and the rule, on copies with an upward include of an internal header, of a
# public header, and of a header no layer owns; and docs/ARCHITECTURE.md's layer table names the
# layers of cmake/layers.cmake, in order, with the same USES. Run as
#   cmake -DEMBER_SOURCE_DIR=<repo> -DWORK_DIR=<scratch dir> -P check_layers_test.cmake
cmake_minimum_required(VERSION 3.25)

function(run_check root expect_ok expect_text)
  execute_process(COMMAND ${CMAKE_COMMAND} -DEMBER_SOURCE_DIR=${root}
                          -P ${root}/cmake/check_layers.cmake
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "[ \t\r\n]+" " " text "${out}${err}")
  if(expect_ok AND NOT rc EQUAL 0)
    message(FATAL_ERROR "the layer check failed on ${root}:\n${out}${err}")
  endif()
  if(NOT expect_ok AND rc EQUAL 0)
    message(FATAL_ERROR "the layer check passed on ${root}, expected: ${expect_text}")
  endif()
  string(FIND "${text}" "${expect_text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the layer check's output lacks \"${expect_text}\":\n${out}${err}")
  endif()
endfunction()

run_check(${EMBER_SOURCE_DIR} TRUE "no include goes against the layers")

# Each case: a copy of the tree with one line added to one file.
set(cases
  "src/core/shape.cpp|#include \"autograd/function.h\"|src/core/shape.cpp (layer core) includes \"autograd/function.h\" (layer autograd)"
  "src/backend/cpu/cpu_isa.cpp|#include \"ember/ops.h\"|src/backend/cpu/cpu_isa.cpp (layer backend_cpu) includes \"ember/ops.h\" (layer ops)"
  "src/nn/init.cpp|#include \"core/backend.h\"|src/nn/init.cpp (layer nn) includes \"core/backend.h\" (layer core): nn may include its own headers and the internal headers of: ops"
  "src/kernels/view.h|#include \"ember/tensor.h\"|src/kernels/view.h (layer kernels) includes \"ember/tensor.h\" (layer core)"
  "src/ops/split.cpp|#include \"ember/ember.h\"|includes \"ember/ember.h\", which no layer owns")
set(n 0)
foreach(c IN LISTS cases)
  string(REPLACE "|" ";" parts "${c}")
  list(GET parts 0 file)
  list(GET parts 1 line)
  list(GET parts 2 expect)
  math(EXPR n "${n} + 1")
  set(root ${WORK_DIR}/case${n})
  file(REMOVE_RECURSE ${root})
  foreach(dir cmake src include)
    file(COPY ${EMBER_SOURCE_DIR}/${dir} DESTINATION ${root})
  endforeach()
  file(READ ${root}/${file} body)
  file(WRITE ${root}/${file} "${line}\n${body}")
  run_check(${root} FALSE "${expect}")
  file(REMOVE_RECURSE ${root})
endforeach()
# The table of docs/ARCHITECTURE.md: rows "| names | where | uses | what |" from base to data_io.
include(${EMBER_SOURCE_DIR}/cmake/layers.cmake)
file(STRINGS ${EMBER_SOURCE_DIR}/docs/ARCHITECTURE.md rows REGEX "^\\| [a-z_, ]+ \\| `src/")
set(doc_layers "")
foreach(row IN LISTS rows)
  string(REGEX MATCH "^\\| ([a-z_, ]+) \\| [^|]+ \\| ([a-z_, -]+) \\|" ignored "${row}")
  string(REPLACE ", " ";" names "${CMAKE_MATCH_1}")
  string(REPLACE ", " ";" uses "${CMAKE_MATCH_2}")
  if(uses STREQUAL "--")
    set(uses "")
  endif()
  foreach(name IN LISTS names)
    list(APPEND doc_layers ${name})
    set(expected ${EMBER_LAYER_${name}_USES})
    list(SORT expected)
    list(SORT uses)
    if(NOT "${expected}" STREQUAL "${uses}")
      message(FATAL_ERROR "docs/ARCHITECTURE.md says ${name} uses \"${uses}\", "
              "cmake/layers.cmake says \"${expected}\"")
    endif()
  endforeach()
endforeach()
if(NOT "${doc_layers}" STREQUAL "${EMBER_LAYERS}")
  message(FATAL_ERROR "docs/ARCHITECTURE.md's layer table lists \"${doc_layers}\", "
          "cmake/layers.cmake \"${EMBER_LAYERS}\"")
endif()
message(STATUS "layer check: passes on the tree, catches ${n} upward includes; the docs' table matches")
